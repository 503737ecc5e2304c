//! GitHub-flavoured Markdown: the PR comment and the job summary. The first line is the verdict
//! with the number that decided it; then the flipped cases, the changed tools (most severe first)
//! and the text diffs. Every piece of tool text goes through `escape::md_*` (see there for why).
//! The document is assembled from blocks and cut at a block boundary to stay under GitHub's size
//! limits, with a note that links the full report.

mod lint;
pub mod stress;

use super::pct;
use std::fmt::Write;

use similar::{ChangeTag, TextDiff};

use crate::gate::Status;
use crate::gate::Verdict;
use crate::replay::Direction;
use crate::report::Report;
use crate::report::escape::{md_code, md_fence, md_inline, md_url};
use crate::report::lint::LintReport;
use crate::report::view::{self, ToolView};

/// The PR's changes to the gate's own rules, as a caution block.
fn policy(report: &Report) -> Option<String> {
    let p = report.policy.as_ref()?;
    let mut b = format!("> [!CAUTION]\n> **{}**\n", md_inline(&p.headline()));
    for line in p.lines() {
        let _ = writeln!(b, "> - {}", md_inline(&line));
    }
    Some(b)
}

/// GitHub rejects issue comments longer than this (characters; we count bytes, which is never
/// fewer).
pub const COMMENT_LIMIT: usize = 65_536;
/// GitHub drops a step summary larger than 1 MiB.
pub const SUMMARY_LIMIT: usize = 1024 * 1024;

/// Rows shown before the rest of a list folds into `<details>`.
const OPEN_TOOLS: usize = 5;
const OPEN_FLIPS: usize = 10;
/// Hard caps per list; past them the full report has the rest.
const MAX_ROWS: usize = 200;
/// Characters of one description kept per side in a text diff.
const MAX_TEXT: usize = 3000;

#[derive(Debug, Clone)]
pub struct Options {
    /// Hidden first line identifying the sticky comment (see [`marker`]).
    pub marker: Option<String>,
    /// URL or path of the full report, linked when the document is truncated and in the footer.
    pub link: Option<String>,
    /// Size budget in bytes.
    pub limit: usize,
    /// What the limit belongs to, for the truncation note ("comment", "job summary").
    pub limit_name: &'static str,
    /// An earlier comment said fail or incomplete and this run passes.
    pub now_passes: bool,
    /// The workflow artifact the Action uploads the HTML report (with charts) in, if any.
    pub artifact: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            marker: None,
            link: None,
            limit: COMMENT_LIMIT,
            limit_name: "comment",
            now_passes: false,
            artifact: None,
        }
    }
}

/// `<!-- driftgate:WORKFLOW:JOB -->`. Names are reduced to `[A-Za-z0-9_.]` so a workflow or job
/// name can neither end the HTML comment nor make two markers collide by accident of spelling.
pub fn marker(workflow: &str, job: &str) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("<!-- driftgate:{}:{} -->", safe(workflow), safe(job))
}

/// The verdict line's opening, which the sticky-comment logic reads back to tell whether an
/// earlier comment was failing.
pub fn verdict_prefix(status: Status) -> &'static str {
    match status {
        Status::Pass => "### ✅ driftgate",
        Status::Fail => "### ❌ driftgate",
        Status::Inconclusive => "### ❓ driftgate",
        Status::Incomplete => "### ⚠️ driftgate",
    }
}

pub fn render(report: &Report, opts: &Options) -> String {
    // The first line in plain words where a tool's drop decided; the test behind it follows.
    let plain = view::plain_words(report);
    let head = head(
        report.command.as_str(),
        &report.verdict,
        plain.as_deref(),
        opts,
    );
    // Reading order: the verdict; what the PR changed about its own gate and what it injected;
    // what changed in the tools; then the evidence. Each block has a rank for a comment over
    // GitHub's limit (`assemble`): the evidence tables outrank the text diffs they explain.
    let mut blocks: Vec<(Rank, String)> =
        vec![(Rank::Verdict, head), (Rank::Verdict, context(report))];
    let mut add =
        |rank: Rank, more: Vec<String>| blocks.extend(more.into_iter().map(|b| (rank, b)));
    add(Rank::Verdict, policy(report).into_iter().collect());
    if let Some(s) = &report.scan {
        add(
            Rank::Verdict,
            scan(s, "Injection scan: introduced by this PR"),
        );
    }
    add(
        Rank::Verdict,
        report
            .notes
            .iter()
            .map(|note| format!("> [!WARNING]\n> {}\n", md_inline(note)))
            .collect(),
    );
    add(Rank::Verdict, suggestions(report).into_iter().collect());
    let rows = view::tools(report);
    add(Rank::Detail, text_diffs(&rows));
    add(Rank::Evidence, schema_changes(report).into_iter().collect());
    add(Rank::Evidence, statistics(report));
    add(Rank::Evidence, chart(report).into_iter().collect());
    add(Rank::Evidence, flips(report));
    add(Rank::Evidence, call_flips(report));
    add(Rank::Evidence, tools_table(report, &rows));
    add(Rank::Rest, drift(report).into_iter().collect());
    if let Some(l) = &report.lint {
        add(Rank::Rest, lint::delta(l));
    }
    let footer = footer(report, opts);
    assemble(blocks, footer, opts)
}

/// `check --suggest`: each offered rewrite, linked to its suggestion on the diff where one was
/// posted, else shown as text.
fn suggestions(report: &Report) -> Option<String> {
    if report.suggestions.is_empty() {
        return None;
    }
    let mut out =
        String::from("#### Suggested rewrites (verified by replay on held-out cases)\n\n");
    for s in &report.suggestions {
        let _ = writeln!(
            out,
            "- {}: its held-out cases with the rewrite: {}; {}",
            md_code(&s.target(), 200, false),
            s.held_out.counts(),
            match s.url.as_deref().and_then(crate::report::escape::md_url) {
                Some(u) => format!("[apply it on the diff]({u})"),
                None => format!("the wording:\n\n{}", indent(&md_fence("text", &s.text))),
            }
        );
    }
    Some(out)
}

/// A block indented under a list item.
fn indent(block: &str) -> String {
    block
        .lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The marker, the verdict line (in `plain` words where given, the test behind it folded), every
/// other finding in full, and "now passes".
fn head(command: &str, verdict: &Verdict, plain: Option<&str>, opts: &Options) -> String {
    let mut head = String::new();
    if let Some(m) = &opts.marker {
        head.push_str(m);
        head.push('\n');
    }
    let word = match verdict.status {
        Status::Pass => "pass",
        Status::Fail => "fail",
        Status::Inconclusive => "inconclusive",
        Status::Incomplete => "incomplete",
    };
    let _ = writeln!(
        head,
        "{} {command}: **{word}** — {}",
        verdict_prefix(verdict.status),
        md_inline(plain.unwrap_or(&verdict.reason))
    );
    if plain.is_some() {
        let _ = write!(
            head,
            "\n<details><summary>The test that decided it</summary>\n\n{}\n\n</details>\n",
            md_inline(&verdict.reason)
        );
    }
    // Every finding in full, nothing behind a "+N more": one quoted paragraph each.
    for (kind, title, lines) in [
        ("CAUTION", "Also failing", &verdict.also),
        (
            "WARNING",
            "Warnings (they did not decide the verdict)",
            &verdict.warnings,
        ),
    ] {
        if !lines.is_empty() {
            let _ = write!(head, "\n> [!{kind}]\n> {title}:\n");
            for line in lines {
                let _ = write!(head, ">\n> {}\n", md_inline(line));
            }
        }
    }
    if opts.now_passes && verdict.status == Status::Pass {
        head.push_str("\n**Now passes.** An earlier run of this job failed; this comment was updated in place.\n");
    }
    head
}

/// What a block is worth when the comment must be cut: lower ranks are kept first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Verdict,
    Evidence,
    Detail,
    Rest,
}

/// Keep whole blocks, best rank first, while they fit, and print the kept ones in reading order;
/// if any had to go, say so and link the full report.
fn assemble(blocks: Vec<(Rank, String)>, footer: String, opts: &Options) -> String {
    let note_for = |omitted: usize| {
        let link = match opts.link.as_deref() {
            Some(l) => match md_url(l) {
                Some(u) => format!(" The full report: [{}]({u}).", "report artifact"),
                None => format!(" The full report: {}.", md_code(l, 300, false)),
            },
            None => " Run with `--format json` for the full report.".into(),
        };
        format!(
            "> [!NOTE]\n> Truncated to stay under GitHub's {} size limit: {omitted} section(s) left out.{link}\n",
            opts.limit_name
        )
    };
    let total: usize = blocks.iter().map(|(_, b)| b.len() + 1).sum::<usize>() + footer.len();
    if total <= opts.limit {
        let all: Vec<String> = blocks.into_iter().map(|(_, b)| b).collect();
        return join(&all, &footer, None);
    }
    let reserve = note_for(blocks.len()).len() + footer.len() + 2;
    let mut keep = vec![false; blocks.len()];
    let mut used = 0;
    for rank in [Rank::Verdict, Rank::Evidence, Rank::Detail, Rank::Rest] {
        // Within a rank, in order, up to the first block that does not fit: a table is never
        // kept without the blocks before it of the same rank.
        for (i, (_, b)) in blocks.iter().enumerate().filter(|(_, (r, _))| *r == rank) {
            // The verdict block is always kept; it is small.
            if i == 0 || used + b.len() + 1 + reserve <= opts.limit {
                used += b.len() + 1;
                keep[i] = true;
            } else {
                break;
            }
        }
    }
    let kept: Vec<String> = blocks
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|((_, b), _)| b.clone())
        .collect();
    let omitted = blocks.len() - kept.len();
    let out = join(&kept, &footer, Some(note_for(omitted)));
    if out.len() <= opts.limit {
        out
    } else {
        // Only a verdict line longer than the whole budget gets here; cut it on a char boundary.
        let mut cut = opts.limit;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out[..cut].to_string()
    }
}

fn join(blocks: &[String], footer: &str, note: Option<String>) -> String {
    let mut out = String::new();
    for b in blocks {
        out.push_str(b);
        out.push('\n');
    }
    if let Some(n) = note {
        out.push_str(&n);
        out.push('\n');
    }
    out.push_str(footer);
    out
}

fn context(report: &Report) -> String {
    let mut s = format!(
        "base {} ({} tools) → head {} ({} tools)",
        md_code(&report.base.source, 120, false),
        report.base.tool_count,
        md_code(&report.head.source, 120, false),
        report.head.tool_count
    );
    if let (Some(router), Some(suite)) = (&report.router, &report.suite) {
        let _ = write!(
            s,
            " · router {} {} · suite {} ({} cases, measured with the {} suite)",
            md_code(router.identity.kind.as_str(), 40, false),
            md_code(&router.identity.model, 80, false),
            md_code(&suite.identity.source, 120, false),
            suite.identity.cases,
            suite.measured_with
        );
    }
    let _ = writeln!(
        s,
        " · {} tool(s) changed, {} unchanged",
        report.diff.tools.len(),
        report.diff.unchanged
    );
    s
}

/// A paired metric's move: "87.5% → 25.0% (-62.5 pts, paired 95% CI [-87.5, -37.5])".
fn paired_move(s: &crate::stats::PairedSummary) -> String {
    format!(
        "{} → {} ({:+.1} pts, paired 95% CI [{:+.1}, {:+.1}])",
        pct(s.base_accuracy),
        pct(s.head_accuracy),
        s.delta * 100.0,
        s.delta_ci.lo * 100.0,
        s.delta_ci.hi * 100.0,
    )
}

/// A paired metric's discordant cases and exact test.
fn paired_test(s: &crate::stats::PairedSummary) -> String {
    format!(
        "{} regressed, {} fixed, exact one-sided p = {:.4}",
        s.discordant_right_to_wrong, s.discordant_wrong_to_right, s.p_value_worse
    )
}

fn routing_summary(report: &Report) -> Option<String> {
    let r = report.routing.as_ref()?;
    let s = &r.paired.summary;
    let mut out = format!(
        "**Routing accuracy** {} over {} cases: {}\n",
        paired_move(s),
        s.n_cases,
        paired_test(s)
    );
    if let Some(m) = r.min_detectable_drop {
        let _ = writeln!(
            out,
            "\nThis suite detects a true drop of {:.1} pts or more with 80% power ({} cases at {} base accuracy, a noisy router).",
            m * 100.0,
            s.n_cases,
            pct(s.base_accuracy)
        );
    }
    Some(out)
}

/// The statistics behind the evidence, folded: routing and call accuracy with their intervals,
/// p-values and the drop the suite can detect. Missing answers stay in sight.
fn statistics(report: &Report) -> Vec<String> {
    let Some(r) = report.routing.as_ref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if !r.errors.is_empty() {
        out.push(format!(
            "> [!CAUTION]\n> {} answer(s) missing after retries; the measurement is incomplete. First: {}\n",
            r.errors.len(),
            md_inline(&r.errors[0])
        ));
    }
    let inner: Vec<String> = [routing_summary(report), calls_summary(report)]
        .into_iter()
        .flatten()
        .collect();
    let s = &r.paired.summary;
    out.push(format!(
        "<details><summary>Statistics: routing {} → {} over {} cases, exact one-sided p = {:.4}</summary>\n\n{}\n</details>\n",
        pct(s.base_accuracy),
        pct(s.head_accuracy),
        s.n_cases,
        s.p_value_worse,
        inner.join("\n")
    ));
    out
}

/// Call accuracy beside routing accuracy, or why it was not measured.
fn calls_summary(report: &Report) -> Option<String> {
    let r = report.routing.as_ref()?;
    let Some(c) = &r.calls else {
        let why = r.calls_not_measured.as_ref()?;
        return Some(format!(
            "**Call accuracy** not measured ({}): routing only, not a pass on arguments.\n",
            md_inline(why)
        ));
    };
    let s = &c.paired.summary;
    let mut out = format!(
        "**Call accuracy** (right tool, arguments valid and as expected; {} of {} cases with `args`) {}: {}\n",
        c.cases_with_args,
        s.n_cases,
        paired_move(s),
        paired_test(s)
    );
    if !c.invented.is_empty() {
        out.push_str("\n<details><summary>Parameter names the model invented</summary>\n\n| Tool | Name | Did you mean | Base → head |\n|---|---|---|---:|\n");
        for i in c.invented.iter().take(MAX_ROWS) {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} → {} |",
                md_code(&i.tool, 60, true),
                md_code(&i.name, 60, true),
                i.did_you_mean
                    .as_deref()
                    .map_or("—".into(), |d| md_code(d, 60, true)),
                i.base,
                i.head
            );
        }
        if c.invented.len() > MAX_ROWS {
            let _ = writeln!(
                out,
                "\n…and {} more in the full report.",
                c.invented.len() - MAX_ROWS
            );
        }
        out.push_str("\n</details>\n");
    }
    Some(out)
}

/// A flip's first cell.
fn direction_cell(d: Direction) -> &'static str {
    match d {
        Direction::Regressed => "🔴 regressed",
        Direction::Fixed => "🟢 fixed",
    }
}

/// Cases whose call flipped while routing did not, with the arguments that moved.
fn call_flips(report: &Report) -> Vec<String> {
    let Some(c) = report.routing.as_ref().and_then(|r| r.calls.as_ref()) else {
        return Vec::new();
    };
    if c.paired.flips.is_empty() {
        return not_reproduced(&c.paired.not_reproduced, "Call flips")
            .into_iter()
            .collect();
    }
    let regressed = c.paired.regressed();
    let header =
        "| | Case | Prompt | Base → head | Arguments base → head |\n|---|---|---|---|---|\n";
    let row = |f: &crate::replay::Flip| {
        let moved: Vec<String> = f
            .arguments
            .iter()
            .map(|a| md_code(&view::arg_change(a), 120, true))
            .collect();
        let confirmed = view::confirmation(f, true)
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        format!(
            "| {} | {} | {} | {} → {}{confirmed} | {} |\n",
            direction_cell(f.direction),
            md_code(&f.id, 40, true),
            md_code(&f.prompt, 160, true),
            md_code(&f.base, 100, true),
            md_code(&f.head, 100, true),
            if moved.is_empty() {
                "—".into()
            } else {
                moved.join(", ")
            },
        )
    };
    let title = format!(
        "#### Arguments moved, routing unchanged: {regressed} regressed, {} fixed\n\n{header}",
        c.paired.flips.len() - regressed
    );
    let mut blocks = folded(
        title,
        header,
        &c.paired.flips,
        OPEN_FLIPS,
        "call flip(s)",
        row,
    );
    blocks.extend(not_reproduced(&c.paired.not_reproduced, "Call flips"));
    blocks
}

/// Injection-scan findings: what is new (under `introduced`, titled `title`), then what base
/// already had and what the allowlist accepted. Hidden text shows as escapes and its decoded
/// content.
fn scan(s: &crate::injection::ScanSection, title: &str) -> Vec<String> {
    let row = |b: &mut String, f: &crate::injection::Finding, extra: &str| {
        let hidden = f
            .hidden
            .as_deref()
            .map(|h| format!(" hidden text: {}", md_code(h, 200, true)))
            .unwrap_or_default();
        let _ = writeln!(
            b,
            "| {} | {} | {} | {} | {}{hidden}{extra} |",
            f.level.as_str(),
            md_code(f.rule.as_str(), 40, true),
            md_code(&f.tool, 60, true),
            md_code(&f.field, 80, true),
            md_code(&f.excerpt, 200, true),
        );
    };
    let header = "| Level | Rule | Tool | Field | Text |\n|---|---|---|---|---|\n";
    let mut out = Vec::new();
    if !s.introduced.is_empty() {
        let mut b = format!("#### 🛑 {title}\n\n{header}");
        for f in s.introduced.iter().take(50) {
            row(&mut b, f, "");
        }
        if s.introduced.len() > 50 {
            let _ = writeln!(
                b,
                "\n_{} more in the full report._",
                s.introduced.len() - 50
            );
        }
        out.push(b);
    }
    if !s.existing.is_empty() || !s.allowed.is_empty() {
        let mut b = format!(
            "<details><summary>Injection scan: {} already at base, {} allowed</summary>\n\n{header}",
            s.existing.len(),
            s.allowed.len()
        );
        for f in s.existing.iter().take(50) {
            row(&mut b, f, " (already at base)");
        }
        for a in s.allowed.iter().take(50) {
            row(
                &mut b,
                &a.finding,
                &format!(" allowed: {}", md_code(&a.reason, 200, true)),
            );
        }
        b.push_str("\n</details>\n");
        out.push(b);
    }
    out
}

/// Tools in the comment's chart; more would make the bars unreadable.
const CHART_TOOLS: usize = 12;

/// A name as a Mermaid label: MCP tool names are `[A-Za-z0-9_.-]`; anything else (a quote, a
/// bracket, a newline, a backtick that could end the fence) becomes `_`.
fn mermaid_label(s: &str) -> String {
    s.chars()
        .take(32)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One chart GitHub draws natively: routing accuracy per changed or moved tool (Mermaid
/// `xychart-beta`),
/// base as bars and head as a line (the chart type has no legend, so the title says which).
fn chart(report: &Report) -> Option<String> {
    let r = report.routing.as_ref()?;
    let changed: Vec<&crate::replay::ToolRouting> = r
        .paired
        .per_tool
        .iter()
        .filter(|t| {
            t.cases > 0 && (t.delta != 0.0 || report.diff.tools.iter().any(|d| d.name == t.tool))
        })
        .take(CHART_TOOLS)
        .collect();
    if changed.is_empty() {
        return None;
    }
    let labels: Vec<String> = changed
        .iter()
        .map(|t| format!("\"{}\"", mermaid_label(&t.tool)))
        .collect();
    let series = |f: fn(&crate::replay::ToolRouting) -> f64| {
        changed
            .iter()
            .map(|t| format!("{:.1}", f(t) * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "```mermaid\nxychart-beta\n    title \"Routing accuracy, changed or moved tools: bars base, line head\"\n    x-axis [{}]\n    y-axis \"accuracy %\" 0 --> 100\n    bar [{}]\n    line [{}]\n```\n",
        labels.join(", "),
        series(|t| t.base_accuracy),
        series(|t| t.head_accuracy)
    ))
}

fn flips(report: &Report) -> Vec<String> {
    let flips = view::flips(report);
    let unconfirmed = report
        .routing
        .as_ref()
        .is_some_and(|r| !r.paired.not_reproduced.is_empty());
    if flips.is_empty() && !unconfirmed {
        return Vec::new();
    }
    let regressed = flips
        .iter()
        .filter(|f| f.direction == Direction::Regressed)
        .count();
    let header = "| | Case | Prompt | Expected | Base → head |\n|---|---|---|---|---|\n";
    let row = |f: &crate::replay::Flip| {
        let confirmed = view::confirmation(f, true)
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        format!(
            "| {} | {} | {} | {} | {} → {}{confirmed} |\n",
            direction_cell(f.direction),
            md_code(&f.id, 40, true),
            md_code(&f.prompt, 160, true),
            md_code(&f.expect, 60, true),
            md_code(&f.base, 60, true),
            md_code(&f.head, 60, true),
        )
    };
    let title = format!(
        "#### Flipped cases: {regressed} regressed, {} fixed\n\n{header}",
        flips.len() - regressed
    );
    let mut blocks = if flips.is_empty() {
        Vec::new()
    } else {
        folded(title, header, &flips, OPEN_FLIPS, "flipped case(s)", |f| {
            row(f)
        })
    };
    if let Some(r) = &report.routing {
        blocks.extend(not_reproduced(&r.paired.not_reproduced, "Flips"));
    }
    blocks
}

/// The flips of one metric that did not hold under `--confirm`, as one paragraph.
fn not_reproduced(flips: &[crate::replay::Flip], what: &str) -> Option<String> {
    if flips.is_empty() {
        return None;
    }
    let list: Vec<String> = flips
        .iter()
        .map(|f| {
            let c = view::confirmation(f, false).unwrap_or_default();
            format!("{} {} {c}", md_code(&f.id, 40, false), f.direction)
        })
        .collect();
    Some(format!(
        "{what} that did not reproduce under `--confirm` (no longer counted): {}\n",
        list.join(", ")
    ))
}

/// A table block with the first `open` rows visible and the rest (capped at `MAX_ROWS`) folded
/// into `<details>`, pointing at the full report for anything beyond.
fn folded<T>(
    title: String,
    header: &str,
    items: &[T],
    open: usize,
    what: &str,
    row: impl Fn(&T) -> String,
) -> Vec<String> {
    let mut first = title;
    for item in items.iter().take(open) {
        first.push_str(&row(item));
    }
    let mut blocks = vec![first];
    if items.len() > open {
        let rest = &items[open..];
        let mut more = format!(
            "<details><summary>{} more {what}</summary>\n\n{header}",
            rest.len()
        );
        for item in rest.iter().take(MAX_ROWS) {
            more.push_str(&row(item));
        }
        if rest.len() > MAX_ROWS {
            let _ = writeln!(
                more,
                "\n…and {} more in the full report.",
                rest.len() - MAX_ROWS
            );
        }
        more.push_str("\n</details>\n");
        blocks.push(more);
    }
    blocks
}

fn tools_table(report: &Report, rows: &[ToolView]) -> Vec<String> {
    if rows.is_empty() {
        return vec![format!(
            "No tool definitions changed ({} unchanged).\n",
            report.diff.unchanged
        )];
    }
    let header = "| Tool | Change | Severity | Cosine | Base → head | Δ pts | p | held to | Verdict |\n|---|---|---|---:|---|---:|---:|---:|---|\n";
    let row = |v: &ToolView| {
        let (acc, delta, p, held) = match v.routing {
            Some(r) => (
                format!("{} → {}", pct(r.base_accuracy), pct(r.head_accuracy)),
                format!("{:+.1}", r.delta * 100.0),
                format!("{:.4}", r.p_value_worse),
                view::held(r),
            ),
            None => ("—".into(), "—".into(), "—".into(), "—".into()),
        };
        let cosine = v
            .drift
            .map(|d| format!("{:.3}", d.description_cosine))
            .unwrap_or_else(|| "—".into());
        let name = match v.diff.and_then(|d| d.base_name.as_deref()) {
            Some(base) if base != v.name => format!(
                "{} ← {}",
                md_code(v.name, 60, true),
                md_code(base, 60, true)
            ),
            _ => md_code(v.name, 60, true),
        };
        format!(
            "| {name} | {} | {} | {cosine} | {acc} | {delta} | {p} | {held} | {} |\n",
            v.kinds(),
            v.severity().map_or("—", |s| s.as_str()),
            v.mark()
        )
    };
    let changed = rows.iter().filter(|v| v.diff.is_some()).count();
    let moved = match rows.len() - changed {
        0 => String::new(),
        n => format!(", {n} moved by routing only"),
    };
    let title = format!("#### Tools: {changed} changed{moved}, most severe first\n\n{header}");
    folded(title, header, rows, OPEN_TOOLS, "tool(s)", row)
}

/// Meaning drift: the floor and where it came from, and every measured cosine with its place
/// among meaning-preserving edits; parameter descriptions under their tool.
fn drift(report: &Report) -> Option<String> {
    let d = report.drift.as_ref()?;
    if d.tools.is_empty() {
        return None;
    }
    let source = match d.floor_source {
        crate::cosine::FloorSource::Given => "given",
        crate::cosine::FloorSource::Calibrated => "calibrated for this model",
        crate::cosine::FloorSource::Uncalibrated => {
            "**uncalibrated** for this model: the 0.92 default"
        }
    };
    let mut b = format!(
        "#### Meaning drift\n\n{}, floor {:.2} ({source}).\n\n| Text | Cosine | Meaning-preserving edits above | Verdict |\n|---|---:|---:|---|\n",
        md_code(&d.model, 80, false),
        d.floor
    );
    let pctl =
        |x: Option<f64>| x.map_or_else(|| "—".to_string(), crate::cosine::floors::share_above);
    for t in &d.tools {
        // Below the floor fails only where routing did not measure the tool (`gate`).
        let review = crate::report::view::ruling(report, &t.tool, crate::gate::Metric::Cosine)
            .is_some_and(|x| x.outcome == crate::gate::Outcome::Review);
        let verdict = |below: bool| match (review, below) {
            (_, false) => "✅ ok",
            (true, true) => "📝 below floor; routing decided",
            (false, true) => "❌ below floor",
        };
        let _ = writeln!(
            b,
            "| {} description | {:.3} | {} | {} |",
            md_code(&t.tool, 60, true),
            t.description_cosine,
            pctl(t.benign_edits_above),
            verdict(t.below_floor)
        );
        for p in &t.params {
            let _ = writeln!(
                b,
                "| {} {} | {:.3} | {} | {} |",
                md_code(&t.tool, 60, true),
                md_code(&format!(".{}", p.name), 60, true),
                p.cosine,
                pctl(p.benign_edits_above),
                verdict(p.below_floor)
            );
        }
    }
    Some(b)
}

/// Every schema change the law classified: tool, rule id, pointer, before → after (cut), severity.
/// Text changes have their own diff blocks; here are the rest, so a reader never sees only
/// "input-schema | breaking".
fn schema_changes(report: &Report) -> Option<String> {
    let rows: Vec<(&str, &crate::diff::Change)> = report
        .diff
        .changes()
        .filter(|(_, c)| {
            !matches!(
                c.kind,
                crate::diff::Kind::Description
                    | crate::diff::Kind::Title
                    | crate::diff::Kind::ParamDescription
            )
        })
        .map(|(t, c)| (t.name.as_str(), c))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let side = |v: &Option<serde_json::Value>| {
        v.as_ref()
            .map_or_else(|| "—".to_string(), |v| md_code(&v.to_string(), 80, true))
    };
    let mut b = format!(
        "#### Schema changes ({})\n\n| Tool | Rule | Where | Before → after | Severity |\n|---|---|---|---|---|\n",
        rows.len()
    );
    for (tool, c) in rows.iter().take(50) {
        let _ = writeln!(
            b,
            "| {} | {} | {} | {} → {} | {} |",
            md_code(tool, 60, true),
            md_code(c.rule.as_str(), 40, true),
            if c.pointer.is_empty() {
                "(whole tool)".to_string()
            } else {
                md_code(&c.pointer, 80, true)
            },
            side(&c.before),
            side(&c.after),
            c.severity.as_str()
        );
    }
    if rows.len() > 50 {
        let _ = writeln!(b, "\n{} more in the full report.", rows.len() - 50);
    }
    Some(b)
}

/// One block per changed text (description, parameter description, title): a `diff` fence with
/// the old sentences as `-` and the new as `+`. Inside a fence GitHub renders nothing, so the text
/// shows exactly as written and cannot mention, link or inject markup.
fn text_diffs(rows: &[ToolView]) -> Vec<String> {
    crate::report::view::text_changes(rows, MAX_TEXT)
        .enumerate()
        .map(|(i, c)| {
            let mut b = if i == 0 {
                "#### Text an agent reads, changed\n\n".to_string()
            } else {
                String::new()
            };
            let _ = writeln!(
                b,
                "{} {}\n",
                md_code(c.tool, 80, false),
                md_code(c.pointer, 80, false)
            );
            b.push_str(&md_fence("diff", &line_diff(&c.before, &c.after)));
            b
        })
        .collect()
}

/// One sentence per line, so an edit to one sentence of a long paragraph shows as that sentence
/// changed and the others as context, rather than the whole paragraph replaced.
fn sentences(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if matches!(c, '.' | '?' | '!') && chars.peek() == Some(&' ') {
            chars.next();
            out.push('\n');
        }
    }
    out
}

/// Unified-style lines: ` ` unchanged, `-` base, `+` head.
fn line_diff(old: &str, new: &str) -> String {
    // Every line, the last included, ends in a newline, so a trailing space or newline on one
    // side does not mark its last sentence as changed.
    let lines = |s: &str| {
        let mut t = sentences(crate::report::escape::clean(s, true).trim_end());
        t.push('\n');
        t
    };
    let (old, new) = (lines(old), lines(new));
    let mut out = String::new();
    for ch in TextDiff::from_lines(&old, &new).iter_all_changes() {
        let sign = match ch.tag() {
            ChangeTag::Equal => ' ',
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
        };
        let line = ch.value().trim_end_matches('\n');
        let _ = writeln!(out, "{sign} {line}");
    }
    out
}

fn footer(report: &Report, opts: &Options) -> String {
    let mut s = format!("<sub>driftgate {}", report.driftgate_version);
    if let Some(suite) = &report.suite {
        let _ = write!(
            s,
            " · suite {}",
            md_code(
                &suite.identity.sha256[..19.min(suite.identity.sha256.len())],
                30,
                false
            )
        );
    }
    // The response cache's effect, so a re-run that sent nothing says so (the Action keeps the
    // cache across runs).
    if let Some(r) = &report.routing {
        let side = |x: &crate::replay::RunStats| {
            format!("{} sent, {} from cache", x.requests_sent, x.cache_hits)
        };
        let _ = write!(
            s,
            " · requests: base {}; head {}",
            side(&r.base_stats),
            side(&r.head_stats)
        );
    }
    if let Some(b) = report.router.as_ref().and_then(|r| r.batch.as_ref()) {
        let _ = write!(
            s,
            " · {} answered {} request(s) at a {:.0}% discount",
            md_code(&b.api, 40, false),
            b.requests,
            b.discount * 100.0
        );
    }
    footer_end(s, opts)
}

/// The footer's links (the full report, the charts' artifact) and its close.
fn footer_end(mut s: String, opts: &Options) -> String {
    if let Some(l) = opts.link.as_deref() {
        match md_url(l) {
            Some(u) => {
                let _ = write!(s, " · [full report]({u})");
            }
            None => {
                let _ = write!(s, " · full report: {}", md_code(l, 300, false));
            }
        }
    }
    if let Some(a) = opts.artifact.as_deref() {
        let _ = write!(
            s,
            " · charts: `driftgate-report.html` in the run's {} artifact",
            md_code(a, 100, false)
        );
    }
    s.push_str("</sub>\n");
    s
}

/// The Markdown renderer for `--format markdown` (PR comment size limit), made `runner_safe`
/// because it may go to stdout; the comment and summary posted through the API are not.
pub struct Markdown;

impl crate::report::render::Renderer for Markdown {
    fn format(&self) -> crate::report::render::Format {
        crate::report::render::Format::Markdown
    }
    fn report(&self, report: &Report, _: &crate::report::render::Options) -> String {
        crate::console::runner_safe(&render(report, &Options::default())).into_owned()
    }
    fn lint(&self, report: &LintReport, _: &crate::report::render::Options) -> String {
        crate::console::runner_safe(&lint::document(report, &Options::default())).into_owned()
    }
    fn renders_stress(&self) -> bool {
        true
    }
    fn stress(
        &self,
        report: &crate::report::stress::StressReport,
        _: &crate::report::render::Options,
    ) -> Option<String> {
        Some(crate::console::runner_safe(&stress::render(report)).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mermaid_labels_cannot_leave_their_quotes_or_the_fence() {
        assert_eq!(mermaid_label("read_file-v2.x"), "read_file-v2.x");
        assert_eq!(mermaid_label("a\"]\n```b"), "a______b");
        assert_eq!(mermaid_label(&"n".repeat(50)).len(), 32);
    }

    #[test]
    fn diffs_go_sentence_by_sentence() {
        assert_eq!(
            line_diff(
                "Lists items. Use it often! Fast.",
                "Lists items. Use it rarely! Fast."
            ),
            "  Lists items.\n- Use it often!\n+ Use it rarely!\n  Fast.\n"
        );
        // Decimal points and abbreviations without a following space stay put.
        assert_eq!(sentences("v1.2 costs 0.5s.Next"), "v1.2 costs 0.5s.Next");
        assert_eq!(line_diff("A. B.", "A2. B. "), "- A.\n+ A2.\n  B.\n");
    }

    #[test]
    fn markers_cannot_be_bent_by_workflow_or_job_names() {
        assert_eq!(
            marker("CI / gate", "a-->b"),
            "<!-- driftgate:CI___gate:a___b -->"
        );
    }
}
