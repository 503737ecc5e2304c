//! Client for any OpenAI-compatible `/v1/embeddings` endpoint.
//!
//! Transient failures (429, 408, 5xx, timeouts, connection errors) are retried by the one retry
//! loop (`http::retry`), waiting at least as long as the server's `Retry-After`/`retry-after-ms`
//! asks; when attempts run out the measurement is `Error::Incomplete` (exit 3). Other 4xx are
//! configuration mistakes (`Error::Usage`). The API key never appears in any message.

use std::time::Duration;

use ndarray::Array2;
use serde::Deserialize;

use super::{Embedder, l2_normalize_rows};
use crate::http::retry::{RetryPolicy, with_retry};
use crate::http::secret::{Secret, clean_message};
use crate::http::{self, Failure};
use crate::{Error, Result};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// Inputs per request; OpenAI accepts up to 2048, small local servers prefer less.
const DEFAULT_BATCH: usize = 64;
/// Per-request timeout (connect + response) unless `with_timeout` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

pub struct OpenAiEmbedder {
    client: reqwest::Client,
    url: reqwest::Url,
    model: String,
    key: Option<Secret>,
    id: String,
    batch_size: usize,
    retry: RetryPolicy,
    timeout: Duration,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("url", &self.url.as_str())
            .field("model", &self.model)
            .field("key", &self.key)
            .field("batch_size", &self.batch_size)
            .field("retry", &self.retry)
            .finish()
    }
}

/// `http://host:port` → `http://host:port/v1/embeddings`; `…/v1` → `…/v1/embeddings`;
/// a URL already ending in `/embeddings` is used as is.
fn endpoint(base_url: &str) -> Result<reqwest::Url> {
    let base =
        http::parse_base_url(base_url).map_err(|e| Error::Usage(format!("embeddings {e}")))?;
    let path = base.path().trim_end_matches('/');
    Ok(if path.ends_with("/embeddings") {
        base
    } else if path.is_empty() {
        http::join_path(&base, "v1/embeddings")
    } else {
        http::join_path(&base, "embeddings")
    })
}

impl OpenAiEmbedder {
    /// `key` is sent as `Authorization: Bearer`; `None` sends no auth header (local servers).
    pub fn new(base_url: &str, model: &str, key: Option<Secret>) -> Result<Self> {
        if model.is_empty() {
            return Err(Error::Usage("embedding model name is empty".into()));
        }
        let url = endpoint(base_url)?;
        if let Some(k) = &key {
            http::secret_header(&format!("Bearer {}", k.expose()))?;
        }
        let id = format!(
            "openai:{model}@{}",
            url.as_str().trim_end_matches("/embeddings")
        );
        Ok(Self {
            client: http::client(DEFAULT_TIMEOUT)?,
            url,
            model: model.to_string(),
            key,
            id,
            batch_size: DEFAULT_BATCH,
            retry: RetryPolicy::default(),
            timeout: DEFAULT_TIMEOUT,
        })
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Bound each request as a whole (connect, headers and body).
    pub fn with_timeout(mut self, timeout: Duration) -> Result<Self> {
        self.client = http::client(timeout)?;
        self.timeout = timeout;
        Ok(self)
    }

    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// The full endpoint URL requests go to.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    fn secrets(&self) -> &[Secret] {
        self.key.as_slice()
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Array2<f32>> {
        let body = serde_json::json!({
            "model": self.model,
            "input": texts,
            "encoding_format": "float",
        });
        let out = with_retry(&self.retry, || async {
            let mut req = self.client.post(self.url.clone()).json(&body);
            if let Some(k) = &self.key {
                let auth = http::secret_header(&format!("Bearer {}", k.expose()))
                    .map_err(|e| Failure::Fatal(e.to_string()))?;
                req = req.header(reqwest::header::AUTHORIZATION, auth);
            }
            let reply = http::send(req, self.timeout).await?;
            if reply.status.is_success() {
                Ok(reply)
            } else {
                Err(http::http_error(&reply))
            }
        })
        .await;
        match out.result {
            Ok(reply) => self.parse(reply.body.as_bytes(), texts.len()),
            Err(Failure::Fatal(m)) => Err(Error::Usage(clean_message(
                &format!("embeddings endpoint {} answered {m}", self.url),
                self.secrets(),
            ))),
            Err(e @ Failure::Transient { .. }) => Err(Error::Incomplete(clean_message(
                &format!(
                    "embeddings request to {} failed after {} attempt(s): {e}",
                    self.url, out.attempts
                ),
                self.secrets(),
            ))),
        }
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
            Error::Incomplete(clean_message(
                &format!(
                    "embeddings endpoint {} returned an unusable response: {why}",
                    self.url
                ),
                self.secrets(),
            ))
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

    #[test]
    fn endpoint_forms() {
        let e = |s: &str| endpoint(s).unwrap().to_string();
        assert_eq!(
            e("http://127.0.0.1:8080"),
            "http://127.0.0.1:8080/v1/embeddings"
        );
        assert_eq!(e("http://h/v1/"), "http://h/v1/embeddings");
        assert_eq!(
            e("https://h/openai/v1/embeddings"),
            "https://h/openai/v1/embeddings"
        );
        assert!(matches!(endpoint("ftp://h"), Err(Error::Usage(_))));
        assert!(matches!(endpoint("not a url"), Err(Error::Usage(_))));
    }

    #[test]
    fn debug_and_errors_hide_the_key() {
        let e =
            OpenAiEmbedder::new("http://h/v1", "m", Some(Secret::new("sk-secret-123"))).unwrap();
        assert!(!format!("{e:?}").contains("sk-secret-123"));
        assert_eq!(e.id(), "openai:m@http://h/v1");
    }

    #[test]
    fn parse_sorts_by_index_and_normalises() {
        let e = OpenAiEmbedder::new("http://h/v1", "m", None).unwrap();
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
