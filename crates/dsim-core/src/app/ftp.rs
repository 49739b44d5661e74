//! FTP: a bulk transfer over TCP. Infinite (the source always has data: the long-lived
//! "infinite FTP" of ns-2 and of seed 002) or finite (N bytes written at the start; the
//! flow records the completion time, when the last byte reaches the receiving
//! application).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ftp {
    /// Bytes to transfer; None = infinite.
    pub bytes: Option<u64>,
}
