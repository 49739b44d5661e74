//! An egress port: one direction of a duplex link.
//!
//! A port serializes one packet at a time at its rate; a packet whose last bit has left is
//! in flight for the propagation delay. Because every packet of a port sees the same delay,
//! packets arrive at the far end in the order they left: the in-flight packets are a FIFO
//! "pipe", and only its head needs an event in the future event list.
//!
//! A packet enters the pipe when its transmission starts (its arrival time is known then:
//! start + serialization + propagation). The end of a transmission needs an event only if
//! a packet is waiting for the link then: a port whose queue is empty when it starts
//! sending schedules nothing, and the next packet to arrive finds the link free
//! (`free_at` reached) or schedules the end of the current transmission itself. On a
//! lightly loaded link this saves one event per packet.
//!
//! Ties (docs/ties.md, "arrivals first"): a transmission that ends at t occupies the link
//! for every packet arriving at t. Such a packet waits, and the end of the transmission at
//! t, an event handled after every other event of t ([`crate::engine::EventQueue`]),
//! starts the next one once all the arrivals of t are in the queue. Only a packet arriving
//! after the instant the last transmission ended finds the link free: `free_at` is that
//! instant plus 1 ns. One shortcut gives the same outcome for less: at a drop-tail FIFO
//! that nothing waits in, the first packet arriving at t would be the first to start at
//! t whatever else arrives, so it starts at once, and the packets arriving after it at t
//! count it as waiting ([`Port::lone_at`]).

use super::scripted::ScriptedDrops;
use crate::engine::rng::Rng;
use crate::packet::{Hop, NodeId, Packet, PacketArena, PktId, WireLink};
use crate::sched::Qdisc;
use crate::stats::{ClassStats, PassedThrough};
use crate::time::{Duration, Rate, SimTime};

/// The fields a packet reads or writes on its hop through the port (sending, then
/// arriving at the peer) fill the first cache line (`repr(C)` keeps the order, `align(64)`
/// puts the port at a line's start); what only some ports or some packets use follows.
#[repr(C, align(64))]
pub struct Port {
    /// The first instant a packet arriving finds the link free: 1 ns after the end of the
    /// current (or last) transmission, since that end occupies the link for the arrivals
    /// of its own nanosecond; 0 before the first transmission.
    pub free_at: SimTime,
    pub delay: Duration,
    /// The link's occupancy by `tx_memo_size` bytes, the last size sent: their
    /// serialization time plus the nanosecond the transmission ends in, which it holds for
    /// the arrivals of that nanosecond. Most packets of a port have the size of the one
    /// before (data segments, ACKs), and this saves a division per hop.
    pub(crate) tx_memo: Duration,
    /// Packets that passed straight through the empty queue, counted here, beside the
    /// fields every packet reads, and added to class 0 when the run finishes
    /// ([`Port::close_counts`]).
    pub passed: PassedThrough,
    /// Packets propagating on the wire.
    pub wire: Wire,
    pub peer: NodeId,
    pub(crate) tx_memo_size: u32,
    /// The largest packet that passes straight through the port's discipline when the
    /// link is free, 0 for none ([`crate::sched::Qdisc::lone_packet_limit`]; a drop-tail
    /// FIFO is then empty: it holds packets only while an end of transmission is pending).
    pub lone_packet_limit: u32,
    /// What the port's packets meet besides the queue and the wire.
    pub path: PortPath,
    /// An end-of-transmission event is pending (a packet waits for the link).
    pub tx_pending: bool,
    pub rate: Rate,
    /// The instant a packet that passed straight through the drop-tail FIFO started at
    /// the end of the transmission before it (its size is `tx_memo_size`). By the tie
    /// rule it waits in the queue until every arrival of that instant has been offered; it
    /// is the first to start whatever arrives, so it started at once, and the arrivals
    /// after it at that instant count it ahead of them
    /// ([`crate::sched::Qdisc::enqueue_behind`]). Forgotten at the end of a transmission.
    pub lone_at: SimTime,
    pub node: NodeId,
    /// The discipline's drop precedences per queue (`qdisc.precedences()`, kept here: it
    /// indexes `stats` at every enqueue and dequeue).
    pub precedences: u8,
    /// Counters per (queue, precedence), index `queue * precedences + precedence`.
    pub stats: Vec<ClassStats>,
    /// Random loss of this direction: probability and its own stream.
    pub loss: Option<Box<(f64, Rng)>>,
    /// Scripted drops of this direction, if any (see [`super::scripted`]).
    pub scripted: Option<Box<ScriptedDrops>>,
    /// Captures (indices into the simulation's captures) that record the packets this
    /// port starts transmitting, and those it delivers to its peer node.
    pub capture_tx: Vec<u16>,
    pub capture_rx: Vec<u16>,
    pub qdisc: Qdisc,
    /// Stream of the queue discipline's random decisions. Boxed, like `loss`: a generator
    /// is 300 bytes that only a RED queue or a lossy link reads, and inline they would
    /// spread the fields every packet reads over more cache lines.
    pub rng: Box<Rng>,
    /// "FROM->TO", the name used in results.
    pub name: String,
}

/// The packets on a port's wire: the newest ([`PktId::NONE`] when the wire is empty); each
/// packet links to the one sent after it (`Packet::wire_next`), and the oldest is the one
/// the port's pending arrival event names.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Wire {
    pub last: PktId,
}

impl Wire {
    pub const EMPTY: Wire = Wire { last: PktId::NONE };

    pub fn is_empty(&self) -> bool {
        self.last == PktId::NONE
    }
}

/// The optional steps of a port's packets, as flags read on every hop (one byte, to keep
/// the port's first line). They are derived from the port's captures, loss, scripted
/// drops, conditioner chains and node when the run starts; until then every packet takes
/// the full path.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PortPath(u8);

impl PortPath {
    /// A conditioner chain sits at the port's egress (before its queue).
    pub const EGRESS_CHAIN: u8 = 1;
    /// Packets leaving the port are captured, may be lost on the wire or match scripted
    /// drops.
    pub const TX_EXTRAS: u8 = 2;
    /// Packets delivered to the peer are captured or meet its ingress chain.
    pub const RX_EXTRAS: u8 = 4;
    /// The port belongs to a host: the packets it sends left their source there (hosts
    /// originate packets and do not forward).
    pub const AT_SOURCE: u8 = 8;
    /// Every optional step checked, as before the run starts.
    pub const FULL: PortPath = PortPath(Self::EGRESS_CHAIN | Self::TX_EXTRAS | Self::RX_EXTRAS);

    pub fn new(flags: u8) -> Self {
        PortPath(flags)
    }

    /// Is `flag` (one of the constants above) set?
    #[inline(always)]
    pub fn has(self, flag: u8) -> bool {
        self.0 & flag != 0
    }
}

impl Port {
    /// The end of the current (or last) transmission (after one started).
    #[inline(always)]
    pub fn tx_end(&self) -> SimTime {
        debug_assert!(self.free_at > SimTime::ZERO, "no transmission yet");
        SimTime(self.free_at.0 - 1)
    }

    /// Is the link free for a packet arriving at `now` (no transmission, and none ending
    /// at `now`)?
    #[inline(always)]
    pub fn link_free(&self, now: SimTime) -> bool {
        !self.tx_pending && self.free_at <= now
    }

    /// A packet of `size` bytes arrives at `now`, the instant the transmission before it
    /// ends with nothing waiting, at a drop-tail FIFO it passes straight through: by the
    /// tie rule it waits for the other arrivals of `now`, and would be the first to start
    /// whatever they are. True if so: it starts at once, remembered as waiting for the
    /// later arrivals of `now` ([`Self::lone_at`]). False otherwise, or if one is
    /// remembered already (its transmission took 0 ns): this one waits behind it.
    #[inline]
    pub fn starts_at_its_tie(&mut self, now: SimTime, size: u32) -> bool {
        let tie = !self.tx_pending
            && self.free_at.0 == now.0 + 1
            && self.passes_straight_through(size)
            && self.lone_at != now;
        if tie {
            self.lone_at = now;
        }
        tie
    }

    /// The link starts serializing a packet of `size` bytes at `now`.
    #[inline(always)]
    pub fn start_tx(&mut self, now: SimTime, size: u32) {
        self.free_at = now + self.occupancy(size);
    }

    /// Time to serialize a packet of `size` bytes ([`Rate::tx_time`]) plus 1 ns,
    /// remembered.
    #[inline]
    fn occupancy(&mut self, size: u32) -> Duration {
        if self.tx_memo_size != size {
            self.tx_memo = Duration(self.rate.tx_time(size as u64).0.saturating_add(1));
            self.tx_memo_size = size;
        }
        self.tx_memo
    }

    /// Packet `id`, whose transmission (until [`Self::tx_end`]) starts, enters the wire of
    /// this port: it reaches the peer after the propagation delay. Only the wire's oldest
    /// packet has an event: its arrival time is returned when the wire was empty, and the
    /// caller schedules it; the others link to the one after them. (A packet off the wires
    /// links to none: `Packet::default`, and [`Self::leave_wire`] unlinks it.)
    #[inline(always)]
    #[must_use]
    pub fn enter_wire(&mut self, id: PktId, hop: Hop, pkts: &mut PacketArena) -> Option<SimTime> {
        let arrival = self.tx_end() + self.delay;
        debug_assert_eq!(pkts[id].wire_next, WireLink::NONE, "a packet enters one wire at a time");
        if self.wire.is_empty() {
            self.wire = Wire { last: id };
            Some(arrival)
        } else {
            let prev = std::mem::replace(&mut self.wire.last, id);
            pkts[prev].wire_next = WireLink {
                next: id,
                hop,
                at: arrival,
            };
            None
        }
    }

    /// The oldest packet on the wire, `first`, reaches the peer and leaves the wire: the
    /// next one and its arrival time are returned ([`WireLink::NONE`] when none follows).
    /// The caller may prefetch the next one: it is read when it arrives, often within
    /// microseconds on a busy link, by when its line, last touched when it was sent, may
    /// have left the cache.
    #[inline(always)]
    pub fn leave_wire(&mut self, first: &mut Packet) -> WireLink {
        debug_assert!(!self.wire.is_empty(), "Arrival with nothing in flight");
        let link = std::mem::replace(&mut first.wire_next, WireLink::NONE);
        if link.next == PktId::NONE {
            self.wire = Wire::EMPTY;
        }
        link
    }

    /// Does a packet of `size` bytes pass straight through when the link is free?
    /// (`size - 1 < limit`: a limit of 0 lets nothing through, and a packet of 0 bytes,
    /// which no source sends, would take the queue's round trip, with the same counts.)
    #[inline(always)]
    pub fn passes_straight_through(&self, size: u32) -> bool {
        size.wrapping_sub(1) < self.lone_packet_limit
    }

    /// Adds the packets that passed straight through to class 0's counters.
    pub fn close_counts(&mut self) {
        self.passed.close_into(&mut self.stats[0]);
    }

    #[inline]
    pub fn class_stats(&mut self, queue: u8, precedence: u8) -> &mut ClassStats {
        let i = queue as usize * self.precedences as usize + precedence as usize;
        &mut self.stats[i]
    }
}
