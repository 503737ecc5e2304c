//! `driftgate lock` against a real MCP server from npm (installed by `.ci/npm-servers.sh`; the
//! tests that need it are `#[ignore]`d, keeping `cargo test` hermetic; asked for with
//! `-- --include-ignored` and DRIFTGATE_NPM_DIR unset, they fail).

mod common;

use std::path::PathBuf;

use common::cli;

fn memory_server() -> String {
    let dir = common::need(
        "DRIFTGATE_NPM_DIR",
        "run `eval \"$(bash .ci/npm-servers.sh)\"`",
    );
    let js =
        PathBuf::from(dir).join("node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    assert!(js.exists(), "{} missing", js.display());
    format!("node {}", js.display())
}

#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[test]
fn locks_a_live_server_with_stable_bytes_and_diffs_it() {
    let cmd = memory_server();
    let dir = tempfile::tempdir().unwrap();
    let memfile = dir.path().join("memory.jsonl");
    let lock = |out: &str| {
        let o = cli::driftgate(["lock", "--server-cmd", &cmd, "--server-env"])
            .args([format!("MEMORY_FILE_PATH={}", memfile.display())])
            .args(["-o", out, "--timeout", "60"])
            .dir(dir.path())
            .run();
        assert_eq!(o.code, 0, "{}", o.stderr);
        std::fs::read_to_string(dir.path().join(out)).unwrap()
    };
    let a = lock("a.lock.json");
    let b = lock("b.lock.json");
    assert_eq!(a, b, "re-locking the same server must give identical bytes");
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["tool_count"], 9);
    assert_eq!(v["server"]["name"], "memory-server");
    assert!(a.contains("\"name\": \"create_entities\""));
    // The server itself, diffed live against its own lockfile: nothing changed.
    let o = cli::driftgate(["diff", "a.lock.json", "--head-server-cmd", &cmd])
        .dir(dir.path())
        .run();
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("No changes (9 tools unchanged)"));
}

#[test]
fn a_dead_server_is_incomplete_exit_3() {
    let o = cli::driftgate([
        "lock",
        "--server-cmd",
        "sh -c 'echo cannot-start >&2; exit 7'",
    ])
    .run();
    assert_eq!(o.code, 3);
    let err = &o.stderr;
    assert!(err.contains("cannot-start"), "{err}");
}

/// The PR's server runs with what it needs, not the job's secrets: a variable of ours reaches it
/// only when `--server-env` names it or `--server-inherit-env` says so.
#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[test]
fn the_job_environment_reaches_the_server_only_when_named() {
    let dir = common::need(
        "DRIFTGATE_NPM_DIR",
        "run `eval \"$(bash .ci/npm-servers.sh)\"`",
    );
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/live/paginated-server.mjs");
    let cmd = format!("node '{}' '{dir}'", script.display());
    let echo = |extra: &[&str]| {
        let o = cli::driftgate(["lock", "--server-cmd", &cmd, "--timeout", "60"])
            .args(extra)
            .env("FIXTURE_ECHO", "job-secret-0123456789")
            .run();
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        let tool = v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "echo_env")
            .expect("echo_env")
            .clone();
        tool["definition"]["description"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(echo(&[]), "Echo: <unset>");
    assert_eq!(
        echo(&["--server-env", "FIXTURE_ECHO"]),
        "Echo: job-secret-0123456789"
    );
    assert_eq!(
        echo(&["--server-inherit-env"]),
        "Echo: job-secret-0123456789"
    );
}
