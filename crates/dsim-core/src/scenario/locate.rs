//! Where a key path points in a scenario's TOML text: its line and the value as written.

use crate::params::{KeyPath, Seg};

/// Finds the line and the written value at `path` in the TOML `text`.
pub fn locate(text: &str, path: &KeyPath) -> (Option<usize>, Option<String>) {
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return (None, None);
    };
    let line_of = |span: Option<std::ops::Range<usize>>| span.map(|s| text[..s.start].matches('\n').count() + 1);
    let mut item: &toml_edit::Item = doc.as_item();
    let mut line = None;
    for seg in &path.0 {
        let next = match seg {
            Seg::Key(k) => {
                let key_span = match item {
                    toml_edit::Item::Table(t) => t.key(k).and_then(|k| k.span()),
                    toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => t.key(k).and_then(|k| k.span()),
                    _ => None,
                };
                let next = item.get(k.as_str());
                if let Some(l) = line_of(key_span).or_else(|| next.and_then(|n| line_of(n.span()))) {
                    line = Some(l);
                }
                next
            }
            Seg::Index(i) => {
                let next = item.get(*i);
                if let Some(l) = next.and_then(|n| line_of(n.span())) {
                    line = Some(l);
                }
                next
            }
        };
        match next {
            Some(n) => item = n,
            None => return (line, None),
        }
    }
    let value = item.as_value().map(|v| v.to_string().trim().to_string());
    (line, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_values_in_tables_arrays_and_inline_tables() {
        let text = "a = 1\n[[link]]\nrate = \"0Mbps\"\nq = { limit = \"5p\" }\n";
        assert_eq!(
            locate(text, &KeyPath::parse("link[0].rate")),
            (Some(3), Some("\"0Mbps\"".into()))
        );
        assert_eq!(
            locate(text, &KeyPath::parse("link[0].q.limit")),
            (Some(4), Some("\"5p\"".into()))
        );
        assert_eq!(locate(text, &KeyPath::parse("a")), (Some(1), Some("1".into())));
    }
}
