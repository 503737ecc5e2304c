//! `driftgate canary plan|bucket` (the rollout file, a session's version) and `driftgate watch`
//! (the verdict from production logs).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::app::console::{Progress, Terminal};
use crate::app::flags::{LiveArgs, choice};
use crate::app::{output, settings, sides};
use crate::canary::rollout::{Arm, DEFAULT_STAGES, Rollout, bucket};
use crate::canary::traffic::{Attribute, sessions};
use crate::canary::watch::{Settings, WatchReport, watch as decide};
use crate::console::Console;
use crate::error::{Error, Result, exit};
use crate::report::watch as render;
use crate::source::Spec;
use crate::suite::import::{LogFormat, Reader};

/// `watch`'s exit codes, for its `--help`.
pub const WATCH_EXIT_CODES: &str = "Exit codes:\n  0  promote, or continue (not yet enough evidence; the report says how much more traffic)\n  1  rollback: a guarded metric moved against head\n  2  usage or input error (a bad rollout file, --strict and a malformed log record)\n  3  incomplete: one arm has no traffic, or the arms are not the split the rollout says";

#[derive(Debug, Args)]
pub struct CanaryArgs {
    #[command(subcommand)]
    pub command: CanaryCommand,
}

#[derive(Debug, Subcommand)]
pub enum CanaryCommand {
    /// Write a rollout file: each changed tool's base and head version (by definition hash), the
    /// stages and the session bucket rule.
    Plan(PlanArgs),
    /// Print the version a session gets at a stage (and its bucket).
    Bucket(BucketArgs),
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The definitions served now: a file, REV:PATH or a lockfile.
    #[arg(long, value_name = "PATH")]
    pub base: String,
    /// The definitions to roll out.
    #[arg(long, value_name = "PATH")]
    pub head: String,
    /// Percent of sessions in head at each stage, increasing, ending at 100.
    #[arg(long, value_name = "PCT,…", value_delimiter = ',', default_values_t = DEFAULT_STAGES)]
    pub stages: Vec<f64>,
    /// The bucket salt [default: derived from both sides' definitions].
    #[arg(long, value_name = "SALT")]
    pub salt: Option<String>,
    /// Where to write the rollout file [default: stdout].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub live: LiveArgs,
}

#[derive(Debug, Args)]
pub struct BucketArgs {
    /// The rollout file.
    #[arg(long, value_name = "FILE")]
    pub rollout: PathBuf,
    /// The session id.
    #[arg(long, value_name = "ID")]
    pub session: String,
    /// The stage, in percent [default: the first].
    #[arg(long, value_name = "PCT")]
    pub stage: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WatchFormat {
    Terminal,
    Json,
    Markdown,
    /// A self-contained page with each charted metric's confidence sequence over the traffic.
    Html,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The rollout file `canary plan` wrote.
    #[arg(long, value_name = "FILE")]
    pub rollout: PathBuf,
    /// Production logs: OpenTelemetry GenAI spans (OTLP/JSON), or OpenAI/Anthropic
    /// {request, response} lines (as `suite import` reads them).
    #[arg(long, required = true, num_args = 1.., value_name = "LOG")]
    pub logs: Vec<PathBuf>,
    /// The logs' format [default: detected per file].
    #[arg(long, value_parser = choice::<LogFormat>())]
    pub log_format: Option<LogFormat>,
    /// The stage the logs were served at, in percent of sessions in head.
    #[arg(long, value_name = "PCT")]
    pub stage: f64,
    /// An attribute (span attribute, or a line's `metadata` key) holding the version a request
    /// was served: a definition hash from the rollout file, or `base`/`head`.
    #[arg(long, value_name = "KEY")]
    pub version_attribute: Option<String>,
    /// An attribute naming the tool each request should have reached (`none`: no call): labels,
    /// so misrouted sessions are guarded and labelled accuracy reported per arm.
    #[arg(long, value_name = "KEY")]
    pub expected_attribute: Option<String>,
    /// An attribute carrying a user's feedback (`down`, `-1`, `negative`, `bad`, `false`:
    /// negative): sessions with negative feedback are guarded.
    #[arg(long, value_name = "KEY")]
    pub feedback_attribute: Option<String>,
    /// Family-wise false-alarm rate, valid however often the watch is run.
    #[arg(long, default_value_t = 0.05, value_name = "ALPHA")]
    pub alpha: f64,
    /// Non-inferiority margin on head's rate over base's (0.2: up to 1.2×).
    #[arg(long, default_value_t = 0.2, value_name = "M")]
    pub margin: f64,
    /// A malformed log record fails the watch (exit 2) instead of being counted.
    #[arg(long)]
    pub strict: bool,
    #[arg(long, value_enum, default_value_t = WatchFormat::Terminal)]
    pub format: WatchFormat,
    /// Where to write the report [default: stdout].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// In a GitHub Actions job: the Markdown report onto the job summary and the step outputs
    /// `decision`, `next-stage` and `hours-needed`.
    #[arg(long)]
    pub github: bool,
    /// Also write the alias map: invented tool and parameter names → the real ones, for a
    /// server's fuzzy matching (docs/canary.md, "Alias map").
    #[arg(long, value_name = "FILE")]
    pub aliases: Option<PathBuf>,
}

pub async fn run(a: CanaryArgs) -> Result<i32> {
    match a.command {
        CanaryCommand::Plan(p) => plan(p).await,
        CanaryCommand::Bucket(b) => bucket_of(b),
    }
}

async fn plan(a: PlanArgs) -> Result<i32> {
    let opts = settings::live(&a.live)?;
    let base = sides::load_noted(&Spec::parse(&a.base), &opts).await?;
    let head = sides::load_noted(&Spec::parse(&a.head), &opts).await?;
    let r = Rollout::plan(&base.tools, &head.tools, &a.stages, a.salt.as_deref())?;
    let console = Terminal::new(Progress::Off);
    console.note(&format!(
        "{} changed tool(s), stages {:?} %, salt {}",
        r.changes.len(),
        r.stages,
        r.salt
    ));
    output::deliver(a.output.as_deref(), &r.render())?;
    Ok(exit::PASS)
}

fn read_rollout(path: &PathBuf) -> Result<Rollout> {
    let text = crate::fs::read_text(path, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
        .map_err(|e| Error::io(path, e))?;
    Rollout::parse(&text, &path.display().to_string())
}

fn bucket_of(a: BucketArgs) -> Result<i32> {
    let r = read_rollout(&a.rollout)?;
    let stage = a.stage.unwrap_or(r.stages[0]);
    if !r.stages.contains(&stage) {
        return Err(Error::Usage(format!(
            "--stage {stage}: the rollout's stages are {:?}",
            r.stages
        )));
    }
    let arm = match r.arm(&a.session, stage) {
        Arm::Base => "base",
        Arm::Head => "head",
    };
    output::deliver(
        None,
        &format!(
            "{arm} (bucket {:.6}, stage {stage} %)\n",
            bucket(&r.salt, &a.session)
        ),
    )?;
    Ok(exit::PASS)
}

/// The alias map to `path` (credentials masked), and a line saying what it holds.
pub(crate) fn write_aliases(
    path: &std::path::Path,
    map: &crate::tools::alias::AliasMap,
    console: &dyn Console,
) -> Result<()> {
    let text = crate::report::render::json::aliases(map);
    output::write(path, &crate::http::secret::mask_held(&text))?;
    console.note(&format!(
        "{}: {} tool alias(es), {} parameter alias(es), {} refused",
        path.display(),
        map.tools.len(),
        map.parameters.len(),
        map.refused.len()
    ));
    Ok(())
}

/// The report onto the job summary and the decision into the step outputs; a file the runner
/// gave that cannot be written is said, never a changed exit code.
fn publish(report: &WatchReport, console: &dyn Console) {
    let actions = settings::actions();
    let md = crate::http::secret::mask_held(&render::markdown(report)).into_owned();
    let decision = serde_json::to_value(report.decision)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let outputs = [
        ("decision", decision),
        (
            "next-stage",
            report.next_stage.map(|s| s.to_string()).unwrap_or_default(),
        ),
        (
            "hours-needed",
            report
                .hours_needed
                .map(|h| format!("{h:.1}"))
                .unwrap_or_default(),
        ),
    ];
    let written = [
        actions
            .step_summary
            .as_deref()
            .map(|p| crate::github::files::append_markdown(p, &md)),
        actions
            .output
            .as_deref()
            .map(|p| crate::github::files::write_outputs(p, &outputs)),
    ];
    for e in written.into_iter().flatten().filter_map(|r| r.err()) {
        console.note(&format!("warning: {e}"));
    }
}

pub async fn watch(a: WatchArgs) -> Result<i32> {
    let r = read_rollout(&a.rollout)?;
    if !(a.stage > 0.0 && a.stage < 100.0) {
        return Err(Error::Usage(format!(
            "--stage {}: expected a percentage strictly between 0 and 100 (at 100 % no session is served base: nothing to compare)",
            a.stage
        )));
    }
    if !(a.alpha > 0.0 && a.alpha < 1.0) || a.margin <= 0.0 {
        return Err(Error::Usage(format!(
            "--alpha {} --margin {}: expected alpha in (0, 1) and a positive margin",
            a.alpha, a.margin
        )));
    }
    // The watch reads the last user turn and the calls: no history.
    let mut reader = Reader::new(a.log_format, 0);
    super::suite::read_logs(&mut reader, &a.logs)?;
    let read = reader.finish();
    let console = Terminal::new(Progress::Off);
    if !read.malformed.is_empty() {
        let (at, why) = &read.malformed[0];
        if a.strict {
            return Err(Error::Usage(format!(
                "{} malformed record(s) (--strict); the first: {at}: {why}",
                read.malformed.len()
            )));
        }
        console.note(&format!(
            "{} malformed record(s) counted and left out; the first: {at}: {why}",
            read.malformed.len()
        ));
    }
    let attribute = Attribute {
        key: a.version_attribute.clone(),
        expected: a.expected_attribute.clone(),
        feedback: a.feedback_attribute.clone(),
    };
    let traffic = sessions(&r, &read, a.stage, &attribute);
    let mut report = decide(
        &r,
        &traffic,
        &Settings {
            stage: a.stage,
            alpha: a.alpha,
            margin: a.margin,
        },
    );
    if !read.malformed.is_empty() {
        report.notes.push(format!(
            "{} malformed log record(s) left out (--strict refuses them)",
            read.malformed.len()
        ));
    }
    // Well-formed records that are neither an answer nor a call (tool executions are read for
    // their errors and counted here too): counted, with the first reason.
    if let Some((at, why)) = read.skipped.first() {
        report.notes.push(format!(
            "{} record(s) of {} skipped as no exchange; the first: {at}: {why}",
            read.skipped.len(),
            read.records
        ));
    }
    let text = match a.format {
        WatchFormat::Terminal => render::terminal(&report),
        WatchFormat::Markdown => render::markdown(&report),
        WatchFormat::Html => render::html(&report),
        WatchFormat::Json => crate::report::render::json::watch(&report),
    };
    let text = crate::http::secret::mask_held(&text);
    if let Some(path) = &a.aliases {
        // The bundled model: a few names to embed, no network, nothing to configure.
        let embedder = crate::embed::MiniLm::new();
        let map = crate::canary::aliases::map(&r, &traffic.invented, &embedder).await?;
        write_aliases(path, &map, &console)?;
    }
    output::deliver(a.output.as_deref(), &text)?;
    if a.github {
        publish(&report, &console);
    }
    Ok(report.decision.exit_code())
}
