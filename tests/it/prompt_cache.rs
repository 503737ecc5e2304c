//! Replay at the cost of the question: the calendar check against loopback fakes of OpenAI and
//! Anthropic that keep a prompt cache as the APIs do (`support::prompt_cache`). Under the default
//! `--order rotate` the cases of one rotation share their tool block, the requests of a rotation
//! go out together, the providers' usage fields count the cached tokens per side, and the cost
//! prices them at `--price-cached-input` (Anthropic's writes at its premium). `--order shuffle`
//! shares nothing between cases.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::support::calendar;
use crate::support::cli;
use crate::support::fake::{Fake, Request, Step};
use crate::support::openai::{Completion, chat_server};
use crate::support::prompt_cache::PromptCache;
use crate::support::{anthropic, reports};

const KEY: &str = "sk-fake-prompt-cache-0123456789";

/// The tool every answer calls: the cache test is about what was sent, not what was picked.
fn answer_tool(req: &Request) -> String {
    let tools = req.body["tools"].as_array().unwrap();
    let t = &tools[0];
    t.get("function").unwrap_or(t)["name"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `check` of the calendar example against `fake` with `extra` flags; the JSON report (with the
/// terminal report under "terminal") and the requests the fake received, in arrival order.
fn check(router: &str, fake: &Fake, extra: &[&str]) -> (Value, Vec<Request>) {
    let dir = tempfile::tempdir().unwrap();
    let url = if router == "anthropic" {
        fake.url("")
    } else {
        fake.url("/v1")
    };
    let cache = dir.path().join("cache");
    let json_out = dir.path().join("report.json");
    let mut args = calendar::check(&[
        "--router",
        router,
        "--base-url",
        &url,
        "--model",
        "m",
        "--no-embed",
        "--concurrency",
        "1",
        "--json-out",
        json_out.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    args.extend_from_slice(extra);
    let run = cli::driftgate(args)
        .envs([("OPENAI_API_KEY", KEY), ("ANTHROPIC_API_KEY", KEY)])
        .run();
    // The fake always calls the first tool offered, so the measurement itself is incomplete
    // (exit 3); the report still says what was sent and billed.
    assert!(run.code != 2, "{}", run.dump());
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_out).unwrap()).unwrap();
    reports::assert_matches_schema(&report, "a prompt-cached check");
    report["terminal"] = json!(run.stdout);
    (report, fake.requests())
}

fn openai_fake() -> Fake {
    let cache = Arc::new(PromptCache::default());
    chat_server(move |req| {
        let (prompt, cached) = cache.openai(&req.body);
        Completion::tool_call(&answer_tool(req), "{}")
            .usage(prompt, 20)
            .cached(cached)
            .into()
    })
}

fn anthropic_fake() -> Fake {
    let cache = Arc::new(PromptCache::default());
    Fake::handler(move |req| {
        if req.path() != "/v1/messages" {
            return Step::reply(404, "{}");
        }
        anthropic::tool_use_billed(&answer_tool(req), json!({}), cache.anthropic(&req.body))
    })
}

fn stat(report: &Value, side: &str, key: &str) -> u64 {
    report["routing"][format!("{side}_stats")][key]
        .as_u64()
        .unwrap_or(0)
}

fn both(report: &Value, key: &str) -> u64 {
    stat(report, "base", key) + stat(report, "head", key)
}

/// The tool names of a request, in the order offered.
fn names(req: &Request) -> Vec<String> {
    req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t.get("function").unwrap_or(t)["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn openai_reads_the_shared_tool_block_from_its_cache_and_the_cost_prices_it() {
    let prices = [
        "--price-input",
        "2.5",
        "--price-output",
        "10",
        "--price-cached-input",
        "1.25",
    ];
    let fake = openai_fake();
    let (rotate, requests) = check("openai", &fake, &prices);
    let cases = 36;
    assert_eq!(requests.len(), 2 * cases, "one request per case and side");
    // The requests of one rotation go out one after another: the tool order changes at most
    // once per rotation and side.
    let changes = requests
        .windows(2)
        .filter(|w| names(&w[0]) != names(&w[1]))
        .count();
    assert!(changes <= 2 * 4, "{changes} changes of tool order");
    let orders: std::collections::BTreeSet<Vec<String>> = requests.iter().map(names).collect();
    assert!((2..=4).contains(&orders.len()), "{} orders", orders.len());
    assert_eq!(
        rotate["router"]["order"],
        json!({"design": "rotate", "rotations": 4})
    );

    let read = both(&rotate, "cached_input_tokens");
    let input = both(&rotate, "input_tokens");
    // Every request after the first of its rotation reads the tool block from the cache.
    assert!(read * 2 > input, "{read} of {input} input tokens cached");
    let out = both(&rotate, "output_tokens");
    let want = ((input - read) as f64 * 2.5 + read as f64 * 1.25 + out as f64 * 10.0) / 1e6;
    let cost = rotate["router"]["estimated_cost_usd"].as_f64().unwrap();
    assert!((cost - want).abs() < 1e-12, "{cost} vs {want}");
    assert_eq!(rotate["router"]["price_cached_input_per_mtok"], json!(1.25));
    let terminal = rotate["terminal"].as_str().unwrap();
    assert!(
        terminal.contains(&format!("Tokens: {input} in ({read} read from the prompt cache), {out} out ≈ ${cost:.4} at $2.5/$10 per M tokens ($1.25 cached)")),
        "{terminal}"
    );

    // Shuffled, no two cases share a prefix: only a case's head question reuses its base one's.
    let fake = openai_fake();
    let (shuffle, requests) = check(
        "openai",
        &fake,
        &[&prices[..], &["--order", "shuffle"]].concat(),
    );
    let orders: std::collections::BTreeSet<Vec<String>> = requests.iter().map(names).collect();
    assert!(orders.len() >= cases - 1, "{} orders", orders.len());
    assert_eq!(stat(&shuffle, "base", "cached_input_tokens"), 0);
    assert!(
        both(&shuffle, "cached_input_tokens") * 3 < read,
        "shuffle cached {} vs rotate {read}",
        both(&shuffle, "cached_input_tokens")
    );
    // The routing outcome does not depend on how the prompts were billed.
    assert_eq!(
        rotate["routing"]["base_accuracy"],
        shuffle["routing"]["base_accuracy"]
    );
}

#[test]
fn anthropic_gets_a_breakpoint_after_the_shared_tools_and_its_writes_cost_more() {
    // The calendar's ten tools alone are just under the API's 1,024-token minimum: a distractor
    // pack makes the shared block long enough to cache (and shows packs belong to it).
    let pack = ["--distractors", "tests/fixtures/args/fs.base.json"];
    let fake = anthropic_fake();
    let (report, requests) = check(
        "anthropic",
        &fake,
        &[
            &pack[..],
            &[
                "--price-input",
                "3",
                "--price-output",
                "15",
                "--price-cached-input",
                "0.3",
            ],
        ]
        .concat(),
    );
    for r in &requests {
        let tools = r.body["tools"].as_array().unwrap();
        let marked: Vec<usize> = (0..tools.len())
            .filter(|&i| tools[i].get("cache_control").is_some())
            .collect();
        // The calendar suite has no per-case distractors: the whole list (pack included) is shared.
        assert_eq!(marked, vec![tools.len() - 1], "{}", r.body);
        assert_eq!(
            tools[tools.len() - 1]["cache_control"],
            json!({"type": "ephemeral"})
        );
    }
    let written = both(&report, "cache_write_tokens");
    let read = both(&report, "cached_input_tokens");
    assert!(
        written > 0 && read > written * 4,
        "written {written}, read {read}"
    );
    let terminal = report["terminal"].as_str().unwrap();
    assert!(
        terminal.contains(&format!(
            "({read} read from the prompt cache, {written} written to it)"
        )),
        "{terminal}"
    );
    let (input, out) = (
        both(&report, "input_tokens"),
        both(&report, "output_tokens"),
    );
    let want = ((input - read - written) as f64 * 3.0
        + read as f64 * 0.3
        + written as f64 * 3.0 * 1.25
        + out as f64 * 15.0)
        / 1e6;
    let cost = report["router"]["estimated_cost_usd"].as_f64().unwrap();
    assert!((cost - want).abs() < 1e-12, "{cost} vs {want}");

    // Shuffled: no breakpoint, nothing written that no later case could read.
    let fake = anthropic_fake();
    let (shuffle, requests) = check(
        "anthropic",
        &fake,
        &[&pack[..], &["--order", "shuffle"]].concat(),
    );
    assert!(
        requests
            .iter()
            .all(|r| !r.body.to_string().contains("cache_control"))
    );
    assert_eq!(both(&shuffle, "cache_write_tokens"), 0);
}

#[test]
fn rotations_are_settings_with_clear_errors() {
    let bad = [
        (
            vec!["--order", "shuffle", "--rotations", "3"],
            "--rotations counts the orders of --order rotate",
        ),
        (
            vec!["--rotations", "0"],
            "--rotations 0: expected at least 1 order",
        ),
        (
            vec!["--order", "sideways"],
            "invalid value 'sideways' for '--order",
        ),
    ];
    for (flags, want) in bad {
        let run = cli::driftgate(calendar::check(&flags)).run();
        assert_eq!(run.code, 2, "{}", run.dump());
        assert!(run.stderr.contains(want), "{flags:?}: {}", run.stderr);
    }
    // The semantic router orders its tools too, and does not care: one rotation or eight, the
    // calendar's verdict is the same.
    let verdicts: Vec<Value> = [
        vec!["--rotations", "1"],
        vec!["--rotations", "8"],
        vec!["--order", "shuffle"],
    ]
    .iter()
    .map(|f| {
        let mut flags = f.clone();
        flags.extend(["--format", "json", "--no-cache"]);
        let r = cli::driftgate(calendar::check(&flags)).run().json();
        json!([
            r["verdict"]["status"],
            r["routing"]["base_accuracy"],
            r["routing"]["head_accuracy"]
        ])
    })
    .collect();
    assert!(verdicts.windows(2).all(|w| w[0] == w[1]), "{verdicts:?}");
}

/// `--plan` says, before anything is sent, how much of the input a prompt cache can answer: the
/// shared blocks of every request after the first of its rotation, priced at the cached rate;
/// nothing under `--order shuffle`.
#[test]
fn the_plan_counts_the_blocks_a_prompt_cache_can_answer() {
    let plan = |order: &str| {
        let run = cli::driftgate(calendar::check(&[
            "--router",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "gpt-4o-mini",
            "--no-embed",
            "--no-cache",
            "--distractors",
            "tests/fixtures/args/fs.base.json",
            "--order",
            order,
            "--price-input",
            "0.15",
            "--price-output",
            "0.60",
            "--price-cached-input",
            "0.075",
            "--plan",
            "--format",
            "json",
        ]))
        .envs([("OPENAI_API_KEY", KEY)])
        .run();
        assert_eq!(run.code, 0, "{}", run.dump());
        run.json()
    };
    let p = plan("rotate");
    let side = |p: &Value, s: &str, k: &str| p[s][k].as_u64().unwrap();
    let (read, written) = (
        side(&p, "base", "prefix_cached_tokens") + side(&p, "head", "prefix_cached_tokens"),
        side(&p, "base", "prefix_written_tokens") + side(&p, "head", "prefix_written_tokens"),
    );
    let input = side(&p, "base", "input_tokens") + side(&p, "head", "input_tokens");
    // Four rotations at base, four more at head (its block differs by one description).
    assert!(
        written > 0 && read > 5 * written,
        "read {read}, written {written}: {p}"
    );
    assert!(read * 2 > input, "{p}");
    let cost = p["input_cost_usd"].as_f64().unwrap();
    // OpenAI writes its cache at no premium.
    let want = ((input - read) as f64 * 0.15 + read as f64 * 0.075) / 1e6;
    assert!((cost - want).abs() < 1e-12, "{cost} vs {want}");

    let s = plan("shuffle");
    assert_eq!(side(&s, "base", "prefix_cached_tokens"), 0, "{s}");
    assert_eq!(side(&s, "head", "prefix_cached_tokens"), 0, "{s}");
    assert!(s["input_cost_usd"].as_f64().unwrap() > cost);
}
