//! Throughput of the bundled MiniLM on one workload, with and without model load. Driven by
//! bench/embed.sh (which adds peak memory and agreement with sentence-transformers); prints one
//! JSON object and writes the vectors of the first pass as little-endian f32 rows.
//!
//!   cargo run --release --example embed_bench -- TEXTS.json REPS VECTORS.f32

use std::time::Instant;

use driftgate::embed::MiniLm;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, texts_path, reps, vectors_path] = &args[..] else {
        panic!("usage: embed_bench TEXTS.json REPS VECTORS.f32");
    };
    let reps: usize = reps.parse().expect("REPS is a number");
    let texts: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(texts_path).expect("TEXTS.json is readable"))
            .expect("TEXTS.json is a JSON array of strings");
    // What the CLI does first (threads, allocator), so the numbers are the CLI's.
    driftgate::app::process::tune_process();

    // Cold: the first call loads the model (once per process) and embeds, as a `driftgate check`
    // that embeds one batch of changed texts would.
    let model = MiniLm::new();
    let start = Instant::now();
    let first = model.embed_blocking(&texts).expect("embed");
    let cold = start.elapsed().as_secs_f64();
    let load = model.load_time().expect("loaded").as_secs_f64();

    let (start, cpu_start) = (Instant::now(), cpu_seconds());
    for _ in 0..reps {
        model.embed_blocking(&texts).expect("embed");
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_start;

    let bytes: Vec<u8> = first.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(vectors_path, bytes).expect("VECTORS.f32 is writable");
    println!(
        "{}",
        serde_json::json!({
            "engine": "driftgate candle",
            "model_id": driftgate::embed::Embedder::id(&model),
            "texts": texts.len(),
            "reps": reps,
            "load_s": load,
            // Model load + first pass over all texts.
            "texts_per_s_with_load": texts.len() as f64 / cold,
            "texts_per_s": (texts.len() * reps) as f64 / secs,
            // Robust to other load on a shared machine, unlike wall-clock throughput.
            "texts_per_cpu_s": (texts.len() * reps) as f64 / cpu,
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
