//! Active queue management: the admission decision of one FIFO queue.
//!
//! An [`AqmQueue`] is a [`DropTailQueue`] (the physical limit) plus an [`Aqm`] policy that
//! may refuse a packet earlier. Algorithms return a verdict; the port counts it.

pub mod droptail;

pub use droptail::DropTailQueue;

use crate::packet::{Dscp, PktId};
use crate::sched::{QueueCtx, Verdict};
use crate::stats::DropCause;
use crate::time::Limit;

/// The early-drop policy of a queue.
#[derive(Debug, Clone)]
pub enum Aqm {
    /// No early drop: only the physical limit refuses packets.
    DropTail,
}

impl Aqm {
    /// Number of drop precedences the policy tells apart (rows per queue in the results).
    pub fn precedences(&self) -> usize {
        match self {
            Aqm::DropTail => 1,
        }
    }

    /// The drop precedence of a packet with codepoint `dscp` (0 = the only one, or the
    /// lowest drop probability).
    #[inline]
    pub fn precedence(&self, _dscp: Dscp) -> u8 {
        match self {
            Aqm::DropTail => 0,
        }
    }

    /// The policy's decision on an arriving packet, before the physical limit is checked.
    #[inline]
    fn early_verdict(&mut self) -> Verdict {
        match self {
            Aqm::DropTail => Verdict::Admit,
        }
    }
}

/// One FIFO queue with its physical limit and its AQM policy.
#[derive(Debug, Clone)]
pub struct AqmQueue {
    pub fifo: DropTailQueue,
    pub aqm: Aqm,
}

impl AqmQueue {
    pub fn drop_tail(limit: Limit) -> Self {
        AqmQueue {
            fifo: DropTailQueue::new(limit),
            aqm: Aqm::DropTail,
        }
    }

    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        let size = ctx.pkts[id].size;
        if let Verdict::Drop(cause) = self.aqm.early_verdict() {
            return Verdict::Drop(cause);
        }
        if !self.fifo.fits(size) {
            return Verdict::Drop(DropCause::Overflow);
        }
        self.fifo.push(id, size);
        Verdict::Admit
    }

    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        let pkts = &*ctx.pkts;
        self.fifo.pop(|id| pkts[id].size)
    }
}
