//! `driftgate check --router openai` against a real llama.cpp `llama-server` (Qwen2.5-Coder-0.5B,
//! see docs/llm-server.md). Runs only when `DRIFTGATE_LLAMA_URL` is set:
//!
//! ```sh
//! export DRIFTGATE_LLAMA_RUN_DIR=/tmp/llama-run     # optional: where pid/log files go
//! eval "$(.ci/llama.sh start)"                      # prints DRIFTGATE_LLAMA_URL=http://127.0.0.1:PORT
//! cargo test --test check_llama -- --include-ignored --nocapture
//! .ci/llama.sh stop
//! ```
//!
//! Six calendar cases at base and head: 12 real requests. The suite shuffles the tool order per
//! case (so order is not a confound), which also means llama-server cannot reuse a cached prompt
//! prefix between cases: every request evaluates its ~1,100 prompt tokens cold, 5–20 s each with
//! `-t 1` on 2 busy cores. Hence six cases, not the whole suite. One test function: the server
//! answers one request at a time.

mod common;

use std::time::Instant;

use common::{cli, stat};
use serde_json::Value;

const SUITE: &str = "tests/fixtures/check/calendar-6.suite.yaml";
const KNOWN_OUTCOMES: [&str; 7] = [
    "correct",
    "wrong tool",
    "no call",
    "must-not-call hit",
    "hallucinated name",
    "malformed",
    "error",
];

fn without_run_stats(mut report: Value) -> Value {
    let routing = report["routing"].as_object_mut().unwrap();
    routing.remove("base_stats");
    routing.remove("head_stats");
    report
}

#[ignore = "needs DRIFTGATE_LLAMA_URL (a real component; .ci/run starts it)"]
#[test]
fn real_llm_answers_are_classified_and_a_rerun_is_fully_cached() {
    let url = common::need(
        "DRIFTGATE_LLAMA_URL",
        "start one with `bash .ci/llama.sh start`",
    );
    let base_url = format!("{}/v1", url.trim_end_matches('/'));
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "check",
        "--base",
        "examples/calendar/tools.base.json",
        "--head",
        "examples/calendar/tools.head.json",
        "--suite",
        SUITE,
        "--router",
        "openai",
        "--base-url",
        &base_url,
        "--model",
        "qwen",
        "--concurrency",
        "1",
        "--no-embed",
        "--format",
        "json",
        "--cache-dir",
        cache.path().to_str().unwrap(),
    ];

    let started = Instant::now();
    let first = cli::driftgate(args).run();
    let took = started.elapsed();
    // A measured verdict: pass, fail, or inconclusive (six cases with a 0.5B model can leave one
    // tool's drop unproven); never a usage error or an incomplete measurement.
    assert!(matches!(first.code, 0 | 1 | 4), "{}", first.dump());
    let r1 = first.json();
    eprintln!(
        "llama check: exit {} in {took:?}: {}",
        first.code, r1["verdict"]["reason"]
    );
    assert!(
        r1["routing"]["errors"].as_array().unwrap().is_empty(),
        "{}",
        r1["routing"]["errors"]
    );
    assert_eq!(r1["router"]["kind"], "openai");
    assert_eq!(r1["router"]["model"], "qwen");
    assert_eq!(r1["router"]["system_prompt"], "prompts/router-system.v1.md");
    for side in ["base", "head"] {
        // Every question was really asked (the head's differ: a description changed) …
        assert!(stat(&r1, side, "requests_sent") >= 6, "{side}");
        assert_eq!(stat(&r1, side, "errors"), 0, "{side}");
        assert_eq!(stat(&r1, side, "cache_hits"), 0, "{side}");
        // … and answered by a model that read them: usage came back over the wire.
        assert!(stat(&r1, side, "input_tokens") > 6 * 300, "{side}");
        assert!(stat(&r1, side, "output_tokens") > 0, "{side}");
        assert!(stat(&r1, side, "request_latency_ms_sum") > 0, "{side}");
        // Every answer got one of the classifications, six per side.
        let outcomes = r1["routing"][format!("{side}_outcomes")]
            .as_object()
            .unwrap();
        for label in outcomes.keys() {
            assert!(KNOWN_OUTCOMES.contains(&label.as_str()), "{label}");
        }
        assert!(!outcomes.contains_key("error"), "{outcomes:?}");
        let n: u64 = outcomes.values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(n, 6, "{side}: {outcomes:?}");
    }
    // The small model is no oracle, but it routes most of the unambiguous base cases.
    let base_correct = r1["routing"]["base_outcomes"]["correct"]
        .as_u64()
        .unwrap_or(0);
    assert!(base_correct >= 3, "{}", r1["routing"]["base_outcomes"]);

    // The same run again: every answer from the cache, not one request, the same report.
    let second = cli::driftgate(args).run();
    assert_eq!(second.code, first.code, "{}", second.dump());
    let r2 = second.json();
    for side in ["base", "head"] {
        assert_eq!(stat(&r2, side, "requests_sent"), 0, "{side}");
        assert_eq!(stat(&r2, side, "cache_hits"), 6, "{side}");
    }
    assert_eq!(without_run_stats(r1), without_run_stats(r2));

    // Confirmation re-runs at a temperature above 0 (new questions: other cache keys): every flip
    // of the first pass is re-asked twice at both sides, and nothing else is.
    let mut confirm_args = args.to_vec();
    confirm_args.extend(["--temperature", "0.8", "--confirm", "2"]);
    let started = Instant::now();
    let third = cli::driftgate(&confirm_args).run();
    assert!(matches!(third.code, 0 | 1 | 4), "{}", third.dump());
    let r3 = third.json();
    let flips = r3["routing"]["flips"].as_array().unwrap();
    let gone = r3["routing"]["not_reproduced"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    eprintln!(
        "llama --confirm 2 at temperature 0.8 in {:?}: {} flip(s) held, {} did not reproduce",
        started.elapsed(),
        flips.len(),
        gone.len()
    );
    assert!(r3["routing"]["errors"].as_array().unwrap().is_empty());
    for f in flips.iter().chain(&gone) {
        assert_eq!(f["confirmed"]["asked"], 2, "{f}");
        assert!(f["confirmed"]["reproduced"].as_u64().unwrap() <= 2, "{f}");
    }
    let reasked = (flips.len() + gone.len()) as u64;
    for side in ["base", "head"] {
        assert_eq!(
            stat(&r3, side, "requests_sent") + stat(&r3, side, "cache_hits"),
            6 + 2 * reasked,
            "{side}: six cases, and two re-asks per flipped case"
        );
    }
}
