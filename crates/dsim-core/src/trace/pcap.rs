//! A pcap writer: simulated packets as real IPv4/TCP/UDP datagrams that Wireshark and
//! tshark analyse.
//!
//! File format: the classic libpcap format with nanosecond timestamps (magic 0xa1b23c4d,
//! version 2.4) and link type LINKTYPE_RAW (101: each record is an IP datagram, no
//! link-layer header). Timestamps are simulated time since 1970-01-01 00:00:00 UTC.
//!
//! Each record is the whole datagram of the simulated size, payload bytes zero:
//! - IPv4 (RFC 791): version 4, IHL 5, TOS = DSCP << 2 | ECN (RFC 2474, RFC 3168), total
//!   length = the simulated size, identification = the packet's index in its flow and
//!   direction (mod 2^16), DF set, TTL 64, header checksum (RFC 1071). Node n has address
//!   10.a.b.c with a.b.c = n + 1 (so node 0 is 10.0.0.1).
//! - TCP (RFC 793): ports from the flow id (the flow's source end 49152 + id mod 8192, its
//!   destination end 57344 + id mod 8192: the dynamic range, where no dissector guesses
//!   an application protocol), sequence and acknowledgement numbers mod 2^32, window
//!   (at most 65535: no window scaling), flags, MSS and SACK-permitted options on SYNs,
//!   the SACK option (NOP, NOP, kind 5) on ACKs, checksum over the pseudo-header.
//! - UDP (RFC 768): the same ports, length, checksum over the pseudo-header.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::packet::{Direction, Packet, tcp_flags};
use crate::time::SimTime;

const MAGIC_NS: u32 = 0xa1b2_3c4d;
const LINKTYPE_RAW: u32 = 101;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

/// The IPv4 address of node `n`.
pub fn node_address(n: u32) -> [u8; 4] {
    let v = n + 1;
    [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// (source port, destination port) of a flow's packet in its direction.
pub fn ports(p: &Packet) -> (u16, u16) {
    let a = 49_152 + (p.flow % 8192) as u16;
    let b = 57_344 + (p.flow % 8192) as u16;
    match p.direction {
        Direction::Forward => (a, b),
        Direction::Reverse => (b, a),
    }
}

/// RFC 1071 Internet checksum: one's complement of the one's complement sum of 16-bit
/// words, starting from `initial` (a partial sum).
pub fn checksum(data: &[u8], initial: u32) -> u16 {
    let mut sum = initial;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [b] = chunks.remainder() {
        sum += (*b as u32) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The one's complement sum of the TCP/UDP pseudo-header.
fn pseudo_header_sum(src: [u8; 4], dst: [u8; 4], proto: u8, len: u16) -> u32 {
    let w = |b: [u8; 4]| u16::from_be_bytes([b[0], b[1]]) as u32 + u16::from_be_bytes([b[2], b[3]]) as u32;
    w(src) + w(dst) + proto as u32 + len as u32
}

/// Writes the datagram of `p` into `buf` (cleared first). TCP packets are encoded with
/// the options their simulated size accounts for.
pub fn encode(p: &Packet, buf: &mut Vec<u8>) {
    buf.clear();
    buf.resize(p.size as usize, 0);
    let tcp = p.tcp.flags != 0;
    let (src, dst) = (node_address(p.src), node_address(p.dst));
    // IPv4 header.
    buf[0] = 0x45;
    buf[1] = (p.dscp.0 << 2) | p.ecn as u8;
    buf[2..4].copy_from_slice(&(p.size as u16).to_be_bytes());
    buf[4..6].copy_from_slice(&(p.index as u16).to_be_bytes());
    buf[6..8].copy_from_slice(&0x4000u16.to_be_bytes());
    buf[8] = 64;
    buf[9] = if tcp { PROTO_TCP } else { PROTO_UDP };
    buf[12..16].copy_from_slice(&src);
    buf[16..20].copy_from_slice(&dst);
    let c = checksum(&buf[..20], 0);
    buf[10..12].copy_from_slice(&c.to_be_bytes());
    let (sport, dport) = ports(p);
    let seg_len = (p.size - 20) as u16;
    let l4 = &mut buf[20..];
    l4[0..2].copy_from_slice(&sport.to_be_bytes());
    l4[2..4].copy_from_slice(&dport.to_be_bytes());
    if tcp {
        let h = &p.tcp;
        let header_len = (p.size - h.len - 20) as usize;
        debug_assert!(header_len >= 20 && header_len % 4 == 0 && header_len <= 60);
        l4[4..8].copy_from_slice(&(h.seq as u32).to_be_bytes());
        l4[8..12].copy_from_slice(&(h.ack as u32).to_be_bytes());
        l4[12] = ((header_len / 4) as u8) << 4;
        l4[13] = h.flags;
        l4[14..16].copy_from_slice(&(h.window.min(65_535) as u16).to_be_bytes());
        // Options: the simulated size decides which are present.
        let mut o = 20;
        if h.has(tcp_flags::SYN) {
            l4[o..o + 2].copy_from_slice(&[2, 4]);
            l4[o + 2..o + 4].copy_from_slice(&h.mss.to_be_bytes());
            o += 4;
            if header_len >= o + 4 {
                l4[o..o + 4].copy_from_slice(&[1, 1, 4, 2]);
                o += 4;
            }
        } else if h.sack_count > 0 {
            l4[o] = 1;
            l4[o + 1] = 1;
            l4[o + 2] = 5;
            l4[o + 3] = 2 + 8 * h.sack_count;
            o += 4;
            for i in 0..h.sack_count as usize {
                let (l, r) = h.sack_block(i);
                l4[o..o + 4].copy_from_slice(&(l as u32).to_be_bytes());
                l4[o + 4..o + 8].copy_from_slice(&(r as u32).to_be_bytes());
                o += 8;
            }
        }
        debug_assert!(o <= header_len);
        let sum = pseudo_header_sum(src, dst, PROTO_TCP, seg_len);
        let c = checksum(l4, sum);
        l4[16..18].copy_from_slice(&c.to_be_bytes());
    } else {
        l4[4..6].copy_from_slice(&seg_len.to_be_bytes());
        let sum = pseudo_header_sum(src, dst, PROTO_UDP, seg_len);
        // RFC 768: a computed checksum of zero is sent as all ones.
        let c = match checksum(l4, sum) {
            0 => 0xffff,
            c => c,
        };
        l4[6..8].copy_from_slice(&c.to_be_bytes());
    }
}

/// A pcap file being written.
pub struct PcapWriter {
    out: BufWriter<File>,
    buf: Vec<u8>,
    snaplen: u32,
    /// The first write error; later writes are skipped.
    pub error: Option<io::Error>,
    pub path: PathBuf,
    pub packets: u64,
}

impl PcapWriter {
    /// Creates `path`; each record holds at most `snaplen` bytes of its packet.
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        let mut header = [0u8; 24];
        header[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes());
        header[6..8].copy_from_slice(&4u16.to_le_bytes());
        header[16..20].copy_from_slice(&snaplen.to_le_bytes());
        header[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&header)?;
        Ok(PcapWriter {
            out,
            buf: Vec::with_capacity(2048),
            snaplen,
            error: None,
            path: path.to_path_buf(),
            packets: 0,
        })
    }

    pub fn write(&mut self, t: SimTime, p: &Packet) {
        if self.error.is_some() {
            return;
        }
        encode(p, &mut self.buf);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((t.0 / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((t.0 % 1_000_000_000) as u32).to_le_bytes());
        let caught = self.buf.len().min(self.snaplen as usize);
        rec[8..12].copy_from_slice(&(caught as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(self.buf.len() as u32).to_le_bytes());
        let r = self
            .out
            .write_all(&rec)
            .and_then(|_| self.out.write_all(&self.buf[..caught]));
        match r {
            Ok(()) => self.packets += 1,
            Err(e) => self.error = Some(e),
        }
    }

    pub fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

/// A capture point of a run: its name and, once opened, its file.
pub struct Capture {
    pub name: String,
    pub writer: Option<PcapWriter>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Dscp, Ecn, TcpHeader};

    #[test]
    fn ipv4_header_checksum_of_a_known_header() {
        // A textbook header: 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
        let h: [u8; 20] = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8,
            0x00, 0xc7,
        ];
        assert_eq!(checksum(&h, 0), 0xb861);
        let mut with = h;
        with[10] = 0xb8;
        with[11] = 0x61;
        assert_eq!(checksum(&with, 0), 0, "a correct header sums to zero");
    }

    #[test]
    fn encoded_sack_ack_verifies() {
        let mut tcp = TcpHeader {
            seq: 1,
            ack: (1u64 << 32) + 5000,
            window: 65_535,
            flags: tcp_flags::ACK | tcp_flags::ECE,
            sack_count: 2,
            ..Default::default()
        };
        tcp.sack[0] = (500, 1000);
        tcp.sack[1] = (1500, 2000);
        let p = Packet {
            flow: 3,
            src: 1,
            dst: 0,
            size: 40 + 20,
            dscp: Dscp::af(1, 1),
            direction: Direction::Reverse,
            index: 70_000,
            ecn: Ecn::NotEct,
            tcp,
            ..Default::default()
        };
        let mut buf = Vec::new();
        encode(&p, &mut buf);
        assert_eq!(buf.len(), 60);
        assert_eq!(buf[1], 10 << 2, "AF11 in the TOS byte");
        assert_eq!(u16::from_be_bytes([buf[4], buf[5]]), (70_000 % 65_536) as u16);
        assert_eq!(checksum(&buf[..20], 0), 0);
        let l4 = &buf[20..];
        assert_eq!(l4[12] >> 4, 10, "data offset: 40 bytes of header");
        assert_eq!(u32::from_be_bytes([l4[8], l4[9], l4[10], l4[11]]), 5000, "ack mod 2^32");
        assert_eq!(&l4[20..24], &[1, 1, 5, 18]);
        assert_eq!(u32::from_be_bytes([l4[24], l4[25], l4[26], l4[27]]), 5500);
        let sum = pseudo_header_sum(node_address(1), node_address(0), PROTO_TCP, 40);
        assert_eq!(checksum(l4, sum), 0, "TCP checksum verifies");
        assert_eq!(ports(&p), (57_347, 49_155));
    }

    #[test]
    fn encoded_udp_verifies() {
        let p = Packet {
            flow: 0,
            src: 0,
            dst: 2,
            size: 201,
            dscp: Dscp::EF,
            ..Default::default()
        };
        let mut buf = Vec::new();
        encode(&p, &mut buf);
        assert_eq!(buf[9], PROTO_UDP);
        assert_eq!(buf[1], 46 << 2);
        let sum = pseudo_header_sum(node_address(0), node_address(2), PROTO_UDP, 181);
        assert_eq!(checksum(&buf[20..], sum), 0);
    }
}
