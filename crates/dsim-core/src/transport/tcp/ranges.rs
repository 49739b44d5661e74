//! A set of byte ranges: sorted, disjoint, non-adjacent half-open [start, end) ranges in a
//! small vector. The SACK scoreboard (what the receiver has SACKed) and the receiver's
//! reassembly queue (what arrived out of order) are both this. Memory is the vector's
//! capacity, reused for the whole run; operations cost O(number of ranges).

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    ranges: Vec<(u64, u64)>,
}

impl RangeSet {
    pub fn with_capacity(n: usize) -> Self {
        RangeSet {
            ranges: Vec::with_capacity(n),
        }
    }

    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    pub fn first(&self) -> Option<(u64, u64)> {
        self.ranges.first().copied()
    }

    pub fn last(&self) -> Option<(u64, u64)> {
        self.ranges.last().copied()
    }

    /// Adds [l, r) and returns how many of its bytes were not in the set before.
    /// Overlapping and touching ranges merge.
    pub fn insert(&mut self, l: u64, r: u64) -> u64 {
        if l >= r {
            return 0;
        }
        // First range whose end reaches l (touching counts, so adjacent ranges merge).
        let i = self.ranges.partition_point(|x| x.1 < l);
        // Ranges i..j overlap or touch [l, r).
        let j = i + self.ranges[i..].iter().take_while(|x| x.0 <= r).count();
        let covered: u64 = self.ranges[i..j]
            .iter()
            .map(|x| x.1.min(r).saturating_sub(x.0.max(l)))
            .sum();
        if i == j {
            self.ranges.insert(i, (l, r));
        } else {
            let start = l.min(self.ranges[i].0);
            let end = r.max(self.ranges[j - 1].1);
            self.ranges[i] = (start, end);
            self.ranges.drain(i + 1..j);
        }
        (r - l) - covered
    }

    /// Removes everything below `point`.
    pub fn remove_below(&mut self, point: u64) {
        let gone = self.ranges.iter().take_while(|r| r.1 <= point).count();
        if gone > 0 {
            self.ranges.drain(..gone);
        }
        if let Some(first) = self.ranges.first_mut() {
            first.0 = first.0.max(point);
        }
    }

    /// Removes and returns the first range if it starts at or below `point`.
    pub fn pop_first_reaching(&mut self, point: u64) -> Option<(u64, u64)> {
        match self.ranges.first() {
            Some(&(l, _)) if l <= point => Some(self.ranges.remove(0)),
            _ => None,
        }
    }

    /// The range containing `seq`, if any.
    pub fn containing(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|x| x.1 <= seq);
        self.ranges.get(i).copied().filter(|x| x.0 <= seq)
    }

    pub fn contains(&self, seq: u64) -> bool {
        self.containing(seq).is_some()
    }

    /// Bytes of the set in [from, to).
    pub fn bytes_in(&self, from: u64, to: u64) -> u64 {
        self.ranges
            .iter()
            .map(|x| x.1.min(to).saturating_sub(x.0.max(from)))
            .sum()
    }

    /// Calls `f(a, b)` for each gap [a, b) of the set within [from, to), in order.
    pub fn for_each_gap(&self, from: u64, to: u64, mut f: impl FnMut(u64, u64)) {
        let mut at = from;
        for &(l, r) in &self.ranges {
            if l >= to {
                break;
            }
            if l > at {
                f(at, l);
            }
            at = at.max(r);
        }
        if at < to {
            f(at, to);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_merges_and_counts_new_bytes() {
        let mut s = RangeSet::default();
        assert_eq!(s.insert(2001, 3001), 1000);
        // Adjacent ranges merge.
        assert_eq!(s.insert(3001, 4001), 1000);
        assert_eq!(s.as_slice(), &[(2001, 4001)]);
        // A range bridging two counts only the gap between them.
        s.insert(5001, 6001);
        assert_eq!(s.insert(3501, 5501), 1000);
        assert_eq!(s.as_slice(), &[(2001, 6001)]);
        assert_eq!(s.insert(2001, 6001), 0);
        s.insert(100, 200);
        assert_eq!(s.as_slice(), &[(100, 200), (2001, 6001)]);
        assert_eq!(s.containing(150), Some((100, 200)));
        assert_eq!(s.containing(200), None);
        assert_eq!(s.bytes_in(0, 3001), 100 + 1000);
        let mut gaps = Vec::new();
        s.for_each_gap(0, 7001, |a, b| gaps.push((a, b)));
        assert_eq!(gaps, vec![(0, 100), (200, 2001), (6001, 7001)]);
        s.remove_below(3001);
        assert_eq!(s.as_slice(), &[(3001, 6001)]);
        assert_eq!(s.pop_first_reaching(3000), None);
        assert_eq!(s.pop_first_reaching(3001), Some((3001, 6001)));
        assert!(s.is_empty());
    }
}
