//! A TFRC flow (RFC 5348) with ABE colours: the sender at the flow's source sends at the
//! rate TFRC allows ([`super::TfrcSender`]) and tags each packet green or blue
//! (draft-hurley-alternative-best-effort-01 section 4: "it is perfectly permissible and
//! considered normal practice for a source to attempt to maximise its utility by employing
//! a colour mixing strategy"); the receiver at its destination ([`super::TfrcReceiver`])
//! sends feedback back.
//!
//! Parameters: `size` (bytes, the TFRC segment size s, an IP datagram), `green` (the share
//! of packets tagged green, [0, 1]; packet k is green iff floor((k + 1) f) > floor(k f), so
//! the greens are spread evenly and exactly f of them), `green_dscp` (the green codepoint;
//! the others carry the flow's `dscp`), `ecn` (packets are ECN-capable; CE marks count as
//! losses at the receiver).
//!
//! Feedback packets travel back to the source ([`crate::packet::Direction::Reverse`]) with
//! the flow's codepoint. Their content stays in this struct (`reports`, keyed by the
//! feedback packet's index): the packet carries its size, not its bytes.

use std::collections::VecDeque;

use super::{FEEDBACK_SIZE, FeedbackReport, RxAction, TfrcReceiver, TfrcSender};
use crate::packet::{Direction, Dscp, Ecn, Packet};
use crate::time::{Duration, SimTime};
use crate::transport::udp::UdpSender;

#[derive(Debug, Clone)]
pub struct TfrcFlow {
    /// The endpoints and codepoint of the flow's data packets.
    pub udp: UdpSender,
    pub size: u32,
    pub green_share: f64,
    pub green_dscp: Dscp,
    pub ecn: bool,
    pub sender: TfrcSender,
    pub receiver: TfrcReceiver,
    /// Reports on their way back, oldest first: (feedback packet index, report).
    reports: VecDeque<(u64, FeedbackReport)>,
    next_feedback: u64,
    pub counters: TfrcCounters,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TfrcCounters {
    pub green_sent: u64,
    pub blue_sent: u64,
    pub feedback_sent: u64,
    pub feedback_received: u64,
}

impl TfrcFlow {
    pub fn new(udp: UdpSender, size: u32, green_share: f64, green_dscp: Dscp, ecn: bool) -> Self {
        TfrcFlow {
            udp,
            size,
            green_share,
            green_dscp,
            ecn,
            sender: TfrcSender::new(size),
            receiver: TfrcReceiver::new(size),
            reports: VecDeque::with_capacity(8),
            next_feedback: 0,
            counters: TfrcCounters::default(),
        }
    }

    /// The data packet the sender sends at `now`, and the gap to the next one: packets of
    /// s bytes at the nominal interval s / X (RFC 5348 section 4.6), after the
    /// no-feedback expiries due by now (4.4).
    #[inline]
    pub fn emit(&mut self, now: SimTime) -> (Packet, Duration) {
        self.sender.expire_timers(now);
        let mut pkt = self.udp.datagram(self.size, now);
        self.tag(&mut pkt);
        (pkt, self.sender.interval().max(Duration(1)))
    }

    /// Is data packet `k` green?
    #[inline]
    pub fn is_green(&self, k: u64) -> bool {
        let f = self.green_share;
        ((k + 1) as f64 * f).floor() > (k as f64 * f).floor()
    }

    /// Sets the colour (codepoint) and ECN capability of the data packet about to leave.
    #[inline]
    fn tag(&mut self, pkt: &mut Packet) {
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

    /// A packet of the flow reached its end at `now`: data at the receiver, feedback at the
    /// sender. Says whether the receiver sends feedback now and when its timer is due.
    pub fn on_packet(&mut self, now: SimTime, pkt: &Packet) -> RxAction {
        match pkt.direction {
            Direction::Forward => self.on_data(now, pkt),
            Direction::Reverse => {
                self.on_feedback(now, pkt.index);
                RxAction::default()
            }
        }
    }

    fn on_data(&mut self, now: SimTime, pkt: &Packet) -> RxAction {
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

    /// The receiver's feedback timer event popped at `now`: None if it is stale (not the
    /// one armed last).
    pub fn on_timer(&mut self, now: SimTime) -> Option<RxAction> {
        (self.receiver.timer_at == Some(now)).then(|| self.receiver.on_timer(now, self.sender.r))
    }

    /// Arms the receiver's feedback timer if `action` asks for it; returns when it is due.
    pub fn arm(&mut self, action: &RxAction) -> Option<SimTime> {
        if action.timer.is_some() {
            self.receiver.timer_at = action.timer;
        }
        action.timer
    }

    /// The feedback packet the receiver sends now, from the flow's destination to its
    /// source.
    pub fn feedback_packet(&mut self, now: SimTime) -> Packet {
        let report = self.receiver.report(now);
        let index = self.next_feedback;
        self.next_feedback += 1;
        self.reports.push_back((index, report));
        self.counters.feedback_sent += 1;
        Packet {
            flow: self.udp.flow,
            src: self.udp.dst,
            dst: self.udp.src,
            size: FEEDBACK_SIZE,
            dscp: self.udp.dscp,
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
    fn on_feedback(&mut self, now: SimTime, index: u64) {
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
        let flow = |f| {
            let udp = UdpSender {
                flow: 0,
                src: 0,
                dst: 1,
                dscp: Dscp(0),
                next_index: 0,
            };
            TfrcFlow::new(udp, 1000, f, Dscp(3), false)
        };
        let a = flow(0.25);
        let greens: Vec<u64> = (0..12).filter(|&k| a.is_green(k)).collect();
        // floor((k + 1) / 4) > floor(k / 4) at k = 3, 7, 11.
        assert_eq!(greens, [3, 7, 11]);
        let all = flow(1.0);
        assert!((0..100).all(|k| all.is_green(k)));
        let none = flow(0.0);
        assert!((0..100).all(|k| !none.is_green(k)));
        let third = flow(1.0 / 3.0);
        assert_eq!((0..3000).filter(|&k| third.is_green(k)).count(), 1000);
    }
}
