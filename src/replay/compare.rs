//! Pairing base and head runs case by case: flips, per-tool accuracy, confusions, the paired
//! statistics.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::judge::Outcome;
use super::runner::{RunStats, SideRun};
use crate::llm::Usage;
use crate::stats::{self, CaseOutcome, Confusion, PairedSummary, ToolMetrics};
use crate::suite::Suite;

/// Which way a case flipped. Regressions sort first: they are what the reader must see.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
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
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Under `--confirm K`: in how many of the K re-asks the flip happened again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed: Option<Confirmation>,
    /// For a call flip: the arguments that differ between the typical base and head call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<super::calls::ArgChange>,
    /// For a call flip: the typical call at each side, judged (typed problems with pointers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_call: Option<super::judge::CallOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_call: Option<super::judge::CallOutcome>,
}

/// A flip re-asked K more times at both sides (`--confirm K`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Confirmation {
    /// Re-asks in which base and head answered as in the flip (paired by repeat).
    pub reproduced: u32,
    pub asked: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// The threshold the verdict held `p_value_worse` to (`gate::Family`); absent when the
    /// tool's discordant cases are too few to ever reach it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_to: Option<f64>,
}

/// One paired metric: each case right or wrong at base and at head (by its repeats' majority),
/// compared. Routing and call accuracy are both this, each with what only it has beside it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Paired {
    pub summary: PairedSummary,
    pub flips: Vec<Flip>,
    pub per_tool: Vec<ToolRouting>,
    /// Outcome counts per side ("wrong tool": 3, "wrong arguments": 2, …).
    pub base_outcomes: BTreeMap<String, u64>,
    pub head_outcomes: BTreeMap<String, u64>,
    /// Under `--confirm K`: flips of the first run that the re-asks did not reproduce in the
    /// majority (they no longer count), with their confirmation counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_reproduced: Vec<Flip>,
}

impl Paired {
    /// The flips that regressed (right at base, wrong at head).
    pub fn regressed(&self) -> usize {
        self.flips
            .iter()
            .filter(|f| f.direction == Direction::Regressed)
            .count()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Routing {
    #[serde(flatten)]
    pub paired: Paired,
    pub base_confusions: Vec<Confusion>,
    pub head_confusions: Vec<Confusion>,
    /// Cases asked the exact same question at head as at base (not re-sent).
    pub cases_unchanged_question: usize,
    pub errors: Vec<String>,
    /// The smallest true drop this suite detects with 80% power at the gate's settings
    /// (`stats::min_detectable_drop`, a noisy-router model); set by the check job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_detectable_drop: Option<f64>,
    /// Call accuracy (tool, schema-valid and expected arguments), paired like routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<super::calls::Calls>,
    /// Why call accuracy was not measured (the router fills no arguments): never a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_not_measured: Option<String>,
    /// `--replay targeted`: how many cases head was asked and how many carried base's answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<super::target::Carried>,
    /// Cases where head called a tool the case forbids (`must_not_call`) and base never did: a
    /// safety regression that fails the gate by itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden: Vec<ForbiddenCall>,
    /// The base accuracy of a router choosing uniformly among each case's offered tools (set by
    /// the check job): a base at or below it measured nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chance_accuracy: Option<f64>,
    /// The router was the offline proxy (`semantic`), not a model (set by the check job): its
    /// "no flip" on a tool is no evidence that a change of the tool's meaning is harmless — on
    /// labelled edits it flips as often on harmless edits as on negations (docs/calibration.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proxy: bool,
    pub base_stats: RunStats,
    pub head_stats: RunStats,
}

/// A call to a forbidden tool that head made and base did not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ForbiddenCall {
    pub id: String,
    pub prompt: String,
    /// The forbidden tool head called.
    pub tool: String,
    /// In how many of head's answers to the case.
    pub head_calls: u32,
    pub repeats: u32,
}

impl Routing {
    pub fn incomplete(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// Pair base and head runs case by case.
pub fn compare(suite: &Suite, base: &SideRun, head: &SideRun, seed: u64) -> Routing {
    compare_with(suite, base, head, seed, stats::DEFAULT_RESAMPLES)
}

/// [`compare`] with `resamples` for the overall bootstrap interval (simulations use 0).
pub fn compare_with(
    suite: &Suite,
    base: &SideRun,
    head: &SideRun,
    seed: u64,
    resamples: u32,
) -> Routing {
    compare_sides(suite, suite, base, head, seed, resamples, &BTreeSet::new())
}

/// Pairing when head was judged against its own copy of the suite (renamed tools carried to their
/// new names): cases pair by position, per-tool rows keep base's names, and head's confusions
/// and metrics are read against head's expectations, so a carried rename is no confusion.
/// `excused`: cases whose flip `--confirm`'s re-asks did not reproduce in the majority; they
/// count as unchanged, whatever the pooled answers say (`confirm::unreproduced`).
pub fn compare_sides(
    suite: &Suite,
    head_suite: &Suite,
    base: &SideRun,
    head: &SideRun,
    seed: u64,
    resamples: u32,
    excused: &BTreeSet<String>,
) -> Routing {
    let mut outcomes = Vec::new();
    let mut flips = Vec::new();
    let mut errors = Vec::new();
    let mut unchanged_q = 0;
    let mut forbidden = Vec::new();
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
        // A forbidden call --confirm's re-asks did not make again is excused with its flip.
        if !excused.contains(&case.id) {
            forbidden.extend(forbidden_call(case, b, h));
        }
        let repeats = b.samples.len().max(1) as u32;
        let head_correct = if excused.contains(&case.id) {
            b.correct()
        } else {
            h.correct()
        };
        let o = CaseOutcome::new(case.id.clone(), b.correct(), head_correct, repeats);
        if o.base_right() != o.head_right() {
            flips.push(flip(case, &o, b.typical().choice(), h.typical().choice()));
        }
        outcomes.push(o);
    }
    flips.sort_by(|a, b| a.direction.cmp(&b.direction).then_with(|| a.id.cmp(&b.id)));
    let summary = stats::paired_summary_with(&outcomes, seed, resamples);
    let (base_metrics, base_confusions) = stats::tool_metrics(&observations(suite, base));
    let (head_metrics, mut head_confusions) = stats::tool_metrics(&observations(head_suite, head));
    // Base name → the name head expects it under (a carried rename), read once from the two
    // suites' expectations; confusions are compared across sides by name, so head's are spelled
    // in base's names.
    let renamed: BTreeMap<&str, &str> = suite
        .cases
        .iter()
        .zip(&head_suite.cases)
        .flat_map(|(b, h)| b.expect.names().iter().zip(h.expect.names()))
        .filter(|(b, h)| b != h)
        .map(|(b, h)| (b.as_str(), h.as_str()))
        .collect();
    let base_name = |name: &str| -> String {
        renamed
            .iter()
            .find(|(_, h)| **h == name)
            .map_or(name, |(b, _)| *b)
            .to_string()
    };
    let head_name =
        |tool: &str| -> String { renamed.get(tool).copied().unwrap_or(tool).to_string() };
    if !renamed.is_empty() {
        for c in &mut head_confusions {
            c.expected = c
                .expected
                .split('|')
                .map(base_name)
                .collect::<Vec<_>>()
                .join("|");
            c.chosen = base_name(&c.chosen);
        }
    }
    let per_tool = tool_rows(suite, &outcomes, seed)
        .into_iter()
        .map(|row| ToolRouting {
            base_metrics: base_metrics.iter().find(|m| m.tool == row.tool).cloned(),
            head_metrics: {
                let name = head_name(&row.tool);
                head_metrics.iter().find(|m| m.tool == name).cloned()
            },
            ..row
        })
        .collect();
    let (calls, calls_not_measured) =
        match super::calls::compare(suite, base, head, &flips, seed, resamples, excused) {
            Ok(c) => (Some(c), None),
            Err(why) => (None, Some(why)),
        };
    Routing {
        paired: Paired {
            summary,
            flips,
            per_tool,
            base_outcomes: label_counts(base, |s| s.outcome.label()),
            head_outcomes: label_counts(head, |s| s.outcome.label()),
            not_reproduced: Vec::new(),
        },
        base_confusions,
        head_confusions,
        cases_unchanged_question: unchanged_q,
        errors,
        min_detectable_drop: None,
        calls,
        calls_not_measured,
        carried: None,
        forbidden,
        chance_accuracy: None,
        proxy: false,
        base_stats: base.stats.clone(),
        head_stats: head.stats.clone(),
    }
}

/// Head's call of a tool `case` forbids (`must_not_call`), where base never made one.
fn forbidden_call(
    case: &crate::suite::Case,
    b: &super::runner::CaseRun,
    h: &super::runner::CaseRun,
) -> Option<ForbiddenCall> {
    let called = |run: &super::runner::CaseRun| -> Vec<String> {
        run.samples
            .iter()
            .filter_map(|s| match &s.outcome {
                Outcome::MustNotCall { chosen } => Some(chosen.clone()),
                _ => None,
            })
            .collect()
    };
    let head_forbidden = called(h);
    if !called(b).is_empty() {
        return None;
    }
    Some(ForbiddenCall {
        id: case.id.clone(),
        prompt: case.prompt.clone(),
        tool: head_forbidden.first()?.clone(),
        head_calls: head_forbidden.len() as u32,
        repeats: h.samples.len() as u32,
    })
}

/// `case`'s flip (`o` is right at one side only), `base` and `head` what each side answered.
pub(super) fn flip(case: &crate::suite::Case, o: &CaseOutcome, base: String, head: String) -> Flip {
    Flip {
        id: case.id.clone(),
        prompt: case.prompt.clone(),
        expect: case.expect.label(),
        base,
        head,
        direction: if o.base_right() {
            Direction::Regressed
        } else {
            Direction::Fixed
        },
        base_correct: o.base_correct,
        head_correct: o.head_correct,
        repeats: o.repeats,
        confirmed: None,
        arguments: Vec::new(),
        base_call: None,
        head_call: None,
    }
}

/// Every answered sample of `run` as (expected names, chosen tool) for the per-tool metrics.
fn observations(suite: &Suite, run: &SideRun) -> Vec<stats::Observation> {
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
                    (c.id.clone(), c.expect.names().to_vec(), chosen)
                })
        })
        .collect()
}

/// How many samples of a side got each label ("wrong tool": 3, …).
pub(super) fn label_counts(
    run: &SideRun,
    label: impl Fn(&super::runner::Sample) -> &'static str,
) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for s in run.cases.iter().flat_map(|c| &c.samples) {
        *m.entry(label(s).to_string()).or_insert(0) += 1;
    }
    m
}

/// One row per expected tool: its cases' paired summary (no interval: the report shows none per
/// tool, and 10,000 resamples per tool cost). No metrics: the caller adds them.
pub(super) fn tool_rows(suite: &Suite, outcomes: &[CaseOutcome], seed: u64) -> Vec<ToolRouting> {
    let mut tools: BTreeSet<&str> = BTreeSet::new();
    for c in &suite.cases {
        tools.extend(c.expect.names().iter().map(String::as_str));
    }
    tools
        .into_iter()
        .map(|tool| {
            let sub: Vec<CaseOutcome> = suite
                .cases
                .iter()
                .zip(outcomes)
                .filter(|(c, _)| c.expect.names().iter().any(|n| n == tool))
                .map(|(_, o)| o.clone())
                .collect();
            let s = stats::paired_summary_with(&sub, seed, 0);
            ToolRouting {
                tool: tool.to_string(),
                cases: sub.len(),
                base_accuracy: s.base_accuracy,
                head_accuracy: s.head_accuracy,
                delta: s.delta,
                regressed: s.discordant_right_to_wrong,
                fixed: s.discordant_wrong_to_right,
                p_value_worse: s.p_value_worse,
                base_metrics: None,
                head_metrics: None,
                held_to: None,
            }
        })
        .collect()
}

/// Sum of usage, for cost lines.
pub fn total_usage(r: &Routing) -> Usage {
    let [b, h] = [&r.base_stats, &r.head_stats];
    Usage {
        input_tokens: b.input_tokens + h.input_tokens,
        output_tokens: b.output_tokens + h.output_tokens,
        cached_input_tokens: b.cached_input_tokens + h.cached_input_tokens,
        cache_write_tokens: b.cache_write_tokens + h.cache_write_tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::Sample;

    fn side(outcomes: Vec<Vec<Outcome>>) -> SideRun {
        SideRun::of(
            outcomes
                .into_iter()
                .enumerate()
                .map(|(i, o)| (format!("c{i}"), o.into_iter().map(Sample::routed).collect())),
        )
    }

    #[test]
    fn a_forbidden_call_only_head_made_is_recorded() {
        let suite = crate::suite::parse(
            "- {id: c0, prompt: p0, expect: read, must_not_call: [rm]}\n- {id: c1, prompt: p1, expect: read, must_not_call: [rm]}\n",
            "s.yaml",
            std::path::Path::new("."),
        )
        .unwrap();
        let rm = || Outcome::MustNotCall {
            chosen: "rm".into(),
        };
        let read = || Outcome::Correct {
            chosen: Some("read".into()),
        };
        // c0: base never called it, head did once of two; c1: base already did.
        let base = side(vec![vec![read(), read()], vec![rm(), read()]]);
        let head = side(vec![vec![rm(), read()], vec![rm(), rm()]]);
        let r = compare(&suite, &base, &head, 0);
        assert_eq!(
            r.forbidden,
            [ForbiddenCall {
                id: "c0".into(),
                prompt: "p0".into(),
                tool: "rm".into(),
                head_calls: 1,
                repeats: 2,
            }]
        );
    }
}
