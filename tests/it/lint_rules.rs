//! Every lint rule of the registry (`driftgate::lint::RULES`), exercised on a tool set registered
//! as data: `tests/fixtures/lint/<rule-id>/tools.json`. Each fixture must raise its rule at the
//! rule's level; everything each fixture raises (rule, level, tools) is pinned in one insta
//! snapshot. Offline and deterministic: no embedder (`--no-embed`), default threshold. A rule
//! without a fixture directory, or a directory naming no rule, fails
//! `every_lint_rule_has_a_fixture_and_every_fixture_a_rule`.

use std::collections::BTreeSet;
use std::fmt::Write;

use driftgate::lint::{self, Lint, LintOptions, RULES};
use driftgate::tools::ToolSet;
use serde_json::Value;

use crate::support::repo;

/// (fixture directory = rule id, tools), in directory-name order.
fn cases() -> Vec<(String, ToolSet)> {
    let root = repo("tests/fixtures/lint");
    let mut dirs: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|id| {
            let path = root.join(&id).join("tools.json");
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let v: Value = serde_json::from_str(&text).unwrap();
            let tools = ToolSet::from_array(v.as_array().unwrap(), &id, "").unwrap();
            (id, tools)
        })
        .collect()
}

fn lint_of(tools: &ToolSet) -> Lint {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(lint::analyse(tools, None, &LintOptions::default()))
        .unwrap()
}

#[test]
fn every_lint_rule_has_a_fixture_and_every_fixture_a_rule() {
    let covered: BTreeSet<String> = cases().into_iter().map(|c| c.0).collect();
    for r in RULES {
        assert!(
            covered.contains(r.id.as_str()),
            "lint rule {:?} has no tests/fixtures/lint/{}/tools.json",
            r.id,
            r.id
        );
    }
    for id in &covered {
        assert!(
            RULES.iter().any(|r| r.id == id),
            "tests/fixtures/lint/{id} names no lint rule"
        );
    }
    assert_eq!(covered.len(), RULES.len());
    let ids = lint::RuleId::ALL;
    assert_eq!(ids.len(), RULES.len(), "one row per rule id");
    assert!(ids.iter().all(|id| id.rule().id == *id));
}

#[test]
fn each_fixture_raises_its_rule_at_its_level() {
    for (id, tools) in cases() {
        let l = lint_of(&tools);
        let hit = l
            .findings
            .iter()
            .find(|f| f.rule == id)
            .unwrap_or_else(|| panic!("{id}: not raised; got {:?}", l.findings));
        assert_eq!(hit.level, lint::rule(&id).level, "{id}");
    }
}

/// What each fixture raises, one block per fixture: `rule  level  tools`.
#[test]
fn what_each_lint_fixture_finds_is_pinned() {
    let mut out = String::new();
    for (id, tools) in cases() {
        writeln!(out, "{id}").unwrap();
        for f in lint_of(&tools).findings {
            writeln!(
                out,
                "  {}  {}  {}",
                f.rule,
                f.level.as_str(),
                f.tools.join(" / ")
            )
            .unwrap();
        }
    }
    insta::assert_snapshot!("lint_fixtures", out);
}
