//! Queue disciplines: what an egress port holds between its classifier and its link.
//!
//! The contract (DESIGN.md, "Contracts"): `enqueue(pkt) -> Admit | Drop(cause)` for the
//! arriving packet, `dequeue() -> Option<pkt>` when the link is free, and the occupancy.
//! A discipline that drops packets already queued (at dequeue time, say) reports them in
//! `ctx.dropped`. Disciplines never count statistics; the port does, by cause.
//! Composite disciplines (several classified queues behind a scheduler) implement the same
//! contract, so a port does not know which one it holds.

pub mod dsd;
pub mod fifo;

pub use dsd::Dsd;
pub use fifo::Fifo;

use crate::engine::rng::Rng;
use crate::packet::{PacketArena, PktId};
use crate::stats::DropCause;
use crate::time::SimTime;

/// What a discipline needs from the world when it acts.
pub struct QueueCtx<'a> {
    pub now: SimTime,
    pub pkts: &'a mut PacketArena,
    pub rng: &'a mut Rng,
    /// Queued packets the discipline dropped while acting (not the arriving one).
    pub dropped: &'a mut Vec<(PktId, DropCause)>,
}

/// The verdict on an arriving packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Admit,
    Drop(DropCause),
}

#[derive(Debug, Clone)]
pub enum Qdisc {
    Fifo(Fifo),
    /// ABE's Duplicate Scheduling with Deadlines: queue 0 blue, queue 1 green.
    Dsd(Box<Dsd>),
}

impl Qdisc {
    /// Number of queues (rows of the per-queue statistics).
    pub fn queues(&self) -> usize {
        match self {
            Qdisc::Fifo(_) => 1,
            Qdisc::Dsd(_) => 2,
        }
    }

    /// Number of drop precedences per queue.
    pub fn precedences(&self) -> usize {
        match self {
            Qdisc::Fifo(_) => 1,
            Qdisc::Dsd(_) => 1,
        }
    }

    /// Sets `pkt.queue` and `pkt.precedence` for the packet about to be enqueued.
    #[inline]
    pub fn classify(&self, pkts: &mut PacketArena, id: PktId) {
        match self {
            Qdisc::Fifo(_) => {
                let p = &mut pkts[id];
                (p.queue, p.precedence) = (0, 0)
            }
            Qdisc::Dsd(q) => q.classify(pkts, id),
        }
    }

    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        match self {
            Qdisc::Fifo(q) => q.enqueue(id, ctx),
            Qdisc::Dsd(q) => q.enqueue(id, ctx),
        }
    }

    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        match self {
            Qdisc::Fifo(q) => q.dequeue(ctx),
            Qdisc::Dsd(q) => q.dequeue(ctx),
        }
    }

    pub fn len_packets(&self) -> usize {
        match self {
            Qdisc::Fifo(q) => q.queue.fifo.len_packets(),
            Qdisc::Dsd(q) => q.len_packets(),
        }
    }

    pub fn len_bytes(&self) -> u64 {
        match self {
            Qdisc::Fifo(q) => q.queue.fifo.len_bytes(),
            Qdisc::Dsd(q) => q.len_bytes(),
        }
    }
}
