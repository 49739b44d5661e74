//! Scenario files: the schema, its validation, and the builder of runnable simulations.

pub mod build;
pub mod build_conditioner;
pub mod capture;
pub mod conditioner;
pub mod locate;
pub mod record;
pub mod schema;

pub mod transport;

pub use crate::params::{ConfigError, KeyPath, Seg};
pub use build::build;
pub use schema::Scenario;

use sha2::{Digest, Sha256};

use crate::params::limits::Limits;
use crate::sim::estimate::Estimate;

/// Parses and validates a scenario written in TOML, within the default [`Limits`]. Errors
/// carry the key path, the value, the rule and the line.
pub fn from_toml(text: &str) -> Result<Scenario, ConfigError> {
    from_toml_within(text, &Limits::default()).map(|(sc, _)| sc)
}

/// Parses and validates a scenario within `limits`, and estimates the work of one run.
pub fn from_toml_within(text: &str, limits: &Limits) -> Result<(Scenario, Estimate), ConfigError> {
    // Parsed twice, not three times: the checked table gives the codepoint names, the
    // text (its spans locate errors) the scenario.
    let names = build_conditioner::dscp_names_of(&check_toml(text, limits)?).map_err(|e| with_location(e, text))?;
    let scenario = deserialize_named(text, &names)?;
    let estimate = validate_within(&scenario, limits).map_err(|e| with_location(e, text))?;
    Ok((scenario, estimate))
}

/// Checks every rule by building the scenario once (cheap), without running it.
pub fn validate(sc: &Scenario) -> Result<(), ConfigError> {
    validate_within(sc, &Limits::default()).map(|_| ())
}

/// [`validate`] within `limits` (counts checked from their numbers before anything is
/// built); returns the estimated work of one run.
pub fn validate_within(sc: &Scenario, limits: &Limits) -> Result<Estimate, ConfigError> {
    let nodes = (sc.nodes.hosts.len() + sc.nodes.routers.len()) as u64;
    let counts: Vec<u32> = sc.flows.iter().map(|f| f.count).collect();
    limits.check_counts(nodes, sc.links.len() as u64, &counts)?;
    let sim = build(sc, sc.seed)?;
    build::check_traffic(sc, &KeyPath::root())?;
    record::plan(sc, &sim)?;
    Ok(crate::sim::estimate::estimate(&sim))
}

/// Checks TOML text before anything reads it as a scenario: its size, its syntax (64-bit
/// integers included) and the depth of its nesting, within `limits`.
pub fn check_toml(text: &str, limits: &Limits) -> Result<toml::Table, ConfigError> {
    limits.check_text(text)?;
    let table: toml::Table = toml::from_str(text).map_err(|e| syntax_error(&e, text))?;
    limits.check_depth(&table).map_err(|e| with_location(e, text))?;
    Ok(table)
}

/// The canonical TOML of a scenario: what `Scenario` serializes to, independent of the
/// formatting, comments and key order of the file it came from.
pub fn canonical_toml(sc: &Scenario) -> String {
    use serde::Serialize;
    // The text of `toml::to_string`, written out through the buffer's `Display`: its
    // `into_string` inserts each table's text into the output one at a time, quadratic
    // in the tables (2.7 s for the 10,000 flows of `dsim bench --scale`, 6 MB, at every
    // replication's hash); `Display` writes the same pieces in order.
    let mut out = toml::ser::Buffer::new();
    sc.serialize(toml::ser::Serializer::new(&mut out))
        .expect("a scenario always serializes");
    out.to_string()
}

/// First 16 hex digits of the SHA-256 of the canonical TOML: identifies an experiment.
pub fn scenario_hash(sc: &Scenario) -> String {
    let digest = Sha256::digest(canonical_toml(sc).as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Deserializes any schema type from TOML text, with located errors.
pub fn deserialize_value<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, ConfigError> {
    // User-defined codepoint names must be known before any DSCP is read.
    let names = build_conditioner::dscp_names_in(text).map_err(|e| with_location(e, text))?;
    deserialize_named(text, &names)
}

/// Deserializes TOML text with the codepoint names `names` known.
fn deserialize_named<T: serde::de::DeserializeOwned>(text: &str, names: &[(String, u8)]) -> Result<T, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| syntax_error(&e, text))?;
    crate::packet::with_dscp_names(names, || deserialize_checked(de, text))
}

fn deserialize_checked<T: serde::de::DeserializeOwned>(
    de: toml::Deserializer<'_>,
    text: &str,
) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(de).map_err(|e| {
        let mut path = KeyPath::parse(&e.path().to_string());
        let inner = e.into_inner();
        let (nested, message) = crate::params::tagged::split_message(inner.message());
        path.0.extend(KeyPath::parse(nested).0);
        let mut err = ConfigError::new(path, None, message.to_string());
        if err.line.is_none() {
            err.line = inner.span().map(|s| line_at(text, s.start));
        }
        with_location(err, text)
    })
}

fn syntax_error(e: &toml::de::Error, text: &str) -> ConfigError {
    let line = e.span().map(|s| line_at(text, s.start));
    if let Some(rule) = parser_limit_rule(e.message()) {
        // The parser's own limits, said in the words of the rule; the value is the integer
        // (shortened when shown), not the bracket where the nesting went too deep.
        let value = (rule == crate::params::limits::INTEGER_RULE)
            .then(|| e.span().map(|s| text[s].to_string()))
            .flatten();
        return ConfigError {
            path: KeyPath::root(),
            value,
            rule: rule.to_string(),
            line,
        };
    }
    ConfigError {
        path: KeyPath::root(),
        value: None,
        rule: format!("not valid TOML: {}", e.message()),
        line,
    }
}

/// The rule behind a limit of the TOML parser's, from its message.
fn parser_limit_rule(message: &str) -> Option<&'static str> {
    if message.contains("integer number overflowed") {
        Some(crate::params::limits::INTEGER_RULE)
    } else if message.contains("recursion") {
        Some("tables and arrays nest at most 80 levels in one value or one key (the TOML parser's limit)")
    } else {
        None
    }
}

fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Fills in the line and the value as the file writes it, where the path leads to them.
fn with_location(mut e: ConfigError, text: &str) -> ConfigError {
    let (line, value) = locate::locate(text, &e.path);
    if line.is_some() {
        e.line = line;
    }
    if value.is_some() {
        e.value = value;
    }
    e
}
