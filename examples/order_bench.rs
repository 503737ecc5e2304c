//! Helper for `bench/order.sh`: what the tool order costs and whether it still controls position.
//!
//! ```text
//! order_bench positions SUITE TOOLS [ROTATIONS]
//!     where each case's expected tool sits in its offered list (quarters of the list), under
//!     --order shuffle and --order rotate: counts per quarter and Pearson's chi-square against
//!     an even spread; no router, exact
//! order_bench replay URL SUITE BASE HEAD [CASES [CONCURRENCY]]
//!     the first CASES cases (default all) through the OpenAI-compatible server at URL, base then
//!     head, once per design (shuffle first, then rotate), each with a cold cache and CONCURRENCY
//!     requests in flight (default 1; under rotate, one lane per rotation): seconds per request, accuracy by the expected tool's quarter, flips, and the
//!     ratio of the two designs' seconds per request; the same verdict numbers either way is not
//!     expected (the orders are different questions), the same position balance is
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use driftgate::cache::Cache;
use driftgate::llm::{Sampling, ToolChoice};
use driftgate::replay::{Order, ReplayConfig, Replayer, offered_tools};
use driftgate::route::SYSTEM_PROMPT;
use driftgate::route::provider::ProviderRouter;
use driftgate::suite::{Case, Suite};
use driftgate::tools::ToolSet;

const SEED: u64 = 0;

fn tools(path: &str) -> Result<ToolSet, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    Ok(driftgate::source::parse_text(&text, path)
        .map_err(|e| e.to_string())?
        .0)
}

/// The quarter of `case`'s offered list its first expected tool sits in, if it expects one, and
/// the list's length.
fn quarter_of(case: &Case, tools: &ToolSet, order: Order, seed: u64) -> Option<(usize, usize)> {
    let want = case.expect.names().first()?.clone();
    let list = offered_tools(case, tools, &[], seed, order);
    let at = list.iter().position(|t| t.name == want)?;
    Some((at * 4 / list.len(), list.len()))
}

fn quarter(case: &Case, tools: &ToolSet, order: Order, seed: u64) -> Option<usize> {
    quarter_of(case, tools, order, seed).map(|(q, _)| q)
}

fn designs(rotations: u32) -> [(&'static str, Order); 2] {
    [
        ("shuffle", Order::Shuffle),
        ("rotate", Order::Rotate { rotations }),
    ]
}

fn positions(suite: &str, tools_path: &str, rotations: u32) -> Result<(), String> {
    let s = driftgate::suite::load(Path::new(suite)).map_err(|e| e.to_string())?;
    let t = tools(tools_path)?;
    for (name, order) in designs(rotations) {
        // Quarters of the expected tool at seed 0, then Pearson's chi-square against places
        // drawn uniformly, over SEEDS seeds: its mean (3 when they are, df = 3) and how often it
        // passes the 5% critical value 7.815.
        let mut first = [0u32; 4];
        let (mut sum, mut over) = (0.0, 0u32);
        for seed in 0..SEEDS {
            let mut q = [0u32; 4];
            // Expected counts: a quarter of a list of n holds ⌈…⌉ or ⌊…⌋ places, not n/4.
            let mut e = [0f64; 4];
            for c in &s.cases {
                if let Some((i, n)) = quarter_of(c, &t, order, seed) {
                    q[i] += 1;
                    for slot in (0..n).map(|a| a * 4 / n) {
                        e[slot] += 1.0 / n as f64;
                    }
                }
            }
            if seed == 0 {
                first = q;
            }
            let chi2: f64 = q
                .iter()
                .zip(e)
                .map(|(&x, e)| (f64::from(x) - e).powi(2) / e)
                .sum();
            sum += chi2;
            over += u32::from(chi2 > 7.815);
        }
        println!(
            "| {suite} | {} | {name} | {} · {} · {} · {} | {:.2} | {:.1}% |",
            s.cases.len(),
            first[0],
            first[1],
            first[2],
            first[3],
            sum / f64::from(SEEDS as u32),
            f64::from(over) * 100.0 / SEEDS as f64
        );
    }
    Ok(())
}

const SEEDS: u64 = 500;

async fn replay(
    url: &str,
    suite: &str,
    base: &str,
    head: &str,
    cases: usize,
    concurrency: usize,
) -> Result<(), String> {
    let mut s: Suite = driftgate::suite::load(Path::new(suite)).map_err(|e| e.to_string())?;
    s.cases.truncate(cases);
    let (b, h) = (tools(base)?, tools(head)?);
    let router = ProviderRouter::openai(Some(url), "qwen", None, Duration::from_secs(600))
        .map_err(|e| e.to_string())?;
    let mut per_request = Vec::new();
    for (name, order) in designs(Order::DEFAULT_ROTATIONS) {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let cache = Cache::new(Some(dir.path().to_path_buf()));
        let cfg = ReplayConfig {
            system_prompt: SYSTEM_PROMPT.to_string(),
            tool_choice: ToolChoice::Auto,
            sampling: Sampling {
                temperature: 0.0,
                seed: Some(SEED),
                max_tokens: 256,
            },
            repeats: 1,
            first_repeat: 0,
            concurrency,
            seed: SEED,
            order,
            retry: Default::default(),
            batch: None,
        };
        let replayer = Replayer::new(&router, &cache, &cfg);
        let t = Instant::now();
        let base_run = replayer.run_side("base", &s, &b, &[]).await;
        let head_run = replayer.run_side("head", &s, &h, &[]).await;
        let wall = t.elapsed().as_secs_f64();
        let sent = base_run.stats.requests_sent + head_run.stats.requests_sent;
        let routing = driftgate::replay::compare(&s, &base_run, &head_run, SEED);
        // Accuracy at base by the quarter of the list the expected tool sat in.
        let mut by_q = [(0u32, 0u32); 4];
        for (c, run) in s.cases.iter().zip(&base_run.cases) {
            if let Some(i) = quarter(c, &b, order, SEED) {
                by_q[i].1 += 1;
                by_q[i].0 += u32::from(run.correct() > 0);
            }
        }
        let q: Vec<String> = by_q.iter().map(|(r, n)| format!("{r}/{n}")).collect();
        let s_per = wall / sent.max(1) as f64;
        per_request.push(s_per);
        println!(
            "| {name} | {sent} | {wall:.0} | {s_per:.2} | {:.1}% | {:.1}% | {} | {} | {} |",
            routing.paired.summary.base_accuracy * 100.0,
            routing.paired.summary.head_accuracy * 100.0,
            routing.paired.flips.len(),
            q.join(" · "),
            base_run.stats.errors + head_run.stats.errors,
        );
    }
    println!();
    println!(
        "seconds per request, shuffle ÷ rotate: **{:.2}×**",
        per_request[0] / per_request[1]
    );
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = match a.as_slice() {
        ["positions", suite, tools, rest @ ..] => positions(
            suite,
            tools,
            rest.first()
                .and_then(|k| k.parse().ok())
                .unwrap_or(Order::DEFAULT_ROTATIONS),
        ),
        ["replay", url, suite, base, head, rest @ ..] => {
            let cases = rest.first().and_then(|n| n.parse().ok()).unwrap_or(usize::MAX);
            let concurrency = rest.get(1).and_then(|n| n.parse().ok()).unwrap_or(1);
            tokio::runtime::Runtime::new()
                .map_err(|e| e.to_string())
                .and_then(|rt| rt.block_on(replay(url, suite, base, head, cases, concurrency)))
        }
        _ => Err("usage: order_bench positions SUITE TOOLS [ROTATIONS] | replay URL SUITE BASE HEAD [CASES [CONCURRENCY]]".into()),
    };
    if let Err(e) = r {
        eprintln!("order_bench: {e}");
        std::process::exit(2);
    }
}
