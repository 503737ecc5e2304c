//! One row per tool that changed or whose routing moved, ranked most severe first. Markdown,
//! annotations and SARIF all list tools in this order, so the top of every view agrees.

use std::cmp::Ordering;

use super::Report;
use crate::cosine::ToolDrift;
use crate::diff::{Change, Severity, Status, ToolDiff};
use crate::gate::{Metric, Outcome, Ruling};
use crate::replay::Direction;
use crate::replay::{Flip, ToolRouting};

#[derive(Debug, Clone)]
pub struct ToolView<'a> {
    /// Name at head (at base for a removed tool).
    pub name: &'a str,
    /// `None` for a tool whose definition did not change but whose routing did.
    pub diff: Option<&'a ToolDiff>,
    pub drift: Option<&'a ToolDrift>,
    pub routing: Option<&'a ToolRouting>,
    /// Call accuracy (tool and arguments), when it was measured.
    pub calls: Option<&'a ToolRouting>,
    /// Why this tool fails the gate (empty: it does not).
    pub failures: Vec<String>,
    /// Injection findings the PR introduced in this tool below the gate's level: never "ok".
    pub findings: usize,
    /// A low cosine that routing overruled: a review note, never "ok".
    pub review: bool,
    /// Where the tool is defined in the head file (absent for removed tools and live servers).
    pub line: Option<usize>,
}

impl ToolView<'_> {
    pub fn failed(&self) -> bool {
        !self.failures.is_empty()
    }

    /// The verdict column: fail, a finding or a review note the reader must see, else ok.
    pub fn mark(&self) -> &'static str {
        if self.failed() {
            "❌ fail"
        } else if self.findings > 0 {
            "⚠️ finding"
        } else if self.review {
            "📝 review"
        } else {
            "✅ ok"
        }
    }

    pub fn severity(&self) -> Option<Severity> {
        self.diff.map(ToolDiff::max_severity)
    }

    pub fn worst_change(&self) -> Option<&Change> {
        self.diff?.changes.iter().max_by_key(|c| c.severity)
    }

    /// "renamed, description" etc.: the distinct change kinds, most severe first.
    pub fn kinds(&self) -> String {
        let Some(d) = self.diff else {
            return "routing only".into();
        };
        let mut changes: Vec<&Change> = d.changes.iter().collect();
        changes.sort_by_key(|c| std::cmp::Reverse(c.severity));
        let mut kinds: Vec<&str> = Vec::new();
        for c in changes {
            if !kinds.contains(&c.kind.as_str()) {
                kinds.push(c.kind.as_str());
            }
        }
        kinds.join(", ")
    }

    pub fn status(&self) -> Option<Status> {
        self.diff.map(|d| d.status)
    }
}

/// A flip's confirmation under `--confirm K`: "confirmed 3/3" for a flip that held, "did not
/// reproduce (1/3)" for one that did not; `None` without `--confirm`.
pub fn confirmation(f: &crate::replay::Flip, held: bool) -> Option<String> {
    let c = f.confirmed?;
    Some(if held {
        format!("confirmed {}/{}", c.reproduced, c.asked)
    } else {
        format!("did not reproduce ({}/{})", c.reproduced, c.asked)
    })
}

/// The tool rows of a report, most severe first: failing tools, then by schema severity, then by
/// routing drop, then by meaning drift; ties by name so the order is stable.
pub fn tools(report: &Report) -> Vec<ToolView<'_>> {
    let drift_of = |name: &str| {
        report
            .drift
            .as_ref()
            .and_then(|d| d.tools.iter().find(|x| x.tool == name))
    };
    let routing_of = |name: &str| {
        report
            .routing
            .as_ref()
            .and_then(|r| r.paired.per_tool.iter().find(|x| x.tool == name))
    };
    let calls_of = |name: &str| {
        report
            .routing
            .as_ref()
            .and_then(|r| r.calls.as_ref())
            .and_then(|c| c.paired.per_tool.iter().find(|x| x.tool == name))
    };
    let mut rows: Vec<ToolView<'_>> = report
        .diff
        .tools
        .iter()
        .map(|d| ToolView {
            name: &d.name,
            diff: Some(d),
            drift: drift_of(&d.name),
            routing: routing_of(&d.name),
            calls: calls_of(&d.name),
            failures: Vec::new(),
            findings: 0,
            review: false,
            line: (d.status != Status::Removed)
                .then(|| report.head.lines.get(&d.name).copied())
                .flatten(),
        })
        .collect();
    if let Some(r) = &report.routing {
        let moved = r
            .paired
            .per_tool
            .iter()
            .chain(r.calls.iter().flat_map(|c| &c.paired.per_tool))
            .filter(|x| x.delta != 0.0);
        for tr in moved {
            if !rows.iter().any(|v| v.name == tr.tool) {
                rows.push(ToolView {
                    name: &tr.tool,
                    diff: None,
                    drift: None,
                    routing: routing_of(&tr.tool),
                    calls: calls_of(&tr.tool),
                    failures: Vec::new(),
                    findings: 0,
                    review: false,
                    line: report.head.lines.get(&tr.tool).copied(),
                });
            }
        }
    }
    for v in &mut rows {
        judged(report, v);
    }
    rows.sort_by(rank);
    rows
}

/// A row's failures and review mark, as the gate ruled them (read, not re-decided).
fn judged(report: &Report, v: &mut ToolView<'_>) {
    let t = &report.thresholds;
    if let Some(r) = v.routing
        && let Some(x) = ruling(report, &r.tool, Metric::Routing)
    {
        v.failures.push(x.message.clone());
    }
    if let Some(c) = v.calls
        && let Some(x) = ruling(report, &c.tool, Metric::Calls)
    {
        v.failures.push(x.message.clone());
    }
    if let Some(d) = v.drift
        && let Some(all) = &report.drift
        && let Some(x) = ruling(report, &d.tool, Metric::Cosine)
    {
        match x.outcome {
            Outcome::Fail => v.failures.push(format!(
                "description cosine {:.3} < floor {:.2}",
                d.description_cosine, all.floor
            )),
            Outcome::Review => v.review = true,
        }
    }
    if let Some(s) = &report.scan {
        let failing = s.failing(t.scan_fail_on);
        for f in s.introduced.iter().filter(|f| f.tool == v.name) {
            if failing.iter().any(|x| std::ptr::eq(*x, f)) {
                v.failures.push(format!(
                    "introduces {} injection finding {} at {}",
                    f.level.as_str(),
                    f.rule,
                    f.field
                ));
            } else {
                v.findings += 1;
            }
        }
    }
    // The meaning ruling depends on the policy and on whether a model's routing decided.
    if ruling(report, v.name, Metric::Meaning).is_some()
        && let Some(d) = v.diff
    {
        let rules: Vec<&str> = d
            .changes
            .iter()
            .flat_map(|c| &c.shifts)
            .map(|s| s.rule.id())
            .collect();
        v.failures.push(format!(
            "description meaning changed ({})",
            rules.join(", ")
        ));
    }
    if let Some(c) = v
        .diff
        .and_then(|d| d.changes.iter().max_by_key(|c| c.text_severity()))
        && c.text_severity() >= t.fail_on
    {
        v.failures.push(format!(
            "{} change `{}` at or above {}",
            c.text_severity().as_str(),
            c.rule,
            t.fail_on.as_str()
        ));
    }
}

fn rank(a: &ToolView, b: &ToolView) -> Ordering {
    let delta = |v: &ToolView| {
        let r = v.routing.map_or(0.0, |r| r.delta);
        v.calls.map_or(r, |c| r.min(c.delta))
    };
    let cosine = |v: &ToolView| v.drift.map_or(1.0, |d| d.description_cosine);
    b.failed()
        .cmp(&a.failed())
        .then(b.severity().cmp(&a.severity()))
        .then(delta(a).total_cmp(&delta(b)))
        .then(cosine(a).total_cmp(&cosine(b)))
        .then(a.name.cmp(b.name))
}

/// Flipped cases, regressions first (then by id).
pub fn flips(report: &Report) -> Vec<&Flip> {
    let Some(r) = &report.routing else {
        return Vec::new();
    };
    let mut f: Vec<&Flip> = r.paired.flips.iter().collect();
    f.sort_by(|a, b| {
        (a.direction != Direction::Regressed)
            .cmp(&(b.direction != Direction::Regressed))
            .then(a.id.cmp(&b.id))
    });
    f
}

/// One text an agent reads that the PR changed: a description, a parameter's description or a
/// title, with both sides cut to `max_chars` (the renderers' size bound).
pub struct TextChange<'a> {
    pub tool: &'a str,
    pub pointer: &'a str,
    pub before: String,
    pub after: String,
}

/// Every changed text of `rows`, in row order, each side cut to `max_chars`. Lazy, so a renderer
/// that shows the first N pays for N.
pub fn text_changes<'a, 'r>(
    rows: &'r [ToolView<'a>],
    max_chars: usize,
) -> impl Iterator<Item = TextChange<'a>> + 'r {
    let text = move |x: &Option<serde_json::Value>| {
        let s = x
            .as_ref()
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        super::escape::truncate(s, max_chars)
    };
    rows.iter()
        .filter_map(|v| Some((v.name, v.diff?)))
        .flat_map(|(tool, d)| {
            d.changes
                .iter()
                .filter(|c| {
                    matches!(
                        c.kind,
                        crate::diff::Kind::Description
                            | crate::diff::Kind::ParamDescription
                            | crate::diff::Kind::Title
                    )
                })
                .map(move |c| (tool, c))
        })
        .map(move |(tool, c)| TextChange {
            tool,
            pointer: &c.pointer,
            before: text(&c.before),
            after: text(&c.after),
        })
}

/// One argument change of a call flip: `path: "a.txt" → "/a.txt"` (values as JSON).
pub fn arg_change(c: &crate::replay::ArgChange) -> String {
    let v = |x: &Option<serde_json::Value>| {
        x.as_ref()
            .map_or("(absent)".to_string(), serde_json::Value::to_string)
    };
    format!("{}: {} → {}", c.param, v(&c.base), v(&c.head))
}

/// One piece of a word-level diff: unchanged text, or a change (what went, what came).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Words {
    Same(String),
    Changed { del: String, ins: String },
}

/// A word-level diff of `old` → `new` in pieces. Whitespace between two changed words joins the
/// change instead of splitting it, so a rewritten phrase is one deletion and one insertion.
pub fn words(old: &str, new: &str) -> Vec<Words> {
    use similar::{ChangeTag, TextDiff};
    let mut out = Vec::new();
    let (mut del, mut ins, mut gap) = (String::new(), String::new(), String::new());
    let flush = |out: &mut Vec<Words>, del: &mut String, ins: &mut String| {
        if !del.is_empty() || !ins.is_empty() {
            out.push(Words::Changed {
                del: std::mem::take(del),
                ins: std::mem::take(ins),
            });
        }
    };
    for ch in TextDiff::from_words(old, new).iter_all_changes() {
        let v = ch.value();
        match ch.tag() {
            ChangeTag::Equal if v.trim().is_empty() && !(del.is_empty() && ins.is_empty()) => {
                gap.push_str(v);
            }
            ChangeTag::Equal => {
                flush(&mut out, &mut del, &mut ins);
                out.push(Words::Same(std::mem::take(&mut gap) + v));
            }
            tag => {
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
    if !gap.is_empty() {
        out.push(Words::Same(gap));
    }
    out
}

/// The threshold a tool's p-value was held to (`ToolRouting::held_to`), or "—" where its flips
/// were too few to ever reach it: every format prints the same column.
pub fn held(t: &ToolRouting) -> String {
    t.held_to.map_or_else(|| "—".into(), |a| format!("{a:.4}"))
}

/// The paired measurement behind `metric`: routing, or call accuracy where it was measured.
pub fn paired(r: &crate::replay::Routing, metric: Metric) -> Option<&crate::replay::Paired> {
    match metric {
        Metric::Routing => Some(&r.paired),
        Metric::Calls => r.calls.as_ref().map(|c| &c.paired),
        Metric::Meaning | Metric::Cosine => None,
    }
}

/// The gate's ruling on `tool` by `metric`, if it made one.
pub fn ruling<'a>(report: &'a Report, tool: &str, metric: Metric) -> Option<&'a Ruling> {
    report
        .verdict
        .rulings
        .iter()
        .find(|x| x.tool == tool && x.metric == metric)
}

/// The verdict in plain words, when a tool's drop decided it: "`schedule_appointment`: 7 of 8
/// prompts reached it before, 2 of 8 now; 3 went to `reschedule_appointment`, 2 to
/// `send_reminder`". `None` when something else decided (the reason then stands on its own).
pub fn plain_words(report: &Report) -> Option<String> {
    let r = report.routing.as_ref()?;
    let by = report.verdict.decided_by.as_ref()?;
    // The shifts' line names its words itself; a cosine never decides alone by a tool's drop.
    let rows = &paired(r, by.metric)?.per_tool;
    let x = rows.iter().find(|x| x.tool == by.tool)?;
    let n = x.cases;
    let count = |acc: f64| (acc * n as f64).round() as usize;
    if by.metric == Metric::Calls {
        return Some(format!(
            "`{}`: {} of {n} prompts got a right call (tool and arguments) before, {} of {n} now; routing did not decide it",
            x.tool,
            count(x.base_accuracy),
            count(x.head_accuracy)
        ));
    }
    let mut went: Vec<(String, usize)> = Vec::new();
    for f in r
        .paired
        .flips
        .iter()
        .filter(|f| f.direction == Direction::Regressed && f.expect == x.tool)
    {
        match went.iter_mut().find(|(t, _)| *t == f.head) {
            Some((_, k)) => *k += 1,
            None => went.push((f.head.clone(), 1)),
        }
    }
    went.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let went: Vec<String> = went
        .iter()
        .enumerate()
        .map(|(i, (t, k))| {
            if i == 0 {
                format!("{k} went to `{t}`")
            } else {
                format!("{k} to `{t}`")
            }
        })
        .collect();
    let tail = if went.is_empty() {
        String::new()
    } else {
        format!("; {}", went.join(", "))
    };
    Some(format!(
        "`{}`: {} of {n} prompts reached it before, {} of {n} now{tail}",
        x.tool,
        count(x.base_accuracy),
        count(x.head_accuracy)
    ))
}
