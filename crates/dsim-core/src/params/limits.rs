//! Limits on what dsim reads, checked before anything large is built.
//!
//! A scenario file is text a user (or a sweep generating thousands of them) writes; a typo
//! must not turn into gigabytes or an hour. Each limit below is checked from a number -
//! the size of the text, the depth of its nesting, the number of nodes, links and flows it
//! declares (a `count` of a million is refused from its value, not by building a million
//! flows) - and refused with one [`ConfigError`] naming the key, the value and the limit,
//! and how to raise it where raising makes sense.
//!
//! The limits apply where a scenario is *validated* (`dsim validate`, `Scenario.validate`,
//! the Python front before it runs anything): a task handed to a worker has passed them
//! already and is not checked again, so that limits raised on the machine that runs the
//! front hold on every worker. The Python package reads the defaults from here
//! (`dsim._dsim.default_limits()`) and lets a user raise them (`dsim.set_limits`, the
//! `--max-*` flags, `DSIM_MAX_*` environment variables): docs/limits.md.
//!
//! TOML integers are 64-bit ("Arbitrary 64-bit signed integers should be accepted and
//! handled losslessly", TOML 1.0 "Integer"); a larger one is refused by the parser with
//! [`INTEGER_RULE`].

use serde::{Deserialize, Serialize};

use super::{ConfigError, KeyPath};

/// The limits, each a count (or bytes, or levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Bytes of a scenario or mechanism file (TOML text).
    pub file_bytes: u64,
    /// Levels of tables and arrays nested in one another (each key of a dotted key counts).
    pub depth: u64,
    /// Nodes: hosts and routers together.
    pub nodes: u64,
    /// Links (each makes two ports).
    pub links: u64,
    /// Flows once every `count` is expanded.
    pub flows: u64,
    /// Points of a sweep (the Python front expands and checks sweeps).
    pub points: u64,
    /// Bytes of a trace given to replay (CSV or pcap).
    pub trace_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // 100 times the largest shipped scenario file; a scenario of thousands of
            // flows writes them with `count`.
            file_bytes: 10_000_000,
            // The deepest shipped table is 6 levels (link.queue.classes[i].queue.precedence[j]).
            depth: 32,
            // The route table holds a next hop per pair of nodes: 25,000 nodes is 2.5 GB.
            nodes: 25_000,
            links: 50_000,
            // Each flow keeps its transport state and statistics (up to ~100 KB each with
            // its delay and jitter histograms): 20,000 flows is a few GB.
            flows: 20_000,
            // Every point is validated before the sweep starts, and makes one task per
            // replication.
            points: 10_000,
            // A pcap is held in memory with its records; pandas holds a CSV several times over.
            trace_bytes: 256_000_000,
        }
    }
}

/// The rule for an integer the TOML parser cannot hold.
pub const INTEGER_RULE: &str =
    "an integer lies in -9223372036854775808..9223372036854775807 (TOML integers are 64-bit)";

/// How a user raises the limit `name` (a field of [`Limits`]).
pub fn how_to_raise(name: &str) -> String {
    let flag = match name {
        "nodes" | "links" | "flows" | "points" => format!("--max-{name} N, "),
        _ => String::new(),
    };
    format!(
        "raise it with {flag}DSIM_MAX_{}=N or dsim.set_limits({name}=N)",
        name.to_uppercase()
    )
}

/// The error for `value` beyond the limit `name` of `limit`.
pub fn exceeded(path: KeyPath, value: impl ToString, what: &str, name: &str, limit: u64) -> ConfigError {
    ConfigError::new(
        path,
        Some(value.to_string()),
        format!("{what} at most {} ({})", grouped(limit), how_to_raise(name)),
    )
}

/// `n` with thousands separated by commas: 20,000.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Limits {
    /// The limits as JSON (`{"file_bytes": ..., ...}`), as the Python package reads them.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("limits serialize")
    }

    /// Limits from the JSON [`Limits::to_json`] writes (every key present).
    pub fn from_json(text: &str) -> Result<Limits, String> {
        serde_json::from_str(text).map_err(|e| format!("limits: {e}"))
    }

    /// The size of a TOML text.
    pub fn check_text(&self, text: &str) -> Result<(), ConfigError> {
        let bytes = text.len() as u64;
        if bytes > self.file_bytes {
            return Err(exceeded(
                KeyPath::root(),
                format!("{} bytes", grouped(bytes)),
                "a scenario file holds",
                "file_bytes",
                self.file_bytes,
            ));
        }
        Ok(())
    }

    /// The nesting of a parsed TOML document: the first value deeper than [`Limits::depth`].
    pub fn check_depth(&self, table: &toml::Table) -> Result<(), ConfigError> {
        match too_deep(table, &KeyPath::root(), self.depth) {
            None => Ok(()),
            Some(path) => Err(exceeded(
                path,
                format!("{} levels deep", self.depth + 1),
                "tables and arrays nest",
                "depth",
                self.depth,
            )),
        }
    }

    /// The counts a scenario declares, from their numbers, before anything is built: its
    /// `nodes` (hosts and routers), its `links` and the `count` of each `[[flow]]`.
    pub fn check_counts(&self, nodes: u64, links: u64, flow_counts: &[u32]) -> Result<(), ConfigError> {
        let root = KeyPath::root();
        if nodes > self.nodes {
            let value = format!("{} hosts and routers", grouped(nodes));
            return Err(exceeded(
                root.key("nodes"),
                value,
                "a scenario declares",
                "nodes",
                self.nodes,
            ));
        }
        if links > self.links {
            let value = format!("{} links", grouped(links));
            return Err(exceeded(
                root.key("link"),
                value,
                "a scenario declares",
                "links",
                self.links,
            ));
        }
        let mut flows = 0u64;
        for (i, &count) in flow_counts.iter().enumerate() {
            flows = flows.saturating_add(count as u64);
            if flows > self.flows {
                let value = if flows == count as u64 {
                    count.to_string()
                } else {
                    format!("{count} (flows up to here: {})", grouped(flows))
                };
                return Err(exceeded(
                    root.key("flow").index(i).key("count"),
                    value,
                    "a scenario holds (its counts together)",
                    "flows",
                    self.flows,
                ));
            }
        }
        Ok(())
    }
}

/// The path of the first value nested deeper than `limit` levels below `path`, if any.
/// The recursion is bounded by the TOML parser's own (it refuses documents nested more
/// than 80 levels in one value or one key).
fn too_deep(table: &toml::Table, path: &KeyPath, limit: u64) -> Option<KeyPath> {
    if limit == 0 {
        return Some(path.clone());
    }
    table
        .iter()
        .find_map(|(k, v)| value_too_deep(v, &path.key(k), limit - 1))
}

fn value_too_deep(value: &toml::Value, path: &KeyPath, limit: u64) -> Option<KeyPath> {
    match value {
        toml::Value::Table(t) => too_deep(t, path, limit),
        toml::Value::Array(items) => {
            if limit == 0 {
                return Some(path.clone());
            }
            items
                .iter()
                .enumerate()
                .find_map(|(i, v)| value_too_deep(v, &path.index(i), limit - 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn depth_counts_tables_arrays_and_dotted_keys() {
        let limits = Limits {
            depth: 3,
            ..Limits::default()
        };
        // a (1) -> b (2) -> [ (3) -> 1: three levels.
        assert!(limits.check_depth(&table("a.b = [1]")).is_ok());
        let e = limits.check_depth(&table("a.b = [[1]]")).unwrap_err();
        assert_eq!(e.path.to_string(), "a.b[0]");
        assert_eq!(e.value.as_deref(), Some("4 levels deep"));
        assert!(
            e.rule
                .starts_with("tables and arrays nest at most 3 (raise it with DSIM_MAX_DEPTH=N")
        );
        let e = limits.check_depth(&table("[x.y.z]\nw = 1")).unwrap_err();
        assert_eq!(e.path.to_string(), "x.y.z");
        let e = limits.check_depth(&table("x = [{ y = { z = 1 } }]")).unwrap_err();
        assert_eq!(e.path.to_string(), "x[0].y");
    }

    #[test]
    fn counts_are_refused_from_their_numbers() {
        let counts = [3, 4_000_000_000];
        let e = Limits::default().check_counts(2, 1, &counts).unwrap_err();
        assert_eq!(e.path.to_string(), "flow[1].count");
        assert_eq!(e.value.as_deref(), Some("4000000000 (flows up to here: 4,000,000,003)"));
        assert!(
            e.rule
                .starts_with("a scenario holds (its counts together) at most 20,000 (raise it with --max-flows N")
        );
        // Where each lowered limit is met first: (key path, value).
        let first_refused = |limits: Limits| {
            let e = limits.check_counts(2, 1, &counts).unwrap_err();
            (e.path.to_string(), e.value.unwrap_or_default())
        };
        let default = Limits::default();
        assert_eq!(
            first_refused(Limits { flows: 2, ..default }),
            ("flow[0].count".into(), "3".into())
        );
        assert_eq!(
            first_refused(Limits {
                nodes: 1,
                links: 0,
                ..default
            }),
            ("nodes".into(), "2 hosts and routers".into())
        );
        assert_eq!(
            first_refused(Limits { links: 0, ..default }),
            ("link".into(), "1 links".into())
        );
        assert!(Limits::default().check_counts(25_000, 50_000, &[20_000]).is_ok());
    }

    #[test]
    fn text_size_and_grouping() {
        let limits = Limits {
            file_bytes: 10,
            ..Limits::default()
        };
        assert!(limits.check_text("0123456789").is_ok());
        let e = limits.check_text("01234567890").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "11 bytes: a scenario file holds at most 10 ({})",
                how_to_raise("file_bytes")
            )
        );
        assert_eq!(
            [0, 999, 1_000, 25_000, 1_000_000].map(grouped),
            ["0", "999", "1,000", "25,000", "1,000,000"]
        );
    }
}
