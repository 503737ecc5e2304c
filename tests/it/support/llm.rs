//! Shared helpers for the end-to-end `driftgate check` tests: running the real binary, and a
//! loopback HTTP/1.1 server that speaks OpenAI's Chat Completions wire format and decides each
//! answer from the request itself (the prompt, the offered tools), so the answers do not depend
//! on the order in which concurrent requests arrive.
//!
//! Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

// ---- running driftgate --------------------------------------------------------------------------

/// A path inside the repository.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// What one run of the binary left behind.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout parsed as the JSON report (`--format json`).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not a JSON report ({e}); exit {}\nstdout:\n{}\nstderr:\n{}",
                self.code, self.stdout, self.stderr
            )
        })
    }

    /// For assertion messages.
    pub fn dump(&self) -> String {
        format!(
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Run driftgate in `dir` with a clean environment: no colour, no GitHub PR context, no provider
/// keys, no CI-dependent progress bar; `env` is added on top.
pub fn driftgate(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("driftgate");
    cmd.current_dir(dir)
        .env("NO_COLOR", "1")
        .env("CI", "1")
        .env_remove("GITHUB_EVENT_PATH")
        .env_remove("GITHUB_BASE_REF")
        .env_remove("DRIFTGATE_CACHE_DIR")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run driftgate");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

/// `routing.{side}_stats.{field}` of a JSON report.
pub fn stat(report: &Value, side: &str, field: &str) -> u64 {
    report["routing"][format!("{side}_stats")][field]
        .as_u64()
        .unwrap_or_else(|| panic!("routing.{side}_stats.{field} missing in the report"))
}

/// The flip of case `id`, if it flipped.
pub fn flip<'a>(report: &'a Value, id: &str) -> Option<&'a Value> {
    report["routing"]["flips"]
        .as_array()
        .expect("routing.flips")
        .iter()
        .find(|f| f["id"] == id)
}

/// Every file under `dir`, concatenated (for "the key is nowhere on disk" checks).
pub fn read_tree(dir: &Path) -> String {
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&read_tree(&p));
        } else if let Ok(text) = std::fs::read_to_string(&p) {
            out.push_str(&text);
        }
    }
    out
}

// ---- the fake OpenAI-compatible server ----------------------------------------------------------

/// What the fake does with one request.
#[derive(Debug, Clone)]
pub enum Step {
    /// Answer with this status, extra headers and body. `{{header-name}}` in the body is replaced
    /// by that request header's value, to play a server that echoes credentials back.
    Reply {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Say nothing for this long, then close: a server slower than the client's timeout.
    Hang(Duration),
}

pub fn reply(status: u16, body: impl Into<String>) -> Step {
    Step::Reply {
        status,
        headers: Vec::new(),
        body: body.into(),
    }
}

pub fn reply_with(status: u16, headers: &[(&str, &str)], body: impl Into<String>) -> Step {
    Step::Reply {
        status,
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        body: body.into(),
    }
}

/// A 200 Chat Completions body whose first choice calls `name` with `arguments` (a JSON string on
/// the wire, as OpenAI sends it).
pub fn tool_call(name: &str, arguments: &str) -> Step {
    reply(
        200,
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_767_225_600,
            "model": "m",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{
                        "id": "call_fake",
                        "type": "function",
                        "function": {"name": name, "arguments": arguments}
                    }],
                    "refusal": null,
                    "annotations": []
                },
                "logprobs": null,
                "finish_reason": "tool_calls"
            }],
            "usage": {"prompt_tokens": 400, "completion_tokens": 20, "total_tokens": 420},
            "system_fingerprint": "fp_fake"
        })
        .to_string(),
    )
}

/// A 200 Chat Completions body with a plain text answer and no tool call.
pub fn text_answer(text: &str) -> Step {
    reply(
        200,
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_767_225_600,
            "model": "m",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": null, "annotations": []},
                "logprobs": null,
                "finish_reason": "stop"
            }],
            "usage": {"prompt_tokens": 380, "completion_tokens": 12, "total_tokens": 392},
            "system_fingerprint": "fp_fake"
        })
        .to_string(),
    )
}

/// OpenAI's error envelope.
pub fn error_body(message: &str, kind: &str) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}}).to_string()
}

/// One request as the fake received it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Names lowercased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// How many identical requests (same method, target and body bytes) came before this one:
    /// 0 for the first attempt, 1 for the first retry, …
    pub nth: usize,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The last user message.
    pub fn prompt(&self) -> &str {
        self.body["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
    }

    /// Names of the offered functions, in the order offered.
    pub fn tool_names(&self) -> Vec<&str> {
        self.body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t["function"]["name"].as_str())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The description of offered function `name`.
    pub fn tool_description(&self, name: &str) -> Option<&str> {
        self.body["tools"]
            .as_array()?
            .iter()
            .find(|t| t["function"]["name"] == name)?["function"]["description"]
            .as_str()
    }
}

type Handler = dyn Fn(&Request) -> Step + Send + Sync;
/// Method, target and body bytes: what makes two requests "the same request" (a retry).
type RequestKey = (String, String, Vec<u8>);

struct Shared {
    handler: Box<Handler>,
    seen: Mutex<Vec<Request>>,
    counts: Mutex<HashMap<RequestKey, usize>>,
}

/// A loopback HTTP/1.1 server on its own thread and runtime, so tests can run the driftgate
/// binary synchronously while it answers. `POST …/chat/completions` goes to the handler; anything
/// else is a 404. It lives until the test process exits.
pub struct FakeLlm {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl FakeLlm {
    pub fn start(handler: impl Fn(&Request) -> Step + Send + Sync + 'static) -> FakeLlm {
        let shared = Arc::new(Shared {
            handler: Box::new(handler),
            seen: Mutex::new(Vec::new()),
            counts: Mutex::new(HashMap::new()),
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let s = shared.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("fake server runtime");
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                tx.send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                loop {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    tokio::spawn(serve(stream, s.clone()));
                }
            });
        });
        let addr = rx.recv().expect("fake server started");
        FakeLlm { addr, shared }
    }

    /// What `--base-url` takes.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// Requests whose last user message contains `needle`.
    pub fn requests_for(&self, needle: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.prompt().contains(needle))
            .collect()
    }
}

/// Serve requests on one (keep-alive) connection until the client closes it or a step hangs.
async fn serve(stream: TcpStream, shared: Arc<Shared>) {
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
            let Some((k, v)) = line.split_once(':') else {
                return;
            };
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let length: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if stream.read_exact(&mut body).await.is_err() {
            return;
        }
        let nth = {
            let mut counts = shared.counts.lock().unwrap();
            let n = counts
                .entry((method.clone(), target.clone(), body.clone()))
                .or_insert(0);
            *n += 1;
            *n - 1
        };
        let request = Request {
            method,
            target,
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            nth,
        };
        shared.seen.lock().unwrap().push(request.clone());
        let step = if request.method == "POST" && request.target.ends_with("/chat/completions") {
            (shared.handler)(&request)
        } else {
            reply(
                404,
                error_body("fake: unknown endpoint", "invalid_request_error"),
            )
        };
        match step {
            Step::Reply {
                status,
                headers,
                mut body,
            } => {
                for (k, v) in &request.headers {
                    body = body.replace(&format!("{{{{{k}}}}}"), v);
                }
                let mut head = format!(
                    "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
                    reason(status),
                    body.len()
                );
                for (k, v) in headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let out = stream.get_mut();
                if out.write_all(head.as_bytes()).await.is_err()
                    || out.write_all(body.as_bytes()).await.is_err()
                    || out.flush().await.is_err()
                {
                    return;
                }
            }
            Step::Hang(d) => {
                tokio::time::sleep(d).await;
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
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
