//! `check --batch` end to end against the providers' batch APIs on the loopback fake
//! (`support::batch`, each provider's exact wire format): a batch answers what live requests
//! answer, at half the cost; both sides go in one batch; an interrupted run resumes its batch
//! instead of paying again; a failed batch, errored items and a broken poll endpoint make the run
//! incomplete (exit 3) and a re-run resubmits only what has no answer; routers without a batch API
//! are usage errors.

use std::sync::atomic::Ordering;

use driftgate::suite::Expect;
use serde_json::Value;

use crate::check_faults::{
    BASE, CANCEL, HEAD, SCHED, SUITE, TOLERANCE_ONLY, is_head, right_answer, valid_args,
};
use crate::support::anthropic;
use crate::support::batch;
use crate::support::calendar;
use crate::support::cli::{self, Run};
use crate::support::fake::{Fake, Request, Step};
use crate::support::openai::{chat_server, tool_call};
use crate::support::{repo, stat};

/// Right everywhere except the schedule prompt at head, which goes to `reschedule_appointment`
/// (the calendar's real regression): one flip.
fn drifting(req: &Request) -> Step {
    if is_head(req) && req.prompt().contains(SCHED) {
        return tool_call(
            "reschedule_appointment",
            &valid_args("reschedule_appointment").to_string(),
        );
    }
    right_answer(req)
}

/// `check` of the calendar pair through `fake` with `router`, its cache in `dir`; the exit, and the
/// JSON report.
fn check(dir: &std::path::Path, fake: &Fake, router: &str, extra: &[&str]) -> (Run, Value) {
    let json_out = dir.join("report.json");
    let _ = std::fs::remove_file(&json_out);
    let cache = dir.join("cache");
    let url = if router == "anthropic" {
        fake.url("")
    } else {
        fake.base_url()
    };
    let mut args = calendar::model_check(
        [BASE, HEAD],
        router,
        &url,
        "m",
        &[
            "--max-attempts",
            "2",
            "--cache-dir",
            cache.to_str().unwrap(),
            "--json-out",
            json_out.to_str().unwrap(),
            "--price-input",
            "2",
            "--price-output",
            "8",
        ],
    );
    args.extend_from_slice(TOLERANCE_ONLY);
    args.extend_from_slice(extra);
    let run = cli::driftgate(&args)
        .envs([
            ("OPENAI_API_KEY", "sk-batch-secret"),
            ("ANTHROPIC_API_KEY", "sk-ant-secret"),
        ])
        .run();
    let text = std::fs::read_to_string(&json_out)
        .unwrap_or_else(|e| panic!("no JSON report ({e}):\n{}", run.dump()));
    (run, serde_json::from_str(&text).unwrap())
}

const FAST: &[&str] = &["--batch", "--batch-poll", "0.01"];

fn errors(report: &Value) -> Vec<String> {
    report["routing"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect()
}

fn flips(report: &Value) -> Vec<String> {
    report["routing"]["flips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().into())
        .collect()
}

#[test]
fn an_openai_batch_answers_what_live_requests_answer_at_half_the_cost() {
    let live = chat_server(drifting);
    let dir = tempfile::tempdir().unwrap();
    let (lrun, lrep) = check(dir.path(), &live, "openai", &[]);
    assert_eq!(lrun.code, 1, "{}", lrun.dump());

    let (fake, control) = batch::openai(drifting);
    let dir = tempfile::tempdir().unwrap();
    let (run, rep) = check(
        dir.path(),
        &fake,
        "openai",
        &["--batch", "--batch-poll", "0.01"],
    );
    assert_eq!(run.code, 1, "{}", run.dump());
    crate::support::reports::assert_matches_schema(&rep, "a --batch report");
    // The same measurement: summary and flips equal the live run's.
    assert_eq!(rep["routing"]["summary"], lrep["routing"]["summary"]);
    assert_eq!(flips(&rep), flips(&lrep));
    assert_eq!(flips(&rep), ["sched-01"]);
    // Both sides in one batch of 12 distinct questions; nothing sent live.
    let created = control.created();
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(created[0].1, 12);
    assert!(
        fake.requests()
            .iter()
            .all(|r| !r.path().ends_with("/chat/completions")),
        "a request went live"
    );
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.header("authorization") == Some("Bearer sk-batch-secret"))
    );
    assert_eq!(
        stat(&rep, "base", "batched") + stat(&rep, "head", "batched"),
        12
    );
    assert_eq!(stat(&rep, "base", "requests_sent"), 6);
    let b = &rep["router"]["batch"];
    assert_eq!(b["api"], "OpenAI Batch API");
    assert_eq!(b["batches"][0], created[0].0.as_str());
    assert_eq!(b["requests"], 12);
    assert_eq!(b["discount"], 0.5);
    // Same tokens, half the price.
    for field in ["input_tokens", "output_tokens"] {
        assert_eq!(
            stat(&rep, "base", field) + stat(&rep, "head", field),
            stat(&lrep, "base", field) + stat(&lrep, "head", field)
        );
    }
    let cost = rep["router"]["estimated_cost_usd"].as_f64().unwrap();
    let live_cost = lrep["router"]["estimated_cost_usd"].as_f64().unwrap();
    assert!(
        (cost - live_cost / 2.0).abs() < 1e-12,
        "{cost} vs {live_cost}"
    );
    assert!(
        run.stdout
            .contains("Batch: OpenAI Batch API answered 12 request(s) in 1 batch(es)"),
        "{}",
        run.stdout
    );
    assert!(!run.stderr.contains("sk-batch-secret") && !run.stdout.contains("sk-batch-secret"));

    // A second run finds every answer in the cache: no new batch.
    let (again, rep2) = check(dir.path(), &fake, "openai", FAST);
    assert_eq!(again.code, 1, "{}", again.dump());
    assert_eq!(control.created().len(), 1);
    assert_eq!(stat(&rep2, "base", "cache_hits"), 6);

    // The plan prices the batch: half the live plan's cost.
    let plan = |extra: &[&str]| {
        let url = fake.base_url();
        let mut a = calendar::model_check(
            [BASE, HEAD],
            "openai",
            &url,
            "gpt-4o-mini",
            &[
                "--no-cache",
                "--price-input",
                "2",
                "--price-output",
                "8",
                "--plan",
                "--format",
                "json",
            ],
        );
        a.extend_from_slice(extra);
        let run = cli::driftgate(&a).run();
        assert_eq!(run.code, 0, "{}", run.dump());
        serde_json::from_str::<Value>(&run.stdout).unwrap()
    };
    let (p_live, p_batch) = (plan(&[]), plan(&["--batch"]));
    assert_eq!(p_batch["batch_discount"], 0.5);
    for k in ["input_cost_usd", "output_cost_usd_at_most"] {
        let (l, b) = (p_live[k].as_f64().unwrap(), p_batch[k].as_f64().unwrap());
        assert!((b - l / 2.0).abs() < 1e-12, "{k}: {b} vs {l}");
    }
}

/// The live Messages answers for the calendar suite: right everywhere but the schedule prompt at
/// head.
fn anthropic_drifting(req: &Request) -> Step {
    let prompt = req.body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    let head = req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "schedule_appointment" && t["description"] == "Book a slot.");
    let suite = driftgate::suite::load(&repo(SUITE)).unwrap();
    let case = suite
        .cases
        .iter()
        .find(|c| c.prompt == prompt)
        .expect("a suite prompt");
    match &case.expect {
        Expect::None => anthropic::text("Canberra."),
        Expect::Tools(names) => {
            let name = if head && prompt.contains(SCHED) {
                "reschedule_appointment"
            } else {
                names[0].as_str()
            };
            anthropic::tool_use(name, valid_args(name))
        }
    }
}

#[test]
fn an_anthropic_message_batch_round_trip() {
    let (fake, control) = batch::anthropic(anthropic_drifting);
    let dir = tempfile::tempdir().unwrap();
    let (run, rep) = check(dir.path(), &fake, "anthropic", FAST);
    assert_eq!(run.code, 1, "{}", run.dump());
    assert_eq!(flips(&rep), ["sched-01"]);
    assert_eq!(control.created(), [("msgbatch_01Fake1".to_string(), 12)]);
    assert_eq!(rep["router"]["batch"]["api"], "Anthropic Message Batches");
    assert_eq!(rep["router"]["batch"]["batches"][0], "msgbatch_01Fake1");
    let reqs = fake.requests();
    assert!(
        reqs.iter().any(|r| r.path().ends_with("/results")),
        "results were not read"
    );
    assert!(
        reqs.iter()
            .all(|r| r.header("x-api-key") == Some("sk-ant-secret"))
    );
    assert!(
        reqs.iter().all(|r| r.path() != "/v1/messages"),
        "a request went live"
    );
    // Calls were judged with their arguments: every base call right, tool and arguments.
    assert_eq!(
        rep["routing"]["calls"]["base_outcomes"]["correct"], 6,
        "{}",
        rep["routing"]["calls"]
    );
}

#[test]
fn a_batch_that_outlives_the_wait_is_incomplete_and_resumed_by_the_next_run() {
    let (fake, control) = batch::openai(drifting);
    control.polls_to_finish.store(usize::MAX, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let (run, rep) = check(
        dir.path(),
        &fake,
        "openai",
        &["--batch", "--batch-poll", "0.05", "--batch-wait", "0.3"],
    );
    assert_eq!(run.code, 3, "{}", run.dump());
    assert_eq!(rep["verdict"]["status"], "incomplete", "{}", rep["verdict"]);
    let errs = errors(&rep).join("\n");
    assert!(errs.contains("batch batch_2 still in_progress"), "{errs}");
    assert!(errs.contains("the same command resumes it"), "{errs}");
    assert!(
        run.stderr
            .contains("batch: submitted batch_2 with 12 request(s)"),
        "{}",
        run.stderr
    );

    control.polls_to_finish.store(0, Ordering::SeqCst);
    let (again, rep) = check(dir.path(), &fake, "openai", FAST);
    assert_eq!(again.code, 1, "{}", again.dump());
    assert!(
        again.stderr.contains("batch: resuming 1 batch(es)"),
        "{}",
        again.stderr
    );
    assert_eq!(
        control.created().len(),
        1,
        "the resumed batch was paid again"
    );
    assert_eq!(rep["router"]["batch"]["batches"][0], "batch_2");
    assert_eq!(flips(&rep).len(), 1);
}

#[test]
fn a_failed_batch_is_incomplete_and_the_next_run_submits_again() {
    let (fake, control) = batch::openai(drifting);
    *control.fail.lock().unwrap() = Some("model m is not available in the Batch API".into());
    let dir = tempfile::tempdir().unwrap();
    let (run, rep) = check(dir.path(), &fake, "openai", FAST);
    assert_eq!(run.code, 3, "{}", run.dump());
    let errs = errors(&rep).join("\n");
    assert!(
        errs.contains("the batch failed: model m is not available in the Batch API"),
        "{errs}"
    );

    *control.fail.lock().unwrap() = None;
    let (again, _) = check(dir.path(), &fake, "openai", FAST);
    assert_eq!(again.code, 1, "{}", again.dump());
    assert!(!again.stderr.contains("resuming"), "{}", again.stderr);
    assert_eq!(control.created().len(), 2);
}

#[test]
fn errored_items_leave_their_cases_incomplete_and_only_they_are_submitted_again() {
    for router in ["openai", "anthropic"] {
        let (fake, control) = if router == "openai" {
            batch::openai(drifting)
        } else {
            batch::anthropic(anthropic_drifting)
        };
        control.item_errors.lock().unwrap().push(CANCEL.into());
        let dir = tempfile::tempdir().unwrap();
        let (run, rep) = check(dir.path(), &fake, router, FAST);
        assert_eq!(run.code, 3, "{router}: {}", run.dump());
        let errs = errors(&rep).join("\n");
        assert!(errs.contains("cancel-01"), "{router}: {errs}");
        assert!(
            errs.contains("fake: this request was refused"),
            "{router}: {errs}"
        );

        control.item_errors.lock().unwrap().clear();
        let (again, _) = check(dir.path(), &fake, router, FAST);
        assert_eq!(again.code, 1, "{router}: {}", again.dump());
        let created = control.created();
        assert_eq!(created.len(), 2, "{router}: {created:?}");
        // The cancel case at base and at head: the only requests with no answer.
        assert_eq!(created[1].1, 2, "{router}: {created:?}");
    }
}

#[test]
fn a_poll_endpoint_that_answers_200_with_garbage_is_incomplete_not_a_pass() {
    let (fake, control) = batch::openai(right_answer);
    *control.garbage_polls.lock().unwrap() = Some("<html>gateway</html>".into());
    let dir = tempfile::tempdir().unwrap();
    let (run, rep) = check(dir.path(), &fake, "openai", FAST);
    assert_eq!(run.code, 3, "{}", run.dump());
    let errs = errors(&rep).join("\n");
    assert!(
        errs.contains("polling batch batch_2") && errs.contains("not JSON"),
        "{errs}"
    );
}

#[test]
fn routers_without_a_batch_api_are_usage_errors() {
    let calendar = [
        "check",
        "--base",
        BASE,
        "--head",
        HEAD,
        "--suite",
        SUITE,
        "--no-embed",
        "--no-cache",
    ];
    let with = |extra: &[&str]| {
        let mut a = calendar.to_vec();
        a.extend_from_slice(extra);
        cli::driftgate(&a).envs([("OPENAI_API_KEY", "k")]).run()
    };
    let run = with(&["--batch"]);
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr.contains("the semantic router has none"),
        "{}",
        run.stderr
    );
    let run = with(&[
        "--batch",
        "--router",
        "openai",
        "--model",
        "m",
        "--base-url",
        "https://res.openai.azure.com/openai/deployments/d",
        "--azure-api-version",
        "2024-10-21",
    ]);
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr
            .contains("Azure OpenAI's global batch deployments are not supported"),
        "{}",
        run.stderr
    );
    let run = with(&["--batch-wait", "60"]);
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(run.stderr.contains("--batch"), "{}", run.stderr);
    let run = with(&[
        "--batch",
        "--router",
        "openai",
        "--model",
        "m",
        "--batch-wait",
        "0",
    ]);
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr
            .contains("--batch-wait 0: expected seconds above 0"),
        "{}",
        run.stderr
    );
}
