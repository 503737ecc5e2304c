//! Routing on real prompts: a source's labelled prompts become a suite in our format and are
//! replayed by `driftgate check` (semantic router, bundled embedder) on tool sets in MCP form.

use anyhow::Result;
use serde_json::{Value, json};

use super::{Ctx, Run};

/// One labelled prompt: the tools that count as right (`similar_tools` included).
pub struct Case {
    pub id: String,
    pub prompt: String,
    pub expect: Vec<String>,
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
        out.push_str(&json!({"id": c.id, "prompt": c.prompt, "expect": expect}).to_string());
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
