//! A bounded time series of a RED / MRED queue: the average and the instantaneous size of
//! each (virtual) queue, sampled at packet arrivals.
//!
//! RED's average changes only when a packet arrives, so sampling at arrivals loses
//! nothing of its shape: the first arrival at or after each multiple of `interval` records
//! one row per precedence (the average just computed and the occupancy it was computed
//! from, in the unit of the thresholds). At most [`MAX_ROWS`] rows are kept per queue;
//! later samples are counted in `skipped`, never silently lost.

use crate::time::{Duration, SimTime};

/// Rows kept per queue.
pub const MAX_ROWS: usize = 200_000;

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SeriesRow {
    pub t: SimTime,
    pub precedence: u8,
    /// RED average (packets or bytes).
    pub avg: f64,
    /// Occupancy of the (virtual) queue when the average was computed.
    pub len: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueueSeries {
    pub interval: Duration,
    next: SimTime,
    pub rows: Vec<SeriesRow>,
    /// Samples not kept because the series was full.
    pub skipped: u64,
    /// "pkts" or "bytes": the unit of `avg` and `len`.
    pub unit: &'static str,
}

impl QueueSeries {
    pub fn new(interval: Duration, unit: &'static str) -> Self {
        QueueSeries {
            interval,
            next: SimTime::ZERO,
            rows: Vec::new(),
            skipped: 0,
            unit,
        }
    }

    /// Is a sample due at `now`? Advances the next sampling instant if so.
    #[inline]
    pub fn due(&mut self, now: SimTime) -> bool {
        if now < self.next {
            return false;
        }
        let i = self.interval.0.max(1);
        self.next = SimTime((now.0 / i + 1) * i);
        true
    }

    #[inline]
    pub fn push(&mut self, row: SeriesRow) {
        if self.rows.len() < MAX_ROWS {
            self.rows.push(row);
        } else {
            self.skipped += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_the_first_arrival_of_each_interval() {
        let mut s = QueueSeries::new(Duration(10), "pkts");
        let due: Vec<u64> = [0, 3, 9, 10, 11, 25, 29, 30]
            .into_iter()
            .filter(|&t| s.due(SimTime(t)))
            .collect();
        assert_eq!(due, vec![0, 10, 25, 30]);
    }
}
