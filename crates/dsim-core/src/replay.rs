//! Trace-driven mode: one mechanism, fed a packet trace, without a network.
//!
//! "What would this queue do to my traffic?" A queue discipline is driven the way an egress
//! port drives it: packets arrive at their trace times, the link serializes one packet at a
//! time at `rate`, and the discipline decides admission and service order. Each packet of
//! the trace gets one outcome row: dropped (and why) or the start and end of its
//! transmission. When an arrival and the end of a transmission fall on the same
//! nanosecond, the transmission ends first (the queue has room again when the packet
//! arrives), which is the textbook convention for D/D/1.
//!
//! The mechanism is configured with the same table a scenario file uses (`{ type =
//! "droptail", limit = "10p" }`), so a configuration tried here can be pasted into a
//! scenario unchanged.

use crate::engine::rng::{Rng, stream};
use crate::packet::{Dscp, Packet, PacketArena, PktId};
use crate::scenario::build::build_qdisc;
use crate::scenario::schema::QueueSpec;
use crate::scenario::{KeyPath, ScenarioError};
use crate::sched::{Qdisc, QueueCtx, Verdict};
use crate::stats::DropCause;
use crate::time::{Rate, SimTime};

/// One packet of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub time: SimTime,
    /// IP datagram size in bytes.
    pub size: u32,
    pub dscp: Dscp,
    pub flow: u32,
}

/// What the mechanism did with one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Outcome {
    pub dscp: Dscp,
    pub dropped: Option<DropCause>,
    /// Start and end of transmission on the link (queue disciplines only).
    pub tx_start: Option<SimTime>,
    pub tx_end: Option<SimTime>,
}

/// A mechanism to replay a trace through.
#[derive(Clone, Debug)]
pub enum Mechanism {
    /// A queue discipline in front of a link of `rate`.
    Queue { spec: QueueSpec, rate: Rate },
}

/// Which table kinds replay accepts, by their `type`.
pub fn kinds() -> Vec<&'static str> {
    QueueSpec::TAGS.to_vec()
}

/// Reads a mechanism from its scenario table (TOML text), with `rate` for queue disciplines.
pub fn mechanism_from_toml(text: &str, rate: Option<Rate>) -> Result<Mechanism, ScenarioError> {
    let root = KeyPath::root();
    let table: toml::Table = toml::from_str(text)
        .map_err(|e| ScenarioError::new(root.clone(), None, format!("not valid TOML: {}", e.message())))?;
    let kind = match table.get("type") {
        Some(toml::Value::String(t)) => t.clone(),
        Some(other) => {
            return Err(ScenarioError::new(
                root.key("type"),
                Some(other.to_string()),
                "a mechanism type is a string",
            ));
        }
        None => {
            return Err(ScenarioError::new(
                root.key("type"),
                None,
                format!("missing key `type` (one of {})", kinds().join(", ")),
            ));
        }
    };
    if QueueSpec::TAGS.contains(&kind.as_str()) {
        let spec: QueueSpec = crate::scenario::deserialize_value(text)?;
        let Some(rate) = rate else {
            return Err(ScenarioError::new(
                root.key("rate"),
                None,
                "a queue discipline needs the rate of the link it feeds",
            ));
        };
        if rate.0 == 0 {
            return Err(ScenarioError::new(
                root.key("rate"),
                Some(format!("\"{rate}\"")),
                "a rate must be greater than 0",
            ));
        }
        build_qdisc(&spec, rate, &root)?;
        return Ok(Mechanism::Queue { spec, rate });
    }
    Err(ScenarioError::new(
        root.key("type"),
        Some(format!("\"{kind}\"")),
        format!("replay knows no mechanism of this type; known: {}", kinds().join(", ")),
    ))
}

/// Checks a trace before replaying it: times must not decrease, sizes must be positive.
pub fn check_trace(arrivals: &[Arrival]) -> Result<(), ScenarioError> {
    let row = |i: usize| KeyPath::root().key("trace").index(i);
    for (i, a) in arrivals.iter().enumerate() {
        if a.size == 0 {
            return Err(ScenarioError::new(
                row(i).key("size"),
                Some("0".into()),
                "a packet has at least one byte",
            ));
        }
        if i > 0 && a.time < arrivals[i - 1].time {
            return Err(ScenarioError::new(
                row(i).key("time"),
                Some(format!("{}ns", a.time.0)),
                format!(
                    "arrival times must not decrease (row {} is at {}ns)",
                    i - 1,
                    arrivals[i - 1].time.0
                ),
            ));
        }
    }
    Ok(())
}

/// Replays `arrivals` (in time order) through `mechanism`, one outcome per arrival.
pub fn replay(mechanism: &Mechanism, arrivals: &[Arrival], seed: u64) -> Result<Vec<Outcome>, ScenarioError> {
    check_trace(arrivals)?;
    match mechanism {
        Mechanism::Queue { spec, rate } => replay_queue(spec, *rate, arrivals, seed),
    }
}

fn replay_queue(spec: &QueueSpec, rate: Rate, arrivals: &[Arrival], seed: u64) -> Result<Vec<Outcome>, ScenarioError> {
    let mut qdisc = build_qdisc(spec, rate, &KeyPath::root())?;
    let mut rng = stream(seed, "queue:replay");
    let mut pkts = PacketArena::with_capacity(256);
    let mut dropped: Vec<(PktId, DropCause)> = Vec::new();
    let mut out: Vec<Outcome> = arrivals
        .iter()
        .map(|a| Outcome {
            dscp: a.dscp,
            ..Default::default()
        })
        .collect();
    // The packet on the wire and when its last bit leaves.
    let mut on_wire: Option<(PktId, SimTime)> = None;
    let mut next = 0;
    loop {
        let next_arrival = arrivals.get(next).map(|a| a.time);
        let tx_end = on_wire.map(|(_, t)| t);
        let now = match (next_arrival, tx_end) {
            (None, None) => break,
            (Some(a), Some(e)) => a.min(e),
            (Some(a), None) => a,
            (None, Some(e)) => e,
        };
        // A transmission ending now comes first: the next queued packet starts at once, so
        // packets arriving at the same nanosecond find its place free.
        if tx_end == Some(now) {
            let (id, _) = on_wire.take().expect("checked");
            pkts.free(id);
            start_next(
                &mut qdisc,
                now,
                rate,
                &mut pkts,
                &mut rng,
                &mut dropped,
                &mut out,
                &mut on_wire,
            );
        }
        while next < arrivals.len() && arrivals[next].time == now {
            let a = arrivals[next];
            let id = pkts.alloc(Packet {
                flow: a.flow,
                size: a.size,
                dscp: a.dscp,
                index: next as u64,
                sent_at: now,
                enqueued_at: now,
                ..Default::default()
            });
            qdisc.classify(&mut pkts, id);
            let mut ctx = QueueCtx {
                now,
                pkts: &mut pkts,
                rng: &mut rng,
                dropped: &mut dropped,
            };
            if let Verdict::Drop(cause) = qdisc.enqueue(id, &mut ctx) {
                out[next].dropped = Some(cause);
                pkts.free(id);
            }
            settle_drops(&mut dropped, &mut pkts, &mut out);
            // As at an egress port: an idle link starts on the packet that just arrived.
            if on_wire.is_none() {
                start_next(
                    &mut qdisc,
                    now,
                    rate,
                    &mut pkts,
                    &mut rng,
                    &mut dropped,
                    &mut out,
                    &mut on_wire,
                );
            }
            next += 1;
        }
    }
    Ok(out)
}

/// The link is free: put the discipline's next packet on the wire.
#[allow(clippy::too_many_arguments)]
fn start_next(
    qdisc: &mut Qdisc,
    now: SimTime,
    rate: Rate,
    pkts: &mut PacketArena,
    rng: &mut Rng,
    dropped: &mut Vec<(PktId, DropCause)>,
    out: &mut [Outcome],
    on_wire: &mut Option<(PktId, SimTime)>,
) {
    let mut ctx = QueueCtx {
        now,
        pkts,
        rng,
        dropped,
    };
    if let Some(id) = qdisc.dequeue(&mut ctx) {
        let end = now + rate.tx_time(pkts[id].size as u64);
        let o = &mut out[pkts[id].index as usize];
        o.tx_start = Some(now);
        o.tx_end = Some(end);
        o.dscp = pkts[id].dscp;
        *on_wire = Some((id, end));
    }
    settle_drops(dropped, pkts, out);
}

/// Records packets the discipline dropped from its queue.
fn settle_drops(dropped: &mut Vec<(PktId, DropCause)>, pkts: &mut PacketArena, out: &mut [Outcome]) {
    for (id, cause) in dropped.drain(..) {
        out[pkts[id].index as usize].dropped = Some(cause);
        pkts.free(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    fn trace(times_us: &[u64], size: u32) -> Vec<Arrival> {
        times_us
            .iter()
            .map(|t| Arrival {
                time: SimTime(t * 1000),
                size,
                dscp: Dscp::BE,
                flow: 0,
            })
            .collect()
    }

    fn fifo(limit: &str, rate: &str) -> Mechanism {
        mechanism_from_toml(
            &format!("type = \"droptail\"\nlimit = \"{limit}\""),
            Some(Rate::parse(rate).unwrap()),
        )
        .unwrap()
    }

    #[test]
    fn dd1_departures_are_back_to_back_or_on_arrival() {
        // 1000 B at 8 Mbit/s: 1 ms each. Arrivals every 1 ms: each starts on arrival (the
        // previous one ends at the same nanosecond), so no packet ever waits.
        let out = replay(&fifo("10p", "8Mbps"), &trace(&[0, 1000, 2000, 3000], 1000), 1).unwrap();
        for (i, o) in out.iter().enumerate() {
            assert_eq!(o.tx_start, Some(SimTime(i as u64 * 1_000_000)));
            assert_eq!(o.tx_end, Some(SimTime(i as u64 * 1_000_000) + Duration::from_millis(1)));
            assert_eq!(o.dropped, None);
        }
    }

    #[test]
    fn a_burst_queues_and_overflows() {
        // Five packets at t = 0 into a 2-packet queue behind a 1 ms-per-packet link: the first
        // goes straight onto the wire, the next two wait (start 1 ms and 2 ms), the last two
        // find the queue full. A sixth at 2.5 ms finds one place (the third left at 2 ms):
        // it starts when the third ends, at 3 ms.
        let out = replay(&fifo("2p", "8Mbps"), &trace(&[0, 0, 0, 0, 0, 2500], 1000), 1).unwrap();
        let starts: Vec<Option<u64>> = out.iter().map(|o| o.tx_start.map(|t| t.0 / 1_000_000)).collect();
        assert_eq!(starts, vec![Some(0), Some(1), Some(2), None, None, Some(3)]);
        assert_eq!(out[3].dropped, Some(DropCause::Overflow));
        assert_eq!(out[4].dropped, Some(DropCause::Overflow));
    }

    #[test]
    fn bad_traces_and_configs_are_refused() {
        let mut t = trace(&[0, 10, 5], 100);
        let e = replay(&fifo("2p", "8Mbps"), &t, 1).unwrap_err();
        assert_eq!(e.path.to_string(), "trace[2].time");
        t = trace(&[0, 10], 100);
        t[1].size = 0;
        assert_eq!(
            replay(&fifo("2p", "8Mbps"), &t, 1).unwrap_err().path.to_string(),
            "trace[1].size"
        );
        let e = mechanism_from_toml("type = \"droptail\"\nlimit = \"2\"", Some(Rate(1))).unwrap_err();
        assert_eq!(e.path.to_string(), "limit");
        let e = mechanism_from_toml("type = \"droptail\"\nlimit = \"2p\"", None).unwrap_err();
        assert_eq!(e.path.to_string(), "rate");
        let e = mechanism_from_toml("type = \"wfq\"", None).unwrap_err();
        assert!(e.rule.contains("replay knows no mechanism"), "{e}");
    }
}
