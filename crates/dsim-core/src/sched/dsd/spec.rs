//! The `type = "dsd"` table: DSD's parameters as a scenario (or a replay) declares them,
//! with their ranges and the rules that tie them together (draft-hurley-alternative-best-
//! effort-01, sections 5, 5.1 and 7).

use serde::{Deserialize, Serialize};

use super::control::ControlParams;
use super::{DEFAULT_GREEN_DSCP, DsdParams, is_valid_green_dscp};
use crate::aqm::RedParams;
use crate::packet::Dscp;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Duration, Limit, Rate};

fn one() -> f64 {
    1.0
}
fn yes() -> bool {
    true
}
pub fn default_green_dscp() -> Dscp {
    DEFAULT_GREEN_DSCP
}

/// `type = "dsd"`: ABE's Duplicate Scheduling with Deadlines, blue and green queues behind
/// a virtual flat best-effort FIFO of `buffer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(document = "draft-hurley-alternative-best-effort-01")]
pub struct DsdSpec {
    /// Buff: the virtual flat best-effort queue's waiting room.
    #[param(range = "(0, inf)", section = "5")]
    pub buffer: Limit,
    /// A byte Buff admits a duplicate whenever it holds at most Buff (dummynet's rule, as
    /// the `overshoot` of a droptail queue); false: the duplicate must fit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overshoot: bool,
    /// d: green's maximum queueing delay at this hop.
    #[param(range = "(0, inf)", section = "5")]
    pub d: Duration,
    /// The green bias g, the initial value when a control loop is set.
    #[serde(default = "one")]
    #[param(range = "[0, 1]", section = "5.1")]
    pub g: f64,
    /// The admission test for green on arrival (early green drop); false: late drop only.
    #[serde(default = "yes")]
    #[param(section = "5")]
    pub early_drop: bool,
    /// Drop a green packet whose duplicate the virtual queue refuses (dsim's correction for
    /// local transparency to blue; false: the draft's text).
    #[serde(default = "yes")]
    pub drop_green_without_duplicate: bool,
    /// The admission test also counts the residual transmission time of the packet on the
    /// wire (dsim's option; false: the test as section 5 states it).
    #[serde(default)]
    pub admission_residual: bool,
    /// The green codepoint; every other codepoint is blue. From RFC 2474's experimental /
    /// local-use pools (xxxx11 or xxxx01), below 0x38.
    #[serde(default = "default_green_dscp")]
    #[param(section = "7")]
    pub green_dscp: Dscp,
    /// RED on the virtual queue marks ECN-capable packets instead of dropping them (needs
    /// `red`).
    #[serde(default)]
    pub ecn: bool,
    /// RED on the virtual queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(section = "5")]
    pub red: Option<DsdRedSpec>,
    /// The control loop for throughput transparency (`control = {}` for its defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(section = "5.1")]
    pub control: Option<DsdControlSpec>,
}

crate::red_table! {
    [curve, averaging]
    /// RED on DSD's virtual queue: the keys of a `type = "red"` queue, with the same
    /// defaults (`buffer` is the limit; `ecn` is a key of the dsd table). Thresholds in
    /// packets ("20p") or bytes ("20KB", byte mode), whatever the unit of `buffer`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    pub struct DsdRedSpec {}
}

fn control_period() -> Duration {
    Duration::from_secs(1)
}
fn control_gain() -> f64 {
    0.1
}
fn control_rtt() -> Duration {
    Duration::from_millis(100)
}
fn control_weight() -> f64 {
    0.5
}
fn control_target() -> f64 {
    0.9
}
fn control_max_penalty() -> f64 {
    0.5
}

/// DSD's control loop for throughput transparency (the draft details it in its reference
/// [10]; dsim's design is in `sched/dsd/control.rs` and docs/abe.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct DsdControlSpec {
    /// How often the loop measures and updates g.
    #[serde(default = "control_period")]
    #[param(range = "(0, inf)")]
    pub period: Duration,
    /// The step of g per period, scaled by the log of the throughput ratio's error.
    #[serde(default = "control_gain")]
    #[param(range = "(0, inf)")]
    pub gain: f64,
    /// Round-trip time away from this hop assumed in the loss-throughput formula.
    #[serde(default = "control_rtt")]
    #[param(range = "(0, inf)")]
    pub rtt: Duration,
    /// Weight of the newest period in the moving averages.
    #[serde(default = "control_weight")]
    #[param(range = "(0, 1]")]
    pub weight: f64,
    /// The ratio of green to blue formula throughput aimed at.
    #[serde(default = "control_target")]
    #[param(range = "(0, inf)")]
    pub target: f64,
    /// Largest extra drop probability for green once g is 0 (0: g only, as in the draft);
    /// below 1, which would drop every green packet.
    #[serde(default = "control_max_penalty")]
    #[param(range = "[0, 1)")]
    pub max_penalty: f64,
}

/// ABE section 7: green comes from RFC 2474's pools 2 or 3, below 0x38.
pub fn check_green_dscp(dscp: Dscp, path: &KeyPath) -> Result<(), ConfigError> {
    if is_valid_green_dscp(dscp) {
        return Ok(());
    }
    Err(ConfigError::new(
        path.clone(),
        Some(dscp.0.to_string()),
        format!(
            "the green codepoint must come from RFC 2474's experimental/local-use pools \
             (binary xxxx11 or xxxx01) and be below 0x38 (ABE section 7); {:06b} is not; \
             the default is 3 (000011)",
            dscp.0
        ),
    ))
}

impl DsdSpec {
    /// DSD's parameters at a port of `rate`, every rule checked.
    pub fn params(&self, rate: Rate, path: &KeyPath) -> Result<DsdParams, ConfigError> {
        self.check(path)?;
        crate::aqm::droptail::check_overshoot(self.overshoot, self.buffer, &path.key("overshoot"))?;
        check_green_dscp(self.green_dscp, &path.key("green_dscp"))?;
        if self.ecn && self.red.is_none() {
            return Err(ConfigError::new(
                path.key("ecn"),
                Some("true".into()),
                "ECN marks replace the drops RED makes on the virtual queue: add red = { min_th, \
                 max_th } (the keys of a red queue), or set ecn = false",
            ));
        }
        // RED on the virtual queue: the rules of a `red` queue, with Buff as its limit.
        let red = self
            .red
            .as_ref()
            .map(|r| RedParams::new(r.curve(), r.averaging(), Some(self.buffer), rate, &path.key("red")))
            .transpose()?;
        let control = self.control.as_ref().map(|c| ControlParams {
            period: c.period,
            gain: c.gain,
            rtt: c.rtt,
            weight: c.weight,
            target: c.target,
            max_penalty: c.max_penalty,
        });
        Ok(DsdParams {
            buffer: self.buffer,
            overshoot: self.overshoot,
            d: self.d,
            g: self.g,
            early_drop: self.early_drop,
            drop_green_without_duplicate: self.drop_green_without_duplicate,
            admission_residual: self.admission_residual,
            green_dscp: self.green_dscp,
            ecn: self.ecn,
            red,
            control,
        })
    }
}
