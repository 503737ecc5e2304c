//! HTTP for every remote service we call (LLM providers, embedding servers, GitHub): one client
//! builder, one way to read a reply with a size cap, and one rule for which failures are worth
//! retrying. What to retry with lives in `retry`; secrets and redaction in `secret`.

pub mod retry;
pub mod secret;

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use retry::parse_retry_after;

/// A failed request. `Transient` ones are retried (429, 5xx, timeouts, connection errors).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Failure {
    #[error("{message}")]
    Transient {
        message: String,
        /// The server's `Retry-After`, when it sent one.
        retry_after: Option<Duration>,
    },
    #[error("{0}")]
    Fatal(String),
}

impl Failure {
    /// The same failure with `prefix: ` before its message (which provider, which host).
    pub fn with_prefix(self, prefix: &str) -> Failure {
        self.map_message(|m| format!("{prefix}: {m}"))
    }

    /// The same failure with its message rewritten (e.g. cleaned of secrets).
    pub fn map_message(self, f: impl FnOnce(&str) -> String) -> Failure {
        match self {
            Failure::Transient {
                message,
                retry_after,
            } => Failure::Transient {
                message: f(&message),
                retry_after,
            },
            Failure::Fatal(message) => Failure::Fatal(f(&message)),
        }
    }
}

/// Bodies larger than this are cut: a routing answer is a few kilobytes, and an endless body must
/// not exhaust memory.
pub const MAX_BODY_BYTES: usize = 8 << 20;

/// A response as it came off the wire, before any provider-specific reading.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
    /// The body exceeded `MAX_BODY_BYTES` and was cut.
    pub truncated: bool,
    pub latency: Duration,
}

/// A client whose `timeout` bounds each request as a whole (connect, headers and body).
pub fn client(timeout: Duration) -> crate::Result<reqwest::Client> {
    client_with(Some(timeout), HeaderMap::new())
}

/// The one client builder. `timeout`: each request bounded as a whole, or `None` for streams
/// whose caller bounds the exchange. `headers` go with every request (mark secret ones
/// sensitive). Redirects are not followed: a POST silently turned into a GET elsewhere is never
/// what the user configured.
pub fn client_with(
    timeout: Option<Duration>,
    headers: HeaderMap,
) -> crate::Result<reqwest::Client> {
    let mut b = reqwest::Client::builder()
        .user_agent(concat!("driftgate/", env!("CARGO_PKG_VERSION")))
        .default_headers(headers)
        .redirect(reqwest::redirect::Policy::none());
    if let Some(t) = timeout {
        b = b.timeout(t);
    }
    b.build()
        .map_err(|e| crate::Error::Usage(format!("cannot build the HTTP client: {e}")))
}

/// Send and read the whole body. Errors are transport failures only: any status is a `Reply`.
/// Messages are not yet redacted; the router does that.
pub async fn send(request: reqwest::RequestBuilder, timeout: Duration) -> Result<Reply, Failure> {
    send_capped(request, timeout, MAX_BODY_BYTES).await
}

/// [`send`] with a body cap of `cap` bytes instead of [`MAX_BODY_BYTES`] (a batch's results file
/// is many answers long).
pub async fn send_capped(
    request: reqwest::RequestBuilder,
    timeout: Duration,
    cap: usize,
) -> Result<Reply, Failure> {
    let start = Instant::now();
    let mut response = request
        .send()
        .await
        .map_err(|e| transport_error(&e, timeout))?;
    let status = response.status();
    let headers = response.headers().clone();
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_error(&e, timeout))?
    {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        truncated,
        latency: start.elapsed(),
    })
}

/// A provider's base URL: http(s) with a host, no credentials (they would end up in logs and the
/// cache key; keys belong in environment variables), no fragment.
pub fn parse_base_url(text: &str) -> crate::Result<reqwest::Url> {
    let bad = |why: &str| crate::Error::Usage(format!("base URL {text:?}: {why}"));
    let url = reqwest::Url::parse(text.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("expected an http:// or https:// URL"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "credentials in the URL are not accepted; put the key in an environment variable",
        ));
    }
    if url.fragment().is_some() {
        return Err(bad("unexpected #fragment"));
    }
    Ok(url)
}

/// `base` with `suffix` appended to its path, whether or not the path ends in `/`; the query is
/// kept.
pub fn join_path(base: &reqwest::Url, suffix: &str) -> reqwest::Url {
    let mut url = base.clone();
    let path = format!("{}/{suffix}", base.path().trim_end_matches('/'));
    url.set_path(&path);
    url
}

/// `host[:port]` of `url`: what identifies the server in cache keys and reports.
pub fn host_of(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// An auth header value the HTTP stack will keep out of its own debug output.
pub fn secret_header(value: &str) -> crate::Result<reqwest::header::HeaderValue> {
    let mut v = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
        crate::Error::Usage("the API key contains characters not allowed in an HTTP header".into())
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// Timeouts, refused or reset connections and bodies cut short are transient; only a request
/// we could not even build is fatal.
fn transport_error(e: &reqwest::Error, timeout: Duration) -> Failure {
    if e.is_builder() {
        return Failure::Fatal(format!("cannot build the request: {}", error_chain(e)));
    }
    let message = if e.is_timeout() {
        format!(
            "no complete answer within {} s (timeout)",
            timeout.as_secs_f64()
        )
    } else if e.is_connect() {
        format!("cannot connect: {}", error_chain(e))
    } else {
        format!("connection failed: {}", error_chain(e))
    };
    Failure::Transient {
        message,
        retry_after: None,
    }
}

/// `e` and its sources joined by ": ", skipping a source whose text its parent already shows.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// Statuses worth retrying: request timeout, conflict (OpenAI's lock contention), rate limits and
/// every server error, including Anthropic's 529 "overloaded".
pub fn is_transient_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// The error for a non-success status; `message` should already say what the provider said.
pub fn status_error(status: StatusCode, headers: &HeaderMap, message: String) -> Failure {
    if is_transient_status(status) {
        Failure::Transient {
            message,
            retry_after: parse_retry_after(headers),
        }
    } else {
        Failure::Fatal(message)
    }
}

/// The error for a reply whose status is not 2xx: the provider's own message, or for a redirect
/// where it points (we do not follow redirects).
pub fn http_error(reply: &Reply) -> Failure {
    let status = status_text(reply.status);
    let message = if reply.status.is_redirection() {
        let location = reply
            .headers
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .unwrap_or("?");
        format!("{status}: redirected to {location}; configure that URL instead")
    } else {
        format!("{status}: {}", provider_error_message(&reply.body))
    };
    status_error(reply.status, &reply.headers, message)
}

/// "HTTP 401 Unauthorized" (the reason phrase is the standard one, not the server's).
pub fn status_text(status: StatusCode) -> String {
    // 529 is Anthropic's own; no standard phrase exists for it.
    let reason = status
        .canonical_reason()
        .or((status.as_u16() == 529).then_some("Overloaded"));
    match reason {
        Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    }
}

/// The `error.message` of an OpenAI- or Anthropic-style error body (both nest it under `error`;
/// some proxies put a string there), else the raw body.
pub fn provider_error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|v| v.get("error"));
    match error {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(e) => {
            let message = e.get("message").and_then(|m| m.as_str());
            let kind = e.get("type").and_then(|t| t.as_str());
            match (kind, message) {
                (Some(k), Some(m)) => format!("{k}: {m}"),
                (None, Some(m)) => m.to_string(),
                _ => e.to_string(),
            }
        }
        None => body.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_split_into_transient_and_fatal() {
        let transient: Vec<u16> = [
            400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 529,
        ]
        .into_iter()
        .filter(|s| is_transient_status(StatusCode::from_u16(*s).unwrap()))
        .collect();
        assert_eq!(transient, [408, 409, 429, 500, 502, 503, 529]);
    }

    #[test]
    fn provider_error_messages_are_dug_out_of_both_shapes() {
        let openai = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
        assert_eq!(
            provider_error_message(openai),
            "invalid_request_error: Incorrect API key provided"
        );
        let anthropic =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            provider_error_message(anthropic),
            "overloaded_error: Overloaded"
        );
        assert_eq!(provider_error_message(r#"{"error":"nope"}"#), "nope");
        assert_eq!(
            provider_error_message(" <html>502</html>\n"),
            "<html>502</html>"
        );
    }
}
