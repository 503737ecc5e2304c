//! `driftgate lint` on the real corpus: the schema gate's 63 of 91 on server-filesystem, the four
//! known confusable pairs with a clear gap to every other pair, scope notes, every capture of
//! every server linted and rendered without a panic (and the table in docs/ kept current), and
//! the PR view of `check` on a real release that introduced confusable tools.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use driftgate::embed::{Embedder, MiniLm};
use driftgate::lint::{self, Level, Lint, LintDelta, LintOptions, LintSection};
use driftgate::report::render;
use driftgate::source::parse_text;
use driftgate::tools::ToolSet;
use ndarray::Array2;

use crate::support::cli;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// (server, versions in release order, tool count per version) from INDEX.md's server table.
fn release_order() -> Vec<(String, Vec<(String, usize)>)> {
    let index = std::fs::read_to_string(corpus().join("INDEX.md")).unwrap();
    let mut out = Vec::new();
    let mut in_table = false;
    for line in index.lines() {
        if line.starts_with("| server | package |") {
            in_table = true;
            continue;
        }
        if in_table && !line.starts_with('|') {
            break;
        }
        if !in_table || line.starts_with("|---") {
            continue;
        }
        let cols: Vec<&str> = line.split('|').map(str::trim).collect();
        let versions = cols[5]
            .split(", ")
            .map(|v| {
                let (ver, n) = v.split_once(':').unwrap();
                (ver.to_string(), n.parse().unwrap())
            })
            .collect();
        out.push((cols[1].to_string(), versions));
    }
    out
}

fn tools(server: &str, version: &str) -> ToolSet {
    let path = corpus().join(server).join(format!("{version}.json"));
    parse_text(
        &std::fs::read_to_string(&path).unwrap(),
        &path.display().to_string(),
    )
    .unwrap()
    .0
}

/// The bundled model, remembering every text it embedded: across the corpus most descriptions
/// repeat from version to version, so each is embedded once per test binary.
struct Memo {
    inner: MiniLm,
    seen: Mutex<HashMap<String, Vec<f32>>>,
}

#[async_trait::async_trait]
impl Embedder for Memo {
    fn id(&self) -> &str {
        self.inner.id()
    }

    async fn embed(&self, texts: &[String]) -> driftgate::Result<Array2<f32>> {
        let missing: Vec<String> = {
            let seen = self.seen.lock().unwrap();
            let mut m: Vec<String> = texts
                .iter()
                .filter(|t| !seen.contains_key(*t))
                .cloned()
                .collect();
            m.sort();
            m.dedup();
            m
        };
        if !missing.is_empty() {
            let v = self.inner.embed(&missing).await?;
            let mut seen = self.seen.lock().unwrap();
            for (t, row) in missing.iter().zip(v.outer_iter()) {
                seen.insert(t.clone(), row.to_vec());
            }
        }
        let seen = self.seen.lock().unwrap();
        let dim = seen.values().next().map_or(0, Vec::len);
        let mut out = Array2::zeros((texts.len(), dim));
        for (i, t) in texts.iter().enumerate() {
            for (j, x) in seen[t].iter().enumerate() {
                out[[i, j]] = *x;
            }
        }
        Ok(out)
    }
}

fn embedder() -> Arc<Memo> {
    static E: std::sync::OnceLock<Arc<Memo>> = std::sync::OnceLock::new();
    E.get_or_init(|| {
        Arc::new(Memo {
            inner: MiniLm::new(),
            seen: Mutex::new(HashMap::new()),
        })
    })
    .clone()
}

fn lint_of(ts: &ToolSet, embed: bool) -> Lint {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let e = embedder();
    let e: Option<&dyn Embedder> = if embed { Some(e.as_ref()) } else { None };
    rt.block_on(lint::analyse(ts, e, &LintOptions::default()))
        .unwrap()
}

/// server-filesystem releases with all 14 tools (2025.7.29 on).
fn filesystem_14() -> Vec<String> {
    let order = release_order();
    let (_, versions) = order
        .iter()
        .find(|(s, _)| s == "server-filesystem")
        .unwrap();
    let v: Vec<String> = versions
        .iter()
        .filter(|(_, n)| *n == 14)
        .map(|(v, _)| v.clone())
        .collect();
    assert_eq!(v.first().map(String::as_str), Some("2025.7.29"));
    assert_eq!(v.len(), 10);
    v
}

const KNOWN: [(&str, &str); 4] = [
    ("read_file", "read_text_file"),
    ("read_file", "read_media_file"),
    ("read_text_file", "read_media_file"),
    ("list_directory", "list_directory_with_sizes"),
];

fn flagged(l: &Lint) -> BTreeSet<(String, String)> {
    l.pairs
        .flagged()
        .map(|p| (p.a.clone(), p.b.clone()))
        .collect()
}

fn known() -> BTreeSet<(String, String)> {
    KNOWN
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn filesystem_schema_gate_drops_63_of_91_pairs() {
    for v in filesystem_14() {
        let l = lint_of(&tools("server-filesystem", &v), false);
        assert_eq!(l.pairs.total_pairs, 91, "{v}");
        assert_eq!(l.pairs.dropped_by_gate, 63, "{v}");
        assert_eq!(l.pairs.scored.len(), 28, "{v}");
    }
}

/// (lowest flagged score, highest unflagged score) and the threshold between them.
fn gap(l: &Lint) -> (f64, f64, f64) {
    let min_flagged = l
        .pairs
        .flagged()
        .map(|p| p.score)
        .fold(f64::INFINITY, f64::min);
    let max_unflagged = l
        .pairs
        .scored
        .iter()
        .filter(|p| !p.flagged)
        .map(|p| p.score)
        .fold(0.0, f64::max);
    (min_flagged, max_unflagged, l.pairs.weights.threshold)
}

#[test]
fn filesystem_flags_exactly_the_four_known_pairs_with_a_clear_gap() {
    for embed in [true, false] {
        for v in filesystem_14() {
            let l = lint_of(&tools("server-filesystem", &v), embed);
            assert_eq!(flagged(&l), known(), "{v} embed={embed}");
            let (lo, hi, t) = gap(&l);
            // Every unflagged pair, vetoed ones included, is at least 0.07 below every flagged
            // one, and the threshold sits inside the gap.
            assert!(lo - hi >= 0.07, "{v} embed={embed}: gap {lo} - {hi}");
            assert!(
                lo - t >= 0.02 && t - hi >= 0.02,
                "{v} embed={embed}: {hi} < {t} < {lo}"
            );
            let findings: Vec<_> = l
                .findings
                .iter()
                .filter(|f| f.rule == "confusable-pair")
                .collect();
            assert_eq!(findings.len(), 4);
            assert!(findings.iter().all(|f| f.level == Level::Warning));
            // Evidence for each: gate, affinity, no veto.
            for f in findings {
                let p = f.pair.as_ref().unwrap();
                assert!(p.gate.substitutable && p.veto.is_none());
                assert_eq!(p.gate.detail, "both accept the required `path`");
                assert_eq!(p.affinity.embedding.is_some(), embed);
            }
        }
    }
    // The numbers on the latest release, pinned.
    let l = lint_of(&tools("server-filesystem", "2026.8.31"), true);
    let score = |a: &str, b: &str| {
        l.pairs
            .scored
            .iter()
            .find(|p| p.a == a && p.b == b)
            .unwrap()
            .score
    };
    assert_eq!(
        KNOWN.map(|(a, b)| (score(a, b) * 100.0).round() / 100.0),
        [0.63, 0.53, 0.46, 0.81]
    );
    let (lo, hi, t) = gap(&l);
    assert_eq!(
        ((lo * 1000.0).round(), (hi * 1000.0).round(), t),
        (460.0, 378.0, 0.40)
    );
    // The highest unflagged pair is vetoed: creating a directory is not listing one.
    let top_unflagged = l.pairs.scored.iter().find(|p| !p.flagged).unwrap();
    assert_eq!(
        (top_unflagged.a.as_str(), top_unflagged.b.as_str()),
        ("create_directory", "list_directory")
    );
    assert_eq!(
        top_unflagged.veto.as_ref().unwrap().describe(),
        "reads vs writes (create/list)"
    );
    let unvetoed_max = l
        .pairs
        .scored
        .iter()
        .filter(|p| !p.flagged && p.veto.is_none())
        .map(|p| p.score)
        .fold(0.0, f64::max);
    assert!(lo - unvetoed_max >= 0.17, "{unvetoed_max}");
}

#[test]
fn scope_ambiguity_is_a_lower_severity_note() {
    let l = lint_of(&tools("server-filesystem", "2026.8.31"), true);
    let f = l
        .findings
        .iter()
        .find(|f| f.tools == ["read_file", "read_multiple_files"])
        .expect("read_file / read_multiple_files noted");
    assert_eq!((f.rule.as_str(), f.level), ("scope-ambiguity", Level::Note));
    let n = f.scope.as_ref().unwrap();
    assert_eq!(n.extra_terms, ["multiple"]);
    assert!(!n.gate.substitutable);
    // Notes come after warnings.
    let levels: Vec<Level> = l.findings.iter().map(|f| f.level).collect();
    let mut sorted = levels.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(levels, sorted);
}

#[test]
fn check_reports_only_what_a_real_release_introduced() {
    // server-filesystem 2025.7.29 added read_text_file and read_media_file next to read_file.
    let base = tools("server-filesystem", "2025.7.1");
    let head = tools("server-filesystem", "2025.7.29");
    let d = driftgate::diff::diff(&base, &head);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let e = embedder();
    let s = rt
        .block_on(lint::check_delta(&d, &base, &head, Some(e.as_ref()), None))
        .unwrap()
        .unwrap();
    let introduced: Vec<(String, Vec<String>)> = s
        .introduced
        .iter()
        .map(|f| (f.rule.to_string(), f.tools.clone()))
        .collect();
    let v = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
    assert_eq!(
        introduced,
        vec![
            ("confusable-pair".into(), v("read_file", "read_text_file")),
            ("confusable-pair".into(), v("read_file", "read_media_file")),
            (
                "confusable-pair".into(),
                v("read_text_file", "read_media_file")
            ),
        ]
    );
    assert!(
        s.introduced[0]
            .message
            .starts_with("this PR makes `read_file` and `read_text_file` confusable (score 0.63")
    );
    // list_directory / list_directory_with_sizes was already there: not the PR's doing.
    assert_eq!(s.fixed.len(), 0);
    // The other way round, the same three are what the PR fixed.
    let back = driftgate::diff::diff(&head, &base);
    let s = rt
        .block_on(lint::check_delta(
            &back,
            &head,
            &base,
            Some(e.as_ref()),
            None,
        ))
        .unwrap()
        .unwrap();
    assert_eq!(s.introduced.len(), 0);
    assert_eq!(s.fixed.len(), 3);
    assert!(s.fixed[0].message.contains("distinguishable"));
}

#[test]
fn renamed_tools_carry_their_findings_across() {
    let mk = |names: [&str; 2]| {
        let v: Vec<serde_json::Value> = names
            .iter()
            .map(|n| serde_json::json!({"name": n, "description": "Read a file from disk.",
                "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}))
            .collect();
        ToolSet::from_array(&v, "t", "").unwrap()
    };
    let base = mk(["read_file", "read_text_file"]);
    let head = mk(["read_file", "read_txt_file"]);
    let b = lint_of(&base, false);
    let h = lint_of(&head, false);
    assert_eq!(b.pairs.flagged().count(), 1);
    assert_eq!(h.pairs.flagged().count(), 1);
    let renames = BTreeMap::from([("read_text_file".to_string(), "read_txt_file".to_string())]);
    let s = LintDelta::between(&b, &h, &renames);
    assert!(s.is_empty(), "{s:?}");
    // Without the rename, the same pair reads as fixed and introduced.
    let s = LintDelta::between(&b, &h, &BTreeMap::new());
    assert_eq!((s.introduced.len(), s.fixed.len()), (1, 1));
}

/// One row per server: its latest release, and over all releases the hard gates hit. The header
/// must match the committed docs/lint-corpus.md byte for byte.
fn corpus_table(rows: &[(String, String, Lint, usize, BTreeSet<String>)]) -> String {
    let mut s = String::from(
        "# `driftgate lint` on the corpus\n\n\
         Generated by `tests/it/lint.rs` (`every_capture_in_the_corpus_lints_and_renders`) from\n\
         `tests/fixtures/corpus/`; regenerate with `DRIFTGATE_BLESS=1 cargo test --test it lint::every_capture`.\n\
         Bundled MiniLM embeddings, default threshold. Latest captured release of each server;\n\
         the last column covers every captured release. Coherence is the offline estimate\n\
         (disambiguation, naming, tool count, completeness → round1 mean); shadowing shows the\n\
         cost prefilter's candidates, confirmed (purposes overlap) or rejected, with the purpose\n\
         cosine and why.\n\n\
         | server | latest | tools | pairs | dropped by gate | vetoed | flagged confusable pairs | scope notes | coherence | shadowing risks (confirmed) | shadow candidates rejected | hard gates (latest) | hard gates hit (releases) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (server, version, l, versions, gated) in rows {
        let list = |rule: &str| {
            let v: Vec<String> = l
                .findings
                .iter()
                .filter(|f| f.rule == rule)
                .map(|f| match &f.pair {
                    Some(p) => format!("`{}` / `{}` ({:.2})", f.tools[0], f.tools[1], p.score),
                    None => f
                        .tools
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(" / "),
                })
                .collect();
            if v.is_empty() {
                "—".to_string()
            } else {
                v.join("<br>")
            }
        };
        let gates: Vec<String> = l
            .findings
            .iter()
            .filter(|f| f.level == Level::Error)
            .map(|f| format!("`{}`: {}", f.tools[0], f.rule))
            .collect();
        let shadow = |rs: &[driftgate::lint::ShadowingRisk]| {
            let v: Vec<String> = rs
                .iter()
                .map(|r| {
                    let e = r.evidence.as_ref();
                    let cos = e
                        .and_then(|e| e.purpose_cosine)
                        .map_or("-".to_string(), |c| format!("{c:.2}"));
                    let why = match e.map(|e| (&e.veto, &e.shared_resource)) {
                        Some((Some(v), _)) => format!(", {}", v.describe()),
                        Some((None, None)) => ", no shared resource".to_string(),
                        Some((None, Some(r))) => format!(", both on {r}"),
                        None => String::new(),
                    };
                    format!(
                        "`{}` ({}) / `{}` ({}): cosine {cos}{why}",
                        r.tool,
                        r.invocation_cost,
                        r.cheaper_sibling,
                        r.cheaper_sibling_invocation_cost
                    )
                })
                .collect();
            if v.is_empty() {
                "—".to_string()
            } else {
                v.join("<br>")
            }
        };
        let c = &l.coherence;
        s.push_str(&format!(
            "| {server} | {version} | {} | {} | {} | {} | {} | {} | {:.1} ({}): {}/{}/{}/{} | {} | {} | {} | {} |\n",
            l.tools.len(),
            l.pairs.total_pairs,
            l.pairs.dropped_by_gate,
            l.pairs.vetoed,
            list("confusable-pair"),
            list("scope-ambiguity"),
            c.score,
            c.tier,
            c.disambiguation.score,
            c.naming_consistency.score,
            c.tool_count_appropriateness.score,
            c.completeness.score,
            shadow(&l.shadowing_risks),
            shadow(&l.shadowing_rejected),
            if gates.is_empty() {
                "—".into()
            } else {
                gates.join("<br>")
            },
            if gated.is_empty() {
                format!("none of {versions}")
            } else {
                format!(
                    "{} of {versions}: {}",
                    gated.len(),
                    gated.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            },
        ));
    }
    s
}

#[test]
fn every_capture_in_the_corpus_lints_and_renders() {
    let mut rows = Vec::new();
    for (server, versions) in release_order() {
        let mut gated = BTreeSet::new();
        let mut last = None;
        for (v, n) in &versions {
            let ts = tools(&server, v);
            assert_eq!(ts.len(), *n, "{server} {v}");
            let l = lint_of(&ts, true);
            let p = &l.pairs;
            assert_eq!(p.total_pairs, n * n.saturating_sub(1) / 2, "{server} {v}");
            assert_eq!(p.dropped_by_gate + p.scored.len(), p.total_pairs);
            for x in &p.scored {
                assert!((0.0..=1.0).contains(&x.score), "{server} {v} {x:?}");
                assert_eq!(
                    x.flagged,
                    x.veto.is_none() && x.score >= p.weights.threshold,
                    "{server} {v}"
                );
            }
            assert_eq!(l.tools.len(), *n);
            if l.count(Level::Error) > 0 {
                gated.insert(v.clone());
            }
            // Renders through the one report model without a panic; JSON parses back.
            let r = lint_report(&ts, l.clone());
            let text = render::render(
                &r,
                render::Format::Terminal,
                &render::Options { color: false },
            );
            assert!(text.starts_with("driftgate lint: PASS"), "{server} {v}");
            let json: serde_json::Value = serde_json::from_str(&render::render(
                &r,
                render::Format::Json,
                &render::Options { color: false },
            ))
            .unwrap();
            assert_eq!(
                json["lint"]["findings"].as_array().unwrap().len(),
                l.findings.len()
            );
            last = Some((v.clone(), l));
        }
        let (v, l) = last.unwrap();
        rows.push((server, v, l, versions.len(), gated));
    }
    let table = corpus_table(&rows);
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/lint-corpus.md");
    if std::env::var_os("DRIFTGATE_BLESS").is_some() {
        std::fs::write(&doc, &table).unwrap();
    }
    let committed = std::fs::read_to_string(&doc).unwrap_or_default();
    assert!(
        committed == table,
        "docs/lint-corpus.md is stale; regenerate with DRIFTGATE_BLESS=1 cargo test --test it lint::every_capture\n{table}"
    );
}

fn lint_report(ts: &ToolSet, l: Lint) -> driftgate::report::lint::LintReport {
    let side = driftgate::report::Side {
        source: "corpus".into(),
        format: driftgate::source::Format::BareArray,
        tool_count: ts.len(),
        file: None,
        lines: Default::default(),
    };
    let section = LintSection::full(l);
    let scan = driftgate::injection::ScanSection::full(ts, &[]);
    let mut r = driftgate::report::lint::LintReport::new(
        side,
        section,
        scan,
        driftgate::injection::FailOn::High,
        false,
    );
    r.driftgate_version = "test".into();
    r
}

// ---- the command line -----------------------------------------------------------------------

fn run(args: &[&str]) -> (i32, String, String) {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let cache = DIR.get_or_init(|| tempfile::tempdir().unwrap()).path();
    cli::driftgate(args).cache(cache).run().parts()
}

const FS: &str = "tests/fixtures/corpus/server-filesystem/2026.8.31.json";

#[test]
fn cli_reports_and_passes_by_default_and_fails_with_strict() {
    let (code, out, err) = run(&["lint", FS]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("driftgate lint: PASS — 0 hard gate(s), 4 confusable pair(s), 2 note(s)")
    );
    assert!(out.contains(
        "warning  confusable-pair  read_file ↔ read_text_file                  score 0.63"
    ));
    assert!(out.contains("91 pairs: 63 dropped by the schema gate"));
    assert!(out.contains("Definition quality"));
    let (code, out, _) = run(&["lint", FS, "--strict"]);
    assert_eq!(code, 1);
    assert!(out.starts_with("driftgate lint: FAIL"));
    // A threshold above every score leaves only notes: --strict passes.
    let (code, out, _) = run(&["lint", FS, "--strict", "--threshold", "0.99"]);
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = run(&["lint", FS, "--threshold", "2"]);
    assert_eq!(code, 2);
    assert!(err.contains("--threshold 2"), "{err}");
}

#[test]
fn cli_json_carries_findings_evidence_and_signals() {
    let (code, out, err) = run(&["lint", FS, "--format", "json", "--no-embed"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["command"], "lint");
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["verdict"]["status"], "pass");
    // One tool set: no sides, no diff, no check thresholds.
    assert_eq!(v["tools"]["tool_count"], 14);
    assert_eq!(v["tools"]["lines"]["read_file"], 3);
    for field in ["base", "head", "diff", "thresholds"] {
        assert!(v.get(field).is_none(), "{field}");
    }
    assert_eq!(v["scan_fail_on"], "high");
    assert_eq!(v["strict"], false);
    let l = &v["lint"];
    assert_eq!(l["embedding_model"], serde_json::Value::Null);
    assert_eq!(l["weights"]["threshold"], 0.39);
    assert_eq!(l["pairs"]["dropped_by_gate"], 63);
    let f = &l["findings"][0];
    assert_eq!(f["rule"], "confusable-pair");
    assert_eq!(
        f["tools"],
        serde_json::json!(["list_directory", "list_directory_with_sizes"])
    );
    assert_eq!(f["pair"]["gate"]["substitutable"], true);
    assert!(f["pair"]["affinity"]["name"].as_f64().unwrap() > 0.5);
    let q = &l["tools"][5];
    assert_eq!(q["name"], "edit_file");
    assert_eq!(q["invocationCost"], 4);
    assert_eq!(q["schemaDepth"], 2);
    assert_eq!(q["inputHash"].as_str().unwrap().len(), 16);
    assert_eq!(
        l["shadows"][0],
        serde_json::json!({"dearer": "edit_file", "dearer_cost": 4,
            "cheaper": "list_allowed_directories", "cheaper_cost": 0})
    );
}

#[test]
fn cli_hard_gates_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    std::fs::write(
        &f,
        r#"[{"name":"get_weather","description":"Get weather"},{"name":"ping"}]"#,
    )
    .unwrap();
    let f = f.display().to_string();
    let (code, out, _) = run(&["lint", &f, "--no-embed"]);
    assert_eq!(code, 0);
    assert!(out.contains("error  no-description"), "{out}");
    assert!(out.contains("error  tautological-description"), "{out}");
    let (code, _, _) = run(&["lint", &f, "--no-embed", "--strict"]);
    assert_eq!(code, 1);
}

#[test]
fn cli_llm_needs_a_model_router() {
    let (code, _, err) = run(&["lint", FS, "--llm"]);
    assert_eq!(code, 2);
    assert!(err.contains("--llm needs a model"), "{err}");
    let (code, _, _) = run(&["lint", FS, "--llm", "--router", "semantic"]);
    assert_eq!(code, 2);
}

#[test]
fn cli_check_shows_what_the_pr_introduced() {
    let base = "tests/fixtures/corpus/server-filesystem/2025.7.1.json";
    let head = "tests/fixtures/corpus/server-filesystem/2025.7.29.json";
    let suite = "tests/fixtures/server-filesystem.suite.jsonl";
    let (code, out, err) = run(&["check", "--base", base, "--head", head, "--suite", suite]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(
        out.contains("Lint findings introduced by this PR (3):"),
        "{out}"
    );
    assert!(out.contains("this PR makes `read_file` and `read_text_file` confusable"));
    assert!(!out.contains("fixed by this PR"));
    let (_, out, _) = run(&[
        "check", "--base", base, "--head", head, "--suite", suite, "--format", "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["lint"]["introduced"].as_array().unwrap().len(), 3);
    assert_eq!(v["lint"]["fixed"], serde_json::json!([]));
    assert!(
        v["lint"].get("findings").is_none(),
        "check shows only the delta"
    );
}

/// A required object schema of `n` flat string fields.
fn flat(names: &[&str]) -> serde_json::Value {
    let props: serde_json::Map<String, serde_json::Value> = names
        .iter()
        .map(|n| {
            (
                n.to_string(),
                serde_json::json!({"type": "string", "description": "x"}),
            )
        })
        .collect();
    serde_json::json!({"type": "object", "properties": props, "required": names})
}

#[test]
fn shadowing_is_raised_only_when_the_purposes_overlap() {
    // server-filesystem: the prefilter's one candidate (edit_file, cost 4, against the
    // zero-argument list_allowed_directories) is asymmetry alone, so it is not raised.
    let l = lint_of(&tools("server-filesystem", "2026.8.31"), true);
    assert_eq!(l.shadows.len(), 1);
    assert!(l.shadowing_risks.is_empty(), "{:?}", l.shadowing_risks);
    assert_eq!(
        (
            l.shadowing_rejected[0].tool.as_str(),
            l.shadowing_rejected[0].cheaper_sibling.as_str()
        ),
        ("edit_file", "list_allowed_directories")
    );
    let c = l.shadowing_rejected[0]
        .evidence
        .as_ref()
        .unwrap()
        .purpose_cosine
        .unwrap();
    assert!(c < driftgate::lint::shadowing::PURPOSE_COSINE, "{c}");
    assert!(!l.findings.iter().any(|f| f.rule == "shadowing-risk"));

    // A genuine overlap: the bare list answers what the filtered search answers.
    let set = ToolSet::from_array(
        &[
            serde_json::json!({"name": "list_players", "description": "List all players with their season stats.",
                "inputSchema": {"type": "object", "properties": {}}}),
            serde_json::json!({"name": "search_players", "description": "Search players with their season stats by team, position and season.",
                "inputSchema": flat(&["team", "position", "season", "order"])}),
            // The spec's NOT AT RISK pair: costs asymmetric, purposes disjoint.
            serde_json::json!({"name": "get_repo", "description": "Return metadata for a repository: description, default branch, visibility, topics.",
                "inputSchema": flat(&["owner", "repo"])}),
            serde_json::json!({"name": "search_code", "description": "Search code across repositories by query, with language and path qualifiers.",
                "inputSchema": flat(&["query", "language", "path", "owner", "repo", "ref", "page", "size"])}),
        ],
        "t",
        "",
    )
    .unwrap();
    let l = lint_of(&set, true);
    let raised: Vec<(&str, &str)> = l
        .shadowing_risks
        .iter()
        .map(|r| (r.tool.as_str(), r.cheaper_sibling.as_str()))
        .collect();
    assert_eq!(
        raised,
        [("search_players", "list_players")],
        "{:?}",
        l.shadowing_rejected
    );
    assert!(
        l.shadowing_rejected.iter().any(|r| r.tool == "search_code"),
        "{:?}",
        l.shadows
    );
    let f = l
        .findings
        .iter()
        .find(|f| f.rule == "shadowing-risk")
        .unwrap();
    assert_eq!(f.tools, ["search_players", "list_players"]);
}
