//! A TCP-friendly rate-adaptive source for ABE: RFC 5348 TFRC ([`crate::transport::tfrc`])
//! drives its sending rate, and it tags each packet green or blue
//! (draft-hurley-alternative-best-effort-01 section 4: "it is perfectly permissible and
//! considered normal practice for a source to attempt to maximise its utility by employing
//! a colour mixing strategy").
//!
//! Parameters: `size` (bytes, the TFRC segment size s, an IP datagram), `green` (the share
//! of packets tagged green, [0, 1]; packet k is green iff floor((k + 1) f) > floor(k f), so
//! the greens are spread evenly and exactly f of them), `green_dscp` (the green codepoint;
//! the others carry the flow's `dscp`), `ecn` (packets are ECN-capable; CE marks count as
//! losses at the receiver).
//!
//! The receiver sits at the flow's destination; its feedback packets travel back to the
//! source ([`crate::packet::Direction::Reverse`]) with the flow's codepoint. Their content
//! stays in this struct (`reports`, keyed by the feedback packet's index): the packet carries
//! its size, not its bytes.

use std::collections::VecDeque;

use super::Emission;
use crate::packet::{Direction, Dscp, Ecn, FlowId, NodeId, Packet};
use crate::time::{Duration, SimTime};
use crate::transport::tfrc::{FEEDBACK_SIZE, FeedbackReport, RxAction, TfrcReceiver, TfrcSender};

#[derive(Debug, Clone)]
pub struct Adaptive {
    pub size: u32,
    pub green_share: f64,
    pub green_dscp: Dscp,
    pub ecn: bool,
    pub sender: TfrcSender,
    pub receiver: TfrcReceiver,
    /// Reports on their way back, oldest first: (feedback packet index, report).
    reports: VecDeque<(u64, FeedbackReport)>,
    next_feedback: u64,
    pub counters: AdaptiveCounters,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdaptiveCounters {
    pub green_sent: u64,
    pub blue_sent: u64,
    pub feedback_sent: u64,
    pub feedback_received: u64,
}

impl Adaptive {
    pub fn new(size: u32, green_share: f64, green_dscp: Dscp, ecn: bool) -> Self {
        Adaptive {
            size,
            green_share,
            green_dscp,
            ecn,
            sender: TfrcSender::new(size),
            receiver: TfrcReceiver::new(size),
            reports: VecDeque::with_capacity(8),
            next_feedback: 0,
            counters: AdaptiveCounters::default(),
        }
    }

    /// The sender is about to send at `now`: due no-feedback expiries apply first.
    #[inline]
    pub fn before_send(&mut self, now: SimTime) {
        self.sender.expire_timers(now);
    }

    /// RFC 5348 section 4.6: packets of s bytes at the nominal interval s / X.
    #[inline]
    pub fn next_emission(&mut self) -> Emission {
        Emission {
            size: self.size,
            gap: self.sender.interval().max(Duration(1)),
        }
    }

    /// Is data packet `k` green?
    #[inline]
    pub fn is_green(&self, k: u64) -> bool {
        let f = self.green_share;
        ((k + 1) as f64 * f).floor() > (k as f64 * f).floor()
    }

    /// Sets the colour (codepoint) and ECN capability of the data packet about to leave.
    #[inline]
    pub fn tag(&mut self, pkt: &mut Packet) {
        if self.is_green(pkt.index) {
            pkt.dscp = self.green_dscp;
            self.counters.green_sent += 1;
        } else {
            self.counters.blue_sent += 1;
        }
        if self.ecn {
            pkt.ecn = Ecn::Ect0;
        }
    }

    /// A data packet reached the receiver at `now`.
    pub fn on_data(&mut self, now: SimTime, pkt: &Packet) -> RxAction {
        let r = self.sender.r;
        let mut action = self
            .receiver
            .on_data(now, pkt.index, pkt.size, pkt.sent_at, pkt.ecn == Ecn::Ce, r);
        if action.send_feedback {
            // Section 6.2: the feedback timer restarts with every report.
            action.timer = r.map(|r| now + Duration::from_secs_f64(r));
        }
        action
    }

    /// The receiver's feedback timer fired at `now` (the simulator checked it is current).
    pub fn on_timer(&mut self, now: SimTime) -> RxAction {
        self.receiver.on_timer(now, self.sender.r)
    }

    /// The feedback packet the receiver sends now, from `src` (the flow's destination) to
    /// `dst` (its source).
    pub fn feedback_packet(&mut self, now: SimTime, flow: FlowId, src: NodeId, dst: NodeId, dscp: Dscp) -> Packet {
        let report = self.receiver.report(now);
        let index = self.next_feedback;
        self.next_feedback += 1;
        self.reports.push_back((index, report));
        self.counters.feedback_sent += 1;
        Packet {
            flow,
            src,
            dst,
            size: FEEDBACK_SIZE,
            dscp,
            ecn: Ecn::NotEct,
            direction: Direction::Reverse,
            index,
            sent_at: now,
            enqueued_at: now,
            queue: 0,
            precedence: 0,
            color: None,
            tcp: Default::default(),
            wire_next: Default::default(),
        }
    }

    /// Feedback packet `index` reached the sender at `now`. Reports of feedback packets lost
    /// on the way (lower indexes) are forgotten: feedback travels in order.
    pub fn on_feedback(&mut self, now: SimTime, index: u64) {
        while let Some(&(i, report)) = self.reports.front() {
            self.reports.pop_front();
            if i == index {
                self.counters.feedback_received += 1;
                self.sender.on_feedback(now, &report);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_mix_is_exact_and_spread() {
        let a = Adaptive::new(1000, 0.25, Dscp(3), false);
        let greens: Vec<u64> = (0..12).filter(|&k| a.is_green(k)).collect();
        // floor((k + 1) / 4) > floor(k / 4) at k = 3, 7, 11.
        assert_eq!(greens, [3, 7, 11]);
        let all = Adaptive::new(1000, 1.0, Dscp(3), false);
        assert!((0..100).all(|k| all.is_green(k)));
        let none = Adaptive::new(1000, 0.0, Dscp(3), false);
        assert!((0..100).all(|k| !none.is_green(k)));
        let third = Adaptive::new(1000, 1.0 / 3.0, Dscp(3), false);
        assert_eq!((0..3000).filter(|&k| third.is_green(k)).count(), 1000);
    }
}
