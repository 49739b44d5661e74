//! Configuration errors: the key path, the value, the rule, and the line.

use std::fmt;

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A path to a value in a scenario, shown the way it reads in the file: `flow[2].app.rate`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyPath(pub Vec<Seg>);

impl KeyPath {
    pub fn root() -> Self {
        KeyPath(Vec::new())
    }
    pub fn key(&self, k: &str) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Key(k.to_string()));
        p
    }
    pub fn index(&self, i: usize) -> Self {
        let mut p = self.clone();
        p.0.push(Seg::Index(i));
        p
    }
    /// Parses the display form back (`flow[2].app.rate`).
    pub fn parse(text: &str) -> Self {
        let mut segs = Vec::new();
        for part in text.split('.').filter(|p| !p.is_empty()) {
            let (name, rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
            if !name.is_empty() {
                segs.push(Seg::Key(name.to_string()));
            }
            for idx in rest.split('[') {
                if let Ok(i) = idx.trim_end_matches(']').parse() {
                    segs.push(Seg::Index(i));
                }
            }
        }
        KeyPath(segs)
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for s in &self.0 {
            match s {
                Seg::Key(k) if first => f.write_str(k)?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

/// A configuration (a scenario, a mechanism's table given to replay) refused before anything
/// runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Key path of the offending value (empty for a file-level error such as bad TOML).
    pub path: KeyPath,
    /// The offending value as written, when there is one.
    pub value: Option<String>,
    /// What is wrong: the rule the value breaks.
    pub rule: String,
    /// 1-based line in the scenario file, when the error comes from a file.
    pub line: Option<usize>,
}

impl ConfigError {
    pub fn new(path: KeyPath, value: impl Into<Option<String>>, rule: impl Into<String>) -> Self {
        ConfigError {
            path,
            value: value.into(),
            rule: rule.into(),
            line: None,
        }
    }
}

impl ConfigError {
    /// The value as a message shows it: a value of thousands of characters (a 5,000-digit
    /// number, a generated list) by its beginning and its length, so that the error stays
    /// one line.
    pub fn shown_value(&self) -> Option<String> {
        self.value.as_deref().map(shorten)
    }
}

/// Names a message lists at most (a topology of thousands of nodes keeps its errors short).
const LISTED_NAMES: usize = 12;

/// `names`, sorted and comma-separated: the first [`LISTED_NAMES`] and how many there are
/// when there are more.
pub fn some_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    if names.len() <= LISTED_NAMES {
        return names.join(", ");
    }
    format!("{}, ... ({} in all)", names[..LISTED_NAMES].join(", "), names.len())
}

/// Values longer than this many characters are shown by their beginning.
const SHOWN_CHARS: usize = 60;

/// `text`, or its first characters and its length when it is longer than [`SHOWN_CHARS`].
pub fn shorten(text: &str) -> String {
    let n = text.chars().count();
    if n <= SHOWN_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(SHOWN_CHARS / 2).collect();
    format!("{head}... ({n} characters)")
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.line {
            write!(f, "line {l}: ")?;
        }
        let path = self.path.to_string();
        match (self.shown_value(), path.is_empty()) {
            (Some(v), false) => write!(f, "{path} = {v}: {}", self.rule),
            (None, false) => write!(f, "{path}: {}", self.rule),
            (Some(v), true) => write!(f, "{v}: {}", self.rule),
            (None, true) => f.write_str(&self.rule),
        }
    }
}

impl std::error::Error for ConfigError {}
