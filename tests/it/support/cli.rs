//! Running the driftgate binary: one builder, one scrubbed environment.
//!
//! Every run starts from the test process's environment minus everything that changes what the
//! binary does on a developer machine, under GitHub Actions or with a provider key exported:
//! `GITHUB_*`, `RUNNER_*`, `ACTIONS_*`, `INPUT_*` (a real runner's job summary, outputs, event and
//! token), `CI`, `NO_COLOR`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` and `DRIFTGATE_*` (cache
//! directory, GitHub wait cap). A test sets back exactly what it means with [`Cli::env`].
//!
//! This file is also compiled into the gated suites (`tests/common/mod.rs`), so it depends on
//! nothing else in `support`.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// Variables removed from every run by prefix.
pub const SCRUBBED_PREFIXES: &[&str] = &["GITHUB_", "RUNNER_", "ACTIONS_", "INPUT_", "DRIFTGATE_"];

/// Variables removed from every run by name.
pub const SCRUBBED_NAMES: &[&str] = &["CI", "NO_COLOR", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// Whether `name` is removed from every run.
pub fn scrubbed(name: &str) -> bool {
    SCRUBBED_NAMES.contains(&name) || SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Remove the scrubbed variables from `cmd`: for commands that run driftgate indirectly (the
/// Action's entrypoint), which then set their own.
pub fn scrub(cmd: &mut Command) {
    for (k, _) in std::env::vars_os() {
        if k.to_str().is_some_and(scrubbed) {
            cmd.env_remove(&k);
        }
    }
}

/// A path inside the repository.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// `driftgate ARGS`, from the repository root, in the scrubbed environment.
pub fn driftgate<I, S>(args: I) -> Cli
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Cli {
        args: args.into_iter().map(|a| a.as_ref().to_owned()).collect(),
        dir: repo(""),
        env: Vec::new(),
        stdin: None,
        wrapper: Vec::new(),
        bare: false,
    }
}

/// One run of the binary, being configured.
#[must_use]
pub struct Cli {
    args: Vec<OsString>,
    dir: PathBuf,
    /// Set in order, after the scrub.
    env: Vec<(OsString, OsString)>,
    stdin: Option<Vec<u8>>,
    /// A program (and its arguments) that runs the binary, e.g. `unshare --net --`.
    wrapper: Vec<OsString>,
    /// Start from an empty environment instead of the scrubbed one.
    bare: bool,
}

impl Cli {
    pub fn args<I, S>(mut self, args: I) -> Cli
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// The working directory (default: the repository root).
    pub fn dir(mut self, dir: impl AsRef<Path>) -> Cli {
        self.dir = dir.as_ref().to_path_buf();
        self
    }

    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Cli {
        self.env
            .push((k.as_ref().to_owned(), v.as_ref().to_owned()));
        self
    }

    pub fn envs<I, K, V>(self, vars: I) -> Cli
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        vars.into_iter().fold(self, |c, (k, v)| c.env(k, v))
    }

    /// `DRIFTGATE_CACHE_DIR`.
    pub fn cache(self, dir: impl AsRef<Path>) -> Cli {
        self.env("DRIFTGATE_CACHE_DIR", dir.as_ref())
    }

    /// Text on the binary's stdin (default: none, stdin closed).
    pub fn stdin(mut self, text: impl Into<Vec<u8>>) -> Cli {
        self.stdin = Some(text.into());
        self
    }

    /// Run the binary through `program args… driftgate …`.
    pub fn wrapped_in<I, S>(mut self, program: &str, args: I) -> Cli
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.wrapper = std::iter::once(OsString::from(program))
            .chain(args.into_iter().map(|a| a.as_ref().to_owned()))
            .collect();
        self
    }

    /// An empty environment (only what [`Cli::env`] sets): nothing inherited at all.
    pub fn bare(mut self) -> Cli {
        self.bare = true;
        self
    }

    /// The command, configured but not started.
    pub fn command(&self) -> Command {
        let bin = OsString::from(env!("CARGO_BIN_EXE_driftgate"));
        let mut cmd = match self.wrapper.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        if self.bare {
            cmd.env_clear();
        } else {
            scrub(&mut cmd);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd.args(&self.args).current_dir(&self.dir);
        cmd
    }

    /// Run to completion; stdout and stderr must be UTF-8.
    pub fn run(self) -> Run {
        let mut cmd = self.command();
        cmd.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start driftgate");
        if let Some(text) = &self.stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(text)
                .expect("write stdin");
        }
        let out = child.wait_with_output().expect("run driftgate");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
        }
    }
}

/// What one run of the binary left behind.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// (exit code, stdout, stderr).
    pub fn parts(self) -> (i32, String, String) {
        (self.code, self.stdout, self.stderr)
    }

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
