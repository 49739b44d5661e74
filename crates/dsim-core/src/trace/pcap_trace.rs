//! A pcap capture as a trace for [`crate::replay`], and the capture written back with what
//! the mechanism did: DSCP rewritten, dropped packets removed, each packet stamped with the
//! instant it left the mechanism.
//!
//! Reads the classic libpcap format (microsecond or nanosecond timestamps, either byte
//! order) with link type Ethernet (1, 802.1Q tags skipped), raw IP (101, 228) or Linux
//! cooked capture (113). Every record must carry an IPv4 datagram (RFC 791); its size is
//! the IPv4 total length, its DSCP the six high bits of the TOS byte (RFC 2474), its ECN
//! field the two low bits (RFC 3168 section 5), its flow the 5-tuple. pcapng files are
//! refused (convert them with `editcap -F pcap`).

use std::fs;
use std::io;
use std::path::Path;

use super::pcap::checksum;
use crate::packet::{Dscp, Ecn};
use crate::time::SimTime;

const LINK_ETHERNET: u32 = 1;
const LINK_RAW: u32 = 101;
const LINK_IPV4: u32 = 228;
const LINK_SLL: u32 = 113;

/// A capture read into memory.
pub struct PcapTrace {
    /// The global header, written back unchanged.
    header: [u8; 24],
    big_endian: bool,
    nanos: bool,
    pub records: Vec<Record>,
}

/// One captured packet.
pub struct Record {
    /// Capture timestamp in ns since the epoch.
    pub stamp_ns: u64,
    pub orig_len: u32,
    pub data: Vec<u8>,
    /// Offset of the IPv4 header in `data`.
    ip: usize,
    /// IPv4 total length, DSCP, ECN field and the 5-tuple label.
    pub size: u32,
    pub dscp: Dscp,
    pub ecn: Ecn,
    pub flow: String,
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

impl PcapTrace {
    pub fn read(path: &Path) -> io::Result<PcapTrace> {
        let bytes = fs::read(path)?;
        if bytes.len() < 24 {
            return Err(bad(format!("{}: too short for a pcap file", path.display())));
        }
        let magic = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes"));
        let (big_endian, nanos) = match magic {
            0xa1b2_c3d4 => (false, false),
            0xa1b2_3c4d => (false, true),
            0xd4c3_b2a1 => (true, false),
            0x4d3c_b2a1 => (true, true),
            0x0a0d_0d0a => {
                return Err(bad(format!(
                    "{}: pcapng is not supported; convert it with `editcap -F pcap`",
                    path.display()
                )));
            }
            _ => {
                return Err(bad(format!(
                    "{}: not a pcap file (magic {magic:#010x})",
                    path.display()
                )));
            }
        };
        let u32_at = |b: &[u8], i: usize| {
            let w: [u8; 4] = b[i..i + 4].try_into().expect("4 bytes");
            if big_endian {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        let link = u32_at(&bytes, 20) & 0x0fff_ffff;
        if ![LINK_ETHERNET, LINK_RAW, LINK_IPV4, LINK_SLL].contains(&link) {
            return Err(bad(format!(
                "{}: link type {link} is not supported (Ethernet, raw IP or Linux cooked)",
                path.display()
            )));
        }
        let mut records = Vec::new();
        let mut at = 24;
        while at + 16 <= bytes.len() {
            let i = records.len();
            let (sec, frac) = (u32_at(&bytes, at) as u64, u32_at(&bytes, at + 4) as u64);
            let (incl, orig) = (u32_at(&bytes, at + 8) as usize, u32_at(&bytes, at + 12));
            let data = bytes
                .get(at + 16..at + 16 + incl)
                .ok_or_else(|| bad(format!("record {i} is cut short (file truncated?)")))?
                .to_vec();
            at += 16 + incl;
            let stamp_ns = sec * 1_000_000_000 + if nanos { frac } else { frac * 1000 };
            let ip =
                ip_offset(link, &data).ok_or_else(|| bad(format!("record {i} does not carry an IPv4 datagram")))?;
            let h = &data[ip..];
            if h.len() < 20 || h[0] >> 4 != 4 {
                return Err(bad(format!("record {i} does not carry an IPv4 datagram")));
            }
            let size = u16::from_be_bytes([h[2], h[3]]) as u32;
            let (dscp, ecn) = (Dscp(h[1] >> 2), Ecn::from_bits(h[1]));
            let flow = five_tuple(h);
            records.push(Record {
                stamp_ns,
                orig_len: orig,
                data,
                ip,
                size,
                dscp,
                ecn,
                flow,
            });
        }
        if at != bytes.len() {
            return Err(bad(format!("record {} is cut short (file truncated?)", records.len())));
        }
        let mut header = [0u8; 24];
        header.copy_from_slice(&bytes[..24]);
        Ok(PcapTrace {
            header,
            big_endian,
            nanos,
            records,
        })
    }

    /// Arrival time of record `i` relative to the first record.
    pub fn arrival(&self, i: usize) -> SimTime {
        let t0 = self.records.first().map_or(0, |r| r.stamp_ns);
        SimTime(self.records[i].stamp_ns.saturating_sub(t0))
    }

    /// Writes the packets that `kept` lists, as (record, DSCP, ECN field, departure
    /// relative to the first record), in departure order: TOS rewritten, header checksum
    /// recomputed, stamped with the departure.
    pub fn write_rewritten(&self, path: &Path, kept: &[(usize, Dscp, Ecn, SimTime)]) -> io::Result<()> {
        let mut order: Vec<&(usize, Dscp, Ecn, SimTime)> = kept.iter().collect();
        order.sort_by_key(|(i, _, _, t)| (*t, *i));
        let t0 = self.records.first().map_or(0, |r| r.stamp_ns);
        let mut out = Vec::with_capacity(24 + self.records.iter().map(|r| 16 + r.data.len()).sum::<usize>());
        out.extend_from_slice(&self.header);
        let put = |out: &mut Vec<u8>, v: u32| {
            out.extend_from_slice(&if self.big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            })
        };
        for &&(i, dscp, ecn, depart) in &order {
            let r = &self.records[i];
            let mut data = r.data.clone();
            let ip = r.ip;
            data[ip + 1] = dscp.0 << 2 | ecn as u8;
            let ihl = (data[ip] & 0x0f) as usize * 4;
            if data.len() >= ip + ihl {
                data[ip + 10] = 0;
                data[ip + 11] = 0;
                let c = checksum(&data[ip..ip + ihl], 0);
                data[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
            }
            let t = t0 + depart.0;
            put(&mut out, (t / 1_000_000_000) as u32);
            let frac = t % 1_000_000_000;
            put(&mut out, if self.nanos { frac as u32 } else { (frac / 1000) as u32 });
            put(&mut out, data.len() as u32);
            put(&mut out, r.orig_len);
            out.extend_from_slice(&data);
        }
        fs::write(path, out)
    }
}

/// Where the IPv4 header starts in a record of link type `link`.
fn ip_offset(link: u32, d: &[u8]) -> Option<usize> {
    match link {
        LINK_RAW | LINK_IPV4 => Some(0),
        LINK_ETHERNET => {
            let mut off = 12;
            loop {
                let ty = u16::from_be_bytes([*d.get(off)?, *d.get(off + 1)?]);
                match ty {
                    0x8100 | 0x88a8 => off += 4,
                    0x0800 => return Some(off + 2),
                    _ => return None,
                }
            }
        }
        LINK_SLL => (u16::from_be_bytes([*d.get(14)?, *d.get(15)?]) == 0x0800).then_some(16),
        _ => None,
    }
}

/// "src:port > dst:port proto" of an IPv4 header (ports for TCP and UDP when captured).
fn five_tuple(h: &[u8]) -> String {
    let addr = |b: &[u8]| format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]);
    let (proto, ihl) = (h[9], (h[0] & 0x0f) as usize * 4);
    let ports = (matches!(proto, 6 | 17) && h.len() >= ihl + 4).then(|| {
        (
            u16::from_be_bytes([h[ihl], h[ihl + 1]]),
            u16::from_be_bytes([h[ihl + 2], h[ihl + 3]]),
        )
    });
    let name = match proto {
        6 => "tcp".to_string(),
        17 => "udp".to_string(),
        p => format!("proto{p}"),
    };
    match ports {
        Some((s, d)) => format!("{}:{s} > {}:{d} {name}", addr(&h[12..16]), addr(&h[16..20])),
        None => format!("{} > {} {name}", addr(&h[12..16]), addr(&h[16..20])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;
    use crate::trace::PcapWriter;

    #[test]
    fn a_written_capture_reads_back_and_rewrites() {
        let dir = std::env::temp_dir().join(format!("dsim-pcap-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.pcap"), dir.join("b.pcap"));
        let mut w = PcapWriter::create(&a, 65_535).unwrap();
        for k in 0..3u64 {
            let p = Packet {
                flow: 1,
                src: 0,
                dst: 1,
                size: 100 + k as u32,
                dscp: Dscp::EF,
                ecn: [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1][k as usize],
                index: k,
                ..Default::default()
            };
            w.write(SimTime(5_000_000_000 + k * 1_000), &p);
        }
        w.finish().unwrap();
        let t = PcapTrace::read(&a).unwrap();
        assert_eq!(t.records.len(), 3);
        assert_eq!(t.records[1].size, 101);
        assert_eq!(t.records[2].dscp, Dscp::EF);
        let ecns: Vec<Ecn> = t.records.iter().map(|r| r.ecn).collect();
        assert_eq!(ecns, [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1]);
        assert_eq!(t.arrival(2), SimTime(2_000));
        assert_eq!(t.records[0].flow, "10.0.0.1:49153 > 10.0.0.2:57345 udp");
        // Keep records 2 and 0, remarked AF11, record 2 leaving first and marked CE.
        t.write_rewritten(
            &b,
            &[
                (0, Dscp::af(1, 1), Ecn::NotEct, SimTime(7_000)),
                (2, Dscp::af(1, 1), Ecn::Ce, SimTime(3_000)),
            ],
        )
        .unwrap();
        let u = PcapTrace::read(&b).unwrap();
        assert_eq!(u.records.len(), 2);
        assert_eq!(u.records[0].size, 102);
        assert!(u.records.iter().all(|r| r.dscp == Dscp::af(1, 1)));
        assert_eq!((u.records[0].ecn, u.records[1].ecn), (Ecn::Ce, Ecn::NotEct));
        assert_eq!(u.records[0].stamp_ns, 5_000_000_000 + 3_000);
        // The rewritten header checksums to zero.
        assert!(u.records.iter().all(|r| checksum(&r.data[0..20], 0) == 0));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        let dir = std::env::temp_dir().join(format!("dsim-pcap-bad-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.pcap");
        fs::write(&p, [0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0]).unwrap();
        assert!(
            PcapTrace::read(&p)
                .err()
                .expect("refused")
                .to_string()
                .contains("too short")
        );
        let mut ng = vec![0x0a, 0x0d, 0x0d, 0x0a];
        ng.resize(32, 0);
        fs::write(&p, &ng).unwrap();
        assert!(
            PcapTrace::read(&p)
                .err()
                .expect("refused")
                .to_string()
                .contains("pcapng")
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
