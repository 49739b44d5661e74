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

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::packet::{Dscp, Packet};
use crate::stats::DropCause;

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

impl ActionSpec {
    /// The action a block takes for a colour (`None`: the key is absent, pass).
    pub fn action(spec: Option<ActionSpec>) -> Action {
        match spec {
            None | Some(ActionSpec::Pass) => Action::Pass,
            Some(ActionSpec::Drop) => Action::Drop(DropCause::Policer),
            Some(ActionSpec::Mark(d)) => Action::Mark(d),
            Some(ActionSpec::Demote(d)) => Action::Demote(d),
        }
    }
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
