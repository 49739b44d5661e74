//! The retransmission timeout: RFC 6298, "Computing TCP's Retransmission Timer".
//!
//! Section 2, with K = 4, alpha = 1/8, beta = 1/4 and G the clock granularity:
//!
//! ```text
//! first sample R:   SRTT = R,  RTTVAR = R/2                                  (2.2)
//! later sample R':  RTTVAR = (1 - beta) RTTVAR + beta |SRTT - R'|            (2.3)
//!                   SRTT   = (1 - alpha) SRTT + alpha R'
//! after each:       RTO = SRTT + max(G, K * RTTVAR), clamped to [min_rto, max_rto]
//! before a sample:  RTO = initial_rto (1 s)                                  (2.1)
//! on expiry:        RTO = min(2 RTO, max_rto)                                (5.5)
//! ```
//!
//! Parameters (all nanoseconds, declared with their defaults in [`super::TcpSpec`]):
//! `initial_rto` (2.1), `min_rto` ((2.4) asks for 1 s; dsim follows Linux and ns-2
//! practice and makes it a parameter), `max_rto` (2.5), the granularity G. Samples are read on a clock that ticks every G: a segment sent at t0 and
//! acknowledged at t1 measures (floor(t1/G) - floor(t0/G)) G, as a real TCP's tick clock
//! would. G = 0 is an ideal clock. The integer arithmetic of (2.3) floors to the
//! nanosecond.
//!
//! Karn's algorithm (section 3) is the sender's business: it never offers a sample taken
//! from a retransmitted segment. The back-off of (5.5) persists until the next sample
//! recomputes RTO from SRTT and RTTVAR (section 5, note after (5.7)).

use crate::time::{Duration, SimTime};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttParams {
    pub initial_rto: Duration,
    pub min_rto: Duration,
    pub max_rto: Duration,
    pub granularity: Duration,
}

impl Default for RttParams {
    /// The timer a `tcp` table without keys declares ([`super::TcpSpec`]).
    fn default() -> Self {
        super::TcpParams::default().rtt
    }
}

/// SRTT, RTTVAR and the current RTO.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    pub params: RttParams,
    srtt: Option<u64>,
    rttvar: u64,
    rto: u64,
}

/// K of RFC 6298 section 2.
const K: u64 = 4;

impl RttEstimator {
    pub fn new(params: RttParams) -> Self {
        RttEstimator {
            params,
            srtt: None,
            rttvar: 0,
            // (2.1) "Until a round-trip time (RTT) measurement has been made ... the sender
            // SHOULD set RTO <- 1 second".
            rto: params.initial_rto.0,
        }
    }

    /// The RTT a tick clock of granularity G measures between `sent` and `now`.
    pub fn measure(&self, sent: SimTime, now: SimTime) -> Duration {
        let g = self.params.granularity.0;
        match (now.0.checked_div(g), sent.0.checked_div(g)) {
            (Some(a), Some(b)) => Duration((a - b) * g),
            _ => now - sent,
        }
    }

    /// Takes one RTT sample and recomputes RTO (which ends any back-off).
    pub fn sample(&mut self, r: Duration) {
        let r = r.0;
        match self.srtt {
            None => {
                // (2.2)
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // (2.3) "The value of SRTT used in the update to RTTVAR is its value before
                // updating SRTT itself using the second assignment."
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        let srtt = self.srtt.expect("just set");
        let rto = srtt + self.params.granularity.0.max(K * self.rttvar);
        self.rto = self.clamp(rto);
    }

    fn clamp(&self, rto: u64) -> u64 {
        // (2.4) lower bound, as a parameter; (2.5) upper bound.
        rto.max(self.params.min_rto.0).min(self.params.max_rto.0)
    }

    /// (5.5) "The host MUST set RTO <- RTO * 2 ("back off the timer")", up to the maximum.
    pub fn back_off(&mut self) {
        self.rto = (self.rto.saturating_mul(2)).min(self.params.max_rto.0);
    }

    /// (5.7) After the SYN's timer expired, data transmission starts with RTO = 3 s unless
    /// RTO is already larger.
    pub fn after_syn_timeout(&mut self) {
        self.rto = self.rto.max(Duration::from_secs(3).0);
    }

    pub fn rto(&self) -> Duration {
        Duration(self.rto)
    }

    pub fn srtt(&self) -> Option<Duration> {
        self.srtt.map(Duration)
    }

    pub fn rttvar(&self) -> Duration {
        Duration(self.rttvar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn hand_computed_sequence() {
        // G = 1 ms, min 200 ms, max 60 s.
        let mut e = RttEstimator::new(RttParams::default());
        assert_eq!(e.rto(), ms(1000)); // (2.1)
        // R = 100 ms: SRTT 100, RTTVAR 50, RTO = 100 + max(1, 200) = 300 ms.
        e.sample(ms(100));
        assert_eq!((e.srtt(), e.rttvar(), e.rto()), (Some(ms(100)), ms(50), ms(300)));
        // R' = 120: RTTVAR = 3/4 50 + 1/4 |100 - 120| = 37.5 + 5 = 42.5;
        // SRTT = 7/8 100 + 1/8 120 = 102.5; RTO = 102.5 + 170 = 272.5 ms.
        e.sample(ms(120));
        assert_eq!(e.rttvar(), Duration(42_500_000));
        assert_eq!(e.srtt(), Some(Duration(102_500_000)));
        assert_eq!(e.rto(), Duration(272_500_000));
        // Constant samples shrink RTTVAR until the 200 ms floor of (2.4) holds RTO.
        for _ in 0..50 {
            e.sample(ms(100));
        }
        assert_eq!(e.rto(), ms(200));
        // (5.5) back-off doubles, (2.5) caps at 60 s.
        e.back_off();
        assert_eq!(e.rto(), ms(400));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), ms(60_000));
        // The next sample recomputes RTO and ends the back-off.
        e.sample(ms(100));
        assert_eq!(e.rto(), ms(200));
    }

    #[test]
    fn granularity_floor_and_tick_clock() {
        let p = RttParams {
            granularity: ms(10),
            min_rto: Duration::ZERO,
            ..Default::default()
        };
        let mut e = RttEstimator::new(p);
        // Sent at 5 ms, acked at 104 ms: ticks 0 -> 10, measured 100 ms.
        assert_eq!(e.measure(SimTime(5_000_000), SimTime(104_000_000)), ms(100));
        // An ideal clock measures exactly.
        let ideal = RttEstimator::new(RttParams {
            granularity: Duration::ZERO,
            ..p
        });
        assert_eq!(ideal.measure(SimTime(5), SimTime(104)), Duration(99));
        // Zero variance: RTO = SRTT + G.
        for _ in 0..100 {
            e.sample(ms(100));
        }
        assert_eq!(e.rttvar(), Duration::ZERO);
        assert_eq!(e.rto(), ms(110));
    }
}
