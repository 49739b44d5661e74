//! `dsim._dsim`: the thin PyO3 layer. Each function converts its arguments, calls
//! dsim-core with the GIL released, and maps errors: a scenario error becomes
//! `dsim.errors.ScenarioError` (key path, value, rule, line), anything unexpected, a Rust
//! panic included, becomes `dsim.errors.SimulationError` with context. Result tables cross
//! as Arrow record batches through the Arrow PyCapsule interface.

mod arrow;

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use dsim_core::scenario::{self, Scenario, ScenarioError};

use crate::arrow::ArrowTable;

fn scenario_error(py: Python<'_>, e: &ScenarioError) -> PyErr {
    let make = || -> PyResult<PyErr> {
        let cls = py.import("dsim.errors")?.getattr("ScenarioError")?;
        let path = e.path.to_string();
        let obj = cls.call1((e.to_string(), path, e.value.clone(), e.rule.clone(), e.line))?;
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
fn guarded<T: Send>(py: Python<'_>, context: &str, f: impl FnOnce() -> Result<T, ScenarioError> + Send) -> PyResult<T> {
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

/// Parses and validates a scenario given as TOML text; raises ScenarioError.
#[pyfunction]
fn validate(py: Python<'_>, toml: &str) -> PyResult<()> {
    parse(py, toml).map(|_| ())
}

/// The canonical TOML of a scenario (formatting, comments and key order removed).
#[pyfunction]
fn canonical_toml(py: Python<'_>, toml: &str) -> PyResult<String> {
    Ok(scenario::canonical_toml(&parse(py, toml)?))
}

/// The scenario's hash: first 16 hex digits of the SHA-256 of its canonical TOML.
#[pyfunction]
fn scenario_hash(py: Python<'_>, toml: &str) -> PyResult<String> {
    Ok(scenario::scenario_hash(&parse(py, toml)?))
}

/// The seed replication `replication` runs with, given the base seed.
#[pyfunction]
fn replication_seed(base: u64, replication: u64) -> u64 {
    dsim_core::replication_seed(base, replication)
}

/// Runs a scenario and returns {table name: ArrowTable}. `seed` and `replications` default
/// to the scenario's own; `jobs` = 0 uses every core; `capture_dir` is where the
/// scenario's `[[capture]]` points write their pcap files (None: no captures).
#[pyfunction]
#[pyo3(signature = (toml, seed=None, replications=None, jobs=0, capture_dir=None))]
fn run<'py>(
    py: Python<'py>,
    toml: &str,
    seed: Option<u64>,
    replications: Option<u64>,
    jobs: usize,
    capture_dir: Option<std::path::PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = parse(py, toml)?;
    let seed = seed.unwrap_or(sc.seed);
    let reps = replications.unwrap_or(sc.replications as u64);
    if reps == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "replications = 0: at least one replication is needed",
        ));
    }
    let name = sc.name.clone().unwrap_or_else(|| "scenario".into());
    let context = format!("running {name} with seed {seed}");
    let opts = dsim_core::RunOptions { capture_dir };
    let tables = guarded(py, &context, || dsim_core::run_with(&sc, seed, reps, jobs, &opts))?;
    let out = PyDict::new(py);
    for (name, table) in tables.named() {
        out.set_item(
            name,
            ArrowTable::from_table(table).map_err(|e| simulation_error(py, e))?,
        )?;
    }
    Ok(out)
}

#[pymodule]
fn _dsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", dsim_core::VERSION)?;
    m.add_class::<ArrowTable>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_toml, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_hash, m)?)?;
    m.add_function(wrap_pyfunction!(replication_seed, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    Ok(())
}
