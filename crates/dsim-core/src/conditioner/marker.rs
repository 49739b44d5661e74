//! Markers: what a conditioning block does to a packet of each colour.
//!
//! RFC 2475 section 2.3.3.2: "Packet markers set the DS field of a packet to a particular
//! codepoint, adding the marked packet to a particular DS behavior aggregate." A block
//! holds one [`Action`] per colour its meter can give:
//!
//! - `Pass`: forward unchanged (the colour is still recorded on the packet);
//! - `Mark(dscp)`: set the DS field (a host profiler marking IN packets AF11, say); counted
//!   as a remark when the codepoint changes;
//! - `Demote(dscp)`: the aggregate policer of draft-ibanez section 2.3 / appendix: "if the
//!   target rate is exceeded, the packets arriving with marked IN get remarked (demoted) to
//!   OUT before being forwarded"; counted as a demotion when the codepoint changes;
//! - `Drop(cause)`: a policer (RFC 2475 section 2.3.3.4, "droppers ... discard some or all
//!   of the packets in a traffic stream in order to bring the stream into compliance with
//!   a traffic profile"), see [`super::policer`].

use crate::packet::{Dscp, Packet};
use crate::stats::DropCause;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Action {
    #[default]
    Pass,
    Mark(Dscp),
    Demote(Dscp),
    Drop(DropCause),
}

/// What applying an action did, for the block's counters.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// Forwarded with its codepoint unchanged.
    Passed,
    /// Forwarded with a new codepoint set by `Mark`.
    Remarked,
    /// Forwarded with a new codepoint set by `Demote`.
    Demoted,
    Dropped(DropCause),
}

impl Action {
    /// Applies the action to `pkt` (the caller drops the packet on `Dropped`).
    #[inline]
    pub fn apply(self, pkt: &mut Packet) -> Applied {
        match self {
            Action::Pass => Applied::Passed,
            Action::Mark(d) | Action::Demote(d) if pkt.dscp == d => Applied::Passed,
            Action::Mark(d) => {
                pkt.dscp = d;
                Applied::Remarked
            }
            Action::Demote(d) => {
                pkt.dscp = d;
                Applied::Demoted
            }
            Action::Drop(cause) => Applied::Dropped(cause),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_real_changes() {
        let mut p = Packet {
            dscp: Dscp::af(1, 1),
            ..Default::default()
        };
        assert_eq!(Action::Mark(Dscp::af(1, 1)).apply(&mut p), Applied::Passed);
        assert_eq!(Action::Demote(Dscp::af(1, 2)).apply(&mut p), Applied::Demoted);
        assert_eq!(p.dscp, Dscp::af(1, 2));
        assert_eq!(Action::Demote(Dscp::af(1, 2)).apply(&mut p), Applied::Passed);
        assert_eq!(Action::Mark(Dscp::BE).apply(&mut p), Applied::Remarked);
        assert_eq!(p.dscp, Dscp::BE);
        assert_eq!(
            Action::Drop(DropCause::Policer).apply(&mut p),
            Applied::Dropped(DropCause::Policer)
        );
    }
}
