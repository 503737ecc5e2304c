//! The few GitHub REST calls driftgate makes, over octocrab's HTTP client (auth, base URL and
//! GitHub Enterprise path joining come from it). Responses are read raw so we see the status and
//! headers: rate limits (403 with `x-ratelimit-remaining: 0`, 429, or a secondary limit with
//! `Retry-After`) are waited out up to a cap, `Link` headers are followed for pagination, and
//! every error names the call that failed.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, StatusCode};
use octocrab::Octocrab;
use serde::Deserialize;
use serde_json::Value;

use crate::console::Console;
use crate::http::retry::{RetryPolicy, Retryable, with_retry_notify};
use crate::http::secret::{Secret, clean_message};

/// Longest we wait for a rate limit to reset before giving up (`DRIFTGATE_GITHUB_MAX_WAIT`
/// seconds overrides it).
pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(60);
/// Attempts per call, including the first.
const ATTEMPTS: u32 = 4;
/// Pages of comments we read at most (100 per page): a PR with more than 5,000 comments gets a
/// new sticky comment rather than an unbounded scan.
const MAX_PAGES: usize = 50;

#[derive(Debug, Clone)]
pub struct ApiError {
    /// What we were doing, e.g. "create a comment on PR #12 (POST /repos/o/r/issues/12/comments)".
    pub call: String,
    /// HTTP status, when the server answered.
    pub status: Option<u16>,
    pub message: String,
    /// Still rate limited when we gave up (a 403 that is not about permissions).
    pub rate_limited: bool,
    /// Whether another attempt may help, and no sooner than when (the retry loop reads it).
    retry: Option<Option<Duration>>,
}

impl Retryable for ApiError {
    fn retry_after(&self) -> Option<Option<Duration>> {
        self.retry
    }

    fn waited_too_long(mut self, asked: Duration, cap: Duration) -> Self {
        self.message = format!(
            "{}; rate limited until {}s from now, longer than the {}s we wait (DRIFTGATE_GITHUB_MAX_WAIT)",
            self.message,
            asked.as_secs(),
            cap.as_secs()
        );
        self
    }
}

impl ApiError {
    pub fn new(call: impl Into<String>, status: Option<u16>, message: String) -> ApiError {
        ApiError {
            call: call.into(),
            status,
            message,
            rate_limited: false,
            retry: None,
        }
    }

    /// The token may not write here: a fork PR's read-only token, or a workflow without
    /// `pull-requests: write` (GitHub answers 403, or 404 for a private repository).
    pub fn is_forbidden(&self) -> bool {
        matches!(self.status, Some(403 | 404)) && !self.rate_limited
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(s) => write!(
                f,
                "GitHub API: {} failed: HTTP {s}: {}",
                self.call, self.message
            ),
            None => write!(f, "GitHub API: {} failed: {}", self.call, self.message),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

/// An issue comment; GitHub sends many more fields, we read these.
#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
    #[serde(default)]
    pub html_url: Option<String>,
}

/// A pull-request review comment (a comment on a line of the diff); we read these fields.
#[derive(Debug, Clone, Deserialize)]
pub struct ReviewComment {
    #[serde(flatten)]
    pub comment: Comment,
    #[serde(default)]
    pub path: Option<String>,
    /// The line in the file at `commit_id`; `null` once the line is outdated.
    #[serde(default)]
    pub line: Option<u64>,
    /// The first line of a comment on several lines; `null` for one line.
    #[serde(default)]
    pub start_line: Option<u64>,
    #[serde(default)]
    pub commit_id: Option<String>,
}

/// Where a new review comment goes: the file, its line at `commit_id` (its lines
/// `start_line..=line` when it spans several), on the head side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub path: String,
    pub line: u64,
    /// Before `line`, or `None` for a comment on one line (GitHub refuses `start_line == line`).
    pub start_line: Option<u64>,
    pub commit_id: String,
}

pub struct Api<'a> {
    oc: Octocrab,
    /// Scheme and authority of the API, to refuse following a `Link` elsewhere with our token.
    origin: String,
    token: Secret,
    retry: RetryPolicy,
    console: &'a dyn Console,
}

/// "owner/name", checked so it can be put into a path as is.
pub fn check_repo(repo: &str) -> Result<(), String> {
    let ok = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match repo.split_once('/') {
        Some((o, n)) if ok(o) && ok(n) => Ok(()),
        _ => Err(format!("{repo:?} is not an owner/name repository")),
    }
}

impl<'a> Api<'a> {
    /// `api_url` is `GITHUB_API_URL` (`https://api.github.com`, or `https://HOST/api/v3` on
    /// GitHub Enterprise Server); a rate limit longer than `max_wait` is not waited out. Retries
    /// are told to `console`.
    pub fn new(
        api_url: &str,
        token: &Secret,
        max_wait: Duration,
        console: &'a dyn Console,
    ) -> Result<Api<'a>, ApiError> {
        let setup = |message: String| ApiError::new("set up the client", None, message);
        let token = token.expose().trim();
        if token.is_empty() || !token.chars().all(|c| c.is_ascii_graphic()) {
            return Err(setup(
                "the token is empty or not a plain ASCII string".into(),
            ));
        }
        let uri: http::Uri = api_url
            .trim_end_matches('/')
            .parse()
            .map_err(|e| setup(format!("GITHUB_API_URL {api_url:?}: {e}")))?;
        let origin = match (uri.scheme_str(), uri.authority()) {
            (Some(s), Some(a)) => format!("{s}://{a}"),
            _ => {
                return Err(setup(format!(
                    "GITHUB_API_URL {api_url:?} is not an absolute URL"
                )));
            }
        };
        let oc = Octocrab::builder()
            .base_uri(uri)
            .map_err(|e| setup(e.to_string()))?
            .personal_token(token.to_string())
            .add_header(http::header::ACCEPT, "application/vnd.github+json".into())
            .set_connect_timeout(Some(Duration::from_secs(10)))
            .set_read_timeout(Some(Duration::from_secs(30)))
            .set_write_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|e| setup(e.to_string()))?;
        Ok(Api {
            oc,
            origin,
            token: Secret::new(token),
            // GitHub's guidance: back off exponentially on 5xx, and wait out a rate limit.
            retry: RetryPolicy {
                max_attempts: ATTEMPTS,
                base_delay: Duration::from_millis(500),
                max_delay: Duration::from_secs(8),
                max_retry_after: max_wait,
                jitter: false,
            },
            console,
        })
    }

    fn redact(&self, s: &str) -> String {
        clean_message(s, std::slice::from_ref(&self.token))
    }

    /// One call with rate-limit and 5xx retries. Returns the headers and body of a 2xx answer.
    async fn call(
        &self,
        what: &str,
        method: http::Method,
        uri: &str,
        body: Option<&Value>,
    ) -> Result<(HeaderMap, String), ApiError> {
        let path = uri.strip_prefix(&self.origin).unwrap_or(uri);
        let call = format!(
            "{what} ({method} {})",
            path.split('?').next().unwrap_or(path)
        );
        let err = |status: Option<u16>, message: String| {
            ApiError::new(call.clone(), status, self.redact(&message))
        };
        let attempt = || async {
            let sent = match method {
                http::Method::POST => self.oc._post(uri, body).await,
                http::Method::PATCH => self.oc._patch(uri, body).await,
                http::Method::DELETE => self.oc._delete(uri, body).await,
                _ => self.oc._get(uri).await,
            };
            let res = match sent {
                Ok(res) => res,
                Err(e) => {
                    // Connection refused/reset or a timeout: worth another attempt.
                    let mut e = err(None, e.to_string());
                    e.retry = Some(None);
                    return Err(e);
                }
            };
            let status = res.status();
            let headers = res.headers().clone();
            let text = self
                .oc
                .body_to_string(res)
                .await
                .map_err(|e| err(Some(status.as_u16()), format!("reading the body: {e}")))?;
            if status.is_success() {
                return Ok((headers, text));
            }
            let mut e = err(Some(status.as_u16()), error_message(&text, status));
            let limit = retry_after(status, &headers);
            e.rate_limited = limit.is_some();
            e.retry = match limit {
                Some(w) => Some(Some(w)),
                None if status.is_server_error() => Some(None),
                None => None,
            };
            Err(e)
        };
        let notify = |e: &ApiError, wait: Duration| {
            let what = match e.status {
                Some(s) => format!("HTTP {s}"),
                None => e.message.clone(),
            };
            self.console.note(&format!(
                "driftgate: GitHub API: {call}: {what}; retrying in {:.1}s",
                wait.as_secs_f64()
            ));
        };
        with_retry_notify(&self.retry, attempt, notify).await.result
    }

    fn parse<T: serde::de::DeserializeOwned>(&self, what: &str, text: &str) -> Result<T, ApiError> {
        serde_json::from_str(text)
            .map_err(|e| ApiError::new(what, None, format!("unexpected response body: {e}")))
    }

    /// One write whose answer is the object written.
    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        method: http::Method,
        uri: &str,
        payload: &Value,
    ) -> Result<T, ApiError> {
        let (_, text) = self.call(what, method, uri, Some(payload)).await?;
        self.parse(what, &text)
    }

    /// Every item of a listing, following `Link: <…>; rel="next"` on this API's host only (at
    /// most [`MAX_PAGES`] pages).
    async fn list_all<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        mut uri: String,
    ) -> Result<Vec<T>, ApiError> {
        let mut all = Vec::new();
        for _ in 0..MAX_PAGES {
            let (headers, text) = self.call(what, http::Method::GET, &uri, None).await?;
            let page: Vec<T> = self.parse(what, &text)?;
            all.extend(page);
            match next_link(&headers) {
                Some(next) if next.starts_with(&self.origin) => uri = next,
                Some(next) => {
                    return Err(ApiError::new(
                        what,
                        None,
                        format!(
                            "the next page is on another host ({next}); not sending the token there"
                        ),
                    ));
                }
                None => return Ok(all),
            }
        }
        Ok(all)
    }

    /// Every comment of an issue or PR.
    pub async fn list_comments(&self, repo: &str, number: u64) -> Result<Vec<Comment>, ApiError> {
        let what = format!("list the comments of PR #{number}");
        self.list_all(
            &what,
            format!("/repos/{repo}/issues/{number}/comments?per_page=100"),
        )
        .await
    }

    pub async fn create_comment(
        &self,
        repo: &str,
        number: u64,
        body: &str,
    ) -> Result<Comment, ApiError> {
        let what = format!("create a comment on PR #{number}");
        let uri = format!("/repos/{repo}/issues/{number}/comments");
        self.send(
            &what,
            http::Method::POST,
            &uri,
            &serde_json::json!({ "body": body }),
        )
        .await
    }

    pub async fn update_comment(
        &self,
        repo: &str,
        id: u64,
        body: &str,
    ) -> Result<Comment, ApiError> {
        let what = format!("update comment {id}");
        let uri = format!("/repos/{repo}/issues/comments/{id}");
        self.send(
            &what,
            http::Method::PATCH,
            &uri,
            &serde_json::json!({ "body": body }),
        )
        .await
    }

    /// Every review comment of a pull request.
    pub async fn list_review_comments(
        &self,
        repo: &str,
        number: u64,
    ) -> Result<Vec<ReviewComment>, ApiError> {
        let what = format!("list the review comments of PR #{number}");
        self.list_all(
            &what,
            format!("/repos/{repo}/pulls/{number}/comments?per_page=100"),
        )
        .await
    }

    /// A review comment on one line of the head side of the diff.
    pub async fn create_review_comment(
        &self,
        repo: &str,
        number: u64,
        at: &Anchor,
        body: &str,
    ) -> Result<ReviewComment, ApiError> {
        let lines = match at.start_line {
            Some(s) => format!("lines {s}–{}", at.line),
            None => format!("line {}", at.line),
        };
        let what = format!("comment on {lines} of {} in PR #{number}", at.path);
        let uri = format!("/repos/{repo}/pulls/{number}/comments");
        let mut payload = serde_json::json!({
            "body": body,
            "commit_id": at.commit_id,
            "path": at.path,
            "line": at.line,
            "side": "RIGHT",
        });
        // A range is `start_line`/`start_side` beside `line`/`side`; sent only for a range.
        if let Some(start) = at.start_line {
            payload["start_line"] = start.into();
            payload["start_side"] = "RIGHT".into();
        }
        self.send(&what, http::Method::POST, &uri, &payload).await
    }

    pub async fn update_review_comment(
        &self,
        repo: &str,
        id: u64,
        body: &str,
    ) -> Result<ReviewComment, ApiError> {
        let what = format!("update review comment {id}");
        let uri = format!("/repos/{repo}/pulls/comments/{id}");
        self.send(
            &what,
            http::Method::PATCH,
            &uri,
            &serde_json::json!({ "body": body }),
        )
        .await
    }

    pub async fn delete_review_comment(&self, repo: &str, id: u64) -> Result<(), ApiError> {
        let what = format!("delete review comment {id}");
        let uri = format!("/repos/{repo}/pulls/comments/{id}");
        self.call(&what, http::Method::DELETE, &uri, None).await?;
        Ok(())
    }

    /// Who the token is: `GET /user`'s login, or `None` for a token that has no user (the
    /// Actions `GITHUB_TOKEN` and other GitHub App installation tokens answer 403 there).
    pub async fn whoami(&self) -> Result<Option<String>, ApiError> {
        match self
            .call("read the token's user", http::Method::GET, "/user", None)
            .await
        {
            Ok((_, text)) => Ok(Some(
                self.parse::<User>("read the token's user", &text)?.login,
            )),
            Err(e) if matches!(e.status, Some(401 | 403 | 404)) && !e.rate_limited => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The pull request as GitHub sees it now (head SHA, base repository).
    pub async fn pull(&self, repo: &str, number: u64) -> Result<Value, ApiError> {
        let what = format!("read PR #{number}");
        let uri = format!("/repos/{repo}/pulls/{number}");
        let (_, text) = self.call(&what, http::Method::GET, &uri, None).await?;
        self.parse(&what, &text)
    }
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// How long GitHub asks us to wait, if this is a rate limit: `Retry-After` seconds (429 and
/// secondary limits), else `x-ratelimit-reset` (epoch seconds) when the primary limit is spent.
/// A 403 that is not a rate limit (permissions) is not retried.
pub fn retry_after(status: StatusCode, h: &HeaderMap) -> Option<Duration> {
    if status != StatusCode::TOO_MANY_REQUESTS && status != StatusCode::FORBIDDEN {
        return None;
    }
    if let Some(secs) = header(h, "retry-after").and_then(|v| v.parse::<u64>().ok()) {
        return Some(Duration::from_secs(secs.max(1)));
    }
    let spent = header(h, "x-ratelimit-remaining") == Some("0");
    if spent && let Some(reset) = header(h, "x-ratelimit-reset").and_then(|v| v.parse::<u64>().ok())
    {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        // One second past the reset: the limit is renewed at, not before, that second.
        return Some(Duration::from_secs(reset.saturating_sub(now) + 1));
    }
    // A 429 without either header: GitHub's guidance is to wait a minute.
    (status == StatusCode::TOO_MANY_REQUESTS).then_some(Duration::from_secs(60))
}

/// The `rel="next"` target of a `Link` header (RFC 8288, as GitHub writes it).
pub fn next_link(h: &HeaderMap) -> Option<String> {
    for value in h.get_all("link") {
        let Ok(v) = value.to_str() else { continue };
        for part in v.split(',') {
            let mut pieces = part.split(';');
            let target = pieces.next()?.trim();
            let is_next = pieces.any(|p| {
                let p = p.trim().replace(' ', "");
                p == "rel=\"next\"" || p == "rel=next"
            });
            if is_next {
                return target
                    .strip_prefix('<')
                    .and_then(|t| t.strip_suffix('>'))
                    .map(str::to_string);
            }
        }
    }
    None
}

fn error_message(text: &str, status: StatusCode) -> String {
    let msg = serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| text.trim().chars().take(300).collect());
    if msg.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        crate::report::escape::cell(&msg, 300)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn link_header_next() {
        let h = headers(&[(
            "link",
            r#"<https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=2>; rel="next", <https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=5>; rel="last""#,
        )]);
        assert_eq!(
            next_link(&h).as_deref(),
            Some("https://api.github.com/repositories/1/issues/2/comments?per_page=100&page=2")
        );
        let last_only = headers(&[(
            "link",
            r#"<https://x/y?page=1>; rel="prev", <https://x/y?page=1>; rel="first""#,
        )]);
        assert_eq!(next_link(&last_only), None);
    }

    #[test]
    fn rate_limit_waits() {
        let h = headers(&[("retry-after", "7")]);
        assert_eq!(
            retry_after(StatusCode::TOO_MANY_REQUESTS, &h),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(StatusCode::FORBIDDEN, &h),
            Some(Duration::from_secs(7))
        );
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let spent = headers(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", &(now + 30).to_string()),
        ]);
        let w = retry_after(StatusCode::FORBIDDEN, &spent).unwrap();
        assert!((30..=32).contains(&w.as_secs()), "{w:?}");
        // A permissions 403 is final.
        let perm = headers(&[("x-ratelimit-remaining", "4999")]);
        assert_eq!(retry_after(StatusCode::FORBIDDEN, &perm), None);
        assert_eq!(retry_after(StatusCode::NOT_FOUND, &spent), None);
    }

    #[test]
    fn repo_names_are_checked() {
        assert!(check_repo("octo-org/hello.world").is_ok());
        for bad in ["x", "a/b/c", "../x", "a/..", "a b/c", "a/b?x"] {
            assert!(check_repo(bad).is_err(), "{bad}");
        }
    }
}
