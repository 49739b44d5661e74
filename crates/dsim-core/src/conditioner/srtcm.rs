//! srTCM: the single rate three colour marker's meter, RFC 2697.
//!
//! Section 2, parameters: Committed Information Rate CIR (dsim: bit/s; the RFC counts
//! bytes of IP packets per second), Committed Burst Size CBS and Excess Burst Size EBS in
//! bytes; "at least one of them larger than 0". Mode: colour-blind or colour-aware.
//!
//! Section 3, metering: two buckets C (depth CBS) and E (depth EBS) share the rate CIR;
//! both start full. "The token counts Tc and Te are updated CIR times per second as
//! follows: If Tc is less than CBS, Tc is incremented by one, else if Te is less then EBS,
//! Te is incremented by one, else neither Tc nor Te is incremented." dsim earns CIR·dt
//! token units between arrivals ([`super::token_bucket`], exact integers): C takes what
//! fits below CBS and the rest overflows into E (capped at EBS). Between two arrivals Tc
//! only grows, so "C first, then E" over the whole interval is the RFC's per-token rule
//! applied token by token.
//!
//! Colour-blind: green if Tc >= B (Tc -= B), else yellow if Te >= B (Te -= B), else red.
//! Colour-aware: green if precoloured green and Tc >= B; else yellow if precoloured green
//! or yellow and Te >= B; else red. A packet that no meter coloured before counts as
//! green, so the colour-aware meter of an uncoloured stream acts as the colour-blind one.

use serde::{Deserialize, Serialize};

use crate::bucket::Bucket;
use crate::packet::Color;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Bytes, Rate, SimTime};

/// `meter = { type = "srtcm", ... }`: RFC 2697's single rate three colour marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2697")]
pub struct SrtcmSpec {
    /// Committed Information Rate (CIR).
    #[param(section = "2")]
    pub cir: Rate,
    /// Committed Burst Size (CBS), the depth of bucket C.
    #[param(section = "2")]
    pub cbs: Bytes,
    /// Excess Burst Size (EBS), the depth of bucket E.
    #[param(section = "2")]
    pub ebs: Bytes,
    /// `"blind"` (default) or `"aware"` of the colour packets arrive with.
    #[serde(default)]
    #[param(section = "1")]
    pub mode: ColorMode,
}

impl SrtcmSpec {
    /// The meter this table declares.
    pub fn meter(&self, path: &KeyPath) -> Result<Srtcm, ConfigError> {
        self.check(path)?;
        // Section 2: "The CBS and EBS must be configured so that at least one of them is
        // larger than 0."
        if self.cbs.0 == 0 && self.ebs.0 == 0 {
            return Err(ConfigError::new(
                path.key("cbs"),
                Some(format!("\"{}\"", self.cbs)),
                "at least one of CBS and EBS must be larger than 0 (RFC 2697 section 2)",
            ));
        }
        Ok(Srtcm::new(self.cir, self.cbs, self.ebs, self.mode))
    }
}

/// Colour-blind or colour-aware operation (RFC 2697 / RFC 2698 section 1; `mode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum ColorMode {
    #[default]
    Blind,
    Aware,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Srtcm {
    /// Bucket C: rate CIR, depth CBS.
    pub c: Bucket,
    /// Bucket E: depth EBS, filled only by C's overflow (its own rate is zero).
    pub e: Bucket,
    pub mode: ColorMode,
}

impl Srtcm {
    pub fn new(cir: Rate, cbs: Bytes, ebs: Bytes, mode: ColorMode) -> Self {
        Srtcm {
            c: Bucket::full(cir, cbs),
            e: Bucket::full(Rate(0), ebs),
            mode,
        }
    }

    /// Section 3: Tc then Te receive the tokens earned since the last arrival.
    #[inline]
    fn update(&mut self, now: SimTime) {
        let overflow = self.c.fill(now);
        self.e.fill(now);
        self.e.add_units(overflow);
    }

    /// Section 4: the colour of a packet of `size` bytes arriving at `now`; `pre` is its
    /// colour on arrival (used in colour-aware mode only).
    #[inline]
    pub fn color(&mut self, size: u32, now: SimTime, pre: Color) -> Color {
        self.update(now);
        let pre = match self.mode {
            ColorMode::Blind => Color::Green,
            ColorMode::Aware => pre,
        };
        // "If [precoloured green and] Tc(t)-B >= 0, the packet is green and Tc is
        // decremented by B"
        if pre == Color::Green && self.c.has(size) {
            self.c.take(size);
            Color::Green
        // "else if [precoloured green or yellow and] Te(t)-B >= 0, the packet is yellow
        // and Te is decremented by B"
        } else if pre != Color::Red && self.e.has(size) {
            self.e.take(size);
            Color::Yellow
        // "else the packet is red and neither Tc nor Te is decremented"
        } else {
            Color::Red
        }
    }

    /// The earliest instant >= `now` at which a packet of `size` bytes would be green:
    /// T2 of the G-srRAS (RFC 2963 section 3.3), None ("infinity") when size > CBS.
    pub fn green_time(&self, now: SimTime, size: u32) -> Option<SimTime> {
        self.c.time_to(size, now).map(|d| now + d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Color::{Green, Red, Yellow};
    use crate::time::NS_PER_SEC;

    fn at(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    /// CIR = 8000 bit/s = 1000 B/s = 1 B/ms, CBS = 1500 B, EBS = 1000 B.
    fn meter(mode: ColorMode) -> Srtcm {
        Srtcm::new(Rate(8000), Bytes(1500), Bytes(1000), mode)
    }

    #[test]
    fn colour_blind_hand_computed() {
        // (t ms, B, colour, Tc after, Te after)
        // t=0    Tc=1500 Te=1000; B=1000 -> green, Tc=500
        // t=0    B=1000: Tc 500 < 1000, Te 1000 >= 1000 -> yellow, Te=0
        // t=0    B=500: Tc 500 >= 500 -> green, Tc=0
        // t=500  +500: Tc=500; B=1000: Tc 500, Te 0 -> red (nothing taken)
        // t=2000 +1500: Tc 500+1500=2000 -> 1500, overflow 500 -> Te=500; B=1500 -> green, Tc=0
        // t=2000 B=600: Tc 0, Te 500 < 600 -> red
        // t=2000 B=500: Te 500 -> yellow, Te=0
        // t=5000 +3000: Tc 0 -> 1500 (1500 used), 1500 overflow -> Te = min(1500, 1000) = 1000
        //        B=2000 (larger than CBS and EBS) -> red; B=1000 -> green, Tc=500
        let seq = [
            (0, 1000, Green, 500, 1000),
            (0, 1000, Yellow, 500, 0),
            (0, 500, Green, 0, 0),
            (500, 1000, Red, 500, 0),
            (2000, 1500, Green, 0, 500),
            (2000, 600, Red, 0, 500),
            (2000, 500, Yellow, 0, 0),
            (5000, 2000, Red, 1500, 1000),
            (5000, 1000, Green, 500, 1000),
        ];
        let mut m = meter(ColorMode::Blind);
        for (i, (t, b, want, tc, te)) in seq.into_iter().enumerate() {
            // The precolour is ignored in colour-blind mode.
            assert_eq!(m.color(b, at(t), Red), want, "packet {i}");
            assert_eq!(m.c.tokens_bytes_at(at(t)), tc as f64, "Tc after packet {i}");
            assert_eq!(m.e.tokens_bytes_at(at(t)), te as f64, "Te after packet {i}");
        }
    }

    #[test]
    fn colour_aware_hand_computed() {
        // t=0    pre yellow B=1000: not green-eligible; Te 1000 -> yellow, Te=0 (Tc stays 1500)
        // t=0    pre green B=1000: Tc 1500 -> green, Tc=500
        // t=0    pre red B=100: red although Tc holds 500
        // t=0    pre green B=800: Tc 500 < 800, Te 0 < 800 -> red
        // t=1000 +1000: Tc 500 -> 1500 (no overflow), Te 0. pre yellow B=100: Te 0 -> red
        // t=1200 +200: Tc full, 200 overflow -> Te=200. pre yellow B=150 -> yellow, Te=50
        // t=1200 pre green B=1500 -> green, Tc=0
        let seq = [
            (0, Yellow, 1000, Yellow, 1500, 0),
            (0, Green, 1000, Green, 500, 0),
            (0, Red, 100, Red, 500, 0),
            (0, Green, 800, Red, 500, 0),
            (1000, Yellow, 100, Red, 1500, 0),
            (1200, Yellow, 150, Yellow, 1500, 50),
            (1200, Green, 1500, Green, 0, 50),
        ];
        let mut m = meter(ColorMode::Aware);
        for (i, (t, pre, b, want, tc, te)) in seq.into_iter().enumerate() {
            assert_eq!(m.color(b, at(t), pre), want, "packet {i}");
            assert_eq!(m.c.tokens_bytes_at(at(t)), tc as f64, "Tc after packet {i}");
            assert_eq!(m.e.tokens_bytes_at(at(t)), te as f64, "Te after packet {i}");
        }
    }

    #[test]
    fn zero_cbs_sends_every_token_to_e() {
        // RFC 2697 section 2 allows CBS = 0 when EBS > 0: nothing is ever green.
        let mut m = Srtcm::new(Rate(8000), Bytes(0), Bytes(100), ColorMode::Blind);
        assert_eq!(m.color(100, SimTime::ZERO, Green), Yellow);
        assert_eq!(m.color(1, SimTime::ZERO, Green), Red);
        assert_eq!(m.color(50, SimTime(50 * NS_PER_SEC / 1000), Green), Yellow);
    }

    #[test]
    fn green_time_is_t2_of_the_green_shaper() {
        // Tc = 500 B after a 1000 B green packet at t=0; a 900 B packet needs 400 B more at
        // 1 B/ms: T2 = 400 ms. A packet above CBS never turns green.
        let mut m = meter(ColorMode::Blind);
        m.color(1000, SimTime::ZERO, Green);
        assert_eq!(m.green_time(SimTime::ZERO, 900), Some(at(400)));
        assert_eq!(m.green_time(SimTime::ZERO, 500), Some(SimTime::ZERO));
        assert_eq!(m.green_time(SimTime::ZERO, 1501), None);
    }
}
