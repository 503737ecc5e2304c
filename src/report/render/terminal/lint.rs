//! The terminal rendering of `driftgate lint`'s report, and the lint findings table `check`'s
//! lint delta shares.

use std::fmt::Write;

use super::{Paint, scan_section, table, verdict_word};
use crate::report::escape::{cell, clean};
use crate::report::lint::LintReport;

/// A finding's level, in its colour.
fn painted(p: &Paint, l: crate::lint::Level) -> String {
    let code = match l {
        crate::lint::Level::Error => "1;31",
        crate::lint::Level::Warning => "33",
        crate::lint::Level::Note => "36",
    };
    p.wrap(code, l.as_str())
}

/// One line of evidence per finding: the numbers for a pair, the scope words for a note.
fn detail(f: &crate::lint::Finding) -> String {
    if let Some(x) = &f.pair {
        let a = &x.affinity;
        let cos = a
            .embedding
            .map(|e| format!(", cosine {e:.2}"))
            .unwrap_or_default();
        return format!(
            "score {:.2}: name {:.2} (edit {:.2}, prefix {:.2}, suffix {:.2}, terms {:.2}), words {:.2}{cos}; {}",
            x.score,
            a.name,
            a.name_edit,
            a.name_prefix,
            a.name_suffix,
            a.name_terms,
            a.description,
            x.gate.detail
        );
    }
    if let Some(n) = &f.scope {
        return format!("+{}; {}", n.extra_terms.join(", +"), n.gate.detail);
    }
    f.message.clone()
}

/// Findings as a table. In a PR report (`pr`) the message says what the PR did and the evidence
/// follows on the same line.
pub(super) fn findings(
    p: &Paint,
    findings: &[crate::lint::Finding],
    prefix: &str,
    pr: bool,
    out: &mut String,
) {
    let rows: Vec<Vec<String>> = findings
        .iter()
        .map(|f| {
            let what = if pr {
                format!("{} — {}", f.message, detail(f))
            } else {
                detail(f)
            };
            vec![
                f.level.as_str().to_string(),
                f.rule.to_string(),
                cell(&f.tools.join(" ↔ "), 64),
                cell(&what, 200),
            ]
        })
        .collect();
    for (i, l) in table(&["LEVEL", "RULE", "TOOLS", "EVIDENCE"], &rows)
        .into_iter()
        .enumerate()
    {
        let l = match i {
            0 => p.wrap("1", &l),
            _ => {
                let level = findings[i - 1].level;
                let n = level.as_str().len();
                format!("{}{}", painted(p, level), &l[n..])
            }
        };
        let _ = writeln!(out, "{prefix}{l}");
    }
}

/// `driftgate lint`'s report.
pub(super) fn render(report: &LintReport, p: &Paint) -> String {
    let mut out = String::new();
    let (word, code) = verdict_word(report.verdict.status);
    let _ = writeln!(
        out,
        "driftgate lint: {} — {}",
        p.wrap(code, word),
        clean(&report.verdict.reason, false)
    );
    let l = &report.lint;
    let mut line = format!(
        "tools: {} ({} tools)",
        cell(&report.tools.source, 80),
        report.tools.tool_count
    );
    let x = &l.pairs;
    let _ = write!(
        line,
        " · {} pairs: {} dropped by the schema gate, {} vetoed, {} scored · threshold {:.2}",
        x.total_pairs,
        x.dropped_by_gate,
        x.vetoed,
        x.scored.len(),
        x.weights.threshold
    );
    let _ = write!(
        line,
        " · {}",
        l.embedding_model
            .as_deref()
            .map_or("words only (no embedding)".to_string(), |m| cell(m, 60))
    );
    let _ = writeln!(out, "{line}");
    scan_section(&report.scan, "Injection scan", p, &mut out);
    let list = &l.findings;
    if list.is_empty() {
        let _ = writeln!(out, "\nNo lint findings.");
    } else {
        out.push('\n');
        findings(p, list, "", false, &mut out);
    }
    quality(&l.tools, &mut out);
    shadowing(l, &mut out);
    coherence(&l.coherence, &mut out);
    if let Some(m) = &l.llm {
        model_scores(m, p, &mut out);
    }
    out
}

/// The deterministic TDQS signals, one row per tool.
fn quality(tools: &[crate::lint::ToolQuality], out: &mut String) {
    let _ = writeln!(out, "\nDefinition quality (deterministic TDQS signals):");
    let yes = |b: bool| if b { "yes" } else { "-" }.to_string();
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|q| {
            vec![
                cell(&q.name, 40),
                q.param_count.to_string(),
                q.required_param_count.to_string(),
                format!("{:.0}", q.schema_description_coverage),
                q.params_with_enums.to_string(),
                q.schema_depth.to_string(),
                q.union_choice_count.to_string(),
                q.invocation_cost.to_string(),
                yes(q.has_output_schema),
                yes(q.has_annotations),
                yes(q.title_is_meaningful),
                q.input_hash.clone(),
                q.hard_gates.join(", "),
            ]
        })
        .collect();
    let header = [
        "TOOL",
        "PARAMS",
        "REQ",
        "DESC%",
        "ENUMS",
        "DEPTH",
        "UNIONS",
        "COST",
        "OUT",
        "ANN",
        "TITLE",
        "HASH",
        "HARD GATES",
    ];
    for l in table(&header, &rows) {
        let _ = writeln!(out, "  {l}");
    }
}

/// Shadowing risks found, and candidates the purpose check rejected.
fn shadowing(l: &crate::lint::LintSection, out: &mut String) {
    let found = &l.shadowing_risks;
    let rejected = &l.shadowing_rejected;
    let lines = found
        .iter()
        .map(|r| ("shadowing risk", "may lose to its cheap sibling", r))
        .chain(
            rejected
                .iter()
                .map(|r| ("shadow candidate rejected", "/", r)),
        );
    for (what, joint, r) in lines {
        let _ = writeln!(
            out,
            "  {what}: `{}` (cost {}) {joint} `{}` (cost {}): {}",
            cell(&r.tool, 40),
            r.invocation_cost,
            cell(&r.cheaper_sibling, 40),
            r.cheaper_sibling_invocation_cost,
            cell(&r.justification, 160)
        );
    }
}

/// The server's coherence grade, by dimension.
fn coherence(c: &crate::lint::coherence::Coherence, out: &mut String) {
    let _ = writeln!(
        out,
        "\nServer coherence ({}): {:.1} (tier {})",
        cell(&c.source, 20),
        c.score,
        c.tier
    );
    for (name, d) in c.dimensions() {
        let _ = writeln!(
            out,
            "  {name:<27} {}  {}",
            d.score,
            cell(&d.justification, 160)
        );
    }
    if let Some(s) = &c.summary {
        let _ = writeln!(out, "  {}", cell(s, 300));
    }
}

/// `--llm`: the model's grades per tool, its smells and flags, the server's scores and the
/// requests it took.
fn model_scores(m: &crate::lint::llm::LlmReport, p: &Paint, out: &mut String) {
    let _ = writeln!(
        out,
        "\nModel scores ({} {}, {}):",
        m.router,
        cell(&m.model, 60),
        m.prompt
    );
    let g = |x: Option<u8>| x.map_or("-".to_string(), |v| v.to_string());
    let rows: Vec<Vec<String>> = m
        .tools
        .iter()
        .map(|t| {
            let v = t.grades.as_ref().map(|x| x.values());
            let mut r = vec![cell(&t.name, 40)];
            r.extend((0..6).map(|i| g(v.map(|v| v[i]))));
            r.push(if t.tier == crate::lint::llm::UNSCORED {
                "-".to_string()
            } else {
                format!("{:.1}", t.score)
            });
            r.push(t.tier.to_string());
            r.push(if t.cached { "cached" } else { "" }.to_string());
            r
        })
        .collect();
    let header = [
        "TOOL",
        "PURPOSE",
        "USAGE",
        "BEHAVIOUR",
        "PARAMS",
        "CONCISE",
        "CONTEXT",
        "SCORE",
        "TIER",
        "",
    ];
    for l in table(&header, &rows) {
        let _ = writeln!(out, "  {l}");
    }
    // Smells (dimensions below 3) and flags (hard gates, contradictions) stay apart.
    for t in &m.tools {
        if !t.flags.is_empty() {
            let _ = writeln!(
                out,
                "  {} `{}`: {}",
                p.wrap("1;33", "flag"),
                cell(&t.name, 40),
                t.flags.join(", ")
            );
        }
        if !t.smells.is_empty() {
            let _ = writeln!(
                out,
                "  smell `{}`: {} below 3",
                cell(&t.name, 40),
                t.smells.join(", ")
            );
        }
    }
    if let (Some(s), Some(t)) = (m.server_score, m.server_tier) {
        let _ = writeln!(
            out,
            "Description quality {s:.1} (tier {t}) = round1(0.6·mean + 0.4·min)"
        );
    }
    if let (Some(s), Some(t)) = (m.overall_score, m.overall_tier) {
        let _ = writeln!(
            out,
            "Overall {s:.1} (tier {t}) = round1(0.7·description quality + 0.3·coherence)"
        );
    }
    for e in &m.errors {
        let _ = writeln!(
            out,
            "  {}",
            p.wrap("1;33", &format!("unscored: {}", cell(e, 160)))
        );
    }
    let _ = writeln!(
        out,
        "Requests: {} sent, {} cached, {} retries; tokens {} in, {} out",
        m.requests_sent, m.cache_hits, m.retries, m.input_tokens, m.output_tokens
    );
}
