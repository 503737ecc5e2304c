//! The real corpus: every captured `tools/list` of published MCP servers loads, every consecutive
//! pair (in release order, as INDEX.md lists it) diffs and renders without a panic, and the real
//! changes the INDEX names are found.

use std::path::{Path, PathBuf};

use driftgate::diff::{self, Diff, Status};
use driftgate::report::render;
use driftgate::source::live::LiveOptions;
use driftgate::source::{Loaded, Spec, load};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/corpus")
}

/// (server, versions in release order) from INDEX.md's server table.
fn release_order() -> Vec<(String, Vec<String>)> {
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
            .map(|v| v.split(':').next().unwrap().to_string())
            .collect();
        out.push((cols[1].to_string(), versions));
    }
    out
}

fn load_version(server: &str, version: &str) -> Loaded {
    let path = corpus().join(server).join(format!("{version}.json"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(load(&Spec::File(path.clone()), &LiveOptions::default()))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn pair(server: &str, a: &str, b: &str) -> Diff {
    diff::diff(
        &load_version(server, a).tools,
        &load_version(server, b).tools,
    )
}

#[test]
fn every_capture_loads_and_every_consecutive_pair_diffs_and_renders() {
    let order = release_order();
    assert!(order.len() >= 20, "INDEX lists {} servers", order.len());
    let mut files = 0;
    let mut pairs = 0;
    for (server, versions) in &order {
        let present: Vec<&String> = versions
            .iter()
            .filter(|v| corpus().join(server).join(format!("{v}.json")).exists())
            .collect();
        let loaded: Vec<Loaded> = present.iter().map(|v| load_version(server, v)).collect();
        files += loaded.len();
        for w in loaded.windows(2) {
            let r =
                driftgate::job::check::diff_report(&w[0], &w[1], driftgate::diff::Severity::High);
            for fmt in [render::Format::Terminal, render::Format::Json] {
                for color in [false, true] {
                    assert!(!render::render(&r, fmt, &render::Options { color }).is_empty());
                }
            }
            pairs += 1;
        }
    }
    // Every capture on disk is in the release order (nothing silently skipped).
    let on_disk = walk_json(&corpus());
    assert_eq!(files, on_disk, "captures on disk vs in INDEX order");
    assert!(pairs >= 100, "{pairs} pairs");
}

fn walk_json(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            if p.is_dir() {
                walk_json(&p)
            } else {
                usize::from(p.extension().is_some_and(|e| e == "json"))
            }
        })
        .sum()
}

fn rules_of<'a>(d: &'a Diff, tool: &str) -> Vec<&'a str> {
    d.tools
        .iter()
        .filter(|t| t.name == tool)
        .flat_map(|t| t.changes.iter().map(|c| c.rule.as_str()))
        .collect()
}

#[test]
fn filesystem_read_file_rewrite_and_new_tools() {
    let d = pair("server-filesystem", "2025.7.1", "2025.7.29");
    // read_file was deprecated ("DEPRECATED: Use read_text_file instead"): its words moved (the
    // calibration labels this change meaning-changing).
    let read_file = d.tools.iter().find(|t| t.name == "read_file").unwrap();
    let c = read_file
        .changes
        .iter()
        .find(|c| c.pointer == "/description")
        .unwrap();
    assert_eq!(c.rule, "description-meaning-changed", "{}", c.message);
    for added in ["read_text_file", "read_media_file"] {
        let t = d.tools.iter().find(|t| t.name == added).unwrap();
        assert_eq!(t.status, Status::Added, "{added}");
    }
}

#[test]
fn filesystem_move_file_turns_destructive() {
    let d = pair("server-filesystem", "2026.1.14", "2026.7.4");
    let t = d.tools.iter().find(|t| t.name == "move_file").unwrap();
    let c = &t.changes[0];
    assert_eq!(c.rule, "annotation-safety-flipped");
    assert_eq!(c.pointer, "/annotations/destructiveHint");
    assert_eq!(
        (c.before.clone(), c.after.clone()),
        (Some(false.into()), Some(true.into()))
    );
    assert_eq!(d.tools.len(), 1, "only move_file changed");
    // Most severe first: this is the first thing every report shows.
    assert_eq!(d.tools[0].name, "move_file");
}

#[test]
fn context7_get_library_docs_replaced_by_query_docs() {
    let d = pair("context7-mcp", "1.0.33", "2.0.0");
    let t = d.tools.iter().find(|t| t.name == "query-docs").unwrap();
    assert_eq!(t.status, Status::Renamed);
    assert_eq!(t.base_name.as_deref(), Some("get-library-docs"));
    assert!(t.rename_score.unwrap() >= diff::RENAME_THRESHOLD);
    assert!(t.changes.iter().any(|c| c.rule == "property-removed"));
}

#[test]
fn sqlite_kebab_to_snake_is_six_renames() {
    let d = pair("mcp-server-sqlite", "0.6.2", "2025.1.14");
    assert_eq!(d.tools.len(), 6);
    assert!(
        d.tools
            .iter()
            .all(|t| t.status == Status::Renamed && t.rename_score == Some(1.0))
    );
}

#[test]
fn filesystem_sdk_upgrade_opens_additional_properties_and_declares_annotations() {
    let d = pair("server-filesystem", "2025.8.21", "2025.11.25");
    let r = rules_of(&d, "read_file");
    assert!(r.contains(&"additional-properties-opened"), "{r:?}");
    assert!(r.contains(&"annotations-declared"), "{r:?}");
    assert!(r.contains(&"output-schema-added"), "{r:?}");
    assert!(r.contains(&"other-field-changed"), "{r:?}"); // `execution`, a field outside the spec's list
}

#[test]
fn unchanged_versions_have_no_changes() {
    let d = pair("server-filesystem", "2025.11.25", "2025.12.18");
    assert!(d.tools.is_empty());
    assert_eq!(d.unchanged, 14);
}

/// Calibration aid: `cargo test --test it corpus::rename_scores -- --ignored --nocapture`.
#[test]
#[ignore]
fn rename_scores() {
    for (server, versions) in release_order() {
        let present: Vec<String> = versions
            .into_iter()
            .filter(|v| corpus().join(&server).join(format!("{v}.json")).exists())
            .collect();
        for w in present.windows(2) {
            let (a, b) = (
                load_version(&server, &w[0]).tools,
                load_version(&server, &w[1]).tools,
            );
            for r in a.tools.iter().filter(|t| b.get(&t.name).is_none()) {
                for n in b.tools.iter().filter(|t| a.get(&t.name).is_none()) {
                    println!(
                        "{:.3} {server} {} {} -> {}",
                        diff::rename_score(r, n),
                        w[1],
                        r.name,
                        n.name
                    );
                }
            }
        }
    }
}
