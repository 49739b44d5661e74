//! Golden results: the result tables of every scenario dsim ships (the reproductions'
//! `python/dsim/scenarios/*/*.toml`) and of the short coverage networks in `tests/golden/`
//! (what the shipped ones leave out: plain and gentle RED in packets and bytes, ECN, queue
//! series, MRED coupled and decoupled in bytes, srTCM, shapers, priority, WRR, DRR and CBQ
//! with an AQM inside; TCP Reno and NewReno, byte counting, delayed ACKs, the handshake,
//! finite transfers), each reduced to one line: events handled, packets delivered and
//! dropped, and a SHA-256 fingerprint of every table, bit for bit. Each runs with the
//! next event's lines prefetched, which the small ones would not do by themselves.
//!
//! The lines are a snapshot (`tests/snapshots/golden__results.snap`), committed and
//! reviewed: a change of the engine that must not move results leaves it as it is; a change
//! that moves results on purpose updates it in the same commit, and its message says which
//! lines moved and why. To accept an intended change:
//!
//!     INSTA_UPDATE=always cargo test --release -p dsim-core --test golden
//!
//! (or `cargo insta review` with cargo-insta installed), then read `git diff` of the snapshot.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use dsim_core::results::{self, Column, RunInfo, Table};

/// The coverage networks run at two seeds; the shipped scenarios at the seed they state.
const COVERAGE_SEEDS: [u64; 2] = [1, 7];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository")
}

/// `dir/*.toml`, sorted.
fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// Every (file, seed) the snapshot holds, in its order.
fn cases(root: &Path) -> Vec<(PathBuf, Option<u64>)> {
    let shipped = root.join("python/dsim/scenarios");
    let mut families: Vec<PathBuf> = std::fs::read_dir(&shipped)
        .expect("python/dsim/scenarios")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    families.sort();
    let mut cases: Vec<(PathBuf, Option<u64>)> = families
        .iter()
        .flat_map(|f| scenario_files(f))
        .map(|f| (f, None))
        .collect();
    for f in scenario_files(&root.join("crates/dsim-core/tests/golden")) {
        cases.extend(COVERAGE_SEEDS.map(|s| (f.clone(), Some(s))));
    }
    cases
}

fn column_sum(t: &Table, name: &str) -> u64 {
    match t.column(name) {
        Some(Column::U64(v)) => v.iter().sum(),
        other => panic!("no integer column {name}: {other:?}"),
    }
}

/// Replication 0 of `file` at `seed` (the file's own seed if None), as one line.
fn golden_line(root: &Path, file: &Path, seed: Option<u64>) -> String {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let sc = dsim_core::scenario::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let base_seed = seed.unwrap_or(sc.seed);
    let task_seed = dsim_core::replication_seed(base_seed, 0);
    let mut sim = dsim_core::scenario::build(&sc, task_seed).expect("a validated scenario builds");
    // The prefetching of large runs, on here whatever the size: a hint that must leave
    // every table as it is (the snapshot was taken without it; `cargo test` runs the rest
    // of the suite with it off at these sizes).
    sim.set_prefetch_ahead(true);
    sim.run();
    let info = RunInfo {
        replication: 0,
        seed: task_seed,
        base_seed,
        scenario_hash: String::new(),
        wall_s: 0.0,
    };
    let tables = results::collect(&sim, &info);
    let name = file.strip_prefix(root).expect("under the repository").display();
    format!(
        "{name} seed={base_seed} events={} delivered={} dropped={} {}",
        sim.events_processed,
        column_sum(&tables.flows, "delivered_pkts"),
        column_sum(&tables.flows, "dropped_pkts"),
        tables.fingerprint(),
    )
}

#[test]
fn results() {
    let root = repo_root();
    let lines: Vec<String> = cases(&root)
        .par_iter()
        .map(|(file, seed)| golden_line(&root, file, *seed))
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

/// `canonical_toml` writes `toml::to_string`'s text in one pass (scenario/mod.rs): the
/// same characters, so every scenario keeps its hash (the `run` table's `scenario_hash`,
/// a sweep's finished points).
#[test]
fn canonical_toml_is_toml_to_string() {
    let root = repo_root();
    let mut files: Vec<PathBuf> = cases(&root).into_iter().map(|(f, _)| f).collect();
    files.dedup();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let sc = dsim_core::scenario::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let reference = toml::to_string(&sc).expect("serializes");
        assert_eq!(
            dsim_core::scenario::canonical_toml(&sc),
            reference,
            "{}",
            file.display()
        );
    }
}
