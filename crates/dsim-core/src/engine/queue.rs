//! The future event list.
//!
//! Events are ordered by (time, late, insertion sequence), where `late` is true for the end
//! of a transmission (the simulation's `Event::TxDone`, [`Scheduled::is_late`]) and false
//! for every other event. At one nanosecond
//! every other event (a packet's arrival at a node, an application's emission, a shaper's
//! release, a timer) is handled before the ends of transmission of that nanosecond, and
//! events of one kind keep the order they were scheduled in. This is the simulator's tie
//! rule, "arrivals first" (docs/ties.md): a transmission that ends at t occupies its link
//! for every arrival at t, and the next waiting packet starts only after every arrival at
//! t has been offered to the queue, as seed 000's Appendix B and DSD's virtual queue
//! assume. It also makes a run deterministic whatever the platform: the order of two
//! events never depends on anything but their times, kinds and scheduling order.

use crate::time::SimTime;

/// What the event list needs of an event: copied around, and whether it is late at its
/// instant (handled after every event of that instant that is not: the end of a
/// transmission, in the simulation's tie rule). The event type itself is the simulation's
/// ([`crate::sim::event::Event`]): the engine knows nothing of packets or ports.
pub trait Scheduled: Copy + std::fmt::Debug {
    /// A value for the calendar's empty slots (never read as an event).
    const FILLER: Self;
    fn is_late(&self) -> bool;
}

/// Key bits per calendar slot: 2^13 keys are 2^12 ns = 4.096 us (a key is twice a time).
const SLOT_BITS: u32 = 13;
/// Slots in the calendar: 2^14, a "year" of 67 ms.
const SLOTS: usize = 1 << 14;
const WORDS: usize = SLOTS / 64;
/// Key bits per fine slot: the current slot's 2^13 keys in 64 fine slots of 2^7 keys (64 ns).
const FINE_BITS: u32 = 7;
const FINE: usize = 1 << (SLOT_BITS - FINE_BITS);
/// An event whose key is less than this after `last` goes into the calendar, a later one
/// into the heap. One slot short of the year: the slots from last's to the event's never
/// wrap around onto last's own.
const HORIZON: u64 = ((SLOTS as u64) - 1) << SLOT_BITS;
/// The latest time a key holds, 2^62 - 1 ns (146 years): an event due later (a sum of
/// absurd durations) is kept at this time, past the end of any run. Keys stay far below
/// the heap's empty mark, u64::MAX.
const LATEST: u64 = u64::MAX >> 2;
const NIL: u32 = u32::MAX;
/// `EventQueue::current` when no slot is spread over the fine slots.
const NO_SLOT: u64 = u64::MAX;
/// Set in a calendar slot's `tail` when its events are no longer sorted.
const UNSORTED: u32 = 1 << 31;

/// The order of an event: its time, then whether it is late (an end of transmission),
/// as one integer, `time << 1 | late`.
#[inline(always)]
fn key<E: Scheduled>(at: SimTime, event: &E) -> u64 {
    (at.0.min(LATEST) << 1) | event.is_late() as u64
}

/// The time of a key.
#[inline(always)]
fn time_of(key: u64) -> SimTime {
    SimTime(key >> 1)
}

/// An event of a slot behind its first: a node of the slot's list.
#[derive(Clone, Copy, Debug)]
struct Node<E> {
    key: u64,
    event: E,
    next: u32,
}

/// One slot, of the calendar or of the fine ring: its first event in place (valid while
/// the slot's bit is set), and the list of its other events (`rest` NIL when none), with
/// its last node (`tail`, an index read only while `rest` is not NIL). The events are
/// sorted by key, equal keys in insertion order, unless bit 31 of `tail` ([`UNSORTED`],
/// set in calendar slots only) says they are only in an order that keeps equal keys in
/// insertion order. Most slots hold one event at a time, so a push and a pop touch the
/// slot and the bitmap and nothing else. The tail fills the slot's padding: 32 bytes
/// either way.
#[derive(Clone, Copy, Debug)]
struct Slot<E> {
    key: u64,
    event: E,
    rest: u32,
    tail: u32,
}

impl<E: Scheduled> Slot<E> {
    const EMPTY: Self = Slot {
        key: 0,
        event: E::FILLER,
        rest: NIL,
        tail: 0,
    };

    #[inline(always)]
    fn alone(key: u64, event: E) -> Self {
        Slot {
            key,
            event,
            rest: NIL,
            tail: 0,
        }
    }
}

/// The nodes of the slots' lists, with the list of unused ones.
struct Nodes<E> {
    all: Vec<Node<E>>,
    /// Head of the list of unused nodes.
    free: u32,
}

impl<E: Copy> Nodes<E> {
    /// A node holding the event, taken from the unused list when there is one.
    #[inline(always)]
    fn add(&mut self, key: u64, event: E, next: u32) -> u32 {
        let node = Node { key, event, next };
        if self.free != NIL {
            let n = self.free;
            self.free = self.all[n as usize].next;
            self.all[n as usize] = node;
            n
        } else {
            assert!(self.all.len() < UNSORTED as usize, "2^31 events pending");
            self.all.push(node);
            (self.all.len() - 1) as u32
        }
    }

    #[inline(always)]
    fn release(&mut self, n: u32) {
        self.all[n as usize].next = self.free;
        self.free = n;
    }

    /// Appends a node to the list of slot `s`, which holds an event (and keeps its mark).
    #[inline(always)]
    fn append(&mut self, s: &mut Slot<E>, key: u64, event: E) {
        let n = self.add(key, event, NIL);
        if s.rest == NIL {
            s.rest = n;
        } else {
            self.all[(s.tail & !UNSORTED) as usize].next = n;
        }
        s.tail = n | (s.tail & UNSORTED);
    }

    /// Puts an event due before every event of slot `s` in its place; the one there moves
    /// to the front of the list.
    #[inline(always)]
    fn prepend(&mut self, s: &mut Slot<E>, key: u64, event: E) {
        let n = self.add(s.key, s.event, s.rest);
        let tail = if s.rest == NIL { n } else { s.tail };
        *s = Slot {
            key,
            event,
            rest: n,
            tail,
        };
    }

    /// Whether an event due at or after the first of slot `s`, which holds events sorted
    /// by key (not marked), may join it at its end: it is due at or after the last.
    #[inline(always)]
    fn joins_at_end(&self, s: &Slot<E>, key: u64) -> bool {
        s.rest == NIL || self.all[s.tail as usize].key <= key
    }

    /// Slot `s` (sorted by key) holds events already: the new one goes after those with a
    /// key at or before its own (before all of them if it is the earliest).
    #[inline(never)]
    fn insert_sorted(&mut self, s: &mut Slot<E>, key: u64, event: E) {
        if key < s.key {
            self.prepend(s, key, event);
        } else if self.joins_at_end(s, key) {
            self.append(s, key, event);
        } else {
            // Before the last: after the nodes with a key at or before its own, found by a
            // walk that stops at the tail at the latest.
            let mut prev = NIL;
            let mut cur = s.rest;
            while self.all[cur as usize].key <= key {
                prev = cur;
                cur = self.all[cur as usize].next;
            }
            let n = self.add(key, event, cur);
            if prev == NIL {
                s.rest = n;
            } else {
                self.all[prev as usize].next = n;
            }
        }
    }

    /// Removes the event in place of slot `s`, which becomes empty (returns true) or takes
    /// its list's first (the list's order stays; a slot left with one event is sorted).
    #[inline(always)]
    fn take_first(&mut self, s: &mut Slot<E>) -> bool {
        if s.rest == NIL {
            return true;
        }
        let n = s.rest;
        let node = self.all[n as usize];
        if node.next != NIL {
            // The node after is the slot's next but one: at thousands of flows its line
            // is rarely in cache.
            crate::hint::prefetch(&self.all[node.next as usize]);
        }
        *s = Slot {
            key: node.key,
            event: node.event,
            rest: node.next,
            tail: if node.next == NIL { 0 } else { s.tail },
        };
        self.release(n);
        false
    }
}

/// An event due beyond the calendar's year, ordered by (key, insertion sequence).
#[derive(Clone, Copy, Debug)]
struct Far<E> {
    key: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Far<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.key, self.seq) == (other.key, other.seq)
    }
}

impl<E> Eq for Far<E> {}

impl<E> Ord for Far<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Reversed: `BinaryHeap` is a max-heap, this one must give the earliest first.
        (other.key, other.seq).cmp(&(self.key, self.seq))
    }
}

impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Where the next event waits: in place in a sorted calendar slot, or in a fine slot.
#[derive(Clone, Copy)]
enum Next {
    Slot(usize),
    Fine(usize),
}

/// The future event list: a calendar queue (R. Brown, "Calendar queues: a fast O(1)
/// priority queue implementation for the simulation event set problem", CACM 1988) of
/// 16,384 slots of 4.096 us, whose current slot is spread over a ring of 64 fine slots
/// of 64 ns (two tiers of a ladder queue: W. T. Tang, R. S. M. Goh, I. L.-J. Thng, "Ladder
/// queue: an O(1) priority queue structure for large-scale discrete event simulation",
/// ACM TOMACS 2005), with a binary heap for the events due beyond its 67 ms year.
///
/// Events are kept by key, `time << 1 | late` ([`Scheduled::is_late`]): the order of
/// keys is the order of (time, late), the tie rule of the module documentation, and
/// equal keys keep their insertion order. Slot `s = key >> 13` (4.096 us of time) sits at
/// index `s mod 16384`; the calendar holds the events whose keys lie in `[last, last +
/// HORIZON)`, a year less one slot, where `last` is the key popped last. Nothing is
/// scheduled before it: an event handler at `now` schedules at `now` or later, and an
/// event that is not late scheduled at `now` while the late events of `now` run (a packet
/// sent at the end of a transmission of zero duration onto a wire of zero delay) joins
/// them, behind those already pending ([`EventQueue::push`]).
///
/// A calendar slot holds its first event itself and the others in a list whose last the
/// slot also holds; a bitmap of the non-empty slots finds the next one. A slot's events
/// stay sorted while each new one is its earliest or due at or after its last (one step
/// either way: every event of an instant shared by thousands, pushed in order); the
/// first event that would have to walk the list is appended instead and the slot marked
/// unsorted. A sorted slot that comes up gives its events in order; an unsorted one is
/// first spread over the fine ring (`current` names the slot), each fine slot sorted by
/// key with a new event after the equal keys, and the events then pushed into the
/// current slot go straight to the ring. Events due beyond the year go to the heap, and
/// move into the calendar as soon as `last` comes within `HORIZON` of them, in (key,
/// insertion) order.
///
/// Why equal keys pop in insertion order: a sorted slot puts a new event after the equal
/// keys already there. An unsorted slot's list is its sorted part, then the events
/// appended since, in insertion order, so equal keys are in insertion order in it; they
/// reach the ring in that order, before anything later is pushed into the slot, and a
/// fine slot puts a new event after the equal keys already there. An event in the heap
/// with key `k` entered it before any event with key `k` could enter the calendar (the
/// calendar's window only moves forward), and it moves into the calendar as soon as the
/// window reaches `k`, before anything else is scheduled: so it is in the slot before any
/// later-scheduled event with key `k` (`pops_in_key_then_insertion_order` checks the
/// order against a sorted reference over short, long and beyond-the-year delays, both
/// kinds of events mixed).
///
/// Cost: the pending events of a small packet simulation are mostly alone in their 4 us
/// slot: a push writes an empty slot and sets its bit, a pop reads the slot and clears the
/// bit; the few slots of more events are mostly pushed in order. At thousands of flows a
/// dozen events pass through each slot, pushed in no order: each is appended in one step
/// and moved once more, to a fine slot of 64 ns that rarely holds another, where slots
/// kept sorted made most pushes walk a list (issue 24: 58 % of the pushes at 2,000 flows,
/// 3 nodes each; docs/performance.md, sixth round). Before the calendar, a radix heap
/// moved each event 4.5 times between buckets on average (22 % of the seed 002 dumbbell's
/// samples), and before that a binary heap took 33 % (see docs/performance.md). All give
/// the same order, so the same results.
pub struct EventQueue<E: Scheduled> {
    /// The key popped last: nothing is due before it.
    last: u64,
    slots: Box<[Slot<E>; SLOTS]>,
    /// Bit i set when slot i holds an event.
    bits: Box<[u64; WORDS]>,
    /// The slot (`key >> SLOT_BITS`) spread over `fine`, or NO_SLOT.
    current: u64,
    /// The current slot's events, by 64 ns of key.
    fine: [Slot<E>; FINE],
    /// Bit j set when fine slot j holds an event.
    fine_bits: u64,
    /// The slots' other events.
    nodes: Nodes<E>,
    far: std::collections::BinaryHeap<Far<E>>,
    /// Insertion counter for the heap's ties.
    far_seq: u64,
    /// Key of the heap's earliest event (u64::MAX when empty).
    far_min: u64,
    len: usize,
}

impl<E: Scheduled> Default for EventQueue<E> {
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
fn index(key: u64) -> usize {
    (key >> SLOT_BITS) as usize & (SLOTS - 1)
}

#[inline(always)]
fn fine_index(key: u64) -> usize {
    (key >> FINE_BITS) as usize & (FINE - 1)
}

impl<E: Scheduled> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            last: 0,
            slots: vec![Slot::EMPTY; SLOTS]
                .into_boxed_slice()
                .try_into()
                .expect("SLOTS entries"),
            bits: Box::new([0; WORDS]),
            current: NO_SLOT,
            fine: [Slot::EMPTY; FINE],
            fine_bits: 0,
            nodes: Nodes {
                all: Vec::with_capacity(n),
                free: NIL,
            },
            far: std::collections::BinaryHeap::new(),
            far_seq: 0,
            far_min: u64::MAX,
            len: 0,
        }
    }

    /// Schedules `event` at `at`: after the events already scheduled with the same key
    /// (time and lateness). Panics if `at` is before the last time popped (an event in the
    /// past: a bug of the caller).
    #[inline(always)]
    pub fn push(&mut self, at: SimTime, event: E) {
        self.len += 1;
        let key = key(at, &event);
        // One comparison for both bounds: a key before `last` wraps to a huge distance.
        if key.wrapping_sub(self.last) < HORIZON {
            self.insert(key, event);
        } else {
            self.push_far(key, event);
        }
    }

    /// An event beyond the calendar's horizon goes to the heap; one scheduled at the
    /// instant whose late events are running joins them.
    #[cold]
    #[inline(never)]
    fn push_far(&mut self, key: u64, event: E) {
        if key < self.last {
            if time_of(key) != time_of(self.last) {
                scheduled_in_the_past(key >> 1, self.last >> 1);
            }
            // Not late, scheduled now while the late events of now run (`last` is late):
            // it can no longer precede them, so it follows those pending, in insertion order.
            return self.insert(self.last, event);
        }
        self.far.push(Far {
            key,
            seq: self.far_seq,
            event,
        });
        self.far_seq += 1;
        self.far_min = self.far_min.min(key);
    }

    /// Puts an event into the fine ring if it is due in the current slot, else into its
    /// calendar slot.
    #[inline(always)]
    fn insert(&mut self, key: u64, event: E) {
        if key >> SLOT_BITS == self.current {
            return self.insert_fine(key, event);
        }
        let i = index(key);
        let bit = 1 << (i % 64);
        if self.bits[i / 64] & bit == 0 {
            self.bits[i / 64] |= bit;
            self.slots[i] = Slot::alone(key, event);
        } else {
            self.insert_behind(i, key, event);
        }
    }

    /// Calendar slot `i` holds events already. While they are sorted, the new one keeps
    /// them so if it is the earliest or due at or after the last; otherwise it is appended
    /// and the slot marked unsorted, to be spread over the fine ring when it comes up.
    #[inline(never)]
    fn insert_behind(&mut self, i: usize, key: u64, event: E) {
        let s = &mut self.slots[i];
        if s.tail & UNSORTED == 0 {
            if key < s.key {
                return self.nodes.prepend(s, key, event);
            }
            if !self.nodes.joins_at_end(s, key) {
                s.tail |= UNSORTED;
            }
        }
        self.nodes.append(s, key, event);
    }

    /// Puts an event of the current slot into its fine slot, after the events with a key
    /// at or before its own.
    #[inline(always)]
    fn insert_fine(&mut self, key: u64, event: E) {
        let j = fine_index(key);
        let bit = 1 << j;
        if self.fine_bits & bit == 0 {
            self.fine_bits |= bit;
            self.fine[j] = Slot::alone(key, event);
        } else {
            self.nodes.insert_sorted(&mut self.fine[j], key, event);
        }
    }

    /// Calendar slot `i`'s events, unsorted, into the (empty) fine ring; the slot becomes
    /// the current one. Its list keeps equal keys in insertion order: the events appended
    /// since it was marked unsorted came after those sorted before.
    #[inline(never)]
    fn spread(&mut self, i: usize) {
        self.bits[i / 64] &= !(1 << (i % 64));
        let s = self.slots[i];
        self.current = s.key >> SLOT_BITS;
        self.insert_fine(s.key, s.event);
        let mut n = s.rest;
        while n != NIL {
            let node = self.nodes.all[n as usize];
            if node.next != NIL {
                crate::hint::prefetch(&self.nodes.all[node.next as usize]);
            }
            // Released first: the fine slot may take the same node.
            self.nodes.release(n);
            self.insert_fine(node.key, node.event);
            n = node.next;
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
            self.insert(f.key, f.event);
            self.far_min = self.far.peek().map_or(u64::MAX, |f| f.key);
        }
    }

    /// Where the next event is, its key made `last`; None if nothing is pending.
    #[inline]
    fn advance(&mut self) -> Option<Next> {
        if self.fine_bits == 0 {
            self.current = NO_SLOT;
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
            if self.slots[i].tail & UNSORTED == 0 {
                self.last = self.slots[i].key;
                // What the heap moves in is due after `last` (see admit_far): the slot's
                // first event stays the next.
                self.admit_far();
                return Some(Next::Slot(i));
            }
            self.spread(i);
        }
        let j = self.fine_bits.trailing_zeros() as usize;
        self.last = self.fine[j].key;
        self.admit_far();
        Some(Next::Fine(j))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let next = self.advance()?;
        Some(self.take(next))
    }

    /// The next event if it is due before `until` (then nothing may be scheduled before
    /// its time); None otherwise.
    #[inline]
    pub fn pop_before(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        let next = self.advance()?;
        // The first key of `until` (the compiler keeps it out of the caller's loop).
        let bound = until.0.min(LATEST + 1) << 1;
        (self.last < bound).then(|| self.take(next))
    }

    /// Removes the next event (key `last`); its slot's next event, if any, takes its place.
    #[inline]
    fn take(&mut self, next: Next) -> (SimTime, E) {
        self.len -= 1;
        let (s, bits, bit) = match next {
            Next::Slot(i) => (&mut self.slots[i], &mut self.bits[i / 64], 1 << (i % 64)),
            Next::Fine(j) => (&mut self.fine[j], &mut self.fine_bits, 1 << j),
        };
        let (key, event) = (s.key, s.event);
        if self.nodes.take_first(s) {
            *bits &= !bit;
        }
        (time_of(key), event)
    }

    /// The event that pops next unless an earlier one is scheduled first, when it is in
    /// the slot just popped or the fine ring (a crowded calendar: thousands of flows);
    /// None otherwise, without looking further. For prefetching what it will read: costs
    /// a bit test.
    #[inline(always)]
    pub fn next_in_slot(&self) -> Option<&E> {
        if self.fine_bits != 0 {
            return Some(&self.fine[self.fine_bits.trailing_zeros() as usize].event);
        }
        let i = index(self.last);
        (self.bits[i / 64] & (1 << (i % 64)) != 0).then(|| &self.slots[i].event)
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

    /// The events of these tests: an end of transmission (late) and anything else.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Event {
        App(u32),
        TxDone(u32),
    }

    impl Scheduled for Event {
        const FILLER: Self = Event::App(0);
        fn is_late(&self) -> bool {
            matches!(self, Event::TxDone(_))
        }
    }

    /// An end of transmission (late) when `late`, another event otherwise; `id` names it.
    fn ev(id: u32, late: bool) -> Event {
        if late { Event::TxDone(id) } else { Event::App(id) }
    }

    fn id_of(e: Event) -> u32 {
        match e {
            Event::App(id) | Event::TxDone(id) => id,
        }
    }

    /// The ids of every pending event, in the order they pop.
    fn pop_ids(q: &mut EventQueue<Event>) -> Vec<u32> {
        std::iter::from_fn(|| q.pop()).map(|(_, e)| id_of(e)).collect()
    }

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
    fn ends_of_transmission_come_last_at_their_instant() {
        // At 5 ns: two ends of transmission scheduled first, then two other events (an
        // arrival, an application's emission, say); at 7 ns an end of transmission alone.
        // The other events of 5 ns pop first (in insertion order), then the two ends of
        // transmission (in insertion order), then 7 ns.
        let mut q = EventQueue::default();
        let arrival = Event::App(9);
        q.push(SimTime(5), Event::TxDone(1));
        q.push(SimTime(7), Event::TxDone(3));
        q.push(SimTime(5), Event::TxDone(2));
        q.push(SimTime(5), arrival);
        q.push(SimTime(5), Event::App(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (SimTime(5), arrival),
                (SimTime(5), Event::App(4)),
                (SimTime(5), Event::TxDone(1)),
                (SimTime(5), Event::TxDone(2)),
                (SimTime(7), Event::TxDone(3)),
            ]
        );
    }

    #[test]
    fn one_slot_keeps_key_then_insertion_order() {
        // All within one 4.096 us slot: a later push that is earlier than the event in
        // place takes its place; equal keys queue behind; one before the list's last marks
        // the slot unsorted, spread over the fine ring (all in one fine slot of 64 ns,
        // sorted there) when it comes up; at 10 and 30 ns the ends of transmission (3, 9,
        // 10) follow the other events of their nanosecond whenever they were pushed.
        let mut q = EventQueue::default();
        let pushes = [
            (30, 1, false),
            (10, 9, true),
            (10, 2, false),
            (30, 3, true),
            (10, 4, false),
            (20, 5, false),
            (5, 6, false),
            (40, 7, false),
            (20, 8, false),
            (30, 10, false),
        ];
        for (t, id, late) in pushes {
            q.push(SimTime(t), ev(id, late));
        }
        let order = pop_ids(&mut q);
        assert_eq!(order, vec![6, 2, 4, 9, 5, 8, 1, 10, 3, 7]);
        assert!(q.is_empty());
    }

    #[test]
    fn an_unsorted_slot_is_spread_and_takes_its_later_events_in_order() {
        // Slot 2 covers 8,192-12,287 ns. 9,000 becomes its earliest and 11,000 joins its
        // end (sorted); 9,500 would walk, so it is appended and the slot marked; the rest
        // follow it. Popping spreads the slot over the fine ring: 9,000 first. Then 9,500
        // (not late) joins the ring behind the two of its key, before the late one;
        // 12,000 is still in the slot, so in the ring; 12,300 goes to slot 3.
        let mut q = EventQueue::default();
        let pushes = [
            (10_000, 1, false),
            (9_000, 2, false),
            (11_000, 3, false),
            (9_500, 4, false),
        ];
        for (t, id, late) in pushes.into_iter().chain([(9_500, 5, true), (9_500, 6, false)]) {
            q.push(SimTime(t), ev(id, late));
        }
        assert_eq!(q.slots[2].tail & UNSORTED, UNSORTED);
        assert_eq!(q.pop(), Some((SimTime(9_000), Event::App(2))));
        assert_eq!((q.current, q.bits[0] & 0b100), (2, 0), "slot 2 spread over the ring");
        q.push(SimTime(9_500), Event::App(7));
        q.push(SimTime(12_000), Event::App(8));
        q.push(SimTime(12_300), Event::App(9));
        let order = pop_ids(&mut q);
        assert_eq!(order, vec![4, 6, 7, 5, 1, 3, 8, 9]);
    }

    #[test]
    fn an_event_scheduled_now_while_the_late_ones_run_follows_them() {
        // An end of transmission at 5 ns pops; the handler schedules an arrival at 5 ns (a
        // packet of zero transmission time onto a wire of zero delay): it can no longer
        // precede the end of transmission still pending at 5 ns, and pops after it, before
        // an end of transmission scheduled after it.
        let mut q = EventQueue::default();
        q.push(SimTime(5), Event::TxDone(1));
        q.push(SimTime(5), Event::TxDone(2));
        assert_eq!(q.pop(), Some((SimTime(5), Event::TxDone(1))));
        q.push(SimTime(5), Event::App(3));
        q.push(SimTime(5), Event::TxDone(4));
        let order = pop_ids(&mut q);
        assert_eq!(order, vec![2, 3, 4]);
    }

    #[test]
    fn eight_thousand_events_of_one_instant_keep_their_order() {
        // 8,000 sources due at one instant, pushed directly (the calendar's path) and, for a
        // second instant, beyond the year (through the far heap, admitted in one go), with
        // an end of transmission pushed after every tenth: every event that is not late
        // pops first, in push order, then the late ones, in push order. Each push lands at
        // the slot's tail except the arrivals behind a late one.
        const N: u32 = 8_000;
        for at in [SimTime(1_000), SimTime(1_000 + (HORIZON >> 1) + 7)] {
            let mut q = EventQueue::default();
            q.push(SimTime(1), Event::App(u32::MAX));
            assert_eq!(q.pop(), Some((SimTime(1), Event::App(u32::MAX))));
            for id in 0..N {
                q.push(at, Event::App(id));
                if id % 10 == 0 {
                    q.push(at, Event::TxDone(id));
                }
            }
            let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            let expected: Vec<_> = (0..N)
                .map(Event::App)
                .chain((0..N).step_by(10).map(Event::TxDone))
                .map(|e| (at, e))
                .collect();
            assert_eq!(order, expected);
        }
    }

    #[test]
    #[should_panic(expected = "event scheduled in the past (4 < 5)")]
    fn an_event_in_the_past_panics() {
        let mut q = EventQueue::default();
        q.push(SimTime(5), Event::TxDone(1));
        q.pop();
        q.push(SimTime(4), Event::App(2));
    }

    #[test]
    fn times_beyond_the_latest_are_kept_at_it() {
        let mut q = EventQueue::default();
        q.push(SimTime(u64::MAX), Event::App(1));
        q.push(SimTime(LATEST), Event::TxDone(2));
        q.push(SimTime(LATEST - 1), Event::App(3));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (SimTime(LATEST - 1), Event::App(3)),
                (SimTime(LATEST), Event::App(1)),
                (SimTime(LATEST), Event::TxDone(2)),
            ]
        );
    }

    #[test]
    fn pop_before_stops_at_the_bound() {
        let mut q = EventQueue::default();
        q.push(SimTime(10), Event::App(2));
        q.push(SimTime(5), Event::TxDone(1));
        assert_eq!(q.pop_before(SimTime(7)), Some((SimTime(5), Event::TxDone(1))));
        assert_eq!(q.pop_before(SimTime(7)), None);
        assert_eq!(q.pop_before(SimTime(10)), None, "the bound is exclusive");
        assert_eq!(q.pop_before(SimTime(11)), Some((SimTime(10), Event::App(2))));
        assert_eq!(q.pop_before(SimTime(11)), None);
        assert!(q.is_empty());
    }

    proptest::proptest! {
        /// Any interleaving of pushes and pops, of both kinds of events, gives the order of
        /// a sorted reference: (time, late, insertion sequence), with many equal times; an
        /// event that is not late, pushed at the instant of the last late event popped,
        /// counts as late.
        #[test]
        fn pops_in_key_then_insertion_order(ops in proptest::collection::vec((0u64..40, 0u32..5, proptest::bool::weighted(0.6), proptest::bool::ANY), 1..400)) {
            let mut q = EventQueue::default();
            // (key, id), in insertion order: the first of the smallest key pops first.
            let mut reference: Vec<(u64, u32)> = Vec::new();
            let mut last_key = 0;
            let pop_reference = |reference: &mut Vec<(u64, u32)>| {
                let k = (0..reference.len()).min_by_key(|&k| reference[k].0).unwrap();
                reference.remove(k)
            };
            for (i, (dt, scale, push, late)) in ops.into_iter().enumerate() {
                // Same fine slot, same slot, a few slots on, across the calendar, beyond its
                // year; often 0.
                let dt = dt.saturating_sub(10) << [0, 7, 10, 21, 26][scale as usize];
                let now = last_key >> 1;
                if push {
                    // Never in the past, as the simulation guarantees.
                    q.push(SimTime(now + dt), ev(i as u32, late));
                    let key = ((now + dt) << 1 | late as u64).max(last_key);
                    reference.push((key, i as u32));
                } else if let Some((t, e)) = q.pop() {
                    let (rk, ri) = pop_reference(&mut reference);
                    proptest::prop_assert_eq!((t, id_of(e)), (SimTime(rk >> 1), ri));
                    last_key = rk;
                }
            }
            while let Some((t, e)) = q.pop() {
                let (rk, ri) = pop_reference(&mut reference);
                proptest::prop_assert_eq!((t, id_of(e)), (SimTime(rk >> 1), ri));
            }
            proptest::prop_assert!(reference.is_empty());
        }
    }
}
