//! `driftgate fix` as a user runs it, on the calendar example with the offline semantic router:
//! the rewrite it offers, checked again by an independent `check`; what it keeps of head; that
//! drafting never read a held-out case; its unhappy paths; hostile tool text. Hermetic.

use serde_json::Value;

use crate::support::{calendar, cli};

/// `fix` of `base` → `head` on the calendar suite plus `extra`, in a fresh cache.
fn fix(base: &str, head: &str, extra: &[&str]) -> cli::Run {
    let cache = tempfile::tempdir().unwrap();
    let mut args = vec![
        "fix",
        "--base",
        base,
        "--head",
        head,
        "--suite",
        calendar::SUITE,
    ];
    args.extend_from_slice(extra);
    cli::driftgate(args).cache(cache.path()).run()
}

/// The ids of a fix report's held-out cases.
fn held_out_ids(r: &Value) -> Vec<&str> {
    r["split"]["held_out_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// The calendar tools file `from` with `edit` applied to its tools array, written to `dir`.
fn edited(from: &str, dir: &std::path::Path, edit: impl FnOnce(&mut Vec<Value>)) -> String {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(cli::repo(from)).unwrap()).unwrap();
    edit(doc["tools"].as_array_mut().unwrap());
    let path = dir.join("edited.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path.display().to_string()
}

/// The calendar tools file `from` with the tool `name` edited by `edit`, written to `dir`.
fn tool_edited(
    from: &str,
    dir: &std::path::Path,
    name: &str,
    edit: impl FnOnce(&mut Value),
) -> String {
    edited(from, dir, |tools| {
        edit(tools.iter_mut().find(|t| t["name"] == name).unwrap())
    })
}

/// The calendar head with `schedule_appointment`'s description replaced, written to `dir`.
fn head_with(dir: &std::path::Path, text: &str) -> String {
    edited(calendar::HEAD, dir, |tools| {
        for t in tools
            .iter_mut()
            .filter(|t| t["name"] == "schedule_appointment")
        {
            t["description"] = Value::String(text.to_string());
        }
    })
}

#[test]
fn the_calendar_fix_is_verified_on_cases_drafting_never_read() {
    let run = fix(calendar::BASE, calendar::HEAD, &["--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.dump());
    let r = run.json();
    crate::support::reports::assert_matches_fix_schema(&r, "the calendar fix");
    assert_eq!(r["check"]["status"], "fail");
    let tools = r["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{r:#}");
    let t = &tools[0];
    assert_eq!(
        (t["tool"].as_str(), t["field"].as_str()),
        (Some("schedule_appointment"), Some("description"))
    );
    // What the PR meant to say stays, word for word, in every rewrite.
    assert_eq!(t["kept"], serde_json::json!(["Book a slot."]));
    for c in t["candidates"].as_array().unwrap() {
        assert!(
            c["text"].as_str().unwrap().contains("Book a slot."),
            "{c:#}"
        );
    }
    // Drafting read only the drafting half: none of its lost cases is held out.
    let held = held_out_ids(&r);
    assert_eq!(
        held.len(),
        r["split"]["held_out"].as_u64().unwrap() as usize
    );
    let lost = t["lost"].as_array().unwrap();
    assert!(!lost.is_empty());
    for l in lost {
        assert!(!held.contains(&l["id"].as_str().unwrap()), "{l:#}");
    }
    let own_held = held.iter().filter(|id| id.starts_with("sched-")).count();
    assert_eq!(
        own_held, 4,
        "half of schedule_appointment's 8 cases are held out"
    );
    // The offered rewrite beats head on the held-out cases and passes the gate there.
    let best = &t["candidates"][t["best"].as_u64().unwrap() as usize];
    assert_eq!(best["offered"], true);
    assert!(
        best["held_out"]["fixed"].as_u64() > best["held_out"]["regressed"].as_u64(),
        "{best:#}"
    );
    assert_eq!(best["gate_held_out"]["status"], "pass", "{best:#}");
    assert_eq!(r["applied"]["held_out"]["status"], "pass");
    assert_eq!(r["applied"]["full"]["status"], "pass");
    // Every rewrite not offered says why, and one is refused by the meaning law.
    for c in t["candidates"].as_array().unwrap() {
        assert_eq!(c["offered"] == false, c.get("why_not").is_some(), "{c:#}");
    }
    assert!(
        t["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["why_not"]
                .as_str()
                .is_some_and(|w| w.contains("negation-removed"))),
        "{t:#}"
    );

    // An independent check of head with the offered text applied: the gate passes.
    let dir = tempfile::tempdir().unwrap();
    let rewritten = head_with(dir.path(), best["text"].as_str().unwrap());
    let cache = tempfile::tempdir().unwrap();
    let again = cli::driftgate([
        "check",
        "--base",
        calendar::BASE,
        "--head",
        &rewritten,
        "--suite",
        calendar::SUITE,
    ])
    .cache(cache.path())
    .run();
    assert_eq!(again.code, 0, "{}", again.dump());
}

#[test]
fn nothing_to_fix_when_the_check_passes() {
    let run = fix(calendar::BASE, calendar::BASE, &["--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.dump());
    let r = run.json();
    assert_eq!(r["check"]["status"], "pass");
    assert_eq!(r["tools"], serde_json::json!([]));
    assert!(r.get("applied").is_none());
    assert_eq!(
        r["notes"],
        serde_json::json!([
            "the check did not fail (pass) and lint found no confusable pair or shadowing risk the PR introduced: nothing to fix"
        ])
    );
}

#[test]
fn a_check_failed_by_the_law_alone_has_nothing_to_rewrite() {
    // A tool removed: breaking under the law; its three cases are too few for a routing ruling.
    let dir = tempfile::tempdir().unwrap();
    let head = edited(calendar::BASE, dir.path(), |tools| {
        tools.retain(|t| t["name"] != "cancel_appointment")
    });
    let run = fix(calendar::BASE, &head, &["--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.dump());
    let r = run.json();
    assert_eq!(r["check"]["status"], "fail");
    assert_eq!(r["tools"], serde_json::json!([]));
    assert_eq!(
        r["notes"],
        serde_json::json!([
            "the check failed on no tool's routing or call accuracy: no rewrite of a description can be verified for it"
        ])
    );
}

#[test]
fn a_renamed_tool_is_rewritten_and_judged_under_its_head_name() {
    let dir = tempfile::tempdir().unwrap();
    let head = tool_edited(calendar::BASE, dir.path(), "schedule_appointment", |t| {
        t["name"] = "book_appointment_slot".into();
        t["description"] = "Book a slot.".into();
    });
    let run = fix(calendar::BASE, &head, &["--format", "json"]);
    let r = run.json();
    assert_eq!(r["check"]["status"], "fail", "{}", run.dump());
    let t = &r["tools"][0];
    assert_eq!(t["tool"], "book_appointment_slot", "{r:#}");
    assert!(
        t["base_text"]
            .as_str()
            .unwrap()
            .starts_with("Schedule a new appointment")
    );
    // Its held-out cases reach it under the new name at head and in the rewrite.
    let c = &t["candidates"][0];
    assert_eq!(c["held_out"]["cases"], 4, "{c:#}");
    assert!(c["held_out"]["fixed"].as_u64().unwrap() > 0, "{c:#}");
}

#[test]
fn hostile_head_text_stays_inert_in_every_fix_format() {
    let dir = tempfile::tempdir().unwrap();
    let hostile =
        "Book a slot.\u{1b}[31m @maintainers <!-- driftgate --> \u{202e}evil\n::error::pwned";
    let head = head_with(dir.path(), hostile);
    for format in ["terminal", "json"] {
        let run = fix(
            calendar::BASE,
            &head,
            &["--format", format, "--color", "never"],
        );
        assert!(matches!(run.code, 0 | 1), "{}", run.dump());
        assert!(!run.stdout.contains('\u{1b}'), "{format}: raw ESC");
        assert!(
            !run.stdout.contains('\u{202e}'),
            "{format}: raw bidi override"
        );
        assert!(
            !run.stdout.lines().any(|l| l.trim_start().starts_with("::")),
            "{format}: a workflow command line\n{}",
            run.stdout
        );
        if format == "terminal" {
            assert!(run.stdout.contains("⟨U+001B⟩"), "{}", run.stdout);
        } else {
            // The text survives as data: the kept sentence is head's, escaped only in JSON.
            let r = run.json();
            assert!(
                r["tools"][0]["head_text"]
                    .as_str()
                    .unwrap()
                    .contains('\u{202e}')
            );
        }
    }
}

const HEAD_SHA: &str = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b";

/// `fix` of the PR's tools in the runner's workspace.
const PR_FIX: [&str; 7] = [
    "fix",
    "--base",
    "tools.base.json",
    "--head",
    "tools.head.json",
    "--suite",
    "suite.yaml",
];

/// A runner on PR #7 whose workspace holds the calendar example's tools and suite.
fn pr_runner(gh: &crate::support::github::FakeGithub) -> crate::support::runner::Runner {
    use crate::support::runner::{Runner, event};
    let r = Runner::new(
        gh,
        &event(
            "pull_request.synchronize.json",
            "3f1c2b0a9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a",
            HEAD_SHA,
        ),
    );
    for (from, to) in [
        (calendar::BASE, "tools.base.json"),
        (calendar::HEAD, "tools.head.json"),
        (calendar::SUITE, "suite.yaml"),
    ] {
        std::fs::copy(cli::repo(from), r.path(to)).unwrap();
    }
    r
}

/// `fix` in GitHub mode on a PR of the calendar example: the offered rewrite lands as one review
/// comment with a `suggestion` block on the line that holds the description; applying that line
/// makes `check` pass; a re-run leaves it alone; once the gate passes it is removed.
#[test]
fn the_offered_rewrite_is_suggested_on_the_descriptions_line_and_withdrawn_when_it_passes() {
    use crate::support::github::{BOT, FakeGithub, REPO};
    let gh = FakeGithub::start();
    let r = pr_runner(&gh);
    let head_text = r.read("tools.head.json");
    let line = 1 + head_text
        .lines()
        .position(|l| l.contains("\"description\": \"Book a slot.\""))
        .unwrap();
    gh.set_diff_lines("tools.head.json", &[line as u64]);
    let (code, _, err) = r.driftgate(&PR_FIX);
    assert_eq!(code, 0, "{err}");
    let c = &the_review(&gh, &err);
    assert_eq!(
        (
            c.path.as_str(),
            c.line,
            c.commit_id.as_str(),
            c.login.as_str()
        ),
        ("tools.head.json", line as u64, HEAD_SHA, BOT)
    );
    assert!(
        c.body
            .starts_with("<!-- driftgate-suggestion:driftgate:gate:"),
        "{}",
        c.body
    );
    let post = gh
        .writes()
        .into_iter()
        .find(|w| w.method == "POST")
        .unwrap();
    assert_eq!(post.path(), format!("/repos/{REPO}/pulls/7/comments"));
    assert_eq!(post.body["side"], "RIGHT");
    // The suggested line, applied as GitHub applies it (the line replaced), passes the gate.
    let suggested = suggested_line(&c.body);
    assert!(
        suggested.starts_with("      \"description\": \"Book a slot. "),
        "{suggested}"
    );
    let applied: Vec<&str> = head_text
        .lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == line { suggested } else { l })
        .collect();
    r.write("tools.applied.json", &(applied.join("\n") + "\n"));
    let (code, _, err) = r.driftgate(&[
        "check",
        "--base",
        "tools.base.json",
        "--head",
        "tools.applied.json",
        "--suite",
        "suite.yaml",
        "--comment",
        "never",
    ]);
    assert_eq!(code, 0, "the suggestion applied passes the gate: {err}");

    // Again: the same suggestion is found and left as it is.
    let writes = gh.writes().len();
    let (code, _, err) = r.driftgate(&PR_FIX);
    assert_eq!(code, 0, "{err}");
    assert_eq!(gh.writes().len(), writes, "{err}");
    assert_eq!(gh.reviews(7).len(), 1);

    // Head fixed by hand: the check passes, nothing is offered, the suggestion is withdrawn.
    let (code, _, err) = r.driftgate(&[
        "fix",
        "--base",
        "tools.base.json",
        "--head",
        "tools.base.json",
        "--suite",
        "suite.yaml",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(gh.reviews(7).is_empty(), "{err}");
    assert_eq!(gh.writes().last().unwrap().method, "DELETE");
}

/// GitHub refusing the line (not in the PR's diff) is a warning naming the call; the fix report
/// and the exit code stand.
#[test]
fn a_refused_suggestion_is_a_warning_and_the_exit_code_stands() {
    use crate::support::github::FakeGithub;
    let gh = FakeGithub::start();
    let r = pr_runner(&gh);
    gh.set_diff_lines("tools.head.json", &[1]);
    let (code, out, err) = r.driftgate(&PR_FIX);
    assert_eq!(code, 0, "{err}");
    assert!(gh.reviews(7).is_empty());
    let warning = out
        .lines()
        .find(|l| l.starts_with("::warning::"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        warning.contains("comment on line 5 of tools.head.json in PR #7")
            && warning.contains("HTTP 422")
            && warning.contains("The fix report is unaffected"),
        "{warning}"
    );
}

/// The one review comment on PR #7 (`err`: the run's stderr, for the failure message).
fn the_review(
    gh: &crate::support::github::FakeGithub,
    err: &str,
) -> crate::support::github::StoredReview {
    let mut reviews = gh.reviews(7);
    assert_eq!(reviews.len(), 1, "{err}");
    reviews.remove(0)
}

/// The first line of a review comment's `suggestion` block.
fn suggested_line(body: &str) -> &str {
    body.split("```suggestion\n")
        .nth(1)
        .and_then(|b| b.lines().next())
        .unwrap_or_else(|| panic!("no suggestion block: {body}"))
}

/// The tools the Node server `server` in `r`'s workspace lists, asked over stdio as a client
/// asks.
fn served(r: &crate::support::runner::Runner, server: &str) -> Vec<Value> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("node")
        .args([server, "tools.head.json"])
        .current_dir(r.dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (this test's MCP server is a Node script)");
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|m| m["id"] == 2)
        .unwrap_or_else(|| panic!("no tools/list answer: {stdout}"));
    list["result"]["tools"].as_array().unwrap().clone()
}

/// `fix` in GitHub mode with head a live server whose definitions live in its source (a Node
/// MCP server tracked in the PR's repository): the offered rewrite lands on the string literal
/// that holds the description, and the server with that line applied serves the rewrite. A
/// literal on two lines gets a comment on both (GitHub's `start_line`), refused while the first
/// is outside the diff, and replaces the one-line comment.
#[test]
fn a_live_servers_description_is_suggested_on_the_string_literal_in_its_source() {
    use crate::github_action::git;
    use crate::support::github::{BOT, FakeGithub};
    let gh = FakeGithub::start();
    let r = pr_runner(&gh);
    std::fs::create_dir(r.path("server")).unwrap();
    std::fs::copy(
        cli::repo("tests/fixtures/live/calendar-server.mjs"),
        r.path("server/index.mjs"),
    )
    .unwrap();
    // The PR's checkout: base holds the suite, head adds the server's source; the event names
    // both commits (the policy is read at base).
    let dir = r.dir.path();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "tools.base.json", "suite.yaml"]);
    git(dir, &["commit", "-qm", "base"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["add", "server", "tools.head.json"]);
    git(dir, &["commit", "-qm", "server"]);
    let head = git(dir, &["rev-parse", "HEAD"]);
    let ev = crate::support::runner::event("pull_request.synchronize.json", &base, &head);
    r.write("event.json", &ev.to_string());
    let source = r.read("server/index.mjs");
    let line = 1 + source
        .lines()
        .position(|l| l.contains("\"Book a slot.\""))
        .unwrap() as u64;
    gh.set_diff_lines("server/index.mjs", &[line]);
    let fix = [
        "fix",
        "--base",
        "tools.base.json",
        "--head-server-cmd",
        "node server/index.mjs tools.head.json",
        "--suite",
        "suite.yaml",
        "--json-out",
        "fix.json",
    ];
    let (code, _, err) = r.driftgate(&fix);
    assert_eq!(code, 0, "{err}");
    let c = &the_review(&gh, &err);
    assert_eq!(
        (
            c.path.as_str(),
            c.line,
            c.start_line,
            c.commit_id.as_str(),
            c.login.as_str()
        ),
        ("server/index.mjs", line, None, head.as_str(), BOT)
    );
    assert!(
        c.body
            .contains("Head's description is the string literal in `server/index.mjs`"),
        "{}",
        c.body
    );
    let report: Value = serde_json::from_str(&r.read("fix.json")).unwrap();
    let t = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "schedule_appointment")
        .unwrap();
    let offered = t["candidates"][t["best"].as_u64().unwrap() as usize]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(offered.starts_with("Book a slot. "), "{offered}");
    let single = gh
        .writes()
        .into_iter()
        .find(|w| w.method == "POST")
        .unwrap();
    assert!(
        single.body.get("start_line").is_none() && single.body.get("start_side").is_none(),
        "{:?}",
        single.body
    );
    let suggested = suggested_line(&c.body);
    assert!(
        suggested.starts_with("tool(\"schedule_appointment\", \"Book a slot. "),
        "{suggested}"
    );
    // Applied as GitHub applies it (the line replaced), the server serves the rewrite.
    let applied = |from: u64, to: u64, with: &str| {
        let text = r.read("server/index.mjs");
        let mut out: Vec<&str> = text.lines().take(from as usize - 1).collect();
        out.push(with);
        out.extend(text.lines().skip(to as usize));
        out.join("\n") + "\n"
    };
    let original = r.read("server/index.mjs");
    r.write("server/index.mjs", &applied(line, line, suggested));
    let description = |tools: &[Value]| {
        tools
            .iter()
            .find(|t| t["name"] == "schedule_appointment")
            .map(|t| t["description"].as_str().unwrap().to_string())
    };
    assert_eq!(
        description(&served(&r, "server/index.mjs")),
        Some(offered.clone())
    );

    // The literal continued over two lines that end where it ended: the same last line and the
    // same suggested line, yet a comment on one line would leave the first behind, so the
    // comment is replaced by one on both — which GitHub refuses while the first line is outside
    // the diff.
    let one_line = "}\n\ntool(\"schedule_appointment\", \"Book a slot.\");";
    assert!(original.contains(one_line), "{original}");
    r.write(
        "server/index.mjs",
        &original.replace(
            one_line,
            "}\ntool(\"schedule_appointment\", \"Book a \\\nslot.\");",
        ),
    );
    let (code, out, err) = r.driftgate(&fix);
    assert_eq!(code, 0, "{err}");
    assert!(gh.reviews(7).is_empty(), "{err}");
    let warning = out
        .lines()
        .find(|l| l.starts_with("::warning::"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        warning.contains(&format!(
            "comment on lines {}–{line} of server/index.mjs in PR #7",
            line - 1
        )) && warning.contains("HTTP 422"),
        "{warning}"
    );
    gh.set_diff_lines("server/index.mjs", &[line - 1, line]);
    let (code, _, err) = r.driftgate(&fix);
    assert_eq!(code, 0, "{err}");
    let c = the_review(&gh, &err);
    assert_eq!((c.line, c.start_line), (line, Some(line - 1)));
    assert_eq!(suggested_line(&c.body), suggested);
    let post = gh
        .writes()
        .into_iter()
        .rev()
        .find(|w| w.method == "POST")
        .unwrap();
    assert_eq!(
        (
            &post.body["start_line"],
            &post.body["start_side"],
            &post.body["side"]
        ),
        (
            &Value::from(line - 1),
            &Value::from("RIGHT"),
            &Value::from("RIGHT")
        )
    );
    r.write("server/index.mjs", &applied(line - 1, line, suggested));
    assert_eq!(description(&served(&r, "server/index.mjs")), Some(offered));
}

/// `check --suggest`: the check's verdict and exit code, with the offered rewrite in the report;
/// in a pull request the PR comment links the suggestion posted on the diff.
#[test]
fn check_suggest_keeps_the_verdict_and_links_the_suggestion_from_the_pr_comment() {
    let cache = tempfile::tempdir().unwrap();
    let run = cli::driftgate(calendar::check(&["--suggest", "--format", "json"]))
        .cache(cache.path())
        .run();
    assert_eq!(run.code, 1, "the check's verdict: {}", run.dump());
    let r = run.json();
    crate::support::reports::assert_matches_schema(&r, "check --suggest");
    assert_eq!(r["verdict"]["status"], "fail");
    let s = &r["suggestions"][0];
    assert_eq!(s["tool"], "schedule_appointment", "{r:#}");
    assert!(
        s["text"].as_str().unwrap().starts_with("Book a slot. "),
        "{s:#}"
    );
    assert!(
        s.get("url").is_none(),
        "nothing posted outside a pull request"
    );

    use crate::support::github::{BOT, FakeGithub};
    let gh = FakeGithub::start();
    let r = pr_runner(&gh);
    // The same sides and suite as `fix`, through `check --suggest`.
    let mut args = PR_FIX.to_vec();
    args[0] = "check";
    args.push("--suggest");
    let (code, _, err) = r.driftgate(&args);
    assert_eq!(code, 1, "{err}");
    let review = &gh.reviews(7)[0];
    let sticky = gh
        .comments(7)
        .into_iter()
        .find(|c| c.login == BOT)
        .unwrap_or_else(|| panic!("no PR comment: {err}"));
    let link = format!(
        "[apply it on the diff](https://github.com/{}/pull/7#discussion_r{})",
        crate::support::github::REPO,
        review.id
    );
    assert!(
        sticky.body.contains("#### Suggested rewrites"),
        "{}",
        sticky.body
    );
    assert!(sticky.body.contains(&link), "{}", sticky.body);
}

/// `fix --plan` sends nothing: the check's requests, and the most that verifying rewrites can
/// add — every tool the suite expects and every changed one, and every reworded parameter
/// description of one the suite expects, × every generator × the suite, and head with the
/// offered ones once — with their input tokens and cost at the given prices.
#[test]
fn the_fix_plan_bounds_the_rewrites_requests_without_sending() {
    use crate::support::openai::{chat_server, tool_call};
    let fake = chat_server(|_| tool_call("schedule_appointment", "{}"));
    let url = fake.base_url();
    let cache = tempfile::tempdir().unwrap();
    let mut args = calendar::model_check(
        [calendar::BASE, calendar::HEAD],
        "openai",
        &url,
        "gpt-4o-mini",
        &[
            "--llm",
            "2",
            "--plan",
            "--format",
            "json",
            "--price-input",
            "0.15",
            "--price-output",
            "0.60",
        ],
    );
    args[0] = "fix";
    let run = cli::driftgate(args)
        .cache(cache.path())
        .envs([("OPENAI_API_KEY", "k")])
        .run();
    assert_eq!(run.code, 0, "{}", run.dump());
    assert!(fake.requests().is_empty(), "a plan sent a request");
    let p = run.json();
    let r = &p["rewrites"];
    // The five tools the 6-case suite expects (any can fail: schedule_appointment is the one
    // changed, the others could lose cases to it), no reworded parameter; four generators and
    // two model drafts, each draft asked at most four times.
    assert_eq!(r["tools_at_most"], 5, "{p:#}");
    assert_eq!(r["rewrites_per_tool_at_most"], 6);
    assert_eq!(r["requests_per_rewrite"], 6);
    assert_eq!(r["requests_at_most"], 5 * 6 * 6 + 6);
    assert_eq!(r["drafting_requests_at_most"], 5 * 2 * 4);
    let mean = p["head"]["input_tokens"].as_u64().unwrap() / p["head"]["to_send"].as_u64().unwrap();
    assert_eq!(
        r["input_tokens_at_most"].as_u64().unwrap(),
        (5 * 36 + 6) * mean
    );
    let cost = r["input_cost_usd_at_most"].as_f64().unwrap();
    assert!(
        (cost - ((5 * 36 + 6) * mean) as f64 * 0.15 / 1e6).abs() < 1e-12,
        "{p:#}"
    );
}

/// `fix --llm 1` against the loopback OpenAI server (its Chat Completions wire format): the model
/// routes the calendar suite (every schedule prompt goes to `reschedule_appointment` while
/// `schedule_appointment` says only "Book a slot.") and drafts one rewrite in JSON. The draft is
/// verified by replay like the offline ones, and the drafting request carries no held-out prompt.
#[test]
fn a_model_drafted_rewrite_is_verified_like_the_others() {
    use crate::support::openai::text_answer;
    const DRAFT: &str = "Book a slot. Schedule a new appointment for a patient who has none yet.";
    let suite = driftgate::suite::load(&cli::repo(calendar::SUITE)).unwrap();
    let fake = calendar_model(None, || {
        text_answer(&serde_json::json!({ "rewrite": DRAFT }).to_string())
    });
    let run = fix_via(
        &fake,
        [calendar::BASE, calendar::HEAD, calendar::SUITE],
        &["--llm", "1", "--format", "json"],
    );
    let r = run.json();
    assert_eq!(r["check"]["status"], "fail", "{}", run.dump());
    let t = &r["tools"][0];
    assert!(t.is_object(), "{r:#}");
    let llm = t["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["generator"] == "llm-1")
        .unwrap_or_else(|| panic!("{t:#}"));
    assert_eq!(llm["text"], DRAFT);
    assert_eq!(llm["held_out"]["fixed"], 4, "{llm:#}");
    assert_eq!(llm["offered"], true, "{llm:#}");
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .contains("prompts/fix.v1.md"),
        "{r:#}"
    );
    // Drafting read the drafting half only.
    let held = held_out_ids(&r);
    let asked = fake
        .requests()
        .into_iter()
        .find(|q| q.body.get("tools").is_none())
        .unwrap();
    let message = asked.prompt().to_string();
    assert!(message.contains("\"requests_now_lost\""), "{message}");
    for c in suite.cases.iter().filter(|c| held.contains(&c.id.as_str())) {
        assert!(!message.contains(&c.prompt), "held-out {} was shown", c.id);
    }
    for c in suite
        .cases
        .iter()
        .filter(|c| c.id.starts_with("sched-") && !held.contains(&c.id.as_str()))
    {
        assert!(
            message.contains(&c.prompt),
            "drafting case {} missing",
            c.id
        );
    }
}

/// Call accuracy failed because head reworded a parameter's description: `fix` rewrites that
/// parameter's description (field `/inputSchema/properties/appointment_id/description`), verifies
/// each rewrite on the held-out cases' call accuracy, and offers one that restores it. Against the
/// loopback OpenAI server, the model fills `appointment_id` right only while its description says
/// "Appointment identifier".
#[test]
fn a_parameter_description_is_rewritten_where_call_accuracy_dropped() {
    use crate::check_faults::valid_args;
    use crate::support::fake::Request;
    use crate::support::openai::{chat_server, text_answer, tool_call};
    let dir = tempfile::tempdir().unwrap();
    let mut yaml = String::from("version: 1\ncases:\n");
    for i in 0..12 {
        yaml.push_str(&format!(
            "  - {{id: get-{i:02}, prompt: \"Show me appointment A-10{i:02}\", expect: get_appointment, args: {{appointment_id: \"A-10{i:02}\"}}}}\n"
        ));
    }
    for i in 0..4 {
        yaml.push_str(&format!(
            "  - {{id: cancel-{i:02}, prompt: \"Cancel appointment C-{i}\", expect: cancel_appointment}}\n"
        ));
    }
    let suite = dir.path().join("suite.yaml");
    std::fs::write(&suite, &yaml).unwrap();
    let head = tool_edited(calendar::BASE, dir.path(), "get_appointment", |t| {
        t["inputSchema"]["properties"]["appointment_id"]["description"] =
            "Internal row number".into();
    });
    let fake = chat_server(move |req: &Request| {
        let prompt = req.prompt().to_string();
        if prompt.starts_with("Cancel") {
            return tool_call(
                "cancel_appointment",
                &valid_args("cancel_appointment").to_string(),
            );
        }
        let Some(id) = prompt.strip_prefix("Show me appointment ") else {
            return text_answer("?");
        };
        let described = req.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "get_appointment")
            .and_then(|t| {
                t["function"]["parameters"]["properties"]["appointment_id"]["description"].as_str()
            })
            .unwrap_or_default()
            .to_string();
        let filled = if described.contains("Appointment identifier") {
            id
        } else {
            "0"
        };
        tool_call(
            "get_appointment",
            &serde_json::json!({ "appointment_id": filled }).to_string(),
        )
    });
    let run = fix_via(
        &fake,
        [calendar::BASE, &head, suite.to_str().unwrap()],
        &["--format", "json"],
    );
    let r = run.json();
    assert_eq!(r["check"]["status"], "fail", "{}", run.dump());
    crate::support::reports::assert_matches_fix_schema(&r, "fix of a parameter");
    // The description has nothing to restore: only the parameter is a target.
    let tools = r["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{r:#}");
    let t = &tools[0];
    assert_eq!(t["tool"], "get_appointment");
    assert_eq!(
        t["field"],
        "/inputSchema/properties/appointment_id/description"
    );
    assert_eq!(t["head_text"], "Internal row number");
    assert_eq!(t["kept"], serde_json::json!(["Internal row number"]));
    let best = &t["candidates"][t["best"].as_u64().unwrap() as usize];
    assert_eq!(best["text"], "Internal row number. Appointment identifier");
    // Judged on the held-out half's call accuracy: all six get_appointment cases there restored.
    assert_eq!(best["held_out"]["cases"], 6, "{best:#}");
    assert_eq!(best["held_out"]["fixed"], 6, "{best:#}");
    assert_eq!(best["held_out"]["regressed"], 0);
    assert_eq!(best["gate_held_out"]["status"], "pass", "{best:#}");
    assert_eq!(
        r["applied"]["tools"],
        serde_json::json!(["get_appointment /inputSchema/properties/appointment_id/description"])
    );
    assert_eq!(run.code, 0, "the rewrite applied passes: {}", run.dump());
}

/// The calendar base with `schedule_visit` added, worded as `schedule_appointment` is: the pair
/// lint finds introduced (`confusable-pair`).
fn with_schedule_visit(dir: &std::path::Path) -> String {
    edited(calendar::BASE, dir, |tools| {
        let mut visit = tools
            .iter()
            .find(|t| t["name"] == "schedule_appointment")
            .unwrap()
            .clone();
        visit["name"] = "schedule_visit".into();
        visit["description"] =
            "Schedule a new visit for a patient with a provider at a chosen date and time.".into();
        tools.push(visit);
    })
}

/// A pair the PR made confusable is a target even when the check passes: the changed tool of the
/// pair is rewritten to tell itself apart from the other, judged on both tools' held-out cases,
/// and lint's view of the pair with the rewrite is shown beside (never gating). The offline
/// router does not separate the pair by a contrast sentence, so nothing is offered — said per
/// rewrite — and the exit code is the check's.
#[test]
fn a_confusable_pair_the_pr_introduced_is_a_target_even_when_the_check_passes() {
    let dir = tempfile::tempdir().unwrap();
    let head = with_schedule_visit(dir.path());
    let run = fix(calendar::BASE, &head, &["--no-embed", "--format", "json"]);
    let r = run.json();
    assert_eq!(r["check"]["status"], "pass", "{}", run.dump());
    crate::support::reports::assert_matches_fix_schema(&r, "fix of a pair");
    let t = &r["tools"][0];
    assert_eq!(t["tool"], "schedule_visit", "{r:#}");
    assert_eq!(t["partner"], "schedule_appointment");
    assert!(
        t["finding"]
            .as_str()
            .unwrap()
            .starts_with("lint confusable-pair: this PR makes `schedule_appointment` and `schedule_visit` confusable"),
        "{t:#}"
    );
    assert_eq!(t["failed"], serde_json::json!([]));
    let c = t["candidates"].as_array().unwrap();
    let contrast = c.iter().find(|c| c["generator"] == "contrast").unwrap();
    assert!(
        contrast["text"].as_str().unwrap().ends_with(
            "To schedule a new appointment for a patient with a provider at a chosen date and time, use schedule_appointment instead."
        ),
        "{contrast:#}"
    );
    // Both tools' held-out cases judge it (schedule_visit has none in the suite).
    let sched_held = held_out_ids(&r)
        .iter()
        .filter(|id| id.starts_with("sched-"))
        .count();
    assert_eq!(contrast["held_out"]["cases"], sched_held, "{contrast:#}");
    // Every rewrite is linted against base: the added tool's pair is still what lint finds new.
    assert_eq!(contrast["pair_still_flagged"], true, "{contrast:#}");
    assert!(
        contrast["lint_introduced"][0]
            .as_str()
            .unwrap()
            .starts_with("confusable-pair: this PR makes `schedule_appointment` and `schedule_visit` confusable"),
        "{contrast:#}"
    );
    for c in c {
        assert_eq!(c["offered"], false, "{c:#}");
        assert!(
            c["why_not"]
                .as_str()
                .unwrap()
                .starts_with("does not beat head")
        );
    }
    assert!(r.get("applied").is_none());
    assert_eq!(run.code, 0, "the check's code: {}", run.dump());
}

/// Measured shadowing: an unchanged tool fails because its cases went to the tool the PR added.
/// Rewriting the unchanged tool cannot be what the PR needs; the added tool is the target, paired
/// with the one it took the cases from. Against the loopback OpenAI server the model sends the
/// schedule prompts to `schedule_visit` until its description says to use
/// `schedule_appointment` for them; that rewrite is offered, and applied the gate passes.
#[test]
fn the_tool_that_took_an_unchanged_tools_cases_is_rewritten() {
    use crate::check_faults::valid_args;
    use crate::support::fake::Request;
    use crate::support::openai::{chat_server, text_answer, tool_call};
    let dir = tempfile::tempdir().unwrap();
    let head = with_schedule_visit(dir.path());
    let suite = driftgate::suite::load(&cli::repo(calendar::SUITE)).unwrap();
    let cases = suite.cases.clone();
    let fake = chat_server(move |req: &Request| {
        let case = cases.iter().find(|c| c.prompt == req.prompt()).unwrap();
        let visit = req.tool_description("schedule_visit");
        match case.expect.names().first() {
            None => text_answer("Canberra."),
            Some(t)
                if t == "schedule_appointment"
                    && visit.is_some_and(|d| !d.contains("use schedule_appointment instead")) =>
            {
                tool_call(
                    "schedule_visit",
                    &valid_args("schedule_appointment").to_string(),
                )
            }
            Some(t) => tool_call(t, &valid_args(t).to_string()),
        }
    });
    let (run, r) = failing_fix(&fake, &head);
    let tools = r["tools"].as_array().unwrap();
    // schedule_appointment failed and is listed, but its contrast sentence does not move the
    // model; schedule_visit, which took its cases, is the pair target.
    let sched = tools
        .iter()
        .find(|t| t["tool"] == "schedule_appointment")
        .unwrap();
    assert!(sched["best"].is_null(), "{sched:#}");
    let visit = tools
        .iter()
        .find(|t| t["tool"] == "schedule_visit")
        .unwrap_or_else(|| panic!("{r:#}"));
    assert_eq!(visit["partner"], "schedule_appointment");
    assert_eq!(
        visit["finding"],
        "replay: `schedule_appointment` lost its cases to `schedule_visit`, which the PR changed"
    );
    let best = &visit["candidates"][visit["best"].as_u64().unwrap() as usize];
    assert_eq!(best["generator"], "contrast");
    let sched_held = held_out_ids(&r)
        .iter()
        .filter(|id| id.starts_with("sched-"))
        .count() as u64;
    assert_eq!(best["held_out"]["fixed"], sched_held, "{best:#}");
    assert_eq!(best["gate_held_out"]["status"], "pass");
    assert_eq!(r["applied"]["tools"], serde_json::json!(["schedule_visit"]));
    assert_eq!(run.code, 0, "{}", run.dump());
}

/// The loopback OpenAI router of the calendar suite: schedule prompts go to
/// `reschedule_appointment` while `schedule_appointment` says only "Book a slot."; a request
/// offering any other wording of it than base's (a rewrite being verified) is answered by
/// `rewrite` (routed right when `None`); a request offering no tools (drafting) by `draft`.
fn calendar_model(
    rewrite: Option<fn() -> crate::support::fake::Step>,
    draft: impl Fn() -> crate::support::fake::Step + Send + Sync + 'static,
) -> crate::support::fake::Fake {
    use crate::check_faults::valid_args;
    use crate::support::fake::Request;
    use crate::support::openai::{chat_server, text_answer, tool_call};
    let suite = driftgate::suite::load(&cli::repo(calendar::SUITE)).unwrap();
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(cli::repo(calendar::BASE)).unwrap()).unwrap();
    let base_text = base["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "schedule_appointment")
        .unwrap()["description"]
        .as_str()
        .unwrap()
        .to_string();
    chat_server(move |req: &Request| {
        if req.body.get("tools").is_none() {
            return draft();
        }
        let text = req
            .tool_description("schedule_appointment")
            .unwrap_or_default();
        if let Some(rewrite) = rewrite
            && text != "Book a slot."
            && text != base_text
        {
            return rewrite();
        }
        let case = suite
            .cases
            .iter()
            .find(|c| c.prompt == req.prompt())
            .unwrap();
        match case.expect.names().first() {
            None => text_answer("Canberra."),
            Some(t) if t == "schedule_appointment" && text == "Book a slot." => tool_call(
                "reschedule_appointment",
                &valid_args("reschedule_appointment").to_string(),
            ),
            Some(t) => tool_call(t, &valid_args(t).to_string()),
        }
    })
}

/// `fix` of `sides` (base, head, suite) through the loopback OpenAI server `fake` (one attempt
/// per request, no embedder), plus `extra`.
fn fix_via(fake: &crate::support::fake::Fake, sides: [&str; 3], extra: &[&str]) -> cli::Run {
    let cache = tempfile::tempdir().unwrap();
    fix_cached(cache.path(), fake, sides, extra)
}

/// [`fix_via`] with the cache in `cache`.
fn fix_cached(
    cache: &std::path::Path,
    fake: &crate::support::fake::Fake,
    sides: [&str; 3],
    extra: &[&str],
) -> cli::Run {
    let url = fake.base_url();
    let mut args = vec![
        "fix",
        "--base",
        sides[0],
        "--head",
        sides[1],
        "--suite",
        sides[2],
        "--router",
        "openai",
        "--base-url",
        &url,
        "--model",
        "m",
        "--no-embed",
        "--max-attempts",
        "1",
    ];
    args.extend_from_slice(extra);
    cli::driftgate(args)
        .cache(cache)
        // A key that no answer spells: the run masks every held secret in what it reads.
        .envs([("OPENAI_API_KEY", "sk-fake-0123456789abcdef")])
        .run()
}

/// `fix --format json` of the calendar base against `head` on its suite through `fake`, whose
/// check fails: the run and its report.
fn failing_fix(fake: &crate::support::fake::Fake, head: &str) -> (cli::Run, Value) {
    let run = fix_via(
        fake,
        [calendar::BASE, head, calendar::SUITE],
        &["--format", "json"],
    );
    let r = run.json();
    assert_eq!(r["check"]["status"], "fail", "{}", run.dump());
    (run, r)
}

/// `fix` of the calendar example through `fake`, plus `extra`.
fn fix_through(fake: &crate::support::fake::Fake, extra: &[&str]) -> cli::Run {
    fix_via(
        fake,
        [calendar::BASE, calendar::HEAD, calendar::SUITE],
        extra,
    )
}

/// The router fails while a rewrite is verified: that rewrite's measurement is incomplete, it is
/// never offered, and the run is incomplete (exit 3), said loudly — never "no fix" (exit 1) and
/// never a pass.
#[test]
fn a_router_failing_while_a_rewrite_is_verified_is_incomplete_exit_3() {
    use crate::support::openai::{error_body, text_answer};
    let fake = calendar_model(
        Some(|| {
            crate::support::fake::Step::reply(
                500,
                error_body("The server had an error", "server_error"),
            )
        }),
        || text_answer("{}"),
    );
    let shown = fix_through(&fake, &[]);
    assert_eq!(shown.code, 3, "{}", shown.dump());
    assert!(
        shown
            .stdout
            .starts_with("driftgate fix: INCOMPLETE — the replay of a rewrite missed answers"),
        "{}",
        shown.dump()
    );
    let run = fix_through(&fake, &["--format", "json"]);
    assert_eq!(run.code, 3, "{}", run.dump());
    let r = run.json();
    assert_eq!(r["check"]["status"], "fail", "the check itself completed");
    let c = r["tools"][0]["candidates"].as_array().unwrap();
    assert!(!c.is_empty(), "{r:#}");
    for c in c {
        assert_eq!(c["offered"], false, "{c:#}");
        assert_eq!(c["why_not"], "its measurement is incomplete", "{c:#}");
    }
    assert!(r.get("applied").is_none(), "{r:#}");
}

/// `--llm 1` with a model that never drafts a valid rewrite (it answers head's text again, each
/// time it is re-asked): the drafting is an incomplete measurement, exit 3, naming what was wrong.
#[test]
fn a_model_that_never_drafts_a_valid_rewrite_is_incomplete_exit_3() {
    use crate::support::openai::text_answer;
    let fake = calendar_model(None, || {
        text_answer(&serde_json::json!({ "rewrite": "Book a slot." }).to_string())
    });
    let run = fix_through(&fake, &["--llm", "1", "--format", "json"]);
    assert_eq!(run.code, 3, "{}", run.dump());
    assert!(
        run.stderr.contains("identical to the current description"),
        "{}",
        run.dump()
    );
    // Asked more than once: re-asked with what was wrong.
    let drafts = fake
        .requests()
        .into_iter()
        .filter(|q| q.body.get("tools").is_none())
        .count();
    assert!(drafts > 1, "{drafts}");
}

/// Two tools fail, each for its own edit (one by its routing, one by the meaning law with its
/// routing lost): each one's rewrite is judged with the other's cases set aside and the other's
/// own failing lines left to it (`failing_elsewhere`), so both are offered — were each held to
/// the whole held-out gate, the other's failure would refuse both and nothing could ever be
/// offered — and head with both applied passes. Against the loopback OpenAI server.
#[test]
fn two_failing_tools_are_each_fixed_and_judged_together() {
    use crate::check_faults::valid_args;
    use crate::support::fake::Request;
    use crate::support::openai::{chat_server, text_answer, tool_call};
    let dir = tempfile::tempdir().unwrap();
    let head = tool_edited(calendar::HEAD, dir.path(), "reschedule_appointment", |t| {
        t["description"] = "Change it.".into();
    });
    let suite = driftgate::suite::load(&cli::repo(calendar::SUITE)).unwrap();
    let fake = chat_server(move |req: &Request| {
        let case = suite
            .cases
            .iter()
            .find(|c| c.prompt == req.prompt())
            .unwrap();
        let said = |t: &str| req.tool_description(t).unwrap_or_default().to_string();
        let call = |t: &str| tool_call(t, &valid_args(t).to_string());
        match case.expect.names().first().map(String::as_str) {
            None => text_answer("Canberra."),
            Some("schedule_appointment") if said("schedule_appointment") == "Book a slot." => {
                call("reschedule_appointment")
            }
            Some("reschedule_appointment") if said("reschedule_appointment") == "Change it." => {
                call("get_appointment")
            }
            Some(t) => call(t),
        }
    });
    let (run, r) = failing_fix(&fake, &head);
    let tools = r["tools"].as_array().unwrap();
    for name in ["schedule_appointment", "reschedule_appointment"] {
        let t = tools
            .iter()
            .find(|t| t["tool"] == name)
            .unwrap_or_else(|| panic!("{name}: {r:#}"));
        let best = &t["candidates"][t["best"]
            .as_u64()
            .unwrap_or_else(|| panic!("{name} has no offer: {t:#}\n{}", run.stderr))
            as usize];
        assert!(best["held_out"]["fixed"].as_u64().unwrap() > 0, "{best:#}");
        // What still fails there is the other tool's: its meaning law line, its cases set aside.
        let other = if name == "schedule_appointment" {
            "reschedule_appointment"
        } else {
            "schedule_appointment"
        };
        match best["gate_held_out"]["status"].as_str().unwrap() {
            "pass" => {}
            _ => {
                let elsewhere = best["failing_elsewhere"].as_array().unwrap();
                assert!(!elsewhere.is_empty(), "{best:#}");
                for e in elsewhere {
                    assert!(e.as_str().unwrap().starts_with(other), "{best:#}");
                }
            }
        }
    }
    let applied = &r["applied"];
    assert_eq!(applied["tools"].as_array().unwrap().len(), 2, "{r:#}");
    assert_eq!(applied["held_out"]["status"], "pass", "{r:#}");
    assert_eq!(applied["full"]["status"], "pass", "{r:#}");
    assert_eq!(run.code, 0, "{}", run.dump());
}

/// The cache makes a re-run free: `fix --llm 1` against the loopback OpenAI server asks the
/// check, every rewrite's verification and the model's draft once; the same run again, with the
/// same cache, sends nothing and writes the same report.
#[test]
fn a_rerun_of_fix_is_answered_from_the_cache() {
    use crate::support::openai::text_answer;
    let fake = calendar_model(None, || {
        text_answer(
            &serde_json::json!({ "rewrite": "Book a slot. Schedule a new visit for a patient." })
                .to_string(),
        )
    });
    let cache = tempfile::tempdir().unwrap();
    let sides = [calendar::BASE, calendar::HEAD, calendar::SUITE];
    let args = ["--llm", "1", "--format", "json"];
    let first = fix_cached(cache.path(), &fake, sides, &args);
    assert_eq!(first.code, 0, "{}", first.dump());
    let asked = fake.requests().len();
    assert!(asked > 0);
    let again = fix_cached(cache.path(), &fake, sides, &args);
    assert_eq!(again.code, 0, "{}", again.dump());
    assert_eq!(fake.requests().len(), asked, "a re-run sent requests");
    assert_eq!(again.json()["tools"], first.json()["tools"]);
}
