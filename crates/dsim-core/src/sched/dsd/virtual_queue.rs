//! The virtual flat best-effort queue of DSD.
//!
//! Source: draft-hurley-alternative-best-effort-01, section 5: "A virtual queue, with buffer
//! space Buff, is fed with duplicates of all incoming packets which are served by a FCFS
//! discipline with rate c, as they would be in a flat best-effort." The times at which the
//! duplicates are served become the deadlines of the blue originals.
//!
//! A FCFS queue served at a constant rate needs no events: the duplicate admitted at `now`
//! starts service at `start = max(now, busy_until)` and the server is then busy until
//! `start + size / c`. Only the duplicates still *waiting* (not yet in service) occupy the
//! buffer, as in dsim's drop-tail FIFO ([`crate::aqm::DropTailQueue`]), whose limit does not
//! count the packet on the wire.
//!
//! Ties. When a duplicate's service would start at exactly the instant another packet
//! arrives, dsim counts the arrival first: the duplicate is still waiting and occupies the
//! buffer. This is the order under which Appendix A's first snapshot holds (B6, arriving at
//! t = 0 together with G2 and B5, finds 7 = Buff duplicates, B1 ... B5, G1, G2, waiting, B1's
//! service starting at t = 0), and the simulator's rule for every event of one instant
//! (docs/ties.md, "arrivals first"): the real link, in the network and in `replay`, also
//! starts its next packet only after every arrival of the instant. A duplicate arriving at
//! an idle server (none ending its service now) starts at once and never waits.

use std::collections::VecDeque;

use crate::time::{Limit, Rate, SimTime};

/// Parameters: Buff and c.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VirtualQueueParams {
    /// Buff: the waiting room of the flat best-effort queue, in packets or bytes.
    pub buffer: Limit,
    /// A byte Buff admits a duplicate whenever at most Buff bytes wait (dummynet's rule, as
    /// [`crate::aqm::DropTailQueue`] with overshoot); false: the duplicate must fit.
    pub overshoot: bool,
    /// c: the link rate, bit/s.
    pub rate: Rate,
}

/// The virtual queue's state: its waiting duplicates and when its server frees up.
#[derive(Debug, Clone)]
pub struct VirtualQueue {
    pub params: VirtualQueueParams,
    /// Waiting duplicates, oldest first: (service start, size in bytes).
    waiting: VecDeque<(SimTime, u32)>,
    waiting_bytes: u64,
    /// End of service of the last admitted duplicate; `None` before the first.
    busy_until: Option<SimTime>,
    /// Service start of the last admitted duplicate; `None` before the first.
    last_start: Option<SimTime>,
}

impl VirtualQueue {
    pub fn new(params: VirtualQueueParams) -> Self {
        VirtualQueue {
            params,
            waiting: VecDeque::with_capacity(64),
            waiting_bytes: 0,
            busy_until: None,
            last_start: None,
        }
    }

    /// Forgets the duplicates whose service started before `now`.
    #[inline]
    fn advance(&mut self, now: SimTime) {
        while let Some(&(start, size)) = self.waiting.front() {
            if start >= now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= size as u64;
        }
    }

    /// Duplicates waiting at `now` (the arrivals at `now` already offered included).
    pub fn len_packets(&mut self, now: SimTime) -> usize {
        self.advance(now);
        self.waiting.len()
    }

    pub fn len_bytes(&mut self, now: SimTime) -> u64 {
        self.advance(now);
        self.waiting_bytes
    }

    /// Waiting room in use at `now`, in the unit of Buff (packets or bytes).
    pub fn occupancy(&mut self, now: SimTime) -> u64 {
        self.advance(now);
        match self.params.buffer {
            Limit::Packets(_) => self.waiting.len() as u64,
            Limit::Bytes(_) => self.waiting_bytes,
        }
    }

    /// Service start times of the duplicates waiting at `now`, oldest first.
    pub fn waiting_starts(&mut self, now: SimTime) -> impl Iterator<Item = SimTime> + '_ {
        self.advance(now);
        self.waiting.iter().map(|w| w.0)
    }

    /// Is the waiting room empty at `now`, and since when? (RED's idle-time rule, in the
    /// terms of the `red` queue, whose FIFO does not hold the packet on the wire either: the
    /// queue "becomes empty" when its last waiting packet starts service.) The waiting room
    /// emptied when the last admitted duplicate started service (a duplicate admitted to an
    /// idle server starts, and empties it, at once); `None` while duplicates wait; time 0
    /// before the first arrival.
    pub fn empty_since(&mut self, now: SimTime) -> Option<SimTime> {
        self.advance(now);
        if self.waiting.is_empty() {
            Some(self.last_start.unwrap_or(SimTime::ZERO))
        } else {
            None
        }
    }

    /// Offers the duplicate of a `size`-byte packet arriving at `now`. Returns the time its
    /// service starts (the blue deadline, section 5 "maxServiceTime = now + vd"), or `None`
    /// if the waiting room is full ("If the virtual queue length has reached Buff, the
    /// duplicate and the original blue packet are dropped").
    #[inline]
    pub fn offer(&mut self, now: SimTime, size: u32) -> Option<SimTime> {
        self.advance(now);
        let fits = match self.params.buffer {
            Limit::Packets(n) => (self.waiting.len() as u64) < n,
            Limit::Bytes(b) if self.params.overshoot => self.waiting_bytes <= b,
            Limit::Bytes(b) => self.waiting_bytes + size as u64 <= b,
        };
        if !fits {
            return None;
        }
        let start = match self.busy_until {
            // Busy (a service ending exactly now still counts: arrivals come first).
            Some(b) if b >= now => {
                self.waiting.push_back((b, size));
                self.waiting_bytes += size as u64;
                b
            }
            _ => now,
        };
        self.last_start = Some(start);
        self.busy_until = Some(start + self.params.rate.tx_time(size as u64));
        Some(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    const MS: u64 = 1_000_000;

    /// 125 B at 1 Mbit/s: one packet time is 1 ms.
    fn vq(buffer: Limit) -> VirtualQueue {
        VirtualQueue::new(VirtualQueueParams {
            buffer,
            overshoot: false,
            rate: Rate(1_000_000),
        })
    }

    #[test]
    fn fcfs_start_times_and_waiting_room() {
        // Hand computation, Buff = 2 packets, packet time 1 ms, arrivals at 0 ms (x4) and 2.5 ms:
        // a starts at 0 (idle, in service, not waiting); b waits, starts 1; c waits, starts 2;
        // d finds b, c waiting (2 = Buff): refused. At 2.5 ms b and c have started: e waits
        // and starts when c ends, at 3.
        let mut q = vq(Limit::Packets(2));
        let t = |ms: f64| SimTime((ms * MS as f64) as u64);
        assert_eq!(q.offer(t(0.0), 125), Some(t(0.0)));
        assert_eq!(q.offer(t(0.0), 125), Some(t(1.0)));
        assert_eq!(q.offer(t(0.0), 125), Some(t(2.0)));
        assert_eq!(q.offer(t(0.0), 125), None);
        assert_eq!(q.len_packets(t(0.0)), 2);
        assert_eq!(q.offer(t(2.5), 125), Some(t(3.0)));
        assert_eq!(q.len_packets(t(2.5)), 1);
        // e waits until it starts at 3 ms: the waiting room is empty from then on (e in
        // service until 4 ms), as a FIFO is once its last packet is on the wire.
        assert_eq!(q.empty_since(t(2.5)), None);
        assert_eq!(q.empty_since(t(3.0)), None);
        assert_eq!(q.empty_since(t(3.5)), Some(t(3.0)));
        assert_eq!(q.empty_since(t(4.5)), Some(t(3.0)));
    }

    #[test]
    fn a_service_starting_at_an_arrival_instant_still_waits() {
        // a at 0 (in service until 1), b at 0 waits for 1. At exactly 1 ms, b's service
        // starts, but an arrival at 1 ms still sees it waiting (arrivals first).
        let mut q = vq(Limit::Packets(1));
        assert_eq!(q.offer(SimTime(0), 125), Some(SimTime(0)));
        assert_eq!(q.offer(SimTime(0), 125), Some(SimTime(MS)));
        assert_eq!(q.offer(SimTime(MS), 125), None);
        assert_eq!(q.offer(SimTime(MS + 1), 125), Some(SimTime(2 * MS)));
    }

    #[test]
    fn byte_limit_counts_the_arriving_duplicate() {
        let mut q = vq(Limit::Bytes(300));
        q.offer(SimTime(0), 100); // in service
        assert!(q.offer(SimTime(0), 200).is_some());
        assert!(q.offer(SimTime(0), 101).is_none());
        assert!(q.offer(SimTime(0), 100).is_some());
        assert_eq!(q.len_bytes(SimTime(0)), 300);
        // 100 B at 1 Mbit/s = 0.8 ms; the 200 B one starts at 0.8 ms.
        assert_eq!(q.len_bytes(SimTime(0) + Duration(800_001)), 100);
        // Overshoot (dummynet): admitted while at most 300 B wait, whatever its size.
        let mut q = vq(Limit::Bytes(300));
        q.params.overshoot = true;
        q.offer(SimTime(0), 100); // in service
        assert!(q.offer(SimTime(0), 250).is_some());
        assert!(q.offer(SimTime(0), 1500).is_some());
        assert_eq!(q.len_bytes(SimTime(0)), 1750);
        assert!(q.offer(SimTime(0), 40).is_none());
    }
}
