//! The shipped semantic router's accuracy on every suite we ship, pinned as floors: a change to
//! the router (or the embedder under it) that loses a case on any suite fails here, and one that
//! gains should raise the floor. The table of variants behind these numbers is docs/router.md
//! (`bench/router.sh`).

use crate::support::{calendar, cli};

/// (suite, the tools it was written against, cases, floor of correct answers).
const FLOORS: [(&str, &str, u64, u64); 5] = [
    (calendar::SUITE, calendar::BASE, 36, 30),
    // The target: ≥ 70% (28/40) on the filesystem suite; v0.1 of the router had 21.
    (
        "tests/fixtures/server-filesystem.suite.jsonl",
        "tests/fixtures/corpus/server-filesystem/2025.7.1.json",
        40,
        30,
    ),
    (
        "bench/suites/playwright-mcp.suite.jsonl",
        "tests/fixtures/corpus/playwright-mcp/0.0.83.json",
        54,
        39,
    ),
    (
        "bench/suites/server-github.suite.jsonl",
        "tests/fixtures/corpus/server-github/2025.4.8.json",
        56,
        23,
    ),
    (
        "bench/suites/mcp-server-git.suite.jsonl",
        "tests/fixtures/corpus/mcp-server-git/2026.10.19.json",
        28,
        12,
    ),
];

#[test]
fn the_shipped_router_holds_its_accuracy_on_every_shipped_suite() {
    let cache = tempfile::tempdir().unwrap();
    let runs: Vec<_> = FLOORS
        .iter()
        .map(|&(suite, tools, cases, floor)| {
            let dir = cache.path().to_str().unwrap().to_string();
            std::thread::spawn(move || {
                let run = cli::driftgate([
                    "check",
                    "--format",
                    "json",
                    "--cache-dir",
                    dir.as_str(),
                    "--base",
                    tools,
                    "--head",
                    tools,
                    "--suite",
                    suite,
                ])
                .run();
                assert_eq!(run.code, 0, "{}", run.dump());
                let r = run.json();
                assert_eq!(r["router"]["kind"], "semantic");
                assert!(
                    r["router"]["model"].as_str().unwrap().ends_with("@hybrid4"),
                    "{}",
                    r["router"]["model"]
                );
                assert_eq!(r["routing"]["summary"]["n_cases"], cases, "{suite}");
                let correct = r["routing"]["base_outcomes"]["correct"].as_u64().unwrap();
                (suite, correct, floor)
            })
        })
        .collect();
    let mut below = Vec::new();
    for run in runs {
        let (suite, correct, floor) = run.join().unwrap();
        eprintln!("{suite}: {correct} correct (floor {floor})");
        if correct < floor {
            below.push(format!("{suite}: {correct} < floor {floor}"));
        }
    }
    assert!(below.is_empty(), "the router lost cases: {below:?}");
}
