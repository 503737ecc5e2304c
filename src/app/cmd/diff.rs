//! `driftgate diff OLD NEW`.

use clap::Args;

use crate::app::console::{Progress, Terminal};
use crate::app::flags::CompareArgs;
use crate::app::policy::Policy;
use crate::app::{settings, sides};
use crate::error::Result;
use crate::job::check::{self, CheckInputs};
use crate::report::Command;
use crate::source::Spec;

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Base tool set: a file, REV:PATH, or a lockfile. Omit with --tools to compare a file across refs.
    #[arg(conflicts_with = "tools")]
    pub old: Option<String>,
    /// Head tool set: a file, REV:PATH, or a lockfile.
    #[arg(conflicts_with = "tools")]
    pub new: Option<String>,
    #[command(flatten)]
    pub c: CompareArgs,
}

pub async fn run(d: DiffArgs) -> Result<i32> {
    let a = &d.c;
    let (base_spec, head_spec) = sides::side_specs(d.old.as_ref(), d.new.as_ref(), &a.sides)?;
    let rev = sides::policy_revision(&base_spec, &a.sides);
    let policy = Policy::resolve(
        a.gate.config.as_deref(),
        rev.as_deref(),
        a.gate.trust_head_policy,
    )?;
    compare(a, base_spec, head_spec, policy).await
}

/// The diff of two sides under `policy` (also `check --suite-optional` without a suite).
pub async fn compare(a: &CompareArgs, base: Spec, head: Spec, policy: Policy) -> Result<i32> {
    let cfg = &policy.config;
    let thresholds = settings::thresholds(&a.gate, cfg)?;
    // The cache before the sides load (see check): a server cannot plant entries it then reads.
    let (cache, mut notes) =
        settings::cache(&a.gate.cache, cfg, sides::starts_server(&[&base, &head]));
    let live = settings::live(&a.live)?;
    let embedder = settings::drift_embedder(&a.gate, &cache)?;
    // Every setting is resolved; now the inputs.
    let (base, head, masked) = sides::load_sides(&base, &head, &live).await?;
    notes.extend(masked);
    let console = Terminal::new(Progress::detect());
    let inputs = CheckInputs {
        base,
        head,
        thresholds,
        embedder,
        replay: None,
        notes,
        scan_allow: cfg.scan.allow.clone(),
        lint_model: None,
    };
    let mut report = check::run(Command::Diff, inputs, &console).await?;
    super::finish(&mut report, &policy, &cache);
    super::deliver(report, &a.out, &a.github, &console).await
}
