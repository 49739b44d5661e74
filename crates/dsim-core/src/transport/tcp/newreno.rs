//! NewReno: RFC 6582, "The NewReno Modification to TCP's Fast Recovery Algorithm",
//! section 3.2.
//!
//! ```text
//! recover = ISN initially                                                  (step 1)
//! 3rd duplicate ACK: if the ACK covers more than recover: recover = highest sequence
//!     number sent; fast retransmit as RFC 5681 (ssthresh, retransmit,
//!     cwnd = ssthresh + 3 SMSS); otherwise nothing                        (step 2)
//! further duplicate ACKs: cwnd += SMSS                                     (step 3)
//! partial ACK (below recover): retransmit the first unacknowledged segment;
//!     cwnd -= newly acked bytes; cwnd += SMSS if at least SMSS was acked; the first
//!     partial ACK restarts the retransmission timer, later ones do not   (step 3)
//! full ACK (covers recover): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS);
//!     leave fast recovery                                                  (step 3, option 1)
//! retransmission timeout: recover = highest sequence number sent           (step 4)
//! ```
//!
//! In dsim's exclusive notation `recover` holds the byte after the highest byte sent, so
//! "covers more than recover" and "acknowledges all of the data up to and including
//! recover" both read `ack >= recover`. dsim keeps cwnd at least one SMSS after the
//! deflation of a partial ACK (the RFC leaves the floor open).

use super::reno::{count_ack, enter_fast_recovery};
use super::sender::{AckInfo, DATA_START, LogEvent, Sender};
use super::variant::LossRecovery;

#[derive(Clone, Copy, Debug)]
pub struct NewReno {
    pub recover: u64,
    partial_acks: u32,
}

impl Default for NewReno {
    fn default() -> Self {
        // Step 1: recover = ISN, i.e. the first data byte in exclusive notation.
        NewReno {
            recover: DATA_START,
            partial_acks: 0,
        }
    }
}

impl LossRecovery for NewReno {
    fn on_ack(&mut self, s: &mut Sender, a: &AckInfo) {
        let mss = s.mss();
        if s.in_recovery {
            if a.acked > 0 {
                if a.ack >= self.recover {
                    // Full acknowledgment.
                    s.cwnd = s.ssthresh.min(s.flight_size().max(mss) + mss);
                    s.end_recovery(a.ack);
                } else {
                    // Partial acknowledgment: deflate by the bytes acknowledged, add back
                    // one SMSS if at least one SMSS was acknowledged, retransmit the first
                    // unacknowledged segment.
                    s.cwnd = s.cwnd.saturating_sub(a.acked);
                    if a.acked >= mss {
                        s.cwnd += mss;
                    }
                    s.cwnd = s.cwnd.max(mss);
                    self.partial_acks += 1;
                    if self.partial_acks > 1 {
                        s.keep_timer = true;
                    }
                    s.record(LogEvent::PartialAck { ack: a.ack });
                    let seq = s.snd_una;
                    s.retransmit(seq);
                }
            } else if a.dup {
                s.cwnd += mss;
            }
            return;
        }
        // Step 2: the third duplicate ACK starts fast retransmit only if the ACK covers
        // more than `recover`.
        if count_ack(s, a) && a.ack >= self.recover {
            self.recover = s.snd_max;
            self.partial_acks = 0;
            enter_fast_recovery(s);
        }
    }

    fn on_timeout(&mut self, s: &mut Sender) {
        // Step 4: "After a retransmit timeout, record the highest sequence number
        // transmitted in the variable recover, and exit the fast recovery procedure".
        self.recover = s.snd_max;
    }
}
