//! Lint findings reach the PR-facing renderers: Markdown (the sticky comment) and SARIF (code
//! scanning), both for `lint` and, as introduced/fixed, for `check`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::cli;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn run(args: &[&str]) -> (i32, String) {
    let cache = tempfile::tempdir().unwrap();
    let out = cli::driftgate(args).cache(cache.path()).run();
    (out.code, out.stdout)
}

const FS_NEW: &str = "tests/fixtures/corpus/server-filesystem/2025.7.29.json";
const FS_OLD: &str = "tests/fixtures/corpus/server-filesystem/2025.7.1.json";

#[test]
fn lint_markdown_lists_the_confusable_pairs() {
    let (code, md) = run(&["lint", FS_NEW, "--format", "markdown"]);
    assert_eq!(code, 0, "lint passes unless --strict");
    assert!(md.contains("#### Lint findings"), "{md}");
    assert!(
        md.contains("`confusable-pair`") && md.contains("`read_text_file`"),
        "{md}"
    );
}

#[test]
fn lint_sarif_is_valid_and_located() {
    let (_, text) = run(&["lint", FS_NEW, "--format", "sarif"]);
    let doc: Value = serde_json::from_str(&text).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/fixtures/sarif/sarif-schema-2.1.0.json"))
            .unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    assert!(
        v.is_valid(&doc),
        "{:?}",
        v.iter_errors(&doc)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let pair = results
        .iter()
        .find(|r| r["ruleId"] == "confusable-pair")
        .expect("a confusable pair result");
    assert!(
        pair["locations"][0]["physicalLocation"]["region"]["startLine"]
            .as_u64()
            .unwrap()
            > 1
    );
}

#[test]
fn check_markdown_says_what_the_pr_introduced() {
    let (code, md) = run(&[
        "check",
        "--base",
        FS_OLD,
        "--head",
        FS_NEW,
        "--suite",
        "tests/fixtures/server-filesystem.suite.jsonl",
        "--format",
        "markdown",
        // The proxy decides: read_file's rewrite crosses the cosine floor (under `auto`, routing
        // would decide and pass).
        "--cosine-policy",
        "fail",
    ]);
    assert_eq!(code, 1, "read_file's rewrite crosses the cosine floor");
    let i = md
        .find("#### Lint: introduced by this PR")
        .expect("introduced section");
    assert!(
        md[i..].contains("`read_file`") && md[i..].contains("`read_text_file`"),
        "{md}"
    );
}

#[test]
fn lint_html_shows_the_coherence_dimensions_escaped() {
    // A tool named with markup: the coherence justifications quote names, and stay escaped.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("tools.json");
    std::fs::write(
        &f,
        r#"[{"name": "get_x", "description": "Get x."}, {"name": "listY<b>y</b>", "description": "List y."}, {"name": "put_z", "description": "Put z."}]"#,
    )
    .unwrap();
    let (code, html) = run(&[
        "lint",
        f.to_str().unwrap(),
        "--no-embed",
        "--format",
        "html",
    ]);
    assert_eq!(code, 0, "{html}");
    assert!(html.contains("<h2>Server coherence (offline): "), "{html}");
    assert!(html.contains("<code>naming_consistency</code>"), "{html}");
    // The off-style name is quoted in the naming justification, escaped.
    assert!(html.contains("listY&lt;b&gt;y&lt;/b&gt;"), "{html}");
    assert!(
        !html.contains("<b>y</b>"),
        "tool text must not inject markup"
    );
}

/// Lint's own document: one tool set, never a base compared with itself (it was once a check
/// report with base = head: "0 tool(s) changed, 14 unchanged").
#[test]
fn lint_documents_speak_of_one_tool_set() {
    let (_, md) = run(&["lint", FS_NEW, "--no-embed", "--format", "markdown"]);
    assert!(md.contains(&format!("tools `{FS_NEW}` (14 tools)")), "{md}");
    for stale in ["base `", "→ head", "changed", "No tool definitions"] {
        assert!(!md.contains(stale), "{stale}: {md}");
    }
    let (_, html) = run(&["lint", FS_NEW, "--no-embed", "--format", "html"]);
    assert!(html.contains("<td>tools</td>"), "{html}");
    assert!(!html.contains("<td>base</td>"), "{html}");
}

/// Lint findings are annotated at their first tool's line: a warning, an error under --strict,
/// a notice for a note.
#[test]
fn lint_annotations_point_at_the_confusable_tools() {
    let (code, text) = run(&["lint", FS_NEW, "--no-embed", "--format", "annotations"]);
    assert_eq!(code, 0);
    let pair = text
        .lines()
        .find(|l| l.contains("lint confusable-pair read_file ↔ read_text_file"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(pair.starts_with("::warning file="), "{pair}");
    assert!(pair.contains(",line="), "{pair}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("::notice ") && l.contains("scope-ambiguity")),
        "{text}"
    );
    let (code, text) = run(&[
        "lint",
        FS_NEW,
        "--no-embed",
        "--strict",
        "--format",
        "annotations",
    ]);
    assert_eq!(code, 1);
    assert!(
        text.lines()
            .any(|l| l.starts_with("::error ") && l.contains("confusable-pair")),
        "{text}"
    );
}
