//! Time series recorded on request (`[record]`, [`crate::scenario::record`]): per flow,
//! per port class (queue and precedence) and per conditioner colour, what happened in each
//! interval of the measurement window.
//!
//! The recorder reads counters the simulation keeps anyway, between two steps of the run
//! ([`crate::task`] stops the run at the end of every interval: stepping does not change
//! the results), and keeps the difference from the previous reading. Nothing runs on the
//! packet path, whether recording is on or off. Every row the run will record is reserved
//! when the recorder is made (the scenario's check bounds their number), so recording
//! allocates nothing while the run goes on.
//!
//! Intervals: [start + (k - 1) interval, start + k interval) for k = 1, 2, ..., the last
//! one cut at the end of the window. A queue's mean length over an interval is the
//! time-weighted mean (its occupancy integral over the interval, divided by the
//! interval's length); its length is the occupancy at the interval's end.

use super::{Flow, Simulation};
use crate::packet::{Color, PortId};
use crate::stats::{ClassStats, Window};
use crate::time::{Duration, SimTime};

/// `$now` with the cumulative fields listed replaced by what they gained since `$before`
/// (counters only grow); the other fields as `$now` has them.
macro_rules! gained {
    ($now:expr, $before:expr; $($field:ident),+) => {{
        #[allow(clippy::needless_update)] // a struct whose every field is a counter
        let gained = Self { $($field: $now.$field - $before.$field,)+ ..*$now };
        gained
    }};
}

/// What to record; made and checked from the scenario's `[record]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordPlan {
    /// Length of one interval (the last one of the window may be shorter).
    pub interval: Duration,
    /// Per-flow series.
    pub flows: bool,
    /// Ports whose every queue and precedence is followed (empty: none).
    pub ports: Vec<PortId>,
    /// Per-conditioner-instance colour series.
    pub conditioners: bool,
    /// The delay and jitter histograms of every flow, at the end of the run.
    pub delay: bool,
}

impl RecordPlan {
    /// Intervals in `w`: its length divided by the interval, rounded up.
    pub fn intervals(&self, w: &Window) -> u64 {
        w.length().0.div_ceil(self.interval.0.max(1))
    }

    /// The rows of the series this plan records in a run of `sim`.
    pub fn rows(&self, sim: &Simulation) -> u64 {
        self.series(sim) * self.intervals(&sim.window)
    }

    /// The series this plan follows in `sim` (one row each per interval).
    pub fn series(&self, sim: &Simulation) -> u64 {
        let flows = if self.flows { sim.flows.len() } else { 0 };
        let classes: usize = self.ports.iter().map(|&p| sim.net.ports[p as usize].stats.len()).sum();
        let colors = if self.conditioners {
            meter_colors(sim).count()
        } else {
            0
        };
        (flows + classes + colors) as u64
    }
}

/// Every (conditioner instance, colour its meter gives), in the order of the instances.
fn meter_colors(sim: &Simulation) -> impl Iterator<Item = (u32, Color)> + '_ {
    sim.conditioners.instances.iter().enumerate().flat_map(|(i, inst)| {
        inst.meter
            .iter()
            .flat_map(move |m| m.colors().iter().map(move |&c| (i as u32, c)))
    })
}

/// Cumulative counters of one flow.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct FlowCounters {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub dropped_pkts: u64,
    /// TCP: bytes delivered in order to the application (0 for a datagram flow).
    pub goodput_bytes: u64,
    /// Sum of the one-way delays of the delivered packets, in ns.
    pub delay_ns: u128,
    /// Delivered bytes per colour (indexed by `Color as usize`).
    pub color_delivered_bytes: [u64; 3],
}

impl FlowCounters {
    fn read(f: &Flow) -> Self {
        let s = &f.stats;
        FlowCounters {
            sent_pkts: s.sent_pkts,
            sent_bytes: s.sent_bytes,
            delivered_pkts: s.delivered_pkts,
            delivered_bytes: s.delivered_bytes,
            dropped_pkts: s.drops.total_pkts(),
            goodput_bytes: f.tcp().map_or(0, |t| t.stats.goodput_bytes),
            delay_ns: s.delay.sum(),
            color_delivered_bytes: s.color_delivered_bytes,
        }
    }

    fn since(&self, before: &Self) -> Self {
        let mut colors = self.color_delivered_bytes;
        for (c, b) in colors.iter_mut().zip(before.color_delivered_bytes) {
            *c -= b;
        }
        let gained = gained!(self, before; sent_pkts, sent_bytes, delivered_pkts, delivered_bytes, dropped_pkts, goodput_bytes, delay_ns);
        FlowCounters {
            color_delivered_bytes: colors,
            ..gained
        }
    }
}

/// Counters of one port class (queue and precedence): cumulative, but for the occupancy
/// (`len_*`, at the reading) and its integral since the window's start (`area_*`).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct ClassCounters {
    pub arrivals_pkts: u64,
    pub departures_pkts: u64,
    pub departures_bytes: u64,
    pub dropped_pkts: u64,
    pub marks_pkts: u64,
    pub len_pkts: u64,
    pub len_bytes: u64,
    /// Occupancy integrals in packet-ns and byte-ns.
    pub area_pkts: u128,
    pub area_bytes: u128,
}

impl ClassCounters {
    /// Class `c` of a port whose packets that passed straight through an empty queue,
    /// counted apart until the run ends, are `passed` (class 0's; (0, 0) for the others).
    fn read(c: &ClassStats, passed: (u64, u64), w: &Window, now: SimTime) -> Self {
        let (area_pkts, area_bytes) = c.occupancy_until(w, now);
        ClassCounters {
            arrivals_pkts: c.arrivals_pkts + passed.0,
            departures_pkts: c.departures_pkts + passed.0,
            departures_bytes: c.departures_bytes + passed.1,
            dropped_pkts: c.drops.total_pkts(),
            marks_pkts: c.marks_pkts,
            len_pkts: c.len_pkts,
            len_bytes: c.len_bytes,
            area_pkts,
            area_bytes,
        }
    }

    /// The occupancy (`len_*`) as it is now; the rest as gained since `before`.
    fn since(&self, before: &Self) -> Self {
        gained!(self, before; arrivals_pkts, departures_pkts, departures_bytes, dropped_pkts, marks_pkts, area_pkts, area_bytes)
    }
}

/// Cumulative counters of one colour of one conditioner instance.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ColorCounters {
    pub pkts: u64,
    pub bytes: u64,
    pub remarked_pkts: u64,
    pub demoted_pkts: u64,
    pub dropped_pkts: u64,
}

impl ColorCounters {
    fn read(sim: &Simulation, instance: u32, color: Color) -> Self {
        let s = &sim.conditioners.instances[instance as usize].stats;
        let k = color as usize;
        ColorCounters {
            pkts: s.pkts[k],
            bytes: s.bytes[k],
            remarked_pkts: s.remarked[k],
            demoted_pkts: s.demoted[k],
            dropped_pkts: s.dropped_pkts[k],
        }
    }

    fn since(&self, before: &Self) -> Self {
        gained!(self, before; pkts, bytes, remarked_pkts, demoted_pkts, dropped_pkts)
    }
}

/// One interval of one series: what changed in interval `interval` (1-based) of the
/// series `series` (an index into the recorder's list of that kind).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Row<T> {
    pub series: u32,
    pub interval: u32,
    pub counters: T,
}

/// A port class a recorder follows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ClassRef {
    pub port: PortId,
    /// Index into the port's class statistics (queue * precedences + precedence).
    pub class: u32,
}

/// Records the series of a [`RecordPlan`] during one run.
#[derive(Clone, Debug)]
pub struct Recorder {
    pub plan: RecordPlan,
    pub window: Window,
    /// The port classes followed, in port order.
    pub classes: Vec<ClassRef>,
    /// The (instance, colour) pairs followed.
    pub colors: Vec<(u32, Color)>,
    /// The next reading: 0 the baseline at the window's start, k the end of interval k.
    next: u64,
    intervals: u64,
    last_flows: Vec<FlowCounters>,
    last_classes: Vec<ClassCounters>,
    last_colors: Vec<ColorCounters>,
    pub flow_rows: Vec<Row<FlowCounters>>,
    pub class_rows: Vec<Row<ClassCounters>>,
    pub color_rows: Vec<Row<ColorCounters>>,
}

impl Recorder {
    /// A recorder of `plan` for the run of `sim` (built, not started), its rows reserved.
    pub fn new(plan: RecordPlan, sim: &Simulation) -> Self {
        let window = sim.window;
        let intervals = plan.intervals(&window);
        let classes: Vec<ClassRef> = plan
            .ports
            .iter()
            .flat_map(|&port| {
                (0..sim.net.ports[port as usize].stats.len() as u32).map(move |class| ClassRef { port, class })
            })
            .collect();
        let colors: Vec<(u32, Color)> = if plan.conditioners {
            meter_colors(sim).collect()
        } else {
            Vec::new()
        };
        let flows = if plan.flows { sim.flows.len() } else { 0 };
        let rows = |series: usize| series * intervals as usize;
        Recorder {
            flow_rows: Vec::with_capacity(rows(flows)),
            class_rows: Vec::with_capacity(rows(classes.len())),
            color_rows: Vec::with_capacity(rows(colors.len())),
            last_flows: vec![FlowCounters::default(); flows],
            last_classes: vec![ClassCounters::default(); classes.len()],
            last_colors: vec![ColorCounters::default(); colors.len()],
            plan,
            window,
            classes,
            colors,
            next: 0,
            intervals,
        }
    }

    /// The instant of reading `k`: the window's start, then the end of each interval.
    pub fn instant(&self, k: u64) -> SimTime {
        let t = self
            .window
            .start
            .0
            .saturating_add(k.saturating_mul(self.plan.interval.0));
        SimTime(t.min(self.window.end.0))
    }

    /// The instant the next reading is due, if any is left. The run must stop there
    /// (`run_until(instant)`: every event before it handled, none at it) and call
    /// [`Recorder::read`].
    pub fn due(&self) -> Option<SimTime> {
        (self.next <= self.intervals).then(|| self.instant(self.next))
    }

    /// Reads the counters of `sim`, which stands at the instant [`Recorder::due`] gave,
    /// and records what changed since the previous reading.
    pub fn read(&mut self, sim: &Simulation) {
        debug_assert_eq!(Some(sim.now), self.due(), "a reading off its instant");
        let k = self.next as u32;
        self.next += 1;
        if self.plan.flows {
            for (i, f) in sim.flows.iter().enumerate() {
                let now = FlowCounters::read(f);
                record(
                    &mut self.flow_rows,
                    &mut self.last_flows[i],
                    now,
                    i,
                    k,
                    FlowCounters::since,
                );
            }
        }
        for (i, c) in self.classes.iter().enumerate() {
            let port = &sim.net.ports[c.port as usize];
            let passed = if c.class == 0 {
                (port.passed.pkts(), port.passed.bytes())
            } else {
                (0, 0)
            };
            let now = ClassCounters::read(&port.stats[c.class as usize], passed, &self.window, sim.now);
            record(
                &mut self.class_rows,
                &mut self.last_classes[i],
                now,
                i,
                k,
                ClassCounters::since,
            );
        }
        for (i, &(instance, color)) in self.colors.iter().enumerate() {
            let now = ColorCounters::read(sim, instance, color);
            record(
                &mut self.color_rows,
                &mut self.last_colors[i],
                now,
                i,
                k,
                ColorCounters::since,
            );
        }
    }

    /// The start and end of interval `k` (1-based).
    pub fn bounds(&self, k: u32) -> (SimTime, SimTime) {
        (self.instant(k as u64 - 1), self.instant(k as u64))
    }
}

/// Keeps `now` as the last reading of a series and, after the baseline (k = 0), the row of
/// interval k: what changed since the reading before.
fn record<T: Copy>(rows: &mut Vec<Row<T>>, last: &mut T, now: T, series: usize, k: u32, since: fn(&T, &T) -> T) {
    if k > 0 {
        rows.push(Row {
            series: series as u32,
            interval: k,
            counters: since(&now, last),
        });
    }
    *last = now;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_counters_keep_the_occupancy_and_difference_the_rest() {
        let a = ClassCounters {
            arrivals_pkts: 5,
            departures_pkts: 4,
            departures_bytes: 400,
            dropped_pkts: 1,
            marks_pkts: 0,
            len_pkts: 3,
            len_bytes: 300,
            area_pkts: 1000,
            area_bytes: 100_000,
        };
        let b = ClassCounters {
            arrivals_pkts: 9,
            departures_pkts: 8,
            departures_bytes: 900,
            dropped_pkts: 1,
            marks_pkts: 2,
            len_pkts: 1,
            len_bytes: 100,
            area_pkts: 1600,
            area_bytes: 160_000,
        };
        let d = b.since(&a);
        assert_eq!((d.arrivals_pkts, d.departures_pkts, d.departures_bytes), (4, 4, 500));
        assert_eq!((d.dropped_pkts, d.marks_pkts), (0, 2));
        assert_eq!((d.len_pkts, d.len_bytes), (1, 100));
        assert_eq!((d.area_pkts, d.area_bytes), (600, 60_000));
    }
}
