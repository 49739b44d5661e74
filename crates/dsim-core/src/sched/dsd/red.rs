//! RED applied to DSD's virtual queue (draft-hurley-alternative-best-effort-01, section 5,
//! last paragraph: "An Active Queue Management scheme such as RED [4] can be supported for
//! blue traffic by applying it to the virtual queue, and using those results in assigning
//! losses and deadlines").
//!
//! The algorithm is RED of Floyd and Jacobson (1993), section 4 / figure 2, computed on the
//! virtual queue's waiting room in the unit of Buff (packets or bytes):
//!
//! - on each arrival, if the queue is busy: avg <- (1 - w_q) avg + w_q q;
//!   if it is idle since `idle_start`: m = (now - idle_start) / s, avg <- (1 - w_q)^m avg,
//!   where s is the transmission time of the arriving packet (dsim's choice for the "typical
//!   transmission time" of the paper);
//! - min_th <= avg < max_th: count += 1, p_b = max_p (avg - min_th) / (max_th - min_th),
//!   p_a = p_b / (1 - count p_b); mark with probability p_a (then count = 0);
//! - avg >= max_th: mark (count = 0); avg < min_th: count = -1.
//!
//! Parameters: min_th, max_th (packets or bytes, the unit of Buff), max_p (dimensionless,
//! (0, 1]), w_q (dimensionless, (0, 1]).
//!
//! This is the minimal RED decision DSD needs, kept apart so that it can be replaced by the
//! shared RED of `aqm/red.rs` (built on another branch) without touching the scheduler: the
//! scheduler only calls [`VirtualRed::decide`] with the virtual queue's occupancy and idle
//! state and reads a boolean.

use rand::RngExt;

use crate::engine::rng::Rng;
use crate::time::{Rate, SimTime};

/// RED parameters, in the unit of the virtual queue's Buff.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
}

/// RED's evolving variables.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RedState {
    pub avg: f64,
    /// Packets since the last mark while avg was between the thresholds (-1: below min_th).
    pub count: i64,
}

#[derive(Debug, Clone)]
pub struct VirtualRed {
    pub params: RedParams,
    pub state: RedState,
}

impl VirtualRed {
    pub fn new(params: RedParams) -> Self {
        VirtualRed {
            params,
            state: RedState { avg: 0.0, count: -1 },
        }
    }

    /// RED's decision for a packet of `size` bytes arriving at `now`, when the virtual queue
    /// holds `occupancy` (packets or bytes) and has been idle since `idle_since` (None: busy).
    /// `true`: RED marks it (drops it, or sets CE when ECN is on).
    pub fn decide(
        &mut self,
        now: SimTime,
        occupancy: u64,
        idle_since: Option<SimTime>,
        size: u32,
        rate: Rate,
        rng: &mut Rng,
    ) -> bool {
        let RedParams {
            min_th,
            max_th,
            max_p,
            w_q,
        } = self.params;
        let s = &mut self.state;
        // Floyd & Jacobson figure 2: "calculate the average queue size".
        match idle_since {
            None => s.avg = (1.0 - w_q) * s.avg + w_q * occupancy as f64,
            Some(start) => {
                let tx = rate.tx_time(size as u64).0.max(1) as f64;
                let m = (now - start).0 as f64 / tx;
                s.avg *= (1.0 - w_q).powf(m);
            }
        }
        if s.avg < min_th {
            s.count = -1;
            return false;
        }
        if s.avg >= max_th {
            s.count = 0;
            return true;
        }
        s.count += 1;
        let p_b = max_p * (s.avg - min_th) / (max_th - min_th);
        let denom = 1.0 - s.count as f64 * p_b;
        let p_a = if denom <= 0.0 { 1.0 } else { p_b / denom };
        if rng.random::<f64>() < p_a {
            s.count = 0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    #[test]
    fn average_and_thresholds_by_hand() {
        // w_q = 0.5, busy queue of 10 then 10: avg 5, then 7.5; min_th 6, max_th 7:
        // first arrival below min_th (no mark), second above max_th (mark).
        let mut red = VirtualRed::new(RedParams {
            min_th: 6.0,
            max_th: 7.0,
            max_p: 0.1,
            w_q: 0.5,
        });
        let mut rng = stream(1, "test");
        let r = Rate(1_000_000);
        assert!(!red.decide(SimTime(0), 10, None, 125, r, &mut rng));
        assert_eq!(red.state.avg, 5.0);
        assert!(red.decide(SimTime(0), 10, None, 125, r, &mut rng));
        assert_eq!(red.state.avg, 7.5);
        // Idle for 2 packet times (125 B at 1 Mbit/s = 1 ms): avg * 0.5^2.
        red.decide(SimTime(3_000_000), 0, Some(SimTime(1_000_000)), 125, r, &mut rng);
        assert_eq!(red.state.avg, 7.5 * 0.25);
    }

    #[test]
    fn marking_fraction_between_thresholds_follows_the_uniformised_probability() {
        // With avg pinned midway (w_q tiny, avg preset), p_b = max_p / 2 = 0.05 = 1/N, N = 20.
        // The k-th packet after a mark (count = k) is marked with p_b / (1 - k p_b) =
        // 1 / (N - k), so P(gap = k) = 1 / (N - 1) for k = 1 .. N - 1: the gap is uniform
        // (Floyd & Jacobson section 7) with mean N / 2 = 10 packets.
        let mut red = VirtualRed::new(RedParams {
            min_th: 0.0,
            max_th: 2.0,
            max_p: 0.1,
            w_q: 1e-12,
        });
        red.state.avg = 1.0;
        red.state.count = 0;
        let mut rng = stream(7, "test");
        let n = 200_000;
        let marks = (0..n)
            .filter(|_| red.decide(SimTime(0), 1, None, 125, Rate(1_000_000), &mut rng))
            .count();
        let gap = n as f64 / marks as f64;
        assert!((gap - 10.0).abs() < 0.2, "mean gap {gap}");
    }
}
