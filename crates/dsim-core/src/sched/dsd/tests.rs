//! DSD tests: the worked examples of Appendices A and B and section 5.1 packet by packet,
//! and property tests over random arrival sequences against dsim's drop-tail FIFO.
//!
//! Every test drives the discipline directly through the queue-discipline contract
//! ([`Qdisc`]) on a simulated link: no network. Ties follow the order of the virtual queue
//! (module `virtual_queue`): the arrivals of an instant are enqueued before the transmission
//! ending at that instant frees the link.

use std::collections::HashMap;

use super::*;
use crate::aqm::AqmQueue;
use crate::engine::rng::{Rng, stream};
use crate::packet::Packet;
use crate::sched::{Fifo, Qdisc};

const MS: u64 = 1_000_000;
/// "Packet time": 125 B at 1 Mbit/s take 1 ms on the wire.
const PKT: u32 = 125;
const C: Rate = Rate(1_000_000);
const BLUE_DSCP: Dscp = Dscp::BE;
const GREEN_DSCP: Dscp = DEFAULT_GREEN_DSCP;

/// What happened to one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Queued,
    Served(SimTime),
    Dropped(SimTime, DropCause),
}

/// A link of rate `rate` fed by a queue discipline; arrivals must come in time order.
struct Link {
    qdisc: Qdisc,
    rate: Rate,
    pkts: PacketArena,
    rng: Rng,
    dropped: Vec<(PktId, DropCause)>,
    /// The packet on the wire and when its last bit leaves.
    wire: Option<(PktId, SimTime)>,
    /// Arrival order index of each packet (arena slots are never reused here).
    fate: Vec<Fate>,
    arrival: Vec<SimTime>,
    /// Service order, as arrival indexes.
    order: Vec<usize>,
    /// Set when dequeue returned nothing while packets were queued.
    idled_with_backlog: bool,
}

impl Link {
    fn new(qdisc: Qdisc, rate: Rate, seed: u64) -> Self {
        Link {
            qdisc,
            rate,
            pkts: PacketArena::default(),
            rng: stream(seed, "queue:test"),
            dropped: Vec::new(),
            wire: None,
            fate: Vec::new(),
            arrival: Vec::new(),
            order: Vec::new(),
            idled_with_backlog: false,
        }
    }

    fn dsd(params: DsdParams, seed: u64) -> Self {
        Link::new(Qdisc::Dsd(Box::new(Dsd::new(params, C))), C, seed)
    }

    fn dsd_state(&self) -> &Dsd {
        match &self.qdisc {
            Qdisc::Dsd(d) => d,
            _ => panic!("not a DSD link"),
        }
    }

    fn ctx_run<T>(&mut self, now: SimTime, f: impl FnOnce(&mut Qdisc, &mut QueueCtx) -> T) -> T {
        let mut ctx = QueueCtx {
            now,
            pkts: &mut self.pkts,
            rng: &mut self.rng,
            dropped: &mut self.dropped,
        };
        let out = f(&mut self.qdisc, &mut ctx);
        for (id, cause) in self.dropped.drain(..) {
            self.fate[id.0 as usize] = Fate::Dropped(now, cause);
        }
        out
    }

    /// The link is free at `now`: start the next packet, if the discipline gives one.
    fn start_next(&mut self, now: SimTime) {
        let next = self.ctx_run(now, |q, ctx| q.dequeue(ctx));
        match next {
            Some(id) => {
                self.fate[id.0 as usize] = Fate::Served(now);
                self.order.push(id.0 as usize);
                let size = self.pkts[id].size as u64;
                self.wire = Some((id, now + self.rate.tx_time(size)));
            }
            None => {
                if self.qdisc.len_packets() > 0 {
                    self.idled_with_backlog = true;
                }
            }
        }
    }

    /// Lets every transmission ending before `t` (or at `t` too, if `inclusive`) end.
    fn run_to(&mut self, t: SimTime, inclusive: bool) {
        while let Some((_, end)) = self.wire {
            if end > t || (end == t && !inclusive) {
                break;
            }
            self.wire = None;
            self.start_next(end);
        }
    }

    /// A packet arrives at `t`; returns its arrival index.
    fn arrive(&mut self, t: SimTime, size: u32, dscp: Dscp) -> usize {
        self.run_to(t, false);
        let id = self.pkts.alloc(Packet {
            size,
            dscp,
            ecn: Ecn::NotEct,
            enqueued_at: t,
            sent_at: t,
            ..Default::default()
        });
        assert_eq!(id.0 as usize, self.fate.len(), "arena slots are not reused in tests");
        self.fate.push(Fate::Queued);
        self.arrival.push(t);
        self.qdisc.classify(&mut self.pkts, id);
        let verdict = self.ctx_run(t, |q, ctx| q.enqueue(id, ctx));
        if let Verdict::Drop(cause) = verdict {
            self.fate[id.0 as usize] = Fate::Dropped(t, cause);
        }
        if self.wire.is_none() {
            self.start_next(t);
        }
        id.0 as usize
    }

    /// Serves everything left.
    fn finish(&mut self) {
        self.run_to(SimTime::MAX, true);
    }
}

// ---------------------------------------------------------------------------------------
// Appendices A and B, section 5.1

/// The appendices' time t (packet times) on the test's clock: t = -1 is 9 ms.
fn at(t: i64) -> SimTime {
    SimTime(((10 + t) as u64) * MS)
}

/// The arrival history behind the appendices' snapshots (the document shows only the
/// snapshots; this history is dsim's reconstruction, the simplest one consistent with both):
///
/// - t = -1: B0 arrives at an idle link and is transmitted during [-1, 0) (its duplicate is
///   in virtual service during [-1, 0) too); then B1, G1, B2, B3, B4 arrive.
/// - t = 0: G2, B5, B6.  t = 1: B7.  t = 4: G3, B8, B9.  t = 5: G4.
///
/// Green deadlines are arrival + d = arrival + 3: G1 2, G2 3, G3 7, G4 8, as tabulated.
/// Blue deadlines are the virtual service starts: the virtual queue is served in arrival
/// order B0 (-1), B1 (0), G1 (1), B2 (2), B3 (3), B4 (4), G2 (5), B5 (6); B6 finds 7 = Buff
/// duplicates waiting and is refused; B7 (at t = 1, 6 waiting) starts at 7, G3 at 8, B8 at
/// 9, B9 at 10, G4 at 11.
const HISTORY: &[(i64, &str)] = &[
    (-1, "B0"),
    (-1, "B1"),
    (-1, "G1"),
    (-1, "B2"),
    (-1, "B3"),
    (-1, "B4"),
    (0, "G2"),
    (0, "B5"),
    (0, "B6"),
    (1, "B7"),
    (4, "G3"),
    (4, "B8"),
    (4, "B9"),
    (5, "G4"),
];

struct Example {
    link: Link,
    names: HashMap<&'static str, usize>,
}

impl Example {
    fn run_until(g: f64, early_drop: bool, stop: i64) -> Self {
        let mut params = DsdParams::new(Limit::Packets(7), Duration(3 * MS));
        params.g = g;
        params.early_drop = early_drop;
        let mut link = Link::dsd(params, 1);
        let mut names = HashMap::new();
        for &(t, name) in HISTORY.iter().filter(|(t, _)| *t <= stop) {
            let dscp = if name.starts_with('G') { GREEN_DSCP } else { BLUE_DSCP };
            names.insert(name, link.arrive(at(t), PKT, dscp));
        }
        Example { link, names }
    }

    fn name_of(&self, idx: usize) -> &'static str {
        self.names
            .iter()
            .find(|(_, i)| **i == idx)
            .map(|(n, _)| *n)
            .expect("known")
    }

    fn fate(&self, name: &str) -> Fate {
        self.link.fate[self.names[name]]
    }

    /// (name, deadline in packet time) of a queue, head first.
    fn queue(&self, green: bool) -> Vec<(&'static str, i64)> {
        let dsd = self.link.dsd_state();
        let q: Vec<(PktId, SimTime)> = if green {
            dsd.green_deadlines().collect()
        } else {
            dsd.blue_deadlines().collect()
        };
        q.into_iter()
            .map(|(id, dl)| (self.name_of(id.0 as usize), dl.0 as i64 / MS as i64 - 10))
            .collect()
    }

    /// Virtual service starts of the waiting duplicates, in packet time.
    fn virtual_starts(&mut self, t: i64) -> Vec<i64> {
        let Qdisc::Dsd(d) = &mut self.link.qdisc else {
            unreachable!()
        };
        d.virtual_queue
            .waiting_starts(at(t))
            .map(|s| s.0 as i64 / MS as i64 - 10)
            .collect()
    }

    /// Service order from t = 0 on (B0, served at -1, left out).
    fn service(&self) -> Vec<(&'static str, i64)> {
        self.link
            .order
            .iter()
            .map(|&i| {
                let Fate::Served(s) = self.link.fate[i] else {
                    unreachable!()
                };
                (self.name_of(i), s.0 as i64 / MS as i64 - 10)
            })
            .filter(|(n, _)| *n != "B0")
            .collect()
    }
}

#[test]
fn appendix_a_first_snapshot() {
    // Appendix A, snapshot at t = 0 (after the arrivals of t = 0, before the service of t = 0):
    //
    //   Deadline:   6   4    3    2    0
    //       |    | B5 | B4 | B3 | B2 | B1 |---
    //   Deadline:                 3    2
    //       |    |    |    |    | G2 | G1 |---
    //   Virtual Queue:
    //    B5 | G2 | B4 | B3 | B2 | G1 | B1 | -> serve at rate c
    //
    // "B6 had to be dropped because the virtual queue length was Buff when it arrived."
    let mut ex = Example::run_until(1.0, false, 0);
    assert_eq!(
        ex.queue(false),
        vec![("B1", 0), ("B2", 2), ("B3", 3), ("B4", 4), ("B5", 6)]
    );
    assert_eq!(ex.queue(true), vec![("G1", 2), ("G2", 3)]);
    // Virtual queue B1 G1 B2 B3 B4 G2 B5: services start at 0 ... 6, the blue ones at their
    // deadlines above, so G1's duplicate is at 1 and G2's at 5.
    assert_eq!(ex.virtual_starts(0), vec![0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(ex.fate("B6"), Fate::Dropped(at(0), DropCause::DsdBlueOverflow));
    assert_eq!(ex.fate("B0"), Fate::Served(at(-1)));
}

#[test]
fn appendix_a_late_green_drop() {
    // "B1 is served at time t=0 in order to meet its deadline, then G1, B2, B3, B4. G2 has
    // to be dropped from the green queue because it has to wait for more than d=3".
    // Hand trace of the serving rule (g = 1: green iff now <= mstb - pg, pg = 1):
    //   t=0: B1(0)  G1(2): 0 <= -1? no  -> B1
    //   t=1: B2(2)  G1(2): 1 <= 1       -> G1
    //   t=2: B2(2)  G2(3): 2 <= 1? no   -> B2
    //   t=3: B3(3)  G2(3): 3 <= 2? no   -> B3
    //   t=4: G2's maxServiceTime 3 < 4: dropped; B4(4) G3(7): 4 <= 3? no -> B4
    let mut ex = Example::run_until(1.0, false, 4);
    ex.link.run_to(at(4), true);
    assert_eq!(
        ex.service()[..5],
        [("B1", 0), ("G1", 1), ("B2", 2), ("B3", 3), ("B4", 4)]
    );
    assert_eq!(ex.fate("G2"), Fate::Dropped(at(4), DropCause::DsdGreenLate));
}

#[test]
fn appendix_a_second_snapshot_and_the_rest() {
    // Appendix A, snapshot at t = 5 (after G4's arrival, before the service of t = 5):
    //
    //   Deadline:       10   9    7    6
    //       |    |    | B9 | B8 | B7 | B5 |---
    //   Deadline:                 8    7
    //       |    |    |    |    | G4 | G3 |---
    //   Virtual Queue:
    //    G4 | B9 | B8 | G3 | B7 | B5 | G2 | -> serve at rate c
    //
    // "As no blue packet has reached its deadline yet, G3 can be served, followed by B5, B7,
    // G4, B8, and B9". Hand trace (g = 1):
    //   t=5: B5(6) G3(7): 5 <= 5 -> G3;   t=6: B5(6) G4(8): 6 <= 5? no -> B5
    //   t=7: B7(7) G4(8): no -> B7;       t=8: B8(9) G4(8): 8 <= 8 -> G4;  t=9 B8, t=10 B9
    let mut ex = Example::run_until(1.0, false, 5);
    assert_eq!(ex.queue(false), vec![("B5", 6), ("B7", 7), ("B8", 9), ("B9", 10)]);
    assert_eq!(ex.queue(true), vec![("G3", 7), ("G4", 8)]);
    // G2 (5), B5 (6), B7 (7), G3 (8), B8 (9), B9 (10), G4 (11): 7 = Buff duplicates.
    assert_eq!(ex.virtual_starts(5), vec![5, 6, 7, 8, 9, 10, 11]);
    ex.link.finish();
    assert_eq!(
        ex.service(),
        vec![
            ("B1", 0),
            ("G1", 1),
            ("B2", 2),
            ("B3", 3),
            ("B4", 4),
            ("G3", 5),
            ("B5", 6),
            ("B7", 7),
            ("G4", 8),
            ("B8", 9),
            ("B9", 10),
        ]
    );
    // Every served blue left at its deadline or before; every served green within d = 3.
    let counters = ex.link.dsd_state().counters;
    assert_eq!((counters.served_blue, counters.served_green), (9, 3));
    // G4 arrived at 5 and was served at 8: exactly d.
    assert_eq!(counters.max_green_wait, Duration(3 * MS));
}

#[test]
fn section_5_1_green_bias_zero() {
    // Section 5.1: with g = 0, "In the example in Appendix A, the packets served would have
    // thus been, successively, B1, B2, G1, B3, B4, B5, B7, G3, G4, B8 and B9."
    // Hand trace (blue can wait: now + pg <= mstb; green can wait: now + pb <= mstg):
    //   t=0: B1(0) G1(2): blue cannot wait           -> B1
    //   t=1: B2(2) G1(2): both can wait, g = 0       -> B2
    //   t=2: B3(3) G1(2): green cannot wait          -> G1
    //   t=3: B3(3) G2(3): blue cannot wait           -> B3
    //   t=4: G2 late, dropped; B4(4) G3(7): blue cannot wait -> B4
    //   t=5: B5(6) G3(7): both can wait -> B5;   t=6: B7(7) G3(7): both -> B7
    //   t=7: B8(9) G3(7): green cannot wait -> G3;   t=8: B8(9) G4(8): green cannot -> G4
    //   t=9: B8;  t=10: B9
    let mut ex = Example::run_until(0.0, false, 5);
    ex.link.finish();
    let names: Vec<&str> = ex.service().iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        ["B1", "B2", "G1", "B3", "B4", "B5", "B7", "G3", "G4", "B8", "B9"]
    );
    let times: Vec<i64> = ex.service().iter().map(|s| s.1).collect();
    assert_eq!(times, (0..=10).collect::<Vec<_>>());
    assert_eq!(ex.fate("G2"), Fate::Dropped(at(4), DropCause::DsdGreenLate));
    // g = 0 never draws: the bias chose blue at t = 1, 5, 6.
    assert_eq!(ex.link.dsd_state().counters.bias_blue, 3);
    assert_eq!(ex.link.dsd_state().counters.bias_green, 0);
}

#[test]
fn appendix_b_early_green_drop() {
    // Appendix B: same arrivals, green admitted only if "the number of green packets in the
    // queue at time t, augmented by the number of blue packets in the queue with deadline
    // in [t, t+4] is no more than 4" (c (d + pg) = 3 + 1 = 4 packets).
    //
    //   Deadline:   6   4    3    2    0
    //       |    | B5 | B4 | B3 | B2 | B1 |---
    //   Deadline:                      2
    //       |    |    |    |    |    | G1 |---
    //   Virtual Queue:
    //    B5 | G2 | B4 | B3 | B2 | G1 | B1 | -> serve at rate c
    //
    // "G2 is no longer enqueued. Indeed, when it arrived, the green queue contained already
    // packet G1, and the blue queue contained packets B1, B2 and B3. The total queue length
    // at time was 5 packets (including G2), and so G2 fails the test."
    let mut ex = Example::run_until(1.0, true, -1);
    // Just before G2 arrives (t = 0): G1 + G2 = 2 green, blue deadlines < 0 + 3 + 1: B1 (0),
    // B2 (2), B3 (3); B4 (deadline 4) is not counted (module doc: strict inequality).
    let load = ex.link.dsd_state().admission_load(at(0), PKT);
    assert_eq!(load, 5 * PKT as u64);
    let g2 = ex.link.arrive(at(0), PKT, GREEN_DSCP);
    ex.names.insert("G2", g2);
    for &(t, name) in HISTORY.iter().filter(|(t, n)| *t >= 0 && *n != "G2") {
        let dscp = if name.starts_with('G') { GREEN_DSCP } else { BLUE_DSCP };
        if t == 1 {
            // The snapshot, still at t = 0.
            assert_eq!(
                ex.queue(false),
                vec![("B1", 0), ("B2", 2), ("B3", 3), ("B4", 4), ("B5", 6)]
            );
            assert_eq!(ex.queue(true), vec![("G1", 2)]);
        }
        ex.link.run_to(at(t), false);
        if name == "G3" {
            // t = 4: G3 alone in green; blue deadlines < 8: B4 (4), B5 (6), B7 (7): 4 <= 4.
            assert_eq!(ex.link.dsd_state().admission_load(at(4), PKT), 4 * PKT as u64);
        }
        if name == "G4" {
            // t = 5: G3 + G4; blue deadlines < 9: B5 (6), B7 (7); B8 (9) is not (with the
            // text's "<=" it would be, and G4, served at its deadline 8 below, refused).
            assert_eq!(ex.link.dsd_state().admission_load(at(5), PKT), 4 * PKT as u64);
        }
        let i = ex.link.arrive(at(t), PKT, dscp);
        ex.names.insert(name, i);
    }
    assert_eq!(ex.fate("G2"), Fate::Dropped(at(0), DropCause::DsdGreenEarly));
    assert_eq!(ex.fate("B6"), Fate::Dropped(at(0), DropCause::DsdBlueOverflow));
    ex.link.finish();
    // Hand trace: t=0 B1; t=1 G1 (1 <= 2 - 1); t=2 B2 (no green); t=3 B3; t=4 B4 (4 <= 3?
    // no); t=5 G3; then as in Appendix A.
    assert_eq!(
        ex.service(),
        vec![
            ("B1", 0),
            ("G1", 1),
            ("B2", 2),
            ("B3", 3),
            ("B4", 4),
            ("G3", 5),
            ("B5", 6),
            ("B7", 7),
            ("G4", 8),
            ("B8", 9),
            ("B9", 10),
        ]
    );
    assert_eq!(ex.link.dsd_state().counters.safety_net, 0);
}
