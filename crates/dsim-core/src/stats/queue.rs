//! Per (port, queue, precedence) counters and the time-weighted occupancy.

use super::{DropCause, DropCounts, Window};
use crate::time::SimTime;

#[derive(Clone, Debug, Default)]
pub struct ClassStats {
    pub arrivals_pkts: u64,
    pub arrivals_bytes: u64,
    pub departures_pkts: u64,
    pub departures_bytes: u64,
    pub drops: DropCounts,
    /// Admitted packets the queue's AQM marked CE instead of dropping (RFC 3168).
    pub marks_pkts: u64,
    /// Packets and bytes of this class waiting now (excluding the one being transmitted).
    pub len_pkts: u64,
    pub len_bytes: u64,
    /// Integrals of len_pkts and len_bytes over the window, in packet-ns and byte-ns.
    area_pkts: u128,
    area_bytes: u128,
    last_change: SimTime,
}

impl ClassStats {
    /// Accumulate the occupancy integral up to `now`; call before every length change.
    #[inline]
    fn advance(&mut self, w: &Window, now: SimTime) {
        let dt = w.overlap(self.last_change, now) as u128;
        self.area_pkts += self.len_pkts as u128 * dt;
        self.area_bytes += self.len_bytes as u128 * dt;
        self.last_change = now;
    }

    #[inline]
    pub fn on_arrival(&mut self, w: &Window, now: SimTime, bytes: u32) {
        if w.contains(now) {
            self.arrivals_pkts += 1;
            self.arrivals_bytes += bytes as u64;
        }
    }

    /// The packet was admitted to the queue.
    #[inline]
    pub fn on_admitted(&mut self, w: &Window, now: SimTime, bytes: u32) {
        self.advance(w, now);
        self.len_pkts += 1;
        self.len_bytes += bytes as u64;
    }

    /// A queued packet left: for transmission (`dropped = None`) or dropped from the queue.
    #[inline]
    pub fn on_removed(&mut self, w: &Window, now: SimTime, bytes: u32, dropped: Option<DropCause>) {
        self.advance(w, now);
        self.len_pkts -= 1;
        self.len_bytes -= bytes as u64;
        match dropped {
            None if w.contains(now) => {
                self.departures_pkts += 1;
                self.departures_bytes += bytes as u64;
            }
            Some(cause) => self.on_refused(w, now, cause, bytes),
            None => {}
        }
    }

    /// An arriving packet was not admitted.
    #[inline]
    pub fn on_refused(&mut self, w: &Window, now: SimTime, cause: DropCause, bytes: u32) {
        if w.contains(now) {
            self.drops.add(cause, bytes as u64);
        }
    }

    /// The AQM marked an admitted packet CE.
    #[inline]
    pub fn on_marked(&mut self, w: &Window, now: SimTime) {
        if w.contains(now) {
            self.marks_pkts += 1;
        }
    }

    /// Close the integrals at the end of the run.
    pub fn finish(&mut self, w: &Window, end: SimTime) {
        self.advance(w, end);
    }

    /// Time-weighted mean occupancy over the window: (packets, bytes).
    pub fn mean_len(&self, w: &Window) -> (f64, f64) {
        let len = w.length().0 as f64;
        if len == 0.0 {
            return (f64::NAN, f64::NAN);
        }
        (self.area_pkts as f64 / len, self.area_bytes as f64 / len)
    }
}

/// Packets that passed straight through a free port's empty queue (`Qdisc::lone_packet_limit`),
/// counted apart from the class counters: the port keeps these beside the fields every
/// packet reads (one cache line), and adds them to class 0 when the run finishes. Each
/// counts as [`ClassStats::on_arrival`], [`ClassStats::on_admitted`] and
/// [`ClassStats::on_removed`] at one instant would, and the occupancy integral gains
/// nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassedThrough {
    pkts: u64,
    bytes: u64,
}

impl PassedThrough {
    #[inline]
    pub fn count(&mut self, w: &Window, now: SimTime, bytes: u32) {
        if w.contains(now) {
            self.pkts += 1;
            self.bytes += bytes as u64;
        }
    }

    /// Adds what was counted to `c`'s arrivals and departures, and starts again from 0.
    pub fn close_into(&mut self, c: &mut ClassStats) {
        let PassedThrough { pkts, bytes } = std::mem::take(self);
        c.arrivals_pkts += pkts;
        c.arrivals_bytes += bytes;
        c.departures_pkts += pkts;
        c.departures_bytes += bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passing_straight_through_counts_as_admitted_and_removed_at_once() {
        // One packet queued from 120 to 160; at 130 and 170 a packet of 40 bytes arrives
        // and leaves at once: counted through the queue in `a`, straight through in `b`.
        let w = Window {
            start: SimTime(100),
            end: SimTime(200),
        };
        let (mut a, mut b) = (ClassStats::default(), ClassStats::default());
        let mut passed = PassedThrough::default();
        for c in [&mut a, &mut b] {
            c.on_arrival(&w, SimTime(120), 10);
            c.on_admitted(&w, SimTime(120), 10);
        }
        for t in [SimTime(130), SimTime(170)] {
            if t == SimTime(170) {
                for c in [&mut a, &mut b] {
                    c.on_removed(&w, SimTime(160), 10, None);
                }
            }
            a.on_arrival(&w, t, 40);
            a.on_admitted(&w, t, 40);
            a.on_removed(&w, t, 40, None);
            passed.count(&w, t, 40);
        }
        passed.close_into(&mut b);
        a.finish(&w, SimTime(200));
        b.finish(&w, SimTime(200));
        assert_eq!((b.arrivals_pkts, b.arrivals_bytes), (3, 90));
        assert_eq!((b.departures_pkts, b.departures_bytes), (3, 90));
        assert_eq!(b.mean_len(&w), (0.4, 4.0));
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }

    #[test]
    fn time_weighted_mean_ignores_the_warmup() {
        // Window [100, 200): one packet from 50 to 150, two from 150 to 200.
        let w = Window {
            start: SimTime(100),
            end: SimTime(200),
        };
        let mut c = ClassStats::default();
        c.on_admitted(&w, SimTime(50), 10);
        c.on_admitted(&w, SimTime(150), 10);
        c.finish(&w, SimTime(200));
        let (p, b) = c.mean_len(&w);
        assert_eq!(p, (1.0 * 50.0 + 2.0 * 50.0) / 100.0);
        assert_eq!(b, 15.0);
    }
}
