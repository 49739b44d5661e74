//! Traces: packet captures in pcap format.

pub mod pcap;

pub use pcap::{Capture, PcapWriter};
