//! `watch` on traffic a real model answered: a llama.cpp `llama-server` (Qwen2.5-Coder-0.5B)
//! routes every prompt of the calendar suite with base's definitions and with head's. Sessions
//! bucketed by the rollout's own rule each send one of those prompts and get that model's answer
//! for the definitions their bucket serves; the log is written as OpenTelemetry GenAI spans with
//! the definitions served, and `driftgate watch` reads it stage by stage (1 %, 10 %, 50 %). The
//! watch must roll back exactly when the model routes some prompt differently at head: the
//! README's head (this model routes all 20 prompts as before: no rollback), a head with the
//! sibling's purpose swapped in (it moves one: rollback), and a head the model sees unchanged
//! (an annotation edit: no rollback). Runs only when `DRIFTGATE_LLAMA_URL` is set
//! (`.ci/llama.sh start`).

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use driftgate::canary::rollout::{Arm, Rollout};
use driftgate::http::retry::{RetryPolicy, with_retry};
use driftgate::llm::{Answer, Message, Sampling, ToolChoice};
use driftgate::route::provider::ProviderRouter;
use driftgate::route::{RouteRequest, Router};
use driftgate::tools::ToolSet;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

const SYSTEM: &str =
    "You are a tool router. Call the one tool that best serves the user's request.";

fn repo(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// A tools file: repository-relative, or an absolute path.
fn tools(path: &str) -> ToolSet {
    let full = if path.starts_with('/') {
        path.to_string()
    } else {
        repo(path)
    };
    let text = std::fs::read_to_string(full).unwrap();
    driftgate::source::parse_text(&text, path).unwrap().0
}

/// The model's answers, by the served form of the definitions and the prompt: a head the model
/// sees as base is answered as base was (temperature 0, one seed), not asked again.
type Memo = BTreeMap<(String, String), Option<String>>;

/// What the model is shown of a tool set, as one key.
fn served(set: &ToolSet) -> String {
    set.tools
        .iter()
        .map(|t| driftgate::canary::rollout::served_hash(&t.to_value()).unwrap_or_default())
        .collect::<Vec<_>>()
        .join(",")
}

/// The model's tool for each prompt, given these definitions (`None`: no call).
async fn answers(
    router: &ProviderRouter,
    set: &ToolSet,
    prompts: &[String],
    memo: &mut Memo,
) -> Vec<Option<String>> {
    let key = served(set);
    let mut out = Vec::new();
    for (k, p) in prompts.iter().enumerate() {
        if let Some(a) = memo.get(&(key.clone(), p.clone())) {
            out.push(a.clone());
            continue;
        }
        // Clients list a server's tools in their own order: each prompt is asked with one of
        // four rotations of the list (as `check` replays), the same at both sides.
        let mut offered = set.tools.clone();
        let by = (k % 4) * offered.len() / 4;
        offered.rotate_left(by);
        let req = RouteRequest {
            system: SYSTEM.into(),
            messages: vec![Message {
                role: "user".into(),
                content: p.clone(),
            }],
            tools: offered,
            shared_tools: 0,
            tool_choice: ToolChoice::Required,
            sampling: Sampling {
                temperature: 0.0,
                seed: Some(42),
                max_tokens: 128,
            },
            repeat: 0,
        };
        let r = with_retry(&RetryPolicy::default(), || router.route(&req)).await;
        let answer = match r.result.map(|r| r.answer) {
            Ok(Answer::Call { name, .. }) => Some(name),
            _ => None,
        };
        memo.insert((key.clone(), p.clone()), answer.clone());
        out.push(answer);
    }
    out
}

fn attr(k: &str, v: String) -> Value {
    json!({"key": k, "value": {"stringValue": v}})
}

/// `sessions` sessions from `first`, each one prompt, at `stage`: OTel exports, one per line.
fn log(
    r: &Rollout,
    prompts: &[String],
    by_arm: &BTreeMap<Arm, Vec<Option<String>>>,
    stage: f64,
    first: usize,
    sessions: usize,
    rng: &mut ChaCha8Rng,
) -> String {
    let mut out = String::new();
    for i in first..first + sessions {
        let session = format!("user-{i}");
        let arm = r.arm(&session, stage);
        let k = rng.random_range(0..prompts.len());
        let defs: Vec<&Value> = r.side(arm).into_values().collect();
        let parts = match &by_arm[&arm][k] {
            Some(t) => json!([{"type": "tool_call", "id": "c", "name": t, "arguments": {}}]),
            None => json!([{"type": "text", "content": "(no call)"}]),
        };
        let span = json!({"spanId": format!("{i:016x}"), "name": "chat",
        "startTimeUnixNano": format!("{}", (1_767_225_600u64 + 30 * i as u64) * 1_000_000_000),
        "attributes": [
            attr("gen_ai.operation.name", "chat".into()),
            attr("session.id", session),
            attr("gen_ai.input.messages", json!([{"role": "user", "parts": [{"type": "text", "content": prompts[k]}]}]).to_string()),
            attr("gen_ai.output.messages", json!([{"role": "assistant", "parts": parts}]).to_string()),
            attr("gen_ai.tool.definitions", json!(defs).to_string()),
        ]});
        out.push_str(&json!({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).to_string());
        out.push('\n');
    }
    out
}

/// Plan base → head, then watch stages 1, 10, 50 with 600, 1200 and 2400 new sessions each:
/// the stage of the first rollback, if any, and the last decision.
async fn rollout(
    router: &ProviderRouter,
    head_rel: &str,
    dir: &std::path::Path,
    memo: &mut Memo,
) -> Outcome {
    let base = tools("examples/calendar/tools.base.json");
    let head = tools(head_rel);
    let r = Rollout::plan(&base, &head, &[1.0, 10.0, 50.0, 100.0], None).unwrap();
    let rollout = dir.join("rollout.json");
    std::fs::write(&rollout, r.render()).unwrap();
    let suite = driftgate::suite::load(std::path::Path::new(&repo("examples/calendar/suite.yaml")))
        .unwrap();
    // The scheduling prompts and their nearest neighbours' (where the change can move calls).
    let near = ["sched-", "resch-", "slots-", "cancel-"];
    let prompts: Vec<String> = suite
        .cases
        .iter()
        .filter(|c| near.iter().any(|p| c.id.starts_with(p)))
        .map(|c| c.prompt.clone())
        .collect();
    let mut by_arm = BTreeMap::new();
    by_arm.insert(Arm::Base, answers(router, &base, &prompts, memo).await);
    by_arm.insert(Arm::Head, answers(router, &head, &prompts, memo).await);
    let differ = (0..prompts.len())
        .filter(|&k| by_arm[&Arm::Base][k] != by_arm[&Arm::Head][k])
        .count();
    let to = |arm: Arm| {
        by_arm[&arm]
            .iter()
            .filter(|a| a.as_deref() == Some("schedule_appointment"))
            .count()
    };
    let (b, h) = (to(Arm::Base), to(Arm::Head));
    eprintln!(
        "{head_rel}: the model answers {differ} of {} prompts differently at head; {b} reach schedule_appointment at base, {h} at head",
        prompts.len()
    );
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut first = 0;
    let mut last = String::new();
    for (stage, n) in [(1.0, 600), (10.0, 1200), (50.0, 2400)] {
        let path = dir.join(format!("stage-{stage}.jsonl"));
        std::fs::write(&path, log(&r, &prompts, &by_arm, stage, first, n, &mut rng)).unwrap();
        first += n;
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_driftgate"))
            .args([
                "watch",
                "--format",
                "json",
                "--stage",
                &stage.to_string(),
                "--rollout",
            ])
            .arg(&rollout)
            .arg("--logs")
            .arg(&path)
            .output()
            .unwrap();
        let rep: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        last = rep["reason"].as_str().unwrap_or_default().to_string();
        eprintln!(
            "{head_rel} at {stage} %: exit {:?}: {last}",
            out.status.code()
        );
        // By the definitions logged where they differ as served; by bucket where they do not.
        let a = &rep["attribution"];
        let attributed = a["by_definitions"].as_u64().unwrap() + a["by_bucket"].as_u64().unwrap();
        assert_eq!(attributed, n as u64, "{rep:#}");
        assert_eq!(a["against_bucket"], 0, "{rep:#}");
        if rep["decision"] == "rollback" {
            assert_eq!(out.status.code(), Some(1));
            return Outcome {
                stage: Some(stage),
                last,
                base: b,
                head: h,
                differ,
            };
        }
        assert_ne!(rep["decision"], "incomplete", "{rep:#}");
    }
    Outcome {
        stage: None,
        last,
        base: b,
        head: h,
        differ,
    }
}

/// How a rollout went: the stage it rolled back at, the last reason, and how many prompts the
/// model sent to the changed tool at base and at head.
struct Outcome {
    stage: Option<f64>,
    last: String,
    base: usize,
    head: usize,
    /// Prompts the model answered differently at head.
    differ: usize,
}

impl Outcome {
    /// The watch decided by what the model did: it rolls back by the 50 % stage exactly when
    /// the model routed some prompt differently at head.
    fn judged_by_behaviour(&self, what: &str) {
        match (self.differ, self.stage) {
            (0, None) => {}
            (0, Some(s)) => panic!(
                "{what}: rolled back at {s} % though the model routed every prompt as before: {}",
                self.last
            ),
            (_, Some(_)) => {}
            (d, None) => panic!(
                "{what}: the model routed {d} prompt(s) differently (schedule_appointment {} -> {}) and the watch never rolled back: {}",
                self.base, self.head, self.last
            ),
        }
    }
}

#[ignore = "needs DRIFTGATE_LLAMA_URL (a real component; .ci/run starts it)"]
#[tokio::test]
async fn a_rollout_answered_by_a_real_model_rolls_back_exactly_when_its_routing_moves() {
    let url = common::need(
        "DRIFTGATE_LLAMA_URL",
        "start one with `bash .ci/llama.sh start`",
    );
    let base = format!("{}/v1", url.trim_end_matches('/'));
    let router =
        ProviderRouter::openai(Some(&base), "local", None, Duration::from_secs(300)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The README's regression.
    let mut memo = Memo::new();
    let o = rollout(
        &router,
        "examples/calendar/tools.head.json",
        dir.path(),
        &mut memo,
    )
    .await;
    // Judged by what the model did, not by the diff (the offline router's regression may not
    // be this model's).
    o.judged_by_behaviour("README head");
    // A harsher edit the small model may notice: the sibling's purpose swapped into
    // `schedule_appointment`'s description (the edit benchmark's "purpose swapped" kind).
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(repo("examples/calendar/tools.base.json")).unwrap(),
    )
    .unwrap();
    let sibling = v["tools"][1]["description"].clone();
    v["tools"][0]["description"] = sibling;
    let swapped = dir.path().join("tools.swapped.json");
    std::fs::write(&swapped, v.to_string()).unwrap();
    let sub = dir.path().join("swapped");
    std::fs::create_dir_all(&sub).unwrap();
    let o = rollout(&router, swapped.to_str().unwrap(), &sub, &mut memo).await;
    o.judged_by_behaviour("purpose swapped");
    assert!(
        o.differ > 0,
        "the swap moved none of the model's answers: the rollback branch went untested"
    );
    // A head the model sees unchanged: base with an annotation added (not in what is served).
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(repo("examples/calendar/tools.base.json")).unwrap(),
    )
    .unwrap();
    v["tools"][6]["annotations"] = json!({"title": "Reminder"});
    let same = dir.path().join("tools.same.json");
    std::fs::write(&same, v.to_string()).unwrap();
    let sub = dir.path().join("same");
    std::fs::create_dir_all(&sub).unwrap();
    let o = rollout(&router, same.to_str().unwrap(), &sub, &mut memo).await;
    assert_eq!(o.differ, 0);
    o.judged_by_behaviour("annotation only");
}
