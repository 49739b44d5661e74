//! A traffic conditioning block in a scenario (`[[conditioner]]`): where it sits, which
//! packets it matches, and the mechanisms it composes. Each mechanism's own table (meter,
//! shaper, EF policer, action) is declared next to it in `crate::conditioner` and checked
//! there; the rules of the composition are checked in [`super::build_conditioner`]. See
//! docs/af.md for the meaning of every key.

use serde::{Deserialize, Serialize};

pub use crate::aqm::{MredSpec, RedSpec};
pub use crate::conditioner::{ActionSpec, EfPolicerSpec, MeterSpec, ShaperSpec};
use crate::packet::Dscp;
use crate::params::Params;

fn is_false(b: &bool) -> bool {
    !*b
}

/// Where at a node a conditioner sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum SideSpec {
    /// Packets the node sends out (a host: what it sends; a router: before the egress
    /// queue).
    #[default]
    Egress,
    /// Packets arriving at a router over a link, before the route lookup.
    Ingress,
}

/// Which direction of a flow's packets a conditioner sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum DirectionMatch {
    /// Source to destination (data).
    Forward,
    /// Destination back to source (acknowledgements).
    Reverse,
    Any,
}

/// Which packets a conditioner conditions; every criterion given must hold. A list given
/// must not be empty: leave the key out to match every flow.
// (`flow = []` reads as "no flow", and was taken as "not given": every flow; issue 28.)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct MatchSpec {
    /// Flow names, or `[[flow]]` names (all the flows of a `count` group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(nonempty)]
    pub flow: Option<Vec<String>>,
    /// Source hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(nonempty)]
    pub src: Option<Vec<String>>,
    /// Destination hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(nonempty)]
    pub dst: Option<Vec<String>>,
    /// Codepoints the packet carries when it reaches the block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(nonempty)]
    pub dscp: Option<Vec<Dscp>>,
    /// Default: forward (any for an EF policer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<DirectionMatch>,
}

impl MatchSpec {
    pub fn is_empty(&self) -> bool {
        *self == MatchSpec::default()
    }
}

/// A traffic conditioning block attached at a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct ConditionerSpec {
    /// Name in results (default `conditioner<i>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The node it sits at.
    pub at: String,
    /// `"egress"` (default: packets the node sends out) or `"ingress"` (packets arriving
    /// at a router, before the route lookup).
    #[serde(default)]
    pub side: SideSpec,
    /// Only the link to (egress) or from (ingress) this neighbour; default all links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// One meter / shaper state per matching flow (a per-flow profiler) instead of one
    /// for the aggregate.
    #[serde(default, skip_serializing_if = "is_false")]
    pub per_flow: bool,
    /// Which packets the block conditions (default: every forward packet).
    #[serde(default, rename = "match", skip_serializing_if = "MatchSpec::is_empty")]
    pub matcher: MatchSpec,
    /// A shaper holding packets until it releases them (before the meter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaper: Option<ShaperSpec>,
    /// A meter giving each packet a colour, acted on by `green`, `yellow`, `red`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter: Option<MeterSpec>,
    /// RFC 2598 section 3's EF edge policer (instead of a meter and actions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ef_policer: Option<EfPolicerSpec>,
    /// Actions per colour (default "pass"); `in` and `out` are accepted for green and red.
    #[serde(default, alias = "in", skip_serializing_if = "Option::is_none")]
    pub green: Option<ActionSpec>,
    /// The action for yellow packets (three-colour meters), default "pass".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yellow: Option<ActionSpec>,
    /// The action for red packets, default "pass".
    #[serde(default, alias = "out", skip_serializing_if = "Option::is_none")]
    pub red: Option<ActionSpec>,
}
