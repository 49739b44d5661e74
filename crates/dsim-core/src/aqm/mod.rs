//! Active queue management: the admission decision of one FIFO queue.
//!
//! An [`AqmQueue`] is a [`DropTailQueue`] (the physical limit) plus an [`Aqm`] policy that
//! may refuse a packet earlier: none (drop-tail), [`red`] (Floyd and Jacobson) or [`mred`]
//! (multi-precedence RED, coupled = RIO or decoupled). It is a self-contained single-queue
//! discipline: a FIFO port holds one, a scheduler holds one per class.
//!
//! The queue owns its DSCP -> drop precedence map (`precedence_of`), which the port's
//! classifier applies, so `pkt.precedence` is set before `enqueue`. Algorithms return a
//! congestion verdict (none / early / forced); the queue decides: an early verdict drops
//! (`early`), or marks CE when ECN is on and the packet is ECN-capable; a forced verdict
//! drops (`forced`); a packet the AQM admits but the physical limit refuses is an
//! `overflow` drop. The port counts all three per (queue, precedence).

pub mod droptail;
pub mod mred;
pub mod red;
pub mod series;

pub use droptail::{DropTailQueue, DroptailSpec};
pub use mred::{Mred, MredMode, MredSpec, PrecedenceSpec};
pub use red::{Congestion, RedAveraging, RedCurve, RedParams, RedSpec, RedVars};
pub use series::{QueueSeries, SeriesRow};

use rand::RngExt;

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
}

impl Aqm {
    pub fn precedences(&self) -> usize {
        match self {
            Aqm::DropTail | Aqm::Red(_) => 1,
            Aqm::Mred(m) => m.precedences(),
        }
    }
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
    /// Optional time series of the average and instantaneous queue.
    pub series: Option<QueueSeries>,
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
            Aqm::DropTail => None,
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
            fifo, aqm, ecn, series, ..
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
        }
    }

    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        let pkts = &*ctx.pkts;
        let id = self.fifo.pop(|id| pkts[id].size)?;
        match &mut self.aqm {
            Aqm::DropTail => {}
            Aqm::Red(r) => {
                if self.fifo.is_empty() {
                    r.vars.idle_since = Some(ctx.now);
                }
            }
            Aqm::Mred(m) => {
                let p = &pkts[id];
                m.on_dequeue(p.precedence as usize, p.size, ctx.now);
            }
        }
        Some(id)
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
/// forced verdict drops it; else it joins `fifo` if the physical limit takes it.
#[inline]
fn admit(
    fifo: &mut DropTailQueue,
    ecn: bool,
    id: PktId,
    pkt: Arriving,
    congestion: Congestion,
    ctx: &mut QueueCtx,
) -> Verdict {
    let mark = match congestion {
        Congestion::None => false,
        Congestion::Early if ecn && pkt.ecn_capable => true,
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
        let mut pkts = PacketArena::default();
        let id = pkts.alloc(Packet {
            size: 500,
            ecn,
            ..Default::default()
        });
        let mut rng = stream(1, "q");
        let mut dropped = Vec::new();
        let mut ctx = QueueCtx {
            now: SimTime(0),
            pkts: &mut pkts,
            rng: &mut rng,
            dropped: &mut dropped,
        };
        let v = q.enqueue(id, &mut ctx);
        (v, pkts[id].ecn)
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
