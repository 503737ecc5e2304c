//! `check` on the real PR history: github/github-mcp-server publishes no routing suite, so each
//! base gets the suite its maintainer would start from — `driftgate suite init` (offline
//! templates, unreviewed) drafted from the base's tools — and `check --allow-unreviewed` replays
//! it at base and head. What routing adds is measured against `diff` on the same pair: every
//! commit whose verdict differs is listed with its flips and judged.
//!
//! A drafted suite is the router reading its own descriptions back (its prompts share most of
//! their words with the description they were drafted from), not users' phrasings: it shows
//! what the replay adds and costs on real commits, not how real users' prompts would route.

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::{Value, json};

use super::{Ctx, Rate, Section, cell, clip, history};

/// The source's name in bench/evidence/judgements.toml.
const SOURCE: &str = "github-mcp-server check";

/// The replay's flips: (regressed, fixed, one line each: direction, prompt, expected → base
/// answer / head answer).
fn flips(report: &Value) -> (usize, usize, Vec<String>) {
    let all = report["routing"]["flips"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let regressed = all.iter().filter(|f| f["direction"] == "regressed").count();
    let lines = all
        .iter()
        .map(|f| {
            format!(
                "{} \"{}\" `{}`→`{}`/`{}`",
                f["direction"].as_str().unwrap_or(""),
                clip(f["prompt"].as_str().unwrap_or(""), 60),
                f["expect"].as_str().unwrap_or(""),
                f["base"].as_str().unwrap_or(""),
                f["head"].as_str().unwrap_or(""),
            )
        })
        .collect();
    (regressed, all.len() - regressed, lines)
}

/// Whether the replay fails the commit on its own: the overall drop (the verdict's routing or
/// call-accuracy line) or a tool's ruling on either metric.
fn replay_fails(report: &Value) -> bool {
    let v = &report["verdict"];
    let overall = std::iter::once(&v["reason"])
        .chain(v["also"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .any(|l| {
            (l.starts_with("routing accuracy") || l.starts_with("call accuracy"))
                && l.contains("tolerance")
        });
    let tool = v["rulings"].as_array().into_iter().flatten().any(|r| {
        matches!(r["metric"].as_str(), Some("routing" | "calls")) && r["outcome"] == "fail"
    });
    overall || tool
}

fn accuracy(report: &Value, side: &str) -> f64 {
    report["routing"]["summary"][format!("{side}_accuracy")]
        .as_f64()
        .unwrap_or(f64::NAN)
}

struct Pair {
    i: usize,
    diff: super::Run,
    check: super::Run,
    cases: usize,
}

/// Draft a suite from commit `i - 1`, then run `diff` and `check` on `(i - 1, i)`.
fn measure(ctx: &Ctx, all: &[history::Commit], i: usize) -> Result<Pair> {
    let base = ctx.write(&format!("history-check/{i}/base.json"), &all[i - 1].tools)?;
    let head = ctx.write(&format!("history-check/{i}/head.json"), &all[i].tools)?;
    let suite = ctx.work.join(format!("history-check/{i}/suite.jsonl"));
    let (b, h, s) = (
        base.to_str().unwrap(),
        head.to_str().unwrap(),
        suite.to_str().unwrap(),
    );
    let drafted = ctx.driftgate_quiet(&["suite", "init", "--tools", b, "-o", s])?;
    anyhow::ensure!(
        drafted.exit == 0,
        "drafting a suite from commit {}'s tools failed ({}): {}",
        all[i - 1].commit,
        drafted.exit,
        drafted.stderr
    );
    let cases = std::fs::read_to_string(&suite)?
        .lines()
        .filter(|l| l.trim_start().starts_with('{'))
        .count();
    let diff = ctx.driftgate(&["diff", b, h])?;
    // Targeted replay is exact for the semantic router (head asked only where a change can
    // reach; the rest carry base's answers).
    let check = ctx.driftgate(&[
        "check",
        "--base",
        b,
        "--head",
        h,
        "--suite",
        s,
        "--allow-unreviewed",
        "--replay",
        "targeted",
    ])?;
    Ok(Pair {
        i,
        diff,
        check,
        cases,
    })
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    let all = history::commits(ctx)?;
    let pairs: Vec<usize> = ctx.take((1..all.len()).collect());
    section(ctx, &all, &pairs)
}

/// The same on the pairs whose head commit's id starts with one of `heads` (the hermetic slice:
/// a few chosen commits, each of them judged).
#[allow(dead_code)]
pub fn sections_at(ctx: &Ctx, heads: &[&str]) -> Result<Vec<Section>> {
    let all = history::commits(ctx)?;
    let pairs: Vec<usize> = (1..all.len())
        .filter(|&i| heads.iter().any(|h| all[i].commit.starts_with(h)))
        .collect();
    anyhow::ensure!(
        pairs.len() == heads.len(),
        "not every commit of {heads:?} is in the history"
    );
    section(ctx, &all, &pairs)
}

fn section(ctx: &Ctx, all: &[history::Commit], pairs: &[usize]) -> Result<Vec<Section>> {
    use rayon::prelude::*;
    let judged = super::judgements();
    let runs: Vec<Pair> = pairs
        .par_iter()
        .map(|&i| measure(ctx, all, i))
        .collect::<Result<_>>()?;

    let n = runs.len();
    let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
    let mut cross: BTreeMap<(String, String), usize> = BTreeMap::new();
    let (mut moved, mut regressed_total, mut fixed_total, mut cases_total) = (0, 0, 0, 0);
    let (mut differ, mut unjudged, mut replay_failed, mut replay_only) = (0, 0, 0, 0);
    let mut calls: BTreeMap<String, usize> = BTreeMap::new();
    let mut listed = String::new();
    let mut rows = Vec::new();
    for p in &runs {
        let c = &all[p.i];
        let (d, k) = (p.diff.status().to_string(), p.check.status().to_string());
        *by_status.entry(k.clone()).or_default() += 1;
        *cross.entry((d.clone(), k.clone())).or_default() += 1;
        cases_total += p.cases;
        let (regressed, fixed, lines) = p.check.report.as_ref().map_or((0, 0, vec![]), flips);
        regressed_total += regressed;
        fixed_total += fixed;
        moved += usize::from(regressed + fixed > 0);
        let replay_failed_here = p.check.report.as_ref().is_some_and(replay_fails);
        replay_failed += usize::from(replay_failed_here);
        replay_only += usize::from(replay_failed_here && d != "fail");
        let reason = match &p.check.report {
            Some(r) => r["verdict"]["reason"].as_str().unwrap_or("").to_string(),
            None => p.check.stderr.lines().last().unwrap_or("").to_string(),
        };
        let (base_acc, head_acc) = p.check.report.as_ref().map_or((f64::NAN, f64::NAN), |r| {
            (accuracy(r, "base"), accuracy(r, "head"))
        });
        if d != k {
            differ += 1;
            let j = super::judged(&judged, SOURCE, &c.commit[..12], "", "");
            match &j {
                Some(j) => *calls.entry(j.call.clone()).or_default() += 1,
                None => unjudged += 1,
            }
            listed.push_str(&format!(
                "| `{}` | {} | {d} → {k} | {:.1}% → {:.1}% ({regressed} regressed, {fixed} fixed) | {} | {} |\n",
                &c.commit[..12],
                clip(&c.subject, 60),
                100.0 * base_acc,
                100.0 * head_acc,
                cell(&clip(&lines.join("; "), 160)),
                j.map(|j| format!("**{}**: {}", j.call, cell(&j.why)))
                    .unwrap_or_else(|| "**unjudged**".into()),
            ));
        }
        rows.push(json!({
            "commit": c.commit, "subject": &c.subject, "cases": p.cases,
            "diff": d, "check": k, "exit": p.check.exit, "reason": reason,
            "base_accuracy": base_acc, "head_accuracy": head_acc,
            "regressed": regressed, "fixed": fixed, "flips": lines,
        }));
    }

    let mut md = format!(
        "## Real PR history with a replay: `check` on the same {n} commits\n\n\
         github-mcp-server publishes no routing suite, so each base gets the one its maintainer \
         would start from: `driftgate suite init --tools BASE` (offline templates, {:.0} cases a \
         commit on average, unreviewed), then `driftgate check --allow-unreviewed --replay \
         targeted` on the pair (targeted is exact for the semantic router). A drafted suite is \
         the router reading the base's descriptions back, not users' phrasings: this table \
         shows what the replay adds to `diff` on real commits and what it costs in false alarms, \
         not how real prompts route. Nothing here was tuned.\n\n\
         | `check` verdict | commits |\n|---|---|\n",
        cases_total as f64 / n.max(1) as f64
    );
    for (s, k) in &by_status {
        md.push_str(&format!("| {s} | {} |\n", Rate::new(*k, n).cell()));
    }
    md.push_str("\n| `diff` → `check` | commits |\n|---|---|\n");
    for ((d, k), v) in &cross {
        md.push_str(&format!("| {d} → {k} | {v} |\n"));
    }
    let call = |c: &str| calls.get(c).copied().unwrap_or(0);
    md.push_str(&format!(
        "\nThe replay moved at least one case in {} ({regressed_total} regressed, \
         {fixed_total} fixed over {cases_total} cases); it failed {replay_failed} commits on its \
         own (overall drop or a tool's), {}. {differ} commits get another verdict from `check` than from `diff`, each listed with its flips \
         and judged ({unjudged} unjudged): {} right to stop (the flipped prompt is about what \
         the edit changed), {} false alarms (the offline router moved on an edit an agent acts \
         on the same way).\n\n\
         | commit | subject (intent) | diff → check | routing | flips (expected → base / head) | judgement |\n\
         |---|---|---|---|---|---|\n{listed}\n",
        Rate::new(moved, n).cell(),
        if replay_only == 0 {
            "each also failed by `diff`'s signals (tools removed or consolidated: a drafted case \
             expecting a removed tool is wrong at head)"
                .to_string()
        } else {
            format!("{replay_only} of them passed by `diff`")
        },
        call("right"),
        call("false-alarm"),
    ));
    let count = |s: &str| by_status.get(s).copied().unwrap_or(0);
    Ok(vec![Section {
        id: "github-mcp-server-check",
        markdown: md,
        rows,
        rates: vec![
            ("fail", Rate::new(count("fail"), n)),
            ("inconclusive", Rate::new(count("inconclusive"), n)),
            ("refused", Rate::new(count("error"), n)),
            ("differ", Rate::new(differ, n)),
            ("replay-failed", Rate::new(replay_failed, n)),
            ("unjudged", Rate::new(unjudged, differ)),
            ("false-alarm", Rate::new(call("false-alarm"), differ)),
            ("right", Rate::new(call("right"), differ)),
        ],
    }])
}
