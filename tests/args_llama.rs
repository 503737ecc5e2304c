//! Call accuracy against a real llama.cpp `llama-server` (Qwen2.5-Coder-0.5B, see
//! docs/llm-server.md): a description edit that moves how the model fills an argument while the
//! routing stays exactly the same. Runs only when `DRIFTGATE_LLAMA_URL` is set:
//!
//! ```sh
//! eval "$(.ci/llama.sh start)"
//! cargo test --test args_llama -- --include-ignored --nocapture
//! .ci/llama.sh stop
//! ```
//!
//! Three real server-filesystem tools (2025.12.18); the only edit is the `path` parameter's
//! description, from "relative to the project root" to "absolute, starting with the project
//! root". Fourteen `read_text_file` cases expect the relative path the user typed. Measured on
//! this server (deterministic at `-t 1`): routing 85.7% → 85.7% with no flip, call accuracy
//! 71.4% → 35.7% with five cases regressed (`Cargo.toml` → `/srv/app/Cargo.toml`, …): the gate
//! fails on `read_text_file`'s call accuracy (p = 0.031 < 0.035) where routing alone passes.
//! 28 requests, about 3.5 minutes on 2 cores.

mod common;

use common::cli;
#[ignore = "needs DRIFTGATE_LLAMA_URL (a real component; .ci/run starts it)"]
#[test]
fn a_path_description_edit_fails_call_accuracy_with_routing_unchanged() {
    let url = common::need(
        "DRIFTGATE_LLAMA_URL",
        "start one with `bash .ci/llama.sh start`",
    );
    let base_url = format!("{}/v1", url.trim_end_matches('/'));
    let cache = tempfile::tempdir().unwrap();
    let run = cli::driftgate([
        "check",
        "--base",
        "tests/fixtures/args/fs.base.json",
        "--head",
        "tests/fixtures/args/fs.head.json",
        "--suite",
        "tests/fixtures/args/fs.suite.yaml",
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
    ])
    .run();
    let r = run.json();
    eprintln!("args llama: exit {}: {}", run.code, r["verdict"]["reason"]);
    let routing = &r["routing"];
    assert!(
        routing["errors"].as_array().unwrap().is_empty(),
        "{}",
        routing["errors"]
    );
    // Routing saw nothing: the same cases right at both sides, not one flip.
    assert_eq!(routing["summary"]["delta"], 0.0, "{}", routing["summary"]);
    assert!(
        routing["flips"].as_array().unwrap().is_empty(),
        "{}",
        routing["flips"]
    );
    assert!(routing["summary"]["base_accuracy"].as_f64().unwrap() >= 0.7);
    // Call accuracy did: cases regressed on their arguments alone, each with the path it moved.
    let calls = &routing["calls"];
    assert_eq!(calls["cases_with_args"], 14);
    let s = &calls["summary"];
    assert!(s["discordant_right_to_wrong"].as_u64().unwrap() >= 5, "{s}");
    assert_eq!(s["discordant_wrong_to_right"], 0, "{s}");
    let flips = calls["flips"].as_array().unwrap();
    assert!(flips.len() >= 5, "{flips:?}");
    for f in flips {
        assert_eq!(f["direction"], "regressed", "{f}");
        let path = f["arguments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["param"] == "path")
            .unwrap_or_else(|| panic!("no path change in {f}"));
        let (base, head) = (
            path["base"].as_str().unwrap(),
            path["head"].as_str().unwrap(),
        );
        assert!(!base.starts_with('/'), "{f}");
        assert!(head.contains("srv/app"), "{f}");
        assert!(
            f["head"]
                .as_str()
                .unwrap()
                .starts_with("read_text_file: wrong arguments"),
            "{f}"
        );
    }
    // The verdict fails, on the call metric, and says so.
    assert_eq!(run.code, 1, "{}", run.dump());
    let reason = r["verdict"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("`read_text_file` call accuracy"),
        "{reason}"
    );
    assert!(!reason.contains("routing accuracy"), "{reason}");
    let head_outcomes = &calls["head_outcomes"];
    assert!(
        head_outcomes["wrong arguments"].as_u64().unwrap() >= 5,
        "{head_outcomes}"
    );
}
