//! `[record]`: the time series and distributions a run records on request, for plots
//! (docs/guide.md, "Figures of a run"). Recording changes no result: it reads counters the
//! run keeps anyway, between two steps of simulated time ([`crate::sim::record`]).
//!
//! ```toml
//! [record]
//! interval = "100ms"                 # default: the window in 100 intervals
//! series = ["flows", "ports"]        # default: flows, ports, conditioners, delay
//! ports = ["R1->R2"]                 # default: every port
//! ```

use serde::{Deserialize, Serialize};

use crate::params::Params;

use super::build::{err, quoted};
use super::{ConfigError, KeyPath, Scenario};
use crate::sim::Simulation;
use crate::sim::record::RecordPlan;
use crate::time::Duration;

/// Rows of time series one run may record (a row is about 100 bytes in memory).
pub const MAX_ROWS: u64 = 1_000_000;
/// Intervals over the window when `interval` is not given.
pub const DEFAULT_INTERVALS: u64 = 100;

/// The `[record]` table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    /// Length of one interval of the time series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(range = "(0, inf)")]
    pub interval: Option<Duration>,
    /// Which series to record (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<Vec<RecordSeries>>,
    /// The ports ("FROM->TO") whose queues the `ports` series follows (default: every port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "lowercase")]
pub enum RecordSeries {
    /// Per flow and interval: packets and bytes sent, delivered, dropped; goodput; delay.
    Flows,
    /// Per port, queue, precedence and interval: arrivals, departures, drops, marks, the
    /// occupancy at the interval's end and its time-weighted mean.
    Ports,
    /// Per conditioner instance, colour and interval: packets and bytes metered, remarked,
    /// demoted, dropped.
    Conditioners,
    /// Per flow: the histogram of its one-way delays and of its jitter (RFC 2598 A.3).
    Delay,
}

impl RecordSeries {
    pub const ALL: [RecordSeries; 4] = [
        RecordSeries::Flows,
        RecordSeries::Ports,
        RecordSeries::Conditioners,
        RecordSeries::Delay,
    ];
}

/// What `sim` (built from `sc`) records: None without a `[record]` table; an error naming
/// the key, the value and the rule when the table asks for what cannot be recorded or for
/// more rows than [`MAX_ROWS`].
pub fn plan(sc: &Scenario, sim: &Simulation) -> Result<Option<RecordPlan>, ConfigError> {
    let Some(spec) = &sc.record else {
        return Ok(None);
    };
    let path = KeyPath::root().key("record");
    let window = sim.window.length();
    if window == Duration::ZERO {
        return err(
            path,
            "[record]",
            "the measurement window (duration - warmup) is empty: nothing to record",
        );
    }
    let interval = match spec.interval {
        None => Duration(window.0.div_ceil(DEFAULT_INTERVALS)),
        Some(i) if i > window => {
            return err(
                path.key("interval"),
                quoted(&i.to_string()),
                format!("an interval is at most the measurement window ({window})"),
            );
        }
        Some(i) => i,
    };
    let series = spec.series.clone().unwrap_or_else(|| RecordSeries::ALL.to_vec());
    for (i, s) in series.iter().enumerate() {
        if series[..i].contains(s) {
            return err(
                path.key("series").index(i),
                format!("{s:?}").to_lowercase(),
                "each series once",
            );
        }
    }
    let ports = if series.contains(&RecordSeries::Ports) {
        port_ids(spec.ports.as_deref(), sim, &path.key("ports"))?
    } else {
        Vec::new()
    };
    let plan = RecordPlan {
        interval,
        flows: series.contains(&RecordSeries::Flows),
        ports,
        conditioners: series.contains(&RecordSeries::Conditioners),
        delay: series.contains(&RecordSeries::Delay),
    };
    let rows = plan.rows(sim);
    if rows > MAX_ROWS {
        let intervals = plan.intervals(&sim.window);
        return err(
            path.key("interval"),
            quoted(&interval.to_string()),
            format!(
                "{window} in intervals of {interval} is {intervals} intervals of {} series: {rows} rows, above the \
                 {MAX_ROWS} a run records; choose a longer interval, fewer series or fewer ports",
                plan.series(sim)
            ),
        );
    }
    Ok(Some(plan))
}

/// The ports named in `names` (every port when None), refused when unknown or named twice.
fn port_ids(names: Option<&[String]>, sim: &Simulation, path: &KeyPath) -> Result<Vec<u32>, ConfigError> {
    let Some(names) = names else {
        return Ok((0..sim.net.ports.len() as u32).collect());
    };
    let mut ids = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let Some(id) = sim.net.ports.iter().position(|p| &p.name == name) else {
            return err(
                path.index(i),
                quoted(name),
                "no such port; a port is a link direction \"FROM->TO\" between two nodes of the scenario",
            );
        };
        if ids.contains(&(id as u32)) {
            return err(path.index(i), quoted(name), "each port once");
        }
        ids.push(id as u32);
    }
    Ok(ids)
}
