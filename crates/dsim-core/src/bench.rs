//! One timed run for `dsim bench`: build, run and collect the results of one replication,
//! timing each phase, and report the counts a benchmark needs (events handled, packets
//! that crossed a named port). The work is exactly that of [`crate::task::run_one`]; only the
//! clock readings and the counts are extra.

use std::time::Instant;

use crate::results::{self, RunInfo};
use crate::scenario::{self, ConfigError, KeyPath, Scenario};

/// What one benchmark run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchRun {
    /// Events the event loop handled.
    pub events: u64,
    /// Simulated seconds (the run's duration).
    pub simulated_s: f64,
    /// Wall seconds spent building the simulation from the parsed scenario.
    pub build_s: f64,
    /// Wall seconds in the event loop.
    pub run_s: f64,
    /// CPU seconds the event loop's thread used (NaN where the platform has no per-thread
    /// clock). On a machine shared with other work this is what the loop cost; the wall
    /// time also counts the time the thread waited for a core.
    pub run_cpu_s: f64,
    /// Wall seconds collecting the result tables.
    pub results_s: f64,
    /// Packets the named port started transmitting (its departures), inside the
    /// measurement window.
    pub port_departures_pkts: u64,
    /// Packets the named port's queue refused or dropped, inside the window.
    pub port_drops_pkts: u64,
    /// Most packets alive at once (the packet arena's size).
    pub packets_peak: usize,
    /// Rows of the flows table (a check that the results were produced).
    pub flow_rows: usize,
}

/// Runs replication 0 of `sc` with base seed `seed` and counts the departures of `port`
/// (a link direction "FROM->TO").
pub fn run(sc: &Scenario, seed: u64, port: &str) -> Result<BenchRun, ConfigError> {
    let t0 = Instant::now();
    let task_seed = crate::task::replication_seed(seed, 0);
    let mut sim = scenario::build(sc, task_seed)?;
    let p = sim.net.ports.iter().position(|p| p.name == port).ok_or_else(|| {
        ConfigError::new(
            KeyPath::root().key("bench").key("port"),
            Some(format!("\"{port}\"")),
            "must name a link direction of the scenario, as FROM->TO",
        )
    })?;
    let (t1, c1) = (Instant::now(), thread_cpu_s());
    sim.run();
    let (t2, c2) = (Instant::now(), thread_cpu_s());
    let info = RunInfo {
        replication: 0,
        seed: task_seed,
        base_seed: seed,
        scenario_hash: scenario::scenario_hash(sc),
        wall_s: (t2 - t0).as_secs_f64(),
    };
    let tables = results::collect(&sim, &info);
    let t3 = Instant::now();
    let stats = &sim.net.ports[p].stats;
    Ok(BenchRun {
        events: sim.events_processed,
        simulated_s: sim.end.as_secs_f64(),
        build_s: (t1 - t0).as_secs_f64(),
        run_s: (t2 - t1).as_secs_f64(),
        run_cpu_s: c2 - c1,
        results_s: (t3 - t2).as_secs_f64(),
        port_departures_pkts: stats.iter().map(|c| c.departures_pkts).sum(),
        port_drops_pkts: stats.iter().map(|c| c.drops.total_pkts()).sum(),
        packets_peak: sim.pkts.capacity_used(),
        flow_rows: tables.flows.rows(),
    })
}

/// CPU time of the calling thread, in seconds.
#[cfg(unix)]
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we pass and reads nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc == 0 {
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

/// CPU time of the calling thread: not available here.
#[cfg(not(unix))]
pub fn thread_cpu_s() -> f64 {
    f64::NAN
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_HOPS: &str = r#"
        duration = "1s"
        [nodes]
        hosts = ["A", "B"]
        routers = ["R"]
        [[link]]
        from = "A"
        to = "R"
        rate = "10Mbps"
        delay = "1ms"
        [[link]]
        from = "R"
        to = "B"
        rate = "10Mbps"
        delay = "1ms"
        [[flow]]
        src = "A"
        dst = "B"
        app = { type = "cbr", rate = "1Mbps", size = "1250B" }
    "#;

    #[test]
    fn counts_the_packets_of_the_named_port() {
        // 1 Mbit/s of 1250-byte packets = 100 packets per second, the first at t = 0: all
        // 100 emitted in [0, 1 s) leave A; each is serialized in 1 ms and delayed 1 ms, so
        // the last (t = 0.99 s) reaches R at 0.992 s and leaves R inside the run too.
        let sc = scenario::from_toml(TWO_HOPS).unwrap();
        let r = run(&sc, 1, "R->B").unwrap();
        assert_eq!(r.port_departures_pkts, 100);
        assert_eq!(r.port_drops_pkts, 0);
        assert_eq!(r.simulated_s, 1.0);
        assert_eq!(r.flow_rows, 1);
        // Per packet: App, and the Arrival at the far end of A->R and of R->B. No end of
        // transmission: each packet finds its port's queue empty (one every 10 ms, sent in
        // 1 ms), so no packet waits for the link.
        assert_eq!(r.events, 300);
        // The same events as a plain run of replication 0.
        let plain = crate::task::run_one(&sc, 1, 0).unwrap();
        match plain.run.column("events") {
            Some(results::Column::U64(v)) => assert_eq!(v[0], r.events),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_port_is_an_error() {
        let sc = scenario::from_toml(TWO_HOPS).unwrap();
        let e = run(&sc, 1, "B->A").unwrap_err();
        assert_eq!(e.path.to_string(), "bench.port");
    }
}
