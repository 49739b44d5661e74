//! Traffic conditioning blocks (RFC 2475 section 2.3.3): classifier, meter, marker,
//! shaper, dropper.
//!
//! A *block* is: a match (which packets it conditions: flows, sources, destinations, DSCP
//! set, direction), then optionally a shaper (packets wait in its buffer until it releases
//! them), then optionally a meter with one action per colour (pass, mark, demote, drop).
//! This is the order of RFC 2963 (seed 004) figure 1, RAS -> meter -> marker; a
//! meter-then-shaper arrangement is two blocks in a row. Blocks are attached
//!
//! - at a host, to the packets it sends (the per-flow "profiler" of draft-ibanez);
//! - at a router, to the packets arriving over one or all of its links (ingress), or to
//!   the packets about to enter the queue of one or all of its egress ports (egress), per
//!   aggregate (the aggregate policer of draft-ibanez section 2.2, the EF edge policer of
//!   RFC 2598 section 3).
//!
//! Each attachment point is a *chain*: the blocks attached there, in declaration order.
//! A packet runs through the chain; a block whose match fails is skipped. A block is an
//! aggregate (one meter/shaper state for all matching packets) or per flow (one state per
//! flow it matches, created when the scenario is built). Each state is an [`Instance`]
//! with its own random stream (`conditioner:NAME` or `conditioner:NAME:FLOW`) and
//! counters.
//!
//! A block that holds a packet (a shaper) reports when its head may leave; the simulation
//! schedules `Event::Conditioner(instance)` for that instant and, when it fires, resumes
//! each released packet right after the shaper, in the same chain. Stale wake-ups (a
//! shaper that recomputed an earlier release time) are recognised and ignored, so shapers
//! whose rate changes with their occupancy (rate adaptive shapers) fit the same framework.
//!
//! The mechanisms live in one file each: [`token_bucket`], [`tsw`], [`srtcm`], [`trtcm`]
//! (meters), [`marker`] (actions), [`policer`] (drop actions, EF policer), [`tb_shaper`],
//! [`ras`] (the rate adaptive shapers of RFC 2963, which read their block's meter).

pub mod marker;
pub mod policer;
pub mod ras;
pub mod srtcm;
pub mod tb_shaper;
pub mod token_bucket;
pub mod trtcm;
pub mod tsw;

pub use marker::{Action, ActionSpec, Applied};
pub use policer::EfPolicerSpec;
pub use ras::{Ras, RasConfig, RasKind, SrrasSpec, TrrasSpec};
pub use srtcm::{ColorMode, Srtcm, SrtcmSpec};
pub use tb_shaper::{Held, Offer, TbShaper, TbShaperSpec};
pub use token_bucket::{TokenBucket, TokenBucketSpec};
pub use trtcm::{Trtcm, TrtcmSpec};
pub use tsw::{PoutDivisor, Tsw, Tsw3, Tsw3Spec, TswSpec};

use serde::Serialize;

use crate::engine::rng::Rng;
use crate::packet::{Color, Direction, FlowId, NodeId, Packet, PacketArena, PktId, PortId};
use crate::params::{ConfigError, KeyPath};
use crate::stats::{DropCause, Window};
use crate::time::{Rate, SimTime};

/// A meter, chosen by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MeterSpec {
    TokenBucket(TokenBucketSpec),
    Tsw(TswSpec),
    Tsw3(Tsw3Spec),
    Srtcm(SrtcmSpec),
    Trtcm(TrtcmSpec),
}
crate::tagged_enum!(MeterSpec {
    TokenBucket(TokenBucketSpec) = "token_bucket",
    Tsw(TswSpec) = "tsw",
    Tsw3(Tsw3Spec) = "tsw3",
    Srtcm(SrtcmSpec) = "srtcm",
    Trtcm(TrtcmSpec) = "trtcm",
});

impl MeterSpec {
    /// The meter this table declares.
    pub fn meter(&self, path: &KeyPath) -> Result<Meter, ConfigError> {
        Ok(match self {
            MeterSpec::TokenBucket(s) => Meter::TokenBucket(s.meter(path)?),
            MeterSpec::Tsw(s) => Meter::Tsw(s.meter(path)?),
            MeterSpec::Tsw3(s) => Meter::Tsw3(s.meter(path)?),
            MeterSpec::Srtcm(s) => Meter::Srtcm(s.meter(path)?),
            MeterSpec::Trtcm(s) => Meter::Trtcm(s.meter(path)?),
        })
    }
}

/// A shaper, chosen by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ShaperSpec {
    TokenBucket(TbShaperSpec),
    /// RFC 2963 rate adaptive shapers (docs/ras.md).
    Srras(SrrasSpec),
    Trras(TrrasSpec),
    GSrras(SrrasSpec),
    GTrras(TrrasSpec),
}
crate::tagged_enum!(ShaperSpec {
    TokenBucket(TbShaperSpec) = "token_bucket",
    Srras(SrrasSpec) = "srras",
    Trras(TrrasSpec) = "trras",
    GSrras(SrrasSpec) = "g_srras",
    GTrras(TrrasSpec) = "g_trras",
});

impl ShaperSpec {
    /// The shaper this table (at `path`) declares, whose output link runs at `line_rate`
    /// (None: no link, trace replay) in a block with `meter` (at `meter_path`; a green RAS
    /// reads its token state).
    pub fn shaper(
        &self,
        line_rate: Option<Rate>,
        meter: Option<&Meter>,
        path: &KeyPath,
        meter_path: &KeyPath,
    ) -> Result<Shaper, ConfigError> {
        if let Some(ras) = ras::ras_shaper(self, line_rate, meter, path, meter_path)? {
            return Ok(Shaper::Ras(ras));
        }
        match self {
            ShaperSpec::TokenBucket(s) => Ok(Shaper::TokenBucket(s.shaper(path)?)),
            _ => unreachable!("rate adaptive shapers are built above"),
        }
    }
}

/// Index of a conditioner instance (the argument of `Event::Conditioner`).
pub type InstId = u32;
const NONE: u32 = u32::MAX;

/// A meter: gives each packet a colour.
#[derive(Clone, Debug)]
pub enum Meter {
    TokenBucket(TokenBucket),
    Tsw(Tsw),
    Tsw3(Tsw3),
    Srtcm(Srtcm),
    Trtcm(Trtcm),
}

impl Meter {
    /// The colour of a packet of `size` bytes at `now`; `pre` is its colour on arrival
    /// (green when no meter coloured it yet), used by colour-aware meters.
    #[inline]
    pub fn color(&mut self, size: u32, now: SimTime, pre: Color, rng: &mut Rng) -> Color {
        match self {
            Meter::TokenBucket(m) => m.color(size, now),
            Meter::Tsw(m) => m.color(size, now, rng),
            Meter::Tsw3(m) => m.color(size, now, rng),
            Meter::Srtcm(m) => m.color(size, now, pre),
            Meter::Trtcm(m) => m.color(size, now, pre),
        }
    }

    /// The colours this meter can give.
    pub fn colors(&self) -> &'static [Color] {
        match self {
            Meter::TokenBucket(_) | Meter::Tsw(_) => &[Color::Green, Color::Red],
            _ => &Color::ALL,
        }
    }

    /// The earliest instant >= `now` at which a packet of `size` bytes, coloured `pre` on
    /// arrival, would be coloured green, read from the token state without changing it
    /// (T2 of the green rate adaptive shapers, RFC 2963 sections 3.3 and 3.5). None when it
    /// never would be: larger than the committed bucket (srTCM: CBS) or either bucket
    /// (trTCM: CBS or PBS), precoloured yellow or red for a colour-aware meter, and for the
    /// TSW meters, which hold no tokens.
    pub fn green_time(&self, now: SimTime, size: u32, pre: Color) -> Option<SimTime> {
        match self {
            Meter::TokenBucket(m) => m.green_time(now, size),
            Meter::Srtcm(m) if m.mode == ColorMode::Blind || pre == Color::Green => m.green_time(now, size),
            Meter::Trtcm(m) if m.mode == ColorMode::Blind || pre == Color::Green => m.green_time(now, size),
            Meter::Srtcm(_) | Meter::Trtcm(_) | Meter::Tsw(_) | Meter::Tsw3(_) => None,
        }
    }
}

/// A shaper: holds packets and releases them later.
#[derive(Clone, Debug)]
pub enum Shaper {
    TokenBucket(TbShaper),
    /// srRAS, trRAS, G-srRAS, G-trRAS (RFC 2963).
    Ras(Ras),
}

impl Shaper {
    /// Offers an arriving packet. `meter` is the block's meter, for shapers coupled to it
    /// (the green RAS).
    #[inline]
    pub fn offer(&mut self, h: Held, now: SimTime, meter: Option<&Meter>) -> Offer {
        match self {
            Shaper::TokenBucket(s) => s.offer(h, now),
            Shaper::Ras(s) => s.offer(h, now, meter),
        }
    }

    /// When the head of the buffer may leave (None when empty).
    pub fn next_release(&self, now: SimTime, meter: Option<&Meter>) -> Option<SimTime> {
        match self {
            Shaper::TokenBucket(s) => s.next_release(now),
            Shaper::Ras(s) => s.next_release(now, meter),
        }
    }

    /// Removes the head if it may leave at `now`.
    pub fn release(&mut self, now: SimTime, meter: Option<&Meter>) -> Option<Held> {
        match self {
            Shaper::TokenBucket(s) => s.release(now),
            Shaper::Ras(s) => s.release(now, meter),
        }
    }

    pub fn backlog_packets(&self) -> usize {
        match self {
            Shaper::TokenBucket(s) => s.backlog_packets(),
            Shaper::Ras(s) => s.backlog_packets(),
        }
    }
}

/// Which chain a packet is in: the blocks attached to the ingress of the node a port leads
/// to (packets that arrived over port p), or to the egress of port p (packets about to
/// enter its queue).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ChainRef {
    Ingress(PortId),
    Egress(PortId),
}

/// Where a held packet's path resumes: the block at `index` of `chain`, after its shaper.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Cont {
    pub chain: ChainRef,
    pub index: u16,
}

/// A set of flow ids, sorted, each once: what a block names takes memory in proportion
/// to the flows it names, not to the flows of the scenario.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowSet(Vec<FlowId>);

impl FlowSet {
    pub fn contains(&self, f: FlowId) -> bool {
        self.0.binary_search(&f).is_ok()
    }

    /// The ids in increasing order.
    pub fn ids(&self) -> &[FlowId] {
        &self.0
    }
}

impl FromIterator<FlowId> for FlowSet {
    fn from_iter<I: IntoIterator<Item = FlowId>>(ids: I) -> Self {
        let mut v: Vec<FlowId> = ids.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        FlowSet(v)
    }
}

/// Which packets a block conditions. Every present criterion must hold.
#[derive(Clone, Debug, Default)]
pub struct Match {
    /// The flows matched; None = every flow.
    pub flows: Option<FlowSet>,
    pub src: Option<Vec<NodeId>>,
    pub dst: Option<Vec<NodeId>>,
    /// Bit d set = DSCP d matched; None = every codepoint.
    pub dscp: Option<u64>,
    /// None = both directions.
    pub direction: Option<Direction>,
}

impl Match {
    #[inline]
    pub fn matches(&self, p: &Packet) -> bool {
        self.direction.is_none_or(|d| d == p.direction)
            && self.dscp.is_none_or(|m| m >> p.dscp.0 & 1 == 1)
            && self.flows.as_ref().is_none_or(|f| f.contains(p.flow))
            && self.src.as_ref().is_none_or(|s| s.contains(&p.src))
            && self.dst.as_ref().is_none_or(|d| d.contains(&p.dst))
    }

    /// Could a packet of flow `f` (from `src` to `dst`, either direction) ever match?
    pub fn may_match_flow(&self, f: FlowId, src: NodeId, dst: NodeId) -> bool {
        let ends = |fwd: bool| {
            let (s, d) = if fwd { (src, dst) } else { (dst, src) };
            self.src.as_ref().is_none_or(|v| v.contains(&s)) && self.dst.as_ref().is_none_or(|v| v.contains(&d))
        };
        let dir_ok = |fwd: bool| {
            self.direction
                .is_none_or(|d| d == if fwd { Direction::Forward } else { Direction::Reverse })
        };
        self.flows.as_ref().is_none_or(|v| v.contains(f))
            && ((dir_ok(true) && ends(true)) || (dir_ok(false) && ends(false)))
    }
}

/// A block's [`Match`] and instances compiled into the one test a packet takes in the
/// chain: which instance of the block conditions it, if any.
#[derive(Clone, Debug)]
struct Selector {
    /// Per direction (`Direction as usize`): bit d set = DSCP d matched; 0 for a direction
    /// the block does not condition. One lookup tests both criteria.
    codepoints: [u64; 2],
    /// The sources and destinations matched, when the match names some.
    ends: Option<Box<Ends>>,
    target: Target,
}

/// Sources and destinations a block matches (None: any).
#[derive(Clone, Debug)]
struct Ends {
    src: Option<Vec<NodeId>>,
    dst: Option<Vec<NodeId>>,
}

impl Ends {
    fn contain(&self, p: &Packet) -> bool {
        self.src.as_ref().is_none_or(|s| s.contains(&p.src)) && self.dst.as_ref().is_none_or(|d| d.contains(&p.dst))
    }
}

/// The instance conditioning a matched packet. A per-flow block, or an aggregate block
/// matching a set of flows, maps the flows it conditions to their instances (the flow
/// criterion and the instance are then one lookup), in memory proportional to those flows.
#[derive(Clone, Debug)]
enum Target {
    /// An aggregate block matching every flow: its single instance.
    All(InstId),
    /// A block for one flow (a host's profiler): one comparison, nothing else to read.
    One { flow: FlowId, inst: InstId },
    /// The instance of each flow `first + i` at `insts[i]`, NONE for the flows between
    /// that the block never conditions: the flows a block names are usually consecutive
    /// ids (one flow, a `[[flow]]` group, all of them).
    Span { first: FlowId, insts: Box<[InstId]> },
    /// (flow, instance) sorted by flow, for flows spread wider than `Span` allows.
    Sparse(Box<[(FlowId, InstId)]>),
}

/// A `Span` is at most this many times as long as the flows it maps.
const SPAN_SLACK: usize = 4;

impl Target {
    /// The map of `pairs` (flow, instance), each flow once.
    fn by_flow(mut pairs: Vec<(FlowId, InstId)>) -> Target {
        pairs.sort_unstable();
        let (Some(&(first, _)), Some(&(last, _))) = (pairs.first(), pairs.last()) else {
            return Target::Sparse(Box::new([]));
        };
        let span = (last - first) as usize + 1;
        if let [(flow, inst)] = pairs[..] {
            return Target::One { flow, inst };
        }
        if span > SPAN_SLACK * pairs.len() {
            return Target::Sparse(pairs.into_boxed_slice());
        }
        let mut insts = vec![NONE; span];
        for (f, k) in pairs {
            insts[(f - first) as usize] = k;
        }
        Target::Span {
            first,
            insts: insts.into_boxed_slice(),
        }
    }

    #[inline]
    fn of_flow(&self, f: FlowId) -> Option<InstId> {
        match self {
            Target::All(k) => Some(*k),
            Target::One { flow, inst } => (f == *flow).then_some(*inst),
            Target::Span { first, insts } => insts
                .get(f.wrapping_sub(*first) as usize)
                .copied()
                .filter(|&k| k != NONE),
            Target::Sparse(pairs) => pairs.binary_search_by_key(&f, |&(g, _)| g).ok().map(|i| pairs[i].1),
        }
    }
}

impl Selector {
    /// `per_flow`: the (flow, instance) of each flow a per-flow block may match; None for
    /// an aggregate block, whose instance is `aggregate`.
    fn new(m: &Match, per_flow: Option<Vec<(FlowId, InstId)>>, aggregate: InstId) -> Self {
        let dscp = m.dscp.unwrap_or(u64::MAX);
        let codepoints =
            [Direction::Forward, Direction::Reverse].map(|d| if m.direction.is_none_or(|x| x == d) { dscp } else { 0 });
        let in_flows = |f: FlowId| m.flows.as_ref().is_none_or(|v| v.contains(f));
        let target = match (per_flow, &m.flows) {
            (Some(mut pairs), _) => {
                pairs.retain(|&(f, _)| in_flows(f));
                Target::by_flow(pairs)
            }
            (None, Some(flows)) => Target::by_flow(flows.ids().iter().map(|&f| (f, aggregate)).collect()),
            (None, None) => Target::All(aggregate),
        };
        let ends = (m.src.is_some() || m.dst.is_some()).then(|| {
            Box::new(Ends {
                src: m.src.clone(),
                dst: m.dst.clone(),
            })
        });
        Selector {
            codepoints,
            ends,
            target,
        }
    }

    /// The instance that conditions `p`, None if the block lets it by: the same packets
    /// as [`Match::matches`] (and, of a per-flow block, a flow it has an instance for).
    #[inline]
    fn instance_for(&self, p: &Packet) -> Option<InstId> {
        let matched = self.codepoints[p.direction as usize] >> p.dscp.0 & 1 == 1
            && self.ends.as_ref().is_none_or(|e| e.contain(p));
        if !matched {
            return None;
        }
        self.target.of_flow(p.flow)
    }
}

/// One attached block: its match, actions, and which instance conditions which packet.
/// What a packet reads (selector, actions) first: `repr(C)` keeps the order.
#[repr(C)]
#[derive(Clone, Debug)]
pub struct Block {
    /// The match and the instances, as the chain tests them.
    selector: Selector,
    /// Action per colour, indexed by `Color as usize`.
    pub actions: [Action; 3],
    /// Some instance has a shaper: the others' packets skip reading theirs.
    shaped: bool,
    pub node: NodeId,
    pub name: String,
    pub matcher: Match,
}

/// Of a per-flow block: the flows it may match, one instance each (None for an aggregate
/// block).
pub type PerFlowMembers = Option<Vec<FlowId>>;

/// What a block is, apart from its states.
#[derive(Clone, Debug)]
pub struct BlockDef {
    pub name: String,
    pub node: NodeId,
    pub matcher: Match,
    /// Action per colour, indexed by `Color as usize`.
    pub actions: [Action; 3],
}

/// Counters of one instance, over the measurement window; a meter's first
/// (`repr(C)`: in this order).
#[repr(C)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CondStats {
    /// Packets and bytes the meter coloured, per colour.
    pub pkts: [u64; 3],
    pub bytes: [u64; 3],
    /// Per colour: codepoint changed by a mark action, by a demote action.
    pub remarked: [u64; 3],
    pub demoted: [u64; 3],
    /// Per colour: dropped by the colour's action.
    pub dropped_pkts: [u64; 3],
    pub dropped_bytes: [u64; 3],
    /// Shaper: arrivals (packets and bytes), releases, overflow drops, and the total time
    /// released packets waited (ns).
    pub shaper_arrivals: u64,
    pub shaper_arrival_bytes: u64,
    pub shaper_released: u64,
    pub shaper_overflow_pkts: u64,
    pub shaper_overflow_bytes: u64,
    pub shaper_wait_ns: u128,
}

/// The state of a block for one aggregate or one flow, in the order a packet uses it
/// (`repr(C)`): the meter, the counters, the shaper; the random stream (300 bytes, read
/// by the TSW meters only) after them.
#[repr(C)]
#[derive(Clone, Debug)]
pub struct Instance {
    pub meter: Option<Meter>,
    pub stats: CondStats,
    pub shaper: Option<Shaper>,
    /// The instant of the wake-up event in the event list, if any.
    next_wake: Option<SimTime>,
    pub block: u32,
    /// The flow of a per-flow instance.
    pub flow: Option<FlowId>,
    pub rng: Rng,
}

impl Instance {
    /// Offers packet `id` (`pkt`) to this instance's shaper, which it meets at `cont`:
    /// None if it passes on at once, else what became of it (held or dropped). Kept out
    /// of [`Conditioners::run`], so that the blocks without a shaper run with few registers.
    #[inline(never)]
    fn offer_to_shaper(
        &mut self,
        inst: InstId,
        id: PktId,
        pkt: &Packet,
        cont: Cont,
        now: SimTime,
        count: bool,
    ) -> Option<Outcome> {
        let shaper = self.shaper.as_mut()?;
        let size = pkt.size;
        let held = Held {
            id,
            size,
            since: now,
            cont,
            pre: pkt.color.unwrap_or(Color::Green),
        };
        if count {
            self.stats.shaper_arrivals += 1;
            self.stats.shaper_arrival_bytes += size as u64;
        }
        match shaper.offer(held, now, self.meter.as_ref()) {
            Offer::PassNow => {
                if count {
                    self.stats.shaper_released += 1;
                }
                None
            }
            Offer::Queued => {
                let wake = shaper.next_release(now, self.meter.as_ref());
                Some(Outcome::Held { inst, wake })
            }
            Offer::Overflow => {
                if count {
                    self.stats.shaper_overflow_pkts += 1;
                    self.stats.shaper_overflow_bytes += size as u64;
                }
                Some(Outcome::Drop {
                    inst,
                    cause: DropCause::ShaperOverflow,
                })
            }
        }
    }

    pub fn new(block: u32, flow: Option<FlowId>, shaper: Option<Shaper>, meter: Option<Meter>, rng: Rng) -> Self {
        Instance {
            block,
            flow,
            shaper,
            meter,
            rng,
            stats: CondStats::default(),
            next_wake: None,
        }
    }
}

/// What became of a packet that entered a chain.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It went through every block: on to the next step of its path.
    Pass,
    /// A shaper holds it; `wake` is when the shaper's head may leave.
    Held { inst: InstId, wake: Option<SimTime> },
    /// A block dropped it; the caller frees and counts it.
    Drop { inst: InstId, cause: DropCause },
}

/// Applies `action`, the one for colour `k`, to `pkt`, and counts what it did in `stats`
/// if `count` (inside the measurement window): the drop cause if it drops the packet.
#[inline]
fn act(action: Action, pkt: &mut Packet, stats: &mut CondStats, count: bool, k: usize) -> Option<DropCause> {
    let n = count as u64;
    match action.apply(pkt) {
        Applied::Passed => None,
        Applied::Remarked => {
            stats.remarked[k] += n;
            None
        }
        Applied::Demoted => {
            stats.demoted[k] += n;
            None
        }
        Applied::Dropped(cause) => {
            stats.dropped_pkts[k] += n;
            stats.dropped_bytes[k] += n * pkt.size as u64;
            Some(cause)
        }
    }
}

/// Every block and instance of a network, and the chains of every port.
#[derive(Clone, Debug, Default)]
pub struct Conditioners {
    pub blocks: Vec<Block>,
    pub instances: Vec<Instance>,
    ingress: Vec<Vec<u32>>,
    egress: Vec<Vec<u32>>,
}

impl Conditioners {
    /// An empty set for a network of `ports` ports.
    pub fn new(ports: usize) -> Self {
        Conditioners {
            blocks: Vec::new(),
            instances: Vec::new(),
            ingress: vec![Vec::new(); ports],
            egress: vec![Vec::new(); ports],
        }
    }

    /// Adds a block made of `def` and its states: one instance (aggregate), or one per
    /// flow of `per_flow` (the member flows), in the same order. `chains`
    /// lists where it is attached; it is appended to each.
    pub fn add_block(
        &mut self,
        def: BlockDef,
        instances: Vec<Instance>,
        per_flow: PerFlowMembers,
        chains: &[ChainRef],
    ) -> u32 {
        let BlockDef {
            name,
            node,
            matcher,
            actions,
        } = def;
        let b = self.blocks.len() as u32;
        let first = self.instances.len() as InstId;
        let per_flow = per_flow.map(|flows| (flows.into_iter().zip(first..)).collect());
        let shaped = instances.iter().any(|i| i.shaper.is_some());
        for mut inst in instances {
            inst.block = b;
            self.instances.push(inst);
        }
        let selector = Selector::new(&matcher, per_flow, first);
        self.blocks.push(Block {
            name,
            node,
            matcher,
            selector,
            actions,
            shaped,
        });
        for c in chains {
            self.chain_mut(*c).push(b);
        }
        b
    }

    fn chain_mut(&mut self, c: ChainRef) -> &mut Vec<u32> {
        match c {
            ChainRef::Ingress(p) => &mut self.ingress[p as usize],
            ChainRef::Egress(p) => &mut self.egress[p as usize],
        }
    }

    #[inline]
    fn chain(&self, c: ChainRef) -> &[u32] {
        let v = match c {
            ChainRef::Ingress(p) => self.ingress.get(p as usize),
            ChainRef::Egress(p) => self.egress.get(p as usize),
        };
        v.map_or(&[], |v| v.as_slice())
    }

    /// Does any block sit in this chain?
    #[inline]
    pub fn has(&self, c: ChainRef) -> bool {
        !self.chain(c).is_empty()
    }

    /// Runs packet `id` through `start.chain` from block `start.index`. With
    /// `after_shaper`, that first block starts after its shaper (the packet was just
    /// released by it).
    // Inline: its one caller in the simulation (`Simulation::condition`) then passes no
    // arguments through memory and builds no `Outcome` to return (45 instructions a packet).
    #[inline]
    pub fn run(
        &mut self,
        start: Cont,
        after_shaper: bool,
        id: PktId,
        pkts: &mut PacketArena,
        now: SimTime,
        w: &Window,
    ) -> Outcome {
        let Conditioners {
            blocks,
            instances,
            ingress,
            egress,
        } = self;
        let (chain, from) = (start.chain, start.index as usize);
        let blocks_here = match chain {
            ChainRef::Ingress(p) => ingress.get(p as usize),
            ChainRef::Egress(p) => egress.get(p as usize),
        }
        .map_or(&[][..], |v| v.as_slice());
        let count = w.contains(now);
        let pkt = &mut pkts[id];
        let rest = blocks_here.get(from..).unwrap_or(&[]);
        for (i, &b) in (from..).zip(rest) {
            let block = &blocks[b as usize];
            let Some(inst) = block.selector.instance_for(pkt) else {
                continue;
            };
            let st = &mut instances[inst as usize];
            if block.shaped && st.shaper.is_some() && !(after_shaper && i == from) {
                let cont = Cont { chain, index: i as u16 };
                if let Some(out) = st.offer_to_shaper(inst, id, pkt, cont, now, count) {
                    return out;
                }
            }
            if let Some(meter) = st.meter.as_mut() {
                let size = pkt.size;
                let pre = pkt.color.unwrap_or(Color::Green);
                let c = meter.color(size, now, pre, &mut st.rng);
                pkt.color = Some(c);
                let k = c as usize;
                if count {
                    st.stats.pkts[k] += 1;
                    st.stats.bytes[k] += size as u64;
                }
                if let Some(cause) = act(block.actions[k], pkt, &mut st.stats, count, k) {
                    return Outcome::Drop { inst, cause };
                }
            }
        }
        Outcome::Pass
    }

    /// Should an event be scheduled to wake instance `inst` at `t`? Records it if so. An
    /// event already due at or before `t` will recompute the wake-up when it fires.
    pub fn arm(&mut self, inst: InstId, t: SimTime) -> bool {
        let st = &mut self.instances[inst as usize];
        match st.next_wake {
            Some(x) if x <= t => false,
            _ => {
                st.next_wake = Some(t);
                true
            }
        }
    }

    /// A wake-up event for `inst` fired at `now`: true if it is the one last armed (the
    /// others are stale and do nothing).
    pub fn fire(&mut self, inst: InstId, now: SimTime) -> bool {
        let st = &mut self.instances[inst as usize];
        if st.next_wake == Some(now) {
            st.next_wake = None;
            true
        } else {
            false
        }
    }

    /// Releases the head of `inst`'s shaper if it may leave at `now`.
    pub fn release(&mut self, inst: InstId, now: SimTime, w: &Window) -> Option<(PktId, Cont)> {
        let st = &mut self.instances[inst as usize];
        let h = st.shaper.as_mut()?.release(now, st.meter.as_ref())?;
        if w.contains(now) {
            st.stats.shaper_released += 1;
            st.stats.shaper_wait_ns += (now - h.since).0 as u128;
        }
        Some((h.id, h.cont))
    }

    /// When `inst`'s shaper may release its next packet.
    pub fn next_release(&self, inst: InstId, now: SimTime) -> Option<SimTime> {
        let st = &self.instances[inst as usize];
        st.shaper.as_ref()?.next_release(now, st.meter.as_ref())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use crate::packet::Dscp;
    use crate::time::{Bytes, Rate};

    fn window() -> Window {
        Window {
            start: SimTime::ZERO,
            end: SimTime(u64::MAX),
        }
    }

    pub(crate) fn start(chain: ChainRef) -> Cont {
        Cont { chain, index: 0 }
    }

    pub(crate) fn def(name: &str, matcher: Match, actions: [Action; 3]) -> BlockDef {
        BlockDef {
            name: name.into(),
            node: 0,
            matcher,
            actions,
        }
    }

    #[test]
    fn chain_runs_blocks_in_order_and_skips_non_matching() {
        // Block 0 matches only AF11 (nothing here), block 1 marks everything green AF21 via
        // a 1500 B bucket, so of two 1000 B packets the first becomes AF21, the second is
        // red and dropped.
        let mut c = Conditioners::new(1);
        let only_af11 = Match {
            dscp: Some(1 << Dscp::af(1, 1).0),
            ..Default::default()
        };
        let tb = || Some(Meter::TokenBucket(TokenBucket::new(Rate(8000), Bytes(1500))));
        c.add_block(
            def("a", only_af11, [Action::Drop(DropCause::Policer); 3]),
            vec![Instance::new(0, None, None, tb(), stream(1, "a"))],
            None,
            &[ChainRef::Egress(0)],
        );
        c.add_block(
            def(
                "b",
                Match::default(),
                [
                    Action::Mark(Dscp::af(2, 1)),
                    Action::Pass,
                    Action::Drop(DropCause::Policer),
                ],
            ),
            vec![Instance::new(0, None, None, tb(), stream(1, "b"))],
            None,
            &[ChainRef::Egress(0)],
        );
        let mut pkts = PacketArena::default();
        let p0 = pkts.alloc(Packet {
            size: 1000,
            ..Default::default()
        });
        let p1 = pkts.alloc(Packet {
            size: 1000,
            ..Default::default()
        });
        let w = window();
        assert_eq!(
            c.run(start(ChainRef::Egress(0)), false, p0, &mut pkts, SimTime::ZERO, &w),
            Outcome::Pass
        );
        assert_eq!(pkts[p0].dscp, Dscp::af(2, 1));
        assert_eq!(pkts[p0].color, Some(Color::Green));
        assert_eq!(
            c.run(start(ChainRef::Egress(0)), false, p1, &mut pkts, SimTime::ZERO, &w),
            Outcome::Drop {
                inst: 1,
                cause: DropCause::Policer
            }
        );
        assert_eq!(c.instances[0].stats, CondStats::default());
        assert_eq!(c.instances[1].stats.pkts, [1, 0, 1]);
        assert_eq!(c.instances[1].stats.remarked, [1, 0, 0]);
        assert_eq!(c.instances[1].stats.dropped_pkts, [0, 0, 1]);
        assert!(!c.has(ChainRef::Ingress(0)));
    }

    #[test]
    fn wake_ups_are_deduplicated_and_stale_ones_ignored() {
        let mut c = Conditioners::new(1);
        c.instances.push(Instance::new(0, None, None, None, stream(1, "x")));
        assert!(c.arm(0, SimTime(100)));
        assert!(!c.arm(0, SimTime(150)), "an earlier wake-up is pending");
        assert!(c.arm(0, SimTime(50)), "an earlier one replaces it");
        assert!(c.fire(0, SimTime(50)));
        assert!(!c.fire(0, SimTime(100)), "the replaced event is stale");
    }

    /// Every combination of match criteria, over flows 0..3 and nodes 0..3.
    fn every_match() -> Vec<Match> {
        let mut all = vec![Match::default()];
        let mut vary = |f: &dyn Fn(&Match) -> Vec<Match>| all = all.iter().flat_map(f).collect();
        vary(&|m| {
            [None, Some(FlowSet::from_iter([1, 2])), Some(FlowSet::from_iter([0]))]
                .map(|flows| Match { flows, ..m.clone() })
                .to_vec()
        });
        vary(&|m| {
            [None, Some(vec![1]), Some(vec![0, 2])]
                .map(|src| Match { src, ..m.clone() })
                .to_vec()
        });
        vary(&|m| {
            [None, Some(vec![1]), Some(vec![0, 2])]
                .map(|dst| Match { dst, ..m.clone() })
                .to_vec()
        });
        vary(&|m| {
            [None, Some(1u64 << Dscp::af(1, 1).0 | 1)]
                .map(|dscp| Match { dscp, ..m.clone() })
                .to_vec()
        });
        vary(&|m| {
            [None, Some(Direction::Forward), Some(Direction::Reverse)]
                .map(|direction| Match { direction, ..m.clone() })
                .to_vec()
        });
        all
    }

    #[test]
    fn flow_maps_take_one_flow_a_span_when_the_flows_are_close_and_a_sorted_list_otherwise() {
        // Flows 10, 12, 13 (span 4 <= 4 x 3): a span from 10 with a hole at 11.
        let t = Target::by_flow(vec![(13, 2), (10, 0), (12, 1)]);
        assert!(matches!(&t, Target::Span { first: 10, insts } if insts[..] == [0, NONE, 1, 2]));
        let got: Vec<_> = (0..16).map(|f| t.of_flow(f)).collect();
        let mut want = vec![None; 16];
        (want[10], want[12], want[13]) = (Some(0), Some(1), Some(2));
        assert_eq!(got, want);
        // Flows 0 and 9 (span 10 > 4 x 2): sorted pairs; no flow when none is named.
        let t = Target::by_flow(vec![(9, 5), (0, 4)]);
        assert!(matches!(&t, Target::Sparse(p) if p[..] == [(0, 4), (9, 5)]));
        assert_eq!(
            [0, 1, 8, 9, 10].map(|f| t.of_flow(f)),
            [Some(4), None, None, Some(5), None]
        );
        assert_eq!(Target::by_flow(vec![]).of_flow(0), None);
        let t = Target::by_flow(vec![(u32::MAX - 1, 3)]);
        assert!(matches!(t, Target::One { flow, inst: 3 } if flow == u32::MAX - 1));
        assert_eq!([u32::MAX, u32::MAX - 1, 0].map(|f| t.of_flow(f)), [None, Some(3), None]);
        let t = Target::by_flow(vec![(u32::MAX - 1, 3), (u32::MAX, 4)]);
        assert_eq!(
            [u32::MAX, u32::MAX - 1, 0].map(|f| t.of_flow(f)),
            [Some(4), Some(3), None]
        );
    }

    proptest::proptest! {
        #[test]
        fn a_flow_map_finds_the_instance_of_each_flow_it_holds_and_no_other(
            flows in proptest::collection::btree_set(proptest::prop_oneof![0u32..40, 0u32..5_000], 0..60),
            probes in proptest::collection::vec(0u32..5_100, 0..50),
        ) {
            let pairs: Vec<(FlowId, InstId)> = flows.iter().rev().copied().zip(100..).collect();
            let t = Target::by_flow(pairs.clone());
            for f in probes.into_iter().chain(flows.iter().copied()) {
                let want = pairs.iter().find(|p| p.0 == f).map(|p| p.1);
                proptest::prop_assert_eq!(t.of_flow(f), want, "flow {}", f);
            }
        }
    }

    #[test]
    fn the_compiled_selector_picks_the_packets_the_match_describes() {
        // Every match, per flow (instances 7, 8, ... for the flows that may match, as the
        // scenario builder makes them) or aggregate (instance 7), against every kind of
        // packet: the selector picks the instance `Match::matches` and the per-flow map
        // designate.
        let mut packets = Vec::new();
        for flow in 0..5 {
            for (src, dst, direction) in [
                (0, 1, Direction::Forward),
                (1, 0, Direction::Reverse),
                (2, 2, Direction::Forward),
            ] {
                for dscp in [Dscp::BE, Dscp::af(1, 1), Dscp::EF] {
                    packets.push(Packet {
                        flow,
                        src,
                        dst,
                        direction,
                        dscp,
                        ..Default::default()
                    });
                }
            }
        }
        let matches = every_match();
        assert_eq!(matches.len(), 3 * 3 * 3 * 2 * 3);
        for m in &matches {
            for per_flow in [false, true] {
                let map: Option<Vec<(FlowId, InstId)>> =
                    per_flow.then(|| (0..4).filter(|&f| m.may_match_flow(f, 0, 1)).zip(7..).collect());
                let sel = Selector::new(m, map.clone(), 7);
                for p in &packets {
                    let want = match &map {
                        _ if !m.matches(p) => None,
                        Some(map) => map.iter().find(|&&(f, _)| f == p.flow).map(|&(_, k)| k),
                        None => Some(7),
                    };
                    assert_eq!(sel.instance_for(p), want, "{m:?} per flow {per_flow} {p:?}");
                }
            }
        }
    }
}
