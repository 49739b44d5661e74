//! The token-bucket rate limiter of a scheduler class (RFC 2598 sections 2.1 and 2.2).
//!
//! RFC 2598 section 2.1: "If the EF PHB is implemented by a mechanism that allows unlimited
//! preemption of other traffic (e.g., a priority queue), the implementation MUST include
//! some means to limit the damage EF traffic could inflict on other traffic (e.g., a token
//! bucket rate limiter). Traffic that exceeds this limit MUST be discarded. This maximum EF
//! rate, and burst size if appropriate, MUST be settable by a network administrator".
//! Section 2.2: "a rate policer such as a token bucket associated with each priority queue
//! to bound how much the queue can starve other traffic".
//!
//! The bucket, rate r (bit/s) and depth b (bytes), is full at time 0 and evolves as
//!
//! ```text
//!   tokens(t) = min(b, tokens(t0) + r (t - t0) / 8)       bytes, t0 = last update
//!   a packet of L bytes at t conforms  <=>  tokens(t) >= L;  it then takes L tokens
//! ```
//!
//! so the conforming packets of any interval [s, t] total at most b + r (t - s) / 8 bytes.
//! Token arithmetic is exact: tokens are counted in units of 1 / (8 x 10^9) byte, in which
//! dt nanoseconds at r bit/s add exactly r * dt units (no rounding, no drift).
//!
//! Parameters: `rate` (bit/s, > 0), `depth` (bytes, > 0). A packet longer than the depth
//! never conforms; choose the depth at least one MTU.

use crate::time::{Bytes, NS_PER_SEC, Rate, SimTime};

/// Token units per byte: 8 bits x 10^9 ns/s.
const UNITS_PER_BYTE: u128 = 8 * NS_PER_SEC as u128;

/// Configured parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucketParams {
    pub rate: Rate,
    pub depth: Bytes,
}

/// Evolving state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TokenBucketState {
    /// Tokens in units of 1 / (8 x 10^9) byte.
    tokens: u128,
    /// Time of the last update.
    last: SimTime,
}

#[derive(Debug, Clone)]
pub struct TokenBucket {
    params: TokenBucketParams,
    depth_units: u128,
    state: TokenBucketState,
}

impl TokenBucket {
    /// A full bucket at time 0.
    pub fn new(params: TokenBucketParams) -> Self {
        debug_assert!(
            params.rate.0 > 0 && params.depth.0 > 0,
            "checked by the scenario builder"
        );
        let depth_units = params.depth.0 as u128 * UNITS_PER_BYTE;
        TokenBucket {
            params,
            depth_units,
            state: TokenBucketState {
                tokens: depth_units,
                last: SimTime::ZERO,
            },
        }
    }

    pub fn params(&self) -> TokenBucketParams {
        self.params
    }

    /// Adds the tokens earned since the last update, up to the depth.
    #[inline]
    fn refill(&mut self, now: SimTime) {
        let dt = now.0.saturating_sub(self.state.last.0) as u128;
        self.state.tokens = (self.state.tokens + self.params.rate.0 as u128 * dt).min(self.depth_units);
        self.state.last = self.state.last.max(now);
    }

    /// Does a packet of `size` bytes conform at `now`? If it does, it takes its tokens.
    #[inline]
    pub fn take(&mut self, size: u32, now: SimTime) -> bool {
        self.refill(now);
        let need = size as u128 * UNITS_PER_BYTE;
        if self.state.tokens >= need {
            self.state.tokens -= need;
            true
        } else {
            false
        }
    }

    /// Whole bytes of tokens at `now` (for tests and inspection).
    pub fn tokens_at(&mut self, now: SimTime) -> u64 {
        self.refill(now);
        (self.state.tokens / UNITS_PER_BYTE) as u64
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
        let mut tb = TokenBucket::new(TokenBucketParams {
            rate: Rate(8_000),
            depth: Bytes(300),
        });
        assert!(tb.take(200, ms(0)));
        assert!(!tb.take(200, ms(0)));
        assert!(!tb.take(200, ms(99)));
        assert!(tb.take(200, ms(100)));
        assert_eq!(tb.tokens_at(ms(100)), 0);
        assert!(tb.take(300, ms(1000)));
        assert!(!tb.take(1, ms(1000)));
    }

    #[test]
    fn fractional_tokens_are_not_lost() {
        // 1 bit/s earns 1/8 byte per second: 8 updates one second apart make one byte.
        let mut tb = TokenBucket::new(TokenBucketParams {
            rate: Rate(1),
            depth: Bytes(1),
        });
        assert!(tb.take(1, SimTime(0)));
        for s in 1..8 {
            assert!(!tb.take(1, SimTime(s * NS_PER_SEC)), "{s}");
        }
        assert!(tb.take(1, SimTime(8 * NS_PER_SEC)));
    }

    #[test]
    fn never_exceeds_rate_times_time_plus_depth() {
        // Greedy 100 B packets every 1 ms against r = 100 kbit/s (12.5 B/ms), b = 1000 B:
        // over [0, t] the conforming bytes are at most 1000 + 12.5 t.
        let mut tb = TokenBucket::new(TokenBucketParams {
            rate: Rate(100_000),
            depth: Bytes(1000),
        });
        let mut sent = 0u64;
        for t in 0..10_000u64 {
            if tb.take(100, ms(t)) {
                sent += 100;
            }
            assert!(sent as f64 <= 1000.0 + 12.5 * t as f64, "t={t} sent={sent}");
        }
        // and the long-run rate is the bucket's: 12.5 B/ms x 9999 ms + 1000 B, within a packet.
        assert!(sent as f64 >= 1000.0 + 12.5 * 9999.0 - 100.0, "{sent}");
    }
}
