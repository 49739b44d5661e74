//! `[record]`: the recorded series against hand-computed sequences, against the tables
//! they must add up to, and the proof that recording changes no result.

mod common;

use common::{f64_col, str_col, u64_col};
use dsim_core::results::{Table, Tables};
use dsim_core::scenario::from_toml;

/// 1250-byte datagrams every 5 ms (2 Mbit/s) into a 1 Mbit/s link (10 ms per packet) with
/// 1 ms of propagation, for 100 ms, recorded in two intervals of 50 ms.
const OVERLOAD: &str = r#"
duration = "100ms"
[nodes]
hosts = ["A", "B"]
[[link]]
from = "A"
to = "B"
rate = "1Mbps"
delay = "1ms"
queue = { type = "droptail", limit = "1000p" }
[[flow]]
name = "f"
src = "A"
dst = "B"
app = { type = "cbr", rate = "2Mbps", size = "1250B" }
[record]
interval = "50ms"
ports = ["A->B"]
"#;

fn recorded(toml: &str) -> Tables {
    common::run(toml)
}

#[test]
fn a_queue_that_grows_by_hand() {
    // Packet i arrives at 5i ms. Packet 0 finds the link idle; packet i >= 1 waits from 5i
    // to 10i (its transmission starts when packet i - 1's ends) and arrives at 10i + 11.
    // [0, 50): arrivals 0..9; departures 0..4 (packet 5's transmission starts at 50, in
    // the next interval); queued time 5 + 10 + 15 + 20 + 25 + 20 + 15 + 10 + 5 = 125
    // packet-ms, mean 2.5; at 50 packets 5..9 wait. [50, 100): arrivals 10..19,
    // departures 5..9, queued 10 + 20 + 30 + 40 + 50 + 45 + ... + 5 = 375 packet-ms, mean
    // 7.5; at 100 packets 10..19 wait.
    let t = recorded(OVERLOAD);
    let p = &t.port_series;
    assert_eq!(str_col(p, "port"), ["A->B", "A->B"]);
    assert_eq!(f64_col(p, "start_s"), [0.0, 0.05]);
    assert_eq!(f64_col(p, "end_s"), [0.05, 0.1]);
    assert_eq!(u64_col(p, "arrivals_pkts"), [10, 10]);
    assert_eq!(u64_col(p, "departures_pkts"), [5, 5]);
    assert_eq!(u64_col(p, "len_pkts"), [5, 10]);
    assert_eq!(u64_col(p, "len_bytes"), [6250, 12_500]);
    assert_eq!(f64_col(p, "mean_len_pkts"), [2.5, 7.5]);
    assert_eq!(f64_col(p, "mean_len_bytes"), [3125.0, 9375.0]);
    assert_eq!(f64_col(p, "throughput_bps"), [1e6, 1e6]);
    assert_eq!(u64_col(p, "rate_bps"), [1_000_000, 1_000_000]);
    // Delivered: packets 0..3 (at 11, 21, 31, 41 ms; delays 11, 16, 21, 26 ms), then 4..8
    // (at 51 ... 91; delays 31 ... 51 ms); packet 9 would arrive at 101.
    let f = &t.flow_series;
    assert_eq!(u64_col(f, "sent_pkts"), [10, 10]);
    assert_eq!(u64_col(f, "delivered_pkts"), [4, 5]);
    assert_eq!(
        f64_col(f, "throughput_bps"),
        [4.0 * 1250.0 * 8.0 / 0.05, 5.0 * 1250.0 * 8.0 / 0.05]
    );
    assert_eq!(f64_col(f, "delay_mean_ms"), [18.5, 41.0]);
    assert!(
        f64_col(f, "goodput_bps").iter().all(|g| g.is_nan()),
        "a datagram flow has no goodput"
    );
    // The delay histogram: nine delays 11 ... 51 ms, each alone in a slot of two
    // significant digits (bounds clamped to the exact minimum and maximum).
    let d = &t.distributions;
    let delay: Vec<usize> = (0..d.rows()).filter(|&i| str_col(d, "metric")[i] == "delay").collect();
    assert_eq!(delay.len(), 9);
    for (k, &i) in delay.iter().enumerate() {
        let ms = 11.0 + 5.0 * k as f64;
        let (low, high) = (f64_col(d, "low_ms")[i], f64_col(d, "high_ms")[i]);
        assert!(
            low <= ms && ms <= high && high - low < 0.01 * ms,
            "{ms} in [{low}, {high}]"
        );
        assert_eq!(u64_col(d, "count")[i], 1);
    }
    assert_eq!(f64_col(d, "low_ms")[delay[0]], 11.0);
    assert_eq!(f64_col(d, "high_ms")[delay[8]], 51.0);
}

/// A mixed network: TCP and Poisson traffic through RIO behind a token-bucket profiler and
/// an srTCM, with a warm-up and a window that is not a multiple of the interval.
const MIXED: &str = r#"
duration = "3.05s"
warmup = "0.5s"
seed = 7
[nodes]
hosts = ["a", "b", "sink"]
routers = ["edge", "core"]
[[link]]
from = "a"
to = "edge"
rate = "10Mbps"
delay = "2ms"
[[link]]
from = "b"
to = "edge"
rate = "10Mbps"
delay = "3ms"
[[link]]
from = "edge"
to = "core"
rate = "3Mbps"
delay = "10ms"
queue = { type = "mred", limit = "60p", precedence = [ { dscp = ["AF11"], min_th = "20p", max_th = "40p", max_p = 0.02 }, { min_th = "5p", max_th = "20p", max_p = 0.1 } ] }
[[link]]
from = "core"
to = "sink"
rate = "10Mbps"
delay = "2ms"
[[flow]]
name = "tcp"
count = 3
src = "a"
dst = "sink"
app = { type = "ftp" }
[[flow]]
name = "udp"
src = "b"
dst = "sink"
app = { type = "poisson", rate = "1.5Mbps", size = "800B" }
[[conditioner]]
name = "profile"
at = "a"
per_flow = true
match = { flow = ["tcp.0", "tcp.1", "tcp.2"] }
meter = { type = "token_bucket", rate = "500kbps", depth = "5KB" }
in = { mark = "AF11" }
[[conditioner]]
name = "police"
at = "edge"
match = { flow = ["udp"] }
meter = { type = "srtcm", cir = "1Mbps", cbs = "4KB", ebs = "8KB" }
green = { mark = "AF11" }
yellow = { mark = "AF12" }
red = "drop"
"#;

/// `t` without the wall time and the scenario's hash (the `[record]` table is part of
/// the scenario, so of its hash).
fn without_wall(mut t: Tables) -> Tables {
    t.run.columns.retain(|(n, _)| n != "wall_s" && n != "scenario_hash");
    t
}

/// Sums `value` per key of `keys` over the rows of `t`, in order of first appearance.
fn sums(t: &Table, keys: &[&str], value: impl Fn(usize) -> f64) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for i in 0..t.rows() {
        let key = keys
            .iter()
            .map(|k| str_col(t, k)[i].clone())
            .collect::<Vec<_>>()
            .join("/");
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v += value(i),
            None => out.push((key, value(i))),
        }
    }
    out
}

#[test]
fn recording_changes_no_result() {
    let plain = common::run(MIXED);
    let rec = recorded(&format!("{MIXED}\n[record]\ninterval = \"100ms\"\n"));
    assert_eq!(
        rec.flow_series.rows(),
        4 * 26,
        "2.55 s in intervals of 100 ms: 26 intervals"
    );
    let mut stripped = without_wall(rec.clone());
    for name in Tables::RECORDED {
        assert!(
            stripped.named().iter().any(|(n, t)| *n == name && t.rows() > 0),
            "{name} recorded"
        );
    }
    stripped.flow_series = Table::default();
    stripped.port_series = Table::default();
    stripped.conditioner_series = Table::default();
    stripped.distributions = Table::default();
    assert_eq!(without_wall(plain.clone()), stripped);
    assert_eq!(
        format!("{:?}", without_wall(plain)),
        format!("{stripped:?}"),
        "fingerprints unchanged"
    );
}

#[test]
fn the_series_add_up_to_the_tables() {
    let t = recorded(&format!("{MIXED}\n[record]\ninterval = \"100ms\"\n"));
    let window = 2.55;
    // Flows: packets per interval add up to the window's counts.
    for col in [
        "sent_pkts",
        "delivered_pkts",
        "dropped_pkts",
        "green_delivered_bytes",
        "red_delivered_bytes",
    ] {
        let series = sums(&t.flow_series, &["flow"], |i| u64_col(&t.flow_series, col)[i] as f64);
        let table: Vec<(String, f64)> = (0..t.flows.rows())
            .map(|i| (str_col(&t.flows, "flow")[i].clone(), u64_col(&t.flows, col)[i] as f64))
            .collect();
        assert_eq!(series, table, "{col}");
    }
    // Goodput: the mean of the per-interval rates weighted by their lengths.
    let lengths = |s: &Table, i: usize| f64_col(s, "end_s")[i] - f64_col(s, "start_s")[i];
    let goodput = sums(&t.flow_series, &["flow"], |i| {
        f64_col(&t.flow_series, "goodput_bps")[i] * lengths(&t.flow_series, i) / window
    });
    for (i, (_, g)) in goodput.iter().enumerate().take(3) {
        let want = f64_col(&t.flows, "goodput_bps")[i];
        assert!((g - want).abs() <= 1e-6 * want, "{g} vs {want}");
    }
    // Ports: arrivals, departures and drops per class add up; the time-weighted means,
    // weighted by the intervals' lengths, give the window's mean.
    let key = |s: &Table, i: usize| {
        format!(
            "{}/{}/{}",
            str_col(s, "port")[i],
            u64_col(s, "queue")[i],
            u64_col(s, "precedence")[i]
        )
    };
    let q = &t.queues;
    for col in ["arrivals_pkts", "departures_pkts", "dropped_pkts"] {
        for i in 0..q.rows() {
            let k = key(q, i);
            let p = &t.port_series;
            let sum: u64 = (0..p.rows())
                .filter(|&j| key(p, j) == k)
                .map(|j| u64_col(p, col)[j])
                .sum();
            assert_eq!(sum, u64_col(q, col)[i], "{k} {col}");
        }
    }
    for i in 0..q.rows() {
        let k = key(q, i);
        let p = &t.port_series;
        let mean: f64 = (0..p.rows())
            .filter(|&j| key(p, j) == k)
            .map(|j| f64_col(p, "mean_len_pkts")[j] * lengths(p, j) / window)
            .sum();
        let want = f64_col(q, "mean_len_pkts")[i];
        assert!((mean - want).abs() <= 1e-9 * want.max(1.0), "{k}: {mean} vs {want}");
    }
    // Conditioners: packets per colour add up.
    let c = &t.conditioners;
    let series = sums(&t.conditioner_series, &["conditioner", "color"], |i| {
        u64_col(&t.conditioner_series, "pkts")[i] as f64
    });
    let table: Vec<(String, f64)> = (0..c.rows())
        .map(|i| {
            (
                format!("{}/{}", str_col(c, "conditioner")[i], str_col(c, "color")[i]),
                u64_col(c, "pkts")[i] as f64,
            )
        })
        .collect();
    assert_eq!(series, table);
    // Histograms: a flow's delay slots count its delivered packets.
    let d = &t.distributions;
    let counted = sums(d, &["flow", "metric"], |i| u64_col(d, "count")[i] as f64);
    for i in 0..t.flows.rows() {
        let flow = &str_col(&t.flows, "flow")[i];
        let delay = counted
            .iter()
            .find(|(k, _)| *k == format!("{flow}/delay"))
            .map_or(0.0, |c| c.1);
        assert_eq!(delay, u64_col(&t.flows, "delivered_pkts")[i] as f64, "{flow}");
    }
}

#[test]
fn what_is_recorded_is_what_was_asked() {
    let t = recorded(&format!(
        "{MIXED}\n[record]\nseries = [\"ports\"]\nports = [\"edge->core\"]\n"
    ));
    assert_eq!(t.flow_series.rows(), 0);
    assert_eq!(t.conditioner_series.rows(), 0);
    assert_eq!(t.distributions.rows(), 0);
    // RIO's two precedences, 100 intervals by default.
    assert_eq!(t.port_series.rows(), 2 * 100);
    assert!(str_col(&t.port_series, "port").iter().all(|p| p == "edge->core"));
}

#[test]
fn a_record_table_that_cannot_be_recorded_is_refused() {
    let cases = [
        ("interval = \"0s\"", "record.interval", "greater than 0s"),
        (
            "interval = \"3s\"",
            "record.interval",
            "at most the measurement window (2550ms)",
        ),
        (
            "ports = [\"core->edge\", \"edge->sink\"]",
            "record.ports[1]",
            "no such port",
        ),
        (
            "ports = [\"core->edge\", \"core->edge\"]",
            "record.ports[1]",
            "each port once",
        ),
        (
            "series = [\"flows\", \"flows\"]",
            "record.series[1]",
            "each series once",
        ),
        ("series = [\"queues\"]", "record.series[0]", "unknown variant"),
        ("colour = true", "record", "unknown field"),
        (
            "interval = \"1us\"",
            "record.interval",
            "above the 1000000 a run records",
        ),
    ];
    for (body, path, rule) in cases {
        let e = from_toml(&format!("{MIXED}\n[record]\n{body}\n")).expect_err(body);
        let text = e.to_string();
        assert!(text.contains(path) && text.contains(rule), "{body}: {text}");
    }
}
