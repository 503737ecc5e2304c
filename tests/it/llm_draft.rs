//! LLM drafting (`stress --llm-paraphrase`, `suite init --llm`) against a scripted loopback
//! server speaking OpenAI's Chat Completions wire format (bodies shaped like the llama.cpp replies
//! captured in tests/fixtures/llm): exact request bodies, schema validation and re-asks, transport
//! retries, the draft cache, and the CLI end to end. No network, no key.

use std::path::PathBuf;
use std::time::Duration;

use driftgate::cache::Cache;
use driftgate::llm::Chat;
use driftgate::llm::json::{self as llm, JsonLlm, JsonTask};
use driftgate::stress::paraphrase;
use driftgate::tools::ToolSet;
use serde_json::{Value, json};

use crate::support::cli;
use crate::support::fake::{Fake, Step, reply};
use crate::support::openai::Completion;

// ---- the fake server ----------------------------------------------------------------------------

/// A 200 whose assistant message content is `content`, with llama.cpp's model name and usage.
fn completion(content: &str) -> Step {
    Completion::text(content)
        .model("qwen2.5-coder-0.5b-instruct-q4_k_m")
        .usage(180, 21)
        .into()
}

fn fs_tools() -> ToolSet {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/corpus/server-filesystem/2025.7.29.json"
    );
    let items: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    ToolSet::from_array(&items, path, "").unwrap()
}

fn client(fake: &Fake, cache: Option<PathBuf>) -> JsonLlm {
    let chat = Chat::openai(
        Some(&fake.base_url()),
        "qwen",
        None,
        Duration::from_secs(10),
    )
    .unwrap();
    let mut l = JsonLlm::new(chat).with_cache(&Cache::with_key(
        cache,
        driftgate::canon::MacKey::derive(b"test"),
    ));
    l.retry.base_delay = Duration::from_millis(5);
    l.retry.max_delay = Duration::from_millis(20);
    l
}

const MEDIA: &str = "read_media_file";

// ---- client behaviour ---------------------------------------------------------------------------

#[tokio::test]
async fn paraphrase_sends_the_exact_body_reasks_a_copy_and_caches_the_answer() {
    let tools = fs_tools();
    let original = tools.get(MEDIA).unwrap().description_text().to_string();
    let good = "Reads an image or audio file and returns its base64 data with the MIME type. Only works within allowed directories.";
    let fake = Fake::script(vec![
        completion(&json!({"paraphrase": original}).to_string()),
        completion(&format!("```json\n{}\n```", json!({"paraphrase": good}))),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let llm = client(&fake, Some(cache.path().to_path_buf()));
    let only = vec![MEDIA.to_string()];
    let drafted = paraphrase::draft(&llm, &tools, &only, 1, &driftgate::console::Silent)
        .await
        .unwrap();
    assert_eq!(drafted.len(), 1);
    assert_eq!(drafted[0].by_tool[MEDIA], good);

    let seen = fake.bodies();
    assert_eq!(seen.len(), 2);
    let user = paraphrase::user_message(tools.get(MEDIA).unwrap(), 0);
    assert_eq!(
        seen[0],
        json!({
            "model": "qwen",
            "messages": [
                {"role": "system", "content": paraphrase::PROMPT},
                {"role": "user", "content": user}
            ],
            "temperature": 0.0,
            "max_tokens": 1024,
            "response_format": {"type": "json_schema", "json_schema": {
                "name": "paraphrase", "strict": true, "schema": paraphrase::schema(&original)}},
            "seed": 0
        })
    );
    // The re-ask is a fresh question naming the problem, sampled warmer with the next seed.
    assert_eq!(seen[1]["temperature"], 1.0);
    assert_eq!(seen[1]["seed"], 1);
    assert_eq!(
        seen[1]["messages"][1]["content"],
        format!(
            "{user}\n\nAn earlier answer was rejected (/paraphrase: identical to the original; use different words); make sure yours satisfies every requirement."
        )
    );
    let s = llm.stats();
    assert_eq!((s.requests_sent, s.schema_retries, s.cache_hits), (2, 1, 0));
    assert_eq!((s.input_tokens, s.output_tokens), (360, 42));

    // Same input again: answered from the cache, nothing sent (the fake has no reply left).
    let llm2 = client(&fake, Some(cache.path().to_path_buf()));
    let again = paraphrase::draft(&llm2, &tools, &only, 1, &driftgate::console::Silent)
        .await
        .unwrap();
    assert_eq!(again[0].by_tool[MEDIA], good);
    assert_eq!(fake.bodies().len(), 2);
    assert_eq!(llm2.stats().cache_hits, 1);
}

#[tokio::test]
async fn transport_errors_are_retried_and_bad_answers_give_up_incomplete() {
    let fake = Fake::script(vec![
        reply(
            503,
            r#"{"error":{"message":"Loading model","type":"unavailable_error"}}"#,
        ),
        completion(r#"Sure! {"prompts": ["List my files", "What is in docs?"]}"#),
    ]);
    let llm = client(&fake, None);
    let task = JsonTask {
        name: "prompts",
        system: "s",
        user: "u".into(),
        schema: llm::string_list_schema("prompts", 2, 300),
    };
    let v = llm
        .complete(&task, |v| llm::distinct_strings(v, "prompts").map(|_| ()))
        .await
        .unwrap();
    assert_eq!(v, json!({"prompts": ["List my files", "What is in docs?"]}));
    assert_eq!(llm.stats().requests_sent, 2);

    // Four answers that never match the schema: incomplete (exit 3), naming the last problem.
    let bad = completion(r#"{"prompts": ["only one"]}"#);
    let fake = Fake::script(vec![bad.clone(), bad.clone(), bad.clone(), bad]);
    let llm = client(&fake, None);
    let e = llm.complete(&task, |_| Ok(())).await.unwrap_err();
    assert_eq!(e.exit_code(), 3);
    assert_eq!(
        e.to_string(),
        "incomplete: prompts: model qwen gave no valid answer in 4 attempt(s); last problem: /prompts: [\"only one\"] has less than 2 items"
    );
    assert_eq!(fake.bodies().len(), 4);

    // A refused key is not retried and says what the server said.
    let fake = Fake::script(vec![reply(
        401,
        r#"{"error":{"message":"bad key","type":"auth"}}"#,
    )]);
    let e = client(&fake, None)
        .complete(&task, |_| Ok(()))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("HTTP 401 Unauthorized: auth: bad key"),
        "{e}"
    );
    assert_eq!(fake.bodies().len(), 1);
}

#[test]
fn the_subset_validator_agrees_with_a_full_json_schema_validator() {
    let schemas = [
        llm::string_list_schema("prompts", 2, 12),
        paraphrase::schema("Read a file."),
    ];
    let samples = [
        json!({"prompts": ["a", "b"]}),
        json!({"prompts": ["a"]}),
        json!({"prompts": ["a", "b", "c"]}),
        json!({"prompts": ["a", ""]}),
        json!({"prompts": ["a", "b"], "extra": 1}),
        json!({"prompts": ["a", 2]}),
        json!({"prompts": ["a", "bbbbbbbbbbbbbbbbb"]}),
        json!({"paraphrase": "Open a file."}),
        json!({"paraphrase": ""}),
        json!({"paraphrase": 3}),
        json!({"paraphrase": "x".repeat(300)}),
        json!({}),
        json!([]),
        json!("text"),
    ];
    for schema in &schemas {
        let full = jsonschema::validator_for(schema).unwrap();
        for v in &samples {
            assert_eq!(
                llm::validate(schema, v).is_ok(),
                full.is_valid(v),
                "schema {schema} on {v}"
            );
        }
    }
}

// ---- the CLI end to end -------------------------------------------------------------------------

fn driftgate(args: Vec<String>, cache: PathBuf) -> (i32, String, String) {
    cli::driftgate(args).cache(cache).run().parts()
}

#[tokio::test]
async fn stress_llm_paraphrase_applies_the_drafted_rewrites() {
    let p1 = "Loads an image or audio file and returns its base64 data and MIME type. Only works within allowed directories.";
    let p2 = "Returns the base64 data and MIME type of an image or an audio file. Only works within allowed directories.";
    let fake = Fake::script(vec![
        completion(&json!({"paraphrase": p1}).to_string()),
        completion(&json!({"paraphrase": p2}).to_string()),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "stress",
        "--tools",
        "tests/fixtures/corpus/server-filesystem/2025.7.29.json",
        "--suite",
        "tests/fixtures/server-filesystem.suite.jsonl",
        "--tool",
        MEDIA,
        "--perturb",
        "terser",
        "--llm-paraphrase",
        "2",
        "--model",
        "qwen",
        "--base-url",
        &fake.base_url(),
        "--format",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let path = cache.path().to_path_buf();
    let (code, out, err) = tokio::task::spawn_blocking(move || driftgate(args, path))
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let ids: Vec<&str> = r["perturbations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["terser", "paraphrase-1", "paraphrase-2"]);
    let results = r["tools"][0]["results"].as_array().unwrap();
    assert_eq!(results[1]["description"], p1);
    assert_eq!(results[2]["description"], p2);
    assert!(results[1]["applied"].as_bool().unwrap());
    assert_eq!(r["paraphrase"]["model"], "qwen");
    assert_eq!(r["paraphrase"]["prompt"], "prompts/paraphrase.v1.md");
    assert_eq!(r["cost"]["drafting"]["requests_sent"], 2);
    // Only drafting went to the model; the replay router stayed semantic and offline.
    assert_eq!(r["router"]["kind"], "semantic");
    assert_eq!(fake.bodies().len(), 2);
    assert!(
        fake.bodies()[1]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Variation: Change the sentence order")
    );
}

#[tokio::test]
async fn suite_init_llm_writes_the_models_prompts_with_notes_and_stable_ids() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    let three: Vec<Value> = serde_json::from_str::<Vec<Value>>(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/corpus/server-filesystem/2025.7.29.json"
        ))
        .unwrap(),
    )
    .unwrap()
    .into_iter()
    .filter(|t| {
        ["read_text_file", "write_file", "move_file"].contains(&t["name"].as_str().unwrap())
    })
    .collect();
    std::fs::write(&tools, serde_json::to_string(&three).unwrap()).unwrap();
    let fake = Fake::script(vec![
        completion(
            r#"{"prompts": [{"prompt": "Show me what's in notes.txt", "args": [{"param": "path", "value": "notes.txt"}, {"param": "file", "value": "notes.txt"}]}, {"prompt": "Open config.yaml and print it", "args": []}]}"#,
        ),
        // write_file: a repeat is dropped and the missing prompt asked for in a second round.
        completion(
            r#"{"prompts": [{"prompt": "Save this as out.txt", "args": []}, {"prompt": "save this as OUT.txt", "args": []}]}"#,
        ),
        completion(
            r#"{"prompts": [{"prompt": "Overwrite todo.md with an empty list", "args": []}]}"#,
        ),
        // move_file: a bare tool name is dropped; a prompt already drafted for another tool too;
        // an answer with nothing usable is re-asked.
        completion(
            r#"{"prompts": [{"prompt": "move_file", "args": []}, {"prompt": "Rename a.md to b.md", "args": []}]}"#,
        ),
        completion(r#"{"prompts": [{"prompt": "Show me what's in notes.txt", "args": []}]}"#),
        completion(r#"{"prompts": [{"prompt": "move_file", "args": []}]}"#),
        completion(r#"{"prompts": [{"prompt": "Move b.md into the archive folder", "args": []}]}"#),
        completion(r#"{"prompts": [{"prompt": "Tell me a joke", "args": []}]}"#),
    ]);
    let out = dir.path().join("suite.yaml");
    let args: Vec<String> = [
        "suite",
        "init",
        "--llm",
        "--tools",
        tools.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--per-tool",
        "2",
        "--none",
        "1",
        "--model",
        "qwen",
        "--base-url",
        &fake.base_url(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let cache = dir.path().join("cache");
    let (code, _, err) = tokio::task::spawn_blocking(move || driftgate(args, cache))
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    let seen = fake.bodies();
    // Two per tool, plus a second round for write_file, two more rounds (one re-asked) for
    // move_file, and one for `none`.
    assert_eq!(seen.len(), 8);
    let user: Value =
        serde_json::from_str(seen[0]["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(user["route_to"], "read_text_file");
    assert_eq!(user["count"], 2);
    assert_eq!(user["tools"].as_array().unwrap().len(), 3);
    assert_eq!(
        seen[0]["messages"][0]["content"],
        driftgate::suite::draft::PROMPT
    );
    let second_round = seen[2]["messages"][1]["content"].as_str().unwrap();
    assert!(
        second_round.ends_with("\n\nRound 2: write new ones, different from any you wrote before.")
    );
    let (json_part, _) = second_round.split_once("\n\n").unwrap();
    let second: Value = serde_json::from_str(json_part).unwrap();
    assert_eq!(
        (second["route_to"].clone(), second["count"].clone()),
        (json!("write_file"), json!(1))
    );
    assert!(
        seen[6]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains(
                "An earlier answer was rejected (/prompts/0: \"move_file\" is not a sentence"
            )
    );
    let none: Value =
        serde_json::from_str(seen[7]["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        (none["route_to"].clone(), none["count"].clone()),
        (Value::Null, json!(1))
    );

    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("# drafted by: model qwen at 127.0.0.1:"),
        "{text}"
    );
    let suite = driftgate::suite::load(&out).unwrap();
    let got: Vec<(String, String)> = suite
        .cases
        .iter()
        .map(|c| (c.prompt.clone(), c.expect.label()))
        .collect();
    let want: Vec<(String, String)> = [
        ("Show me what's in notes.txt", "read_text_file"),
        ("Open config.yaml and print it", "read_text_file"),
        ("Save this as out.txt", "write_file"),
        ("Overwrite todo.md with an empty list", "write_file"),
        ("Rename a.md to b.md", "move_file"),
        ("Move b.md into the archive folder", "move_file"),
        ("Tell me a joke", "(none)"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    assert!(suite.cases.iter().all(|c| c.tags
        == [
            "draft",
            if c.expect.label() == "(none)" {
                "none"
            } else {
                "llm"
            }
        ]));
    assert_eq!(
        suite.cases[0].id,
        format!(
            "read_text_file-{}",
            &driftgate::canon::hash_str("Show me what's in notes.txt")[7..13]
        )
    );
    // The arguments the model stated: the declared `path` is kept for review, the invented
    // `file` dropped; cases without stated arguments have none.
    assert_eq!(
        suite.cases[0].args.as_ref().map(|a| a.to_value()),
        Some(json!({"path": "notes.txt"}))
    );
    assert!(
        text.contains(r#"args: {"path":"notes.txt"}"#)
            && text.contains("args drafted by the model: check each value against the prompt"),
        "{text}"
    );
    assert!(suite.cases[1..].iter().all(|c| c.args.is_none()));
    // The model was shown each tool's parameter names and asked for the strict answer shape.
    let tools_shown = &user["tools"].as_array().unwrap()[0];
    assert!(
        tools_shown["parameters"]
            .as_array()
            .unwrap()
            .contains(&json!("path")),
        "{tools_shown}"
    );
    assert_eq!(
        seen[0]["response_format"]["json_schema"]["schema"],
        driftgate::suite::draft::prompts_schema(2)
    );
}

/// A router that never calls a tool: the semantic notes are not what this test is about.
struct NoCall;

#[async_trait::async_trait]
impl driftgate::route::Router for NoCall {
    fn kind(&self) -> driftgate::route::Kind {
        driftgate::route::Kind::Openai
    }
    fn model(&self) -> &str {
        "none"
    }
    fn endpoint_host(&self) -> String {
        "local".into()
    }
    async fn route(
        &self,
        _: &driftgate::route::RouteRequest,
    ) -> Result<driftgate::route::RouteResponse, driftgate::http::Failure> {
        Ok(driftgate::route::RouteResponse {
            answer: driftgate::llm::Answer::NoCall { text: "-".into() },
            usage: None,
            latency_ms: 1,
        })
    }
}

#[tokio::test]
async fn suite_init_llm_fills_what_the_model_cannot_draft_from_templates() {
    let tools = ToolSet::from_array(
        &[json!({"name": "move_file", "description": "Move or rename files and directories."})],
        "t",
        "",
    )
    .unwrap();
    // One usable prompt for the tool; three rounds of nothing usable for `none`.
    let fake = Fake::script(vec![
        completion(r#"{"prompts": [{"prompt": "Rename a.md to b.md", "args": []}]}"#),
        completion(r#"{"prompts": [{"prompt": "move_file", "args": []}]}"#),
        completion(
            r#"{"prompts": [{"prompt": "Move or rename files and directories.", "args": []}]}"#,
        ),
        completion(r#"{"prompts": [{"prompt": "ok", "args": []}]}"#),
    ]);
    let mut llm = client(&fake, None);
    llm.max_attempts = 1;
    let drafts = driftgate::suite::draft::draft_llm(
        &llm,
        &tools,
        &NoCall,
        1,
        1,
        &driftgate::console::Silent,
    )
    .await
    .unwrap();
    assert_eq!(fake.bodies().len(), 4);
    assert_eq!(drafts.len(), 2);
    assert_eq!(
        (drafts[0].prompt.as_str(), drafts[0].kind),
        ("Rename a.md to b.md", "llm")
    );
    assert_eq!(
        drafts[0].note.as_deref(),
        Some("semantic router calls no tool: check the expectation or rephrase")
    );
    assert_eq!(drafts[1].expect, None);
    assert_eq!(
        drafts[1].prompt,
        "In general terms, what is a file? No need to look anything up."
    );
    assert_eq!(
        drafts[1].note.as_deref(),
        Some("templated: the model drafted no usable prompt")
    );

    // An endpoint that fails is an error, not a silent fallback.
    let fake = Fake::script(vec![reply(404, r#"{"error":{"message":"no such model"}}"#)]);
    let e = driftgate::suite::draft::draft_llm(
        &client(&fake, None),
        &tools,
        &NoCall,
        1,
        0,
        &driftgate::console::Silent,
    )
    .await
    .unwrap_err();
    assert_eq!(e.exit_code(), 3);
    assert!(
        e.to_string().contains("HTTP 404 Not Found: no such model"),
        "{e}"
    );
}

/// Drafting goes through the one chat transport, so Anthropic drafts too: its Messages body (no
/// `response_format`: the answer is validated here, as always), its headers, its text blocks.
#[tokio::test]
async fn anthropic_drafts_with_the_messages_api_and_the_same_validation() {
    let message = |text: &str| {
        Step::reply(
            200,
            json!({"id": "msg_01", "type": "message", "role": "assistant",
                   "model": "claude-sonnet-4-20250514",
                   "content": [{"type": "text", "text": text}],
                   "stop_reason": "end_turn",
                   "usage": {"input_tokens": 120, "output_tokens": 30}})
            .to_string(),
        )
    };
    let fake = Fake::script(vec![
        // Not valid for the schema: re-asked.
        message(r#"{"prompts": ["only one"]}"#),
        message(r#"Here you go: {"prompts": ["Read notes.txt", "Show me a.md"]}"#),
    ]);
    let chat = Chat::anthropic(
        Some(&fake.url("")),
        "claude-sonnet-4-20250514",
        Some(driftgate::http::secret::Secret::new("sk-ant-test-000000")),
        Duration::from_secs(10),
    )
    .unwrap();
    let l = JsonLlm::new(chat);
    let task = JsonTask {
        name: "prompts",
        system: "Write prompts.",
        user: "Two prompts for read_text_file.".into(),
        schema: llm::string_list_schema("prompts", 2, 300),
    };
    let v = l
        .complete(&task, |v| llm::distinct_strings(v, "prompts").map(|_| ()))
        .await
        .unwrap();
    assert_eq!(v["prompts"], json!(["Read notes.txt", "Show me a.md"]));
    let seen = fake.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].path(), "/v1/messages");
    assert_eq!(seen[0].header("x-api-key"), Some("sk-ant-test-000000"));
    assert_eq!(seen[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen[0].body["system"], "Write prompts.");
    assert!(seen[0].body.get("response_format").is_none());
    assert!(seen[0].body.get("tools").is_none());
    let stats = l.stats();
    assert_eq!((stats.requests_sent, stats.schema_retries), (2, 1));
    assert_eq!(stats.input_tokens, 240);
}
