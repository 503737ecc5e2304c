//! Call accuracy, paired base vs head like routing: a case is right when the right tool was
//! called with arguments its schema accepts and the case's `args` expect. Routing flips are
//! `compare`'s; here are the cases whose call flipped while routing did not (the arguments moved),
//! with what moved, and the parameter names the model invented per tool.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::compare::{Flip, Paired, flip, label_counts, tool_rows};
use super::judge::CallOutcome;
use super::runner::{Sample, SideRun};
use crate::stats::{self, CaseOutcome};
use crate::suite::Suite;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Calls {
    /// Its flips are the cases whose call flipped while their routing did not: the arguments
    /// moved.
    #[serde(flatten)]
    pub paired: Paired,
    /// Cases with expected `args` (the others check the schema only).
    pub cases_with_args: usize,
    /// Parameter names the model invented for a tool, counted per side.
    pub invented: Vec<Invented>,
}

/// One argument that differs between the typical base and head call of a flipped case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArgChange {
    pub param: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<Value>,
}

/// A parameter name a tool does not declare that calls to it used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Invented {
    pub tool: String,
    pub name: String,
    /// The nearest declared name, when close enough.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub did_you_mean: Option<String>,
    pub base: u64,
    pub head: u64,
}

/// Pair the call outcomes of both sides; `Err` says why they were not measured.
/// `routing_flips` are the routing metric's flips (those cases are not listed again).
pub fn compare(
    suite: &Suite,
    base: &SideRun,
    head: &SideRun,
    routing_flips: &[Flip],
    seed: u64,
    resamples: u32,
    excused: &std::collections::BTreeSet<String>,
) -> Result<Calls, String> {
    let samples = || {
        base.cases
            .iter()
            .chain(&head.cases)
            .flat_map(|c| &c.samples)
    };
    if samples().any(|s| s.call == CallOutcome::NotMeasured) {
        return Err("the router fills no arguments".into());
    }
    let mut outcomes = Vec::new();
    let mut flips = Vec::new();
    for ((case, b), h) in suite.cases.iter().zip(&base.cases).zip(&head.cases) {
        let repeats = b.samples.len().max(1) as u32;
        let head_correct = if excused.contains(&case.id) {
            b.calls_correct()
        } else {
            h.calls_correct()
        };
        let o = CaseOutcome::new(case.id.clone(), b.calls_correct(), head_correct, repeats);
        let routing_flipped = routing_flips.iter().any(|f| f.id == case.id);
        if o.base_right() != o.head_right() && !routing_flipped {
            let (bs, hs) = (b.typical_call(), h.typical_call());
            flips.push(Flip {
                arguments: changes(bs.arguments.as_ref(), hs.arguments.as_ref()),
                base_call: Some(bs.call.clone()),
                head_call: Some(hs.call.clone()),
                ..flip(case, &o, said(bs), said(hs))
            });
        }
        outcomes.push(o);
    }
    flips.sort_by(|a, b| a.direction.cmp(&b.direction).then_with(|| a.id.cmp(&b.id)));
    Ok(Calls {
        paired: Paired {
            summary: stats::paired_summary_with(&outcomes, seed, resamples),
            per_tool: tool_rows(suite, &outcomes, seed),
            flips,
            base_outcomes: label_counts(base, |s| s.call.label()),
            head_outcomes: label_counts(head, |s| s.call.label()),
            not_reproduced: Vec::new(),
        },
        cases_with_args: suite.cases.iter().filter(|c| c.args.is_some()).count(),
        invented: invented(base, head),
    })
}

/// "read_file: wrong arguments (`path`: expected "a.txt", got "/a.txt")".
fn said(s: &Sample) -> String {
    let called = s.outcome.choice();
    match s.call.detail() {
        Some(d) => format!("{called}: {} ({d})", s.call.label()),
        None => format!("{called}: {}", s.call.label()),
    }
}

/// The top-level arguments that differ between two calls, in name order.
fn changes(base: Option<&Value>, head: Option<&Value>) -> Vec<ArgChange> {
    let empty = serde_json::Map::new();
    let obj = |v: Option<&Value>| v.and_then(Value::as_object).unwrap_or(&empty).clone();
    let (b, h) = (obj(base), obj(head));
    let mut names: Vec<&String> = b.keys().chain(h.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|k| b.get(*k) != h.get(*k))
        .map(|k| ArgChange {
            param: k.clone(),
            base: b.get(k).cloned(),
            head: h.get(k).cloned(),
        })
        .collect()
}

/// Invented parameter names per (tool, name), counted over every sample of each side; most
/// frequent first.
fn invented(base: &SideRun, head: &SideRun) -> Vec<Invented> {
    let mut rows: BTreeMap<(String, String), Invented> = BTreeMap::new();
    for (is_base, run) in [(true, base), (false, head)] {
        for s in run.cases.iter().flat_map(|c| &c.samples) {
            let tool = s.outcome.called();
            let Some(tool) = tool else { continue };
            for (name, near) in &s.invented {
                let row = rows
                    .entry((tool.to_string(), name.clone()))
                    .or_insert_with(|| Invented {
                        tool: tool.to_string(),
                        name: name.clone(),
                        did_you_mean: near.clone(),
                        base: 0,
                        head: 0,
                    });
                if is_base {
                    row.base += 1;
                } else {
                    row.head += 1;
                }
            }
        }
    }
    let mut out: Vec<Invented> = rows.into_values().collect();
    out.sort_by(|a, b| {
        (b.base + b.head)
            .cmp(&(a.base + a.head))
            .then(a.tool.cmp(&b.tool))
            .then(a.name.cmp(&b.name))
    });
    out
}
