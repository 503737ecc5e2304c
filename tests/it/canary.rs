//! `canary plan`, `canary bucket` and `watch` end to end, on the calendar example: traffic whose
//! sessions are bucketed by the rollout's own rule and served base's or head's definitions,
//! written as OpenTelemetry GenAI spans. The regression the README's `check` finds
//! (`schedule_appointment` 87.5% → 25.0% on its cases) must come out `rollback`; the same
//! behaviour at both arms must not. The shipped example (`examples/canary/`) is one of these
//! logs, pinned here (`DRIFTGATE_BLESS=1` rewrites it).

use std::path::Path;

use driftgate::canary::rollout::{Arm, Rollout, bucket};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use crate::support::cli::{driftgate, repo};

const TOOLS: [&str; 10] = [
    "schedule_appointment",
    "reschedule_appointment",
    "cancel_appointment",
    "list_appointments",
    "find_available_slots",
    "get_appointment",
    "send_reminder",
    "add_appointment_note",
    "check_in_patient",
    "update_patient_contact",
];

fn plan(dir: &Path) -> Rollout {
    let out = dir.join("rollout.json");
    let run = driftgate([
        "canary",
        "plan",
        "--base",
        "examples/calendar/tools.base.json",
        "--head",
        "examples/calendar/tools.head.json",
        "-o",
    ])
    .args([&out])
    .run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    Rollout::parse(&std::fs::read_to_string(&out).unwrap(), "rollout.json").unwrap()
}

/// Arguments the served schema takes: each required property, a value of its type.
fn arguments(r: &Rollout, arm: Arm, tool: &str) -> Value {
    let Some(def) = r.side(arm).get(tool).copied() else {
        return json!({});
    };
    let schema = &def["inputSchema"];
    let mut args = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap();
        let prop = &schema["properties"][name];
        let value = match prop["type"].as_str() {
            _ if prop["enum"].is_array() => prop["enum"][0].clone(),
            Some("integer") | Some("number") => json!(1),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ if prop["format"] == "date-time" => json!("2026-12-07T10:00:00Z"),
            _ if prop["format"] == "date" => json!("2026-12-07"),
            _ => json!("x"),
        };
        args.insert(name.to_string(), value);
    }
    Value::Object(args)
}

fn attr(k: &str, v: Value) -> Value {
    match v {
        Value::String(s) => json!({"key": k, "value": {"stringValue": s}}),
        other => json!({"key": k, "value": {"stringValue": other.to_string()}}),
    }
}

/// How sessions behave: the chance a scheduling request reaches `schedule_appointment`, per arm.
struct Behaviour {
    base: f64,
    head: f64,
}

/// `n` sessions at `stage` %, one chat span each (an OTLP/JSON export per line), the arm by the
/// rollout's bucket rule; with `definitions`, each span logs the definitions it was served.
fn traffic(
    r: &Rollout,
    stage: f64,
    n: usize,
    b: &Behaviour,
    definitions: bool,
    seed: u64,
) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = String::new();
    for i in 0..n {
        let session = format!("sess-{seed}-{i}");
        let arm = r.arm(&session, stage);
        let p_schedule = if arm == Arm::Head { b.head } else { b.base };
        let intended = if rng.random_bool(0.3) {
            0
        } else {
            rng.random_range(1..TOOLS.len())
        };
        let called: Option<&str> = if rng.random_bool(0.05) {
            None
        } else if rng.random_bool(0.01) {
            Some("book_appointment") // an invented name, at both arms alike
        } else if intended == 0 {
            Some(if rng.random_bool(p_schedule) {
                TOOLS[0]
            } else if rng.random_bool(0.6) {
                TOOLS[4]
            } else {
                TOOLS[1]
            })
        } else {
            Some(TOOLS[intended])
        };
        let mut args = called.map(|t| arguments(r, arm, t)).unwrap_or(json!({}));
        // Now and then an agent spells a parameter its own way.
        if called == Some(TOOLS[0]) && rng.random_bool(0.1) {
            let v = args["start_time"].take();
            args.as_object_mut().unwrap().remove("start_time");
            args["startTime"] = v;
        }
        let output = match called {
            Some(t) => {
                json!([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": t, "arguments": args}]}])
            }
            None => {
                json!([{"role": "assistant", "parts": [{"type": "text", "content": "Which day suits you?"}]}])
            }
        };
        let mut attrs = vec![
            attr("gen_ai.operation.name", json!("chat")),
            attr("session.id", json!(session)),
            attr(
                "gen_ai.input.messages",
                json!(json!([{"role": "user", "parts": [{"type": "text", "content": format!("request {i} for {}", TOOLS[intended])}]}]).to_string()),
            ),
            attr("gen_ai.output.messages", json!(output.to_string())),
        ];
        // Every third request carries its label; a misrouted one gets a thumbs-down every other
        // time.
        if i % 3 == 0 {
            attrs.push(attr("app.expected", json!(TOOLS[intended])));
        }
        if called != Some(TOOLS[intended]) && i % 2 == 0 {
            attrs.push(attr("app.feedback", json!("down")));
        }
        if definitions {
            let defs: Vec<&Value> = r.side(arm).into_values().collect();
            attrs.push(attr(
                "gen_ai.tool.definitions",
                json!(json!(defs).to_string()),
            ));
        }
        let span = json!({
            "traceId": format!("{:032x}", i), "spanId": format!("{:016x}", i), "name": "chat",
            "startTimeUnixNano": format!("{}", (1_767_225_600u64 + 12 * i as u64) * 1_000_000_000),
            "attributes": attrs
        });
        let export = json!({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]});
        out.push_str(&export.to_string());
        out.push('\n');
    }
    out
}

/// The same traffic as the server logs it to PostHog: one `$mcp_tool_call` event per call, the
/// description clipped to 512 characters, as JSON lines; no answers, so no-call sessions vanish.
fn posthog(r: &Rollout, stage: f64, n: usize, b: &Behaviour, seed: u64) -> String {
    let mut out = String::new();
    for line in traffic(r, stage, n, b, false, seed).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let span = &v["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        let attr = |k: &str| {
            span["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["key"] == k)
                .map(|a| a["value"]["stringValue"].as_str().unwrap().to_string())
        };
        let session = attr("session.id").unwrap();
        let output: Value = serde_json::from_str(&attr("gen_ai.output.messages").unwrap()).unwrap();
        let Some(call) = output[0]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["type"] == "tool_call")
        else {
            continue;
        };
        let name = call["name"].as_str().unwrap();
        let arm = r.arm(&session, stage);
        let Some(def) = r.side(arm).get(name).copied() else {
            continue; // the server never sees a call to a tool it does not have
        };
        let description: String = def["description"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(512)
            .collect();
        let nanos: u64 = span["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let when = chrono::DateTime::from_timestamp((nanos / 1_000_000_000) as i64, 0).unwrap();
        let event = json!({"event": "$mcp_tool_call", "timestamp": when.to_rfc3339(), "distinct_id": "u",
            "properties": {"$session_id": session, "$mcp_tool_name": name,
                "$mcp_tool_description": description, "$mcp_parameters": call["arguments"].to_string(),
                "$mcp_is_error": false, "$mcp_source": "posthog_mcp_analytics"}});
        out.push_str(&event.to_string());
        out.push('\n');
    }
    out
}

fn watch(dir: &Path, log: &str, stage: &str, extra: &[&str]) -> (i32, Value, String) {
    let path = dir.join(format!("log-{}.jsonl", log.len()));
    std::fs::write(&path, log).unwrap();
    let run = driftgate(["watch", "--rollout"])
        .args([dir.join("rollout.json")])
        .args(["--stage", stage, "--format", "json", "--logs"])
        .args([&path])
        .args(extra)
        .run();
    let v = serde_json::from_str(&run.stdout).unwrap_or(Value::Null);
    (run.code, v, run.stderr)
}

/// `driftgate watch` on the shipped example (stage 10), with `extra` flags.
fn watch_example(extra: &[&str]) -> crate::support::cli::Run {
    driftgate([
        "watch",
        "--rollout",
        "examples/canary/rollout.json",
        "--stage",
        "10",
        "--logs",
        "examples/canary/stage10.otel.jsonl",
    ])
    .args(extra)
    .run()
}

fn metric<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
}

#[test]
fn the_calendar_regression_rolls_back_and_an_unchanged_behaviour_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let r = plan(dir.path());
    assert_eq!(
        r.changes.keys().collect::<Vec<_>>(),
        ["schedule_appointment"]
    );
    let regression = Behaviour {
        base: 0.875,
        head: 0.25,
    };
    let log = traffic(&r, 10.0, 2000, &regression, false, 1);
    let aliases = dir.path().join("aliases.json");
    let aliases_arg = aliases.to_str().unwrap();
    let (code, rep, err) = watch(dir.path(), &log, "10", &["--aliases", aliases_arg]);
    assert_eq!(code, 1, "{rep:#}\n{err}");
    // What the traffic invented, matched by meaning: the parameter maps to the real one, and the
    // invented tool name to the tool it means (by spelling it is nearest to get_appointment).
    let map: Value = serde_json::from_str(&std::fs::read_to_string(&aliases).unwrap()).unwrap();
    assert_eq!(map["driftgate_aliases"], 1);
    let p = &map["parameters"][0];
    assert_eq!(
        (
            p["tool"].as_str(),
            p["alias"].as_str(),
            p["parameter"].as_str()
        ),
        (
            Some("schedule_appointment"),
            Some("startTime"),
            Some("start_time")
        ),
        "{map:#}"
    );
    assert!(p["count"].as_u64().unwrap() > 5);
    for t in map["tools"].as_array().unwrap() {
        assert!(
            t["alias"] != "book_appointment" || t["tool"] == "schedule_appointment",
            "{map:#}"
        );
    }
    assert!(map.to_string().contains("book_appointment"), "{map:#}");
    assert_eq!(rep["decision"], "rollback");
    assert!(metric(&rep, "share:schedule_appointment")["worse"] == true);
    assert_eq!(rep["attribution"]["by_bucket"], 2000);
    // With the labels read, labelled accuracy falls at head and misrouting is guarded.
    let labels = ["--expected-attribute", "app.expected"];
    let (code, rep, _) = watch(dir.path(), &log, "10", &labels);
    assert_eq!(code, 1);
    let acc = &rep["labelled_accuracy"];
    assert!(
        acc[1]["accuracy"].as_f64() < acc[0]["accuracy"].as_f64(),
        "{acc}"
    );
    assert!(metric(&rep, "misrouted")["head_events"].as_u64().unwrap() > 0);
    // The same behaviour at both arms: no rollback over several seeds, at two stages.
    for (seed, stage) in [(2, 10.0), (3, 50.0), (4, 50.0)] {
        let same = Behaviour {
            base: 0.875,
            head: 0.875,
        };
        let log = traffic(&r, stage, 1500, &same, true, seed);
        let (code, rep, err) = watch(dir.path(), &log, &stage.to_string(), &[]);
        assert_ne!(code, 1, "seed {seed}: {rep:#}\n{err}");
        assert_eq!(rep["attribution"]["by_definitions"], 1500, "{rep:#}");
        assert_eq!(rep["attribution"]["against_bucket"], 0);
    }
}

#[test]
fn enough_equal_traffic_promotes_and_too_little_continues_with_what_is_needed() {
    let dir = tempfile::tempdir().unwrap();
    let r = plan(dir.path());
    let same = Behaviour {
        base: 0.875,
        head: 0.875,
    };
    let little = traffic(&r, 50.0, 200, &same, false, 7);
    let (code, rep, _) = watch(dir.path(), &little, "50", &[]);
    assert_eq!(
        (code, rep["decision"].as_str()),
        (0, Some("continue")),
        "{rep:#}"
    );
    assert!(
        rep["reason"].as_str().unwrap().contains("more session"),
        "{rep:#}"
    );
    assert!(rep["hours_needed"].as_f64().unwrap() > 0.0);
    // Labels and feedback, when named: guarded, and labelled accuracy per arm.
    let labels = [
        "--expected-attribute",
        "app.expected",
        "--feedback-attribute",
        "app.feedback",
    ];
    let (_, rep, _) = watch(dir.path(), &little, "50", &labels);
    let names: Vec<&str> = rep["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"misrouted") && names.contains(&"thumbs-down"),
        "{names:?}"
    );
    let acc = &rep["labelled_accuracy"];
    let n = acc[0]["sessions"].as_u64().unwrap() + acc[1]["sessions"].as_u64().unwrap();
    assert!(
        (60..=75).contains(&n),
        "every third of 200 sessions is labelled: {acc}"
    );
    let lots = traffic(&r, 50.0, 30_000, &same, false, 8);
    let (code, rep, _) = watch(dir.path(), &lots, "50", &["--margin", "0.5"]);
    assert_eq!(
        (code, rep["decision"].as_str()),
        (0, Some("promote")),
        "{rep:#}"
    );
    assert_eq!(rep["next_stage"], 100.0);
}

#[test]
fn a_split_that_is_not_the_stage_is_incomplete_not_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let r = plan(dir.path());
    let same = Behaviour {
        base: 0.875,
        head: 0.875,
    };
    // Served at 50% but watched as 10%: the definitions say who got what, and the arms are not
    // the split the stage says.
    let log = traffic(&r, 50.0, 1000, &same, true, 9);
    let (code, rep, _) = watch(dir.path(), &log, "10", &[]);
    assert_eq!(code, 3, "{rep:#}");
    assert_eq!(rep["decision"], "incomplete");
    assert!(
        rep["reason"]
            .as_str()
            .unwrap()
            .contains("attribution or bucketing is broken")
    );
    assert!(rep["attribution"]["against_bucket"].as_u64().unwrap() > 300);
}

#[test]
fn bad_input_is_named_counted_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = plan(dir.path());
    let same = Behaviour {
        base: 0.9,
        head: 0.9,
    };
    let mut log = traffic(&r, 50.0, 50, &same, false, 11);
    log.push_str("{not json\n");
    let (code, rep, err) = watch(dir.path(), &log, "50", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("1 malformed record(s)") && err.contains(":51"),
        "{err}"
    );
    assert!(rep["notes"].to_string().contains("malformed"));
    let (code, _, err) = watch(dir.path(), &log, "50", &["--strict"]);
    assert_eq!(code, 2);
    assert!(err.contains(":51: invalid JSON"), "{err}");
    // A span served a version the rollout does not know: left out, counted.
    let one = traffic(&r, 50.0, 1, &same, true, 12);
    let mut v: Value = serde_json::from_str(one.trim_end()).unwrap();
    let attrs = v
        .pointer_mut("/resourceSpans/0/scopeSpans/0/spans/0/attributes")
        .unwrap();
    let defs = attrs.as_array_mut().unwrap().last_mut().unwrap();
    let mut served: Value =
        serde_json::from_str(defs["value"]["stringValue"].as_str().unwrap()).unwrap();
    for d in served.as_array_mut().unwrap() {
        if d["name"] == "schedule_appointment" {
            d["description"] = json!("A third wording, neither base's nor head's.");
        }
    }
    defs["value"]["stringValue"] = json!(served.to_string());
    let (_, rep, _) = watch(dir.path(), &format!("{v}\n"), "50", &[]);
    assert_eq!(rep["attribution"]["unknown_version"], 1, "{rep:#}");
    // Logs that say nothing about who was served (no definitions, attribute or session) are
    // not judged by time: incomplete, said.
    let anonymous: String = traffic(&r, 50.0, 40, &same, false, 13)
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            let attrs = v
                .pointer_mut("/resourceSpans/0/scopeSpans/0/spans/0/attributes")
                .unwrap()
                .as_array_mut()
                .unwrap();
            attrs.retain(|a| a["key"] != "session.id");
            format!("{v}\n")
        })
        .collect();
    let (code, rep, _) = watch(dir.path(), &anonymous, "50", &[]);
    assert_eq!(code, 3, "{rep:#}");
    assert!(
        rep["reason"]
            .as_str()
            .unwrap()
            .contains("before/after is confounded")
    );
    // A span that is no chat (a tool execution without a tool name) is skipped and counted.
    let mut with_span = traffic(&r, 50.0, 30, &same, false, 14);
    with_span.push_str(&json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "x", "name": "execute_tool", "attributes": [attr("gen_ai.operation.name", json!("execute_tool"))]}]}]}]}).to_string());
    with_span.push('\n');
    let (_, rep, _) = watch(dir.path(), &with_span, "50", &[]);
    assert!(
        rep["notes"]
            .to_string()
            .contains("1 record(s) of 31 skipped as no exchange"),
        "{}",
        rep["notes"]
    );
    // Stage 100 has no base to compare with; a rollout edited by hand is refused with where.
    let (code, _, err) = watch(dir.path(), &log, "100", &[]);
    assert_eq!(code, 2);
    assert!(err.contains("strictly between 0 and 100"), "{err}");
    let path = dir.path().join("rollout.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replacen("Book", "Reserve", 1)).unwrap();
    let (code, _, err) = watch(dir.path(), &log, "50", &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("/definitions/sha256:") && err.contains("edited by hand"),
        "{err}"
    );
}

#[test]
fn bucket_prints_the_rule_s_version_and_the_docs_vectors_hold() {
    let dir = tempfile::tempdir().unwrap();
    let r = plan(dir.path());
    for s in ["alice", "bob", "sess-1-0"] {
        let run = driftgate(["canary", "bucket", "--rollout"])
            .args([dir.path().join("rollout.json")])
            .args(["--session", s, "--stage", "10"])
            .run();
        assert_eq!(run.code, 0, "{}", run.stderr);
        let want = if r.arm(s, 10.0) == Arm::Head {
            "head"
        } else {
            "base"
        };
        assert!(run.stdout.starts_with(want), "{}", run.stdout);
        assert!(run.stdout.contains(&format!("{:.6}", bucket(&r.salt, s))));
    }
    // docs/canary.md's test vectors are what the rule computes.
    let doc = std::fs::read_to_string(repo("docs/canary.md")).unwrap();
    let mut seen = 0;
    for line in doc.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line
            .split('|')
            .map(|c| c.trim().trim_matches('`'))
            .collect();
        let (salt, session, u) = (cells[1], cells[2], cells[3]);
        let Ok(u) = u.parse::<f64>() else { continue };
        assert_eq!(
            format!("{:.12}", bucket(salt, session)),
            format!("{u:.12}"),
            "{line}"
        );
        seen += 1;
    }
    assert!(seen >= 4, "docs/canary.md lists its test vectors");
}

#[test]
fn the_shipped_example_is_this_generator_s_and_rolls_back() {
    // examples/canary/: the rollout of the calendar example and a stage-10 log of the
    // regression, as the README runs them.
    let dir = tempfile::tempdir().unwrap();
    let r = plan(dir.path());
    let shipped = repo("examples/canary");
    let log = traffic(
        &r,
        10.0,
        1200,
        &Behaviour {
            base: 0.875,
            head: 0.25,
        },
        false,
        21,
    );
    let rollout = std::fs::read_to_string(dir.path().join("rollout.json")).unwrap();
    if std::env::var_os("DRIFTGATE_BLESS").is_some() {
        std::fs::create_dir_all(&shipped).unwrap();
        std::fs::write(shipped.join("rollout.json"), &rollout).unwrap();
        std::fs::write(shipped.join("stage10.otel.jsonl"), &log).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(shipped.join("rollout.json")).unwrap(),
        rollout,
        "DRIFTGATE_BLESS=1 rewrites examples/canary"
    );
    assert_eq!(
        std::fs::read_to_string(shipped.join("stage10.otel.jsonl")).unwrap(),
        log
    );
    let run = watch_example(&[]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("ROLLBACK: rollback: "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .lines()
            .next()
            .unwrap()
            .contains("share:schedule_appointment")
    );
}

#[test]
fn a_posthog_export_is_attributed_by_the_description_it_logged_and_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let r = plan(dir.path());
    let regression = Behaviour {
        base: 0.875,
        head: 0.25,
    };
    let log = posthog(&r, 10.0, 2000, &regression, 31);
    let (code, rep, err) = watch(dir.path(), &log, "10", &["--log-format", "posthog"]);
    assert_eq!(code, 1, "{rep:#}\n{err}");
    assert!(metric(&rep, "share:schedule_appointment")["worse"] == true);
    // Calls of the changed tool carry its description: attributed by it; the others by bucket.
    let a = &rep["attribution"];
    assert!(a["by_definitions"].as_u64().unwrap() > 50, "{a}");
    assert_eq!(a["against_bucket"], 0);
    assert!(rep["notes"].to_string().contains("not the model's answers"));
    assert!(
        rep["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["name"] != "no-call")
    );
    // The same export as CSV, one column per property: the same decision, detected unasked.
    let mut csv = String::from(
        "event,timestamp,distinct_id,properties.$session_id,properties.$mcp_tool_name,properties.$mcp_tool_description,properties.$mcp_parameters,properties.$mcp_is_error\n",
    );
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    for line in log.lines() {
        let e: Value = serde_json::from_str(line).unwrap();
        let p = &e["properties"];
        let cells = [
            q(e["event"].as_str().unwrap()),
            q(e["timestamp"].as_str().unwrap()),
            q("u"),
            q(p["$session_id"].as_str().unwrap()),
            q(p["$mcp_tool_name"].as_str().unwrap()),
            q(p["$mcp_tool_description"].as_str().unwrap()),
            q(p["$mcp_parameters"].as_str().unwrap()),
            "false".to_string(),
        ];
        csv.push_str(&cells.join(","));
        csv.push('\n');
    }
    let (code, csv_rep, err) = watch(dir.path(), &csv, "10", &[]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(csv_rep["metrics"], rep["metrics"]);
    // A description neither side serves is another version: left out, counted.
    let other = log.replacen(
        &format!(
            "\"$mcp_tool_description\":{}",
            json!(r.side(Arm::Head)["schedule_appointment"]["description"])
        ),
        "\"$mcp_tool_description\":\"A third wording.\"",
        1,
    );
    let (_, rep, _) = watch(dir.path(), &other, "10", &["--log-format", "posthog"]);
    assert_eq!(rep["attribution"]["unknown_version"], 1, "{rep:#}");
}

#[test]
fn the_html_page_charts_the_changed_tool_s_confidence_sequence() {
    let run = watch_example(&["--format", "html"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let page = &run.stdout;
    crate::support::html::assert_inert(page, "watch page");
    // The changed tool's share first, then the metric that moved with it.
    let first = page
        .find("share:schedule_appointment: head / base")
        .unwrap();
    let second = page
        .find("share:find_available_slots: head / base")
        .unwrap();
    assert!(first < second);
    assert_eq!(page.matches("<svg").count(), 2);
    // The JSON carries the same history: 40 looks, the last at all 1200 sessions.
    let json = watch_example(&["--format", "json"]).json();
    let looks = json["history"][0]["looks"].as_array().unwrap();
    assert_eq!(looks.len(), 40);
    assert_eq!(looks.last().unwrap()["sessions"], 1200);
    // The band narrows as traffic comes in.
    let width = |l: &Value| l["high"].as_f64().unwrap() / l["low"].as_f64().unwrap();
    assert!(width(looks.last().unwrap()) < width(&looks[5]));
}
