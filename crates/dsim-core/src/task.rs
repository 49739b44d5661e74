//! One task of an experiment: one replication of one scenario (of one sweep point), with a
//! seed derived from the base seed and the task's coordinates, optionally observed between
//! steps of simulated time by a progress hook.
//!
//! Seeds: a task with coordinates `coords` runs with `derive_seed(base, coords)`
//! ([`crate::engine::rng::derive_seed`]). `dsim run` uses `[replication]`, a sweep uses
//! `[point, replication]`; the replication number written in the tables is the last
//! coordinate.
//!
//! Stepping: with a hook, the run advances with [`Simulation::run_until`] in steps of
//! simulated time and calls the hook between two steps. The event loop itself never calls
//! out, and the steps do not change the results: `run_until(t1); run_until(t2)` handles
//! exactly the events `run_until(t2)` handles, in the same order (events due at `t1` wait
//! for the second call; nothing reads the clock between events). The step length adapts
//! so that the hook is called about every [`HOOK_INTERVAL`] of wall time, whatever the
//! speed of the simulation.
//!
//! Recording: a scenario with a `[record]` table also stops the run at the start of the
//! window and at the end of every recording interval, where the recorder reads the
//! counters ([`crate::sim::record`]); the same argument makes this change nothing.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::{Duration as WallDuration, Instant};

use rayon::prelude::*;

use crate::engine::rng::derive_seed;
use crate::results::{self, RunInfo, Tables};
use crate::scenario::{self, ConfigError, Scenario};
use crate::sim::Simulation;
use crate::sim::record::Recorder;
use crate::time::SimTime;

/// Wall time aimed at between two calls of a progress hook.
pub const HOOK_INTERVAL: WallDuration = WallDuration::from_millis(100);

/// The seed replication `r` of a scenario with base seed `base` runs with.
pub fn replication_seed(base: u64, r: u64) -> u64 {
    derive_seed(base, &[r])
}

/// What a run does besides simulating.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Folder the scenario's `[[capture]]` points write their pcap files to; None = no
    /// captures.
    pub capture_dir: Option<PathBuf>,
}

/// Runs one replication and returns its tables (the task `[replication]`).
pub fn run_one(sc: &Scenario, base_seed: u64, replication: u64) -> Result<Tables, ConfigError> {
    run_one_with(sc, base_seed, replication, &RunOptions::default())
}

/// Runs one replication with `opts` and returns its tables.
pub fn run_one_with(sc: &Scenario, base_seed: u64, replication: u64, opts: &RunOptions) -> Result<Tables, ConfigError> {
    let tables = run_task(sc, base_seed, &[replication], None, opts)?;
    Ok(tables.expect("a run without a hook always finishes"))
}

/// Runs `replications` replications on `jobs` threads (0 = all cores). The tables are the
/// same, bit for bit, whatever `jobs` is: each replication has its own seed and the results
/// are concatenated in replication order.
pub fn run(sc: &Scenario, base_seed: u64, replications: u64, jobs: usize) -> Result<Tables, ConfigError> {
    run_with(sc, base_seed, replications, jobs, &RunOptions::default())
}

/// [`run`] with options (capture folder).
pub fn run_with(
    sc: &Scenario,
    base_seed: u64,
    replications: u64,
    jobs: usize,
    opts: &RunOptions,
) -> Result<Tables, ConfigError> {
    scenario::validate(sc)?;
    let one = |r: u64| run_one_with(sc, base_seed, r, opts);
    let parts: Vec<Result<Tables, ConfigError>> = if jobs == 1 || replications <= 1 {
        (0..replications).map(one).collect()
    } else {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().map_err(|e| {
            ConfigError::new(
                scenario::KeyPath::root(),
                None,
                format!("cannot start {jobs} worker threads: {e}"),
            )
        })?;
        pool.install(|| (0..replications).into_par_iter().map(one).collect())
    };
    let mut all = Tables::default();
    for p in parts {
        all.append(&p?);
    }
    Ok(all)
}

/// Where a run stands, as a progress hook sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time reached.
    pub now: SimTime,
    /// Simulated time the run ends at.
    pub end: SimTime,
    /// Events handled so far.
    pub events: u64,
}

/// A hook called between steps; `ControlFlow::Break` stops the run (the task then has no
/// tables).
pub type Hook<'a> = &'a mut dyn FnMut(Progress) -> ControlFlow<()>;

/// Runs one task. Returns `Ok(None)` when the hook stopped it.
pub fn run_task(
    sc: &Scenario,
    base_seed: u64,
    coords: &[u64],
    hook: Option<Hook<'_>>,
    opts: &RunOptions,
) -> Result<Option<Tables>, ConfigError> {
    let seed = derive_seed(base_seed, coords);
    let replication = coords.last().copied().unwrap_or(0);
    let t0 = Instant::now();
    let mut sim = scenario::build(sc, seed)?;
    let mut recorder = scenario::record::plan(sc, &sim)?.map(|plan| Recorder::new(plan, &sim));
    if let Some(dir) = &opts.capture_dir {
        if !sim.capture_points.is_empty() {
            sim.open_captures(dir, replication).map_err(capture_error)?;
        }
    }
    match (hook, recorder.as_mut()) {
        (None, None) => sim.run(),
        (hook, recorder) => {
            if run_in_steps(&mut sim, hook, HOOK_INTERVAL, recorder).is_break() {
                return Ok(None);
            }
        }
    }
    sim.close_captures().map_err(capture_error)?;
    let info = RunInfo {
        replication,
        seed,
        base_seed,
        scenario_hash: scenario::scenario_hash(sc),
        wall_s: t0.elapsed().as_secs_f64(),
    };
    let mut tables = results::collect(&sim, &info);
    if let Some(r) = &recorder {
        results::add_recorded(&mut tables, &sim, r, &info);
    }
    Ok(Some(tables))
}

fn capture_error(e: std::io::Error) -> ConfigError {
    ConfigError::new(
        crate::scenario::KeyPath::root().key("capture"),
        None,
        format!("cannot write the capture: {e}"),
    )
}

/// Runs `sim` to its end in steps, calling `hook` after each step (and once at the end),
/// aiming at `interval` of wall time per step. Finishes the statistics unless stopped.
pub fn run_stepped(sim: &mut Simulation, hook: Hook<'_>, interval: WallDuration) -> ControlFlow<()> {
    run_in_steps(sim, Some(hook), interval, None)
}

/// [`run_stepped`] with an optional hook and an optional recorder: a step also ends where
/// the recorder's next reading is due, and the recorder reads there.
///
/// With a hook, a step also ends after a bounded number of events (about twice what the
/// last step handled per [`HOOK_INTERVAL`], at most [`MAX_STEP_EVENTS`]), so that the hook
/// (which checks for Ctrl-C) runs within a bounded time even when the simulated clock does
/// not advance: thousands of events due at one instant, or a loop that a scenario's
/// validation should have refused. Stopping after a number of events changes nothing
/// either ([`Simulation::run_until_within`]).
pub fn run_in_steps(
    sim: &mut Simulation,
    mut hook: Option<Hook<'_>>,
    interval: WallDuration,
    mut recorder: Option<&mut Recorder>,
) -> ControlFlow<()> {
    let end = sim.end;
    // First step: a thousandth of the run, at least a microsecond of simulated time;
    // without a hook, steps end only where readings are due.
    let (mut step, mut budget) = if hook.is_some() {
        ((end.0 / 1000).max(1_000), FIRST_STEP_EVENTS)
    } else {
        (u64::MAX, u64::MAX)
    };
    loop {
        let t0 = Instant::now();
        let events_before = sim.events_processed;
        let due = recorder.as_ref().and_then(|r| r.due());
        let until = SimTime(
            sim.now
                .0
                .saturating_add(step)
                .min(end.0)
                .min(due.map_or(u64::MAX, |d| d.0)),
        );
        let reached = sim.run_until_within(until, budget);
        if let (Some(r), Some(d), true) = (recorder.as_deref_mut(), due, reached) {
            if sim.now == d {
                r.read(sim);
            }
        }
        let progress = Progress {
            now: sim.now,
            end,
            events: sim.events_processed,
        };
        if reached && sim.now >= end {
            sim.finish();
            // The last call reports completion; stopping now changes nothing.
            if let Some(hook) = hook.as_mut() {
                let _ = hook(progress);
            }
            return ControlFlow::Continue(());
        }
        let Some(hook) = hook.as_mut() else { continue };
        hook(progress)?;
        let took = t0.elapsed().as_secs_f64().max(1e-6);
        // Scale the step towards `interval`, by at most 4x either way per step, and let a
        // step handle about two intervals' worth of events at the rate this one ran.
        let factor = (interval.as_secs_f64() / took).clamp(0.25, 4.0);
        if reached {
            step = ((step as f64 * factor) as u64).max(1_000);
        }
        let per_interval = (sim.events_processed - events_before) as f64 / took * interval.as_secs_f64();
        budget = ((2.0 * per_interval) as u64).clamp(MIN_STEP_EVENTS, MAX_STEP_EVENTS);
    }
}

/// Events of the first step with a hook: a fraction of a second at the slowest event
/// rates measured (0.1 M events/s with thousands of events at one instant).
pub const FIRST_STEP_EVENTS: u64 = 1 << 14;
/// The fewest events a step may end after (the hook's cost stays small beside it).
pub const MIN_STEP_EVENTS: u64 = 1 << 12;
/// The most events a step may handle: 0.4 s at 10 M events/s.
pub const MAX_STEP_EVENTS: u64 = 1 << 22;

#[cfg(test)]
mod tests {
    use super::*;

    const SCENARIO: &str = r#"
        duration = "3s"
        warmup = "500ms"
        [nodes]
        hosts = ["A", "B"]
        [[link]]
        from = "A"
        to = "B"
        rate = "2Mbps"
        delay = "3ms"
        queue = { type = "droptail", limit = "10p" }
        [[flow]]
        src = "A"
        dst = "B"
        app = { type = "poisson", rate = "2.4Mbps", size = "700B" }
        [[flow]]
        src = "A"
        dst = "B"
        app = { type = "cbr", rate = "300kbps", size = "200B", spacing_variation = "20%" }
    "#;

    fn without_wall(mut t: Tables) -> Tables {
        // wall_s is the only column that depends on the machine.
        t.run.columns.retain(|(n, _)| n != "wall_s");
        t
    }

    #[test]
    fn stepping_does_not_change_the_results() {
        let sc = scenario::from_toml(SCENARIO).unwrap();
        let plain = run_task(&sc, 5, &[2, 1], None, &RunOptions::default())
            .unwrap()
            .unwrap();
        // A zero interval keeps every step at its floor (1 us of simulated time), so
        // events fall on both sides of many step boundaries.
        let mut calls = 0u64;
        let mut last = SimTime::ZERO;
        let mut hook = |p: Progress| {
            assert!(p.now >= last, "progress goes forward");
            last = p.now;
            calls += 1;
            ControlFlow::Continue(())
        };
        let seed = derive_seed(5, &[2, 1]);
        let mut sim = scenario::build(&sc, seed).unwrap();
        assert!(run_stepped(&mut sim, &mut hook, WallDuration::ZERO).is_continue());
        assert!(calls > 1000, "{calls} steps");
        assert_eq!(last, sim.end);
        let stepped = results::collect(
            &sim,
            &RunInfo {
                replication: 1,
                seed,
                base_seed: 5,
                scenario_hash: scenario::scenario_hash(&sc),
                wall_s: 0.0,
            },
        );
        assert_eq!(without_wall(plain), without_wall(stepped));
    }

    #[test]
    fn a_hook_does_not_change_what_is_recorded() {
        let sc = scenario::from_toml(&format!("{SCENARIO}\n[record]\ninterval = \"70ms\"\n")).unwrap();
        let plain = run_task(&sc, 5, &[0], None, &RunOptions::default()).unwrap().unwrap();
        assert_eq!(plain.flow_series.rows(), 2 * 36, "2.5 s in intervals of 70 ms: 36");
        let mut calls = 0u64;
        let mut hook = |_: Progress| {
            calls += 1;
            ControlFlow::Continue(())
        };
        let hooked = run_task(&sc, 5, &[0], Some(&mut hook), &RunOptions::default())
            .unwrap()
            .unwrap();
        assert!(calls >= 37, "{calls} calls: at least one per reading");
        assert_eq!(without_wall(plain), without_wall(hooked));
    }

    #[test]
    fn the_seed_comes_from_base_and_coordinates() {
        let sc = scenario::from_toml(SCENARIO).unwrap();
        let t = run_task(&sc, 5, &[2, 1], None, &RunOptions::default())
            .unwrap()
            .unwrap();
        let run = |name: &str| match t.run.column(name) {
            Some(results::Column::U64(v)) => v[0],
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(run("seed"), derive_seed(5, &[2, 1]));
        assert_eq!(run("base_seed"), 5);
        assert_eq!(run("replication"), 1);
        // A one-coordinate task is replication r of `dsim run`.
        let a = run_task(&sc, 5, &[3], None, &RunOptions::default()).unwrap().unwrap();
        let b = run_one(&sc, 5, 3).unwrap();
        assert_eq!(without_wall(a), without_wall(b));
    }

    /// Issue 28's zero-time loop: a CBR source whose spacing rounds to 0 ns emits packets
    /// forever without the clock advancing. Validation refuses such a rate now
    /// (`scenario::build`), so the source's spacing is set to zero by hand: the hook still
    /// runs after every bounded number of events, and can stop the run.
    #[test]
    fn the_hook_runs_every_bounded_number_of_events_while_time_stands_still() {
        use crate::app::App;
        use crate::sim::Transport;
        let sc = scenario::from_toml(SCENARIO).unwrap();
        let mut sim = scenario::build(&sc, 1).unwrap();
        let Transport::Udp { app: App::Cbr(cbr), .. } = &mut sim.flows[1].transport else {
            panic!("flow 1 is the CBR source")
        };
        cbr.interval = crate::time::Duration::ZERO;
        cbr.variation = 0.0;
        let mut seen = Vec::new();
        let mut hook = |p: Progress| {
            seen.push((p.now, p.events));
            if seen.len() == 5 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        // With a zero interval every step after the first ends at the fewest events.
        assert!(run_stepped(&mut sim, &mut hook, WallDuration::ZERO).is_break());
        let first = FIRST_STEP_EVENTS;
        let expected: Vec<(SimTime, u64)> = (0..5).map(|k| (SimTime::ZERO, first + k * MIN_STEP_EVENTS)).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn a_hook_can_stop_the_run() {
        let sc = scenario::from_toml(SCENARIO).unwrap();
        let mut calls = 0;
        let mut hook = |_: Progress| {
            calls += 1;
            if calls == 3 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        assert!(
            run_task(&sc, 1, &[0], Some(&mut hook), &RunOptions::default())
                .unwrap()
                .is_none()
        );
        assert_eq!(calls, 3);
    }
}
