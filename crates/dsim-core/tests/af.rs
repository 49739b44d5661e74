//! End-to-end checks of the Assured Forwarding mechanisms on small UDP scenarios: the
//! conditioners in the packet path, MRED classification and protection, policer and
//! shaper drops, and the result tables they fill.

mod common;

use common::{run, str_col};
use dsim_core::results::{Column, Table, Tables};

/// The u64 value of `col` in the row where every (key column, value) pair matches.
fn cell(t: &Table, col: &str, keys: &[(&str, &str)]) -> u64 {
    let rows: Vec<usize> = (0..t.rows())
        .filter(|&r| keys.iter().all(|(k, v)| str_col(t, k)[r] == *v))
        .collect();
    assert_eq!(rows.len(), 1, "rows matching {keys:?}: {rows:?}");
    match t.column(col) {
        Some(Column::U64(v)) => v[rows[0]],
        other => panic!("no u64 column {col}: {other:?}"),
    }
}

/// The u64 value of `col` in the queues table for (port, precedence).
fn queue_cell(t: &Tables, port: &str, precedence: u64, col: &str) -> u64 {
    let q = &t.queues;
    let u = |name: &str| match q.column(name) {
        Some(Column::U64(v)) => v,
        other => panic!("no u64 column {name}: {other:?}"),
    };
    let ports = str_col(q, "port");
    let r = (0..q.rows())
        .find(|&r| ports[r] == port && u("precedence")[r] == precedence)
        .unwrap_or_else(|| panic!("no row {port} {precedence}"));
    u(col)[r]
}

fn fcell(t: &Table, col: &str, keys: &[(&str, &str)]) -> f64 {
    let r = (0..t.rows())
        .find(|&r| keys.iter().all(|(k, v)| str_col(t, k)[r] == *v))
        .unwrap_or_else(|| panic!("no row {keys:?}"));
    match t.column(col) {
        Some(Column::F64(v)) => v[r],
        other => panic!("no f64 column {col}: {other:?}"),
    }
}

/// A -> R -> B with fast links; `extra` adds conditioners, flows, queues.
fn line(extra: &str, rb_queue: &str) -> String {
    line_at("100Mbps", extra, rb_queue)
}

/// A -> R -> B, the R - B link at `rb_rate`; `rb_queue` continues the R - B link's table.
fn line_at(rb_rate: &str, extra: &str, rb_queue: &str) -> String {
    format!(
        r#"
duration = "10s"
[nodes]
hosts = ["A", "B"]
routers = ["R"]
[[link]]
from = "A"
to = "R"
rate = "100Mbps"
delay = "1ms"
[[link]]
from = "R"
to = "B"
rate = "{rb_rate}"
delay = "1ms"
{rb_queue}
{extra}
"#
    )
}

#[test]
fn cbr_through_a_token_bucket_profiler_gets_the_hand_computed_in_out_split() {
    // CBR 2 Mbit/s of 1000 B: a packet every 4 ms, k = 0 .. 2499 in 10 s. Profiler 1 Mbit/s
    // = 125 B/ms, depth 5000 B, full at 0: +500 B per packet interval. T_k = 5000 - 500 k
    // while green, so k = 0..8 are green (T_9 = 500), then every other packet (k = 10, 12,
    // ..., 2498): 9 + 1245 = 1254 green (IN, AF11) and 1246 red (OUT, AF12). Equivalently
    // floor((5000 + 125 x 9996) / 1000) = 1254. The R->B MRED queue maps AF11 to
    // precedence 0 and AF12 to 1, so its arrivals per precedence show the marking.
    let extra = r#"
[[flow]]
name = "cbr"
src = "A"
dst = "B"
app = { type = "cbr", rate = "2Mbps", size = "1000B" }

[[conditioner]]
name = "prof"
at = "A"
per_flow = true
match = { flow = ["cbr"] }
meter = { type = "token_bucket", rate = "1Mbps", depth = "5000B" }
in = { mark = "AF11" }
out = { mark = "AF12" }
"#;
    let queue = r#"
[link.forward.queue]
type = "mred"
limit = "1000p"
[[link.forward.queue.precedence]]
dscp = ["AF11"]
min_th = "500p"
max_th = "900p"
[[link.forward.queue.precedence]]
dscp = ["AF12"]
min_th = "400p"
max_th = "900p"
"#;
    let t = run(&line(extra, queue));
    let f = [("flow", "cbr")];
    assert_eq!(cell(&t.flows, "sent_pkts", &f), 2500);
    assert_eq!(cell(&t.flows, "green_sent_pkts", &f), 1254);
    assert_eq!(cell(&t.flows, "red_sent_pkts", &f), 1246);
    assert_eq!(cell(&t.flows, "green_delivered_pkts", &f), 1254);
    assert_eq!(cell(&t.flows, "red_delivered_pkts", &f), 1246);
    let arrivals = |p| queue_cell(&t, "R->B", p, "arrivals_pkts");
    assert_eq!((arrivals(0), arrivals(1)), (1254, 1246));
    let c = &t.conditioners;
    let key = [("conditioner", "prof/cbr"), ("color", "green")];
    assert_eq!(cell(c, "pkts", &key), 1254);
    assert_eq!(cell(c, "remarked_pkts", &key), 1254);
    assert_eq!(cell(c, "pkts", &[("conditioner", "prof/cbr"), ("color", "red")]), 1246);
}

#[test]
fn cbr_through_a_tsw_profiler_is_out_with_probability_pout() {
    // Seed 002 appendix: a CBR source at 1.25 x the target once the estimate has
    // converged to its rate (window 0.5 s, warm-up 5 s) is OUT with Pout = (1.25 - 1) / 1
    // = 0.25: 75 % IN. 1000 B every 6.4 ms for 45 s: about 7031 packets, so the IN share
    // is 0.75 within a few 0.001 (binomial sd 0.005).
    let extra = r#"
[[flow]]
name = "cbr"
src = "A"
dst = "B"
app = { type = "cbr", rate = "1.25Mbps", size = "1000B" }

[[conditioner]]
name = "tsw"
at = "A"
meter = { type = "tsw", target = "1Mbps", window = "500ms" }
"#;
    let toml = line(extra, "").replace("duration = \"10s\"", "duration = \"50s\"\nwarmup = \"5s\"");
    let t = run(&toml);
    let f = [("flow", "cbr")];
    let (green, red) = (
        cell(&t.flows, "green_sent_pkts", &f),
        cell(&t.flows, "red_sent_pkts", &f),
    );
    let share = green as f64 / (green + red) as f64;
    assert!((share - 0.75).abs() < 0.015, "IN share {share}");
}

#[test]
fn an_aggregate_policer_drops_the_excess() {
    // CBR 3 Mbit/s of 1000 B (a packet every 2666667 ns, 3750 packets) policed at R's
    // ingress to 1 Mbit/s with a 3000 B bucket. Tokens available by the last arrival:
    // 3000 + 125 B/ms x 3749 x 2.666667 ms = 3000 + 1249667 B: at most 1252 whole packets
    // pass, and the policer grants whenever it can (the bucket never fills again).
    let extra = r#"
[[flow]]
name = "cbr"
src = "A"
dst = "B"
app = { type = "cbr", rate = "3Mbps", size = "1000B" }

[[conditioner]]
name = "pol"
at = "R"
side = "ingress"
interface = "A"
meter = { type = "token_bucket", rate = "1Mbps", depth = "3000B" }
red = "drop"
"#;
    let t = run(&line(extra, ""));
    let f = [("flow", "cbr")];
    let sent = cell(&t.flows, "sent_pkts", &f);
    let delivered = cell(&t.flows, "delivered_pkts", &f);
    assert_eq!(sent, 3750);
    assert!((1251..=1252).contains(&delivered), "{delivered}");
    assert_eq!(cell(&t.flows, "drop_policer_pkts", &f), sent - delivered);
    assert_eq!(cell(&t.flows, "red_dropped_pkts", &f), sent - delivered);
    let c = &t.conditioners;
    assert_eq!(
        cell(c, "dropped_pkts", &[("conditioner", "pol"), ("color", "red")]),
        sent - delivered
    );
    assert_eq!(
        cell(c, "passed_pkts", &[("conditioner", "pol"), ("color", "green")]),
        delivered
    );
    assert_eq!(
        cell(&t.drops, "pkts", &[("site", "pol"), ("cause", "policer")]),
        sent - delivered
    );
}

fn overload(queue: &str) -> Tables {
    // Two 6 Mbit/s CBR sources (+-10 % spacing) into a 10 Mbit/s link; A's profile is
    // 4 Mbit/s, B's 1 Mbit/s: 5 Mbit/s of IN (AF11) traffic, 7 of OUT (AF12).
    let toml = format!(
        r#"
duration = "20s"
warmup = "2s"
[nodes]
hosts = ["A", "B", "D"]
routers = ["R"]
[[link]]
from = "A"
to = "R"
rate = "100Mbps"
delay = "1ms"
[[link]]
from = "B"
to = "R"
rate = "100Mbps"
delay = "1ms"
[[link]]
from = "R"
to = "D"
rate = "10Mbps"
delay = "5ms"
{queue}
[[flow]]
name = "a"
src = "A"
dst = "D"
app = {{ type = "cbr", rate = "6Mbps", size = "1000B", spacing_variation = "10%" }}
[[flow]]
name = "b"
src = "B"
dst = "D"
app = {{ type = "cbr", rate = "6Mbps", size = "1000B", spacing_variation = "10%" }}
[[conditioner]]
name = "pa"
at = "A"
meter = {{ type = "token_bucket", rate = "4Mbps", depth = "10KB" }}
green = {{ mark = "AF11" }}
red = {{ mark = "AF12" }}
[[conditioner]]
name = "pb"
at = "B"
meter = {{ type = "token_bucket", rate = "1Mbps", depth = "10KB" }}
green = {{ mark = "AF11" }}
red = {{ mark = "AF12" }}
"#
    );
    run(&toml)
}

#[test]
fn rio_protects_in_packets_under_overload() {
    let rio = overload(
        r#"
[link.forward.queue]
type = "mred"
limit = "100p"
mode = "coupled"
[[link.forward.queue.precedence]]
dscp = ["AF11"]
min_th = "40p"
max_th = "70p"
max_p = 0.02
[[link.forward.queue.precedence]]
dscp = ["AF12"]
min_th = "10p"
max_th = "30p"
max_p = 0.05
"#,
    );
    let fifo = overload(
        r#"
[link.forward.queue]
type = "droptail"
limit = "100p"
"#,
    );
    let in_loss = |t: &Tables, f: &str| {
        let k = [("flow", f)];
        cell(&t.flows, "green_dropped_pkts", &k) as f64 / cell(&t.flows, "green_sent_pkts", &k) as f64
    };
    for f in ["a", "b"] {
        // RIO: IN packets see an IN average far below min_th_in; drop-tail loses IN
        // packets like any others (about 2/12 of everything).
        assert!(in_loss(&rio, f) < 0.001, "RIO IN loss of {f}: {}", in_loss(&rio, f));
        assert!(
            in_loss(&fifo, f) > 0.10,
            "drop-tail IN loss of {f}: {}",
            in_loss(&fifo, f)
        );
    }
    let tput = |t: &Tables, f: &str| fcell(&t.flows, "throughput_bps", &[("flow", f)]) / 1e6;
    // With RIO each flow gets its IN rate plus a share of the rest: a > 4, b > 1, and a
    // gets more than under drop-tail (where both get about 5).
    assert!(
        tput(&rio, "a") > 4.5 && tput(&rio, "b") > 1.0,
        "{} {}",
        tput(&rio, "a"),
        tput(&rio, "b")
    );
    assert!(tput(&rio, "a") > tput(&fifo, "a") + 0.2);
    // RIO's OUT drops are early or forced, never overflow (the average stays below the
    // 100-packet limit); per precedence in the queues table.
    let rd = |p, col| queue_cell(&rio, "R->D", p, col);
    assert!(rd(1, "drop_early_pkts") + rd(1, "drop_forced_pkts") > 1000);
    assert_eq!(rd(0, "dropped_pkts"), 0);
    assert_eq!(rd(1, "drop_overflow_pkts"), 0);
}

#[test]
fn shaped_ef_passes_the_edge_policer_and_unshaped_ef_is_dropped_as_security_events() {
    // 2 Mbit/s of EF (500 B) from A. With a VLL shaper at A (1 Mbit/s, 500 B bucket,
    // 20-packet buffer) the stream reaching R conforms to 1 Mbit/s, and R's EF policer
    // (1 Mbit/s, 1000 B) never drops: half the packets are lost in the shaper's buffer.
    // Without the shaper the policer discards the excess as security events.
    let flow = r#"
[[flow]]
name = "ef"
src = "A"
dst = "B"
dscp = "EF"
app = { type = "cbr", rate = "2Mbps", size = "500B" }
[[conditioner]]
name = "edge"
at = "R"
side = "ingress"
ef_policer = { rate = "1Mbps", burst = "1000B" }
"#;
    let shaper = r#"
[[conditioner]]
name = "vll"
at = "A"
shaper = { type = "token_bucket", rate = "1Mbps", depth = "500B", limit = "20p" }
"#;
    let shaped = run(&line(&format!("{flow}{shaper}"), ""));
    let f = [("flow", "ef")];
    assert_eq!(cell(&shaped.flows, "drop_security_pkts", &f), 0);
    let sent = cell(&shaped.flows, "sent_pkts", &f);
    let over = cell(&shaped.flows, "drop_shaper_overflow_pkts", &f);
    let delivered = cell(&shaped.flows, "delivered_pkts", &f);
    // 1 Mbit/s of 500 B for 10 s = 2500 packets, plus the bucket and the buffer at the
    // end (at most 20 still waiting when the run stops).
    assert!((2480..=2502).contains(&delivered), "{delivered}");
    assert!(sent - delivered - over <= 21, "{sent} {delivered} {over}");
    let tput = fcell(&shaped.flows, "throughput_bps", &f);
    assert!(tput <= 1.0005e6, "{tput}");
    let c = &shaped.conditioners;
    let sh = [("conditioner", "vll"), ("color", "shaper")];
    assert_eq!(cell(c, "dropped_pkts", &sh), over);
    // Every packet sent meets the shaper: the row counts them and their bytes.
    assert_eq!(cell(c, "pkts", &sh), sent);
    assert_eq!(cell(c, "bytes", &sh), 500 * sent);
    assert_eq!(cell(c, "dropped_bytes", &sh), 500 * over);
    assert!(fcell(c, "mean_wait_ms", &[("conditioner", "vll")]) > 30.0);

    let unshaped = run(&line(flow, ""));
    let sec = cell(&unshaped.flows, "drop_security_pkts", &f);
    let sent = cell(&unshaped.flows, "sent_pkts", &f);
    // 5000 sent, 1000 B burst + 1 Mbit/s: 2 + about 2500 pass.
    assert!((2495..=2505).contains(&(sent - sec)), "{sent} {sec}");
    assert_eq!(
        cell(&unshaped.drops, "pkts", &[("site", "edge"), ("cause", "security")]),
        sec
    );
}

#[test]
fn red_records_its_average_and_drops_early_and_forced() {
    // Poisson 12 Mbit/s of 1000 B into 10 Mbit/s with RED 5/15p, max_p 0.1, and a 10 ms
    // series of the average. Overload keeps the average near max_th: both random early
    // and forced drops happen; the series has one row per 10 ms (10 s / 10 ms = 1000).
    let extra = r#"
[[flow]]
name = "p"
src = "A"
dst = "B"
app = { type = "poisson", rate = "12Mbps", size = "1000B" }
"#;
    let red = r#"forward = { queue = { type = "red", limit = "50p", min_th = "5p", max_th = "15p", max_p = 0.1, series = "10ms" } }"#;
    let t = run(&line_at("10Mbps", extra, red));
    let f = [("flow", "p")];
    assert!(cell(&t.flows, "drop_early_pkts", &f) > 100);
    assert!(cell(&t.flows, "drop_forced_pkts", &f) > 0);
    // The average lags the instantaneous queue (wq = 0.002), so a Poisson burst may still
    // fill the 50 packets now and then; those drops are counted apart, and are few.
    let overflow = cell(&t.flows, "drop_overflow_pkts", &f);
    assert!(overflow * 20 < cell(&t.flows, "drop_early_pkts", &f), "{overflow}");
    let s = &t.queue_series;
    assert!(s.rows() > 900 && s.rows() <= 1000, "{}", s.rows());
    let avg = match s.column("avg") {
        Some(Column::F64(v)) => v,
        _ => panic!(),
    };
    let late: Vec<f64> = avg[s.rows() / 2..].to_vec();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!(mean > 8.0 && mean < 16.0, "mean average {mean}");
}

#[test]
fn conditioned_runs_are_deterministic() {
    let a = overload("");
    let b = overload("");
    // Debug text, so that NaN cells compare equal.
    assert_eq!(format!("{:?}", a.flows), format!("{:?}", b.flows));
    assert_eq!(format!("{:?}", a.conditioners), format!("{:?}", b.conditioners));
}
