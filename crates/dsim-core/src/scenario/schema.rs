//! The scenario schema: plain data, deserialized from TOML (or built by `dsim.Scenario` in
//! Python, which writes the same TOML). Unknown keys are errors. Every quantity carries its
//! unit (see [`crate::time`]). Semantic rules (names that must exist, orders, ranges) are
//! checked in [`super::validate`].

use std::collections::BTreeMap;

use crate::params::Params;
use serde::{Deserialize, Serialize};

pub use super::schema_af::ConditionerSpec;
pub use crate::aqm::{DroptailSpec, MredSpec, RedSpec};
pub use crate::sched::QueueSpec;
pub use crate::sched::dsd::spec::{DsdControlSpec, DsdRedSpec, DsdSpec};

use super::capture::{CaptureSpec, DropRuleSpec};
use super::transport::{DistSpec, StartSpec};
use crate::packet::Dscp;
use crate::time::{Bytes, Duration, Fraction, Rate};
use crate::transport::tcp::TcpSpec;

fn one() -> u32 {
    1
}
fn default_seed() -> u64 {
    1
}

/// One experiment.
#[derive(Debug, Clone, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Simulated time of one run.
    pub duration: Duration,
    /// Initial part of the run left out of every statistic.
    #[serde(default)]
    pub warmup: Duration,
    /// Base seed; replication r runs with `derive_seed(seed, [r])`.
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default = "one")]
    pub replications: u32,
    pub nodes: Nodes,
    #[serde(default, rename = "link")]
    pub links: Vec<LinkSpec>,
    #[serde(default, rename = "route", skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteSpec>,
    #[serde(default, rename = "flow")]
    pub flows: Vec<FlowSpec>,
    /// Sweep axes (`[sweep]`, see docs/sweeps.md). The Python front (`dsim sweep`,
    /// `dsim.sweep`) checks and expands them and runs one scenario per point; the core only
    /// accepts the table, so that a sweep file validates with its own line numbers, and
    /// leaves it out of the canonical TOML and the hash (a point is identified by the
    /// scenario it runs). A run of the core alone runs the base scenario.
    #[serde(default, skip_serializing)]
    pub sweep: Option<toml::Table>,
    /// Traffic conditioners (profilers, markers, policers, shapers): docs/af.md.
    #[serde(default, rename = "conditioner", skip_serializing_if = "Vec::is_empty")]
    pub conditioners: Vec<ConditionerSpec>,
    /// User-defined codepoint names: `[dscp] IN = 10` lets "IN" stand for 10 anywhere a
    /// DSCP is written.
    #[serde(default, rename = "dscp", skip_serializing_if = "BTreeMap::is_empty")]
    pub dscp_names: BTreeMap<String, i64>,
    /// Packet captures (pcap files), see [`super::capture`].
    #[serde(default, rename = "capture", skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<CaptureSpec>,
    /// Time series and distributions recorded for plots, see [`super::record`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<super::record::RecordSpec>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct Nodes {
    #[serde(default)]
    pub hosts: Vec<String>,
    #[serde(default)]
    pub routers: Vec<String>,
}

/// A duplex link: two egress ports, `from -> to` (forward) and `to -> from` (reverse).
#[derive(Debug, Clone, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub from: String,
    pub to: String,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Queue discipline of both directions unless a direction overrides it.
    #[serde(default)]
    pub queue: QueueSpec,
    /// Probability that a packet is lost on the wire, both directions.
    #[serde(default)]
    pub loss: Fraction,
    #[serde(default, skip_serializing_if = "DirectionSpec::is_empty")]
    pub forward: DirectionSpec,
    #[serde(default, skip_serializing_if = "DirectionSpec::is_empty")]
    pub reverse: DirectionSpec,
}

/// Per-direction overrides of a link's settings.
#[derive(Debug, Clone, Default, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Fraction>,
    /// Scripted drops of this direction, see [`crate::net::scripted`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<DropRuleSpec>,
}

impl DirectionSpec {
    pub fn is_empty(&self) -> bool {
        self.rate.is_none() && self.queue.is_none() && self.loss.is_none() && self.drop.is_empty()
    }
}

/// An explicit route: traffic for the last node of `path` follows it from every node on it.
#[derive(Debug, Clone, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub path: Vec<String>,
}

/// A flow, or `count` identical flows named `name.0 ... name.{count-1}`.
#[derive(Debug, Clone, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    #[serde(default = "one")]
    pub count: u32,
    /// Codepoint the source sets (conditioners may change it on the way).
    #[serde(default)]
    pub dscp: Dscp,
    /// A time ("1s") or `{ uniform = ["0s", "1s"] }`, drawn per flow from its own stream.
    #[serde(default)]
    pub start: StartSpec,
    /// Defaults to the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    pub app: AppSpec,
    /// TCP settings of an `ftp` or `web` flow (defaults when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSpec>,
}

/// What the flow's source sends, chosen by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AppSpec {
    Cbr(CbrSpec),
    Poisson(PoissonSpec),
    /// TCP-friendly rate-adaptive source (RFC 5348 TFRC) for ABE.
    Tfrc(TfrcSpec),
    Ftp(FtpSpec),
    Web(WebSpec),
}
crate::tagged_enum!(AppSpec {
    Cbr(CbrSpec) = "cbr",
    Poisson(PoissonSpec) = "poisson",
    Tfrc(TfrcSpec) = "tfrc",
    Ftp(FtpSpec) = "ftp",
    Web(WebSpec) = "web",
});

/// Constant bit rate over UDP; `size` is the IP datagram size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct CbrSpec {
    pub rate: Rate,
    pub size: Bytes,
    /// Each gap uniform in +-this fraction of the nominal spacing (RFC 2598 A.3).
    #[serde(default)]
    pub spacing_variation: Fraction,
}

/// Poisson arrivals of fixed-size datagrams over UDP at mean `rate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct PoissonSpec {
    pub rate: Rate,
    pub size: Bytes,
}

/// TCP-friendly rate-adaptive source (RFC 5348 TFRC) for ABE: `size` datagrams at the
/// rate the throughput equation allows; the share `green` of them carries `green_dscp`,
/// the others the flow's `dscp`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TfrcSpec {
    pub size: Bytes,
    /// Share of packets tagged green, [0, 1].
    #[serde(default)]
    pub green: f64,
    #[serde(default = "crate::sched::dsd::spec::default_green_dscp")]
    pub green_dscp: Dscp,
    /// ECN-capable packets; CE marks count as losses.
    #[serde(default)]
    pub ecn: bool,
}

/// A bulk transfer over TCP: infinite, or `bytes` bytes (the flow records when the last
/// one arrives).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct FtpSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
}

/// Request-response over one persistent TCP connection: a request of `request` payload
/// bytes (default 300B), a response of a size drawn from `response`, a think time drawn
/// from `think`, again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Bytes>,
    pub response: DistSpec<Bytes>,
    pub think: DistSpec<Duration>,
}

impl AppSpec {
    /// The application runs over TCP.
    pub fn is_tcp(&self) -> bool {
        matches!(self, AppSpec::Ftp(_) | AppSpec::Web(_))
    }
}
