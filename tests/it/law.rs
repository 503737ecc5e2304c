//! Every row of the severity law, exercised on an old/new pair registered as data:
//! `tests/fixtures/law/<rule-id>/{old,new}.json` (tool arrays). Each pair must produce exactly
//! its rule (and the rule's severity); what every pair produces (rule, severity, tool, pointer)
//! is pinned in one insta snapshot. A row without a fixture directory, or a directory naming no
//! row, fails `every_rule_has_a_fixture_and_every_fixture_a_rule`: to add a rule to
//! `driftgate::diff::LAW`, add its directory and review the snapshot.

use std::collections::BTreeSet;
use std::fmt::Write;

use driftgate::diff::{self, LAW, Severity, rule};
use driftgate::tools::ToolSet;
use serde_json::{Value, json};

use crate::support::repo;

fn set(v: Value) -> ToolSet {
    ToolSet::from_array(v.as_array().unwrap(), "case", "").unwrap()
}

fn read(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// (fixture directory = rule id, base tools, head tools), in directory-name order.
fn cases() -> Vec<(String, Value, Value)> {
    let root = repo("tests/fixtures/law");
    let mut dirs: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|id| {
            let old = read(&root.join(&id).join("old.json"));
            let new = read(&root.join(&id).join("new.json"));
            (id, old, new)
        })
        .collect()
}

#[test]
fn every_rule_has_a_fixture_and_every_fixture_a_rule() {
    let covered: BTreeSet<String> = cases().into_iter().map(|c| c.0).collect();
    for r in LAW {
        assert!(
            covered.contains(r.id.as_str()),
            "law row {:?} has no tests/fixtures/law/{}/{{old,new}}.json",
            r.id,
            r.id
        );
    }
    for id in &covered {
        assert!(
            LAW.iter().any(|r| r.id == id),
            "tests/fixtures/law/{id} names no rule of the law"
        );
    }
    assert_eq!(covered.len(), LAW.len(), "one case per row");
    // One row per id, and every id has its row.
    let ids = diff::law::RuleId::ALL;
    assert_eq!(ids.len(), LAW.len(), "one row per rule id");
    assert!(ids.iter().all(|id| id.rule().id == *id));
}

#[test]
fn each_case_yields_exactly_its_rule() {
    for (id, old, new) in cases() {
        let id = id.as_str();
        let d = diff::diff(&set(old), &set(new));
        let rules: Vec<&str> = d.changes().map(|(_, c)| c.rule.as_str()).collect();
        assert_eq!(rules, vec![id], "case {id}");
        let (_, c) = d.changes().next().unwrap();
        assert_eq!(c.severity, rule(id).severity, "case {id}");
    }
}

/// What each fixture produces, one block per fixture: `tool  rule  severity  pointer`.
#[test]
fn what_each_fixture_finds_is_pinned() {
    let mut out = String::new();
    for (id, old, new) in cases() {
        let d = diff::diff(&set(old), &set(new));
        writeln!(out, "{id}").unwrap();
        for (t, c) in d.changes() {
            let pointer = if c.pointer.is_empty() {
                "(whole tool)"
            } else {
                &c.pointer
            };
            writeln!(
                out,
                "  {}  {}  {}  {pointer}",
                t.name,
                c.rule,
                c.severity.as_str()
            )
            .unwrap();
        }
    }
    insta::assert_snapshot!("law_fixtures", out);
}

/// The law's headline promises, stated independently of the table.
#[test]
fn law_principles() {
    use Severity::*;
    for id in [
        "property-added-required",
        "property-removed",
        "type-narrowed",
        "enum-narrowed",
        "bound-tightened",
        "additional-properties-closed",
        "tool-removed",
        "tool-renamed",
    ] {
        assert_eq!(
            rule(id).severity,
            Breaking,
            "{id} narrows what a caller may send"
        );
    }
    for id in [
        "property-added-optional",
        "enum-widened",
        "type-widened",
        "bound-loosened",
        "annotations-declared",
    ] {
        assert_eq!(rule(id).severity, Info, "{id} widens or only informs");
    }
    assert_eq!(rule("annotation-safety-flipped").severity, High);
    assert_eq!(rule("description-changed").severity, Unknown);
    assert_eq!(rule("schema-changed").severity, Warning);
    assert!(Info < Unknown && Unknown < Warning && Warning < High && High < Breaking);
}

#[test]
fn nested_changes_are_found_with_pointers() {
    let old = json!([{"name":"t","inputSchema":{"type":"object","properties":{"o":{"type":"object",
        "properties":{"a":{"type":"array","items":{"type":"string","enum":["x","y"]}}}}}}}]);
    let new = json!([{"name":"t","inputSchema":{"type":"object","properties":{"o":{"type":"object",
        "properties":{"a":{"type":"array","items":{"type":"string","enum":["x"]}}}}}}}]);
    let d = diff::diff(&set(old), &set(new));
    let (_, c) = d.changes().next().unwrap();
    assert_eq!(c.rule, "enum-narrowed");
    assert_eq!(
        c.pointer,
        "/inputSchema/properties/o/properties/a/items/enum"
    );
}
