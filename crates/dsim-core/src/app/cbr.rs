//! Constant bit rate source.
//!
//! Packets of `size` bytes, one every `size * 8 / rate`. With `spacing_variation = v` each
//! gap is drawn uniformly in [(1 - v) T, (1 + v) T], so the mean rate stays the nominal one:
//! RFC 2598 appendix A.3, "Packets are produced with a variation of +-10% from the
//! interpacket spacing at the subscribed packet rate".

use rand::RngExt;

use super::Emission;
use crate::engine::rng::Rng;
use crate::time::{Duration, Rate};

#[derive(Debug, Clone)]
pub struct Cbr {
    pub size: u32,
    /// Nominal spacing T.
    pub interval: Duration,
    /// v in [0, 1).
    pub variation: f64,
}

impl Cbr {
    pub fn new(rate: Rate, size: u32, variation: f64) -> Self {
        Cbr {
            size,
            interval: rate.tx_time(size as u64),
            variation,
        }
    }

    #[inline]
    pub fn next_emission(&mut self, rng: &mut Rng) -> Emission {
        let gap = if self.variation == 0.0 {
            self.interval
        } else {
            let factor = 1.0 + self.variation * (2.0 * rng.random::<f64>() - 1.0);
            Duration((self.interval.0 as f64 * factor).round() as u64)
        };
        Emission { size: self.size, gap }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    #[test]
    fn spacing_stays_within_the_band_and_keeps_the_mean() {
        // 1500 B at 56 kbit/s: T = 214.2857 ms.
        let mut cbr = Cbr::new(Rate(56_000), 1500, 0.1);
        let t = cbr.interval.0 as f64;
        let mut rng = stream(1, "test");
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let g = cbr.next_emission(&mut rng).gap.0 as f64;
            assert!(g >= 0.9 * t - 1.0 && g <= 1.1 * t + 1.0);
            sum += g;
        }
        assert!((sum / n as f64 - t).abs() / t < 0.002);
    }
}
