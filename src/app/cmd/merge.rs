//! `driftgate merge PART...`: the partial reports of `check --shard i/n` as one report.

use std::path::PathBuf;

use clap::Args;

use crate::app::console::{Progress, Terminal};
use crate::app::flags::{GateArgs, GithubArgs, OutputArgs};
use crate::app::policy::Policy;
use crate::app::settings;
use crate::error::{Error, Result};
use crate::job::merge::{self, Part};
use crate::report::Report;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The parts' JSON reports (`check --shard I/N --json-out FILE`), all N of them, any order.
    #[arg(required = true, value_name = "PART")]
    pub parts: Vec<PathBuf>,
    /// The base revision whose config judges the merged run [default: the pull request's base
    /// in a GitHub pull_request run; else the work tree's config].
    #[arg(long, value_name = "REV")]
    pub base_ref: Option<String>,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub github: GithubArgs,
}

pub async fn run(a: MergeArgs) -> Result<i32> {
    let rev = a.base_ref.clone().or_else(crate::app::sides::pr_base);
    let policy = Policy::resolve(
        a.gate.config.as_deref(),
        rev.as_deref(),
        a.gate.trust_head_policy,
    )?;
    let thresholds = settings::thresholds(&a.gate, &policy.config)?;
    let (key, _) = settings::mac_key(settings::actions().active);
    let mut parts = Vec::with_capacity(a.parts.len());
    for path in &a.parts {
        let text = crate::fs::read_text(path, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
            .map_err(|e| Error::io(path, e))?;
        let source = path.display().to_string();
        let report = Report::from_json(&text, &source)?;
        parts.push(Part { source, report });
    }
    let mut report = merge::merge(parts, &key, &thresholds)?;
    report.policy = policy.info();
    let console = Terminal::new(Progress::Off);
    super::deliver(report, &a.out, &a.github, &console).await
}
