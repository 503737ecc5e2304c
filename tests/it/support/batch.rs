//! The providers' batch APIs on the fake, stateful as the real ones, in their exact wire formats:
//! OpenAI's Batch API (`POST /v1/files` multipart with purpose `batch`, `POST /v1/batches`,
//! `GET /v1/batches/{id}` moving validating → in_progress → finalizing → completed, `GET
//! /v1/files/{id}/content` with the output and error JSONL) and Anthropic's Message Batches (`POST
//! /v1/messages/batches`, `GET …/{id}` in_progress → ended with a `results_url`, `GET …/{id}/results`
//! JSONL). Each item is answered by the same per-request handler a live test uses, so a batch
//! answers exactly what the live endpoint would. [`Control`] scripts the faults: a batch that takes
//! longer, one that fails, items that error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::fake::{Fake, Request, Step};
use super::openai::error_body;

/// What the fake batch service does; change it between runs of one test.
#[derive(Default)]
pub struct Control {
    /// Polls of a batch before it ends (0: ended at the first poll).
    pub polls_to_finish: AtomicUsize,
    /// `Some(message)`: the next batches fail validation with it.
    pub fail: Mutex<Option<String>>,
    /// Items whose prompt contains one of these come back errored.
    pub item_errors: Mutex<Vec<String>>,
    /// Batches created so far, with their item count.
    pub created: Mutex<Vec<(String, usize)>>,
    /// Answer every poll with this raw 200 body (a broken proxy) while set.
    pub garbage_polls: Mutex<Option<String>>,
}

impl Control {
    pub fn created(&self) -> Vec<(String, usize)> {
        self.created.lock().unwrap().clone()
    }
}

struct Batch {
    /// (custom_id, body) in the order submitted.
    items: Vec<(String, Value)>,
    polls: usize,
    failed: Option<String>,
}

#[derive(Default)]
struct State {
    files: HashMap<String, Vec<Value>>,
    batches: HashMap<String, Batch>,
    next: usize,
}

type Answer = dyn Fn(&Request) -> Step + Send + Sync;

/// A synthetic chat request carrying `body`, for the live handler.
fn as_chat_request(path: &str, body: &Value) -> Request {
    Request {
        method: "POST".into(),
        target: path.into(),
        headers: Vec::new(),
        body: body.clone(),
        raw: body.to_string().into_bytes(),
        index: 0,
        nth: 0,
    }
}

fn not_found(what: &str) -> Step {
    Step::reply(
        404,
        error_body(&format!("fake: no such {what}"), "invalid_request_error"),
    )
}

/// The last user message of a Chat Completions or Messages body (string content or text blocks).
fn prompt_of(body: &Value) -> String {
    let m = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"));
    match m.map(|m| &m["content"]) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// The file part of a multipart/form-data body, and its `purpose` field.
fn multipart(req: &Request) -> Option<(String, String)> {
    let ct = req.header("content-type")?;
    let boundary = ct.split("boundary=").nth(1)?.trim_matches('"');
    let text = String::from_utf8_lossy(&req.raw);
    let delim = format!("--{boundary}");
    let mut purpose = None;
    let mut file = None;
    for part in text.split(&delim) {
        let Some((head, body)) = part.split_once("\r\n\r\n") else {
            continue;
        };
        let body = body.strip_suffix("\r\n").unwrap_or(body);
        if head.contains("name=\"purpose\"") {
            purpose = Some(body.to_string());
        } else if head.contains("name=\"file\"") {
            file = Some(body.to_string());
        }
    }
    Some((purpose?, file?))
}

/// OpenAI's Batch API; `answer` is the live Chat Completions handler.
pub fn openai(answer: impl Fn(&Request) -> Step + Send + Sync + 'static) -> (Fake, Arc<Control>) {
    let control = Arc::new(Control::default());
    let state = Arc::new(Mutex::new(State::default()));
    let answer: Arc<Answer> = Arc::new(answer);
    let c = control.clone();
    let fake = Fake::handler(move |req| openai_route(req, &state, &c, answer.as_ref()));
    (fake, control)
}

fn openai_batch_object(id: &str, b: &Batch, status: &str) -> Value {
    let total = b.items.len();
    let done = matches!(status, "completed");
    json!({
        "id": id,
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "errors": b.failed.as_ref().map(|m| json!({"object": "list", "data": [{"code": "invalid_request", "message": m, "param": null, "line": 1}]})),
        "input_file_id": format!("file-in-{id}"),
        "completion_window": "24h",
        "status": status,
        "output_file_id": done.then(|| format!("file-out-{id}")),
        "error_file_id": done.then(|| format!("file-err-{id}")),
        "created_at": 1_767_225_600,
        "in_progress_at": null,
        "expires_at": 1_767_312_000,
        "completed_at": null,
        "request_counts": {"total": total, "completed": if done { total } else { 0 }, "failed": 0},
        "metadata": {"created_by": "driftgate"}
    })
}

fn openai_route(req: &Request, state: &Mutex<State>, c: &Control, answer: &Answer) -> Step {
    let path = req.path().to_string();
    let mut st = state.lock().unwrap();
    match (req.method.as_str(), path.as_str()) {
        ("POST", "/v1/files") => {
            let Some((purpose, file)) = multipart(req) else {
                return Step::reply(
                    400,
                    error_body(
                        "fake: expected multipart/form-data with purpose and file",
                        "invalid_request_error",
                    ),
                );
            };
            if purpose != "batch" {
                return Step::reply(
                    400,
                    error_body("fake: purpose must be batch", "invalid_request_error"),
                );
            }
            let mut lines = Vec::new();
            for (n, line) in file.lines().enumerate() {
                match serde_json::from_str::<Value>(line) {
                    Ok(v) => lines.push(v),
                    Err(e) => {
                        return Step::reply(
                            400,
                            error_body(
                                &format!("fake: line {} is not JSON: {e}", n + 1),
                                "invalid_request_error",
                            ),
                        );
                    }
                }
            }
            st.next += 1;
            let id = format!("file-{}", st.next);
            let bytes = file.len();
            st.files.insert(id.clone(), lines);
            Step::reply(
                200,
                json!({"object": "file", "id": id, "purpose": "batch", "filename": "driftgate-batch.jsonl",
                    "bytes": bytes, "created_at": 1_767_225_600, "expires_at": null, "status": "processed", "status_details": null})
                .to_string(),
            )
        }
        ("POST", "/v1/batches") => {
            let b = &req.body;
            if b["endpoint"] != "/v1/chat/completions" || b["completion_window"] != "24h" {
                return Step::reply(
                    400,
                    error_body(
                        "fake: endpoint must be /v1/chat/completions and completion_window 24h",
                        "invalid_request_error",
                    ),
                );
            }
            let Some(lines) = b["input_file_id"]
                .as_str()
                .and_then(|f| st.files.get(f))
                .cloned()
            else {
                return not_found("file");
            };
            // Validation as the API does it: every line a POST to the batch's endpoint, ids unique.
            let mut seen = std::collections::HashSet::new();
            let mut failed = c.fail.lock().unwrap().clone();
            let mut items = Vec::new();
            for l in &lines {
                let id = l["custom_id"].as_str().unwrap_or_default().to_string();
                if l["method"] != "POST"
                    || l["url"] != "/v1/chat/completions"
                    || !l["body"].is_object()
                {
                    failed.get_or_insert_with(|| {
                        format!("line for {id:?} is not a POST to /v1/chat/completions with a body")
                    });
                }
                if !seen.insert(id.clone()) {
                    failed.get_or_insert_with(|| format!("duplicate custom_id {id:?}"));
                }
                items.push((id, l["body"].clone()));
            }
            st.next += 1;
            let id = format!("batch_{}", st.next);
            c.created.lock().unwrap().push((id.clone(), items.len()));
            let batch = Batch {
                items,
                polls: 0,
                failed,
            };
            let obj = openai_batch_object(&id, &batch, "validating");
            st.batches.insert(id, batch);
            Step::reply(200, obj.to_string())
        }
        ("GET", p) if p.starts_with("/v1/batches/") => {
            if let Some(g) = c.garbage_polls.lock().unwrap().clone() {
                return Step::reply(200, g);
            }
            let id = p.trim_start_matches("/v1/batches/").to_string();
            let finish = c.polls_to_finish.load(Ordering::SeqCst);
            let Some(b) = st.batches.get_mut(&id) else {
                return not_found("batch");
            };
            b.polls += 1;
            let status = if b.failed.is_some() {
                "failed"
            } else if b.polls > finish {
                "completed"
            } else if b.polls == 1 {
                "validating"
            } else if b.polls == finish {
                "finalizing"
            } else {
                "in_progress"
            };
            let b = &st.batches[&id];
            Step::reply(200, openai_batch_object(&id, b, status).to_string())
        }
        ("GET", p) if p.starts_with("/v1/files/") && p.ends_with("/content") => {
            let file = p
                .trim_start_matches("/v1/files/")
                .trim_end_matches("/content");
            let (errors, id) = match (
                file.strip_prefix("file-out-"),
                file.strip_prefix("file-err-"),
            ) {
                (Some(id), _) => (false, id),
                (_, Some(id)) => (true, id),
                _ => return not_found("file"),
            };
            let Some(b) = st.batches.get(id) else {
                return not_found("file");
            };
            let failing = c.item_errors.lock().unwrap().clone();
            let mut out = String::new();
            for (n, (custom, body)) in b.items.iter().enumerate() {
                let fails = failing.iter().any(|f| prompt_of(body).contains(f.as_str()));
                let line = if fails {
                    if !errors {
                        continue;
                    }
                    json!({"id": format!("batch_req_{n}"), "custom_id": custom,
                        "response": {"status_code": 400, "request_id": format!("req_{n}"),
                            "body": serde_json::from_str::<Value>(&error_body("fake: this request was refused", "invalid_request_error")).unwrap()},
                        "error": null})
                } else {
                    if errors {
                        continue;
                    }
                    let step = answer(&as_chat_request("/v1/chat/completions", body));
                    json!({"id": format!("batch_req_{n}"), "custom_id": custom,
                        "response": {"status_code": step.status(), "request_id": format!("req_{n}"),
                            "body": serde_json::from_str::<Value>(&step.body_text()).unwrap_or(Value::Null)},
                        "error": null})
                };
                out.push_str(&line.to_string());
                out.push('\n');
            }
            Step::reply(200, out).header("content-type", "application/octet-stream")
        }
        _ => not_found("endpoint"),
    }
}

/// Anthropic's Message Batches; `answer` is the live Messages handler.
pub fn anthropic(
    answer: impl Fn(&Request) -> Step + Send + Sync + 'static,
) -> (Fake, Arc<Control>) {
    let control = Arc::new(Control::default());
    let state = Arc::new(Mutex::new(State::default()));
    let answer: Arc<Answer> = Arc::new(answer);
    let c = control.clone();
    let addr = Arc::new(Mutex::new(String::new()));
    let a = addr.clone();
    let fake = Fake::handler(move |req| {
        let origin = a.lock().unwrap().clone();
        anthropic_route(req, &state, &c, answer.as_ref(), &origin)
    });
    *addr.lock().unwrap() = fake.url("");
    (fake, control)
}

fn anthropic_batch_object(id: &str, b: &Batch, ended: bool, origin: &str) -> Value {
    let n = b.items.len();
    json!({
        "id": id,
        "type": "message_batch",
        "processing_status": if ended { "ended" } else { "in_progress" },
        "request_counts": {
            "processing": if ended { 0 } else { n },
            "succeeded": if ended { n } else { 0 },
            "errored": 0, "canceled": 0, "expired": 0
        },
        "ended_at": if ended { json!("2026-12-02T08:00:00Z") } else { Value::Null },
        "created_at": "2026-12-02T07:00:00Z",
        "expires_at": "2026-12-03T07:00:00Z",
        "archived_at": null,
        "cancel_initiated_at": null,
        "results_url": if ended { json!(format!("{origin}/v1/messages/batches/{id}/results")) } else { Value::Null }
    })
}

fn anthropic_error(status: u16, kind: &str, message: &str) -> Step {
    Step::reply(
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}}).to_string(),
    )
}

fn anthropic_route(
    req: &Request,
    state: &Mutex<State>,
    c: &Control,
    answer: &Answer,
    origin: &str,
) -> Step {
    if req.header("anthropic-version").is_none() {
        return anthropic_error(
            400,
            "invalid_request_error",
            "anthropic-version header is required",
        );
    }
    let path = req.path().to_string();
    let mut st = state.lock().unwrap();
    match (req.method.as_str(), path.as_str()) {
        ("POST", "/v1/messages/batches") => {
            let Some(requests) = req.body["requests"].as_array() else {
                return anthropic_error(400, "invalid_request_error", "requests: Field required");
            };
            if let Some(m) = c.fail.lock().unwrap().clone() {
                return anthropic_error(400, "invalid_request_error", &m);
            }
            let mut items = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for r in requests {
                let id = r["custom_id"].as_str().unwrap_or_default();
                let valid = (1..=64).contains(&id.len())
                    && id
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if !valid || !seen.insert(id.to_string()) {
                    return anthropic_error(
                        400,
                        "invalid_request_error",
                        &format!(
                            "requests: custom_id {id:?} must be unique and match ^[a-zA-Z0-9_-]{{1,64}}$"
                        ),
                    );
                }
                let p = &r["params"];
                if !p["model"].is_string() || !p["max_tokens"].is_u64() || !p["messages"].is_array()
                {
                    return anthropic_error(
                        400,
                        "invalid_request_error",
                        "params: model, max_tokens and messages are required",
                    );
                }
                items.push((id.to_string(), p.clone()));
            }
            st.next += 1;
            let id = format!("msgbatch_01Fake{}", st.next);
            c.created.lock().unwrap().push((id.clone(), items.len()));
            let b = Batch {
                items,
                polls: 0,
                failed: None,
            };
            let obj = anthropic_batch_object(&id, &b, false, origin);
            st.batches.insert(id, b);
            Step::reply(200, obj.to_string())
        }
        ("GET", p) if p.starts_with("/v1/messages/batches/") && p.ends_with("/results") => {
            let id = p
                .trim_start_matches("/v1/messages/batches/")
                .trim_end_matches("/results");
            let Some(b) = st.batches.get(id) else {
                return anthropic_error(404, "not_found_error", "batch not found");
            };
            let failing = c.item_errors.lock().unwrap().clone();
            let mut out = String::new();
            for (custom, params) in &b.items {
                let line = if failing
                    .iter()
                    .any(|f| prompt_of(params).contains(f.as_str()))
                {
                    json!({"custom_id": custom, "result": {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "fake: this request was refused"}}}})
                } else {
                    let step = answer(&as_chat_request("/v1/messages", params));
                    json!({"custom_id": custom, "result": {"type": "succeeded",
                        "message": serde_json::from_str::<Value>(&step.body_text()).unwrap_or(Value::Null)}})
                };
                out.push_str(&line.to_string());
                out.push('\n');
            }
            Step::reply(200, out).header("content-type", "application/binary")
        }
        ("GET", p) if p.starts_with("/v1/messages/batches/") => {
            if let Some(g) = c.garbage_polls.lock().unwrap().clone() {
                return Step::reply(200, g);
            }
            let id = p.trim_start_matches("/v1/messages/batches/").to_string();
            let finish = c.polls_to_finish.load(Ordering::SeqCst);
            let Some(b) = st.batches.get_mut(&id) else {
                return anthropic_error(404, "not_found_error", "batch not found");
            };
            b.polls += 1;
            let ended = b.polls > finish;
            let b = &st.batches[&id];
            Step::reply(
                200,
                anthropic_batch_object(&id, b, ended, origin).to_string(),
            )
        }
        _ => anthropic_error(404, "not_found_error", "fake: unknown endpoint"),
    }
}
