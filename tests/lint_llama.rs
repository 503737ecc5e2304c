//! `lint --llm` scoring against a real llama.cpp `llama-server` (a small instruct model, see
//! docs/llm-server.md). Runs only when `DRIFTGATE_LLAMA_URL` is set (`bash .ci/llama.sh start`);
//! the loopback tests of the same code are in `tests/it/lint_llm.rs`.

mod common;

use std::time::Duration;

use driftgate::cache::Cache;
use driftgate::http::retry::RetryPolicy;
use driftgate::lint::llm;
use driftgate::lint::quality;
use driftgate::route::provider::ProviderRouter;
use driftgate::tools::ToolSet;
use serde_json::{Value, json};

const FS: &str = "tests/fixtures/corpus/server-filesystem/2026.8.31.json";

fn set(v: Value) -> ToolSet {
    ToolSet::from_array(v.as_array().unwrap(), "t", "").unwrap()
}

/// The router to the real server.
fn llama() -> ProviderRouter {
    let url = common::need(
        "DRIFTGATE_LLAMA_URL",
        "start one with `bash .ci/llama.sh start`",
    );
    ProviderRouter::openai(
        Some(&format!("{}/v1", url.trim_end_matches('/'))),
        "local",
        None,
        Duration::from_secs(300),
    )
    .unwrap()
}

fn filesystem() -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(format!("{}/{FS}", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap()
}

/// The real model (llama.cpp with a small instruct model) through the real wire: every tool gets
/// a schema-valid answer within the retry budget.
#[ignore = "needs DRIFTGATE_LLAMA_URL (a real component; .ci/run starts it)"]
#[tokio::test]
async fn real_llama_server_scores_tools() {
    let router = llama();
    let all = filesystem();
    let tools = set(json!([all[0], all[2], all[13]]));
    let (q, _) = quality::assess_all(&tools);
    let r = llm::score(
        &tools,
        &q,
        &router,
        &Cache::new(None),
        1,
        &RetryPolicy::default(),
    )
    .await;
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    for t in &r.tools {
        let g = t.grades.as_ref().unwrap();
        assert!(g.values().iter().all(|x| (1..=5).contains(x)));
        assert!((1.0..=5.0).contains(&t.score));
        // The v2 answer shape: the flag, a summary, one decimal; a small model may give bare
        // scores, so justifications are at most one per dimension, none invented.
        assert!(g.justifications.len() <= 6, "{g:?}");
        assert!(g.summary.is_some());
        assert_eq!((t.score * 10.0).round() / 10.0, t.score);
        assert_eq!(t.tier, llm::tier(t.score));
    }
    assert!(r.server_score.is_some());
}

/// The set-level call against the real model: the coherence answer validates (shape and the
/// referential checks) within the retry budget, on a set with a prefilter candidate.
#[ignore = "needs DRIFTGATE_LLAMA_URL (a real component; .ci/run starts it)"]
#[tokio::test]
async fn real_llama_server_judges_coherence_and_shadowing() {
    let router = llama();
    let all = filesystem();
    // read_file, edit_file, list_allowed_directories: edit_file / list_allowed_directories is a
    // prefilter candidate.
    let pick = |n: &str| {
        all.as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == n)
            .unwrap()
            .clone()
    };
    let tools = set(json!([
        pick("read_text_file"),
        pick("edit_file"),
        pick("list_allowed_directories")
    ]));
    let (q, shadows) = quality::assess_all(&tools);
    assert!(
        !shadows.is_empty(),
        "the set must have a candidate to judge"
    );
    let mut r = llm::LlmReport::new(&router);
    llm::judge_server(
        &mut r,
        &tools,
        &q,
        &shadows,
        &router,
        &Cache::new(None),
        &RetryPolicy::default(),
    )
    .await;
    eprintln!("{}", serde_json::to_string_pretty(&r).unwrap());
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let j = r.server.as_ref().unwrap();
    let c = j.coherence.as_ref().unwrap();
    assert_eq!(c.source, "model");
    assert!(
        c.dimensions()
            .iter()
            .all(|(_, d)| (1..=5).contains(&d.score))
    );
    assert_eq!((c.score * 10.0).round() / 10.0, c.score);
    // Every candidate is judged exactly once, confirmed or rejected.
    assert_eq!(
        j.shadowing_risks.len() + j.shadowing_rejected.len(),
        shadows.len()
    );
    assert!(r.requests_sent >= 1);
}
