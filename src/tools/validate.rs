//! A call's arguments checked against the offered tool's `inputSchema` (issue 12, item 1).
//!
//! Validation is the `jsonschema` crate's (drafts 4 to 2020-12, `$ref`/`$defs`, formats on; no
//! remote references: nothing is fetched), never a hand-written subset. Each problem is typed and
//! carries its JSON pointer. One problem JSON Schema allows is reported too: a parameter the
//! schema does not declare, when the schema leaves extra keys open — an agent writing `question`
//! for `query` passes validation and is still wrong; the nearest declared name is offered as
//! "did you mean" when it is close enough.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use jsonschema::error::ValidationErrorKind as K;

/// What is wrong with one argument (or the whole arguments object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum ArgProblemKind {
    MissingRequired,
    /// Not declared by the schema; `schema_allows` when extra keys are not forbidden.
    UnknownParameter {
        did_you_mean: Option<String>,
        schema_allows: bool,
    },
    WrongType,
    /// enum or const.
    NotAllowed,
    Pattern,
    Format,
    /// minimum/maximum/length/items/properties/multipleOf bounds.
    OutOfBounds,
    /// Anything else the schema rejects (anyOf, oneOf, not, …).
    Invalid,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArgProblem {
    #[serde(flatten)]
    pub kind: ArgProblemKind,
    /// JSON pointer into the arguments ("" is the arguments object itself).
    pub pointer: String,
    pub message: String,
}

/// A tool's schema, compiled once, checking any number of calls.
pub struct ArgsChecker {
    validator: jsonschema::Validator,
    schema: Value,
}

/// Names closer than this (normalised edit similarity) are offered as "did you mean".
const DID_YOU_MEAN: f64 = 0.6;

impl ArgsChecker {
    /// `Err` when the schema itself cannot be compiled (the message says why).
    pub fn new(schema: &Value) -> Result<ArgsChecker, String> {
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
            .map_err(|e| format!("inputSchema cannot be compiled: {e}"))?;
        Ok(ArgsChecker {
            validator,
            schema: schema.clone(),
        })
    }

    /// Every problem of `args`, schema errors first (in the validator's order), then undeclared
    /// parameters the schema let through.
    pub fn check(&self, args: &Value) -> Vec<ArgProblem> {
        let mut out: Vec<ArgProblem> = self
            .validator
            .iter_errors(args)
            .flat_map(|e| problems(&e, &self.schema))
            .collect();
        undeclared(&self.schema, args, "", &mut out);
        out
    }
}

fn problems(e: &jsonschema::ValidationError<'_>, schema: &Value) -> Vec<ArgProblem> {
    let at = e.instance_path().as_str().to_string();
    let message = e.to_string();
    let one = |kind| {
        vec![ArgProblem {
            kind,
            pointer: at.clone(),
            message: message.clone(),
        }]
    };
    match e.kind() {
        K::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            vec![ArgProblem {
                kind: ArgProblemKind::MissingRequired,
                pointer: format!("{at}/{}", escape(name)),
                message,
            }]
        }
        K::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|name| ArgProblem {
                kind: ArgProblemKind::UnknownParameter {
                    did_you_mean: nearest(name, declared_at(schema, &at)),
                    schema_allows: false,
                },
                pointer: format!("{at}/{}", escape(name)),
                message: format!("`{name}` is not a parameter of this tool"),
            })
            .collect(),
        K::Type { .. } => one(ArgProblemKind::WrongType),
        K::Enum { .. } | K::Constant { .. } => one(ArgProblemKind::NotAllowed),
        K::Pattern { .. } => one(ArgProblemKind::Pattern),
        K::Format { .. } => one(ArgProblemKind::Format),
        K::Minimum { .. }
        | K::Maximum { .. }
        | K::ExclusiveMinimum { .. }
        | K::ExclusiveMaximum { .. }
        | K::MinLength { .. }
        | K::MaxLength { .. }
        | K::MinItems { .. }
        | K::MaxItems { .. }
        | K::MinProperties { .. }
        | K::MaxProperties { .. }
        | K::MultipleOf { .. } => one(ArgProblemKind::OutOfBounds),
        _ => one(ArgProblemKind::Invalid),
    }
}

/// JSON pointer escaping of one segment.
fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The sub-schema that describes the object at instance pointer `at`, following `properties`
/// only (enough for parameter objects and their nested objects).
fn schema_at<'a>(schema: &'a Value, at: &str) -> Option<&'a Map<String, Value>> {
    let mut s = schema.as_object()?;
    for seg in at.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        s = s.get("properties")?.get(&seg)?.as_object()?;
    }
    Some(s)
}

fn declared_at<'a>(schema: &'a Value, at: &str) -> Vec<&'a str> {
    schema_at(schema, at)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Undeclared keys of objects whose schema declares `properties` and leaves extra keys open.
fn undeclared(schema: &Value, args: &Value, at: &str, out: &mut Vec<ArgProblem>) {
    let (Some(s), Some(obj)) = (schema_at(schema, at), args.as_object()) else {
        return;
    };
    let Some(props) = s.get("properties").and_then(Value::as_object) else {
        return;
    };
    let closed = s.get("additionalProperties") == Some(&Value::Bool(false));
    for (k, v) in obj {
        let here = format!("{at}/{}", escape(k));
        if props.contains_key(k) {
            undeclared(schema, v, &here, out);
        } else if !closed {
            let names: Vec<&str> = props.keys().map(String::as_str).collect();
            out.push(ArgProblem {
                kind: ArgProblemKind::UnknownParameter {
                    did_you_mean: nearest(k, names),
                    schema_allows: true,
                },
                pointer: here,
                message: format!("`{k}` is not a declared parameter of this tool"),
            });
        }
    }
}

/// Names compared with case, `_` and `-` folded away (`paperId` ~ `paper_id`).
fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The declared name nearest to `name`, if it is close enough to be a slip rather than a
/// different word.
fn nearest(name: &str, declared: Vec<&str>) -> Option<String> {
    let f = fold(name);
    declared
        .into_iter()
        .map(|d| (strsim::normalized_levenshtein(&f, &fold(d)), d))
        .filter(|(score, _)| *score >= DID_YOU_MEAN)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, d)| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(schema: Value, args: Value) -> Vec<(ArgProblemKind, String)> {
        ArgsChecker::new(&schema)
            .unwrap()
            .check(&args)
            .into_iter()
            .map(|p| (p.kind, p.pointer))
            .collect()
    }

    fn search() -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "paper_id": {"type": "string", "pattern": "^[0-9]{4}\\.[0-9]{5}$"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "sort": {"enum": ["relevance", "date"]},
                "since": {"type": "string", "format": "date"},
                "filter": {
                    "type": "object",
                    "properties": {"author": {"type": "string"}},
                    "additionalProperties": false
                }
            },
            "required": ["query"]
        })
    }

    #[test]
    fn a_valid_call_has_no_problem() {
        assert_eq!(
            kinds(
                search(),
                json!({"query": "attention", "limit": 5, "since": "2024-01-31"})
            ),
            []
        );
    }

    #[test]
    fn each_kind_of_bad_call_is_named_with_its_pointer() {
        use ArgProblemKind::*;
        assert_eq!(
            kinds(search(), json!({})),
            [(MissingRequired, "/query".into())]
        );
        assert_eq!(
            kinds(search(), json!({"query": "q", "limit": "five"})),
            [(WrongType, "/limit".into())]
        );
        assert_eq!(
            kinds(search(), json!({"query": "q", "limit": 500})),
            [(OutOfBounds, "/limit".into())]
        );
        assert_eq!(
            kinds(search(), json!({"query": "q", "sort": "newest"})),
            [(NotAllowed, "/sort".into())]
        );
        assert_eq!(
            kinds(search(), json!({"query": "q", "paper_id": "abc"})),
            [(Pattern, "/paper_id".into())]
        );
        assert_eq!(
            kinds(search(), json!({"query": "q", "since": "last week"})),
            [(Format, "/since".into())]
        );
        assert_eq!(
            kinds(search(), json!("just text")),
            [(WrongType, "".into())]
        );
    }

    #[test]
    fn invented_parameter_names_are_unknown_with_a_near_declared_name() {
        let got = kinds(
            search(),
            json!({"question": "q", "paperId": "2401.12345", "query": "x"}),
        );
        assert_eq!(
            got,
            [
                (
                    ArgProblemKind::UnknownParameter {
                        did_you_mean: None,
                        schema_allows: true
                    },
                    "/question".into()
                ),
                (
                    ArgProblemKind::UnknownParameter {
                        did_you_mean: Some("paper_id".into()),
                        schema_allows: true
                    },
                    "/paperId".into()
                ),
            ]
        );
        // Where the schema forbids extra keys, the validator's own finding, with the suggestion.
        let got = kinds(
            search(),
            json!({"query": "q", "filter": {"authr": "Vaswani"}}),
        );
        assert_eq!(
            got,
            [(
                ArgProblemKind::UnknownParameter {
                    did_you_mean: Some("author".into()),
                    schema_allows: false
                },
                "/filter/authr".into()
            )]
        );
    }

    #[test]
    fn refs_and_drafts_are_the_validators() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "definitions": {"n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}},
            "properties": {"n": {"$ref": "#/definitions/n"}},
            "required": ["n"]
        });
        assert_eq!(kinds(schema.clone(), json!({"n": 1})), []);
        assert_eq!(
            kinds(schema, json!({"n": 0})),
            [(ArgProblemKind::OutOfBounds, "/n".into())]
        );
        let defs = json!({
            "type": "object",
            "$defs": {"path": {"type": "string"}},
            "properties": {"path": {"$ref": "#/$defs/path"}}
        });
        assert_eq!(
            kinds(defs, json!({"path": 7})),
            [(ArgProblemKind::WrongType, "/path".into())]
        );
    }

    #[test]
    fn a_schema_that_cannot_compile_is_said() {
        let e = ArgsChecker::new(&json!({"type": 7})).err().unwrap();
        assert!(e.starts_with("inputSchema cannot be compiled"), "{e}");
        // A remote reference is not fetched.
        assert!(ArgsChecker::new(&json!({"$ref": "https://example.com/s.json"})).is_err());
    }
}
