//! Scenario keys of TCP flows: the `ftp` and `web` apps' size and time distributions and
//! random start times, and how a flow's `tcp` table (declared next to TCP, in
//! [`crate::transport::tcp::spec`]) and its application make a connection.
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
use crate::time::{Bytes, Duration, SimTime};
use crate::transport::tcp::{SeriesMode, TcpParams};

type Result<T> = std::result::Result<T, ConfigError>;

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
    let params = spec.tcp.clone().unwrap_or_default().params(&p.key("tcp"))?;
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
}
