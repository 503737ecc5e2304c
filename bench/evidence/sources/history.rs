//! Real pull-request history: github/github-mcp-server's tool definitions at each of the 155
//! commits that changed them. Every consecutive pair is one PR: `driftgate diff` at default
//! settings (bundled embedder, no suite), its verdict, the signal that decided it, and the
//! commit's own subject (its intent) beside it. Renames and consolidations the diff found are
//! compared with the project's own `deprecated_tool_aliases.json`.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context as _, Result};
use serde_json::{Value, json};

use super::{Ctx, Rate, Section, cell, clip, read_json};

pub struct Commit {
    pub commit: String,
    pub date: String,
    pub subject: String,
    pub tools: Vec<Value>,
}

pub fn commits(ctx: &Ctx) -> Result<Vec<Commit>> {
    let dir = ctx.external.join("github-mcp-server");
    let path = dir.join("history.jsonl");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), i + 1);
        let c: Value = serde_json::from_str(line).with_context(|| format!("{at}: not JSON"))?;
        let ids = c["tools"]
            .as_array()
            .with_context(|| format!("{at}: `tools` is not a list of tool ids"))?;
        let mut tools = Vec::new();
        for id in ids {
            let id = id
                .as_str()
                .with_context(|| format!("{at}: a `tools` entry is not a string"))?;
            tools.push(read_json(&dir.join(format!("tools/{id}.json")))?);
        }
        out.push(Commit {
            commit: c["commit"].as_str().unwrap_or("").to_string(),
            date: c["date"].as_str().unwrap_or("").to_string(),
            subject: c["subject"].as_str().unwrap_or("").to_string(),
            tools,
        });
    }
    Ok(out)
}

/// What decided one run's verdict: `schema` (a law change at or above high, meaning shifts
/// aside), `meaning` (a description whose words show its meaning moved), `cosine` (a description
/// below the floor, when the cosine policy lets it fail), `injection`.
fn signals(report: &Value) -> Vec<&'static str> {
    let mut s = Vec::new();
    let gated = |sev: &str| matches!(sev, "high" | "breaking");
    let changes = report["diff"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["changes"].as_array().into_iter().flatten());
    let shifted = |c: &Value| c["shifts"].as_array().is_some_and(|a| !a.is_empty());
    if changes
        .clone()
        .any(|c| gated(c["severity"].as_str().unwrap_or("")) && !shifted(c))
    {
        s.push("schema");
    }
    if changes
        .clone()
        .any(|c| gated(c["severity"].as_str().unwrap_or("")) && shifted(c))
    {
        s.push("meaning");
    }
    let v = &report["verdict"];
    let lines = std::iter::once(&v["reason"]).chain(v["also"].as_array().into_iter().flatten());
    if lines
        .filter_map(Value::as_str)
        .any(|l| l.contains("< floor"))
    {
        s.push("cosine");
    }
    if report["scan"]["introduced"]
        .as_array()
        .is_some_and(|a| !a.is_empty())
    {
        s.push("injection");
    }
    s
}

/// The meaning lines of a verdict (what moved in which description).
fn meaning_lines(report: &Value) -> Vec<String> {
    let v = &report["verdict"];
    std::iter::once(&v["reason"])
        .chain(v["also"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .filter(|l| l.contains("description changed meaning"))
        .map(String::from)
        .collect()
}

/// The texts below the applied floor: `(tool or tool.param, cosine)`.
fn below_floor(report: &Value) -> impl Iterator<Item = (String, f64)> + '_ {
    report["drift"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| {
            let tool = t["tool"].as_str().unwrap_or("").to_string();
            let own = (t["below_floor"] == true).then(|| {
                (
                    tool.clone(),
                    t["description_cosine"].as_f64().unwrap_or(f64::NAN),
                )
            });
            let params = t["params"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["below_floor"] == true)
                .map(move |p| {
                    (
                        format!("{tool}.{}", p["name"].as_str().unwrap_or("")),
                        p["cosine"].as_f64().unwrap_or(f64::NAN),
                    )
                });
            own.into_iter().chain(params).collect::<Vec<_>>()
        })
}

fn names_with(report: &Value, status: &str) -> BTreeSet<String> {
    report["diff"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["status"] == status)
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect()
}

/// A fail the severity law decided: the verdict's first gated change, judged by what it is.
fn schema_judgement(report: &Value) -> super::Judgement {
    let v = &report["verdict"];
    let line = std::iter::once(&v["reason"])
        .chain(v["also"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .find(|l| l.contains(" at or above "))
        .unwrap_or("");
    let first = line.split("first: ").nth(1).unwrap_or(line);
    super::Judgement {
        source: "github-mcp-server".into(),
        id: String::new(),
        theirs: None,
        ours: None,
        call: "right".into(),
        blind: false,
        why: format!("{first}: a call valid at base fails or is misread at head (by rule)"),
    }
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    use rayon::prelude::*;
    let all = commits(ctx)?;
    let pairs: Vec<usize> = ctx.take((1..all.len()).collect());
    let judged = super::judgements();
    let runs: Vec<(usize, super::Run)> = pairs
        .par_iter()
        .map(|&i| {
            let (a, b) = (&all[i - 1], &all[i]);
            let base = ctx.write(&format!("history/{i}/base.json"), &a.tools)?;
            let head = ctx.write(&format!("history/{i}/head.json"), &b.tools)?;
            let run = ctx.driftgate(&["diff", base.to_str().unwrap(), head.to_str().unwrap()])?;
            Ok((i, run))
        })
        .collect::<Result<_>>()?;

    let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_signal: BTreeMap<String, usize> = BTreeMap::new();
    let mut rows = Vec::new();
    let mut fails = String::new();
    let mut unjudged = 0;
    // Fails decided by description text alone (meaning shifts, or the cosine when asked), and
    // what the hand judgements say of them.
    let mut text_calls: BTreeMap<String, usize> = BTreeMap::new();
    let mut text_only = 0;
    // Blind judgements (written before the meaning rules existed, of the commits the cosine floor
    // failed): does the rule flag the commits judged right, and pass the false alarms?
    let mut blind: BTreeMap<(String, bool), usize> = BTreeMap::new();
    let mut found_renames: Vec<(String, String, usize)> = Vec::new();
    let mut removed_in: BTreeMap<String, usize> = BTreeMap::new();
    let mut added_in: BTreeMap<String, usize> = BTreeMap::new();
    for (i, run) in &runs {
        let c = &all[*i];
        let status = run.status().to_string();
        *by_status.entry(status.clone()).or_default() += 1;
        let (sig, reason) = match &run.report {
            Some(r) => {
                for (from, to) in super::renames(r) {
                    found_renames.push((from, to, *i));
                }
                for n in names_with(r, "removed") {
                    removed_in.entry(n).or_insert(*i);
                }
                for n in names_with(r, "added") {
                    added_in.entry(n).or_insert(*i);
                }
                (
                    signals(r),
                    r["verdict"]["reason"].as_str().unwrap_or("").to_string(),
                )
            }
            None => (vec![], run.stderr.lines().last().unwrap_or("").to_string()),
        };
        let text_alone = sig == ["meaning"] || sig == ["cosine"];
        if let Some(j) = judged
            .iter()
            .find(|j| j.source == "github-mcp-server" && j.id == c.commit[..12] && j.blind)
        {
            *blind
                .entry((j.call.clone(), sig.contains(&"meaning")))
                .or_default() += 1;
        }
        if status == "fail" {
            let key = sig.join("+");
            *by_signal.entry(key.clone()).or_default() += 1;
            let j = super::judged(&judged, "github-mcp-server", &c.commit[..12], "", "").or_else(
                || {
                    let r = run.report.as_ref()?;
                    sig.contains(&"schema").then(|| schema_judgement(r))
                },
            );
            if text_alone {
                text_only += 1;
            }
            match &j {
                None => unjudged += 1,
                Some(j) if text_alone => *text_calls.entry(j.call.clone()).or_default() += 1,
                Some(_) => {}
            }
            let evidence = match &run.report {
                Some(r) if sig == ["cosine"] => below_floor(r)
                    .map(|(field, cos)| format!("`{field}` {cos:.3}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                Some(r) if sig == ["meaning"] => meaning_lines(r).join(" / "),
                _ => reason.clone(),
            };
            fails.push_str(&format!(
                "| `{}` {} | {} | {} | {} | {} |\n",
                &c.commit[..12],
                c.date,
                clip(&c.subject, 70),
                key,
                clip(&evidence, 110),
                j.as_ref()
                    .map(|j| format!("**{}**: {}", j.call, cell(&j.why)))
                    .unwrap_or_else(|| "**unjudged**".into())
            ));
        }
        rows.push(json!({
            "commit": c.commit, "date": c.date, "subject": c.subject, "exit": run.exit,
            "status": status, "signals": sig, "reason": reason,
        }));
    }

    // The project's own renames and consolidations, old → new.
    let aliases: BTreeMap<String, String> = serde_json::from_value(read_json(
        &ctx.external
            .join("github-mcp-server/deprecated_tool_aliases.json"),
    )?)?;
    let mut alias_rows = String::new();
    let (mut as_rename, mut same_commit) = (0, 0);
    for (old, new) in &aliases {
        let renamed = found_renames.iter().find(|(f, t, _)| f == old && t == new);
        let how = if let Some((_, _, i)) = renamed {
            as_rename += 1;
            format!("reported as `tool-renamed` in `{}`", &all[*i].commit[..12])
        } else {
            match (removed_in.get(old), added_in.get(new)) {
                (Some(r), Some(a)) if r == a => {
                    same_commit += 1;
                    format!(
                        "removed and `{new}` added in the same commit `{}` (a consolidation: \
                         reported as removal + addition, the removal breaking)",
                        &all[*r].commit[..12]
                    )
                }
                (Some(r), Some(a)) => format!(
                    "removed in `{}`, `{new}` added in `{}`",
                    &all[*r].commit[..12],
                    &all[*a].commit[..12]
                ),
                (Some(r), None) => format!(
                    "removed in `{}`; `{new}` already existed",
                    &all[*r].commit[..12]
                ),
                (None, _) => "never removed in the commits run".into(),
            }
        };
        alias_rows.push_str(&format!("| `{old}` | `{new}` | {how} |\n"));
    }
    let alias_names: BTreeSet<(&str, &str)> = aliases
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let extra: Vec<String> = found_renames
        .iter()
        .filter(|(f, t, _)| !alias_names.contains(&(f.as_str(), t.as_str())))
        .map(|(f, t, i)| format!("`{f}` → `{t}` (`{}`)", &all[*i].commit[..12]))
        .collect();

    let n = runs.len();
    let fail_n = by_status.get("fail").copied().unwrap_or(0);
    let mut md = format!(
        "## Real PR history: github/github-mcp-server, {n} consecutive commits\n\n\
         `driftgate diff BASE HEAD` at default settings (no suite: the meaning shifts of the \
         descriptions, the severity law and the injection scan decide; the cosine is reported, \
         not gated). The commit subject is the author's intent.\n\n\
         | verdict | commits |\n|---|---|\n"
    );
    for (s, k) in &by_status {
        md.push_str(&format!("| {s} | {} |\n", Rate::new(*k, n).cell()));
    }
    md.push_str("\n| signal(s) that failed the commit | commits |\n|---|---|\n");
    for (s, k) in &by_signal {
        md.push_str(&format!("| {s} | {} |\n", Rate::new(*k, fail_n).cell()));
    }
    let calls = |call: &str| text_calls.get(call).copied().unwrap_or(0);
    md.push_str(&format!(
        "\nOf the {text_only} fails decided by description text alone (meaning shifts), judged by \
         hand from the texts: {} right to flag (the meaning an agent acts on changed), {} false \
         alarms (paraphrase or elaboration). Fails with a schema signal are judged by rule: the \
         change is a fact of the definitions, and a call valid at base fails or is misread at head \
         whatever the intent.\n",
        Rate::new(calls("right"), text_only).cell(),
        Rate::new(calls("false-alarm"), text_only).cell(),
    ));
    let b = |call: &str, flagged: bool| {
        blind
            .get(&(call.to_string(), flagged))
            .copied()
            .unwrap_or(0)
    };
    md.push_str(&format!(
        "\n**A blind check of the meaning rules.** Before the rules existed, the commits the cosine \
         floor failed were judged by hand (`blind = true` in bench/evidence/judgements.toml): \
         {} judged *right to flag*, {} *false alarms*. The rules flag {} of the first and {} of the \
         second.\n",
        b("right", true) + b("right", false),
        b("false-alarm", true) + b("false-alarm", false),
        Rate::new(b("right", true), b("right", true) + b("right", false)).cell(),
        Rate::new(
            b("false-alarm", true),
            b("false-alarm", true) + b("false-alarm", false)
        )
        .cell(),
    ));
    md.push_str(&format!(
        "\nEvery fail, with a judgement ({unjudged} unjudged):\n\n\
         | commit | subject (intent) | signal | evidence | judgement |\n|---|---|---|---|---|\n\
         {fails}\n\
         ### Renames and consolidations vs the project's `deprecated_tool_aliases.json`\n\n\
         {} of {} aliases reported as a rename, {} as removal + addition in one commit \
         (consolidations: several old tools into one new).\n\n\
         | old | new | what `diff` reported |\n|---|---|---|\n{alias_rows}\n\
         Renames `diff` reported that are not in the aliases: {}.\n\n",
        as_rename,
        aliases.len(),
        same_commit,
        if extra.is_empty() {
            "none".into()
        } else {
            extra.join(", ")
        }
    ));
    Ok(vec![Section {
        id: "github-mcp-server",
        markdown: md,
        rows,
        rates: vec![
            ("fail", Rate::new(fail_n, n)),
            ("text-only", Rate::new(text_only, n)),
            (
                "refused",
                Rate::new(by_status.get("error").copied().unwrap_or(0), n),
            ),
            ("unjudged", Rate::new(unjudged, n)),
            ("renames", Rate::new(as_rename + same_commit, aliases.len())),
            (
                "text-false-alarm",
                Rate::new(calls("false-alarm"), text_only),
            ),
            (
                "blind-right-flagged",
                Rate::new(b("right", true), b("right", true) + b("right", false)),
            ),
            (
                "blind-false-alarm-flagged",
                Rate::new(
                    b("false-alarm", true),
                    b("false-alarm", true) + b("false-alarm", false),
                ),
            ),
        ],
    }])
}
