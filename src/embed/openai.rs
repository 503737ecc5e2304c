//! Client for any OpenAI-compatible `/v1/embeddings` endpoint.
//!
//! Transient failures (429, 408, 5xx, timeouts, connection errors) are retried with exponential
//! backoff and jitter, waiting at least as long as the server's `Retry-After`/`retry-after-ms`
//! asks; when attempts run out the measurement is `Error::Incomplete` (exit 3). Other 4xx are
//! configuration mistakes (`Error::Usage`). The API key never appears in any message.

use std::time::Duration;

use ndarray::Array2;
use serde::Deserialize;

use super::{Embedder, l2_normalize_rows};
use crate::route::retry::{is_transient_status, parse_retry_after};
use crate::{Error, Result};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Inputs per request; OpenAI accepts up to 2048, small local servers prefer less.
const DEFAULT_BATCH: usize = 64;

/// How hard to try before declaring the measurement incomplete.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total attempts per request, including the first.
    pub max_attempts: u32,
    /// Backoff before retry n (1-based) is `base_delay * 2^(n-1)`, capped, times a jitter in [0.5, 1].
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// Longest `Retry-After` we are willing to honour; beyond it we give up rather than stall CI.
    pub max_retry_after: Duration,
    /// Per-request timeout (connect + response).
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
            timeout: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << (retry.saturating_sub(1)).min(16))
            .min(self.max_delay);
        exp.mul_f64(rand::random_range(0.5..=1.0))
    }
}

pub struct OpenAiEmbedder {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    id: String,
    batch_size: usize,
    retry: RetryPolicy,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("batch_size", &self.batch_size)
            .field("retry", &self.retry)
            .finish()
    }
}

/// `http://host:port` → `http://host:port/v1/embeddings`; `…/v1` → `…/v1/embeddings`;
/// a URL already ending in `/embeddings` is used as is.
fn endpoint(base_url: &str) -> Result<String> {
    let parsed = reqwest::Url::parse(base_url)
        .map_err(|e| Error::Usage(format!("invalid embeddings base URL {base_url:?}: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::Usage(format!(
            "embeddings base URL must be http(s): {base_url:?}"
        )));
    }
    let trimmed = base_url.trim_end_matches('/');
    Ok(if trimmed.ends_with("/embeddings") {
        trimmed.to_string()
    } else if parsed.path().trim_matches('/').is_empty() {
        format!("{trimmed}/v1/embeddings")
    } else {
        format!("{trimmed}/embeddings")
    })
}

impl OpenAiEmbedder {
    /// Reads the key from the environment variable `api_key_env` now; unset or empty means no
    /// `Authorization` header (fine for local servers).
    pub fn new(base_url: &str, model: &str, api_key_env: &str) -> Result<Self> {
        let api_key = std::env::var(api_key_env).ok().filter(|k| !k.is_empty());
        Self::with_api_key(base_url, model, api_key)
    }

    pub fn with_api_key(base_url: &str, model: &str, api_key: Option<String>) -> Result<Self> {
        if model.is_empty() {
            return Err(Error::Usage("embedding model name is empty".into()));
        }
        let url = endpoint(base_url)?;
        let retry = RetryPolicy::default();
        Ok(Self {
            client: client(&retry)?,
            id: format!("openai:{model}@{}", url.trim_end_matches("/embeddings")),
            url,
            model: model.to_string(),
            api_key,
            batch_size: DEFAULT_BATCH,
            retry,
        })
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Result<Self> {
        self.client = client(&retry)?;
        self.retry = retry;
        Ok(self)
    }

    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// The full endpoint URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    fn redact(&self, s: &str) -> String {
        match &self.api_key {
            Some(k) => s.replace(k.as_str(), "<redacted>"),
            None => s.to_string(),
        }
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Array2<f32>> {
        let body = serde_json::json!({
            "model": self.model,
            "input": texts,
            "encoding_format": "float",
        });
        let mut last_error = String::new();
        for attempt in 1..=self.retry.max_attempts {
            let mut req = self.client.post(&self.url).json(&body);
            if let Some(k) = &self.api_key {
                req = req.bearer_auth(k);
            }
            let wait_at_least = match req.send().await {
                Ok(resp) => {
                    let status = resp.status();
                    let retry_after = parse_retry_after(resp.headers());
                    let bytes = resp.bytes().await;
                    match (status, bytes) {
                        (s, Ok(b)) if s.is_success() => return self.parse(&b, texts.len()),
                        (s, Ok(b)) if !is_transient_status(s) => {
                            return Err(Error::Usage(self.redact(&format!(
                                "embeddings endpoint {} answered {s}: {}",
                                self.url,
                                excerpt(&b)
                            ))));
                        }
                        (s, Ok(b)) => {
                            last_error = format!("HTTP {s}: {}", excerpt(&b));
                            retry_after
                        }
                        (s, Err(e)) => {
                            last_error = format!("HTTP {s}, body unreadable: {}", e.without_url());
                            retry_after
                        }
                    }
                }
                Err(e) => {
                    last_error = if e.is_timeout() {
                        format!("timed out after {:?}", self.retry.timeout)
                    } else {
                        format!("request failed: {}", error_chain(&e.without_url()))
                    };
                    None
                }
            };
            if attempt == self.retry.max_attempts {
                break;
            }
            if let Some(ra) = wait_at_least.filter(|ra| *ra > self.retry.max_retry_after) {
                last_error = format!(
                    "{last_error} (server asked to retry after {ra:?}, more than the {:?} we wait)",
                    self.retry.max_retry_after
                );
                break;
            }
            let delay = self
                .retry
                .backoff(attempt)
                .max(wait_at_least.unwrap_or_default());
            tokio::time::sleep(delay).await;
        }
        Err(Error::Incomplete(self.redact(&format!(
            "embeddings request to {} failed: {last_error}",
            self.url
        ))))
    }

    /// Rows come back in `index` order (servers may reorder), then get L2-normalised.
    fn parse(&self, body: &[u8], n: usize) -> Result<Array2<f32>> {
        #[derive(Deserialize)]
        struct Resp {
            data: Vec<Item>,
        }
        #[derive(Deserialize)]
        struct Item {
            index: usize,
            embedding: Vec<f32>,
        }
        let bad = |why: String| {
            Error::Incomplete(self.redact(&format!(
                "embeddings endpoint {} returned an unusable response: {why}",
                self.url
            )))
        };
        let mut resp: Resp = serde_json::from_slice(body)
            .map_err(|e| bad(format!("{e}; body starts {}", excerpt(body))))?;
        if resp.data.len() != n {
            return Err(bad(format!(
                "{} embeddings for {n} inputs",
                resp.data.len()
            )));
        }
        resp.data.sort_by_key(|d| d.index);
        if resp.data.iter().enumerate().any(|(i, d)| d.index != i) {
            return Err(bad("indices are not 0..n".into()));
        }
        let dim = resp.data[0].embedding.len();
        if dim == 0 || resp.data.iter().any(|d| d.embedding.len() != dim) {
            return Err(bad("embeddings are empty or differ in dimension".into()));
        }
        let flat: Vec<f32> = resp.data.into_iter().flat_map(|d| d.embedding).collect();
        let mut m = Array2::from_shape_vec((n, dim), flat).expect("n × dim elements");
        l2_normalize_rows(&mut m).map_err(|e| bad(e.to_string()))?;
        Ok(m)
    }
}

fn client(retry: &RetryPolicy) -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .timeout(retry.timeout)
        .connect_timeout(retry.timeout.min(Duration::from_secs(10)))
        .user_agent(concat!("driftgate/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| Error::Usage(format!("cannot build HTTP client: {e}")))
}

/// A short, single-line piece of a response body for error messages.
fn excerpt(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None if one_line.is_empty() => "<empty body>".into(),
        None => one_line,
    }
}

/// reqwest's Display hides the cause ("error sending request"); the chain says what happened.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

#[async_trait::async_trait]
impl Embedder for OpenAiEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    async fn embed(&self, texts: &[String]) -> Result<Array2<f32>> {
        let mut parts = Vec::new();
        for chunk in texts.chunks(self.batch_size) {
            parts.push(self.embed_batch(chunk).await?);
        }
        if parts.is_empty() {
            return Ok(Array2::zeros((0, 0)));
        }
        let dim = parts[0].ncols();
        if parts.iter().any(|p| p.ncols() != dim) {
            return Err(Error::Incomplete(format!(
                "embeddings endpoint {} changed dimension between batches",
                self.url
            )));
        }
        let views: Vec<_> = parts.iter().map(|p| p.view()).collect();
        Ok(ndarray::concatenate(ndarray::Axis(0), &views).expect("same number of columns"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderMap;

    #[test]
    fn endpoint_forms() {
        assert_eq!(
            endpoint("http://127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080/v1/embeddings"
        );
        assert_eq!(endpoint("http://h/v1/").unwrap(), "http://h/v1/embeddings");
        assert_eq!(
            endpoint("https://h/openai/v1/embeddings").unwrap(),
            "https://h/openai/v1/embeddings"
        );
        assert!(matches!(endpoint("ftp://h"), Err(Error::Usage(_))));
        assert!(matches!(endpoint("not a url"), Err(Error::Usage(_))));
    }

    #[test]
    fn retry_after_forms() {
        // The embedder shares the router's parser: OpenAI's `retry-after-ms` wins over `Retry-After`.
        let mut h = HeaderMap::new();
        assert_eq!(parse_retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(250)));
        h.clear();
        h.insert(
            "retry-after",
            "Sun, 06 Nov 1994 08:49:37 GMT".parse().unwrap(),
        );
        assert_eq!(
            parse_retry_after(&h),
            Some(Duration::ZERO),
            "date in the past"
        );
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            ..RetryPolicy::default()
        };
        for _ in 0..20 {
            let d1 = p.backoff(1);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d2 = p.backoff(2);
            assert!(d2 >= Duration::from_millis(100) && d2 <= Duration::from_millis(200));
            assert!(p.backoff(30) <= Duration::from_millis(300));
        }
    }

    #[test]
    fn debug_and_errors_hide_the_key() {
        let e =
            OpenAiEmbedder::with_api_key("http://h/v1", "m", Some("sk-secret-123".into())).unwrap();
        assert!(!format!("{e:?}").contains("sk-secret-123"));
        assert_eq!(e.redact("bad key sk-secret-123!"), "bad key <redacted>!");
        assert_eq!(e.id(), "openai:m@http://h/v1");
    }

    #[test]
    fn parse_sorts_by_index_and_normalises() {
        let e = OpenAiEmbedder::with_api_key("http://h/v1", "m", None).unwrap();
        let body = br#"{"object":"list","data":[
            {"object":"embedding","index":1,"embedding":[0.0,2.0]},
            {"object":"embedding","index":0,"embedding":[3.0,4.0]}],
            "model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}"#;
        let m = e.parse(body, 2).unwrap();
        assert_eq!(m, ndarray::array![[0.6f32, 0.8], [0.0, 1.0]]);
        assert!(matches!(e.parse(body, 3), Err(Error::Incomplete(_))));
        let dup = br#"{"data":[{"index":0,"embedding":[1.0]},{"index":0,"embedding":[1.0]}]}"#;
        assert!(matches!(e.parse(dup, 2), Err(Error::Incomplete(_))));
    }
}
