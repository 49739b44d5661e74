//! A web-like request-response source over one persistent TCP connection: the on/off
//! background traffic of RFC 2598's experiments ("A mixture of FTPs and HTTPs is then used
//! to fill the link", appendix A.3).
//!
//! The client sits at the flow's destination, the server at its source. Cycle: the client
//! sends a request (one segment of `request` payload bytes) -> on its arrival the server
//! draws a response size from `response` and writes it into the connection -> when the
//! last response byte reaches the client, the client thinks for a time drawn from `think`
//! -> next request. The first request leaves when the flow starts. A lost request is sent
//! again after a timeout (initially the connection's initial RTO, doubling on each retry;
//! the client keeps no RTT estimate of its own). How long a response is reaches the client
//! out of band (as HTTP's Content-Length would).
//!
//! Distributions (x >= 0, U uniform on (0, 1], Z standard normal):
//! - constant: x = value;
//! - exponential with mean m: x = -m ln U;
//! - Pareto with mean m and shape a > 1: scale k = m (a - 1) / a, x = k U^(-1/a);
//! - lognormal with mean m and sigma s: mu = ln m - s^2 / 2, x = exp(mu + s Z) (Z by
//!   Box-Muller);
//!
//! each optionally capped at `max` (a bounded heavy tail). Sizes round to whole bytes, at
//! least 1.

use rand::RngExt;

use crate::engine::rng::Rng;

/// A distribution of non-negative reals (bytes or nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    Constant(f64),
    Exponential { mean: f64 },
    Pareto { scale: f64, shape: f64 },
    Lognormal { mu: f64, sigma: f64 },
}

impl Dist {
    pub fn pareto(mean: f64, shape: f64) -> Dist {
        Dist::Pareto {
            scale: mean * (shape - 1.0) / shape,
            shape,
        }
    }

    pub fn lognormal(mean: f64, sigma: f64) -> Dist {
        Dist::Lognormal {
            mu: mean.ln() - sigma * sigma / 2.0,
            sigma,
        }
    }

    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Constant(v) => v,
            Dist::Exponential { mean } => mean,
            Dist::Pareto { scale, shape } => scale * shape / (shape - 1.0),
            Dist::Lognormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
        }
    }

    pub fn sample(&self, rng: &mut Rng) -> f64 {
        // U uniform on (0, 1].
        let mut u = || 1.0 - rng.random::<f64>();
        match *self {
            Dist::Constant(v) => v,
            Dist::Exponential { mean } => -mean * u().ln(),
            Dist::Pareto { scale, shape } => scale * u().powf(-1.0 / shape),
            Dist::Lognormal { mu, sigma } => {
                let (u1, u2) = (u(), u());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                (mu + sigma * z).exp()
            }
        }
    }
}

/// A distribution with an optional cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capped {
    pub dist: Dist,
    pub max: Option<f64>,
}

impl Capped {
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        let x = self.dist.sample(rng);
        self.max.map_or(x, |m| x.min(m))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Web {
    /// Request payload bytes.
    pub request: u32,
    /// Response size in bytes.
    pub response: Capped,
    /// Think time in nanoseconds.
    pub think: Capped,
}

impl Web {
    pub fn response_size(&self, rng: &mut Rng) -> u64 {
        (self.response.sample(rng).round() as u64).max(1)
    }

    pub fn think_time(&self, rng: &mut Rng) -> crate::time::Duration {
        crate::time::Duration(self.think.sample(rng).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    fn mean_of(d: Dist, n: usize) -> f64 {
        let mut rng = stream(5, "test");
        (0..n).map(|_| d.sample(&mut rng)).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match_the_parameters() {
        assert!((mean_of(Dist::Exponential { mean: 2.0 }, 200_000) - 2.0).abs() < 0.02);
        assert!((mean_of(Dist::lognormal(10.0, 0.5), 200_000) - 10.0).abs() < 0.05);
        // Shape 2.5: finite variance, so the sample mean converges reasonably.
        let p = Dist::pareto(12_000.0, 2.5);
        assert!((p.mean() - 12_000.0).abs() < 1e-6);
        assert!((mean_of(p, 400_000) - 12_000.0).abs() / 12_000.0 < 0.02);
    }

    #[test]
    fn pareto_has_the_scale_as_minimum_and_the_right_tail() {
        // Mean 12000, shape 1.2: scale 2000; P(X > x) = (2000 / x)^1.2.
        let p = Dist::pareto(12_000.0, 1.2);
        let mut rng = stream(6, "test");
        let xs: Vec<f64> = (0..200_000).map(|_| p.sample(&mut rng)).collect();
        assert!(xs.iter().all(|&x| x >= 2000.0 - 1e-9));
        let tail = xs.iter().filter(|&&x| x > 20_000.0).count() as f64 / xs.len() as f64;
        let want = (0.1f64).powf(1.2);
        assert!((tail - want).abs() < 0.003, "{tail} vs {want}");
        let capped = Capped {
            dist: p,
            max: Some(1e6),
        };
        assert!((0..10_000).all(|_| capped.sample(&mut rng) <= 1e6));
    }
}
