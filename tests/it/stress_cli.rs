//! `driftgate stress`, `suite init` and `suite check` as a user runs them, on the real
//! server-filesystem corpus and the calendar example with the offline semantic router. Hermetic:
//! no server, no key, no network.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{calendar, cli};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const FS_TOOLS: &str = "tests/fixtures/corpus/server-filesystem/2025.7.29.json";
const FS_SUITE: &str = "tests/fixtures/server-filesystem.suite.jsonl";

/// One cache for the whole test binary, outside the source tree.
fn cache_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .to_path_buf()
}

/// Run driftgate in `dir`; returns (exit code, stdout, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    cli::driftgate(args)
        .dir(dir)
        .cache(cache_dir())
        .run()
        .parts()
}

fn run(args: &[&str]) -> (i32, String, String) {
    run_in(&root(), args)
}

fn result<'a>(report: &'a Value, tool: &str, id: &str) -> &'a Value {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"))["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no result {id} for {tool}"))
}

fn flips(r: &Value) -> Vec<(String, String, String)> {
    r["flips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap().to_string(),
                f["direction"].as_str().unwrap().to_string(),
                f["head"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn stress_server_filesystem_measures_each_edit_and_lists_the_flips() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("table.md");
    let (code, out, err) = run(&[
        "stress",
        "--tools",
        FS_TOOLS,
        "--suite",
        FS_SUITE,
        "--tool",
        "write_file",
        "--tool",
        "read_text_file",
        "--format",
        "json",
        "--json-out",
        md.with_extension("json").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["command"], "stress");
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["router"]["kind"], "semantic");
    assert_eq!(
        (r["base"]["correct"].as_u64(), r["base"]["cases"].as_u64()),
        (Some(32), Some(40))
    );
    let ids: Vec<&str> = r["perturbations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "terser",
            "jargonier",
            "reordered",
            "inverted",
            "optional-param"
        ]
    );
    // Base once; write_file: 4 edits apply (inverted cannot: `read_file` exists and "overwrite"
    // is one word); read_text_file: all 5.
    assert_eq!(r["cost"]["replays"], 10);
    assert!(
        !result(&r, "write_file", "inverted")["applied"]
            .as_bool()
            .unwrap()
    );

    // "create" → "provision", "file" → "blob" sends "Create a file hello.py …" to
    // create_directory and a whole-file replace to edit_file.
    let j = result(&r, "write_file", "jargonier");
    assert_eq!(
        j["detail"],
        "\"create\" → \"provision\", \"file\" → \"blob\""
    );
    assert_eq!(
        flips(j),
        [
            (
                "fs-11".into(),
                "regressed".into(),
                "create_directory".into()
            ),
            ("fs-35".into(), "regressed".into(), "edit_file".into())
        ]
    );
    assert_eq!(j["regressed"], 2);

    // read → write renames read_text_file to write_text_file. Read prompts that still reach it
    // are judged by implementation (still right); one read prompt leaves it, so the router felt
    // the inversion a little: sensitivity 1 of its 7 own cases right unperturbed. (hybrid2 felt
    // nothing here: every read prompt stayed.)
    let inv = result(&r, "read_text_file", "inverted");
    assert_eq!(inv["changes_meaning"], true);
    assert_eq!(inv["renamed_to"], "write_text_file");
    assert!(
        inv["description"]
            .as_str()
            .unwrap()
            .starts_with("Write the complete contents")
    );
    assert_eq!(
        flips(inv),
        [("fs-31".into(), "regressed".into(), "get_file_info".into())]
    );
    let read = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "read_text_file")
        .unwrap();
    assert_eq!(read["own_right_at_base"], 7);
    assert!(
        (read["sensitivity"].as_f64().unwrap() - 1.0 / 7.0).abs() < 1e-12,
        "{read}"
    );
    assert_eq!(
        read["fragility"], 0.0,
        "no harmless edit broke a read prompt"
    );
    assert!(r["notes"].as_array().unwrap().is_empty(), "{}", r["notes"]);

    let t = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "write_file")
        .unwrap();
    assert_eq!(t["worst"], "jargonier");
    assert_eq!(t["own_cases"], 3);
    // 4 applied harmless edits, 2 regressions under one, 3 own cases right at base → (2/3) / 4;
    // the meaning change (inverted) did not apply, so there is no sensitivity.
    assert_eq!(t["own_right_at_base"], 3);
    assert!(
        (t["fragility"].as_f64().unwrap() - 1.0 / 6.0).abs() < 1e-12,
        "{t}"
    );
    assert!(t.get("sensitivity").is_none(), "{t}");
    // --json-out writes the same document.
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(md.with_extension("json")).unwrap()).unwrap();
    assert_eq!(again, r);
}

#[test]
fn stress_renders_terminal_and_markdown_from_one_report() {
    let args = [
        "stress",
        "--tools",
        calendar::BASE,
        "--suite",
        calendar::SUITE,
        "--tool",
        "schedule_appointment",
    ];
    let (code, term, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        term.starts_with("driftgate stress: done — 1 tool(s) × 5 perturbation(s), 5 replays"),
        "{term}"
    );
    assert!(
        term.contains("unperturbed accuracy: 83.3% (30/36 cases)"),
        "{term}"
    );
    let row = term
        .lines()
        .find(|l| l.starts_with("schedule_appointment"))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "schedule_appointment",
            "8",
            "·",
            "-8.3",
            "-5.6",
            "-2.8",
            "-8.3",
            "jargonier",
            "0.38",
            "0.14"
        ]
    );
    // schedule → reschedule in the description; the name stays (the sibling owns it).
    assert!(term.contains("schedule_appointment × inverted (-2.8 pts; 1 regressed, 0 fixed): \"schedule\" → \"reschedule\"; name kept (`reschedule_appointment` exists)"), "{term}");
    assert!(term.contains("✗ sched-06"), "{term}");
    assert!(
        err.contains(
            "driftgate: stress: schedule_appointment: 4 edit(s) applied, fragility 0.38, sensitivity 0.14"
        ),
        "{err}"
    );

    let mut md_args = args.to_vec();
    md_args.extend(["--format", "markdown"]);
    let (code, md, _) = run(&md_args);
    assert_eq!(code, 0);
    assert!(md.contains("| tool | cases | `terser` | `jargonier` | `reordered` | `inverted` | `optional-param` | worst | fragility | sensitivity |"), "{md}");
    assert!(
        md.contains(
            "| `schedule_appointment` | 8 | · | -8.3 | -5.6 | -2.8 | -8.3 | `jargonier` | 0.38 | 0.14 |"
        ),
        "{md}"
    );
    assert!(
        md.contains("- `inverted` (changes meaning: counts towards sensitivity): "),
        "{md}"
    );
    assert!(
        md.contains("| `schedule_appointment` × `inverted` |"),
        "{md}"
    );
}

#[test]
fn stress_options_are_validated() {
    let (code, _, err) = run(&[
        "stress",
        "--tools",
        FS_TOOLS,
        "--suite",
        FS_SUITE,
        "--perturb",
        "shorter",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--perturb shorter: unknown perturbation (known: terser, jargonier, reordered, inverted, optional-param)"), "{err}");
    let (code, _, err) = run(&[
        "stress", "--tools", FS_TOOLS, "--suite", FS_SUITE, "--tool", "rm_rf",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--tool rm_rf: no such tool"), "{err}");
    let (code, _, err) = run(&[
        "stress",
        "--tools",
        FS_TOOLS,
        "--suite",
        FS_SUITE,
        "--llm-paraphrase",
        "2",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--llm-paraphrase needs a model"), "{err}");
}

#[test]
fn stress_uses_a_custom_jargon_table() {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("jargon.yaml");
    std::fs::write(&table, "directory: realm\n").unwrap();
    let (code, out, err) = run(&[
        "stress",
        "--tools",
        FS_TOOLS,
        "--suite",
        FS_SUITE,
        "--tool",
        "create_directory",
        "--perturb",
        "jargonier",
        "--jargon",
        table.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let j = result(&r, "create_directory", "jargonier");
    assert_eq!(j["detail"], "\"directory\" → \"realm\"");
    assert!(
        j["description"]
            .as_str()
            .unwrap()
            .starts_with("Create a new realm or ensure a realm exists.")
    );
}

#[test]
fn suite_init_offline_drafts_a_reviewable_suite_that_passes_suite_check() {
    let dir = tempfile::tempdir().unwrap();
    let tools = root().join(FS_TOOLS);
    let out = dir.path().join("driftgate.suite.yaml");
    let args = [
        "suite",
        "init",
        "--tools",
        tools.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    let (code, _, err) = run_in(dir.path(), &args);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("review it, then freeze it"), "{err}");
    // The drafts are worded as requests, not restated descriptions: before the intent templates
    // a drafted prompt shared 66% of its words with its tool's description here.
    let loaded = driftgate::source::parse_text(&std::fs::read_to_string(&tools).unwrap(), "t")
        .unwrap()
        .0;
    let parsed = driftgate::suite::load(&out).unwrap();
    let o = driftgate::suite::check::description_overlap(&parsed.cases, &loaded).unwrap();
    assert!(o.mean < 0.45, "{o:?}");
    assert!(
        err.contains(&format!(
            "wording: a drafted prompt shares {:.0}% of its words with its tool's description on average ({} of {} at 50% or more)",
            o.mean * 100.0,
            o.echoing,
            o.cases
        )),
        "{err}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("# driftgate routing suite: DRAFT written by `driftgate suite init`.")
    );
    assert!(text.contains("# Review, then freeze:"));
    assert!(text.contains("3. Freeze it: commit it"));
    let suite = driftgate::suite::load(&out).unwrap();
    // Three per tool (fewer only where siblings share an opening sentence), four `none`.
    let per_tool = |name: &str| {
        suite
            .cases
            .iter()
            .filter(|c| c.expect.names() == [name])
            .count()
    };
    for t in [
        "read_text_file",
        "write_file",
        "edit_file",
        "move_file",
        "search_files",
    ] {
        assert_eq!(per_tool(t), 3, "{t}");
    }
    assert!(per_tool("list_directory") >= 1 && per_tool("list_directory_with_sizes") >= 1);
    let none = suite
        .cases
        .iter()
        .filter(|c| c.expect == driftgate::suite::Expect::None)
        .count();
    assert_eq!(none, 4);
    assert!(
        suite
            .cases
            .iter()
            .any(|c| c.tags.contains(&"sibling".to_string()))
    );
    assert!(suite.cases.iter().all(|c| {
        c.id.starts_with(c.expect.names().first().map_or("none", |s| s.as_str()))
    }));

    // A drafted suite is an instrument: no silent overwrite; --force redrafts the same bytes.
    let (code, _, err) = run_in(dir.path(), &args);
    assert_eq!(code, 2);
    assert!(
        err.contains("exists; a suite is a frozen instrument"),
        "{err}"
    );
    let mut forced = args.to_vec();
    forced.push("--force");
    assert_eq!(run_in(dir.path(), &forced).0, 0);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);

    let (code, report, _) = run(&["suite", "check", "--tools", FS_TOOLS, out.to_str().unwrap()]);
    assert_eq!(code, 0, "{report}");
    assert!(
        report.starts_with("driftgate suite check: OK — 0 error(s)"),
        "{report}"
    );

    // JSONL when the file name says so.
    let jl = dir.path().join("s.jsonl");
    let (code, _, err) = run_in(
        dir.path(),
        &[
            "suite",
            "init",
            "--tools",
            tools.to_str().unwrap(),
            "-o",
            jl.to_str().unwrap(),
            "--per-tool",
            "1",
            "--none",
            "1",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let s = driftgate::suite::load(&jl).unwrap();
    assert_eq!(s.cases.len(), 15);
}

#[test]
fn suite_check_lists_every_problem_and_sets_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "version: 1\ncases:\n  - {id: a, prompt: read x, expect: read_fle}\n  - {id: a, prompt: write x, expect: write_file}\n  - {id: b, prompt: hi, expect: none}\n",
    )
    .unwrap();
    let (code, out, _) = run(&[
        "suite",
        "check",
        "--tools",
        FS_TOOLS,
        bad.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["errors"], 2);
    let codes: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes[..2], ["duplicate-id", "unsatisfiable"]);
    assert!(
        codes[2..].iter().all(|c| *c == "uncovered-tool"),
        "{codes:?}"
    );
    assert!(
        r["findings"][1]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `read_file`?")
    );

    // The shipped suite passes (warnings only: it has no `none` case).
    let (code, out, _) = run(&["suite", "check", "--tools", FS_TOOLS, FS_SUITE]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("0 error(s)") && out.contains("[no-none-case]"),
        "{out}"
    );

    // Unreadable input is a usage error, not a failed check.
    let (code, _, err) = run(&["suite", "check", "--tools", "missing.json", FS_SUITE]);
    assert_eq!(code, 2, "{err}");
}
