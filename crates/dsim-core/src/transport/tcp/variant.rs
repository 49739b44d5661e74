//! The loss-recovery variants behind one small trait, and the enum that dispatches.
//!
//! The sender ([`super::sender`]) owns the sequence variables, cwnd growth, the timer and
//! the send loop; a variant decides what duplicate, partial and full ACKs do, and (for
//! SACK) what to send during recovery:
//! - [`Reno`]: RFC 5681 section 3.2, fast retransmit and fast recovery.
//! - [`NewReno`]: RFC 6582 section 3.2, partial ACKs keep the sender in fast recovery.
//! - [`Sack`]: RFC 6675 with the SACK option of RFC 2018, the scoreboard and the pipe.

use super::newreno::NewReno;
use super::reno::Reno;
use super::sack::Sack;
use super::sender::{AckInfo, Segment, Sender};

/// The hooks a loss-recovery variant implements. Defaults: no scoreboard, the window
/// rule of RFC 5681 for sending, nothing to do on a timeout.
///
/// The sender settles the common case itself, the same in every variant: outside loss
/// recovery a cumulative ACK without new SACK information grows cwnd, and segments go
/// out by the window rule. `on_ack` sees every other ACK, `next_segment` and `on_sent`
/// run during recovery only.
pub trait LossRecovery {
    /// An ACK arrived; the sender has already moved SND.UNA and taken any RTT sample.
    fn on_ack(&mut self, s: &mut Sender, a: &AckInfo);

    /// The retransmission timer expired; the sender has already set cwnd and ssthresh.
    fn on_timeout(&mut self, _s: &mut Sender) {}

    /// The next segment to send now during loss recovery, if any.
    fn next_segment(&mut self, s: &Sender) -> Option<Segment> {
        s.window_segment(|_| None)
    }

    /// `seg`, returned by `next_segment`, is going on the wire.
    fn on_sent(&mut self, _s: &Sender, _seg: &Segment) {}

    /// Records SACK blocks; returns the bytes newly SACKed.
    fn update_scoreboard(&mut self, _high_ack: u64, _high_data: u64, _blocks: impl Iterator<Item = (u64, u64)>) -> u64 {
        0
    }
}

/// The sender takes its variant out for the length of each hook call (the hooks borrow
/// the sender too), so the enum is kept small: SACK's scoreboard and recovery state live
/// behind a box and the take moves a pointer, not the state.
#[derive(Clone, Debug)]
pub enum Variant {
    Reno(Reno),
    NewReno(NewReno),
    Sack(Box<Sack>),
}

impl Default for Variant {
    fn default() -> Self {
        Variant::Reno(Reno)
    }
}

impl Variant {
    pub fn name(&self) -> &'static str {
        match self {
            Variant::Reno(_) => "reno",
            Variant::NewReno(_) => "newreno",
            Variant::Sack(_) => "sack",
        }
    }

    /// The connection uses the SACK option (the receiver sends blocks).
    pub fn uses_sack(&self) -> bool {
        matches!(self, Variant::Sack(_))
    }

    /// The end of the SACKed range holding `seq`, when the variant keeps a scoreboard and
    /// `seq` lies in one: bytes the sender need not send again.
    #[inline]
    pub fn sacked_end(&self, seq: u64) -> Option<u64> {
        match self {
            Variant::Sack(v) => v.scoreboard.sacked_range(seq).map(|r| r.1),
            _ => None,
        }
    }

    /// The SACK pipe (RFC 6675 SetPipe), when the variant keeps one.
    pub fn pipe(&self) -> Option<u64> {
        match self {
            Variant::Sack(v) => Some(v.pipe),
            _ => None,
        }
    }
}

macro_rules! dispatch {
    ($self:ident, $v:ident => $e:expr) => {
        match $self {
            Variant::Reno($v) => $e,
            Variant::NewReno($v) => $e,
            Variant::Sack($v) => $e,
        }
    };
}

impl LossRecovery for Variant {
    #[inline]
    fn on_ack(&mut self, s: &mut Sender, a: &AckInfo) {
        dispatch!(self, v => v.on_ack(s, a))
    }
    #[inline]
    fn on_timeout(&mut self, s: &mut Sender) {
        dispatch!(self, v => v.on_timeout(s))
    }
    #[inline]
    fn next_segment(&mut self, s: &Sender) -> Option<Segment> {
        dispatch!(self, v => v.next_segment(s))
    }
    #[inline]
    fn on_sent(&mut self, s: &Sender, seg: &Segment) {
        dispatch!(self, v => v.on_sent(s, seg))
    }
    #[inline]
    fn update_scoreboard(&mut self, high_ack: u64, high_data: u64, blocks: impl Iterator<Item = (u64, u64)>) -> u64 {
        dispatch!(self, v => v.update_scoreboard(high_ack, high_data, blocks))
    }
}
