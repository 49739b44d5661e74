//! Queue disciplines: what an egress port holds between its classifier and its link.
//!
//! The contract (DESIGN.md, "Contracts"): `enqueue(pkt) -> Admit | Drop(cause)` for the
//! arriving packet, `dequeue() -> Option<pkt>` when the link is free, and the occupancy.
//! A discipline that drops packets already queued (at dequeue time, say) reports them in
//! `ctx.dropped`. Disciplines never count statistics; the port does, by cause.
//! Composite disciplines (several classified queues behind a scheduler) implement the same
//! contract, so a port does not know which one it holds.
//!
//! Disciplines: [`fifo`] (one queue); over classified queues ([`classes`]: DSCP -> queue,
//! the queue's AQM -> precedence): [`priority`] (strict priority, optional token-bucket
//! limiter per class, [`rate_limiter`]), [`wrr`] (weights in packets), [`drr`] (quanta in
//! bytes), [`cbq`] (one class first up to a rate, all classes in a WRR / DRR share).
//! Multi-queue disciplines rely on the port calling `classify` before `enqueue`.

pub mod cbq;
pub mod classes;
pub mod drr;
pub mod dsd;
pub mod fifo;
pub mod priority;
#[cfg(test)]
mod properties;
pub mod wrr;

pub use cbq::{Cbq, CbqSpec};
pub use classes::ClassQueues;
pub use drr::{Drr, DrrSpec};
pub use dsd::Dsd;
pub use dsd::spec::DsdSpec;
pub use fifo::Fifo;
pub use priority::{Priority, PrioritySpec};
pub use wrr::{Wrr, WrrSpec};

use serde::Serialize;

use crate::aqm::{Aqm, AqmQueue, DroptailSpec, MredSpec, RedSpec};
use crate::discipline::{QueueCtx, Verdict};
use crate::packet::{PacketArena, PktId};
use crate::params::{ConfigError, KeyPath};
use crate::time::Rate;

/// The queue discipline of an egress port (or of a scheduler's class), chosen by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueueSpec {
    Droptail(DroptailSpec),
    Priority(PrioritySpec),
    Wrr(WrrSpec),
    Drr(DrrSpec),
    Cbq(CbqSpec),
    Red(RedSpec),
    Mred(MredSpec),
    Dsd(DsdSpec),
}
crate::tagged_enum!(QueueSpec {
    Droptail(DroptailSpec) = "droptail",
    Priority(PrioritySpec) = "priority",
    Wrr(WrrSpec) = "wrr",
    Drr(DrrSpec) = "drr",
    Cbq(CbqSpec) = "cbq",
    Red(RedSpec) = "red",
    Mred(MredSpec) = "mred",
    Dsd(DsdSpec) = "dsd",
});

impl Default for QueueSpec {
    /// 100 packets of drop-tail FIFO.
    fn default() -> Self {
        QueueSpec::Droptail(DroptailSpec::default())
    }
}

impl QueueSpec {
    /// The discipline this table declares for a port of `rate` (RED derives its typical
    /// transmission time from it).
    pub fn qdisc(&self, rate: Rate, path: &KeyPath) -> Result<Qdisc, ConfigError> {
        Ok(match self {
            QueueSpec::Priority(s) => Qdisc::Priority(s.qdisc(rate, path)?),
            QueueSpec::Wrr(s) => Qdisc::Wrr(s.qdisc(rate, path)?),
            QueueSpec::Drr(s) => Qdisc::Drr(s.qdisc(rate, path)?),
            QueueSpec::Cbq(s) => Qdisc::Cbq(s.qdisc(rate, path)?),
            QueueSpec::Dsd(s) => Qdisc::Dsd(Box::new(Dsd::new(s.params(rate, path)?, rate))),
            QueueSpec::Droptail(_) | QueueSpec::Red(_) | QueueSpec::Mred(_) => Qdisc::Fifo(Fifo {
                queue: self.single_queue(rate, path)?,
            }),
        })
    }

    /// The single queue (drop-tail or an AQM) this table declares: a port's FIFO or a
    /// scheduler's class. A new AQM needs a new arm here.
    pub fn single_queue(&self, rate: Rate, path: &KeyPath) -> Result<AqmQueue, ConfigError> {
        match self {
            QueueSpec::Droptail(d) => d.queue(path),
            QueueSpec::Red(r) => r.queue(rate, path),
            QueueSpec::Mred(m) => m.queue(rate, path),
            QueueSpec::Priority(_) | QueueSpec::Wrr(_) | QueueSpec::Drr(_) | QueueSpec::Cbq(_) | QueueSpec::Dsd(_) => {
                Err(ConfigError::new(
                    path.key("type"),
                    crate::params::render(self.type_name()),
                    "a scheduler class holds a single queue (droptail or an AQM), not another scheduler",
                ))
            }
        }
    }

    /// The `type` of this table as written in a scenario.
    pub fn type_name(&self) -> &'static str {
        match self {
            QueueSpec::Droptail(_) => "droptail",
            QueueSpec::Priority(_) => "priority",
            QueueSpec::Wrr(_) => "wrr",
            QueueSpec::Drr(_) => "drr",
            QueueSpec::Cbq(_) => "cbq",
            QueueSpec::Red(_) => "red",
            QueueSpec::Mred(_) => "mred",
            QueueSpec::Dsd(_) => "dsd",
        }
    }
}

#[derive(Debug, Clone)]
pub enum Qdisc {
    Fifo(Fifo),
    /// Strict priority over classified queues, optional token-bucket limiter per class.
    Priority(Priority),
    /// Weighted round robin (packets) over classified queues.
    Wrr(Wrr),
    /// Deficit round robin (bytes) over classified queues.
    Drr(Drr),
    /// One class with priority up to a rate, every class in a WRR / DRR share.
    Cbq(Cbq),
    /// ABE's Duplicate Scheduling with Deadlines: queue 0 blue, queue 1 green.
    Dsd(Box<Dsd>),
}

impl Qdisc {
    /// Number of queues (rows of the per-queue statistics).
    pub fn queues(&self) -> usize {
        match self {
            Qdisc::Fifo(_) => 1,
            Qdisc::Priority(s) => s.classes.len(),
            Qdisc::Wrr(s) => s.classes.len(),
            Qdisc::Drr(s) => s.classes.len(),
            Qdisc::Cbq(s) => s.classes.len(),
            Qdisc::Dsd(_) => 2,
        }
    }

    /// Number of drop precedences per queue.
    pub fn precedences(&self) -> usize {
        match self {
            Qdisc::Fifo(f) => f.queue.precedences(),
            Qdisc::Priority(s) => s.classes.precedences(),
            Qdisc::Wrr(s) => s.classes.precedences(),
            Qdisc::Drr(s) => s.classes.precedences(),
            Qdisc::Cbq(s) => s.classes.precedences(),
            Qdisc::Dsd(_) => 1,
        }
    }

    /// Sets `pkt.queue` and `pkt.precedence` for the packet about to be enqueued; the
    /// precedence comes from the queue's AQM (its DSCP -> precedence map).
    #[inline]
    pub fn classify(&self, pkts: &mut PacketArena, id: PktId) {
        match self {
            Qdisc::Fifo(f) => {
                let p = &mut pkts[id];
                (p.queue, p.precedence) = (0, f.queue.precedence_of(p.dscp))
            }
            Qdisc::Priority(s) => s.classes.classify(&mut pkts[id]),
            Qdisc::Wrr(s) => s.classes.classify(&mut pkts[id]),
            Qdisc::Drr(s) => s.classes.classify(&mut pkts[id]),
            Qdisc::Cbq(s) => s.classes.classify(&mut pkts[id]),
            Qdisc::Dsd(q) => q.classify(pkts, id),
        }
    }

    /// The discipline's AQM queues with their queue index (for results: time series).
    pub fn aqm_queues(&self) -> Vec<(u8, &AqmQueue)> {
        match self {
            Qdisc::Fifo(f) => vec![(0, &f.queue)],
            Qdisc::Priority(s) => s.classes.aqm_queues(),
            Qdisc::Wrr(s) => s.classes.aqm_queues(),
            Qdisc::Drr(s) => s.classes.aqm_queues(),
            Qdisc::Cbq(s) => s.classes.aqm_queues(),
            Qdisc::Dsd(_) => Vec::new(),
        }
    }

    /// The RED / MRED average that judges the packets of `queue` and `precedence` (for
    /// DSD, RED's on the virtual queue), and its unit; None without RED.
    pub fn red_average(&self, queue: u8, precedence: u8) -> Option<(f64, &'static str)> {
        if let Qdisc::Dsd(d) = self {
            return d
                .red
                .as_ref()
                .map(|r| (r.vars.avg, crate::aqm::unit_of(r.params.bytes)));
        }
        let queues = self.aqm_queues();
        let (_, q) = queues.into_iter().find(|(i, _)| *i == queue)?;
        q.red_average(precedence)
    }

    #[inline]
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        match self {
            Qdisc::Fifo(q) => q.enqueue(id, ctx),
            Qdisc::Priority(s) => s.enqueue(id, ctx),
            Qdisc::Wrr(s) => s.enqueue(id, ctx),
            Qdisc::Drr(s) => s.enqueue(id, ctx),
            Qdisc::Cbq(s) => s.enqueue(id, ctx),
            Qdisc::Dsd(q) => q.enqueue(id, ctx),
        }
    }

    /// Offers `id` to a drop-tail FIFO as if one more packet of `size` bytes waited at its
    /// head: a packet that started its transmission at this instant straight through the
    /// empty queue although, by the tie rule (docs/ties.md), it waits until every arrival
    /// of the instant has been offered ([`crate::net::Port::lone_at`]).
    pub fn enqueue_behind(&mut self, size: u32, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        let Qdisc::Fifo(f) = self else {
            unreachable!("only a drop-tail FIFO passes packets straight through")
        };
        f.queue.fifo.push_front(PktId::NONE, size);
        let verdict = f.enqueue(id, ctx);
        f.queue.fifo.pop(|_| size);
        verdict
    }

    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        match self {
            Qdisc::Fifo(q) => q.dequeue(ctx),
            Qdisc::Priority(s) => s.dequeue(ctx),
            Qdisc::Wrr(s) => s.dequeue(ctx),
            Qdisc::Drr(s) => s.dequeue(ctx),
            Qdisc::Cbq(s) => s.dequeue(ctx),
            Qdisc::Dsd(q) => q.dequeue(ctx),
        }
    }

    /// The port's link is free when a packet arrives (no event marked the moment it went
    /// free: the port schedules no event at the end of a transmission nobody waits for).
    /// If nothing waits, the round robins end their visit in progress, as an empty
    /// `dequeue` would have.
    #[inline]
    pub fn on_link_free(&mut self) {
        match self {
            Qdisc::Wrr(s) if s.classes.len_packets() == 0 => s.rr.end_visit(),
            Qdisc::Cbq(s) if s.classes.len_packets() == 0 => s.on_link_idle(),
            // No state moves on an empty dequeue: FIFO, priority, DRR (its active list is
            // empty); DSD's control loop catches up at its next call.
            _ => {}
        }
    }

    /// The largest packet that passes straight through this discipline when it is empty
    /// and the link is free: admitted and at once dequeued, leaving no trace, in queue 0
    /// with precedence 0. Some for a drop-tail FIFO (the largest packet its limit takes
    /// into an empty queue), None for every other discipline. The port then sends such a
    /// packet without the round trip through the queue (same counters, same order of
    /// events).
    pub fn lone_packet_limit(&self) -> Option<u64> {
        let Qdisc::Fifo(f) = self else {
            return None;
        };
        let q = &f.queue;
        if !matches!(q.aqm, Aqm::DropTail) || q.precedence_map.iter().any(|&p| p != 0) {
            return None;
        }
        q.fifo.largest_into_empty()
    }

    pub fn len_packets(&self) -> usize {
        match self {
            Qdisc::Fifo(q) => q.queue.fifo.len_packets(),
            Qdisc::Priority(s) => s.classes.len_packets(),
            Qdisc::Wrr(s) => s.classes.len_packets(),
            Qdisc::Drr(s) => s.classes.len_packets(),
            Qdisc::Cbq(s) => s.classes.len_packets(),
            Qdisc::Dsd(q) => q.len_packets(),
        }
    }

    pub fn len_bytes(&self) -> u64 {
        match self {
            Qdisc::Fifo(q) => q.queue.fifo.len_bytes(),
            Qdisc::Priority(s) => s.classes.len_bytes(),
            Qdisc::Wrr(s) => s.classes.len_bytes(),
            Qdisc::Drr(s) => s.classes.len_bytes(),
            Qdisc::Cbq(s) => s.classes.len_bytes(),
            Qdisc::Dsd(q) => q.len_bytes(),
        }
    }
}
