//! First in, first out: a single queue with its AQM policy, served in arrival order.

use crate::aqm::AqmQueue;
use crate::packet::PktId;

use crate::discipline::{QueueCtx, Verdict};

#[derive(Debug, Clone)]
pub struct Fifo {
    pub queue: AqmQueue,
}

impl Fifo {
    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        self.queue.enqueue(id, ctx)
    }

    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        self.queue.dequeue(ctx)
    }
}
