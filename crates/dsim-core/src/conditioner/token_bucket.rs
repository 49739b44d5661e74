//! Token bucket: the exact token arithmetic every dsim meter and shaper builds on, and the
//! two-colour token-bucket profiler.
//!
//! Sources: draft-ibanez-diffserv-assured-eval-00 (seed 002) section 2.1.3 and appendix
//! ("The class TB implements a token bucket which is used by the Profiler"): a profile of
//! rate r and depth b; a packet finding at least its size in tokens is IN (green) and takes
//! them, otherwise it is OUT (red) and takes none. RFC 2697 section 3 and RFC 2698 section
//! 3 use the same buckets (both start full).
//!
//! Parameters: rate r in bit/s; depth b in bytes.
//!
//! # Exact token arithmetic
//!
//! RFC 2697/2698 add one byte token `CIR` times per second. dsim keeps the tokens as an
//! integer count of *token units* of 1/(8·10^9) byte ([`UNITS_PER_BYTE`]). A rate of r
//! bit/s is r/8 bytes per second = r/(8·10^9) bytes per nanosecond = exactly r units per
//! nanosecond. Between two instants t0 < t1 (integer nanoseconds) a bucket therefore earns
//! exactly `r * (t1 - t0)` units, and a packet of B bytes needs exactly `B * 8·10^9` units:
//! no division, no rounding, in u128 (r·dt < 2^128 for any u64 rate and time). This is
//! the RFCs' rule with the time unit taken to the limit (a fluid bucket): the decision
//! "tokens >= B" is the one the RFC's byte-granular bucket takes whenever its update clock
//! is in phase with the fluid one; the RFCs leave that phase unspecified, and the fluid
//! bucket does not depend on one. The earliest time a bucket holds B bytes
//! ([`Bucket::time_to`]) is the exact integer `ceil(missing units / r)` nanoseconds.

use crate::packet::Color;
use crate::time::{Bytes, Duration, NS_PER_SEC, Rate, SimTime};

/// Token units per byte: a rate of r bit/s adds exactly r units per nanosecond.
pub const UNITS_PER_BYTE: u128 = 8 * NS_PER_SEC as u128;

/// Units of `bytes` bytes.
#[inline]
pub fn units(bytes: u64) -> u128 {
    bytes as u128 * UNITS_PER_BYTE
}

/// One token bucket: rate, depth, and the tokens it holds as of `last`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Fill rate in bit/s = units per nanosecond.
    rate: u64,
    /// Depth in units.
    depth: u128,
    /// Tokens in units, as of `last`.
    tokens: u128,
    last: SimTime,
}

impl Bucket {
    /// A bucket that starts full at time 0 (RFC 2697 section 3: "The token buckets C and E
    /// are initially (at time 0) full").
    pub fn full(rate: Rate, depth: Bytes) -> Self {
        Bucket {
            rate: rate.0,
            depth: units(depth.0),
            tokens: units(depth.0),
            last: SimTime::ZERO,
        }
    }

    /// A bucket that starts with `tokens` bytes.
    pub fn with_tokens(rate: Rate, depth: Bytes, tokens: Bytes) -> Self {
        let mut b = Bucket::full(rate, depth);
        b.tokens = units(tokens.0).min(b.depth);
        b
    }

    pub fn rate(&self) -> Rate {
        Rate(self.rate)
    }

    /// Depth in bytes.
    pub fn depth_bytes(&self) -> u64 {
        (self.depth / UNITS_PER_BYTE) as u64
    }

    /// Units earned from `last` to `now`, before the cap.
    #[inline]
    fn earned(&self, now: SimTime) -> u128 {
        debug_assert!(now >= self.last, "bucket time went backwards");
        self.rate as u128 * now.0.saturating_sub(self.last.0) as u128
    }

    /// Adds the tokens earned up to `now`, capped at the depth; returns the units that did
    /// not fit (srTCM passes them on to its excess bucket).
    #[inline]
    pub fn fill(&mut self, now: SimTime) -> u128 {
        let total = self.tokens.saturating_add(self.earned(now));
        self.last = self.last.max(now);
        if total > self.depth {
            self.tokens = self.depth;
            total - self.depth
        } else {
            self.tokens = total;
            0
        }
    }

    /// Adds `extra` units (capped at the depth) without advancing time.
    #[inline]
    pub fn add_units(&mut self, extra: u128) {
        self.tokens = self.tokens.saturating_add(extra).min(self.depth);
    }

    /// Does the bucket (as of its last fill) hold `bytes`?
    #[inline]
    pub fn has(&self, bytes: u32) -> bool {
        self.tokens >= units(bytes as u64)
    }

    /// Removes `bytes` worth of tokens; the caller checked [`Bucket::has`].
    #[inline]
    pub fn take(&mut self, bytes: u32) {
        debug_assert!(self.has(bytes));
        self.tokens -= units(bytes as u64);
    }

    /// Tokens in units as of the last fill.
    pub fn tokens_units(&self) -> u128 {
        self.tokens
    }

    /// Tokens in units the bucket would hold at `now` (read-only: nothing changes).
    pub fn tokens_at(&self, now: SimTime) -> u128 {
        self.tokens.saturating_add(self.earned(now)).min(self.depth)
    }

    /// Tokens in bytes (possibly fractional) the bucket would hold at `now`.
    pub fn tokens_bytes_at(&self, now: SimTime) -> f64 {
        self.tokens_at(now) as f64 / UNITS_PER_BYTE as f64
    }

    /// The time from `now` until the bucket holds `bytes`: zero if it does already, None if
    /// it never will (the packet is larger than the depth, or the rate is zero).
    pub fn time_to(&self, bytes: u32, now: SimTime) -> Option<Duration> {
        let need = units(bytes as u64);
        if need > self.depth {
            return None;
        }
        let have = self.tokens_at(now);
        if have >= need {
            return Some(Duration::ZERO);
        }
        if self.rate == 0 {
            return None;
        }
        let missing = need - have;
        let r = self.rate as u128;
        Some(Duration(missing.div_ceil(r) as u64))
    }
}

/// The two-colour token-bucket profiler of draft-ibanez section 2.1.3: green (IN) when the
/// bucket holds the packet's size, red (OUT) otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    pub bucket: Bucket,
}

impl TokenBucket {
    pub fn new(rate: Rate, depth: Bytes) -> Self {
        TokenBucket {
            bucket: Bucket::full(rate, depth),
        }
    }

    #[inline]
    pub fn color(&mut self, size: u32, now: SimTime) -> Color {
        self.bucket.fill(now);
        // Seed 002 appendix: "If the measured rate is below the target rate, it marks
        // packets IN, but when the target rate is exceeded they are left unmarked": a
        // packet in profile takes its tokens; an out-of-profile one takes none.
        if self.bucket.has(size) {
            self.bucket.take(size);
            Color::Green
        } else {
            Color::Red
        }
    }

    /// The earliest instant >= `now` at which a packet of `size` bytes would be green.
    pub fn green_time(&self, now: SimTime, size: u32) -> Option<SimTime> {
        self.bucket.time_to(size, now).map(|d| now + d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    #[test]
    fn two_colour_profile_by_hand() {
        // r = 1 Mbit/s = 125 B/ms, b = 1500 B, full at t = 0. 1000 B packets:
        // t=0:  1500 >= 1000 green -> 500
        // t=0:  500 < 1000 red (takes nothing) -> 500
        // t=2:  500 + 250 = 750 < 1000 red -> 750
        // t=4:  750 + 250 = 1000 >= 1000 green -> 0
        // t=20: 0 + 2000 capped at 1500 -> green -> 500
        // t=24: 500 + 500 = 1000 green -> 0
        let mut tb = TokenBucket::new(Rate(1_000_000), Bytes(1500));
        let seq = [
            (0, Color::Green),
            (0, Color::Red),
            (2, Color::Red),
            (4, Color::Green),
            (20, Color::Green),
            (24, Color::Green),
        ];
        for (t, want) in seq {
            assert_eq!(tb.color(1000, ms(t)), want, "t = {t} ms");
        }
        assert_eq!(tb.bucket.tokens_units(), 0);
    }

    #[test]
    fn packet_larger_than_the_bucket_is_never_green() {
        let mut tb = TokenBucket::new(Rate(10_000_000), Bytes(1000));
        for t in [0, 10, 1000, 100_000] {
            assert_eq!(tb.color(1001, ms(t)), Color::Red);
        }
        // ... and it took nothing: a 1000 B packet is still green.
        assert_eq!(tb.color(1000, ms(100_000)), Color::Green);
        assert_eq!(tb.green_time(ms(100_000), 1001), None);
    }

    #[test]
    fn fractional_tokens_are_kept_exactly() {
        // r = 1 bit/s: one byte takes 8 s to earn. After 1 ns the bucket holds 1 unit; after
        // 8 s minus 1 ns it still lacks exactly one unit, and at 8 s it has one byte.
        let mut b = Bucket::with_tokens(Rate(1), Bytes(10), Bytes(0));
        b.fill(SimTime(1));
        assert_eq!(b.tokens_units(), 1);
        b.fill(SimTime(8 * NS_PER_SEC - 1));
        assert!(!b.has(1));
        assert_eq!(b.tokens_units(), UNITS_PER_BYTE - 1);
        assert_eq!(b.time_to(1, SimTime(8 * NS_PER_SEC - 1)), Some(Duration(1)));
        b.fill(SimTime(8 * NS_PER_SEC));
        assert!(b.has(1));
    }

    #[test]
    fn time_to_is_the_first_instant_with_enough_tokens() {
        // 3 bit/s (3 units/ns), empty, 1 B needed = 8e9 units: ceil(8e9 / 3) = 2666666667 ns.
        let b = Bucket::with_tokens(Rate(3), Bytes(10), Bytes(0));
        let d = b.time_to(1, SimTime::ZERO).unwrap();
        assert_eq!(d, Duration(2_666_666_667));
        assert!(b.tokens_at(SimTime(d.0)) >= UNITS_PER_BYTE);
        assert!(b.tokens_at(SimTime(d.0 - 1)) < UNITS_PER_BYTE);
    }

    #[test]
    fn fill_reports_overflow() {
        let mut b = Bucket::with_tokens(Rate(8), Bytes(1), Bytes(0)); // 1 B/s
        // 3 s earn 3 B; 1 B fits, 2 B overflow.
        assert_eq!(b.fill(SimTime(3 * NS_PER_SEC)), 2 * UNITS_PER_BYTE);
        assert_eq!(b.tokens_units(), UNITS_PER_BYTE);
    }
}
