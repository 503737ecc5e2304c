//! Helpers shared by the gated suites against real components (the hermetic ones are in
//! `tests/it/support/`). Each gated binary uses a different subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

// ---- running driftgate --------------------------------------------------------------------------

/// A path inside the repository.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// What one run of the binary left behind.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout parsed as the JSON report (`--format json`).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not a JSON report ({e}); exit {}\nstdout:\n{}\nstderr:\n{}",
                self.code, self.stdout, self.stderr
            )
        })
    }

    /// For assertion messages.
    pub fn dump(&self) -> String {
        format!(
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Run driftgate in `dir` with a clean environment: no colour, no GitHub PR context, no provider
/// keys, no CI-dependent progress bar; `env` is added on top.
pub fn driftgate(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("driftgate");
    cmd.current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CI", "1")
        .env_remove("GITHUB_EVENT_PATH")
        .env_remove("GITHUB_BASE_REF")
        .env_remove("DRIFTGATE_CACHE_DIR")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run driftgate");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// `routing.{side}_stats.{field}` of a JSON report.
pub fn stat(report: &Value, side: &str, field: &str) -> u64 {
    report["routing"][format!("{side}_stats")][field]
        .as_u64()
        .unwrap_or_else(|| panic!("routing.{side}_stats.{field} missing in the report"))
}
