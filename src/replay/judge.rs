//! Judging one answer: right, wrong, hallucinated, forbidden, no call, malformed, failed — and
//! then the call itself: its arguments against the tool's schema and the case's expected `args`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::llm::Answer;
use crate::stats;
use crate::suite::expect::ArgMismatch;
use crate::suite::{Case, Expect};
use crate::tools::validate::{ArgProblem, ArgProblemKind, ArgsChecker};

/// How one answer is judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outcome {
    Correct {
        chosen: Option<String>,
    },
    WrongTool {
        chosen: String,
    },
    NoCall,
    /// A tool the case forbids: a hard failure.
    MustNotCall {
        chosen: String,
    },
    /// Called a name that was not offered; `nearest` is the closest offered name.
    Hallucinated {
        name: String,
        nearest: Option<String>,
    },
    Malformed {
        detail: String,
    },
    /// No answer after retries: the measurement is incomplete.
    Error {
        message: String,
    },
}

impl Outcome {
    pub fn is_correct(&self) -> bool {
        matches!(self, Outcome::Correct { .. })
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error { .. })
    }
    /// What was called, for flip lists and confusion tables ("(none)" for no call).
    pub fn choice(&self) -> String {
        match self {
            Outcome::Correct { chosen: Some(c) }
            | Outcome::WrongTool { chosen: c }
            | Outcome::MustNotCall { chosen: c } => c.clone(),
            Outcome::Correct { chosen: None } | Outcome::NoCall => stats::NO_CALL.into(),
            Outcome::Hallucinated {
                name,
                nearest: Some(n),
            } => format!("{name} (not offered; nearest: {n})"),
            Outcome::Hallucinated { name, .. } => format!("{name} (not offered)"),
            Outcome::Malformed { .. } => "(malformed)".into(),
            Outcome::Error { .. } => "(error)".into(),
        }
    }
    /// The offered tool that was called, if one was.
    pub fn called(&self) -> Option<&str> {
        match self {
            Outcome::Correct { chosen: Some(c) }
            | Outcome::WrongTool { chosen: c }
            | Outcome::MustNotCall { chosen: c } => Some(c),
            _ => None,
        }
    }
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Correct { .. } => "correct",
            Outcome::WrongTool { .. } => "wrong tool",
            Outcome::NoCall => "no call",
            Outcome::MustNotCall { .. } => "must-not-call hit",
            Outcome::Hallucinated { .. } => "hallucinated name",
            Outcome::Malformed { .. } => "malformed",
            Outcome::Error { .. } => "error",
        }
    }
}

/// How one call is judged once its routing is known: the call is correct when the right tool
/// (or rightly none) was called with arguments its schema accepts and the case expects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CallOutcome {
    Correct,
    /// The arguments break the tool's schema (and maybe the case's `args` too).
    InvalidArguments {
        problems: Vec<ArgProblem>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        mismatches: Vec<ArgMismatch>,
    },
    /// Valid for the schema, but not what the case expects.
    WrongArguments {
        mismatches: Vec<ArgMismatch>,
    },
    /// The routing was wrong, so the call is.
    WrongRoute,
    /// The router produces no arguments (the semantic router).
    NotMeasured,
}

impl CallOutcome {
    pub fn is_correct(&self) -> bool {
        matches!(self, CallOutcome::Correct)
    }
    pub fn label(&self) -> &'static str {
        match self {
            CallOutcome::Correct => "correct",
            CallOutcome::InvalidArguments { .. } => "invalid arguments",
            CallOutcome::WrongArguments { .. } => "wrong arguments",
            CallOutcome::WrongRoute => "wrong route",
            CallOutcome::NotMeasured => "not measured",
        }
    }
    /// The first problem in words, for flip lists: "`path`: expected \"a.txt\", got \"/a.txt\"".
    pub fn detail(&self) -> Option<String> {
        let mismatch = |m: &ArgMismatch| match &m.got {
            Some(g) => format!("`{}`: expected {}, got {g}", m.param, m.expected),
            None => format!("`{}`: expected {}, missing", m.param, m.expected),
        };
        match self {
            CallOutcome::InvalidArguments { problems, .. } => problems.first().map(|p| {
                let at = if p.pointer.is_empty() {
                    "arguments"
                } else {
                    &p.pointer
                };
                format!("{at}: {}", p.message)
            }),
            CallOutcome::WrongArguments { mismatches } => mismatches.first().map(mismatch),
            _ => None,
        }
    }
}

/// Parameter names a call used that its tool does not declare (a pointer below the top level for
/// a nested one), each with the nearest declared name.
pub fn invented(problems: &[ArgProblem]) -> Vec<(String, Option<String>)> {
    problems
        .iter()
        .filter_map(|p| match &p.kind {
            ArgProblemKind::UnknownParameter { did_you_mean, .. } => {
                let top = p.pointer.matches('/').count() == 1;
                let name = if top {
                    p.pointer[1..].replace("~1", "/").replace("~0", "~")
                } else {
                    p.pointer.clone()
                };
                Some((name, did_you_mean.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Judge a call whose routing is `outcome`. `checker` is the called tool's compiled schema (`Err`:
/// it does not compile, which no call can satisfy).
pub fn judge_call(
    case: &Case,
    outcome: &Outcome,
    answer: &Answer,
    checker: Option<&Result<ArgsChecker, String>>,
) -> CallOutcome {
    match outcome {
        Outcome::Correct { chosen: None } => CallOutcome::Correct,
        Outcome::Correct { chosen: Some(_) } => {
            let empty = Value::Object(Map::new());
            let args = match answer {
                Answer::Call {
                    arguments: Some(a), ..
                } => a,
                _ => &empty,
            };
            let problems = check_schema(args, checker);
            let mismatches = match (&case.args, args.as_object()) {
                (Some(want), Some(o)) => want.check(o),
                (Some(want), None) => want.check(&Map::new()),
                (None, _) => Vec::new(),
            };
            if !problems.is_empty() {
                CallOutcome::InvalidArguments {
                    problems,
                    mismatches,
                }
            } else if !mismatches.is_empty() {
                CallOutcome::WrongArguments { mismatches }
            } else {
                CallOutcome::Correct
            }
        }
        _ => CallOutcome::WrongRoute,
    }
}

/// The schema's problems with `args` (none when no schema is known for the tool).
pub fn check_schema(
    args: &Value,
    checker: Option<&Result<ArgsChecker, String>>,
) -> Vec<ArgProblem> {
    match checker {
        Some(Ok(c)) => c.check(args),
        Some(Err(e)) => vec![ArgProblem {
            kind: ArgProblemKind::Invalid,
            pointer: String::new(),
            message: e.clone(),
        }],
        None => Vec::new(),
    }
}

/// Judge one answer against a case and the names that were offered.
pub fn classify(case: &Case, offered: &[&str], answer: &Answer) -> Outcome {
    match answer {
        Answer::Malformed { detail } => Outcome::Malformed {
            detail: detail.clone(),
        },
        Answer::NoCall { .. } => match case.expect {
            Expect::None => Outcome::Correct { chosen: None },
            Expect::Tools(_) => Outcome::NoCall,
        },
        Answer::Call {
            name,
            arguments,
            raw_arguments,
            others,
        } => {
            // A forbidden tool anywhere in the answer fails the case: the agent would run it.
            if let Some(forbidden) = std::iter::once(name)
                .chain(others)
                .find(|n| case.must_not_call.contains(*n))
            {
                return Outcome::MustNotCall {
                    chosen: forbidden.clone(),
                };
            }
            if !offered.contains(&name.as_str()) {
                let nearest = offered
                    .iter()
                    .min_by_key(|o| strsim::levenshtein(o, name))
                    .map(|s| s.to_string());
                return Outcome::Hallucinated {
                    name: name.clone(),
                    nearest,
                };
            }
            if arguments.is_none() && !raw_arguments.trim().is_empty() {
                return Outcome::Malformed {
                    detail: format!("arguments for `{name}` are not a JSON object"),
                };
            }
            if case.expect.names().contains(name) {
                Outcome::Correct {
                    chosen: Some(name.clone()),
                }
            } else {
                Outcome::WrongTool {
                    chosen: name.clone(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(yaml: &str) -> Case {
        crate::suite::parse(yaml, "s.yaml", std::path::Path::new("."))
            .unwrap()
            .cases
            .remove(0)
    }

    fn call(name: &str, args: serde_json::Value) -> Answer {
        Answer::Call {
            name: name.into(),
            raw_arguments: args.to_string(),
            arguments: Some(args),
            others: Vec::new(),
        }
    }

    #[test]
    fn a_call_is_judged_by_schema_then_by_the_cases_args() {
        use serde_json::json;
        let c = case("- {id: a, prompt: p, expect: read, args: {path: notes/a.txt}}\n");
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]});
        let checker = Some(ArgsChecker::new(&schema));
        let right = Outcome::Correct {
            chosen: Some("read".into()),
        };
        let judge = |args| judge_call(&c, &right, &call("read", args), checker.as_ref());
        assert_eq!(
            judge(json!({"path": "notes/a.txt", "head": 3})),
            CallOutcome::Correct
        );
        assert_eq!(
            judge(json!({"path": "/data/notes/a.txt"})),
            CallOutcome::WrongArguments {
                mismatches: vec![ArgMismatch {
                    param: "path".into(),
                    expected: "\"notes/a.txt\"".into(),
                    got: Some(json!("/data/notes/a.txt")),
                }]
            }
        );
        // Schema problems come first and keep the expected-args mismatches beside them.
        let CallOutcome::InvalidArguments {
            problems,
            mismatches,
        } = judge(json!({"file": "notes/a.txt"}))
        else {
            panic!("not invalid")
        };
        let kinds: Vec<_> = problems
            .iter()
            .map(|p| (&p.kind, p.pointer.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                (&ArgProblemKind::MissingRequired, "/path"),
                (
                    &ArgProblemKind::UnknownParameter {
                        did_you_mean: None,
                        schema_allows: true
                    },
                    "/file"
                ),
            ]
        );
        assert_eq!(mismatches.len(), 1);
        assert_eq!(invented(&problems), [("file".to_string(), None)]);
        // No arguments at all is an empty object: missing required.
        let bare = Answer::Call {
            name: "read".into(),
            arguments: None,
            raw_arguments: String::new(),
            others: Vec::new(),
        };
        assert!(matches!(
            judge_call(&c, &right, &bare, checker.as_ref()),
            CallOutcome::InvalidArguments { .. }
        ));
        // A schema that does not compile accepts no call; a wrong route is never a right call;
        // a right "no call" is a right call.
        let broken = Some(Err("inputSchema cannot be compiled: x".to_string()));
        assert!(matches!(
            judge_call(
                &c,
                &right,
                &call("read", json!({"path": "notes/a.txt"})),
                broken.as_ref()
            ),
            CallOutcome::InvalidArguments { .. }
        ));
        let wrong = Outcome::WrongTool {
            chosen: "write".into(),
        };
        assert_eq!(
            judge_call(&c, &wrong, &call("write", json!({})), checker.as_ref()),
            CallOutcome::WrongRoute
        );
        let none = case("- {id: n, prompt: p, expect: none}\n");
        let text = Answer::NoCall { text: "hi".into() };
        assert_eq!(
            judge_call(&none, &Outcome::Correct { chosen: None }, &text, None),
            CallOutcome::Correct
        );
    }

    #[test]
    fn a_forbidden_tool_in_any_call_fails_the_case() {
        let suite = crate::suite::parse(
            "- {id: a, prompt: p, expect: read, must_not_call: [delete]}\n",
            "s.yaml",
            std::path::Path::new("."),
        )
        .unwrap();
        let case = &suite.cases[0];
        let call = |others: &[&str]| Answer::Call {
            name: "read".into(),
            arguments: Some(serde_json::json!({})),
            raw_arguments: "{}".into(),
            others: others.iter().map(|s| s.to_string()).collect(),
        };
        let offered = ["read", "delete"];
        assert!(classify(case, &offered, &call(&[])).is_correct());
        assert_eq!(
            classify(case, &offered, &call(&["read", "delete"])),
            Outcome::MustNotCall {
                chosen: "delete".into()
            }
        );
    }
}
