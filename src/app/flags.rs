//! Flag groups shared by several subcommands. Only flags here: what they mean once combined with
//! `driftgate.toml` and the defaults is `settings`'s job.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, ValueEnum};

use crate::app::config::RouterKind;
use crate::choice::Choice;
use crate::diff::Severity;
use crate::embed::DEFAULT_API_KEY_ENV;
use crate::gate::{CosinePolicy, MeaningPolicy};
use crate::github::CommentMode;
use crate::injection::FailOn;
use crate::llm::ToolChoice;
use crate::report::render::Format;

/// A clap value parser for a library vocabulary: its names, with their help.
pub fn choice<T: Choice + Clone>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::ALL.iter().map(|v| {
        let p = PossibleValue::new(v.name());
        match v.help() {
            "" => p,
            help => p.help(help),
        }
    }))
    .map(|name| T::from_name(&name).expect("clap only passes possible values"))
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
    /// Environment for a server command: KEY=VALUE, or KEY to pass our value through. A server
    /// gets only these, PATH, HOME, the locale and proxy settings.
    #[arg(long = "server-env", value_name = "KEY[=VALUE]")]
    pub server_env: Vec<String>,
    /// Start a server command with our whole environment (API keys and tokens included).
    #[arg(long = "server-inherit-env")]
    pub server_inherit_env: bool,
    /// HTTP header for --server-url servers: "Name: value".
    #[arg(long = "server-header", value_name = "HEADER")]
    pub server_header: Vec<String>,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_parser = choice::<Format>(), default_value = "terminal")]
    pub format: Format,
    /// Write the rendered report to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the JSON report to FILE.
    #[arg(long = "json-out", value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Also write the self-contained HTML report (charts, no network) to FILE.
    #[arg(long = "html-out", value_name = "FILE")]
    pub html_out: Option<PathBuf>,
    /// Colour: auto honours NO_COLOR and colours only a terminal.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: Color,
}

/// One tool set: a file or a live server (`lint`, `lock`).
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Tool set: a file (tools/list result, JSON-RPC response, bare array, lockfile) or REV:PATH;
    /// or use --server-cmd / --server-url.
    #[arg(required_unless_present_any = ["server_cmd", "server_url"], conflicts_with_all = ["server_cmd", "server_url"])]
    pub tools: Option<String>,
    /// Spawn this MCP server (stdio) and take what it lists.
    #[arg(long, value_name = "CMD", conflicts_with = "server_url")]
    pub server_cmd: Option<String>,
    /// Take what this streamable-HTTP MCP server lists.
    #[arg(long, value_name = "URL")]
    pub server_url: Option<String>,
}

impl SourceArgs {
    pub fn spec(&self) -> crate::Result<crate::source::Spec> {
        crate::app::sides::side_spec(self.tools.as_ref(), &self.server_cmd, &self.server_url, "")
    }
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

/// The disk cache.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Cache directory for embeddings, router answers and drafts [default: .driftgate/cache].
    #[arg(long, value_name = "DIR", env = "DRIFTGATE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the disk cache.
    #[arg(long)]
    pub no_cache: bool,
}

/// Thresholds; each overrides `driftgate.toml`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// Config file (default: ./driftgate.toml when present). In a pull request (a base revision
    /// is known) it is read at the base revision, like the suite and the distractor packs: the
    /// PR's edits to them are reported first and not applied.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Judge the pull request by its own config, suite and distractor packs instead of the base
    /// revision's (a maintainer's opt-in; the report lists every change and marks it applied).
    #[arg(long)]
    pub trust_head_policy: bool,
    /// Fail on any schema change at or above this severity [default: high].
    #[arg(long, value_parser = choice::<Severity>())]
    pub fail_on: Option<Severity>,
    /// Fail when a changed description's cosine to its old self is below this [default: the
    /// embedding model's calibrated floor — 0.73 for the bundled MiniLM — else 0.92].
    #[arg(long, value_name = "COS")]
    pub cosine_floor: Option<f64>,
    /// Largest tolerated routing-accuracy drop, overall and per tool [default: 0.02].
    #[arg(long, value_name = "FRACTION")]
    pub tolerance: Option<f64>,
    /// Largest tolerated call-accuracy drop (right tool with valid, expected arguments), overall
    /// and per tool [default: --tolerance].
    #[arg(long, value_name = "FRACTION")]
    pub args_tolerance: Option<f64>,
    /// The overall routing drop fails only when its exact one-sided p-value is also below ALPHA
    /// (1: tolerance only) [default: 0.015; with --per-tool-alpha's 0.035, one 5% false-alarm
    /// budget].
    #[arg(long, value_name = "ALPHA")]
    pub require_significance: Option<f64>,
    /// A tool's routing drop fails only when its exact one-sided p-value is below ALPHA split
    /// over the suite's tools that could reach it (Tarone; docs/verdict.md) [default: 0.035].
    #[arg(long, value_name = "ALPHA")]
    pub per_tool_alpha: Option<f64>,
    /// Own cases a changed tool needs in the suite for routing to decide over its cosine
    /// [default: 3].
    #[arg(long, value_name = "N")]
    pub min_cases: Option<usize>,
    /// What a description below the cosine floor does: review (a note), auto (fails where the
    /// suite does not measure the tool), or fail [default: review; the cosine does not separate
    /// meaning changes from harmless edits, docs/calibration.md].
    #[arg(long = "cosine-policy", value_parser = choice::<CosinePolicy>())]
    pub cosine: Option<CosinePolicy>,
    /// What a description whose words show its meaning moved (a negation added, a verb swapped
    /// for its opposite, the purpose gone, …) does: fail, or review (a warning) [default: fail].
    #[arg(long = "meaning-policy", value_parser = choice::<MeaningPolicy>())]
    pub meaning: Option<MeaningPolicy>,
    /// Base accuracy at or below this measured nothing: inconclusive (exit 4). A base of 0% is
    /// incomplete (exit 3) [default: chance for the offered tools].
    #[arg(long, value_name = "FRACTION")]
    pub min_base_accuracy: Option<f64>,
    /// An unproven drop at least this large (overall, or of a changed tool) is inconclusive
    /// (exit 4); smaller ones beyond the tolerance are warnings; 1: always a warning
    /// [default: 0.25].
    #[arg(long, value_name = "FRACTION")]
    pub inconclusive_drop: Option<f64>,
    /// Fail on an injection-scan finding the PR introduced at or above this [default: high].
    #[arg(long, value_parser = choice::<FailOn>())]
    pub scan_fail_on: Option<FailOn>,
    /// Skip meaning drift (no embedding).
    #[arg(long)]
    pub no_embed: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub embed: EmbedArgs,
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
    #[arg(long, value_parser = choice::<ToolChoice>())]
    pub tool_choice: Option<ToolChoice>,
    /// Samples per case and side [default: 1].
    #[arg(long)]
    pub repeats: Option<u32>,
    /// Sampling temperature sent with every request; above 0 makes --repeats and --confirm
    /// measure something [default: 0].
    #[arg(long)]
    pub temperature: Option<f32>,
    /// Seed sent with every request; repeat k is asked with seed + k [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// How each case's tools are ordered: rotate shares one tool block among the cases of each of
    /// --rotations orders (prefix caches reuse it); shuffle gives every case its own [default:
    /// rotate].
    #[arg(long, value_enum)]
    pub order: Option<crate::app::config::OrderKind>,
    /// --order rotate: how many rotations of the tool order the cases are spread over [default: 4].
    #[arg(long, value_name = "K")]
    pub rotations: Option<u32>,
    /// Requests in flight at once [default: 4]. Under --order rotate they go out in one lane per
    /// rotation (at most this many lanes), each lane's rotations one after another, so a server
    /// with a prompt cache per slot (llama.cpp -np) keeps each rotation's tool block.
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Seconds before one router request times out (then retried) [default: 120].
    #[arg(long, value_name = "SECS")]
    pub request_timeout: Option<u64>,
    /// Attempts per request, including the first [default: 4].
    #[arg(long)]
    pub max_attempts: Option<u32>,
    /// Semantic router: answer `auto` with no call below this cosine to the nearest tool, instead
    /// of when the prompt reads more like small talk than like any tool (the default).
    #[arg(long)]
    pub none_threshold: Option<f32>,
    /// Semantic router: which shipped option set [default: hybrid4]; hybrid3 also reads usage
    /// examples, hybrid2 is more accurate on very large tool sets and feels fewer description
    /// edits (docs/router.md).
    #[arg(long, value_name = "VARIANT")]
    pub semantic_variant: Option<crate::app::config::SemanticVariant>,
    /// USD per million input tokens: with --price-output, the report estimates the run's cost.
    #[arg(long, value_name = "USD", requires = "price_output")]
    pub price_input: Option<f64>,
    /// USD per million output tokens.
    #[arg(long, value_name = "USD", requires = "price_input")]
    pub price_output: Option<f64>,
    /// USD per million input tokens the provider read from its prompt cache (OpenAI's
    /// cached_tokens, Anthropic's cache_read_input_tokens) [default: --price-input].
    #[arg(long, value_name = "USD", requires = "price_input")]
    pub price_cached_input: Option<f64>,
}

/// The models a command may use and where their answers are kept: the router (and drafting
/// model), `driftgate.toml`, the cache, the embedder (`stress`, `suite init`, `lint`).
#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(flatten)]
    pub router: RouterArgs,
    /// Config file (default: ./driftgate.toml when present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub embed: EmbedArgs,
}

/// What `diff` and `check` share: the two sides, the thresholds, the output, live servers and
/// GitHub publishing.
#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub sides: SidesArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub github: GithubArgs,
}

/// Command-line options selecting an embedder; flattened into subcommands that embed.
#[derive(Debug, Clone, Args)]
pub struct EmbedArgs {
    /// Embedding engine: the bundled model, or an OpenAI-compatible endpoint.
    #[arg(long, value_enum, default_value_t = EmbedderChoice::Minilm)]
    pub embedder: EmbedderChoice,
    /// Base URL of the OpenAI-compatible API (with `--embedder openai`).
    #[arg(long, value_name = "URL")]
    pub embed_base_url: Option<String>,
    /// Embedding model name sent to the endpoint (required with `--embedder openai`).
    #[arg(long, value_name = "MODEL")]
    pub embed_model: Option<String>,
    /// Environment variable that holds the API key (its value is never printed).
    #[arg(long, value_name = "VAR", default_value = DEFAULT_API_KEY_ENV)]
    pub embed_api_key_env: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EmbedderChoice {
    Minilm,
    Openai,
}

/// Flags shared by `check` and `diff`.
#[derive(Debug, Clone, Args)]
pub struct GithubArgs {
    /// Act as a GitHub Actions step: PR comment, job summary, step outputs, report file
    /// [default: on when GITHUB_ACTIONS=true].
    #[arg(long)]
    pub github: bool,
    /// Stay a plain CLI even inside GitHub Actions.
    #[arg(long, conflicts_with = "github")]
    pub no_github: bool,
    /// When to post the sticky PR comment.
    #[arg(long, value_parser = choice::<CommentMode>(), default_value = "auto")]
    pub comment: CommentMode,
    /// Environment variable holding the GitHub token.
    #[arg(long, value_name = "NAME", default_value = "GITHUB_TOKEN")]
    pub github_token_env: String,
    /// Write the JSON report here (in GitHub mode default: driftgate-report.json), e.g. for a
    /// `workflow_run` job to post on a fork PR.
    #[arg(long, value_name = "FILE")]
    pub report_path: Option<PathBuf>,
    /// Link to the full report in the comment [default: this workflow run, where the report
    /// artifact is listed].
    #[arg(long, value_name = "URL")]
    pub report_url: Option<String>,
    /// The workflow artifact the JSON and HTML reports are uploaded in (the Action's
    /// `actions/upload-artifact` step); the comment names it.
    #[arg(long, value_name = "NAME")]
    pub report_artifact: Option<String>,
    /// Print GitHub annotations (`::error file=…,line=…::…`) to stdout.
    #[arg(long)]
    pub annotations: bool,
}
