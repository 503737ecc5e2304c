//! Lint in the HTML page: `lint`'s findings, coherence and pair map; `check`'s delta.

use std::fmt::Write;

use super::{MAX_AXIS, chart, code, figure, num, table};
use crate::report::escape::html;

/// `lint`'s page body: every finding, the server's coherence, the pair map.
pub(super) fn section(l: &crate::lint::LintSection, b: &mut String) {
    findings("Lint findings", &l.findings, b);
    let c = &l.coherence;
    let _ = writeln!(
        b,
        "<h2>Server coherence ({}): {:.1}, tier {}</h2>",
        html(&c.source, false),
        c.score,
        c.tier
    );
    let rows: Vec<Vec<String>> = c
        .dimensions()
        .into_iter()
        .map(|(name, d)| vec![code(name), num(d.score), html(&d.justification, false)])
        .collect();
    b.push_str(&table(None, &["dimension", "grade", "why"], &rows));
    if let Some(s) = &c.summary {
        let _ = writeln!(b, "<p>{}</p>", html(s, false));
    }
    pair_map(&l.pairs, b);
}

/// `check`'s lint section: what the change introduced, and the scores it moved.
pub(super) fn delta(l: &crate::lint::LintDelta, b: &mut String) {
    findings("Lint findings this change introduced", &l.introduced, b);
    if !l.score_changes.is_empty() {
        let _ = writeln!(b, "<h2>Scores this change moved</h2>\n<ul>");
        for c in &l.score_changes {
            let _ = writeln!(b, "<li>{}</li>", html(&c.message, false));
        }
        b.push_str("</ul>\n");
    }
}

/// A findings table under `title` and its count.
fn findings(title: &str, findings: &[crate::lint::Finding], b: &mut String) {
    let _ = writeln!(b, "<h2>{title} ({})</h2>", findings.len());
    let rows: Vec<Vec<String>> = findings
        .iter()
        .map(|f| {
            vec![
                f.level.as_str().to_string(),
                code(f.rule.as_str()),
                f.tools
                    .iter()
                    .map(|t| code(t))
                    .collect::<Vec<_>>()
                    .join(" "),
                html(&f.message, false),
            ]
        })
        .collect();
    if !rows.is_empty() {
        b.push_str(&table(None, &["level", "rule", "tools", "message"], &rows));
    }
}

/// The scored pairs as a symmetric matrix over the tools they name, red at or above the
/// threshold.
fn pair_map(p: &crate::lint::pairs::PairAnalysis, b: &mut String) {
    let mut names: Vec<String> = Vec::new();
    for pair in &p.scored {
        for n in [&pair.a, &pair.b] {
            if !names.contains(n) && names.len() < MAX_AXIS {
                names.push(n.clone());
            }
        }
    }
    if names.is_empty() {
        return;
    }
    let at = |n: &str| names.iter().position(|x| x == n);
    let mut cells = vec![vec![None; names.len()]; names.len()];
    let mut marked = Vec::new();
    for pair in &p.scored {
        if let (Some(i), Some(j)) = (at(&pair.a), at(&pair.b)) {
            cells[i][j] = Some(pair.score);
            cells[j][i] = Some(pair.score);
            if pair.flagged {
                marked.push((i, j));
                marked.push((j, i));
            }
        }
    }
    let _ = writeln!(
        b,
        "<h2>Confusable pairs</h2>\n<p>{} pairs, {} dropped by the schema gate, {} scored; flagged at score ≥ {:.2} (outlined).</p>",
        p.total_pairs,
        p.dropped_by_gate,
        p.scored.len(),
        p.weights.threshold
    );
    b.push_str(&figure(chart::heatmap(&chart::Grid {
        title: "pair score".into(),
        row_title: "tool".into(),
        col_title: "tool".into(),
        rows: names.clone(),
        cols: names,
        cells,
        marked,
        scale: chart::Scale::Threshold {
            at: p.weights.threshold,
        },
        text: |v| format!("{v:.2}"),
    })));
}
