//! FQ-CoDel: the FlowQueue-CoDel packet scheduler and AQM, RFC 8290.
//!
//! Packets are hashed by flow into `flows` queues (1024, section 4.1.1), each a FIFO with
//! its own CoDel (RFC 8289, [`super::codel`]). A deficit round robin with `quantum` bytes
//! (1514 B, section 4.2) serves the queues in two lists: a queue that becomes active joins
//! the *new* list, served before the *old* list; a queue that used up its deficit moves to
//! the end of the old list; a new queue that empties moves to the old list (so that a flow
//! cannot come back as new at once), an old one that empties leaves the lists (section 4.2,
//! and the dequeue of Linux `sch_fq_codel.c`). When the total `limit` (10240 packets) or
//! `memory_limit` is exceeded, packets are dropped from the head of the queue with the
//! largest backlog in bytes (section 4.1): as Linux, a batch of up to `drop_batch` packets
//! (64), stopping once half that queue's bytes are gone; they count as `overflow` drops. The
//! arriving packet itself is admitted (it is at the tail).
//!
//! Flow hashing: the key is dsim's flow id and the packet's direction (a flow's data and its
//! acknowledgements are two 5-tuples), mixed with a perturbation by the SplitMix64
//! finalizer and mapped onto the queues by a multiply-shift. As Linux draws its
//! perturbation at random when the qdisc is created, the perturbation is drawn from the
//! port's random stream at the first packet unless `perturbation` fixes it: flows share a
//! queue (collide) as they would with a real hash, differently in each replication.
//!
//! `memory_limit` counts the bytes of the queued packets (Linux counts the kernel's buffer
//! sizes, larger than the packets).

use std::collections::VecDeque;

use rand::RngExt;
use serde::{Deserialize, Serialize};

use super::codel::{Codel, CodelVars};
use super::{AqmQueue, DropTailQueue};
use crate::discipline::QueueCtx;
use crate::packet::{Direction, PktId};
use crate::params::{ConfigError, KeyPath, Params};
use crate::stats::DropCause;
use crate::time::{Bytes, Duration, Limit};

fn default_fq_limit() -> Limit {
    Limit::Packets(10240)
}
fn default_flows() -> u32 {
    1024
}
fn default_quantum() -> Bytes {
    Bytes(1514)
}
fn default_memory_limit() -> Bytes {
    Bytes(32 << 20)
}
fn default_drop_batch() -> u32 {
    64
}

crate::codel_table! {
    /// `type = "fq_codel"`: flow queues with CoDel each, served by DRR (RFC 8290).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    #[param(document = "RFC 8290")]
    pub struct FqCodelSpec {
        /// Total limit over every flow queue, in packets ("10240p") or bytes.
        #[serde(default = "default_fq_limit")]
        #[param(range = "(0, inf)", section = "5.2.2")]
        pub limit: Limit,
        /// Number of flow queues packets are hashed into.
        #[serde(default = "default_flows")]
        #[param(range = "[1, 65536]", section = "5.2.3")]
        pub flows: u32,
        /// Bytes a queue may send per round of the deficit round robin.
        #[serde(default = "default_quantum")]
        #[param(range = "[1B, inf)", section = "5.2.1")]
        pub quantum: Bytes,
        /// Bytes of queued packets above which the fattest queue loses packets (Linux).
        #[serde(default = "default_memory_limit")]
        #[param(range = "[1B, inf)")]
        pub memory_limit: Bytes,
        /// Most packets dropped from the fattest queue at one overflow (Linux).
        #[serde(default = "default_drop_batch")]
        #[param(range = "[1, inf)", section = "4.1")]
        pub drop_batch: u32,
        /// The flow hash's perturbation; drawn from the port's random stream when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(section = "4.1.1")]
        pub perturbation: Option<u64>,
    }
}

impl FqCodelSpec {
    /// The FQ-CoDel this table declares, as the single queue of a port or class.
    pub fn queue(&self, path: &KeyPath) -> Result<AqmQueue, ConfigError> {
        self.check(path)?;
        let fq = Box::new(FqCodel::new(self));
        Ok(self.with_keys(DropTailQueue::unbounded(), super::Aqm::FqCodel(fq)))
    }
}

/// Which list a flow queue is on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

/// One flow queue: its packets, its CoDel and its deficit.
#[derive(Clone, Debug)]
struct FlowQueue {
    fifo: DropTailQueue,
    codel: Codel,
    deficit: i64,
    list: List,
}

#[derive(Clone, Debug)]
pub struct FqCodel {
    queues: Vec<FlowQueue>,
    new: VecDeque<u32>,
    old: VecDeque<u32>,
    quantum: i64,
    limit: Limit,
    memory_limit: u64,
    drop_batch: u32,
    perturbation: Option<u64>,
    /// Packets and bytes over every flow queue.
    pkts: u64,
    bytes: u64,
    /// The flow queue whose head a peek judged (its deficit charged already).
    judged: Option<u32>,
    /// Sojourn time of the last packet sent.
    pub sojourn: Option<Duration>,
    /// Times a flow queue joined the new list.
    pub new_flows: u64,
}

/// The SplitMix64 finalizer: every bit of the key moves every bit of the hash.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FqCodel {
    pub fn new(spec: &FqCodelSpec) -> Self {
        let queue = FlowQueue {
            fifo: DropTailQueue::unbounded(),
            codel: Codel::new(spec.codel()),
            deficit: 0,
            list: List::None,
        };
        FqCodel {
            queues: vec![queue; spec.flows as usize],
            new: VecDeque::with_capacity(spec.flows as usize),
            old: VecDeque::with_capacity(spec.flows as usize),
            quantum: spec.quantum.0 as i64,
            limit: spec.limit,
            memory_limit: spec.memory_limit.0,
            drop_batch: spec.drop_batch,
            perturbation: spec.perturbation,
            pkts: 0,
            bytes: 0,
            judged: None,
            sojourn: None,
            new_flows: 0,
        }
    }

    /// The flow queue of a packet of `flow` travelling in `direction` (section 4.1.1).
    pub fn queue_of(&self, flow: u32, direction: Direction, perturbation: u64) -> usize {
        let key = (u64::from(flow) << 1) | (direction == Direction::Reverse) as u64;
        ((u128::from(mix64(key ^ perturbation)) * self.queues.len() as u128) >> 64) as usize
    }

    pub fn len_packets(&self) -> u64 {
        self.pkts
    }
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// Flow queues on the new or old list.
    pub fn active_flows(&self) -> u32 {
        (self.new.len() + self.old.len()) as u32
    }

    /// Flow queues in CoDel's dropping state.
    pub fn dropping(&self) -> u32 {
        self.queues.iter().filter(|q| q.codel.vars.dropping).count() as u32
    }

    /// Times a flow queue's CoDel entered its dropping state.
    pub fn dropping_entries(&self) -> u64 {
        self.queues.iter().map(|q| q.codel.vars.entries).sum()
    }

    /// Packets the flow queues' CoDel marked CE instead of dropping.
    pub fn marks(&self) -> u64 {
        self.queues.iter().map(|q| q.codel.vars.marks).sum()
    }

    /// The CoDel state of flow queue `i` (for tests and inspection).
    pub fn codel_vars(&self, i: usize) -> &CodelVars {
        &self.queues[i].codel.vars
    }

    /// Section 4.1: the packet joins its flow queue (which joins the new list if it was
    /// on none); past the limits, the fattest queue loses a batch from its head.
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) {
        let rng = &mut *ctx.rng;
        let perturbation = *self.perturbation.get_or_insert_with(|| rng.random::<u64>());
        let p = &mut ctx.pkts[id];
        p.enqueued_at = ctx.now;
        let (size, i) = (p.size, self.queue_of(p.flow, p.direction, perturbation));
        let q = &mut self.queues[i];
        q.fifo.push(id, size);
        (self.pkts, self.bytes) = (self.pkts + 1, self.bytes + u64::from(size));
        if q.list == List::None {
            (q.list, q.deficit) = (List::New, self.quantum);
            self.new.push_back(i as u32);
            self.new_flows += 1;
        }
        let over = match self.limit {
            Limit::Packets(n) => self.pkts > n,
            Limit::Bytes(b) => self.bytes > b,
        };
        if over || self.bytes > self.memory_limit {
            self.drop_from_fattest(ctx);
        }
    }

    /// Drops from the head of the queue with the most bytes, up to `drop_batch` packets or
    /// until half its bytes are gone (Linux `fq_codel_drop`).
    fn drop_from_fattest(&mut self, ctx: &mut QueueCtx) {
        let (fattest, _) = self
            .queues
            .iter()
            .enumerate()
            .max_by_key(|(i, q)| (q.fifo.len_bytes(), std::cmp::Reverse(*i)))
            .expect("at least one queue");
        if self.judged == Some(fattest as u32) {
            self.judged = None;
        }
        let q = &mut self.queues[fattest];
        let half = q.fifo.len_bytes() / 2;
        let (mut dropped_bytes, mut n) = (0, 0);
        let pkts = &*ctx.pkts;
        while n < self.drop_batch && dropped_bytes < half {
            let Some(id) = q.fifo.pop(|id| pkts[id].size) else {
                break;
            };
            let size = u64::from(pkts[id].size);
            (dropped_bytes, n) = (dropped_bytes + size, n + 1);
            ctx.dropped.push((id, DropCause::Overflow));
        }
        self.pkts -= u64::from(n);
        self.bytes -= dropped_bytes;
    }

    /// Section 4.2: the next packet, from the first queue of the new list, else of the old
    /// list, that has a deficit left and a packet CoDel sends.
    pub fn dequeue(&mut self, ecn: bool, ctx: &mut QueueCtx) -> Option<PktId> {
        if let Some(i) = self.judged.take() {
            let pkts = &*ctx.pkts;
            let id = self.queues[i as usize].fifo.pop(|id| pkts[id].size)?;
            self.account_removed(1, u64::from(pkts[id].size));
            return Some(id);
        }
        loop {
            let (from_new, i) = match (self.new.front(), self.old.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            let q = &mut self.queues[i];
            if q.deficit <= 0 {
                // "the queue has used up its quantum": more credit, end of the old list.
                q.deficit += self.quantum;
                q.list = List::Old;
                self.pop_front(from_new);
                self.old.push_back(i as u32);
                continue;
            }
            let (pkts0, bytes0) = (q.fifo.len_packets() as u64, q.fifo.len_bytes());
            let got = q.codel.dequeue(&mut q.fifo, ecn, ctx);
            let removed = (pkts0 - q.fifo.len_packets() as u64, bytes0 - q.fifo.len_bytes());
            if let Some(id) = got {
                q.deficit -= i64::from(ctx.pkts[id].size);
                self.sojourn = q.codel.vars.sojourn;
                self.account_removed(removed.0, removed.1);
                return Some(id);
            }
            // Empty: a new queue goes to the old list if it is not empty, else it leaves.
            q.list = if from_new && !self.old.is_empty() {
                List::Old
            } else {
                List::None
            };
            self.account_removed(removed.0, removed.1);
            self.pop_front(from_new);
            if self.queues[i].list == List::Old {
                self.old.push_back(i as u32);
            }
        }
    }

    fn pop_front(&mut self, from_new: bool) {
        if from_new {
            self.new.pop_front()
        } else {
            self.old.pop_front()
        };
    }

    fn account_removed(&mut self, pkts: u64, bytes: u64) {
        self.pkts -= pkts;
        self.bytes -= bytes;
    }

    /// Judges the next packet ahead of its dequeue (for a DRR above, as CoDel's
    /// [`Codel::peek`]): its size, None if no packet is left to send.
    pub fn peek(&mut self, ecn: bool, ctx: &mut QueueCtx) -> Option<u32> {
        if let Some(i) = self.judged {
            return self.queues[i as usize].fifo.head().map(|id| ctx.pkts[id].size);
        }
        let id = self.dequeue(ecn, ctx)?;
        let size = ctx.pkts[id].size;
        // The queue it came from is the front of a list, or was just moved to the old one.
        let i = self.queue_of(
            ctx.pkts[id].flow,
            ctx.pkts[id].direction,
            self.perturbation.unwrap_or(0),
        );
        self.queues[i].fifo.push_front(id, size);
        (self.pkts, self.bytes) = (self.pkts + 1, self.bytes + u64::from(size));
        self.judged = Some(i as u32);
        Some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use crate::packet::{Packet, PacketArena};
    use crate::time::SimTime;

    fn spec(toml: &str) -> FqCodelSpec {
        toml::from_str(toml).unwrap()
    }

    struct Bench {
        fq: FqCodel,
        pkts: PacketArena,
        dropped: Vec<(PktId, DropCause)>,
    }

    impl Bench {
        fn new(extra: &str) -> Self {
            Bench {
                fq: FqCodel::new(&spec(&format!("perturbation = 7\n{extra}"))),
                pkts: PacketArena::with_capacity(64),
                dropped: Vec::new(),
            }
        }

        /// Runs `f` on the FQ-CoDel in a context at `now_us` microseconds.
        fn at<R>(&mut self, now_us: u64, f: impl FnOnce(&mut FqCodel, &mut QueueCtx) -> R) -> R {
            let mut rng = stream(1, "fq");
            let mut ctx = QueueCtx {
                now: SimTime(now_us * 1000),
                pkts: &mut self.pkts,
                rng: &mut rng,
                dropped: &mut self.dropped,
            };
            f(&mut self.fq, &mut ctx)
        }

        fn offer(&mut self, now_us: u64, flow: u32, size: u32) -> PktId {
            let id = self.pkts.alloc(Packet {
                flow,
                size,
                ..Default::default()
            });
            self.at(now_us, |fq, ctx| fq.enqueue(id, ctx));
            id
        }

        fn take(&mut self, now_us: u64) -> Option<u32> {
            let id = self.at(now_us, |fq, ctx| fq.dequeue(false, ctx))?;
            Some(self.pkts[id].flow)
        }
    }

    /// Flows 0..n that hash to distinct queues with perturbation 7 in `flows` queues.
    fn distinct_flows(fq: &FqCodel, n: usize) -> Vec<u32> {
        let mut seen = std::collections::HashSet::new();
        (0..1000u32)
            .filter(|&f| seen.insert(fq.queue_of(f, Direction::Forward, 7)))
            .take(n)
            .collect()
    }

    #[test]
    fn a_new_flow_goes_before_the_backlogged_ones() {
        // Flow a has 10 packets of 1000 B queued; served twice (deficit 1514 - 2000 =
        // -486). A packet of a new flow b arrives: a, out of deficit, goes to the old list
        // with 1028 B, and b, on the new list, is sent first; then a again.
        let mut b = Bench::new("");
        let f = distinct_flows(&b.fq, 2);
        for _ in 0..10 {
            b.offer(0, f[0], 1000);
        }
        assert_eq!(b.take(0), Some(f[0]));
        assert_eq!(b.take(0), Some(f[0])); // deficit 514 > 0: a second one
        b.offer(0, f[1], 200);
        // a's deficit is now -486: it moves to the old list; b, new, goes first.
        assert_eq!(b.take(0), Some(f[1]));
        assert_eq!(b.take(0), Some(f[0]));
        assert_eq!(b.fq.new_flows, 2);
    }

    #[test]
    fn byte_fair_round_robin_between_backlogged_flows() {
        // Three flows with 1500 B, 500 B and 100 B packets, always backlogged: over many
        // rounds each sends quantum (1514 B) per round, within one packet.
        let mut b = Bench::new("");
        let f = distinct_flows(&b.fq, 3);
        let sizes = [1500u32, 500, 100];
        for _ in 0..2000 {
            for (k, &s) in sizes.iter().enumerate() {
                b.offer(0, f[k], s);
            }
        }
        let mut bytes = [0u64; 3];
        // About 19 packets a round (1 + 3 + 15): 600 packets leave every flow backlogged.
        for _ in 0..600 {
            let flow = b.take(0).unwrap();
            let k = f.iter().position(|&x| x == flow).unwrap();
            bytes[k] += u64::from(sizes[k]);
        }
        let (lo, hi) = (bytes.iter().min().unwrap(), bytes.iter().max().unwrap());
        assert!(hi - lo <= 1514 + 1500, "{bytes:?}");
    }

    #[test]
    fn a_sparse_flow_keeps_its_delay_behind_a_fat_one() {
        // A fat flow sends 2 packets of 1000 B per ms into a link that sends one per ms
        // (a standing queue that grows); a sparse flow sends one 100 B packet every 20 ms
        // from 10 ms on (at 0 both are new, and the fat one came first).
        // Every sparse packet is sent at the next dequeue (its queue is new each time), so
        // its delay stays below 1 ms while the fat flow's grows to the point where CoDel
        // drops it.
        let mut b = Bench::new("");
        let f = distinct_flows(&b.fq, 2);
        let (fat, sparse) = (f[0], f[1]);
        let mut sparse_sent_at = Vec::new();
        let mut sparse_delay_max = 0;
        for t in 0..2000u64 {
            b.offer(t * 1000, fat, 1000);
            b.offer(t * 1000 + 1, fat, 1000);
            if t % 20 == 10 {
                b.offer(t * 1000 + 2, sparse, 100);
                sparse_sent_at.push(t * 1000 + 2);
            }
            if b.take(t * 1000 + 500) == Some(sparse) {
                let queued = sparse_sent_at.remove(0);
                sparse_delay_max = sparse_delay_max.max(t * 1000 + 500 - queued);
            }
        }
        assert!(sparse_sent_at.is_empty(), "{sparse_sent_at:?}");
        assert!(sparse_delay_max < 1000, "{sparse_delay_max} us");
        let fat_q = b.fq.queue_of(fat, Direction::Forward, 7);
        assert!(b.fq.codel_vars(fat_q).entries >= 1);
        assert!(
            b.dropped
                .iter()
                .all(|&(id, c)| b.pkts[id].flow == fat && c == DropCause::Early)
        );
    }

    #[test]
    fn overflow_drops_a_batch_from_the_head_of_the_fattest_queue() {
        // limit 20 packets: flow a holds 15 packets of 1000 B, flow b 5. The 21st packet
        // (b's) exceeds the limit: a (15000 B) loses packets from its head until half its
        // bytes (7500 B) are gone: 8 packets, and no more than drop_batch = 64.
        let mut b = Bench::new("limit = \"20p\"");
        let f = distinct_flows(&b.fq, 2);
        let first_a: Vec<PktId> = (0..15).map(|_| b.offer(0, f[0], 1000)).collect();
        for _ in 0..6 {
            b.offer(0, f[1], 1000);
        }
        let dropped: Vec<PktId> = b.dropped.iter().map(|d| d.0).collect();
        assert_eq!(dropped, first_a[..8]);
        assert!(b.dropped.iter().all(|d| d.1 == DropCause::Overflow));
        assert_eq!((b.fq.len_packets(), b.fq.len_bytes()), (13, 13_000));
        // drop_batch 3: only 3.
        let mut b = Bench::new("limit = \"20p\"\ndrop_batch = 3");
        for _ in 0..15 {
            b.offer(0, f[0], 1000);
        }
        for _ in 0..6 {
            b.offer(0, f[1], 1000);
        }
        assert_eq!(b.dropped.len(), 3);
    }

    #[test]
    fn hashing_spreads_flows_and_separates_directions() {
        let fq = FqCodel::new(&spec(""));
        let mut counts = vec![0u32; 1024];
        for f in 0..10_240 {
            counts[fq.queue_of(f, Direction::Forward, 12345)] += 1;
        }
        // 10 flows per queue on average: none empty-handed beyond chance, none above 30.
        assert!(counts.iter().all(|&c| c <= 30), "{:?}", counts.iter().max());
        let same =
            (0..1000).filter(|&f| fq.queue_of(f, Direction::Forward, 1) == fq.queue_of(f, Direction::Reverse, 1));
        assert!(same.count() < 10);
    }
}
