//! Static routing: a next-hop port per (node, destination).
//!
//! Routes are shortest paths in hops. Hosts do not forward, so a path's interior is made of
//! routers only. Among equal-length next hops the port of the link declared first wins,
//! which keeps routes stable and predictable. Explicit routes (`[[route]] path = [...]`)
//! override the computed next hop at every node of their path for the path's last node.

use crate::packet::{NodeId, PortId};

use super::{Node, NodeKind, Port};

pub const NO_ROUTE: PortId = PortId::MAX;

#[derive(Clone, Debug)]
pub struct Routes {
    nodes: usize,
    next: Vec<PortId>,
    /// Per node, the port every destination routes through when there is one (a host on
    /// one link), else NO_ROUTE: a short table the sources read instead of their row of
    /// `next`, which would be a cache miss per packet sent.
    only: Vec<PortId>,
}

impl Routes {
    /// Shortest-hop routes between all pairs.
    pub fn shortest_paths(nodes: &[Node], ports: &[Port]) -> Routes {
        let n = nodes.len();
        let mut next = vec![NO_ROUTE; n * n];
        let forwards = |v: NodeId, d: NodeId| v == d || nodes[v as usize].kind == NodeKind::Router;
        for d in 0..n as NodeId {
            let dist = hops_to(d, nodes, ports, &forwards);
            for u in 0..n {
                if u as NodeId == d || dist[u] == u32::MAX {
                    continue;
                }
                next[u * n + d as usize] = nodes[u]
                    .ports
                    .iter()
                    .copied()
                    .find(|&p| {
                        let v = ports[p as usize].peer;
                        forwards(v, d) && dist[v as usize] != u32::MAX && dist[v as usize] + 1 == dist[u]
                    })
                    .unwrap_or(NO_ROUTE);
            }
        }
        let mut routes = Routes {
            nodes: n,
            next,
            only: vec![NO_ROUTE; n],
        };
        for u in 0..n {
            routes.find_only_port(u);
        }
        routes
    }

    #[inline]
    pub fn next_port(&self, at: NodeId, dst: NodeId) -> Option<PortId> {
        let only = self.only[at as usize];
        if only != NO_ROUTE && at != dst {
            return Some(only);
        }
        let p = self.next[at as usize * self.nodes + dst as usize];
        (p != NO_ROUTE).then_some(p)
    }

    pub fn set(&mut self, at: NodeId, dst: NodeId, port: PortId) {
        self.next[at as usize * self.nodes + dst as usize] = port;
        self.find_only_port(at as usize);
    }

    /// Records the port of node `u` that every other node routes through, if one does.
    fn find_only_port(&mut self, u: usize) {
        let row = &self.next[u * self.nodes..(u + 1) * self.nodes];
        let mut others = row.iter().enumerate().filter(|&(d, _)| d != u).map(|(_, &p)| p);
        let first = others.next().unwrap_or(NO_ROUTE);
        self.only[u] = if others.all(|p| p == first) { first } else { NO_ROUTE };
    }

    /// The sequence of nodes from `src` to `dst`, or None if the routes do not get there
    /// (no route, or a loop).
    pub fn path(&self, ports: &[Port], src: NodeId, dst: NodeId) -> Option<Vec<NodeId>> {
        let mut path = vec![src];
        let mut at = src;
        while at != dst {
            at = ports[self.next_port(at, dst)? as usize].peer;
            if path.len() > self.nodes {
                return None;
            }
            path.push(at);
        }
        Some(path)
    }
}

/// Hop distance of every node to `d`, moving only through nodes that forward towards `d`.
fn hops_to(d: NodeId, nodes: &[Node], ports: &[Port], forwards: &dyn Fn(NodeId, NodeId) -> bool) -> Vec<u32> {
    let mut dist = vec![u32::MAX; nodes.len()];
    dist[d as usize] = 0;
    let mut frontier = vec![d];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for &v in &frontier {
            if !forwards(v, d) {
                continue;
            }
            for p in ports.iter().filter(|p| p.peer == v) {
                if dist[p.node as usize] == u32::MAX {
                    dist[p.node as usize] = dist[v as usize] + 1;
                    next.push(p.node);
                }
            }
        }
        frontier = next;
    }
    dist
}

#[cfg(test)]
mod tests {
    use crate::scenario;

    /// A host on one link routes everything through it; a host on two links and a router
    /// use their rows; an explicit route on the one-link host's row is still obeyed.
    #[test]
    fn a_one_link_host_routes_through_its_link_and_explicit_routes_still_apply() {
        let text = r#"
            duration = "1s"
            [nodes]
            hosts = ["A", "B", "M"]
            routers = ["R"]
            [[link]]
            from = "A"
            to = "R"
            rate = "1Mbps"
            delay = "1ms"
            [[link]]
            from = "M"
            to = "R"
            rate = "1Mbps"
            delay = "1ms"
            [[link]]
            from = "M"
            to = "B"
            rate = "1Mbps"
            delay = "1ms"
            [[link]]
            from = "R"
            to = "B"
            rate = "1Mbps"
            delay = "1ms"
            [[flow]]
            src = "A"
            dst = "B"
            app = { type = "cbr", rate = "8kbps", size = "100B" }
        "#;
        let sim = scenario::build(&scenario::from_toml(text).unwrap(), 1).unwrap();
        let net = &sim.net;
        let id = |n: &str| net.node_id(n).unwrap();
        let port = |from: &str, to: &str| {
            let (f, t) = (id(from), id(to));
            net.ports.iter().position(|p| p.node == f && p.peer == t).unwrap() as u32
        };
        let routes = &net.routes;
        for dst in ["B", "M", "R"] {
            assert_eq!(routes.next_port(id("A"), id(dst)), Some(port("A", "R")));
        }
        assert_eq!(routes.next_port(id("A"), id("A")), None, "no route to itself");
        assert_eq!(routes.next_port(id("M"), id("B")), Some(port("M", "B")));
        assert_eq!(routes.next_port(id("M"), id("A")), Some(port("M", "R")));
        assert_eq!(routes.next_port(id("R"), id("B")), Some(port("R", "B")));

        let mut routes = routes.clone();
        routes.set(id("A"), id("B"), port("A", "R") + 100);
        assert_eq!(routes.next_port(id("A"), id("B")), Some(port("A", "R") + 100));
        assert_eq!(routes.next_port(id("A"), id("M")), Some(port("A", "R")));
    }
}
