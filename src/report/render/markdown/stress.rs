//! Markdown renderer for the stress report: the fragility table and the flips, for docs and PR
//! comments. Untrusted text is escaped so it cannot break the table or inject markup/mentions.

use std::fmt::Write;

use crate::replay::Direction;
use crate::report::escape::cell;
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
        report.router.kind,
        md(&report.router.model, 80),
        md(&report.suite.source, 80),
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
    header.extend(report.perturbations.iter().map(|p| format!("`{}`", p.id)));
    header.extend(["worst".into(), "fragility".into()]);
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let aligns: Vec<&str> = header
        .iter()
        .enumerate()
        .map(|(i, _)| {
            if i == 0 || i == header.len() - 2 {
                "---"
            } else {
                "---:"
            }
        })
        .collect();
    let _ = writeln!(out, "|{}|", aligns.join("|"));
    for t in report.ranked() {
        let mut row = vec![
            format!("`{}`", t.tool.replace('`', "'")),
            t.own_cases.to_string(),
        ];
        row.extend(t.results.iter().map(delta_cell));
        row.push(t.worst.clone().unwrap_or_else(|| "–".into()));
        row.push(t.fragility.map_or("n/a".into(), |f| format!("{f:.2}")));
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    let _ = writeln!(out);
    for p in &report.perturbations {
        let _ = writeln!(out, "- `{}`: {}", p.id, md(&p.summary, 200));
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
                "| `{}` × `{}` | {} | {mark} {} | {} | {} | {} → {} |",
                t.tool.replace('`', "'"),
                r.id,
                md(r.detail.as_deref().unwrap_or(""), 90),
                md(&f.id, 30),
                md(&f.prompt, 80),
                md(&f.expect, 50),
                md(&f.base, 40),
                md(&f.head, 40)
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md_cells_cannot_break_the_table_or_mention() {
        assert_eq!(
            md("a|b <script> @team `x` [l](u)\nnext", 80),
            "a\\|b &lt;script&gt; &#64;team \\`x\\` \\[l\\](u) next"
        );
    }
}
