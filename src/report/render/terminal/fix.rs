//! Terminal renderer for the fix report: the outcome line, the check it answers, then per failing
//! tool what drafting read, every rewrite with what its replay measured, and the offered one as a
//! word diff against head. Tool text and prompts are untrusted: each goes through `cell`.

use std::fmt::Write;

use super::{Paint, verdict_word, word_diff};
use crate::gate::Status;
use crate::report::escape::cell;
use crate::report::fix::{FixReport, Outcome, Proposal, ToolFix};

fn outcome(p: &Paint, o: &Outcome) -> String {
    let (word, code) = verdict_word(o.status);
    p.wrap(code, word)
}

fn headline(r: &FixReport, p: &Paint) -> String {
    let offered = r.tools.iter().filter(|t| t.best.is_some()).count();
    match (&r.applied, r.check.status) {
        (_, Status::Incomplete) => format!(
            "{} — the check is incomplete: nothing was drafted",
            p.wrap("1;33;7", "INCOMPLETE")
        ),
        _ if r.exit_code() == crate::error::exit::INCOMPLETE => format!(
            "{} — the replay of a rewrite missed answers: what it would restore is unknown, nothing unmeasured is offered",
            p.wrap("1;33;7", "INCOMPLETE")
        ),
        (Some(a), _) => format!(
            "{offered} of {} target(s) have a verified rewrite; with it applied the gate gives {} on the held-out cases and {} on the whole suite",
            r.tools.len(),
            outcome(p, &a.held_out),
            outcome(p, &a.full)
        ),
        (None, Status::Fail) => format!(
            "{} — no rewrite of the {} target(s) beat head on the held-out cases",
            p.wrap("1;31", "NO FIX"),
            r.tools.len()
        ),
        (None, _) => "nothing to fix".to_string(),
    }
}

pub fn render(r: &FixReport, color: bool) -> String {
    let p = Paint { on: color };
    let mut out = String::new();
    let _ = writeln!(out, "driftgate fix: {}", headline(r, &p));
    let (word, code) = verdict_word(r.check.status);
    let _ = writeln!(
        out,
        "check: {} — {}",
        p.wrap(code, word),
        cell(&r.check.reason, 400)
    );
    let _ = writeln!(
        out,
        "base: {} → head: {} · suite {} ({} cases: {} for drafting, {} held out) · router: {} {}",
        cell(&r.base.source, 60),
        cell(&r.head.source, 60),
        cell(&r.suite.source, 60),
        r.suite.cases,
        r.split.drafting,
        r.split.held_out,
        r.router.kind,
        cell(&r.router.model, 60)
    );
    for t in &r.tools {
        tool(t, &p, &mut out);
    }
    for n in &r.notes {
        let _ = writeln!(
            out,
            "{}",
            p.wrap("1;33", &format!("NOTE: {}", cell(n, 300)))
        );
    }
    out
}

fn tool(t: &ToolFix, p: &Paint, out: &mut String) {
    let why = match (&t.partner, &t.finding) {
        (Some(partner), finding) => format!(
            "to tell apart from {} ({})",
            cell(partner, 80),
            cell(finding.as_deref().unwrap_or_default(), 300)
        ),
        (None, _) => t
            .failed
            .iter()
            .map(|f| cell(f, 200))
            .collect::<Vec<_>>()
            .join("; "),
    };
    let _ = writeln!(
        out,
        "\n{} ({}): {why}",
        p.wrap("1", &cell(&t.tool, 80)),
        cell(&t.field, 120),
    );
    for k in &t.kept {
        let _ = writeln!(out, "  kept from head: \"{}\"", cell(k, 200));
    }
    let _ = writeln!(
        out,
        "  drafting read {} lost case(s) of the drafting half:",
        t.lost.len()
    );
    for l in &t.lost {
        let _ = writeln!(
            out,
            "    {} → {}  {}",
            cell(&l.id, 40),
            cell(&l.answered, 60),
            cell(&l.prompt, 100)
        );
    }
    if t.candidates.is_empty() {
        let _ = writeln!(
            out,
            "  no rewrite drafted: head dropped no sentence of base and no lost prompt points elsewhere"
        );
    }
    for (i, c) in t.candidates.iter().enumerate() {
        proposal(c, t.best == Some(i), p, out);
    }
    if let Some(b) = t.best() {
        let _ = writeln!(
            out,
            "  offered ({}), against head:\n    {}",
            b.generator,
            word_diff(&cell(&t.head_text, 2000), &cell(&b.text, 2000), p.on)
        );
    }
}

fn proposal(c: &Proposal, best: bool, p: &Paint, out: &mut String) {
    let mark = match (best, c.offered) {
        (true, _) => p.wrap("1;32", "★"),
        (false, true) => p.wrap("32", "✓"),
        (false, false) => p.wrap("31", "✗"),
    };
    let h = &c.held_out;
    let _ = writeln!(
        out,
        "  {mark} {:<16} held out: {}; {} fixed, {} regressed, p={:.4} · gate on held-out {} · on the whole suite {}",
        c.generator,
        h.counts(),
        h.fixed,
        h.regressed,
        h.p_value_better,
        outcome(p, &c.gate_held_out),
        outcome(p, &c.gate_full)
    );
    if let Some(flagged) = c.pair_still_flagged {
        let _ = writeln!(
            out,
            "      lint {} the pair with this rewrite (shown, never gating)",
            if flagged {
                "still flags"
            } else {
                "no longer flags"
            }
        );
    }
    for f in &c.failing_elsewhere {
        let _ = writeln!(
            out,
            "      still failing on another tool (its own to fix): {}",
            cell(f, 300)
        );
    }
    for l in &c.lint_introduced {
        let _ = writeln!(out, "      lint: {}", cell(l, 300));
    }
    if let Some(w) = &c.why_not {
        let _ = writeln!(out, "      not offered: {}", cell(w, 300));
    }
}
