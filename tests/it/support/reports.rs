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

/// The published JSON Schema of the report (`docs/report.schema.json`), compiled once.
fn report_validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let text = std::fs::read_to_string("docs/report.schema.json").unwrap();
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("docs/report.schema.json compiles")
    })
}

/// Fail with every violation (and its pointer) when `report` does not match the published schema.
pub fn assert_matches_schema(report: &serde_json::Value, what: &str) {
    let errors: Vec<String> = report_validator()
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .take(20)
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match docs/report.schema.json:\n{}",
        errors.join("\n")
    );
}
