//! `driftgate suite check --tools T SUITE`: is this suite able to measure these tools?
//!
//! Unlike loading a suite for `check` (which stops at the first problem), this lists every
//! problem: malformed cases, duplicate ids, expected tools the server does not have, cases no
//! tool can satisfy, the same prompt expected to go two ways, tools no case covers. Both read the
//! file with the one parser, `suite::parse_all`. Errors make the suite unusable (exit 1);
//! warnings are worth a look (exit 0).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::suite::{self, Case, Expect};
use crate::text::terms::text_terms;
use crate::tools::ToolSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Finding {
    pub level: Level,
    /// Stable machine-readable kind: `invalid-suite`, `invalid-case`, `duplicate-id`,
    /// `unsatisfiable`, `contradictory`, `unknown-expected-tool`, `unknown-must-not-call`,
    /// `duplicate-prompt`, `uncovered-tool`, `no-none-case`, `impossible-args`, `unreviewed`.
    pub code: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SuiteCheck {
    pub schema_version: u32,
    pub command: &'static str,
    pub suite: String,
    pub tools: String,
    pub tool_count: usize,
    /// Cases that parsed.
    pub cases: usize,
    pub errors: usize,
    pub warnings: usize,
    pub findings: Vec<Finding>,
    /// What this suite can see: the smallest true drop detected with 80% power at the gate's
    /// default thresholds and an assumed base accuracy ([`crate::stats::min_detectable_drop`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_detectable_drop: Option<DetectableDrop>,
    /// How much the prompts are worded like their tools' descriptions; `None` when no case
    /// expects a tool the server has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description_overlap: Option<Overlap>,
}

/// Prompt–description word overlap: of a prompt's content words (stemmed, stop words dropped),
/// the share that its expected tool's description also uses (the best expected tool when there
/// are several). A suite that restates the descriptions rewards the base wording and penalises
/// any rewrite: it measures lexical overlap, not routing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Overlap {
    /// Mean over the measured cases, 0–1.
    pub mean: f64,
    /// Cases measured: those expecting a tool of the server, with a content word in the prompt.
    pub cases: usize,
    /// Cases at or above [`ECHO_OVERLAP`].
    pub echoing: usize,
}

/// A prompt sharing this much of its wording with its tool's description restates it.
pub const ECHO_OVERLAP: f64 = 0.5;

/// The overlap of one prompt with one description, `None` when the prompt has no content word.
pub fn overlap(prompt: &str, description: &str) -> Option<f64> {
    let p: BTreeSet<String> = text_terms(prompt).into_iter().collect();
    if p.is_empty() {
        return None;
    }
    let d: BTreeSet<String> = text_terms(description).into_iter().collect();
    Some(p.intersection(&d).count() as f64 / p.len() as f64)
}

/// The suite's [`Overlap`] against `tools`.
pub fn description_overlap(cases: &[Case], tools: &ToolSet) -> Option<Overlap> {
    overlap_of(
        cases.iter().map(|c| (c.prompt.as_str(), c.expect.names())),
        tools,
    )
}

/// The [`Overlap`] of (prompt, expected tools) pairs: a suite's cases or a draft's.
pub fn overlap_of<'a>(
    cases: impl IntoIterator<Item = (&'a str, &'a [String])>,
    tools: &ToolSet,
) -> Option<Overlap> {
    let per_case: Vec<f64> = cases
        .into_iter()
        .filter_map(|(prompt, expected)| {
            expected
                .iter()
                .filter_map(|n| tools.get(n))
                .filter_map(|t| overlap(prompt, t.description_text()))
                .reduce(f64::max)
        })
        .collect();
    (!per_case.is_empty()).then(|| Overlap {
        mean: per_case.iter().sum::<f64>() / per_case.len() as f64,
        cases: per_case.len(),
        echoing: per_case.iter().filter(|&&o| o >= ECHO_OVERLAP).count(),
    })
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct DetectableDrop {
    pub drop: f64,
    pub assumed_base_accuracy: f64,
}

fn finding(level: Level, code: &'static str, case: Option<&str>, message: String) -> Finding {
    Finding {
        level,
        code,
        case: case.map(String::from),
        message,
    }
}

/// Check suite text against `tools`. `base_dir` resolves distractor refs.
pub fn check_text(
    text: &str,
    source: &str,
    base_dir: &Path,
    tools: &ToolSet,
    tools_label: &str,
) -> SuiteCheck {
    let mut findings = Vec::new();
    let parsed = suite::parse_all(text, source, base_dir);
    // Duplicate ids, all of them, with every position (cases that did not parse included).
    let mut positions: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (at, v) in &parsed.raw {
        let id = match v.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        positions.entry(id).or_default().push(at);
    }
    for (id, at) in &positions {
        if at.len() > 1 {
            findings.push(finding(
                Level::Error,
                "duplicate-id",
                Some(id),
                format!(
                    "id used {} times ({}); ids must be unique and stable",
                    at.len(),
                    at.join(", ")
                ),
            ));
        }
    }
    let strip = |e: &crate::error::Error| {
        let msg = e.to_string();
        msg.strip_prefix(&format!("{source}: "))
            .unwrap_or(&msg)
            .to_string()
    };
    for p in &parsed.problems {
        match (p.code, &p.error) {
            // Reported above, with every position.
            ("duplicate-id", _) => {}
            (_, crate::error::Error::Json { line, message, .. }) => findings.push(finding(
                Level::Error,
                "invalid-case",
                None,
                format!("line {line}: invalid JSON: {message}"),
            )),
            (code, e) => findings.push(finding(
                Level::Error,
                code,
                None,
                match &p.at {
                    Some(at) if !strip(e).starts_with(at.as_str()) => {
                        format!("{at}: {}", strip(e))
                    }
                    _ => strip(e),
                },
            )),
        }
    }
    if !parsed.unreviewed.is_empty() {
        findings.push(unreviewed(&parsed.unreviewed));
    }
    let cases: Vec<Case> = parsed.cases.into_iter().map(|(_, c)| c).collect();
    if cases.is_empty() && findings.is_empty() {
        findings.push(finding(
            Level::Error,
            "invalid-suite",
            None,
            "the suite has no cases".into(),
        ));
    }
    check_cases(&cases, tools, &mut findings);
    let description_overlap = description_overlap(&cases, tools);
    findings.sort_by_key(|f| (f.level == Level::Warning, f.case.is_none()));
    let errors = findings.iter().filter(|f| f.level == Level::Error).count();
    SuiteCheck {
        schema_version: 1,
        command: "suite check",
        suite: source.to_string(),
        tools: tools_label.to_string(),
        tool_count: tools.len(),
        cases: cases.len(),
        errors,
        warnings: findings.len() - errors,
        findings,
        min_detectable_drop: None,
        description_overlap,
    }
}

fn check_cases(cases: &[Case], tools: &ToolSet, findings: &mut Vec<Finding>) {
    if cases.is_empty() {
        return;
    }
    let server: BTreeSet<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    for c in cases {
        let offered: BTreeSet<&str> = server
            .iter()
            .copied()
            .chain(c.distractors.iter().map(|t| t.name.as_str()))
            .collect();
        let unknown: Vec<&str> = c
            .expect
            .names()
            .iter()
            .map(String::as_str)
            .filter(|n| !offered.contains(n))
            .collect();
        if !unknown.is_empty() && unknown.len() == c.expect.names().len() {
            findings.push(finding(
                Level::Error,
                "unsatisfiable",
                Some(&c.id),
                format!(
                    "no tool can satisfy it: expected {} not offered{}",
                    unknown.join(", "),
                    suggestion(&unknown, &server)
                ),
            ));
        } else if !unknown.is_empty() {
            findings.push(finding(
                Level::Warning,
                "unknown-expected-tool",
                Some(&c.id),
                format!(
                    "expects {} which the tools do not have (another expected name is offered){}",
                    unknown.join(", "),
                    suggestion(&unknown, &server)
                ),
            ));
        }
        for p in suite::case_args_problems(c, tools) {
            findings.push(finding(
                Level::Error,
                "impossible-args",
                Some(&c.id),
                format!("{p}: no call can meet it"),
            ));
        }
        let unknown_mnc: Vec<&str> = c
            .must_not_call
            .iter()
            .map(String::as_str)
            .filter(|n| !offered.contains(n))
            .collect();
        if !unknown_mnc.is_empty() {
            findings.push(finding(
                Level::Warning,
                "unknown-must-not-call",
                Some(&c.id),
                format!(
                    "must_not_call names {} which is not offered, so the rule can never fire",
                    unknown_mnc.join(", ")
                ),
            ));
        }
    }
    same_questions(cases, findings);
    let covered: BTreeSet<&str> = cases
        .iter()
        .flat_map(|c| c.expect.names().iter().map(String::as_str))
        .collect();
    for t in &tools.tools {
        if !covered.contains(t.name.as_str()) {
            findings.push(finding(
                Level::Warning,
                "uncovered-tool",
                None,
                format!(
                    "no case expects `{}`: a drift in it cannot lower routing accuracy",
                    t.name
                ),
            ));
        }
    }
    if !cases.iter().any(|c| c.expect == Expect::None) {
        findings.push(finding(
            Level::Warning,
            "no-none-case",
            None,
            "no case expects `none`: a router that always calls some tool is never penalised"
                .into(),
        ));
    }
}

/// The same question (history + prompt) asked twice: contradictory when the cases expect
/// disjoint answers, a duplicate otherwise.
fn same_questions(cases: &[Case], findings: &mut Vec<Finding>) {
    let norm = |c: &Case| -> String {
        let mut k: Vec<String> = c
            .history
            .iter()
            .map(|m| format!("{}:{}", m.role, m.content.to_lowercase()))
            .collect();
        k.push(
            c.prompt
                .to_lowercase()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        );
        k.join("\n")
    };
    let mut by_prompt: BTreeMap<String, Vec<&Case>> = BTreeMap::new();
    for c in cases {
        by_prompt.entry(norm(c)).or_default().push(c);
    }
    for group in by_prompt.values().filter(|g| g.len() > 1) {
        let ids: Vec<&str> = group.iter().map(|c| c.id.as_str()).collect();
        let disjoint = group.iter().enumerate().any(|(i, a)| {
            group[i + 1..].iter().any(|b| match (&a.expect, &b.expect) {
                (Expect::None, Expect::None) => false,
                (Expect::Tools(x), Expect::Tools(y)) => !x.iter().any(|n| y.contains(n)),
                _ => true,
            })
        });
        if disjoint {
            findings.push(finding(
                Level::Error,
                "contradictory",
                Some(ids[0]),
                format!(
                    "the same prompt is expected to go different ways in {} ({}); no router can satisfy both",
                    ids.join(", "),
                    group.iter().map(|c| c.expect.label()).collect::<Vec<_>>().join(" vs ")
                ),
            ));
        } else {
            findings.push(finding(
                Level::Warning,
                "duplicate-prompt",
                Some(ids[0]),
                format!(
                    "the same prompt appears in {}; it counts twice",
                    ids.join(", ")
                ),
            ));
        }
    }
}

/// Ids listed by name in the `unreviewed` warning; the rest are counted.
const UNREVIEWED_NAMED: usize = 20;

/// One warning for every case still marked `review: true`: how many, and which.
fn unreviewed(ids: &[String]) -> Finding {
    let mut named: Vec<&str> = ids
        .iter()
        .take(UNREVIEWED_NAMED)
        .map(String::as_str)
        .collect();
    let more = format!("and {} more", ids.len().saturating_sub(UNREVIEWED_NAMED));
    if ids.len() > UNREVIEWED_NAMED {
        named.push(&more);
    }
    finding(
        Level::Warning,
        "unreviewed",
        None,
        format!(
            "{} case{} marked `review: true` ({}): the expectation is a proposal (the production model's call); confirm or fix each, then delete `review` — `driftgate check` refuses the suite until then unless --allow-unreviewed",
            ids.len(),
            if ids.len() == 1 { " is" } else { "s are" },
            named.join(", ")
        ),
    )
}

/// " (did you mean `x`?)" for the closest server name to the first unknown one.
fn suggestion(unknown: &[&str], server: &BTreeSet<&str>) -> String {
    let Some(u) = unknown.first() else {
        return String::new();
    };
    server
        .iter()
        .map(|s| (strsim::levenshtein(s, u), *s))
        .filter(|(d, _)| *d <= u.len().max(3) / 3)
        .min()
        .map(|(_, s)| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::from_array(
            &[
                json!({"name": "read_file"}),
                json!({"name": "write_file"}),
                json!({"name": "list_directory"}),
            ],
            "t",
            "",
        )
        .unwrap()
    }

    fn codes(r: &SuiteCheck) -> Vec<(&'static str, Option<&str>)> {
        r.findings
            .iter()
            .map(|f| (f.code, f.case.as_deref()))
            .collect()
    }

    #[test]
    fn a_clean_suite_has_no_findings() {
        let text = "- {id: a, prompt: read x, expect: read_file}\n- {id: b, prompt: write x, expect: write_file}\n- {id: c, prompt: ls, expect: list_directory}\n- {id: d, prompt: hi, expect: none}\n";
        let r = check_text(text, "s.yaml", Path::new("."), &tools(), "t.json");
        assert!(r.findings.is_empty(), "{:?}", r.findings);
        assert_eq!((r.cases, r.errors), (4, 0));
    }

    #[test]
    fn every_problem_is_listed_not_just_the_first() {
        let text = "\
- {id: a, prompt: read x, expect: read_fil}
- {id: a, prompt: other, expect: write_file}
- {id: b, prompt: Read  X, expect: write_file}
- {id: c, prompt: both, expect: [read_file, gone_tool], must_not_call: [nuke]}
- {id: d, prompt: x}
- {id: e, prompt: ok, expect: read_file, distractors: [{name: extra}]}
- {id: f, prompt: dup, expect: read_file}
- {id: g, prompt: DUP, expect: [read_file, write_file]}
";
        let r = check_text(text, "s.yaml", Path::new("."), &tools(), "t.json");
        assert_eq!(
            codes(&r),
            [
                ("duplicate-id", Some("a")),
                ("unsatisfiable", Some("a")),
                ("contradictory", Some("a")),
                ("invalid-case", None),
                ("unknown-expected-tool", Some("c")),
                ("unknown-must-not-call", Some("c")),
                ("duplicate-prompt", Some("f")),
                ("uncovered-tool", None),
                ("no-none-case", None),
            ],
            "{:#?}",
            r.findings
        );
        assert_eq!(r.errors, 4);
        let f = &r.findings;
        assert!(
            f[0].message.contains("/cases/0, /cases/1"),
            "{}",
            f[0].message
        );
        assert!(
            f[1].message.contains("(did you mean `read_file`?)"),
            "{}",
            f[1].message
        );
        assert!(
            f[3].message
                .starts_with("/cases/4: case \"d\": `expect`: missing"),
            "{}",
            f[3].message
        );
        assert!(f[7].message.contains("`list_directory`"));
    }

    #[test]
    fn unreviewed_cases_are_one_warning_with_their_count_and_ids() {
        let text = "- {id: a, prompt: read x, expect: read_file, review: true}\n- {id: b, prompt: write x, expect: write_file}\n- {id: c, prompt: ls, expect: list_directory, review: true}\n- {id: d, prompt: hi, expect: none}\n";
        let r = check_text(text, "s.yaml", Path::new("."), &tools(), "t.json");
        assert_eq!(codes(&r), [("unreviewed", None)]);
        assert_eq!((r.errors, r.warnings), (0, 1));
        assert!(
            r.findings[0]
                .message
                .starts_with("2 cases are marked `review: true` (a, c):"),
            "{}",
            r.findings[0].message
        );
        let many: String = (0..25)
            .map(|i| format!("- {{id: c{i}, prompt: p{i}, expect: read_file, review: true}}\n"))
            .collect();
        let r = check_text(&many, "s.yaml", Path::new("."), &tools(), "t.json");
        let f = r.findings.iter().find(|f| f.code == "unreviewed").unwrap();
        assert!(f.message.contains("c19, and 5 more)"), "{}", f.message);
    }

    #[test]
    fn top_level_and_jsonl_problems_are_reported() {
        let r = check_text("cases: 5\n", "s.yaml", Path::new("."), &tools(), "t");
        assert_eq!(codes(&r), [("invalid-suite", None)]);
        let r = check_text(
            "{\"id\":\"a\",\"prompt\":\"p\",\"expect\":\"read_file\"}\n{not json\n",
            "s.jsonl",
            Path::new("."),
            &tools(),
            "t",
        );
        assert_eq!(r.findings[0].code, "invalid-case");
        assert!(r.findings[0].message.starts_with("line 2: invalid JSON"));
    }

    #[test]
    fn overlap_is_the_share_of_prompt_words_the_description_uses() {
        let d = "Read the complete contents of a file from the file system.";
        // read, complete, content, file of read, complete, content, file: a restatement.
        assert_eq!(
            overlap("Can you read the complete contents of a file?", d),
            Some(1.0)
        );
        // read of please, read, note, todo, txt.
        assert_eq!(overlap("Please read notes/todo.txt", d), Some(0.2));
        assert_eq!(overlap("what's in my shopping list", d), Some(0.0));
        assert_eq!(overlap("?!", d), None);

        let set = ToolSet::from_array(
            &[
                json!({"name": "read_file", "description": d}),
                json!({"name": "list_directory", "description": "List a directory."}),
            ],
            "t",
            "",
        )
        .unwrap();
        let text = "- {id: a, prompt: Read the complete contents of a file, expect: read_file}\n- {id: b, prompt: what is in the notes folder, expect: [list_directory, read_file]}\n- {id: c, prompt: hi there, expect: none}\n- {id: d, prompt: do it, expect: write_file}\n";
        let r = check_text(text, "s.yaml", Path::new("."), &set, "t.json");
        // a: 1.0; b: its best expected tool, 0 either way; c (none) and d (no such tool) unmeasured.
        assert_eq!(
            r.description_overlap,
            Some(Overlap {
                mean: 0.5,
                cases: 2,
                echoing: 1
            })
        );
    }
}
