//! `driftgate lint TOOLS`.

use std::path::PathBuf;

use clap::Args;

use crate::app::args::{CacheArgs, EmbedArgs, LiveArgs, OutputArgs, RouterArgs};
use crate::app::config::{self, RouterKind};
use crate::app::console::{Progress, Terminal};
use crate::app::settings::RouterSettings;
use crate::app::{output, settings, sides};
use crate::diff::Diff;
use crate::error::{Error, Result};
use crate::gate::{self, CheckThresholds};
use crate::lint::{self, LintOptions, LintSection, llm};
use crate::report::{self, Command, Report, Side};
use crate::source;

pub const EXIT_CODES: &str = "\
Exit codes:
  0  pass: lint is a heuristic and passes whatever it finds, unless --strict
  1  --strict and a hard gate or a confusable pair was found
  2  usage or input error (bad flag, unreadable or malformed file)
  3  incomplete: --llm could not score a tool (the model never gave a valid answer, or the
     router failed after retries); never a pass";

#[derive(Debug, Args)]
pub struct LintArgs {
    /// Tool set: a file (tools/list result, bare array, lockfile) or REV:PATH.
    #[arg(required_unless_present_any = ["server_cmd", "server_url"], conflicts_with_all = ["server_cmd", "server_url"])]
    pub tools: Option<String>,
    /// Lint what this MCP server (stdio) lists.
    #[arg(long, value_name = "CMD", conflicts_with = "server_url")]
    pub server_cmd: Option<String>,
    /// Lint a streamable-HTTP MCP server.
    #[arg(long, value_name = "URL")]
    pub server_url: Option<String>,
    /// Fail (exit 1) on hard gates and confusable pairs; by default lint only reports.
    #[arg(long)]
    pub strict: bool,
    /// Flag pairs scoring at or above this [default: 0.40 with embeddings, 0.39 without].
    #[arg(long, value_name = "SCORE")]
    pub threshold: Option<f64>,
    /// Score the six TDQS dimensions with the configured router's model (--router openai|anthropic).
    #[arg(long)]
    pub llm: bool,
    /// Compare descriptions by words only (no embedding model).
    #[arg(long)]
    pub no_embed: bool,
    #[command(flatten)]
    pub embed: EmbedArgs,
    /// Config file for router settings (default: ./driftgate.toml when present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub router: RouterArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub async fn run(a: LintArgs) -> Result<i32> {
    let cfg = config::load(a.config.as_deref())?;
    if let Some(t) = a.threshold
        && !(0.0..=1.0).contains(&t)
    {
        return Err(Error::Usage(format!(
            "--threshold {t}: expected a score between 0 and 1"
        )));
    }
    let r = RouterSettings::resolve(&a.router, &cfg)?;
    if a.llm && !matches!(r.kind, Some(RouterKind::Openai | RouterKind::Anthropic)) {
        return Err(Error::Usage(
            "--llm needs a model: --router openai|anthropic --model M (or [router] in driftgate.toml)"
                .into(),
        ));
    }
    let spec = sides::side_spec(a.tools.as_ref(), &a.server_cmd, &a.server_url, "")
        .map_err(|_| Error::Usage("lint needs TOOLS or --server-cmd".into()))?;
    let loaded = source::load(&spec, &settings::live(&a.live)?).await?;
    let cache = settings::cache(&a.cache, &cfg);
    let embedder = match a.no_embed {
        true => None,
        false => Some(settings::embedder(&a.embed, &cache)?),
    };
    let opts = LintOptions {
        threshold: a.threshold,
    };
    let analysis = lint::analyse(&loaded.tools, embedder.as_deref(), &opts).await?;
    let quality = analysis.tools.clone();
    let mut section = LintSection::full(analysis);
    if a.llm {
        let router = r.router(None)?;
        section.llm = Some(
            llm::score(
                &loaded.tools,
                &quality,
                router.as_ref(),
                &cache,
                r.concurrency.unwrap_or(4),
                &r.retry(),
            )
            .await,
        );
    }
    let verdict = gate::lint_verdict(&section, a.strict);
    let side = Side::of(&loaded);
    let report = Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: report::VERSION.to_string(),
        command: Command::Lint,
        verdict,
        base: side.clone(),
        head: side,
        thresholds: CheckThresholds::default(),
        diff: Diff {
            tools: Vec::new(),
            unchanged: loaded.tools.len(),
        },
        drift: None,
        routing: None,
        suite: None,
        router: None,
        notes: Vec::new(),
        lint: Some(section),
        github: None,
    };
    output::emit(&report, &a.out, &Terminal::new(Progress::Off))?;
    Ok(report.verdict.exit_code())
}
