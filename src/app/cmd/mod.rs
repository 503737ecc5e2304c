//! One module per subcommand: its flags, and turning them into one library call.

pub mod check;
pub mod comment;
pub mod diff;
pub mod embed;
pub mod lint;
pub mod lock;
pub mod stress;
pub mod suite;

use crate::app::args::{GithubArgs, OutputArgs};
use crate::app::{output, settings};
use crate::console::Console;
use crate::error::Result;
use crate::report::Report;

/// After `check` or `diff`: the runner's context into the report, the report out, then the PR
/// comment, summary and step outputs. The exit code is the verdict's.
async fn deliver(
    mut report: Report,
    out: &OutputArgs,
    github: &GithubArgs,
    console: &dyn Console,
) -> Result<i32> {
    let actions = settings::actions();
    let publish = settings::publish(github, &actions);
    crate::github::attach(&mut report, &publish, &actions);
    output::emit(&report, out, console)?;
    crate::github::publish(&report, &publish, &actions, console).await;
    Ok(report.verdict.exit_code())
}
