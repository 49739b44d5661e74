//! Rate adaptive shapers: srRAS, trRAS, G-srRAS and G-trRAS.
//!
//! Source: RFC 2963 (draft-bonaventure-diffserv-rashaper-04, seed 004), sections 2 and 3.
//!
//! A rate adaptive shaper (RAS) sits upstream of a three colour marker (figure 1: RAS ->
//! meter -> marker): "a tail-drop FIFO queue which is emptied at a variable rate" (2.1).
//! The shaping rate is (2.3, 2.5)
//!
//! ```text
//! R(t) = max(EAR(t), F(q(t)))
//! ```
//!
//! - q: the buffer occupancy in bytes (every packet held, the head included);
//! - F: piecewise linear in q. srRAS (figure 2): CIR up to CIR_th, linear from CIR to MIR
//!   between CIR_th and MIR_th, MIR from MIR_th on. trRAS (figure 3): CIR up to CIR_th,
//!   linear to PIR at PIR_th, linear to MIR at MIR_th, MIR beyond;
//! - EAR: the estimated average rate of the incoming traffic, the exponential average of
//!   [Stoica] that section 2.3 proposes, updated at every arrival:
//!   `EAR_new = (1 - exp(-T/K)) L/T + exp(-T/K) EAR_old`, L the arriving packet's size, T
//!   the time since the previous arrival, K a constant.
//!
//! Parameters (2.2, 2.4): CIR, [PIR,] MIR (dsim: bit/s; the document counts bytes per
//! second), thresholds CIR_th, [PIR_th,] MIR_th and the buffer size (bytes), K (time).
//! Rules: CIR <= [PIR <=] MIR <= line rate and CIR_th <= [PIR_th <=] MIR_th <= buffer size
//! ("the srRAS MUST ensure that the following relation is verified"); checked by
//! [`RasConfig::check`].
//!
//! The green variants (section 3) read the downstream meter's token state: T2 is "the
//! earliest time instant at which the packet at the head of the shaper's queue would be
//! colored as green" (3.3: `max(t, t + (B - Tc(t))/CIR)` for the srTCM; 3.5:
//! `max(t, t + (B - Tc(t))/CIR, t + (B - Tp(t))/PIR)` for the trTCM; infinite when B
//! exceeds CBS or PBS), and the head leaves at min(T1, T2). The meter computes T2
//! ([`super::Meter::green_time`]); a G-RAS is built only in front of the matching meter.
//!
//! # What the document leaves open, and dsim's choices
//!
//! - **T1, the release schedule.** "Using this shaping rate, the RAS computes the time
//!   schedule at which the packet at the head of the queue of the shaper is to be
//!   released" (3.1). dsim spaces releases at the shaping rate: the head packet of B bytes
//!   leaves once the shaper has emptied B bytes at the shaping rate since the previous
//!   release, `integral of R(t) dt from the previous release to T1 = B`. With a constant
//!   rate this is `d_n = max(a_n, d_(n-1) + B_n / R)`: back-to-back packets leave B/R
//!   apart, and a packet that finds the shaper idle long enough leaves at once (a shaper
//!   that "avoids ... too large delays", 2.1). R is piecewise constant between events
//!   (it changes only when a packet arrives or leaves), so the integral is exact; when
//!   the rate changes, T1 of the waiting head is recomputed.
//! - **Occupancy** counts whole packets: a packet adds its size on arrival and removes it
//!   when released.
//! - **Breakpoints that coincide.** At q = CIR_th the rate is CIR (F(CIR_th) = CIR, 2.3);
//!   when two thresholds are equal F jumps just above them (e.g. CIR_th = PIR_th: CIR at
//!   q = CIR_th, PIR above), the only reading consistent with both F(CIR_th) = CIR and the
//!   pieces of 2.5.
//! - **EAR at the first arrival** counts T from the start of the run (EAR = 0 before it),
//!   as dsim's TSW does; T = 0 (simultaneous arrivals) takes the limit
//!   `(1 - exp(-T/K))/T -> 1/K`, i.e. `EAR_new = L/K + EAR_old`. Every arrival updates
//!   EAR, including one the full buffer drops: it is part of "the incoming traffic".
//! - **Colour-aware meters**: a packet precoloured yellow or red is never green, so its
//!   T2 is infinite.
//!
//! Floats: EAR is the document's real-valued average, so the shaping rate (bytes/s) and
//! the bytes emptied since the last release are f64; release instants are integer
//! nanoseconds (rounded up).

use std::collections::VecDeque;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::Meter;
use super::tb_shaper::{Held, Offer};
use crate::params::{self, KeyPath, Params};
use crate::time::{Bytes, Duration, NS_PER_SEC, Rate, SimTime};

/// srRAS / G-srRAS (RFC 2963 sections 2.2, 3.2): rates in bit/s, thresholds and buffer
/// in bytes, the EAR constant K a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2963")]
pub struct SrrasSpec {
    /// Committed Information Rate of the srTCM downstream.
    #[param(range = "(0, inf)", section = "2.2")]
    pub cir: Rate,
    /// Default: the line rate of the shaper's output link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mir: Option<Rate>,
    /// Occupancy threshold at which the rate rises from the CIR.
    #[param(section = "2.2")]
    pub cir_th: Bytes,
    /// Occupancy threshold at which the rate reaches the MIR.
    #[param(section = "2.2")]
    pub mir_th: Bytes,
    /// Size of the shaper's tail-drop FIFO.
    #[param(range = "(0, inf)", section = "2.2")]
    pub buffer: Bytes,
    /// The constant K of the EAR (the averaging time of the arrival rate estimate).
    #[param(range = "(0, inf)", section = "2.3")]
    pub k: Duration,
}

/// trRAS / G-trRAS (RFC 2963 sections 2.4, 3.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2963")]
pub struct TrrasSpec {
    /// Committed Information Rate of the trTCM downstream.
    #[param(range = "(0, inf)", section = "2.4")]
    pub cir: Rate,
    /// Peak Information Rate of the trTCM downstream.
    #[param(range = "(0, inf)", section = "2.4")]
    pub pir: Rate,
    /// Default: the line rate of the shaper's output link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mir: Option<Rate>,
    /// Occupancy threshold at which the rate rises from the CIR.
    #[param(section = "2.4")]
    pub cir_th: Bytes,
    /// Occupancy threshold at which the rate reaches the PIR.
    #[param(section = "2.4")]
    pub pir_th: Bytes,
    /// Occupancy threshold at which the rate reaches the MIR.
    #[param(section = "2.4")]
    pub mir_th: Bytes,
    /// Size of the shaper's tail-drop FIFO.
    #[param(range = "(0, inf)", section = "2.4")]
    pub buffer: Bytes,
    /// The constant K of the EAR (the averaging time of the arrival rate estimate).
    #[param(range = "(0, inf)", section = "2.3")]
    pub k: Duration,
}

/// Which shaper of the document.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RasKind {
    /// Single rate (section 2.2, 2.3): CIR and MIR.
    Sr,
    /// Two rates (section 2.4, 2.5): CIR, PIR and MIR.
    Tr,
}

/// The configuration of sections 2.2 (srRAS) and 2.4 (trRAS); 3.2 and 3.4: the green
/// variants are configured the same way.
#[derive(Clone, Debug, PartialEq)]
pub struct RasConfig {
    pub kind: RasKind,
    /// A green RAS (section 3): coupled to the downstream meter.
    pub green: bool,
    pub cir: Rate,
    /// trRAS only.
    pub pir: Option<Rate>,
    pub mir: Rate,
    pub cir_th: Bytes,
    /// trRAS only.
    pub pir_th: Option<Bytes>,
    pub mir_th: Bytes,
    /// Size of the tail-drop FIFO.
    pub buffer: Bytes,
    /// The constant K of the EAR (section 2.3).
    pub k: Duration,
}

/// A configuration rule that does not hold: the field, its value and the rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub field: &'static str,
    pub value: String,
    pub rule: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}: {}", self.field, self.value, self.rule)
    }
}

fn refuse(field: &'static str, value: impl ToString, rule: impl Into<String>) -> Result<(), ConfigError> {
    Err(ConfigError {
        field,
        value: value.to_string(),
        rule: rule.into(),
    })
}

impl RasConfig {
    /// The document's name of this shaper.
    pub fn name(&self) -> &'static str {
        match (self.kind, self.green) {
            (RasKind::Sr, false) => "srRAS",
            (RasKind::Tr, false) => "trRAS",
            (RasKind::Sr, true) => "G-srRAS",
            (RasKind::Tr, true) => "G-trRAS",
        }
    }

    fn section(&self) -> &'static str {
        match self.kind {
            RasKind::Sr => "RFC 2963 section 2.2",
            RasKind::Tr => "RFC 2963 section 2.4",
        }
    }

    /// The rates (bit/s) and thresholds (bytes) of F, in order: (CIR, CIR_th), [(PIR,
    /// PIR_th),] (MIR, MIR_th).
    fn points(&self) -> Vec<(&'static str, Rate, &'static str, Bytes)> {
        let mut v = vec![("cir", self.cir, "cir_th", self.cir_th)];
        if let (Some(pir), Some(pir_th)) = (self.pir, self.pir_th) {
            v.push(("pir", pir, "pir_th", pir_th));
        }
        v.push(("mir", self.mir, "mir_th", self.mir_th));
        v
    }

    /// Checks the relations of section 2.2 / 2.4 for a shaper whose output link runs at
    /// `line_rate` (None: no link, trace replay): CIR > 0, CIR <= [PIR <=] MIR <= line
    /// rate, CIR_th <= [PIR_th <=] MIR_th <= buffer size, buffer > 0, K > 0.
    pub fn check(&self, line_rate: Option<Rate>) -> Result<(), ConfigError> {
        let sec = self.section();
        let name = self.name();
        match self.kind {
            RasKind::Tr if self.pir.is_none() || self.pir_th.is_none() => {
                let field = if self.pir.is_none() { "pir" } else { "pir_th" };
                return refuse(field, "(missing)", format!("a {name} needs a PIR and a PIR_th ({sec})"));
            }
            RasKind::Sr if self.pir.is_some() || self.pir_th.is_some() => {
                let field = if self.pir.is_some() { "pir" } else { "pir_th" };
                return refuse(
                    field,
                    "(given)",
                    format!("a {name} has no PIR or PIR_th (section 2.2); use a trRAS"),
                );
            }
            _ => {}
        }
        if self.cir.0 == 0 {
            return refuse("cir", quoted(self.cir), "the CIR must be greater than 0");
        }
        let points = self.points();
        // "CIR <= MIR <= line rate" (2.2); "CIR <= PIR <= MIR <= line rate" (2.4).
        for w in points.windows(2) {
            let ((lo_key, lo, ..), (hi_key, hi, ..)) = (w[0], w[1]);
            if hi < lo {
                return refuse(
                    hi_key,
                    quoted(hi),
                    format!(
                        "the {} must be at least the {} ({lo}) ({sec})",
                        hi_key.to_uppercase(),
                        lo_key.to_uppercase()
                    ),
                );
            }
        }
        if let Some(line_rate) = line_rate.filter(|r| self.mir > *r) {
            return refuse(
                "mir",
                quoted(self.mir),
                format!("the MIR must not exceed the line rate of the shaper's output link ({line_rate}) ({sec})"),
            );
        }
        // "CIR_th <= MIR_th <= buffer size of the shaper" (2.2); with PIR_th between (2.4).
        for w in points.windows(2) {
            let ((.., lo_key, lo), (.., hi_key, hi)) = (w[0], w[1]);
            if hi < lo {
                return refuse(
                    hi_key,
                    quoted(hi),
                    format!("{hi_key} must be at least {lo_key} ({lo}) ({sec})"),
                );
            }
        }
        if self.buffer.0 == 0 {
            return refuse(
                "buffer",
                quoted(self.buffer),
                "the shaper's buffer must hold at least one byte",
            );
        }
        if self.mir_th > self.buffer {
            return refuse(
                "mir_th",
                quoted(self.mir_th),
                format!("mir_th must not exceed the buffer size ({}) ({sec})", self.buffer),
            );
        }
        if self.k == Duration::ZERO {
            return refuse(
                "k",
                quoted(self.k),
                "the EAR constant K must be longer than 0s (RFC 2963 section 2.3)",
            );
        }
        Ok(())
    }
}

fn quoted(v: impl fmt::Display) -> String {
    format!("\"{v}\"")
}

/// F, the piecewise-linear function of the buffer occupancy (figures 2 and 3): rates in
/// bytes per second at thresholds in bytes, flat below the first and above the last.
#[derive(Clone, Debug, PartialEq)]
pub struct RateCurve {
    th: [u64; 3],
    rate: [f64; 3],
    n: usize,
}

impl RateCurve {
    /// From (threshold bytes, rate bit/s) points with non-decreasing thresholds.
    pub fn new(points: &[(Bytes, Rate)]) -> Self {
        assert!((1..=3).contains(&points.len()));
        let mut c = RateCurve {
            th: [0; 3],
            rate: [0.0; 3],
            n: points.len(),
        };
        for (i, (t, r)) in points.iter().enumerate() {
            c.th[i] = t.0;
            c.rate[i] = r.0 as f64 / 8.0;
        }
        c
    }

    /// F(q) in bytes per second.
    #[inline]
    pub fn rate(&self, q: u64) -> f64 {
        // 2.3 / 2.5: "When the buffer occupancy is below CIR_th, the output rate ... is
        // ... the CIR"; F(CIR_th) = CIR.
        if q <= self.th[0] {
            return self.rate[0];
        }
        // "between CIR_th and PIR_th ... F increases linearly from CIR to PIR", then from
        // PIR to MIR between PIR_th and MIR_th. A piece of zero width is skipped: F jumps.
        for i in 1..self.n {
            if q < self.th[i] {
                let (t0, t1) = (self.th[i - 1] as f64, self.th[i] as f64);
                let (r0, r1) = (self.rate[i - 1], self.rate[i]);
                return r0 + (r1 - r0) * (q as f64 - t0) / (t1 - t0);
            }
        }
        // "when the buffer occupancy is above MIR_th, the shaping rate remains constant at
        // the MIR"
        self.rate[self.n - 1]
    }
}

/// The estimated average rate of section 2.3 ([Stoica]'s exponential average).
#[derive(Clone, Debug, PartialEq)]
pub struct Ear {
    /// K in seconds.
    k: f64,
    /// Bytes per second.
    rate: f64,
    last: SimTime,
}

impl Ear {
    pub fn new(k: Duration) -> Self {
        Ear {
            k: k.as_secs_f64(),
            rate: 0.0,
            last: SimTime::ZERO,
        }
    }

    /// The current estimate, bytes per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// A packet of `size` bytes arrives at `now`.
    #[inline]
    pub fn update(&mut self, size: u32, now: SimTime) {
        let t = (now - self.last).as_secs_f64();
        let l = size as f64;
        // EARnew = [(1 - exp(-T/K)) L/T] + exp(-T/K) EARold (2.3); -expm1(-x) = 1 - e^-x
        // without cancellation for small T/K. T = 0: the limit L/K.
        self.rate = if t > 0.0 {
            let w = (-t / self.k).exp();
            -(-t / self.k).exp_m1() * l / t + w * self.rate
        } else {
            l / self.k + self.rate
        };
        self.last = now;
    }
}

/// Constant parameters of one shaper.
#[derive(Clone, Debug, PartialEq)]
pub struct RasParams {
    pub name: &'static str,
    pub green: bool,
    pub curve: RateCurve,
    pub buffer: u64,
}

/// Evolving state.
#[derive(Clone, Debug)]
pub struct RasState {
    buf: VecDeque<Held>,
    /// Occupancy q in bytes.
    bytes: u64,
    ear: Ear,
    /// Bytes emptied at the shaping rate since the previous release, as of `since`.
    emptied: f64,
    since: SimTime,
}

/// What the shaper did, since the start of the run (the conditioner framework counts
/// arrivals, releases and overflows in the measurement window).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RasCounters {
    /// Green variants: releases at T2 before T1 (the meter would colour them green).
    pub released_at_t2: u64,
    /// Largest occupancy reached, bytes.
    pub max_backlog_bytes: u64,
}

/// Tolerance of the "emptied >= B" test: float sums of the rate integral.
const EPS_BYTES: f64 = 1e-6;

/// A rate adaptive shaper (any of the four).
#[derive(Clone, Debug)]
pub struct Ras {
    pub params: RasParams,
    state: RasState,
    pub counters: RasCounters,
}

impl Ras {
    /// A shaper of `cfg` whose output link runs at `line_rate` (None: no link); the rules
    /// of sections 2.2 and 2.4 are checked first.
    pub fn new(cfg: &RasConfig, line_rate: Option<Rate>) -> Result<Self, ConfigError> {
        cfg.check(line_rate)?;
        let points: Vec<(Bytes, Rate)> = cfg.points().into_iter().map(|(_, r, _, t)| (t, r)).collect();
        Ok(Ras {
            params: RasParams {
                name: cfg.name(),
                green: cfg.green,
                curve: RateCurve::new(&points),
                buffer: cfg.buffer.0,
            },
            state: RasState {
                buf: VecDeque::new(),
                bytes: 0,
                ear: Ear::new(cfg.k),
                emptied: 0.0,
                since: SimTime::ZERO,
            },
            counters: RasCounters::default(),
        })
    }

    /// The shaping rate now, bytes per second: max(EAR(t), F(q)) (2.3, 2.5).
    #[inline]
    pub fn shaping_rate(&self) -> f64 {
        self.params.curve.rate(self.state.bytes).max(self.state.ear.rate())
    }

    pub fn ear(&self) -> f64 {
        self.state.ear.rate()
    }

    /// Bytes emptied since the previous release, at `now` (read-only).
    fn emptied_at(&self, now: SimTime) -> f64 {
        self.state.emptied + self.shaping_rate() * (now - self.state.since).as_secs_f64()
    }

    /// Brings the emptied bytes up to `now` at the rate in force since the last event.
    #[inline]
    fn advance(&mut self, now: SimTime) {
        self.state.emptied = self.emptied_at(now);
        self.state.since = now;
    }

    /// T1 of a head packet of `size` bytes, from `now`.
    fn t1(&self, size: u32, now: SimTime) -> SimTime {
        let missing = size as f64 - self.emptied_at(now);
        if missing <= EPS_BYTES {
            return now;
        }
        let ns = (missing / self.shaping_rate() * NS_PER_SEC as f64).ceil();
        now + Duration(ns as u64)
    }

    /// T2 of a head packet (green variants), None = infinity.
    fn t2(&self, h: &Held, now: SimTime, meter: Option<&Meter>) -> Option<SimTime> {
        if !self.params.green {
            return None;
        }
        meter?.green_time(now, h.size, h.pre)
    }

    /// An arriving packet: it leaves at once if the shaper is empty and may release it
    /// now, waits if the buffer has room, else is dropped (tail drop, 2.1).
    pub fn offer(&mut self, h: Held, now: SimTime, meter: Option<&Meter>) -> Offer {
        self.advance(now);
        self.state.ear.update(h.size, now);
        if self.state.buf.is_empty() {
            let by_rate = h.size as f64 - self.state.emptied <= EPS_BYTES;
            if by_rate || self.t2(&h, now, meter).is_some_and(|t| t <= now) {
                if !by_rate {
                    self.counters.released_at_t2 += 1;
                }
                self.state.emptied = 0.0;
                return Offer::PassNow;
            }
        }
        if self.state.bytes + h.size as u64 > self.params.buffer {
            return Offer::Overflow;
        }
        self.state.bytes += h.size as u64;
        self.counters.max_backlog_bytes = self.counters.max_backlog_bytes.max(self.state.bytes);
        self.state.buf.push_back(h);
        Offer::Queued
    }

    /// When the head may leave: min(T1, T2) (3.3, 3.5); None when the buffer is empty.
    pub fn next_release(&self, now: SimTime, meter: Option<&Meter>) -> Option<SimTime> {
        let h = self.state.buf.front()?;
        let t1 = self.t1(h.size, now);
        Some(match self.t2(h, now, meter) {
            Some(t2) => t1.min(t2),
            None => t1,
        })
    }

    /// Removes the head if it may leave at `now`.
    pub fn release(&mut self, now: SimTime, meter: Option<&Meter>) -> Option<Held> {
        let h = *self.state.buf.front()?;
        self.advance(now);
        let by_rate = h.size as f64 - self.state.emptied <= EPS_BYTES;
        if !by_rate {
            if self.t2(&h, now, meter).is_none_or(|t| t > now) {
                return None;
            }
            self.counters.released_at_t2 += 1;
        }
        self.state.buf.pop_front();
        self.state.bytes -= h.size as u64;
        self.state.emptied = 0.0;
        Some(h)
    }

    pub fn backlog_packets(&self) -> usize {
        self.state.buf.len()
    }

    /// Occupancy q in bytes.
    pub fn backlog_bytes(&self) -> u64 {
        self.state.bytes
    }
}

// ---------------------------------------------------------------------------------------
// Building a RAS from its scenario table (`shaper = { type = "srras" | "trras" | "g_srras" |
// "g_trras", ... }`), for the conditioner builder and trace replay.

/// The RAS of `spec` (None when `spec` is not a RAS), for a shaper whose output link runs
/// at `line_rate` (the bound of the MIR and its default; None when there is no link, in
/// trace replay: the MIR must then be given) and whose conditioner has
/// `meter` (a green RAS needs the matching three colour marker). `path` is the shaper
/// table's key path, `meter_path` the meter's.
pub fn ras_shaper(
    spec: &super::ShaperSpec,
    line_rate: Option<Rate>,
    meter: Option<&Meter>,
    path: &KeyPath,
    meter_path: &KeyPath,
) -> Result<Option<Ras>, params::ConfigError> {
    let mir = match spec {
        super::ShaperSpec::TokenBucket(_) => return Ok(None),
        super::ShaperSpec::Srras(s) | super::ShaperSpec::GSrras(s) => s.mir,
        super::ShaperSpec::Trras(s) | super::ShaperSpec::GTrras(s) => s.mir,
    };
    let Some(default_mir) = mir.or(line_rate) else {
        return Err(params::ConfigError::new(
            path.key("mir"),
            Some("(missing)".into()),
            "without an output link (trace replay) there is no line rate for the MIR to default to (RFC 2963 section 2.2): give mir",
        ));
    };
    let cfg = match spec {
        super::ShaperSpec::TokenBucket(_) => unreachable!(),
        super::ShaperSpec::Srras(s) => sr_config(s, false, default_mir),
        super::ShaperSpec::GSrras(s) => sr_config(s, true, default_mir),
        super::ShaperSpec::Trras(s) => tr_config(s, false, default_mir),
        super::ShaperSpec::GTrras(s) => tr_config(s, true, default_mir),
    };
    if let (None, Some(line_rate)) = (mir, line_rate) {
        // The MIR defaults to the line rate ("A typical value for the MIR would be the
        // line rate of the output link of the shaper", 2.2): a CIR or PIR above it is the
        // rate at fault.
        for (key, r) in [("cir", Some(cfg.cir)), ("pir", cfg.pir)] {
            if let Some(r) = r.filter(|r| *r > line_rate) {
                return Err(params::ConfigError::new(
                    path.key(key),
                    Some(format!("\"{r}\"")),
                    format!(
                        "the {} must not exceed the MIR, which defaults to the line rate of the shaper's output link ({line_rate})",
                        key.to_uppercase()
                    ),
                ));
            }
        }
    }
    if cfg.green {
        check_green_meter(&cfg, meter, path, meter_path)?;
    }
    Ras::new(&cfg, line_rate)
        .map(Some)
        .map_err(|e| params::ConfigError::new(path.key(e.field), Some(e.value), e.rule))
}

fn sr_config(s: &SrrasSpec, green: bool, mir: Rate) -> RasConfig {
    RasConfig {
        kind: RasKind::Sr,
        green,
        cir: s.cir,
        pir: None,
        mir,
        cir_th: s.cir_th,
        pir_th: None,
        mir_th: s.mir_th,
        buffer: s.buffer,
        k: s.k,
    }
}

fn tr_config(s: &TrrasSpec, green: bool, mir: Rate) -> RasConfig {
    RasConfig {
        kind: RasKind::Tr,
        green,
        cir: s.cir,
        pir: Some(s.pir),
        mir,
        cir_th: s.cir_th,
        pir_th: Some(s.pir_th),
        mir_th: s.mir_th,
        buffer: s.buffer,
        k: s.k,
    }
}

/// Section 3: a G-srRAS computes T2 from the token state of the srTCM downstream (3.3), a
/// G-trRAS from the trTCM's (3.5); the meter is the one of the same conditioner.
fn check_green_meter(
    cfg: &RasConfig,
    meter: Option<&Meter>,
    path: &KeyPath,
    meter_path: &KeyPath,
) -> Result<(), params::ConfigError> {
    let (want, section) = match cfg.kind {
        RasKind::Sr => ("srtcm", "3.3"),
        RasKind::Tr => ("trtcm", "3.5"),
    };
    let ok = matches!(
        (cfg.kind, meter),
        (RasKind::Sr, Some(Meter::Srtcm(_))) | (RasKind::Tr, Some(Meter::Trtcm(_)))
    );
    if ok {
        return Ok(());
    }
    let name = cfg.name();
    let rule = format!(
        "a {name} releases packets by the token state of the {} downstream (RFC 2963 section {section}): \
         the conditioner needs meter = {{ type = \"{want}\", ... }}",
        if want == "srtcm" { "srTCM" } else { "trTCM" }
    );
    match meter {
        None => Err(params::ConfigError::new(
            path.key("type"),
            Some(format!("\"{}\"", type_tag(cfg))),
            rule,
        )),
        Some(_) => Err(params::ConfigError::new(meter_path.key("type"), None, rule)),
    }
}

fn type_tag(cfg: &RasConfig) -> &'static str {
    match (cfg.kind, cfg.green) {
        (RasKind::Sr, false) => "srras",
        (RasKind::Tr, false) => "trras",
        (RasKind::Sr, true) => "g_srras",
        (RasKind::Tr, true) => "g_trras",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditioner::tb_shaper::{DrivenShaper, test_drive, test_held as held};
    use crate::conditioner::{ColorMode, Srtcm, Trtcm};
    use crate::packet::Color;

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    /// srRAS: CIR 8 kbit/s (1000 B/s), MIR 24 kbit/s (3000 B/s), CIR_th 2000 B, MIR_th
    /// 4000 B, buffer 6000 B, K 1 s.
    fn sr(green: bool) -> RasConfig {
        RasConfig {
            kind: RasKind::Sr,
            green,
            cir: Rate(8_000),
            pir: None,
            mir: Rate(24_000),
            cir_th: Bytes(2000),
            pir_th: None,
            mir_th: Bytes(4000),
            buffer: Bytes(6000),
            k: Duration::from_secs(1),
        }
    }

    /// trRAS: CIR 1000 B/s, PIR 2000 B/s, MIR 4000 B/s; CIR_th 1000, PIR_th 3000, MIR_th
    /// 5000 B.
    fn tr() -> RasConfig {
        RasConfig {
            kind: RasKind::Tr,
            green: false,
            cir: Rate(8_000),
            pir: Some(Rate(16_000)),
            mir: Rate(32_000),
            cir_th: Bytes(1000),
            pir_th: Some(Bytes(3000)),
            mir_th: Bytes(5000),
            buffer: Bytes(8000),
            k: Duration::from_secs(1),
        }
    }

    #[test]
    fn srras_rate_at_and_between_every_breakpoint() {
        // Figure 2, in bytes/s: 1000 up to CIR_th = 2000 B, linear to 3000 at MIR_th =
        // 4000 B (slope 2000 B/s per 2000 B: +1 B/s per byte), 3000 beyond.
        let c = RateCurve::new(&[(Bytes(2000), Rate(8_000)), (Bytes(4000), Rate(24_000))]);
        let table = [
            (0, 1000.0),
            (1999, 1000.0),
            (2000, 1000.0), // F(CIR_th) = CIR
            (2001, 1001.0),
            (2500, 1500.0),
            (3000, 2000.0),
            (3999, 2999.0),
            (4000, 3000.0), // F(MIR_th) = MIR
            (4001, 3000.0),
            (1_000_000, 3000.0),
        ];
        for (q, want) in table {
            assert_eq!(c.rate(q), want, "F({q})");
        }
    }

    #[test]
    fn trras_rate_at_and_between_every_breakpoint() {
        // Figure 3, bytes/s: 1000 up to CIR_th = 1000 B; 1000 -> 2000 between 1000 and 3000
        // B (+0.5 per byte); 2000 -> 4000 between 3000 and 5000 B (+1 per byte); 4000 on.
        let ras = Ras::new(&tr(), Some(Rate(100_000))).unwrap();
        let c = &ras.params.curve;
        let table = [
            (0, 1000.0),
            (1000, 1000.0),
            (1001, 1000.5),
            (2000, 1500.0),
            (3000, 2000.0),
            (3001, 2001.0),
            (4000, 3000.0),
            (5000, 4000.0),
            (9000, 4000.0),
        ];
        for (q, want) in table {
            assert_eq!(c.rate(q), want, "F({q})");
        }
    }

    #[test]
    fn coinciding_thresholds_jump_just_above() {
        // CIR_th = PIR_th = 1000: CIR at 1000 B, PIR + slope just above; PIR_th = MIR_th =
        // 3000 on the other curve: MIR from 3000 B.
        let c = RateCurve::new(&[
            (Bytes(1000), Rate(8_000)),
            (Bytes(1000), Rate(16_000)),
            (Bytes(3000), Rate(32_000)),
        ]);
        assert_eq!(c.rate(1000), 1000.0);
        assert_eq!(c.rate(1001), 2001.0);
        let c = RateCurve::new(&[
            (Bytes(1000), Rate(8_000)),
            (Bytes(3000), Rate(16_000)),
            (Bytes(3000), Rate(32_000)),
        ]);
        assert_eq!(c.rate(2999), 1999.5);
        assert_eq!(c.rate(3000), 4000.0);
    }

    #[test]
    fn shaping_rate_is_the_maximum_of_ear_and_f() {
        // K = 1 s. One 1500 B packet at t = 0 (T = 0): EAR = L/K = 1500 B/s. Nothing has
        // been emptied yet (0 < 1500 B), so it waits: q = 1500 <= CIR_th, F = CIR = 1000
        // B/s < EAR: R = 1500 B/s.
        let mut ras = Ras::new(&sr(false), Some(Rate(100_000))).unwrap();
        assert_eq!(
            ras.offer(held(0, 1500, SimTime::ZERO), SimTime::ZERO, None),
            Offer::Queued
        );
        assert_eq!(ras.ear(), 1500.0);
        assert_eq!(ras.shaping_rate(), 1500.0);
        // T1 = 1500 B / 1500 B/s = 1 s.
        assert_eq!(ras.next_release(SimTime::ZERO, None), Some(ms(1000)));
    }

    #[test]
    fn ear_on_a_hand_computed_arrival_sequence() {
        // K = 1 s, EAR_0 = 0, last arrival at 0.
        // t = 1 s, L = 1000: T = 1, w = e^-1 = 0.36787944;
        //   EAR = (1 - w) 1000/1 + 0 = 632.12056 B/s
        // t = 1 s, L = 500 (T = 0): EAR = 500/1 + 632.12056 = 1132.12056
        // t = 3 s, L = 2000: T = 2, w = e^-2 = 0.13533528;
        //   EAR = 0.86466472 * 2000/2 + 0.13533528 * 1132.12056 = 864.66472 + 153.21586
        //       = 1017.88057
        // t = 3.5 s, L = 100: T = 0.5, w = e^-0.5 = 0.60653066;
        //   EAR = 0.39346934 * 100/0.5 + 0.60653066 * 1017.88057 = 78.69387 + 617.37578
        //       = 696.06964
        let mut e = Ear::new(Duration::from_secs(1));
        let seq = [
            (1000, 1000, 632.12056),
            (1000, 500, 1132.12056),
            (3000, 2000, 1017.88057),
            (3500, 100, 696.06964),
        ];
        for (t, l, want) in seq {
            e.update(l, ms(t));
            assert!((e.rate() - want).abs() < 1e-4, "t = {t} ms: {} != {want}", e.rate());
        }
    }

    #[test]
    fn ear_converges_to_a_constant_rate() {
        // 1000 B every 10 ms = 100 000 B/s; with K = 100 ms the estimate settles on it.
        let mut e = Ear::new(Duration::from_millis(100));
        for i in 1..=200 {
            e.update(1000, ms(10 * i));
        }
        assert!((e.rate() - 100_000.0).abs() < 1e-6 * 100_000.0, "{}", e.rate());
    }

    /// A RAS with the meter downstream of it, which colours each packet as it leaves.
    struct Metered<'a> {
        ras: &'a mut Ras,
        meter: &'a mut Option<Meter>,
        rng: crate::engine::rng::Rng,
        colours: Vec<Color>,
    }

    impl DrivenShaper for Metered<'_> {
        fn next_release(&mut self, now: SimTime) -> Option<SimTime> {
            self.ras.next_release(now, self.meter.as_ref())
        }
        fn offer(&mut self, h: Held, now: SimTime) -> Offer {
            self.ras.offer(h, now, self.meter.as_ref())
        }
        fn release(&mut self, now: SimTime) -> Option<Held> {
            self.ras.release(now, self.meter.as_ref())
        }
        fn on_leave(&mut self, size: u32, now: SimTime) {
            let c = self
                .meter
                .as_mut()
                .map_or(Color::Green, |m| m.color(size, now, Color::Green, &mut self.rng));
            self.colours.push(c);
        }
    }

    /// Drives a shaper as the simulation does (tb_shaper::test_drive), a meter downstream
    /// colouring each packet as it leaves. Returns (packet, departure ns, colour) and the
    /// dropped packets.
    fn drive(ras: &mut Ras, meter: &mut Option<Meter>, arrivals: &[(u64, u32)]) -> (Vec<(u32, u64, Color)>, Vec<u32>) {
        let mut m = Metered {
            ras,
            meter,
            rng: crate::engine::rng::stream(1, "test"),
            colours: Vec::new(),
        };
        let (out, dropped) = test_drive(&mut m, arrivals);
        let out = out
            .into_iter()
            .zip(m.colours)
            .map(|((id, t, _), c)| (id, t, c))
            .collect();
        (out, dropped)
    }

    /// srRAS of `sr()` (CIR 1000 B/s, MIR 3000 B/s, CIR_th 2000, MIR_th 4000, buffer
    /// 6000 B) with K = 1000 s: EAR stays far below CIR, so the rate is F(q) alone.
    fn sr_slow_ear(green: bool) -> Ras {
        let mut cfg = sr(green);
        cfg.k = Duration::from_secs(1000);
        Ras::new(&cfg, Some(Rate(100_000))).unwrap()
    }

    /// srTCM downstream: CIR 1000 B/s, CBS 1500 B, EBS 3000 B, starting full.
    fn srtcm() -> Option<Meter> {
        Some(Meter::Srtcm(Srtcm::new(
            Rate(8_000),
            Bytes(1500),
            Bytes(3000),
            ColorMode::Blind,
        )))
    }

    /// A burst of five 1000 B packets at t = 0 and one at 4 s.
    const BURST: [(u64, u32); 6] = [
        (0, 1000),
        (0, 1000),
        (0, 1000),
        (0, 1000),
        (0, 1000),
        (4_000_000_000, 1000),
    ];

    #[test]
    fn srras_releases_a_burst_by_hand() {
        // K = 1000 s: each arrival adds about L/K = 1 B/s to EAR (5 B/s after the burst),
        // negligible next to CIR = 1000 B/s, so R = F(q) (slope 1 B/s per byte between
        // CIR_th = 2000 and MIR_th = 4000 B).
        // t = 0: five 1000 B packets; the first finds emptied = 0 < 1000: all wait.
        //   q = 5000 >= MIR_th: F = MIR = 3000 B/s. #0 leaves when 1000 B are emptied:
        //   T1 = 1/3 s = 333 333 334 ns (rounded up).
        // #0 leaves: q = 4000 -> F = 3000: #1 at +333 333 334 = 666 666 668.
        // #1 leaves: q = 3000 -> F = 1000 + (3000 - 2000) = 2000 B/s: #2 at +0.5 s =
        //   1 166 666 668.
        // #2 leaves: q = 2000 -> F = CIR = 1000: #3 at +1 s = 2 166 666 668.
        // #3 leaves: q = 1000 -> 1000 B/s: #4 at 3 166 666 668.
        // #5 arrives at 4 s: emptied since #4 = 0.833333332 s * 1000 B/s = 833.33 B < 1000:
        //   it waits (q = 1000, F = 1000) for the missing 166.666668 B: 4 166 666 668.
        let mut ras = sr_slow_ear(false);
        let (out, dropped) = drive(&mut ras, &mut None, &BURST);
        let times: Vec<u64> = out.iter().map(|o| o.1).collect();
        assert_eq!(
            times,
            vec![
                333_333_334,
                666_666_668,
                1_166_666_668,
                2_166_666_668,
                3_166_666_668,
                4_166_666_668
            ]
        );
        assert!(dropped.is_empty());
        assert_eq!(ras.counters.max_backlog_bytes, 5000);
        assert_eq!(ras.counters.released_at_t2, 0);
    }

    #[test]
    fn g_srras_releases_at_min_t1_t2_by_hand() {
        // The same burst through a G-srRAS in front of an srTCM (CIR 1000 B/s, CBS 1500,
        // EBS 3000, full at 0). T2 of a 1000 B head = max(t, t + (1000 - Tc(t))/1000 s).
        // t = 0: #0 arrives to the empty shaper; Tc = 1500 >= 1000: T2 = 0 -> leaves at
        //   once, green, Tc = 500. #1: the buffer is empty, emptied = 0 (reset by the
        //   release), T2 = 0 + 500/1000 s = 0.5 s: waits. #2-#4 wait: q = 4000.
        //   T1(#1) = 1000 B at F(4000) = 3000 B/s = 333 333 334 ns < T2: #1 leaves by T1,
        //   yellow (Tc(1/3 s) = 833 < 1000; Te = 3000 -> 2000).
        // At 333 333 334: q = 3000 -> F = 2000 B/s: T1(#2) = +0.5 s = 833 333 334;
        //   T2(#2): Tc(333 333 334) = 500 + 333.333334 = 833.333334, needs 166.666666 B at
        //   1000 B/s: 166 666 666 ns -> 500 000 000. T2 < T1: #2 leaves at 0.5 s, green,
        //   Tc = 0.
        // At 0.5 s: q = 2000 -> F = 1000: T1(#3) = 1.5 s; T2 = 0.5 + 1 s = 1.5 s: leaves at
        //   1.5 s (both), green (Tc = 1000), Tc = 0.
        // #4: T1 = T2 = 2.5 s, green.
        // #5 at 4 s: buffer empty, emptied since 2.5 s = 1500 B >= 1000: leaves at once
        //   (Tc = 1500 as well): green.
        let mut ras = sr_slow_ear(true);
        let mut meter = srtcm();
        let (out, dropped) = drive(&mut ras, &mut meter, &BURST);
        assert!(dropped.is_empty());
        assert_eq!(
            out,
            vec![
                (0, 0, Color::Green),
                (1, 333_333_334, Color::Yellow),
                (2, 500_000_000, Color::Green),
                (3, 1_500_000_000, Color::Green),
                (4, 2_500_000_000, Color::Green),
                (5, 4_000_000_000, Color::Green),
            ]
        );
        // #0 (T2 = now, nothing emptied) and #2 left by T2 before T1; #3 and #4 by T1 = T2.
        assert_eq!(ras.counters.released_at_t2, 2);
    }

    #[test]
    fn srras_alone_colours_the_burst_worse() {
        // The same srTCM behind the plain srRAS (departures of srras_releases_a_burst_by_hand):
        // #0 at 1/3 s: Tc = 1500 -> green, Tc = 500. #1 at 2/3 s: Tc = 500 + 333.3 = 833.3
        // < 1000: yellow (Te 3000 -> 2000). #2 at 7/6 s: Tc = 833.3 + 500 = 1333.3: green,
        // 333.3. #3, #4, #5 one second apart (#5 at 4.17 s): 1333.3 each time: green. One
        // yellow, as with the G-srRAS, but every packet waited longer.
        let mut ras = sr_slow_ear(false);
        let mut meter = srtcm();
        let (out, _) = drive(&mut ras, &mut meter, &BURST);
        let colours: Vec<Color> = out.iter().map(|o| o.2).collect();
        use Color::{Green, Yellow};
        assert_eq!(colours, vec![Green, Yellow, Green, Green, Green, Green]);
    }

    #[test]
    fn t2_is_infinite_for_a_packet_larger_than_cbs() {
        // CBS = 1500 B: a 2000 B head is never green, so the G-srRAS waits for T1 only, as
        // the srRAS does: 2000 B at F(2000) = CIR = 1000 B/s -> 2 s.
        let mut ras = sr_slow_ear(true);
        let meter = srtcm();
        assert_eq!(
            meter.as_ref().unwrap().green_time(SimTime::ZERO, 2000, Color::Green),
            None
        );
        assert_eq!(
            ras.offer(held(0, 2000, SimTime::ZERO), SimTime::ZERO, meter.as_ref()),
            Offer::Queued
        );
        assert_eq!(ras.next_release(SimTime::ZERO, meter.as_ref()), Some(ms(2000)));
        assert_eq!(ras.release(ms(1999), meter.as_ref()), None);
        assert!(ras.release(ms(2000), meter.as_ref()).is_some());
        // The trTCM: B above PBS (or CBS) gives T2 = infinity as well.
        let tr = Meter::Trtcm(Trtcm::new(
            Rate(8_000),
            Bytes(3000),
            Rate(16_000),
            Bytes(1500),
            ColorMode::Blind,
        ));
        assert_eq!(tr.green_time(SimTime::ZERO, 2000, Color::Green), None);
        assert_eq!(tr.green_time(SimTime::ZERO, 1500, Color::Green), Some(SimTime::ZERO));
    }

    #[test]
    fn g_trras_waits_for_both_buckets() {
        // trTCM CIR 1000 B/s CBS 1000, PIR 2000 B/s PBS 2000, full at 0; G-trRAS of tr()
        // (K = 1000 s). Three 1000 B packets at 0.
        // #0: T2 = 0 -> leaves at once, green: Tc = 0, Tp = 1000.
        // #1, #2 wait (q = 2000 -> F = 1000 + 1000*0.5 = 1500 B/s). T1(#1) = 1000/1500 s
        //   = 666 666 667 ns; T2(#1) = max(0 + 1000/1000, 0 + 0/2000) = 1 s. #1 leaves at
        //   T1: Tc(2/3 s) = 666.7 < 1000 -> yellow, Tp = 1000 + 1333.3 (capped 2000) - 1000
        //   = 1000.
        // At 666 666 667: q = 1000 -> F = CIR = 1000: T1(#2) = +1 s = 1 666 666 667;
        //   T2(#2) = max(Tc: 333.3 B missing at 1000 B/s = 333 333 333 ns -> 1 000 000 000,
        //   Tp = 1000 already) = 1 s: #2 leaves at 1 s, green.
        let mut cfg = tr();
        cfg.green = true;
        cfg.k = Duration::from_secs(1000);
        let mut ras = Ras::new(&cfg, Some(Rate(100_000))).unwrap();
        let mut meter = Some(Meter::Trtcm(Trtcm::new(
            Rate(8_000),
            Bytes(1000),
            Rate(16_000),
            Bytes(2000),
            ColorMode::Blind,
        )));
        let (out, _) = drive(&mut ras, &mut meter, &[(0, 1000), (0, 1000), (0, 1000)]);
        assert_eq!(
            out,
            vec![
                (0, 0, Color::Green),
                (1, 666_666_667, Color::Yellow),
                (2, 1_000_000_000, Color::Green),
            ]
        );
    }

    #[test]
    fn colour_aware_meter_never_turns_a_yellow_packet_green() {
        let meter = Meter::Srtcm(Srtcm::new(Rate(8_000), Bytes(1500), Bytes(3000), ColorMode::Aware));
        assert_eq!(meter.green_time(SimTime::ZERO, 1000, Color::Yellow), None);
        assert_eq!(meter.green_time(SimTime::ZERO, 1000, Color::Green), Some(SimTime::ZERO));
    }

    #[test]
    fn tail_drop_when_the_buffer_is_full() {
        // Buffer 6000 B: six 1000 B packets at 0 fit (the first waits too: nothing
        // emptied yet), the seventh is dropped; EAR counts it (7 packets at T = 0: 7000/K).
        let mut ras = Ras::new(&sr(false), Some(Rate(100_000))).unwrap();
        for i in 0..6 {
            assert_eq!(
                ras.offer(held(i, 1000, SimTime::ZERO), SimTime::ZERO, None),
                Offer::Queued
            );
        }
        assert_eq!(
            ras.offer(held(6, 1000, SimTime::ZERO), SimTime::ZERO, None),
            Offer::Overflow
        );
        assert_eq!(ras.backlog_bytes(), 6000);
        assert_eq!(ras.ear(), 7000.0);
    }

    #[test]
    fn a_faster_rate_brings_the_head_forward() {
        // One 1000 B packet at 0 (q = 1000, F = 1000 B/s, K = 1000 s): T1 = 1 s. At 0.5 s
        // (500 B emptied) 3000 B more arrive: q = 4000 -> MIR 3000 B/s: the remaining 500
        // B take 1/6 s: T1 = 0.5 + 0.1666667 = 666 666 667 ns.
        let mut ras = sr_slow_ear(false);
        ras.offer(held(0, 1000, SimTime::ZERO), SimTime::ZERO, None);
        assert_eq!(ras.next_release(SimTime::ZERO, None), Some(ms(1000)));
        ras.offer(held(1, 3000, ms(500)), ms(500), None);
        let t = ras.next_release(ms(500), None).unwrap();
        // EAR adds ~1 B/s per packet (K = 1000 s), far below F: 500 B / 3000 B/s.
        assert_eq!(t, SimTime(666_666_667));
    }

    #[test]
    fn configuration_relations_are_enforced() {
        let line = Rate(100_000);
        let mut c = sr(false);
        c.mir = Rate(4_000);
        let e = c.check(Some(line)).unwrap_err();
        assert_eq!((e.field, e.value.as_str()), ("mir", "\"4kbps\""));
        assert!(e.rule.contains("at least the CIR"), "{}", e.rule);
        let mut c = sr(false);
        c.mir = Rate(200_000);
        let e = c.check(Some(line)).unwrap_err();
        assert_eq!(e.field, "mir");
        assert!(e.rule.contains("line rate"), "{}", e.rule);
        let mut c = sr(false);
        c.mir_th = Bytes(1000);
        assert_eq!(c.check(Some(line)).unwrap_err().field, "mir_th");
        let mut c = sr(false);
        c.buffer = Bytes(3000);
        let e = c.check(Some(line)).unwrap_err();
        assert_eq!(e.field, "mir_th");
        assert!(e.rule.contains("buffer size"), "{}", e.rule);
        let mut c = tr();
        c.pir = Some(Rate(4_000));
        assert_eq!(c.check(Some(line)).unwrap_err().field, "pir");
        let mut c = tr();
        c.pir = Some(Rate(64_000));
        assert_eq!(c.check(Some(line)).unwrap_err().field, "mir");
        let mut c = tr();
        c.pir_th = Some(Bytes(500));
        assert_eq!(c.check(Some(line)).unwrap_err().field, "pir_th");
        let mut c = tr();
        c.pir_th = Some(Bytes(6000));
        assert_eq!(c.check(Some(line)).unwrap_err().field, "mir_th");
        let mut c = tr();
        c.k = Duration::ZERO;
        assert_eq!(c.check(Some(line)).unwrap_err().field, "k");
        let mut c = tr();
        c.cir = Rate(0);
        assert_eq!(c.check(Some(line)).unwrap_err().field, "cir");
        // Equalities are allowed: CIR = PIR = MIR = line rate, thresholds all = buffer.
        let mut c = tr();
        c.pir = Some(Rate(8_000));
        c.mir = Rate(8_000);
        c.cir_th = Bytes(8000);
        c.pir_th = Some(Bytes(8000));
        c.mir_th = Bytes(8000);
        assert_eq!(c.check(Some(Rate(8_000))), Ok(()));
    }
}
