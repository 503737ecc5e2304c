//! `driftgate merge PART...`: the partial reports of `check --shard i/n` as one report.

use std::path::PathBuf;

use clap::Args;

use crate::app::args::{GithubArgs, OutputArgs};
use crate::app::console::{Progress, Terminal};
use crate::error::{Error, Result};
use crate::job::merge::{self, Part};
use crate::report::Report;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The parts' JSON reports (`check --shard I/N --json-out FILE`), all N of them, any order.
    #[arg(required = true, value_name = "PART")]
    pub parts: Vec<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub github: GithubArgs,
}

pub async fn run(a: MergeArgs) -> Result<i32> {
    let mut parts = Vec::with_capacity(a.parts.len());
    for path in &a.parts {
        let text = crate::fs::read_text(path, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
            .map_err(|e| Error::io(path, e))?;
        let source = path.display().to_string();
        let report = Report::from_json(&text, &source)?;
        parts.push(Part { source, report });
    }
    let report = merge::merge(parts)?;
    let console = Terminal::new(Progress::Off);
    super::deliver(report, &a.out, &a.github, &console).await
}
