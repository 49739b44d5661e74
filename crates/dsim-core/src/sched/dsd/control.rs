//! The DSD control loop for throughput transparency to blue (draft-hurley-alternative-
//! best-effort-01, section 5.1).
//!
//! # What the document asks, and what it leaves open
//!
//! Section 2 defines throughput transparency to blue: "Assume that sources employ a rate
//! adaptation algorithm which conforms to a loss-throughput formula. [...] the ABE node must
//! ensure that an entirely green flow gets a lesser or equal throughput than if it were
//! blue." Section 5.1 corrects "for any advantage green packets might receive by increasing
//! their delay" through the green bias g, and says that g balances "the throughputs of green
//! and blue [...] estimated from the loss-throughput formula according to [13]", the details
//! being in its reference [10]. dsim does not have [10]; this is dsim's design.
//!
//! # Design
//!
//! **What is measured**, at the DSD port, over each control period T (`period`):
//! - per colour, the packets arriving (A_green, A_blue) and the congestion signals they
//!   received: drops of every DSD cause (green: late, early, safety net, penalty; blue:
//!   virtual-queue overflow and RED) plus ECN marks (L_green, L_blue);
//! - per colour, the queueing delay (arrival to start of transmission) of the packets served,
//!   summed and counted (W, N).
//!
//! Each of these eight sums is smoothed across periods by an exponentially weighted moving
//! average with weight w (`weight`) on the newest period, so that a period with few packets
//! or no loss does not swing the estimate.
//!
//! **The estimate.** Loss ratios p = L / A and mean queueing delays q = W / N give, for a
//! flow whose round-trip time away from this hop is R0 (`rtt`, an operator setting: the
//! router cannot observe it), the throughput the TCP loss-throughput formula of Padhye et al.
//! [13] (in the form of RFC 5348 section 3.1, b = 1, t_RTO = 4 R) predicts for it as green
//! and as blue:
//!
//! ```text
//! X(p, R) = s / (R sqrt(2p/3) + 4R (3 sqrt(3p/8)) p (1 + 32 p^2))
//! rho     = X(p_green, R0 + q_green) / X(p_blue, R0 + q_blue)      (s cancels)
//! ```
//!
//! Transparency holds when rho <= 1: a flow gets no more throughput green than blue.
//!
//! **The update rule.** One actuator u in [-max_penalty, 1], integrated on the logarithmic
//! error e = ln(rho / target), clamped to [-1, 1]:
//!
//! ```text
//! u <- clamp(u - gain * e, -max_penalty, 1)
//! g = max(u, 0)                      (the green bias of section 5.1)
//! penalty = max(-u, 0)               (probability of dropping an arriving green packet)
//! ```
//!
//! While u is in [0, 1] it *is* g, the document's actuator: lowering g makes green wait
//! longer (closer to d) and lose more at the head of the queue. Below 0, g stays 0 and the
//! loop drops arriving green packets with probability -u: dsim's addition, because g alone
//! cannot restore transparency whenever blue's queueing delay is much larger than d. Green
//! delay is at most d whatever g is, so the RTT advantage of a green flow, R0 + d against
//! R0 + q_blue, survives g = 0; with the draft's own setting (1 Mbit/s, 75 KB: q_blue up to
//! 600 ms) and TFRC sources, an entirely green flow gets 2 to 3 times the throughput it gets
//! as blue with g = 0 (tests/abe.rs). `max_penalty = 0` keeps the loop to the document's g
//! only. Periods with no arrivals of one colour, or with
//! no congestion signal for either colour, leave u unchanged: without blue there is nobody
//! to protect, and without losses the loss-throughput formula does not bound either rate.
//! When only green has losses, e = -1 (green is behind: favour it); when only blue has
//! losses, e = +1.
//!
//! **Why it converges to transparency.** Local transparency (section 2) does not depend on
//! g: blue admissions and deadlines come from the virtual queue alone, and the serving rule
//! meets every blue deadline whatever g is. What g changes is only how green uses the slack
//! blue leaves: lowering u raises green's queueing delay (g) or loss (g, penalty) and lowers
//! blue's delay, so rho is a non-increasing function of u, while p_blue is unaffected.
//! An integrator on ln rho of a static monotone map converges to the crossing rho = target
//! for a small enough gain (gain times the slope of ln rho in u below 2); if rho < target
//! even at u = 1, u settles at 1 (DSD as in section 5, green already loses enough); if
//! rho > target at u = -max_penalty, u settles there and transparency is not reachable with
//! the configured actuators (the document: it "can only be achieved approximately").
//! The period should span several round-trip times so that the sources have reacted to the
//! previous value before it is measured (time-scale separation); the defaults (1 s period,
//! gain 0.1, weight 0.5) give a loop that moves u by at most 0.1 per second.
//!
//! **Limits.** The formula is applied to packet loss ratios, not to the loss event rates of
//! RFC 5348; R0 is one number for all flows; the router sees its own hop only. These make
//! transparency approximate, as the document says; the default `target` of 0.9 leaves a
//! margin for them (with target 1, the green flow ended 2-3 % above its blue throughput in
//! some of the settings of tests/abe.rs).
//!
//! # Parameters (units)
//!
//! | name | unit | default | meaning |
//! |---|---|---|---|
//! | period | time | 1s | control period T |
//! | gain | 1 | 0.1 | integrator gain on ln(rho / target) |
//! | rtt | time | 100ms | R0, the round-trip time away from this hop |
//! | weight | 1, (0, 1] | 0.5 | EWMA weight of the newest period |
//! | target | 1, > 0 | 0.9 | the ratio X_green / X_blue aimed at |
//! | max_penalty | 1, [0, 1) | 0.5 | largest extra drop probability of green (0: g only) |

use crate::time::{Duration, SimTime};
use crate::transport::tfrc::throughput_equation;

/// Configured parameters of the loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControlParams {
    pub period: Duration,
    pub gain: f64,
    pub rtt: Duration,
    pub weight: f64,
    pub target: f64,
    pub max_penalty: f64,
}

impl Default for ControlParams {
    fn default() -> Self {
        ControlParams {
            period: Duration::from_secs(1),
            gain: 0.1,
            rtt: Duration::from_millis(100),
            weight: 0.5,
            target: 0.9,
            max_penalty: 0.5,
        }
    }
}

/// The sums measured over one period (or their moving averages), for one colour.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ColourSums {
    pub arrivals: f64,
    pub losses: f64,
    /// Sum of queueing delays of served packets, in seconds.
    pub wait_s: f64,
    pub served: f64,
}

impl ColourSums {
    fn blend(&mut self, new: &ColourSums, w: f64) {
        self.arrivals += w * (new.arrivals - self.arrivals);
        self.losses += w * (new.losses - self.losses);
        self.wait_s += w * (new.wait_s - self.wait_s);
        self.served += w * (new.served - self.served);
    }
    /// Loss ratio and mean queueing delay (s).
    fn estimates(&self) -> (f64, f64) {
        let p = if self.arrivals > 0.0 {
            self.losses / self.arrivals
        } else {
            0.0
        };
        let q = if self.served > 0.0 {
            self.wait_s / self.served
        } else {
            0.0
        };
        (p, q)
    }
}

/// The loop's evolving variables.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ControlState {
    /// The actuator: g = max(u, 0), penalty = max(-u, 0).
    pub u: f64,
    pub next_update: SimTime,
    /// This period's sums: [blue, green].
    pub period: [ColourSums; 2],
    /// Their moving averages.
    pub smoothed: [ColourSums; 2],
    /// The ratio computed at the last boundary (NaN before the first, and when that boundary
    /// held or had one colour without loss).
    pub last_ratio: f64,
}

/// The loop's state after one period boundary: a row of the `dsd_control` table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControlSample {
    /// The boundary (end of the period just closed).
    pub t: SimTime,
    /// The actuator after the update: g = max(u, 0), penalty = max(-u, 0).
    pub u: f64,
    /// rho computed at this boundary (NaN when the loop held or one colour had no loss).
    pub ratio: f64,
    /// The smoothed estimates behind it: loss ratio and mean queueing delay (s), [blue,
    /// green].
    pub p: [f64; 2],
    pub q_s: [f64; 2],
}

impl ControlSample {
    pub fn g(&self) -> f64 {
        self.u.max(0.0)
    }
    pub fn penalty(&self) -> f64 {
        (-self.u).max(0.0)
    }
}

/// Most samples kept (one per period: 1 s periods fill it in 11.5 simulated days).
pub const MAX_SAMPLES: usize = 1_000_000;

/// What the loop did, for results and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ControlCounters {
    pub updates: u64,
    /// Periods left without update (a colour absent or no congestion signal).
    pub holds: u64,
    /// Integral of g over the periods (sum of g after each period boundary, times periods).
    pub g_sum: f64,
    pub periods: u64,
}

#[derive(Debug, Clone)]
pub struct ControlLoop {
    pub params: ControlParams,
    pub state: ControlState,
    pub counters: ControlCounters,
    /// The actuator at time 0, then one sample per period boundary the loop closed.
    pub history: Vec<ControlSample>,
}

pub const BLUE: usize = 0;
pub const GREEN: usize = 1;

impl ControlLoop {
    pub fn new(params: ControlParams, g0: f64) -> Self {
        ControlLoop {
            params,
            state: ControlState {
                u: g0,
                next_update: SimTime::ZERO + params.period,
                last_ratio: f64::NAN,
                ..Default::default()
            },
            counters: ControlCounters::default(),
            history: Vec::new(),
        }
    }

    pub fn g(&self) -> f64 {
        self.state.u.max(0.0)
    }

    pub fn penalty(&self) -> f64 {
        (-self.state.u).max(0.0)
    }

    #[inline]
    pub fn on_arrival(&mut self, colour: usize) {
        self.state.period[colour].arrivals += 1.0;
    }

    #[inline]
    pub fn on_loss(&mut self, colour: usize) {
        self.state.period[colour].losses += 1.0;
    }

    #[inline]
    pub fn on_served(&mut self, colour: usize, wait: Duration) {
        let s = &mut self.state.period[colour];
        s.served += 1.0;
        s.wait_s += wait.as_secs_f64();
    }

    /// Closes every period that ended by `now` (lazily: the loop runs when packets come).
    /// Returns true if the actuator changed.
    pub fn tick(&mut self, now: SimTime) -> bool {
        if now < self.state.next_update {
            return false;
        }
        let before = self.state.u;
        // The sums since the last boundary belong to the period that just ended; periods
        // with no packet at all (the port was silent) change nothing.
        self.state.last_ratio = f64::NAN;
        self.close_period();
        if self.history.len() < MAX_SAMPLES {
            let [b, g] = self.state.smoothed;
            let ((p_b, q_b), (p_g, q_g)) = (b.estimates(), g.estimates());
            self.history.push(ControlSample {
                t: self.state.next_update,
                u: self.state.u,
                ratio: self.state.last_ratio,
                p: [p_b, p_g],
                q_s: [q_b, q_g],
            });
        }
        let periods_skipped = (now - self.state.next_update).0 / self.params.period.0.max(1);
        self.counters.periods += periods_skipped;
        self.counters.g_sum += self.g() * periods_skipped as f64;
        self.state.next_update += Duration(self.params.period.0 * (periods_skipped + 1));
        self.state.u != before
    }

    fn close_period(&mut self) {
        let w = self.params.weight;
        let st = &mut self.state;
        for c in [BLUE, GREEN] {
            let new = st.period[c];
            st.smoothed[c].blend(&new, w);
            st.period[c] = ColourSums::default();
        }
        self.counters.periods += 1;
        match self.error() {
            Some(e) => {
                let p = &self.params;
                self.state.u = (self.state.u - p.gain * e).clamp(-p.max_penalty, 1.0);
                self.counters.updates += 1;
            }
            None => self.counters.holds += 1,
        }
        self.counters.g_sum += self.g();
    }

    /// e = ln(rho / target) clamped to [-1, 1], or None when the loop should hold.
    fn error(&mut self) -> Option<f64> {
        let [blue, green] = self.state.smoothed;
        if blue.arrivals <= 0.0 || green.arrivals <= 0.0 {
            return None;
        }
        let (p_b, q_b) = blue.estimates();
        let (p_g, q_g) = green.estimates();
        let r0 = self.params.rtt.as_secs_f64();
        let e = match (p_g > 0.0, p_b > 0.0) {
            (false, false) => return None,
            (true, false) => -1.0,
            (false, true) => 1.0,
            (true, true) => {
                let x = |p: f64, r: f64| throughput_equation(1.0, r, p, 4.0 * r, 1.0);
                let rho = x(p_g, r0 + q_g) / x(p_b, r0 + q_b);
                self.state.last_ratio = rho;
                (rho / self.params.target).ln().clamp(-1.0, 1.0)
            }
        };
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(c: &mut ControlLoop, colour: usize, arrivals: u32, losses: u32, wait: Duration) {
        for i in 0..arrivals {
            c.on_arrival(colour);
            if i < losses {
                c.on_loss(colour);
            } else {
                c.on_served(colour, wait);
            }
        }
    }

    #[test]
    fn green_ahead_lowers_g_and_green_behind_raises_it() {
        // Equal loss ratios (1 %), green waits 1 ms, blue 200 ms, R0 = 100 ms: green's
        // formula throughput is (0.3 / 0.101) = 2.97 times blue's, e = min(ln 2.97, 1) = 1,
        // so u falls by gain = 0.1 per period: 1.0 -> 0.9.
        let p = ControlParams {
            target: 1.0,
            ..Default::default()
        };
        let mut c = ControlLoop::new(p, 1.0);
        feed(&mut c, BLUE, 1000, 10, Duration::from_millis(200));
        feed(&mut c, GREEN, 1000, 10, Duration::from_millis(1));
        assert!(c.tick(SimTime::ZERO + Duration::from_secs(1)));
        assert!((c.state.last_ratio - 0.3 / 0.101).abs() < 1e-9);
        assert!((c.g() - 0.9).abs() < 1e-12);
        // Green now loses 30 % and blue 1 %. Smoothed (weight 0.5, from zero): green
        // arrivals 0.25 * 1000 + 0.5 * 1000 = 750, losses 0.25 * 10 + 0.5 * 300 = 152.5,
        // p_g = 0.2033; X(0.2033, 0.101 s) = 5.12 against X(0.01, 0.3 s) = 37.4 per s:
        // rho = 0.137, e = max(ln 0.137, -1) = -1: u rises back by 0.1.
        feed(&mut c, BLUE, 1000, 10, Duration::from_millis(200));
        feed(&mut c, GREEN, 1000, 300, Duration::from_millis(1));
        assert!(c.tick(SimTime::ZERO + Duration::from_secs(2)));
        assert!(c.state.last_ratio < 0.37);
        assert!((c.g() - 1.0).abs() < 1e-12, "clamped at 1");
    }

    #[test]
    fn g_stays_in_its_range_and_the_penalty_takes_over_below_zero() {
        let p = ControlParams {
            max_penalty: 0.2,
            gain: 0.5,
            ..Default::default()
        };
        let mut c = ControlLoop::new(p, 0.3);
        for k in 1..=10 {
            feed(&mut c, BLUE, 100, 5, Duration::from_millis(300));
            feed(&mut c, GREEN, 100, 0, Duration::from_millis(1));
            c.tick(SimTime::ZERO + Duration::from_secs(k));
            assert!((0.0..=1.0).contains(&c.g()));
        }
        // Green never loses, blue does: e = +1 every period, u = 0.3 - 10 * 0.5 clamps at -0.2.
        assert_eq!(c.g(), 0.0);
        assert!((c.penalty() - 0.2).abs() < 1e-12);
    }

    #[test]
    fn holds_without_blue_or_without_losses() {
        let mut c = ControlLoop::new(ControlParams::default(), 0.7);
        feed(&mut c, GREEN, 100, 50, Duration::ZERO);
        assert!(!c.tick(SimTime::ZERO + Duration::from_secs(1)));
        feed(&mut c, BLUE, 100, 0, Duration::ZERO);
        feed(&mut c, GREEN, 100, 0, Duration::ZERO);
        // Smoothed green losses are still positive from period 1 (0.5 * 0.5 * 50 = 12.5
        // of 0.5 * 50 + 0.5 * 100 = 75 arrivals), blue has none: e = -1, u rises to 0.8.
        assert!(c.tick(SimTime::ZERO + Duration::from_secs(2)));
        assert!((c.g() - 0.8).abs() < 1e-12);
        assert_eq!(c.counters.holds, 1);
        assert_eq!(c.counters.updates, 1);
    }

    #[test]
    fn silent_periods_are_skipped_in_one_step() {
        let mut c = ControlLoop::new(ControlParams::default(), 1.0);
        c.tick(SimTime::ZERO + Duration::from_millis(5500));
        assert_eq!(c.state.next_update, SimTime::ZERO + Duration::from_secs(6));
        assert_eq!(c.counters.periods, 5);
    }
}
