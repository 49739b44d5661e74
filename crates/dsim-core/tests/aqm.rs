//! CoDel, PIE and FQ-CoDel (docs/aqm.md): properties of the delay-based AQMs over random arrival and service sequences with ties
//! (proptest), as a port's queue and as a DRR class: packet conservation (admitted = sent +
//! dropped from the queue + queued), FIFO order inside each flow, CoDel drops only packets
//! whose sojourn time reached the target, PIE's probability stays in [0, 1], and the same
//! sequence gives the same outcome (determinism).

use proptest::prelude::*;

use dsim_core::scenario::{self, ConfigError};

use dsim_core::discipline::{QueueCtx, Verdict};
use dsim_core::engine::rng::stream;
use dsim_core::packet::{Dscp, Packet, PacketArena, PktId};
use dsim_core::params::KeyPath;
use dsim_core::sched::{Qdisc, QueueSpec};
use dsim_core::stats::DropCause;
use dsim_core::time::{Rate, SimTime};

#[derive(Debug, Clone)]
enum Op {
    /// Time advances by `gap` ns (often 0: ties), then a packet of `flow` arrives.
    Arrive { gap: u64, flow: u32, size: u32, ect: bool },
    /// Time advances by `gap` ns, then the link asks for a packet.
    Serve { gap: u64 },
}

fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), 0u64..20_000_000]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (gap(), 0u32..6, prop_oneof![Just(40u32), Just(1500), 40u32..1500], any::<bool>())
            .prop_map(|(gap, flow, size, ect)| Op::Arrive { gap, flow, size, ect }),
        2 => gap().prop_map(|gap| Op::Serve { gap }),
    ]
}

/// Small queues (so that every rule triggers), as a port's queue and inside DRR.
const QUEUES: [&str; 7] = [
    "type = \"codel\"\nlimit = \"12p\"\ntarget = \"2ms\"\ninterval = \"20ms\"",
    "type = \"codel\"\nlimit = \"20KB\"\necn = true\nmtu = \"0B\"",
    "type = \"pie\"\nlimit = \"12p\"\ntarget = \"2ms\"\nmax_burst = \"0ms\"\nderandomize = true\necn = true",
    "type = \"pie\"\nlimit = \"12p\"\ndelay = \"rate\"\ndq_threshold = \"3KB\"\ntupdate = \"5ms\"",
    "type = \"fq_codel\"\nlimit = \"12p\"\nflows = 4\nquantum = \"300B\"\ntarget = \"2ms\"\ninterval = \"20ms\"",
    "type = \"fq_codel\"\nmemory_limit = \"6KB\"\ndrop_batch = 2\necn = true",
    "type = \"drr\"\nclasses = [ { dscp = [\"EF\"], quantum = \"500B\", queue = { type = \"fq_codel\", flows = 2, limit = \"8p\" } }, { default = true, quantum = \"1500B\", queue = { type = \"codel\", limit = \"8p\", target = \"1ms\", interval = \"10ms\" } } ]",
];

/// What happened to every packet: sent (at), dropped (cause, sojourn), or still queued.
#[derive(Debug, Clone, PartialEq)]
enum Fate {
    Refused,
    Queued,
    Sent(SimTime),
    Dropped(DropCause, u64),
}

fn run(spec_text: &str, ops: &[Op]) -> (Vec<Fate>, Vec<(u32, u64)>, Qdisc) {
    let spec: QueueSpec = dsim_core::scenario::deserialize_value(spec_text).expect("a valid queue");
    let mut q = spec.qdisc(Rate(10_000_000), &KeyPath::root()).expect("builds");
    let mut pkts = PacketArena::with_capacity(64);
    let mut rng = stream(3, "props");
    let mut dropped: Vec<(PktId, DropCause)> = Vec::new();
    let (mut fates, mut sent_order) = (Vec::new(), Vec::new());
    let mut now = 0u64;
    let settle = |dropped: &mut Vec<(PktId, DropCause)>, pkts: &mut PacketArena, fates: &mut Vec<Fate>, now: u64| {
        for (id, cause) in dropped.drain(..) {
            let p = &pkts[id];
            fates[p.index as usize] = Fate::Dropped(cause, now - p.enqueued_at.0);
            pkts.free(id);
        }
    };
    for op in ops {
        match *op {
            Op::Arrive { gap, flow, size, ect } => {
                now += gap;
                let id = pkts.alloc(Packet {
                    flow,
                    size,
                    dscp: if flow % 2 == 0 { Dscp::EF } else { Dscp::BE },
                    ecn: if ect {
                        dsim_core::packet::Ecn::Ect0
                    } else {
                        dsim_core::packet::Ecn::NotEct
                    },
                    index: fates.len() as u64,
                    ..Default::default()
                });
                q.classify(&mut pkts, id);
                let mut ctx = QueueCtx {
                    now: SimTime(now),
                    pkts: &mut pkts,
                    rng: &mut rng,
                    dropped: &mut dropped,
                };
                let v = q.enqueue(id, &mut ctx);
                fates.push(if v == Verdict::Admit {
                    Fate::Queued
                } else {
                    Fate::Refused
                });
                if v != Verdict::Admit {
                    pkts.free(id);
                }
            }
            Op::Serve { gap } => {
                now += gap;
                let mut ctx = QueueCtx {
                    now: SimTime(now),
                    pkts: &mut pkts,
                    rng: &mut rng,
                    dropped: &mut dropped,
                };
                if let Some(id) = q.dequeue(&mut ctx) {
                    let p = &pkts[id];
                    fates[p.index as usize] = Fate::Sent(SimTime(now));
                    sent_order.push((p.flow, p.index));
                    pkts.free(id);
                }
            }
        }
        settle(&mut dropped, &mut pkts, &mut fates, now);
    }
    (fates, sent_order, q)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn aqms_conserve_packets_keep_flow_order_and_are_deterministic(ops in prop::collection::vec(op(), 1..300)) {
        for text in QUEUES {
            let (fates, order, q) = run(text, &ops);
            let queued = fates.iter().filter(|f| **f == Fate::Queued).count();
            prop_assert_eq!(queued, q.len_packets(), "{}: conservation", text);
            // FIFO inside a flow: the packets of one flow leave in arrival order.
            for flow in 0..6 {
                let mine: Vec<u64> = order.iter().filter(|o| o.0 == flow).map(|o| o.1).collect();
                prop_assert!(mine.windows(2).all(|w| w[0] < w[1]), "{}: flow {} out of order", text, flow);
            }
            // CoDel's drops (early, at dequeue) waited at least the target (1 or 2 ms here,
            // 5 ms by default).
            for f in &fates {
                if let Fate::Dropped(DropCause::Early, sojourn) = f {
                    if text.contains("codel") && !text.contains("pie") {
                        prop_assert!(*sojourn >= 1_000_000, "{}: early drop after {} ns", text, sojourn);
                    }
                }
            }
            if let Qdisc::Fifo(f) = &q {
                if let dsim_core::aqm::Aqm::Pie(p) = &f.queue.aqm {
                    prop_assert!((0.0..=1.0).contains(&p.vars.drop_prob));
                    prop_assert!(p.vars.burst_allowance <= p.params.max_burst);
                }
            }
            let (again, _, _) = run(text, &ops);
            prop_assert_eq!(&fates, &again, "{}: not deterministic", text);
        }
    }
}

/// A bad key gets an error naming the key path, the value and the rule.
fn refused(queue: &str) -> ConfigError {
    let text = format!(
        "duration = \"1s\"\n[nodes]\nhosts = [\"a\", \"b\"]\n[[link]]\nfrom = \"a\"\nto = \"b\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\nqueue = {queue}\n"
    );
    let sc = scenario::from_toml(&text);
    match sc {
        Err(e) => e,
        Ok(sc) => scenario::build(&sc, 1).err().expect("refused"),
    }
}

#[test]
fn bad_keys_are_refused_with_key_value_and_rule() {
    let e = refused("{ type = \"fq_codel\", flows = 0 }");
    assert!(e.to_string().contains("flows") && e.to_string().contains('0'), "{e}");
    let e = refused("{ type = \"pie\", alpha = -1.0 }");
    assert!(e.to_string().contains("alpha") && e.to_string().contains("-1"), "{e}");
    let e = refused("{ type = \"codel\", interval = \"0ms\" }");
    assert!(e.to_string().contains("interval"), "{e}");
    let e = refused("{ type = \"pie\", delay = \"queue\" }");
    assert!(
        e.to_string().contains("delay") && e.to_string().contains("timestamp"),
        "{e}"
    );
    let e = refused("{ type = \"codel\", quantum = \"1B\" }");
    assert!(e.to_string().contains("quantum"), "{e}");
}
