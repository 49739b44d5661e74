//! The schema: every configuration table reachable from a scenario's root, with each key's
//! declaration, as JSON. The Python package reads it (`dsim._dsim.schema()`) to generate
//! its builder functions and their docstrings, and the documentation's parameter tables
//! are generated from it (`scripts/gen_params.py`), so neither declares a parameter again.

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use super::{Kind, Params, Table};

/// The schema of the tables reachable from `R` (a scenario, or any table).
pub fn catalog<R: Params>() -> Json {
    let root = R::table();
    let mut tables = BTreeMap::new();
    let root_name = root.name.clone();
    visit(root, &mut tables);
    json!({ "root": root_name, "tables": tables })
}

fn visit(t: Table, tables: &mut BTreeMap<String, Json>) {
    if tables.contains_key(&t.name) {
        return;
    }
    // Reserve the name first: a table may (indirectly) contain itself.
    tables.insert(t.name.clone(), Json::Null);
    let keys: Vec<Json> = t
        .keys
        .iter()
        .map(|k| {
            json!({
                "key": k.key,
                "aliases": k.aliases,
                "kind": kind(k.kind, tables),
                "required": k.required,
                "default": k.default,
                "range": k.range,
                "nonempty": k.nonempty,
                "help": k.help,
                "section": k.section,
            })
        })
        .collect();
    tables.insert(t.name, json!({ "doc": t.doc, "document": t.document, "keys": keys }));
}

fn kind(k: Kind, tables: &mut BTreeMap<String, Json>) -> Json {
    match k {
        Kind::Rate => json!("rate"),
        Kind::Bytes => json!("bytes"),
        Kind::Duration => json!("duration"),
        Kind::Limit => json!("limit"),
        Kind::Fraction => json!("fraction"),
        Kind::Float => json!("float"),
        Kind::Integer => json!("integer"),
        Kind::Bool => json!("bool"),
        Kind::Dscp => json!("dscp"),
        Kind::Text => json!("text"),
        Kind::Choice(names) => json!({ "choice": names }),
        Kind::Table(f) => {
            let t = f();
            let name = t.name.clone();
            visit(t, tables);
            json!({ "table": name })
        }
        Kind::OneOf(f) => {
            let mut by_type = serde_json::Map::new();
            for (tag, t) in f() {
                by_type.insert(tag.to_string(), json!(&t.name));
                visit(t, tables);
            }
            json!({ "one_of": by_type })
        }
        Kind::List(f) => json!({ "list": kind(f(), tables) }),
        Kind::Map(f) => json!({ "map": kind(f(), tables) }),
        Kind::Custom(text) => json!({ "custom": text }),
    }
}
