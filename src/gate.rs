//! The verdict: thresholds applied to what was measured. Thresholds are data (`Thresholds`), the
//! decision is one function per command, and "incomplete" always outranks "pass".

use serde::Serialize;

use crate::diff::{Diff, Severity};
use crate::error::exit;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    Incomplete,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
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
