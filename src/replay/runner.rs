//! Replaying a suite at one side: each case asked against the side's tools plus distractors, in a
//! per-case order seeded identically at base and head; through the in-run memo, the disk cache,
//! then the router with retries.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::judge::{CallOutcome, Outcome, check_schema, classify, invented, judge_call};
use crate::cache::Cache;
use crate::canon;
use crate::console::{Console, Silent};
use crate::http::retry::{RetryPolicy, with_retry};
use crate::llm::Answer;
use crate::llm::{Message, Sampling, ToolChoice};
use crate::route::cache;
use crate::route::order::{Circle, Order};
use crate::route::{RouteRequest, RouteResponse, Router};
use crate::suite::{Case, Suite};
use crate::tools::validate::ArgsChecker;
use crate::tools::{Tool, ToolSet};

#[derive(Debug, Clone)]
pub struct ReplayConfig {
    pub system_prompt: String,
    pub tool_choice: ToolChoice,
    pub sampling: Sampling,
    pub repeats: u32,
    /// Index of the first repeat (confirmation re-runs continue after the first run's repeats, so
    /// they are new questions: new seeds, new cache entries).
    pub first_repeat: u32,
    pub concurrency: usize,
    /// Seeds the per-case tool order.
    pub seed: u64,
    /// How each case's tools are ordered ([`crate::route::order`]).
    pub order: Order,
    pub retry: RetryPolicy,
    /// `--batch`: the requests no cache answers go through the provider's batch API.
    pub batch: Option<crate::llm::batch::Options>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sample {
    pub outcome: Outcome,
    /// The call judged with its arguments (`NotMeasured` for a router without arguments).
    pub call: CallOutcome,
    /// The arguments of the call, when a tool was called with an object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<serde_json::Value>,
    /// Parameter names the call invented for the side's tool it called (whatever the routing),
    /// each with the nearest declared name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invented: Vec<(String, Option<String>)>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

impl Sample {
    /// A sample judged by routing alone, with no call details (simulations, tests).
    pub fn routed(outcome: Outcome) -> Sample {
        let call = if outcome.is_correct() {
            CallOutcome::Correct
        } else {
            CallOutcome::WrongRoute
        };
        Sample {
            outcome,
            call,
            arguments: None,
            invented: Vec::new(),
            cached: false,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CaseRun {
    pub id: String,
    /// The exact offered tool list's hash: equal at base and head means the question was the same.
    pub offered_hash: String,
    pub samples: Vec<Sample>,
}

impl CaseRun {
    pub fn correct(&self) -> u32 {
        self.samples
            .iter()
            .filter(|s| s.outcome.is_correct())
            .count() as u32
    }
    /// Samples whose call was right: tool, schema and expected arguments.
    pub fn calls_correct(&self) -> u32 {
        self.samples.iter().filter(|s| s.call.is_correct()).count() as u32
    }
    /// The most frequent call outcome's first sample, for argument flip lists.
    pub fn typical_call(&self) -> &Sample {
        let mut counts: Vec<(&str, usize, &Sample)> = Vec::new();
        for s in &self.samples {
            match counts.iter_mut().find(|(l, _, _)| *l == s.call.label()) {
                Some((_, n, _)) => *n += 1,
                None => counts.push((s.call.label(), 1, s)),
            }
        }
        counts
            .iter()
            .max_by_key(|(_, n, _)| *n)
            .map(|(_, _, s)| *s)
            .expect("at least one sample")
    }
    /// The most frequent outcome, for flip lists.
    pub fn typical(&self) -> &Outcome {
        let mut counts: Vec<(&Outcome, usize)> = Vec::new();
        for s in &self.samples {
            match counts.iter_mut().find(|(o, _)| *o == &s.outcome) {
                Some((_, n)) => *n += 1,
                None => counts.push((&s.outcome, 1)),
            }
        }
        counts
            .iter()
            .max_by_key(|(_, n)| *n)
            .map(|(o, _)| *o)
            .expect("at least one sample")
    }
}

/// Counters for the report: what the run cost.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunStats {
    pub requests_sent: u64,
    pub cache_hits: u64,
    /// Identical requests answered once within this run (e.g. head questions equal to base's).
    pub reused: u64,
    pub retries: u64,
    pub errors: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `input_tokens`, read from the provider's prompt cache (priced at the cached rate).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Of `input_tokens`, written to the provider's prompt cache (Anthropic bills them above the
    /// input price).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    pub request_latency_ms_sum: u64,
    /// Time the router spent preparing chunks of requests before asking them (the semantic
    /// router embeds a chunk's prompts there, in batches), outside every request's latency.
    #[serde(default)]
    pub prepare_ms: u64,
    pub wall_ms: u64,
    /// Of `requests_sent`, the ones a provider batch API answered (`--batch`), and their tokens
    /// (billed at the batch discount).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batched: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batched_input_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batched_output_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batched_cached_input_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batched_cache_write_tokens: u64,
    /// Exact sum behind `request_latency_ms_sum` (summing whole milliseconds per request would
    /// drop sub-millisecond requests entirely).
    #[serde(skip)]
    latency: std::time::Duration,
}

impl RunStats {
    /// Count one answer's tokens; `batched`: a provider batch answered it (billed at a discount).
    fn count(&mut self, u: &crate::llm::Usage, batched: bool) {
        self.input_tokens += u.input_tokens;
        self.output_tokens += u.output_tokens;
        self.cached_input_tokens += u.cached_input_tokens;
        self.cache_write_tokens += u.cache_write_tokens;
        if batched {
            self.batched_input_tokens += u.input_tokens;
            self.batched_output_tokens += u.output_tokens;
            self.batched_cached_input_tokens += u.cached_input_tokens;
            self.batched_cache_write_tokens += u.cache_write_tokens;
        }
    }

    /// Add the counters of `x` (wall time too: the sum is what the runs took one after another).
    pub fn add(&mut self, x: &RunStats) {
        // Destructured without `..`, so that a counter added to `RunStats` cannot be forgotten
        // here (shard parts lost their batch counters that way).
        let RunStats {
            requests_sent,
            cache_hits,
            reused,
            retries,
            errors,
            input_tokens,
            output_tokens,
            cached_input_tokens,
            cache_write_tokens,
            request_latency_ms_sum,
            prepare_ms,
            wall_ms,
            batched,
            batched_input_tokens,
            batched_output_tokens,
            batched_cached_input_tokens,
            batched_cache_write_tokens,
            latency,
        } = x;
        self.requests_sent = self.requests_sent.saturating_add(*requests_sent);
        self.cache_hits = self.cache_hits.saturating_add(*cache_hits);
        self.reused = self.reused.saturating_add(*reused);
        self.retries = self.retries.saturating_add(*retries);
        self.errors = self.errors.saturating_add(*errors);
        self.input_tokens = self.input_tokens.saturating_add(*input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(*output_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(*cached_input_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(*cache_write_tokens);
        self.request_latency_ms_sum = self
            .request_latency_ms_sum
            .saturating_add(*request_latency_ms_sum);
        self.prepare_ms = self.prepare_ms.saturating_add(*prepare_ms);
        self.wall_ms = self.wall_ms.saturating_add(*wall_ms);
        self.batched = self.batched.saturating_add(*batched);
        self.batched_input_tokens = self
            .batched_input_tokens
            .saturating_add(*batched_input_tokens);
        self.batched_output_tokens = self
            .batched_output_tokens
            .saturating_add(*batched_output_tokens);
        self.batched_cached_input_tokens = self
            .batched_cached_input_tokens
            .saturating_add(*batched_cached_input_tokens);
        self.batched_cache_write_tokens = self
            .batched_cache_write_tokens
            .saturating_add(*batched_cache_write_tokens);
        self.latency = self.latency.saturating_add(*latency);
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SideRun {
    pub cases: Vec<CaseRun>,
    pub stats: RunStats,
}

#[cfg(test)]
impl SideRun {
    /// A run of the cases `(id, samples)`, with no counters: what the pairing and the gate read,
    /// built by tests without a router.
    pub fn of(cases: impl IntoIterator<Item = (String, Vec<Sample>)>) -> SideRun {
        SideRun {
            cases: cases
                .into_iter()
                .map(|(id, samples)| CaseRun {
                    id,
                    offered_hash: String::new(),
                    samples,
                })
                .collect(),
            stats: RunStats::default(),
        }
    }
}

/// A case's offered tools in `order` ([`crate::route::order`]): the same arrangement at base and head,
/// a tool present at both sides keeping its place relative to the others.
pub fn offered_tools(
    case: &Case,
    tools: &ToolSet,
    packs: &[Tool],
    seed: u64,
    order: Order,
) -> Vec<Tool> {
    let mut seen = BTreeSet::new();
    let mut all: Vec<(Tool, bool)> = Vec::new();
    // The server's own tools win a name clash with a distractor, a case's distractor one with a
    // pack's tool.
    let own = tools.tools.iter().map(|t| (t, true));
    let distractors = case.distractors.iter().map(|t| (t, false));
    for (t, shared) in own
        .chain(distractors)
        .chain(packs.iter().map(|t| (t, true)))
    {
        if seen.insert(t.name.clone()) {
            all.push((t.clone(), shared));
        }
    }
    let circle = Circle::of(
        order,
        seed,
        all.iter().filter(|(_, s)| *s).map(|(t, _)| t.name.as_str()),
    );
    all.sort_by_cached_key(|(t, shared)| order.place(&circle, seed, &case.id, &t.name, *shared));
    all.into_iter().map(|(t, _)| t).collect()
}

/// What a router that ignores the prompt scores on `suite`: the better of picking uniformly among
/// each case's offered tools (declining as one more choice where the case expects no call) and
/// giving every case the same answer (the suite's most common right one, or always declining).
/// A base at or below it measured nothing ([`crate::gate`]).
pub fn chance_accuracy(suite: &crate::suite::Suite, tools: &ToolSet, packs: &[Tool]) -> f64 {
    if suite.cases.is_empty() {
        return 0.0;
    }
    let mut constant: std::collections::BTreeMap<Option<&str>, usize> = Default::default();
    for case in &suite.cases {
        match &case.expect {
            crate::suite::Expect::None => *constant.entry(None).or_default() += 1,
            crate::suite::Expect::Tools(names) => {
                for n in names {
                    *constant.entry(Some(n.as_str())).or_default() += 1;
                }
            }
        }
    }
    let best_constant = constant.values().max().copied().unwrap_or(0) as f64;
    let total: f64 = suite
        .cases
        .iter()
        .map(|case| {
            let offered: BTreeSet<&str> = tools
                .tools
                .iter()
                .chain(&case.distractors)
                .chain(packs)
                .map(|t| t.name.as_str())
                .collect();
            match &case.expect {
                crate::suite::Expect::None => 1.0 / (offered.len() + 1) as f64,
                crate::suite::Expect::Tools(names) => {
                    let hit = names
                        .iter()
                        .filter(|n| offered.contains(n.as_str()))
                        .count();
                    hit as f64 / offered.len().max(1) as f64
                }
            }
        })
        .sum();
    total.max(best_constant) / suite.cases.len() as f64
}

/// The tools a side offers every case, each with its canonical JSON written once: a case's
/// offered list is these plus its own distractors in its own order, and its hash and cache key
/// are fed from these strings instead of serialising the whole list again (O(tools) per case
/// either way, but hashing bytes, not rebuilding JSON).
struct Offered<'t> {
    /// The side's tools then the packs' (a side's tool wins a name clash), with their JSON.
    fixed: Vec<(&'t Tool, String)>,
    own: BTreeSet<&'t str>,
    /// Where the rotations start: the base side's circle when the replayer has one, else this
    /// side's.
    circle: Circle,
    order: Order,
    seed: u64,
}

impl<'t> Offered<'t> {
    fn new(
        tools: &'t ToolSet,
        packs: &'t [Tool],
        circle: Option<&Circle>,
        order: Order,
        seed: u64,
    ) -> Self {
        let own: BTreeSet<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
        let mut seen = BTreeSet::new();
        let fixed = tools
            .tools
            .iter()
            .chain(packs)
            .filter(|t| seen.insert(t.name.as_str()))
            .map(|t| (t, canon::to_canonical(&t.to_value())))
            .collect::<Vec<_>>();
        let circle = circle
            .cloned()
            .unwrap_or_else(|| Circle::of(order, seed, fixed.iter().map(|(t, _)| t.name.as_str())));
        Offered {
            fixed,
            own,
            circle,
            order,
            seed,
        }
    }

    /// [`offered_tools`] for `case`, with each tool's canonical JSON, in the same order, and how
    /// many leading tools the other cases of its rotation share (0 under `shuffle`).
    fn for_case(&self, case: &'t Case) -> (Vec<Tool>, Vec<Cow<'_, str>>, usize) {
        let (order, seed) = (self.order, self.seed);
        let mut taken: BTreeSet<&str> = BTreeSet::new();
        // A case's distractor beats a pack's tool of the same name, never a side's.
        let extra: Vec<(&Tool, Cow<'_, str>)> = case
            .distractors
            .iter()
            .filter(|d| !self.own.contains(d.name.as_str()) && taken.insert(d.name.as_str()))
            .map(|d| (d, Cow::Owned(canon::to_canonical(&d.to_value()))))
            .collect();
        let mut all: Vec<(&Tool, Cow<'_, str>, bool)> = self
            .fixed
            .iter()
            .filter(|(t, _)| self.own.contains(t.name.as_str()) || !taken.contains(t.name.as_str()))
            .map(|(t, c)| (*t, Cow::Borrowed(c.as_str()), true))
            .chain(extra.into_iter().map(|(t, c)| (t, c, false)))
            .collect();
        let circle = &self.circle;
        all.sort_by_cached_key(|(t, _, shared)| {
            order.place(circle, seed, &case.id, &t.name, *shared)
        });
        let shared = match order {
            Order::Shuffle => 0,
            Order::Rotate { .. } => all.iter().filter(|(_, _, s)| *s).count(),
        };
        let (tools, canonical) = all.into_iter().map(|(t, c, _)| (t.clone(), c)).unzip();
        (tools, canonical, shared)
    }
}

/// Did every repeat of every case come back with the same outcome, at both sides? Then the
/// provider is deterministic at these settings and the repeats measured nothing.
pub fn repeats_identical(base: &SideRun, head: &SideRun) -> bool {
    base.cases
        .iter()
        .chain(&head.cases)
        .all(|c| c.samples.len() < 2 || c.samples.windows(2).all(|w| w[0].outcome == w[1].outcome))
}

/// Distractors whose name clashes with a server tool (the server's tool wins, see
/// [`offered_tools`]), as one sentence per clashing name, so a dropped distractor is said, not
/// silent.
pub fn clashes(
    suite: &crate::suite::Suite,
    tools: &ToolSet,
    packs: &[Tool],
    side: &str,
) -> Vec<String> {
    let own: BTreeSet<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    let mut by_name: std::collections::BTreeMap<&str, (bool, Vec<&str>)> = Default::default();
    for p in packs.iter().filter(|p| own.contains(p.name.as_str())) {
        by_name.entry(p.name.as_str()).or_default().0 = true;
    }
    for c in &suite.cases {
        for d in c
            .distractors
            .iter()
            .filter(|d| own.contains(d.name.as_str()))
        {
            by_name
                .entry(d.name.as_str())
                .or_default()
                .1
                .push(c.id.as_str());
        }
    }
    by_name
        .into_iter()
        .map(|(name, (pack, cases))| {
            let mut from = Vec::new();
            if pack {
                from.push("a distractor pack".to_string());
            }
            if !cases.is_empty() {
                from.push(format!("{} case(s), first {:?}", cases.len(), cases[0]));
            }
            format!(
                "distractor `{name}` (from {}) has the name of a {side} tool: the {side} tool was offered, the distractor dropped",
                from.join(" and ")
            )
        })
        .collect()
}

/// The sample of one answer: its routing, its call, and the names it invented for a side's tool.
fn judged(
    case: &Case,
    outcome: Outcome,
    answer: &Answer,
    offered: &[Tool],
    own: &BTreeSet<&str>,
    checkers: &HashMap<&str, Result<ArgsChecker, String>>,
) -> Sample {
    let (name, arguments) = match answer {
        Answer::Call {
            name, arguments, ..
        } => (Some(name.as_str()), arguments.clone()),
        _ => (None, None),
    };
    // The called tool's schema: compiled once for the side and the packs, else a case's own
    // distractor, compiled now.
    let compiled;
    let checker = match name {
        Some(n) => match checkers.get(n) {
            Some(c) => Some(c),
            None => {
                compiled = offered
                    .iter()
                    .find(|t| t.name == n)
                    .map(|t| ArgsChecker::new(&t.input_schema));
                compiled.as_ref()
            }
        },
        None => None,
    };
    let call = judge_call(case, &outcome, answer, checker);
    // Invented names are counted for the side's own tools only: they are the maintainer's wording.
    // A judged call already carries its schema problems; only a wrongly routed one is checked here.
    let invented = match (&call, name, &arguments) {
        (_, Some(n), Some(_)) if !own.contains(n) => Vec::new(),
        (CallOutcome::InvalidArguments { problems, .. }, _, _) => invented(problems),
        (CallOutcome::Correct | CallOutcome::WrongArguments { .. }, _, _) => Vec::new(),
        (_, Some(_), Some(a)) => invented(&check_schema(a, checker)),
        _ => Vec::new(),
    };
    Sample {
        outcome,
        call,
        arguments,
        invented,
        cached: false,
    }
}

/// Cases whose requests are built, and prepared by the router, together: at most this many, and
/// at most [`PREPARE_TOOLS`] offered tools in all (each request holds its own copy of the list).
const PREPARE_CHUNK: usize = 64;
const PREPARE_TOOLS: usize = 50_000;

/// One case's request, ready to ask.
struct Asked<'c> {
    case: &'c Case,
    repeat: u32,
    req: RouteRequest,
    key: String,
    offered_hash: String,
    /// Answered by this run or the disk cache already: nothing to prepare.
    known: bool,
    disk: Option<RouteResponse>,
}

/// One request's fate, shared by identical requests: the response or error text, and whether it
/// came from the disk cache.
type Answered = (Result<RouteResponse, String>, bool);

/// Shared state of one run: de-duplication of identical in-flight requests and counters.
pub struct Replayer<'a> {
    pub router: &'a dyn Router,
    pub cfg: &'a ReplayConfig,
    cache: Cache,
    console: &'a dyn Console,
    memo: Mutex<HashMap<String, Arc<tokio::sync::OnceCell<Answered>>>>,
    /// `--batch`: answers a provider batch fetched, by cache key, each taken once by [`Self::ask`].
    batched: Mutex<HashMap<String, Result<RouteResponse, String>>>,
    batch_store: Cache,
    batch_ids: Mutex<Vec<String>>,
    /// Where the rotations start at every side ([`Self::with_circle`]).
    circle: Option<Circle>,
}

impl<'a> Replayer<'a> {
    /// Start every side's rotations where `tools` and `packs` (the base side) start them, so a
    /// tool the other side added or removed shifts no other tool. Without it each side uses its
    /// own tools, which is the same whenever the names are.
    pub fn with_circle(mut self, tools: &ToolSet, packs: &[Tool]) -> Self {
        let names = tools.tools.iter().chain(packs).map(|t| t.name.as_str());
        self.circle = Some(Circle::of(self.cfg.order, self.cfg.seed, names));
        self
    }

    /// The offer of a side: its tools and the packs, ordered on the replayer's circle.
    fn offered<'t>(&self, tools: &'t ToolSet, packs: &'t [Tool]) -> Offered<'t> {
        Offered::new(
            tools,
            packs,
            self.circle.as_ref(),
            self.cfg.order,
            self.cfg.seed,
        )
    }

    /// Answers are cached in `cache`'s route section.
    pub fn new(router: &'a dyn Router, cache: &Cache, cfg: &'a ReplayConfig) -> Self {
        Replayer {
            router,
            cfg,
            cache: cache.section(cache::SECTION),
            console: &Silent,
            memo: Mutex::new(HashMap::new()),
            batched: Mutex::new(HashMap::new()),
            batch_store: cache.section(crate::llm::batch::SECTION),
            batch_ids: Mutex::new(Vec::new()),
            circle: None,
        }
    }

    /// The provider batches this replayer submitted or resumed, in order.
    pub fn batch_ids(&self) -> Vec<String> {
        self.batch_ids.lock().expect("batch ids").clone()
    }

    /// The texts the router would embed to answer `sides`' requests that neither this run nor
    /// the disk cache answers (empty for a router that embeds nothing), so a caller can embed a
    /// run's texts in one call.
    pub fn texts(&self, sides: &[(&Suite, &ToolSet)], packs: &[Tool]) -> Vec<String> {
        let mut out = Vec::new();
        for (suite, tools) in sides {
            let offered = self.offered(tools, packs);
            for case in &suite.cases {
                for repeat in self.cfg.first_repeat..self.cfg.first_repeat + self.cfg.repeats {
                    let a = self.build(case, repeat, &offered);
                    if a.known {
                        continue;
                    }
                    match self.router.texts(&a.req) {
                        Some(t) => out.extend(t),
                        None => return Vec::new(),
                    }
                }
            }
        }
        out
    }

    /// `--batch`: every request of `sides` that neither this run nor the disk cache answers goes
    /// to the provider's batch API at once (one wait for both sides, not one each), and its
    /// answer or failure is kept for [`Self::ask`]. A no-op without `--batch` or a batch API.
    pub async fn prefetch(&self, sides: &[(&Suite, &ToolSet)], packs: &[Tool]) {
        let (Some(opts), Some(chat)) = (&self.cfg.batch, self.router.batch_chat()) else {
            return;
        };
        let mut items: Vec<crate::llm::batch::Item> = Vec::new();
        let mut taken: BTreeSet<String> = BTreeSet::new();
        {
            let batched = self.batched.lock().expect("batched");
            for (suite, tools) in sides {
                let offered = self.offered(tools, packs);
                // Grouped by rotation as `run_side` sends them: one batch file, runs of one block.
                let mut cases: Vec<&Case> = suite.cases.iter().collect();
                cases.sort_by_cached_key(|c| self.cfg.order.rotation(self.cfg.seed, &c.id));
                for case in cases {
                    for repeat in self.cfg.first_repeat..self.cfg.first_repeat + self.cfg.repeats {
                        let a = self.build(case, repeat, &offered);
                        if a.known || batched.contains_key(&a.key) || !taken.insert(a.key.clone()) {
                            continue;
                        }
                        items.push(crate::llm::batch::Item {
                            body: chat
                                .body(&crate::route::provider::ProviderRouter::request(&a.req)),
                            // A cache key is 64 hex digits: a valid custom id at both providers.
                            id: a.key,
                        });
                    }
                }
            }
        }
        if items.is_empty() {
            return;
        }
        let outcome = crate::llm::batch::run(
            chat,
            &items,
            opts,
            &self.cfg.retry,
            &self.batch_store,
            self.console,
        )
        .await;
        self.batch_ids
            .lock()
            .expect("batch ids")
            .extend(outcome.batches);
        let mut batched = self.batched.lock().expect("batched");
        for (key, answered) in outcome.answers {
            let r = answered
                .map(|(answer, usage)| RouteResponse {
                    answer,
                    usage,
                    latency_ms: 0,
                })
                .map_err(|why| format!("batch: {why}"));
            batched.insert(key, r);
        }
    }

    /// Report progress to `console`.
    pub fn with_console(mut self, console: &'a dyn Console) -> Self {
        self.console = console;
        self
    }

    /// Ask one question, through the in-run memo, the disk cache, then the router with retries.
    /// Returns the response (or error text) and whether it was answered without a request.
    async fn ask(
        &self,
        key: String,
        disk: Option<RouteResponse>,
        req: &RouteRequest,
        stats: &Mutex<RunStats>,
    ) -> (Result<RouteResponse, String>, bool) {
        let cell = {
            let mut memo = self.memo.lock().expect("memo lock");
            memo.entry(key.clone()).or_default().clone()
        };
        let mut first = false;
        let (result, from_disk) = cell
            .get_or_init(|| async {
                first = true;
                let from_batch = self.batched.lock().expect("batched").remove(&key);
                if let Some(b) = from_batch {
                    let mut s = stats.lock().expect("stats");
                    return match b {
                        Ok(resp) => {
                            s.requests_sent += 1;
                            s.batched += 1;
                            if let Some(u) = &resp.usage {
                                s.count(u, true);
                            }
                            let _ = self.cache.put(&key, &resp);
                            (Ok(resp), false)
                        }
                        Err(e) => {
                            s.errors += 1;
                            (Err(e), false)
                        }
                    };
                }
                if let Some(hit) = disk.or_else(|| self.cache.get(&key)) {
                    stats.lock().expect("stats").cache_hits += 1;
                    return (Ok(hit), true);
                }
                let started = Instant::now();
                let r = with_retry(&self.cfg.retry, || self.router.route(req)).await;
                let mut s = stats.lock().expect("stats");
                s.requests_sent += u64::from(r.attempts);
                s.retries += u64::from(r.attempts.saturating_sub(1));
                s.latency += started.elapsed().saturating_sub(r.waited);
                s.request_latency_ms_sum = s.latency.as_millis() as u64;
                match r.result {
                    Ok(resp) => {
                        if let Some(u) = &resp.usage {
                            s.count(u, false);
                        }
                        // Best effort: a cache that cannot be written only costs requests next time.
                        let _ = self.cache.put(&key, &resp);
                        (Ok(resp), false)
                    }
                    Err(e) => {
                        s.errors += 1;
                        (Err(format!("after {} attempt(s): {e}", r.attempts)), false)
                    }
                }
            })
            .await
            .clone();
        if !first {
            stats.lock().expect("stats").reused += 1;
        }
        (result, !first || from_disk)
    }

    /// One case's request at this side, its cache key and offered-list hash, and whether this
    /// run or the disk cache already answers it (the disk's answer kept for [`Self::ask`]).
    fn build<'c>(&self, case: &'c Case, repeat: u32, offered: &Offered<'_>) -> Asked<'c> {
        let (tools, canonical, shared_tools) = offered.for_case(case);
        let canonical: Vec<&str> = canonical.iter().map(|c| c.as_ref()).collect();
        let mut h = Sha256::new();
        cache::array_into(&mut h, &canonical);
        let offered_hash = format!("sha256:{}", hex::encode(h.finalize()));
        let mut messages: Vec<Message> = case.history.clone();
        messages.push(Message {
            role: "user".into(),
            content: case.prompt.clone(),
        });
        let req = RouteRequest {
            system: self.cfg.system_prompt.clone(),
            messages,
            tools,
            shared_tools,
            tool_choice: self.cfg.tool_choice,
            // Repeat k asks with seed + k: K copies of one seeded request would measure nothing
            // on a provider that honours the seed.
            sampling: Sampling {
                seed: self
                    .cfg
                    .sampling
                    .seed
                    .map(|s| s.wrapping_add(u64::from(repeat))),
                ..self.cfg.sampling.clone()
            },
            repeat,
        };
        let key = cache::key_with_tools(self.router, &req, &canonical);
        let in_run = self
            .memo
            .lock()
            .expect("memo lock")
            .get(&key)
            .is_some_and(|c| c.initialized());
        let disk = if in_run { None } else { self.cache.get(&key) };
        Asked {
            case,
            repeat,
            known: in_run || disk.is_some(),
            req,
            key,
            offered_hash,
            disk,
        }
    }

    /// What `run_side` would send, without sending anything: every request of the side, which
    /// the disk cache answers, which an earlier side's identical request answers (`seen`, shared
    /// across sides as the in-run memo is), the input tokens of the ones left to send, and of
    /// those the shared tool blocks a prompt cache has seen before (`prefixes`, shared too).
    pub fn plan_side(
        &self,
        suite: &Suite,
        tools: &ToolSet,
        packs: &[Tool],
        seen: &mut std::collections::HashSet<String>,
        prefixes: &mut std::collections::HashSet<[u8; 32]>,
        counter: &crate::llm::tokens::Counter,
    ) -> super::plan::SidePlan {
        let offered = self.offered(tools, packs);
        let mut p = super::plan::SidePlan::default();
        for case in &suite.cases {
            for repeat in self.cfg.first_repeat..self.cfg.first_repeat + self.cfg.repeats {
                let a = self.build(case, repeat, &offered);
                p.requests += 1;
                if !seen.insert(a.key.clone()) {
                    p.reused += 1;
                } else if a.disk.is_some() {
                    p.cached += 1;
                } else {
                    p.to_send += 1;
                    p.input_tokens += counter.count(&super::plan::request_text(&a.req));
                    if a.req.shared_tools > 0 {
                        let block = super::plan::prefix_text(&a.req);
                        let n = counter.count(&block);
                        if n >= super::plan::MIN_CACHED_PREFIX {
                            if prefixes.insert(Sha256::digest(block.as_bytes()).into()) {
                                p.prefix_written_tokens += n;
                            } else {
                                p.prefix_cached_tokens += n;
                            }
                        }
                    }
                }
            }
        }
        p
    }

    /// One request asked (or read from the run's memo or the disk cache) and judged: the case's
    /// id, the repeat, the sample and the hash of the tools it was offered.
    async fn answer(
        &self,
        a: Asked<'_>,
        own: &BTreeSet<&str>,
        checkers: &HashMap<&str, Result<ArgsChecker, String>>,
        stats: &Mutex<RunStats>,
    ) -> (String, u32, Sample, String) {
        let Asked {
            case,
            repeat,
            req,
            key,
            offered_hash,
            disk,
            ..
        } = a;
        let tools = &req.tools;
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let (result, cached) = self.ask(key, disk, &req, stats).await;
        let outcome = match &result {
            Ok(resp) => classify(case, &names, &resp.answer),
            Err(e) => Outcome::Error { message: e.clone() },
        };
        let sample = match &result {
            Ok(resp) if self.router.fills_arguments() => {
                judged(case, outcome, &resp.answer, tools, own, checkers)
            }
            _ => Sample {
                call: if outcome.is_error() {
                    CallOutcome::WrongRoute
                } else {
                    CallOutcome::NotMeasured
                },
                outcome,
                arguments: None,
                invented: Vec::new(),
                cached,
            },
        };
        (
            case.id.clone(),
            repeat,
            Sample { cached, ..sample },
            offered_hash,
        )
    }

    /// How many lanes requests go out in: one per rotation, at most `--concurrency`; one under
    /// `shuffle` (no tool block is shared) or with one request in flight.
    fn lanes(&self) -> usize {
        match self.cfg.order {
            Order::Rotate { rotations } => self.cfg.concurrency.min(rotations as usize).max(1),
            Order::Shuffle => 1,
        }
    }

    /// The order requests go out in. One lane: each rotation's requests one after another, so
    /// a server that keeps the last prompt (llama.cpp's slot) or a provider's prefix cache finds
    /// their shared tool block. Several: the rotations interleaved (every rotation's first
    /// request, then every second one …), so each chunk holds every rotation and each lane (a
    /// server slot, when the server has as many) keeps to its own rotations' block.
    fn sending_order<'c>(&self, mut jobs: Vec<(&'c Case, u32)>) -> Vec<(&'c Case, u32)> {
        let rotation = |c: &Case| self.cfg.order.rotation(self.cfg.seed, &c.id);
        if self.lanes() == 1 {
            jobs.sort_by_cached_key(|(c, _)| rotation(c));
            return jobs;
        }
        let mut nth: HashMap<u32, usize> = HashMap::new();
        let keys: Vec<(usize, u32)> = jobs
            .iter()
            .map(|(c, _)| {
                let r = rotation(c);
                let n = nth.entry(r).or_default();
                *n += 1;
                (*n, r)
            })
            .collect();
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        order.sort_by_key(|&i| keys[i]);
        order.into_iter().map(|i| jobs[i]).collect()
    }

    /// A chunk's requests split into lanes by rotation (rotation r → lane r mod lanes), each
    /// lane's rotations one after another.
    fn split_lanes<'c>(&self, asked: Vec<Asked<'c>>, lanes: usize) -> Vec<Vec<Asked<'c>>> {
        let rotation = |a: &Asked| self.cfg.order.rotation(self.cfg.seed, &a.case.id);
        let mut out: Vec<Vec<Asked>> = (0..lanes).map(|_| Vec::new()).collect();
        for a in asked {
            out[rotation(&a) as usize % lanes].push(a);
        }
        for lane in &mut out {
            lane.sort_by_cached_key(|a| rotation(a));
        }
        out
    }

    /// Run every case of the suite against one side's tools.
    pub async fn run_side(
        &self,
        label: &str,
        suite: &Suite,
        tools: &ToolSet,
        packs: &[Tool],
    ) -> SideRun {
        self.prefetch(&[(suite, tools)], packs).await;
        let started = Instant::now();
        let stats = Mutex::new(RunStats::default());
        // Each schema compiled once per side: the side's own tools, then the packs (the side's
        // tool wins a name clash, as in `offered_tools`); a case's own distractors compile when
        // called.
        let mut checkers: HashMap<&str, Result<ArgsChecker, String>> = HashMap::new();
        if self.router.fills_arguments() {
            for t in tools.tools.iter().chain(packs) {
                checkers
                    .entry(t.name.as_str())
                    .or_insert_with(|| ArgsChecker::new(&t.input_schema));
            }
        }
        let checkers = &checkers;
        let own: BTreeSet<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
        let own = &own;
        let offered = &self.offered(tools, packs);
        let total = suite.cases.len() as u64 * u64::from(self.cfg.repeats);
        let done = std::sync::atomic::AtomicU64::new(0);
        let failed = std::sync::atomic::AtomicU64::new(0);
        let jobs = suite.cases.iter().flat_map(|c| {
            let first = self.cfg.first_repeat;
            (first..first + self.cfg.repeats).map(move |r| (c, r))
        });
        let jobs = self.sending_order(jobs.collect());
        let lanes = self.lanes();
        let mut results: Vec<(String, u32, Sample, String)> = Vec::with_capacity(jobs.len());
        // Cases go in chunks: the requests of a chunk that neither this run nor the disk cache
        // has answered are handed to the router together first (the semantic router embeds
        // their prompts as one batch instead of one by one), then asked as before.
        let chunk = (PREPARE_TOOLS / offered.fixed.len().max(1))
            .clamp(1, PREPARE_CHUNK)
            .max(self.cfg.concurrency);
        let mut prepared = std::time::Duration::ZERO;
        for chunk in jobs.chunks(chunk) {
            let asked: Vec<Asked> = chunk
                .iter()
                .map(|&(case, repeat)| self.build(case, repeat, offered))
                .collect();
            let fresh: Vec<&RouteRequest> =
                asked.iter().filter(|a| !a.known).map(|a| &a.req).collect();
            if !fresh.is_empty() {
                let t = Instant::now();
                self.router.prepare(&fresh).await;
                prepared += t.elapsed();
            }
            let one = |a| {
                let (stats, done, failed) = (&stats, &done, &failed);
                async move {
                    let (id, repeat, sample, offered_hash) =
                        self.answer(a, own, checkers, stats).await;
                    let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    let f = if sample.outcome.is_error() {
                        failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
                    } else {
                        failed.load(std::sync::atomic::Ordering::Relaxed)
                    };
                    self.console.progress(label, n, total, f);
                    (id, repeat, sample, offered_hash)
                }
            };
            // One stream per lane, all lanes at once: a lane's requests keep to its rotations.
            let per_lane = (self.cfg.concurrency / lanes).max(1);
            let streams = self.split_lanes(asked, lanes).into_iter().map(|lane| {
                futures::stream::iter(lane)
                    .map(one)
                    .buffer_unordered(per_lane)
                    .collect::<Vec<_>>()
            });
            results.extend(
                futures::future::join_all(streams)
                    .await
                    .into_iter()
                    .flatten(),
            );
        }
        let cases = by_case(suite, &results);
        let mut stats = stats.into_inner().expect("stats");
        stats.wall_ms = started.elapsed().as_millis() as u64;
        stats.prepare_ms = prepared.as_millis() as u64;
        SideRun { cases, stats }
    }
}

/// The answered samples gathered back into suite order, each case's repeats in order.
fn by_case(suite: &Suite, results: &[(String, u32, Sample, String)]) -> Vec<CaseRun> {
    let mut by_case: BTreeMap<&str, Vec<(u32, Sample)>> = BTreeMap::new();
    let mut hashes: HashMap<&str, String> = HashMap::new();
    for (id, repeat, sample, h) in results {
        by_case
            .entry(id)
            .or_default()
            .push((*repeat, sample.clone()));
        hashes.insert(id, h.clone());
    }
    suite
        .cases
        .iter()
        .map(|c| {
            let mut samples = by_case.remove(c.id.as_str()).unwrap_or_default();
            samples.sort_by_key(|(r, _)| *r);
            CaseRun {
                id: c.id.clone(),
                offered_hash: hashes.get(c.id.as_str()).cloned().unwrap_or_default(),
                samples: samples.into_iter().map(|(_, s)| s).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Shard parts are merged by adding their counters: every reported counter must add up
    /// (the batch counters were once dropped, pricing a merged `--batch` run at full price).
    #[test]
    fn run_stats_add_sums_every_counter() {
        let mut x = serde_json::to_value(RunStats::default()).expect("json");
        let schema = serde_json::to_value(schemars::schema_for!(RunStats)).expect("schema");
        let fields: Vec<String> = schema["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .cloned()
            .collect();
        assert!(fields.len() >= 13, "{fields:?}");
        for (i, f) in fields.iter().enumerate() {
            x[f] = json!(i as u64 + 1);
        }
        let one: RunStats = serde_json::from_value(x).expect("stats");
        let mut sum = one.clone();
        sum.add(&one);
        let sum = serde_json::to_value(&sum).expect("json");
        for (i, f) in fields.iter().enumerate() {
            assert_eq!(sum[f], json!(2 * (i as u64 + 1)), "{f}");
        }
    }

    #[test]
    fn a_sides_offer_is_offered_tools_with_its_hash() {
        let tools = ToolSet::from_array(
            &[
                json!({"name": "a", "description": "side a"}),
                json!({"name": "b", "inputSchema": {"type": "object", "properties": {"x": {}}}}),
                json!({"name": "c", "description": "side c"}),
            ],
            "t",
            "",
        )
        .unwrap();
        let packs: Vec<Tool> = [
            json!({"name": "c", "description": "pack c, loses to the side"}),
            json!({"name": "p", "description": "pack p, loses to a distractor"}),
            json!({"name": "q", "description": "pack q"}),
            json!({"name": "q", "description": "pack q again"}),
        ]
        .iter()
        .map(|v| Tool::from_value(v, "p", "").unwrap())
        .collect();
        let suite = crate::suite::parse(
            r#"version: 1
cases:
  - {id: one, prompt: "x", expect: a, distractors: [{name: a, description: "loses"}, {name: p, description: "case p"}, {name: d, description: "case d"}, {name: d, description: "d again"}]}
  - {id: two, prompt: "y", expect: b}
"#,
            "s.yaml",
            std::path::Path::new("."),
        )
        .unwrap();
        let offered = Offered::new(&tools, &packs, None, Order::default(), 0);
        for case in &suite.cases {
            for (seed, order) in [0, 1, 42]
                .into_iter()
                .flat_map(|s| [(s, Order::default()), (s, Order::Shuffle)])
            {
                let want = offered_tools(case, &tools, &packs, seed, order);
                let offered = Offered::new(&tools, &packs, None, order, seed);
                let (got, canonical, _) = offered.for_case(case);
                assert_eq!(got, want);
                let canonical: Vec<&str> = canonical.iter().map(|c| c.as_ref()).collect();
                let mut h = Sha256::new();
                cache::array_into(&mut h, &canonical);
                assert_eq!(
                    format!("sha256:{}", hex::encode(h.finalize())),
                    canon::hash(&serde_json::Value::Array(
                        want.iter().map(Tool::to_value).collect()
                    ))
                );
            }
        }
        let (one, _, shared) = offered.for_case(&suite.cases[0]);
        // Case `one` brings distractors `p` (over the pack's `p`) and `d`: a, b, c, q are shared.
        assert_eq!(shared, 4);
        let described = |n: &str| {
            one.iter()
                .find(|t| t.name == n)
                .unwrap()
                .description
                .clone()
        };
        assert_eq!(one.len(), 6);
        assert_eq!(described("a").as_deref(), Some("side a"));
        assert_eq!(described("p").as_deref(), Some("case p"));
        assert_eq!(described("d").as_deref(), Some("case d"));
        assert_eq!(described("q").as_deref(), Some("pack q"));
    }

    /// Records the tool each request's list starts with (its rotation) in the order requests
    /// arrive, and which rotations were in flight together.
    #[derive(Default)]
    struct Slots {
        arrived: Mutex<Vec<String>>,
        in_flight: Mutex<Vec<String>>,
        together: Mutex<usize>,
    }

    #[async_trait::async_trait]
    impl Router for Slots {
        fn kind(&self) -> crate::route::Kind {
            crate::route::Kind::Openai
        }
        fn model(&self) -> &str {
            "slots"
        }
        fn endpoint_host(&self) -> String {
            "local".into()
        }
        async fn route(
            &self,
            req: &RouteRequest,
        ) -> std::result::Result<RouteResponse, crate::http::Failure> {
            let first = req.tools[0].name.clone();
            self.arrived.lock().unwrap().push(first.clone());
            {
                let mut f = self.in_flight.lock().unwrap();
                assert!(
                    !f.contains(&first),
                    "two requests of rotation {first} in flight: {f:?}"
                );
                f.push(first.clone());
                let mut t = self.together.lock().unwrap();
                *t = (*t).max(f.len());
            }
            tokio::time::sleep(std::time::Duration::from_millis(3)).await;
            self.in_flight.lock().unwrap().retain(|x| *x != first);
            Ok(RouteResponse {
                answer: Answer::bare_call("a"),
                usage: None,
                latency_ms: 1,
            })
        }
    }

    /// One request in flight: each rotation's requests one after another (a one-slot server
    /// keeps its block). As many in flight as rotations: one lane per rotation, never two
    /// requests of one rotation at once (a slot per rotation keeps its block), all lanes busy.
    #[tokio::test]
    async fn requests_go_out_in_one_lane_per_rotation() {
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
        let tools: Vec<serde_json::Value> = names
            .iter()
            .map(|n| json!({"name": n, "description": format!("tool {n}")}))
            .collect();
        let tools = ToolSet::from_array(&tools, "t", "").unwrap();
        let cases: String = (0..24)
            .map(|i| format!("  - {{id: c{i}, prompt: \"p {i}\", expect: a}}\n"))
            .collect();
        let suite = crate::suite::parse(
            &format!("version: 1\ncases:\n{cases}"),
            "s.yaml",
            std::path::Path::new("."),
        )
        .unwrap();
        for concurrency in [1, 4] {
            let router = Slots::default();
            let cache = Cache::new(None);
            let cfg = ReplayConfig {
                system_prompt: String::new(),
                tool_choice: ToolChoice::Auto,
                sampling: Sampling::default(),
                repeats: 1,
                first_repeat: 0,
                concurrency,
                seed: 0,
                order: Order::Rotate { rotations: 4 },
                retry: RetryPolicy::default(),
                batch: None,
            };
            let run = Replayer::new(&router, &cache, &cfg)
                .run_side("base", &suite, &tools, &[])
                .await;
            assert_eq!(run.stats.requests_sent, 24);
            let arrived = router.arrived.into_inner().unwrap();
            let mut runs = arrived.clone();
            runs.dedup();
            let rotations: BTreeSet<&String> = arrived.iter().collect();
            assert_eq!(rotations.len(), 4, "{arrived:?}");
            let together = router.together.into_inner().unwrap();
            if concurrency == 1 {
                assert_eq!(runs.len(), 4, "each rotation one run: {arrived:?}");
                assert_eq!(together, 1);
            } else {
                assert_eq!(together, 4, "every lane busy at once: {arrived:?}");
                // The first four requests are one of each rotation.
                let first: BTreeSet<&String> = arrived[..4].iter().collect();
                assert_eq!(first.len(), 4, "{arrived:?}");
            }
        }
    }
}
