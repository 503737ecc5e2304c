//! Judging one answer: right, wrong, hallucinated, forbidden, no call, malformed, failed.

use serde::Serialize;

use crate::llm::Answer;
use crate::stats;
use crate::suite::{Case, Expect};

/// How one answer is judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
