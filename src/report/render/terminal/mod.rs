//! Terminal renderer: verdict line, a compact table of changes, then word-level diffs of the
//! texts an agent reads. Colour only when asked (the caller honours NO_COLOR and non-TTY).

mod fix;
pub mod import;
mod lint;
pub mod plan;
pub mod stress;
pub mod suite;

use super::pct;
use std::fmt::Write;

use serde_json::Value;

use crate::diff::{Kind, Severity};
use crate::gate::Status;
use crate::replay::Direction;
use crate::report::Report;
use crate::report::escape::{cell, clean};
use crate::report::view;

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn severity(&self, s: Severity, text: &str) -> String {
        let code = match s {
            Severity::Breaking => "1;31",
            Severity::High => "31",
            Severity::Warning => "33",
            Severity::Unknown => "36",
            Severity::Info => "2",
        };
        self.wrap(code, text)
    }
}

pub fn render(report: &Report, color: bool) -> String {
    let p = Paint { on: color };
    let mut out = String::new();
    let (word, code) = verdict_word(report.verdict.status);
    let _ = writeln!(
        out,
        "driftgate {}: {} — {}",
        report.command,
        p.wrap(code, word),
        clean(&report.verdict.reason, false)
    );
    let _ = writeln!(
        out,
        "base: {} ({} tools)  →  head: {} ({} tools)",
        cell(&report.base.source, 80),
        report.base.tool_count,
        cell(&report.head.source, 80),
        report.head.tool_count
    );
    if let Some(pol) = &report.policy {
        let _ = writeln!(
            out,
            "{}",
            p.wrap(
                "1;31",
                &format!("POLICY: {}", clean(&pol.headline(), false))
            )
        );
        for line in pol.lines() {
            let _ = writeln!(out, "  {}", p.wrap("31", &clean(&line, false)));
        }
    }
    // The rest of the verdict, after what the PR changed about the gate.
    for line in &report.verdict.also {
        let _ = writeln!(out, "{} {}", p.wrap("1;31", "ALSO:"), clean(line, false));
    }
    scan(report, &p, &mut out);
    for note in &report.notes {
        let _ = writeln!(
            out,
            "{}",
            p.wrap("1;33", &format!("NOTE: {}", clean(note, false)))
        );
    }
    for line in &report.verdict.warnings {
        let _ = writeln!(out, "{} {}", p.wrap("1;33", "WARNING:"), clean(line, false));
    }
    for s in &report.suggestions {
        let _ = writeln!(
            out,
            "{} {}: held-out {}{}: \"{}\"",
            p.wrap("1;32", "SUGGESTED:"),
            cell(&s.target(), 200),
            s.held_out.counts(),
            s.url
                .as_deref()
                .map(|u| format!(" {}", cell(u, 200)))
                .unwrap_or_default(),
            cell(&s.text, 600)
        );
    }
    routing(report, &p, &mut out);
    calls(report, &p, &mut out);
    drift(report, &p, &mut out);
    lint_delta(report, &p, &mut out);
    if report.diff.tools.is_empty() {
        let _ = writeln!(
            out,
            "\nNo changes ({} tools unchanged).",
            report.diff.unchanged
        );
        return out;
    }
    changes(report, &p, &mut out);
    out
}

/// The diff's changes, one row each, then every changed text as a word diff.
fn changes(report: &Report, p: &Paint, out: &mut String) {
    out.push('\n');
    let rows: Vec<[String; 5]> = report
        .diff
        .changes()
        .map(|(t, c)| {
            [
                c.severity.as_str().to_string(),
                cell(&t.name, 32),
                c.rule.to_string(),
                cell(&c.pointer, 40),
                cell(&c.message, 60),
            ]
        })
        .collect();
    let header = ["SEVERITY", "TOOL", "CHANGE", "WHERE", "DETAIL"];
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String; 5]| -> String {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(widths).enumerate() {
            if i == 4 {
                s.push_str(c);
            } else {
                let _ = write!(s, "{c}{}  ", " ".repeat(w - c.chars().count()));
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", p.wrap("1", &line(&header.map(String::from))));
    for ((_, c), r) in report.diff.changes().zip(&rows) {
        let l = line(r);
        let sev_len = r[0].len();
        let _ = writeln!(
            out,
            "{}{}",
            p.severity(c.severity, &l[..sev_len]),
            &l[sev_len..]
        );
    }
    let _ = writeln!(
        out,
        "\n{} tool(s) changed, {} unchanged.",
        report.diff.tools.len(),
        report.diff.unchanged
    );
    for (t, c) in report.diff.changes() {
        if !matches!(
            c.kind,
            Kind::Description | Kind::ParamDescription | Kind::Title
        ) {
            continue;
        }
        let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(|s| clean(s, true));
        let (old, new) = (
            text(&c.before).unwrap_or_default(),
            text(&c.after).unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "\n{} {}",
            p.wrap("1", &cell(&t.name, 60)),
            p.wrap("2", &cell(&c.pointer, 60))
        );
        let _ = writeln!(
            out,
            "  {}",
            word_diff(&old, &new, p.on).replace('\n', "\n  ")
        );
    }
}

/// A simple left-aligned table; the last column is not padded.
fn table(header: &[&str], rows: &[Vec<String>]) -> Vec<String> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        let last = cells.len().saturating_sub(1);
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            s.push_str(c);
            if i < last {
                s.push_str(&" ".repeat(w - c.chars().count() + 2));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = vec![line(
        &header.iter().map(|h| h.to_string()).collect::<Vec<_>>(),
    )];
    out.extend(rows.iter().map(|r| line(r)));
    out
}

fn routing(report: &Report, p: &Paint, out: &mut String) {
    let Some(r) = &report.routing else { return };
    let s = &r.paired.summary;
    if let (Some(router), Some(suite)) = (&report.router, &report.suite) {
        let _ = writeln!(
            out,
            "router: {} {} · suite {} ({} cases, {}, measured with the {} suite) · repeats {}",
            router.identity.kind,
            cell(&router.identity.model, 60),
            cell(&suite.identity.source, 60),
            suite.identity.cases,
            &suite.identity.sha256[..19.min(suite.identity.sha256.len())],
            suite.measured_with,
            router.repeats
        );
    }
    if !r.errors.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            p.wrap(
                "1;33",
                &format!(
                    "INCOMPLETE: {} answer(s) missing after retries",
                    r.errors.len()
                )
            )
        );
        for e in r.errors.iter().take(10) {
            let _ = writeln!(out, "  {}", cell(e, 160));
        }
    }
    flip_tables(&r.paired.flips, p, out);
    not_reproduced(&r.paired.not_reproduced, "Flips", out);
    let _ = writeln!(
        out,
        "\nRouting accuracy: base {} [{}, {}] → head {} [{}, {}] (Wilson 95%), {} cases",
        pct(s.base_accuracy),
        pct(s.base_ci.lo),
        pct(s.base_ci.hi),
        pct(s.head_accuracy),
        pct(s.head_ci.lo),
        pct(s.head_ci.hi),
        s.n_cases
    );
    paired_delta(s, out);
    if let Some(m) = r.min_detectable_drop {
        let _ = writeln!(
            out,
            "This suite detects a true drop of {:.1} pts or more with 80% power ({} cases at {:.1}% base accuracy, a noisy router)",
            m * 100.0,
            s.n_cases,
            s.base_accuracy * 100.0
        );
    }
    if !s.unstable_cases.is_empty() {
        let _ = writeln!(
            out,
            "Unstable at base (repeats disagree): {}",
            cell(&s.unstable_cases.join(", "), 200)
        );
    }
    moved_tools(&r.paired.per_tool, "TOOL", out);
    let new_confusions: Vec<_> = r
        .head_confusions
        .iter()
        .filter(|c| {
            !r.base_confusions
                .iter()
                .any(|b| b.expected == c.expected && b.chosen == c.chosen && b.count >= c.count)
        })
        .collect();
    for c in new_confusions.iter().take(5) {
        let _ = writeln!(
            out,
            "  prompts meant for `{}` now go to `{}` ({}×)",
            cell(&c.expected, 40),
            cell(&c.chosen, 40),
            c.count
        );
    }
    requests(report, r, out);
}

/// A paired metric's delta, its interval, its discordant cases and the exact test.
fn paired_delta(s: &crate::stats::PairedSummary, out: &mut String) {
    let _ = writeln!(
        out,
        "Paired delta {:+.1} pts, bootstrap 95% CI [{:+.1}, {:+.1}]; {} regressed, {} fixed; exact one-sided p = {:.4}",
        s.delta * 100.0,
        s.delta_ci.lo * 100.0,
        s.delta_ci.hi * 100.0,
        s.discordant_right_to_wrong,
        s.discordant_wrong_to_right,
        s.p_value_worse
    );
}

/// The regressed, then the fixed cases, one row each.
fn flip_tables(all: &[crate::replay::Flip], p: &Paint, out: &mut String) {
    let regressed: Vec<_> = all
        .iter()
        .filter(|f| f.direction == Direction::Regressed)
        .collect();
    let fixed: Vec<_> = all
        .iter()
        .filter(|f| f.direction == Direction::Fixed)
        .collect();
    for (title, flips, code) in [("Regressed", &regressed, "1;31"), ("Fixed", &fixed, "1;32")] {
        if flips.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{}",
            p.wrap(code, &format!("{title} cases ({}):", flips.len()))
        );
        let rows: Vec<Vec<String>> = flips
            .iter()
            .map(|f| {
                let confirmed = crate::report::view::confirmation(f, true)
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default();
                vec![
                    cell(&f.id, 24),
                    cell(&f.expect, 40),
                    format!("{} → {}{confirmed}", cell(&f.base, 64), cell(&f.head, 64)),
                    cell(&f.prompt, 70),
                ]
            })
            .collect();
        for l in table(&["CASE", "EXPECTED", "BASE → HEAD", "PROMPT"], &rows) {
            let _ = writeln!(out, "  {l}");
        }
    }
}

/// Requests per side, tokens with what the prompt cache read and wrote, the cost, the batches.
fn requests(report: &Report, r: &crate::replay::Routing, out: &mut String) {
    let st = |x: &crate::replay::RunStats| {
        format!(
            "{} sent, {} cached, {} reused, {} retries",
            x.requests_sent, x.cache_hits, x.reused, x.retries
        )
    };
    let _ = writeln!(
        out,
        "Requests: base {}; head {}",
        st(&r.base_stats),
        st(&r.head_stats)
    );
    let (i, o) = (
        r.base_stats.input_tokens + r.head_stats.input_tokens,
        r.base_stats.output_tokens + r.head_stats.output_tokens,
    );
    if i + o > 0 {
        let router = report.router.as_ref();
        let cost = router
            .and_then(|r| r.estimated_cost_usd.zip(r.price_per_mtok))
            .map(|(c, [pi, po])| {
                let cached = router
                    .and_then(|r| r.price_cached_input_per_mtok)
                    .map(|p| format!(" (${p} cached)"))
                    .unwrap_or_default();
                format!(" ≈ ${c:.4} at ${pi}/${po} per M tokens{cached}")
            })
            .unwrap_or_default();
        let (read, written) = (
            r.base_stats.cached_input_tokens + r.head_stats.cached_input_tokens,
            r.base_stats.cache_write_tokens + r.head_stats.cache_write_tokens,
        );
        let cache = match (read, written) {
            (0, 0) => String::new(),
            (read, 0) => format!(" ({read} read from the prompt cache)"),
            (read, written) => {
                format!(" ({read} read from the prompt cache, {written} written to it)")
            }
        };
        let _ = writeln!(out, "Tokens: {i} in{cache}, {o} out{cost}");
    }
    if let Some(b) = report.router.as_ref().and_then(|r| r.batch.as_ref()) {
        let _ = writeln!(
            out,
            "Batch: {} answered {} request(s) in {} batch(es){}; cost at a {:.0}% discount",
            b.api,
            b.requests,
            b.batches.len(),
            if b.batches.is_empty() {
                String::new()
            } else {
                format!(" ({})", cell(&b.batches.join(", "), 200))
            },
            b.discount * 100.0
        );
    }
}

/// The per-tool rows that moved (a delta or a flip either way), under a `first` column title.
fn moved_tools(rows: &[crate::replay::ToolRouting], first: &str, out: &mut String) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .filter(|t| t.delta != 0.0 || t.regressed + t.fixed > 0)
        .map(|t| {
            vec![
                cell(&t.tool, 40),
                t.cases.to_string(),
                pct(t.base_accuracy),
                pct(t.head_accuracy),
                format!("{:+.1}", t.delta * 100.0),
                format!("{:.4}", t.p_value_worse),
                crate::report::view::held(t),
            ]
        })
        .collect();
    if !rows.is_empty() {
        let _ = writeln!(out);
        for l in table(
            &[first, "CASES", "BASE", "HEAD", "Δ PTS", "P", "HELD TO"],
            &rows,
        ) {
            let _ = writeln!(out, "  {l}");
        }
    }
}

/// Call accuracy: the summary, flips the arguments caused, tools that moved, invented names.
fn calls(report: &Report, p: &Paint, out: &mut String) {
    let Some(r) = &report.routing else { return };
    let Some(c) = &r.calls else {
        if let Some(why) = &r.calls_not_measured {
            let _ = writeln!(
                out,
                "\nCall accuracy: not measured ({}): routing only, not a pass on arguments",
                cell(why, 120)
            );
        }
        return;
    };
    let s = &c.paired.summary;
    let _ = writeln!(
        out,
        "\nCall accuracy (right tool, arguments valid for its schema and as the case expects; {} of {} case(s) with `args`): base {} [{}, {}] → head {} [{}, {}]",
        c.cases_with_args,
        s.n_cases,
        pct(s.base_accuracy),
        pct(s.base_ci.lo),
        pct(s.base_ci.hi),
        pct(s.head_accuracy),
        pct(s.head_ci.lo),
        pct(s.head_ci.hi),
    );
    paired_delta(s, out);
    for (dir, title, code) in [
        (Direction::Regressed, "Arguments regressed", "1;31"),
        (Direction::Fixed, "Arguments fixed", "1;32"),
    ] {
        let flips: Vec<_> = c
            .paired
            .flips
            .iter()
            .filter(|f| f.direction == dir)
            .collect();
        if flips.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{}",
            p.wrap(
                code,
                &format!("{title}, routing unchanged ({}):", flips.len())
            )
        );
        let rows: Vec<Vec<String>> = flips
            .iter()
            .map(|f| {
                let moved: Vec<String> = f
                    .arguments
                    .iter()
                    .map(crate::report::view::arg_change)
                    .collect();
                let confirmed = crate::report::view::confirmation(f, true)
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default();
                vec![
                    cell(&f.id, 24),
                    format!("{} → {}{confirmed}", cell(&f.base, 64), cell(&f.head, 64)),
                    cell(&moved.join("; "), 100),
                    cell(&f.prompt, 60),
                ]
            })
            .collect();
        for l in table(
            &["CASE", "BASE → HEAD", "ARGUMENTS BASE → HEAD", "PROMPT"],
            &rows,
        ) {
            let _ = writeln!(out, "  {l}");
        }
    }
    not_reproduced(&c.paired.not_reproduced, "Call flips", out);
    moved_tools(&c.paired.per_tool, "TOOL (CALLS)", out);
    if !c.invented.is_empty() {
        let _ = writeln!(
            out,
            "\nParameter names the model invented (calls, base → head):"
        );
        let rows: Vec<Vec<String>> = c
            .invented
            .iter()
            .take(20)
            .map(|i| {
                vec![
                    cell(&i.tool, 40),
                    cell(&i.name, 40),
                    i.did_you_mean
                        .as_deref()
                        .map_or("-".into(), |d| cell(d, 40)),
                    format!("{} → {}", i.base, i.head),
                ]
            })
            .collect();
        for l in table(&["TOOL", "NAME", "DID YOU MEAN", "BASE → HEAD"], &rows) {
            let _ = writeln!(out, "  {l}");
        }
        if c.invented.len() > 20 {
            let _ = writeln!(
                out,
                "  … and {} more in the JSON report",
                c.invented.len() - 20
            );
        }
    }
}

fn drift(report: &Report, p: &Paint, out: &mut String) {
    let Some(d) = &report.drift else { return };
    if d.tools.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nMeaning drift ({}, floor {:.2}{}):",
        cell(&d.model, 60),
        d.floor,
        floor_source(d.floor_source)
    );
    let verdict = |below: bool| {
        if below {
            p.wrap("1;31", "below floor")
        } else {
            "ok".into()
        }
    };
    let pctl =
        |x: Option<f64>| x.map_or_else(|| "—".to_string(), crate::cosine::floors::share_above);
    let mut rows: Vec<Vec<String>> = Vec::new();
    for t in &d.tools {
        rows.push(vec![
            cell(&t.tool, 40),
            format!("{:.3}", t.description_cosine),
            pctl(t.benign_edits_above),
            format!("{:.3}", t.full_text_cosine),
            verdict(t.below_floor),
        ]);
        for pd in &t.params {
            rows.push(vec![
                format!("  .{}", cell(&pd.name, 38)),
                format!("{:.3}", pd.cosine),
                pctl(pd.benign_edits_above),
                String::new(),
                verdict(pd.below_floor),
            ]);
        }
    }
    for l in table(
        &[
            "TOOL / .PARAM",
            "DESCRIPTION COS",
            "BENIGN EDITS ABOVE",
            "FULL TEXT COS",
            "",
        ],
        &rows,
    ) {
        let _ = writeln!(out, "  {l}");
    }
    if d.tools.iter().any(|t| t.benign_edits_above.is_some()) {
        let _ = writeln!(
            out,
            "  (BENIGN EDITS ABOVE: share of measured meaning-preserving edits with a higher cosine; docs/calibration.md)"
        );
    }
}

/// How the floor was chosen, after its number in the drift heading.
fn floor_source(s: crate::cosine::FloorSource) -> &'static str {
    match s {
        crate::cosine::FloorSource::Given => "",
        crate::cosine::FloorSource::Calibrated => ", calibrated for this model",
        crate::cosine::FloorSource::Uncalibrated => {
            ", uncalibrated for this model: the 0.92 default"
        }
    }
}

/// Word-level diff: deletions red and struck through, insertions green; without colour the
/// markers `[-…-]` and `{+…+}` (git's word-diff convention) carry the same information.
/// Pieces from [`view::words`], so a rewritten phrase reads as one deletion and one insertion.
pub fn word_diff(old: &str, new: &str, color: bool) -> String {
    let p = Paint { on: color };
    let mut out = String::new();
    for piece in view::words(old, new) {
        match piece {
            view::Words::Same(s) => out.push_str(&s),
            view::Words::Changed { del, ins } => {
                if !del.is_empty() {
                    out.push_str(&if p.on {
                        p.wrap("9;31", &del)
                    } else {
                        format!("[-{del}-]")
                    });
                }
                if !ins.is_empty() {
                    out.push_str(&if p.on {
                        p.wrap("32", &ins)
                    } else {
                        format!("{{+{ins}+}}")
                    });
                }
            }
        }
    }
    out
}

/// The verdict's word and its ANSI colour.
fn verdict_word(status: Status) -> (&'static str, &'static str) {
    match status {
        Status::Pass => ("PASS", "1;32"),
        Status::Fail => ("FAIL", "1;31"),
        Status::Inconclusive => ("INCONCLUSIVE", "1;33"),
        Status::Incomplete => ("INCOMPLETE", "1;33;7"),
    }
}

// ---- injection scan ------------------------------------------------------------------------------

fn scan_finding(p: &Paint, f: &crate::injection::Finding, extra: &str, out: &mut String) {
    let level = match f.level {
        crate::injection::Level::High => p.wrap("1;31", "high"),
        crate::injection::Level::Medium => p.wrap("33", "medium"),
    };
    let _ = writeln!(
        out,
        "  {level} {} `{}` {}{extra}\n      {}",
        f.rule,
        cell(&f.tool, 60),
        cell(&f.field, 80),
        cell(&f.excerpt, 160)
    );
    if let Some(h) = &f.hidden {
        let _ = writeln!(out, "      hidden text: {}", cell(h, 160));
    }
}

/// What the PR introduced first, then base's and the allowed ones.
fn scan(report: &Report, p: &Paint, out: &mut String) {
    if let Some(s) = &report.scan {
        scan_section(s, "Injection scan: introduced by this PR", p, out);
    }
}

/// A scan's findings under `introduced` (what is new), then base's and the allowed ones.
fn scan_section(s: &crate::injection::ScanSection, introduced: &str, p: &Paint, out: &mut String) {
    for (title, code, list) in [
        (introduced, "1;31", &s.introduced),
        ("Injection scan: already at base", "2", &s.existing),
    ] {
        if list.is_empty() {
            continue;
        }
        let title = format!("{title} ({}):", list.len());
        let _ = writeln!(out, "\n{}", p.wrap(code, &title));
        for f in list {
            scan_finding(p, f, "", out);
        }
    }
    if !s.allowed.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            p.wrap(
                "2",
                &format!(
                    "Injection scan: allowed by the config ({}):",
                    s.allowed.len()
                )
            )
        );
    }
    for a in &s.allowed {
        let reason = format!("  (allowed: {})", cell(&a.reason, 200));
        scan_finding(p, &a.finding, &reason, out);
    }
}

/// `check`: only what the PR introduced or fixed; nothing when lint saw no change.
fn lint_delta(report: &Report, p: &Paint, out: &mut String) {
    let Some(l) = &report.lint else { return };
    for (title, list, code) in [
        ("introduced by this PR", &l.introduced, "1;33"),
        ("fixed by this PR", &l.fixed, "1;32"),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{} {}",
            p.wrap(code, &format!("Lint findings {title} ({}):", list.len())),
            p.wrap("2", "(a heuristic, not part of the verdict)")
        );
        lint::findings(p, list, "  ", true, out);
    }
    if !l.score_changes.is_empty() {
        let _ = writeln!(out, "\nLint scores this PR moved:");
        for x in &l.score_changes {
            let _ = writeln!(out, "  {}", cell(&x.message, 300));
        }
    }
}

use crate::console::runner_safe;

/// The terminal renderer (word-level diffs, colour when asked). Its output goes to a stream a
/// runner reads, so it is made `runner_safe` last.
pub struct Terminal;

impl crate::report::render::Renderer for Terminal {
    fn format(&self) -> crate::report::render::Format {
        crate::report::render::Format::Terminal
    }
    fn report(&self, report: &Report, opts: &crate::report::render::Options) -> String {
        runner_safe(&render(report, opts.color)).into_owned()
    }
    fn lint(
        &self,
        report: &crate::report::lint::LintReport,
        opts: &crate::report::render::Options,
    ) -> String {
        runner_safe(&lint::render(report, &Paint { on: opts.color })).into_owned()
    }
    fn renders_stress(&self) -> bool {
        true
    }
    fn stress(
        &self,
        report: &crate::report::stress::StressReport,
        opts: &crate::report::render::Options,
    ) -> Option<String> {
        Some(runner_safe(&stress::render(report, opts.color)).into_owned())
    }
    fn fix(
        &self,
        report: &crate::report::fix::FixReport,
        opts: &crate::report::render::Options,
    ) -> Option<String> {
        Some(runner_safe(&fix::render(report, opts.color)).into_owned())
    }
    fn suite_check(
        &self,
        check: &crate::suite::check::SuiteCheck,
        _: &crate::report::render::Options,
    ) -> Option<String> {
        Some(runner_safe(&suite::render(check)).into_owned())
    }
}

/// The flips of one metric that did not hold under `--confirm`, on one line.
fn not_reproduced(flips: &[crate::replay::Flip], what: &str, out: &mut String) {
    if flips.is_empty() {
        return;
    }
    let list: Vec<String> = flips
        .iter()
        .map(|f| {
            let c = crate::report::view::confirmation(f, false).unwrap_or_default();
            format!("{} {} {c}", cell(&f.id, 24), f.direction)
        })
        .collect();
    let _ = writeln!(
        out,
        "\n{what} that did not reproduce under --confirm (no longer counted): {}",
        list.join(", ")
    );
}
