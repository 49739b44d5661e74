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

/// Parses and validates a scenario written in TOML. Errors carry the key path, the value,
/// the rule and the line.
pub fn from_toml(text: &str) -> Result<Scenario, ConfigError> {
    let scenario = deserialize(text)?;
    validate(&scenario).map_err(|e| with_location(e, text))?;
    Ok(scenario)
}

/// Checks every rule by building the scenario once (cheap), without running it.
pub fn validate(sc: &Scenario) -> Result<(), ConfigError> {
    let sim = build(sc, sc.seed)?;
    record::plan(sc, &sim).map(|_| ())
}

/// The canonical TOML of a scenario: what `Scenario` serializes to, independent of the
/// formatting, comments and key order of the file it came from.
pub fn canonical_toml(sc: &Scenario) -> String {
    toml::to_string(sc).expect("a scenario always serializes")
}

/// First 16 hex digits of the SHA-256 of the canonical TOML: identifies an experiment.
pub fn scenario_hash(sc: &Scenario) -> String {
    let digest = Sha256::digest(canonical_toml(sc).as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

fn deserialize(text: &str) -> Result<Scenario, ConfigError> {
    deserialize_value(text)
}

/// Deserializes any schema type from TOML text, with located errors.
pub fn deserialize_value<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, ConfigError> {
    let de = toml::Deserializer::parse(text).map_err(|e| syntax_error(&e, text))?;
    // User-defined codepoint names must be known before any DSCP is read.
    let names = build_conditioner::dscp_names_in(text).map_err(|e| with_location(e, text))?;
    crate::packet::with_dscp_names(&names, || deserialize_checked(de, text))
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
    ConfigError {
        path: KeyPath::root(),
        value: None,
        rule: format!("not valid TOML: {}", e.message()),
        line: e.span().map(|s| line_at(text, s.start)),
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
