//! The future event list.
//!
//! Events are ordered by (time, insertion sequence): two events due at the same nanosecond
//! pop in the order they were scheduled. That tie rule is what makes a run deterministic
//! whatever the platform, and it is the order a reader expects from the code (SimPy and
//! nexosim use the same rule).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Event;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// (time << 64) | sequence: one integer compare orders time first, then insertion.
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// Reversed, because `BinaryHeap` pops the greatest element.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

/// A min-heap of events keyed by (time, insertion sequence).
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            next_seq: 0,
        }
    }

    pub fn push(&mut self, at: SimTime, event: Event) {
        let key = ((at.0 as u128) << 64) | self.next_seq as u128;
        self.next_seq += 1;
        self.heap.push(Entry { key, event });
    }

    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.heap.pop().map(|e| (SimTime((e.key >> 64) as u64), e.event))
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime((e.key >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
