//! The evidence bench's hermetic slice: the same converters and scoring as `bench/evidence/run`
//! (docs/evidence.md), on fewer cases, with floors. A change that loses agreement with the
//! independent checkers, fails more real commits on the cosine floor, or routes the public
//! prompts worse fails here. Reads `../shared/external` and `../shared/corpus` beside the
//! checkout (never copied into it); BFCL comes from PyPI: its slice is ignored here and run by
//! CI (`.ci/run`) after `.ci/bfcl.sh` fetches it.
//!
//! Floors are the slice's own numbers when they were pinned (the semantic router and the law are
//! deterministic): raise them when a change earns it, never lower them to make a change pass.

#[allow(dead_code)]
#[path = "../../bench/evidence/sources/mod.rs"]
mod sources;

use std::path::{Path, PathBuf};

use sources::{Ctx, Rate, Section};

fn shared(dir: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join(dir);
    assert!(
        p.is_dir(),
        "{} is missing: the evidence slice reads the shared external data beside the checkout",
        p.display()
    );
    p
}

fn ctx(limit: Option<usize>) -> (Ctx, tempfile_dir::Dir) {
    let work = tempfile_dir::Dir::new();
    // Both must be there (`shared` says which is missing); they sit side by side.
    shared("corpus");
    let ctx = Ctx::hermetic(
        env!("CARGO_BIN_EXE_driftgate").into(),
        shared("external").parent().expect("external has a parent"),
        work.path().to_path_buf(),
        limit,
    );
    (ctx, work)
}

/// A scratch directory removed on drop (the bench's own runs write many small inputs).
mod tempfile_dir {
    pub struct Dir(std::path::PathBuf);
    impl Dir {
        pub fn new() -> Self {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "driftgate-evidence-test-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::SeqCst)
            ));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }
}

fn at_least(s: &Section, name: &str, hits: usize, n: usize) {
    let r: Rate = s.rate(name);
    eprintln!("{}: {name} {}", s.id, r.cell());
    assert_eq!(
        r.n, n,
        "{}: {name} measured on {} cases, expected {n}",
        s.id, r.n
    );
    assert!(
        r.hits >= hits,
        "{}: {name} fell below its floor: {} (floor {hits}/{n})\n{}",
        s.id,
        r.cell(),
        s.markdown
    );
}

fn at_most(s: &Section, name: &str, hits: usize) {
    let r = s.rate(name);
    eprintln!("{}: {name} {}", s.id, r.cell());
    assert!(
        r.hits <= hits,
        "{}: {name} rose above its ceiling: {} (ceiling {hits})\n{}",
        s.id,
        r.cell(),
        s.markdown
    );
}

#[test]
fn the_severity_law_agrees_with_two_independent_schema_checkers() {
    let (ctx, _w) = ctx(None);
    let s = sources::schema_pairs::sections(&ctx).unwrap();
    let (confluent, sentry) = (&s[0], &s[1]);
    at_least(confluent, "agreement", 244, 263);
    at_least(confluent, "recall", 85, 92);
    at_least(sentry, "agreement", 77, 85);
    at_least(sentry, "recall", 38, 44);
    // Every disagreement carries a judgement (bench/evidence/judgements.toml).
    at_most(confluent, "unjudged", 0);
    at_most(sentry, "unjudged", 0);
}

#[test]
fn real_commit_history_fails_no_more_often_and_every_fail_is_judged() {
    let (ctx, _w) = ctx(Some(60));
    let s = &sources::history::sections(&ctx).unwrap()[0];
    at_most(s, "fail", 23);
    at_most(s, "text-only", 6);
    at_most(s, "refused", 0);
    at_most(s, "unjudged", 0);
}

/// `check` with a suite drafted from the base (`suite init`, unreviewed) on three real commits:
/// a consolidation the replay fails on its own (`e5522fca31eb`), a rewrite it stops as
/// inconclusive, judged right (`f3cb662c2545`: `search_issues` became semantic search), and an
/// elaboration it stops, judged a false alarm (`cdfa34e0a9d3`). The full run: 5 of 154 commits
/// differ from `diff`, 1 right (docs/evidence.md).
#[test]
fn a_drafted_suite_on_real_commits_stops_only_what_is_judged() {
    let (ctx, _w) = ctx(None);
    let s = &sources::history_check::sections_at(
        &ctx,
        &["e5522fca31eb", "f3cb662c2545", "cdfa34e0a9d3"],
    )
    .unwrap()[0];
    at_most(s, "refused", 0);
    at_least(s, "replay-failed", 1, 3);
    at_least(s, "right", 1, 2);
    at_most(s, "false-alarm", 1);
    at_most(s, "unjudged", 0);
}

/// The labelled edit benchmark, one edited tool per set (Azure left to the full run): on the
/// held-out half, meaning-changing edits are caught and harmless ones pass.
#[test]
fn held_out_meaning_changes_fail_the_gate_and_harmless_edits_pass() {
    let (ctx, _w) = ctx(Some(1));
    let s = &sources::edits::sections(&ctx).unwrap()[0];
    at_least(s, "held-out-recall", HELD_OUT_RECALL.0, HELD_OUT_RECALL.1);
    // The full run: 5 of 117 held-out harmless edits fail (docs/evidence.md); the slice has one.
    at_most(s, "held-out-false-alarms", 1);
    at_most(s, "tune-false-alarms", 3);
}

/// 14 of 15 when pinned (the full run: 115 of 128, docs/evidence.md).
const HELD_OUT_RECALL: (usize, usize) = (14, 15);

/// The same slice through the offline router alone (in process): what the shipped router feels,
/// pinned as a floor on meaning changes felt and a ceiling on harmless edits felt. On this slice
/// (one tool a set) it feels 8 of 15 held-out meaning changes, one fewer than `hybrid2`, and 6 of
/// 16 harmless edits, as many; the full held-out half, which chose nothing, is where it gains:
/// 78 vs 71 of 128 felt, 27 vs 34 of 117 harmless (docs/evidence.md, docs/router.md).
#[test]
fn the_shipped_router_feels_held_out_meaning_changes() {
    let (ctx, _w) = ctx(Some(1));
    let s = &sources::sensitivity::sections(&ctx).unwrap()[0];
    let was = s.rate("hybrid2 held-out preserving felt");
    eprintln!(
        "sensitivity: hybrid2 felt {} of meaning changes, {} of harmless edits",
        s.rate("hybrid2 held-out changing felt").cell(),
        was.cell()
    );
    at_least(s, "held-out changing felt", 8, 15);
    at_most(s, "held-out preserving felt", 6);
    assert_eq!(s.rate("held-out preserving felt").n, 16);
    assert!(
        s.rate("held-out preserving felt").hits <= was.hits,
        "the shipped router feels more harmless edits than hybrid2\n{}",
        s.markdown
    );
}

#[test]
fn public_prompts_route_at_least_as_well_and_every_misroute_is_judged() {
    let (ctx, _w) = ctx(Some(80));
    let s = &sources::mcptoolbench::sections(&ctx).unwrap()[0];
    at_least(s, "filesystem-last", 63, 80);
    at_least(s, "search", 71, 80);
    let az = &sources::azure::sections(&ctx).unwrap()[0];
    // 67 with hybrid3: not reading usage examples costs one prompt here (two of 438 in the full
    // run: "Deploy a GPT4o instance" matched the deploy tool's "(e.g. GPT4o …)"; docs/router.md).
    at_least(az, "accuracy", 66, 80);
    // Every misrouted prompt carries a judgement (bench/evidence/judgements.toml).
    at_most(s, "filesystem-unjudged", 0);
    at_most(s, "search-unjudged", 0);
    at_most(az, "unjudged", 0);
}

/// The injection scan on MCP-SafetyBench's poisoned and added tools (as PRs), and on every real
/// definition of the corpus, github-mcp-server's history, Azure and MCPToolBench++ (ATR comes
/// from npm and is in the full run only). The whole source: the scan is a library call.
#[test]
fn poisoning_nobody_here_wrote_is_flagged_and_real_definitions_stay_clean() {
    let (ctx, _w) = ctx(None);
    let s = &sources::injection::sections(&ctx).unwrap()[0];
    at_least(s, "safetybench flagged", 153, 162);
    at_least(s, "safetybench held-out flagged", 66, 74);
    at_least(s, "safetybench fails", 147, 162);
    at_most(s, "corpus definitions high", 0);
    at_most(s, "benign definitions high", 0);
}

/// The hand-written edits (batches each written and labelled before any was measured; Azure's
/// left to the full run). These pin what the gate does on edits nobody templated, so a change
/// that misses more of them, or fails more harmless ones, fails here. The first seven batches are
/// seen (rules or the router were changed on them); the eighth and ninth are the unseen check of
/// the rules chosen on the seventh (here, without Azure, 12 and 11 of 15 meaning changes caught,
/// 0 and 1 of 15 harmless; in the full run 55 of 68 and 1 of 68): the bounds record where the gate
/// stands, a regression past them fails.
#[test]
fn hand_written_edits_are_judged_as_labelled() {
    let (ctx, _w) = ctx(Some(1));
    let s = &sources::hand::sections(&ctx).unwrap()[0];
    for (batch, hits, n, alarms, m) in [
        ("first", 18, 21, 2, 20),
        ("second", 12, 23, 0, 23),
        ("third", 11, 17, 0, 17),
        ("fourth", 11, 15, 2, 15),
        ("fifth", 10, 15, 0, 15),
        ("sixth", 11, 15, 1, 15),
        ("seventh", 10, 15, 0, 15),
        ("eighth", 12, 15, 0, 15),
        ("ninth", 11, 15, 1, 15),
    ] {
        at_least(s, &format!("hand {batch} recall"), hits, n);
        at_most(s, &format!("hand {batch} false alarms"), alarms);
        let r = s.rate(&format!("hand {batch} false alarms"));
        assert_eq!(r.n, m, "{batch}\n{}", s.markdown);
    }
}

/// A hand-written edit that does not apply is an error, not a silent no-op.
#[test]
fn a_hand_written_edit_must_apply_to_its_tool() {
    let edit = |label: &str, kind: &str, replace: Option<[&str; 2]>| sources::hand::HandEdit {
        set: "azure".into(),
        tool: "t".into(),
        label: label.into(),
        kind: kind.into(),
        text: replace.is_none().then(|| "Send a fax.".to_string()),
        replace: replace.map(|[a, b]| [a.to_string(), b.to_string()]),
    };
    let base = "Send an email.";
    let ok = edit("changing", "sibling", None).resolve(base).unwrap();
    assert_eq!((ok.kind, ok.new.as_str()), ("sibling", "Send a fax."));
    let swapped = edit("preserving", "synonym", Some(["an email", "a mail"]));
    assert_eq!(swapped.resolve(base).unwrap().new, "Send a mail.");
    for (bad, why) in [
        (
            edit("changing", "typo", None),
            "kind \"typo\" under changing",
        ),
        (edit("harmless", "typo", None), "label \"harmless\""),
        (
            edit("preserving", "synonym", Some(["a letter", "a note"])),
            "is not in the base description",
        ),
        (
            edit("preserving", "synonym", Some(["an email", "an email"])),
            "changes nothing",
        ),
    ] {
        let err = bad.resolve(base).unwrap_err().to_string();
        assert!(err.contains(why), "{err}");
    }
    // Every edit of the file names a known label and kind.
    let all = sources::hand::load().unwrap();
    for b in sources::hand::BATCHES {
        let n = all.iter().filter(|(batch, _)| *batch == b.name).count();
        assert!(n >= 50, "{n} hand-written edits in the {} batch", b.name);
    }
    // The unmeasured reserves parse and name known labels and kinds too.
    for r in sources::hand::RESERVES {
        assert_eq!(sources::hand::read(r).unwrap().len(), 68, "{r}");
    }
}

/// The bench's own bad input fails naming the file: a missing data directory, a file that is not
/// JSON, and a JSON file of the wrong shape.
#[test]
fn the_benchs_bad_input_names_the_file() {
    let (ctx, _w) = ctx(Some(1));
    let external = ctx.work.join("external");
    let confluent_names_its_file = || {
        let err = sources::schema_pairs::confluent(&external).err();
        let err = format!("{:#}", err.expect("an error"));
        assert!(err.contains("diff-schema-examples.json"), "{err}");
    };
    confluent_names_its_file();
    let dir = external.join("schema-pairs/confluent");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("diff-schema-examples.json");
    std::fs::write(&file, "{\"not\": \"a list\"}").unwrap();
    confluent_names_its_file();
    std::fs::write(&file, "[{\"old\": ").unwrap();
    let err = format!("{:#}", sources::read_json(&file).unwrap_err());
    assert!(err.contains("diff-schema-examples.json"), "{err}");
    // The routing sources' files, of the wrong shape.
    let bad = Ctx {
        external: external.clone(),
        ..ctx.clone()
    };
    for (dir, file, source) in [
        ("mcptoolbench", "search_0725_single_v2.json", "mcptoolbench"),
        ("azure-mcp", "tools.json", "azure"),
    ] {
        std::fs::create_dir_all(external.join(dir)).unwrap();
        std::fs::write(external.join(dir).join(file), "{\"results\": 3}").unwrap();
        let err = match source {
            "mcptoolbench" => sources::mcptoolbench::cases(&bad, file).err(),
            _ => sources::azure::load(&bad).err(),
        };
        let err = format!("{:#}", err.expect("an error"));
        assert!(err.contains(file), "{source}: {err}");
    }
    // A line of the history, or of a BFCL file, with a field of the wrong kind: the file, the
    // line and the field are named.
    let history = external.join("github-mcp-server");
    std::fs::create_dir_all(&history).unwrap();
    std::fs::write(
        history.join("history.jsonl"),
        "\n{\"commit\": \"abc\", \"tools\": 3}\n",
    )
    .unwrap();
    let err = format!(
        "{:#}",
        sources::history::commits(&bad).err().expect("an error")
    );
    assert!(
        err.contains("history.jsonl:2") && err.contains("`tools`"),
        "{err}"
    );
    let bfcl = ctx.work.join("bfcl");
    std::fs::create_dir_all(bfcl.join("possible_answer")).unwrap();
    std::fs::write(
        bfcl.join("BFCL_v4_multiple.json"),
        "{\"id\": \"multiple_0\", \"question\": [], \"function\": 3}\n",
    )
    .unwrap();
    std::fs::write(bfcl.join("possible_answer/BFCL_v4_multiple.json"), "").unwrap();
    let err = format!(
        "{:#}",
        sources::bfcl::groups(&bfcl, "multiple", false)
            .err()
            .expect("an error")
    );
    assert!(
        err.contains("BFCL_v4_multiple.json:1") && err.contains("`function`"),
        "{err}"
    );
    std::fs::write(bfcl.join("BFCL_v4_multiple.json"), "{\"id\": \n").unwrap();
    let err = format!(
        "{:#}",
        sources::bfcl::groups(&bfcl, "multiple", false)
            .err()
            .expect("an error")
    );
    assert!(err.contains("BFCL_v4_multiple.json:1"), "{err}");
}

/// BFCL comes from PyPI (`bfcl-eval`), so it is outside the hermetic run; CI fetches it with
/// `.ci/bfcl.sh` and runs this slice (the first 20 tool sets of each set) with floors.
#[test]
#[ignore = "needs bfcl-eval from PyPI: DRIFTGATE_BFCL=$(bash .ci/bfcl.sh)"]
fn bfcl_routes_at_least_as_well() {
    let data = std::env::var("DRIFTGATE_BFCL")
        .expect("DRIFTGATE_BFCL names BFCL's data directory (`bash .ci/bfcl.sh` prints it)");
    let (mut ctx, _w) = ctx(Some(20));
    ctx.bfcl = Some(data.into());
    let s = &sources::bfcl::sections(&ctx).unwrap()[0];
    at_least(s, "multiple", 20, 20);
    at_least(s, "live_multiple", 109, 115);
    at_least(s, "irrelevance", 5, 21);
    // Every misrouted question carries a judgement (bench/evidence/judgements.toml).
    for set in ["multiple", "live_multiple", "irrelevance"] {
        at_most(s, &format!("{set}-unjudged"), 0);
    }
}
