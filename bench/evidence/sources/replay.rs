//! Routing on real prompts: a source's labelled prompts become a suite in our format and are
//! replayed by `driftgate check` (semantic router, bundled embedder) on tool sets in MCP form.

use anyhow::Result;
use serde_json::{Value, json};

use super::{Ctx, Rate, Run};

/// One labelled prompt: the tools that count as right (`similar_tools` included).
pub struct Case {
    pub id: String,
    pub prompt: String,
    pub expect: Vec<String>,
    /// Expected arguments in the suite's matcher form (`args`), where the source labels them
    /// and the run measures calls (an LLM router).
    pub args: Option<Value>,
}

/// The suite as JSONL, one case per line.
pub fn suite(cases: &[Case]) -> String {
    let mut out = String::new();
    for c in cases {
        let expect = if c.expect.is_empty() {
            json!("none")
        } else {
            json!(c.expect)
        };
        let mut case = json!({"id": c.id, "prompt": c.prompt, "expect": expect});
        if let Some(args) = &c.args {
            case["args"] = args.clone();
        }
        out.push_str(&case.to_string());
        out.push('\n');
    }
    out
}

/// `check --base BASE --head HEAD --suite SUITE` on converted inputs under `dir`.
pub fn check(ctx: &Ctx, dir: &str, base: &Value, head: &Value, cases: &[Case]) -> Result<Run> {
    let b = ctx.write(&format!("{dir}/base.json"), base)?;
    let h = ctx.write(&format!("{dir}/head.json"), head)?;
    let s = ctx.work.join(format!("{dir}/suite.jsonl"));
    std::fs::write(&s, suite(cases))?;
    ctx.driftgate(&[
        "check",
        "--base",
        b.to_str().unwrap(),
        "--head",
        h.to_str().unwrap(),
        "--suite",
        s.to_str().unwrap(),
    ])
}

/// (right at base, right at head, cases) from a check report's routing summary.
pub fn accuracy(run: &Run) -> Option<(usize, usize, usize)> {
    let s = &run.report.as_ref()?["routing"]["summary"];
    let n = s["n_cases"].as_u64()? as usize;
    let b = (s["base_accuracy"].as_f64()? * n as f64).round() as usize;
    let h = (s["head_accuracy"].as_f64()? * n as f64).round() as usize;
    Some((b, h, n))
}

/// The per-tool rows of a check report's routing section (empty without one).
pub fn per_tool(run: &Run) -> impl Iterator<Item = &Value> {
    run.report
        .as_ref()
        .and_then(|r| r["routing"]["per_tool"].as_array())
        .into_iter()
        .flatten()
}

/// The header of [`misroutes`]' rows.
pub const MISROUTES: &str =
    "| case | prompt | expected | chosen | judgement |\n|---|---|---|---|---|\n";

/// Every prompt one side of a run misrouted, each with the judgement of its own id or of its
/// (expected, chosen) class in judgements.toml (`ours = "*"`: any chosen tool): markdown rows
/// under [`MISROUTES`], and how many have none. `side` is `base` or `head`.
pub fn misroutes(
    run: &Run,
    side: &str,
    source: &str,
    cases: &[Case],
    judged: &[super::Judgement],
) -> (String, Rate) {
    use super::{cell, clip};
    let confusions = run
        .report
        .as_ref()
        .and_then(|r| r["routing"][format!("{side}_confusions")].as_array())
        .cloned()
        .unwrap_or_default();
    let mut md = String::new();
    let (mut misrouted, mut unjudged) = (0, 0);
    for c in &confusions {
        let (expected, chosen) = (
            c["expected"].as_str().unwrap_or(""),
            c["chosen"].as_str().unwrap_or(""),
        );
        for id in c["cases"].as_array().into_iter().flatten() {
            let id = id.as_str().unwrap_or("");
            let prompt = cases.iter().find(|k| k.id == id).map_or("", |k| &k.prompt);
            // Classes match names exactly (`read_file` is not `read_multiple_files`' class).
            let j = super::judged_by(judged, source, id, |j| {
                j.theirs.as_deref() == Some(expected)
                    && (j.ours.as_deref() == Some(chosen) || j.ours.as_deref() == Some("*"))
            });
            misrouted += 1;
            let judgement = match j {
                Some(j) => format!("**{}**: {}", j.call, cell(&j.why)),
                None => {
                    unjudged += 1;
                    "**unjudged**".into()
                }
            };
            md.push_str(&format!(
                "| `{}` | {} | `{}` | `{}` | {} |\n",
                cell(id),
                clip(prompt, 90),
                cell(expected),
                cell(chosen),
                judgement
            ));
        }
    }
    (md, Rate::new(unjudged, misrouted))
}
