//! The queue-discipline contract, below both the AQMs (`aqm`) and the schedulers (`sched`):
//! a discipline answers an arriving packet with a [`Verdict`] and hands the next packet to
//! the link, acting in a [`QueueCtx`]. Disciplines never count statistics: the port does,
//! by cause, from the verdicts and from the packets reported in `ctx.dropped`.

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
