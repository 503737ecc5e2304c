//! `driftgate check --router openai` end to end, against a loopback server that speaks OpenAI's
//! Chat Completions wire format and plays one fault per test: rate limits, exhausted retries,
//! hangs, unreadable bodies, invented tool names, forbidden calls, echoed keys. The real binary
//! runs; verdicts, exit codes and counters are read from its report. No network, no key.
//!
//! The fake answers from the request itself: the last user message says which suite case is
//! asked, and the description of `schedule_appointment` says which side (the head version of the
//! calendar tools rewrote it to "Book a slot."), so concurrent requests may arrive in any order.

use std::time::{Duration, Instant};

use driftgate::suite::Expect;
use serde_json::{Value, json};

use crate::support::calendar;
use crate::support::cli::{self, Run};
use crate::support::fake::{Fake, Request, Step, reply, reply_with};
use crate::support::openai::{chat_server, error_body, text_answer, tool_call};
use crate::support::{flip, read_tree, repo, stat};

pub(crate) use crate::support::calendar::SUITE_6 as SUITE;
pub(crate) use crate::support::calendar::{BASE, HEAD};

pub(crate) const SCHED: &str = "set up a new appointment with Dr. Patel";
const RESCH: &str = "move it to Thursday";
pub(crate) const CANCEL: &str = "Cancel my appointment on Wednesday";
const LIST: &str = "What appointments does patient 4471";
const GET: &str = "details of appointment A-1029";
const NONE: &str = "capital of Australia";

/// True when the request offers the head version of the calendar tools.
pub(crate) fn is_head(req: &Request) -> bool {
    req.tool_description("schedule_appointment") == Some("Book a slot.")
}

/// A model that gets every case of the suite right: the expected tool, or text for `none`.
pub(crate) fn right_answer(req: &Request) -> Step {
    let suite = driftgate::suite::load(&repo(SUITE)).expect("suite fixture");
    let Some(case) = suite.cases.iter().find(|c| c.prompt == req.prompt()) else {
        return reply(
            400,
            error_body(
                &format!("fake: no case for prompt {:?}", req.prompt()),
                "invalid_request_error",
            ),
        );
    };
    match &case.expect {
        Expect::None => text_answer("Canberra is the capital of Australia."),
        Expect::Tools(names) => tool_call(&names[0], &valid_args(&names[0]).to_string()),
    }
}

/// Arguments `tool`'s schema accepts: every required parameter, a string (the enum's first value
/// where there is one). A right route then is a right call, so these tests are about routing.
pub(crate) fn valid_args(tool: &str) -> Value {
    let tools: Value = serde_json::from_str(&std::fs::read_to_string(repo(BASE)).unwrap()).unwrap();
    let t = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"));
    let schema = &t["inputSchema"];
    let args: serde_json::Map<String, Value> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|name| {
            let name = name.as_str().unwrap();
            let p = &schema["properties"][name];
            let v = p["enum"].get(0).cloned().unwrap_or_else(|| json!("A-1029"));
            (name.to_string(), v)
        })
        .collect();
    Value::Object(args)
}

/// The gate without the evidence rules: any drop beyond the tolerance fails (tests of how answers
/// are classified, on suites too small for a significant drop).
pub(crate) const TOLERANCE_ONLY: &[&str] =
    &["--require-significance", "1", "--per-tool-alpha", "1"];

/// `check` of the calendar pair (or `base` == `head`) through the fake; terminal report on stdout,
/// JSON report returned alongside. Meaning drift is off (`--no-embed`): these tests are about the
/// router, and the verdict then follows routing alone.
fn check(
    fake: &Fake,
    base: &str,
    head: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Run, Value) {
    let tmp = tempfile::tempdir().unwrap();
    check_in(tmp.path(), fake, base, head, extra, env)
}

/// `check` with its cache and report in `dir`, so a second run can reuse the cache.
pub(crate) fn check_in(
    dir: &std::path::Path,
    fake: &Fake,
    base: &str,
    head: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Run, Value) {
    let json_out = dir.join("report.json");
    let cache = dir.join("cache");
    let url = fake.base_url();
    let mut args = calendar::model_check(
        [base, head],
        "openai",
        &url,
        "m",
        &[
            "--max-attempts",
            "3",
            // The calendar head's description shift fails by itself (check_semantic pins it);
            // these tests are about the endpoint, so it is a warning here.
            "--meaning-policy",
            "review",
            "--cache-dir",
            cache.to_str().unwrap(),
            "--json-out",
            json_out.to_str().unwrap(),
        ],
    );
    args.extend_from_slice(extra);
    let run = cli::driftgate(&args).envs(env.iter().copied()).run();
    let text = std::fs::read_to_string(&json_out)
        .unwrap_or_else(|e| panic!("no JSON report ({e}):\n{}", run.dump()));
    (run, serde_json::from_str(&text).unwrap())
}

fn errors(report: &Value) -> Vec<String> {
    report["routing"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn rate_limit_with_retry_after_is_waited_out_and_counted() {
    let fake = chat_server(|req| {
        if req.prompt().contains(SCHED) && req.nth == 0 {
            return reply_with(
                429,
                &[
                    ("retry-after", "1"),
                    ("x-ratelimit-remaining-requests", "0"),
                ],
                error_body(
                    "Rate limit reached for m on requests per min (RPM): Limit 3, Used 3, Requested 1.",
                    "requests",
                ),
            );
        }
        right_answer(req)
    });
    let started = Instant::now();
    let (run, report) = check(&fake, BASE, HEAD, &[], &[]);
    let elapsed = started.elapsed();

    // Every case right at both sides once the 429 is waited out: the verdict decides, and it passes.
    assert_eq!(run.code, 0, "{}", run.dump());
    assert_eq!(report["verdict"]["status"], "pass");
    assert!(errors(&report).is_empty());
    for side in ["base", "head"] {
        // Six questions, one of them asked twice.
        assert_eq!(stat(&report, side, "requests_sent"), 7, "{side}");
        assert_eq!(stat(&report, side, "retries"), 1, "{side}");
        assert_eq!(stat(&report, side, "errors"), 0, "{side}");
        assert_eq!(stat(&report, side, "cache_hits"), 0, "{side}");
        // Usage from the wire: five tool calls at 400 prompt tokens, one text answer at 380.
        assert_eq!(stat(&report, side, "input_tokens"), 5 * 400 + 380, "{side}");
        assert_eq!(stat(&report, side, "output_tokens"), 5 * 20 + 12, "{side}");
    }
    assert_eq!(report["routing"]["summary"]["base_accuracy"], 1.0);
    assert_eq!(report["routing"]["summary"]["head_accuracy"], 1.0);
    // Retry-After: 1 at each side, and the sides run one after the other.
    assert!(elapsed >= Duration::from_secs(2), "{elapsed:?}");
    assert!(
        run.stdout
            .contains("Requests: base 7 sent, 0 cached, 0 reused, 1 retries; head 7 sent"),
        "{}",
        run.dump()
    );

    // The wire: what the router sent is OpenAI's request shape, paired across sides.
    let seen = fake.requests();
    assert_eq!(seen.len(), 14);
    let sched: Vec<&Request> = seen.iter().filter(|r| r.prompt().contains(SCHED)).collect();
    assert_eq!(sched.len(), 4);
    assert_eq!(sched.iter().map(|r| r.nth).max(), Some(1));
    let r = sched[0];
    assert_eq!(
        (r.method.as_str(), r.target.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(r.header("authorization"), None, "no key was configured");
    assert_eq!(r.body["model"], "m");
    assert_eq!(r.body["tool_choice"], "auto");
    assert_eq!(r.body["parallel_tool_calls"], false);
    assert_eq!(r.body["temperature"], json!(0.0));
    assert_eq!(r.body["seed"], 0);
    assert_eq!(r.body["max_tokens"], 256);
    assert_eq!(
        r.body["messages"][0],
        json!({"role": "system", "content": include_str!("../../prompts/router-system.v1.md")})
    );
    assert_eq!(r.body["messages"][1]["role"], "user");
    assert_eq!(r.body["messages"].as_array().unwrap().len(), 2);
    assert_eq!(r.tool_names().len(), 10);
    let order = |head: bool| {
        sched
            .iter()
            .find(|r| is_head(r) == head)
            .map(|r| r.tool_names().join(","))
            .unwrap()
    };
    assert_eq!(
        order(false),
        order(true),
        "base and head offer the tools in the same order"
    );
}

#[test]
fn a_case_that_fails_every_attempt_makes_the_run_incomplete_exit_3() {
    let fake = chat_server(|req| {
        if req.prompt().contains(CANCEL) {
            return reply(
                500,
                error_body(
                    "The server had an error while processing your request. Sorry about that!",
                    "server_error",
                ),
            );
        }
        right_answer(req)
    });
    let (run, report) = check(&fake, BASE, HEAD, &[], &[]);

    assert_eq!(run.code, 3, "{}", run.dump());
    assert_eq!(report["verdict"]["status"], "incomplete");
    let reason = report["verdict"]["reason"].as_str().unwrap();
    assert!(reason.contains("cancel-01"), "{reason}");
    assert!(reason.contains("not a pass"), "{reason}");
    let errs = errors(&report);
    assert_eq!(errs.len(), 2, "{errs:?}");
    for (e, side) in errs.iter().zip(["base", "head"]) {
        assert!(
            e.starts_with(&format!("{side} case \"cancel-01\": after 3 attempt(s): ")),
            "{e}"
        );
        assert!(e.contains("HTTP 500 Internal Server Error"), "{e}");
        assert!(e.contains("The server had an error"), "{e}");
    }
    for side in ["base", "head"] {
        assert_eq!(stat(&report, side, "errors"), 1, "{side}");
        assert_eq!(stat(&report, side, "retries"), 2, "{side}");
        assert_eq!(stat(&report, side, "requests_sent"), 5 + 3, "{side}");
    }
    // Exactly --max-attempts per side, then given up.
    assert_eq!(fake.requests_for(CANCEL).len(), 6);
    // Said loudly, on the first line and in its own block naming the case.
    let first = run.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("driftgate check: INCOMPLETE — "),
        "{}",
        run.dump()
    );
    assert!(
        run.stdout
            .contains("INCOMPLETE: 2 answer(s) missing after retries"),
        "{}",
        run.dump()
    );
    assert!(
        run.stdout
            .lines()
            .any(|l| l.contains("case \"cancel-01\"") && l.contains("HTTP 500")),
        "{}",
        run.dump()
    );
}

#[test]
fn a_request_that_hangs_past_the_timeout_on_every_attempt_is_incomplete() {
    let fake = chat_server(|req| {
        if req.prompt().contains(LIST) {
            return Step::hang(Duration::from_secs(30));
        }
        right_answer(req)
    });
    let started = Instant::now();
    // Base and head identical: the head question is the base question, answered (here: failed) once.
    let (run, report) = check(&fake, BASE, BASE, &["--request-timeout", "1"], &[]);
    let elapsed = started.elapsed();

    assert_eq!(run.code, 3, "{}", run.dump());
    assert_eq!(report["verdict"]["status"], "incomplete");
    let errs = errors(&report);
    assert!(!errs.is_empty());
    for e in &errs {
        assert!(e.contains("case \"list-01\": after 3 attempt(s)"), "{e}");
        assert!(e.contains("no complete answer within 1 s (timeout)"), "{e}");
    }
    assert_eq!(fake.requests_for(LIST).len(), 3);
    assert_eq!(stat(&report, "head", "requests_sent"), 0);
    // Three 1 s timeouts plus backoff; nowhere near the 30 s the server would have taken.
    assert!(elapsed >= Duration::from_secs(3), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(25), "{elapsed:?}");
}

/// A 200 whose body is no completion (cut off, an HTML page, `{}`, no choices) is a broken
/// endpoint: retried, then the run is incomplete (exit 3). It is never scored (a 0% side would
/// "pass") and never cached (a healthy endpoint next time would be answered from the garbage).
#[test]
fn an_unreadable_200_body_is_a_broken_endpoint_not_an_answer() {
    for body in [
        r#"{"id":"chatcmpl-9","object":"chat.completion","choices":[{"index":0,"message":{"#,
        "<html><body>502 Bad Gateway</body></html>",
        "{}",
        r#"{"choices": []}"#,
    ] {
        let healthy = std::sync::atomic::AtomicBool::new(false);
        let healthy = std::sync::Arc::new(healthy);
        let flag = healthy.clone();
        let fake = chat_server(move |req| {
            if req.prompt().contains(GET)
                && !is_head(req)
                && !flag.load(std::sync::atomic::Ordering::SeqCst)
            {
                return reply(200, body);
            }
            right_answer(req)
        });
        let tmp = tempfile::tempdir().unwrap();
        let run = || check_in(tmp.path(), &fake, BASE, HEAD, &["--format", "json"], &[]);
        let (first, report) = run();
        assert_eq!(first.code, 3, "{body}: {}", first.dump());
        assert_eq!(report["verdict"]["status"], "incomplete", "{body}");
        let errs = errors(&report);
        assert!(
            errs.iter()
                .any(|e| e.contains("get-01") && e.contains("HTTP 200 OK but not with an answer")),
            "{body}: {errs:?}"
        );
        assert!(
            report["routing"]["base_outcomes"]
                .get("malformed")
                .is_none()
        );
        let base_gets = |fake: &Fake| {
            fake.requests_for(GET)
                .into_iter()
                .filter(|r| !is_head(r))
                .count()
        };
        assert_eq!(base_gets(&fake), 3, "{body}: retried up to --max-attempts");
        // The endpoint recovers: the case is asked again (nothing bogus was cached) and passes.
        healthy.store(true, std::sync::atomic::Ordering::SeqCst);
        let (second, report) = run();
        assert_eq!(second.code, 0, "{body}: {}", second.dump());
        assert!(errors(&report).is_empty());
        assert_eq!(base_gets(&fake), 4, "{body}");
        assert_eq!(stat(&report, "base", "requests_sent"), 1, "{body}");
    }
}

/// An endpoint that never gets anything right at base measured nothing: a garbage model, a
/// wrong endpoint or a suite for other tools. 0% → 0% is no pass.
#[test]
fn a_base_side_right_on_nothing_is_incomplete() {
    // Always a call, to a tool nobody offered: wrong on every case, `none` included.
    let fake = chat_server(|_| tool_call("no_such_tool", "{}"));
    let (run, report) = check(&fake, BASE, HEAD, &[], &[]);
    assert_eq!(run.code, 3, "{}", run.dump());
    let reason = report["verdict"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("nothing was measured: the router was right on 0 of 6 case(s) at base"),
        "{reason}"
    );
    // Text for everything is right only on the `none` case (1 of 6): what always declining
    // scores, so routing measured nothing — inconclusive (exit 4), not the pass it used to be.
    let fake = chat_server(|_| text_answer("I cannot help with that."));
    let (run, report) = check(&fake, BASE, HEAD, &[], &[]);
    assert_eq!(run.code, 4, "{}", run.dump());
    assert_eq!(report["verdict"]["status"], "inconclusive");
    assert!(
        report["verdict"]["reason"].as_str().unwrap().contains(
            "right on 1 of 6 case(s) at base (16.7%), at or below what a router that ignores the prompt scores (16.7%)"
        ),
        "{}",
        report["verdict"]
    );
    // The base's floor can be set: a router right on half the cases is not enough at 60%.
    let half = chat_server(|req| {
        if req.prompt().contains(SCHED) || req.prompt().contains(RESCH) {
            return text_answer("No.");
        }
        right_answer(req)
    });
    let (run, _) = check(&half, BASE, BASE, &[], &[]);
    assert_eq!(run.code, 0, "{}", run.dump());
    let (run, report) = check(&half, BASE, BASE, &["--min-base-accuracy", "0.7"], &[]);
    assert_eq!(run.code, 4, "{}", run.dump());
    assert!(
        report["verdict"]["reason"]
            .as_str()
            .unwrap()
            .contains("at or below min_base_accuracy (70.0%)"),
        "{}",
        report["verdict"]
    );
}

/// A forbidden tool in the second call of an answer counts as much as in the first: the agent
/// would run both.
#[test]
fn a_forbidden_tool_in_any_call_of_an_answer_fails_the_case() {
    let fake = chat_server(|req| {
        if req.prompt().contains(RESCH) && is_head(req) {
            let body = json!({
                "id": "chatcmpl-2",
                "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "reschedule_appointment", "arguments": "{}"}},
                        {"id": "c2", "type": "function", "function": {"name": "cancel_appointment", "arguments": "{}"}}
                    ]}}]
            });
            return reply(200, body.to_string());
        }
        right_answer(req)
    });
    // One flip is no evidence at the default alphas; this test is about classification.
    let (run, report) = check(&fake, BASE, HEAD, TOLERANCE_ONLY, &[]);
    assert_eq!(run.code, 1, "{}", run.dump());
    let f = flip(&report, "resch-01").expect("resch-01 flipped");
    assert_eq!(f["direction"], "regressed");
    assert_eq!(f["head"], "cancel_appointment");
    assert_eq!(report["routing"]["head_outcomes"]["must-not-call hit"], 1);
}

#[test]
fn invented_names_forbidden_calls_and_text_answers_are_classified() {
    let fake = chat_server(|req| {
        let p = req.prompt();
        if is_head(req) && p.contains(SCHED) {
            return tool_call("schedule_apointment", r#"{"patient_id":"p1"}"#);
        }
        if is_head(req) && p.contains(RESCH) {
            return tool_call("cancel_appointment", r#"{"appointment_id":"A-1"}"#);
        }
        if p.contains(NONE) {
            // Text for the `expect: none` case at both sides.
            return text_answer("Canberra.");
        }
        right_answer(req)
    });
    let (run, report) = check(&fake, BASE, HEAD, TOLERANCE_ONLY, &[]);

    assert_eq!(run.code, 1, "{}", run.dump());
    assert_eq!(report["verdict"]["status"], "fail");
    // The forbidden call fails by itself, first; the routing drop is listed after it.
    let reason = report["verdict"]["reason"].as_str().unwrap();
    assert_eq!(
        reason,
        "case `resch-01` calls `cancel_appointment` at head (1 of 1 answer(s)), which the case forbids (must_not_call); base never did"
    );
    let also = report["verdict"]["also"][0].as_str().unwrap();
    assert!(
        also.starts_with("routing accuracy 100.0% → 66.7% (-33.3 pts"),
        "{also}"
    );
    assert_eq!(
        report["routing"]["forbidden"],
        json!([{"id": "resch-01", "prompt": "My appointment on Tuesday doesn't work anymore, move it to Thursday at the same time", "tool": "cancel_appointment", "head_calls": 1, "repeats": 1}])
    );
    assert_eq!(report["routing"]["base_outcomes"], json!({"correct": 6}));
    assert_eq!(
        report["routing"]["head_outcomes"],
        json!({"correct": 4, "hallucinated name": 1, "must-not-call hit": 1})
    );
    let s = flip(&report, "sched-01").expect("sched-01 flipped");
    assert_eq!(s["direction"], "regressed");
    assert_eq!(
        s["head"],
        "schedule_apointment (not offered; nearest: schedule_appointment)"
    );
    let r = flip(&report, "resch-01").expect("resch-01 flipped");
    assert_eq!(r["direction"], "regressed");
    assert_eq!(r["head"], "cancel_appointment");
    // A text answer where no tool is expected is right, at both sides.
    assert!(flip(&report, "none-01").is_none());
    assert_eq!(report["routing"]["flips"].as_array().unwrap().len(), 2);
    assert!(
        run.stdout.contains("Regressed cases (2):"),
        "{}",
        run.dump()
    );
    assert!(errors(&report).is_empty());
}

#[test]
fn the_api_key_never_appears_even_when_the_server_echoes_it() {
    const KEY: &str = "sk-proj-driftgate-5a1f0c9e7b3d2468aa";
    let fake = chat_server(|req| {
        let p = req.prompt();
        let echo = "Incorrect API key provided: {{authorization}}. You can find your API key at https://platform.openai.com/account/api-keys.";
        if p.contains(CANCEL) {
            return reply(401, error_body(echo, "invalid_request_error")).echo_headers();
        }
        if p.contains(LIST) {
            return reply(
                500,
                error_body(&format!("upstream failed; {echo}"), "server_error"),
            )
            .echo_headers();
        }
        if p.contains(GET) {
            return reply(200, "proxy: request rejected, you sent {{authorization}}")
                .echo_headers();
        }
        right_answer(req)
    });
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let json_out = tmp.path().join("r.json");
    let url = fake.base_url();
    let mut outputs = Vec::new();
    for format in ["terminal", "json"] {
        let run = cli::driftgate(calendar::model_check(
            [BASE, HEAD],
            "openai",
            &url,
            "m",
            &[
                "--api-key-env",
                "MY_KEY",
                "--max-attempts",
                "2",
                "--format",
                format,
                "--cache-dir",
                cache.to_str().unwrap(),
                "--json-out",
                json_out.to_str().unwrap(),
            ],
        ))
        // The default variable holds something else: --api-key-env must win.
        .envs([("MY_KEY", KEY), ("OPENAI_API_KEY", "sk-not-this-one")])
        .run();
        assert_eq!(run.code, 3, "{}", run.dump());
        outputs.push(run.stdout);
        outputs.push(run.stderr);
        outputs.push(std::fs::read_to_string(&json_out).unwrap());
    }
    // The key was sent (so every echo above really carried it) …
    let seen = fake.requests();
    assert!(!seen.is_empty());
    for r in &seen {
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
    // … and came back masked, never in the clear, nor any recognisable piece of it.
    outputs.push(read_tree(&cache));
    let all = outputs.join("\n");
    for piece in [KEY, "5a1f0c9e7b3d2468", "driftgate-5a1f", "sk-not-this-one"] {
        assert!(!all.contains(piece), "{piece:?} leaked:\n{all}");
    }
    let report: Value = serde_json::from_str(&outputs[5]).unwrap();
    let errs = errors(&report);
    assert!(
        errs.iter()
            .any(|e| e.contains("cancel-01") && e.contains("HTTP 401") && e.contains("Bearer ***")),
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("list-01") && e.contains("HTTP 500") && e.contains("Bearer ***")),
        "{errs:?}"
    );
    // A 200 that is no completion is a broken endpoint, not an answer: an error, echo masked.
    assert!(
        errs.iter().any(|e| e.contains("get-01")
            && e.contains("but not with an answer")
            && e.contains("Bearer ***")),
        "{errs:?}"
    );
    // 401 is not retried; the 500 and the bogus 200 are, up to --max-attempts. Second run: errors
    // are not cached, answers are, so only the three failing cases are asked again.
    assert_eq!(fake.requests_for(CANCEL).len(), 2 * 2);
    assert_eq!(fake.requests_for(LIST).len(), 2 * 2 * 2);
    assert_eq!(fake.requests_for(GET).len(), 2 * 2 * 2);
    assert_eq!(stat(&report, "base", "cache_hits"), 3);
    assert!(
        report["routing"]["base_outcomes"]
            .get("malformed")
            .is_none()
    );
}

#[test]
fn llm_router_configuration_errors_are_usage_errors() {
    let base = [
        "check",
        "--base",
        BASE,
        "--head",
        HEAD,
        "--suite",
        SUITE,
        "--no-embed",
    ];
    let run =
        cli::driftgate([&base[..], &["--router", "openai", "--model", "gpt-4o-mini"]].concat())
            .run();
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr.contains("needs the key in $OPENAI_API_KEY"),
        "{}",
        run.dump()
    );
    let run = cli::driftgate(
        [
            &base[..],
            &["--router", "openai", "--base-url", "http://127.0.0.1:9/v1"],
        ]
        .concat(),
    )
    .run();
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr.contains("--router openai needs --model"),
        "{}",
        run.dump()
    );
    let run = cli::driftgate(
        [
            &base[..],
            &[
                "--router",
                "openai",
                "--model",
                "m",
                "--base-url",
                "ftp://x/v1",
            ],
        ]
        .concat(),
    )
    .run();
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr.contains("expected an http:// or https:// URL"),
        "{}",
        run.dump()
    );
}

/// Honest repeats: repeat k is asked with seed + k, and when a deterministic provider answers
/// every repeat the same, the report says the repeats measured nothing.
#[test]
fn repeats_use_distinct_seeds_and_a_deterministic_provider_is_named() {
    let fake = chat_server(right_answer);
    let (run, report) = check(&fake, BASE, BASE, &["--repeats", "3"], &[]);
    assert_eq!(run.code, 0, "{}", run.dump());
    let mut seeds: Vec<u64> = fake
        .requests_for(SCHED)
        .iter()
        .map(|r| r.body["seed"].as_u64().expect("a seed is sent"))
        .collect();
    seeds.sort();
    assert_eq!(
        seeds,
        [0, 1, 2],
        "one request per repeat, each with its own seed"
    );
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n.as_str().unwrap().starts_with(
            "every one of the 3 repeats of every case came back identical at both sides"
        )),
        "{notes:?}"
    );
    // A provider whose answers vary is not called deterministic.
    let flaky = chat_server(|req| {
        if req.prompt().contains(SCHED) && req.body["seed"] == 1 {
            return tool_call("list_appointments", "{}");
        }
        right_answer(req)
    });
    let (_, report) = check(&flaky, BASE, BASE, &["--repeats", "3"], &[]);
    let notes = report["notes"].as_array().unwrap();
    assert!(
        !notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("deterministic")),
        "{notes:?}"
    );
}

/// `--confirm 3` re-asks only the flipped cases, three more times at both sides: a regression that
/// happens every time is "confirmed 3/3"; a head answer that was wrong once (seed 0) and right on
/// every re-ask did not reproduce, and no longer counts.
#[test]
fn confirm_reasks_only_flips_and_drops_the_ones_that_do_not_reproduce() {
    let fake = chat_server(|req| {
        let p = req.prompt();
        if is_head(req) && p.contains(SCHED) {
            return tool_call("list_appointments", "{}");
        }
        if is_head(req) && p.contains(RESCH) && req.body["seed"] == 0 {
            return tool_call("cancel_appointment", "{}");
        }
        right_answer(req)
    });
    let (run, report) = check(&fake, BASE, HEAD, &["--confirm", "3"], &[]);
    // sched-01 is the one case of `schedule_appointment`: 100% → 0%, confirmed, but one case is
    // no evidence — inconclusive. resch-01's forbidden call did not come back on any re-ask: it
    // is excused with its flip, and fails nothing.
    assert_eq!(run.code, 4, "{}", run.dump());
    assert!(
        report["verdict"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("`schedule_appointment` fell 100.0% → 0.0% on 1 case(s)"),
        "{}",
        report["verdict"]
    );
    assert!(
        report["routing"].get("forbidden").is_none(),
        "{}",
        report["routing"]
    );
    let f = flip(&report, "sched-01").expect("sched-01 still flipped");
    assert_eq!(f["confirmed"], json!({"reproduced": 3, "asked": 3}));
    let gone = report["routing"]["not_reproduced"].as_array().unwrap();
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0]["id"], "resch-01");
    assert_eq!(gone[0]["confirmed"], json!({"reproduced": 0, "asked": 3}));
    assert!(flip(&report, "resch-01").is_none());
    assert!(run.stdout.contains("(confirmed 3/3)"), "{}", run.stdout);
    assert!(
        run.stdout.contains("did not reproduce under --confirm (no longer counted): resch-01 regressed did not reproduce (0/3)"),
        "{}",
        run.stdout
    );
    // Only the two flipped cases were re-asked: 1 + 3 requests at head, 1 + 3 at base.
    assert_eq!(fake.requests_for(SCHED).len(), 8);
    assert_eq!(
        fake.requests_for(CANCEL).len(),
        2,
        "an unflipped case is asked once per side"
    );
}

/// `check --plan` sends nothing: it counts each side's requests, the input tokens of those left to
/// send with the model family's tokenizer (o200k for gpt-4o-mini), and their cost at the given
/// prices; after a real run has filled the cache, the plan finds nothing left to send.
#[test]
fn plan_counts_requests_tokens_and_cost_without_sending() {
    let fake = chat_server(right_answer);
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let url = fake.base_url();
    let args = |plan: bool| {
        let mut a = calendar::model_check(
            [BASE, HEAD],
            "openai",
            &url,
            "gpt-4o-mini",
            &[
                "--cache-dir",
                cache.to_str().unwrap(),
                "--price-input",
                "0.15",
                "--price-output",
                "0.60",
            ],
        );
        if plan {
            a.extend(["--plan", "--format", "json"]);
        }
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let plan = |sent_before: usize| {
        let run = cli::driftgate(args(true))
            .envs([("OPENAI_API_KEY", "k")])
            .run();
        assert_eq!(run.code, 0, "{}", run.dump());
        assert_eq!(fake.requests().len(), sent_before, "a plan sent a request");
        serde_json::from_str::<Value>(&run.stdout).unwrap()
    };
    let p = plan(0);
    assert_eq!(p["cases"], 6);
    assert_eq!(p["tokens_counted_with"], "o200k_base");
    for side in ["base", "head"] {
        // head rewrote a description: every head question is new.
        assert_eq!(p[side]["requests"], 6, "{p}");
        assert_eq!(p[side]["to_send"], 6, "{p}");
        assert!(p[side]["input_tokens"].as_u64().unwrap() > 6 * 300, "{p}");
    }
    let tokens =
        p["base"]["input_tokens"].as_u64().unwrap() + p["head"]["input_tokens"].as_u64().unwrap();
    let cost = p["input_cost_usd"].as_f64().unwrap();
    assert!((cost - tokens as f64 * 0.15 / 1e6).abs() < 1e-12, "{p}");
    assert_eq!(
        p["output_cost_usd_at_most"].as_f64().unwrap(),
        12.0 * 256.0 * 0.60 / 1e6
    );

    // The real run fills the cache; the next plan has nothing left to send.
    let run = cli::driftgate(args(false))
        .envs([("OPENAI_API_KEY", "k")])
        .run();
    assert!(run.code == 0 || run.code == 1, "{}", run.dump());
    assert_eq!(fake.requests().len(), 12);
    let p = plan(12);
    for side in ["base", "head"] {
        assert_eq!(p[side]["cached"], 6, "{p}");
        assert_eq!(p[side]["to_send"], 0, "{p}");
    }
    // The base side asked against the same tools is reused at head when nothing changed.
    let same = cli::driftgate(
        args(true)
            .into_iter()
            .map(|a| if a == HEAD { BASE.to_string() } else { a })
            .collect::<Vec<_>>(),
    )
    .envs([("OPENAI_API_KEY", "k")])
    .run();
    let p: Value = serde_json::from_str(&same.stdout).unwrap();
    assert_eq!(p["head"]["reused"], 6, "{p}");
    // The terminal form says nothing was sent.
    let text = cli::driftgate(
        args(true)
            .into_iter()
            .filter(|a| a != "--format" && a != "json")
            .collect::<Vec<_>>(),
    )
    .envs([("OPENAI_API_KEY", "k")])
    .run();
    assert!(
        text.stdout
            .starts_with("driftgate check --plan: nothing was sent."),
        "{}",
        text.stdout
    );
    assert_eq!(fake.requests().len(), 12, "no plan sent a request");
}
