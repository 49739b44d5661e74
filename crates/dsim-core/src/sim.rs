//! The simulation: the path of a packet through the network, driven by events.
//!
//! app -> transport -> host egress port -> link -> router: route lookup -> egress port:
//! classifier -> queue discipline admit/drop -> scheduler -> transmission -> propagation ->
//! next node ... -> receiver. Every drop is recorded with where and why.

mod conditioning;

use std::collections::HashMap;

use rand::RngExt;

use crate::app::App;
use crate::conditioner::{ChainRef, Conditioners, InstId};
use crate::engine::rng::Rng;
use crate::engine::{Event, EventQueue};
use crate::net::Network;
use crate::packet::{Direction, Ecn, FlowId, NodeId, PacketArena, PktId, PortId};
use crate::sched::{QueueCtx, Verdict};
use crate::stats::{DropCause, FlowStats, Window};
use crate::time::SimTime;
use crate::transport::tfrc::RxAction;
use crate::transport::udp::UdpSender;

/// A flow: an application at `src` sending to `dst` through a transport.
pub struct Flow {
    pub name: String,
    /// The `[[flow]]` entry this flow came from (several when `count > 1`).
    pub group: String,
    pub src: NodeId,
    pub dst: NodeId,
    pub start: SimTime,
    pub stop: SimTime,
    pub app: App,
    pub sender: UdpSender,
    pub rng: Rng,
    pub stats: FlowStats,
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
    pub pkts: PacketArena,
    pub drops: DropLedger,
    /// Traffic conditioners and the chains they sit in (empty: none).
    pub conditioners: Conditioners,
    pub events_processed: u64,
    events: EventQueue,
    /// Queued packets a discipline dropped while acting; reused, never reallocated.
    scratch: Vec<(PktId, DropCause)>,
    started: bool,
}

impl Simulation {
    pub fn new(net: Network, flows: Vec<Flow>, window: Window) -> Self {
        Simulation {
            now: SimTime::ZERO,
            end: window.end,
            window,
            net,
            flows,
            pkts: PacketArena::with_capacity(1024),
            drops: HashMap::new(),
            conditioners: Conditioners::default(),
            events_processed: 0,
            events: EventQueue::with_capacity(1024),
            scratch: Vec::with_capacity(16),
            started: false,
        }
    }

    /// Runs every event due before `until` (or the end of the run, whichever is first).
    /// Can be called repeatedly to advance in steps (for progress reports).
    pub fn run_until(&mut self, until: SimTime) {
        if !self.started {
            self.start();
        }
        let until = until.min(self.end);
        while let Some(t) = self.events.peek_time() {
            if t >= until {
                break;
            }
            let (t, ev) = self.events.pop().expect("peeked");
            debug_assert!(t >= self.now, "event in the past");
            self.now = t;
            self.events_processed += 1;
            self.handle(ev);
        }
        self.now = self.now.max(until);
    }

    /// Runs to the end and closes the time-weighted statistics.
    pub fn run(&mut self) {
        self.run_until(self.end);
        self.finish();
    }

    pub fn finish(&mut self) {
        let (w, end) = (self.window, self.end);
        for port in &mut self.net.ports {
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
        for (i, f) in self.flows.iter().enumerate() {
            if f.start < f.stop {
                self.events.push(f.start, Event::App(i as FlowId));
            }
        }
    }

    #[inline]
    fn handle(&mut self, ev: Event) {
        match ev {
            Event::App(f) => self.on_app(f),
            Event::TxDone(p) => self.on_tx_done(p),
            Event::Arrival(p) => self.on_arrival(p),
            Event::Conditioner(i) => self.on_conditioner(i),
            Event::Feedback(f) => self.on_feedback_timer(f),
        }
    }

    /// A datagram application emits its next packet and schedules the one after.
    fn on_app(&mut self, f: FlowId) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if let App::Adaptive(a) = &mut flow.app {
            a.before_send(now);
        }
        let emission = flow.app.next_emission(&mut flow.rng);
        let mut pkt = flow.sender.datagram(emission.size, now);
        if let App::Adaptive(a) = &mut flow.app {
            a.tag(&mut pkt);
        }
        flow.stats.on_sent(&self.window, now, emission.size);
        let next = now + emission.gap;
        if next < flow.stop {
            self.events.push(next, Event::App(f));
        }
        let src = flow.src;
        let id = self.pkts.alloc(pkt);
        self.forward(src, id);
    }

    /// A packet is at `node`: deliver it if it is addressed here, otherwise route it on.
    #[inline]
    fn receive(&mut self, node: NodeId, id: PktId) {
        if self.pkts[id].dst == node {
            self.deliver(id);
        } else {
            self.forward(node, id);
        }
    }

    #[inline]
    fn forward(&mut self, node: NodeId, id: PktId) {
        let dst = self.pkts[id].dst;
        // The scenario builder refuses flows whose routes do not connect both ways.
        let port = self
            .net
            .routes
            .next_port(node, dst)
            .expect("route checked when the scenario was built");
        let chain = ChainRef::Egress(port);
        if self.conditioners.has(chain) {
            self.condition(chain, 0, false, id);
        } else {
            self.send_to_port(port, id);
        }
    }

    fn deliver(&mut self, id: PktId) {
        let p = &self.pkts[id];
        if let App::Adaptive(_) = self.flows[p.flow as usize].app {
            return self.deliver_adaptive(id);
        }
        self.flows[p.flow as usize]
            .stats
            .on_delivered(&self.window, self.now, p);
        self.pkts.free(id);
    }

    /// Egress port `p`: classify, ask the discipline, count, and start the link if idle.
    fn enqueue(&mut self, p: PortId, id: PktId) {
        let (now, w) = (self.now, self.window);
        let port = &mut self.net.ports[p as usize];
        port.qdisc.classify(&mut self.pkts, id);
        let pkt = &mut self.pkts[id];
        pkt.enqueued_at = now;
        let (queue, prec, size, ecn) = (pkt.queue, pkt.precedence, pkt.size, pkt.ecn);
        port.class_stats(queue, prec).on_arrival(&w, now, size);
        let mut ctx = QueueCtx {
            now,
            pkts: &mut self.pkts,
            rng: &mut port.rng,
            dropped: &mut self.scratch,
        };
        match port.qdisc.enqueue(id, &mut ctx) {
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
        if self.net.ports[p as usize].transmitting.is_none() {
            self.transmit_next(p);
        }
    }

    /// The link of port `p` is free: serialize the next packet the discipline gives.
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
            port.transmitting = Some(id);
            let done = now + port.rate.tx_time(size as u64);
            self.events.push(done, Event::TxDone(p));
        }
        self.drop_from_queue(p);
    }

    /// Counts and frees the queued packets the discipline of port `p` dropped while acting.
    fn drop_from_queue(&mut self, p: PortId) {
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

    /// The last bit left port `p`: the packet propagates (or is lost on the wire).
    fn on_tx_done(&mut self, p: PortId) {
        let now = self.now;
        let port = &mut self.net.ports[p as usize];
        let id = port.transmitting.take().expect("TxDone for an idle port");
        let lost = match &mut port.loss {
            Some((prob, rng)) => rng.random::<f64>() < *prob,
            None => false,
        };
        if lost {
            let pkt = &self.pkts[id];
            let (queue, prec, size) = (pkt.queue, pkt.precedence, pkt.size);
            port.class_stats(queue, prec)
                .on_refused(&self.window, now, DropCause::LinkLoss, size);
            self.drop(id, DropSite::Port(p), DropCause::LinkLoss);
        } else {
            let arrival = now + port.delay;
            port.in_flight.push_back((arrival, id));
            if port.in_flight.len() == 1 {
                self.events.push(arrival, Event::Arrival(p));
            }
        }
        self.transmit_next(p);
    }

    /// The oldest packet on port `p`'s wire reaches the far node.
    fn on_arrival(&mut self, p: PortId) {
        let port = &mut self.net.ports[p as usize];
        let (_, id) = port.in_flight.pop_front().expect("Arrival with nothing in flight");
        if let Some(&(next, _)) = port.in_flight.front() {
            self.events.push(next, Event::Arrival(p));
        }
        let peer = port.peer;
        let chain = ChainRef::Ingress(p);
        if self.conditioners.has(chain) {
            self.condition(chain, 0, false, id);
        } else {
            self.receive(peer, id);
        }
    }

    fn drop(&mut self, id: PktId, site: DropSite, cause: DropCause) {
        let (now, w) = (self.now, self.window);
        let pkt = &self.pkts[id];
        let (flow, size, color) = (pkt.flow, pkt.size, pkt.color);
        // A flow's counters are its data's; feedback and ACK losses are in the ledger only.
        if pkt.direction == Direction::Forward {
            let stats = &mut self.flows[flow as usize].stats;
            stats.on_dropped(&w, now, cause, size);
            stats.on_dropped_color(&w, now, color);
        }
        if w.contains(now) {
            let e = self.drops.entry((flow, site, cause)).or_default();
            e.0 += 1;
            e.1 += size as u64;
        }
        self.pkts.free(id);
    }

    // -----------------------------------------------------------------------------------
    // Adaptive flows (app/adaptive.rs): a TFRC receiver at the destination and feedback
    // packets back to the source. Kept apart from the one-way datagram path above.

    /// A packet of an adaptive flow arrived at its destination: data at the receiver,
    /// feedback at the sender.
    fn deliver_adaptive(&mut self, id: PktId) {
        let now = self.now;
        let p = &self.pkts[id];
        let f = p.flow;
        let flow = &mut self.flows[f as usize];
        let App::Adaptive(a) = &mut flow.app else {
            unreachable!("deliver_adaptive is called for adaptive flows")
        };
        let action = match p.direction {
            Direction::Forward => {
                flow.stats.on_delivered(&self.window, now, p);
                a.on_data(now, p)
            }
            Direction::Reverse => {
                a.on_feedback(now, p.index);
                RxAction::default()
            }
        };
        self.pkts.free(id);
        self.adaptive_act(f, action);
    }

    /// The receiver of flow `f` asked for feedback now and/or a timer.
    fn adaptive_act(&mut self, f: FlowId, action: RxAction) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let App::Adaptive(a) = &mut flow.app else {
            unreachable!("adaptive_act is called for adaptive flows")
        };
        if let Some(t) = action.timer {
            a.receiver.timer_at = Some(t);
            self.events.push(t, Event::Feedback(f));
        }
        if action.send_feedback {
            let pkt = a.feedback_packet(now, f, flow.dst, flow.src, flow.sender.dscp);
            let dst = flow.dst;
            let id = self.pkts.alloc(pkt);
            self.forward(dst, id);
        }
    }

    /// The feedback timer of flow `f`'s receiver: stale unless it is the one armed last.
    fn on_feedback_timer(&mut self, f: FlowId) {
        let now = self.now;
        let App::Adaptive(a) = &mut self.flows[f as usize].app else {
            return;
        };
        if a.receiver.timer_at != Some(now) {
            return;
        }
        let action = a.on_timer(now);
        self.adaptive_act(f, action);
    }
}
