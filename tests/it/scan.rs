//! The injection scan on data. Each rule of the registry (`driftgate::injection::RULES`) has a
//! fixture pair `tests/fixtures/scan/rules/<rule-id>/{positive,negative}.json`: the positive
//! raises the rule, the negative (a legitimate text that looks close) raises nothing. Recall is
//! pinned on the published poisoning examples (`tests/fixtures/scan/published`, each citing its
//! source), precision on the real corpus (`tests/fixtures/corpus`, the table in `docs/scan.md`)
//! and on hard negatives (`tests/fixtures/scan/benign`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

use driftgate::injection::{self, Level, RULES};
use driftgate::source;
use driftgate::tools::ToolSet;
use serde_json::Value;

use crate::support::cli::repo;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn set(tools: &Value, label: &str) -> ToolSet {
    ToolSet::from_array(tools.as_array().expect("an array of tools"), label, "").unwrap()
}

fn rule_dirs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(repo("tests/fixtures/scan/rules"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn every_scan_rule_has_a_fixture_pair_and_every_fixture_a_rule() {
    let dirs: BTreeSet<String> = rule_dirs().into_iter().collect();
    for r in RULES {
        assert!(
            dirs.contains(r.id.as_str()),
            "scan rule {:?} has no tests/fixtures/scan/rules/{}/",
            r.id,
            r.id
        );
        assert!(
            r.reference.starts_with("https://"),
            "{}: a public reference",
            r.id
        );
    }
    for d in &dirs {
        assert!(
            RULES.iter().any(|r| r.id == d),
            "tests/fixtures/scan/rules/{d} names no scan rule"
        );
    }
    let ids = driftgate::injection::RuleId::ALL;
    assert_eq!(ids.len(), RULES.len(), "one row per rule id");
    assert!(ids.iter().all(|id| id.rule().id == *id));
}

/// The positive raises its rule (at the rule's level or above); the negative raises nothing.
/// Everything raised is pinned in one snapshot.
#[test]
fn each_rule_fires_on_its_positive_and_nothing_on_its_negative() {
    let mut snap = String::new();
    for id in rule_dirs() {
        let dir = repo("tests/fixtures/scan/rules").join(&id);
        let rule = injection::rule(&id);
        let positive = injection::scan(&set(&read(&dir.join("positive.json")), &id));
        assert!(
            positive
                .iter()
                .any(|f| f.rule == rule.id && f.level >= rule.level),
            "{id}: positive does not raise it: {positive:#?}"
        );
        let negative = injection::scan(&set(&read(&dir.join("negative.json")), &id));
        assert!(negative.is_empty(), "{id}: negative raises {negative:#?}");
        writeln!(snap, "## {id}").unwrap();
        for f in positive {
            writeln!(
                snap,
                "{} {} {} {} {:?}{}",
                f.rule,
                f.level.as_str(),
                f.tool.escape_debug(),
                f.field,
                f.excerpt,
                f.hidden
                    .map(|h| format!(" hidden={h:?}"))
                    .unwrap_or_default()
            )
            .unwrap();
        }
    }
    insta::assert_snapshot!("scan_rules", snap);
}

/// Recall on published tool-poisoning examples: every rule a fixture expects fires, and every
/// example raises at least one `high` finding, so the gate fails on each at its default.
#[test]
fn every_published_poisoning_example_is_caught() {
    let examples = files(&repo("tests/fixtures/scan/published"));
    assert!(examples.len() >= 20, "{} examples", examples.len());
    for path in &examples {
        let v = read(path);
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            v["source"]["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("https://")),
            "{name}: every example cites its source"
        );
        let found = injection::scan(&set(&v["tools"], &name));
        for want in v["expect"].as_array().unwrap() {
            let want = want.as_str().unwrap();
            injection::rule(want);
            assert!(
                found.iter().any(|f| f.rule == want),
                "{name}: expected {want}, found {found:#?}"
            );
        }
        assert!(
            found.iter().any(|f| f.level == Level::High),
            "{name}: nothing high: {found:#?}"
        );
    }
}

/// Legitimate tools that look scary to a naive scanner raise nothing high, and medium only for
/// the rules their fixture's `expect` lists (each of which must fire, so the list stays true).
#[test]
fn hard_negatives_raise_nothing() {
    for path in files(&repo("tests/fixtures/scan/benign")) {
        let v = read(&path);
        let found = injection::scan(&set(&v["tools"], "benign"));
        let expect: Vec<&str> = v["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        for f in &found {
            assert!(
                f.level == Level::Medium && expect.contains(&f.rule.as_str()),
                "{}: {f:#?}",
                path.display()
            );
        }
        for want in expect {
            assert!(
                found.iter().any(|f| f.rule == want),
                "{}: `expect` lists {want}, which no longer fires",
                path.display()
            );
        }
    }
}

/// Precision on every real capture: the per-server table of `docs/scan.md` is what the scan
/// finds today (regenerate it from this test's message when a rule changes), and no real
/// server raises a `high` finding.
#[test]
fn the_corpus_table_in_docs_is_true_and_no_real_server_is_high() {
    let root = repo("tests/fixtures/corpus");
    let mut rows: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    for path in files(&root) {
        let server = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let (tools, _) = source::parse_text(&text, &path.display().to_string()).unwrap();
        let row = rows.entry(server).or_default();
        row[0] += 1;
        row[1] += tools.len();
        for f in injection::scan(&tools) {
            assert_ne!(f.level, Level::High, "{}: {f:#?}", path.display());
            row[match f.level {
                Level::High => 3,
                Level::Medium => 2,
            }] += 1;
        }
    }
    let mut table = String::from(
        "| server | captures | tool definitions | medium | high |\n|---|---|---|---|---|\n",
    );
    let mut total = [0usize; 4];
    for (server, r) in &rows {
        writeln!(
            table,
            "| {server} | {} | {} | {} | {} |",
            r[0], r[1], r[2], r[3]
        )
        .unwrap();
        for (t, x) in total.iter_mut().zip(r) {
            *t += x;
        }
    }
    writeln!(
        table,
        "| **all {}** | {} | {} | {} | {} |",
        rows.len(),
        total[0],
        total[1],
        total[2],
        total[3]
    )
    .unwrap();
    let doc = std::fs::read_to_string(repo("docs/scan.md")).unwrap();
    assert!(
        doc.contains(&table),
        "docs/scan.md does not hold today's corpus table; replace it with:\n{table}"
    );
}

/// `src/injection/needs.json` holds exactly the literal trees the patterns have today, for every
/// pattern and no other (`DRIFTGATE_BLESS=1` rewrites it): a stale tree could let a guard skip a
/// match.
#[test]
fn the_stored_literal_trees_are_the_patterns_own() {
    let path = repo("src/injection/needs.json");
    let live = injection::rules::needs_json();
    if std::env::var_os("DRIFTGATE_BLESS").is_some() {
        std::fs::write(&path, &live).unwrap();
    }
    assert!(
        std::fs::read_to_string(&path).unwrap() == live,
        "src/injection/needs.json is stale; rewrite it with `DRIFTGATE_BLESS=1 cargo test --test it stored_literal` and review the diff"
    );
}

/// Every string of every JSON or JSON-lines file under `dir`.
fn strings_under(dir: &Path, out: &mut Vec<String>) {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.iter().for_each(|(k, x)| {
                out.push(k.clone());
                walk(x, out);
            }),
            _ => {}
        }
    }
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let ext = p.extension().and_then(|x| x.to_str());
            if p.is_dir() {
                dirs.push(p);
            } else if ext == Some("json") {
                if let Ok(v) = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()) {
                    walk(&v, out);
                }
            } else if ext == Some("jsonl") {
                for line in std::fs::read_to_string(&p).unwrap().lines() {
                    if let Ok(v) = serde_json::from_str(line) {
                        walk(&v, out);
                    }
                }
            }
        }
    }
}

/// The light engine (`regex-lite`, for short ASCII texts) reads every text exactly as `regex`
/// does: the same matches, the same spans, the same named group, for every pattern, on every
/// string (and its normalised views) of the scan fixtures, the corpus and the external evidence
/// sets a pattern's guard lets through. And no pattern holds a non-ASCII letter that folds to
/// an ASCII one (`ſ`, the Kelvin sign), the one place their case folding differs on ASCII text.
#[test]
fn the_light_engine_reads_every_short_ascii_text_as_regex_does() {
    use injection::rules::{Engine, LITE_TEXT};
    let mut raw = Vec::new();
    strings_under(&repo("tests/fixtures"), &mut raw);
    for d in ["corpus", "external"] {
        let dir = repo("..").join("shared").join(d);
        assert!(dir.is_dir(), "{} is missing", dir.display());
        strings_under(&dir, &mut raw);
    }
    let mut texts: BTreeSet<String> = BTreeSet::new();
    for t in raw {
        if t.len() > 4 * LITE_TEXT {
            continue;
        }
        texts.extend(
            injection::normal::views(&t, false)
                .into_iter()
                .map(|v| v.text),
        );
        texts.insert(t.to_lowercase());
        texts.insert(t);
    }
    let texts: Vec<(String, injection::rules::Words)> = texts
        .into_iter()
        .filter(|t| t.is_ascii() && t.len() <= LITE_TEXT)
        .map(|t| {
            let w = injection::rules::Words::of(&t);
            (t, w)
        })
        .collect();
    assert!(texts.len() > 15_000, "{} texts", texts.len());
    let (mut read, mut matched) = (0, 0);
    for p in injection::rules::all_patterns() {
        let folds_to_ascii = p.as_str().chars().find(|c| {
            !c.is_ascii()
                && c.to_lowercase()
                    .chain(c.to_uppercase())
                    .any(|f| f.is_ascii_alphabetic())
        });
        assert_eq!(folds_to_ascii, None, "{}", p.as_str());
        for (t, _) in texts.iter().filter(|(_, w)| p.may_match(w)) {
            let full = p.caught_with(Engine::Full, t, usize::MAX).expect("regex");
            let lite = p.caught_with(Engine::Lite, t, usize::MAX);
            assert_eq!(lite.as_ref(), Some(&full), "{}\non {t:?}", p.as_str());
            read += 1;
            matched += usize::from(!full.is_empty());
        }
    }
    assert!(
        read > 10_000 && matched > 500,
        "read {read}, matched {matched}"
    );
}

/// The scan's patterns compile lazily behind the literals every match must contain: every pattern
/// compiles, every one is guarded, and no guard ever skips a text its pattern matches (every string
/// and view of every scan fixture, and of the real corpus; and the raw strings, which the name
/// matchers read unnormalised).
#[test]
fn lazily_compiled_patterns_compile_and_their_guards_never_skip_a_match() {
    let mut texts = Vec::new();
    let mut dirs = vec![repo("tests/fixtures/scan"), repo("tests/fixtures/corpus")];
    while let Some(d) = dirs.pop() {
        for p in files(&d) {
            let v = read(&p);
            let tools = v.get("tools").cloned().unwrap_or(v);
            let Some(a) = tools.as_array() else { continue };
            let Ok(set) = ToolSet::from_array(a, "t", "") else {
                continue;
            };
            for t in &set.tools {
                for (_, text, is_name) in injection::texts(t) {
                    texts.extend(
                        injection::normal::views(&text, is_name)
                            .into_iter()
                            .map(|v| v.text),
                    );
                    texts.push(text.to_lowercase());
                    texts.push(text);
                }
            }
        }
    }
    // Spellings a case-insensitive match equates and a plain lowercase does not.
    texts.extend(["BEST_search", "beſt_search", "\u{212A}EEP"].map(String::from));
    assert!(texts.len() > 1000, "{} texts", texts.len());
    let words: Vec<_> = texts
        .iter()
        .map(|t| injection::rules::Words::of(t))
        .collect();
    let (mut guarded, mut all, mut matched) = (0, 0, 0);
    for p in injection::rules::all_patterns() {
        all += 1;
        guarded += usize::from(p.is_guarded());
        for (t, w) in texts.iter().zip(&words) {
            let full = injection::rules::Engine::Full;
            if !p.caught_with(full, t, 1).expect("regex").is_empty() {
                matched += 1;
                assert!(
                    p.may_match(w),
                    "{}: the guard skips a text its pattern matches: {t:?}",
                    p.as_str()
                );
            }
        }
    }
    assert!(
        matched > 50,
        "the fixtures exercise the patterns: {matched}"
    );
    assert_eq!(guarded, all, "every pattern needs some literal");
}
