//! Runs one scenario file (replication 0) and prints the events handled, the wall time
//! of the event loop and a fingerprint of the result tables: a plain binary to profile
//! (perf, valgrind --tool=callgrind) and to check that an optimization leaves the results
//! bit for bit the same (same fingerprint before and after).
//!
//!     cargo run --release -p dsim-core --example run_scenario -- FILE [SEED]

use std::time::Instant;

use dsim_core::results::{self, RunInfo};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run_scenario FILE [SEED]");
    let seed: u64 = args.next().map_or(1, |s| s.parse().expect("SEED is an integer"));
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let sc = dsim_core::scenario::from_toml(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let task_seed = dsim_core::replication_seed(seed, 0);
    let mut sim = dsim_core::scenario::build(&sc, task_seed).expect("builds");
    if std::env::var_os("DSIM_PENDING").is_some() {
        // Sample the size of the future event list every 10 ms of simulated time.
        let (mut n, mut sum, mut max) = (0u64, 0usize, 0usize);
        let mut t = dsim_core::time::SimTime(0);
        while t < sim.end {
            t = dsim_core::time::SimTime(t.0 + 10_000_000);
            sim.run_until(t);
            let p = sim.pending_events();
            (n, sum, max) = (n + 1, sum + p, max.max(p));
        }
        println!("pending events: mean {:.0}, max {max}", sum as f64 / n as f64);
    }
    let (t0, c0) = (Instant::now(), dsim_core::bench::thread_cpu_s());
    sim.run();
    let (dt, cpu) = (t0.elapsed().as_secs_f64(), dsim_core::bench::thread_cpu_s() - c0);
    let info = RunInfo {
        replication: 0,
        seed: task_seed,
        base_seed: seed,
        scenario_hash: String::new(),
        wall_s: 0.0,
    };
    let tables = results::collect(&sim, &info);
    println!(
        "{} events in {dt:.3} s ({cpu:.3} s CPU): {:.1} M events/s, {:.1} ns/event (CPU); results {}",
        sim.events_processed,
        sim.events_processed as f64 / dt / 1e6,
        cpu * 1e9 / sim.events_processed as f64,
        tables.fingerprint()
    );
}
