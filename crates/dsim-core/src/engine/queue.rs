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
/// An event whose key is less than this after `last` goes into the calendar, a later one
/// into the heap. One slot short of the year: the slots from last's to the event's never
/// wrap around onto last's own.
const HORIZON: u64 = ((SLOTS as u64) - 1) << SLOT_BITS;
/// The latest time a key holds, 2^62 - 1 ns (146 years): an event due later (a sum of
/// absurd durations) is kept at this time, past the end of any run. Keys stay far below
/// the heap's empty mark, u64::MAX.
const LATEST: u64 = u64::MAX >> 2;
const NIL: u32 = u32::MAX;

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

/// An event of a slot behind its first: a node of the slot's list, sorted by key.
#[derive(Clone, Copy, Debug)]
struct Node<E> {
    key: u64,
    event: E,
    next: u32,
}

/// One slot of the calendar: its earliest event in place (valid while the slot's bit is
/// set), and the list of its later events, sorted by key (`rest` NIL when none), with its
/// last node (`tail`, read only while `rest` is not NIL). Most slots hold one event at a
/// time, so a push and a pop touch the slot and the bitmap and nothing else. An event due
/// at or after the list's last joins it at the tail, in one step however long the list is
/// (n sources emitting at one instant: n pushes of one key); only an event due before the
/// last walks the list to its place. The tail fills the slot's padding: 32 bytes either way.
#[derive(Clone, Copy, Debug)]
struct Slot<E> {
    key: u64,
    event: E,
    rest: u32,
    tail: u32,
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

/// The future event list: a calendar queue (R. Brown, "Calendar queues: a fast O(1)
/// priority queue implementation for the simulation event set problem", CACM 1988) of
/// 16,384 slots of 4.096 us, with a binary heap for the events due beyond its 67 ms year.
///
/// Events are kept by key, `time << 1 | late` ([`Scheduled::is_late`]): the order of
/// keys is the order of (time, late), the tie rule of the module documentation, and
/// equal keys keep their insertion order. Slot `s = key >> 13` (4.096 us of time) sits at
/// index `s mod 16384`; the calendar holds the events whose keys lie in `[last, last +
/// HORIZON)`, a year less one slot, where `last` is the key popped last. Nothing is
/// scheduled before it: an event handler at `now` schedules at `now` or later, and an
/// event that is not late scheduled at `now` while the late events of `now` run (a packet
/// sent at the end of a transmission of zero duration onto a wire of zero delay) joins
/// them, behind those already pending ([`EventQueue::push`]). Each index holds one slot's
/// events sorted by key, a new event going after those with the same key: the earliest in
/// the slot itself, the others in a list of nodes whose last the slot also holds, so that
/// an event due at or after it (every event of an instant shared by thousands, pushed in
/// order) is appended in one step; a bitmap of the non-empty indices finds the next one. Events due later go to the heap, and move into the calendar as
/// soon as `last` comes within `HORIZON` of them, in (key, insertion) order.
///
/// Why equal keys pop in insertion order: within a slot a new event goes after the equal
/// keys already there. An event in the heap with key `k` entered it before any event with
/// key `k` could enter the calendar (the calendar's window only moves forward), and it
/// moves into the calendar as soon as the window reaches `k`, before anything else is
/// scheduled: so it is in the slot before any later-scheduled event with key `k`
/// (`pops_in_key_then_insertion_order` checks the order against a sorted reference over
/// short, long and beyond-the-year delays, both kinds of events mixed).
///
/// Cost: the pending events of a packet simulation are mostly due within a millisecond
/// (the next packet on each wire, the end of a transmission), rarely two in a slot: a push
/// writes an empty slot and sets its bit, a pop reads the slot and clears the bit, and the
/// next non-empty slot is found in the bitmap. Only an event due before the last of a
/// crowded slot walks its list (issue 28: n emissions at one instant cost O(n) in all,
/// where the walk to the end of the list made them O(n^2)). Before the calendar, a radix
/// heap moved each event 4.5 times between buckets on average (22 % of the seed 002
/// dumbbell's samples), and before that a binary heap took 33 % (see
/// docs/performance.md). All give the same order, so the same results.
pub struct EventQueue<E: Scheduled> {
    /// The key popped last: nothing is due before it.
    last: u64,
    slots: Box<[Slot<E>; SLOTS]>,
    /// Bit i set when slot i holds an event.
    bits: Box<[u64; WORDS]>,
    /// The slots' later events.
    nodes: Vec<Node<E>>,
    /// Head of the list of unused nodes.
    free: u32,
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

impl<E: Scheduled> EventQueue<E> {
    pub fn with_capacity(n: usize) -> Self {
        let empty = Slot {
            key: 0,
            event: E::FILLER,
            rest: NIL,
            tail: NIL,
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

    /// Puts an event into its slot: in place if the slot is empty, else after the events
    /// with a key at or before its own.
    #[inline(always)]
    fn insert(&mut self, key: u64, event: E) {
        let i = index(key);
        let bit = 1 << (i % 64);
        if self.bits[i / 64] & bit == 0 {
            self.bits[i / 64] |= bit;
            self.slots[i] = Slot {
                key,
                event,
                rest: NIL,
                tail: NIL,
            };
        } else {
            self.insert_behind(i, key, event);
        }
    }

    /// Slot `i` holds events already: the new one goes after those with a key at or before
    /// its own (before all of them if it is the earliest).
    #[inline(never)]
    fn insert_behind(&mut self, i: usize, key: u64, event: E) {
        let s = self.slots[i];
        if key < s.key {
            // The new earliest: the one in place moves to the front of the list.
            let n = self.new_node(s.key, s.event, s.rest);
            let tail = if s.rest == NIL { n } else { s.tail };
            self.slots[i] = Slot {
                key,
                event,
                rest: n,
                tail,
            };
        } else if s.rest == NIL || self.nodes[s.tail as usize].key <= key {
            // At or after the last: the new tail, in one step.
            let n = self.new_node(key, event, NIL);
            if s.rest == NIL {
                self.slots[i].rest = n;
            } else {
                self.nodes[s.tail as usize].next = n;
            }
            self.slots[i].tail = n;
        } else {
            self.insert_before_tail(i, key, event);
        }
    }

    /// An event of slot `i` due before its list's last node (and not before the slot's
    /// first event): after the nodes with a key at or before its own, found by a walk that
    /// stops at the tail at the latest.
    #[inline(never)]
    fn insert_before_tail(&mut self, i: usize, key: u64, event: E) {
        let mut prev = NIL;
        let mut cur = self.slots[i].rest;
        while self.nodes[cur as usize].key <= key {
            prev = cur;
            cur = self.nodes[cur as usize].next;
        }
        let n = self.new_node(key, event, cur);
        if prev == NIL {
            self.slots[i].rest = n;
        } else {
            self.nodes[prev as usize].next = n;
        }
    }

    /// A node holding the event, taken from the unused list when there is one.
    #[inline(always)]
    fn new_node(&mut self, key: u64, event: E, next: u32) -> u32 {
        let node = Node { key, event, next };
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
            self.insert(f.key, f.event);
            self.far_min = self.far.peek().map_or(u64::MAX, |f| f.key);
        }
    }

    /// The index of the next event's slot, its key made `last`; None if nothing is pending.
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
        self.last = self.slots[i].key;
        // What the heap moves in is due after `last` (see admit_far): slot i's first
        // event stays the next.
        self.admit_far();
        Some(i)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let i = self.advance()?;
        Some(self.take_first(i))
    }

    /// The next event if it is due before `until` (then nothing may be scheduled before
    /// its time); None otherwise.
    #[inline]
    pub fn pop_before(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        let i = self.advance()?;
        // The first key of `until` (the compiler keeps it out of the caller's loop).
        let bound = until.0.min(LATEST + 1) << 1;
        (self.last < bound).then(|| self.take_first(i))
    }

    /// Removes the first event of slot `i` (the next event, with key `last`); the slot's
    /// next event, if any, takes its place.
    #[inline]
    fn take_first(&mut self, i: usize) -> (SimTime, E) {
        let s = self.slots[i];
        if s.rest == NIL {
            self.bits[i / 64] &= !(1 << (i % 64));
        } else {
            self.move_up(i, s.rest);
        }
        self.len -= 1;
        (time_of(s.key), s.event)
    }

    /// Node `n`, the first of slot `i`'s list, takes the slot's place in it.
    #[inline(never)]
    fn move_up(&mut self, i: usize, n: u32) {
        let node = self.nodes[n as usize];
        if node.next != NIL {
            // The node after is the slot's next but one: at thousands of flows a slot
            // holds a dozen events, their nodes scattered.
            crate::hint::prefetch(&self.nodes[node.next as usize]);
        }
        self.slots[i] = Slot {
            key: node.key,
            event: node.event,
            rest: node.next,
            tail: self.slots[i].tail,
        };
        self.nodes[n as usize].next = self.free;
        self.free = n;
    }

    /// The event that pops next unless an earlier one is scheduled first, when the slot
    /// just popped holds it (a crowded calendar: thousands of flows); None otherwise,
    /// without looking further. For prefetching what it will read: costs a bit test.
    #[inline(always)]
    pub fn next_in_slot(&self) -> Option<&E> {
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
        // place takes its place; equal keys queue behind; one before the list's last walks
        // to its place; at 10 and 30 ns the ends of transmission (3, 9, 10) follow the
        // other events of their nanosecond whenever they were pushed.
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
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|(_, e)| id_of(e)).collect();
        assert_eq!(order, vec![6, 2, 4, 9, 5, 8, 1, 10, 3, 7]);
        assert!(q.is_empty());
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
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|(_, e)| id_of(e)).collect();
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
        fn pops_in_key_then_insertion_order(ops in proptest::collection::vec((0u64..40, 0u32..4, proptest::bool::weighted(0.6), proptest::bool::ANY), 1..400)) {
            let mut q = EventQueue::default();
            // (key, id), in insertion order: the first of the smallest key pops first.
            let mut reference: Vec<(u64, u32)> = Vec::new();
            let mut last_key = 0;
            let pop_reference = |reference: &mut Vec<(u64, u32)>| {
                let k = (0..reference.len()).min_by_key(|&k| reference[k].0).unwrap();
                reference.remove(k)
            };
            for (i, (dt, scale, push, late)) in ops.into_iter().enumerate() {
                // Same slot, a few slots on, across the calendar, beyond its year; often 0.
                let dt = dt.saturating_sub(10) << [0, 10, 21, 26][scale as usize];
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
