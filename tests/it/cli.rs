//! The CLI as a user meets it: output pinned with snapshots, exit codes, errors, git revisions,
//! lockfiles.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::cli;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Run driftgate in `dir` with this binary's cache; returns (exit code, stdout, stderr).
fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    cli::driftgate(args)
        .dir(dir)
        .cache(cache_dir())
        .run()
        .parts()
}

/// One cache for the whole test binary, outside the source tree.
fn cache_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .to_path_buf()
}

fn corpus_dir() -> PathBuf {
    fixture("corpus")
}

#[test]
fn diff_terminal_rewrite_crosses_the_cosine_floor() {
    let (code, out, _) = run(
        &corpus_dir(),
        &[
            "diff",
            "server-filesystem/2025.7.1.json",
            "server-filesystem/2025.7.29.json",
        ],
    );
    assert_eq!(code, 1, "read_file's rewrite moved its meaning below 0.92");
    assert!(out.contains("`read_file` description cosine"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn diff_terminal_destructive_flip_fails() {
    let (code, out, _) = run(
        &corpus_dir(),
        &[
            "diff",
            "server-filesystem/2026.1.14.json",
            "server-filesystem/2026.7.4.json",
        ],
    );
    assert_eq!(code, 1);
    insta::assert_snapshot!(out);
}

#[test]
fn diff_fail_on_threshold_moves_the_verdict() {
    let args = [
        "diff",
        "server-filesystem/2025.7.1.json",
        "server-filesystem/2025.7.29.json",
        "--no-embed",
    ];
    let (code, _, _) = run(
        &corpus_dir(),
        &[&args[..], &["--fail-on", "unknown"]].concat(),
    );
    assert_eq!(code, 1, "description changes are `unknown`");
    let (code, _, _) = run(
        &corpus_dir(),
        &[&args[..], &["--fail-on", "breaking"]].concat(),
    );
    assert_eq!(code, 0);
}

#[test]
fn diff_json_is_versioned_and_complete() {
    let (code, out, _) = run(
        &corpus_dir(),
        &[
            "diff",
            "context7-mcp/1.0.33.json",
            "context7-mcp/2.0.0.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "a rename is breaking");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["verdict"]["status"], "fail");
    assert_eq!(v["base"]["format"], "bare-array");
    insta::assert_json_snapshot!(v, {".driftgate_version" => "[version]"});
}

#[test]
fn report_files_are_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.txt");
    let json = dir.path().join("r.json");
    let (code, stdout, _) = run(
        &corpus_dir(),
        &[
            "diff",
            "server-filesystem/2026.1.14.json",
            "server-filesystem/2026.7.4.json",
            "-o",
            out.to_str().unwrap(),
            "--json-out",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    assert!(std::fs::read_to_string(&out).unwrap().contains("move_file"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["diff"]["tools"][0]["name"], "move_file");
    // No temporary files left behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn input_errors_exit_2_with_file_and_pointer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"tools":[{"name":"a"},{"name":"b","inputSchema":[]}]}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.json"), "{\n  \"tools\": [\n").unwrap();
    std::fs::write(dir.path().join("ok.json"), "[]").unwrap();
    let (code, _, err) = run(dir.path(), &["diff", "bad.json", "ok.json"]);
    assert_eq!(
        (code, err.trim()),
        (
            2,
            "error: bad.json: /tools/1/inputSchema: expected object, found array"
        )
    );
    let (code, _, err) = run(dir.path(), &["diff", "ok.json", "broken.json"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: broken.json: invalid JSON at line 3"),
        "{err}"
    );
    let (code, _, err) = run(dir.path(), &["diff", "ok.json", "missing.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.json"), "{err}");
    let (code, _, err) = run(dir.path(), &["diff", "ok.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing head tool set"), "{err}");
    let (code, _, _) = run(dir.path(), &["diff", "--no-such-flag"]);
    assert_eq!(code, 2, "clap usage errors are exit 2");
}

#[test]
fn help_documents_exit_codes() {
    let (code, out, _) = run(Path::new("."), &["diff", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("3  incomplete"), "{out}");
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[test]
fn git_revisions_are_read_without_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    std::fs::create_dir(d.join("mcp")).unwrap();
    let path = d.join("mcp/tools.json");
    std::fs::copy(corpus_dir().join("server-filesystem/2026.1.14.json"), &path).unwrap();
    git(d, &["add", "."]);
    git(d, &["commit", "-qm", "base"]);
    std::fs::copy(corpus_dir().join("server-filesystem/2026.7.4.json"), &path).unwrap();
    git(d, &["commit", "-qam", "head"]);
    // REV:PATH on both sides.
    let (code, out, err) = run(d, &["diff", "HEAD~1:mcp/tools.json", "HEAD:mcp/tools.json"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("move_file") && out.contains("base: HEAD~1:mcp/tools.json"),
        "{out}"
    );
    // --tools with --base-ref, head from the working tree, run from a subdirectory.
    let (code, out, _) = run(
        &d.join("mcp"),
        &["diff", "--tools", "tools.json", "--base-ref", "HEAD~1"],
    );
    assert_eq!(code, 1);
    assert!(out.contains("annotation-safety-flipped"));
    // The PR base comes from the GitHub event when --base-ref is absent.
    let event = d.join("event.json");
    let base_sha = String::from_utf8(
        Command::new("git")
            .current_dir(d)
            .args(["rev-parse", "HEAD~1"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    std::fs::write(
        &event,
        serde_json::json!({"pull_request":{"base":{"sha":base_sha.trim()}}}).to_string(),
    )
    .unwrap();
    let out = cli::driftgate(["diff", "--tools", "mcp/tools.json", "--format", "json"])
        .dir(d)
        .env("GITHUB_EVENT_PATH", &event)
        .run();
    assert_eq!(out.code, 1);
    // Unknown revision and missing path: exit 2, git's reason included.
    let (code, _, err) = run(d, &["diff", "nosuchrev:mcp/tools.json", "mcp/tools.json"]);
    assert_eq!(code, 2);
    // The policy (driftgate.toml) is read at the base revision first: the bad revision is named.
    assert!(
        err.contains("nosuchrev:driftgate.toml: \"nosuchrev\" is not a commit of this repository"),
        "{err}"
    );
    let (code, _, err) = run(d, &["diff", "--tools", "mcp/tools.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("--base-ref"), "{err}");
}

#[test]
fn lock_is_stable_verifiable_and_diffable() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = corpus_dir().join("server-filesystem/2026.1.14.json");
    let (code, _, err) = run(d, &["lock", src.to_str().unwrap(), "-o", "a.lock.json"]);
    assert_eq!(code, 0, "{err}");
    let first = std::fs::read(d.join("a.lock.json")).unwrap();
    // Same tools again: identical bytes.
    let (code, _, _) = run(d, &["lock", src.to_str().unwrap(), "-o", "a.lock.json"]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(d.join("a.lock.json")).unwrap(), first);
    // The lockfile is itself a loader input: locked vs raw are equal.
    let (code, out, _) = run(d, &["diff", "a.lock.json", src.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("No changes (14 tools unchanged)"), "{out}");
    // --check: up to date vs stale.
    let (code, _, err) = run(
        d,
        &[
            "lock",
            src.to_str().unwrap(),
            "-o",
            "a.lock.json",
            "--check",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let newer = corpus_dir().join("server-filesystem/2026.7.4.json");
    let (code, _, err) = run(
        d,
        &[
            "lock",
            newer.to_str().unwrap(),
            "-o",
            "a.lock.json",
            "--check",
        ],
    );
    assert_eq!(code, 1);
    assert!(err.contains("stale") && err.contains("move_file"), "{err}");
    // Hand-edited lockfile: exit 2 naming the pointer.
    let text = String::from_utf8(first)
        .unwrap()
        .replacen("Move or rename", "Move", 1);
    std::fs::write(d.join("edited.lock.json"), text).unwrap();
    let (code, _, err) = run(d, &["diff", "edited.lock.json", src.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("/hashes/definition: hash does not match the definition of \"move_file\""),
        "{err}"
    );
    insta::assert_snapshot!(
        std::fs::read_to_string(d.join("a.lock.json"))
            .unwrap()
            .lines()
            .take(40)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// github-mcp-server shipped `"inputSchema": null` for a no-argument tool (the evidence bench's
/// history): the gate runs, reads it as taking no arguments and says so, instead of refusing the
/// whole PR (exit 2).
#[test]
fn a_null_input_schema_is_a_warning_not_a_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("base.json"),
        r#"{"tools": [{"name": "get_me", "description": "Get my user.", "inputSchema": {"type": "object"}}]}"#,
    )
    .unwrap();
    std::fs::write(
        d.join("head.json"),
        r#"{"tools": [{"name": "get_me", "description": "Get my user.", "inputSchema": null}]}"#,
    )
    .unwrap();
    let run = cli::driftgate([
        "diff",
        "base.json",
        "head.json",
        "--no-embed",
        "--format",
        "json",
    ])
    .dir(d)
    .run();
    assert_eq!(run.code, 0, "{}", run.dump());
    let r = run.json();
    assert_eq!(
        r["diff"]["tools"].as_array().map_or(0, Vec::len),
        0,
        "{}",
        r["diff"]
    );
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .contains("tool \"get_me\" (/tools/0/inputSchema) has \"inputSchema\": null"),
        "{}",
        r["notes"]
    );
}
