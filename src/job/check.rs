//! The check job: load both sides, diff, measure meaning drift, replay the suite at base and head,
//! and build the one `Report`. The CLI only fills in `CheckInputs`.

use std::sync::Arc;

use crate::cache::Cache;
use crate::console::Console;
use crate::cosine::{self, Drift};
use crate::diff::{self, Severity};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::gate::{self, CheckThresholds};
use crate::injection::ScanSection;
use crate::replay::shard::{Shard, ShardPart};
use crate::replay::{self, ReplayConfig, Replayer, Routing, SideRun};
use crate::report::{self, Command, Report, Side};
use crate::route::{BatchInfo, Router, RouterInfo};
use crate::source::Loaded;
use crate::suite::{self, SuiteChoice};
use crate::tools::Tool;

pub struct CheckInputs {
    pub base: Loaded,
    pub head: Loaded,
    pub thresholds: CheckThresholds,
    /// `None` skips meaning drift (`--no-embed`).
    pub embedder: Option<Arc<dyn Embedder>>,
    /// `None` skips the replay (plain `diff`).
    pub replay: Option<ReplayInputs>,
    pub notes: Vec<String>,
    /// Accepted scan findings (`[[scan.allow]]`), each with its reason.
    pub scan_allow: Vec<crate::injection::Allow>,
    /// `--lint-llm`: grade both sides' tools with this model and report the tier moves.
    pub lint_model: Option<LintModel>,
}

/// The model `check --lint-llm` grades tools with.
pub struct LintModel {
    pub router: Box<dyn Router>,
    pub cache: Cache,
    pub concurrency: usize,
    pub retry: crate::http::retry::RetryPolicy,
}

pub struct ReplayInputs {
    pub suite: SuiteChoice,
    /// Shared: `fix` measures every rewrite it drafts through the same router.
    pub router: Arc<dyn Router>,
    pub cache: Cache,
    pub config: ReplayConfig,
    pub packs: Vec<Tool>,
    pub price_per_mtok: Option<[f64; 2]>,
    /// USD per million cached input tokens (`None`: the input price).
    pub price_cached_input: Option<f64>,
    /// `--confirm K`: re-ask the flipped cases K more times at both sides (0: off).
    pub confirm: u32,
    /// `--shard i/n`: replay only this shard's cases and carry the runs for `merge`.
    pub shard: Option<Shard>,
    /// `--replay targeted`: ask head only the cases a change can reach.
    pub targeted: bool,
}

/// Run `diff` (no replay) or `check`; progress goes to `console`. The stages, in order: pair
/// (the diff), scan, embed what can be known up front, drift, replay, lint, then the verdict.
pub async fn run(command: Command, inputs: CheckInputs, console: &dyn Console) -> Result<Report> {
    let CheckInputs {
        base,
        head,
        thresholds,
        embedder,
        replay,
        mut notes,
        scan_allow,
        lint_model,
    } = inputs;
    let d = diff::diff(&base.tools, &head.tools);
    let scan = ScanSection::delta(&base.tools, &head.tools, &scan_allow);
    let embedder = embedder.as_deref();
    let sides = Sides {
        d: &d,
        base: &base,
        head: &head,
    };
    // The suites replayed at each side, made once: the up-front embedding reads them too.
    let replay = replay.map(|r| {
        let full_head_suite = suite_notes(&r, sides, &mut notes);
        let suites = replayed_suites(&r, full_head_suite);
        (r, suites)
    });
    if let Some(e) = embedder {
        embed_up_front(command, e, sides, replay.as_ref()).await?;
    }
    let drift: Option<Drift> = match embedder {
        Some(e) => {
            Some(cosine::measure(&d, &base.tools, &head.tools, e, thresholds.cosine_floor).await?)
        }
        None => None,
    };
    let replayed = match replay {
        Some((r, suites)) => {
            Some(replay_sides(&r, suites, sides, embedder, &thresholds, console).await?)
        }
        None => None,
    };
    // Lint is a heuristic: reported (what the PR introduced or fixed), never part of the verdict.
    let lint = match command {
        Command::Check => lint_delta(sides, embedder, lint_model.as_ref(), &mut notes).await?,
        Command::Diff => None,
    };
    if let Some(d) = &drift
        && d.floor_source == crate::cosine::FloorSource::Uncalibrated
    {
        notes.push(format!(
            "the cosine floor {:.2} is not calibrated for {} (no row in cosine::floors; docs/calibration.md says how to add one): cosine scales differ from model to model",
            d.floor, d.model
        ));
    }
    let Replayed {
        routing,
        suite: suite_info,
        router: router_info,
        mut part,
        mut data_notes,
    } = replayed.unwrap_or_default();
    if let Some(p) = part.as_mut() {
        p.notes = notes.clone();
        data_notes.push(format!(
            "shard {}: replayed {} of the suite's {} case(s); this partial report's routing covers those only — `driftgate merge` of all {} parts gives the verdict",
            p.shard,
            p.cases.len(),
            p.suite_cases,
            p.shard.count
        ));
    }
    notes.extend(data_notes);
    notes.extend(gate::review_notes(
        drift.as_ref(),
        routing.as_ref(),
        &thresholds,
    ));
    let mut verdict = gate::with_lint_model(
        gate::check_verdict(
            &d,
            drift.as_ref(),
            routing.as_ref(),
            Some(&scan),
            &thresholds,
        ),
        lint.as_ref(),
    );
    if let Some(p) = &part {
        verdict.reason = format!(
            "partial, shard {} ({} of {} cases; merge the parts for the verdict): {}",
            p.shard,
            p.cases.len(),
            p.suite_cases,
            verdict.reason
        );
    }
    Ok(Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: report::VERSION.to_string(),
        command,
        verdict,
        base: Side::of(&base),
        head: Side::of(&head),
        thresholds,
        diff: d,
        drift,
        routing,
        suite: suite_info,
        router: router_info,
        notes,
        lint,
        scan: Some(scan),
        github: None,
        shard: part,
        policy: None,
        suggestions: Vec::new(),
    })
}

/// The two loaded sides and their pairing, as every stage after the diff reads them.
#[derive(Clone, Copy)]
struct Sides<'a> {
    d: &'a diff::Diff,
    base: &'a Loaded,
    head: &'a Loaded,
}

/// What the replay stage adds to the report (all empty for a plain `diff`).
#[derive(Default)]
struct Replayed {
    routing: Option<Routing>,
    suite: Option<crate::suite::SuiteInfo>,
    router: Option<RouterInfo>,
    /// `--shard`: the runs this process made, for `merge`.
    part: Option<ShardPart>,
    /// Notes that depend on the answers, after the ones that do not (a shard part carries those).
    data_notes: Vec<String>,
}

/// Replay `suites` (from [`replayed_suites`]) at base and head (targeted and confirmed as
/// asked), compare them case by case, and describe the router.
async fn replay_sides(
    r: &ReplayInputs,
    (run_suite, positions, head_suite): Suites,
    sides: Sides<'_>,
    embedder: Option<&dyn Embedder>,
    thresholds: &CheckThresholds,
    console: &dyn Console,
) -> Result<Replayed> {
    let Sides { base, head, .. } = sides;
    let replayer = Replayer::new(r.router.as_ref(), &r.cache, &r.config)
        .with_circle(&base.tools, &r.packs)
        .with_console(console);
    // One batch for both sides, one wait; targeted replay knows head's cases only after
    // base answered, so it batches each side on its own.
    if !r.targeted {
        replayer
            .prefetch(
                &[(&run_suite, &base.tools), (&head_suite, &head.tools)],
                &r.packs,
            )
            .await;
    }
    let base_run = replayer
        .run_side("base", &run_suite, &base.tools, &r.packs)
        .await;
    let (head_run, carried) = if r.targeted {
        let emb = embedder.ok_or_else(|| {
            Error::Usage("--replay targeted ranks each prompt's nearest tools with the embedder, so it cannot run with --no-embed".into())
        })?;
        let (run, carried) = ask_head_targeted(
            r,
            &replayer,
            [&run_suite, &head_suite],
            &base_run,
            sides,
            emb,
        )
        .await?;
        (run, Some(carried))
    } else {
        let run = replayer
            .run_side("head", &head_suite, &head.tools, &r.packs)
            .await;
        (run, None)
    };
    let mut data_notes: Vec<String> = carried.as_ref().map(carried_note).into_iter().collect();
    data_notes.extend(repeats_note(
        &base_run,
        &head_run,
        r.config.repeats,
        r.config.sampling.temperature,
    ));
    let mut batch_ids = replayer.batch_ids();
    let (mut routing, base_run, head_run) = compare_confirmed(
        r,
        [&run_suite, &head_suite],
        base_run,
        head_run,
        sides,
        console,
        &mut batch_ids,
    )
    .await;
    let not_measured = (!r.router.fills_arguments()).then(|| format!("{} router", r.router.kind()));
    routing.carried = carried;
    routing.proxy = r.router.kind().is_proxy();
    // Of the whole suite, even in a shard: the best constant answer is not a sum of parts.
    routing.chance_accuracy = Some(replay::runner::chance_accuracy(
        &r.suite.suite,
        &base.tools,
        &r.packs,
    ));
    finish_routing(&mut routing, not_measured, thresholds);
    let info = priced(router_info(r, &routing, batch_ids), &routing);
    let part = r.shard.map(|s| ShardPart {
        shard: s,
        suite_cases: r.suite.suite.cases.len(),
        tools_sha256: [
            tools_sha256(&base.tools.tools),
            tools_sha256(&head.tools.tools),
            tools_sha256(&r.packs),
        ],
        confirm: r.confirm,
        seed: r.config.seed,
        notes: Vec::new(),
        cases: ShardPart::cases_of(&run_suite, &head_suite, &positions),
        base_run,
        head_run,
        mac: None,
    });
    Ok(Replayed {
        routing: Some(routing),
        suite: Some(r.suite.info.clone()),
        router: Some(info),
        part,
        data_notes,
    })
}

/// The suite's notes against both sides (its own note, what each side's tools make impossible,
/// name clashes with distractors, expectations a rename carried), and the suite head is asked:
/// a rename the diff found carries the suite's expectations to the new name at head (it is
/// still a breaking change under the law), as the frozen suite names base's tools.
fn suite_notes(r: &ReplayInputs, sides: Sides<'_>, notes: &mut Vec<String>) -> suite::Suite {
    let Sides { d, base, head } = sides;
    if let Some(n) = &r.suite.note {
        notes.push(n.clone());
    }
    let (full_head_suite, carried) = renamed_suite(&r.suite.suite, d);
    let at_base = suite::validate_against(&r.suite.suite, &base.tools);
    // What head's tools make impossible that base's did not (a parameter the suite's
    // args expect removed or narrowed): it explains a call drop before anyone reads one.
    let at_head: Vec<String> = suite::validate_against(&full_head_suite, &head.tools)
        .into_iter()
        .filter(|p| !at_base.contains(p))
        .collect();
    for problem in at_base {
        notes.push(format!("suite vs base tools: {problem}"));
    }
    for problem in at_head {
        notes.push(format!("suite vs head tools: {problem}"));
    }
    // One note per clash when both sides have it, else one per side.
    let clash_b = replay::clashes(&r.suite.suite, &base.tools, &r.packs, "server");
    let clash_h = replay::clashes(&r.suite.suite, &head.tools, &r.packs, "server");
    if clash_b == clash_h {
        notes.extend(clash_h);
    } else {
        notes.extend(replay::clashes(
            &r.suite.suite,
            &base.tools,
            &r.packs,
            "base",
        ));
        notes.extend(replay::clashes(
            &r.suite.suite,
            &head.tools,
            &r.packs,
            "head",
        ));
    }
    notes.extend(carried);
    full_head_suite
}

/// `--replay targeted`: ask head only the cases a change can reach; the others carry base's
/// answers over.
async fn ask_head_targeted(
    r: &ReplayInputs,
    replayer: &Replayer<'_>,
    [run_suite, head_suite]: [&suite::Suite; 2],
    base_run: &SideRun,
    sides: Sides<'_>,
    emb: &dyn Embedder,
) -> Result<(SideRun, replay::target::Carried)> {
    let Sides { base, head, .. } = sides;
    let changed = replay::target::changed_tools(&base.tools, &head.tools);
    let risky = replay::target::at_risk(
        run_suite,
        head_suite,
        base_run,
        &changed,
        [&base.tools, &head.tools],
        &r.packs,
        emb,
    )
    .await?;
    let asked_suite = suite::Suite {
        cases: head_suite
            .cases
            .iter()
            .zip(&risky)
            .filter(|(_, r)| **r)
            .map(|(c, _)| c.clone())
            .collect(),
        ..head_suite.clone()
    };
    let asked = replayer
        .run_side("head", &asked_suite, &head.tools, &r.packs)
        .await;
    let n = risky.iter().filter(|r| !**r).count();
    let carried = replay::target::Carried {
        asked: risky.len() - n,
        carried: n,
        top_k: replay::target::TOP_K,
        requests_saved: n as u64 * u64::from(r.config.repeats.max(1)),
    };
    Ok((replay::target::assemble(&risky, base_run, asked), carried))
}

/// Compare the sides case by case; with `--confirm K`, re-ask the flipped cases K more times at
/// both sides, merge those answers in and compare again (a flip the re-asks do not reproduce is
/// excused). Returns the comparison and the runs as merged.
async fn compare_confirmed(
    r: &ReplayInputs,
    [run_suite, head_suite]: [&suite::Suite; 2],
    base_run: SideRun,
    head_run: SideRun,
    sides: Sides<'_>,
    console: &dyn Console,
    batch_ids: &mut Vec<String>,
) -> (Routing, SideRun, SideRun) {
    let compare = |b: &SideRun, h: &SideRun, excused: &std::collections::BTreeSet<String>| {
        replay::compare_sides(
            run_suite,
            head_suite,
            b,
            h,
            r.config.seed,
            crate::stats::DEFAULT_RESAMPLES,
            excused,
        )
    };
    let routing = compare(&base_run, &head_run, &Default::default());
    if r.confirm == 0 || !replay::confirm::has_flips(&routing) {
        return (routing, base_run, head_run);
    }
    let cfg = ReplayConfig {
        repeats: r.confirm,
        first_repeat: r.config.repeats,
        ..r.config.clone()
    };
    let again = Replayer::new(r.router.as_ref(), &r.cache, &cfg)
        .with_circle(&sides.base.tools, &r.packs)
        .with_console(console);
    let base_extra = again
        .run_side(
            "base (confirm)",
            &replay::confirm::flipped_cases(run_suite, &routing),
            &sides.base.tools,
            &r.packs,
        )
        .await;
    let head_extra = again
        .run_side(
            "head (confirm)",
            &replay::confirm::flipped_cases(head_suite, &routing),
            &sides.head.tools,
            &r.packs,
        )
        .await;
    let before = replay::confirm::Before::of(&routing);
    let excused = replay::confirm::unreproduced(&before, &base_extra, &head_extra);
    let base_run = replay::confirm::merge(&base_run, &base_extra);
    let head_run = replay::confirm::merge(&head_run, &head_extra);
    let mut routing = compare(&base_run, &head_run, &excused);
    replay::confirm::annotate(&mut routing, &before, &base_extra, &head_extra);
    batch_ids.extend(again.batch_ids());
    (routing, base_run, head_run)
}

/// The router as the report describes it (its price filled in by [`priced`]).
fn router_info(r: &ReplayInputs, routing: &Routing, batch_ids: Vec<String>) -> RouterInfo {
    RouterInfo {
        identity: crate::route::Identity::of(r.router.as_ref(), &r.config.system_prompt),
        tool_choice: r.config.tool_choice,
        repeats: r.config.repeats,
        temperature: r.config.sampling.temperature,
        seed: r.config.sampling.seed,
        order: r.config.order,
        distractor_tools: r.packs.len(),
        price_per_mtok: r.price_per_mtok,
        price_cached_input_per_mtok: r.price_cached_input,
        estimated_cost_usd: None,
        batch: r.config.batch.as_ref().map(|_| BatchInfo {
            api: if r.router.kind() == crate::route::Kind::Anthropic {
                "Anthropic Message Batches".into()
            } else {
                "OpenAI Batch API".into()
            },
            batches: batch_ids,
            requests: routing.base_stats.batched + routing.head_stats.batched,
            discount: crate::llm::batch::DISCOUNT,
        }),
    }
}

/// `check`'s lint delta (what the PR introduced or fixed), graded by `--lint-llm`'s model when
/// given; a side too large to pair skips lint with a note.
async fn lint_delta(
    sides: Sides<'_>,
    embedder: Option<&dyn Embedder>,
    lint_model: Option<&LintModel>,
    notes: &mut Vec<String>,
) -> Result<Option<crate::lint::LintDelta>> {
    let grader = lint_model.map(|m| crate::lint::Grader {
        router: m.router.as_ref(),
        cache: &m.cache,
        concurrency: m.concurrency,
        retry: &m.retry,
    });
    match crate::lint::check_delta(
        sides.d,
        &sides.base.tools,
        &sides.head.tools,
        embedder,
        grader.as_ref(),
    )
    .await?
    {
        Ok(section) => Ok(Some(section)),
        Err(too_many) => {
            notes.push(format!("lint skipped: {too_many}"));
            Ok(None)
        }
    }
}

/// `check --plan`: the requests each side would send (after the cache, the in-run reuse of
/// identical questions and `--shard`), their input tokens and cost; nothing is sent.
pub fn plan(inputs: &CheckInputs) -> Result<replay::plan::Plan> {
    let r = inputs
        .replay
        .as_ref()
        .ok_or_else(|| Error::Usage("--plan needs a suite".into()))?;
    let d = diff::diff(&inputs.base.tools, &inputs.head.tools);
    let suite = match r.shard {
        Some(s) => s.select(&r.suite.suite).0,
        None => r.suite.suite.clone(),
    };
    let (head_suite, _) = renamed_suite(&suite, &d);
    let counter = crate::llm::tokens::Counter::for_model(r.router.model());
    let replayer = Replayer::new(r.router.as_ref(), &r.cache, &r.config)
        .with_circle(&inputs.base.tools, &r.packs);
    let (mut seen, mut prefixes) = Default::default();
    let base = replayer.plan_side(
        &suite,
        &inputs.base.tools,
        &r.packs,
        &mut seen,
        &mut prefixes,
        &counter,
    );
    let head = replayer.plan_side(
        &head_suite,
        &inputs.head.tools,
        &r.packs,
        &mut seen,
        &mut prefixes,
        &counter,
    );
    Ok(replay::plan::Plan {
        router: r.router.kind(),
        model: r.router.model().to_string(),
        cases: suite.cases.len(),
        repeats: r.config.repeats,
        base,
        head,
        tokens_counted_with: if r.router.kind().is_proxy() {
            "none: the semantic router runs locally, nothing is billed".into()
        } else {
            counter.describe()
        },
        targeted: r.targeted,
        shard: r.shard.map(|s| s.to_string()),
        input_cost_usd: None,
        output_cost_usd_at_most: None,
        price_per_mtok: r.price_per_mtok,
        price_cached_input_per_mtok: r.price_cached_input,
        max_tokens: r.config.sampling.max_tokens,
        batch_discount: r.config.batch.as_ref().map(|_| crate::llm::batch::DISCOUNT),
        lint_llm_to_send: inputs.lint_model.as_ref().map(|m| {
            [&inputs.base.tools, &inputs.head.tools]
                .map(|t| crate::lint::llm::pending(t, m.router.as_ref(), &m.cache))
        }),
        rewrites: None,
    }
    .priced())
}

/// What a routing pairing is told after it is made, the same for one run and a merge: why call
/// accuracy was not measured, the threshold each tool's p-value is held to, and the smallest drop
/// the suite can detect.
pub(super) fn finish_routing(
    routing: &mut Routing,
    not_measured: Option<String>,
    t: &CheckThresholds,
) {
    routing.calls_not_measured = not_measured;
    crate::gate::hold(routing, t);
    routing.min_detectable_drop = crate::stats::min_detectable_drop(
        routing.paired.summary.n_cases,
        routing.paired.summary.base_accuracy,
        t.tolerance,
        t.require_significance,
        0.8,
    );
}

/// The router's description with the cost of `routing`'s tokens at its prices, if it has them:
/// cache reads at the cached price, Anthropic's cache writes at its write premium, batched
/// tokens at the batch discount.
pub(super) fn priced(mut info: RouterInfo, routing: &Routing) -> RouterInfo {
    let discount = info.batch.as_ref().map_or(0.0, |b| b.discount);
    let [b, h] = [&routing.base_stats, &routing.head_stats];
    let batched = crate::llm::Usage {
        input_tokens: b.batched_input_tokens + h.batched_input_tokens,
        output_tokens: b.batched_output_tokens + h.batched_output_tokens,
        cached_input_tokens: b.batched_cached_input_tokens + h.batched_cached_input_tokens,
        cache_write_tokens: b.batched_cache_write_tokens + h.batched_cache_write_tokens,
    };
    let (cached, kind) = (
        info.price_cached_input_per_mtok,
        info.identity.kind.cache_write_premium(),
    );
    info.estimated_cost_usd = info.price_per_mtok.map(|prices| {
        replay::total_usage(routing).cost_usd(prices, cached, kind)
            - batched.cost_usd(prices, cached, kind) * discount
    });
    info
}

/// The note for repeats that measured nothing: every repeat of every case identical at both sides.
pub(super) fn repeats_note(
    base: &SideRun,
    head: &SideRun,
    repeats: u32,
    temperature: f32,
) -> Option<String> {
    (repeats > 1 && replay::repeats_identical(base, head)).then(|| format!(
        "every one of the {repeats} repeats of every case came back identical at both sides (temperature {temperature}, seed + repeat): the provider is deterministic at these settings, so the repeats measured nothing and cost {repeats}× the requests; use --repeats 1, or a temperature above 0"
    ))
}

/// The loud note of a targeted replay: how much of head was carried, and why that is safe.
pub(super) fn carried_note(c: &replay::target::Carried) -> String {
    format!(
        "targeted replay: {} of {} case(s) asked at head; {} carried base's answers (their expected, forbidden and base-answered tools and their {} nearest tools at either side are unchanged): {} head request(s) not sent",
        c.asked,
        c.asked + c.carried,
        c.carried,
        c.top_k,
        c.requests_saved
    )
}

/// sha256 of tools as offered (canonical JSON, in order).
fn tools_sha256(tools: &[Tool]) -> String {
    crate::canon::hash(&serde_json::Value::Array(
        tools.iter().map(Tool::to_value).collect(),
    ))
}

/// The cases one process replays at base, their positions in the suite, and the same cases as
/// head reads them (renamed tools followed).
type Suites = (suite::Suite, Vec<usize>, suite::Suite);

/// The cases this process replays at base and at head (the whole suite, or its shard's), and
/// their positions in the suite. A shard is chosen by case id, which a rename leaves alone, so
/// head's part is the same selection of the renamed suite.
fn replayed_suites(r: &ReplayInputs, full_head_suite: suite::Suite) -> Suites {
    match r.shard {
        Some(s) => {
            let (run, positions) = s.select(&r.suite.suite);
            (run, positions, s.select(&full_head_suite).0)
        }
        None => (
            r.suite.suite.clone(),
            (0..r.suite.suite.cases.len()).collect(),
            full_head_suite,
        ),
    }
}

/// Every text the run can know before it measures — drift's, lint's, and the router's for
/// both sides when it embeds (targeted replay knows head's cases only later) — embedded in one
/// call, so the model runs once over them (sorted by length, padded less) instead of once per
/// stage; the stages then read them from the embedder's memo. Only for a memoising embedder:
/// a bare one would embed them all again.
async fn embed_up_front(
    command: Command,
    e: &dyn Embedder,
    Sides { d, base, head }: Sides<'_>,
    replay: Option<&(ReplayInputs, Suites)>,
) -> Result<()> {
    if e.stats().is_none() {
        return Ok(());
    }
    let mut texts = cosine::texts(d, &base.tools, &head.tools);
    if command == Command::Check {
        texts.extend(crate::lint::texts(&base.tools, &head.tools));
    }
    if let Some((r, (run, _, head_suite))) = replay.filter(|(r, _)| !r.targeted) {
        let replayer = Replayer::new(r.router.as_ref(), &r.cache, &r.config)
            .with_circle(&base.tools, &r.packs);
        texts.extend(replayer.texts(&[(run, &base.tools), (head_suite, &head.tools)], &r.packs));
    }
    texts.sort();
    texts.dedup();
    if !texts.is_empty() {
        e.embed(&texts).await?;
    }
    Ok(())
}

/// The suite as head reads it: every expected and forbidden name of a renamed tool replaced by
/// its new name, with one note per rename that moved a case.
pub(super) fn renamed_suite(suite: &suite::Suite, d: &diff::Diff) -> (suite::Suite, Vec<String>) {
    let renames: Vec<(&str, &str)> = d
        .tools
        .iter()
        .filter(|t| t.status == diff::Status::Renamed)
        .filter_map(|t| Some((t.base_name.as_deref()?, t.head_name.as_deref()?)))
        .collect();
    let mut out = suite.clone();
    if renames.is_empty() {
        return (out, Vec::new());
    }
    let mut moved = vec![0usize; renames.len()];
    let rename = |name: &mut String, moved: &mut Vec<usize>| {
        if let Some(i) = renames.iter().position(|(old, _)| old == name) {
            *name = renames[i].1.to_string();
            moved[i] += 1;
        }
    };
    for case in &mut out.cases {
        if let suite::Expect::Tools(names) = &mut case.expect {
            names.iter_mut().for_each(|n| rename(n, &mut moved));
        }
        case.must_not_call
            .iter_mut()
            .for_each(|n| rename(n, &mut moved));
    }
    let notes = renames
        .iter()
        .zip(&moved)
        .filter(|(_, n)| **n > 0)
        .map(|((old, new), n)| {
            format!(
                "head expects `{new}`, renamed from `{old}` ({n} case(s) carried over; the rename is still a breaking schema change)"
            )
        })
        .collect();
    (out, notes)
}

/// A diff report without meaning drift (no embedder): pure and synchronous, for tests and tools.
pub fn diff_report(base: &Loaded, head: &Loaded, fail_on: Severity) -> Report {
    let d = diff::diff(&base.tools, &head.tools);
    let thresholds = CheckThresholds {
        fail_on,
        ..CheckThresholds::default()
    };
    let scan = ScanSection::delta(&base.tools, &head.tools, &[]);
    let verdict = gate::check_verdict(&d, None, None, Some(&scan), &thresholds);
    Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: report::VERSION.to_string(),
        command: Command::Diff,
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
        scan: Some(scan),
        github: None,
        shard: None,
        policy: None,
        suggestions: Vec::new(),
    }
}
