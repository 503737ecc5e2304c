//! The JSON reports' published schemas: `docs/report.schema.json` (check, diff) and
//! `docs/lint.schema.json` are the ones derived from the report types (run with
//! `DRIFTGATE_BLESS=1` to rewrite them after a change), and real reports of every command match
//! theirs. Other tests check their own reports against them too (calls, GitHub).

use serde_json::{Value, json};

use crate::support::cli;
use crate::support::reports::{
    FIX_SCHEMA, LINT_SCHEMA, REPORT_SCHEMA, assert_matches_lint_schema, assert_matches_schema,
    calendar_check_json,
};

const PUBLISHED: &str = REPORT_SCHEMA;

/// The schema published at `path`, after checking it is `derived` (rewritten when blessing).
fn published(path: &str, derived: Value) -> Value {
    let derived = serde_json::to_string_pretty(&derived).unwrap() + "\n";
    if std::env::var_os("DRIFTGATE_BLESS").is_some() {
        std::fs::write(path, &derived).unwrap();
    }
    let published = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        published == derived,
        "{path} is stale: the report types changed. Rewrite it with `DRIFTGATE_BLESS=1 cargo test --test it report_schema` and review the diff (a removed or retyped field needs a schema_version bump)"
    );
    let schema: Value = serde_json::from_str(&published).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    schema
}

#[test]
fn the_published_fix_schema_is_the_derived_one() {
    let schema = published(FIX_SCHEMA, driftgate::report::fix::json_schema());
    let required = schema["required"].as_array().unwrap();
    for field in ["schema_version", "command", "check", "split", "tools"] {
        assert!(required.contains(&json!(field)), "{field} is not required");
    }
    let at = schema["properties"]["command"]["$ref"].as_str().unwrap();
    let command = &schema["$defs"][at.rsplit('/').next().unwrap()];
    assert_eq!(command["enum"], json!(["fix"]), "{command}");
}

#[test]
fn the_published_lint_schema_is_the_derived_one() {
    let schema = published(LINT_SCHEMA, driftgate::report::lint::json_schema());
    let required = schema["required"].as_array().unwrap();
    for field in [
        "schema_version",
        "command",
        "verdict",
        "tools",
        "lint",
        "scan",
    ] {
        assert!(required.contains(&json!(field)), "{field} is not required");
    }
    // Lint's document has no sides to compare; its command is `lint` and nothing else.
    for field in ["base", "head", "diff", "thresholds"] {
        assert!(
            schema["properties"].get(field).is_none(),
            "{field} is in it"
        );
    }
    let at = schema["properties"]["command"]["$ref"].as_str().unwrap();
    let command = &schema["$defs"][at.rsplit('/').next().unwrap()];
    assert_eq!(command["enum"], json!(["lint"]), "{command}");
}

#[test]
fn the_published_schema_is_the_derived_one() {
    let schema = published(PUBLISHED, driftgate::report::json_schema());
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    // What every report has is required; what only some have is not.
    let required = schema["required"].as_array().unwrap();
    for field in [
        "schema_version",
        "command",
        "verdict",
        "base",
        "head",
        "diff",
    ] {
        assert!(required.contains(&json!(field)), "{field} is not required");
    }
    for field in ["routing", "drift", "lint", "scan", "github"] {
        assert!(!required.contains(&json!(field)), "{field} is required");
    }
}

fn json_of(args: &[&str], code: i32) -> Value {
    let cache = tempfile::tempdir().unwrap();
    let run = cli::driftgate(args).cache(cache.path()).run();
    assert_eq!(run.code, code, "{}", run.dump());
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn reports_of_every_command_match_it() {
    let check: Value = serde_json::from_str(calendar_check_json()).unwrap();
    assert!(check["routing"].is_object() && check["drift"].is_object());
    assert_matches_schema(&check, "the calendar check");
    let diff = json_of(
        &[
            "diff",
            "tests/fixtures/hostile/base.json",
            "tests/fixtures/hostile/head.json",
            "--no-embed",
            "--format",
            "json",
        ],
        1,
    );
    assert!(diff["scan"].is_object());
    assert_matches_schema(&diff, "the hostile diff");
    let lint = json_of(
        &[
            "lint",
            "examples/calendar/tools.head.json",
            "--format",
            "json",
        ],
        0,
    );
    assert!(lint["lint"].is_object());
    assert_matches_lint_schema(&lint, "the calendar lint");
    // Each document matches its own schema only.
    let errors = |schema: &str, doc: &Value| {
        let text = std::fs::read_to_string(schema).unwrap();
        let v = jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap();
        v.iter_errors(doc).count()
    };
    assert!(errors(REPORT_SCHEMA, &lint) > 0);
    assert!(errors(LINT_SCHEMA, &check) > 0);
}

/// The schema is not a rubber stamp: a wrong type, an unknown enum value or a missing field at
/// any depth is refused, with its pointer (an optional section, being "this or absent", is
/// refused as a whole: the pointer names the section).
#[test]
fn it_refuses_a_broken_report() {
    let good: Value = serde_json::from_str(calendar_check_json()).unwrap();
    let broken = |pointer: &str, value: Option<Value>| {
        let mut r = good.clone();
        match value {
            Some(v) => *r.pointer_mut(pointer).unwrap() = v,
            None => {
                let (parent, key) = pointer.rsplit_once('/').unwrap();
                r.pointer_mut(parent)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove(key)
                    .unwrap();
            }
        }
        let text = std::fs::read_to_string(PUBLISHED).unwrap();
        let v = jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap();
        let errors: Vec<String> = v
            .iter_errors(&r)
            .map(|e| e.instance_path().to_string())
            .collect();
        assert!(!errors.is_empty(), "{pointer} broken and still valid");
        errors
    };
    assert_eq!(
        broken("/verdict/status", Some(json!("maybe"))),
        ["/verdict/status"]
    );
    assert_eq!(
        broken("/routing/summary/base_accuracy", Some(json!("high"))),
        ["/routing"]
    );
    assert_eq!(broken("/routing/flips/0/prompt", None), ["/routing"]);
    assert_eq!(
        broken(
            "/diff/tools/0/changes/0/severity",
            Some(json!("catastrophic"))
        ),
        ["/diff/tools/0/changes/0/severity"]
    );
    assert_eq!(
        broken("/base/tool_count", Some(json!(-1))),
        ["/base/tool_count"]
    );
    assert_eq!(broken("/command", Some(json!("deploy"))), ["/command"]);
    assert_eq!(broken("/verdict", None), [""]);
}
