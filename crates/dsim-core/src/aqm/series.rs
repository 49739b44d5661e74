//! Bounded time series of a queue's control state.
//!
//! RED / MRED ([`SeriesRow`], the `queue_series` table): the average and the instantaneous
//! size of each (virtual) queue, sampled at packet arrivals. RED's average changes only when
//! a packet arrives, so sampling at arrivals loses nothing of its shape: the first arrival
//! at or after each multiple of `interval` records one row per precedence (the average just
//! computed and the occupancy it was computed from, in the unit of the thresholds).
//!
//! CoDel, PIE and FQ-CoDel ([`StateRow`], the `aqm_series` table): their state changes at
//! arrivals and departures (and PIE's at its updates, which it catches up at the next
//! packet), so the first arrival or departure at or after each multiple of `interval`
//! records one row.
//!
//! At most [`MAX_ROWS`] rows are kept per queue; later samples are counted in `skipped`,
//! never silently lost.

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

/// One sample of a CoDel, PIE or FQ-CoDel queue: what each of them has (None where the
/// mechanism has no such state).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct StateRow {
    pub t: SimTime,
    /// Packets queued.
    pub len_pkts: u64,
    /// CoDel, FQ-CoDel: the sojourn time of the last packet that left; PIE: its queue
    /// delay estimate.
    pub delay: Option<Duration>,
    /// CoDel: 1 in the dropping state, else 0; FQ-CoDel: how many flow queues are.
    pub dropping: Option<u32>,
    /// CoDel's count (drops of the current dropping cycle).
    pub count: Option<u32>,
    /// PIE's drop probability.
    pub p: Option<f64>,
    /// FQ-CoDel: flow queues on the new or old list.
    pub flows: Option<u32>,
}

/// The series of a CoDel, PIE or FQ-CoDel queue.
pub type StateSeries = QueueSeries<StateRow>;

impl StateSeries {
    pub fn new(interval: Duration) -> Self {
        QueueSeries::with_unit(interval, "")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueueSeries<R = SeriesRow> {
    pub interval: Duration,
    next: SimTime,
    pub rows: Vec<R>,
    /// Samples not kept because the series was full.
    pub skipped: u64,
    /// "pkts" or "bytes": the unit of `avg` and `len`.
    pub unit: &'static str,
}

impl<R> QueueSeries<R> {
    pub fn with_unit(interval: Duration, unit: &'static str) -> Self {
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
    pub fn push(&mut self, row: R) {
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
        let mut s = QueueSeries::<SeriesRow>::with_unit(Duration(10), "pkts");
        let due: Vec<u64> = [0, 3, 9, 10, 11, 25, 29, 30]
            .into_iter()
            .filter(|&t| s.due(SimTime(t)))
            .collect();
        assert_eq!(due, vec![0, 10, 25, 30]);
    }
}
