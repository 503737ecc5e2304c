//! OpenAI's wire formats on the fake: Chat Completions answers (a tool call, text, the error
//! envelope), the recorded fixtures of `tests/fixtures/router/openai/`, a chat server that routes like
//! the API (`POST …/chat/completions`, else 404), accessors for what a chat request asked, and
//! OpenAI-compatible embeddings.

use serde_json::{Value, json};

use super::fake::{Fake, Request, Step};

/// A 200 Chat Completions answer, shaped as OpenAI sends it.
pub struct Completion {
    message: Value,
    finish_reason: &'static str,
    model: String,
    usage: (u64, u64),
    /// `prompt_tokens_details.cached_tokens`, sent when set (as the API does for cached models).
    cached: Option<u64>,
}

impl Completion {
    /// The assistant answers `content` as text.
    pub fn text(content: &str) -> Completion {
        Completion {
            message: json!({"role": "assistant", "content": content, "refusal": null, "annotations": []}),
            finish_reason: "stop",
            model: "m".into(),
            usage: (380, 12),
            cached: None,
        }
    }

    /// The assistant calls `name` with `arguments` (a JSON string on the wire, as OpenAI sends
    /// it).
    pub fn tool_call(name: &str, arguments: &str) -> Completion {
        Completion {
            message: json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_fake",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments}
                }],
                "refusal": null,
                "annotations": []
            }),
            finish_reason: "tool_calls",
            model: "m".into(),
            usage: (400, 20),
            cached: None,
        }
    }

    pub fn model(mut self, model: &str) -> Completion {
        self.model = model.into();
        self
    }

    /// Prompt and completion tokens.
    pub fn usage(mut self, prompt: u64, completion: u64) -> Completion {
        self.usage = (prompt, completion);
        self
    }

    /// Of the prompt tokens, `n` read from the prompt cache.
    pub fn cached(mut self, n: u64) -> Completion {
        self.cached = Some(n);
        self
    }

    pub fn body(&self) -> String {
        let (p, c) = self.usage;
        let mut usage = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
        if let Some(n) = self.cached {
            usage["prompt_tokens_details"] = json!({"cached_tokens": n, "audio_tokens": 0});
            usage["completion_tokens_details"] = json!({"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0});
        }
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_767_225_600,
            "model": self.model,
            "choices": [{
                "index": 0,
                "message": self.message,
                "logprobs": null,
                "finish_reason": self.finish_reason
            }],
            "usage": usage,
            "system_fingerprint": "fp_fake"
        })
        .to_string()
    }
}

impl From<Completion> for Step {
    fn from(c: Completion) -> Step {
        Step::reply(200, c.body())
    }
}

/// A 200 whose first choice calls `name` with `arguments` (400 prompt, 20 completion tokens).
pub fn tool_call(name: &str, arguments: &str) -> Step {
    Completion::tool_call(name, arguments).into()
}

/// A 200 with a plain text answer and no tool call (380 prompt, 12 completion tokens).
pub fn text_answer(text: &str) -> Step {
    Completion::text(text).into()
}

/// OpenAI's error envelope.
pub fn error_body(message: &str, kind: &str) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}}).to_string()
}

/// `tests/fixtures/router/openai/{name}`, a recorded OpenAI body, answered with `status`;
/// `{{header}}` placeholders in it echo the request's headers.
pub fn fixture(status: u16, name: &str) -> Step {
    Step::reply(status, super::router_fixture(&format!("openai/{name}"))).echo_headers()
}

/// A Chat Completions server: `POST …/chat/completions` goes to `handler`; anything else is a
/// 404 in OpenAI's envelope.
pub fn chat_server(handler: impl Fn(&Request) -> Step + Send + Sync + 'static) -> Fake {
    Fake::handler(move |req| {
        if req.method == "POST" && req.target.ends_with("/chat/completions") {
            handler(req)
        } else {
            Step::reply(
                404,
                error_body("fake: unknown endpoint", "invalid_request_error"),
            )
        }
    })
}

impl Fake {
    /// What `--base-url` takes.
    pub fn base_url(&self) -> String {
        self.url("/v1")
    }

    /// Chat requests whose last user message contains `needle`.
    pub fn requests_for(&self, needle: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.prompt().contains(needle))
            .collect()
    }
}

/// What a Chat Completions request asked.
impl Request {
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

/// A 200 embeddings answer for whatever `req` asked, in OpenAI's shape: vector i is
/// `[len(text), i + 1, 0]` (not unit length), rows in reverse index order.
pub fn embeddings(req: &Request) -> Step {
    let inputs = req.body["input"].as_array().expect("input array");
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| {
            json!({"object": "embedding", "index": i,
                "embedding": [t.as_str().unwrap().len() as f32, (i + 1) as f32, 0.0]})
        })
        .collect();
    Step::reply(
        200,
        json!({"object": "list", "data": data, "model": req.body["model"],
            "usage": {"prompt_tokens": inputs.len(), "total_tokens": inputs.len()}})
        .to_string(),
    )
}
