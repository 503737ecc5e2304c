//! Lint in Markdown: `lint`'s whole document, and the section of `check`'s comment that says
//! what the PR introduced and fixed, and the scores it moved.

use std::fmt::Write;

use super::{Options, Rank, assemble, footer_end, head, scan};
use crate::lint::{Finding, LintDelta};
use crate::report::escape::md_code;
use crate::report::lint::LintReport;

/// `driftgate lint`'s report: the verdict, the tool set, the injection scan, every finding.
pub(super) fn document(report: &LintReport, opts: &Options) -> String {
    let context = format!(
        "tools {} ({} tools)\n",
        md_code(&report.tools.source, 120, false),
        report.tools.tool_count
    );
    let mut blocks = vec![
        (Rank::Verdict, head("lint", &report.verdict, None, opts)),
        (Rank::Verdict, context),
    ];
    blocks.extend(
        scan(&report.scan, "Injection scan")
            .into_iter()
            .map(|b| (Rank::Verdict, b)),
    );
    let table = table("Lint findings", &report.lint.findings)
        .unwrap_or_else(|| "No lint findings.\n".to_string());
    blocks.push((Rank::Evidence, table));
    let footer = footer_end(format!("<sub>driftgate {}", report.driftgate_version), opts);
    assemble(blocks, footer, opts)
}

/// `check`: what the PR introduced or fixed ("this PR makes `read_file` and `read_text_file`
/// confusable"), and the scores it moved.
pub(super) fn delta(l: &LintDelta) -> Vec<String> {
    [
        table("Lint: introduced by this PR", &l.introduced),
        table("Lint: fixed by this PR", &l.fixed),
        score_changes(&l.score_changes),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Findings as a table under `title`, the first 50 of them; nothing when there are none.
fn table(title: &str, findings: &[Finding]) -> Option<String> {
    if findings.is_empty() {
        return None;
    }
    let mut b = format!("#### {title}\n\n| Level | Rule | Tools | Finding |\n|---|---|---|---|\n");
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
}

/// `check`: the TDQS scores the PR moved (coherence and its dimensions).
fn score_changes(changes: &[crate::lint::ScoreChange]) -> Option<String> {
    if changes.is_empty() {
        return None;
    }
    let mut b = "#### Lint: scores this PR moved\n\n".to_string();
    for c in changes {
        let _ = writeln!(b, "- {}", md_code(&c.message, 300, true));
    }
    Some(b)
}
