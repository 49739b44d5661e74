//! The scenario schema: plain data, deserialized from TOML (or built by `dsim.Scenario` in
//! Python, which writes the same TOML). Unknown keys are errors. Every quantity carries its
//! unit (see [`crate::time`]). Semantic rules (names that must exist, orders, ranges) are
//! checked in [`super::validate`].

use serde::{Deserialize, Serialize};

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
    /// Packet captures (pcap files), see [`super::capture`].
    #[serde(default, rename = "capture", skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<CaptureSpec>,
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

/// The queue discipline of an egress port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    /// FIFO with a physical limit in packets ("100p") or bytes ("64KB").
    Droptail { limit: Limit },
}

impl Default for QueueSpec {
    /// 100 packets of drop-tail FIFO.
    fn default() -> Self {
        QueueSpec::Droptail {
            limit: Limit::Packets(100),
        }
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

/// What the flow's source sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// Constant bit rate over UDP; `size` is the IP datagram size.
    Cbr {
        rate: Rate,
        size: Bytes,
        /// Each gap uniform in +-this fraction of the nominal spacing (RFC 2598 A.3).
        #[serde(default)]
        spacing_variation: Fraction,
    },
    /// Poisson arrivals of fixed-size datagrams over UDP at mean `rate`.
    Poisson { rate: Rate, size: Bytes },
    /// A bulk transfer over TCP: infinite, or `bytes` bytes (the flow records when the
    /// last one arrives).
    Ftp {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<Bytes>,
    },
    /// Request-response over one persistent TCP connection: a request of `request`
    /// payload bytes (default 300B), a response of a size drawn from `response`, a think
    /// time drawn from `think`, again.
    Web {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<Bytes>,
        response: DistSpec<Bytes>,
        think: DistSpec<Duration>,
    },
}

impl AppSpec {
    /// The application runs over TCP.
    pub fn is_tcp(&self) -> bool {
        matches!(self, AppSpec::Ftp { .. } | AppSpec::Web { .. })
    }
}
