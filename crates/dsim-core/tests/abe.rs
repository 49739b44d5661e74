//! ABE end to end: the `type = "dsd"` scenario syntax, its errors, and DSD on a simulated
//! network against flat best effort.

use dsim_core::results::{Column, Table};
use dsim_core::scenario::{self, ConfigError};

/// A dumbbell: hosts S1 (blue) and S2 (green) -> R1 -> R2 -> D, bottleneck R1 -> R2 at 1 Mbit/s,
/// 50 ms, with the queue given.
fn dumbbell(queue: &str, flows: &str) -> String {
    format!(
        r#"
duration = "30s"
warmup = "5s"
[nodes]
hosts = ["S1", "S2", "D"]
routers = ["R1", "R2"]
[[link]]
from = "S1"
to = "R1"
rate = "10Mbps"
delay = "20ms"
[[link]]
from = "S2"
to = "R1"
rate = "10Mbps"
delay = "40ms"
[[link]]
from = "R1"
to = "R2"
rate = "1Mbps"
delay = "50ms"
queue = {queue}
[[link]]
from = "R2"
to = "D"
rate = "10Mbps"
delay = "1ms"
{flows}
"#
    )
}

/// Blue: Poisson UDP at 1.2 Mbit/s (overload); green: 4 CBR flows of 25 kbit/s each (the
/// 100 kbit/s aggregate of the draft's Table 1), 200 B datagrams, spacing +-10 %.
const FLOWS: &str = r#"
[[flow]]
name = "blue"
src = "S1"
dst = "D"
app = { type = "poisson", rate = "1.2Mbps", size = "1000B" }
[[flow]]
name = "green"
src = "S2"
dst = "D"
count = 4
dscp = GREEN
app = { type = "cbr", rate = "25kbps", size = "200B", spacing_variation = "10%" }
"#;

fn run(queue: &str, green_dscp: &str) -> dsim_core::results::Tables {
    let text = dumbbell(queue, &FLOWS.replace("GREEN", green_dscp));
    let sc = scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    dsim_core::run(&sc, 1, 1, 1).expect("runs")
}

fn col_u64(t: &Table, name: &str) -> Vec<u64> {
    match t.column(name) {
        Some(Column::U64(v)) => v.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

fn col_f64(t: &Table, name: &str) -> Vec<f64> {
    match t.column(name) {
        Some(Column::F64(v)) => v.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

fn col_str(t: &Table, name: &str) -> Vec<String> {
    match t.column(name) {
        Some(Column::Str(v)) => v.clone(),
        other => panic!("{name}: {other:?}"),
    }
}

const FLAT: &str = r#"{ type = "droptail", limit = "75KB" }"#;
const DSD: &str = r#"{ type = "dsd", buffer = "75KB", d = "10ms" }"#;

#[test]
fn a_fifo_treats_green_as_best_effort() {
    // Section 7: "Routers without an ABE implementation will simply treat blue and green
    // packets in the same way." The same network with the green flows tagged green (DSCP 3)
    // or blue (DSCP 0) gives the same flows table, bit for bit, except the dscp column.
    let green = run(FLAT, "3");
    let blue = run(FLAT, "0");
    for (name, col) in &green.flows.columns {
        if name != "dscp" {
            assert_eq!(Some(col), blue.flows.column(name), "column {name}");
        }
    }
    assert_eq!(col_str(&green.flows, "dscp")[1], "3");
    assert_eq!(col_str(&blue.flows, "dscp")[1], "BE");
    assert_eq!(green.queues, blue.queues);
}

#[test]
fn dsd_bounds_green_delay_and_is_transparent_to_blue() {
    let flat = run(FLAT, "3");
    let abe = run(DSD, "3");
    let names = col_str(&abe.flows, "flow");
    assert_eq!(names[0], "blue");
    for (n, t) in [("flat", &flat), ("abe", &abe)] {
        eprintln!(
            "{n}: delivered {:?} dropped {:?} mean delay {:?} max {:?}",
            col_u64(&t.flows, "delivered_pkts"),
            col_u64(&t.flows, "dropped_pkts"),
            col_f64(&t.flows, "delay_mean_ms"),
            col_f64(&t.flows, "delay_max_ms")
        );
    }
    // Green: one-way delay = propagation 40 + 50 + 1 ms + transmissions (200 B: 0.16 +
    // 1.6 + 0.16 ms) + queueing. Under DSD queueing at the bottleneck is at most d = 10 ms
    // (the access links are never congested: 0.1 and 1.2 Mbit/s into 10 Mbit/s, but the
    // blue 1000 B packets add up to 0.8 ms on R2 -> D); under flat BE the 75 KB queue stays
    // nearly full: 600 ms at 1 Mbit/s.
    let fixed_ms = 91.0 + 0.16 + 1.6 + 0.16;
    let abe_max = col_f64(&abe.flows, "delay_max_ms");
    let flat_mean = col_f64(&flat.flows, "delay_mean_ms");
    for i in 1..5 {
        assert!(
            abe_max[i] <= fixed_ms + 10.0 + 0.8 + 0.01,
            "green {} max {} ms",
            names[i],
            abe_max[i]
        );
        assert!(flat_mean[i] > fixed_ms + 400.0, "flat green mean {} ms", flat_mean[i]);
    }
    // Blue is open-loop UDP, so the bottleneck sees the same arrivals in both runs: local
    // transparency means the same blue packets get through, none later than under flat BE.
    let delivered = |t: &dsim_core::results::Tables| col_u64(&t.flows, "delivered_pkts")[0];
    assert_eq!(delivered(&abe), delivered(&flat));
    assert!(col_f64(&abe.flows, "delay_max_ms")[0] <= col_f64(&flat.flows, "delay_max_ms")[0]);
    // Green loses more than under flat BE (the cost of its low delay), by named causes.
    let lost = |t: &dsim_core::results::Tables, i: usize| col_u64(&t.flows, "dropped_pkts")[i];
    let green_lost_abe: u64 = (1..5).map(|i| lost(&abe, i)).sum();
    let green_lost_flat: u64 = (1..5).map(|i| lost(&flat, i)).sum();
    assert!(
        green_lost_abe > green_lost_flat,
        "{green_lost_abe} vs {green_lost_flat}"
    );
    let by_cause: u64 = ["dsd_overflow", "dsd_green_early", "dsd_green_safety_net"]
        .iter()
        .map(|c| {
            (1..5)
                .map(|i| col_u64(&abe.flows, &format!("drop_{c}_pkts"))[i])
                .sum::<u64>()
        })
        .sum();
    assert_eq!(by_cause, green_lost_abe);
    // The DSD port reports two queues: 0 blue, 1 green.
    let ports = col_str(&abe.queues, "port");
    let rows: Vec<u64> = ports
        .iter()
        .zip(col_u64(&abe.queues, "queue"))
        .filter(|(p, _)| *p == "R1->R2")
        .map(|(_, q)| q)
        .collect();
    assert_eq!(rows, [0, 1]);
}

fn refused(queue: &str) -> ConfigError {
    let text = dumbbell(queue, "");
    scenario::from_toml(&text).expect_err("must be refused")
}

#[test]
fn dsd_errors_name_the_key_value_and_rule() {
    let q = "link[2].queue";
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{ type = "dsd", buffer = "75KB", d = "0ms" }"#,
            "d",
            "greater than 0s",
        ),
        (
            r#"{ type = "dsd", buffer = "0p", d = "10ms" }"#,
            "buffer",
            "buffer must be greater than 0",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", green_dscp = 2 }"#,
            "green_dscp",
            "xxxx11 or xxxx01",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", green_dscp = "AF11" }"#,
            "green_dscp",
            "pools",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", green_dscp = 59 }"#,
            "green_dscp",
            "below 0x38",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", ecn = true }"#,
            "ecn",
            "add red",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", red = { min_th = "5p", max_th = "40KB", max_p = 0.1, wq = 0.002 } }"#,
            "red.max_th",
            "same unit",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", red = { min_th = "40KB", max_th = "40KB", max_p = 0.1, wq = 0.002 } }"#,
            "red.max_th",
            "greater than min_th",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", red = { min_th = "40KB", max_th = "80KB", max_p = 0.1, wq = 0.002 } }"#,
            "red.max_th",
            "must not exceed",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", red = { min_th = "4KB", max_th = "8KB", max_p = 0, wq = 0.002 } }"#,
            "red.max_p",
            "(0, 1]",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", red = { min_th = "4KB", max_th = "8KB", wq = 1 } }"#,
            "red.wq",
            "(0, 1)",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", red = { min_th = "4KB", max_th = "8KB", mean_pkt_size = "0B" } }"#,
            "red.mean_pkt_size",
            "[1B, 65535B]",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", control = { period = "0s" } }"#,
            "control.period",
            "greater than 0s",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", control = { gain = -1 } }"#,
            "control.gain",
            "greater than 0",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", control = { rtt = "0ms" } }"#,
            "control.rtt",
            "greater than 0s",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", control = { weight = 0 } }"#,
            "control.weight",
            "must lie in (0, 1]",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", control = { target = 0 } }"#,
            "control.target",
            "greater than 0",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", control = { max_penalty = 1 } }"#,
            "control.max_penalty",
            "must lie in [0, 1)",
        ),
    ];
    for (queue, key, rule) in cases {
        let e = refused(queue);
        assert_eq!(e.path.to_string(), format!("{q}.{key}"), "{queue}: {e}");
        assert!(e.rule.contains(rule), "{queue}: {e}");
        assert!(e.line.is_some(), "{queue}: {e}");
    }
    // Schema errors: unknown keys, missing keys, out-of-range fractions.
    for (queue, text) in [
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", dd = "1ms" }"#,
            "unknown field `dd`",
        ),
        (r#"{ type = "dsd", buffer = "75KB" }"#, "missing field `d`"),
        (r#"{ type = "dsd", buffer = "75KB", d = "10" }"#, "\"10\" has no unit"),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", control = { periodd = "1s" } }"#,
            "unknown field `periodd`",
        ),
        (
            r#"{ type = "dsd", buffer = "75KB", d = "10ms", red = { min_th = "4KB", max_th = "8KB", w_q = 0.002 } }"#,
            "unknown field `w_q`",
        ),
    ] {
        let e = refused(queue);
        assert!(e.to_string().contains(text), "{queue}: {e}");
    }
}

#[test]
fn dsd_scenario_syntax_round_trips() {
    let queue = r#"{ type = "dsd", buffer = "100p", d = "20ms", g = 0.5, early_drop = false, green_dscp = 0b001011, ecn = true, red = { min_th = "20p", max_th = "60p", max_p = 0.1, wq = 0.002 }, control = { period = "500ms", gain = 0.05, rtt = "80ms", max_penalty = 0.2 } }"#;
    let sc = scenario::from_toml(&dumbbell(queue, FLOWS.replace("GREEN", "11").as_str())).expect("valid");
    let canonical = scenario::canonical_toml(&sc);
    let again = scenario::from_toml(&canonical).expect("canonical form is valid");
    assert_eq!(scenario::canonical_toml(&again), canonical);
    assert!(canonical.contains("type = \"dsd\""), "{canonical}");
}

// ---------------------------------------------------------------------------------------
// Throughput transparency with TCP-friendly sources

/// `n_blue` blue TFRC sources from S1 and one test TFRC source from S2, both 20 ms from R1,
/// through the bottleneck R1 -> R2 (1 Mbit/s, 50 ms) with `queue`. The test source is
/// entirely green (`green = 1`) or entirely blue.
fn transparency_scenario(queue: &str, test_green: bool, n_blue: u32, seconds: u64) -> String {
    let green = if test_green { "1.0" } else { "0.0" };
    // Blue sources start 250 ms apart, so that they do not move in lockstep.
    let blue: String = (0..n_blue)
        .map(|i| {
            format!(
                "[[flow]]\nname = \"blue{i}\"\nsrc = \"S1\"\ndst = \"D\"\nstart = \"{}ms\"\n\
                 app = {{ type = \"tfrc\", size = \"1000B\" }}\n",
                250 * i
            )
        })
        .collect();
    format!(
        r#"
duration = "{seconds}s"
warmup = "20s"
[nodes]
hosts = ["S1", "S2", "D"]
routers = ["R1", "R2"]
[[link]]
from = "S1"
to = "R1"
rate = "10Mbps"
delay = "20ms"
[[link]]
from = "S2"
to = "R1"
rate = "10Mbps"
delay = "20ms"
[[link]]
from = "R1"
to = "R2"
rate = "1Mbps"
delay = "50ms"
queue = {queue}
[[link]]
from = "R2"
to = "D"
rate = "10Mbps"
delay = "1ms"
{blue}
[[flow]]
name = "test"
src = "S2"
dst = "D"
start = "100ms"
app = {{ type = "tfrc", size = "1000B", green = {green} }}
"#
    )
}

struct Outcome {
    test_bps: f64,
    blue_bps: f64,
    test_delay_ms: f64,
    g: f64,
}

fn transparency_run(queue: &str, test_green: bool, n_blue: u32, seconds: u64, seed: u64) -> Outcome {
    let sc = scenario::from_toml(&transparency_scenario(queue, test_green, n_blue, seconds))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut sim = scenario::build(&sc, seed).expect("builds");
    sim.run();
    let w = sim.window.length().as_secs_f64();
    let bps = |i: usize| sim.flows[i].stats.delivered_bytes as f64 * 8.0 / w;
    let n = sim.flows.len();
    let port = sim.net.ports.iter().find(|p| p.name == "R1->R2").expect("bottleneck");
    let g = match &port.qdisc {
        dsim_core::sched::Qdisc::Dsd(d) => d.g(),
        _ => f64::NAN,
    };
    Outcome {
        test_bps: bps(n - 1),
        blue_bps: (0..n - 1).map(bps).sum::<f64>() / (n - 1) as f64,
        test_delay_ms: sim.flows[n - 1].stats.delay.mean() / 1e6,
        g,
    }
}

/// The ratio of the test source's throughput green to blue, and the other (blue) sources'
/// mean throughput in the two runs: (ratio, others when the test source is blue, others
/// when it is green, g at the end of the green run).
fn green_over_blue(queue: &str, n_blue: u32, seed: u64) -> (f64, f64, f64, f64) {
    let b = transparency_run(queue, false, n_blue, 300, seed);
    let g = transparency_run(queue, true, n_blue, 300, seed);
    eprintln!(
        "{queue}, {n_blue} blue, seed {seed}: test source {:.0} bit/s blue, {:.0} bit/s green \
         (mean delay {:.0} -> {:.0} ms); other sources {:.0} -> {:.0} bit/s; g {:.2}",
        b.test_bps, g.test_bps, b.test_delay_ms, g.test_delay_ms, b.blue_bps, g.blue_bps, g.g
    );
    (g.test_bps / b.test_bps, b.blue_bps, g.blue_bps, g.g)
}

/// The draft's bottleneck (1 Mbit/s, 75 KB) with d = 20 ms, 4 blue TFRC sources, and with
/// 8 blue sources and d = 10 ms; 300 s, warm-up 20 s.
const SETTINGS: [(u32, &str); 2] = [(4, "20ms"), (8, "10ms")];

#[test]
fn without_the_control_loop_a_green_tfrc_source_gets_more_than_blue() {
    // Section 2: "Interpreting TCP-friendliness by the loss-throughput formula [...], it is
    // quite possible that, by becoming green, a source would be allowed a higher data rate,
    // due to the reduction in round trip time. Such a source would generate more packets
    // than if it was blue, and there is the risk that, in some cases, it might hurt blue."
    // Here the green source's queueing delay is at most d against up to 600 ms for blue, and
    // it gets 2.4 (4 sources) and 2.8 (8 sources) times its blue throughput, at the other
    // sources' expense.
    for (n, d) in SETTINGS {
        let queue = format!(r#"{{ type = "dsd", buffer = "75KB", d = "{d}" }}"#);
        let (ratio, others_blue, others_green, _) = green_over_blue(&queue, n, 1);
        assert!(ratio > 1.5, "green/blue = {ratio}");
        assert!(others_green < others_blue);
    }
}

#[test]
fn the_loop_state_reaches_the_results() {
    // queues: dsd_g_mean / dsd_penalty_mean / dsd_g / dsd_penalty on both rows of the DSD
    // ports (the bottleneck's queue applies both ways) and NaN elsewhere; dsd_control: one
    // row per period boundary of the loaded direction (1 s periods over a 40 s run: about
    // 40; the reverse port sees only feedback, blue, and holds), g in [0, 1], g and
    // penalty never both positive.
    let queue = r#"{ type = "dsd", buffer = "75KB", d = "20ms", control = {} }"#;
    let sc = scenario::from_toml(&transparency_scenario(queue, true, 4, 40)).unwrap_or_else(|e| panic!("{e}"));
    let t = dsim_core::run(&sc, 1, 1, 1).expect("runs");
    let ports = col_str(&t.queues, "port");
    let g_mean = col_f64(&t.queues, "dsd_g_mean");
    let pen = col_f64(&t.queues, "dsd_penalty");
    for (i, p) in ports.iter().enumerate() {
        if p == "R1->R2" || p == "R2->R1" {
            assert!((0.0..=1.0).contains(&g_mean[i]) && (0.0..0.5 + 1e-12).contains(&pen[i]));
        } else {
            assert!(g_mean[i].is_nan() && pen[i].is_nan());
        }
    }
    let forward: Vec<bool> = col_str(&t.dsd_control, "port").iter().map(|p| p == "R1->R2").collect();
    let times: Vec<f64> = col_f64(&t.dsd_control, "time_s")
        .into_iter()
        .zip(&forward)
        .filter_map(|(t, f)| f.then_some(t))
        .collect();
    assert!((38..=40).contains(&times.len()), "{} rows", times.len());
    assert!(times.windows(2).all(|w| w[1] > w[0]));
    let g = col_f64(&t.dsd_control, "g");
    let penalty = col_f64(&t.dsd_control, "penalty");
    assert!(g.iter().all(|g| (0.0..=1.0).contains(g)));
    assert!(g.iter().zip(&penalty).all(|(g, p)| *g == 0.0 || *p == 0.0));
    // The loop acted: the green source's advantage pushes g below its initial 1.
    assert!(g.iter().any(|g| *g < 1.0));
    // Without a loop the table is empty (with its columns) and g is the configured one.
    let queue = r#"{ type = "dsd", buffer = "75KB", d = "20ms", g = 0.25 }"#;
    let sc = scenario::from_toml(&transparency_scenario(queue, true, 1, 30)).unwrap_or_else(|e| panic!("{e}"));
    let t = dsim_core::run(&sc, 1, 1, 1).expect("runs");
    assert_eq!(t.dsd_control.rows(), 0);
    assert!(t.dsd_control.column("penalty").is_some());
    let rows: Vec<usize> = (0..t.queues.rows())
        .filter(|&i| col_str(&t.queues, "port")[i] == "R1->R2")
        .collect();
    for i in rows {
        assert_eq!(col_f64(&t.queues, "dsd_g_mean")[i], 0.25);
        assert_eq!(col_f64(&t.queues, "dsd_penalty_mean")[i], 0.0);
    }
}

#[test]
fn the_control_loop_gives_throughput_transparency_to_blue() {
    // Section 2: "the ABE node must ensure that an entirely green flow gets a lesser or equal
    // throughput than if it were blue". With the control loop (defaults: 1 s period, gain
    // 0.1, R0 = 100 ms, target 0.9, green penalty up to 0.5), the green source gets less
    // than as blue (0.71 to 0.90 of it in these runs), and the blue sources no less than
    // when it was blue.
    for (n, d) in SETTINGS {
        for seed in [1, 2] {
            let queue = format!(r#"{{ type = "dsd", buffer = "75KB", d = "{d}", control = {{}} }}"#);
            let (ratio, others_blue, others_green, g) = green_over_blue(&queue, n, seed);
            assert!(ratio <= 1.0, "green/blue = {ratio}");
            assert!(others_green >= others_blue, "{others_green} < {others_blue}");
            assert!((0.0..=1.0).contains(&g));
        }
    }
}

#[test]
fn the_green_bias_alone_cannot_restore_transparency_here() {
    // The loop restricted to the draft's actuator (max_penalty = 0) drives g to 0, yet green
    // still waits at most d, far less than blue: the green source keeps more than 1.5 times
    // its blue throughput. This is why dsim's loop adds the green penalty (control.rs).
    for (n, d) in SETTINGS {
        let queue = format!(r#"{{ type = "dsd", buffer = "75KB", d = "{d}", control = {{ max_penalty = 0 }} }}"#);
        let (ratio, _, _, g) = green_over_blue(&queue, n, 1);
        assert!(g < 0.05, "g = {g}");
        assert!(ratio > 1.5, "green/blue = {ratio}");
    }
}

#[test]
fn an_adaptive_source_can_mix_colours() {
    // Half of the test source's packets green: the DSD port sees both colours from it and
    // the source counts exactly half of each. (Green and blue packets of one flow wait in
    // different queues, so they arrive out of order: the TFRC receiver's loss
    // interpolation sees a packet before a hole arrive after one behind it.)
    let text = transparency_scenario(r#"{ type = "dsd", buffer = "75KB", d = "20ms" }"#, false, 2, 30)
        .replace("green = 0.0", "green = 0.5");
    let sc = scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = scenario::build(&sc, 1).expect("builds");
    sim.run();
    let test = sim.flows.last().expect("test flow");
    let c = test.tfrc().expect("a TFRC flow").counters;
    assert!(c.green_sent > 100 && c.green_sent.abs_diff(c.blue_sent) <= 1, "{c:?}");
    assert!(c.feedback_received > 0 && c.feedback_received <= c.feedback_sent);
    let port = sim.net.ports.iter().find(|p| p.name == "R1->R2").expect("bottleneck");
    // Only the test source sends green: the green queue carries its green half, about
    // half of what it sent in the window (53 of 105 packets in this run).
    let (green, sent) = (port.stats[1].departures_pkts, test.stats.sent_pkts);
    assert!(
        sent > 50 && (green as f64 / sent as f64 - 0.5).abs() < 0.1,
        "green queue: {green} of {sent}"
    );
}

#[test]
fn ecn_capable_tfrc_sources_get_marks_instead_of_red_drops() {
    // RED on the virtual queue with ECN: ECN-capable TFRC sources see CE marks, counted by
    // the port, and no RED drop; the marks drive their rate (they count as losses), so the
    // virtual queue stays near RED's thresholds instead of overflowing.
    let queue = r#"{ type = "dsd", buffer = "75KB", d = "20ms", ecn = true, red = { min_th = "15KB", max_th = "45KB", max_p = 0.1, wq = 0.002 } }"#;
    let text = transparency_scenario(queue, true, 4, 120)
        .replace(r#"size = "1000B" }"#, r#"size = "1000B", ecn = true }"#)
        .replace("green = 1.0 }", "green = 1.0, ecn = true }");
    let sc = scenario::from_toml(&text).unwrap_or_else(|e| panic!("{e}"));
    let t = dsim_core::run(&sc, 1, 1, 1).expect("runs");
    let ports = col_str(&t.queues, "port");
    let marks = col_u64(&t.queues, "marks_pkts");
    let red = col_u64(&t.queues, "drop_dsd_red_pkts");
    let overflow = col_u64(&t.queues, "drop_dsd_overflow_pkts");
    let rows: Vec<usize> = (0..ports.len()).filter(|&i| ports[i] == "R1->R2").collect();
    eprintln!(
        "marks {:?}, red drops {:?}, overflow {:?}",
        rows.iter().map(|&i| marks[i]).collect::<Vec<_>>(),
        rows.iter().map(|&i| red[i]).collect::<Vec<_>>(),
        rows.iter().map(|&i| overflow[i]).collect::<Vec<_>>()
    );
    assert!(rows.iter().all(|&i| marks[i] > 0), "both colours marked");
    assert!(rows.iter().all(|&i| red[i] == 0 && overflow[i] == 0));
    let thr = col_f64(&t.flows, "throughput_bps");
    assert!(thr.iter().sum::<f64>() > 900_000.0, "{thr:?}");
}

// ---------------------------------------------------------------------------------------
// Local transparency to blue through `replay` (issue 20): all-blue DSD against the flat
// queue it stands for, with ties between arrivals and ends of transmission.

mod through_replay {
    use dsim_core::packet::{Dscp, Ecn};
    use dsim_core::replay::{self, Arrival, Outcome};
    use dsim_core::stats::DropCause;
    use dsim_core::time::{Rate, SimTime};
    use proptest::prelude::*;

    const C: Rate = Rate(1_000_000);

    fn replayed(queue: &str, trace: &[Arrival]) -> Vec<Outcome> {
        let m = replay::mechanism_from_toml(queue, Some(C)).unwrap_or_else(|e| panic!("{queue}: {e}"));
        replay::replay(&m, trace, &[], 7).expect("replays")
    }

    fn blue(time_ns: u64, size: u32) -> Arrival {
        Arrival {
            time: SimTime(time_ns),
            size,
            dscp: Dscp::BE,
            ..Default::default()
        }
    }

    /// What the flat queue's verdict stands for in DSD's terms.
    fn as_dsd(cause: Option<DropCause>) -> Option<DropCause> {
        cause.map(|c| match c {
            DropCause::Overflow => DropCause::DsdOverflow,
            DropCause::Early | DropCause::Forced => DropCause::DsdRed,
            other => panic!("a flat queue does not drop for {other:?}"),
        })
    }

    /// Every packet: the same verdict (DSD's cause for the flat one's), the same ECN field
    /// on the way out (marked alike) and the same start and end of transmission.
    fn assert_same(dsd: &[Outcome], flat: &[Outcome]) -> Result<(), TestCaseError> {
        for (i, (d, f)) in dsd.iter().zip(flat).enumerate() {
            prop_assert_eq!(
                (d.dropped, d.ecn, d.depart, d.tx_end),
                (as_dsd(f.dropped), f.ecn, f.depart, f.tx_end),
                "packet {}",
                i
            );
        }
        Ok(())
    }

    #[test]
    fn the_three_packet_trace_of_issue_20() {
        // Two 125 B packets at 0, one at 1 ms, 1 Mbit/s (1 ms per packet), one packet of
        // waiting room. The first is on the wire until 1 ms, the second waits; the third
        // arrives at 1 ms, the instant the first ends: arrivals first, it finds the second
        // still waiting and the room full, in the flat FIFO and in DSD's virtual queue
        // alike. The second starts at 1 ms.
        let trace = [blue(0, 125), blue(0, 125), blue(1_000_000, 125)];
        let dsd = replayed(
            r#"type = "dsd"
buffer = "1p"
d = "3ms""#,
            &trace,
        );
        let fifo = replayed(
            r#"type = "droptail"
limit = "1p""#,
            &trace,
        );
        assert_same(&dsd, &fifo).unwrap();
        let ms = |t: Option<SimTime>| t.map(|t| t.0 / 1_000_000);
        let summary: Vec<_> = fifo.iter().map(|o| (ms(o.depart), ms(o.tx_end), o.dropped)).collect();
        assert_eq!(
            summary,
            [
                (Some(0), Some(1), None),
                (Some(1), Some(2), None),
                (None, None, Some(DropCause::Overflow))
            ]
        );
    }

    /// A random experiment: the buffer, RED (or none) on both sides, with ECN marking or
    /// not, and a trace whose times lie on a grid of 0.5 ms and whose sizes take multiples
    /// of it on the wire (125 B is 1 ms at 1 Mbit/s), so that arrivals often meet ends of
    /// transmission; 40 B packets (0.32 ms) break the grid now and then. Half the packets
    /// are ECN-capable.
    #[derive(Debug, Clone)]
    struct Case {
        buffer: String,
        overshoot: bool,
        red: Option<String>,
        ecn: bool,
        trace: Vec<Arrival>,
    }

    const SIZES: [u32; 6] = [125, 250, 375, 500, 1500, 40];

    fn case() -> impl Strategy<Value = Case> {
        // RED thresholds in packets, and then Buff in packets, up to 4 above max_th.
        let red = (1u32..=8, 1u32..=8, 0usize..4, 0usize..4, any::<bool>(), 0u32..=4);
        (
            prop_oneof![
                (1u32..=12).prop_map(|n| format!("{n}p")),
                (500u32..=6000).prop_map(|b| format!("{b}B"))
            ],
            any::<bool>(),
            proptest::option::weighted(0.5, red),
            any::<bool>(),
            proptest::collection::vec((0u64..=20, 0usize..SIZES.len(), any::<bool>()), 1..120),
        )
            .prop_map(|(mut buffer, overshoot, red, ecn, raw)| {
                let mut t = 0;
                let trace = raw
                    .into_iter()
                    .map(|(gap, size, ect)| {
                        // A gap of 0 (a burst) one time in four, else 0.5 to 8 ms: a mean of
                        // 3.2 ms against 3.7 ms of transmission, so that queues build up and
                        // empty.
                        t += gap.saturating_sub(4) * 500_000;
                        Arrival {
                            ecn: if ect { Ecn::Ect0 } else { Ecn::NotEct },
                            ..blue(t, SIZES[size])
                        }
                    })
                    .collect();
                let red = red.map(|(min_th, span, p, w, gentle, room)| {
                    let max_th = min_th + span;
                    buffer = format!("{}p", max_th + room);
                    let (max_p, wq) = ([0.02, 0.1, 0.5, 1.0][p], [0.002, 0.02, 0.2, 0.7][w]);
                    format!(
                        "min_th = \"{min_th}p\", max_th = \"{max_th}p\", max_p = {max_p:?}, wq = {wq:?}, gentle = {gentle}, mean_pkt_size = \"500B\""
                    )
                });
                let overshoot = buffer.ends_with('B') && overshoot;
                let ecn = red.is_some() && ecn;
                Case {
                    buffer,
                    overshoot,
                    red,
                    ecn,
                    trace,
                }
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Section 2 of the ABE draft: "a network where all sources are blue behaves as a
        /// flat best effort network". All-blue DSD accepts, drops, marks and schedules
        /// exactly what the flat drop-tail FIFO of Buff does (the `red` queue with the same
        /// RED, and ECN, when RED is on the virtual queue): same verdict, same ECN field,
        /// same start and end of transmission, packet by packet, ties included.
        #[test]
        fn all_blue_dsd_is_the_flat_queue(c in case()) {
            let (dsd, flat) = match &c.red {
                None => (
                    format!("type = \"dsd\"\nbuffer = \"{}\"\novershoot = {}\nd = \"5ms\"\n", c.buffer, c.overshoot),
                    format!("type = \"droptail\"\nlimit = \"{}\"\novershoot = {}\n", c.buffer, c.overshoot),
                ),
                // The `red` queue has no overshoot: a byte limit must fit the packet.
                Some(red) => (
                    format!("type = \"dsd\"\nbuffer = \"{}\"\nd = \"5ms\"\necn = {}\nred = {{ {red} }}\n", c.buffer, c.ecn),
                    format!("type = \"red\"\nlimit = \"{}\"\necn = {}\n{}\n", c.buffer, c.ecn, red.replace(", ", "\n")),
                ),
            };
            assert_same(&replayed(&dsd, &c.trace), &replayed(&flat, &c.trace))?;
        }
    }
}
