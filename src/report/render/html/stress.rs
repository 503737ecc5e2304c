//! The stress report as HTML: the tool × edit fragility heatmap (suite accuracy change with one
//! tool perturbed), the fragility table and every flipped case, escaped as the check page is.

use std::fmt::Write;

use super::{chart, code, figure, flip_row, html, num, page, table};
use crate::report::stress::StressReport;

pub fn render(report: &StressReport) -> String {
    let mut b = String::new();
    b.push_str("<h1>driftgate stress</h1>\n");
    let status = if report.incomplete() {
        format!(
            "<div class=\"verdict incomplete\"><strong>INCOMPLETE</strong> — {} answer(s) missing after retries.</div>",
            report.errors.len()
        )
    } else {
        format!(
            "<div class=\"verdict pass\">Unperturbed accuracy <strong>{:.1}%</strong> ({}/{}).</div>",
            report.base.accuracy * 100.0,
            report.base.correct,
            report.base.cases
        )
    };
    b.push_str(&status);
    let _ = writeln!(
        b,
        "<p>Tools {}; suite {} ({} cases); router {} {}, repeats {}, seed {}.</p>",
        code(&report.tools_source),
        code(&report.suite.source),
        report.suite.cases,
        html(report.router.identity.kind.as_str(), false),
        code(&report.router.identity.model),
        report.router.repeats,
        report.router.seed
    );
    let ranked = report.ranked();
    b.push_str("<h2>Fragility</h2>\n<p>Empty cells: the edit does not apply to the tool. Outlined: some case flipped.</p>\n");
    b.push_str(&figure(chart::heatmap(&grid(report, &ranked))));
    let mut head = vec!["tool".to_string(), "cases".to_string()];
    head.extend(report.perturbations.iter().map(|p| code(&p.id)));
    head.extend(["worst".into(), "fragility".into(), "sensitivity".into()]);
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = ranked
        .iter()
        .map(|t| {
            let mut row = vec![code(&t.tool), num(t.own_cases)];
            row.extend(t.results.iter().map(|r| match (r.applied, r.delta) {
                (true, Some(d)) => num(format!("{:+.1}", d * 100.0)),
                _ => num("·"),
            }));
            row.push(t.worst.as_deref().map(code).unwrap_or_default());
            row.push(num(t.fragility.map_or("n/a".into(), |f| format!("{f:.2}"))));
            row.push(num(t
                .sensitivity
                .map_or("n/a".into(), |f| format!("{f:.2}"))));
            row
        })
        .collect();
    b.push_str(&table(None, &head, &rows));
    b.push_str("<ul class=\"notes\">\n");
    for p in &report.perturbations {
        let _ = writeln!(b, "<li>{}: {}</li>", code(&p.id), html(&p.summary, false));
    }
    b.push_str("</ul>\n");
    let flipped = report.flipped();
    let n: usize = flipped.iter().map(|(_, r)| r.flips.len()).sum();
    let _ = writeln!(b, "<h2>Flipped cases ({n})</h2>");
    if n > 0 {
        b.push_str(
            "<input id=\"flip-filter\" type=\"search\" placeholder=\"filter flips\" aria-label=\"filter flips\" hidden>\n",
        );
        let rows: Vec<Vec<String>> = flipped
            .iter()
            .flat_map(|(t, r)| {
                r.flips.iter().map(move |f| {
                    let mut row = vec![format!("{} × {}", code(&t.tool), code(&r.id))];
                    row.extend(flip_row(f));
                    row
                })
            })
            .collect();
        b.push_str(&table(
            Some("flips"),
            &[
                "tool × edit",
                "case",
                "",
                "expected",
                "unperturbed",
                "perturbed",
                "prompt",
            ],
            &rows,
        ));
    }
    if !report.notes.is_empty() || !report.errors.is_empty() {
        b.push_str("<h2>Notes</h2>\n<ul class=\"notes\">\n");
        for n in report.errors.iter().chain(&report.notes) {
            let _ = writeln!(b, "<li>{}</li>", html(n, false));
        }
        b.push_str("</ul>\n");
    }
    page("driftgate stress", &b)
}

/// The tool × edit heatmap of the most fragile tools.
fn grid(report: &StressReport, ranked: &[&crate::report::stress::ToolStress]) -> chart::Grid {
    let cols: Vec<String> = report.perturbations.iter().map(|p| p.id.clone()).collect();
    let shown: Vec<_> = ranked.iter().take(super::MAX_AXIS).collect();
    chart::Grid {
        title: "suite accuracy change (points) with one tool perturbed".into(),
        row_title: "tool (most fragile first)".into(),
        col_title: "edit".into(),
        rows: shown.iter().map(|t| t.tool.clone()).collect(),
        cols,
        cells: shown
            .iter()
            .map(|t| {
                t.results
                    .iter()
                    .map(|r| if r.applied { r.delta } else { None })
                    .collect()
            })
            .collect(),
        marked: shown
            .iter()
            .enumerate()
            .flat_map(|(ri, t)| {
                t.results
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !r.flips.is_empty())
                    .map(move |(ci, _)| (ri, ci))
            })
            .collect(),
        // Coloured relative to the largest change, so a 3-point drop is visible next to an 8.
        scale: chart::Scale::Signed {
            max: report
                .tools
                .iter()
                .flat_map(|t| t.results.iter().filter_map(|r| r.delta))
                .fold(0.0, |m: f64, d| m.max(d.abs())),
        },
        text: |v| format!("{:+.0}", v * 100.0),
    }
}
