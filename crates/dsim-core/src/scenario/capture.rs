//! Scenario keys for packet captures and scripted drops.
//!
//! ```toml
//! [[capture]]
//! port = "R1->R2"        # one link direction: packets as they start transmission
//! # node = "B"           # or a node: what it transmits and what reaches it
//! # name = "bottleneck"  # file name stem (default: the port or node name)
//! # snaplen = "80B"      # bytes written per packet (default: all)
//!
//! [[link]]
//! from = "R1"
//! to = "R2"
//! rate = "10Mbps"
//! delay = "10ms"
//! forward = { drop = [{ flow = "bulk", segment = 20 }, { flow = "bulk", segment = 20, occurrence = 2 }] }
//! ```
//!
//! A capture writes `<name>-r<replication>.pcap` into the folder the run is given
//! (`dsim.run(..., capture_dir=...)`, `dsim run --out`); without a folder nothing is
//! written. Scripted drops are described in [`crate::net::scripted`].

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::build::{err, quoted};
use super::schema::Scenario;
use crate::net::Network;
use crate::net::scripted::{DropMatch, DropRule, ScriptedDrops};
use crate::packet::PortId;
use crate::params::{ConfigError, KeyPath, Params, some_of};
use crate::sim::Flow;
use crate::time::Bytes;
use crate::trace::CapturePoint;
use crate::transport::tcp::DATA_START;

/// IPv4 header (20) + the longest TCP header (60).
pub const MIN_SNAPLEN: u32 = 80;
pub const MAX_SNAPLEN: u32 = 65_535;

type Result<T> = std::result::Result<T, ConfigError>;

/// A `[[capture]]` entry: exactly one of `port` and `node`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct CaptureSpec {
    /// Capture what a port sends ("R1->R2"), as it starts on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// Capture what a node sends and receives, on all its links.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The pcap file's name (default: the port or node name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Bytes of each packet written (default: all of it). Headers only ("80B") keeps the
    /// files small; tshark then cannot verify TCP/UDP checksums.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snaplen: Option<Bytes>,
}

/// One scripted drop of a link direction: `packet = n`, or `segment = k` with an
/// optional `occurrence` (default 1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
pub struct DropRuleSpec {
    /// The flow whose packet is dropped.
    pub flow: String,
    /// Drop the flow's n-th packet in its sending order (0-based; for TCP every
    /// transmission, retransmissions included, has its own index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<u64>,
    /// Drop the TCP data segment whose first byte is byte k * MSS of the stream, at its
    /// `occurrence`-th crossing of this link direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<u64>,
    /// Which crossing of `segment` is dropped (1, the default: the first transmission; 2:
    /// the first retransmission that gets here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occurrence: Option<u32>,
}

pub fn build_captures(sc: &Scenario, net: &Network, root: &KeyPath) -> Result<Vec<CapturePoint>> {
    let mut points = Vec::new();
    let mut names = HashSet::new();
    for (i, c) in sc.captures.iter().enumerate() {
        let p = root.key("capture").index(i);
        let (default_name, tx, rx) = match (&c.port, &c.node) {
            (Some(port), None) => {
                let Some(id) = net.ports.iter().position(|q| &q.name == port) else {
                    let known = some_of(net.ports.iter().map(|q| q.name.as_str()));
                    return err(
                        p.key("port"),
                        quoted(port),
                        format!("no link direction has this name; ports: {known}"),
                    );
                };
                (port.replace("->", "-"), vec![id as PortId], vec![])
            }
            (None, Some(node)) => {
                let Some(n) = net.node_id(node) else {
                    let known = some_of(net.nodes.iter().map(|q| q.name.as_str()));
                    return err(
                        p.key("node"),
                        quoted(node),
                        format!("no node has this name; declared nodes: {known}"),
                    );
                };
                let tx = net.nodes[n as usize].ports.clone();
                let rx = (0..net.ports.len() as PortId)
                    .filter(|&q| net.ports[q as usize].peer == n)
                    .collect();
                (node.clone(), tx, rx)
            }
            _ => {
                return Err(ConfigError::new(
                    p,
                    None,
                    "a capture taps exactly one of `port` (\"A->B\") or `node`",
                ));
            }
        };
        let name = c.name.clone().unwrap_or(default_name);
        if name.is_empty()
            || name.contains(['/', '\\'])
            || name.starts_with('.')
            || name.chars().any(char::is_whitespace)
        {
            return err(
                p.key("name"),
                quoted(&name),
                "a capture name is a file name stem: no spaces, slashes or leading dot",
            );
        }
        if !names.insert(name.clone()) {
            return err(p.key("name"), quoted(&name), "another capture writes to this name");
        }
        let snaplen = match c.snaplen {
            None => MAX_SNAPLEN,
            Some(b) if (MIN_SNAPLEN as u64..=MAX_SNAPLEN as u64).contains(&b.0) => b.0 as u32,
            Some(b) => {
                return err(
                    p.key("snaplen"),
                    format!("\"{b}\""),
                    format!(
                        "a snapshot length holds the IPv4 and TCP headers with options: {MIN_SNAPLEN}B to {MAX_SNAPLEN}B"
                    ),
                );
            }
        };
        points.push(CapturePoint { name, tx, rx, snaplen });
    }
    Ok(points)
}

/// Attaches the `drop` lists of the link directions to their ports.
pub fn attach_drops(sc: &Scenario, net: &mut Network, flows: &[Flow], root: &KeyPath) -> Result<()> {
    for (i, link) in sc.links.iter().enumerate() {
        for (k, (dir, key)) in [(&link.forward, "forward"), (&link.reverse, "reverse")]
            .into_iter()
            .enumerate()
        {
            if dir.drop.is_empty() {
                continue;
            }
            let mut rules = Vec::with_capacity(dir.drop.len());
            for (j, r) in dir.drop.iter().enumerate() {
                let p = root.key("link").index(i).key(key).key("drop").index(j);
                rules.push(drop_rule(r, flows, &p)?);
            }
            // build_network pushes the forward then the reverse port of each link.
            net.ports[2 * i + k].scripted = Some(Box::new(ScriptedDrops { rules }));
        }
    }
    Ok(())
}

fn drop_rule(r: &DropRuleSpec, flows: &[Flow], p: &KeyPath) -> Result<DropRule> {
    let Some(id) = flows.iter().position(|f| f.name == r.flow) else {
        let known = some_of(flows.iter().map(|f| f.name.as_str()));
        return err(
            p.key("flow"),
            quoted(&r.flow),
            format!("no flow has this name (flows of count > 1 are name.0, name.1, ...); flows: {known}"),
        );
    };
    let what = match (r.packet, r.segment) {
        (Some(index), None) => {
            if r.occurrence.is_some() {
                return err(
                    p.key("occurrence"),
                    r.occurrence.unwrap_or_default(),
                    "occurrence applies to `segment` rules only (a packet index is sent once)",
                );
            }
            DropMatch::Packet { index }
        }
        (None, Some(k)) => {
            let Some(tcp) = flows[id].tcp() else {
                return err(
                    p.key("segment"),
                    k,
                    format!(
                        "flow \"{}\" is not a TCP flow; drop its datagrams with `packet`",
                        r.flow
                    ),
                );
            };
            let occurrence = r.occurrence.unwrap_or(1);
            if occurrence == 0 {
                return err(
                    p.key("occurrence"),
                    0,
                    "occurrences count from 1 (the first transmission)",
                );
            }
            DropMatch::Segment {
                seq: DATA_START + k * tcp.params.mss as u64,
                occurrence,
            }
        }
        _ => {
            return Err(ConfigError::new(
                p.clone(),
                None,
                "a drop rule names exactly one of `packet` (an index) or `segment` (a TCP segment number)",
            ));
        }
    };
    Ok(DropRule::new(id as u32, what))
}
