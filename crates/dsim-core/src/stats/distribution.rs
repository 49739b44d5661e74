//! A bounded-memory distribution of nanosecond samples.
//!
//! Count, sum, minimum and maximum are exact; quantiles come from an HDR histogram with two
//! significant digits (relative error below 1 %), clamped to the exact [min, max], so a
//! constant series reports its value exactly. Memory grows with the range of values, not
//! with the number of samples.

use hdrhistogram::Histogram;

#[derive(Clone, Debug)]
pub struct Distribution {
    hist: Option<Histogram<u64>>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution {
            hist: None,
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

impl Distribution {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let h = self
            .hist
            .get_or_insert_with(|| Histogram::new(2).expect("2 significant digits is valid"));
        // `record` grows the histogram to fit; `saturating_record` would clamp instead.
        if h.record(v).is_err() {
            h.saturating_record(v);
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Mean in nanoseconds, NaN when empty.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// The value at quantile `q` in [0, 1], within the histogram's precision.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let h = self.hist.as_ref()?;
        Some(h.value_at_quantile(q).clamp(self.min, self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_series_is_exact() {
        let mut d = Distribution::default();
        for _ in 0..10 {
            d.record(12_345_678);
        }
        assert_eq!(d.quantile(0.5), Some(12_345_678));
        assert_eq!(d.quantile(0.99), Some(12_345_678));
        assert_eq!(d.mean(), 12_345_678.0);
    }

    #[test]
    fn quantiles_within_one_percent() {
        let mut d = Distribution::default();
        for v in 1..=10_000u64 {
            d.record(v * 1000);
        }
        for (q, want) in [(0.5, 5_000_000.0), (0.9, 9_000_000.0), (0.99, 9_900_000.0)] {
            let got = d.quantile(q).unwrap() as f64;
            assert!((got - want).abs() / want < 0.01, "q{q}: {got} vs {want}");
        }
        assert_eq!(d.min(), Some(1000));
        assert_eq!(d.max(), Some(10_000_000));
    }

    #[test]
    fn empty_has_no_values() {
        let d = Distribution::default();
        assert!(d.mean().is_nan());
        assert_eq!(d.quantile(0.5), None);
        assert_eq!(d.max(), None);
    }
}
