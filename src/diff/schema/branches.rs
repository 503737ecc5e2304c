//! `allOf`, `anyOf` and `oneOf` put in a shape the walk can judge: the conjuncts of an `allOf`
//! laid into one schema, a sum's parent keywords distributed into each of its branches (`P ∧
//! (A ∨ B)` is `(P ∧ A) ∨ (P ∧ B)`). Where two conjuncts constrain one keyword differently the
//! schema is left as it is, and the walk says the change is undecided.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{TEXT, escape, type_set};

/// Where each top-level keyword of a laid-together schema was written, as a pointer suffix
/// from the node (`""` the node itself, `/allOf/1` a conjunct): findings are put back there.
pub(super) type Origins = BTreeMap<String, String>;

/// Every keyword of `m` written at the node itself.
pub(super) fn here(m: &Map<String, Value>) -> Origins {
    m.keys().map(|k| (escape(k), String::new())).collect()
}

/// One branch of a sum: the schema an instance must meet to be accepted through it, and where
/// it was written.
pub(super) struct Branch {
    pub value: Value,
    pub at: String,
    pub origins: Origins,
}

/// Keywords that say nothing about which values are accepted, left at the sum's own level.
const NOT_DISTRIBUTED: [&str; 10] = [
    "description",
    "title",
    "default",
    "examples",
    "$schema",
    "$comment",
    "$id",
    "$defs",
    "definitions",
    "deprecated",
];

/// The sum keyword a schema uses, if any.
pub(super) fn sum_key(m: &Map<String, Value>) -> Option<&'static str> {
    ["anyOf", "oneOf"]
        .into_iter()
        .find(|k| m.get(*k).is_some_and(Value::is_array))
}

/// `m` with its `allOf` conjuncts laid in; `None` when two of them disagree on a keyword.
/// `resolve` follows a conjunct's `$ref`.
pub(super) fn flatten(
    m: &Map<String, Value>,
    resolve: impl Fn(&Value) -> Value,
) -> Option<(Map<String, Value>, Origins)> {
    let conjuncts = m.get("allOf")?.as_array()?;
    let mut out = m.clone();
    out.remove("allOf");
    let mut origins = here(&out);
    for (i, c) in conjuncts.iter().enumerate() {
        match resolve(c) {
            Value::Object(c) => {
                for k in c.keys() {
                    origins
                        .entry(escape(k))
                        .or_insert_with(|| format!("/allOf/{i}"));
                }
                conjoin(&mut out, &c)?;
            }
            Value::Bool(true) => {}
            _ => return None, // `false`: accepts nothing; rare enough to leave undecided
        }
    }
    Some((out, origins))
}

/// The branches of `m`'s sum with the parent's keywords in each; a schema without a sum is a
/// sum of one branch, itself. `None` when a branch and its parent disagree on a keyword.
pub(super) fn distribute(
    m: &Map<String, Value>,
    resolve: impl Fn(&Value) -> Value,
) -> Option<Vec<Branch>> {
    let mut parent = m.clone();
    for k in NOT_DISTRIBUTED {
        parent.remove(k);
    }
    let Some(key) = sum_key(m) else {
        let origins = here(&parent);
        return Some(vec![Branch {
            value: Value::Object(parent),
            at: String::new(),
            origins,
        }]);
    };
    parent.remove(key);
    let mut out = Vec::new();
    for (i, b) in m[key].as_array()?.iter().enumerate() {
        let at = format!("/{key}/{i}");
        let mut value = parent.clone();
        let mut origins = here(&parent);
        match resolve(b) {
            Value::Object(b) => {
                for k in b.keys() {
                    origins.entry(escape(k)).or_insert_with(|| at.clone());
                }
                conjoin(&mut value, &b)?;
            }
            Value::Bool(true) => {}
            Value::Bool(false) => continue, // accepts nothing
            _ => return None,
        }
        out.push(Branch {
            value: Value::Object(value),
            at,
            origins,
        });
    }
    Some(out)
}

/// Lay `from`'s keywords into `into` as a conjunction: `required` and `properties` unite,
/// `type`s intersect, text already there stays; any other keyword both constrain differently
/// is a disagreement.
pub(super) fn conjoin(into: &mut Map<String, Value>, from: &Map<String, Value>) -> Option<()> {
    for (k, v) in from {
        let Some(x) = into.get_mut(k) else {
            into.insert(k.clone(), v.clone());
            continue;
        };
        if x == v || TEXT.contains(&k.as_str()) {
            continue;
        }
        match k.as_str() {
            "required" => {
                let (a, b) = (x.as_array_mut()?, v.as_array()?);
                for name in b {
                    if !a.contains(name) {
                        a.push(name.clone());
                    }
                }
            }
            "properties" => {
                let (a, b) = (x.as_object_mut()?, v.as_object()?);
                for (name, s) in b {
                    match a.get(name) {
                        None => {
                            a.insert(name.clone(), s.clone());
                        }
                        Some(t) if t == s => {}
                        Some(_) => return None,
                    }
                }
            }
            "type" => {
                let one = |t: &Value| {
                    let mut m = Map::new();
                    m.insert("type".into(), t.clone());
                    type_set(&m)
                };
                let both: Vec<String> = one(x)?.intersection(&one(v)?).cloned().collect();
                let both: Vec<Value> = both
                    .iter()
                    .filter(|t| !(t.as_str() == "integer" && both.iter().any(|u| u == "number")))
                    .map(|t| Value::String(t.clone()))
                    .collect();
                *x = match both.len() {
                    0 => return None,
                    1 => both[0].clone(),
                    _ => Value::Array(both),
                };
            }
            _ => return None,
        }
    }
    Some(())
}

/// Put findings found on a laid-together schema at `ptr` back where their keyword was
/// written: the first segment after `ptr` is looked up in the new side's origins, then the
/// old side's; a finding on the whole schema goes to the new branch's own place.
pub(super) fn relocate(
    findings: &mut [super::Finding],
    ptr: &str,
    new: (&str, &Origins),
    old: (&str, &Origins),
) {
    for f in findings {
        if f.pointer == ptr {
            f.pointer = format!("{ptr}{}", new.0);
            continue;
        }
        let Some(rest) = f
            .pointer
            .strip_prefix(ptr)
            .and_then(|r| r.strip_prefix('/'))
        else {
            continue;
        };
        let key = rest.split('/').next().unwrap_or_default();
        let origin = new.1.get(key).or_else(|| old.1.get(key));
        if let Some(origin) = origin {
            f.pointer = format!("{ptr}{origin}/{rest}");
        }
    }
}

/// Keywords that constrain only values of one JSON type (a `properties` says nothing about a
/// string); any other keyword applies to every type.
const TYPED: [(&str, &[&str]); 5] = [
    (
        "object",
        &[
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "dependencies",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
        ],
    ),
    (
        "array",
        &[
            "items",
            "prefixItems",
            "additionalItems",
            "contains",
            "minContains",
            "maxContains",
            "minItems",
            "maxItems",
            "uniqueItems",
            "unevaluatedItems",
        ],
    ),
    (
        "string",
        &[
            "minLength",
            "maxLength",
            "pattern",
            "format",
            "contentEncoding",
            "contentMediaType",
        ],
    ),
    (
        "number",
        &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ],
    ),
    (
        "integer",
        &[
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ],
    ),
];

/// A branch split by JSON type: for each type it accepts, the branch with `type` set to it and
/// only the keywords that constrain that type, its `enum` kept to values of that type. A
/// value is accepted by a sum iff the piece of its type in some branch accepts it, so an old
/// branch is covered piece by piece: `{properties: …}` also accepts every string, and a new
/// branch that accepts strings covers that piece.
pub(super) fn pieces(branch: &Value) -> Vec<(&'static str, Value)> {
    let Some(m) = branch.as_object() else {
        return Vec::new();
    };
    let names = [
        "null", "boolean", "object", "array", "number", "string", "integer",
    ];
    let accepted = type_set(m);
    let mut out = Vec::new();
    for t in names {
        let number = accepted.as_ref().is_none_or(|s| s.contains("number"));
        if accepted.as_ref().is_some_and(|s| !s.contains(t)) || (t == "integer" && number) {
            continue; // "number" takes the integers
        }
        let mut piece = Map::new();
        for (k, v) in m {
            let other = TYPED
                .iter()
                .any(|(u, ks)| *u != t && ks.contains(&k.as_str()))
                && !TYPED
                    .iter()
                    .any(|(u, ks)| *u == t && ks.contains(&k.as_str()));
            if !other && k != "type" {
                piece.insert(k.clone(), v.clone());
            }
        }
        if let Some(Value::Array(vs)) = m.get("enum") {
            let kept: Vec<Value> = vs.iter().filter(|v| of_type(v, t)).cloned().collect();
            if kept.is_empty() {
                continue;
            }
            piece.insert("enum".into(), Value::Array(kept));
        }
        if m.get("const").is_some_and(|c| !of_type(c, t)) {
            continue;
        }
        piece.insert("type".into(), Value::String(t.into()));
        out.push((t, Value::Object(piece)));
    }
    out
}

/// Is `v` a value of JSON type `t` (`number` takes integers)?
fn of_type(v: &Value, t: &str) -> bool {
    let own = super::json_type(v);
    own == t || (t == "number" && own == "integer")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn conjuncts_unite_requirements_and_intersect_types() {
        let m = obj(
            json!({"type": "object", "required": ["a"], "description": "d",
            "allOf": [{"required": ["b"], "properties": {"b": {"type": "string"}}},
                      {"type": ["object", "null"], "description": "other"}]}),
        );
        let (flat, origins) = flatten(&m, Value::clone).unwrap();
        assert_eq!(
            Value::Object(flat),
            json!({"type": "object", "required": ["a", "b"], "description": "d",
                   "properties": {"b": {"type": "string"}}})
        );
        assert_eq!(origins["properties"], "/allOf/0");
        assert_eq!(origins["type"], "");
        // Two bounds on one keyword: left undecided.
        let clash = obj(json!({"allOf": [{"maxLength": 3}, {"maxLength": 5}]}));
        assert!(flatten(&clash, Value::clone).is_none());
        let ints = obj(json!({"allOf": [{"type": "number"}, {"type": ["integer", "string"]}]}));
        assert_eq!(flatten(&ints, Value::clone).unwrap().0["type"], "integer");
    }

    #[test]
    fn a_sums_parent_is_in_each_branch_and_false_branches_drop() {
        let m = obj(json!({"type": "object", "description": "d",
            "anyOf": [{"required": ["a"]}, false, {"required": ["b"]}]}));
        let b = distribute(&m, Value::clone).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[1].value, json!({"type": "object", "required": ["b"]}));
        assert_eq!(b[1].at, "/anyOf/2");
        assert_eq!(b[1].origins["required"], "/anyOf/2");
        assert_eq!(b[1].origins["type"], "");
        // Split by type: a branch without `type` accepts every type, `properties` only
        // constrains objects, an enum keeps its values of each type.
        let typeless = json!({"properties": {"a": {}}, "enum": ["x", 1, {"a": 2}]});
        let split: Vec<(&str, Value)> = pieces(&typeless);
        let types: Vec<&str> = split.iter().map(|(t, _)| *t).collect();
        assert_eq!(types, ["object", "string", "integer"]);
        assert_eq!(split[2].1, json!({"type": "integer", "enum": [1]}));
        assert_eq!(
            split[0].1,
            json!({"type": "object", "properties": {"a": {}}, "enum": [{"a": 2}]})
        );
        let plain = obj(json!({"type": "string", "title": "t"}));
        let one = distribute(&plain, Value::clone).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].value, json!({"type": "string"}));
    }
}
