//! The offline default router: embed the user message and each offered tool's text with the
//! bundled sentence embedder and pick the nearest tool; below a threshold (with `tool_choice:
//! auto`) answer with no call. Deterministic, no key, no network.
//!
//! It is a proxy for an LLM, not an LLM: it measures whether a description still *reads* like the
//! prompts meant for it, which is exactly what a wording change can break.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use ndarray::{Array1, Array2};

use super::{RouteRequest, RouteResponse, Router};
use crate::embed::{Embedder, cosine};
use crate::http::Failure;
use crate::llm::{Answer, ToolChoice};

/// Below this cosine between prompt and best tool, `auto` answers with no call. Calibrated on the
/// calendar example and the server-filesystem suite: on-topic prompts score ≥ 0.3 against their
/// tool, chit-chat ≤ 0.2.
pub const DEFAULT_NONE_THRESHOLD: f32 = 0.25;

/// One embedding batch in flight, awaited by every case that needs one of its texts.
type Batch = Shared<BoxFuture<'static, Result<Arc<Array2<f32>>, String>>>;

enum Slot {
    Ready(Array1<f32>),
    /// Row `.1` of a batch still running.
    Pending(Batch, usize),
}

pub struct SemanticRouter {
    embedder: Arc<dyn Embedder>,
    model: String,
    none_threshold: f32,
    /// Tool texts recur in every case: embed each once per run. A text being embedded is a
    /// pending slot, so concurrent cases wait for that batch instead of embedding the same tool
    /// texts again (CPU-bound work that only oversubscribes the cores), while each case's own
    /// prompt is embedded without waiting for the others' (the lock is never held across an
    /// embedding).
    memo: Mutex<HashMap<String, Slot>>,
}

impl SemanticRouter {
    pub fn new(embedder: Arc<dyn Embedder>, none_threshold: f32) -> Self {
        let model = format!("{}@none<{none_threshold}", embedder.id());
        SemanticRouter {
            embedder,
            model,
            none_threshold,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// Embed whichever of `texts` no case has embedded or is embedding (one batch), and wait
    /// for those others are embedding.
    async fn ensure(&self, texts: &[String]) -> Result<(), Failure> {
        let (waits, mine) = {
            let mut memo = self.memo.lock().expect("memo lock");
            let mut missing: Vec<String> = texts
                .iter()
                .filter(|t| !memo.contains_key(*t))
                .cloned()
                .collect();
            missing.sort();
            missing.dedup();
            let mine = (!missing.is_empty()).then(|| {
                let embedder = self.embedder.clone();
                let batch = missing.clone();
                let run: Batch = async move {
                    embedder
                        .embed(&batch)
                        .await
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                }
                .boxed()
                .shared();
                for (i, t) in missing.iter().enumerate() {
                    memo.insert(t.clone(), Slot::Pending(run.clone(), i));
                }
                (run, missing)
            });
            let mut waits: Vec<Batch> = Vec::new();
            for t in texts {
                if let Some(Slot::Pending(b, _)) = memo.get(t)
                    && !waits.iter().any(|w| w.ptr_eq(b))
                {
                    waits.push(b.clone());
                }
            }
            (waits, mine)
        };
        let mut failed = None;
        for w in waits {
            if let Err(e) = w.await {
                failed = Some(e);
            }
        }
        if let Some(e) = failed {
            // Whoever started a failed batch forgets it, so a retry embeds it again.
            let mut memo = self.memo.lock().expect("memo lock");
            if let Some((_, texts)) = mine {
                for t in texts {
                    memo.remove(&t);
                }
            }
            return Err(Failure::Fatal(format!("embedding failed: {e}")));
        }
        Ok(())
    }

    /// The cosine of `texts[0]` against each of `texts[1..]`.
    async fn cosines(&self, texts: &[String]) -> Result<Vec<f32>, Failure> {
        self.ensure(texts).await?;
        let mut memo = self.memo.lock().expect("memo lock");
        for t in texts {
            let slot = memo.get_mut(t).expect("embedded or pending");
            if let Slot::Pending(b, i) = slot {
                let rows = b.peek().expect("awaited").as_ref().expect("succeeded");
                *slot = Slot::Ready(rows.row(*i).to_owned());
            }
        }
        let vector = |t: &String| match &memo[t] {
            Slot::Ready(v) => v.view(),
            Slot::Pending(..) => unreachable!("made ready above"),
        };
        let query = vector(&texts[0]);
        Ok(texts[1..]
            .iter()
            .map(|t| cosine(query, vector(t)))
            .collect())
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
    /// Every prompt and tool text of the requests, embedded as one batch.
    async fn prepare(&self, requests: &[&RouteRequest]) {
        let mut texts: Vec<String> = Vec::new();
        for r in requests {
            texts.extend(texts_of(r));
        }
        // A failure comes back when the request is routed, and is reported there.
        let _ = self.ensure(&texts).await;
    }

    async fn route(&self, req: &RouteRequest) -> Result<RouteResponse, Failure> {
        let started = Instant::now();
        let texts = texts_of(req);
        let scores = self.cosines(&texts).await?;
        let best = req
            .tools
            .iter()
            .zip(scores)
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

/// What a request embeds: the last user message, then each offered tool's routing text.
fn texts_of(req: &RouteRequest) -> Vec<String> {
    let query = req
        .messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let mut texts = vec![query];
    texts.extend(req.tools.iter().map(|t| t.routing_text()));
    texts
}
