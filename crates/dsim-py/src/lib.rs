//! `dsim._dsim`: the thin PyO3 layer. Each function converts its arguments, calls
//! dsim-core with the GIL released, and maps errors: a scenario error becomes
//! `dsim.errors.ConfigError` (key path, value, rule, line), anything unexpected, a Rust
//! panic included, becomes `dsim.errors.SimulationError` with context. Result tables cross
//! as Arrow record batches through the Arrow PyCapsule interface.

mod arrow;
mod toml_value;

use std::ops::ControlFlow;
use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use dsim_core::params::limits::Limits;
use dsim_core::params::one_line;
use dsim_core::results::Tables;
use dsim_core::scenario::{self, ConfigError, Scenario};
use dsim_core::sim::estimate::Estimate;
use dsim_core::task::Progress;

use crate::arrow::ArrowTable;

fn scenario_error(py: Python<'_>, e: &ConfigError) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let cls = py.import("dsim.errors")?.getattr("ScenarioError")?;
        // Each part on one line: the Python front quotes them in messages of its own.
        let path = one_line(&e.path.to_string());
        let obj = cls.call1((e.to_string(), path, e.shown_value(), one_line(&e.rule), e.line))?;
        Ok(PyErr::from_value(obj))
    };
    make().unwrap_or_else(|err| err)
}

fn simulation_error(py: Python<'_>, message: String) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let cls = py.import("dsim.errors")?.getattr("SimulationError")?;
        Ok(PyErr::from_value(cls.call1((message.clone(),))?))
    };
    make().unwrap_or_else(|err| err)
}

/// Runs `f` without the GIL and turns a panic into a `SimulationError` naming `context`.
fn guarded<T: Send>(py: Python<'_>, context: &str, f: impl FnOnce() -> Result<T, ConfigError> + Send) -> PyResult<T> {
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
    match outcome {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(scenario_error(py, &e)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(simulation_error(
                py,
                format!("internal error while {context}: {what} (please report it with the scenario)"),
            ))
        }
    }
}

fn parse(py: Python<'_>, text: &str) -> PyResult<Scenario> {
    guarded(py, "reading the scenario", || scenario::from_toml(text))
}

/// The limits given as JSON by the Python package (`dsim.limits`), or the defaults.
fn limits(py: Python<'_>, json: Option<&str>) -> PyResult<Limits> {
    match json {
        None => Ok(Limits::default()),
        Some(text) => Limits::from_json(text).map_err(|e| simulation_error(py, e)),
    }
}

/// The estimate of a run as a dict: events, memory_bytes, packets.
fn estimate_dict<'py>(py: Python<'py>, e: &Estimate) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("events", e.events)?;
    out.set_item("memory_bytes", e.memory_bytes)?;
    out.set_item("packets", e.packets)?;
    Ok(out)
}

/// Parses and validates a scenario given as TOML text within `limits` (JSON, see
/// `dsim_core::params::limits`; the defaults if None); raises ConfigError. Returns the estimated
/// work of one run (`dsim_core::sim::estimate`).
#[pyfunction]
#[pyo3(signature = (toml, limits_json=None))]
fn validate<'py>(py: Python<'py>, toml: &str, limits_json: Option<&str>) -> PyResult<Bound<'py, PyDict>> {
    let limits = limits(py, limits_json)?;
    let (_, estimate) = guarded(py, "reading the scenario", || scenario::from_toml_within(toml, &limits))?;
    estimate_dict(py, &estimate)
}

/// Reads TOML text for the Python front: checked first (its size, syntax, 64-bit integers
/// and nesting depth within `limits`; raises ConfigError with the line), then returned as
/// `copies` independent dicts from one parse (see `toml_value`: tomllib's types and key
/// order; a second copy costs a conversion, not a parse or a deep copy).
#[pyfunction]
#[pyo3(signature = (text, limits_json=None, copies=1))]
fn load_toml<'py>(
    py: Python<'py>,
    text: &str,
    limits_json: Option<&str>,
    copies: usize,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let limits = limits(py, limits_json)?;
    let doc = guarded(py, "reading TOML", || {
        scenario::check_toml(text, &limits)?;
        // The same grammar (toml_parser under both): an error here would be a bug of either.
        toml_edit::Document::parse(text)
            .map_err(|e| ConfigError::new(scenario::KeyPath::root(), None, one_line(&e.to_string())))
    })?;
    (0..copies).map(|_| toml_value::document(py, doc.as_table())).collect()
}

/// The default limits (`dsim_core::params::limits::Limits`) as JSON.
#[pyfunction]
fn default_limits() -> String {
    Limits::default().to_json()
}

/// The schema of every table a scenario may hold, as JSON: each key's kind and unit,
/// whether it is required, its default, range, help and document section (see
/// `dsim_core::params`). The Python builders and the parameter tables of the docs are
/// generated from it.
#[pyfunction]
fn schema() -> String {
    dsim_core::params::schema::catalog::<Scenario>().to_string()
}

/// A scenario read without building it (the caller has validated it).
fn read(py: Python<'_>, toml: &str) -> PyResult<Scenario> {
    guarded(py, "reading the scenario", || scenario::deserialize_value(toml))
}

/// The canonical TOML of a scenario (formatting, comments and key order removed).
#[pyfunction]
fn canonical_toml(py: Python<'_>, toml: &str) -> PyResult<String> {
    Ok(scenario::canonical_toml(&read(py, toml)?))
}

/// The scenario's hash: first 16 hex digits of the SHA-256 of its canonical TOML.
#[pyfunction]
fn scenario_hash(py: Python<'_>, toml: &str) -> PyResult<String> {
    Ok(scenario::scenario_hash(&read(py, toml)?))
}

/// The base seed and the replications a scenario runs with unless told otherwise (its own
/// `seed` and `replications`, or the schema's defaults), read without building it.
#[pyfunction]
fn run_defaults(py: Python<'_>, toml: &str) -> PyResult<(u64, u32)> {
    let sc = read(py, toml)?;
    Ok((sc.seed, sc.replications))
}

/// The seed replication `replication` runs with, given the base seed.
#[pyfunction]
fn replication_seed(base: u64, replication: u64) -> u64 {
    dsim_core::replication_seed(base, replication)
}

fn tables_dict<'py>(py: Python<'py>, tables: &Tables) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (name, table) in tables.named() {
        if table.columns.is_empty() && Tables::optional(name) {
            continue; // recorded only on request, or no CoDel / PIE / FQ-CoDel queue
        }
        out.set_item(
            name,
            ArrowTable::from_table(table).map_err(|e| simulation_error(py, e))?,
        )?;
    }
    Ok(out)
}

/// The codepoint a DSCP name or number stands for; raises ConfigError naming `path`.
#[pyfunction]
fn parse_dscp(py: Python<'_>, text: &str, path: &str) -> PyResult<u8> {
    dsim_core::packet::Dscp::parse(text).map(|d| d.0).map_err(|rule| {
        scenario_error(
            py,
            &ConfigError::new(scenario::KeyPath::parse(path), Some(format!("\"{text}\"")), rule),
        )
    })
}

/// The value of a unit string as the core reads it: a `"rate"` in bit/s, a `"size"` in
/// bytes, a `"duration"` in nanoseconds. Raises ScenarioError naming `path`. Python never
/// parses a unit itself, so every unit string means the same everywhere.
#[pyfunction]
fn parse_quantity(py: Python<'_>, kind: &str, text: &str, path: &str) -> PyResult<u64> {
    use dsim_core::time::{Bytes, Duration, Rate};
    let value = match kind {
        "rate" => Rate::parse(text).map(|r| r.0),
        "size" => Bytes::parse(text).map(|b| b.0),
        "duration" => Duration::parse(text).map(|d| d.0),
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "kind \"{kind}\" is not one of \"rate\", \"size\", \"duration\""
            )));
        }
    };
    value.map_err(|e| {
        scenario_error(
            py,
            &ConfigError::new(scenario::KeyPath::parse(path), Some(format!("\"{text}\"")), e.0),
        )
    })
}

/// The standard name of a codepoint ("EF", "AF11", ...) or its number as text.
#[pyfunction]
fn dscp_name(dscp: u8) -> String {
    dsim_core::packet::Dscp(dscp).to_string()
}

/// The `type` names `replay` accepts.
#[pyfunction]
fn replay_kinds() -> Vec<&'static str> {
    dsim_core::replay::kinds()
}

/// Replays a trace (columns as lists) through the mechanism configured by `config` (TOML
/// text of its scenario table); returns one row per packet. `colors` holds each packet's
/// incoming colour (0 green, 1 yellow, 2 red, 255 none); `ecns` its ECN field (the IP
/// header's two bits, RFC 3168: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE; all 0 if None);
/// `flow_names` names the flows `flows` indexes. With `series`, the discipline's state
/// after each arrival is added (`dsim_core::replay::series_columns`). `depart_ns` and
/// `tx_end_ns` are u64::MAX for a packet that never left.
#[pyfunction]
#[pyo3(signature = (config, times_ns, sizes, dscps, flows, colors, flow_names, rate=None, seed=1, ecns=None, series=false))]
#[allow(clippy::too_many_arguments)]
fn replay(
    py: Python<'_>,
    config: &str,
    times_ns: Vec<u64>,
    sizes: Vec<u64>,
    dscps: Vec<u8>,
    flows: Vec<u32>,
    colors: Vec<u8>,
    flow_names: Vec<String>,
    rate: Option<&str>,
    seed: u64,
    ecns: Option<Vec<u8>>,
    series: bool,
) -> PyResult<ArrowTable> {
    use dsim_core::packet::{Color, Dscp, Ecn};
    use dsim_core::replay::{Arrival, mechanism_from_toml};
    use dsim_core::results::{Column, Table};
    use dsim_core::time::{Rate, SimTime};
    let root = scenario::KeyPath::root();
    let rate = match rate {
        Some(r) => Some(
            Rate::parse(r)
                .map_err(|e| scenario_error(py, &ConfigError::new(root.key("rate"), Some(format!("\"{r}\"")), e.0)))?,
        ),
        None => None,
    };
    let n = times_ns.len();
    let ecns = ecns.unwrap_or_else(|| vec![0; n]);
    if [sizes.len(), dscps.len(), flows.len(), colors.len(), ecns.len()]
        .iter()
        .any(|&l| l != n)
    {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "the trace's columns must have the same length",
        ));
    }
    let mut arrivals = Vec::with_capacity(n);
    for i in 0..n {
        let size = u32::try_from(sizes[i]).map_err(|_| {
            let path = root.key("trace").index(i).key("size");
            scenario_error(
                py,
                &ConfigError::new(path, Some(sizes[i].to_string()), "a packet is at most 4 GB"),
            )
        })?;
        let color = Color::ALL.get(colors[i] as usize).copied();
        arrivals.push(Arrival {
            time: SimTime(times_ns[i]),
            size,
            dscp: Dscp(dscps[i]),
            flow: flows[i],
            color,
            ecn: Ecn::from_bits(ecns[i]),
        });
    }
    let (mech, (outcomes, states)) = guarded(py, "replaying the trace", || {
        let mech = mechanism_from_toml(config, rate)?;
        let replayed = dsim_core::replay::replay_series(&mech, &arrivals, &flow_names, seed)?;
        Ok((mech, replayed))
    })?;
    // Integer nanoseconds end to end (a float64 rounds epoch times to 256 ns); u64::MAX
    // marks a packet that never left (dropped), a null in Python.
    let ns = |t: Option<SimTime>| t.map_or(u64::MAX, |t| t.0);
    let mut table = Table {
        columns: vec![
            (
                "dscp_out".into(),
                Column::U64(outcomes.iter().map(|o| o.dscp.0 as u64).collect()),
            ),
            (
                "color".into(),
                Column::Str(
                    outcomes
                        .iter()
                        .map(|o| o.color.map_or("", |c| c.name()).to_string())
                        .collect(),
                ),
            ),
            (
                "dropped".into(),
                Column::U64(outcomes.iter().map(|o| o.dropped.is_some() as u64).collect()),
            ),
            (
                "drop_cause".into(),
                Column::Str(
                    outcomes
                        .iter()
                        .map(|o| o.dropped.map_or("", |c| c.name()).to_string())
                        .collect(),
                ),
            ),
            (
                "depart_ns".into(),
                Column::U64(outcomes.iter().map(|o| ns(o.depart)).collect()),
            ),
            (
                "tx_end_ns".into(),
                Column::U64(outcomes.iter().map(|o| ns(o.tx_end)).collect()),
            ),
            (
                "ecn_out".into(),
                Column::U64(outcomes.iter().map(|o| o.ecn as u64).collect()),
            ),
        ],
    };
    if series {
        table.columns.extend(dsim_core::replay::series_columns(&mech, &states));
    }
    ArrowTable::from_table(&table).map_err(|e| simulation_error(py, e))
}

/// A trace that cannot be read: the error names the trace (`trace`), the caller the file.
fn trace_error(py: Python<'_>, e: std::io::Error) -> PyErr {
    scenario_error(
        py,
        &ConfigError::new(scenario::KeyPath::root().key("trace"), None, e.to_string()),
    )
}

/// Reads a pcap capture (at most `max_bytes` long) as a trace: arrival time (ns after the
/// first packet), IPv4 total length, DSCP and 5-tuple flow label of every record.
#[pyfunction]
#[pyo3(signature = (path, max_bytes=u64::MAX))]
fn read_pcap(py: Python<'_>, path: std::path::PathBuf, max_bytes: u64) -> PyResult<ArrowTable> {
    use dsim_core::results::{Column, Table};
    let t = dsim_core::trace::PcapTrace::read(&path, max_bytes).map_err(|e| trace_error(py, e))?;
    let n = t.records.len();
    let table = Table {
        columns: vec![
            ("time_ns".into(), Column::U64((0..n).map(|i| t.arrival(i).0).collect())),
            (
                "size".into(),
                Column::U64(t.records.iter().map(|r| r.size as u64).collect()),
            ),
            (
                "dscp".into(),
                Column::U64(t.records.iter().map(|r| r.dscp.0 as u64).collect()),
            ),
            (
                "ecn".into(),
                Column::U64(t.records.iter().map(|r| r.ecn as u64).collect()),
            ),
            (
                "flow".into(),
                Column::Str(t.records.iter().map(|r| r.flow.clone()).collect()),
            ),
        ],
    };
    ArrowTable::from_table(&table).map_err(|e| simulation_error(py, e))
}

/// Writes the records `rows` of the capture `source` to `out` with their new DSCP, ECN
/// field (the two bits, RFC 3168) and departure time (ns after the first packet), in
/// departure order; the others are left out.
#[pyfunction]
fn write_pcap(
    py: Python<'_>,
    source: std::path::PathBuf,
    out: std::path::PathBuf,
    rows: Vec<usize>,
    dscps: Vec<u8>,
    ecns: Vec<u8>,
    departs_ns: Vec<u64>,
) -> PyResult<()> {
    use dsim_core::packet::{Dscp, Ecn};
    use dsim_core::time::SimTime;
    let t = dsim_core::trace::PcapTrace::read(&source, u64::MAX).map_err(|e| trace_error(py, e))?;
    if [dscps.len(), ecns.len(), departs_ns.len()]
        .iter()
        .any(|&l| l != rows.len())
        || rows.iter().any(|&r| r >= t.records.len())
    {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "rows, dscps, ecns and departs_ns must match the capture",
        ));
    }
    let kept: Vec<_> = (0..rows.len())
        .map(|k| {
            (
                rows[k],
                Dscp(dscps[k] & 63),
                Ecn::from_bits(ecns[k]),
                SimTime(departs_ns[k]),
            )
        })
        .collect();
    t.write_rewritten(&out, &kept).map_err(|e| {
        let rule = format!("cannot write the capture: {e}");
        scenario_error(
            py,
            &ConfigError::new(
                scenario::KeyPath::root().key("--out"),
                Some(out.display().to_string()),
                rule,
            ),
        )
    })
}

/// The seed of the task with coordinates `coords` under the base seed `base`:
/// `derive_seed(base, coords)`; `[replication]` for a run, `[point, replication]` in a sweep.
#[pyfunction]
fn derive_seed(base: u64, coords: Vec<u64>) -> u64 {
    dsim_core::engine::rng::derive_seed(base, &coords)
}

/// Runs one task (one replication, seed `derive_seed(base_seed, coords)`, replication
/// number = last coordinate) and returns {table name: ArrowTable}.
///
/// The run advances in steps of simulated time (about 0.1 s of wall time each) with the GIL
/// released; between two steps it takes the GIL, checks for signals (Ctrl-C stops it when it
/// runs on the main thread) and calls `progress(now_s, end_s, events)` if given. An
/// exception raised by `progress` stops the run and propagates.
///
/// The scenario is read and built once, for the run: callers validate it first (every
/// Python path does, with the file's lines in its errors); a rule it breaks fails the task
/// with the rule, without a line.
#[pyfunction]
#[pyo3(signature = (toml, base_seed, coords, progress=None, capture_dir=None))]
fn run_task<'py>(
    py: Python<'py>,
    toml: &str,
    base_seed: u64,
    coords: Vec<u64>,
    progress: Option<Py<PyAny>>,
    capture_dir: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = dsim_core::RunOptions { capture_dir };
    let sc = read(py, toml)?;
    let name = sc.name.clone().unwrap_or_else(|| "scenario".into());
    let context = format!("running {name} with base seed {base_seed}, task {coords:?}");
    let mut failure: Option<PyErr> = None;
    let outcome = guarded(py, &context, || {
        let mut hook = |p: Progress| -> ControlFlow<()> {
            Python::attach(|py| {
                let called = py.check_signals().and_then(|()| match &progress {
                    Some(cb) => cb
                        .call1(py, (p.now.as_secs_f64(), p.end.as_secs_f64(), p.events))
                        .map(|_| ()),
                    None => Ok(()),
                });
                match called {
                    Ok(()) => ControlFlow::Continue(()),
                    Err(e) => {
                        failure = Some(e);
                        ControlFlow::Break(())
                    }
                }
            })
        };
        dsim_core::task::run_task(&sc, base_seed, &coords, Some(&mut hook), &opts)
    })?;
    match (outcome, failure) {
        // A Ctrl-C (or a failing progress callback) at the last step: the run is complete,
        // but the caller asked to stop, and check_signals has consumed the signal.
        (_, Some(e)) => Err(e),
        (Some(tables), None) => tables_dict(py, &tables),
        (None, None) => Err(simulation_error(py, format!("{context}: stopped without a reason"))),
    }
}

/// One timed run for `dsim bench` (replication 0 under base seed `seed`): returns the
/// events handled, the simulated seconds, the wall seconds of the build, the event loop and
/// the results, and the packets that crossed `port` ("FROM->TO").
#[pyfunction]
fn bench_run<'py>(py: Python<'py>, toml: &str, seed: u64, port: &str) -> PyResult<Bound<'py, PyDict>> {
    let sc = parse(py, toml)?;
    let r = guarded(py, "running a benchmark", || dsim_core::bench::run(&sc, seed, port))?;
    let out = PyDict::new(py);
    out.set_item("events", r.events)?;
    out.set_item("simulated_s", r.simulated_s)?;
    out.set_item("build_s", r.build_s)?;
    out.set_item("run_s", r.run_s)?;
    out.set_item("run_cpu_s", r.run_cpu_s)?;
    out.set_item("results_s", r.results_s)?;
    out.set_item("port_departures_pkts", r.port_departures_pkts)?;
    out.set_item("port_drops_pkts", r.port_drops_pkts)?;
    out.set_item("packets_peak", r.packets_peak)?;
    out.set_item("flow_rows", r.flow_rows)?;
    Ok(out)
}

#[pymodule]
fn _dsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", dsim_core::VERSION)?;
    // `make build` sets DSIM_PGO=1 when it compiles with profile-guided optimization.
    m.add("__pgo__", option_env!("DSIM_PGO") == Some("1"))?;
    m.add_class::<ArrowTable>()?;
    // The result tables, declared in the core: all of them, those a run may lack, and
    // among these the recorded ones (dsim/results.py).
    let names = Tables::names();
    m.add("TABLES", PyTuple::new(m.py(), names)?)?;
    m.add(
        "OPTIONAL_TABLES",
        PyTuple::new(
            m.py(),
            names.into_iter().filter(|n| Tables::optional(n)).collect::<Vec<_>>(),
        )?,
    )?;
    m.add("RECORDED_TABLES", PyTuple::new(m.py(), Tables::RECORDED)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(load_toml, m)?)?;
    m.add_function(wrap_pyfunction!(default_limits, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_toml, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_hash, m)?)?;
    m.add_function(wrap_pyfunction!(run_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(replication_seed, m)?)?;
    m.add_function(wrap_pyfunction!(parse_dscp, m)?)?;
    m.add_function(wrap_pyfunction!(parse_quantity, m)?)?;
    m.add_function(wrap_pyfunction!(dscp_name, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(replay_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(read_pcap, m)?)?;
    m.add_function(wrap_pyfunction!(write_pcap, m)?)?;

    m.add_function(wrap_pyfunction!(run_task, m)?)?;
    m.add_function(wrap_pyfunction!(derive_seed, m)?)?;
    m.add_function(wrap_pyfunction!(bench_run, m)?)?;
    Ok(())
}
