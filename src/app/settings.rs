//! Flags, `driftgate.toml` and defaults, resolved once into the settings the library takes
//! (`flag.or(config).unwrap_or(default)` lives here and nowhere else), and the environment read
//! for keys and the Actions runner.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::app::config::{Config, OrderKind, RouterKind};
use crate::app::flags::{
    CacheArgs, EmbedArgs, EmbedderChoice, GateArgs, GithubArgs, LiveArgs, RouterArgs,
};
use crate::cache::Cache;
use crate::canon::MacKey;
use crate::embed::{DEFAULT_BASE_URL, Embedder, EmbedderKind};
use crate::error::{Error, Result};
use crate::gate::CheckThresholds;
use crate::github::{Actions, Publish};
use crate::http::retry::RetryPolicy;
use crate::http::secret::Secret;
use crate::llm::json::JsonLlm;
use crate::llm::{Chat, Sampling, ToolChoice};
use crate::replay::{Order, ReplayConfig};
use crate::route::provider::ProviderRouter;
use crate::route::semantic::{self, SemanticRouter};
use crate::route::{Router, SYSTEM_PROMPT};
use crate::source::live::LiveOptions;

/// Where `--router openai` looks for its key unless `--api-key-env` names another variable.
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";
/// Where `--router anthropic` looks for its key unless `--api-key-env` names another variable.
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// The variable holding the key that authenticates cache entries and shard parts (a repository
/// secret in CI; see docs/hardening.md).
pub const KEY_ENV: &str = "DRIFTGATE_KEY";

/// An environment variable, `None` when unset or empty.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The key in environment variable `env_name`; `None` when unset, empty or not UTF-8.
///
/// Keys are never taken from flags or config files: those end up in shell history, CI logs and
/// commits.
pub fn load_key(env_name: &str) -> Option<Secret> {
    let key = key_from_env_value(std::env::var_os(env_name));
    crate::http::secret::hold(key.clone());
    key
}

fn key_from_env_value(value: Option<std::ffi::OsString>) -> Option<Secret> {
    let secret = Secret::new(value?.into_string().ok()?);
    (!secret.is_empty()).then_some(secret)
}

/// The gate's thresholds: flags over `[gate]` over defaults, each checked.
pub fn thresholds(g: &GateArgs, cfg: &Config) -> Result<CheckThresholds> {
    let d = CheckThresholds::default();
    let t = CheckThresholds {
        fail_on: g.fail_on.or(cfg.gate.fail_on).unwrap_or(d.fail_on),
        cosine_floor: g.cosine_floor.or(cfg.gate.cosine_floor).or(d.cosine_floor),
        tolerance: g.tolerance.or(cfg.gate.tolerance).unwrap_or(d.tolerance),
        args_tolerance: g.args_tolerance.or(cfg.gate.args_tolerance),
        // 1 means "tolerance only": every p-value is below it.
        require_significance: g
            .require_significance
            .or(cfg.gate.require_significance)
            .or(d.require_significance)
            .filter(|a| *a < 1.0),
        per_tool_alpha: g
            .per_tool_alpha
            .or(cfg.gate.per_tool_alpha)
            .unwrap_or(d.per_tool_alpha),
        min_cases: g.min_cases.or(cfg.gate.min_cases).unwrap_or(d.min_cases),
        cosine: g.cosine.or(cfg.gate.cosine).unwrap_or(d.cosine),
        meaning: g.meaning.or(cfg.gate.meaning).unwrap_or(d.meaning),
        min_base_accuracy: g.min_base_accuracy.or(cfg.gate.min_base_accuracy),
        scan_fail_on: g
            .scan_fail_on
            .or(cfg.scan.fail_on)
            .unwrap_or(d.scan_fail_on),
        inconclusive_drop: g
            .inconclusive_drop
            .or(cfg.gate.inconclusive_drop)
            .unwrap_or(d.inconclusive_drop),
    };
    if !(t.inconclusive_drop > 0.0 && t.inconclusive_drop <= 1.0) {
        return Err(Error::Usage(format!(
            "--inconclusive-drop {}: expected a fraction above 0, at most 1 (1: unproven drops are warnings)",
            t.inconclusive_drop
        )));
    }
    if let Some(f) = t.cosine_floor
        && !(0.0..=1.0).contains(&f)
    {
        return Err(Error::Usage(format!(
            "--cosine-floor {f}: expected a number between 0 and 1"
        )));
    }
    if !(0.0..=1.0).contains(&t.tolerance) {
        return Err(Error::Usage(format!(
            "--tolerance {}: expected a fraction between 0 and 1 (0.02 = 2 points)",
            t.tolerance
        )));
    }
    if let Some(a) = t.args_tolerance
        && !(0.0..=1.0).contains(&a)
    {
        return Err(Error::Usage(format!(
            "--args-tolerance {a}: expected a fraction between 0 and 1 (0.02 = 2 points)"
        )));
    }
    if let Some(a) = g.require_significance
        && !(a > 0.0 && a <= 1.0)
    {
        return Err(Error::Usage(format!(
            "--require-significance {a}: expected an alpha above 0, at most 1 (1: tolerance only)"
        )));
    }
    if !(t.per_tool_alpha > 0.0 && t.per_tool_alpha <= 1.0) {
        return Err(Error::Usage(format!(
            "--per-tool-alpha {}: expected an alpha above 0, at most 1",
            t.per_tool_alpha
        )));
    }
    if let Some(m) = t.min_base_accuracy
        && !(0.0..1.0).contains(&m)
    {
        return Err(Error::Usage(format!(
            "--min-base-accuracy {m}: expected a fraction from 0 up to (not including) 1"
        )));
    }
    Ok(t)
}

/// Where per-user state lives: `$XDG_CACHE_HOME/driftgate`, else `~/.cache/driftgate`.
fn state_dir() -> Option<PathBuf> {
    env("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("driftgate"))
}

/// The key that tags cache entries and shard parts, and a note when it limits the cache.
///
/// `DRIFTGATE_KEY` (a repository secret in CI) when set. Else, on a developer's machine, a
/// random key kept in the user's cache directory (mode 0600), made on first use. Else (GitHub
/// Actions without the secret) a key for this process only: entries restored from an earlier
/// run, or committed by a pull request, can never verify.
pub fn mac_key(actions_active: bool) -> (MacKey, Option<String>) {
    if let Some(k) = load_key(KEY_ENV) {
        return (MacKey::derive(k.expose().as_bytes()), None);
    }
    if actions_active {
        return (
            MacKey::ephemeral(),
            Some(format!(
                "${KEY_ENV} is not set: cache entries from earlier runs cannot be authenticated, so none were read (this run's own are reused within it). Set a repository secret {KEY_ENV} and pass it as env to reuse them (docs/hardening.md)."
            )),
        );
    }
    match state_dir().map(|d| key_file(&d.join("key"))) {
        Some(Ok(k)) => (k, None),
        _ => (MacKey::ephemeral(), None),
    }
}

/// The key in `path`, made (32 random bytes, owner-only) when absent. Created whole or not at
/// all: the bytes go to a temporary file first, linked into place only if no key is there yet.
fn key_file(path: &std::path::Path) -> std::io::Result<MacKey> {
    if let Ok(bytes) = std::fs::read(path)
        && bytes.len() >= 32
    {
        return Ok(MacKey::derive(&bytes));
    }
    let dir = path.parent().expect("a file in a directory");
    std::fs::create_dir_all(dir)?;
    let mut fresh = [0u8; 32];
    rand::fill(&mut fresh);
    let tmp = dir.join(format!(".key.{}", std::process::id()));
    {
        use std::io::Write as _;
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let mut f = o.open(&tmp)?;
        f.write_all(&fresh)?;
        f.sync_all()?;
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(MacKey::derive(&fresh)),
        // Another run made it first: use theirs.
        Err(_) => std::fs::read(path).and_then(|b| match b.len() >= 32 {
            true => Ok(MacKey::derive(&b)),
            false => Err(std::io::Error::other("short key file")),
        }),
    }
}

/// The checkout a pull request controls: `$GITHUB_WORKSPACE`, else the repository around the
/// working directory.
fn workspace() -> PathBuf {
    env("GITHUB_WORKSPACE")
        .map(|w| crate::source::tree::lexical(std::path::Path::new(&w)))
        .unwrap_or_else(|| crate::source::tree::repository_root(std::path::Path::new(".")))
}

/// The disk cache and a note when it was limited or refused: `--no-cache` turns it off; else
/// the flag (or `DRIFTGATE_CACHE_DIR`), `[cache] dir` of the policy's config, or the user's
/// cache directory. A directory inside the checkout is refused in GitHub Actions, and anywhere
/// when git tracks files in it: a pull request could have committed its answers there. `server`:
/// the run starts a server command (see `Cache::refusing_fresh`).
pub fn cache(c: &CacheArgs, cfg: &Config, server: bool) -> (Cache, Vec<String>) {
    if c.no_cache {
        return (Cache::off(), Vec::new());
    }
    let active = env("GITHUB_ACTIONS").as_deref() == Some("true");
    let Some(dir) = c
        .cache_dir
        .clone()
        .or(cfg.cache.dir.clone())
        .or_else(|| state_dir().map(|d| d.join("entries")))
    else {
        return (
            Cache::off(),
            vec!["no cache: neither HOME nor XDG_CACHE_HOME is set (pass --cache-dir)".into()],
        );
    };
    let full = crate::source::tree::lexical(&dir);
    let inside = full.starts_with(workspace());
    let tracked = inside && tracked_files(&full);
    if (inside && active) || tracked {
        let why = match tracked {
            true => "git tracks files in it",
            false => "it is inside the checkout",
        };
        return (
            Cache::off(),
            vec![format!(
                "the cache directory {} was not used: {why}, so a pull request could have put answers there. Ran without a cache; point --cache-dir outside the checkout (the default is the user's cache directory).",
                dir.display()
            )],
        );
    }
    let (key, note) = mac_key(active);
    let cache = Cache::with_key(Some(dir), key);
    let cache = match server {
        true => cache.refusing_fresh(),
        false => cache,
    };
    (cache, note.into_iter().collect())
}

/// [`cache`] for commands without a report: its notes go to stderr.
pub fn cache_noted(c: &CacheArgs, cfg: &Config) -> Cache {
    let (cache, notes) = cache(c, cfg, true);
    for n in notes {
        eprintln!("driftgate: {}", crate::app::console::message_safe(&n));
    }
    cache
}

/// Whether git tracks anything under `dir` (a directory of the repository around it).
fn tracked_files(dir: &std::path::Path) -> bool {
    let Some(parent) = dir.ancestors().find(|d| d.is_dir()) else {
        return false;
    };
    std::process::Command::new("git")
        .arg("-C")
        .arg(parent)
        .args(["ls-files", "-z", "--"])
        .arg(dir)
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty())
}

/// Which embedder the flags select (the key read from its variable now).
pub fn embedder_kind(e: &EmbedArgs) -> Result<EmbedderKind> {
    match e.embedder {
        EmbedderChoice::Minilm => {
            if e.embed_base_url.is_some() || e.embed_model.is_some() {
                return Err(Error::Usage(
                    "--embed-base-url/--embed-model need --embedder openai".into(),
                ));
            }
            Ok(EmbedderKind::MiniLm)
        }
        EmbedderChoice::Openai => Ok(EmbedderKind::OpenAi {
            base_url: e
                .embed_base_url
                .clone()
                .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
            model: e
                .embed_model
                .clone()
                .ok_or_else(|| Error::Usage("--embedder openai needs --embed-model".into()))?,
            key: load_key(&e.embed_api_key_env),
        }),
    }
}

/// The embedder, memoised in the process and in `cache` when it is on.
pub fn embedder(e: &EmbedArgs, cache: &Cache) -> Result<Arc<dyn Embedder>> {
    Ok(Arc::new(embedder_kind(e)?.build_cached(cache)?))
}

/// The embedder for meaning drift; `None` with `--no-embed`.
pub fn drift_embedder(g: &GateArgs, cache: &Cache) -> Result<Option<Arc<dyn Embedder>>> {
    match g.no_embed {
        true => Ok(None),
        false => embedder(&g.embed, cache).map(Some),
    }
}

/// What a server command gets from our environment without `--server-env`: enough to find and
/// run node, python, uv or a binary, and to reach the network through a proxy — no keys.
const SERVER_BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TMP",
    "TEMP",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    // Windows needs these to start most programs at all.
    "SYSTEMROOT",
    "SystemRoot",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
];

/// Does this variable's name say it holds a credential?
fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|w| n.contains(w))
}

/// Every value of our environment that looks like a credential, for masking in messages.
pub fn env_secrets() -> Vec<Secret> {
    std::env::vars()
        .filter(|(k, v)| looks_secret(k) && v.trim().len() >= 6)
        .map(|(_, v)| Secret::new(v))
        .collect()
}

/// `--server-env`, `--server-inherit-env`, `--server-header`, `--timeout`.
pub fn live(l: &LiveArgs) -> Result<LiveOptions> {
    let given: Vec<(String, String)> = l
        .server_env
        .iter()
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) => Ok((k.to_string(), v.to_string())),
            None => std::env::var(kv).map(|v| (kv.clone(), v)).map_err(|_| {
                Error::Usage(format!("--server-env {kv}: not set in the environment"))
            }),
        })
        .collect::<Result<_>>()?;
    let base_env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| SERVER_BASE_ENV.contains(&k.as_str()) || k.starts_with("LC_"))
        .collect();
    // What the server is handed is masked wherever it could come back: header values, and
    // environment values whose names say they are credentials.
    crate::http::secret::hold(
        given
            .iter()
            .filter(|(k, _)| looks_secret(k))
            .map(|(_, v)| Secret::new(v.clone())),
    );
    let headers = l
        .server_header
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| {
                    Error::Usage(format!("--server-header {h:?}: expected \"Name: value\""))
                })
        })
        .collect::<Result<Vec<(String, String)>>>()?;
    let credential = |k: &str| looks_secret(k) || k.to_ascii_uppercase().contains("COOKIE");
    crate::http::secret::hold(
        headers
            .iter()
            .filter(|(k, _)| credential(k))
            .flat_map(|(_, v)| {
                let token = v.split_once(' ').map(|(_, t)| Secret::new(t.trim()));
                std::iter::once(Secret::new(v.clone())).chain(token)
            }),
    );
    Ok(LiveOptions {
        timeout: Duration::from_secs(l.timeout),
        base_env,
        env: given,
        inherit_env: l.server_inherit_env,
        secrets: env_secrets(),
        headers,
    })
}

/// Router settings: flags over `[router]` over defaults.
#[derive(Debug, Clone)]
pub struct RouterSettings {
    /// `None`: neither the flag nor the config named one (the semantic default).
    pub kind: Option<RouterKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub key_env: Option<String>,
    pub azure_api_version: Option<String>,
    pub tool_choice: ToolChoice,
    pub repeats: u32,
    pub temperature: f32,
    pub seed: u64,
    pub order: Order,
    /// `None`: the command's default ([`RouterSettings::concurrency`]).
    concurrency: Option<usize>,
    pub timeout: Duration,
    pub max_attempts: u32,
    /// `--none-threshold`: the semantic router's no-call rule as a cosine threshold instead of
    /// its small-talk reference.
    pub none_threshold: Option<f32>,
    pub semantic_variant: Option<crate::app::config::SemanticVariant>,
    pub prices: Option<[f64; 2]>,
    /// USD per million cached input tokens; `None`: the input price.
    pub cached_price: Option<f64>,
}

impl RouterSettings {
    /// The semantic router's scoring: the shipped default, or its no-call rule as a threshold.
    pub fn semantic_options(&self) -> semantic::Options {
        let mut o = self
            .semantic_variant
            .map_or_else(semantic::Options::default, |v| v.options());
        if let Some(t) = self.none_threshold {
            o.none = semantic::NoneRule::Threshold(t);
        }
        o
    }

    pub fn resolve(r: &RouterArgs, cfg: &Config) -> Result<RouterSettings> {
        let c = &cfg.router;
        let repeats = r.repeats.or(c.repeats).unwrap_or(1);
        if repeats == 0 {
            return Err(Error::Usage("--repeats must be at least 1".into()));
        }
        let timeout = r.request_timeout.or(c.timeout_secs).unwrap_or(120);
        if timeout == 0 {
            return Err(Error::Usage(
                "--request-timeout 0: expected at least 1 second".into(),
            ));
        }
        let kind = r.router.or(c.kind).unwrap_or(RouterKind::Semantic);
        let semantic_only = [
            ("--semantic-variant", r.semantic_variant.is_some()),
            ("--none-threshold", r.none_threshold.is_some()),
        ];
        if let Some((flag, _)) = semantic_only.iter().find(|(_, set)| *set)
            && !kind.is_proxy()
        {
            return Err(Error::Usage(format!(
                "{flag} sets the semantic router; --router {kind} does not read it"
            )));
        }
        let rotations = r.rotations.or(c.rotations);
        let order = match (r.order.or(c.order).unwrap_or(OrderKind::Rotate), rotations) {
            (OrderKind::Shuffle, Some(_)) => {
                return Err(Error::Usage(
                    "--rotations counts the orders of --order rotate; --order shuffle gives every case its own".into(),
                ));
            }
            (OrderKind::Shuffle, None) => Order::Shuffle,
            (OrderKind::Rotate, Some(0)) => {
                return Err(Error::Usage(
                    "--rotations 0: expected at least 1 order".into(),
                ));
            }
            (OrderKind::Rotate, k) => Order::Rotate {
                rotations: k.unwrap_or(Order::DEFAULT_ROTATIONS),
            },
        };
        Ok(RouterSettings {
            kind: r.router.or(c.kind),
            model: r.model.clone().or(c.model.clone()),
            base_url: r.base_url.clone().or(c.base_url.clone()),
            key_env: r.api_key_env.clone().or(c.api_key_env.clone()),
            azure_api_version: r.azure_api_version.clone().or(c.azure_api_version.clone()),
            tool_choice: r.tool_choice.or(c.tool_choice).unwrap_or(ToolChoice::Auto),
            repeats,
            temperature: r.temperature.or(c.temperature).unwrap_or(0.0),
            seed: r.seed.or(c.seed).unwrap_or(0),
            order,
            concurrency: r.concurrency.or(c.concurrency),
            timeout: Duration::from_secs(timeout),
            max_attempts: r.max_attempts.or(c.max_attempts).unwrap_or(4).max(1),
            none_threshold: r.none_threshold.or(c.none_threshold),
            semantic_variant: r.semantic_variant.or(c.semantic_variant),
            prices: r
                .price_input
                .or(c.price_input_per_mtok)
                .zip(r.price_output.or(c.price_output_per_mtok))
                .map(|(i, o)| [i, o]),
            cached_price: r.price_cached_input.or(c.price_cached_input_per_mtok),
        })
    }

    pub fn kind(&self) -> RouterKind {
        self.kind.unwrap_or(RouterKind::Semantic)
    }

    pub fn retry(&self) -> RetryPolicy {
        RetryPolicy {
            max_attempts: self.max_attempts,
            ..RetryPolicy::default()
        }
    }

    /// The chat endpoint the settings name; `what` says who needs it in errors.
    fn chat(&self, anthropic: bool, what: &str) -> Result<Chat> {
        let model = self.model.clone().ok_or_else(|| {
            Error::Usage(if what.starts_with("--router") {
                format!("{what} needs --model")
            } else {
                format!(
                    "{what} needs a model: --model M (and --base-url URL for a local server such as llama.cpp)"
                )
            })
        })?;
        let default_env = if anthropic {
            ANTHROPIC_KEY_ENV
        } else {
            OPENAI_KEY_ENV
        };
        let env_name = self.key_env.clone().unwrap_or_else(|| default_env.into());
        let key = load_key(&env_name);
        if key.is_none() && self.base_url.is_none() {
            return Err(Error::Usage(if anthropic {
                format!("{what} needs the key in ${env_name}")
            } else {
                format!(
                    "{what} against the OpenAI API needs the key in ${env_name} (or --base-url for a local server)"
                )
            }));
        }
        let base = self.base_url.as_deref();
        if anthropic {
            return Chat::anthropic(base, &model, key, self.timeout);
        }
        let chat = Chat::openai(base, &model, key, self.timeout)?;
        match &self.azure_api_version {
            Some(v) => chat.azure(v),
            None => Ok(chat),
        }
    }

    /// The router the settings name. The semantic router embeds with `embedder` (the bundled
    /// model when none is given).
    pub fn router(&self, embedder: Option<Arc<dyn Embedder>>) -> Result<Box<dyn Router>> {
        Ok(match self.kind() {
            RouterKind::Semantic => {
                let e = match embedder {
                    Some(e) => e,
                    None => Arc::from(EmbedderKind::MiniLm.build()?),
                };
                Box::new(SemanticRouter::new(e, self.semantic_options()))
            }
            RouterKind::Openai => {
                Box::new(ProviderRouter::new(self.chat(false, "--router openai")?))
            }
            RouterKind::Anthropic => {
                Box::new(ProviderRouter::new(self.chat(true, "--router anthropic")?))
            }
        })
    }

    /// The drafting model for `what` (`--llm-paraphrase`, `suite init --llm`): the router
    /// settings' model, on Anthropic when the router is `anthropic`, else any OpenAI-compatible
    /// endpoint. The replay router may be `semantic`: its model flags then name the drafter.
    pub fn drafter(&self, what: &str, cache: &Cache) -> Result<JsonLlm> {
        let chat = self.chat(self.kind() == RouterKind::Anthropic, what)?;
        let mut llm = JsonLlm::new(chat).with_cache(cache);
        llm.sampling.temperature = self.temperature;
        llm.sampling.seed = Some(self.seed);
        llm.retry.max_attempts = self.max_attempts;
        Ok(llm)
    }

    /// Requests in flight for `by`: the flag, else `driftgate.toml`, else the command's default.
    pub fn concurrency(&self, by: Use) -> usize {
        let default = match by {
            // The semantic router is local CPU work: parallel stress requests only embed the same
            // new tool text several times over (measured 2.6× the CPU on the filesystem corpus).
            // `check` embeds every text up front, so its requests share nothing to redo.
            Use::Stress if self.kind().is_proxy() => 1,
            Use::Check | Use::Lint | Use::Stress => 4,
        };
        self.concurrency.unwrap_or(default).max(1)
    }

    /// Replay settings for `by`.
    pub fn replay(&self, by: Use) -> ReplayConfig {
        ReplayConfig {
            system_prompt: if self.kind().is_proxy() {
                String::new()
            } else {
                SYSTEM_PROMPT.to_string()
            },
            tool_choice: self.tool_choice,
            sampling: Sampling {
                temperature: self.temperature,
                seed: Some(self.seed),
                max_tokens: 256,
            },
            repeats: self.repeats,
            first_repeat: 0,
            concurrency: self.concurrency(by),
            seed: self.seed,
            order: self.order,
            retry: self.retry(),
            batch: None,
        }
    }
}

/// The command a router's settings serve: each has its own default concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    Check,
    Lint,
    Stress,
}

/// `check`'s batch flags, before `driftgate.toml` and the defaults.
pub struct BatchFlags {
    pub on: bool,
    pub wait_secs: Option<f64>,
    pub poll_secs: Option<f64>,
}

/// `--batch` over `[router] batch`: the batch options, or `None` for live requests. A router
/// without a batch API (the semantic router, Azure) is a usage error, not a silent live run.
pub fn batch(
    f: &BatchFlags,
    cfg: &Config,
    router: &dyn crate::route::Router,
) -> Result<Option<crate::llm::batch::Options>> {
    let c = &cfg.router;
    if !(f.on || c.batch == Some(true)) {
        return Ok(None);
    }
    let Some(chat) = router.batch_chat() else {
        return Err(Error::Usage(format!(
            "--batch sends requests through a provider's batch API; the {} router has none (use --router openai or --router anthropic)",
            router.kind()
        )));
    };
    chat.batch_supported()?;
    let secs = |v: Option<f64>, name: &str, default: f64| -> Result<Duration> {
        let v = v.unwrap_or(default);
        if !(v.is_finite() && v > 0.0 && v <= 7.0 * 86_400.0) {
            return Err(Error::Usage(format!(
                "--{name} {v}: expected seconds above 0, at most a week"
            )));
        }
        Ok(Duration::from_secs_f64(v))
    };
    let d = crate::llm::batch::Options::default();
    Ok(Some(crate::llm::batch::Options {
        wait: secs(
            f.wait_secs.or(c.batch_wait_secs),
            "batch-wait",
            d.wait.as_secs_f64(),
        )?,
        poll_max: secs(
            f.poll_secs.or(c.batch_poll_secs),
            "batch-poll",
            d.poll_max.as_secs_f64(),
        )?,
    }))
}

/// The Actions runner's environment.
pub fn actions() -> Actions {
    Actions {
        active: env("GITHUB_ACTIONS").as_deref() == Some("true"),
        repository: env("GITHUB_REPOSITORY"),
        event_name: env("GITHUB_EVENT_NAME"),
        event_path: env("GITHUB_EVENT_PATH").map(PathBuf::from),
        workflow: env("GITHUB_WORKFLOW"),
        job: env("GITHUB_JOB"),
        server_url: env("GITHUB_SERVER_URL"),
        run_id: env("GITHUB_RUN_ID"),
        api_url: env("GITHUB_API_URL"),
        step_summary: env("GITHUB_STEP_SUMMARY").map(PathBuf::from),
        output: env("GITHUB_OUTPUT").map(PathBuf::from),
        max_wait: env("DRIFTGATE_GITHUB_MAX_WAIT")
            .and_then(|s| s.parse().ok())
            .map(Duration::from_secs)
            .unwrap_or(crate::github::api::DEFAULT_MAX_WAIT),
    }
}

/// What to publish, from `--github`/`--no-github` and the runner.
pub fn publish(g: &GithubArgs, actions: &Actions) -> Publish {
    Publish {
        enabled: g.github || (!g.no_github && actions.active),
        comment: g.comment,
        token: {
            let t = env(&g.github_token_env).map(Secret::new);
            crate::http::secret::hold(t.clone());
            t
        },
        token_env: g.github_token_env.clone(),
        report_path: g.report_path.clone(),
        report_url: g.report_url.clone(),
        report_artifact: g.report_artifact.clone(),
        annotations: g.annotations,
    }
}

/// The pull request's base, as GitHub Actions describes it.
pub fn default_base_ref() -> Option<String> {
    if let Ok(path) = std::env::var("GITHUB_EVENT_PATH")
        && let Ok(text) = std::fs::read_to_string(path)
        && let Ok(ev) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(sha) = ev
            .pointer("/pull_request/base/sha")
            .and_then(|v| v.as_str())
    {
        return Some(sha.to_string());
    }
    env("GITHUB_BASE_REF").map(|b| format!("origin/{b}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn args_to_kind() {
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            e: EmbedArgs,
        }
        let k = |v: &[&str]| T::try_parse_from(std::iter::once("t").chain(v.iter().copied()));
        assert_eq!(
            embedder_kind(&k(&[]).unwrap().e).unwrap(),
            EmbedderKind::MiniLm
        );
        let o = k(&[
            "--embedder",
            "openai",
            "--embed-model",
            "m",
            "--embed-api-key-env",
            "DRIFTGATE_TEST_SURELY_UNSET_KEY_VARIABLE",
        ])
        .unwrap();
        assert_eq!(
            embedder_kind(&o.e).unwrap(),
            EmbedderKind::OpenAi {
                base_url: DEFAULT_BASE_URL.into(),
                model: "m".into(),
                key: None,
            }
        );
        let no_model = k(&["--embedder", "openai"]).unwrap();
        assert!(matches!(embedder_kind(&no_model.e), Err(Error::Usage(_))));
        let stray = k(&["--embed-model", "m"]).unwrap();
        assert!(matches!(embedder_kind(&stray.e), Err(Error::Usage(_))));
    }

    #[test]
    fn env_values_empty_or_not_utf8_are_no_key() {
        assert_eq!(key_from_env_value(None), None);
        assert_eq!(key_from_env_value(Some("".into())), None);
        assert_eq!(key_from_env_value(Some(" \n".into())), None);
        assert_eq!(
            key_from_env_value(Some("abc\n".into())).unwrap().expose(),
            "abc"
        );
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            assert_eq!(
                key_from_env_value(Some(std::ffi::OsString::from_vec(vec![0xff, 0x61]))),
                None
            );
        }
        assert_eq!(load_key("DRIFTGATE_TEST_SURELY_UNSET_KEY_VARIABLE"), None);
    }

    #[test]
    fn router_flags_override_the_config_and_zero_is_refused() {
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            r: RouterArgs,
        }
        let mut cfg = Config::default();
        cfg.router.max_attempts = Some(7);
        cfg.router.seed = Some(3);
        let t = T::parse_from(["t", "--seed", "9"]);
        let s = RouterSettings::resolve(&t.r, &cfg).unwrap();
        assert_eq!((s.max_attempts, s.seed), (7, 9));
        let t = T::parse_from(["t", "--request-timeout", "0"]);
        assert!(matches!(
            RouterSettings::resolve(&t.r, &cfg),
            Err(Error::Usage(_))
        ));
        let t = T::parse_from(["t", "--repeats", "0"]);
        assert!(RouterSettings::resolve(&t.r, &cfg).is_err());
    }
}
