//! A self-contained HTML report: one file, no network (a Content-Security-Policy of
//! `default-src 'none'` with our one style and one script allowed by hash), readable with
//! JavaScript off (the script only adds a filter box to the flips table), charts as inline SVG
//! (`chart`). Every piece of tool text goes through `escape::html`, which shows hidden characters
//! and writes markup characters as entities, so a description can open no tag and run nothing.

pub mod chart;
mod lint;
pub mod stress;

use super::pct;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use base64::Engine;
use sha2::{Digest, Sha256};

use crate::gate::Status;
use crate::replay::{Direction, Flip, Routing, ToolRouting};
use crate::report::Report;
use crate::report::escape::html;
use crate::report::lint::LintReport;
use crate::report::render::{Format, Options, Renderer};
use crate::report::stress::StressReport;
use crate::report::view::{self, ToolView};
use crate::stats::{Confusion, Interval, Z_95, wilson};

pub struct Html;

impl Renderer for Html {
    fn format(&self) -> Format {
        Format::Html
    }
    fn report(&self, report: &Report, _opts: &Options) -> String {
        render(report)
    }
    fn lint(&self, report: &LintReport, _opts: &Options) -> String {
        lint(report)
    }
    fn renders_stress(&self) -> bool {
        true
    }
    fn stress(&self, report: &StressReport, _opts: &Options) -> Option<String> {
        Some(stress::render(report))
    }
}

/// Rows of a list past which the rest is left to the JSON report (the page stays light).
const MAX_ROWS: usize = 500;
/// Tools in one chart or matrix axis; past this the chart shows the ones that moved most.
const MAX_AXIS: usize = 40;
/// Characters of one text kept per side in a word diff.
const MAX_TEXT: usize = 6000;

const STYLE: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1200px;padding:16px 24px;color:#222;background:#fff}\
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}\
.verdict{padding:10px 14px;border-radius:6px;font-size:16px;margin:8px 0 16px}\
.pass{background:#e6f4ea;border:1px solid #2e7d32}.fail{background:#fdecea;border:1px solid #c62828}\
.incomplete{background:#fff4e5;border:1px solid #ef6c00}\
table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f5f5f5}td.num{text-align:right;font-variant-numeric:tabular-nums}\
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}\
.worse{color:#c62828}.better{color:#2e7d32}.muted{color:#666}\
.diff{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12.5px;background:#fafafa;border:1px solid #eee;padding:8px;margin:4px 0 14px}\
del{background:#fdecea;color:#8e1b1b}ins{background:#e6f4ea;color:#1b5e20;text-decoration:none}\
.chart{overflow-x:auto;margin:6px 0}.chart svg{max-width:none}\
input[type=search]{font-size:14px;padding:4px 8px;margin:6px 0;width:320px}\
ul.notes li{margin:2px 0}";

/// The filter box: shown and wired only when scripts run; the table is complete without it.
const SCRIPT: &str = "(function(){var f=document.getElementById('flip-filter');if(!f)return;\
f.hidden=false;f.addEventListener('input',function(){var q=f.value.toLowerCase();\
document.querySelectorAll('#flips tbody tr').forEach(function(r){\
r.hidden=q!==''&&r.textContent.toLowerCase().indexOf(q)<0;});});})();";

fn csp_hash(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The document around `body`: our style and script, and a policy that forbids every fetch
/// (scripts, styles, images, frames, fonts, connections) but those two and `data:` images. Made
/// `runner_safe`, as it may go to stdout in a workflow: plotters writes each SVG label on a line
/// of its own, where `::error::` from a tool name would otherwise start a line.
pub fn page(title: &str, body: &str) -> String {
    let doc = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src {style}; \
script-src {script}; img-src data:; base-uri 'none'; form-action 'none'\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<meta name=\"generator\" content=\"driftgate {version}\">\n\
<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\
<script>{SCRIPT}</script>\n</body>\n</html>\n",
        style = csp_hash(STYLE),
        script = csp_hash(SCRIPT),
        version = crate::report::VERSION,
        title = html(title, false),
    );
    crate::console::runner_safe(&doc).into_owned()
}

fn pts(x: f64) -> String {
    format!("{:+.1}", x * 100.0)
}

fn status_class(s: Status) -> &'static str {
    match s {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Inconclusive => "inconclusive",
        Status::Incomplete => "incomplete",
    }
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pass => "PASS",
        Status::Fail => "FAIL",
        Status::Inconclusive => "INCONCLUSIVE",
        Status::Incomplete => "INCOMPLETE",
    }
}

/// A table from a header and rows of ready (escaped) cells; a cell starting with `\u{1}` is
/// right-aligned (a number).
pub fn table(id: Option<&str>, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    match id {
        Some(id) => {
            let _ = write!(out, "<table id=\"{id}\">");
        }
        None => out.push_str("<table>"),
    }
    out.push_str("<thead><tr>");
    for h in head {
        let _ = write!(out, "<th>{h}</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in rows.iter().take(MAX_ROWS) {
        out.push_str("<tr>");
        for c in r {
            match c.strip_prefix('\u{1}') {
                Some(n) => {
                    let _ = write!(out, "<td class=\"num\">{n}</td>");
                }
                None => {
                    let _ = write!(out, "<td>{c}</td>");
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    if rows.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "<p class=\"muted\">{} more rows are in the JSON report.</p>",
            rows.len() - MAX_ROWS
        );
    }
    out
}

fn num(s: impl std::fmt::Display) -> String {
    format!("\u{1}{s}")
}

fn code(s: &str) -> String {
    format!("<code>{}</code>", html(s, false))
}

fn figure(svg: String) -> String {
    format!("<div class=\"chart\">{svg}</div>\n")
}

/// Word by word ([`view::words`]): what went in `<del>`, what came in `<ins>`, all escaped.
pub fn word_diff(old: &str, new: &str) -> String {
    let mut out = String::new();
    for piece in view::words(old, new) {
        match piece {
            view::Words::Same(s) => out.push_str(&html(&s, true)),
            view::Words::Changed { del, ins } => {
                if !del.is_empty() {
                    let _ = write!(out, "<del>{}</del>", html(&del, true));
                }
                if !ins.is_empty() {
                    let _ = write!(out, "<ins>{}</ins>", html(&ins, true));
                }
            }
        }
    }
    out
}

pub fn render(report: &Report) -> String {
    let (title, mut b) = verdict(report.command.as_str(), &report.verdict);
    sides(report, &mut b);
    if let Some(p) = &report.policy {
        let _ = writeln!(
            b,
            "<h2>The gate's own rules</h2>\n<p class=\"worse\"><strong>{}</strong></p>\n<ul class=\"notes\">",
            html(&p.headline(), false)
        );
        for line in p.lines() {
            let _ = writeln!(b, "<li>{}</li>", html(&line, false));
        }
        b.push_str("</ul>\n");
    }
    let rows = view::tools(report);
    if let Some(r) = &report.routing {
        routing(report, r, &mut b);
    }
    if let Some(d) = &report.drift {
        drift(d, &mut b);
    }
    changed_tools(&rows, &mut b);
    text_diffs(&rows, &mut b);
    if let Some(l) = &report.lint {
        lint::delta(l, &mut b);
    }
    if !report.notes.is_empty() {
        b.push_str("<h2>Notes</h2>\n<ul class=\"notes\">\n");
        for n in &report.notes {
            let _ = writeln!(b, "<li>{}</li>", html(n, false));
        }
        b.push_str("</ul>\n");
    }
    page(
        &title,
        &footer(&report.driftgate_version, report.schema_version, b),
    )
}

/// `driftgate lint`'s page: the verdict, the tool set, the findings and the pair map.
pub fn lint(report: &LintReport) -> String {
    let (title, mut b) = verdict("lint", &report.verdict);
    let t = &report.tools;
    let row = vec!["tools".into(), code(&t.source), num(t.tool_count)];
    b.push_str(&table(None, &["side", "tools from", "tools"], &[row]));
    lint::section(&report.lint, &mut b);
    page(
        &title,
        &footer(&report.driftgate_version, report.schema_version, b),
    )
}

/// The page's title, and its body up to the verdict and the lines behind it.
fn verdict(command: &str, v: &crate::gate::Verdict) -> (String, String) {
    let mut b = String::new();
    let title = format!("driftgate {command}: {}", status_word(v.status));
    let _ = writeln!(b, "<h1>driftgate {command}</h1>");
    let _ = writeln!(
        b,
        "<div class=\"verdict {}\"><strong>{}</strong> — {}</div>",
        status_class(v.status),
        status_word(v.status),
        html(&v.reason, false)
    );
    for (class, lines) in [("also", &v.also), ("warnings", &v.warnings)] {
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(b, "<ul class=\"notes {class}\">");
        for line in lines {
            let _ = writeln!(b, "<li>{}</li>", html(line, false));
        }
        b.push_str("</ul>\n");
    }
    (title, b)
}

/// `body` with the version line under it.
fn footer(version: &str, schema: u32, mut body: String) -> String {
    let _ = writeln!(
        body,
        "<p class=\"muted\">driftgate {} · report schema {schema}</p>",
        html(version, false)
    );
    body
}

fn sides(report: &Report, b: &mut String) {
    let rows = vec![
        vec![
            "base".into(),
            code(&report.base.source),
            num(report.base.tool_count),
        ],
        vec![
            "head".into(),
            code(&report.head.source),
            num(report.head.tool_count),
        ],
    ];
    b.push_str(&table(None, &["side", "tools from", "tools"], &rows));
    if let (Some(s), Some(r)) = (&report.suite, &report.router) {
        let _ = writeln!(
            b,
            "<p>Suite {} ({} cases, <span class=\"mono\">{}</span>); router {} {} at {}, repeats {}.</p>",
            code(&s.identity.source),
            s.identity.cases,
            html(&s.identity.sha256[..19.min(s.identity.sha256.len())], false),
            html(r.identity.kind.as_str(), false),
            code(&r.identity.model),
            code(&r.identity.host),
            r.repeats
        );
    }
}

fn ci(i: Interval) -> String {
    format!("{:.1}–{:.1}", i.lo * 100.0, i.hi * 100.0)
}

/// A tool's 95% Wilson interval over its cases (the case is the unit, as in the summary).
fn tool_ci(acc: f64, cases: usize) -> Interval {
    wilson(acc * cases as f64, cases as f64, Z_95)
}

/// The tools a chart shows: every tool when they fit, else those that moved most.
fn chart_rows(rows: &[ToolRouting]) -> Vec<&ToolRouting> {
    let mut v: Vec<&ToolRouting> = rows.iter().filter(|t| t.cases > 0).collect();
    if v.len() > MAX_AXIS {
        v.sort_by(|a, b| {
            a.delta
                .partial_cmp(&b.delta)
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        v.truncate(MAX_AXIS);
        v.sort_by(|a, b| a.tool.cmp(&b.tool));
    }
    v
}

fn per_tool_section(title: &str, rows: &[ToolRouting], b: &mut String) {
    let shown = chart_rows(rows);
    if shown.is_empty() {
        return;
    }
    let bars: Vec<chart::Paired> = shown
        .iter()
        .map(|t| chart::Paired {
            label: t.tool.clone(),
            base: t.base_accuracy,
            base_ci: tool_ci(t.base_accuracy, t.cases),
            head: t.head_accuracy,
            head_ci: tool_ci(t.head_accuracy, t.cases),
        })
        .collect();
    b.push_str(&figure(chart::paired_bars(
        &format!("{title} per tool, base vs head (95% Wilson intervals)"),
        &bars,
    )));
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|t| {
            let delta = if t.delta < 0.0 {
                format!("<span class=\"worse\">{}</span>", pts(t.delta))
            } else if t.delta > 0.0 {
                format!("<span class=\"better\">{}</span>", pts(t.delta))
            } else {
                pts(t.delta)
            };
            vec![
                code(&t.tool),
                num(t.cases),
                num(pct(t.base_accuracy)),
                num(pct(t.head_accuracy)),
                num(delta),
                num(t.regressed),
                num(t.fixed),
                num(format!("{:.4}", t.p_value_worse)),
                num(crate::report::view::held(t)),
            ]
        })
        .collect();
    b.push_str(&table(
        None,
        &[
            "tool",
            "cases",
            "base",
            "head",
            "Δ pts",
            "regressed",
            "fixed",
            "p (worse)",
            "held to",
        ],
        &rows,
    ));
}

fn routing(report: &Report, r: &Routing, b: &mut String) {
    let s = &r.paired.summary;
    b.push_str("<h2>Routing replay</h2>\n");
    let _ = writeln!(
        b,
        "<p>Routing accuracy <strong>{}</strong> (95% {}) at base → <strong>{}</strong> ({}) at head: \
{} pts (paired bootstrap 95% {} pts) over {} cases; {} regressed, {} fixed; exact one-sided p = {:.4}.</p>",
        pct(s.base_accuracy),
        ci(s.base_ci),
        pct(s.head_accuracy),
        ci(s.head_ci),
        pts(s.delta),
        format_args!(
            "{:+.1} to {:+.1}",
            s.delta_ci.lo * 100.0,
            s.delta_ci.hi * 100.0
        ),
        s.n_cases,
        s.discordant_right_to_wrong,
        s.discordant_wrong_to_right,
        s.p_value_worse
    );
    if !r.errors.is_empty() {
        b.push_str("<p class=\"worse\"><strong>Not measured:</strong></p><ul class=\"notes\">\n");
        for e in &r.errors {
            let _ = writeln!(b, "<li>{}</li>", html(e, false));
        }
        b.push_str("</ul>\n");
    }
    per_tool_section("Routing accuracy", &r.paired.per_tool, b);
    if let Some(c) = &r.calls {
        let _ = writeln!(
            b,
            "<h2>Call accuracy (right tool, valid and expected arguments)</h2>\n<p>{} → {} ({} pts) over {} cases.</p>",
            pct(c.paired.summary.base_accuracy),
            pct(c.paired.summary.head_accuracy),
            pts(c.paired.summary.delta),
            c.paired.summary.n_cases
        );
        per_tool_section("Call accuracy", &c.paired.per_tool, b);
    } else if let Some(why) = &r.calls_not_measured {
        let _ = writeln!(
            b,
            "<p class=\"muted\">Call accuracy not measured ({}).</p>",
            html(why, false)
        );
    }
    confusions(r, b);
    flips(report, b);
}

/// Base and head confusion matrices over the same axes; a cell whose count moved is outlined.
fn confusions(r: &Routing, b: &mut String) {
    let count = |cs: &[Confusion]| -> BTreeMap<(String, String), u32> {
        cs.iter()
            .map(|c| ((c.expected.clone(), c.chosen.clone()), c.count))
            .collect()
    };
    let (base, head) = (count(&r.base_confusions), count(&r.head_confusions));
    if base.is_empty() && head.is_empty() {
        return;
    }
    // Axes: tools on a changed cell first, then the rest, up to MAX_AXIS each.
    let moved: BTreeSet<&(String, String)> = base
        .keys()
        .chain(head.keys())
        .filter(|k| base.get(*k) != head.get(*k))
        .collect();
    let axis = |pick: fn(&(String, String)) -> &String| -> Vec<String> {
        let mut v: Vec<String> = moved.iter().map(|k| pick(k).clone()).collect();
        v.extend(base.keys().chain(head.keys()).map(|k| pick(k).clone()));
        let mut seen = BTreeSet::new();
        v.retain(|x| seen.insert(x.clone()));
        v.truncate(MAX_AXIS);
        v.sort();
        v
    };
    let rows = axis(|k| &k.0);
    let cols = axis(|k| &k.1);
    let max = base
        .values()
        .chain(head.values())
        .copied()
        .max()
        .unwrap_or(1);
    let grid = |title: &str, m: &BTreeMap<(String, String), u32>| chart::Grid {
        title: title.to_string(),
        row_title: "expected".into(),
        col_title: "chosen".into(),
        cells: rows
            .iter()
            .map(|e| {
                cols.iter()
                    .map(|c| m.get(&(e.clone(), c.clone())).map(|&n| f64::from(n)))
                    .collect()
            })
            .collect(),
        marked: rows
            .iter()
            .enumerate()
            .flat_map(|(ri, e)| {
                cols.iter().enumerate().filter_map({
                    let moved = &moved;
                    move |(ci, c)| moved.contains(&(e.clone(), c.clone())).then_some((ri, ci))
                })
            })
            .collect(),
        rows: rows.clone(),
        cols: cols.clone(),
        scale: chart::Scale::Count {
            max: f64::from(max),
        },
        text: |v| format!("{v:.0}"),
    };
    b.push_str(
        "<h2>Where the wrong answers went (misroutes; outlined where base and head differ)</h2>\n",
    );
    b.push_str(&figure(chart::heatmap(&grid("base", &base))));
    b.push_str(&figure(chart::heatmap(&grid("head", &head))));
}

/// Routing flips, then call flips (arguments moved, routing unchanged), in one filterable table;
/// then the flips `--confirm` did not reproduce.
fn flips(report: &Report, b: &mut String) {
    let flips = view::flips(report);
    let calls = report
        .routing
        .as_ref()
        .and_then(|r| r.calls.as_ref())
        .map_or(&[][..], |c| &c.paired.flips[..]);
    let _ = writeln!(
        b,
        "<h2>Flipped cases ({})</h2>",
        if calls.is_empty() {
            flips.len().to_string()
        } else {
            format!("{} routing, {} arguments only", flips.len(), calls.len())
        }
    );
    if flips.is_empty() && calls.is_empty() {
        b.push_str("<p>No case changed its outcome.</p>\n");
    } else {
        b.push_str(
            "<input id=\"flip-filter\" type=\"search\" placeholder=\"filter flips\" aria-label=\"filter flips\" hidden>\n",
        );
        let rows: Vec<Vec<String>> = flips
            .iter()
            .map(|f| (*f, "routing"))
            .chain(calls.iter().map(|f| (f, "arguments")))
            .map(|(f, metric)| {
                let mut row = flip_row(f);
                row.insert(2, metric.to_string());
                row
            })
            .collect();
        b.push_str(&table(
            Some("flips"),
            &["case", "", "metric", "expected", "base", "head", "prompt"],
            &rows,
        ));
    }
    if let Some(r) = &report.routing {
        let calls_gone = r.calls.iter().flat_map(|c| &c.paired.not_reproduced);
        let gone: Vec<String> = r
            .paired
            .not_reproduced
            .iter()
            .map(|f| (f, "routing"))
            .chain(calls_gone.map(|f| (f, "arguments")))
            .map(|(f, metric)| {
                let c = view::confirmation(f, false).unwrap_or_default();
                format!(
                    "<li>{} {} ({metric}): {}</li>",
                    code(&f.id),
                    f.direction,
                    html(&c, false)
                )
            })
            .collect();
        if !gone.is_empty() {
            let _ = writeln!(
                b,
                "<p>Flips that did not reproduce under <code>--confirm</code> (no longer counted):</p>\n<ul class=\"notes\">\n{}\n</ul>",
                gone.join("\n")
            );
        }
    }
}

fn flip_row(f: &Flip) -> Vec<String> {
    let dir = match f.direction {
        Direction::Regressed => "<span class=\"worse\">regressed</span>",
        Direction::Fixed => "<span class=\"better\">fixed</span>",
    };
    let mut prompt = html(&f.prompt, false);
    for a in &f.arguments {
        let _ = write!(
            prompt,
            "<br><span class=\"mono muted\">{}</span>",
            html(&view::arg_change(a), false)
        );
    }
    let confirmed = view::confirmation(f, true)
        .map(|c| format!(" <span class=\"muted\">{c}</span>"))
        .unwrap_or_default();
    vec![
        code(&f.id),
        dir.to_string(),
        code(&f.expect),
        format!("{} ({}/{})", code(&f.base), f.base_correct, f.repeats),
        format!(
            "{} ({}/{}){confirmed}",
            code(&f.head),
            f.head_correct,
            f.repeats
        ),
        prompt,
    ]
}

fn drift(d: &crate::cosine::Drift, b: &mut String) {
    let mut moved = Vec::new();
    let mut rows = Vec::new();
    for t in &d.tools {
        moved.push(chart::Moved {
            label: t.tool.clone(),
            cosine: t.description_cosine,
            below_floor: t.below_floor,
        });
        rows.push(vec![
            code(&t.tool),
            num(format!("{:.4}", t.description_cosine)),
            num(format!("{:.4}", t.full_text_cosine)),
            t.benign_edits_above
                .map(|p| num(crate::cosine::floors::share_above(p)))
                .unwrap_or_default(),
            if t.below_floor {
                "<span class=\"worse\">below</span>".into()
            } else {
                String::new()
            },
        ]);
        for p in &t.params {
            moved.push(chart::Moved {
                label: format!("{}.{}", t.tool, p.name),
                cosine: p.cosine,
                below_floor: p.below_floor,
            });
        }
    }
    if moved.is_empty() {
        return;
    }
    b.push_str("<h2>How far each changed text moved</h2>\n");
    let _ = writeln!(
        b,
        "<p>Embedding cosine with {}; floor {:.2} (red line).</p>",
        code(&d.model),
        d.floor
    );
    moved.truncate(MAX_AXIS * 2);
    b.push_str(&figure(chart::cosine_strip(
        "cosine to the old text",
        &moved,
        d.floor,
    )));
    b.push_str(&table(
        None,
        &[
            "tool",
            "description cosine",
            "full text cosine",
            "meaning-preserving edits above",
            "floor",
        ],
        &rows,
    ));
}

fn changed_tools(rows: &[ToolView], b: &mut String) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .filter(|v| v.diff.is_some())
        .map(|v| {
            vec![
                code(v.name),
                v.status()
                    .map(|s| format!("{s:?}").to_lowercase())
                    .unwrap_or_default(),
                v.severity().map(|s| s.as_str()).unwrap_or("").to_string(),
                html(&v.kinds(), false),
                v.worst_change()
                    .map(|c| html(&c.message, false))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    let _ = writeln!(b, "<h2>Changed tools ({})</h2>", rows.len());
    if rows.is_empty() {
        b.push_str("<p>No tool changed.</p>\n");
        return;
    }
    b.push_str(&table(
        None,
        &["tool", "status", "severity", "changes", "most severe"],
        &rows,
    ));
}

/// One word diff per changed text, the first `MAX_ROWS` of them (each side cut to `MAX_TEXT`),
/// so a PR that rewrites every description of a huge server still makes a page a browser opens.
fn text_diffs(rows: &[ToolView], b: &mut String) {
    let mut all = crate::report::view::text_changes(rows, MAX_TEXT).peekable();
    if all.peek().is_none() {
        return;
    }
    b.push_str("<h2>Text an agent reads, changed</h2>\n");
    for c in all.by_ref().take(MAX_ROWS) {
        let _ = writeln!(
            b,
            "<h3>{} <span class=\"muted mono\">{}</span></h3>\n<div class=\"diff\">{}</div>",
            code(c.tool),
            html(c.pointer, false),
            word_diff(&c.before, &c.after)
        );
    }
    // Counted without cutting or copying the texts left out.
    let left_out = all.count();
    if left_out > 0 {
        let _ = writeln!(
            b,
            "<p class=\"muted\">{left_out} more text changes are in the JSON report.</p>"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_hashes_match_what_the_page_carries() {
        let p = page("t", "<p>x</p>");
        assert!(p.contains(&format!("<style>{STYLE}</style>")));
        assert!(p.contains(&format!("<script>{SCRIPT}</script>")));
        assert!(p.contains(&csp_hash(STYLE)) && p.contains(&csp_hash(SCRIPT)));
        assert!(p.contains("default-src 'none'"));
    }

    #[test]
    fn word_diff_joins_runs() {
        assert_eq!(
            word_diff("a b c d", "a x y d"),
            "a <del>b c</del><ins>x y</ins> d"
        );
    }

    #[test]
    fn word_diff_marks_and_escapes() {
        assert_eq!(
            word_diff("schedule a <b>call</b>", "book a <b>call</b>"),
            "<del>schedule</del><ins>book</ins> a &lt;b&gt;call&lt;/b&gt;"
        );
    }
}
