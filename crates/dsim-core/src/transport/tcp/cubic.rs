//! CUBIC: RFC 9438, "CUBIC for Fast and Long-Distance Networks", section 4.
//!
//! RFC 9438 counts windows in segments and time in seconds; dsim keeps cwnd in bytes, so
//! every window below is in bytes (a window of w segments is w SMSS bytes) and C, given in
//! segments / s^3, is multiplied by SMSS.
//!
//! ```text
//! congestion event (loss, ECE)      W_max = cwnd (1 + beta) / 2 if cwnd < W_max and fast
//!                                           convergence, else cwnd              (4.7)
//!                                   cwnd_prior = cwnd
//!                                   ssthresh = max(FlightSize * beta, 2 SMSS)    (4.6)
//! timeout                           ssthresh as (4.6); W_max undefined            (4.8)
//! first ACK of new data in          t_epoch = now, cwnd_epoch = cwnd, W_est = cwnd_epoch
//!   congestion avoidance            K = cbrt((W_max - cwnd_epoch) / C)            (4.2, 4.3)
//!                                   (W_max undefined: W_max = cwnd_epoch, K = 0)  (4.8, 4.10)
//! each ACK of new data in CA        t = now - t_epoch
//!                                   W_cubic(t) = C (t - K)^3 + W_max              (4.2, eq. 1)
//!                                   target = W_cubic(t + RTT), within [cwnd, 1.5 cwnd]
//!                                   W_est += alpha * segments_acked / cwnd        (4.3, eq. 4)
//!                                   alpha = 1 once W_est >= cwnd_prior, else
//!                                           alpha_cubic = 3 (1 - beta) / (1 + beta)
//!                                   W_cubic(t) < W_est: cwnd = W_est (Reno-friendly)
//!                                   else cwnd += (target - cwnd) / cwnd           (4.4, 4.5)
//! ```
//!
//! dsim's readings where the RFC leaves room, and where Linux and ns-3 differ:
//! - "segments acknowledged" follows the connection's `counting`: with byte counting an
//!   ACK counts the bytes it acknowledges (RFC 3465; what Linux and ns-3 do by counting
//!   the segments an ACK covers), with per-ACK counting one segment per ACK (the letter of
//!   4.4 and 4.5, "for each received new ACK"). Increments are exact: the fraction of a
//!   byte is carried to the next ACK.
//! - RTT in `target` is the smoothed RTT (4.2, the default) or the smallest RTT sample
//!   (`rtt = "min"`: Linux's and ns-3's `delay_min`).
//! - In the Reno-friendly region cwnd is set to W_est but never lowered: 4.2's bounds keep
//!   congestion avoidance from reducing cwnd.
//! - K is the real cube root: a cwnd_epoch above W_max (possible after a Reno or NewReno
//!   recovery) gives a negative K, and W_cubic(0) = cwnd_epoch still holds.
//! - ssthresh uses FlightSize as 4.6 says; Linux and ns-3 use cwnd, which 4.6 allows only
//!   with measures against cwnd growing beyond what is in flight (dsim has none, RFC 7661).
//!   For a sender limited by cwnd the two are the same at the moment of the loss.
//! - When the application writes after the connection sent and had acknowledged all it
//!   had, t_epoch moves forward by the time since the last send (no later than now): t
//!   excludes application-limited periods (5.8; Linux shifts it on CA_EVENT_TX_START).
//! - Slow start is the sender's RFC 5681 slow start (4.10 allows it; HyStart++ is not
//!   modelled). ns-3's TcpCubic uses the older HyStart (Ha and Rhee) by default.
//!   Linux's and ns-3.37's other differences (no W_est in ns-3.37, Linux's own Reno
//!   estimate, integer windows in segments) are in docs/tcp.md.

use serde::{Deserialize, Serialize};

use super::congestion::{Acked, Event, Signal};
use crate::params::Params;
use crate::time::{Duration, SimTime};

fn default_c() -> f64 {
    0.4
}
fn default_beta() -> f64 {
    0.7
}
fn yes() -> bool {
    true
}

/// `tcp.cubic`: the constants and options of CUBIC (used with `congestion = "cubic"`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 9438")]
pub struct CubicSpec {
    /// C, the aggressiveness of the cubic increase, in segments / s^3 ("C SHOULD be set to
    /// 0.4").
    #[serde(default = "default_c")]
    #[param(range = "(0, inf)", section = "5.1")]
    pub c: f64,
    /// beta_cubic, the multiplicative decrease factor ("SHOULD be set to 0.7").
    #[serde(default = "default_beta")]
    #[param(range = "(0, 1)", section = "4.6")]
    pub beta: f64,
    /// Fast convergence: a congestion event below the last W_max lowers W_max further
    /// (a SHOULD of the RFC; on in Linux and ns-3).
    #[serde(default = "yes")]
    #[param(section = "4.7")]
    pub fast_convergence: bool,
    /// The Reno-friendly region: cwnd follows the Reno estimate W_est where the cubic
    /// function is below it (a SHOULD of the RFC; ns-3.37 has none, Linux its own
    /// estimate).
    #[serde(default = "yes")]
    #[param(section = "4.3")]
    pub reno_friendly: bool,
    /// The RTT in target = W_cubic(t + RTT): "srtt", the smoothed RTT of RFC 6298 (the
    /// RFC's), or "min", the smallest RTT sample (Linux's and ns-3's delay_min).
    #[serde(default)]
    #[param(section = "4.2")]
    pub rtt: CubicRtt,
}

impl Default for CubicSpec {
    fn default() -> Self {
        CubicSpec {
            c: default_c(),
            beta: default_beta(),
            fast_convergence: true,
            reno_friendly: true,
            rtt: CubicRtt::Srtt,
        }
    }
}

/// Which RTT CUBIC looks ahead by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "lowercase")]
pub enum CubicRtt {
    #[default]
    Srtt,
    Min,
}

/// The current congestion avoidance stage (4.1.3's t_epoch, cwnd_epoch, K, W_est).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Epoch {
    pub start: SimTime,
    /// K in seconds.
    pub k: f64,
    /// W_max of this stage, bytes (the plateau of W_cubic).
    pub w_max: f64,
    /// The Reno estimate, bytes.
    pub w_est: f64,
    /// alpha of eq. 4: alpha_cubic, then 1 once W_est reaches cwnd_prior.
    pub alpha: f64,
}

/// CUBIC's state (4.1.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cubic {
    pub spec: CubicSpec,
    /// W_max in bytes; None while undefined (before the first congestion event, after a
    /// timeout).
    pub w_max: Option<f64>,
    /// cwnd when ssthresh was last set, bytes.
    pub cwnd_prior: f64,
    /// None between a congestion event and the next ACK in congestion avoidance.
    pub epoch: Option<Epoch>,
    /// The smallest RTT sample (for `rtt = "min"`).
    min_rtt: Option<Duration>,
    /// The fraction of a byte the last increments left over.
    carry: f64,
}

impl Cubic {
    pub fn new(spec: CubicSpec) -> Self {
        Cubic {
            spec,
            w_max: None,
            cwnd_prior: 0.0,
            epoch: None,
            min_rtt: None,
            carry: 0.0,
        }
    }

    /// alpha_cubic of 4.3: the additive increase that gives AIMD(alpha, beta) Reno's
    /// average window.
    pub fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.spec.beta) / (1.0 + self.spec.beta)
    }

    /// C in bytes / s^3 for segments of `mss` bytes.
    fn c_bytes(&self, mss: u64) -> f64 {
        self.spec.c * mss as f64
    }

    /// Eq. 1: W_cubic(t) in bytes, t seconds into the stage.
    pub fn w_cubic(&self, e: &Epoch, t: f64, mss: u64) -> f64 {
        self.c_bytes(mss) * (t - e.k).powi(3) + e.w_max
    }

    /// Eq. 2, and 4.8 / 4.10 when W_max is undefined: the stage that starts at `now` with
    /// cwnd_epoch = `cwnd`.
    fn start_epoch(&mut self, now: SimTime, cwnd: u64, mss: u64) -> Epoch {
        let cwnd = cwnd as f64;
        let w_max = *self.w_max.get_or_insert(cwnd);
        Epoch {
            start: now,
            k: ((w_max - cwnd) / self.c_bytes(mss)).cbrt(),
            w_max,
            w_est: cwnd,
            alpha: self.alpha_cubic(),
        }
    }

    fn rtt(&self, a: &Acked) -> f64 {
        let rtt = match self.spec.rtt {
            CubicRtt::Srtt => a.srtt,
            CubicRtt::Min => self.min_rtt,
        };
        rtt.map_or(0.0, Duration::as_secs_f64)
    }

    /// cwnd after an ACK of new data in congestion avoidance (4.2-4.5).
    pub fn avoid(&mut self, cwnd: u64, a: &Acked) -> u64 {
        let mut e = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(a.now, cwnd, a.mss),
        };
        let t = (a.now - e.start).as_secs_f64();
        let w = cwnd as f64;
        // 4.2: the target one RTT ahead, no lower than cwnd, at most 1.5 cwnd.
        let target = self.w_cubic(&e, t + self.rtt(a), a.mss).clamp(w, 1.5 * w);
        // 4.3, eq. 4, in bytes: alpha SMSS per cwnd of data acknowledged.
        let counted = a.counted() as f64;
        e.w_est += e.alpha * a.mss as f64 * counted / w;
        if e.w_est >= self.cwnd_prior {
            e.alpha = 1.0;
        }
        let exact = w + self.carry;
        let next = if self.spec.reno_friendly && self.w_cubic(&e, t, a.mss) < e.w_est {
            // 4.3: the Reno-friendly region.
            exact.max(e.w_est)
        } else {
            // 4.4 (cwnd < W_max) and 4.5 (cwnd >= W_max) increase alike.
            exact + (target - w) * counted / w
        };
        self.epoch = Some(e);
        let whole = next.floor();
        self.carry = next - whole;
        whole as u64
    }

    /// ssthresh of a congestion event, and the state 4.6-4.8 keep for the next stage.
    pub fn ssthresh(&mut self, ev: &Event) -> u64 {
        let cwnd = ev.cwnd as f64;
        match ev.signal {
            Signal::Loss | Signal::Ecn => {
                // 4.7, before the reduction.
                self.w_max = Some(match self.w_max {
                    Some(w) if self.spec.fast_convergence && cwnd < w => cwnd * (1.0 + self.spec.beta) / 2.0,
                    _ => cwnd,
                });
            }
            // 4.8: the first stage after a timeout sets W_max to its cwnd_epoch, K = 0.
            Signal::Timeout => self.w_max = None,
        }
        self.cwnd_prior = cwnd;
        self.epoch = None;
        // 4.6: ssthresh = flight_size * beta_cubic (to the nearest byte), at least 2 SMSS.
        ((ev.flight as f64 * self.spec.beta).round() as u64).max(2 * ev.mss)
    }

    /// cwnd was set by someone else: no fraction carries over.
    pub fn restart_count(&mut self) {
        self.carry = 0.0;
    }

    pub fn rtt_sample(&mut self, r: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
    }

    /// 5.8: t excludes an idle period of length `idle` that ends at `now` (the stage
    /// starts no later than now, as Linux clamps it).
    pub fn after_idle(&mut self, idle: Duration, now: SimTime) {
        if let Some(e) = &mut self.epoch {
            e.start = (e.start + idle).min(now);
        }
    }

    /// K of the current stage in seconds (NaN between stages), for the series table.
    pub fn k(&self) -> f64 {
        self.epoch.map_or(f64::NAN, |e| e.k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::Counting;

    const MSS: u64 = 1000;

    fn acked(now_ms: u64, bytes: u64, srtt_ms: u64, counting: Counting) -> Acked {
        Acked {
            now: SimTime(now_ms * 1_000_000),
            bytes,
            mss: MSS,
            counting,
            srtt: Some(Duration::from_millis(srtt_ms)),
        }
    }

    fn loss(cwnd: u64, flight: u64) -> Event {
        Event {
            signal: Signal::Loss,
            now: SimTime::ZERO,
            cwnd,
            flight,
            mss: MSS,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn k_and_w_cubic_at_hand_computed_points() {
        // A loss at cwnd = 100 segments: W_max = 100 (no earlier W_max), ssthresh =
        // 0.7 * 100 = 70 segments. The stage starts at cwnd_epoch = 70: K = cbrt((100 - 70)
        // / 0.4) = cbrt(75) = 4.2171633 s.
        let mut c = Cubic::new(CubicSpec::default());
        assert_eq!(c.ssthresh(&loss(100 * MSS, 100 * MSS)), 70 * MSS);
        assert_eq!(c.w_max, Some(100_000.0));
        let e = c.start_epoch(SimTime::ZERO, 70 * MSS, MSS);
        assert!(close(e.k, 75f64.cbrt()), "{}", e.k);
        assert!(close(e.k, 4.217_163_326_508_746));
        // W_cubic(0) = cwnd_epoch; W_cubic(K) = W_max; W_cubic(1 s) = 0.4 (1 - K)^3 + 100
        // = 100 - 0.4 * 3.2171633^3 = 100 - 13.3193 = 86.6807 segments; W_cubic(K + 2 s) =
        // 100 + 0.4 * 8 = 103.2 segments.
        assert!(close(c.w_cubic(&e, 0.0, MSS), 70_000.0));
        assert!(close(c.w_cubic(&e, e.k, MSS), 100_000.0));
        let at1 = 100.0 - 0.4 * (1.0 - 75f64.cbrt()).powi(3).abs();
        assert!(close(c.w_cubic(&e, 1.0, MSS), at1 * 1000.0));
        assert!((c.w_cubic(&e, 1.0, MSS) - 86_680.7).abs() < 0.1);
        assert!(close(c.w_cubic(&e, e.k + 2.0, MSS), 103_200.0));
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        // 4.7: W_max = 100; the next loss at cwnd 80 < 100: W_max = 80 (1 + 0.7) / 2 = 68.
        let mut c = Cubic::new(CubicSpec::default());
        c.ssthresh(&loss(100 * MSS, 100 * MSS));
        c.ssthresh(&loss(80 * MSS, 80 * MSS));
        assert_eq!(c.w_max, Some(68_000.0));
        // A loss above W_max remembers cwnd.
        c.ssthresh(&loss(90 * MSS, 90 * MSS));
        assert_eq!(c.w_max, Some(90_000.0));
        // Without fast convergence W_max is cwnd at every loss.
        let mut plain = Cubic::new(CubicSpec {
            fast_convergence: false,
            ..Default::default()
        });
        plain.ssthresh(&loss(100 * MSS, 100 * MSS));
        plain.ssthresh(&loss(80 * MSS, 80 * MSS));
        assert_eq!(plain.w_max, Some(80_000.0));
    }

    #[test]
    fn ssthresh_uses_flight_size_and_two_segments_at_least() {
        let mut c = Cubic::new(CubicSpec::default());
        assert_eq!(c.ssthresh(&loss(100 * MSS, 60 * MSS)), 42 * MSS);
        assert_eq!(c.ssthresh(&loss(2 * MSS, 2 * MSS)), 2 * MSS);
        // 4.8: a timeout leaves W_max undefined: the next stage starts with K = 0 at its cwnd.
        let t = Event {
            signal: Signal::Timeout,
            ..loss(50 * MSS, 50 * MSS)
        };
        assert_eq!(c.ssthresh(&t), 35 * MSS);
        assert_eq!(c.w_max, None);
        let e = c.start_epoch(SimTime::ZERO, 35 * MSS, MSS);
        assert_eq!((e.k, e.w_max), (0.0, 35_000.0));
    }

    #[test]
    fn concave_increase_per_ack_and_by_bytes() {
        // W_max = 100 segments, cwnd_epoch = 70, SRTT 100 ms, no Reno-friendly region.
        // First ACK at t = 0 (stage starts): target = W_cubic(0.1) = 100 - 0.4 (K - 0.1)^3.
        // Per-ACK counting adds (target - cwnd) / cwnd segments = (target - 70000) * 1000 /
        // 70000 bytes.
        let spec = CubicSpec {
            reno_friendly: false,
            ..Default::default()
        };
        let k = 75f64.cbrt();
        let target = (100.0 - 0.4 * (k - 0.1f64).powi(3)) * 1000.0;
        let inc = (target - 70_000.0) * 1000.0 / 70_000.0;
        for (counting, bytes, want) in [
            (Counting::Packets, 2000, inc),
            // Byte counting: an ACK of two segments counts twice.
            (Counting::Bytes, 2000, 2.0 * inc),
        ] {
            let mut c = Cubic::new(spec);
            c.ssthresh(&loss(100 * MSS, 100 * MSS));
            let cwnd = c.avoid(70 * MSS, &acked(0, bytes, 100, counting));
            assert_eq!(cwnd, 70_000 + want.floor() as u64, "{counting:?}");
            assert!(close(c.carry, want - want.floor()));
        }
    }

    #[test]
    fn target_is_at_most_one_and_a_half_cwnd_and_at_least_cwnd() {
        // Far beyond K the cubic function is huge: the increase per ACK is at most
        // (1.5 cwnd - cwnd) / cwnd = half a segment. Before a stage with K > 0 starts its
        // climb... below cwnd it adds nothing.
        let spec = CubicSpec {
            reno_friendly: false,
            ..Default::default()
        };
        let mut c = Cubic::new(spec);
        c.ssthresh(&loss(100 * MSS, 100 * MSS));
        c.avoid(70 * MSS, &acked(0, 1000, 100, Counting::Packets));
        let before = 70_000.0 + c.carry;
        let cwnd = c.avoid(70_000, &acked(100_000, 1000, 100, Counting::Packets));
        assert!(close(cwnd as f64 + c.carry, before + 500.0));
        // A stage whose cwnd_epoch is above W_max with K = 0 (after a timeout): W_cubic(t +
        // RTT) at t = 0 is C RTT^3 + W_max = cwnd + 0.4 * 0.001 segments: 0.0004 / 70
        // segments per ACK.
        let mut c = Cubic::new(spec);
        c.ssthresh(&Event {
            signal: Signal::Timeout,
            ..loss(100 * MSS, 100 * MSS)
        });
        let cwnd = c.avoid(70 * MSS, &acked(0, 1000, 100, Counting::Packets));
        assert_eq!(cwnd, 70 * MSS);
        assert!(close(c.carry, 0.4 * 0.001 * 1000.0 * 1000.0 / 70_000.0));
    }

    #[test]
    fn reno_friendly_switch() {
        // W_max = 10 segments, cwnd_epoch = 7: K = cbrt(3 / 0.4) = 1.957 s, a flat cubic
        // curve: W_cubic stays below W_est, which grows by alpha_cubic = 3 * 0.3 / 1.7 =
        // 0.5294 segments per window: cwnd follows W_est. Per-ACK counting, one ACK per
        // segment, 10 ms apart.
        let mut c = Cubic::new(CubicSpec::default());
        c.ssthresh(&loss(10 * MSS, 10 * MSS));
        let alpha = 3.0 * (1.0 - 0.7) / (1.0 + 0.7);
        let mut cwnd = 7 * MSS;
        let mut w_est = 7000.0;
        for i in 0..7 {
            w_est += alpha * 1000.0 * 1000.0 / cwnd as f64;
            cwnd = c.avoid(cwnd, &acked(i * 10, 1000, 100, Counting::Packets));
            assert_eq!(cwnd, w_est.floor() as u64, "ACK {i}");
        }
        let e = c.epoch.unwrap();
        assert!(close(e.w_est, w_est));
        assert_eq!(e.alpha, alpha, "W_est below cwnd_prior = 10 segments");
        // Once W_est reaches cwnd_prior, alpha becomes 1 (4.3).
        let mut e = c.epoch.unwrap();
        e.w_est = 9999.9;
        c.epoch = Some(e);
        c.avoid(10 * MSS, &acked(100, 1000, 100, Counting::Packets));
        assert_eq!(c.epoch.unwrap().alpha, 1.0);
        // Without the region, cwnd follows the cubic curve: at t = 0 its target is below
        // cwnd + alpha, so cwnd grows more slowly.
        let mut plain = Cubic::new(CubicSpec {
            reno_friendly: false,
            ..Default::default()
        });
        plain.ssthresh(&loss(10 * MSS, 10 * MSS));
        let slow = plain.avoid(7 * MSS, &acked(0, 1000, 100, Counting::Packets));
        assert!(slow < 7 * MSS + 75, "{slow}");
    }

    #[test]
    fn idle_time_is_left_out_of_t() {
        let mut c = Cubic::new(CubicSpec::default());
        c.ssthresh(&loss(100 * MSS, 100 * MSS));
        c.avoid(70 * MSS, &acked(1000, 1000, 100, Counting::Packets));
        c.after_idle(Duration::from_millis(500), SimTime(3_000_000_000));
        assert_eq!(c.epoch.unwrap().start, SimTime(1_500_000_000));
        // Never beyond now: t stays >= 0.
        c.after_idle(Duration::from_millis(900), SimTime(2_000_000_000));
        assert_eq!(c.epoch.unwrap().start, SimTime(2_000_000_000));
    }
}
