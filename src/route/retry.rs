//! Retrying, and deciding what is worth retrying.
//!
//! `with_retry` repeats a request while it fails with `RouteError::Transient`, sleeping with
//! exponential backoff and full jitter, and never sooner than the server's `Retry-After`.
//! The transport helpers below are what turns HTTP statuses and connection failures into
//! `Transient` or `Fatal`, so both provider routers classify failures the same way.

use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::Rng;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use super::RouteError;

/// The longest `Retry-After` we wait for. A server asking for more (a daily quota, an outage)
/// is not retried at all: waiting minutes per case would stall CI, and retrying sooner than the
/// server allows only burns the attempts.
pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included; 1 disables retrying.
    pub max_attempts: u32,
    /// Backoff ceiling before the first retry; doubles with every further failure.
    pub base_delay: Duration,
    /// Cap on the backoff; a server's `Retry-After` may exceed it (up to `RETRY_AFTER_CAP`).
    pub max_delay: Duration,
    /// Full jitter: sleep a uniform random time in [0, backoff], so parallel clients that failed
    /// together do not retry together. Off gives the deterministic ceiling (tests).
    pub jitter: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            jitter: true,
        }
    }
}

impl RetryPolicy {
    /// One attempt, no retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The backoff ceiling after `failures` consecutive failures (1-based):
    /// `min(max_delay, base_delay * 2^(failures-1))`.
    pub fn backoff_ceiling(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1));
        self.base_delay
            .checked_mul(factor)
            .unwrap_or(Duration::MAX)
            .min(self.max_delay)
    }

    /// How long to sleep after `failures` failures, given the server's `Retry-After`;
    /// `None` when the server asks for longer than `RETRY_AFTER_CAP` (give up now).
    pub fn delay(&self, failures: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if retry_after.is_some_and(|ra| ra > RETRY_AFTER_CAP) {
            return None;
        }
        let ceiling = self.backoff_ceiling(failures);
        let backoff = if self.jitter && !ceiling.is_zero() {
            rand::rng().random_range(Duration::ZERO..=ceiling)
        } else {
            ceiling
        };
        Some(backoff.max(retry_after.unwrap_or_default()))
    }
}

/// A result together with what it took to get it, for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Retried<T> {
    pub result: Result<T, RouteError>,
    /// Attempts made, the successful or last failing one included (≥ 1).
    pub attempts: u32,
    /// Total time slept between attempts.
    pub waited: Duration,
}

/// Call `f` until it succeeds, fails with `Fatal`, or `policy.max_attempts` attempts are made;
/// the last error is returned when they run out.
///
/// Only `Err(Transient)` is retried: `Ok(Answer::Malformed)` is the model's answer and would come
/// back the same at temperature 0.
pub async fn with_retry<T, F, Fut>(policy: &RetryPolicy, mut f: F) -> Retried<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, RouteError>>,
{
    let max_attempts = policy.max_attempts.max(1);
    let mut attempts = 0;
    let mut waited = Duration::ZERO;
    loop {
        attempts += 1;
        let result = f().await;
        let retry_after = match &result {
            Err(RouteError::Transient { retry_after, .. }) if attempts < max_attempts => {
                *retry_after
            }
            _ => {
                return Retried {
                    result,
                    attempts,
                    waited,
                };
            }
        };
        let Some(delay) = policy.delay(attempts, retry_after) else {
            let result = result.map_err(|e| match e {
                RouteError::Transient {
                    message,
                    retry_after,
                } => RouteError::Transient {
                    message: format!(
                        "{message} (the server asked to retry after {} s, more than the {} s cap: not retried)",
                        retry_after.unwrap_or_default().as_secs(),
                        RETRY_AFTER_CAP.as_secs()
                    ),
                    retry_after,
                },
                other => other,
            });
            return Retried {
                result,
                attempts,
                waited,
            };
        };
        tokio::time::sleep(delay).await;
        waited += delay;
    }
}

// ---- Retry-After --------------------------------------------------------------------------------

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` as delay-seconds
/// or an HTTP-date (RFC 9110 §10.2.3). A date in the past means "now".
pub fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = text("retry-after-ms").and_then(parse_seconds) {
        return Some(ms / 1000);
    }
    retry_after_value(text("retry-after")?, SystemTime::now())
}

/// One `Retry-After` value relative to `now`.
pub fn retry_after_value(value: &str, now: SystemTime) -> Option<Duration> {
    if let Some(d) = parse_seconds(value) {
        return Some(d);
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Non-negative decimal seconds ("120", leniently also "1.5"); rejects NaN, signs, garbage.
fn parse_seconds(value: &str) -> Option<Duration> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let secs: f64 = value.parse().ok()?;
    // Absurd values saturate rather than fail: they are "longer than the cap" either way.
    Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// IMF-fixdate, the only HTTP-date form senders may generate: `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let mut parts = value.split_ascii_whitespace();
    let weekday = parts.next()?;
    if !weekday.ends_with(',') {
        return None;
    }
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || parts.next().is_some() || hms.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 || year < 1970 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + s;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

// ---- Transport: what counts as transient --------------------------------------------------------

/// Bodies larger than this are cut: a routing answer is a few kilobytes, and an endless body must
/// not exhaust memory.
pub(crate) const MAX_BODY_BYTES: usize = 8 << 20;

/// A response as it came off the wire, before any provider-specific reading.
pub(crate) struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: String,
    /// The body exceeded `MAX_BODY_BYTES` and was cut.
    pub truncated: bool,
    pub latency: Duration,
}

/// A client for one router: overall timeout per request (connect, headers and body), and no
/// redirects (a POST silently turned into a GET elsewhere is never what the user configured).
pub(crate) fn client(timeout: Duration) -> crate::Result<reqwest::Client> {
    reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| crate::Error::Usage(format!("cannot build the HTTP client: {e}")))
}

/// Send and read the whole body. Errors are transport failures only: any status is a `Reply`.
/// Messages are not yet redacted; the router does that.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    timeout: Duration,
) -> Result<Reply, RouteError> {
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
        let room = MAX_BODY_BYTES - body.len();
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
pub(crate) fn parse_base_url(text: &str) -> crate::Result<reqwest::Url> {
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
pub(crate) fn join_path(base: &reqwest::Url, suffix: &str) -> reqwest::Url {
    let mut url = base.clone();
    let path = format!("{}/{suffix}", base.path().trim_end_matches('/'));
    url.set_path(&path);
    url
}

/// `host[:port]` of `url`: what identifies the server in cache keys and reports.
pub(crate) fn host_of(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

/// An `f32` as the JSON number its decimal form shows: `0.7`, not `0.699999988079071` (what a
/// plain widening to `f64` gives), so request bodies and cache keys read as configured.
pub(crate) fn f32_json(x: f32) -> serde_json::Value {
    x.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// An auth header value the HTTP stack will keep out of its own debug output.
pub(crate) fn secret_header(value: &str) -> crate::Result<reqwest::header::HeaderValue> {
    let mut v = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
        crate::Error::Usage("the API key contains characters not allowed in an HTTP header".into())
    })?;
    v.set_sensitive(true);
    Ok(v)
}

/// Timeouts, refused or reset connections and bodies cut short are transient; only a request
/// we could not even build is fatal.
fn transport_error(e: &reqwest::Error, timeout: Duration) -> RouteError {
    if e.is_builder() {
        return RouteError::Fatal(format!("cannot build the request: {}", error_chain(e)));
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
    RouteError::Transient {
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
pub(crate) fn status_error(status: StatusCode, headers: &HeaderMap, message: String) -> RouteError {
    if is_transient_status(status) {
        RouteError::Transient {
            message,
            retry_after: parse_retry_after(headers),
        }
    } else {
        RouteError::Fatal(message)
    }
}

/// The error for a reply whose status is not 2xx: the provider's own message, or for a redirect
/// where it points (we do not follow redirects).
pub(crate) fn http_error(reply: &Reply) -> RouteError {
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
pub(crate) fn status_text(status: StatusCode) -> String {
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
pub(crate) fn provider_error_message(body: &str) -> String {
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
    use crate::route::{Answer, RouteResponse};
    use std::cell::Cell;

    fn transient(retry_after: Option<Duration>) -> RouteError {
        RouteError::Transient {
            message: "busy".into(),
            retry_after,
        }
    }

    fn ok() -> RouteResponse {
        RouteResponse {
            answer: Answer::NoCall { text: "hi".into() },
            usage: None,
            latency_ms: 1,
        }
    }

    fn fixed(base_ms: u64, max_ms: u64) -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(base_ms),
            max_delay: Duration::from_millis(max_ms),
            jitter: false,
        }
    }

    #[test]
    fn backoff_doubles_up_to_max_delay() {
        let p = fixed(500, 3_000);
        let ms: Vec<u128> = (1..=5).map(|n| p.backoff_ceiling(n).as_millis()).collect();
        assert_eq!(ms, [500, 1_000, 2_000, 3_000, 3_000]);
        // No overflow for absurd failure counts.
        assert_eq!(p.backoff_ceiling(u32::MAX), Duration::from_secs(3));
    }

    #[test]
    fn jitter_stays_within_zero_and_the_ceiling_and_varies() {
        let p = RetryPolicy {
            jitter: true,
            ..fixed(1_000, 30_000)
        };
        let samples: Vec<Duration> = (0..200).map(|_| p.delay(3, None).unwrap()).collect();
        assert!(samples.iter().all(|d| *d <= Duration::from_secs(4)));
        let first = samples[0];
        assert!(samples.iter().any(|d| *d != first), "jitter never varied");
    }

    #[test]
    fn retry_after_is_a_floor_even_above_max_delay_up_to_the_cap() {
        let p = RetryPolicy {
            jitter: true,
            ..fixed(100, 1_000)
        };
        for _ in 0..50 {
            assert!(p.delay(1, Some(Duration::from_secs(2))).unwrap() >= Duration::from_secs(2));
        }
        assert_eq!(p.delay(1, Some(RETRY_AFTER_CAP)), Some(RETRY_AFTER_CAP));
        assert_eq!(
            p.delay(1, Some(RETRY_AFTER_CAP + Duration::from_secs(1))),
            None
        );
        // A short Retry-After does not shorten the backoff.
        let p = fixed(800, 1_000);
        assert_eq!(
            p.delay(1, Some(Duration::from_millis(10))),
            Some(Duration::from_millis(800))
        );
    }

    #[tokio::test]
    async fn transient_errors_are_retried_until_success() {
        let calls = Cell::new(0);
        let r = with_retry(&fixed(5, 30_000), || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                if n < 3 {
                    Err(transient(None))
                } else {
                    Ok(ok())
                }
            }
        })
        .await;
        assert_eq!(r.result, Ok(ok()));
        assert_eq!(r.attempts, 3);
        assert_eq!(r.waited, Duration::from_millis(5 + 10));
    }

    #[tokio::test]
    async fn exhaustion_returns_the_last_error_and_counts_attempts() {
        let calls = Cell::new(0u32);
        let r: Retried<RouteResponse> = with_retry(&fixed(10, 100), || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                Err(RouteError::Transient {
                    message: format!("fail {n}"),
                    retry_after: None,
                })
            }
        })
        .await;
        assert_eq!(r.attempts, 4);
        assert_eq!(calls.get(), 4);
        assert_eq!(
            r.result,
            Err(RouteError::Transient {
                message: "fail 4".into(),
                retry_after: None
            })
        );
        assert_eq!(r.waited, Duration::from_millis(10 + 20 + 40));
    }

    #[tokio::test]
    async fn fatal_errors_and_answers_are_not_retried() {
        let calls = Cell::new(0);
        let r: Retried<RouteResponse> = with_retry(&RetryPolicy::default(), || {
            calls.set(calls.get() + 1);
            async { Err(RouteError::Fatal("401".into())) }
        })
        .await;
        assert_eq!((r.attempts, calls.get()), (1, 1));
        assert_eq!(r.waited, Duration::ZERO);

        let malformed = RouteResponse {
            answer: Answer::Malformed { detail: "x".into() },
            usage: None,
            latency_ms: 1,
        };
        let r = with_retry(&RetryPolicy::default(), || async { Ok(malformed.clone()) }).await;
        assert_eq!(r.attempts, 1);
    }

    #[tokio::test]
    async fn retry_after_beyond_the_cap_gives_up_and_says_why() {
        let calls = Cell::new(0);
        let r: Retried<RouteResponse> = with_retry(&RetryPolicy::default(), || {
            calls.set(calls.get() + 1);
            async { Err(transient(Some(Duration::from_secs(3_600)))) }
        })
        .await;
        assert_eq!(calls.get(), 1);
        let Err(RouteError::Transient { message, .. }) = r.result else {
            panic!("expected a transient error");
        };
        assert!(message.contains("3600 s"), "{message}");
    }

    #[tokio::test]
    async fn max_attempts_one_and_zero_mean_a_single_attempt() {
        for max_attempts in [0, 1] {
            let calls = Cell::new(0);
            let p = RetryPolicy {
                max_attempts,
                ..RetryPolicy::default()
            };
            let r: Retried<RouteResponse> = with_retry(&p, || {
                calls.set(calls.get() + 1);
                async { Err(transient(None)) }
            })
            .await;
            assert_eq!((r.attempts, calls.get()), (1, 1));
        }
    }

    #[test]
    fn retry_after_seconds_and_http_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777); // Sun, 06 Nov 1994 08:49:37 GMT
        let v = |s: &str| retry_after_value(s, now);
        assert_eq!(v("1"), Some(Duration::from_secs(1)));
        assert_eq!(v("0"), Some(Duration::ZERO));
        assert_eq!(v("1.5"), Some(Duration::from_millis(1_500)));
        assert_eq!(v("Sun, 06 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
        assert_eq!(
            v("Sun, 06 Nov 1994 08:50:07 GMT"),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            v("Mon, 07 Nov 1994 08:49:37 GMT"),
            Some(Duration::from_secs(86_400))
        );
        // In the past: retry now.
        assert_eq!(v("Sat, 05 Nov 1994 08:49:37 GMT"), Some(Duration::ZERO));
        for bad in [
            "",
            "-1",
            "soon",
            "1e3",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "06 Nov 1994",
        ] {
            assert_eq!(v(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn http_date_matches_known_epoch_seconds() {
        let secs = |s: &str| {
            parse_http_date(s)
                .unwrap()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs()
        };
        assert_eq!(secs("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
        assert_eq!(secs("Tue, 29 Feb 2000 12:00:00 GMT"), 951_825_600);
        assert_eq!(secs("Sun, 29 Nov 2026 13:52:39 GMT"), 1_795_960_359);
    }

    #[test]
    fn retry_after_headers_prefer_milliseconds() {
        let mut h = HeaderMap::new();
        assert_eq!(parse_retry_after(&h), None);
        h.insert("retry-after", "7".parse().unwrap());
        assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(7)));
        h.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(250)));
    }

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
