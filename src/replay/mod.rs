//! Replay a suite through a router at one side, then compare base and head case by case.
//!
//! Each case is asked against the side's whole tool set plus the case's distractors plus the
//! distractor packs, in an order shuffled per case by a seed and identical at base and head (a
//! tool keeps its relative position), so order is not a confound. Requests go through the cache;
//! identical requests within a run are sent once.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cache::Cache;
use crate::console::{Console, Silent};
use crate::http::retry::{RetryPolicy, with_retry};
use crate::llm::{Answer, Message, Sampling, ToolChoice, Usage};
use crate::route::cache;
use crate::route::{RouteRequest, RouteResponse, Router};
use crate::stats::{self, CaseOutcome, Confusion, PairedSummary, ToolMetrics};
use crate::suite::{Case, Expect, Suite};
use crate::tools::{Tool, ToolSet};

#[derive(Debug, Clone)]
pub struct ReplayConfig {
    pub system_prompt: String,
    pub tool_choice: ToolChoice,
    pub sampling: Sampling,
    pub repeats: u32,
    pub concurrency: usize,
    /// Seeds the per-case tool order.
    pub seed: u64,
    pub retry: RetryPolicy,
}

/// How one answer is judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outcome {
    Correct {
        chosen: Option<String>,
    },
    WrongTool {
        chosen: String,
    },
    NoCall,
    /// A tool the case forbids: a hard failure.
    MustNotCall {
        chosen: String,
    },
    /// Called a name that was not offered; `nearest` is the closest offered name.
    Hallucinated {
        name: String,
        nearest: Option<String>,
    },
    Malformed {
        detail: String,
    },
    /// No answer after retries: the measurement is incomplete.
    Error {
        message: String,
    },
}

impl Outcome {
    pub fn is_correct(&self) -> bool {
        matches!(self, Outcome::Correct { .. })
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error { .. })
    }
    /// What was called, for flip lists and confusion tables ("(none)" for no call).
    pub fn choice(&self) -> String {
        match self {
            Outcome::Correct { chosen: Some(c) }
            | Outcome::WrongTool { chosen: c }
            | Outcome::MustNotCall { chosen: c } => c.clone(),
            Outcome::Correct { chosen: None } | Outcome::NoCall => stats::NO_CALL.into(),
            Outcome::Hallucinated {
                name,
                nearest: Some(n),
            } => format!("{name} (not offered; nearest: {n})"),
            Outcome::Hallucinated { name, .. } => format!("{name} (not offered)"),
            Outcome::Malformed { .. } => "(malformed)".into(),
            Outcome::Error { .. } => "(error)".into(),
        }
    }
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Correct { .. } => "correct",
            Outcome::WrongTool { .. } => "wrong tool",
            Outcome::NoCall => "no call",
            Outcome::MustNotCall { .. } => "must-not-call hit",
            Outcome::Hallucinated { .. } => "hallucinated name",
            Outcome::Malformed { .. } => "malformed",
            Outcome::Error { .. } => "error",
        }
    }
}

/// Judge one answer against a case and the names that were offered.
pub fn classify(case: &Case, offered: &[&str], answer: &Answer) -> Outcome {
    match answer {
        Answer::Malformed { detail } => Outcome::Malformed {
            detail: detail.clone(),
        },
        Answer::NoCall { .. } => match case.expect {
            Expect::None => Outcome::Correct { chosen: None },
            Expect::Tools(_) => Outcome::NoCall,
        },
        Answer::Call {
            name,
            arguments,
            raw_arguments,
        } => {
            if !offered.contains(&name.as_str()) {
                let nearest = offered
                    .iter()
                    .min_by_key(|o| strsim::levenshtein(o, name))
                    .map(|s| s.to_string());
                return Outcome::Hallucinated {
                    name: name.clone(),
                    nearest,
                };
            }
            if case.must_not_call.contains(name) {
                return Outcome::MustNotCall {
                    chosen: name.clone(),
                };
            }
            if arguments.is_none() && !raw_arguments.trim().is_empty() {
                return Outcome::Malformed {
                    detail: format!("arguments for `{name}` are not a JSON object"),
                };
            }
            if case.expect.names().contains(name) {
                Outcome::Correct {
                    chosen: Some(name.clone()),
                }
            } else {
                Outcome::WrongTool {
                    chosen: name.clone(),
                }
            }
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunStats {
    pub requests_sent: u64,
    pub cache_hits: u64,
    /// Identical requests answered once within this run (e.g. head questions equal to base's).
    pub reused: u64,
    pub retries: u64,
    pub errors: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub request_latency_ms_sum: u64,
    pub wall_ms: u64,
    /// Exact sum behind `request_latency_ms_sum` (summing whole milliseconds per request would
    /// drop sub-millisecond requests entirely).
    #[serde(skip)]
    latency: std::time::Duration,
}

#[derive(Debug, Clone, Serialize)]
pub struct SideRun {
    pub cases: Vec<CaseRun>,
    pub stats: RunStats,
}

/// Per-case deterministic order: sort by sha256(seed, case id, tool name). A tool present at both
/// sides keeps its relative order, so base and head see the same arrangement.
pub fn offered_tools(case: &Case, tools: &ToolSet, packs: &[Tool], seed: u64) -> Vec<Tool> {
    let mut seen = BTreeSet::new();
    let mut all: Vec<Tool> = Vec::new();
    // The server's own tools win a name clash with a distractor.
    for t in tools.tools.iter().chain(&case.distractors).chain(packs) {
        if seen.insert(t.name.clone()) {
            all.push(t.clone());
        }
    }
    let rank = |name: &str| -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(seed.to_le_bytes());
        h.update(case.id.as_bytes());
        h.update([0]);
        h.update(name.as_bytes());
        h.finalize().into()
    };
    all.sort_by_cached_key(|t| rank(&t.name));
    all
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
}

impl<'a> Replayer<'a> {
    /// Answers are cached in `cache`'s route section.
    pub fn new(router: &'a dyn Router, cache: &Cache, cfg: &'a ReplayConfig) -> Self {
        Replayer {
            router,
            cfg,
            cache: cache.section(cache::SECTION),
            console: &Silent,
            memo: Mutex::new(HashMap::new()),
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
        req: &RouteRequest,
        stats: &Mutex<RunStats>,
    ) -> (Result<RouteResponse, String>, bool) {
        let key = cache::key(self.router, req);
        let cell = {
            let mut memo = self.memo.lock().expect("memo lock");
            memo.entry(key.clone()).or_default().clone()
        };
        let mut first = false;
        let (result, from_disk) = cell
            .get_or_init(|| async {
                first = true;
                if let Some(hit) = self.cache.get(&key) {
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
                            s.input_tokens += u.input_tokens;
                            s.output_tokens += u.output_tokens;
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

    /// Run every case of the suite against one side's tools.
    pub async fn run_side(
        &self,
        label: &str,
        suite: &Suite,
        tools: &ToolSet,
        packs: &[Tool],
    ) -> SideRun {
        let started = Instant::now();
        let stats = Mutex::new(RunStats::default());
        let total = suite.cases.len() as u64 * u64::from(self.cfg.repeats);
        let done = std::sync::atomic::AtomicU64::new(0);
        let jobs = suite
            .cases
            .iter()
            .flat_map(|c| (0..self.cfg.repeats).map(move |r| (c, r)));
        let results: Vec<(String, u32, Sample, String)> = futures::stream::iter(jobs)
            .map(|(case, repeat)| {
                let stats = &stats;
                let done = &done;
                async move {
                    let tools = offered_tools(case, tools, packs, self.cfg.seed);
                    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                    let offered_hash = crate::canon::hash(&serde_json::Value::Array(
                        tools.iter().map(Tool::to_value).collect(),
                    ));
                    let mut messages: Vec<Message> = case.history.clone();
                    messages.push(Message {
                        role: "user".into(),
                        content: case.prompt.clone(),
                    });
                    let req = RouteRequest {
                        system: self.cfg.system_prompt.clone(),
                        messages,
                        tools: tools.clone(),
                        tool_choice: self.cfg.tool_choice,
                        sampling: self.cfg.sampling.clone(),
                        repeat,
                    };
                    let (result, cached) = self.ask(&req, stats).await;
                    let outcome = match &result {
                        Ok(resp) => classify(case, &names, &resp.answer),
                        Err(e) => Outcome::Error { message: e.clone() },
                    };
                    let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    self.console.progress(label, n, total);
                    (
                        case.id.clone(),
                        repeat,
                        Sample { outcome, cached },
                        offered_hash,
                    )
                }
            })
            .buffer_unordered(self.cfg.concurrency.max(1))
            .collect()
            .await;
        let mut by_case: BTreeMap<&str, Vec<(u32, Sample)>> = BTreeMap::new();
        let mut hashes: HashMap<&str, String> = HashMap::new();
        for (id, repeat, sample, h) in &results {
            by_case
                .entry(id)
                .or_default()
                .push((*repeat, sample.clone()));
            hashes.insert(id, h.clone());
        }
        let cases = suite
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
            .collect();
        let mut stats = stats.into_inner().expect("stats");
        stats.wall_ms = started.elapsed().as_millis() as u64;
        SideRun { cases, stats }
    }
}

/// Which way a case flipped. Regressions sort first: they are what the reader must see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Right at base, wrong at head.
    Regressed,
    /// Wrong at base, right at head.
    Fixed,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Regressed => "regressed",
            Direction::Fixed => "fixed",
        }
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A case whose (majority) outcome differs between base and head.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flip {
    pub id: String,
    pub prompt: String,
    pub expect: String,
    pub base: String,
    pub head: String,
    pub direction: Direction,
    pub base_correct: u32,
    pub head_correct: u32,
    pub repeats: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolRouting {
    pub tool: String,
    pub cases: usize,
    pub base_accuracy: f64,
    pub head_accuracy: f64,
    pub delta: f64,
    pub regressed: u64,
    pub fixed: u64,
    /// Exact one-sided sign test for "head is worse" on this tool's cases.
    pub p_value_worse: f64,
    pub base_metrics: Option<ToolMetrics>,
    pub head_metrics: Option<ToolMetrics>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Routing {
    pub summary: PairedSummary,
    pub flips: Vec<Flip>,
    pub per_tool: Vec<ToolRouting>,
    pub base_confusions: Vec<Confusion>,
    pub head_confusions: Vec<Confusion>,
    /// Outcome counts per side ("wrong tool": 3, …).
    pub base_outcomes: BTreeMap<String, u64>,
    pub head_outcomes: BTreeMap<String, u64>,
    /// Cases asked the exact same question at head as at base (not re-sent).
    pub cases_unchanged_question: usize,
    pub errors: Vec<String>,
    pub base_stats: RunStats,
    pub head_stats: RunStats,
}

impl Routing {
    pub fn incomplete(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// Pair base and head runs case by case.
pub fn compare(suite: &Suite, base: &SideRun, head: &SideRun, seed: u64) -> Routing {
    let mut outcomes = Vec::new();
    let mut flips = Vec::new();
    let mut errors = Vec::new();
    let mut unchanged_q = 0;
    for ((case, b), h) in suite.cases.iter().zip(&base.cases).zip(&head.cases) {
        for (side, run) in [("base", b), ("head", h)] {
            for s in &run.samples {
                if let Outcome::Error { message } = &s.outcome {
                    errors.push(format!("{side} case {:?}: {message}", case.id));
                }
            }
        }
        if b.offered_hash == h.offered_hash {
            unchanged_q += 1;
        }
        let repeats = b.samples.len().max(1) as u32;
        let o = CaseOutcome::new(case.id.clone(), b.correct(), h.correct(), repeats);
        if o.base_right() != o.head_right() {
            flips.push(Flip {
                id: case.id.clone(),
                prompt: case.prompt.clone(),
                expect: case.expect.label(),
                base: b.typical().choice(),
                head: h.typical().choice(),
                direction: if o.base_right() {
                    Direction::Regressed
                } else {
                    Direction::Fixed
                },
                base_correct: o.base_correct,
                head_correct: o.head_correct,
                repeats,
            });
        }
        outcomes.push(o);
    }
    flips.sort_by(|a, b| a.direction.cmp(&b.direction).then_with(|| a.id.cmp(&b.id)));
    let summary = stats::paired_summary(&outcomes, seed);
    let obs = |run: &SideRun| -> Vec<(Vec<String>, Option<String>)> {
        suite
            .cases
            .iter()
            .zip(&run.cases)
            .flat_map(|(c, r)| {
                r.samples
                    .iter()
                    .filter(|s| !s.outcome.is_error())
                    .map(move |s| {
                        let chosen = match &s.outcome {
                            Outcome::Correct { chosen } => chosen.clone(),
                            Outcome::NoCall => None,
                            o => Some(o.choice()),
                        };
                        (c.expect.names().to_vec(), chosen)
                    })
            })
            .collect()
    };
    let (base_metrics, base_confusions) = stats::tool_metrics(&obs(base));
    let (head_metrics, head_confusions) = stats::tool_metrics(&obs(head));
    let mut tools: BTreeSet<&str> = BTreeSet::new();
    for c in &suite.cases {
        tools.extend(c.expect.names().iter().map(String::as_str));
    }
    let per_tool = tools
        .into_iter()
        .map(|tool| {
            let idx: Vec<usize> = suite
                .cases
                .iter()
                .enumerate()
                .filter(|(_, c)| c.expect.names().iter().any(|n| n == tool))
                .map(|(i, _)| i)
                .collect();
            let sub: Vec<CaseOutcome> = idx.iter().map(|&i| outcomes[i].clone()).collect();
            let s = stats::paired_summary(&sub, seed);
            ToolRouting {
                tool: tool.to_string(),
                cases: sub.len(),
                base_accuracy: s.base_accuracy,
                head_accuracy: s.head_accuracy,
                delta: s.delta,
                regressed: s.discordant_right_to_wrong,
                fixed: s.discordant_wrong_to_right,
                p_value_worse: s.p_value_worse,
                base_metrics: base_metrics.iter().find(|m| m.tool == tool).cloned(),
                head_metrics: head_metrics.iter().find(|m| m.tool == tool).cloned(),
            }
        })
        .collect();
    let count = |run: &SideRun| -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for s in run.cases.iter().flat_map(|c| &c.samples) {
            *m.entry(s.outcome.label().to_string()).or_insert(0) += 1;
        }
        m
    };
    Routing {
        summary,
        flips,
        per_tool,
        base_confusions,
        head_confusions,
        base_outcomes: count(base),
        head_outcomes: count(head),
        cases_unchanged_question: unchanged_q,
        errors,
        base_stats: base.stats.clone(),
        head_stats: head.stats.clone(),
    }
}

/// Sum of usage, for cost lines.
pub fn total_usage(r: &Routing) -> Usage {
    Usage {
        input_tokens: r.base_stats.input_tokens + r.head_stats.input_tokens,
        output_tokens: r.base_stats.output_tokens + r.head_stats.output_tokens,
    }
}
