//! The SACK scoreboard of RFC 6675, "A Conservative Loss Recovery Algorithm Based on
//! Selective Acknowledgment (SACK) for TCP", section 4: Update(), IsLost(), SetPipe() and
//! the hole searches behind NextSeg().
//!
//! The scoreboard keeps the SACKed ranges above HighACK as a [`RangeSet`] (a small sorted
//! vector of byte ranges): no allocation per segment, and every query costs O(number of
//! ranges), not O(number of segments).
//!
//! Sequence numbers are exclusive at the top, as in the rest of dsim's TCP: HighACK is the
//! cumulative ACK number (first unacknowledged byte) and HighData the byte after the
//! highest one sent. RFC 6675's inclusive "octet <= HighRxt" reads `octet < high_rxt`.
//!
//! IsLost (section 4): "This routine returns whether the given sequence number is
//! considered to be lost. The routine returns true when either DupThresh discontiguous
//! SACKed sequences have arrived above 'SeqNum' or more than (DupThresh - 1) * SMSS bytes
//! with sequence numbers greater than 'SeqNum' have been SACKed." A SACKed range of n
//! bytes counts as ceil(n / SMSS) SACKed segments. IsLost is monotone (a lower sequence
//! number has at least as much SACKed data above it), so the scoreboard computes the
//! "lost edge" once: every un-SACKed byte below it is lost, none above.

use super::ranges::RangeSet;

/// DupThresh of RFC 6675 section 2 (and RFC 5681's three duplicate ACKs).
pub const DUP_THRESH: u64 = 3;

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// SACKed ranges above HighACK.
    sacked: RangeSet,
}

impl Scoreboard {
    pub fn with_capacity(n: usize) -> Self {
        Scoreboard {
            sacked: RangeSet::with_capacity(n),
        }
    }

    pub fn clear(&mut self) {
        self.sacked.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.sacked.is_empty()
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        self.sacked.as_slice()
    }

    /// Update() of section 4: records the SACK blocks of an ACK whose cumulative ACK
    /// number is `high_ack`, and forgets everything below it. Blocks are clipped to
    /// [high_ack, high_data) (the rest is old or bogus). Returns the number of bytes that
    /// were neither acknowledged nor SACKed before: more than zero makes the ACK a
    /// "duplicate acknowledgment" in RFC 6675's sense (section 2, DupAck).
    #[inline]
    pub fn update(&mut self, high_ack: u64, high_data: u64, blocks: impl Iterator<Item = (u64, u64)>) -> u64 {
        self.advance(high_ack);
        blocks
            .map(|(l, r)| self.sacked.insert(l.max(high_ack), r.min(high_data)))
            .sum()
    }

    /// Drops everything below the cumulative ACK point.
    pub fn advance(&mut self, high_ack: u64) {
        self.sacked.remove_below(high_ack);
    }

    pub fn is_sacked(&self, seq: u64) -> bool {
        self.sacked.contains(seq)
    }

    /// The SACKed range holding `seq`, if any.
    pub fn sacked_range(&self, seq: u64) -> Option<(u64, u64)> {
        self.sacked.containing(seq)
    }

    /// The byte after the highest SACKed byte, if any.
    pub fn high_sacked(&self) -> Option<u64> {
        self.sacked.last().map(|x| x.1)
    }

    /// SACKed bytes in [from, to).
    pub fn sacked_in(&self, from: u64, to: u64) -> u64 {
        self.sacked.bytes_in(from, to)
    }

    /// The lost edge: IsLost(s) holds exactly for the un-SACKed s below it (section 4).
    pub fn lost_edge(&self, high_ack: u64, smss: u64) -> u64 {
        let (mut bytes, mut segments) = (0u64, 0u64);
        for &(l, r) in self.sacked.as_slice().iter().rev() {
            bytes += r - l;
            segments += (r - l).div_ceil(smss);
            if segments >= DUP_THRESH || bytes > (DUP_THRESH - 1) * smss {
                return l;
            }
        }
        high_ack
    }

    pub fn is_lost(&self, seq: u64, high_ack: u64, smss: u64) -> bool {
        !self.is_sacked(seq) && seq < self.lost_edge(high_ack, smss)
    }

    /// SetPipe() of section 4: for each octet in [HighACK, HighData) that is not SACKed,
    /// "(a) If IsLost (S1) returns false: Pipe is incremented by 1 octet. (b) If S1 <=
    /// HighRxt: Pipe is incremented by 1 octet."
    pub fn pipe(&self, high_ack: u64, high_data: u64, high_rxt: u64, smss: u64) -> u64 {
        let edge = self.lost_edge(high_ack, smss);
        let overlap = |a: u64, b: u64, c: u64, d: u64| b.min(d).saturating_sub(a.max(c));
        let mut pipe = 0;
        self.sacked.for_each_gap(high_ack, high_data, |a, b| {
            // (a): the part of the hole at or above the lost edge.
            pipe += overlap(a, b, edge, u64::MAX);
            // (b): the part already retransmitted.
            pipe += overlap(a, b, 0, high_rxt);
        });
        pipe
    }

    /// The first un-SACKed range [a, b) with a >= from and a < limit (b is clipped to
    /// `high_data`): where NextSeg() rules (1) and (3) look.
    pub fn first_hole(&self, from: u64, limit: u64, high_data: u64) -> Option<(u64, u64)> {
        let mut found = None;
        self.sacked.for_each_gap(from, high_data, |a, b| {
            if found.is_none() && a < limit {
                found = Some((a, b));
            }
        });
        found
    }

    /// The last un-SACKed range in [from, to): where the rescue retransmission of NextSeg()
    /// rule (4) looks.
    pub fn last_hole(&self, from: u64, to: u64) -> Option<(u64, u64)> {
        let mut found = None;
        self.sacked.for_each_gap(from, to, |a, b| found = Some((a, b)));
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn board(blocks: &[(u64, u64)]) -> Scoreboard {
        let mut s = Scoreboard::default();
        s.update(1, 100_001, blocks.iter().copied());
        s
    }

    #[test]
    fn update_counts_new_bytes_and_clips() {
        let mut s = Scoreboard::default();
        assert_eq!(s.update(1, 10_001, [(2001, 3001)].into_iter()), 1000);
        // A repeated block is not new information (not a DupAck in RFC 6675's sense).
        assert_eq!(s.update(1, 10_001, [(2001, 3001)].into_iter()), 0);
        // Blocks above HighData and below HighACK are clipped away.
        assert_eq!(s.update(2501, 3001, [(1, 2001), (3001, 9001)].into_iter()), 0);
        assert_eq!(s.ranges(), &[(2501, 3001)]);
        // The cumulative ACK passing a range removes it.
        s.advance(3001);
        assert!(s.is_empty());
    }

    #[test]
    fn is_lost_after_three_segments_or_more_than_two_smss() {
        // Segments of 1000 B from 1; segment 0 [1, 1001) missing, 1 and 2 SACKed.
        let s = board(&[(1001, 3001)]);
        assert!(!s.is_lost(1, 1, MSS), "2 SACKed segments: not yet lost");
        // Third SACKed segment: 3 segments and 3000 > 2000 bytes above.
        let s = board(&[(1001, 4001)]);
        assert!(s.is_lost(1, 1, MSS));
        assert!(!s.is_lost(4001, 1, MSS), "nothing SACKed above");
        // Three small discontiguous SACKed segments (3 * 100 B) also make it lost.
        let s = board(&[(1001, 1101), (2001, 2101), (3001, 3101)]);
        assert!(s.is_lost(1, 1, MSS));
        assert!(!s.is_lost(1101, 1, MSS), "only two SACKed segments above");
    }

    #[test]
    fn pipe_of_rfc6675_setpipe() {
        // 10 segments [1, 10001) outstanding; segment 0 lost and retransmitted
        // (HighRxt = 1001), segments 1-3 SACKed, 4-9 in flight.
        // Pipe = 1000 (retransmission of 0) + 0 (SACKed) + 6000 (4-9) = 7000.
        let s = board(&[(1001, 4001)]);
        assert_eq!(s.pipe(1, 10_001, 1001, MSS), 7000);
        // Before the retransmission, segment 0 is lost and not counted.
        assert_eq!(s.pipe(1, 10_001, 1, MSS), 6000);
        // Segments 1-3 and 5-7 SACKed: holes [1, 1001) (segment 0) and [4001, 5001)
        // (segment 4) both have >= 3 SACKed segments above them, so both are lost.
        // Hole [8001, 10001) is above every SACK: in flight, 2000.
        let s = board(&[(1001, 4001), (5001, 8001)]);
        assert_eq!(s.lost_edge(1, MSS), 5001);
        assert_eq!(s.pipe(1, 10_001, 1, MSS), 2000);
        // Rule (1) finds hole 0, then (after HighRxt passes it) hole 4.
        assert_eq!(s.first_hole(1, s.lost_edge(1, MSS), 10_001), Some((1, 1001)));
        assert_eq!(s.first_hole(1001, s.lost_edge(1, MSS), 10_001), Some((4001, 5001)));
        assert_eq!(s.first_hole(5001, s.lost_edge(1, MSS), 10_001), None);
        assert_eq!(s.last_hole(1, 10_001), Some((8001, 10_001)));
    }
}
