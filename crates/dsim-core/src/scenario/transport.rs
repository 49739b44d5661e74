//! Scenario keys of TCP flows: the `tcp` table of a flow, the `ftp` and `web` apps' size
//! and time distributions, and random start times; with their validation and the
//! translation into [`TcpParams`].
//!
//! ```toml
//! [[flow]]
//! src = "A"
//! dst = "B"
//! start = { uniform = ["0s", "1s"] }          # or start = "2s"
//! app = { type = "ftp" }                      # infinite; { type = "ftp", bytes = "1MB" }
//! tcp = { variant = "sack", mss = "1460B", window = "65535B", delayed_ack = "40ms" }
//! ```

use std::fmt;

use rand::RngExt;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::build::{err, quoted};
use super::schema::{AppSpec, FlowSpec, FtpSpec, WebSpec};
use crate::app::web::{Capped, Dist};
use crate::app::{Ftp, TcpApp, Web};
use crate::engine::rng::Rng;
use crate::net::Network;
use crate::packet::NodeId;
use crate::params::{ConfigError, KeyPath, Params, Ranged, Value};
use crate::time::{Bytes, Duration, Limit, SimTime};
use crate::transport::tcp::{Counting, RtoRestart, RttParams, SeriesMode, TcpParams, VariantKind};
use crate::transport::tcp::{HEADERS, SenderParams};

type Result<T> = std::result::Result<T, ConfigError>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "lowercase")]
pub enum VariantSpec {
    Reno,
    Newreno,
    Sack,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "lowercase")]
pub enum CountingSpec {
    Bytes,
    Packets,
}

/// `rto_restart = "on_retransmit"` (loss recovery's retransmission of SND.UNA restarts the
/// timer too, as ns-2, Linux and FreeBSD) or `"on_new_ack"` (RFC 6298 (5.3) only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum RtoRestartSpec {
    OnRetransmit,
    OnNewAck,
}

/// `delayed_ack = "40ms"` (the timer) or `delayed_ack = false` (acknowledge every segment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedAckSpec {
    Off,
    After(Duration),
}

/// `series = "10ms"` (sampling interval) or `series = "change"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesSpec {
    Interval(Duration),
    Change,
}

/// The `tcp` table of a flow. Every key is optional; defaults in [`TcpParams::default`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<VariantSpec>,
    /// Payload bytes of a full segment (SMSS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<Bytes>,
    /// Receiver buffer = largest window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Bytes>,
    /// "2p" (segments) or "4380B".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<Limit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counting: Option<CountingSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto: Option<Duration>,
    /// Clock granularity G of RFC 6298.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granularity: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_restart: Option<RtoRestartSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<DelayedAckSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack_blocks: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<SeriesSpec>,
}

/// A distribution of sizes (`T` = [`Bytes`]) or times (`T` = [`Duration`]), chosen by
/// `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DistSpec<T: Quantity> {
    Constant(ConstantDist<T>),
    Exponential(ExponentialDist<T>),
    Pareto(ParetoDist<T>),
    Lognormal(LognormalDist<T>),
}
crate::tagged_enum!(DistSpec<T: Quantity> {
    Constant(ConstantDist<T>) = "constant",
    Exponential(ExponentialDist<T>) = "exponential",
    Pareto(ParetoDist<T>) = "pareto",
    Lognormal(LognormalDist<T>) = "lognormal",
});

/// Always the same value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct ConstantDist<T: Quantity> {
    /// The value drawn every time.
    pub value: T,
}

/// Exponentially distributed, optionally capped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct ExponentialDist<T: Quantity> {
    /// The mean.
    #[param(range = "(0, inf)")]
    pub mean: T,
    /// Draws above it are cut to it (none by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(range = "(0, inf)")]
    pub max: Option<T>,
}

/// Pareto distributed with a mean (shape > 1), optionally capped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct ParetoDist<T: Quantity> {
    /// The mean.
    #[param(range = "(0, inf)")]
    pub mean: T,
    /// The shape (tail index); a Pareto distribution has a mean only above 1.
    #[param(range = "(1, inf)")]
    pub shape: f64,
    /// Draws above it are cut to it (none by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(range = "(0, inf)")]
    pub max: Option<T>,
}

/// Lognormal, given by its mean and the standard deviation of the underlying normal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct LognormalDist<T: Quantity> {
    /// The mean.
    #[param(range = "(0, inf)")]
    pub mean: T,
    /// The standard deviation of the underlying normal distribution.
    #[param(range = "[0, inf)")]
    pub sigma: f64,
    /// Draws above it are cut to it (none by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(range = "(0, inf)")]
    pub max: Option<T>,
}

crate::custom_value!(
    DelayedAckSpec,
    "the delayed-ACK timer (\"40ms\"), or false to acknowledge every segment"
);
crate::custom_value!(
    SeriesSpec,
    "a sampling interval (\"10ms\"), or \"change\" for every change"
);
crate::custom_value!(
    StartSpec,
    "a time (\"1s\"), or { uniform = [\"0s\", \"1s\"] } drawn per flow"
);

/// A flow's start: a time, or uniform in [a, b] drawn from the flow's own random stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartSpec {
    At(Duration),
    Uniform(Duration, Duration),
}

impl Default for StartSpec {
    fn default() -> Self {
        StartSpec::At(Duration::ZERO)
    }
}

impl StartSpec {
    /// The latest time the flow may start.
    pub fn latest(&self) -> Duration {
        match *self {
            StartSpec::At(d) => d,
            StartSpec::Uniform(_, b) => b,
        }
    }

    /// Checks the spec against the run's `duration` and returns (earliest, latest).
    pub fn check(&self, duration: Duration, p: &KeyPath) -> Result<(Duration, Duration)> {
        let (a, b) = match *self {
            StartSpec::At(d) => (d, d),
            StartSpec::Uniform(a, b) => {
                if a > b {
                    return err(
                        p.key("uniform"),
                        format!("[\"{a}\", \"{b}\"]"),
                        "the interval's first bound must not exceed its second",
                    );
                }
                (a, b)
            }
        };
        if b >= duration {
            return err(
                p.clone(),
                quoted(&b.to_string()),
                format!("the flow would start after the run ends (duration = {duration})"),
            );
        }
        Ok((a, b))
    }

    /// The start of one flow; a uniform start draws from `rng` (the flow's stream).
    pub fn draw(&self, rng: &mut Rng) -> SimTime {
        match *self {
            StartSpec::At(d) => SimTime::ZERO + d,
            StartSpec::Uniform(a, b) => SimTime(rng.random_range(a.0..=b.0)),
        }
    }
}

// -- translation into the model ------------------------------------------------------

/// Request payload of a web client when the scenario does not say.
pub const DEFAULT_REQUEST: u64 = 300;

/// The TCP parameters and application of a flow, or None for a UDP flow.
pub fn build_tcp(
    spec: &FlowSpec,
    net: &Network,
    src: NodeId,
    dst: NodeId,
    duration: Duration,
    p: &KeyPath,
) -> Result<Option<(TcpParams, TcpApp)>> {
    if !spec.app.is_tcp() {
        if spec.tcp.is_some() {
            return Err(ConfigError::new(
                p.key("tcp"),
                None,
                "tcp settings apply to TCP applications (ftp, web) only",
            ));
        }
        return Ok(None);
    }
    let params = build_tcp_params(spec.tcp.as_ref(), &p.key("tcp"))?;
    check_series(&params, duration, &p.key("tcp"))?;
    if net.routes.path(&net.ports, dst, src).is_none() {
        return err(
            p.key("src"),
            quoted(&spec.src),
            format!(
                "no route leads back from {} to {}: TCP's acknowledgements need one (check the links and [[route]] entries)",
                spec.dst, spec.src
            ),
        );
    }
    let app = match &spec.app {
        AppSpec::Ftp(FtpSpec { bytes }) => {
            if *bytes == Some(Bytes(0)) {
                return err(
                    p.key("app").key("bytes"),
                    quoted("0B"),
                    "a finite transfer carries at least 1B (leave bytes out for an infinite one)",
                );
            }
            TcpApp::Ftp(Ftp {
                bytes: bytes.map(|b| b.0),
            })
        }
        AppSpec::Web(WebSpec {
            request,
            response,
            think,
        }) => {
            if params.handshake {
                return err(
                    p.key("tcp").key("handshake"),
                    true,
                    "web flows use one persistent connection opened without a handshake",
                );
            }
            let request = request.map_or(DEFAULT_REQUEST, |r| r.0);
            if !(1..=params.mss as u64).contains(&request) {
                return err(
                    p.key("app").key("request"),
                    quoted(&Bytes(request).to_string()),
                    format!("a request is one segment: 1B to the MSS ({}B)", params.mss),
                );
            }
            TcpApp::Web(Web {
                request: request as u32,
                response: build_dist(response),
                think: build_dist(think),
            })
        }
        _ => unreachable!("is_tcp"),
    };
    Ok(Some((params, app)))
}

/// The TCP parameters of a flow's `tcp` table (or the defaults when it has none).
pub fn build_tcp_params(spec: Option<&TcpSpec>, p: &KeyPath) -> Result<TcpParams> {
    let d = TcpParams::default();
    let Some(s) = spec else {
        return Ok(d);
    };
    let variant = match s.variant {
        None => d.variant,
        Some(VariantSpec::Reno) => VariantKind::Reno,
        Some(VariantSpec::Newreno) => VariantKind::NewReno,
        Some(VariantSpec::Sack) => VariantKind::Sack,
    };
    let mss = match s.mss {
        None => d.mss,
        Some(m) if (1..=65_535 - HEADERS as u64).contains(&m.0) => m.0 as u32,
        Some(m) => {
            return err(
                p.key("mss"),
                quoted(&m.to_string()),
                format!(
                    "the MSS is 1B to {}B (an IP datagram holds at most 65535B)",
                    65_535 - HEADERS
                ),
            );
        }
    };
    let window = match s.window {
        None => d.window.max(mss),
        Some(w) if w.0 >= mss as u64 && w.0 <= u32::MAX as u64 => w.0 as u32,
        Some(w) => {
            return err(
                p.key("window"),
                quoted(&w.to_string()),
                format!("the window must hold at least one segment (mss = {mss}B) and at most 4294967295B"),
            );
        }
    };
    let initial_window = match s.initial_window {
        None => SenderParams::rfc5681_initial_window(mss as u64),
        Some(Limit::Packets(n)) if n >= 1 => n * mss as u64,
        Some(Limit::Bytes(b)) if b >= mss as u64 => b,
        Some(iw) => {
            return err(
                p.key("initial_window"),
                quoted(&iw.to_string()),
                format!("the initial window must be at least one segment (\"1p\" or {mss}B)"),
            );
        }
    };
    let counting = match s.counting {
        None => d.counting,
        Some(CountingSpec::Bytes) => Counting::Bytes,
        Some(CountingSpec::Packets) => Counting::Packets,
    };
    let rtt = RttParams {
        initial_rto: s.initial_rto.unwrap_or(d.rtt.initial_rto),
        min_rto: s.min_rto.unwrap_or(d.rtt.min_rto),
        max_rto: s.max_rto.unwrap_or(d.rtt.max_rto),
        granularity: s.granularity.unwrap_or(d.rtt.granularity),
    };
    for (key, v) in [("initial_rto", rtt.initial_rto), ("max_rto", rtt.max_rto)] {
        if v == Duration::ZERO {
            return err(p.key(key), quoted(&v.to_string()), "a timeout must be longer than 0s");
        }
    }
    if rtt.min_rto > rtt.max_rto {
        return err(
            p.key("min_rto"),
            quoted(&rtt.min_rto.to_string()),
            format!("min_rto must not exceed max_rto ({})", rtt.max_rto),
        );
    }
    let rto_restart = match s.rto_restart {
        None => d.rto_restart,
        Some(RtoRestartSpec::OnRetransmit) => RtoRestart::OnRetransmit,
        Some(RtoRestartSpec::OnNewAck) => RtoRestart::OnNewAck,
    };
    let delayed_ack = match s.delayed_ack {
        None => d.delayed_ack,
        Some(DelayedAckSpec::Off) => None,
        Some(DelayedAckSpec::After(t)) if t > Duration::ZERO && t <= Duration::from_millis(500) => Some(t),
        Some(DelayedAckSpec::After(t)) => {
            return err(
                p.key("delayed_ack"),
                quoted(&t.to_string()),
                "the delayed-ACK timer is above 0s and at most 500ms (RFC 5681 4.2); write false to turn delayed ACKs off",
            );
        }
    };
    let sack_blocks = match s.sack_blocks {
        None => d.sack_blocks,
        Some(n @ 1..=4) => n as usize,
        Some(n) => {
            return err(
                p.key("sack_blocks"),
                n,
                "an ACK carries 1 to 4 SACK blocks (RFC 2018 section 3)",
            );
        }
    };
    let series = match s.series {
        None => None,
        Some(SeriesSpec::Change) => Some(SeriesMode::Change),
        Some(SeriesSpec::Interval(t)) if t > Duration::ZERO => Some(SeriesMode::Interval(t)),
        Some(SeriesSpec::Interval(t)) => {
            return err(
                p.key("series"),
                quoted(&t.to_string()),
                "the sampling interval must be longer than 0s (or \"change\")",
            );
        }
    };
    Ok(TcpParams {
        variant,
        mss,
        window,
        initial_window,
        counting,
        rtt,
        rto_restart,
        delayed_ack,
        sack_blocks,
        ecn: s.ecn.unwrap_or(d.ecn),
        handshake: s.handshake.unwrap_or(d.handshake),
        series,
    })
}

/// Checks a series interval against the run length (the table stays bounded).
pub fn check_series(params: &TcpParams, duration: Duration, p: &KeyPath) -> Result<()> {
    if let Some(SeriesMode::Interval(dt)) = params.series {
        if duration.0 / dt.0 > crate::transport::tcp::SERIES_CAP as u64 {
            return err(
                p.key("series"),
                quoted(&dt.to_string()),
                format!(
                    "at most {} samples per flow: choose an interval of at least {}",
                    crate::transport::tcp::SERIES_CAP,
                    Duration(duration.0.div_ceil(crate::transport::tcp::SERIES_CAP as u64))
                ),
            );
        }
    }
    Ok(())
}

/// What a distribution draws: a size or a time, an integer count of its unit.
pub trait Quantity: Copy + fmt::Display + fmt::Debug + PartialEq + Serialize + Value + Ranged {
    fn value(self) -> u64;
}
impl Quantity for Bytes {
    fn value(self) -> u64 {
        self.0
    }
}
impl Quantity for Duration {
    fn value(self) -> u64 {
        self.0
    }
}

/// The distribution `spec` declares (its ranges were checked with the scenario's).
pub fn build_dist<T: Quantity>(spec: &DistSpec<T>) -> Capped {
    let real = |v: T| v.value() as f64;
    let (dist, max) = match spec {
        DistSpec::Constant(c) => (Dist::Constant(real(c.value)), None),
        DistSpec::Exponential(e) => (Dist::Exponential { mean: real(e.mean) }, e.max),
        DistSpec::Pareto(d) => (Dist::pareto(real(d.mean), d.shape), d.max),
        DistSpec::Lognormal(d) => (Dist::lognormal(real(d.mean), d.sigma), d.max),
    };
    Capped {
        dist,
        max: max.map(real),
    }
}

// -- (de)serialization of the scalar-or-table keys -------------------------------------

impl Serialize for DelayedAckSpec {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            DelayedAckSpec::Off => s.serialize_bool(false),
            DelayedAckSpec::After(d) => d.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for DelayedAckSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DelayedAckSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a delayed-ACK timer such as \"40ms\", or false")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Self::Value, E> {
                if v {
                    Err(E::custom(
                        "delayed_ack = true is ambiguous: give the timer (\"40ms\") or false",
                    ))
                } else {
                    Ok(DelayedAckSpec::Off)
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Duration::parse(v)
                    .map(DelayedAckSpec::After)
                    .map_err(|e| E::custom(e.0))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for SeriesSpec {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            SeriesSpec::Change => s.serialize_str("change"),
            SeriesSpec::Interval(d) => d.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SeriesSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SeriesSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a sampling interval such as \"10ms\", or \"change\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                if v.trim() == "change" {
                    return Ok(SeriesSpec::Change);
                }
                Duration::parse(v)
                    .map(SeriesSpec::Interval)
                    .map_err(|e| E::custom(format!("{e} (or \"change\")")))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for StartSpec {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            StartSpec::At(d) => d.serialize(s),
            StartSpec::Uniform(a, b) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("uniform", &[a, b])?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for StartSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StartSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a start time such as \"1s\", or { uniform = [\"0s\", \"1s\"] }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Self::Value, E> {
                Duration::parse(v).map(StartSpec::At).map_err(|e| E::custom(e.0))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Self::Value, A::Error> {
                let mut found = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "uniform" || found.is_some() {
                        return Err(de::Error::custom(format!(
                            "unknown key `{key}`: a random start is {{ uniform = [\"0s\", \"1s\"] }}"
                        )));
                    }
                    let [a, b]: [Duration; 2] = map.next_value()?;
                    found = Some(StartSpec::Uniform(a, b));
                }
                found.ok_or_else(|| de::Error::custom("a random start is { uniform = [\"0s\", \"1s\"] }"))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    #[test]
    fn start_draws_stay_in_the_interval() {
        let s = StartSpec::Uniform(Duration::ZERO, Duration::from_secs(1));
        let mut rng = stream(1, "flow:x");
        let draws: Vec<SimTime> = (0..1000).map(|_| s.draw(&mut rng)).collect();
        assert!(draws.iter().all(|t| t.0 <= 1_000_000_000));
        let mean = draws.iter().map(|t| t.0 as f64).sum::<f64>() / 1000.0;
        assert!((mean - 5e8).abs() < 3e7, "{mean}");
    }

    #[test]
    fn defaults_and_initial_window() {
        let p = build_tcp_params(None, &KeyPath::root()).unwrap();
        assert_eq!((p.mss, p.window, p.initial_window), (1460, 65_535, 4380));
        let spec = TcpSpec {
            mss: Some(Bytes(536)),
            initial_window: None,
            ..Default::default()
        };
        // RFC 5681 (1): SMSS <= 1095 -> 4 segments.
        assert_eq!(
            build_tcp_params(Some(&spec), &KeyPath::root()).unwrap().initial_window,
            2144
        );
    }
}
