//! Transports: they turn what an application sends into packets, and packets back.

pub mod tcp;
pub mod tfrc;
pub mod udp;
