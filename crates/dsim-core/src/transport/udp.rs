//! UDP: a datagram per application emission, no feedback.
//!
//! Sizes in dsim are IP datagram sizes; a UDP datagram carries an IPv4 header (20 B) and a
//! UDP header (8 B), so it is at least 28 bytes long.

use crate::packet::{Direction, Dscp, FlowId, NodeId, Packet};
use crate::time::SimTime;

pub const IPV4_HEADER: u32 = 20;
pub const UDP_HEADER: u32 = 8;
pub const MIN_DATAGRAM: u32 = IPV4_HEADER + UDP_HEADER;

/// The endpoints and marking every datagram of a flow carries.
#[derive(Debug, Clone, Copy)]
pub struct UdpSender {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    pub dscp: Dscp,
    pub next_index: u64,
}

impl UdpSender {
    #[inline]
    pub fn datagram(&mut self, size: u32, now: SimTime) -> Packet {
        let index = self.next_index;
        self.next_index += 1;
        Packet {
            flow: self.flow,
            src: self.src,
            dst: self.dst,
            size,
            dscp: self.dscp,
            direction: Direction::Forward,
            index,
            sent_at: now,
            enqueued_at: now,
            queue: 0,
            precedence: 0,
            ..Default::default()
        }
    }
}
