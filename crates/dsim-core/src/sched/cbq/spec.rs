//! The configuration of a `cbq` scheduler (plain data) and its checks: the class tree, the
//! shares, the estimator's settings, and what ns-2 takes by default where Floyd and
//! Jacobson leave a value open.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::estimator::{EstimatorParams, auto_maxidle};
use super::{Cbq, CbqParams, Node};
use crate::params::{ConfigError, KeyPath, Params, render};
use crate::sched::classes::ClassQueues;
use crate::time::{Bytes, Duration, Fraction, Rate};

/// How the classes of one priority take turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum CbqScheduler {
    /// Packet-by-packet round robin: one packet per turn (ns-2 `Queue/CBQ`).
    Prr,
    /// Weighted round robin: each turn a class sends while its bytes for the round last,
    /// share x M bytes with M = classes x maxpkt / sum of their shares (ns-2
    /// `Queue/CBQ/WRR`).
    Wrr,
}

/// When an overlimit class may borrow from an ancestor that is not overlimit (Floyd and
/// Jacobson's link-sharing guidelines).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum Guideline {
    /// From any underlimit ancestor (ns-2's default, `algorithm 0`).
    #[default]
    AncestorsOnly,
    /// From an underlimit ancestor no higher than the Top-level variable, which arrivals
    /// and departures move (ns-2 `algorithm 1`).
    TopLevel,
    /// From a not-overlimit ancestor at level i only if no class below level i is
    /// unsatisfied (ns-2 `algorithm 2`).
    Formal,
}

/// How the link starts again after the scheduler left it idle because every waiting class
/// was overlimit and could not borrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Params)]
#[serde(rename_all = "snake_case")]
pub enum Restart {
    /// At the first instant a waiting class, or an ancestor it may borrow from, stops being
    /// overlimit (the delay action's timer: ALTQ `rmc_restart`).
    #[default]
    Timer,
    /// At the next packet arrival only (ns-2, which has no timer).
    Arrival,
}

fn default_maxpkt() -> Bytes {
    Bytes(1024)
}
fn default_ewma_log() -> u32 {
    4
}
fn default_true() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

/// `type = "cbq"`: class-based queueing (Floyd and Jacobson 1995, as ns-2 implements it):
/// a tree of classes with link shares under the link, strict priority between leaf
/// classes and a round robin within one priority, and an estimator that holds a class over
/// its share unless it may borrow from an ancestor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Params)]
#[serde(deny_unknown_fields)]
#[param(
    document = "S. Floyd, V. Jacobson, Link-sharing and Resource Management Models for Packet Networks, 1995; ns-2 queue/cbq.cc"
)]
pub struct CbqSpec {
    /// The round robin among the leaf classes of one priority: "prr", a packet per turn
    /// (ns-2 `Queue/CBQ`), or "wrr", bytes per round by share (ns-2 `Queue/CBQ/WRR`).
    pub scheduler: CbqScheduler,
    /// The link-sharing guideline that decides when an overlimit class may borrow:
    /// "ancestors_only" (ns-2's default), "top_level" or "formal" (Floyd and Jacobson's).
    #[serde(default)]
    pub guideline: Guideline,
    /// The largest packet: sets the WRR round (classes x maxpkt bytes per priority) and
    /// the default maxidle (ns-2 `maxpkt_`, default 1024 B).
    #[serde(default = "default_maxpkt")]
    #[param(range = "[1B, 65535B]")]
    pub maxpkt: Bytes,
    /// How an idle link with only regulated classes waiting starts again: "timer", when
    /// the first of them may send (the LBL code's and ALTQ's delay timer), or "arrival",
    /// at the next packet's arrival (ns-2, which has no timer).
    #[serde(default)]
    pub restart: Restart,
    /// When no class may send, the first waiting class allowed to borrow sends anyway,
    /// without its estimators being charged (ns-2 always; ALTQ's `efficient` flag).
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub efficient: bool,
    /// The estimator's EWMA weight is 2^-ewma_log (ns-2: 1/16).
    #[serde(default = "default_ewma_log")]
    #[param(range = "[1, 16]")]
    pub ewma_log: u32,
    /// The interior classes of the tree: named, with a share, no queue.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interior: Vec<CbqInterior>,
    /// The leaf classes, each with its codepoints and queue; the rows of the `queues`
    /// table, in this order, which is also the round-robin order within a priority.
    #[param(nonempty)]
    pub classes: Vec<CbqClass>,
}

/// Declares a table of CBQ class keys: the table's own fields, then the keys every class
/// of the tree has (share, parent, borrowing, the estimator's bounds), written here once.
/// `$wrap` is the macro that emits the struct (`leaf_table` for a leaf, which adds `dscp`,
/// `default` and `queue`; `plain_table` for an interior class).
macro_rules! cbq_class_keys {
    ($wrap:ident { $(#[$attr:meta])* pub struct $name:ident { $($fields:tt)* } }) => {
        $wrap! {
            $(#[$attr])*
            pub struct $name {
                $($fields)*
                /// The class's allocated share of the link (ns-2 `allot`): its rate is
                /// share x the link rate. The shares of a class's children sum to at most
                /// its own (the link's is 1).
                #[param(range = "(0, 1]")]
                pub share: Fraction,
                /// The interior class this one belongs to; absent: the link (the root).
                #[serde(default, skip_serializing_if = "Option::is_none")]
                #[param(nonempty)]
                pub parent: Option<String>,
                /// May borrow from its ancestors when over its share (ns-2 `okborrow_`,
                /// default true); false: bounded at its share.
                #[serde(default = "default_true", skip_serializing_if = "is_true")]
                pub borrow: bool,
                /// The credit of idle time a class may keep (its largest avgidle).
                /// Absent: ns-2's `auto`, maxpkt/link x max((1/share - 1)(1 - g^n)/g^n,
                /// 1 - g) with g = 1 - 2^-ewma_log and n = 8 x priority (0 for an
                /// interior class).
                #[serde(default, skip_serializing_if = "Option::is_none")]
                #[param(range = "[0, inf)")]
                pub maxidle: Option<Duration>,
                /// avgidle never falls below -minidle (ALTQ); absent: no bound (ns-2).
                #[serde(default, skip_serializing_if = "Option::is_none")]
                #[param(range = "[0, inf)")]
                pub minidle: Option<Duration>,
                /// Added to an overlimit class's wait by the delay action (ns-2
                /// `extradelay_`, default 0).
                #[serde(default)]
                #[param(range = "[0, inf)")]
                pub extradelay: Duration,
            }
        }

        impl $name {
            /// The class's keys of the tree, at `path`, with its name if it is an interior
            /// class and its priority (0 for an interior class).
            fn tree_keys<'a>(&'a self, path: KeyPath, name: Option<&'a str>, priority: u8) -> TreeKeys<'a> {
                TreeKeys {
                    path,
                    name,
                    share: self.share.0,
                    parent: self.parent.as_deref(),
                    borrow: self.borrow,
                    maxidle: self.maxidle,
                    minidle: self.minidle,
                    extradelay: self.extradelay,
                    priority,
                }
            }
        }
    };
}

/// Emits a struct as written.
macro_rules! plain_table {
    ($($item:tt)*) => { $($item)* };
}

/// Emits a leaf class table: the struct with the keys every scheduler's class has.
macro_rules! leaf_table {
    ($($item:tt)*) => { crate::class_table! { $($item)* } };
}

cbq_class_keys! {
    leaf_table {
        /// One leaf class of a `cbq` scheduler: codepoints, a queue, a priority and a share.
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Params)]
        #[serde(deny_unknown_fields)]
        pub struct CbqClass {
            /// Strict priority between leaf classes: 0 is served first (ns-2 `priority_`,
            /// default 0, at most 9).
            #[serde(default)]
            #[param(range = "[0, 9]")]
            pub priority: u8,
        }
    }
}

cbq_class_keys! {
    plain_table {
        /// An interior class of a `cbq` scheduler: a share of the link that its children
        /// divide and may borrow from; it holds no queue.
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Params)]
        #[serde(deny_unknown_fields)]
        pub struct CbqInterior {
            /// The name its children give as `parent`.
            #[param(nonempty)]
            pub name: String,
        }
    }
}

/// The keys every class of the tree has, leaf or interior.
struct TreeKeys<'a> {
    path: KeyPath,
    /// An interior class's name.
    name: Option<&'a str>,
    share: f64,
    parent: Option<&'a str>,
    borrow: bool,
    maxidle: Option<Duration>,
    minidle: Option<Duration>,
    extradelay: Duration,
    priority: u8,
}

impl CbqSpec {
    /// The scheduler this table declares, on a link of `rate`.
    pub fn qdisc(&self, rate: Rate, path: &KeyPath) -> Result<Cbq, ConfigError> {
        self.check(path)?;
        let classes = ClassQueues::build(&self.classes, rate, &path.key("classes"))?;
        let keys = self.tree_keys(path);
        let parents = self.parents(&keys, path)?;
        check_shares(&keys, &parents)?;
        let levels = levels(&parents, keys.len());
        // The root (the link) comes after the leaves and the interior classes.
        let root = keys.len();
        let nodes = keys
            .iter()
            .zip(&parents)
            .zip(&levels)
            .map(|((k, &parent), &level)| self.node(k, Some(parent.unwrap_or(root)), level, rate))
            .collect::<Vec<_>>();
        let link = TreeKeys {
            path: path.clone(),
            name: None,
            share: 1.0,
            parent: None,
            borrow: false,
            maxidle: None,
            minidle: None,
            extradelay: Duration(0),
            priority: 0,
        };
        let top = 1 + levels.iter().copied().max().unwrap_or(0);
        let mut nodes = nodes;
        nodes.push(self.node(&link, None, top, rate));
        let params = CbqParams {
            scheduler: self.scheduler,
            guideline: self.guideline,
            restart: self.restart,
            efficient: self.efficient,
            leaves: self.classes.len(),
        };
        Ok(Cbq::new(classes, nodes, params, self.wrr_allotments()))
    }

    /// Every class's tree keys: the leaves, then the interior classes.
    fn tree_keys(&self, path: &KeyPath) -> Vec<TreeKeys<'_>> {
        let leaves =
            (self.classes.iter().enumerate()).map(|(i, c)| c.tree_keys(path.key("classes").index(i), None, c.priority));
        let interior = (self.interior.iter().enumerate())
            .map(|(i, c)| c.tree_keys(path.key("interior").index(i), Some(c.name.as_str()), 0));
        leaves.chain(interior).collect()
    }

    /// Each class's parent as an index among the classes (leaves, then interior), None for
    /// the link; refuses unknown and repeated names, cycles and childless interior classes.
    fn parents(&self, keys: &[TreeKeys], path: &KeyPath) -> Result<Vec<Option<usize>>, ConfigError> {
        let leaves = self.classes.len();
        let mut by_name = HashMap::new();
        for (j, c) in self.interior.iter().enumerate() {
            if let Some(other) = by_name.insert(c.name.as_str(), leaves + j) {
                return Err(ConfigError::new(
                    path.key("interior").index(j).key("name"),
                    render(&c.name),
                    format!("interior[{}] has this name already; names are unique", other - leaves),
                ));
            }
        }
        let mut parents = Vec::with_capacity(keys.len());
        for k in keys {
            let parent = match k.parent {
                None => None,
                Some(name) => Some(*by_name.get(name).ok_or_else(|| {
                    ConfigError::new(
                        k.path.key("parent"),
                        render(name),
                        "no interior class has this name; a parent is an interior class (interior = [{ name = ... }]), or absent for the link",
                    )
                })?),
            };
            parents.push(parent);
        }
        for (j, k) in keys.iter().enumerate().skip(leaves) {
            if let Some(cycle) = cycle_from(j, &parents, keys) {
                return Err(ConfigError::new(
                    k.path.key("parent"),
                    k.parent.and_then(render),
                    format!("the interior classes form a cycle ({cycle}); the tree must lead up to the link"),
                ));
            }
            if !parents.contains(&Some(j)) {
                return Err(ConfigError::new(
                    k.path.clone(),
                    None,
                    format!(
                        "no class has parent = \"{}\"; an interior class has at least one child",
                        self.interior[j - leaves].name
                    ),
                ));
            }
        }
        Ok(parents)
    }

    /// The plain data of one class of the tree.
    fn node(&self, k: &TreeKeys, parent: Option<usize>, level: u8, link: Rate) -> Node {
        let maxidle = k.maxidle.map_or_else(
            || auto_maxidle(k.share, k.priority, self.ewma_log, self.maxpkt.0, link),
            |d| d.0 as i64,
        );
        Node {
            parent,
            borrow: k.borrow,
            level,
            priority: k.priority,
            estimator: EstimatorParams {
                link,
                rate: Rate((k.share * link.0 as f64).round() as u64),
                k: self.ewma_log,
                maxidle,
                minidle: k.minidle.map(|d| d.0 as i64),
                extradelay: k.extradelay.0 as i64,
            },
        }
    }

    /// The bytes each leaf adds to its WRR allowance per round (ns-2
    /// `WRR_CBQueue::setM` and `deque`): with n leaves of shares summing to S at its
    /// priority, M = n maxpkt / S and the allotment is share x M, truncated.
    fn wrr_allotments(&self) -> Vec<i64> {
        self.classes
            .iter()
            .map(|c| {
                let peers = self.classes.iter().filter(|d| d.priority == c.priority);
                let (n, sum) = peers.fold((0u64, 0.0), |(n, s), d| (n + 1, s + d.share.0));
                let m = (n * self.maxpkt.0) as f64 / sum;
                (c.share.0 * m) as i64
            })
            .collect()
    }
}

/// The cycle class `start` (an interior class) is on, written "a -> b -> a", if any.
fn cycle_from(start: usize, parents: &[Option<usize>], keys: &[TreeKeys]) -> Option<String> {
    let mut chain = vec![start];
    let mut at = parents[start];
    while let Some(p) = at {
        if p == start {
            chain.push(start);
            let names: Vec<String> = chain.iter().map(|&i| keys[i].label()).collect();
            return Some(names.join(" -> "));
        }
        if chain.contains(&p) {
            return None; // a cycle above, reported from one of its own classes
        }
        chain.push(p);
        at = parents[p];
    }
    None
}

impl TreeKeys<'_> {
    /// How a class is named in a message: an interior class by its name, a leaf by its
    /// key path.
    fn label(&self) -> String {
        self.name.map_or_else(|| self.path.to_string(), |n| format!("\"{n}\""))
    }
}

/// The children's shares of every class (and of the link) sum to at most its own share.
fn check_shares(keys: &[TreeKeys], parents: &[Option<usize>]) -> Result<(), ConfigError> {
    let mut sums: HashMap<Option<usize>, f64> = HashMap::new();
    for (k, &p) in keys.iter().zip(parents) {
        let sum = sums.entry(p).or_default();
        *sum += k.share;
        let limit = p.map_or(1.0, |p| keys[p].share);
        // A tolerance for the rounding of decimal shares (0.1 + 0.2 + 0.7).
        if *sum > limit + 1e-9 {
            let whose = p.map_or("the link".to_string(), |p| {
                format!("interior class {}", keys[p].label())
            });
            return Err(ConfigError::new(
                k.path.key("share"),
                render(&k.share),
                format!(
                    "with this class the shares of the children of {whose} sum to {sum:.6}, above its share {limit}"
                ),
            ));
        }
    }
    Ok(())
}

/// Each class's level: a leaf is at 1, an interior class one above its highest child.
fn levels(parents: &[Option<usize>], n: usize) -> Vec<u8> {
    let mut level = vec![1u8; n];
    // Leaves first: raising each ancestor chain from every class settles the levels (the
    // tree has no cycle, so a chain ends at the link).
    for start in 0..n {
        let (mut child, mut at) = (start, parents[start]);
        while let Some(p) = at {
            if level[p] > level[child] {
                break;
            }
            level[p] = level[child] + 1;
            (child, at) = (p, parents[p]);
        }
    }
    level
}
