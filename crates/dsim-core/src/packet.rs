//! Packets, their arena, and Differentiated Services codepoints.
//!
//! A packet lives in a [`PacketArena`] slot from the moment its source builds it until it is
//! delivered or dropped; everything else (queues, links, events) holds the 4-byte
//! [`PktId`]. Freed slots are reused, so a run in steady state allocates no packet memory.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::time::SimTime;

/// Index of a node in the network.
pub type NodeId = u32;
/// Index of an egress port (one direction of a link).
pub type PortId = u32;
/// Index of a flow (an application and its transport endpoints).
pub type FlowId = u32;

/// Handle of a packet in the arena.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct PktId(pub u32);

impl PktId {
    /// No packet (the arena never hands out this id).
    pub const NONE: PktId = PktId(u32::MAX);
}

/// Which way a packet travels within its flow.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum Direction {
    /// From the flow's source to its destination (UDP datagrams, TCP data).
    #[default]
    Forward,
    /// From the destination back to the source (TCP acknowledgements).
    Reverse,
}

/// A packet. `repr(C, align(64))` keeps the layout as written: the fields a router's hop
/// reads and writes (the wire link, addresses, size, codepoint, class, the time it was
/// queued) and the source's stamps fill the first cache line, the TCP header the second,
/// which only the end points read.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct Packet {
    /// While the packet propagates on a link: the packet that left the port after it, and
    /// when that one reaches the far node. The link's FIFO threads through its packets, so
    /// an arrival reads the packet it delivers and nothing else.
    pub wire_next: WireLink,
    /// When the packet entered the queue it is in.
    pub enqueued_at: SimTime,
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// IP datagram size in bytes, headers included: what a link serializes.
    pub size: u32,
    pub dscp: Dscp,
    pub direction: Direction,
    /// Queue and drop precedence the egress port's classifier chose.
    pub queue: u8,
    pub precedence: u8,
    /// The colour the last meter on the packet's path gave it (None until one does).
    pub color: Option<Color>,
    /// The two ECN bits of the IP header (RFC 3168 section 5): a RED queue with
    /// `ecn = true` marks ECN-capable packets instead of dropping them early.
    pub ecn: Ecn,
    /// Position of this packet in its flow's sending order (0, 1, 2, ...): "adjacent
    /// packets" for the jitter of RFC 2598 appendix A.3 are consecutive indices.
    pub index: u64,
    /// When the source handed the packet to the network (d_i of RFC 2598 A.3).
    pub sent_at: SimTime,
    /// TCP header fields; all zero for UDP datagrams.
    pub tcp: TcpHeader,
}

/// The next packet on a link's wire after this one, when it reaches the far node, and
/// where it goes from there.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WireLink {
    /// [`PktId::NONE`] for the last packet on the wire.
    pub next: PktId,
    pub hop: Hop,
    pub at: SimTime,
}

impl WireLink {
    /// No packet follows.
    pub const NONE: WireLink = WireLink {
        next: PktId::NONE,
        hop: Hop(Hop::DELIVER),
        at: SimTime::ZERO,
    };
}

/// Where a packet on a wire goes at the far node: the egress port its route takes there,
/// or delivery there (the far node is its destination) to its flow, travelling its
/// direction. Decided when the packet enters the wire (routes are static), so that its
/// arrival can fetch that port, or the flow's state, at once instead of after the packet's
/// own line, on every hop (issue 24: at thousands of flows the packet of the next event
/// is rarely in cache, and reading its flow from it stalled the look-ahead).
/// One word: a port below 2^30, or bit 31 (delivery), bit 30 (reverse) and the flow.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Hop(u32);

impl Hop {
    const DELIVER: u32 = 1 << 31;
    const REVERSE: u32 = 1 << 30;
    /// Ports and flows are numbered below this (a simulation holds far fewer: each flow
    /// takes kilobytes, and 2^30 of them would not fit in memory).
    pub const MAX_ID: u32 = Self::REVERSE;

    /// Sent on through port `p` of the far node.
    #[inline(always)]
    pub fn port(p: PortId) -> Hop {
        debug_assert!(p < Self::MAX_ID);
        Hop(p)
    }

    /// Delivered at the far node to flow `flow`'s end that `direction` reaches.
    #[inline(always)]
    pub fn deliver(flow: FlowId, direction: Direction) -> Hop {
        debug_assert!(flow < Self::MAX_ID);
        let reverse = if direction == Direction::Reverse {
            Self::REVERSE
        } else {
            0
        };
        Hop(Self::DELIVER | reverse | flow)
    }

    /// What the packet does at the far node.
    #[inline(always)]
    pub fn beyond(self) -> Beyond {
        if self.0 & Self::DELIVER == 0 {
            Beyond::Port(self.0)
        } else {
            let direction = if self.0 & Self::REVERSE != 0 {
                Direction::Reverse
            } else {
                Direction::Forward
            };
            Beyond::Deliver(self.0 & (Self::REVERSE - 1), direction)
        }
    }
}

/// A [`Hop`] read out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Beyond {
    /// Sent on through this egress port of the far node.
    Port(PortId),
    /// Delivered at the far node to this flow's end that the direction reaches.
    Deliver(FlowId, Direction),
}

impl Default for WireLink {
    fn default() -> Self {
        WireLink::NONE
    }
}

/// The colour a meter gives a packet: RFC 2697 / RFC 2698 green, yellow, red. A
/// two-colour profiler (token bucket, TSW tagger of draft-ibanez section 2.1.3) colours a
/// packet in profile ("IN") green and out of profile ("OUT") red.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Color {
    Green = 0,
    Yellow = 1,
    Red = 2,
}

impl Color {
    pub const ALL: [Color; 3] = [Color::Green, Color::Yellow, Color::Red];

    pub fn name(self) -> &'static str {
        match self {
            Color::Green => "green",
            Color::Yellow => "yellow",
            Color::Red => "red",
        }
    }
}

/// The ECN field of the IP header, RFC 3168 section 5: Not-ECT 00, ECT(1) 01, ECT(0) 10, CE 11.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0b00,
    Ect1 = 0b01,
    Ect0 = 0b10,
    Ce = 0b11,
}

impl Ecn {
    /// The field from the two bits an IP header carries (RFC 3168 section 5).
    pub fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

/// TCP control bits, as on the wire (RFC 793 section 3.1, RFC 3168 section 6.1).
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// Most SACK blocks one segment carries: 4 fit in the 40 option bytes without timestamps
/// (RFC 2018 section 3).
pub const MAX_SACK_BLOCKS: usize = 4;

/// The TCP header of a simulated segment. Sequence numbers are 64-bit byte numbers (they
/// never wrap inside a run); a capture writes them modulo 2^32. SACK blocks are stored as
/// offsets above `ack` (a block never lies below the cumulative acknowledgement), which
/// keeps the header at 64 bytes.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct TcpHeader {
    pub seq: u64,
    pub ack: u64,
    /// Payload bytes (the segment occupies [seq, seq + len) of the sequence space, plus one
    /// for a SYN).
    pub len: u32,
    /// Advertised receive window in bytes.
    pub window: u32,
    /// Control bits, see [`tcp_flags`].
    pub flags: u8,
    /// SACK blocks in use (0 = no SACK option).
    pub sack_count: u8,
    /// The MSS option's value on a SYN or SYN-ACK (0 otherwise).
    pub mss: u16,
    /// SACK blocks [ack + left, ack + right).
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
}

impl TcpHeader {
    /// SACK block `i` as absolute sequence numbers [left, right).
    #[inline]
    pub fn sack_block(&self, i: usize) -> (u64, u64) {
        let (l, r) = self.sack[i];
        (self.ack + l as u64, self.ack + r as u64)
    }

    /// The SACK blocks in use, as absolute [left, right) ranges.
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.sack_count as usize).map(|i| self.sack_block(i))
    }

    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// Slab of packets addressed by [`PktId`].
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<u32>,
}

impl PacketArena {
    pub fn with_capacity(n: usize) -> Self {
        PacketArena {
            slots: Vec::with_capacity(n),
            free: Vec::with_capacity(n),
        }
    }

    pub fn alloc(&mut self, p: Packet) -> PktId {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                PktId(i)
            }
            None => {
                self.slots.push(p);
                PktId(self.slots.len() as u32 - 1)
            }
        }
    }

    /// `alloc`, handing out the stored packet too: the caller finishes it in place (a
    /// header filled where the packet lies is not built aside and copied in).
    #[inline]
    pub fn alloc_mut(&mut self, p: Packet) -> (PktId, &mut Packet) {
        match self.free.pop() {
            Some(i) => {
                let slot = &mut self.slots[i as usize];
                *slot = p;
                (PktId(i), slot)
            }
            None => {
                let id = PktId(self.slots.len() as u32);
                self.slots.push(p);
                (id, self.slots.last_mut().expect("just pushed"))
            }
        }
    }

    pub fn free(&mut self, id: PktId) {
        debug_assert!(!self.free.contains(&id.0), "double free of {id:?}");
        self.free.push(id.0);
    }

    /// Asks the processor to bring packet `id`'s lines in ahead of its use: a
    /// hint, with no effect on what the program computes.
    #[inline(always)]
    pub fn prefetch(&self, id: PktId) {
        if let Some(p) = self.slots.get(id.0 as usize) {
            crate::hint::prefetch_span(p, 0, std::mem::size_of::<Packet>());
        }
    }

    /// Packets currently alive (allocated and not freed).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Most packets ever alive at once: the arena's footprint.
    pub fn capacity_used(&self) -> usize {
        self.slots.len()
    }
}

impl std::ops::Index<PktId> for PacketArena {
    type Output = Packet;
    #[inline]
    fn index(&self, id: PktId) -> &Packet {
        &self.slots[id.0 as usize]
    }
}
impl std::ops::IndexMut<PktId> for PacketArena {
    #[inline]
    fn index_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id.0 as usize]
    }
}

// ---------------------------------------------------------------------------------------

/// A Differentiated Services codepoint (the six high bits of the IPv4 TOS byte, RFC 2474).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Dscp(pub u8);

impl Dscp {
    /// Default (best-effort) PHB, RFC 2474 section 4.1.
    pub const BE: Dscp = Dscp(0);
    /// Expedited Forwarding, RFC 2598 section 2.4: 101110.
    pub const EF: Dscp = Dscp(0b101110);

    /// AF class `class` (1-4), drop precedence `drop` (1-3): RFC 2597 section 6, 8c + 2d.
    pub const fn af(class: u8, drop: u8) -> Dscp {
        Dscp(8 * class + 2 * drop)
    }
    /// Class selector `n` (0-7), RFC 2474 section 4.2.2: n << 3.
    pub const fn cs(n: u8) -> Dscp {
        Dscp(n << 3)
    }

    /// Parses a standard name ("BE", "default", "EF", "AF11".."AF43", "CS0".."CS7") or a
    /// number 0-63 (decimal, or binary as "0b101110").
    pub fn parse(text: &str) -> Result<Dscp, String> {
        let t = text.trim();
        let upper = t.to_ascii_uppercase();
        let named = match upper.as_str() {
            "BE" | "DEFAULT" | "DF" => Some(Dscp::BE),
            "EF" => Some(Dscp::EF),
            _ => None,
        };
        if let Some(d) = named {
            return Ok(d);
        }
        if let Some(d) = user_dscp(t) {
            return Ok(d);
        }
        let digits = |s: &str| -> Option<(u8, u8)> {
            let b = s.as_bytes();
            (b.len() == 2 && b[0].is_ascii_digit() && b[1].is_ascii_digit()).then(|| (b[0] - b'0', b[1] - b'0'))
        };
        if let Some(rest) = upper.strip_prefix("AF") {
            return match digits(rest) {
                Some((c @ 1..=4, d @ 1..=3)) => Ok(Dscp::af(c, d)),
                _ => Err(format!(
                    "\"{text}\" is not an AF codepoint; AF classes are 1-4 and drop precedences 1-3 (AF11 ... AF43)"
                )),
            };
        }
        if let Some(rest) = upper.strip_prefix("CS") {
            return match rest.parse::<u8>() {
                Ok(n @ 0..=7) => Ok(Dscp::cs(n)),
                _ => Err(format!("\"{text}\" is not a class selector; CS0 ... CS7")),
            };
        }
        let value = if let Some(bin) = t.strip_prefix("0b") {
            u8::from_str_radix(bin, 2).ok()
        } else {
            t.parse::<u8>().ok()
        };
        match value {
            Some(v) => Dscp::from_number(v as i64),
            None => Err(format!(
                "\"{text}\" is not a DSCP; use a name (BE, EF, AF11 ... AF43, CS0 ... CS7{}) or a number 0-63",
                user_dscp_list()
            )),
        }
    }

    pub fn from_number(v: i64) -> Result<Dscp, String> {
        if (0..64).contains(&v) {
            Ok(Dscp(v as u8))
        } else {
            Err(format!("DSCP {v} is out of range; a codepoint has six bits (0-63)"))
        }
    }

    /// The standard name of this codepoint, if it has one.
    pub fn name(self) -> Option<String> {
        match self.0 {
            0 => Some("BE".into()),
            46 => Some("EF".into()),
            v if v % 8 == 0 => Some(format!("CS{}", v / 8)),
            v if (1..=4).contains(&(v / 8)) && matches!(v % 8, 2 | 4 | 6) => {
                Some(format!("AF{}{}", v / 8, (v % 8) / 2))
            }
            _ => None,
        }
    }
}

thread_local! {
    /// The user-defined codepoint names of the scenario being read (`[dscp]` table).
    static USER_DSCP: RefCell<Vec<(String, u8)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with `names` (name, codepoint) known to [`Dscp::parse`], then forgets them.
/// Names compare case-insensitively, like the standard ones.
pub fn with_dscp_names<R>(names: &[(String, u8)], f: impl FnOnce() -> R) -> R {
    struct Reset(Vec<(String, u8)>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let old = std::mem::take(&mut self.0);
            USER_DSCP.with(|u| *u.borrow_mut() = old);
        }
    }
    let old = USER_DSCP.with(|u| std::mem::replace(&mut *u.borrow_mut(), names.to_vec()));
    let _reset = Reset(old);
    f()
}

fn user_dscp(name: &str) -> Option<Dscp> {
    USER_DSCP.with(|u| {
        u.borrow()
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|&(_, v)| Dscp(v))
    })
}

fn user_dscp_list() -> String {
    USER_DSCP.with(|u| {
        let u = u.borrow();
        if u.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = u.iter().map(|(n, _)| n.as_str()).collect();
            format!(", or one of the scenario's [dscp] names: {}", names.join(", "))
        }
    })
}

impl fmt::Display for Dscp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(&n),
            None => write!(f, "{}", self.0),
        }
    }
}

impl Serialize for Dscp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.name() {
            Some(n) => s.serialize_str(&n),
            None => s.serialize_u8(self.0),
        }
    }
}

impl<'de> Deserialize<'de> for Dscp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Dscp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a DSCP name such as \"EF\" or \"AF11\", or a number 0-63")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dscp, E> {
                Dscp::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dscp, E> {
                Dscp::from_number(v).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dscp, E> {
                self.visit_i64(v.min(i64::MAX as u64) as i64)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_reads_back_its_port_or_its_delivery() {
        let last = Hop::MAX_ID - 1;
        for p in [0, 1, 12_345, last] {
            assert_eq!(Hop::port(p).beyond(), Beyond::Port(p));
        }
        for f in [0, 7, 99_999, last] {
            for d in [Direction::Forward, Direction::Reverse] {
                assert_eq!(Hop::deliver(f, d).beyond(), Beyond::Deliver(f, d));
            }
        }
        assert_ne!(Hop::port(3), Hop::deliver(3, Direction::Forward));
        assert_ne!(Hop::deliver(3, Direction::Forward), Hop::deliver(3, Direction::Reverse));
    }

    #[test]
    fn standard_codepoints() {
        // RFC 2597 section 6 table and RFC 2598 section 2.4.
        let table = [
            ("AF11", 10),
            ("AF12", 12),
            ("AF13", 14),
            ("AF21", 18),
            ("AF33", 30),
            ("AF43", 38),
            ("EF", 46),
            ("CS1", 8),
            ("CS7", 56),
            ("BE", 0),
        ];
        for (name, v) in table {
            assert_eq!(Dscp::parse(name), Ok(Dscp(v)), "{name}");
            assert_eq!(Dscp(v).to_string(), name);
        }
        assert_eq!(Dscp::parse("0b101110"), Ok(Dscp::EF));
        assert_eq!(Dscp::parse("7").unwrap().to_string(), "7");
        assert!(Dscp::parse("AF51").is_err());
        assert!(Dscp::parse("64").is_err());
        assert!(Dscp::parse("XYZ").is_err());
    }

    #[test]
    fn arena_reuses_slots() {
        let mut a = PacketArena::default();
        let p = a.alloc(Packet {
            size: 100,
            ..Default::default()
        });
        let q = a.alloc(Packet {
            size: 200,
            ..Default::default()
        });
        a.free(p);
        let r = a.alloc(Packet {
            size: 300,
            ..Default::default()
        });
        assert_eq!(r, p);
        assert_eq!(a[r].size, 300);
        assert_eq!(a[q].size, 200);
        assert_eq!(a.live(), 2);
        assert_eq!(a.capacity_used(), 2);
    }
}
