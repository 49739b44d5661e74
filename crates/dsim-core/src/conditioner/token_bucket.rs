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
//!
//! The bucket itself, with its exact arithmetic, is [`crate::bucket::Bucket`].

use serde::{Deserialize, Serialize};

use crate::bucket::Bucket;
use crate::packet::Color;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Bytes, Rate, SimTime};

/// `meter = { type = "token_bucket", ... }`: two colours, green if the bucket holds the
/// packet, red otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TokenBucketSpec {
    /// Token rate (the profile's rate).
    pub rate: Rate,
    /// Bucket depth; a packet larger than the depth is never green.
    #[param(range = "(0, inf)")]
    pub depth: Bytes,
}

impl TokenBucketSpec {
    /// The meter this table declares.
    pub fn meter(&self, path: &KeyPath) -> Result<TokenBucket, ConfigError> {
        self.check(path)?;
        Ok(TokenBucket::new(self.rate, self.depth))
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
}
