//! Poisson source: fixed-size packets with exponentially distributed gaps of mean
//! `size * 8 / rate`. Into a single server it makes the M/D/1 queue, whose mean waiting time
//! is known exactly (Pollaczek-Khinchine), which is why dsim ships it.

use rand::RngExt;

use super::Emission;
use crate::engine::rng::Rng;
use crate::time::{Duration, Rate};

#[derive(Debug, Clone)]
pub struct Poisson {
    pub size: u32,
    /// Mean gap.
    pub interval: Duration,
}

impl Poisson {
    pub fn new(rate: Rate, size: u32) -> Self {
        Poisson {
            size,
            interval: rate.tx_time(size as u64),
        }
    }

    #[inline]
    pub fn next_emission(&mut self, rng: &mut Rng) -> Emission {
        // Inverse transform: -ln(U) with U in (0, 1].
        let u = 1.0 - rng.random::<f64>();
        let gap = Duration((-u.ln() * self.interval.0 as f64).round() as u64);
        Emission { size: self.size, gap }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    #[test]
    fn gaps_are_exponential_with_the_nominal_mean() {
        let mut p = Poisson::new(Rate(1_000_000), 1000);
        let mean = p.interval.0 as f64;
        let mut rng = stream(3, "test");
        let n = 200_000;
        let gaps: Vec<f64> = (0..n).map(|_| p.next_emission(&mut rng).gap.0 as f64).collect();
        let m = gaps.iter().sum::<f64>() / n as f64;
        assert!((m - mean).abs() / mean < 0.01, "mean {m} vs {mean}");
        // P(gap > mean) = e^-1 for an exponential distribution.
        let above = gaps.iter().filter(|g| **g > mean).count() as f64 / n as f64;
        assert!((above - (-1f64).exp()).abs() < 0.005, "{above}");
    }
}
