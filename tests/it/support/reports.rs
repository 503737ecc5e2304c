//! Reports made by the real binary, for renderer tests: the calendar example's `check` (a real
//! routing regression, flipped cases, meaning drift), generated once per test binary.

use std::sync::OnceLock;

use super::cli;

/// `driftgate check` of the calendar example as JSON (semantic router, offline).
pub fn calendar_check_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let cache = tempfile::tempdir().unwrap();
        let run = cli::driftgate([
            "check",
            "--base",
            "examples/calendar/tools.base.json",
            "--head",
            "examples/calendar/tools.head.json",
            "--suite",
            "examples/calendar/suite.yaml",
            "--format",
            "json",
        ])
        .cache(cache.path())
        .run();
        assert_eq!(run.code, 1, "{}", run.stderr);
        run.stdout
    })
}
