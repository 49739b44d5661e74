//! The work of one run, estimated from the built simulation before it runs: how many
//! events it will handle and how much memory it will hold. `dsim validate` reports it and
//! `dsim run` prints it before starting, so that a run of hours (a duration of 100,000 h,
//! a CBR source at 400 Gbit/s) is announced, not discovered.
//!
//! Events: every packet costs two events per hop (the end of its transmission and its
//! arrival at the next node, [`crate::sim::event::Event`]) and a datagram source one more to
//! emit it. Each flow offers packets at its rate over the time it is active: a CBR or
//! Poisson source at `rate / size`, a TCP connection at the rate of the slowest link of its
//! path in segments of its MSS (plus one ACK per segment back), a TFRC source likewise in
//! its datagrams. A port passes at most its rate: what a port is offered beyond it is
//! scaled down to it. The estimate leaves out TCP timers and feedback reports, and the
//! packets a queue drops before the port sends them; for most scenarios it is within a
//! factor of two of the events handled, and it errs high.
//!
//! Memory: the structures the build allocated (the route table of a next hop per pair of
//! nodes, the ports, the flows and their TCP state), the delay and jitter histograms every
//! flow fills up to the run's duration, and the packets on the wires (each port's packet
//! rate times its propagation delay). Packets waiting in queues add up to the queues'
//! limits.

use std::mem::size_of;

use serde::Serialize;

use crate::net::Port;
use crate::packet::{Packet, PortId};
use crate::sim::event::Event;
use crate::sim::{Flow, Simulation, Transport};
use crate::stats::Distribution;
use crate::time::{NS_PER_SEC, SimTime};
use crate::transport::tcp::{HEADERS, TcpFlow};

/// The estimated work of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Estimate {
    /// Events the run handles.
    pub events: u64,
    /// Bytes the run holds at its peak.
    pub memory_bytes: u64,
    /// Packets the sources send.
    pub packets: u64,
}

/// Events per packet per hop: the end of its transmission, its arrival at the far node.
const EVENTS_PER_HOP: f64 = 2.0;
/// Bytes of a pure TCP ACK (headers alone).
const ACK_BYTES: f64 = HEADERS as f64;

/// One direction of a flow's traffic: packets per second of a size, over a path of ports.
struct Stream {
    pps: f64,
    bytes: f64,
    seconds: f64,
    ports: Vec<PortId>,
}

/// Estimates the work of running `sim` from its start to its end.
pub fn estimate(sim: &Simulation) -> Estimate {
    let streams: Vec<Stream> = sim.flows.iter().flat_map(|f| streams_of(sim, f)).collect();
    let ports = &sim.net.ports;
    // Offered bits per second and packets per second at each port.
    let mut offered_bits = vec![0.0f64; ports.len()];
    let mut offered_pkts = vec![0.0f64; ports.len()];
    for s in &streams {
        for &p in &s.ports {
            offered_bits[p as usize] += s.pps * s.bytes * 8.0 * s.seconds;
            offered_pkts[p as usize] += s.pps * s.seconds;
        }
    }
    let run_s = sim.end.as_secs_f64();
    let mut hop_events = 0.0;
    let mut on_wires = 0.0;
    for (i, port) in ports.iter().enumerate() {
        let capacity_bits = port.rate.0 as f64 * run_s;
        let passed = if offered_bits[i] > capacity_bits {
            offered_pkts[i] * capacity_bits / offered_bits[i]
        } else {
            offered_pkts[i]
        };
        hop_events += passed * EVENTS_PER_HOP;
        on_wires += passed / run_s.max(1e-9) * port.delay.as_secs_f64();
    }
    let source_events: f64 = streams.iter().map(|s| s.pps * s.seconds).sum();
    let memory = structures_bytes(sim) + on_wires * (size_of::<Packet>() + size_of::<Event>()) as f64;
    Estimate {
        events: saturating(hop_events + source_events),
        memory_bytes: saturating(memory),
        packets: saturating(source_events),
    }
}

fn saturating(x: f64) -> u64 {
    if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.round() as u64
    }
}

/// The streams of packets a flow puts on the network.
fn streams_of(sim: &Simulation, f: &Flow) -> Vec<Stream> {
    let seconds = f.stop.min(sim.end).saturating_sub(f.start.min(sim.end)).as_secs_f64();
    let forward = port_path(sim, f.src, f.dst);
    let slowest = forward
        .iter()
        .map(|&p| sim.net.ports[p as usize].rate.0)
        .min()
        .unwrap_or(0) as f64;
    // A datagram source at its own rate, or a TFRC source at the slowest link's.
    let datagrams = |bytes: f64, pps: f64| {
        vec![Stream {
            pps,
            bytes,
            seconds,
            ports: forward.clone(),
        }]
    };
    match &f.transport {
        Transport::Udp { app, .. } => match app {
            crate::app::App::Cbr(c) => datagrams(c.size as f64, per_second(c.interval.0)),
            crate::app::App::Poisson(p) => datagrams(p.size as f64, per_second(p.interval.0)),
        },
        Transport::Tfrc(t) => datagrams(t.size as f64, slowest / (8.0 * t.size as f64)),
        Transport::Tcp(t) => {
            let bytes = (t.params.mss + HEADERS) as f64;
            let pps = slowest / (8.0 * bytes);
            let back = port_path(sim, f.dst, f.src);
            vec![
                Stream {
                    pps,
                    bytes,
                    seconds,
                    ports: forward.clone(),
                },
                Stream {
                    pps,
                    bytes: ACK_BYTES,
                    seconds,
                    ports: back,
                },
            ]
        }
    }
}

/// Packets per second of a source that sends one every `interval_ns` (a zero interval is
/// refused when the scenario is built).
fn per_second(interval_ns: u64) -> f64 {
    NS_PER_SEC as f64 / interval_ns.max(1) as f64
}

/// The ports a packet from `src` to `dst` leaves through, in order.
fn port_path(sim: &Simulation, src: u32, dst: u32) -> Vec<PortId> {
    let net = &sim.net;
    let mut out = Vec::new();
    let mut at = src;
    while at != dst && out.len() <= net.nodes.len() {
        let Some(p) = net.routes.next_port(at, dst) else { break };
        out.push(p);
        at = net.ports[p as usize].peer;
    }
    out
}

/// Bytes of what the build allocated and what every flow's statistics grow to.
fn structures_bytes(sim: &Simulation) -> f64 {
    let nodes = sim.net.nodes.len() as f64;
    let routes = nodes * nodes * size_of::<PortId>() as f64;
    let ports = sim.net.ports.len() as f64 * size_of::<Port>() as f64;
    let histograms = 2.0 * Distribution::bytes_up_to(sim.end.saturating_sub(SimTime::ZERO).0) as f64;
    let flows: f64 = sim
        .flows
        .iter()
        .map(|f| {
            let tcp = if f.tcp().is_some() { size_of::<TcpFlow>() } else { 0 };
            (size_of::<Flow>() + tcp) as f64 + histograms
        })
        .sum();
    routes + ports + flows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario;

    /// Two CBR flows over two hops (A -> R at 10 Mbit/s, R -> B at 1 Mbit/s), by hand.
    #[test]
    fn datagram_sources_by_hand() {
        let text = r#"
            duration = "10s"
            [nodes]
            hosts = ["A", "B"]
            routers = ["R"]
            [[link]]
            from = "A"
            to = "R"
            rate = "10Mbps"
            delay = "1ms"
            [[link]]
            from = "R"
            to = "B"
            rate = "1Mbps"
            delay = "5ms"
            [[flow]]
            src = "A"
            dst = "B"
            app = { type = "cbr", rate = "400kbps", size = "1000B" }
            [[flow]]
            src = "A"
            dst = "B"
            start = "5s"
            app = { type = "cbr", rate = "1.6Mbps", size = "1000B" }
        "#;
        let sc = scenario::from_toml(text).unwrap();
        let sim = scenario::build(&sc, 1).unwrap();
        let e = estimate(&sim);
        // Flow 0: 50 packets/s for 10 s = 500; flow 1: 200/s for 5 s = 1,000. Emitting
        // them: 1,500 events. A -> R (10 Mbit/s) passes all 1,500 packets (12 Mbit of
        // 100): 3,000 events. R -> B is offered 12 Mbit in 10 s at 1 Mbit/s: it passes
        // 10/12 of 1,500 = 1,250 packets, 2,500 events.
        assert_eq!(e.packets, 1_500);
        assert_eq!(e.events, 1_500 + 3_000 + 2_500);
        // On the wires: 150 packets/s for 1 ms, 125 packets/s for 5 ms.
        let wires = (150.0 * 0.001 + 125.0 * 0.005) * (size_of::<Packet>() + size_of::<Event>()) as f64;
        assert_eq!(e.memory_bytes, saturating(structures_bytes(&sim) + wires));
    }
}
