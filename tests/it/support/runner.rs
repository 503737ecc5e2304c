//! A simulated GitHub Actions runner environment: event payload, step summary and output files,
//! `GITHUB_*` variables pointing at the loopback API. Real runner variables of the machine
//! running the tests are removed so nothing reaches a real repository.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::github::{FakeGithub, REPO, TOKEN};

pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

pub struct Runner {
    pub dir: tempfile::TempDir,
    pub api_url: String,
    pub extra: Vec<(String, String)>,
}

/// The event payload fixture with its SHAs replaced.
pub fn event(name: &str, base_sha: &str, head_sha: &str) -> Value {
    let text = std::fs::read_to_string(fixture(&format!("tests/fixtures/github/{name}"))).unwrap();
    let mut ev: Value = serde_json::from_str(&text).unwrap();
    if let Some(pr) = ev.get_mut("pull_request") {
        pr["base"]["sha"] = base_sha.into();
        pr["head"]["sha"] = head_sha.into();
    }
    if let Some(run) = ev.get_mut("workflow_run") {
        run["head_sha"] = head_sha.into();
        run["head_commit"]["id"] = head_sha.into();
    }
    ev
}

impl Runner {
    pub fn new(gh: &FakeGithub, ev: &Value) -> Runner {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("event.json"), ev.to_string()).unwrap();
        std::fs::write(dir.path().join("summary.md"), "").unwrap();
        std::fs::write(dir.path().join("output"), "").unwrap();
        Runner {
            dir,
            api_url: gh.api_url(),
            extra: Vec::new(),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_default()
    }

    pub fn set(&mut self, k: &str, v: &str) {
        self.extra.push((k.into(), v.into()));
    }

    /// The runner's environment on a command; `cwd` is the workspace.
    pub fn apply(&self, cmd: &mut Command) {
        for (k, _) in std::env::vars() {
            if k.starts_with("GITHUB_") || k.starts_with("INPUT_") || k.starts_with("RUNNER_") {
                cmd.env_remove(&k);
            }
        }
        let d = self.dir.path();
        cmd.current_dir(d)
            .env("NO_COLOR", "1")
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_REPOSITORY", REPO)
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", d.join("event.json"))
            .env("GITHUB_STEP_SUMMARY", d.join("summary.md"))
            .env("GITHUB_OUTPUT", d.join("output"))
            .env("GITHUB_WORKFLOW", "driftgate")
            .env("GITHUB_JOB", "gate")
            .env("GITHUB_RUN_ID", "9876543210")
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_API_URL", &self.api_url)
            .env("GITHUB_WORKSPACE", d)
            .env("GITHUB_TOKEN", TOKEN)
            .env("DRIFTGATE_CACHE_DIR", d.join(".cache"));
        for (k, v) in &self.extra {
            cmd.env(k, v);
        }
    }

    /// Run the driftgate binary; returns (exit code, stdout, stderr).
    pub fn driftgate(&self, args: &[&str]) -> (i32, String, String) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_driftgate"));
        self.apply(&mut cmd);
        cmd.args(args);
        let out = cmd.output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    /// The step outputs, read back the way the runner reads `name<<DELIMITER` heredocs.
    pub fn outputs(&self) -> Vec<(String, String)> {
        let text = self.read("output");
        let mut out = Vec::new();
        let mut lines = text.lines();
        while let Some(l) = lines.next() {
            let (name, d) = l.split_once("<<").expect("heredoc syntax");
            let mut value = Vec::new();
            for v in lines.by_ref() {
                if v == d {
                    break;
                }
                value.push(v);
            }
            out.push((name.to_string(), value.join("\n")));
        }
        out
    }

    pub fn output(&self, name: &str) -> Option<String> {
        self.outputs()
            .into_iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
}
