//! `driftgate embed` with the bundled model works with no network, no home directory, no model
//! files on disk: everything it needs is inside the binary.

use std::process::{Command, Stdio};

use driftgate::embed::cosine;
use ndarray::ArrayView1;

use crate::support::{calendar, cli};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/embeddings");

/// Where the kernel lets us (root or user namespaces), also drop the network interfaces entirely.
fn no_network_wrapper() -> Option<&'static str> {
    let ok = Command::new("unshare")
        .args(["--net", "--", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some("unshare")
}

#[test]
fn embeds_offline_from_a_bare_directory() {
    let texts = std::fs::read_to_string(format!("{FIXTURES}/texts100.txt")).unwrap();
    let reference: Vec<Vec<f32>> =
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/ref100.json")).unwrap())
            .unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let mut cmd = cli::driftgate(["embed"]);
    match no_network_wrapper() {
        Some(w) => cmd = cmd.wrapped_in(w, ["--net", "--"]),
        None => eprintln!("unshare --net unavailable: relying on dead proxies only"),
    }
    let out = cmd
        .dir(cwd.path())
        .bare()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("ALL_PROXY", "http://127.0.0.1:9")
        .env("HOME", cwd.path().join("no-such-home"))
        .env("HF_HUB_OFFLINE", "1")
        .stdin(texts)
        .run();
    assert!(out.code == 0, "{}", out.stderr);
    let ours: Vec<Vec<f32>> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(ours.len(), 100);
    for (i, (o, r)) in ours.iter().zip(&reference).enumerate() {
        let c = cosine(ArrayView1::from(o), ArrayView1::from(r));
        assert!(c >= 0.9999, "text {i}: cosine {c}");
    }
    // Nothing was written or fetched into the working directory.
    assert_eq!(std::fs::read_dir(cwd.path()).unwrap().count(), 0);
}

#[test]
fn openai_without_model_is_a_usage_error() {
    let out = cli::driftgate(["embed", "--embedder", "openai"]).run();
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--embed-model"));
}

/// A reader that has gone (`driftgate embed | head -c1` after head exits) ends the run quietly
/// with its own exit code, as ripgrep does, rather than with Rust's broken-pipe panic (101).
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let mut cmd = cli::driftgate(["embed"]).command();
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    // The read end is closed before driftgate writes anything.
    drop(child.stdout.take());
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"read a file\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// `--json-lines` reads a text with line breaks as one text (the same vector as the text embedded
/// with its breaks as spaces would not be), and a line that is not a JSON string is exit 2 with
/// its line number, nothing printed.
#[test]
fn json_lines_keep_a_text_with_line_breaks_whole() {
    let input = "\"one\\ntext\"\n\"two\"\n";
    let out = cli::driftgate(["embed", "--json-lines"]).stdin(input).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: Vec<Vec<f32>> = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(rows.len(), 2);
    let plain = cli::driftgate(["embed"]).stdin("one\ntext\ntwo\n").run();
    let split: Vec<Vec<f32>> = serde_json::from_str(&plain.stdout).unwrap();
    assert_eq!(
        split.len(),
        3,
        "without the flag a line break splits the text"
    );
    assert_eq!(rows[1], split[2]);

    let bad = cli::driftgate(["embed", "--json-lines"])
        .stdin("\"fine\"\nnot json\n")
        .run();
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .contains("<stdin>: line 2: expected one JSON string (--json-lines)"),
        "{}",
        bad.stderr
    );
    assert_eq!(bad.stdout, "");
}

/// `check --embedded-texts FILE` writes the texts the run had the model embed, each once, one
/// JSON string a line, sorted: what bench/check_embed.sh times alone as the floor. With no disk
/// cache they are the run's distinct texts.
#[test]
fn check_writes_the_distinct_texts_it_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("texts.jsonl");
    let out = cli::driftgate(calendar::check_from_anywhere(&[
        "--no-cache",
        "--verbose",
        "--embedded-texts",
        file.to_str().unwrap(),
    ]))
    .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    let texts: Vec<String> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let distinct: usize = out
        .stderr
        .split("text(s) asked, ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("--verbose counts the distinct texts");
    assert_eq!(texts.len(), distinct);
    let mut sorted = texts.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, texts);
    assert!(
        texts.iter().any(|t| t.starts_with("Schedule")),
        "the tools' descriptions are among them"
    );
}

/// A check knows every text it will embed before it measures (drift's, lint's, the semantic
/// router's at both sides): the model is called once over all of them, not once per stage
/// (four calls on playwright-mcp before; issue 41's distinct-text floor). A stage that embeds a
/// text the up-front call missed shows here as a second call.
#[test]
fn check_calls_the_model_once_for_every_text_it_embeds() {
    let root = env!("CARGO_MANIFEST_DIR");
    let cal = |f: &str| format!("{root}/examples/calendar/{f}");
    let pw = |v: &str| format!("{root}/tests/fixtures/corpus/playwright-mcp/{v}.json");
    for (base, head, suite) in [
        (
            cal("tools.base.json"),
            cal("tools.head.json"),
            cal("suite.yaml"),
        ),
        (
            pw("0.0.76"),
            pw("0.0.83"),
            format!("{root}/bench/suites/playwright-mcp.suite.jsonl"),
        ),
    ] {
        let out = cli::driftgate([
            "check",
            "--base",
            &base,
            "--head",
            &head,
            "--suite",
            &suite,
            "--no-cache",
            "--verbose",
        ])
        .run();
        assert_eq!(out.code, 1, "{}", out.stderr);
        let line = out
            .stderr
            .lines()
            .find(|l| l.starts_with("embeddings:"))
            .expect("--verbose counts the embeddings");
        assert!(
            line.contains("(its load included; 1 call(s))"),
            "{base}: {line}"
        );
    }
}
