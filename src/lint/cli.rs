//! `driftgate lint TOOLS`: arguments and the job; `crate::cli` only dispatches here.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use super::{LintOptions, LintSection, llm};
use crate::cli::{LiveArgs, OutputArgs, RouterArgs};
use crate::config::{self, RouterKind};
use crate::diff::Diff;
use crate::embed::{EmbedArgs, Embedder};
use crate::error::{Error, Result};
use crate::gate::CheckThresholds;
use crate::report::{self, Report, Side};
use crate::route::retry::RetryPolicy;
use crate::tools::load::{self, Spec};

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
    /// Cache directory for embeddings and --llm answers [default: .driftgate/cache].
    #[arg(long, value_name = "DIR", env = "DRIFTGATE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the disk cache.
    #[arg(long)]
    pub no_cache: bool,
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
    let router_kind = a.router.router.or(cfg.router.kind);
    if a.llm
        && !matches!(
            router_kind,
            Some(RouterKind::Openai | RouterKind::Anthropic)
        )
    {
        return Err(Error::Usage(
            "--llm needs a model: --router openai|anthropic --model M (or [router] in driftgate.toml)"
                .into(),
        ));
    }
    let spec = match (&a.tools, &a.server_cmd, &a.server_url) {
        (_, Some(c), _) => Spec::ServerCmd(c.clone()),
        (_, _, Some(u)) => Spec::ServerUrl(u.clone()),
        (Some(p), _, _) => Spec::parse(p),
        _ => return Err(Error::Usage("lint needs TOOLS or --server-cmd".into())),
    };
    let loaded = load::load(&spec, &a.live.options()?).await?;
    let cache_dir = (!a.no_cache).then(|| {
        a.cache_dir
            .clone()
            .or(cfg.cache.dir.clone())
            .unwrap_or_else(|| PathBuf::from(".driftgate/cache"))
    });
    let embedder: Option<Arc<dyn Embedder>> = if a.no_embed {
        None
    } else {
        let kind = a.embed.kind()?;
        Some(match &cache_dir {
            Some(dir) => Arc::new(kind.build_cached(dir.join("embed"))?),
            None => Arc::from(kind.build()?),
        })
    };
    let opts = LintOptions {
        threshold: a.threshold,
    };
    let lint = super::analyse(&loaded.tools, embedder.as_deref(), &opts).await?;
    let quality = lint.tools.clone();
    let mut section = LintSection::full(lint);
    if a.llm {
        let router = crate::cli::build_router(&a.router, &cfg, None)?;
        let policy = RetryPolicy {
            max_attempts: a.router.max_attempts.unwrap_or(4).max(1),
            ..RetryPolicy::default()
        };
        let concurrency = a.router.concurrency.or(cfg.router.concurrency).unwrap_or(4);
        section.llm = Some(
            llm::score(
                &loaded.tools,
                &quality,
                router.as_ref(),
                &llm::LlmCache::new(cache_dir.clone()),
                concurrency,
                &policy,
            )
            .await,
        );
    }
    let verdict = super::verdict(&section, a.strict);
    let side = Side::of(&loaded);
    let report = Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: env!("CARGO_PKG_VERSION"),
        command: "lint",
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
    crate::cli::emit(&report, &a.out)?;
    Ok(report.verdict.exit_code())
}
