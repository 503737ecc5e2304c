//! The OpenAI-compatible embedder against a scripted loopback server speaking OpenAI's wire format:
//! retries, Retry-After, give-up → Incomplete, malformed bodies, batching, ordering, key hygiene.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use driftgate::Error;
use driftgate::embed::{Embedder, OpenAiEmbedder};
use driftgate::http::retry::RetryPolicy;
use driftgate::http::secret::Secret;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

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

#[derive(Debug, Clone)]
struct Seen {
    authorization: Option<String>,
    body: serde_json::Value,
}

/// Serves `script` in order (the last reply repeats); records every request.
async fn server(script: Vec<Reply>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            let script = script.clone();
            tokio::spawn(async move {
                let Some(req) = read_request(&mut sock).await else {
                    return;
                };
                let n = {
                    let mut l = log.lock().unwrap();
                    l.push(req.clone());
                    l.len()
                };
                let reply = script[(n - 1).min(script.len() - 1)].clone();
                tokio::time::sleep(reply.delay).await;
                let body = reply.body.unwrap_or_else(|| embeddings_for(&req.body));
                let mut head = format!(
                    "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                    reply.status,
                    body.len()
                );
                for (k, v) in &reply.headers {
                    head.push_str(&format!("{k}: {v}\r\n"));
                }
                head.push_str("\r\n");
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(body.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (base, seen)
}

async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    };
    let len: usize = header("content-length")?.parse().ok()?;
    while buf.len() < header_end + len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(Seen {
        authorization: header("authorization"),
        body: serde_json::from_slice(&buf[header_end..header_end + len]).ok()?,
    })
}

/// OpenAI's response shape; vector i is [len(text), i + 1, 0] (not unit length), rows reversed.
fn embeddings_for(req: &serde_json::Value) -> String {
    let inputs = req["input"].as_array().unwrap();
    let data: Vec<_> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| {
            serde_json::json!({"object": "embedding", "index": i,
                "embedding": [t.as_str().unwrap().len() as f32, (i + 1) as f32, 0.0]})
        })
        .collect();
    serde_json::json!({"object": "list", "data": data, "model": req["model"],
        "usage": {"prompt_tokens": inputs.len(), "total_tokens": inputs.len()}})
    .to_string()
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
    let (base, seen) = server(vec![limited, ok()]).await;
    let start = Instant::now();
    let v = client(&base).embed(&texts(2)).await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "Retry-After ignored"
    );
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!(v.shape(), &[2, 3]);
}

#[tokio::test]
async fn three_500s_make_the_measurement_incomplete() {
    let (base, seen) = server(vec![err(500, SERVER_ERROR)]).await;
    let e = client(&base).embed(&texts(1)).await.unwrap_err();
    assert!(matches!(e, Error::Incomplete(_)), "{e:?}");
    assert_eq!(e.exit_code(), 3);
    assert!(e.to_string().contains("500"), "{e}");
    assert_eq!(seen.lock().unwrap().len(), 3, "max_attempts is 3");
}

#[tokio::test]
async fn malformed_json_is_an_error_and_not_retried() {
    let truncated = r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,"#;
    let (base, seen) = server(vec![err(200, truncated)]).await;
    let e = client(&base).embed(&texts(1)).await.unwrap_err();
    assert!(matches!(e, Error::Incomplete(_)), "{e:?}");
    assert!(e.to_string().contains("unusable response"), "{e}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn wrong_row_count_is_an_error() {
    let one_row = r#"{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1.0]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}"#;
    let (base, _) = server(vec![err(200, one_row)]).await;
    let e = client(&base).embed(&texts(2)).await.unwrap_err();
    assert!(e.to_string().contains("1 embeddings for 2 inputs"), "{e}");
}

#[tokio::test]
async fn batches_sorts_by_index_and_normalises() {
    let (base, seen) = server(vec![ok()]).await;
    let input = texts(70);
    let v = client(&base)
        .with_batch_size(64)
        .embed(&input)
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    let sizes: Vec<usize> = seen
        .iter()
        .map(|s| s.body["input"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![64, 6]);
    assert_eq!(seen[0].body["model"], "text-embedding-3-small");
    assert_eq!(seen[0].body["encoding_format"], "float");
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer sk-test-key"));
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
    let (base, seen) = server(vec![slow, ok()]).await;
    let e = client(&base)
        .with_timeout(Duration::from_millis(300))
        .unwrap();
    let start = Instant::now();
    e.embed(&texts(1)).await.unwrap();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(seen.lock().unwrap().len(), 2);
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
    let (base, seen) = server(vec![limited, ok()]).await;
    let e = client(&base).embed(&texts(1)).await.unwrap_err();
    assert!(matches!(e, Error::Incomplete(_)), "{e:?}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let (base, seen) = server(vec![ok()]).await;
    let e = OpenAiEmbedder::new(&base, "m", None).unwrap();
    e.embed(&texts(1)).await.unwrap();
    assert_eq!(seen.lock().unwrap()[0].authorization, None);
}

/// Runs the built binary off the async runtime (the loopback server must keep serving meanwhile).
async fn driftgate(args: &[&str], env: &[(&str, &str)], stdin: &str) -> std::process::Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let stdin = stdin.to_string();
    tokio::task::spawn_blocking(move || run_blocking(&args, &env, &stdin))
        .await
        .unwrap()
}

fn run_blocking(args: &[String], env: &[(String, String)], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_driftgate"))
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A 401 is a configuration error (exit 2), never retried, and the key the server echoes back
/// must not reach the terminal.
#[tokio::test]
async fn cli_reads_key_from_named_env_var_and_never_prints_it() {
    let secret = "sk-proj-THIS-MUST-NOT-LEAK-0123456789";
    let echo = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {secret}. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}}}"#
    );
    let (base, seen) = server(vec![err(401, &echo)]).await;
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
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");
    assert!(!stderr.contains(secret), "key leaked: {stderr}");
    assert!(out.stdout.is_empty());
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "401 must not be retried");
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some(format!("Bearer {secret}").as_str())
    );
}

#[tokio::test]
async fn cli_exits_3_when_the_server_keeps_failing() {
    let mut unavailable = err(503, SERVER_ERROR);
    unavailable.headers = vec![("retry-after", "0".into())];
    let (base, seen) = server(vec![unavailable]).await;
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
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("incomplete") && stderr.contains("503"),
        "{stderr}"
    );
    assert_eq!(seen.lock().unwrap().len(), 4, "default policy: 4 attempts");
}
