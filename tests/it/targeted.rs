//! `--replay targeted` misses no flip a full replay finds: on the calendar example and on real
//! corpus version pairs (server-filesystem's releases with its suite, sqlite's kebab → snake
//! renames), each check runs twice — full and targeted — and the pairings agree case by case,
//! while the targeted run sends fewer head requests, exactly the ones it says it saved.

use serde_json::Value;

use crate::support::{calendar, cli};

fn check(base: &str, head: &str, suite: &str, extra: &[&str]) -> (i32, Value) {
    let cache = tempfile::tempdir().unwrap();
    let run = cli::driftgate([
        "check", "--base", base, "--head", head, "--suite", suite, "--format", "json",
    ])
    .args(extra)
    .cache(cache.path())
    .run();
    assert!(run.code == 0 || run.code == 1, "{}", run.dump());
    (run.code, serde_json::from_str(&run.stdout).unwrap())
}

/// The pairing without what a targeted run legitimately changes: counters, the carried section,
/// and the count of identical questions (a carried case is not asked at all).
fn pairing(r: &Value) -> Value {
    let mut routing = r["routing"].clone();
    let o = routing.as_object_mut().unwrap();
    for key in [
        "base_stats",
        "head_stats",
        "carried",
        "cases_unchanged_question",
    ] {
        o.remove(key);
    }
    routing
}

#[test]
fn targeted_replay_finds_every_flip_a_full_replay_finds() {
    let fs = |v: &str| format!("tests/fixtures/corpus/server-filesystem/{v}.json");
    let sqlite = |v: &str| format!("tests/fixtures/corpus/mcp-server-sqlite/{v}.json");
    let fs_suite = "tests/fixtures/server-filesystem.suite.jsonl";
    let pairs = [
        (
            calendar::BASE.to_string(),
            calendar::HEAD.to_string(),
            calendar::SUITE,
        ),
        (fs("0.6.2"), fs("2025.1.14"), fs_suite),
        (fs("2025.3.28"), fs("2025.7.1"), fs_suite),
        (fs("2025.7.1"), fs("2025.7.29"), fs_suite),
        (fs("2025.7.29"), fs("2025.8.21"), fs_suite),
        (fs("2025.8.21"), fs("2025.11.25"), fs_suite),
        (
            sqlite("0.6.2"),
            sqlite("2025.1.14"),
            "tests/fixtures/check/sqlite.suite.yaml",
        ),
    ];
    let mut flips_seen = 0;
    let mut saved_total = 0;
    eprintln!("pair | cases | flips | head requests full → targeted | saved");
    for (base, head, suite) in &pairs {
        let (code_full, full) = check(base, head, suite, &[]);
        let (code_t, targeted) = check(base, head, suite, &["--replay", "targeted"]);
        assert_eq!(code_t, code_full, "{head}");
        assert_eq!(targeted["verdict"], full["verdict"], "{head}");
        assert_eq!(pairing(&targeted), pairing(&full), "{head}");
        let c = &targeted["routing"]["carried"];
        let n = full["routing"]["summary"]["n_cases"].as_u64().unwrap();
        assert_eq!(
            c["asked"].as_u64().unwrap() + c["carried"].as_u64().unwrap(),
            n
        );
        let sent = |r: &Value| {
            r["routing"]["head_stats"]["requests_sent"]
                .as_u64()
                .unwrap()
        };
        let saved = c["requests_saved"].as_u64().unwrap();
        assert_eq!(sent(&targeted) + saved, sent(&full), "{head}");
        let notes = targeted["notes"].as_array().unwrap();
        assert!(
            notes
                .iter()
                .any(|x| x.as_str().unwrap().starts_with(&format!(
                    "targeted replay: {} of {n} case(s) asked at head",
                    c["asked"]
                ))),
            "{notes:?}"
        );
        let flips = full["routing"]["flips"].as_array().unwrap().len();
        flips_seen += flips;
        saved_total += saved;
        eprintln!(
            "{head} | {n} | {flips} | {} → {} | {saved}",
            sent(&full),
            sent(&targeted)
        );
    }
    // The comparison has teeth: there were flips to miss, and requests were saved.
    assert!(flips_seen >= 15, "{flips_seen}");
    assert!(saved_total >= 60, "{saved_total}");
}

#[test]
fn targeted_replay_needs_the_embedder() {
    let run = cli::driftgate(calendar::check(&["--replay", "targeted", "--no-embed"])).run();
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr.contains("cannot run with --no-embed"),
        "{}",
        run.dump()
    );
}
