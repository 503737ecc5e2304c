//! Reports made by the real binary, for renderer tests: the calendar example's `check` (a real
//! routing regression, flipped cases, meaning drift), generated once per test binary.

use std::sync::OnceLock;

use super::{calendar, cli};

/// `driftgate check` of the calendar example as JSON (semantic router, offline).
pub fn calendar_check_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let cache = tempfile::tempdir().unwrap();
        let run = cli::driftgate(calendar::check(&["--format", "json"]))
            .cache(cache.path())
            .run();
        assert_eq!(run.code, 1, "{}", run.stderr);
        run.stdout
    })
}

/// The published JSON Schema at `path`, compiled.
fn validator(path: &str) -> jsonschema::Validator {
    let text = std::fs::read_to_string(path).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{path} compiles: {e}"))
}

/// Fail with every violation (and its pointer) when `report` does not match the published schema
/// of check and diff reports (`docs/report.schema.json`).
pub fn assert_matches_schema(report: &serde_json::Value, what: &str) {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    let v = V.get_or_init(|| validator(REPORT_SCHEMA));
    matches(v, REPORT_SCHEMA, report, what);
}

/// The same against lint's published schema (`docs/lint.schema.json`).
pub fn assert_matches_lint_schema(report: &serde_json::Value, what: &str) {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    let v = V.get_or_init(|| validator(LINT_SCHEMA));
    matches(v, LINT_SCHEMA, report, what);
}

/// The same against fix's published schema (`docs/fix.schema.json`).
pub fn assert_matches_fix_schema(report: &serde_json::Value, what: &str) {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    let v = V.get_or_init(|| validator(FIX_SCHEMA));
    matches(v, FIX_SCHEMA, report, what);
}

pub const FIX_SCHEMA: &str = "docs/fix.schema.json";
pub const REPORT_SCHEMA: &str = "docs/report.schema.json";
pub const LINT_SCHEMA: &str = "docs/lint.schema.json";

fn matches(v: &jsonschema::Validator, path: &str, report: &serde_json::Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .take(20)
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match {path}:\n{}",
        errors.join("\n")
    );
}
