//! SACK-based loss recovery: RFC 6675, "A Conservative Loss Recovery Algorithm Based on
//! Selective Acknowledgment (SACK) for TCP", section 5, over the SACK option of RFC 2018.
//!
//! ```text
//! every ACK:            Update() the scoreboard
//! (1) cumulative ACK:   DupAcks = 0
//! (2) DupAck (new SACK information) outside recovery: DupAcks += 1;
//!     (2.a) DupAcks >= DupThresh, or (2.b) IsLost(HighACK + 1): go to (4)
//! (4) RecoveryPoint = HighData                                             (4.1)
//!     ssthresh = cwnd = max(FlightSize / 2, 2 SMSS)                        (4.2)
//!     retransmit HighACK + 1; HighRxt = RescueRxt = its last byte          (4.3)
//!     pipe = SetPipe()                                                     (4.4)
//! in recovery: (A) an ACK beyond RecoveryPoint ends it;
//!     (B) otherwise pipe = SetPipe();
//!     (C) while cwnd - pipe >= SMSS: send NextSeg(), pipe += its length;
//!         HighRxt = end of a retransmission (except a rescue, rule 4)
//! NextSeg(): (1) the first lost un-SACKed hole above HighRxt; (2) new data if the
//!     receiver's window allows; (3) the first un-SACKed hole above HighRxt below the
//!     highest SACK; (4) once per recovery, a rescue retransmission of the highest
//!     un-SACKed segment.
//! ```
//!
//! Section 5.1, timeouts: RecoveryPoint = HighData, recovery ends, and no new recovery
//! starts before HighACK reaches RecoveryPoint. dsim follows RFC 2018 section 8 and clears
//! the scoreboard on a timeout ("the data sender SHOULD turn off all of the SACKed bits");
//! SACK information arriving after the timeout is used: the go-back-N retransmission
//! skips bytes the receiver reports holding (RFC 6675 5.1: "a SACK TCP sender SHOULD
//! utilize all SACK information made available during the loss recovery following an
//! RTO"). Limited transmit (2.c, a MAY) is not used.

use super::congestion::Signal;
use super::scoreboard::{DUP_THRESH, Scoreboard};
use super::sender::{AckInfo, DATA_START, Segment, Sender};
use super::variant::LossRecovery;

#[derive(Clone, Debug)]
pub struct Sack {
    pub scoreboard: Scoreboard,
    /// In exclusive notation: recovery ends with an ACK at or beyond it.
    pub recovery_point: u64,
    /// The byte after the highest byte retransmitted in this recovery.
    pub high_rxt: u64,
    /// The byte after the last byte of RescueRxt; None = undefined.
    rescue_rxt: Option<u64>,
    pub pipe: u64,
    /// The segment NextSeg() returned last came from rule (4).
    rescue: bool,
}

impl Default for Sack {
    fn default() -> Self {
        Sack {
            scoreboard: Scoreboard::with_capacity(8),
            recovery_point: DATA_START,
            high_rxt: DATA_START,
            rescue_rxt: None,
            pipe: 0,
            rescue: false,
        }
    }
}

impl Sack {
    fn set_pipe(&mut self, s: &Sender) {
        self.pipe = self.scoreboard.pipe(s.snd_una, s.snd_max, self.high_rxt, s.mss());
    }

    /// Step (4): fast retransmit and enter loss recovery.
    fn enter(&mut self, s: &mut Sender) {
        self.recovery_point = s.snd_max;
        s.ssthresh = s.congestion_ssthresh(Signal::Loss);
        s.cwnd = s.ssthresh;
        let seq = s.snd_una;
        let end = seq + s.segment_len(seq, s.snd_max) as u64;
        self.high_rxt = end;
        self.rescue_rxt = Some(end);
        s.fast_retransmit(seq);
        self.set_pipe(s);
    }

    /// (C) "If cwnd - pipe >= 1 SMSS, the sender SHOULD transmit one or more segments".
    fn recovery_segment(&mut self, s: &Sender) -> Option<Segment> {
        if s.cwnd < self.pipe + s.mss() {
            return None;
        }
        self.next_seg(s)
    }

    /// NextSeg() of section 4.
    fn next_seg(&mut self, s: &Sender) -> Option<Segment> {
        let mss = s.mss();
        let from = self.high_rxt.max(s.snd_una);
        let rtx = |seq: u64, hole_end: u64| Segment {
            seq,
            len: s.segment_len(seq, hole_end),
            retransmission: true,
            syn: false,
            cwr: false,
        };
        self.rescue = false;
        let hole = self.scoreboard.first_hole(from, u64::MAX, s.snd_max);
        // (1) S2 > HighRxt, below the highest SACK, IsLost(S2).
        let edge = self.scoreboard.lost_edge(s.snd_una, mss);
        if let Some((a, b)) = hole.filter(|h| h.0 < edge) {
            return Some(rtx(a, b));
        }
        // (2) new data, if the receiver's window allows.
        let len = s.segment_len(s.snd_max, s.app_end);
        if len > 0 && s.snd_max + len as u64 <= s.snd_una + s.rwnd {
            return Some(Segment {
                seq: s.snd_max,
                len,
                retransmission: false,
                syn: false,
                cwr: false,
            });
        }
        // (3) as (1) without IsLost.
        let high_sacked = self.scoreboard.high_sacked().unwrap_or(0);
        if let Some((a, b)) = hole.filter(|h| h.0 < high_sacked) {
            return Some(rtx(a, b));
        }
        // (4) the rescue retransmission: "If HighACK is greater than RescueRxt (or
        // RescueRxt is undefined), then one segment of upto SMSS octets that MUST include
        // the highest outstanding unSACKed sequence number".
        if self.rescue_rxt.is_none_or(|r| s.snd_una > r) {
            if let Some((a, b)) = self.scoreboard.last_hole(s.snd_una, s.snd_max) {
                let aligned = DATA_START + (b - 1 - DATA_START) / mss * mss;
                self.rescue = true;
                return Some(rtx(a.max(aligned), b));
            }
        }
        None
    }
}

impl LossRecovery for Sack {
    fn on_ack(&mut self, s: &mut Sender, a: &AckInfo) {
        if s.in_recovery {
            if a.ack >= self.recovery_point {
                // (A) "An incoming cumulative ACK for a sequence number greater than
                // RecoveryPoint signals the end of loss recovery".
                s.end_recovery(a.ack);
            } else {
                // (B.2); (C) runs in the send loop.
                self.set_pipe(s);
            }
            return;
        }
        if a.acked > 0 {
            // (1)
            s.dupacks = 0;
            s.grow(a.acked);
        }
        if a.newly_sacked > 0 {
            // (2), "regardless of its status as a cumulative acknowledgment".
            s.dupacks += 1;
            let lost = self.scoreboard.is_lost(s.snd_una, s.snd_una, s.mss());
            // Section 5.1: no new recovery before HighACK reaches RecoveryPoint.
            if (s.dupacks as u64 >= DUP_THRESH || lost) && s.snd_una >= self.recovery_point {
                self.enter(s);
            }
        }
    }

    fn on_timeout(&mut self, s: &mut Sender) {
        self.recovery_point = s.snd_max;
        self.scoreboard.clear();
        self.high_rxt = s.snd_una;
        self.rescue_rxt = None;
        self.pipe = 0;
    }

    // Called in recovery only: outside it the sender sends by the window rule, skipping
    // the SACKed ranges (`Variant::sacked_end`).
    fn next_segment(&mut self, s: &Sender) -> Option<Segment> {
        self.recovery_segment(s)
    }

    fn on_sent(&mut self, _s: &Sender, seg: &Segment) {
        // (C.4)
        self.pipe += seg.len as u64;
        // (C.2)
        if seg.retransmission && !self.rescue {
            self.high_rxt = seg.seq + seg.len as u64;
        }
        if self.rescue {
            self.rescue_rxt = Some(self.recovery_point);
        }
    }

    fn update_scoreboard(&mut self, high_ack: u64, high_data: u64, blocks: impl Iterator<Item = (u64, u64)>) -> u64 {
        self.scoreboard.update(high_ack, high_data, blocks)
    }
}
