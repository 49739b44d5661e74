//! Duplicate Scheduling with Deadlines (DSD), the router implementation of the Alternative
//! Best-Effort service (ABE).
//!
//! Source: draft-hurley-alternative-best-effort-01 (ABE), section 5 (DSD), 5.1 (green bias
//! and control loop), 7 (codepoints), Appendix A (late green drop) and B (early green drop).
//!
//! # Model
//!
//! Every best-effort packet is *green* (low, bounded delay) or *blue* (throughput). The port
//! keeps two real FIFO queues, blue (queue 0) and green (queue 1), and a *virtual* flat
//! best-effort FCFS queue of waiting room Buff served at the link rate c
//! ([`virtual_queue::VirtualQueue`]) that receives a duplicate of every arriving packet.
//!
//! Enqueueing (section 5, "Packet enqueueing Algorithm"), for a packet of size s arriving at t:
//! - the duplicate is offered to the virtual queue (optionally after RED on it, below);
//! - blue: if the duplicate was refused, the packet is dropped (`dsd_overflow`, or
//!   `dsd_red`); otherwise it joins the blue queue tagged with the deadline
//!   maxServiceTime = the instant its duplicate starts service in the virtual queue;
//! - green: if the duplicate was refused, dropped too (`dsd_overflow`, `dsd_red`: dsim's
//!   correction, below); tagged maxServiceTime = t + d and joined to the green queue. With
//!   early drop, it is first refused (`dsd_green_early`) if
//!   `len(green queue) + s + len(blue packets with deadline < t + d + pg_new) > c (d + pg_new)`
//!   (lengths in bytes, pg_new = s / c).
//!
//! Serving (section 5, "Packet Serving Algorithm", generalised by the green bias g of 5.1),
//! when the link is free at `now`:
//! - green packets whose maxServiceTime < now are dropped from the head of the green queue
//!   (`dsd_green_late` without early drop; `dsd_green_safety_net` with it, see below);
//! - one queue empty: serve the other;
//! - else, with pg, pb the transmission times of the heads and mstb, mstg their deadlines:
//!   the blue can wait if now + pg <= mstb, the green can wait if now + pb <= mstg;
//!   blue cannot wait: serve blue; green cannot wait: serve green; both can: serve green
//!   with probability g (drawn from the port's stream when 0 < g < 1), else blue.
//!   With g = 1 this is exactly "if now <= mstb - pg serve green else serve blue".
//!
//! # Parameters
//!
//! | name | unit | default | meaning |
//! |---|---|---|---|
//! | buffer | packets or bytes | (required) | Buff, the virtual queue's waiting room |
//! | overshoot | bool | false | a byte Buff admits a duplicate while it holds at most Buff (dummynet) |
//! | d | time | (required) | green's maximum queueing delay per hop |
//! | g | 1, [0, 1] | 1 | green bias (initial value when the control loop is on) |
//! | early_drop | bool | true | admission test of section 5 for green |
//! | drop_green_without_duplicate | bool | true | drop a green packet whose duplicate is refused |
//! | admission_residual | bool | false | the admission test also counts the residual on the wire |
//! | green_dscp | DSCP | 3 (000011) | the green codepoint (section 7); all others are blue |
//! | ecn | bool | false | RED on the virtual queue marks ECN-capable packets instead of dropping |
//! | red | table | none | RED on the virtual queue ([`crate::aqm::RedParams`]) |
//! | control | table | none | the control loop of section 5.1 ([`control`]) |
//!
//! The link rate c is the port's own.
//!
//! # Decisions where the document is silent or defective
//!
//! - **Green packets whose duplicate is refused.** Section 5 enqueues a green packet "as
//!   soon as [it arrives]. A duplicate of the same size is enqueued in the virtual queue if
//!   there is enough space", so a green packet may be served although its duplicate was not
//!   admitted. Such a packet is work the flat queue never had: the real link can then be busy
//!   with it while the virtual queue is idle, and a blue packet arriving then gets a deadline
//!   (its arrival time) the link cannot meet. Local transparency to blue, which section 2
//!   says DSD satisfies "exactly", then fails (found by the property tests: e.g. 10 Mbit/s,
//!   Buff = 1 packet, a 1460 B green served while the virtual queue is empty delays a blue
//!   by 0.8 ms). With every real packet backed by an admitted duplicate, the real backlog
//!   (work) never exceeds the virtual one, and every blue packet starts by its deadline: the
//!   packet on the wire when it arrives ends within the virtual backlog, which is exactly its
//!   deadline minus its arrival, and the serving rule does the rest. dsim therefore drops a
//!   green packet whose duplicate is refused (`drop_green_without_duplicate = true`, the
//!   default); `false` gives the text's behaviour. Either way green loses at least what flat
//!   best effort would have lost.
//!
//! - **Buffer and ties.** Buff counts the duplicates *waiting* in the virtual queue, not the
//!   one in service, like dsim's drop-tail FIFO, so that DSD is locally transparent to blue
//!   against exactly that FIFO; an arrival at the instant a service starts sees the
//!   duplicate still waiting (see [`virtual_queue`]). This reproduces Appendix A (B6) and
//!   Appendix B (G2 arrives as B1's service starts; "the blue queue contained packets B1,
//!   B2 and B3"). It is dsim's tie rule everywhere (docs/ties.md, "arrivals first"): the
//!   port, and `replay`, offer every packet arriving at the nanosecond a transmission ends
//!   to the discipline before `dequeue` picks the next one, so the real queues and the
//!   virtual one count the same packets at every instant, and all-blue DSD is exactly the
//!   flat FIFO (tests/abe.rs, `through_replay`).
//! - **Admission test boundary.** Section 5 counts blue packets with deadline "shorter or
//!   equal to t + d + pgnew"; Appendix B counts B1, B2, B3 (deadlines 0, 2, 3) but not B4
//!   (deadline 4 = t + d + pg) for G2, total 5. dsim follows the appendix: deadline *strictly*
//!   below t + d + pg_new. It is also what the serving rule implies: a blue whose deadline is
//!   t + d + pg can wait for a green served at t + d (now + pg <= mstb), so it never delays
//!   the new green; counting it would refuse green packets that would meet their deadline
//!   (with `<=`, G4 of Appendix A, served at its deadline 8, would be refused at t = 5).
//! - **Safety net.** The admission test ignores the residual transmission time of the packet
//!   on the wire and blue packets whose deadlines fall just after t + d + pg (mixed sizes),
//!   and assumes g = 1 (seeds/README.md). A green packet that passed it can therefore still
//!   miss its deadline; the head-of-line check of the late-drop algorithm stays on as a safety
//!   net, and its drops are counted apart (`dsd_green_safety_net`) so that one can see how
//!   often the test was not sufficient. Green never waits longer than d in either mode.
//!   `admission_residual = true` adds the residual r of the packet on the wire to the test
//!   (load + c r <= c (d + pg_new); DSD knows r since it handed that packet to the link).
//!   The property tests (tests.rs, `safety_net_campaign`) measure both: with the residual
//!   counted and g = 1, the safety net never fired over 7500 random sequences, equal or
//!   mixed sizes; with g < 1 it still does (the test assumes green goes first).
//! - **Colours.** The green codepoint selects green; every other codepoint is blue (ABE is
//!   the best-effort class; section 7 makes blue the default DSCP 0).
//! - **RED on the virtual queue** (section 5, last paragraph) decides on every duplicate,
//!   with the RED of `aqm/red.rs` (Floyd and Jacobson: the same average, idle-time
//!   correction and count-based probability as the `red` queue, [`crate::aqm::RedParams`]).
//!   The virtual queue stands for the flat queue: RED sees its waiting duplicates (packets
//!   or bytes, as the thresholds say) and its idle periods exactly as the `red` queue's FIFO
//!   would see its own: an idle period starts when the last waiting duplicate starts service
//!   ([`virtual_queue::VirtualQueue::empty_since`]), and m = idle time / the typical
//!   transmission time of `mean_pkt_size` at c. A duplicate RED refuses does not enter the
//!   virtual queue; its original is dropped (`dsd_red`), green included unless
//!   `drop_green_without_duplicate = false`.
//! - **ECN** (section 1: green packets "more likely to be marked"): with `ecn = true`, when
//!   RED gives the duplicate of an ECN-capable packet an *early* verdict, the duplicate is
//!   kept (as the flat ECN-RED `red` queue keeps a marked packet) and the original, blue or
//!   green, is marked CE. A *forced* verdict (avg >= max_th, 2 max_th when gentle) drops, as
//!   the `red` queue does. Overflow of the virtual queue and deadline drops stay drops: no
//!   mark can replace them.
//! - **Control-loop penalty.** With a control loop whose `max_penalty` > 0, arriving green
//!   packets may be dropped with the loop's penalty probability (`dsd_green_penalty`),
//!   after their duplicate has entered the virtual queue. See [`control`].
//!
//! # Statistics
//!
//! The port counts per queue (0 = blue, 1 = green) arrivals, departures, drops by cause and
//! ECN marks. [`DsdCounters`] adds what only DSD knows: how often the bias was drawn, how
//! often the safety net fired, the largest green wait.

pub mod control;
pub mod spec;
pub mod virtual_queue;

use std::collections::VecDeque;

use rand::RngExt;

use self::control::{BLUE, ControlLoop, ControlParams, GREEN};
use self::virtual_queue::{VirtualQueue, VirtualQueueParams};
use crate::aqm::{Congestion, Red, RedParams, RedVars};
use crate::discipline::{QueueCtx, Verdict};
use crate::packet::{Dscp, Ecn, PacketArena, PktId};
use crate::stats::DropCause;
use crate::time::{Duration, Limit, NS_PER_SEC, Rate, SimTime};

/// The default green codepoint: 000011 (3), the first codepoint of RFC 2474's pool 2
/// (xxxx11, experimental or local use), below 0x38 as section 7 asks. Pool 3's 000001 is
/// avoided: it has since become Lower Effort (RFC 8622).
pub const DEFAULT_GREEN_DSCP: Dscp = Dscp(0b000011);

/// Queue indexes in the port's statistics.
pub const BLUE_QUEUE: u8 = 0;
pub const GREEN_QUEUE: u8 = 1;

/// Is `dscp` acceptable as the ABE green codepoint (section 7)? In RFC 2474's pool 2
/// (xxxx11) or pool 3 (xxxx01), and below 0x38.
pub fn is_valid_green_dscp(dscp: Dscp) -> bool {
    matches!(dscp.0 & 0b11, 0b11 | 0b01) && dscp.0 < 0x38
}

/// Configured parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct DsdParams {
    /// Buff, packets or bytes.
    pub buffer: Limit,
    /// A byte Buff admits a duplicate whenever it holds at most Buff (dummynet's rule, the
    /// `overshoot` of [`crate::aqm::DropTailQueue`]).
    pub overshoot: bool,
    /// Green's maximum queueing delay.
    pub d: Duration,
    /// Initial green bias, [0, 1].
    pub g: f64,
    pub early_drop: bool,
    /// Drop a green packet whose duplicate the virtual queue refused (dsim's correction).
    pub drop_green_without_duplicate: bool,
    /// The admission test also counts the residual transmission time of the packet on the
    /// wire (dsim's option; false: the test as section 5 states it).
    pub admission_residual: bool,
    pub green_dscp: Dscp,
    pub ecn: bool,
    pub red: Option<RedParams>,
    pub control: Option<ControlParams>,
}

impl DsdParams {
    /// Section 5: early drop on, g = 1, green packets without duplicate dropped, default green codepoint, no RED, no ECN,
    /// no control loop.
    pub fn new(buffer: Limit, d: Duration) -> Self {
        DsdParams {
            buffer,
            overshoot: false,
            d,
            g: 1.0,
            early_drop: true,
            drop_green_without_duplicate: true,
            admission_residual: false,
            green_dscp: DEFAULT_GREEN_DSCP,
            ecn: false,
            red: None,
            control: None,
        }
    }
}

/// What only DSD can count (the port counts arrivals, departures and drops by cause).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DsdCounters {
    pub served_blue: u64,
    pub served_green: u64,
    /// Both heads could wait: green chosen / blue chosen.
    pub bias_green: u64,
    pub bias_blue: u64,
    /// Green packets that passed the admission test and were still late at the head.
    pub safety_net: u64,
    pub marked_blue: u64,
    pub marked_green: u64,
    /// Longest queueing delay of a served green packet.
    pub max_green_wait: Duration,
}

#[derive(Debug, Clone, Copy)]
struct BlueEntry {
    id: PktId,
    deadline: SimTime,
    size: u32,
    /// Blue bytes ever enqueued, this packet included: prefix sums for the admission test.
    cum_bytes: u64,
}

#[derive(Debug, Clone, Copy)]
struct GreenEntry {
    id: PktId,
    deadline: SimTime,
    size: u32,
}

/// DSD's evolving variables (the components keep their own: virtual queue, RED, loop).
#[derive(Debug, Clone)]
pub struct DsdState {
    /// The green bias in force (the control loop moves it).
    pub g: f64,
    blue: VecDeque<BlueEntry>,
    green: VecDeque<GreenEntry>,
    blue_bytes: u64,
    green_bytes: u64,
    /// Blue bytes ever enqueued and dequeued (blue packets only leave from the head, when
    /// served): the prefix sums of the admission test.
    blue_in_bytes: u64,
    blue_out_bytes: u64,
    /// When the last packet this discipline handed to the link finishes transmission.
    wire_end: SimTime,
}

#[derive(Debug, Clone)]
pub struct Dsd {
    pub params: DsdParams,
    /// c, the port's rate.
    pub rate: Rate,
    pub virtual_queue: VirtualQueue,
    /// RED on the virtual queue: the shared RED's parameters and variables.
    pub red: Option<Red>,
    pub control: Option<ControlLoop>,
    pub state: DsdState,
    pub counters: DsdCounters,
}

impl Dsd {
    pub fn new(params: DsdParams, rate: Rate) -> Self {
        let virtual_queue = VirtualQueue::new(VirtualQueueParams {
            buffer: params.buffer,
            overshoot: params.overshoot,
            rate,
        });
        Dsd {
            red: params.red.clone().map(|params| Red {
                params,
                vars: RedVars::default(),
            }),
            control: params.control.map(|c| ControlLoop::new(c, params.g)),
            state: DsdState {
                g: params.g,
                blue: VecDeque::with_capacity(64),
                green: VecDeque::with_capacity(64),
                blue_bytes: 0,
                green_bytes: 0,
                blue_in_bytes: 0,
                blue_out_bytes: 0,
                wire_end: SimTime::ZERO,
            },
            params,
            rate,
            virtual_queue,
            counters: DsdCounters::default(),
        }
    }

    /// The green bias in force.
    pub fn g(&self) -> f64 {
        self.state.g
    }

    /// The control loop's green penalty in force (0 without a loop).
    pub fn penalty(&self) -> f64 {
        self.control.as_ref().map_or(0.0, |c| c.penalty())
    }

    /// The control loop's samples, one per period boundary (empty without a loop).
    pub fn control_history(&self) -> &[control::ControlSample] {
        self.control.as_ref().map_or(&[], |c| &c.history)
    }

    /// Time averages of g and of the green penalty over [a, b]: both are piecewise
    /// constant, the initial g from time 0, then each sample's value from its boundary.
    /// NaN for an empty interval.
    pub fn mean_g_penalty(&self, a: SimTime, b: SimTime) -> (f64, f64) {
        if b <= a {
            return (f64::NAN, f64::NAN);
        }
        let (mut g_area, mut p_area) = (0.0, 0.0);
        let (mut t, mut g, mut p) = (SimTime::ZERO, self.params.g, 0.0);
        let mut add = |from: SimTime, to: SimTime, g: f64, p: f64| {
            let (lo, hi) = (from.max(a), to.min(b));
            if hi > lo {
                let w = (hi - lo).as_secs_f64();
                g_area += g * w;
                p_area += p * w;
            }
        };
        for s in self.control_history() {
            add(t, s.t, g, p);
            (t, g, p) = (s.t, s.g(), s.penalty());
        }
        add(t, b.max(t), g, p);
        let len = (b - a).as_secs_f64();
        (g_area / len, p_area / len)
    }

    /// Green (queue 1) if the packet carries the green codepoint, blue (queue 0) otherwise.
    #[inline]
    pub fn classify(&self, pkts: &mut PacketArena, id: PktId) {
        let p = &mut pkts[id];
        p.queue = if p.dscp == self.params.green_dscp {
            GREEN_QUEUE
        } else {
            BLUE_QUEUE
        };
        p.precedence = 0;
    }

    pub fn len_packets(&self) -> usize {
        self.state.blue.len() + self.state.green.len()
    }

    pub fn len_bytes(&self) -> u64 {
        self.state.blue_bytes + self.state.green_bytes
    }

    /// Blue packets queued and their deadlines, head first (for tests and traces).
    pub fn blue_deadlines(&self) -> impl Iterator<Item = (PktId, SimTime)> + '_ {
        self.state.blue.iter().map(|e| (e.id, e.deadline))
    }

    /// Green packets queued and their deadlines, head first.
    pub fn green_deadlines(&self) -> impl Iterator<Item = (PktId, SimTime)> + '_ {
        self.state.green.iter().map(|e| (e.id, e.deadline))
    }

    /// Lets the control loop close the periods that ended by `now` and applies its output.
    #[inline]
    fn run_control(&mut self, now: SimTime) {
        if let Some(c) = &mut self.control {
            if c.tick(now) {
                self.state.g = c.g();
            }
        }
    }

    #[inline]
    fn note_loss(&mut self, colour: usize) {
        if let Some(c) = &mut self.control {
            c.on_loss(colour);
        }
    }

    /// Section 5, "Packet enqueueing Algorithm" (with or without early green drop).
    pub fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx) -> Verdict {
        let now = ctx.now;
        self.run_control(now);
        let pkt = &ctx.pkts[id];
        let (size, green, ect) = (pkt.size, pkt.queue == GREEN_QUEUE, pkt.ecn != Ecn::NotEct);
        let colour = if green { GREEN } else { BLUE };
        if let Some(c) = &mut self.control {
            c.on_arrival(colour);
        }

        // "add to virtual flat best-effort queue" -- after RED on it, if configured
        // (section 5, last paragraph: RED "applied to the virtual queue").
        let mut congestion = Congestion::None;
        if let Some(red) = &mut self.red {
            let vq = &mut self.virtual_queue;
            let q = if red.params.bytes {
                vq.len_bytes(now) as f64
            } else {
                vq.len_packets(now) as f64
            };
            // The virtual queue's idle period in the `red` queue's terms; a later start
            // kept in `idle_since` is an arrival RED already decayed to (it was refused).
            red.vars.idle_since = vq
                .empty_since(now)
                .map(|t| red.vars.idle_since.map_or(t, |seen| seen.max(t)));
            red.params.update_average(&mut red.vars, q, now);
            let rng = &mut *ctx.rng;
            congestion = red.params.decide(&mut red.vars, size, || rng.random::<f64>());
        }
        // An early verdict marks an ECN-capable packet; a forced one drops (as `red` does).
        let mark = congestion == Congestion::Early && self.params.ecn && ect;
        let red_refuses = congestion != Congestion::None && !mark;
        let duplicate = if red_refuses {
            None
        } else {
            self.virtual_queue.offer(now, size)
        };

        let refused = if red_refuses {
            DropCause::DsdRed
        } else {
            DropCause::DsdOverflow
        };
        if !green {
            // "if dropped in virtual flat queue: drop"
            let Some(start) = duplicate else {
                self.note_loss(BLUE);
                return Verdict::Drop(refused);
            };
            if mark {
                ctx.pkts[id].ecn = Ecn::Ce;
                self.counters.marked_blue += 1;
                self.note_loss(BLUE);
            }
            // "vd = queueing delay received in virtual queue; maxServiceTime = now + vd"
            self.state.blue_in_bytes += size as u64;
            self.state.blue.push_back(BlueEntry {
                id,
                deadline: start,
                size,
                cum_bytes: self.state.blue_in_bytes,
            });
            self.state.blue_bytes += size as u64;
            return Verdict::Admit;
        }

        // Green: "maxServiceTime = now + d".
        let deadline = now + self.params.d;
        if duplicate.is_none() && self.params.drop_green_without_duplicate {
            // dsim's correction: see "Green packets whose duplicate is refused" above.
            self.note_loss(GREEN);
            return Verdict::Drop(refused);
        }
        if let Some(c) = &self.control {
            let penalty = c.penalty();
            if penalty > 0.0 && ctx.rng.random::<f64>() < penalty {
                self.note_loss(GREEN);
                return Verdict::Drop(DropCause::DsdGreenPenalty);
            }
        }
        if self.params.early_drop && !self.admission_test(now, size) {
            self.note_loss(GREEN);
            return Verdict::Drop(DropCause::DsdGreenEarly);
        }
        if mark && duplicate.is_some() {
            ctx.pkts[id].ecn = Ecn::Ce;
            self.counters.marked_green += 1;
            self.note_loss(GREEN);
        }
        self.state.green.push_back(GreenEntry { id, deadline, size });
        self.state.green_bytes += size as u64;
        Verdict::Admit
    }

    /// The left side of the admission test of section 5, in bytes, for a green packet of
    /// `size` bytes arriving at `now`: "the sum of the length of the green queue at time t
    /// (including this packet), and of the length of the first part of the blue queue that
    /// contains packets tagged with a deadline shorter [than] t + d + pgnew". Strict `<` on
    /// the deadlines: see the module documentation (Appendix B).
    pub fn admission_load(&self, now: SimTime, size: u32) -> u64 {
        let pg_new = self.rate.tx_time(size as u64);
        let bound = now + self.params.d + pg_new;
        let n = self.state.blue.partition_point(|e| e.deadline < bound);
        let blue_prefix = if n == 0 {
            0
        } else {
            self.state.blue[n - 1].cum_bytes - self.state.blue_out_bytes
        };
        self.state.green_bytes + size as u64 + blue_prefix
    }

    /// Section 5, early green drop: the packet "is discarded if [its admission load] is more
    /// than c * (d + pgnew). It is accepted otherwise."
    /// With `admission_residual`, the residual transmission time r of the packet on the wire
    /// is added: load + c r <= c (d + pgnew).
    fn admission_test(&self, now: SimTime, size: u32) -> bool {
        let load_bits = 8 * self.admission_load(now, size) as u128;
        let residual_ns = if self.params.admission_residual {
            self.state.wire_end.0.saturating_sub(now.0) as u128
        } else {
            0
        };
        // c (d + pgnew) in bits: c d + 8 s exactly (c pgnew is the packet's own bits).
        let capacity_bits_ns = self.rate.0 as u128 * self.params.d.0 as u128 + 8 * size as u128 * NS_PER_SEC as u128;
        load_bits * NS_PER_SEC as u128 + self.rate.0 as u128 * residual_ns <= capacity_bits_ns
    }

    /// Section 5, "Packet Serving Algorithm", with the green bias of section 5.1.
    pub fn dequeue(&mut self, ctx: &mut QueueCtx) -> Option<PktId> {
        let now = ctx.now;
        self.run_control(now);
        // "remove all green packets whose maxServiceTime cannot be met"
        while let Some(head) = self.state.green.front() {
            if head.deadline >= now {
                break;
            }
            let head = self.state.green.pop_front().expect("peeked");
            self.state.green_bytes -= head.size as u64;
            let cause = if self.params.early_drop {
                self.counters.safety_net += 1;
                DropCause::DsdGreenSafetyNet
            } else {
                DropCause::DsdGreenLate
            };
            self.note_loss(GREEN);
            ctx.dropped.push((head.id, cause));
        }
        let serve_green = match (self.state.blue.front(), self.state.green.front()) {
            (None, None) => return None,
            // "if no green packet to serve: serve blue packet if any"
            (Some(_), None) => false,
            // "else if no blue packet to serve: serve green packet"
            (None, Some(_)) => true,
            (Some(b), Some(gr)) => {
                let pg = self.rate.tx_time(gr.size as u64);
                let pb = self.rate.tx_time(b.size as u64);
                // "if now <= mstb - pg serve green packet else serve blue packet"
                let blue_can_wait = now + pg <= b.deadline;
                let green_can_wait = now + pb <= gr.deadline;
                if !blue_can_wait {
                    false
                } else if !green_can_wait {
                    true
                } else {
                    // Section 5.1: "when both the blue and green packets can wait, g is the
                    // probability that we serve the green packet first".
                    let g = self.state.g;
                    let green_first = if g >= 1.0 {
                        true
                    } else if g <= 0.0 {
                        false
                    } else {
                        ctx.rng.random::<f64>() < g
                    };
                    if green_first {
                        self.counters.bias_green += 1;
                    } else {
                        self.counters.bias_blue += 1;
                    }
                    green_first
                }
            }
        };
        let (id, colour) = if serve_green {
            let e = self.state.green.pop_front().expect("green head");
            self.state.green_bytes -= e.size as u64;
            self.counters.served_green += 1;
            (e.id, GREEN)
        } else {
            let e = self.state.blue.pop_front().expect("blue head");
            self.state.blue_bytes -= e.size as u64;
            self.state.blue_out_bytes += e.size as u64;
            self.counters.served_blue += 1;
            (e.id, BLUE)
        };
        let pkt = &ctx.pkts[id];
        self.state.wire_end = now + self.rate.tx_time(pkt.size as u64);
        let wait = now - pkt.enqueued_at;
        if colour == GREEN {
            self.counters.max_green_wait = self.counters.max_green_wait.max(wait);
        }
        if let Some(c) = &mut self.control {
            c.on_served(colour, wait);
        }
        Some(id)
    }
}

#[cfg(test)]
mod tests;
