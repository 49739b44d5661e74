//! Classified queues: the DSCP -> queue classifier and the queues of a multi-queue scheduler.
//!
//! Every scheduler of this folder that holds several queues (priority, wrr, drr, cbq) holds
//! one [`ClassQueues`]: a table from each of the 64 codepoints to a class, and per class one
//! single queue with its own AQM policy ([`AqmQueue`]). Classification is two-stage, as in
//! RFC 2475 section 2.3.3 (classifier, then the queue's own treatment):
//! - the scheduler's class list maps DSCP -> queue (`pkt.queue`, index in the class list);
//! - that queue's AQM maps DSCP -> drop precedence (`pkt.precedence`; 0 for drop-tail).
//!
//! The port counts statistics per (queue, precedence) from these two fields, so the rows of
//! the `queues` table are the classes, in the order the scenario lists them.

use crate::aqm::AqmQueue;
use crate::bucket::Bucket;
use crate::packet::{Dscp, Packet, PacketArena, PktId};
use crate::params::{ConfigError, KeyPath, render};
use crate::time::{Bytes, Rate};

use super::QueueSpec;
use crate::discipline::{QueueCtx, Verdict};

/// Declares a scheduler's class table: the keys every class has (`dscp`, `default`,
/// `queue`), written here once, then the scheduler's own keys; and its [`ClassKeys`].
#[macro_export]
macro_rules! class_table {
    ($(#[$attr:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $(#[$attr])*
        pub struct $name {
            /// Codepoints classified into this class.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub dscp: Vec<$crate::packet::Dscp>,
            /// This class also takes every codepoint no class lists (one class at most).
            #[serde(default, skip_serializing_if = "std::ops::Not::not")]
            pub default: bool,
            /// The class's single queue: drop-tail or an AQM.
            #[serde(default)]
            pub queue: $crate::sched::QueueSpec,
            $($fields)*
        }
        impl $crate::sched::classes::ClassKeys for $name {
            fn dscp(&self) -> &[$crate::packet::Dscp] {
                &self.dscp
            }
            fn is_default(&self) -> bool {
                self.default
            }
            fn queue(&self) -> &$crate::sched::QueueSpec {
                &self.queue
            }
        }
    };
}

/// What the classifier reads of a class table.
pub trait ClassKeys {
    fn dscp(&self) -> &[Dscp];
    fn is_default(&self) -> bool;
    fn queue(&self) -> &QueueSpec;
}

/// A token bucket from an optional (rate, burst) pair of a class: both or neither.
pub fn optional_bucket(
    rate: Option<Rate>,
    burst: Option<Bytes>,
    path: &KeyPath,
    (rate_key, burst_key): (&str, &str),
) -> Result<Option<Bucket>, ConfigError> {
    match (rate, burst) {
        (None, None) => Ok(None),
        (Some(r), None) => Err(ConfigError::new(
            path.key(rate_key),
            render(&r),
            format!("{rate_key} needs {burst_key} (the token bucket depth, e.g. \"3000B\")"),
        )),
        (None, Some(b)) => Err(ConfigError::new(
            path.key(burst_key),
            render(&b),
            format!("{burst_key} needs {rate_key} (the token bucket rate, e.g. \"450kbps\")"),
        )),
        (Some(r), Some(b)) => Ok(Some(Bucket::full(r, b))),
    }
}

/// Number of codepoints: the six-bit DS field (RFC 2474 section 3).
pub const DSCP_COUNT: usize = 64;

#[derive(Debug, Clone)]
pub struct ClassQueues {
    /// Class index of every codepoint.
    map: [u8; DSCP_COUNT],
    queues: Vec<AqmQueue>,
    /// The largest number of precedences of any class's AQM.
    precedences: usize,
}

impl ClassQueues {
    /// The classes' queues with their index, in class order.
    pub fn aqm_queues(&self) -> Vec<(u8, &AqmQueue)> {
        self.queues.iter().enumerate().map(|(i, q)| (i as u8, q)).collect()
    }

    /// The classifier and the queues of `classes` (at `path`, the `classes` key) on a link
    /// of `rate`, checking that the classes partition the 64 codepoints: each codepoint in
    /// one class at most, and one default class unless every codepoint is listed.
    pub fn build<C: ClassKeys>(classes: &[C], rate: Rate, path: &KeyPath) -> Result<Self, ConfigError> {
        let refuse = |p: KeyPath, v: Option<String>, rule: String| Err(ConfigError::new(p, v, rule));
        let mut owner: [Option<usize>; DSCP_COUNT] = [None; DSCP_COUNT];
        let mut default: Option<usize> = None;
        let mut queues = Vec::with_capacity(classes.len());
        for (i, c) in classes.iter().enumerate() {
            let p = path.index(i);
            if c.dscp().is_empty() && !c.is_default() {
                return refuse(
                    p,
                    None,
                    "a class must list its codepoints (dscp = [\"EF\", ...]) or be the default class (default = true)"
                        .into(),
                );
            }
            for (k, d) in c.dscp().iter().enumerate() {
                let here = p.key("dscp").index(k);
                match owner[d.0 as usize] {
                    Some(j) if j == i => return refuse(here, render(d), "listed twice in this class".into()),
                    Some(j) => {
                        return refuse(
                            here,
                            render(d),
                            format!("{d} is already in classes[{j}]; a codepoint belongs to one class"),
                        );
                    }
                    None => owner[d.0 as usize] = Some(i),
                }
            }
            if c.is_default() {
                if let Some(j) = default {
                    return refuse(
                        p.key("default"),
                        Some("true".into()),
                        format!("classes[{j}] is already the default class; there can be only one"),
                    );
                }
                default = Some(i);
            }
            queues.push(c.queue().single_queue(rate, &p.key("queue"))?);
        }
        let mut map = [0u8; DSCP_COUNT];
        let mut unlisted = Vec::new();
        for (d, o) in owner.iter().enumerate() {
            match (*o, default) {
                (Some(i), _) | (None, Some(i)) => map[d] = i as u8,
                (None, None) => unlisted.push(Dscp(d as u8).to_string()),
            }
        }
        if !unlisted.is_empty() {
            let shown = if unlisted.len() > 8 {
                format!("{}, ... ({} in all)", unlisted[..8].join(", "), unlisted.len())
            } else {
                unlisted.join(", ")
            };
            return refuse(
                path.clone(),
                None,
                format!(
                    "no class is the default and codepoints {shown} are in no class; set default = true on one class or list every codepoint"
                ),
            );
        }
        Ok(ClassQueues::new(map, queues))
    }

    /// `map[d]` is the class of codepoint `d`; it must index `queues` ([`Self::build`]
    /// checks a class list before calling this).
    pub fn new(map: [u8; DSCP_COUNT], queues: Vec<AqmQueue>) -> Self {
        assert!(
            !queues.is_empty() && queues.len() <= u8::MAX as usize + 1,
            "1 to 256 classes"
        );
        assert!(
            map.iter().all(|&c| (c as usize) < queues.len()),
            "every DSCP maps to a class"
        );
        let precedences = queues.iter().map(|q| q.aqm.precedences()).max().unwrap_or(1);
        ClassQueues {
            map,
            queues,
            precedences,
        }
    }

    /// Number of classes (queues).
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    pub fn precedences(&self) -> usize {
        self.precedences
    }

    /// Sets `pkt.queue` from the DSCP and `pkt.precedence` from that queue's AQM.
    #[inline]
    pub fn classify(&self, p: &mut Packet) {
        let class = self.map[p.dscp.0 as usize & (DSCP_COUNT - 1)];
        p.queue = class;
        p.precedence = self.queues[class as usize].precedence_of(p.dscp);
    }

    /// The class a packet was classified into (by [`Self::classify`]).
    #[inline]
    pub fn class_of(pkts: &PacketArena, id: PktId) -> usize {
        pkts[id].queue as usize
    }

    /// Offers the packet to its class's queue (its AQM and physical limit decide).
    #[inline]
    pub fn enqueue(&mut self, class: usize, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        self.queues[class].enqueue(id, ctx)
    }

    #[inline]
    pub fn dequeue(&mut self, class: usize, ctx: &mut QueueCtx) -> Option<PktId> {
        self.queues[class].dequeue(ctx)
    }

    #[inline]
    pub fn has_packets(&self, class: usize) -> bool {
        !self.queues[class].fifo.is_empty()
    }

    /// Size in bytes of the packet at the head of `class`, if any.
    #[inline]
    pub fn head_size(&self, class: usize, pkts: &PacketArena) -> Option<u32> {
        self.queues[class].fifo.head().map(|id| pkts[id].size)
    }

    pub fn queue(&self, class: usize) -> &AqmQueue {
        &self.queues[class]
    }

    pub fn len_packets(&self) -> usize {
        self.queues.iter().map(|q| q.fifo.len_packets()).sum()
    }

    pub fn len_bytes(&self) -> u64 {
        self.queues.iter().map(|q| q.fifo.len_bytes()).sum()
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A tiny harness driving a discipline directly, without a network.

    use super::*;
    use crate::engine::rng::{Rng, stream};
    use crate::packet::{Dscp, PacketArena};
    use crate::sched::Qdisc;
    use crate::stats::DropCause;
    use crate::time::{Limit, SimTime};

    pub struct Harness {
        pub pkts: PacketArena,
        pub rng: Rng,
        pub dropped: Vec<(PktId, DropCause)>,
    }

    impl Harness {
        pub fn new() -> Self {
            Harness {
                pkts: PacketArena::with_capacity(64),
                rng: stream(1, "test"),
                dropped: Vec::new(),
            }
        }

        /// Classifies and offers a packet of `size` bytes with codepoint `dscp` at `now`;
        /// `tag` goes into `pkt.index` so tests can name packets.
        pub fn offer(&mut self, q: &mut Qdisc, now: SimTime, dscp: Dscp, size: u32, tag: u64) -> (PktId, Verdict) {
            let id = self.pkts.alloc(Packet {
                dscp,
                size,
                index: tag,
                ..Default::default()
            });
            q.classify(&mut self.pkts, id);
            let mut ctx = QueueCtx {
                now,
                pkts: &mut self.pkts,
                rng: &mut self.rng,
                dropped: &mut self.dropped,
            };
            let v = q.enqueue(id, &mut ctx);
            if v != Verdict::Admit {
                self.pkts.free(id);
            }
            (id, v)
        }

        /// Asks for the next packet at `now`: (class, tag, size), freeing it.
        pub fn take(&mut self, q: &mut Qdisc, now: SimTime) -> Option<(u8, u64, u32)> {
            let mut ctx = QueueCtx {
                now,
                pkts: &mut self.pkts,
                rng: &mut self.rng,
                dropped: &mut self.dropped,
            };
            let id = q.dequeue(&mut ctx)?;
            let p = &self.pkts[id];
            let out = (p.queue, p.index, p.size);
            self.pkts.free(id);
            Some(out)
        }
    }

    /// Class i holds codepoint `dscps[i]` (class 0 is also the default for the others).
    pub fn one_dscp_per_class(dscps: &[Dscp], limit: Limit) -> ClassQueues {
        let mut map = [0u8; DSCP_COUNT];
        for (i, d) in dscps.iter().enumerate() {
            map[d.0 as usize] = i as u8;
        }
        ClassQueues::new(map, dscps.iter().map(|_| AqmQueue::drop_tail(limit)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Dscp;
    use crate::time::Limit;

    #[test]
    fn dscp_selects_the_class_and_the_aqm_the_precedence() {
        let mut map = [1u8; DSCP_COUNT];
        map[Dscp::EF.0 as usize] = 0;
        let c = ClassQueues::new(map, vec![AqmQueue::drop_tail(Limit::Packets(5)); 2]);
        let mut p = Packet {
            dscp: Dscp::EF,
            ..Default::default()
        };
        c.classify(&mut p);
        assert_eq!((p.queue, p.precedence), (0, 0));
        p.dscp = Dscp::af(1, 1);
        c.classify(&mut p);
        assert_eq!((p.queue, p.precedence), (1, 0));
        assert_eq!(c.precedences(), 1);
    }
}
