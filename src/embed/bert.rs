//! The BERT encoder of all-MiniLM-L6-v2 on candle tensors, written for this one model instead of
//! candle-transformers' general `BertModel`, to keep both cores busy (docs/embedder.md § "Own
//! encoder"). candle does the embedding lookup and LayerNorm; two ops of our own do the rest:
//! - `Dense`, each linear layer as one op: the weight transposed once at load, the output started
//!   as bias (+ residual) and accumulated into by gemm, exact GELU fused in where BERT has it;
//!   query, key and value are one `Dense`, the 1/√head_dim score scale folded into the query's;
//! - `Attention`, fused and parallel per (text, head), over each text's own tokens only.
//!
//! The maths is BERT's (post-LayerNorm, absolute positions, padded keys without weight): unit
//! tests hold the ops to candle's `Linear` and to the additive-mask attention, and the agreement
//! tests against sentence-transformers (tests/it/embed_reference.rs) the whole.

use std::collections::HashMap;

use candle_core::{CpuStorage, CustomOp1, CustomOp2, Layout, Shape, Tensor};
use serde::Deserialize;

/// The fields of the model's config.json this encoder reads.
#[derive(Debug, Deserialize)]
pub struct Config {
    pub hidden_size: usize,
    pub num_attention_heads: usize,
    pub num_hidden_layers: usize,
    pub layer_norm_eps: f64,
    pub hidden_act: String,
}

/// Weights keyed by their safetensors names (`embeddings.word_embeddings.weight`, …).
pub type Weights = HashMap<String, Tensor>;

struct Norm {
    weight: Tensor,
    bias: Tensor,
    eps: f32,
}

impl Norm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::layer_norm(x, &self.weight, &self.bias, self.eps)
    }
}

struct Layer {
    /// hidden → 3·hidden: query (pre-scaled), key, value.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    /// The feed-forward up-projection, GELU included.
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

fn take(w: &mut Weights, name: &str) -> candle_core::Result<Tensor> {
    w.remove(name)
        .ok_or_else(|| candle_core::Error::Msg(format!("weights lack {name}")))
}

pub struct Bert {
    word: Tensor,
    position: Tensor,
    token_type: Tensor,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
}

impl Bert {
    pub fn load(mut w: Weights, config: &Config) -> candle_core::Result<Self> {
        if config.hidden_act != "gelu" {
            candle_core::bail!(
                "hidden_act {:?}: only exact gelu is implemented",
                config.hidden_act
            );
        }
        let hidden = config.hidden_size;
        let heads = config.num_attention_heads;
        if heads == 0 || hidden % heads != 0 {
            candle_core::bail!("hidden_size {hidden} is not a multiple of {heads} heads");
        }
        let head_dim = hidden / heads;
        let eps = config.layer_norm_eps as f32;
        let w = &mut w;
        let norm = |w: &mut Weights, prefix: &str| -> candle_core::Result<Norm> {
            Ok(Norm {
                weight: take(w, &format!("{prefix}.weight"))?,
                bias: take(w, &format!("{prefix}.bias"))?,
                eps,
            })
        };
        let dense = |w: &mut Weights, name: &str, gelu: bool| -> candle_core::Result<Dense> {
            Dense::new(
                &take(w, &format!("{name}.weight"))?,
                &take(w, &format!("{name}.bias"))?,
                gelu,
            )
        };
        let scale = 1.0 / (head_dim as f64).sqrt();
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("encoder.layer.{i}");
            let attn = format!("{p}.attention.self");
            let part = |w: &mut Weights, which: &str| -> candle_core::Result<(Tensor, Tensor)> {
                Ok((
                    take(w, &format!("{attn}.{which}.weight"))?,
                    take(w, &format!("{attn}.{which}.bias"))?,
                ))
            };
            let (q_w, q_b) = part(w, "query")?;
            let (k_w, k_b) = part(w, "key")?;
            let (v_w, v_b) = part(w, "value")?;
            let qkv = Dense::new(
                &Tensor::cat(&[(q_w * scale)?, k_w, v_w], 0)?,
                &Tensor::cat(&[(q_b * scale)?, k_b, v_b], 0)?,
                false,
            )?;
            layers.push(Layer {
                qkv,
                attention_out: dense(w, &format!("{p}.attention.output.dense"), false)?,
                attention_norm: norm(w, &format!("{p}.attention.output.LayerNorm"))?,
                intermediate: dense(w, &format!("{p}.intermediate.dense"), true)?,
                output: dense(w, &format!("{p}.output.dense"), false)?,
                output_norm: norm(w, &format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(Self {
            word: take(w, "embeddings.word_embeddings.weight")?,
            position: take(w, "embeddings.position_embeddings.weight")?,
            token_type: take(w, "embeddings.token_type_embeddings.weight")?,
            embedding_norm: norm(w, "embeddings.LayerNorm")?,
            layers,
            heads,
            head_dim,
        })
    }

    /// Hidden states (n, len, hidden) of `ids`/`types`, each (n, len) u32, right-padded: text `i`
    /// has `lens[i]` real tokens. A padded position attends and is attended by nothing; its own
    /// row is left unspecified (the caller's mean pooling masks it out).
    pub fn forward(
        &self,
        ids: &Tensor,
        types: &Tensor,
        lens: &[usize],
    ) -> candle_core::Result<Tensor> {
        let (n, len) = ids.dims2()?;
        if len > self.position.dim(0)? {
            candle_core::bail!("{len} tokens exceed the model's positions");
        }
        if lens.len() != n || lens.iter().any(|&t| t > len) {
            candle_core::bail!("lens {lens:?} do not fit {n} texts of {len} tokens");
        }
        let hidden = self.heads * self.head_dim;
        let words = self.word.index_select(&ids.flatten_all()?, 0)?;
        let types = self.token_type.index_select(&types.flatten_all()?, 0)?;
        let positions = self.position.narrow(0, 0, len)?.repeat((n, 1))?;
        let mut h = self
            .embedding_norm
            .forward(&((words + types)? + positions)?)?; // (n·len, hidden)
        let attention = Attention {
            len,
            heads: self.heads,
            head_dim: self.head_dim,
            lens: lens.to_vec(),
        };
        for layer in &self.layers {
            let context = h
                .apply_op1_no_bwd(&layer.qkv)?
                .apply_op1_no_bwd(&attention)?; // (n·len, hidden)
            h = layer
                .attention_norm
                .forward(&context.apply_op2_no_bwd(&h, &layer.attention_out)?)?;
            let up = h.apply_op1_no_bwd(&layer.intermediate)?;
            h = layer
                .output_norm
                .forward(&up.apply_op2_no_bwd(&h, &layer.output)?)?;
        }
        h.reshape((n, len, hidden))
    }
}

/// Self-attention of one layer, fused: from the projection `qkv` (n·len, 3·hidden; query already
/// scaled by 1/√head_dim), each (text, head) computes softmax(q·kᵀ)·v over the text's own
/// `lens[i]` tokens and writes its context straight into the (n·len, hidden) output, the heads
/// side by side. (text, head) pairs run in parallel on rayon's pool, each with its own small
/// single-threaded gemms: candle's batched matmul ran them one after another, each too small to
/// use a second core, and materialised the mask addition, the scores and two transposes.
///
/// Same result as BERT's additive mask: a padded key gets exp(f32::MIN − max) = 0 weight there,
/// and no weight here. Padded query rows stay 0; nothing reads them but the caller's pooling,
/// which masks them out.
struct Attention {
    len: usize,
    heads: usize,
    head_dim: usize,
    lens: Vec<usize>,
}

/// A pointer that (text, head) jobs write through, each to its own rows and columns.
#[derive(Clone, Copy)]
struct Out(*mut f32);
// SAFETY: the jobs of `Attention::cpu_fwd` write disjoint parts of one buffer that outlives them.
unsafe impl Send for Out {}
unsafe impl Sync for Out {}

impl Out {
    /// A method rather than `.0`, so closures capture the whole (Send) `Out`, not its pointer.
    fn at(self, offset: usize) -> *mut f32 {
        self.0.wrapping_add(offset)
    }
}

impl CustomOp1 for Attention {
    fn name(&self) -> &'static str {
        "attention"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        use rayon::prelude::*;
        let (CpuStorage::F32(data), Some((from, to))) = (s, l.contiguous_offsets()) else {
            candle_core::bail!("attention takes a contiguous f32 tensor");
        };
        let (hd, len) = (self.head_dim, self.len);
        let hidden = self.heads * hd;
        let n = self.lens.len();
        if l.dims() != [n * len, 3 * hidden] {
            candle_core::bail!(
                "attention: qkv of {:?}, want [{}, {}]",
                l.dims(),
                n * len,
                3 * hidden
            );
        }
        let qkv = &data[from..to];
        let mut out = vec![0f32; n * len * hidden];
        let dst = Out(out.as_mut_ptr());
        let stride = 3 * hidden as isize;
        (0..n * self.heads).into_par_iter().for_each_init(
            Vec::new,
            |scores: &mut Vec<f32>, job| {
                let (text, head) = (job / self.heads, job % self.heads);
                let t = self.lens[text];
                if t == 0 {
                    return;
                }
                let q = &qkv[text * len * 3 * hidden + head * hd..];
                scores.clear();
                scores.resize(t * t, 0.0);
                // SAFETY: q, k and v rows of this text lie within `qkv` (checked shape), the
                // scores buffer is t × t, and this job alone writes rows text·len .. text·len + t,
                // columns head·hd .. (head + 1)·hd of `out`.
                unsafe {
                    // scores = q · kᵀ (t × t)
                    matmul(
                        (t, t, hd),
                        (scores.as_mut_ptr(), t),
                        false,
                        Mat::rows(q.as_ptr(), stride),
                        Mat::cols(q.as_ptr().add(hidden), stride),
                        false,
                    );
                    for row in scores.chunks_exact_mut(t) {
                        softmax(row);
                    }
                    // context = scores · v (t × hd), into the output's rows and this head's columns
                    matmul(
                        (t, hd, t),
                        (dst.at(text * len * hidden + head * hd), hidden),
                        false,
                        Mat::rows(scores.as_ptr(), t as isize),
                        Mat::rows(q.as_ptr().add(2 * hidden), stride),
                        false,
                    );
                }
            },
        );
        Ok((CpuStorage::F32(out), Shape::from((n * len, hidden))))
    }
}

/// An f32 matrix operand for gemm: where it starts and how far apart its rows and columns are.
#[derive(Clone, Copy)]
struct Mat {
    ptr: *const f32,
    row_stride: isize,
    col_stride: isize,
}

impl Mat {
    /// Row-major with rows `row_stride` apart.
    fn rows(ptr: *const f32, row_stride: isize) -> Self {
        Self {
            ptr,
            row_stride,
            col_stride: 1,
        }
    }

    /// The transpose of a row-major matrix whose rows are `row_stride` apart: its columns are
    /// those rows.
    fn cols(ptr: *const f32, row_stride: isize) -> Self {
        Self {
            ptr,
            row_stride: 1,
            col_stride: row_stride,
        }
    }
}

/// `dst` (m × n, row-major, rows `dst.1` apart) = `lhs` (m × k) · `rhs` (k × n), plus what `dst`
/// holds when `accumulate`; on rayon's pool when `parallel`, else on the calling thread.
///
/// # Safety
/// The three matrices must lie in live memory with the given shapes and strides, and nothing
/// else may touch `dst`'s elements during the call.
unsafe fn matmul(
    (m, n, k): (usize, usize, usize),
    dst: (*mut f32, usize),
    accumulate: bool,
    lhs: Mat,
    rhs: Mat,
    parallel: bool,
) {
    let parallelism = if parallel {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: the caller's contract; gemm computes dst = 1·dst + 1·lhs·rhs (dst unread unless
    // accumulating).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.0,
            1,
            dst.1 as isize,
            accumulate,
            lhs.ptr,
            lhs.col_stride,
            lhs.row_stride,
            rhs.ptr,
            rhs.col_stride,
            rhs.row_stride,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// In place, as torch's softmax: subtract the maximum, exponentiate, divide by the sum.
fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0f32;
    for x in row.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    let inv = 1.0 / sum;
    for x in row.iter_mut() {
        *x *= inv;
    }
}

/// A linear layer as one op over rows of `inputs` values: `x·Wᵀ + bias`, then exact GELU
/// (0.5·x·(1 + erf(x/√2)), BERT's "gelu" and torch's default) when `gelu`, or plus a residual of
/// the output's shape when applied as a two-input op (`x.apply_op2_no_bwd(&residual, &dense)`).
///
/// Against candle's `Linear` (a matmul with a transposed weight, then a bias pass): the weight
/// is stored transposed once at load, because gemm re-packs a transposed weight on the calling
/// thread at every call (a serial 5% of an embedding run); the output starts as bias (+ residual),
/// filled in parallel, and gemm accumulates into it, instead of a serially zeroed output and
/// separate passes for the bias, the residual and the activation.
struct Dense {
    /// (inputs, outputs), row-major.
    wt: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    gelu: bool,
}

/// Rows per parallel job of the element-wise passes: one row per job costs more than the row.
const ROWS_PER_JOB: usize = 32;

impl Dense {
    /// From a (outputs, inputs) weight, as stored by transformers, and its bias.
    fn new(weight: &Tensor, bias: &Tensor, gelu: bool) -> candle_core::Result<Self> {
        let (outputs, inputs) = weight.dims2()?;
        let bias = bias.to_vec1::<f32>()?;
        if bias.len() != outputs {
            candle_core::bail!("bias of {} for {outputs} outputs", bias.len());
        }
        Ok(Self {
            wt: weight.t()?.contiguous()?.flatten_all()?.to_vec1::<f32>()?,
            bias,
            inputs,
            gelu,
        })
    }

    fn run(&self, x: &[f32], residual: Option<&[f32]>) -> Vec<f32> {
        use rayon::prelude::*;
        let outputs = self.bias.len();
        let rows = x.len() / self.inputs;
        let mut out: Vec<f32> = Vec::with_capacity(rows * outputs);
        out.spare_capacity_mut()
            .par_chunks_mut(outputs * ROWS_PER_JOB)
            .enumerate()
            .for_each(|(job, chunk)| {
                for (r, row) in chunk.chunks_exact_mut(outputs).enumerate() {
                    let at = (job * ROWS_PER_JOB + r) * outputs;
                    match residual {
                        Some(res) => {
                            for ((o, b), x) in row.iter_mut().zip(&self.bias).zip(&res[at..]) {
                                o.write(b + x);
                            }
                        }
                        None => {
                            for (o, b) in row.iter_mut().zip(&self.bias) {
                                o.write(*b);
                            }
                        }
                    }
                }
            });
        // SAFETY: every element was written above (the chunks cover the capacity exactly).
        unsafe { out.set_len(rows * outputs) };
        if rows > 0 {
            // SAFETY: x is rows × inputs, wt inputs × outputs and out rows × outputs, all
            // row-major and live for the call.
            unsafe {
                matmul(
                    (rows, outputs, self.inputs),
                    (out.as_mut_ptr(), outputs),
                    true,
                    Mat::rows(x.as_ptr(), self.inputs as isize),
                    Mat::rows(self.wt.as_ptr(), outputs as isize),
                    true,
                );
            }
        }
        if self.gelu {
            out.par_chunks_mut(outputs * ROWS_PER_JOB).for_each(|rows| {
                for v in rows.iter_mut() {
                    *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
                }
            });
        }
        out
    }

    /// The input's data and the output shape, or why the input does not fit.
    fn input<'a>(&self, s: &'a CpuStorage, l: &Layout) -> candle_core::Result<(&'a [f32], Shape)> {
        let (CpuStorage::F32(data), Some((from, to))) = (s, l.contiguous_offsets()) else {
            candle_core::bail!("dense takes contiguous f32 tensors");
        };
        let mut dims = l.dims().to_vec();
        if dims.last() != Some(&self.inputs) {
            candle_core::bail!("dense: rows of {dims:?}, weight of {} inputs", self.inputs);
        }
        *dims.last_mut().expect("checked") = self.bias.len();
        Ok((&data[from..to], Shape::from(dims)))
    }
}

impl CustomOp1 for Dense {
    fn name(&self) -> &'static str {
        "dense"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, shape) = self.input(s, l)?;
        Ok((CpuStorage::F32(self.run(x, None)), shape))
    }
}

impl CustomOp2 for Dense {
    fn name(&self) -> &'static str {
        "dense-residual"
    }

    fn cpu_fwd(
        &self,
        s: &CpuStorage,
        l: &Layout,
        rs: &CpuStorage,
        rl: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (x, shape) = self.input(s, l)?;
        let (CpuStorage::F32(r), Some((from, to))) = (rs, rl.contiguous_offsets()) else {
            candle_core::bail!("dense takes a contiguous f32 residual");
        };
        if rl.dims() != shape.dims() {
            candle_core::bail!("dense: residual of {:?}, output of {shape:?}", rl.dims());
        }
        Ok((CpuStorage::F32(self.run(x, Some(&r[from..to]))), shape))
    }
}

/// erf for f32 as a rational function of x² on [-4, 4] (±1 beyond, where f32 rounds erf to ±1):
/// the approximation XLA and Eigen use for float erf, branch-free and without `mul_add` (a libm
/// call on the baseline x86-64 target), so `Dense`'s GELU loop vectorises; libm's scalar `erff`
/// would not. Its error is within a few f32 ulps of erf (unit test against f64 erf).
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10_f32;
    p = p * x2 + 2.770_681_4e-8;
    p = p * x2 + -2.101_024e-6;
    p = p * x2 + -5.692_506_4e-5;
    p = p * x2 + -7.349_906e-4;
    p = p * x2 + -2.954_6e-3;
    p = p * x2 + -1.609_603_3e-2;
    let mut q = -1.456_607_2e-5_f32;
    q = q * x2 + -2.133_740_6e-4;
    q = q * x2 + -1.682_827e-3;
    q = q * x2 + -7.373_329e-3;
    q = q * x2 + -1.426_474e-2;
    x * p / q
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, IndexOp};

    /// Deterministic values in [-2, 2) (a 64-bit LCG), so a failure reproduces.
    fn random(shape: &[usize], seed: u64) -> Tensor {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let values: Vec<f32> = (0..shape.iter().product::<usize>())
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 40) as f32 / (1u64 << 24) as f32 * 4.0 - 2.0
            })
            .collect();
        Tensor::from_vec(values, shape, &Device::Cpu).unwrap()
    }

    fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
        (a - b)
            .unwrap()
            .abs()
            .unwrap()
            .flatten_all()
            .unwrap()
            .max(0)
            .unwrap()
            .to_scalar::<f32>()
            .unwrap()
    }

    /// The fused attention against BERT's own formulation (additive f32::MIN mask over padded
    /// keys, softmax, context, heads concatenated), on texts of different lengths in one pass.
    #[test]
    fn attention_matches_masked_attention() {
        let (heads, hd, len) = (3, 4, 7);
        let hidden = heads * hd;
        let lens = vec![7, 3, 1, 5];
        let n = lens.len();
        let qkv = random(&[n * len, 3 * hidden], 1);
        let fused = qkv
            .apply_op1_no_bwd(&Attention {
                len,
                heads,
                head_dim: hd,
                lens: lens.clone(),
            })
            .unwrap();
        let split = qkv
            .reshape((n, len, 3, heads, hd))
            .unwrap()
            .permute((2, 0, 3, 1, 4))
            .unwrap()
            .contiguous()
            .unwrap();
        let (q, k, v) = (
            split.i(0).unwrap(),
            split.i(1).unwrap(),
            split.i(2).unwrap(),
        );
        let mask: Vec<f32> = lens
            .iter()
            .flat_map(|&t| (0..len).map(move |j| if j < t { 0.0 } else { f32::MIN }))
            .collect();
        let mask = Tensor::from_vec(mask, (n, 1, 1, len), &Device::Cpu).unwrap();
        let scores = q
            .matmul(&k.t().unwrap())
            .unwrap()
            .broadcast_add(&mask)
            .unwrap();
        let probs = candle_nn::ops::softmax_last_dim(&scores).unwrap();
        let want = probs
            .matmul(&v)
            .unwrap()
            .transpose(1, 2)
            .unwrap()
            .contiguous()
            .unwrap()
            .reshape((n, len, hidden))
            .unwrap();
        let got = fused.reshape((n, len, hidden)).unwrap();
        for (i, &t) in lens.iter().enumerate() {
            let (g, w) = (got.i((i, ..t)).unwrap(), want.i((i, ..t)).unwrap());
            assert!(max_diff(&g, &w) < 1e-5, "text {i}: {}", max_diff(&g, &w));
        }
    }

    /// `Dense` against candle's `Linear`: x·Wᵀ + b, plus a residual, or through exact GELU.
    #[test]
    fn dense_matches_linear() {
        let (rows, inputs, outputs) = (70, 9, 5); // more rows than one parallel job
        let (w, b) = (random(&[outputs, inputs], 2), random(&[outputs], 3));
        let x = random(&[rows, inputs], 4);
        let residual = random(&[rows, outputs], 5);
        let linear = candle_nn::Linear::new(w.clone(), Some(b.clone()));
        let want = candle_core::Module::forward(&linear, &x).unwrap();
        let plain = Dense::new(&w, &b, false).unwrap();
        assert!(max_diff(&x.apply_op1_no_bwd(&plain).unwrap(), &want) < 1e-5);
        let with_residual = x.apply_op2_no_bwd(&residual, &plain).unwrap();
        assert!(max_diff(&with_residual, &(&want + &residual).unwrap()) < 1e-5);
        let gelu = x
            .apply_op1_no_bwd(&Dense::new(&w, &b, true).unwrap())
            .unwrap();
        assert!(max_diff(&gelu, &want.gelu_erf().unwrap()) < 1e-5);
        let wrong = random(&[rows, inputs + 1], 6);
        assert!(wrong.apply_op1_no_bwd(&plain).is_err());
    }

    #[test]
    fn erf_matches_f64_erf() {
        let mut worst = 0f64;
        for i in -600_000..=600_000 {
            let x = i as f32 * 1e-5; // -6 … 6
            let want = candle_core::cpu::erf::erf_f64(f64::from(x));
            worst = worst.max((f64::from(erf(x)) - want).abs());
        }
        assert!(worst < 5e-7, "max |erf error| {worst}");
        assert_eq!(erf(0.0), 0.0);
        assert_eq!(erf(9.0), erf(4.0));
        assert!(erf(-1.0) < 0.0);
    }
}
