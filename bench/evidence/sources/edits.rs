//! The labelled edit benchmark (issue 42): on tool sets with routing suites, each suite-measured
//! tool's description is rewritten by every generator of `driftgate::stress::edits` — edits that
//! change what the tool means and edits that keep it — and `check` judges each rewrite against
//! the untouched set. An edit is *caught* when the verdict is not a pass (fail or inconclusive:
//! either stops a merge); a meaning-preserving edit caught is a false alarm.
//!
//! Held out by construction: the tool sets are split before anything is tuned, by the order of
//! `sha256("driftgate-edits:" + name)` (alternately tune, held-out). Rules may be chosen on the
//! tune half only; the held-out half is what the docs report and what tests pin.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use driftgate::stress::edits::{self, Edit, Label};
use driftgate::tools::ToolSet;
use serde_json::{Value, json};

use super::replay::{self, Case};
use super::{Ctx, Rate, Section, cell, clip, read_json};

/// At most this many tools of a set are edited (most own cases first): bounds the run.
const TOOLS_PER_SET: usize = 6;
/// Own cases a tool needs to be edited: two, so the hand-written suites (two prompts a tool) take part.
const MIN_OWN_CASES: usize = 2;

/// Every set of the benchmark, by name: the split is computed over this list, so a run that
/// leaves a set out (the hermetic slice leaves Azure) keeps every other set in its half.
pub const SETS: &[&str] = &[
    "calendar",
    "filesystem",
    "playwright",
    "github",
    "git",
    "mtb-filesystem",
    "mtb-search",
    "mtb-browser",
    "azure",
];

/// One tool set with its suite.
pub struct Set {
    pub name: &'static str,
    pub tools: Value,
    pub suite: PathBuf,
}

/// One edit of one set's tool.
pub struct Job<'s> {
    pub set: &'s Set,
    pub tool: String,
    pub edit: Edit,
}

/// Which half a set is in: decided by its name alone.
pub fn split(names: &[&str]) -> BTreeMap<String, &'static str> {
    use sha2::{Digest, Sha256};
    let mut keyed: Vec<(String, &str)> = names
        .iter()
        .map(|n| {
            let h = Sha256::digest(format!("driftgate-edits:{n}").as_bytes());
            (hex::encode(h), *n)
        })
        .collect();
    keyed.sort();
    keyed
        .into_iter()
        .enumerate()
        .map(|(i, (_, n))| (n.to_string(), if i % 2 == 0 { "tune" } else { "held-out" }))
        .collect()
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn tools_of(path: &Path) -> Result<Value> {
    let v = read_json(path)?;
    Ok(match v.get("tools") {
        Some(t) => t.clone(),
        None => v,
    })
}

pub fn sets(ctx: &Ctx) -> Result<Vec<Set>> {
    let mut out = vec![
        Set {
            name: "calendar",
            tools: tools_of(&repo("examples/calendar/tools.base.json"))?,
            suite: repo("examples/calendar/suite.yaml"),
        },
        Set {
            name: "filesystem",
            tools: tools_of(&repo(
                "tests/fixtures/corpus/server-filesystem/2025.7.1.json",
            ))?,
            suite: repo("tests/fixtures/server-filesystem.suite.jsonl"),
        },
        Set {
            name: "playwright",
            tools: tools_of(&repo("tests/fixtures/corpus/playwright-mcp/0.0.83.json"))?,
            suite: repo("bench/suites/playwright-mcp.suite.jsonl"),
        },
        Set {
            name: "github",
            tools: tools_of(&repo("tests/fixtures/corpus/server-github/2025.4.8.json"))?,
            suite: repo("bench/suites/server-github.suite.jsonl"),
        },
        Set {
            name: "git",
            tools: tools_of(&repo(
                "tests/fixtures/corpus/mcp-server-git/2026.10.19.json",
            ))?,
            suite: repo("bench/suites/mcp-server-git.suite.jsonl"),
        },
    ];
    // MCPToolBench++'s own tool lists with its prompts (finance is one tool: nothing to confuse).
    for (name, file) in [
        ("mtb-filesystem", "filesystem_0723_single.json"),
        ("mtb-search", "search_0725_single_v2.json"),
        ("mtb-browser", "browser_0724_single_v3.json"),
    ] {
        let (cases, tools) = super::mcptoolbench::cases(
            &Ctx {
                limit: None,
                ..ctx.clone()
            },
            file,
        )?;
        out.push(Set {
            name,
            tools,
            suite: write_suite(ctx, name, &cases)?,
        });
    }
    // The hermetic slice (a limit) leaves Azure's 180 tools × 480 prompts to the full run: each of
    // its checks takes seconds even cached.
    if ctx.limit.is_some() {
        return Ok(out);
    }
    let (tools, all) = super::azure::load(ctx)?;
    let names: std::collections::BTreeSet<&str> =
        tools.iter().filter_map(|t| t["name"].as_str()).collect();
    let cases: Vec<Case> = all
        .into_iter()
        .filter(|c| names.contains(c.expect[0].as_str()))
        .collect();
    out.push(Set {
        name: "azure",
        suite: write_suite(ctx, "azure", &cases)?,
        tools: Value::Array(tools),
    });
    Ok(out)
}

fn write_suite(ctx: &Ctx, name: &str, cases: &[Case]) -> Result<PathBuf> {
    let path = ctx.work.join(format!("edits/{name}/suite.jsonl"));
    std::fs::create_dir_all(path.parent().expect("a parent"))?;
    std::fs::write(&path, replay::suite(cases))?;
    Ok(path)
}

/// Reviewed LLM paraphrases of corpus descriptions (docs/calibration/paraphrases.jsonl), by text.
fn paraphrases() -> Result<BTreeMap<String, Vec<String>>> {
    let text = std::fs::read_to_string(repo("docs/calibration/paraphrases.jsonl"))?;
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line)?;
        if v["label"] == "benign"
            && let (Some(old), Some(new)) = (v["old"].as_str(), v["new"].as_str())
        {
            out.entry(old.trim().to_string())
                .or_default()
                .push(new.to_string());
        }
    }
    Ok(out)
}

pub fn check(ctx: &Ctx, dir: &str, base: &Value, head: &Value, suite: &Path) -> Result<super::Run> {
    compare(ctx, "check", dir, base, head, suite)
}

/// `command` (`check`, `fix`) of `head` against `base` on `suite`, the sides written under `dir`.
pub fn compare(
    ctx: &Ctx,
    command: &str,
    dir: &str,
    base: &Value,
    head: &Value,
    suite: &Path,
) -> Result<super::Run> {
    let b = ctx.write(&format!("{dir}/base.json"), base)?;
    let h = ctx.write(&format!("{dir}/head.json"), head)?;
    ctx.driftgate(&[
        command,
        "--base",
        b.to_str().expect("UTF-8 path"),
        "--head",
        h.to_str().expect("UTF-8 path"),
        "--suite",
        suite.to_str().expect("UTF-8 path"),
    ])
}

pub fn with_description(tools: &Value, name: &str, text: &str) -> Value {
    let mut t = tools.clone();
    for tool in t.as_array_mut().into_iter().flatten() {
        if tool["name"] == name {
            tool["description"] = json!(text);
        }
    }
    t
}

/// The tools `check` measured on at least `MIN_OWN_CASES` own cases, most cases first.
fn measured(run: &super::Run) -> Vec<(String, usize)> {
    let mut rows: Vec<(String, usize)> = replay::per_tool(run)
        .filter_map(|t| {
            Some((
                t["tool"].as_str()?.to_string(),
                t["cases"].as_u64()? as usize,
            ))
        })
        .filter(|(_, n)| *n >= MIN_OWN_CASES)
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    rows
}

/// One judged edit, as a JSONL row.
pub fn row(set: &str, split: &str, tool: &str, e: &Edit, run: &super::Run) -> Value {
    let r = run.report.as_ref();
    let own = replay::per_tool(run).find(|t| t["tool"] == tool);
    let summary = r.map(|r| &r["routing"]["summary"]);
    let drift = r
        .and_then(|r| r["drift"]["tools"].as_array())
        .and_then(|t| t.iter().find(|t| t["tool"] == tool));
    json!({
        "set": set, "split": split, "tool": tool, "kind": e.kind, "label": e.label,
        "detail": e.detail, "old": e.old, "new": e.new,
        "verdict": run.status(),
        "reason": r.map(|r| r["verdict"]["reason"].clone()).unwrap_or(json!(run.stderr)),
        "decided_by": r.map(|r| r["verdict"]["decided_by"].clone()),
        "own_cases": own.map(|o| o["cases"].clone()),
        "own_regressed": own.map(|o| o["regressed"].clone()),
        "own_fixed": own.map(|o| o["fixed"].clone()),
        "flips": summary.map(|s| json!(s["discordant_right_to_wrong"].as_u64().unwrap_or(0)
            + s["discordant_wrong_to_right"].as_u64().unwrap_or(0))),
        "cosine": drift.map(|d| d["description_cosine"].clone()),
        "below_floor": drift.map(|d| d["below_floor"].clone()),
        "shifts": r.map(|r| shifts_of(r, tool)).unwrap_or_default(),
    })
}

/// The shift rules the diff found in `tool`'s changes.
pub fn shifts_of(report: &Value, tool: &str) -> Vec<String> {
    report["diff"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["name"] == tool)
        .flat_map(|t| t["changes"].as_array().into_iter().flatten())
        .flat_map(|c| c["shifts"].as_array().into_iter().flatten())
        .filter_map(|s| s["rule"].as_str().map(String::from))
        .collect()
}

pub fn caught(row: &Value) -> bool {
    matches!(row["verdict"].as_str(), Some("fail" | "inconclusive"))
}

fn flipped(row: &Value) -> bool {
    row["flips"].as_u64().unwrap_or(0) > 0
}

/// Every edit of every set: each set's suite-measured tools (by the unedited `check`), every
/// generator that applies to each.
pub fn jobs<'s>(ctx: &Ctx, sets: &'s [Set]) -> Result<Vec<Job<'s>>> {
    assert!(
        sets.iter().all(|s| SETS.contains(&s.name)),
        "every set is named in SETS"
    );
    let paraphrases = paraphrases()?;
    let mut jobs = Vec::new();
    for set in sets {
        let base = check(
            ctx,
            &format!("edits/{}/base", set.name),
            &set.tools,
            &set.tools,
            &set.suite,
        )
        .with_context(|| format!("{}: the unedited check", set.name))?;
        let parsed =
            ToolSet::from_array(set.tools.as_array().context("a tool array")?, set.name, "")
                .map_err(|e| anyhow::anyhow!("{}: {e}", set.name))?;
        let chosen: Vec<String> = measured(&base)
            .into_iter()
            .filter(|(n, _)| parsed.get(n).is_some())
            .take(ctx.limit.unwrap_or(TOOLS_PER_SET).min(TOOLS_PER_SET))
            .map(|(n, _)| n)
            .collect();
        for name in chosen {
            let tool = parsed.get(&name).context("a measured tool is in its set")?;
            let para = paraphrases
                .get(tool.description_text().trim())
                .cloned()
                .unwrap_or_default();
            for edit in edits::edits(tool, &parsed, &para) {
                jobs.push(Job {
                    set,
                    tool: name.clone(),
                    edit,
                });
            }
        }
    }
    Ok(jobs)
}

/// Every edit of every set, judged; rows in set, tool, kind order.
pub fn rows(ctx: &Ctx) -> Result<Vec<Value>> {
    use rayon::prelude::*;
    let sets = sets(ctx)?;
    let halves = split(SETS);
    let jobs = jobs(ctx, &sets)?;
    eprintln!("evidence:   {} edits on {} sets", jobs.len(), sets.len());
    let rows: Vec<Value> = jobs
        .par_iter()
        .enumerate()
        .map(|(i, j)| {
            let base = with_description(&j.set.tools, &j.tool, &j.edit.old);
            let head = with_description(&j.set.tools, &j.tool, &j.edit.new);
            let run = check(
                ctx,
                &format!("edits/{}/{i}", j.set.name),
                &base,
                &head,
                &j.set.suite,
            )?;
            Ok(row(j.set.name, halves[j.set.name], &j.tool, &j.edit, &run))
        })
        .collect::<Result<_>>()?;
    Ok(rows)
}

/// Caught ÷ edits of `label` in `half`, optionally of one kind.
pub fn rate(rows: &[Value], half: &str, label: Label, kind: Option<&str>) -> Rate {
    let pick: Vec<&Value> = rows
        .iter()
        .filter(|r| r["split"] == half && r["label"] == json!(label))
        .filter(|r| kind.is_none_or(|k| r["kind"] == k))
        .collect();
    Rate::new(pick.iter().filter(|r| caught(r)).count(), pick.len())
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    let rows = rows(ctx)?;
    let mut md = String::from(
        "## Meaning-changing edits: the labelled edit benchmark\n\n\
         Each suite-measured tool (at least 2 own cases; at most 6 per set, most cases first) gets \
         every edit of `driftgate::stress::edits` that applies; `check` (default settings) judges \
         each edited set against the unedited one. *Caught* = the verdict is not a pass. The sets \
         were split into two halves by `sha256(\"driftgate-edits:\" + name)` before anything was \
         tuned; rules are chosen on the tune half, the held-out half is the estimate.\n\n",
    );
    let mut sets: BTreeMap<&str, &str> = BTreeMap::new();
    for r in &rows {
        sets.insert(
            r["set"].as_str().unwrap_or(""),
            r["split"].as_str().unwrap_or(""),
        );
    }
    md.push_str("| half | sets |\n|---|---|\n");
    for half in ["tune", "held-out"] {
        let names: Vec<&str> = sets
            .iter()
            .filter(|(_, h)| **h == half)
            .map(|(n, _)| *n)
            .collect();
        md.push_str(&format!("| {half} | {} |\n", names.join(", ")));
    }
    md.push_str(
        "\n| kind | label | tune: caught | held-out: caught | held-out: router flipped a case |\n\
         |---|---|---|---|---|\n",
    );
    for (label, kinds) in [
        (Label::Changing, edits::CHANGING),
        (Label::Preserving, edits::PRESERVING),
    ] {
        for k in kinds {
            let flips = {
                let pick: Vec<&Value> = rows
                    .iter()
                    .filter(|r| r["split"] == "held-out" && r["kind"] == *k)
                    .collect();
                Rate::new(pick.iter().filter(|r| flipped(r)).count(), pick.len())
            };
            md.push_str(&format!(
                "| {k} | {} | {} | {} | {} |\n",
                if label == Label::Changing {
                    "changing"
                } else {
                    "preserving"
                },
                rate(&rows, "tune", label, Some(k)).cell(),
                rate(&rows, "held-out", label, Some(k)).cell(),
                flips.cell()
            ));
        }
    }
    let recall = |h| rate(&rows, h, Label::Changing, None);
    let alarms = |h| rate(&rows, h, Label::Preserving, None);
    md.push_str(&format!(
        "| **all meaning-changing (recall)** | | {} | {} | |\n\
         | **all meaning-preserving (false alarms)** | | {} | {} | |\n\n",
        recall("tune").cell(),
        recall("held-out").cell(),
        alarms("tune").cell(),
        alarms("held-out").cell()
    ));
    md.push_str(
        "Held-out edits the gate got wrong (missed meaning changes, false alarms), with what \
         decided:\n\n| set | tool | kind | verdict | reason |\n|---|---|---|---|---|\n",
    );
    for r in rows.iter().filter(|r| r["split"] == "held-out") {
        let changing = r["label"] == "changing";
        if changing != caught(r) {
            md.push_str(&format!(
                "| {} | `{}` | {} | {} | {} |\n",
                r["set"].as_str().unwrap_or(""),
                cell(r["tool"].as_str().unwrap_or("")),
                r["kind"].as_str().unwrap_or(""),
                r["verdict"].as_str().unwrap_or(""),
                clip(r["reason"].as_str().unwrap_or(""), 110)
            ));
        }
    }
    md.push('\n');
    Ok(vec![Section {
        id: "edits",
        markdown: md,
        rates: vec![
            ("tune-recall", recall("tune")),
            ("tune-false-alarms", alarms("tune")),
            ("held-out-recall", recall("held-out")),
            ("held-out-false-alarms", alarms("held-out")),
        ],
        rows,
    }])
}
