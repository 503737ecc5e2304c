//! A simulated GitHub Actions runner environment: event payload, step summary and output files,
//! `GITHUB_*` variables pointing at the loopback API. The real runner variables of the machine
//! running the tests are scrubbed first (`support::cli`), so nothing reaches a real repository.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use super::cli;
use super::github::{FakeGithub, REPO, TOKEN};

/// A path inside the repository.
pub fn fixture(rel: &str) -> PathBuf {
    cli::repo(rel)
}

pub struct Runner {
    pub dir: tempfile::TempDir,
    /// The response cache: outside the workspace, as a real job's is (one inside it is refused).
    pub cache: tempfile::TempDir,
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
            cache: tempfile::tempdir().unwrap(),
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

    /// The runner's variables, then the test's own (`set`), in the order they apply.
    fn vars(&self) -> Vec<(String, OsString)> {
        let d = self.dir.path();
        let mut v: Vec<(String, OsString)> = [
            ("NO_COLOR", "1".into()),
            ("CI", "true".into()),
            ("GITHUB_ACTIONS", "true".into()),
            ("GITHUB_REPOSITORY", REPO.into()),
            ("GITHUB_EVENT_NAME", "pull_request".into()),
            ("GITHUB_EVENT_PATH", d.join("event.json").into()),
            ("GITHUB_STEP_SUMMARY", d.join("summary.md").into()),
            ("GITHUB_OUTPUT", d.join("output").into()),
            ("GITHUB_WORKFLOW", "driftgate".into()),
            ("GITHUB_JOB", "gate".into()),
            ("GITHUB_RUN_ID", "9876543210".into()),
            ("GITHUB_SERVER_URL", "https://github.com".into()),
            ("GITHUB_API_URL", self.api_url.clone().into()),
            ("GITHUB_WORKSPACE", d.into()),
            ("GITHUB_TOKEN", TOKEN.into()),
            ("DRIFTGATE_CACHE_DIR", self.cache.path().into()),
        ]
        .into_iter()
        .map(|(k, v): (&str, OsString)| (k.to_string(), v))
        .collect();
        v.extend(self.extra.iter().map(|(k, x)| (k.clone(), x.into())));
        v
    }

    /// The runner's environment on a command that runs driftgate indirectly (the Action's
    /// entrypoint): scrubbed, then the runner's variables; `cwd` is the workspace.
    pub fn apply(&self, cmd: &mut Command) {
        cli::scrub(cmd);
        cmd.current_dir(self.dir.path());
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
    }

    /// Run the driftgate binary in the workspace; returns (exit code, stdout, stderr).
    pub fn driftgate(&self, args: &[&str]) -> (i32, String, String) {
        cli::driftgate(args)
            .dir(self.dir.path())
            .envs(self.vars())
            .run()
            .parts()
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
