//! The network: nodes, egress ports (one per link direction) and static routes.

pub mod port;
pub mod routing;
pub mod scripted;

pub use port::Port;
pub use routing::Routes;

use crate::packet::{NodeId, PortId};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end system: sources and sinks live here; it does not forward transit traffic.
    Host,
    /// Forwards packets; runs the per-hop behaviours of its egress ports.
    Router,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Egress ports, in the order their links were declared.
    pub ports: Vec<PortId>,
}

pub struct Network {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub routes: Routes,
}

impl Network {
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(|i| i as NodeId)
    }
}
