//! Markdown renderer for the stress report: the fragility table and the flips, for docs and PR
//! comments. Untrusted text (tool names, prompts, answers, the model's paraphrases) goes into code
//! spans, where GitHub parses no markup, links no mention and a newline cannot start a heading.

use std::fmt::Write;

use crate::replay::Direction;
use crate::report::escape::{cell, md_code};
use crate::report::render::terminal::stress::delta_cell;
use crate::report::stress::StressReport;

/// One table cell: a single line, bounded, with Markdown and HTML metacharacters neutralised.
pub fn md(s: &str, max: usize) -> String {
    let mut out = String::new();
    for c in cell(s, max).chars() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '@' => out.push_str("&#64;"),
            _ => out.push(c),
        }
    }
    out
}

pub fn render(report: &StressReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Router `{}` ({}), suite `{}` ({} cases, `{}`), repeats {}. Unperturbed accuracy **{:.1}%** ({}/{}).",
        report.router.identity.kind,
        md_code(&report.router.identity.model, 80, false),
        md_code(&report.suite.source, 80, false),
        report.suite.cases,
        &report.suite.sha256[..19.min(report.suite.sha256.len())],
        report.router.repeats,
        report.base.accuracy * 100.0,
        report.base.correct,
        report.base.cases
    );
    if report.incomplete() {
        let _ = writeln!(
            out,
            "\n**INCOMPLETE**: {} answer(s) missing after retries.",
            report.errors.len()
        );
    }
    let _ = writeln!(
        out,
        "\nChange in suite accuracy (points) with one tool perturbed; · = the edit does not apply.\n"
    );
    let mut header = vec!["tool".to_string(), "cases".to_string()];
    header.extend(
        report
            .perturbations
            .iter()
            .map(|p| md_code(&p.id, 40, true)),
    );
    header.extend(["worst".into(), "fragility".into(), "sensitivity".into()]);
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let aligns: Vec<&str> = header
        .iter()
        .enumerate()
        .map(|(i, _)| {
            if i == 0 || i == header.len() - 3 {
                "---"
            } else {
                "---:"
            }
        })
        .collect();
    let _ = writeln!(out, "|{}|", aligns.join("|"));
    for t in report.ranked() {
        let mut row = vec![md_code(&t.tool, 60, true), t.own_cases.to_string()];
        row.extend(t.results.iter().map(delta_cell));
        row.push(match &t.worst {
            Some(w) => md_code(w, 40, true),
            None => "–".into(),
        });
        row.push(t.fragility.map_or("n/a".into(), |f| format!("{f:.2}")));
        row.push(t.sensitivity.map_or("n/a".into(), |f| format!("{f:.2}")));
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    let _ = writeln!(out);
    for p in &report.perturbations {
        let _ = writeln!(
            out,
            "- {}{}: {}",
            md_code(&p.id, 40, false),
            if p.changes_meaning {
                " (changes meaning: counts towards sensitivity)"
            } else {
                ""
            },
            md_code(&p.summary, 200, false)
        );
    }
    let flipped = report.flipped();
    if flipped.is_empty() {
        return out;
    }
    let _ = writeln!(out, "\n#### Flipped cases\n");
    let _ = writeln!(
        out,
        "| tool × edit | edit | case | prompt | expects | unperturbed → perturbed |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for (t, r) in flipped {
        for f in &r.flips {
            let mark = if f.direction == Direction::Regressed {
                "✗"
            } else {
                "✓"
            };
            let _ = writeln!(
                out,
                "| {} × {} | {} | {mark} {} | {} | {} | {} → {} |",
                md_code(&t.tool, 60, true),
                md_code(&r.id, 40, true),
                md_code(r.detail.as_deref().unwrap_or(""), 90, true),
                md_code(&f.id, 30, true),
                md_code(&f.prompt, 80, true),
                md_code(&f.expect, 50, true),
                md_code(&f.base, 40, true),
                md_code(&f.head, 40, true)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostile_tool_name_stays_in_its_cell() {
        let name = "evil|x\n# Heading\n![i](http://x/p.png) @team <!-- driftgate:ci:gate -->";
        let row = md_code(name, 60, true);
        assert!(!row.contains('\n') && !row.contains("<!--"), "{row}");
        assert!(row.starts_with('`') && row.ends_with('`'), "{row}");
        assert!(row.contains("evil\\|x"), "{row}");
    }

    #[test]
    fn md_cells_cannot_break_the_table_or_mention() {
        assert_eq!(
            md("a|b <script> @team `x` [l](u)\nnext", 80),
            "a\\|b &lt;script&gt; &#64;team \\`x\\` \\[l\\](u) next"
        );
    }
}
