//! Rewrites verified by replay (issue 39) on the regressions the edit benchmarks find: every
//! hand-written edit and every generated edit of the held-out half goes through `driftgate fix`
//! (default settings, the offline router). Where the check fails a tool on routing or call
//! accuracy, the row says what `fix` offered and whether it restores the tool's routing on the
//! held-out cases. Nothing in `fix` was chosen on these: its generators were written on the
//! calendar example, and no threshold of it was set here.

use anyhow::Result;
use serde_json::{Value, json};

use super::edits::{self, Set};
use super::{Ctx, Rate, Section, cell, clip};
use driftgate::stress::edits::Edit;

/// The edits this source sends through `fix`: the hand-written ones and the generated held-out
/// ones, each with where it came from.
fn jobs<'s>(ctx: &Ctx, sets: &'s [Set]) -> Result<Vec<(&'static str, &'s Set, String, Edit)>> {
    let halves = edits::split(edits::SETS);
    // The first batch only: the rewrites were measured on it before the second was written.
    let mut out: Vec<(&'static str, &Set, String, Edit)> = super::hand::jobs(sets, &["first"])?
        .into_iter()
        .map(|(_, set, tool, edit)| ("hand-written", set, tool, edit))
        .collect();
    out.extend(
        edits::jobs(ctx, sets)?
            .into_iter()
            .filter(|j| halves[j.set.name] == "held-out")
            .map(|j| ("generated", j.set, j.tool, j.edit)),
    );
    Ok(out)
}

/// One edit through `fix`: a row per tool its check failed on routing or call accuracy (none
/// when it failed none), each with what `fix` offered for its description and, for the edit as
/// a whole, the gate on head with every offered rewrite applied. The pair targets `fix` also
/// drafts (a tool that took the failing one's cases, a pair lint flags) are not rows: the table
/// counts failing tools.
fn rows_of(
    origin: &str,
    set: &Set,
    tool: &str,
    e: &Edit,
    i: usize,
    run: &super::Run,
) -> Vec<Value> {
    let Some(r) = run.report.as_ref() else {
        return Vec::new();
    };
    let tools: Vec<Value> = r["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| {
            t["field"] == "description" && t["failed"].as_array().is_some_and(|f| !f.is_empty())
        })
        .cloned()
        .collect();
    tools
        .iter()
        .map(|t| {
            let best = t["best"].as_u64().map(|i| &t["candidates"][i as usize]);
            let first = &t["candidates"][0];
            let shown = best.unwrap_or(first);
            let restored = best.is_some_and(|b| {
                b["held_out"]["accuracy"].as_f64() >= b["held_out"]["base_accuracy"].as_f64()
                    && b["gate_held_out"]["status"] == "pass"
            });
            json!({
                "edit": i, "origin": origin, "set": set.name, "tool": tool, "label": e.label,
                "kind": e.kind, "new": e.new, "exit": run.exit,
                "check": r["check"]["reason"],
                "failing_tools": tools.len(),
                "fixed_tool": t["tool"],
                "candidates": t["candidates"].as_array().map_or(0, Vec::len),
                "offered": best.is_some(),
                "generator": shown["generator"],
                "held_out": shown["held_out"],
                "gate_held_out": shown["gate_held_out"]["status"],
                "why_not": if best.is_some() { Value::Null } else { first["why_not"].clone() },
                "restored": restored,
                "applied_held_out": r["applied"]["held_out"]["status"],
                "applied_full": r["applied"]["full"]["status"],
            })
        })
        .collect()
}

/// Every edit through `fix`, the regressions' rows kept.
pub fn rows(ctx: &Ctx) -> Result<Vec<Value>> {
    use rayon::prelude::*;
    let sets = edits::sets(ctx)?;
    let jobs = jobs(ctx, &sets)?;
    eprintln!("evidence:   {} edits through fix", jobs.len());
    let rows: Vec<Vec<Value>> = jobs
        .par_iter()
        .enumerate()
        .map(|(i, (origin, set, tool, edit))| {
            let run = edits::compare(
                ctx,
                "fix",
                &format!("fix/{}/{i}", set.name),
                &edits::with_description(&set.tools, tool, &edit.old),
                &edits::with_description(&set.tools, tool, &edit.new),
                &set.suite,
            )?;
            if run.report.is_none() {
                anyhow::bail!("fix on {} / {tool}: no report: {}", set.name, run.stderr);
            }
            Ok(rows_of(origin, set, tool, edit, i, &run))
        })
        .collect::<Result<_>>()?;
    Ok(rows.into_iter().flatten().collect())
}

fn count(rows: &[Value], pred: impl Fn(&Value) -> bool) -> Rate {
    Rate::new(rows.iter().filter(|r| pred(r)).count(), rows.len())
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    let rows = rows(ctx)?;
    let offered = count(&rows, |r| r["offered"] == true);
    let restored = count(&rows, |r| r["restored"] == true);
    // Per edit: head with every offered rewrite of the edit applied.
    let mut edits: Vec<&Value> = Vec::new();
    for r in &rows {
        if !edits
            .iter()
            .any(|e| e["edit"] == r["edit"] && e["origin"] == r["origin"])
        {
            edits.push(r);
        }
    }
    let passes = Rate::new(
        edits
            .iter()
            .filter(|r| r["applied_held_out"] == "pass" && r["applied_full"] == "pass")
            .count(),
        edits.len(),
    );
    let mut md = String::from(
        "## Rewrites verified by replay: `fix` on the regressions the benchmarks found\n\n\
         Every hand-written edit and every generated edit of the held-out half went through \
         `driftgate fix` (default settings, the offline router). The rows are the edits whose \
         check failed a tool on routing or call accuracy (or by the meaning law with its routing \
         lost), one row per such tool. `fix` drafts rewrites from half of the \
         suite's cases and verifies each on the other half; *offered* = a rewrite beat head there, \
         passed the gate there for its own tools, cost no other tool a held-out case (below head \
         and base) and brought in no scan finding; *restored* = the offered rewrite's held-out accuracy is at least base's and the \
         gate passes on the held-out cases; *applied passes*, per edit = head with every offered \
         rewrite of the edit passes the gate on the held-out cases and on the whole suite (the \
         whole suite includes the drafting half). \
         Nothing in `fix` was chosen on these edits. A meaning-changing edit that `fix` \"repairs\" \
         gets base's meaning back beside the PR's words: the row says the routing came back, not \
         that the PR's intent survived.\n\n",
    );
    md.push_str(&format!(
        "| failing tools (edits) | a rewrite offered | routing restored on held-out cases | edits whose head with the offered rewrites passes (held-out and whole suite) |\n\
         |---|---|---|---|\n| {} ({}) | {} | {} | {} |\n\n",
        rows.len(),
        edits.len(),
        offered.cell(),
        restored.cell(),
        passes.cell()
    ));
    md.push_str(
        "| origin | set | edited tool | failing tool | label | kind | edit | rewrite | held-out: base → head → rewrite | gate held-out | applied (held-out / whole) | why not |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        let h = &r["held_out"];
        let n = h["cases"].as_u64().unwrap_or(0) as f64;
        let right = |k: &str| (h[k].as_f64().unwrap_or(0.0) * n).round() as u64;
        md.push_str(&format!(
            "| {} | {} | `{}` | `{}` | {} | {} | {} | {}{} | {}/{n} → {}/{n} → {}/{n} | {} | {} / {} | {} |\n",
            r["origin"].as_str().unwrap_or(""),
            r["set"].as_str().unwrap_or(""),
            cell(r["tool"].as_str().unwrap_or("")),
            cell(r["fixed_tool"].as_str().unwrap_or("")),
            r["label"].as_str().unwrap_or(""),
            r["kind"].as_str().unwrap_or(""),
            cell(&clip(r["new"].as_str().unwrap_or(""), 70)),
            r["generator"].as_str().unwrap_or(""),
            if r["offered"] == true { " ✓" } else { "" },
            right("base_accuracy"),
            right("head_accuracy"),
            right("accuracy"),
            r["gate_held_out"].as_str().unwrap_or(""),
            r["applied_held_out"].as_str().unwrap_or("—"),
            r["applied_full"].as_str().unwrap_or("—"),
            cell(&clip(r["why_not"].as_str().unwrap_or(""), 110)),
        ));
    }
    Ok(vec![Section {
        id: "fix",
        markdown: md,
        rows,
        rates: vec![
            ("fix offered", offered),
            ("fix restored", restored),
            ("fix applied passes", passes),
        ],
    }])
}
