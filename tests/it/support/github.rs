//! GitHub REST on the loopback fake: the issue-comment, pull-request and pull-request review
//! comment endpoints with GitHub's
//! paths, JSON shapes, status codes, `Link` pagination and rate-limit headers, optionally under a
//! GitHub Enterprise `/api/v3` prefix. It keeps comments in memory, checks the bearer token, and
//! can be scripted to answer the next matching request with a fault (403 rate limit, 429, 403
//! read-only token, 500, …). The fake records every request.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::fake::{Fake, Request, Step};

pub const TOKEN: &str = "ghs_loopbackTOKEN0123456789";
pub const REPO: &str = "octo-org/mcp-calendar";
/// The bot that GITHUB_TOKEN comments as.
pub const BOT: &str = "github-actions[bot]";

#[derive(Debug, Clone)]
pub struct StoredComment {
    pub id: u64,
    pub issue: u64,
    pub body: String,
    pub login: String,
    pub kind: String,
    pub updated: u32,
}

/// A pull-request review comment: on one line of one file of the diff.
#[derive(Debug, Clone)]
pub struct StoredReview {
    pub id: u64,
    pub pr: u64,
    pub body: String,
    pub login: String,
    pub kind: String,
    pub path: String,
    pub line: u64,
    /// The first line of a comment on several lines (`start_line`), `None` for one line.
    pub start_line: Option<u64>,
    pub commit_id: String,
    pub updated: u32,
}

/// A scripted answer for the next request whose method matches and whose path contains `path`.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: &'static str,
    pub path: &'static str,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Fault {
    /// Primary rate limit spent: 403, `x-ratelimit-remaining: 0`, reset `secs` from now.
    pub fn rate_limited(method: &'static str, path: &'static str, secs: u64) -> Fault {
        Fault {
            method,
            path,
            status: 403,
            headers: vec![
                ("x-ratelimit-limit".into(), "1000".into()),
                ("x-ratelimit-remaining".into(), "0".into()),
                ("x-ratelimit-used".into(), "1000".into()),
                ("x-ratelimit-reset".into(), (now() + secs).to_string()),
                ("x-ratelimit-resource".into(), "core".into()),
            ],
            body: json!({
                "message": "API rate limit exceeded for installation ID 1234.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
                "status": "403"
            }),
        }
    }

    /// Secondary rate limit: 429 with `Retry-After`.
    pub fn too_many(method: &'static str, path: &'static str, retry_after: u64) -> Fault {
        Fault {
            method,
            path,
            status: 429,
            headers: vec![("retry-after".into(), retry_after.to_string())],
            body: json!({
                "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
                "status": "429"
            }),
        }
    }

    /// A read-only token (fork PR, or no `pull-requests: write`).
    pub fn read_only(method: &'static str, path: &'static str) -> Fault {
        Fault {
            method,
            path,
            status: 403,
            headers: vec![],
            body: json!({
                "message": "Resource not accessible by integration",
                "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
                "status": "403"
            }),
        }
    }

    pub fn status(method: &'static str, path: &'static str, status: u16, message: &str) -> Fault {
        Fault {
            method,
            path,
            status,
            headers: vec![],
            body: json!({"message": message, "status": status.to_string()}),
        }
    }
}

#[derive(Default)]
struct State {
    /// `http://127.0.0.1:PORT{prefix}`, what GitHub's URLs in bodies start with.
    base: String,
    comments: Vec<StoredComment>,
    next_id: u64,
    faults: VecDeque<Fault>,
    pulls: HashMap<u64, Value>,
    reviews: Vec<StoredReview>,
    /// Lines of each path that are in the pull request's diff (review comments can only go
    /// there); a path not listed accepts any line.
    diff_lines: HashMap<String, Vec<u64>>,
    /// Largest page we serve, whatever `per_page` asks (to exercise pagination cheaply).
    page_size: usize,
    /// The token's user for `GET /user` (a personal access token); `None` answers as GitHub
    /// does for the Actions `GITHUB_TOKEN`: 403, the token has no user.
    token_user: Option<String>,
    /// Release assets by `owner/repo/tag/name`, served from the web host (github.com), not the
    /// API: public downloads, no token.
    assets: HashMap<String, Vec<u8>>,
}

pub struct FakeGithub {
    fake: Fake,
    state: Arc<Mutex<State>>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

impl FakeGithub {
    pub fn start() -> FakeGithub {
        Self::start_with_prefix("")
    }

    /// `prefix` is e.g. "/api/v3" for GitHub Enterprise Server.
    pub fn start_with_prefix(prefix: &str) -> FakeGithub {
        let state = Arc::new(Mutex::new(State {
            next_id: 1_000_000_001,
            page_size: 100,
            token_user: None,
            ..State::default()
        }));
        let (st, pre) = (state.clone(), prefix.to_string());
        let fake = Fake::handler(move |req| handle(req, &pre, &st));
        state.lock().unwrap().base = format!("http://{}{prefix}", fake.addr);
        FakeGithub { fake, state }
    }

    /// What `GITHUB_SERVER_URL` is set to: the web host that serves release downloads.
    pub fn server_url(&self) -> String {
        format!("http://{}", self.fake.addr)
    }

    /// Publish a release asset at `{server}/{repo}/releases/download/{tag}/{name}`.
    pub fn add_asset(&self, repo: &str, tag: &str, name: &str, bytes: Vec<u8>) {
        let key = format!("{repo}/{tag}/{name}");
        self.state.lock().unwrap().assets.insert(key, bytes);
    }

    /// What `GITHUB_API_URL` is set to.
    pub fn api_url(&self) -> String {
        self.state.lock().unwrap().base.clone()
    }

    /// Answer `GET /user` with `login`, as for a personal access token.
    pub fn set_token_user(&self, login: &str) {
        self.state.lock().unwrap().token_user = Some(login.to_string());
    }

    pub fn set_page_size(&self, n: usize) {
        self.state.lock().unwrap().page_size = n;
    }

    pub fn push_fault(&self, f: Fault) {
        self.state.lock().unwrap().faults.push_back(f);
    }

    /// Seed a comment as if posted earlier by `login` (`kind` "Bot" or "User").
    pub fn add_comment(&self, issue: u64, body: &str, login: &str, kind: &str) -> u64 {
        let mut s = self.state.lock().unwrap();
        let id = s.next_id;
        s.next_id += 1;
        s.comments.push(StoredComment {
            id,
            issue,
            body: body.into(),
            login: login.into(),
            kind: kind.into(),
            updated: 0,
        });
        id
    }

    /// Register a pull request for `GET /repos/{o}/{r}/pulls/{n}`.
    pub fn add_pull(&self, number: u64, head_sha: &str, base_sha: &str) {
        let mut s = self.state.lock().unwrap();
        let pr = pull_json(&s.base, number, head_sha, base_sha);
        s.pulls.insert(number, pr);
    }

    /// The lines of `path` in the pull request's diff: a review comment elsewhere is refused
    /// (422, as GitHub refuses a line it cannot resolve).
    pub fn set_diff_lines(&self, path: &str, lines: &[u64]) {
        let mut s = self.state.lock().unwrap();
        s.diff_lines.insert(path.to_string(), lines.to_vec());
    }

    pub fn reviews(&self, pr: u64) -> Vec<StoredReview> {
        self.state
            .lock()
            .unwrap()
            .reviews
            .iter()
            .filter(|c| c.pr == pr)
            .cloned()
            .collect()
    }

    pub fn comments(&self, issue: u64) -> Vec<StoredComment> {
        self.state
            .lock()
            .unwrap()
            .comments
            .iter()
            .filter(|c| c.issue == issue)
            .cloned()
            .collect()
    }

    pub fn seen(&self) -> Vec<Request> {
        self.fake.requests()
    }

    /// Requests other than reads.
    pub fn writes(&self) -> Vec<Request> {
        self.seen()
            .into_iter()
            .filter(|s| s.method != "GET")
            .collect()
    }
}

fn user_json(base: &str, login: &str, kind: &str) -> Value {
    let id = if kind == "Bot" { 41898282 } else { 583231 };
    let enc = login.replace('[', "%5B").replace(']', "%5D");
    json!({
        "login": login,
        "id": id,
        "node_id": if kind == "Bot" { "MDM6Qm90NDE4OTgyODI=" } else { "MDQ6VXNlcjU4MzIzMQ==" },
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "gravatar_id": "",
        "url": format!("{base}/users/{enc}"),
        "html_url": format!("https://github.com/{enc}"),
        "followers_url": format!("{base}/users/{enc}/followers"),
        "following_url": format!("{base}/users/{enc}/following{{/other_user}}"),
        "gists_url": format!("{base}/users/{enc}/gists{{/gist_id}}"),
        "starred_url": format!("{base}/users/{enc}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{base}/users/{enc}/subscriptions"),
        "organizations_url": format!("{base}/users/{enc}/orgs"),
        "repos_url": format!("{base}/users/{enc}/repos"),
        "events_url": format!("{base}/users/{enc}/events{{/privacy}}"),
        "received_events_url": format!("{base}/users/{enc}/received_events"),
        "type": kind,
        "user_view_type": "public",
        "site_admin": false
    })
}

fn comment_json(base: &str, c: &StoredComment) -> Value {
    json!({
        "url": format!("{base}/repos/{REPO}/issues/comments/{}", c.id),
        "html_url": format!("https://github.com/{REPO}/pull/{}#issuecomment-{}", c.issue, c.id),
        "issue_url": format!("{base}/repos/{REPO}/issues/{}", c.issue),
        "id": c.id,
        "node_id": format!("IC_kwDOLoopback{}", c.id),
        "user": user_json(base, &c.login, &c.kind),
        "created_at": "2025-06-02T10:15:00Z",
        "updated_at": if c.updated > 0 { "2025-06-02T10:20:00Z" } else { "2025-06-02T10:15:00Z" },
        "author_association": if c.kind == "Bot" { "NONE" } else { "CONTRIBUTOR" },
        "body": c.body,
        "reactions": {
            "url": format!("{base}/repos/{REPO}/issues/comments/{}/reactions", c.id),
            "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
            "confused": 0, "heart": 0, "rocket": 0, "eyes": 0
        },
        "performed_via_github_app": if c.kind == "Bot" {
            json!({"id": 15368, "slug": "github-actions", "node_id": "MDM6QXBwMTUzNjg=", "name": "GitHub Actions"})
        } else { Value::Null }
    })
}

fn review_json(base: &str, c: &StoredReview) -> Value {
    let url = format!("{base}/repos/{REPO}/pulls/comments/{}", c.id);
    let html = format!(
        "https://github.com/{REPO}/pull/{}#discussion_r{}",
        c.pr, c.id
    );
    let pull = format!("{base}/repos/{REPO}/pulls/{}", c.pr);
    json!({
        "url": url,
        "pull_request_review_id": 1_500_000_000u64 + c.id % 1000,
        "id": c.id,
        "node_id": format!("PRRC_kwDOLoopback{}", c.id),
        "diff_hunk": format!("@@ -{0},3 +{0},3 @@\n-      \"description\": \"…\",\n+      \"description\": \"…\",", c.line),
        "path": c.path,
        "commit_id": c.commit_id,
        "original_commit_id": c.commit_id,
        "user": user_json(base, &c.login, &c.kind),
        "body": c.body,
        "created_at": "2025-06-02T10:15:00Z",
        "updated_at": if c.updated > 0 { "2025-06-02T10:20:00Z" } else { "2025-06-02T10:15:00Z" },
        "html_url": html,
        "pull_request_url": pull,
        "author_association": if c.kind == "Bot" { "NONE" } else { "CONTRIBUTOR" },
        "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pull}},
        "reactions": {
            "url": format!("{base}/repos/{REPO}/pulls/comments/{}/reactions", c.id),
            "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0,
            "confused": 0, "heart": 0, "rocket": 0, "eyes": 0
        },
        "start_line": c.start_line,
        "original_start_line": c.start_line,
        "start_side": c.start_line.map(|_| "RIGHT"),
        "line": c.line,
        "original_line": c.line,
        "side": "RIGHT",
        "position": 1,
        "original_position": 1,
        "subject_type": "line"
    })
}

fn pull_json(base: &str, number: u64, head_sha: &str, base_sha: &str) -> Value {
    let repo = |full: &str| {
        json!({"id": 778899, "node_id": "R_kgDOLoopback", "name": full.split('/').nth(1).unwrap(),
               "full_name": full, "private": false, "fork": false,
               "owner": user_json(base, full.split('/').next().unwrap(), "Organization"),
               "html_url": format!("https://github.com/{full}"), "url": format!("{base}/repos/{full}"),
               "default_branch": "main"})
    };
    json!({
        "url": format!("{base}/repos/{REPO}/pulls/{number}"),
        "id": 2_000_000_000u64 + number,
        "node_id": "PR_kwDOLoopback",
        "html_url": format!("https://github.com/{REPO}/pull/{number}"),
        "number": number,
        "state": "open",
        "locked": false,
        "title": "Tighten tool descriptions",
        "user": user_json(base, "contributor", "User"),
        "body": null,
        "draft": false,
        "head": {"label": "octo-org:copy-edit", "ref": "copy-edit", "sha": head_sha,
                 "user": user_json(base, "octo-org", "Organization"), "repo": repo(REPO)},
        "base": {"label": "octo-org:main", "ref": "main", "sha": base_sha,
                 "user": user_json(base, "octo-org", "Organization"), "repo": repo(REPO)},
        "merged": false,
        "mergeable_state": "clean"
    })
}

/// A GitHub answer: its content type, API-version and request-id headers, and the rate-limit
/// headers of a healthy quota unless the answer brings its own.
fn respond(status: u16, headers: Vec<(String, String)>, body: &Value) -> Step {
    let mut step = Step::reply(status, body.to_string())
        .header("content-type", "application/json; charset=utf-8")
        .header("x-github-api-version-selected", "2022-11-28")
        .header("x-github-media-type", "github.v3; format=json")
        .header("x-github-request-id", "0400:1F2E:ABCDEF:123456:6650AA00");
    if !headers.iter().any(|(k, _)| k == "x-ratelimit-remaining") {
        step = step
            .header("x-ratelimit-limit", "5000")
            .header("x-ratelimit-remaining", "4990")
            .header("x-ratelimit-used", "10")
            .header("x-ratelimit-reset", &(now() + 3600).to_string())
            .header("x-ratelimit-resource", "core");
    }
    headers.iter().fold(step, |s, (k, v)| s.header(k, v))
}

fn handle(req: &Request, prefix: &str, state: &Mutex<State>) -> Step {
    if let Some(step) = download(req, state) {
        return step;
    }
    let (status, headers, body) = route(req, prefix, state);
    if status == 204 {
        // No Content: GitHub sends no body at all.
        let mut step = Step::reply(204, "").header("x-github-api-version-selected", "2022-11-28");
        for (k, v) in &headers {
            step = step.header(k, v);
        }
        return step;
    }
    respond(status, headers, &body)
}

/// The web host's release downloads, as github.com answers them: `GET
/// /{owner}/{repo}/releases/download/{tag}/{name}` redirects (302) to the asset store, which
/// serves the bytes as `application/octet-stream`; an unknown asset is a 404 page.
fn download(req: &Request, state: &Mutex<State>) -> Option<Step> {
    let path = req.path();
    let not_found =
        || Step::reply(404, "Not Found").header("content-type", "text/plain; charset=utf-8");
    if let Some(key) = path.strip_prefix("/_release-assets/") {
        let s = state.lock().unwrap();
        return Some(match s.assets.get(key) {
            Some(b) if req.method == "GET" => Step::bytes(200, b.clone())
                .header("content-type", "application/octet-stream")
                .header(
                    "content-disposition",
                    &format!("attachment; filename={}", key.rsplit('/').next().unwrap()),
                ),
            _ => not_found(),
        });
    }
    let seg: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let [owner, repo, "releases", "download", tag, name] = seg.as_slice() else {
        return None;
    };
    let key = format!("{owner}/{repo}/{tag}/{name}");
    let known = state.lock().unwrap().assets.contains_key(&key);
    Some(if known && req.method == "GET" {
        Step::reply(302, "")
            .header("content-type", "text/html; charset=utf-8")
            .header("location", &format!("/_release-assets/{key}"))
    } else {
        not_found()
    })
}

/// Status, extra headers and JSON body of one API answer.
type Answer = (u16, Vec<(String, String)>, Value);

fn route(req: &Request, prefix: &str, state: &Mutex<State>) -> Answer {
    let mut s = state.lock().unwrap();
    let base = s.base.clone();
    let base = base.as_str();
    if req.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return (
            401,
            vec![],
            json!({"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"}),
        );
    }
    let path = req.path().to_string();
    if let Some(i) = s
        .faults
        .iter()
        .position(|f| f.method == req.method && path.contains(f.path))
    {
        let f = s.faults.remove(i).unwrap();
        return (f.status, f.headers, f.body);
    }
    let not_found = (
        404,
        vec![],
        json!({"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}),
    );
    let Some(rest) = path.strip_prefix(prefix) else {
        return not_found;
    };
    let seg: Vec<&str> = rest.trim_start_matches('/').split('/').collect();
    let repo_ok = |o: &str, r: &str| format!("{o}/{r}") == REPO;
    match (req.method.as_str(), seg.as_slice()) {
        ("GET", ["user"]) => match &s.token_user {
            Some(login) => (200, vec![], user_json(base, login, "User")),
            None => (
                403,
                vec![],
                json!({"message": "Resource not accessible by integration",
                       "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
                       "status": "403"}),
            ),
        },
        // GitHub's own `Link` targets use the repository id form.
        ("GET", ["repos", o, r, "issues", n, "comments"]) if repo_ok(o, r) => {
            list(&s, base, n.parse().unwrap_or(0), req)
        }
        ("GET", ["repositories", "778899", "issues", n, "comments"]) => {
            list(&s, base, n.parse().unwrap_or(0), req)
        }
        ("POST", ["repos", o, r, "issues", n, "comments"]) if repo_ok(o, r) => {
            let Some(text) = req.body.get("body").and_then(Value::as_str) else {
                return (
                    422,
                    vec![],
                    json!({"message": "Invalid request.\n\n\"body\" wasn't supplied.", "status": "422"}),
                );
            };
            if text.chars().count() > 65_536 {
                return (
                    422,
                    vec![],
                    json!({"message": "Validation Failed", "errors": [{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}], "status": "422"}),
                );
            }
            let id = s.next_id;
            s.next_id += 1;
            let c = StoredComment {
                id,
                issue: n.parse().unwrap_or(0),
                body: text.to_string(),
                login: writer(&s).0,
                kind: writer(&s).1,
                updated: 0,
            };
            let out = comment_json(base, &c);
            s.comments.push(c);
            let loc = format!("{base}/repos/{REPO}/issues/comments/{id}");
            (201, vec![("location".into(), loc)], out)
        }
        ("PATCH", ["repos", o, r, "issues", "comments", id]) if repo_ok(o, r) => {
            let id: u64 = id.parse().unwrap_or(0);
            let text = match edited_body(req) {
                Ok(t) => t,
                Err(refused) => return refused,
            };
            match s.comments.iter_mut().find(|c| c.id == id) {
                Some(c) => {
                    c.body = text.to_string();
                    c.updated += 1;
                    let c = c.clone();
                    (200, vec![], comment_json(base, &c))
                }
                None => not_found,
            }
        }
        ("GET", ["repos", o, r, "pulls", n, "comments"]) if repo_ok(o, r) => {
            let pr: u64 = n.parse().unwrap_or(0);
            let per_page = req
                .query("per_page")
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(30)
                .min(s.page_size)
                .max(1);
            let items: Vec<Value> = s
                .reviews
                .iter()
                .filter(|c| c.pr == pr)
                .take(per_page)
                .map(|c| review_json(base, c))
                .collect();
            (200, vec![], Value::Array(items))
        }
        ("POST", ["repos", o, r, "pulls", n, "comments"]) if repo_ok(o, r) => {
            let field = |k: &str| req.body.get(k).cloned();
            for k in ["body", "commit_id", "path", "line"] {
                if field(k).is_none() {
                    return (
                        422,
                        vec![],
                        json!({"message": format!("Invalid request.\n\n\"{k}\" wasn't supplied."),
                               "documentation_url": "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request",
                               "status": "422"}),
                    );
                }
            }
            let path = field("path")
                .unwrap()
                .as_str()
                .unwrap_or_default()
                .to_string();
            let line = field("line").unwrap().as_u64().unwrap_or(0);
            let start_line = field("start_line").and_then(|v| v.as_u64());
            let in_diff = |l: u64| {
                s.diff_lines
                    .get(&path)
                    .is_none_or(|lines| lines.contains(&l))
            };
            let side_ok = |k: &str| {
                field(k)
                    .and_then(|v| v.as_str().map(String::from))
                    .is_none_or(|v| v == "RIGHT" || v == "LEFT")
            };
            // What GitHub answers for a line it cannot resolve, and for a range that does not
            // run forward or starts outside the diff.
            let refused = |field: &str, message: &str| {
                (
                    422,
                    vec![],
                    json!({"message": "Validation Failed",
                           "errors": [{"resource": "PullRequestReviewComment", "code": "custom",
                                       "field": field, "message": message}],
                           "documentation_url": "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request",
                           "status": "422"}),
                )
            };
            if !in_diff(line) || !side_ok("side") {
                return refused("pull_request_review_thread.line", "could not be resolved");
            }
            if let Some(start) = start_line {
                if start >= line {
                    return refused(
                        "pull_request_review_thread.start_line",
                        "pull_request_review_thread.start_line must precede the end line.",
                    );
                }
                if !in_diff(start) || !side_ok("start_side") {
                    return refused(
                        "pull_request_review_thread.start_line",
                        "pull_request_review_thread.start_line must be part of the same hunk as the line.",
                    );
                }
            }
            let id = s.next_id;
            s.next_id += 1;
            let c = StoredReview {
                id,
                pr: n.parse().unwrap_or(0),
                body: field("body")
                    .unwrap()
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                login: writer(&s).0,
                kind: writer(&s).1,
                path,
                line,
                start_line,
                commit_id: field("commit_id")
                    .unwrap()
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                updated: 0,
            };
            let out = review_json(base, &c);
            s.reviews.push(c);
            let loc = format!("{base}/repos/{REPO}/pulls/comments/{id}");
            (201, vec![("location".into(), loc)], out)
        }
        ("PATCH", ["repos", o, r, "pulls", "comments", id]) if repo_ok(o, r) => {
            let id: u64 = id.parse().unwrap_or(0);
            let text = match edited_body(req) {
                Ok(t) => t,
                Err(refused) => return refused,
            };
            match s.reviews.iter_mut().find(|c| c.id == id) {
                Some(c) => {
                    c.body = text.to_string();
                    c.updated += 1;
                    let c = c.clone();
                    (200, vec![], review_json(base, &c))
                }
                None => not_found,
            }
        }
        ("DELETE", ["repos", o, r, "pulls", "comments", id]) if repo_ok(o, r) => {
            let id: u64 = id.parse().unwrap_or(0);
            match s.reviews.iter().position(|c| c.id == id) {
                Some(i) => {
                    s.reviews.remove(i);
                    (204, vec![], Value::Null)
                }
                None => not_found,
            }
        }
        ("GET", ["repos", o, r, "pulls", n]) if repo_ok(o, r) => {
            match s.pulls.get(&n.parse().unwrap_or(0)) {
                Some(p) => (200, vec![], p.clone()),
                None => not_found,
            }
        }
        _ => not_found,
    }
}

/// Who a new comment is written by: the token's user, or the Actions bot.
fn writer(s: &State) -> (String, String) {
    match &s.token_user {
        Some(login) => (login.clone(), "User".into()),
        None => (BOT.into(), "Bot".into()),
    }
}

/// An edit's new body, or GitHub's 422 for a missing or too long one.
fn edited_body(req: &Request) -> Result<&str, Answer> {
    match req.body.get("body").and_then(Value::as_str) {
        None => Err((
            422,
            vec![],
            json!({"message": "Invalid request.", "status": "422"}),
        )),
        Some(t) if t.chars().count() > 65_536 => Err((
            422,
            vec![],
            json!({"message": "Validation Failed", "status": "422"}),
        )),
        Some(t) => Ok(t),
    }
}

fn list(s: &State, base: &str, issue: u64, req: &Request) -> (u16, Vec<(String, String)>, Value) {
    let num = |key: &str| req.query(key).and_then(|v| v.parse::<usize>().ok());
    let per_page = num("per_page").unwrap_or(30).min(s.page_size).max(1);
    let page = num("page").unwrap_or(1).max(1);
    let all: Vec<&StoredComment> = s.comments.iter().filter(|c| c.issue == issue).collect();
    let last = all.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|c| comment_json(base, c))
        .collect();
    let mut headers = Vec::new();
    if last > 1 {
        let url = |p: usize| {
            format!(
                "<{base}/repositories/778899/issues/{issue}/comments?per_page={per_page}&page={p}>"
            )
        };
        let mut rels = Vec::new();
        if page > 1 {
            rels.push(format!("{}; rel=\"prev\"", url(page - 1)));
        }
        if page < last {
            rels.push(format!("{}; rel=\"next\"", url(page + 1)));
            rels.push(format!("{}; rel=\"last\"", url(last)));
        }
        if page > 1 {
            rels.push(format!("{}; rel=\"first\"", url(1)));
        }
        headers.push(("link".to_string(), rels.join(", ")));
    }
    (200, headers, Value::Array(items))
}
