//! The `tcp` table of a flow, declared once: each key with its help, its default and the
//! RFC or stack the default comes from. [`TcpSpec::params`] checks the table (the declared
//! ranges, then the rules that tie keys together) and resolves it into the [`TcpParams`]
//! a connection runs with.
//!
//! ```toml
//! tcp = { variant = "sack", mss = "1460B", window = "65535B", delayed_ack = "40ms" }
//! ```

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::congestion::{Congestion, CongestionKind};
use super::cubic::CubicSpec;
use super::dctcp::DctcpSpec;
use super::rtt::RttParams;
use super::sender::{Counting, RtoRestart, SenderParams};
use super::{HEADERS, SeriesMode, TcpParams, VariantKind};
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::{Bytes, Duration, Limit};

/// The largest delayed-ACK timer: RFC 5681 4.2, an ACK "MUST be generated within 500 ms of
/// the arrival of the first unacknowledged packet".
const MAX_DELAYED_ACK: Duration = Duration(500_000_000);

/// The `tcp` table of a flow (`ftp` and `web` flows): loss recovery, segment and window
/// sizes, the retransmission timer, delayed ACKs, ECN, the handshake and the `series`
/// table. Both ends of the connection use it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(default, deny_unknown_fields)]
pub struct TcpSpec {
    /// Loss recovery: "reno" (fast retransmit and fast recovery), "newreno" (partial ACKs
    /// keep the sender in fast recovery) or "sack" (the scoreboard and the pipe). Default
    /// SACK: the seeds' "SACK-TCP" (ns-2's Sack1 agent), and Linux's default.
    #[param(section = "RFC 5681 3.2, RFC 6582, RFC 6675")]
    pub variant: VariantKind,
    /// Congestion control, chosen apart from loss recovery (as in ns-3 and Linux): how
    /// cwnd grows in congestion avoidance and what a congestion event sets ssthresh to.
    /// "reno": one segment per window of data acknowledged, ssthresh = max(FlightSize / 2,
    /// 2 SMSS) (RFC 5681 3.1); "cubic": the cubic window function of RFC 9438 with its
    /// Reno-friendly region, ssthresh = 0.7 FlightSize (the `cubic` table); "dctcp": Reno,
    /// but an ECN-Echo scales cwnd by 1 - Alpha / 2, Alpha the estimated fraction of bytes
    /// marked (RFC 8257; needs ecn = true and queues that mark, `mark_threshold`; the
    /// `dctcp` table). Default reno, the congestion control of the seeds' TCPs.
    #[param(section = "RFC 5681 3.1, RFC 9438 4, RFC 8257 3")]
    pub congestion: CongestionKind,
    /// CUBIC's constants and options, with congestion = "cubic" only (RFC 9438's values
    /// when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cubic: Option<CubicSpec>,
    /// DCTCP's estimator, with congestion = "dctcp" only (RFC 8257's values when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dctcp: Option<DctcpSpec>,
    /// Payload bytes of a full-sized segment (SMSS). Default 1460B: an Ethernet MTU of
    /// 1500B less the IPv4 and TCP headers (40B). An IP datagram holds at most 65535B.
    #[param(range = "[1B, 65495B]", section = "RFC 5681 2")]
    pub mss: Bytes,
    /// The receiver's buffer, and so the largest window; at least one segment. Default
    /// 65535B, the largest window without window scaling (RFC 7323): the seeds' "maximum
    /// window of 64 KB".
    #[param(range = "[1B, 4294967295B]", section = "RFC 793 3.7")]
    pub window: Bytes,
    /// The initial window IW: segments ("2p") or bytes ("4380B"), at least one segment.
    /// Default RFC 5681 (1): 2 segments if the MSS is above 2190B, 3 above 1095B, else 4.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[param(range = "(0, inf)", section = "RFC 5681 3.1")]
    pub initial_window: Option<Limit>,
    /// How slow start and congestion avoidance count ACKs: "bytes" (appropriate byte
    /// counting, RFC 3465: slow start grows by the bytes acknowledged, at most 2 SMSS per
    /// ACK) or "packets" (one SMSS per ACK in slow start, SMSS * SMSS / cwnd per ACK in
    /// congestion avoidance, RFC 5681 (3), as ns-2's agents count). Default bytes.
    #[param(section = "RFC 3465 2, RFC 5681 3.1")]
    pub counting: Counting,
    /// RTO before the first RTT sample. Default 1s, RFC 6298 (2.1).
    #[param(range = "(0, inf)", section = "RFC 6298 2.1")]
    pub initial_rto: Duration,
    /// Lower bound of RTO, at most max_rto. Default 200ms, Linux's TCP_RTO_MIN and ns-2
    /// practice (RFC 6298 (2.4) asks for 1s).
    #[param(section = "RFC 6298 2.4")]
    pub min_rto: Duration,
    /// Upper bound of RTO. Default 60s, RFC 6298 (2.5): "at least 60 seconds".
    #[param(range = "(0, inf)", section = "RFC 6298 2.5")]
    pub max_rto: Duration,
    /// Clock granularity G of the RTT samples and of RTO = SRTT + max(G, 4 RTTVAR); "0s"
    /// is an ideal clock. Default 1ms, a Linux jiffy at HZ = 1000.
    #[param(section = "RFC 6298 2")]
    pub granularity: Duration,
    /// What restarts the retransmission timer besides an ACK of new data:
    /// "on_retransmit" (also loss recovery's retransmission of SND.UNA, as ns-2, Linux and
    /// FreeBSD do; the default) or "on_new_ack" (RFC 6298 (5.3) alone).
    #[param(section = "RFC 6298 5.3")]
    pub rto_restart: RtoRestart,
    /// The delayed-ACK timer, above 0s and at most 500ms, or false to acknowledge every
    /// segment at once. Default 40ms, Linux's smallest delayed-ACK timeout (TCP_DELACK_MIN).
    #[param(section = "RFC 5681 4.2")]
    pub delayed_ack: DelayedAckSpec,
    /// Most SACK blocks per ACK, 1 to 4. Default 3, the number that fits beside the
    /// timestamp option (as Linux sends them).
    #[param(range = "[1, 4]", section = "RFC 2018 3")]
    pub sack_blocks: u32,
    /// ECN (RFC 3168): data segments are ECN-capable and an ECN-Echo halves cwnd once per
    /// window. Default off, as a Linux sender.
    #[param(section = "RFC 3168 6.1")]
    pub ecn: bool,
    /// Open the connection with SYN and SYN-ACK (not for `web` flows). Default off: a
    /// long-lived flow starts established, as ns-2's agents do.
    pub handshake: bool,
    /// Record cwnd, ssthresh and the RTT into the `series` table: every interval
    /// ("10ms", above 0s) inside the measurement window, or at every "change" of cwnd or
    /// ssthresh. Default none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<SeriesSpec>,
}

impl Default for TcpSpec {
    /// The defaults, each with its source in the key's doc comment above.
    fn default() -> Self {
        TcpSpec {
            variant: VariantKind::Sack,
            congestion: CongestionKind::Reno,
            cubic: None,
            dctcp: None,
            mss: Bytes(1460),
            window: Bytes(65_535),
            initial_window: None,
            counting: Counting::Bytes,
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            granularity: Duration::from_millis(1),
            rto_restart: RtoRestart::OnRetransmit,
            delayed_ack: DelayedAckSpec::After(Duration::from_millis(40)),
            sack_blocks: 3,
            ecn: false,
            handshake: false,
            series: None,
        }
    }
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

crate::custom_value!(
    DelayedAckSpec,
    "the delayed-ACK timer (\"40ms\"), or false to acknowledge every segment"
);
crate::custom_value!(
    SeriesSpec,
    "a sampling interval (\"10ms\"), or \"change\" for every change"
);

type Result<T> = std::result::Result<T, ConfigError>;

fn refuse<T>(path: KeyPath, value: impl fmt::Display, rule: impl Into<String>) -> Result<T> {
    Err(ConfigError::new(path, Some(format!("\"{value}\"")), rule))
}

impl TcpSpec {
    /// The parameters a connection runs with: the declared ranges, then the rules that tie
    /// keys together (a window and an initial window of at least one segment, min_rto <=
    /// max_rto) and those of the scalar-or-text keys.
    pub fn params(&self, path: &KeyPath) -> Result<TcpParams> {
        self.check(path)?;
        // The declared range keeps the MSS within an IP datagram.
        let mss = self.mss.0 as u32;
        debug_assert!(mss + HEADERS <= 65_535);
        if self.window.0 < mss as u64 {
            return refuse(
                path.key("window"),
                self.window,
                format!("the window must hold at least one segment (mss = {mss}B)"),
            );
        }
        Ok(TcpParams {
            variant: self.variant,
            congestion: self.congestion(path)?,
            mss,
            window: self.window.0 as u32,
            initial_window: self.initial_window(mss as u64, path)?,
            counting: self.counting,
            rtt: self.rtt(path)?,
            rto_restart: self.rto_restart,
            delayed_ack: self.delayed_ack(path)?,
            sack_blocks: self.sack_blocks as usize,
            ecn: self.ecn,
            handshake: self.handshake,
            series: self.series(path)?,
        })
    }

    /// The congestion control, with its table when it has one.
    fn congestion(&self, path: &KeyPath) -> Result<Congestion> {
        for (key, given, kind) in [
            ("cubic", self.cubic.is_some(), CongestionKind::Cubic),
            ("dctcp", self.dctcp.is_some(), CongestionKind::Dctcp),
        ] {
            if given && self.congestion != kind {
                return Err(ConfigError::new(
                    path.key(key),
                    None,
                    format!("the {key} table configures congestion = \"{key}\": choose it, or leave the table out"),
                ));
            }
        }
        if self.congestion == CongestionKind::Dctcp && !self.ecn {
            return Err(ConfigError::new(
                path.key("ecn"),
                Some("false".into()),
                "congestion = \"dctcp\" reacts to ECN marks: it needs ecn = true (RFC 8257 section 3)",
            ));
        }
        Ok(Congestion::new(
            self.congestion,
            self.cubic.unwrap_or_default(),
            self.dctcp.unwrap_or_default(),
        ))
    }

    /// IW in bytes: as configured, or RFC 5681 (1).
    fn initial_window(&self, mss: u64, path: &KeyPath) -> Result<u64> {
        let iw = match self.initial_window {
            None => return Ok(SenderParams::rfc5681_initial_window(mss)),
            Some(Limit::Packets(n)) => n * mss,
            Some(Limit::Bytes(b)) => b,
        };
        if iw < mss {
            let written = self.initial_window.expect("configured");
            return refuse(
                path.key("initial_window"),
                written,
                format!("the initial window must be at least one segment (\"1p\" or {mss}B)"),
            );
        }
        Ok(iw)
    }

    /// The RFC 6298 timer's parameters.
    pub fn rtt(&self, path: &KeyPath) -> Result<RttParams> {
        if self.min_rto > self.max_rto {
            return refuse(
                path.key("min_rto"),
                self.min_rto,
                format!("min_rto must not exceed max_rto ({})", self.max_rto),
            );
        }
        Ok(RttParams {
            initial_rto: self.initial_rto,
            min_rto: self.min_rto,
            max_rto: self.max_rto,
            granularity: self.granularity,
        })
    }

    fn delayed_ack(&self, path: &KeyPath) -> Result<Option<Duration>> {
        match self.delayed_ack {
            DelayedAckSpec::Off => Ok(None),
            DelayedAckSpec::After(t) if t > Duration::ZERO && t <= MAX_DELAYED_ACK => Ok(Some(t)),
            DelayedAckSpec::After(t) => refuse(
                path.key("delayed_ack"),
                t,
                "the delayed-ACK timer is above 0s and at most 500ms (RFC 5681 4.2); write false to turn delayed ACKs off",
            ),
        }
    }

    fn series(&self, path: &KeyPath) -> Result<Option<SeriesMode>> {
        match self.series {
            None => Ok(None),
            Some(SeriesSpec::Change) => Ok(Some(SeriesMode::Change)),
            Some(SeriesSpec::Interval(t)) if t > Duration::ZERO => Ok(Some(SeriesMode::Interval(t))),
            Some(SeriesSpec::Interval(t)) => refuse(
                path.key("series"),
                t,
                "the sampling interval must be longer than 0s (or \"change\")",
            ),
        }
    }
}

// -- (de)serialization of the scalar-or-text keys -------------------------------------

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

#[cfg(test)]
mod tests {
    use super::*;

    fn params(spec: &TcpSpec) -> Result<TcpParams> {
        spec.params(&KeyPath::root().key("tcp"))
    }

    #[test]
    fn defaults_and_the_initial_window_of_rfc5681() {
        let p = params(&TcpSpec::default()).unwrap();
        assert_eq!((p.mss, p.window, p.initial_window), (1460, 65_535, 4380));
        assert_eq!(p.delayed_ack, Some(Duration::from_millis(40)));
        assert_eq!(
            (p.variant, p.counting, p.sack_blocks),
            (VariantKind::Sack, Counting::Bytes, 3)
        );
        // RFC 5681 (1): SMSS <= 1095 -> 4 segments.
        let small = TcpSpec {
            mss: Bytes(536),
            ..Default::default()
        };
        assert_eq!(params(&small).unwrap().initial_window, 2144);
        let two = TcpSpec {
            initial_window: Some(Limit::Packets(2)),
            ..Default::default()
        };
        assert_eq!(params(&two).unwrap().initial_window, 2920);
    }

    #[test]
    fn congestion_control_and_its_table() {
        let cubic: TcpSpec = toml::from_str("congestion = \"cubic\"\ncubic = { beta = 0.8 }").unwrap();
        let Congestion::Cubic(c) = params(&cubic).unwrap().congestion else {
            panic!("cubic")
        };
        assert_eq!((c.spec.beta, c.spec.c, c.spec.fast_convergence), (0.8, 0.4, true));
        // Without its table, RFC 9438's constants.
        let plain: TcpSpec = toml::from_str("congestion = \"cubic\"").unwrap();
        let Congestion::Cubic(c) = params(&plain).unwrap().congestion else {
            panic!("cubic")
        };
        assert_eq!(c.spec, CubicSpec::default());
        assert!(matches!(
            params(&TcpSpec::default()).unwrap().congestion,
            Congestion::Reno(_)
        ));
    }

    #[test]
    fn every_default_is_what_a_table_without_keys_reads() {
        let read: TcpSpec = toml::from_str("").unwrap();
        assert_eq!(read, TcpSpec::default());
        // And what it writes reads back the same.
        let text = toml::to_string(&TcpSpec::default()).unwrap();
        assert_eq!(toml::from_str::<TcpSpec>(&text).unwrap(), TcpSpec::default());
    }

    #[test]
    fn rules_name_the_key_the_value_and_the_rule() {
        let cases: [(TcpSpec, &str, &str); 11] = [
            (
                TcpSpec {
                    mss: Bytes(0),
                    ..Default::default()
                },
                "tcp.mss",
                "mss must lie in [1B, 65495B]",
            ),
            (
                TcpSpec {
                    window: Bytes(1000),
                    ..Default::default()
                },
                "tcp.window",
                "at least one segment",
            ),
            (
                TcpSpec {
                    initial_window: Some(Limit::Bytes(1000)),
                    ..Default::default()
                },
                "tcp.initial_window",
                "at least one segment",
            ),
            (
                TcpSpec {
                    min_rto: Duration::from_secs(2),
                    max_rto: Duration::from_secs(1),
                    ..Default::default()
                },
                "tcp.min_rto",
                "must not exceed max_rto",
            ),
            (
                TcpSpec {
                    delayed_ack: DelayedAckSpec::After(Duration::from_secs(1)),
                    ..Default::default()
                },
                "tcp.delayed_ack",
                "at most 500ms",
            ),
            (
                TcpSpec {
                    sack_blocks: 5,
                    ..Default::default()
                },
                "tcp.sack_blocks",
                "sack_blocks must lie in [1, 4]",
            ),
            (
                TcpSpec {
                    series: Some(SeriesSpec::Interval(Duration::ZERO)),
                    ..Default::default()
                },
                "tcp.series",
                "longer than 0s",
            ),
            (
                TcpSpec {
                    cubic: Some(CubicSpec::default()),
                    ..Default::default()
                },
                "tcp.cubic",
                "configures congestion = \"cubic\"",
            ),
            (
                TcpSpec {
                    congestion: CongestionKind::Cubic,
                    cubic: Some(CubicSpec {
                        beta: 1.0,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                "tcp.cubic.beta",
                "beta must lie in (0, 1)",
            ),
            (
                TcpSpec {
                    congestion: CongestionKind::Dctcp,
                    ..Default::default()
                },
                "tcp.ecn",
                "needs ecn = true",
            ),
            (
                TcpSpec {
                    dctcp: Some(DctcpSpec::default()),
                    ecn: true,
                    ..Default::default()
                },
                "tcp.dctcp",
                "configures congestion = \"dctcp\"",
            ),
        ];
        for (spec, key, rule) in cases {
            let e = params(&spec).unwrap_err();
            assert_eq!(e.path.to_string(), key, "{e}");
            assert!(e.rule.contains(rule), "{e}");
            assert!(e.value.is_some() || key == "tcp.cubic" || key == "tcp.dctcp", "{e}");
        }
    }
}
