//! One module per subcommand: its flags, and turning them into one library call.

pub mod check;
pub mod comment;
pub mod diff;
pub mod embed;
pub mod lint;
pub mod lock;
pub mod merge;
pub mod stress;
pub mod suite;

use crate::app::args::{GithubArgs, OutputArgs};
use crate::app::{output, settings};
use crate::console::Console;
use crate::error::Result;
use crate::report::Report;

/// After `check` or `diff`: the runner's context into the report, the report out, then the PR
/// comment, summary and step outputs. The exit code is the verdict's — but for a shard's partial
/// report, which posts no comment and no annotations (the merge does, once) and exits 0 unless
/// its measurement is incomplete: its verdict covers some cases only.
async fn deliver(
    mut report: Report,
    out: &OutputArgs,
    github: &GithubArgs,
    console: &dyn Console,
) -> Result<i32> {
    let actions = settings::actions();
    let mut publish = settings::publish(github, &actions);
    let part = report.shard.is_some();
    if part {
        publish.comment = crate::github::CommentMode::Never;
        publish.annotations = false;
    }
    crate::github::attach(&mut report, &publish, &actions);
    output::emit(&report, out, console)?;
    crate::github::publish(&report, &publish, &actions, console).await;
    Ok(match report.verdict.status {
        crate::gate::Status::Incomplete => crate::error::exit::INCOMPLETE,
        _ if part => crate::error::exit::PASS,
        _ => report.verdict.exit_code(),
    })
}
