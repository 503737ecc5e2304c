//! Bugs the fuzz targets (`fuzz/`, run by `.ci/fuzz.sh`) led to, each pinned here so that it
//! stays fixed without the fuzzer.

use std::path::Path;
use std::time::{Duration, Instant};

use driftgate::suite;

/// 100,000 `[` behind something the old quote-counting pre-check misread: the YAML scanner's
/// cost grows with the nesting depth at every token (about a minute for these), so the nesting
/// cap must see them whatever comes before. Each must be refused at once, with the cap's message.
#[test]
fn flow_nesting_is_capped_whatever_quotes_come_before_it() {
    let deep = "[".repeat(100_000);
    let texts = [
        // An apostrophe in a plain scalar is not a quote.
        format!("- {{id: a, prompt: don't, expect: x, tags: {deep}\n"),
        // A backslash before the closing double quote is an escaped backslash.
        format!("- {{id: a, prompt: \"x\\\\\", expect: x, tags: {deep}\n"),
        // A quote inside a block scalar is text.
        format!("- id: a\n  prompt: |\n    say \"hi\n  expect: x\n  tags: {deep}\n"),
        // A quote opening a plain scalar's second word is text.
        format!("- id: a\n  prompt: say \"hi\n  expect: x\n  tags: {deep}\n"),
    ];
    for text in &texts {
        let started = Instant::now();
        let e = suite::parse(text, "deep.yaml", Path::new("."))
            .unwrap_err()
            .to_string();
        let took = started.elapsed();
        assert!(
            e.contains(&format!("nested more than {}", suite::MAX_YAML_NESTING)),
            "{e}"
        );
        assert!(
            took < Duration::from_secs(2),
            "{took:?} for {:?}",
            &text[..40]
        );
    }
}

/// Real text with brackets in quotes, block scalars and comments is not refused: only flow
/// collections count.
#[test]
fn brackets_that_are_text_do_not_count_as_nesting() {
    let many = "[".repeat(200);
    let text = format!(
        "# {many}\n- id: a\n  prompt: \"{many}\"\n  expect: x\n- id: b\n  prompt: |\n    {many}\n  expect: x\n- id: c\n  prompt: '{many}'\n  expect: x\n- id: d\n  prompt: plain {many}\n  expect: x\n"
    );
    let s = suite::parse(&text, "text.yaml", Path::new(".")).unwrap();
    assert_eq!(s.cases.len(), 4);
    assert!(s.cases.iter().all(|c| c.prompt.contains(&many)));
}

/// A YAML suite may be one line of JSON (`{"version": 1, "cases": […]}`) or of flow YAML: only a
/// line that is one case is JSONL. (The suite target's YAML round trip writes suites this way.)
#[test]
fn a_one_line_yaml_suite_is_yaml_not_jsonl() {
    for text in [
        "{\"version\": 1, \"cases\": [{\"id\": \"a\", \"prompt\": \"p\", \"expect\": \"x\"}]}\n",
        "{cases: [{id: a, prompt: p, expect: x}]}\n",
        "[{\"id\": \"a\", \"prompt\": \"p\", \"expect\": \"x\"}]\n",
    ] {
        let s = suite::parse(text, "one-line.yaml", Path::new("."))
            .unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(s.cases.len(), 1, "{text}");
        assert_eq!(s.cases[0].id, "a");
    }
    // One case on one line is still JSONL, whatever the file is called.
    let s = suite::parse(
        "{\"id\": \"a\", \"prompt\": \"p\", \"expect\": \"x\"}\n",
        "one-case.yaml",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(s.cases[0].id, "a");
}

/// The shipped binary must read numbers as exactly as the tests do. serde_json's default float
/// parsing can be one ulp off (`123456789012345680000` reads as a neighbour of the value that
/// prints back as `1.2345678901234568e20`), so a lockfile written from such a definition did not
/// verify against itself ("hash does not match … edited by hand?"). `cargo test` never saw it:
/// the dev-dependency jsonschema turns on serde_json's `float_roundtrip` for test builds only.
/// The fuzz target `load_tools` (built without dev-dependencies) found it.
#[test]
fn numbers_in_a_definition_survive_the_lockfile_in_the_shipped_build() {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(crate::support::repo("Cargo.toml")).unwrap())
            .unwrap();
    let features = manifest["dependencies"]["serde_json"]["features"]
        .as_array()
        .unwrap();
    assert!(
        features
            .iter()
            .any(|f| f.as_str() == Some("float_roundtrip")),
        "serde_json's float_roundtrip must be a normal dependency feature, not only a test one"
    );
    // The round trip itself (in this test build the feature is on either way).
    let text = r#"[{"name":"f","inputSchema":{"type":"object","properties":{"n":{"type":"number",
        "maximum":123456789012345680000,"minimum":-1.7976931348623157e308,"multipleOf":0.1}}}}]"#;
    let (set, _) = driftgate::source::parse_text(text, "f.json").unwrap();
    let locked = driftgate::tools::lock::render(&set, &Default::default());
    let (back, _) = driftgate::source::parse_text(&locked, "f.lock.json").unwrap();
    assert_eq!(back, set);
}

/// Problems are in file order, so `parse` refuses a JSONL suite with the first bad line: a line
/// that is not JSON was reported before an invalid case above it.
#[test]
fn jsonl_problems_are_reported_in_file_order() {
    let text = "{\"id\":\"a\",\"prompt\":\"p\"}\n{\"id\":\n{\"id\":\"c\",\"prompt\":\"p\",\"expect\":\"x\"}\n";
    let parsed = suite::parse_all(text, "s.jsonl", Path::new("."));
    let at: Vec<&str> = parsed
        .problems
        .iter()
        .map(|p| p.at.as_deref().unwrap())
        .collect();
    assert_eq!(at, ["line 1", "line 2"]);
    let e = suite::parse(text, "s.jsonl", Path::new("."))
        .unwrap_err()
        .to_string();
    assert!(e.contains("case \"a\": `expect`: missing"), "{e}");
}
