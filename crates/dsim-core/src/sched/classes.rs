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
use crate::packet::{Packet, PacketArena, PktId};

use super::{QueueCtx, Verdict};

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
    /// `map[d]` is the class of codepoint `d`; it must index `queues`. The scenario builder
    /// checks the class list (every DSCP in exactly one class) before calling this.
    /// The classes' queues with their index, in class order.
    pub fn aqm_queues(&self) -> Vec<(u8, &AqmQueue)> {
        self.queues.iter().enumerate().map(|(i, q)| (i as u8, q)).collect()
    }

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
