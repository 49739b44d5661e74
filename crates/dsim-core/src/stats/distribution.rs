//! A bounded-memory distribution of nanosecond samples.
//!
//! Count, sum, minimum and maximum are exact; quantiles come from an HDR histogram with two
//! significant digits (relative error below 1 %), clamped to the exact [min, max], so a
//! constant series reports its value exactly. Memory grows with the range of values, not
//! with the number of samples.
//!
//! The histogram is the `hdrhistogram` crate's auto-resizing `Histogram::new(2)` (lowest
//! discernible value 1), specialised: its bucket layout is fixed by those parameters, so
//! recording is a shift and an increment instead of the crate's generic path (a third of
//! the cost of a delivered packet), and the quantile walk is the crate's
//! `value_at_quantile`, step for step, over the same counts (a test compares the two).
//!
//! A sample's slot is counted [`PENDING`] samples at a time: at thousands of flows the
//! histograms no longer fit the caches, and a flow's successive delays fall in the same
//! few slots, so a batch costs about the misses a single sample did (issue 24: a fifth of
//! the event loop at 2,000 flows, each delivery's two slots fetched from memory). Count,
//! sum, minimum and maximum stay exact at every sample; what reads the slots first counts
//! the batch in progress ([`Distribution::settle`]).

use std::borrow::Cow;

/// Sub-buckets per bucket: the power of two covering 2 x 10^2 (two significant digits).
const SUB_BUCKET_COUNT_MAGNITUDE: u32 = 8;
/// Only the upper half of every bucket but the first is used.
const SUB_BUCKET_HALF_COUNT_MAGNITUDE: u32 = SUB_BUCKET_COUNT_MAGNITUDE - 1;
const SUB_BUCKET_HALF_COUNT: usize = 1 << SUB_BUCKET_HALF_COUNT_MAGNITUDE;
const SUB_BUCKET_MASK: u64 = (1 << SUB_BUCKET_COUNT_MAGNITUDE) - 1;

/// Samples whose slots are held back and counted together.
const PENDING: usize = 16;

/// Slots summed at a time when the quantile walk skips ahead.
const SKIP_RUN: usize = 64;

/// The bucket of `v`: how many powers of two it lies above what bucket 0 holds ([0, 256)).
#[inline]
fn bucket_of(v: u64) -> u32 {
    (64 - SUB_BUCKET_COUNT_MAGNITUDE) - (v | SUB_BUCKET_MASK).leading_zeros()
}

/// The count slot of `v` (hdrhistogram's `index_for`).
#[inline]
fn index_of(v: u64) -> usize {
    let b = bucket_of(v);
    ((b as usize) << SUB_BUCKET_HALF_COUNT_MAGNITUDE) + (v >> b) as usize
}

/// Slots held once slot `i` is: whole buckets.
fn slots_through(i: usize) -> usize {
    (i | (SUB_BUCKET_HALF_COUNT - 1)) + 1
}

/// The lowest value of slot `i` (hdrhistogram's `value_for`).
fn value_of(i: usize) -> u64 {
    let b = (i >> SUB_BUCKET_HALF_COUNT_MAGNITUDE) as isize - 1;
    let sub = (i & (SUB_BUCKET_HALF_COUNT - 1)) as u64;
    if b < 0 {
        sub
    } else {
        (sub + SUB_BUCKET_HALF_COUNT as u64) << b
    }
}

/// The lowest value counted in the same slot as `v`.
fn lowest_equivalent(v: u64) -> u64 {
    let b = bucket_of(v);
    (v >> b) << b
}

/// The highest value counted in the same slot as `v` (capped at `u64::MAX`).
fn highest_equivalent(v: u64) -> u64 {
    if v == u64::MAX {
        u64::MAX
    } else {
        lowest_equivalent(v).saturating_add(1 << bucket_of(v)) - 1
    }
}

#[derive(Clone, Debug)]
pub struct Distribution {
    /// Samples per histogram slot, from slot `first` on; grown, a bucket (128 slots) at a
    /// time, to the smallest and the largest slot recorded. A delay distribution holds
    /// the few buckets its delays span (a 50 ms one-way delay leaves the 2,300 slots below
    /// it empty: 18 KB a flow when they were kept).
    counts: Vec<u64>,
    /// A slot index: below 2^13 (56 buckets of 128 slots, and bucket 0's 256).
    first: u16,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
    /// The slots of the latest samples, not yet in `counts`.
    pending: [u16; PENDING],
    pending_len: u8,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution {
            counts: Vec::new(),
            first: 0,
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
            pending: [0; PENDING],
            pending_len: 0,
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
        self.pending[self.pending_len as usize] = index_of(v) as u16;
        self.pending_len += 1;
        if self.pending_len as usize == PENDING {
            self.settle();
        }
    }

    /// Counts the held-back samples in their slots. Reading the slots does it on a copy
    /// when needed; the simulation settles its distributions as a run finishes.
    pub fn settle(&mut self) {
        for k in 0..std::mem::take(&mut self.pending_len) as usize {
            let i = self.pending[k] as usize;
            // Below `first` wraps to a huge offset: one comparison for both ends.
            match self.counts.get_mut(i.wrapping_sub(self.first as usize)) {
                Some(n) => *n += 1,
                None => self.grow_to_count(i),
            }
        }
    }

    /// This distribution with every sample in its slot: itself, or a settled copy.
    fn settled(&self) -> Cow<'_, Distribution> {
        if self.pending_len == 0 {
            Cow::Borrowed(self)
        } else {
            let mut d = self.clone();
            d.settle();
            Cow::Owned(d)
        }
    }

    /// Grows the histogram to slot `i` and counts one sample there. Out of line: it
    /// happens a few dozen times a run.
    #[cold]
    #[inline(never)]
    fn grow_to_count(&mut self, i: usize) {
        // Whole buckets at a time, as the histogram grows.
        let end = slots_through(i);
        if self.counts.is_empty() {
            self.first = (i & !(SUB_BUCKET_HALF_COUNT - 1)) as u16;
        } else if i < self.first as usize {
            let first = i & !(SUB_BUCKET_HALF_COUNT - 1);
            self.counts
                .splice(0..0, std::iter::repeat_n(0, self.first as usize - first));
            self.first = first as u16;
        }
        let first = self.first as usize;
        self.counts.resize(end.max(first + self.counts.len()) - first, 0);
        self.counts[i - first] += 1;
    }

    /// The bytes of counts a distribution holds once it has recorded a sample of `max`
    /// (memory grows with the range of values: [`crate::sim::estimate`]).
    pub fn bytes_up_to(max: u64) -> usize {
        slots_through(index_of(max)) * std::mem::size_of::<u64>()
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Sum of the samples, in nanoseconds.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// The histogram: (lowest, highest, count) of every slot with samples, in increasing
    /// order; the bounds are the values the slot stands for, clamped to the exact minimum
    /// and maximum. A slot's bounds are the same in every distribution, so histograms add
    /// slot by slot.
    pub fn slots(&self) -> Vec<(u64, u64, u64)> {
        let d = self.settled();
        let slot = |(i, &n): (usize, &u64)| {
            let low = value_of(d.first as usize + i);
            (low.max(d.min), highest_equivalent(low).min(d.max), n)
        };
        d.counts.iter().enumerate().filter(|(_, n)| **n > 0).map(slot).collect()
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
        (self.count > 0).then(|| self.settled().value_at_quantile(q).clamp(self.min, self.max))
    }

    /// hdrhistogram's `value_at_quantile`: the highest value equivalent to the slot where
    /// the cumulative count first reaches ceil(q n) (at least 1); the lowest for q = 0.
    /// Of a settled distribution.
    fn value_at_quantile(&self, q: f64) -> u64 {
        let q = if q > 1.0 { 1.0 } else { q };
        let target = ((q * self.count as f64).ceil() as u64).max(1);
        // Whole runs of slots that leave the cumulative count below the target are
        // skipped with one (vectorised) sum each; the walk starts in the run that
        // reaches it. The histogram holds thousands of slots.
        let (mut total, mut start) = (0u64, 0);
        for run in self.counts.chunks(SKIP_RUN) {
            let in_run: u64 = run.iter().sum();
            if total + in_run >= target {
                break;
            }
            total += in_run;
            start += run.len();
        }
        for (i, &c) in self.counts.iter().enumerate().skip(start) {
            total += c;
            if total >= target {
                let v = value_of(self.first as usize + i);
                return if q == 0.0 {
                    lowest_equivalent(v)
                } else {
                    highest_equivalent(v)
                };
            }
        }
        0
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
    fn slots_by_hand() {
        // 5 twice (bucket 0 counts every value below 256 apart); 300 and 301 share a slot
        // of bucket 1 ([300, 301]); 1000 lies in bucket 2's slot [1000, 1003]. Bounds are
        // clamped to the exact minimum and maximum.
        let mut d = Distribution::default();
        for v in [5, 300, 5, 301, 1000] {
            d.record(v);
        }
        assert_eq!(d.slots(), vec![(5, 5, 2), (300, 301, 2), (1000, 1000, 1)]);
        assert_eq!(d.sum(), 1611);
        assert_eq!(Distribution::default().slots().len(), 0);
    }

    proptest::proptest! {
        #[test]
        fn slots_hold_every_sample_within_their_bounds(
            values in proptest::collection::vec(proptest::prop_oneof![0u64..600, 0u64..1_000_000_000, proptest::strategy::Just(4242u64)], 1..300)
        ) {
            let mut d = Distribution::default();
            for &v in &values {
                d.record(v);
            }
            let slots = d.slots();
            proptest::prop_assert_eq!(slots.iter().map(|s| s.2).sum::<u64>(), values.len() as u64);
            for w in slots.windows(2) {
                proptest::prop_assert!(w[0].1 < w[1].0, "slots overlap: {:?}", w);
            }
            for (low, high, n) in &slots {
                let inside = values.iter().filter(|&&v| *low <= v && v <= *high).count() as u64;
                proptest::prop_assert_eq!(inside, *n);
            }
        }
    }

    #[test]
    fn empty_has_no_values() {
        let d = Distribution::default();
        assert!(d.mean().is_nan());
        assert_eq!(d.quantile(0.5), None);
        assert_eq!(d.max(), None);
    }

    #[test]
    fn quantiles_equal_hdrhistogram() {
        // The specialised histogram against the crate it reproduces, on values spread over
        // many buckets (small, around bucket edges, delays of ms to s, the extremes).
        let mut values: Vec<u64> = vec![0, 1, 127, 128, 255, 256, 257, 511, 512, 513, u64::MAX - 1, u64::MAX];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for k in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(match k % 4 {
                0 => x % 1000,
                1 => x % 300_000_000,
                2 => x >> (x % 64),
                _ => 1 << (x % 64),
            });
        }
        let qs = [0.0, 1e-9, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0, 1.5];
        // Also from the end: the histogram then starts high and grows down as well as up.
        let backwards: Vec<u64> = values.iter().rev().copied().collect();
        for values in [&values, &backwards] {
            for n in [1, 2, 3, 10, 100, 1000, values.len()] {
                let mut d = Distribution::default();
                let mut h = hdrhistogram::Histogram::<u64>::new(2).unwrap();
                for &v in &values[..n] {
                    d.record(v);
                    h.record(v).unwrap();
                }
                d.settle();
                for q in qs {
                    assert_eq!(d.value_at_quantile(q), h.value_at_quantile(q), "n {n} q {q}");
                }
            }
        }
    }
}
