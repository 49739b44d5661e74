//! TOML text as Python values, in the types and key order of Python's `tomllib`: the core
//! checks and parses the text (its limits, TOML 1.1), and the Python front reads the same
//! data without parsing it again in pure Python (tomllib took 0.6 s of a 2,000-flow file's
//! 1.2 MB, 2.7 s of a 10,000-flow one; this, about a tenth).
//!
//! Tables keep their keys in the order the file first names them (toml_edit's document
//! order, as tomllib's dicts); arrays of tables are lists of dicts; datetimes become
//! `datetime.datetime` (with a `timezone` when they carry an offset), `datetime.date` or
//! `datetime.time`, fractions of a second cut to microseconds as tomllib cuts them.

use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use toml_edit::{Item, Value};

/// A document's root table as a dict.
pub fn document<'py>(py: Python<'py>, doc: &toml_edit::Table) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (k, v) in doc.iter() {
        dict.set_item(k, item(py, v)?)?;
    }
    Ok(dict)
}

fn item<'py>(py: Python<'py>, item: &Item) -> PyResult<Bound<'py, PyAny>> {
    match item {
        Item::Value(v) => value(py, v),
        Item::Table(t) => Ok(document(py, t)?.into_any()),
        Item::ArrayOfTables(a) => {
            let tables = a.iter().map(|t| document(py, t)).collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, tables)?.into_any())
        }
        // Only an edited document holds empty items; a parsed one never does.
        Item::None => Ok(py.None().into_bound(py)),
    }
}

fn value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Value::String(s) => s.value().into_bound_py_any(py),
        Value::Integer(i) => i.value().into_bound_py_any(py),
        Value::Float(f) => f.value().into_bound_py_any(py),
        Value::Boolean(b) => b.value().into_bound_py_any(py),
        Value::Datetime(d) => datetime(py, d.value()),
        Value::Array(a) => {
            let items = a.iter().map(|v| value(py, v)).collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, items)?.into_any())
        }
        Value::InlineTable(t) => {
            let dict = PyDict::new(py);
            for (k, v) in t.iter() {
                dict.set_item(k, value(py, v)?)?;
            }
            Ok(dict.into_any())
        }
    }
}

/// A TOML datetime as Python's `datetime` module builds it (rare in a scenario: through
/// the module's constructors rather than the C API, which the stable ABI lacks).
fn datetime<'py>(py: Python<'py>, d: &toml_edit::Datetime) -> PyResult<Bound<'py, PyAny>> {
    let m = py.import("datetime")?;
    let time = d.time.map(|t| {
        let micros = t.nanosecond.unwrap_or(0) / 1_000;
        (t.hour, t.minute, t.second.unwrap_or(0), micros)
    });
    let tz = match d.offset {
        None => py.None().into_bound(py),
        Some(toml_edit::Offset::Z) => m.getattr("timezone")?.getattr("utc")?,
        Some(toml_edit::Offset::Custom { minutes }) => {
            let delta = m.getattr("timedelta")?.call1((0, i32::from(minutes) * 60))?;
            m.getattr("timezone")?.call1((delta,))?
        }
    };
    match (d.date, time) {
        (Some(date), Some((h, mi, s, us))) => m
            .getattr("datetime")?
            .call1((date.year, date.month, date.day, h, mi, s, us, tz)),
        (Some(date), None) => m.getattr("date")?.call1((date.year, date.month, date.day)),
        (None, Some((h, mi, s, us))) => m.getattr("time")?.call1((h, mi, s, us)),
        (None, None) => unreachable!("a TOML datetime has a date or a time"),
    }
}
