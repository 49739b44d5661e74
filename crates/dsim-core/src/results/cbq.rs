//! The result table of CBQ (docs/ef.md, "CBQ"): `cbq`, one row per leaf class of each CBQ
//! port, what the link-sharing scheduler did for it. A run without CBQ has no such table
//! (no columns), so that its tables, and the golden fingerprints, are those of a run
//! before it existed.

use super::{RunInfo, Table, TableBuilder};
use crate::sched::Qdisc;
use crate::sim::Simulation;

/// `cbq`: per leaf class (`queue`, its index in the class list, as in the queues table),
/// its counters over the whole run, warm-up included: `sent_pkts` (sent while not
/// overlimit), `borrowed_pkts` (sent by borrowing from an ancestor), `unregulated_pkts`
/// (sent uncharged when no class was allowed and `efficient` let one go) and `delays`
/// (episodes of being overlimit with a packet waiting, unable to borrow: Floyd and
/// Jacobson 1995's delay action).
pub(super) fn cbq_table(sim: &Simulation, info: &RunInfo) -> Table {
    let mut b = TableBuilder::default();
    for port in &sim.net.ports {
        let Qdisc::Cbq(cbq) = &port.qdisc else { continue };
        for leaf in 0..cbq.classes.len() {
            let c = cbq.counters(leaf);
            b.u("replication", info.replication);
            b.s("port", port.name.clone());
            b.u("queue", leaf as u64);
            b.u("sent_pkts", c.sent);
            b.u("borrowed_pkts", c.borrowed);
            b.u("unregulated_pkts", c.unregulated);
            b.u("delays", c.delays);
            b.end_row();
        }
    }
    b.table
}
