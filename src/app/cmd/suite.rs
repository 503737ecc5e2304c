//! `driftgate suite init` (draft a suite), `driftgate suite import` (draft one from production
//! logs) and `driftgate suite check` (validate one).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::app::console::{Progress, Terminal};
use crate::app::flags::{CacheArgs, EmbedArgs, LiveArgs, ModelArgs, choice};
use crate::app::settings::RouterSettings;
use crate::app::{config, output, settings, sides};
use crate::choice::Choice;
use crate::console::Console;
use crate::error::{Error, Result, exit};
use crate::job;
use crate::job::import::ImportOptions;
use crate::job::suite::Drafter;
use crate::report::render::terminal;
use crate::report::render::{Format, Options};
use crate::route::semantic::SemanticRouter;
use crate::source::Spec;
use crate::suite::check;
use crate::suite::import::LogFormat;
use crate::suite::{draft, import};

#[derive(Debug, Args)]
pub struct SuiteArgs {
    #[command(subcommand)]
    pub command: SuiteCommand,
}

#[derive(Debug, Subcommand)]
pub enum SuiteCommand {
    /// Draft a routing suite from a tools file: review it, then freeze it.
    Init(Box<InitArgs>),
    /// Draft a suite from production logs (OpenAI, Anthropic, OpenTelemetry GenAI): each user
    /// turn with the tool the model called, marked `review: true` until a human confirms it.
    Import(Box<ImportArgs>),
    /// Validate a suite against a tools file (unknown tools, duplicate ids, unsatisfiable cases).
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Log files: OpenAI or Anthropic {request, response} JSON lines, their batch input and output
    /// files, or OpenTelemetry GenAI spans exported as OTLP/JSON.
    #[arg(required = true, value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// Where to write the suite (.yaml, or .jsonl for JSON lines) [default: stdout, YAML].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite an existing output file.
    #[arg(long)]
    pub force: bool,
    /// The logs' format [default: detected per file from its first record].
    #[arg(long, value_parser = choice::<LogFormat>())]
    pub format: Option<LogFormat>,
    /// Cases kept per expected tool (and for answers without a call), chosen with --seed; 0 keeps all.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub per_tool: usize,
    /// Seed of the per-tool choice.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Earlier user/assistant turns kept before each prompt as its `history`.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub history: usize,
    /// Two prompts (after the same history, expecting the same tool) whose embeddings are at least
    /// this cosine apart are near-duplicates: the later one is dropped.
    #[arg(long, value_name = "COSINE", default_value_t = 0.95)]
    pub dedupe_threshold: f32,
    /// Drop exact duplicates only (case and spacing aside): no embedder.
    #[arg(long)]
    pub no_embed: bool,
    /// A malformed record fails the import (exit 2) instead of being skipped and counted.
    #[arg(long)]
    pub strict: bool,
    /// The server the suite is for (a file, REV:PATH or a lockfile): a logged call to a tool it
    /// lacks proposes nothing, and requests that offered another tool list are counted.
    #[arg(long, value_name = "PATH")]
    pub tools: Option<String>,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub embed: EmbedArgs,
    #[command(flatten)]
    pub live: LiveArgs,
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

/// A suite is a frozen instrument: an existing file is not overwritten without `--force`.
fn refuse_overwrite(output: Option<&Path>, force: bool) -> Result<()> {
    match output {
        Some(p) if p.exists() && !force => Err(Error::Usage(format!(
            "{}: exists; a suite is a frozen instrument, so it is not overwritten without --force",
            p.display()
        ))),
        _ => Ok(()),
    }
}

async fn init(a: InitArgs) -> Result<i32> {
    refuse_overwrite(a.output.as_deref(), a.force)?;
    if a.per_tool == 0 && a.none_cases == 0 {
        return Err(Error::Usage(
            "nothing to draft: --per-tool and --none are both 0".into(),
        ));
    }
    let cfg = config::load(a.model.config.as_deref())?;
    let loaded = sides::load_noted(&Spec::parse(&a.tools), &settings::live(&a.live)?).await?;
    if loaded.tools.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no tools to draft for",
            loaded.label
        )));
    }
    let cache = settings::cache_noted(&a.model.cache, &cfg);
    let embedder = settings::embedder(&a.model.embed, &cache)?;
    let r = RouterSettings::resolve(&a.model.router, &cfg)?;
    let semantic = SemanticRouter::new(embedder.clone(), r.semantic_options());
    let console = Terminal::new(Progress::Off);
    let llm = if a.llm {
        Some(r.drafter("suite init --llm", &cache)?)
    } else {
        None
    };
    let drafter = match &llm {
        Some(llm) => Drafter::Model(llm),
        None => Drafter::Offline {
            embedder: embedder.as_ref(),
        },
    };
    let drafted = job::suite::draft(
        &loaded.tools,
        &semantic,
        drafter,
        a.per_tool,
        a.none_cases,
        &console,
    )
    .await?;
    let out_name = a
        .output
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "SUITE".into());
    let jsonl = a
        .output
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "jsonl"));
    let text = drafted.render(&a.tools, &loaded.tools, &out_name, jsonl);
    output::deliver(a.output.as_deref(), &text)?;
    if let Some(p) = &a.output {
        console.note(&format!(
            "wrote {} ({} cases, {} with a note to review first); review it, then freeze it",
            p.display(),
            drafted.drafts.len(),
            drafted.noted()
        ));
    }
    if let Some(o) = &drafted.overlap {
        console.note(&format!(
            "wording: a drafted prompt shares {:.0}% of its words with its tool's description on average ({} of {} at {:.0}% or more); replace those with what your users really type",
            o.mean * 100.0,
            o.echoing,
            o.cases,
            check::ECHO_OVERLAP * 100.0
        ));
    }
    Ok(exit::PASS)
}

async fn check(a: CheckArgs) -> Result<i32> {
    let loaded = sides::load_noted(&Spec::parse(&a.tools), &settings::live(&a.live)?).await?;
    let text = crate::fs::read_text(&a.suite, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
        .map_err(|e| Error::io(&a.suite, e))?;
    let source = a.suite.display().to_string();
    let base_dir = a.suite.parent().unwrap_or(Path::new("."));
    let r = job::suite::check(&text, &source, base_dir, &loaded.tools, &loaded.label);
    let out = a
        .format
        .renderer()
        .suite_check(&r, &Options::default())
        .expect("--format offers only formats that render suite check");
    output::deliver(a.output.as_deref(), &out)?;
    Ok(if r.errors > 0 { exit::FAIL } else { exit::PASS })
}

/// Every log into `reader`. A log is read whole up to the input cap; a larger regular file is
/// streamed as JSON lines (production logs grow past any cap; a document that large is not read).
pub(crate) fn read_logs(reader: &mut import::Reader, logs: &[PathBuf]) -> Result<()> {
    for p in logs {
        let label = p.display().to_string();
        let large =
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > crate::fs::MAX_INPUT_BYTES);
        if large {
            reader
                .lines(&label, || {
                    std::fs::File::open(p).map(|f| std::io::BufReader::with_capacity(1 << 20, f))
                })
                .map_err(|e| Error::io(p, e))?;
        } else {
            let text = crate::fs::read_text(p, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
                .map_err(|e| Error::io(p, e))?;
            reader.text(&label, &text);
        }
    }
    Ok(())
}

async fn import(a: ImportArgs) -> Result<i32> {
    refuse_overwrite(a.output.as_deref(), a.force)?;
    if !(a.dedupe_threshold > 0.0 && a.dedupe_threshold <= 1.0) {
        return Err(Error::Usage(format!(
            "--dedupe-threshold {}: expected a cosine in (0, 1]",
            a.dedupe_threshold
        )));
    }
    let tools = match &a.tools {
        Some(t) => {
            let loaded = sides::load_noted(&Spec::parse(t), &settings::live(&a.live)?).await?;
            Some((loaded.tools, loaded.label))
        }
        None => None,
    };
    let mut reader = import::Reader::new(a.format, a.history);
    read_logs(&mut reader, &a.logs)?;
    let embedder = if a.no_embed {
        None
    } else {
        let cfg = config::load(None)?;
        Some(settings::embedder(
            &a.embed,
            &settings::cache_noted(&a.cache, &cfg),
        )?)
    };
    let opts = ImportOptions {
        format: a.format,
        max_history: a.history,
        per_tool: a.per_tool,
        seed: a.seed,
        threshold: (!a.no_embed).then_some(a.dedupe_threshold),
        tools,
    };
    let imported =
        crate::job::import::propose_suite(reader.finish(), &opts, embedder.as_deref()).await?;
    let console = Terminal::new(Progress::Off);
    let s = &imported.summary;
    if a.strict && !s.malformed.is_empty() {
        for line in terminal::import::malformed(s) {
            console.note(&line);
        }
        return Err(Error::Usage(format!(
            "{} malformed record{} (--strict); the first: {}: {}",
            s.malformed.len(),
            if s.malformed.len() == 1 { "" } else { "s" },
            s.malformed[0].0,
            s.malformed[0].1
        )));
    }
    for line in terminal::import::summary(s, a.per_tool) {
        console.note(&line);
    }
    if imported.drafts.is_empty() {
        return Err(Error::Usage(format!(
            "no case to import: {} record{} read, none a user turn with its answer (see above)",
            s.records,
            if s.records == 1 { "" } else { "s" }
        )));
    }
    let out_name = a
        .output
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "SUITE".into());
    let sources: Vec<String> = s
        .files
        .iter()
        .map(|(f, fmt)| format!("{f} ({})", fmt.map(Choice::name).unwrap_or("unrecognised")))
        .collect();
    let head = draft::import_header(&sources, &out_name);
    let jsonl = a
        .output
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "jsonl"));
    let text = if jsonl {
        draft::render_jsonl(&head, &imported.drafts)
    } else {
        draft::render_yaml(&head, &imported.drafts)
    };
    output::deliver(a.output.as_deref(), &text)?;
    if let Some(p) = &a.output {
        console.note(&format!(
            "wrote {} ({} cases, every one marked `review: true`); review it, then freeze it",
            p.display(),
            imported.drafts.len()
        ));
    }
    Ok(exit::PASS)
}

pub async fn run(a: SuiteArgs) -> Result<i32> {
    match a.command {
        SuiteCommand::Init(i) => init(*i).await,
        SuiteCommand::Import(i) => import(*i).await,
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
