//! Class-based queueing with a rate-limited priority class: "a CBQ scheduler that gives the
//! EF queue priority up to the configured rate".
//!
//! Source: RFC 2598 section 2.2, "Another possible implementation is a CBQ [CBQ] scheduler
//! that gives the EF queue priority up to the configured rate", and the closing remark of
//! appendix A.3.1: "Other possibilities include WFQ or CBQ with a fixed rate limit for the
//! EF queue but giving it priority over other queues. We expect the latter to have
//! performance nearly identical with PQ though future simulations are needed to verify
//! this." [CBQ] is S. Floyd and V. Jacobson, "Link-sharing and Resource Management Models
//! for Packet Networks", IEEE/ACM ToN 3(4), 1995.
//!
//! What dsim implements is the two-level special case the RFC describes, not Floyd and
//! Jacobson's hierarchical link sharing (no class tree, no idle-time estimator, no
//! delayed "overlimit" classes):
//! - every class, the priority class included, takes part in a link-sharing round robin,
//!   WRR (weights in packets, [`super::wrr`]) or DRR (quanta in bytes, [`super::drr`]);
//! - exactly one class, the priority class (EF), also has a priority allowance: a token
//!   bucket of rate r (bit/s) and depth b (bytes), full at time 0 ([`Bucket`]);
//! - dequeue: if the priority class holds a packet whose size fits in the allowance's
//!   tokens now, that packet is sent at once, ahead of every other class, and takes its
//!   tokens ("priority up to the configured rate"). Otherwise the round robin picks the
//!   packet, exactly as WRR / DRR alone would, the priority class included with its own
//!   weight or quantum;
//! - enqueue: each class's queue (its AQM, its limit) decides; nothing is policed.
//!
//! So, unlike the limiter of [`super::priority`], EF traffic beyond the rate is NOT
//! discarded: it is served in the priority class's round-robin share. Choices and why:
//! - the allowance is charged only for packets sent with priority; packets of the priority
//!   class sent by the round robin do not consume tokens. The priority service then is a
//!   (r, b) token-bucket-conforming stream, so over any interval of length t the other
//!   classes lose at most b + r t / 8 bytes to preemption (the damage bound of RFC 2598
//!   section 2.1, with the same numbers as the PQ limiter), and on what is left the round
//!   robin gives every class, EF included, its configured share. A CBQ class allowed to
//!   borrow behaves this way; charging round-robin service too would make EF wait for a
//!   refill after each overload and change its share of the remainder with its load.
//! - the conformance test is made at dequeue (the head packet, the tokens at that instant):
//!   priority is a service order, not an admission decision.
//! - with r at or above the EF arrival rate and b at least a few packets, every EF packet
//!   is sent with priority and the scheduler behaves as PQ for EF, which is A.3.1's
//!   expectation ("nearly identical with PQ"); with r = 0 it would be plain WRR / DRR
//!   (the scenario builder requires r > 0).
//!
//! The scheduler is work conserving: if any queue holds a packet, a packet is returned.
//!
//! Parameters: `scheduler` ("wrr" or "drr"); per class a DSCP list (or default), a queue
//! spec, `weight` (packets, WRR) or `quantum` (bytes, DRR); for the priority class
//! `priority_rate` (bit/s, > 0) and `priority_burst` (bytes, > 0).

use serde::{Deserialize, Serialize};

use super::classes::{ClassQueues, optional_bucket};
use super::drr::DrrState;
use super::wrr::WrrState;
use crate::bucket::Bucket;
use crate::discipline::{QueueCtx, Verdict};
use crate::packet::PktId;
use crate::params::{ConfigError, KeyPath, Params, render};
use crate::time::{Bytes, Rate};

/// The round robin under a CBQ priority class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum RoundRobinKind {
    /// Weighted round robin, `weight` packets per visit.
    Wrr,
    /// Deficit round robin, `quantum` bytes per round.
    Drr,
}

impl RoundRobinKind {
    pub fn name(self) -> &'static str {
        match self {
            RoundRobinKind::Wrr => "wrr",
            RoundRobinKind::Drr => "drr",
        }
    }
}

/// `type = "cbq"`: one class (with `priority_rate`, `priority_burst`) has priority up to
/// that rate; every class, that one included, shares the rest by `scheduler`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "RFC 2598")]
pub struct CbqSpec {
    /// The link-sharing round robin: "wrr" (classes take `weight`) or "drr" (`quantum`).
    #[param(section = "2.2")]
    pub scheduler: RoundRobinKind,
    /// The classes, in round-robin order.
    #[param(nonempty)]
    pub classes: Vec<CbqClass>,
}

crate::class_table! {
    /// One class of a `cbq` scheduler.
    #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    pub struct CbqClass {
        /// Packets per visit of the round robin (scheduler = "wrr").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "[1, inf)")]
        pub weight: Option<u32>,
        /// Bytes per round of the round robin (scheduler = "drr").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "[1B, inf)")]
        pub quantum: Option<Bytes>,
        /// The rate up to which this class is served ahead of the others (one class).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "(0, inf)", section = "2.2")]
        pub priority_rate: Option<Rate>,
        /// The depth of that allowance's token bucket.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[param(range = "(0, inf)", section = "2.2")]
        pub priority_burst: Option<Bytes>,
    }
}

impl CbqSpec {
    /// The scheduler this table declares, on a link of `rate`.
    pub fn qdisc(&self, rate: Rate, path: &KeyPath) -> Result<Cbq, ConfigError> {
        self.check(path)?;
        let cp = path.key("classes");
        let classes = ClassQueues::build(&self.classes, rate, &cp)?;
        let mut priority: Option<(usize, Bucket)> = None;
        for (i, c) in self.classes.iter().enumerate() {
            let p = cp.index(i);
            let pair = ("priority_rate", "priority_burst");
            if let Some(bucket) = optional_bucket(c.priority_rate, c.priority_burst, &p, pair)? {
                if let Some((j, _)) = priority {
                    return Err(ConfigError::new(
                        p.key("priority_rate"),
                        render(&c.priority_rate),
                        format!(
                            "classes[{j}] already has the priority allowance; a CBQ scheduler gives it to one class"
                        ),
                    ));
                }
                priority = Some((i, bucket));
            }
        }
        let Some((class, allowance)) = priority else {
            return Err(ConfigError::new(
                cp,
                None,
                "a CBQ scheduler needs one class with priority_rate and priority_burst (the class served first up to that rate, e.g. EF)",
            ));
        };
        let rr = match self.scheduler {
            RoundRobinKind::Wrr => RoundRobin::Wrr(WrrState::new(self.shares(&cp, "weight", |c| c.weight)?)),
            RoundRobinKind::Drr => {
                RoundRobin::Drr(DrrState::new(self.shares(&cp, "quantum", |c| c.quantum.map(|q| q.0))?))
            }
        };
        Ok(Cbq::new(classes, class, allowance, rr))
    }

    /// Every class's share of the round robin: its `key`, required, and the other
    /// scheduler's key refused.
    fn shares<T: Serialize>(
        &self,
        cp: &KeyPath,
        key: &str,
        share: impl Fn(&CbqClass) -> Option<T>,
    ) -> Result<Vec<T>, ConfigError> {
        let other = if key == "weight" { "quantum" } else { "weight" };
        self.classes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = cp.index(i);
                let foreign = if key == "weight" {
                    render(&c.quantum)
                } else {
                    render(&c.weight)
                };
                if let Some(v) = foreign {
                    return Err(ConfigError::new(
                        p.key(other),
                        Some(v),
                        format!(
                            "a CBQ class over {} takes a {key}, not a {other}",
                            self.scheduler.name()
                        ),
                    ));
                }
                share(c).ok_or_else(|| {
                    ConfigError::new(
                        p,
                        None,
                        format!("a CBQ class over {} needs a {key}", self.scheduler.name()),
                    )
                })
            })
            .collect()
    }
}

/// The link-sharing scheduler under the priority allowance.
#[derive(Debug, Clone)]
pub enum RoundRobin {
    Wrr(WrrState),
    Drr(DrrState),
}

impl RoundRobin {
    #[inline]
    fn on_admitted(&mut self, q: usize) {
        if let RoundRobin::Drr(d) = self {
            d.on_admitted(q);
        }
    }

    #[inline]
    fn dequeue(&mut self, classes: &mut ClassQueues, ctx: &mut QueueCtx) -> Option<PktId> {
        match self {
            RoundRobin::Wrr(w) => w.dequeue(classes, ctx),
            RoundRobin::Drr(d) => d.dequeue(classes, ctx),
        }
    }

    /// The link found nothing to send.
    #[inline]
    fn on_link_idle(&mut self) {
        if let RoundRobin::Wrr(w) = self {
            w.end_visit();
        }
    }

    /// A packet left queue `q` (by priority or by the round robin).
    #[inline]
    fn after_dequeue(&mut self, q: usize, classes: &ClassQueues) {
        if let RoundRobin::Drr(d) = self {
            d.after_dequeue(q, classes);
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cbq {
    pub classes: ClassQueues,
    /// Index of the priority class.
    pub priority_class: usize,
    allowance: Bucket,
    pub rr: RoundRobin,
}

impl Cbq {
    pub fn new(classes: ClassQueues, priority_class: usize, allowance: Bucket, rr: RoundRobin) -> Self {
        assert!(priority_class < classes.len(), "the priority class exists");
        Cbq {
            classes,
            priority_class,
            allowance,
            rr,
        }
    }

    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        let class = ClassQueues::class_of(ctx.pkts, id);
        let v = self.classes.enqueue(class, id, ctx);
        if v == Verdict::Admit {
            self.rr.on_admitted(class);
        }
        v
    }

    /// The link found nothing to send: the round robin's visit in progress ends.
    #[inline]
    pub fn on_link_idle(&mut self) {
        self.rr.on_link_idle();
    }

    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        let p = self.priority_class;
        if let Some(size) = self.classes.head_size(p, ctx.pkts) {
            // RFC 2598 section 2.2: priority "up to the configured rate".
            if self.allowance.conform(size, ctx.now) {
                let got = self.classes.dequeue(p, ctx);
                self.rr.after_dequeue(p, &self.classes);
                if got.is_some() {
                    return got;
                }
            }
        }
        // Beyond the allowance: the round robin, the priority class taking its share.
        self.rr.dequeue(&mut self.classes, ctx)
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
    const BE: Dscp = Dscp::BE;

    fn cbq(rate: u64, burst: u64, rr: RoundRobin) -> Qdisc {
        let classes = one_dscp_per_class(&[EF, BE], Limit::Packets(10_000));
        let tb = Bucket::full(Rate(rate), Bytes(burst));
        Qdisc::Cbq(Cbq::new(classes, 0, tb, rr))
    }

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    #[test]
    fn priority_within_the_allowance_then_the_round_robin_share() {
        // Allowance 80 kbit/s = 10 B/ms, depth 1000 B; WRR weights EF 1, BE 1.
        // At 0: 4 EF packets of 500 B and 4 BE packets of 500 B queued.
        //   t=0:  EF head 500 <= 1000 tokens -> EF (priority), 500 left
        //   t=0:  EF 500 <= 500 -> EF (priority), 0 left
        //   t=0:  EF 500 > 0 -> round robin: first visit is queue 0 (EF) -> EF (share)
        //   t=0:  tokens 0; round robin: EF's visit is over (weight 1) -> BE
        //   t=50: tokens 500 -> EF (priority); EF queue now empty
        //   t=50: tokens 0, EF empty -> round robin -> BE, BE, BE, then nothing.
        let mut q = cbq(80_000, 1000, RoundRobin::Wrr(WrrState::new(vec![1, 1])));
        let mut h = Harness::new();
        for k in 0..4 {
            h.offer(&mut q, ms(0), EF, 500, k);
            h.offer(&mut q, ms(0), BE, 500, 10 + k);
        }
        let mut got = Vec::new();
        for t in [0, 0, 0, 0, 50, 50, 50, 50, 50] {
            got.push(h.take(&mut q, ms(t)).map(|x| x.1));
        }
        let want = [0, 1, 2, 10, 3, 11, 12, 13].map(Some).to_vec();
        assert_eq!(got[..8], want[..]);
        assert_eq!(got[8], None);
    }

    #[test]
    fn overloaded_priority_class_gets_rate_plus_its_share_of_the_rest() {
        // Both classes backlogged with 1000 B packets; the link (1 Mbit/s, 8 ms per packet)
        // asks at t = 8k ms, k = 0 ... 124. Allowance 200 kbit/s = 25 B/ms, depth 1000 B;
        // DRR quanta 1000 B each. Hand count: the bucket holds 1000 B at k = 0 and again
        // every 40 ms (k = 5, 10, ...), so 25 packets go by priority; between them the
        // DRR alternates EF, BE, EF, BE (priority service does not touch DRR's state).
        // EF: 25 + 50 = 75 packets, BE: 50. Pure DRR would give 62 or 63 each: the
        // allowance added its 25 packets to EF, and BE still got half of the rest.
        let mut q = cbq(200_000, 1000, RoundRobin::Drr(DrrState::new(vec![1000, 1000])));
        let mut h = Harness::new();
        for k in 0..200 {
            h.offer(&mut q, ms(0), EF, 1000, k);
            h.offer(&mut q, ms(0), BE, 1000, 1000 + k);
        }
        let mut counts = [0u32; 2];
        for k in 0..125u64 {
            let (c, _, _) = h.take(&mut q, ms(8 * k)).unwrap();
            counts[c as usize] += 1;
        }
        assert_eq!(counts, [75, 50]);
    }

    #[test]
    fn a_queue_emptied_by_priority_rejoins_the_round_robin_at_the_tail() {
        // DRR quanta 1000, 1000; allowance depth 600 B at 1 bit/s (one priority packet).
        // EF a (600 B) and BE 11, 12 (600 B) are queued; a goes by priority and empties EF,
        // which must leave DRR's list (S&V: an empty queue is removed, deficit 0). EF b
        // then arrives and joins the tail, behind BE: BE 11 (DC 400 left), 12 does not fit
        // -> tail; EF b (DC 1000); BE 12. Had EF stayed at the head of the list, b would
        // have jumped ahead of 11.
        let mut q = cbq(1, 600, RoundRobin::Drr(DrrState::new(vec![1000, 1000])));
        let mut h = Harness::new();
        h.offer(&mut q, ms(0), EF, 600, 1);
        for tag in [11, 12] {
            h.offer(&mut q, ms(0), BE, 600, tag);
        }
        assert_eq!(h.take(&mut q, ms(0)).map(|x| x.1), Some(1));
        h.offer(&mut q, ms(0), EF, 600, 2);
        let order: Vec<u64> = std::iter::from_fn(|| h.take(&mut q, ms(0))).map(|x| x.1).collect();
        assert_eq!(order, vec![11, 2, 12]);
    }
}
