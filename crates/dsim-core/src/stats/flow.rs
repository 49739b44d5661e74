//! Per-flow counters: what the source sent, what the destination received, what was lost
//! where, the one-way delay and the jitter of RFC 2598 appendix A.3.

use super::{Distribution, DropCause, DropCounts, Window};
use crate::packet::{Color, Packet};
use crate::time::SimTime;

/// In the order a packet uses them (`repr(C)` keeps it; the flow places these at a cache
/// line's start): a delivery writes the first four lines (up to `last_transit`; a
/// coloured packet the fifth too), a departure the fifth; drops, rarer, come last.
#[repr(C)]
#[derive(Clone, Debug)]
pub struct FlowStats {
    /// One-way delay, source hand-off to delivery, in ns.
    pub delay: Distribution,
    /// |(a_j - d_j) - (a_i - d_i)| over adjacent packets i, j = i + 1, in ns (RFC 2598 A.3).
    pub jitter: Distribution,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// Index ([`NO_PACKET`] before the first) and transit time (a_i - d_i) of the last
    /// delivered packet.
    last_index: u64,
    last_transit: u64,
    /// Per colour (indexed by `Color as usize`): packets that left the source host with
    /// that colour (after the host's conditioners), and packets delivered and dropped with
    /// that colour (the colour the last meter on their path gave them). Uncoloured packets
    /// are in none of these.
    pub color_delivered_pkts: [u64; 3],
    pub color_delivered_bytes: [u64; 3],
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub color_sent_pkts: [u64; 3],
    pub color_dropped_pkts: [u64; 3],
    pub drops: DropCounts,
}

impl FlowStats {
    /// The bytes from the start a delivery reads and writes (the first fields above).
    pub const DELIVERY_BYTES: usize = std::mem::offset_of!(FlowStats, sent_pkts);
}

/// `last_index` before any packet was delivered (packet indices count up from 0).
const NO_PACKET: u64 = u64::MAX;

impl Default for FlowStats {
    fn default() -> Self {
        FlowStats {
            delay: Distribution::default(),
            jitter: Distribution::default(),
            delivered_pkts: 0,
            delivered_bytes: 0,
            last_index: NO_PACKET,
            last_transit: 0,
            color_delivered_pkts: [0; 3],
            color_delivered_bytes: [0; 3],
            sent_pkts: 0,
            sent_bytes: 0,
            color_sent_pkts: [0; 3],
            color_dropped_pkts: [0; 3],
            drops: DropCounts::default(),
        }
    }
}

impl FlowStats {
    #[inline]
    pub fn on_sent(&mut self, w: &Window, now: SimTime, bytes: u32) {
        if w.contains(now) {
            self.sent_pkts += 1;
            self.sent_bytes += bytes as u64;
        }
    }

    /// A packet reached its destination at `now`.
    #[inline]
    pub fn on_delivered(&mut self, w: &Window, now: SimTime, p: &Packet) {
        let transit = (now - p.sent_at).0;
        let (i, t_i) = (self.last_index, self.last_transit);
        (self.last_index, self.last_transit) = (p.index, transit);
        if !w.contains(now) {
            return;
        }
        self.delivered_pkts += 1;
        self.delivered_bytes += p.size as u64;
        if let Some(c) = p.color {
            self.color_delivered_pkts[c as usize] += 1;
            self.color_delivered_bytes[c as usize] += p.size as u64;
        }
        // RFC 2598 A.3: "the absolute value of the difference between the arrival times of
        // two adjacent packets minus their departure times". A pair is counted only when
        // both packets arrived; a lost packet breaks adjacency.
        if i != NO_PACKET && i + 1 == p.index {
            self.jitter.record(transit.abs_diff(t_i));
        }
        // Last: only `transit` outlives the jitter's sample.
        self.delay.record(transit);
    }

    #[inline]
    pub fn on_dropped(&mut self, w: &Window, now: SimTime, cause: DropCause, bytes: u32) {
        if w.contains(now) {
            self.drops.add(cause, bytes as u64);
        }
    }

    /// The colour of a dropped packet (call with [`FlowStats::on_dropped`]).
    #[inline]
    pub fn on_dropped_color(&mut self, w: &Window, now: SimTime, color: Option<Color>) {
        if let (true, Some(c)) = (w.contains(now), color) {
            self.color_dropped_pkts[c as usize] += 1;
        }
    }

    /// A packet of this flow left its source host with colour `color`.
    #[inline]
    pub fn on_left_source(&mut self, w: &Window, now: SimTime, color: Option<Color>) {
        if let (true, Some(c)) = (w.contains(now), color) {
            self.color_sent_pkts[c as usize] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    #[test]
    fn a_delivery_writes_the_first_four_lines() {
        // The flow puts these counters at a line's start (sim.rs `Flow`).
        assert!(std::mem::offset_of!(FlowStats, last_transit) + 8 <= 4 * 64);
        assert_eq!(std::mem::offset_of!(crate::sim::Flow, stats) % 64, 0);
    }

    fn pkt(index: u64, sent_ms: u64) -> Packet {
        Packet {
            index,
            sent_at: SimTime(sent_ms * 1_000_000),
            size: 100,
            ..Default::default()
        }
    }

    #[test]
    fn jitter_of_a_hand_built_sequence() {
        // Departures d = 0, 10, 20, 30, 40 ms; transits 5, 7, 6, (lost), 9 ms.
        // Adjacent pairs: (0,1) |7-5| = 2, (1,2) |6-7| = 1; packet 3 lost, so (2,4) is no pair.
        let w = Window {
            start: SimTime(0),
            end: SimTime(u64::MAX),
        };
        let mut s = FlowStats::default();
        for (i, transit) in [(0, 5), (1, 7), (2, 6), (4, 9)] {
            let p = pkt(i, 10 * i);
            let now = p.sent_at + Duration::from_millis(transit);
            s.on_delivered(&w, now, &p);
        }
        assert_eq!(s.jitter.count(), 2);
        assert_eq!(s.jitter.max(), Some(2_000_000));
        assert_eq!(s.jitter.min(), Some(1_000_000));
        assert_eq!(s.delay.mean(), 6.75e6);
        assert_eq!(s.delivered_pkts, 4);
    }

    #[test]
    fn jitter_percentiles_of_a_hand_built_sequence() {
        // Departures every 20 ms; arrivals give transits 10, 12, 11, 15, 15, 10 ms.
        // Pairs: |12-10| = 2, |11-12| = 1, |15-11| = 4, |15-15| = 0, |10-15| = 5 ms.
        // Sorted 0, 1, 2, 4, 5: median 2 ms (3rd of 5), 90th percentile 5 ms (5th of 5),
        // within the histogram's 1 % precision; min and max exact.
        let w = Window {
            start: SimTime(0),
            end: SimTime(u64::MAX),
        };
        let mut s = FlowStats::default();
        for (i, transit) in [10, 12, 11, 15, 15, 10].into_iter().enumerate() {
            let p = pkt(i as u64, 20 * i as u64);
            s.on_delivered(&w, p.sent_at + Duration::from_millis(transit), &p);
        }
        assert_eq!(s.jitter.count(), 5);
        assert_eq!((s.jitter.min(), s.jitter.max()), (Some(0), Some(5_000_000)));
        let p50 = s.jitter.quantile(0.5).unwrap() as f64;
        let p90 = s.jitter.quantile(0.9).unwrap() as f64;
        assert!((p50 - 2e6).abs() <= 0.01 * 2e6, "{p50}");
        assert!((p90 - 5e6).abs() <= 0.01 * 5e6, "{p90}");
        assert!((s.jitter.mean() - 2.4e6).abs() < 1.0);
    }

    #[test]
    fn a_pair_counts_when_its_second_packet_arrives_in_the_window() {
        // Window starts at 100 ms; departures 0, 20, 40 ms. Packet 0 arrives at 95 ms
        // (outside: no delay sample), packets 1 and 2 at 125 and 150 ms (inside).
        // Transits 95, 105, 110 ms: pair (0, 1) -> 10 ms, counted because its second packet
        // arrives inside; pair (1, 2) -> 5 ms.
        let w = Window {
            start: SimTime(100_000_000),
            end: SimTime(u64::MAX),
        };
        let mut s = FlowStats::default();
        for (i, arrival_ms) in [(0u64, 95u64), (1, 125), (2, 150)] {
            let p = pkt(i, 20 * i);
            s.on_delivered(&w, SimTime(arrival_ms * 1_000_000), &p);
        }
        assert_eq!(s.delivered_pkts, 2);
        assert_eq!(s.jitter.count(), 2);
        assert_eq!((s.jitter.min(), s.jitter.max()), (Some(5_000_000), Some(10_000_000)));
    }

    #[test]
    fn counts_only_inside_the_window() {
        let w = Window {
            start: SimTime(1_000),
            end: SimTime(2_000),
        };
        let mut s = FlowStats::default();
        s.on_sent(&w, SimTime(999), 10);
        s.on_sent(&w, SimTime(1_000), 10);
        s.on_sent(&w, SimTime(2_000), 10);
        s.on_dropped(&w, SimTime(1_500), DropCause::Overflow, 10);
        assert_eq!((s.sent_pkts, s.sent_bytes), (1, 10));
        assert_eq!(s.drops.pkts[DropCause::Overflow as usize], 1);
    }
}
