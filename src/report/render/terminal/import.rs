//! `suite import`'s summary for the terminal: what the import read, kept, dropped, skipped and
//! masked, one note per line (never a masked text itself).

use crate::choice::Choice;
use crate::suite::import::Summary;

/// Lines of a list printed before the rest is counted.
const LISTED: usize = 20;

/// "1 case", "2 cases".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The malformed records, listed (`--strict` refuses the import with them).
pub fn malformed(s: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    listed(&mut out, "malformed", &s.malformed);
    out
}

/// `where: why` lines of a list, the first [`LISTED`] of them.
fn listed(out: &mut Vec<String>, what: &str, items: &[(String, String)]) {
    for (at, why) in items.iter().take(LISTED) {
        out.push(format!(
            "  {what} {}: {}",
            crate::text::tokens::ellipsis(at, 200),
            crate::text::tokens::ellipsis(why, 300)
        ));
    }
    if items.len() > LISTED {
        out.push(format!("  … and {} more {what}", items.len() - LISTED));
    }
}

/// The logged requests that offered another tool list than `--tools`.
fn offered_note(out: &mut Vec<String>, s: &Summary) {
    if s.offered_other == 0 {
        return;
    }
    let names = |set: &std::collections::BTreeSet<String>| {
        let v: Vec<&str> = set.iter().take(8).map(String::as_str).collect();
        let more = set.len().saturating_sub(8);
        if more > 0 {
            format!("{} and {more} more", v.join(", "))
        } else {
            v.join(", ")
        }
    };
    let mut what = Vec::new();
    if !s.offered_missing.is_empty() {
        what.push(format!("not offered: {}", names(&s.offered_missing)));
    }
    if !s.offered_extra.is_empty() {
        what.push(format!(
            "offered but not in --tools: {}",
            names(&s.offered_extra)
        ));
    }
    out.push(format!(
        "  {} offered another tool list than --tools ({}): the production model chose among other options, so review those expectations first",
        count(s.offered_other, "logged request"),
        what.join("; ")
    ));
}

/// What the import redacted, by kind and by case (never the text itself).
fn redacted_note(out: &mut Vec<String>, s: &Summary) {
    if s.redacted.is_empty() {
        out.push("  redacted: nothing looked like an email, key or long number".into());
    } else {
        let total: usize = s.redacted.values().sum();
        let kinds: Vec<String> = s
            .redacted
            .iter()
            .map(|(k, n)| format!("{n} {}", k.name()))
            .collect();
        out.push(format!(
            "  redacted {} ({}) in {}:",
            count(total, "token"),
            kinds.join(", "),
            count(s.redacted_cases.len(), "case")
        ));
        let lines: Vec<(String, String)> = s
            .redacted_cases
            .iter()
            .map(|(id, kinds)| {
                let k: Vec<String> = kinds
                    .iter()
                    .map(|(k, n)| format!("{n} {}", k.name()))
                    .collect();
                (id.clone(), k.join(", "))
            })
            .collect();
        listed(out, "case", &lines);
    }
}

/// What the import read, kept, dropped, skipped and masked — never a masked text itself: one
/// line per note.
pub fn summary(s: &Summary, per_tool: usize) -> Vec<String> {
    let mut out = Vec::new();
    let formats: Vec<String> = s
        .files
        .iter()
        .map(|(f, fmt)| format!("{f}: {}", fmt.map(Choice::name).unwrap_or("unrecognised")))
        .collect();
    out.push(format!(
        "suite import: {} read ({})",
        count(s.records, "record"),
        formats.join(", ")
    ));
    let kept: usize = s.kept.values().sum();
    let per: Vec<String> = s.kept.iter().map(|(t, n)| format!("{t} {n}")).collect();
    out.push(format!(
        "  {} proposed a case; kept {kept}: {}",
        count(s.exchanges, "exchange"),
        if per.is_empty() {
            "none".to_string()
        } else {
            per.join(", ")
        }
    ));
    offered_note(&mut out, s);
    if !s.duplicates.is_empty() {
        let near = s.duplicates.iter().filter(|d| d.cosine.is_some()).count();
        out.push(format!(
            "  dropped {} as duplicates ({} exact, {near} near)",
            s.duplicates.len(),
            s.duplicates.len() - near
        ));
        let lines: Vec<(String, String)> = s
            .duplicates
            .iter()
            .map(|d| {
                let how = match d.cosine {
                    Some(c) => format!("cosine {c:.3} to {}", d.of),
                    None => format!("the same text as {}", d.of),
                };
                (d.at.clone(), how)
            })
            .collect();
        listed(&mut out, "duplicate", &lines);
    }
    if s.capped > 0 {
        out.push(format!("  left out {} by --per-tool {per_tool}", s.capped));
    }
    if s.several_calls > 0 {
        out.push(format!(
            "  {} made several calls: the first is proposed",
            count(s.several_calls, "kept answer")
        ));
    }
    if !s.inconsistent.is_empty() {
        out.push(format!(
            "  {} answered differently on different occasions (suite check calls them contradictory until you keep one):",
            count(s.inconsistent.len(), "prompt")
        ));
        let lines: Vec<(String, String)> = s
            .inconsistent
            .iter()
            .map(|ids| (ids[0].clone(), format!("also {}", ids[1..].join(", "))))
            .collect();
        listed(&mut out, "case", &lines);
    }
    if !s.skipped.is_empty() {
        out.push(format!(
            "  skipped {} that make no case",
            count(s.skipped.len(), "record")
        ));
        listed(&mut out, "skipped", &s.skipped);
    }
    if !s.malformed.is_empty() {
        out.push(format!(
            "  skipped {} (--strict makes them fatal)",
            count(s.malformed.len(), "malformed record")
        ));
        listed(&mut out, "malformed", &s.malformed);
    }
    redacted_note(&mut out, s);
    out
}
