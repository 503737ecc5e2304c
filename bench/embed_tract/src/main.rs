//! texts/s, load time and agreement of all-MiniLM-L6-v2 as int8-weight ONNX under tract,
//! with the same tokenisation, batching and pooling as driftgate's candle engine.
//!
//!   embed_tract_bench MODEL.onnx TOKENIZER.json FIXTURES_DIR [REPS]

use std::time::Instant;

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};
use tract_onnx::prelude::*;

type Model = std::sync::Arc<TypedRunnableModel>;

fn embed(model: &Model, tok: &Tokenizer, texts: &[String]) -> TractResult<Vec<Vec<f32>>> {
    let enc = tok
        .encode_batch(texts.iter().map(|t| t.trim()).collect::<Vec<_>>(), true)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| enc[i].get_ids().len());
    let mut out = vec![Vec::new(); texts.len()];
    for chunk in order.chunks(32) {
        let len = chunk.iter().map(|&i| enc[i].get_ids().len()).max().unwrap();
        let n = chunk.len();
        let mut ids = vec![0i64; n * len];
        let mut mask = vec![0i64; n * len];
        let types = vec![0i64; n * len];
        for (r, &i) in chunk.iter().enumerate() {
            for (c, &id) in enc[i].get_ids().iter().enumerate() {
                ids[r * len + c] = id as i64;
                mask[r * len + c] = 1;
            }
        }
        let t = |v: Vec<i64>| tract_ndarray::Array2::from_shape_vec((n, len), v).unwrap();
        let res = model.run(tvec!(
            t(ids).into_tensor().into(),
            t(mask.clone()).into_tensor().into(),
            t(types).into_tensor().into()
        ))?;
        let hidden = res[0].to_plain_array_view::<f32>()?; // (n, len, 384)
        for (r, &i) in chunk.iter().enumerate() {
            let mut v = vec![0f32; 384];
            let mut count = 0f32;
            for c in 0..len {
                if mask[r * len + c] == 1 {
                    count += 1.0;
                    for (d, x) in v.iter_mut().enumerate() {
                        *x += hidden[[r, c, d]];
                    }
                }
            }
            let norm = v.iter().map(|x| (x / count) * (x / count)).sum::<f32>().sqrt();
            out[i] = v.iter().map(|x| x / count / norm).collect();
        }
    }
    Ok(out)
}

fn main() -> TractResult<()> {
    let args: Vec<String> = std::env::args().collect();
    let reps: usize = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(5);
    let texts: Vec<String> = std::fs::read_to_string(format!("{}/texts100.txt", args[3]))?
        .lines()
        .map(String::from)
        .collect();
    let reference: Vec<Vec<f32>> =
        serde_json::from_str(&std::fs::read_to_string(format!("{}/ref100.json", args[3]))?)?;

    let start = Instant::now();
    let mut model = tract_onnx::onnx().model_for_path(&args[1])?;
    let (b, s) = (model.symbols.sym("batch"), model.symbols.sym("sequence"));
    for i in 0..3 {
        model.set_input_fact(i, i64::fact([b.to_dim(), s.to_dim()]).into())?;
    }
    let model = model.into_optimized()?.into_runnable()?;
    let mut tok = Tokenizer::from_file(&args[2]).map_err(|e| anyhow::anyhow!("{e}"))?;
    tok.with_truncation(Some(TruncationParams {
        max_length: 256,
        strategy: TruncationStrategy::LongestFirst,
        stride: 0,
        direction: TruncationDirection::Right,
    }))
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    tok.with_padding(None);
    let load_s = start.elapsed().as_secs_f64();

    let first = embed(&model, &tok, &texts)?;
    let start = Instant::now();
    for _ in 0..reps {
        embed(&model, &tok, &texts)?;
    }
    let secs = start.elapsed().as_secs_f64();
    let cos: Vec<f32> = first
        .iter()
        .zip(&reference)
        .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum())
        .collect();
    println!(
        "{}",
        serde_json::json!({
            "engine": "tract-onnx 0.23 int8-weight ONNX",
            "load_s": load_s,
            "texts": texts.len(),
            "reps": reps,
            "texts_per_s": (texts.len() * reps) as f64 / secs,
            "min_cosine_vs_reference": cos.iter().copied().fold(f32::INFINITY, f32::min),
            "mean_cosine_vs_reference": cos.iter().sum::<f32>() / cos.len() as f32,
        })
    );
    Ok(())
}
