//! MRED: multi-precedence RED in one FIFO queue, coupled (RIO) or decoupled.
//!
//! Sources:
//! - draft-ibanez-diffserv-assured-eval-00 (seed 002) section 2.1.1, RIO: "For OUT
//!   packets ... the average queue size is based on the total number of packets in the
//!   queue, regardless of their marking. For IN packets, the average queue size is based on
//!   the number of IN packets present in the queue". Clark and Fang's RIO computes avg_in
//!   on each IN arrival and avg_total on every arrival.
//! - draft-nsbnpp-diffserv-udptcpaf-01 (seed 001) section 2, coupled MRED: "The
//!   possibility of dropping DP0 packets is dependent on the buffer occupancy of DP0
//!   packets. The possibility of dropping DP1 packets is dependent on the buffer occupancy
//!   of DP0 and DP1 packets. The possibility of dropping DP2 packets is dependent on the
//!   buffer occupancy of DP0, DP1 and DP2 packets"; section 5, decoupled: "the drop
//!   decision for packets of each drop precedence marking were dependent only on the buffer
//!   occupancy of packets with their own marking".
//! - RFC 2963 (seed 004) appendix A.1: RIO "extended to support three drop priorities".
//!
//! Model: precedences 0 .. n-1 (0 = DP0, the lowest drop precedence; RIO: 0 = IN,
//! 1 = OUT). Each precedence k has a RED curve (min_th, max_th, max_p; wq, gentle and the
//! unit are common) and a *virtual queue* VQ_k with its own average, count and idle time,
//! all handled by the functions of [`super::red`], as Linux GRED reuses `red.h` per
//! virtual queue:
//! - coupled: VQ_k holds the packets of precedences 0..=k; an arrival of precedence j
//!   updates the averages of every VQ_k with k >= j (it is one of their packets). For n = 2
//!   this is RIO exactly: an IN arrival updates avg_in and avg_total, an OUT arrival
//!   avg_total only.
//! - decoupled: VQ_k holds precedence k only; only avg_j changes on a j arrival.
//!
//! The arriving packet of precedence j is judged on VQ_j's average with curve j. VQ_k
//! becomes idle when a dequeue leaves it empty ([`super::red`] for the idle rule).
//! (Linux GRED's RIO mode instead adds the *averages* of the higher-priority VQs; dsim
//! follows the documents: the average of the combined occupancy.) The physical queue
//! limit is the FIFO's; its overflow is counted apart from early and forced drops, per
//! precedence, by the port.

use serde::{Deserialize, Serialize};

use super::red::{Congestion, CountOverflow, RedParams, RedVars};
use super::{Aqm, AqmQueue, DropTailQueue, QueueSeries, count_as_f64, unit_of};
use crate::packet::Dscp;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Duration, Limit, Rate, SimTime};

/// Which packets a precedence's virtual queue holds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum MredMode {
    /// VQ_k holds precedences 0..=k (RIO with two precedences; seed 001 section 2).
    #[default]
    Coupled,
    /// VQ_k holds precedence k only (seed 001 section 5).
    Decoupled,
}

crate::red_table! {
    [averaging]
    /// `type = "mred"`: one FIFO queue with multi-precedence RED, coupled (RIO) or
    /// decoupled.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    #[param(document = "draft-ibanez-diffserv-assured-eval-00 2.1.1 (RIO); draft-nsbnpp-diffserv-udptcpaf-01 2, 5")]
    pub struct MredSpec {
        /// Physical limit: packets ("100p") or bytes ("64KB"); shared by every precedence.
        #[param(range = "(0, inf)")]
        pub limit: Limit,
        /// coupled: a precedence's average counts the packets of every lower precedence
        /// too (RIO); decoupled: its own packets only.
        #[serde(default)]
        pub mode: MredMode,
        /// Mark ECN-capable packets CE on an early verdict instead of dropping them.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub ecn: bool,
        /// Once a precedence's count x pb reaches 1: "drop" (pa = 1, RED's uniform spacing of
        /// marks; ns-2 Queue/RED, Linux; the default) or "pass" (pa = pb / (1 - count pb)
        /// unbounded, as ns-2.35's dsRED computes it: past 1 no early drop until the average
        /// leaves [min_th, max_th]; for comparisons with ns-2's RIO-C, docs/af.md).
        #[serde(default)]
        pub count_overflow: CountOverflow,
        /// Record every precedence's average and occupancy this often (`queue_series`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "(0, inf)")]
        pub series: Option<Duration>,
        /// The drop precedences, lowest first (DP0, or IN for RIO); codepoints no
        /// precedence lists go to the last one.
        #[param(nonempty)]
        pub precedence: Vec<PrecedenceSpec>,
    }
}

crate::red_table! {
    [curve]
    /// One drop precedence of an MRED queue: its codepoints and its RED curve.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    pub struct PrecedenceSpec {
        /// Codepoints of this precedence.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub dscp: Vec<Dscp>,
    }
}

/// At most one precedence per codepoint.
const MAX_PRECEDENCES: usize = 64;

impl MredSpec {
    /// The FIFO with multi-precedence RED this table declares, at a port of `rate`.
    pub fn queue(&self, rate: Rate, path: &KeyPath) -> Result<AqmQueue, ConfigError> {
        self.check(path)?;
        let n = self.precedence.len();
        if n > MAX_PRECEDENCES {
            return Err(ConfigError::new(
                path.key("precedence"),
                Some(n.to_string()),
                "at most 64 precedences (one per codepoint)",
            ));
        }
        let mut curves: Vec<RedParams> = Vec::with_capacity(n);
        let mut map = [(n - 1) as u8; 64];
        let mut owner: [Option<usize>; 64] = [None; 64];
        for (k, p) in self.precedence.iter().enumerate() {
            let pp = path.key("precedence").index(k);
            let mut curve = RedParams::new(p.curve(), self.averaging(), Some(self.limit), rate, &pp)?;
            curve.count_overflow = self.count_overflow;
            if curves.first().is_some_and(|c| c.bytes != curve.bytes) {
                return Err(ConfigError::new(
                    pp.key("min_th"),
                    Some(format!("\"{}\"", p.min_th)),
                    "every precedence must use the same unit for its thresholds (packets or bytes): the virtual queues add up",
                ));
            }
            curves.push(curve);
            for (i, d) in p.dscp.iter().enumerate() {
                if let Some(j) = owner[d.0 as usize] {
                    return Err(ConfigError::new(
                        pp.key("dscp").index(i),
                        Some(format!("\"{d}\"")),
                        format!("this codepoint already belongs to precedence[{j}]"),
                    ));
                }
                owner[d.0 as usize] = Some(k);
                map[d.0 as usize] = k as u8;
            }
        }
        let unit = unit_of(curves[0].bytes);
        let mut q = AqmQueue::new(DropTailQueue::new(self.limit), Aqm::Mred(Mred::new(self.mode, curves)));
        q.precedence_map = map;
        q.ecn = self.ecn;
        q.series = self.series.map(|i| QueueSeries::with_unit(i, unit));
        Ok(q)
    }
}

/// One virtual queue: its RED curve, its average, count and idle time, and its
/// occupancy, kept together since an arrival or a departure reads and writes them all.
#[derive(Clone, Debug, PartialEq)]
pub struct VirtualQueue {
    pub curve: RedParams,
    pub vars: RedVars,
    /// Occupancy (packets, bytes), kept as packets come and go so that reading it does
    /// not sum the precedences it holds.
    pkts: u64,
    bytes: u64,
}

impl VirtualQueue {
    /// Occupancy, in the unit of the curve's thresholds.
    #[inline]
    pub fn occupancy(&self) -> f64 {
        count_as_f64(if self.curve.bytes { self.bytes } else { self.pkts })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Mred {
    pub mode: MredMode,
    /// VQ_0 .. VQ_{n-1}: VQ_k judges the packets of precedence k with curve k.
    pub vqs: Vec<VirtualQueue>,
}

impl Mred {
    pub fn new(mode: MredMode, curves: Vec<RedParams>) -> Self {
        let vqs = curves
            .into_iter()
            .map(|curve| VirtualQueue {
                curve,
                vars: RedVars::default(),
                pkts: 0,
                bytes: 0,
            })
            .collect();
        Mred { mode, vqs }
    }

    pub fn precedences(&self) -> usize {
        self.vqs.len()
    }

    /// The virtual queues whose occupancy includes precedence `j`; VQ_j is the first.
    #[inline]
    fn containing(&mut self, j: usize) -> &mut [VirtualQueue] {
        match self.mode {
            MredMode::Coupled => &mut self.vqs[j..],
            MredMode::Decoupled => std::slice::from_mut(&mut self.vqs[j]),
        }
    }

    /// Occupancy of VQ_k, in the unit of its thresholds.
    #[inline]
    pub fn vq_len(&self, k: usize) -> f64 {
        self.vqs[k].occupancy()
    }

    /// A packet of precedence `j` and `size` bytes arrives at `now`: update the averages
    /// of the VQs it belongs to and judge it on VQ_j.
    #[inline]
    pub fn on_arrival(&mut self, j: usize, size: u32, now: SimTime, uniform: impl FnOnce() -> f64) -> Congestion {
        let vqs = self.containing(j);
        for vq in vqs.iter_mut() {
            let q = vq.occupancy();
            vq.curve.update_average(&mut vq.vars, q, now);
        }
        let vq_j = &mut vqs[0];
        vq_j.curve.decide(&mut vq_j.vars, size, uniform)
    }

    /// The packet was admitted to the queue.
    #[inline]
    pub fn on_enqueue(&mut self, j: usize, size: u32) {
        for vq in self.containing(j) {
            vq.pkts += 1;
            vq.bytes += size as u64;
            vq.vars.idle_since = None;
        }
    }

    /// A packet of precedence `j` left the queue at `now`.
    #[inline]
    pub fn on_dequeue(&mut self, j: usize, size: u32, now: SimTime) {
        for vq in self.containing(j) {
            vq.pkts -= 1;
            vq.bytes -= size as u64;
            if vq.occupancy() == 0.0 {
                // "when the queue becomes empty: q_time = time"
                vq.vars.idle_since = Some(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::red::test_curve as curve;

    #[test]
    fn rio_averages_in_over_in_and_out_over_all() {
        // wq = 0.5, arrivals at t = 0 (queue idle since 0: m = 0, no decay), none leaves:
        //                 coupled (RIO)                 decoupled
        // 1 IN : avg0 = 0, avg1 = 0 (idle, m=0)       avg0 = 0
        // 2 OUT: avg1 = 0.5*0 + 0.5*1 = 0.5          avg1 = 0 (VQ1 idle, m=0)
        // 3 OUT: avg1 = 0.25 + 0.5*2 = 1.25          avg1 = 0.5*0 + 0.5*1 = 0.5
        // 4 IN : avg0 = 0.5*1 = 0.5                  avg0 = 0.5*1 = 0.5
        //        avg1 = 0.625 + 0.5*3 = 2.125        avg1 = 0.5 (an IN is not in VQ1)
        let curves = || vec![curve(5.0, 10.0, 0.02, 0.5), curve(4.0, 10.0, 0.05, 0.5)];
        for (mode, want) in [(MredMode::Coupled, [0.5, 2.125]), (MredMode::Decoupled, [0.5, 0.5])] {
            let mut m = Mred::new(mode, curves());
            for j in [0, 1, 1, 0] {
                let c = m.on_arrival(j, 500, SimTime::ZERO, || 0.5);
                assert_eq!(c, Congestion::None);
                m.on_enqueue(j, 500);
            }
            assert_eq!([m.vqs[0].vars.avg, m.vqs[1].vars.avg], want, "{mode:?}");
        }
    }

    #[test]
    fn count_overflow_reaches_every_precedence() {
        let spec = |extra: &str| -> MredSpec {
            toml::from_str(&format!(
                r#"limit = "100p"
{extra}
precedence = [{{ dscp = ["AF11"], min_th = "40p", max_th = "70p" }}, {{ min_th = "10p", max_th = "30p" }}]"#
            ))
            .unwrap()
        };
        for (extra, want) in [
            ("", CountOverflow::Drop),
            (r#"count_overflow = "pass""#, CountOverflow::Pass),
        ] {
            let q = spec(extra).queue(Rate(10_000_000), &KeyPath::root()).unwrap();
            let Aqm::Mred(m) = &q.aqm else { unreachable!() };
            assert!(m.vqs.iter().all(|vq| vq.curve.count_overflow == want), "{extra}");
        }
    }

    #[test]
    fn coupled_and_decoupled_on_a_constructed_queue() {
        // Seed 001 non-overlap model: DP0 40/55/0.02, DP1 25/40/0.05, DP2 10/25/0.1 (the
        // 0.01 of Table 2 read as 0.1). Queue: 10 DP0, 5 DP1, 20 DP2 packets, long enough
        // that each average equals its virtual queue:
        //   coupled   VQ0 = 10, VQ1 = 15, VQ2 = 35
        //   decoupled VQ0 = 10, VQ1 = 5,  VQ2 = 20
        // A DP2 arrival (wq = 0.002 moves the average by 0.002 (q - avg) = 0):
        //   coupled: avg2 = 35 >= max_th 25 -> forced drop (no draw)
        //   decoupled: avg2 = 20: pb = 0.1 (20 - 10) / 15 = 0.0667 -> random region
        // A DP1 arrival: coupled avg1 = 15 < 25, decoupled 5: both admit.
        // With the overlap model (10/40 for all, max_p 0.02/0.05/0.1):
        //   coupled DP1: avg1 = 15 -> pb = 0.05 * 5/30 = 0.00833; decoupled DP1: 5 < 10.
        let nonoverlap = || {
            vec![
                curve(40.0, 55.0, 0.02, 0.002),
                curve(25.0, 40.0, 0.05, 0.002),
                curve(10.0, 25.0, 0.1, 0.002),
            ]
        };
        let overlap = || {
            vec![
                curve(10.0, 40.0, 0.02, 0.002),
                curve(10.0, 40.0, 0.05, 0.002),
                curve(10.0, 40.0, 0.1, 0.002),
            ]
        };
        let build = |mode, curves| {
            let mut m = Mred::new(mode, curves);
            for (j, n) in [(0, 10), (1, 5), (2, 20)] {
                for _ in 0..n {
                    m.on_enqueue(j, 500);
                }
            }
            for k in 0..3 {
                m.vqs[k].vars.avg = m.vq_len(k);
                m.vqs[k].vars.idle_since = None;
            }
            m
        };
        let mut c = build(MredMode::Coupled, nonoverlap());
        let mut d = build(MredMode::Decoupled, nonoverlap());
        assert_eq!([c.vq_len(0), c.vq_len(1), c.vq_len(2)], [10.0, 15.0, 35.0]);
        assert_eq!([d.vq_len(0), d.vq_len(1), d.vq_len(2)], [10.0, 5.0, 20.0]);
        assert_eq!(
            c.on_arrival(2, 500, SimTime::ZERO, || panic!("forced: no draw")),
            Congestion::Forced
        );
        // Decoupled: pa = pb = 0.0667 for the first packet in the region.
        assert_eq!(d.on_arrival(2, 500, SimTime::ZERO, || 0.066), Congestion::Early);
        assert_eq!(
            c.on_arrival(1, 500, SimTime::ZERO, || panic!("below min_th")),
            Congestion::None
        );
        assert_eq!(
            d.on_arrival(1, 500, SimTime::ZERO, || panic!("below min_th")),
            Congestion::None
        );

        let mut c = build(MredMode::Coupled, overlap());
        let mut d = build(MredMode::Decoupled, overlap());
        // pb = 0.05 * (15 - 10) / 30 = 0.008333
        assert_eq!(c.on_arrival(1, 500, SimTime::ZERO, || 0.0083), Congestion::Early);
        assert_eq!(
            d.on_arrival(1, 500, SimTime::ZERO, || panic!("below min_th")),
            Congestion::None
        );
        // Every average moved by exactly wq (q - avg) = 0 in the VQs the arrivals touched.
        assert_eq!(c.vqs[1].vars.avg, 15.0);
    }

    #[test]
    fn a_virtual_queue_idles_when_its_own_packets_are_gone() {
        // Coupled RIO with one IN and one OUT queued: dequeuing the IN at t = 5 makes VQ0
        // (IN) idle while VQ1 (all) still holds the OUT; dequeuing the OUT at t = 7 makes
        // VQ1 idle.
        let mut m = Mred::new(
            MredMode::Coupled,
            vec![curve(5.0, 10.0, 0.02, 0.5), curve(4.0, 10.0, 0.05, 0.5)],
        );
        m.on_arrival(0, 100, SimTime(0), || 0.5);
        m.on_enqueue(0, 100);
        m.on_arrival(1, 100, SimTime(1), || 0.5);
        m.on_enqueue(1, 100);
        m.on_dequeue(0, 100, SimTime(5));
        assert_eq!(m.vqs[0].vars.idle_since, Some(SimTime(5)));
        assert_eq!(m.vqs[1].vars.idle_since, None);
        m.on_dequeue(1, 100, SimTime(7));
        assert_eq!(m.vqs[1].vars.idle_since, Some(SimTime(7)));
        assert_eq!(m.vqs[0].vars.idle_since, Some(SimTime(5)));
    }
}
