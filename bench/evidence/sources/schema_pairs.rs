//! The severity law against two independent schema checkers: Confluent schema-registry's labelled
//! JSON Schema pairs (`compatible`: the new schema reads data written for the old, an
//! `inputSchema`'s direction) and getsentry/json-schema-diff's fixtures with its change lists
//! (a change is breaking when a value valid under lhs is invalid under rhs; its `is_breaking`
//! table at 435580b is restated in [`sentry_breaking`]).
//!
//! Each pair becomes one tool whose `inputSchema` is the old then the new schema; `driftgate diff
//! --no-embed` rates it; ours says "incompatible" when any change is `breaking`.

use std::path::Path;

use anyhow::{Context as _, Result};
use regex::Regex;
use serde_json::{Value, json};

use super::{Ctx, Rate, Section, cell, clip, read_json, read_lenient_json};

/// One labelled pair.
pub struct Pair {
    pub source: &'static str,
    pub id: String,
    pub description: String,
    pub old: Value,
    pub new: Value,
    /// The checker's verdict: true = compatible (no breaking change).
    pub compatible: bool,
    /// The checker's own change list, as it names them.
    pub changes: Vec<String>,
}

/// What driftgate said about one pair.
pub struct Rated {
    pub pair: Pair,
    /// None: driftgate refused the input (exit 2).
    pub incompatible: Option<bool>,
    pub rules: Vec<String>,
    pub error: String,
}

pub fn confluent(external: &Path) -> Result<Vec<Pair>> {
    let dir = external.join("schema-pairs/confluent");
    let mut pairs = Vec::new();
    for file in [
        "diff-schema-examples.json",
        "diff-schema-examples-2020-12.json",
        "diff-combined-schema-examples.json",
        "diff-combined-schema-examples-2020-12.json",
    ] {
        let path = dir.join(file);
        let all = read_lenient_json(&path)?;
        let stem = file.trim_start_matches("diff-").trim_end_matches(".json");
        for (i, p) in all
            .as_array()
            .with_context(|| format!("{}: expected a list of pairs", path.display()))?
            .iter()
            .enumerate()
        {
            pairs.push(Pair {
                source: "confluent",
                id: format!("{stem}#{i}"),
                description: p["description"].as_str().unwrap_or("").to_string(),
                old: p["original_schema"].clone(),
                new: p["update_schema"].clone(),
                compatible: p["compatible"].as_bool().context("`compatible`")?,
                changes: p["changes"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .map(|c| c.as_str().unwrap_or("").to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
            });
        }
    }
    Ok(pairs)
}

pub fn sentry(external: &Path) -> Result<Vec<Pair>> {
    let root = external.join("schema-pairs/sentry/tests");
    let mut snaps: Vec<_> = std::fs::read_dir(root.join("snapshots"))?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "snap"))
        .collect();
    snaps.sort();
    let name = Regex::new(r"test__from_fixtures@(.+)__(.+)\.json\.snap$").unwrap();
    let mut pairs = Vec::new();
    for snap in snaps {
        let file = snap.file_name().unwrap().to_string_lossy().into_owned();
        let Some(m) = name.captures(&file) else {
            continue;
        };
        let fixture = root.join(format!("fixtures/{}/{}.json", &m[1], &m[2]));
        let f = read_json(&fixture)?;
        let text = std::fs::read_to_string(&snap)?;
        let changes = sentry_changes(&text);
        pairs.push(Pair {
            source: "sentry",
            id: format!("{}/{}", &m[1], &m[2]),
            description: String::new(),
            old: f["lhs"].clone(),
            new: f["rhs"].clone(),
            compatible: !changes.iter().any(|(_, breaking)| *breaking),
            changes: changes.into_iter().map(|(c, _)| c).collect(),
        });
    }
    Ok(pairs)
}

/// The change list of one insta snapshot (Rust `Debug` of `Vec<Change>`): each change's kind in
/// its own words, with json-schema-diff's `is_breaking` for it.
fn sentry_changes(snap: &str) -> Vec<(String, bool)> {
    let body = snap.splitn(3, "---").nth(2).unwrap_or("");
    let mut out = Vec::new();
    let (kind_re, path_re) = (
        Regex::new(r"change: (\w+)").unwrap(),
        Regex::new(r#"path: "([^"]*)""#).unwrap(),
    );
    for block in body.split("    Change {").skip(1) {
        let kind = kind_re
            .captures(block)
            .map(|c| c[1].to_string())
            .unwrap_or_default();
        let path = path_re
            .captures(block)
            .map(|c| c[1].to_string())
            .unwrap_or_default();
        let breaking = sentry_breaking(&kind, block);
        out.push((format!("{kind}@{path}"), breaking));
    }
    out
}

fn field_bool(block: &str, field: &str) -> bool {
    block.contains(&format!("{field}: true"))
}

/// `(variant, value)` of a `Range` field, e.g. `old_value: Minimum(\n 1.0,\n ),`.
fn range(block: &str, field: &str) -> Option<(String, f64)> {
    let re = Regex::new(&format!(r"{field}: (\w+)\(\s*([-0-9.e+]+),?\s*\)")).unwrap();
    let c = re.captures(block)?;
    Some((c[1].to_string(), c[2].parse().ok()?))
}

fn number(block: &str, field: &str) -> Option<f64> {
    let re = Regex::new(&format!(r"{field}: ([-0-9.e+]+)")).unwrap();
    re.captures(block)?[1].parse().ok()
}

/// json-schema-diff's `ChangeKind::is_breaking` at 435580b, restated.
fn sentry_breaking(kind: &str, block: &str) -> bool {
    match kind {
        "TypeRemove" | "ConstAdd" | "RangeAdd" | "ArrayToTuple" | "TupleChange" | "RequiredAdd"
        | "FormatAdd" | "FormatChange" | "PatternAdd" | "PatternChange" | "MinLengthAdd"
        | "MaxLengthAdd" => true,
        "PropertyAdd" => field_bool(block, "lhs_additional_properties"),
        "PropertyRemove" => !field_bool(block, "lhs_additional_properties"),
        "EnumAdd" => field_bool(block, "lhs_has_no_enum"),
        "EnumRemove" => !field_bool(block, "rhs_has_no_enum"),
        "MinLengthChange" => number(block, "new_value") > number(block, "old_value"),
        "MaxLengthChange" => number(block, "new_value") < number(block, "old_value"),
        "RangeChange" => match (range(block, "old_value"), range(block, "new_value")) {
            (Some((o, l)), Some((n, r))) => {
                let loosened = match (o.as_str(), n.as_str()) {
                    ("ExclusiveMinimum", "Minimum") => l >= r,
                    ("ExclusiveMaximum", "Maximum") => l <= r,
                    (a, b) if a == b && a.ends_with("inimum") => l >= r,
                    (a, b) if a == b && a.ends_with("aximum") => l <= r,
                    _ => false,
                };
                !loosened
            }
            _ => true,
        },
        _ => false,
    }
}

fn tool(schema: &Value) -> Value {
    json!([{ "name": "t", "description": "d", "inputSchema": schema }])
}

pub fn rate(ctx: &Ctx, pairs: Vec<Pair>) -> Result<Vec<Rated>> {
    use rayon::prelude::*;
    pairs
        .into_par_iter()
        .enumerate()
        .map(|(i, pair)| {
            let dir = format!("schema-pairs/{}/{i}", pair.source);
            let old = ctx.write(&format!("{dir}/old.json"), &tool(&pair.old))?;
            let new = ctx.write(&format!("{dir}/new.json"), &tool(&pair.new))?;
            let run = ctx.driftgate(&[
                "diff",
                old.to_str().unwrap(),
                new.to_str().unwrap(),
                "--no-embed",
            ])?;
            let Some(report) = run.report.as_ref().filter(|_| run.exit != 2) else {
                return Ok(Rated {
                    pair,
                    incompatible: None,
                    rules: vec![],
                    error: run.stderr.lines().last().unwrap_or("").to_string(),
                });
            };
            let changes = report["diff"]["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|t| t["changes"].as_array().into_iter().flatten());
            let mut rules = Vec::new();
            let mut incompatible = false;
            for c in changes {
                let sev = c["severity"].as_str().unwrap_or("");
                incompatible |= sev == "breaking";
                rules.push(format!(
                    "{}:{} {}",
                    sev,
                    c["rule"].as_str().unwrap_or(""),
                    c["pointer"].as_str().unwrap_or("")
                ));
            }
            Ok(Rated {
                pair,
                incompatible: Some(incompatible),
                rules,
                error: String::new(),
            })
        })
        .collect()
}

pub fn sections(ctx: &Ctx) -> Result<Vec<Section>> {
    let judged = super::judgements();
    let mut out = vec![String::from(
        "## The severity law against two independent schema checkers\n\n\
         Each pair is one tool whose `inputSchema` changes from the old to the new schema; \
         `driftgate diff --no-embed` rates it and we call it incompatible when any change is \
         `breaking`. Nothing in the law was tuned on these pairs before this table was first \
         produced. **These pairs are no longer unseen**: the law's gaps they showed (`$ref`, \
         `allOf`/`anyOf`/`oneOf`, tuple arrays, `not`, dependencies, `minContains`) were closed \
         on 2026-12-07 against them, so the agreement below says those gaps are closed, not how \
         the law does on schemas it was not written against. That check is the real histories: \
         every verdict the change moved on the corpus's consecutive releases and on \
         github-mcp-server's commits is listed and judged in docs/law-changes.md.\n\n",
    )];
    let mut sections = Vec::new();
    for (id, title, pairs) in [
        (
            "schema-confluent",
            "Confluent schema-registry (263 labelled pairs)",
            confluent(&ctx.external)?,
        ),
        (
            "schema-sentry",
            "getsentry/json-schema-diff (its fixtures, labelled by its `is_breaking`)",
            sentry(&ctx.external)?,
        ),
    ] {
        let rated = rate(ctx, ctx.take(pairs))?;
        let mut s = section(id, title, &rated, |r| {
            super::judged(
                &judged,
                r.pair.source,
                &r.pair.id,
                &r.pair.changes.join(", "),
                &r.rules.join(", "),
            )
        });
        match subschema(ctx, &rated)? {
            Some(answers) => third_checker(&mut s, &rated, &answers),
            None => s.markdown.push_str(
                "IBM's jsonsubschema (the third checker) was not fetched in this run \
                 (`bench/evidence/run` fetches it).\n\n",
            ),
        }
        sections.push(s);
    }
    sections[0].markdown.insert_str(0, &out.remove(0));
    Ok(sections)
}

/// The section for one checker.
pub fn section(
    id: &'static str,
    title: &str,
    rated: &[Rated],
    judge: impl Fn(&Rated) -> Option<super::Judgement>,
) -> Section {
    let n = rated.len();
    let refused = rated.iter().filter(|r| r.incompatible.is_none()).count();
    let agree = rated
        .iter()
        .filter(|r| r.incompatible == Some(!r.pair.compatible))
        .count();
    let theirs_break = rated.iter().filter(|r| !r.pair.compatible).count();
    let both_break = rated
        .iter()
        .filter(|r| !r.pair.compatible && r.incompatible == Some(true))
        .count();
    let ours_break = rated
        .iter()
        .filter(|r| r.incompatible == Some(true))
        .count();
    let mut md = format!(
        "### {title}\n\n\
         | measure | value |\n|---|---|\n\
         | pairs | {n} |\n\
         | agreement (same compatible/incompatible call) | {} |\n\
         | their breaking pairs we call breaking (recall) | {} |\n\
         | our breaking calls they agree with (precision) | {} |\n\
         | refused as input (not a tool schema) | {refused} |\n\n",
        Rate::new(agree, n).cell(),
        Rate::new(both_break, theirs_break).cell(),
        Rate::new(both_break, ours_break).cell(),
    );
    let mut rows = Vec::new();
    let mut listed = String::new();
    let mut unjudged = 0;
    let mut calls: std::collections::BTreeMap<String, usize> = Default::default();
    for r in rated {
        let ours = match r.incompatible {
            None => "refused",
            Some(true) => "breaking",
            Some(false) => "compatible",
        };
        let theirs = if r.pair.compatible {
            "compatible"
        } else {
            "breaking"
        };
        let disagree = r.incompatible != Some(!r.pair.compatible);
        let j = if disagree { judge(r) } else { None };
        if disagree {
            match &j {
                None => unjudged += 1,
                Some(j) => *calls.entry(j.call.clone()).or_default() += 1,
            }
            listed.push_str(&format!(
                "| `{}` | {} | {} | {} | {} | {} | {} |\n",
                r.pair.id,
                clip(&r.pair.description, 60),
                theirs,
                cell(&r.pair.changes.join(", ")),
                ours,
                cell(&if r.rules.is_empty() {
                    r.error.clone()
                } else {
                    r.rules.join(", ")
                }),
                j.as_ref()
                    .map(|j| format!("**{}**: {}", j.call, j.why))
                    .unwrap_or_else(|| "**unjudged**".into()),
            ));
        }
        rows.push(json!({
            "source": r.pair.source, "id": r.pair.id, "description": r.pair.description,
            "theirs": theirs, "their_changes": r.pair.changes, "ours": ours, "our_rules": r.rules,
            "error": r.error, "agree": !disagree,
            "judgement": j.as_ref().map(|j| json!({"call": j.call, "why": j.why})),
        }));
    }
    if listed.is_empty() {
        md.push_str("No disagreements.\n\n");
    } else {
        let summary: Vec<String> = calls.iter().map(|(c, k)| format!("{c} {k}")).collect();
        md.push_str(&format!(
            "Every disagreement, judged ({}; {} unjudged). `ours` = a gap or error of the law, \
             `theirs` = their label is wrong for an `inputSchema`, `deliberate` = the law differs \
             on purpose:\n\n\
             | pair | description | theirs | their changes | ours | our rules | judgement |\n\
             |---|---|---|---|---|---|---|\n{listed}\n",
            summary.join(", "),
            unjudged
        ));
    }
    Section {
        id,
        markdown: md,
        rows,
        rates: vec![
            ("agreement", Rate::new(agree, n)),
            ("recall", Rate::new(both_break, theirs_break)),
            ("unjudged", Rate::new(unjudged, n)),
        ],
    }
}

/// IBM's jsonsubschema on every pair (`bench/evidence/anchors/subschema.py`): `Some(compatible)`
/// where it answered, `None` where it did not; `None` overall when it was not fetched.
fn subschema(ctx: &Ctx, rated: &[Rated]) -> Result<Option<Vec<Option<bool>>>> {
    let Some(python) = &ctx.subschema else {
        return Ok(None);
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/evidence/anchors/subschema.py");
    let inputs: Vec<Value> = rated
        .iter()
        .enumerate()
        .map(|(i, r)| json!({"id": i, "old": r.pair.old, "new": r.pair.new}))
        .collect();
    let name = format!("subschema-{}", rated.first().map_or("", |r| r.pair.source));
    let out = super::run_lines(ctx, &name, python, &[&script], &inputs)?;
    let answers = out.iter().map(|v| v["compatible"].as_bool()).collect();
    Ok(Some(answers))
}

/// The third checker's table inside a checker's section: where jsonsubschema answers, how often
/// it and driftgate agree with the labels and with each other.
fn third_checker(s: &mut Section, rated: &[Rated], answers: &[Option<bool>]) {
    let answered: Vec<(&Rated, bool)> = rated
        .iter()
        .zip(answers)
        .filter_map(|(r, a)| a.map(|a| (r, a)))
        .collect();
    let k = answered.len();
    let count =
        |f: &dyn Fn(&Rated, bool) -> bool| answered.iter().filter(|(r, a)| f(r, *a)).count();
    let its = count(&|r, a| a == r.pair.compatible);
    let ours = count(&|r, _| r.incompatible == Some(!r.pair.compatible));
    let both = count(&|r, a| r.incompatible == Some(!a));
    let only_ours =
        count(&|r, a| a != r.pair.compatible && r.incompatible == Some(!r.pair.compatible));
    let ids: Vec<String> = answered
        .iter()
        .filter(|(r, a)| *a == r.pair.compatible && r.incompatible != Some(!r.pair.compatible))
        .map(|(r, _)| format!("`{}`", r.pair.id))
        .collect();
    let only_it = ids.len();
    s.markdown.push_str(&format!(
        "**A third checker on the same pairs: IBM's jsonsubschema** (`jsonsubschema` 0.0.8 from \
         PyPI; compatible = every value the old schema accepts, the new one accepts too, the \
         direction of a tool's input). Where it answers:\n\n\
         | measure | value |\n|---|---|\n\
         | pairs it answers (the rest: keywords it does not support, errors, timeouts) | {} |\n\
         | its agreement with the labels | {} |\n\
         | driftgate's agreement with the labels, same pairs | {} |\n\
         | driftgate and jsonsubschema agree | {} |\n\
         | it matches the label where driftgate does not | {only_it} |\n\
         | driftgate matches the label where it does not | {only_ours} |\n\n",
        Rate::new(k, rated.len()).cell(),
        Rate::new(its, k).cell(),
        Rate::new(ours, k).cell(),
        Rate::new(both, k).cell(),
    ));
    if !ids.is_empty() {
        s.markdown.push_str(&format!(
            "Pairs it gets right and driftgate does not (each judged in the list above): {}.\n\n",
            ids.join(", ")
        ));
    }
    for (row, a) in s.rows.iter_mut().zip(answers) {
        row["subschema"] = match a {
            Some(true) => json!("compatible"),
            Some(false) => json!("breaking"),
            None => json!(null),
        };
    }
    s.rates
        .push(("subschema answered", Rate::new(k, rated.len())));
    s.rates.push(("subschema agreement", Rate::new(its, k)));
    s.rates
        .push(("ours on subschema's pairs", Rate::new(ours, k)));
}
