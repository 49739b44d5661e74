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
pub use queue::{ClassStats, PassedThrough};

use crate::time::{Duration, SimTime};

/// Why a packet was dropped. Each cause is one `drop_<name>_pkts` column.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum DropCause {
    /// The queue's physical limit (packets or bytes) was full: a drop-tail or forced drop.
    Overflow,
    /// The link direction's random loss (`loss` in the scenario).
    LinkLoss,
    /// A scheduler class's token-bucket rate limiter discarded the packet (RFC 2598
    /// section 2.1: traffic beyond the limit of a preempting queue MUST be discarded).
    RateLimit,
    /// RED / MRED random early drop: min_th <= avg < max_th (Floyd and Jacobson 1993).
    Early,
    /// RED / MRED forced drop: avg >= max_th (2 max_th in gentle mode).
    Forced,
    /// A conditioner's `drop` action: the packet was out of profile.
    Policer,
    /// A shaper's buffer was full (or the packet was larger than its bucket).
    ShaperOverflow,
    /// The EF edge policer of RFC 2598 section 3: EF beyond the negotiated rate, "noted
    /// ... as possible security violations or serious misconfiguration".
    Security,
    /// DSD (ABE): the virtual flat queue was full, so the packet whose duplicate it refused
    /// is dropped: blue (section 5) or green (dsim, for local transparency; `sched::dsd`).
    DsdOverflow,
    /// DSD (ABE): RED on the virtual queue refused the packet's duplicate (section 5).
    DsdRed,
    /// DSD (ABE): a green packet could no longer be served within d (late drop, Appendix A).
    DsdGreenLate,
    /// DSD (ABE): a green packet failed the admission test on arrival (early drop, Appendix B).
    DsdGreenEarly,
    /// DSD (ABE): a green packet that passed the admission test was late at the head of the
    /// queue anyway (the test's known gaps, seeds/README.md).
    DsdGreenSafetyNet,
    /// DSD (ABE): dropped by the control loop's green penalty (dsim's extension of 5.1).
    DsdGreenPenalty,
    /// A scripted drop of the link direction (`drop` in the scenario).
    Scripted,
}

impl DropCause {
    pub const ALL: [DropCause; 15] = [
        DropCause::Overflow,
        DropCause::LinkLoss,
        DropCause::RateLimit,
        DropCause::Early,
        DropCause::Forced,
        DropCause::Policer,
        DropCause::ShaperOverflow,
        DropCause::Security,
        DropCause::DsdOverflow,
        DropCause::DsdRed,
        DropCause::DsdGreenLate,
        DropCause::DsdGreenEarly,
        DropCause::DsdGreenSafetyNet,
        DropCause::DsdGreenPenalty,
        DropCause::Scripted,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn name(self) -> &'static str {
        match self {
            DropCause::Overflow => "overflow",
            DropCause::LinkLoss => "link_loss",
            DropCause::RateLimit => "rate_limit",
            DropCause::Early => "early",
            DropCause::Forced => "forced",
            DropCause::Policer => "policer",
            DropCause::ShaperOverflow => "shaper_overflow",
            DropCause::Security => "security",
            DropCause::DsdOverflow => "dsd_overflow",
            DropCause::DsdRed => "dsd_red",
            DropCause::DsdGreenLate => "dsd_green_late",
            DropCause::DsdGreenEarly => "dsd_green_early",
            DropCause::DsdGreenSafetyNet => "dsd_green_safety_net",
            DropCause::DsdGreenPenalty => "dsd_green_penalty",
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
