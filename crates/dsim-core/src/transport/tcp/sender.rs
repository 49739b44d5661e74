//! The TCP data sender: sequence variables, slow start, the retransmission timer, ECN
//! response, and the send loop. Loss recovery (what a duplicate or partial ACK does)
//! belongs to the variant ([`super::variant`]); congestion avoidance and the ssthresh of a
//! congestion event to the congestion control ([`super::congestion`]).
//!
//! Sources and formulas (sizes in bytes, SMSS = MSS):
//! - RFC 5681 section 3.1, slow start (cwnd < ssthresh); congestion avoidance is the
//!   congestion control's. Two counting modes, chosen per flow:
//!   * `bytes`, RFC 3465 appropriate byte counting: slow start cwnd += min(N, L) per ACK
//!     of N new bytes, L = 2 SMSS (section 2.2), but L = 1 SMSS in the first round trip
//!     after a timeout (section 2.3); Reno's congestion avoidance counts bytes
//!     (section 2.1).
//!   * `packets`, per-ACK counting: slow start cwnd += SMSS per ACK of new data (RFC 5681
//!     (2) for N >= SMSS); Reno's congestion avoidance adds SMSS * SMSS / cwnd per ACK
//!     (RFC 5681 (3)), the rule of ns-2's agents.
//! - RFC 5681 (1), initial window: IW = 2 SMSS if SMSS > 2190, 3 SMSS if SMSS > 1095,
//!   else 4 SMSS (or as configured). Initial ssthresh = the maximum window ("arbitrarily
//!   high ... the size of the largest possible advertised window").
//! - On loss the congestion control sets ssthresh (Reno: RFC 5681 (4), max(FlightSize /
//!   2, 2 SMSS), FlightSize = SND.MAX - SND.UNA).
//! - RFC 5681 section 3.1, timeout: cwnd = LW = 1 SMSS; ssthresh by the congestion
//!   control ((4) for Reno; at most the value set when the current loss recovery began,
//!   if the timeout ends one) unless the segment at SND.UNA has already been
//!   retransmitted by the timer ("ssthresh is held constant"); the sender goes back to
//!   SND.UNA (go-back-N, as BSD and ns-2 do).
//! - RFC 5681 section 4.1, restart after idle: cwnd = min(IW, cwnd) before sending when
//!   nothing was sent for more than one RTO.
//! - RFC 6298 timer management (5.1)-(5.7), see [`super::rtt`]. RTT samples time one
//!   segment per round trip (no timestamps); any retransmission cancels the sample in
//!   progress (Karn's algorithm, RFC 6298 section 3). When loss recovery retransmits the
//!   segment at SND.UNA, the timer restarts ([`RtoRestart::OnRetransmit`], the default,
//!   as ns-2, Linux and FreeBSD do) or keeps running from the last ACK of new data
//!   ([`RtoRestart::OnNewAck`], the letter of (5.3)).
//! - RFC 3168 section 6.1.2, ECN: an ACK with ECE reduces cwnd (ssthresh by the congestion
//!   control, Reno's halving for Reno; cwnd = ssthresh) at most once per window of data and never during loss
//!   recovery; the next new data segment carries CWR; the ACK with ECE does not grow cwnd.
//!   Data segments carry ECT(0) except retransmissions (section 6.1.5).
//! - SWS avoidance at the sender (RFC 1122 4.2.3.4): only full-sized segments are sent,
//!   except the last bytes the application wrote.
//!
//! Not modelled: limited transmit (RFC 3042, a SHOULD of RFC 5681 3.2 step 1; ns-2's
//! agents do not use it either), Nagle, FIN and connection teardown, window scaling and
//! timestamps (RFC 7323), SYN cookies, reneging.

use serde::{Deserialize, Serialize};

use super::congestion::{Acked, Congestion, Event, Signal};
use super::rtt::{RttEstimator, RttParams};
use super::variant::{LossRecovery, Variant};
use crate::params::Params;
use crate::stats::Window;
use crate::time::SimTime;

/// The sequence number of the SYN; data starts at `DATA_START`.
pub const ISN: u64 = 0;
pub const DATA_START: u64 = ISN + 1;

/// How slow start and congestion avoidance count acknowledgements (`counting = "bytes"`
/// or `"packets"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "lowercase")]
pub enum Counting {
    Bytes,
    Packets,
}

/// What restarts the retransmission timer besides the ACK of new data (RFC 6298 (5.3)):
/// `rto_restart = "on_retransmit"` or `"on_new_ack"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum RtoRestart {
    /// Also the retransmission of the segment at SND.UNA by loss recovery (fast
    /// retransmit, a partial ACK's retransmission, SACK's NextSeg()): the timer then
    /// measures the retransmission's round trip. ns-2's agents (`reset_rtx_timer` in
    /// `dupack_action`), Linux (`tcp_xmit_retransmit_queue` re-arms when it resends the
    /// head of the retransmission queue) and FreeBSD (the fast retransmit stops the timer
    /// and `tcp_output` starts it again) all do this.
    #[default]
    OnRetransmit,
    /// Only (5.3): the timer keeps measuring from the last ACK of new data, so a timeout
    /// can fire less than a round trip after a fast retransmit.
    OnNewAck,
}

/// The keys an ACK reads first (`repr(C)`: in this order), the initial states last.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderParams {
    /// SMSS: payload bytes of a full-sized segment.
    pub mss: u64,
    /// Largest window the receiver advertises (its buffer): the initial ssthresh and the
    /// send limit until the first ACK reports the window.
    pub window: u64,
    /// IW in bytes.
    pub initial_window: u64,
    pub counting: Counting,
    pub ecn: bool,
    pub rto_restart: RtoRestart,
    pub rtt: RttParams,
    /// Congestion avoidance and the ssthresh of congestion events ([`super::congestion`]),
    /// in its initial state.
    pub congestion: Congestion,
}

impl SenderParams {
    /// RFC 5681 (1): the initial window for an SMSS.
    pub fn rfc5681_initial_window(mss: u64) -> u64 {
        if mss > 2190 {
            2 * mss
        } else if mss > 1095 {
            3 * mss
        } else {
            4 * mss
        }
    }
}

/// A segment the sender wants on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    /// It carries bytes sent before (SYN included).
    pub retransmission: bool,
    pub syn: bool,
    /// Carries CWR (RFC 3168 6.1.2).
    pub cwr: bool,
}

/// What happened, for traces and tests (`Sender::log`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogEvent {
    /// A segment left: its first byte, length and whether it was a retransmission.
    Send { seq: u64, len: u32, rtx: bool },
    /// An ACK was processed (cwnd and ssthresh are the values after it).
    Ack { ack: u64, dup: bool },
    /// Fast retransmit: entering loss recovery.
    FastRetransmit { seq: u64 },
    /// A partial ACK in NewReno's fast recovery.
    PartialAck { ack: u64 },
    /// Loss recovery ended.
    RecoveryEnd { ack: u64 },
    /// The retransmission timer expired.
    Timeout { seq: u64 },
    /// An ECN-Echo reduced the window.
    EcnReduce,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub t: SimTime,
    pub event: LogEvent,
    pub cwnd: u64,
    pub ssthresh: u64,
}

/// Counters inside the measurement window.
#[derive(Clone, Debug, Default)]
pub struct SenderCounters {
    /// Segments sent that carried bytes sent before (SYNs included).
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// RTT samples: count and sum in ns.
    pub rtt_samples: u64,
    pub rtt_sum_ns: u128,
    pub ecn_reductions: u64,
}

/// The sender's state (RFC 793 and RFC 5681 names), in the order an ACK uses it
/// (`repr(C)` keeps it): the sequence state and the flags in the first two cache lines,
/// the output, the variant, the congestion control, the RTT estimator and the parameters
/// next; what only timeouts, the handshake and the results read last.
#[repr(C, align(64))]
#[derive(Clone, Debug)]
pub struct Sender {
    /// SND.UNA: first unacknowledged byte (HighACK + 1 of RFC 6675).
    pub snd_una: u64,
    /// SND.NXT: next byte to send (behind SND.MAX after a timeout's go-back).
    pub snd_nxt: u64,
    /// The byte after the highest byte ever sent (HighData + 1 of RFC 6675).
    pub snd_max: u64,
    /// The byte after the last one the application has written.
    pub app_end: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Window the receiver advertised last.
    pub rwnd: u64,
    /// RFC 3465 2.3: L = 1 SMSS until SND.UNA passes this point.
    abc_slow_until: u64,
    /// RFC 3168: no ECN response until SND.UNA passes this point.
    ecn_recover: u64,
    now: SimTime,
    last_send: SimTime,
    /// Duplicate ACKs counted since the last cumulative ACK.
    pub dupacks: u32,
    pub in_recovery: bool,
    /// Set by a variant to keep the RTO timer running on this ACK, its retransmission
    /// included (RFC 6582 3.2 step 3, the Impatient variant of section 4).
    pub keep_timer: bool,
    /// Connection established (handshake done or not used).
    pub established: bool,
    cwr_pending: bool,
    /// ECE reduced cwnd on the ACK being processed: do not grow it.
    ece_reduced: bool,
    /// RTO timer (RFC 6298 section 5): None = not running.
    pub rto_deadline: Option<SimTime>,
    /// Segment being timed: (end seq, sent at).
    timing: Option<(u64, SimTime)>,
    /// Segments to put on the wire, drained by the connection.
    pub out: Vec<Segment>,
    /// Event log for traces and tests; None (the default) costs one branch per event.
    pub log: Option<Vec<LogEntry>>,
    pub window: Window,
    pub variant: Variant,
    /// Congestion avoidance and the ssthresh of congestion events.
    pub cc: Congestion,
    pub rtt: RttEstimator,
    pub params: SenderParams,
    pub counters: SenderCounters,
    /// SYN sent at; retransmitted by the timer.
    syn: Option<(SimTime, bool)>,
    /// SND.UNA when the timer last expired (ssthresh held when it expires again there).
    rto_seq: Option<u64>,
}

impl Sender {
    pub fn new(params: SenderParams, variant: Variant, window: Window) -> Self {
        Sender {
            snd_una: DATA_START,
            snd_nxt: DATA_START,
            snd_max: DATA_START,
            app_end: DATA_START,
            cwnd: params.initial_window,
            ssthresh: params.window,
            rwnd: params.window,
            dupacks: 0,
            in_recovery: false,
            variant,
            cc: params.congestion,
            rtt: RttEstimator::new(params.rtt),
            rto_deadline: None,
            keep_timer: false,
            established: false,
            syn: None,
            abc_slow_until: 0,
            ecn_recover: DATA_START,
            cwr_pending: false,
            ece_reduced: false,
            timing: None,
            rto_seq: None,
            last_send: SimTime::ZERO,
            out: Vec::with_capacity(64),
            counters: SenderCounters::default(),
            window,
            log: None,
            now: SimTime::ZERO,
            params,
        }
    }

    pub fn mss(&self) -> u64 {
        self.params.mss
    }

    /// FlightSize of RFC 5681: sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// The ssthresh the congestion control sets for a congestion event (RFC 5681 (4) for
    /// Reno), from cwnd and FlightSize before any reduction.
    pub fn congestion_ssthresh(&mut self, signal: Signal) -> u64 {
        let e = Event {
            signal,
            now: self.now,
            cwnd: self.cwnd,
            flight: self.flight_size(),
            mss: self.mss(),
        };
        self.cc.ssthresh(&e)
    }

    fn counting(&self) -> bool {
        self.window.contains(self.now)
    }

    pub fn record(&mut self, event: LogEvent) {
        if let Some(log) = &mut self.log {
            log.push(LogEntry {
                t: self.now,
                event,
                cwnd: self.cwnd,
                ssthresh: self.ssthresh,
            });
        }
    }

    // -- opening ------------------------------------------------------------------------

    /// Opens the connection: a SYN when `handshake`, otherwise established at once.
    pub fn open(&mut self, now: SimTime, handshake: bool) {
        self.now = now;
        if handshake {
            self.snd_una = ISN;
            self.snd_nxt = ISN;
            self.snd_max = ISN;
            self.send_syn(false);
        } else {
            self.established = true;
        }
    }

    fn send_syn(&mut self, retransmission: bool) {
        self.syn = Some((self.now, retransmission || self.syn.is_some_and(|s| s.1)));
        self.snd_max = DATA_START;
        self.snd_nxt = DATA_START;
        self.emit(Segment {
            seq: ISN,
            len: 0,
            retransmission,
            syn: true,
            cwr: false,
        });
    }

    /// The SYN-ACK arrived: the connection is established.
    pub fn on_syn_ack(&mut self, now: SimTime) {
        self.now = now;
        let Some((sent, retransmitted)) = self.syn.take() else {
            return; // a duplicate SYN-ACK
        };
        self.established = true;
        self.snd_una = DATA_START;
        self.rto_deadline = None;
        if retransmitted {
            // RFC 5681 3.1: "If the SYN or SYN/ACK is lost, the initial window used by a
            // sender after a correctly transmitted SYN MUST be one segment"; RFC 6298
            // (5.7): RTO re-initialized to 3 s.
            self.cwnd = self.mss();
            self.rtt.after_syn_timeout();
        } else {
            let r = self.rtt.measure(sent, now);
            self.take_rtt_sample(r.0);
        }
        self.try_send(now);
    }

    // -- application --------------------------------------------------------------------

    /// The application writes `bytes` more (u64::MAX = an infinite source).
    pub fn write(&mut self, now: SimTime, bytes: u64) {
        if self.established && self.snd_una == self.snd_max && self.snd_max >= self.app_end {
            // Everything written was sent and acknowledged: the connection was
            // application-limited since its last send (RFC 9438 5.8 for CUBIC).
            self.cc.after_idle(now.saturating_sub(self.last_send), now);
        }
        self.app_end = self.app_end.saturating_add(bytes);
        self.try_send(now);
    }

    /// The application stops writing: nothing beyond what was sent will be sent.
    pub fn stop_writing(&mut self) {
        self.app_end = self.app_end.min(self.snd_max.max(DATA_START));
    }

    /// All the data the application wrote has been acknowledged.
    pub fn all_acked(&self) -> bool {
        self.established && self.snd_una >= self.app_end
    }

    // -- acknowledgements ---------------------------------------------------------------

    /// Processes an acknowledgement: `ack` number, advertised `window`, whether the
    /// segment carried payload (then it is no duplicate ACK), its SACK blocks and ECE.
    /// Inlined into the connection's arrival handler, its one caller: the arguments then
    /// come straight from the header, and the send loop at the end runs in the same frame.
    #[inline(always)]
    pub fn on_ack(
        &mut self,
        now: SimTime,
        ack: u64,
        window: u32,
        carries_data: bool,
        sack: impl Iterator<Item = (u64, u64)>,
        ece: bool,
    ) {
        self.now = now;
        if !self.established || ack > self.snd_max {
            return; // RFC 793 3.9: an ACK of unsent data is ignored.
        }
        let newly_sacked = self
            .variant
            .update_scoreboard(ack.max(self.snd_una), self.snd_max, sack);
        let acked = ack.saturating_sub(self.snd_una);
        // RFC 5681 section 2, DUPLICATE ACKNOWLEDGMENT: outstanding data, no payload, no
        // SYN/FIN, same ACK number, same window.
        let dup = acked == 0
            && ack == self.snd_una
            && self.snd_max > self.snd_una
            && !carries_data
            && window as u64 == self.rwnd;
        self.rwnd = window as u64;
        if acked > 0 {
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            if let Some((end, sent)) = self.timing {
                if ack >= end {
                    self.timing = None;
                    let r = self.rtt.measure(sent, now);
                    self.take_rtt_sample(r.0);
                }
            }
        }
        let ece = ece && self.params.ecn;
        self.cc.on_ack(acked, ece, ack, self.snd_nxt);
        self.ece_reduced = false;
        if ece {
            self.on_ece();
        }
        self.keep_timer = false;
        if self.in_recovery || acked == 0 || newly_sacked > 0 {
            let info = AckInfo {
                ack,
                acked,
                dup,
                newly_sacked,
            };
            let mut variant = std::mem::take(&mut self.variant);
            variant.on_ack(self, &info);
            self.variant = variant;
        } else {
            self.on_new_ack(acked);
        }
        if acked > 0 {
            if self.snd_una >= self.snd_max {
                // RFC 6298 (5.2): all outstanding data acknowledged: stop the timer.
                self.rto_deadline = None;
            } else if !self.keep_timer {
                // (5.3): new data acknowledged: restart the timer.
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        }
        self.record(LogEvent::Ack { ack, dup });
        self.send();
    }

    /// A cumulative ACK outside loss recovery that brings no new SACK information does the
    /// same in every variant, so the sender settles it without consulting one: the
    /// duplicate count restarts (RFC 5681 3.2, RFC 6675 (1)) and cwnd grows (RFC 5681 3.1).
    fn on_new_ack(&mut self, acked: u64) {
        self.dupacks = 0;
        self.grow(acked);
    }

    fn take_rtt_sample(&mut self, r: u64) {
        self.rtt.sample(crate::time::Duration(r));
        self.cc.rtt_sample(crate::time::Duration(r));
        if self.counting() {
            self.counters.rtt_samples += 1;
            self.counters.rtt_sum_ns += r as u128;
        }
    }

    /// RFC 3168 6.1.2: react to ECE once per window, not during loss recovery.
    fn on_ece(&mut self) {
        if self.in_recovery || self.snd_una < self.ecn_recover {
            return;
        }
        self.ssthresh = self.congestion_ssthresh(Signal::Ecn);
        self.cwnd = self.ssthresh.max(self.mss());
        self.ecn_recover = self.snd_max;
        self.cwr_pending = true;
        self.ece_reduced = true;
        self.cc.restart_count();
        if self.counting() {
            self.counters.ecn_reductions += 1;
        }
        self.record(LogEvent::EcnReduce);
    }

    /// Slow start or congestion avoidance for `acked` new bytes (RFC 5681 3.1, RFC 3465).
    pub fn grow(&mut self, acked: u64) {
        if self.ece_reduced || acked == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.slow_start(acked);
        } else {
            let a = Acked {
                now: self.now,
                bytes: acked,
                mss: self.mss(),
                counting: self.params.counting,
                srtt: self.rtt.srtt(),
            };
            self.cwnd = self.cc.avoid(self.cwnd, &a);
        }
    }

    /// RFC 5681 3.1 slow start: one SMSS per ACK (per-ACK counting), or the bytes
    /// acknowledged up to L = 2 SMSS, 1 SMSS in the round trip after a timeout (RFC 3465
    /// 2.2, 2.3).
    fn slow_start(&mut self, acked: u64) {
        let mss = self.mss();
        self.cwnd += match self.params.counting {
            Counting::Packets => mss,
            Counting::Bytes => {
                let l = if self.snd_una <= self.abc_slow_until {
                    mss
                } else {
                    2 * mss
                };
                acked.min(l)
            }
        };
    }

    /// Leaves loss recovery (used by the variants).
    pub fn end_recovery(&mut self, ack: u64) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.cc.restart_count();
        self.record(LogEvent::RecoveryEnd { ack });
    }

    /// Fast retransmit: counts it and puts the segment at `seq` on the wire at once,
    /// whatever the window (RFC 5681 3.2 step 2, RFC 6675 (4.3)).
    pub fn fast_retransmit(&mut self, seq: u64) {
        if self.counting() {
            self.counters.fast_retransmits += 1;
        }
        self.in_recovery = true;
        self.record(LogEvent::FastRetransmit { seq });
        self.retransmit(seq);
    }

    /// Retransmits the segment starting at `seq` now (fast retransmit, partial ACK).
    pub fn retransmit(&mut self, seq: u64) {
        let len = self.segment_len(seq, self.snd_max);
        if len > 0 {
            self.emit(Segment {
                seq,
                len,
                retransmission: true,
                syn: false,
                cwr: false,
            });
        }
    }

    /// Length of the segment starting at `seq`, without crossing `limit` or the end of the
    /// application's data.
    pub fn segment_len(&self, seq: u64, limit: u64) -> u32 {
        self.mss().min(limit.min(self.app_end).saturating_sub(seq)) as u32
    }

    // -- timer --------------------------------------------------------------------------

    /// The retransmission timer expired (RFC 6298 (5.4)-(5.6), RFC 5681 3.1).
    pub fn on_timeout(&mut self, now: SimTime) {
        self.now = now;
        if let Some((_, _)) = self.syn {
            // The SYN was lost (or its SYN-ACK): back off and send it again.
            if self.counting() {
                self.counters.timeouts += 1;
            }
            self.rtt.back_off();
            self.rto_deadline = None;
            self.record(LogEvent::Timeout { seq: ISN });
            self.send_syn(true);
            return;
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        if self.counting() {
            self.counters.timeouts += 1;
        }
        // RFC 5681 3.1: ssthresh "no more than" (4), held when this segment was already
        // resent by the timer. A timeout during loss recovery ends the same loss episode
        // whose start already set ssthresh by (4): FlightSize now also counts everything
        // sent (and SACKed) during recovery, so (4) would raise ssthresh above the halved
        // window and the next slow start would overshoot again. Keep the smaller value, as
        // Linux does (tcp_enter_loss keeps ssthresh when the timeout falls in Recovery).
        if self.rto_seq != Some(self.snd_una) {
            let eq4 = self.congestion_ssthresh(Signal::Timeout);
            self.ssthresh = if self.in_recovery { self.ssthresh.min(eq4) } else { eq4 };
        }
        self.rto_seq = Some(self.snd_una);
        self.cwnd = self.mss();
        self.cc.restart_count();
        self.abc_slow_until = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.in_recovery = false;
        self.dupacks = 0;
        let mut variant = std::mem::take(&mut self.variant);
        variant.on_timeout(self);
        self.variant = variant;
        self.timing = None;
        self.snd_nxt = self.snd_una;
        // (5.5) back off, (5.6) restart; (5.4) the retransmission goes out below.
        self.rtt.back_off();
        self.rto_deadline = Some(now + self.rtt.rto());
        self.record(LogEvent::Timeout { seq: self.snd_una });
        self.try_send(now);
    }

    // -- sending ------------------------------------------------------------------------

    /// Sends what the window and the variant allow.
    pub fn try_send(&mut self, now: SimTime) {
        self.now = now;
        self.send();
    }

    /// `try_send` at `self.now`; inlined into `on_ack`, which ends with it.
    #[inline(always)]
    fn send(&mut self) {
        let now = self.now;
        if !self.established {
            return;
        }
        // RFC 5681 4.1: restart window after an idle period longer than RTO.
        if self.snd_una == self.snd_max
            && self.snd_max > DATA_START
            && self.snd_nxt < self.app_end
            && now.saturating_sub(self.last_send) > self.rtt.rto()
        {
            self.cwnd = self.cwnd.min(self.params.initial_window);
        }
        if self.in_recovery {
            self.send_in_recovery();
            return;
        }
        // Outside recovery every variant sends by the window rule, skipping what the
        // receiver is known to hold.
        while let Some(seg) = self.window_segment(|q| self.variant.sacked_end(q)) {
            self.emit(seg);
        }
    }

    /// During loss recovery the variant chooses what to send.
    fn send_in_recovery(&mut self) {
        let mut variant = std::mem::take(&mut self.variant);
        while let Some(seg) = variant.next_segment(self) {
            variant.on_sent(self, &seg);
            self.emit(seg);
        }
        self.variant = variant;
    }

    /// The next segment by the window rule of RFC 5681: everything in [SND.UNA, SND.UNA +
    /// min(cwnd, rwnd)) may be outstanding. Starts at SND.NXT, skipping bytes `skip` says
    /// the receiver holds (SACKed, after a timeout's go-back).
    #[inline]
    pub fn window_segment(&self, skip: impl Fn(u64) -> Option<u64>) -> Option<Segment> {
        let mut seq = self.snd_nxt;
        while seq < self.snd_max {
            match skip(seq) {
                Some(end) => seq = end,
                None => break,
            }
        }
        let limit = if seq < self.snd_max { self.snd_max } else { self.app_end };
        let len = self.segment_len(seq, limit);
        if len == 0 {
            return None;
        }
        let wnd = self.cwnd.min(self.rwnd);
        if seq + len as u64 > self.snd_una + wnd {
            return None;
        }
        Some(Segment {
            seq,
            len,
            retransmission: seq < self.snd_max,
            syn: false,
            cwr: false,
        })
    }

    /// Puts a segment on the output list and updates the send variables, the RTT timing
    /// and the timer (RFC 6298 (5.1)). Inlined: nearly every ACK sends a segment.
    #[inline(always)]
    fn emit(&mut self, mut seg: Segment) {
        let end = seg.seq + seg.len as u64;
        if seg.retransmission {
            if self.counting() {
                self.counters.retransmits += 1;
            }
            // Karn: no sample from a round trip that saw a retransmission.
            self.timing = None;
            if self.restarts_timer(&seg) {
                self.rto_deadline = Some(self.now + self.rtt.rto());
            }
        } else if !seg.syn {
            if self.timing.is_none() {
                self.timing = Some((end, self.now));
            }
            if self.cwr_pending {
                seg.cwr = true;
                self.cwr_pending = false;
            }
        }
        if !seg.syn {
            self.snd_max = self.snd_max.max(end);
            // A segment at or beyond SND.NXT moves it (the window rule's sends, which may
            // skip SACKed bytes); a retransmission below it (fast retransmit, partial ACK,
            // NextSeg()) does not.
            if seg.seq >= self.snd_nxt || !seg.retransmission {
                self.snd_nxt = self.snd_nxt.max(end);
            }
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(self.now + self.rtt.rto());
        }
        self.last_send = self.now;
        self.record(LogEvent::Send {
            seq: seg.seq,
            len: seg.len,
            rtx: seg.retransmission,
        });
        self.out.push(seg);
    }

    /// Whether sending `seg`, a retransmission, restarts the timer: loss recovery resends
    /// the segment at SND.UNA and [`RtoRestart::OnRetransmit`] is chosen, unless NewReno's
    /// Impatient rule holds the timer on this ACK. (A timeout's retransmission has its
    /// timer set by (5.6) already.)
    #[inline]
    fn restarts_timer(&self, seg: &Segment) -> bool {
        self.in_recovery
            && seg.seq == self.snd_una
            && !self.keep_timer
            && self.params.rto_restart == RtoRestart::OnRetransmit
    }
}

/// What an ACK told the sender, for the variant.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    pub ack: u64,
    /// Bytes newly acknowledged cumulatively.
    pub acked: u64,
    /// A duplicate ACK by RFC 5681's definition.
    pub dup: bool,
    /// Bytes newly SACKed (RFC 6675's duplicate ACK when > 0).
    pub newly_sacked: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::VariantKind;

    const MSS: u64 = 1000;

    fn sender(counting: Counting, ecn: bool, iw: u64) -> Sender {
        let params = SenderParams {
            mss: MSS,
            window: 1_000_000,
            initial_window: iw * MSS,
            counting,
            ecn,
            rtt: RttParams::default(),
            rto_restart: RtoRestart::default(),
            congestion: Congestion::default(),
        };
        let w = Window {
            start: SimTime::ZERO,
            end: SimTime::MAX,
        };
        let mut s = Sender::new(params, VariantKind::Reno.build(), w);
        s.open(SimTime::ZERO, false);
        s.write(SimTime::ZERO, u64::MAX);
        s
    }

    fn ack(s: &mut Sender, t_ms: u64, ack: u64, ece: bool) {
        s.on_ack(
            SimTime(t_ms * 1_000_000),
            ack,
            1_000_000,
            false,
            std::iter::empty(),
            ece,
        );
    }

    #[test]
    fn initial_window_of_rfc5681() {
        assert_eq!(SenderParams::rfc5681_initial_window(1460), 4380);
        assert_eq!(SenderParams::rfc5681_initial_window(536), 2144);
        assert_eq!(SenderParams::rfc5681_initial_window(4000), 8000);
        let s = sender(Counting::Bytes, false, 3);
        assert_eq!(s.out.len(), 3, "IW segments leave at once");
        assert_eq!(
            s.out[2],
            Segment {
                seq: 2001,
                len: 1000,
                retransmission: false,
                syn: false,
                cwr: false
            }
        );
    }

    #[test]
    fn congestion_avoidance_by_bytes_and_by_packets() {
        // cwnd 10 MSS above ssthresh 5 MSS; ten ACKs of one MSS each.
        // Bytes (RFC 3465 2.1): bytes_acked reaches cwnd at the tenth: cwnd 11000.
        // Packets (RFC 5681 (3)): each ACK adds floor(1000 * 1000 / cwnd) to the cwnd of the
        // moment: 10000 +100, 10100 +99, 10199 +98, 10297 +97, 10394 +96, 10490 +95,
        // 10585 +94, 10679 +93, 10772 +92, 10864 +92 -> 10956.
        for (counting, want) in [(Counting::Bytes, 11_000), (Counting::Packets, 10_956)] {
            let mut s = sender(counting, false, 10);
            s.ssthresh = 5 * MSS;
            for i in 1..=10 {
                ack(&mut s, i, 1 + i * MSS, false);
            }
            assert_eq!(s.cwnd, want, "{counting:?}");
        }
        // Slow start: one MSS per ACK in both modes (N = SMSS <= L).
        for counting in [Counting::Bytes, Counting::Packets] {
            let mut s = sender(counting, false, 2);
            ack(&mut s, 1, 1001, false);
            ack(&mut s, 1, 2001, false);
            assert_eq!(s.cwnd, 4 * MSS);
        }
        // Bytes, an ACK of 3 MSS (a stretch ACK) grows by L = 2 MSS only (RFC 3465 2.2).
        let mut s = sender(Counting::Bytes, false, 4);
        ack(&mut s, 1, 3001, false);
        assert_eq!(s.cwnd, 6 * MSS);
    }

    #[test]
    fn ecn_echo_halves_once_per_window_and_sets_cwr() {
        // RFC 3168 6.1.2. Four segments out (1-4001). ACK 1001 with ECE: FlightSize 3000,
        // ssthresh = max(1500, 2000) = 2000 = cwnd; no growth on that ACK; the next new
        // segment carries CWR. ACK 2001 with ECE falls in the same window: ignored.
        let mut s = sender(Counting::Bytes, true, 4);
        s.out.clear();
        ack(&mut s, 10, 1001, true);
        assert_eq!((s.cwnd, s.ssthresh), (2000, 2000));
        assert_eq!(s.counters.ecn_reductions, 1);
        ack(&mut s, 11, 2001, true);
        assert_eq!(s.counters.ecn_reductions, 1, "once per window");
        // FlightSize 2000 after ACK 2001 = cwnd: nothing was sent yet; ACK 3001 lets one out.
        ack(&mut s, 12, 3001, false);
        let first_new = s.out.iter().find(|g| !g.retransmission).expect("a new segment");
        assert!(first_new.cwr, "{:?}", s.out);
        assert_eq!(s.out.iter().filter(|g| g.cwr).count(), 1);
        // ACKs beyond the window of the reduction may reduce again.
        let high = s.snd_max;
        ack(&mut s, 20, high, true);
        assert_eq!(s.counters.ecn_reductions, 2);
    }

    #[test]
    fn dctcp_reduces_by_half_alpha_once_per_window() {
        // RFC 8257 3.3-3.4, Alpha = 1 and g = 1/16 at the start, ten segments out (1-10001).
        use crate::transport::tcp::dctcp::{Dctcp, DctcpSpec};
        let mut s = sender(Counting::Bytes, true, 10);
        s.cc = Congestion::Dctcp(Dctcp::new(DctcpSpec::default(), DATA_START));
        let alpha = |s: &Sender| s.cc.dctcp_alpha();
        // ACK 1001 passes WindowEnd (SND.UNA = 1): M = 0, Alpha = 15/16; the next window
        // ends at SND.NXT = 10001. Slow start: cwnd 11000.
        ack(&mut s, 10, 1001, false);
        assert_eq!((alpha(&s), s.cwnd), (0.9375, 11_000));
        // ACK 2001 with ECE: cwnd = 11000 (1 - 0.9375 / 2) = 5843.75 -> 5844 = ssthresh.
        ack(&mut s, 11, 2001, true);
        assert_eq!((s.cwnd, s.ssthresh), (5844, 5844));
        // ACK 3001 with ECE falls in the same window of data: no second reduction.
        let before = s.cwnd;
        ack(&mut s, 12, 3001, true);
        assert_eq!((s.cwnd, s.counters.ecn_reductions), (before, 1));
        // ACKs 4001 ... 11001 unmarked; 11001 passes WindowEnd 10001: of 10000 bytes
        // acknowledged since, 2000 were marked: M = 0.2, Alpha = 0.9375 (15/16) + 0.2 / 16.
        for (i, a) in (4001..=11_001).step_by(1000).enumerate() {
            ack(&mut s, 13 + i as u64, a, false);
        }
        let want = 0.9375 * 15.0 / 16.0 + 0.2 / 16.0;
        assert!((alpha(&s) - want).abs() < 1e-15, "{}", alpha(&s));
        // Beyond the window of the first reduction (RFC 3168's recover point, SND.MAX
        // then: 12001), ECE reduces again, by Alpha / 2.
        let before = s.cwnd;
        ack(&mut s, 30, 12_001, true);
        assert_eq!(s.counters.ecn_reductions, 2);
        assert_eq!(s.cwnd, (before as f64 * (1.0 - want / 2.0)).round() as u64);
    }
}
