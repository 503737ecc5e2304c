//! Sharding past one machine: `check --shard i/n` on each of four "machines" (separate
//! processes and caches) and `driftgate merge` of the parts gives the report one unsharded run
//! gives — statistics recomputed over every case, not averaged — and parts that do not belong
//! together are refused.

use serde_json::Value;

use crate::support::calendar::{BASE, HEAD, SUITE};
use crate::support::cli::{self, Run};
use crate::support::reports::{assert_matches_schema, calendar_check_json};

/// The repository secret every shard job and the merge job share (`DRIFTGATE_KEY`).
pub(crate) const KEY: &str = "shared-repository-secret";

/// A part as the check that wrote it would have signed it (for tests that need a part edited
/// the way an honest run could have left it).
pub(crate) fn resign(file: &std::path::Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    edit(&mut v);
    let mut report = driftgate::report::Report::from_json(&v.to_string(), "part").unwrap();
    report.sign_part(&driftgate::canon::MacKey::derive(KEY.as_bytes()));
    std::fs::write(file, serde_json::to_string(&report).unwrap()).unwrap();
}

/// `check --shard I/N` of the calendar example into `dir/part-I.json`.
fn part(dir: &std::path::Path, shard: &str, head: &str, suite: &str) -> (Run, std::path::PathBuf) {
    let file = dir.join(format!("part-{}.json", shard.replace('/', "-of-")));
    let cache = tempfile::tempdir().unwrap();
    let run = cli::driftgate([
        "check",
        "--base",
        BASE,
        "--head",
        head,
        "--suite",
        suite,
        "--shard",
        shard,
        "--json-out",
        file.to_str().unwrap(),
    ])
    .cache(cache.path())
    .env("DRIFTGATE_KEY", KEY)
    .run();
    (run, file)
}

fn merge(parts: &[&std::path::Path]) -> Run {
    cli::driftgate(["merge", "--format", "json"])
        .args(parts.iter().map(|p| p.as_os_str()))
        .env("DRIFTGATE_KEY", KEY)
        .run()
}

/// Routing without the per-side run counters (timing differs run to run).
fn routing_without_timing(r: &Value) -> Value {
    let mut routing = r["routing"].clone();
    let o = routing.as_object_mut().unwrap();
    o.remove("base_stats");
    o.remove("head_stats");
    routing
}

fn four_parts(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    (1..=4)
        .map(|i| {
            let (run, file) = part(dir, &format!("{i}/4"), HEAD, SUITE);
            // A part of a failing gate exits 0: its verdict covers its cases only.
            assert_eq!(run.code, 0, "{}", run.dump());
            assert!(
                run.stdout.contains(&format!("shard {i}/4: replayed ")),
                "{}",
                run.stdout
            );
            file
        })
        .collect()
}

#[test]
fn four_shards_merge_into_the_unsharded_report() {
    let whole: Value = serde_json::from_str(calendar_check_json()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = four_parts(dir.path());
    let parts: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    let sizes: Vec<u64> = parts
        .iter()
        .map(|p| p["routing"]["summary"]["n_cases"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes.iter().sum::<u64>(), 36, "{sizes:?}");
    assert!(sizes.iter().all(|&n| n > 0 && n < 36), "{sizes:?}");
    for p in &parts {
        assert_matches_schema(p, "a shard part");
    }

    // Any order.
    let mut order: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
    order.reverse();
    let run = merge(&order);
    assert_eq!(
        run.code,
        1,
        "the merged gate fails like the whole one: {}",
        run.dump()
    );
    let merged: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_matches_schema(&merged, "the merged report");
    assert!(merged.get("shard").is_none());
    assert_eq!(merged["verdict"], whole["verdict"]);
    assert_eq!(
        routing_without_timing(&merged),
        routing_without_timing(&whole)
    );
    for key in [
        "diff",
        "drift",
        "lint",
        "scan",
        "suite",
        "router",
        "thresholds",
    ] {
        assert_eq!(merged[key], whole[key], "{key}");
    }
    for counter in ["requests_sent", "cache_hits"] {
        for side in ["base_stats", "head_stats"] {
            assert_eq!(
                merged["routing"][side][counter], whole["routing"][side][counter],
                "{side}.{counter}"
            );
        }
    }
    let notes = |r: &Value| -> Vec<String> {
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .filter(|n| !n.starts_with("merged from "))
            .collect()
    };
    assert_eq!(notes(&merged), notes(&whole));
    assert!(
        merged["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("merged from 4 shard parts (36 cases")),
        "{}",
        merged["notes"]
    );
}

#[test]
fn parts_that_do_not_belong_together_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = four_parts(dir.path());
    let refused = |parts: &[&std::path::Path], want: &str| {
        let run = merge(parts);
        assert_eq!(run.code, 2, "{}", run.dump());
        assert!(
            run.stderr.contains(want),
            "wanted {want:?}:\n{}",
            run.dump()
        );
        assert!(
            run.stdout.is_empty(),
            "nothing half-written: {}",
            run.stdout
        );
    };
    let p: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
    refused(&p[..3], "missing shard(s) 4/4 of 4");
    refused(&[p[0], p[1], p[2], p[2], p[3]], "shard 3/4 is given twice");

    // Another suite (one case reworded) and another head: same file names, other content.
    let other = tempfile::tempdir().unwrap();
    let suite = other.path().join("suite.yaml");
    let text = std::fs::read_to_string(SUITE).unwrap();
    let reworded = text.replacen("next Tuesday", "next Wednesday", 1);
    assert_ne!(text, reworded);
    std::fs::write(&suite, reworded).unwrap();
    let (_, other_suite) = part(other.path(), "4/4", HEAD, suite.to_str().unwrap());
    refused(&[p[0], p[1], p[2], &other_suite], "differ in their suite");
    let head = other.path().join("head.json");
    let mut tools: Value = serde_json::from_str(&std::fs::read_to_string(HEAD).unwrap()).unwrap();
    tools["tools"][0]["description"] = Value::from("Another description.");
    std::fs::write(&head, tools.to_string()).unwrap();
    let (_, other_head) = part(other.path(), "4/4", head.to_str().unwrap(), SUITE);
    refused(&[p[0], p[1], p[2], &other_head], "differ in their");

    // A whole report is not a part; neither is a file that is not a report.
    let whole = dir.path().join("whole.json");
    std::fs::write(&whole, calendar_check_json()).unwrap();
    refused(&[p[0], &whole], "not a shard's partial report");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\"tools\": []}").unwrap();
    refused(&[p[0], &junk], "junk.json");
}

#[test]
fn a_bad_shard_is_a_usage_error() {
    for bad in ["0/4", "5/4", "2", "1/0"] {
        let run = cli::driftgate([
            "check", "--base", BASE, "--head", HEAD, "--suite", SUITE, "--shard", bad,
        ])
        .run();
        assert_eq!(run.code, 2, "{bad}: {}", run.dump());
        assert!(run.stderr.contains("expected I/N"), "{}", run.dump());
    }
}

#[test]
fn a_part_with_a_missing_answer_merges_into_an_incomplete_report_exit_3() {
    // Part 2's head run lost one answer after retries (as a router outage leaves it): the merged
    // verdict is incomplete, never a pass or a fail read off the rest.
    let dir = tempfile::tempdir().unwrap();
    let files = four_parts(dir.path());
    resign(&files[1], |part| {
        part["shard"]["head_run"]["cases"][0]["samples"][0]["outcome"] =
            serde_json::json!({"type": "error", "message": "HTTP 503 after 3 attempts"});
    });
    let p: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
    let run = merge(&p);
    assert_eq!(run.code, 3, "{}", run.dump());
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["verdict"]["status"], "incomplete");
    let reason = v["verdict"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("1 routing answer(s) missing after retries"),
        "{reason}"
    );
    assert!(reason.contains("HTTP 503 after 3 attempts"), "{reason}");
}

/// Copies of `files` in a fresh directory, for one edit each.
fn copies(files: &[std::path::PathBuf]) -> (tempfile::TempDir, Vec<std::path::PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let out = files
        .iter()
        .map(|f| {
            let to = dir.path().join(f.file_name().unwrap());
            std::fs::copy(f, &to).unwrap();
            to
        })
        .collect();
    (dir, out)
}

/// The part's JSON, edited by `f`, written back as is (no new tag: what a PR's job could do).
fn tamper(file: &std::path::Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(file, v.to_string()).unwrap();
}

/// Each way a pull request's job could edit the parts to turn the calendar FAIL into a PASS
/// (found by trying them on the merge that trusted its parts) is refused by the tag.
#[test]
fn a_part_edited_after_it_was_written_is_refused() {
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit); 6] = [
        ("head samples", |v| {
            // Every head answer replaced by base's: no flip left.
            let base = v["shard"]["base_run"]["cases"].clone();
            v["shard"]["head_run"]["cases"] = base;
        }),
        ("thresholds", |v| {
            v["thresholds"]["per_tool_alpha"] = 1e-12.into();
            v["thresholds"]["tolerance"] = 1.0.into();
        }),
        ("a deleted case", |v| {
            v["shard"]["cases"].as_array_mut().unwrap().pop();
            for side in ["base_run", "head_run"] {
                v["shard"][side]["cases"].as_array_mut().unwrap().pop();
            }
        }),
        ("a relabelled part", |v| {
            v["shard"]["shard"]["count"] = 1.into();
        }),
        ("a duplicated case", |v| {
            let c = v["shard"]["cases"][0].clone();
            v["shard"]["cases"].as_array_mut().unwrap().push(c);
        }),
        ("a removed tag", |v| {
            v["shard"].as_object_mut().unwrap().remove("mac");
        }),
    ];
    let dir = tempfile::tempdir().unwrap();
    let written = four_parts(dir.path());
    for (what, edit) in edits {
        let (_keep, files) = copies(&written);
        tamper(&files[1], edit);
        let p: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
        let run = merge(&p);
        assert_eq!(run.code, 2, "{what}: {}", run.dump());
        assert!(
            run.stderr
                .contains("refusing a part whose tag does not verify: it was edited after"),
            "{what}: {}",
            run.dump()
        );
        assert!(run.stdout.is_empty(), "{what}: nothing half-written");
    }
}

#[test]
fn parts_signed_under_another_key_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = four_parts(dir.path());
    let p: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
    let run = cli::driftgate(["merge", "--format", "json"])
        .args(p.iter().map(|p| p.as_os_str()))
        .env("DRIFTGATE_KEY", "another-repository's secret")
        .run();
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr.contains("the same DRIFTGATE_KEY secret"),
        "{}",
        run.dump()
    );
}

/// Parts a check signed honestly can still disagree with each other: a case given twice or
/// left out, or a case in a part whose split never held it (spliced from another run).
#[test]
fn signed_parts_with_a_duplicated_missing_or_foreign_case_are_refused() {
    type Edit = fn(&mut Value);
    let cases: [(&str, Edit, &str); 3] = [
        (
            "duplicated",
            |v| {
                // Part 2's first case again, under its own position.
                let c = v["shard"]["cases"][0].clone();
                let (b, h) = (
                    v["shard"]["base_run"]["cases"][0].clone(),
                    v["shard"]["head_run"]["cases"][0].clone(),
                );
                let mut c2 = c.clone();
                c2["position"] = 1000.into();
                v["shard"]["cases"].as_array_mut().unwrap().push(c2);
                v["shard"]["base_run"]["cases"]
                    .as_array_mut()
                    .unwrap()
                    .push(b);
                v["shard"]["head_run"]["cases"]
                    .as_array_mut()
                    .unwrap()
                    .push(h);
            },
            "is at position",
        ),
        (
            "missing",
            |v| {
                v["shard"]["cases"].as_array_mut().unwrap().pop();
                v["shard"]["base_run"]["cases"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
                v["shard"]["head_run"]["cases"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            },
            "a case is missing from the parts",
        ),
        (
            "foreign",
            |v| {
                v["shard"]["cases"][0]["id"] = "spliced-from-elsewhere".into();
                v["shard"]["base_run"]["cases"][0]["id"] = "spliced-from-elsewhere".into();
                v["shard"]["head_run"]["cases"][0]["id"] = "spliced-from-elsewhere".into();
            },
            "does not belong to it (the split is by case id)",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let written = four_parts(dir.path());
    for (what, edit, want) in cases {
        let (_keep, files) = copies(&written);
        resign(&files[1], edit);
        let p: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
        let run = merge(&p);
        assert_eq!(run.code, 2, "{what}: {}", run.dump());
        assert!(run.stderr.contains(want), "{what}: {}", run.dump());
    }
}

/// The merge judges with its own thresholds (its flags and the policy's config), never the
/// ones a part carries: a part written under a PR's loose config does not loosen the verdict.
#[test]
fn the_merge_judges_with_its_own_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let files = four_parts(dir.path());
    for f in &files {
        resign(f, |v| {
            v["thresholds"]["per_tool_alpha"] = 1e-12.into();
            v["thresholds"]["tolerance"] = 1.0.into();
            v["thresholds"]["cosine"] = "review".into();
        });
    }
    let p: Vec<&std::path::Path> = files.iter().map(|f| f.as_path()).collect();
    let run = merge(&p);
    assert_eq!(run.code, 1, "{}", run.dump());
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["thresholds"]["per_tool_alpha"], 0.035);
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("the verdict uses the merge's own")),
        "{}",
        v["notes"]
    );
}
