//! Every row of the severity law, exercised on an old/new pair: the pair must produce exactly
//! that rule (and the rule's severity). A row without a case fails `every_rule_has_a_case`.

use driftgate::diff::{self, LAW, Severity, rule};
use driftgate::tools::ToolSet;
use serde_json::{Value, json};

fn set(v: Value) -> ToolSet {
    ToolSet::from_array(v.as_array().unwrap(), "case", "").unwrap()
}

fn obj(props: Value, required: Value) -> Value {
    json!({"type":"object","properties":props,"required":required})
}

/// (rule id, base tools, head tools)
fn cases() -> Vec<(&'static str, Value, Value)> {
    let base = |schema: Value| json!([{"name":"t","description":"Do it.","inputSchema":schema}]);
    let s = |p: Value| obj(json!({"x": p}), json!([]));
    let ann = |a: Value| json!([{"name":"t","description":"d","inputSchema":{"type":"object"},"annotations":a}]);
    vec![
        ("tool-added", json!([]), json!([{"name":"t"}])),
        ("tool-removed", json!([{"name":"t"}]), json!([])),
        (
            "tool-renamed",
            json!([{"name":"read-query","description":"Run a SELECT query","inputSchema":obj(json!({"query":{"type":"string"}}),json!(["query"]))}]),
            json!([{"name":"read_query","description":"Run a SELECT query","inputSchema":obj(json!({"query":{"type":"string"}}),json!(["query"]))}]),
        ),
        (
            "description-changed",
            json!([{"name":"t","description":"Schedule a meeting"}]),
            json!([{"name":"t","description":"Book a meeting"}]),
        ),
        (
            "description-whitespace",
            json!([{"name":"t","description":"Schedule  a meeting"}]),
            json!([{"name":"t","description":"Schedule a\nmeeting "}]),
        ),
        (
            "title-changed",
            json!([{"name":"t","title":"A"}]),
            json!([{"name":"t","title":"B"}]),
        ),
        (
            "param-description-changed",
            base(s(json!({"type":"string","description":"a"}))),
            base(s(json!({"type":"string","description":"b"}))),
        ),
        (
            "property-added-optional",
            base(obj(json!({}), json!([]))),
            base(obj(json!({"y":{"type":"string"}}), json!([]))),
        ),
        (
            "property-added-required",
            base(obj(json!({}), json!([]))),
            base(obj(json!({"y":{"type":"string"}}), json!(["y"]))),
        ),
        (
            "property-removed",
            base(obj(json!({"y":{"type":"string"}}), json!([]))),
            base(obj(json!({}), json!([]))),
        ),
        (
            "property-became-required",
            base(obj(json!({"y":{"type":"string"}}), json!([]))),
            base(obj(json!({"y":{"type":"string"}}), json!(["y"]))),
        ),
        (
            "property-became-optional",
            base(obj(json!({"y":{"type":"string"}}), json!(["y"]))),
            base(obj(json!({"y":{"type":"string"}}), json!([]))),
        ),
        (
            "type-narrowed",
            base(s(json!({"type":"number"}))),
            base(s(json!({"type":"integer"}))),
        ),
        (
            "type-widened",
            base(s(json!({"type":"string"}))),
            base(s(json!({"type":["string","null"]}))),
        ),
        (
            "type-changed",
            base(s(json!({"type":"string"}))),
            base(s(json!({"type":"number"}))),
        ),
        (
            "enum-narrowed",
            base(s(json!({"type":"string","enum":["a","b"]}))),
            base(s(json!({"type":"string","enum":["a"]}))),
        ),
        (
            "enum-widened",
            base(s(json!({"type":"string","enum":["a"]}))),
            base(s(json!({"type":"string","enum":["a","b"]}))),
        ),
        (
            "enum-added",
            base(s(json!({"type":"string"}))),
            base(s(json!({"type":"string","enum":["a"]}))),
        ),
        (
            "enum-removed",
            base(s(json!({"type":"string","enum":["a"]}))),
            base(s(json!({"type":"string"}))),
        ),
        (
            "bound-tightened",
            base(s(json!({"type":"number","maximum":10}))),
            base(s(json!({"type":"number","maximum":5}))),
        ),
        (
            "bound-loosened",
            base(s(json!({"type":"string","minLength":3}))),
            base(s(json!({"type":"string","minLength":1}))),
        ),
        (
            "additional-properties-closed",
            base(obj(json!({}), json!([]))),
            base(
                json!({"type":"object","properties":{},"required":[],"additionalProperties":false}),
            ),
        ),
        (
            "additional-properties-opened",
            base(
                json!({"type":"object","properties":{},"required":[],"additionalProperties":false}),
            ),
            base(obj(json!({}), json!([]))),
        ),
        (
            "default-changed",
            base(s(json!({"type":"number","default":1}))),
            base(s(json!({"type":"number","default":2}))),
        ),
        (
            "schema-dialect-changed",
            base(json!({"type":"object","$schema":"http://json-schema.org/draft-07/schema#"})),
            base(json!({"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema"})),
        ),
        (
            "schema-changed",
            base(s(json!({"anyOf":[{"type":"string"},{"type":"number"}]}))),
            base(s(json!({"anyOf":[{"type":"string"},{"type":"boolean"}]}))),
        ),
        (
            "output-schema-added",
            json!([{"name":"t"}]),
            json!([{"name":"t","outputSchema":{"type":"object"}}]),
        ),
        (
            "output-schema-removed",
            json!([{"name":"t","outputSchema":{"type":"object"}}]),
            json!([{"name":"t"}]),
        ),
        (
            "output-schema-changed",
            json!([{"name":"t","outputSchema":{"type":"object"}}]),
            json!([{"name":"t","outputSchema":{"type":"object","required":["a"]}}]),
        ),
        (
            "annotation-safety-flipped",
            ann(json!({"destructiveHint":false})),
            ann(json!({"destructiveHint":true})),
        ),
        (
            "annotation-hint-changed",
            ann(json!({"idempotentHint":false})),
            ann(json!({"idempotentHint":true})),
        ),
        (
            "annotations-declared",
            json!([{"name":"t","description":"d"}]),
            ann(json!({"readOnlyHint":true})),
        ),
        (
            "annotation-added",
            ann(json!({"title":"T"})),
            ann(json!({"title":"T","readOnlyHint":true})),
        ),
        (
            "annotation-removed",
            ann(json!({"title":"T","readOnlyHint":true})),
            ann(json!({"title":"T"})),
        ),
        (
            "annotation-other-changed",
            ann(json!({"category":"files"})),
            ann(json!({"category":"fs"})),
        ),
        (
            "other-field-changed",
            json!([{"name":"t","_meta":{"v":1}}]),
            json!([{"name":"t","_meta":{"v":2}}]),
        ),
    ]
}

#[test]
fn every_rule_has_a_case() {
    let covered: Vec<&str> = cases().iter().map(|c| c.0).collect();
    for r in LAW {
        assert!(
            covered.contains(&r.id),
            "law row {:?} has no old/new case",
            r.id
        );
    }
    assert_eq!(covered.len(), LAW.len(), "one case per row");
}

#[test]
fn each_case_yields_exactly_its_rule() {
    for (id, old, new) in cases() {
        let d = diff::diff(&set(old), &set(new));
        let rules: Vec<&str> = d.changes().map(|(_, c)| c.rule).collect();
        assert_eq!(rules, vec![id], "case {id}");
        let (_, c) = d.changes().next().unwrap();
        assert_eq!(c.severity, rule(id).severity, "case {id}");
    }
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
