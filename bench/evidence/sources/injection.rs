//! The injection scan against poisoning nobody here wrote, and against real definitions that
//! must stay clean.
//!
//! - MCP-SafetyBench (`mcp-safetybench/configs`): each task that poisons a real tool's
//!   description or adds a tool is one pull request. Base = the server's real tool set (a
//!   capture where the corpus or MCPToolBench++ has one; else the tools the tasks name, each
//!   reduced to the first sentence of its text), head = base with the edit applied. Flagged =
//!   the scan's delta lists an introduced finding; fails = one is `high` (the default gate).
//!   Tasks are split by sha256 of their path before any rule was written: the even half was read
//!   while writing rules ("seen"), the odd half never was ("held out").
//! - ATR (`agent-threat-rules` on npm, fetched by `bench/evidence/run`, never committed): its
//!   rules' own true positives, true negatives and evasion tests, each string one tool's
//!   description. Split by sha256 of the rule id after the first measurement: the seen half's
//!   misses and true negatives were read while rules were written, the held-out half's never were.
//! - Benign definitions: every distinct definition in the corpus, in github-mcp-server's history,
//!   Azure MCP's 180 tools and MCPToolBench++'s tool files.
//!
//! The scan is called as a library (the same code `driftgate lint`/`diff` run): thousands of
//! one-string sets would otherwise be thousands of processes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Context as _, Result};
use driftgate::injection::{self, Finding, Level, ScanSection};
use driftgate::tools::ToolSet;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Ctx, Rate, Section, cell, clip, read_json};

/// The SafetyBench categories whose tasks edit a description or add a tool (Function Return
/// Injection poisons a tool's output, not its definition).
const RETURN_INJECTION: &str = "Function Return Injection";

pub(super) struct Task {
    pub path: String,
    pub category: String,
    pub held_out: bool,
    pub base: Vec<Value>,
    pub head: Vec<Value>,
    /// The tools the task touched.
    pub touched: Vec<String>,
}

fn to_mcp(t: &Value) -> Value {
    let mut t = t.clone();
    if let Some(o) = t.as_object_mut()
        && !o.contains_key("inputSchema")
        && let Some(s) = o.remove("input_schema")
    {
        o.insert("inputSchema".into(), s);
    }
    t
}

/// The real tool set behind a SafetyBench configuration, where one is captured.
fn real_tools(ctx: &Ctx, config: &str) -> Result<Vec<Value>> {
    let read_list = |p: &Path| -> Result<Vec<Value>> {
        let v = read_json(p)?;
        let list = v.get("tools").cloned().unwrap_or(v);
        Ok(list
            .as_array()
            .context("a tool list")?
            .iter()
            .map(to_mcp)
            .collect())
    };
    Ok(match config {
        "browser_automation" => read_list(
            &ctx.external
                .join("mcptoolbench/executeautomation_mcp-playwright.json"),
        )?,
        "location_navigation" => read_list(&ctx.corpus.join("server-google-maps/0.6.2.json"))?,
        "repository_management" => read_list(&ctx.corpus.join("server-github/2025.4.8.json"))?,
        "web_search" => read_list(&ctx.corpus.join("mcp-server-fetch/2026.10.24.json"))?,
        _ => Vec::new(),
    })
}

/// The first sentence of a text (the tool's own purpose, before any injected part).
fn first_sentence(text: &str) -> String {
    let t = text.trim();
    match t.find(". ") {
        Some(i) => t[..=i].to_string(),
        None => t.to_string(),
    }
}

fn params(p: &Value) -> Value {
    let mut props = serde_json::Map::new();
    for (k, v) in p.as_object().into_iter().flatten() {
        let ty = match v.as_str().unwrap_or("string") {
            "str" | "string" => "string",
            "int" | "integer" => "integer",
            "float" | "number" => "number",
            "bool" | "boolean" => "boolean",
            "list" | "array" => "array",
            "dict" | "object" => "object",
            _ => "string",
        };
        props.insert(k.clone(), json!({"type": ty}));
    }
    json!({"type": "object", "properties": props})
}

fn additions(task: &Value) -> Vec<Value> {
    match &task["mcp_server_additions"] {
        Value::Array(a) => a.clone(),
        v @ Value::Object(_) => vec![v.clone()],
        _ => Vec::new(),
    }
}

pub(super) fn tasks(ctx: &Ctx) -> Result<Vec<Task>> {
    let dir = ctx.external.join("mcp-safetybench/configs");
    let mut configs: Vec<String> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    configs.sort();
    let mut out = Vec::new();
    for config in configs {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(&config))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        let raw: Vec<(String, Value)> = files
            .iter()
            .map(|p| {
                let rel = format!("{config}/{}", p.file_name().unwrap().to_string_lossy());
                read_json(p).map(|v| (rel, v))
            })
            .collect::<Result<_>>()?;
        // The configuration's base: its real tools, plus every tool a task modifies that the
        // capture lacks, reduced to the first sentence of the modified text.
        let mut base = real_tools(ctx, &config)?;
        let mut known: BTreeSet<String> = base
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect();
        for (_, t) in &raw {
            for m in t["mcp_server_modifications"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let name = m["tool_name"].as_str().unwrap_or("").to_string();
                if !name.is_empty() && known.insert(name.clone()) {
                    let text = m["modification_description"].as_str().unwrap_or("");
                    base.push(json!({"name": name, "description": first_sentence(text),
                                     "inputSchema": {"type": "object", "properties": {}}}));
                }
            }
        }
        for (rel, t) in raw {
            let category = t["attack_category"].as_str().unwrap_or("").to_string();
            let mods = t["mcp_server_modifications"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let adds = additions(&t);
            if category == RETURN_INJECTION || (mods.is_empty() && adds.is_empty()) {
                continue;
            }
            let mut head = base.clone();
            let mut touched = Vec::new();
            for m in &mods {
                let name = m["tool_name"].as_str().unwrap_or("");
                let text = m["modification_description"].as_str().unwrap_or("");
                for tool in head.iter_mut().filter(|x| x["name"] == name) {
                    tool["description"] = json!(text);
                }
                touched.push(name.to_string());
            }
            for a in &adds {
                let name = a["tool_name"].as_str().unwrap_or("added_tool").to_string();
                head.push(json!({"name": name, "description": a["description"],
                                 "inputSchema": params(&a["input_parameters"])}));
                touched.push(name);
            }
            let held_out = Sha256::digest(rel.as_bytes())[0] % 2 == 1;
            out.push(Task {
                path: rel,
                category,
                held_out,
                base: base.clone(),
                head,
                touched,
            });
        }
    }
    Ok(ctx.take(out))
}

/// One definition the anchors read: what an agent reads of it, and what driftgate found.
struct Item {
    /// `safetybench` (one per touched tool), `benign`, `atr-tp`, `atr-tn`.
    group: &'static str,
    /// The unit a rate counts: the SafetyBench task, the definition, the ATR case.
    unit: String,
    /// ATR's category, for its rows.
    category: String,
    name: String,
    text: String,
    ours: Option<Level>,
}

/// A definition's text as a scanner of descriptions reads it: name, title, description, and
/// each top-level parameter's name and description.
fn definition_text(tool: &Value) -> String {
    let mut out = vec![tool["name"].as_str().unwrap_or("").to_string()];
    for key in ["title", "description"] {
        if let Some(t) = tool[key].as_str() {
            out.push(t.to_string());
        }
    }
    for (name, p) in tool["inputSchema"]["properties"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let d = p["description"].as_str().unwrap_or("");
        out.push(format!("{name}: {d}"));
    }
    out.join("\n")
}

fn set(tools: &[Value], label: &str) -> Result<ToolSet> {
    ToolSet::from_array(tools, label, "").with_context(|| format!("tools of {label}"))
}

fn worst(found: &[Finding]) -> Option<Level> {
    found.iter().map(|f| f.level).max()
}

fn rules_of(found: &[Finding]) -> String {
    let ids: BTreeSet<&str> = found.iter().map(|f| f.rule.as_str()).collect();
    ids.into_iter().collect::<Vec<_>>().join(", ")
}

/// Counts of one group: flagged (any finding) and failed (a high one) out of n.
#[derive(Default, Clone, Copy)]
struct Tally {
    n: usize,
    flagged: usize,
    high: usize,
}

impl Tally {
    fn add(&mut self, level: Option<Level>) {
        self.n += 1;
        self.flagged += usize::from(level.is_some());
        self.high += usize::from(level == Some(Level::High));
    }
    fn flagged(self) -> Rate {
        Rate::new(self.flagged, self.n)
    }
    fn high(self) -> Rate {
        Rate::new(self.high, self.n)
    }
}

fn safetybench(
    ctx: &Ctx,
    rows: &mut Vec<Value>,
    items: &mut Vec<Item>,
) -> Result<(String, Vec<(&'static str, Rate)>)> {
    let tasks = tasks(ctx)?;
    let mut by: BTreeMap<String, [Tally; 2]> = BTreeMap::new();
    let mut all = [Tally::default(); 2];
    let mut missed = Vec::new();
    for t in &tasks {
        let base = set(&t.base, &t.path)?;
        let head = set(&t.head, &t.path)?;
        let delta = ScanSection::delta(&base, &head, &[]);
        let level = worst(&delta.introduced);
        let half = usize::from(t.held_out);
        by.entry(t.category.clone()).or_default()[half].add(level);
        all[half].add(level);
        if level.is_none() && t.held_out {
            missed.push(t);
        }
        for name in &t.touched {
            for tool in t.head.iter().filter(|x| x["name"] == name.as_str()) {
                items.push(Item {
                    group: "safetybench",
                    unit: t.path.clone(),
                    category: t.category.clone(),
                    name: name.clone(),
                    text: definition_text(tool),
                    ours: level,
                });
            }
        }
        rows.push(
            json!({"source": "mcp-safetybench", "task": t.path, "category": t.category,
            "held_out": t.held_out, "touched": t.touched,
            "level": level.map(Level::as_str), "rules": rules_of(&delta.introduced)}),
        );
    }
    let mut md = String::from(
        "### MCP-SafetyBench: poisoned and added tools as pull requests\n\n\
         Each task that edits a real tool's description or adds a tool, as a PR against the \
         server's tool set (base: the corpus capture of server-google-maps 0.6.2, server-github \
         2025.4.8, mcp-server-fetch, MCPToolBench++'s playwright server; tools no capture has \
         are rebuilt from the first sentence of the task's text). *Flagged*: the scan lists a \
         finding the PR introduced (medium or high); *fails*: a high one (the default \
         `--scan-fail-on high`). *Held out*: the tasks whose path hashes odd (sha256), split \
         before any rule was written and never read; *seen*: the other half, read while the \
         rules of this round were written (and the issue quotes a handful of its phrases).\n\n\
         | category | held out: flagged | held out: fails | seen: flagged | all: flagged |\n\
         |---|---|---|---|---|\n",
    );
    for (cat, [seen, held]) in &by {
        let mut both = *seen;
        both.n += held.n;
        both.flagged += held.flagged;
        both.high += held.high;
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            cell(cat),
            held.flagged().cell(),
            held.high().cell(),
            seen.flagged().cell(),
            both.flagged().cell()
        ));
    }
    let [seen, held] = all;
    let mut both = seen;
    both.n += held.n;
    both.flagged += held.flagged;
    both.high += held.high;
    md.push_str(&format!(
        "| **all** | {} | {} | {} | {} |\n\n",
        held.flagged().cell(),
        held.high().cell(),
        seen.flagged().cell(),
        both.flagged().cell()
    ));
    if !missed.is_empty() {
        md.push_str(
            "Held-out tasks the scan did not flag (their text was read only after the table \
             was measured):\n\n| task | category | tools |\n|---|---|---|\n",
        );
        for t in &missed {
            md.push_str(&format!(
                "| `{}` | {} | {} |\n",
                t.path,
                cell(&t.category),
                clip(&t.touched.join(", "), 80)
            ));
        }
        md.push('\n');
    }
    Ok((
        md,
        vec![
            ("safetybench flagged", both.flagged()),
            ("safetybench held-out flagged", held.flagged()),
            ("safetybench fails", both.high()),
        ],
    ))
}

/// One ATR test string as a tool of its own.
/// The test case as a tool, and which of ATR's fields the text came from.
fn atr_tool(case: &Value) -> Option<(&'static str, Value)> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    for key in [
        "tool_description",
        "input",
        "tool_response",
        "content",
        "tool_args",
    ] {
        if let Some(v) = case.get(key) {
            let tool = json!({"name": "atr_case", "description": text(v),
                              "inputSchema": {"type": "object", "properties": {}}});
            return Some((key, tool));
        }
    }
    case.get("tool_name").map(|n| {
        let tool = json!({"name": text(n), "description": "Runs the task.",
                          "inputSchema": {"type": "object", "properties": {}}});
        ("tool_name", tool)
    })
}

fn scan_one(tool: &Value) -> Option<Level> {
    let set = ToolSet::from_array(std::slice::from_ref(tool), "atr", "").ok()?;
    worst(&injection::scan(&set))
}

/// One row of the ATR table: true positives, true negatives, evasions.
fn atr_row(label: &str, held_out: bool, [tp, tn, ev]: [&Tally; 3]) -> String {
    format!(
        "| {label} | {} | {} | {} | {} | {} | {} |\n",
        if held_out { "held out" } else { "seen" },
        tp.flagged().cell(),
        tp.high().cell(),
        tn.flagged().cell(),
        tn.high().cell(),
        ev.flagged().cell()
    )
}

/// One test string of an ATR rule, as a tool of its own.
pub(super) struct AtrCase {
    pub rule: String,
    pub category: String,
    /// `tp`, `tn` or `evasion`.
    pub kind: &'static str,
    pub held_out: bool,
    /// ATR's field the text came from: `tool_description`, `input`, `tool_response`,
    /// `content`, `tool_args` or `tool_name`.
    pub field: &'static str,
    pub tool: Value,
}

/// Every test string of ATR's rules (`rules/<category>/*.yaml`), in file order.
pub(super) fn atr_cases(ctx: &Ctx, dir: &Path) -> Result<Vec<AtrCase>> {
    let mut files = Vec::new();
    for cat in std::fs::read_dir(dir.join("rules"))? {
        let cat = cat?.path();
        for f in std::fs::read_dir(&cat)? {
            let f = f?.path();
            if f.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                files.push(f);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in ctx.take(files) {
        let text = std::fs::read_to_string(&f)?;
        let rule: serde_yaml::Value =
            serde_yaml::from_str(&text).with_context(|| format!("{}", f.display()))?;
        let rule: Value = serde_json::to_value(rule)?;
        let category = f
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let id = rule["id"].as_str().unwrap_or("").to_string();
        let held_out = Sha256::digest(id.as_bytes())[0] % 2 == 1;
        let groups = [
            ("tp", &rule["test_cases"]["true_positives"]),
            ("tn", &rule["test_cases"]["true_negatives"]),
            ("evasion", &rule["evasion_tests"]),
        ];
        for (kind, cases) in groups {
            for case in cases.as_array().into_iter().flatten() {
                if let Some((field, tool)) = atr_tool(case) {
                    out.push(AtrCase {
                        rule: id.clone(),
                        category: category.clone(),
                        kind,
                        held_out,
                        field,
                        tool,
                    });
                }
            }
        }
    }
    Ok(out)
}

fn atr(
    ctx: &Ctx,
    dir: &Path,
    rows: &mut Vec<Value>,
    items: &mut Vec<Item>,
) -> Result<(String, Vec<(&'static str, Rate)>)> {
    // (category, held out) → [true positives, true negatives, evasions]
    let mut by: BTreeMap<(String, bool), [Tally; 3]> = BTreeMap::new();
    // (ATR's field, held out) → the same
    let mut by_field: BTreeMap<(&str, bool), [Tally; 3]> = BTreeMap::new();
    for c in atr_cases(ctx, dir)? {
        let level = scan_one(&c.tool);
        let i = ["tp", "tn", "evasion"]
            .iter()
            .position(|k| *k == c.kind)
            .unwrap_or(2);
        by.entry((c.category.clone(), c.held_out)).or_default()[i].add(level);
        by_field.entry((c.field, c.held_out)).or_default()[i].add(level);
        if c.kind != "evasion" {
            items.push(Item {
                group: if c.kind == "tp" { "atr-tp" } else { "atr-tn" },
                unit: format!("{}:{}:{}", c.rule, c.kind, items.len()),
                category: c.category.clone(),
                name: c.tool["name"].as_str().unwrap_or("").to_string(),
                text: definition_text(&c.tool),
                ours: level,
            });
        }
        rows.push(
            json!({"source": "atr", "rule": c.rule, "category": c.category,
                         "kind": c.kind, "held_out": c.held_out, "field": c.field,
                         "level": level.map(Level::as_str)}),
        );
    }
    let mut md = String::from(
        "### ATR (agent-threat-rules 4.0.0): its rules' own test strings\n\n\
         Each true positive, true negative and evasion test of ATR's 785 rules, as the \
         description of a tool of its own. Split by sha256 of the rule id after the first \
         measurement: the *seen* half's misses were read while rules were written, the *held-out* \
         half's never were. ATR's strings are not all tool descriptions: many are user messages \
         or tool outputs, which the scan does not target; `tool-poisoning` is the category that \
         measures what it does.\n\n\
         | category | half | true positives flagged | true positives high | true negatives \
         flagged | true negatives high | evasions flagged |\n|---|---|---|---|---|---|---|\n",
    );
    let mut total: BTreeMap<bool, [Tally; 3]> = BTreeMap::new();
    for ((cat, held_out), [tp, tn, ev]) in &by {
        md.push_str(&atr_row(&cell(cat), *held_out, [tp, tn, ev]));
        let t = total.entry(*held_out).or_default();
        for (t, x) in t.iter_mut().zip([tp, tn, ev]) {
            t.n += x.n;
            t.flagged += x.flagged;
            t.high += x.high;
        }
    }
    for (held_out, [tp, tn, ev]) in &total {
        md.push_str(&atr_row("**all**", *held_out, [tp, tn, ev]));
    }
    md.push_str(
        "\nThe same strings by the field ATR gives them in: a `tool_description` is what the scan \
         reads in a pull request; `input` (a user's or another agent's message), `tool_response`, \
         `tool_args` and `content` are traffic, where many of ATR's true positives are payloads \
         (SQL, SSRF addresses, shell in arguments, CVE write-ups) rather than instructions an \
         agent reads in a definition.\n\n\
         | field | half | true positives flagged | true positives high | true negatives \
         flagged | true negatives high | evasions flagged |\n|---|---|---|---|---|---|---|\n",
    );
    for ((field, held_out), [tp, tn, ev]) in &by_field {
        md.push_str(&atr_row(&format!("`{field}`"), *held_out, [tp, tn, ev]));
    }
    md.push('\n');
    let get = |cat: &str, held: bool| {
        by.get(&(cat.to_string(), held))
            .copied()
            .unwrap_or_default()
    };
    let sum = |a: Tally, b: Tally| Tally {
        n: a.n + b.n,
        flagged: a.flagged + b.flagged,
        high: a.high + b.high,
    };
    let described = sum(
        by_field
            .get(&("tool_description", true))
            .copied()
            .unwrap_or_default()[0],
        by_field
            .get(&("tool_description", false))
            .copied()
            .unwrap_or_default()[0],
    );
    let tool_held = get("tool-poisoning", true);
    let tool_seen = get("tool-poisoning", false);
    let tn_all = sum(
        total.get(&true).copied().unwrap_or_default()[1],
        total.get(&false).copied().unwrap_or_default()[1],
    );
    Ok((
        md,
        vec![
            (
                "atr tool-poisoning flagged",
                sum(tool_held[0], tool_seen[0]).flagged(),
            ),
            (
                "atr tool-poisoning held-out flagged",
                tool_held[0].flagged(),
            ),
            (
                "atr tool-poisoning true negatives high",
                sum(tool_held[1], tool_seen[1]).high(),
            ),
            ("atr true negatives high", tn_all.high()),
            (
                "atr tool_description true positives flagged",
                described.flagged(),
            ),
        ],
    ))
}

/// A benign source: its name and the tool sets it shipped.
pub(super) type Sets = (&'static str, Vec<Vec<Value>>);

/// Every distinct definition of one benign source, scanned inside the set it shipped in.
pub(super) fn benign_sets(ctx: &Ctx) -> Result<Vec<Sets>> {
    let corpus: Vec<Vec<Value>> = super::probe::corpus(ctx)?
        .into_iter()
        .flat_map(|(_, _, sets)| sets)
        .collect();
    let dir = ctx.external.join("github-mcp-server");
    let mut history = Vec::new();
    for line in std::fs::read_to_string(dir.join("history.jsonl"))?.lines() {
        let c: Value = serde_json::from_str(line)?;
        let mut tools = Vec::new();
        for id in c["tools"].as_array().into_iter().flatten() {
            tools.push(read_json(
                &dir.join(format!("tools/{}.json", id.as_str().unwrap_or(""))),
            )?);
        }
        history.push(tools);
    }
    let azure: Vec<Value> = read_json(&ctx.external.join("azure-mcp/tools.json"))?["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(super::azure::tool)
        .collect::<Result<_>>()?;
    let mut toolbench = Vec::new();
    for f in [
        "executeautomation_mcp-playwright.json",
        "puppeteer_puppeteer.json",
    ] {
        let v = read_json(&ctx.external.join("mcptoolbench").join(f))?;
        toolbench.push(
            v["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .map(to_mcp)
                .collect(),
        );
    }
    Ok(vec![
        (
            "the corpus (28 servers, every captured version)",
            ctx.take(corpus),
        ),
        ("github-mcp-server, 155 commits", ctx.take(history)),
        ("Azure MCP, 180 tools", vec![azure]),
        ("MCPToolBench++ tool files", toolbench),
    ])
}

fn benign(
    ctx: &Ctx,
    rows: &mut Vec<Value>,
    items: &mut Vec<Item>,
) -> Result<(String, Vec<(&'static str, Rate)>)> {
    let mut md = String::from(
        "### Real definitions that must stay clean\n\n\
         Every distinct tool definition (by its canonical JSON), scanned inside the set it \
         shipped in. *High* would fail a PR that introduced it.\n\n\
         | source | definitions with a high finding | with any finding | what was found |\n\
         |---|---|---|---|\n",
    );
    let mut rates = Vec::new();
    let mut all = Tally::default();
    for (name, sets) in benign_sets(ctx)? {
        let mut seen: BTreeMap<String, (Option<Level>, Value)> = BTreeMap::new();
        let mut found: BTreeMap<String, Vec<Finding>> = BTreeMap::new();
        for tools in sets {
            let set = set(&tools, name)?;
            let findings = injection::scan(&set);
            for t in &set.tools {
                let key = serde_json::to_string(&t.to_value())?;
                let mine: Vec<Finding> = findings
                    .iter()
                    .filter(|f| f.tool == t.name)
                    .cloned()
                    .collect();
                let level = worst(&mine);
                let e = seen.entry(key).or_insert((None, t.to_value()));
                e.0 = e.0.max(level);
                if !mine.is_empty() {
                    found.entry(t.name.clone()).or_default().extend(mine);
                }
            }
        }
        let mut tally = Tally::default();
        for (key, (level, tool)) in &seen {
            tally.add(*level);
            all.add(*level);
            items.push(Item {
                group: "benign",
                unit: key.clone(),
                category: name.to_string(),
                name: tool["name"].as_str().unwrap_or("").to_string(),
                text: definition_text(tool),
                ours: *level,
            });
        }
        let mut what: BTreeMap<String, usize> = BTreeMap::new();
        for (tool, fs) in &found {
            for f in fs {
                *what
                    .entry(format!("{} {} ({tool})", f.rule, f.level.as_str()))
                    .or_default() += 1;
            }
        }
        for w in what.keys() {
            rows.push(json!({"source": "benign", "set": name, "finding": w}));
        }
        let listed: Vec<String> = what.keys().take(12).cloned().collect();
        md.push_str(&format!(
            "| {name} | {} | {} | {} |\n",
            tally.high().cell(),
            tally.flagged().cell(),
            clip(&listed.join("; "), 600)
        ));
        if name.starts_with("the corpus") {
            rates.push(("corpus definitions high", tally.high()));
        }
    }
    md.push_str(&format!(
        "| **all** | {} | {} | |\n\n",
        all.high().cell(),
        all.flagged().cell()
    ));
    rates.push(("benign definitions high", all.high()));
    Ok((md, rates))
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    let mut rows = Vec::new();
    let mut md = String::from(
        "## The injection scan on poisoning nobody here wrote\n\n\
         Default settings; the scan's rules are data (`src/injection/rules.rs`, docs/scan.md).\n\n",
    );
    let mut rates = Vec::new();
    let mut items = Vec::new();
    let (m, r) = safetybench(ctx, &mut rows, &mut items)?;
    md.push_str(&m);
    rates.extend(r);
    if let Some(dir) = &ctx.atr {
        let (m, r) = atr(ctx, dir, &mut rows, &mut items)?;
        md.push_str(&m);
        rates.extend(r);
    } else {
        md.push_str("ATR was not fetched in this run (`bench/evidence/run` fetches it).\n\n");
    }
    let (m, r) = benign(ctx, &mut rows, &mut items)?;
    md.push_str(&m);
    rates.extend(r);
    let (m, r) = super::probe::section(ctx, &mut rows)?;
    md.push_str(&m);
    rates.extend(r);
    md.push_str(&anchors(ctx, &items, &mut rows)?);
    Ok(vec![Section {
        id: "injection",
        markdown: md,
        rows,
        rates,
    }])
}

/// Run one anchor script over the items: `program args… < texts.jsonl`, one JSON line back per
/// item, `hit` read.
fn run_anchor(ctx: &Ctx, program: &Path, args: &[&Path], items: &[Item]) -> Result<Vec<bool>> {
    let inputs: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, it)| json!({"id": i, "name": it.name, "text": it.text}))
        .collect();
    let out = super::run_lines(ctx, "anchor-input", program, args, &inputs)?;
    Ok(out.iter().map(|v| v["hit"] == true).collect())
}

/// Which items one row of the anchors' table counts.
type Member = fn(&Item) -> bool;

/// The anchors a user would pick instead, on the same definitions: ATR's own engine and Cisco
/// mcp-scanner's YARA rules. Flagged per unit (a SafetyBench task is flagged when any tool it
/// touched is).
fn anchors(ctx: &Ctx, items: &[Item], rows: &mut Vec<Value>) -> Result<String> {
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/evidence/anchors");
    let mut columns: Vec<(&str, Vec<bool>)> = vec![
        (
            "driftgate (any finding)",
            items.iter().map(|i| i.ours.is_some()).collect(),
        ),
        (
            "driftgate (high: fails the gate)",
            items.iter().map(|i| i.ours == Some(Level::High)).collect(),
        ),
    ];
    if let Some(atr) = &ctx.atr {
        let hits = run_anchor(
            ctx,
            Path::new("node"),
            &[&scripts.join("atr.mjs"), atr],
            items,
        )?;
        columns.push(("ATR 4.0.0 rules", hits));
    }
    if let Some(cisco) = &ctx.cisco {
        let hits = run_anchor(
            ctx,
            &cisco.join("venv/bin/python"),
            &[&scripts.join("cisco_yara.py"), &cisco.join("rules")],
            items,
        )?;
        columns.push(("Cisco mcp-scanner 4.8.7 YARA", hits));
    }
    if columns.len() == 2 {
        return Ok(
            "The anchors (ATR's engine, Cisco mcp-scanner's YARA rules) were not fetched in this \
             run (`bench/evidence/run` fetches them).\n\n"
                .into(),
        );
    }
    let groups: [(&str, Member); 5] = [
        ("MCP-SafetyBench tasks (recall)", |i| {
            i.group == "safetybench"
        }),
        ("ATR tool-poisoning true positives (recall)", |i| {
            i.group == "atr-tp" && i.category == "tool-poisoning"
        }),
        ("ATR true positives, all categories (recall)", |i| {
            i.group == "atr-tp"
        }),
        ("ATR true negatives (false alarms)", |i| i.group == "atr-tn"),
        ("real definitions (false alarms)", |i| i.group == "benign"),
    ];
    let mut md = String::from(
        "### The anchors on the same definitions\n\n\
         What a user would run instead, on exactly the texts above: ATR's own engine \
         (`agent-threat-rules` 4.0.0 from npm; each text offered as a tool response with the \
         tool's name and description and as a user input, a hit under either counts) and Cisco \
         mcp-scanner's YARA rules (`cisco-ai-mcp-scanner` 4.8.7 from PyPI, run with `yara-python` \
         over each definition's name, description and parameters; every rule is \"harmful\"). \
         ATR's own column on its own test strings is its self-test, not a measurement.\n\n| set |",
    );
    for (name, _) in &columns {
        md.push_str(&format!(" {name} |"));
    }
    md.push_str("\n|---|");
    md.push_str(&"---|".repeat(columns.len()));
    md.push('\n');
    for (label, member) in groups {
        md.push_str(&format!("| {label} |"));
        for (_, hits) in &columns {
            let mut units: BTreeMap<&str, bool> = BTreeMap::new();
            for (it, hit) in items.iter().zip(hits) {
                if member(it) {
                    *units.entry(it.unit.as_str()).or_default() |= *hit;
                }
            }
            let r = Rate::new(units.values().filter(|h| **h).count(), units.len());
            md.push_str(&format!(" {} |", r.cell()));
        }
        md.push('\n');
    }
    md.push('\n');
    for (i, it) in items.iter().enumerate() {
        if it.group == "safetybench" {
            let hits: BTreeMap<&str, bool> = columns.iter().map(|(n, h)| (*n, h[i])).collect();
            rows.push(json!({"source": "anchors", "task": it.unit, "tool": it.name, "hits": hits}));
        }
    }
    Ok(md)
}
