//! Traces: packet captures in pcap format, written by runs and read by replay.

pub mod pcap;
pub mod pcap_trace;

pub use pcap::{Capture, PcapWriter};
pub use pcap_trace::PcapTrace;

use crate::packet::PortId;

/// A resolved capture: its file stem and the ports it taps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturePoint {
    pub name: String,
    /// Packets these ports start transmitting.
    pub tx: Vec<PortId>,
    /// Packets these ports deliver to their peer node.
    pub rx: Vec<PortId>,
    /// Bytes of each packet written.
    pub snaplen: u32,
}
