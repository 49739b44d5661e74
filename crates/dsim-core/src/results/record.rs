//! The tables of what a run recorded on request (`[record]`, [`crate::sim::record`]):
//! `flow_series`, `port_series`, `conditioner_series` (one row per series and interval,
//! [start_s, end_s) of the window) and `distributions` (the delay and jitter histograms of
//! every flow).

use super::{RunInfo, Table, TableBuilder, Tables};
use crate::sim::Simulation;
use crate::sim::record::{Recorder, Row};
use crate::stats::Distribution;

/// Adds the recorded tables of `rec` (a recorder that followed the run of `sim`).
pub fn add_recorded(tables: &mut Tables, sim: &Simulation, rec: &Recorder, info: &RunInfo) {
    if rec.plan.flows {
        tables.flow_series = flow_series(sim, rec, info);
    }
    if !rec.plan.ports.is_empty() {
        tables.port_series = port_series(sim, rec, info);
    }
    if rec.plan.conditioners {
        tables.conditioner_series = conditioner_series(sim, rec, info);
    }
    if rec.plan.delay {
        tables.distributions = distributions(sim, info);
    }
}

/// The first columns of a row of interval `k`: replication, then (after the caller's
/// names) start_s and end_s; returns the interval's length in seconds.
fn interval_columns(b: &mut TableBuilder, rec: &Recorder, k: u32) -> f64 {
    let (start, end) = rec.bounds(k);
    b.f("start_s", start.as_secs_f64());
    b.f("end_s", end.as_secs_f64());
    (end - start).as_secs_f64()
}

fn bps(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 * 8.0 / seconds
}

fn flow_series(sim: &Simulation, rec: &Recorder, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for Row {
        series,
        interval,
        counters: c,
    } in &rec.flow_rows
    {
        let flow = &sim.flows[*series as usize];
        b.u("replication", info.replication);
        b.s("flow", flow.name.clone());
        let secs = interval_columns(&mut b, rec, *interval);
        b.u("sent_pkts", c.sent_pkts);
        b.u("sent_bytes", c.sent_bytes);
        b.u("delivered_pkts", c.delivered_pkts);
        b.u("delivered_bytes", c.delivered_bytes);
        b.u("dropped_pkts", c.dropped_pkts);
        b.f("offered_bps", bps(c.sent_bytes, secs));
        b.f("throughput_bps", bps(c.delivered_bytes, secs));
        let goodput = if flow.tcp().is_some() {
            bps(c.goodput_bytes, secs)
        } else {
            f64::NAN
        };
        b.f("goodput_bps", goodput);
        let delay = if c.delivered_pkts > 0 {
            c.delay_ns as f64 / c.delivered_pkts as f64 / 1e6
        } else {
            f64::NAN
        };
        b.f("delay_mean_ms", delay);
        for color in crate::packet::Color::ALL {
            b.u(
                &format!("{}_delivered_bytes", color.name()),
                c.color_delivered_bytes[color as usize],
            );
        }
        b.end_row();
    }
    b.table
}

fn port_series(sim: &Simulation, rec: &Recorder, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for Row {
        series,
        interval,
        counters: c,
    } in &rec.class_rows
    {
        let class = rec.classes[*series as usize];
        let port = &sim.net.ports[class.port as usize];
        let precs = port.qdisc.precedences() as u32;
        b.u("replication", info.replication);
        b.s("port", port.name.clone());
        b.u("queue", (class.class / precs) as u64);
        b.u("precedence", (class.class % precs) as u64);
        let secs = interval_columns(&mut b, rec, *interval);
        b.u("arrivals_pkts", c.arrivals_pkts);
        b.u("departures_pkts", c.departures_pkts);
        b.u("dropped_pkts", c.dropped_pkts);
        b.u("marks_pkts", c.marks_pkts);
        b.u("len_pkts", c.len_pkts);
        b.u("len_bytes", c.len_bytes);
        let ns = secs * 1e9;
        b.f("mean_len_pkts", c.area_pkts as f64 / ns);
        b.f("mean_len_bytes", c.area_bytes as f64 / ns);
        b.f("throughput_bps", bps(c.departures_bytes, secs));
        b.u("rate_bps", port.rate.bps());
        b.end_row();
    }
    b.table
}

fn conditioner_series(sim: &Simulation, rec: &Recorder, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for Row {
        series,
        interval,
        counters: c,
    } in &rec.color_rows
    {
        let (instance, color) = rec.colors[*series as usize];
        b.u("replication", info.replication);
        b.s("conditioner", super::af::instance_name(sim, instance));
        b.s("color", color.name());
        let secs = interval_columns(&mut b, rec, *interval);
        b.u("pkts", c.pkts);
        b.u("bytes", c.bytes);
        b.u("remarked_pkts", c.remarked_pkts);
        b.u("demoted_pkts", c.demoted_pkts);
        b.u("dropped_pkts", c.dropped_pkts);
        b.f("rate_bps", bps(c.bytes, secs));
        b.end_row();
    }
    b.table
}

/// One row per histogram slot with samples, per flow and metric ("delay", "jitter"): the
/// slot's bounds in ms and its count. Slots line up across flows and replications.
fn distributions(sim: &Simulation, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for flow in &sim.flows {
        for (metric, d) in [("delay", &flow.stats.delay), ("jitter", &flow.stats.jitter)] {
            histogram_rows(&mut b, info, &flow.name, metric, d);
        }
    }
    b.table
}

fn histogram_rows(b: &mut TableBuilder, info: &RunInfo, flow: &str, metric: &str, d: &Distribution) {
    for (low, high, count) in d.slots() {
        b.u("replication", info.replication);
        b.s("flow", flow);
        b.s("metric", metric);
        b.f("low_ms", low as f64 / 1e6);
        b.f("high_ms", high as f64 / 1e6);
        b.u("count", count);
        b.end_row();
    }
}
