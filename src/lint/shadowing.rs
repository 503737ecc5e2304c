//! Shadowing risk, in the spec's two steps: the cost prefilter ([`super::quality::shadows`])
//! proposes at most one cheaper sibling per tool, and a confirmation keeps a pair only when the
//! two purposes overlap. Cost asymmetry alone is not a defect: a server is expected to offer cheap
//! lookups beside expensive queries.
//!
//! Offline, the confirmation is our own evidence, not the spec's model call. A pair overlaps
//! when all three hold:
//! - no veto from [`super::pairs`] (a reading tool cannot answer for a writing one);
//! - the names share a resource term beside the verb (`list_players` / `search_players`): a cheap
//!   `create_repository` does not cover `create_or_update_file`, however alike two "create"
//!   sentences embed;
//! - the two purposes (each description's first sentence) embed at or above [`PURPOSE_COSINE`],
//!   or, without an embedder, the words-only pair score reaches [`WORDS_ONLY`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::pairs::{self, Veto};
use super::quality::Shadow;
use crate::tools::{Tool, ToolSet};

/// Purposes at or above this cosine overlap (bundled MiniLM). On the corpus's candidates
/// (docs/lint-corpus.md) pairs with distinct purposes embed at −0.13 to 0.52, and same-verb
/// pairs on different resources up to 0.77, which the resource rule rejects; a first
/// calibration, not a measured optimum.
pub const PURPOSE_COSINE: f64 = 0.55;
/// Without an embedding, a words-only pair score at or above this overlaps.
pub const WORDS_ONLY: f64 = 0.39;

/// What the confirmation saw for one candidate pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    /// Cosine of the two purposes (first sentences); absent without an embedder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose_cosine: Option<f64>,
    /// Words-only pair score (name affinity, description words).
    pub word_score: f64,
    /// A resource term both names share beside the verb (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_resource: Option<String>,
    /// Why the pair cannot overlap whatever the words say (`get` vs `update`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub veto: Option<Veto>,
}

/// A candidate pair judged: confirmed ones are the shadowing risks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShadowingRisk {
    /// The dearer tool, the one at risk.
    pub tool: String,
    pub invocation_cost: u32,
    pub cheaper_sibling: String,
    pub cheaper_sibling_invocation_cost: u32,
    pub justification: String,
    /// Offline evidence (absent when the model confirmed the pair).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
}

/// The purpose of a tool: its description's first sentence.
pub fn purpose(t: &Tool) -> String {
    let d = t.description_text().trim();
    crate::text::tokens::split_first_sentence(d)
        .0
        .trim()
        .to_string()
}

/// The tools whose purposes the confirmation needs embedded, in set order.
pub fn needs_purpose<'a>(tools: &'a ToolSet, shadows: &[Shadow]) -> Vec<&'a Tool> {
    tools
        .tools
        .iter()
        .filter(|t| {
            !purpose(t).is_empty()
                && shadows
                    .iter()
                    .any(|s| s.dearer == t.name || s.cheaper == t.name)
        })
        .collect()
}

/// Judge every candidate; returns (confirmed, rejected), each in candidate order. `purposes` maps
/// a tool name to its purpose's embedding.
pub fn confirm(
    tools: &ToolSet,
    shadows: &[Shadow],
    purposes: Option<&BTreeMap<String, Vec<f32>>>,
) -> (Vec<ShadowingRisk>, Vec<ShadowingRisk>) {
    let at = |n: &str| tools.tools.iter().position(|t| t.name == n);
    let idx: Vec<(usize, usize)> = shadows
        .iter()
        .filter_map(|s| Some((at(&s.dearer)?, at(&s.cheaper)?)))
        .collect();
    let words = pairs::word_affinity(tools, &idx);
    let (mut yes, mut no) = (Vec::new(), Vec::new());
    for (s, (word_score, veto)) in shadows.iter().zip(words) {
        let purpose_cosine = purposes.map(|p| match (p.get(&s.dearer), p.get(&s.cheaper)) {
            (Some(a), Some(b)) => round2(f64::from(crate::embed::cosine(
                ndarray::ArrayView1::from(a.as_slice()),
                ndarray::ArrayView1::from(b.as_slice()),
            ))),
            // A tool with no description has no purpose to overlap with.
            _ => 0.0,
        });
        let overlap = match purpose_cosine {
            Some(c) => c >= PURPOSE_COSINE,
            None => word_score >= WORDS_ONLY,
        };
        let shared_resource = shared_resource(&s.dearer, &s.cheaper);
        let confirmed = overlap && veto.is_none() && shared_resource.is_some();
        let why = match (&veto, purpose_cosine) {
            (Some(v), _) => format!("purposes differ: {}", v.describe()),
            (None, _) if shared_resource.is_none() => {
                "purposes differ: the names share no resource beside the verb".to_string()
            }
            (None, Some(c)) if confirmed => format!(
                "purposes overlap (cosine {c:.2} ≥ {PURPOSE_COSINE:.2}) and `{}` costs {} against {}",
                s.cheaper, s.cheaper_cost, s.dearer_cost
            ),
            (None, Some(c)) => {
                format!("purposes differ (cosine {c:.2} < {PURPOSE_COSINE:.2}): asymmetry alone")
            }
            (None, None) if confirmed => format!(
                "names and descriptions overlap (words {word_score:.2} ≥ {WORDS_ONLY:.2}) and `{}` costs {} against {}",
                s.cheaper, s.cheaper_cost, s.dearer_cost
            ),
            (None, None) => format!(
                "purposes differ (words {word_score:.2} < {WORDS_ONLY:.2}): asymmetry alone"
            ),
        };
        let r = ShadowingRisk {
            tool: s.dearer.clone(),
            invocation_cost: s.dearer_cost,
            cheaper_sibling: s.cheaper.clone(),
            cheaper_sibling_invocation_cost: s.cheaper_cost,
            justification: why,
            evidence: Some(Evidence {
                purpose_cosine,
                word_score,
                shared_resource,
                veto,
            }),
        };
        if confirmed { yes.push(r) } else { no.push(r) }
    }
    (yes, no)
}

/// A name term both tools share other than each name's first (its verb), stemmed.
fn shared_resource(a: &str, b: &str) -> Option<String> {
    let rest = |n: &str| -> Vec<String> {
        let mut t = crate::text::terms::name_terms(n);
        if t.len() > 1 {
            t.remove(0);
        }
        t
    };
    let (x, y) = (rest(a), rest(b));
    x.into_iter().find(|t| y.contains(t))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
