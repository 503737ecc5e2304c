//! One chat transport for every LLM provider we speak: OpenAI-compatible Chat Completions
//! (api.openai.com, Azure OpenAI, llama.cpp's `llama-server`, vLLM, Ollama, LiteLLM) and the
//! Anthropic Messages API. A `Chat` knows where to POST, how to authenticate, how to build the
//! body and how to read the answer; the replay routers (`route`) and JSON drafting (`json`) are
//! both built on it, so each provider serves both.
//!
//! A `Chat` sends one request; retrying is the caller's (`http::retry::with_retry`). Every message
//! it returns has the key masked, and answer text is redacted too: some servers echo headers.

pub mod anthropic;
pub mod batch;
pub mod json;
pub mod openai;
pub mod tokens;

use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::choice::Choice;
use crate::http::secret::{Secret, clean_message, redact};
use crate::http::{self, Failure, Reply};
use crate::tools::Tool;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// "user" or "assistant".
    pub role: String,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    /// The model may answer without a call (needed for `expect: none` cases).
    Auto,
    /// The model must call some tool.
    Required,
}

impl Choice for ToolChoice {
    const ALL: &'static [ToolChoice] = &[ToolChoice::Auto, ToolChoice::Required];
    fn name(self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
        }
    }
    fn help(self) -> &'static str {
        match self {
            ToolChoice::Auto => {
                "The model may answer without a call (needed for `expect: none` cases)"
            }
            ToolChoice::Required => "The model must call some tool",
        }
    }
}

/// Sampling parameters; part of every cache key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f32,
    pub seed: Option<u64>,
    pub max_tokens: u32,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            temperature: 0.0,
            seed: Some(0),
            max_tokens: 256,
        }
    }
}

/// What the model did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Answer {
    /// A tool call: the first one is judged. `arguments` is `None` when they did not parse as a
    /// JSON object. `others`: the names of further calls in the same answer (a forbidden tool
    /// among them counts as much as in the first).
    Call {
        name: String,
        arguments: Option<Value>,
        raw_arguments: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        others: Vec<String>,
    },
    /// A text answer with no tool call.
    NoCall { text: String },
    /// The provider answered, but the answer could not be read as a call or text.
    Malformed { detail: String },
}

impl Answer {
    /// A call to `name` with empty arguments: what a router that only picks a tool answers.
    pub fn bare_call(name: impl Into<String>) -> Answer {
        Answer::Call {
            name: name.into(),
            arguments: Some(Value::Object(Default::default())),
            raw_arguments: "{}".into(),
            others: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Every input token, cached or not.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Of `input_tokens`, those the provider read from its prompt cache (OpenAI's
    /// `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Of `input_tokens`, those written to the provider's prompt cache (Anthropic's
    /// `cache_creation_input_tokens`, billed above the input price).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// What these tokens cost in USD at `[input, output]` per million: cache reads at `cached`
    /// (the input price when `None`), cache writes at `premium` × the input price (Anthropic's
    /// [`anthropic::CACHE_WRITE_PRICE`]; OpenAI's automatic cache writes cost the input price, 1).
    pub fn cost_usd(&self, [input, output]: [f64; 2], cached: Option<f64>, premium: f64) -> f64 {
        let (read, written) = (self.cached_input_tokens, self.cache_write_tokens);
        let usd = self.input_tokens.saturating_sub(read + written) as f64 * input
            + read as f64 * cached.unwrap_or(input)
            + written as f64 * input * premium
            + self.output_tokens as f64 * output;
        usd / 1e6
    }
}

/// One chat question, exactly as it will be sent.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// Empty: no system prompt.
    pub system: &'a str,
    /// History then the user prompt; the last message is the user's.
    pub messages: &'a [Message],
    /// Tools in the order offered; empty: the answer can only be text.
    pub tools: &'a [Tool],
    /// The leading tools many requests share: Anthropic's `cache_control` breakpoint goes on the
    /// last of them (0: none; OpenAI caches shared prefixes without being asked).
    pub cached_tools: usize,
    pub tool_choice: ToolChoice,
    pub sampling: &'a Sampling,
    /// Ask for a JSON answer matching `(name, schema)`: OpenAI's `response_format` (llama.cpp turns
    /// it into a grammar). Anthropic has no such field; callers validate every answer anyway.
    pub json_schema: Option<(&'a str, &'a Value)>,
}

/// A provider's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    pub answer: Answer,
    pub usage: Option<Usage>,
    pub latency: Duration,
}

/// Which wire format and authentication a `Chat` speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provider {
    /// `Authorization: Bearer`, `POST {base}/chat/completions`.
    OpenAi,
    /// Azure OpenAI: an `api-key` header and a mandatory `api-version` query parameter.
    Azure { api_version: String },
    /// `x-api-key` and `anthropic-version`, `POST {base}/v1/messages`.
    Anthropic,
}

#[derive(Debug, Clone)]
pub struct Chat {
    client: reqwest::Client,
    base: reqwest::Url,
    endpoint: reqwest::Url,
    host: String,
    model: String,
    key: Option<Secret>,
    provider: Provider,
    timeout: Duration,
}

impl Chat {
    /// OpenAI-compatible Chat Completions. `base_url` is everything before `/chat/completions`,
    /// with or without a trailing slash: `https://api.openai.com/v1` (the default),
    /// `http://127.0.0.1:8080/v1`. `key` is sent as `Authorization: Bearer`; `None` sends no auth
    /// header (local servers). `timeout` bounds each request as a whole.
    pub fn openai(
        base_url: Option<&str>,
        model: &str,
        key: Option<Secret>,
        timeout: Duration,
    ) -> crate::Result<Chat> {
        Chat::new(
            base_url.unwrap_or(openai::DEFAULT_BASE_URL),
            model,
            key,
            timeout,
            Provider::OpenAi,
        )
    }

    /// Anthropic Messages. `base_url` defaults to `https://api.anthropic.com`; a base that already
    /// ends in `/v1` is accepted too. `key` is sent as `x-api-key`.
    pub fn anthropic(
        base_url: Option<&str>,
        model: &str,
        key: Option<Secret>,
        timeout: Duration,
    ) -> crate::Result<Chat> {
        Chat::new(
            base_url.unwrap_or(anthropic::DEFAULT_BASE_URL),
            model,
            key,
            timeout,
            Provider::Anthropic,
        )
    }

    fn new(
        base_url: &str,
        model: &str,
        key: Option<Secret>,
        timeout: Duration,
        provider: Provider,
    ) -> crate::Result<Chat> {
        let base = http::parse_base_url(base_url)?;
        let mut chat = Chat {
            client: http::client(timeout)?,
            host: http::host_of(&base),
            endpoint: base.clone(),
            base,
            model: model.to_string(),
            key,
            provider,
            timeout,
        };
        chat.auth_header()?;
        chat.endpoint = chat.build_endpoint();
        Ok(chat)
    }

    /// Azure OpenAI: `base_url` was the deployment URL
    /// (`https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT`); the key is sent as
    /// `api-key`, and `?api-version=` is added (replacing one already in the URL).
    pub fn azure(mut self, api_version: &str) -> crate::Result<Chat> {
        let api_version = api_version.trim();
        if api_version.is_empty() {
            return Err(crate::Error::Usage(
                "Azure OpenAI needs an API version (e.g. 2024-10-21)".into(),
            ));
        }
        if self.provider == Provider::Anthropic {
            return Err(crate::Error::Usage(
                "an Azure API version applies to OpenAI-compatible endpoints only".into(),
            ));
        }
        self.provider = Provider::Azure {
            api_version: api_version.to_string(),
        };
        self.auth_header()?;
        self.endpoint = self.build_endpoint();
        Ok(self)
    }

    fn build_endpoint(&self) -> reqwest::Url {
        match &self.provider {
            Provider::OpenAi => http::join_path(&self.base, "chat/completions"),
            Provider::Azure { api_version } => {
                let mut url = http::join_path(&self.base, "chat/completions");
                let kept: Vec<(String, String)> = url
                    .query_pairs()
                    .filter(|(k, _)| k != "api-version")
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                url.query_pairs_mut()
                    .clear()
                    .extend_pairs(kept)
                    .append_pair("api-version", api_version);
                url
            }
            Provider::Anthropic => {
                let suffix = if self.base.path().trim_end_matches('/').ends_with("/v1") {
                    "messages"
                } else {
                    "v1/messages"
                };
                http::join_path(&self.base, suffix)
            }
        }
    }

    /// The auth header for the key, if any; an error when the key cannot be a header value.
    fn auth_header(&self) -> crate::Result<Option<(HeaderName, HeaderValue)>> {
        let Some(key) = &self.key else {
            return Ok(None);
        };
        Ok(Some(match self.provider {
            Provider::OpenAi => (
                reqwest::header::AUTHORIZATION,
                http::secret_header(&format!("Bearer {}", key.expose()))?,
            ),
            Provider::Azure { .. } => (
                HeaderName::from_static("api-key"),
                http::secret_header(key.expose())?,
            ),
            Provider::Anthropic => (
                HeaderName::from_static("x-api-key"),
                http::secret_header(key.expose())?,
            ),
        }))
    }

    /// "openai" or "anthropic": the wire format, part of cache keys and reports.
    pub fn kind(&self) -> &'static str {
        match self.provider {
            Provider::OpenAi | Provider::Azure { .. } => "openai",
            Provider::Anthropic => "anthropic",
        }
    }

    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// `host[:port]` of the endpoint (no path, no credentials).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The URL requests are POSTed to.
    pub fn endpoint(&self) -> &reqwest::Url {
        &self.endpoint
    }

    /// The secrets to mask wherever this chat's traffic is shown.
    pub fn secrets(&self) -> &[Secret] {
        self.key.as_slice()
    }

    /// The exact JSON body sent for `req`.
    pub fn body(&self, req: &ChatRequest<'_>) -> Value {
        match self.provider {
            Provider::OpenAi | Provider::Azure { .. } => openai::body(&self.model, req),
            Provider::Anthropic => anthropic::body(&self.model, req),
        }
    }

    /// Send `req` once. A non-success status or a dropped connection is a `Failure` (transient or
    /// not, for the caller's retry loop); a success whose body cannot be read as an answer is
    /// `Answer::Malformed`. Messages name the provider and host, never the key.
    pub async fn complete(&self, req: &ChatRequest<'_>) -> Result<Completion, Failure> {
        let result = self.exchange(req).await;
        match result {
            Ok(mut c) => {
                self.scrub(&mut c.answer);
                Ok(c)
            }
            Err(e) => Err(self.scrub_failure(e)),
        }
    }

    /// Mask the key in an answer: some servers echo headers into what they say.
    fn scrub(&self, answer: &mut Answer) {
        let secrets = self.secrets();
        match answer {
            Answer::Malformed { detail } => *detail = clean_message(detail, secrets),
            Answer::NoCall { text } => *text = redact(text, secrets),
            Answer::Call {
                raw_arguments,
                arguments,
                ..
            } => {
                *raw_arguments = redact(raw_arguments, secrets);
                // The parsed arguments are shown in flip lists: masked the same way.
                if let Some(a) = arguments {
                    redact_strings(a, secrets);
                }
            }
        }
    }

    /// A failure's message naming the provider and host, with the key masked.
    fn scrub_failure(&self, e: Failure) -> Failure {
        e.with_prefix(&format!("{} {}", self.kind(), self.host))
            .map_message(|m| clean_message(m, self.secrets()))
    }

    /// `request` with this chat's authentication (and Anthropic's version header).
    fn authed(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        if self.provider == Provider::Anthropic {
            request = request.header(
                "anthropic-version",
                HeaderValue::from_static(anthropic::API_VERSION),
            );
        }
        // Validated in the constructors, so this cannot fail here.
        if let Ok(Some((name, value))) = self.auth_header() {
            request = request.header(name, value);
        }
        request
    }

    async fn exchange(&self, req: &ChatRequest<'_>) -> Result<Completion, Failure> {
        let request = self.authed(
            self.client
                .post(self.endpoint.clone())
                .json(&self.body(req)),
        );
        let reply = http::send(request, self.timeout).await?;
        let (answer, usage) = match self.provider {
            Provider::OpenAi | Provider::Azure { .. } => openai::read(&reply)?,
            Provider::Anthropic => anthropic::read(&reply)?,
        };
        Ok(Completion {
            answer,
            usage,
            latency: reply.latency,
        })
    }
}

/// A tool as providers take it: its name, its description when it has one, and its input schema
/// under `schema_key` (`parameters` for OpenAI, `input_schema` for Anthropic).
fn tool_spec(t: &Tool, schema_key: &str) -> serde_json::Map<String, Value> {
    let mut spec = serde_json::Map::new();
    spec.insert("name".into(), Value::String(t.name.clone()));
    if let Some(d) = &t.description {
        spec.insert("description".into(), Value::String(d.clone()));
    }
    spec.insert(schema_key.into(), t.input_schema.clone());
    spec
}

/// The JSON of a 2xx body. A body that is not JSON (an HTML page, a cut-off body) is a broken
/// endpoint, never a model's answer: see `not_an_answer`.
fn reply_json(reply: &Reply) -> Result<Value, Failure> {
    serde_json::from_str(&reply.body).map_err(|e| {
        let cut = if reply.truncated {
            " (cut at the size limit)"
        } else {
            ""
        };
        not_an_answer(
            reply,
            &format!(
                "the body is not JSON{cut} ({e}): {}",
                clean_message(&reply.body, &[])
            ),
        )
    })
}

/// A success status whose body is not the provider's answer format: the endpoint is broken (a
/// proxy's HTML page, a truncated or empty body, `{}`), so it is a transient failure — retried,
/// then the measurement is incomplete — and never an answer that would be scored and cached.
fn not_an_answer(reply: &Reply, why: &str) -> Failure {
    Failure::Transient {
        message: format!(
            "{} but not with an answer: {why}",
            http::status_text(reply.status)
        ),
        retry_after: None,
    }
}

/// An `f32` as the JSON number its decimal form shows: `0.7`, not `0.699999988079071` (what a
/// plain widening to `f64` gives), so request bodies and cache keys read as configured.
pub fn f32_json(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// Mask `secrets` in every string of a JSON value, keys included.
fn redact_strings(v: &mut Value, secrets: &[Secret]) {
    match v {
        Value::String(s) => *s = redact(s, secrets),
        Value::Array(a) => a.iter_mut().for_each(|x| redact_strings(x, secrets)),
        Value::Object(o) => {
            let old = std::mem::take(o);
            for (k, mut x) in old {
                redact_strings(&mut x, secrets);
                o.insert(redact(&k, secrets), x);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_tokens_cost_the_cached_price_and_anthropic_writes_a_premium() {
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cached_input_tokens: 600_000,
            cache_write_tokens: 200_000,
        };
        // 200k plain × 3 + 600k read × 0.3 + 200k written × 3 × 1.25 + 100k out × 15, per M.
        let anthropic = u.cost_usd([3.0, 15.0], Some(0.3), anthropic::CACHE_WRITE_PRICE);
        assert!(
            (anthropic - (0.6 + 0.18 + 0.75 + 1.5)).abs() < 1e-12,
            "{anthropic}"
        );
        // OpenAI bills no write premium; without a cached price a read costs the input price.
        let openai = u.cost_usd([3.0, 15.0], None, 1.0);
        assert!((openai - (0.6 + 1.8 + 0.6 + 1.5)).abs() < 1e-12, "{openai}");
    }

    #[test]
    fn endpoint_with_and_without_trailing_slash() {
        let t = Duration::from_secs(1);
        for base in ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"] {
            let r = Chat::openai(Some(base), "m", None, t).unwrap();
            assert_eq!(
                r.endpoint().as_str(),
                "http://127.0.0.1:8080/v1/chat/completions"
            );
            assert_eq!(r.host(), "127.0.0.1:8080");
        }
        let r = Chat::openai(None, "gpt-4o-mini", None, t).unwrap();
        assert_eq!(
            r.endpoint().as_str(),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(r.host(), "api.openai.com");
    }

    #[test]
    fn azure_adds_or_replaces_the_api_version() {
        let t = Duration::from_secs(1);
        let base = "https://res.openai.azure.com/openai/deployments/gpt4o/?api-version=old&x=1";
        let r = Chat::openai(Some(base), "gpt-4o", None, t)
            .unwrap()
            .azure("2024-10-21")
            .unwrap();
        assert_eq!(
            r.endpoint().as_str(),
            "https://res.openai.azure.com/openai/deployments/gpt4o/chat/completions?x=1&api-version=2024-10-21"
        );
        let r = Chat::openai(Some(base), "gpt-4o", None, t).unwrap();
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
            assert!(Chat::openai(Some(bad), "m", None, t).is_err(), "{bad}");
        }
        let e = Chat::openai(None, "m", Some(Secret::new("sk-1\n2")), t).unwrap_err();
        assert!(!e.to_string().contains("sk-1"), "{e}");
    }

    #[test]
    fn endpoint_from_bare_host_or_v1_base() {
        let t = Duration::from_secs(1);
        for base in [
            None,
            Some("https://api.anthropic.com"),
            Some("https://api.anthropic.com/"),
            Some("https://api.anthropic.com/v1/"),
        ] {
            let r = Chat::anthropic(base, "claude", None, t).unwrap();
            assert_eq!(
                r.endpoint().as_str(),
                "https://api.anthropic.com/v1/messages",
                "{base:?}"
            );
            assert_eq!(r.host(), "api.anthropic.com");
        }
    }

    #[test]
    fn only_openai_endpoints_take_an_azure_version() {
        let t = Duration::from_secs(1);
        let r = Chat::anthropic(None, "claude", None, t).unwrap();
        assert!(r.azure("2024-10-21").is_err());
    }
}
