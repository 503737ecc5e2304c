//! Sentence embeddings for meaning drift.
//!
//! Two engines behind one trait: the bundled all-MiniLM-L6-v2 ([`MiniLm`], default, in-process,
//! no network, weights compiled into the binary) and any OpenAI-compatible `/v1/embeddings`
//! endpoint ([`OpenAiEmbedder`]). [`CachedEmbedder`] memoises either on disk.

mod cache;
mod minilm;
mod openai;

use std::io::BufRead;

use ndarray::{Array2, ArrayView1};
use serde::{Deserialize, Serialize};

pub use cache::{CacheStats, CachedEmbedder, DEFAULT_CACHE_DIR};
pub use minilm::{MAX_SEQ_LEN, MiniLm};
pub use openai::{DEFAULT_API_KEY_ENV, DEFAULT_BASE_URL, OpenAiEmbedder, RetryPolicy};

use crate::{Error, Result};

#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// Stable model id (goes into reports and cache keys), e.g.
    /// "minilm:all-MiniLM-L6-v2@<sha256-prefix>".
    fn id(&self) -> &str;
    /// Batch of texts → L2-normalised vectors, one row per text, in input order.
    async fn embed(&self, texts: &[String]) -> Result<Array2<f32>>;
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

/// Which embedder to use; serialisable so it can live in a config file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum EmbedderKind {
    /// Bundled all-MiniLM-L6-v2, in-process.
    #[default]
    MiniLm,
    /// An OpenAI-compatible embeddings endpoint.
    OpenAi {
        /// e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`; `/embeddings` is appended.
        base_url: String,
        model: String,
        /// Name of the environment variable holding the API key (default `OPENAI_API_KEY`);
        /// if it is unset or empty no `Authorization` header is sent (local servers).
        #[serde(default)]
        api_key_env: Option<String>,
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
                api_key_env,
            } => Box::new(OpenAiEmbedder::new(
                base_url,
                model,
                api_key_env.as_deref().unwrap_or(DEFAULT_API_KEY_ENV),
            )?),
        })
    }

    /// Build the embedder wrapped in an on-disk cache under `cache_dir`.
    pub fn build_cached(&self, cache_dir: impl Into<std::path::PathBuf>) -> Result<CachedEmbedder> {
        Ok(CachedEmbedder::new(self.build()?, cache_dir))
    }
}

/// Command-line options selecting an embedder; flattened into subcommands that embed.
#[derive(Debug, Clone, clap::Args)]
pub struct EmbedArgs {
    /// Embedding engine: the bundled model, or an OpenAI-compatible endpoint.
    #[arg(long, value_enum, default_value_t = EmbedderChoice::Minilm)]
    pub embedder: EmbedderChoice,
    /// Base URL of the OpenAI-compatible API (with `--embedder openai`).
    #[arg(long, value_name = "URL")]
    pub embed_base_url: Option<String>,
    /// Embedding model name sent to the endpoint (required with `--embedder openai`).
    #[arg(long, value_name = "MODEL")]
    pub embed_model: Option<String>,
    /// Environment variable that holds the API key (its value is never printed).
    #[arg(long, value_name = "VAR", default_value = DEFAULT_API_KEY_ENV)]
    pub embed_api_key_env: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EmbedderChoice {
    Minilm,
    Openai,
}

impl EmbedArgs {
    pub fn kind(&self) -> Result<EmbedderKind> {
        match self.embedder {
            EmbedderChoice::Minilm => {
                if self.embed_base_url.is_some() || self.embed_model.is_some() {
                    return Err(Error::Usage(
                        "--embed-base-url/--embed-model need --embedder openai".into(),
                    ));
                }
                Ok(EmbedderKind::MiniLm)
            }
            EmbedderChoice::Openai => Ok(EmbedderKind::OpenAi {
                base_url: self
                    .embed_base_url
                    .clone()
                    .unwrap_or_else(|| DEFAULT_BASE_URL.to_string()),
                model: self
                    .embed_model
                    .clone()
                    .ok_or_else(|| Error::Usage("--embedder openai needs --embed-model".into()))?,
                api_key_env: Some(self.embed_api_key_env.clone()),
            }),
        }
    }
}

/// `driftgate embed`: one text per input line → a JSON array with one vector per line.
pub async fn run_embed_cli(kind: EmbedderKind, input: impl BufRead) -> Result<String> {
    let texts = input
        .lines()
        .collect::<std::io::Result<Vec<String>>>()
        .map_err(|e| Error::io("<stdin>", e))?;
    let embedder = kind.build()?;
    let vectors = embedder.embed(&texts).await?;
    let rows: Vec<Vec<f32>> = vectors.outer_iter().map(|r| r.to_vec()).collect();
    Ok(serde_json::to_string(&rows).expect("f32 vectors always serialise"))
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

    #[test]
    fn args_to_kind() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            e: EmbedArgs,
        }
        let k = |v: &[&str]| T::try_parse_from(std::iter::once("t").chain(v.iter().copied()));
        assert_eq!(k(&[]).unwrap().e.kind().unwrap(), EmbedderKind::MiniLm);
        let o = k(&["--embedder", "openai", "--embed-model", "m"]).unwrap();
        assert_eq!(
            o.e.kind().unwrap(),
            EmbedderKind::OpenAi {
                base_url: DEFAULT_BASE_URL.into(),
                model: "m".into(),
                api_key_env: Some("OPENAI_API_KEY".into()),
            }
        );
        let no_model = k(&["--embedder", "openai"]).unwrap();
        assert!(matches!(no_model.e.kind(), Err(Error::Usage(_))));
        let stray = k(&["--embed-model", "m"]).unwrap();
        assert!(matches!(stray.e.kind(), Err(Error::Usage(_))));
    }
}
