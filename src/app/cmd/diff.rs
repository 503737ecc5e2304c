//! `driftgate diff OLD NEW`.

use clap::Args;

use crate::app::args::CompareArgs;
use crate::app::console::{Progress, Terminal};
use crate::app::{config, settings, sides};
use crate::error::Result;
use crate::job::check::{self, CheckInputs};
use crate::report::Command;

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
    let cfg = config::load(a.gate.config.as_deref())?;
    let thresholds = settings::thresholds(&a.gate, &cfg)?;
    let (base_spec, head_spec) = sides::side_specs(d.old.as_ref(), d.new.as_ref(), &a.sides)?;
    let (base, head) = sides::load_sides(&base_spec, &head_spec, &a.live).await?;
    let cache = settings::cache(&a.gate.cache, &cfg);
    let embedder = settings::drift_embedder(&a.gate, &cache)?;
    let console = Terminal::new(Progress::detect());
    let inputs = CheckInputs {
        base,
        head,
        thresholds,
        embedder,
        replay: None,
        notes: Vec::new(),
        scan_allow: cfg.scan.allow.clone(),
        lint_model: None,
    };
    let report = check::run(Command::Diff, inputs, &console).await?;
    super::deliver(report, &a.out, &a.github, &console).await
}
