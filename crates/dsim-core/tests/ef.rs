//! End-to-end checks of the EF schedulers (RFC 2598 sections 2.1-2.2, appendix A.3) on small
//! UDP scenarios: what each scheduler must do to a CBR flow, computed by hand.

mod common;

use common::run;
use dsim_core::results::{Column, Table, Tables};

/// The value of `col` in the row whose `key` column equals `name`.
fn cell(t: &Table, key: &str, name: &str, col: &str) -> f64 {
    let Some(Column::Str(keys)) = t.column(key) else {
        panic!("no column {key}")
    };
    let row = keys
        .iter()
        .position(|k| k == name)
        .unwrap_or_else(|| panic!("no row {name}"));
    match t.column(col).unwrap_or_else(|| panic!("no column {col}")) {
        Column::F64(v) => v[row],
        Column::U64(v) => v[row] as f64,
        Column::Str(_) => panic!("{col} is text"),
    }
}

fn flow(t: &Tables, name: &str, col: &str) -> f64 {
    cell(&t.flows, "flow", name, col)
}

/// Sum of `col` over the rows of port `port` in the queues table.
fn port_sum(t: &Tables, port: &str, col: &str) -> f64 {
    let Some(Column::Str(ports)) = t.queues.column("port") else {
        panic!()
    };
    let Some(Column::U64(v)) = t.queues.column(col) else {
        panic!("{col}")
    };
    ports
        .iter()
        .zip(v)
        .filter(|(p, _)| *p == port)
        .map(|(_, x)| *x as f64)
        .sum()
}

/// One EF and one best-effort source on hosts E and B, through router R to D over
/// `bottleneck` with queue discipline `queue`. Access links 100 Mbit/s, 1 ms.
fn dumbbell(queue: &str, bottleneck: &str, ef_app: &str, be_app: &str, duration: &str) -> String {
    format!(
        r#"
duration = "{duration}"
warmup = "2s"
[nodes]
hosts = ["E", "B", "D"]
routers = ["R"]
[[link]]
from = "E"
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
rate = "{bottleneck}"
delay = "10ms"
queue = {queue}
[[flow]]
name = "ef"
src = "E"
dst = "D"
dscp = "EF"
app = {ef_app}
[[flow]]
name = "be"
src = "B"
dst = "D"
app = {be_app}
"#
    )
}

const BE_OVERLOAD: &str = r#"{ type = "cbr", rate = "3Mbps", size = "1500B", spacing_variation = "10%" }"#;

#[test]
fn pq_gives_ef_near_zero_queueing_while_best_effort_overloads_the_link() {
    // EF: 450 kbit/s of 200 B packets (+-10 %) under PQ with a 600 kbit/s, 3000 B limiter;
    // BE: 3 Mbit/s of 1500 B packets into 1.5 Mbit/s, so its queue is always full.
    // Base EF delay: 200 B at 100 Mbit/s (0.016 ms) + 1 ms + 200 B at 1.5 Mbit/s
    // (1.0667 ms) + 10 ms = 12.083 ms. PQ is non-preemptive: an EF packet may wait for
    // the BE packet on the wire (at most 8 ms for 1500 B) and for the EF packets that
    // arrived meanwhile (8 ms / 3.56 ms spacing -> at most 3, 1.0667 ms each): so every
    // EF delay <= 12.083 + 8 + 3.2 = 23.3 ms. With a FIFO the same EF packets wait behind
    // a full 50-packet queue of mixed EF and BE packets (well over 100 ms).
    let pq = r#"{ type = "priority", classes = [
        { dscp = ["EF"], limit_rate = "600kbps", limit_burst = "3000B", queue = { type = "droptail", limit = "50p" } },
        { default = true, queue = { type = "droptail", limit = "50p" } } ] }"#;
    let ef = r#"{ type = "cbr", rate = "450kbps", size = "200B", spacing_variation = "10%" }"#;
    let t = run(&dumbbell(pq, "1.5Mbps", ef, BE_OVERLOAD, "30s"));
    let base = 0.016 + 1.0 + 1.0667 + 10.0;
    assert!(flow(&t, "ef", "delay_min_ms") >= base - 0.01);
    assert!(
        flow(&t, "ef", "delay_max_ms") <= base + 8.0 + 3.2 + 0.01,
        "{}",
        flow(&t, "ef", "delay_max_ms")
    );
    assert!(flow(&t, "ef", "delay_mean_ms") < base + 4.0);
    assert_eq!(flow(&t, "ef", "dropped_pkts"), 0.0);
    // EF gets its rate; BE gets exactly the rest of the link (work conservation).
    let ef_bps = flow(&t, "ef", "throughput_bps");
    let be_bps = flow(&t, "be", "throughput_bps");
    assert!((ef_bps - 450e3).abs() / 450e3 < 0.01, "{ef_bps}");
    assert!((ef_bps + be_bps - 1.5e6).abs() / 1.5e6 < 0.002, "{}", ef_bps + be_bps);
    assert!(flow(&t, "be", "drop_overflow_pkts") > 0.0);

    let fifo = r#"{ type = "droptail", limit = "50p" }"#;
    let f = run(&dumbbell(fifo, "1.5Mbps", ef, BE_OVERLOAD, "30s"));
    assert!(
        flow(&f, "ef", "delay_mean_ms") > 100.0,
        "{}",
        flow(&f, "ef", "delay_mean_ms")
    );
}

#[test]
fn pq_limiter_discards_ef_beyond_its_rate_and_counts_it() {
    // EF offers 600 kbit/s against a 450 kbit/s limiter: it delivers 450 kbit/s and loses
    // a quarter of its packets, all with cause rate_limit (RFC 2598 section 2.1).
    let pq = r#"{ type = "priority", classes = [
        { dscp = ["EF"], limit_rate = "450kbps", limit_burst = "3000B" },
        { default = true } ] }"#;
    let ef = r#"{ type = "cbr", rate = "600kbps", size = "200B" }"#;
    let t = run(&dumbbell(pq, "1.5Mbps", ef, BE_OVERLOAD, "20s"));
    let sent = flow(&t, "ef", "sent_pkts");
    let limited = flow(&t, "ef", "drop_rate_limit_pkts");
    assert!((flow(&t, "ef", "throughput_bps") - 450e3).abs() / 450e3 < 0.01);
    assert!((limited / sent - 0.25).abs() < 0.01, "{limited} / {sent}");
    assert_eq!(flow(&t, "ef", "drop_overflow_pkts"), 0.0);
    assert_eq!(flow(&t, "be", "drop_rate_limit_pkts"), 0.0);
    assert_eq!(port_sum(&t, "R->D", "drop_rate_limit_pkts"), limited);
}

/// WRR on R->D with EF weight 1 and BE weight 2, all packets 1500 B: EF's share is one
/// third of 1.5 Mbit/s = 500 kbit/s. Eight EF CBR flows with +-10 % spacing.
fn wrr_scenario(ef_aggregate_bps: f64) -> String {
    let per_flow = (ef_aggregate_bps / 8.0).round() as u64;
    let wrr = r#"{ type = "wrr", classes = [
        { dscp = ["EF"], weight = 1, queue = { type = "droptail", limit = "50p" } },
        { default = true, weight = 2, queue = { type = "droptail", limit = "50p" } } ] }"#;
    let ef = format!(r#"{{ type = "cbr", rate = "{per_flow}bps", size = "1500B", spacing_variation = "10%" }}"#);
    dumbbell(wrr, "1.5Mbps", &ef, BE_OVERLOAD, "60s").replace("name = \"ef\"", "name = \"ef\"\ncount = 8")
}

#[test]
fn wrr_service_to_arrival_ratio_on_cbr() {
    // A.3.1's service-to-arrival ratio = EF share x link / EF peak arrival rate.
    // Above 1, EF loses nothing and gets its arrival rate; BE takes what EF leaves.
    // Below 1 (0.8), EF gets exactly its share (500 kbit/s) and overflows.
    let share = 500e3;
    let mut delay = Vec::new();
    let mut jitter90 = Vec::new();
    for ratio in [1.03, 1.5, 3.0] {
        let t = run(&wrr_scenario(share / ratio));
        let ef: f64 = (0..8).map(|k| flow(&t, &format!("ef.{k}"), "throughput_bps")).sum();
        let lost: f64 = (0..8).map(|k| flow(&t, &format!("ef.{k}"), "dropped_pkts")).sum();
        assert_eq!(lost, 0.0, "ratio {ratio}");
        assert!(
            (ef - share / ratio).abs() / (share / ratio) < 0.01,
            "ratio {ratio}: {ef}"
        );
        assert!((ef + flow(&t, "be", "throughput_bps") - 1.5e6).abs() / 1.5e6 < 0.002);
        delay.push(
            (0..8)
                .map(|k| flow(&t, &format!("ef.{k}"), "delay_mean_ms"))
                .sum::<f64>()
                / 8.0,
        );
        jitter90.push(flow(&t, "ef.0", "jitter_p90_pct"));
    }
    // More service per arrival: less waiting (A.3.1, Table 2's trend).
    assert!(delay[0] > delay[1] && delay[1] > delay[2], "{delay:?}");
    assert!(jitter90[0] >= jitter90[2], "{jitter90:?}");

    let t = run(&wrr_scenario(share / 0.8));
    let ef: f64 = (0..8).map(|k| flow(&t, &format!("ef.{k}"), "throughput_bps")).sum();
    let lost: f64 = (0..8).map(|k| flow(&t, &format!("ef.{k}"), "drop_overflow_pkts")).sum();
    assert!((ef - share).abs() / share < 0.01, "{ef}");
    assert!(lost > 0.0);
    assert!((flow(&t, "be", "throughput_bps") - 1e6).abs() / 1e6 < 0.01);
}

#[test]
fn drr_shares_bytes_with_mixed_packet_sizes() {
    // DRR quanta EF 500 B, BE 1000 B: EF's byte share is 1/3 of 1.5 Mbit/s = 500 kbit/s,
    // although its packets are 160 B and BE's 1500 B. Both overload.
    let drr = r#"{ type = "drr", classes = [
        { dscp = ["EF"], quantum = "500B" }, { default = true, quantum = "1000B" } ] }"#;
    let ef = r#"{ type = "cbr", rate = "900kbps", size = "160B", spacing_variation = "10%" }"#;
    let t = run(&dumbbell(drr, "1.5Mbps", ef, BE_OVERLOAD, "30s"));
    assert!((flow(&t, "ef", "throughput_bps") - 500e3).abs() / 500e3 < 0.01);
    assert!((flow(&t, "be", "throughput_bps") - 1e6).abs() / 1e6 < 0.01);
}

#[test]
fn cbq_holds_a_bounded_class_to_its_share_and_lets_a_borrowing_one_take_more() {
    // CBQ (PRR) on 1.5 Mbit/s: EF at priority 0 with a fifth of the link (300 kbit/s), BE
    // at priority 1 with the rest; EF sends 1.2 Mbit/s of 1500 B packets, BE overloads.
    // (a) EF bounded, without idle credit: an EF packet is worth 1500 B at 300 kbit/s =
    //     40 ms, and the delay action holds EF that long from the start of its last
    //     packet; the link, busy with 1500 B packets (8 ms each), asks every 8 ms, so EF
    //     leaves exactly every 40 ms: 300 kbit/s. BE takes the other 1.2 Mbit/s (the link
    //     never idles while BE waits); EF's excess overflows its own queue, nothing is
    //     policed.
    // (b) EF may borrow: at priority 0 from a link that is never over its own rate, EF is
    //     served whenever it waits: all its 1.2 Mbit/s, BE the 300 kbit/s left.
    let bounded = r#"{ type = "cbq", scheduler = "prr", classes = [
        { dscp = ["EF"], share = 0.2, borrow = false, maxidle = "0s" },
        { default = true, share = 0.8, priority = 1 } ] }"#;
    let ef = r#"{ type = "cbr", rate = "1.2Mbps", size = "1500B", spacing_variation = "10%" }"#;
    let t = run(&dumbbell(bounded, "1.5Mbps", ef, BE_OVERLOAD, "30s"));
    let (e, b) = (flow(&t, "ef", "throughput_bps"), flow(&t, "be", "throughput_bps"));
    assert!((e - 300e3).abs() / 300e3 < 0.01, "{e}");
    assert!((b - 1.2e6).abs() / 1.2e6 < 0.01, "{b}");
    assert!(flow(&t, "ef", "dropped_pkts") > 0.0);
    assert_eq!(flow(&t, "ef", "drop_rate_limit_pkts"), 0.0);

    let borrowing = bounded.replace("borrow = false, ", "");
    let t = run(&dumbbell(&borrowing, "1.5Mbps", ef, BE_OVERLOAD, "30s"));
    let (e, b) = (flow(&t, "ef", "throughput_bps"), flow(&t, "be", "throughput_bps"));
    assert!((e - 1.2e6).abs() / 1.2e6 < 0.01, "{e}");
    assert!((b - 300e3).abs() / 300e3 < 0.02, "{b}");
    assert_eq!(flow(&t, "ef", "dropped_pkts"), 0.0);
}

#[test]
fn jitter_of_a_hand_built_sequence_end_to_end() {
    // X: 1000 B every 10 ms from t = 0; Y: 2000 B every 20 ms from t = 1 ms; both through
    // R onto a 2 Mbit/s FIFO link (4 ms per X packet, 8 ms per Y packet). Access links
    // 1 Gbit/s, no propagation delay anywhere. Per 20 ms cycle starting at c:
    //   X_a arrives at R at c + 0.008 ms, link idle -> leaves at c + 4.008: transit 4.008 ms
    //   Y   arrives at c + 1.016, waits -> on the wire c + 4.008 ... c + 12.008
    //   X_b sent at c + 10, arrives c + 10.008, waits -> leaves c + 16.008: transit 6.008
    // (the link is idle again from c + 16.008 < c + 20.008). So X's transits alternate
    // 4.008, 6.008 ms and every adjacent-pair jitter |(a_j - d_j) - (a_i - d_i)| is 2 ms
    // exactly: p50 = p90 = max = 2 ms; X's packet time at its subscribed 800 kbit/s is
    // 10 ms, so the jitter is 20 % of it.
    let toml = r#"
duration = "1s"
[nodes]
hosts = ["X", "Y", "D"]
routers = ["R"]
[[link]]
from = "X"
to = "R"
rate = "1Gbps"
delay = "0ms"
[[link]]
from = "Y"
to = "R"
rate = "1Gbps"
delay = "0ms"
[[link]]
from = "R"
to = "D"
rate = "2Mbps"
delay = "0ms"
[[flow]]
name = "x"
src = "X"
dst = "D"
app = { type = "cbr", rate = "800kbps", size = "1000B" }
[[flow]]
name = "y"
src = "Y"
dst = "D"
start = "1ms"
app = { type = "cbr", rate = "800kbps", size = "2000B" }
"#;
    let t = run(toml);
    assert_eq!(flow(&t, "x", "jitter_pairs"), 99.0);
    for col in ["jitter_min_ms", "jitter_p50_ms", "jitter_p90_ms", "jitter_max_ms"] {
        assert_eq!(flow(&t, "x", col), 2.0, "{col}");
    }
    assert_eq!(flow(&t, "x", "delay_min_ms"), 4.008);
    assert_eq!(flow(&t, "x", "delay_max_ms"), 6.008);
    assert_eq!(flow(&t, "x", "packet_time_ms"), 10.0);
    assert_eq!(flow(&t, "x", "jitter_p50_pct"), 20.0);
    assert_eq!(flow(&t, "x", "jitter_p90_pct"), 20.0);
    assert_eq!(flow(&t, "y", "packet_time_ms"), 20.0);
}

#[test]
fn jitter_pct_is_nan_without_a_subscribed_rate() {
    let toml = r#"
duration = "2s"
[nodes]
hosts = ["A", "B"]
[[link]]
from = "A"
to = "B"
rate = "10Mbps"
delay = "1ms"
[[flow]]
name = "p"
src = "A"
dst = "B"
app = { type = "poisson", rate = "1Mbps", size = "1000B" }
"#;
    let t = run(toml);
    assert!(flow(&t, "p", "packet_time_ms").is_nan());
    assert!(flow(&t, "p", "jitter_p50_pct").is_nan());
    assert!(flow(&t, "p", "jitter_p50_ms") >= 0.0);
}
