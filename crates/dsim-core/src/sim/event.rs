//! The events of the simulation: what the event list ([`crate::engine::EventQueue`]) holds.

use crate::engine::Scheduled;
use crate::packet::{FlowId, Hop, PktId, PortId};
use crate::transport::tcp::TcpTimer;

/// Something due to happen at an instant. Kept small (16 bytes) and `Copy`: the event list
/// moves these around millions of times per second.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The port finished serializing the packet it was transmitting.
    TxDone(PortId),
    /// The packet, the oldest in flight on the port's wire, reaches the far node, where it
    /// takes the hop. Naming the packet and its next port as well as this one lets the
    /// handler load all three at once: read one from the other, each would wait for the
    /// line before it, on every hop.
    Arrival(PortId, PktId, Hop),
    /// A flow's application acts (a CBR source emits its next packet).
    App(FlowId),
    /// A conditioner instance (a shaper) may release the packet at the head of its buffer.
    Conditioner(u32),
    /// The feedback timer of a TFRC flow's receiver (RFC 5348 section 6.2).
    Feedback(FlowId),
    /// A TCP timer of the flow may be due. Timers are cancelled lazily: the connection
    /// keeps each timer's deadline, and an event that finds the deadline moved is ignored
    /// or re-armed, so restarting the retransmission timer on every ACK pushes nothing.
    Tcp(FlowId, TcpTimer),
}

impl Scheduled for Event {
    const FILLER: Self = Event::App(0);

    /// The end of a transmission comes after every other event of its instant: the tie
    /// rule "arrivals first" (docs/ties.md).
    #[inline(always)]
    fn is_late(&self) -> bool {
        matches!(self, Event::TxDone(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_stay_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Event>(), 16);
    }
}
