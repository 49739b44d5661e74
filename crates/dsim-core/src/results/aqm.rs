//! The result tables of the delay-based AQMs, CoDel, PIE and FQ-CoDel (docs/aqm.md,
//! "Results"): `aqm`, one row per such queue, and `aqm_series`, their sampled state. A run
//! without these queues has neither table (no columns), so that its tables, and the
//! golden fingerprints, are those of a run before they existed.

use super::{RunInfo, Table, TableBuilder};
use crate::aqm::{AqmQueue, StateRow};
use crate::sim::Simulation;

/// The CoDel, PIE and FQ-CoDel queues of every port, with their port's name and index.
fn stateful_queues(sim: &Simulation) -> impl Iterator<Item = (&str, u8, &AqmQueue)> {
    sim.net.ports.iter().flat_map(|port| {
        port.qdisc
            .aqm_queues()
            .into_iter()
            .filter(|(_, q)| q.state(sim.end).is_some())
            .map(move |(i, q)| (port.name.as_str(), i, q))
    })
}

fn opt_f(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::NAN)
}

/// The columns of a state sample after the row's identity: `len_pkts`, `delay_ms`,
/// `dropping`, `count`, `p`, `flows` (NaN where the mechanism has no such state).
fn state_columns(b: &mut TableBuilder, s: &StateRow) {
    b.u("len_pkts", s.len_pkts);
    b.f("delay_ms", opt_f(s.delay.map(|d| d.as_millis_f64())));
    b.f("dropping", opt_f(s.dropping.map(f64::from)));
    b.f("count", opt_f(s.count.map(f64::from)));
    b.f("p", opt_f(s.p));
    b.f("flows", opt_f(s.flows.map(f64::from)));
}

/// `aqm`: per CoDel / PIE / FQ-CoDel queue, its counters over the whole run (warm-up
/// included: `dropping_entries`, times CoDel entered its dropping state, summed over
/// FQ-CoDel's flow queues; `dequeue_marks_pkts`, CoDel's CE marks, made at dequeue, which
/// the queues table's `marks_pkts` (marks at enqueue) does not count; `p_max`, PIE's
/// highest drop probability; `new_flows`, times an FQ-CoDel flow queue joined the new
/// list) and its state as the last packet left it.
pub(super) fn aqm_table(sim: &Simulation, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for (port, queue, q) in stateful_queues(sim) {
        let c = q.aqm.counters();
        b.u("replication", info.replication);
        b.s("port", port);
        b.u("queue", queue as u64);
        b.s("aqm", q.aqm.name());
        b.u("dropping_entries", c.dropping_entries);
        b.u("dequeue_marks_pkts", c.dequeue_marks);
        b.f("p_max", opt_f(c.p_max));
        b.u("new_flows", c.new_flows);
        state_columns(&mut b, &q.state(sim.end).expect("filtered"));
        b.end_row();
    }
    b.table
}

/// `aqm_series`: the samples of the queues that set `series` (time in s).
pub(super) fn aqm_series_table(sim: &Simulation, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for (port, queue, q) in stateful_queues(sim) {
        let Some(series) = &q.state_series else { continue };
        for r in &series.rows {
            b.u("replication", info.replication);
            b.s("port", port);
            b.u("queue", queue as u64);
            b.s("aqm", q.aqm.name());
            b.f("time_s", r.t.as_secs_f64());
            state_columns(&mut b, r);
            b.end_row();
        }
    }
    b.table
}
