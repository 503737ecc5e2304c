//! Anthropic Messages API: `POST {base}/v1/messages` with `tools`.
//!
//! Differences from Chat Completions that matter here: the system prompt is a top-level field,
//! tools carry `input_schema` directly, "must call a tool" is `tool_choice: {type: "any"}`, tool
//! input arrives as a JSON object (not a string), there is no `seed`, and 529 means overloaded.

use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::keys::{Secret, clean_message, scrub};
use super::retry::{self, Reply};
use super::{Answer, RouteError, RouteRequest, RouteResponse, Router, ToolChoice, Usage};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The Messages API version pinned by header; newer versions may change the wire format.
pub const API_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone)]
pub struct AnthropicRouter {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    host: String,
    model: String,
    api_key: Option<Secret>,
    timeout: Duration,
}

impl AnthropicRouter {
    /// `base_url` defaults to `https://api.anthropic.com`; a base that already ends in `/v1` is
    /// accepted too. `api_key` is sent as `x-api-key`; `None` sends none (compatible proxies).
    /// `timeout` bounds each request as a whole.
    pub fn new(
        base_url: Option<&str>,
        model: &str,
        api_key: Option<Secret>,
        timeout: Duration,
    ) -> crate::Result<AnthropicRouter> {
        let base = retry::parse_base_url(base_url.unwrap_or(DEFAULT_BASE_URL))?;
        if let Some(key) = &api_key {
            retry::secret_header(key.expose())?;
        }
        let suffix = if base.path().trim_end_matches('/').ends_with("/v1") {
            "messages"
        } else {
            "v1/messages"
        };
        Ok(AnthropicRouter {
            client: retry::client(timeout)?,
            endpoint: retry::join_path(&base, suffix),
            host: retry::host_of(&base),
            model: model.to_string(),
            api_key,
            timeout,
        })
    }

    /// The URL requests are POSTed to.
    pub fn endpoint(&self) -> &reqwest::Url {
        &self.endpoint
    }

    /// The exact JSON body sent for `req`.
    pub fn request_body(&self, req: &RouteRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("max_tokens".into(), json!(req.sampling.max_tokens));
        if !req.system.is_empty() {
            body.insert("system".into(), json!(req.system));
        }
        let messages = req
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect();
        body.insert("messages".into(), Value::Array(messages));
        // `tool_choice` without tools is rejected; with no tools the answer can only be text.
        if !req.tools.is_empty() {
            let tools = req
                .tools
                .iter()
                .map(|t| {
                    let mut tool = Map::new();
                    tool.insert("name".into(), json!(t.name));
                    if let Some(d) = &t.description {
                        tool.insert("description".into(), json!(d));
                    }
                    tool.insert("input_schema".into(), t.input_schema.clone());
                    Value::Object(tool)
                })
                .collect();
            body.insert("tools".into(), Value::Array(tools));
            let choice = match req.tool_choice {
                ToolChoice::Auto => "auto",
                ToolChoice::Required => "any",
            };
            body.insert("tool_choice".into(), json!({"type": choice}));
        }
        body.insert(
            "temperature".into(),
            retry::f32_json(req.sampling.temperature),
        );
        Value::Object(body)
    }

    async fn exchange(&self, req: &RouteRequest) -> Result<RouteResponse, RouteError> {
        let mut request = self
            .client
            .post(self.endpoint.clone())
            .header("anthropic-version", HeaderValue::from_static(API_VERSION))
            .json(&self.request_body(req));
        if let Some(key) = &self.api_key {
            // Validated in `new`, so this cannot fail here.
            if let Ok(value) = retry::secret_header(key.expose()) {
                request = request.header(HeaderName::from_static("x-api-key"), value);
            }
        }
        let reply = retry::send(request, self.timeout).await?;
        if !reply.status.is_success() {
            return Err(retry::http_error(&reply));
        }
        let (answer, usage) = read_reply(&reply);
        Ok(RouteResponse {
            answer,
            usage,
            latency_ms: reply.latency.as_millis() as u64,
        })
    }

    fn with_context(&self, e: RouteError) -> RouteError {
        e.with_prefix(&format!("anthropic {}", self.host))
    }
}

#[async_trait::async_trait]
impl Router for AnthropicRouter {
    fn kind(&self) -> &str {
        "anthropic"
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

/// The first `tool_use` block, else the text blocks joined.
pub(crate) fn read_answer(value: &Value) -> Answer {
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Answer::Malformed {
            detail: format!(
                "error in a successful response: {}",
                retry::provider_error_message(&value.to_string())
            ),
        };
    }
    let Some(blocks) = value.get("content").and_then(Value::as_array) else {
        return Answer::Malformed {
            detail: format!(
                "no content array in the response: {}",
                clean_message(&value.to_string(), &[])
            ),
        };
    };
    let tool_use = blocks
        .iter()
        .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"));
    if let Some(block) = tool_use {
        let Some(name) = block.get("name").and_then(Value::as_str) else {
            return Answer::Malformed {
                detail: "tool_use block without a name".into(),
            };
        };
        let input = block.get("input").cloned().unwrap_or(Value::Null);
        return Answer::Call {
            name: name.to_string(),
            raw_arguments: if input.is_null() {
                String::new()
            } else {
                input.to_string()
            },
            arguments: Some(input).filter(Value::is_object),
        };
    }
    let text = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    Answer::NoCall { text }
}

/// Input tokens include prompt-cache reads and writes: all of them were read by the model.
fn read_usage(value: &Value) -> Option<Usage> {
    let usage = value.get("usage")?;
    let count = |k: &str| usage.get(k).and_then(Value::as_u64);
    Some(Usage {
        input_tokens: count("input_tokens")?
            + count("cache_creation_input_tokens").unwrap_or(0)
            + count("cache_read_input_tokens").unwrap_or(0),
        output_tokens: count("output_tokens")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_from_bare_host_or_v1_base() {
        let t = Duration::from_secs(1);
        for base in [
            None,
            Some("https://api.anthropic.com"),
            Some("https://api.anthropic.com/"),
            Some("https://api.anthropic.com/v1/"),
        ] {
            let r = AnthropicRouter::new(base, "claude", None, t).unwrap();
            assert_eq!(
                r.endpoint().as_str(),
                "https://api.anthropic.com/v1/messages",
                "{base:?}"
            );
            assert_eq!(r.endpoint_host(), "api.anthropic.com");
        }
    }

    #[test]
    fn first_tool_use_block_wins_over_text() {
        let v = json!({"content":[
            {"type":"text","text":"Let me look."},
            {"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a"}},
            {"type":"tool_use","id":"toolu_2","name":"write_file","input":{}}]});
        assert_eq!(
            read_answer(&v),
            Answer::Call {
                name: "read_file".into(),
                arguments: Some(json!({"path":"a"})),
                raw_arguments: "{\"path\":\"a\"}".into()
            }
        );
    }

    #[test]
    fn text_blocks_are_joined_and_other_blocks_ignored() {
        let v = json!({"content":[
            {"type":"thinking","thinking":"hmm"},
            {"type":"text","text":"Hello"},
            {"type":"text","text":" there"}]});
        assert_eq!(
            read_answer(&v),
            Answer::NoCall {
                text: "Hello there".into()
            }
        );
        assert_eq!(
            read_answer(&json!({"content": []})),
            Answer::NoCall { text: "".into() }
        );
    }

    #[test]
    fn non_object_input_is_kept_raw() {
        let v = json!({"content":[{"type":"tool_use","name":"f","input":"{oops"}]});
        assert_eq!(
            read_answer(&v),
            Answer::Call {
                name: "f".into(),
                arguments: None,
                raw_arguments: "\"{oops\"".into()
            }
        );
    }

    #[test]
    fn error_and_shapeless_bodies_are_malformed() {
        for v in [
            json!({"type":"error","error":{"type":"api_error","message":"boom"}}),
            json!({"id":"msg_1"}),
            json!({"content":[{"type":"tool_use","input":{}}]}),
        ] {
            assert!(matches!(read_answer(&v), Answer::Malformed { .. }), "{v}");
        }
    }

    #[test]
    fn usage_counts_cache_tokens_as_input() {
        let v = json!({"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":2}});
        assert_eq!(
            read_usage(&v),
            Some(Usage {
                input_tokens: 15,
                output_tokens: 2
            })
        );
        assert_eq!(read_usage(&json!({"usage":{"output_tokens":2}})), None);
    }
}
