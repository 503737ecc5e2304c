//! The canary watch report in each format: the decision first, then one row per metric. Tool
//! names come from the rollout file and the logs, both untrusted: every one passes `escape`.

use std::fmt::Write;

use super::escape;
use crate::canary::watch::{Decision, Metric, WatchReport};
use crate::console::runner_safe;

fn word(d: Decision) -> &'static str {
    match d {
        Decision::Rollback => "ROLLBACK",
        Decision::Promote => "PROMOTE",
        Decision::Continue => "CONTINUE",
        Decision::Incomplete => "INCOMPLETE",
    }
}

fn ratio(m: &Metric) -> String {
    let r = m.ratio.map_or("–".to_string(), |r| format!("{r:.2}"));
    match (m.ratio_low, m.ratio_high) {
        (Some(lo), Some(hi)) => format!("{r} [{lo:.2}, {hi:.2}]"),
        _ => r,
    }
}

fn state(m: &Metric) -> &'static str {
    if m.worse {
        "worse"
    } else if m.non_inferior {
        "within margin"
    } else if m.blocks {
        "not yet"
    } else {
        "no events"
    }
}

fn rows(r: &WatchReport) -> Vec<[String; 5]> {
    r.metrics
        .iter()
        .map(|m| {
            [
                m.name.clone(),
                format!(
                    "{}/{} ({:.1}%)",
                    m.base_events,
                    r.sessions_base,
                    100.0 * m.base_rate
                ),
                format!(
                    "{}/{} ({:.1}%)",
                    m.head_events,
                    r.sessions_head,
                    100.0 * m.head_rate
                ),
                ratio(m),
                format!("{} (p {:.3})", state(m), m.p_worse),
            ]
        })
        .collect()
}

fn attribution(r: &WatchReport) -> String {
    let a = &r.attribution;
    format!(
        "attributed by definitions {}, by attribute {}, by bucket {}; left out: {} unattributed, {} of an unknown version, {} mixed session(s); {} served against the bucket rule",
        a.by_definitions,
        a.by_attribute,
        a.by_bucket,
        a.unattributed,
        a.unknown_version,
        a.mixed_sessions,
        a.against_bucket
    )
}

/// The stage, the arms' sizes, the split check and the knobs: numbers only.
fn stage_line(r: &WatchReport) -> String {
    format!(
        "stage {} %: {} session(s) in base, {} in head (split p {:.3}); alpha {}, margin {}",
        r.stage, r.sessions_base, r.sessions_head, r.split_p, r.alpha, r.margin
    )
}

fn labelled(r: &WatchReport) -> Option<String> {
    let [b, h] = r.labelled_accuracy.as_ref()?;
    let pct = |a: Option<f64>| a.map_or("–".to_string(), |a| format!("{:.1}%", 100.0 * a));
    Some(format!(
        "labelled accuracy: base {} of {} session(s) ({}), head {} of {} ({})",
        b.right,
        b.sessions,
        pct(b.accuracy),
        h.right,
        h.sessions,
        pct(h.accuracy)
    ))
}

fn needed(r: &WatchReport) -> Option<String> {
    let h = r.hours_needed?;
    Some(format!(
        "at {:.0} session(s)/hour that is about {h:.1} more hour(s)",
        r.sessions_per_hour.unwrap_or(0.0)
    ))
}

/// For a terminal: plain text, control characters shown, and (a runner reads stdout) no line a
/// runner would take for a workflow command.
pub fn terminal(r: &WatchReport) -> String {
    runner_safe(&terminal_text(r)).into_owned()
}

fn terminal_text(r: &WatchReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {}",
        word(r.decision),
        escape::clean(&r.reason, false)
    );
    let _ = writeln!(s, "{}", stage_line(r));
    if let Some(n) = needed(r) {
        let _ = writeln!(s, "{n}");
    }
    if let Some(l) = labelled(r) {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "{}", attribution(r));
    let _ = writeln!(
        s,
        "\n{:<32} {:>20} {:>20} {:>22}  state",
        "metric", "base", "head", "ratio [CS]"
    );
    for row in rows(r) {
        let _ = writeln!(
            s,
            "{:<32} {:>20} {:>20} {:>22}  {}",
            escape::cell(&row[0], 32),
            row[1],
            row[2],
            row[3],
            row[4]
        );
    }
    for n in &r.notes {
        let _ = writeln!(s, "note: {}", escape::clean(n, false));
    }
    s
}

/// A self-contained page: the decision, each charted metric's confidence sequence over the
/// traffic, the metrics table (the check page's style, script and policy).
pub fn html(r: &WatchReport) -> String {
    use crate::report::render::html::{chart, page, table};
    let mut b = String::new();
    let class = match r.decision {
        Decision::Rollback => "fail",
        Decision::Promote => "pass",
        Decision::Continue => "inconclusive",
        Decision::Incomplete => "incomplete",
    };
    let _ = writeln!(
        b,
        "<h1>driftgate canary</h1>\n<div class=\"verdict {class}\"><strong>{}</strong> — {}</div>",
        word(r.decision),
        escape::html(&r.reason, false)
    );
    let _ = writeln!(
        b,
        "<p>{}.{}</p>",
        stage_line(r),
        needed(r)
            .map(|n| format!(" {}.", escape::html(&n, false)))
            .unwrap_or_default()
    );
    if let Some(l) = labelled(r) {
        let _ = writeln!(b, "<p>{}.</p>", escape::html(&l, false));
    }
    for h in &r.history {
        let looks: Vec<chart::Band> = h
            .looks
            .iter()
            .filter_map(|l| {
                Some(chart::Band {
                    x: l.sessions as f64,
                    low: l.low?,
                    high: l.high?,
                })
            })
            .collect();
        if looks.is_empty() {
            continue;
        }
        let title = format!(
            "{}: head / base, {:.0}% confidence sequence",
            h.metric,
            100.0 * (1.0 - r.alpha)
        );
        let _ = writeln!(
            b,
            "<div class=\"chart\">{}</div>",
            chart::sequence(&title, &looks, r.margin)
        );
    }
    let rows: Vec<Vec<String>> = rows(r)
        .into_iter()
        .map(|row| {
            let mut cells = vec![format!("<code>{}</code>", escape::html(&row[0], false))];
            cells.extend(row[1..].iter().map(|c| escape::html(c, false)));
            cells
        })
        .collect();
    b.push_str(&table(
        None,
        &["metric", "base", "head", "head/base [CS]", "state"],
        &rows,
    ));
    let _ = writeln!(b, "<p>{}.</p>", escape::html(&attribution(r), false));
    for n in &r.notes {
        let _ = writeln!(b, "<p class=\"muted\">{}</p>", escape::html(n, false));
    }
    page(&format!("driftgate canary: {}", word(r.decision)), &b)
}

/// For a job summary or an issue: a Markdown table (runner-safe too: it may be printed).
pub fn markdown(r: &WatchReport) -> String {
    runner_safe(&markdown_text(r)).into_owned()
}

fn markdown_text(r: &WatchReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "### driftgate canary: {}\n\n{}\n",
        word(r.decision),
        escape::md_inline(&r.reason)
    );
    let _ = writeln!(
        s,
        "{}.{}\n",
        stage_line(r),
        needed(r).map(|n| format!(" {n}.")).unwrap_or_default()
    );
    s.push_str("| metric | base | head | head/base [CS] | state |\n|---|---:|---:|---:|---|\n");
    for row in rows(r) {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            escape::md_code(&row[0], 60, true),
            row[1],
            row[2],
            row[3],
            row[4]
        );
    }
    if let Some(l) = labelled(r) {
        let _ = writeln!(s, "\n{}.", escape::md_inline(&l));
    }
    let _ = writeln!(s, "\n{}.", escape::md_inline(&attribution(r)));
    for n in &r.notes {
        let _ = writeln!(s, "\n> {}", escape::md_inline(n));
    }
    s
}
