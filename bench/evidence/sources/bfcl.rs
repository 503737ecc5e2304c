//! BFCL (PyPI `bfcl-eval==2026.3.23`, fetched by `bench/evidence/run`, never committed):
//! `multiple` and `live_multiple` (each question offered its own 2–4+ functions, grouped by tool
//! set, one `check` per group) and `irrelevance` (no offered function fits: the right answer is
//! no call). BFCL's function format becomes MCP tools: its `dict`/`float`/`tuple`/`any` types
//! and `optional` flags turned into JSON Schema.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result};
use serde_json::{Map, Value, json};

use super::replay::{self, Case};
use super::{Ctx, Rate, Section};

/// A BFCL parameter schema as JSON Schema: `dict` → object, `float` → number, `tuple` → array,
/// `any` → no type; BFCL's own `optional` flag dropped (it is already absent from `required`).
pub fn schema(v: &Value) -> Value {
    let Value::Object(o) = v else {
        return v.clone();
    };
    let mut out = Map::new();
    for (k, val) in o {
        match (k.as_str(), val) {
            ("optional", _) => {}
            ("type", Value::String(t)) => {
                let t = match t.as_str() {
                    "dict" => Some("object"),
                    "float" => Some("number"),
                    "tuple" => Some("array"),
                    "any" => None,
                    other => Some(other),
                };
                if let Some(t) = t {
                    out.insert("type".into(), json!(t));
                }
            }
            ("properties", Value::Object(p)) => {
                let p: Map<String, Value> = p.iter().map(|(k, v)| (k.clone(), schema(v))).collect();
                out.insert(k.clone(), Value::Object(p));
            }
            ("items" | "additionalProperties", v) => {
                out.insert(k.clone(), schema(v));
            }
            _ => {
                out.insert(k.clone(), val.clone());
            }
        }
    }
    Value::Object(out)
}

pub fn tool(f: &Value) -> Value {
    json!({"name": f["name"], "description": f["description"],
           "inputSchema": schema(&f["parameters"])})
}

/// A JSON-lines file's values, each with its `file:line` for errors.
fn lines(path: &std::path::Path) -> Result<Vec<(String, Value)>> {
    std::fs::read_to_string(path)
        .with_context(|| format!("{}", path.display()))?
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let at = format!("{}:{}", path.display(), i + 1);
            let v = serde_json::from_str(l).with_context(|| format!("{at}: not JSON"))?;
            Ok((at, v))
        })
        .collect()
}

/// Cases grouped by the tool set they were offered: (tools, cases).
pub fn groups(
    data: &std::path::Path,
    set: &str,
    irrelevant: bool,
) -> Result<Vec<(Value, Vec<Case>)>> {
    let questions = lines(&data.join(format!("BFCL_v4_{set}.json")))?;
    let answers: BTreeMap<String, String> = if irrelevant {
        BTreeMap::new()
    } else {
        lines(&data.join(format!("possible_answer/BFCL_v4_{set}.json")))?
            .into_iter()
            .filter_map(|(_, a)| {
                let name = a["ground_truth"][0].as_object()?.keys().next()?.clone();
                Some((a["id"].as_str()?.to_string(), name))
            })
            .collect()
    };
    let mut by_tools: BTreeMap<String, (Value, Vec<Case>)> = BTreeMap::new();
    for (at, q) in questions {
        let id = q["id"]
            .as_str()
            .with_context(|| format!("{at}: `id` is not a string"))?
            .to_string();
        let functions = q["function"]
            .as_array()
            .with_context(|| format!("{at}: `function` is not a list of functions"))?;
        let mut names: Vec<&str> = functions
            .iter()
            .filter_map(|f| f["name"].as_str())
            .collect();
        names.sort();
        let key = names.join(",");
        let prompt = q["question"][0]
            .as_array()
            .and_then(|turns| turns.iter().rev().find(|t| t["role"] == "user"))
            .and_then(|t| t["content"].as_str())
            .unwrap_or("")
            .to_string();
        let expect = if irrelevant {
            vec![]
        } else {
            vec![answers.get(&id).cloned().with_context(|| {
                format!("{at}: question {id} has no ground truth in possible_answer/")
            })?]
        };
        let entry = by_tools
            .entry(key)
            .or_insert_with(|| (Value::Array(functions.iter().map(tool).collect()), vec![]));
        entry.1.push(Case {
            id,
            prompt,
            expect,
            args: None,
        });
    }
    Ok(by_tools.into_values().collect())
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    use rayon::prelude::*;
    let Some(data) = &ctx.bfcl else {
        return Ok(vec![Section {
            id: "bfcl",
            markdown: "## BFCL\n\nNot run: `--bfcl DIR` was not given (bench/evidence/run \
                       fetches `bfcl-eval==2026.3.23` from PyPI).\n\n"
                .into(),
            rows: vec![],
            rates: vec![],
        }]);
    };
    let mut md = String::from(
        "## Routing on BFCL (bfcl-eval 2026.3.23)\n\n\
         Each question is offered the functions BFCL offered it; questions sharing a function \
         set are one suite, one `check`. `irrelevance`: no offered function fits, right = no \
         call (the semantic router's none threshold decides).\n\n\
         | set | questions | tool sets | accuracy | refused runs |\n|---|---|---|---|---|\n",
    );
    let mut rows = Vec::new();
    let mut rates = Vec::new();
    let judged = super::judgements();
    let mut misroutes = String::from(
        "Every misrouted question, judged (bench/evidence/judgements.toml; `router`, `label`, \
         `ambiguous` as for MCPToolBench++):\n",
    );
    for (set, irrelevant, name) in [
        ("multiple", false, "multiple"),
        ("live_multiple", false, "live_multiple"),
        ("irrelevance", true, "irrelevance"),
    ] {
        let gs = ctx.take(groups(data, set, irrelevant)?);
        let source = format!("bfcl-{set}");
        let results: Vec<(usize, usize, String, String, Rate)> = gs
            .par_iter()
            .enumerate()
            .map(|(i, (tools, cases))| {
                let run = replay::check(ctx, &format!("bfcl/{set}/{i}"), tools, tools, cases)?;
                let (misses, unjudged) = replay::misroutes(&run, "base", &source, cases, &judged);
                Ok(match replay::accuracy(&run) {
                    Some((b, _, n)) => (b, n, String::new(), misses, unjudged),
                    None => {
                        let why = run.stderr.lines().last().unwrap_or("").to_string();
                        (0, 0, why, misses, unjudged)
                    }
                })
            })
            .collect::<Result<_>>()?;
        misroutes.push_str(&format!("\n`{set}`:\n\n{}", replay::MISROUTES));
        let (mut missed, mut unjudged) = (0, 0);
        for r in &results {
            misroutes.push_str(&r.3);
            missed += r.4.n;
            unjudged += r.4.hits;
        }
        rates.push((
            match set {
                "multiple" => "multiple-unjudged",
                "live_multiple" => "live_multiple-unjudged",
                _ => "irrelevance-unjudged",
            },
            Rate::new(unjudged, missed),
        ));
        let right: usize = results.iter().map(|r| r.0).sum();
        let n: usize = results.iter().map(|r| r.1).sum();
        let refused: Vec<&str> = results
            .iter()
            .filter(|r| !r.2.is_empty())
            .map(|r| r.2.as_str())
            .collect();
        let questions: usize = gs.iter().map(|g| g.1.len()).sum();
        md.push_str(&format!(
            "| `{set}` | {questions} | {} | {} | {} |\n",
            gs.len(),
            Rate::new(right, n).cell(),
            refused.len()
        ));
        for r in &refused {
            rows.push(json!({"set": set, "refused": r}));
        }
        rows.push(
            json!({"set": set, "questions": questions, "groups": gs.len(),
                         "right": right, "cases": n}),
        );
        rates.push((name, Rate::new(right, n)));
    }
    md.push('\n');
    md.push_str(&misroutes);
    md.push('\n');
    Ok(vec![Section {
        id: "bfcl",
        markdown: md,
        rows,
        rates,
    }])
}
