//! The lint section of the Markdown comment: `lint`'s findings, or what `check`'s PR introduced
//! and fixed, and the scores it moved.

use std::fmt::Write;

use crate::report::Report;
use crate::report::escape::md_code;

/// Static-analysis findings: for `check`, only what the PR introduced or fixed ("this PR makes
/// `read_file` and `read_text_file` confusable"); for `lint`, every finding.
pub(super) fn section(report: &Report) -> Vec<String> {
    let Some(l) = &report.lint else {
        return Vec::new();
    };
    let table = |title: &str, findings: &[crate::lint::Finding]| -> Option<String> {
        if findings.is_empty() {
            return None;
        }
        let mut b =
            format!("#### {title}\n\n| Level | Rule | Tools | Finding |\n|---|---|---|---|\n");
        for f in findings.iter().take(50) {
            let tools: Vec<String> = f.tools.iter().map(|t| md_code(t, 60, true)).collect();
            let _ = writeln!(
                b,
                "| {} | {} | {} | {} |",
                f.level.as_str(),
                md_code(f.rule.as_str(), 40, true),
                tools.join(" "),
                md_code(&f.message, 200, true)
            );
        }
        if findings.len() > 50 {
            let _ = writeln!(b, "\n_{} more in the full report._", findings.len() - 50);
        }
        Some(b)
    };
    [
        table(
            "Lint: introduced by this PR",
            l.introduced.as_deref().unwrap_or_default(),
        ),
        table(
            "Lint: fixed by this PR",
            l.fixed.as_deref().unwrap_or_default(),
        ),
        table("Lint findings", l.findings.as_deref().unwrap_or_default()),
        score_changes(l.score_changes.as_deref().unwrap_or_default()),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `check`: the TDQS scores the PR moved (coherence and its dimensions).
fn score_changes(changes: &[crate::lint::ScoreChange]) -> Option<String> {
    if changes.is_empty() {
        return None;
    }
    let mut b = "#### Lint: scores this PR moved

"
    .to_string();
    for c in changes {
        let _ = writeln!(b, "- {}", md_code(&c.message, 300, true));
    }
    Some(b)
}
