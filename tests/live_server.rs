//! The live loader against real MCP servers and real failing commands.
//!
//! Tests that need Node servers read `DRIFTGATE_NPM_DIR` (set it with
//! `eval "$(bash .ci/npm-servers.sh)"`) and are `#[ignore]`d, so `cargo test` on a fresh machine
//! stays hermetic; asked for (`-- --include-ignored`) without it, they fail. The failure-path tests need only `sh`
//! and `sleep`, and always run.
#![cfg(unix)]

mod common;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use driftgate::Error;
use driftgate::source::live::{LiveCapture, LiveOptions, list_tools_http, list_tools_stdio};
use serde_json::json;

fn npm_dir() -> PathBuf {
    PathBuf::from(common::need(
        "DRIFTGATE_NPM_DIR",
        "run `eval \"$(bash .ci/npm-servers.sh)\"`",
    ))
}

fn package_entry(npm: &Path, package: &str) -> String {
    let path = npm
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(
        path.is_file(),
        "{} is missing; rerun .ci/npm-servers.sh",
        path.display()
    );
    path.display().to_string()
}

fn fixture_command(npm: &Path) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/live/paginated-server.mjs");
    shell_quote(&[
        "node",
        &script.display().to_string(),
        &npm.display().to_string(),
    ])
}

fn shell_quote(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The server gets PATH and HOME (what `app` passes by default) and `env`, nothing else.
fn opts(timeout_secs: u64, env: &[(&str, &str)]) -> LiveOptions {
    LiveOptions {
        timeout: Duration::from_secs(timeout_secs),
        base_env: std::env::vars()
            .filter(|(k, _)| k == "PATH" || k == "HOME")
            .collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..LiveOptions::default()
    }
}

fn names(capture: &LiveCapture) -> Vec<&str> {
    capture
        .tools
        .iter()
        .map(|t| t["name"].as_str().expect("tool name"))
        .collect()
}

fn incomplete(result: driftgate::Result<LiveCapture>) -> String {
    match result {
        Err(Error::Incomplete(message)) => message,
        other => panic!("expected Error::Incomplete, got {other:?}"),
    }
}

#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[tokio::test]
async fn stdio_memory_server_lists_its_nine_tools() {
    let npm = npm_dir();
    let data = tempfile::tempdir().unwrap();
    let memory_file = data.path().join("memory.jsonl");
    let cmd = shell_quote(&["node", &package_entry(&npm, "server-memory")]);
    let capture = list_tools_stdio(
        &cmd,
        &opts(60, &[("MEMORY_FILE_PATH", memory_file.to_str().unwrap())]),
    )
    .await
    .expect("server-memory answers");

    assert_eq!(
        names(&capture),
        [
            "create_entities",
            "create_relations",
            "add_observations",
            "delete_entities",
            "delete_observations",
            "delete_relations",
            "read_graph",
            "search_nodes",
            "open_nodes",
        ]
    );
    assert_eq!(capture.server_name.as_deref(), Some("memory-server"));
    assert!(capture.server_version.is_some());
    assert!(
        capture.protocol_version.starts_with("20"),
        "{}",
        capture.protocol_version
    );
    assert_eq!(capture.pages, 1);
    let create = &capture.tools[0];
    assert!(create["description"].as_str().unwrap().contains("entities"));
    assert_eq!(create["inputSchema"]["type"], "object");
    assert_eq!(create["inputSchema"]["required"], json!(["entities"]));
    assert!(
        !memory_file.exists(),
        "listing tools must not write the knowledge graph"
    );
}

/// A Node server started for one test, killed when the test ends however it ends.
struct Background(Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(server: &mut Background, port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = server.0.try_wait().unwrap() {
            panic!("server exited with {status} before listening on port {port}");
        }
        assert!(
            Instant::now() < deadline,
            "server never listened on port {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts `node <args…>` with `PORT`-style env and waits until it listens on `port`.
fn start_node(args: &[&str], env: &[(&str, &str)], port: u16) -> Background {
    let mut server = Background(
        Command::new("node")
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts"),
    );
    wait_for_port(&mut server, port);
    server
}

#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[tokio::test]
async fn http_everything_server_lists_its_tools() {
    let npm = npm_dir();
    let port = free_port();
    let _server = start_node(
        &[&package_entry(&npm, "server-everything"), "streamableHttp"],
        &[("PORT", &port.to_string())],
        port,
    );

    let url = format!("http://127.0.0.1:{port}/mcp");
    let capture = list_tools_http(&url, &opts(60, &[]))
        .await
        .expect("server-everything answers");
    let names = names(&capture);
    eprintln!("server-everything tools: {names:?}");
    assert_eq!(
        capture.server_name.as_deref(),
        Some("mcp-servers/everything")
    );
    assert_eq!(names.len(), EVERYTHING_TOOLS.len(), "{names:?}");
    assert_eq!(names, EVERYTHING_TOOLS);
    let echo = &capture.tools[0];
    assert_eq!(
        echo["inputSchema"]["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(capture.pages, 1);
}

/// What server-everything 2026.8.31 lists to a client that declares no capabilities
/// (`simulate-research-query` is registered only once the handshake completes).
const EVERYTHING_TOOLS: [&str; 13] = [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
];

#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[tokio::test]
async fn stdio_follows_next_cursor_and_keeps_unknown_fields() {
    let npm = npm_dir();
    let capture = list_tools_stdio(
        &fixture_command(&npm),
        &opts(60, &[("FIXTURE_ECHO", "passed-through")]),
    )
    .await
    .expect("fixture answers");

    assert_eq!(
        names(&capture),
        ["alpha", "beta", "gamma", "echo_env", "epsilon"]
    );
    assert_eq!(capture.pages, 3);
    assert_eq!(capture.server_name.as_deref(), Some("paginated-fixture"));
    assert_eq!(capture.server_version.as_deref(), Some("1.2.3"));
    // We offer the newest version with an `initialize` handshake; this SDK accepts it.
    assert_eq!(capture.protocol_version, "2025-11-25");
    let alpha = &capture.tools[0];
    assert_eq!(alpha["x-vendor"], json!({"tier": "gold", "rank": 1}));
    // Key order as sent, so canonicalisation downstream sees the server's own document.
    let keys: Vec<&String> = alpha.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["name", "description", "inputSchema", "x-vendor"]);
    let beta = &capture.tools[1];
    assert_eq!(beta["_meta"], json!({"com.example/owner": "team-b"}));
    assert_eq!(
        beta["annotations"],
        json!({"readOnlyHint": true, "x-cost": "cheap"})
    );
    assert_eq!(capture.tools[3]["description"], "Echo: passed-through");
    assert_eq!(capture.tools[4]["title"], "Fifth");
}

#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[tokio::test]
async fn stdio_server_that_crashes_on_tools_list_reports_stderr_without_secrets() {
    let npm = npm_dir();
    let secret = "sk-live-0123456789";
    let message = incomplete(
        list_tools_stdio(
            &fixture_command(&npm),
            &opts(60, &[("FIXTURE_MODE", "crash"), ("FIXTURE_ECHO", secret)]),
        )
        .await,
    );
    assert!(
        message.contains("exited with status 3 before answering tools/list"),
        "{message}"
    );
    assert!(
        message.contains("fixture: crashing on tools/list"),
        "{message}"
    );
    assert!(
        message.contains("echo=***"),
        "the fixture prints the secret; it is scrubbed: {message}"
    );
    assert!(!message.contains(secret), "{message}");
}

#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[tokio::test]
async fn stdio_server_repeating_its_cursor_is_stopped() {
    let npm = npm_dir();
    let message = incomplete(
        list_tools_stdio(
            &fixture_command(&npm),
            &opts(60, &[("FIXTURE_MODE", "loop")]),
        )
        .await,
    );
    assert!(
        message.contains("repeated tools/list cursor \"again\" after 2 pages"),
        "{message}"
    );
}

/// A tools/list line past the 16 MiB a JSON-RPC line may be is named at once, as input we
/// refuse (exit 2), not reported as a server that "did not answer" after the timeout.
#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[tokio::test]
async fn stdio_line_over_the_limit_is_named_not_a_timeout() {
    let npm = npm_dir();
    let started = Instant::now();
    let err = list_tools_stdio(
        &fixture_command(&npm),
        &opts(60, &[("FIXTURE_MODE", "huge")]),
    )
    .await
    .expect_err("a 17 MiB line is refused");
    assert_eq!(err.exit_code(), 2, "{err}");
    let message = err.to_string();
    assert!(
        message.contains("sent a message line of over 16 MiB during tools/list"),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "named at once, not after the 60 s timeout: {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn command_that_dies_reports_exit_status_and_stderr() {
    let cmd = r#"sh -c 'echo boom-secret-free >&2; echo "token=$DG_TOKEN" >&2; exit 1'"#;
    let started = Instant::now();
    let message =
        incomplete(list_tools_stdio(cmd, &opts(60, &[("DG_TOKEN", "t0k3n-value")])).await);
    assert!(
        message.contains("exited with status 1 before answering initialize"),
        "{message}"
    );
    assert!(
        message.contains("stderr:\nboom-secret-free\ntoken=***"),
        "{message}"
    );
    assert!(!message.contains("t0k3n-value"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn command_that_never_answers_times_out() {
    let started = Instant::now();
    let message = incomplete(list_tools_stdio("sleep 30", &opts(2, &[])).await);
    let elapsed = started.elapsed();
    assert!(
        message.contains("`sleep 30` did not answer initialize within 2s"),
        "{message}"
    );
    assert!(
        elapsed >= Duration::from_secs(2) && elapsed < Duration::from_millis(3500),
        "took {elapsed:?}"
    );
}

#[tokio::test]
async fn missing_or_malformed_command_is_a_usage_error() {
    for (cmd, expected) in [
        (
            "driftgate-no-such-server --stdio",
            "`driftgate-no-such-server`: command not found",
        ),
        ("node 'unterminated", "cannot parse server command"),
        ("   ", "server command is empty"),
    ] {
        match list_tools_stdio(cmd, &opts(10, &[])).await {
            Err(Error::Usage(message)) => assert!(message.contains(expected), "{cmd}: {message}"),
            other => panic!("{cmd}: expected Error::Usage, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn http_server_that_is_not_there_is_incomplete_without_leaking_headers() {
    let port = free_port();
    let options = LiveOptions {
        headers: vec![("Authorization".into(), "Bearer hdr-secret-42".into())],
        ..opts(10, &[])
    };
    let started = Instant::now();
    let message =
        incomplete(list_tools_http(&format!("http://127.0.0.1:{port}/mcp"), &options).await);
    assert!(
        message.contains(&format!(
            "server at http://127.0.0.1:{port}/mcp failed during initialize"
        )),
        "{message}"
    );
    assert!(
        message.to_lowercase().contains("connection refused"),
        "{message}"
    );
    assert!(!message.contains("hdr-secret-42"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn bad_server_url_is_a_usage_error() {
    for url in ["not a url", "ftp://example.invalid/mcp"] {
        match list_tools_http(url, &opts(10, &[])).await {
            Err(Error::Usage(message)) => {
                assert!(message.contains("invalid server URL"), "{message}")
            }
            other => panic!("{url}: expected Error::Usage, got {other:?}"),
        }
    }
}

#[ignore = "needs DRIFTGATE_NPM_DIR (a real component; .ci/run starts it)"]
#[tokio::test]
async fn http_json_server_paginates_and_gets_the_headers() {
    let npm = npm_dir();
    let port = free_port();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/live/paginated-server.mjs");
    let _server = start_node(
        &[
            script.to_str().unwrap(),
            npm.to_str().unwrap(),
            "http",
            &port.to_string(),
        ],
        &[("FIXTURE_TOKEN", "fixture-token-123")],
        port,
    );
    let url = format!("http://127.0.0.1:{port}/mcp");
    let with_token = |token: &str| LiveOptions {
        headers: vec![("Authorization".into(), format!("Bearer {token}"))],
        ..opts(30, &[])
    };

    let capture = list_tools_http(&url, &with_token("fixture-token-123"))
        .await
        .expect("fixture answers");
    assert_eq!(
        names(&capture),
        ["alpha", "beta", "gamma", "echo_env", "epsilon"]
    );
    assert_eq!(capture.pages, 3);
    assert_eq!(
        capture.tools[0]["x-vendor"],
        json!({"tier": "gold", "rank": 1})
    );
    assert_eq!(capture.tools[1]["annotations"]["x-cost"], "cheap");

    let message = incomplete(list_tools_http(&url, &with_token("wrong-token-456")).await);
    assert!(
        message.contains("failed during initialize") && message.contains("401"),
        "{message}"
    );
    assert!(!message.contains("wrong-token-456"), "{message}");
}

/// Whether `pid` is gone; a zombie counts as gone (nobody may be reaping orphans here).
#[cfg(target_os = "linux")]
fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn shutdown_also_kills_what_the_server_spawned() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    // A wrapper that leaves a background grandchild, as `npx` and shell wrappers do.
    let cmd = format!(
        "sh -c 'sleep 29 & echo $! > {}; exec sleep 30'",
        pid_file.display()
    );
    let message = incomplete(list_tools_stdio(&cmd, &opts(1, &[])).await);
    assert!(
        message.contains("did not answer initialize within 1s"),
        "{message}"
    );
    let pid = std::fs::read_to_string(&pid_file).expect("grandchild started");
    let deadline = Instant::now() + Duration::from_secs(2);
    while !process_gone(pid.trim()) {
        assert!(
            Instant::now() < deadline,
            "grandchild {pid} outlived the loader"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
