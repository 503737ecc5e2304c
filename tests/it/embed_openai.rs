//! The OpenAI-compatible embedder against the scripted loopback fake speaking OpenAI's wire format:
//! retries, Retry-After, give-up → Incomplete, malformed bodies, batching, ordering, key hygiene.

use std::time::{Duration, Instant};

use driftgate::Error;
use driftgate::embed::{Embedder, OpenAiEmbedder};
use driftgate::http::retry::RetryPolicy;
use driftgate::http::secret::Secret;

use crate::support::cli;
use crate::support::fake::{Fake, Step};
use crate::support::openai;

#[derive(Clone)]
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    /// `None`: answer with embeddings for whatever was asked, in reverse index order.
    body: Option<String>,
    delay: Duration,
}

fn ok() -> Reply {
    Reply {
        status: 200,
        headers: vec![],
        body: None,
        delay: Duration::ZERO,
    }
}

fn err(status: u16, body: &str) -> Reply {
    Reply {
        status,
        headers: vec![],
        body: Some(body.to_string()),
        delay: Duration::ZERO,
    }
}

const RATE_LIMITED: &str = r#"{"error":{"message":"Rate limit reached for text-embedding-3-small in organization org-x on requests per min (RPM): Limit 3000, Used 3000, Requested 1. Please try again in 1s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
const SERVER_ERROR: &str = r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#;

/// Serves `script` in arrival order (the last reply repeats); the fake records every request.
fn server(script: Vec<Reply>) -> (String, Fake) {
    let fake = Fake::handler(move |req| {
        let reply = &script[req.index.min(script.len() - 1)];
        let step = match &reply.body {
            Some(body) => Step::reply(reply.status, body.as_str()),
            None => openai::embeddings(req),
        };
        reply
            .headers
            .iter()
            .fold(step, |s, (k, v)| s.header(k, v))
            .header("connection", "close")
            .delay(reply.delay)
    });
    (fake.base_url(), fake)
}

fn fast_policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(5),
        jitter: true,
    }
}

fn client(base: &str) -> OpenAiEmbedder {
    OpenAiEmbedder::new(
        base,
        "text-embedding-3-small",
        Some(Secret::new("sk-test-key")),
    )
    .unwrap()
    .with_retry(fast_policy())
    .with_timeout(Duration::from_secs(5))
    .unwrap()
}

fn texts(n: usize) -> Vec<String> {
    (0..n).map(|i| "x".repeat(i + 1)).collect()
}

#[tokio::test]
async fn retries_429_after_the_servers_retry_after() {
    let mut limited = err(429, RATE_LIMITED);
    limited.headers = vec![("retry-after", "1".into())];
    let (base, fake) = server(vec![limited, ok()]);
    let start = Instant::now();
    let v = client(&base).embed(&texts(2)).await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "Retry-After ignored"
    );
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(v.shape(), &[2, 3]);
}

#[tokio::test]
async fn three_500s_make_the_measurement_incomplete() {
    let (base, fake) = server(vec![err(500, SERVER_ERROR)]);
    let e = client(&base).embed(&texts(1)).await.unwrap_err();
    assert!(matches!(e, Error::Incomplete(_)), "{e:?}");
    assert_eq!(e.exit_code(), 3);
    assert!(e.to_string().contains("500"), "{e}");
    assert_eq!(fake.requests().len(), 3, "max_attempts is 3");
}

#[tokio::test]
async fn malformed_json_is_an_error_and_not_retried() {
    let truncated = r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,"#;
    let (base, fake) = server(vec![err(200, truncated)]);
    let e = client(&base).embed(&texts(1)).await.unwrap_err();
    assert!(matches!(e, Error::Incomplete(_)), "{e:?}");
    assert!(e.to_string().contains("unusable response"), "{e}");
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn wrong_row_count_is_an_error() {
    let one_row = r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1.0]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}"#;
    let (base, _fake) = server(vec![err(200, one_row)]);
    let e = client(&base).embed(&texts(2)).await.unwrap_err();
    assert!(e.to_string().contains("1 embeddings for 2 inputs"), "{e}");
}

#[tokio::test]
async fn batches_sorts_by_index_and_normalises() {
    let (base, fake) = server(vec![ok()]);
    let input = texts(70);
    let v = client(&base)
        .with_batch_size(64)
        .embed(&input)
        .await
        .unwrap();
    let seen = fake.requests();
    let sizes: Vec<usize> = seen
        .iter()
        .map(|s| s.body["input"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![64, 6]);
    assert_eq!(seen[0].body["model"], "text-embedding-3-small");
    assert_eq!(seen[0].body["encoding_format"], "float");
    assert_eq!(seen[0].header("authorization"), Some("Bearer sk-test-key"));
    // Text k (k+1 chars) sits at index k % 64 in its batch: vector ∝ [k+1, k%64+1, 0].
    for k in [0usize, 5, 63, 64, 69] {
        let (a, b) = ((k + 1) as f32, (k % 64 + 1) as f32);
        let n = (a * a + b * b).sqrt();
        let row = v.row(k);
        assert!(
            (row[0] - a / n).abs() < 1e-6 && (row[1] - b / n).abs() < 1e-6,
            "row {k}: {row}"
        );
    }
}

#[tokio::test]
async fn a_timed_out_request_is_retried() {
    let mut slow = ok();
    slow.delay = Duration::from_secs(3);
    let (base, fake) = server(vec![slow, ok()]);
    let e = client(&base)
        .with_timeout(Duration::from_millis(300))
        .unwrap();
    let start = Instant::now();
    e.embed(&texts(1)).await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(fake.requests().len(), 2);
}

#[tokio::test]
async fn connection_refused_gives_up_as_incomplete() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = client(&format!("http://127.0.0.1:{port}/v1"))
        .embed(&texts(1))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Incomplete(_)), "{e:?}");
}

#[tokio::test]
async fn retry_after_beyond_the_limit_gives_up_at_once() {
    let mut limited = err(429, RATE_LIMITED);
    limited.headers = vec![("retry-after", "3600".into())];
    let (base, fake) = server(vec![limited, ok()]);
    let e = client(&base).embed(&texts(1)).await.unwrap_err();
    assert!(matches!(e, Error::Incomplete(_)), "{e:?}");
    assert_eq!(fake.requests().len(), 1);
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let (base, fake) = server(vec![ok()]);
    let e = OpenAiEmbedder::new(&base, "m", None).unwrap();
    e.embed(&texts(1)).await.unwrap();
    assert_eq!(fake.requests()[0].header("authorization"), None);
}

/// Runs the built binary in an empty environment but `env`, off the async runtime.
async fn driftgate(args: &[&str], env: &[(&str, &str)], stdin: &str) -> cli::Run {
    let cwd = tempfile::tempdir().unwrap();
    let cmd = cli::driftgate(args)
        .bare()
        .envs(env.iter().copied())
        .dir(cwd.path())
        .stdin(stdin);
    tokio::task::spawn_blocking(move || cmd.run())
        .await
        .unwrap()
}

/// A 401 is a configuration error (exit 2), never retried, and the key the server echoes back
/// must not reach the terminal.
#[tokio::test]
async fn cli_reads_key_from_named_env_var_and_never_prints_it() {
    let secret = "sk-proj-THIS-MUST-NOT-LEAK-0123456789";
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {secret}. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
    );
    let (base, fake) = server(vec![err(401, &echo)]);
    let args = [
        "embed",
        "--embedder",
        "openai",
        "--embed-base-url",
        &base,
        "--embed-model",
        "text-embedding-3-small",
        "--embed-api-key-env",
        "DG_TEST_EMBED_KEY",
    ];
    let out = driftgate(&args, &[("DG_TEST_EMBED_KEY", secret)], "hello\n").await;
    let stderr = &out.stderr;
    assert_eq!(out.code, 2, "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert!(!stderr.contains(secret), "key leaked: {stderr}");
    assert!(out.stdout.is_empty());
    let seen = fake.requests();
    assert_eq!(seen.len(), 1, "401 must not be retried");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {secret}").as_str())
    );
}

#[tokio::test]
async fn cli_exits_3_when_the_server_keeps_failing() {
    let mut unavailable = err(503, SERVER_ERROR);
    unavailable.headers = vec![("retry-after", "0".into())];
    let (base, fake) = server(vec![unavailable]);
    let args = [
        "embed",
        "--embedder",
        "openai",
        "--embed-base-url",
        &base,
        "--embed-model",
        "m",
    ];
    let out = driftgate(&args, &[], "a\nb\n").await;
    let stderr = &out.stderr;
    assert_eq!(out.code, 3, "{stderr}");
    assert!(
        stderr.contains("incomplete") && stderr.contains("503"),
        "{stderr}"
    );
    assert_eq!(fake.requests().len(), 4, "default policy: 4 attempts");
}

/// A `check` whose embedding endpoint keeps failing is incomplete (exit 3), said on stderr, and
/// writes no report that could read as a pass: the run's one up-front embedding call meets the
/// fault first, retries it, then gives up.
#[tokio::test]
async fn a_check_whose_embedder_keeps_failing_is_incomplete_never_a_pass() {
    let mut unavailable = err(503, SERVER_ERROR);
    unavailable.headers = vec![("retry-after", "0".into())];
    let (base, fake) = server(vec![unavailable]);
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("report.json");
    let args = crate::support::calendar::check_from_anywhere(&[
        "--no-cache",
        "--embedder",
        "openai",
        "--embed-base-url",
        &base,
        "--embed-model",
        "m",
        "--format",
        "json",
        "--output",
        report.to_str().unwrap(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = driftgate(&args, &[], "").await;
    let stderr = &out.stderr;
    assert_eq!(out.code, 3, "{stderr}");
    assert!(
        stderr.contains("incomplete") && stderr.contains("503"),
        "{stderr}"
    );
    assert!(!report.exists(), "a failed measurement wrote a report");
    assert!(
        !out.stdout.to_lowercase().contains("pass"),
        "{}",
        out.stdout
    );
    assert_eq!(
        fake.requests().len(),
        4,
        "default policy: 4 attempts, then give up"
    );
}
