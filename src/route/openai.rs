//! OpenAI-compatible Chat Completions: api.openai.com, Azure OpenAI, llama.cpp's `llama-server`,
//! vLLM, Ollama and the other servers that speak `POST …/chat/completions` with `tools`.
//!
//! llama.cpp quirk: when the model's output does not fit the tool-call format, `llama-server`
//! answers HTTP 500 "The model produced output that does not match the expected … format" (seen
//! with `tool_choice: "auto"` on chit-chat prompts). That is the model failing, not the server:
//! at temperature 0 a retry returns the same 500, so it is reported as `Answer::Malformed` and
//! never retried. Any other 500 stays a transient server error.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::keys::{Secret, clean_message, scrub};
use super::retry::{self, Reply};
use super::{Answer, RouteError, RouteRequest, RouteResponse, Router, ToolChoice, Usage};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Where the key goes: OpenAI and most compatible servers take `Authorization: Bearer`, Azure
/// OpenAI an `api-key` header plus a mandatory `api-version` query parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Flavour {
    OpenAi,
    Azure { api_version: String },
}

#[derive(Debug, Clone)]
pub struct OpenAiRouter {
    client: reqwest::Client,
    base: reqwest::Url,
    endpoint: reqwest::Url,
    host: String,
    model: String,
    api_key: Option<Secret>,
    flavour: Flavour,
    timeout: Duration,
}

impl OpenAiRouter {
    /// `base_url` is everything before `/chat/completions`, with or without a trailing slash:
    /// `https://api.openai.com/v1` (the default), `http://127.0.0.1:8080/v1`. `api_key` is sent
    /// as `Authorization: Bearer`; `None` sends no auth header (local servers). `timeout` bounds
    /// each request as a whole.
    pub fn new(
        base_url: Option<&str>,
        model: &str,
        api_key: Option<Secret>,
        timeout: Duration,
    ) -> crate::Result<OpenAiRouter> {
        let base = retry::parse_base_url(base_url.unwrap_or(DEFAULT_BASE_URL))?;
        if let Some(key) = &api_key {
            retry::secret_header(&format!("Bearer {}", key.expose()))?;
        }
        let mut router = OpenAiRouter {
            client: retry::client(timeout)?,
            host: retry::host_of(&base),
            endpoint: base.clone(),
            base,
            model: model.to_string(),
            api_key,
            flavour: Flavour::OpenAi,
            timeout,
        };
        router.endpoint = router.build_endpoint();
        Ok(router)
    }

    /// Azure OpenAI: `base_url` is the deployment URL
    /// (`https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT`), the key is sent as
    /// `api-key`, and `?api-version=` is added (replacing one already in the URL).
    pub fn azure(mut self, api_version: &str) -> crate::Result<OpenAiRouter> {
        let api_version = api_version.trim();
        if api_version.is_empty() {
            return Err(crate::Error::Usage(
                "Azure OpenAI needs an API version (e.g. 2024-10-21)".into(),
            ));
        }
        if let Some(key) = &self.api_key {
            retry::secret_header(key.expose())?;
        }
        self.flavour = Flavour::Azure {
            api_version: api_version.to_string(),
        };
        self.endpoint = self.build_endpoint();
        Ok(self)
    }

    /// The URL requests are POSTed to.
    pub fn endpoint(&self) -> &reqwest::Url {
        &self.endpoint
    }

    fn build_endpoint(&self) -> reqwest::Url {
        let mut url = retry::join_path(&self.base, "chat/completions");
        if let Flavour::Azure { api_version } = &self.flavour {
            let kept: Vec<(String, String)> = url
                .query_pairs()
                .filter(|(k, _)| k != "api-version")
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect();
            url.query_pairs_mut()
                .clear()
                .extend_pairs(kept)
                .append_pair("api-version", api_version);
        }
        url
    }

    fn auth_header(&self) -> Option<(HeaderName, HeaderValue)> {
        let key = self.api_key.as_ref()?;
        // Validated in the constructors, so this cannot fail here.
        let header = match self.flavour {
            Flavour::OpenAi => (
                AUTHORIZATION,
                retry::secret_header(&format!("Bearer {}", key.expose())).ok()?,
            ),
            Flavour::Azure { .. } => (
                HeaderName::from_static("api-key"),
                retry::secret_header(key.expose()).ok()?,
            ),
        };
        Some(header)
    }

    /// The exact JSON body sent for `req`.
    pub fn request_body(&self, req: &RouteRequest) -> Value {
        let mut messages = Vec::with_capacity(req.messages.len() + 1);
        if !req.system.is_empty() {
            messages.push(json!({"role": "system", "content": req.system}));
        }
        for m in &req.messages {
            messages.push(json!({"role": m.role, "content": m.content}));
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("messages".into(), Value::Array(messages));
        // OpenAI rejects an empty `tools` array and a `tool_choice` without tools; a side with no
        // tools left is still a valid question (the answer can only be text).
        if !req.tools.is_empty() {
            let tools = req
                .tools
                .iter()
                .map(|t| {
                    let mut function = Map::new();
                    function.insert("name".into(), json!(t.name));
                    if let Some(d) = &t.description {
                        function.insert("description".into(), json!(d));
                    }
                    function.insert("parameters".into(), t.input_schema.clone());
                    json!({"type": "function", "function": function})
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            let choice = match req.tool_choice {
                ToolChoice::Auto => "auto",
                ToolChoice::Required => "required",
            };
            body.insert("tool_choice".into(), json!(choice));
            // Only the first call is read; asking for one keeps models from splitting intent.
            // llama.cpp accepts the field too (measured, see docs/llm-server.md).
            body.insert("parallel_tool_calls".into(), json!(false));
        }
        body.insert(
            "temperature".into(),
            retry::f32_json(req.sampling.temperature),
        );
        if let Some(seed) = req.sampling.seed {
            body.insert("seed".into(), json!(seed));
        }
        body.insert("max_tokens".into(), json!(req.sampling.max_tokens));
        Value::Object(body)
    }

    async fn exchange(&self, req: &RouteRequest) -> Result<RouteResponse, RouteError> {
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .json(&self.request_body(req));
        if let Some((name, value)) = self.auth_header() {
            request = request.header(name, value);
        }
        let reply = retry::send(request, self.timeout).await?;
        let latency_ms = reply.latency.as_millis() as u64;
        if !reply.status.is_success() {
            if let Some(detail) = llama_unparsed_output(&reply) {
                return Ok(RouteResponse {
                    answer: Answer::Malformed { detail },
                    usage: None,
                    latency_ms,
                });
            }
            return Err(retry::http_error(&reply));
        }
        let (answer, usage) = read_reply(&reply);
        Ok(RouteResponse {
            answer,
            usage,
            latency_ms,
        })
    }

    fn with_context(&self, e: RouteError) -> RouteError {
        e.with_prefix(&format!("openai {}", self.host))
    }
}

#[async_trait::async_trait]
impl Router for OpenAiRouter {
    fn kind(&self) -> &str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn endpoint_host(&self) -> String {
        self.host.clone()
    }

    async fn route(&self, req: &RouteRequest) -> Result<RouteResponse, RouteError> {
        let result = self.exchange(req).await.map_err(|e| self.with_context(e));
        scrub(result, self.api_key.as_slice())
    }
}

/// `Some(detail)` when `reply` is llama.cpp's HTTP 500 for model output it could not parse as a
/// tool call (see the module docs); `None` for every other failure.
fn llama_unparsed_output(reply: &Reply) -> Option<String> {
    if reply.status.as_u16() != 500 {
        return None;
    }
    let message = retry::provider_error_message(&reply.body);
    let unparsed = message.contains("does not match the expected")
        || message.contains("Failed to parse tool call arguments");
    unparsed.then(|| {
        format!("the server could not read the model's output as a tool call (HTTP 500): {message}")
    })
}

/// The answer and usage of a 2xx Chat Completions body; anything unreadable is `Malformed`.
fn read_reply(reply: &Reply) -> (Answer, Option<Usage>) {
    let value: Value = match serde_json::from_str(&reply.body) {
        Ok(v) => v,
        Err(e) => {
            let cut = if reply.truncated {
                " (body cut at the size limit)"
            } else {
                ""
            };
            let detail = format!(
                "{} body is not JSON{cut} ({e}): {}",
                retry::status_text(reply.status),
                clean_message(&reply.body, &[])
            );
            return (Answer::Malformed { detail }, None);
        }
    };
    (read_answer(&value), read_usage(&value))
}

/// `choices[0].message`: its first tool call, else its text.
pub(crate) fn read_answer(value: &Value) -> Answer {
    let malformed = |detail: String| Answer::Malformed { detail };
    let Some(choice) = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        // Some proxies answer 200 with an error body.
        return match value.get("error") {
            Some(_) => malformed(format!(
                "error in a successful response: {}",
                retry::provider_error_message(&value.to_string())
            )),
            None => malformed(format!(
                "no choices[0] in the response: {}",
                clean_message(&value.to_string(), &[])
            )),
        };
    };
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return malformed("choices[0] has no message object".into());
    };
    let first_call = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .and_then(|calls| calls.first());
    if let Some(call) = first_call {
        return read_call(call.get("function").unwrap_or(&Value::Null));
    }
    // The pre-`tools` API, still spoken by some compatible servers.
    if let Some(call) = message.get("function_call").filter(|c| c.is_object()) {
        return read_call(call);
    }
    match message.get("content") {
        Some(Value::String(s)) => Answer::NoCall { text: s.clone() },
        Some(Value::Array(parts)) => Answer::NoCall {
            text: parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        },
        None | Some(Value::Null) => Answer::NoCall {
            // A refusal is the model's text answer.
            text: message
                .get("refusal")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        },
        Some(other) => malformed(format!(
            "choices[0].message.content is a {}",
            crate::tools::json_kind(other)
        )),
    }
}

/// `{name, arguments}` of one call. `arguments` is a JSON string on the wire; a few servers send
/// the object itself, which is accepted.
fn read_call(function: &Value) -> Answer {
    let Some(name) = function.get("name").and_then(Value::as_str) else {
        return Answer::Malformed {
            detail: "tool call without a function name".into(),
        };
    };
    let (arguments, raw_arguments) = match function.get("arguments") {
        None | Some(Value::Null) => (None, String::new()),
        Some(Value::String(raw)) => (
            serde_json::from_str::<Value>(raw)
                .ok()
                .filter(Value::is_object),
            raw.clone(),
        ),
        Some(v) => (Some(v.clone()).filter(Value::is_object), v.to_string()),
    };
    Answer::Call {
        name: name.to_string(),
        arguments,
        raw_arguments,
    }
}

fn read_usage(value: &Value) -> Option<Usage> {
    let usage = value.get("usage")?;
    Some(Usage {
        input_tokens: usage.get("prompt_tokens")?.as_u64()?,
        output_tokens: usage.get("completion_tokens")?.as_u64()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(v: Value) -> Answer {
        read_answer(&v)
    }

    #[test]
    fn endpoint_with_and_without_trailing_slash() {
        let t = Duration::from_secs(1);
        for base in ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"] {
            let r = OpenAiRouter::new(Some(base), "m", None, t).unwrap();
            assert_eq!(
                r.endpoint().as_str(),
                "http://127.0.0.1:8080/v1/chat/completions"
            );
            assert_eq!(r.endpoint_host(), "127.0.0.1:8080");
        }
        let r = OpenAiRouter::new(None, "gpt-4o-mini", None, t).unwrap();
        assert_eq!(
            r.endpoint().as_str(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(r.endpoint_host(), "api.openai.com");
    }

    #[test]
    fn azure_adds_or_replaces_the_api_version() {
        let t = Duration::from_secs(1);
        let base = "https://res.openai.azure.com/openai/deployments/gpt4o/?api-version=old&x=1";
        let r = OpenAiRouter::new(Some(base), "gpt-4o", None, t)
            .unwrap()
            .azure("2024-10-21")
            .unwrap();
        assert_eq!(
            r.endpoint().as_str(),
            "https://res.openai.azure.com/openai/deployments/gpt4o/chat/completions?x=1&api-version=2024-10-21"
        );
        let r = OpenAiRouter::new(Some(base), "gpt-4o", None, t).unwrap();
        assert!(r.azure(" ").is_err());
    }

    #[test]
    fn bad_base_urls_and_keys_are_usage_errors_that_do_not_echo_the_key() {
        let t = Duration::from_secs(1);
        for bad in [
            "ftp://x/v1",
            "not a url",
            "http://user:pw@host/v1",
            "/v1",
            "http://a/v1#x",
        ] {
            assert!(OpenAiRouter::new(Some(bad), "m", None, t).is_err(), "{bad}");
        }
        let e = OpenAiRouter::new(None, "m", Some(Secret::new("sk-1\n2")), t).unwrap_err();
        assert!(!e.to_string().contains("sk-1"), "{e}");
    }

    #[test]
    fn first_tool_call_wins_and_arguments_parse_only_as_objects() {
        let call = |args: Value| {
            answer(json!({"choices":[{"message":{"tool_calls":[
                {"function":{"name":"a","arguments":args}},
                {"function":{"name":"b","arguments":"{}"}}]}}]}))
        };
        assert_eq!(
            call(json!("{\"path\":\"x\"}")),
            Answer::Call {
                name: "a".into(),
                arguments: Some(json!({"path":"x"})),
                raw_arguments: "{\"path\":\"x\"}".into()
            }
        );
        for raw in ["{path: x}", "[1]", "null", ""] {
            assert_eq!(
                call(json!(raw)),
                Answer::Call {
                    name: "a".into(),
                    arguments: None,
                    raw_arguments: raw.into()
                },
                "{raw:?}"
            );
        }
        // Object instead of string: accepted.
        assert_eq!(
            call(json!({"n": 1})),
            Answer::Call {
                name: "a".into(),
                arguments: Some(json!({"n":1})),
                raw_arguments: "{\"n\":1}".into()
            }
        );
    }

    #[test]
    fn text_answers_refusals_and_legacy_function_calls() {
        assert_eq!(
            answer(json!({"choices":[{"message":{"content":"hi","tool_calls":[]}}]})),
            Answer::NoCall { text: "hi".into() }
        );
        assert_eq!(
            answer(json!({"choices":[{"message":{"content":null,"refusal":"no"}}]})),
            Answer::NoCall { text: "no".into() }
        );
        assert_eq!(
            answer(
                json!({"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]})
            ),
            Answer::NoCall { text: "ab".into() }
        );
        assert!(matches!(
            answer(json!({"choices":[{"message":{"function_call":{"name":"f","arguments":"{}"}}}]})),
            Answer::Call { name, .. } if name == "f"
        ));
    }

    #[test]
    fn shapes_that_are_not_answers_are_malformed() {
        for v in [
            json!({}),
            json!({"choices": []}),
            json!({"choices": "x"}),
            json!({"choices": [{}]}),
            json!({"choices": [{"message": {"content": 5}}]}),
            json!({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}),
            json!({"error": {"message": "quota", "type": "insufficient_quota"}}),
        ] {
            assert!(matches!(answer(v.clone()), Answer::Malformed { .. }), "{v}");
        }
    }

    #[test]
    fn usage_needs_both_counts() {
        assert_eq!(
            read_usage(&json!({"usage":{"prompt_tokens":3,"completion_tokens":4}})),
            Some(Usage {
                input_tokens: 3,
                output_tokens: 4
            })
        );
        assert_eq!(read_usage(&json!({"usage":{"prompt_tokens":3}})), None);
        assert_eq!(read_usage(&json!({})), None);
    }
}
