//! `driftgate lint TOOLS`.

use clap::Args;

use crate::app::config::{self, RouterKind};
use crate::app::flags::{LiveArgs, ModelArgs, OutputArgs, SourceArgs, choice};
use crate::app::settings::RouterSettings;
use crate::app::{output, settings, sides};
use crate::error::{Error, Result};
use crate::injection::FailOn;
use crate::job::{self, check::LintModel, lint::LintInputs};
use crate::lint::LintOptions;

pub const EXIT_CODES: &str = "\
Exit codes:
  0  pass: lint is a heuristic and passes whatever it finds, unless --strict
  1  an injection finding at or above --scan-fail-on, or --strict and a hard gate or a
     confusable pair was found
  2  usage or input error (bad flag, unreadable or malformed file)
  3  incomplete: --llm could not score a tool (the model never gave a valid answer, or the
     router failed after retries); never a pass";

#[derive(Debug, Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Fail (exit 1) on hard gates and confusable pairs; by default lint only reports them.
    #[arg(long)]
    pub strict: bool,
    /// Fail (exit 1) on an injection-scan finding at or above this [default: high].
    #[arg(long, value_parser = choice::<FailOn>())]
    pub scan_fail_on: Option<FailOn>,
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
    pub model: ModelArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub async fn run(a: LintArgs) -> Result<i32> {
    let cfg = config::load(a.model.config.as_deref())?;
    if let Some(t) = a.threshold
        && !(0.0..=1.0).contains(&t)
    {
        return Err(Error::Usage(format!(
            "--threshold {t}: expected a score between 0 and 1"
        )));
    }
    let r = RouterSettings::resolve(&a.model.router, &cfg)?;
    if a.llm && !matches!(r.kind, Some(RouterKind::Openai | RouterKind::Anthropic)) {
        return Err(Error::Usage(
            "--llm needs a model: --router openai|anthropic --model M (or [router] in driftgate.toml)"
                .into(),
        ));
    }
    let spec = a.source.spec()?;
    let loaded = sides::load_noted(&spec, &settings::live(&a.live)?).await?;
    let cache = settings::cache_noted(&a.model.cache, &cfg);
    let embedder = match a.no_embed {
        true => None,
        false => Some(settings::embedder(&a.model.embed, &cache)?),
    };
    let model = match a.llm {
        true => Some(LintModel {
            router: r.router(None)?,
            cache: cache.clone(),
            concurrency: r.concurrency(settings::Use::Lint),
            retry: r.retry(),
        }),
        false => None,
    };
    let report = job::lint::run(LintInputs {
        loaded,
        embedder,
        options: LintOptions {
            threshold: a.threshold,
        },
        model,
        scan_allow: cfg.scan.allow.clone(),
        scan_fail_on: a.scan_fail_on.or(cfg.scan.fail_on).unwrap_or_default(),
        strict: a.strict,
    })
    .await?;
    output::emit(&report, &a.out)?;
    Ok(report.verdict.exit_code())
}
