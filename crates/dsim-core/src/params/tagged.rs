//! Tables that choose their kind with a `type` key (`app = { type = "cbr", ... }`).
//!
//! serde's internally tagged enums buffer the table before picking the variant, and the
//! key path of an error inside it is lost ("flow[0].app: not a whole number" instead of
//! "flow[0].app.size: ..."). [`tagged_enum!`] reads the table, picks the variant by `type`
//! and deserializes the variant's own struct with path tracking; the inner path travels
//! to [`crate::scenario::from_toml`] inside the error message between two [`PATH_MARK`]s, where it is
//! appended to the outer path. Serialization stays serde's internal tagging. The macro also
//! declares the table to the schema ([`crate::params::Kind::OneOf`]: each `type` and its
//! table) and checks the chosen variant's declared ranges.

use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error};

/// Delimits an inner key path at the start of an error message.
pub const PATH_MARK: char = '\u{1}';

/// Splits `\u{1}path\u{1}message` into (path, message); a plain message has an empty path.
pub fn split_message(msg: &str) -> (&str, &str) {
    msg.strip_prefix(PATH_MARK)
        .and_then(|rest| rest.split_once(PATH_MARK))
        .unwrap_or(("", msg))
}

fn join(outer: &str, inner: &str) -> String {
    match (outer.is_empty(), inner.is_empty()) {
        (_, true) => outer.to_string(),
        (true, false) => inner.to_string(),
        (false, false) if inner.starts_with('[') => format!("{outer}{inner}"),
        _ => format!("{outer}.{inner}"),
    }
}

fn located<E: Error>(path: &str, msg: &str) -> E {
    let (nested, msg) = split_message(msg);
    E::custom(format!("{PATH_MARK}{}{PATH_MARK}{msg}", join(path, nested)))
}

/// Reads the table and removes its `type`, which must be one of `tags`.
pub fn split<'de, D: Deserializer<'de>>(d: D, tags: &[&str]) -> Result<(String, toml::Table), D::Error> {
    let mut table = toml::Table::deserialize(d)?;
    let one_of = tags.join(", ");
    match table.remove("type") {
        Some(toml::Value::String(tag)) if tags.contains(&tag.as_str()) => Ok((tag, table)),
        Some(toml::Value::String(tag)) => Err(located(
            "type",
            &format!("unknown type `{tag}`, expected one of {one_of}"),
        )),
        Some(other) => Err(located(
            "type",
            &format!("{other} is not a type name; expected one of {one_of}"),
        )),
        None => Err(located("", &format!("missing key `type` (one of {one_of})"))),
    }
}

/// Deserializes the rest of the table as the variant's struct, keeping the key path.
pub fn variant<'de, D: Deserializer<'de>, T: DeserializeOwned>(table: toml::Table) -> Result<T, D::Error> {
    serde_path_to_error::deserialize(table).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        located(&path, e.into_inner().message())
    })
}

/// Implements `Deserialize` for an enum of newtype variants chosen by the table's `type`.
/// Derive `Serialize` with `#[serde(tag = "type", rename_all = "snake_case")]` beside it.
#[macro_export]
macro_rules! tagged_enum {
    ($name:ident { $($variant:ident($ty:ty) = $tag:literal),+ $(,)? }) => {
        impl $name {
            /// The `type` names this table accepts.
            pub const TAGS: &'static [&'static str] = &[$($tag),+];
        }
        impl $crate::params::Value for $name {
            fn kind() -> $crate::params::Kind {
                $crate::params::Kind::OneOf(|| {
                    vec![$(($tag, <$ty as $crate::params::Params>::table())),+]
                })
            }
            fn check_nested(&self, path: &$crate::params::KeyPath) -> ::core::result::Result<(), $crate::params::ConfigError> {
                match self {
                    $($name::$variant(v) => <$ty as $crate::params::Params>::check(v, path),)+
                }
            }
        }
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> ::core::result::Result<Self, D::Error> {
                let (tag, rest) = $crate::params::tagged::split(d, &[$($tag),+])?;
                match tag.as_str() {
                    $($tag => $crate::params::tagged::variant::<D, $ty>(rest).map($name::$variant),)+
                    _ => unreachable!("split checked the tag"),
                }
            }
        }
    };
    ($name:ident<$g:ident: $bound:path> { $($variant:ident($ty:ty) = $tag:literal),+ $(,)? }) => {
        impl<$g: $bound> $crate::params::Value for $name<$g> {
            fn kind() -> $crate::params::Kind {
                $crate::params::Kind::OneOf(|| {
                    vec![$(($tag, <$ty as $crate::params::Params>::table())),+]
                })
            }
            fn check_nested(&self, path: &$crate::params::KeyPath) -> ::core::result::Result<(), $crate::params::ConfigError> {
                match self {
                    $($name::$variant(v) => <$ty as $crate::params::Params>::check(v, path),)+
                }
            }
        }
        impl<'de, $g: $bound> serde::Deserialize<'de> for $name<$g>
        where
            $($ty: serde::de::DeserializeOwned),+
        {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> ::core::result::Result<Self, D::Error> {
                let (tag, rest) = $crate::params::tagged::split(d, &[$($tag),+])?;
                match tag.as_str() {
                    $($tag => $crate::params::tagged::variant::<D, $ty>(rest).map($name::$variant),)+
                    _ => unreachable!("split checked the tag"),
                }
            }
        }
    };
}
