//! MCPToolBench++'s real prompts (mcp-tool-bench/MCPToolBenchPP @ 323725c): the filesystem set
//! replayed on every server-filesystem release in the corpus (each consecutive pair one `check`:
//! the gate's verdict on a real release, accuracy at both sides), and the search set on the
//! benchmark's own tool list (tavily's four tools + google search). The label is the benchmark's
//! expected tool; its `similar_tools` count as right too.

use anyhow::{Context as _, Result};
use serde_json::{Value, json};

use super::replay::{self, Case};
use super::{Ctx, Rate, Section, cell, clip, read_json};

/// The benchmark's cases and the tool list it offered with them.
pub fn cases(ctx: &Ctx, file: &str) -> Result<(Vec<Case>, Value)> {
    let (mut cases, tools) = cases_with_args(ctx, file)?;
    for c in &mut cases {
        c.args = None; // the semantic router makes no call to judge
    }
    Ok((cases, tools))
}

/// The labelled arguments as the suite's matchers. A path the benchmark writes `./a/b` matches
/// with or without its `./` and a trailing `/` (the prompts name `a/b`); other strings, numbers
/// and booleans match literally; lists and objects (several paths, an edit's old and new text)
/// are left free: how a model spells them varies more than what they mean.
pub fn args_of(input: &Value) -> Option<Value> {
    let mut out = serde_json::Map::new();
    for (k, v) in input.as_object()? {
        let m = match v {
            Value::String(s) if s.starts_with("./") || s.contains('/') => {
                let bare = s.trim_start_matches("./").trim_end_matches('/');
                json!({"regex": format!("^(\\./)?{}/?$", regex_lite::escape(bare))})
            }
            Value::String(_) | Value::Number(_) | Value::Bool(_) => v.clone(),
            _ => continue,
        };
        out.insert(k.clone(), m);
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// [`cases`] with each case's labelled arguments (`args_of`), for a router that makes calls.
pub fn cases_with_args(ctx: &Ctx, file: &str) -> Result<(Vec<Case>, Value)> {
    let path = ctx.external.join("mcptoolbench").join(file);
    let all = read_json(&path)?;
    let all = all
        .as_array()
        .with_context(|| format!("{}: expected a list of tasks", path.display()))?;
    let mut cases = Vec::new();
    for t in all {
        let label = &t["function_call_label"][0];
        let mut expect = vec![label["name"].as_str().context("label name")?.to_string()];
        for s in label["similar_tools"].as_array().into_iter().flatten() {
            expect.extend(s["name"].as_str().map(String::from));
        }
        cases.push(Case {
            id: t["uuid"].as_str().unwrap_or("").chars().take(8).collect(),
            prompt: t["query"].as_str().unwrap_or("").to_string(),
            expect,
            args: args_of(&label["input"]),
        });
    }
    let tools: Vec<Value> = all[0]["tools"]
        .as_array()
        .context("tools")?
        .iter()
        .map(|t| {
            json!({"name": t["name"], "description": t["description"],
                   "inputSchema": t["input_schema"]})
        })
        .collect();
    Ok((ctx.take(cases), Value::Array(tools)))
}

/// A server's versions in release order, from the corpus INDEX.md's "Servers" table.
pub fn releases(ctx: &Ctx, server: &str) -> Result<Vec<String>> {
    let index = std::fs::read_to_string(ctx.corpus.join("INDEX.md"))?;
    let row = index
        .lines()
        .find(|l| l.starts_with(&format!("| {server} |")) && l.contains(':'))
        .with_context(|| format!("{server} in INDEX.md"))?;
    let versions = row.split('|').nth(5).context("versions column")?;
    Ok(versions
        .split(',')
        .filter_map(|v| v.trim().split(':').next().map(|s| s.to_string()))
        .filter(|v| !v.is_empty())
        .collect())
}

fn unoffered(report: &Value) -> usize {
    report["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| {
            n.as_str()
                .is_some_and(|n| n.contains("no expected tool is offered"))
        })
        .count()
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    use rayon::prelude::*;
    let (fs_cases, _) = cases(ctx, "filesystem_0723_single.json")?;
    let versions = releases(ctx, "server-filesystem")?;
    let dir = ctx.corpus.join("server-filesystem");
    let tools: Vec<Value> = versions
        .iter()
        .map(|v| read_json(&dir.join(format!("{v}.json"))))
        .collect::<Result<_>>()?;
    let runs: Vec<_> = (1..versions.len())
        .into_par_iter()
        .map(|i| {
            replay::check(
                ctx,
                &format!("mcptoolbench/fs/{i}"),
                &tools[i - 1],
                &tools[i],
                &fs_cases,
            )
        })
        .collect::<Result<_>>()?;
    let mut md = format!(
        "## Routing on real prompts: MCPToolBench++\n\n\
         ### Filesystem: {} prompts on each of the {} server-filesystem releases\n\n\
         Each consecutive pair of releases is one `check` (semantic router, default thresholds) \
         with the benchmark's prompts as the suite. A case whose expected tool the release does \
         not offer counts as wrong there (the benchmark was written against the 2025.7 tools). \
         Renames are carried: a case expecting `read_file` is right at a release that renamed it \
         when the renamed tool is chosen. With the benchmark's labelled arguments, a slice (the \
         first prompt of each expected tool that has them, 8) is replayed in CI by a real \
         llama.cpp server (Qwen2.5-Coder-0.5B) on 2025.7.29, `tests/mcptoolbench_llama.rs`: 4/8 \
         routed and 3/8 called right when pinned, floors there (a labelled path matches with or \
         without its `./`; lists and objects are left free).\n\n\
         | release | tools | accuracy | cases not answerable | PR from the previous release | renames |\n\
         |---|---|---|---|---|---|\n",
        fs_cases.len(),
        versions.len()
    );
    let mut rows = Vec::new();
    let mut fails = 0;
    let mut last_head = None;
    for (i, run) in runs.iter().enumerate() {
        let r = run.report.as_ref();
        let acc = replay::accuracy(run);
        let (verdict, reason) = match r {
            Some(r) => (
                run.status().to_string(),
                r["verdict"]["reason"].as_str().unwrap_or("").to_string(),
            ),
            None => (
                "error".into(),
                run.stderr.lines().last().unwrap_or("").into(),
            ),
        };
        if verdict == "fail" {
            fails += 1;
        }
        let ren: Vec<String> = r
            .map(super::renames)
            .unwrap_or_default()
            .iter()
            .map(|(from, to)| format!("`{from}` → `{to}`"))
            .collect();
        if let Some((b, _, n)) = acc {
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                versions[i],
                tools[i].as_array().map_or(0, |t| t.len()),
                Rate::new(b, n).cell(),
                r.map(unoffered).map_or("?".into(), |u| u.to_string()),
                if i == 0 {
                    "—".into()
                } else {
                    rows.last()
                        .map(|row: &Value| {
                            format!(
                                "{}: {}",
                                row["verdict"].as_str().unwrap_or(""),
                                clip(row["reason"].as_str().unwrap_or(""), 90)
                            )
                        })
                        .unwrap_or_default()
                },
                if i == 0 {
                    String::new()
                } else {
                    rows.last()
                        .and_then(|row: &Value| row["renames"].as_str().map(String::from))
                        .unwrap_or_default()
                },
            ));
            last_head = Some((acc, r.map(unoffered)));
        }
        rows.push(json!({
            "set": "filesystem", "from": versions[i], "to": versions[i + 1],
            "verdict": verdict, "reason": reason, "renames": ren.join(", "),
            "base_right": acc.map(|a| a.0), "head_right": acc.map(|a| a.1),
            "cases": acc.map(|a| a.2),
        }));
    }
    if let (Some((Some((_, h, n)), unoff)), Some(row)) = (last_head, rows.last()) {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {}: {} | {} |\n",
            versions[versions.len() - 1],
            tools[versions.len() - 1].as_array().map_or(0, |t| t.len()),
            Rate::new(h, n).cell(),
            unoff.map_or("?".into(), |u| u.to_string()),
            row["verdict"].as_str().unwrap_or(""),
            clip(row["reason"].as_str().unwrap_or(""), 90),
            row["renames"].as_str().unwrap_or(""),
        ));
    }
    md.push_str(&format!(
        "\n{} of {} release PRs failed the gate. A release that gains tools the benchmark \
         expects raises accuracy; a fail there is the gate's other signals (meaning shifts, \
         severity law) speaking, listed in the verdict column.\n\n",
        fails,
        runs.len()
    ));

    let judged = super::judgements();
    // Release i is run i's base (the last one run i - 1's head).
    let mut sides: Vec<replay::Side> = runs
        .iter()
        .enumerate()
        .map(|(i, run)| replay::Side {
            label: &versions[i],
            run,
            side: "base",
            tools: &tools[i],
        })
        .collect();
    if let Some(last) = runs.last() {
        sides.push(replay::Side {
            label: &versions[runs.len()],
            run: last,
            side: "head",
            tools: &tools[runs.len()],
        });
    }
    let (fs_misses, fs_unjudged) =
        replay::misroutes_across(&sides, "mcptoolbench-filesystem", &fs_cases, &judged);
    md.push_str(&format!(
        "Every prompt a release misroutes, once per (prompt, expected, chosen) with the releases \
         where it happens, judged (bench/evidence/judgements.toml, by case or by the (expected, \
         chosen) pair; `router` = the offline router's error, the prompt says what the expected \
         tool does; `label` = the benchmark's label is wrong or the chosen tool serves the \
         prompt as well; `ambiguous` = both tools fit what the prompt says; `unoffered` = \
         the release has none of the expected tools, so no router could be right):\n\n{}{fs_misses}\n",
        replay::MISROUTES_ACROSS
    ));

    // Search: the benchmark's own tool list on both sides, accuracy only.
    let (search_cases, search_tools) = cases(ctx, "search_0725_single_v2.json")?;
    let run = replay::check(
        ctx,
        "mcptoolbench/search",
        &search_tools,
        &search_tools,
        &search_cases,
    )?;
    let (b, _, n) = replay::accuracy(&run).context("search: no routing summary")?;
    md.push_str(&format!(
        "### Search: {} prompts, tavily's four tools + google `search`\n\n\
         The corpus holds no tavily releases, so this is the benchmark's own tool list (both \
         sides): accuracy {} (`similar_tools` accepted). Per tool:\n\n\
         | tool | cases | right | precision |\n|---|---|---|---|\n",
        search_cases.len(),
        Rate::new(b, n).cell()
    ));
    for t in replay::per_tool(&run) {
        let m = &t["base_metrics"];
        md.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            cell(t["tool"].as_str().unwrap_or("")),
            m["support"],
            m["correct"],
            m["precision"]
                .as_f64()
                .map_or("—".into(), |p| format!("{:.2}", p)),
        ));
    }
    let (search_misses, search_unjudged) =
        replay::misroutes(&run, "base", "mcptoolbench-search", &search_cases, &judged);
    md.push_str(&format!(
        "\nEvery misrouted search prompt, judged as above:\n\n{}{search_misses}\n",
        replay::MISROUTES
    ));
    rows.push(json!({"set": "search", "right": b, "cases": n}));
    let first = replay::accuracy(&runs[0]).map(|a| Rate::new(a.0, a.2));
    let fs_last = last_head
        .and_then(|(a, _)| a)
        .map(|(_, h, n)| Rate::new(h, n));
    Ok(vec![Section {
        id: "mcptoolbench",
        markdown: md,
        rows,
        rates: vec![
            ("filesystem-first", first.unwrap_or(Rate::new(0, 0))),
            ("filesystem-last", fs_last.unwrap_or(Rate::new(0, 0))),
            ("search", Rate::new(b, n)),
            ("filesystem-unjudged", fs_unjudged),
            ("search-unjudged", search_unjudged),
        ],
    }])
}
