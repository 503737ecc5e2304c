//! `driftgate suite init` (draft a suite), `driftgate suite import` (draft one from production
//! logs) and `driftgate suite check` (validate one).

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::app::console::{Progress, Terminal};
use crate::app::flags::{CacheArgs, EmbedArgs, LiveArgs, ModelArgs, choice};
use crate::app::settings::RouterSettings;
use crate::app::{config, output, settings, sides};
use crate::canon::hash_str;
use crate::choice::Choice;
use crate::console::Console;
use crate::error::{Error, Result, exit};
use crate::job::import::{ImportOptions, Summary};
use crate::report::render::{Format, Options};
use crate::route::Router;
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
    let overlap = check::overlap_of(
        drafts
            .iter()
            .map(|d| (d.prompt.as_str(), d.expect.as_slice())),
        &loaded.tools,
    );
    if let Some(o) = overlap {
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

/// Lines of a list printed before the rest is counted.
const LISTED: usize = 20;

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
    if let Some(p) = &a.output
        && p.exists()
        && !a.force
    {
        return Err(Error::Usage(format!(
            "{}: exists; a suite is a frozen instrument, so it is not overwritten without --force",
            p.display()
        )));
    }
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
        listed(&console, "malformed", &s.malformed);
        return Err(Error::Usage(format!(
            "{} malformed record{} (--strict); the first: {}: {}",
            s.malformed.len(),
            if s.malformed.len() == 1 { "" } else { "s" },
            s.malformed[0].0,
            s.malformed[0].1
        )));
    }
    summarise(&console, s, a.per_tool);
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
    match &a.output {
        Some(p) => {
            output::write(p, &text)?;
            console.note(&format!(
                "wrote {} ({} cases, every one marked `review: true`); review it, then freeze it",
                p.display(),
                imported.drafts.len()
            ));
        }
        None => console.out(&text),
    }
    Ok(exit::PASS)
}

/// "1 case", "2 cases".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// `where: why` lines of a list, the first [`LISTED`] of them.
fn listed(console: &dyn Console, what: &str, items: &[(String, String)]) {
    for (at, why) in items.iter().take(LISTED) {
        console.note(&format!(
            "  {what} {}: {}",
            crate::text::tokens::ellipsis(at, 200),
            crate::text::tokens::ellipsis(why, 300)
        ));
    }
    if items.len() > LISTED {
        console.note(&format!("  … and {} more {what}", items.len() - LISTED));
    }
}

/// The logged requests that offered another tool list than `--tools`.
fn offered_note(console: &dyn Console, s: &Summary) {
    if s.offered_other == 0 {
        return;
    }
    let names = |set: &std::collections::BTreeSet<String>| {
        let v: Vec<&str> = set.iter().take(8).map(String::as_str).collect();
        let more = set.len().saturating_sub(8);
        if more > 0 {
            format!("{} and {more} more", v.join(", "))
        } else {
            v.join(", ")
        }
    };
    let mut what = Vec::new();
    if !s.offered_missing.is_empty() {
        what.push(format!("not offered: {}", names(&s.offered_missing)));
    }
    if !s.offered_extra.is_empty() {
        what.push(format!(
            "offered but not in --tools: {}",
            names(&s.offered_extra)
        ));
    }
    console.note(&format!(
        "  {} offered another tool list than --tools ({}): the production model chose among other options, so review those expectations first",
        count(s.offered_other, "logged request"),
        what.join("; ")
    ));
}

/// What the import redacted, by kind and by case (never the text itself).
fn redacted_note(console: &dyn Console, s: &Summary) {
    if s.redacted.is_empty() {
        console.note("  redacted: nothing looked like an email, key or long number");
    } else {
        let total: usize = s.redacted.values().sum();
        let kinds: Vec<String> = s
            .redacted
            .iter()
            .map(|(k, n)| format!("{n} {}", k.name()))
            .collect();
        console.note(&format!(
            "  redacted {} ({}) in {}:",
            count(total, "token"),
            kinds.join(", "),
            count(s.redacted_cases.len(), "case")
        ));
        let lines: Vec<(String, String)> = s
            .redacted_cases
            .iter()
            .map(|(id, kinds)| {
                let k: Vec<String> = kinds
                    .iter()
                    .map(|(k, n)| format!("{n} {}", k.name()))
                    .collect();
                (id.clone(), k.join(", "))
            })
            .collect();
        listed(console, "case", &lines);
    }
}

/// What the import read, kept, dropped, skipped and masked — never a masked text itself.
fn summarise(console: &dyn Console, s: &Summary, per_tool: usize) {
    let formats: Vec<String> = s
        .files
        .iter()
        .map(|(f, fmt)| format!("{f}: {}", fmt.map(Choice::name).unwrap_or("unrecognised")))
        .collect();
    console.note(&format!(
        "suite import: {} read ({})",
        count(s.records, "record"),
        formats.join(", ")
    ));
    let kept: usize = s.kept.values().sum();
    let per: Vec<String> = s.kept.iter().map(|(t, n)| format!("{t} {n}")).collect();
    console.note(&format!(
        "  {} proposed a case; kept {kept}: {}",
        count(s.exchanges, "exchange"),
        if per.is_empty() {
            "none".to_string()
        } else {
            per.join(", ")
        }
    ));
    offered_note(console, s);
    if !s.duplicates.is_empty() {
        let near = s.duplicates.iter().filter(|d| d.cosine.is_some()).count();
        console.note(&format!(
            "  dropped {} as duplicates ({} exact, {near} near)",
            s.duplicates.len(),
            s.duplicates.len() - near
        ));
        let lines: Vec<(String, String)> = s
            .duplicates
            .iter()
            .map(|d| {
                let how = match d.cosine {
                    Some(c) => format!("cosine {c:.3} to {}", d.of),
                    None => format!("the same text as {}", d.of),
                };
                (d.at.clone(), how)
            })
            .collect();
        listed(console, "duplicate", &lines);
    }
    if s.capped > 0 {
        console.note(&format!("  left out {} by --per-tool {per_tool}", s.capped));
    }
    if s.several_calls > 0 {
        console.note(&format!(
            "  {} made several calls: the first is proposed",
            count(s.several_calls, "kept answer")
        ));
    }
    if !s.inconsistent.is_empty() {
        console.note(&format!(
            "  {} answered differently on different occasions (suite check calls them contradictory until you keep one):",
            count(s.inconsistent.len(), "prompt")
        ));
        let lines: Vec<(String, String)> = s
            .inconsistent
            .iter()
            .map(|ids| (ids[0].clone(), format!("also {}", ids[1..].join(", "))))
            .collect();
        listed(console, "case", &lines);
    }
    if !s.skipped.is_empty() {
        console.note(&format!(
            "  skipped {} that make no case",
            count(s.skipped.len(), "record")
        ));
        listed(console, "skipped", &s.skipped);
    }
    if !s.malformed.is_empty() {
        console.note(&format!(
            "  skipped {} (--strict makes them fatal)",
            count(s.malformed.len(), "malformed record")
        ));
        listed(console, "malformed", &s.malformed);
    }
    redacted_note(console, s);
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
