//! DCTCP: RFC 8257, "Data Center TCP (DCTCP): TCP Congestion Control for Data Centers",
//! section 3: the sender's half (3.3, 3.4, 3.5). The receiver's echo (3.2) is in
//! [`super::receiver`], the queue's step marking (3.1) in [`crate::aqm::droptail`].
//!
//! ```text
//! initially:           Alpha = 1 (dctcp.alpha), WindowEnd = SND.UNA,
//!                      BytesAcked = BytesMarked = 0                          (3.3)
//! every ACK:           BytesAcked += SEG.ACK - SND.UNA                      (3.3 steps 1-2)
//!                      with ECE: BytesMarked += SEG.ACK - SND.UNA            (step 3)
//!                      SEG.ACK > WindowEnd: M = BytesMarked / BytesAcked,
//!                        Alpha = Alpha (1 - g) + g M, WindowEnd = SND.NXT,
//!                        BytesAcked = BytesMarked = 0                        (steps 4-8)
//! ECE (once per window of data, RFC 3168):
//!                      cwnd = cwnd (1 - Alpha / 2)                           (3.4)
//! loss, timeout:       as Reno                                               (3.5)
//! congestion avoidance and slow start: as Reno
//! ```
//!
//! dsim's readings: the window after an ECE is at least 2 SMSS, as Linux
//! (`dctcp_ssthresh`) and ns-3 (`TcpDctcp::GetSsThresh`) keep it; RFC 8257 states no floor.
//! The sender sets ssthresh to the reduced window too (RFC 3168 6.1.2's procedure, which
//! 3.4 keeps: "The setting of the CWR bit is also as per [RFC3168]"), as both stacks do.

use serde::{Deserialize, Serialize};

use super::congestion::{Event, Reno, Signal, reno_ssthresh};
use crate::params::Params;

fn default_g() -> f64 {
    1.0 / 16.0
}
fn default_alpha() -> f64 {
    1.0
}

/// `tcp.dctcp`: the estimator of DCTCP (used with `congestion = "dctcp"`, which needs
/// `ecn = true`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 8257")]
pub struct DctcpSpec {
    /// g, the weight of the newest observation window in the estimate Alpha of the
    /// fraction of bytes marked. Default 1/16, the RFC's value (Linux's dctcp_shift_g = 4,
    /// ns-3's DctcpShiftG).
    #[serde(default = "default_g")]
    #[param(range = "(0, 1]", section = "3.3")]
    pub g: f64,
    /// Alpha before the first observation window ends. Default 1, as the RFC initializes
    /// it (Linux's dctcp_alpha_on_init and ns-3's DctcpAlphaOnInit too).
    #[serde(default = "default_alpha")]
    #[param(range = "[0, 1]", section = "3.3")]
    pub initial_alpha: f64,
}

impl Default for DctcpSpec {
    fn default() -> Self {
        DctcpSpec {
            g: default_g(),
            initial_alpha: default_alpha(),
        }
    }
}

/// DCTCP's sender state (3.3): the estimate and the observation window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dctcp {
    pub g: f64,
    pub alpha: f64,
    /// SND.UNA at which the current observation window ends.
    pub window_end: u64,
    pub bytes_acked: u64,
    pub bytes_marked: u64,
    /// Congestion avoidance is Reno's (3.5).
    pub reno: Reno,
}

impl Dctcp {
    pub fn new(spec: DctcpSpec, snd_una: u64) -> Self {
        Dctcp {
            g: spec.g,
            alpha: spec.initial_alpha,
            window_end: snd_una,
            bytes_acked: 0,
            bytes_marked: 0,
            reno: Reno::default(),
        }
    }

    /// An ACK arrived: `acked` bytes newly acknowledged cumulatively (SACK is not
    /// counted), its ECE flag, and the ACK number and SND.NXT after it (3.3).
    pub fn on_ack(&mut self, acked: u64, ece: bool, ack: u64, snd_nxt: u64) {
        self.bytes_acked += acked;
        if ece {
            self.bytes_marked += acked;
        }
        if ack <= self.window_end {
            return;
        }
        // Steps 5-8. An ACK beyond WindowEnd acknowledges at least one byte.
        if self.bytes_acked > 0 {
            let m = self.bytes_marked as f64 / self.bytes_acked as f64;
            self.alpha = self.alpha * (1.0 - self.g) + self.g * m;
        }
        self.window_end = snd_nxt;
        self.bytes_acked = 0;
        self.bytes_marked = 0;
    }

    /// ssthresh of a congestion event: ECE scales the window by (1 - Alpha / 2) (3.4);
    /// a loss or a timeout halves it as Reno does (3.5).
    pub fn ssthresh(&self, e: &Event) -> u64 {
        match e.signal {
            Signal::Ecn => ((e.cwnd as f64 * (1.0 - self.alpha / 2.0)).round() as u64).max(2 * e.mss),
            Signal::Loss | Signal::Timeout => reno_ssthresh(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    fn ece_event(cwnd: u64) -> Event {
        Event {
            signal: Signal::Ecn,
            now: SimTime::ZERO,
            cwnd,
            flight: cwnd,
            mss: 1000,
        }
    }

    #[test]
    fn alpha_is_the_ewma_of_the_marked_fraction_per_window() {
        // Alpha starts at 1. Window 1 (ends when an ACK passes SND.UNA = 1, i.e. the first
        // ACK): 1000 of 1000 bytes marked: Alpha = 1 (15/16) + 1/16 = 1; WindowEnd = 10001.
        let mut d = Dctcp::new(DctcpSpec::default(), 1);
        d.on_ack(1000, true, 1001, 10_001);
        assert_eq!((d.alpha, d.window_end), (1.0, 10_001));
        // Window 2: ACKs of 9000 bytes, 3000 marked, the last reaches 10001 = WindowEnd
        // (not beyond: "less than or equal ... stop processing"), then one more unmarked
        // ACK of 1000 ends it: M = 3000 / 10000 = 0.3, Alpha = 15/16 + 0.3/16 = 0.95625.
        for (ack, ece) in [(4001, true), (7001, false), (10_001, false)] {
            d.on_ack(3000, ece, ack, 20_001);
            assert_eq!(d.alpha, 1.0);
        }
        d.on_ack(1000, false, 11_001, 25_001);
        assert!((d.alpha - 0.956_25).abs() < 1e-15, "{}", d.alpha);
        assert_eq!((d.window_end, d.bytes_acked, d.bytes_marked), (25_001, 0, 0));
        // Unmarked windows decay it by (1 - g) each: after n windows 0.95625 (15/16)^n.
        let mut want = 0.956_25;
        let mut ack = 25_001;
        for _ in 0..20 {
            ack += 1000;
            d.on_ack(1000, false, ack, ack);
            want *= 15.0 / 16.0;
            assert!((d.alpha - want).abs() < 1e-15);
        }
        // Duplicate ACKs (nothing acknowledged) count nothing and end no window.
        d.on_ack(0, true, ack, ack + 5000);
        assert_eq!((d.bytes_acked, d.bytes_marked, d.window_end), (0, 0, ack));
    }

    #[test]
    fn ece_scales_cwnd_by_one_minus_half_alpha_and_loss_halves() {
        let mut d = Dctcp::new(DctcpSpec::default(), 1);
        // Alpha 1: the reduction is Reno's halving.
        assert_eq!(d.ssthresh(&ece_event(20_000)), 10_000);
        // Alpha 0.25: cwnd (1 - 0.125) = 17500.
        d.alpha = 0.25;
        assert_eq!(d.ssthresh(&ece_event(20_000)), 17_500);
        // Alpha 0: unchanged; never below 2 SMSS.
        d.alpha = 0.0;
        assert_eq!(d.ssthresh(&ece_event(20_000)), 20_000);
        d.alpha = 1.0;
        assert_eq!(d.ssthresh(&ece_event(3000)), 2000);
        // 3.5: a loss reacts as Reno (FlightSize / 2), whatever Alpha.
        d.alpha = 0.1;
        let loss = Event {
            signal: Signal::Loss,
            flight: 30_000,
            ..ece_event(40_000)
        };
        assert_eq!(d.ssthresh(&loss), 15_000);
    }
}
