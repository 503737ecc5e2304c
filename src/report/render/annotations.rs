//! GitHub workflow-command annotations, one per tool, at the tool's line in the committed tools
//! file: `::error` for tools that fail the gate, `::warning` for other changes an agent may
//! notice, `::notice` for the rest. GitHub shows at most 10 of each kind per step, so each kind is
//! capped at 10, most severe first, and the last slot says how many were left out.

use std::fmt::Write;

use crate::diff::Severity;
use crate::report::Report;
use crate::report::escape::{cell, workflow_data, workflow_property};
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
        if let Some(d) = v.drift {
            parts.push(format!("description cosine {:.3}", d.description_cosine));
        }
    }
    parts.join("\n")
}

/// The annotation lines (each ends with a newline), ready to print to stdout in Actions.
pub fn render(report: &Report) -> String {
    let rows = view::tools(report);
    let file = report.head.file.as_deref();
    let mut out = String::new();
    for lvl in [Level::Error, Level::Warning, Level::Notice] {
        let of_level: Vec<&ToolView> = rows.iter().filter(|v| level(v) == lvl).collect();
        let shown = if of_level.len() > PER_KIND {
            PER_KIND - 1
        } else {
            of_level.len()
        };
        for v in &of_level[..shown] {
            let mut props = Vec::new();
            if let Some(f) = file {
                props.push(format!("file={}", workflow_property(f)));
                if let Some(line) = v.line {
                    props.push(format!("line={line}"));
                }
            }
            let title = format!(
                "driftgate: {} {}",
                cell(v.name, 80),
                if v.failed() {
                    "fails the gate".to_string()
                } else {
                    v.severity()
                        .map_or_else(|| "routing moved".to_string(), |s| s.as_str().to_string())
                }
            );
            props.push(format!("title={}", workflow_property(&title)));
            let _ = writeln!(
                out,
                "::{} {}::{}",
                lvl.command(),
                props.join(","),
                workflow_data(&message(v))
            );
        }
        if of_level.len() > shown {
            let _ = writeln!(
                out,
                "::{} title=driftgate::{}",
                lvl.command(),
                workflow_data(&format!(
                    "{} more tool(s) at this level; see the job summary or the full report",
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
}
