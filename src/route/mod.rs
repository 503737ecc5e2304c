//! Routers: given a user message and a list of tools, which tool does the model call?
//!
//! One `Router` per provider behind a small trait. Providers only speak their wire format and
//! report what came back; judging the answer (correct, wrong, hallucinated, …) is `replay`'s job,
//! retrying is `retry`'s, caching is `cache`'s.

pub mod anthropic;
pub mod cache;
pub mod keys;
pub mod openai;
pub mod retry;
pub mod semantic;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tools::Tool;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// "user" or "assistant".
    pub role: String,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    /// The model may answer without a call (needed for `expect: none` cases).
    Auto,
    /// The model must call some tool.
    Required,
}

/// Sampling parameters; part of the cache key.
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

/// One routing question, exactly as it will be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteRequest {
    pub system: String,
    /// History then the user prompt, last message is the user's.
    pub messages: Vec<Message>,
    /// Tools in the order offered (already shuffled by the caller).
    pub tools: Vec<Tool>,
    pub tool_choice: ToolChoice,
    pub sampling: Sampling,
    /// Repeat index (0-based); distinct repeats are distinct cache entries.
    pub repeat: u32,
}

/// What the model did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Answer {
    /// The first tool call. `arguments` is `None` when they did not parse as a JSON object.
    Call {
        name: String,
        arguments: Option<Value>,
        raw_arguments: String,
    },
    /// A text answer with no tool call.
    NoCall { text: String },
    /// The provider answered, but the answer could not be read as a call or text.
    Malformed { detail: String },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteResponse {
    pub answer: Answer,
    pub usage: Option<Usage>,
    /// Wall time of the successful request (0 when served from cache).
    pub latency_ms: u64,
}

/// A failed request. `Transient` ones are retried (429, 5xx, timeouts, connection errors).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RouteError {
    #[error("{message}")]
    Transient {
        message: String,
        /// The server's `Retry-After`, when it sent one.
        retry_after: Option<Duration>,
    },
    #[error("{0}")]
    Fatal(String),
}

impl RouteError {
    /// The same error with `prefix: ` before its message (which provider, which host).
    pub fn with_prefix(self, prefix: &str) -> RouteError {
        match self {
            RouteError::Transient {
                message,
                retry_after,
            } => RouteError::Transient {
                message: format!("{prefix}: {message}"),
                retry_after,
            },
            RouteError::Fatal(message) => RouteError::Fatal(format!("{prefix}: {message}")),
        }
    }
}

#[async_trait::async_trait]
pub trait Router: Send + Sync {
    /// "semantic", "openai", "anthropic": part of the cache key and the report.
    fn kind(&self) -> &str;
    fn model(&self) -> &str;
    /// Host of the endpoint (no path, no credentials): part of the cache key.
    fn endpoint_host(&self) -> String;
    async fn route(&self, req: &RouteRequest) -> Result<RouteResponse, RouteError>;
}
