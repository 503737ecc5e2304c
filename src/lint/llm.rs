//! `lint --llm`: the six model-scored TDQS dimensions.
//!
//! Each tool's definition is sent to the configured router's model as a plain completion (the
//! router with no tools offered, so the answer can only be text), with our own prompt
//! (`prompts/lint-tdqs.v1.md`). The answer must be one JSON object matching
//! `prompts/lint-tdqs.v1.schema.json`; a mismatch is sent back with the reason and asked again,
//! up to [`MAX_ANSWER_ATTEMPTS`]. Transport failures are retried by the router's policy.
//! Answers are cached under the tool's input hash (with model, endpoint and prompt), so a tool
//! that did not change costs nothing on the next run.

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::quality::ToolQuality;
use crate::cache::{self, Cache};
use crate::canon::{hash_str, to_canonical};
use crate::http::retry::{RetryPolicy, with_retry};
use crate::llm::{Answer, Message, Sampling, ToolChoice};
use crate::route::{RouteRequest, Router};
use crate::tools::{KNOWN_FIELDS, Tool, ToolSet};

pub const PROMPT: &str = include_str!("../../prompts/lint-tdqs.v1.md");
pub const PROMPT_FILE: &str = "prompts/lint-tdqs.v1.md";
/// The JSON Schema the answer must match (what [`parse_answer`] enforces).
pub const ANSWER_SCHEMA: &str = include_str!("../../prompts/lint-tdqs.v1.schema.json");

/// The rubric's dimensions and their weights (hundredths) in a tool's score.
pub const DIMENSIONS: [(&str, u64); 6] = [
    ("purpose_clarity", 25),
    ("usage_guidelines", 20),
    ("behavioral_transparency", 20),
    ("parameter_semantics", 15),
    ("conciseness", 10),
    ("contextual_completeness", 10),
];

/// A tautological description's Purpose Clarity is capped here whatever the model says.
pub const TAUTOLOGY_CAP: u8 = 2;

/// Answers per tool that may fail validation before the tool counts as unscored.
pub const MAX_ANSWER_ATTEMPTS: usize = 3;

/// Cache entry format, part of every key: bump it when the entry shape changes.
const CACHE_FORMAT: u32 = 1;

/// The tier of a tool the model never gave a valid answer for.
pub const UNSCORED: &str = "?";

pub use super::score::{TIERS, tier};

/// A validated answer: the six grades (1–5, in [`DIMENSIONS`] order), and a rationale when the
/// model adds one (not asked for: small models let it run past the token limit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Grades {
    pub purpose_clarity: u8,
    pub usage_guidelines: u8,
    pub behavioral_transparency: u8,
    pub parameter_semantics: u8,
    pub conciseness: u8,
    pub contextual_completeness: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
}

impl Grades {
    pub fn values(&self) -> [u8; 6] {
        [
            self.purpose_clarity,
            self.usage_guidelines,
            self.behavioral_transparency,
            self.parameter_semantics,
            self.conciseness,
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
            conciseness: 1,
            contextual_completeness: 1,
            rationale: None,
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

/// Read the model's text as [`Grades`], enforcing the answer schema: one JSON object, exactly
/// the six integer grades in 1..=5 and an optional string `rationale`, nothing else. A code
/// fence around the object is tolerated (models add one despite being told not to); anything
/// else is a mismatch whose message is sent back to the model.
pub fn parse_answer(text: &str) -> Result<Grades, String> {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|x| x.strip_suffix("```"))
        .map(str::trim)
        .unwrap_or(t);
    let v: Value = serde_json::from_str(t).map_err(|e| format!("not a JSON object: {e}"))?;
    let o = v.as_object().ok_or_else(|| {
        format!(
            "expected a JSON object, got {}",
            crate::tools::json_kind(&v)
        )
    })?;
    for k in o.keys() {
        if k != "rationale" && !DIMENSIONS.iter().any(|(d, _)| d == k) {
            return Err(format!("unexpected key {k:?}"));
        }
    }
    let mut grades = [0u8; 6];
    for (slot, (d, _)) in grades.iter_mut().zip(DIMENSIONS) {
        let x = o.get(d).ok_or_else(|| format!("missing key {d:?}"))?;
        let n = x
            .as_u64()
            .or_else(|| {
                x.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            })
            .filter(|n| (1..=5).contains(n))
            .ok_or_else(|| format!("{d:?} must be an integer from 1 to 5, got {x}"))?;
        *slot = n as u8;
    }
    let rationale = match o.get("rationale") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(x) => return Err(format!("\"rationale\" must be a string, got {x}")),
    };
    let [a, b, c, d, e, f] = grades;
    Ok(Grades {
        purpose_clarity: a,
        usage_guidelines: b,
        behavioral_transparency: c,
        parameter_semantics: d,
        conciseness: e,
        contextual_completeness: f,
        rationale,
    })
}

/// The user message for one tool: its definition as the rubric sees it (the spec's named fields
/// only, canonical key order).
pub fn tool_message(t: &Tool) -> String {
    let full = t.to_value();
    let only: Map<String, Value> = full
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| KNOWN_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    format!(
        "Grade this tool definition:\n{}",
        to_canonical(&Value::Object(only))
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
    pub router: String,
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
    pub requests_sent: u64,
    pub cache_hits: u64,
    pub retries: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Tools that could not be scored, with why: the run is incomplete.
    pub errors: Vec<String>,
}

impl LlmReport {
    /// An empty report of scoring with `router` and this prompt.
    pub fn new(router: &dyn Router) -> LlmReport {
        LlmReport {
            router: router.kind().to_string(),
            model: router.model().to_string(),
            host: router.endpoint_host(),
            prompt: PROMPT_FILE,
            prompt_sha256: hash_str(PROMPT),
            tools: Vec::new(),
            server_score: None,
            server_tier: None,
            requests_sent: 0,
            cache_hits: 0,
            retries: 0,
            input_tokens: 0,
            output_tokens: 0,
            errors: Vec::new(),
        }
    }
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

/// What asking about one tool took.
#[derive(Default)]
struct Asked {
    grades: Option<Grades>,
    error: Option<String>,
    answers: usize,
    requests: u64,
    retries: u64,
    input_tokens: u64,
    output_tokens: u64,
}

/// Room for the six grades with some slack (a cut answer is unparseable and costs a retry).
fn sampling() -> Sampling {
    Sampling {
        temperature: 0.0,
        seed: Some(0),
        max_tokens: 600,
    }
}

async fn ask(router: &dyn Router, t: &Tool, policy: &RetryPolicy) -> Asked {
    let mut out = Asked::default();
    let mut messages = vec![Message {
        role: "user".into(),
        content: tool_message(t),
    }];
    let mut last_problem = String::new();
    while out.answers < MAX_ANSWER_ATTEMPTS {
        let req = RouteRequest {
            system: PROMPT.to_string(),
            messages: messages.clone(),
            tools: Vec::new(),
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
                out.error = Some(format!("`{}`: {e}", t.name));
                return out;
            }
        };
        out.answers += 1;
        if let Some(u) = &resp.usage {
            out.input_tokens += u.input_tokens;
            out.output_tokens += u.output_tokens;
        }
        let (text, problem) = match resp.answer {
            Answer::NoCall { text } => match parse_answer(&text) {
                Ok(g) => {
                    out.grades = Some(g);
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
                "That answer does not match the required format: {problem}. Reply with only the JSON object: the six keys, each an integer from 1 to 5."
            ),
        });
    }
    out.error = Some(format!(
        "`{}`: no valid answer in {MAX_ANSWER_ATTEMPTS} tries (last: {last_problem})",
        t.name
    ));
    out
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
    let cache = &cache.section("lint-llm");
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
                let asked = ask(router, t, policy).await;
                if let Some(g) = &asked.grades {
                    // Best effort: a cache that cannot be written only costs requests next time.
                    let _ = cache.put(&key, g);
                }
                (asked.grades.clone(), false, asked)
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
        report.requests_sent += asked.requests;
        report.retries += asked.retries;
        report.input_tokens += asked.input_tokens;
        report.output_tokens += asked.output_tokens;
        report.cache_hits += u64::from(cached);
        if let Some(e) = asked.error {
            report.errors.push(e);
        }
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

    #[test]
    fn answers_are_validated_strictly() {
        let ok = r#"{"purpose_clarity": 5, "usage_guidelines": 4, "behavioral_transparency": 3,
            "parameter_semantics": 2, "conciseness": 1, "contextual_completeness": 4, "rationale": "r"}"#;
        let g = parse_answer(ok).unwrap();
        assert_eq!(g.values(), [5, 4, 3, 2, 1, 4]);
        // 0.25·5 + 0.2·4 + 0.2·3 + 0.15·2 + 0.1·1 + 0.1·4 = 3.45 → 3.5, tier A.
        assert_eq!((g.score(), tier(g.score())), (3.5, "A"));
        assert_eq!(g.smells(), ["parameter_semantics", "conciseness"]);
        assert_eq!(g.rationale.as_deref(), Some("r"));
        assert_eq!(parse_answer(&format!("```json\n{ok}\n```")).unwrap(), g);
        assert_eq!(
            parse_answer(&ok.replace("5,", "5.0,"))
                .unwrap()
                .purpose_clarity,
            5
        );
        for (bad, why) in [
            ("Sure! Here it is", "not a JSON object"),
            ("[1,2]", "expected a JSON object"),
            (
                &ok.replace("\"conciseness\": 1,", "") as &str,
                "missing key \"conciseness\"",
            ),
            (&ok.replace("5,", "6,"), "from 1 to 5"),
            (&ok.replace("5,", "0,"), "from 1 to 5"),
            (&ok.replace("5,", "4.5,"), "from 1 to 5"),
            (&ok.replace("5,", "\"5\","), "from 1 to 5"),
            (&ok.replace("\"r\"", "3"), "rationale"),
            (
                &ok.replace("\"rationale\"", "\"extra\""),
                "unexpected key \"extra\"",
            ),
        ] {
            let e = parse_answer(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_message_holds_only_the_named_fields() {
        let t = Tool::from_value(
            &json!({"name": "a", "description": "d", "_meta": {"x": 1}, "inputSchema": {"type": "object"}}),
            "t",
            "",
        )
        .unwrap();
        assert_eq!(
            tool_message(&t),
            "Grade this tool definition:\n{\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"},\"name\":\"a\"}"
        );
    }
}
