//! The workflow's event payload (`GITHUB_EVENT_PATH`): which pull request, which commits, and
//! whether the head lives in a fork (then the token is read-only and cannot comment).

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct PullRequest {
    pub number: u64,
    pub base_sha: Option<String>,
    pub head_sha: Option<String>,
    /// "owner/name" of the repository the PR targets.
    pub base_repo: Option<String>,
    /// "owner/name" of the repository the head branch lives in (`None`: deleted fork).
    pub head_repo: Option<String>,
    pub fork: bool,
}

fn s(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// From a `pull_request` or `pull_request_target` payload.
pub fn pull_request(ev: &Value) -> Option<PullRequest> {
    let pr = ev.get("pull_request")?;
    let number = pr
        .get("number")
        .or_else(|| ev.get("number"))
        .and_then(Value::as_u64)?;
    let base_repo = s(pr, "/base/repo/full_name");
    let head_repo = s(pr, "/head/repo/full_name");
    // A deleted fork has `head.repo: null`; treat it as a fork (the token is still read-only).
    let fork = match (&base_repo, &head_repo) {
        (Some(b), Some(h)) => !b.eq_ignore_ascii_case(h),
        _ => true,
    };
    Some(PullRequest {
        number,
        base_sha: s(pr, "/base/sha"),
        head_sha: s(pr, "/head/sha"),
        base_repo,
        head_repo,
        fork,
    })
}

/// From a `workflow_run` payload (the job that posts a fork PR's report).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowRun {
    pub head_sha: String,
    /// The event that triggered the run being reported on ("pull_request").
    pub event: Option<String>,
    /// PR numbers GitHub attached to the run; empty for fork PRs.
    pub pull_requests: Vec<u64>,
    /// The page of the reported run (where its artifacts are).
    pub html_url: Option<String>,
}

pub fn workflow_run(ev: &Value) -> Option<WorkflowRun> {
    let run = ev.get("workflow_run")?;
    Some(WorkflowRun {
        head_sha: s(run, "/head_sha")?,
        event: s(run, "/event"),
        html_url: s(run, "/html_url"),
        pull_requests: run
            .get("pull_requests")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.get("number").and_then(Value::as_u64))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

/// Read and parse the event payload (`GITHUB_EVENT_PATH`), if there is one.
pub fn load(path: Option<&std::path::Path>) -> Option<Value> {
    let text = std::fs::read_to_string(path?).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_repo_fork_and_deleted_fork() {
        let ev = |head: Value| {
            json!({"number": 7, "pull_request": {"number": 7,
                "base": {"sha": "b", "repo": {"full_name": "o/r"}},
                "head": {"sha": "h", "repo": head}}})
        };
        let same = pull_request(&ev(json!({"full_name": "O/R"}))).unwrap();
        assert!(!same.fork);
        assert_eq!(same.head_sha.as_deref(), Some("h"));
        assert!(pull_request(&ev(json!({"full_name": "x/r"}))).unwrap().fork);
        assert!(pull_request(&ev(Value::Null)).unwrap().fork);
        assert_eq!(pull_request(&json!({"push": {}})), None);
    }
}
