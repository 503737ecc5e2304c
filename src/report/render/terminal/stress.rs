//! Terminal renderer for the stress report: the fragility table (most fragile first), the legend,
//! then every flipped case under the edit that flipped it. Tool text is untrusted: every string
//! from the tools or the suite goes through `cell`.

use std::fmt::Write;

use crate::replay::Direction;
use crate::report::escape::cell;
use crate::report::stress::{PerturbationResult, StressReport};

fn paint(on: bool, code: &str, s: &str) -> String {
    if on {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// Points with a sign: "-5.0", "+0.0"; "·" when the edit did not apply.
pub fn delta_cell(r: &PerturbationResult) -> String {
    match r.delta {
        Some(d) if r.applied => format!("{:+.1}", d * 100.0),
        _ => "·".into(),
    }
}

pub fn render(report: &StressReport, color: bool) -> String {
    let mut out = String::new();
    let status = if report.incomplete() {
        paint(color, "1;33;7", "INCOMPLETE")
    } else {
        paint(color, "1", "done")
    };
    let _ = writeln!(
        out,
        "driftgate stress: {status} — {} tool(s) × {} perturbation(s), {} replays",
        report.tools.len(),
        report.perturbations.len(),
        report.cost.replays
    );
    let _ = writeln!(
        out,
        "tools: {} · suite {} ({} cases, {}) · router: {} {} · repeats {}",
        cell(&report.tools_source, 60),
        cell(&report.suite.source, 60),
        report.suite.cases,
        &report.suite.sha256[..19.min(report.suite.sha256.len())],
        report.router.identity.kind,
        cell(&report.router.identity.model, 60),
        report.router.repeats
    );
    let _ = writeln!(
        out,
        "unperturbed accuracy: {:.1}% ({}/{} cases)",
        report.base.accuracy * 100.0,
        report.base.correct,
        report.base.cases
    );
    for n in &report.notes {
        let _ = writeln!(
            out,
            "{}",
            paint(color, "1;33", &format!("NOTE: {}", cell(n, 300)))
        );
    }
    for e in &report.errors {
        let _ = writeln!(
            out,
            "{}",
            paint(color, "31", &format!("ERROR: {}", cell(e, 300)))
        );
    }

    matrix(report, color, &mut out);
    flipped_cases(report, color, &mut out);
    out
}

/// The change in suite accuracy per tool and perturbation, and what the columns mean.
fn matrix(report: &StressReport, color: bool, out: &mut String) {
    let _ = writeln!(
        out,
        "\nChange in suite accuracy (points) with one tool perturbed; · = edit does not apply"
    );
    let mut header: Vec<String> = vec!["TOOL".into(), "CASES".into()];
    header.extend(report.perturbations.iter().map(|p| p.id.clone()));
    header.extend(["WORST".into(), "FRAGILITY".into(), "SENSITIVITY".into()]);
    let rows: Vec<Vec<String>> = report
        .ranked()
        .into_iter()
        .map(|t| {
            let mut row = vec![cell(&t.tool, 40), t.own_cases.to_string()];
            row.extend(t.results.iter().map(delta_cell));
            row.push(t.worst.clone().unwrap_or_else(|| "-".into()));
            row.push(t.fragility.map_or("n/a".into(), |f| format!("{f:.2}")));
            row.push(t.sensitivity.map_or("n/a".into(), |f| format!("{f:.2}")));
            row
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w - c.chars().count());
            // Names left-aligned, numbers right-aligned.
            if i == 0 || i == cells.len() - 3 {
                let _ = write!(s, "{c}{pad}  ");
            } else {
                let _ = write!(s, "{pad}{c}  ");
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", paint(color, "1", &line(&header)));
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
    let _ = writeln!(
        out,
        "\nfragility = mean over applied meaning-preserving edits of min(1, regressed cases ÷ the tool's own cases right unperturbed)\nsensitivity = the same over meaning-changing edits (marked *): 0 = the router did not feel the tool's meaning change"
    );
    for p in &report.perturbations {
        let id = format!("{}{}", p.id, if p.changes_meaning { " *" } else { "" });
        let _ = writeln!(out, "  {:<16} {}", id, cell(&p.summary, 140));
    }
}

/// Every flipped case, under its tool and perturbation.
fn flipped_cases(report: &StressReport, color: bool, out: &mut String) {
    let flipped = report.flipped();
    if flipped.is_empty() {
        let _ = writeln!(out, "\nNo case flipped under any perturbation.");
        return;
    }
    let _ = writeln!(out, "\nFlipped cases:");
    for (t, r) in flipped {
        let _ = writeln!(
            out,
            "\n{} × {} ({} pts; {} regressed, {} fixed): {}",
            paint(color, "1", &cell(&t.tool, 60)),
            paint(color, "1", &r.id),
            delta_cell(r),
            r.regressed,
            r.fixed,
            cell(r.detail.as_deref().unwrap_or(""), 120)
        );
        for f in &r.flips {
            let mark = if f.direction == Direction::Regressed {
                paint(color, "31", "✗")
            } else {
                paint(color, "32", "✓")
            };
            let _ = writeln!(
                out,
                "  {mark} {} {:?}  expects {}: {} → {}",
                cell(&f.id, 30),
                cell(&f.prompt, 70),
                cell(&f.expect, 50),
                cell(&f.base, 40),
                cell(&f.head, 40)
            );
        }
    }
}
