//! Token-bucket shaper with a finite buffer.
//!
//! Source: RFC 2475 section 2.3.3.3 ("Shapers delay some or all of the packets in a
//! traffic stream in order to bring the stream into compliance with a traffic profile. A
//! shaper usually has a finite-size buffer, and packets may be discarded if there is not
//! sufficient buffer space to hold the delayed packets"), and the VLL service of RFC 2598
//! appendix A.3.2 (seed 003): EF traffic shaped at the edge to the subscribed rate,
//! "Losses only occur when the input shaping buffer overflows but not in the network".
//!
//! Parameters: rate r (bit/s), bucket depth b (bytes: the largest burst the output may
//! carry at line rate; one MTU gives a smooth output), buffer limit (packets or bytes).
//!
//! Model: packets wait in FIFO order; the head leaves as soon as the bucket (full at time
//! 0, exact token units, [`super::token_bucket`]) holds its size, and takes those tokens.
//! An arriving packet that finds the buffer empty and enough tokens passes at once. The
//! output therefore conforms to (r, b): over any interval of length T it carries at most
//! b + r·T bytes. An arriving packet that does not fit in the buffer is dropped
//! (`shaper_overflow`); so is a packet larger than b, which could never leave (as Linux
//! TBF does).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::Cont;
use crate::bucket::Bucket;
use crate::packet::{Color, PktId};
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Bytes, Limit, Rate, SimTime};

/// `shaper = { type = "token_bucket", ... }`: a token-bucket shaper with a finite buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TbShaperSpec {
    /// Token rate: the rate packets leave at, sustained.
    #[param(range = "(0, inf)")]
    pub rate: Rate,
    /// Bucket depth: the largest burst sent at once; at least one packet.
    #[param(range = "(0, inf)")]
    pub depth: Bytes,
    /// The buffer of packets waiting for tokens: packets ("100p") or bytes ("64KB").
    #[param(range = "(0, inf)")]
    pub limit: Limit,
}

impl TbShaperSpec {
    /// The shaper this table declares.
    pub fn shaper(&self, path: &KeyPath) -> Result<TbShaper, ConfigError> {
        self.check(path)?;
        Ok(TbShaper::new(self.rate, self.depth, self.limit))
    }
}

/// A packet waiting in a shaper, with where its path continues.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub id: PktId,
    pub size: u32,
    pub since: SimTime,
    pub cont: Cont,
    /// Its colour on arrival (green when no meter coloured it yet): a colour-aware meter
    /// downstream never turns a yellow or red packet green (the green RAS reads this).
    pub pre: Color,
}

/// What became of an offered packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Offer {
    /// It leaves at once (buffer empty, tokens available); tokens are taken.
    PassNow,
    /// It waits in the buffer.
    Queued,
    /// No room (or larger than the bucket): the caller drops it.
    Overflow,
}

#[derive(Clone, Debug)]
pub struct TbShaper {
    pub bucket: Bucket,
    buf: VecDeque<Held>,
    bytes: u64,
    limit: Limit,
}

impl TbShaper {
    pub fn new(rate: Rate, depth: Bytes, limit: Limit) -> Self {
        TbShaper {
            bucket: Bucket::full(rate, depth),
            buf: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    fn fits(&self, size: u32) -> bool {
        match self.limit {
            Limit::Packets(n) => (self.buf.len() as u64) < n,
            Limit::Bytes(b) => self.bytes + size as u64 <= b,
        }
    }

    pub fn offer(&mut self, h: Held, now: SimTime) -> Offer {
        if size_exceeds_depth(&self.bucket, h.size) {
            return Offer::Overflow;
        }
        if self.buf.is_empty() {
            self.bucket.fill(now);
            if self.bucket.has(h.size) {
                self.bucket.take(h.size);
                return Offer::PassNow;
            }
        }
        if !self.fits(h.size) {
            return Offer::Overflow;
        }
        self.bytes += h.size as u64;
        self.buf.push_back(h);
        Offer::Queued
    }

    /// When the head may leave (None when the buffer is empty).
    pub fn next_release(&self, now: SimTime) -> Option<SimTime> {
        let h = self.buf.front()?;
        let wait = self
            .bucket
            .time_to(h.size, now)
            .expect("sizes above the depth are refused");
        Some(now + wait)
    }

    /// Removes the head if it may leave at `now`, taking its tokens.
    pub fn release(&mut self, now: SimTime) -> Option<Held> {
        let h = *self.buf.front()?;
        self.bucket.fill(now);
        if !self.bucket.has(h.size) {
            return None;
        }
        self.bucket.take(h.size);
        self.buf.pop_front();
        self.bytes -= h.size as u64;
        Some(h)
    }

    pub fn backlog_packets(&self) -> usize {
        self.buf.len()
    }
    pub fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
}

fn size_exceeds_depth(b: &Bucket, size: u32) -> bool {
    size as u64 > b.depth_bytes()
}

/// A green packet `i` of `size` bytes offered at `now` (shaper tests).
#[cfg(test)]
pub(crate) fn test_held(i: u32, size: u32, now: SimTime) -> Held {
    Held {
        id: PktId(i),
        size,
        since: now,
        cont: Cont {
            chain: super::ChainRef::Egress(0),
            index: 0,
        },
        pre: Color::Green,
    }
}

/// A shaper as the shaper tests drive it: offers, wake-ups and releases, and what happens
/// to a packet as it leaves (a downstream meter colours it).
#[cfg(test)]
pub(crate) trait DrivenShaper {
    fn next_release(&mut self, now: SimTime) -> Option<SimTime>;
    fn offer(&mut self, h: Held, now: SimTime) -> Offer;
    fn release(&mut self, now: SimTime) -> Option<Held>;
    fn on_leave(&mut self, _size: u32, _now: SimTime) {}
}

/// Drives a shaper the way the simulation does: offers at the given (time ns, size)
/// instants, releases at each computed wake-up (arrivals first on ties, as they were
/// scheduled earlier). Returns (packet, departure ns, size) and the dropped packets.
#[cfg(test)]
pub(crate) fn test_drive(sh: &mut impl DrivenShaper, arrivals: &[(u64, u32)]) -> (Vec<(u32, u64, u32)>, Vec<u32>) {
    let (mut out, mut dropped) = (Vec::new(), Vec::new());
    let (mut k, mut now) = (0, 0u64);
    loop {
        let wake = sh.next_release(SimTime(now)).map(|t| t.0);
        let arr = arrivals.get(k).map(|a| a.0);
        let t = match (arr, wake) {
            (Some(a), Some(w)) => a.min(w),
            (Some(a), None) => a,
            (None, Some(w)) => w,
            (None, None) => break,
        };
        now = t;
        if arr == Some(t) {
            let size = arrivals[k].1;
            match sh.offer(test_held(k as u32, size, SimTime(t)), SimTime(t)) {
                Offer::PassNow => {
                    sh.on_leave(size, SimTime(t));
                    out.push((k as u32, t, size));
                }
                Offer::Queued => {}
                Offer::Overflow => dropped.push(k as u32),
            }
            k += 1;
        } else {
            while let Some(h) = sh.release(SimTime(t)) {
                sh.on_leave(h.size, SimTime(t));
                out.push((h.id.0, t, h.size));
            }
        }
    }
    (out, dropped)
}

#[cfg(test)]
impl DrivenShaper for TbShaper {
    fn next_release(&mut self, now: SimTime) -> Option<SimTime> {
        TbShaper::next_release(self, now)
    }
    fn offer(&mut self, h: Held, now: SimTime) -> Offer {
        TbShaper::offer(self, h, now)
    }
    fn release(&mut self, now: SimTime) -> Option<Held> {
        TbShaper::release(self, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn drive(sh: &mut TbShaper, arrivals: &[(u64, u32)]) -> (Vec<(u32, u64, u32)>, Vec<u32>) {
        test_drive(sh, arrivals)
    }

    #[test]
    fn hand_computed_departures() {
        // r = 8 kbit/s = 1 B/ms, b = 1000 B, buffer 2 packets. 1000 B packets at t = 0, 0,
        // 0, 0 ms: #0 passes at 0 (bucket full), #1 and #2 wait, #3 overflows.
        // #1 leaves when 1000 B have accrued: t = 1000 ms; #2 at 2000 ms.
        let mut sh = TbShaper::new(Rate(8000), Bytes(1000), Limit::Packets(2));
        let (out, dropped) = drive(&mut sh, &[(0, 1000), (0, 1000), (0, 1000), (0, 1000)]);
        let ms = 1_000_000;
        assert_eq!(out, vec![(0, 0, 1000), (1, 1000 * ms, 1000), (2, 2000 * ms, 1000)]);
        assert_eq!(dropped, vec![3]);
    }

    #[test]
    fn oversize_packet_is_refused() {
        let mut sh = TbShaper::new(Rate(8000), Bytes(1000), Limit::Packets(10));
        assert_eq!(
            sh.offer(test_held(0, 1001, SimTime::ZERO), SimTime::ZERO),
            Offer::Overflow
        );
    }

    #[test]
    fn output_never_exceeds_rate_plus_depth_over_any_window() {
        // Random bursty input (a seeded LCG) into r = 1 Mbit/s, b = 1500 B: for every pair
        // of departures i <= j, bytes departing in [t_i, t_j] <= b + r (t_j - t_i). With b
        // equal to one packet this is "never above the rate over any window longer than a
        // packet time".
        let rate = Rate(1_000_000);
        let depth = 1500u64;
        let mut sh = TbShaper::new(rate, Bytes(depth), Limit::Packets(50));
        let mut x: u64 = 12345;
        let mut t = 0u64;
        let mut arrivals = Vec::new();
        for _ in 0..3000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            t += (x >> 33) % 12_000_000; // gaps 0-12 ms, sizes 100-1500 B: about 1.07 Mbit/s
            let size = 100 + ((x >> 20) % 1401) as u32;
            arrivals.push((t, size));
        }
        let (out, dropped) = drive(&mut sh, &arrivals);
        assert!(!dropped.is_empty(), "the test should overload the shaper sometimes");
        assert_eq!(out.len() + dropped.len(), arrivals.len());
        let mut prefix = vec![0u64];
        for &(_, _, s) in &out {
            prefix.push(prefix.last().unwrap() + s as u64);
        }
        for i in 0..out.len() {
            for j in i..out.len().min(i + 400) {
                let bytes = prefix[j + 1] - prefix[i];
                let span = Duration(out[j].1 - out[i].1);
                let allowed = depth as u128 * 8_000_000_000 + rate.0 as u128 * span.0 as u128;
                assert!(
                    bytes as u128 * 8_000_000_000 <= allowed,
                    "window {i}..{j}: {bytes} B in {span:?}"
                );
            }
        }
        // FIFO: departures in arrival order.
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    }
}
