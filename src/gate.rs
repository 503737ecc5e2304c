//! The verdict: thresholds applied to what was measured. Thresholds are data (`Thresholds`), the
//! decision is one function per command, and "incomplete" always outranks "pass".

use serde::{Deserialize, Serialize};

use crate::diff::{Diff, Severity};
use crate::error::exit;

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
}

impl Default for CheckThresholds {
    fn default() -> Self {
        CheckThresholds {
            fail_on: Severity::High,
            cosine_floor: crate::drift::DEFAULT_COSINE_FLOOR,
            tolerance: 0.02,
            require_significance: None,
        }
    }
}

fn pts(x: f64) -> String {
    format!("{:+.1} pts", x * 100.0)
}

/// `driftgate check`: incomplete outranks everything; then routing (the ground truth), then
/// meaning drift, then the schema law. The reason names the deciding number.
pub fn check_verdict(
    diff: &Diff,
    drift: Option<&crate::drift::Drift>,
    routing: Option<&crate::replay::Routing>,
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
    let significant = |p: f64| t.require_significance.is_none_or(|alpha| p < alpha);
    let mut failures: Vec<String> = Vec::new();
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
    Verdict {
        status: Status::Pass,
        reason: parts.join("; "),
    }
}
