//! The scenario schema: plain data, deserialized from TOML (or built by `dsim.Scenario` in
//! Python, which writes the same TOML). Unknown keys are errors. Every quantity carries its
//! unit (see [`crate::time`]). Semantic rules (names that must exist, orders, ranges) are
//! checked in [`super::validate`].

use std::collections::BTreeMap;

use crate::params::Params;
use serde::{Deserialize, Serialize};

pub use super::conditioner::ConditionerSpec;
pub use crate::aqm::{DroptailSpec, MredSpec, RedSpec};
pub use crate::sched::QueueSpec;
pub use crate::sched::dsd::spec::{DsdControlSpec, DsdRedSpec, DsdSpec};

use super::capture::{CaptureSpec, DropRuleSpec};
use super::transport::{DistSpec, StartSpec, TcpSpec};
use crate::packet::Dscp;
use crate::time::{Bytes, Duration, Fraction, Rate};

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
    /// A short name, shown in reports and written in the results' run table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the scenario is for, in a sentence or two.
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
    /// Independent runs, each with its own seed; results carry a `replication` column.
    #[serde(default = "one")]
    pub replications: u32,
    /// The hosts and routers (`[nodes]`).
    pub nodes: Nodes,
    /// The links (`[[link]]`), each a duplex pair of egress ports.
    #[serde(default, rename = "link")]
    pub links: Vec<LinkSpec>,
    /// Explicit routes (`[[route]]`); shortest paths in hops elsewhere.
    #[serde(default, rename = "route", skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<RouteSpec>,
    /// The flows (`[[flow]]`).
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
    /// End systems: flows start and end here; a host does not forward.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Routers: forward packets by their routes; conditioners may sit at their ports.
    #[serde(default)]
    pub routers: Vec<String>,
}

/// A duplex link: two egress ports, `from -> to` (forward) and `to -> from` (reverse).
#[derive(Debug, Clone, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// One end (a node name); the forward direction leaves it.
    pub from: String,
    /// The other end; the reverse direction leaves it.
    pub to: String,
    /// Transmission rate of both directions.
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Queue discipline of both directions unless a direction overrides it.
    #[serde(default)]
    pub queue: QueueSpec,
    /// Probability that a packet is lost on the wire, both directions.
    #[serde(default)]
    pub loss: Fraction,
    /// Overrides for the `from -> to` direction.
    #[serde(default, skip_serializing_if = "DirectionSpec::is_empty")]
    pub forward: DirectionSpec,
    /// Overrides for the `to -> from` direction.
    #[serde(default, skip_serializing_if = "DirectionSpec::is_empty")]
    pub reverse: DirectionSpec,
}

/// Per-direction overrides of a link's settings.
#[derive(Debug, Clone, Default, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// This direction's rate instead of the link's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// This direction's queue discipline instead of the link's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// This direction's loss probability on the wire instead of the link's.
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
    /// Node names, each adjacent to the next; the last is the destination.
    pub path: Vec<String>,
}

/// A flow, or `count` identical flows named `name.0 ... name.{count-1}`.
#[derive(Debug, Clone, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Name in the results (default `flow<i>`; `name.k` for each of `count` flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The host the flow's source runs on.
    pub src: String,
    /// The host its receiver runs on.
    pub dst: String,
    /// How many identical flows this entry stands for, each with its own random stream.
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
    /// What the source sends, chosen by `type`: cbr, poisson, tfrc (UDP) or ftp, web (TCP).
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
    /// Sending rate: one packet every size / rate.
    pub rate: Rate,
    /// IP datagram size (IPv4 and UDP headers included, at least 28 B).
    pub size: Bytes,
    /// Each gap uniform in +-this fraction of the nominal spacing (RFC 2598 A.3).
    #[serde(default)]
    pub spacing_variation: Fraction,
}

/// Poisson arrivals of fixed-size datagrams over UDP at mean `rate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct PoissonSpec {
    /// Mean sending rate: exponential gaps of mean size / rate.
    pub rate: Rate,
    /// IP datagram size (IPv4 and UDP headers included, at least 28 B).
    pub size: Bytes,
}

/// TCP-friendly rate-adaptive source (RFC 5348 TFRC) for ABE: `size` datagrams at the
/// rate the throughput equation allows; the share `green` of them carries `green_dscp`,
/// the others the flow's `dscp`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TfrcSpec {
    /// The TFRC segment size s: every datagram's IP size.
    pub size: Bytes,
    /// Share of packets tagged green, [0, 1].
    #[serde(default)]
    pub green: f64,
    /// The codepoint of the green packets (the ABE green codepoint by default).
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
    /// Bytes to transfer; absent: the sender always has data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
}

/// Request-response over one persistent TCP connection: a request of `request` payload
/// bytes (default 300B), a response of a size drawn from `response`, a think time drawn
/// from `think`, again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    /// Payload bytes of each request (default 300B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Bytes>,
    /// The distribution of response sizes (payload bytes).
    pub response: DistSpec<Bytes>,
    /// The distribution of think times between a response and the next request.
    pub think: DistSpec<Duration>,
}

impl AppSpec {
    /// The application runs over TCP.
    pub fn is_tcp(&self) -> bool {
        matches!(self, AppSpec::Ftp(_) | AppSpec::Web(_))
    }
}
