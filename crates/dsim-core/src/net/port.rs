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
//! (`busy_until` past) or schedules the end of the current transmission itself. On a
//! lightly loaded link this saves one event per packet.

use super::scripted::ScriptedDrops;
use crate::engine::rng::Rng;
use crate::engine::{Event, EventQueue};
use crate::packet::{NodeId, PacketArena, PktId, PortId, WireLink};
use crate::sched::Qdisc;
use crate::stats::ClassStats;
use crate::time::{Duration, Rate, SimTime};

/// The fields every packet reads or writes come first, in the first cache line (`repr(C)`
/// keeps the order, `align(64)` puts the port at a line's start); what only some ports
/// or some packets use follows.
#[repr(C, align(64))]
pub struct Port {
    /// Packets propagating on the wire, oldest first: the first and the last; each packet
    /// links to the next (`Packet::wire_next`).
    pub wire: Option<(PktId, PktId)>,
    pub peer: NodeId,
    /// End of the current (or last) transmission: the link is busy before this time.
    pub busy_until: SimTime,
    pub rate: Rate,
    pub delay: Duration,
    /// Counters per (queue, precedence), index `queue * precedences + precedence`.
    pub stats: Vec<ClassStats>,
    /// An end-of-transmission event is pending (a packet waits for the link).
    pub tx_pending: bool,
    /// What the port's packets meet besides the queue and the wire, summed up when the
    /// run starts (one test per hop instead of one per feature): see [`PortPath`].
    pub path: PortPath,
    /// The discipline's drop precedences per queue (`qdisc.precedences()`, kept here: it
    /// indexes `stats` at every enqueue and dequeue).
    pub precedences: u8,
    pub node: NodeId,
    /// The last packet size serialized and its time: most packets of a port have the size
    /// of the one before (data segments, ACKs), and this saves a division per hop.
    pub tx_memo: (u32, Duration),
    /// Packets (and their bytes) that passed straight through the empty queue inside the
    /// window: counted here, beside the fields every packet reads, and added to class 0's
    /// arrivals and departures when the run finishes ([`Port::close_counts`]).
    pub lone: (u64, u64),
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

/// The optional steps of a port's packets, as flags read on every hop. They are derived
/// from the port's captures, loss, scripted drops and conditioner chains when the run
/// starts; until then every packet takes the full path.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PortPath {
    /// A conditioner chain sits at the port's egress (before its queue).
    pub egress_chain: bool,
    /// Packets leaving the port are captured, may be lost on the wire or match scripted
    /// drops.
    pub tx_extras: bool,
    /// Packets delivered to the peer are captured or meet its ingress chain.
    pub rx_extras: bool,
    /// The largest packet that passes straight through the port's discipline when the
    /// link is free ([`crate::sched::Qdisc::lone_packet_limit`]; a drop-tail FIFO is then
    /// empty: it holds packets only while an end of transmission is pending).
    pub lone_packet_limit: Option<u64>,
}

impl PortPath {
    /// Every optional step checked, as before the run starts.
    pub const FULL: PortPath = PortPath {
        egress_chain: true,
        tx_extras: true,
        rx_extras: true,
        lone_packet_limit: None,
    };
}

impl Port {
    /// Time to serialize a packet of `size` bytes ([`Rate::tx_time`], remembered).
    #[inline]
    pub fn tx_time(&mut self, size: u32) -> Duration {
        if self.tx_memo.0 != size {
            self.tx_memo = (size, self.rate.tx_time(size as u64));
        }
        self.tx_memo.1
    }

    /// Packet `id`, whose transmission (until `busy_until`) starts, enters the wire of this
    /// port (`me`): it reaches the peer after the propagation delay. Only the wire's oldest
    /// packet has an event; the others link to the one after them.
    #[inline(always)]
    pub fn enter_wire(&mut self, me: PortId, id: PktId, pkts: &mut PacketArena, events: &mut EventQueue) {
        let arrival = self.busy_until + self.delay;
        pkts[id].wire_next = WireLink::NONE;
        match &mut self.wire {
            Some((_, last)) => {
                let prev = std::mem::replace(last, id);
                pkts[prev].wire_next = WireLink { next: id, at: arrival };
            }
            None => {
                self.wire = Some((id, id));
                events.push(arrival, Event::Arrival(me));
            }
        }
    }

    /// Adds the packets that passed straight through to class 0's counters.
    pub fn close_counts(&mut self) {
        let (pkts, bytes) = std::mem::take(&mut self.lone);
        if pkts > 0 {
            self.stats[0].add_passed_through(pkts, bytes);
        }
    }

    #[inline]
    pub fn class_stats(&mut self, queue: u8, precedence: u8) -> &mut ClassStats {
        let i = queue as usize * self.precedences as usize + precedence as usize;
        &mut self.stats[i]
    }
}
