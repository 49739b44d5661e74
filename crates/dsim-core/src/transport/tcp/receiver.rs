//! The TCP data receiver: reassembly, acknowledgements, delayed ACKs, SACK blocks and the
//! ECN echo.
//!
//! - Cumulative ACK = RCV.NXT, the first byte not yet received in order (RFC 793 3.3).
//!   Bytes reaching RCV.NXT are delivered to the application at once (the application
//!   reads immediately), so the advertised window is the configured receive buffer and
//!   its right edge never shrinks.
//! - Delayed ACKs, RFC 5681 section 4.2 (and RFC 1122 4.2.3.2): "an ACK SHOULD be
//!   generated for at least every second full-sized segment, and MUST be generated within
//!   500 ms of the arrival of the first unacknowledged packet"; dsim ACKs every second
//!   in-order segment or when the delayed-ACK timer (40 ms by default) fires. "A TCP
//!   receiver SHOULD send an immediate duplicate ACK when an out-of-order segment arrives"
//!   and "an immediate ACK SHOULD be generated when a segment arrives that fills in all or
//!   part of a gap in the sequence space". An old duplicate is acknowledged at once.
//! - SACK blocks, RFC 2018 section 4: "The first SACK block ... MUST specify the
//!   contiguous block of data containing the segment which triggered this ACK, unless that
//!   segment advanced the Acknowledgment Number field in the header"; the other blocks
//!   repeat "the most recently reported SACK blocks ... that are not subsets of a SACK
//!   block already included". Each block reports the current extent of its contiguous
//!   queued data. At most `max_blocks` (3 by default, as with timestamps in use; up to 4).
//! - ECN, RFC 3168 section 6.1.3: after a CE-marked data packet the receiver sets ECE on
//!   every ACK until a data packet with CWR arrives. With DCTCP (RFC 8257 section 3.2) ECE
//!   repeats the CE mark of the last data packet instead (DCTCP.CE), and a change of that
//!   state is acknowledged at once; when an ACK was being delayed, the segments before
//!   the change are acknowledged first with the old state (the two ACKs the section
//!   allows, which Linux's `dctcp_ece_ack_update` and ns-3's `TcpDctcp` send).

use super::ranges::RangeSet;
use crate::packet::{MAX_SACK_BLOCKS, TcpHeader, tcp_flags};
use crate::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiverParams {
    /// Send SACK blocks (the connection negotiated SACK).
    pub sack: bool,
    /// Most SACK blocks per ACK, 1-4.
    pub max_blocks: usize,
    /// Delayed-ACK timer; None = acknowledge every segment at once.
    pub delayed_ack: Option<Duration>,
    /// Advertised window in bytes.
    pub window: u32,
    /// How ECE echoes CE marks.
    pub echo: EcnEcho,
}

/// How the receiver echoes CE marks in ECE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnEcho {
    /// RFC 3168 6.1.3: from a CE mark until a CWR.
    Rfc3168,
    /// RFC 8257 3.2: the CE state of the last data packet, changes acknowledged at once.
    Dctcp,
}

/// What the arrival of a segment asks of the receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPolicy {
    /// Acknowledge now.
    Now,
    /// Acknowledge when the delayed-ACK timer fires (unless something else acks first).
    Delay,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Bytes newly delivered in order to the application.
    pub delivered: u64,
    pub ack: AckPolicy,
}

#[derive(Clone, Debug)]
pub struct Receiver {
    pub params: ReceiverParams,
    /// RCV.NXT.
    pub rcv_nxt: u64,
    /// Data received above RCV.NXT.
    ooo: RangeSet,
    /// The blocks of the last SACK option sent, first block first.
    reported: [(u64, u64); MAX_SACK_BLOCKS],
    n_reported: usize,
    /// Start of the out-of-order segment that triggered the next ACK, if any.
    trigger: Option<u64>,
    /// In-order segments received and not yet acknowledged.
    unacked: u32,
    /// RFC 3168 6.1.3: echo congestion until CWR arrives.
    ece: bool,
}

impl Receiver {
    pub fn new(params: ReceiverParams, rcv_nxt: u64) -> Self {
        Receiver {
            params,
            rcv_nxt,
            ooo: RangeSet::with_capacity(8),
            reported: [(0, 0); MAX_SACK_BLOCKS],
            n_reported: 0,
            trigger: None,
            unacked: 0,
            ece: false,
        }
    }

    /// Bytes held out of order above RCV.NXT.
    pub fn out_of_order(&self) -> &[(u64, u64)] {
        self.ooo.as_slice()
    }

    /// With DCTCP's echo, whether a data segment marked `ce` changes the CE state while an
    /// ACK is being delayed: the segments before it are then acknowledged first, with the
    /// state they had (RFC 8257 3.2).
    #[inline]
    pub fn acks_before(&self, ce: bool) -> bool {
        self.params.echo == EcnEcho::Dctcp && ce != self.ece && self.ack_pending()
    }

    /// A data segment [seq, seq + len) arrived, with the CE mark `ce` and the CWR flag `cwr`.
    pub fn on_segment(&mut self, seq: u64, len: u32, ce: bool, cwr: bool) -> Arrival {
        let changed = match self.params.echo {
            // RFC 3168 6.1.3: CWR ends the echo; a CE mark (re)starts it.
            EcnEcho::Rfc3168 => {
                if cwr {
                    self.ece = false;
                }
                if ce {
                    self.ece = true;
                }
                false
            }
            // RFC 8257 3.2 steps 1-3: a change of DCTCP.CE is acknowledged at once.
            EcnEcho::Dctcp => std::mem::replace(&mut self.ece, ce) != ce,
        };
        let end = seq + len as u64;
        if end <= self.rcv_nxt {
            // An old duplicate: acknowledge at once (RFC 793 3.9, RFC 5681 4.2).
            return Arrival {
                delivered: 0,
                ack: AckPolicy::Now,
            };
        }
        if seq > self.rcv_nxt {
            // Out of order: queue it and send an immediate duplicate ACK.
            self.ooo.insert(seq, end);
            self.trigger = Some(seq);
            return Arrival {
                delivered: 0,
                ack: AckPolicy::Now,
            };
        }
        let before = self.rcv_nxt;
        let filled_gap = !self.ooo.is_empty();
        self.rcv_nxt = end;
        while let Some((_, r)) = self.ooo.pop_first_reaching(self.rcv_nxt) {
            self.rcv_nxt = self.rcv_nxt.max(r);
        }
        self.unacked += 1;
        let ack = if changed || filled_gap || self.params.delayed_ack.is_none() || self.unacked >= 2 {
            AckPolicy::Now
        } else {
            AckPolicy::Delay
        };
        Arrival {
            delivered: self.rcv_nxt - before,
            ack,
        }
    }

    /// Whether in-order data awaits an acknowledgement (the delayed-ACK timer matters).
    pub fn ack_pending(&self) -> bool {
        self.unacked > 0
    }

    /// Fills the acknowledgement fields of `h` (ACK number, window, ECE, SACK blocks)
    /// and records that everything received so far has been acknowledged.
    #[inline]
    pub fn fill_ack(&mut self, h: &mut TcpHeader) {
        h.ack = self.rcv_nxt;
        h.window = self.params.window;
        h.flags |= tcp_flags::ACK;
        if self.ece {
            h.flags |= tcp_flags::ECE;
        }
        h.sack_count = 0;
        if self.params.sack {
            if self.ooo.is_empty() {
                // The common case: nothing is held out of order, so there is no block to
                // report (every block reported before has been delivered in order since).
                self.n_reported = 0;
            } else {
                self.fill_sack_blocks(h);
            }
        }
        self.unacked = 0;
        self.trigger = None;
    }

    /// Computes the SACK blocks of the next ACK (RFC 2018 section 4) into `reported`
    /// and `h`. Out of line: data is held out of order only around a loss.
    #[inline(never)]
    fn fill_sack_blocks(&mut self, h: &mut TcpHeader) {
        let max = self.params.max_blocks.min(MAX_SACK_BLOCKS);
        let mut list = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        if let Some(r) = self.trigger.and_then(|t| self.ooo.containing(t)) {
            list[0] = r;
            n = 1;
        }
        for k in 0..self.n_reported {
            if n == max {
                break;
            }
            // The current extent of a previously reported block (it may have grown or
            // merged); gone if it has been delivered in order since.
            let Some(r) = self.ooo.containing(self.reported[k].0) else {
                continue;
            };
            if !list[..n].iter().any(|x| x.0 <= r.0 && r.1 <= x.1) {
                list[n] = r;
                n += 1;
            }
        }
        self.reported = list;
        self.n_reported = n;
        for (i, &(l, r)) in list[..n].iter().enumerate() {
            h.sack[i] = ((l - self.rcv_nxt) as u32, (r - self.rcv_nxt) as u32);
        }
        h.sack_count = n as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver(delayed: bool) -> Receiver {
        Receiver::new(
            ReceiverParams {
                sack: true,
                max_blocks: 3,
                delayed_ack: delayed.then(|| Duration::from_millis(40)),
                window: 65_535,
                echo: EcnEcho::Rfc3168,
            },
            5000,
        )
    }

    /// Sends the ACK for one arriving 500-byte segment; returns (ACK number, blocks).
    fn arrive(r: &mut Receiver, seq: u64) -> (u64, Vec<(u64, u64)>) {
        r.on_segment(seq, 500, false, false);
        let mut h = TcpHeader::default();
        r.fill_ack(&mut h);
        (h.ack, h.sack_blocks().collect())
    }

    // RFC 2018 section 4 examples: "Assume the left window edge is 5000 and that the data
    // transmitter sends a burst of 8 segments, each containing 500 data bytes."

    #[test]
    fn rfc2018_case_2_first_segment_dropped() {
        // "Upon receiving each of the last seven packets, the data receiver will return a
        // TCP ACK segment that acknowledges sequence number 5000 and contains a SACK
        // option specifying one block of queued data".
        let mut r = receiver(true);
        for (seq, right) in [
            (5500, 6000),
            (6000, 6500),
            (6500, 7000),
            (7000, 7500),
            (7500, 8000),
            (8000, 8500),
            (8500, 9000),
        ] {
            let a = r.on_segment(seq, 500, false, false);
            assert_eq!(a.ack, AckPolicy::Now);
            let mut h = TcpHeader::default();
            r.fill_ack(&mut h);
            assert_eq!(h.ack, 5000);
            assert_eq!(h.sack_blocks().collect::<Vec<_>>(), vec![(5500, right)]);
        }
    }

    #[test]
    fn rfc2018_case_3_every_other_segment_dropped() {
        // "The 2nd, 4th, 6th, and 8th (last) segments are dropped. The data receiver ACKs
        // the first packet normally. The third, fifth, and seventh packets trigger SACK
        // options as follows".
        let mut r = receiver(false);
        assert_eq!(arrive(&mut r, 5000), (5500, vec![]));
        assert_eq!(arrive(&mut r, 6000), (5500, vec![(6000, 6500)]));
        assert_eq!(arrive(&mut r, 7000), (5500, vec![(7000, 7500), (6000, 6500)]));
        assert_eq!(
            arrive(&mut r, 8000),
            (5500, vec![(8000, 8500), (7000, 7500), (6000, 6500)])
        );
        // "Suppose at this point, the 4th packet is received out of order. ... The data
        // receiver replies with the following Selective Acknowledgment": 6000-7500, 8000-8500.
        assert_eq!(arrive(&mut r, 6500), (5500, vec![(6000, 7500), (8000, 8500)]));
        // "Suppose at this point, the 2nd segment is received. The data receiver ACKs all
        // the data up to 7500" and reports the remaining block 8000-8500.
        assert_eq!(arrive(&mut r, 5500), (7500, vec![(8000, 8500)]));
    }

    #[test]
    fn delayed_acks_every_second_segment_and_gap_fills_at_once() {
        let mut r = receiver(true);
        assert_eq!(r.on_segment(5000, 500, false, false).ack, AckPolicy::Delay);
        assert!(r.ack_pending());
        let a = r.on_segment(5500, 500, false, false);
        assert_eq!(
            a,
            Arrival {
                delivered: 500,
                ack: AckPolicy::Now
            }
        );
        let mut h = TcpHeader::default();
        r.fill_ack(&mut h);
        assert!(!r.ack_pending());
        assert_eq!(h.ack, 6000);
        // 6000 lost, 6500 out of order: immediate duplicate ACK.
        assert_eq!(r.on_segment(6500, 500, false, false).ack, AckPolicy::Now);
        r.fill_ack(&mut h);
        // The retransmission of 6000 fills the gap: immediate ACK of everything, 1000 B.
        let a = r.on_segment(6000, 500, false, false);
        assert_eq!(
            a,
            Arrival {
                delivered: 1000,
                ack: AckPolicy::Now
            }
        );
        // An old duplicate is acknowledged at once.
        assert_eq!(r.on_segment(5000, 500, false, false).ack, AckPolicy::Now);
    }

    #[test]
    fn dctcp_echo_follows_the_ce_state_and_acks_its_changes_at_once() {
        // RFC 8257 3.2 with delayed ACKs (one ACK per two segments). Segments of 500 B from
        // 5000, CE marks 0 0 | 1 | 1 0 | 0 (CWR) 0. What the connection does: before a
        // segment whose mark changes DCTCP.CE while an ACK is delayed, it acknowledges the
        // segments before (`acks_before`), with their state; the segment itself is then
        // acknowledged at once with the new state.
        let mut r = Receiver::new(
            ReceiverParams {
                sack: true,
                max_blocks: 3,
                delayed_ack: Some(Duration::from_millis(40)),
                window: 65_535,
                echo: EcnEcho::Dctcp,
            },
            5000,
        );
        let mut acks = Vec::new();
        let mut arrive = |r: &mut Receiver, seq: u64, ce: bool, cwr: bool| {
            if r.acks_before(ce) {
                let mut h = TcpHeader::default();
                r.fill_ack(&mut h);
                acks.push((h.ack, h.has(tcp_flags::ECE)));
            }
            if r.on_segment(seq, 500, ce, cwr).ack == AckPolicy::Now {
                let mut h = TcpHeader::default();
                r.fill_ack(&mut h);
                acks.push((h.ack, h.has(tcp_flags::ECE)));
            }
        };
        arrive(&mut r, 5000, false, false); // delayed
        arrive(&mut r, 5500, false, false); // second segment: ACK 6000, ECE 0
        arrive(&mut r, 6000, true, false); // 0 -> 1, nothing delayed: ACK 6500, ECE 1
        arrive(&mut r, 6500, true, false); // delayed
        arrive(&mut r, 7000, false, false); // 1 -> 0 with 6500 delayed: ACK 7000 ECE 1, ACK 7500 ECE 0
        arrive(&mut r, 7500, false, true); // CWR changes nothing: delayed
        arrive(&mut r, 8000, false, false); // second: ACK 8500, ECE 0
        assert_eq!(
            acks,
            vec![(6000, false), (6500, true), (7000, true), (7500, false), (8500, false)]
        );
        // Without delayed ACKs every segment is acknowledged with its own mark.
        let mut r = Receiver::new(
            ReceiverParams {
                delayed_ack: None,
                echo: EcnEcho::Dctcp,
                ..r.params
            },
            5000,
        );
        for (i, ce) in [true, false, true, true].into_iter().enumerate() {
            assert!(!r.acks_before(ce));
            r.on_segment(5000 + 500 * i as u64, 500, ce, false);
            let mut h = TcpHeader::default();
            r.fill_ack(&mut h);
            assert_eq!(h.has(tcp_flags::ECE), ce);
        }
    }

    #[test]
    fn ecn_echo_until_cwr() {
        let mut r = receiver(false);
        let mut h = TcpHeader::default();
        r.on_segment(5000, 500, true, false);
        r.fill_ack(&mut h);
        assert!(h.has(tcp_flags::ECE));
        let mut h = TcpHeader::default();
        r.on_segment(5500, 500, false, false);
        r.fill_ack(&mut h);
        assert!(h.has(tcp_flags::ECE), "ECE repeats until CWR");
        let mut h = TcpHeader::default();
        r.on_segment(6000, 500, false, true);
        r.fill_ack(&mut h);
        assert!(!h.has(tcp_flags::ECE));
    }
}
