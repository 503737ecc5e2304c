//! Expected arguments of a case (`args:`): a map from parameter to a matcher, checked as a subset
//! (parameters the case does not list are free).
//!
//! A matcher is a literal (numbers compare numerically, so `3` matches `3.0`; strings exactly;
//! arrays and objects element by element) or one of the one-key forms `{any_of: […]}`,
//! `{regex: …}` (searched anywhere; anchor with `^…$`), `{contains: …}` (substring of a string,
//! or an element of an array), `{absent: true}` and `{type: …}` (a JSON Schema type name). A
//! literal object whose only key is one of those words is written `{any_of: [{…}]}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::tools::json_kind;

/// Compiled regexes are capped: a hostile suite cannot make one cost more than this.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// JSON Schema's type names, for `{type: …}`.
pub const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "array", "object", "null",
];

#[derive(Debug, Clone)]
pub enum Matcher {
    Literal(Value),
    AnyOf(Vec<Value>),
    Regex(regex::Regex),
    Contains(Value),
    Absent,
    Type(String),
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Matcher) -> bool {
        self.to_value() == other.to_value()
    }
}

impl Matcher {
    /// Read one matcher; `Err` says what was expected.
    pub fn from_value(v: &Value) -> Result<Matcher, String> {
        let Some(o) = v.as_object().filter(|o| o.len() == 1) else {
            return Ok(Matcher::Literal(v.clone()));
        };
        let (k, x) = o.iter().next().expect("one key");
        Ok(match k.as_str() {
            "any_of" => match x {
                Value::Array(a) if !a.is_empty() => Matcher::AnyOf(a.clone()),
                _ => {
                    return Err(format!(
                        "`any_of`: expected a non-empty list, found {}",
                        json_kind(x)
                    ));
                }
            },
            "regex" => {
                let s = x
                    .as_str()
                    .ok_or_else(|| format!("`regex`: expected a string, found {}", json_kind(x)))?;
                let re = regex::RegexBuilder::new(s)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| format!("`regex`: {e}"))?;
                Matcher::Regex(re)
            }
            "contains" => Matcher::Contains(x.clone()),
            "absent" => match x {
                Value::Bool(true) => Matcher::Absent,
                _ => return Err("`absent`: the only value is `true`".into()),
            },
            "type" => match x.as_str() {
                Some(t) if TYPES.contains(&t) => Matcher::Type(t.into()),
                _ => {
                    return Err(format!(
                        "`type`: expected one of {}, found {x}",
                        TYPES.join(", ")
                    ));
                }
            },
            _ => Matcher::Literal(v.clone()),
        })
    }

    pub fn to_value(&self) -> Value {
        let one = |k: &str, v: Value| Value::Object(Map::from_iter([(k.to_string(), v)]));
        match self {
            Matcher::Literal(v) => v.clone(),
            Matcher::AnyOf(a) => one("any_of", Value::Array(a.clone())),
            Matcher::Regex(r) => one("regex", Value::String(r.as_str().into())),
            Matcher::Contains(v) => one("contains", v.clone()),
            Matcher::Absent => one("absent", Value::Bool(true)),
            Matcher::Type(t) => one("type", Value::String(t.clone())),
        }
    }

    /// What the matcher wants, for reports: `"a.txt"`, `one of ["a", "b"]`, `/^\d+$/`, ….
    pub fn describe(&self) -> String {
        match self {
            Matcher::Literal(v) => v.to_string(),
            Matcher::AnyOf(a) => format!("one of {}", Value::Array(a.clone())),
            Matcher::Regex(r) => format!("matching /{}/", r.as_str()),
            Matcher::Contains(v) => format!("containing {v}"),
            Matcher::Absent => "absent".into(),
            Matcher::Type(t) => format!("of type {t}"),
        }
    }

    /// Does a present (`Some`) or missing (`None`) value satisfy the matcher?
    pub fn matches(&self, got: Option<&Value>) -> bool {
        let Some(got) = got else {
            return matches!(self, Matcher::Absent);
        };
        match self {
            Matcher::Literal(v) => same(v, got),
            Matcher::AnyOf(a) => a.iter().any(|v| same(v, got)),
            Matcher::Regex(r) => got.as_str().is_some_and(|s| r.is_match(s)),
            Matcher::Contains(v) => match (got, v) {
                (Value::String(s), Value::String(sub)) => s.contains(sub.as_str()),
                (Value::Array(a), v) => a.iter().any(|x| same(v, x)),
                _ => false,
            },
            Matcher::Absent => false,
            Matcher::Type(t) => type_is(got, t),
        }
    }

    /// The literal values this matcher names (for checking them against the parameter's schema).
    pub fn literals(&self) -> Vec<&Value> {
        match self {
            Matcher::Literal(v) => vec![v],
            Matcher::AnyOf(a) => a.iter().collect(),
            _ => Vec::new(),
        }
    }
}

/// JSON equality with numbers compared by value (`3` = `3.0`), recursively.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// JSON Schema's reading of a type name (an integer-valued number is an integer).
pub fn type_is(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => false,
    }
}

/// A case's expected arguments: parameter → matcher.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArgExpect(pub BTreeMap<String, Matcher>);

/// One expected argument the call did not satisfy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArgMismatch {
    pub param: String,
    /// What the suite expected (`Matcher::describe`).
    pub expected: String,
    /// What the call gave; absent when the parameter was missing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub got: Option<Value>,
}

impl ArgExpect {
    /// Read `args:`; `Err((parameter, message))` names the offending parameter ("" for the map).
    pub fn from_value(v: &Value) -> Result<ArgExpect, (String, String)> {
        let o = v.as_object().ok_or_else(|| {
            (
                String::new(),
                format!(
                    "expected a map from parameter to matcher, found {}",
                    json_kind(v)
                ),
            )
        })?;
        o.iter()
            .map(|(k, m)| {
                Ok((
                    k.clone(),
                    Matcher::from_value(m).map_err(|e| (k.clone(), e))?,
                ))
            })
            .collect::<Result<_, _>>()
            .map(ArgExpect)
    }

    pub fn to_value(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, m)| (k.clone(), m.to_value()))
                .collect(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every expected parameter the call's arguments do not satisfy, in parameter order.
    pub fn check(&self, args: &Map<String, Value>) -> Vec<ArgMismatch> {
        self.0
            .iter()
            .filter(|(k, m)| !m.matches(args.get(*k)))
            .map(|(k, m)| ArgMismatch {
                param: k.clone(),
                expected: m.describe(),
                got: args.get(k).cloned(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(v: Value) -> Matcher {
        Matcher::from_value(&v).unwrap()
    }

    #[test]
    fn each_matcher_accepts_and_refuses() {
        let cases: [(Value, Value, Option<Value>); 14] = [
            (json!(3), json!(3.0), Some(json!(4))),
            (json!("a.txt"), json!("a.txt"), Some(json!("/a.txt"))),
            (json!([1, "x"]), json!([1.0, "x"]), Some(json!(["x", 1]))),
            (json!({"any_of": ["a", "b"]}), json!("b"), Some(json!("c"))),
            (
                json!({"regex": "^\\d{4}-\\d{2}$"}),
                json!("2026-12"),
                Some(json!("Dec 2026")),
            ),
            (json!({"regex": "x"}), json!("axb"), Some(json!(7))),
            (
                json!({"contains": "notes"}),
                json!("/data/notes/a"),
                Some(json!("/data/a")),
            ),
            (json!({"contains": 2}), json!([1, 2.0]), Some(json!([1]))),
            (json!({"type": "integer"}), json!(5.0), Some(json!(5.5))),
            (json!({"type": "string"}), json!(""), Some(json!(null))),
            (json!({"type": "null"}), json!(null), Some(json!(0))),
            (json!({"absent": true}), json!("ignored"), None),
            // An object literal with two keys is a literal, not a matcher.
            (
                json!({"regex": "a", "x": 1}),
                json!({"x": 1.0, "regex": "a"}),
                Some(json!({"regex": "a"})),
            ),
            (
                json!({"any_of": [{"regex": "a"}]}),
                json!({"regex": "a"}),
                Some(json!("a")),
            ),
        ];
        for (spec, good, bad) in cases {
            let matcher = m(spec.clone());
            assert_eq!(matcher.to_value(), spec, "round trip");
            if matches!(matcher, Matcher::Absent) {
                assert!(matcher.matches(None));
                assert!(!matcher.matches(Some(&good)));
                continue;
            }
            assert!(matcher.matches(Some(&good)), "{spec} should accept {good}");
            assert!(
                !matcher.matches(None),
                "{spec} should refuse a missing value"
            );
            if let Some(bad) = bad {
                assert!(!matcher.matches(Some(&bad)), "{spec} should refuse {bad}");
            }
        }
    }

    #[test]
    fn bad_matchers_say_what_was_expected() {
        for (spec, want) in [
            (
                json!({"any_of": []}),
                "`any_of`: expected a non-empty list, found array",
            ),
            (json!({"regex": "("}), "`regex`: regex parse error"),
            (
                json!({"regex": 1}),
                "`regex`: expected a string, found number",
            ),
            (
                json!({"absent": false}),
                "`absent`: the only value is `true`",
            ),
            (
                json!({"type": "float"}),
                "`type`: expected one of string, number",
            ),
            (
                json!({"regex": "a{1000}{1000}"}),
                "`regex`: Compiled regex exceeds size limit",
            ),
        ] {
            let e = Matcher::from_value(&spec).unwrap_err();
            assert!(e.starts_with(want), "{spec}: {e}");
        }
        let e = ArgExpect::from_value(&json!({"path": {"type": 3}})).unwrap_err();
        assert_eq!(e.0, "path");
        let e = ArgExpect::from_value(&json!(["path"])).unwrap_err();
        assert_eq!(
            e,
            (
                String::new(),
                "expected a map from parameter to matcher, found array".into()
            )
        );
    }

    #[test]
    fn a_subset_check_lists_each_unmet_parameter() {
        let want = ArgExpect::from_value(&json!({
            "path": "notes/a.txt",
            "head": {"type": "integer"},
            "force": {"absent": true}
        }))
        .unwrap();
        let ok = json!({"path": "notes/a.txt", "head": 5, "tail": 2});
        assert!(want.check(ok.as_object().unwrap()).is_empty());
        let bad = json!({"path": "/data/notes/a.txt", "force": true});
        assert_eq!(
            want.check(bad.as_object().unwrap()),
            vec![
                ArgMismatch {
                    param: "force".into(),
                    expected: "absent".into(),
                    got: Some(json!(true))
                },
                ArgMismatch {
                    param: "head".into(),
                    expected: "of type integer".into(),
                    got: None
                },
                ArgMismatch {
                    param: "path".into(),
                    expected: "\"notes/a.txt\"".into(),
                    got: Some(json!("/data/notes/a.txt"))
                },
            ]
        );
    }
}
