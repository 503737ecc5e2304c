//! Command-line interface: parse, dispatch, nothing else. Each command returns its exit code.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use std::sync::Arc;

use crate::check::{self, CheckInputs, ReplayInputs};
use crate::config::{self, Config, RouterKind};
use crate::diff::{self, Severity};
use crate::embed::{EmbedArgs, Embedder};
use crate::error::{Error, Result};
use crate::gate::{self, CheckThresholds};
use crate::replay::ReplayConfig;
use crate::report::{self, OutputFormat, Report, Side};
use crate::route::cache::RouteCache;
use crate::route::retry::RetryPolicy;
use crate::route::{Router, Sampling, ToolChoice};
use crate::tools::live::LiveOptions;
use crate::tools::load::{self, Loaded, Spec};
use crate::tools::lock::{self, LockMeta};

const EXIT_CODES: &str = "\
Exit codes:
  0  pass: nothing crossed a threshold
  1  gate failed: a change at or above --fail-on, a description below --cosine-floor, or a
     routing drop beyond --tolerance
  2  usage or input error (bad flag, unreadable or malformed file)
  3  incomplete: a measurement could not be made (e.g. the server did not answer); never a pass";

#[derive(Debug, Parser)]
#[command(name = "driftgate", version, about = "CI gate for MCP tool-definition drift", after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare two tool sets: classify every change by the severity law, measure meaning drift.
    #[command(after_help = EXIT_CODES)]
    Diff(Box<DiffArgs>),
    /// The gate: diff + meaning drift + paired routing replay of a frozen suite at base and head.
    #[command(after_help = EXIT_CODES)]
    Check(Box<CheckArgs>),
    /// Write a lockfile (canonical definitions + hashes) from a live server or a tools file.
    #[command(after_help = EXIT_CODES)]
    Lock(LockArgs),
    /// Embed stdin, one text per line; prints one JSON array of vectors (one per line).
    Embed(crate::embed::EmbedArgs),
    /// Static analysis of one tool set: confusable pairs, definition quality, hard gates.
    #[command(after_help = crate::lint::cli::EXIT_CODES)]
    Lint(Box<crate::lint::cli::LintArgs>),
    /// Post a JSON report as the sticky PR comment (the `workflow_run` job for fork PRs).
    Comment(crate::github::CommentArgs),
    /// Perturb each tool with harmless-looking edits and replay the suite: which descriptions sit
    /// on a knife-edge?
    Stress(Box<crate::stress::StressArgs>),
    /// Draft a routing suite (`suite init`) or validate one against a tools file (`suite check`).
    Suite(crate::bootstrap::SuiteArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

/// How to reach live servers.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// Seconds to wait for a live server to answer initialize + tools/list.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub timeout: u64,
    /// Extra environment for a server command: KEY=VALUE, or KEY to pass our value through.
    #[arg(long = "server-env", value_name = "KEY[=VALUE]")]
    pub server_env: Vec<String>,
    /// HTTP header for --server-url servers: "Name: value".
    #[arg(long = "server-header", value_name = "HEADER")]
    pub server_header: Vec<String>,
}

impl LiveArgs {
    pub fn options(&self) -> Result<LiveOptions> {
        let env = self
            .server_env
            .iter()
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => Ok((k.to_string(), v.to_string())),
                None => std::env::var(kv).map(|v| (kv.clone(), v)).map_err(|_| {
                    Error::Usage(format!("--server-env {kv}: not set in the environment"))
                }),
            })
            .collect::<Result<_>>()?;
        let headers = self
            .server_header
            .iter()
            .map(|h| {
                h.split_once(':')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| {
                        Error::Usage(format!("--server-header {h:?}: expected \"Name: value\""))
                    })
            })
            .collect::<Result<_>>()?;
        Ok(LiveOptions {
            timeout: Duration::from_secs(self.timeout),
            env,
            headers,
        })
    }
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: OutputFormat,
    /// Write the rendered report to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the JSON report to FILE.
    #[arg(long = "json-out", value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Colour: auto honours NO_COLOR and colours only a terminal.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: Color,
}

/// Where base and head come from, besides positional files.
#[derive(Debug, Args)]
pub struct SidesArgs {
    /// Compare this file at --base-ref against --head-ref (default: the working tree).
    #[arg(long, value_name = "PATH")]
    pub tools: Option<String>,
    /// Base revision for --tools (default: the pull request's base commit).
    #[arg(long, value_name = "REV")]
    pub base_ref: Option<String>,
    /// Head revision for --tools (default: the working tree, i.e. HEAD plus local edits).
    #[arg(long, value_name = "REV")]
    pub head_ref: Option<String>,
    /// Base from a live server command (stdio) instead of a file.
    #[arg(long, value_name = "CMD", conflicts_with = "base_server_url")]
    pub base_server_cmd: Option<String>,
    /// Base from a live streamable-HTTP server.
    #[arg(long, value_name = "URL")]
    pub base_server_url: Option<String>,
    /// Head from a live server command (stdio) instead of a file.
    #[arg(long, value_name = "CMD", conflicts_with = "head_server_url")]
    pub head_server_cmd: Option<String>,
    /// Head from a live streamable-HTTP server.
    #[arg(long, value_name = "URL")]
    pub head_server_url: Option<String>,
}

/// Thresholds; each overrides `driftgate.toml`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// Config file (default: ./driftgate.toml when present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Fail on any schema change at or above this severity [default: high].
    #[arg(long, value_enum)]
    pub fail_on: Option<Severity>,
    /// Fail when a changed description's cosine to its old self is below this [default: 0.92].
    #[arg(long, value_name = "COS")]
    pub cosine_floor: Option<f64>,
    /// Largest tolerated routing-accuracy drop, overall and per tool [default: 0.02].
    #[arg(long, value_name = "FRACTION")]
    pub tolerance: Option<f64>,
    /// A routing drop fails only when its exact one-sided p-value is below ALPHA.
    #[arg(long, value_name = "ALPHA")]
    pub require_significance: Option<f64>,
    /// Skip meaning drift (no embedding).
    #[arg(long)]
    pub no_embed: bool,
    /// Cache directory for embeddings and router answers [default: .driftgate/cache].
    #[arg(long, value_name = "DIR", env = "DRIFTGATE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the disk cache.
    #[arg(long)]
    pub no_cache: bool,
    #[command(flatten)]
    pub embed: EmbedArgs,
}

impl GateArgs {
    fn thresholds(&self, cfg: &Config) -> Result<CheckThresholds> {
        let d = CheckThresholds::default();
        let t = CheckThresholds {
            fail_on: self.fail_on.or(cfg.gate.fail_on).unwrap_or(d.fail_on),
            cosine_floor: self
                .cosine_floor
                .or(cfg.gate.cosine_floor)
                .unwrap_or(d.cosine_floor),
            tolerance: self.tolerance.or(cfg.gate.tolerance).unwrap_or(d.tolerance),
            require_significance: self.require_significance.or(cfg.gate.require_significance),
        };
        if !(0.0..=1.0).contains(&t.cosine_floor) {
            return Err(Error::Usage(format!(
                "--cosine-floor {}: expected a number between 0 and 1",
                t.cosine_floor
            )));
        }
        if !(0.0..=1.0).contains(&t.tolerance) {
            return Err(Error::Usage(format!(
                "--tolerance {}: expected a fraction between 0 and 1 (0.02 = 2 points)",
                t.tolerance
            )));
        }
        if let Some(a) = t.require_significance
            && !(a > 0.0 && a < 1.0)
        {
            return Err(Error::Usage(format!(
                "--require-significance {a}: expected an alpha strictly between 0 and 1"
            )));
        }
        Ok(t)
    }

    fn cache_dir(&self, cfg: &Config) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        Some(
            self.cache_dir
                .clone()
                .or(cfg.cache.dir.clone())
                .unwrap_or_else(|| PathBuf::from(".driftgate/cache")),
        )
    }

    fn embedder(&self, cfg: &Config) -> Result<Option<Arc<dyn Embedder>>> {
        if self.no_embed {
            return Ok(None);
        }
        let kind = self.embed.kind()?;
        Ok(Some(match self.cache_dir(cfg) {
            Some(dir) => Arc::new(kind.build_cached(dir.join("embed"))?),
            None => Arc::from(kind.build()?),
        }))
    }
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Base tool set: a file, REV:PATH, or a lockfile. Omit with --tools to compare a file across refs.
    #[arg(conflicts_with = "tools")]
    pub old: Option<String>,
    /// Head tool set: a file, REV:PATH, or a lockfile.
    #[arg(conflicts_with = "tools")]
    pub new: Option<String>,
    #[command(flatten)]
    pub sides: SidesArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub github: crate::github::GithubArgs,
}

#[derive(Debug, Args)]
pub struct RouterArgs {
    /// Router: semantic (offline default, bundled embedder), openai (any Chat Completions API), anthropic.
    #[arg(long, value_enum)]
    pub router: Option<RouterKind>,
    /// Model name for openai/anthropic.
    #[arg(long)]
    pub model: Option<String>,
    /// API base URL (e.g. http://127.0.0.1:8080/v1 for llama.cpp, Ollama, vLLM, LiteLLM).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Environment variable holding the API key [default: OPENAI_API_KEY / ANTHROPIC_API_KEY].
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Azure OpenAI: api-version query parameter (enables the api-key header).
    #[arg(long, value_name = "VERSION")]
    pub azure_api_version: Option<String>,
    /// auto lets the model answer without a call (needed for `expect: none`); required forces a call.
    #[arg(long, value_enum)]
    pub tool_choice: Option<ToolChoice>,
    /// Samples per case and side [default: 1].
    #[arg(long)]
    pub repeats: Option<u32>,
    #[arg(long)]
    pub temperature: Option<f32>,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Requests in flight at once [default: 4].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Seconds before one router request times out (then retried) [default: 120].
    #[arg(long, value_name = "SECS")]
    pub request_timeout: Option<u64>,
    /// Attempts per request, including the first [default: 4].
    #[arg(long)]
    pub max_attempts: Option<u32>,
    /// Semantic router: below this cosine, `auto` answers with no call [default: 0.25].
    #[arg(long)]
    pub none_threshold: Option<f32>,
    /// USD per million input tokens: with --price-output, the report estimates the run's cost.
    #[arg(long, value_name = "USD", requires = "price_output")]
    pub price_input: Option<f64>,
    /// USD per million output tokens.
    #[arg(long, value_name = "USD", requires = "price_input")]
    pub price_output: Option<f64>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Base tool set (file, REV:PATH, lockfile).
    #[arg(long, conflicts_with = "tools")]
    pub base: Option<String>,
    /// Head tool set (file, REV:PATH, lockfile).
    #[arg(long, conflicts_with = "tools")]
    pub head: Option<String>,
    #[command(flatten)]
    pub sides: SidesArgs,
    /// Routing suite (YAML or JSONL); see docs/suite.schema.json.
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// Measure with the head suite even if the PR changed it (default: the base suite).
    #[arg(long)]
    pub use_head_suite: bool,
    /// Extra tools offered with every case (e.g. other servers' tools), so the realistic crowd is present.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub distractors: Vec<String>,
    #[command(flatten)]
    pub router: RouterArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub github: crate::github::GithubArgs,
}

#[derive(Debug, Args)]
pub struct LockArgs {
    /// Tools file (any accepted shape) to lock; or use --server-cmd / --server-url.
    #[arg(required_unless_present_any = ["server_cmd", "server_url"], conflicts_with_all = ["server_cmd", "server_url"])]
    pub tools: Option<String>,
    /// Spawn this MCP server (stdio) and lock what it lists.
    #[arg(long, value_name = "CMD", conflicts_with = "server_url")]
    pub server_cmd: Option<String>,
    /// Lock a streamable-HTTP MCP server.
    #[arg(long, value_name = "URL")]
    pub server_url: Option<String>,
    /// Where to write the lockfile (default: stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Do not write: compare with the existing lockfile at --output and exit 1 if it is stale.
    #[arg(long, requires = "output")]
    pub check: bool,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub async fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Diff(a) => run_diff(*a).await,
        Command::Check(a) => run_check(*a).await,
        Command::Lock(a) => run_lock(a).await,
        Command::Lint(a) => crate::lint::cli::run(*a).await,
        Command::Embed(a) => {
            let out = crate::embed::run_embed_cli(a.kind()?, std::io::stdin().lock()).await?;
            println!("{out}");
            Ok(crate::error::exit::PASS)
        }
        Command::Comment(a) => crate::github::run_comment(a).await,
        Command::Stress(a) => crate::stress::run_cli(*a).await,
        Command::Suite(a) => match a.command {
            crate::bootstrap::SuiteCommand::Init(i) => crate::bootstrap::run_init(*i).await,
            crate::bootstrap::SuiteCommand::Check(c) => crate::suite_check::run(c).await,
        },
    }
}

/// The pull request's base, as GitHub Actions describes it.
fn default_base_ref() -> Option<String> {
    if let Ok(path) = std::env::var("GITHUB_EVENT_PATH")
        && let Ok(text) = std::fs::read_to_string(path)
        && let Ok(ev) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(sha) = ev
            .pointer("/pull_request/base/sha")
            .and_then(|v| v.as_str())
    {
        return Some(sha.to_string());
    }
    std::env::var("GITHUB_BASE_REF")
        .ok()
        .filter(|s| !s.is_empty())
        .map(|b| format!("origin/{b}"))
}

fn side_spec(
    positional: Option<&String>,
    cmd: &Option<String>,
    url: &Option<String>,
    which: &str,
) -> Result<Spec> {
    match (positional, cmd, url) {
        (_, Some(c), _) => Ok(Spec::ServerCmd(c.clone())),
        (_, _, Some(u)) => Ok(Spec::ServerUrl(u.clone())),
        (Some(p), _, _) => Ok(Spec::parse(p)),
        _ => Err(Error::Usage(format!(
            "missing {which} tool set: give OLD NEW, --tools PATH, or --{which}-server-cmd"
        ))),
    }
}

fn side_specs(old: Option<&String>, new: Option<&String>, a: &SidesArgs) -> Result<(Spec, Spec)> {
    if let Some(path) = &a.tools {
        let base_ref = a.base_ref.clone().or_else(default_base_ref).ok_or_else(|| {
            Error::Usage(
                "--tools needs a base revision: pass --base-ref REV (in a GitHub pull_request run it \
                 defaults to the PR's base commit)"
                    .into(),
            )
        })?;
        let base = Spec::GitRev {
            rev: base_ref,
            path: path.clone(),
        };
        let head = match &a.head_ref {
            // The committed tools at base against the PR's live server (the Action's server-cmd).
            _ if a.head_server_cmd.is_some() || a.head_server_url.is_some() => {
                side_spec(None, &a.head_server_cmd, &a.head_server_url, "head")?
            }
            Some(r) => Spec::GitRev {
                rev: r.clone(),
                path: path.clone(),
            },
            None => Spec::File(PathBuf::from(path)),
        };
        return Ok((base, head));
    }
    Ok((
        side_spec(old, &a.base_server_cmd, &a.base_server_url, "base")?,
        side_spec(new, &a.head_server_cmd, &a.head_server_url, "head")?,
    ))
}

async fn load_sides(base: &Spec, head: &Spec, live: &LiveArgs) -> Result<(Loaded, Loaded)> {
    let opts = live.options()?;
    let (b, h) = tokio::join!(load::load(base, &opts), load::load(head, &opts));
    Ok((b?, h?))
}

async fn run_diff(a: DiffArgs) -> Result<i32> {
    let cfg = config::load(a.gate.config.as_deref())?;
    let thresholds = a.gate.thresholds(&cfg)?;
    let (base_spec, head_spec) = side_specs(a.old.as_ref(), a.new.as_ref(), &a.sides)?;
    let (base, head) = load_sides(&base_spec, &head_spec, &a.live).await?;
    let embedder = a.gate.embedder(&cfg)?;
    let mut report = check::run(
        "diff",
        CheckInputs {
            base,
            head,
            thresholds,
            embedder,
            replay: None,
            notes: Vec::new(),
        },
    )
    .await?;
    crate::github::attach(&mut report, &a.github);
    emit(&report, &a.out)?;
    crate::github::publish(&report, &a.github).await;
    Ok(report.verdict.exit_code())
}

/// A diff report without meaning drift (no embedder): pure and synchronous, for tests and tools.
pub fn diff_report(base: &Loaded, head: &Loaded, fail_on: Severity) -> Report {
    let d = diff::diff(&base.tools, &head.tools);
    let thresholds = CheckThresholds {
        fail_on,
        ..CheckThresholds::default()
    };
    let verdict = gate::check_verdict(&d, None, None, &thresholds);
    Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: env!("CARGO_PKG_VERSION"),
        command: "diff",
        verdict,
        base: Side::of(base),
        head: Side::of(head),
        thresholds,
        diff: d,
        drift: None,
        routing: None,
        suite: None,
        router: None,
        notes: Vec::new(),
        lint: None,
        github: None,
    }
}

fn base_revision(base: &Spec, sides: &SidesArgs) -> Option<String> {
    match base {
        Spec::GitRev { rev, .. } => Some(rev.clone()),
        _ => sides
            .base_ref
            .clone()
            .or_else(|| sides.tools.as_ref().and_then(|_| default_base_ref())),
    }
}

pub(crate) fn build_router(
    r: &RouterArgs,
    cfg: &Config,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<Box<dyn Router>> {
    let c = &cfg.router;
    let kind = r.router.or(c.kind).unwrap_or(RouterKind::Semantic);
    let timeout = Duration::from_secs(r.request_timeout.or(c.timeout_secs).unwrap_or(120));
    let base_url = r.base_url.clone().or(c.base_url.clone());
    let model = r.model.clone().or(c.model.clone());
    let key_env = r.api_key_env.clone().or(c.api_key_env.clone());
    let need_model = |what: &str| {
        model
            .clone()
            .ok_or_else(|| Error::Usage(format!("--router {what} needs --model")))
    };
    Ok(match kind {
        RouterKind::Semantic => {
            let e = match embedder {
                Some(e) => e,
                None => Arc::from(crate::embed::EmbedderKind::MiniLm.build()?),
            };
            let th = r
                .none_threshold
                .or(c.none_threshold)
                .unwrap_or(crate::route::semantic::DEFAULT_NONE_THRESHOLD);
            Box::new(crate::route::semantic::SemanticRouter::new(e, th))
        }
        RouterKind::Openai => {
            let env = key_env.unwrap_or_else(|| crate::route::keys::OPENAI_KEY_ENV.into());
            let key = crate::route::keys::load_key(&env);
            if key.is_none() && base_url.is_none() {
                return Err(Error::Usage(format!(
                    "--router openai against the OpenAI API needs the key in ${env} (or --base-url for a local server)"
                )));
            }
            let router = crate::route::openai::OpenAiRouter::new(
                base_url.as_deref(),
                &need_model("openai")?,
                key,
                timeout,
            )?;
            match r.azure_api_version.clone().or(c.azure_api_version.clone()) {
                Some(v) => Box::new(router.azure(&v)?),
                None => Box::new(router),
            }
        }
        RouterKind::Anthropic => {
            let env = key_env.unwrap_or_else(|| crate::route::keys::ANTHROPIC_KEY_ENV.into());
            let key = crate::route::keys::load_key(&env);
            if key.is_none() && base_url.is_none() {
                return Err(Error::Usage(format!(
                    "--router anthropic needs the key in ${env}"
                )));
            }
            Box::new(crate::route::anthropic::AnthropicRouter::new(
                base_url.as_deref(),
                &need_model("anthropic")?,
                key,
                timeout,
            )?)
        }
    })
}

async fn run_check(a: CheckArgs) -> Result<i32> {
    let cfg = config::load(a.gate.config.as_deref())?;
    let thresholds = a.gate.thresholds(&cfg)?;
    let (base_spec, head_spec) = side_specs(a.base.as_ref(), a.head.as_ref(), &a.sides)?;
    let suite_path = a.suite.clone().or(cfg.suite.path.clone()).ok_or_else(|| {
        Error::Usage("check needs --suite FILE (or suite.path in driftgate.toml)".into())
    })?;
    let base_rev = base_revision(&base_spec, &a.sides);
    let suite = check::choose_suite(
        &suite_path,
        base_rev.as_deref(),
        a.use_head_suite || cfg.suite.use_head_suite.unwrap_or(false),
    )?;
    let (base, head) = load_sides(&base_spec, &head_spec, &a.live).await?;
    let mut packs = Vec::new();
    let pack_files: Vec<String> = a
        .distractors
        .iter()
        .cloned()
        .chain(
            cfg.suite
                .distractors
                .iter()
                .map(|p| p.display().to_string()),
        )
        .collect();
    for f in &pack_files {
        let l = load::load(&Spec::parse(f), &a.live.options()?).await?;
        packs.extend(l.tools.tools);
    }
    let embedder = a.gate.embedder(&cfg)?;
    let c = &cfg.router;
    let r = &a.router;
    let router = build_router(r, &cfg, embedder.clone())?;
    let repeats = r.repeats.or(c.repeats).unwrap_or(1);
    if repeats == 0 {
        return Err(Error::Usage("--repeats must be at least 1".into()));
    }
    let semantic = router.kind() == "semantic";
    let interactive = std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
    let config = ReplayConfig {
        system_prompt: if semantic {
            String::new()
        } else {
            check::ROUTER_SYSTEM_PROMPT.to_string()
        },
        tool_choice: r.tool_choice.or(c.tool_choice).unwrap_or(ToolChoice::Auto),
        sampling: Sampling {
            temperature: r.temperature.or(c.temperature).unwrap_or(0.0),
            seed: Some(r.seed.or(c.seed).unwrap_or(0)),
            max_tokens: 256,
        },
        repeats,
        concurrency: r.concurrency.or(c.concurrency).unwrap_or(4).max(1),
        seed: r.seed.or(c.seed).unwrap_or(0),
        retry: RetryPolicy {
            max_attempts: r.max_attempts.unwrap_or(4).max(1),
            ..RetryPolicy::default()
        },
        progress_bar: interactive,
        progress_lines: !interactive,
    };
    let cache = RouteCache::new(a.gate.cache_dir(&cfg));
    let mut report = check::run(
        "check",
        CheckInputs {
            base,
            head,
            thresholds,
            embedder,
            replay: Some(ReplayInputs {
                suite,
                router,
                cache,
                config,
                packs,
                price_per_mtok: r
                    .price_input
                    .or(c.price_input_per_mtok)
                    .zip(r.price_output.or(c.price_output_per_mtok))
                    .map(|(i, o)| [i, o]),
            }),
            notes: Vec::new(),
        },
    )
    .await?;
    crate::github::attach(&mut report, &a.github);
    emit(&report, &a.out)?;
    crate::github::publish(&report, &a.github).await;
    Ok(report.verdict.exit_code())
}

fn use_color(c: Color, to_file: bool) -> bool {
    match c {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            !to_file
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

pub(crate) fn emit(report: &Report, out: &OutputArgs) -> Result<()> {
    let color = use_color(out.color, out.output.is_some());
    let text = report::render(report, out.format, color);
    if let Some(path) = &out.json_out {
        write_atomic(path, &report::render(report, OutputFormat::Json, false))?;
    }
    match &out.output {
        Some(path) => write_atomic(path, &text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    crate::fs::write_atomic(path, text.as_bytes()).map_err(|e| Error::io(path, e))
}

async fn run_lock(a: LockArgs) -> Result<i32> {
    let opts = a.live.options()?;
    let spec = side_spec(a.tools.as_ref(), &a.server_cmd, &a.server_url, "")?;
    let mut meta = LockMeta::default();
    let loaded = match &spec {
        Spec::ServerCmd(c) => {
            let cap = crate::tools::live::list_tools_stdio(c, &opts).await?;
            meta.server_name = cap.server_name.clone();
            meta.server_version = cap.server_version.clone();
            load::from_capture(spec.label(), cap)?
        }
        Spec::ServerUrl(u) => {
            let cap = crate::tools::live::list_tools_http(u, &opts).await?;
            meta.server_name = cap.server_name.clone();
            meta.server_version = cap.server_version.clone();
            load::from_capture(spec.label(), cap)?
        }
        other => load::load(other, &opts).await?,
    };
    let text = lock::render(&loaded.tools, &meta);
    match (&a.output, a.check) {
        (Some(path), true) => {
            let old_text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let label = path.display().to_string();
            let (old, _) = load::parse_text(&old_text, &label)?;
            let d = diff::diff(&old, &loaded.tools);
            if d.tools.is_empty() {
                eprintln!("{label}: up to date ({} tools)", loaded.tools.len());
                Ok(crate::error::exit::PASS)
            } else {
                eprintln!("{label}: stale, {} tool(s) differ:", d.tools.len());
                for (t, c) in d.changes() {
                    eprintln!(
                        "  {} {} {}",
                        c.severity.as_str(),
                        report::escape::cell(&t.name, 40),
                        c.rule
                    );
                }
                Ok(crate::error::exit::FAIL)
            }
        }
        (Some(path), false) => {
            write_atomic(path, &text)?;
            eprintln!("wrote {} ({} tools)", path.display(), loaded.tools.len());
            Ok(crate::error::exit::PASS)
        }
        (None, _) => {
            print!("{text}");
            Ok(crate::error::exit::PASS)
        }
    }
}
