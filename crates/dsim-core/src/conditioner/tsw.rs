//! Time sliding window (TSW) rate estimator, its two-colour tagger, and the three-colour
//! TSW3CM.
//!
//! Source: draft-ibanez-diffserv-assured-eval-00 (seed 002), appendix, "The average rate
//! estimator is the time sliding window algorithm described in [EXPALLOC]":
//!
//! ```text
//! Initialization: win_length = a constant; avg_rate = 0; last_arrival = 0
//! Each time a packet is received:
//!     avg_rate = (avg_rate * win_length + pkt_size) / (now - last_arrival + win_length)
//!     last_arrival = now
//! Tagging:
//!     if avg_rate <= target_rate: IN
//!     else with probability Pout = (avg_rate - target_rate) / target_rate: OUT, else IN
//! ```
//!
//! Parameters: `win_length` (a duration; dsim computes in seconds), target rate (bit/s in
//! the scenario; the estimator works in bytes/s, the unit of pkt_size per second). The
//! estimate is a real-valued average, so it is an f64. `last_arrival = 0` is the start of
//! the run, as written, not the first packet's arrival. IN is green, OUT red. The initial
//! `avg_rate` is a parameter ([`Tsw::starting_at`]): 0 by default, as seed 002 writes;
//! ns-2's TSW2CM (`dsPolicy.cc`, `addPolicyEntry`) starts it at the committed rate.
//!
//! Note: Clark and Fang's tagger ("Explicit Allocation of Best Effort Packet Delivery
//! Service", section 3.3; cited as the policer of seed 001 section 2, and the TSW2CM of the
//! ns-2 diffserv module written by seed 001's authors' lab) divides by avg_rate:
//!
//! ```text
//!     else with probability Pout = (avg_rate - target_rate) / avg_rate: OUT, else IN
//! ```
//!
//! so that the IN rate of a source above its target is the target itself. Seed 002 divides
//! by target_rate. [`PoutDivisor`] chooses (default: seed 002's, `Target`). With the
//! target divisor, Pout >= 1 (avg_rate >= 2 target) marks every packet OUT. The random draw
//! comes from the conditioner's own stream and is made only when 0 < Pout < 1.
//!
//! TSW3CM: the time sliding window three colour marker of RFC 2859 (the TSWTCM cited by
//! seed 004 section 6), with the same estimator and committed (CTR) and peak (PTR) target
//! rates. The RFC's estimator (section 4.1) starts with AVG_RATE = CTR and T_FRONT = 0,
//! as ns-2's TSW3CM does (avgRate = CIR): that is the default initial `avg_rate` of
//! [`Tsw3`] (a parameter, [`Tsw3::starting_at`]). Marking, section 4.2:
//!
//! ```text
//! if avg_rate <= CTR: green
//! else if avg_rate <= PTR: with P0 = (avg_rate - CTR) / avg_rate yellow, else green
//! else: with P1 = (avg_rate - PTR) / avg_rate red,
//!       with P2 = (PTR - CTR) / avg_rate yellow, else green
//! ```

use rand::RngExt;

use serde::{Deserialize, Serialize};

use crate::engine::rng::Rng;
use crate::packet::Color;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Duration, Rate, SimTime};

/// `meter = { type = "tsw", ... }`: seed 002's TSW estimator and probabilistic tagger, green
/// (IN) or red (OUT).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "draft-ibanez-diffserv-assured-eval-00")]
pub struct TswSpec {
    /// target_rate: the profile's rate.
    #[param(range = "(0, inf)")]
    pub target: Rate,
    /// win_length: the time the estimator averages over.
    #[param(range = "(0, inf)")]
    pub window: Duration,
    /// What Pout's excess is divided by: `"target"` (seed 002, default) or `"avg_rate"`
    /// (Clark and Fang section 3.3, seed 001's tagger).
    #[serde(default, skip_serializing_if = "PoutDivisor::is_default")]
    pub pout: PoutDivisor,
    /// The estimate's initial value: 0 when absent (seed 002 appendix, "avg_rate = 0");
    /// ns-2's TSW2CM starts it at the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_rate: Option<Rate>,
}

impl TswSpec {
    /// The meter this table declares.
    pub fn meter(&self, path: &KeyPath) -> Result<Tsw, ConfigError> {
        self.check(path)?;
        // Seed 002's appendix starts the estimate at 0.
        let start = self.avg_rate.unwrap_or(Rate(0));
        Ok(Tsw::new(self.target, self.window)
            .dividing_by(self.pout)
            .starting_at(start))
    }
}

/// `meter = { type = "tsw3", ... }`: RFC 2859's TSW three colour marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2859")]
pub struct Tsw3Spec {
    /// CTR, the committed target rate.
    #[param(range = "(0, inf)", section = "2")]
    pub committed: Rate,
    /// PTR, the peak target rate; at least CTR.
    #[param(section = "2")]
    pub peak: Rate,
    /// The time the rate estimator averages over (its window length).
    #[param(range = "(0, inf)", section = "4.1")]
    pub window: Duration,
    /// The estimate's initial value, AVG_RATE: `committed` when absent (RFC 2859 section
    /// 4.1, "AVG_RATE = CTR"; ns-2's TSW3CM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_rate: Option<Rate>,
}

impl Tsw3Spec {
    /// The meter this table declares.
    pub fn meter(&self, path: &KeyPath) -> Result<Tsw3, ConfigError> {
        self.check(path)?;
        if self.peak < self.committed {
            return Err(ConfigError::new(
                path.key("peak"),
                Some(format!("\"{}\"", self.peak)),
                format!(
                    "the peak target rate must be at least the committed one ({})",
                    self.committed
                ),
            ));
        }
        // RFC 2859 section 4.1: AVG_RATE = CTR unless told otherwise.
        let start = self.avg_rate.unwrap_or(self.committed);
        Ok(Tsw3::new(self.committed, self.peak, self.window).starting_at(start))
    }
}

/// The TSW estimator's state (seed 002 appendix).
#[derive(Clone, Debug, PartialEq)]
pub struct TswEstimator {
    /// win_length in seconds.
    pub win_length: f64,
    /// Estimated rate in bytes/s.
    pub avg_rate: f64,
    pub last_arrival: SimTime,
}

impl TswEstimator {
    /// The estimator with `avg_rate` 0 (seed 002's initialisation).
    pub fn new(win_length: Duration) -> Self {
        TswEstimator {
            win_length: win_length.as_secs_f64(),
            avg_rate: 0.0,
            last_arrival: SimTime::ZERO,
        }
    }

    /// "Each time a packet is received": updates and returns avg_rate (bytes/s).
    #[inline]
    pub fn update(&mut self, size: u32, now: SimTime) -> f64 {
        let elapsed = (now - self.last_arrival).as_secs_f64();
        self.avg_rate = (self.avg_rate * self.win_length + size as f64) / (elapsed + self.win_length);
        self.last_arrival = now;
        self.avg_rate
    }
}

fn bytes_per_second(r: Rate) -> f64 {
    r.0 as f64 / 8.0
}

/// What the excess of avg_rate over target_rate is divided by to give Pout (`pout`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum PoutDivisor {
    /// Seed 002 appendix: Pout = (avg_rate - target_rate) / target_rate.
    #[default]
    Target,
    /// Clark and Fang section 3.3 (seed 001's TSW tagger): Pout = (avg_rate -
    /// target_rate) / avg_rate.
    AvgRate,
}

impl PoutDivisor {
    pub fn is_default(&self) -> bool {
        *self == PoutDivisor::Target
    }
}

/// The two-colour TSW tagger (seed 002; Clark and Fang): IN (green) or, probabilistically,
/// OUT (red).
#[derive(Clone, Debug, PartialEq)]
pub struct Tsw {
    pub estimator: TswEstimator,
    /// target_rate in bytes/s.
    pub target: f64,
    pub divisor: PoutDivisor,
}

impl Tsw {
    pub fn new(target: Rate, win_length: Duration) -> Self {
        Tsw {
            estimator: TswEstimator::new(win_length),
            target: bytes_per_second(target),
            divisor: PoutDivisor::Target,
        }
    }

    /// The same tagger with Pout's divisor chosen.
    pub fn dividing_by(mut self, divisor: PoutDivisor) -> Self {
        self.divisor = divisor;
        self
    }

    /// The same tagger with its estimate starting at `avg_rate` instead of 0.
    pub fn starting_at(mut self, avg_rate: Rate) -> Self {
        self.estimator.avg_rate = bytes_per_second(avg_rate);
        self
    }

    #[inline]
    pub fn color(&mut self, size: u32, now: SimTime, rng: &mut Rng) -> Color {
        let avg = self.estimator.update(size, now);
        // "if avg_rate <= target_rate set DS field to IN"
        if avg <= self.target {
            return Color::Green;
        }
        // Seed 002: "else with probability Pout = (avg_rate - target_rate) / target_rate
        // set DS field to OUT else set DS field to IN"; Clark and Fang 3.3 divide by avg_rate.
        let p_out = match self.divisor {
            PoutDivisor::Target => (avg - self.target) / self.target,
            PoutDivisor::AvgRate => (avg - self.target) / avg,
        };
        if p_out >= 1.0 || rng.random::<f64>() < p_out {
            Color::Red
        } else {
            Color::Green
        }
    }
}

/// TSW3CM (RFC 2859): green, yellow or red from the TSW estimate, CTR and PTR.
#[derive(Clone, Debug, PartialEq)]
pub struct Tsw3 {
    pub estimator: TswEstimator,
    /// Committed target rate in bytes/s.
    pub ctr: f64,
    /// Peak target rate in bytes/s.
    pub ptr: f64,
}

impl Tsw3 {
    /// RFC 2859 section 4.1: the estimate starts at CTR ("AVG_RATE = CTR").
    pub fn new(committed: Rate, peak: Rate, win_length: Duration) -> Self {
        Tsw3 {
            estimator: TswEstimator::new(win_length),
            ctr: bytes_per_second(committed),
            ptr: bytes_per_second(peak),
        }
        .starting_at(committed)
    }

    /// The same marker with its estimate starting at `avg_rate` instead of CTR.
    pub fn starting_at(mut self, avg_rate: Rate) -> Self {
        self.estimator.avg_rate = bytes_per_second(avg_rate);
        self
    }

    #[inline]
    pub fn color(&mut self, size: u32, now: SimTime, rng: &mut Rng) -> Color {
        let avg = self.estimator.update(size, now);
        // RFC 2859 section 4.2
        if avg <= self.ctr {
            return Color::Green;
        }
        let u = rng.random::<f64>();
        if avg <= self.ptr {
            // P0 = (avg-rate - CTR) / avg-rate
            let p0 = (avg - self.ctr) / avg;
            if u < p0 { Color::Yellow } else { Color::Green }
        } else {
            // P1 = (avg-rate - PTR) / avg-rate; P2 = (PTR - CTR) / avg-rate
            let p1 = (avg - self.ptr) / avg;
            let p2 = (self.ptr - self.ctr) / avg;
            if u < p1 {
                Color::Red
            } else if u < p1 + p2 {
                Color::Yellow
            } else {
                Color::Green
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use crate::time::NS_PER_SEC;

    #[test]
    fn estimator_by_hand() {
        // win_length = 1 s, 1000 B packets:
        // t=1 s:   (0*1 + 1000) / (1 - 0 + 1)   = 500 B/s
        // t=2 s:   (500*1 + 1000) / (1 + 1)     = 750 B/s
        // t=2.5 s: (750*1 + 1000) / (0.5 + 1)   = 1166.666... B/s
        // t=2.5 s: (1166.67 + 1000) / (0 + 1)   = 2166.666... B/s (back-to-back packet)
        let mut e = TswEstimator::new(Duration::from_secs(1));
        assert_eq!(e.update(1000, SimTime(NS_PER_SEC)), 500.0);
        assert_eq!(e.update(1000, SimTime(2 * NS_PER_SEC)), 750.0);
        let v = e.update(1000, SimTime(2 * NS_PER_SEC + NS_PER_SEC / 2));
        assert!((v - 1750.0 / 1.5).abs() < 1e-9, "{v}");
        let w = e.update(1000, SimTime(2 * NS_PER_SEC + NS_PER_SEC / 2));
        assert!((w - (1750.0 / 1.5 + 1000.0)).abs() < 1e-9, "{w}");
    }

    #[test]
    fn estimator_converges_to_a_cbr_rate() {
        // Fixed point of avg = (avg W + S) / (T + W) is S / T: 500 B every 4 ms = 125 kB/s.
        let mut e = TswEstimator::new(Duration::from_millis(200));
        let mut v = 0.0;
        for k in 1..=5000u64 {
            v = e.update(500, SimTime(k * 4_000_000));
        }
        assert!((v - 125_000.0).abs() < 1e-6, "{v}");
    }

    #[test]
    fn tagger_below_target_is_always_in() {
        // 1 Mbit/s = 125 kB/s target; a CBR source at 100 kB/s never exceeds it (the
        // estimate rises monotonically from 0 towards 100 kB/s).
        let mut t = Tsw::new(Rate(1_000_000), Duration::from_millis(500));
        let mut rng = stream(1, "test");
        for k in 1..=10_000u64 {
            assert_eq!(t.color(1000, SimTime(k * 10_000_000), &mut rng), Color::Green);
        }
    }

    #[test]
    fn tagger_marks_out_with_probability_pout() {
        // CBR at 1.25 x target once converged: Pout = 0.25, so about 25 % red. Above
        // 2 x target every packet is red.
        let mut t = Tsw::new(Rate(800_000), Duration::from_secs(1)); // 100 kB/s
        let mut rng = stream(7, "tsw");
        let gap = 8_000_000u64; // 1000 B every 8 ms = 125 kB/s
        let mut red = 0;
        let n = 40_000u64;
        for k in 1..=(n + 5000) {
            let c = t.color(1000, SimTime(k * gap), &mut rng);
            if k > 5000 && c == Color::Red {
                red += 1;
            }
        }
        let frac = red as f64 / n as f64;
        assert!((frac - 0.25).abs() < 0.01, "{frac}");
        let mut hot = Tsw::new(Rate(800_000), Duration::from_secs(1));
        let mut n_red = 0;
        for k in 1..=20_000u64 {
            // 1000 B every 4 ms = 250 kB/s = 2.5 x target
            if hot.color(1000, SimTime(k * 4_000_000), &mut rng) == Color::Red && k > 5000 {
                n_red += 1;
            }
        }
        assert_eq!(n_red, 15_000);
    }

    #[test]
    fn clark_fang_tagger_keeps_the_in_rate_at_the_target() {
        // Target 100 kB/s, Pout = (avg - target) / avg once the estimate has converged:
        // CBR at 125 kB/s: Pout = 25/125 = 0.2 (seed 002's divisor would give 0.25);
        // CBR at 250 kB/s: Pout = 150/250 = 0.6 (seed 002's: 1.5, every packet OUT), so
        // the IN rate is 250 x 0.4 = 100 kB/s = the target in both cases.
        for (gap, want) in [(8_000_000u64, 0.2), (4_000_000, 0.6)] {
            let mut t = Tsw::new(Rate(800_000), Duration::from_secs(1)).dividing_by(PoutDivisor::AvgRate);
            let mut rng = stream(11, "tsw-cf");
            let (mut red, n) = (0u64, 60_000u64);
            for k in 1..=(n + 5000) {
                let c = t.color(1000, SimTime(k * gap), &mut rng);
                red += (k > 5000 && c == Color::Red) as u64;
            }
            let frac = red as f64 / n as f64;
            assert!((frac - want).abs() < 0.01, "gap {gap}: {frac} vs {want}");
        }
    }

    #[test]
    fn the_estimate_starts_where_it_is_told() {
        // Window 1 s, a 1000 B packet at 0.5 s: avg = (avg0 * 1 + 1000) / (0.5 + 1).
        // TSW3CM (RFC 2859 section 4.1, AVG_RATE = CTR): CTR 1 Mbit/s = 125 000 B/s gives
        // (125 000 + 1000) / 1.5 = 84 000 B/s. The two-colour tagger (seed 002, avg_rate
        // = 0): 1000 / 1.5 = 666.67 B/s; started at 1 Mbit/s like ns-2's TSW2CM: 84 000.
        let half = SimTime(NS_PER_SEC / 2);
        let mut m = Tsw3::new(Rate(1_000_000), Rate(2_000_000), Duration::from_secs(1));
        assert_eq!(m.estimator.avg_rate, 125_000.0);
        assert_eq!(m.estimator.update(1000, half), 84_000.0);
        let mut zero = Tsw3::new(Rate(1_000_000), Rate(2_000_000), Duration::from_secs(1)).starting_at(Rate(0));
        assert!((zero.estimator.update(1000, half) - 1000.0 / 1.5).abs() < 1e-9);
        let mut t = Tsw::new(Rate(1_000_000), Duration::from_secs(1));
        assert!((t.estimator.update(1000, half) - 1000.0 / 1.5).abs() < 1e-9);
        let mut ns2 = Tsw::new(Rate(1_000_000), Duration::from_secs(1)).starting_at(Rate(1_000_000));
        assert_eq!(ns2.estimator.update(1000, half), 84_000.0);
    }

    #[test]
    fn tsw3_starting_at_ctr_marks_a_first_burst_as_the_rfc_does() {
        // CTR 100 kB/s, PTR 200 kB/s, window 1 s, ten 1000 B packets at t = 0. Started at
        // CTR the estimate is 101 000 B/s after the first (above CTR: P0 = 1000 / 101 000
        // of a yellow), 110 000 after the tenth (P0 = 10 / 110). Started at 0 it stays at
        // or below 10 000 B/s: all green.
        let mut rng = stream(5, "tsw3-start");
        let burst = |m: &mut Tsw3, rng: &mut Rng| -> Vec<f64> {
            (0..10)
                .map(|_| {
                    m.color(1000, SimTime::ZERO, rng);
                    m.estimator.avg_rate
                })
                .collect()
        };
        let mut rfc = Tsw3::new(Rate(800_000), Rate(1_600_000), Duration::from_secs(1));
        let avgs = burst(&mut rfc, &mut rng);
        assert_eq!(
            avgs,
            (1..=10).map(|k| 100_000.0 + 1000.0 * k as f64).collect::<Vec<_>>()
        );
        let mut from_zero = Tsw3::new(Rate(800_000), Rate(1_600_000), Duration::from_secs(1)).starting_at(Rate(0));
        let colours: Vec<Color> = (0..10)
            .map(|_| from_zero.color(1000, SimTime::ZERO, &mut rng))
            .collect();
        assert_eq!(colours, vec![Color::Green; 10]);
    }

    #[test]
    fn tsw3_shares_follow_rfc_2859() {
        // CTR = 100 kB/s, PTR = 200 kB/s.
        // At 150 kB/s: yellow with P0 = 50/150 = 1/3.
        // At 250 kB/s: red with P1 = 50/250 = 0.2, yellow with P2 = 100/250 = 0.4.
        let mut rng = stream(3, "tsw3");
        for (gap, want_y, want_r) in [(20_000_000u64 / 3, 1.0 / 3.0, 0.0), (4_000_000, 0.4, 0.2)] {
            let mut m = Tsw3::new(Rate(800_000), Rate(1_600_000), Duration::from_secs(1));
            let (mut y, mut r, n) = (0u64, 0u64, 60_000u64);
            for k in 1..=(n + 5000) {
                let c = m.color(1000, SimTime(k * gap), &mut rng);
                if k > 5000 {
                    y += (c == Color::Yellow) as u64;
                    r += (c == Color::Red) as u64;
                }
            }
            let (fy, fr) = (y as f64 / n as f64, r as f64 / n as f64);
            assert!((fy - want_y).abs() < 0.01, "yellow {fy} vs {want_y}");
            assert!((fr - want_r).abs() < 0.01, "red {fr} vs {want_r}");
        }
    }
}
