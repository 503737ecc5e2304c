//! Helper for `bench/router.sh`: the offline semantic router under each of its options, on every
//! suite we ship, with the real bundled embedder; one Markdown table row per variant.
//!
//! ```text
//! router_bench [--llm-url URL --llm-model M [--llm-suites calendar,git,…]]
//! ```
//!
//! Per suite: accuracy (correct / cases), and where the suite has `expect: none` cases the no-call
//! precision (right no-calls / no-calls answered) and recall (right no-calls / none cases). With
//! `--llm-url` (an OpenAI-compatible server, e.g. `.ci/llama.sh start`), each case is also asked of
//! that LLM once (answers kept in `target/router-bench/` so a rerun sends nothing) and every
//! variant's agreement with it is printed: how often the proxy picks what the LLM picks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use driftgate::cache::Cache;
use driftgate::embed::{CachedEmbedder, Embedder, MiniLm};
use driftgate::llm::Answer;
use driftgate::replay::judge::{Outcome, classify};
use driftgate::route::provider::ProviderRouter;
use driftgate::route::semantic::{NoneRule, Options, SemanticRouter};
use driftgate::route::{RouteRequest, Router};
use driftgate::suite::{Case, Expect, Suite};
use driftgate::tools::ToolSet;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// (label, suite, tools the suite was written against).
const SUITES: [(&str, &str, &str); 5] = [
    (
        "calendar",
        "examples/calendar/suite.yaml",
        "examples/calendar/tools.base.json",
    ),
    (
        "filesystem",
        "tests/fixtures/server-filesystem.suite.jsonl",
        "tests/fixtures/corpus/server-filesystem/2025.7.1.json",
    ),
    (
        "playwright",
        "bench/suites/playwright-mcp.suite.jsonl",
        "tests/fixtures/corpus/playwright-mcp/0.0.83.json",
    ),
    (
        "github",
        "bench/suites/server-github.suite.jsonl",
        "tests/fixtures/corpus/server-github/2025.4.8.json",
    ),
    (
        "git",
        "bench/suites/mcp-server-git.suite.jsonl",
        "tests/fixtures/corpus/mcp-server-git/2026.10.19.json",
    ),
];

fn variants() -> Vec<(&'static str, Options)> {
    let bare = Options {
        sentences: false,
        name_words: false,
        lexical: 0.0,
        none: NoneRule::Never,
        ..Options::hybrid2()
    };
    let h2 = Options::hybrid2();
    vec![
        ("v0.1: whole text, cosine, none < 0.25", Options::first()),
        ("argmax: whole text, never none", bare),
        (
            "name words + parameter names",
            Options {
                name_words: true,
                ..bare
            },
        ),
        (
            "+ one view per description sentence",
            Options {
                name_words: true,
                sentences: true,
                ..bare
            },
        ),
        (
            "+ 0.15 × BM25",
            Options {
                none: NoneRule::Never,
                ..h2
            },
        ),
        (
            "hybrid2, none by threshold 0.25",
            Options {
                none: NoneRule::Threshold(0.25),
                ..h2
            },
        ),
        ("`hybrid2`: + small-talk none (+0.05)", h2),
        (
            "`hybrid3`: + prohibitions repel (0.5), punctuation-free views, whole text 0.3 (sentences sorted) + best sentence 0.7",
            Options::hybrid3(),
        ),
        (
            "**shipped (`hybrid4`): + usage examples not read**",
            Options::default(),
        ),
    ]
}

struct Set {
    label: &'static str,
    suite: Suite,
    tools: ToolSet,
}

fn load(label: &'static str, suite: &str, tools: &str) -> Set {
    let root = Path::new(ROOT);
    let suite = driftgate::suite::load(&root.join(suite)).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(root.join(tools)).expect("tools file");
    let (tools, _) = driftgate::source::parse_text(&text, tools).unwrap_or_else(|e| panic!("{e}"));
    Set {
        label,
        suite,
        tools,
    }
}

fn request(case: &Case, tools: &ToolSet) -> RouteRequest {
    let mut offered = tools.tools.clone();
    offered.extend(case.distractors.iter().cloned());
    RouteRequest::single(&case.history, &case.prompt, offered)
}

/// The choice recorded for an unreadable answer: no tool has this name.
const MALFORMED: &str = "(malformed)";

/// What the router chose per case: `Some(name)` or `None` for no call; `Err` when a request
/// failed (no answer is not a wrong answer: the suite is then not measured).
async fn answers(router: &dyn Router, set: &Set) -> Result<Vec<Option<String>>, String> {
    let reqs: Vec<RouteRequest> = set
        .suite
        .cases
        .iter()
        .map(|c| request(c, &set.tools))
        .collect();
    let refs: Vec<&RouteRequest> = reqs.iter().collect();
    router.prepare(&refs).await;
    let mut out = Vec::new();
    for r in &reqs {
        // An LLM's unreadable answer (an invented tool the server cannot parse, say) is an answer
        // of its own, wrong for every case; the semantic router never gives one.
        out.push(match router.route(r).await {
            Ok(a) => match a.answer {
                Answer::Call { name, .. } => Some(name),
                Answer::NoCall { .. } => None,
                Answer::Malformed { .. } => Some(MALFORMED.into()),
            },
            Err(e) => return Err(format!("{}: {e:?}", router.model())),
        });
    }
    Ok(out)
}

/// "ok/n" plus, when the suite has none cases, " (none P p/q, R r/s)".
fn score(set: &Set, chosen: &[Option<String>]) -> String {
    let offered: Vec<&str> = set.tools.names();
    let (mut ok, mut none_cases, mut none_answered, mut none_right) = (0, 0, 0, 0);
    for (case, c) in set.suite.cases.iter().zip(chosen) {
        let answer = match c {
            Some(name) if name == MALFORMED => Answer::Malformed {
                detail: String::new(),
            },
            Some(name) => Answer::bare_call(name),
            None => Answer::NoCall {
                text: String::new(),
            },
        };
        let right = matches!(classify(case, &offered, &answer), Outcome::Correct { .. });
        ok += usize::from(right);
        let is_none = matches!(case.expect, Expect::None);
        none_cases += usize::from(is_none);
        none_answered += usize::from(c.is_none());
        none_right += usize::from(is_none && c.is_none());
    }
    let n = set.suite.cases.len();
    if none_cases == 0 {
        format!("{ok}/{n}")
    } else {
        format!("{ok}/{n} (none P {none_right}/{none_answered}, R {none_right}/{none_cases})")
    }
}

fn agreement(a: &[Option<String>], b: &[Option<String>]) -> String {
    let same = a.iter().zip(b).filter(|(x, y)| x == y).count();
    format!("{same}/{}", a.len())
}

/// The LLM's choices for `set`, from `target/router-bench/<model>/<suite>.json` when present;
/// `None` (said, not cached) when a request failed, e.g. a prompt past the server's context.
async fn llm_answers(
    router: &ProviderRouter,
    model: &str,
    set: &Set,
) -> Option<Vec<Option<String>>> {
    let dir: PathBuf = Path::new(ROOT)
        .join("target/router-bench")
        .join(model.replace(['/', ':'], "_"));
    let file = dir.join(format!("{}.{}.json", set.label, &set.suite.sha256[7..19]));
    if let Ok(text) = std::fs::read_to_string(&file) {
        return Some(serde_json::from_str(&text).expect("cached answers"));
    }
    eprintln!(
        "router_bench: asking {model} the {} cases of {}",
        set.suite.cases.len(),
        set.label
    );
    let got = match answers(router, set).await {
        Ok(got) => got,
        Err(e) => {
            eprintln!("router_bench: {} not measured with the LLM: {e}", set.label);
            return None;
        }
    };
    std::fs::create_dir_all(&dir).expect("answer dir");
    std::fs::write(&file, serde_json::to_string(&got).unwrap()).expect("answer file");
    Some(got)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let sets: Vec<Set> = SUITES.iter().map(|(l, s, t)| load(l, s, t)).collect();
    let embedder: Arc<dyn Embedder> = Arc::new(CachedEmbedder::new(
        Box::new(MiniLm::new()),
        &Cache::new(None),
    ));
    let llm = match flag("--llm-url") {
        Some(url) => {
            let model = flag("--llm-model").unwrap_or_else(|| "local".into());
            let router = ProviderRouter::openai(Some(&url), &model, None, Duration::from_secs(600))
                .expect("LLM router");
            let only = flag("--llm-suites");
            let mut all = BTreeMap::new();
            for s in &sets {
                if only
                    .as_ref()
                    .is_none_or(|o| o.split(',').any(|l| l == s.label))
                {
                    if let Some(got) = llm_answers(&router, &model, s).await {
                        all.insert(s.label, got);
                    }
                }
            }
            Some((model, all))
        }
        None => None,
    };

    let mut head = String::from("| variant |");
    let mut rule = String::from("| --- |");
    for s in &sets {
        head.push_str(&format!(" {} |", s.label));
        rule.push_str(" ---: |");
    }
    println!("{head}\n{rule}");
    let mut agree_rows = Vec::new();
    for (label, options) in variants() {
        let router = SemanticRouter::new(embedder.clone(), options);
        let mut row = format!("| {label} |");
        let mut agree = format!("| {label} |");
        for s in &sets {
            let chosen = answers(&router, s)
                .await
                .expect("the semantic router answers");
            row.push_str(&format!(" {} |", score(s, &chosen)));
            if let Some((_, llm)) = &llm {
                let cell = llm
                    .get(s.label)
                    .map_or("—".into(), |a| agreement(&chosen, a));
                agree.push_str(&format!(" {cell} |"));
            }
        }
        println!("{row}");
        agree_rows.push(agree);
    }
    if let Some((model, all)) = &llm {
        println!("\nThe LLM itself ({model}):\n\n{head}\n{rule}");
        let mut row = String::from("| LLM accuracy |");
        for s in &sets {
            let cell = all.get(s.label).map_or("—".into(), |a| score(s, a));
            row.push_str(&format!(" {cell} |"));
        }
        println!("{row}");
        println!("\nAgreement with {model} (same tool or both no call):\n\n{head}\n{rule}");
        for r in agree_rows {
            println!("{r}");
        }
    }
}
