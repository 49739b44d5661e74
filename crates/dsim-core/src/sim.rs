//! The simulation: the path of a packet through the network, driven by events.
//!
//! app -> transport -> host egress port -> link -> router: route lookup -> egress port:
//! classifier -> queue discipline admit/drop -> scheduler -> transmission -> propagation ->
//! next node ... -> receiver. Every drop is recorded with where and why.

mod conditioning;
pub mod estimate;
pub mod event;
pub mod record;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::Path;

use rand::RngExt;

use crate::app::App;
use crate::conditioner::{ChainRef, Conditioners, InstId};
use crate::discipline::{QueueCtx, Verdict};
use crate::engine::EventQueue;
use crate::engine::rng::Rng;
use crate::hint::{prefetch, prefetch_span};
use crate::net::Port;
use crate::net::port::PortPath;
use crate::net::routing::Routes;
use crate::net::{Network, NodeKind};
use crate::packet::{Beyond, Direction, Dscp, Ecn, FlowId, Hop, NodeId, Packet, PacketArena, PktId, PortId};
use crate::stats::{DropCause, FlowStats, Window};
use crate::time::SimTime;
use crate::trace::{Capture, CapturePoint, PcapWriter};
use crate::transport::tcp::{TcpFlow, TcpIo, TcpTimer};
use crate::transport::tfrc::{RxAction, TfrcFlow};
use crate::transport::udp::UdpSender;
use event::Event;

/// What carries a flow's packets.
pub enum Transport {
    /// A datagram application over UDP.
    Udp { app: App, sender: UdpSender },
    /// An application over a TCP connection: sender at `src`, receiver at `dst`; ACKs are
    /// packets of the same flow travelling [`Direction::Reverse`].
    Tcp(Box<TcpFlow>),
    /// A TFRC (RFC 5348) sender with ABE colours at `src`, its receiver at `dst`; feedback
    /// packets travel [`Direction::Reverse`].
    Tfrc(Box<TfrcFlow>),
}

/// A flow: an application at `src` sending to `dst` through a transport.
// What every packet of the flow reads first (its transport, 56 bytes, with the ends)
// fills the first cache line; the counters a delivery writes fill the next four.
#[repr(C, align(64))]
pub struct Flow {
    pub transport: Transport,
    pub src: NodeId,
    pub dst: NodeId,
    pub stats: FlowStats,
    pub start: SimTime,
    pub stop: SimTime,
    pub name: String,
    /// The `[[flow]]` entry this flow came from (several when `count > 1`).
    pub group: String,
    pub rng: Rng,
}

impl Flow {
    /// Asks for the lines a packet of the flow travelling `direction` will read on
    /// delivery: the transport, and for the source's packets the delivery counters and
    /// the histograms' heads.
    #[inline(always)]
    fn prefetch(&self, direction: Direction) {
        match direction {
            Direction::Forward => prefetch_span(self, 0, std::mem::offset_of!(Flow, stats) + FlowStats::DELIVERY_BYTES),
            Direction::Reverse => prefetch(self),
        }
    }

    /// The codepoint the source sets.
    pub fn dscp(&self) -> Dscp {
        match &self.transport {
            Transport::Udp { sender, .. } => sender.dscp,
            Transport::Tcp(t) => t.dscp,
            Transport::Tfrc(t) => t.udp.dscp,
        }
    }

    /// The datagram application of a UDP flow.
    pub fn app(&self) -> Option<&App> {
        match &self.transport {
            Transport::Udp { app, .. } => Some(app),
            Transport::Tcp(_) | Transport::Tfrc(_) => None,
        }
    }

    /// The transport's name in the results: "udp", "tcp" or "tfrc".
    pub fn transport_name(&self) -> &'static str {
        match &self.transport {
            Transport::Udp { .. } => "udp",
            Transport::Tcp(_) => "tcp",
            Transport::Tfrc(_) => "tfrc",
        }
    }

    pub fn tcp(&self) -> Option<&TcpFlow> {
        match &self.transport {
            Transport::Tcp(t) => Some(t),
            _ => None,
        }
    }

    pub fn tfrc(&self) -> Option<&TfrcFlow> {
        match &self.transport {
            Transport::Tfrc(t) => Some(t),
            _ => None,
        }
    }

    pub fn tcp_mut(&mut self) -> Option<&mut TcpFlow> {
        match &mut self.transport {
            Transport::Tcp(t) => Some(t),
            _ => None,
        }
    }
}

/// Where a packet was dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropSite {
    Port(PortId),
    /// A conditioner instance (policer, shaper).
    Conditioner(InstId),
}

/// Packets and bytes dropped of one flow at one site for one cause, in the window.
pub type DropLedger = HashMap<(FlowId, DropSite, DropCause), (u64, u64)>;

pub struct Simulation {
    pub now: SimTime,
    pub end: SimTime,
    pub window: Window,
    pub net: Network,
    pub flows: Vec<Flow>,
    /// The address of each flow's TCP connection (0 for other transports), for the
    /// look-ahead's prefetches only: never dereferenced, so a stale entry costs a useless
    /// prefetch, nothing else.
    tcp_at: Vec<usize>,
    pub pkts: PacketArena,
    pub drops: DropLedger,
    /// Traffic conditioners and the chains they sit in (empty: none).
    pub conditioners: Conditioners,
    pub events_processed: u64,
    events: EventQueue<Event>,
    /// Queued packets a discipline dropped while acting; reused, never reallocated.
    scratch: Vec<(PktId, DropCause)>,
    /// Packets a TCP connection emitted while acting; reused, never reallocated.
    tcp_out: Vec<PktId>,
    /// The scenario's capture points, and the captures opened for this run.
    pub capture_points: Vec<CapturePoint>,
    pub captures: Vec<Capture>,
    started: bool,
    /// Whether the loop prefetches what the next event reads ([`Self::prefetch_for`]):
    /// decided at the start, when the flows' state outgrows a core's cache
    /// ([`PREFETCH_ABOVE`]), unless set before ([`Self::set_prefetch_ahead`]).
    prefetch_ahead: Option<bool>,
}

/// The flows' state (flow records and TCP connections, in bytes) above which the loop
/// prefetches the next event's lines: a core's L2 (1 MiB on current x86 cores). Below,
/// the lines are in cache and the hints would only cost instructions (+3.6 % at 50 flows).
const PREFETCH_ABOVE: usize = 1 << 20;

impl Simulation {
    pub fn new(net: Network, flows: Vec<Flow>, window: Window) -> Self {
        assert!(
            flows.len() < Hop::MAX_ID as usize && net.ports.len() < Hop::MAX_ID as usize,
            "flows and ports are numbered below 2^30"
        );
        Simulation {
            now: SimTime::ZERO,
            end: window.end,
            window,
            net,
            tcp_at: flows
                .iter()
                .map(|f| f.tcp().map_or(0, |t| t as *const TcpFlow as usize))
                .collect(),
            flows,
            pkts: PacketArena::with_capacity(1024),
            drops: HashMap::new(),
            conditioners: Conditioners::default(),
            events_processed: 0,
            events: EventQueue::with_capacity(1024),
            scratch: Vec::with_capacity(16),
            tcp_out: Vec::with_capacity(64),
            capture_points: Vec::new(),
            captures: Vec::new(),
            started: false,
            prefetch_ahead: None,
        }
    }

    /// Opens a pcap file per capture point in `dir`, named `<name>-r<replication>.pcap`,
    /// and taps the ports. Without this call captures cost nothing.
    pub fn open_captures(&mut self, dir: &Path, replication: u64) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (i, cp) in self.capture_points.iter().enumerate() {
            let path = dir.join(format!("{}-r{replication}.pcap", cp.name));
            self.captures.push(Capture {
                name: cp.name.clone(),
                writer: Some(PcapWriter::create(&path, cp.snaplen)?),
            });
            for &p in &cp.tx {
                self.net.ports[p as usize].capture_tx.push(i as u16);
            }
            for &p in &cp.rx {
                self.net.ports[p as usize].capture_rx.push(i as u16);
            }
        }
        if self.started {
            self.derive_port_paths();
        }
        Ok(())
    }

    /// Flushes and closes the capture files; the first write error, if any.
    pub fn close_captures(&mut self) -> std::io::Result<()> {
        let mut first = Ok(());
        for c in &mut self.captures {
            if let Some(mut w) = c.writer.take() {
                if let Err(e) = w.finish() {
                    if first.is_ok() {
                        first = Err(std::io::Error::new(e.kind(), format!("{}: {e}", w.path.display())));
                    }
                }
            }
        }
        first
    }

    fn capture(&mut self, taps: &[u16], id: PktId) {
        let now = self.now;
        for &c in taps {
            if let Some(w) = &mut self.captures[c as usize].writer {
                w.write(now, &self.pkts[id]);
            }
        }
    }

    /// Prefetches what the next event reads, or not, whatever the flows' size (call before
    /// the run starts). A hint to the processor: the results are the same either way,
    /// which the golden test checks by running every scenario with it on.
    pub fn set_prefetch_ahead(&mut self, on: bool) {
        self.prefetch_ahead = Some(on);
    }

    /// Runs every event due before `until` (or the end of the run, whichever is first).
    /// Can be called repeatedly to advance in steps (for progress reports).
    pub fn run_until(&mut self, until: SimTime) {
        self.run_until_within(until, u64::MAX);
    }

    /// [`Simulation::run_until`], handling at most `budget` events: true if it reached
    /// `until`; false if it stopped after `budget` events at `self.now`, where events of
    /// that instant may remain (the next call handles them first, as one call would have).
    /// A bounded number of events between two returns, however little simulated time
    /// they take, is what lets a caller check for Ctrl-C ([`crate::task`]).
    pub fn run_until_within(&mut self, until: SimTime, budget: u64) -> bool {
        if !self.started {
            self.start();
        }
        let until = until.min(self.end);
        for _ in 0..budget {
            let Some((t, ev)) = self.events.pop_before(until) else {
                self.now = self.now.max(until);
                return true;
            };
            debug_assert!(t >= self.now, "event in the past");
            self.now = t;
            self.events_processed += 1;
            if self.prefetch_ahead == Some(true)
                && let Some(&next) = self.events.next_in_slot()
            {
                self.prefetch_for(next);
            }
            self.handle(ev);
        }
        false
    }

    /// Runs to the end and closes the time-weighted statistics.
    pub fn run(&mut self) {
        self.run_until(self.end);
        self.finish();
    }

    pub fn finish(&mut self) {
        for f in &mut self.flows {
            f.stats.delay.settle();
            f.stats.jitter.settle();
        }
        let (w, end) = (self.window, self.end);
        for port in &mut self.net.ports {
            port.close_counts();
            for c in &mut port.stats {
                c.finish(&w, end);
            }
        }
    }

    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    fn start(&mut self) {
        self.started = true;
        let tcp = self.flows.iter().filter(|f| f.tcp().is_some()).count();
        let state = self.flows.len() * size_of::<Flow>() + tcp * size_of::<TcpFlow>();
        self.prefetch_ahead.get_or_insert(state > PREFETCH_ABOVE);
        self.derive_port_paths();
        let (end, events) = (self.end, &mut self.events);
        for (i, f) in self.flows.iter_mut().enumerate() {
            let i = i as FlowId;
            if f.start < f.stop {
                events.push(f.start, Event::App(i));
                let stop = f.stop;
                if let (Some(t), true) = (f.tcp_mut(), stop < end) {
                    t.timers.set(TcpTimer::Stop, Some(stop));
                    t.timers.schedule(|at, timer| events.push(at, Event::Tcp(i, timer)));
                }
            }
        }
    }

    /// Sums up each port's optional steps (captures, wire loss, scripted drops,
    /// conditioner chains) in its [`PortPath`], read once per hop.
    fn derive_port_paths(&mut self) {
        for (i, port) in self.net.ports.iter_mut().enumerate() {
            let i = i as PortId;
            let flag = |on: bool, bit: u8| if on { bit } else { 0 };
            port.path = PortPath::new(
                flag(self.conditioners.has(ChainRef::Egress(i)), PortPath::EGRESS_CHAIN)
                    | flag(
                        !port.capture_tx.is_empty() || port.loss.is_some() || port.scripted.is_some(),
                        PortPath::TX_EXTRAS,
                    )
                    | flag(
                        !port.capture_rx.is_empty() || self.conditioners.has(ChainRef::Ingress(i)),
                        PortPath::RX_EXTRAS,
                    )
                    | flag(
                        self.net.nodes[port.node as usize].kind == NodeKind::Host,
                        PortPath::AT_SOURCE,
                    ),
            );
            port.lone_packet_limit = port
                .qdisc
                .lone_packet_limit()
                .map_or(0, |b| b.min(u32::MAX as u64) as u32);
        }
    }

    /// Asks for the first lines the event `ev` will read while the current one is handled
    /// (issue 24: at thousands of connections their state no longer fits the caches).
    #[inline(always)]
    fn prefetch_for(&self, ev: Event) {
        match ev {
            // The packet was prefetched as it became the oldest on its wire too, but on a
            // 10 Mbit/s access link that is 1.2 ms of simulated time before, thousands of
            // events at thousands of flows: long out of cache again.
            Event::Arrival(p, id, hop) => {
                self.pkts.prefetch(id);
                prefetch(&self.net.ports[p as usize]);
                match hop.beyond() {
                    Beyond::Port(q) => prefetch(&self.net.ports[q as usize]),
                    Beyond::Deliver(f, direction) => {
                        self.flows[f as usize].prefetch(direction);
                        // From the table, not the flow's line: reading the flow's box would
                        // wait for that line before the connection's could be asked for.
                        let tcp = self.tcp_at[f as usize];
                        if tcp != 0 {
                            TcpFlow::prefetch(tcp as *const TcpFlow, direction);
                        }
                    }
                }
            }
            Event::TxDone(p) | Event::Resume(p) => prefetch(&self.net.ports[p as usize]),
            Event::App(f) | Event::Feedback(f) | Event::Tcp(f, _) => prefetch(&self.flows[f as usize]),
            Event::Conditioner(_) => {}
        }
    }

    #[inline]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::App(f) => self.on_app(f),
            Event::TxDone(p) => self.on_tx_done(p),
            Event::Resume(p) => self.on_resume(p),
            Event::Arrival(p, id, hop) => self.on_arrival(p, id, hop),
            Event::Conditioner(i) => self.on_conditioner(i),
            Event::Feedback(f) => self.on_feedback_timer(f),
            Event::Tcp(f, timer) => self.on_tcp_timer(f, timer),
        }
    }

    /// A datagram application emits its next packet and schedules the one after; a TCP
    /// flow opens its connection and starts its application.
    fn on_app(&mut self, f: FlowId) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let (pkt, gap) = match &mut flow.transport {
            Transport::Udp { app, sender } => {
                let emission = app.next_emission(&mut flow.rng);
                (sender.datagram(emission.size, now), emission.gap)
            }
            Transport::Tfrc(t) => t.emit(now),
            Transport::Tcp(t) => {
                let mut io = TcpIo {
                    now,
                    pkts: &mut self.pkts,
                    out: &mut self.tcp_out,
                    rng: &mut flow.rng,
                };
                t.on_start(&mut io);
                let arm = t.timers.need_events();
                self.flush_tcp(f, arm);
                return;
            }
        };
        flow.stats.on_sent(&self.window, now, pkt.size);
        let next = now + gap;
        if next < flow.stop {
            self.events.push(next, Event::App(f));
        }
        let src = flow.src;
        let id = self.pkts.alloc(pkt);
        self.forward(src, id);
    }

    /// A packet is at `node`: deliver it if it is addressed here, otherwise route it on.
    #[inline(always)]
    fn receive(&mut self, node: NodeId, id: PktId) {
        if self.pkts[id].dst == node {
            self.deliver(id);
        } else {
            self.forward(node, id);
        }
    }

    /// Routes packet `id` from `node` on to its egress port there.
    #[inline]
    fn forward(&mut self, node: NodeId, id: PktId) {
        let port = route(&self.net.routes, node, self.pkts[id].dst);
        self.egress(port, id);
    }

    /// Packet `id` goes to egress port `port`: through the port's conditioner chain if it
    /// has one, then into its queue.
    #[inline(always)]
    fn egress(&mut self, port: PortId, id: PktId) {
        if self.net.ports[port as usize].path.has(PortPath::EGRESS_CHAIN) {
            self.condition(ChainRef::Egress(port), 0, false, id);
        } else {
            self.send_to_port(port, id);
        }
    }

    fn deliver(&mut self, id: PktId) {
        let p = &self.pkts[id];
        let f = p.flow;
        let flow = &mut self.flows[f as usize];
        if p.direction == Direction::Forward {
            flow.stats.on_delivered(&self.window, self.now, p);
        }
        match &mut flow.transport {
            Transport::Tcp(t) => {
                // The connection reads the packet where it lies and frees it.
                let mut io = TcpIo {
                    now: self.now,
                    pkts: &mut self.pkts,
                    out: &mut self.tcp_out,
                    rng: &mut flow.rng,
                };
                t.on_arrival(id, &mut io);
                let arm = t.timers.need_events();
                self.flush_tcp(f, arm);
            }
            Transport::Tfrc(t) => {
                let action = t.on_packet(self.now, p);
                self.pkts.free(id);
                self.tfrc_act(f, action);
            }
            Transport::Udp { .. } => self.pkts.free(id),
        }
    }

    /// A TCP timer's event popped.
    fn on_tcp_timer(&mut self, f: FlowId, timer: TcpTimer) {
        let flow = &mut self.flows[f as usize];
        if let Transport::Tcp(t) = &mut flow.transport {
            let mut io = TcpIo {
                now: self.now,
                pkts: &mut self.pkts,
                out: &mut self.tcp_out,
                rng: &mut flow.rng,
            };
            t.on_timer(timer, &mut io);
            let arm = t.timers.need_events();
            self.flush_tcp(f, arm);
        }
    }

    /// Routes the packets TCP flow `f` emitted, then, if `arm` (some timer of the flow
    /// needs an event; routing does not touch them), schedules its timers.
    fn flush_tcp(&mut self, f: FlowId, arm: bool) {
        let (now, w) = (self.now, self.window);
        // By index, as routing borrows the whole simulation (taking the list out and
        // putting it back cost more than the loop).
        let mut i = 0;
        while let Some(&id) = self.tcp_out.get(i) {
            let p = &self.pkts[id];
            let from = p.src;
            if p.direction == Direction::Forward {
                self.flows[f as usize].stats.on_sent(&w, now, p.size);
            }
            self.forward(from, id);
            i += 1;
        }
        self.tcp_out.clear();
        if !arm {
            return;
        }
        if let Transport::Tcp(t) = &mut self.flows[f as usize].transport {
            let events = &mut self.events;
            t.timers.schedule(|at, timer| events.push(at, Event::Tcp(f, timer)));
        }
    }

    /// Egress port `p`: a packet that finds the link free and passes straight through the
    /// empty discipline (most hops of a network: [`Port::passes_straight_through`]) goes
    /// onto the link at once; any other is classified, offered to the discipline and
    /// counted ([`Self::enqueue_in_discipline`]). The port and the packet are read once.
    /// A transmission ending now occupies the link for the packets arriving now
    /// ([`Port::link_free`], docs/ties.md).
    #[inline(always)]
    fn enqueue(&mut self, p: PortId, id: PktId) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        let pkt = &mut self.pkts[id];
        pkt.enqueued_at = now;
        // A packet arriving at a drop-tail FIFO at the instant the transmission before it
        // ends starts at once too, counted as waiting for the later arrivals of that
        // instant (`Port::starts_at_its_tie`: every hop of a chain of links of one rate).
        let alone = port.link_free(now) && port.passes_straight_through(pkt.size);
        if !(alone || port.starts_at_its_tie(now, pkt.size)) {
            return self.enqueue_in_discipline(p, id);
        }
        self.pass_straight_through(p, id);
    }

    /// Packet `id`, alone at port `p`, starts its transmission at once, counted as
    /// passing straight through the empty discipline.
    #[inline(always)]
    fn pass_straight_through(&mut self, p: PortId, id: PktId) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        let pkt = &mut self.pkts[id];
        debug_assert_eq!(
            port.qdisc.len_packets(),
            0,
            "a FIFO waits only with a pending end of transmission"
        );
        (pkt.queue, pkt.precedence) = (0, 0);
        let size = pkt.size;
        port.passed.count(&self.window, now, size);
        // Its lone transmission: nothing waits after it.
        port.start_tx(now, size);
        if port.path.has(PortPath::TX_EXTRAS) {
            return self.onto_the_link_with_extras(p, id);
        }
        let hop = hop_beyond(&self.net.routes, port.peer, pkt);
        enter_wire(port, p, id, hop, &mut self.pkts, &mut self.events);
    }

    /// The packet waits, or meets a discipline that decides on it: classify, ask the
    /// discipline, count, and start the link if it is free.
    #[inline(never)]
    fn enqueue_in_discipline(&mut self, p: PortId, id: PktId) {
        let (now, w) = (self.now, self.window);
        let port = &mut self.net.ports[p as usize];
        let link_free = port.link_free(now);
        if link_free {
            // The link went free (no event marked that moment): a round robin ends its
            // visit if nothing waits.
            port.qdisc.on_link_free();
        }
        port.qdisc.classify(&mut self.pkts, id);
        let pkt = &self.pkts[id];
        let (queue, prec, size, ecn) = (pkt.queue, pkt.precedence, pkt.size, pkt.ecn);
        port.class_stats(queue, prec).on_arrival(&w, now, size);
        let lone = (port.lone_at == now).then_some(port.tx_memo_size);
        let mut ctx = QueueCtx {
            now,
            pkts: &mut self.pkts,
            rng: &mut port.rng,
            dropped: &mut self.scratch,
        };
        let verdict = match lone {
            None => port.qdisc.enqueue(id, &mut ctx),
            Some(size) => port.qdisc.enqueue_behind(size, id, &mut ctx),
        };
        match verdict {
            Verdict::Admit => {
                let c = port.class_stats(queue, prec);
                c.on_admitted(&w, now, size);
                if ecn != Ecn::Ce && self.pkts[id].ecn == Ecn::Ce {
                    c.on_marked(&w, now);
                }
            }
            Verdict::Drop(cause) => {
                port.class_stats(queue, prec).on_refused(&w, now, cause, size);
                self.drop(id, DropSite::Port(p), cause);
            }
        }
        self.drop_from_queue(p);
        let port = &mut self.net.ports[p as usize];
        if port.tx_pending || port.qdisc.len_packets() == 0 {
            // The end of the current transmission is scheduled and will take the next
            // packet, or nothing waits.
        } else if link_free {
            self.transmit_next(p);
        } else {
            // Sending a packet that found the queue empty (its end had no event), or ending
            // one now: the end of transmission, after the other arrivals of its instant,
            // starts the next packet.
            port.tx_pending = true;
            self.events.push(port.tx_end(), Event::TxDone(p));
        }
    }

    /// The link of port `p` is free: serialize the next packet the discipline gives. The
    /// packet enters the wire now, due at the far node after serialization and propagation
    /// (or is lost on it); the end of its transmission is an event only if another packet
    /// waits for the link.
    fn transmit_next(&mut self, p: PortId) {
        let (now, w) = (self.now, self.window);
        let port = &mut self.net.ports[p as usize];
        let mut ctx = QueueCtx {
            now,
            pkts: &mut self.pkts,
            rng: &mut port.rng,
            dropped: &mut self.scratch,
        };
        let next = port.qdisc.dequeue(&mut ctx);
        if let Some(id) = next {
            let pkt = &self.pkts[id];
            let (queue, prec, size) = (pkt.queue, pkt.precedence, pkt.size);
            port.class_stats(queue, prec).on_removed(&w, now, size, None);
            self.start_transmission(p, id);
        } else if port.qdisc.len_packets() > 0 {
            self.schedule_resume(p);
        }
        self.drop_from_queue(p);
    }

    /// The discipline of port `p` held the free link back while packets wait (CBQ): ask it
    /// again when it says, unless an earlier resumption is pending.
    #[cold]
    fn schedule_resume(&mut self, p: PortId) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        let Some(at) = port.qdisc.resume_at(now) else {
            return; // the next arrival asks
        };
        if port.resume_at <= now || at < port.resume_at {
            port.resume_at = at;
            self.events.push(at, Event::Resume(p));
        }
    }

    /// A resumption of port `p` falls due: if it is the pending one and the link is still
    /// free (an arrival may have started it), ask the discipline for a packet. A busy link
    /// asks at the end of its transmission anyway.
    fn on_resume(&mut self, p: PortId) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        if port.resume_at != now {
            return; // superseded by an earlier one
        }
        port.resume_at = SimTime::MAX;
        if port.link_free(now) && port.qdisc.len_packets() > 0 {
            self.transmit_next(p);
        }
    }

    /// Port `p`'s link starts serializing packet `id`, which has left the queue.
    #[inline]
    fn start_transmission(&mut self, p: PortId, id: PktId) {
        let port = &mut self.net.ports[p as usize];
        port.start_tx(self.now, self.pkts[id].size);
        if port.qdisc.len_packets() > 0 {
            port.tx_pending = true;
            self.events.push(port.tx_end(), Event::TxDone(p));
        }
        self.onto_the_link(p, id);
    }

    /// The packet whose transmission starts goes through the port's optional steps, then
    /// onto the wire.
    #[inline(always)]
    fn onto_the_link(&mut self, p: PortId, id: PktId) {
        let port = &mut self.net.ports[p as usize];
        if port.path.has(PortPath::TX_EXTRAS) {
            return self.onto_the_link_with_extras(p, id);
        }
        let hop = hop_beyond(&self.net.routes, port.peer, &self.pkts[id]);
        enter_wire(port, p, id, hop, &mut self.pkts, &mut self.events);
    }

    /// [`Self::onto_the_link`] at a port that captures, loses or drops by script.
    #[cold]
    #[inline(never)]
    fn onto_the_link_with_extras(&mut self, p: PortId, id: PktId) {
        if !self.captured_or_lost(p, id) {
            let port = &mut self.net.ports[p as usize];
            let hop = hop_beyond(&self.net.routes, port.peer, &self.pkts[id]);
            enter_wire(port, p, id, hop, &mut self.pkts, &mut self.events);
        }
    }

    /// The optional steps of a packet leaving port `p`: its captures, then loss on the
    /// wire or a scripted drop. True if the packet was lost (it is counted and freed).
    fn captured_or_lost(&mut self, p: PortId, id: PktId) -> bool {
        let port = &mut self.net.ports[p as usize];
        if !port.capture_tx.is_empty() {
            let taps = std::mem::take(&mut port.capture_tx);
            self.capture(&taps, id);
            self.net.ports[p as usize].capture_tx = taps;
        }
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        let mut lost = match port.loss.as_deref_mut() {
            Some((prob, rng)) => (rng.random::<f64>() < *prob).then_some(DropCause::LinkLoss),
            None => None,
        };
        if let Some(s) = &mut port.scripted {
            if s.matches(&self.pkts[id]) && lost.is_none() {
                lost = Some(DropCause::Scripted);
            }
        }
        let Some(cause) = lost else {
            return false;
        };
        let pkt = &self.pkts[id];
        let (queue, prec, size) = (pkt.queue, pkt.precedence, pkt.size);
        port.class_stats(queue, prec).on_refused(&self.window, now, cause, size);
        self.drop(id, DropSite::Port(p), cause);
        true
    }

    /// Counts and frees the queued packets the discipline of port `p` dropped while acting.
    #[inline]
    fn drop_from_queue(&mut self, p: PortId) {
        if !self.scratch.is_empty() {
            self.count_queue_drops(p);
        }
    }

    #[cold]
    fn count_queue_drops(&mut self, p: PortId) {
        while let Some((id, cause)) = self.scratch.pop() {
            let (now, w) = (self.now, self.window);
            let pkt = &self.pkts[id];
            let (queue, prec, size) = (pkt.queue, pkt.precedence, pkt.size);
            self.net.ports[p as usize]
                .class_stats(queue, prec)
                .on_removed(&w, now, size, Some(cause));
            self.drop(id, DropSite::Port(p), cause);
        }
    }

    /// The last bit of port `p`'s packet left while another waits: send it. (A packet
    /// that passed straight through at this instant, `Port::lone_at`, no longer waits: its
    /// transmission took 0 ns and has ended.)
    fn on_tx_done(&mut self, p: PortId) {
        let port = &mut self.net.ports[p as usize];
        (port.tx_pending, port.lone_at) = (false, SimTime::MAX);
        self.transmit_next(p);
    }

    /// Packet `id`, the oldest on port `p`'s wire, reaches the far node: delivered there or
    /// sent on through the port `hop` names (decided when it entered the wire).
    fn on_arrival(&mut self, p: PortId, id: PktId, hop: Hop) {
        let port = &mut self.net.ports[p as usize];
        let next = port.leave_wire(&mut self.pkts[id]);
        if next.next != PktId::NONE {
            self.pkts.prefetch(next.next);
            self.events.push(next.at, Event::Arrival(p, next.next, next.hop));
        }
        if port.path.has(PortPath::RX_EXTRAS) {
            self.arrive_with_extras(p, id);
        } else {
            match hop.beyond() {
                Beyond::Port(q) => self.egress(q, id),
                Beyond::Deliver(..) => self.deliver(id),
            }
        }
    }

    /// Packet `id` reaches the peer of port `p`, which captures it or runs an ingress
    /// chain.
    #[cold]
    #[inline(never)]
    fn arrive_with_extras(&mut self, p: PortId, id: PktId) {
        let port = &mut self.net.ports[p as usize];
        if !port.capture_rx.is_empty() {
            let taps = std::mem::take(&mut port.capture_rx);
            self.capture(&taps, id);
            self.net.ports[p as usize].capture_rx = taps;
        }
        let chain = ChainRef::Ingress(p);
        if self.conditioners.has(chain) {
            self.condition(chain, 0, false, id);
        } else {
            let peer = self.net.ports[p as usize].peer;
            self.receive(peer, id);
        }
    }

    fn drop(&mut self, id: PktId, site: DropSite, cause: DropCause) {
        let (now, w) = (self.now, self.window);
        let pkt = &self.pkts[id];
        let (flow, size, color) = (pkt.flow, pkt.size, pkt.color);
        let f = &mut self.flows[flow as usize];
        if let Transport::Tcp(t) = &mut f.transport {
            t.on_dropped(pkt, now);
        }
        // Flow drop counters count what the source sent; a TCP flow's ACKs are apart.
        if pkt.direction == Direction::Forward {
            f.stats.on_dropped(&w, now, cause, size);
            f.stats.on_dropped_color(&w, now, color);
        }
        if w.contains(now) {
            let e = self.drops.entry((flow, site, cause)).or_default();
            e.0 += 1;
            e.1 += size as u64;
        }
        self.pkts.free(id);
    }

    /// The TFRC receiver of flow `f` asked for feedback now and/or a timer.
    fn tfrc_act(&mut self, f: FlowId, action: RxAction) {
        let Transport::Tfrc(t) = &mut self.flows[f as usize].transport else {
            unreachable!("tfrc_act is called for TFRC flows")
        };
        if let Some(at) = t.arm(&action) {
            self.events.push(at, Event::Feedback(f));
        }
        if action.send_feedback {
            let pkt = t.feedback_packet(self.now);
            let from = pkt.src;
            let id = self.pkts.alloc(pkt);
            self.forward(from, id);
        }
    }

    /// The feedback timer of flow `f`'s TFRC receiver.
    fn on_feedback_timer(&mut self, f: FlowId) {
        let action = match &mut self.flows[f as usize].transport {
            Transport::Tfrc(t) => t.on_timer(self.now),
            _ => None,
        };
        if let Some(action) = action {
            self.tfrc_act(f, action);
        }
    }
}

/// Packet `id` enters the wire of port `p` (`port`); the first on an empty wire gets the
/// arrival event the others wait behind.
#[inline(always)]
fn enter_wire(port: &mut Port, p: PortId, id: PktId, hop: Hop, pkts: &mut PacketArena, events: &mut EventQueue<Event>) {
    if let Some(at) = port.enter_wire(id, hop, pkts) {
        events.push(at, Event::Arrival(p, id, hop));
    }
}

/// The egress port at node `at` of a packet addressed to `dst` (not `at`).
#[inline(always)]
fn route(routes: &Routes, at: NodeId, dst: NodeId) -> PortId {
    // The scenario builder refuses flows whose routes do not connect both ways.
    routes
        .next_port(at, dst)
        .expect("route checked when the scenario was built")
}

/// Where packet `pkt` goes at node `at`, the far end of the wire it enters: delivered
/// there to its flow, or the egress port its route takes.
#[inline(always)]
fn hop_beyond(routes: &Routes, at: NodeId, pkt: &Packet) -> Hop {
    if pkt.dst == at {
        Hop::deliver(pkt.flow, pkt.direction)
    } else {
        Hop::port(route(routes, at, pkt.dst))
    }
}
