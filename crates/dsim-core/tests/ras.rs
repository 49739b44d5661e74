//! End-to-end checks of the rate adaptive shapers of RFC 2963 in the packet path: a RAS in
//! front of a three colour marker at a customer router (shaper -> meter -> marker, one
//! conditioner), fed by TCP and by CBR.

mod common;

use common::{run, str_col};
use dsim_core::results::{Column, Table, Tables};

fn row(t: &Table, keys: &[(&str, &str)]) -> usize {
    (0..t.rows())
        .find(|&r| keys.iter().all(|(k, v)| str_col(t, k)[r] == *v))
        .unwrap_or_else(|| panic!("no row {keys:?}"))
}

fn u(t: &Table, col: &str, r: usize) -> u64 {
    match t.column(col) {
        Some(Column::U64(v)) => v[r],
        other => panic!("no u64 column {col}: {other:?}"),
    }
}

fn f(t: &Table, col: &str, r: usize) -> f64 {
    match t.column(col) {
        Some(Column::F64(v)) => v[r],
        other => panic!("no f64 column {col}: {other:?}"),
    }
}

/// Four SACK flows from hosts A0-A3 (10 Mbit/s each) through customer router C (34 Mbit/s
/// to E) and a 20 Mbit/s bottleneck E -> D with 3-colour RIO, to B0-B3. C carries a trTCM
/// (CIR 2 Mbit/s, PIR 4 Mbit/s, `cbs`, PBS = 2 CBS) behind `shaper` (TOML inline table
/// or empty). Eight flows X -> Y, metered by a trTCM with CIR 14 Mbit/s and large
/// buckets, share the bottleneck.
fn customer(shaper: &str, cbs_kb: u64) -> String {
    let shaper = if shaper.is_empty() {
        String::new()
    } else {
        format!("shaper = {shaper}\n")
    };
    let mut s = String::from(
        r#"
duration = "30s"
warmup = "5s"
nodes = { hosts = ["A0", "A1", "A2", "A3", "B0", "B1", "B2", "B3", "X", "Y"], routers = ["C", "E", "D"] }
link = [
  { from = "C", to = "E", rate = "34Mbps", delay = "2ms", queue = { type = "droptail", limit = "1000p" } },
  { from = "X", to = "E", rate = "34Mbps", delay = "2ms", queue = { type = "droptail", limit = "1000p" } },
  { from = "E", to = "D", rate = "20Mbps", delay = "10ms", forward = { queue = { type = "mred", limit = "300p", wq = 0.002, mean_pkt_size = "1500B", precedence = [
      { dscp = ["AF11"], min_th = "60p", max_th = "120p", max_p = 0.02 },
      { dscp = ["AF12"], min_th = "30p", max_th = "60p", max_p = 0.05 },
      { min_th = "15p", max_th = "30p", max_p = 0.1 } ] } } },
  { from = "D", to = "Y", rate = "34Mbps", delay = "2ms" },
"#,
    );
    for k in 0..4 {
        s += &format!(
            "  {{ from = \"A{k}\", to = \"C\", rate = \"10Mbps\", delay = \"1ms\" }},\n  {{ from = \"D\", to = \"B{k}\", rate = \"10Mbps\", delay = \"1ms\" }},\n"
        );
    }
    s += "]\nflow = [\n";
    let tcp = r#"tcp = { variant = "sack", window = "65535B", delayed_ack = false, counting = "packets" }"#;
    for k in 0..4 {
        s += &format!(
            "  {{ name = \"a{k}\", src = \"A{k}\", dst = \"B{k}\", start = {{ uniform = [\"0s\", \"1s\"] }}, app = {{ type = \"ftp\" }}, {tcp} }},\n"
        );
    }
    s += &format!(
        "  {{ name = \"x\", src = \"X\", dst = \"Y\", count = 8, start = {{ uniform = [\"0s\", \"1s\"] }}, app = {{ type = \"ftp\" }}, {tcp} }},\n]\n"
    );
    s += &format!(
        r#"
[[conditioner]]
name = "cust"
at = "C"
interface = "E"
{shaper}meter = {{ type = "trtcm", cir = "2Mbps", cbs = "{cbs_kb}KB", pir = "4Mbps", pbs = "{}KB" }}
green = {{ mark = "AF11" }}
yellow = {{ mark = "AF12" }}
red = {{ mark = "AF13" }}

[[conditioner]]
name = "other"
at = "E"
side = "ingress"
interface = "X"
meter = {{ type = "trtcm", cir = "14Mbps", cbs = "100KB", pir = "28Mbps", pbs = "200KB" }}
green = {{ mark = "AF11" }}
yellow = {{ mark = "AF12" }}
red = {{ mark = "AF13" }}
"#,
        2 * cbs_kb
    );
    s
}

const TRRAS: &str = r#"{ type = "trras", cir = "2Mbps", pir = "4Mbps", cir_th = "5KB", pir_th = "10KB", mir_th = "20KB", buffer = "256KB", k = "100ms" }"#;
const G_TRRAS: &str = r#"{ type = "g_trras", cir = "2Mbps", pir = "4Mbps", cir_th = "5KB", pir_th = "10KB", mir_th = "20KB", buffer = "256KB", k = "100ms" }"#;

/// (green bytes / all metered bytes, green rate in bit/s, shaper mean wait ms).
fn colours(t: &Tables) -> (f64, f64, f64) {
    let c = &t.conditioners;
    let bytes = |colour: &str| u(c, "bytes", row(c, &[("conditioner", "cust"), ("color", colour)])) as f64;
    let (g, y, r) = (bytes("green"), bytes("yellow"), bytes("red"));
    let wait = if (0..c.rows()).any(|i| str_col(c, "color")[i] == "shaper") {
        f(
            c,
            "mean_wait_ms",
            row(c, &[("conditioner", "cust"), ("color", "shaper")]),
        )
    } else {
        0.0
    };
    (g / (g + y + r), g * 8.0 / 25.0, wait)
}

#[test]
fn trras_raises_the_green_share_at_a_small_cbs() {
    // RFC 2963 A.2: with CBS = 3 KB (two packets) the bursts of TCP overflow the committed
    // bucket; behind a trRAS the meter sees a smoothed stream and colours about the CIR
    // green.
    let plain = colours(&run(&customer("", 3)));
    let shaped = colours(&run(&customer(TRRAS, 3)));
    assert!(shaped.0 > plain.0, "green share: shaped {shaped:?}, unshaped {plain:?}");
    assert!(
        shaped.1 > 0.95 * 2e6,
        "shaped green rate {} bit/s, CIR 2 Mbit/s",
        shaped.1
    );
    assert!(plain.1 < 0.9 * 2e6, "unshaped green rate {} bit/s", plain.1);
}

#[test]
fn green_trras_delays_less_than_trras_at_a_large_cbs() {
    // RFC 2963 3.1: the trRAS "could unnecessarily delay a packet although there are
    // sufficient tokens available to color the packet green"; the G-trRAS releases such a
    // packet at T2. With CBS = 100 KB the tokens are often there: shorter waits.
    let tr = colours(&run(&customer(TRRAS, 100)));
    let g = colours(&run(&customer(G_TRRAS, 100)));
    assert!(g.2 < 0.5 * tr.2, "mean wait: G-trRAS {} ms, trRAS {} ms", g.2, tr.2);
}

#[test]
fn a_stream_below_the_cir_passes_without_waiting() {
    // CBR at 1 Mbit/s (1500 B every 12 ms +-10 %) into an srRAS with CIR 2 Mbit/s: at
    // every arrival the shaper has emptied at least 10.8 ms x 2 Mbit/s = 2700 B since the
    // previous release (the first packet, at 100 ms, finds 25 KB), more than a packet:
    // nothing waits, and the srTCM behind it colours everything green.
    let toml = r#"
duration = "10s"
nodes = { hosts = ["A", "B"], routers = ["R"] }
link = [
  { from = "A", to = "R", rate = "10Mbps", delay = "1ms" },
  { from = "R", to = "B", rate = "10Mbps", delay = "1ms" },
]
flow = [ { name = "cbr", src = "A", dst = "B", start = "100ms", app = { type = "cbr", rate = "1Mbps", size = "1500B", spacing_variation = "10%" } } ]
conditioner = [ { name = "ras", at = "R", interface = "B",
  shaper = { type = "g_srras", cir = "2Mbps", cir_th = "3KB", mir_th = "6KB", buffer = "30KB", k = "100ms" },
  meter = { type = "srtcm", cir = "2Mbps", cbs = "3KB", ebs = "3KB" } } ]
"#;
    let t = run(toml);
    let c = &t.conditioners;
    let sh = row(c, &[("conditioner", "ras"), ("color", "shaper")]);
    assert!(u(c, "pkts", sh) > 800);
    assert_eq!(u(c, "pkts", sh), u(c, "passed_pkts", sh));
    assert_eq!(f(c, "mean_wait_ms", sh), 0.0);
    let green = row(c, &[("conditioner", "ras"), ("color", "green")]);
    assert_eq!(u(c, "pkts", green), u(c, "pkts", sh));
}
