//! trTCM: the two rate three colour marker's meter, RFC 2698.
//!
//! Section 2, parameters: Peak Information Rate PIR and Committed Information Rate CIR
//! (dsim: bit/s), "The PIR must be equal to or greater than the CIR"; Peak Burst Size PBS
//! and Committed Burst Size CBS in bytes, "both of them must be configured to be greater
//! than 0". Mode: colour-blind or colour-aware.
//!
//! Section 3, metering: bucket P (rate PIR, depth PBS) and bucket C (rate CIR, depth CBS),
//! both full at time 0, each filled independently up to its depth (exact token units, see
//! [`super::token_bucket`]).
//!
//! Colour-blind: "If Tp(t)-B < 0, the packet is red, else if Tc(t)-B < 0, the packet is
//! yellow and Tp is decremented by B, else the packet is green and both Tp and Tc are
//! decremented by B."
//! Colour-aware: "If the packet has been precolored as red or if Tp(t)-B < 0, the packet
//! is red, else if the packet has been precolored as yellow or if Tc(t)-B < 0, the packet
//! is yellow and Tp is decremented by B, else the packet is green and both Tp and Tc are
//! decremented by B." An uncoloured packet counts as green.

use serde::{Deserialize, Serialize};

use super::srtcm::ColorMode;
use crate::bucket::Bucket;
use crate::packet::Color;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Bytes, Rate, SimTime};

/// `meter = { type = "trtcm", ... }`: RFC 2698's two rate three colour marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2698")]
pub struct TrtcmSpec {
    /// Committed Information Rate (CIR).
    #[param(section = "2")]
    pub cir: Rate,
    /// Committed Burst Size (CBS), the depth of bucket C.
    #[param(range = "(0, inf)", section = "2")]
    pub cbs: Bytes,
    /// Peak Information Rate (PIR); at least the CIR.
    #[param(section = "2")]
    pub pir: Rate,
    /// Peak Burst Size (PBS), the depth of bucket P.
    #[param(range = "(0, inf)", section = "2")]
    pub pbs: Bytes,
    /// `"blind"` (default) or `"aware"` of the colour packets arrive with.
    #[serde(default)]
    #[param(section = "1")]
    pub mode: ColorMode,
}

impl TrtcmSpec {
    /// The meter this table declares.
    pub fn meter(&self, path: &KeyPath) -> Result<Trtcm, ConfigError> {
        self.check(path)?;
        // Section 2: "The PIR must be equal to or greater than the CIR."
        if self.pir < self.cir {
            return Err(ConfigError::new(
                path.key("pir"),
                Some(format!("\"{}\"", self.pir)),
                format!(
                    "the PIR must be equal to or greater than the CIR ({}) (RFC 2698 section 2)",
                    self.cir
                ),
            ));
        }
        Ok(Trtcm::new(self.cir, self.cbs, self.pir, self.pbs, self.mode))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trtcm {
    /// Bucket P: rate PIR, depth PBS.
    pub p: Bucket,
    /// Bucket C: rate CIR, depth CBS.
    pub c: Bucket,
    pub mode: ColorMode,
}

impl Trtcm {
    pub fn new(cir: Rate, cbs: Bytes, pir: Rate, pbs: Bytes, mode: ColorMode) -> Self {
        Trtcm {
            p: Bucket::full(pir, pbs),
            c: Bucket::full(cir, cbs),
            mode,
        }
    }

    #[inline]
    pub fn color(&mut self, size: u32, now: SimTime, pre: Color) -> Color {
        self.p.fill(now);
        self.c.fill(now);
        let pre = match self.mode {
            ColorMode::Blind => Color::Green,
            ColorMode::Aware => pre,
        };
        // Section 3: red if precoloured red or Tp(t) - B < 0 (nothing decremented)
        if pre == Color::Red || !self.p.has(size) {
            Color::Red
        // yellow if precoloured yellow or Tc(t) - B < 0; Tp -= B
        } else if pre == Color::Yellow || !self.c.has(size) {
            self.p.take(size);
            Color::Yellow
        // green: Tp -= B and Tc -= B
        } else {
            self.p.take(size);
            self.c.take(size);
            Color::Green
        }
    }

    /// The earliest instant >= `now` at which a packet of `size` bytes would be green:
    /// T2 = max(t, t + (B - Tc(t))/CIR, t + (B - Tp(t))/PIR) of the G-trRAS (RFC 2963
    /// section 3.5); None ("infinity") when size > CBS or size > PBS.
    pub fn green_time(&self, now: SimTime, size: u32) -> Option<SimTime> {
        let c = self.c.time_to(size, now)?;
        let p = self.p.time_to(size, now)?;
        Some(now + c.max(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Color::{Green, Red, Yellow};

    fn at(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    /// CIR = 8000 bit/s = 1 B/ms, CBS = 1000 B; PIR = 16000 bit/s = 2 B/ms, PBS = 2000 B.
    fn meter(mode: ColorMode) -> Trtcm {
        Trtcm::new(Rate(8000), Bytes(1000), Rate(16_000), Bytes(2000), mode)
    }

    #[test]
    fn colour_blind_hand_computed() {
        // t=0    Tp=2000 Tc=1000; B=800 -> green, Tp=1200 Tc=200
        // t=0    B=800: Tp ok, Tc 200 < 800 -> yellow, Tp=400
        // t=0    B=800: Tp 400 < 800 -> red
        // t=250  Tp 400+500=900, Tc 200+250=450; B=800: Tc short -> yellow, Tp=100
        // t=1000 Tp 100+1500=1600, Tc 450+750=1200 -> 1000; B=1000 -> green, Tp=600 Tc=0
        // t=1000 B=2500 (larger than PBS): red
        let seq = [
            (0, 800, Green, 1200, 200),
            (0, 800, Yellow, 400, 200),
            (0, 800, Red, 400, 200),
            (250, 800, Yellow, 100, 450),
            (1000, 1000, Green, 600, 0),
            (1000, 2500, Red, 600, 0),
        ];
        let mut m = meter(ColorMode::Blind);
        for (i, (t, b, want, tp, tc)) in seq.into_iter().enumerate() {
            assert_eq!(m.color(b, at(t), Red), want, "packet {i}");
            assert_eq!(m.p.tokens_bytes_at(at(t)), tp as f64, "Tp after packet {i}");
            assert_eq!(m.c.tokens_bytes_at(at(t)), tc as f64, "Tc after packet {i}");
        }
    }

    #[test]
    fn colour_aware_hand_computed() {
        // t=0   pre red B=100 -> red (nothing taken)
        // t=0   pre yellow B=1000: Tp 2000 ok -> yellow, Tp=1000 (Tc stays 1000)
        // t=0   pre green B=1000: Tp 1000, Tc 1000 -> green, Tp=0 Tc=0
        // t=0   pre green B=1: Tp 0 -> red
        // t=600 Tp 1200, Tc 600; pre green B=700: Tc short -> yellow, Tp=500
        // t=600 pre green B=1200 (above CBS but within PBS): Tp 500 < 1200 -> red
        let seq = [
            (0, Red, 100, Red, 2000, 1000),
            (0, Yellow, 1000, Yellow, 1000, 1000),
            (0, Green, 1000, Green, 0, 0),
            (0, Green, 1, Red, 0, 0),
            (600, Green, 700, Yellow, 500, 600),
            (600, Green, 1200, Red, 500, 600),
        ];
        let mut m = meter(ColorMode::Aware);
        for (i, (t, pre, b, want, tp, tc)) in seq.into_iter().enumerate() {
            assert_eq!(m.color(b, at(t), pre), want, "packet {i}");
            assert_eq!(m.p.tokens_bytes_at(at(t)), tp as f64, "Tp after packet {i}");
            assert_eq!(m.c.tokens_bytes_at(at(t)), tc as f64, "Tc after packet {i}");
        }
    }

    #[test]
    fn packet_between_cbs_and_pbs_is_never_green() {
        // B = 1500: above CBS (1000), within PBS (2000): yellow whenever P holds it.
        let mut m = meter(ColorMode::Blind);
        for t in [0, 5_000, 10_000] {
            assert_eq!(m.color(1500, at(t), Green), Yellow);
        }
        assert_eq!(m.green_time(at(10_000), 1500), None);
    }

    #[test]
    fn green_time_is_t2_of_the_green_shaper() {
        // After a green 800 B packet at t=0: Tp=1200, Tc=200. For B=1000: C needs 800 B at
        // 1 B/ms = 800 ms, P is enough: T2 = 800 ms. For B=1000 after a second packet
        // (yellow, Tp=400): P needs 600 B at 2 B/ms = 300 ms, C 800 ms: T2 = 800 ms.
        let mut m = meter(ColorMode::Blind);
        m.color(800, SimTime::ZERO, Green);
        assert_eq!(m.green_time(SimTime::ZERO, 1000), Some(at(800)));
        m.color(800, SimTime::ZERO, Green);
        assert_eq!(m.green_time(SimTime::ZERO, 1000), Some(at(800)));
        // By t=1000 both buckets hold 1000 B: T2 = t.
        assert_eq!(m.green_time(at(1000), 1000), Some(at(1000)));
        // P decides when C is full and P empty: a precoloured-yellow 2000 B packet empties
        // P only; B=1000 then waits 1000 B / 2 B/ms = 500 ms for P.
        let mut m = meter(ColorMode::Aware);
        assert_eq!(m.color(2000, SimTime::ZERO, Yellow), Yellow);
        assert_eq!(m.green_time(SimTime::ZERO, 1000), Some(at(500)));
    }
}
