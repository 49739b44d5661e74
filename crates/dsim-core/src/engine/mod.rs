//! The discrete-event engine: integer-nanosecond time, the future event list and the
//! random streams. What an event *does* is the simulation's business ([`crate::sim`]).

pub mod queue;
pub mod rng;

pub use queue::{EventQueue, Scheduled};
