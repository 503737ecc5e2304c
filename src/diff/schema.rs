//! Structural comparison of JSON Schemas, emitting findings named by rules of the law.
//!
//! The walk understands the keywords whose direction (narrowing vs widening) can be decided:
//! properties/required, type, enum, numeric/length/item bounds, pattern, additionalProperties,
//! items. Composition and references (`anyOf`, `$ref`, …) are compared whole and reported as
//! undecidable, because judging them needs a schema-subsumption solver we do not pretend to have.

use std::collections::BTreeSet;

use super::law::RuleId;
use serde_json::{Map, Value};

/// One schema finding: rule id, JSON pointer (inside the tool definition), message, values.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub rule: RuleId,
    pub pointer: String,
    pub message: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

fn f(
    rule: RuleId,
    pointer: &str,
    message: String,
    before: Option<&Value>,
    after: Option<&Value>,
) -> Finding {
    Finding {
        rule,
        pointer: pointer.to_string(),
        message,
        before: before.cloned(),
        after: after.cloned(),
    }
}

/// Lower bounds: raising or adding them narrows. Upper bounds: lowering or adding them narrows.
/// (The numeric ones, minimum/maximum and their exclusive forms, are compared together by
/// `numeric_bound`.)
const LOWER: [&str; 3] = ["minLength", "minItems", "minProperties"];
const UPPER: [&str; 3] = ["maxLength", "maxItems", "maxProperties"];

/// The largest integer JSON carries exactly (RFC 7493): an integer bound at or past it excludes
/// nothing a client can send.
const SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// One side's effective numeric bound: the value, whether it is exclusive, and the keyword that
/// set it. Draft 4's boolean `exclusiveMinimum: true` makes `minimum` exclusive; from draft 6 on
/// `exclusiveMinimum` is a number of its own, and the tighter of the two holds. On an integer an
/// exclusive bound is the next integer inclusive (`> 0` is `>= 1`).
fn numeric_bound(m: &Map<String, Value>, lower: bool) -> Option<(f64, bool, &'static str)> {
    let (incl, excl) = if lower {
        ("minimum", "exclusiveMinimum")
    } else {
        ("maximum", "exclusiveMaximum")
    };
    let draft4 = m.get(excl) == Some(&Value::Bool(true));
    let mut found: Vec<(f64, bool, &'static str)> = Vec::new();
    if let Some(v) = m.get(incl).and_then(Value::as_f64) {
        found.push((v, draft4, if draft4 { excl } else { incl }));
    }
    if let Some(v) = m.get(excl).and_then(Value::as_f64) {
        found.push((v, true, excl));
    }
    let integer = m.get("type").and_then(Value::as_str) == Some("integer");
    let normal = |(v, x, k): (f64, bool, &'static str)| match (integer, lower, x) {
        (false, ..) => (v, x, k),
        (true, true, true) => (v.floor() + 1.0, false, k),
        (true, true, false) => (v.ceil(), false, k),
        (true, false, true) => (v.ceil() - 1.0, false, k),
        (true, false, false) => (v.floor(), false, k),
    };
    found
        .into_iter()
        .map(normal)
        .reduce(|a, b| if tighter(b, a, lower) { b } else { a })
        .filter(|(v, _, _)| {
            !(integer
                && (if lower {
                    *v <= -SAFE_INTEGER
                } else {
                    *v >= SAFE_INTEGER
                }))
        })
}

/// Does bound `a` admit fewer values than `b`? Further in, or as far but exclusive.
fn tighter(a: (f64, bool, &str), b: (f64, bool, &str), lower: bool) -> bool {
    if a.0 == b.0 {
        a.1 && !b.1
    } else {
        (a.0 > b.0) == lower
    }
}

/// Compared whole; any change is undecidable.
const OPAQUE: [&str; 11] = [
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "$ref",
    "$defs",
    "definitions",
    "if",
    "then",
    "else",
    "format",
];
/// Text the model reads, reported as parameter description changes.
const TEXT: [&str; 2] = ["description", "title"];
/// Keywords handled explicitly (everything else falls into the generic RuleId::SchemaChanged).
const HANDLED: [&str; 16] = [
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "type",
    "properties",
    "required",
    "enum",
    "const",
    "multipleOf",
    "additionalProperties",
    "items",
    "pattern",
    "uniqueItems",
    "default",
    "$schema",
];

/// Compare two schemas rooted at `ptr` (e.g. `/inputSchema`).
pub fn compare(old: &Value, new: &Value, ptr: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    walk(old, new, ptr, &mut out);
    out
}

fn walk(old: &Value, new: &Value, ptr: &str, out: &mut Vec<Finding>) {
    if old == new {
        return;
    }
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        // Boolean schemas or junk: `true` accepts everything, `false` nothing.
        let rule = match (old, new) {
            (Value::Bool(true), _) => RuleId::TypeNarrowed,
            (_, Value::Bool(true)) => RuleId::TypeWidened,
            _ => RuleId::SchemaChanged,
        };
        out.push(f(rule, ptr, "schema replaced".into(), Some(old), Some(new)));
        return;
    };
    for key in TEXT {
        if o.get(key) != n.get(key) {
            out.push(f(
                RuleId::ParamDescriptionChanged,
                &format!("{ptr}/{key}"),
                format!("{key} changed"),
                o.get(key),
                n.get(key),
            ));
        }
    }
    if o.get("$schema") != n.get("$schema") {
        out.push(f(
            RuleId::SchemaDialectChanged,
            &format!("{ptr}/$schema"),
            "$schema dialect changed".into(),
            o.get("$schema"),
            n.get("$schema"),
        ));
    }
    // A keyword whose new value is of the wrong kind is its own (breaking) finding; the other
    // comparisons see the old value there, so `type: 7` is not read as "any type" (widening).
    let invalid = invalid_keywords(n);
    let mut fixed;
    let n = if invalid.is_empty() {
        n
    } else {
        fixed = n.clone();
        for (key, why) in invalid {
            if o.get(key) == n.get(key) {
                continue;
            }
            out.push(f(
                RuleId::SchemaInvalid,
                &format!("{ptr}/{key}"),
                format!("`{key}` is not valid JSON Schema: {why}"),
                o.get(key),
                n.get(key),
            ));
            match o.get(key) {
                Some(v) => fixed.insert(key.to_string(), v.clone()),
                None => fixed.remove(key),
            };
        }
        &fixed
    };
    types(o, n, ptr, out);
    properties(o, n, ptr, out);
    enums(o, n, ptr, out);
    bounds(o, n, ptr, out);
    additional(o, n, ptr, out);
    if let (Some(a), Some(b)) = (o.get("items"), n.get("items")) {
        walk(a, b, &format!("{ptr}/items"), out);
    } else if o.get("items") != n.get("items") {
        let rule = if n.get("items").is_some() {
            RuleId::TypeNarrowed
        } else {
            RuleId::TypeWidened
        };
        out.push(f(
            rule,
            &format!("{ptr}/items"),
            "items schema added or removed".into(),
            o.get("items"),
            n.get("items"),
        ));
    }
    if o.get("default") != n.get("default") {
        out.push(f(
            RuleId::DefaultChanged,
            &format!("{ptr}/default"),
            "default changed".into(),
            o.get("default"),
            n.get("default"),
        ));
    }
    let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
    for key in keys {
        let k = key.as_str();
        let handled =
            HANDLED.contains(&k) || TEXT.contains(&k) || LOWER.contains(&k) || UPPER.contains(&k);
        if !handled && o.get(k) != n.get(k) {
            let why = if OPAQUE.contains(&k) {
                "cannot be decided statically"
            } else {
                "unrecognised keyword"
            };
            out.push(f(
                RuleId::SchemaChanged,
                &format!("{ptr}/{}", escape(k)),
                format!("`{k}` changed ({why})"),
                o.get(k),
                n.get(k),
            ));
        }
    }
}

/// RFC 6901 escaping of a pointer segment.
pub fn escape(seg: &str) -> String {
    seg.replace('~', "~0").replace('/', "~1")
}

/// JSON Schema's type names.
const TYPE_NAMES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// The keywords of `m` whose values are of the wrong kind for JSON Schema, with what was
/// expected.
fn invalid_keywords(m: &Map<String, Value>) -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    let type_ok = |v: &Value| match v {
        Value::String(s) => TYPE_NAMES.contains(&s.as_str()),
        Value::Array(a) => {
            !a.is_empty()
                && a.iter()
                    .all(|t| t.as_str().is_some_and(|s| TYPE_NAMES.contains(&s)))
        }
        _ => false,
    };
    if m.get("type").is_some_and(|v| !type_ok(v)) {
        out.push(("type", "expected a type name or a list of them"));
    }
    if m.get("required")
        .is_some_and(|v| !v.as_array().is_some_and(|a| a.iter().all(Value::is_string)))
    {
        out.push(("required", "expected a list of property names"));
    }
    if m.get("properties").is_some_and(|v| {
        !v.as_object()
            .is_some_and(|p| p.values().all(|s| s.is_object() || s.is_boolean()))
    }) {
        out.push(("properties", "expected an object of schemas"));
    }
    if m.get("enum").is_some_and(|v| !v.is_array()) {
        out.push(("enum", "expected a list of values"));
    }
    out
}

/// The JSON type of a value, as `type` names it.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The values a schema is pinned to: its `enum`, or its `const` as an enum of one.
fn values(m: &Map<String, Value>) -> Option<Vec<Value>> {
    match (m.get("enum"), m.get("const")) {
        (Some(Value::Array(a)), _) => Some(a.clone()),
        (None, Some(c)) => Some(vec![c.clone()]),
        _ => None,
    }
}

/// The types a schema accepts: its `type`, else the types of its pinned values, else the union
/// of its `anyOf`/`oneOf` branches' (when every branch says); `None` = any type.
fn type_set(m: &Map<String, Value>) -> Option<BTreeSet<String>> {
    let mut s: BTreeSet<String> = match m.get("type") {
        Some(Value::String(t)) => [t.clone()].into(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        Some(_) => return None,
        None => {
            if let Some(vs) = values(m) {
                vs.iter().map(|v| json_type(v).to_string()).collect()
            } else if let Some(branches) = m.get("allOf").and_then(Value::as_array) {
                // Every branch applies: the types the branches that say agree on.
                let mut said = branches
                    .iter()
                    .filter_map(|b| b.as_object().and_then(type_set));
                let first = said.next()?;
                said.fold(first, |acc, t| acc.intersection(&t).cloned().collect())
            } else {
                let branches = ["anyOf", "oneOf"]
                    .iter()
                    .find_map(|k| m.get(*k).and_then(Value::as_array))?;
                let mut all = BTreeSet::new();
                for b in branches {
                    all.extend(type_set(b.as_object()?)?);
                }
                if all.is_empty() {
                    return None;
                }
                all
            }
        }
    };
    // "number" accepts every integer.
    if s.contains("number") {
        s.insert("integer".into());
    }
    Some(s)
}

fn types(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    // An old side whose types hide behind `$ref`, `not` or a conditional is not "any type": what
    // it accepted is undecided (its keyword's own `schema-changed` says so), not narrowed.
    let hidden = ["$ref", "not", "if"].iter().any(|k| o.contains_key(*k));
    let rule = match (type_set(o), type_set(n)) {
        (None, None) => return,
        (None, Some(_)) if hidden => return,
        (None, Some(_)) => RuleId::TypeNarrowed,
        (Some(_), None) => RuleId::TypeWidened,
        (Some(a), Some(b)) if a == b => return, // e.g. "string" vs ["string"]
        (Some(a), Some(b)) if b.is_subset(&a) => RuleId::TypeNarrowed,
        (Some(a), Some(b)) if a.is_subset(&b) => RuleId::TypeWidened,
        _ => RuleId::TypeChanged,
    };
    out.push(f(
        rule,
        &format!("{ptr}/type"),
        "type changed".into(),
        o.get("type"),
        n.get("type"),
    ));
}

fn required(m: &Map<String, Value>) -> BTreeSet<String> {
    m.get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn properties(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    let empty = Map::new();
    let op = o
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let np = n
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let (or, nr) = (required(o), required(n));
    for (name, schema) in op {
        let p = format!("{ptr}/properties/{}", escape(name));
        match np.get(name) {
            // A property whose schema is `false` could never be sent: removing it breaks no call.
            None if schema == &Value::Bool(false) => out.push(f(
                RuleId::BoundLoosened,
                &p,
                format!("property `{name}` (schema `false`: never accepted) removed"),
                Some(schema),
                None,
            )),
            None => out.push(f(
                RuleId::PropertyRemoved,
                &p,
                format!("property `{name}` removed"),
                Some(schema),
                None,
            )),
            Some(ns) => walk(schema, ns, &p, out),
        }
    }
    for (name, schema) in np {
        if op.contains_key(name) {
            continue;
        }
        let p = format!("{ptr}/properties/{}", escape(name));
        if nr.contains(name) {
            out.push(f(
                RuleId::PropertyAddedRequired,
                &p,
                format!("required property `{name}` added"),
                None,
                Some(schema),
            ));
        } else {
            out.push(f(
                RuleId::PropertyAddedOptional,
                &p,
                format!("optional property `{name}` added"),
                None,
                Some(schema),
            ));
        }
    }
    // Required-ness of properties that exist on both sides (new ones were judged above).
    for name in nr.difference(&or) {
        if op.contains_key(name) || !np.contains_key(name) {
            out.push(f(
                RuleId::PropertyBecameRequired,
                &format!("{ptr}/required"),
                format!("`{name}` became required"),
                None,
                Some(&Value::String(name.clone())),
            ));
        }
    }
    for name in or.difference(&nr) {
        if np.contains_key(name) || !op.contains_key(name) {
            out.push(f(
                RuleId::PropertyBecameOptional,
                &format!("{ptr}/required"),
                format!("`{name}` is no longer required"),
                Some(&Value::String(name.clone())),
                None,
            ));
        }
    }
}

fn enums(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    // `const` is an enum of one; the pointer names the keyword the new side uses.
    let key = |m: &Map<String, Value>| {
        if m.contains_key("enum") {
            "enum"
        } else {
            "const"
        }
    };
    let (va, vb) = (values(o), values(n));
    if va == vb {
        return;
    }
    let p = format!("{ptr}/{}", key(if vb.is_some() { n } else { o }));
    let (a, b) = (o.get(key(o)), n.get(key(n)));
    let rule = match (va.as_ref(), vb.as_ref()) {
        (None, Some(_)) => RuleId::EnumAdded,
        (Some(_), None) => RuleId::EnumRemoved,
        (Some(x), Some(y)) => {
            let removed = x.iter().any(|v| !y.contains(v));
            let added = y.iter().any(|v| !x.contains(v));
            match (removed, added) {
                (true, _) => RuleId::EnumNarrowed,
                (false, true) => RuleId::EnumWidened,
                (false, false) => return, // reordered only
            }
        }
        (None, None) => RuleId::SchemaChanged,
    };
    out.push(f(rule, &p, "enum changed".into(), a, b));
}

fn bounds(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    for lower in [true, false] {
        let (a, b) = (numeric_bound(o, lower), numeric_bound(n, lower));
        let rule = match (a, b) {
            (None, None) => continue,
            (None, Some(_)) => RuleId::BoundTightened,
            (Some(_), None) => RuleId::BoundLoosened,
            (Some(x), Some(y)) if (x.0, x.1) == (y.0, y.1) => continue,
            (Some(x), Some(y)) => {
                if tighter(y, x, lower) {
                    RuleId::BoundTightened
                } else {
                    RuleId::BoundLoosened
                }
            }
        };
        let k = b.or(a).map(|(_, _, k)| k).expect("one side has a bound");
        let side = if lower { "lower" } else { "upper" };
        out.push(f(
            rule,
            &format!("{ptr}/{k}"),
            format!("the {side} bound changed"),
            a.and_then(|(_, _, k)| o.get(k)),
            b.and_then(|(_, _, k)| n.get(k)),
        ));
    }
    let num = |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_f64);
    for (keys, lower) in [(LOWER, true), (UPPER, false)] {
        for k in keys {
            let (a, b) = (num(o, k), num(n, k));
            let rule = match (a, b) {
                (None, None) => continue,
                (None, Some(_)) => RuleId::BoundTightened,
                (Some(_), None) => RuleId::BoundLoosened,
                (Some(x), Some(y)) if x == y => continue,
                (Some(x), Some(y)) => {
                    if (y > x) == lower {
                        RuleId::BoundTightened
                    } else {
                        RuleId::BoundLoosened
                    }
                }
            };
            out.push(f(
                rule,
                &format!("{ptr}/{k}"),
                format!("`{k}` changed"),
                o.get(k),
                n.get(k),
            ));
        }
    }
    let (a, b) = (o.get("pattern"), n.get("pattern"));
    if a != b {
        let rule = match (a, b) {
            (None, Some(_)) => RuleId::BoundTightened,
            (Some(_), None) => RuleId::BoundLoosened,
            _ => RuleId::PatternChanged,
        };
        out.push(f(
            rule,
            &format!("{ptr}/pattern"),
            "`pattern` changed".into(),
            a,
            b,
        ));
    }
    let (a, b) = (o.get("multipleOf"), n.get("multipleOf"));
    if a != b {
        // Every multiple of the old divisor stays a multiple of the new one iff new divides old.
        let divides = |old: f64, new: f64| {
            let q = old / new;
            new > 0.0 && (q - q.round()).abs() < 1e-9 * q.abs().max(1.0)
        };
        let rule = match (a.and_then(Value::as_f64), b.and_then(Value::as_f64)) {
            (_, None) => RuleId::BoundLoosened,
            (Some(x), Some(y)) if divides(x, y) => RuleId::BoundLoosened,
            _ => RuleId::BoundTightened,
        };
        out.push(f(
            rule,
            &format!("{ptr}/multipleOf"),
            "`multipleOf` changed".into(),
            a,
            b,
        ));
    }
    let uniq = |m: &Map<String, Value>| m.get("uniqueItems") == Some(&Value::Bool(true));
    if uniq(o) != uniq(n) {
        let rule = if uniq(n) {
            RuleId::BoundTightened
        } else {
            RuleId::BoundLoosened
        };
        out.push(f(
            rule,
            &format!("{ptr}/uniqueItems"),
            "`uniqueItems` changed".into(),
            o.get("uniqueItems"),
            n.get("uniqueItems"),
        ));
    }
}

fn additional(o: &Map<String, Value>, n: &Map<String, Value>, ptr: &str, out: &mut Vec<Finding>) {
    let (a, b) = (o.get("additionalProperties"), n.get("additionalProperties"));
    if a == b {
        return;
    }
    let p = format!("{ptr}/additionalProperties");
    let closed = |v: Option<&Value>| v == Some(&Value::Bool(false));
    let open = |v: Option<&Value>| v.is_none() || v == Some(&Value::Bool(true));
    let rule = if closed(b) && !closed(a) {
        RuleId::AdditionalPropertiesClosed
    } else if closed(a) && !closed(b) || open(b) {
        RuleId::AdditionalPropertiesOpened
    } else if let (Some(x), Some(y)) = (a, b) {
        // Both are schemas for the extra keys: compare them like any schema.
        walk(x, y, &p, out);
        return;
    } else {
        RuleId::SchemaChanged
    };
    out.push(f(rule, &p, "additionalProperties changed".into(), a, b));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bound_rules(old: serde_json::Value, new: serde_json::Value) -> Vec<(RuleId, String)> {
        compare(&old, &new, "/s")
            .into_iter()
            .map(|f| (f.rule, f.pointer))
            .collect()
    }

    /// Numeric bounds are compared by the values they admit, not keyword by keyword (found on
    /// mcp-server-fetch 2026.8.18 → 2026.10.10: `exclusiveMinimum: 0` → `minimum: 1` on an
    /// integer was rated a breaking tightening).
    #[test]
    fn numeric_bounds_compare_by_the_values_they_admit() {
        let typed = |t: &str, extra: serde_json::Value| {
            let mut o = json!({ "type": t });
            o.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            o
        };
        let int = |extra| typed("integer", extra);
        let num = |extra| typed("number", extra);
        // The same integers, spelled otherwise: nothing to report.
        assert_eq!(
            bound_rules(
                int(json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1000000})),
                int(json!({"minimum": 1, "maximum": 999999}))
            ),
            []
        );
        assert_eq!(
            bound_rules(int(json!({"minimum": 0.5})), int(json!({"minimum": 1}))),
            []
        );
        // On a number the same spelling excludes 0 < x < 1: tightened, once.
        assert_eq!(
            bound_rules(
                num(json!({"exclusiveMinimum": 0})),
                num(json!({"minimum": 1}))
            ),
            [(RuleId::BoundTightened, "/s/minimum".to_string())]
        );
        // Inclusive → exclusive at the same value excludes it; the reverse admits it.
        assert_eq!(
            bound_rules(
                num(json!({"minimum": 1})),
                num(json!({"exclusiveMinimum": 1}))
            ),
            [(RuleId::BoundTightened, "/s/exclusiveMinimum".to_string())]
        );
        assert_eq!(
            bound_rules(
                num(json!({"exclusiveMaximum": 9})),
                num(json!({"maximum": 9}))
            ),
            [(RuleId::BoundLoosened, "/s/maximum".to_string())]
        );
        // Draft 4's boolean exclusiveMinimum modifies minimum.
        assert_eq!(
            bound_rules(
                num(json!({"minimum": 1})),
                num(json!({"minimum": 1, "exclusiveMinimum": true}))
            ),
            [(RuleId::BoundTightened, "/s/exclusiveMinimum".to_string())]
        );
        // An integer bound at the edge of JSON's exact integers (2^53 − 1) excludes nothing a
        // client can send exactly (RFC 7493): no tightening.
        assert_eq!(
            bound_rules(int(json!({})), int(json!({"maximum": 9007199254740991u64}))),
            []
        );
        assert_eq!(
            bound_rules(
                int(json!({})),
                int(json!({"minimum": -9007199254740991i64}))
            ),
            []
        );
        assert_eq!(
            bound_rules(int(json!({})), int(json!({"maximum": 100}))),
            [(RuleId::BoundTightened, "/s/maximum".to_string())]
        );
        assert_eq!(
            bound_rules(int(json!({"minimum": 3})), int(json!({}))),
            [(RuleId::BoundLoosened, "/s/minimum".to_string())]
        );
        // Length bounds stay per keyword.
        assert_eq!(
            bound_rules(
                json!({"type": "string"}),
                json!({"type": "string", "maxLength": 5})
            ),
            [(RuleId::BoundTightened, "/s/maxLength".to_string())]
        );
    }

    #[test]
    fn values_of_the_wrong_kind_are_invalid_not_widening() {
        let base =
            json!({"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]});
        for (new, at) in [
            (
                json!({"type": "object", "properties": {"p": {"type": 7}}, "required": ["p"]}),
                "/s/properties/p/type",
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "string"}}, "required": "p"}),
                "/s/required",
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "string"}}, "required": {"p": true}}),
                "/s/required",
            ),
            (
                json!({"type": "thing", "properties": {"p": {"type": "string"}}, "required": ["p"]}),
                "/s/type",
            ),
        ] {
            let found = compare(&base, &new, "/s");
            let rules: Vec<(RuleId, &str)> =
                found.iter().map(|f| (f.rule, f.pointer.as_str())).collect();
            assert_eq!(rules, [(RuleId::SchemaInvalid, at)], "{new}");
        }
        // A valid list of types is no finding of this kind.
        let ok = json!({"type": ["string", "null"]});
        assert!(invalid_keywords(ok.as_object().unwrap()).is_empty());
    }

    fn rules_of(old: serde_json::Value, new: serde_json::Value) -> Vec<RuleId> {
        bound_rules(old, new).into_iter().map(|(r, _)| r).collect()
    }

    /// Found by the evidence bench (docs/evidence.md: Confluent and sentry pairs): `const` was
    /// "cannot be decided" (a warning), so a parameter pinned to one value, or pinned to another,
    /// passed the gate. It is an enum of one.
    #[test]
    fn const_is_an_enum_of_one() {
        let s = json!({"type": "string"});
        let a = json!({"type": "string", "const": "a"});
        let b = json!({"type": "string", "const": "b"});
        assert_eq!(rules_of(s.clone(), a.clone()), [RuleId::EnumAdded]);
        assert_eq!(rules_of(a.clone(), b), [RuleId::EnumNarrowed]);
        assert_eq!(rules_of(a.clone(), s), [RuleId::EnumRemoved]);
        let e = json!({"type": "string", "enum": ["a", "c"]});
        assert_eq!(rules_of(a, e), [RuleId::EnumWidened]);
    }

    /// Found by the evidence bench (sentry's any_of/to_equivalent_type, type/extend_from_const):
    /// a schema whose types live in `anyOf`/`oneOf` branches or in a `const`/`enum` was read as
    /// "any type", so writing the same types as `type` was rated a breaking narrowing.
    #[test]
    fn types_are_read_through_branches_and_values() {
        let branches = json!({"anyOf": [{"type": "string"}, {"type": "number"}]});
        let same = json!({"type": ["string", "number"]});
        let rules = rules_of(branches.clone(), same);
        assert!(!rules.contains(&RuleId::TypeNarrowed), "{rules:?}");
        let wider = json!({"type": ["string", "number", "boolean"]});
        assert!(!rules_of(branches.clone(), wider).contains(&RuleId::TypeNarrowed));
        let narrower = json!({"type": "string"});
        assert!(rules_of(branches, narrower).contains(&RuleId::TypeNarrowed));
        // allOf → anyOf with the same types (Confluent's combined-schema pairs), and a `$ref`
        // inlined (its target's types are not followed), are no narrowing either.
        let all = json!({"allOf": [{"type": "string"}, {"maxLength": 5}]});
        let any = json!({"anyOf": [{"type": "string"}, {"maxLength": 5, "type": "string"}]});
        assert!(!rules_of(all, any).contains(&RuleId::TypeNarrowed));
        let by_ref = json!({"$ref": "#/definitions/s", "definitions": {"s": {"type": "string"}}});
        assert!(!rules_of(by_ref, json!({"type": "string"})).contains(&RuleId::TypeNarrowed));
        let pinned = json!({"const": "x"});
        let rules = rules_of(pinned, json!({"type": "string"}));
        assert!(!rules.contains(&RuleId::TypeNarrowed), "{rules:?}");
    }

    /// Found by the evidence bench (both checkers call these breaking): a changed `pattern` and
    /// a changed `multipleOf` were "cannot be decided" warnings.
    #[test]
    fn a_changed_pattern_or_divisor_is_breaking_unless_it_admits_the_old() {
        let p = |re: &str| json!({"type": "string", "pattern": re});
        assert_eq!(rules_of(p("^a"), p("^b")), [RuleId::PatternChanged]);
        let m = |d: f64| json!({"type": "number", "multipleOf": d});
        assert_eq!(rules_of(m(2.0), m(4.0)), [RuleId::BoundTightened]);
        assert_eq!(rules_of(m(2.0), m(3.0)), [RuleId::BoundTightened]);
        assert_eq!(rules_of(m(4.0), m(2.0)), [RuleId::BoundLoosened]);
        assert_eq!(rules_of(m(0.5), m(0.25)), [RuleId::BoundLoosened]);
        assert_eq!(
            rules_of(json!({"type": "number"}), m(2.0)),
            [RuleId::BoundTightened]
        );
        assert_eq!(
            rules_of(m(2.0), json!({"type": "number"})),
            [RuleId::BoundLoosened]
        );
    }

    /// Found by the evidence bench (Confluent: removing false from a closed content model): a
    /// property whose schema is `false` could never be sent; removing it breaks no call.
    #[test]
    fn removing_a_property_no_call_could_send_is_not_breaking() {
        let old = json!({"type": "object", "additionalProperties": false,
                         "properties": {"a": {"type": "string"}, "foo": false}});
        let new = json!({"type": "object", "additionalProperties": false,
                         "properties": {"a": {"type": "string"}}});
        let rules = rules_of(old, new);
        assert!(!rules.contains(&RuleId::PropertyRemoved), "{rules:?}");
        assert!(
            rules
                .iter()
                .all(|r| r.rule().severity < crate::diff::law::Severity::High),
            "{rules:?}"
        );
    }
}
