//! Building and validating the traffic conditioners of a scenario (match, placement,
//! per-flow states; each mechanism builds itself from its table) and user-defined
//! codepoint names. Every refusal names the key
//! path, the value and the rule.

use std::collections::{HashMap, HashSet};

use super::build::{err, lookup, quoted};
use super::conditioner::{ConditionerSpec, DirectionMatch, MatchSpec, SideSpec};
use super::schema::Scenario;
use crate::conditioner::{
    Action, ActionSpec, BlockDef, ChainRef, Conditioners, FlowSet, Instance, Match, Meter, PerFlowMembers, Shaper,
};
use crate::engine::rng::stream;
use crate::net::{Network, NodeKind};
use crate::packet::{Color, Direction, Dscp, FlowId, NodeId, PortId};
use crate::params::{ConfigError, KeyPath};
use crate::sim::Flow;
use crate::time::Rate;

type Result<T> = std::result::Result<T, ConfigError>;

/// An error whose value is read back from the file (tables and other composite values).
fn err_at<T>(path: KeyPath, rule: impl Into<String>) -> Result<T> {
    Err(ConfigError::new(path, None, rule))
}

// ---------------------------------------------------------------------------------------
// User-defined codepoints

/// Checks one `[dscp]` entry: a name that is not a standard one, a value 0-63.
fn check_dscp_name(name: &str, value: i64, path: KeyPath) -> Result<u8> {
    let ok_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !ok_name {
        return err(
            path,
            quoted(name),
            "a codepoint name starts with a letter and holds letters, digits, '_' or '-'",
        );
    }
    if let Ok(d) = crate::packet::with_dscp_names(&[], || Dscp::parse(name)) {
        return err(
            path,
            value,
            format!(
                "\"{name}\" is a standard codepoint name (= {}); choose another name",
                d.0
            ),
        );
    }
    if !(0..64).contains(&value) {
        return err(path, value, "a codepoint has six bits: 0-63");
    }
    Ok(value as u8)
}

/// The `[dscp]` names of a scenario's TOML text, checked (used before deserializing, so
/// that the names can be read wherever a DSCP is). Syntax errors are left to the parser.
pub fn dscp_names_in(text: &str) -> Result<Vec<(String, u8)>> {
    match text.parse::<toml::Table>() {
        Ok(table) => dscp_names_of(&table),
        Err(_) => Ok(Vec::new()),
    }
}

/// The `[dscp]` names of a scenario's parsed TOML, checked.
pub fn dscp_names_of(table: &toml::Table) -> Result<Vec<(String, u8)>> {
    let Some(dscp) = table.get("dscp") else {
        return Ok(Vec::new());
    };
    let Some(dscp) = dscp.as_table() else {
        return err(
            KeyPath::root().key("dscp"),
            dscp.to_string(),
            "[dscp] is a table of codepoint names: NAME = number",
        );
    };
    let mut names = Vec::new();
    for (name, v) in dscp {
        let path = KeyPath::root().key("dscp").key(name);
        let Some(value) = v.as_integer() else {
            return err(path, v.to_string(), "a codepoint is a number 0-63");
        };
        names.push((name.clone(), check_dscp_name(name, value, path)?));
    }
    Ok(names)
}

/// Checks the scenario's `[dscp]` table (for scenarios not read from text).
pub fn check_dscp_names(sc: &Scenario, root: &KeyPath) -> Result<()> {
    let mut seen: HashMap<String, &str> = HashMap::new();
    for (name, &value) in &sc.dscp_names {
        let path = root.key("dscp").key(name);
        check_dscp_name(name, value, path.clone())?;
        if let Some(other) = seen.insert(name.to_ascii_lowercase(), name) {
            return err(
                path,
                quoted(name),
                format!("\"{other}\" is already defined (names are case-insensitive)"),
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Conditioners

/// The line rate of a conditioner's output: the slowest of its egress ports; at an
/// ingress (before the route lookup) the fastest link the node can send on.
fn line_rate(chains: &[ChainRef], node: NodeId, net: &Network) -> Rate {
    let rate = |p: PortId| net.ports[p as usize].rate;
    let egress: Vec<Rate> = chains
        .iter()
        .filter_map(|c| match c {
            ChainRef::Egress(p) => Some(rate(*p)),
            ChainRef::Ingress(_) => None,
        })
        .collect();
    match egress.iter().min() {
        Some(r) => *r,
        None => net.nodes[node as usize]
            .ports
            .iter()
            .map(|&p| rate(p))
            .max()
            .unwrap_or(Rate(0)),
    }
}

/// What a conditioner's match and per-flow states need to know of a flow.
#[derive(Clone, Copy, Debug)]
pub struct FlowRef<'a> {
    pub name: &'a str,
    /// The `[[flow]]` entry it came from.
    pub group: &'a str,
    pub src: NodeId,
    pub dst: NodeId,
}

impl<'a> FlowRef<'a> {
    pub fn of(flow: &'a Flow) -> Self {
        FlowRef {
            name: &flow.name,
            group: &flow.group,
            src: flow.src,
            dst: flow.dst,
        }
    }
}

/// The flows a conditioner's match may name, with the ids of each flow name and
/// `[[flow]]` group name, indexed once for all the conditioners (a scan of every flow per
/// name made the build quadratic in the flows).
pub struct FlowIndex<'a> {
    pub flows: Vec<FlowRef<'a>>,
    by_name: HashMap<&'a str, Vec<FlowId>>,
}

impl<'a> FlowIndex<'a> {
    pub fn new(flows: Vec<FlowRef<'a>>) -> Self {
        let mut by_name: HashMap<&'a str, Vec<FlowId>> = HashMap::new();
        for (f, flow) in flows.iter().enumerate() {
            by_name.entry(flow.name).or_default().push(f as FlowId);
            if flow.group != flow.name {
                by_name.entry(flow.group).or_default().push(f as FlowId);
            }
        }
        FlowIndex { flows, by_name }
    }

    /// The flows (or `[[flow]]` groups) named in `names`.
    fn set(&self, names: &[String], path: &KeyPath) -> Result<FlowSet> {
        let mut ids = Vec::new();
        for (i, n) in names.iter().enumerate() {
            match self.by_name.get(n.as_str()) {
                Some(fs) => ids.extend_from_slice(fs),
                None => return err(path.index(i), quoted(n), "no flow (or [[flow]] group) has this name"),
            }
        }
        Ok(ids.into_iter().collect())
    }

    /// The flows a per-flow block with `matcher` may condition, in id order: among those
    /// it names, or all when it names none.
    fn members(&self, matcher: &Match) -> Vec<FlowId> {
        let may = |f: FlowId| {
            let fl = &self.flows[f as usize];
            matcher.may_match_flow(f, fl.src, fl.dst)
        };
        match &matcher.flows {
            Some(set) => set.ids().iter().copied().filter(|&f| may(f)).collect(),
            None => (0..self.flows.len() as FlowId).filter(|&f| may(f)).collect(),
        }
    }
}

fn node_list(
    names: &Option<Vec<String>>,
    nodes: &HashMap<String, (NodeId, NodeKind)>,
    path: &KeyPath,
) -> Result<Option<Vec<NodeId>>> {
    let Some(names) = names else { return Ok(None) };
    let ids = names
        .iter()
        .enumerate()
        .map(|(i, n)| lookup(nodes, n, path.index(i)).map(|x| x.0))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(ids))
}

fn matcher(
    spec: &MatchSpec,
    default_dscp: Option<Dscp>,
    default_direction: Option<Direction>,
    nodes: &HashMap<String, (NodeId, NodeKind)>,
    flows: &FlowIndex,
    path: &KeyPath,
) -> Result<Match> {
    let mut dscp = None;
    let mut seen = HashSet::new();
    for (i, d) in spec.dscp.iter().flatten().enumerate() {
        if !seen.insert(d.0) {
            return err(path.key("dscp").index(i), quoted(&d.to_string()), "listed twice");
        }
        *dscp.get_or_insert(0u64) |= 1 << d.0;
    }
    if dscp.is_none() {
        dscp = default_dscp.map(|d| 1u64 << d.0);
    }
    let direction = match spec.direction {
        None => default_direction,
        Some(DirectionMatch::Forward) => Some(Direction::Forward),
        Some(DirectionMatch::Reverse) => Some(Direction::Reverse),
        Some(DirectionMatch::Any) => None,
    };
    Ok(Match {
        flows: match &spec.flow {
            None => None,
            Some(names) => Some(flows.set(names, &path.key("flow"))?),
        },
        src: node_list(&spec.src, nodes, &path.key("src"))?,
        dst: node_list(&spec.dst, nodes, &path.key("dst"))?,
        dscp,
        direction,
    })
}

/// The chains a conditioner at `node` (side, interface) belongs to.
fn attachment(
    spec: &ConditionerSpec,
    node: NodeId,
    kind: NodeKind,
    nodes: &HashMap<String, (NodeId, NodeKind)>,
    net: &Network,
    path: &KeyPath,
) -> Result<Vec<ChainRef>> {
    if kind == NodeKind::Host && spec.side == SideSpec::Ingress {
        return err(
            path.key("side"),
            quoted("ingress"),
            "a host's conditioners condition what it sends: use side = \"egress\"",
        );
    }
    let neighbour = match &spec.interface {
        Some(n) => Some((lookup(nodes, n, path.key("interface"))?.0, n)),
        None => None,
    };
    let ports: Vec<PortId> = match spec.side {
        SideSpec::Egress => net.nodes[node as usize]
            .ports
            .iter()
            .copied()
            .filter(|&p| neighbour.is_none_or(|(nb, _)| net.ports[p as usize].peer == nb))
            .collect(),
        SideSpec::Ingress => (0..net.ports.len() as PortId)
            .filter(|&p| net.ports[p as usize].peer == node)
            .filter(|&p| neighbour.is_none_or(|(nb, _)| net.ports[p as usize].node == nb))
            .collect(),
    };
    if ports.is_empty() {
        return match neighbour {
            Some((_, n)) => err(
                path.key("interface"),
                quoted(n),
                format!("{} has no link to {n}", spec.at),
            ),
            None => err(path.key("at"), quoted(&spec.at), "this node has no links"),
        };
    }
    Ok(ports
        .into_iter()
        .map(|p| match spec.side {
            SideSpec::Egress => ChainRef::Egress(p),
            SideSpec::Ingress => ChainRef::Ingress(p),
        })
        .collect())
}

/// Builds every `[[conditioner]]` into the chains of `net`'s ports.
pub fn build_conditioners(
    sc: &Scenario,
    nodes: &HashMap<String, (NodeId, NodeKind)>,
    net: &Network,
    flows: &[Flow],
    seed: u64,
    root: &KeyPath,
) -> Result<Conditioners> {
    let mut out = Conditioners::new(net.ports.len());
    let refs = FlowIndex::new(flows.iter().map(FlowRef::of).collect());
    let mut names = HashSet::new();
    for (i, spec) in sc.conditioners.iter().enumerate() {
        let path = root.key("conditioner").index(i);
        let name = spec.name.clone().unwrap_or_else(|| format!("conditioner{i}"));
        if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
            return err(
                path.key("name"),
                quoted(&name),
                "a conditioner name must be non-empty, without spaces or '/'",
            );
        }
        if !names.insert(name.clone()) {
            return err(
                path.key("name"),
                quoted(&name),
                "a conditioner of that name already exists",
            );
        }
        let (node, kind) = lookup(nodes, &spec.at, path.key("at"))?;
        let chains = attachment(spec, node, kind, nodes, net, &path)?;

        let parts = block_parts(spec, &name, nodes, &refs, Some(line_rate(&chains, node, net)), &path)?;
        let (instances, per_flow) = block_states(spec.per_flow, &name, &parts, &refs, seed, &path)?;
        let BlockParts { matcher, actions, .. } = parts;
        let def = BlockDef {
            name,
            node,
            matcher,
            actions,
        };
        out.add_block(def, instances, per_flow, &chains);
    }
    Ok(out)
}

/// A conditioner's block without its placement: match, meter, actions per colour, shaper.
pub struct BlockParts {
    pub matcher: Match,
    pub meter: Option<Meter>,
    pub actions: [Action; 3],
    pub shaper: Option<Shaper>,
}

/// Checks a `[[conditioner]]` table (all but its placement) and builds its parts; `flows`
/// are the flows its match may name, `line_rate` the rate of the link it sends on (None
/// in trace replay: a rate adaptive shaper then needs its MIR).
pub fn block_parts(
    spec: &ConditionerSpec,
    name: &str,
    nodes: &HashMap<String, (NodeId, NodeKind)>,
    flows: &FlowIndex,
    line_rate: Option<Rate>,
    path: &KeyPath,
) -> Result<BlockParts> {
    let (matcher, meter_state, actions, shaper_state) = if let Some(ef) = &spec.ef_policer {
        if spec.meter.is_some() || spec.shaper.is_some() {
            let key = if spec.meter.is_some() { "meter" } else { "shaper" };
            return err_at(
                path.key(key),
                "an ef_policer is a complete conditioner: it takes no meter or shaper",
            );
        }
        for (a, key) in [(&spec.green, "green"), (&spec.yellow, "yellow"), (&spec.red, "red")] {
            if a.is_some() {
                return err_at(
                    path.key(key),
                    "an ef_policer's actions are fixed (RFC 2598 section 3: pass within the rate, drop beyond)",
                );
            }
        }
        let (m, meter_state, actions) = ef.parts(&path.key("ef_policer"))?;
        let mut m2 = matcher(&spec.matcher, Some(Dscp::EF), None, nodes, flows, &path.key("match"))?;
        if spec.matcher.dscp.is_none() {
            m2.dscp = m.dscp;
        }
        (m2, Some(meter_state), actions, None)
    } else {
        if spec.meter.is_none() && spec.shaper.is_none() {
            return err_at(
                path.clone(),
                format!("conditioner \"{name}\" needs a meter, a shaper, or an ef_policer"),
            );
        }
        let meter_state = spec.meter.as_ref().map(|m| m.meter(&path.key("meter"))).transpose()?;
        let colors: &[Color] = meter_state.as_ref().map_or(&[], |m| m.colors());
        for (a, key, c) in [
            (&spec.green, "green", Color::Green),
            (&spec.yellow, "yellow", Color::Yellow),
            (&spec.red, "red", Color::Red),
        ] {
            if a.is_some() && !colors.contains(&c) {
                let why = if meter_state.is_none() {
                    "actions need a meter to colour packets".to_string()
                } else {
                    format!("this meter never colours a packet {key}")
                };
                return err_at(path.key(key), why);
            }
        }
        let actions = [spec.green, spec.yellow, spec.red].map(ActionSpec::action);
        let shaper_state = spec
            .shaper
            .as_ref()
            .map(|s| s.shaper(line_rate, meter_state.as_ref(), &path.key("shaper"), &path.key("meter")))
            .transpose()?;
        let m = matcher(
            &spec.matcher,
            None,
            Some(Direction::Forward),
            nodes,
            flows,
            &path.key("match"),
        )?;
        (m, meter_state, actions, shaper_state)
    };
    Ok(BlockParts {
        matcher,
        meter: meter_state,
        actions,
        shaper: shaper_state,
    })
}

/// The states of a block: one for the aggregate, or one per flow it may match (per
/// flow), each with its own random stream.
pub fn block_states(
    per_flow: bool,
    name: &str,
    parts: &BlockParts,
    flows: &FlowIndex,
    seed: u64,
    path: &KeyPath,
) -> Result<(Vec<Instance>, PerFlowMembers)> {
    let BlockParts {
        matcher, meter, shaper, ..
    } = parts;
    if per_flow {
        let members = flows.members(matcher);
        if members.is_empty() {
            return err(
                path.key("per_flow"),
                true,
                "no flow can match this conditioner, so it would condition nothing",
            );
        }
        let insts = members
            .iter()
            .map(|&f| {
                let rng = stream(seed, &format!("conditioner:{name}/{}", flows.flows[f as usize].name));
                Instance::new(0, Some(f), shaper.clone(), meter.clone(), rng)
            })
            .collect();
        Ok((insts, Some(members)))
    } else {
        let rng = stream(seed, &format!("conditioner:{name}"));
        Ok((vec![Instance::new(0, None, shaper.clone(), meter.clone(), rng)], None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditioner::MeterSpec;

    /// The initial estimate of a TSW meter read from its scenario table (bytes/s).
    fn initial_estimate(table: &str) -> f64 {
        let spec: MeterSpec = crate::scenario::deserialize_value(table).expect("a valid meter table");
        match spec.meter(&KeyPath::root()).expect("builds") {
            Meter::Tsw(t) => t.estimator.avg_rate,
            Meter::Tsw3(t) => t.estimator.avg_rate,
            _ => unreachable!("a TSW meter"),
        }
    }

    #[test]
    fn tsw_estimates_start_where_their_documents_say() {
        // TSW3CM: RFC 2859 section 4.1, AVG_RATE = CTR (1 Mbit/s = 125 000 B/s), unless
        // `avg_rate` says otherwise.
        let tsw3 = "type = \"tsw3\"\ncommitted = \"1Mbps\"\npeak = \"2Mbps\"\nwindow = \"1s\"\n";
        assert_eq!(initial_estimate(tsw3), 125_000.0);
        assert_eq!(initial_estimate(&format!("{tsw3}avg_rate = \"0bps\"\n")), 0.0);
        assert_eq!(initial_estimate(&format!("{tsw3}avg_rate = \"1.5Mbps\"\n")), 187_500.0);
        // The two-colour tagger: seed 002's appendix, avg_rate = 0; ns-2's TSW2CM starts at
        // the target.
        let tsw = "type = \"tsw\"\ntarget = \"1Mbps\"\nwindow = \"1s\"\n";
        assert_eq!(initial_estimate(tsw), 0.0);
        assert_eq!(initial_estimate(&format!("{tsw}avg_rate = \"1Mbps\"\n")), 125_000.0);
    }
}
