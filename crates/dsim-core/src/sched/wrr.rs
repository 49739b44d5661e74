//! Weighted round robin (WRR), weights in packets, over any number of queues.
//!
//! Source: RFC 2598 section 2.2, "a single queue in a group of queues serviced by a
//! weighted round robin scheduler where the share of the output bandwidth assigned to the
//! EF queue is equal to the configured rate", and appendix A.3.1, which uses WRR as the
//! worst case for jitter (A.2: the ESnet prototype used the WRR of Cisco 75xx routers).
//!
//! A round, precisely:
//! - the queues are visited in cyclic order 0, 1, ..., n-1, 0, ... (the order of the
//!   scenario's class list); a visit to queue i serves at most w_i packets (w_i >= 1), one
//!   per call of `dequeue`, back to back;
//! - a visit ends when w_i packets have been served, or when the queue is found empty at a
//!   `dequeue` call (it may have emptied during the visit); the scheduler then moves to the
//!   next queue in cyclic order that holds a packet and starts a new visit there. An empty
//!   queue is skipped: it is passed over without using any service or keeping any credit;
//! - when every queue is empty `dequeue` returns nothing and the visit in progress ends
//!   (the port tells the scheduler when its link finds nothing to send, the moment it
//!   would have asked: `Qdisc::on_link_free`); the next packet to arrive is served at once
//!   and the scan for the next visit starts after the queue of the ended visit.
//!
//! With every queue backlogged, each round serves exactly w_i packets of queue i, so queue
//! i gets w_i / sum(w) of the packets and, with packet sizes s_i, the bandwidth share
//! w_i s_i / sum_j (w_j s_j). The scheduler is work conserving: it returns a packet whenever
//! one is queued.
//!
//! Parameters: per class a DSCP list (or default), a queue spec and `weight` (packets per
//! visit, >= 1).

use serde::{Deserialize, Serialize};

use super::classes::ClassQueues;
use crate::discipline::{QueueCtx, Verdict};
use crate::packet::PktId;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::Rate;

/// `type = "wrr"`: weighted round robin over classified queues, weights in packets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2598")]
pub struct WrrSpec {
    /// The classes, visited in this order.
    #[param(nonempty)]
    pub classes: Vec<WrrClass>,
}

crate::class_table! {
    /// One class of a `wrr` scheduler.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    pub struct WrrClass {
        /// Packets served per visit.
        #[param(range = "[1, inf)", section = "2.2")]
        pub weight: u32,
    }
}

impl WrrSpec {
    /// The scheduler this table declares, on a link of `rate`.
    pub fn qdisc(&self, rate: Rate, path: &KeyPath) -> Result<Wrr, ConfigError> {
        self.check(path)?;
        let classes = ClassQueues::build(&self.classes, rate, &path.key("classes"))?;
        Ok(Wrr::new(classes, self.classes.iter().map(|c| c.weight).collect()))
    }
}

/// Round-robin position, shared with [`super::cbq`].
#[derive(Debug, Clone)]
pub struct WrrState {
    /// Packets per visit, per queue.
    weights: Vec<u32>,
    /// Queue of the current (or last) visit.
    current: usize,
    /// Packets served in the current visit; `>= weights[current]` once the visit has ended.
    served: u32,
}

impl WrrState {
    /// Starts as if a visit of the last queue had just ended, so the first visit is queue 0.
    pub fn new(weights: Vec<u32>) -> Self {
        assert!(!weights.is_empty() && weights.iter().all(|&w| w >= 1), "weights >= 1");
        let current = weights.len() - 1;
        WrrState {
            served: weights[current],
            current,
            weights,
        }
    }

    pub fn weights(&self) -> &[u32] {
        &self.weights
    }

    /// Ends the visit in progress: every queue is empty, at a `dequeue` call or when the
    /// link finds nothing to send ([`super::Qdisc::on_link_free`]).
    #[inline]
    pub fn end_visit(&mut self) {
        self.served = self.weights[self.current];
    }

    /// The queue the next packet must come from, or None when all are empty. Counts the
    /// packet as served in the visit.
    #[inline]
    pub fn select(&mut self, classes: &ClassQueues) -> Option<usize> {
        let n = self.weights.len();
        if self.served >= self.weights[self.current] || !classes.has_packets(self.current) {
            // The visit is over (weight used up, or queue found empty): next non-empty queue.
            let next = (1..=n)
                .map(|k| (self.current + k) % n)
                .find(|&q| classes.has_packets(q));
            match next {
                Some(q) => {
                    self.current = q;
                    self.served = 0;
                }
                None => {
                    self.end_visit();
                    return None;
                }
            }
        }
        self.served += 1;
        Some(self.current)
    }

    /// The next packet of the round robin, taken from its queue.
    #[inline]
    pub fn dequeue(&mut self, classes: &mut ClassQueues, ctx: &mut QueueCtx) -> Option<PktId> {
        // A selected queue always holds a packet; the loop only guards against an AQM that
        // would drop its whole backlog while dequeueing (none does today).
        while let Some(q) = self.select(classes) {
            if let Some(id) = classes.dequeue(q, ctx) {
                return Some(id);
            }
        }
        None
    }
}

#[derive(Debug, Clone)]
pub struct Wrr {
    pub classes: ClassQueues,
    pub rr: WrrState,
}

impl Wrr {
    pub fn new(classes: ClassQueues, weights: Vec<u32>) -> Self {
        assert_eq!(classes.len(), weights.len(), "one weight per class");
        Wrr {
            classes,
            rr: WrrState::new(weights),
        }
    }

    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        let class = ClassQueues::class_of(ctx.pkts, id);
        self.classes.enqueue(class, id, ctx)
    }

    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        self.rr.dequeue(&mut self.classes, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Dscp;
    use crate::sched::Qdisc;
    use crate::sched::classes::testing::{Harness, one_dscp_per_class};
    use crate::time::{Limit, SimTime};

    const D: [Dscp; 3] = [Dscp::EF, Dscp(10), Dscp::BE];

    fn wrr(weights: &[u32]) -> Qdisc {
        let classes = one_dscp_per_class(&D[..weights.len()], Limit::Packets(100_000));
        Qdisc::Wrr(Wrr::new(classes, weights.to_vec()))
    }

    fn classes_served(h: &mut Harness, q: &mut Qdisc, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| h.take(q, SimTime::ZERO).expect("backlogged").0)
            .collect()
    }

    #[test]
    fn one_round_serves_each_queue_its_weight_in_order() {
        // Weights 3, 1, 2, all backlogged: rounds are 0 0 0 1 2 2.
        let mut q = wrr(&[3, 1, 2]);
        let mut h = Harness::new();
        for k in 0..30 {
            h.offer(&mut q, SimTime::ZERO, D[k % 3], 100, k as u64);
        }
        let got = classes_served(&mut h, &mut q, 12);
        assert_eq!(got, vec![0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2]);
    }

    #[test]
    fn long_backlog_shares_equal_the_weights_exactly() {
        // 1000 rounds of weights 5, 3, 2 = 10 000 packets: exactly 5000, 3000, 2000.
        let w = [5u32, 3, 2];
        let mut q = wrr(&w);
        let mut h = Harness::new();
        for k in 0..18_000u64 {
            // 6000 packets per queue: every queue stays backlogged for the 1000 rounds.
            h.offer(&mut q, SimTime::ZERO, D[(k % 3) as usize], 1000, k);
        }
        let got = classes_served(&mut h, &mut q, 10_000);
        let counts: Vec<usize> = (0..3).map(|c| got.iter().filter(|&&x| x == c).count()).collect();
        assert_eq!(counts, vec![5000, 3000, 2000]);
    }

    #[test]
    fn empty_queues_are_skipped_and_a_visit_ends_when_its_queue_empties() {
        // Weights 3, 1, 2. Queue 0 holds 1 packet (a), queue 1 none, queue 2 holds 3 (b c d).
        // Round 1: visit 0 serves a, finds 0 empty -> visit ends; 1 is skipped; visit 2
        // serves b, c (weight 2). Round 2: 0 and 1 empty -> visit 2 serves d.
        // Then an arrival e in queue 1 is served at once; then nothing.
        let mut q = wrr(&[3, 1, 2]);
        let mut h = Harness::new();
        let t = SimTime::ZERO;
        h.offer(&mut q, t, D[0], 100, 0xa);
        for tag in [0xb, 0xc, 0xd] {
            h.offer(&mut q, t, D[2], 100, tag);
        }
        let order: Vec<u64> = std::iter::from_fn(|| h.take(&mut q, t)).map(|x| x.1).collect();
        assert_eq!(order, vec![0xa, 0xb, 0xc, 0xd]);
        h.offer(&mut q, t, D[1], 100, 0xe);
        assert_eq!(h.take(&mut q, t).map(|x| x.1), Some(0xe));
        assert_eq!(h.take(&mut q, t), None);
    }

    #[test]
    fn an_idle_link_ends_the_visit_in_progress() {
        // Weights 3, 1. Queue 0: a, served (visit 0 has 2 packets left); the link then finds
        // nothing to send. b arrives in queue 0 and x in queue 1: the ended visit does not
        // resume, the scan starts after queue 0: x, then b.
        let mut q = wrr(&[3, 1]);
        let mut h = Harness::new();
        let t = SimTime::ZERO;
        h.offer(&mut q, t, D[0], 100, 0xa);
        assert_eq!(h.take(&mut q, t).map(|x| x.1), Some(0xa));
        q.on_link_free();
        h.offer(&mut q, t, D[0], 100, 0xb);
        h.offer(&mut q, t, D[1], 100, 0x1);
        let order: Vec<u64> = std::iter::from_fn(|| h.take(&mut q, t)).map(|x| x.1).collect();
        assert_eq!(order, vec![0x1, 0xb]);
    }

    #[test]
    fn an_ended_visit_does_not_resume_when_its_queue_refills() {
        // Weights 2, 2. Queue 0: a; queue 1: x, y, z. Service: a (visit 0 ends when 0 is
        // found empty), x, y (visit 1 done). Now b arrives in queue 0: visit 0 serves b,
        // then queue 0 is empty again -> visit 1 serves z.
        let mut q = wrr(&[2, 2]);
        let mut h = Harness::new();
        let t = SimTime::ZERO;
        h.offer(&mut q, t, D[0], 100, 0xa);
        for tag in [0x1, 0x2, 0x3] {
            h.offer(&mut q, t, D[1], 100, tag);
        }
        let first: Vec<u64> = (0..3).map(|_| h.take(&mut q, t).unwrap().1).collect();
        assert_eq!(first, vec![0xa, 0x1, 0x2]);
        h.offer(&mut q, t, D[0], 100, 0xb);
        let rest: Vec<u64> = std::iter::from_fn(|| h.take(&mut q, t)).map(|x| x.1).collect();
        assert_eq!(rest, vec![0xb, 0x3]);
    }
}
