//! The drop-tail FIFO: packets in arrival order behind a physical limit in packets or bytes.
//!
//! Every queue in dsim is one of these; an active queue management policy ([`super::Aqm`])
//! may refuse a packet *before* the physical limit is reached, and the two kinds of loss
//! are counted apart (early vs overflow). A byte limit admits a packet only if the bytes
//! already queued plus the packet's size fit (ns-2's `queue-in-bytes_`, Linux `bfifo`); with
//! `overshoot`, whenever the bytes already queued do not exceed the limit, whatever the
//! packet's size, so the queue may end less than one packet above its limit (dummynet,
//! FreeBSD `ip_dummynet.c`: "if (q->len_bytes > fs->qsize) goto dropit"): small packets are
//! then refused exactly when large ones are.
//!
//! Step marking (DCTCP, RFC 8257 section 3.1: a switch marks arriving packets CE when its
//! queue exceeds a threshold K): with `mark_threshold` K, an ECN-capable packet that finds
//! more than K packets (or bytes) queued at its arrival, the packet on the wire not
//! counted, is marked CE when it is admitted. ns-3 gets the same from RED with MinTh =
//! MaxTh = K and QW = 1, which marks from K queued packets on (dsim's K - 1); Linux from
//! RED or a qdisc's `ce_threshold`.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::AqmQueue;
use crate::packet::PktId;
use crate::params::{ConfigError, KeyPath, Params};
use crate::time::Limit;

fn default_limit() -> Limit {
    Limit::Packets(100)
}

/// `type = "droptail"`: a FIFO queue that refuses what does not fit under its limit. The
/// queue of every port that does not say otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct DroptailSpec {
    /// Physical limit: packets ("100p") or bytes ("64KB").
    #[serde(default = "default_limit")]
    #[param(range = "(0, inf)")]
    pub limit: Limit,
    /// With a byte limit, admit a packet whenever the queue holds at most `limit` bytes,
    /// so that it may end less than one packet above it (dummynet's rule); false: the
    /// packet must fit (ns-2, Linux bfifo).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub overshoot: bool,
    /// Step marking for DCTCP (RFC 8257 3.1): an ECN-capable packet that finds more than
    /// this many packets ("20p") or bytes queued is marked CE. None by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[param(range = "[0, inf)")]
    pub mark_threshold: Option<Limit>,
}

/// A marking threshold in the limit's unit must lie below the limit: no packet would find
/// more queued.
pub fn check_mark_threshold(threshold: Option<Limit>, limit: Limit, path: &KeyPath) -> Result<(), ConfigError> {
    let below = match (threshold, limit) {
        (Some(Limit::Packets(k)), Limit::Packets(n)) | (Some(Limit::Bytes(k)), Limit::Bytes(n)) => k < n,
        _ => true,
    };
    if !below {
        let k = threshold.expect("compared");
        return Err(ConfigError::new(
            path.clone(),
            Some(format!("\"{k}\"")),
            format!("mark_threshold must be below the queue limit ({limit}): no packet finds more queued"),
        ));
    }
    Ok(())
}

/// `overshoot` is dummynet's byte-limit rule: it needs a byte limit.
pub fn check_overshoot(overshoot: bool, limit: Limit, path: &KeyPath) -> Result<(), ConfigError> {
    if overshoot && matches!(limit, Limit::Packets(_)) {
        return Err(ConfigError::new(
            path.clone(),
            Some("true".into()),
            format!(
                "overshoot changes how a byte limit admits packets; the limit here is in \
                 packets ({limit}): give it in bytes or drop overshoot"
            ),
        ));
    }
    Ok(())
}

impl Default for DroptailSpec {
    fn default() -> Self {
        DroptailSpec {
            limit: default_limit(),
            overshoot: false,
            mark_threshold: None,
        }
    }
}

impl DroptailSpec {
    /// The queue this table declares.
    pub fn queue(&self, path: &KeyPath) -> Result<AqmQueue, ConfigError> {
        self.check(path)?;
        check_overshoot(self.overshoot, self.limit, &path.key("overshoot"))?;
        check_mark_threshold(self.mark_threshold, self.limit, &path.key("mark_threshold"))?;
        let fifo = DropTailQueue::new(self.limit)
            .with_overshoot(self.overshoot)
            .with_mark_threshold(self.mark_threshold);
        Ok(AqmQueue::new(fifo, super::Aqm::DropTail))
    }
}

#[derive(Debug, Clone)]
pub struct DropTailQueue {
    pkts: VecDeque<PktId>,
    bytes: u64,
    limit: Limit,
    /// Byte limit: admit while the bytes queued are at most the limit (dummynet's rule).
    overshoot: bool,
    /// Step marking: mark ECN-capable arrivals that find more than this queued.
    mark_threshold: Option<Limit>,
}

impl DropTailQueue {
    pub fn new(limit: Limit) -> Self {
        let cap = match limit {
            Limit::Packets(n) => n.min(4096) as usize,
            Limit::Bytes(b) => (b / 500).min(4096) as usize,
        };
        DropTailQueue {
            pkts: VecDeque::with_capacity(cap),
            bytes: 0,
            limit,
            overshoot: false,
            mark_threshold: None,
        }
    }

    /// The same queue with DCTCP's step marking at `threshold` (see the module documentation).
    pub fn with_mark_threshold(mut self, threshold: Option<Limit>) -> Self {
        self.mark_threshold = threshold;
        self
    }

    /// Whether an ECN-capable packet arriving now is to be marked CE: it finds more than
    /// the marking threshold queued (RFC 8257 3.1).
    #[inline]
    pub fn marks_arrival(&self) -> bool {
        match self.mark_threshold {
            None => false,
            Some(Limit::Packets(k)) => self.pkts.len() as u64 > k,
            Some(Limit::Bytes(k)) => self.bytes > k,
        }
    }

    /// A queue without a limit of its own and no room reserved: one of many behind a
    /// common limit (FQ-CoDel's flow queues).
    pub fn unbounded() -> Self {
        DropTailQueue {
            pkts: VecDeque::new(),
            bytes: 0,
            limit: Limit::Packets(u64::MAX),
            overshoot: false,
            mark_threshold: None,
        }
    }

    /// The same queue with dummynet's byte-limit rule (see the module documentation).
    pub fn with_overshoot(mut self, overshoot: bool) -> Self {
        self.overshoot = overshoot;
        self
    }

    /// The largest packet the queue admits when it is empty ([`Self::fits`] of an empty
    /// queue): None when it admits none (a limit of 0 packets).
    pub fn largest_into_empty(&self) -> Option<u64> {
        match self.limit {
            Limit::Packets(0) => None,
            Limit::Packets(_) => Some(u64::MAX),
            Limit::Bytes(_) if self.overshoot => Some(u64::MAX),
            Limit::Bytes(b) => Some(b),
        }
    }

    /// Would a packet of `size` bytes fit under the physical limit?
    #[inline]
    pub fn fits(&self, size: u32) -> bool {
        match self.limit {
            Limit::Packets(n) => (self.pkts.len() as u64) < n,
            Limit::Bytes(b) if self.overshoot => self.bytes <= b,
            Limit::Bytes(b) => self.bytes + size as u64 <= b,
        }
    }

    #[inline]
    pub fn push(&mut self, id: PktId, size: u32) {
        self.pkts.push_back(id);
        self.bytes += size as u64;
    }

    /// Puts a packet at the head, ahead of those queued.
    pub fn push_front(&mut self, id: PktId, size: u32) {
        self.pkts.push_front(id);
        self.bytes += size as u64;
    }

    /// Removes the head; the caller passes its size (read from the arena).
    #[inline]
    pub fn pop(&mut self, size_of: impl FnOnce(PktId) -> u32) -> Option<PktId> {
        let id = self.pkts.pop_front()?;
        self.bytes -= size_of(id) as u64;
        Some(id)
    }

    #[inline]
    pub fn head(&self) -> Option<PktId> {
        self.pkts.front().copied()
    }

    /// The packet behind the head: the next to leave after it.
    #[inline]
    pub fn second(&self) -> Option<PktId> {
        self.pkts.get(1).copied()
    }
    #[inline]
    pub fn len_packets(&self) -> usize {
        self.pkts.len()
    }
    #[inline]
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }
    pub fn limit(&self) -> Limit {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_marking_in_bytes() {
        // K = 2500 B marks the arrival that finds 3000 B queued, not one that finds 2500 B.
        let mut fifo = DropTailQueue::new(Limit::Bytes(10_000)).with_mark_threshold(Some(Limit::Bytes(2500)));
        fifo.push(PktId(0), 1500);
        fifo.push(PktId(1), 1000);
        assert!(!fifo.marks_arrival(), "2500 B is not more than K");
        fifo.push(PktId(2), 500);
        assert!(fifo.marks_arrival());
    }

    #[test]
    fn a_marking_threshold_lies_below_the_limit() {
        let spec = |k: Limit| DroptailSpec {
            limit: Limit::Packets(20),
            overshoot: false,
            mark_threshold: Some(k),
        };
        let e = spec(Limit::Packets(20))
            .queue(&KeyPath::root().key("queue"))
            .unwrap_err();
        assert_eq!(e.path.to_string(), "queue.mark_threshold");
        assert!(e.rule.contains("below the queue limit (20p)"), "{e}");
        assert!(spec(Limit::Packets(19)).queue(&KeyPath::root()).is_ok());
        // Bytes against a packet limit: nothing to compare.
        assert!(spec(Limit::Bytes(100_000)).queue(&KeyPath::root()).is_ok());
    }

    #[test]
    fn packet_limit() {
        let mut q = DropTailQueue::new(Limit::Packets(2));
        assert!(q.fits(1500));
        q.push(PktId(0), 1500);
        q.push(PktId(1), 40);
        assert!(!q.fits(40));
        assert_eq!(q.pop(|_| 1500), Some(PktId(0)));
        assert!(q.fits(40));
        assert_eq!(q.len_bytes(), 40);
    }

    #[test]
    fn byte_limit_counts_the_arriving_packet() {
        let mut q = DropTailQueue::new(Limit::Bytes(3000));
        q.push(PktId(0), 1500);
        assert!(q.fits(1500));
        assert!(!q.fits(1501));
        q.push(PktId(1), 1500);
        assert!(!q.fits(1));
    }

    #[test]
    fn overshoot_admits_while_the_queue_is_not_above_its_limit() {
        // Limit 3000 B: with 2900 B queued a 1500 B packet is admitted (4400 B), after
        // which nothing is; at exactly 3000 B still admitted (dummynet: drop if > qsize).
        let mut q = DropTailQueue::new(Limit::Bytes(3000)).with_overshoot(true);
        q.push(PktId(0), 2900);
        assert!(q.fits(1500) && q.fits(40));
        q.push(PktId(1), 1500);
        assert!(!q.fits(40));
        let mut q = DropTailQueue::new(Limit::Bytes(3000)).with_overshoot(true);
        q.push(PktId(0), 3000);
        assert!(q.fits(1500));
        // Packet limits are unchanged.
        let mut q = DropTailQueue::new(Limit::Packets(1)).with_overshoot(true);
        q.push(PktId(0), 40);
        assert!(!q.fits(40));
    }
}
