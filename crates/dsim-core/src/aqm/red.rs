//! RED: random early detection, Floyd and Jacobson 1993.
//!
//! Source: S. Floyd and V. Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), August 1993, section 4 and figure 2 (the reference [RED]
//! of seeds 001, 002 and 004); gentle mode: S. Floyd, "Recommendation on using the
//! gentle_ variant of RED", 2000 (as in ns-2).
//!
//! ```text
//! Initialization: avg = 0, count = -1
//! for each packet arrival:
//!     if the queue is nonempty: avg = (1 - wq) avg + wq q
//!     else: m = f(time - q_time); avg = (1 - wq)^m avg
//!     if min_th <= avg < max_th:
//!         count = count + 1
//!         pb = max_p (avg - min_th) / (max_th - min_th)
//!         pa = pb / (1 - count pb)
//!         with probability pa: mark the arriving packet, count = 0
//!     else if max_th <= avg: mark the arriving packet, count = 0
//!     else count = -1
//! when the queue becomes empty: q_time = time
//! ```
//!
//! Parameters (units): min_th, max_th in packets, or in bytes ("byte mode"); max_p
//! (probability, 0 < max_p <= 1); wq (0 < wq < 1); mean packet size (bytes); the typical
//! transmission time s (ns) derives from the link rate and the mean packet size, as ns-2
//! does (`ptc = link bandwidth / (8 mean_pktsize)`): m = idle time / s.
//!
//! dsim's choices, where the paper leaves room:
//! - m is real-valued (the paper says "m = f(time - q_time)", linear; ns-2 truncates to an
//!   integer and applies one more factor (1 - wq)).
//! - The queue "becomes empty" when its last packet is dequeued for transmission (dsim's
//!   queue excludes the packet being transmitted; ns-2 starts the idle period one
//!   transmission later, when the link finds the queue empty). The idle correction applies
//!   to the time since then; if the arriving packet is dropped and the queue stays empty,
//!   the idle period continues from the arrival (so the decay over the whole idle period is
//!   (1 - wq)^(total idle / s), counted once).
//! - Byte mode (paper section 4, "measured in bytes"): thresholds and q in bytes, and pb is
//!   scaled by packet size / mean packet size (ns-2 `bytes_`; the paper scales by the
//!   maximum packet size).
//! - count * pb >= 1 gives pa = 1 (the paper's uniform spacing: at most 1/pb packets
//!   between marks; ns-2 Queue/RED `modify_p`, Linux `red.h`). MRED can instead follow
//!   ns-2's dsRED, which has no such bound ([`CountOverflow::Pass`]).
//! - Gentle mode: for max_th <= avg < 2 max_th, pb = max_p + (1 - max_p)(avg - max_th) /
//!   max_th, with the same count spacing; forced drops start at 2 max_th.
//! - "Mark" is the algorithm's verdict: [`Congestion::Early`] (a random early mark) or
//!   [`Congestion::Forced`]. The queue decides: with ECN enabled an ECN-capable packet is
//!   marked CE on an early verdict; forced verdicts always drop (as ns-2 does).
//!
//! Parameters, evolving variables and statistics are apart, as in Linux `red.h`:
//! [`RedParams`] (validated at build), [`RedVars`]; the port counts drops by cause.
//!
//! Configuration: the keys of a curve (`min_th`, `max_th`, `max_p`) and of the average
//! (`wq`, `gentle`, `mean_pkt_size`) are declared once, in [`red_table!`], and shared by
//! every table that holds them: `type = "red"` ([`RedSpec`]), an MRED precedence and MRED
//! itself (`super::mred`), DSD's virtual RED (`crate::sched::dsd`).

use serde::{Deserialize, Serialize};

use super::{AqmQueue, DropTailQueue, QueueSeries};
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Bytes, Duration, Limit, NS_PER_SEC, Rate, SimTime};

// ---------------------------------------------------------------------------------------
// Configuration

pub fn default_max_p() -> f64 {
    0.1
}
pub fn default_wq() -> f64 {
    0.002
}
pub fn default_mean_pkt_size() -> Bytes {
    Bytes(500)
}

/// Declares a configuration table that holds RED keys: `[curve]` (min_th, max_th, max_p),
/// `[averaging]` (wq, gentle, mean_pkt_size) or both, after the table's own fields, with a
/// `curve()` and / or `averaging()` accessor. The keys are written here once, whatever
/// table they appear in (serde's `flatten` cannot be combined with `deny_unknown_fields`).
#[macro_export]
macro_rules! red_table {
    ([$($group:ident),*] $(#[$attr:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $crate::red_table!(@emit [$(#[$attr])*] $name [$($fields)*] [$($group),*]);
    };
    (@emit [$($attr:tt)*] $name:ident [$($fields:tt)*] []) => {
        $($attr)*
        pub struct $name { $($fields)* }
    };
    (@emit $attrs:tt $name:ident [$($fields:tt)*] [curve $(, $rest:ident)*]) => {
        $crate::red_table!(@emit $attrs $name [$($fields)*
            /// Minimum threshold on the average queue: packets ("5p") or bytes ("5KB",
            /// byte mode). Below it nothing is dropped early.
            #[param(section = "4")]
            pub min_th: $crate::time::Limit,
            /// Maximum threshold, in min_th's unit: the average at which the drop
            /// probability reaches max_p; above it every packet is dropped (from 2 max_th in
            /// gentle mode).
            #[param(section = "4")]
            pub max_th: $crate::time::Limit,
            /// Drop probability when the average reaches max_th.
            #[serde(default = "crate::aqm::red::default_max_p")]
            #[param(range = "(0, 1]", section = "4")]
            pub max_p: f64,
        ] [$($rest),*]);
        impl $name {
            /// The RED curve of this table.
            pub fn curve(&self) -> $crate::aqm::red::RedCurve {
                $crate::aqm::red::RedCurve { min_th: self.min_th, max_th: self.max_th, max_p: self.max_p }
            }
        }
    };
    (@emit $attrs:tt $name:ident [$($fields:tt)*] [averaging $(, $rest:ident)*]) => {
        $crate::red_table!(@emit $attrs $name [$($fields)*
            /// Weight of the newest queue sample in the average queue size.
            #[serde(default = "crate::aqm::red::default_wq")]
            #[param(range = "(0, 1)", section = "4")]
            pub wq: f64,
            /// Gentle mode: between max_th and 2 max_th the drop probability rises from max_p
            /// to 1 instead of jumping to 1 (Floyd 2000, as in ns-2).
            #[serde(default, skip_serializing_if = "std::ops::Not::not")]
            pub gentle: bool,
            /// Mean packet size: sets the typical transmission time s of the idle-time
            /// correction (m = idle / s), and scales pb by size / mean in byte mode.
            #[serde(default = "crate::aqm::red::default_mean_pkt_size")]
            #[param(range = "[1B, 65535B]", section = "4")]
            pub mean_pkt_size: $crate::time::Bytes,
        ] [$($rest),*]);
        impl $name {
            /// How this table's RED averages the queue.
            pub fn averaging(&self) -> $crate::aqm::red::RedAveraging {
                $crate::aqm::red::RedAveraging { wq: self.wq, gentle: self.gentle, mean_pkt_size: self.mean_pkt_size }
            }
        }
    };
}

/// One RED curve as configured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedCurve {
    pub min_th: Limit,
    pub max_th: Limit,
    pub max_p: f64,
}

/// How RED averages the queue, as configured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedAveraging {
    pub wq: f64,
    pub gentle: bool,
    pub mean_pkt_size: Bytes,
}

red_table! {
    [curve, averaging]
    /// `type = "red"`: one FIFO queue with RED (Floyd and Jacobson 1993).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    #[param(document = "S. Floyd and V. Jacobson, Random Early Detection Gateways for Congestion Avoidance, 1993")]
    pub struct RedSpec {
        /// Physical limit: packets ("100p") or bytes ("64KB"); a packet that does not fit
        /// is an overflow drop.
        #[param(range = "(0, inf)")]
        pub limit: Limit,
        /// Mark ECN-capable packets CE on an early verdict instead of dropping them (RFC
        /// 3168); forced verdicts always drop.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pub ecn: bool,
        /// Step marking for DCTCP (RFC 8257 3.1): an ECN-capable packet that finds more
        /// than this many packets ("20p") or bytes queued is marked CE, and then not
        /// dropped early; none by default (see `droptail`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "[0, inf)")]
        pub mark_threshold: Option<Limit>,
        /// Record the average and the instantaneous queue every this long (the
        /// `queue_series` table).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "(0, inf)")]
        pub series: Option<Duration>,
    }
}

impl RedSpec {
    /// The FIFO with RED this table declares, at a port of `rate`.
    pub fn queue(&self, rate: Rate, path: &KeyPath) -> Result<AqmQueue, ConfigError> {
        self.check(path)?;
        let params = RedParams::new(self.curve(), self.averaging(), Some(self.limit), rate, path)?;
        super::droptail::check_mark_threshold(self.mark_threshold, self.limit, &path.key("mark_threshold"))?;
        let unit = super::unit_of(params.bytes);
        let mut q = AqmQueue::new(
            DropTailQueue::new(self.limit).with_mark_threshold(self.mark_threshold),
            super::Aqm::Red(super::Red {
                params,
                vars: RedVars::default(),
            }),
        );
        q.ecn = self.ecn;
        q.series = self.series.map(|i| QueueSeries::with_unit(i, unit));
        Ok(q)
    }
}

fn limit_value(l: Limit) -> (f64, bool) {
    match l {
        Limit::Packets(n) => (n as f64, false),
        Limit::Bytes(b) => (b as f64, true),
    }
}

/// The congestion signal RED gives an arriving packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// No signal: admit (subject to the physical limit).
    None,
    /// Random early mark or drop (min_th <= avg < max_th, or the gentle region).
    Early,
    /// avg >= max_th (2 max_th in gentle mode): drop.
    Forced,
}

/// What the count spacing does once count * pb reaches 1.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum CountOverflow {
    /// pa = 1: the packet is marked, so marks are at most 1/pb packets apart (Floyd and
    /// Jacobson 1993 section 4; ns-2 Queue/RED, Linux).
    #[default]
    Drop,
    /// pa = pb / (1 - count pb) without a bound, as ns-2.35's dsRED computes it
    /// (diffserv/dsredq.cc): 1 / 0 marks when count pb is exactly 1, a negative pa past it
    /// never does, so once a rising average makes count pb jump past 1 the precedence is
    /// not marked again until its average leaves [min_th, max_th].
    Pass,
}

/// Configured parameters of one RED curve.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    /// Thresholds in packets, or bytes when `bytes`.
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub wq: f64,
    pub gentle: bool,
    /// Byte mode: thresholds, q and avg in bytes; pb scaled by size / mean_pkt_size.
    pub bytes: bool,
    /// Mean packet size in bytes.
    pub mean_pkt_size: f64,
    /// Typical transmission time s in ns: the time the link takes to send a packet of
    /// the mean size.
    pub s_ns: f64,
    /// pa once count * pb reaches 1.
    pub count_overflow: CountOverflow,
}

/// Evolving variables of one RED curve.
#[derive(Clone, Debug, PartialEq)]
pub struct RedVars {
    /// Average queue size (packets or bytes).
    pub avg: f64,
    /// Packets since the last mark (-1: avg was below min_th).
    pub count: i64,
    /// Start of the current idle period (None while the queue holds packets).
    pub idle_since: Option<SimTime>,
}

impl Default for RedVars {
    fn default() -> Self {
        // The queue is empty, and idle, from time 0.
        RedVars {
            avg: 0.0,
            count: -1,
            idle_since: Some(SimTime::ZERO),
        }
    }
}

/// Typical transmission time s in ns: a packet of `mean_pkt_size` bytes at `rate`.
pub fn typical_tx_time_ns(rate: Rate, mean_pkt_size: u64) -> f64 {
    mean_pkt_size as f64 * 8.0 * NS_PER_SEC as f64 / rate.0 as f64
}

impl RedParams {
    /// The parameters of `curve` averaged as `avg` on a queue of `limit` (None: none
    /// applies) at a port of `rate`: min_th < max_th in one unit, max_th within the limit
    /// when both are in the same unit. `path` is the table holding the curve.
    pub fn new(
        curve: RedCurve,
        avg: RedAveraging,
        limit: Option<Limit>,
        rate: Rate,
        path: &KeyPath,
    ) -> Result<Self, ConfigError> {
        let refuse = |rule: String| ConfigError::new(path.key("max_th"), Some(format!("\"{}\"", curve.max_th)), rule);
        let ((lo, lo_bytes), (hi, hi_bytes)) = (limit_value(curve.min_th), limit_value(curve.max_th));
        if lo_bytes != hi_bytes {
            return Err(refuse(format!(
                "min_th ({}) and max_th must use the same unit (packets or bytes)",
                curve.min_th
            )));
        }
        if lo >= hi {
            return Err(refuse(format!("max_th must be greater than min_th ({})", curve.min_th)));
        }
        if let Some(limit) = limit {
            let (lim, lim_bytes) = limit_value(limit);
            if lim_bytes == hi_bytes && hi > lim {
                return Err(refuse(format!("max_th must not exceed the queue limit ({limit})")));
            }
        }
        Ok(RedParams {
            min_th: lo,
            max_th: hi,
            max_p: curve.max_p,
            wq: avg.wq,
            gentle: avg.gentle,
            bytes: hi_bytes,
            mean_pkt_size: avg.mean_pkt_size.0 as f64,
            s_ns: typical_tx_time_ns(rate, avg.mean_pkt_size.0),
            count_overflow: CountOverflow::Drop,
        })
    }

    /// Updates `avg` on a packet arrival; `q` is the current queue size (packets or
    /// bytes, before the arriving packet).
    #[inline]
    pub fn update_average(&self, v: &mut RedVars, q: f64, now: SimTime) {
        match v.idle_since {
            // "else m = f(time - q_time); avg = (1 - wq)^m avg"
            Some(t0) => {
                let m = (now - t0).0 as f64 / self.s_ns;
                v.avg *= (1.0 - self.wq).powf(m);
                // Still idle until a packet is admitted; decay counted up to now.
                v.idle_since = Some(now);
            }
            // "if the queue is nonempty: avg = (1 - wq) avg + wq q"
            None => v.avg = (1.0 - self.wq) * v.avg + self.wq * q,
        }
    }

    /// pb for the current average and a packet of `size` bytes (before count spacing);
    /// None below min_th, Some(None) in the forced region.
    #[inline]
    fn pb(&self, avg: f64, size: u32) -> Option<Option<f64>> {
        if avg < self.min_th {
            return None;
        }
        let pb = if avg < self.max_th {
            // "pb = max_p (avg - min_th) / (max_th - min_th)"
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            // gentle: from max_p at max_th to 1 at 2 max_th
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            return Some(None);
        };
        let pb = if self.bytes {
            (pb * size as f64 / self.mean_pkt_size).min(1.0)
        } else {
            pb
        };
        Some(Some(pb))
    }

    /// pa = pb / (1 - count pb); once count pb >= 1, 1 or as `overflow` says.
    #[inline]
    pub fn pa(pb: f64, count: i64, overflow: CountOverflow) -> f64 {
        let cp = count as f64 * pb;
        match overflow {
            _ if cp < 1.0 => pb / (1.0 - cp),
            CountOverflow::Drop => 1.0,
            // dsRED: pb / 0 = inf marks; a negative pa never does.
            CountOverflow::Pass if cp == 1.0 => 1.0,
            CountOverflow::Pass => 0.0,
        }
    }

    /// The verdict on an arriving packet of `size` bytes, given the average already
    /// updated; `uniform` draws U(0,1) and is called only in the random region.
    #[inline]
    pub fn decide(&self, v: &mut RedVars, size: u32, uniform: impl FnOnce() -> f64) -> Congestion {
        match self.pb(v.avg, size) {
            // "else count = -1"
            None => {
                v.count = -1;
                Congestion::None
            }
            // "else if max_th <= avg: mark the arriving packet, count = 0"
            Some(None) => {
                v.count = 0;
                Congestion::Forced
            }
            // "count = count + 1; ... pa = pb / (1 - count pb); with probability pa: mark
            // the arriving packet, count = 0"
            Some(Some(pb)) => {
                v.count += 1;
                let pa = Self::pa(pb, v.count, self.count_overflow);
                if uniform() < pa {
                    v.count = 0;
                    Congestion::Early
                } else {
                    Congestion::None
                }
            }
        }
    }
}

/// A packet-mode curve for tests: mean packet 500 B, s = 1000 ns.
#[cfg(test)]
pub(crate) fn test_curve(min_th: f64, max_th: f64, max_p: f64, wq: f64) -> RedParams {
    RedParams {
        min_th,
        max_th,
        max_p,
        wq,
        gentle: false,
        bytes: false,
        mean_pkt_size: 500.0,
        s_ns: 1000.0,
        count_overflow: CountOverflow::Drop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(min_th: f64, max_th: f64, max_p: f64, wq: f64) -> RedParams {
        test_curve(min_th, max_th, max_p, wq)
    }

    #[test]
    fn average_by_hand_with_an_idle_period() {
        // wq = 0.25, s = 1000 ns. The first arrival finds the queue idle since 0 at t = 0:
        // m = 0, avg stays 0. Then busy arrivals see q = 4, 4, 8:
        //   avg = 0.75*0 + 0.25*4 = 1; 0.75*1 + 1 = 1.75; 0.75*1.75 + 2 = 3.3125
        // The queue empties at t = 10 us; an arrival at t = 13 us: m = 3000 / 1000 = 3,
        //   avg = 0.75^3 * 3.3125 = 0.421875 * 3.3125 = 1.3974609375
        // That packet is dropped, the queue stays empty: the next arrival at t = 14 us
        // decays by only the 1000 ns since then: 0.75 * 1.3974609375 = 1.048095703125.
        let p = params(5.0, 15.0, 0.1, 0.25);
        let mut v = RedVars::default();
        p.update_average(&mut v, 0.0, SimTime(0));
        assert_eq!(v.avg, 0.0);
        v.idle_since = None; // the packet was admitted
        for (q, want) in [(4.0, 1.0), (4.0, 1.75), (8.0, 3.3125)] {
            p.update_average(&mut v, q, SimTime(5000));
            assert_eq!(v.avg, want);
        }
        v.idle_since = Some(SimTime(10_000));
        p.update_average(&mut v, 0.0, SimTime(13_000));
        assert!((v.avg - 1.3974609375).abs() < 1e-12, "{}", v.avg);
        p.update_average(&mut v, 0.0, SimTime(14_000));
        assert!((v.avg - 1.048095703125).abs() < 1e-12, "{}", v.avg);
    }

    #[test]
    fn wq_002_average_of_a_constant_queue() {
        // A constant q = 100 from avg = 0: avg_n = 100 (1 - 0.998^n). n = 500:
        // 0.998^500 = e^(500 ln 0.998) = 0.367511..., avg = 63.2488...
        let p = params(5.0, 15.0, 0.1, 0.002);
        let mut v = RedVars {
            idle_since: None,
            ..Default::default()
        };
        for _ in 0..500 {
            p.update_average(&mut v, 100.0, SimTime(0));
        }
        let want = 100.0 * (1.0 - 0.998f64.powi(500));
        assert!((v.avg - want).abs() < 1e-9);
        assert!((v.avg - 63.2488).abs() < 1e-3, "{}", v.avg);
    }

    #[test]
    fn count_based_drop_probability_by_hand() {
        // min 5, max 15, max_p 0.1, avg = 10: pb = 0.1 * 5/10 = 0.05.
        // count 0: pa = 0.05; count 1: 0.05/0.95 = 0.0526316; count 2: 0.05/0.9 = 0.0555556.
        // A draw u just above pa admits, just below marks (and resets count to 0).
        let p = params(5.0, 15.0, 0.1, 0.002);
        let mut v = RedVars {
            avg: 10.0,
            idle_since: None,
            ..Default::default()
        };
        assert_eq!(p.decide(&mut v, 500, || 0.0501), Congestion::None);
        assert_eq!(v.count, 0);
        assert_eq!(p.decide(&mut v, 500, || 0.0527), Congestion::None);
        assert_eq!(v.count, 1);
        assert_eq!(p.decide(&mut v, 500, || 0.0555), Congestion::Early);
        assert_eq!(v.count, 0);
        assert!((RedParams::pa(0.05, 2, CountOverflow::Drop) - 0.05 / 0.9).abs() < 1e-15);
        // count pb >= 1: certain mark (count 20 with pb 0.05).
        assert_eq!(RedParams::pa(0.05, 20, CountOverflow::Drop), 1.0);
        // Below min_th: no draw at all, count = -1.
        v.avg = 4.99;
        assert_eq!(
            p.decide(&mut v, 500, || panic!("no draw below min_th")),
            Congestion::None
        );
        assert_eq!(v.count, -1);
        // At max_th: forced, without a draw.
        v.avg = 15.0;
        assert_eq!(
            p.decide(&mut v, 500, || panic!("no draw when forced")),
            Congestion::Forced
        );
        assert_eq!(v.count, 0);
    }

    #[test]
    fn count_overflow_as_ns2_dsred() {
        // min 0, max 10, max_p 1: pb = avg / 10. No draw marks (u = 0.99 < pa only when
        // pa > 0.99). avg 3 (pb 0.3): count 1, cp 0.3, pa 0.43; count 2, cp 0.6, pa 0.75.
        // The average rises to 4 (pb 0.4): count 3, cp 1.2. Drop: pa = 1, marked. Pass:
        // pa = 0.4 / -0.2 < 0, admitted, and so on (count 4, cp 1.6) until avg reaches
        // max_th: forced, count 0.
        for (overflow, third) in [
            (CountOverflow::Drop, Congestion::Early),
            (CountOverflow::Pass, Congestion::None),
        ] {
            let mut p = params(0.0, 10.0, 1.0, 0.002);
            p.count_overflow = overflow;
            let mut v = RedVars {
                avg: 3.0,
                count: 0,
                idle_since: None,
            };
            assert_eq!(p.decide(&mut v, 500, || 0.99), Congestion::None);
            assert_eq!(p.decide(&mut v, 500, || 0.99), Congestion::None);
            v.avg = 4.0;
            assert_eq!(p.decide(&mut v, 500, || 0.99), third, "{overflow:?}");
            if overflow == CountOverflow::Pass {
                assert_eq!(v.count, 3);
                assert_eq!(p.decide(&mut v, 500, || 0.0), Congestion::None);
                v.avg = 10.0;
                assert_eq!(p.decide(&mut v, 500, || 0.0), Congestion::Forced);
                assert_eq!(v.count, 0);
            }
        }
        // count pb exactly 1: pb / 0 marks (pb 0.25, count 4).
        assert_eq!(RedParams::pa(0.25, 4, CountOverflow::Pass), 1.0);
        assert_eq!(RedParams::pa(0.25, 3, CountOverflow::Pass), 1.0);
        assert_eq!(RedParams::pa(0.25, 5, CountOverflow::Pass), 0.0);
        assert!((RedParams::pa(0.2, 2, CountOverflow::Pass) - 0.2 / 0.6).abs() < 1e-15);
    }

    #[test]
    fn gentle_region() {
        // gentle, min 5, max 15, max_p 0.1: avg 20 -> pb = 0.1 + 0.9 * 5/15 = 0.4; first
        // packet in the region (count 0) is marked with pa = 0.4. avg 30 = 2 max_th: forced.
        let mut p = params(5.0, 15.0, 0.1, 0.002);
        p.gentle = true;
        let mut v = RedVars {
            avg: 20.0,
            idle_since: None,
            ..Default::default()
        };
        assert_eq!(p.decide(&mut v, 500, || 0.3999), Congestion::Early);
        v.count = -1;
        assert_eq!(p.decide(&mut v, 500, || 0.4001), Congestion::None);
        v.avg = 29.999; // pb = 0.1 + 0.9 * 14.999 / 15 = 0.99994
        v.count = -1;
        assert_eq!(p.decide(&mut v, 500, || 0.99999), Congestion::None);
        v.avg = 30.0;
        assert_eq!(p.decide(&mut v, 500, || 0.0), Congestion::Forced);
        // Not gentle: 20 is forced.
        p.gentle = false;
        v.avg = 20.0;
        assert_eq!(p.decide(&mut v, 500, || 0.99), Congestion::Forced);
    }

    #[test]
    fn byte_mode_scales_pb_by_size() {
        // Thresholds 5000/15000 B, avg 10000 B: pb = 0.05; a 1000 B packet with a 500 B
        // mean: pb = 0.1; a 250 B packet: 0.025.
        let mut p = params(5000.0, 15000.0, 0.1, 0.002);
        p.bytes = true;
        let mut v = RedVars {
            avg: 10000.0,
            idle_since: None,
            ..Default::default()
        };
        assert_eq!(p.decide(&mut v, 1000, || 0.0999), Congestion::Early);
        v.count = -1;
        assert_eq!(p.decide(&mut v, 1000, || 0.1001), Congestion::None);
        v.count = -1;
        assert_eq!(p.decide(&mut v, 250, || 0.0249), Congestion::Early);
    }

    #[test]
    fn typical_transmission_time() {
        // 500 B at 10 Mbit/s = 400 us; 576 B at 50 Mbit/s = 92.16 us.
        assert_eq!(typical_tx_time_ns(Rate(10_000_000), 500), 400_000.0);
        assert!((typical_tx_time_ns(Rate(50_000_000), 576) - 92_160.0).abs() < 1e-9);
    }
}
