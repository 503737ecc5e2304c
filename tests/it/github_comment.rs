//! `check`/`diff` in GitHub mode and `driftgate comment`, end to end against a loopback server
//! speaking GitHub's REST shapes: sticky comment create/update, pagination, rate limits, fork and
//! read-only fallbacks, errors that name the call, job summary, step outputs, report file.

use std::time::Instant;

use serde_json::Value;

use crate::support::github::{BOT, FakeGithub, Fault, REPO, TOKEN};
use crate::support::runner::{Runner, event, fixture};

const BASE_SHA: &str = "3f1c2b0a9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a";
const HEAD_SHA: &str = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b";
const MARKER: &str = "<!-- driftgate:driftgate:gate -->";

/// A runner whose workspace holds the calendar example's base and head tool files.
fn runner(gh: &FakeGithub, event_name: &str) -> Runner {
    let r = Runner::new(gh, &event(event_name, BASE_SHA, HEAD_SHA));
    for f in ["tools.base.json", "tools.head.json"] {
        std::fs::copy(fixture(&format!("examples/calendar/{f}")), r.path(f)).unwrap();
    }
    r
}

/// `diff` of the example: one tool changed (description and an optional property). Fails with
/// `--fail-on unknown`, passes with the default `high`.
fn diff_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    // The head's description shift is a warning here: these tests switch pass and fail with
    // `--fail-on` (a description change is `unknown`).
    let mut v = vec![
        "diff",
        "tools.base.json",
        "tools.head.json",
        "--no-embed",
        "--meaning-policy",
        "review",
    ];
    v.extend_from_slice(extra);
    v
}

fn report_json(r: &Runner) -> Value {
    serde_json::from_str(&r.read("driftgate-report.json")).expect("report file is JSON")
}

#[test]
fn failing_run_creates_one_sticky_comment_and_reruns_update_it_in_place() {
    let gh = FakeGithub::start();
    gh.add_comment(
        7,
        "LGTM, but please check the descriptions @octocat",
        "reviewer",
        "User",
    );
    let r = runner(&gh, "pull_request.synchronize.json");
    let (code, _, err) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1, "the gate's verdict is the exit code: {err}");
    let ours: Vec<_> = gh
        .comments(7)
        .into_iter()
        .filter(|c| c.login == BOT)
        .collect();
    assert_eq!(ours.len(), 1, "{err}");
    let body = &ours[0].body;
    assert_eq!(body.lines().next(), Some(MARKER));
    assert!(
        body.lines()
            .nth(1)
            .unwrap()
            .starts_with("### ❌ driftgate diff: **fail** — "),
        "{body}"
    );
    assert!(body.contains("`schedule_appointment`"), "{body}");
    let post = gh
        .writes()
        .into_iter()
        .find(|s| s.method == "POST")
        .unwrap();
    assert_eq!(post.path(), format!("/repos/{REPO}/issues/7/comments"));
    assert_eq!(
        post.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(post.header("accept"), Some("application/vnd.github+json"));
    assert_eq!(post.header("x-github-api-version"), Some("2022-11-28"));
    assert!(
        post.header("user-agent").is_some(),
        "GitHub rejects requests without a User-Agent"
    );

    // Same result again: the comment is found and left as is (no second comment, no edit).
    let (code, _, _) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1);
    assert_eq!(gh.writes().len(), 1, "an identical body is not re-sent");

    // A different result: updated in place.
    let (code, _, err) = r.driftgate(&diff_args(&["--fail-on", "warning"]));
    assert_eq!(code, 0, "{err}");
    let writes = gh.writes();
    assert_eq!(writes.len(), 2);
    assert_eq!(writes[1].method, "PATCH");
    assert_eq!(
        writes[1].path(),
        format!("/repos/{REPO}/issues/comments/{}", ours[0].id)
    );
    let after = gh.comments(7);
    assert_eq!(after.iter().filter(|c| c.login == BOT).count(), 1);
    let updated = after.iter().find(|c| c.login == BOT).unwrap();
    assert!(updated.body.contains("**Now passes.**"), "{}", updated.body);
    assert!(
        updated
            .body
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("### ✅ driftgate diff: **pass**")
    );
}

#[test]
fn auto_leaves_a_clean_pr_alone_but_always_and_never_do_what_they_say() {
    let gh = FakeGithub::start();
    let r = runner(&gh, "pull_request.synchronize.json");
    let clean = ["diff", "tools.base.json", "tools.base.json", "--no-embed"];
    let (code, _, err) = r.driftgate(&clean);
    assert_eq!(code, 0, "{err}");
    assert!(
        gh.writes().is_empty(),
        "auto: no comment on a PR that changed no tool"
    );
    // It asked who its token is (to adopt only its own comment), then looked for one to update.
    assert_eq!(
        gh.seen().len(),
        2,
        "it looked for an earlier comment to update"
    );

    let (code, _, _) = r.driftgate(&[&clean[..], &["--comment", "never"]].concat());
    assert_eq!(code, 0);
    assert_eq!(gh.seen().len(), 2, "never: no API call at all");

    let (code, _, _) = r.driftgate(&[&clean[..], &["--comment", "on-failure"]].concat());
    assert_eq!(code, 0);
    assert!(
        gh.writes().is_empty(),
        "on-failure: passing, nothing to update"
    );

    // A passing PR that changed a tool: auto comments (there is drift to review), on-failure not.
    let (code, _, _) = r.driftgate(&diff_args(&["--comment", "on-failure"]));
    assert_eq!(code, 0);
    assert!(gh.writes().is_empty());
    let (code, _, _) = r.driftgate(&diff_args(&[]));
    assert_eq!(code, 0);
    assert_eq!(gh.writes().len(), 1);

    let gh2 = FakeGithub::start();
    let r2 = runner(&gh2, "pull_request.synchronize.json");
    let (code, _, _) = r2.driftgate(&[&clean[..], &["--comment", "always"]].concat());
    assert_eq!(code, 0);
    let c = gh2.comments(7);
    assert_eq!(c.len(), 1);
    assert!(
        c[0].body.contains("No tool definitions changed"),
        "{}",
        c[0].body
    );
}

#[test]
fn an_earlier_failing_comment_on_a_later_page_is_found_and_turned_to_now_passes() {
    let gh = FakeGithub::start();
    gh.set_page_size(2);
    for i in 0..5 {
        gh.add_comment(7, &format!("discussion {i}"), "reviewer", "User");
    }
    // A user quoting our marker must not be mistaken for ours.
    gh.add_comment(
        7,
        &format!("{MARKER}\nI can write this too"),
        "mallory",
        "User",
    );
    let ours = gh.add_comment(
        7,
        &format!("{MARKER}\n### ❌ driftgate diff: **fail** — 1 change(s) at or above unknown"),
        BOT,
        "Bot",
    );
    let r = runner(&gh, "pull_request.synchronize.json");
    let (code, _, err) = r.driftgate(&["diff", "tools.base.json", "tools.base.json", "--no-embed"]);
    assert_eq!(code, 0, "{err}");
    let gets: Vec<String> = gh
        .seen()
        .into_iter()
        .filter(|s| s.method == "GET" && s.path() != "/user")
        .map(|s| s.target)
        .collect();
    assert_eq!(gets.len(), 4, "7 comments at 2 per page: {gets:?}");
    assert_eq!(
        gets[0],
        format!("/repos/{REPO}/issues/7/comments?per_page=100")
    );
    assert_eq!(
        gets[3], "/repositories/778899/issues/7/comments?per_page=2&page=4",
        "followed Link rel=next"
    );
    let writes = gh.writes();
    assert_eq!(writes.len(), 1);
    assert_eq!(
        writes[0].path(),
        format!("/repos/{REPO}/issues/comments/{ours}")
    );
    let body = writes[0].body["body"].as_str().unwrap();
    assert!(body.contains("**Now passes.**"), "{body}");
    let mallory = gh
        .comments(7)
        .into_iter()
        .find(|c| c.login == "mallory")
        .unwrap();
    assert_eq!(mallory.updated, 0);
}

#[test]
fn rate_limits_are_waited_out_then_the_comment_is_posted() {
    let gh = FakeGithub::start();
    gh.push_fault(Fault::rate_limited("GET", "/issues/7/comments", 1));
    gh.push_fault(Fault::too_many("POST", "/issues/7/comments", 1));
    let r = runner(&gh, "pull_request.synchronize.json");
    let t = Instant::now();
    let (code, _, err) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1, "{err}");
    assert!(
        t.elapsed().as_secs_f64() >= 2.0,
        "waited for both resets: {:?}",
        t.elapsed()
    );
    assert_eq!(gh.comments(7).len(), 1, "{err}");
    assert!(err.contains("HTTP 403; retrying in"), "{err}");
    assert!(err.contains("HTTP 429; retrying in"), "{err}");
    let methods: Vec<String> = gh
        .seen()
        .into_iter()
        .filter(|s| s.path() != "/user")
        .map(|s| s.method)
        .collect();
    assert_eq!(methods, ["GET", "GET", "POST", "POST"]);
}

#[test]
fn a_rate_limit_longer_than_the_cap_is_reported_and_the_verdict_stands() {
    let gh = FakeGithub::start();
    gh.push_fault(Fault::rate_limited("GET", "/issues/7/comments", 3600));
    let mut r = runner(&gh, "pull_request.synchronize.json");
    r.set("DRIFTGATE_GITHUB_MAX_WAIT", "5");
    let t = Instant::now();
    let (code, out, _) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert!(t.elapsed().as_secs() < 30, "did not wait an hour");
    assert_eq!(code, 1, "exit code is the gate's, not the API's");
    let warning = out
        .lines()
        .find(|l| l.starts_with("::warning::"))
        .expect(&out);
    assert!(
        warning.contains("list the comments of PR #7 (GET /repos/octo-org/mcp-calendar/issues/7/comments) failed: HTTP 403"),
        "{warning}"
    );
    assert!(warning.contains("rate limited"), "{warning}");
    assert!(
        r.read("summary.md").contains("**fail**"),
        "the summary still has the verdict"
    );
}

#[test]
fn other_api_errors_name_the_call_and_keep_the_exit_code() {
    let gh = FakeGithub::start();
    gh.push_fault(Fault::status(
        "POST",
        "/issues/7/comments",
        422,
        "Validation Failed",
    ));
    let r = runner(&gh, "pull_request.synchronize.json");
    let (code, out, err) = r.driftgate(&diff_args(&[]));
    assert_eq!(code, 0, "a passing gate still passes: {err}");
    assert!(
        out.contains("::warning::driftgate: GitHub API: create a comment on PR #7 (POST /repos/octo-org/mcp-calendar/issues/7/comments) failed: HTTP 422: Validation Failed"),
        "{out}"
    );
    assert!(
        !out.contains(TOKEN) && !err.contains(TOKEN),
        "the token never appears"
    );

    // A bad token: 401 is not retried and is named too.
    let mut r = runner(&gh, "pull_request.synchronize.json");
    r.set("GITHUB_TOKEN", "ghs_wrong");
    let (code, out, _) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1);
    assert!(out.contains("HTTP 401: Bad credentials"), "{out}");
}

#[test]
fn fork_pr_gets_summary_notice_and_report_file_but_no_api_call() {
    let gh = FakeGithub::start();
    let r = runner(&gh, "pull_request.opened.fork.json");
    let (code, out, err) = r.driftgate(&diff_args(&["--fail-on", "unknown", "--annotations"]));
    assert_eq!(code, 1, "{err}");
    assert!(
        gh.seen().is_empty(),
        "a fork's token is read-only: nothing is attempted"
    );
    let notice = out
        .lines()
        .find(|l| l.starts_with("::notice::"))
        .expect(&out);
    assert!(notice.contains("comes from a fork"), "{notice}");
    assert!(
        notice.contains("driftgate comment --report FILE"),
        "{notice}"
    );
    assert!(
        out.contains("::error file=tools.head.json,line=4,title=driftgate%3A schedule_appointment"),
        "{out}"
    );
    let summary = r.read("summary.md");
    assert!(
        summary.starts_with("### ❌ driftgate diff: **fail**"),
        "{summary}"
    );
    assert!(
        !summary.contains("<!-- driftgate:"),
        "the summary carries no comment marker"
    );
    let report = report_json(&r);
    assert_eq!(report["github"]["fork"], true);
    assert_eq!(report["github"]["pull_request"], 7);
    assert_eq!(report["github"]["head_sha"], HEAD_SHA);
    assert_eq!(report["github"]["workflow"], "driftgate");
    assert_eq!(
        r.output("report-path").as_deref(),
        Some("driftgate-report.json")
    );
    // The HTML report beside it, for the Action to upload.
    assert_eq!(
        r.output("html-path").as_deref(),
        Some("driftgate-report.html")
    );
    let page = r.read("driftgate-report.html");
    crate::support::html::assert_inert(&page, "GitHub mode");
    assert!(page.contains("<title>driftgate diff: FAIL</title>"));
}

#[test]
fn pull_request_target_from_a_fork_has_a_write_token_and_comments() {
    let gh = FakeGithub::start();
    let mut r = runner(&gh, "pull_request.opened.fork.json");
    r.set("GITHUB_EVENT_NAME", "pull_request_target");
    let (code, _, err) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1);
    assert_eq!(gh.comments(7).len(), 1, "{err}");
}

#[test]
fn a_read_only_token_on_a_same_repo_pr_falls_back_the_same_way() {
    let gh = FakeGithub::start();
    gh.push_fault(Fault::read_only("POST", "/issues/7/comments"));
    let r = runner(&gh, "pull_request.synchronize.json");
    let (code, out, _) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1);
    let notice = out
        .lines()
        .find(|l| l.starts_with("::notice::"))
        .expect(&out);
    assert!(
        notice.contains("HTTP 403") && notice.contains("pull-requests: write"),
        "{notice}"
    );
    assert!(
        !out.contains("::warning::"),
        "a permissions problem is a notice, not a failure"
    );
    assert!(gh.comments(7).is_empty());
}

#[test]
fn outputs_are_heredocs_and_the_summary_is_appended() {
    let gh = FakeGithub::start();
    let r = runner(&gh, "pull_request.synchronize.json");
    r.write("summary.md", "## An earlier step\n\n");
    r.write("output", "earlier<<EOF\nkept\nEOF\n");
    let (code, _, err) = r.driftgate(&diff_args(&["--fail-on", "unknown", "--comment", "never"]));
    assert_eq!(code, 1, "{err}");
    let summary = r.read("summary.md");
    assert!(
        summary.starts_with("## An earlier step\n\n### ❌ driftgate diff: **fail**"),
        "{summary}"
    );
    let outputs = r.outputs();
    let names: Vec<&str> = outputs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "earlier",
            "verdict",
            "base-accuracy",
            "head-accuracy",
            "delta",
            "p-value",
            "changed-tools",
            "report-path",
            "html-path"
        ]
    );
    assert_eq!(r.output("verdict").as_deref(), Some("fail"));
    assert_eq!(
        r.output("changed-tools").as_deref(),
        Some(r#"["schedule_appointment"]"#)
    );
    assert_eq!(
        r.output("base-accuracy").as_deref(),
        Some(""),
        "diff has no routing numbers"
    );
    assert!(r.read("output").contains("verdict<<ghadelimiter_"));
}

#[test]
fn no_token_is_a_notice_not_an_error() {
    let gh = FakeGithub::start();
    let mut r = runner(&gh, "pull_request.synchronize.json");
    r.set("GITHUB_TOKEN", "");
    let (code, out, _) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1);
    assert!(
        out.contains("::notice::") && out.contains("no token in $GITHUB_TOKEN"),
        "{out}"
    );
    assert!(gh.seen().is_empty());
}

#[test]
fn github_enterprise_api_prefix_is_kept() {
    let gh = FakeGithub::start_with_prefix("/api/v3");
    gh.set_page_size(1);
    gh.add_comment(7, "first", "reviewer", "User");
    gh.add_comment(7, "second", "reviewer", "User");
    let r = runner(&gh, "pull_request.synchronize.json");
    let (code, _, err) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1, "{err}");
    let paths: Vec<String> = gh
        .seen()
        .into_iter()
        .map(|s| s.path().to_string())
        .collect();
    assert_eq!(
        paths,
        [
            "/api/v3/user",
            "/api/v3/repos/octo-org/mcp-calendar/issues/7/comments",
            "/api/v3/repositories/778899/issues/7/comments",
            "/api/v3/repos/octo-org/mcp-calendar/issues/7/comments",
        ]
    );
    assert_eq!(gh.comments(7).len(), 3);
}

/// The fork flow: the PR job writes the report; a `workflow_run` job with a write token posts it
/// under the PR job's marker, after checking the report belongs to the run and the PR.
#[test]
fn comment_subcommand_posts_a_fork_report_after_checking_run_and_pr() {
    let gh = FakeGithub::start();
    let pr_job = runner(&gh, "pull_request.opened.fork.json");
    let (code, _, _) = pr_job.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1);
    let report = pr_job.read("driftgate-report.json");

    let mut commenter = Runner::new(
        &gh,
        &event("workflow_run.completed.json", BASE_SHA, HEAD_SHA),
    );
    commenter.set("GITHUB_EVENT_NAME", "workflow_run");
    commenter.set("GITHUB_WORKFLOW", "driftgate comment");
    commenter.set("GITHUB_JOB", "comment");
    commenter.write("report.json", &report);

    // The PR has moved on to another commit: nothing is posted.
    gh.add_pull(7, "0000000000000000000000000000000000000001", BASE_SHA);
    let (code, out, err) = commenter.driftgate(&["comment", "--report", "report.json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("::notice::") && out.contains("has moved on"),
        "{out}"
    );
    assert!(gh.writes().is_empty());

    gh.add_pull(7, HEAD_SHA, BASE_SHA);
    let (code, _, err) = commenter.driftgate(&["comment", "--report", "report.json"]);
    assert_eq!(code, 0, "{err}");
    let c = gh.comments(7);
    assert_eq!(c.len(), 1, "{err}");
    assert_eq!(
        c[0].body.lines().next(),
        Some(MARKER),
        "the PR job's marker, not the commenter's"
    );
    assert!(c[0].body.contains(
        "[full report](https://github.com/octo-org/mcp-calendar/actions/runs/9876543210)"
    ));

    // A report whose head is not the run's (a tampered or mixed-up artifact) is refused.
    let mut forged: Value = serde_json::from_str(&report).unwrap();
    forged["github"]["head_sha"] = "1234567890123456789012345678901234567890".into();
    forged["github"]["pull_request"] = 8.into();
    commenter.write("report.json", &forged.to_string());
    let (code, _, err) = commenter.driftgate(&["comment", "--report", "report.json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("refusing to post it"), "{err}");
    assert_eq!(gh.writes().len(), 1);

    // Not a driftgate report at all: an input error naming the file.
    commenter.write("report.json", r#"{"schema_version": 1, "verdict": {}}"#);
    let (code, _, err) = commenter.driftgate(&["comment", "--report", "report.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("report.json"), "{err}");
}

#[test]
fn outside_actions_nothing_github_happens() {
    let gh = FakeGithub::start();
    let mut r = runner(&gh, "pull_request.synchronize.json");
    r.set("GITHUB_ACTIONS", "false");
    let (code, out, _) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1);
    assert!(gh.seen().is_empty());
    assert!(r.read("summary.md").is_empty() && r.read("output").is_empty());
    assert!(!r.path("driftgate-report.json").exists());
    assert!(!out.contains("::"), "{out}");
    // --github turns it on explicitly; --no-github wins over GITHUB_ACTIONS=true.
    let (_, _, _) = r.driftgate(&diff_args(&["--fail-on", "unknown", "--github"]));
    assert_eq!(gh.comments(7).len(), 1);
    r.set("GITHUB_ACTIONS", "true");
    let before = gh.seen().len();
    let (_, _, _) = r.driftgate(&diff_args(&["--no-github"]));
    assert_eq!(gh.seen().len(), before);
}

/// A marker comment someone else posted first is never adopted: the bot posts its own (editing
/// theirs would let them steer the bot, and where it may not edit theirs nothing would be posted).
#[test]
fn a_marker_comment_by_someone_else_is_never_adopted() {
    let gh = FakeGithub::start();
    let mallory = gh.add_comment(
        7,
        &format!("{MARKER}\n### ✅ driftgate check: **pass** (trust me)"),
        "mallory",
        "User",
    );
    let r = runner(&gh, "pull_request.synchronize.json");
    let (code, _, err) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1, "{err}");
    let comments = gh.comments(7);
    assert_eq!(comments.len(), 2, "{err}");
    let theirs = comments.iter().find(|c| c.id == mallory).unwrap();
    assert_eq!(theirs.updated, 0, "mallory's comment was not edited");
    let ours = comments.iter().find(|c| c.id != mallory).unwrap();
    assert_eq!(ours.login, "github-actions[bot]");
    assert!(ours.body.starts_with(MARKER) && ours.body.contains("fail"));

    // With a personal token, only that user's own marker comment is ours.
    let gh = FakeGithub::start();
    gh.set_token_user("octocat");
    let bot = gh.add_comment(7, &format!("{MARKER}\nold"), "github-actions[bot]", "Bot");
    let own = gh.add_comment(7, &format!("{MARKER}\nold"), "octocat", "User");
    let r = runner(&gh, "pull_request.synchronize.json");
    let (code, _, err) = r.driftgate(&diff_args(&["--fail-on", "unknown"]));
    assert_eq!(code, 1, "{err}");
    let comments = gh.comments(7);
    assert_eq!(comments.len(), 2, "{err}");
    assert_eq!(comments.iter().find(|c| c.id == bot).unwrap().updated, 0);
    assert_eq!(comments.iter().find(|c| c.id == own).unwrap().updated, 1);
}

/// The Action uploads the reports as an artifact; the comment and the summary say where the
/// charts are, and the HTML file is there to upload.
#[test]
fn the_comment_names_the_artifact_with_the_html_report() {
    let gh = FakeGithub::start();
    let r = runner(&gh, "pull_request.synchronize.json");
    let (code, _, err) = r.driftgate(&diff_args(&[
        "--fail-on",
        "unknown",
        "--report-artifact",
        "driftgate-report",
    ]));
    assert_eq!(code, 1, "{err}");
    let c = gh.comments(7);
    assert_eq!(c.len(), 1, "{err}");
    let note = "charts: `driftgate-report.html` in the run's `driftgate-report` artifact";
    assert!(c[0].body.contains(note), "{}", c[0].body);
    assert!(r.read("summary.md").contains(note));
    assert!(r.path("driftgate-report.html").exists());
}
