//! The conditioner chains in the packet path: run a packet through a chain, hold it in a
//! shaper and resume it when the shaper releases it (`Event::Conditioner`), count what
//! leaves a source host by colour.

use super::event::Event;
use super::{DropSite, Simulation};
use crate::conditioner::{ChainRef, Cont, InstId, Outcome};
use crate::net::port::PortPath;
use crate::packet::{Direction, PktId, PortId};
use crate::time::SimTime;

impl Simulation {
    /// Runs packet `id` through the conditioner chain from block `from`, then sends it on
    /// its way (unless a block held or dropped it).
    pub(super) fn condition(&mut self, chain: ChainRef, from: usize, after_shaper: bool, id: PktId) {
        let (now, w) = (self.now, self.window);
        let start = Cont {
            chain,
            index: from as u16,
        };
        match self.conditioners.run(start, after_shaper, id, &mut self.pkts, now, &w) {
            Outcome::Pass => match chain {
                ChainRef::Egress(p) => self.send_to_port(p, id),
                ChainRef::Ingress(p) => {
                    let node = self.net.ports[p as usize].peer;
                    self.receive(node, id);
                }
            },
            Outcome::Held { inst, wake } => {
                if let Some(t) = wake {
                    self.wake_conditioner(inst, t);
                }
            }
            Outcome::Drop { inst, cause } => self.drop(id, DropSite::Conditioner(inst), cause),
        }
    }

    fn wake_conditioner(&mut self, inst: InstId, t: SimTime) {
        if self.conditioners.arm(inst, t) {
            self.events.push(t, Event::Conditioner(inst));
        }
    }

    /// A shaper may release packets: each resumes its chain right after the shaper.
    pub(super) fn on_conditioner(&mut self, inst: InstId) {
        let now = self.now;
        if !self.conditioners.fire(inst, now) {
            return;
        }
        while let Some((id, cont)) = self.conditioners.release(inst, now, &self.window) {
            self.condition(cont.chain, cont.index as usize, true, id);
        }
        if let Some(t) = self.conditioners.next_release(inst, now) {
            self.wake_conditioner(inst, t);
        }
    }

    /// The packet enters egress port `p`'s queue; one leaving its source host is counted
    /// by the colour the host's conditioners gave it. Inlined into every hop: a call would
    /// save and restore six registers around the few instructions of a straight-through
    /// packet.
    #[inline(always)]
    pub(super) fn send_to_port(&mut self, p: PortId, id: PktId) {
        let pkt = &self.pkts[id];
        let port = &self.net.ports[p as usize];
        if pkt.direction == Direction::Forward && port.path.has(PortPath::AT_SOURCE) {
            debug_assert_eq!(pkt.src, port.node, "hosts send only what they originate");
            self.flows[pkt.flow as usize]
                .stats
                .on_left_source(&self.window, self.now, pkt.color);
        }
        self.enqueue(p, id);
    }
}
