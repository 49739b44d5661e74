//! Reno: fast retransmit and fast recovery of RFC 5681 section 3.2.
//!
//! ```text
//! 3rd duplicate ACK:  ssthresh = max(FlightSize / 2, 2 SMSS)              (step 2, eq. 4)
//!                     retransmit SND.UNA; cwnd = ssthresh + 3 SMSS       (step 3)
//! each further dup:   cwnd += SMSS; send new data if cwnd allows          (steps 4, 5)
//! next new ACK:       cwnd = ssthresh; leave fast recovery                (step 6)
//! ```
//!
//! With several losses in one window, the ACK of the first retransmission ends recovery
//! (a "partial" ACK is just a new ACK to Reno); each further loss needs three more
//! duplicate ACKs, halving cwnd again, or the retransmission timer.

use super::congestion::Signal;
use super::sender::{AckInfo, Sender};
use super::variant::LossRecovery;

#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

/// An ACK outside recovery (shared with NewReno): a cumulative ACK grows cwnd (RFC 5681
/// 3.1) and resets the duplicate count; a duplicate ACK counts. Returns whether this ACK
/// is the third duplicate (step 2's trigger).
pub fn count_ack(s: &mut Sender, a: &AckInfo) -> bool {
    if a.acked > 0 {
        s.dupacks = 0;
        s.grow(a.acked);
    } else if a.dup {
        s.dupacks += 1;
        return s.dupacks == 3;
    }
    false
}

/// Steps 2 and 3 of RFC 5681 section 3.2 (shared with NewReno).
pub fn enter_fast_recovery(s: &mut Sender) {
    s.ssthresh = s.congestion_ssthresh(Signal::Loss);
    s.cwnd = s.ssthresh + 3 * s.mss();
    let seq = s.snd_una;
    s.fast_retransmit(seq);
}

impl LossRecovery for Reno {
    fn on_ack(&mut self, s: &mut Sender, a: &AckInfo) {
        if s.in_recovery {
            if a.acked > 0 {
                // Step 6: "When the next ACK arrives that acknowledges previously
                // unacknowledged data, a TCP MUST set cwnd to ssthresh".
                s.cwnd = s.ssthresh;
                s.end_recovery(a.ack);
            } else if a.dup {
                // Step 4: "For each additional duplicate ACK received (after the third),
                // cwnd MUST be incremented by SMSS."
                s.cwnd += s.mss();
            }
            return;
        }
        if count_ack(s, a) {
            enter_fast_recovery(s);
        }
    }
}
