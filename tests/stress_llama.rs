//! Drafting and stress against a real llama.cpp `llama-server` (Qwen2.5-Coder-0.5B, see
//! docs/llm-server.md). Runs only when `DRIFTGATE_LLAMA_URL` is set:
//!
//! ```sh
//! export "$(DRIFTGATE_LLAMA_RUN_DIR=$PWD/target/llama-stress bash .ci/llama.sh start)"
//! cargo test --test stress_llama -- --include-ignored --nocapture
//! DRIFTGATE_LLAMA_RUN_DIR=$PWD/target/llama-stress bash .ci/llama.sh stop
//! ```
//!
//! One test function: the server decodes one request at a time, so parallel tests would only
//! queue and race their timeouts. Everything uses a fresh cache, so every answer is real.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use driftgate::cache::Cache;
use driftgate::llm::Chat;
use driftgate::llm::json::JsonLlm;
use driftgate::stress::paraphrase;
use driftgate::tools::ToolSet;
use serde_json::Value;

fn corpus() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/corpus/server-filesystem/2025.7.29.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn subset(names: &[&str]) -> Vec<Value> {
    corpus()
        .into_iter()
        .filter(|t| names.contains(&t["name"].as_str().unwrap()))
        .collect()
}

fn driftgate(args: &[&str], cache: &Path) -> (i32, String, String) {
    common::cli::driftgate(args).cache(cache).run().parts()
}

#[ignore = "needs DRIFTGATE_LLAMA_URL (a real component; .ci/run starts it)"]
#[tokio::test]
async fn drafting_and_stress_against_llama_cpp() {
    let url = common::need(
        "DRIFTGATE_LLAMA_URL",
        "start one with `bash .ci/llama.sh start`",
    );
    let base_url = format!("{}/v1", url.trim_end_matches('/'));
    let dir = tempfile::tempdir().unwrap();

    // 1. Paraphrases: validated, new, distinct, keeping identifiers and capitals.
    let started = Instant::now();
    let tools = ToolSet::from_array(&corpus(), "corpus", "").unwrap();
    let chat = Chat::openai(Some(&base_url), "qwen", None, Duration::from_secs(600)).unwrap();
    let llm = JsonLlm::new(chat).with_cache(&Cache::with_key(
        Some(dir.path().join("cache")),
        driftgate::canon::MacKey::derive(b"test"),
    ));
    let only = vec!["read_media_file".to_string(), "edit_file".to_string()];
    let drafted = paraphrase::draft(&llm, &tools, &only, 2, &driftgate::console::Silent)
        .await
        .unwrap();
    assert_eq!(drafted.len(), 2);
    for name in &only {
        let original = tools.get(name).unwrap().description_text();
        let (a, b) = (&drafted[0].by_tool[name], &drafted[1].by_tool[name]);
        eprintln!("{name}:\n  1: {a}\n  2: {b}");
        assert_ne!(a, original);
        assert_ne!(a, b);
        for term in paraphrase::key_terms(original) {
            assert!(a.contains(&term) && b.contains(&term), "{term} dropped");
        }
    }
    let s = llm.stats();
    eprintln!(
        "paraphrases: {} request(s), {} re-ask(s), {:.0} s",
        s.requests_sent,
        s.schema_retries,
        started.elapsed().as_secs_f64()
    );

    // 2. suite init --llm on three tools: a suite that loads, with prompts for every tool.
    let three = dir.path().join("tools.json");
    std::fs::write(
        &three,
        serde_json::to_string(&subset(&["read_text_file", "write_file", "move_file"])).unwrap(),
    )
    .unwrap();
    let suite_path = dir.path().join("drafted.yaml");
    let cache = dir.path().join("cache");
    let started = Instant::now();
    let (code, _, err) = driftgate(
        &[
            "suite",
            "init",
            "--llm",
            "--tools",
            three.to_str().unwrap(),
            "-o",
            suite_path.to_str().unwrap(),
            "--per-tool",
            "2",
            "--none",
            "1",
            "--model",
            "qwen",
            "--base-url",
            &base_url,
            "--request-timeout",
            "600",
        ],
        &cache,
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&suite_path).unwrap();
    eprintln!(
        "suite init --llm in {:.0} s:\n{text}",
        started.elapsed().as_secs_f64()
    );
    let suite = driftgate::suite::load(&suite_path).unwrap();
    for t in ["read_text_file", "write_file", "move_file"] {
        assert!(
            suite.cases.iter().any(|c| c.expect.names() == [t]),
            "no case for {t}"
        );
    }
    let (code, out, _) = driftgate(
        &[
            "suite",
            "check",
            "--tools",
            three.to_str().unwrap(),
            suite_path.to_str().unwrap(),
        ],
        &cache,
    );
    assert_eq!(code, 0, "{out}");

    // 3. stress with the llama.cpp model as the router: one tool, one edit, four cases.
    let cases = dir.path().join("four.jsonl");
    std::fs::write(
        &cases,
        "{\"id\":\"fs-01\",\"prompt\":\"Show me what's inside config/settings.yaml\",\"expect\":\"read_text_file\"}\n\
         {\"id\":\"fs-11\",\"prompt\":\"Create a file hello.py containing print('hi')\",\"expect\":\"write_file\"}\n\
         {\"id\":\"fs-23\",\"prompt\":\"Rename draft.md to final.md\",\"expect\":\"move_file\"}\n\
         {\"id\":\"fs-35\",\"prompt\":\"Append nothing, just replace notes.txt entirely with 'done'\",\"expect\":\"write_file\"}\n",
    )
    .unwrap();
    let started = Instant::now();
    let (code, out, err) = driftgate(
        &[
            "stress",
            "--tools",
            three.to_str().unwrap(),
            "--suite",
            cases.to_str().unwrap(),
            "--tool",
            "write_file",
            "--perturb",
            "jargonier",
            "--router",
            "openai",
            "--model",
            "qwen",
            "--base-url",
            &base_url,
            "--concurrency",
            "1",
            "--request-timeout",
            "600",
            "--format",
            "json",
        ],
        &cache,
    );
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    eprintln!(
        "stress via llama.cpp in {:.0} s: base {}/{}; write_file × jargonier: {}",
        started.elapsed().as_secs_f64(),
        r["base"]["correct"],
        r["base"]["cases"],
        r["tools"][0]["results"][0]
    );
    assert_eq!(r["router"]["kind"], "openai");
    assert_eq!(r["router"]["system_prompt"], "prompts/router-system.v1.md");
    assert_eq!(r["cost"]["replays"], 2);
    assert_eq!(r["cost"]["requests_sent"], 8);
    let result = &r["tools"][0]["results"][0];
    assert!(result["applied"].as_bool().unwrap());
    let d = result["delta"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&d));
    assert!(r["errors"].as_array().unwrap().is_empty());
}
