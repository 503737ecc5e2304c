//! Sentence embeddings for meaning drift.
//!
//! Two engines behind one trait: the bundled all-MiniLM-L6-v2 ([`MiniLm`], default, in-process,
//! no network, weights compiled into the binary) and any OpenAI-compatible `/v1/embeddings`
//! endpoint ([`OpenAiEmbedder`]). [`CachedEmbedder`] memoises either on disk.

mod bert;
mod cache;
mod minilm;
mod openai;

use ndarray::{Array2, ArrayView1};

pub use cache::{CacheStats, CachedEmbedder};
pub use minilm::{MAX_SEQ_LEN, MiniLm};
pub use openai::{DEFAULT_API_KEY_ENV, DEFAULT_BASE_URL, OpenAiEmbedder};

use crate::cache::Cache;
use crate::http::secret::Secret;
use crate::{Error, Result};

#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// Stable model id (goes into reports and cache keys), e.g.
    /// "minilm:all-MiniLM-L6-v2@<sha256-prefix>".
    fn id(&self) -> &str;
    /// Batch of texts → L2-normalised vectors, one row per text, in input order.
    async fn embed(&self, texts: &[String]) -> Result<Array2<f32>>;
    /// What a memoising embedder counted so far (`--verbose`); `None` for a bare engine.
    fn stats(&self) -> Option<CacheStats> {
        None
    }
    /// The texts a memoising embedder had its model embed so far, each once, sorted (a bench
    /// times embedding them in one call: `check --embedded-texts`); empty for a bare engine.
    fn embedded_texts(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Cosine similarity, accumulated in f64 so values near 1 keep their last digits.
/// Returns 0 when either vector is all zeros. Panics if the lengths differ (a programming error:
/// vectors from one embedder always share a dimension).
pub fn cosine(a: ArrayView1<f32>, b: ArrayView1<f32>) -> f32 {
    assert_eq!(
        a.len(),
        b.len(),
        "cosine of vectors with different dimensions"
    );
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (&x, &y) in a.iter().zip(b.iter()) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())) as f32
}

/// Which embedder to use.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EmbedderKind {
    /// Bundled all-MiniLM-L6-v2, in-process.
    #[default]
    MiniLm,
    /// An OpenAI-compatible embeddings endpoint.
    OpenAi {
        /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`; `/embeddings` is appended.
        base_url: String,
        model: String,
        /// `None`: no `Authorization` header (local servers).
        key: Option<Secret>,
    },
}

impl EmbedderKind {
    /// Build the embedder. The MiniLM model itself is loaded lazily on first use.
    pub fn build(&self) -> Result<Box<dyn Embedder>> {
        Ok(match self {
            EmbedderKind::MiniLm => Box::new(MiniLm::new()),
            EmbedderKind::OpenAi {
                base_url,
                model,
                key,
            } => Box::new(OpenAiEmbedder::new(base_url, model, key.clone())?),
        })
    }

    /// Build the embedder, memoised in `cache`.
    pub fn build_cached(&self, cache: &Cache) -> Result<CachedEmbedder> {
        Ok(CachedEmbedder::new(self.build()?, cache))
    }
}

/// Scale each row to unit length; a zero row means the engine produced garbage.
pub(crate) fn l2_normalize_rows(m: &mut Array2<f32>) -> Result<()> {
    for (i, mut row) in m.outer_iter_mut().enumerate() {
        let norm = row
            .iter()
            .map(|&x| f64::from(x).powi(2))
            .sum::<f64>()
            .sqrt();
        if norm == 0.0 || !norm.is_finite() {
            return Err(Error::Incomplete(format!(
                "embedding {i} has norm {norm}; cannot normalise"
            )));
        }
        row.mapv_inplace(|x| (f64::from(x) / norm) as f32);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn cosine_basics() {
        let a = array![1.0f32, 0.0];
        let b = array![0.0f32, 2.0];
        let c = array![3.0f32, 0.0];
        assert_eq!(cosine(a.view(), b.view()), 0.0);
        assert!((cosine(a.view(), c.view()) - 1.0).abs() < 1e-7);
        assert!((cosine(a.view(), (-&c).view()) + 1.0).abs() < 1e-7);
        assert_eq!(cosine(a.view(), array![0.0f32, 0.0].view()), 0.0);
    }

    #[test]
    fn normalize_rows_and_reject_zero() {
        let mut m = array![[3.0f32, 4.0], [0.0, -2.0]];
        l2_normalize_rows(&mut m).unwrap();
        assert_eq!(m, array![[0.6f32, 0.8], [0.0, -1.0]]);
        let mut z = array![[0.0f32, 0.0]];
        assert!(matches!(
            l2_normalize_rows(&mut z),
            Err(Error::Incomplete(_))
        ));
    }
}
