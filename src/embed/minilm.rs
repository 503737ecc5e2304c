//! all-MiniLM-L6-v2 in-process with candle, weights compiled into the binary.
//!
//! Reproduces sentence-transformers' pipeline for this model: strip, WordPiece (lower-cased),
//! truncate to 256 tokens including [CLS]/[SEP], BERT forward, mean pooling over the attention
//! mask, L2 normalisation. Weights are stored as f16 (see models/make_model.sh) and widened to f32
//! at load; all arithmetic is f32.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor};
use half::f16;
use half::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
use ndarray::Array2;
use safetensors::{Dtype, SafeTensors};
use tokenizers::{Encoding, Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::Embedder;
use super::bert::{Bert, Config, Weights};
use crate::{Error, Result};

const WEIGHTS: &[u8] = include_bytes!("../../models/all-MiniLM-L6-v2/model.f16.safetensors");
const TOKENIZER_JSON: &[u8] = include_bytes!("../../models/all-MiniLM-L6-v2/tokenizer.json");
const CONFIG_JSON: &str = include_str!("../../models/all-MiniLM-L6-v2/config.json");
const SHA256SUMS: &str = include_str!("../../models/all-MiniLM-L6-v2/SHA256SUMS");

/// sentence-transformers' `max_seq_length` for this model, counting [CLS] and [SEP]. The bundled
/// tokenizer.json says 128 (and fixed padding to 128); both are overridden.
pub const MAX_SEQ_LEN: usize = 256;
/// Output dimension of the model.
const DIM: usize = 384;
/// Most texts per forward pass. Texts are sorted by token count first, so padding stays small.
/// 64 rather than 32: short texts (most tool descriptions) make small gemms, and per-op overhead
/// dominates them (docs/embedder.md).
const BATCH: usize = 64;
/// Most padded tokens per forward pass (n · L, L the pass's longest text): 16 texts at 256
/// tokens, 32 at 128, the full 64 up to 64. The largest activation, the feed-forward's
/// (n · L · 1536) f32, is then 24 MiB, under the 32 MiB mmap threshold that app::process sets for
/// glibc, so the heap is reused instead of fresh pages being faulted in and zeroed. Attention
/// no longer bounds the pass: the fused attention (embed::bert) keeps one text's L² scores per
/// thread, not the pass's n · heads · L². 2,048 and 8,192 measured within the noise of 4,096.
const PASS_TOKENS: usize = 4096;

struct Loaded {
    model: Bert,
    tokenizer: Tokenizer,
    load_time: Duration,
}

/// One model per process, shared by every `MiniLm` value; a load error is kept so it is reported
/// on every call instead of retried.
static MODEL: OnceLock<std::result::Result<Loaded, String>> = OnceLock::new();

fn model() -> Result<&'static Loaded> {
    MODEL
        .get_or_init(load)
        .as_ref()
        .map_err(|e| Error::Incomplete(format!("bundled embedding model failed to load: {e}")))
}

fn load() -> std::result::Result<Loaded, String> {
    let start = Instant::now();
    let config: Config = serde_json::from_str(CONFIG_JSON).map_err(|e| e.to_string())?;
    let model = Bert::load(widened_weights()?, &config).map_err(|e| e.to_string())?;
    let mut tokenizer = Tokenizer::from_bytes(TOKENIZER_JSON).map_err(|e| e.to_string())?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_SEQ_LEN,
            strategy: TruncationStrategy::LongestFirst,
            stride: 0,
            direction: TruncationDirection::Right,
        }))
        .map_err(|e| e.to_string())?;
    // We pad per batch ourselves, after sorting by length.
    tokenizer.with_padding(None);
    Ok(Loaded {
        model,
        tokenizer,
        load_time: start.elapsed(),
    })
}

/// The bundled f16 weights as f32 tensors. candle's own loader widens element by element (most of
/// the load time); half's slice conversion uses F16C/AVX when the CPU has them.
fn widened_weights() -> std::result::Result<Weights, String> {
    let st = SafeTensors::deserialize(WEIGHTS).map_err(|e| e.to_string())?;
    st.iter()
        .map(|(name, view)| {
            if view.dtype() != Dtype::F16 {
                return Err(format!(
                    "{name}: expected F16 weights, found {:?}",
                    view.dtype()
                ));
            }
            // The bytes inside the binary need not be 2-aligned, so they are read, not cast.
            let bits: Vec<u16> = view
                .data()
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect();
            let mut values = vec![0f32; bits.len()];
            bits.reinterpret_cast::<f16>()
                .convert_to_f32_slice(&mut values);
            let t =
                Tensor::from_vec(values, view.shape(), &Device::Cpu).map_err(|e| e.to_string())?;
            Ok((name.to_string(), t))
        })
        .collect()
}

/// The bundled all-MiniLM-L6-v2 embedder (384 dimensions).
#[derive(Debug, Clone)]
pub struct MiniLm {
    id: String,
}

impl Default for MiniLm {
    fn default() -> Self {
        Self::new()
    }
}

impl MiniLm {
    /// Cheap: the model is loaded on the first `embed` (or `load`) call.
    pub fn new() -> Self {
        Self {
            id: format!("minilm:all-MiniLM-L6-v2@{}", &weights_sha256()[..12]),
        }
    }

    /// Load the model now (if not yet loaded) and return how long loading took.
    pub fn load(&self) -> Result<Duration> {
        Ok(model()?.load_time)
    }

    /// How long loading took, if it has happened in this process.
    pub fn load_time(&self) -> Option<Duration> {
        MODEL.get()?.as_ref().ok().map(|m| m.load_time)
    }

    /// Embed on the calling thread (CPU-bound; the async trait method offloads to this).
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Array2<f32>> {
        let m = model()?;
        // Like sentence-transformers, strip surrounding whitespace before tokenising.
        let stripped: Vec<&str> = texts.iter().map(|t| t.trim()).collect();
        let encodings = m
            .tokenizer
            .encode_batch(stripped, true)
            .map_err(|e| Error::Incomplete(format!("tokenizer: {e}")))?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let chunks = batches(&order, |i| encodings[i].get_ids().len());

        // One pass at a time, each matmul on every core: on a quiet machine that beat two passes
        // side by side by 10-20% (their matmuls competed for the same two cores; docs/embedder.md).
        let results: Vec<candle_core::Result<Vec<Vec<f32>>>> = chunks
            .iter()
            .map(|chunk| {
                let batch: Vec<&Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
                forward(&m.model, &batch)
            })
            .collect();
        let mut out = Array2::<f32>::zeros((texts.len(), DIM));
        for (chunk, rows) in chunks.iter().zip(results) {
            let rows = rows.map_err(|e| Error::Incomplete(format!("embedding model: {e}")))?;
            for (&i, row) in chunk.iter().zip(rows) {
                out.row_mut(i).assign(&ndarray::ArrayView1::from(&row));
            }
        }
        Ok(out)
    }
}

/// Cuts `order` (indices sorted by token count, ascending) into consecutive forward passes of at
/// most `BATCH` texts and `PASS_TOKENS` padded tokens (n · L, L the pass's longest text).
fn batches(order: &[usize], len: impl Fn(usize) -> usize) -> Vec<&[usize]> {
    let mut out = Vec::new();
    let mut start = 0;
    for end in 1..=order.len() {
        let n = end - start;
        let l = len(order[end - 1]);
        if n > 1 && (n > BATCH || n * l > PASS_TOKENS) {
            out.push(&order[start..end - 1]);
            start = end - 1;
        }
    }
    if start < order.len() {
        out.push(&order[start..]);
    }
    out
}

/// One padded forward pass: mean-pooled, L2-normalised rows in `batch` order.
fn forward(model: &Bert, batch: &[&Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
    // Each text's real tokens: what the encoder attends over and the pooling averages.
    let lens: Vec<usize> = batch.iter().map(|e| e.get_ids().len()).collect();
    let len = lens.iter().copied().max().unwrap_or(0);
    let n = batch.len();
    let (mut ids, mut types, mut mask) = (
        Vec::with_capacity(n * len),
        Vec::with_capacity(n * len),
        Vec::with_capacity(n * len),
    );
    for (e, &t) in batch.iter().zip(&lens) {
        let pad = len - t;
        // Right-padded with [PAD] (id 0, type 0), which the encoder gives no attention.
        ids.extend(
            e.get_ids()
                .iter()
                .copied()
                .chain(std::iter::repeat_n(0, pad)),
        );
        types.extend(
            e.get_type_ids()
                .iter()
                .copied()
                .chain(std::iter::repeat_n(0, pad)),
        );
        mask.extend((0..len).map(|j| u32::from(j < t)));
    }
    let dev = Device::Cpu;
    let ids = Tensor::from_vec(ids, (n, len), &dev)?;
    let types = Tensor::from_vec(types, (n, len), &dev)?;
    let mask = Tensor::from_vec(mask, (n, len), &dev)?;
    let hidden = model.forward(&ids, &types, &lens)?; // (n, len, DIM)
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
    let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (n, DIM)
    // Same clamps as sentence-transformers (token count ≥ 1e-9) and torch's normalize (‖x‖ ≥ 1e-12).
    let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?; // (n, 1)
    let mean = summed.broadcast_div(&counts)?;
    let norms = mean
        .sqr()?
        .sum_keepdim(1)?
        .sqrt()?
        .clamp(1e-12f32, f32::MAX)?;
    mean.broadcast_div(&norms)?.to_vec2::<f32>()
}

/// sha256 of the bundled weights, as recorded in models/all-MiniLM-L6-v2/SHA256SUMS (a unit test
/// checks it against the bytes actually compiled in, so hashing 45 MB is not paid at run time).
fn weights_sha256() -> &'static str {
    SHA256SUMS
        .lines()
        .find_map(|l| l.strip_suffix("  model.f16.safetensors"))
        .expect("SHA256SUMS lists model.f16.safetensors")
}

#[async_trait::async_trait]
impl Embedder for MiniLm {
    fn id(&self) -> &str {
        &self.id
    }

    async fn embed(&self, texts: &[String]) -> Result<Array2<f32>> {
        if texts.is_empty() {
            return Ok(Array2::zeros((0, DIM)));
        }
        let this = self.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || this.embed_blocking(&texts))
            .await
            .map_err(|e| Error::Incomplete(format!("embedding task failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn sha256sums_match_bundled_bytes() {
        let sum = |b: &[u8]| hex::encode(Sha256::digest(b));
        let listed = |name: &str| {
            SHA256SUMS
                .lines()
                .find_map(|l| l.strip_suffix(&format!("  {name}")))
                .unwrap()
                .to_string()
        };
        assert_eq!(sum(WEIGHTS), listed("model.f16.safetensors"));
        assert_eq!(sum(TOKENIZER_JSON), listed("tokenizer.json"));
        assert_eq!(sum(CONFIG_JSON.as_bytes()), listed("config.json"));
        assert!(
            MiniLm::new()
                .id()
                .starts_with("minilm:all-MiniLM-L6-v2@b15a99c7ad21")
        );
    }

    #[test]
    fn bundled_weights_are_f16_and_small() {
        // The committed model must stay ≤ 50 MB; f16 is what keeps it there.
        assert!(WEIGHTS.len() <= 50 * 1024 * 1024);
        let header_len = u64::from_le_bytes(WEIGHTS[..8].try_into().unwrap()) as usize;
        let header: serde_json::Value =
            serde_json::from_slice(&WEIGHTS[8..8 + header_len]).unwrap();
        let obj = header.as_object().unwrap();
        assert!(obj.len() > 100);
        for (name, t) in obj.iter().filter(|(k, _)| *k != "__metadata__") {
            assert_eq!(t["dtype"], "F16", "{name}");
        }
    }

    #[test]
    fn tokenizer_overrides_bundled_128_truncation() {
        let m = model().unwrap();
        let long = "word ".repeat(600);
        let enc = m.tokenizer.encode(long.as_str(), true).unwrap();
        assert_eq!(enc.get_ids().len(), MAX_SEQ_LEN);
        let short = m.tokenizer.encode("hello", true).unwrap();
        assert_eq!(
            short.get_ids(),
            &[101, 7592, 102],
            "no fixed padding to 128"
        );
    }

    /// Padding to a longer text in the same pass must not move a text's vector: masked positions
    /// get zero attention weight, and only the gemm shapes (so summation order) differ.
    #[test]
    fn vector_does_not_depend_on_padding() {
        let m = model().unwrap();
        let enc = |t: &str| m.tokenizer.encode(t, true).unwrap();
        let short = enc("Read the complete contents of a file from the file system.");
        let long = enc(&"List every directory entry with its size and permissions. ".repeat(40));
        assert_eq!(long.get_ids().len(), MAX_SEQ_LEN);
        assert!(short.get_ids().len() < 20);
        let alone = forward(&m.model, &[&short]).unwrap();
        let padded = forward(&m.model, &[&short, &long, &long]).unwrap();
        let c = super::super::cosine(
            ndarray::ArrayView1::from(&alone[0]),
            ndarray::ArrayView1::from(&padded[0]),
        );
        assert!(c > 1.0 - 1e-6, "padded to {MAX_SEQ_LEN} tokens: cosine {c}");
    }

    #[test]
    fn batches_respect_count_and_token_budget() {
        // Lengths ascending, as embed_blocking sorts them.
        let lens: Vec<usize> = (0..200).map(|i| 3 + i * 253 / 199).collect();
        let order: Vec<usize> = (0..lens.len()).collect();
        let cut = batches(&order, |i| lens[i]);
        assert_eq!(cut.concat(), order, "every text once, in order");
        for b in &cut {
            let l = lens[*b.last().unwrap()];
            assert!(b.len() <= BATCH);
            assert!(
                b.len() * l <= PASS_TOKENS,
                "{} texts of {l} tokens",
                b.len()
            );
        }
        let short: Vec<usize> = (0..200).collect();
        assert_eq!(
            batches(&short, |_| 20)[0].len(),
            BATCH,
            "short texts fill a whole pass"
        );
        assert!(batches(&[], |_| 0).is_empty());
    }

    #[tokio::test]
    async fn empty_batch_and_order() {
        let e = MiniLm::new();
        assert_eq!(e.embed(&[]).await.unwrap().shape(), &[0, DIM]);
        // Sorting by length must not reorder the output rows.
        let texts: Vec<String> = ["a much longer sentence about reading files", "hi", "x y"]
            .map(String::from)
            .to_vec();
        let all = e.embed(&texts).await.unwrap();
        for (i, t) in texts.iter().enumerate() {
            let one = e.embed(std::slice::from_ref(t)).await.unwrap();
            let c = super::super::cosine(all.row(i), one.row(0));
            assert!(c > 0.99999, "row {i}: {c}");
        }
        assert!(e.load_time().is_some());
    }
}
