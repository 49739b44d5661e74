//! Hostile scenarios (issues 27 and 28): each is refused with one line naming the key, the
//! value and the rule, from numbers, before anything large is built; and a fuzz target for
//! the TOML-to-simulation path: the shipped scenarios mutated (deleted and repeated lines,
//! hostile numbers and units, truncation, garbage bytes), each read, validated and, when
//! accepted, built and run for a bounded number of events. Nothing may panic; an error is
//! one line. `make test` runs a few hundred cases; `make fuzz` runs the same target with
//! `PROPTEST_CASES` in the tens of thousands.

use std::path::PathBuf;
use std::sync::OnceLock;

use dsim_core::params::limits::{INTEGER_RULE, Limits};
use dsim_core::results::{self, RunInfo};
use dsim_core::scenario::{self, ConfigError};
use proptest::prelude::*;
use proptest::test_runner::Config;

/// Two hosts through a router; `APP` and `LINK` are replaced.
const BASE: &str = r#"
duration = "1s"
[nodes]
hosts = ["A", "B"]
routers = ["R"]
[[link]]
from = "A"
to = "R"
LINK
[[link]]
from = "R"
to = "B"
rate = "10Mbps"
delay = "1ms"
[[flow]]
name = "f"
src = "A"
dst = "B"
APP
"#;

fn scenario_with(link: &str, app: &str) -> String {
    BASE.replace("LINK", link).replace("APP", app)
}

fn refused(text: &str) -> ConfigError {
    match scenario::from_toml(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

/// The error's key path, value and the start of its rule.
fn assert_refused(text: &str, path: &str, value: &str, rule_starts: &str) {
    let e = refused(text);
    assert_eq!(e.path.to_string(), path, "{e}");
    assert_eq!(e.value.as_deref(), Some(value), "{e}");
    assert!(e.rule.starts_with(rule_starts), "{e}");
    assert!(!e.to_string().contains('\n'), "{e}");
}

const LINK: &str = "rate = \"10Mbps\"\ndelay = \"1ms\"";

#[test]
fn a_source_whose_spacing_rounds_to_zero_is_refused() {
    // Issue 28: 1000 B at 20,000 Gbit/s are 0.4 ns apart, 0 on dsim's clock. 1000 B take
    // at least 1 ns (rounded) up to 16,000 Gbit/s.
    let cbr = "app = { type = \"cbr\", rate = \"20000Gbps\", size = \"1000B\" }";
    assert_refused(
        &scenario_with(LINK, cbr),
        "flow[0].app.rate",
        "\"20000Gbps\"",
        "1000B packets would be sent 0 ns apart (time counts whole nanoseconds): the rate of 1000B packets is at most 16000Gbps",
    );
    let poisson = "app = { type = \"poisson\", rate = \"20000Gbps\", size = \"1000B\" }";
    assert_eq!(
        refused(&scenario_with(LINK, poisson)).path.to_string(),
        "flow[0].app.rate"
    );
    let fastest = "app = { type = \"cbr\", rate = \"16000Gbps\", size = \"1000B\" }";
    assert!(scenario::from_toml(&scenario_with(LINK, fastest)).is_ok());
}

#[test]
fn a_link_on_which_the_smallest_packet_takes_no_time_is_refused() {
    // Issue 28: TCP over a link of u64::MAX bit/s and no delay never advanced the clock.
    let fast = "rate = \"18446744073709551615bps\"\ndelay = \"0ms\"";
    for app in [
        "app = { type = \"ftp\" }",
        "app = { type = \"web\", response = { type = \"constant\", value = \"10KB\" }, think = { type = \"constant\", value = \"0s\" } }",
    ] {
        let e = refused(&scenario_with(fast, app));
        assert_eq!(e.path.to_string(), "link[0].rate", "{e}");
        assert!(
            e.rule.starts_with(
                "a 28B packet would take 0 ns to send (time counts whole nanoseconds): a link's rate is at most 448Gbps"
            ),
            "{e}"
        );
    }
    let fastest = "rate = \"448Gbps\"\ndelay = \"0ms\"";
    assert!(scenario::from_toml(&scenario_with(fastest, "app = { type = \"ftp\" }")).is_ok());
}

#[test]
fn an_empty_match_list_is_refused() {
    // Issue 28: `match = { flow = [] }` matched every flow.
    for key in ["flow", "src", "dst", "dscp"] {
        let text = scenario_with(LINK, "app = { type = \"cbr\", rate = \"1Mbps\", size = \"1000B\" }")
            + &format!(
                "[[conditioner]]\nat = \"A\"\nmatch = {{ {key} = [] }}\nmeter = {{ type = \"token_bucket\", rate = \"1Mbps\", depth = \"10KB\" }}\nred = \"drop\"\n"
            );
        assert_refused(
            &text,
            &format!("conditioner[0].match.{key}"),
            "[]",
            &format!("{key} must not be empty"),
        );
    }
}

#[test]
fn counts_are_refused_from_their_numbers_before_anything_is_built() {
    // Issue 27: a count of 10^6 grew to 3 GB during validation. Refused from the number.
    let cbr = "count = 1000000\napp = { type = \"cbr\", rate = \"1Mbps\", size = \"1000B\" }";
    let e = refused(&scenario_with(LINK, cbr));
    assert_eq!(
        (e.path.to_string(), e.value.as_deref()),
        ("flow[0].count".into(), Some("1000000"))
    );
    // Raised, the same count passes the limit (and is not built here).
    let sc: scenario::Scenario = scenario::deserialize_value(&scenario_with(LINK, cbr)).unwrap();
    let raised = Limits {
        flows: 1_000_000,
        ..Limits::default()
    };
    let nodes = (sc.nodes.hosts.len() + sc.nodes.routers.len()) as u64;
    let counts: Vec<u32> = sc.flows.iter().map(|f| f.count).collect();
    assert!(raised.check_counts(nodes, sc.links.len() as u64, &counts).is_ok());
}

#[test]
fn integers_beyond_64_bits_and_deep_nesting_are_refused_in_one_line() {
    let cbr = "app = { type = \"cbr\", rate = \"1Mbps\", size = \"1000B\" }";
    let big = format!("seed = {}\n{}", "9".repeat(5000), scenario_with(LINK, cbr));
    let e = refused(&big);
    assert_eq!((e.rule.as_str(), e.line), (INTEGER_RULE, Some(1)), "{e}");
    assert!(e.to_string().len() < 300, "{e}");
    let nested = |levels: usize| {
        let text = format!(
            "x = {}1{}\n{}",
            "[".repeat(levels),
            "]".repeat(levels),
            scenario_with(LINK, cbr)
        );
        refused(&text)
    };
    // 3,000 levels: the TOML parser's own limit, said as a rule.
    let e = nested(3000);
    assert!(e.rule.starts_with("tables and arrays nest at most"), "{e}");
    assert!(e.to_string().len() < 300, "{e}");
    // 40 levels: within the parser's limit, beyond dsim's (32).
    let e = nested(40);
    assert_eq!(e.path.to_string(), format!("x{}", "[0]".repeat(31)));
    // The value as written there: the nine innermost levels.
    assert_eq!(e.value.as_deref(), Some("[[[[[[[[[1]]]]]]]]]"));
    assert!(
        e.rule
            .starts_with("tables and arrays nest at most 32 (raise it with DSIM_MAX_DEPTH=N"),
        "{e}"
    );
    assert_eq!(e.line, Some(1));
}

#[test]
fn a_file_beyond_the_size_limit_is_refused_before_it_is_parsed() {
    let text = format!("# {}\n", "x".repeat(10_000_001));
    let e = refused(&text);
    assert_eq!(e.value.as_deref(), Some("10,000,004 bytes"));
    assert!(e.rule.starts_with("a scenario file holds at most 10,000,000"), "{e}");
}

// -- the fuzz target --------------------------------------------------------------------

/// The shipped scenarios, as text (read once).
fn shipped() -> &'static [(String, String)] {
    static SHIPPED: OnceLock<Vec<(String, String)>> = OnceLock::new();
    SHIPPED.get_or_init(read_shipped)
}

fn read_shipped() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/dsim/scenarios");
    let mut out = Vec::new();
    for family in std::fs::read_dir(&root).expect("shipped scenarios") {
        let family = family.unwrap().path();
        if !family.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&family).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "toml") {
                out.push((p.display().to_string(), std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    assert!(out.len() >= 20, "{} shipped scenarios", out.len());
    out
}

/// Numbers and texts a hostile or careless hand writes in place of a value.
const HOSTILE_VALUES: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "nan",
    "inf",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "\"\"",
    "\"0bps\"",
    "\"20000Gbps\"",
    "\"18446744073709551615bps\"",
    "\"0s\"",
    "\"100000h\"",
    "\"1e30s\"",
    "\"-5ms\"",
    "\"0B\"",
    "\"4294967296B\"",
    "\"1p\"",
    "\"10Mbps\"",
    "\"EF\"",
    "\"AF11\"",
    "64",
    "[]",
    "{}",
    "[[[[1]]]]",
    "true",
    "\"\u{0}\"",
    "1979-05-27T07:32:00Z",
];

/// One mutation of a scenario's text.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    RepeatLine(usize),
    SwapLines(usize, usize),
    /// Replace the value of the `n`th `key = value` line.
    ReplaceValue(usize, &'static str),
    /// Scale the first number of a line by a power of ten.
    Scale(usize, i32),
    Truncate(usize),
    InsertBytes(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::RepeatLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<usize>(), proptest::sample::select(HOSTILE_VALUES)).prop_map(|(n, v)| Mutation::ReplaceValue(n, v)),
        (any::<usize>(), -12i32..12).prop_map(|(n, e)| Mutation::Scale(n, e)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..8)).prop_map(|(at, b)| Mutation::InsertBytes(at, b)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new()); // a text truncated to nothing
    }
    let n = lines.len();
    match m {
        Mutation::DeleteLine(i) => {
            lines.remove(i % n);
        }
        Mutation::RepeatLine(i) => {
            let l = lines[i % n].clone();
            lines.insert(i % n, l);
        }
        Mutation::SwapLines(a, b) => lines.swap(a % n, b % n),
        Mutation::ReplaceValue(i, v) => {
            let assigns: Vec<usize> = (0..lines.len()).filter(|&k| lines[k].contains(" = ")).collect();
            if let Some(&k) = assigns.get(i % assigns.len().max(1)) {
                let key = lines[k].split(" = ").next().unwrap().to_string();
                lines[k] = format!("{key} = {v}");
            }
        }
        Mutation::Scale(i, e) => {
            let l = &mut lines[i % n];
            if let Some(start) = l.find(|c: char| c.is_ascii_digit()) {
                let end = l[start..]
                    .find(|c: char| !c.is_ascii_digit() && c != '.')
                    .map_or(l.len(), |e| start + e);
                if let Ok(x) = l[start..end].parse::<f64>() {
                    let scaled = format!("{}", x * 10f64.powi(*e));
                    l.replace_range(start..end, &scaled);
                }
            }
        }
        Mutation::Truncate(at) => {
            let joined = lines.join("\n");
            let mut cut = at % (joined.len() + 1);
            while !joined.is_char_boundary(cut) {
                cut -= 1;
            }
            return joined[..cut].to_string();
        }
        Mutation::InsertBytes(at, bytes) => {
            let mut joined = lines.join("\n").into_bytes();
            let at = at % (joined.len() + 1);
            joined.splice(at..at, bytes.iter().copied());
            // A scenario is text: invalid UTF-8 is refused by whoever reads the file.
            return String::from_utf8_lossy(&joined).into_owned();
        }
    }
    lines.join("\n")
}

/// Events an accepted mutant runs for: enough to pass the start of every flow in most
/// scenarios, few enough for hundreds of cases a second.
const EVENTS: u64 = 20_000;

/// Reads, validates and (when accepted) builds and runs `text` for a bounded number of
/// events. Returns whether it was accepted; panics on anything but a one-line error.
fn read_and_run(text: &str) -> bool {
    let (sc, estimate) = match scenario::from_toml_within(text, &Limits::default()) {
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n') && line.len() < 1000, "not one short line: {line}");
            return false;
        }
        Ok(x) => x,
    };
    assert!(estimate.events >= estimate.packets);
    let mut sim = scenario::build(&sc, sc.seed).expect("validated, so it builds");
    if sim.run_until_within(sim.end, EVENTS) {
        sim.finish();
        let info = RunInfo {
            replication: 0,
            seed: sc.seed,
            base_seed: sc.seed,
            scenario_hash: scenario::scenario_hash(&sc),
            wall_s: 0.0,
        };
        let _ = results::collect(&sim, &info);
    }
    true
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(300)
}

#[test]
fn every_shipped_scenario_is_accepted() {
    for (path, text) in shipped() {
        assert!(read_and_run(text), "{path}");
    }
}

proptest! {
    #![proptest_config(Config {
        cases: cases(),
        ..Config::default()
    })]

    /// Up to three mutations of a shipped scenario: a one-line error or a run, never a panic.
    #[test]
    fn mutated_scenarios_end_in_one_line_or_a_run(
        pick in any::<prop::sample::Index>(),
        mutations in proptest::collection::vec(mutation(), 1..4),
    ) {
        let all = shipped();
        let (_, text) = &all[pick.index(all.len())];
        let mutated = mutations.iter().fold(text.clone(), |t, m| apply(&t, m));
        read_and_run(&mutated);
    }
}
