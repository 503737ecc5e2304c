//! The verdict: thresholds applied to what was measured. Thresholds are data (`Thresholds`), the
//! decision is one function per command, and "incomplete" always outranks "pass".

use serde::{Deserialize, Serialize};

use crate::diff::{Diff, Severity};
use crate::error::exit;
use crate::lint::{Level, LintSection};
use crate::scan::{FailOn, ScanSection};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    Incomplete,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The thresholds `check` applies; from flags, `driftgate.toml`, or these defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckThresholds {
    pub fail_on: Severity,
    pub cosine_floor: f64,
    /// Largest tolerated accuracy drop (fraction, 0.02 = 2 points), overall and per tool.
    pub tolerance: f64,
    /// When set, a routing drop fails only if its exact one-sided p-value is below this.
    pub require_significance: Option<f64>,
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
            cosine_floor: crate::drift::DEFAULT_COSINE_FLOOR,
            tolerance: 0.02,
            require_significance: None,
            min_base_accuracy: None,
            scan_fail_on: FailOn::High,
        }
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
        && let Some(reason) = nothing_measured(r, t)
    {
        return Verdict {
            status: Status::Incomplete,
            reason,
        };
    }
    let significant = |p: f64| t.require_significance.is_none_or(|alpha| p < alpha);
    let mut failures: Vec<String> = scan_failures(scan, t.scan_fail_on);
    if let Some(r) = routing {
        let s = &r.summary;
        if s.delta < -t.tolerance && significant(s.p_value_worse) {
            failures.push(format!(
                "routing accuracy {:.1}% → {:.1}% ({}, tolerance {}; {} case(s) regressed, {} fixed, p={:.4})",
                s.base_accuracy * 100.0,
                s.head_accuracy * 100.0,
                pts(s.delta),
                pts(-t.tolerance),
                s.discordant_right_to_wrong,
                s.discordant_wrong_to_right,
                s.p_value_worse
            ));
        }
        for tool in &r.per_tool {
            if tool.delta < -t.tolerance && significant(tool.p_value_worse) {
                failures.push(format!(
                    "`{}` routing {:.1}% → {:.1}% ({} over {} case(s), p={:.4})",
                    tool.tool,
                    tool.base_accuracy * 100.0,
                    tool.head_accuracy * 100.0,
                    pts(tool.delta),
                    tool.cases,
                    tool.p_value_worse
                ));
            }
        }
    }
    if let Some(d) = drift {
        for td in d.tools.iter().filter(|x| x.below_floor) {
            failures.push(format!(
                "`{}` description cosine {:.3} < floor {:.2}",
                td.tool, td.description_cosine, d.floor
            ));
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
    }
    if let Some(m) = drift.and_then(|d| d.min()) {
        parts.push(format!(
            "min description cosine {:.3} ≥ {:.2}",
            m.description_cosine, t.cosine_floor
        ));
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
                "{} tool(s) could not be scored by the model (first: {}); {summary}",
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
            v.reason
                .starts_with("1 tool(s) could not be scored by the model (first: `a`: HTTP 500)")
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
                    samples: vec![Sample {
                        outcome: if *r {
                            Outcome::Correct {
                                chosen: Some("a".into()),
                            }
                        } else {
                            Outcome::NoCall
                        },
                        cached: false,
                    }],
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
}
