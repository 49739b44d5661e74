//! End-to-end checks of the engine, the network and the measurement, each against a value
//! computed by hand (the computation is in the comment above the assertion).

use dsim_core::results::{Column, Table, Tables};
use dsim_core::scenario::{self, ConfigError};

fn run(toml: &str, seed: u64, replications: u64) -> Tables {
    let sc = scenario::from_toml(toml).unwrap_or_else(|e| panic!("scenario refused: {e}"));
    dsim_core::run(&sc, seed, replications, 1).expect("runs")
}

fn col_f64(t: &Table, name: &str) -> Vec<f64> {
    match t.column(name) {
        Some(Column::F64(v)) => v.clone(),
        Some(Column::U64(v)) => v.iter().map(|x| *x as f64).collect(),
        other => panic!("column {name}: {other:?}"),
    }
}

fn col_str(t: &Table, name: &str) -> Vec<String> {
    match t.column(name) {
        Some(Column::Str(v)) => v.clone(),
        other => panic!("column {name}: {other:?}"),
    }
}

/// The value of `column` in the row of `table` whose `key` column equals `value`.
fn cell(t: &Table, key: &str, value: &str, column: &str) -> f64 {
    let keys = col_str(t, key);
    let i = keys
        .iter()
        .position(|k| k == value)
        .unwrap_or_else(|| panic!("no row {key} = {value}"));
    col_f64(t, column)[i]
}

const THREE_HOPS: &str = r#"
duration = "10s"
warmup = "1s"
[nodes]
hosts = ["A", "B"]
routers = ["R1", "R2"]
[[link]]
from = "A"
to = "R1"
rate = "10Mbps"
delay = "1ms"
[[link]]
from = "R1"
to = "R2"
rate = "1.5Mbps"
delay = "10ms"
[[link]]
from = "R2"
to = "B"
rate = "100Mbps"
delay = "250us"
[[flow]]
name = "f"
src = "A"
dst = "B"
app = { type = "cbr", rate = "RATE", size = "1500B" }
"#;

#[test]
fn delay_across_three_hops_is_transmission_plus_propagation() {
    // 1500 B = 12 000 bit: 1.2 ms at 10 Mbit/s, 8 ms at 1.5 Mbit/s, 0.12 ms at 100 Mbit/s;
    // propagation 1 + 10 + 0.25 ms. Total 20.57 ms = 20 570 000 ns, for every packet, as
    // 1 Mbit/s (one packet per 12 ms) never queues behind another.
    let t = run(&THREE_HOPS.replace("RATE", "1Mbps"), 1, 1);
    let f = &t.flows;
    for stat in [
        "delay_min_ms",
        "delay_max_ms",
        "delay_mean_ms",
        "delay_p50_ms",
        "delay_p99_ms",
    ] {
        assert_eq!(cell(f, "flow", "f", stat), 20.57, "{stat}");
    }
    assert_eq!(cell(f, "flow", "f", "jitter_max_ms"), 0.0);
    assert_eq!(cell(f, "flow", "f", "dropped_pkts"), 0.0);
}

#[test]
fn throughput_is_the_minimum_of_offered_load_and_capacity() {
    // Below capacity: 1 Mbit/s offered, 1 Mbit/s delivered. Packets leave A every 12 ms
    // from t = 0 and arrive 20.57 ms later; the window [1 s, 10 s) holds the deliveries of
    // packets k with 1000 <= 12k + 20.57 < 10000: k = 82 ... 831, 750 packets = 9 Mbit in 9 s.
    let t = run(&THREE_HOPS.replace("RATE", "1Mbps"), 1, 1);
    assert_eq!(cell(&t.flows, "flow", "f", "delivered_pkts"), 750.0);
    assert_eq!(cell(&t.flows, "flow", "f", "throughput_bps"), 1e6);

    // Above capacity: 3 Mbit/s offered into 1.5 Mbit/s; the bottleneck sends back to back,
    // one 1500 B packet per 8 ms, so 9 s of window deliver 9 / 0.008 = 1125 packets.
    let t = run(&THREE_HOPS.replace("RATE", "3Mbps"), 1, 1);
    let delivered = cell(&t.flows, "flow", "f", "delivered_pkts");
    assert!((delivered - 1125.0).abs() <= 1.0, "{delivered}");
    let tput = cell(&t.flows, "flow", "f", "throughput_bps");
    assert!((tput - 1.5e6).abs() / 1.5e6 < 0.002, "{tput}");
    // The rest is lost at the bottleneck queue, as overflow.
    let sent = cell(&t.flows, "flow", "f", "sent_pkts");
    let dropped = cell(&t.flows, "flow", "f", "drop_overflow_pkts");
    assert!(
        (sent - delivered - dropped).abs() <= 101.0,
        "conservation: {sent} {delivered} {dropped}"
    );
    assert_eq!(col_str(&t.drops, "site"), vec!["R1->R2".to_string()]);
}

const OVERLOAD: &str = r#"
duration = "40s"
warmup = "2s"
[nodes]
hosts = ["X", "Y", "D"]
routers = ["R"]
[[link]]
from = "X"
to = "R"
rate = "100Mbps"
delay = "1ms"
[[link]]
from = "Y"
to = "R"
rate = "100Mbps"
delay = "1ms"
[[link]]
from = "R"
to = "D"
rate = "5Mbps"
delay = "10ms"
queue = { type = "droptail", limit = "50p" }
[[flow]]
name = "x"
src = "X"
dst = "D"
app = { type = "APP", rate = "6Mbps", size = "1000B" }
[[flow]]
name = "y"
src = "Y"
dst = "D"
app = { type = "APP", rate = "4Mbps", size = "1000B" }
"#;

#[test]
fn two_poisson_flows_overloading_a_fifo_lose_the_same_fraction() {
    // Poisson arrivals see time averages (PASTA): both flows find the queue full with the
    // same probability, so both lose the same fraction and the 5 Mbit/s split 3 : 2.
    let t = run(&OVERLOAD.replace("APP", "poisson"), 7, 4);
    let flows = col_str(&t.flows, "flow");
    let (sent, dropped, tput) = (
        col_f64(&t.flows, "sent_pkts"),
        col_f64(&t.flows, "dropped_pkts"),
        col_f64(&t.flows, "throughput_bps"),
    );
    let mean = |name: &str, v: &[f64]| {
        let xs: Vec<f64> = flows
            .iter()
            .zip(v)
            .filter(|(f, _)| *f == name)
            .map(|(_, x)| *x)
            .collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let loss = |n: &str| mean(n, &dropped) / mean(n, &sent);
    assert!(
        (loss("x") - 0.5).abs() < 0.01 && (loss("y") - 0.5).abs() < 0.01,
        "{} {}",
        loss("x"),
        loss("y")
    );
    assert!((mean("x", &tput) - 3e6).abs() / 3e6 < 0.02);
    assert!((mean("y", &tput) - 2e6).abs() / 2e6 < 0.02);
}

#[test]
fn two_cbr_flows_overloading_a_fifo_share_by_the_first_arrival_race() {
    // CBR with +-10 % spacing variation: the queue is always full, every departure (every
    // 1.6 ms) frees one place and the first packet to arrive afterwards takes it. With
    // residual times close to uniform on [0, Tx = 1.333 ms] and [0, Ty = 2 ms],
    // P(x first) = 1 - Tx / (2 Ty) = 2/3: x gets 3.33 Mbit/s, y 1.67. (Without the variation
    // the three periods 4/3, 2 and 8/5 ms lock in phase and the split is a different,
    // start-dependent one: Floyd and Jacobson's phase effects.)
    let toml = OVERLOAD
        .replace("APP", "cbr")
        .replace("size = \"1000B\" }", "size = \"1000B\", spacing_variation = \"10%\" }");
    let t = run(&toml, 1, 1);
    let x = cell(&t.flows, "flow", "x", "throughput_bps");
    let y = cell(&t.flows, "flow", "y", "throughput_bps");
    assert!((x + y - 5e6).abs() / 5e6 < 0.002, "{x} + {y}");
    assert!((x - 5e6 * 2.0 / 3.0).abs() / 5e6 < 0.02, "{x}");
}

const DIAMOND: &str = r#"
duration = "2s"
[nodes]
hosts = ["A", "B"]
routers = ["R1", "R2", "R3", "R4"]
# Two ways from R1 to R4: directly over R2 (2 hops) or over R3 and R2... no: over R3 alone
# is also 2 hops; the long way is R1 - R3 - R2 - R4 (3 hops).
[[link]]
from = "A"
to = "R1"
rate = "10Mbps"
delay = "1ms"
[[link]]
from = "R1"
to = "R2"
rate = "10Mbps"
delay = "1ms"
[[link]]
from = "R2"
to = "R4"
rate = "10Mbps"
delay = "1ms"
[[link]]
from = "R1"
to = "R3"
rate = "10Mbps"
delay = "20ms"
[[link]]
from = "R3"
to = "R4"
rate = "10Mbps"
delay = "20ms"
[[link]]
from = "R3"
to = "R2"
rate = "10Mbps"
delay = "5ms"
[[link]]
from = "R4"
to = "B"
rate = "10Mbps"
delay = "1ms"
[[flow]]
name = "f"
src = "A"
dst = "B"
app = { type = "cbr", rate = "100kbps", size = "1000B" }
"#;

#[test]
fn routing_takes_the_shortest_path_and_the_first_declared_link_on_ties() {
    // Both A-R1-R2-R4-B and A-R1-R3-R4-B have 4 hops; R1's link to R2 is declared first.
    // Delay: 4 hops x 0.8 ms transmission + 1 + 1 + 1 + 1 ms = 7.2 ms.
    let t = run(DIAMOND, 1, 1);
    assert_eq!(cell(&t.flows, "flow", "f", "delay_max_ms"), 7.2);
    let ports = col_str(&t.queues, "port");
    let arrivals = col_f64(&t.queues, "arrivals_pkts");
    let used: Vec<&str> = ports
        .iter()
        .zip(&arrivals)
        .filter(|(_, a)| **a > 0.0)
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(used, vec!["A->R1", "R1->R2", "R2->R4", "R4->B"]);
}

#[test]
fn explicit_routes_override_the_shortest_path() {
    // Forced the long way: A R1 R3 R2 R4 B = 5 hops x 0.8 ms + 1 + 20 + 5 + 1 + 1 ms = 32 ms.
    let toml = format!("{DIAMOND}\n[[route]]\npath = [\"R1\", \"R3\", \"R2\", \"R4\", \"B\"]\n");
    let t = run(&toml, 1, 1);
    assert_eq!(cell(&t.flows, "flow", "f", "delay_max_ms"), 32.0);
}

#[test]
fn byte_limited_queue_holds_bytes_not_packets() {
    // 3 Mbit/s into 1.5 Mbit/s with a 4500 B buffer: at most 3 packets of 1500 B wait.
    // Packets reach R1 every 4 ms and leave it every 8 ms, every other arrival at the
    // instant a transmission ends: that one, arrivals first (docs/ties.md), finds 3
    // waiting and is refused. The worst delay is that of the packet arriving 4 ms into a
    // transmission behind 2 waiting: 4 + 2 x 8 + 8 ms at the bottleneck, plus the rest of
    // the path (1.2 + 0.12 ms transmission, 11.25 ms propagation): 40.57 ms.
    let toml = THREE_HOPS.replace("RATE", "3Mbps").replace(
        "delay = \"10ms\"",
        "delay = \"10ms\"\nqueue = { type = \"droptail\", limit = \"4500B\" }",
    );
    let t = run(&toml, 1, 1);
    let max = cell(&t.flows, "flow", "f", "delay_max_ms");
    assert!((max - 40.57).abs() < 1e-9, "{max}");
}

#[test]
fn random_link_loss_drops_the_configured_fraction() {
    // p = 0.05 over ~ 9000 packets: binomial standard deviation 0.0023; allow 4 sigma.
    let toml = THREE_HOPS
        .replace("RATE", "1Mbps")
        .replace("delay = \"1ms\"", "delay = \"1ms\"\nloss = 0.05");
    let t = dsim_core::run(
        &scenario::from_toml(&toml.replace("\"10s\"", "\"110s\"")).unwrap(),
        3,
        1,
        1,
    )
    .unwrap();
    let sent = cell(&t.flows, "flow", "f", "sent_pkts");
    let lost = cell(&t.flows, "flow", "f", "drop_link_loss_pkts");
    let p = lost / sent;
    assert!((p - 0.05).abs() < 4.0 * (0.05f64 * 0.95 / sent).sqrt(), "{p}");
}

#[test]
fn same_seed_gives_identical_tables_and_jobs_do_not_matter() {
    let toml = OVERLOAD.replace("APP", "poisson");
    let sc = scenario::from_toml(&toml).unwrap();
    let strip_wall = |mut t: Tables| {
        t.run.columns.retain(|(n, _)| n != "wall_s");
        t
    };
    let a = strip_wall(dsim_core::run(&sc, 42, 3, 1).unwrap());
    let b = strip_wall(dsim_core::run(&sc, 42, 3, 1).unwrap());
    let c = strip_wall(dsim_core::run(&sc, 42, 3, 3).unwrap());
    assert_eq!(a, b);
    assert_eq!(a, c);
    let d = strip_wall(dsim_core::run(&sc, 43, 3, 1).unwrap());
    assert_ne!(a.flows, d.flows);
}

#[test]
fn adding_a_flow_leaves_the_random_numbers_of_the_others_alone() {
    // Flow f's spacing variation draws from its own stream: adding g (on the reverse
    // directions of f's links, so it never meets f's packets) must not change f's packets
    // at all, so f's statistics stay identical. At 1.4 Mbit/s the gaps (8.57 ms +-10 %)
    // are sometimes shorter than the 8 ms bottleneck transmission, so packets queue and the
    // random gaps show in the jitter.
    let base = THREE_HOPS
        .replace("RATE", "1.4Mbps")
        .replace("size = \"1500B\" }", "size = \"1500B\", spacing_variation = \"10%\" }");
    let with_g = base.replace("hosts = [\"A\", \"B\"]", "hosts = [\"A\", \"B\", \"C\"]")
        + "[[link]]\nfrom = \"C\"\nto = \"R2\"\nrate = \"10Mbps\"\ndelay = \"1ms\"\n[[flow]]\nname = \"g\"\nsrc = \"C\"\ndst = \"A\"\napp = { type = \"poisson\", rate = \"1Mbps\", size = \"500B\" }\n";
    let a = run(&base, 5, 1);
    let b = run(&with_g, 5, 1);
    for c in [
        "sent_pkts",
        "delivered_pkts",
        "delay_mean_ms",
        "jitter_p90_ms",
        "jitter_max_ms",
    ] {
        assert_eq!(cell(&a.flows, "flow", "f", c), cell(&b.flows, "flow", "f", c), "{c}");
    }
    assert!(
        cell(&a.flows, "flow", "f", "jitter_max_ms") > 0.0,
        "the variation must show"
    );
}

#[test]
fn time_weighted_queue_length_of_a_saturated_queue() {
    // 3 Mbit/s into 1.5 Mbit/s with a 100-packet buffer: after a few seconds the queue is
    // full for the whole window, so its mean length is 100 packets (99.x: each departure
    // opens a place for the next arrival, 4 ms later on average).
    let t = run(&THREE_HOPS.replace("RATE", "3Mbps"), 1, 1);
    let ports = col_str(&t.queues, "port");
    let i = ports.iter().position(|p| p == "R1->R2").unwrap();
    let mean = col_f64(&t.queues, "mean_len_pkts")[i];
    assert!(mean > 99.0 && mean <= 100.0, "{mean}");
}

#[test]
fn eight_thousand_simultaneous_sources_are_served_in_declaration_order() {
    // 8,000 identical CBR flows on one host, each emitting a 125 B packet every 100 ms from
    // t = 0 (10 kbit/s): every 100 ms, 8,000 emissions are due at one instant, pushed in
    // flow order (issue 28: the event list now takes each in one step). The 1 Gbit/s link
    // sends a packet per microsecond, in the order the emissions ran: flow k's packet
    // leaves after (k + 1) us and arrives 1 ms later, so its delay is 1 + (k + 1) / 1000 ms,
    // the same for its 10 packets of [0, 1 s). Events per 100 ms: 8,000 emissions, 8,000
    // arrivals at B and 7,999 ends of transmission (packet 0 finds the link free and the
    // queue empty, the others wait; the last starts with nothing behind it): 239,990.
    const N: usize = 8_000;
    let toml = format!(
        r#"
duration = "1s"
[nodes]
hosts = ["A", "B"]
[[link]]
from = "A"
to = "B"
rate = "1Gbps"
delay = "1ms"
queue = {{ type = "droptail", limit = "{N}p" }}
[[flow]]
name = "cbr"
count = {N}
src = "A"
dst = "B"
app = {{ type = "cbr", rate = "10kbps", size = "125B" }}
"#
    );
    let t = run(&toml, 1, 1);
    assert_eq!(col_f64(&t.run, "events"), vec![239_990.0]);
    let names = col_str(&t.flows, "flow");
    assert_eq!(names.len(), N);
    let (min, max, mean) = (
        col_f64(&t.flows, "delay_min_ms"),
        col_f64(&t.flows, "delay_max_ms"),
        col_f64(&t.flows, "delay_mean_ms"),
    );
    let delivered = col_f64(&t.flows, "delivered_pkts");
    for (i, name) in names.iter().enumerate() {
        let k: usize = name.strip_prefix("cbr.").unwrap().parse().unwrap();
        let expected = (1_000_000 + 1_000 * (k + 1)) as f64 / 1e6;
        assert_eq!((min[i], max[i], delivered[i]), (expected, expected, 10.0), "{name}");
        assert!((mean[i] - expected).abs() < 1e-9, "{name}: {}", mean[i]);
    }
}

fn refused(toml: &str) -> ConfigError {
    match scenario::from_toml(toml) {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e,
    }
}

#[test]
fn bad_scenarios_name_the_key_the_value_the_rule_and_the_line() {
    let ok = THREE_HOPS.replace("RATE", "1Mbps");
    // (mistake, expected key path, expected value, words of the rule, expected line)
    type Case<'a> = (String, &'a str, Option<&'a str>, &'a str, Option<usize>);
    let cases: Vec<Case> = vec![
        (
            ok.replace("\"10Mbps\"", "\"10\""),
            "link[0].rate",
            Some("\"10\""),
            "units are mandatory",
            Some(10),
        ),
        (
            ok.replace("\"10Mbps\"", "\"10Mbs\""),
            "link[0].rate",
            Some("\"10Mbs\""),
            "unknown unit",
            Some(10),
        ),
        (
            ok.replace("rate = \"10Mbps\"", "rate = 10"),
            "link[0].rate",
            Some("10"),
            "units are mandatory",
            Some(10),
        ),
        (
            ok.replace("to = \"R1\"", "to = \"R9\""),
            "link[0].to",
            Some("\"R9\""),
            "no node has this name",
            Some(9),
        ),
        (
            ok.replace("src = \"A\"", "src = \"R1\""),
            "flow[0].src",
            Some("\"R1\""),
            "router",
            Some(24),
        ),
        (
            ok.replace("dst = \"B\"", "dst = \"A\""),
            "flow[0].dst",
            Some("\"A\""),
            "must differ",
            Some(25),
        ),
        (
            ok.replace("warmup = \"1s\"", "warmup = \"20s\""),
            "warmup",
            Some("\"20s\""),
            "before the run",
            Some(3),
        ),
        (
            ok.replace("duration = \"10s\"", "duration = \"0s\""),
            "duration",
            Some("\"0s\""),
            "longer than 0s",
            Some(2),
        ),
        (
            ok.replace("[[flow]]", "[[flow]]\nfoo = 1"),
            "flow[0].foo",
            Some("1"),
            "unknown field `foo`",
            Some(23),
        ),
        (
            ok.replace("type = \"cbr\"", "type = \"cbrr\""),
            "flow[0].app.type",
            Some("\"cbrr\""),
            "unknown type `cbrr`, expected one of cbr, poisson",
            Some(26),
        ),
        (
            ok.replace("size = \"1500B\"", "size = \"20B\""),
            "flow[0].app.size",
            Some("\"20B\""),
            "28B",
            Some(26),
        ),
        (
            ok.replace("size = \"1500B\"", "size = \"1.5B\""),
            "flow[0].app.size",
            Some("\"1.5B\""),
            "whole number",
            Some(26),
        ),
        (
            ok.replace("rate = \"1Mbps\"", "rate = \"0Mbps\""),
            "flow[0].app.rate",
            Some("\"0Mbps\""),
            "greater than 0",
            Some(26),
        ),
        (
            ok.replace("delay = \"1ms\"", "delay = \"-1ms\""),
            "link[0].delay",
            Some("\"-1ms\""),
            "negative",
            Some(11),
        ),
        (
            ok.replace("routers = [\"R1\", \"R2\"]", "routers = [\"R1\", \"A\"]"),
            "nodes.routers[1]",
            Some("\"A\""),
            "already declared",
            Some(6),
        ),
        (
            ok + "[[route]]\npath = [\"A\", \"R2\"]\n",
            "route[0].path[1]",
            Some("\"R2\""),
            "no link joins A to R2",
            Some(28),
        ),
        (
            THREE_HOPS
                .replace("RATE", "1Mbps")
                .replace("[[link]]\nfrom = \"R2\"", "[[link]]\nfrom = \"R1\"")
                .replace("to = \"B\"", "to = \"R2\""),
            "link[2].to",
            Some("\"R2\""),
            "already linked",
            Some(19),
        ),
        (
            "duration = \"1s\"\n[nodes\n".to_string(),
            "",
            None,
            "not valid TOML",
            Some(2),
        ),
    ];
    assert!(cases.len() >= 15);
    for (toml, path, value, rule, line) in cases {
        let e = refused(&toml);
        assert_eq!(e.path.to_string(), path, "{e}");
        assert_eq!(e.value.as_deref(), value, "{e}");
        assert!(e.rule.contains(rule), "rule {:?} lacks {rule:?}", e.rule);
        if line.is_some() {
            assert_eq!(e.line, line, "{e}");
        }
    }
}
