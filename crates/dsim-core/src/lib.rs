//! dsim-core: a packet-level simulator for the IETF Differentiated Services mechanisms.
//!
//! ```
//! let toml = r#"
//!     duration = "2s"
//!     [nodes]
//!     hosts = ["A", "B"]
//!     [[link]]
//!     from = "A"
//!     to = "B"
//!     rate = "10Mbps"
//!     delay = "5ms"
//!     [[flow]]
//!     src = "A"
//!     dst = "B"
//!     app = { type = "cbr", rate = "1Mbps", size = "1000B" }
//! "#;
//! let scenario = dsim_core::scenario::from_toml(toml).unwrap();
//! let tables = dsim_core::run(&scenario, 1, 1, 1).unwrap();
//! assert_eq!(tables.flows.rows(), 1);
//! ```

pub mod app;
pub mod aqm;
pub mod bench;
pub mod bucket;
pub mod conditioner;
pub mod discipline;
pub mod engine;
pub mod estimate;
pub mod limits;
pub mod net;
pub mod packet;
pub mod params;
pub mod replay;
pub mod results;
pub mod scenario;
pub mod sched;
pub mod sim;
pub mod stats;
pub mod task;
pub mod time;
pub mod trace;
pub mod transport;

use std::path::PathBuf;

use rayon::prelude::*;

use engine::rng::derive_seed;
use results::Tables;
use scenario::{ConfigError, Scenario};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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

/// Runs one replication and returns its tables (the task `[replication]`, see [`task`]).
pub fn run_one(sc: &Scenario, base_seed: u64, replication: u64) -> Result<Tables, ConfigError> {
    run_one_with(sc, base_seed, replication, &RunOptions::default())
}

/// Runs one replication with `opts` and returns its tables.
pub fn run_one_with(sc: &Scenario, base_seed: u64, replication: u64, opts: &RunOptions) -> Result<Tables, ConfigError> {
    let tables = task::run_task(sc, base_seed, &[replication], None, opts)?;
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
