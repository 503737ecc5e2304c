//! GitHub workflow-command annotations, one per tool, at the tool's line in the committed tools
//! file: `::error` for tools that fail the gate, `::warning` for other changes an agent may
//! notice, `::notice` for the rest. GitHub shows at most 10 of each kind per step, so each kind is
//! capped at 10, most severe first, and the last slot says how many were left out.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::diff::Severity;
use crate::injection::{FailOn, ScanSection};
use crate::lint::Level as LintLevel;
use crate::report::Report;
use crate::report::escape::{cell, workflow_data, workflow_property};
use crate::report::lint::LintReport;
use crate::report::view::{self, ToolView};

/// GitHub's per-step limit for each of error, warning and notice annotations.
pub const PER_KIND: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Notice,
}

impl Level {
    fn command(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Notice => "notice",
        }
    }
}

fn level(v: &ToolView) -> Level {
    if v.failed() {
        Level::Error
    } else if v.severity().is_some_and(|s| s >= Severity::Unknown)
        || v.routing.is_some_and(|r| r.delta < 0.0)
        || v.calls.is_some_and(|c| c.delta < 0.0)
    {
        Level::Warning
    } else {
        Level::Notice
    }
}

fn message(v: &ToolView) -> String {
    let mut parts: Vec<String> = v.failures.clone();
    if let Some(d) = v.diff {
        for c in &d.changes {
            let m = format!(
                "{} ({}): {}",
                c.rule,
                c.severity.as_str(),
                cell(&c.message, 200)
            );
            parts.push(m);
        }
    }
    if !v.failed() {
        if let Some(r) = v.routing {
            parts.push(format!(
                "routing {:.1}% → {:.1}% ({:+.1} pts, p={:.4})",
                r.base_accuracy * 100.0,
                r.head_accuracy * 100.0,
                r.delta * 100.0,
                r.p_value_worse
            ));
        }
        if let Some(c) = v.calls
            && c.delta != 0.0
        {
            parts.push(format!(
                "call accuracy {:.1}% → {:.1}% ({:+.1} pts, p={:.4})",
                c.base_accuracy * 100.0,
                c.head_accuracy * 100.0,
                c.delta * 100.0,
                c.p_value_worse
            ));
        }
        if let Some(d) = v.drift {
            parts.push(format!("description cosine {:.3}", d.description_cosine));
        }
    }
    parts.join("\n")
}

/// One annotation before escaping: level, the tool's line, title and message.
struct Entry {
    level: Level,
    line: Option<usize>,
    title: String,
    message: String,
}

/// The PR's changes to the gate's own rules come first, one warning each.
fn policy_entries(report: &Report) -> Vec<Entry> {
    let Some(p) = &report.policy else {
        return Vec::new();
    };
    p.lines()
        .into_iter()
        .map(|line| Entry {
            level: Level::Warning,
            line: None,
            title: "driftgate: the PR changes the gate's own rules".into(),
            message: cell(&line, 300),
        })
        .collect()
}

/// Injection findings the PR introduced (for `lint`, every one) come first: an error when they
/// fail the gate, a warning below `--scan-fail-on`.
fn scan_entries(s: &ScanSection, fail_on: FailOn, lines: &BTreeMap<String, usize>) -> Vec<Entry> {
    let failing = s.failing(fail_on);
    s.introduced
        .iter()
        .map(|f| {
            let fails = failing.iter().any(|x| std::ptr::eq(*x, f));
            let hidden = f
                .hidden
                .as_deref()
                .map(|h| format!("\nhidden text: {}", cell(h, 300)))
                .unwrap_or_default();
            Entry {
                level: if fails { Level::Error } else { Level::Warning },
                line: lines.get(&f.tool).copied(),
                title: format!(
                    "driftgate: {} injection finding {} in {}",
                    f.level.as_str(),
                    f.rule,
                    cell(&f.tool, 80)
                ),
                message: format!("{}: {}{hidden}", cell(&f.field, 200), cell(&f.excerpt, 300)),
            }
        })
        .collect()
}

fn tool_entry(v: &ToolView) -> Entry {
    Entry {
        level: level(v),
        line: v.line,
        title: format!(
            "driftgate: {} {}",
            cell(v.name, 80),
            if v.failed() {
                "fails the gate".to_string()
            } else {
                v.severity()
                    .map_or_else(|| "routing moved".to_string(), |s| s.as_str().to_string())
            }
        ),
        message: message(v),
    }
}

/// The annotation lines (each ends with a newline), ready to print to stdout in Actions.
pub fn render(report: &Report) -> String {
    let rows = view::tools(report);
    let scan = report
        .scan
        .as_ref()
        .map(|s| scan_entries(s, report.thresholds.scan_fail_on, &report.head.lines))
        .unwrap_or_default();
    let entries: Vec<Entry> = policy_entries(report)
        .into_iter()
        .chain(scan)
        .chain(rows.iter().map(tool_entry))
        .collect();
    print(&entries, report.head.file.as_deref())
}

/// `driftgate lint`'s annotations: the injection findings, then every lint finding at its
/// first tool's line, an error where it fails the run (`--strict`).
pub fn lint(report: &LintReport) -> String {
    let lines = &report.tools.lines;
    let mut entries = scan_entries(&report.scan, report.scan_fail_on, lines);
    for f in &report.lint.findings {
        let level = match f.level {
            LintLevel::Error | LintLevel::Warning if report.strict => Level::Error,
            LintLevel::Error | LintLevel::Warning => Level::Warning,
            LintLevel::Note => Level::Notice,
        };
        entries.push(Entry {
            level,
            line: f.tools.first().and_then(|t| lines.get(t)).copied(),
            title: format!(
                "driftgate: lint {} {}",
                f.rule,
                cell(&f.tools.join(" ↔ "), 120)
            ),
            message: cell(&f.message, 500),
        });
    }
    print(&entries, report.tools.file.as_deref())
}

/// The entries as workflow commands against `file`, at most [`PER_KIND`] of each level.
fn print(entries: &[Entry], file: Option<&str>) -> String {
    let mut out = String::new();
    for lvl in [Level::Error, Level::Warning, Level::Notice] {
        let of_level: Vec<&Entry> = entries.iter().filter(|e| e.level == lvl).collect();
        let shown = if of_level.len() > PER_KIND {
            PER_KIND - 1
        } else {
            of_level.len()
        };
        for e in &of_level[..shown] {
            let mut props = Vec::new();
            if let Some(f) = file {
                props.push(format!("file={}", workflow_property(f)));
                if let Some(line) = e.line {
                    props.push(format!("line={line}"));
                }
            }
            props.push(format!("title={}", workflow_property(&e.title)));
            let _ = writeln!(
                out,
                "::{} {}::{}",
                lvl.command(),
                props.join(","),
                workflow_data(&e.message)
            );
        }
        if of_level.len() > shown {
            let _ = writeln!(
                out,
                "::{} title=driftgate::{}",
                lvl.command(),
                workflow_data(&format!(
                    "{} more annotation(s) at this level; see the job summary or the full report",
                    of_level.len() - shown
                ))
            );
        }
    }
    out
}

/// The annotations renderer.
pub struct Annotations;

impl super::Renderer for Annotations {
    fn format(&self) -> super::Format {
        super::Format::Annotations
    }
    fn report(&self, report: &Report, _: &super::Options) -> String {
        render(report)
    }
    fn lint(&self, report: &LintReport, _: &super::Options) -> String {
        lint(report)
    }
}
