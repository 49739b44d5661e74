//! The scenario schema: plain data, deserialized from TOML (or built by `dsim.Scenario` in
//! Python, which writes the same TOML). Unknown keys are errors. Every quantity carries its
//! unit (see [`crate::time`]). Semantic rules (names that must exist, orders, ranges) are
//! checked in [`super::validate`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::schema_af::{ConditionerSpec, MredSpec, RedSpec};

use super::capture::{CaptureSpec, DropRuleSpec};
use super::transport::{DistSpec, StartSpec, TcpSpec};
use crate::packet::Dscp;
use crate::time::{Bytes, Duration, Fraction, Limit, Rate};

fn one() -> u32 {
    1
}
fn default_seed() -> u64 {
    1
}

/// One experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nodes {
    #[serde(default)]
    pub hosts: Vec<String>,
    #[serde(default)]
    pub routers: Vec<String>,
}

/// A duplex link: two egress ports, `from -> to` (forward) and `to -> from` (reverse).
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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

/// The queue discipline of an egress port, chosen by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueueSpec {
    Droptail(DroptailSpec),
    Priority(ClassesSpec),
    Wrr(ClassesSpec),
    Drr(ClassesSpec),
    Cbq(CbqSpec),
    /// FIFO with RED (Floyd and Jacobson 1993).
    Red(RedSpec),
    /// FIFO with multi-precedence RED: RIO (coupled) or decoupled.
    Mred(MredSpec),
    /// ABE's Duplicate Scheduling with Deadlines (draft-hurley-alternative-best-effort
    /// section 5): blue and green queues behind a virtual flat FIFO of `buffer`.
    Dsd(DsdSpec),
}
crate::tagged_enum!(QueueSpec {
    Droptail(DroptailSpec) = "droptail",
    Priority(ClassesSpec) = "priority",
    Wrr(ClassesSpec) = "wrr",
    Drr(ClassesSpec) = "drr",
    Cbq(CbqSpec) = "cbq",
    Red(RedSpec) = "red",
    Mred(MredSpec) = "mred",
    Dsd(DsdSpec) = "dsd",
});

impl QueueSpec {
    /// Does this spec hold several classified queues (rather than one queue)?
    pub fn is_scheduler(&self) -> bool {
        matches!(
            self,
            QueueSpec::Priority(_) | QueueSpec::Wrr(_) | QueueSpec::Drr(_) | QueueSpec::Cbq(_)
        )
    }

    /// The `type` of this spec as written in a scenario.
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

/// FIFO with a physical limit in packets ("100p") or bytes ("64KB").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DroptailSpec {
    pub limit: Limit,
    /// Byte limits: admit a packet whenever the queue holds at most `limit` bytes, so that
    /// it may end less than one packet above it (dummynet's rule); false: it must fit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overshoot: bool,
}

/// `priority`: strict priority, the first class listed served first; a class may carry a
/// token-bucket limiter (`limit_rate`, `limit_burst`) whose excess is discarded.
/// `wrr`: weighted round robin, each class's `weight` in packets per visit.
/// `drr`: deficit round robin, each class's `quantum` in bytes per round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassesSpec {
    pub classes: Vec<ClassSpec>,
}

/// `cbq`: one class (`priority_rate`, `priority_burst`) has priority up to that rate; every
/// class, that one included, shares the rest by `scheduler` ("wrr" or "drr").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbqSpec {
    pub scheduler: RoundRobinKind,
    pub classes: Vec<ClassSpec>,
}

/// The round robin under a CBQ priority class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundRobinKind {
    Wrr,
    Drr,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One class of a multi-queue scheduler: which codepoints it takes and its single queue.
/// Which of the optional settings apply depends on the scheduler (checked when building).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    /// Codepoints classified into this class.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dscp: Vec<Dscp>,
    /// This class also takes every codepoint no class lists.
    #[serde(default, skip_serializing_if = "is_false")]
    pub default: bool,
    /// WRR (and CBQ over WRR): packets per visit, >= 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    /// DRR (and CBQ over DRR): bytes added to the deficit per round, >= 1 B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<Bytes>,
    /// Priority: token-bucket limiter rate; arrivals beyond it are discarded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_rate: Option<Rate>,
    /// Priority: the limiter's bucket depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_burst: Option<Bytes>,
    /// CBQ: rate up to which this class is served ahead of the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_rate: Option<Rate>,
    /// CBQ: depth of that allowance's token bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_burst: Option<Bytes>,
    /// The class's single queue (drop-tail or an AQM); default 100 packets of drop-tail.
    #[serde(default)]
    pub queue: QueueSpec,
}

/// A `type = "dsd"` queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsdSpec {
    /// Buff: the virtual flat best-effort queue's waiting room ("100p" or "75KB").
    pub buffer: Limit,
    /// A byte Buff admits a duplicate whenever it holds at most Buff (dummynet's rule, as
    /// the `overshoot` of a droptail queue); false: the duplicate must fit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overshoot: bool,
    /// Green's maximum queueing delay at this hop.
    pub d: Duration,
    /// Green bias (section 5.1) in [0, 1], the initial value when a control loop is set.
    /// (Plain numbers here and below: range errors are reported in the builder, which knows
    /// the key path; inside a `type`-tagged table serde does not.)
    #[serde(default = "one_f64")]
    pub g: f64,
    /// Admission test for green on arrival (section 5); false: late drop only.
    #[serde(default = "yes")]
    pub early_drop: bool,
    /// Drop a green packet whose duplicate the virtual queue refuses (dsim's correction for
    /// local transparency; false: the draft's text).
    #[serde(default = "yes")]
    pub drop_green_without_duplicate: bool,
    /// The admission test also counts the residual transmission time of the packet on the
    /// wire (dsim's option; false: the test as section 5 states it).
    #[serde(default)]
    pub admission_residual: bool,
    /// The green codepoint (section 7); every other codepoint is blue.
    #[serde(default = "default_green_dscp")]
    pub green_dscp: Dscp,
    /// RED on the virtual queue marks ECN-capable packets instead of dropping them.
    #[serde(default)]
    pub ecn: bool,
    /// RED on the virtual queue (section 5, last paragraph).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<DsdRedSpec>,
    /// The control loop of section 5.1 (`control = {}` for the defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<DsdControlSpec>,
}

fn one_f64() -> f64 {
    1.0
}
fn yes() -> bool {
    true
}
fn default_green_dscp() -> Dscp {
    crate::sched::dsd::DEFAULT_GREEN_DSCP
}

/// RED on DSD's virtual queue: the keys of a `type = "red"` queue, with the same defaults
/// (`buffer` is the limit; `ecn` is a key of the dsd table). Thresholds in packets ("20p")
/// or bytes ("20KB", byte mode), whatever the unit of `buffer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsdRedSpec {
    pub min_th: Limit,
    pub max_th: Limit,
    #[serde(default = "super::schema_af::default_max_p")]
    pub max_p: f64,
    #[serde(default = "super::schema_af::default_wq")]
    pub wq: f64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gentle: bool,
    /// Sets the typical transmission time of the idle correction; scales pb in byte mode.
    #[serde(default = "super::schema_af::default_mean_pkt_size")]
    pub mean_pkt_size: Bytes,
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

/// DSD's control loop for throughput transparency (see `sched/dsd/control.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DsdControlSpec {
    #[serde(default = "control_period")]
    pub period: Duration,
    #[serde(default = "control_gain")]
    pub gain: f64,
    /// Round-trip time away from this hop assumed in the loss-throughput formula.
    #[serde(default = "control_rtt")]
    pub rtt: Duration,
    /// Weight of the newest period in the moving averages.
    #[serde(default = "control_weight")]
    pub weight: f64,
    /// The ratio of green to blue formula throughput aimed at.
    #[serde(default = "control_target")]
    pub target: f64,
    /// Largest extra drop probability for green once g is 0 (0: g only, as in the draft).
    #[serde(default = "control_max_penalty")]
    pub max_penalty: f64,
}

impl Default for QueueSpec {
    /// 100 packets of drop-tail FIFO.
    fn default() -> Self {
        QueueSpec::Droptail(DroptailSpec {
            limit: Limit::Packets(100),
            overshoot: false,
        })
    }
}

/// An explicit route: traffic for the last node of `path` follows it from every node on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub path: Vec<String>,
}

/// A flow, or `count` identical flows named `name.0 ... name.{count-1}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrSpec {
    pub rate: Rate,
    pub size: Bytes,
    /// Each gap uniform in +-this fraction of the nominal spacing (RFC 2598 A.3).
    #[serde(default)]
    pub spacing_variation: Fraction,
}

/// Poisson arrivals of fixed-size datagrams over UDP at mean `rate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonSpec {
    pub rate: Rate,
    pub size: Bytes,
}

/// TCP-friendly rate-adaptive source (RFC 5348 TFRC) for ABE: `size` datagrams at the
/// rate the throughput equation allows; the share `green` of them carries `green_dscp`,
/// the others the flow's `dscp`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfrcSpec {
    pub size: Bytes,
    /// Share of packets tagged green, [0, 1].
    #[serde(default)]
    pub green: f64,
    #[serde(default = "default_green_dscp")]
    pub green_dscp: Dscp,
    /// ECN-capable packets; CE marks count as losses.
    #[serde(default)]
    pub ecn: bool,
}

/// A bulk transfer over TCP: infinite, or `bytes` bytes (the flow records when the last
/// one arrives).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtpSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Bytes>,
}

/// Request-response over one persistent TCP connection: a request of `request` payload
/// bytes (default 300B), a response of a size drawn from `response`, a think time drawn
/// from `think`, again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
