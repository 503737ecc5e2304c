//! Reports made by the real binary, for renderer tests: the calendar example's `check` (a real
//! routing regression, flipped cases, meaning drift), generated once per test binary.

#![allow(dead_code)]

use std::process::Command;
use std::sync::OnceLock;

use super::runner::fixture;

/// `driftgate check` of the calendar example as JSON (semantic router, offline).
pub fn calendar_check_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        let cache = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_driftgate"));
        for (k, _) in std::env::vars() {
            if k.starts_with("GITHUB_") {
                cmd.env_remove(&k);
            }
        }
        let out = cmd
            .current_dir(fixture(""))
            .env("DRIFTGATE_CACHE_DIR", cache.path())
            .args([
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
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    })
}
