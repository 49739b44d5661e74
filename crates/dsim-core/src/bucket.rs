//! The token bucket: exact token arithmetic for every meter, shaper, policer and rate
//! limiter of dsim (RFC 2697 and 2698 section 3, RFC 2598 sections 2.1 and 2.2, the
//! profiler of draft-ibanez-diffserv-assured-eval-00 section 2.1.3).
//!
//! A bucket of rate r (bit/s) and depth b (bytes) holds tokens(t) = min(b, tokens(t0) +
//! r (t - t0) / 8) bytes; a packet of L bytes conforms when tokens >= L and then takes
//! them, so the conforming packets of any interval [s, t] total at most b + r (t - s) / 8
//! bytes.
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

    /// Does a packet of `bytes` conform at `now`? If it does, it takes its tokens (a rate
    /// limiter's or a policer's test: RFC 2598 section 2.1, "traffic that exceeds this
    /// limit MUST be discarded").
    #[inline]
    pub fn conform(&mut self, bytes: u32, now: SimTime) -> bool {
        self.fill(now);
        let ok = self.has(bytes);
        if ok {
            self.take(bytes);
        }
        ok
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    #[test]
    fn conforms_exactly_at_rate_and_burst() {
        // r = 8 kbit/s = 1 byte per ms, b = 300 B, full at 0.
        // t=0: 200 B conforms (300 -> 100); t=0: 200 B does not (100 < 200);
        // t=99 ms: 199 tokens, 200 B does not; t=100 ms: 200 tokens, 200 B conforms (-> 0);
        // t=1000 ms: 900 earned but capped at 300: 300 B conforms, 1 B does not.
        let mut tb = Bucket::full(Rate(8_000), Bytes(300));
        assert!(tb.conform(200, ms(0)));
        assert!(!tb.conform(200, ms(0)));
        assert!(!tb.conform(200, ms(99)));
        assert!(tb.conform(200, ms(100)));
        assert_eq!(tb.tokens_at(ms(100)), 0, "every token taken");
        assert!(tb.conform(300, ms(1000)));
        assert!(!tb.conform(1, ms(1000)));
    }

    #[test]
    fn fractional_tokens_are_not_lost() {
        // 1 bit/s earns 1/8 byte per second: 8 updates one second apart make one byte.
        let mut tb = Bucket::full(Rate(1), Bytes(1));
        assert!(tb.conform(1, SimTime(0)));
        for s in 1..8 {
            assert!(!tb.conform(1, SimTime(s * NS_PER_SEC)), "{s}");
        }
        assert!(tb.conform(1, SimTime(8 * NS_PER_SEC)));
    }

    #[test]
    fn never_exceeds_rate_times_time_plus_depth() {
        // Greedy 100 B packets every 1 ms against r = 100 kbit/s (12.5 B/ms), b = 1000 B:
        // over [0, t] the conforming bytes are at most 1000 + 12.5 t.
        let mut tb = Bucket::full(Rate(100_000), Bytes(1000));
        let mut sent = 0u64;
        for t in 0..10_000u64 {
            if tb.conform(100, ms(t)) {
                sent += 100;
            }
            assert!(sent as f64 <= 1000.0 + 12.5 * t as f64, "t={t} sent={sent}");
        }
        // and the long-run rate is the bucket's: 12.5 B/ms x 9999 ms + 1000 B, within a packet.
        assert!(sent as f64 >= 1000.0 + 12.5 * 9999.0 - 100.0, "{sent}");
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
