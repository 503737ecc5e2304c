//! Terminal renderer: verdict line, a compact table of changes, then word-level diffs of the
//! texts an agent reads. Colour only when asked (the caller honours NO_COLOR and non-TTY).

use std::fmt::Write;

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::Report;
use super::escape::{cell, clean};
use crate::diff::{Kind, Severity};
use crate::gate::Status;

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
    let (word, code) = match report.verdict.status {
        Status::Pass => ("PASS", "1;32"),
        Status::Fail => ("FAIL", "1;31"),
        Status::Incomplete => ("INCOMPLETE", "1;33;7"),
    };
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
    for note in &report.notes {
        let _ = writeln!(
            out,
            "{}",
            p.wrap("1;33", &format!("NOTE: {}", clean(note, false)))
        );
    }
    if report.diff.tools.is_empty() {
        let _ = writeln!(
            out,
            "\nNo changes ({} tools unchanged).",
            report.diff.unchanged
        );
        return out;
    }
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
    out
}

/// Word-level diff: deletions red and struck through, insertions green; without colour the
/// markers `[-…-]` and `{+…+}` (git's word-diff convention) carry the same information.
/// A rewritten phrase reads as one deletion and one insertion: whitespace between changed words
/// joins the change instead of splitting it into many small edits.
pub fn word_diff(old: &str, new: &str, color: bool) -> String {
    let p = Paint { on: color };
    let diff = TextDiff::from_words(old, new);
    let (mut out, mut del, mut ins, mut gap) =
        (String::new(), String::new(), String::new(), String::new());
    let flush = |out: &mut String, del: &mut String, ins: &mut String| {
        if !del.is_empty() {
            out.push_str(&if p.on {
                p.wrap("9;31", del)
            } else {
                format!("[-{del}-]")
            });
        }
        if !ins.is_empty() {
            out.push_str(&if p.on {
                p.wrap("32", ins)
            } else {
                format!("{{+{ins}+}}")
            });
        }
        del.clear();
        ins.clear();
    };
    for ch in diff.iter_all_changes() {
        let v = ch.value();
        match ch.tag() {
            ChangeTag::Equal if v.trim().is_empty() && !(del.is_empty() && ins.is_empty()) => {
                gap.push_str(v);
            }
            ChangeTag::Equal => {
                flush(&mut out, &mut del, &mut ins);
                out.push_str(&gap);
                gap.clear();
                out.push_str(v);
            }
            tag => {
                // Whitespace seen between two changes belongs inside both sides of the change.
                if !gap.is_empty() {
                    if !del.is_empty() {
                        del.push_str(&gap);
                    }
                    if !ins.is_empty() {
                        ins.push_str(&gap);
                    }
                    gap.clear();
                }
                if tag == ChangeTag::Delete {
                    del.push_str(v)
                } else {
                    ins.push_str(v)
                }
            }
        }
    }
    flush(&mut out, &mut del, &mut ins);
    out.push_str(&gap);
    out
}
