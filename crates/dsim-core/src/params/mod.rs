//! Parameters declared once: what every key of a configuration table is, and the checks
//! its declaration implies.
//!
//! A mechanism's configuration is a plain struct next to the mechanism, read by serde and
//! annotated for [`Params`] (`#[derive(Params)]`, see the `dsim-derive` crate): the key and
//! its aliases, the unit (from the field's type, [`Value::kind`]), required or its default,
//! the allowed range, the help (the doc comment) and the section of the document. From
//! that declaration come
//! - the checks of [`Params::check`], run when the mechanism is built (its constructor adds
//!   the rules that tie several keys together, e.g. RED's `min_th < max_th`);
//! - the schema ([`schema::catalog`]) that the Python builders, their docstrings and the
//!   parameter tables of the documentation are generated from (`scripts/gen_params.py`), so
//!   that none of them declares a parameter again.
//!
//! Errors ([`ConfigError`]) name the key path, the value as written and the rule.

mod error;
pub mod limits;
pub mod schema;
pub mod tagged;

pub use dsim_derive::Params;
pub use error::{ConfigError, KeyPath, Seg, one_line, shorten, some_of};

use std::collections::BTreeMap;

use serde::Serialize;

use crate::packet::Dscp;
use crate::time::{Bytes, Duration, Fraction, Limit, Rate};

/// A configuration table: its keys and the checks they declare.
pub trait Params {
    /// The table's keys, in declaration order.
    fn table() -> Table;
    /// Checks each key's declared range and rules, and the tables inside it; `path` is the
    /// table's own key path (errors name the key below it).
    fn check(&self, path: &KeyPath) -> Result<(), ConfigError>;
}

/// What a key's value is: implemented by every type a configuration key can have.
pub trait Value {
    fn kind() -> Kind;
    /// Checks the tables inside the value (nothing for a plain value).
    fn check_nested(&self, _path: &KeyPath) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// The kind of value a key takes, with its unit.
#[derive(Clone, Copy)]
pub enum Kind {
    /// A bit rate with its unit: "10Mbps", "64kbps".
    Rate,
    /// A size with its unit: "1500B", "64KB" (KB = 1000 B, KiB = 1024 B).
    Bytes,
    /// A time with its unit: "10ms", "1.5s".
    Duration,
    /// A buffer size in packets ("100p") or bytes ("64KB").
    Limit,
    /// A fraction: 0.1 or "10%".
    Fraction,
    /// A real number.
    Float,
    /// A whole number.
    Integer,
    Bool,
    /// A codepoint: a name (EF, AF11, CS1, ...) or a number 0-63.
    Dscp,
    Text,
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A table of its own.
    Table(fn() -> Table),
    /// A table that chooses its kind by `type`: each type name and its table.
    OneOf(fn() -> Vec<(&'static str, Table)>),
    /// A list of values of one kind.
    List(fn() -> Kind),
    /// A table of names to values of one kind.
    Map(fn() -> Kind),
    /// Anything else, described in words (e.g. "a time (\"40ms\") or false").
    Custom(&'static str),
}

impl Kind {
    /// The value of a range bound written in this kind's unit ("0bps", "1", "10ms"; zero
    /// may go without a unit, as a bound shared by sizes and times).
    pub fn bound(&self, text: &str) -> Option<f64> {
        if text == "0" {
            return Some(0.0);
        }
        match self {
            Kind::Rate => Rate::parse(text).ok().map(|r| r.0 as f64),
            Kind::Bytes => Bytes::parse(text).ok().map(|b| b.0 as f64),
            Kind::Duration => Duration::parse(text).ok().map(|d| d.0 as f64),
            Kind::Limit | Kind::Float | Kind::Integer | Kind::Fraction => text.parse().ok(),
            _ => None,
        }
    }
}

/// A configuration table's declaration.
pub struct Table {
    /// The Rust type without its module path (`RedSpec`, `ConstantDist<Bytes>`): what other
    /// tables refer to.
    pub name: String,
    /// Its doc comment: what the table configures.
    pub doc: &'static str,
    /// The document that specifies the mechanism, when there is one.
    pub document: Option<&'static str>,
    pub keys: Vec<Key>,
}

/// One key of a table.
pub struct Key {
    pub key: &'static str,
    /// Other names accepted for the key.
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    pub required: bool,
    /// The default, as TOML would write it (None: required, or absent means "not set").
    pub default: Option<String>,
    /// The values allowed, "(0, 1]", bounds in the key's unit.
    pub range: Option<&'static str>,
    /// A list or a text that must not be empty.
    pub nonempty: bool,
    /// The doc comment.
    pub help: &'static str,
    /// The section of the document the key comes from.
    pub section: Option<&'static str>,
}

/// The bounds of a declared range (made by the derive from `range = "(lo, hi]"`).
pub struct Range {
    pub text: &'static str,
    pub lo: Option<&'static str>,
    pub lo_incl: bool,
    pub hi: Option<&'static str>,
    pub hi_incl: bool,
}

impl Range {
    /// The rule a value outside the range breaks, in words; a bare 0 bound is written in
    /// the key's unit ("0s", "0bps", "0B").
    fn rule(&self, key: &str, kind: Kind) -> String {
        let zero = match kind {
            Kind::Rate => "0bps",
            Kind::Bytes => "0B",
            Kind::Duration => "0s",
            _ => "0",
        };
        let unit = |b: &'static str| if b == "0" { zero } else { b };
        let (lo, hi) = (self.lo.map(unit), self.hi.map(unit));
        match (lo, hi) {
            (Some(_), Some(_)) => format!("{key} must lie in {}", self.text),
            (Some(lo), None) if self.lo_incl => format!("{key} must be at least {lo}"),
            (Some(lo), None) => format!("{key} must be greater than {lo}"),
            (None, Some(hi)) if self.hi_incl => format!("{key} must be at most {hi}"),
            (None, Some(hi)) => format!("{key} must be less than {hi}"),
            (None, None) => unreachable!("a range has a bound"),
        }
    }

    fn contains(&self, kind: Kind, v: f64) -> bool {
        let bound = |b: &str| {
            kind.bound(b)
                .unwrap_or_else(|| panic!("range {:?}: {b:?} is not a bound of its key's unit", self.text))
        };
        let above = self.lo.is_none_or(|lo| {
            let lo = bound(lo);
            if self.lo_incl { v >= lo } else { v > lo }
        });
        let below = self.hi.is_none_or(|hi| {
            let hi = bound(hi);
            if self.hi_incl { v <= hi } else { v < hi }
        });
        above && below
    }
}

/// A value a range can be checked on: its magnitude in its kind's unit (None: not set).
pub trait Ranged {
    fn magnitude(&self) -> Option<f64>;
}

macro_rules! ranged {
    ($($ty:ty => |$v:ident| $m:expr),* $(,)?) => {
        $(impl Ranged for $ty {
            fn magnitude(&self) -> Option<f64> {
                let $v = self;
                Some($m)
            }
        })*
    };
}
ranged!(
    f64 => |v| *v,
    u8 => |v| *v as f64,
    u32 => |v| *v as f64,
    u64 => |v| *v as f64,
    Rate => |v| v.0 as f64,
    Bytes => |v| v.0 as f64,
    Duration => |v| v.0 as f64,
    Fraction => |v| v.0,
    Limit => |v| match v { Limit::Packets(n) | Limit::Bytes(n) => *n as f64 },
);

impl<T: Ranged> Ranged for Option<T> {
    fn magnitude(&self) -> Option<f64> {
        self.as_ref().and_then(Ranged::magnitude)
    }
}

/// Checks `v` against its declared range (a NaN is outside every range).
pub fn check_range<T: Ranged + Value + Serialize>(
    v: &T,
    range: &Range,
    path: &KeyPath,
    cite: Option<&str>,
) -> Result<(), ConfigError> {
    match v.magnitude() {
        Some(m) if !range.contains(T::kind(), m) => {
            let rule = range.rule(&last_key(path), T::kind());
            let rule = match cite {
                Some(c) => format!("{rule} ({c})"),
                None => rule,
            };
            Err(ConfigError::new(path.clone(), render(v), rule))
        }
        _ => Ok(()),
    }
}

/// What can be declared `nonempty`.
pub trait Emptiable {
    fn is_empty_value(&self) -> bool;
}

impl<T> Emptiable for Vec<T> {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl Emptiable for String {
    fn is_empty_value(&self) -> bool {
        self.is_empty()
    }
}

impl<T: Emptiable> Emptiable for Option<T> {
    fn is_empty_value(&self) -> bool {
        self.as_ref().is_some_and(Emptiable::is_empty_value)
    }
}

pub fn check_nonempty<T: Emptiable + Serialize>(v: &T, path: &KeyPath) -> Result<(), ConfigError> {
    if v.is_empty_value() {
        return Err(ConfigError::new(
            path.clone(),
            render(v),
            format!("{} must not be empty", last_key(path)),
        ));
    }
    Ok(())
}

fn last_key(path: &KeyPath) -> String {
    path.0
        .iter()
        .rev()
        .find_map(|s| match s {
            Seg::Key(k) => Some(k.clone()),
            Seg::Index(_) => None,
        })
        .unwrap_or_default()
}

/// `T`'s name without module paths: `ConstantDist<Bytes>` for
/// `dsim_core::app::web::ConstantDist<dsim_core::time::Bytes>`.
pub fn type_name<T: ?Sized>() -> String {
    let full = std::any::type_name::<T>();
    let mut out = String::with_capacity(full.len());
    let mut word = String::new();
    for c in full.chars() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            word.push(c);
        } else {
            out.push_str(word.rsplit("::").next().unwrap_or_default());
            word.clear();
            out.push(c);
        }
    }
    out.push_str(word.rsplit("::").next().unwrap_or_default());
    out
}

/// A value as TOML writes it (`"10Mbps"`, `0.1`, `["AF11"]`); None for an absent one.
pub fn render<T: Serialize + ?Sized>(v: &T) -> Option<String> {
    toml::Value::try_from(v).ok().map(|t| t.to_string())
}

/// A default as TOML writes it; None when the default is "not set" (an empty `Option`).
pub fn render_default<T: Serialize>(v: &T) -> Option<String> {
    render(v)
}

macro_rules! plain_value {
    ($($ty:ty => $kind:expr),* $(,)?) => {
        $(impl Value for $ty {
            fn kind() -> Kind {
                $kind
            }
        })*
    };
}
plain_value!(
    f64 => Kind::Float,
    u8 => Kind::Integer,
    u32 => Kind::Integer,
    u64 => Kind::Integer,
    i64 => Kind::Integer,
    bool => Kind::Bool,
    String => Kind::Text,
    Rate => Kind::Rate,
    Bytes => Kind::Bytes,
    Duration => Kind::Duration,
    Limit => Kind::Limit,
    Fraction => Kind::Fraction,
    Dscp => Kind::Dscp,
    toml::Table => Kind::Custom("a table"),
);

/// A type that reads a value in a way of its own (a time or `false`, say) and says so.
#[macro_export]
macro_rules! custom_value {
    ($ty:ty, $what:literal) => {
        impl $crate::params::Value for $ty {
            fn kind() -> $crate::params::Kind {
                $crate::params::Kind::Custom($what)
            }
        }
    };
}

impl<T: Value> Value for Option<T> {
    fn kind() -> Kind {
        T::kind()
    }
    fn check_nested(&self, path: &KeyPath) -> Result<(), ConfigError> {
        self.as_ref().map_or(Ok(()), |v| v.check_nested(path))
    }
}

impl<T: Value> Value for Box<T> {
    fn kind() -> Kind {
        T::kind()
    }
    fn check_nested(&self, path: &KeyPath) -> Result<(), ConfigError> {
        (**self).check_nested(path)
    }
}

impl<T: Value> Value for Vec<T> {
    fn kind() -> Kind {
        Kind::List(T::kind)
    }
    fn check_nested(&self, path: &KeyPath) -> Result<(), ConfigError> {
        self.iter()
            .enumerate()
            .try_for_each(|(i, v)| v.check_nested(&path.index(i)))
    }
}

impl<T: Value> Value for BTreeMap<String, T> {
    fn kind() -> Kind {
        Kind::Map(T::kind)
    }
    fn check_nested(&self, path: &KeyPath) -> Result<(), ConfigError> {
        self.iter().try_for_each(|(k, v)| v.check_nested(&path.key(k)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn two() -> u32 {
        2
    }

    /// A table of every sort of key.
    #[derive(Debug, Default, Serialize, Deserialize, Params)]
    #[param(document = "a test")]
    struct Example {
        /// The rate.
        #[param(range = "(0bps, 1Gbps]", section = "2.1")]
        rate: Rate,
        /// A probability.
        #[serde(default)]
        #[param(range = "(0, 1]")]
        p: f64,
        #[serde(default = "two")]
        #[param(range = "[1, inf)")]
        n: u32,
        #[serde(default, rename = "names", alias = "name")]
        #[param(nonempty)]
        list: Vec<String>,
        inner: Option<Inner>,
    }

    #[derive(Debug, Default, Serialize, Deserialize, Params)]
    struct Inner {
        #[param(range = "[1ms, 1s]")]
        t: Duration,
    }

    fn example(toml: &str) -> Example {
        toml::from_str(toml).unwrap()
    }

    fn error(toml: &str) -> String {
        example(toml).check(&KeyPath::root().key("x")).unwrap_err().to_string()
    }

    #[test]
    fn the_table_declares_each_key_once() {
        let t = Example::table();
        assert_eq!(t.name, "Example");
        assert_eq!(t.document, Some("a test"));
        let keys: Vec<&str> = t.keys.iter().map(|k| k.key).collect();
        assert_eq!(keys, ["rate", "p", "n", "names", "inner"]);
        let k = &t.keys[0];
        assert!(k.required && k.default.is_none());
        assert_eq!(
            (k.range, k.section, k.help),
            (Some("(0bps, 1Gbps]"), Some("2.1"), "The rate.")
        );
        assert!(matches!(k.kind, Kind::Rate));
        assert_eq!(t.keys[1].default.as_deref(), Some("0.0"));
        assert_eq!(t.keys[2].default.as_deref(), Some("2"));
        assert_eq!(t.keys[3].aliases, ["name"]);
        assert!(t.keys[3].nonempty);
        assert!(!t.keys[4].required, "an Option key is never required");
        assert!(matches!(t.keys[4].kind, Kind::Table(_)));
    }

    #[test]
    fn checks_ranges_in_the_keys_unit() {
        let ok = example("rate = \"1Gbps\"\np = 1.0\nnames = [\"a\"]\ninner = { t = \"1ms\" }");
        assert!(ok.check(&KeyPath::root()).is_ok());
        assert_eq!(
            error("rate = \"0bps\"\np = 0.5\nnames = [\"a\"]"),
            "x.rate = \"0bps\": rate must lie in (0bps, 1Gbps] (a test section 2.1)"
        );
        assert_eq!(
            error("rate = \"1Mbps\"\np = 0.0\nnames = [\"a\"]"),
            "x.p = 0.0: p must lie in (0, 1]"
        );
        assert_eq!(
            error("rate = \"1Mbps\"\np = nan\nnames = [\"a\"]"),
            "x.p = nan: p must lie in (0, 1]",
            "NaN is outside every range"
        );
        assert_eq!(
            error("rate = \"1Mbps\"\np = 0.5\nn = 0\nnames = [\"a\"]"),
            "x.n = 0: n must be at least 1"
        );
        assert_eq!(
            error("rate = \"1Mbps\"\np = 0.5\nnames = []"),
            "x.names = []: names must not be empty"
        );
        assert_eq!(
            error("rate = \"1Mbps\"\np = 0.5\nnames = [\"a\"]\ninner = { t = \"2s\" }"),
            "x.inner.t = \"2s\": t must lie in [1ms, 1s]",
            "nested tables are checked with their path"
        );
    }

    #[derive(Debug, Clone, Copy, Serialize, Deserialize, Params)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Mode {
        Coupled,
        NotCoupled,
        #[serde(rename = "x")]
        Other,
    }

    #[test]
    fn an_enum_is_a_choice_of_the_names_serde_reads() {
        let Kind::Choice(names) = Mode::kind() else {
            panic!("a choice")
        };
        assert_eq!(names, ["coupled", "not_coupled", "x"]);
    }
}
