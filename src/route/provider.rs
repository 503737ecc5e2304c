//! The router for every LLM provider: one `llm::Chat` asked with the offered tools.

use std::time::Duration;

use super::{Kind, RouteRequest, RouteResponse, Router};
use crate::http::Failure;
use crate::http::secret::Secret;
use crate::llm::{Chat, ChatRequest};

#[derive(Debug, Clone)]
pub struct ProviderRouter {
    chat: Chat,
}

impl ProviderRouter {
    pub fn new(chat: Chat) -> ProviderRouter {
        ProviderRouter { chat }
    }

    /// A router on an OpenAI-compatible endpoint (see `Chat::openai`).
    pub fn openai(
        base_url: Option<&str>,
        model: &str,
        key: Option<Secret>,
        timeout: Duration,
    ) -> crate::Result<ProviderRouter> {
        Ok(ProviderRouter::new(Chat::openai(
            base_url, model, key, timeout,
        )?))
    }

    /// A router on the Anthropic Messages API (see `Chat::anthropic`).
    pub fn anthropic(
        base_url: Option<&str>,
        model: &str,
        key: Option<Secret>,
        timeout: Duration,
    ) -> crate::Result<ProviderRouter> {
        Ok(ProviderRouter::new(Chat::anthropic(
            base_url, model, key, timeout,
        )?))
    }

    /// Azure OpenAI (see `Chat::azure`).
    pub fn azure(self, api_version: &str) -> crate::Result<ProviderRouter> {
        Ok(ProviderRouter::new(self.chat.azure(api_version)?))
    }

    pub fn chat(&self) -> &Chat {
        &self.chat
    }

    /// The URL requests are POSTed to.
    pub fn endpoint(&self) -> &reqwest::Url {
        self.chat.endpoint()
    }

    /// The chat request `req` is sent as.
    pub fn request<'a>(req: &'a RouteRequest) -> ChatRequest<'a> {
        ChatRequest {
            system: &req.system,
            messages: &req.messages,
            tools: &req.tools,
            cached_tools: req.shared_tools,
            tool_choice: req.tool_choice,
            sampling: &req.sampling,
            json_schema: None,
        }
    }

    /// The exact JSON body sent for `req`.
    pub fn request_body(&self, req: &RouteRequest) -> serde_json::Value {
        self.chat.body(&Self::request(req))
    }
}

#[async_trait::async_trait]
impl Router for ProviderRouter {
    fn kind(&self) -> Kind {
        match self.chat.provider() {
            crate::llm::Provider::Anthropic => Kind::Anthropic,
            _ => Kind::Openai,
        }
    }

    fn model(&self) -> &str {
        self.chat.model()
    }

    fn endpoint_host(&self) -> String {
        self.chat.host().to_string()
    }

    fn batch_chat(&self) -> Option<&Chat> {
        Some(&self.chat)
    }

    async fn route(&self, req: &RouteRequest) -> Result<RouteResponse, Failure> {
        let c = self.chat.complete(&Self::request(req)).await?;
        Ok(RouteResponse {
            answer: c.answer,
            usage: c.usage,
            latency_ms: c.latency.as_millis() as u64,
        })
    }
}
