//! Any bytes as a routing suite, read both as YAML (`fuzz.yaml`) and as JSONL (`fuzz.jsonl`) by
//! the one parser (`suite::parse_all`) and by `suite::parse`. Never a panic, and in bounded time
//! (libFuzzer's `-timeout`; .ci/fuzz.sh sets 10 s). The two never disagree: `parse` accepts
//! exactly when `parse_all` found cases and no problem, refuses with the first problem, and gives
//! the same cases. Problems come in file order; each entry is a case or a problem, never both;
//! duplicate ids are each reported. Every accepted case has an id, a prompt, a non-empty
//! expectation and no forbidden tool that is also expected — and written back as JSONL (or as
//! YAML, where YAML can hold the text) it reads back as the same case.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use driftgate::suite::{self, Case, Expect, Parsed};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// Distractor refs resolve against a directory holding one real tools file (`tools.json`), so
/// `{ref: tools.json}` and `{ref: "tools.json#get_appointment"}` seeds load real tools.
fn base_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("driftgate-fuzz-suite-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("tools.json"),
            include_str!("../../examples/calendar/tools.base.json"),
        )
        .unwrap();
        dir
    })
}

/// Where a problem or case sits, as a number that grows with the file: "line N" or "/cases/N".
fn position(at: &str) -> usize {
    at.strip_prefix("line ")
        .or_else(|| at.strip_prefix("/cases/"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("position {at:?}"))
}

fn check_parsed(p: &Parsed, source: &str) {
    for pr in &p.problems {
        assert!(
            ["invalid-suite", "invalid-case", "duplicate-id"].contains(&pr.code),
            "code {}",
            pr.code
        );
        assert!(
            pr.error.to_string().contains(source),
            "{source}: {}",
            pr.error
        );
        assert_eq!(pr.error.exit_code(), 2);
    }
    if let Some(whole) = p.problems.iter().find(|pr| pr.code == "invalid-suite") {
        assert!(whole.at.is_none());
        assert_eq!(p.problems.len(), 1, "a file refused whole has one problem");
        assert!(p.cases.is_empty() && p.raw.is_empty());
        return;
    }
    // File order.
    let at: Vec<usize> = p
        .problems
        .iter()
        .map(|pr| position(pr.at.as_deref().expect("a case problem says where")))
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] <= w[1]),
        "problems out of file order: {:?}",
        p.problems
            .iter()
            .map(|pr| pr.at.as_deref())
            .collect::<Vec<_>>()
    );
    let case_at: Vec<usize> = p.cases.iter().map(|(a, _)| position(a)).collect();
    assert!(
        case_at.windows(2).all(|w| w[0] < w[1]),
        "cases out of order"
    );
    // Each raw entry is a case or an invalid case, not both, not neither.
    for (a, _) in &p.raw {
        let is_case = p.cases.iter().any(|(c, _)| c == a);
        let invalid = p
            .problems
            .iter()
            .any(|pr| pr.code == "invalid-case" && pr.at.as_deref() == Some(a));
        assert!(is_case != invalid, "{a}: case {is_case}, invalid {invalid}");
    }
    let mut ids = std::collections::HashSet::new();
    let mut dups = 0;
    for (_, c) in &p.cases {
        check_case(c);
        if !ids.insert(c.id.as_str()) {
            dups += 1;
        }
    }
    let reported = p
        .problems
        .iter()
        .filter(|pr| pr.code == "duplicate-id")
        .count();
    assert_eq!(dups, reported, "every repeated id is reported once");
}

fn check_case(c: &Case) {
    assert!(!c.id.trim().is_empty(), "blank id");
    assert!(!c.prompt.trim().is_empty(), "blank prompt");
    if let Expect::Tools(t) = &c.expect {
        assert!(!t.is_empty(), "an empty expectation is `none`");
    }
    for n in &c.must_not_call {
        assert!(
            !c.expect.names().contains(n),
            "{n:?} expected and forbidden"
        );
    }
    for m in &c.history {
        assert!(m.role == "user" || m.role == "assistant", "role {}", m.role);
    }
}

/// A case as the suite format writes it.
fn case_value(c: &Case) -> Value {
    json!({
        "id": c.id,
        "history": c.history.iter().map(|m| json!({"role": m.role, "content": m.content})).collect::<Vec<_>>(),
        "prompt": c.prompt,
        "expect": match &c.expect {
            Expect::None => Value::from("none"),
            Expect::Tools(t) => Value::from(t.clone()),
        },
        "must_not_call": c.must_not_call,
        "distractors": c.distractors.iter().map(|t| t.to_value()).collect::<Vec<_>>(),
        "tags": c.tags,
    })
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Text YAML can carry in a double-quoted scalar unchanged: no C0/C1 control (but tab and
/// newline, which JSON escapes), no line or paragraph separator (YAML line breaks), no
/// non-character.
fn yaml_safe(s: &str) -> bool {
    !s.chars().any(|c| {
        (c.is_control() && c != '\t' && c != '\n')
            || matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
            )
    })
}

/// YAML refuses a mapping key longer than 1024 characters (an implicit key), which JSON allows.
fn short_keys(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.iter().all(short_keys),
        Value::Object(o) => o
            .iter()
            .all(|(k, x)| Value::from(k.as_str()).to_string().len() < 1000 && short_keys(x)),
        _ => true,
    }
}

fn round_trip(cases: &[Case]) {
    let values: Vec<Value> = cases.iter().map(case_value).collect();
    if values.iter().map(depth).max().unwrap_or(0) > 100 {
        return; // serde_json reads at most 128 levels
    }
    let jsonl: String = values.iter().map(|v| format!("{v}\n")).collect();
    let back = suite::parse(&jsonl, "rt.jsonl", base_dir())
        .unwrap_or_else(|e| panic!("accepted cases written as JSONL are refused: {e}"));
    assert_eq!(back.cases, cases, "JSONL round trip");
    let doc = json!({"version": 1, "cases": values});
    let yaml = doc.to_string();
    if depth(&doc) < suite::MAX_YAML_NESTING && yaml_safe(&yaml) && short_keys(&doc) {
        let back = suite::parse(&yaml, "rt.yaml", base_dir())
            .unwrap_or_else(|e| panic!("accepted cases written as YAML are refused: {e}"));
        assert_eq!(back.cases, cases, "YAML round trip");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // A distractor ref may name any file; keep the fuzzer off devices and the kernel's files
    // (`/dev/zero` reads 64 MiB, a terminal on stdin waits a minute).
    if ["/dev", "/proc", "/sys"].iter().any(|p| text.contains(p)) {
        return;
    }
    for source in ["fuzz.yaml", "fuzz.jsonl"] {
        let parsed = suite::parse_all(text, source, base_dir());
        check_parsed(&parsed, source);
        let first = parsed.problems.first().map(|p| p.error.to_string());
        let cases: Vec<Case> = parsed.cases.iter().map(|(_, c)| c.clone()).collect();
        match suite::parse(text, source, base_dir()) {
            Ok(s) => {
                assert!(first.is_none(), "parse accepted what parse_all refused");
                assert_eq!(s.cases, cases, "parse and parse_all disagree");
                assert_eq!(s.sha256, driftgate::canon::hash_str(text));
                round_trip(&s.cases);
            }
            Err(e) => match first {
                Some(f) => assert_eq!(e.to_string(), f, "parse refuses with the first problem"),
                None => assert!(cases.is_empty(), "parse refused a clean suite: {e}"),
            },
        }
    }
});
