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
pub mod hint;
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

pub use results::VERSION;
pub use task::{RunOptions, replication_seed, run, run_one, run_one_with, run_with};
