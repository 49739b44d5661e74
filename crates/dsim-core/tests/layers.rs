//! The layers of docs/architecture.md hold: every `crate::` path in the library points to a
//! module of a lower layer. Tests (`#[cfg(test)]` modules, `tests.rs` files) may import
//! anything; comments are not imports.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The layer table between `<!-- layers -->` and `<!-- /layers -->`: module -> layer.
fn layers() -> BTreeMap<String, u32> {
    let doc = fs::read_to_string(Path::new(ROOT).join("../../docs/architecture.md")).expect("docs/architecture.md");
    let start = doc.find("<!-- layers -->").expect("the layers table's opening marker");
    let end = doc.find("<!-- /layers -->").expect("the layers table's closing marker");
    let mut table = BTreeMap::new();
    for row in doc[start..end].lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Ok(layer) = cells[1].parse::<u32>() else {
            continue; // the header and its rule
        };
        for module in cells[2].split(',').map(str::trim) {
            assert!(
                table.insert(module.to_string(), layer).is_none(),
                "{module} is in two rows"
            );
        }
    }
    table
}

/// The top-level module a source file belongs to (`sched/dsd/spec.rs` -> `sched`).
fn module_of(file: &Path, src: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("a path").as_os_str().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library code of a file, comments cut, numbered from 1: without the items marked
/// `#[cfg(test)]` (a `mod tests;` declaration, or an item to its closing brace, counted;
/// `tests.rs` files are skipped whole).
fn library_lines(text: &str) -> Vec<(usize, &str)> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("")))
        .collect();
    let mut code = Vec::new();
    let mut rest = lines.iter();
    while let Some(&(n, line)) = rest.next() {
        if line.trim() != "#[cfg(test)]" {
            code.push((n, line));
            continue;
        }
        let mut depth = 0i64;
        for &(_, item) in rest.by_ref() {
            depth += item.matches('{').count() as i64 - item.matches('}').count() as i64;
            if depth == 0 && (item.contains('}') || item.trim_end().ends_with(';')) {
                break;
            }
        }
    }
    code
}

/// The modules named by `crate::NAME` paths in `line` (a macro, `crate::NAME!`, is not a
/// module and is skipped).
fn crate_paths(line: &str) -> Vec<&str> {
    line.match_indices("crate::")
        .filter_map(|(i, m)| {
            let rest = &line[i + m.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let name = &rest[..end];
            (!name.is_empty() && !rest[end..].starts_with('!')).then_some(name)
        })
        .collect()
}

#[test]
fn every_import_points_to_a_lower_layer() {
    let table = layers();
    let src = Path::new(ROOT).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut violations = Vec::new();
    for file in &files {
        if file.file_name().is_some_and(|n| n == "tests.rs" || n == "lib.rs") {
            continue;
        }
        let module = module_of(file, &src);
        let Some(&layer) = table.get(&module) else {
            violations.push(format!(
                "{}: module `{module}` is not in the layers table",
                file.display()
            ));
            continue;
        };
        let text = fs::read_to_string(file).expect("a readable file");
        for (n, line) in library_lines(&text) {
            for target in crate_paths(line) {
                if target == module {
                    continue;
                }
                match table.get(target) {
                    Some(&l) if l < layer => {}
                    Some(&l) => violations.push(format!(
                        "{}:{n}: `{module}` (layer {layer}) imports `{target}` (layer {l})",
                        file.strip_prefix(&src).unwrap().display()
                    )),
                    None => violations.push(format!(
                        "{}:{n}: `crate::{target}` is not a module of the layers table",
                        file.strip_prefix(&src).unwrap().display()
                    )),
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against docs/architecture.md:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_table_names_every_module_of_the_crate() {
    let table = layers();
    let lib = fs::read_to_string(Path::new(ROOT).join("src/lib.rs")).expect("lib.rs");
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .collect();
    for m in &declared {
        assert!(
            table.contains_key(*m),
            "module `{m}` of lib.rs is missing from the layers table"
        );
    }
    for m in table.keys() {
        assert!(
            declared.contains(&m.as_str()),
            "the layers table names `{m}`, which lib.rs does not declare"
        );
    }
}

#[test]
fn the_checker_sees_an_upward_import() {
    // The scan itself: a path in code counts, one in a comment or a macro does not.
    assert_eq!(
        crate_paths("use crate::sim::Event; // crate::scenario"),
        ["sim", "scenario"]
    );
    let text = "use crate::sim::Event; // crate::scenario\n#[cfg(test)]\nmod tests;\nuse crate::net;\n\
                #[cfg(test)]\nfn t() {\n    if x {\n        crate::task::f();\n    }\n}\nuse crate::aqm;";
    let code: Vec<_> = library_lines(text)
        .into_iter()
        .flat_map(|(_, l)| crate_paths(l))
        .collect();
    assert_eq!(code, ["sim", "net", "aqm"]);
    assert!(crate_paths("crate::tagged_enum!(X {})").is_empty());
}
