//! `driftgate comment --report FILE`: post a report written by an earlier job.

use std::path::PathBuf;

use clap::Args;

use crate::app::console::{Progress, Terminal};
use crate::app::flags::choice;
use crate::app::settings;
use crate::error::{Error, Result};
use crate::github::{self, CommentMode, CommentRequest};
use crate::http::secret::Secret;
use crate::report::Report;

#[derive(Debug, Clone, Args)]
pub struct CommentArgs {
    /// The JSON report (`--report-path` / `--format json` of `check` or `diff`).
    #[arg(long, value_name = "FILE")]
    pub report: PathBuf,
    /// Pull request number [default: the report's].
    #[arg(long)]
    pub pr: Option<u64>,
    /// When to post [default: auto]; see `check --comment`.
    #[arg(long, value_parser = choice::<CommentMode>(), default_value = "auto")]
    pub comment: CommentMode,
    /// Environment variable holding the GitHub token.
    #[arg(long, value_name = "NAME", default_value = "GITHUB_TOKEN")]
    pub github_token_env: String,
    /// Link to the full report [default: the run that made the report].
    #[arg(long, value_name = "URL")]
    pub report_url: Option<String>,
}

pub async fn run(a: CommentArgs) -> Result<i32> {
    let text = crate::fs::read_text(&a.report, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
        .map_err(|e| Error::io(&a.report, e))?;
    let source = a.report.display().to_string();
    let report = crate::app::output::masked(Report::from_json(&text, &source)?);
    let request = CommentRequest {
        source,
        pr: a.pr,
        mode: a.comment,
        token: {
            let t = settings::env(&a.github_token_env).map(Secret::new);
            crate::http::secret::hold(t.clone());
            t
        },
        token_env: a.github_token_env.clone(),
        report_url: a.report_url.clone(),
    };
    let console = Terminal::new(Progress::Off);
    github::post_report(&report, &request, &settings::actions(), &console).await
}
