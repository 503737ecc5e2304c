//! `lint --llm` against a loopback fake speaking OpenAI's Chat Completions wire format exactly:
//! the request it gets, schema validation of the answer, re-asking on a mismatch, transport
//! retries, the cache keyed by input hash, hard-gated tools never sent, and the run marked
//! incomplete when a tool cannot be scored. The same scoring against a real llama.cpp server is
//! `tests/lint_llama.rs`.

use std::time::Duration;

use driftgate::cache::Cache;
use driftgate::http::retry::RetryPolicy;
use driftgate::lint::llm::{self, parse_answer};
use driftgate::lint::quality;
use driftgate::route::provider::ProviderRouter;
use driftgate::tools::ToolSet;
use serde_json::{Value, json};

use crate::support::cli;
use crate::support::fake::{Fake, reply};
use crate::support::openai::Completion;

/// The loopback fake; `handler(body, index)` answers each tool's request with (status, body).
/// The set-level coherence request gets [`server_answer`] (4, 4, 4, 4, nothing confirmed).
fn grader(handler: impl Fn(&Value, usize) -> (u16, String) + Send + Sync + 'static) -> Fake {
    Fake::handler(move |req| {
        let (status, body) = if is_server(&req.body) {
            (200, completion(&server_answer([4, 4, 4, 4], &[])))
        } else {
            handler(&req.body, req.index)
        };
        reply(status, body)
    })
}

/// The loopback fake answering every request, the coherence one included.
fn grader_all(handler: impl Fn(&Value, usize) -> (u16, String) + Send + Sync + 'static) -> Fake {
    Fake::handler(move |req| {
        let (status, body) = handler(&req.body, req.index);
        reply(status, body)
    })
}

/// The set-level request: its first user message opens with `SERVER TOOLS (`.
fn is_server(body: &Value) -> bool {
    let msgs = body["messages"].as_array().unwrap();
    let user = msgs.iter().find(|m| m["role"] == "user").unwrap();
    user["content"]
        .as_str()
        .unwrap()
        .starts_with("SERVER TOOLS (")
}

/// A coherence answer: the four grades and the confirmed (dearer, cheaper) pairs.
fn server_answer(g: [u8; 4], confirmed: &[(&str, &str)]) -> String {
    let dims: serde_json::Map<String, Value> = llm::coherence::DIMENSIONS
        .iter()
        .zip(g)
        .map(|(d, g)| {
            (
                d.to_string(),
                json!({"score": g, "justification": format!("{d} is {g}")}),
            )
        })
        .collect();
    let list: Vec<Value> = confirmed
        .iter()
        .map(|(t, c)| json!({"tool": t, "cheaper_sibling": c, "justification": format!("{c} answers what {t} is for")}))
        .collect();
    json!({"dimensions": dims, "shadowing": list, "summary": "a coherent set"}).to_string()
}

/// A Chat Completions response carrying `content` as the assistant's text.
fn completion(content: &str) -> String {
    Completion::text(content)
        .model("fake")
        .usage(100, 20)
        .body()
}

fn answer(g: [u8; 6], contradiction: bool) -> String {
    let d = llm::DIMENSIONS.iter().map(|(d, _)| *d);
    let scores: serde_json::Map<String, Value> = d
        .zip(g)
        .map(|(d, g)| {
            (
                d.to_string(),
                json!({"score": g, "justification": format!("{d} is {g}")}),
            )
        })
        .collect();
    json!({"scores": scores, "annotation_contradiction": contradiction, "summary": "ok"})
        .to_string()
}

fn grades(g: [u8; 6]) -> String {
    answer(g, false)
}

/// The tool named in a request (the first user message opens with `TOOL NAME: `).
fn tool_name(body: &Value) -> String {
    let msgs = body["messages"].as_array().unwrap();
    let user = msgs.iter().find(|m| m["role"] == "user").unwrap();
    let text = user["content"].as_str().unwrap();
    let first = text.lines().next().unwrap();
    first.strip_prefix("TOOL NAME: ").unwrap().to_string()
}

fn run(cache: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    cli::driftgate(args).cache(cache).run().parts()
}

const FS: &str = "tests/fixtures/corpus/server-filesystem/2026.8.31.json";

#[test]
fn scores_every_tool_and_an_unchanged_tool_costs_nothing_next_time() {
    // read_* tools are graded well, the rest middling; the server score follows.
    let fake = grader(|body, _| {
        let g = if tool_name(body).starts_with("read_") {
            [5, 4, 4, 4, 4, 4]
        } else {
            [3, 2, 2, 3, 3, 2]
        };
        (200, completion(&grades(g)))
    });
    let cache = tempfile::tempdir().unwrap();
    let url = fake.base_url();
    let args = [
        "lint",
        FS,
        "--no-embed",
        "--llm",
        "--router",
        "openai",
        "--model",
        "grader",
        "--base-url",
        &url,
        "--format",
        "json",
    ];
    let (code, out, err) = run(cache.path(), &args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let l = &v["lint"]["llm"];
    // 14 tools and one set-level coherence request.
    assert_eq!(l["requests_sent"], 15);
    assert_eq!(l["cache_hits"], 0);
    assert_eq!(l["prompt"], "prompts/lint-tdqs.v2.md");
    assert_eq!(l["input_tokens"], 1500);
    let tools = l["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 14);
    // 0.25·5 + 0.2·4 + 0.2·4 + 0.15·4 + 0.1·4 + 0.1·4 = 4.25 → 4.3 (one decimal, half-up), A
    assert_eq!(
        (tools[0]["name"].as_str(), tools[0]["score"].as_f64()),
        (Some("read_file"), Some(4.3))
    );
    assert_eq!(tools[0]["tier"], "A");
    // 0.75 + 0.4 + 0.4 + 0.45 + 0.3 + 0.2 = 2.5 → C
    assert_eq!(
        (tools[4]["score"].as_f64(), tools[4]["tier"].as_str()),
        (Some(2.5), Some("C"))
    );
    // 4 tools at 4.3, 10 at 2.5: mean 3.01, min 2.5 → 0.6·3.01 + 0.4·2.5 = 2.81 → 2.8 (C)
    assert_eq!(l["server_score"], 2.8);
    assert_eq!(l["server_tier"], "C");
    // The model's coherence (4 everywhere) replaces the offline estimate; overall
    // 0.7·2.8 + 0.3·4.0 = 1.96 + 1.2 = 3.16 → 3.2 (B).
    assert_eq!(v["lint"]["coherence"]["source"], "model");
    assert_eq!(v["lint"]["coherence"]["score"], 4.0);
    assert_eq!(l["server"]["prompt"], "prompts/lint-coherence.v1.md");
    assert_eq!(l["overall_score"], 3.2);
    assert_eq!(l["overall_tier"], "B");
    // Nothing confirmed: every prefilter candidate is rejected, and no shadowing finding.
    assert_eq!(v["lint"]["shadowing_risks"], json!([]));
    assert!(
        !v["lint"]["shadowing_rejected"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // The exact request: a plain completion (no tools), our prompt as the system message.
    let bodies = fake.bodies();
    let first = bodies
        .iter()
        .find(|b| !is_server(b) && tool_name(b) == "read_file")
        .unwrap();
    assert_eq!(first["model"], "grader");
    assert_eq!(first["temperature"], 0.0);
    assert!(first.get("tools").is_none() && first.get("tool_choice").is_none());
    let msgs = first["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs[0]["content"], llm::PROMPT);
    let user = msgs[1]["content"].as_str().unwrap();
    assert!(user.starts_with("TOOL NAME: read_file\nTITLE: "), "{user}");
    // The context signals and every sibling's name, as the spec's judge receives them.
    assert!(
        user.contains("CONTEXT SIGNALS:\n- Parameter count: 3\n"),
        "{user}"
    );
    assert!(
        user.contains("<sibling-tools>\nread_text_file\nread_media_file\n"),
        "{user}"
    );
    assert!(
        !user.contains("\nread_file\n"),
        "a tool is not its own sibling"
    );
    // Justifications, summary and smells come back in the report.
    assert_eq!(
        tools[4]["grades"]["justifications"]["usage_guidelines"],
        "usage_guidelines is 2"
    );
    assert_eq!(tools[4]["grades"]["summary"], "ok");
    assert_eq!(
        tools[4]["smells"],
        json!([
            "usage_guidelines",
            "behavioral_transparency",
            "contextual_completeness"
        ])
    );

    // Unchanged tools: zero requests.
    let (code, out, _) = run(cache.path(), &args);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["lint"]["llm"]["requests_sent"], 0);
    assert_eq!(v["lint"]["llm"]["cache_hits"], 15);
    assert_eq!(v["lint"]["llm"]["server_score"], 2.8);
    assert_eq!(v["lint"]["llm"]["overall_score"], 3.2);
    assert_eq!(fake.bodies().len(), 15);

    // One tool's description edited: only that tool is asked.
    let dir = tempfile::tempdir().unwrap();
    let mut tools: Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{}/{FS}", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap();
    tools[3]["description"] = json!("Read several files at once.");
    let edited = dir.path().join("tools.json");
    std::fs::write(&edited, tools.to_string()).unwrap();
    let edited = edited.display().to_string();
    let mut args2 = args.to_vec();
    args2[1] = &edited;
    let (code, out, _) = run(cache.path(), &args2);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    // The set changed, so its coherence is asked again too.
    assert_eq!(v["lint"]["llm"]["requests_sent"], 2);
    assert_eq!(v["lint"]["llm"]["cache_hits"], 13);
    assert_eq!(tool_name(&fake.bodies()[15]), "read_multiple_files");
    assert!(is_server(&fake.bodies()[16]));

    // The terminal view names the model, the grades and the server score.
    let mut args3 = args.to_vec();
    args3.truncate(args3.len() - 2);
    let (_, out, _) = run(cache.path(), &args3);
    assert!(
        out.contains("Model scores (openai grader, prompts/lint-tdqs.v2.md):"),
        "{out}"
    );
    assert!(out.contains("Description quality 2.8 (tier C)"), "{out}");
    assert!(
        out.contains("Overall 3.2 (tier B) = round1(0.7·description quality + 0.3·coherence)"),
        "{out}"
    );
    assert!(
        out.contains("Server coherence (model): 4.0 (tier A)"),
        "{out}"
    );
    // Smells and flags are listed apart, per tool.
    assert!(
        out.contains("smell `write_file`: usage_guidelines, behavioral_transparency, contextual_completeness below 3"),
        "{out}"
    );
}

fn set(v: Value) -> ToolSet {
    ToolSet::from_array(v.as_array().unwrap(), "t", "").unwrap()
}

async fn score_with(
    fake: &Fake,
    tools: &ToolSet,
    cache: Option<std::path::PathBuf>,
) -> llm::LlmReport {
    let router = ProviderRouter::openai(
        Some(&fake.base_url()),
        "grader",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let (q, _) = quality::assess_all(tools);
    let policy = RetryPolicy {
        jitter: false,
        base_delay: Duration::from_millis(1),
        ..RetryPolicy::default()
    };
    llm::score(
        tools,
        &q,
        &router,
        &Cache::with_key(cache, driftgate::canon::MacKey::derive(b"test")),
        2,
        &policy,
    )
    .await
}

#[tokio::test]
async fn a_mismatched_answer_is_sent_back_with_the_reason_and_asked_again() {
    let fake = grader(|body, _| {
        let n = body["messages"].as_array().unwrap().len();
        match n {
            2 => (200, completion("The tool is great! I'd give it a 5.")),
            4 => (200, completion(&grades([9, 4, 4, 4, 4, 4]))),
            _ => (
                200,
                completion(&format!("```json\n{}\n```", grades([4, 4, 4, 4, 4, 4]))),
            ),
        }
    });
    let tools = set(json!([{"name": "read_file", "description": "Read a file."}]));
    let r = score_with(&fake, &tools, None).await;
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.tools[0].answers, 3);
    assert_eq!(r.tools[0].score, 4.0);
    let seen = fake.bodies();
    assert_eq!(seen.len(), 3);
    let m = seen[2]["messages"].as_array().unwrap();
    assert_eq!(m[2]["role"], "assistant");
    assert_eq!(m[2]["content"], "The tool is great! I'd give it a 5.");
    assert_eq!(m[3]["role"], "user");
    assert!(
        m[3]["content"]
            .as_str()
            .unwrap()
            .contains("not a JSON object"),
        "{m:?}"
    );
    assert!(
        m[5]["content"]
            .as_str()
            .unwrap()
            .contains("\"purpose_clarity\" score must be an integer from 1 to 5, got 9")
    );
}

#[tokio::test]
async fn never_a_valid_answer_leaves_the_tool_unscored_and_the_run_incomplete() {
    let fake = grader(|_, _| (200, completion("{\"score\": 5}")));
    let tools = set(json!([{"name": "a", "description": "Does a."}, {"name": "b"}]));
    let r = score_with(&fake, &tools, None).await;
    assert_eq!(r.errors.len(), 1);
    assert!(
        r.errors[0].starts_with("`a`: no valid answer in 3 tries (last: unexpected key \"score\")"),
        "{}",
        r.errors[0]
    );
    assert_eq!(r.server_score, None);
    assert_eq!(r.tools[0].tier, llm::UNSCORED);
    // `b` has no description: every dimension 1, TDQS 1.0, tier D, never sent.
    assert_eq!((r.tools[1].score, r.tools[1].tier), (1.0, "D"));
    assert_eq!(r.tools[1].hard_gate, Some("No Description"));
    assert_eq!(r.tools[1].smells.len(), 6);
    assert_eq!(fake.bodies().len(), 3);
    assert!(fake.bodies().iter().all(|b| tool_name(b) == "a"));

    // Through the CLI: exit 3, never a pass.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    std::fs::write(&f, r#"[{"name":"a","description":"Does a."}]"#).unwrap();
    let url = fake.base_url();
    let (code, out, _) = run(
        dir.path(),
        &[
            "lint",
            &f.display().to_string(),
            "--no-embed",
            "--llm",
            "--router",
            "openai",
            "--model",
            "grader",
            "--base-url",
            &url,
            "--no-cache",
        ],
    );
    assert_eq!(code, 3, "{out}");
    assert!(
        out.starts_with(
            "driftgate lint: INCOMPLETE — the model could not score 1 part(s) of the set"
        ),
        "{out}"
    );
}

#[tokio::test]
async fn transient_failures_are_retried_and_counted() {
    let fake = grader(|_, i| match i {
        0 => (429, json!({"error": {"message": "slow down"}}).to_string()),
        1 => (503, "{}".into()),
        _ => (200, completion(&grades([3, 3, 3, 3, 3, 3]))),
    });
    let tools = set(json!([{"name": "a", "description": "Does a."}]));
    let r = score_with(&fake, &tools, None).await;
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!((r.requests_sent, r.retries), (3, 2));
    assert_eq!(r.tools[0].answers, 1);
    assert_eq!(r.server_score, Some(3.0));
    assert_eq!(r.server_tier, Some("B"));
}

#[tokio::test]
async fn the_cache_is_keyed_by_input_hash_and_model() {
    let fake = grader(|_, _| (200, completion(&grades([2, 2, 2, 2, 2, 2]))));
    let dir = tempfile::tempdir().unwrap();
    let tools = set(json!([{"name": "a", "description": "Does a."}]));
    score_with(&fake, &tools, Some(dir.path().to_path_buf())).await;
    let again = score_with(&fake, &tools, Some(dir.path().to_path_buf())).await;
    assert_eq!((again.requests_sent, again.cache_hits), (0, 1));
    assert!(again.tools[0].cached);
    // Another model is another key.
    let other = ProviderRouter::openai(
        Some(&fake.base_url()),
        "other",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let h = quality::input_hash(&tools.tools[0]);
    let same = ProviderRouter::openai(
        Some(&fake.base_url()),
        "grader",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    assert_ne!(llm::cache_key(&other, &h), llm::cache_key(&same, &h));
    assert_eq!(fake.bodies().len(), 1);
}

#[test]
fn the_validator_agrees_with_the_published_answer_schema() {
    let schema: Value = serde_json::from_str(llm::ANSWER_SCHEMA).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let ok: Value = serde_json::from_str(&grades([5, 1, 3, 2, 4, 3])).unwrap();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut o = ok.clone();
        f(&mut o);
        o
    };
    let cases = [
        ok.clone(),
        with(&|o| o["summary"] = json!(1)),
        with(&|o| o["annotation_contradiction"] = json!(true)),
        with(&|o| o["annotation_contradiction"] = json!("yes")),
        with(&|o| o["scores"]["conciseness_structure"]["score"] = json!(0)),
        with(&|o| o["scores"]["conciseness_structure"]["score"] = json!(6)),
        with(&|o| o["scores"]["conciseness_structure"]["score"] = json!(2.5)),
        with(&|o| o["scores"]["conciseness_structure"]["score"] = json!("3")),
        with(&|o| o["scores"]["conciseness_structure"]["justification"] = json!(3)),
        with(&|o| o["scores"]["conciseness_structure"]["extra"] = json!(3)),
        with(&|o| o["scores"]["conciseness_structure"] = json!(3)),
        with(&|o| o["scores"]["conciseness_structure"] = json!(6)),
        with(&|o| o["scores"]["conciseness_structure"] = json!(3.0)),
        with(&|o| o["scores"]["conciseness_structure"] = json!(2.5)),
        with(&|o| o["scores"]["conciseness_structure"] = json!("3")),
        with(&|o| o["scores"]["extra"] = json!({"score": 3, "justification": ""})),
        with(&|o| o["extra"] = json!(1)),
        with(&|o| {
            o["scores"]
                .as_object_mut()
                .unwrap()
                .remove("usage_guidelines");
        }),
        with(&|o| {
            o.as_object_mut().unwrap().remove("summary");
        }),
        json!([1, 2, 3]),
    ];
    for c in cases {
        assert_eq!(
            parse_answer(&c.to_string()).is_ok(),
            v.is_valid(&c),
            "disagree on {c}"
        );
    }
    // Every dimension the code weighs is required by the schema, and nothing else is.
    let required: Vec<&str> = schema["properties"]["scores"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(required, llm::DIMENSIONS.map(|(d, _)| d));
}

#[tokio::test]
async fn a_tautological_description_is_scored_with_purpose_capped_at_2() {
    let fake = grader(|_, _| (200, completion(&grades([5, 4, 4, 4, 4, 4]))));
    let tools = set(json!([
        {"name": "read_file", "description": "Read file."},
        {"name": "write_file", "description": "Write a file to disk, replacing it."}
    ]));
    let r = score_with(&fake, &tools, None).await;
    // Sent (unlike a missing description), then capped: 0.25·2 + 0.2·4·2 + 0.15·4 + 0.1·4·2
    // = 0.5 + 1.6 + 0.6 + 0.8 = 3.5 → A; the uncapped sibling 4.25 → 4.3.
    assert_eq!(fake.bodies().len(), 2);
    let g = r.tools[0].grades.as_ref().unwrap();
    assert_eq!(g.purpose_clarity, 2);
    assert_eq!(r.tools[0].hard_gate, Some("Tautological Description"));
    assert_eq!((r.tools[0].score, r.tools[0].tier), (3.5, "A"));
    assert_eq!(r.tools[0].smells, ["purpose_clarity"]);
    assert_eq!((r.tools[1].score, r.tools[1].tier), (4.3, "A"));
    assert!(r.tools[1].smells.is_empty());
    // 0.6·3.9 + 0.4·3.5 = 2.34 + 1.4 = 3.74 → 3.7 (A)
    assert_eq!(r.server_score, Some(3.7));
}

#[tokio::test]
async fn the_contradiction_flag_is_read_and_raised_apart_from_smells() {
    let fake = grader(|body, _| {
        let c = tool_name(body) == "create_record";
        (
            200,
            completion(&answer([4, 4, if c { 1 } else { 4 }, 4, 4, 4], c)),
        )
    });
    let tools = set(json!([
        {"name": "create_record", "description": "Store a row.", "annotations": {"readOnlyHint": true}},
        {"name": "get_record", "description": "Fetch a row by id."}
    ]));
    let r = score_with(&fake, &tools, None).await;
    assert_eq!(r.tools[0].flags, ["Annotation Contradiction"]);
    assert!(r.tools[0].grades.as_ref().unwrap().annotation_contradiction);
    assert_eq!(r.tools[0].smells, ["behavioral_transparency"]);
    // 1.0 + 0.8 + 0.2 + 0.6 + 0.4 + 0.4 = 3.4 → B
    assert_eq!((r.tools[0].score, r.tools[0].tier), (3.4, "B"));
    assert!(r.tools[1].flags.is_empty() && r.tools[1].smells.is_empty());
    // The deterministic post-processing flag raises it too, whatever the model says.
    let fake = grader(|_, _| (200, completion(&grades([4, 4, 4, 4, 4, 4]))));
    let tools = set(json!([
        {"name": "create_record", "description": "Creates a new record in the database.",
         "annotations": {"readOnlyHint": true}}
    ]));
    let r = score_with(&fake, &tools, None).await;
    assert_eq!(r.tools[0].flags, ["Annotation Contradiction"]);
}

/// A dashboard server: `query_panel` (dear) and `get_stat` (cheap) overlap in purpose, so the
/// prefilter proposes the pair and the model is asked to confirm it.
fn dashboard(dir: &std::path::Path) -> String {
    let p = |d: &str| json!({"type": "string", "description": d});
    let tools = json!([
        {"name": "get_stat", "description": "Get the value of a dashboard statistic.",
         "inputSchema": {"type": "object", "properties": {}}},
        {"name": "query_panel", "description": "Query a dashboard panel's data with filters, grouping and a time range.",
         "inputSchema": {"type": "object", "required": ["panel", "from", "to", "group_by", "filter"], "properties": {
            "panel": p("Panel id."), "from": p("Start."), "to": p("End."),
            "group_by": p("Grouping."), "filter": p("Filter expression.")}}}
    ]);
    let f = dir.join("tools.json");
    std::fs::write(&f, tools.to_string()).unwrap();
    f.display().to_string()
}

fn lint_llm_args<'a>(file: &'a str, url: &'a str) -> Vec<&'a str> {
    vec![
        "lint",
        file,
        "--no-embed",
        "--llm",
        "--router",
        "openai",
        "--model",
        "grader",
        "--base-url",
        url,
        "--format",
        "json",
    ]
}

#[test]
fn the_model_confirms_a_shadowing_candidate_after_the_referential_checks() {
    // The first coherence answer names the cheaper tool as the one at risk: it is sent back with
    // the reason, and the corrected answer is taken.
    let fake = grader_all(|body, _| {
        if !is_server(body) {
            return (200, completion(&grades([4, 4, 4, 4, 4, 4])));
        }
        let asked_again = body["messages"].as_array().unwrap().len() > 2;
        let pair = if asked_again {
            ("query_panel", "get_stat")
        } else {
            ("get_stat", "query_panel")
        };
        (200, completion(&server_answer([3, 5, 3, 4], &[pair])))
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dashboard(dir.path());
    let url = fake.base_url();
    let (code, out, err) = run(dir.path(), &lint_llm_args(&file, &url));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();

    // The request: every tool quoted, the candidate listed dearer first.
    let bodies = fake.bodies();
    let server: Vec<&Value> = bodies.iter().filter(|b| is_server(b)).collect();
    assert_eq!(server.len(), 2);
    let msgs = server[1]["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["content"], llm::coherence::PROMPT);
    let user = msgs[1]["content"].as_str().unwrap();
    assert!(
        user.contains("- get_stat: \"Get the value of a dashboard statistic.\"\n"),
        "{user}"
    );
    assert!(
        user.contains(
            "SHADOW CANDIDATES (dearer / cheaper):\n- query_panel (cost 5) / get_stat (cost 0)\n"
        ),
        "{user}"
    );
    assert!(
        msgs[3]["content"].as_str().unwrap().contains(
            "\"get_stat\" is the cheaper side in \"shadowing\"[0]: name the dearer tool (\"query_panel\") as \"tool\""
        ),
        "{msgs:?}"
    );

    // The model's confirmation is the shadowing risk, its finding and its justification.
    let risks = v["lint"]["shadowing_risks"].as_array().unwrap();
    assert_eq!(risks.len(), 1);
    assert_eq!(
        (
            risks[0]["tool"].as_str(),
            risks[0]["cheaperSibling"].as_str()
        ),
        (Some("query_panel"), Some("get_stat"))
    );
    assert_eq!(
        risks[0]["justification"],
        "get_stat answers what query_panel is for"
    );
    assert!(risks[0].get("evidence").is_none());
    let f: Vec<&Value> = v["lint"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "shadowing-risk")
        .collect();
    assert_eq!(f.len(), 1);
    assert!(
        f[0]["message"]
            .as_str()
            .unwrap()
            .ends_with("get_stat answers what query_panel is for"),
        "{}",
        f[0]["message"]
    );
    // Coherence 3, 5, 3, 4 → 3.75 → 3.8 (A); description quality 4.0; overall
    // 0.7·4.0 + 0.3·3.8 = 2.8 + 1.14 = 3.94 → 3.9 (A).
    assert_eq!(v["lint"]["coherence"]["score"], 3.8);
    assert_eq!(v["lint"]["coherence"]["summary"], "a coherent set");
    let l = &v["lint"]["llm"];
    assert_eq!(l["server"]["answers"], 2);
    assert_eq!(
        (l["overall_score"].as_f64(), l["overall_tier"].as_str()),
        (Some(3.9), Some("A"))
    );
}

#[test]
fn a_candidate_the_model_does_not_confirm_is_rejected_not_raised() {
    // edit_file / list_allowed_directories: the prefilter proposes it, the purposes differ.
    let fake = grader(|_, _| (200, completion(&grades([4, 4, 4, 4, 4, 4]))));
    let dir = tempfile::tempdir().unwrap();
    let url = fake.base_url();
    let (code, out, err) = run(dir.path(), &lint_llm_args(FS, &url));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["lint"]["shadowing_risks"], json!([]));
    let rejected = v["lint"]["shadowing_rejected"].as_array().unwrap();
    let edit = rejected
        .iter()
        .find(|r| r["tool"] == "edit_file")
        .expect("edit_file is a prefilter candidate");
    assert_eq!(edit["cheaperSibling"], "list_allowed_directories");
    assert_eq!(
        edit["justification"],
        "the model did not confirm an overlap of purposes"
    );
    assert!(
        !v["lint"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "shadowing-risk")
    );
}

#[test]
fn a_coherence_call_that_never_validates_leaves_the_run_incomplete() {
    // Tools grade fine; the set-level answer names a tool the server does not have, every time.
    let fake = grader_all(|body, _| {
        let a = if is_server(body) {
            server_answer([4, 4, 4, 4], &[("query_panel", "no_such_tool")])
        } else {
            grades([4, 4, 4, 4, 4, 4])
        };
        (200, completion(&a))
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dashboard(dir.path());
    let url = fake.base_url();
    let mut args = lint_llm_args(&file, &url);
    args.truncate(args.len() - 2);
    let (code, out, _) = run(dir.path(), &args);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.starts_with("driftgate lint: INCOMPLETE — the model could not score 1 part(s) of the set (first: server coherence: no valid answer in 3 tries (last: \"no_such_tool\" in \"shadowing\"[0] is not a tool of this server)"),
        "{out}"
    );
    // No overall score without the model's coherence; the offline estimate stays, said as such.
    assert!(!out.contains("Overall "), "{out}");
    assert!(out.contains("Server coherence (offline)"), "{out}");
}

#[test]
fn the_coherence_validator_agrees_with_its_published_schema_on_shape() {
    // The schema holds the shape; the referential checks on top are the code's own (tested in
    // lint::llm::coherence). So the cases here confirm nothing, or a valid candidate.
    let schema: Value = serde_json::from_str(llm::coherence::ANSWER_SCHEMA).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let tools = set(json!([
        {"name": "get_stat", "description": "Get a statistic."},
        {"name": "query_panel", "description": "Query a panel."}
    ]));
    let shadows = vec![quality::Shadow {
        dearer: "query_panel".into(),
        dearer_cost: 9,
        cheaper: "get_stat".into(),
        cheaper_cost: 0,
    }];
    let ok: Value = serde_json::from_str(&server_answer([4, 3, 5, 2], &[])).unwrap();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut o = ok.clone();
        f(&mut o);
        o
    };
    let cases = [
        ok.clone(),
        serde_json::from_str(&server_answer([4, 3, 5, 2], &[("query_panel", "get_stat")])).unwrap(),
        with(&|o| o["dimensions"]["completeness"] = json!(3)),
        with(&|o| o["dimensions"]["completeness"] = json!(0)),
        with(&|o| o["dimensions"]["completeness"]["score"] = json!(2.5)),
        with(&|o| o["dimensions"]["completeness"]["extra"] = json!(1)),
        with(&|o| {
            o["dimensions"]
                .as_object_mut()
                .unwrap()
                .remove("completeness");
        }),
        with(&|o| o["dimensions"]["extra"] = json!({"score": 3, "justification": ""})),
        with(&|o| o["shadowing"] = json!({})),
        with(&|o| o["shadowing"] = json!([{"tool": "query_panel", "cheaper_sibling": "get_stat"}])),
        with(&|o| {
            o["shadowing"] =
                json!([{"tool": "query_panel", "cheaper_sibling": "get_stat", "justification": 1}])
        }),
        with(&|o| o["summary"] = json!(null)),
        with(&|o| o["extra"] = json!(1)),
        with(&|o| {
            o.as_object_mut().unwrap().remove("shadowing");
        }),
        json!("text"),
    ];
    for c in cases {
        assert_eq!(
            llm::coherence::parse_answer(&c.to_string(), &tools, &shadows).is_ok(),
            v.is_valid(&c),
            "disagree on {c}"
        );
    }
}

/// The system prompt of a request.
fn system(body: &Value) -> &str {
    body["messages"][0]["content"].as_str().unwrap_or_default()
}

/// `check --lint-llm` on the calendar pair through one fake: routing answered right, tools
/// graded 4 everywhere except head's `schedule_appointment` ("Book a slot."), graded low.
fn check_lint_llm(dir: &std::path::Path, fake: &Fake) -> (i32, Value, String) {
    use crate::check_faults::{BASE, HEAD, check_in};
    let (run, report) = check_in(dir, fake, BASE, HEAD, &["--lint-llm"], &[]);
    (run.code, report, run.stdout)
}

fn calendar_grader(garbage_at_head: bool) -> Fake {
    Fake::handler(move |req| {
        let b = &req.body;
        if system(b) == llm::coherence::PROMPT {
            return reply(200, completion(&server_answer([4, 4, 4, 4], &[])));
        }
        if system(b) != llm::PROMPT {
            return crate::check_faults::right_answer(req);
        }
        let user = b["messages"][1]["content"].as_str().unwrap();
        let head_schedule = user.starts_with("TOOL NAME: schedule_appointment\n")
            && user.contains("\"Book a slot.\"");
        let a = match (head_schedule, garbage_at_head) {
            (true, true) => "not json".to_string(),
            (true, false) => grades([2, 2, 2, 3, 3, 2]),
            _ => grades([4, 4, 4, 4, 4, 4]),
        };
        reply(200, completion(&a))
    })
}

#[test]
fn check_lint_llm_reports_the_tool_tier_a_pr_moved_and_reuses_base_grades() {
    let fake = calendar_grader(false);
    let dir = tempfile::tempdir().unwrap();
    let (_, v, out) = check_lint_llm(dir.path(), &fake);
    let changes = v["lint"]["score_changes"].as_array().unwrap();
    let msgs: Vec<&str> = changes
        .iter()
        .map(|c| c["message"].as_str().unwrap())
        .collect();
    // 0.5 + 0.4 + 0.4 + 0.45 + 0.3 + 0.2 = 2.25 → 2.3 (C), from 4.0 (A).
    assert_eq!(
        msgs[0],
        "tool `schedule_appointment` 4.0 (A) → 2.3 (C): tier A → C; below 3: purpose_clarity, usage_guidelines, behavioral_transparency, contextual_completeness",
        "{msgs:?}"
    );
    assert_eq!(changes[0]["base_tier"], "A");
    assert_eq!(changes[0]["head_tier"], "C");
    assert!(
        msgs.iter()
            .any(|m| m.starts_with("description quality 4.0 (A) → ")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.starts_with("overall 4.0 (A) → ")),
        "{msgs:?}"
    );
    // No other tool moved tier (all graded 4 at both sides).
    assert_eq!(msgs.iter().filter(|m| m.starts_with("tool ")).count(), 1);
    // The model's coherence on both sides (4 everywhere): no coherence move is reported.
    assert!(!msgs.iter().any(|m| m.starts_with("coherence")), "{msgs:?}");
    assert!(
        out.contains("tool `schedule_appointment` 4.0 (A) → 2.3 (C)"),
        "{out}"
    );
    assert_eq!(v["lint"]["llm"]["errors"], json!([]));

    // Base's tools and head's unchanged ones are cached: a second run grades nothing again.
    let graded = |f: &Fake| {
        f.bodies()
            .iter()
            .filter(|b| system(b) == llm::PROMPT || system(b) == llm::coherence::PROMPT)
            .count()
    };
    let first = graded(&fake);
    let (_, v2, _) = check_lint_llm(dir.path(), &fake);
    assert_eq!(graded(&fake), first);
    assert_eq!(v2["lint"]["llm"]["requests_sent"], 0);
    assert_eq!(v2["lint"]["score_changes"], v["lint"]["score_changes"]);
}

#[test]
fn check_lint_llm_without_a_grade_is_incomplete_never_a_pass() {
    let fake = calendar_grader(true);
    let dir = tempfile::tempdir().unwrap();
    let (code, v, out) = check_lint_llm(dir.path(), &fake);
    assert_eq!(code, 3, "{out}");
    assert_eq!(v["verdict"]["status"], "incomplete");
    let reason = v["verdict"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("--lint-llm: the model could not grade 1 part(s) of the sides (first: head: `schedule_appointment`: no valid answer in 3 tries"),
        "{reason}"
    );
}

#[test]
fn check_lint_llm_needs_a_model() {
    use crate::check_faults::{BASE, HEAD, SUITE};
    let (code, _, err) = cli::driftgate([
        "check",
        "--base",
        BASE,
        "--head",
        HEAD,
        "--suite",
        SUITE,
        "--router",
        "semantic",
        "--lint-llm",
    ])
    .run()
    .parts();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--lint-llm needs a model"), "{err}");
}

#[test]
fn check_plan_counts_the_grading_requests_lint_llm_would_send() {
    use crate::support::calendar::{self, BASE, HEAD};
    let fake = calendar_grader(false);
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let url = fake.base_url();
    let plan = || -> Value {
        let (code, out, err) = cli::driftgate(calendar::model_check(
            [BASE, HEAD],
            "openai",
            &url,
            "m",
            &[
                "--lint-llm",
                "--plan",
                "--format",
                "json",
                "--cache-dir",
                cache.to_str().unwrap(),
            ],
        ))
        .run()
        .parts();
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let tools = |f: &str| -> usize {
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(crate::support::repo(f)).unwrap())
                .unwrap();
        v["tools"].as_array().unwrap().len()
    };
    // Nothing cached: every tool and the set call, at each side; nothing sent.
    assert_eq!(
        plan()["lint_llm_to_send"],
        json!([tools(BASE) + 1, tools(HEAD) + 1])
    );
    assert!(fake.bodies().is_empty());
    // After a run, base and head are cached: nothing left to grade.
    check_lint_llm(dir.path(), &fake);
    assert_eq!(plan()["lint_llm_to_send"], json!([0, 0]));
}
