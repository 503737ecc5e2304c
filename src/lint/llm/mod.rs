//! `lint --llm`: the six model-scored TDQS dimensions.
//!
//! Each tool's definition is sent to the configured router's model as a plain completion (the
//! router with no tools offered, so the answer can only be text), with our own prompt
//! (`prompts/lint-tdqs.v2.md`: the spec's dimensions, weights, anchors and calibration cases in
//! our words), the tool's context signals and its siblings' names. The answer must be one JSON
//! object matching `prompts/lint-tdqs.v2.schema.json` (a score and a justification per dimension,
//! the annotation-contradiction flag, a summary); a mismatch is sent back with the reason and asked again,
//! up to [`MAX_ANSWER_ATTEMPTS`]. Transport failures are retried by the router's policy.
//! Answers are cached under the tool's input hash (with model, endpoint and prompt), so a tool
//! that did not change costs nothing on the next run.

pub mod coherence;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::quality::ToolQuality;
use crate::cache::{self, Cache};
use crate::canon::hash_str;
use crate::http::retry::{RetryPolicy, with_retry};
use crate::llm::{Answer, Message, Sampling, ToolChoice};
use crate::route::{RouteRequest, Router};
use crate::tools::{Tool, ToolSet};

pub const PROMPT: &str = include_str!("../../../prompts/lint-tdqs.v2.md");
pub const PROMPT_FILE: &str = "prompts/lint-tdqs.v2.md";
/// The JSON Schema the answer must match (what [`parse_answer`] enforces).
pub const ANSWER_SCHEMA: &str = include_str!("../../../prompts/lint-tdqs.v2.schema.json");

/// The rubric's dimensions and their weights (hundredths) in a tool's score.
pub const DIMENSIONS: [(&str, u64); 6] = [
    ("purpose_clarity", 25),
    ("usage_guidelines", 20),
    ("behavioral_transparency", 20),
    ("parameter_semantics", 15),
    ("conciseness_structure", 10),
    ("contextual_completeness", 10),
];

/// The flag a description contradicting its annotations raises.
pub const ANNOTATION_CONTRADICTION: &str = "Annotation Contradiction";

/// A tautological description's Purpose Clarity is capped here whatever the model says.
pub const TAUTOLOGY_CAP: u8 = 2;

/// Answers per tool that may fail validation before the tool counts as unscored.
pub const MAX_ANSWER_ATTEMPTS: usize = 3;

/// The cache section of the tool answers.
const SECTION: &str = "lint-llm";

/// Cache entry format, part of every key: bump it when the entry shape changes.
const CACHE_FORMAT: u32 = 2;

/// The tier of a tool the model never gave a valid answer for.
pub const UNSCORED: &str = "?";

pub use super::score::{TIERS, tier};

/// A validated answer: the six grades (1–5, in [`DIMENSIONS`] order), a justification for each,
/// whether the description contradicts the annotations, and the model's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Grades {
    pub purpose_clarity: u8,
    pub usage_guidelines: u8,
    pub behavioral_transparency: u8,
    pub parameter_semantics: u8,
    pub conciseness_structure: u8,
    pub contextual_completeness: u8,
    /// Dimension → the model's justification (empty for a tool graded without a request).
    #[serde(default)]
    pub justifications: BTreeMap<String, String>,
    #[serde(default)]
    pub annotation_contradiction: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl Grades {
    pub fn values(&self) -> [u8; 6] {
        [
            self.purpose_clarity,
            self.usage_guidelines,
            self.behavioral_transparency,
            self.parameter_semantics,
            self.conciseness_structure,
            self.contextual_completeness,
        ]
    }

    /// The weighted score in [1, 5], rounded half-up to one decimal.
    pub fn score(&self) -> f64 {
        let w: Vec<u64> = DIMENSIONS.iter().map(|(_, w)| *w).collect();
        super::score::weighted(&w, &self.values())
    }

    /// Every dimension graded 1: what a tool with no description scores, without a request.
    pub fn floor() -> Grades {
        Grades {
            purpose_clarity: 1,
            usage_guidelines: 1,
            behavioral_transparency: 1,
            parameter_semantics: 1,
            conciseness_structure: 1,
            contextual_completeness: 1,
            justifications: BTreeMap::new(),
            annotation_contradiction: false,
            summary: Some("No description: nothing to evaluate.".into()),
        }
    }

    /// The dimensions graded below 3, in rubric order.
    pub fn smells(&self) -> Vec<String> {
        DIMENSIONS
            .iter()
            .zip(self.values())
            .filter(|(_, v)| *v < super::score::SMELL_BELOW)
            .map(|((d, _), _)| d.to_string())
            .collect()
    }
}

pub(super) fn only_keys(o: &Map<String, Value>, keys: &[&str], at: &str) -> Result<(), String> {
    match o.keys().find(|k| !keys.contains(&k.as_str())) {
        Some(k) => Err(format!("unexpected key {k:?}{at}")),
        None => Ok(()),
    }
}

/// An integer 1..=5, as JSON Schema's `integer` reads it (`5.0` is an integer, `4.5` is not).
pub(super) fn grade_score(x: &Value) -> Option<u8> {
    x.as_u64()
        .or_else(|| {
            x.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                .map(|f| f as u64)
        })
        .filter(|n| (1..=5).contains(n))
        .map(|n| n as u8)
}

/// The model's text as a JSON object; a code fence around it is tolerated (models add one
/// despite being told not to).
pub(super) fn answer_object(text: &str) -> Result<Map<String, Value>, String> {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|x| x.strip_suffix("```"))
        .map(str::trim)
        .unwrap_or(t);
    let v: Value = serde_json::from_str(t).map_err(|e| format!("not a JSON object: {e}"))?;
    match v {
        Value::Object(o) => Ok(o),
        v => Err(format!(
            "expected a JSON object, got {}",
            crate::tools::json_kind(&v)
        )),
    }
}

/// One graded dimension `d`: `{"score": 1..=5, "justification": "..."}`, or the bare score.
/// Small local models often flatten a grade to its bare score: the score is kept and the
/// justification left missing (never invented).
pub(super) fn grade(d: &str, given: &Value) -> Result<(u8, Option<String>), String> {
    if let Some(n) = grade_score(given) {
        return Ok((n, None));
    }
    let e = given.as_object().ok_or_else(|| {
        format!("{d:?} must be an object with score and justification, or a score from 1 to 5")
    })?;
    only_keys(e, &["score", "justification"], &format!(" in {d:?}"))?;
    let x = e
        .get("score")
        .ok_or_else(|| format!("missing key \"score\" in {d:?}"))?;
    let n = grade_score(x)
        .ok_or_else(|| format!("{d:?} score must be an integer from 1 to 5, got {x}"))?;
    match e.get("justification") {
        Some(Value::String(j)) => Ok((n, Some(j.clone()))),
        Some(x) => Err(format!("{d:?} justification must be a string, got {x}")),
        None => Err(format!("missing key \"justification\" in {d:?}")),
    }
}

/// Read the model's text as [`Grades`], enforcing the answer schema
/// (`prompts/lint-tdqs.v2.schema.json`): one JSON object with `scores` (each of the six
/// dimensions an object of an integer `score` in 1..=5 and a string `justification`, or that bare
/// score), a boolean `annotation_contradiction` and a string `summary`, nothing else. Anything
/// else is a mismatch whose message is sent back to the model.
pub fn parse_answer(text: &str) -> Result<Grades, String> {
    let o = &answer_object(text)?;
    only_keys(o, &["scores", "annotation_contradiction", "summary"], "")?;
    let scores = o
        .get("scores")
        .ok_or("missing key \"scores\"")?
        .as_object()
        .ok_or("\"scores\" must be an object")?;
    let dims: Vec<&str> = DIMENSIONS.iter().map(|(d, _)| *d).collect();
    only_keys(scores, &dims, " in \"scores\"")?;
    let mut grades = [0u8; 6];
    let mut justifications = BTreeMap::new();
    for (slot, d) in grades.iter_mut().zip(&dims) {
        let given = scores
            .get(*d)
            .ok_or_else(|| format!("missing key {d:?} in \"scores\""))?;
        let (n, j) = grade(d, given)?;
        *slot = n;
        if let Some(j) = j {
            justifications.insert(d.to_string(), j);
        }
    }
    let annotation_contradiction = match o.get("annotation_contradiction") {
        Some(Value::Bool(b)) => *b,
        Some(x) => {
            return Err(format!(
                "\"annotation_contradiction\" must be true or false, got {x}"
            ));
        }
        None => return Err("missing key \"annotation_contradiction\"".into()),
    };
    let summary = match o.get("summary") {
        Some(Value::String(s)) => s.clone(),
        Some(x) => return Err(format!("\"summary\" must be a string, got {x}")),
        None => return Err("missing key \"summary\"".into()),
    };
    let [a, b, c, d, e, f] = grades;
    Ok(Grades {
        purpose_clarity: a,
        usage_guidelines: b,
        behavioral_transparency: c,
        parameter_semantics: d,
        conciseness_structure: e,
        contextual_completeness: f,
        justifications,
        annotation_contradiction,
        summary: Some(summary),
    })
}

/// The user message for one tool, laid out as the spec's judge sees it: name, title,
/// description, input schema and annotations (pretty JSON), the context signals counted for the
/// model (the invocation-cost signals are withheld, as the spec withholds them), and the names of
/// its siblings.
pub fn tool_message(t: &Tool, q: &ToolQuality, siblings: &[&str]) -> String {
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
    let schema = if t.input_schema.is_null() {
        "{}".to_string()
    } else {
        pretty(&t.input_schema)
    };
    let annotations = match &t.annotations {
        Some(a) if !a.is_empty() => pretty(&Value::Object(a.clone())),
        _ => "None provided".to_string(),
    };
    let siblings = if siblings.is_empty() {
        "None".to_string()
    } else {
        siblings.join("\n")
    };
    format!(
        "TOOL NAME: {}\nTITLE: {}\n\nDESCRIPTION:\n\"{}\"\n\n<input-schema>\n{schema}\n</input-schema>\n\n\
         <annotations>\n{annotations}\n</annotations>\n\nCONTEXT SIGNALS:\n\
         - Parameter count: {}\n- Required parameters: {}\n- Schema description coverage: {}%\n\
         - Parameters with enums: {}\n- Has output schema: {}\n- Has nested objects: {}\n\n\
         <sibling-tools>\n{siblings}\n</sibling-tools>\n\nRespond with JSON only.",
        t.name,
        t.title.as_deref().unwrap_or("null"),
        t.description.as_deref().unwrap_or(""),
        q.param_count,
        q.required_param_count,
        q.schema_description_coverage,
        q.params_with_enums,
        q.has_output_schema,
        q.has_nested_objects,
    )
}

/// A tier's name: one of [`TIERS`], "F", or [`UNSCORED`].
pub type Tier = &'static str;

pub(crate) fn tier_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Tier, D::Error> {
    crate::choice::known(
        d,
        "tier",
        TIERS.iter().map(|(t, _)| *t).chain(["F", UNSCORED]),
    )
}

fn some_tier<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Tier>, D::Error> {
    tier_name(d).map(Some)
}

fn some_gate<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<super::quality::HardGate>, D::Error> {
    super::quality::gate_name(d).map(Some)
}

/// The prompt's file name (an alias, because serde's derive takes a field spelled `&str` as
/// borrowed).
pub type PromptFile = &'static str;

fn prompt_file<'de, D: serde::Deserializer<'de>>(d: D) -> Result<PromptFile, D::Error> {
    crate::choice::known(d, "prompt", [PROMPT_FILE])
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolScore {
    pub name: String,
    pub input_hash: String,
    /// Absent for tools that could not be scored. A tool with no description is not sent and
    /// grades 1 everywhere; a tautological one has Purpose Clarity capped at 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grades: Option<Grades>,
    /// Weighted grades in [1, 5], one decimal; 0 when unscored.
    pub score: f64,
    /// Dimensions graded below 3.
    #[serde(default)]
    pub smells: Vec<String>,
    /// The spec's tool flags: the hard gate, and "Annotation Contradiction" when the model says
    /// so or post-processing found one (kept apart from smells).
    #[serde(default)]
    pub flags: Vec<String>,
    #[serde(deserialize_with = "tier_name")]
    pub tier: Tier,
    #[serde(
        default,
        deserialize_with = "some_gate",
        skip_serializing_if = "Option::is_none"
    )]
    pub hard_gate: Option<super::quality::HardGate>,
    /// Served from the cache (no request).
    pub cached: bool,
    /// Answers asked for (0 when cached or gated).
    pub answers: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LlmReport {
    pub router: crate::route::Kind,
    pub model: String,
    pub host: String,
    #[serde(deserialize_with = "prompt_file")]
    pub prompt: PromptFile,
    pub prompt_sha256: String,
    pub tools: Vec<ToolScore>,
    /// round1(0.6 · mean + 0.4 · min) over the scored tools; absent when fewer than 80% were
    /// scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_score: Option<f64>,
    #[serde(
        default,
        deserialize_with = "some_tier",
        skip_serializing_if = "Option::is_none"
    )]
    pub server_tier: Option<Tier>,
    /// The set-level call: the model's coherence and its shadowing confirmations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<coherence::ServerJudgement>,
    /// round1(0.7 · server_score + 0.3 · the model's coherence); absent unless both are there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overall_score: Option<f64>,
    #[serde(
        default,
        deserialize_with = "some_tier",
        skip_serializing_if = "Option::is_none"
    )]
    pub overall_tier: Option<Tier>,
    pub requests_sent: u64,
    pub cache_hits: u64,
    pub retries: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// What could not be scored (a tool, the server coherence), with why: the run is incomplete.
    pub errors: Vec<String>,
}

impl LlmReport {
    /// An empty report of scoring with `router` and this prompt.
    pub fn new(router: &dyn Router) -> LlmReport {
        LlmReport {
            router: router.kind(),
            model: router.model().to_string(),
            host: router.endpoint_host(),
            prompt: PROMPT_FILE,
            prompt_sha256: hash_str(PROMPT),
            tools: Vec::new(),
            server_score: None,
            server_tier: None,
            server: None,
            overall_score: None,
            overall_tier: None,
            requests_sent: 0,
            cache_hits: 0,
            retries: 0,
            input_tokens: 0,
            output_tokens: 0,
            errors: Vec::new(),
        }
    }
}

impl LlmReport {
    /// Count what one question cost.
    fn add<T>(&mut self, asked: &Asked<T>, cached: bool) {
        self.requests_sent += asked.requests;
        self.retries += asked.retries;
        self.input_tokens += asked.input_tokens;
        self.output_tokens += asked.output_tokens;
        self.cache_hits += u64::from(cached);
        if let Some(e) = &asked.error {
            self.errors.push(e.clone());
        }
    }
}

/// The set-level call ([`coherence`]) for the tools `score` graded into `report`: the model's
/// coherence and shadowing confirmations, its cost, and the overall score when the
/// description-quality rollup and the coherence are both there.
pub async fn judge_server(
    report: &mut LlmReport,
    tools: &ToolSet,
    quality: &[ToolQuality],
    shadows: &[super::quality::Shadow],
    router: &dyn Router,
    cache: &Cache,
    policy: &RetryPolicy,
) {
    let (j, asked) = coherence::judge(tools, quality, shadows, router, cache, policy).await;
    report.add(&asked, j.cached);
    if let (Some(d), Some(c)) = (report.server_score, &j.coherence) {
        let o = super::score::overall(d, c.score);
        report.overall_score = Some(o);
        report.overall_tier = Some(tier(o));
    }
    report.server = Some(j);
}

/// Everything that can change the answer for a tool: its input hash, the prompt, the router.
pub fn cache_key(router: &dyn Router, input_hash: &str) -> String {
    cache::key(&json!({
        "format": CACHE_FORMAT,
        "input_hash": input_hash,
        "prompt_sha256": hash_str(PROMPT),
        "sampling": sampling(),
        "kind": router.kind(),
        "model": router.model(),
        "host": router.endpoint_host(),
    }))
}

/// What asking one question took.
pub(super) struct Asked<T> {
    pub answer: Option<T>,
    pub error: Option<String>,
    pub answers: usize,
    pub requests: u64,
    pub retries: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl<T> Default for Asked<T> {
    fn default() -> Self {
        Asked {
            answer: None,
            error: None,
            answers: 0,
            requests: 0,
            retries: 0,
            input_tokens: 0,
            output_tokens: 0,
        }
    }
}

/// Room for the six grades with some slack (a cut answer is unparseable and costs a retry).
pub(super) fn sampling() -> Sampling {
    Sampling {
        temperature: 0.0,
        seed: Some(0),
        max_tokens: 1200,
    }
}

/// One question: `system` and `message` as a plain completion (no tools offered), the answer
/// read by `parse`; a mismatch is sent back with the reason and `reminder` and asked again, up to
/// [`MAX_ANSWER_ATTEMPTS`]. `label` names the subject in errors.
pub(super) async fn ask<T>(
    router: &dyn Router,
    label: &str,
    system: &str,
    message: String,
    parse: impl Fn(&str) -> Result<T, String>,
    reminder: &str,
    policy: &RetryPolicy,
) -> Asked<T> {
    let mut out = Asked::default();
    let mut messages = vec![Message {
        role: "user".into(),
        content: message,
    }];
    let mut last_problem = String::new();
    while out.answers < MAX_ANSWER_ATTEMPTS {
        let req = RouteRequest {
            system: system.to_string(),
            messages: messages.clone(),
            tools: Vec::new(),
            shared_tools: 0,
            tool_choice: ToolChoice::Auto,
            sampling: sampling(),
            repeat: 0,
        };
        let r = with_retry(policy, || router.route(&req)).await;
        out.requests += u64::from(r.attempts);
        out.retries += u64::from(r.attempts.saturating_sub(1));
        let resp = match r.result {
            Ok(resp) => resp,
            Err(e) => {
                out.error = Some(format!("{label}: {e}"));
                return out;
            }
        };
        out.answers += 1;
        if let Some(u) = &resp.usage {
            out.input_tokens += u.input_tokens;
            out.output_tokens += u.output_tokens;
        }
        let (text, problem) = match resp.answer {
            Answer::NoCall { text } => match parse(&text) {
                Ok(g) => {
                    out.answer = Some(g);
                    return out;
                }
                Err(p) => (text, p),
            },
            Answer::Call { name, .. } => (
                String::new(),
                format!("called a tool ({name}) instead of answering"),
            ),
            Answer::Malformed { detail } => (String::new(), detail),
        };
        last_problem = problem.clone();
        if !text.is_empty() {
            messages.push(Message {
                role: "assistant".into(),
                content: text,
            });
        }
        messages.push(Message {
            role: "user".into(),
            content: format!(
                "That answer does not match the required format: {problem}. {reminder}"
            ),
        });
    }
    out.error = Some(format!(
        "{label}: no valid answer in {MAX_ANSWER_ATTEMPTS} tries (last: {last_problem})"
    ));
    out
}

/// What the tool rubric's re-ask reminds the model of.
const TOOL_REMINDER: &str = "Reply with only the JSON object: \"scores\" with the six dimensions, each {\"score\": an integer from 1 to 5, \"justification\": a string}, then \"annotation_contradiction\" (true or false) and \"summary\" (a string).";

/// The requests (first attempts) scoring `tools` and judging the set would send: the tools
/// the cache does not answer (a tool with no description is never sent), and the set-level
/// call unless cached.
pub fn pending(tools: &ToolSet, router: &dyn Router, cache: &Cache) -> usize {
    let (quality, shadows) = super::quality::assess_all(tools);
    let section = cache.section(SECTION);
    let tools_left = quality
        .iter()
        .filter(|q| q.hard_gates.first().copied() != Some(super::quality::NO_DESCRIPTION))
        .filter(|q| {
            section
                .get::<Grades>(&cache_key(router, &q.input_hash))
                .is_none()
        })
        .count();
    let set = cache
        .section(coherence::SECTION)
        .get::<coherence::Judgement>(&coherence::cache_key(router, &quality, &shadows))
        .is_none();
    tools_left + usize::from(set)
}

/// Score every tool of `tools` (`quality` in the same order, for the hard gates and hashes).
pub async fn score(
    tools: &ToolSet,
    quality: &[ToolQuality],
    router: &dyn Router,
    cache: &Cache,
    concurrency: usize,
    policy: &RetryPolicy,
) -> LlmReport {
    let cache = &cache.section(SECTION);
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    let names = &names;
    let jobs = tools.tools.iter().zip(quality).map(|(t, q)| async move {
        let gate = q.hard_gates.first().copied();
        // Nothing to evaluate: every dimension 1, no request.
        if gate == Some(super::quality::NO_DESCRIPTION) {
            return (q, Some(Grades::floor()), gate, false, Asked::default());
        }
        let key = cache_key(router, &q.input_hash);
        let (grades, cached, asked) = match cache.get::<Grades>(&key) {
            Some(g) => (Some(g), true, Asked::default()),
            None => {
                let siblings: Vec<&str> = names.iter().copied().filter(|n| *n != t.name).collect();
                let asked = ask(
                    router,
                    &format!("`{}`", t.name),
                    PROMPT,
                    tool_message(t, q, &siblings),
                    parse_answer,
                    TOOL_REMINDER,
                    policy,
                )
                .await;
                if let Some(g) = &asked.answer {
                    // Best effort: a cache that cannot be written only costs requests next time.
                    let _ = cache.put(&key, g);
                }
                (asked.answer.clone(), false, asked)
            }
        };
        // The tautology cap applies after the model, so a cached answer is capped the same way.
        let grades = grades.map(|mut g| {
            if gate == Some(super::quality::TAUTOLOGICAL_DESCRIPTION) {
                g.purpose_clarity = g.purpose_clarity.min(TAUTOLOGY_CAP);
            }
            g
        });
        (q, grades, gate, cached, asked)
    });
    let done: Vec<_> = futures::stream::iter(jobs)
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut report = LlmReport::new(router);
    for (q, grades, gate, cached, asked) in done {
        report.add(&asked, cached);
        let score = grades.as_ref().map_or(0.0, Grades::score);
        report.tools.push(ToolScore {
            name: q.name.clone(),
            input_hash: q.input_hash.clone(),
            tier: if grades.is_some() {
                tier(score)
            } else {
                UNSCORED
            },
            smells: grades.as_ref().map(Grades::smells).unwrap_or_default(),
            flags: gate
                .map(str::to_string)
                .into_iter()
                .chain(
                    (grades.as_ref().is_some_and(|g| g.annotation_contradiction)
                        || !q.contradictions.is_empty())
                    .then(|| ANNOTATION_CONTRADICTION.to_string()),
                )
                .collect(),
            grades,
            score,
            hard_gate: gate,
            cached,
            answers: asked.answers,
        });
    }
    let scored: Vec<f64> = report
        .tools
        .iter()
        .filter(|t| t.grades.is_some())
        .map(|t| t.score)
        .collect();
    if super::score::enough_scored(scored.len(), report.tools.len())
        && let Some(s) = super::score::description_quality(&scored)
    {
        report.server_score = Some(s);
        report.server_tier = Some(tier(s));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_and_weights() {
        assert_eq!(DIMENSIONS.iter().map(|(_, w)| w).sum::<u64>(), 100);
        assert_eq!(Grades::floor().score(), 1.0);
        assert_eq!(tier(Grades::floor().score()), "D");
        assert!(Grades::floor().smells().len() == 6);
    }

    fn answer(g: [u8; 6]) -> String {
        let d: Vec<&str> = DIMENSIONS.iter().map(|(d, _)| *d).collect();
        let scores: Map<String, Value> = d
            .iter()
            .zip(g)
            .map(|(d, g)| {
                (
                    d.to_string(),
                    json!({"score": g, "justification": format!("j {d}")}),
                )
            })
            .collect();
        json!({"scores": scores, "annotation_contradiction": false, "summary": "s"}).to_string()
    }

    #[test]
    fn answers_are_validated_strictly() {
        let ok = answer([5, 4, 3, 2, 1, 4]);
        let g = parse_answer(&ok).unwrap();
        assert_eq!(g.values(), [5, 4, 3, 2, 1, 4]);
        // 0.25·5 + 0.2·4 + 0.2·3 + 0.15·2 + 0.1·1 + 0.1·4 = 3.45 → 3.5, tier A.
        assert_eq!((g.score(), tier(g.score())), (3.5, "A"));
        assert_eq!(g.smells(), ["parameter_semantics", "conciseness_structure"]);
        assert_eq!(g.justifications["usage_guidelines"], "j usage_guidelines");
        assert_eq!(
            (g.annotation_contradiction, g.summary.as_deref()),
            (false, Some("s"))
        );
        assert_eq!(parse_answer(&format!("```json\n{ok}\n```")).unwrap(), g);
        let v: Value = serde_json::from_str(&ok).unwrap();
        let with = |f: &dyn Fn(&mut Value)| {
            let mut x = v.clone();
            f(&mut x);
            x.to_string()
        };
        assert_eq!(
            parse_answer(&with(
                &|x| x["scores"]["purpose_clarity"]["score"] = json!(5.0)
            ))
            .unwrap()
            .purpose_clarity,
            5
        );
        // A bare score (small models flatten the object) is kept; its justification stays
        // missing rather than invented.
        let bare = parse_answer(&with(&|x| x["scores"]["purpose_clarity"] = json!(5))).unwrap();
        assert_eq!(bare.purpose_clarity, 5);
        assert!(!bare.justifications.contains_key("purpose_clarity"));
        assert_eq!(bare.justifications.len(), 5);
        for (bad, why) in [
            ("Sure! Here it is".to_string(), "not a JSON object"),
            ("[1,2]".into(), "expected a JSON object"),
            (
                with(&|x| {
                    x["scores"]
                        .as_object_mut()
                        .unwrap()
                        .remove("conciseness_structure");
                }),
                "missing key \"conciseness_structure\"",
            ),
            (
                with(&|x| x["scores"]["purpose_clarity"]["score"] = json!(6)),
                "from 1 to 5",
            ),
            (
                with(&|x| x["scores"]["purpose_clarity"]["score"] = json!(0)),
                "from 1 to 5",
            ),
            (
                with(&|x| x["scores"]["purpose_clarity"]["score"] = json!(4.5)),
                "from 1 to 5",
            ),
            (
                with(&|x| x["scores"]["purpose_clarity"]["score"] = json!("5")),
                "from 1 to 5",
            ),
            (
                with(&|x| x["scores"]["purpose_clarity"] = json!(6)),
                "must be an object with score and justification, or a score from 1 to 5",
            ),
            (
                with(&|x| x["scores"]["purpose_clarity"] = json!("5")),
                "must be an object",
            ),
            (
                with(&|x| {
                    x["scores"]["purpose_clarity"]
                        .as_object_mut()
                        .unwrap()
                        .remove("justification");
                }),
                "missing key \"justification\"",
            ),
            (
                with(&|x| x["annotation_contradiction"] = json!("no")),
                "true or false",
            ),
            (
                with(&|x| {
                    x.as_object_mut().unwrap().remove("summary");
                }),
                "missing key \"summary\"",
            ),
            (with(&|x| x["extra"] = json!(1)), "unexpected key \"extra\""),
            (
                with(&|x| x["scores"]["conciseness"] = json!({"score": 3, "justification": ""})),
                "unexpected key \"conciseness\" in \"scores\"",
            ),
        ] {
            let e = parse_answer(&bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_message_carries_the_context_signals_and_siblings() {
        let t = Tool::from_value(
            &json!({"name": "a", "description": "Does a.", "_meta": {"x": 1},
                "inputSchema": {"type": "object", "properties": {"p": {"type": "string", "description": "P."}}}}),
            "t",
            "",
        )
        .unwrap();
        let q = super::super::quality::assess(&t);
        let m = tool_message(&t, &q, &["b", "c"]);
        assert!(
            m.starts_with("TOOL NAME: a\nTITLE: null\n\nDESCRIPTION:\n\"Does a.\"\n"),
            "{m}"
        );
        for part in [
            "<annotations>\nNone provided\n</annotations>",
            "- Parameter count: 1\n- Required parameters: 0\n- Schema description coverage: 100%",
            "- Has output schema: false\n- Has nested objects: false",
            "<sibling-tools>\nb\nc\n</sibling-tools>\n\nRespond with JSON only.",
        ] {
            assert!(m.contains(part), "{part}\n{m}");
        }
        // Invocation cost is withheld from the tool prompt, as the spec withholds it; so is _meta.
        assert!(!m.contains("cost") && !m.contains("_meta"), "{m}");
        assert!(tool_message(&t, &q, &[]).contains("<sibling-tools>\nNone\n"));
    }
}
