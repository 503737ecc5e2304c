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
    ("injection", 4),
    ("route", 5),
    ("cosine", 5),
    ("suite", 6),
    ("replay", 7),
    ("lint", 7),
    ("stress", 7),
    ("draft", 7),
    ("gate", 8),
    ("canary", 8),
    ("report", 9),
    ("job", 10),
    ("github", 10),
    ("app", 11),
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
    // `crate::Result` and `crate::Error` are the error module's, re-exported at the root;
    // `crate::rule_ids!` is `choice`'s macro, exported at the root as macros are.
    let name = match name {
        "Result" | "Error" => "error",
        "rule_ids" => "choice",
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
    let sample = "use crate::gate::{Status, cosine_call};\nlet x = crate::gate::failing(r, m, t);\nuse crate::gate::*;\nmatch s { gate::Status::Pass => 1 }\n";
    let found: Vec<String> = gate_functions(sample).into_iter().map(|(_, n)| n).collect();
    assert_eq!(found, ["cosine_call", "failing", "*"]);
}

/// What a module touches outside the process, by the code that does it. Each side effect has the
/// modules that may have it; a new module that opens a socket, spawns a process or touches the
/// disk must be added here on purpose (and the untrusted inputs it reads confined as `source`'s
/// are).
const EFFECTS: &[(&str, &[&str], &[&str])] = &[
    (
        "opens sockets",
        &[
            "reqwest::Client",
            "reqwest::RequestBuilder",
            "reqwest::multipart",
            "octocrab",
            "rmcp::transport",
            "TcpStream",
            "TcpListener",
            "UdpSocket",
            "UnixStream",
        ],
        // One HTTP client (`http`) and its users: the embedding endpoint, the chat transport,
        // GitHub's API, live MCP servers.
        &["http", "embed", "llm", "github", "source"],
    ),
    (
        "spawns processes",
        &[
            "process::Command",
            "Command::new",
            "tokio::process",
            "libc::fork",
        ],
        // `git show` and live servers (`source`); `app`.
        &["source", "app"],
    ),
    (
        "touches the disk",
        &[
            "std::fs",
            "tokio::fs",
            "fs::read",
            "fs::write",
            "File::open",
            "File::create",
            "OpenOptions",
            "fs::create_dir",
            "fs::remove",
            "fs::rename",
            "fs::metadata",
        ],
        // Atomic writes and bounded reads (`fs`), the cache, the inputs (`source`: tool files,
        // revisions; `suite`: suites and packs; `stress`: a jargon table; `cosine`: the
        // calibration pairs), GitHub's event and step files, and `app`.
        &[
            "fs", "cache", "source", "suite", "stress", "cosine", "github", "app",
        ],
    ),
];

/// A file's code without its `#[cfg(test)]` items (modules, helpers, impls): tests may touch
/// what they like. Each item runs from the attribute to the brace that closes its first block.
fn non_test_code(text: &str) -> String {
    let mut code = code_only(text);
    while let Some(at) = code.find("#[cfg(test)]") {
        let Some(open) = code[at..].find('{').map(|i| at + i) else {
            break;
        };
        let mut depth = 0;
        let mut end = code.len();
        for (i, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        code.replace_range(at..end, "");
    }
    code
}

#[test]
fn side_effects_stay_in_their_modules() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut bad = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in &files {
        let m = module_of(f);
        let code = non_test_code(&std::fs::read_to_string(f).unwrap());
        for (effect, markers, allowed) in EFFECTS {
            for marker in *markers {
                if code.contains(marker) {
                    seen.insert((*effect, m.clone()));
                    if !allowed.contains(&m.as_str()) {
                        let rel = f.strip_prefix(src()).unwrap().display();
                        bad.push(format!("{rel} {effect} (`{marker}`)"));
                    }
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "side effects outside their modules:\n{}",
        bad.join("\n")
    );
    // The scan sees the effects where they are: each allowed list is not wider than the code.
    for (effect, _, allowed) in EFFECTS {
        for m in *allowed {
            assert!(
                seen.contains(&(*effect, m.to_string())),
                "{m} is allowed to say it {effect} but does not: narrow the list"
            );
        }
    }
}

#[test]
fn test_modules_are_not_scanned_for_effects() {
    let text = "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn b() { std::fs::read(\"x\"); }\n}\nfn c() { File::open(p) }\n#[cfg(test)]\nfn d() { std::process::Command::new(\"x\") }\n";
    let code = non_test_code(text);
    assert!(
        !code.contains("std::fs") && !code.contains("Command"),
        "{code}"
    );
    assert!(
        code.contains("fn a()") && code.contains("File::open"),
        "{code}"
    );
    assert!(non_test_code("fn a() { std::fs::read(p); }").contains("std::fs"));
}

/// Every function's length in lines, from its `fn` line to the brace that closes its body, with
/// its file and name. Nested functions count inside their parent too.
fn function_lengths(code: &str) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or(t.strip_prefix("pub "))
            .unwrap_or(t);
        let t = t.strip_prefix("async ").unwrap_or(t);
        let t = t.strip_prefix("const ").unwrap_or(t);
        let Some(rest) = t.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let mut depth = 0i32;
        let mut opened = false;
        'body: for (n, l) in lines.iter().enumerate().skip(start) {
            for c in l.chars() {
                match c {
                    // A declaration without a body (a trait's) ends at its `;`.
                    ';' if !opened => break 'body,
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => {
                        depth -= 1;
                        if opened && depth == 0 {
                            out.push((start + 1, name.clone(), n - start + 1));
                            break 'body;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// The house's size rule (docs/ARCHITECTURE.md): no function in `src/` is longer than 120
/// lines; a longer one is a pipeline that wants its stages named.
#[test]
fn no_function_is_longer_than_120_lines() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut long = Vec::new();
    let mut counted = 0;
    for f in &files {
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for (line, name, len) in function_lengths(&code) {
            counted += 1;
            if len > 120 {
                let rel = f.strip_prefix(src()).unwrap().display();
                long.push(format!("{rel}:{line} {name}: {len} lines"));
            }
        }
    }
    assert!(counted > 1000, "the functions were found: {counted}");
    assert!(
        long.is_empty(),
        "functions over 120 lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn function_lengths_are_measured_to_the_closing_brace() {
    let code = "fn a() {\n    if x {\n        y();\n    }\n}\ntrait T {\n    fn b(&self);\n}\npub async fn c()\n    -> u8\n{\n    1\n}\n";
    let got = function_lengths(code);
    assert_eq!(got, [(1, "a".to_string(), 5), (9, "c".to_string(), 5)]);
}
