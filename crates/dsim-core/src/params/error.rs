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

/// `text`, or its first characters and its length when it is longer than [`SHOWN_CHARS`];
/// on one line ([`one_line`]).
pub fn shorten(text: &str) -> String {
    one_line(&cut(text, SHOWN_CHARS, SHOWN_CHARS / 2))
}

/// `text` with every control character and line separator escaped (`\n`, `\u{2028}`): a
/// value or a rule quoting what a user wrote keeps its message on one line.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Rules are a sentence or two; one that quotes a user's text at length (serde naming an
/// unknown key of thousands of characters) is cut at this many characters.
const LONGEST_RULE: usize = 400;

/// `text` if it has at most `most` characters, else its first `keep` and its length.
fn cut(text: &str, most: usize, keep: usize) -> String {
    let n = text.chars().count();
    if n <= most {
        return text.to_string();
    }
    let head: String = text.chars().take(keep).collect();
    format!("{head}... ({n} characters)")
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = match self.line {
            Some(l) => format!("line {l}: "),
            None => String::new(),
        };
        let path = self.path.to_string();
        let rule = &cut(&self.rule, LONGEST_RULE, LONGEST_RULE);
        out += &match (self.shown_value(), path.is_empty()) {
            (Some(v), false) => format!("{path} = {v}: {rule}"),
            (None, false) => format!("{path}: {rule}"),
            (Some(v), true) => format!("{v}: {rule}"),
            (None, true) => rule.clone(),
        };
        f.write_str(&one_line(&out))
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_one_short_line() {
        let e = ConfigError::new(
            KeyPath::root().key("link").index(1).key("delay"),
            Some("\"2\nx\u{2028}y\"".into()),
            "duration \"2\nx\" has an unknown unit",
        );
        assert_eq!(
            e.to_string(),
            "link[1].delay = \"2\\nx\\u{2028}y\": duration \"2\\nx\" has an unknown unit"
        );
        let long = "9".repeat(5000);
        assert_eq!(shorten(&long), format!("{}... (5000 characters)", &long[..30]));
        assert_eq!(shorten("µs\tok"), "µs\\tok");
        let e = ConfigError::new(KeyPath::root(), None, format!("unknown field `{}`", "k".repeat(1000)));
        assert_eq!(
            e.to_string(),
            format!("unknown field `{}... (1016 characters)", "k".repeat(385))
        );
        let names: Vec<String> = (0..20).map(|i| format!("n{i:02}")).collect();
        assert_eq!(
            some_of(names.iter().rev().map(String::as_str)),
            "n00, n01, n02, n03, n04, n05, n06, n07, n08, n09, n10, n11, ... (20 in all)"
        );
        assert_eq!(some_of(["b", "a"]), "a, b");
    }
}
