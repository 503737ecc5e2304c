//! Throughput, load time and agreement of the bundled MiniLM on the 100 reference texts.
//! Driven by bench/embed.sh (which adds peak memory); prints one JSON object.
//!
//!   cargo run --release --example embed_bench -- [REPS]

use std::time::Instant;

use driftgate::embed::{MiniLm, cosine};
use ndarray::ArrayView1;

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("REPS is a number"))
        .unwrap_or(5);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/embeddings");
    let texts: Vec<String> = std::fs::read_to_string(format!("{dir}/texts100.txt"))
        .expect("texts100.txt")
        .lines()
        .map(String::from)
        .collect();
    let reference: Vec<Vec<f32>> = serde_json::from_str(
        &std::fs::read_to_string(format!("{dir}/ref100.json")).expect("ref100.json"),
    )
    .expect("ref100.json is a JSON array of vectors");

    let model = MiniLm::new();
    let load = model.load().expect("bundled model loads");
    // One untimed pass so first-touch allocation is not billed to throughput (ST gets the same).
    let first = model.embed_blocking(&texts).expect("embed");
    let (start, cpu_start) = (Instant::now(), cpu_seconds());
    for _ in 0..reps {
        model.embed_blocking(&texts).expect("embed");
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_start;

    let cos: Vec<f32> = reference
        .iter()
        .enumerate()
        .map(|(i, r)| cosine(first.row(i), ArrayView1::from(r)))
        .collect();
    let min = cos.iter().copied().fold(f32::INFINITY, f32::min);
    let mean = cos.iter().sum::<f32>() / cos.len() as f32;
    println!(
        "{}",
        serde_json::json!({
            "engine": "driftgate candle f16→f32",
            "model_id": driftgate::embed::Embedder::id(&model),
            "load_s": load.as_secs_f64(),
            "texts": texts.len(),
            "reps": reps,
            "texts_per_s": (texts.len() * reps) as f64 / secs,
            // Robust to other load on a shared machine, unlike wall-clock throughput.
            "texts_per_cpu_s": (texts.len() * reps) as f64 / cpu,
            "min_cosine_vs_reference": min,
            "mean_cosine_vs_reference": mean,
        })
    );
}

/// User + system CPU time of this process (Linux /proc; clock ticks are 100 Hz there).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}
