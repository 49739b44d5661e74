//! Helpers shared by the end-to-end tests: run a scenario given as TOML, read result columns.
#![allow(dead_code)] // each test file uses its own subset

use dsim_core::results::{Column, Table, Tables};
use dsim_core::scenario::from_toml;

/// One replication of `toml` with its own seed, on this thread.
pub fn run(toml: &str) -> Tables {
    let sc = from_toml(toml).unwrap_or_else(|e| panic!("{e}"));
    dsim_core::run(&sc, sc.seed, 1, 1).unwrap()
}

/// The string column `name` of `t`.
pub fn str_col<'a>(t: &'a Table, name: &str) -> &'a [String] {
    match t.column(name) {
        Some(Column::Str(v)) => v,
        other => panic!("no string column {name}: {other:?}"),
    }
}

/// The integer column `name` of `t`.
pub fn u64_col<'a>(t: &'a Table, name: &str) -> &'a [u64] {
    match t.column(name) {
        Some(Column::U64(v)) => v,
        other => panic!("no integer column {name}: {other:?}"),
    }
}

/// The float column `name` of `t`.
pub fn f64_col<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    match t.column(name) {
        Some(Column::F64(v)) => v,
        other => panic!("no float column {name}: {other:?}"),
    }
}
