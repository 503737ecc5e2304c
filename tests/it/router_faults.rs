//! Provider routers against the scripted loopback fake (`support::fake`) answering with recorded
//! OpenAI, Anthropic and llama.cpp bodies: exact request bodies and headers, answer reading,
//! status classification, retries, timeouts and key redaction. No network, no key.

use std::time::{Duration, Instant};

use driftgate::http::Failure;
use driftgate::http::retry::{RetryPolicy, with_retry};
use driftgate::http::secret::Secret;
use driftgate::llm::{Answer, Message, Sampling, ToolChoice, Usage};
use driftgate::route::provider::ProviderRouter;
use driftgate::route::{RouteRequest, Router};
use driftgate::tools::Tool;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::support::fake::{Fake, Step, reply, reply_with};
use crate::support::{anthropic, openai, router_fixture};

// ---- fixtures -----------------------------------------------------------------------------------

fn tools() -> Vec<Tool> {
    let defs = [
        json!({"name": "read_text_file", "description": "Read a file as text.",
               "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}},
                               "required": ["path"]}}),
        json!({"name": "list_directory", "description": "List a directory.",
               "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
               "annotations": {"readOnlyHint": true}}),
        // No description: the field must be left out, not sent as null.
        json!({"name": "list_allowed_directories"}),
    ];
    defs.iter()
        .map(|d| Tool::from_value(d, "test", "").unwrap())
        .collect()
}

fn request(system: &str, choice: ToolChoice) -> RouteRequest {
    RouteRequest {
        system: system.to_string(),
        messages: vec![Message {
            role: "user".into(),
            content: "Show me what's inside config/settings.yaml".into(),
        }],
        tools: tools(),
        shared_tools: 0,
        tool_choice: choice,
        sampling: Sampling {
            temperature: 0.0,
            seed: Some(7),
            max_tokens: 256,
        },
        repeat: 0,
    }
}

const KEY: &str = "sk-test-9f8e7d6c5b4a39281706";
const TIMEOUT: Duration = Duration::from_secs(10);

fn openai(fake: &Fake, key: Option<&str>) -> ProviderRouter {
    ProviderRouter::openai(
        Some(&fake.url("/v1")),
        "gpt-4o-mini",
        key.map(Secret::new),
        TIMEOUT,
    )
    .unwrap()
}

fn anthropic(fake: &Fake) -> ProviderRouter {
    ProviderRouter::anthropic(
        Some(&fake.url("")),
        "claude-sonnet-4-20250514",
        Some(Secret::new(KEY)),
        TIMEOUT,
    )
    .unwrap()
}

/// Fast retries so the tests measure behaviour, not backoff.
fn fast() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        max_retry_after: driftgate::http::retry::RETRY_AFTER_CAP,
        jitter: true,
    }
}

fn expected_openai_tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "read_text_file", "description": "Read a file as text.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
        {"type": "function", "function": {"name": "list_directory", "description": "List a directory.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "list_allowed_directories",
            "parameters": {"type": "object"}}}
    ])
}

/// The call both providers' `tool_call`/`tool_use` fixtures answer with.
fn settings_call() -> Answer {
    Answer::Call {
        name: "read_text_file".into(),
        arguments: Some(json!({"path": "config/settings.yaml"})),
        raw_arguments: r#"{"path":"config/settings.yaml"}"#.into(),
        others: Vec::new(),
    }
}

fn usage(input_tokens: u64, output_tokens: u64) -> Option<Usage> {
    Some(Usage {
        input_tokens,
        output_tokens,
        ..Usage::default()
    })
}

fn message_of(e: &Failure) -> &str {
    match e {
        Failure::Transient { message, .. } | Failure::Fatal(message) => message,
    }
}

// ---- OpenAI-compatible --------------------------------------------------------------------------

#[tokio::test]
async fn openai_sends_the_exact_body_and_reads_the_tool_call() {
    let fake = Fake::script(vec![openai::fixture(200, "tool_call.json")]);
    let router = openai(&fake, Some(KEY));
    let resp = router
        .route(&request("You pick tools.", ToolChoice::Required))
        .await
        .unwrap();
    assert_eq!(resp.answer, settings_call());
    assert_eq!(resp.usage, usage(412, 19));

    let seen = fake.requests();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!(
        (r.method.as_str(), r.target.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("api-key"), None);
    assert_eq!(
        r.body,
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You pick tools."},
                {"role": "user", "content": "Show me what's inside config/settings.yaml"}
            ],
            "tools": expected_openai_tools(),
            "tool_choice": "required",
            "parallel_tool_calls": false,
            "temperature": 0.0,
            "seed": 7,
            "max_tokens": 256
        })
    );
    assert_eq!(router.kind(), driftgate::route::Kind::Openai);
    assert_eq!(router.endpoint_host(), fake.addr.to_string());
}

#[tokio::test]
async fn openai_text_answer_without_key_system_or_trailing_slash_trouble() {
    let fake = Fake::script(vec![openai::fixture(200, "text.json")]);
    let router = ProviderRouter::openai(Some(&fake.url("/v1/")), "local", None, TIMEOUT).unwrap();
    let mut req = request("", ToolChoice::Auto);
    req.sampling = Sampling {
        temperature: 0.7,
        seed: None,
        max_tokens: 64,
    };
    let resp = router.route(&req).await.unwrap();
    assert_eq!(
        resp.answer,
        Answer::NoCall {
            text: "Hello! I can read, write and search files for you. What would you like to do?"
                .into()
        }
    );
    let r = &fake.requests()[0];
    assert_eq!(r.target, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), None);
    // No empty system message, no seed when none is set, temperature exactly as configured.
    assert_eq!(
        r.body,
        json!({
            "model": "local",
            "messages": [{"role": "user", "content": "Show me what's inside config/settings.yaml"}],
            "tools": expected_openai_tools(),
            "tool_choice": "auto",
            "parallel_tool_calls": false,
            "temperature": 0.7,
            "max_tokens": 64
        })
    );
}

#[tokio::test]
async fn rate_limit_with_retry_after_waits_then_succeeds() {
    let fake = Fake::script(vec![
        openai::fixture(429, "error_429.json").header("Retry-After", "1"),
        openai::fixture(200, "tool_call.json"),
    ]);
    let router = openai(&fake, Some(KEY));
    let req = request("s", ToolChoice::Required);
    let start = Instant::now();
    let out = with_retry(&fast(), || router.route(&req)).await;
    let elapsed = start.elapsed();
    assert!(
        matches!(&out.result, Ok(r) if matches!(&r.answer, Answer::Call { name, .. } if name == "read_text_file")),
        "{:?}",
        out.result
    );
    assert_eq!(out.attempts, 2);
    // The policy's own backoff is at most 10 ms: only Retry-After explains a 1 s wait.
    assert!(out.waited >= Duration::from_secs(1), "{:?}", out.waited);
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_until_attempts_run_out() {
    let fake = Fake::script((0..5).map(|_| openai::fixture(500, "error_500.json")));
    let router = openai(&fake, Some(KEY));
    let req = request("s", ToolChoice::Required);
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert_eq!(out.attempts, 4);
    assert_eq!(fake.requests().len(), 4);
    match out.result {
        Err(Failure::Transient {
            message,
            retry_after: None,
        }) => {
            assert!(
                message.contains("HTTP 500 Internal Server Error"),
                "{message}"
            );
            assert!(message.contains("The server had an error"), "{message}");
        }
        other => panic!("expected a transient error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_slower_than_the_timeout_is_transient_and_retried() {
    let fake = Fake::script(vec![
        Step::hang(Duration::from_secs(30)),
        Step::hang(Duration::from_secs(30)),
        openai::fixture(200, "tool_call.json"),
    ]);
    let router = ProviderRouter::openai(
        Some(&fake.url("/v1")),
        "m",
        None,
        Duration::from_millis(300),
    )
    .unwrap();
    let req = request("s", ToolChoice::Required);

    let start = Instant::now();
    let err = router.route(&req).await.unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the timeout did not fire"
    );
    assert!(
        matches!(&err, Failure::Transient { message, .. } if message.contains("timeout")),
        "{err:?}"
    );

    let out = with_retry(&fast(), || router.route(&req)).await;
    assert!(out.result.is_ok(), "{:?}", out.result);
    assert_eq!(out.attempts, 2);
    assert_eq!(fake.requests().len(), 3);
}

#[tokio::test]
async fn connections_closed_or_refused_are_transient() {
    let fake = Fake::script(vec![Step::close(), openai::fixture(200, "text.json")]);
    let router = openai(&fake, None);
    let req = request("s", ToolChoice::Auto);
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert!(out.result.is_ok(), "{:?}", out.result);
    assert_eq!(out.attempts, 2);

    // A port nobody listens on: bind one, then free it.
    let addr = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let router =
        ProviderRouter::openai(Some(&format!("http://{addr}/v1")), "m", None, TIMEOUT).unwrap();
    let err = router.route(&req).await.unwrap_err();
    assert!(
        matches!(&err, Failure::Transient { message, .. } if message.contains("cannot connect")),
        "{err:?}"
    );
}

/// A 200 that is not a completion is a broken endpoint (a proxy's page, a cut-off body, `{}`):
/// transient, so it is retried and then missing, never a model's answer to score.
#[tokio::test]
async fn unparseable_success_bodies_are_transient_failures_retried() {
    for (body, says) in [
        (
            r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"#,
            "not JSON",
        ),
        (
            router_fixture("openai/no_choices.json").as_str(),
            "no choices[0]",
        ),
        ("<html><body>502 Bad Gateway</body></html>", "not JSON"),
        ("{}", "no choices[0]"),
    ] {
        let fake = Fake::script(vec![
            reply(200, body),
            reply(200, body),
            reply(200, body),
            reply(200, body),
        ]);
        let router = openai(&fake, Some(KEY));
        let req = request("s", ToolChoice::Required);
        let out = with_retry(&fast(), || router.route(&req)).await;
        assert_eq!(out.attempts, fast().max_attempts, "{body}");
        assert_eq!(fake.requests().len(), 4);
        match out.result {
            Err(Failure::Transient { message, .. }) => assert!(
                message.contains("HTTP 200 OK but not with an answer") && message.contains(says),
                "{message}"
            ),
            other => panic!("expected a transient failure, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_hallucinated_tool_name_is_returned_faithfully() {
    let fake = Fake::script(vec![openai::fixture(200, "hallucinated.json")]);
    let resp = openai(&fake, Some(KEY))
        .route(&request("s", ToolChoice::Required))
        .await
        .unwrap();
    assert_eq!(
        resp.answer,
        Answer::Call {
            name: "not_a_tool".into(),
            arguments: Some(json!({"path": "README.md"})),
            raw_arguments: r#"{"path":"README.md"}"#.into(),
            others: Vec::new(),
        }
    );
}

#[tokio::test]
async fn arguments_that_are_not_json_keep_the_call_and_the_raw_text() {
    let fake = Fake::script(vec![openai::fixture(200, "bad_arguments.json")]);
    let resp = openai(&fake, Some(KEY))
        .route(&request("s", ToolChoice::Required))
        .await
        .unwrap();
    assert_eq!(
        resp.answer,
        Answer::Call {
            name: "read_text_file".into(),
            arguments: None,
            raw_arguments: "{'path': 'README.md', 'head': 20".into(),
            others: Vec::new(),
        }
    );
}

#[tokio::test]
async fn unauthorized_is_fatal_not_retried_and_the_echoed_key_is_redacted() {
    let fake = Fake::script(vec![
        openai::fixture(401, "error_401_echo.json"),
        openai::fixture(401, "error_401_echo.json"),
    ]);
    let router = openai(&fake, Some(KEY));
    let req = request("s", ToolChoice::Required);
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert_eq!(out.attempts, 1);
    assert_eq!(fake.requests().len(), 1);
    let Err(Failure::Fatal(message)) = out.result else {
        panic!("expected Fatal, got {:?}", out.result);
    };
    assert!(message.to_lowercase().contains("unauthorized"), "{message}");
    assert!(message.contains("Incorrect API key provided"), "{message}");
    // The fake did echo the header; only the mask may remain.
    assert!(message.contains("'Authorization: Bearer ***'"), "{message}");
    assert!(!message.contains(KEY), "{message}");
    assert!(!format!("{router:?}").contains(KEY));
}

#[tokio::test]
async fn a_key_echoed_in_a_success_body_is_redacted_too() {
    let fake = Fake::script(vec![
        reply(200, "proxy says: you sent {{authorization}}").echo_headers(),
    ]);
    let err = openai(&fake, Some(KEY))
        .route(&request("s", ToolChoice::Required))
        .await
        .unwrap_err();
    let detail = message_of(&err);
    assert!(detail.contains("you sent Bearer ***"), "{detail}");
    assert!(!detail.contains(KEY), "{detail}");
}

#[tokio::test]
async fn client_errors_are_fatal_with_the_message_trimmed() {
    let long = "x".repeat(5_000);
    let body = json!({"error": {"message": format!("Invalid schema for function 'read_text_file': {long}"),
        "type": "invalid_request_error", "param": "tools[0].function.parameters", "code": null}});
    let fake = Fake::script(vec![reply(400, body.to_string())]);
    let router = openai(&fake, Some(KEY));
    let req = request("s", ToolChoice::Required);
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert_eq!(out.attempts, 1);
    let Err(Failure::Fatal(message)) = out.result else {
        panic!("expected Fatal, got {:?}", out.result);
    };
    assert!(
        message.starts_with(&format!(
            "openai {}: HTTP 400 Bad Request: invalid_request_error: Invalid schema",
            fake.addr
        )),
        "{message}"
    );
    assert!(message.chars().count() <= 501, "{}", message.len());
    assert!(message.ends_with('…'));
}

#[tokio::test]
async fn llama_cpp_unparsed_output_500_is_a_malformed_answer_not_retried() {
    // Captured from llama-server 11434.0.0 (Qwen2.5-Coder-0.5B) for "Tell me a joke about files"
    // with 14 filesystem tools under tool_choice "auto".
    let body = router_fixture("llama/unparsed_500.json");
    let quirk = || {
        reply_with(
            500,
            &[("Server", "llama.cpp"), ("Connection", "close")],
            &body,
        )
    };
    let fake = Fake::script(vec![quirk(), quirk()]);
    let router = openai(&fake, None);
    let req = request("s", ToolChoice::Auto);
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert_eq!(out.attempts, 1);
    assert_eq!(fake.requests().len(), 1);
    let answer = out.result.unwrap().answer;
    assert!(
        matches!(&answer, Answer::Malformed { detail }
            if detail.contains("does not match the expected peg-native format")),
        "{answer:?}"
    );
}

#[tokio::test]
async fn azure_uses_the_api_key_header_and_api_version_query() {
    let fake = Fake::script(vec![openai::fixture(200, "tool_call.json")]);
    let router = ProviderRouter::openai(
        Some(&fake.url("/openai/deployments/gpt4o-mini/")),
        "gpt-4o-mini",
        Some(Secret::new(KEY)),
        TIMEOUT,
    )
    .unwrap()
    .azure("2024-10-21")
    .unwrap();
    let resp = router
        .route(&request("s", ToolChoice::Required))
        .await
        .unwrap();
    assert!(matches!(resp.answer, Answer::Call { .. }));
    let r = &fake.requests()[0];
    assert_eq!(
        r.target,
        "/openai/deployments/gpt4o-mini/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(r.header("api-key"), Some(KEY));
    assert_eq!(r.header("authorization"), None);
}

// ---- Anthropic ----------------------------------------------------------------------------------

#[tokio::test]
async fn anthropic_sends_the_exact_body_and_reads_the_tool_use_block() {
    let fake = Fake::script(vec![anthropic::fixture(200, "tool_use.json")]);
    let router = anthropic(&fake);
    let resp = router
        .route(&request("You pick tools.", ToolChoice::Required))
        .await
        .unwrap();
    assert_eq!(resp.answer, settings_call());
    assert_eq!(resp.usage, usage(1187, 71));
    let r = &fake.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.target.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(
        r.body,
        json!({
            "model": "claude-sonnet-4-20250514",
            "max_tokens": 256,
            "system": "You pick tools.",
            "messages": [{"role": "user", "content": "Show me what's inside config/settings.yaml"}],
            "tools": [
                {"name": "read_text_file", "description": "Read a file as text.",
                 "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
                {"name": "list_directory", "description": "List a directory.",
                 "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
                {"name": "list_allowed_directories", "input_schema": {"type": "object"}}
            ],
            "tool_choice": {"type": "any"},
            "temperature": 0.0
        })
    );
    assert_eq!(router.kind(), driftgate::route::Kind::Anthropic);
}

#[tokio::test]
async fn anthropic_text_only_answer_joins_text_blocks() {
    let fake = Fake::script(vec![anthropic::fixture(200, "text.json")]);
    let resp = anthropic(&fake)
        .route(&request("", ToolChoice::Auto))
        .await
        .unwrap();
    assert_eq!(
        resp.answer,
        Answer::NoCall {
            text: "Hello! How can I help with your files today?".into()
        }
    );
    let body = &fake.requests()[0].body;
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    assert!(body.get("system").is_none(), "{body}");
}

#[tokio::test]
async fn anthropic_overloaded_529_is_transient_and_retried() {
    let fake = Fake::script(vec![
        anthropic::fixture(529, "overloaded_529.json"),
        anthropic::fixture(529, "overloaded_529.json"),
        anthropic::fixture(200, "tool_use.json"),
    ]);
    let router = anthropic(&fake);
    let req = request("s", ToolChoice::Required);
    let err = router.route(&req).await.unwrap_err();
    assert!(
        matches!(&err, Failure::Transient { message, .. }
            if message.contains("HTTP 529") && message.contains("overloaded_error: Overloaded")),
        "{err:?}"
    );
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert!(out.result.is_ok(), "{:?}", out.result);
    assert_eq!(out.attempts, 2);
}

#[tokio::test]
async fn anthropic_error_bodies_are_fatal_with_the_provider_message() {
    let fake = Fake::script(vec![
        anthropic::fixture(400, "invalid_request_400.json"),
        anthropic::fixture(401, "auth_401_echo.json"),
    ]);
    let router = anthropic(&fake);
    let req = request("s", ToolChoice::Required);

    let out = with_retry(&fast(), || router.route(&req)).await;
    assert_eq!(out.attempts, 1);
    let err = out.result.unwrap_err();
    assert!(
        matches!(&err, Failure::Fatal(m)
            if m.contains("HTTP 400 Bad Request: invalid_request_error: tools.0.custom.input_schema")),
        "{err:?}"
    );

    let err = router.route(&req).await.unwrap_err();
    let message = message_of(&err);
    assert!(matches!(err, Failure::Fatal(_)));
    assert!(
        message.contains("authentication_error: invalid x-api-key: ***"),
        "{message}"
    );
    assert!(!message.contains(KEY), "{message}");
}
