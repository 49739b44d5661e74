//! The future event list.
//!
//! Events are ordered by (time, insertion sequence): two events due at the same nanosecond
//! pop in the order they were scheduled. That tie rule is what makes a run deterministic
//! whatever the platform, and it is the order a reader expects from the code (SimPy and
//! nexosim use the same rule).

use super::Event;
use crate::time::SimTime;

/// Nanoseconds per calendar slot: 2^12 = 4.096 us.
const SLOT_BITS: u32 = 12;
/// Slots in the calendar: 2^14, a "year" of 67 ms.
const SLOTS: usize = 1 << 14;
const WORDS: usize = SLOTS / 64;
/// An event due less than this after `last` goes into the calendar, a later one into the
/// heap. One slot short of the year: the slots from last's to the event's never wrap
/// around onto last's own.
const HORIZON: u64 = ((SLOTS as u64) - 1) << SLOT_BITS;
const NIL: u32 = u32::MAX;

/// An event of a slot behind its first: a node of the slot's list, sorted by time.
#[derive(Clone, Copy, Debug)]
struct Node {
    time: u64,
    event: Event,
    next: u32,
}

/// One slot of the calendar: its earliest event in place (valid while the slot's bit is
/// set), and the list of its later events, sorted by time (`rest` NIL when none). Most
/// slots hold one event at a time, so a push and a pop touch the slot and the bitmap and
/// nothing else; the list is short, walked to append.
#[derive(Clone, Copy, Debug)]
struct Slot {
    time: u64,
    event: Event,
    rest: u32,
}

/// An event due beyond the calendar's year, ordered by (time, insertion sequence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Far {
    time: u64,
    seq: u64,
    event: Event,
}

impl Ord for Far {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Reversed: `BinaryHeap` is a max-heap, this one must give the earliest first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Far {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The future event list: a calendar queue (R. Brown, "Calendar queues: a fast O(1)
/// priority queue implementation for the simulation event set problem", CACM 1988) of
/// 16,384 slots of 4.096 us, with a binary heap for the events due beyond its 67 ms year.
///
/// Slot `s = time >> 12` sits at index `s mod 16384`; the calendar holds the events due
/// in `[last, last + HORIZON)`, a year less one slot, where `last` is the time popped
/// last (nothing is ever scheduled before it: an event handler at `now` schedules at
/// `now` or later). Each index holds one slot's events sorted by time, a new event going
/// after those due at the same time: the earliest in the slot itself, the others in a
/// list of nodes; a bitmap of the non-empty indices finds the next one. Events due later
/// go to the heap, and move into the calendar as soon as `last` comes within `HORIZON`
/// of them, in (time, insertion) order.
///
/// Why equal times pop in insertion order: within a slot a new event goes after the
/// equal times already there. An event in the heap due at `t` entered it before any
/// event due at `t` could enter the calendar (the calendar's window only moves forward),
/// and it moves into the calendar as soon as the window reaches `t`, before anything else
/// is scheduled: so it is in the slot before any later-scheduled event due at `t`
/// (`pops_in_time_then_insertion_order` checks the order against a sorted reference over
/// short, long and beyond-the-year delays).
///
/// Cost: the pending events of a packet simulation are mostly due within a millisecond
/// (the next packet on each wire, the end of a transmission), rarely two in a slot: a push
/// writes an empty slot and sets its bit, a pop reads the slot and clears the bit, and the
/// next non-empty slot is found in the bitmap. Before it, a radix heap moved each event 4.5
/// times between buckets on average (22 % of the seed 002 dumbbell's samples), and before
/// that a binary heap took 33 % (see docs/performance.md). All give the same order, so the
/// same results.
pub struct EventQueue {
    /// The time popped last: nothing is due before it.
    last: u64,
    slots: Box<[Slot; SLOTS]>,
    /// Bit i set when slot i holds an event.
    bits: Box<[u64; WORDS]>,
    /// The slots' later events.
    nodes: Vec<Node>,
    /// Head of the list of unused nodes.
    free: u32,
    far: std::collections::BinaryHeap<Far>,
    /// Insertion counter for the heap's ties.
    far_seq: u64,
    /// Due time of the heap's earliest event (u64::MAX when empty).
    far_min: u64,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::with_capacity(0)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn scheduled_in_the_past(at: u64, last: u64) -> ! {
    panic!("event scheduled in the past ({at} < {last})")
}

#[inline(always)]
fn index(t: u64) -> usize {
    (t >> SLOT_BITS) as usize & (SLOTS - 1)
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        let empty = Slot {
            time: 0,
            event: Event::App(0),
            rest: NIL,
        };
        EventQueue {
            last: 0,
            slots: vec![empty; SLOTS].into_boxed_slice().try_into().expect("SLOTS entries"),
            bits: Box::new([0; WORDS]),
            nodes: Vec::with_capacity(n),
            free: NIL,
            far: std::collections::BinaryHeap::new(),
            far_seq: 0,
            far_min: u64::MAX,
            len: 0,
        }
    }

    /// Schedules `event` at `at`. Panics if `at` is before the last time popped (an event
    /// in the past: a bug of the caller).
    #[inline(always)]
    pub fn push(&mut self, at: SimTime, event: Event) {
        self.len += 1;
        // One comparison for both bounds: a time before `last` wraps to a huge distance.
        if at.0.wrapping_sub(self.last) < HORIZON {
            self.insert(at.0, event);
        } else {
            self.push_far(at.0, event);
        }
    }

    /// An event beyond the calendar's horizon goes to the heap.
    #[cold]
    #[inline(never)]
    fn push_far(&mut self, time: u64, event: Event) {
        if time < self.last {
            scheduled_in_the_past(time, self.last);
        }
        self.far.push(Far {
            time,
            seq: self.far_seq,
            event,
        });
        self.far_seq += 1;
        self.far_min = self.far_min.min(time);
    }

    /// Puts an event into its slot: in place if the slot is empty, else after the events
    /// due at or before its time.
    #[inline(always)]
    fn insert(&mut self, time: u64, event: Event) {
        let i = index(time);
        let bit = 1 << (i % 64);
        if self.bits[i / 64] & bit == 0 {
            self.bits[i / 64] |= bit;
            self.slots[i] = Slot { time, event, rest: NIL };
        } else {
            self.insert_behind(i, time, event);
        }
    }

    /// Slot `i` holds events already: the new one goes after those due at or before its
    /// time (before all of them if it is the earliest).
    #[inline(never)]
    fn insert_behind(&mut self, i: usize, time: u64, event: Event) {
        let s = self.slots[i];
        if time < s.time {
            // The new earliest: the one in place moves to the front of the list.
            let n = self.new_node(s.time, s.event, s.rest);
            self.slots[i] = Slot { time, event, rest: n };
            return;
        }
        let mut prev = NIL;
        let mut cur = s.rest;
        while cur != NIL && self.nodes[cur as usize].time <= time {
            prev = cur;
            cur = self.nodes[cur as usize].next;
        }
        let n = self.new_node(time, event, cur);
        if prev == NIL {
            self.slots[i].rest = n;
        } else {
            self.nodes[prev as usize].next = n;
        }
    }

    /// A node holding the event, taken from the unused list when there is one.
    #[inline(always)]
    fn new_node(&mut self, time: u64, event: Event, next: u32) -> u32 {
        let node = Node { time, event, next };
        if self.free != NIL {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = node;
            n
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// The first non-empty index at or after `from`, wrapping around once.
    #[inline]
    fn next_index(&self, from: usize) -> Option<usize> {
        let w = from / 64;
        let word = self.bits[w] & (!0u64 << (from % 64));
        if word != 0 {
            return Some(w * 64 + word.trailing_zeros() as usize);
        }
        self.next_index_after_word(w)
    }

    /// The first non-empty index in the words after `w`, then from the start (the next
    /// year's indices, `w`'s own lower bits among them). A linear scan: the events of a
    /// busy network lie within a few words, and an idle one pops rarely.
    #[inline(never)]
    fn next_index_after_word(&self, w: usize) -> Option<usize> {
        (w + 1..WORDS)
            .chain(0..=w)
            .find(|&w| self.bits[w] != 0)
            .map(|w| w * 64 + self.bits[w].trailing_zeros() as usize)
    }

    /// Moves into the calendar the heap's events that its horizon now reaches (`far_min`
    /// is never before `last`: the calendar's events all precede the heap's).
    #[inline]
    fn admit_far(&mut self) {
        if self.far_min - self.last < HORIZON {
            self.admit_far_now();
        }
    }

    #[cold]
    fn admit_far_now(&mut self) {
        while self.far_min - self.last < HORIZON {
            let f = self.far.pop().expect("far_min is the heap's earliest");
            self.insert(f.time, f.event);
            self.far_min = self.far.peek().map_or(u64::MAX, |f| f.time);
        }
    }

    /// The index of the next event's slot, its time made `last`; None if nothing is pending.
    #[inline]
    fn advance(&mut self) -> Option<usize> {
        let i = match self.next_index(index(self.last)) {
            Some(i) => i,
            None if self.far.is_empty() => return None,
            None => {
                // Nothing within the horizon: jump to the heap's earliest event.
                self.last = self.far_min;
                self.admit_far();
                index(self.last)
            }
        };
        self.last = self.slots[i].time;
        // What the heap moves in is due after `last` (see admit_far): slot i's first
        // event stays the next.
        self.admit_far();
        Some(i)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let i = self.advance()?;
        Some(self.take_first(i))
    }

    /// The next event if it is due before `until` (then nothing may be scheduled before
    /// its time); None otherwise.
    #[inline]
    pub fn pop_before(&mut self, until: SimTime) -> Option<(SimTime, Event)> {
        let i = self.advance()?;
        (self.last < until.0).then(|| self.take_first(i))
    }

    /// Removes the first event of slot `i` (the next event, due at `last`); the slot's
    /// next event, if any, takes its place.
    #[inline]
    fn take_first(&mut self, i: usize) -> (SimTime, Event) {
        let s = self.slots[i];
        if s.rest == NIL {
            self.bits[i / 64] &= !(1 << (i % 64));
        } else {
            self.move_up(i, s.rest);
        }
        self.len -= 1;
        (SimTime(s.time), s.event)
    }

    /// Node `n`, the first of slot `i`'s list, takes the slot's place in it.
    #[inline(never)]
    fn move_up(&mut self, i: usize, n: u32) {
        let node = self.nodes[n as usize];
        self.slots[i] = Slot {
            time: node.time,
            event: node.event,
            rest: node.next,
        };
        self.nodes[n as usize].next = self.free;
        self.free = n;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), Event::App(3));
        q.push(SimTime(1), Event::App(1));
        q.push(SimTime(5), Event::App(4));
        q.push(SimTime(5), Event::App(5));
        q.push(SimTime(2), Event::App(2));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (SimTime(1), Event::App(1)),
                (SimTime(2), Event::App(2)),
                (SimTime(5), Event::App(3)),
                (SimTime(5), Event::App(4)),
                (SimTime(5), Event::App(5)),
            ]
        );
    }

    #[test]
    fn one_slot_keeps_time_then_insertion_order() {
        // All within one 4.096 us slot: a later push that is earlier than the event in
        // place takes its place; equal times queue behind; one before the list's last
        // walks to its place.
        let mut q = EventQueue::default();
        for (t, id) in [(30, 1), (10, 2), (30, 3), (10, 4), (20, 5), (5, 6), (40, 7), (20, 8)] {
            q.push(SimTime(t), Event::App(id));
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::App(id) => id,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![6, 2, 4, 5, 8, 1, 3, 7]);
        assert!(q.is_empty());
    }

    #[test]
    fn pop_before_stops_at_the_bound() {
        let mut q = EventQueue::default();
        q.push(SimTime(10), Event::App(2));
        q.push(SimTime(5), Event::App(1));
        assert_eq!(q.pop_before(SimTime(7)), Some((SimTime(5), Event::App(1))));
        assert_eq!(q.pop_before(SimTime(7)), None);
        assert_eq!(q.pop_before(SimTime(10)), None, "the bound is exclusive");
        assert_eq!(q.pop_before(SimTime(11)), Some((SimTime(10), Event::App(2))));
        assert_eq!(q.pop_before(SimTime(11)), None);
        assert!(q.is_empty());
    }

    proptest::proptest! {
        /// Any interleaving of pushes and pops gives the order of a sorted reference:
        /// (time, insertion sequence), with many equal times.
        #[test]
        fn pops_in_time_then_insertion_order(ops in proptest::collection::vec((0u64..40, 0u32..4, proptest::bool::weighted(0.6)), 1..400)) {
            let mut q = EventQueue::default();
            let mut reference: Vec<(u64, u32)> = Vec::new();
            let mut now = 0;
            for (i, (dt, scale, push)) in ops.into_iter().enumerate() {
                // Same slot, a few slots on, across the calendar, beyond its year.
                let dt = dt << [0, 10, 21, 26][scale as usize];
                if push {
                    // Never in the past, as the simulation guarantees.
                    q.push(SimTime(now + dt), Event::App(i as u32));
                    reference.push((now + dt, i as u32));
                } else if let Some((t, ev)) = q.pop() {
                    let k = (0..reference.len()).min_by_key(|&k| reference[k].0).unwrap();
                    let (rt, ri) = reference.remove(k);
                    proptest::prop_assert_eq!((t, ev), (SimTime(rt), Event::App(ri)));
                    now = t.0;
                }
            }
            while let Some((t, ev)) = q.pop() {
                let k = (0..reference.len()).min_by_key(|&k| reference[k].0).unwrap();
                let (rt, ri) = reference.remove(k);
                proptest::prop_assert_eq!((t, ev), (SimTime(rt), Event::App(ri)));
            }
            proptest::prop_assert!(reference.is_empty());
        }
    }
}
