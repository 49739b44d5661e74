//! Result tables: plain columns, handed to Python as Arrow and written as Parquet or CSV.
//!
//! Column names carry their unit (`_pkts`, `_bytes`, `_bps`, `_ms`, `_s`).

mod abe;
mod af;
mod aqm;
mod cbq;
mod record;

pub use record::add_recorded;

use crate::packet::Color;
use crate::sim::{DropSite, Simulation};
use crate::stats::{Distribution, DropCause, Window};
use crate::time::Duration;
use crate::transport::tcp::TcpFlow;

/// The version of dsim, written in every run's `runs` table.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Debug)]
pub enum Column {
    U64(Vec<u64>),
    F64(Vec<f64>),
    Str(Vec<String>),
}

/// Columns compare bit for bit (a NaN equals the same NaN): "same seed, same tables" means
/// identical bits, and NaN marks a statistic with no samples.
impl PartialEq for Column {
    fn eq(&self, other: &Column) -> bool {
        match (self, other) {
            (Column::U64(a), Column::U64(b)) => a == b,
            (Column::F64(a), Column::F64(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
            }
            (Column::Str(a), Column::Str(b)) => a == b,
            _ => false,
        }
    }
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn extend(&mut self, other: &Column) {
        match (self, other) {
            (Column::U64(a), Column::U64(b)) => a.extend_from_slice(b),
            (Column::F64(a), Column::F64(b)) => a.extend_from_slice(b),
            (Column::Str(a), Column::Str(b)) => a.extend_from_slice(b),
            _ => panic!("column types differ"),
        }
    }
}

/// A table as named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.1.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.0 == name).map(|c| &c.1)
    }

    /// Appends the rows of `other`, which must have the same columns.
    pub fn append(&mut self, other: &Table) {
        if self.columns.is_empty() {
            *self = other.clone();
            return;
        }
        for ((n, a), (m, b)) in self.columns.iter_mut().zip(&other.columns) {
            debug_assert_eq!(n, m);
            a.extend(b);
        }
    }
}

/// Builds a table row by row, keeping the column order of the first row.
#[derive(Default)]
pub(crate) struct TableBuilder {
    pub(crate) table: Table,
    col: usize,
}

impl TableBuilder {
    fn push(&mut self, name: &str, value: Cell) {
        if self.table.columns.len() <= self.col {
            let empty = match value {
                Cell::U(_) => Column::U64(Vec::new()),
                Cell::F(_) => Column::F64(Vec::new()),
                Cell::S(_) => Column::Str(Vec::new()),
            };
            self.table.columns.push((name.to_string(), empty));
        }
        match (&mut self.table.columns[self.col].1, value) {
            (Column::U64(v), Cell::U(x)) => v.push(x),
            (Column::F64(v), Cell::F(x)) => v.push(x),
            (Column::Str(v), Cell::S(x)) => v.push(x),
            _ => panic!("column {name} changed type"),
        }
        self.col += 1;
    }
    pub(crate) fn u(&mut self, name: &str, v: u64) {
        self.push(name, Cell::U(v));
    }
    pub(crate) fn f(&mut self, name: &str, v: f64) {
        self.push(name, Cell::F(v));
    }
    pub(crate) fn s(&mut self, name: &str, v: impl Into<String>) {
        self.push(name, Cell::S(v.into()));
    }
    pub(crate) fn end_row(&mut self) {
        self.col = 0;
    }
}

enum Cell {
    U(u64),
    F(f64),
    S(String),
}

/// What identifies one run among replications and sweep points.
#[derive(Clone, Debug)]
pub struct RunInfo {
    pub replication: u64,
    pub seed: u64,
    pub base_seed: u64,
    pub scenario_hash: String,
    pub wall_s: f64,
}

/// The tables of one or more runs.
#[derive(Clone, Default, PartialEq)]
pub struct Tables {
    pub flows: Table,
    pub queues: Table,
    pub drops: Table,
    pub run: Table,
    /// One row per conditioner instance and colour (see [`conditioner_table`]).
    pub conditioners: Table,
    /// Sampled RED / MRED averages (queues with `series` set).
    pub queue_series: Table,
    /// TCP time series (cwnd, ssthresh, RTT) of the flows that asked for them.
    pub series: Table,
    /// DSD control-loop samples (g, penalty, ratio) per period (docs/abe.md).
    pub dsd_control: Table,
    /// What a run recorded on request (`[record]`, [`record`]); no columns otherwise.
    pub flow_series: Table,
    pub port_series: Table,
    pub conditioner_series: Table,
    pub distributions: Table,
    /// Per CoDel / PIE / FQ-CoDel queue: counters and final state; their sampled state
    /// (queues with `series` set). No columns in a run without such queues.
    pub aqm: Table,
    pub aqm_series: Table,
    /// Per CBQ leaf class: what the link-sharing scheduler did. No columns without CBQ.
    pub cbq: Table,
}

/// As derived, but the recorded tables, the AQM tables and CBQ's appear only when they have
/// columns: a run that records nothing and has no CoDel, PIE, FQ-CoDel or CBQ queue prints
/// (and so fingerprints) as it did before they existed.
impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("Tables");
        for (name, table) in self.named() {
            if !table.columns.is_empty() || !Self::optional(name) {
                s.field(name, table);
            }
        }
        s.finish()
    }
}

impl Tables {
    pub fn append(&mut self, other: &Tables) {
        self.flows.append(&other.flows);
        self.queues.append(&other.queues);
        self.drops.append(&other.drops);
        self.run.append(&other.run);
        self.conditioners.append(&other.conditioners);
        self.queue_series.append(&other.queue_series);
        self.series.append(&other.series);
        self.dsd_control.append(&other.dsd_control);
        self.flow_series.append(&other.flow_series);
        self.port_series.append(&other.port_series);
        self.conditioner_series.append(&other.conditioner_series);
        self.distributions.append(&other.distributions);
        self.aqm.append(&other.aqm);
        self.aqm_series.append(&other.aqm_series);
        self.cbq.append(&other.cbq);
    }

    /// The tables only a run that records has ([`record`]).
    pub const RECORDED: [&'static str; 4] = ["flow_series", "port_series", "conditioner_series", "distributions"];

    /// The tables only a run with a CoDel, PIE or FQ-CoDel queue has.
    pub const AQM: [&'static str; 2] = ["aqm", "aqm_series"];

    /// The table only a run with a CBQ port has.
    pub const CBQ: &'static str = "cbq";

    /// Is `name` a table that a run may lack (no columns): recorded, AQM or CBQ?
    pub fn optional(name: &str) -> bool {
        Self::RECORDED.contains(&name) || Self::AQM.contains(&name) || name == Self::CBQ
    }

    /// The first 16 hex digits of the SHA-256 of every table, bit for bit (Debug prints
    /// floats in their shortest round-trip form: equal text, equal bits). What the golden
    /// test (tests/golden.rs) and the `run_scenario` example compare.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(format!("{self:?}").as_bytes());
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// Every table's name, in [`Tables::named`]'s order (the Python package reads them
    /// from here: `dsim._dsim.TABLES`).
    pub fn names() -> [&'static str; 15] {
        Tables::default().named().map(|(name, _)| name)
    }

    /// Every table by name: the eight every run has, then the recorded ones, then the
    /// AQM ones, then CBQ's.
    pub fn named(&self) -> [(&'static str, &Table); 15] {
        [
            ("flows", &self.flows),
            ("queues", &self.queues),
            ("drops", &self.drops),
            ("run", &self.run),
            ("conditioners", &self.conditioners),
            ("queue_series", &self.queue_series),
            ("series", &self.series),
            ("dsd_control", &self.dsd_control),
            ("flow_series", &self.flow_series),
            ("port_series", &self.port_series),
            ("conditioner_series", &self.conditioner_series),
            ("distributions", &self.distributions),
            ("aqm", &self.aqm),
            ("aqm_series", &self.aqm_series),
            ("cbq", &self.cbq),
        ]
    }
}

fn ms(ns: Option<u64>) -> f64 {
    ns.map_or(f64::NAN, |v| v as f64 / 1e6)
}

fn distribution_columns(b: &mut TableBuilder, prefix: &str, d: &Distribution) {
    b.f(&format!("{prefix}_mean_ms"), d.mean() / 1e6);
    b.f(&format!("{prefix}_min_ms"), ms(d.min()));
    for (q, name) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99")] {
        b.f(&format!("{prefix}_{name}_ms"), ms(d.quantile(q)));
    }
    b.f(&format!("{prefix}_max_ms"), ms(d.max()));
}

/// RFC 2598 appendix A.3 reports jitter "in percent of a packet time at the subscribed
/// rate": `packet_time_ms` (size * 8 / rate of a CBR source) and the 50th and 90th
/// percentiles of the jitter as % of it; NaN for flows without a subscribed rate.
fn jitter_pct_columns(b: &mut TableBuilder, jitter: &Distribution, packet_time: Option<Duration>) {
    let pt = packet_time.map_or(f64::NAN, |d| d.0 as f64);
    b.f("packet_time_ms", pt / 1e6);
    for (q, name) in [(0.5, "p50"), (0.9, "p90")] {
        let pct = jitter.quantile(q).map_or(f64::NAN, |v| 100.0 * v as f64 / pt);
        b.f(&format!("jitter_{name}_pct"), pct);
    }
}

fn per_second(bytes: u64, w: &Window) -> f64 {
    bytes as f64 * 8.0 / w.length().as_secs_f64()
}

/// Collects the tables of a finished run.
pub fn collect(sim: &Simulation, info: &RunInfo) -> Tables {
    let w = sim.window;
    let nodes = &sim.net.nodes;

    let mut f = TableBuilder::default();
    for flow in &sim.flows {
        let s = &flow.stats;
        f.u("replication", info.replication);
        f.s("flow", flow.name.clone());
        f.s("group", flow.group.clone());
        f.s("src", nodes[flow.src as usize].name.clone());
        f.s("dst", nodes[flow.dst as usize].name.clone());
        f.s("transport", flow.transport_name());
        f.s("dscp", flow.dscp().to_string());
        f.u("sent_pkts", s.sent_pkts);
        f.u("sent_bytes", s.sent_bytes);
        f.u("delivered_pkts", s.delivered_pkts);
        f.u("delivered_bytes", s.delivered_bytes);
        f.u("dropped_pkts", s.drops.total_pkts());
        f.u("dropped_bytes", s.drops.total_bytes());
        for c in DropCause::ALL {
            f.u(&format!("drop_{}_pkts", c.name()), s.drops.pkts[c as usize]);
        }
        for c in Color::ALL {
            let (k, n) = (c as usize, c.name());
            f.u(&format!("{n}_sent_pkts"), s.color_sent_pkts[k]);
            f.u(&format!("{n}_delivered_pkts"), s.color_delivered_pkts[k]);
            f.u(&format!("{n}_delivered_bytes"), s.color_delivered_bytes[k]);
            f.u(&format!("{n}_dropped_pkts"), s.color_dropped_pkts[k]);
        }
        f.f("offered_bps", per_second(s.sent_bytes, &w));
        f.f("throughput_bps", per_second(s.delivered_bytes, &w));
        distribution_columns(&mut f, "delay", &s.delay);
        distribution_columns(&mut f, "jitter", &s.jitter);
        f.u("jitter_pairs", s.jitter.count());
        jitter_pct_columns(&mut f, &s.jitter, flow.app().and_then(|a| a.packet_time()));
        tcp_columns(&mut f, flow.tcp(), &w);
        f.end_row();
    }

    let mut q = TableBuilder::default();
    for port in &sim.net.ports {
        let precs = port.qdisc.precedences();
        for (i, c) in port.stats.iter().enumerate() {
            let (mean_p, mean_b) = c.mean_len(&w);
            q.u("replication", info.replication);
            q.s("node", nodes[port.node as usize].name.clone());
            q.s("port", port.name.clone());
            q.u("queue", (i / precs) as u64);
            q.u("precedence", (i % precs) as u64);
            q.u("arrivals_pkts", c.arrivals_pkts);
            q.u("arrivals_bytes", c.arrivals_bytes);
            q.u("departures_pkts", c.departures_pkts);
            q.u("departures_bytes", c.departures_bytes);
            q.u("dropped_pkts", c.drops.total_pkts());
            for cause in DropCause::ALL {
                q.u(&format!("drop_{}_pkts", cause.name()), c.drops.pkts[cause as usize]);
            }
            q.u("marks_pkts", c.marks_pkts);
            q.f("mean_len_pkts", mean_p);
            q.f("mean_len_bytes", mean_b);
            q.f("throughput_bps", per_second(c.departures_bytes, &w));
            abe::dsd_queue_columns(&mut q, &port.qdisc, &w);
            q.end_row();
        }
    }

    let mut d = TableBuilder::default();
    let mut ledger: Vec<_> = sim.drops.iter().collect();
    ledger.sort_by_key(|(k, _)| **k);
    for ((flow, site, cause), (pkts, bytes)) in ledger {
        d.u("replication", info.replication);
        d.s("flow", sim.flows[*flow as usize].name.clone());
        match site {
            DropSite::Port(p) => {
                d.s("site", sim.net.ports[*p as usize].name.clone());
            }
            DropSite::Conditioner(i) => d.s("site", af::instance_name(sim, *i)),
        }
        d.s("cause", cause.name());
        d.u("pkts", *pkts);
        d.u("bytes", *bytes);
        d.end_row();
    }
    if d.table.columns.is_empty() {
        d.table = empty_drops_table();
    }

    let mut r = TableBuilder::default();
    r.u("replication", info.replication);
    r.u("seed", info.seed);
    r.u("base_seed", info.base_seed);
    r.s("scenario_hash", info.scenario_hash.clone());
    r.s("version", VERSION);
    r.u("events", sim.events_processed);
    r.f("sim_time_s", sim.end.as_secs_f64());
    r.f("window_s", w.length().as_secs_f64());
    r.f("wall_s", info.wall_s);
    r.u("peak_packets", sim.pkts.capacity_used() as u64);
    r.end_row();

    Tables {
        flows: f.table,
        queues: q.table,
        drops: d.table,
        run: r.table,
        conditioners: af::conditioner_table(sim, info),
        queue_series: af::queue_series_table(sim, info),
        series: series_table(sim, info),
        dsd_control: abe::dsd_control_table(sim, info),
        aqm: aqm::aqm_table(sim, info),
        aqm_series: aqm::aqm_series_table(sim, info),
        cbq: cbq::cbq_table(sim, info),
        ..Tables::default()
    }
}

/// The TCP columns of the flows table (zero or NaN for UDP flows).
fn tcp_columns(f: &mut TableBuilder, tcp: Option<&TcpFlow>, w: &Window) {
    let nan = f64::NAN;
    let (c, st) = match tcp {
        Some(t) => (Some(&t.sender.counters), Some(&t.stats)),
        None => (None, None),
    };
    let goodput = st.map_or(0, |s| s.goodput_bytes);
    f.u("goodput_bytes", goodput);
    f.f("goodput_bps", if tcp.is_some() { per_second(goodput, w) } else { nan });
    f.u("retransmitted_pkts", c.map_or(0, |c| c.retransmits));
    f.u("timeouts", c.map_or(0, |c| c.timeouts));
    f.u("fast_retransmits", c.map_or(0, |c| c.fast_retransmits));
    f.u("ecn_reductions", c.map_or(0, |c| c.ecn_reductions));
    // Mean of `count` values summing to `sum`, in units of `unit` (NaN without values).
    let mean = |sum: u128, count: u64, unit: f64| {
        if count == 0 {
            nan
        } else {
            sum as f64 / count as f64 / unit
        }
    };
    f.f("rtt_mean_ms", c.map_or(nan, |c| mean(c.rtt_sum_ns, c.rtt_samples, 1e6)));
    f.u("rtt_samples", c.map_or(0, |c| c.rtt_samples));
    f.u("dropped_ack_pkts", st.map_or(0, |s| s.dropped_reverse_pkts));
    f.u("transfers", st.map_or(0, |s| s.transfers));
    f.f(
        "transfer_time_mean_s",
        st.map_or(nan, |s| mean(s.transfer_time_ns, s.transfers, 1e9)),
    );
    f.f(
        "completion_s",
        st.and_then(|s| s.completion).map_or(nan, |d| d.as_secs_f64()),
    );
}

/// One row per recorded sample of each TCP flow that asked for a series; CUBIC's W_max and
/// K when one of those flows runs CUBIC, DCTCP's Alpha when one runs DCTCP.
fn series_table(sim: &Simulation, info: &RunInfo) -> Table {
    let recorded = |kind: &str| {
        sim.flows
            .iter()
            .filter_map(|f| f.tcp())
            .any(|t| t.series.is_some() && t.sender.cc.name() == kind)
    };
    let (cubic, dctcp) = (recorded("cubic"), recorded("dctcp"));
    let mut b = TableBuilder::default();
    for flow in &sim.flows {
        let Some(series) = flow.tcp().and_then(|t| t.series.as_ref()) else {
            continue;
        };
        for r in &series.rows {
            b.u("replication", info.replication);
            b.s("flow", flow.name.clone());
            b.f("time_s", r.t.as_secs_f64());
            b.u("cwnd_bytes", r.cwnd);
            b.u("ssthresh_bytes", r.ssthresh);
            b.u("flight_bytes", r.flight);
            b.f("srtt_ms", r.srtt.map_or(f64::NAN, |d| d.as_millis_f64()));
            b.f("rto_ms", r.rto.as_millis_f64());
            if cubic {
                b.f("cubic_wmax_bytes", r.w_max);
                b.f("cubic_k_s", r.k);
            }
            if dctcp {
                b.f("dctcp_alpha", r.alpha);
            }
            b.end_row();
        }
    }
    if b.table.columns.is_empty() {
        let u = || Column::U64(Vec::new());
        let f = || Column::F64(Vec::new());
        b.table = Table {
            columns: vec![
                ("replication".into(), u()),
                ("flow".into(), Column::Str(Vec::new())),
                ("time_s".into(), f()),
                ("cwnd_bytes".into(), u()),
                ("ssthresh_bytes".into(), u()),
                ("flight_bytes".into(), u()),
                ("srtt_ms".into(), f()),
                ("rto_ms".into(), f()),
            ],
        };
    }
    b.table
}

fn empty_drops_table() -> Table {
    let s = || Column::Str(Vec::new());
    let u = || Column::U64(Vec::new());
    Table {
        columns: vec![
            ("replication".into(), u()),
            ("flow".into(), s()),
            ("site".into(), s()),
            ("cause".into(), s()),
            ("pkts".into(), u()),
            ("bytes".into(), u()),
        ],
    }
}
