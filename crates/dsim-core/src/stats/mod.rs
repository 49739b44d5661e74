//! Measurement: the window, drop causes, distributions and the counters of flows and queues.
//!
//! Counting is done by the framework (ports and endpoints), by cause, never by the
//! mechanisms themselves: a queue discipline answers "admit or drop, and why", the port
//! counts. Every counter becomes one column of the result tables.

mod distribution;
mod flow;
mod queue;

pub use distribution::Distribution;
pub use flow::FlowStats;
pub use queue::ClassStats;

use crate::time::{Duration, SimTime};

/// Why a packet was dropped. Each cause is one `drop_<name>_pkts` column.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum DropCause {
    /// The queue's physical limit (packets or bytes) was full: a drop-tail or forced drop.
    Overflow,
    /// The link direction's random loss (`loss` in the scenario).
    LinkLoss,
    /// A scripted drop of the link direction (`drop` in the scenario).
    Scripted,
}

impl DropCause {
    pub const ALL: [DropCause; 3] = [DropCause::Overflow, DropCause::LinkLoss, DropCause::Scripted];
    pub const COUNT: usize = Self::ALL.len();

    pub fn name(self) -> &'static str {
        match self {
            DropCause::Overflow => "overflow",
            DropCause::LinkLoss => "link_loss",
            DropCause::Scripted => "scripted",
        }
    }
}

/// Counters per drop cause.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct DropCounts {
    pub pkts: [u64; DropCause::COUNT],
    pub bytes: [u64; DropCause::COUNT],
}

impl DropCounts {
    pub fn add(&mut self, cause: DropCause, bytes: u64) {
        self.pkts[cause as usize] += 1;
        self.bytes[cause as usize] += bytes;
    }
    pub fn total_pkts(&self) -> u64 {
        self.pkts.iter().sum()
    }
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }
}

/// The measurement window [start, end): the run minus its warm-up. Counters only count
/// what happens inside it; averages over time are over its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: SimTime,
    pub end: SimTime,
}

impl Window {
    #[inline]
    pub fn contains(&self, t: SimTime) -> bool {
        t >= self.start && t < self.end
    }
    pub fn length(&self) -> Duration {
        self.end - self.start
    }
    /// The part of [from, to) inside the window, in nanoseconds.
    #[inline]
    pub fn overlap(&self, from: SimTime, to: SimTime) -> u64 {
        let a = from.max(self.start);
        let b = to.min(self.end);
        b.0.saturating_sub(a.0)
    }
}
