//! The result tables of the Assured Forwarding mechanisms: `conditioners` and
//! `queue_series` (docs/af.md, "Statistics").

use super::{Column, RunInfo, Table, TableBuilder};
use crate::sim::Simulation;

/// "BLOCK" for an aggregate conditioner, "BLOCK/FLOW" for a per-flow one.
pub(super) fn instance_name(sim: &Simulation, i: u32) -> String {
    let c = &sim.conditioners;
    let inst = &c.instances[i as usize];
    let block = &c.blocks[inst.block as usize];
    match inst.flow {
        Some(f) => format!("{}/{}", block.name, sim.flows[f as usize].name),
        None => block.name.clone(),
    }
}

/// One row per conditioner instance and colour its meter gives (`color` = green, yellow,
/// red), plus one row `color = "shaper"` for a shaper: packets and bytes metered, remarked
/// and demoted (codepoint changed by a mark / demote action), dropped; for the shaper row,
/// `pkts` and `bytes` = arrivals, `passed_pkts` = releases, `dropped_pkts` and
/// `dropped_bytes` = overflow drops and `mean_wait_ms` = mean time a released packet waited.
pub(super) fn conditioner_table(sim: &Simulation, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    let nodes = &sim.net.nodes;
    let c = &sim.conditioners;
    let mut row = |name: String, node: &str, flow: &str, color: &str, v: [u64; 7], wait: f64| {
        b.u("replication", info.replication);
        b.s("conditioner", name);
        b.s("node", node);
        b.s("flow", flow);
        b.s("color", color);
        let cols = [
            "pkts",
            "bytes",
            "passed_pkts",
            "remarked_pkts",
            "demoted_pkts",
            "dropped_pkts",
            "dropped_bytes",
        ];
        for (col, x) in cols.iter().zip(v) {
            b.u(col, x);
        }
        b.f("mean_wait_ms", wait);
        b.end_row();
    };
    for (i, inst) in c.instances.iter().enumerate() {
        let block = &c.blocks[inst.block as usize];
        let name = instance_name(sim, i as u32);
        let node = nodes[block.node as usize].name.as_str();
        let flow = inst.flow.map_or("", |f| sim.flows[f as usize].name.as_str());
        let s = &inst.stats;
        if inst.shaper.is_some() {
            let wait = if s.shaper_released > 0 {
                s.shaper_wait_ns as f64 / s.shaper_released as f64 / 1e6
            } else {
                f64::NAN
            };
            let v = [
                s.shaper_arrivals,
                s.shaper_arrival_bytes,
                s.shaper_released,
                0,
                0,
                s.shaper_overflow_pkts,
                s.shaper_overflow_bytes,
            ];
            row(name.clone(), node, flow, "shaper", v, wait);
        }
        if let Some(m) = &inst.meter {
            for col in m.colors() {
                let k = *col as usize;
                let passed = s.pkts[k] - s.dropped_pkts[k];
                let v = [
                    s.pkts[k],
                    s.bytes[k],
                    passed,
                    s.remarked[k],
                    s.demoted[k],
                    s.dropped_pkts[k],
                    s.dropped_bytes[k],
                ];
                row(name.clone(), node, flow, col.name(), v, f64::NAN);
            }
        }
    }
    if b.table.columns.is_empty() {
        return empty_table(
            &["replication"],
            &["conditioner", "node", "flow", "color"],
            &[
                "pkts",
                "bytes",
                "passed_pkts",
                "remarked_pkts",
                "demoted_pkts",
                "dropped_pkts",
                "dropped_bytes",
            ],
            &["mean_wait_ms"],
        );
    }
    b.table
}

/// Sampled averages of the queues that record a series: one row per sample and
/// precedence (time in s; avg and len in the unit of the thresholds, `unit`).
pub(super) fn queue_series_table(sim: &Simulation, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for port in &sim.net.ports {
        for (queue, q) in port.qdisc.aqm_queues() {
            let Some(s) = &q.series else { continue };
            for r in &s.rows {
                b.u("replication", info.replication);
                b.s("port", port.name.clone());
                b.u("queue", queue as u64);
                b.u("precedence", r.precedence as u64);
                b.f("time_s", r.t.0 as f64 / 1e9);
                b.f("avg", r.avg);
                b.f("len", r.len);
                b.s("unit", s.unit);
                b.end_row();
            }
        }
    }
    if b.table.columns.is_empty() {
        return empty_table(
            &["replication"],
            &["port"],
            &["queue", "precedence"],
            &["time_s", "avg", "len"],
        )
        .with_str_column("unit");
    }
    b.table
}

/// A table with no rows: u64 columns `u1`, string columns, u64 columns `u2`, f64 columns.
fn empty_table(u1: &[&str], strs: &[&str], u2: &[&str], floats: &[&str]) -> Table {
    let mut columns = Vec::new();
    columns.extend(u1.iter().map(|n| (n.to_string(), Column::U64(Vec::new()))));
    columns.extend(strs.iter().map(|n| (n.to_string(), Column::Str(Vec::new()))));
    columns.extend(u2.iter().map(|n| (n.to_string(), Column::U64(Vec::new()))));
    columns.extend(floats.iter().map(|n| (n.to_string(), Column::F64(Vec::new()))));
    Table { columns }
}

impl Table {
    fn with_str_column(mut self, name: &str) -> Table {
        self.columns.push((name.to_string(), Column::Str(Vec::new())));
        self
    }
}
