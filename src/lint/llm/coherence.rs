//! `lint --llm`, the set-level call: the model grades the server's coherence (the spec's four
//! dimensions) and confirms or rejects each shadow candidate of the cost prefilter.
//!
//! One request for the whole set, with our own prompt (`prompts/lint-coherence.v1.md`). The
//! answer must match `prompts/lint-coherence.v1.schema.json`, and then pass the referential
//! checks the schema cannot express: both names of a confirmed pair exist, the pair was a
//! supplied candidate, the dearer side is named as `tool`, no tool is confirmed twice. A
//! mismatch is sent back with the reason, as for the tool rubric. The answer is cached under
//! every tool's input hash and the candidates, so an unchanged set costs nothing next time.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Asked, ask, only_keys, sampling};
use crate::cache::{self, Cache};
use crate::canon::hash_str;
use crate::http::retry::RetryPolicy;
use crate::lint::coherence::{Coherence, Dimension};
use crate::lint::quality::{Shadow, ToolQuality};
use crate::lint::shadowing::ShadowingRisk;
use crate::route::Router;
use crate::tools::ToolSet;

pub const PROMPT: &str = include_str!("../../../prompts/lint-coherence.v1.md");
pub const PROMPT_FILE: &str = "prompts/lint-coherence.v1.md";
/// The JSON Schema the answer must match before the referential checks.
pub const ANSWER_SCHEMA: &str = include_str!("../../../prompts/lint-coherence.v1.schema.json");

/// The four dimensions, in [`Coherence::dimensions`] order.
pub const DIMENSIONS: [&str; 4] = [
    "disambiguation",
    "naming_consistency",
    "tool_count_appropriateness",
    "completeness",
];

/// A description longer than this is cut in the message (the set must fit one request).
pub const DESCRIPTION_CHARS: usize = 600;

/// The cache section of the set-level answers.
pub(super) const SECTION: &str = "lint-llm-coherence";

/// Cache entry format, part of every key.
const CACHE_FORMAT: u32 = 1;

const REMINDER: &str = "Reply with only the JSON object: \"dimensions\" with the four dimensions, each {\"score\": an integer from 1 to 5, \"justification\": a string}, then \"shadowing\" (a list of the candidates you confirm, each {\"tool\": the dearer tool, \"cheaper_sibling\": the cheaper one, \"justification\": a string}, names spelled exactly as given) and \"summary\" (a string).";

/// A validated answer: the four grades and the confirmed candidates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub dimensions: [Dimension; 4],
    /// (dearer, cheaper, justification), each a supplied candidate, in answer order.
    pub confirmed: Vec<(String, String, String)>,
    pub summary: String,
}

/// The user message: every tool's name and (cut) description, then the candidates.
pub fn server_message(tools: &ToolSet, shadows: &[Shadow]) -> String {
    let mut m = format!("SERVER TOOLS ({}):\n", tools.len());
    for t in &tools.tools {
        let d = t.description_text();
        let d = d.trim();
        let cut: String = d.chars().take(DESCRIPTION_CHARS).collect();
        let more = if cut.len() < d.len() { " […]" } else { "" };
        // JSON-quoted, so a description cannot end its own entry or open a section.
        m.push_str(&format!("- {}: {}{more}\n", t.name, Value::String(cut)));
    }
    m.push_str("\nSHADOW CANDIDATES (dearer / cheaper):\n");
    if shadows.is_empty() {
        m.push_str("None\n");
    }
    for s in shadows {
        m.push_str(&format!(
            "- {} (cost {}) / {} (cost {})\n",
            s.dearer, s.dearer_cost, s.cheaper, s.cheaper_cost
        ));
    }
    m.push_str("\nRespond with JSON only.");
    m
}

/// Read the model's text as a [`Judgement`] about `tools` and `shadows`.
pub fn parse_answer(text: &str, tools: &ToolSet, shadows: &[Shadow]) -> Result<Judgement, String> {
    let o = super::answer_object(text)?;
    only_keys(&o, &["dimensions", "shadowing", "summary"], "")?;
    let dims = o
        .get("dimensions")
        .ok_or("missing key \"dimensions\"")?
        .as_object()
        .ok_or("\"dimensions\" must be an object")?;
    only_keys(dims, &DIMENSIONS, " in \"dimensions\"")?;
    let mut grades = Vec::with_capacity(4);
    for d in DIMENSIONS {
        let given = dims
            .get(d)
            .ok_or_else(|| format!("missing key {d:?} in \"dimensions\""))?;
        let (score, justification) = super::grade(d, given)?;
        grades.push(Dimension {
            score,
            justification: justification.unwrap_or_default(),
        });
    }
    let list = o
        .get("shadowing")
        .ok_or("missing key \"shadowing\"")?
        .as_array()
        .ok_or("\"shadowing\" must be a list")?;
    let mut confirmed: Vec<(String, String, String)> = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let at = format!(" in \"shadowing\"[{i}]");
        let e = e
            .as_object()
            .ok_or_else(|| format!("each entry must be an object{at}"))?;
        only_keys(e, &["tool", "cheaper_sibling", "justification"], &at)?;
        let field = |k: &str| -> Result<String, String> {
            match e.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(x) => Err(format!("{k:?} must be a string{at}, got {x}")),
                None => Err(format!("missing key {k:?}{at}")),
            }
        };
        let (tool, cheaper, why) = (
            field("tool")?,
            field("cheaper_sibling")?,
            field("justification")?,
        );
        for n in [&tool, &cheaper] {
            if tools.get(n).is_none() {
                return Err(format!("{n:?}{at} is not a tool of this server"));
            }
        }
        if !shadows
            .iter()
            .any(|s| s.dearer == tool && s.cheaper == cheaper)
        {
            return Err(
                if shadows
                    .iter()
                    .any(|s| s.dearer == cheaper && s.cheaper == tool)
                {
                    format!(
                        "{tool:?} is the cheaper side{at}: name the dearer tool ({cheaper:?}) as \"tool\""
                    )
                } else {
                    format!("{tool:?} / {cheaper:?}{at} is not one of the shadow candidates")
                },
            );
        }
        if confirmed.iter().any(|(t, _, _)| *t == tool) {
            return Err(format!("{tool:?} is confirmed twice{at}"));
        }
        confirmed.push((tool, cheaper, why));
    }
    let summary = match o.get("summary") {
        Some(Value::String(s)) => s.clone(),
        Some(x) => return Err(format!("\"summary\" must be a string, got {x}")),
        None => return Err("missing key \"summary\"".into()),
    };
    let dimensions: [Dimension; 4] = grades.try_into().expect("four dimensions");
    Ok(Judgement {
        dimensions,
        confirmed,
        summary,
    })
}

/// What the set-level call produced: the model's coherence, the candidates it confirmed and
/// those it did not, and what the call cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerJudgement {
    #[serde(deserialize_with = "prompt_file")]
    pub prompt: super::PromptFile,
    pub prompt_sha256: String,
    /// Absent when the model never gave a valid answer (then `error` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence: Option<Coherence>,
    #[serde(default)]
    pub shadowing_risks: Vec<ShadowingRisk>,
    #[serde(default)]
    pub shadowing_rejected: Vec<ShadowingRisk>,
    pub cached: bool,
    pub answers: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn prompt_file<'de, D: serde::Deserializer<'de>>(d: D) -> Result<super::PromptFile, D::Error> {
    crate::choice::known(d, "prompt", [PROMPT_FILE])
}

/// Everything that can change the answer for the set.
pub fn cache_key(router: &dyn Router, quality: &[ToolQuality], shadows: &[Shadow]) -> String {
    let hashes: Vec<&str> = quality.iter().map(|q| q.input_hash.as_str()).collect();
    let pairs: Vec<Value> = shadows
        .iter()
        .map(|s| json!([s.dearer, s.dearer_cost, s.cheaper, s.cheaper_cost]))
        .collect();
    cache::key(&json!({
        "format": CACHE_FORMAT,
        "input_hashes": hashes,
        "shadows": pairs,
        "prompt_sha256": hash_str(PROMPT),
        "sampling": sampling(),
        "kind": router.kind(),
        "model": router.model(),
        "host": router.endpoint_host(),
    }))
}

/// The model's judgement as coherence, confirmed and rejected candidates (the ones it left out
/// are the rejected).
fn judged(j: Judgement, shadows: &[Shadow]) -> (Coherence, Vec<ShadowingRisk>, Vec<ShadowingRisk>) {
    let coherence = Coherence::new("model", j.dimensions, Some(j.summary));
    let (mut yes, mut no) = (Vec::new(), Vec::new());
    for s in shadows {
        let said = j
            .confirmed
            .iter()
            .find(|(t, c, _)| *t == s.dearer && *c == s.cheaper);
        let r = ShadowingRisk {
            tool: s.dearer.clone(),
            invocation_cost: s.dearer_cost,
            cheaper_sibling: s.cheaper.clone(),
            cheaper_sibling_invocation_cost: s.cheaper_cost,
            justification: said.map_or_else(
                || "the model did not confirm an overlap of purposes".to_string(),
                |(_, _, why)| why.clone(),
            ),
            evidence: None,
        };
        if said.is_some() {
            yes.push(r)
        } else {
            no.push(r)
        }
    }
    (coherence, yes, no)
}

/// Ask the model about the whole set. Returns the judgement and the request counters.
pub(super) async fn judge(
    tools: &ToolSet,
    quality: &[ToolQuality],
    shadows: &[Shadow],
    router: &dyn Router,
    cache: &Cache,
    policy: &RetryPolicy,
) -> (ServerJudgement, Asked<Judgement>) {
    let cache = &cache.section(SECTION);
    let key = cache_key(router, quality, shadows);
    let (answer, cached, asked) = match cache.get::<Judgement>(&key) {
        Some(j) => (Some(j), true, Asked::default()),
        None => {
            let asked = ask(
                router,
                "server coherence",
                PROMPT,
                server_message(tools, shadows),
                |t| parse_answer(t, tools, shadows),
                REMINDER,
                policy,
            )
            .await;
            if let Some(j) = &asked.answer {
                // Best effort: a cache that cannot be written only costs a request next time.
                let _ = cache.put(&key, j);
            }
            (asked.answer.clone(), false, asked)
        }
    };
    let mut out = ServerJudgement {
        prompt: PROMPT_FILE,
        prompt_sha256: hash_str(PROMPT),
        coherence: None,
        shadowing_risks: Vec::new(),
        shadowing_rejected: Vec::new(),
        cached,
        answers: asked.answers,
        error: asked.error.clone(),
    };
    if let Some(j) = answer {
        let (c, yes, no) = judged(j, shadows);
        out.coherence = Some(c);
        out.shadowing_risks = yes;
        out.shadowing_rejected = no;
    }
    (out, asked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;

    /// A valid answer with these grades and confirmations.
    fn answer(grades: [u8; 4], confirmed: &[(&str, &str)]) -> String {
        let dims: Map<String, Value> = DIMENSIONS
            .iter()
            .zip(grades)
            .map(|(d, g)| {
                (
                    d.to_string(),
                    json!({"score": g, "justification": format!("{d} is {g}")}),
                )
            })
            .collect();
        let list: Vec<Value> = confirmed
            .iter()
            .map(|(t, c)| json!({"tool": t, "cheaper_sibling": c, "justification": "overlap"}))
            .collect();
        json!({"dimensions": dims, "shadowing": list, "summary": "s"}).to_string()
    }

    fn set() -> (ToolSet, Vec<Shadow>) {
        let tools = ToolSet::from_array(
            &[
                json!({"name": "get_stat", "description": "Get the value of a dashboard statistic."}),
                json!({"name": "query_panel", "description": "Query a dashboard panel's data."}),
                json!({"name": "list_allowed_directories", "description": "List directories."}),
            ],
            "t",
            "",
        )
        .unwrap();
        let shadows = vec![Shadow {
            dearer: "query_panel".into(),
            dearer_cost: 9,
            cheaper: "get_stat".into(),
            cheaper_cost: 1,
        }];
        (tools, shadows)
    }

    #[test]
    fn confirmed_pairs_must_be_supplied_candidates_named_dearer_first() {
        let (tools, shadows) = set();
        let ok = parse_answer(
            &answer([4, 5, 3, 4], &[("query_panel", "get_stat")]),
            &tools,
            &shadows,
        )
        .unwrap();
        assert_eq!(ok.confirmed.len(), 1);
        assert_eq!(ok.dimensions[2].score, 3);
        for (pairs, why) in [
            (
                &[("get_stat", "query_panel")][..],
                "\"get_stat\" is the cheaper side in \"shadowing\"[0]: name the dearer tool (\"query_panel\") as \"tool\"",
            ),
            (
                &[("query_panel", "nope")][..],
                "\"nope\" in \"shadowing\"[0] is not a tool of this server",
            ),
            (
                &[("query_panel", "list_allowed_directories")][..],
                "\"query_panel\" / \"list_allowed_directories\" in \"shadowing\"[0] is not one of the shadow candidates",
            ),
            (
                &[("query_panel", "get_stat"), ("query_panel", "get_stat")][..],
                "\"query_panel\" is confirmed twice in \"shadowing\"[1]",
            ),
        ] {
            let e = parse_answer(&answer([4, 5, 3, 4], pairs), &tools, &shadows).unwrap_err();
            assert_eq!(e, why);
        }
    }

    #[test]
    fn the_message_quotes_descriptions_and_lists_the_candidates() {
        let (tools, shadows) = set();
        let m = server_message(&tools, &shadows);
        assert!(
            m.starts_with(
                "SERVER TOOLS (3):\n- get_stat: \"Get the value of a dashboard statistic.\"\n"
            ),
            "{m}"
        );
        assert!(m.contains("SHADOW CANDIDATES (dearer / cheaper):\n- query_panel (cost 9) / get_stat (cost 1)\n"), "{m}");
        assert!(server_message(&tools, &[]).contains("(dearer / cheaper):\nNone\n"));
        // A long description is cut, and a quote or newline in it stays inside its string.
        let long = ToolSet::from_array(
            &[json!({"name": "a", "description": format!("x\"\n{}", "y".repeat(900))})],
            "t",
            "",
        )
        .unwrap();
        let m = server_message(&long, &[]);
        let line = m.lines().nth(1).unwrap();
        assert!(
            line.starts_with("- a: \"x\\\"\\ny") && line.ends_with("\" […]"),
            "{line}"
        );
    }

    #[test]
    fn the_model_leaves_the_rest_rejected() {
        let (tools, shadows) = set();
        let j = parse_answer(&answer([2, 5, 5, 4], &[]), &tools, &shadows).unwrap();
        let (c, yes, no) = judged(j, &shadows);
        assert_eq!((c.score, c.source.as_str()), (4.0, "model"));
        assert!(yes.is_empty());
        assert_eq!(
            no[0].justification,
            "the model did not confirm an overlap of purposes"
        );
    }
}
