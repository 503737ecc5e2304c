//! One module per subcommand: its flags, and turning them into one library call.

pub mod canary;
pub mod check;
pub mod comment;
pub mod completions;
pub mod diff;
pub mod embed;
pub mod fix;
pub mod lint;
pub mod lock;
pub mod merge;
pub mod stress;
pub mod suite;

use crate::app::flags::{GithubArgs, OutputArgs};
use crate::app::{output, settings};
use crate::console::Console;
use crate::error::Result;
use crate::report::Report;

/// What the run learnt beside the measurement, into the report: where the policy came from and
/// what the PR changed about it, and the cache entries refused as unauthentic.
fn finish(report: &mut Report, policy: &crate::app::policy::Policy, cache: &crate::cache::Cache) {
    report.policy = policy.info();
    let rejected = cache.rejected();
    if rejected > 0 {
        report.notes.push(format!(
            "{rejected} cache entr{} failed authentication (not written by a run holding this job's key, or written while this run was going) and {} ignored: the answers were asked again.",
            if rejected == 1 { "y" } else { "ies" },
            if rejected == 1 { "was" } else { "were" }
        ));
    }
}

/// After `check` or `diff`: the runner's context into the report, the report out, then the PR
/// comment, summary and step outputs. The exit code is the verdict's — but for a shard's partial
/// report, which posts no comment and no annotations (the merge does, once) and exits 0 unless
/// its measurement is incomplete: its verdict covers some cases only.
async fn deliver(
    report: Report,
    out: &OutputArgs,
    github: &GithubArgs,
    console: &dyn Console,
) -> Result<i32> {
    let mut report = output::masked(report);
    let actions = settings::actions();
    let mut publish = settings::publish(github, &actions);
    let part = report.shard.is_some();
    if part {
        publish.comment = crate::github::CommentMode::Never;
        publish.annotations = false;
    }
    crate::github::attach(&mut report, &publish, &actions);
    // A partial report is signed last, over exactly what is written: merge verifies it.
    if part {
        let (key, ephemeral) = settings::mac_key(actions.active);
        if ephemeral.is_some() {
            report.notes.push(format!(
                "${} is not set: this part is signed with a key of this process only, so `driftgate merge` will refuse it. Give every shard job and the merge job the same repository secret.",
                settings::KEY_ENV
            ));
        }
        report.sign_part(&key);
    }
    output::emit(&report, out)?;
    crate::github::publish(&report, &publish, &actions, console).await;
    Ok(match report.verdict.status {
        crate::gate::Status::Incomplete => crate::error::exit::INCOMPLETE,
        _ if part => crate::error::exit::PASS,
        _ => report.verdict.exit_code(),
    })
}
