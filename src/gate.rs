//! The verdict: thresholds applied to what was measured. Thresholds are data (`Thresholds`), the
//! decision is one function per command, and "incomplete" always outranks "pass".

use serde::{Deserialize, Serialize};

use crate::diff::{Diff, Severity};
use crate::error::exit;
use crate::injection::{FailOn, ScanSection};
use crate::lint::{Level, LintDelta, LintSection};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    /// Measured, but not enough evidence either way: a large drop on too few cases, or a base
    /// at or below chance. Never a pass.
    Inconclusive,
    Incomplete,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub status: Status,
    /// The one sentence (with the number) that decided it.
    pub reason: String,
    /// Every other finding of the same weight, in order (the reason is the first): nothing
    /// behind a "+N more".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// What did not decide the verdict but a reviewer should see: drops beyond the tolerance
    /// too small or too noisy to call, behind an inconclusive or failing verdict the lines it
    /// outranked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The tool and metric the reason is about, when one tool's drop decided it: renderers
    /// read this instead of parsing the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<Decider>,
    /// What the gate ruled about each tool (a drop that fails, a low cosine that fails or is
    /// left to review), whatever the status: renderers list these and never re-decide.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rulings: Vec<Ruling>,
}

/// The gate's ruling on one tool by one metric, with its sentence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ruling {
    pub tool: String,
    pub metric: Metric,
    pub outcome: Outcome,
    pub message: String,
}

/// What a ruling does to the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The tool fails the gate on this metric.
    Fail,
    /// Left to a reviewer: a low cosine on a tool routing measured and decided.
    Review,
}

/// What one tool's line in a verdict measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Decider {
    pub tool: String,
    pub metric: Metric,
}

/// The paired metric a tool's line is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Whether the router picked the expected tool.
    Routing,
    /// Whether the call was right, tool and arguments.
    Calls,
    /// What the description's words say the tool does (`diff::shift`).
    Meaning,
    /// How far the description's embedding moved (the cosine floor).
    Cosine,
}

impl Metric {
    /// What the gate's sentences call it.
    pub fn noun(self) -> &'static str {
        match self {
            Metric::Routing => "routing",
            Metric::Calls => "call accuracy",
            Metric::Meaning => "meaning",
            Metric::Cosine => "cosine",
        }
    }

    /// What an accuracy line calls it: "routing accuracy", "call accuracy".
    pub fn accuracy(self) -> &'static str {
        match self {
            Metric::Routing => "routing accuracy",
            _ => self.noun(),
        }
    }
}

/// One line of a verdict, with the tool and metric it is about where it is about one.
struct Line {
    text: String,
    about: Option<Decider>,
}

impl From<String> for Line {
    fn from(text: String) -> Line {
        Line { text, about: None }
    }
}

impl Line {
    fn about(text: String, tool: &str, metric: Metric) -> Line {
        Line {
            text,
            about: Some(Decider {
                tool: tool.to_string(),
                metric,
            }),
        }
    }
}

impl Verdict {
    pub fn exit_code(&self) -> i32 {
        match self.status {
            Status::Pass => exit::PASS,
            Status::Fail => exit::FAIL,
            Status::Inconclusive => exit::INCONCLUSIVE,
            Status::Incomplete => exit::INCOMPLETE,
        }
    }

    pub fn new(status: Status, reason: impl Into<String>) -> Verdict {
        Verdict {
            status,
            reason: reason.into(),
            also: Vec::new(),
            warnings: Vec::new(),
            decided_by: None,
            rulings: Vec::new(),
        }
    }
}

/// The severity law's verdict: fail when any change is at or above `fail_on`. A description whose
/// meaning moved counts here as the description change it also is (`Change::text_severity`):
/// `meaning_calls` gives its meaning its own line, with what routing measured of the tool.
pub fn diff_verdict(diff: &Diff, fail_on: Severity) -> Verdict {
    let at_or_above: Vec<_> = diff
        .changes()
        .filter(|(_, c)| c.text_severity() >= fail_on)
        .collect();
    if at_or_above.is_empty() {
        let total = diff.changes().count();
        let worst = diff
            .changes()
            .map(|(_, c)| c.text_severity())
            .max()
            .map(|s| format!(", worst {}", s.as_str()))
            .unwrap_or_default();
        Verdict::new(
            Status::Pass,
            format!(
                "no change at or above {} ({total} change(s){worst})",
                fail_on.as_str()
            ),
        )
    } else {
        let (tool, first) = at_or_above[0];
        Verdict::new(
            Status::Fail,
            format!(
                "{} change(s) at or above {}; first: {} `{}` {}",
                at_or_above.len(),
                fail_on.as_str(),
                first.text_severity().as_str(),
                tool.name,
                first.rule
            ),
        )
    }
}

/// What a description below the cosine floor does to the verdict.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum CosinePolicy {
    /// Always fails (the proxy decides).
    Fail,
    /// Never fails; a review note. The default: at the bundled model's calibrated floor the cosine
    /// catches fewer meaning-changing edits (3.7%) than it fails meaning-preserving ones (4.9%),
    /// so it is reported as drift and gates only when asked (docs/calibration.md); the meaning
    /// shifts (`diff::shift`) gate instead.
    #[default]
    Review,
    /// Behaviour over proxy: where the suite measured the tool on at least `min_cases` of its own
    /// cases, routing decides and the low cosine is a review note; elsewhere the floor fails.
    Auto,
}

/// What a description whose words show its meaning moved (`diff::shift`) does to the verdict.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MeaningPolicy {
    /// Fails (at or above `fail_on`; the law rates it `high`), with what routing measured of the
    /// tool beside it.
    #[default]
    Fail,
    /// Never fails; a warning line.
    Review,
}

impl crate::choice::Choice for MeaningPolicy {
    const ALL: &'static [Self] = &[MeaningPolicy::Fail, MeaningPolicy::Review];
    fn name(self) -> &'static str {
        match self {
            MeaningPolicy::Fail => "fail",
            MeaningPolicy::Review => "review",
        }
    }
}

impl crate::choice::Choice for CosinePolicy {
    const ALL: &'static [Self] = &[CosinePolicy::Review, CosinePolicy::Auto, CosinePolicy::Fail];
    fn name(self) -> &'static str {
        match self {
            CosinePolicy::Fail => "fail",
            CosinePolicy::Review => "review",
            CosinePolicy::Auto => "auto",
        }
    }
}

fn default_alpha() -> f64 {
    0.035
}

fn default_min_cases() -> usize {
    3
}

/// The thresholds `check` applies; from flags, `driftgate.toml`, or these defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckThresholds {
    pub fail_on: Severity,
    /// `None`: the embedding model's calibrated floor (`cosine::floors`); the report's
    /// `drift.floor` is the floor applied.
    #[serde(default)]
    pub cosine_floor: Option<f64>,
    /// Largest tolerated accuracy drop (fraction, 0.02 = 2 points), overall and per tool.
    pub tolerance: f64,
    /// Largest tolerated call-accuracy drop (tool and arguments); `None`: `tolerance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_tolerance: Option<f64>,
    /// The overall drop fails only if its exact one-sided p-value is also below this (one net
    /// flip on a 36-case suite is noise, not a regression). `None`: tolerance only.
    /// The defaults split one 5% false-alarm budget (Bonferroni): 1.5% for the overall test, 3.5%
    /// for the per-tool family, so a PR with no true change fails at most 5% of the time at any
    /// base accuracy, and a changed tool's drop keeps most of the budget (it is the hypothesis
    /// the diff names in advance).
    pub require_significance: Option<f64>,
    /// A per-tool drop fails only if its exact one-sided p-value is below this (Holm over the
    /// changed tools).
    #[serde(default = "default_alpha")]
    pub per_tool_alpha: f64,
    /// Own cases a tool needs in the suite for routing to decide over its cosine (`auto`).
    #[serde(default = "default_min_cases")]
    pub min_cases: usize,
    #[serde(default)]
    pub cosine: CosinePolicy,
    /// What a description whose meaning moved (`diff::shift`) does.
    #[serde(default)]
    pub meaning: MeaningPolicy,
    /// Base accuracy at or below this measures nothing (a wrong model, endpoint or suite): the
    /// verdict is inconclusive. `None`: chance for the offered tools. A base of 0% is incomplete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_base_accuracy: Option<f64>,
    /// An injection-scan finding the PR introduced at or above this fails the gate.
    #[serde(default)]
    pub scan_fail_on: FailOn,
    /// A drop at least this large (fraction) that the evidence cannot call — overall, or of a tool
    /// the PR changed — makes the verdict inconclusive (exit 4); smaller unproven drops beyond
    /// the tolerance are warnings. 1 turns inconclusive drops into warnings.
    #[serde(default = "default_inconclusive_drop")]
    pub inconclusive_drop: f64,
}

fn default_inconclusive_drop() -> f64 {
    0.25
}

impl Default for CheckThresholds {
    fn default() -> Self {
        CheckThresholds {
            fail_on: Severity::High,
            cosine_floor: None,
            tolerance: 0.02,
            args_tolerance: None,
            require_significance: Some(0.015),
            per_tool_alpha: 0.035,
            min_cases: 3,
            cosine: CosinePolicy::Review,
            meaning: MeaningPolicy::Fail,
            min_base_accuracy: None,
            scan_fail_on: FailOn::High,
            inconclusive_drop: 0.25,
        }
    }
}

impl CheckThresholds {
    /// The tolerance applied to call accuracy.
    pub fn args_tolerance(&self) -> f64 {
        self.args_tolerance.unwrap_or(self.tolerance)
    }
}

fn pts(x: f64) -> String {
    format!("{:+.1} pts", x * 100.0)
}

/// A size in points, unsigned: a tolerance is not a change.
fn magnitude(x: f64) -> String {
    format!("{:.1} pts", x.abs() * 100.0)
}

/// Why a replay measured nothing, if it did not: the router was never right at base, so no drop
/// can show at head. An endpoint that answers garbage, a model that never calls tools or a suite
/// for other tools all look like this; a pass would be a lie.
fn nothing_measured(r: &crate::replay::Routing) -> Option<String> {
    let s = &r.paired.summary;
    (s.n_cases > 0 && s.base_accuracy == 0.0).then(|| {
        format!(
            "nothing was measured: the router was right on 0 of {} case(s) at base; check the model, the endpoint and the suite — incomplete, not a pass",
            s.n_cases
        )
    })
}

/// Why base is too weak to measure anything, if it is: at or below `min_base_accuracy`, or
/// (unset) at or below what a router choosing uniformly among each case's offered tools would
/// score. A drop from chance says nothing about the PR: inconclusive, not a pass.
fn at_chance(r: &crate::replay::Routing, t: &CheckThresholds) -> Option<String> {
    let s = &r.paired.summary;
    let (floor, what) = match (t.min_base_accuracy, r.chance_accuracy) {
        (Some(m), _) => (m, "min_base_accuracy"),
        (None, Some(c)) => (c, "what a router that ignores the prompt scores"),
        (None, None) => return None,
    };
    (s.n_cases > 0 && s.base_accuracy <= floor).then(|| {
        let right = (s.base_accuracy * s.n_cases as f64).round() as u64;
        format!(
            "the router was right on {right} of {} case(s) at base ({:.1}%), at or below {what} ({:.1}%): routing measured nothing about this PR; check the model and the suite, or set [gate] min_base_accuracy",
            s.n_cases,
            s.base_accuracy * 100.0,
            floor * 100.0
        )
    })
}

/// Why call accuracy measured nothing, if it did not: routing was right at base but no call
/// was (every expected argument missed, or every call broke its schema), so no argument drop can
/// show. A suite whose `args` no model meets looks like this.
fn no_call_measured(r: &crate::replay::Routing) -> Option<String> {
    let c = r.calls.as_ref()?;
    let s = &c.paired.summary;
    (s.n_cases > 0 && s.base_accuracy == 0.0 && r.paired.summary.base_accuracy > 0.0).then(|| {
        format!(
            "call accuracy measured nothing: no call of {} case(s) was right at base (routing was {:.1}%); check the suite's `args` and the tools' schemas — incomplete, not a pass",
            s.n_cases,
            r.paired.summary.base_accuracy * 100.0
        )
    })
}

/// The paired metrics `r` measured, each with its name: routing, then call accuracy where it
/// was measured.
pub fn metrics(r: &crate::replay::Routing) -> Vec<(Metric, &crate::replay::Paired)> {
    let mut out = vec![(Metric::Routing, &r.paired)];
    out.extend(r.calls.as_ref().map(|c| (Metric::Calls, &c.paired)));
    out
}

/// The metric whose tests decide: call accuracy where it was measured (a right call is a right
/// route with right arguments, so a routing drop is a call drop too), routing otherwise.
pub fn family_metric(r: &crate::replay::Routing) -> (Metric, &crate::replay::Paired) {
    *metrics(r).last().expect("routing is always measured")
}

impl CheckThresholds {
    /// The tolerance `metric`'s drops are held to.
    pub fn tolerance_of(&self, metric: Metric) -> f64 {
        match metric {
            Metric::Calls => self.args_tolerance(),
            _ => self.tolerance,
        }
    }
}

/// Does `metric`'s overall drop fail the gate?
///
/// Where calls are measured the gate tests **one** family, call accuracy: testing routing and
/// calls side by side at the same alphas would add their false alarms (5.9% at 80% base accuracy
/// with 20% argument noise, tests/it/gate_simulation.rs). Routing's own test only names which
/// metric decided: **routing** fails when its drop fails and the call drop fails too (or calls
/// were not measured); **call accuracy** fails when its drop fails and routing's does not (the
/// arguments decided). A drop fails beyond its tolerance, and significant.
pub fn overall_fails(r: &crate::replay::Routing, metric: Metric, t: &CheckThresholds) -> bool {
    let own = |m: Metric, p: &crate::replay::Paired| drop_fails(&p.summary, t.tolerance_of(m), t);
    let routing = own(Metric::Routing, &r.paired);
    let calls = r.calls.as_ref().map(|c| own(Metric::Calls, &c.paired));
    match metric {
        Metric::Routing => routing && calls.unwrap_or(true),
        Metric::Calls => calls.unwrap_or(false) && !routing,
        Metric::Meaning | Metric::Cosine => false,
    }
}

/// Does an overall drop fail at `tolerance`? Beyond it, and significant.
fn drop_fails(s: &crate::stats::PairedSummary, tolerance: f64, t: &CheckThresholds) -> bool {
    s.delta < -tolerance && t.require_significance.is_none_or(|a| s.p_value_worse < a)
}

/// The tools whose `metric` drop fails. The family is the suite's tools, fixed by the base side
/// before anything is measured, never by what the PR touched — so an unrelated edit cannot
/// dilute a regression (the "Get" → "Retrieve" laundering) — and Tarone's reduction for discrete
/// tests keeps it powerful: a tool whose routing moved on too few cases to ever reach
/// significance cannot spend the budget ([`Family`], docs/verdict.md). As for the overall drop
/// ([`overall_fails`]), where calls are measured a tool fails on its call accuracy: it is listed
/// under **routing** when its routing fails as well, under **call accuracy** when it does not.
pub fn failing<'a>(
    r: &'a crate::replay::Routing,
    metric: Metric,
    t: &CheckThresholds,
) -> Vec<&'a crate::replay::ToolRouting> {
    let rows =
        |m: Metric, p: &'a crate::replay::Paired| failing_rows(&p.per_tool, t, t.tolerance_of(m));
    let routing = rows(Metric::Routing, &r.paired);
    let calls = r.calls.as_ref().map(|c| rows(Metric::Calls, &c.paired));
    let listed =
        |rows: &[&crate::replay::ToolRouting], tool: &str| rows.iter().any(|c| c.tool == tool);
    match (metric, calls) {
        (Metric::Routing, None) => routing,
        (Metric::Routing, Some(calls)) => routing
            .into_iter()
            .filter(|x| listed(&calls, &x.tool))
            .collect(),
        (Metric::Calls, Some(calls)) => calls
            .into_iter()
            .filter(|x| !listed(&routing, &x.tool))
            .collect(),
        _ => Vec::new(),
    }
}

/// The per-tool test family: every tool the suite expects, at `per_tool_alpha` split by
/// Tarone's modified Bonferroni for discrete tests (Tarone 1990). A sign test on `n` discordant
/// cases can never reach a p-value below 2⁻ⁿ, so a tool whose smallest attainable p-value is above
/// the threshold is not a hypothesis that can spend the budget: the threshold is α/K for the
/// smallest K such that at most K tools can attain α/K. The test is conditional on each tool's
/// discordant count, which is how the sign test is exact, so the false-alarm bound holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family {
    /// The threshold every testable tool's p-value is held to: `per_tool_alpha / size`.
    pub threshold: f64,
    /// K: the tools whose discordant cases could reach the threshold.
    pub size: usize,
}

impl Family {
    pub fn of(rows: &[crate::replay::ToolRouting], alpha: f64) -> Family {
        let min_p = |x: &crate::replay::ToolRouting| 0.5f64.powi((x.regressed + x.fixed) as i32);
        let mut k = 1;
        loop {
            let threshold = alpha / k as f64;
            let testable = rows.iter().filter(|x| min_p(x) <= threshold).count();
            if testable <= k {
                return Family { threshold, size: k };
            }
            k += 1;
        }
    }

    /// The threshold `row`'s p-value is held to, or `None` when its discordant cases are too
    /// few to ever reach it (it is not in the family).
    pub fn held_to(&self, row: &crate::replay::ToolRouting) -> Option<f64> {
        (0.5f64.powi((row.regressed + row.fixed) as i32) <= self.threshold)
            .then_some(self.threshold)
    }
}

fn failing_rows<'a>(
    rows: &'a [crate::replay::ToolRouting],
    t: &CheckThresholds,
    tolerance: f64,
) -> Vec<&'a crate::replay::ToolRouting> {
    let family = Family::of(rows, t.per_tool_alpha);
    rows.iter()
        .filter(|x| {
            family
                .held_to(x)
                .is_some_and(|a| x.p_value_worse < a && x.delta < -tolerance)
        })
        .collect()
}

/// Each row's threshold (`ToolRouting::held_to`), set once by the job so every format prints the
/// threshold the verdict used.
pub fn hold(r: &mut crate::replay::Routing, t: &CheckThresholds) {
    let mark = |rows: &mut [crate::replay::ToolRouting]| {
        let family = Family::of(rows, t.per_tool_alpha);
        for row in rows.iter_mut() {
            row.held_to = family.held_to(row);
        }
    };
    mark(&mut r.paired.per_tool);
    if let Some(c) = r.calls.as_mut() {
        mark(&mut c.paired.per_tool);
    }
}

/// What a description below the floor does.
#[derive(Debug, Clone, PartialEq)]
pub enum CosineCall {
    Pass,
    Fail(String),
    Review(String),
}

/// Behaviour over proxy (`CosinePolicy`): a low cosine fails only where routing did not measure
/// the tool on enough of its own cases.
pub fn cosine_call(
    td: &crate::cosine::ToolDrift,
    floor: f64,
    routing: Option<&crate::replay::Routing>,
    t: &CheckThresholds,
) -> CosineCall {
    let low_params: Vec<&crate::cosine::ParamDrift> =
        td.params.iter().filter(|p| p.below_floor).collect();
    if !td.below_floor && low_params.is_empty() {
        return CosineCall::Pass;
    }
    let mut parts = Vec::new();
    if td.below_floor {
        parts.push(format!("description cosine {:.3}", td.description_cosine));
    }
    for p in &low_params {
        parts.push(format!(
            "parameter `{}` description cosine {:.3}",
            p.name, p.cosine
        ));
    }
    let base = format!("`{}` {} < floor {:.2}", td.tool, parts.join(", "), floor);
    let covered = routing.and_then(|r| r.paired.per_tool.iter().find(|x| x.tool == td.tool));
    match t.cosine {
        CosinePolicy::Fail => CosineCall::Fail(base),
        CosinePolicy::Review => CosineCall::Review(format!("{base}: review the wording")),
        CosinePolicy::Auto => match (routing, covered) {
            (None, _) => CosineCall::Fail(base),
            (Some(_), Some(c)) if c.cases >= t.min_cases => CosineCall::Review(format!(
                "{base}, but routing measured it on {} case(s) ({:.1}% → {:.1}%): routing decides; review the wording",
                c.cases,
                c.base_accuracy * 100.0,
                c.head_accuracy * 100.0
            )),
            (Some(_), c) => {
                let have = c.map_or(0, |c| c.cases);
                CosineCall::Fail(format!(
                    "{base} (not covered by the suite: {} more case(s) expecting it would let routing decide)",
                    t.min_cases - have
                ))
            }
        },
    }
}

/// The review notes of a check: low cosines that routing overruled (`CosinePolicy`).
pub fn review_notes(
    drift: Option<&crate::cosine::Drift>,
    routing: Option<&crate::replay::Routing>,
    t: &CheckThresholds,
) -> Vec<String> {
    let Some(d) = drift else { return Vec::new() };
    d.tools
        .iter()
        .filter_map(|td| match cosine_call(td, d.floor, routing, t) {
            CosineCall::Review(m) => Some(m),
            _ => None,
        })
        .collect()
}

/// What the meaning shifts of one check say: failing lines, and review notes where behaviour
/// decided instead.
#[derive(Default)]
struct MeaningCalls {
    fail: Vec<Line>,
    review: Vec<String>,
}

/// Descriptions whose words show their meaning moved (`diff::shift`), at or above `fail_on`: one
/// line per tool, with what routing measured of it. Behaviour over proxy: where a model (not the
/// offline proxy) was asked the tool's own cases, at least `min_cases` of them, and none
/// regressed, the measurement decides and the shift is a review note. Elsewhere the shift fails:
/// on the held-out half of the labelled edit benchmark the rules catch most meaning changes at a
/// false-alarm rate far below the offline router's own flip rate on harmless edits
/// (docs/calibration.md), so that router's "no flip" is no evidence of no harm.
fn meaning_calls(
    diff: &Diff,
    routing: Option<&crate::replay::Routing>,
    t: &CheckThresholds,
) -> MeaningCalls {
    let mut out = MeaningCalls::default();
    for tool in &diff.tools {
        let moved: Vec<String> = tool
            .changes
            .iter()
            .filter(|c| !c.shifts.is_empty() && c.severity >= t.fail_on)
            .flat_map(|c| c.shifts.iter())
            .map(|s| format!("{} {}", s.rule.id(), s.detail))
            .collect();
        if moved.is_empty() {
            continue;
        }
        let row = routing.and_then(|r| r.paired.per_tool.iter().find(|x| x.tool == tool.name));
        let measured = match (routing, row) {
            (None, _) => String::new(),
            (Some(_), None) => "; no suite case expects it".to_string(),
            (Some(_), Some(x)) => format!(
                "; routing on its {} case(s): {:.1}% → {:.1}% ({} regressed, {} fixed)",
                x.cases,
                x.base_accuracy * 100.0,
                x.head_accuracy * 100.0,
                x.regressed,
                x.fixed
            ),
        };
        let line = format!(
            "`{}`'s description changed meaning: {}{measured}",
            tool.name,
            moved.join("; ")
        );
        let behaviour = routing.is_some_and(|r| !r.proxy)
            && row.is_some_and(|x| x.cases >= t.min_cases && x.regressed == 0);
        if behaviour {
            out.review.push(format!(
                "{line}: the model's routing decides; review the wording"
            ));
        } else {
            out.fail
                .push(Line::about(line, &tool.name, Metric::Meaning));
        }
    }
    out
}

/// The introduced scan findings that fail the gate, as one failure line each (worst first).
fn scan_failures(scan: Option<&ScanSection>, fail_on: FailOn) -> Vec<String> {
    scan.map(|s| s.failing(fail_on))
        .unwrap_or_default()
        .into_iter()
        .map(|f| f.introduced())
        .collect()
}

/// `check --lint-llm`: a grade the model never gave leaves the check incomplete, whatever the
/// rest says (a failed measurement never reads as a pass). An already incomplete verdict keeps
/// its own reason.
pub fn with_lint_model(verdict: Verdict, lint: Option<&LintDelta>) -> Verdict {
    let errors = lint
        .and_then(|l| l.llm.as_ref())
        .map(|m| m.errors.as_slice())
        .unwrap_or_default();
    match errors.first() {
        Some(e) if verdict.status != Status::Incomplete => Verdict::new(
            Status::Incomplete,
            format!(
                "--lint-llm: the model could not grade {} part(s) of the sides (first: {e}); the measurement is incomplete, not a pass; without it: {}",
                errors.len(),
                verdict.reason
            ),
        ),
        _ => verdict,
    }
}

/// `driftgate check` and `diff`: incomplete outranks everything; then fail (an injected
/// instruction or a forbidden call the PR introduced, then routing — the ground truth — then
/// meaning drift, then the schema law); then inconclusive (a large drop the suite is too small to
/// call, a base at chance); then pass. The reason names the deciding number; `also` holds the
/// other findings of the same weight, `warnings` the rest.
pub fn check_verdict(
    diff: &Diff,
    drift: Option<&crate::cosine::Drift>,
    routing: Option<&crate::replay::Routing>,
    scan: Option<&ScanSection>,
    t: &CheckThresholds,
) -> Verdict {
    let meaning = meaning_calls(diff, routing, t);
    let meaning_rulings: Vec<Ruling> = meaning
        .fail
        .iter()
        .filter_map(|l| {
            l.about.as_ref().map(|about| Ruling {
                tool: about.tool.clone(),
                metric: Metric::Meaning,
                outcome: Outcome::Fail,
                message: l.text.clone(),
            })
        })
        .collect();
    let mut v = decide(diff, drift, routing, scan, t, meaning);
    v.rulings = rulings(drift, routing, t);
    // A meaning line fails only when it reached the verdict's failures.
    if v.status == Status::Fail && matches!(t.meaning, MeaningPolicy::Fail) {
        v.rulings.extend(meaning_rulings);
    }
    v
}

/// Each tool's ruling: a routing or call drop that fails its family, a low cosine that fails or
/// is left to review. Kept whatever the status, as the tables show them.
fn rulings(
    drift: Option<&crate::cosine::Drift>,
    routing: Option<&crate::replay::Routing>,
    t: &CheckThresholds,
) -> Vec<Ruling> {
    let mut out = Vec::new();
    let drop = |what: &str, x: &crate::replay::ToolRouting| {
        format!(
            "{what} {:.1}% → {:.1}% ({:+.1} pts, p={:.4})",
            x.base_accuracy * 100.0,
            x.head_accuracy * 100.0,
            x.delta * 100.0,
            x.p_value_worse
        )
    };
    if let Some(r) = routing {
        for (metric, _) in metrics(r) {
            out.extend(failing(r, metric, t).into_iter().map(|x| Ruling {
                tool: x.tool.clone(),
                metric,
                outcome: Outcome::Fail,
                message: drop(metric.noun(), x),
            }));
        }
    }
    for td in drift
        .iter()
        .flat_map(|d| d.tools.iter().map(move |td| (d, td)))
    {
        let (outcome, message) = match cosine_call(td.1, td.0.floor, routing, t) {
            CosineCall::Pass => continue,
            CosineCall::Fail(m) => (Outcome::Fail, m),
            CosineCall::Review(m) => (Outcome::Review, m),
        };
        out.push(Ruling {
            tool: td.1.tool.clone(),
            metric: Metric::Cosine,
            outcome,
            message,
        });
    }
    out
}

/// [`check_verdict`] before the rulings; `meaning` is what the words of the changed texts say
/// ([`meaning_calls`], computed once by the caller).
fn decide(
    diff: &Diff,
    drift: Option<&crate::cosine::Drift>,
    routing: Option<&crate::replay::Routing>,
    scan: Option<&ScanSection>,
    t: &CheckThresholds,
    meaning: MeaningCalls,
) -> Verdict {
    if let Some(r) = routing
        && r.incomplete()
    {
        return Verdict::new(
            Status::Incomplete,
            format!(
                "{} routing answer(s) missing after retries (first: {}); the measurement is incomplete, not a pass",
                r.errors.len(),
                r.errors[0]
            ),
        );
    }
    if let Some(r) = routing
        && let Some(reason) = nothing_measured(r).or_else(|| no_call_measured(r))
    {
        return Verdict::new(Status::Incomplete, reason);
    }
    let mut failures: Vec<Line> = scan_failures(scan, t.scan_fail_on)
        .into_iter()
        .map(Line::from)
        .collect();
    let mut unproven: Vec<Line> = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    if let Some(r) = routing {
        if let Some(why) = at_chance(r, t) {
            unproven.push(why.into());
        }
        for f in &r.forbidden {
            failures.push(Line::from(format!(
                "case `{}` calls `{}` at head ({} of {} answer(s)), which the case forbids (must_not_call); base never did",
                f.id, f.tool, f.head_calls, f.repeats
            )));
        }
        routing_findings(r, diff, t, &mut failures, &mut unproven, &mut warnings);
    }
    if let Some(d) = drift {
        for td in &d.tools {
            if let CosineCall::Fail(m) = cosine_call(td, d.floor, routing, t) {
                failures.push(m.into());
            }
        }
    }
    match t.meaning {
        MeaningPolicy::Fail => failures.extend(meaning.fail),
        MeaningPolicy::Review => warnings.extend(
            meaning
                .fail
                .into_iter()
                .map(|l| format!("{} (review: --meaning-policy review)", l.text)),
        ),
    }
    warnings.extend(meaning.review);
    let schema = diff_verdict(diff, t.fail_on);
    if schema.status == Status::Fail {
        failures.push(schema.reason.clone().into());
    }
    let decided = |status: Status, lines: Vec<Line>, warnings: Vec<String>| {
        let mut lines = lines.into_iter();
        let first = lines.next().expect("a decided verdict has a line");
        Verdict {
            status,
            reason: first.text,
            also: lines.map(|l| l.text).collect(),
            warnings,
            decided_by: first.about,
            rulings: Vec::new(),
        }
    };
    if !failures.is_empty() {
        // What would have been inconclusive is still worth reading, first among the warnings.
        let mut unproven: Vec<String> = unproven.into_iter().map(|l| l.text).collect();
        unproven.extend(warnings);
        return decided(Status::Fail, failures, unproven);
    }
    if !unproven.is_empty() {
        return decided(Status::Inconclusive, unproven, warnings);
    }
    Verdict {
        status: Status::Pass,
        reason: pass_reason(drift, routing, scan, schema.reason, t),
        also: Vec::new(),
        warnings,
        decided_by: None,
        rulings: Vec::new(),
    }
}

/// A passing verdict's sentence: every measure's number, in the order they rank.
fn pass_reason(
    drift: Option<&crate::cosine::Drift>,
    routing: Option<&crate::replay::Routing>,
    scan: Option<&ScanSection>,
    schema: String,
    t: &CheckThresholds,
) -> String {
    let mut parts = Vec::new();
    if let Some(r) = routing {
        let s = &r.paired.summary;
        parts.push(format!(
            "routing {:.1}% → {:.1}% ({}, p={:.4})",
            s.base_accuracy * 100.0,
            s.head_accuracy * 100.0,
            pts(s.delta),
            s.p_value_worse
        ));
        match (&r.calls, &r.calls_not_measured) {
            (Some(c), _) => parts.push(format!(
                "calls {:.1}% → {:.1}% ({}, p={:.4})",
                c.paired.summary.base_accuracy * 100.0,
                c.paired.summary.head_accuracy * 100.0,
                pts(c.paired.summary.delta),
                c.paired.summary.p_value_worse
            )),
            (None, Some(why)) => parts.push(format!("call accuracy not measured ({why})")),
            (None, None) => {}
        }
    }
    if let Some(d) = drift
        && let Some(m) = d.min()
    {
        let review = review_notes(drift, routing, t).len();
        parts.push(if review == 0 {
            format!(
                "min description cosine {:.3} ≥ {:.2}",
                m.description_cosine, d.floor
            )
        } else {
            format!(
                "{review} description(s) below the cosine floor {:.2} left to review ({})",
                d.floor,
                match t.cosine {
                    CosinePolicy::Auto => "routing decided",
                    _ => "the cosine is reported, not gated",
                }
            )
        });
    }
    parts.push(schema);
    if let Some(s) = scan {
        parts.push(match s.introduced.len() {
            0 if !s.allowed.is_empty() => format!(
                "no injection finding introduced ({} allowed by the config)",
                s.allowed.len()
            ),
            0 => "no injection finding introduced".to_string(),
            n => format!(
                "{n} injection finding(s) introduced below --scan-fail-on {}",
                crate::choice::Choice::name(t.scan_fail_on)
            ),
        });
    }
    parts.join("; ")
}

/// Routing's findings, by weight: drops that fail (overall, then per tool, on the family metric),
/// drops of at least `inconclusive_drop` the evidence cannot call (overall, or a tool the PR
/// changed), and smaller unproven drops of changed tools beyond the tolerance (warnings; an
/// overall one is not listed: one net flip of a 36-case suite is beyond a 2-point tolerance).
fn routing_findings(
    r: &crate::replay::Routing,
    diff: &Diff,
    t: &CheckThresholds,
    failures: &mut Vec<Line>,
    unproven: &mut Vec<Line>,
    warnings: &mut Vec<String>,
) {
    let evidence = t
        .require_significance
        .map(|a| format!(" < {a}"))
        .unwrap_or_default();
    let mut decided: Vec<&str> = Vec::new();
    let mut any_failed = false;
    for (metric, p) in metrics(r) {
        if overall_fails(r, metric, t) {
            any_failed = true;
            let s = &p.summary;
            // Call accuracy names routing's delta: the arguments decided, not the route.
            let routing = match metric {
                Metric::Calls => format!("; routing {}", pts(r.paired.summary.delta)),
                _ => String::new(),
            };
            failures.push(Line::from(format!(
                "{} {:.1}% → {:.1}% ({}, {} {}; {} case(s) regressed, {} fixed, p={:.4}{evidence}{routing})",
                metric.accuracy(),
                s.base_accuracy * 100.0,
                s.head_accuracy * 100.0,
                pts(s.delta),
                match metric {
                    Metric::Calls => "args_tolerance",
                    _ => "tolerance",
                },
                magnitude(t.tolerance_of(metric)),
                s.discordant_right_to_wrong,
                s.discordant_wrong_to_right,
                s.p_value_worse,
            )));
        }
        let family = Family::of(&p.per_tool, t.per_tool_alpha);
        for tool in failing(r, metric, t) {
            any_failed = true;
            decided.push(&tool.tool);
            failures.push(tool_failure(metric, tool, family, t));
        }
    }
    // What the evidence cannot call, on the family metric.
    let (metric, p) = family_metric(r);
    let (summary, rows, tolerance) = (&p.summary, &p.per_tool, t.tolerance_of(metric));
    // An overall drop beyond the tolerance is common noise on a small suite: only one of
    // `inconclusive_drop` or more is worth a line, and only when routing decided nothing else.
    if !any_failed && -summary.delta >= t.inconclusive_drop.max(tolerance) {
        let line = format!(
            "overall {} fell {:.1}% → {:.1}% on {} case(s) ({} regressed, {} fixed; p={:.4}, not below {}): not evidence either way",
            metric.noun(),
            summary.base_accuracy * 100.0,
            summary.head_accuracy * 100.0,
            summary.n_cases,
            summary.discordant_right_to_wrong,
            summary.discordant_wrong_to_right,
            summary.p_value_worse,
            t.require_significance.unwrap_or(1.0)
        );
        unproven.push(line.into());
    }
    let changed = changed_names(diff);
    let family = Family::of(rows, t.per_tool_alpha);
    for x in rows {
        if decided.contains(&x.tool.as_str())
            || x.delta >= -tolerance
            || !changed.contains(x.tool.as_str())
        {
            continue;
        }
        let line = unproven_tool(x, family, tolerance, t);
        if -x.delta >= t.inconclusive_drop {
            unproven.push(Line::about(line, &x.tool, metric));
        } else {
            warnings.push(line);
        }
    }
}

/// A changed tool's drop beyond `tolerance` its cases cannot call, and how many would.
fn unproven_tool(
    x: &crate::replay::ToolRouting,
    family: Family,
    tolerance: f64,
    t: &CheckThresholds,
) -> String {
    let held = match family.held_to(x) {
        Some(a) => format!("p={:.4}, not below {a:.4}", x.p_value_worse),
        None => format!(
            "{} discordant case(s) cannot reach p < {:.4}",
            x.regressed + x.fixed,
            family.threshold
        ),
    };
    let needs =
        crate::stats::cases_to_detect(-x.delta, x.base_accuracy, tolerance, t.per_tool_alpha, 0.8)
            .map(|n| format!("a drop this size needs ≥ {n} cases to be seen 80% of the time"))
            .unwrap_or_else(|| "no suite size sees a drop this size reliably".into());
    format!(
        "`{}` fell {:.1}% → {:.1}% on {} case(s) ({} regressed, {} fixed; {held}): too few to tell from noise; {needs}; add cases expecting it, or re-run with --confirm 3 (a sampling router)",
        x.tool,
        x.base_accuracy * 100.0,
        x.head_accuracy * 100.0,
        x.cases,
        x.regressed,
        x.fixed
    )
}

/// A tool's failing drop on `metric`, with the threshold its p-value was held to.
fn tool_failure(
    metric: Metric,
    tool: &crate::replay::ToolRouting,
    family: Family,
    t: &CheckThresholds,
) -> Line {
    let text = format!(
        "`{}` {} {:.1}% → {:.1}% ({} over {} case(s): {} regressed, {} fixed; p={:.4} < {:.4}, per_tool_alpha {} over a family of {})",
        tool.tool,
        match metric {
            Metric::Routing => "routing",
            Metric::Calls => "call accuracy",
            Metric::Meaning => "meaning",
            Metric::Cosine => "description cosine",
        },
        tool.base_accuracy * 100.0,
        tool.head_accuracy * 100.0,
        pts(tool.delta),
        tool.cases,
        tool.regressed,
        tool.fixed,
        tool.p_value_worse,
        family.threshold,
        t.per_tool_alpha,
        family.size
    );
    Line::about(text, &tool.tool, metric)
}

/// The names the PR changed, at either side of a rename.
fn changed_names(diff: &Diff) -> std::collections::BTreeSet<&str> {
    diff.tools
        .iter()
        .flat_map(|d| [Some(d.name.as_str()), d.base_name.as_deref()])
        .flatten()
        .collect()
}

/// `lint`'s verdict: the injection scan fails at `scan_fail_on`; the rest is a heuristic that
/// passes unless `strict`, which fails on any warning or error.
pub fn lint_verdict(
    section: &LintSection,
    scan: Option<&ScanSection>,
    scan_fail_on: FailOn,
    strict: bool,
) -> Verdict {
    let findings = &section.findings;
    let count = |l: Level| findings.iter().filter(|f| f.level == l).count();
    let (e, w, n) = (
        count(Level::Error),
        count(Level::Warning),
        count(Level::Note),
    );
    let summary = format!("{e} hard gate(s), {w} confusable pair(s), {n} note(s)");
    if let Some(l) = &section.llm
        && !l.errors.is_empty()
    {
        return Verdict::new(
            Status::Incomplete,
            format!(
                "the model could not score {} part(s) of the set (first: {}); {summary}",
                l.errors.len(),
                l.errors[0]
            ),
        );
    }
    let injected = scan_failures(scan, scan_fail_on);
    if let Some(first) = injected.first() {
        let first = first.replace(" introduces ", " has ");
        return Verdict::new(
            Status::Fail,
            format!(
                "{first} ({} injection finding(s) in all); {summary}",
                injected.len()
            ),
        );
    }
    if strict && e + w > 0 {
        Verdict::new(
            Status::Fail,
            format!("{summary} (--strict fails on hard gates and confusable pairs)"),
        )
    } else {
        Verdict::new(
            Status::Pass,
            if strict {
                summary
            } else {
                format!("{summary} (a heuristic: pass --strict to fail on them)")
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::lint::fixtures::{lint, pair_tools};

    #[test]
    fn verdict_passes_unless_strict_and_is_incomplete_without_model_scores() {
        let s = LintSection::full(lint(pair_tools()));
        let v = lint_verdict(&s, None, FailOn::High, false);
        assert_eq!(v.status, Status::Pass);
        assert_eq!(
            v.reason,
            "1 hard gate(s), 1 confusable pair(s), 0 note(s) (a heuristic: pass --strict to fail on them)"
        );
        assert_eq!(
            lint_verdict(&s, None, FailOn::High, true).status,
            Status::Fail
        );
        let clean = LintSection::full(lint(json!([{"name": "a", "description": "Does a."}])));
        assert_eq!(
            lint_verdict(&clean, None, FailOn::High, true).status,
            Status::Pass
        );
        let mut s = s;
        let mut failed = crate::lint::llm::LlmReport::new(&Named);
        failed.errors = vec!["`a`: HTTP 500".into()];
        s.llm = Some(failed);
        let v = lint_verdict(&s, None, FailOn::High, false);
        assert_eq!(v.status, Status::Incomplete);
        assert!(
            v.reason.starts_with(
                "the model could not score 1 part(s) of the set (first: `a`: HTTP 500)"
            )
        );
    }

    /// A router that is never asked: it only names itself in the report.
    struct Named;

    #[async_trait::async_trait]
    impl crate::route::Router for Named {
        fn kind(&self) -> crate::route::Kind {
            crate::route::Kind::Openai
        }
        fn model(&self) -> &str {
            "m"
        }
        fn endpoint_host(&self) -> String {
            "h".into()
        }
        async fn route(
            &self,
            _: &crate::route::RouteRequest,
        ) -> Result<crate::route::RouteResponse, crate::http::Failure> {
            Err(crate::http::Failure::Fatal("not asked".into()))
        }
    }

    /// A routing over several tools: `(tool, base right, head right)` per case; call accuracy not
    /// measured (as with the semantic router).
    fn tools_routing(cases: &[(&str, bool, bool)]) -> crate::replay::Routing {
        let mut r = tools_routing_with_calls(cases);
        r.calls = None;
        r.calls_not_measured = Some("semantic router".into());
        r
    }

    /// [`tools_routing`] with call accuracy measured: a right route is a right call.
    fn tools_routing_with_calls(cases: &[(&str, bool, bool)]) -> crate::replay::Routing {
        use crate::replay::{Outcome, Sample, SideRun};
        let yaml: String = cases
            .iter()
            .enumerate()
            .map(|(i, (t, _, _))| format!("- {{id: c{i:02}, prompt: p{i}, expect: {t}}}\n"))
            .collect();
        let suite = crate::suite::parse(&yaml, "s.yaml", std::path::Path::new(".")).unwrap();
        let side = |head: bool| {
            SideRun::of(cases.iter().enumerate().map(|(i, (t, b, h))| {
                let o = if if head { *h } else { *b } {
                    Outcome::Correct {
                        chosen: Some(t.to_string()),
                    }
                } else {
                    Outcome::WrongTool {
                        chosen: "other".into(),
                    }
                };
                (format!("c{i:02}"), vec![Sample::routed(o)])
            }))
        };
        crate::replay::compare(&suite, &side(false), &side(true), 0)
    }

    fn changed_tools(names: &[String]) -> Diff {
        changed(&names.iter().map(String::as_str).collect::<Vec<_>>())
    }

    fn changed(names: &[&str]) -> Diff {
        Diff {
            tools: names
                .iter()
                .map(|n| crate::diff::ToolDiff {
                    name: n.to_string(),
                    status: crate::diff::Status::Changed,
                    base_name: None,
                    head_name: None,
                    rename_score: None,
                    changes: Vec::new(),
                })
                .collect(),
            unchanged: 0,
        }
    }

    /// `n` cases of `tool`, each `(base, head)`.
    fn cases(tool: &str, n: usize, b: bool, h: bool) -> Vec<(&str, bool, bool)> {
        vec![(tool, b, h); n]
    }

    /// The calendar's regression: 5 of 8 `schedule` cases flipped, the rest of the suite steady.
    fn calendar_like(extra_flip_on_get: bool) -> crate::replay::Routing {
        let mut c = cases("schedule", 5, true, false);
        c.extend(cases("schedule", 2, true, true));
        c.extend(cases("schedule", 1, false, false));
        c.extend(cases("get", 7, true, true));
        c.push(("get", extra_flip_on_get, true));
        c.extend(cases("list", 8, true, true));
        tools_routing(&c)
    }

    #[test]
    fn an_unrelated_edit_cannot_dilute_a_regression() {
        let t = CheckThresholds::default();
        let alone = check_verdict(
            &changed(&["schedule"]),
            None,
            Some(&calendar_like(false)),
            None,
            &t,
        );
        assert_eq!(alone.status, Status::Fail, "{}", alone.reason);
        // The renderers' plain words read which tool and metric decided, not the sentence.
        assert_eq!(
            alone.decided_by,
            Some(Decider {
                tool: "schedule".into(),
                metric: Metric::Routing
            })
        );
        // The laundering PR: "Get" → "Retrieve" in `get` as well (one of its cases even moved).
        // Under Holm over the changed tools the threshold halved and p = 0.0312 passed.
        let laundered = check_verdict(
            &changed(&["schedule", "get"]),
            None,
            Some(&calendar_like(true)),
            None,
            &t,
        );
        assert_eq!(laundered.status, Status::Fail, "{}", laundered.reason);
        assert!(
            laundered.reason.starts_with(
                "`schedule` routing 87.5% → 25.0% (-62.5 pts over 8 case(s): 5 regressed, 0 fixed; p=0.0312 < 0.0350, per_tool_alpha 0.035 over a family of 1)"
            ),
            "{}",
            laundered.reason
        );
        // The family is the suite's, not the PR's: the verdict does not read which tools changed.
        let untouched = check_verdict(&changed(&[]), None, Some(&calendar_like(true)), None, &t);
        assert_eq!(untouched.status, Status::Fail, "{}", untouched.reason);
        // A tool enters the family only by moving on enough cases to reach the threshold.
        let mut r = calendar_like(false);
        let family = Family::of(&r.paired.per_tool, t.per_tool_alpha);
        assert_eq!(
            family,
            Family {
                threshold: 0.035,
                size: 1
            }
        );
        hold(&mut r, &t);
        let held: Vec<_> = r
            .paired
            .per_tool
            .iter()
            .map(|x| (x.tool.as_str(), x.held_to))
            .collect();
        assert_eq!(
            held,
            [("get", None), ("list", None), ("schedule", Some(0.035))]
        );
    }

    #[test]
    fn tarone_counts_only_the_tools_that_could_reach_the_threshold() {
        // Two tools each with 6 discordant cases (2⁻⁶ = 0.0156 ≤ 0.035/2), one with 3.
        let mut c = cases("a", 6, true, false);
        c.extend(cases("b", 3, true, false));
        c.extend(cases("b", 3, false, true));
        c.extend(cases("c", 3, true, false));
        let r = tools_routing(&c);
        let f = Family::of(&r.paired.per_tool, 0.035);
        assert_eq!(
            f,
            Family {
                threshold: 0.0175,
                size: 2
            }
        );
        let row = |n: &str| r.paired.per_tool.iter().find(|x| x.tool == n).unwrap();
        assert_eq!(f.held_to(row("a")), Some(0.0175));
        assert_eq!(f.held_to(row("b")), Some(0.0175));
        assert_eq!(f.held_to(row("c")), None);
        // a: p = 2⁻⁶ = 0.0156 < 0.0175 fails; c fell 100 points on 3 cases and cannot.
        let failing: Vec<_> = failing(&r, Metric::Routing, &CheckThresholds::default())
            .iter()
            .map(|x| x.tool.clone())
            .collect();
        assert_eq!(failing, ["a"]);
    }

    #[test]
    fn an_unproven_drop_says_how_many_cases_would_decide() {
        // The rest of this case's verdict is `tests/fixtures/verdict/few-cases-inconclusive.yaml`.
        let t = CheckThresholds::default();
        // 87.5% → 37.5% on 8 cases: 4 regressed, p = 0.0625.
        let mut c = cases("schedule", 4, true, false);
        c.extend(cases("schedule", 3, true, true));
        c.push(("schedule", false, false));
        c.extend(cases("list", 24, true, true));
        let r = tools_routing(&c);
        let v = check_verdict(&changed(&["schedule"]), None, Some(&r), None, &t);
        assert_eq!(v.status, Status::Inconclusive, "{}", v.reason);
        assert_eq!(v.exit_code(), 4);
        assert!(
            v.reason.starts_with(
                "`schedule` fell 87.5% → 37.5% on 8 case(s) (4 regressed, 0 fixed; 4 discordant case(s) cannot reach p < 0.0350): too few to tell from noise; a drop this size needs ≥ "
            ),
            "{}",
            v.reason
        );
        assert!(
            v.reason.ends_with(
                "add cases expecting it, or re-run with --confirm 3 (a sampling router)"
            ),
            "{}",
            v.reason
        );
        let n: usize = v
            .reason
            .split("needs ≥ ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((9..=40).contains(&n), "{n}");
    }

    /// `r` with head calling `tool`, forbidden, on case `id` (once, base never).
    fn forbid(r: &mut crate::replay::Routing, id: &str, tool: &str) {
        r.forbidden.push(crate::replay::ForbiddenCall {
            id: id.into(),
            prompt: "p".into(),
            tool: tool.into(),
            head_calls: 1,
            repeats: 1,
        });
    }

    /// A routing where every case routes right at both sides and `calls[i]` says whether its call
    /// (the arguments) was right at (base, head).
    fn call_routing(calls: &[(bool, bool)]) -> crate::replay::Routing {
        use crate::replay::{CallOutcome, Outcome, Sample, SideRun};
        let yaml: String = (0..calls.len())
            .map(|i| format!("- {{id: c{i}, prompt: p{i}, expect: a, args: {{x: 1}}}}\n"))
            .collect();
        let suite = crate::suite::parse(&yaml, "s.yaml", std::path::Path::new(".")).unwrap();
        let side = |head: bool| {
            SideRun::of(calls.iter().enumerate().map(|(i, (b, h))| {
                let mut s = Sample::routed(Outcome::Correct {
                    chosen: Some("a".into()),
                });
                if !(if head { *h } else { *b }) {
                    s.call = CallOutcome::WrongArguments {
                        mismatches: Vec::new(),
                    };
                }
                (format!("c{i}"), vec![s])
            }))
        };
        crate::replay::compare(&suite, &side(false), &side(true), 0)
    }

    /// One verdict case of `tests/fixtures/verdict/` (its README gives the format).
    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct VerdictCase {
        why: String,
        #[serde(default)]
        changed: Vec<String>,
        #[serde(default)]
        thresholds: serde_json::Map<String, serde_json::Value>,
        #[serde(default)]
        routing: Vec<(String, bool, bool, usize)>,
        #[serde(default)]
        arguments: Option<String>,
        #[serde(default)]
        calls: Vec<(bool, bool, usize)>,
        #[serde(default)]
        chance_accuracy: Option<f64>,
        #[serde(default)]
        forbidden: Vec<(String, String)>,
        expect: VerdictExpect,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct VerdictExpect {
        status: Status,
        reason: Option<String>,
        reason_starts_with: Option<String>,
        reason_contains: Option<String>,
        reason_ends_with: Option<String>,
        reason_not_contains: Option<String>,
        /// `none`: about no one tool.
        decided_by: Option<serde_yaml::Value>,
        also_start_with: Option<Vec<String>>,
        warnings_start_with: Option<Vec<String>>,
    }

    impl VerdictCase {
        fn routing(&self) -> crate::replay::Routing {
            if !self.calls.is_empty() {
                let rows: Vec<(bool, bool)> = self
                    .calls
                    .iter()
                    .flat_map(|&(b, h, n)| std::iter::repeat_n((b, h), n))
                    .collect();
                return call_routing(&rows);
            }
            let rows: Vec<(&str, bool, bool)> = self
                .routing
                .iter()
                .flat_map(|(t, b, h, n)| std::iter::repeat_n((t.as_str(), *b, *h), *n))
                .collect();
            let mut r = match self.arguments.as_deref() {
                Some("measured") => tools_routing_with_calls(&rows),
                None => tools_routing(&rows),
                Some(other) => panic!("arguments: {other:?} (expected `measured`)"),
            };
            r.chance_accuracy = self.chance_accuracy;
            for (id, tool) in &self.forbidden {
                forbid(&mut r, id, tool);
            }
            r
        }

        fn thresholds(&self) -> CheckThresholds {
            let mut t = serde_json::to_value(CheckThresholds::default()).unwrap();
            for (k, v) in &self.thresholds {
                assert!(
                    t.get(k).is_some() || k == "args_tolerance" || k == "min_base_accuracy",
                    "unknown threshold {k}"
                );
                t[k] = v.clone();
            }
            serde_json::from_value(t).unwrap()
        }
    }

    /// Every file of `tests/fixtures/verdict/`, by name.
    fn verdict_cases() -> Vec<(String, VerdictCase)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verdict");
        let mut out: Vec<(String, VerdictCase)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .map(|p| {
                let name = p.file_stem().unwrap().to_string_lossy().to_string();
                let text = std::fs::read_to_string(&p).unwrap();
                let case = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
                (name, case)
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    #[test]
    fn verdict_cases_as_data() {
        let cases = verdict_cases();
        assert!(cases.len() >= 20, "the cases were read: {}", cases.len());
        let mut statuses = std::collections::BTreeSet::new();
        for (name, case) in &cases {
            let r = case.routing();
            let v = check_verdict(
                &changed_tools(&case.changed),
                None,
                Some(&r),
                None,
                &case.thresholds(),
            );
            let e = &case.expect;
            let at = format!("{name} ({}): {}", case.why, v.reason);
            assert_eq!(v.status, e.status, "{at}");
            statuses.insert(format!("{:?}", v.status));
            if let Some(x) = &e.reason {
                assert_eq!(&v.reason, x, "{at}");
            }
            if let Some(x) = &e.reason_starts_with {
                assert!(v.reason.starts_with(x.as_str()), "{at}");
            }
            if let Some(x) = &e.reason_contains {
                assert!(v.reason.contains(x.as_str()), "{at}");
            }
            if let Some(x) = &e.reason_ends_with {
                assert!(v.reason.ends_with(x.as_str()), "{at}");
            }
            if let Some(x) = &e.reason_not_contains {
                assert!(!v.reason.contains(x.as_str()), "{at}");
            }
            match &e.decided_by {
                None => {}
                Some(serde_yaml::Value::String(s)) if s == "none" => {
                    assert_eq!(v.decided_by, None, "{at}")
                }
                Some(d) => {
                    let want: Decider = serde_yaml::from_value(d.clone()).unwrap();
                    assert_eq!(v.decided_by, Some(want), "{at}");
                }
            }
            for (got, want, what) in [
                (&v.also, &e.also_start_with, "also"),
                (&v.warnings, &e.warnings_start_with, "warnings"),
            ] {
                let Some(want) = want else { continue };
                assert_eq!(got.len(), want.len(), "{at}: {what} {got:?}");
                for (g, w) in got.iter().zip(want) {
                    assert!(g.starts_with(w.as_str()), "{at}: {what} {g:?}");
                }
            }
        }
        // Every outcome a check can have is pinned by a case.
        assert_eq!(
            statuses.into_iter().collect::<Vec<_>>(),
            ["Pass", "Fail", "Inconclusive", "Incomplete"]
                .map(String::from)
                .iter()
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>(),
        );
    }

    /// A unit test of the reader: an unknown key is refused, not ignored.
    #[test]
    fn a_verdict_case_with_an_unknown_key_is_refused() {
        let e =
            serde_yaml::from_str::<VerdictCase>("why: x\nexpect: {status: pass}\nroutnig: []\n")
                .unwrap_err()
                .to_string();
        assert!(e.contains("unknown field `routnig`"), "{e}");
    }
}
