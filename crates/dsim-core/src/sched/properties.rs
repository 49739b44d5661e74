//! Properties every multi-queue scheduler must keep, over random arrival and service
//! sequences (proptest): work conservation (a packet is returned whenever one waits, so
//! the link never idles while a packet is queued), packet conservation (admitted = sent +
//! queued), FIFO order inside each class, and per scheduler its own rule (strict priority
//! order, the limiter's (r, b) bound). CBQ is work conserving when every class may borrow
//! (ns-2's `efficient` rule sends some class then): it is in the list that way; its
//! bounded classes are tested in `cbq/tests.rs`.

use proptest::prelude::*;

use super::classes::testing::{Harness, one_dscp_per_class};
use super::{Drr, Priority, Qdisc, QueueSpec, Wrr};
use crate::bucket::Bucket;
use crate::discipline::Verdict;
use crate::packet::Dscp;
use crate::params::KeyPath;
use crate::time::{Bytes, Limit, Rate, SimTime};

const DSCPS: [Dscp; 4] = [Dscp::EF, Dscp(10), Dscp(18), Dscp::BE];

#[derive(Debug, Clone)]
enum Op {
    /// Time advances by `gap` ns, then a packet of class `class` and `size` bytes arrives.
    Arrive { gap: u64, class: usize, size: u32 },
    /// Time advances by `gap` ns, then the link asks for a packet.
    Serve { gap: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (
            0u64..2_000_000,
            0usize..4,
            prop_oneof![Just(40u32), Just(160), Just(576), Just(1500), 40u32..1500]
        )
            .prop_map(|(gap, class, size)| Op::Arrive { gap, class, size }),
        (0u64..2_000_000).prop_map(|gap| Op::Serve { gap }),
    ]
}

/// The schedulers, with small queues (so overflow happens) and a tight limiter.
fn schedulers() -> Vec<(&'static str, Qdisc)> {
    let classes = || one_dscp_per_class(&DSCPS, Limit::Packets(8));
    let tb = || Bucket::full(Rate(2_000_000), Bytes(3000));
    vec![
        (
            "priority",
            Qdisc::Priority(Priority::new(classes(), vec![Some(tb()), None, None, None])),
        ),
        ("wrr", Qdisc::Wrr(Wrr::new(classes(), vec![3, 1, 2, 1]))),
        ("drr", Qdisc::Drr(Drr::new(classes(), vec![1500, 500, 3000, 100]))),
        ("cbq-prr", cbq("prr", "top_level")),
        ("cbq-wrr", cbq("wrr", "formal")),
    ]
}

/// A CBQ over the four codepoints, every class allowed to borrow, queues of 8 packets.
fn cbq(scheduler: &str, guideline: &str) -> Qdisc {
    let spec: QueueSpec = toml::from_str(&cbq_table(scheduler, guideline, 8, [false; 4])).unwrap();
    spec.qdisc(Rate(10_000_000), &KeyPath::root()).unwrap()
}

/// A CBQ table over the four codepoints with queues of `limit` packets: EF (share 0.2)
/// and AF11 (0.3, a lower priority) under an interior class of half the link, AF21 (0.1)
/// without idle credit, the default class 0.4; a class `bounded` may not borrow and has no
/// idle credit.
pub(super) fn cbq_table(scheduler: &str, guideline: &str, limit: u32, bounded: [bool; 4]) -> String {
    let keys = [
        r#"dscp = ["EF"], share = 0.2, parent = "X""#,
        r#"dscp = ["AF11"], share = 0.3, parent = "X", priority = 1"#,
        r#"dscp = ["AF21"], share = 0.1"#,
        r#"default = true, share = 0.4"#,
    ];
    let class = |i: usize| {
        let borrow = if bounded[i] { ", borrow = false" } else { "" };
        let credit = if bounded[i] || i == 2 {
            r#", maxidle = "0s""#
        } else {
            ""
        };
        format!(
            r#"  {{ {}{borrow}{credit}, queue = {{ type = "droptail", limit = "{limit}p" }} }},"#,
            keys[i]
        )
    };
    let classes: Vec<String> = (0..4).map(class).collect();
    format!(
        r#"type = "cbq"
scheduler = "{scheduler}"
guideline = "{guideline}"
maxpkt = "1500B"
interior = [ {{ name = "X", share = 0.5 }} ]
classes = [
{}
]"#,
        classes.join("\n")
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn schedulers_are_work_conserving_and_lose_nothing(ops in prop::collection::vec(op(), 1..400)) {
        for (name, mut q) in schedulers() {
            let mut h = Harness::new();
            let mut now = 0u64;
            let mut tag = 0u64;
            let (mut admitted, mut sent) = (0u64, 0u64);
            // Last tag served per class: FIFO inside a class means tags increase.
            let mut last_tag = [None::<u64>; 4];
            // Arrival tags admitted per class and not yet served, to check priority order.
            let mut waiting = [0usize; 4];
            // Bytes the PQ limiter let into class 0.
            let mut limited_bytes = 0u64;
            for op in &ops {
                match *op {
                    Op::Arrive { gap, class, size } => {
                        now += gap;
                        tag += 1;
                        let (_, v) = h.offer(&mut q, SimTime(now), DSCPS[class], size, tag);
                        if v == Verdict::Admit {
                            admitted += 1;
                            waiting[class] += 1;
                            if class == 0 && name == "priority" {
                                limited_bytes += size as u64;
                                // Limiter bound: at most b + r t / 8 bytes by time t.
                                prop_assert!(limited_bytes * 8 <= 3000 * 8 + 2 * now / 1000, "{name}: limiter bound at {now}");
                            }
                        }
                    }
                    Op::Serve { gap } => {
                        now += gap;
                        let queued = q.len_packets();
                        let got = h.take(&mut q, SimTime(now));
                        // Work conservation: a packet waits <=> one is returned.
                        prop_assert_eq!(got.is_some(), queued > 0, "{}: queued {} at {}", name, queued, now);
                        if let Some((class, t, _)) = got {
                            let c = class as usize;
                            if name == "priority" {
                                prop_assert!(waiting[..c].iter().all(|&w| w == 0), "priority: class {} served before a higher one", c);
                            }
                            prop_assert!(last_tag[c].is_none_or(|l| l < t), "{}: FIFO order broken in class {}", name, c);
                            last_tag[c] = Some(t);
                            waiting[c] -= 1;
                            sent += 1;
                        }
                    }
                }
                prop_assert_eq!(admitted, sent + q.len_packets() as u64, "{}: packet conservation", name);
            }
        }
    }
}
