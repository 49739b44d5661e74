//! Trace-driven mode: one mechanism, fed a packet trace, without a network.
//!
//! "What would this queue do to my traffic?" A queue discipline is driven the way an egress
//! port drives it: packets arrive at their trace times, the link serializes one packet at a
//! time at `rate`, and the discipline decides admission and service order. When an arrival
//! and the end of a transmission fall on the same nanosecond, the arrival comes first, as
//! in the network engine (docs/ties.md, "arrivals first"): the transmission occupies the
//! link for every arrival of its nanosecond, and the next packet starts once they all are
//! in the queue. A packet arriving at a link idle since before its nanosecond starts at
//! once.
//!
//! "What would this srTCM do to my traffic?" A conditioner (a meter alone, or a whole
//! `[[conditioner]]` block: match, shaper, meter, actions per colour, or an EF policer)
//! is driven the way a chain drives it: each packet runs through it at its arrival time;
//! a shaper holds packets and releases them later (a release due at an arrival's
//! nanosecond happens first). Per-flow blocks keep one state per flow of the trace.
//!
//! Each packet of the trace gets one outcome: its colour, codepoint and ECN field on the
//! way out (CE when an ECN-capable packet was marked instead of dropped: RED, MRED or DSD
//! with `ecn = true`), whether and why it was dropped, when it left the mechanism (start of
//! transmission for a queue, release for a shaper, arrival otherwise) and, for a queue,
//! when its transmission ended. [`replay_series`] also gives, for a queue, the state of its
//! control loops just after each arrival ([`QueueState`]: RED / MRED's average, DSD's
//! green bias and its control loop's estimates). The mechanism is configured with the same table a scenario file uses (`{ type =
//! "droptail", limit = "10p" }`, `{ type = "srtcm", ... }`, a `[[conditioner]]` table
//! without its placement), so a configuration tried here pastes into a scenario unchanged.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::aqm::StateRow;
use crate::conditioner::MeterSpec;
use crate::conditioner::{BlockDef, ChainRef, Conditioners, Cont, InstId, Outcome as ChainOutcome};
use crate::discipline::{QueueCtx, Verdict};
use crate::engine::rng::{Rng, stream};
use crate::packet::{Color, Dscp, Ecn, Packet, PacketArena, PktId};
use crate::params::Params;
use crate::results::Column;
use crate::scenario::build_conditioner::{BlockParts, FlowIndex, FlowRef, block_parts, block_states};
use crate::scenario::conditioner::ConditionerSpec;
use crate::scenario::schema::QueueSpec;
use crate::scenario::{ConfigError, KeyPath};
use crate::sched::Qdisc;
use crate::stats::DropCause;
use crate::stats::Window;
use crate::time::{Rate, SimTime};

/// One packet of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Arrival {
    pub time: SimTime,
    /// IP datagram size in bytes.
    pub size: u32,
    pub dscp: Dscp,
    /// Index into the trace's flow names.
    pub flow: u32,
    /// The colour an upstream meter gave it (for colour-aware meters).
    pub color: Option<Color>,
    /// Its ECN field (RFC 3168): ECN-capable packets may be marked instead of dropped.
    pub ecn: Ecn,
}

/// What the mechanism did with one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Outcome {
    pub dscp: Dscp,
    pub color: Option<Color>,
    pub dropped: Option<DropCause>,
    /// When it left the mechanism: start of transmission (queue), release (shaper),
    /// arrival (meter, marker, policer).
    pub depart: Option<SimTime>,
    /// End of transmission on the link (queue disciplines only).
    pub tx_end: Option<SimTime>,
    /// The ECN field on the way out: CE if the mechanism marked it.
    pub ecn: Ecn,
}

/// A queue discipline's control state just after a packet's arrival was decided: what
/// judged it. NaN (and an empty unit) where the discipline has no such state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueState {
    /// The RED average that judged the packet (its queue's RED, its precedence's MRED
    /// virtual queue, RED on DSD's virtual queue), in the unit of the thresholds.
    pub avg: f64,
    /// "pkts" or "bytes".
    pub avg_unit: &'static str,
    /// DSD: the green bias in force and the control loop's green penalty.
    pub g: f64,
    pub penalty: f64,
    /// DSD's control loop: the smoothed loss ratios and mean queueing delays (s) of its
    /// last period boundary, [blue, green] (NaN before the first).
    pub loss: [f64; 2],
    pub wait_s: [f64; 2],
    /// CoDel, PIE, FQ-CoDel: the control state of the packet's queue.
    pub aqm: Option<StateRow>,
}

impl QueueState {
    pub const NONE: QueueState = QueueState {
        avg: f64::NAN,
        avg_unit: "",
        g: f64::NAN,
        penalty: f64::NAN,
        loss: [f64::NAN; 2],
        wait_s: [f64::NAN; 2],
        aqm: None,
    };

    /// The state of `qdisc` at `now` for a packet of `queue` and `precedence` just decided.
    fn of(qdisc: &Qdisc, queue: u8, precedence: u8, now: SimTime) -> QueueState {
        let (avg, avg_unit) = qdisc.red_average(queue, precedence).unwrap_or((f64::NAN, ""));
        let aqm = qdisc
            .aqm_queues()
            .into_iter()
            .find(|(i, _)| *i == queue)
            .and_then(|(_, q)| q.state(now));
        let mut s = QueueState {
            avg,
            avg_unit,
            aqm,
            ..QueueState::NONE
        };
        if let Qdisc::Dsd(d) = qdisc {
            (s.g, s.penalty) = (d.g(), d.penalty());
            if let Some(last) = d.control_history().last() {
                (s.loss, s.wait_s) = (last.p, last.q_s);
            }
        }
        s
    }
}

/// A mechanism to replay a trace through.
#[derive(Clone, Debug)]
pub enum Mechanism {
    /// A queue discipline in front of a link of `rate`.
    Queue { spec: QueueSpec, rate: Rate },
    /// A conditioning block (its placement keys left out).
    Conditioner(Box<ConditionerSpec>),
}

/// Which tables replay accepts: queue disciplines and meters by their `type`, and
/// `[[conditioner]]` tables (no `type`).
pub fn kinds() -> Vec<&'static str> {
    let mut k = QueueSpec::TAGS.to_vec();
    k.extend_from_slice(MeterSpec::TAGS);
    k.push("conditioner");
    k
}

/// Where a replayed conditioner is said to sit (its placement does not matter).
const PLACE: &str = "at = \"replay\"\n";

/// Reads a mechanism from its scenario table (TOML text), with `rate` for queue disciplines.
pub fn mechanism_from_toml(text: &str, rate: Option<Rate>) -> Result<Mechanism, ConfigError> {
    parse_mechanism(text, rate).map_err(|mut e| {
        if e.line.is_none() {
            let (line, value) = crate::scenario::locate::locate(text, &e.path);
            e.line = line;
            e.value = value.or(e.value);
        }
        e
    })
}

fn parse_mechanism(text: &str, rate: Option<Rate>) -> Result<Mechanism, ConfigError> {
    let root = KeyPath::root();
    let table: toml::Table = toml::from_str(text)
        .map_err(|e| ConfigError::new(root.clone(), None, format!("not valid TOML: {}", e.message())))?;
    let kind = match table.get("type") {
        Some(toml::Value::String(t)) => t.clone(),
        Some(other) => {
            return Err(ConfigError::new(
                root.key("type"),
                Some(other.to_string()),
                "a mechanism type is a string",
            ));
        }
        None => return conditioner_from_toml(text, &table),
    };
    if MeterSpec::TAGS.contains(&kind.as_str()) {
        let meter: MeterSpec = crate::scenario::deserialize_value(text)?;
        let mut spec: ConditionerSpec = crate::scenario::deserialize_value(PLACE)?;
        spec.meter = Some(meter);
        check_conditioner(&spec)?;
        return Ok(Mechanism::Conditioner(Box::new(spec)));
    }
    if QueueSpec::TAGS.contains(&kind.as_str()) {
        let spec: QueueSpec = crate::scenario::deserialize_value(text)?;
        let Some(rate) = rate else {
            return Err(ConfigError::new(
                root.key("rate"),
                None,
                "a queue discipline needs the rate of the link it feeds",
            ));
        };
        if rate.0 == 0 {
            return Err(ConfigError::new(
                root.key("rate"),
                Some(format!("\"{rate}\"")),
                "a rate must be greater than 0",
            ));
        }
        spec.qdisc(rate, &root)?;
        return Ok(Mechanism::Queue { spec, rate });
    }
    Err(ConfigError::new(
        root.key("type"),
        Some(format!("\"{kind}\"")),
        format!("replay knows no mechanism of this type; known: {}", kinds().join(", ")),
    ))
}

/// A `[[conditioner]]` table without `type`: a whole block. Placement keys do not apply.
fn conditioner_from_toml(text: &str, table: &toml::Table) -> Result<Mechanism, ConfigError> {
    for key in ["at", "side", "interface"] {
        if table.contains_key(key) {
            return Err(ConfigError::new(
                KeyPath::root().key(key),
                table.get(key).map(|v| v.to_string()),
                "a replayed conditioner has no placement: leave at, side and interface out",
            ));
        }
    }
    if !["meter", "shaper", "ef_policer"].iter().any(|k| table.contains_key(*k)) {
        return Err(ConfigError::new(
            KeyPath::root().key("type"),
            None,
            format!(
                "missing key `type` (one of {}), or a conditioner table with a meter, shaper or ef_policer",
                kinds().join(", ")
            ),
        ));
    }
    // Parse with a placement line on top, then report lines of the text as given.
    let spec: ConditionerSpec = crate::scenario::deserialize_value(&format!("{PLACE}{text}")).map_err(|mut e| {
        e.line = e.line.map(|l| l.saturating_sub(1)).filter(|l| *l > 0);
        e
    })?;
    check_conditioner(&spec)?;
    Ok(Mechanism::Conditioner(Box::new(spec)))
}

/// Builds the conditioner's parts once, for the errors they may raise; flow names are
/// checked when the trace (which names the flows) is replayed.
fn check_conditioner(spec: &ConditionerSpec) -> Result<(), ConfigError> {
    spec.check(&KeyPath::root())?;
    let mut probe = spec.clone();
    probe.matcher.flow = None;
    conditioner_block(&probe, &[], 0).map(|_| ())
}

/// The block and its states, the trace's flows standing for the scenario's.
fn conditioner_block(spec: &ConditionerSpec, flows: &[String], seed: u64) -> Result<Conditioners, ConfigError> {
    let root = KeyPath::root();
    for (key, list) in [("src", &spec.matcher.src), ("dst", &spec.matcher.dst)] {
        if list.is_some() {
            return Err(ConfigError::new(
                root.key("match").key(key),
                None,
                "a trace has no nodes: match by flow or dscp",
            ));
        }
    }
    let refs = FlowIndex::new(
        flows
            .iter()
            .map(|f| FlowRef {
                name: f,
                group: f,
                src: 0,
                dst: 1,
            })
            .collect(),
    );
    let name = spec.name.clone().unwrap_or_else(|| "replay".into());
    let parts = block_parts(spec, &name, &HashMap::new(), &refs, None, &root)?;
    let per_flow = spec.per_flow && !refs.flows.is_empty();
    let (instances, members) = block_states(per_flow, &name, &parts, &refs, seed, &root)?;
    let BlockParts { matcher, actions, .. } = parts;
    let mut c = Conditioners::new(1);
    c.add_block(
        BlockDef {
            name,
            node: 0,
            matcher,
            actions,
        },
        instances,
        members,
        &[ChainRef::Egress(0)],
    );
    Ok(c)
}

/// Checks a trace before replaying it: times must not decrease, sizes must be positive.
pub fn check_trace(arrivals: &[Arrival]) -> Result<(), ConfigError> {
    let row = |i: usize| KeyPath::root().key("trace").index(i);
    for (i, a) in arrivals.iter().enumerate() {
        if a.size == 0 {
            return Err(ConfigError::new(
                row(i).key("size"),
                Some("0".into()),
                "a packet has at least one byte",
            ));
        }
        if i > 0 && a.time < arrivals[i - 1].time {
            return Err(ConfigError::new(
                row(i).key("time"),
                Some(format!("{}ns", a.time.0)),
                format!(
                    "arrival times must not decrease (row {} is at {}ns)",
                    i - 1,
                    arrivals[i - 1].time.0
                ),
            ));
        }
    }
    Ok(())
}

/// Replays `arrivals` (in time order) through `mechanism`, one outcome per arrival.
/// `flows` names the trace's flows (`Arrival::flow` indexes it), for conditioners that
/// match flows by name or keep per-flow states.
pub fn replay(
    mechanism: &Mechanism,
    arrivals: &[Arrival],
    flows: &[String],
    seed: u64,
) -> Result<Vec<Outcome>, ConfigError> {
    replay_series(mechanism, arrivals, flows, seed).map(|(out, _)| out)
}

/// [`replay`], and the discipline's state just after each arrival ([`QueueState::NONE`]
/// for a conditioner).
pub fn replay_series(
    mechanism: &Mechanism,
    arrivals: &[Arrival],
    flows: &[String],
    seed: u64,
) -> Result<(Vec<Outcome>, Vec<QueueState>), ConfigError> {
    check_trace(arrivals)?;
    if let Some((i, a)) = arrivals
        .iter()
        .enumerate()
        .find(|(_, a)| a.flow as usize >= flows.len().max(1))
    {
        return Err(ConfigError::new(
            KeyPath::root().key("trace").index(i).key("flow"),
            Some(a.flow.to_string()),
            format!("the trace names {} flows", flows.len()),
        ));
    }
    match mechanism {
        Mechanism::Queue { spec, rate } => replay_queue(spec, *rate, arrivals, seed),
        Mechanism::Conditioner(spec) => {
            replay_conditioner(spec, arrivals, flows, seed).map(|out| (out, vec![QueueState::NONE; arrivals.len()]))
        }
    }
}

/// The columns of the states [`replay_series`] gave: `avg` and `avg_unit`; for DSD `g`,
/// `penalty`, `loss_blue`, `loss_green` (fractions), `wait_blue_ms`, `wait_green_ms`; for
/// CoDel, PIE and FQ-CoDel `delay_ms`, `dropping`, `count`, `p`, `flows` (as the
/// `aqm_series` table; NaN where the mechanism has no such state).
pub fn series_columns(mechanism: &Mechanism, states: &[QueueState]) -> Vec<(String, Column)> {
    let f =
        |name: &str, v: &dyn Fn(&QueueState) -> f64| (name.to_string(), Column::F64(states.iter().map(v).collect()));
    let mut columns = vec![
        f("avg", &|s| s.avg),
        (
            "avg_unit".to_string(),
            Column::Str(states.iter().map(|s| s.avg_unit.to_string()).collect()),
        ),
    ];
    if matches!(
        mechanism,
        Mechanism::Queue {
            spec: QueueSpec::Dsd(_),
            ..
        }
    ) {
        columns.extend([
            f("g", &|s| s.g),
            f("penalty", &|s| s.penalty),
            f("loss_blue", &|s| s.loss[0]),
            f("loss_green", &|s| s.loss[1]),
            f("wait_blue_ms", &|s| s.wait_s[0] * 1e3),
            f("wait_green_ms", &|s| s.wait_s[1] * 1e3),
        ]);
    }
    if states.iter().any(|s| s.aqm.is_some()) {
        let a =
            |name: &str, v: fn(&StateRow) -> Option<f64>| f(name, &|s| s.aqm.as_ref().and_then(v).unwrap_or(f64::NAN));
        columns.extend([
            a("delay_ms", |r| r.delay.map(|d| d.as_millis_f64())),
            a("dropping", |r| r.dropping.map(f64::from)),
            a("count", |r| r.count.map(f64::from)),
            a("p", |r| r.p),
            a("flows", |r| r.flows.map(f64::from)),
        ]);
    }
    columns
}

fn replay_conditioner(
    spec: &ConditionerSpec,
    arrivals: &[Arrival],
    flows: &[String],
    seed: u64,
) -> Result<Vec<Outcome>, ConfigError> {
    let mut conds = conditioner_block(spec, flows, seed)?;
    let start = Cont {
        chain: ChainRef::Egress(0),
        index: 0,
    };
    let always = Window {
        start: SimTime::ZERO,
        end: SimTime::MAX,
    };
    let mut pkts = PacketArena::with_capacity(256);
    let mut out: Vec<Outcome> = arrivals
        .iter()
        .map(|a| Outcome {
            dscp: a.dscp,
            color: a.color,
            ecn: a.ecn,
            ..Default::default()
        })
        .collect();
    // Shaper wake-ups: (time, instance), earliest first.
    let mut wakes: BinaryHeap<Reverse<(SimTime, InstId)>> = BinaryHeap::new();
    let settle = |outcome: ChainOutcome,
                  id: PktId,
                  now: SimTime,
                  pkts: &mut PacketArena,
                  out: &mut [Outcome],
                  wakes: &mut BinaryHeap<Reverse<(SimTime, InstId)>>,
                  conds: &mut Conditioners| {
        let i = pkts[id].index as usize;
        match outcome {
            ChainOutcome::Pass => {
                out[i].depart = Some(now);
                (out[i].dscp, out[i].color) = (pkts[id].dscp, pkts[id].color);
                pkts.free(id);
            }
            ChainOutcome::Drop { cause, .. } => {
                out[i].dropped = Some(cause);
                (out[i].dscp, out[i].color) = (pkts[id].dscp, pkts[id].color);
                pkts.free(id);
            }
            ChainOutcome::Held { inst, wake } => {
                if let Some(t) = wake {
                    if conds.arm(inst, t) {
                        wakes.push(Reverse((t, inst)));
                    }
                }
            }
        }
    };
    let mut next = 0;
    loop {
        let now = match (
            arrivals.get(next).map(|a| a.time),
            wakes.peek().map(|Reverse((t, _))| *t),
        ) {
            (None, None) => break,
            (Some(a), Some(w)) => a.min(w),
            (Some(a), None) => a,
            (None, Some(w)) => w,
        };
        while let Some(&Reverse((t, inst))) = wakes.peek() {
            if t != now {
                break;
            }
            wakes.pop();
            if !conds.fire(inst, now) {
                continue;
            }
            while let Some((id, cont)) = conds.release(inst, now, &always) {
                let o = conds.run(cont, true, id, &mut pkts, now, &always);
                settle(o, id, now, &mut pkts, &mut out, &mut wakes, &mut conds);
            }
            if let Some(t) = conds.next_release(inst, now) {
                if conds.arm(inst, t) {
                    wakes.push(Reverse((t, inst)));
                }
            }
        }
        while next < arrivals.len() && arrivals[next].time == now {
            let a = arrivals[next];
            let id = pkts.alloc(Packet {
                flow: a.flow,
                src: 0,
                dst: 1,
                size: a.size,
                dscp: a.dscp,
                color: a.color,
                ecn: a.ecn,
                index: next as u64,
                sent_at: now,
                enqueued_at: now,
                ..Default::default()
            });
            let o = conds.run(start, false, id, &mut pkts, now, &always);
            settle(o, id, now, &mut pkts, &mut out, &mut wakes, &mut conds);
            next += 1;
        }
    }
    Ok(out)
}

fn replay_queue(
    spec: &QueueSpec,
    rate: Rate,
    arrivals: &[Arrival],
    seed: u64,
) -> Result<(Vec<Outcome>, Vec<QueueState>), ConfigError> {
    let mut l = QueueLink {
        qdisc: spec.qdisc(rate, &KeyPath::root())?,
        rate,
        rng: stream(seed, "queue:replay"),
        pkts: PacketArena::with_capacity(256),
        dropped: Vec::new(),
        on_wire: None,
        resume: None,
    };
    let mut out: Vec<Outcome> = arrivals
        .iter()
        .map(|a| Outcome {
            dscp: a.dscp,
            ecn: a.ecn,
            ..Default::default()
        })
        .collect();
    let mut states = vec![QueueState::NONE; arrivals.len()];
    let mut next = 0;
    loop {
        let next_arrival = arrivals.get(next).map(|a| a.time);
        let tx_end = l.on_wire.map(|(_, t)| t);
        let Some(now) = [next_arrival, tx_end, l.resume].into_iter().flatten().min() else {
            break;
        };
        if next_arrival != Some(now) {
            // The transmission ends, or the discipline asked to be asked again, after every
            // arrival of its nanosecond: the next queued packet starts if the link is free.
            if tx_end == Some(now) {
                let (id, _) = l.on_wire.take().expect("checked");
                l.pkts.free(id);
            }
            if l.resume == Some(now) {
                l.resume = None;
            }
            l.start_if_free(now, &mut out);
            continue;
        }
        while next < arrivals.len() && arrivals[next].time == now {
            let a = arrivals[next];
            let id = l.pkts.alloc(Packet {
                flow: a.flow,
                size: a.size,
                dscp: a.dscp,
                ecn: a.ecn,
                index: next as u64,
                sent_at: now,
                enqueued_at: now,
                ..Default::default()
            });
            l.qdisc.classify(&mut l.pkts, id);
            let (queue, precedence) = (l.pkts[id].queue, l.pkts[id].precedence);
            let mut ctx = QueueCtx {
                now,
                pkts: &mut l.pkts,
                rng: &mut l.rng,
                dropped: &mut l.dropped,
            };
            match l.qdisc.enqueue(id, &mut ctx) {
                Verdict::Drop(cause) => {
                    out[next].dropped = Some(cause);
                    l.pkts.free(id);
                }
                // Marked CE, perhaps.
                Verdict::Admit => out[next].ecn = l.pkts[id].ecn,
            }
            states[next] = QueueState::of(&l.qdisc, queue, precedence, now);
            settle_drops(&mut l.dropped, &mut l.pkts, &mut out);
            // As at an egress port: an idle link (no transmission, none ending now) starts
            // on the packet that just arrived.
            l.start_if_free(now, &mut out);
            next += 1;
        }
    }
    Ok((out, states))
}

/// A replayed queue's link: its discipline, the packets, and what is on the wire.
struct QueueLink {
    qdisc: Qdisc,
    rate: Rate,
    rng: Rng,
    pkts: PacketArena,
    dropped: Vec<(PktId, DropCause)>,
    /// The packet on the wire and when its last bit leaves.
    on_wire: Option<(PktId, SimTime)>,
    /// When a discipline that held the idle link back while packets wait (CBQ) asked to
    /// be asked again.
    resume: Option<SimTime>,
}

impl QueueLink {
    /// If the link is free, put the discipline's next packet on the wire, or, if it holds
    /// the waiting packets back, note when it wants to be asked again.
    fn start_if_free(&mut self, now: SimTime, out: &mut [Outcome]) {
        if self.on_wire.is_some() {
            return;
        }
        let mut ctx = QueueCtx {
            now,
            pkts: &mut self.pkts,
            rng: &mut self.rng,
            dropped: &mut self.dropped,
        };
        if let Some(id) = self.qdisc.dequeue(&mut ctx) {
            let end = now + self.rate.tx_time(self.pkts[id].size as u64);
            let o = &mut out[self.pkts[id].index as usize];
            o.depart = Some(now);
            o.tx_end = Some(end);
            o.dscp = self.pkts[id].dscp;
            self.on_wire = Some((id, end));
        } else if self.qdisc.len_packets() > 0 {
            self.resume = self.qdisc.resume_at(now);
        }
        settle_drops(&mut self.dropped, &mut self.pkts, out);
    }
}

/// Records packets the discipline dropped from its queue.
fn settle_drops(dropped: &mut Vec<(PktId, DropCause)>, pkts: &mut PacketArena, out: &mut [Outcome]) {
    for (id, cause) in dropped.drain(..) {
        out[pkts[id].index as usize].dropped = Some(cause);
        pkts.free(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn trace(times_us: &[u64], size: u32) -> Vec<Arrival> {
        times_us
            .iter()
            .map(|t| Arrival {
                time: SimTime(t * 1000),
                size,
                ..Default::default()
            })
            .collect()
    }

    fn fifo(limit: &str, rate: &str) -> Mechanism {
        mechanism_from_toml(
            &format!("type = \"droptail\"\nlimit = \"{limit}\""),
            Some(Rate::parse(rate).unwrap()),
        )
        .unwrap()
    }

    #[test]
    fn dd1_departures_are_back_to_back_or_on_arrival() {
        // 1000 B at 8 Mbit/s: 1 ms each. Arrivals every 1 ms: each starts on arrival, at the
        // nanosecond the previous one ends (it waits in the queue for no time at all).
        let out = replay(&fifo("10p", "8Mbps"), &trace(&[0, 1000, 2000, 3000], 1000), &[], 1).unwrap();
        for (i, o) in out.iter().enumerate() {
            assert_eq!(o.depart, Some(SimTime(i as u64 * 1_000_000)));
            assert_eq!(o.tx_end, Some(SimTime(i as u64 * 1_000_000) + Duration::from_millis(1)));
            assert_eq!(o.dropped, None);
        }
    }

    #[test]
    fn red_marks_ecn_capable_packets_and_its_average_is_the_series() {
        // Six 125 B ECT(0) packets at 0 into RED with ECN (wq 0.5, thresholds 1 and 2
        // packets, gentle, max_p 1) at 1 Mbit/s. RED's average at each arrival, by hand:
        // 0 (empty), 0 (the first is on the wire), 0.5, 1.25, then random verdicts. Every
        // early verdict on an ECN-capable packet is a CE mark, never a drop (a forced one,
        // at 4 packets, is out of reach: 6 packets, at most 5 waiting).
        let m = mechanism_from_toml(
            "type = \"red\"\nlimit = \"10p\"\nmin_th = \"1p\"\nmax_th = \"2p\"\nmax_p = 1.0\nwq = 0.5\ngentle = true\necn = true\n",
            Some(Rate::parse("1Mbps").unwrap()),
        )
        .unwrap();
        let trace: Vec<Arrival> = trace(&[0; 6], 125)
            .into_iter()
            .map(|a| Arrival { ecn: Ecn::Ect0, ..a })
            .collect();
        let (out, states) = replay_series(&m, &trace, &[], 1).unwrap();
        let avgs: Vec<f64> = states.iter().map(|s| s.avg).collect();
        assert_eq!(avgs[..4], [0.0, 0.0, 0.5, 1.25]);
        assert!(states.iter().all(|s| s.avg_unit == "pkts" && s.g.is_nan()));
        assert!(out.iter().all(|o| o.dropped.is_none()));
        assert!(out[..3].iter().all(|o| o.ecn == Ecn::Ect0));
        assert!(out.iter().any(|o| o.ecn == Ecn::Ce), "{out:?}");
        // A meter has no queue state.
        let meter = mechanism_from_toml("type = \"token_bucket\"\nrate = \"1Mbps\"\ndepth = \"1KB\"\n", None).unwrap();
        let (_, states) = replay_series(&meter, &trace, &[], 1).unwrap();
        assert!(states.iter().all(|s| s.avg.is_nan() && s.avg_unit.is_empty()));
    }

    #[test]
    fn codel_drops_heads_of_a_standing_burst_by_the_control_law() {
        // 400 packets of 1000 B at 0 behind 8 Mbit/s (1 ms each): packet k would leave at
        // k ms with a sojourn time of k ms. It reaches the 5 ms target at 5 ms, so CoDel
        // drops at the first dequeue at or after 105 ms (the head, packet 105; 106 leaves
        // then), then at 205 ms (packet 206), at 275.71 ms = 205 + 100/sqrt(2) rounded up
        // to the next dequeue, 276 ms (packet 278) and 333.45 ms = + 100/sqrt(3) -> 334 ms
        // (packet 337): every drop shifts the later packets one slot earlier.
        let m = mechanism_from_toml("type = \"codel\"\n", Some(Rate::parse("8Mbps").unwrap())).unwrap();
        let (out, states) = replay_series(&m, &trace(&[0; 400], 1000), &[], 1).unwrap();
        let dropped: Vec<usize> = (0..340).filter(|&i| out[i].dropped.is_some()).collect();
        assert_eq!(dropped, vec![105, 206, 278, 337]);
        assert!(dropped.iter().all(|&i| out[i].dropped == Some(DropCause::Early)));
        assert_eq!(out[106].depart, Some(SimTime(105_000_000)));
        assert_eq!(out[207].depart, Some(SimTime(205_000_000)));
        // The state columns: every packet arrived at 0, before any drop.
        let names: Vec<String> = series_columns(&m, &states).into_iter().map(|c| c.0).collect();
        assert!(
            ["delay_ms", "dropping", "count", "p", "flows"]
                .iter()
                .all(|c| names.contains(&c.to_string()))
        );
        assert!(
            states
                .iter()
                .all(|s| s.aqm.is_some_and(|a| a.dropping == Some(0) && a.p.is_none()))
        );
    }

    #[test]
    fn a_burst_queues_and_overflows() {
        // Five packets at t = 0 into a 2-packet queue behind a 1 ms-per-packet link: the first
        // goes straight onto the wire, the next two wait (start 1 ms and 2 ms), the last two
        // find the queue full. A sixth at 2.5 ms finds one place (the third left at 2 ms):
        // it starts when the third ends, at 3 ms.
        let out = replay(&fifo("2p", "8Mbps"), &trace(&[0, 0, 0, 0, 0, 2500], 1000), &[], 1).unwrap();
        let starts: Vec<Option<u64>> = out.iter().map(|o| o.depart.map(|t| t.0 / 1_000_000)).collect();
        assert_eq!(starts, vec![Some(0), Some(1), Some(2), None, None, Some(3)]);
        assert_eq!(out[3].dropped, Some(DropCause::Overflow));
        assert_eq!(out[4].dropped, Some(DropCause::Overflow));
    }

    fn at(t_ms: u64, size: u32, color: Option<Color>) -> Arrival {
        Arrival {
            time: SimTime(t_ms * 1_000_000),
            size,
            color,
            ..Default::default()
        }
    }

    fn colours(config: &str, trace: &[Arrival]) -> Vec<Option<Color>> {
        let m = mechanism_from_toml(config, None).unwrap();
        replay(&m, trace, &["f".into()], 1)
            .unwrap()
            .iter()
            .map(|o| o.color)
            .collect()
    }

    use Color::{Green as G, Red as R, Yellow as Y};

    #[test]
    fn srtcm_colour_blind_by_hand() {
        // RFC 2697, CIR 1000 B/s, CBS 1500 B, EBS 1000 B, both buckets full at 0.
        // 0 s 1000 B: Tc 1500 -> green, Tc 500.  0 s 1000 B: Te 1000 -> yellow, Te 0.
        // 0 s 600 B: red.  0.5 s 1000 B: Tc 1000 -> green, Tc 0.  1 s 500 B: green, Tc 0.
        // 3 s 1200 B: 2000 B of tokens fill Tc (1500) and spill 500 into Te: green, Tc 300.
        // 3 s 400 B: Te 500 -> yellow, Te 100.  3.1 s 200 B: Tc 400 -> green, Tc 200.
        // 3.1 s 2000 B (more than CBS and EBS): red.
        let cfg = "type = \"srtcm\"\ncir = \"8kbps\"\ncbs = \"1500B\"\nebs = \"1000B\"\n";
        let t = [
            at(0, 1000, None),
            at(0, 1000, None),
            at(0, 600, None),
            at(500, 1000, None),
            at(1000, 500, None),
            at(3000, 1200, None),
            at(3000, 400, None),
            at(3100, 200, None),
            at(3100, 2000, None),
        ];
        let want = [G, Y, R, G, G, G, Y, G, R].map(Some);
        assert_eq!(colours(cfg, &t), want);
    }

    #[test]
    fn srtcm_colour_aware_by_hand() {
        // Same buckets. A yellow packet may take only Te: yellow, Te 0; a green one takes Tc:
        // green, Tc 500; a red one stays red and takes nothing; green 400 B: Tc -> 100.
        let cfg = "type = \"srtcm\"\ncir = \"8kbps\"\ncbs = \"1500B\"\nebs = \"1000B\"\nmode = \"aware\"\n";
        let t = [
            at(0, 1000, Some(Y)),
            at(0, 1000, Some(G)),
            at(0, 400, Some(R)),
            at(0, 400, Some(G)),
        ];
        assert_eq!(colours(cfg, &t), [Y, G, R, G].map(Some));
    }

    #[test]
    fn trtcm_colour_blind_by_hand() {
        // RFC 2698, CIR 1000 B/s CBS 1000 B, PIR 2000 B/s PBS 2000 B, full at 0.
        // 0 s 800: Tp 2000, Tc 1000 -> green; Tp 1200, Tc 200.  0 s 800: Tc short -> yellow,
        // Tp 400.  0 s 800: Tp short -> red.  0.5 s 600: Tp 1400, Tc 700 -> green; Tp 800,
        // Tc 100.  0.5 s 900: Tp 800 short -> red.  1 s 900: Tp 1800, Tc 600 -> yellow,
        // Tp 900.  5 s 2500 (more than PBS): red.
        let cfg = "type = \"trtcm\"\ncir = \"8kbps\"\ncbs = \"1000B\"\npir = \"16kbps\"\npbs = \"2000B\"\n";
        let t = [
            at(0, 800, None),
            at(0, 800, None),
            at(0, 800, None),
            at(500, 600, None),
            at(500, 900, None),
            at(1000, 900, None),
            at(5000, 2500, None),
        ];
        assert_eq!(colours(cfg, &t), [G, Y, R, G, R, Y, R].map(Some));
    }

    #[test]
    fn a_policer_drops_and_a_shaper_delays() {
        // Token bucket 1000 B/s, 1500 B deep, red dropped: 1000 B at 0 (green, 500 left), 1000 B
        // at 0 (red: dropped), 1000 B at 0.5 s (1000 B of tokens: green).
        let pol = mechanism_from_toml(
            "meter = { type = \"token_bucket\", rate = \"8kbps\", depth = \"1500B\" }\nred = \"drop\"\n",
            None,
        )
        .unwrap();
        let out = replay(
            &pol,
            &[at(0, 1000, None), at(0, 1000, None), at(500, 1000, None)],
            &["f".into()],
            1,
        )
        .unwrap();
        let dropped: Vec<_> = out.iter().map(|o| o.dropped).collect();
        assert_eq!(dropped, [None, Some(DropCause::Policer), None]);
        // Shaper 1000 B/s, 1000 B deep, 2 packets of buffer: four 1000 B packets at 0 leave
        // at 0 (bucket full), 1 s and 2 s; the fourth finds the buffer full.
        let sh = mechanism_from_toml(
            "shaper = { type = \"token_bucket\", rate = \"8kbps\", depth = \"1000B\", limit = \"2p\" }\n",
            None,
        )
        .unwrap();
        let out = replay(&sh, &[at(0, 1000, None); 4], &["f".into()], 1).unwrap();
        let departs: Vec<_> = out.iter().map(|o| o.depart.map(|t| t.0 / 1_000_000)).collect();
        assert_eq!(departs, [Some(0), Some(1000), Some(2000), None]);
        assert_eq!(out[3].dropped, Some(DropCause::ShaperOverflow));
    }

    #[test]
    fn rate_adaptive_shapers_replay_the_hand_computed_burst() {
        // conditioner/ras.rs srras_releases_a_burst_by_hand and
        // g_srras_releases_at_min_t1_t2_by_hand: srRAS CIR 1000 B/s, MIR 3000 B/s, CIR_th
        // 2000 B, MIR_th 4000 B, buffer 6000 B, K 1000 s (EAR negligible); five 1000 B
        // packets at 0 and one at 4 s. The srRAS releases them at 1/3 s, 2/3 s, 7/6 s,
        // 13/6 s, 19/6 s and 25/6 s (ns rounded up); the G-srRAS in front of an srTCM (CIR
        // 1000 B/s, CBS 1500 B, EBS 3000 B) at min(T1, T2): 0, 1/3 s (yellow), 0.5 s, 1.5 s,
        // 2.5 s, 4 s.
        let ras = "cir = \"8kbps\", mir = \"24kbps\", cir_th = \"2000B\", mir_th = \"4000B\", buffer = \"6000B\", k = \"1000s\"";
        let meter = "meter = { type = \"srtcm\", cir = \"8kbps\", cbs = \"1500B\", ebs = \"3000B\" }\n";
        let mut burst = vec![at(0, 1000, None); 5];
        burst.push(at(4000, 1000, None));
        let run = |cfg: String| replay(&mechanism_from_toml(&cfg, None).unwrap(), &burst, &["f".into()], 1).unwrap();
        let out = run(format!("shaper = {{ type = \"srras\", {ras} }}\n{meter}"));
        let departs: Vec<_> = out.iter().map(|o| o.depart.unwrap().0).collect();
        assert_eq!(
            departs,
            [
                333_333_334,
                666_666_668,
                1_166_666_668,
                2_166_666_668,
                3_166_666_668,
                4_166_666_668
            ]
        );
        let out = run(format!("shaper = {{ type = \"g_srras\", {ras} }}\n{meter}"));
        let departs: Vec<_> = out.iter().map(|o| o.depart.unwrap().0).collect();
        assert_eq!(
            departs,
            [0, 333_333_334, 500_000_000, 1_500_000_000, 2_500_000_000, 4_000_000_000]
        );
        let colours: Vec<_> = out.iter().map(|o| o.color).collect();
        assert_eq!(colours, [G, Y, G, G, G, G].map(Some));
        // Without a link there is no line rate for the MIR to default to.
        let e = mechanism_from_toml(
            "shaper = { type = \"trras\", cir = \"8kbps\", pir = \"16kbps\", cir_th = \"1KB\", pir_th = \"2KB\", mir_th = \"3KB\", buffer = \"4KB\", k = \"1s\" }",
            None,
        )
        .unwrap_err();
        assert_eq!(e.path.to_string(), "shaper.mir");
    }

    #[test]
    fn bad_traces_and_configs_are_refused() {
        let mut t = trace(&[0, 10, 5], 100);
        let e = replay(&fifo("2p", "8Mbps"), &t, &[], 1).unwrap_err();
        assert_eq!(e.path.to_string(), "trace[2].time");
        t = trace(&[0, 10], 100);
        t[1].size = 0;
        assert_eq!(
            replay(&fifo("2p", "8Mbps"), &t, &[], 1).unwrap_err().path.to_string(),
            "trace[1].size"
        );
        let e = mechanism_from_toml("type = \"droptail\"\nlimit = \"2\"", Some(Rate(1))).unwrap_err();
        assert_eq!(e.path.to_string(), "limit");
        let e = mechanism_from_toml("type = \"droptail\"\nlimit = \"2p\"", None).unwrap_err();
        assert_eq!(e.path.to_string(), "rate");
        let e = mechanism_from_toml("type = \"wfq\"", None).unwrap_err();
        assert!(e.rule.contains("replay knows no mechanism"), "{e}");
        let e = mechanism_from_toml(
            "at = \"R1\"\nmeter = { type = \"tsw\", target = \"1Mbps\", window = \"1s\" }",
            None,
        )
        .unwrap_err();
        assert_eq!(e.path.to_string(), "at");
        let e = mechanism_from_toml(
            "meter = { type = \"srtcm\", cir = \"1Mbps\", cbs = \"0B\", ebs = \"0B\" }",
            None,
        )
        .unwrap_err();
        assert_eq!((e.path.to_string(), e.line), ("meter.cbs".to_string(), Some(1)));
    }
}
