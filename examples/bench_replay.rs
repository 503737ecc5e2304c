//! Helper for `bench/replay.sh`:
//!
//! ```text
//! bench_replay suite SUITE N            write an N-case JSONL suite to stdout: SUITE's cases cycled,
//!                                       each later round reworded by a fixed template (deterministic)
//! bench_replay summary LABEL CONC WALL_MS REPORT.json
//!                                       one table row per side from the report's run counters
//! ```
//!
//! Overhead ratio = the side's wall time ÷ (sum of its request latencies ÷ concurrency): 1.00 means
//! the replay took exactly as long as the requests themselves, spread over CONC slots.

use std::path::Path;

use driftgate::suite::Expect;
use serde_json::{Value, json};

/// Round k ≥ 1 rewords every prompt with template k (cycling): the question stays the same, the
/// words around it change, so every generated case is a distinct request.
const TEMPLATES: [(&str, &str); 6] = [
    ("Hi! ", ""),
    ("", " Thanks."),
    ("Quick request: ", ""),
    ("", " This is for a patient at the front desk."),
    ("Could you handle this for me? ", ""),
    ("Hello. ", " Thank you!"),
];

fn suite(path: &str, n: usize) -> Result<(), String> {
    let s = driftgate::suite::load(Path::new(path)).map_err(|e| e.to_string())?;
    if s.cases.iter().any(|c| !c.distractors.is_empty()) {
        return Err("suites with distractors are not supported here".into());
    }
    for i in 0..n {
        let c = &s.cases[i % s.cases.len()];
        let round = i / s.cases.len();
        let (id, prompt) = if round == 0 {
            (c.id.clone(), c.prompt.clone())
        } else {
            let (pre, post) = TEMPLATES[(round - 1) % TEMPLATES.len()];
            let p = c.prompt.trim_end();
            let stop = if post.is_empty() || p.ends_with(['.', '?', '!']) {
                ""
            } else {
                "."
            };
            (
                format!("{}-r{round}", c.id),
                format!("{pre}{p}{stop}{post}"),
            )
        };
        let expect = match &c.expect {
            Expect::None => json!("none"),
            Expect::Tools(names) => json!(names),
        };
        let mut case = json!({"id": id, "prompt": prompt, "expect": expect});
        if !c.must_not_call.is_empty() {
            case["must_not_call"] = json!(c.must_not_call);
        }
        if !c.history.is_empty() {
            case["history"] = json!(c.history);
        }
        if !c.tags.is_empty() {
            case["tags"] = json!(c.tags);
        }
        println!("{case}");
    }
    Ok(())
}

fn summary(label: &str, conc: f64, process_wall_ms: u64, report: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(report).map_err(|e| format!("{report}: {e}"))?;
    let r: Value = serde_json::from_str(&text).map_err(|e| format!("{report}: {e}"))?;
    let routing = &r["routing"];
    let errors = routing["errors"].as_array().map_or(0, Vec::len);
    let mut total_wall = 0.0;
    let mut total_lat = 0.0;
    let mut total_prep = 0.0;
    let mut tokens = (0, 0);
    for side in ["base", "head"] {
        let s = &routing[format!("{side}_stats")];
        let n = |k: &str| s[k].as_u64().unwrap_or(0);
        let (wall, lat) = (n("wall_ms") as f64, n("request_latency_ms_sum") as f64);
        let prep = n("prepare_ms") as f64;
        total_wall += wall;
        total_lat += lat;
        total_prep += prep;
        tokens.0 += n("input_tokens");
        tokens.1 += n("output_tokens");
        println!(
            "{label:<28} {side:<5} {:>5} {:>6} {:>6} {:>7} {:>10} {:>9} {:>10.1} {:>8} {:>8}",
            n("requests_sent"),
            n("cache_hits"),
            n("reused"),
            n("retries"),
            n("request_latency_ms_sum"),
            n("wall_ms"),
            if n("requests_sent") > 0 {
                lat / n("requests_sent") as f64
            } else {
                0.0
            },
            n("prepare_ms"),
            ratio(wall, lat, prep, conc),
        );
    }
    println!(
        "{label:<28} both  cases {} · process wall {process_wall_ms} ms · replay overhead {} · tokens {} in / {} out · verdict {} · errors {errors}",
        routing["summary"]["n_cases"],
        ratio(total_wall, total_lat, total_prep, conc),
        tokens.0,
        tokens.1,
        r["verdict"]["status"].as_str().unwrap_or("?"),
    );
    Ok(())
}

/// wall ÷ (latency sum spread over the concurrency slots + the router's prepare time, which runs
/// before a chunk's requests and so is not spread).
fn ratio(wall: f64, latency_sum: f64, prepare: f64, conc: f64) -> String {
    if latency_sum + prepare <= 0.0 {
        "n/a".into()
    } else {
        format!("{:.3}", wall / (latency_sum / conc + prepare))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match a.as_slice() {
        ["suite", path, n] => n
            .parse()
            .map_err(|_| format!("N must be a number, got {n:?}"))
            .and_then(|n| suite(path, n)),
        ["summary", label, conc, wall, report] => match (conc.parse(), wall.parse()) {
            (Ok(c), Ok(w)) => summary(label, c, w, report),
            _ => Err("CONC and WALL_MS must be numbers".into()),
        },
        ["header"] => {
            println!(
                "{:<28} {:<5} {:>5} {:>6} {:>6} {:>7} {:>10} {:>9} {:>10} {:>8} {:>8}",
                "run", "side", "sent", "cached", "reused", "retries", "latsum_ms", "wall_ms", "ms/request", "prep_ms", "overhead"
            );
            Ok(())
        }
        _ => Err(
            "usage: bench_replay suite SUITE N | bench_replay header | bench_replay summary LABEL CONC WALL_MS REPORT"
                .into(),
        ),
    };
    if let Err(e) = result {
        eprintln!("bench_replay: {e}");
        std::process::exit(2);
    }
}
