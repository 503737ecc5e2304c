//! The command line: the only layer that knows clap, reads the environment and prints. `main`
//! parses, and `run` dispatches to one module per subcommand (`cmd/`), which resolves flags into
//! settings (`settings`), calls the library, and writes the result (`output`).

#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod cmd;
pub mod config;
pub mod console;
pub mod flags;
pub mod output;
pub mod policy;
pub mod process;
pub mod settings;
pub mod sides;

use clap::{Parser, Subcommand};

use crate::error::{Result, exit};

pub const EXIT_CODES: &str = "\
Exit codes:
  0  pass: nothing crossed a threshold
  1  gate failed: an injection finding the PR introduced at or above --scan-fail-on, a call to a
     must_not_call tool head made and base did not, a significant routing drop beyond
     --tolerance or call-accuracy drop beyond --args-tolerance, a description below
     --cosine-floor, or a change at or above --fail-on
  2  usage or input error (bad flag, unreadable or malformed file)
  3  incomplete: a measurement could not be made (e.g. the server did not answer); never a pass
  4  inconclusive: measured, but too little evidence to tell (a drop of --inconclusive-drop or
     more the suite is too small to call, a base at chance); never a pass";

#[derive(Debug, Parser)]
#[command(name = "driftgate", version, about = "CI gate for MCP tool-definition drift", after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare two tool sets: classify every change by the severity law, measure meaning drift.
    #[command(after_help = EXIT_CODES)]
    Diff(Box<cmd::diff::DiffArgs>),
    /// The gate: diff + meaning drift + paired routing replay of a frozen suite at base and head.
    #[command(after_help = EXIT_CODES)]
    Check(Box<cmd::check::CheckArgs>),
    /// After a failing check: draft rewrites of each tool that failed on routing or call
    /// accuracy and offer those that beat head on held-out cases (the check's flags).
    #[command(after_help = cmd::fix::EXIT_CODES)]
    Fix(Box<cmd::fix::FixArgs>),
    /// Write a lockfile (canonical definitions + hashes) from a live server or a tools file.
    #[command(after_help = EXIT_CODES)]
    Lock(cmd::lock::LockArgs),
    /// Embed stdin, one text per line; prints one JSON array of vectors (one per line).
    Embed(cmd::embed::EmbedCmdArgs),
    /// Static analysis of one tool set: confusable pairs, definition quality, hard gates.
    #[command(after_help = cmd::lint::EXIT_CODES)]
    Lint(Box<cmd::lint::LintArgs>),
    /// Post a JSON report as the sticky PR comment (the `workflow_run` job for fork PRs).
    Comment(cmd::comment::CommentArgs),
    /// One report from the partial reports of `check --shard I/N`, statistics over all cases.
    #[command(after_help = EXIT_CODES)]
    Merge(Box<cmd::merge::MergeArgs>),
    /// Perturb each tool with harmless-looking edits and replay the suite: which descriptions sit
    /// on a knife-edge?
    Stress(Box<cmd::stress::StressArgs>),
    /// Draft a routing suite (`suite init`, or `suite import` from production logs) or validate one
    /// against a tools file (`suite check`).
    Suite(cmd::suite::SuiteArgs),
    /// After the merge: plan a rollout of changed definitions to a growing share of sessions
    /// (`canary plan`), or print the version a session gets (`canary bucket`).
    Canary(cmd::canary::CanaryArgs),
    /// Judge a rollout from production logs: rollback, promote or continue, with tests valid
    /// however often it is run.
    #[command(after_help = cmd::canary::WATCH_EXIT_CODES)]
    Watch(Box<cmd::canary::WatchArgs>),
    /// Print shell completions for bash, zsh, fish, elvish or powershell.
    Completions(cmd::completions::CompletionsArgs),
    /// Print the man page (roff): `driftgate manpage > driftgate.1`.
    Manpage,
}

pub async fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Diff(a) => cmd::diff::run(*a).await,
        Command::Check(a) => cmd::check::run(*a).await,
        Command::Fix(a) => cmd::fix::run(*a).await,
        Command::Lock(a) => cmd::lock::run(a).await,
        Command::Embed(a) => cmd::embed::run(a).await,
        Command::Lint(a) => cmd::lint::run(*a).await,
        Command::Comment(a) => cmd::comment::run(a).await,
        Command::Merge(a) => cmd::merge::run(*a).await,
        Command::Stress(a) => cmd::stress::run(*a).await,
        Command::Suite(a) => cmd::suite::run(a).await,
        Command::Canary(a) => cmd::canary::run(a).await,
        Command::Watch(a) => cmd::canary::watch(*a).await,
        Command::Completions(a) => cmd::completions::completions(a),
        Command::Manpage => cmd::completions::manpage(),
    }
}

/// The process: parse, run on a fresh runtime, print the error, exit with its code.
pub fn main() -> i32 {
    process::tune_process();
    // Before anything can print: every credential in the environment is masked in every output.
    crate::http::secret::hold(settings::env_secrets());
    let cli = Cli::parse();
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return exit::INCOMPLETE;
        }
    };
    let code = match rt.block_on(run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", console::message_safe(&e.to_string()));
            e.exit_code()
        }
    };
    // Nothing a server command started outlives us (see app::process::guard).
    crate::source::live::sweep();
    // Do not wait for lingering child-process reapers or HTTP pools.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    code
}
