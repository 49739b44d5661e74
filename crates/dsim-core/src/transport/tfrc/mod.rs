//! TCP-Friendly Rate Control (TFRC), RFC 5348: a sender that sends at the rate the TCP
//! throughput equation allows for the loss event rate and round-trip time its receiver
//! reports.
//!
//! # What is implemented (RFC 5348 sections)
//!
//! - 3.1 the throughput equation ([`throughput_equation`]), b = 1, t_RTO = 4 R;
//! - 4.2 initial rate (1 packet/s before the first RTT sample, then W_init / R with
//!   W_init = min(4 s, max(2 s, 4380 B))), 4.3 feedback processing (RTT EWMA q = 0.9, slow
//!   start doubling once per RTT bounded by 2 X_recv, X = max(min(X_calc, recv_limit),
//!   s / t_mbi) once p > 0, X_recv_set halved on a new loss event), 4.4 the no-feedback timer
//!   (max(4 R, 2 s / X), initially 2 s), 4.6 sending at the nominal inter-packet interval
//!   s / X;
//! - 5.1 loss detection with NDUPACK = 3 (a packet is lost once three packets with higher
//!   sequence numbers have arrived: it tolerates the reordering an ABE hop causes between the
//!   green and blue packets of a mixed flow), 5.2 loss events (a loss starts a new event if
//!   its interpolated time is more than one RTT after the start of the current one), 5.3/5.4
//!   loss intervals and the average loss interval with n = 8 and weights
//!   1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 (the larger of the averages with and without the open
//!   interval), p = 1 / I_mean; 6.1/6.2 feedback once per RTT and at once when p increases;
//!   6.3.1 the first loss interval from the equation inverted at the receive rate.
//!
//! # Simplifications (and why they do not matter here)
//!
//! - The sender is never data-limited (it always has data) and never idle, so the
//!   data-limited branches of 4.3 and 4.4 and the idle rules of 4.5 are left out; the
//!   optional oscillation reduction of 4.5 is left out.
//! - X_recv_set keeps only its maximum (the RFC's "Maximize X_recv_set" keeps only the
//!   largest entry when the sender is not data-limited).
//! - After a no-feedback expiry with p > 0, recv_limit is the halved X_recv_set itself
//!   (RFC 4.4 "recalculate X as in step (4)": dsim does not double it).
//! - The RTT the receiver needs (5.2, 6.2) is the sender's current estimate, read when the
//!   packet arrives instead of carried in the packet (RFC 5348 3.2.1).
//! - When the feedback timer finds no new data (6.2), it is not re-armed until the next data
//!   packet arrives (the RFC re-arms it every R_m); the feedback that follows is the same.
//! - An ECN CE mark counts as a loss at its arrival (as RFC 4342 does for DCCP CCID 3).
//! - Feedback content travels in the simulator's side table, not in the packet bytes;
//!   feedback packets have the size of the RFC's report: IP + UDP + 16 B.

pub mod flow;
pub use flow::{TfrcCounters, TfrcFlow};

use std::collections::VecDeque;

use crate::time::{Duration, SimTime};

/// The TCP throughput equation of RFC 5348 section 3.1 (Padhye et al.), in bytes/s:
///
/// ```text
/// X_Bps = s / (R sqrt(2 b p / 3) + t_RTO (3 sqrt(3 b p / 8)) p (1 + 32 p^2))
/// ```
///
/// s: segment size (bytes); R: round-trip time (s); p: loss event rate (0, 1];
/// t_RTO: retransmission timeout (s; RFC 5348 recommends 4 R); b: packets acknowledged by
/// one TCP acknowledgement (RFC 5348 recommends 1).
pub fn throughput_equation(s: f64, r: f64, p: f64, t_rto: f64, b: f64) -> f64 {
    let denom = r * (2.0 * b * p / 3.0).sqrt() + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

/// X_calc of RFC 5348 with b = 1 and t_RTO = 4 R.
pub fn x_calc(s: f64, r: f64, p: f64) -> f64 {
    throughput_equation(s, r, p, 4.0 * r, 1.0)
}

/// The loss event rate p for which X_calc(s, r, p) = x (bisection on the decreasing
/// equation; section 6.3.1). Clamped to [1e-8, 1].
pub fn p_for_rate(s: f64, r: f64, x: f64) -> f64 {
    let (mut lo, mut hi) = (1e-8f64, 1.0f64);
    if x_calc(s, r, lo) <= x {
        return lo;
    }
    if x_calc(s, r, hi) >= x {
        return hi;
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if x_calc(s, r, mid) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}

/// Section 4.3: the RTT EWMA's filter constant.
const RTT_Q: f64 = 0.9;
/// t_mbi, the maximum back-off interval (section 4.3), seconds.
const T_MBI: f64 = 64.0;
/// NDUPACK of section 5.1.
pub const NDUPACK: u8 = 3;
/// Weights of the average loss interval, section 5.4, n = 8.
const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
/// Size of a feedback packet: IPv4 (20) + UDP (8) + the four 4-byte fields of section 3.2.2.
pub const FEEDBACK_SIZE: u32 = 20 + 8 + 16;

/// What a feedback packet reports (RFC 5348 section 3.2.2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeedbackReport {
    /// t_recvdata: the timestamp of the last data packet received.
    pub t_recvdata: SimTime,
    /// t_delay: time between that packet's arrival and this report.
    pub t_delay: Duration,
    /// X_recv: bytes/s received since the last report.
    pub x_recv: f64,
    /// p: the loss event rate.
    pub p: f64,
}

/// The sender's state (section 4).
#[derive(Debug, Clone)]
pub struct TfrcSender {
    /// s, bytes.
    pub s: f64,
    /// X, the allowed sending rate, bytes/s.
    pub x: f64,
    /// R, the RTT estimate, seconds (None before the first sample).
    pub r: Option<f64>,
    /// p as last reported.
    pub p: f64,
    /// The largest entry of X_recv_set (infinity before the first one).
    x_recv_max: f64,
    /// tld, when X was last doubled in slow start.
    tld: SimTime,
    pub nofeedback_at: SimTime,
    pub feedbacks: u64,
    pub nofeedback_expiries: u64,
}

impl TfrcSender {
    pub fn new(s: u32) -> Self {
        TfrcSender {
            s: s as f64,
            // Section 4.2: "the value of X is set to s bytes per second, and the nofeedback
            // timer is set to expire after 2 seconds".
            x: s as f64,
            r: None,
            p: 0.0,
            x_recv_max: f64::INFINITY,
            tld: SimTime::ZERO,
            nofeedback_at: SimTime::ZERO + Duration::from_secs(2),
            feedbacks: 0,
            nofeedback_expiries: 0,
        }
    }

    /// The largest receive rate reported (X_recv_set's maximum), bytes/s.
    pub fn x_recv_max(&self) -> f64 {
        self.x_recv_max
    }

    /// Section 4.6: the nominal gap to the next packet, s / X.
    pub fn interval(&self) -> Duration {
        Duration::from_secs_f64(self.s / self.x)
    }

    /// W_init / R (section 4.2).
    fn initial_rate(&self, r: f64) -> f64 {
        let w_init = (4.0 * self.s).min((2.0 * self.s).max(4380.0));
        w_init / r
    }

    fn restart_nofeedback(&mut self, now: SimTime) {
        let r = self.r.unwrap_or(0.0);
        let t = (4.0 * r).max(2.0 * self.s / self.x);
        self.nofeedback_at = now + Duration::from_secs_f64(t);
    }

    /// Section 4.3: a feedback packet arrived at `now`.
    pub fn on_feedback(&mut self, now: SimTime, fb: &FeedbackReport) {
        self.feedbacks += 1;
        // (1) R_sample = (t_now - t_recvdata) - t_delay.
        let r_sample = ((now - fb.t_recvdata).as_secs_f64() - fb.t_delay.as_secs_f64()).max(1e-6);
        let first = self.r.is_none();
        // (2) R = q R + (1 - q) R_sample.
        let r = match self.r {
            None => r_sample,
            Some(r) => RTT_Q * r + (1.0 - RTT_Q) * r_sample,
        };
        self.r = Some(r);
        let p_increased = fb.p > self.p;
        self.p = fb.p;
        if first && fb.p == 0.0 {
            // Section 4.2: "Upon receiving the first feedback packet [...] the sender sets
            // the initial sending rate" W_init / R.
            self.x = self.initial_rate(r);
            self.tld = now;
        } else {
            // (4) recv_limit from X_recv_set.
            let recv_limit = if p_increased {
                // "Halve entries in X_recv_set; X_recv = 0.85 * X_recv; Maximize X_recv_set".
                if self.x_recv_max.is_finite() {
                    self.x_recv_max /= 2.0;
                }
                self.x_recv_max = self.maximize(0.85 * fb.x_recv);
                self.x_recv_max
            } else {
                self.x_recv_max = self.maximize(fb.x_recv);
                2.0 * self.x_recv_max
            };
            if fb.p > 0.0 {
                let x_bps = x_calc(self.s, r, fb.p);
                self.x = x_bps.min(recv_limit).max(self.s / T_MBI);
            } else if (now - self.tld).as_secs_f64() >= r {
                // Slow start: double once per RTT, within twice the receive rate.
                self.x = (2.0 * self.x).min(recv_limit).max(self.initial_rate(r));
                self.tld = now;
            }
        }
        // (5) restart the no-feedback timer.
        self.restart_nofeedback(now);
    }

    /// "Maximize X_recv_set": the set keeps its largest entry (infinity is dropped).
    fn maximize(&self, x_recv: f64) -> f64 {
        if self.x_recv_max.is_finite() {
            self.x_recv_max.max(x_recv)
        } else {
            x_recv
        }
    }

    /// Section 4.4: processes the no-feedback timer expiries due by `now` (dsim checks them
    /// when the sender is about to send; the sending rate matters only then).
    pub fn expire_timers(&mut self, now: SimTime) {
        while self.nofeedback_at <= now {
            let at = self.nofeedback_at;
            self.nofeedback_expiries += 1;
            match self.r {
                Some(r) if self.p > 0.0 => {
                    let x_calc = x_calc(self.s, r, self.p);
                    let limit = if x_calc > 2.0 * self.x_recv_max {
                        (self.x_recv_max / 2.0).max(self.s / (2.0 * T_MBI))
                    } else {
                        x_calc / 4.0
                    };
                    self.x_recv_max = limit;
                    self.x = x_calc.min(limit).max(self.s / T_MBI);
                }
                _ => self.x = (self.x / 2.0).max(self.s / T_MBI),
            }
            self.restart_nofeedback(at);
        }
    }
}

/// A lost packet waiting for NDUPACK later arrivals, with what section 5.2's interpolation
/// needs: the last packet received before it and the first one after it.
#[derive(Debug, Clone, Copy)]
struct Hole {
    seq: u64,
    later: u8,
    before: (u64, SimTime),
    after: Option<(u64, SimTime)>,
}

/// What the receiver wants the simulator to do.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RxAction {
    /// Send a feedback packet now.
    pub send_feedback: bool,
    /// (Re)arm the feedback timer at this instant.
    pub timer: Option<SimTime>,
}

/// The receiver's state (sections 5 and 6).
#[derive(Debug, Clone)]
pub struct TfrcReceiver {
    s: f64,
    highest: Option<(u64, SimTime)>,
    holes: VecDeque<Hole>,
    /// Start (sequence number, time) of the most recent loss event.
    event_start: Option<(u64, SimTime)>,
    /// Closed loss intervals, most recent first (at most 8), in packets.
    intervals: VecDeque<f64>,
    pub p: f64,
    /// The last data packet: its timestamp and arrival time.
    last_data: Option<(SimTime, SimTime)>,
    /// Arrivals (time, bytes) of the last R_m seconds, for X_recv (section 6.2).
    recent: VecDeque<(SimTime, u32)>,
    recent_bytes: u64,
    /// Data arrived since the last feedback.
    data_since_feedback: bool,
    last_feedback: Option<SimTime>,
    first_arrival: SimTime,
    /// R_m, the sender's RTT as of the last data packet, seconds (0: none yet).
    r_m: f64,
    /// When the feedback timer is armed for (stale timer events are ignored).
    pub timer_at: Option<SimTime>,
    pub loss_events: u64,
    pub lost_packets: u64,
}

impl TfrcReceiver {
    pub fn new(s: u32) -> Self {
        TfrcReceiver {
            s: s as f64,
            highest: None,
            holes: VecDeque::new(),
            event_start: None,
            intervals: VecDeque::with_capacity(9),
            p: 0.0,
            last_data: None,
            recent: VecDeque::with_capacity(64),
            recent_bytes: 0,
            data_since_feedback: false,
            last_feedback: None,
            first_arrival: SimTime::ZERO,
            r_m: 0.0,
            timer_at: None,
            loss_events: 0,
            lost_packets: 0,
        }
    }

    /// A data packet `seq` of `size` bytes sent at `sent_at` arrives at `now`; `ce`: it
    /// carries an ECN CE mark; `r`: the sender's RTT estimate (s; None before it has one).
    pub fn on_data(
        &mut self,
        now: SimTime,
        seq: u64,
        size: u32,
        sent_at: SimTime,
        ce: bool,
        r: Option<f64>,
    ) -> RxAction {
        if self.last_data.is_none() {
            self.first_arrival = now;
        }
        self.last_data = Some((sent_at, now));
        self.data_since_feedback = true;
        let r_m = r.unwrap_or(0.0);
        self.r_m = r_m;
        self.recent.push_back((now, size));
        self.recent_bytes += size as u64;
        let p_before = self.p;
        self.detect_losses(now, seq, r_m);
        if ce {
            self.register_loss(seq, now, now, r_m);
        }
        self.update_p();
        let mut action = RxAction::default();
        if r.is_none() || self.p > p_before || self.last_feedback.is_none() {
            // Section 6.1 / 6.3: feedback at once for the first packet, when p increased,
            // and (dsim) for every packet until the sender has an RTT sample.
            action.send_feedback = true;
        } else if self.timer_at.is_none() {
            action.timer = Some(now + Duration::from_secs_f64(r_m));
        }
        action
    }

    /// Section 5.1: the arrival of `seq` at `now` may complete the NDUPACK later arrivals of
    /// earlier holes, or fill a hole (reordering).
    fn detect_losses(&mut self, now: SimTime, seq: u64, r: f64) {
        match self.highest {
            None => self.highest = Some((seq, now)),
            Some((h, h_t)) if seq > h => {
                // Packets h+1 .. seq-1 are missing for now.
                for missing in h + 1..seq {
                    self.holes.push_back(Hole {
                        seq: missing,
                        later: 0,
                        before: (h, h_t),
                        after: None,
                    });
                }
                self.highest = Some((seq, now));
            }
            Some(_) => {
                // A late arrival: it was a hole, not a loss.
                self.holes.retain(|hole| hole.seq != seq);
            }
        }
        for hole in self.holes.iter_mut() {
            if seq > hole.seq {
                hole.later += 1;
                if hole.after.is_none() {
                    hole.after = Some((seq, now));
                }
            } else if seq < hole.seq && seq > hole.before.0 {
                hole.before = (seq, now);
            }
        }
        while let Some(hole) = self.holes.front().copied() {
            if hole.later < NDUPACK {
                break;
            }
            self.holes.pop_front();
            self.lost_packets += 1;
            // Section 5.2: T_loss = T_before + (T_after - T_before) (S_loss - S_before) /
            // (S_after - S_before).
            let (s_b, t_b) = hole.before;
            let (s_a, t_a) = hole.after.expect("a later packet arrived");
            let frac = (hole.seq - s_b) as f64 / (s_a - s_b) as f64;
            let t_loss = if t_a >= t_b {
                t_b + Duration(((t_a - t_b).0 as f64 * frac) as u64)
            } else {
                // Reordered: the packet before the hole arrived after the one after it
                // (late, it became S_before); the same line between the two points.
                SimTime(t_b.0 - ((t_b - t_a).0 as f64 * frac) as u64)
            };
            self.register_loss(hole.seq, t_loss, now, r);
        }
    }

    /// Section 5.2: a loss of `seq` at `t`, detected at `now`, starts a new loss event if it
    /// comes more than one RTT after the start of the current one.
    fn register_loss(&mut self, seq: u64, t: SimTime, now: SimTime, r: f64) {
        match self.event_start {
            Some((_, t0)) if t <= t0 + Duration::from_secs_f64(r) => {}
            Some((s0, _)) => {
                // Close the interval that event started.
                self.push_interval(seq.saturating_sub(s0).max(1) as f64);
                self.event_start = Some((seq, t));
                self.loss_events += 1;
            }
            None => {
                // Section 6.3.1: the first loss interval is the one that would produce the
                // receive rate, from the equation inverted.
                let x_recv = self.receive_rate(now);
                let first = if r > 0.0 && x_recv > 0.0 {
                    1.0 / p_for_rate(self.s, r, x_recv)
                } else {
                    seq.max(1) as f64
                };
                self.push_interval(first);
                self.event_start = Some((seq, t));
                self.loss_events += 1;
            }
        }
    }

    fn push_interval(&mut self, i: f64) {
        self.intervals.push_front(i);
        self.intervals.truncate(WEIGHTS.len());
    }

    /// Section 5.4: p = 1 / I_mean, I_mean = max(I_tot0, I_tot1) / W_tot.
    fn update_p(&mut self) {
        let Some((s0, _)) = self.event_start else {
            return;
        };
        let highest = self.highest.map_or(s0, |h| h.0);
        let open = (highest.saturating_sub(s0) + 1) as f64;
        let (mut tot0, mut tot1, mut w_tot) = (0.0, 0.0, 0.0);
        // I_tot0 = sum_{i=0}^{k-1} I_i w_i with I_0 the open interval;
        // I_tot1 = sum_{i=1}^{k} I_i w_{i-1}; k = the closed intervals kept (at most n = 8).
        let previous = std::iter::once(open).chain(self.intervals.iter().copied());
        for ((w, closed), i_i) in WEIGHTS.iter().zip(&self.intervals).zip(previous) {
            tot0 += i_i * w;
            tot1 += closed * w;
            w_tot += w;
        }
        self.p = w_tot / tot0.max(tot1);
    }

    /// X_recv (section 6.2): bytes/s "based on the packets received within the previous R_m
    /// seconds"; before R_m is known, since the first packet.
    fn receive_rate(&mut self, now: SimTime) -> f64 {
        if self.r_m <= 0.0 {
            let dt = (now - self.first_arrival).as_secs_f64();
            return if dt > 0.0 { self.recent_bytes as f64 / dt } else { 0.0 };
        }
        let window = Duration::from_secs_f64(self.r_m);
        while let Some(&(t, size)) = self.recent.front() {
            if t + window >= now {
                break;
            }
            self.recent.pop_front();
            self.recent_bytes -= size as u64;
        }
        self.recent_bytes as f64 / self.r_m
    }

    /// Section 6.2: the report to send now; resets the receive-rate measurement.
    pub fn report(&mut self, now: SimTime) -> FeedbackReport {
        let (t_recvdata, arrived) = self.last_data.expect("feedback follows data");
        let x_recv = self.receive_rate(now);
        self.data_since_feedback = false;
        self.last_feedback = Some(now);
        FeedbackReport {
            t_recvdata,
            t_delay: now - arrived,
            x_recv,
            p: self.p,
        }
    }

    /// Section 6.2: the feedback timer expired at `now`. Sends feedback if data arrived since
    /// the last one, and re-arms for one RTT `r` later; otherwise waits for data.
    pub fn on_timer(&mut self, now: SimTime, r: Option<f64>) -> RxAction {
        self.timer_at = None;
        if !self.data_since_feedback {
            return RxAction::default();
        }
        RxAction {
            send_feedback: true,
            timer: r.map(|r| now + Duration::from_secs_f64(r)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn equation_by_hand() {
        // s = 1000 B, R = 0.1 s, p = 0.01, t_RTO = 0.4 s, b = 1:
        // R sqrt(2p/3) = 0.1 * 0.0816497 = 0.00816497
        // t_RTO 3 sqrt(3p/8) p (1 + 32p^2) = 0.4 * 3 * 0.0612372 * 0.01 * 1.0032 = 0.000737194
        // X = 1000 / 0.00890216 = 112332.2 B/s
        let x = throughput_equation(1000.0, 0.1, 0.01, 0.4, 1.0);
        assert!((x - 112_332.2).abs() < 0.5, "{x}");
        // Monotone: more loss or more delay, less rate.
        assert!(throughput_equation(1000.0, 0.1, 0.02, 0.4, 1.0) < x);
        assert!(throughput_equation(1000.0, 0.2, 0.01, 0.8, 1.0) < x);
        // The inverse.
        let p = p_for_rate(1000.0, 0.1, x);
        assert!((p - 0.01).abs() < 1e-9, "{p}");
    }

    fn t(ms: u64) -> SimTime {
        SimTime(ms * MS)
    }

    #[test]
    fn ndupack_and_reordering() {
        // Packets 0, 1, 3, 2 (reordered), 4, 6, 7, 8: packet 5 is lost when 6, 7, 8 have
        // arrived; 2, late, was never lost. RTT 100 ms.
        let mut rx = TfrcReceiver::new(1000);
        for (i, seq) in [0u64, 1, 3, 2, 4, 6, 7].into_iter().enumerate() {
            rx.on_data(t(10 * i as u64), seq, 1000, t(0), false, Some(0.1));
        }
        assert_eq!(rx.lost_packets, 0);
        rx.on_data(t(70), 8, 1000, t(0), false, Some(0.1));
        assert_eq!(rx.lost_packets, 1);
        assert_eq!(rx.loss_events, 1);
    }

    #[test]
    fn a_late_packet_before_a_hole_interpolates_backwards() {
        // Packets 0-3 at 0-30 ms, 6 at 40 ms, then 4 late at 50 ms, 7 and 8 at 60 and 70
        // ms: 5 is lost (6, 7, 8 came after it) with S_before = 4 (T_before = 50 ms) and
        // S_after = 6 (T_after = 40 ms), so T_loss = 50 + (40 - 50) (5 - 4) / (6 - 4) = 45
        // ms (section 5.2; the time once went below zero and wrapped around).
        let mut rx = TfrcReceiver::new(1000);
        for (seq, ms) in [
            (0u64, 0u64),
            (1, 10),
            (2, 20),
            (3, 30),
            (6, 40),
            (4, 50),
            (7, 60),
            (8, 70),
        ] {
            rx.on_data(t(ms), seq, 1000, t(0), false, Some(0.1));
        }
        assert_eq!(rx.lost_packets, 1);
        assert_eq!(rx.event_start, Some((5, t(45))));
    }

    #[test]
    fn losses_within_one_rtt_are_one_event() {
        // RTT 100 ms, a packet every 10 ms. Losses of 10 and 12 (interpolated times 100 and
        // 120 ms) are one event; 40 (400 ms) starts another: closed interval 40 - 10 = 30.
        let mut rx = TfrcReceiver::new(1000);
        for seq in 0..60u64 {
            if [10, 12, 40].contains(&seq) {
                continue;
            }
            rx.on_data(t(10 * seq), seq, 1000, t(10 * seq), false, Some(0.1));
        }
        assert_eq!(rx.lost_packets, 3);
        assert_eq!(rx.loss_events, 2);
        assert_eq!(rx.intervals[0], 30.0);
        // The open interval is 40 .. 59 = 20 packets; with k = 2 closed intervals
        // (30 and the synthetic first one I_f), I_tot0 = 20 + 30, I_tot1 = 30 + I_f,
        // W_tot = 2.
        let i_f = rx.intervals[1];
        assert!((rx.p - 2.0 / (50.0f64).max(30.0 + i_f)).abs() < 1e-12);
    }

    #[test]
    fn first_interval_matches_the_receive_rate() {
        // 100 packets of 1000 B at 10 ms spacing: X_recv = 100 kB/s; with R = 100 ms the
        // first loss interval is 1 / p with X_calc(p) = 100 kB/s.
        let mut rx = TfrcReceiver::new(1000);
        for seq in 0..104u64 {
            if seq == 100 {
                continue;
            }
            rx.on_data(t(10 * seq), seq, 1000, t(10 * seq), false, Some(0.1));
        }
        assert_eq!(rx.loss_events, 1);
        // The loss is detected when 103 arrives (1030 ms): X_recv counts the packets of the
        // last R_m = 100 ms, [930, 1030] ms: 93 ... 99, 101, 102, 103 = 10 packets (the
        // window includes its start), 10 000 B / 0.1 s = 100 000 B/s.
        let p_f = 1.0 / rx.intervals[0];
        let x = x_calc(1000.0, 0.1, p_f);
        assert!((x - 100_000.0).abs() / 100_000.0 < 0.02, "{x}");
    }

    #[test]
    fn sender_starts_slowly_then_follows_the_equation() {
        let mut tx = TfrcSender::new(1000);
        assert_eq!(tx.interval(), Duration::from_secs(1));
        // First feedback at 100 ms for a packet sent at 0 and held 0 ms: R = 100 ms,
        // X = W_init / R = min(4000, max(2000, 4380)) / 0.1 = 40 000 B/s.
        let fb = FeedbackReport {
            t_recvdata: t(0),
            t_delay: Duration::ZERO,
            x_recv: 1000.0,
            p: 0.0,
        };
        tx.on_feedback(t(100), &fb);
        assert_eq!(tx.r, Some(0.1));
        assert!((tx.x - 40_000.0).abs() < 1e-9);
        // One RTT later, no loss: doubles, within 2 X_recv = 2 * 30 kB/s.
        let fb = FeedbackReport {
            t_recvdata: t(100),
            x_recv: 30_000.0,
            ..fb
        };
        tx.on_feedback(t(200), &fb);
        assert!((tx.x - 60_000.0).abs() < 1e-9, "{}", tx.x);
        // A loss event rate of 1 %: X = min(X_calc, recv_limit) where recv_limit is the
        // halved set maximised with 0.85 X_recv: max(30000 / 2, 0.85 * 50000) = 42500,
        // X_calc(1 %, 100 ms) = 112 332 B/s, so X = 42 500.
        let fb = FeedbackReport {
            t_recvdata: t(200),
            x_recv: 50_000.0,
            p: 0.01,
            ..fb
        };
        tx.on_feedback(t(300), &fb);
        assert!((tx.x - 42_500.0).abs() < 1e-6, "{}", tx.x);
        // Steady p: recv_limit = 2 * 42 500 = 85 000 < X_calc: X = 85 000... then
        // X_calc rules once X_recv is high enough.
        let fb = FeedbackReport {
            t_recvdata: t(300),
            x_recv: 200_000.0,
            p: 0.01,
            ..fb
        };
        tx.on_feedback(t(400), &fb);
        assert!((tx.x - x_calc(1000.0, 0.1, 0.01)).abs() < 1e-6);
    }

    #[test]
    fn nofeedback_timer_halves_the_rate() {
        let mut tx = TfrcSender::new(1000);
        // No feedback at all: 1 packet/s halves at 2 s, then every max(4R, 2s/X) = 2 s/X.
        tx.expire_timers(t(2000));
        assert!((tx.x - 500.0).abs() < 1e-9);
        // Next expiry at 2 + 2 * 1000 / 500 = 6 s.
        tx.expire_timers(t(5999));
        assert_eq!(tx.nofeedback_expiries, 1);
        tx.expire_timers(t(6000));
        assert!((tx.x - 250.0).abs() < 1e-9);
    }
}
