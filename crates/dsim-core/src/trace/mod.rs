//! Traces: packet captures in pcap format, written by runs and read by replay.

pub mod pcap;
pub mod pcap_trace;

pub use pcap::{Capture, PcapWriter};
pub use pcap_trace::PcapTrace;
