//! The offline default router: embed the user message and each offered tool's text with the
//! bundled sentence embedder and pick the nearest tool; below a threshold (with `tool_choice:
//! auto`) answer with no call. Deterministic, no key, no network.
//!
//! It is a proxy for an LLM, not an LLM: it measures whether a description still *reads* like the
//! prompts meant for it, which is exactly what a wording change can break.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use ndarray::Array1;

use super::{RouteRequest, RouteResponse, Router};
use crate::embed::{Embedder, cosine};
use crate::http::Failure;
use crate::llm::{Answer, ToolChoice};

/// Below this cosine between prompt and best tool, `auto` answers with no call. Calibrated on the
/// calendar example and the server-filesystem suite: on-topic prompts score ≥ 0.3 against their
/// tool, chit-chat ≤ 0.2.
pub const DEFAULT_NONE_THRESHOLD: f32 = 0.25;

pub struct SemanticRouter {
    embedder: Arc<dyn Embedder>,
    model: String,
    none_threshold: f32,
    /// Tool texts recur in every case: embed each once per run. An async lock held across the
    /// embedding single-flights it: concurrent cases would otherwise all embed the same tool
    /// texts at once (CPU-bound work that only oversubscribes the cores).
    memo: tokio::sync::Mutex<HashMap<String, Array1<f32>>>,
}

impl SemanticRouter {
    pub fn new(embedder: Arc<dyn Embedder>, none_threshold: f32) -> Self {
        let model = format!("{}@none<{none_threshold}", embedder.id());
        SemanticRouter {
            embedder,
            model,
            none_threshold,
            memo: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    async fn vectors(&self, texts: &[String]) -> Result<Vec<Array1<f32>>, Failure> {
        let mut memo = self.memo.lock().await;
        let mut missing: Vec<String> = texts
            .iter()
            .filter(|t| !memo.contains_key(*t))
            .cloned()
            .collect();
        missing.sort();
        missing.dedup();
        if !missing.is_empty() {
            let rows = self
                .embedder
                .embed(&missing)
                .await
                .map_err(|e| Failure::Fatal(format!("embedding failed: {e}")))?;
            for (t, row) in missing.into_iter().zip(rows.rows()) {
                memo.insert(t, row.to_owned());
            }
        }
        Ok(texts.iter().map(|t| memo[t].clone()).collect())
    }
}

#[async_trait::async_trait]
impl Router for SemanticRouter {
    fn kind(&self) -> &str {
        "semantic"
    }
    fn model(&self) -> &str {
        &self.model
    }
    fn endpoint_host(&self) -> String {
        "local".into()
    }

    fn fills_arguments(&self) -> bool {
        false
    }
    async fn route(&self, req: &RouteRequest) -> Result<RouteResponse, Failure> {
        let started = Instant::now();
        let query = req
            .messages
            .iter()
            .rev()
            .find(|m| m.role == "user")
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let mut texts = vec![query];
        texts.extend(req.tools.iter().map(|t| t.routing_text()));
        let v = self.vectors(&texts).await?;
        let best = req
            .tools
            .iter()
            .zip(&v[1..])
            .map(|(t, tv)| (t, cosine(v[0].view(), tv.view())))
            // Ties broken by offered order, which the caller made deterministic.
            .fold(
                None::<(&crate::tools::Tool, f32)>,
                |acc, (t, s)| match acc {
                    Some((_, bs)) if bs >= s => acc,
                    _ => Some((t, s)),
                },
            );
        let answer = match best {
            Some((t, s)) if s >= self.none_threshold || req.tool_choice == ToolChoice::Required => {
                Answer::Call {
                    name: t.name.clone(),
                    arguments: Some(serde_json::json!({})),
                    raw_arguments: "{}".into(),
                    others: Vec::new(),
                }
            }
            Some((t, s)) => Answer::NoCall {
                text: format!("no tool close enough (best `{}` at {s:.3})", t.name),
            },
            None => Answer::NoCall {
                text: "no tools offered".into(),
            },
        };
        Ok(RouteResponse {
            answer,
            usage: None,
            latency_ms: started.elapsed().as_millis().max(1) as u64,
        })
    }
}
