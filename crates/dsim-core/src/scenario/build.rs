//! From a scenario to a runnable [`Simulation`], checking every rule on the way.
//!
//! Building is cheap, so validation *is* building: `dsim validate` builds and throws the
//! result away. Every refusal names the key path, the value and the rule.

use std::collections::{HashMap, HashSet};

use super::build_conditioner;
use super::schema::{AppSpec, CbrSpec, DirectionSpec, FlowSpec, LinkSpec, PoissonSpec, Scenario, TfrcSpec};
use super::{capture, transport};
use crate::app::TcpApp;
use crate::app::{App, Cbr, Poisson};
use crate::engine::rng::stream;
use crate::net::{Network, Node, NodeKind, Port, Routes};
use crate::packet::{NodeId, PortId};
use crate::params::{ConfigError, KeyPath, Params};
use crate::sim::{Flow, Simulation, Transport};
use crate::stats::{ClassStats, FlowStats, Window};
use crate::time::{Duration, Fraction, Rate, SimTime};
use crate::transport::tcp::{TcpFlow, TcpParams};
use crate::transport::tfrc::TfrcFlow;
use crate::transport::udp::{MIN_DATAGRAM, UdpSender};

type Result<T> = std::result::Result<T, ConfigError>;

pub(super) fn err<T>(path: KeyPath, value: impl ToString, rule: impl Into<String>) -> Result<T> {
    Err(ConfigError::new(path, Some(value.to_string()), rule))
}

pub(super) fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

/// Builds the simulation of one run of `sc` with `seed`.
pub fn build(sc: &Scenario, seed: u64) -> Result<Simulation> {
    let root = KeyPath::root();
    // Every declared range and rule, nested tables included, before anything is built.
    sc.check(&root)?;
    check_run(sc, &root)?;
    let names = node_names(sc, &root.key("nodes"))?;
    let mut net = build_network(sc, &names, seed, &root)?;
    apply_routes(sc, &names, &mut net, &root)?;
    let window = Window {
        start: SimTime::ZERO + sc.warmup,
        end: SimTime::ZERO + sc.duration,
    };
    let mut flows = build_flows(sc, &names, &net, seed, window, &root)?;
    build_conditioner::check_dscp_names(sc, &root)?;
    capture::attach_drops(sc, &mut net, &flows, &root)?;
    let captures = capture::build_captures(sc, &net, &root)?;
    let conditioners = build_conditioner::build_conditioners(sc, &names, &net, &flows, seed, &root)?;
    let mut sim = Simulation::new(net, std::mem::take(&mut flows), window);
    sim.capture_points = captures;
    sim.conditioners = conditioners;
    Ok(sim)
}

fn check_run(sc: &Scenario, root: &KeyPath) -> Result<()> {
    if sc.duration == Duration::ZERO {
        return err(
            root.key("duration"),
            quoted(&sc.duration.to_string()),
            "the run must last longer than 0s",
        );
    }
    if sc.warmup >= sc.duration {
        return err(
            root.key("warmup"),
            quoted(&sc.warmup.to_string()),
            format!("the warm-up must end before the run does (duration = {})", sc.duration),
        );
    }
    if sc.replications == 0 {
        return err(root.key("replications"), 0, "at least one replication is needed");
    }
    Ok(())
}

/// A rule of validation, after the network's own (a network is checked even while its
/// flows are unwritten); `build` alone accepts a network without traffic (tests of routing).
pub(super) fn check_traffic(sc: &Scenario, root: &KeyPath) -> Result<()> {
    if sc.flows.is_empty() {
        // A run without traffic has nothing to measure (and no rows to write).
        return Err(ConfigError::new(
            root.key("flow"),
            None,
            "a scenario needs at least one [[flow]]: without traffic there is nothing to measure",
        ));
    }
    Ok(())
}

/// Node name -> id, hosts first, in declaration order.
fn node_names(sc: &Scenario, path: &KeyPath) -> Result<HashMap<String, (NodeId, NodeKind)>> {
    let mut names = HashMap::new();
    let lists = [
        ("hosts", &sc.nodes.hosts, NodeKind::Host),
        ("routers", &sc.nodes.routers, NodeKind::Router),
    ];
    for (key, list, kind) in lists {
        for (i, name) in list.iter().enumerate() {
            let p = path.key(key).index(i);
            if name.is_empty() || name.chars().any(|c| c.is_whitespace()) || name.contains("->") {
                return err(
                    p,
                    quoted(name),
                    "a node name must be non-empty, without spaces or \"->\"",
                );
            }
            let id = names.len() as NodeId;
            if names.insert(name.clone(), (id, kind)).is_some() {
                return err(p, quoted(name), "a node of that name is already declared");
            }
        }
    }
    Ok(names)
}

pub(super) fn lookup(
    names: &HashMap<String, (NodeId, NodeKind)>,
    name: &str,
    path: KeyPath,
) -> Result<(NodeId, NodeKind)> {
    names.get(name).copied().ok_or_else(|| {
        let known = crate::params::some_of(names.keys().map(String::as_str));
        ConfigError::new(
            path,
            Some(quoted(name)),
            format!("no node has this name; declared nodes: {known}"),
        )
    })
}

fn build_network(
    sc: &Scenario,
    names: &HashMap<String, (NodeId, NodeKind)>,
    seed: u64,
    root: &KeyPath,
) -> Result<Network> {
    let mut nodes: Vec<Node> = Vec::with_capacity(names.len());
    for (list, kind) in [(&sc.nodes.hosts, NodeKind::Host), (&sc.nodes.routers, NodeKind::Router)] {
        nodes.extend(list.iter().map(|n| Node {
            name: n.clone(),
            kind,
            ports: Vec::new(),
        }));
    }
    let mut ports = Vec::with_capacity(2 * sc.links.len());
    let mut pairs = HashSet::new();
    for (i, link) in sc.links.iter().enumerate() {
        let p = root.key("link").index(i);
        let (a, _) = lookup(names, &link.from, p.key("from"))?;
        let (b, _) = lookup(names, &link.to, p.key("to"))?;
        if a == b {
            return err(p.key("to"), quoted(&link.to), "a link must join two different nodes");
        }
        if !pairs.insert((a.min(b), a.max(b))) {
            return err(
                p.key("to"),
                quoted(&link.to),
                format!("{} and {} are already linked", link.from, link.to),
            );
        }
        for (from, to, dir, key) in [(a, b, &link.forward, "forward"), (b, a, &link.reverse, "reverse")] {
            let port = build_port(link, dir, from, to, &nodes, seed, &p, &p.key(key))?;
            nodes[from as usize].ports.push(ports.len() as PortId);
            ports.push(port);
        }
    }
    let routes = Routes::shortest_paths(&nodes, &ports);
    Ok(Network { nodes, ports, routes })
}

#[allow(clippy::too_many_arguments)]
fn build_port(
    link: &LinkSpec,
    dir: &DirectionSpec,
    from: NodeId,
    to: NodeId,
    nodes: &[Node],
    seed: u64,
    link_path: &KeyPath,
    dir_path: &KeyPath,
) -> Result<Port> {
    let name = format!("{}->{}", nodes[from as usize].name, nodes[to as usize].name);
    let (rate, rate_path) = match dir.rate {
        Some(r) => (r, dir_path.key("rate")),
        None => (link.rate, link_path.key("rate")),
    };
    check_link_rate(rate, rate_path)?;
    let (queue, queue_path) = match &dir.queue {
        Some(q) => (q, dir_path.key("queue")),
        None => (&link.queue, link_path.key("queue")),
    };
    let qdisc = queue.qdisc(rate, &queue_path)?;
    let (loss, loss_path) = match dir.loss {
        Some(l) => (l, dir_path.key("loss")),
        None => (link.loss, link_path.key("loss")),
    };
    if loss.0 >= 1.0 {
        return err(
            loss_path,
            loss.0,
            "a loss probability must be below 1 (1 would lose every packet)",
        );
    }
    let precedences = qdisc.precedences();
    let stats = vec![ClassStats::default(); qdisc.queues() * precedences];
    Ok(Port {
        rng: Box::new(stream(seed, &format!("queue:{name}"))),
        loss: (loss.0 > 0.0).then(|| Box::new((loss.0, stream(seed, &format!("loss:{name}"))))),
        name,
        node: from,
        peer: to,
        rate,
        lone_at: SimTime::MAX,
        resume_at: SimTime::MAX,
        delay: link.delay,
        qdisc,
        free_at: SimTime::ZERO,
        // A packet of 0 bytes takes 0 ns, and holds the link 1 ns: a true entry to start from.
        tx_memo: Duration(1),
        tx_memo_size: 0,
        passed: Default::default(),
        lone_packet_limit: 0,
        tx_pending: false,
        path: crate::net::port::PortPath::FULL,
        wire: crate::net::port::Wire::EMPTY,
        stats,
        precedences: precedences as u8,
        scripted: None,
        capture_tx: Vec::new(),
        capture_rx: Vec::new(),
    })
}

pub(super) fn check_rate(rate: Rate, path: KeyPath) -> Result<()> {
    if rate.0 == 0 {
        return err(path, quoted(&rate.to_string()), "a rate must be greater than 0");
    }
    Ok(())
}

/// Time counts whole nanoseconds: at a rate where the smallest packet (a datagram of
/// [`MIN_DATAGRAM`] bytes) takes 0 ns to send, a link would pass any number of packets in
/// one instant, and TCP over it (with no propagation delay) would run without the clock
/// ever advancing.
fn check_link_rate(rate: Rate, path: KeyPath) -> Result<()> {
    check_rate(rate, path.clone())?;
    let what = format!("a {MIN_DATAGRAM}B packet would take 0 ns to send");
    check_packet_time(rate, MIN_DATAGRAM, path, &what, "a link's rate")
}

/// A source that sends `size`-byte packets at `rate` one every `size * 8 / rate`: a
/// spacing that rounds to 0 ns would emit packets without the clock advancing.
fn check_spacing(rate: Rate, size: u32, path: KeyPath) -> Result<()> {
    let what = format!("{size}B packets would be sent 0 ns apart");
    check_packet_time(rate, size, path, &what, &format!("the rate of {size}B packets"))
}

/// `size` bytes at `rate` (the value at `path`) take at least 1 ns, or the error saying
/// `what` would happen and the fastest `subject` may be.
fn check_packet_time(rate: Rate, size: u32, path: KeyPath, what: &str, subject: &str) -> Result<()> {
    if rate.tx_time(size as u64) == Duration::ZERO {
        let fastest = fastest_rate(size);
        let rule = format!("{what} (time counts whole nanoseconds): {subject} is at most {fastest}");
        return err(path, quoted(&rate.to_string()), rule);
    }
    Ok(())
}

/// The fastest rate at which `size` bytes take at least 1 ns: `tx_time` rounds to the
/// nearest nanosecond, so size * 8 * 10^9 / rate >= 1/2.
fn fastest_rate(size: u32) -> Rate {
    Rate(2 * 8 * crate::time::NS_PER_SEC * size as u64)
}

/// A probability or share: a number in [0, 1].
fn check_unit_interval(v: f64, path: KeyPath, what: &str) -> Result<()> {
    if !(0.0..=1.0).contains(&v) {
        return err(path, v, format!("{what}: a number in [0, 1]"));
    }
    Ok(())
}

/// Explicit routes override the shortest paths for their destination.
fn apply_routes(
    sc: &Scenario,
    names: &HashMap<String, (NodeId, NodeKind)>,
    net: &mut Network,
    root: &KeyPath,
) -> Result<()> {
    let mut set_by: HashMap<(NodeId, NodeId), (PortId, usize)> = HashMap::new();
    for (i, route) in sc.routes.iter().enumerate() {
        let p = root.key("route").index(i).key("path");
        if route.path.len() < 2 {
            return err(p, format!("{:?}", route.path), "a route path needs at least two nodes");
        }
        let ids = route
            .path
            .iter()
            .enumerate()
            .map(|(k, n)| lookup(names, n, p.index(k)))
            .collect::<Result<Vec<_>>>()?;
        let dst = ids.last().expect("two or more").0;
        for (k, pair) in ids.windows(2).enumerate() {
            let ((a, kind), (b, _)) = (pair[0], pair[1]);
            if k > 0 && kind == NodeKind::Host {
                return err(
                    p.index(k),
                    quoted(&route.path[k]),
                    "hosts do not forward; a route's interior must be routers",
                );
            }
            let Some(&port) = net.nodes[a as usize]
                .ports
                .iter()
                .find(|&&q| net.ports[q as usize].peer == b)
            else {
                return err(
                    p.index(k + 1),
                    quoted(&route.path[k + 1]),
                    format!("no link joins {} to {}", route.path[k], route.path[k + 1]),
                );
            };
            if let Some(&(other, j)) = set_by.get(&(a, dst)) {
                if other != port {
                    return err(
                        p.index(k),
                        quoted(&route.path[k]),
                        format!(
                            "route[{j}] already sends traffic for {} another way from here",
                            route.path.last().expect("two or more")
                        ),
                    );
                }
            }
            set_by.insert((a, dst), (port, i));
            net.routes.set(a, dst, port);
        }
    }
    Ok(())
}

fn build_flows(
    sc: &Scenario,
    names: &HashMap<String, (NodeId, NodeKind)>,
    net: &Network,
    seed: u64,
    window: Window,
    root: &KeyPath,
) -> Result<Vec<Flow>> {
    let mut flows = Vec::new();
    let mut flow_names = HashSet::new();
    for (i, spec) in sc.flows.iter().enumerate() {
        let p = root.key("flow").index(i);
        let (src, dst) = flow_endpoints(spec, names, net, &p)?;
        let stop = flow_times(spec, sc.duration, &p)?;
        let tcp = transport::build_tcp(spec, net, src, dst, sc.duration, &p)?;
        let source = match tcp {
            Some((params, app)) => Source::Tcp(Box::new(params), app),
            None => build_source(&spec.app, &p.key("app"))?,
        };
        if spec.count == 0 {
            return err(p.key("count"), 0, "count must be at least 1");
        }
        let group = spec.name.clone().unwrap_or_else(|| format!("flow{i}"));
        for k in 0..spec.count {
            let name = if spec.count == 1 {
                group.clone()
            } else {
                format!("{group}.{k}")
            };
            if !flow_names.insert(name.clone()) {
                return err(
                    p.key("name"),
                    quoted(&group),
                    format!("a flow named \"{name}\" already exists"),
                );
            }
            let id = flows.len() as u32;
            let mut rng = stream(seed, &format!("flow:{name}"));
            let start = spec.start.draw(&mut rng);
            let udp = UdpSender {
                flow: id,
                src,
                dst,
                dscp: spec.dscp,
                next_index: 0,
            };
            let transport = match &source {
                Source::Datagram(app) => Transport::Udp {
                    app: app.clone(),
                    sender: udp,
                },
                Source::Tfrc {
                    size,
                    green,
                    green_dscp,
                    ecn,
                } => Transport::Tfrc(Box::new(TfrcFlow::new(udp, *size, *green, *green_dscp, *ecn))),
                Source::Tcp(params, app) => Transport::Tcp(Box::new(TcpFlow::new(
                    id,
                    src,
                    dst,
                    spec.dscp,
                    **params,
                    app.clone(),
                    window,
                ))),
            };
            flows.push(Flow {
                rng,
                name,
                group: group.clone(),
                src,
                dst,
                start,
                stop,
                transport,
                stats: FlowStats::default(),
            });
        }
    }
    Ok(flows)
}

fn flow_endpoints(
    spec: &FlowSpec,
    names: &HashMap<String, (NodeId, NodeKind)>,
    net: &Network,
    p: &KeyPath,
) -> Result<(NodeId, NodeId)> {
    let (src, src_kind) = lookup(names, &spec.src, p.key("src"))?;
    let (dst, dst_kind) = lookup(names, &spec.dst, p.key("dst"))?;
    for (kind, key, name) in [(src_kind, "src", &spec.src), (dst_kind, "dst", &spec.dst)] {
        if kind != NodeKind::Host {
            return err(
                p.key(key),
                quoted(name),
                "flows start and end at hosts, and this node is a router",
            );
        }
    }
    if src == dst {
        return err(
            p.key("dst"),
            quoted(&spec.dst),
            "a flow's destination must differ from its source",
        );
    }
    if net.routes.path(&net.ports, src, dst).is_none() {
        return err(
            p.key("dst"),
            quoted(&spec.dst),
            format!(
                "no route leads from {} to {} (check the links and [[route]] entries)",
                spec.src, spec.dst
            ),
        );
    }
    Ok((src, dst))
}

/// Checks the start (a time or an interval) and returns the stop time.
fn flow_times(spec: &FlowSpec, duration: Duration, p: &KeyPath) -> Result<SimTime> {
    let (_, latest) = spec.start.check(duration, &p.key("start"))?;
    let stop = SimTime::ZERO + spec.stop.unwrap_or(duration);
    if stop <= SimTime::ZERO + latest {
        return err(
            p.key("stop"),
            quoted(&spec.stop.unwrap_or(duration).to_string()),
            format!("stop must come after start ({latest})"),
        );
    }
    Ok(stop)
}

fn check_size(size: u64, path: KeyPath) -> Result<u32> {
    if !(MIN_DATAGRAM as u64..=65_535).contains(&size) {
        return err(
            path,
            quoted(&format!("{size}B")),
            format!("a UDP datagram is {MIN_DATAGRAM}B (IPv4 + UDP headers) to 65535B"),
        );
    }
    Ok(size as u32)
}

fn check_variation(v: Fraction, path: KeyPath) -> Result<f64> {
    if v.0 >= 1.0 {
        return err(
            path,
            v.0,
            "the spacing variation must be below 100 % (gaps would reach zero)",
        );
    }
    Ok(v.0)
}

/// What a `[[flow]]` entry sends, built once for all of its `count` flows.
enum Source {
    Datagram(App),
    Tfrc {
        size: u32,
        green: f64,
        green_dscp: crate::packet::Dscp,
        ecn: bool,
    },
    // Boxed: TCP's parameters (CUBIC's and DCTCP's tables among them) are ten times the
    // other variants.
    Tcp(Box<TcpParams>, TcpApp),
}

fn build_source(spec: &AppSpec, p: &KeyPath) -> Result<Source> {
    match spec {
        AppSpec::Cbr(CbrSpec {
            rate,
            size,
            spacing_variation,
        }) => {
            check_rate(*rate, p.key("rate"))?;
            let size = check_size(size.0, p.key("size"))?;
            check_spacing(*rate, size, p.key("rate"))?;
            let v = check_variation(*spacing_variation, p.key("spacing_variation"))?;
            Ok(Source::Datagram(App::Cbr(Cbr::new(*rate, size, v))))
        }
        AppSpec::Poisson(PoissonSpec { rate, size }) => {
            check_rate(*rate, p.key("rate"))?;
            let size = check_size(size.0, p.key("size"))?;
            check_spacing(*rate, size, p.key("rate"))?;
            Ok(Source::Datagram(App::Poisson(Poisson::new(*rate, size))))
        }
        AppSpec::Tfrc(TfrcSpec {
            size,
            green,
            green_dscp,
            ecn,
        }) => {
            let size = check_size(size.0, p.key("size"))?;
            check_unit_interval(*green, p.key("green"), "the green share is a fraction of the packets")?;
            crate::sched::dsd::spec::check_green_dscp(*green_dscp, &p.key("green_dscp"))?;
            Ok(Source::Tfrc {
                size,
                green: *green,
                green_dscp: *green_dscp,
                ecn: *ecn,
            })
        }
        AppSpec::Ftp(_) | AppSpec::Web(_) => unreachable!("TCP apps are built by transport::build_tcp"),
    }
}
