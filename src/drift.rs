//! Meaning drift: how far each changed tool's text moved, as embedding cosine.
//!
//! Two numbers per tool: the description alone, and the full tool text an agent reads (name,
//! description, parameter names and descriptions). Lexical overlap is not used: shared domain
//! nouns dominate it, and "read" vs "write" is one token among many.

use serde::{Deserialize, Serialize};

use crate::diff::{Diff, Status};
use crate::embed::{Embedder, cosine};
use crate::error::Result;
use crate::tools::ToolSet;

/// Default floor: a changed description whose cosine to its old self falls below it fails.
pub const DEFAULT_COSINE_FLOOR: f64 = 0.92;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolDrift {
    pub tool: String,
    /// The base name when it differs (renames).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_name: Option<String>,
    pub description_cosine: f64,
    pub full_text_cosine: f64,
    /// description_cosine < floor
    pub below_floor: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Drift {
    pub model: String,
    pub floor: f64,
    pub tools: Vec<ToolDrift>,
}

impl Drift {
    pub fn min(&self) -> Option<&ToolDrift> {
        self.tools
            .iter()
            .min_by(|a, b| a.description_cosine.total_cmp(&b.description_cosine))
    }
}

fn round4(x: f32) -> f64 {
    (f64::from(x) * 10_000.0).round() / 10_000.0
}

/// Measure every paired tool (changed or renamed) whose routing text changed.
pub async fn measure(
    diff: &Diff,
    base: &ToolSet,
    head: &ToolSet,
    embedder: &dyn Embedder,
    floor: f64,
) -> Result<Drift> {
    let mut pairs = Vec::new();
    for t in &diff.tools {
        let base_name = match t.status {
            Status::Changed => t.name.clone(),
            Status::Renamed => t.base_name.clone().unwrap_or_default(),
            Status::Added | Status::Removed => continue,
        };
        if !t.routing_text_changed() {
            continue;
        }
        if let (Some(b), Some(h)) = (base.get(&base_name), head.get(&t.name)) {
            pairs.push((t.name.clone(), base_name, b, h));
        }
    }
    let mut texts = Vec::with_capacity(pairs.len() * 4);
    for (_, _, b, h) in &pairs {
        texts.push(b.description_text().to_string());
        texts.push(h.description_text().to_string());
        texts.push(b.routing_text());
        texts.push(h.routing_text());
    }
    let v = if texts.is_empty() {
        None
    } else {
        Some(embedder.embed(&texts).await?)
    };
    let tools = pairs
        .into_iter()
        .enumerate()
        .map(|(i, (name, base_name, _, _))| {
            let v = v.as_ref().expect("texts were embedded");
            let d = round4(cosine(v.row(4 * i), v.row(4 * i + 1)));
            let f = round4(cosine(v.row(4 * i + 2), v.row(4 * i + 3)));
            ToolDrift {
                base_name: (base_name != name).then_some(base_name),
                tool: name,
                description_cosine: d,
                full_text_cosine: f,
                below_floor: d < floor,
            }
        })
        .collect();
    Ok(Drift {
        model: embedder.id().to_string(),
        floor,
        tools,
    })
}
