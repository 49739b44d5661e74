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
    /// Integrals of len_pkts and len_bytes over the window, in packet-ns and byte-ns,
    /// counted ahead: a packet admitted at t adds its size times the part of [t, end of
    /// the window) inside the window, and takes back the part after its removal when it
    /// leaves; what is left is exactly the part of its stay inside the window. One
    /// product per change, instead of a product per unit and the time of the last change.
    area_pkts: u128,
    area_bytes: u128,
    /// The integrals have been closed at the end of the run ([`ClassStats::finish`]).
    closed: bool,
}

impl ClassStats {
    /// A packet of `bytes` enters (`admitted`) or leaves the class's queue at `now`: the
    /// integrals gain or lose its share of the rest of the window.
    #[inline]
    fn count_rest_of_window(&mut self, w: &Window, now: SimTime, bytes: u32, admitted: bool) {
        let rest = w.overlap(now, w.end) as u128;
        let (pkts, bytes) = (rest, bytes as u128 * rest);
        if admitted {
            self.area_pkts += pkts;
            self.area_bytes += bytes;
        } else {
            self.area_pkts -= pkts;
            self.area_bytes -= bytes;
        }
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
        self.count_rest_of_window(w, now, bytes, true);
        self.len_pkts += 1;
        self.len_bytes += bytes as u64;
    }

    /// A queued packet left: for transmission (`dropped = None`) or dropped from the queue.
    #[inline]
    pub fn on_removed(&mut self, w: &Window, now: SimTime, bytes: u32, dropped: Option<DropCause>) {
        self.count_rest_of_window(w, now, bytes, false);
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

    /// Close the integrals at the end of the run: the packets still queued were counted to
    /// the end of the window; take back what lies after `end`. Once only.
    pub fn finish(&mut self, w: &Window, end: SimTime) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        let rest = w.overlap(end, w.end) as u128;
        self.area_pkts -= self.len_pkts as u128 * rest;
        self.area_bytes -= self.len_bytes as u128 * rest;
    }

    /// The occupancy integrals over the part of [window start, `now`) inside the window,
    /// in packet-ns and byte-ns, at any instant of the run (before `finish`): counted
    /// ahead, they hold the queued packets to the window's end, so take back what lies
    /// after `now`.
    pub fn occupancy_until(&self, w: &Window, now: SimTime) -> (u128, u128) {
        if self.closed {
            return (self.area_pkts, self.area_bytes);
        }
        let ahead = w.overlap(now, w.end) as u128;
        (
            self.area_pkts - self.len_pkts as u128 * ahead,
            self.area_bytes - self.len_bytes as u128 * ahead,
        )
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

    /// Packets and bytes counted and not yet added to the class.
    pub fn pkts(&self) -> u64 {
        self.pkts
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
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

    #[test]
    fn occupancy_until_any_instant_is_the_integral_so_far() {
        // Window [100, 300): packet a (10 B) queued from 50 to 120, b (20 B) from 110 on.
        // By 150: a 20 ns, b 40 ns inside the window (60 packet-ns, 200 + 800 byte-ns); by
        // 300: a 20 ns, b 190 ns (210 packet-ns, 200 + 3800 byte-ns).
        let w = Window {
            start: SimTime(100),
            end: SimTime(300),
        };
        let mut c = ClassStats::default();
        assert_eq!(c.occupancy_until(&w, SimTime(100)), (0, 0));
        c.on_admitted(&w, SimTime(50), 10);
        assert_eq!(c.occupancy_until(&w, SimTime(100)), (0, 0));
        c.on_admitted(&w, SimTime(110), 20);
        c.on_removed(&w, SimTime(120), 10, None);
        assert_eq!(c.occupancy_until(&w, SimTime(150)), (60, 1000));
        assert_eq!(c.occupancy_until(&w, SimTime(300)), (210, 4000));
        c.finish(&w, SimTime(300));
        assert_eq!(c.occupancy_until(&w, SimTime(300)), (210, 4000));
    }

    #[test]
    fn occupancy_integral_by_hand() {
        // Window [100, 300); the run ends at 250. Packet a (10 B) is queued from 50 to 120,
        // b (20 B) from 110 until dropped from the queue at 240, c (30 B) from 200 on, still
        // queued at the end. Inside [100, 250): a 20 ns, b 130 ns, c 50 ns: 200 packet-ns
        // and 200 + 2600 + 1500 = 4300 byte-ns, over the window's 200 ns. Closing twice
        // closes once.
        let w = Window {
            start: SimTime(100),
            end: SimTime(300),
        };
        let mut c = ClassStats::default();
        c.on_admitted(&w, SimTime(50), 10);
        c.on_admitted(&w, SimTime(110), 20);
        c.on_removed(&w, SimTime(120), 10, None);
        c.on_admitted(&w, SimTime(200), 30);
        c.on_removed(&w, SimTime(240), 20, Some(DropCause::Overflow));
        c.finish(&w, SimTime(250));
        c.finish(&w, SimTime(250));
        assert_eq!(c.mean_len(&w), (1.0, 21.5));
        assert_eq!((c.len_pkts, c.len_bytes), (1, 30));
        assert_eq!((c.departures_pkts, c.drops.pkts[DropCause::Overflow as usize]), (1, 1));
    }
}
