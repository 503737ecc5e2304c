//! `driftgate embed` with the bundled model works with no network, no home directory, no model
//! files on disk: everything it needs is inside the binary.

use std::process::{Command, Stdio};

use driftgate::embed::cosine;
use ndarray::ArrayView1;

use crate::support::cli;

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
