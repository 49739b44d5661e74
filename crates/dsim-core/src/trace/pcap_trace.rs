//! A pcap capture as a trace for [`crate::replay`], and the capture written back with what
//! the mechanism did: DSCP rewritten, dropped packets removed, each packet stamped with the
//! instant it left the mechanism.
//!
//! Reads the classic libpcap format (microsecond or nanosecond timestamps, either byte
//! order) with link type Ethernet (1, 802.1Q tags skipped), raw IP (101, 228) or Linux
//! cooked capture (113). Every record must carry an IPv4 datagram (RFC 791); its size is
//! the IPv4 total length, its DSCP the six high bits of the TOS byte (RFC 2474), its ECN
//! field the two low bits (RFC 3168 section 5), its flow the 5-tuple. pcapng files are
//! refused (convert them with `editcap -F pcap`). Timestamps must not decrease from one
//! record to the next (the rule every trace follows, [`crate::replay::check_trace`]), and a
//! file is read up to a bound (`/dev/zero` is refused, not read forever).
//!
//! Errors name what is wrong in the capture, not its path: the caller knows the file.

use std::fs;
use std::io::{self, Read};
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

/// The bytes of the file at `path`, refused beyond `max_bytes` (read with a bound: the
/// file may be a device or a pipe that never ends).
pub fn read_bounded(path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(bad(format!(
            "larger than {} bytes, the limit of a trace ({})",
            crate::params::limits::grouped(max_bytes),
            crate::params::limits::how_to_raise("trace_bytes")
        )));
    }
    Ok(bytes)
}

impl PcapTrace {
    /// Reads the capture at `path`, at most `max_bytes` long.
    pub fn read(path: &Path, max_bytes: u64) -> io::Result<PcapTrace> {
        PcapTrace::parse(&read_bounded(path, max_bytes)?)
    }

    /// Reads a capture from its bytes.
    pub fn parse(bytes: &[u8]) -> io::Result<PcapTrace> {
        if bytes.len() < 24 {
            return Err(bad("too short for a pcap file (24 bytes of header)".into()));
        }
        let magic = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes"));
        let (big_endian, nanos) = match magic {
            0xa1b2_c3d4 => (false, false),
            0xa1b2_3c4d => (false, true),
            0xd4c3_b2a1 => (true, false),
            0x4d3c_b2a1 => (true, true),
            0x0a0d_0d0a => {
                return Err(bad("pcapng is not supported; convert it with `editcap -F pcap`".into()));
            }
            _ => {
                return Err(bad(format!("not a pcap file (magic {magic:#010x})")));
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
        let link = u32_at(bytes, 20) & 0x0fff_ffff;
        if ![LINK_ETHERNET, LINK_RAW, LINK_IPV4, LINK_SLL].contains(&link) {
            return Err(bad(format!(
                "link type {link} is not supported (Ethernet, raw IP or Linux cooked)"
            )));
        }
        let mut records = Vec::new();
        let mut at = 24;
        while at + 16 <= bytes.len() {
            let i = records.len();
            let (sec, frac) = (u32_at(bytes, at) as u64, u32_at(bytes, at + 4) as u64);
            let (incl, orig) = (u32_at(bytes, at + 8) as usize, u32_at(bytes, at + 12));
            let data = bytes
                .get(at + 16..at + 16 + incl)
                .ok_or_else(|| bad(format!("record {i} is cut short (file truncated?)")))?
                .to_vec();
            at += 16 + incl;
            let stamp_ns = stamp(i, sec, frac, nanos)?;
            if let Some(prev) = records.last().map(|r: &Record| r.stamp_ns) {
                if stamp_ns < prev {
                    return Err(bad(format!(
                        "record {i} is stamped {}, {} before record {}: arrival times must not decrease",
                        show_stamp(stamp_ns),
                        show_span(prev - stamp_ns),
                        i - 1
                    )));
                }
            }
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

    /// Arrival time of record `i` relative to the first record (records never precede
    /// the first: [`PcapTrace::parse`] refuses decreasing stamps).
    pub fn arrival(&self, i: usize) -> SimTime {
        let t0 = self.records.first().map_or(0, |r| r.stamp_ns);
        SimTime(self.records[i].stamp_ns - t0)
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
            let t = t0
                .checked_add(depart.0)
                .filter(|t| t / 1_000_000_000 <= u32::MAX as u64)
                .ok_or_else(|| bad(format!("record {i} would leave after 2106, past what pcap stamps hold")))?;
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

/// The stamp of record `i` in ns since the epoch; a fraction of a second must be one.
fn stamp(i: usize, sec: u64, frac: u64, nanos: bool) -> io::Result<u64> {
    let (per_sec, unit) = if nanos {
        (1_000_000_000, "ns")
    } else {
        (1_000_000, "us")
    };
    if frac >= per_sec {
        return Err(bad(format!(
            "record {i} is stamped {sec} s and {frac} {unit}: the fraction of a second is below {per_sec} {unit}"
        )));
    }
    Ok(sec * 1_000_000_000 + frac * (1_000_000_000 / per_sec))
}

/// A stamp as seconds since the epoch, to the nanosecond.
fn show_stamp(ns: u64) -> String {
    format!("{}.{:09} s", ns / 1_000_000_000, ns % 1_000_000_000)
}

/// A span of nanoseconds in the largest unit that keeps it whole.
fn show_span(ns: u64) -> String {
    crate::time::Duration(ns).to_string()
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
        let t = PcapTrace::read(&a, u64::MAX).unwrap();
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
        let u = PcapTrace::read(&b, u64::MAX).unwrap();
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
            PcapTrace::read(&p, u64::MAX)
                .err()
                .expect("refused")
                .to_string()
                .contains("too short")
        );
        let mut ng = vec![0x0a, 0x0d, 0x0d, 0x0a];
        ng.resize(32, 0);
        fs::write(&p, &ng).unwrap();
        assert!(
            PcapTrace::read(&p, u64::MAX)
                .err()
                .expect("refused")
                .to_string()
                .contains("pcapng")
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A capture of two packets stamped `t0` and `t1` (ns since the epoch).
    fn two_records(t0: u64, t1: u64) -> Vec<u8> {
        let dir = std::env::temp_dir().join(format!("dsim-pcap-two-{}-{t0}-{t1}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.pcap");
        let mut w = PcapWriter::create(&a, 65_535).unwrap();
        for t in [t0, t1] {
            w.write(
                SimTime(t),
                &Packet {
                    size: 100,
                    ..Default::default()
                },
            );
        }
        w.finish().unwrap();
        let bytes = fs::read(&a).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        bytes
    }

    #[test]
    fn stamps_must_not_decrease() {
        // Issue 28: a second record 1 ms before the first came out at arrival 0.
        let t0 = 1_732_531_200_123_456_000;
        let e = PcapTrace::parse(&two_records(t0, t0 - 1_000_000))
            .err()
            .expect("refused");
        assert_eq!(
            e.to_string(),
            "record 1 is stamped 1732531200.122456000 s, 1ms before record 0: arrival times must not decrease"
        );
        // Equal stamps are fine, and epoch times stay exact to the nanosecond.
        let t = PcapTrace::parse(&two_records(t0, t0 + 100)).unwrap();
        assert_eq!((t.records[1].stamp_ns, t.arrival(1)), (t0 + 100, SimTime(100)));
        assert!(PcapTrace::parse(&two_records(t0, t0)).is_ok());
    }

    #[test]
    fn a_fraction_of_a_second_is_below_one_second() {
        let mut bytes = two_records(0, 5);
        // The second record's fraction (nanoseconds: the writer's resolution) follows the
        // global header (24), the first record's header (16) and data, and its seconds.
        let first = u32::from_le_bytes(bytes[32..36].try_into().unwrap()) as usize;
        let at = 24 + 16 + first + 4;
        bytes[at..at + 4].copy_from_slice(&1_000_000_000u32.to_le_bytes());
        let e = PcapTrace::parse(&bytes).err().expect("refused");
        assert_eq!(
            e.to_string(),
            "record 1 is stamped 0 s and 1000000000 ns: the fraction of a second is below 1000000000 ns"
        );
    }

    #[test]
    fn reads_with_a_bound() {
        let e = read_bounded(Path::new("/dev/zero"), 1_000).expect_err("refused");
        assert!(
            e.to_string()
                .starts_with("larger than 1,000 bytes, the limit of a trace"),
            "{e}"
        );
        let dir = std::env::temp_dir().join(format!("dsim-pcap-bound-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x");
        fs::write(&p, [7u8; 10]).unwrap();
        assert_eq!(read_bounded(&p, 10).unwrap(), [7u8; 10]);
        assert!(read_bounded(&p, 9).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
