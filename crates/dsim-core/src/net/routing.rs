//! Static routing: a next-hop port per (node, destination).
//!
//! Routes are shortest paths in hops. Hosts do not forward, so a path's interior is made of
//! routers only. Among equal-length next hops the port of the link declared first wins,
//! which keeps routes stable and predictable. Explicit routes (`[[route]] path = [...]`)
//! override the computed next hop at every node of their path for the path's last node.

use crate::packet::{NodeId, PortId};

use super::{Node, NodeKind, Port};

pub const NO_ROUTE: PortId = PortId::MAX;
/// `row_of` of a node without a row of its own.
const NO_ROW: u32 = u32::MAX;

/// The next hops, stored compactly: a node whose every destination routes through one
/// port (a host on one link, in a connected network) keeps that port alone; the others (the
/// routers, hosts on several links) keep a row of next hops, one per destination. A
/// network of n hosts on a few routers costs the routers' rows, not n x n entries (10,000
/// connections, 20,002 nodes: 1.6 GB for the full table).
#[derive(Clone, Debug)]
pub struct Routes {
    nodes: usize,
    /// The rows, one after the other, `nodes` entries each.
    next: Vec<PortId>,
    /// Per node, the index of its row in `next`, or NO_ROW.
    row_of: Vec<u32>,
    /// Per node, the port every destination routes through when there is one (a host on
    /// one link), else NO_ROUTE: a short table the sources read instead of a row, which
    /// would be a cache miss per packet sent.
    only: Vec<PortId>,
}

impl Routes {
    /// Shortest-hop routes between all pairs: a search from each node that needs a row,
    /// and, for a host on one link, the count of what its peer reaches. The cost is the
    /// rows' nodes times the network's size, not the square of the nodes.
    pub fn shortest_paths(nodes: &[Node], ports: &[Port]) -> Routes {
        let n = nodes.len();
        let mut routes = Routes {
            nodes: n,
            next: Vec::new(),
            row_of: vec![NO_ROW; n],
            only: vec![NO_ROUTE; n],
        };
        let mut search = Search::new(n);
        // What each router reaches through routers (itself excluded).
        let mut reached = vec![0usize; n];
        for u in (0..n).filter(|&u| nodes[u].kind == NodeKind::Router) {
            reached[u] = search.run(u as NodeId, nodes, ports);
            routes.add_row(u, &search.first);
        }
        for u in (0..n).filter(|&u| nodes[u].kind == NodeKind::Host) {
            if let Some(p) = one_link_to_everything(u, nodes, ports, &search.reaches, &reached) {
                routes.only[u] = p;
            } else {
                search.run(u as NodeId, nodes, ports);
                routes.add_row(u, &search.first);
            }
        }
        routes
    }

    /// Gives node `u` the row `first` (its next hop per destination).
    fn add_row(&mut self, u: usize, first: &[PortId]) {
        self.row_of[u] = (self.next.len() / self.nodes.max(1)) as u32;
        self.next.extend_from_slice(first);
        self.find_only_port(u);
    }

    /// Node `at`'s row, made from its one port if it had none.
    fn row_mut(&mut self, at: usize) -> &mut [PortId] {
        if self.row_of[at] == NO_ROW {
            let mut row = vec![self.only[at]; self.nodes];
            row[at] = NO_ROUTE;
            self.add_row(at, &row);
        }
        let start = self.row_of[at] as usize * self.nodes;
        &mut self.next[start..start + self.nodes]
    }

    #[inline]
    pub fn next_port(&self, at: NodeId, dst: NodeId) -> Option<PortId> {
        let only = self.only[at as usize];
        if only != NO_ROUTE && at != dst {
            return Some(only);
        }
        let row = self.row_of[at as usize];
        if row == NO_ROW {
            return None;
        }
        let p = self.next[row as usize * self.nodes + dst as usize];
        (p != NO_ROUTE).then_some(p)
    }

    pub fn set(&mut self, at: NodeId, dst: NodeId, port: PortId) {
        self.row_mut(at as usize)[dst as usize] = port;
        self.find_only_port(at as usize);
    }

    /// Records the port of node `u` (which has a row) that every other node routes
    /// through, if one does.
    fn find_only_port(&mut self, u: usize) {
        let start = self.row_of[u] as usize * self.nodes;
        let row = &self.next[start..start + self.nodes];
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

/// The port of host `u` that every other node routes through, without a search of its
/// own, if `u` has one link and its peer reaches every other node: the peer itself, or
/// (a router) what its own search reached (`reached`, `reaches`).
fn one_link_to_everything(
    u: usize,
    nodes: &[Node],
    ports: &[Port],
    reaches: &[Vec<bool>],
    reached: &[usize],
) -> Option<PortId> {
    let [p] = nodes[u].ports[..] else {
        return None;
    };
    let v = ports[p as usize].peer as usize;
    let n = nodes.len();
    let others = if nodes[v].kind == NodeKind::Router {
        // v, and what v reaches but u.
        1 + reached[v] - reaches[v][u] as usize
    } else {
        1
    };
    (others == n - 1).then_some(p)
}

/// A breadth-first search from one node over its out-going ports, through routers only
/// (hosts do not forward), that labels each node reached with the source's port its
/// shortest paths leave by, the first declared where several do.
///
/// Why the first declared: the source's ports are searched in their order, so the first
/// level is queued in port order; each later level is queued in the order of the nodes
/// that reached it, so every level is queued by first-hop port, and a node takes the
/// label of the first node to reach it, the smallest among its shortest paths' first
/// hops: the port the per-destination rule picks (the first port whose peer is one hop
/// closer), which `same_routes_as_the_per_destination_rule` checks on random networks.
struct Search {
    /// The source's port towards each node (NO_ROUTE: unreached, and the source itself).
    first: Vec<PortId>,
    queue: Vec<NodeId>,
    /// Per router searched, the nodes it reached (for the one-link hosts behind it).
    reaches: Vec<Vec<bool>>,
}

impl Search {
    fn new(n: usize) -> Search {
        Search {
            first: vec![NO_ROUTE; n],
            queue: Vec::with_capacity(n),
            reaches: vec![Vec::new(); n],
        }
    }

    /// Searches from `src`; returns how many other nodes it reached, and for a router
    /// keeps which.
    fn run(&mut self, src: NodeId, nodes: &[Node], ports: &[Port]) -> usize {
        self.first.fill(NO_ROUTE);
        self.queue.clear();
        let seen = |first: &[PortId], v: usize| v == src as usize || first[v] != NO_ROUTE;
        for &p in &nodes[src as usize].ports {
            let v = ports[p as usize].peer as usize;
            if !seen(&self.first, v) {
                self.first[v] = p;
                self.queue.push(v as NodeId);
            }
        }
        let mut head = 0;
        while head < self.queue.len() {
            let w = self.queue[head] as usize;
            head += 1;
            if nodes[w].kind != NodeKind::Router {
                continue;
            }
            for &p in &nodes[w].ports {
                let v = ports[p as usize].peer as usize;
                if !seen(&self.first, v) {
                    self.first[v] = self.first[w];
                    self.queue.push(v as NodeId);
                }
            }
        }
        if nodes[src as usize].kind == NodeKind::Router {
            self.reaches[src as usize] = self.first.iter().map(|&p| p != NO_ROUTE).collect();
        }
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario;

    /// The routing rule stated per destination, as the simulator computed it before the
    /// compact table: the hop distance of every node to `d` through nodes that forward
    /// (routers, and `d` itself), then at `u` the first port (in declaration order) whose
    /// peer forwards towards `d` and is one hop closer.
    fn reference(nodes: &[Node], ports: &[Port], u: usize, d: usize) -> Option<PortId> {
        let forwards = |v: usize| v == d || nodes[v].kind == NodeKind::Router;
        let mut dist = vec![u32::MAX; nodes.len()];
        dist[d] = 0;
        let mut frontier = vec![d];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for &v in frontier.iter().filter(|&&v| forwards(v)) {
                for p in ports.iter().filter(|p| p.peer as usize == v) {
                    if dist[p.node as usize] == u32::MAX {
                        dist[p.node as usize] = dist[v] + 1;
                        next.push(p.node as usize);
                    }
                }
            }
            frontier = next;
        }
        if u == d || dist[u] == u32::MAX {
            return None;
        }
        nodes[u].ports.iter().copied().find(|&p| {
            let v = ports[p as usize].peer as usize;
            forwards(v) && dist[v] != u32::MAX && dist[v] + 1 == dist[u]
        })
    }

    proptest::proptest! {
        /// On random networks of hosts and routers (some disconnected, some hosts on
        /// several links, parallel paths of equal length: ties), every node's next hop to
        /// every destination is the per-destination rule's.
        #[test]
        fn same_routes_as_the_per_destination_rule(
            hosts in 1usize..7,
            routers in 0usize..5,
            links in proptest::collection::vec((0usize..11, 0usize..11), 0..25),
        ) {
            let n = hosts + routers;
            let name = |i: usize| if i < hosts { format!("H{i}") } else { format!("R{}", i - hosts) };
            let list = |r: std::ops::Range<usize>| r.map(|i| format!("\"{}\"", name(i))).collect::<Vec<_>>().join(", ");
            let mut text = format!("duration = \"1s\"\n[nodes]\nhosts = [{}]\nrouters = [{}]\n", list(0..hosts), list(hosts..n));
            let mut linked = std::collections::HashSet::new();
            for (a, b) in links {
                let (a, b) = (a % n, b % n);
                if a != b && linked.insert((a.min(b), a.max(b))) {
                    text += &format!(
                        "[[link]]\nfrom = \"{}\"\nto = \"{}\"\nrate = \"1Mbps\"\ndelay = \"1ms\"\n",
                        name(a),
                        name(b)
                    );
                }
            }
            // Built without validation's traffic rule: a network alone has routes.
            let sc: scenario::Scenario = scenario::deserialize_value(&text).unwrap();
            let sim = scenario::build(&sc, 1).unwrap();
            let net = &sim.net;
            for u in 0..n {
                for d in 0..n {
                    proptest::prop_assert_eq!(
                        net.routes.next_port(u as NodeId, d as NodeId),
                        reference(&net.nodes, &net.ports, u, d),
                        "from {} to {}", name(u), name(d)
                    );
                }
            }
        }
    }

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
