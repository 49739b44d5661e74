//! Active queue management: the admission decision of one FIFO queue.
//!
//! An [`AqmQueue`] is a [`DropTailQueue`] (the physical limit) plus an [`Aqm`] policy that
//! may refuse a packet earlier: none (drop-tail), [`red`] (Floyd and Jacobson) or [`mred`]
//! (multi-precedence RED, coupled = RIO or decoupled), or drop it later, at the head:
//! [`codel`] (RFC 8289); [`pie`] (RFC 8033) drops early on a probability it steers by the
//! queue delay; [`fq_codel`] (RFC 8290) hashes flows into queues of their own, each with
//! CoDel, served by a deficit round robin: it keeps its packets in those queues, not in the
//! FIFO (empty). It is a self-contained single-queue discipline: a FIFO port holds
//! one, a scheduler holds one per class.
//!
//! The queue owns its DSCP -> drop precedence map (`precedence_of`), which the port's
//! classifier applies, so `pkt.precedence` is set before `enqueue`. Algorithms return a
//! congestion verdict (none / early / forced); the queue decides: an early verdict drops
//! (`early`), or marks CE when ECN is on and the packet is ECN-capable; a forced verdict
//! drops (`forced`); a packet the AQM admits but the physical limit refuses is an
//! `overflow` drop. The port counts all three per (queue, precedence).

pub mod codel;
pub mod droptail;
pub mod fq_codel;
pub mod mred;
pub mod pie;
pub mod red;
pub mod series;

pub use codel::{Codel, CodelParams, CodelSpec};
pub use droptail::{DropTailQueue, DroptailSpec};
pub use fq_codel::{FqCodel, FqCodelSpec};
pub use mred::{Mred, MredMode, MredSpec, PrecedenceSpec};
pub use pie::{Pie, PieDelay, PieParams, PieSpec};
pub use red::{Congestion, RedAveraging, RedCurve, RedParams, RedSpec, RedVars};
pub use series::{QueueSeries, SeriesRow, StateRow, StateSeries};

use rand::RngExt;

/// Declares the table of a delay-based AQM (CoDel, PIE, FQ-CoDel): its own keys, then
/// `ecn` and `series`, written here once, and `with_keys`, which applies them to the
/// queue it builds.
#[macro_export]
macro_rules! delay_aqm_table {
    ($(#[$attr:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $(#[$attr])*
        pub struct $name {
            $($fields)*
            /// Mark ECN-capable packets CE instead of dropping them (RFC 3168; PIE: while
            /// its drop probability is at most mark_ecnth).
            #[serde(default, skip_serializing_if = "std::ops::Not::not")]
            pub ecn: bool,
            /// Record the control state this often (the `aqm_series` table: CoDel's
            /// dropping state and count, PIE's probability and delay, FQ-CoDel's flows).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[param(range = "(0, inf)")]
            pub series: Option<$crate::time::Duration>,
        }
        impl $name {
            /// `fifo` with `aqm`, and this table's `ecn` and `series`.
            fn with_keys(&self, fifo: $crate::aqm::DropTailQueue, aqm: $crate::aqm::Aqm) -> $crate::aqm::AqmQueue {
                let mut q = $crate::aqm::AqmQueue::new(fifo, aqm);
                q.ecn = self.ecn;
                q.state_series = self.series.map($crate::aqm::StateSeries::new);
                q
            }
        }
    };
}

use crate::discipline::{QueueCtx, Verdict};
use crate::packet::{Dscp, Ecn, PktId};
use crate::stats::DropCause;
use crate::time::{Limit, SimTime};

/// Single-precedence RED: one curve on the whole queue.
#[derive(Debug, Clone, PartialEq)]
pub struct Red {
    pub params: RedParams,
    pub vars: RedVars,
}

/// The early-drop policy of a queue.
// An explicit tag: every arrival and departure dispatches on it, and a tag hidden in a
// field of `Red` (the compiler's choice otherwise) takes five instructions to decode.
#[derive(Debug, Clone)]
#[repr(u8)]
pub enum Aqm {
    /// No early drop: only the physical limit refuses packets.
    DropTail,
    Red(Red),
    Mred(Mred),
    /// Drops at the head while the sojourn time stays above target (RFC 8289).
    Codel(Codel),
    /// Drops on arrival with a probability steered by the queue delay (RFC 8033).
    Pie(Box<Pie>),
    /// Flow queues with CoDel each, served by DRR (RFC 8290); the FIFO stays empty.
    FqCodel(Box<FqCodel>),
}

impl Aqm {
    pub fn precedences(&self) -> usize {
        match self {
            Aqm::DropTail | Aqm::Red(_) | Aqm::Codel(_) | Aqm::Pie(_) | Aqm::FqCodel(_) => 1,
            Aqm::Mred(m) => m.precedences(),
        }
    }

    /// The name of the mechanism, as `type` writes it.
    pub fn name(&self) -> &'static str {
        match self {
            Aqm::DropTail => "droptail",
            Aqm::Red(_) => "red",
            Aqm::Mred(_) => "mred",
            Aqm::Codel(_) => "codel",
            Aqm::Pie(_) => "pie",
            Aqm::FqCodel(_) => "fq_codel",
        }
    }

    /// What a CoDel, PIE or FQ-CoDel queue counted over the run (zero for the others).
    pub fn counters(&self) -> AqmCounters {
        match self {
            Aqm::DropTail | Aqm::Red(_) | Aqm::Mred(_) => AqmCounters::default(),
            Aqm::Codel(c) => AqmCounters {
                dropping_entries: c.vars.entries,
                dequeue_marks: c.vars.marks,
                ..AqmCounters::default()
            },
            Aqm::Pie(p) => AqmCounters {
                p_max: Some(p.vars.p_max),
                ..AqmCounters::default()
            },
            Aqm::FqCodel(f) => AqmCounters {
                dropping_entries: f.dropping_entries(),
                new_flows: f.new_flows,
                dequeue_marks: f.marks(),
                ..AqmCounters::default()
            },
        }
    }

    /// The control state of a CoDel, PIE or FQ-CoDel queue holding `fifo` at `now`
    /// (None for the others).
    pub fn state(&self, fifo: &DropTailQueue, now: SimTime) -> Option<StateRow> {
        match self {
            Aqm::DropTail | Aqm::Red(_) | Aqm::Mred(_) => None,
            Aqm::Codel(c) => Some(StateRow {
                t: now,
                len_pkts: fifo.len_packets() as u64,
                delay: c.vars.sojourn,
                dropping: Some(c.vars.dropping as u32),
                count: Some(c.vars.count),
                ..StateRow::default()
            }),
            Aqm::Pie(p) => Some(StateRow {
                t: now,
                len_pkts: fifo.len_packets() as u64,
                delay: Some(p.delay_estimate(fifo.len_bytes())),
                p: Some(p.vars.drop_prob),
                ..StateRow::default()
            }),
            Aqm::FqCodel(f) => Some(StateRow {
                t: now,
                len_pkts: f.len_packets(),
                delay: f.sojourn,
                dropping: Some(f.dropping()),
                flows: Some(f.active_flows()),
                ..StateRow::default()
            }),
        }
    }
}

/// What a CoDel, PIE or FQ-CoDel queue counts over a run (the `aqm` table).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AqmCounters {
    /// Times CoDel entered its dropping state (FQ-CoDel: over all its flow queues).
    pub dropping_entries: u64,
    /// PIE's highest drop probability.
    pub p_max: Option<f64>,
    /// FQ-CoDel: times a flow queue joined the new list.
    pub new_flows: u64,
    /// CoDel, FQ-CoDel: packets marked CE at dequeue (not in the port's `marks_pkts`).
    pub dequeue_marks: u64,
}

/// One FIFO queue with its physical limit, its AQM policy and its DSCP -> precedence map.
#[derive(Debug, Clone)]
pub struct AqmQueue {
    pub fifo: DropTailQueue,
    pub aqm: Aqm,
    /// Drop precedence of each codepoint (0 for every codepoint unless the AQM says).
    pub precedence_map: [u8; 64],
    /// Mark ECN-capable packets CE on an early verdict instead of dropping them.
    pub ecn: bool,
    /// Optional time series of the average and instantaneous queue (RED, MRED).
    pub series: Option<QueueSeries>,
    /// Optional time series of the control state (CoDel, PIE, FQ-CoDel).
    pub state_series: Option<StateSeries>,
}

impl AqmQueue {
    pub fn drop_tail(limit: Limit) -> Self {
        AqmQueue::new(DropTailQueue::new(limit), Aqm::DropTail)
    }

    pub fn new(fifo: DropTailQueue, aqm: Aqm) -> Self {
        AqmQueue {
            fifo,
            aqm,
            precedence_map: [0; 64],
            ecn: false,
            series: None,
            state_series: None,
        }
    }

    /// Number of drop precedences (rows of the per-queue statistics).
    pub fn precedences(&self) -> usize {
        self.aqm.precedences()
    }

    #[inline]
    /// The RED average that judges packets of `precedence`, and its unit (that of the
    /// thresholds: "pkts" or "bytes"); None for drop-tail. MRED: VQ_precedence's.
    pub fn red_average(&self, precedence: u8) -> Option<(f64, &'static str)> {
        match &self.aqm {
            Aqm::DropTail | Aqm::Codel(_) | Aqm::Pie(_) | Aqm::FqCodel(_) => None,
            Aqm::Red(r) => Some((r.vars.avg, unit_of(r.params.bytes))),
            Aqm::Mred(m) => m
                .vqs
                .get(precedence as usize)
                .map(|vq| (vq.vars.avg, unit_of(vq.curve.bytes))),
        }
    }

    pub fn precedence_of(&self, dscp: Dscp) -> u8 {
        self.precedence_map[dscp.0 as usize & 63]
    }

    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        let p = &ctx.pkts[id];
        let pkt = Arriving {
            size: p.size,
            precedence: p.precedence as usize,
            ecn_capable: p.ecn != Ecn::NotEct,
        };
        let (size, j) = (pkt.size, pkt.precedence);
        let now = ctx.now;
        let AqmQueue {
            fifo,
            aqm,
            ecn,
            series,
            state_series,
            ..
        } = self;
        // One dispatch on the policy: its verdict, the series' sample, the queue's decision,
        // the policy's bookkeeping of an admitted packet.
        match aqm {
            Aqm::DropTail => {
                if let Some(s) = series {
                    s.due(now);
                }
                admit(fifo, *ecn, id, pkt, Congestion::None, ctx)
            }
            Aqm::Red(r) => {
                let q = if r.params.bytes {
                    count_as_f64(fifo.len_bytes())
                } else {
                    count_as_f64(fifo.len_packets() as u64)
                };
                r.params.update_average(&mut r.vars, q, now);
                let rng = &mut *ctx.rng;
                let congestion = r.params.decide(&mut r.vars, size, || rng.random::<f64>());
                if let Some(s) = series {
                    record_red(s, r, fifo, now);
                }
                let verdict = admit(fifo, *ecn, id, pkt, congestion, ctx);
                if verdict == Verdict::Admit {
                    r.vars.idle_since = None;
                }
                verdict
            }
            Aqm::Mred(m) => {
                let rng = &mut *ctx.rng;
                let congestion = m.on_arrival(j, size, now, || rng.random::<f64>());
                if let Some(s) = series {
                    record_mred(s, m, now);
                }
                let verdict = admit(fifo, *ecn, id, pkt, congestion, ctx);
                if verdict == Verdict::Admit {
                    m.on_enqueue(j, size);
                }
                verdict
            }
            Aqm::Codel(_) => {
                stamp(id, ctx);
                let verdict = admit(fifo, *ecn, id, pkt, Congestion::None, ctx);
                record_state(state_series, aqm, fifo, now);
                verdict
            }
            Aqm::Pie(p) => {
                stamp(id, ctx);
                let congestion = p.enqueue_verdict(fifo, ctx);
                let mark = *ecn && p.may_mark();
                let verdict = admit(fifo, mark, id, pkt, congestion, ctx);
                record_state(state_series, aqm, fifo, now);
                verdict
            }
            Aqm::FqCodel(f) => {
                f.enqueue(id, ctx);
                record_state(state_series, aqm, fifo, now);
                Verdict::Admit
            }
        }
    }

    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        let (fifo, now) = (&mut self.fifo, ctx.now);
        if let Some(next) = fifo.second() {
            // Queued a queueing delay ago, out of cache in a long queue; read at the next
            // dequeue, one transmission from now.
            ctx.pkts.prefetch(next);
        }
        match &mut self.aqm {
            Aqm::DropTail => {
                let pkts = &*ctx.pkts;
                fifo.pop(|id| pkts[id].size)
            }
            Aqm::Red(r) => {
                let pkts = &*ctx.pkts;
                let id = fifo.pop(|id| pkts[id].size)?;
                if fifo.is_empty() {
                    r.vars.idle_since = Some(now);
                }
                Some(id)
            }
            Aqm::Mred(m) => {
                let pkts = &*ctx.pkts;
                let id = fifo.pop(|id| pkts[id].size)?;
                let p = &pkts[id];
                m.on_dequeue(p.precedence as usize, p.size, now);
                Some(id)
            }
            Aqm::Codel(c) => {
                let got = c.dequeue(fifo, self.ecn, ctx);
                record_state(&mut self.state_series, &self.aqm, fifo, now);
                got
            }
            Aqm::Pie(p) => {
                let bytes = fifo.len_bytes();
                p.catch_up(now, bytes);
                let pkts = &*ctx.pkts;
                let id = fifo.pop(|id| pkts[id].size)?;
                p.on_departure(now, pkts[id].size, now - pkts[id].enqueued_at, bytes);
                record_state(&mut self.state_series, &self.aqm, fifo, now);
                Some(id)
            }
            Aqm::FqCodel(f) => {
                let got = f.dequeue(self.ecn, ctx);
                record_state(&mut self.state_series, &self.aqm, fifo, now);
                got
            }
        }
    }

    /// The size of the packet the next dequeue returns, None if it returns none: for a
    /// scheduler that must know it beforehand (DRR). An AQM that drops at dequeue (CoDel)
    /// judges the head now and keeps it for that dequeue.
    #[inline]
    pub fn peek_size(&mut self, ctx: &mut QueueCtx) -> Option<u32> {
        match &mut self.aqm {
            Aqm::Codel(c) => {
                let size = c.peek(&mut self.fifo, self.ecn, ctx);
                record_state(&mut self.state_series, &self.aqm, &self.fifo, ctx.now);
                size
            }
            Aqm::FqCodel(f) => {
                let size = f.peek(self.ecn, ctx);
                record_state(&mut self.state_series, &self.aqm, &self.fifo, ctx.now);
                size
            }
            Aqm::DropTail | Aqm::Red(_) | Aqm::Mred(_) | Aqm::Pie(_) => self.fifo.head().map(|id| ctx.pkts[id].size),
        }
    }

    /// Packets queued (FQ-CoDel's in its flow queues).
    #[inline]
    pub fn len_packets(&self) -> usize {
        match &self.aqm {
            Aqm::FqCodel(f) => f.len_packets() as usize,
            _ => self.fifo.len_packets(),
        }
    }

    /// Bytes queued.
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        match &self.aqm {
            Aqm::FqCodel(f) => f.len_bytes(),
            _ => self.fifo.len_bytes(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }

    /// The control state now (CoDel, PIE, FQ-CoDel; None for the others).
    pub fn state(&self, now: SimTime) -> Option<StateRow> {
        self.aqm.state(&self.fifo, now)
    }
}

/// A packet joins a queue that judges it by its queueing delay (CoDel, PIE): it carries
/// the instant (RFC 8289 section 5.1, "timestamp each packet at enqueue").
#[inline]
fn stamp(id: PktId, ctx: &mut QueueCtx) {
    ctx.pkts[id].enqueued_at = ctx.now;
}

/// Samples the control state of `aqm` into `series` if one is due.
#[inline]
fn record_state(series: &mut Option<StateSeries>, aqm: &Aqm, fifo: &DropTailQueue, now: SimTime) {
    if let Some(s) = series {
        if s.due(now) {
            s.push(
                aqm.state(fifo, now)
                    .expect("a state series belongs to an AQM with a state"),
            );
        }
    }
}

/// A count of packets or bytes as f64: the value `n as f64` gives for every count below
/// 2^63 (no queue holds more), converted as a signed integer, which x86-64 does in one
/// instruction where the unsigned conversion takes five.
#[inline]
pub(crate) fn count_as_f64(n: u64) -> f64 {
    debug_assert!(n < 1 << 63, "a queue of 2^63 packets or bytes");
    n as i64 as f64
}

/// The queue's decision on an arriving packet given the policy's `congestion` verdict: an
/// early verdict drops it, or marks it CE with `ecn` on and an ECN-capable packet; a
/// forced verdict drops it; else it joins `fifo` if the physical limit takes it. An
/// ECN-capable packet above `fifo`'s marking threshold is marked (DCTCP's step marking)
/// and not dropped early.
#[inline]
fn admit(
    fifo: &mut DropTailQueue,
    ecn: bool,
    id: PktId,
    pkt: Arriving,
    congestion: Congestion,
    ctx: &mut QueueCtx,
) -> Verdict {
    let step = pkt.ecn_capable && fifo.marks_arrival();
    let mark = match congestion {
        Congestion::None => step,
        Congestion::Early if step || (ecn && pkt.ecn_capable) => true,
        Congestion::Early => return Verdict::Drop(DropCause::Early),
        Congestion::Forced => return Verdict::Drop(DropCause::Forced),
    };
    if !fifo.fits(pkt.size) {
        return Verdict::Drop(DropCause::Overflow);
    }
    if mark {
        ctx.pkts[id].ecn = Ecn::Ce;
    }
    fifo.push(id, pkt.size);
    Verdict::Admit
}

/// What the queue reads of an arriving packet, read once.
#[derive(Copy, Clone)]
struct Arriving {
    size: u32,
    precedence: usize,
    ecn_capable: bool,
}

/// RED's sample: the average just updated and the occupancy behind it.
fn record_red(s: &mut QueueSeries, r: &Red, fifo: &DropTailQueue, now: SimTime) {
    if !s.due(now) {
        return;
    }
    let len = if r.params.bytes {
        fifo.len_bytes() as f64
    } else {
        fifo.len_packets() as f64
    };
    s.push(SeriesRow {
        t: now,
        precedence: 0,
        avg: r.vars.avg,
        len,
    });
}

/// The unit of a RED curve's thresholds and average.
pub fn unit_of(bytes: bool) -> &'static str {
    if bytes { "bytes" } else { "pkts" }
}

/// MRED's sample: one row per precedence, the average just updated and the occupancy
/// behind it.
fn record_mred(s: &mut QueueSeries, m: &Mred, now: SimTime) {
    if !s.due(now) {
        return;
    }
    for (k, vq) in m.vqs.iter().enumerate() {
        s.push(SeriesRow {
            t: now,
            precedence: k as u8,
            avg: vq.vars.avg,
            len: vq.occupancy(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use crate::packet::{Packet, PacketArena};

    /// RED 1/3 packets, max_p 1, with the average at 2 and count high enough that
    /// count * pb >= 1: the next arrival certainly gets an early verdict.
    fn red_queue(ecn: bool, avg: f64) -> AqmQueue {
        let params = red::test_curve(1.0, 3.0, 1.0, 0.002);
        let vars = RedVars {
            avg,
            count: 100,
            idle_since: None,
        };
        let mut q = AqmQueue::new(DropTailQueue::new(Limit::Packets(10)), Aqm::Red(Red { params, vars }));
        q.ecn = ecn;
        q
    }

    fn offer(q: &mut AqmQueue, ecn: Ecn) -> (Verdict, Ecn) {
        offer_all(q, &[ecn])[0]
    }

    /// Offers 500-byte packets with these codepoints one after the other: each one's
    /// verdict and codepoint after it.
    fn offer_all(q: &mut AqmQueue, ecns: &[Ecn]) -> Vec<(Verdict, Ecn)> {
        let mut pkts = PacketArena::default();
        let ids: Vec<PktId> = ecns
            .iter()
            .map(|&ecn| {
                pkts.alloc(Packet {
                    size: 500,
                    ecn,
                    ..Default::default()
                })
            })
            .collect();
        let mut rng = stream(1, "q");
        let mut dropped = Vec::new();
        let mut ctx = QueueCtx {
            now: SimTime(0),
            pkts: &mut pkts,
            rng: &mut rng,
            dropped: &mut dropped,
        };
        let verdicts: Vec<Verdict> = ids.iter().map(|&id| q.enqueue(id, &mut ctx)).collect();
        ids.iter().zip(verdicts).map(|(&id, v)| (v, pkts[id].ecn)).collect()
    }

    #[test]
    fn step_marking_marks_what_finds_more_than_k_queued() {
        // RFC 8257 3.1, K = 2 packets in a 5-packet drop-tail queue: arrivals 1-3 find 0,
        // 1, 2 queued and keep their codepoint; the 4th and 5th find 3 and 4 (more than K)
        // and are marked if ECN-capable (the Not-ECT one is admitted unmarked); the 6th
        // finds the queue full.
        let spec = DroptailSpec {
            limit: Limit::Packets(5),
            overshoot: false,
            mark_threshold: Some(Limit::Packets(2)),
        };
        let mut q = spec.queue(&crate::params::KeyPath::root()).unwrap();
        let (ect, not) = (Ecn::Ect0, Ecn::NotEct);
        let got = offer_all(&mut q, &[ect, ect, ect, ect, not, Ecn::Ect1]);
        let admit = Verdict::Admit;
        assert_eq!(
            got,
            [
                (admit, ect),
                (admit, ect),
                (admit, ect),
                (admit, Ecn::Ce),
                (admit, not),
                (Verdict::Drop(DropCause::Overflow), Ecn::Ect1)
            ]
        );
        // RED (ECN off) with an early verdict certain, one packet queued and K = 0: an
        // ECN-capable arrival is marked and not dropped early; a Not-ECT one is dropped.
        let red_with_one_queued = || {
            let mut q = red_queue(false, 2.0);
            q.fifo = DropTailQueue::new(Limit::Packets(10)).with_mark_threshold(Some(Limit::Packets(0)));
            q.fifo.push(PktId(99), 500);
            q
        };
        assert_eq!(offer(&mut red_with_one_queued(), ect), (admit, Ecn::Ce));
        assert_eq!(
            offer(&mut red_with_one_queued(), not),
            (Verdict::Drop(DropCause::Early), not)
        );
    }

    #[test]
    fn ecn_marks_capable_packets_instead_of_dropping_early() {
        assert_eq!(offer(&mut red_queue(true, 2.0), Ecn::Ect0), (Verdict::Admit, Ecn::Ce));
        assert_eq!(offer(&mut red_queue(true, 2.0), Ecn::Ce), (Verdict::Admit, Ecn::Ce));
        assert_eq!(
            offer(&mut red_queue(true, 2.0), Ecn::NotEct),
            (Verdict::Drop(DropCause::Early), Ecn::NotEct)
        );
        assert_eq!(
            offer(&mut red_queue(false, 2.0), Ecn::Ect0),
            (Verdict::Drop(DropCause::Early), Ecn::Ect0)
        );
        // Forced verdicts drop even ECN-capable packets (as ns-2 does).
        assert_eq!(
            offer(&mut red_queue(true, 10.0), Ecn::Ect0),
            (Verdict::Drop(DropCause::Forced), Ecn::Ect0)
        );
    }

    #[test]
    fn mred_queue_classifies_and_tracks_occupancy() {
        // Precedence map: AF11 -> 0, every other codepoint -> 1 (the last).
        let curve = red::test_curve(50.0, 90.0, 0.1, 0.002);
        let mut q = AqmQueue::new(
            DropTailQueue::new(Limit::Packets(100)),
            Aqm::Mred(Mred::new(MredMode::Coupled, vec![curve.clone(), curve])),
        );
        q.precedence_map = [1; 64];
        q.precedence_map[Dscp::af(1, 1).0 as usize] = 0;
        assert_eq!(q.precedence_of(Dscp::af(1, 1)), 0);
        assert_eq!(q.precedence_of(Dscp::BE), 1);
        let mut pkts = PacketArena::default();
        let mut rng = stream(1, "q");
        let mut dropped = Vec::new();
        let ids: Vec<PktId> = [0u8, 1, 1]
            .iter()
            .map(|&p| {
                pkts.alloc(Packet {
                    size: 100,
                    precedence: p,
                    ..Default::default()
                })
            })
            .collect();
        let mut ctx = QueueCtx {
            now: SimTime(0),
            pkts: &mut pkts,
            rng: &mut rng,
            dropped: &mut dropped,
        };
        for &id in &ids {
            assert_eq!(q.enqueue(id, &mut ctx), Verdict::Admit);
        }
        let Aqm::Mred(m) = &q.aqm else { unreachable!() };
        assert_eq!((m.vq_len(0), m.vq_len(1)), (1.0, 3.0));
        assert_eq!(q.dequeue(&mut ctx), Some(ids[0]));
        let Aqm::Mred(m) = &q.aqm else { unreachable!() };
        assert_eq!((m.vq_len(0), m.vq_len(1)), (0.0, 2.0));
        assert_eq!(m.vqs[0].vars.idle_since, Some(SimTime(0)));
        assert_eq!(m.vqs[1].vars.idle_since, None);
    }
}
