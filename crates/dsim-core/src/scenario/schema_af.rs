//! Scenario schema of the Assured Forwarding mechanisms: RED / MRED queue specs and
//! traffic conditioners. Plain data; every rule is checked in [`super::build_af`]. See
//! docs/af.md for the meaning of every key.

use std::fmt;

use crate::params::Params;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

pub use crate::aqm::{MredSpec, RedSpec};
use crate::packet::Dscp;
use crate::time::{Bytes, Duration, Limit, Rate};

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(nonempty)]
    pub src: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(nonempty)]
    pub dst: Option<Vec<String>>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum ColorModeSpec {
    #[default]
    Blind,
    Aware,
}

/// A meter, chosen by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MeterSpec {
    TokenBucket(TokenBucketSpec),
    Tsw(TswSpec),
    Tsw3(Tsw3Spec),
    Srtcm(SrtcmSpec),
    Trtcm(TrtcmSpec),
}
crate::tagged_enum!(MeterSpec {
    TokenBucket(TokenBucketSpec) = "token_bucket",
    Tsw(TswSpec) = "tsw",
    Tsw3(Tsw3Spec) = "tsw3",
    Srtcm(SrtcmSpec) = "srtcm",
    Trtcm(TrtcmSpec) = "trtcm",
});

/// Two colours: green if the bucket holds the packet, red otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TokenBucketSpec {
    pub rate: Rate,
    pub depth: Bytes,
}

/// Seed 002's TSW estimator and probabilistic tagger: green (IN) or red (OUT).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TswSpec {
    pub target: Rate,
    pub window: Duration,
    /// What Pout's excess is divided by: `"target"` (seed 002, default) or `"avg_rate"`
    /// (Clark and Fang section 3.3, seed 001's tagger).
    #[serde(default, skip_serializing_if = "PoutSpec::is_default")]
    pub pout: PoutSpec,
    /// The estimate's initial value: 0 when absent (seed 002 appendix, "avg_rate = 0");
    /// ns-2's TSW2CM starts it at the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_rate: Option<Rate>,
}

/// `pout` of a TSW meter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum PoutSpec {
    #[default]
    Target,
    AvgRate,
}

impl PoutSpec {
    pub fn is_default(&self) -> bool {
        *self == PoutSpec::Target
    }
}

/// RFC 2859 TSW three colour marker: committed and peak target rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct Tsw3Spec {
    pub committed: Rate,
    pub peak: Rate,
    pub window: Duration,
    /// The estimate's initial value, AVG_RATE: `committed` when absent (RFC 2859 section
    /// 4.1, "AVG_RATE = CTR"; ns-2's TSW3CM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_rate: Option<Rate>,
}

/// RFC 2697 single rate three colour marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct SrtcmSpec {
    pub cir: Rate,
    pub cbs: Bytes,
    pub ebs: Bytes,
    #[serde(default)]
    pub mode: ColorModeSpec,
}

/// RFC 2698 two rate three colour marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TrtcmSpec {
    pub cir: Rate,
    pub cbs: Bytes,
    pub pir: Rate,
    pub pbs: Bytes,
    #[serde(default)]
    pub mode: ColorModeSpec,
}

/// A shaper, chosen by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ShaperSpec {
    TokenBucket(TbShaperSpec),
    /// RFC 2963 rate adaptive shapers (docs/ras.md).
    Srras(SrrasSpec),
    Trras(TrrasSpec),
    GSrras(SrrasSpec),
    GTrras(TrrasSpec),
}
crate::tagged_enum!(ShaperSpec {
    TokenBucket(TbShaperSpec) = "token_bucket",
    Srras(SrrasSpec) = "srras",
    Trras(TrrasSpec) = "trras",
    GSrras(SrrasSpec) = "g_srras",
    GTrras(TrrasSpec) = "g_trras",
});

/// srRAS / G-srRAS (RFC 2963 sections 2.2, 3.2): rates in bit/s, thresholds and buffer
/// in bytes, the EAR constant K a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct SrrasSpec {
    pub cir: Rate,
    /// Default: the line rate of the shaper's output link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mir: Option<Rate>,
    pub cir_th: Bytes,
    pub mir_th: Bytes,
    pub buffer: Bytes,
    pub k: Duration,
}

/// trRAS / G-trRAS (RFC 2963 sections 2.4, 3.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TrrasSpec {
    pub cir: Rate,
    pub pir: Rate,
    /// Default: the line rate of the shaper's output link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mir: Option<Rate>,
    pub cir_th: Bytes,
    pub pir_th: Bytes,
    pub mir_th: Bytes,
    pub buffer: Bytes,
    pub k: Duration,
}

/// Token-bucket shaper with a finite buffer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TbShaperSpec {
    pub rate: Rate,
    pub depth: Bytes,
    pub limit: Limit,
}

/// RFC 2598 section 3 EF edge policer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct EfPolicerSpec {
    /// The negotiated EF rate; 0 (the default) when none was negotiated.
    #[serde(default)]
    pub rate: Rate,
    /// Burst allowance (bucket depth); must be 0 when the rate is 0.
    #[serde(default)]
    pub burst: Bytes,
}

/// What to do with a packet of one colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionSpec {
    /// "pass"
    Pass,
    /// "drop" (a policer; counted as `policer`)
    Drop,
    /// { mark = "AF11" }
    Mark(Dscp),
    /// { demote = "AF12" }
    Demote(Dscp),
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
    #[serde(default)]
    pub side: SideSpec,
    /// Only the link to (egress) or from (ingress) this neighbour; default all links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// One meter / shaper state per matching flow (a per-flow profiler) instead of one
    /// for the aggregate.
    #[serde(default, skip_serializing_if = "is_false")]
    pub per_flow: bool,
    #[serde(default, rename = "match", skip_serializing_if = "MatchSpec::is_empty")]
    pub matcher: MatchSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaper: Option<ShaperSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meter: Option<MeterSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ef_policer: Option<EfPolicerSpec>,
    /// Actions per colour (default "pass"); `in` and `out` are accepted for green and red.
    #[serde(default, alias = "in", skip_serializing_if = "Option::is_none")]
    pub green: Option<ActionSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yellow: Option<ActionSpec>,
    #[serde(default, alias = "out", skip_serializing_if = "Option::is_none")]
    pub red: Option<ActionSpec>,
}

impl Serialize for ActionSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ActionSpec::Pass => s.serialize_str("pass"),
            ActionSpec::Drop => s.serialize_str("drop"),
            ActionSpec::Mark(d) | ActionSpec::Demote(d) => {
                let key = if matches!(self, ActionSpec::Mark(_)) {
                    "mark"
                } else {
                    "demote"
                };
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry(key, d)?;
                m.end()
            }
        }
    }
}

crate::custom_value!(
    ActionSpec,
    "\"pass\", \"drop\", { mark = \"AF11\" } or { demote = \"AF12\" }"
);

const ACTION_EXPECTED: &str = "an action: \"pass\", \"drop\", { mark = \"AF11\" } or { demote = \"AF12\" }";

impl<'de> Deserialize<'de> for ActionSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ActionSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(ACTION_EXPECTED)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ActionSpec, E> {
                match v {
                    "pass" => Ok(ActionSpec::Pass),
                    "drop" => Ok(ActionSpec::Drop),
                    _ => Err(E::custom(format!("\"{v}\" is not {ACTION_EXPECTED}"))),
                }
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ActionSpec, A::Error> {
                let Some(key) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(format!("an empty table is not {ACTION_EXPECTED}")));
                };
                let action = match key.as_str() {
                    "mark" => ActionSpec::Mark(map.next_value()?),
                    "demote" => ActionSpec::Demote(map.next_value()?),
                    _ => {
                        return Err(de::Error::custom(format!(
                            "unknown action \"{key}\"; expected {ACTION_EXPECTED}"
                        )));
                    }
                };
                if map.next_key::<String>()?.is_some() {
                    return Err(de::Error::custom(format!(
                        "an action table has exactly one key; expected {ACTION_EXPECTED}"
                    )));
                }
                Ok(action)
            }
        }
        d.deserialize_any(V)
    }
}
