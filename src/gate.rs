//! The verdict: thresholds applied to what was measured. Thresholds are data (`Thresholds`), the
//! decision is one function per command, and "incomplete" always outranks "pass".

use serde::{Deserialize, Serialize};

use crate::diff::{Diff, Severity};
use crate::error::exit;
use crate::lint::{Level, LintSection};
use crate::scan::{FailOn, ScanSection};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    Incomplete,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    pub status: Status,
    /// The one sentence (with the number) that decided it.
    pub reason: String,
}

impl Verdict {
    pub fn exit_code(&self) -> i32 {
        match self.status {
            Status::Pass => exit::PASS,
            Status::Fail => exit::FAIL,
            Status::Incomplete => exit::INCOMPLETE,
        }
    }
}

/// `driftgate diff`: fail when any change is at or above `fail_on`.
pub fn diff_verdict(diff: &Diff, fail_on: Severity) -> Verdict {
    let at_or_above: Vec<_> = diff
        .changes()
        .filter(|(_, c)| c.severity >= fail_on)
        .collect();
    if at_or_above.is_empty() {
        let total = diff.changes().count();
        let worst = diff
            .max_severity()
            .map(|s| format!(", worst {}", s.as_str()))
            .unwrap_or_default();
        Verdict {
            status: Status::Pass,
            reason: format!(
                "no change at or above {} ({total} change(s){worst})",
                fail_on.as_str()
            ),
        }
    } else {
        let (tool, first) = at_or_above[0];
        Verdict {
            status: Status::Fail,
            reason: format!(
                "{} change(s) at or above {}; first: {} `{}` {}",
                at_or_above.len(),
                fail_on.as_str(),
                first.severity.as_str(),
                tool.name,
                first.rule
            ),
        }
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
    /// Never fails; a review note.
    Review,
    /// Behaviour over proxy: where the suite measured the tool on at least `min_cases` of its own
    /// cases, routing decides and the low cosine is a review note; elsewhere the floor fails.
    #[default]
    Auto,
}

impl crate::choice::Choice for CosinePolicy {
    const ALL: &'static [Self] = &[CosinePolicy::Auto, CosinePolicy::Fail, CosinePolicy::Review];
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
    /// `None`: the embedding model's calibrated floor (`drift::floors`); the report's
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
    /// Base accuracy at or below this measures nothing (a wrong model, endpoint or suite): the run
    /// is incomplete. A base of 0% always is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_base_accuracy: Option<f64>,
    /// An injection-scan finding the PR introduced at or above this fails the gate.
    #[serde(default)]
    pub scan_fail_on: FailOn,
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
            cosine: CosinePolicy::Auto,
            min_base_accuracy: None,
            scan_fail_on: FailOn::High,
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

/// Why a replay measured nothing, if it did not: the router was (almost) never right at base, so
/// no drop can show at head. An endpoint that answers garbage, a model that never calls tools or
/// a suite for other tools all look like this; a pass would be a lie.
fn nothing_measured(r: &crate::replay::Routing, t: &CheckThresholds) -> Option<String> {
    let s = &r.summary;
    if s.n_cases == 0 {
        return None;
    }
    let floor = t.min_base_accuracy.unwrap_or(0.0);
    (s.base_accuracy <= floor).then(|| {
        let right = (s.base_accuracy * s.n_cases as f64).round() as u64;
        let threshold = match t.min_base_accuracy {
            Some(m) => format!(", at or below the min_base_accuracy {:.1}%", m * 100.0),
            None => String::new(),
        };
        format!(
            "nothing was measured: the router was right on {right} of {} case(s) at base ({:.1}%{threshold}); check the model, the endpoint and the suite — incomplete, not a pass",
            s.n_cases,
            s.base_accuracy * 100.0
        )
    })
}

/// Why call accuracy measured nothing, if it did not: routing was right at base but no call
/// was (every expected argument missed, or every call broke its schema), so no argument drop can
/// show. A suite whose `args` no model meets looks like this.
fn no_call_measured(r: &crate::replay::Routing) -> Option<String> {
    let c = r.calls.as_ref()?;
    let s = &c.summary;
    (s.n_cases > 0 && s.base_accuracy == 0.0 && r.summary.base_accuracy > 0.0).then(|| {
        format!(
            "call accuracy measured nothing: no call of {} case(s) was right at base (routing was {:.1}%); check the suite's `args` and the tools' schemas — incomplete, not a pass",
            s.n_cases,
            r.summary.base_accuracy * 100.0
        )
    })
}

/// Does the overall routing drop fail the gate? Beyond the tolerance, and significant; where
/// call accuracy was measured, only when the call metric fails too (see
/// [`overall_call_drop_fails`]: routing then names why).
pub fn overall_drop_fails(r: &crate::replay::Routing, t: &CheckThresholds) -> bool {
    let own = drop_fails(&r.summary, t.tolerance, t);
    match &r.calls {
        Some(c) => own && drop_fails(&c.summary, t.args_tolerance(), t),
        None => own,
    }
}

/// Does an overall drop fail at `tolerance`? Beyond it, and significant.
fn drop_fails(s: &crate::stats::PairedSummary, tolerance: f64, t: &CheckThresholds) -> bool {
    s.delta < -tolerance && t.require_significance.is_none_or(|a| s.p_value_worse < a)
}

/// Does the overall call-accuracy drop fail the gate on its own, routing's test not failing?
///
/// Where calls are measured the gate tests **one** family, call accuracy (a right call is a
/// right route with right arguments, so a routing drop is a call drop too): testing routing and
/// calls side by side at the same alphas would add their false alarms (5.9% at 80% base accuracy
/// with 20% argument noise, tests/it/gate_simulation.rs). Routing's own test only names which
/// metric decided: routing, when it fails as well; call accuracy (the arguments), when it does
/// not.
pub fn overall_call_drop_fails(r: &crate::replay::Routing, t: &CheckThresholds) -> bool {
    r.calls
        .as_ref()
        .is_some_and(|c| drop_fails(&c.summary, t.args_tolerance(), t))
        && !drop_fails(&r.summary, t.tolerance, t)
}

/// The tools whose routing drop fails: tools the PR changed (the hypotheses the diff names before
/// anything is measured) that dropped beyond the tolerance with evidence — Holm's step-down over
/// those tools at `per_tool_alpha`, so editing ten tools does not buy ten chances of a false
/// alarm, and one flip of a two-case tool (p = 0.5) is never enough. A drop of a tool the PR did
/// not touch shows in the report and counts through the overall test. Where calls are measured,
/// a tool fails on its call accuracy, and is listed here when its routing fails as well.
pub fn failing_tools<'a>(
    r: &'a crate::replay::Routing,
    diff: &Diff,
    t: &CheckThresholds,
) -> Vec<&'a crate::replay::ToolRouting> {
    let own = failing_rows(&r.per_tool, diff, t, t.tolerance);
    match &r.calls {
        Some(c) => {
            let calls = failing_rows(&c.per_tool, diff, t, t.args_tolerance());
            own.into_iter()
                .filter(|x| calls.iter().any(|c| c.tool == x.tool))
                .collect()
        }
        None => own,
    }
}

/// The tools whose call-accuracy drop fails (Holm at `per_tool_alpha`, `args_tolerance`) while
/// their routing does not: the arguments decided.
pub fn failing_call_tools<'a>(
    r: &'a crate::replay::Routing,
    diff: &Diff,
    t: &CheckThresholds,
) -> Vec<&'a crate::replay::ToolRouting> {
    let Some(c) = &r.calls else {
        return Vec::new();
    };
    let own = failing_rows(&r.per_tool, diff, t, t.tolerance);
    failing_rows(&c.per_tool, diff, t, t.args_tolerance())
        .into_iter()
        .filter(|x| !own.iter().any(|o| o.tool == x.tool))
        .collect()
}

fn failing_rows<'a>(
    rows: &'a [crate::replay::ToolRouting],
    diff: &Diff,
    t: &CheckThresholds,
    tolerance: f64,
) -> Vec<&'a crate::replay::ToolRouting> {
    let changed: std::collections::BTreeSet<&str> = diff
        .tools
        .iter()
        .flat_map(|d| [Some(d.name.as_str()), d.base_name.as_deref()])
        .flatten()
        .collect();
    let mut family: Vec<&crate::replay::ToolRouting> = rows
        .iter()
        .filter(|x| changed.contains(x.tool.as_str()))
        .collect();
    family.sort_by(|a, b| a.p_value_worse.total_cmp(&b.p_value_worse));
    let m = family.len();
    let mut out = Vec::new();
    for (i, x) in family.into_iter().enumerate() {
        if x.p_value_worse >= t.per_tool_alpha / (m - i) as f64 {
            break;
        }
        if x.delta < -tolerance {
            out.push(x);
        }
    }
    out
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
    td: &crate::drift::ToolDrift,
    floor: f64,
    routing: Option<&crate::replay::Routing>,
    t: &CheckThresholds,
) -> CosineCall {
    let low_params: Vec<&crate::drift::ParamDrift> =
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
    let covered = routing.and_then(|r| r.per_tool.iter().find(|x| x.tool == td.tool));
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
    drift: Option<&crate::drift::Drift>,
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

/// The introduced scan findings that fail the gate, as one failure line each (worst first).
fn scan_failures(scan: Option<&ScanSection>, fail_on: FailOn) -> Vec<String> {
    scan.map(|s| s.failing(fail_on))
        .unwrap_or_default()
        .into_iter()
        .map(|f| {
            format!(
                "`{}` introduces {} injection finding {} at {}",
                f.tool,
                f.level.as_str(),
                f.rule,
                f.field
            )
        })
        .collect()
}

/// `check --lint-llm`: a grade the model never gave leaves the check incomplete, whatever the
/// rest says (a failed measurement never reads as a pass). An already incomplete verdict keeps
/// its own reason.
pub fn with_lint_model(verdict: Verdict, lint: Option<&LintSection>) -> Verdict {
    let errors = lint
        .and_then(|l| l.llm.as_ref())
        .map(|m| m.errors.as_slice())
        .unwrap_or_default();
    match errors.first() {
        Some(e) if verdict.status != Status::Incomplete => Verdict {
            status: Status::Incomplete,
            reason: format!(
                "--lint-llm: the model could not grade {} part(s) of the sides (first: {e}); the measurement is incomplete, not a pass; without it: {}",
                errors.len(),
                verdict.reason
            ),
        },
        _ => verdict,
    }
}

/// `driftgate check` and `diff`: incomplete outranks everything; then an injected instruction
/// the PR introduced, then routing (the ground truth), then meaning drift, then the schema law.
/// The reason names the deciding number.
pub fn check_verdict(
    diff: &Diff,
    drift: Option<&crate::drift::Drift>,
    routing: Option<&crate::replay::Routing>,
    scan: Option<&ScanSection>,
    t: &CheckThresholds,
) -> Verdict {
    if let Some(r) = routing
        && r.incomplete()
    {
        return Verdict {
            status: Status::Incomplete,
            reason: format!(
                "{} routing answer(s) missing after retries (first: {}); the measurement is incomplete, not a pass",
                r.errors.len(),
                r.errors[0]
            ),
        };
    }
    if let Some(r) = routing
        && let Some(reason) = nothing_measured(r, t).or_else(|| no_call_measured(r))
    {
        return Verdict {
            status: Status::Incomplete,
            reason,
        };
    }
    let mut failures: Vec<String> = scan_failures(scan, t.scan_fail_on);
    if let Some(r) = routing {
        let s = &r.summary;
        if overall_drop_fails(r, t) {
            let evidence = t
                .require_significance
                .map(|a| format!(" < {a}"))
                .unwrap_or_default();
            failures.push(format!(
                "routing accuracy {:.1}% → {:.1}% ({}, tolerance {}; {} case(s) regressed, {} fixed, p={:.4}{evidence})",
                s.base_accuracy * 100.0,
                s.head_accuracy * 100.0,
                pts(s.delta),
                pts(-t.tolerance),
                s.discordant_right_to_wrong,
                s.discordant_wrong_to_right,
                s.p_value_worse
            ));
        }
        for tool in failing_tools(r, diff, t) {
            failures.push(format!(
                "`{}` routing {:.1}% → {:.1}% ({} over {} case(s), p={:.4} < per_tool_alpha {}, Holm)",
                tool.tool,
                tool.base_accuracy * 100.0,
                tool.head_accuracy * 100.0,
                pts(tool.delta),
                tool.cases,
                tool.p_value_worse,
                t.per_tool_alpha
            ));
        }
        if let Some(c) = &r.calls {
            let s = &c.summary;
            if overall_call_drop_fails(r, t) {
                let evidence = t
                    .require_significance
                    .map(|a| format!(" < {a}"))
                    .unwrap_or_default();
                failures.push(format!(
                    "call accuracy {:.1}% → {:.1}% ({}, args_tolerance {}; {} case(s) regressed, {} fixed, p={:.4}{evidence}; routing {})",
                    s.base_accuracy * 100.0,
                    s.head_accuracy * 100.0,
                    pts(s.delta),
                    pts(-t.args_tolerance()),
                    s.discordant_right_to_wrong,
                    s.discordant_wrong_to_right,
                    s.p_value_worse,
                    pts(r.summary.delta)
                ));
            }
            for tool in failing_call_tools(r, diff, t) {
                failures.push(format!(
                    "`{}` call accuracy {:.1}% → {:.1}% ({} over {} case(s), p={:.4} < per_tool_alpha {}, Holm)",
                    tool.tool,
                    tool.base_accuracy * 100.0,
                    tool.head_accuracy * 100.0,
                    pts(tool.delta),
                    tool.cases,
                    tool.p_value_worse,
                    t.per_tool_alpha
                ));
            }
        }
    }
    if let Some(d) = drift {
        for td in &d.tools {
            if let CosineCall::Fail(m) = cosine_call(td, d.floor, routing, t) {
                failures.push(m);
            }
        }
    }
    let schema = diff_verdict(diff, t.fail_on);
    if schema.status == Status::Fail {
        failures.push(schema.reason.clone());
    }
    if let Some(first) = failures.first() {
        let more = if failures.len() > 1 {
            format!(" (+{} more)", failures.len() - 1)
        } else {
            String::new()
        };
        return Verdict {
            status: Status::Fail,
            reason: format!("{first}{more}"),
        };
    }
    let mut parts = Vec::new();
    if let Some(r) = routing {
        let s = &r.summary;
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
                c.summary.base_accuracy * 100.0,
                c.summary.head_accuracy * 100.0,
                pts(c.summary.delta),
                c.summary.p_value_worse
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
                "{review} description(s) below the cosine floor {:.2} left to review (routing decided)",
                d.floor
            )
        });
    }
    parts.push(schema.reason);
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
    Verdict {
        status: Status::Pass,
        reason: parts.join("; "),
    }
}

/// `lint`'s verdict: the injection scan fails at `scan_fail_on`; the rest is a heuristic that
/// passes unless `strict`, which fails on any warning or error.
pub fn lint_verdict(
    section: &LintSection,
    scan: Option<&ScanSection>,
    scan_fail_on: FailOn,
    strict: bool,
) -> Verdict {
    let findings = section.findings.as_deref().unwrap_or_default();
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
        return Verdict {
            status: Status::Incomplete,
            reason: format!(
                "the model could not score {} part(s) of the set (first: {}); {summary}",
                l.errors.len(),
                l.errors[0]
            ),
        };
    }
    let injected = scan_failures(scan, scan_fail_on);
    if let Some(first) = injected.first() {
        let first = first.replace(" introduces ", " has ");
        return Verdict {
            status: Status::Fail,
            reason: format!(
                "{first} ({} injection finding(s) in all); {summary}",
                injected.len()
            ),
        };
    }
    if strict && e + w > 0 {
        Verdict {
            status: Status::Fail,
            reason: format!("{summary} (--strict fails on hard gates and confusable pairs)"),
        }
    } else {
        Verdict {
            status: Status::Pass,
            reason: if strict {
                summary
            } else {
                format!("{summary} (a heuristic: pass --strict to fail on them)")
            },
        }
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
        fn kind(&self) -> &str {
            "openai"
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

    fn routing(base_right: &[bool], head_right: &[bool]) -> crate::replay::Routing {
        use crate::replay::{CaseRun, Outcome, RunStats, Sample, SideRun};
        let yaml: String = (0..base_right.len())
            .map(|i| format!("- {{id: c{i}, prompt: p{i}, expect: a}}\n"))
            .collect();
        let suite = crate::suite::parse(&yaml, "s.yaml", std::path::Path::new(".")).unwrap();
        let side = |right: &[bool]| SideRun {
            cases: right
                .iter()
                .enumerate()
                .map(|(i, r)| CaseRun {
                    id: format!("c{i}"),
                    offered_hash: String::new(),
                    samples: vec![Sample::routed(if *r {
                        Outcome::Correct {
                            chosen: Some("a".into()),
                        }
                    } else {
                        Outcome::NoCall
                    })],
                })
                .collect(),
            stats: RunStats::default(),
        };
        crate::replay::compare(&suite, &side(base_right), &side(head_right), 0)
    }

    #[test]
    fn a_base_that_is_never_right_measured_nothing() {
        let diff = Diff {
            tools: Vec::new(),
            unchanged: 1,
        };
        let t = CheckThresholds::default();
        // Both sides 0%: no drop can show, so no pass.
        let v = check_verdict(
            &diff,
            None,
            Some(&routing(&[false; 4], &[false; 4])),
            None,
            &t,
        );
        assert_eq!(v.status, Status::Incomplete);
        assert!(
            v.reason.starts_with(
                "nothing was measured: the router was right on 0 of 4 case(s) at base (0.0%)"
            ),
            "{}",
            v.reason
        );
        // One right of four passes by default; a floor of 30% makes it incomplete.
        let some = routing(&[true, false, false, false], &[true, false, false, false]);
        assert_eq!(
            check_verdict(&diff, None, Some(&some), None, &t).status,
            Status::Pass
        );
        let strict = CheckThresholds {
            min_base_accuracy: Some(0.3),
            ..CheckThresholds::default()
        };
        let v = check_verdict(&diff, None, Some(&some), None, &strict);
        assert_eq!(v.status, Status::Incomplete);
        assert!(
            v.reason.contains("at or below the min_base_accuracy 30.0%"),
            "{}",
            v.reason
        );
    }

    /// A routing where every case routes right at both sides and `calls[i]` says whether its call
    /// (the arguments) was right at (base, head).
    fn call_routing(calls: &[(bool, bool)]) -> crate::replay::Routing {
        use crate::replay::{CallOutcome, CaseRun, Outcome, RunStats, Sample, SideRun};
        let yaml: String = (0..calls.len())
            .map(|i| format!("- {{id: c{i}, prompt: p{i}, expect: a, args: {{x: 1}}}}\n"))
            .collect();
        let suite = crate::suite::parse(&yaml, "s.yaml", std::path::Path::new(".")).unwrap();
        let side = |head: bool| SideRun {
            cases: calls
                .iter()
                .enumerate()
                .map(|(i, (b, h))| {
                    let right = if head { *h } else { *b };
                    let mut s = Sample::routed(Outcome::Correct {
                        chosen: Some("a".into()),
                    });
                    if !right {
                        s.call = CallOutcome::WrongArguments {
                            mismatches: Vec::new(),
                        };
                    }
                    CaseRun {
                        id: format!("c{i}"),
                        offered_hash: String::new(),
                        samples: vec![s],
                    }
                })
                .collect(),
            stats: RunStats::default(),
        };
        crate::replay::compare(&suite, &side(false), &side(true), 0)
    }

    #[test]
    fn call_accuracy_fails_at_args_tolerance_and_names_itself() {
        let diff = Diff {
            tools: Vec::new(),
            unchanged: 1,
        };
        let mut calls = vec![(true, false); 8];
        calls.extend([(true, true); 2]);
        let r = call_routing(&calls);
        let t = CheckThresholds::default();
        let v = check_verdict(&diff, None, Some(&r), None, &t);
        assert_eq!(v.status, Status::Fail);
        assert!(
            v.reason.starts_with(
                "call accuracy 100.0% → 20.0% (-80.0 pts, args_tolerance -2.0 pts; 8 case(s) regressed, 0 fixed, p=0.0039 < 0.015; routing +0.0 pts)"
            ),
            "{}",
            v.reason
        );
        // A looser args_tolerance lets the same drop pass; routing's tolerance is not it.
        let loose = CheckThresholds {
            args_tolerance: Some(0.9),
            ..CheckThresholds::default()
        };
        let v = check_verdict(&diff, None, Some(&r), None, &loose);
        assert_eq!(v.status, Status::Pass, "{}", v.reason);
        assert!(
            v.reason
                .contains("; calls 100.0% → 20.0% (-80.0 pts, p=0.0039);"),
            "{}",
            v.reason
        );
        let tight_routing_only = CheckThresholds {
            tolerance: 0.9,
            ..CheckThresholds::default()
        };
        assert_eq!(
            check_verdict(&diff, None, Some(&r), None, &tight_routing_only).status,
            Status::Pass,
            "args_tolerance defaults to tolerance"
        );
        // A routing drop is a call drop too: one family is tested, and routing names it.
        let routed = routing(&[true; 10], &[false; 10]);
        assert!(routed.calls.is_some());
        let v = check_verdict(&diff, None, Some(&routed), None, &t);
        assert_eq!(v.status, Status::Fail);
        assert!(
            v.reason.starts_with("routing accuracy 100.0% → 0.0%"),
            "{}",
            v.reason
        );
        assert!(!v.reason.contains("call accuracy"), "{}", v.reason);
        // No call right at base while routing was: the call metric measured nothing.
        let v = check_verdict(
            &diff,
            None,
            Some(&call_routing(&[(false, false); 4])),
            None,
            &t,
        );
        assert_eq!(v.status, Status::Incomplete);
        assert!(v.reason.starts_with("call accuracy measured nothing: no call of 4 case(s) was right at base (routing was 100.0%)"), "{}", v.reason);
        // A router that fills no arguments: said, never a pass on arguments.
        let mut r = routing(&[true; 4], &[true; 4]);
        r.calls = None;
        r.calls_not_measured = Some("semantic router".into());
        let v = check_verdict(&diff, None, Some(&r), None, &t);
        assert_eq!(v.status, Status::Pass);
        assert!(
            v.reason
                .contains("call accuracy not measured (semantic router)"),
            "{}",
            v.reason
        );
    }
}
