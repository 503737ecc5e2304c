//! Server coherence: the spec's four set-level dimensions (Disambiguation, Naming Consistency,
//! Tool Count Appropriateness, Completeness), 1–5 each, equally weighted, rounded to one decimal.
//!
//! The spec has a model grade them. Offline, each is read off the set deterministically against
//! the spec's anchors — our estimate, said as such in every justification (`source: offline`):
//! - Disambiguation: how many confusable pairs [`super::pairs`] flagged;
//! - Naming Consistency: the share of names off the set's dominant case style;
//! - Tool Count: the spec's bands (3–15 well-scoped, 16–25 heavy, 26+ too many, 50+ extreme);
//! - Completeness: create/read/update/delete gaps per resource a tool creates.
//!
//! `--llm` replaces them with the model's grades and justifications.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::score;
use crate::text::tokens::name_tokens;
use crate::text::words::singular;
use crate::tools::ToolSet;

/// One dimension: the grade and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Dimension {
    pub score: u8,
    pub justification: String,
}

/// The four dimensions and their rounded mean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Coherence {
    /// `offline` (read off the set) or `model` (`--llm`).
    pub source: String,
    pub disambiguation: Dimension,
    pub naming_consistency: Dimension,
    pub tool_count_appropriateness: Dimension,
    pub completeness: Dimension,
    /// round1(mean of the four).
    pub score: f64,
    #[serde(deserialize_with = "super::llm::tier_name")]
    pub tier: super::llm::Tier,
    /// The model's overall assessment (`--llm` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl Coherence {
    pub fn new(source: &str, d: [Dimension; 4], summary: Option<String>) -> Coherence {
        let s = score::coherence([d[0].score, d[1].score, d[2].score, d[3].score]);
        let [a, b, c, e] = d;
        Coherence {
            source: source.to_string(),
            disambiguation: a,
            naming_consistency: b,
            tool_count_appropriateness: c,
            completeness: e,
            score: s,
            tier: score::tier(s),
            summary,
        }
    }

    pub fn dimensions(&self) -> [(&'static str, &Dimension); 4] {
        [
            ("disambiguation", &self.disambiguation),
            ("naming_consistency", &self.naming_consistency),
            (
                "tool_count_appropriateness",
                &self.tool_count_appropriateness,
            ),
            ("completeness", &self.completeness),
        ]
    }
}

/// The offline estimate for `tools`, given the confusable pairs lint flagged (as name pairs).
pub fn offline(tools: &ToolSet, flagged: &[(String, String)]) -> Coherence {
    Coherence::new(
        "offline",
        [
            disambiguation(flagged),
            naming(tools),
            tool_count(tools.len()),
            completeness(tools),
        ],
        None,
    )
}

fn dim(score: u8, justification: String) -> Dimension {
    Dimension {
        score,
        justification,
    }
}

fn disambiguation(flagged: &[(String, String)]) -> Dimension {
    let n = flagged.len();
    let score = match n {
        0 => 5,
        1..=2 => 4,
        3..=5 => 3,
        6..=10 => 2,
        _ => 1,
    };
    let shown: Vec<String> = flagged
        .iter()
        .take(3)
        .map(|(a, b)| format!("`{a}`/`{b}`"))
        .collect();
    let why = match n {
        0 => "no confusable pair flagged".to_string(),
        _ => format!(
            "{n} confusable pair(s) flagged: {}{}",
            shown.join(", "),
            if n > 3 { ", …" } else { "" }
        ),
    };
    dim(score, why)
}

/// A name's case style; `None` for a single lower-case word, which fits any style.
fn style(name: &str) -> Option<&'static str> {
    let upper = name.chars().any(char::is_uppercase);
    let under = name.contains('_');
    let dash = name.contains('-');
    Some(match (upper, under, dash) {
        (false, true, false) => "snake_case",
        (false, false, true) => "kebab-case",
        (false, false, false) => return None,
        (true, false, false) if name.starts_with(|c: char| c.is_lowercase()) => "camelCase",
        (true, false, false) => "PascalCase",
        _ => "mixed",
    })
}

fn naming(tools: &ToolSet) -> Dimension {
    let styles: Vec<Option<&str>> = tools.tools.iter().map(|t| style(&t.name)).collect();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for s in styles.iter().flatten() {
        *count.entry(s).or_default() += 1;
    }
    let dominant = count
        .iter()
        .max_by_key(|(s, n)| (**n, std::cmp::Reverse(**s)))
        .map(|(s, _)| *s);
    let off: Vec<&str> = tools
        .tools
        .iter()
        .zip(&styles)
        .filter(|(_, s)| s.is_some() && **s != dominant)
        .map(|(t, _)| t.name.as_str())
        .collect();
    // Single lower-case words fit any style: the share is of the names that have one.
    let styled = styles.iter().flatten().count();
    let share = off.len() as f64 / styled.max(1) as f64;
    let score = match share {
        0.0 => 5,
        s if s <= 0.10 => 4,
        s if s <= 0.25 => 3,
        s if s <= 0.50 => 2,
        _ => 1,
    };
    let why = match (dominant, off.len()) {
        (None, _) => "every name is one lower-case word".to_string(),
        (Some(d), 0) => format!("every name is {d}"),
        (Some(d), n) => format!(
            "{} of {styled} styled names are {d}; {n} are not: {}",
            styled - n,
            off.iter()
                .take(3)
                .map(|x| format!("`{x}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    dim(score, why)
}

fn tool_count(n: usize) -> Dimension {
    let (score, why) = match n {
        0 => (1, "no tools"),
        1 => (2, "a single tool: too few for most purposes"),
        2 => (3, "two tools: thin"),
        3..=15 => (5, "within the well-scoped 3–15"),
        16..=20 => (4, "slightly above the well-scoped 3–15"),
        21..=25 => (3, "heavy (16–25)"),
        26..=49 => (2, "too many (26+)"),
        _ => (1, "extreme (50+)"),
    };
    dim(score, format!("{n} tools: {why}"))
}

/// The CRUD class of a leading verb.
fn class(verb: &str) -> Option<usize> {
    const CLASSES: [&[&str]; 4] = [
        &[
            "create", "add", "insert", "new", "upload", "post", "write", "make",
        ],
        &[
            "get", "list", "read", "search", "find", "fetch", "query", "show", "view", "describe",
            "retrieve", "browse", "lookup",
        ],
        &[
            "update", "edit", "modify", "set", "patch", "rename", "move", "replace", "upsert",
        ],
        &[
            "delete", "remove", "drop", "destroy", "erase", "purge", "clear",
        ],
    ];
    CLASSES.iter().position(|c| c.contains(&verb))
}

fn completeness(tools: &ToolSet) -> Dimension {
    // resource → CRUD classes its tools cover.
    let mut seen: BTreeMap<String, [bool; 4]> = BTreeMap::new();
    for t in &tools.tools {
        let tokens = name_tokens(&t.name);
        let (Some(verb), Some(noun)) = (tokens.iter().find_map(|w| class(w)), tokens.last()) else {
            continue;
        };
        if class(noun).is_some() {
            continue;
        }
        seen.entry(singular(noun)).or_default()[verb] = true;
    }
    // Dead ends only: a created resource nothing reads back, or nothing deletes. A missing
    // update is often by design (append-only logs, immutable records).
    let mut gaps = Vec::new();
    for (r, c) in seen.iter().filter(|(_, c)| c[0]) {
        if !c[1] {
            gaps.push(format!("read {r}"));
        }
        if !c[3] {
            gaps.push(format!("delete {r}"));
        }
    }
    let score = match gaps.len() {
        0 => 5,
        1..=3 => 4,
        4..=6 => 3,
        7..=10 => 2,
        _ => 1,
    };
    let why = match gaps.len() {
        0 if seen.values().any(|c| c[0]) => {
            "every resource a tool creates can also be read and deleted".to_string()
        }
        0 => "no tool creates a resource: no lifecycle to complete".to_string(),
        n => format!(
            "{n} lifecycle gap(s) for created resources: no {}",
            gaps.iter()
                .take(4)
                .cloned()
                .collect::<Vec<_>>()
                .join(", no ")
        ),
    };
    dim(score, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(names: &[&str]) -> ToolSet {
        let v: Vec<serde_json::Value> = names
            .iter()
            .map(|n| json!({"name": n, "description": "d"}))
            .collect();
        ToolSet::from_array(&v, "t", "").unwrap()
    }

    #[test]
    fn the_spec_high_calibration_server_is_coherent() {
        // github-mcp, 10 tools, consistent verb_noun, distinct: the spec's HIGH case (4.8).
        let s = set(&[
            "list_repos",
            "get_repo",
            "create_repo",
            "search_code",
            "list_issues",
            "create_issue",
            "update_issue",
            "get_pull_request",
            "create_pull_request",
            "merge_pull_request",
        ]);
        let c = offline(&s, &[]);
        assert_eq!(c.disambiguation.score, 5);
        assert_eq!(c.naming_consistency.score, 5);
        assert_eq!(c.tool_count_appropriateness.score, 5);
        // No delete for repo, issue or pull request: minor gaps (the spec's completeness=4).
        assert_eq!(c.completeness.score, 4, "{:?}", c.completeness);
        assert_eq!((c.score, c.tier), (4.8, "A"));
    }

    #[test]
    fn the_spec_low_calibration_server_mixes_styles() {
        // utility-toolkit: process, run, execute, do_thing, helper, transform_data, processV2,
        // handleRequest — mixed styles (the spec's naming=2).
        let s = set(&[
            "process",
            "run",
            "execute",
            "do_thing",
            "helper",
            "transform_data",
            "processV2",
            "handleRequest",
        ]);
        let c = offline(&s, &[]);
        assert_eq!(c.naming_consistency.score, 2, "{:?}", c.naming_consistency);
        assert_eq!(c.tool_count_appropriateness.score, 5);
    }

    #[test]
    fn tool_count_bands_follow_the_spec_anchors() {
        let got: Vec<u8> = [1, 2, 3, 15, 16, 25, 26, 49, 50]
            .iter()
            .map(|n| tool_count(*n).score)
            .collect();
        assert_eq!(got, [2, 3, 5, 5, 4, 3, 2, 2, 1]);
    }

    #[test]
    fn disambiguation_and_completeness() {
        let f = |n: usize| -> Vec<(String, String)> {
            (0..n).map(|i| (format!("a{i}"), format!("b{i}"))).collect()
        };
        let got: Vec<u8> = [0, 2, 3, 6, 11]
            .iter()
            .map(|n| disambiguation(&f(*n)).score)
            .collect();
        assert_eq!(got, [5, 4, 3, 2, 1]);
        let c = completeness(&set(&[
            "create_note",
            "get_note",
            "update_note",
            "delete_note",
        ]));
        assert_eq!(c.score, 5);
        let c = completeness(&set(&["create_note", "get_notes"]));
        assert_eq!(c.score, 4);
        assert_eq!(
            c.justification,
            "1 lifecycle gap(s) for created resources: no delete note"
        );
        let c = completeness(&set(&["create_a", "create_b", "create_c", "list_a"]));
        assert_eq!(
            (c.score, c.justification.as_str()),
            (
                3,
                "5 lifecycle gap(s) for created resources: no delete a, no read b, no delete b, no read c"
            )
        );
        assert_eq!(completeness(&set(&["get_weather"])).score, 5);
    }
}
