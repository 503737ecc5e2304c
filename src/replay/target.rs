//! Targeted replay (`--replay targeted`): every case offers the whole tool list, so one changed
//! tool makes every head question new and a full replay re-sends the suite. Only a case a change
//! can reach is asked again at head — its expected or forbidden tool changed, base answered a
//! changed tool, or a changed tool is among the `TOP_K` tools nearest its prompt at either side —
//! and the others carry base's answers, said in the report with how many were carried.
//!
//! For the semantic router this is exact: an unchanged tool keeps its vector, so a case whose
//! nearest tools are all unchanged on both sides gets base's answer again. For an LLM it is a
//! bet that a change far from a prompt does not move it; `--replay full` (the default) makes none.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::runner::{CaseRun, SideRun, offered_tools};
use crate::embed::{Embedder, cosine};
use crate::error::Result;
use crate::suite::Suite;
use crate::tools::{Tool, ToolSet};

/// How many nearest tools of a prompt are watched for a change.
pub const TOP_K: usize = 3;

/// What `--replay targeted` carried, for the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Carried {
    /// Cases asked again at head.
    pub asked: usize,
    /// Cases whose head answers are base's.
    pub carried: usize,
    /// The nearest tools watched per prompt.
    pub top_k: usize,
    /// Head requests not sent (carried cases × repeats).
    pub requests_saved: u64,
}

/// The names of every tool whose definition differs between the sides, or that one side lacks (a
/// rename is both names). From the definitions, not the diff: a change the severity law calls
/// harmless (a respelled bound) still reaches the model.
pub fn changed_tools(base: &ToolSet, head: &ToolSet) -> BTreeSet<String> {
    let defs = |s: &ToolSet| -> std::collections::BTreeMap<String, serde_json::Value> {
        s.tools
            .iter()
            .map(|t| (t.name.clone(), t.to_value()))
            .collect()
    };
    let (b, h) = (defs(base), defs(head));
    b.keys()
        .chain(h.keys())
        .filter(|n| b.get(*n) != h.get(*n))
        .cloned()
        .collect()
}

/// Per case of `suite` (base's expectations) and `head_suite`: must head be asked again?
pub async fn at_risk(
    suite: &Suite,
    head_suite: &Suite,
    base_run: &SideRun,
    changed: &BTreeSet<String>,
    sides: [&ToolSet; 2],
    packs: &[Tool],
    embedder: &dyn Embedder,
) -> Result<Vec<bool>> {
    let mut risky: Vec<bool> = suite
        .cases
        .iter()
        .zip(&head_suite.cases)
        .zip(&base_run.cases)
        .map(|((c, h), run)| {
            let named = c
                .expect
                .names()
                .iter()
                .chain(h.expect.names())
                .chain(&c.must_not_call)
                .chain(&h.must_not_call)
                .any(|n| changed.contains(n));
            let answered = run
                .samples
                .iter()
                .any(|s| changed.contains(&s.outcome.choice()));
            named || answered
        })
        .collect();
    if changed.is_empty() {
        return Ok(risky);
    }
    // The nearest tools of each remaining prompt, at both sides, in one embedding batch.
    let open: Vec<usize> = (0..risky.len()).filter(|&i| !risky[i]).collect();
    let mut texts: Vec<String> = open
        .iter()
        .map(|&i| suite.cases[i].prompt.clone())
        .collect();
    // What each side offers the case, as the replay offers it (the order does not matter here:
    // tools are ranked by their cosine to the prompt).
    let offered = |side: &ToolSet, i: usize| {
        offered_tools(&suite.cases[i], side, packs, 0, super::Order::Shuffle)
    };
    let lists: Vec<[Vec<Tool>; 2]> = open
        .iter()
        .map(|&i| [offered(sides[0], i), offered(sides[1], i)])
        .collect();
    let mut tool_texts: Vec<String> = lists
        .iter()
        .flatten()
        .flatten()
        .map(Tool::routing_text)
        .collect();
    tool_texts.sort();
    tool_texts.dedup();
    texts.extend(tool_texts.iter().cloned());
    let vectors = embedder.embed(&texts).await?;
    let tool_row = |t: &Tool| {
        let at = tool_texts
            .binary_search(&t.routing_text())
            .expect("every offered tool was embedded");
        vectors.row(open.len() + at)
    };
    for (j, &i) in open.iter().enumerate() {
        let prompt = vectors.row(j);
        risky[i] = lists[j].iter().any(|list| {
            let mut scored: Vec<(f32, &Tool)> = list
                .iter()
                .map(|t| (cosine(prompt, tool_row(t)), t))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            scored
                .iter()
                .take(TOP_K)
                .any(|(_, t)| changed.contains(&t.name))
        });
    }
    Ok(risky)
}

/// Head's run assembled: the asked cases' runs in order, base's for the carried ones.
pub fn assemble(risky: &[bool], base: &SideRun, asked: SideRun) -> SideRun {
    let mut asked_cases = asked.cases.into_iter();
    let cases = risky
        .iter()
        .zip(&base.cases)
        .map(|(&r, b)| {
            if r {
                asked_cases.next().expect("one asked run per risky case")
            } else {
                CaseRun {
                    // Not the question head would have asked: counted as changed, not reused.
                    offered_hash: format!("carried:{}", b.offered_hash),
                    ..b.clone()
                }
            }
        })
        .collect();
    SideRun {
        cases,
        stats: asked.stats,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(tools: serde_json::Value) -> ToolSet {
        ToolSet::from_array(tools.as_array().unwrap(), "t.json", "").unwrap()
    }

    #[test]
    fn changed_tools_are_read_from_the_definitions() {
        let schema = |max: u64| json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": max}}});
        let base = set(json!([
            {"name": "a", "description": "A.", "inputSchema": schema(5)},
            {"name": "b", "description": "B.", "inputSchema": schema(5)},
            {"name": "old", "description": "O.", "inputSchema": schema(5)},
        ]));
        let head = set(json!([
            {"name": "a", "description": "A.", "inputSchema": schema(5)},
            {"name": "b", "description": "B.", "inputSchema": schema(6)},
            {"name": "new", "description": "O.", "inputSchema": schema(5)},
        ]));
        let changed: Vec<String> = changed_tools(&base, &head).into_iter().collect();
        assert_eq!(changed, ["b", "new", "old"]);
        assert!(changed_tools(&base, &base).is_empty());
    }
}
