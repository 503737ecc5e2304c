//! The house rule, checked: data flows one way. Every `crate::` path in `src/` names a module of
//! a lower layer than the module it is written in (or its own module), clap appears only in
//! `app/`, and the table below names every top-level module, so a new module must take a place
//! in it (and in docs/ARCHITECTURE.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lower numbers are lower layers. A module may use modules of strictly lower layers only.
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("fs", 1),
    ("canon", 1),
    ("choice", 1),
    ("console", 1),
    ("text", 1),
    ("http", 2),
    ("cache", 2),
    ("tools", 3),
    ("stats", 3),
    ("diff", 4),
    ("embed", 4),
    ("llm", 4),
    ("source", 4),
    ("scan", 4),
    ("suite", 5),
    ("route", 5),
    ("drift", 5),
    ("replay", 6),
    ("lint", 6),
    ("stress", 6),
    ("draft", 6),
    ("gate", 7),
    ("canary", 7),
    ("report", 8),
    ("job", 9),
    ("github", 9),
    ("app", 10),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to (`src/report/render/json.rs` → `report`).
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Code without comments and string literals, so prose and messages do not count.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let mut in_str = false;
        let mut prev = ' ';
        for c in code.chars() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            } else if !in_str {
                out.push(c);
            }
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// Every `crate::NAME` in `code`, with its line.
fn crate_refs(code: &str) -> Vec<(usize, String)> {
    let mut refs = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `crate::{a, b}` groups: each name counts.
            if after.starts_with('{') {
                let end = after.find('}').unwrap_or(after.len());
                for part in after[1..end].split(',') {
                    let n2: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !n2.is_empty() {
                        refs.push((n + 1, n2));
                    }
                }
            } else if !name.is_empty() {
                refs.push((n + 1, name));
            }
            rest = after;
        }
    }
    refs
}

fn layer_of(name: &str) -> Option<u32> {
    // `crate::Result` and `crate::Error` are the error module's, re-exported at the root.
    let name = match name {
        "Result" | "Error" => "error",
        n => n,
    };
    LAYERS.iter().find(|(m, _)| *m == name).map(|(_, l)| *l)
}

#[test]
fn every_module_has_a_layer() {
    let mut modules: Vec<String> = Vec::new();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for f in &files {
        let m = module_of(f);
        if m != "lib" && m != "main" && !modules.contains(&m) {
            modules.push(m);
        }
    }
    let missing: Vec<&String> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(missing.is_empty(), "modules without a layer: {missing:?}");
    let stale: Vec<&str> = LAYERS
        .iter()
        .map(|(m, _)| *m)
        .filter(|m| !modules.iter().any(|x| x == m))
        .collect();
    assert!(stale.is_empty(), "layers naming no module: {stale:?}");
}

#[test]
fn imports_only_run_down_the_layers() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut bad: Vec<String> = Vec::new();
    let mut edges: BTreeMap<(String, String), usize> = BTreeMap::new();
    for f in &files {
        let from = module_of(f);
        let Some(from_layer) = layer_of(&from) else {
            continue; // lib.rs and main.rs sit on top.
        };
        let text = std::fs::read_to_string(f).unwrap();
        for (line, to) in crate_refs(&code_only(&text)) {
            if to == from {
                continue;
            }
            let Some(to_layer) = layer_of(&to) else {
                bad.push(format!("{}:{line}: crate::{to} is no module", f.display()));
                continue;
            };
            *edges.entry((from.clone(), to.clone())).or_default() += 1;
            if to_layer >= from_layer {
                bad.push(format!(
                    "{}:{line}: {from} (layer {from_layer}) uses crate::{to} (layer {to_layer})",
                    f.strip_prefix(src()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports that run up the layers:\n{}",
        bad.join("\n")
    );
    assert!(edges.len() > 20, "the scan found the imports: {edges:?}");
}

#[test]
fn clap_is_spoken_only_by_app() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let m = module_of(f);
        if m == "app" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        if code.contains("clap::") || code.contains("use clap") {
            bad.push(f.strip_prefix(src()).unwrap().display().to_string());
        }
    }
    assert!(bad.is_empty(), "clap outside app/: {bad:?}");
}

#[test]
fn the_scanner_sees_what_it_must() {
    let code = code_only(
        "use crate::{diff, tools::Tool};\n// crate::app in a comment\nlet s = \"crate::app\";\nx(crate::report::render(r));\n",
    );
    let names: Vec<String> = crate_refs(&code).into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["diff", "tools", "report"]);
}

#[test]
fn the_environment_is_read_only_by_app() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        if module_of(f) == "app" {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        if code.contains("env::var") || code.contains("var_os(") {
            bad.push(f.strip_prefix(src()).unwrap().display().to_string());
        }
    }
    assert!(bad.is_empty(), "environment read outside app/: {bad:?}");
}

/// Every lower-case name `code` reaches through `gate::` (a function: the gate has no modules),
/// with its line. Types (`gate::Status`) are upper-case.
fn gate_functions(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("gate::") {
            let after = &rest[i + "gate::".len()..];
            let names: Vec<&str> = match after.strip_prefix('{') {
                Some(group) => group[..group.find('}').unwrap_or(group.len())]
                    .split(',')
                    .map(str::trim)
                    .collect(),
                None => vec![after],
            };
            for name in names {
                let name: String = name
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name.starts_with(|c: char| c.is_ascii_lowercase() || c == '*') {
                    out.push((n + 1, name));
                } else if name.is_empty() && after.starts_with('*') {
                    out.push((n + 1, "*".into()));
                }
            }
            rest = after;
        }
    }
    out
}

/// Renderers format what the gate decided (`Verdict::rulings`, `decided_by`); they never call a
/// gate function to decide again, so every format tells the same verdict.
#[test]
fn renderers_call_no_gate_function() {
    let mut files = Vec::new();
    rust_files(&src().join("report/render"), &mut files);
    files.push(src().join("report/view.rs"));
    let mut bad = Vec::new();
    for f in &files {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for (line, name) in gate_functions(&code) {
            bad.push(format!(
                "{}:{line}: gate::{name}",
                f.strip_prefix(src()).unwrap().display()
            ));
        }
    }
    assert!(files.len() > 10, "the renderers were found: {files:?}");
    assert!(
        bad.is_empty(),
        "renderers deciding again:\n{}",
        bad.join("\n")
    );
    let sample = "use crate::gate::{Status, cosine_call};\nlet x = crate::gate::failing_tools(r, t);\nuse crate::gate::*;\nmatch s { gate::Status::Pass => 1 }\n";
    let found: Vec<String> = gate_functions(sample).into_iter().map(|(_, n)| n).collect();
    assert_eq!(found, ["cosine_call", "failing_tools", "*"]);
}
