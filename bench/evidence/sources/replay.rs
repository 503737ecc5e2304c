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

/// Every prompt one side of a run misrouted: (case id, expected, chosen). `side` is `base` or
/// `head`.
pub fn misrouted(run: &Run, side: &str) -> Vec<(String, String, String)> {
    let confusions = run
        .report
        .as_ref()
        .and_then(|r| r["routing"][format!("{side}_confusions")].as_array())
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for c in &confusions {
        let (expected, chosen) = (
            c["expected"].as_str().unwrap_or(""),
            c["chosen"].as_str().unwrap_or(""),
        );
        for id in c["cases"].as_array().into_iter().flatten() {
            out.push((
                id.as_str().unwrap_or("").to_string(),
                expected.to_string(),
                chosen.to_string(),
            ));
        }
    }
    out
}

/// The judgement of one misroute: its case's own entry, else its (expected, chosen) class in
/// judgements.toml (`ours = "*"`: any chosen tool). Classes match names exactly (`read_file` is
/// not `read_multiple_files`' class).
fn judgement_of<'j>(
    judged: &'j [super::Judgement],
    source: &str,
    (id, expected, chosen): (&str, &str, &str),
) -> Option<&'j super::Judgement> {
    super::judged_by(judged, source, id, |j| {
        j.theirs.as_deref() == Some(expected)
            && (j.ours.as_deref() == Some(chosen) || j.ours.as_deref() == Some("*"))
    })
}

/// Every prompt one side of a run misrouted, each with its judgement ([`judgement_of`]):
/// markdown rows under [`MISROUTES`], and how many have none. `side` is `base` or `head`.
pub fn misroutes(
    run: &Run,
    side: &str,
    source: &str,
    cases: &[Case],
    judged: &[super::Judgement],
) -> (String, Rate) {
    let rows: Vec<_> = misrouted(run, side)
        .into_iter()
        .map(|m| (m, String::new(), true))
        .collect();
    table(&rows, source, cases, judged, false)
}

/// The header of [`misroutes_across`]' rows.
pub const MISROUTES_ACROSS: &str = "| case | prompt | expected | chosen | at releases | judgement |\n\
     |---|---|---|---|---|---|\n";

/// One tool set a misroute table reads: its label, the run and side that replayed the prompts on
/// it, and the tools it offered.
pub struct Side<'a> {
    pub label: &'a str,
    pub run: &'a Run,
    pub side: &'a str,
    pub tools: &'a Value,
}

/// Every prompt misrouted at any of several tool sets (in order), one row per (case, expected,
/// chosen) with the labels where it happened ("all N" when at every one). Where a set offers none
/// of the case's expected tools the prompt cannot be routed right there: those are one row per
/// (case, chosen) marked **unoffered**, not judged.
pub fn misroutes_across(
    sides: &[Side],
    source: &str,
    cases: &[Case],
    judged: &[super::Judgement],
) -> (String, Rate) {
    type Key = ((String, String, String), bool);
    let mut at: Vec<(Key, Vec<&str>)> = Vec::new();
    for s in sides {
        let offered: Vec<&str> = s
            .tools
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        for m in misrouted(s.run, s.side) {
            let answerable = cases
                .iter()
                .find(|c| c.id == m.0)
                .is_none_or(|c| c.expect.iter().any(|e| offered.contains(&e.as_str())));
            let key = (m, answerable);
            match at.iter_mut().find(|(k, _)| *k == key) {
                Some((_, labels)) => labels.push(s.label),
                None => at.push((key, vec![s.label])),
            }
        }
    }
    // Answerable rows first, then the unoffered ones.
    at.sort_by_key(|((_, ok), _)| !ok);
    let rows: Vec<_> = at
        .into_iter()
        .map(|((m, ok), labels)| {
            let where_ = if labels.len() == sides.len() {
                format!("all {}", sides.len())
            } else {
                labels.join(", ")
            };
            (m, where_, ok)
        })
        .collect();
    table(&rows, source, cases, judged, true)
}

/// Markdown rows `(misroute, where it happened, answerable)`: an unanswerable one (no expected
/// tool offered) is marked **unoffered** and not judged; how many answerable ones have no
/// judgement.
fn table(
    rows: &[((String, String, String), String, bool)],
    source: &str,
    cases: &[Case],
    judged: &[super::Judgement],
    with_where: bool,
) -> (String, Rate) {
    use super::{cell, clip};
    let mut md = String::new();
    let (mut unjudged, mut answerable) = (0, 0);
    for ((id, expected, chosen), where_, ok) in rows {
        let prompt = cases.iter().find(|k| &k.id == id).map_or("", |k| &k.prompt);
        let judgement = match judgement_of(judged, source, (id, expected, chosen)) {
            _ if !ok => "**unoffered**: no expected tool at these releases".into(),
            Some(j) => format!("**{}**: {}", j.call, cell(&j.why)),
            None => {
                unjudged += 1;
                "**unjudged**".into()
            }
        };
        answerable += usize::from(*ok);
        let where_ = if with_where {
            format!(" {} |", cell(where_))
        } else {
            String::new()
        };
        md.push_str(&format!(
            "| `{}` | {} | `{}` | `{}` |{where_} {judgement} |\n",
            cell(id),
            clip(prompt, 90),
            cell(expected),
            cell(chosen),
        ));
    }
    (md, Rate::new(unjudged, answerable))
}
