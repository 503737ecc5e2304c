//! `driftgate check`: the gate.

use std::path::PathBuf;

use clap::Args;

use crate::app::console::{Progress, Terminal};
use crate::app::flags::{CompareArgs, RouterArgs};
use crate::app::policy::Policy;
use crate::app::settings::RouterSettings;
use crate::app::{settings, sides};
use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::job::check::{self, CheckInputs, ReplayInputs};
use crate::report::Command;
use crate::source::Spec;
use crate::source::tree::Tree;

/// `--replay`: which cases head is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Replay {
    Full,
    Targeted,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Base tool set (file, REV:PATH, lockfile).
    #[arg(long, conflicts_with = "tools")]
    pub base: Option<String>,
    /// Head tool set (file, REV:PATH, lockfile).
    #[arg(long, conflicts_with = "tools")]
    pub head: Option<String>,
    /// Routing suite (YAML or JSONL); see docs/suite.schema.json.
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// Measure with the head suite even if the PR changed it (default: the base suite).
    #[arg(long)]
    pub use_head_suite: bool,
    /// Without a suite (no --suite, none in the policy's config), run the diff alone instead of
    /// refusing (the Action's form: the base revision's config decides whether there is one).
    #[arg(long)]
    pub suite_optional: bool,
    /// Measure with a suite that has cases still marked `review: true` (proposed by `suite
    /// import`, not yet confirmed); the report says how many.
    #[arg(long)]
    pub allow_unreviewed: bool,
    /// Also write the alias map of the names the router invented at head (tools it called that
    /// were not offered, parameters the schemas do not declare) → the real ones, matched by
    /// meaning (docs/canary.md, "Alias map").
    #[arg(long, value_name = "FILE")]
    pub aliases: Option<PathBuf>,
    /// Extra tools offered with every case (e.g. other servers' tools), so the realistic crowd is present.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub distractors: Vec<String>,
    /// Re-ask every flipped case (routing or call) K more times at both sides; a flip counts only
    /// if it holds in the majority of the case's answers and came back in more than half of the
    /// re-asks, and the report says "confirmed 3/3" or "did not reproduce" (cheap: flips are
    /// few). Use with a temperature above 0.
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub confirm: u32,
    /// Replay only shard I of N (a stable split of the cases by id) and write a partial report
    /// carrying the raw runs; `driftgate merge` of all N parts gives the verdict. A part exits 0
    /// unless its measurement is incomplete (3), and posts no comment.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<crate::replay::shard::Shard>,
    /// Which cases head is asked: `full` (every case) or `targeted` (only those a change can
    /// reach: expected, forbidden or base-answered tool changed, or a changed tool among the 3
    /// nearest to the prompt; the rest carry base's answers, counted in the report). Exact for the
    /// semantic router, a bet for an LLM.
    #[arg(long, value_enum, default_value_t = Replay::Full)]
    pub replay: Replay,
    /// Print what the check would send — requests per side after the cache, input tokens (the
    /// model family's tokenizer where public, else estimated), cost at --price-input/--price-output
    /// — and exit 0 without sending anything (`--format json` for a JSON plan).
    #[arg(long)]
    pub plan: bool,
    /// Send the requests no cache answers through the provider's batch API (OpenAI Batch API,
    /// Anthropic Message Batches): half the price, answers within hours instead of seconds. The
    /// batch ids are kept in the cache, so a run that stops waiting resumes them when run again.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: how long to wait for the batch before the run is incomplete (exit 3; run the
    /// same command again to resume) [default: 3600].
    #[arg(long, value_name = "SECS", requires = "batch")]
    pub batch_wait: Option<f64>,
    /// With --batch: the longest pause between two polls of the batch [default: 30].
    #[arg(long, value_name = "SECS", requires = "batch")]
    pub batch_poll: Option<f64>,
    /// Also grade both sides' tools on the TDQS rubric with the router's model (openai or
    /// anthropic) and report what the PR moved: tool tiers, description quality, coherence,
    /// overall. Unchanged tools come from the cache; a grade never given is exit 3.
    #[arg(long)]
    pub lint_llm: bool,
    /// After a failing check, draft and verify rewrites as `driftgate fix` does; in a pull
    /// request, post the offered ones as review comments with a `suggestion` block and link them
    /// from the PR comment. The verdict and exit code are the check's.
    #[arg(long)]
    pub suggest: bool,
    /// After the report, say on stderr what the run cost in embeddings: texts asked, distinct,
    /// embedded by the model, from the disk cache.
    #[arg(long)]
    pub verbose: bool,
    /// Write the texts the run had the model embed (each once), one JSON string per line, so a
    /// bench can time embedding them in one call (`driftgate embed --json-lines`; bench/check_embed.sh).
    #[arg(long, value_name = "FILE", hide = true)]
    pub embedded_texts: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub router: RouterArgs,
    #[command(flatten)]
    pub c: CompareArgs,
}

/// A suite with cases still marked `review: true` measures nothing a human confirmed: refused,
/// or (with `allow`) measured with a note saying how many.
fn unreviewed_note(suite: &crate::suite::SuiteChoice, allow: bool) -> Result<Option<String>> {
    let n = suite.unreviewed.len();
    if n == 0 {
        return Ok(None);
    }
    let cases = if n == 1 { "case is" } else { "cases are" };
    if !allow {
        return Err(Error::Usage(format!(
            "{}: {n} {cases} marked `review: true` (an expectation proposed by `suite import`, not confirmed): review them and delete `review`, or pass --allow-unreviewed to measure anyway",
            suite.info.identity.source
        )));
    }
    Ok(Some(format!(
        "{n} suite {cases} marked `review: true`: their expectations are unconfirmed proposals, measured because --allow-unreviewed was given."
    )))
}

/// The distractor packs (flags and the policy's `[suite] distractors`). In a pull request a pack
/// that is a file is read at the base revision; the PR's edit to it is recorded, not applied.
async fn load_packs(
    files: Vec<String>,
    policy: &mut Policy,
    live: &crate::source::live::LiveOptions,
) -> Result<Vec<crate::tools::Tool>> {
    let mut packs = Vec::new();
    for f in files {
        let spec = Spec::parse(&f);
        // Outside a pull request, or a pack outside the checkout (the workflow's own): as it is.
        let in_pr = match (policy.rev.clone(), &spec) {
            (Some(rev), Spec::File(path)) if crate::source::tree::in_checkout(path) => {
                Some((rev, path))
            }
            _ => None,
        };
        let Some((rev, path)) = in_pr else {
            packs.extend(sides::load(&spec, live).await?.0.tools.tools);
            continue;
        };
        let dir = crate::source::tree::dir_of(path);
        let base = Tree::at(&rev, dir).read(path)?;
        let head = Tree::work(dir).read(path).ok().flatten();
        if base != head {
            let what = match (&base, &head) {
                (None, _) => "added by the PR",
                (_, None) => "removed (or made unreadable) by the PR",
                _ => "edited by the PR",
            };
            policy.pack_changed(&f, what);
        }
        let text = match (policy.trust_head, base, head) {
            (true, _, Some(h)) => h,
            (false, Some(b), _) => b,
            (true, Some(_), None) | (_, None, None) => {
                return Err(Error::Usage(format!("distractor pack {f}: no such file")));
            }
            (false, None, Some(_)) => {
                return Err(Error::Incomplete(format!(
                    "distractor pack {f} does not exist at the base revision {rev}: a pack the pull request brings cannot grade it. Merge it first, or have a maintainer opt in with --trust-head-policy"
                )));
            }
        };
        let label = match policy.trust_head {
            true => f.clone(),
            false => format!("{rev}:{f}"),
        };
        packs.extend(crate::source::parse_text(&text, &label)?.0.tools);
    }
    Ok(packs)
}

/// What `check` measures, resolved from the flags and the policy's config; or, without a suite
/// and with `--suite-optional`, the diff it runs instead.
enum Prepared {
    Check(Box<(CheckInputs, Policy, Cache)>),
    WithoutSuite(Box<(Spec, Spec, Policy)>),
}

pub async fn run(k: CheckArgs) -> Result<i32> {
    let (inputs, policy, cache) = match prepare(&k).await? {
        Prepared::Check(p) => *p,
        Prepared::WithoutSuite(d) => {
            let (base, head, policy) = *d;
            return super::diff::compare(&k.c, base, head, policy).await;
        }
    };
    let a = &k.c;
    let console = Terminal::new(Progress::detect());
    if k.plan {
        let plan = match k.suggest {
            false => check::plan(&inputs)?,
            true => crate::job::fix::plan(&inputs, 0)?,
        };
        let text = match a.out.format {
            crate::report::render::Format::Json => {
                serde_json::to_string_pretty(&plan).expect("a plan serialises") + "\n"
            }
            _ => crate::report::render::terminal::plan::render(&plan),
        };
        crate::app::output::deliver(a.out.output.as_deref(), &text)?;
        return Ok(crate::error::exit::PASS);
    }
    let stats = inputs.embedder.clone();
    let names: std::collections::BTreeSet<String> = [&inputs.base, &inputs.head]
        .iter()
        .flat_map(|l| l.tools.tools.iter().map(|t| t.name.clone()))
        .collect();
    let head_defs: Vec<serde_json::Value> = inputs
        .head
        .tools
        .tools
        .iter()
        .map(|t| t.to_value())
        .collect();
    let mut report = match k.suggest {
        false => check::run(Command::Check, inputs, &console).await?,
        true => suggest(&k, inputs, &console).await?,
    };
    super::finish(&mut report, &policy, &cache);
    if let (Some(path), Some(routing)) = (&k.aliases, &report.routing) {
        write_aliases(path, routing, &names, &head_defs, &console).await?;
    }
    let code = super::deliver(report, &a.out, &a.github, &console).await;
    embedding_notes(&k, stats.as_deref(), &console)?;
    code
}

/// `--suggest`: the check through `fix`, the offered rewrites posted in a pull request and
/// carried in the report.
async fn suggest(
    k: &CheckArgs,
    inputs: CheckInputs,
    console: &Terminal,
) -> Result<crate::report::Report> {
    if k.shard.is_some() || k.batch {
        return Err(Error::Usage(
            "--suggest replays every rewrite on the whole suite at once: not with --shard or --batch".into(),
        ));
    }
    let head = inputs.head.clone();
    let (mut report, fixed) = crate::job::fix::run(inputs, None, console).await?;
    let actions = settings::actions();
    let publish = settings::publish(&k.c.github, &actions);
    let outcomes = crate::github::suggest::post(&fixed, &head, &publish, &actions, console).await;
    report.suggestions = crate::github::suggest::suggested(&fixed, &outcomes);
    Ok(report)
}

/// `--aliases`: the invented tool names head's replay produced, mapped by meaning to head's
/// tools and written for `watch`.
async fn write_aliases(
    path: &std::path::Path,
    routing: &crate::replay::Routing,
    names: &std::collections::BTreeSet<String>,
    head_defs: &[serde_json::Value],
    console: &Terminal,
) -> Result<()> {
    let head: std::collections::BTreeMap<&str, &serde_json::Value> = head_defs
        .iter()
        .filter_map(|d| Some((d.get("name")?.as_str()?, d)))
        .collect();
    let invented = crate::canary::aliases::invented_in(routing);
    let embedder = crate::embed::MiniLm::new();
    let map = crate::canary::aliases::map_for(&head, names, &invented, &embedder).await?;
    super::canary::write_aliases(path, &map, console)
}

/// `--embedded-texts FILE` and `--verbose`'s embedding line.
fn embedding_notes(
    k: &CheckArgs,
    stats: Option<&dyn crate::embed::Embedder>,
    console: &Terminal,
) -> Result<()> {
    if let Some(path) = &k.embedded_texts {
        let texts = stats.map(|e| e.embedded_texts()).unwrap_or_default();
        let lines: String = texts
            .iter()
            .map(|t| serde_json::to_string(t).expect("a string serialises") + "\n")
            .collect();
        crate::app::output::write(path, &lines)?;
    }
    if k.verbose {
        use crate::console::Console as _;
        match stats.and_then(|e| e.stats()) {
            Some(s) => console.note(&format!(
                "embeddings: {} text(s) asked, {} distinct; {} embedded by the model in {:.2} s (its load included; {} call(s)), {} read from the disk cache, {} repeat(s) answered in the process",
                s.asked, s.distinct, s.misses, s.model_ms as f64 / 1000.0, s.model_calls, s.hits, s.memo_hits
            )),
            None => console.note("embeddings: meaning drift was off (--no-embed), nothing counted"),
        }
    }
    Ok(())
}

/// `fix`'s inputs: `check`'s, where a suite is required.
pub(super) async fn prepare_with_suite(k: &CheckArgs) -> Result<(CheckInputs, Policy, Cache)> {
    match prepare(k).await? {
        Prepared::Check(p) => Ok(*p),
        Prepared::WithoutSuite(_) => Err(Error::Usage(
            "fix needs a suite: --suite FILE (or suite.path in driftgate.toml)".into(),
        )),
    }
}

/// Settings and inputs, resolved once: the policy (base side's config), the suite, the cache,
/// both sides, the packs, the embedder and the router.
async fn prepare(k: &CheckArgs) -> Result<Prepared> {
    let a = &k.c;
    // Which sides, and the policy: read at the PR's base, it decides everything below.
    let (base_spec, head_spec) = sides::side_specs(k.base.as_ref(), k.head.as_ref(), &a.sides)?;
    let rev = sides::policy_revision(&base_spec, &a.sides);
    let mut policy = Policy::resolve(
        a.gate.config.as_deref(),
        rev.as_deref(),
        a.gate.trust_head_policy,
    )?;
    let cfg = policy.config.clone();
    let Some(suite_path) = k.suite.clone().or(cfg.suite.path.clone()) else {
        if k.suite_optional {
            return Ok(Prepared::WithoutSuite(Box::new((
                base_spec, head_spec, policy,
            ))));
        }
        return Err(Error::Usage(
            "check needs --suite FILE (or suite.path in driftgate.toml)".into(),
        ));
    };
    // Every setting, once, before any input is read.
    let s = Settings::resolve(k, &cfg, sides::starts_server(&[&base_spec, &head_spec]))?;
    // The inputs: the suite, both sides, the distractor packs.
    let suite = crate::suite::choose_suite(
        &suite_path,
        rev.as_deref(),
        k.use_head_suite || a.gate.trust_head_policy || cfg.suite.use_head_suite.unwrap_or(false),
    )?;
    policy.suite_changed(&suite, &suite_path);
    let mut notes = Vec::new();
    if let Some(n) = unreviewed_note(&suite, k.allow_unreviewed)? {
        notes.push(n);
    }
    notes.extend(s.cache_notes);
    let (base, head, masked) = sides::load_sides(&base_spec, &head_spec, &s.live).await?;
    notes.extend(masked);
    let pack_files: Vec<String> = k
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
    let packs = load_packs(pack_files, &mut policy, &s.live).await?;
    let inputs = CheckInputs {
        base,
        head,
        thresholds: s.thresholds,
        embedder: s.embedder,
        replay: Some(ReplayInputs {
            suite,
            router: s.router,
            cache: s.cache.clone(),
            config: s.config,
            packs,
            price_per_mtok: s.price_per_mtok,
            price_cached_input: s.price_cached_input,
            confirm: k.confirm,
            shard: k.shard,
            targeted: k.replay == Replay::Targeted,
        }),
        notes,
        scan_allow: cfg.scan.allow.clone(),
        lint_model: s.lint_model,
    };
    Ok(Prepared::Check(Box::new((inputs, policy, s.cache))))
}

/// Every setting `check` measures with: flags over the base side's config over defaults,
/// resolved in one place before any input is read.
struct Settings {
    thresholds: crate::gate::CheckThresholds,
    /// Opened before the sides load: a server started later runs after the cache opened, so
    /// whatever it writes there reads as appeared-during-the-run, never as an answer.
    cache: Cache,
    cache_notes: Vec<String>,
    live: crate::source::live::LiveOptions,
    embedder: Option<std::sync::Arc<dyn crate::embed::Embedder>>,
    router: std::sync::Arc<dyn crate::route::Router>,
    config: crate::replay::ReplayConfig,
    /// Input and output price per million tokens, and the cached-input price.
    price_per_mtok: Option<[f64; 2]>,
    price_cached_input: Option<f64>,
    lint_model: Option<check::LintModel>,
}

impl Settings {
    fn resolve(k: &CheckArgs, cfg: &crate::app::config::Config, server: bool) -> Result<Settings> {
        let a = &k.c;
        let thresholds = settings::thresholds(&a.gate, cfg)?;
        let (cache, cache_notes) = settings::cache(&a.gate.cache, cfg, server);
        let live = settings::live(&a.live)?;
        let embedder = settings::drift_embedder(&a.gate, &cache)?;
        let r = RouterSettings::resolve(&k.router, cfg)?;
        let router: std::sync::Arc<dyn crate::route::Router> =
            std::sync::Arc::from(r.router(embedder.clone())?);
        let lint_model = match k.lint_llm {
            false => None,
            true if router.kind().is_proxy() => {
                return Err(Error::Usage(
                    "--lint-llm needs a model: --router openai|anthropic --model M (or [router] in driftgate.toml)"
                        .into(),
                ));
            }
            true => Some(check::LintModel {
                router: r.router(None)?,
                cache: cache.clone(),
                concurrency: r.concurrency(settings::Use::Check),
                retry: r.retry(),
            }),
        };
        let mut config = r.replay(settings::Use::Check);
        config.batch = settings::batch(&k.batch_settings(), cfg, router.as_ref())?;
        Ok(Settings {
            thresholds,
            cache,
            cache_notes,
            live,
            embedder,
            router,
            config,
            price_per_mtok: r.prices,
            price_cached_input: r.cached_price,
            lint_model,
        })
    }
}

impl CheckArgs {
    fn batch_settings(&self) -> settings::BatchFlags {
        settings::BatchFlags {
            on: self.batch,
            wait_secs: self.batch_wait,
            poll_secs: self.batch_poll,
        }
    }
}
