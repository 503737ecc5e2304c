//! Microsoft's own Azure MCP tool set (microsoft/mcp @ 2c930f6f5): 180 tools in the `azmcp` CLI
//! format (`command`, `option[]`) converted to MCP tools, and its e2e test prompts (a table of
//! tool name → prompt written by that team for its own tool-selection evaluator) as the suite.

use anyhow::{Context as _, Result};
use serde_json::{Map, Value, json};

use super::replay::{self, Case};
use super::{Ctx, Rate, Section, cell, read_json};

/// The MCP name of an `azmcp` command: `acr registry list` → `acr_registry_list` (the names the
/// prompt table uses).
pub fn tool_name(command: &str) -> String {
    command.replace([' ', '-'], "_")
}

/// One `azmcp` command as an MCP tool: each `--option` a string property (the format's only
/// type), `required: true` ones required.
pub fn tool(t: &Value) -> Result<Value> {
    let mut props = Map::new();
    let mut required = Vec::new();
    for o in t["option"].as_array().into_iter().flatten() {
        let name = o["name"]
            .as_str()
            .context("option name")?
            .trim_start_matches('-')
            .to_string();
        props.insert(
            name.clone(),
            json!({"type": o["type"].as_str().unwrap_or("string"),
                   "description": o["description"]}),
        );
        if o["required"] == true {
            required.push(name);
        }
    }
    Ok(json!({
        "name": tool_name(t["command"].as_str().context("command")?),
        "description": t["description"],
        "inputSchema": {"type": "object", "properties": props, "required": required},
    }))
}

/// The prompt table: `| tool_name | prompt |` rows; `\<` escapes undone.
pub fn cases(md: &str) -> Vec<Case> {
    let mut out = Vec::new();
    for line in md.lines() {
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        if cols.len() < 4 || cols[1].is_empty() || cols[1].starts_with(':') {
            continue;
        }
        let name = cols[1];
        if name == "Tool Name" || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        out.push(Case {
            id: format!("az-{:03}", out.len() + 1),
            prompt: cols[2..cols.len() - 1].join("|").replace("\\<", "<"),
            expect: vec![name.to_string()],
            args: None,
        });
    }
    out
}

/// Azure MCP's tools in MCP form and every prompt row of its team's list (some name tools the
/// set does not have).
pub fn load(ctx: &Ctx) -> Result<(Vec<Value>, Vec<Case>)> {
    let dir = ctx.external.join("azure-mcp");
    let path = dir.join("tools.json");
    let raw = read_json(&path)?;
    let tools: Vec<Value> = raw["results"]
        .as_array()
        .with_context(|| format!("{}: expected a `results` list", path.display()))?
        .iter()
        .map(tool)
        .collect::<Result<_>>()?;
    let all = cases(&std::fs::read_to_string(dir.join("e2eTestPrompts.md"))?);
    Ok((tools, all))
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    let (tools, all) = load(ctx)?;
    let names: std::collections::BTreeSet<String> = tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect();
    let unknown: std::collections::BTreeSet<String> = all
        .iter()
        .filter(|c| !names.contains(&c.expect[0]))
        .map(|c| c.expect[0].clone())
        .collect();
    let left_out = all.iter().filter(|c| !names.contains(&c.expect[0])).count();
    let cases = ctx.take(
        all.into_iter()
            .filter(|c| names.contains(&c.expect[0]))
            .collect(),
    );
    let tools = Value::Array(tools);
    let run = replay::check(ctx, "azure", &tools, &tools, &cases)?;
    let (b, _, n) = replay::accuracy(&run).context("azure: no routing summary")?;
    let mut md = format!(
        "## Routing at scale: Azure MCP, {} tools, {} prompts written by its team\n\n\
         Accuracy {} with all {} tools offered to every prompt. {} prompt row(s) name a tool \
         the tool set does not have ({}) and are left out. The tools the router misses most \
         (recall below 50%, at least 3 prompts):\n\n\
         | tool | prompts | right | chosen for other tools' prompts |\n|---|---|---|---|\n",
        names.len(),
        cases.len(),
        Rate::new(b, n).cell(),
        names.len(),
        left_out,
        unknown
            .iter()
            .map(|u| format!("`{u}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut rows = Vec::new();
    for t in replay::per_tool(&run) {
        let m = &t["base_metrics"];
        let (support, correct, predicted) = (
            m["support"].as_u64().unwrap_or(0),
            m["correct"].as_u64().unwrap_or(0),
            m["predicted"].as_u64().unwrap_or(0),
        );
        if support >= 3 && 2 * correct < support {
            md.push_str(&format!(
                "| `{}` | {support} | {correct} | {} |\n",
                cell(t["tool"].as_str().unwrap_or("")),
                predicted - correct.min(predicted)
            ));
        }
        rows.push(
            json!({"tool": t["tool"], "support": support, "correct": correct,
                         "predicted": predicted}),
        );
    }
    let (misses, unjudged) =
        replay::misroutes(&run, "base", "azure-mcp", &cases, &super::judgements());
    md.push_str(&format!(
        "\nEvery misrouted prompt, judged (bench/evidence/judgements.toml; `router`, `label`, \
         `ambiguous` as for MCPToolBench++):\n\n{}{misses}\n",
        replay::MISROUTES
    ));
    Ok(vec![Section {
        id: "azure-mcp",
        markdown: md,
        rows,
        rates: vec![("accuracy", Rate::new(b, n)), ("unjudged", unjudged)],
    }])
}
