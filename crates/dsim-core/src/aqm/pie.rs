//! PIE: Proportional Integral controller Enhanced, RFC 8033.
//!
//! An arriving packet is dropped at random with probability `drop_prob` (section 4.1),
//! which a controller updates every `tupdate` (T_UPDATE, 15 ms) from the queue delay
//! (section 4.2):
//!
//! ```text
//! p = alpha (current_qdelay - QDELAY_REF) + beta (current_qdelay - qdelay_old)
//! p scaled by 1/2048, 1/512, 1/128, 1/32, 1/8, 1/2 while drop_prob < 1e-6, 1e-5, ..., 0.1
//! (capped at 0.02 when drop_prob >= 0.1: section 5.5)
//! drop_prob += p; drop_prob *= 0.98 when both delays are 0; drop_prob bounded to [0, 1]
//! ```
//!
//! with alpha and beta in Hz and the delays in seconds. The pseudo-code followed is
//! Appendix A (the basic scheme) with Appendix B's options: burst allowance (4.4), ECN
//! (5.1), the departure-rate estimator (5.2, 4.3), derandomization (5.4) and the cap on
//! the adjustment (5.5). Section 5.3 (switching PIE off on an idle queue) is left out: PIE
//! is always active, as in Linux and ns-3.
//!
//! dsim's choices, where the RFC leaves room:
//! - The update runs at every multiple of `tupdate` from time 0, without an event: the
//!   queue does not change between packets, so the updates due are caught up, in order,
//!   when the next packet arrives or leaves (an update due at that very instant first).
//!   An idle queue whose state no longer moves (drop_prob 0, delays 0, no burst allowance
//!   left) skips the updates it would waste.
//! - Queue delay (`delay = "timestamp"`, the default, as Linux since 5.2 and ns-3): the
//!   sojourn time of the last packet that left (4.3, "timestamps"), 0 once the queue has
//!   emptied, as Linux (by the pseudo-code's letter an idle queue would keep the last
//!   packet's delay and never decay). `delay = "rate"`: the queue length over the
//!   departure rate measured over `dq_threshold` bytes (5.2), averaged with weight
//!   DQ_THRESHOLD / 2^16 = 1/4, measured from a dequeue that leaves at least dq_threshold
//!   bytes queued; 0 until the first measurement.
//! - Derandomization resets the accumulated probability after every early drop or mark
//!   (Linux), not only after a random one: by the letter, a queue whose sum reached 8.5
//!   would drop every later packet until a random draw reset it.
//! - ECN (5.1): an ECN-capable packet is marked instead of dropped while drop_prob is at
//!   most `mark_ecnth` (10 %); above, it is dropped.
//! - The burst allowance is refilled on arrival (Appendix A) and goes down by tupdate at
//!   each update, not below 0.

use rand::RngExt;
use serde::{Deserialize, Serialize};

use super::red::Congestion;
use super::{AqmQueue, DropTailQueue};
use crate::discipline::QueueCtx;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Bytes, Duration, Limit, SimTime};

fn default_pie_limit() -> Limit {
    Limit::Packets(1000)
}
fn default_qdelay_ref() -> Duration {
    Duration::from_millis(15)
}
fn default_tupdate() -> Duration {
    Duration::from_millis(15)
}
fn default_alpha() -> f64 {
    0.125
}
fn default_beta() -> f64 {
    1.25
}
fn default_max_burst() -> Duration {
    Duration::from_millis(150)
}
fn default_mark_ecnth() -> f64 {
    0.1
}
fn default_dq_threshold() -> Bytes {
    Bytes(1 << 14)
}
fn default_mean_pkt_size() -> Bytes {
    Bytes(1500)
}
fn yes() -> bool {
    true
}

/// How PIE measures the queue delay (RFC 8033 section 4.3).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum PieDelay {
    /// The sojourn time of the last packet that left (0 once the queue is empty).
    #[default]
    Timestamp,
    /// Queue length over the measured departure rate (Little's law, section 5.2).
    Rate,
}

crate::delay_aqm_table! {
/// `type = "pie"`: one FIFO queue with PIE (RFC 8033).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 8033")]
pub struct PieSpec {
    /// Physical limit: packets ("1000p", Linux's default) or bytes; a packet that does not
    /// fit is an overflow drop.
    #[serde(default = "default_pie_limit")]
    #[param(range = "(0, inf)")]
    pub limit: Limit,
    /// QDELAY_REF, the queue delay PIE steers to.
    #[serde(default = "default_qdelay_ref")]
    #[param(range = "(0, inf)", section = "4.2")]
    pub target: Duration,
    /// T_UPDATE, the period of the drop probability update.
    #[serde(default = "default_tupdate")]
    #[param(range = "(0, inf)", section = "4.2")]
    pub tupdate: Duration,
    /// Weight of the delay's distance from target, per second (Hz).
    #[serde(default = "default_alpha")]
    #[param(range = "[0, inf)", section = "4.2")]
    pub alpha: f64,
    /// Weight of the delay's change since the last update, per second (Hz).
    #[serde(default = "default_beta")]
    #[param(range = "[0, inf)", section = "4.2")]
    pub beta: f64,
    /// MAX_BURST: how long a burst passes without early drops once the queue was calm.
    #[serde(default = "default_max_burst")]
    #[param(range = "[0, inf)", section = "4.4")]
    pub max_burst: Duration,
    /// How the queue delay is measured: "timestamp" (each packet's sojourn time) or
    /// "rate" (queue length over the measured departure rate).
    #[serde(default)]
    #[param(section = "4.3")]
    pub delay: PieDelay,
    /// DQ_THRESHOLD: bytes over which the departure rate is measured (delay = "rate").
    #[serde(default = "default_dq_threshold")]
    #[param(range = "[1B, inf)", section = "5.2")]
    pub dq_threshold: Bytes,
    /// MEAN_PKTSIZE: no early drop while at most two such packets are queued.
    #[serde(default = "default_mean_pkt_size")]
    #[param(range = "[0B, inf)", section = "4.1")]
    pub mean_pkt_size: Bytes,
    /// The drop probability above which ECN-capable packets are dropped, not marked.
    #[serde(default = "default_mark_ecnth")]
    #[param(range = "[0, 1]", section = "5.1")]
    pub mark_ecnth: f64,
    /// Spread drops evenly: no drop until the probabilities summed since the last one
    /// reach 0.85, a drop once they reach 8.5.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[param(section = "5.4")]
    pub derandomize: bool,
    /// Cap an update's increase at 0.02 once drop_prob >= 0.1.
    #[serde(default = "yes")]
    #[param(section = "5.5")]
    pub cap_drop_adjustment: bool,
}
}

impl PieSpec {
    /// The FIFO with PIE this table declares.
    pub fn queue(&self, path: &KeyPath) -> Result<AqmQueue, ConfigError> {
        self.check(path)?;
        let params = PieParams {
            target: self.target,
            tupdate: self.tupdate,
            alpha: self.alpha,
            beta: self.beta,
            max_burst: self.max_burst,
            delay: self.delay,
            dq_threshold: self.dq_threshold.0,
            mean_pkt_size: self.mean_pkt_size.0,
            mark_ecnth: self.mark_ecnth,
            derandomize: self.derandomize,
            cap_drop_adjustment: self.cap_drop_adjustment,
        };
        Ok(self.with_keys(
            DropTailQueue::new(self.limit),
            super::Aqm::Pie(Box::new(Pie::new(params))),
        ))
    }
}

/// PIE's configured parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    pub target: Duration,
    pub tupdate: Duration,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Duration,
    pub delay: PieDelay,
    pub dq_threshold: u64,
    pub mean_pkt_size: u64,
    pub mark_ecnth: f64,
    pub derandomize: bool,
    pub cap_drop_adjustment: bool,
}

/// PIE's state (the variables of Appendix B ending in "_").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PieVars {
    pub drop_prob: f64,
    /// current_qdelay: the delay the next update uses.
    pub qdelay: Duration,
    pub qdelay_old: Duration,
    pub burst_allowance: Duration,
    /// Derandomization: drop probabilities summed since the last early drop.
    pub accu_prob: f64,
    /// The next update instant.
    pub next_update: SimTime,
    /// Departure-rate estimator: a measurement is running since dq_tstamp, dq_count bytes
    /// so far; avg_dq_time (ns per dq_threshold bytes, 0 before the first).
    pub in_measurement: bool,
    pub dq_tstamp: SimTime,
    pub dq_count: u64,
    pub avg_dq_time: f64,
    /// The highest drop probability so far.
    pub p_max: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Pie {
    pub params: PieParams,
    pub vars: PieVars,
}

impl Pie {
    pub fn new(params: PieParams) -> Self {
        let vars = PieVars {
            burst_allowance: params.max_burst,
            next_update: SimTime::ZERO + params.tupdate,
            ..PieVars::default()
        };
        Pie { params, vars }
    }

    /// Section 4.2: the adjustment of drop_prob for the delays (seconds) now and at the
    /// last update, scaled down while drop_prob is small ("auto-tuning") and capped (5.5).
    pub fn adjustment(&self, qdelay_s: f64, qdelay_old_s: f64) -> f64 {
        let (p0, ref_s) = (self.vars.drop_prob, self.params.target.as_secs_f64());
        let p = self.params.alpha * (qdelay_s - ref_s) + self.params.beta * (qdelay_s - qdelay_old_s);
        let scale = [
            (1e-6, 2048.0),
            (1e-5, 512.0),
            (1e-4, 128.0),
            (1e-3, 32.0),
            (1e-2, 8.0),
            (1e-1, 2.0),
        ]
        .iter()
        .find(|(below, _)| p0 < *below)
        .map_or(1.0, |(_, s)| *s);
        let p = p / scale;
        if self.params.cap_drop_adjustment && p0 >= 0.1 && p > 0.02 {
            0.02
        } else {
            p
        }
    }

    /// One update at `t` (section 4.2, Appendix A `calculate_drop_prob`), with the queue
    /// holding `bytes`.
    fn update(&mut self, bytes: u64) {
        let v = &self.vars;
        let qdelay = match self.params.delay {
            PieDelay::Timestamp => v.qdelay,
            // current_qdelay = queue length * avg_dq_time / DQ_THRESHOLD (Little's law).
            PieDelay::Rate => Duration((bytes as f64 * v.avg_dq_time / self.params.dq_threshold as f64) as u64),
        };
        let p = self.adjustment(qdelay.as_secs_f64(), v.qdelay_old.as_secs_f64());
        let v = &mut self.vars;
        v.drop_prob += p;
        // "Exponentially decay drop prob when congestion goes away"
        if qdelay.0 == 0 && v.qdelay_old.0 == 0 {
            v.drop_prob *= 0.98;
        }
        v.drop_prob = v.drop_prob.clamp(0.0, 1.0);
        v.p_max = v.p_max.max(v.drop_prob);
        v.burst_allowance = Duration(v.burst_allowance.0.saturating_sub(self.params.tupdate.0));
        v.qdelay_old = qdelay;
        v.qdelay = qdelay;
    }

    /// Runs the updates due up to `now` (included) on a queue of `bytes`, which has not
    /// changed since the last packet.
    pub fn catch_up(&mut self, now: SimTime, bytes: u64) {
        let step = self.params.tupdate.0;
        while self.vars.next_update <= now {
            let v = &self.vars;
            if bytes == 0 && v.drop_prob == 0.0 && v.qdelay.0 == 0 && v.qdelay_old.0 == 0 && v.burst_allowance.0 == 0 {
                // At rest: every update until `now` would leave the state as it is.
                let k = (now.0 - v.next_update.0) / step + 1;
                self.vars.next_update = SimTime(v.next_update.0 + k * step);
                return;
            }
            self.update(bytes);
            self.vars.next_update = SimTime(self.vars.next_update.0 + step);
        }
    }

    /// Appendix A `enque` and `drop_early` for a packet arriving at a queue of `bytes`:
    /// the congestion verdict (early, or none), `uniform` drawing U(0, 1) when needed.
    pub fn on_arrival(&mut self, bytes: u64, uniform: impl FnOnce() -> f64) -> Congestion {
        let (half_ref, prm) = (Duration(self.params.target.0 / 2), self.params);
        let v = &mut self.vars;
        // Burst tolerance (4.4): a calm queue gets its allowance back.
        if v.drop_prob == 0.0 && v.qdelay < half_ref && v.qdelay_old < half_ref {
            v.burst_allowance = prm.max_burst;
        }
        if v.burst_allowance.0 > 0 {
            return Congestion::None;
        }
        // "Safeguard PIE to be work conserving" (4.1).
        if (v.qdelay_old < half_ref && v.drop_prob < 0.2) || bytes <= 2 * prm.mean_pkt_size {
            return Congestion::None;
        }
        let drop = if prm.derandomize {
            // Section 5.4.
            if v.drop_prob == 0.0 {
                v.accu_prob = 0.0;
            }
            v.accu_prob += v.drop_prob;
            v.accu_prob >= 8.5 || (v.accu_prob >= 0.85 && uniform() < v.drop_prob)
        } else {
            uniform() < v.drop_prob
        };
        if !drop {
            return Congestion::None;
        }
        v.accu_prob = 0.0;
        Congestion::Early
    }

    /// May an early verdict mark an ECN-capable packet instead of dropping it (5.1)?
    pub fn may_mark(&self) -> bool {
        self.vars.drop_prob <= self.params.mark_ecnth
    }

    /// A packet of `size` bytes leaves after `sojourn`, from a queue that held `bytes`
    /// with it: the delay sample (timestamps) or the departure-rate estimator (5.2).
    pub fn on_departure(&mut self, now: SimTime, size: u32, sojourn: Duration, bytes: u64) {
        let (v, prm) = (&mut self.vars, self.params);
        match prm.delay {
            PieDelay::Timestamp => v.qdelay = if bytes > size as u64 { sojourn } else { Duration(0) },
            PieDelay::Rate => {
                if !v.in_measurement && bytes - size as u64 >= prm.dq_threshold {
                    (v.in_measurement, v.dq_tstamp, v.dq_count) = (true, now, 0);
                }
                if v.in_measurement {
                    v.dq_count += size as u64;
                    if v.dq_count >= prm.dq_threshold {
                        let dq_time = (now - v.dq_tstamp).0 as f64;
                        let weight = prm.dq_threshold as f64 / 65536.0;
                        v.avg_dq_time = if v.avg_dq_time == 0.0 {
                            dq_time
                        } else {
                            dq_time * weight + v.avg_dq_time * (1.0 - weight)
                        };
                        v.in_measurement = false;
                    }
                }
            }
        }
    }

    /// The queue delay the next update would use, on a queue of `bytes`.
    pub fn delay_estimate(&self, bytes: u64) -> Duration {
        match self.params.delay {
            PieDelay::Timestamp => self.vars.qdelay,
            PieDelay::Rate => Duration((bytes as f64 * self.vars.avg_dq_time / self.params.dq_threshold as f64) as u64),
        }
    }

    /// The enqueue and dequeue of a queue with PIE: the verdict on packet `id`, arriving
    /// at `fifo`, drawn from the context's stream.
    pub fn enqueue_verdict(&mut self, fifo: &DropTailQueue, ctx: &mut QueueCtx) -> Congestion {
        self.catch_up(ctx.now, fifo.len_bytes());
        let rng = &mut *ctx.rng;
        self.on_arrival(fifo.len_bytes(), || rng.random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pie() -> Pie {
        let spec: PieSpec = toml::from_str("").unwrap();
        let q = spec.queue(&KeyPath::root()).unwrap();
        let super::super::Aqm::Pie(p) = q.aqm else {
            unreachable!()
        };
        *p
    }

    fn ms(t: u64) -> Duration {
        Duration::from_millis(t)
    }

    #[test]
    fn probability_updates_by_hand() {
        // alpha 0.125, beta 1.25, target 15 ms. From p = 0, a delay of 30 ms after 0:
        // 0.125 * 0.015 + 1.25 * 0.030 = 0.039375, scaled by 1/2048 (p < 1e-6):
        // 1.922607421875e-5.
        let mut p = pie();
        p.vars.qdelay = ms(30);
        p.update(0);
        assert!(
            (p.vars.drop_prob - 0.039375 / 2048.0).abs() < 1e-18,
            "{}",
            p.vars.drop_prob
        );
        // Delay stays 30 ms: only the alpha term, 0.001875, scaled by 1/128 (p = 1.92e-5
        // is in [1e-5, 1e-4)).
        let before = p.vars.drop_prob;
        p.update(0);
        assert!((p.vars.drop_prob - (before + 0.001875 / 128.0)).abs() < 1e-18);
        // The scale at each magnitude of p: 2048, 512, 128, 32, 8, 2, then 1.
        for (p0, scale) in [
            (5e-7, 2048.0),
            (5e-6, 512.0),
            (5e-5, 128.0),
            (5e-4, 32.0),
            (5e-3, 8.0),
            (0.05, 2.0),
            (0.5, 1.0),
        ] {
            p.vars.drop_prob = p0;
            // 20 ms after 10 ms: 0.125 * 0.005 + 1.25 * 0.010 = 0.013125.
            assert!((p.adjustment(0.020, 0.010) - 0.013125 / scale).abs() < 1e-15, "p0 {p0}");
        }
        // Cap (5.5): at p >= 0.1 an increase above 0.02 is 0.02; a decrease is not capped.
        p.vars.drop_prob = 0.3;
        assert_eq!(p.adjustment(0.100, 0.010), 0.02);
        assert!((p.adjustment(0.0, 0.010) - (-0.001875 - 0.0125)).abs() < 1e-15);
        p.params.cap_drop_adjustment = false;
        assert!((p.adjustment(0.100, 0.010) - (0.010625 + 0.1125)).abs() < 1e-15);
    }

    #[test]
    fn decay_bounds_and_burst_allowance() {
        let mut p = pie();
        // Both delays 0: p += alpha * (0 - 0.015) / 2 (p in [0.01, 0.1)), then * 0.98.
        p.vars.drop_prob = 0.05;
        p.update(0);
        let want = (0.05 - 0.001875 / 2.0) * 0.98;
        assert!((p.vars.drop_prob - want).abs() < 1e-15);
        // Bounded to [0, 1].
        p.vars.drop_prob = 0.999;
        p.vars.qdelay = Duration::from_millis(2000);
        p.params.cap_drop_adjustment = false;
        p.update(0);
        assert_eq!(p.vars.drop_prob, 1.0);
        // The burst allowance: 150 ms, minus 15 ms per update.
        let mut p = pie();
        assert_eq!(p.vars.burst_allowance, ms(150));
        p.vars.qdelay = ms(40);
        for k in 1..=10 {
            p.update(0);
            assert_eq!(p.vars.burst_allowance, ms(150 - 15 * k));
        }
        p.update(0);
        assert_eq!(p.vars.burst_allowance, ms(0));
    }

    #[test]
    fn catch_up_runs_every_update_due_and_skips_a_resting_queue() {
        // Updates at 15, 30, 45 ms: catching up at 45 ms runs three.
        let mut p = pie();
        p.vars.qdelay = ms(30);
        p.catch_up(SimTime(45_000_000), 10_000);
        assert_eq!(p.vars.next_update, SimTime(60_000_000));
        let mut q = pie();
        q.vars.qdelay = ms(30);
        for _ in 0..3 {
            q.update(10_000);
        }
        assert_eq!(
            p.vars,
            PieVars {
                next_update: SimTime(60_000_000),
                ..q.vars
            }
        );
        // A queue at rest jumps to the first update after now.
        let mut p = pie();
        p.vars.burst_allowance = Duration(0);
        p.catch_up(SimTime(1_000_000_000_000), 0);
        assert_eq!(p.vars.next_update, SimTime(1_000_005_000_000));
        assert_eq!(p.vars.drop_prob, 0.0);
    }

    #[test]
    fn early_drop_rules() {
        let mut p = pie();
        p.vars.burst_allowance = Duration(0);
        p.vars.drop_prob = 0.3;
        p.vars.qdelay_old = ms(20);
        p.vars.qdelay = ms(20);
        // Two mean packets or less queued: never (no draw).
        assert_eq!(p.on_arrival(3000, || panic!("no draw")), Congestion::None);
        // Otherwise with probability drop_prob.
        assert_eq!(p.on_arrival(3001, || 0.2999), Congestion::Early);
        assert_eq!(p.on_arrival(3001, || 0.3001), Congestion::None);
        // Calm queue (qdelay_old < 7.5 ms) and p < 0.2: never.
        p.vars.qdelay_old = ms(7);
        p.vars.drop_prob = 0.19;
        assert_eq!(p.on_arrival(100_000, || panic!("no draw")), Congestion::None);
        // A burst allowance left: never; refilled when p = 0 and both delays are calm.
        p.vars.drop_prob = 0.0;
        p.vars.qdelay = ms(7);
        assert_eq!(p.on_arrival(100_000, || panic!("no draw")), Congestion::None);
        assert_eq!(p.vars.burst_allowance, ms(150));
    }

    #[test]
    fn derandomization_by_hand() {
        // p = 0.3: sums 0.3, 0.6 (below 0.85: no drop, no draw), 0.9 (a draw, u = 0.5:
        // no drop), 1.2 (u = 0.1 < 0.3: drop, and the sum is reset).
        let mut p = pie();
        p.params.derandomize = true;
        p.vars.burst_allowance = Duration(0);
        p.vars.drop_prob = 0.3;
        p.vars.qdelay_old = ms(20);
        assert_eq!(p.on_arrival(10_000, || panic!("no draw")), Congestion::None);
        assert_eq!(p.on_arrival(10_000, || panic!("no draw")), Congestion::None);
        assert_eq!(p.on_arrival(10_000, || 0.5), Congestion::None);
        assert_eq!(p.on_arrival(10_000, || 0.1), Congestion::Early);
        assert_eq!(p.vars.accu_prob, 0.0);
        // p = 0.9 with u never below it would still drop once the sum reaches 8.5.
        p.vars.drop_prob = 0.9;
        let mut admitted = 0;
        while p.on_arrival(10_000, || 0.95) == Congestion::None {
            admitted += 1;
        }
        assert_eq!(admitted, 9); // 0.9 * 10 = 9.0 >= 8.5 at the tenth
    }

    #[test]
    fn departure_rate_estimate_by_hand() {
        // delay = "rate", DQ_THRESHOLD 16384 B: 1000 B packets leaving every 1 ms from a
        // queue of 20000 B. The measurement starts at the first departure (19000 B left >=
        // 16384) and ends at the 17th (17000 B >= 16384), 16 ms later: avg_dq_time 16 ms
        // per 16384 B. A queue of 8192 B then means 8 ms of delay.
        let mut p = pie();
        p.params.delay = PieDelay::Rate;
        for k in 0..17u64 {
            p.on_departure(SimTime(k * 1_000_000), 1000, Duration(0), 20_000 - 1000 * k);
        }
        assert_eq!(p.vars.avg_dq_time, 16e6);
        assert_eq!(p.delay_estimate(8192), ms(8));
        // The next measurement (32 ms for 16384+ B) averages with weight 1/4: 20 ms.
        for k in 0..17u64 {
            p.on_departure(SimTime(100_000_000 + k * 2_000_000), 1000, Duration(0), 20_000);
        }
        assert_eq!(p.vars.avg_dq_time, 0.25 * 32e6 + 0.75 * 16e6);
        // Timestamps: the sojourn time, 0 when the packet leaves the queue empty.
        let mut p = pie();
        p.on_departure(SimTime(0), 1000, ms(12), 3000);
        assert_eq!(p.vars.qdelay, ms(12));
        p.on_departure(SimTime(0), 1000, ms(12), 1000);
        assert_eq!(p.vars.qdelay, ms(0));
    }
}
