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
        Routes { nodes: n, next }
    }

    #[inline]
    pub fn next_port(&self, at: NodeId, dst: NodeId) -> Option<PortId> {
        let p = self.next[at as usize * self.nodes + dst as usize];
        (p != NO_ROUTE).then_some(p)
    }

    pub fn set(&mut self, at: NodeId, dst: NodeId, port: PortId) {
        self.next[at as usize * self.nodes + dst as usize] = port;
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
