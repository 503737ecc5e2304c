//! `driftgate suite init` (draft a suite) and `driftgate suite check` (validate one).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::app::args::{LiveArgs, ModelArgs};
use crate::app::console::{Progress, Terminal};
use crate::app::settings::RouterSettings;
use crate::app::{config, output, settings};
use crate::canon::hash_str;
use crate::choice::Choice;
use crate::console::Console;
use crate::draft;
use crate::error::{Error, Result, exit};
use crate::report::render::{Format, Options};
use crate::route::Router;
use crate::route::semantic::SemanticRouter;
use crate::source::{self, Spec};
use crate::suite::check;

#[derive(Debug, Args)]
pub struct SuiteArgs {
    #[command(subcommand)]
    pub command: SuiteCommand,
}

#[derive(Debug, Subcommand)]
pub enum SuiteCommand {
    /// Draft a routing suite from a tools file: review it, then freeze it.
    Init(Box<InitArgs>),
    /// Validate a suite against a tools file (unknown tools, duplicate ids, unsatisfiable cases).
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Tools to draft prompts for: a file, REV:PATH or a lockfile.
    #[arg(long, value_name = "PATH")]
    pub tools: String,
    /// Where to write the suite (.yaml, or .jsonl for JSON lines) [default: stdout, YAML].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite an existing output file (a frozen suite is an instrument: not by accident).
    #[arg(long)]
    pub force: bool,
    /// Prompts per tool.
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub per_tool: usize,
    /// Prompts that should call no tool.
    #[arg(long = "none", value_name = "N", default_value_t = 4)]
    pub none_cases: usize,
    /// Draft with the configured model (--model, --base-url; --router anthropic for Claude) instead of templates.
    #[arg(long)]
    pub llm: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub live: LiveArgs,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The tools the suite must measure: a file, REV:PATH or a lockfile.
    #[arg(long, value_name = "PATH")]
    pub tools: String,
    /// The suite (YAML or JSONL).
    pub suite: PathBuf,
    /// Output format: terminal or json.
    #[arg(long, value_parser = check_format(), default_value = "terminal")]
    pub format: Format,
    /// Write the result to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub live: LiveArgs,
}

async fn init(a: InitArgs) -> Result<i32> {
    if let Some(p) = &a.output
        && p.exists()
        && !a.force
    {
        return Err(Error::Usage(format!(
            "{}: exists; a suite is a frozen instrument, so it is not overwritten without --force",
            p.display()
        )));
    }
    if a.per_tool == 0 && a.none_cases == 0 {
        return Err(Error::Usage(
            "nothing to draft: --per-tool and --none are both 0".into(),
        ));
    }
    let cfg = config::load(a.model.config.as_deref())?;
    let loaded = source::load(&Spec::parse(&a.tools), &settings::live(&a.live)?).await?;
    if loaded.tools.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no tools to draft for",
            loaded.label
        )));
    }
    let cache = settings::cache(&a.model.cache, &cfg);
    let embedder = settings::embedder(&a.model.embed, &cache)?;
    let r = RouterSettings::resolve(&a.model.router, &cfg)?;
    let semantic = SemanticRouter::new(embedder.clone(), r.none_threshold);
    let console = Terminal::new(Progress::Off);
    let (drafts, drafted_by) = if a.llm {
        let llm = r.drafter("suite init --llm", &cache)?;
        let d = draft::draft_llm(
            &llm,
            &loaded.tools,
            &semantic,
            a.per_tool,
            a.none_cases,
            &console,
        )
        .await?;
        let by = format!(
            "model {} at {}, prompt {} ({}); notes from the semantic router ({})",
            llm.model(),
            llm.host(),
            draft::PROMPT_FILE,
            &hash_str(draft::PROMPT)[..19],
            semantic.model()
        );
        (d, by)
    } else {
        let d = draft::draft_offline(
            &loaded.tools,
            &semantic,
            embedder.as_ref(),
            a.per_tool,
            a.none_cases,
        )
        .await?;
        let by = format!(
            "offline templates from the descriptions, picked with the semantic router ({})",
            semantic.model()
        );
        (d, by)
    };
    let out_name = a
        .output
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "SUITE".into());
    let head = draft::header(&a.tools, &loaded.tools, &drafted_by, &out_name);
    let jsonl = a
        .output
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "jsonl"));
    let text = if jsonl {
        draft::render_jsonl(&head, &drafts)
    } else {
        draft::render_yaml(&head, &drafts)
    };
    let notes = drafts.iter().filter(|d| d.note.is_some()).count();
    match &a.output {
        Some(p) => {
            output::write(p, &text)?;
            console.note(&format!(
                "wrote {} ({} cases, {notes} with a note to review first); review it, then freeze it",
                p.display(),
                drafts.len()
            ));
        }
        None => console.out(&text),
    }
    Ok(exit::PASS)
}

async fn check(a: CheckArgs) -> Result<i32> {
    let loaded = source::load(&Spec::parse(&a.tools), &settings::live(&a.live)?).await?;
    let text = crate::fs::read_text(&a.suite, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
        .map_err(|e| Error::io(&a.suite, e))?;
    let source = a.suite.display().to_string();
    let base_dir = a.suite.parent().unwrap_or(Path::new("."));
    let mut r = check::check_text(&text, &source, base_dir, &loaded.tools, &loaded.label);
    // What the suite can see at the gate's default thresholds, for a typical 80% base accuracy.
    let t = crate::gate::CheckThresholds::default();
    let assumed = 0.8;
    r.min_detectable_drop = crate::stats::min_detectable_drop(
        r.cases,
        assumed,
        t.tolerance,
        t.require_significance,
        0.8,
    )
    .map(|drop| check::DetectableDrop {
        drop,
        assumed_base_accuracy: assumed,
    });
    let out = a
        .format
        .renderer()
        .suite_check(&r, &Options::default())
        .expect("--format offers only formats that render suite check");
    output::deliver(a.output.as_deref(), &out, &Terminal::new(Progress::Off))?;
    Ok(if r.errors > 0 { exit::FAIL } else { exit::PASS })
}

pub async fn run(a: SuiteArgs) -> Result<i32> {
    match a.command {
        SuiteCommand::Init(i) => init(*i).await,
        SuiteCommand::Check(c) => check(c).await,
    }
}

/// The formats that render `suite check`.
fn check_format() -> impl clap::builder::TypedValueParser<Value = Format> {
    clap::builder::TypedValueParser::map(
        clap::builder::PossibleValuesParser::new(["terminal", "json"]),
        |name| Format::from_name(&name).expect("a registered format"),
    )
}
