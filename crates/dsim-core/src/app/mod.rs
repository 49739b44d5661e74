//! Applications: what a flow's source wants to send, and when.

pub mod cbr;
pub mod ftp;
pub mod poisson;
pub mod web;

pub use cbr::Cbr;
pub use ftp::Ftp;
pub use poisson::Poisson;
pub use web::Web;

use crate::engine::rng::Rng;
use crate::time::Duration;

/// A datagram application's next emission: its size and the gap to the one after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Emission {
    pub size: u32,
    pub gap: Duration,
}

#[derive(Debug, Clone)]
pub enum App {
    Cbr(Cbr),
    Poisson(Poisson),
}

impl App {
    /// The time one packet takes at the flow's subscribed rate: size * 8 / rate for a CBR
    /// source, the unit RFC 2598 appendix A.3 expresses jitter in ("% of a packet time at
    /// the subscribed rate"). None for sources without a subscribed rate.
    pub fn packet_time(&self) -> Option<Duration> {
        match self {
            App::Cbr(a) => Some(a.interval),
            App::Poisson(_) => None,
        }
    }

    #[inline]
    pub fn next_emission(&mut self, rng: &mut Rng) -> Emission {
        match self {
            App::Cbr(a) => a.next_emission(rng),
            App::Poisson(a) => a.next_emission(rng),
        }
    }
}

/// An application over TCP: it writes bytes into the connection.
#[derive(Debug, Clone)]
pub enum TcpApp {
    Ftp(Ftp),
    Web(Web),
}
