//! Routers: given a user message and a list of tools, which tool does the model call?
//!
//! Routers sit behind a small trait: the offline `semantic` router, and `provider` for every LLM
//! the `llm` transport speaks. They only report what came back; judging the answer (correct,
//! wrong, hallucinated, …) is `replay`'s job, retrying is `http::retry`'s, caching is `cache`'s.

pub mod cache;
pub mod order;
pub mod provider;
pub mod semantic;

use serde::{Deserialize, Serialize};

use crate::http::Failure;
use crate::llm::{Answer, Message, Sampling, ToolChoice, Usage};
use crate::tools::Tool;

/// The system prompt sent to LLM routers, versioned in `prompts/`.
pub const SYSTEM_PROMPT: &str = include_str!("../../prompts/router-system.v1.md");
pub const SYSTEM_PROMPT_FILE: &str = "prompts/router-system.v1.md";

/// Which router answered: part of the cache key and of every report that names the router.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "RouterKind")]
pub enum Kind {
    /// The offline proxy: embeddings, no model call.
    Semantic,
    /// Any OpenAI-compatible chat endpoint (OpenAI, Azure, llama.cpp, vLLM, …).
    Openai,
    /// Anthropic's Messages API.
    Anthropic,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Semantic, Kind::Openai, Kind::Anthropic];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Semantic => "semantic",
            Kind::Openai => "openai",
            Kind::Anthropic => "anthropic",
        }
    }

    /// What the provider bills a prompt-cache write, as a multiple of the input price.
    pub fn cache_write_premium(self) -> f64 {
        match self {
            Kind::Anthropic => crate::llm::anthropic::CACHE_WRITE_PRICE,
            Kind::Semantic | Kind::Openai => 1.0,
        }
    }

    /// A proxy of an agent's choice rather than a model's answer: its silence is no evidence,
    /// and it counts no tokens.
    pub fn is_proxy(self) -> bool {
        self == Kind::Semantic
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One routing question, exactly as it will be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct RouteRequest {
    pub system: String,
    /// History then the user prompt, last message is the user's.
    pub messages: Vec<Message>,
    /// Tools in the order offered (already ordered by the caller).
    pub tools: Vec<Tool>,
    /// The first `shared_tools` tools are the block every case of this request's order is
    /// offered: a provider's prompt-cache breakpoint goes after them (0: no breakpoint).
    pub shared_tools: usize,
    pub tool_choice: ToolChoice,
    pub sampling: Sampling,
    /// Repeat index (0-based); distinct repeats are distinct cache entries.
    pub repeat: u32,
}

impl RouteRequest {
    /// The request the benches ask a router: `history`, then `prompt` as the user's turn,
    /// `tools` as given, [`SYSTEM_PROMPT`], `tool_choice: auto`, temperature 0, seed 0.
    pub fn single(history: &[Message], prompt: &str, tools: Vec<Tool>) -> RouteRequest {
        let mut messages = history.to_vec();
        messages.push(Message {
            role: "user".into(),
            content: prompt.to_string(),
        });
        RouteRequest {
            system: SYSTEM_PROMPT.to_string(),
            messages,
            tools,
            shared_tools: 0,
            tool_choice: ToolChoice::Auto,
            sampling: Sampling {
                temperature: 0.0,
                seed: Some(0),
                ..Sampling::default()
            },
            repeat: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteResponse {
    pub answer: Answer,
    pub usage: Option<Usage>,
    /// Wall time of the successful request (0 when served from cache).
    pub latency_ms: u64,
}

/// Which router, with which model, endpoint and system prompt: the part of the router section
/// every report shares (`check`'s [`RouterInfo`], `stress`'s summary).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Identity {
    pub kind: Kind,
    pub model: String,
    pub host: String,
    /// The system prompt's file, or "(none)" when it is empty (the semantic router's).
    pub system_prompt: String,
    pub system_prompt_sha256: String,
}

impl Identity {
    /// `router`, sending `system_prompt` (the versioned [`SYSTEM_PROMPT`] or nothing).
    pub fn of(router: &dyn Router, system_prompt: &str) -> Identity {
        Identity {
            kind: router.kind(),
            model: router.model().to_string(),
            host: router.endpoint_host(),
            system_prompt: if system_prompt.is_empty() {
                "(none)".into()
            } else {
                SYSTEM_PROMPT_FILE.into()
            },
            system_prompt_sha256: crate::canon::hash_str(system_prompt),
        }
    }
}

/// Which router measured, with what: part of the report, so a reader can reproduce the run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RouterInfo {
    #[serde(flatten)]
    pub identity: Identity,
    pub tool_choice: ToolChoice,
    pub repeats: u32,
    pub temperature: f32,
    pub seed: Option<u64>,
    /// How each case's tools were ordered.
    #[serde(default = "shuffled")]
    pub order: order::Order,
    pub distractor_tools: usize,
    /// USD per million input/output tokens, when the user gave prices (never guessed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_mtok: Option<[f64; 2]>,
    /// USD per million input tokens read from the provider's prompt cache, when it differs from
    /// the input price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_cached_input_per_mtok: Option<f64>,
    /// Tokens the provider reported × prices, both sides (batched tokens at the batch discount).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_cost_usd: Option<f64>,
    /// `--batch`: the provider batches that answered, and the discount the cost applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchInfo>,
}

/// Reports written before rotations shuffled every case.
fn shuffled() -> order::Order {
    order::Order::Shuffle
}

/// The provider batches of a `--batch` run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BatchInfo {
    /// "OpenAI Batch API" or "Anthropic Message Batches".
    pub api: String,
    /// The provider's batch ids, in submission order.
    pub batches: Vec<String>,
    /// Requests the batches answered, both sides.
    pub requests: u64,
    /// Fraction of the live price taken off the batched tokens in `estimated_cost_usd` (0.5).
    pub discount: f64,
}

#[async_trait::async_trait]
pub trait Router: Send + Sync {
    fn kind(&self) -> Kind;
    fn model(&self) -> &str;
    /// Host of the endpoint (no path, no credentials): part of the cache key.
    fn endpoint_host(&self) -> String;
    /// Whether the router's calls carry real arguments (an LLM's do; the semantic router only
    /// names a tool, so call accuracy is not measured with it).
    fn fills_arguments(&self) -> bool {
        true
    }
    async fn route(&self, req: &RouteRequest) -> Result<RouteResponse, Failure>;
    /// Requests about to be routed (none of them answered yet): a router that can do their
    /// common work at once does it now. Best effort: a failure here is met again, and reported,
    /// when the request is routed.
    async fn prepare(&self, _requests: &[&RouteRequest]) {}
    /// The texts routing `req` would have an embedder embed; `None` for a router that embeds
    /// nothing. A run embeds all its texts in one call up front, the router then reads them from
    /// the embedder's memo.
    fn texts(&self, _req: &RouteRequest) -> Option<Vec<String>> {
        None
    }
    /// The chat whose provider batch API can answer this router's requests (`--batch`); `None`
    /// for a router that runs locally.
    fn batch_chat(&self) -> Option<&crate::llm::Chat> {
        None
    }
}
