//! Strict priority queueing (PQ) with an optional token-bucket limiter per class.
//!
//! Source: RFC 2598 section 2.2, "A simple priority queue will give the appropriate
//! behavior as long as there is no higher priority queue that could preempt the EF for more
//! than a packet time at the configured rate. (This could be accomplished by having a rate
//! policer such as a token bucket associated with each priority queue to bound how much the
//! queue can starve other traffic.)", and section 2.1, which makes the limiter mandatory
//! for a mechanism that allows unlimited preemption and requires its excess to be
//! DISCARDED. Appendix A.3.1 uses PQ as the best case for jitter.
//!
//! Model:
//! - classes 0, 1, ..., n-1 in the order the scenario lists them; class 0 has the highest
//!   priority. Each class is one queue with its own AQM ([`ClassQueues`]).
//! - dequeue: the head of the lowest-numbered non-empty class. Non-preemptive: a packet
//!   already on the wire finishes (the port does not ask until the link is free).
//! - enqueue: a class with a limiter (rate r bit/s, depth b bytes) first polices the
//!   arriving packet with its token bucket ([`Bucket`]); a non-conforming packet is
//!   discarded with cause `rate_limit` (RFC 2598 section 2.1, "Traffic that exceeds this
//!   limit MUST be discarded"). A conforming packet takes its tokens and is then offered to
//!   the class's queue, whose AQM and physical limit may still refuse it (the limiter
//!   sits in front of the queue, as a policer does; its tokens are not refunded).
//!   Hence the packets a limited class admits in any interval [s, t] total at most
//!   b + r (t - s) / 8 bytes: the damage to lower classes is bounded.
//!
//! Parameters per class: DSCP list (or default), queue spec, optional `limit_rate` (bit/s)
//! with `limit_burst` (bytes).

use serde::{Deserialize, Serialize};

use super::classes::{ClassQueues, optional_bucket};
use crate::bucket::Bucket;
use crate::discipline::{QueueCtx, Verdict};
use crate::packet::PktId;
use crate::params::{ConfigError, KeyPath, Params};
use crate::stats::DropCause;
use crate::time::{Bytes, Rate};

/// `type = "priority"`: strict priority over classified queues, the first class served
/// first; a class may carry a token-bucket limiter whose excess is discarded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2598")]
pub struct PrioritySpec {
    /// The classes, highest priority first.
    #[param(nonempty)]
    pub classes: Vec<PriorityClass>,
}

crate::class_table! {
    /// One class of a `priority` scheduler.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    pub struct PriorityClass {
        /// Rate of the class's token-bucket limiter: arrivals beyond it and the burst are
        /// discarded ("Traffic that exceeds this limit MUST be discarded").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "(0, inf)", section = "2.1")]
        pub limit_rate: Option<Rate>,
        /// The limiter's bucket depth (at least the largest packet, or none passes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "(0, inf)", section = "2.1")]
        pub limit_burst: Option<Bytes>,
    }
}

impl PrioritySpec {
    /// The scheduler this table declares, on a link of `rate`.
    pub fn qdisc(&self, rate: Rate, path: &KeyPath) -> Result<Priority, ConfigError> {
        self.check(path)?;
        let cp = path.key("classes");
        let classes = ClassQueues::build(&self.classes, rate, &cp)?;
        let limiters = self
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| optional_bucket(c.limit_rate, c.limit_burst, &cp.index(i), ("limit_rate", "limit_burst")))
            .collect::<Result<_, _>>()?;
        Ok(Priority::new(classes, limiters))
    }
}

#[derive(Debug, Clone)]
pub struct Priority {
    pub classes: ClassQueues,
    /// Limiter of each class (same index), if configured.
    limiters: Vec<Option<Bucket>>,
}

impl Priority {
    pub fn new(classes: ClassQueues, limiters: Vec<Option<Bucket>>) -> Self {
        assert_eq!(classes.len(), limiters.len(), "one limiter slot per class");
        Priority { classes, limiters }
    }

    /// The packet must have been classified (the port calls `classify` first).
    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        let class = ClassQueues::class_of(ctx.pkts, id);
        if let Some(limiter) = &mut self.limiters[class] {
            // RFC 2598 section 2.1: traffic beyond the limiter's rate and burst MUST be discarded.
            if !limiter.conform(ctx.pkts[id].size, ctx.now) {
                return Verdict::Drop(DropCause::RateLimit);
            }
        }
        self.classes.enqueue(class, id, ctx)
    }

    /// The head of the highest-priority non-empty class.
    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        for class in 0..self.classes.len() {
            if self.classes.has_packets(class) {
                if let Some(id) = self.classes.dequeue(class, ctx) {
                    return Some(id);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Dscp;
    use crate::sched::Qdisc;
    use crate::sched::classes::testing::{Harness, one_dscp_per_class};
    use crate::time::{Bytes, Limit, Rate, SimTime};

    const EF: Dscp = Dscp::EF;
    const AF: Dscp = Dscp(10);
    const BE: Dscp = Dscp::BE;

    fn pq(limit0: Option<Bucket>) -> Qdisc {
        let classes = one_dscp_per_class(&[EF, AF, BE], Limit::Packets(100));
        Qdisc::Priority(Priority::new(classes, vec![limit0, None, None]))
    }

    #[test]
    fn serves_strictly_by_priority_then_fifo() {
        // Backlog built before any service, tags in arrival order:
        //   BE 1, AF 2, BE 3, EF 4, AF 5, EF 6, BE 7
        // Expected service: EF 4, EF 6 (class 0, FIFO), AF 2, AF 5, BE 1, BE 3, BE 7.
        let mut q = pq(None);
        let mut h = Harness::new();
        let t = SimTime::ZERO;
        for (tag, d) in [(1, BE), (2, AF), (3, BE), (4, EF), (5, AF), (6, EF), (7, BE)] {
            assert_eq!(h.offer(&mut q, t, d, 100, tag).1, Verdict::Admit);
        }
        let order: Vec<u64> = std::iter::from_fn(|| h.take(&mut q, t)).map(|x| x.1).collect();
        assert_eq!(order, vec![4, 6, 2, 5, 1, 3, 7]);
    }

    #[test]
    fn a_late_high_priority_arrival_overtakes_waiting_traffic() {
        // BE 1, BE 2 queued; BE 1 served; EF 3 arrives; next served is EF 3, then BE 2.
        let mut q = pq(None);
        let mut h = Harness::new();
        let t = SimTime::ZERO;
        h.offer(&mut q, t, BE, 100, 1);
        h.offer(&mut q, t, BE, 100, 2);
        assert_eq!(h.take(&mut q, t).map(|x| x.1), Some(1));
        h.offer(&mut q, t, EF, 100, 3);
        assert_eq!(h.take(&mut q, t).map(|x| x.1), Some(3));
        assert_eq!(h.take(&mut q, t).map(|x| x.1), Some(2));
        assert_eq!(h.take(&mut q, t), None);
    }

    #[test]
    fn limiter_discards_exactly_the_packets_beyond_rate_and_burst() {
        // Limiter r = 80 kbit/s = 10 B/ms, b = 3000 B, full at 0. EF packets of 1500 B or
        // 160 B arrive at the times below (ms). Hand computation of the tokens (B) before
        // each arrival and the verdict:
        //   t=0    1500: 3000      -> admit, 1500 left
        //   t=0    1500: 1500      -> admit, 0
        //   t=0     160: 0         -> DROP
        //   t=100   160: 1000      -> admit, 840
        //   t=100  1500: 840       -> DROP
        //   t=166  1500: 840+660 = 1500 -> admit, 0
        //   t=170   160: 40        -> DROP
        //   t=186   160: 40+160 = 200 -> admit, 40
        //   t=1000 1500: 40+8140 capped at 3000 -> admit, 1500
        //   t=1000 1500: 1500      -> admit, 0
        //   t=1000 1500: 0         -> DROP
        // The limiter alone decides: the queue (100 packets) never overflows.
        let mut q = pq(Some(Bucket::full(Rate(80_000), Bytes(3000))));
        let mut h = Harness::new();
        let arrivals = [
            (0, 1500, true),
            (0, 1500, true),
            (0, 160, false),
            (100, 160, true),
            (100, 1500, false),
            (166, 1500, true),
            (170, 160, false),
            (186, 160, true),
            (1000, 1500, true),
            (1000, 1500, true),
            (1000, 1500, false),
        ];
        for (k, &(t_ms, size, admitted)) in arrivals.iter().enumerate() {
            let v = h.offer(&mut q, SimTime(t_ms * 1_000_000), EF, size, k as u64).1;
            let want = if admitted {
                Verdict::Admit
            } else {
                Verdict::Drop(DropCause::RateLimit)
            };
            assert_eq!(v, want, "arrival {k} at {t_ms} ms, {size} B");
        }
        // Unlimited classes are never policed: 200 BE packets at once fill the 100-packet
        // queue and only then overflow.
        for k in 0..200 {
            let want = if k < 100 {
                Verdict::Admit
            } else {
                Verdict::Drop(DropCause::Overflow)
            };
            assert_eq!(h.offer(&mut q, SimTime(0), BE, 1500, 100 + k).1, want, "BE {k}");
        }
    }
}
