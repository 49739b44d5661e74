//! The result columns and table of ABE's DSD (docs/abe.md, "Statistics"): the green bias g
//! and the control loop's green penalty per port, and the loop's samples.

use super::{Column, RunInfo, Table, TableBuilder};
use crate::sched::Qdisc;
use crate::sim::Simulation;
use crate::stats::Window;

/// Columns of the `queues` table, the same on both rows of a DSD port (NaN on other
/// ports): `dsd_g_mean`, `dsd_penalty_mean` (time averages over the measurement window)
/// and `dsd_g`, `dsd_penalty` (in force at the end of the run). Without a control loop g
/// is the configured one and the penalty 0.
pub(super) fn dsd_queue_columns(b: &mut TableBuilder, qdisc: &Qdisc, w: &Window) {
    let (mean, end) = match qdisc {
        Qdisc::Dsd(d) => (d.mean_g_penalty(w.start, w.end), (d.g(), d.penalty())),
        _ => ((f64::NAN, f64::NAN), (f64::NAN, f64::NAN)),
    };
    b.f("dsd_g_mean", mean.0);
    b.f("dsd_penalty_mean", mean.1);
    b.f("dsd_g", end.0);
    b.f("dsd_penalty", end.1);
}

/// `dsd_control`: one row per control period boundary of each DSD port with a control
/// loop, over the whole run (warm-up included, so that convergence shows): time (s), g and
/// the green penalty after the update, the ratio rho of green to blue formula throughput
/// computed there (NaN when the loop held), and the smoothed loss ratios and mean queueing
/// delays (ms) of each colour behind it.
pub(super) fn dsd_control_table(sim: &Simulation, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for port in &sim.net.ports {
        let Qdisc::Dsd(d) = &port.qdisc else { continue };
        for s in d.control_history() {
            b.u("replication", info.replication);
            b.s("port", port.name.clone());
            b.f("time_s", s.t.as_secs_f64());
            b.f("g", s.g());
            b.f("penalty", s.penalty());
            b.f("ratio", s.ratio);
            b.f("loss_blue", s.p[0]);
            b.f("loss_green", s.p[1]);
            b.f("wait_blue_ms", s.q_s[0] * 1e3);
            b.f("wait_green_ms", s.q_s[1] * 1e3);
            b.end_row();
        }
    }
    if b.table.columns.is_empty() {
        let mut columns = vec![
            ("replication".to_string(), Column::U64(Vec::new())),
            ("port".to_string(), Column::Str(Vec::new())),
        ];
        for name in [
            "time_s",
            "g",
            "penalty",
            "ratio",
            "loss_blue",
            "loss_green",
            "wait_blue_ms",
            "wait_green_ms",
        ] {
            columns.push((name.to_string(), Column::F64(Vec::new())));
        }
        return Table { columns };
    }
    b.table
}
