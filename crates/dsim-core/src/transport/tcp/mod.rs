//! TCP: a segment-level sender and receiver with Reno, NewReno and SACK loss recovery.
//!
//! A TCP flow is one connection: the sender (and the application writing into it) at the
//! flow's source, the receiver at its destination. Data segments travel
//! [`Direction::Forward`], acknowledgements (and a web client's requests)
//! [`Direction::Reverse`]; both carry the flow's id and DSCP. Sizes are IP datagram sizes,
//! counted as ns-2 counts them and as a capture shows them: a data segment is its payload
//! plus 40 bytes (IPv4 20 + TCP 20, no options); an ACK is 40 bytes plus its SACK option
//! (NOP, NOP, kind 5, length 2 + 8n: 4 + 8n bytes for n blocks); a SYN or SYN-ACK carries
//! the MSS option (4 bytes) and, with SACK, NOP NOP SACK-permitted (4 bytes).
//!
//! Files, one per concept:
//! - [`sender`]: sequence variables, RFC 5681 slow start and congestion avoidance (byte or
//!   packet counting), RFC 6298 timer management, RFC 3168 ECN response, the send loop;
//! - [`variant`] with [`reno`] (RFC 5681 3.2), [`newreno`] (RFC 6582) and [`sack`]
//!   (RFC 6675 over RFC 2018), and the [`scoreboard`] of RFC 6675;
//! - [`congestion`]: congestion avoidance and the ssthresh of congestion events, chosen
//!   apart from loss recovery: Reno (RFC 5681 3.1), [`cubic`] (RFC 9438) or [`dctcp`]
//!   (RFC 8257);
//! - [`rtt`]: the RFC 6298 estimator; [`receiver`]: reassembly, delayed ACKs, SACK blocks;
//! - [`ranges`]: the small sorted range set the scoreboard and the receiver share;
//! - this file: the connection that ties them to the application, the timers and the
//!   packets, and the per-flow statistics.
//!
//! - [`spec`]: the `tcp` table ([`TcpSpec`]), each key declared once with its default,
//!   resolved into the [`TcpParams`] both ends run with.
//!
//! Timers are cancelled lazily ([`Timers`]): the connection keeps each timer's deadline;
//! the simulation holds at most one event per timer at the earliest deadline it was
//! asked for, and an event that finds its deadline moved later re-arms itself instead of
//! firing. Restarting the retransmission timer on every ACK therefore costs no event.

pub mod congestion;
pub mod cubic;
pub mod dctcp;
pub mod newreno;
pub mod ranges;
pub mod receiver;
pub mod reno;
pub mod rtt;
pub mod sack;
pub mod scoreboard;
pub mod sender;
pub mod spec;
pub mod variant;

use serde::{Deserialize, Serialize};

use crate::app::{Ftp, TcpApp};
use crate::engine::rng::Rng;
use crate::hint::{prefetch, prefetch_span};
use crate::packet::{Direction, Dscp, Ecn, FlowId, NodeId, Packet, PacketArena, PktId, TcpHeader, tcp_flags};
use crate::params::Params;
use crate::stats::Window;
use crate::time::{Duration, SimTime};

pub use congestion::{Congestion, CongestionKind};
pub use cubic::{CubicRtt, CubicSpec};
pub use dctcp::DctcpSpec;
pub use receiver::{AckPolicy, EcnEcho, Receiver, ReceiverParams};
pub use rtt::{RttEstimator, RttParams};
pub use sender::{Counting, DATA_START, ISN, LogEntry, LogEvent, RtoRestart, Segment, Sender, SenderParams};
pub use spec::{DelayedAckSpec, SeriesSpec, TcpSpec};
pub use variant::{LossRecovery, Variant};

/// IPv4 (20) + TCP (20) header bytes without options.
pub const HEADERS: u32 = 40;
/// MSS option of a SYN or SYN-ACK.
pub const MSS_OPTION: u32 = 4;
/// NOP, NOP, SACK-permitted on a SYN or SYN-ACK.
pub const SACK_PERMITTED_OPTION: u32 = 4;

/// Bytes of a SACK option with `blocks` blocks, with the two NOPs that align it.
pub const fn sack_option_len(blocks: u32) -> u32 {
    if blocks == 0 { 0 } else { 4 + 8 * blocks }
}

/// Which loss recovery a connection runs (`variant = "reno"`, `"newreno"`, `"sack"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "lowercase")]
pub enum VariantKind {
    Reno,
    NewReno,
    Sack,
}

impl VariantKind {
    pub fn build(self) -> Variant {
        match self {
            VariantKind::Reno => Variant::Reno(reno::Reno),
            VariantKind::NewReno => Variant::NewReno(Default::default()),
            VariantKind::Sack => Variant::Sack(Default::default()),
        }
    }
}

/// When to record a flow's cwnd, ssthresh and RTT in the `series` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesMode {
    /// Every interval inside the measurement window.
    Interval(Duration),
    /// At every change of cwnd or ssthresh, up to [`SERIES_CAP`] rows.
    Change,
}

/// Most rows a flow's series holds; recording stops there (the row count says so).
pub const SERIES_CAP: usize = 100_000;

/// A connection's configuration, resolved from its [`TcpSpec`] (both ends use the same).
/// The keys every packet reads first (`repr(C)`: in this order), the congestion
/// control's initial state, which only the set-up copies, last.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpParams {
    pub series: Option<SeriesMode>,
    pub delayed_ack: Option<Duration>,
    pub mss: u32,
    pub window: u32,
    pub ecn: bool,
    pub handshake: bool,
    pub variant: VariantKind,
    pub counting: Counting,
    pub rto_restart: RtoRestart,
    pub sack_blocks: usize,
    /// IW in bytes.
    pub initial_window: u64,
    pub rtt: RttParams,
    /// The congestion control in its initial state.
    pub congestion: Congestion,
}

impl Default for TcpParams {
    /// What a `tcp` table without keys declares ([`TcpSpec::default`]).
    fn default() -> Self {
        TcpSpec::default()
            .params(&crate::params::KeyPath::root())
            .expect("the declared defaults obey the table's rules")
    }
}

/// The timers of a connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TcpTimer {
    /// Retransmission timeout (sender).
    Rto,
    /// Delayed ACK (receiver).
    DelayedAck,
    /// A web client's request went unanswered.
    Request,
    /// The application acts (a web client's next request after thinking).
    App,
    /// The flow's stop time: the application writes nothing more.
    Stop,
    /// Sample cwnd, ssthresh and RTT for the series table.
    Sample,
}

const N_TIMERS: usize = 6;

impl TcpTimer {
    const ALL: [TcpTimer; N_TIMERS] = [
        TcpTimer::Rto,
        TcpTimer::DelayedAck,
        TcpTimer::Request,
        TcpTimer::App,
        TcpTimer::Stop,
        TcpTimer::Sample,
    ];
}

/// Deadlines with lazy cancellation. `deadline` is when a timer is due ([`NEVER`] = not
/// running); `pending` the time of the one event the simulation holds for it ([`NEVER`]:
/// none). Plain times, not options: 104 bytes instead of 200, two cache lines of the
/// connection that every packet reads.
/// `unscheduled` has bit `t` set when timer `t` may need a new event: `schedule` runs
/// after every packet a connection handles, and most runs find nothing to do (restarting
/// the RTO moves its deadline later), so it visits only the timers marked here.
#[derive(Clone, Debug)]
pub struct Timers {
    deadline: [SimTime; N_TIMERS],
    pending: [SimTime; N_TIMERS],
    unscheduled: u8,
}

/// No deadline, no event (no run reaches this instant).
const NEVER: SimTime = SimTime::MAX;

impl Default for Timers {
    fn default() -> Self {
        Timers {
            deadline: [NEVER; N_TIMERS],
            pending: [NEVER; N_TIMERS],
            unscheduled: 0,
        }
    }
}

impl Timers {
    #[inline]
    pub fn set(&mut self, t: TcpTimer, at: Option<SimTime>) {
        let i = t as usize;
        debug_assert_ne!(at, Some(NEVER), "a deadline within the run");
        self.deadline[i] = at.unwrap_or(NEVER);
        self.mark_if_unscheduled(i);
    }

    pub fn get(&self, t: TcpTimer) -> Option<SimTime> {
        let d = self.deadline[t as usize];
        (d != NEVER).then_some(d)
    }

    /// Timer `i`'s deadline if it comes before the event the simulation holds for it (or
    /// the timer has none): the timer then needs a new event. A running timer's deadline
    /// is before NEVER, which stands for no event.
    #[inline]
    fn needs_event(&self, i: usize) -> Option<SimTime> {
        let d = self.deadline[i];
        (d < self.pending[i]).then_some(d)
    }

    /// Only `set` and `fire` change `deadline` and `pending`: each marks the timer it
    /// touched when that timer needs an event, so every timer that needs one is marked.
    #[inline]
    fn mark_if_unscheduled(&mut self, i: usize) {
        if self.needs_event(i).is_some() {
            self.unscheduled |= 1 << i;
        }
    }

    /// Whether some timer needs an event (`schedule` has something to do).
    #[inline]
    pub fn need_events(&self) -> bool {
        self.unscheduled != 0
    }

    /// Calls `push(at, timer)` for each timer whose deadline comes before the event the
    /// simulation holds for it (or that has none), and records the new event. Timers are
    /// visited in the order of [`TcpTimer`].
    pub fn schedule(&mut self, mut push: impl FnMut(SimTime, TcpTimer)) {
        while self.unscheduled != 0 {
            let i = self.unscheduled.trailing_zeros() as usize;
            self.unscheduled &= self.unscheduled - 1;
            if let Some(d) = self.needs_event(i) {
                self.pending[i] = d;
                push(d, TcpTimer::ALL[i]);
            }
        }
    }

    /// The event for `t` at `now` popped: whether the timer is due now (it is then
    /// stopped). A stale event (not the one recorded) or a deadline moved later returns
    /// false; `schedule` then re-arms a moved deadline.
    pub fn fire(&mut self, t: TcpTimer, now: SimTime) -> bool {
        let i = t as usize;
        if self.pending[i] != now {
            return false;
        }
        self.pending[i] = NEVER;
        if self.deadline[i] <= now {
            self.deadline[i] = NEVER;
            true
        } else {
            self.mark_if_unscheduled(i);
            false
        }
    }
}

/// What a connection needs from the simulation while it acts.
pub struct TcpIo<'a> {
    pub now: SimTime,
    pub pkts: &'a mut PacketArena,
    /// Packets to route, in order (data from the source, ACKs from the destination).
    pub out: &'a mut Vec<PktId>,
    /// The flow's random stream (response sizes, think times).
    pub rng: &'a mut Rng,
}

/// Per-flow TCP counters (inside the measurement window unless said otherwise).
#[derive(Clone, Debug, Default)]
pub struct TcpStats {
    /// Payload bytes delivered in order to the receiving application (goodput).
    pub goodput_bytes: u64,
    /// Reverse-direction packets (ACKs, requests) dropped.
    pub dropped_reverse_pkts: u64,
    /// Transfers (a finite FTP, a web response) whose last byte arrived in the window.
    pub transfers: u64,
    /// Sum of their durations (request or start to last byte), ns.
    pub transfer_time_ns: u128,
    /// Duration of a finite FTP transfer, whenever it completed.
    pub completion: Option<Duration>,
}

/// One row of the series table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesRow {
    pub t: SimTime,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub flight: u64,
    pub srtt: Option<Duration>,
    pub rto: Duration,
    /// CUBIC's W_max in bytes and the K of its current stage in seconds (NaN otherwise).
    pub w_max: f64,
    pub k: f64,
    /// DCTCP's Alpha (NaN otherwise).
    pub alpha: f64,
}

#[derive(Clone, Debug)]
pub struct Series {
    pub mode: SeriesMode,
    pub rows: Vec<SeriesRow>,
    last: Option<(u64, u64)>,
}

/// A web client's request in flight.
#[derive(Clone, Copy, Debug)]
struct Request {
    seq: u64,
    len: u32,
    /// When it was first sent (the response time starts there).
    first_sent: SimTime,
    /// Current timeout.
    rto: Duration,
}

/// A transfer whose end the receiver waits for.
#[derive(Clone, Copy, Debug)]
struct Transfer {
    started: SimTime,
    end: u64,
}

/// A TCP connection carrying one application. Its fields in the order packets use them
/// (`repr(C)` keeps it, aligned to a cache line): what every packet reads first (the
/// first line, then the timers), what a segment reaching the receiver reads next, the
/// parameters, the sender, and last what only some connections use.
#[repr(C, align(64))]
#[derive(Clone, Debug)]
pub struct TcpFlow {
    pub flow: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    pub dscp: Dscp,
    stopped: bool,
    fwd_index: u64,
    rev_index: u64,
    /// Next sequence number of the client (destination) side: requests and ACKs.
    client_nxt: u64,
    /// The server's RCV.NXT for the client's requests (the ACK field of data segments).
    server_rcv_nxt: u64,
    window: Window,
    pub timers: Timers,
    request: Option<Request>,
    transfer: Option<Transfer>,
    pub stats: TcpStats,
    pub receiver: Receiver,
    pub params: TcpParams,
    pub sender: Sender,
    pub app: TcpApp,
    pub series: Option<Series>,
}

impl TcpFlow {
    /// Asks for the lines a segment travelling `direction` will read on arrival: the ids
    /// and the timers, the parameters' head (the field order above), then the receiver's
    /// part (data) or the sender's first lines (ACKs: sender.rs keeps what an ACK reads
    /// in its first seven).
    /// The connection is named by its address (any address will do: a prefetch reads
    /// nothing), so that the caller need not load the line that holds it.
    #[inline(always)]
    pub fn prefetch(at: *const TcpFlow, direction: Direction) {
        use std::mem::offset_of;
        const ACK_READS_BYTES: usize = 7 * 64;
        let (ids_and_timers, receiver_part) = (offset_of!(TcpFlow, request), offset_of!(TcpFlow, params));
        let sender = offset_of!(TcpFlow, sender);
        prefetch_span(at, 0, ids_and_timers);
        prefetch(at.wrapping_byte_add(receiver_part));
        match direction {
            Direction::Forward => prefetch_span(at, ids_and_timers, receiver_part),
            Direction::Reverse => prefetch_span(at, sender, sender + ACK_READS_BYTES),
        }
    }

    pub fn new(
        flow: FlowId,
        src: NodeId,
        dst: NodeId,
        dscp: Dscp,
        params: TcpParams,
        app: TcpApp,
        window: Window,
    ) -> Self {
        let sp = SenderParams {
            mss: params.mss as u64,
            window: params.window as u64,
            initial_window: params.initial_window,
            counting: params.counting,
            ecn: params.ecn,
            rtt: params.rtt,
            rto_restart: params.rto_restart,
            congestion: params.congestion,
        };
        let rp = ReceiverParams {
            sack: params.variant == VariantKind::Sack,
            max_blocks: params.sack_blocks,
            delayed_ack: params.delayed_ack,
            window: params.window,
            echo: match params.congestion {
                Congestion::Dctcp(_) => EcnEcho::Dctcp,
                _ => EcnEcho::Rfc3168,
            },
        };
        TcpFlow {
            flow,
            src,
            dst,
            dscp,
            sender: Sender::new(sp, params.variant.build(), window),
            receiver: Receiver::new(rp, DATA_START),
            app,
            stats: TcpStats::default(),
            series: params.series.map(|mode| Series {
                mode,
                rows: Vec::new(),
                last: None,
            }),
            timers: Timers::default(),
            window,
            fwd_index: 0,
            rev_index: 0,
            // The client's SYN-ACK (or its implicit ISN) took sequence number 0.
            client_nxt: DATA_START,
            server_rcv_nxt: DATA_START,
            request: None,
            transfer: None,
            stopped: false,
            params,
        }
    }

    /// The flow starts: open the connection and start the application.
    pub fn on_start(&mut self, io: &mut TcpIo) {
        let now = io.now;
        self.sender.open(now, self.params.handshake);
        match self.app {
            TcpApp::Ftp(ftp) => match ftp.bytes {
                Some(b) => {
                    self.transfer = Some(Transfer {
                        started: now,
                        end: DATA_START + b,
                    });
                    self.sender.write(now, b);
                }
                None => self.sender.write(now, u64::MAX),
            },
            TcpApp::Web(_) => self.send_request(io),
        }
        if let Some(SeriesMode::Interval(_)) = self.params.series {
            self.timers.set(TcpTimer::Sample, Some(now.max(self.window.start)));
        }
        self.flush(io);
    }

    /// The event of timer `t` popped at `io.now`.
    pub fn on_timer(&mut self, t: TcpTimer, io: &mut TcpIo) {
        let now = io.now;
        if !self.timers.fire(t, now) {
            return;
        }
        match t {
            TcpTimer::Rto => self.sender.on_timeout(now),
            TcpTimer::DelayedAck => {
                if self.receiver.ack_pending() {
                    self.send_reverse(io, 0);
                }
            }
            TcpTimer::Request => {
                if let Some(r) = &mut self.request {
                    r.rto = Duration((r.rto.0 * 2).min(self.params.rtt.max_rto.0));
                    let (seq, len, rto) = (r.seq, r.len, r.rto);
                    self.send_reverse_at(io, seq, len);
                    self.timers.set(TcpTimer::Request, Some(now + rto));
                }
            }
            TcpTimer::App => {
                if !self.stopped {
                    self.send_request(io);
                }
            }
            TcpTimer::Stop => {
                self.stopped = true;
                if let TcpApp::Ftp(Ftp { bytes: None }) = self.app {
                    self.sender.stop_writing();
                }
            }
            TcpTimer::Sample => {
                if let Some(SeriesMode::Interval(dt)) = self.params.series {
                    if self.window.contains(now) {
                        self.sample(now);
                    }
                    let next = now + dt;
                    if next < self.window.end {
                        self.timers.set(TcpTimer::Sample, Some(next));
                    }
                }
            }
        }
        self.flush(io);
    }

    /// Packet `id` of this connection reached one of its ends. The connection reads it
    /// where it lies and frees it before it sends anything: its reply takes the slot back
    /// (the arena reuses the last freed slot first).
    pub fn on_arrival(&mut self, id: PktId, io: &mut TcpIo) {
        match io.pkts[id].direction {
            Direction::Forward => self.on_arrival_at_dst(id, io),
            Direction::Reverse => self.on_arrival_at_src(id, io),
        }
    }

    /// A forward packet (data or SYN) reached the destination.
    fn on_arrival_at_dst(&mut self, id: PktId, io: &mut TcpIo) {
        let now = io.now;
        let p = &io.pkts[id];
        let h = &p.tcp;
        let (flags, seq, len, ack, ce) = (h.flags, h.seq, h.len, h.ack, p.ecn == Ecn::Ce);
        io.pkts.free(id);
        if flags & tcp_flags::SYN != 0 {
            self.send_syn_ack(io);
            self.flush_receiver(io);
            return;
        }
        if len > 0 {
            if self.receiver.acks_before(ce) {
                // RFC 8257 3.2: the delayed ACK of the segments before this one, with their
                // CE state, before the state changes.
                self.send_reverse(io, 0);
            }
            let arrival = self.receiver.on_segment(seq, len, ce, flags & tcp_flags::CWR != 0);
            if arrival.delivered > 0 && self.window.contains(now) {
                self.stats.goodput_bytes += arrival.delivered;
            }
            // The server's data acknowledges the request it answers.
            if let Some(r) = self.request {
                if ack >= r.seq + r.len as u64 {
                    self.request = None;
                    self.timers.set(TcpTimer::Request, None);
                }
            }
            match arrival.ack {
                AckPolicy::Now => self.send_reverse(io, 0),
                AckPolicy::Delay => {
                    if self.timers.get(TcpTimer::DelayedAck).is_none() {
                        let d = self.params.delayed_ack.expect("Delay only with delayed ACKs");
                        self.timers.set(TcpTimer::DelayedAck, Some(now + d));
                    }
                }
            }
            if let Some(t) = self.transfer {
                if self.receiver.rcv_nxt >= t.end {
                    self.complete(t, io);
                }
            }
        }
        self.flush_receiver(io);
    }

    /// A reverse packet (ACK, SYN-ACK or request) reached the source.
    fn on_arrival_at_src(&mut self, id: PktId, io: &mut TcpIo) {
        let now = io.now;
        let h = &io.pkts[id].tcp;
        if h.has(tcp_flags::SYN) {
            io.pkts.free(id);
            self.sender.on_syn_ack(now);
            self.flush(io);
            return;
        }
        let mut response = 0;
        if h.len > 0 && h.seq == self.server_rcv_nxt {
            // A new request: the server answers it.
            self.server_rcv_nxt += h.len as u64;
            if let TcpApp::Web(web) = &self.app {
                response = web.response_size(io.rng);
                let started = self.request.map_or(now, |r| r.first_sent);
                self.transfer = Some(Transfer {
                    started,
                    end: self.sender.app_end + response,
                });
            }
        }
        self.sender
            .on_ack(now, h.ack, h.window, h.len > 0, h.sack_blocks(), h.has(tcp_flags::ECE));
        io.pkts.free(id);
        if response > 0 {
            self.sender.write(now, response);
        }
        self.flush(io);
    }

    /// A packet of this flow was dropped somewhere.
    pub fn on_dropped(&mut self, p: &Packet, now: SimTime) {
        if p.direction == Direction::Reverse && self.window.contains(now) {
            self.stats.dropped_reverse_pkts += 1;
        }
    }

    fn complete(&mut self, t: Transfer, io: &mut TcpIo) {
        let now = io.now;
        self.transfer = None;
        let took = now - t.started;
        if self.window.contains(now) {
            self.stats.transfers += 1;
            self.stats.transfer_time_ns += took.0 as u128;
        }
        match self.app {
            TcpApp::Ftp(_) => {
                self.stats.completion.get_or_insert(took);
            }
            TcpApp::Web(web) => {
                let think = web.think_time(io.rng);
                self.timers.set(TcpTimer::App, Some(now + think));
            }
        }
    }

    // -- packets ------------------------------------------------------------------------

    fn packet(&self, forward: bool, size: u32, index: u64, now: SimTime, tcp: TcpHeader, ecn: Ecn) -> Packet {
        let (src, dst, direction) = if forward {
            (self.src, self.dst, Direction::Forward)
        } else {
            (self.dst, self.src, Direction::Reverse)
        };
        Packet {
            flow: self.flow,
            src,
            dst,
            size,
            dscp: self.dscp,
            direction,
            index,
            sent_at: now,
            enqueued_at: now,
            ecn,
            tcp,
            ..Default::default()
        }
    }

    fn syn_options(&self) -> u32 {
        MSS_OPTION
            + if self.params.variant == VariantKind::Sack {
                SACK_PERMITTED_OPTION
            } else {
                0
            }
    }

    /// Turns a data segment of the sender into a packet. Inlined into the loop over the
    /// segments: a call per segment cost more than the packet's fields.
    #[inline(always)]
    fn emit_data(&mut self, seg: Segment, io: &mut TcpIo) {
        if seg.syn {
            return self.emit_syn(seg, io);
        }
        let mut flags = tcp_flags::ACK;
        if seg.cwr {
            flags |= tcp_flags::CWR;
        }
        let h = TcpHeader {
            seq: seg.seq,
            ack: self.server_rcv_nxt,
            len: seg.len,
            window: self.params.window,
            flags,
            ..Default::default()
        };
        // RFC 3168 6.1.5: retransmissions are not ECN-capable.
        let ecn = if self.params.ecn && !seg.retransmission {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        };
        let index = self.fwd_index;
        self.fwd_index += 1;
        let p = self.packet(true, HEADERS + seg.len, index, io.now, h, ecn);
        io.out.push(io.pkts.alloc(p));
    }

    /// The SYN, apart: the loop over the segments stays small without its case.
    #[cold]
    fn emit_syn(&mut self, seg: Segment, io: &mut TcpIo) {
        // RFC 3168 6.1.1: an ECN-setup SYN carries ECE and CWR.
        let mut flags = tcp_flags::SYN;
        if self.params.ecn {
            flags |= tcp_flags::ECE | tcp_flags::CWR;
        }
        let h = TcpHeader {
            seq: seg.seq,
            len: seg.len,
            window: self.params.window,
            flags,
            mss: self.params.mss as u16,
            ..Default::default()
        };
        let index = self.fwd_index;
        self.fwd_index += 1;
        let size = HEADERS + seg.len + self.syn_options();
        let p = self.packet(true, size, index, io.now, h, Ecn::NotEct);
        io.out.push(io.pkts.alloc(p));
    }

    /// Inlined into `flush`: nearly every ACK releases a segment.
    #[inline(always)]
    fn emit_segments(&mut self, io: &mut TcpIo) {
        for i in 0..self.sender.out.len() {
            let seg = self.sender.out[i];
            self.emit_data(seg, io);
        }
        self.sender.out.clear();
    }

    fn send_syn_ack(&mut self, io: &mut TcpIo) {
        let mut h = TcpHeader {
            seq: ISN,
            ack: DATA_START,
            window: self.params.window,
            flags: tcp_flags::SYN | tcp_flags::ACK,
            mss: self.params.mss as u16,
            ..Default::default()
        };
        if self.params.ecn {
            h.flags |= tcp_flags::ECE;
        }
        let size = HEADERS + self.syn_options();
        let index = self.rev_index;
        self.rev_index += 1;
        let p = self.packet(false, size, index, io.now, h, Ecn::NotEct);
        io.out.push(io.pkts.alloc(p));
    }

    /// Sends an ACK from the destination, carrying `payload` request bytes at `seq`
    /// (`client_nxt` for a pure ACK). Inlined: every data segment's arrival sends one.
    #[inline(always)]
    fn send_reverse_at(&mut self, io: &mut TcpIo, seq: u64, payload: u32) {
        let h = TcpHeader {
            seq,
            len: payload,
            flags: if payload > 0 { tcp_flags::PSH } else { 0 },
            ..Default::default()
        };
        let index = self.rev_index;
        self.rev_index += 1;
        let p = self.packet(false, HEADERS + payload, index, io.now, h, Ecn::NotEct);
        let (id, p) = io.pkts.alloc_mut(p);
        self.receiver.fill_ack(&mut p.tcp);
        p.size += sack_option_len(p.tcp.sack_count as u32);
        self.timers.set(TcpTimer::DelayedAck, None);
        io.out.push(id);
    }

    /// An ACK (or a request) from the destination at `client_nxt`.
    #[inline(always)]
    fn send_reverse(&mut self, io: &mut TcpIo, payload: u32) {
        let seq = self.client_nxt;
        self.send_reverse_at(io, seq, payload);
    }

    /// A web client sends its next request.
    fn send_request(&mut self, io: &mut TcpIo) {
        let TcpApp::Web(web) = self.app else {
            return;
        };
        let seq = self.client_nxt;
        let rto = self.params.rtt.initial_rto;
        self.request = Some(Request {
            seq,
            len: web.request,
            first_sent: io.now,
            rto,
        });
        self.send_reverse_at(io, seq, web.request);
        self.client_nxt = seq + web.request as u64;
        self.timers.set(TcpTimer::Request, Some(io.now + rto));
    }

    /// Moves the sender's segments to the wire, syncs the timers, records the series.
    /// Inlined into the handlers (a call cost as much as the work).
    #[inline(always)]
    fn flush(&mut self, io: &mut TcpIo) {
        if !self.sender.out.is_empty() {
            self.emit_segments(io);
        }
        self.timers.set(TcpTimer::Rto, self.sender.rto_deadline);
        self.record_change(io.now);
    }

    /// `flush` after a handler that leaves the sender alone (the receiver's): there is no
    /// segment to move, and the retransmission timer is as the last flush left it.
    #[inline(always)]
    fn flush_receiver(&mut self, io: &mut TcpIo) {
        debug_assert!(self.sender.out.is_empty());
        debug_assert_eq!(self.timers.get(TcpTimer::Rto), self.sender.rto_deadline);
        self.record_change(io.now);
    }

    /// In the series' `Change` mode, a row when cwnd or ssthresh changed.
    #[inline(always)]
    fn record_change(&mut self, now: SimTime) {
        if let Some(SeriesMode::Change) = self.params.series {
            if self.window.contains(now) {
                let key = (self.sender.cwnd, self.sender.ssthresh);
                if self.series.as_ref().is_some_and(|s| s.last != Some(key)) {
                    self.sample(now);
                }
            }
        }
    }

    fn sample(&mut self, now: SimTime) {
        let (w_max, k) = self.sender.cc.cubic_state();
        let row = SeriesRow {
            t: now,
            cwnd: self.sender.cwnd,
            ssthresh: self.sender.ssthresh,
            flight: self.sender.flight_size(),
            srtt: self.sender.rtt.srtt(),
            rto: self.sender.rtt.rto(),
            w_max,
            k,
            alpha: self.sender.cc.dctcp_alpha(),
        };
        if let Some(s) = &mut self.series {
            s.last = Some((row.cwnd, row.ssthresh));
            if s.rows.len() < SERIES_CAP {
                s.rows.push(row);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_every_packet_reads_comes_first() {
        // The connection's first cache line holds its ids, indices and window; the timers
        // (plain times, no options) the next two; a segment reaching the receiver reads
        // the receiver's lines and the parameters' series mode and window after them.
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<Timers>(), 104);
        assert_eq!(offset_of!(TcpFlow, timers), 64);
        assert!(offset_of!(TcpFlow, receiver) < offset_of!(TcpFlow, params));
        assert!(offset_of!(TcpParams, window) < 64 && offset_of!(TcpParams, series) < 64);
    }

    #[test]
    fn timers_cancel_lazily() {
        let mut t = Timers::default();
        let mut pushed = Vec::new();
        let mut sync = |t: &mut Timers| t.schedule(|at, k| pushed.push((at.0, k)));
        // Armed at 100: one event.
        t.set(TcpTimer::Rto, Some(SimTime(100)));
        sync(&mut t);
        // Restarted later (every ACK does this): no new event.
        t.set(TcpTimer::Rto, Some(SimTime(150)));
        sync(&mut t);
        t.set(TcpTimer::Rto, Some(SimTime(180)));
        sync(&mut t);
        // Moved earlier: a new event at 90; the one at 100 becomes stale.
        t.set(TcpTimer::Rto, Some(SimTime(90)));
        sync(&mut t);
        assert!(!t.fire(TcpTimer::Rto, SimTime(100)), "not the recorded event");
        assert!(t.fire(TcpTimer::Rto, SimTime(90)), "due");
        assert_eq!(t.get(TcpTimer::Rto), None, "fired timers stop");
        // A deadline moved past its event re-arms at the event.
        t.set(TcpTimer::DelayedAck, Some(SimTime(200)));
        sync(&mut t);
        t.set(TcpTimer::DelayedAck, Some(SimTime(260)));
        assert!(!t.fire(TcpTimer::DelayedAck, SimTime(200)));
        sync(&mut t);
        // Stopped: its event fires into nothing.
        t.set(TcpTimer::DelayedAck, None);
        assert!(!t.fire(TcpTimer::DelayedAck, SimTime(260)));
        sync(&mut t);
        assert_eq!(
            pushed,
            vec![
                (100, TcpTimer::Rto),
                (90, TcpTimer::Rto),
                (200, TcpTimer::DelayedAck),
                (260, TcpTimer::DelayedAck)
            ]
        );
    }
}
