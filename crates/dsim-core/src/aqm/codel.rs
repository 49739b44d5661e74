//! CoDel: Controlled Delay, RFC 8289.
//!
//! CoDel judges a packet by its sojourn time, measured when it leaves the queue (section
//! 3.1): the packet carries the instant it was queued (`Packet::enqueued_at`, set at
//! enqueue; no allocation). While the sojourn time has stayed at or above `target` for
//! `interval` (and more than one MTU is queued), CoDel enters the dropping state: it drops
//! the head, then drops again at intervals shrinking as interval / sqrt(count) (the
//! control law, section 3.3) until a packet leaves below target. The dequeue routine is
//! the pseudo-code of section 5 (5.3 `dodequeue`, 5.5 `dequeue`), re-entry rule included:
//! re-entering the dropping state within 16 intervals of the last drop starts count at the
//! number of drops of the last cycle (count - lastcount) rather than 1.
//!
//! dsim's choices, where the RFC leaves room (and what Linux `codel_impl.h` and ns-3's
//! `CoDelQueueDisc` do):
//! - interval / sqrt(count) is computed in floating point and rounded down to the
//!   nanosecond. Linux and ns-3 keep 1/sqrt(count) in 32-bit fixed point, updated by one
//!   Newton step per change of count, an approximation within 0.1 % once count > 2; the
//!   RFC's pseudo-code takes the square root.
//! - ECN (`ecn = true`, section 5.1 of RFC 8290 and Linux): a drop of an ECN-capable
//!   packet becomes a CE mark, and the marked packet is the one sent (count and the next
//!   drop time advance as for a drop). As in Linux, marking ends the dequeue: the packets
//!   behind it are judged at the next one.
//! - Drops happen at dequeue only, from the head: they are counted `early`, whatever the
//!   queue's physical limit (`limit`, a tail drop counted `overflow`) does.
//! - A scheduler that must know the size of a class's next packet before taking it (DRR)
//!   asks CoDel to judge the head ahead of time ([`Codel::peek`]); the packet kept is the
//!   one the next dequeue returns, judged then (Linux `qdisc_peek_dequeued`).

use serde::{Deserialize, Serialize};

use super::{AqmQueue, DropTailQueue};
use crate::discipline::QueueCtx;
use crate::packet::{Ecn, PktId};
use crate::params::{ConfigError, KeyPath, Params};
use crate::stats::DropCause;
use crate::time::{Bytes, Duration, Limit, SimTime};

fn default_codel_limit() -> Limit {
    Limit::Packets(1000)
}
pub fn default_target() -> Duration {
    Duration::from_millis(5)
}
pub fn default_interval() -> Duration {
    Duration::from_millis(100)
}
pub fn default_mtu() -> Bytes {
    Bytes(1500)
}

/// Declares the CoDel keys (target, interval, mtu) after a table's own fields, then the
/// keys of every delay-based AQM ([`crate::delay_aqm_table!`]), with a `codel()` accessor:
/// written once for `type = "codel"` and FQ-CoDel's per-flow CoDel.
#[macro_export]
macro_rules! codel_table {
    ($(#[$attr:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $crate::delay_aqm_table! {
        $(#[$attr])*
        pub struct $name {
            $($fields)*
            /// Acceptable standing queue delay: the sojourn time CoDel keeps the queue at
            /// or below (5 ms: 5-10 % of a typical interval).
            #[serde(default = "crate::aqm::codel::default_target")]
            #[param(range = "(0, inf)", section = "4.4")]
            pub target: $crate::time::Duration,
            /// Time the sojourn time must stay above target before a drop, and the base
            /// of the control law interval / sqrt(count) (100 ms: a worst-case RTT).
            #[serde(default = "crate::aqm::codel::default_interval")]
            #[param(range = "(0, inf)", section = "4.3")]
            pub interval: $crate::time::Duration,
            /// Maximum packet size: no drop while the queue holds at most this many bytes
            /// after the head left (RFC 8289 5.3, `maxpacket`; Linux: the device MTU).
            #[serde(default = "crate::aqm::codel::default_mtu")]
            #[param(range = "[0B, inf)", section = "5.3")]
            pub mtu: $crate::time::Bytes,
        }
        }
        impl $name {
            /// The CoDel parameters of this table.
            pub fn codel(&self) -> $crate::aqm::codel::CodelParams {
                $crate::aqm::codel::CodelParams {
                    target: self.target,
                    interval: self.interval,
                    mtu: self.mtu.0,
                }
            }
        }
    };
}

codel_table! {
    /// `type = "codel"`: one FIFO queue with CoDel (RFC 8289).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
    #[serde(deny_unknown_fields)]
    #[param(document = "RFC 8289")]
    pub struct CodelSpec {
        /// Physical limit: packets ("1000p", Linux's default) or bytes; a packet that does
        /// not fit is an overflow drop.
        #[serde(default = "default_codel_limit")]
        #[param(range = "(0, inf)")]
        pub limit: Limit,
    }
}

impl CodelSpec {
    /// The FIFO with CoDel this table declares.
    pub fn queue(&self, path: &KeyPath) -> Result<AqmQueue, ConfigError> {
        self.check(path)?;
        let codel = Codel::new(self.codel());
        Ok(self.with_keys(DropTailQueue::new(self.limit), super::Aqm::Codel(codel)))
    }
}

/// CoDel's configured parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    pub target: Duration,
    pub interval: Duration,
    /// `maxpacket` in bytes.
    pub mtu: u64,
}

/// CoDel's state (RFC 8289 section 5.2), and what it reports.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CodelVars {
    /// When the sojourn time will have been above target for an interval (None: it is
    /// below target).
    pub first_above_time: Option<SimTime>,
    /// Time of the next drop in the dropping state.
    pub drop_next: SimTime,
    /// Drops since the dropping state was entered (plus the re-entry carry-over).
    pub count: u32,
    /// count when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// The head was judged by a peek and waits at the front of the FIFO.
    pub judged: bool,
    /// Sojourn time of the last packet that left (None before the first).
    pub sojourn: Option<Duration>,
    /// Times the dropping state was entered.
    pub entries: u64,
    /// Packets marked CE instead of dropped. (Marks made at dequeue: the port counts in
    /// `marks_pkts` only those made at enqueue.)
    pub marks: u64,
}

/// CoDel on one FIFO: parameters and state.
#[derive(Clone, Debug, PartialEq)]
pub struct Codel {
    pub params: CodelParams,
    pub vars: CodelVars,
}

/// The head `dodequeue` took and whether CoDel may drop it (RFC 8289 5.3).
struct Head {
    id: Option<PktId>,
    ok_to_drop: bool,
}

impl Codel {
    pub fn new(params: CodelParams) -> Self {
        Codel {
            params,
            vars: CodelVars::default(),
        }
    }

    /// The control law (section 3.3): the next drop, interval / sqrt(count) after `t`.
    pub fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        let step = self.params.interval.0 as f64 / f64::from(count.max(1)).sqrt();
        t + Duration(step as u64)
    }

    /// Section 5.3 `dodequeue`: takes the head and tracks how long the sojourn time has
    /// been above target.
    fn dodequeue(&mut self, fifo: &mut DropTailQueue, ctx: &QueueCtx) -> Head {
        let pkts = &*ctx.pkts;
        let Some(id) = fifo.pop(|id| pkts[id].size) else {
            // "queue is empty - we can't be above TARGET"
            self.vars.first_above_time = None;
            return Head {
                id: None,
                ok_to_drop: false,
            };
        };
        let now = ctx.now;
        let sojourn = now - pkts[id].enqueued_at;
        self.vars.sojourn = Some(sojourn);
        let mut ok_to_drop = false;
        // "To span a large range of bandwidths, CoDel runs two different AQMs in parallel":
        // below target, or at most one MTU left, is a good queue.
        if sojourn < self.params.target || fifo.len_bytes() <= self.params.mtu {
            self.vars.first_above_time = None;
        } else {
            match self.vars.first_above_time {
                // "just went above from below": the clock starts now.
                None => self.vars.first_above_time = Some(now + self.params.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        Head {
            id: Some(id),
            ok_to_drop,
        }
    }

    /// Drops the head (or marks it CE if `ecn` and it is ECN-capable); true if marked
    /// (it is then the packet to send).
    fn drop_or_mark(&mut self, id: PktId, ecn: bool, ctx: &mut QueueCtx) -> bool {
        let p = &mut ctx.pkts[id];
        if ecn && p.ecn != Ecn::NotEct {
            p.ecn = Ecn::Ce;
            self.vars.marks += 1;
            return true;
        }
        ctx.dropped.push((id, DropCause::Early));
        false
    }

    /// Section 5.5 `dequeue`: the next packet to send from `fifo`, dropping (or marking)
    /// heads as the dropping state requires.
    pub fn dequeue(&mut self, fifo: &mut DropTailQueue, ecn: bool, ctx: &mut QueueCtx) -> Option<PktId> {
        if std::mem::take(&mut self.vars.judged) {
            let pkts = &*ctx.pkts;
            return fifo.pop(|id| pkts[id].size);
        }
        let now = ctx.now;
        let mut r = self.dodequeue(fifo, ctx);
        let interval = self.params.interval.0 as i128;
        if self.vars.dropping {
            if !r.ok_to_drop {
                // "sojourn time below TARGET - leave drop state"
                self.vars.dropping = false;
            }
            // "A large backlog might result in drop rates so high that the next drop
            // should happen now, hence the 'while' loop."
            while now >= self.vars.drop_next && self.vars.dropping {
                let id = r.id.expect("ok_to_drop holds a packet");
                self.vars.count = self.vars.count.wrapping_add(1);
                if self.drop_or_mark(id, ecn, ctx) {
                    self.vars.drop_next = self.control_law(self.vars.drop_next, self.vars.count);
                    return Some(id);
                }
                r = self.dodequeue(fifo, ctx);
                if r.ok_to_drop {
                    self.vars.drop_next = self.control_law(self.vars.drop_next, self.vars.count);
                } else {
                    self.vars.dropping = false;
                }
            }
        } else if r.ok_to_drop {
            // "the sojourn time has been above TARGET for INTERVAL, so enter drop state"
            let id = r.id.expect("ok_to_drop holds a packet");
            if !self.drop_or_mark(id, ecn, ctx) {
                r = self.dodequeue(fifo, ctx);
            }
            self.vars.dropping = true;
            self.vars.entries += 1;
            // Re-entry: "If min went above TARGET close to when it last went below,
            // assume that the drop rate that controlled the queue on the last cycle is a
            // good starting point" (unsigned delta, signed time difference, as the RFC).
            let delta = self.vars.count.wrapping_sub(self.vars.lastcount);
            let since_next = now.0 as i128 - self.vars.drop_next.0 as i128;
            self.vars.count = if delta > 1 && since_next < 16 * interval {
                delta
            } else {
                1
            };
            self.vars.drop_next = self.control_law(now, self.vars.count);
            self.vars.lastcount = self.vars.count;
        }
        r.id
    }

    /// Judges the head ahead of its dequeue (see the module documentation) and leaves it
    /// at the front of `fifo`: its size, None if CoDel dropped every packet.
    pub fn peek(&mut self, fifo: &mut DropTailQueue, ecn: bool, ctx: &mut QueueCtx) -> Option<u32> {
        if self.vars.judged {
            return fifo.head().map(|id| ctx.pkts[id].size);
        }
        let id = self.dequeue(fifo, ecn, ctx)?;
        let size = ctx.pkts[id].size;
        fifo.push_front(id, size);
        self.vars.judged = true;
        Some(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use crate::packet::{Packet, PacketArena};

    fn ms(t: u64) -> SimTime {
        SimTime(t * 1_000_000)
    }

    /// The default CoDel (5 ms, 100 ms, MTU 1500 B).
    fn codel() -> Codel {
        Codel::new(CodelParams {
            target: default_target(),
            interval: default_interval(),
            mtu: 1500,
        })
    }

    struct Bench {
        pkts: PacketArena,
        fifo: DropTailQueue,
        codel: Codel,
        dropped: Vec<(PktId, DropCause)>,
    }

    impl Bench {
        fn new() -> Self {
            Bench {
                pkts: PacketArena::with_capacity(64),
                fifo: DropTailQueue::new(Limit::Packets(100_000)),
                codel: codel(),
                dropped: Vec::new(),
            }
        }

        fn push(&mut self, at: SimTime, ecn: Ecn) -> PktId {
            let id = self.pkts.alloc(Packet {
                size: 1000,
                enqueued_at: at,
                ecn,
                ..Default::default()
            });
            self.fifo.push(id, 1000);
            id
        }

        /// Dequeues at `now`: the packet sent and how many were dropped.
        fn take(&mut self, now: SimTime, ecn: bool) -> (Option<PktId>, usize) {
            let mut rng = stream(1, "codel");
            let before = self.dropped.len();
            let mut ctx = QueueCtx {
                now,
                pkts: &mut self.pkts,
                rng: &mut rng,
                dropped: &mut self.dropped,
            };
            let got = self.codel.dequeue(&mut self.fifo, ecn, &mut ctx);
            (got, self.dropped.len() - before)
        }
    }

    /// A standing queue: every 1 ms one packet arrives (stamped 20 ms before it leaves) and
    /// one leaves; the instants of the drops, in ms.
    fn standing_queue_drops(until_ms: u64) -> Vec<f64> {
        let mut b = Bench::new();
        for k in 0..30 {
            b.push(ms(k), Ecn::NotEct);
        }
        let mut drops = Vec::new();
        for t_us in (30_000..until_ms * 1000).step_by(1000) {
            let now = SimTime(t_us * 1000);
            // Keep the sojourn time at 30 ms: the packet arriving now is stamped now.
            b.push(now, Ecn::NotEct);
            let (_, n) = b.take(now, false);
            drops.extend(std::iter::repeat_n(t_us as f64 / 1000.0, n));
        }
        drops
    }

    #[test]
    fn standing_queue_drop_times_follow_the_control_law() {
        // Sojourn time 30 ms > target from the first dequeue at 30 ms: first_above_time =
        // 30 + 100 = 130 ms; the dequeue at 130 ms enters the dropping state with one
        // drop, count = 1, drop_next = 130 + 100/sqrt(1) = 230. Then drops at the first
        // dequeue (every 1 ms) at or after drop_next, each setting drop_next +=
        // 100/sqrt(count) from the previous drop_next (not from the dequeue instant):
        //   230 (count 2, next 230 + 70.7107 = 300.7107), 301 (count 3, next + 57.7350 =
        //   358.4457), 359 (count 4, next + 50 = 408.4457), 409 (count 5, next + 44.7214
        //   = 453.1671), 454 (count 6, + 40.8248 = 493.9919), 494 (count 7, + 37.7964 =
        //   531.7883), 532.
        let want = [130.0, 230.0, 301.0, 359.0, 409.0, 454.0, 494.0, 532.0];
        assert_eq!(standing_queue_drops(533), want);
    }

    #[test]
    fn no_drop_below_target_or_with_one_mtu_left() {
        // Sojourn 4 ms (below the 5 ms target): never a drop, however long.
        let mut b = Bench::new();
        for k in 0..2000u64 {
            b.push(SimTime(k * 1_000_000), Ecn::NotEct);
            assert_eq!(b.take(SimTime(k * 1_000_000 + 4_000_000), false).1, 0);
        }
        assert_eq!(b.codel.vars.first_above_time, None);
        // Sojourn 50 ms but only one 1000 B packet left behind the head (<= 1500 B MTU).
        let mut b = Bench::new();
        for k in 0..2000u64 {
            let now = SimTime(k * 1_000_000 + 50_000_000);
            b.push(SimTime(k * 1_000_000), Ecn::NotEct);
            b.push(SimTime(k * 1_000_000), Ecn::NotEct);
            assert_eq!(b.take(now, false).1, 0);
            assert_eq!(b.take(now, false).1, 0);
        }
    }

    #[test]
    fn leaving_and_reentering_the_dropping_state() {
        // In the dropping state with count 5, lastcount 1, drop_next 1000 ms: a packet
        // below target leaves it. Re-entering at 1050 ms (within 16 intervals of
        // drop_next): count = 5 - 1 = 4, drop_next = 1050 + 100/sqrt(4) = 1100 ms.
        let mut b = Bench::new();
        b.codel.vars = CodelVars {
            dropping: true,
            count: 5,
            lastcount: 1,
            drop_next: ms(1000),
            ..Default::default()
        };
        b.push(ms(999), Ecn::NotEct);
        b.push(ms(999), Ecn::NotEct);
        assert_eq!(b.take(ms(1000), false).1, 0);
        assert!(!b.codel.vars.dropping);
        // Above target for an interval again: first_above_time set at 950 ms, ok at 1050.
        b.codel.vars.first_above_time = Some(ms(1050));
        for _ in 0..4 {
            b.push(ms(900), Ecn::NotEct);
        }
        assert_eq!(b.take(ms(1050), false).1, 1);
        let v = &b.codel.vars;
        assert!(v.dropping);
        assert_eq!((v.count, v.lastcount, v.drop_next, v.entries), (4, 4, ms(1100), 1));
        // Long after (16 intervals or more past drop_next), re-entry starts at count 1.
        b.codel.vars.dropping = false;
        b.codel.vars.first_above_time = Some(ms(2700));
        b.codel.vars.count = 9;
        for _ in 0..4 {
            b.push(ms(2600), Ecn::NotEct);
        }
        assert_eq!(b.take(ms(2700), false).1, 1);
        let v = &b.codel.vars;
        assert_eq!((v.count, v.lastcount, v.drop_next), (1, 1, ms(2800)));
    }

    #[test]
    fn ecn_marks_the_head_instead_of_dropping_it() {
        // The standing queue of ECT(0) packets with ecn: at 130 ms the head is marked and
        // sent, nothing dropped; the control law runs as for drops.
        let mut b = Bench::new();
        for k in 0..30 {
            b.push(ms(k), Ecn::Ect0);
        }
        let mut marks = Vec::new();
        for t in 30..302 {
            b.push(ms(t), Ecn::Ect0);
            let (got, n) = b.take(ms(t), true);
            assert_eq!(n, 0);
            if b.pkts[got.unwrap()].ecn == Ecn::Ce {
                marks.push(t);
            }
        }
        assert_eq!(marks, vec![130, 230, 301]);
        assert_eq!((b.codel.vars.count, b.codel.vars.marks), (3, 3));
    }

    #[test]
    fn an_empty_queue_resets_the_clock() {
        let mut b = Bench::new();
        b.codel.vars.first_above_time = Some(ms(10));
        assert_eq!(b.take(ms(5), false), (None, 0));
        assert_eq!(b.codel.vars.first_above_time, None);
    }
}
