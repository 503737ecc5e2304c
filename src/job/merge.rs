//! `driftgate merge`: the partial reports of `check --shard i/n` as one report. The parts' runs
//! are put back in suite order and paired again, so every statistic (McNemar p, bootstrap
//! interval, Holm across tools) is computed over all cases, exactly as one run would have; parts
//! of different suites, routers, tool sets or settings are refused.

use std::collections::BTreeMap;

use serde::Serialize;

use super::check::{carried_note, finish_routing, priced, repeats_note};
use crate::canon::MacKey;
use crate::error::{Error, Result};
use crate::gate::{self, CheckThresholds};
use crate::replay::shard::{self, ShardPart};
use crate::replay::target::Carried;
use crate::replay::{self, Routing};
use crate::report::{Command, Report};

/// One part as read: where it came from and the report.
pub struct Part {
    pub source: String,
    pub report: Report,
}

/// Merge `parts` (any order) into the report of the whole suite. Each part must carry a tag
/// under `key` over all of it (the check that wrote it held the same key), and the verdict is
/// judged with `thresholds` (the merge's own policy), never the parts': a part is a file the
/// pull request's jobs wrote, not a policy.
pub fn merge(parts: Vec<Part>, key: &MacKey, thresholds: &CheckThresholds) -> Result<Report> {
    let Some(first) = parts.first() else {
        return Err(Error::Usage("merge needs the parts' JSON reports".into()));
    };
    let shards = authentic_shards(&parts, key)?;
    same_measurement(&parts)?;
    coverage(&shards)?;
    let (f, fp) = (&first.report, shards[0].1);
    let part_shards: Vec<&ShardPart> = shards.iter().map(|(_, s, _)| *s).collect();
    let (cases, base_run, head_run) = shard::join(&part_shards).map_err(Error::Usage)?;
    if cases.len() != fp.suite_cases {
        return Err(Error::Usage(format!(
            "the parts hold {} case(s) but the suite has {}",
            cases.len(),
            fp.suite_cases
        )));
    }
    let info = f.suite.as_ref().expect("a check report has its suite");
    let (suite, head_suite) =
        ShardPart::suites(&cases, &info.identity.sha256, &info.identity.source);
    let part_routings: Vec<&Routing> = shards.iter().map(|(_, _, r)| *r).collect();
    // A flip a part's re-asks did not reproduce stays excused in the whole.
    let excused = part_routings
        .iter()
        .flat_map(|r| {
            r.paired
                .not_reproduced
                .iter()
                .chain(r.calls.iter().flat_map(|c| &c.paired.not_reproduced))
        })
        .map(|f| f.id.clone())
        .collect();
    let mut routing = replay::compare_sides(
        &suite,
        &head_suite,
        &base_run,
        &head_run,
        fp.seed,
        crate::stats::DEFAULT_RESAMPLES,
        &excused,
    );
    shard::carry_confirmations(&mut routing, &part_routings);
    routing.carried = part_routings
        .iter()
        .filter_map(|r| r.carried.clone())
        .reduce(|a, b| Carried {
            asked: a.asked.saturating_add(b.asked),
            carried: a.carried.saturating_add(b.carried),
            top_k: a.top_k,
            requests_saved: a.requests_saved.saturating_add(b.requests_saved),
        });
    let not_measured = part_routings[0].calls_not_measured.clone();
    // Every part computed chance on the whole suite.
    routing.chance_accuracy = part_routings[0].chance_accuracy;
    routing.proxy = part_routings[0].proxy;
    finish_routing(&mut routing, not_measured, thresholds);

    let router = f.router.clone().expect("a check report has its router");
    let mut notes = fp.notes.clone();
    notes.extend(repeats_note(
        &base_run,
        &head_run,
        router.repeats,
        router.temperature,
    ));
    notes.extend(routing.carried.as_ref().map(carried_note));
    notes.push(format!(
        "merged from {} shard parts ({} cases; each part's requests and wall time summed)",
        shards.len(),
        cases.len()
    ));
    if &f.thresholds != thresholds {
        notes.push(
            "the parts were written with other thresholds than the merge's; the verdict uses the merge's own (its flags and the base revision's config)".into(),
        );
    }
    notes.extend(gate::review_notes(
        f.drift.as_ref(),
        Some(&routing),
        thresholds,
    ));
    let verdict = gate::with_lint_model(
        gate::check_verdict(
            &f.diff,
            f.drift.as_ref(),
            Some(&routing),
            f.scan.as_ref(),
            thresholds,
        ),
        f.lint.as_ref(),
    );
    Ok(Report {
        verdict,
        thresholds: thresholds.clone(),
        router: Some(priced(router, &routing)),
        routing: Some(routing),
        notes,
        github: None,
        shard: None,
        ..f.clone()
    })
}

/// Each part's shard and routing, once its tag verifies under `key` and it is a shard of a check.
fn authentic_shards<'a>(
    parts: &'a [Part],
    key: &MacKey,
) -> Result<Vec<(&'a str, &'a ShardPart, &'a Routing)>> {
    let mut shards: Vec<(&str, &ShardPart, &Routing)> = Vec::new();
    for p in parts {
        if p.report.shard.is_some() && !p.report.part_is_authentic(key) {
            return Err(Error::Usage(format!(
                "{}: refusing a part whose tag does not verify: it was edited after `check --shard` wrote it, or written under another key (every shard job and the merge job need the same {} secret)",
                p.source, "DRIFTGATE_KEY"
            )));
        }
        let not_part = |why: &str| {
            Error::Usage(format!(
                "{}: {why}; write the parts with `driftgate check --shard I/N --format json`",
                p.source
            ))
        };
        let (Some(s), Some(r)) = (&p.report.shard, &p.report.routing) else {
            return Err(not_part(
                "not a shard's partial report (it has no `shard` section)",
            ));
        };
        if p.report.command != Command::Check {
            return Err(not_part("not a check report"));
        }
        shards.push((&p.source, s, r));
    }
    Ok(shards)
}

/// Every part measured the same thing: the same suite, router, settings, tool sets and static
/// results (diff, drift, lint, scan are computed whole by every part).
fn same_measurement(parts: &[Part]) -> Result<()> {
    fn v<T: Serialize>(x: &T) -> serde_json::Value {
        serde_json::to_value(x).expect("report values serialise")
    }
    let key = |r: &Report| -> Vec<(&'static str, serde_json::Value)> {
        let s = r.shard.as_ref().expect("checked");
        let mut router = r.router.clone();
        if let Some(x) = router.as_mut() {
            x.estimated_cost_usd = None;
        }
        vec![
            ("driftgate version", v(&r.driftgate_version)),
            ("suite", v(&r.suite)),
            ("suite size", v(&s.suite_cases)),
            ("router", v(&router)),
            ("base tools", v(&s.tools_sha256[0])),
            ("head tools", v(&s.tools_sha256[1])),
            ("distractor tools", v(&s.tools_sha256[2])),
            ("shard count", v(&s.shard.count)),
            ("--confirm", v(&s.confirm)),
            ("replay seed", v(&s.seed)),
            (
                "--replay",
                v(&r.routing
                    .as_ref()
                    .map(|x| x.carried.as_ref().map(|c| c.top_k))),
            ),
            ("diff", v(&r.diff)),
            ("meaning drift", v(&r.drift)),
            ("lint", v(&r.lint)),
            ("scan", v(&r.scan)),
            ("notes", v(&s.notes)),
        ]
    };
    let want = key(&parts[0].report);
    for p in &parts[1..] {
        for ((what, a), (_, b)) in want.iter().zip(key(&p.report)) {
            if *a != b {
                return Err(Error::Usage(format!(
                    "refusing to merge: {} and {} differ in their {what} ({} vs {}); every part must come from the same check with only --shard changed",
                    parts[0].source,
                    p.source,
                    short(a),
                    short(&b)
                )));
            }
        }
    }
    Ok(())
}

fn short(v: &serde_json::Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// Shards 1..=N each exactly once.
fn coverage(shards: &[(&str, &ShardPart, &Routing)]) -> Result<()> {
    let n = shards[0].1.shard.count;
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    for (source, s, _) in shards {
        if let Some(other) = seen.insert(s.shard.index, source) {
            return Err(Error::Usage(format!(
                "shard {} is given twice ({other} and {source})",
                s.shard
            )));
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Usage(format!(
            "missing shard(s) {} of {n}: a merge needs every part",
            missing.join(", ")
        )));
    }
    Ok(())
}
