//! Provider routers against a scripted loopback HTTP/1.1 server: exact request bodies and headers,
//! answer reading, status classification, retries, timeouts and key redaction. No network, no key.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use driftgate::http::Failure;
use driftgate::http::retry::{RetryPolicy, with_retry};
use driftgate::http::secret::Secret;
use driftgate::llm::{Answer, Message, Sampling, ToolChoice, Usage};
use driftgate::route::provider::ProviderRouter;
use driftgate::route::{RouteRequest, Router};
use driftgate::tools::Tool;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

// ---- the fake server ----------------------------------------------------------------------------

/// What the fake does with the next request it receives.
enum Step {
    /// Answer with this status, extra headers and body. `{{header-name}}` in the body is replaced
    /// by that request header's value, to play a server that echoes credentials back.
    Reply {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// Say nothing for this long, then close: a server slower than the client's timeout.
    Hang(Duration),
    /// Close the connection without answering.
    Close,
}

fn reply(status: u16, body: &str) -> Step {
    Step::Reply {
        status,
        headers: vec![],
        body: body.to_string(),
    }
}

fn reply_with(status: u16, headers: &[(&'static str, &str)], body: &str) -> Step {
    Step::Reply {
        status,
        headers: headers.iter().map(|(k, v)| (*k, v.to_string())).collect(),
        body: body.to_string(),
    }
}

/// One request as the fake received it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    /// Path and query.
    target: String,
    /// Names lowercased, in arrival order.
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Fake {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    async fn start(script: Vec<Step>) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (script2, seen2) = (script.clone(), seen.clone());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(stream, script2.clone(), seen2.clone()));
            }
        });
        Fake { addr, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Serve requests on one (keep-alive) connection until the client or the script closes it.
async fn serve(stream: TcpStream, script: Arc<Mutex<VecDeque<Step>>>, seen: Arc<Mutex<Vec<Seen>>>) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        if stream.read_line(&mut request_line).await.unwrap_or(0) == 0 {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let target = parts.next().unwrap_or_default().to_string();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (k, v) = line.split_once(':').expect("header line");
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let length: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .map(|(_, v)| v.parse().unwrap())
            .unwrap_or(0);
        let mut body = vec![0; length];
        stream.read_exact(&mut body).await.unwrap();
        let request = Seen {
            method,
            target,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        };
        seen.lock().unwrap().push(request.clone());

        let step = script.lock().unwrap().pop_front();
        match step {
            Some(Step::Reply {
                status,
                headers,
                mut body,
            }) => {
                for (k, v) in &request.headers {
                    body = body.replace(&format!("{{{{{k}}}}}"), v);
                }
                let mut head = format!(
                    "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                    reason(status),
                    body.len()
                );
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let out = stream.get_mut();
                out.write_all(head.as_bytes()).await.unwrap();
                out.write_all(body.as_bytes()).await.unwrap();
                out.flush().await.unwrap();
            }
            Some(Step::Hang(d)) => {
                tokio::time::sleep(d).await;
                return;
            }
            Some(Step::Close) => return,
            None => {
                let body = "fake server: no scripted response left";
                let head = format!(
                    "HTTP/1.1 418 I'm a teapot\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let out = stream.get_mut();
                let _ = out.write_all(head.as_bytes()).await;
                let _ = out.write_all(body.as_bytes()).await;
                return;
            }
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    }
}

// ---- fixtures -----------------------------------------------------------------------------------

fn fixture(path: &str) -> String {
    let full = format!(
        "{}/tests/fixtures/router/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

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

fn message_of(e: &Failure) -> &str {
    match e {
        Failure::Transient { message, .. } | Failure::Fatal(message) => message,
    }
}

// ---- OpenAI-compatible --------------------------------------------------------------------------

#[tokio::test]
async fn openai_sends_the_exact_body_and_reads_the_tool_call() {
    let fake = Fake::start(vec![reply(200, &fixture("openai/tool_call.json"))]).await;
    let router = openai(&fake, Some(KEY));
    let resp = router
        .route(&request("You pick tools.", ToolChoice::Required))
        .await
        .unwrap();
    assert_eq!(
        resp.answer,
        Answer::Call {
            name: "read_text_file".into(),
            arguments: Some(json!({"path": "config/settings.yaml"})),
            raw_arguments: r#"{"path":"config/settings.yaml"}"#.into(),
        }
    );
    assert_eq!(
        resp.usage,
        Some(Usage {
            input_tokens: 412,
            output_tokens: 19
        })
    );

    let seen = fake.seen();
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
    assert_eq!(router.kind(), "openai");
    assert_eq!(router.endpoint_host(), fake.addr.to_string());
}

#[tokio::test]
async fn openai_text_answer_without_key_system_or_trailing_slash_trouble() {
    let fake = Fake::start(vec![reply(200, &fixture("openai/text.json"))]).await;
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
    let r = &fake.seen()[0];
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
    let fake = Fake::start(vec![
        reply_with(
            429,
            &[("Retry-After", "1")],
            &fixture("openai/error_429.json"),
        ),
        reply(200, &fixture("openai/tool_call.json")),
    ])
    .await;
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
    assert_eq!(fake.seen().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_until_attempts_run_out() {
    let body = fixture("openai/error_500.json");
    let fake = Fake::start((0..5).map(|_| reply(500, &body)).collect()).await;
    let router = openai(&fake, Some(KEY));
    let req = request("s", ToolChoice::Required);
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert_eq!(out.attempts, 4);
    assert_eq!(fake.seen().len(), 4);
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
    let fake = Fake::start(vec![
        Step::Hang(Duration::from_secs(30)),
        Step::Hang(Duration::from_secs(30)),
        reply(200, &fixture("openai/tool_call.json")),
    ])
    .await;
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
    assert_eq!(fake.seen().len(), 3);
}

#[tokio::test]
async fn connections_closed_or_refused_are_transient() {
    let fake = Fake::start(vec![Step::Close, reply(200, &fixture("openai/text.json"))]).await;
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

#[tokio::test]
async fn unparseable_success_bodies_are_malformed_answers_not_retried() {
    for (body, says) in [
        (
            r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"#,
            "not JSON",
        ),
        (fixture("openai/no_choices.json").as_str(), "no choices[0]"),
    ] {
        let fake = Fake::start(vec![reply(200, body), reply(200, body)]).await;
        let router = openai(&fake, Some(KEY));
        let req = request("s", ToolChoice::Required);
        let out = with_retry(&fast(), || router.route(&req)).await;
        assert_eq!(out.attempts, 1);
        assert_eq!(fake.seen().len(), 1);
        match out.result {
            Ok(r) => assert!(
                matches!(&r.answer, Answer::Malformed { detail } if detail.contains(says)),
                "{:?}",
                r.answer
            ),
            Err(e) => panic!("expected Malformed, got {e:?}"),
        }
    }
}

#[tokio::test]
async fn a_hallucinated_tool_name_is_returned_faithfully() {
    let fake = Fake::start(vec![reply(200, &fixture("openai/hallucinated.json"))]).await;
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
        }
    );
}

#[tokio::test]
async fn arguments_that_are_not_json_keep_the_call_and_the_raw_text() {
    let fake = Fake::start(vec![reply(200, &fixture("openai/bad_arguments.json"))]).await;
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
        }
    );
}

#[tokio::test]
async fn unauthorized_is_fatal_not_retried_and_the_echoed_key_is_redacted() {
    let body = fixture("openai/error_401_echo.json");
    let fake = Fake::start(vec![reply(401, &body), reply(401, &body)]).await;
    let router = openai(&fake, Some(KEY));
    let req = request("s", ToolChoice::Required);
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert_eq!(out.attempts, 1);
    assert_eq!(fake.seen().len(), 1);
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
    let fake = Fake::start(vec![reply(200, "proxy says: you sent {{authorization}}")]).await;
    let resp = openai(&fake, Some(KEY))
        .route(&request("s", ToolChoice::Required))
        .await
        .unwrap();
    let Answer::Malformed { detail } = resp.answer else {
        panic!("expected Malformed, got {:?}", resp.answer);
    };
    assert!(detail.contains("you sent Bearer ***"), "{detail}");
    assert!(!detail.contains(KEY), "{detail}");
}

#[tokio::test]
async fn client_errors_are_fatal_with_the_message_trimmed() {
    let long = "x".repeat(5_000);
    let body = json!({"error": {"message": format!("Invalid schema for function 'read_text_file': {long}"),
        "type": "invalid_request_error", "param": "tools[0].function.parameters", "code": null}});
    let fake = Fake::start(vec![reply(400, &body.to_string())]).await;
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
    let body = fixture("llama/unparsed_500.json");
    let quirk = || {
        reply_with(
            500,
            &[("Server", "llama.cpp"), ("Connection", "close")],
            &body,
        )
    };
    let fake = Fake::start(vec![quirk(), quirk()]).await;
    let router = openai(&fake, None);
    let req = request("s", ToolChoice::Auto);
    let out = with_retry(&fast(), || router.route(&req)).await;
    assert_eq!(out.attempts, 1);
    assert_eq!(fake.seen().len(), 1);
    let answer = out.result.unwrap().answer;
    assert!(
        matches!(&answer, Answer::Malformed { detail }
            if detail.contains("does not match the expected peg-native format")),
        "{answer:?}"
    );
}

#[tokio::test]
async fn azure_uses_the_api_key_header_and_api_version_query() {
    let fake = Fake::start(vec![reply(200, &fixture("openai/tool_call.json"))]).await;
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
    let r = &fake.seen()[0];
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
    let fake = Fake::start(vec![reply(200, &fixture("anthropic/tool_use.json"))]).await;
    let router = anthropic(&fake);
    let resp = router
        .route(&request("You pick tools.", ToolChoice::Required))
        .await
        .unwrap();
    assert_eq!(
        resp.answer,
        Answer::Call {
            name: "read_text_file".into(),
            arguments: Some(json!({"path": "config/settings.yaml"})),
            raw_arguments: r#"{"path":"config/settings.yaml"}"#.into(),
        }
    );
    assert_eq!(
        resp.usage,
        Some(Usage {
            input_tokens: 1187,
            output_tokens: 71
        })
    );
    let r = &fake.seen()[0];
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
    assert_eq!(router.kind(), "anthropic");
}

#[tokio::test]
async fn anthropic_text_only_answer_joins_text_blocks() {
    let fake = Fake::start(vec![reply(200, &fixture("anthropic/text.json"))]).await;
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
    let body = &fake.seen()[0].body;
    assert_eq!(body["tool_choice"], json!({"type": "auto"}));
    assert!(body.get("system").is_none(), "{body}");
}

#[tokio::test]
async fn anthropic_overloaded_529_is_transient_and_retried() {
    let overloaded = fixture("anthropic/overloaded_529.json");
    let fake = Fake::start(vec![
        reply(529, &overloaded),
        reply(529, &overloaded),
        reply(200, &fixture("anthropic/tool_use.json")),
    ])
    .await;
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
    let fake = Fake::start(vec![
        reply(400, &fixture("anthropic/invalid_request_400.json")),
        reply(401, &fixture("anthropic/auth_401_echo.json")),
    ])
    .await;
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
