//! Congestion control, apart from loss recovery (as ns-3's `TcpCongestionOps` and Linux's
//! `tcp_congestion_ops` are apart from their recovery state machines): how cwnd grows in
//! congestion avoidance, and what ssthresh a congestion event sets. The loss-recovery
//! variant ([`super::variant`]) decides when a loss starts a recovery and what cwnd does
//! during it; the sender ([`super::sender`]) owns slow start, the timer, the ECN response
//! and the send loop, and asks the congestion control at three points:
//!
//! ```text
//! ACK of new data with cwnd >= ssthresh:   cwnd = avoid(cwnd, bytes counted)
//! loss detected (fast retransmit), ECE,
//! retransmission timeout:                  ssthresh = ssthresh(event)
//! cwnd set by recovery, ECN or a timeout:  restart_count()
//! ```
//!
//! - [`Reno`]: RFC 5681 section 3.1, congestion avoidance by byte counting (RFC 3465 2.1:
//!   bytes_acked += N; when bytes_acked >= cwnd, bytes_acked -= cwnd and cwnd += SMSS) or
//!   per ACK (RFC 5681 (3): cwnd += max(1, SMSS * SMSS / cwnd)); ssthresh = max(FlightSize
//!   / 2, 2 SMSS) (RFC 5681 (4), RFC 3168 6.1.2).
//! - [`Cubic`]: RFC 9438 ([`super::cubic`]).
//! - [`Dctcp`]: RFC 8257 ([`super::dctcp`]): Reno's growth and loss response, and on ECE
//!   a reduction by the estimated fraction of bytes marked; it sees every ACK
//!   ([`Congestion::on_ack`]).
//!
//! The choice is one enum matched at each call: no allocation, no indirect call.

use serde::{Deserialize, Serialize};

use super::cubic::{Cubic, CubicSpec};
use super::dctcp::{Dctcp, DctcpSpec};
use super::sender::Counting;
use super::sender::DATA_START;
use crate::params::Params;
use crate::time::{Duration, SimTime};

/// Which congestion control a connection runs (`congestion = "reno"`, `"cubic"`,
/// `"dctcp"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "lowercase")]
pub enum CongestionKind {
    #[default]
    Reno,
    Cubic,
    Dctcp,
}

/// What detected congestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// Duplicate ACKs or SACK information: loss recovery starts.
    Loss,
    /// An ACK carrying ECN-Echo (RFC 3168 6.1.2).
    Ecn,
    /// The retransmission timer expired.
    Timeout,
}

/// A congestion event as the sender sees it.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub signal: Signal,
    pub now: SimTime,
    /// cwnd before any reduction.
    pub cwnd: u64,
    /// FlightSize of RFC 5681: SND.MAX - SND.UNA.
    pub flight: u64,
    pub mss: u64,
}

/// An ACK of new data in congestion avoidance.
#[derive(Clone, Copy, Debug)]
pub struct Acked {
    pub now: SimTime,
    /// Bytes newly acknowledged.
    pub bytes: u64,
    pub mss: u64,
    pub counting: Counting,
    /// The sender's smoothed RTT (RFC 6298), once it has one.
    pub srtt: Option<Duration>,
}

impl Acked {
    /// What the ACK counts for: the bytes it acknowledges (byte counting) or one segment
    /// (per-ACK counting).
    pub fn counted(&self) -> u64 {
        match self.counting {
            Counting::Bytes => self.bytes,
            Counting::Packets => self.mss,
        }
    }
}

/// A connection's congestion control and its state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Congestion {
    Reno(Reno),
    Cubic(Cubic),
    Dctcp(Dctcp),
}

impl Default for Congestion {
    fn default() -> Self {
        Congestion::Reno(Reno::default())
    }
}

impl Congestion {
    /// A new connection's congestion control of `kind` (CUBIC with `cubic`, DCTCP with
    /// `dctcp`).
    pub fn new(kind: CongestionKind, cubic: CubicSpec, dctcp: DctcpSpec) -> Self {
        match kind {
            CongestionKind::Reno => Congestion::Reno(Reno::default()),
            CongestionKind::Cubic => Congestion::Cubic(Cubic::new(cubic)),
            CongestionKind::Dctcp => Congestion::Dctcp(Dctcp::new(dctcp, DATA_START)),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Congestion::Reno(_) => "reno",
            Congestion::Cubic(_) => "cubic",
            Congestion::Dctcp(_) => "dctcp",
        }
    }

    /// cwnd after an ACK of new data in congestion avoidance (cwnd >= ssthresh).
    #[inline]
    pub fn avoid(&mut self, cwnd: u64, a: &Acked) -> u64 {
        match self {
            Congestion::Reno(r) => r.avoid(cwnd, a),
            Congestion::Cubic(c) => c.avoid(cwnd, a),
            Congestion::Dctcp(d) => d.reno.avoid(cwnd, a),
        }
    }

    /// The ssthresh a congestion event sets (the sender and the variant set cwnd from it).
    pub fn ssthresh(&mut self, e: &Event) -> u64 {
        match self {
            Congestion::Reno(_) => reno_ssthresh(e),
            Congestion::Cubic(c) => c.ssthresh(e),
            Congestion::Dctcp(d) => d.ssthresh(e),
        }
    }

    /// cwnd was set by loss recovery, the ECN response or a timeout: counting towards the
    /// next increase starts again.
    pub fn restart_count(&mut self) {
        match self {
            Congestion::Reno(r) => r.bytes_acked = 0,
            Congestion::Cubic(c) => c.restart_count(),
            Congestion::Dctcp(d) => d.reno.bytes_acked = 0,
        }
    }

    /// Every ACK, before the sender reacts to it: `acked` bytes newly acknowledged
    /// cumulatively, its ECE flag, its ACK number and SND.NXT (DCTCP's estimator).
    #[inline]
    pub fn on_ack(&mut self, acked: u64, ece: bool, ack: u64, snd_nxt: u64) {
        if let Congestion::Dctcp(d) = self {
            d.on_ack(acked, ece, ack, snd_nxt);
        }
    }

    /// An RTT sample (RFC 6298) was taken.
    #[inline]
    pub fn rtt_sample(&mut self, r: Duration) {
        if let Congestion::Cubic(c) = self {
            c.rtt_sample(r);
        }
    }

    /// The application writes at `now` after `idle` with nothing to send or outstanding.
    pub fn after_idle(&mut self, idle: Duration, now: SimTime) {
        if let Congestion::Cubic(c) = self {
            c.after_idle(idle, now);
        }
    }

    /// DCTCP's estimate Alpha (NaN for the others).
    pub fn dctcp_alpha(&self) -> f64 {
        match self {
            Congestion::Dctcp(d) => d.alpha,
            _ => f64::NAN,
        }
    }

    /// CUBIC's W_max (bytes) and K (s) of the current stage, NaN when undefined or not CUBIC.
    pub fn cubic_state(&self) -> (f64, f64) {
        match self {
            Congestion::Cubic(c) => (c.w_max.unwrap_or(f64::NAN), c.k()),
            _ => (f64::NAN, f64::NAN),
        }
    }
}

/// RFC 5681 (4): ssthresh = max(FlightSize / 2, 2 SMSS); RFC 3168 6.1.2 uses the same on ECE.
pub fn reno_ssthresh(e: &Event) -> u64 {
    (e.flight / 2).max(2 * e.mss)
}

/// Reno's congestion avoidance: one SMSS per window of data acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reno {
    /// RFC 3465 2.1's bytes_acked (byte counting only).
    pub bytes_acked: u64,
}

impl Reno {
    #[inline]
    pub fn avoid(&mut self, cwnd: u64, a: &Acked) -> u64 {
        match a.counting {
            // RFC 5681 (3), per ACK.
            Counting::Packets => cwnd + (a.mss * a.mss / cwnd).max(1),
            // RFC 3465 2.1.
            Counting::Bytes => {
                self.bytes_acked += a.bytes;
                if self.bytes_acked >= cwnd {
                    self.bytes_acked -= cwnd;
                    cwnd + a.mss
                } else {
                    cwnd
                }
            }
        }
    }
}
