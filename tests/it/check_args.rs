//! Call accuracy end to end: the real binary against a loopback fake in OpenAI's Chat
//! Completions and Anthropic's Messages wire formats. The fake calls the right tool at both
//! sides, with right arguments at base and one kind of bad call per case at head (missing
//! required, an invented name, wrong type, a value outside the enum, out of bounds, valid but not
//! what the case expects, a parameter the case wants absent). Routing sees nothing; call accuracy
//! sees all of it, names each problem with its pointer, and fails the gate.

use serde_json::{Value, json};

use crate::support::cli::{self, Run};
use crate::support::fake::{Fake, Request, Step};
use crate::support::openai::{chat_server, text_answer, tool_call};
use crate::support::{anthropic, read_tree};

const SUITE: &str = "tests/fixtures/args/calendar-calls.suite.yaml";
use crate::support::calendar::{BASE, HEAD};
/// Echoed by the fake inside one head call's arguments: it must be masked everywhere.
const KEY: &str = "sk-fake-args-0123456789abcdef";

/// The head version of the calendar tools rewrote this description (both wire shapes).
fn is_head(req: &Request) -> bool {
    req.body["tools"].as_array().is_some_and(|tools| {
        tools.iter().any(|t| {
            let f = if t.get("function").is_some() {
                &t["function"]
            } else {
                t
            };
            f["name"] == "schedule_appointment" && f["description"] == "Book a slot."
        })
    })
}

/// (tool, base arguments, head arguments) per prompt; `None`: a text answer.
fn script(prompt: &str) -> Option<(&'static str, Value, Value)> {
    let slots = |d: Value| json!({"provider_id": "P-12", "from": "2026-05-01", "to": "2026-05-05", "duration_minutes": d});
    Some(match prompt {
        "Give me the details of appointment A-1029" => (
            "get_appointment",
            json!({"appointment_id": "A-1029"}),
            json!({}),
        ),
        "Where and with whom is appointment 5521, and is it confirmed?" => (
            "get_appointment",
            json!({"appointment_id": "5521"}),
            json!({"appointmentId": "5521"}),
        ),
        "Find open 30-minute slots for provider P-12 between May 1 and May 5" => {
            ("find_available_slots", slots(json!(30)), slots(json!("30")))
        }
        "Email a reminder for appointment 5521" => (
            "send_reminder",
            json!({"appointment_id": "5521", "channel": "email"}),
            json!({"appointment_id": "5521", "channel": "pigeon"}),
        ),
        "Which times are still available in Dr. Patel's calendar this month?" => {
            ("find_available_slots", slots(json!(30)), slots(json!(1000)))
        }
        "Text the patient a reminder about tomorrow's appointment A-1029" => (
            "send_reminder",
            json!({"appointment_id": "A-1029", "channel": "sms"}),
            json!({"appointment_id": "A-1029", "channel": "email"}),
        ),
        "Please drop appointment A-77 and free up the slot" => (
            "cancel_appointment",
            json!({"appointment_id": "A-77"}),
            json!({"appointment_id": "A-77", "reason": format!("key {KEY}")}),
        ),
        _ => return None,
    })
}

fn answer(req: &Request, anthropic_wire: bool) -> Step {
    let prompt = req.body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    match (script(&prompt), anthropic_wire) {
        (Some((tool, base, head)), wire) => {
            let args = if is_head(req) { head } else { base };
            if wire {
                anthropic::tool_use(tool, args)
            } else {
                tool_call(tool, &args.to_string())
            }
        }
        (None, true) => anthropic::text("Canberra."),
        (None, false) => text_answer("Canberra."),
    }
}

fn check(router: &str) -> (Run, Value, String) {
    let wire = router == "anthropic";
    check_with(router, HEAD, &[], move |req| answer(req, wire))
}

fn check_with(
    router: &str,
    head: &str,
    extra: &[&str],
    answer: impl Fn(&Request) -> Step + Send + Sync + 'static,
) -> (Run, Value, String) {
    let wire = router == "anthropic";
    let fake = if wire {
        Fake::handler(answer)
    } else {
        chat_server(answer)
    };
    let dir = tempfile::tempdir().unwrap();
    let json_out = dir.path().join("report.json");
    let cache = dir.path().join("cache");
    let url = if wire { fake.url("") } else { fake.base_url() };
    let run = cli::driftgate([
        "check",
        "--base",
        BASE,
        "--head",
        head,
        "--suite",
        SUITE,
        "--router",
        router,
        "--base-url",
        &url,
        "--model",
        "m",
        "--no-embed",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--json-out",
        json_out.to_str().unwrap(),
    ])
    .args(extra)
    .envs([("OPENAI_API_KEY", KEY), ("ANTHROPIC_API_KEY", KEY)])
    .run();
    let text = std::fs::read_to_string(&json_out)
        .unwrap_or_else(|e| panic!("no JSON report ({e}):\n{}", run.dump()));
    let on_disk = read_tree(dir.path());
    (run, serde_json::from_str(&text).unwrap(), on_disk)
}

/// The head call of flipped case `id`, judged.
fn head_call<'a>(report: &'a Value, id: &str) -> &'a Value {
    let flips = report["routing"]["calls"]["flips"].as_array().unwrap();
    let f = flips
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("case {id} did not flip: {flips:?}"));
    assert_eq!(f["direction"], "regressed", "{f}");
    assert_eq!(f["base_call"]["type"], "correct", "{f}");
    &f["head_call"]
}

fn kinds(call: &Value) -> Vec<(String, String)> {
    call["problems"]
        .as_array()
        .map(|p| {
            p.iter()
                .map(|p| {
                    (
                        p["kind"].as_str().unwrap().to_string(),
                        p["pointer"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn assert_every_kind_is_named(r: &Value) {
    crate::support::reports::assert_matches_schema(r, "the call-accuracy report");
    let routing = &r["routing"];
    assert_eq!(
        routing["summary"]["base_accuracy"], 1.0,
        "{}",
        routing["summary"]
    );
    assert_eq!(routing["summary"]["delta"], 0.0, "{}", routing["summary"]);
    assert!(routing["flips"].as_array().unwrap().is_empty());
    let calls = &routing["calls"];
    assert_eq!(calls["cases_with_args"], 7);
    assert_eq!(calls["summary"]["base_accuracy"], 1.0);
    assert_eq!(calls["summary"]["head_accuracy"], 1.0 / 8.0);
    assert_eq!(calls["summary"]["discordant_right_to_wrong"], 7);
    assert_eq!(calls["head_outcomes"]["invalid arguments"], 5);
    assert_eq!(calls["head_outcomes"]["wrong arguments"], 2);

    let missing = head_call(r, "missing");
    assert_eq!(missing["type"], "invalid_arguments");
    assert_eq!(
        kinds(missing),
        [("missing-required".into(), "/appointment_id".into())]
    );
    let invented = head_call(r, "invented");
    let k = kinds(invented);
    assert!(
        k.contains(&("missing-required".into(), "/appointment_id".into())),
        "{k:?}"
    );
    assert!(
        k.contains(&("unknown-parameter".into(), "/appointmentId".into())),
        "{k:?}"
    );
    let unknown = invented["problems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "unknown-parameter")
        .unwrap();
    assert_eq!(unknown["did_you_mean"], "appointment_id");
    assert_eq!(
        kinds(head_call(r, "type")),
        [("wrong-type".into(), "/duration_minutes".into())]
    );
    assert_eq!(
        kinds(head_call(r, "enum")),
        [("not-allowed".into(), "/channel".into())]
    );
    assert_eq!(
        kinds(head_call(r, "bounds")),
        [("out-of-bounds".into(), "/duration_minutes".into())]
    );
    let wrong = head_call(r, "wrong");
    assert_eq!(wrong["type"], "wrong_arguments");
    assert_eq!(wrong["mismatches"][0]["param"], "channel");
    assert_eq!(wrong["mismatches"][0]["got"], "email");
    assert_eq!(wrong["mismatches"][0]["expected"], r#"one of ["sms"]"#);
    let absent = head_call(r, "absent");
    assert_eq!(absent["type"], "wrong_arguments");
    assert_eq!(absent["mismatches"][0]["param"], "reason");
    assert_eq!(absent["mismatches"][0]["expected"], "absent");

    // What moved, argument by argument.
    let flip = |id: &str| {
        calls["flips"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(
        flip("enum")["arguments"],
        json!([{"param": "channel", "base": "email", "head": "pigeon"}])
    );
    assert_eq!(
        flip("invented")["arguments"],
        json!([{"param": "appointmentId", "head": "5521"}, {"param": "appointment_id", "base": "5521"}])
    );
    assert_eq!(
        calls["invented"],
        json!([{"tool": "get_appointment", "name": "appointmentId", "did_you_mean": "appointment_id", "base": 0, "head": 1}])
    );
    // The verdict names the metric that failed: routing did not move.
    assert_eq!(r["verdict"]["status"], "fail");
    let reason = r["verdict"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("call accuracy 100.0% → 12.5% (-87.5 pts, args_tolerance 2.0 pts; 7 case(s) regressed, 0 fixed, p=0.0078 < 0.015; routing +0.0 pts)"),
        "{reason}"
    );
}

#[test]
fn openai_bad_calls_are_judged_kind_by_kind_and_fail_call_accuracy() {
    let (run, r, on_disk) = check("openai");
    assert_eq!(run.code, 1, "{}", run.dump());
    assert_every_kind_is_named(&r);
    // The terminal shows the flips with their argument diffs and the invented name.
    assert!(
        run.stdout
            .contains("Arguments regressed, routing unchanged (7):"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(r#"channel: "email" → "pigeon""#),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("appointmentId"), "{}", run.stdout);
    // The key the fake echoed into an argument is masked in every output and file.
    for (what, text) in [
        ("stdout", &run.stdout),
        ("stderr", &run.stderr),
        ("disk", &on_disk),
    ] {
        assert!(!text.contains(KEY), "{what} leaks the key");
    }
    let absent = r["routing"]["calls"]["flips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "absent")
        .unwrap();
    assert_eq!(absent["arguments"][0]["head"], "key ***", "{absent}");
    // The report reads back and renders as inert Markdown with the call section.
    let report =
        driftgate::report::Report::from_json(&r.to_string(), "report.json").expect("reads back");
    let md = driftgate::report::render::markdown::render(&report, &Default::default());
    crate::support::markdown::assert_inert(&md, None, None);
    assert!(md.contains("**Call accuracy**"), "{md}");
    assert!(
        md.contains("#### Arguments moved, routing unchanged: 7 regressed, 0 fixed"),
        "{md}"
    );
}

#[test]
fn anthropic_tool_use_blocks_are_judged_the_same_way() {
    let (run, r, on_disk) = check("anthropic");
    assert_eq!(run.code, 1, "{}", run.dump());
    assert_eq!(r["router"]["kind"], "anthropic");
    assert_every_kind_is_named(&r);
    assert!(!on_disk.contains(KEY) && !run.stdout.contains(KEY));
}

/// `--confirm 2` re-asks call flips too, judged on the call: a bad head call that happens on
/// every re-ask is "confirmed 2/2"; one that happened on the first ask only (seed 0) and was right
/// on both re-asks did not reproduce and no longer counts, in JSON and on the terminal.
#[test]
fn confirm_reasks_call_flips_and_drops_the_ones_that_do_not_reproduce() {
    // The head's description shift (no case expects the tool here) would fail by itself; this
    // test is about the re-asks.
    let extra = ["--confirm", "2", "--meaning-policy", "review"];
    let (run, r, _) = check_with("openai", HEAD, &extra, |req| {
        let last = req.body["messages"].as_array().and_then(|m| m.last());
        let prompt = last.and_then(|m| m["content"].as_str()).unwrap_or_default();
        if is_head(req)
            && prompt == "Email a reminder for appointment 5521"
            && req.body["seed"] != 0
        {
            let ok = json!({"appointment_id": "5521", "channel": "email"});
            return tool_call("send_reminder", &ok.to_string());
        }
        answer(req, false)
    });
    // Six confirmed flips are p = 1/64 = 0.0156, not below require_significance 0.015: a
    // 75-point drop the suite cannot call is inconclusive (exit 4), never a pass.
    assert_eq!(run.code, 4, "{}", run.dump());
    assert_eq!(r["verdict"]["status"], "inconclusive");
    assert!(
        r["verdict"]["reason"].as_str().unwrap().starts_with(
            "overall call accuracy fell 100.0% → 25.0% on 8 case(s) (6 regressed, 0 fixed; p=0.0156, not below 0.015)"
        ),
        "{}",
        r["verdict"]
    );
    let calls = &r["routing"]["calls"];
    let flips = calls["flips"].as_array().unwrap();
    assert_eq!(flips.len(), 6, "{flips:?}");
    for f in flips {
        assert_eq!(f["confirmed"], json!({"reproduced": 2, "asked": 2}), "{f}");
    }
    let gone = calls["not_reproduced"].as_array().unwrap();
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert_eq!(gone[0]["id"], "enum");
    assert_eq!(gone[0]["confirmed"], json!({"reproduced": 0, "asked": 2}));
    crate::support::reports::assert_matches_schema(&r, "the confirmed report");
    assert_eq!(calls["summary"]["discordant_right_to_wrong"], 6);
    assert!(run.stdout.contains("(confirmed 2/2)"), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "Call flips that did not reproduce under --confirm (no longer counted): enum regressed did not reproduce (0/2)"
        ),
        "{}",
        run.stdout
    );
    let report =
        driftgate::report::Report::from_json(&r.to_string(), "report.json").expect("reads back");
    let md = driftgate::report::render::markdown::render(&report, &Default::default());
    assert!(
        md.contains("Call flips that did not reproduce under `--confirm` (no longer counted): `enum` regressed did not reproduce (0/2)"),
        "{md}"
    );
    let page = driftgate::report::render::html::render(&report);
    assert!(
        page.contains("(arguments): did not reproduce (0/2)"),
        "{page}"
    );
}

/// The suite's expected arguments are read against head's tools too: a head that narrows
/// `send_reminder`'s channel to `sms` makes case `enum` (which expects `email`) impossible, and the
/// report says so before anyone reads the call drop; base had no such problem.
#[test]
fn expected_args_head_makes_impossible_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut tools: Value = serde_json::from_str(&std::fs::read_to_string(HEAD).unwrap()).unwrap();
    let reminder = tools["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == "send_reminder")
        .unwrap();
    reminder["inputSchema"]["properties"]["channel"]["enum"] = json!(["sms"]);
    let head = dir.path().join("head.json");
    std::fs::write(&head, tools.to_string()).unwrap();
    let (run, r, _) = check_with("openai", head.to_str().unwrap(), &[], |req| {
        answer(req, false)
    });
    assert_eq!(run.code, 1, "{}", run.dump());
    let notes: Vec<&str> = r["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let at_head: Vec<&&str> = notes
        .iter()
        .filter(|n| n.starts_with("suite vs head tools: "))
        .collect();
    assert_eq!(at_head.len(), 1, "{notes:#?}");
    assert!(
        at_head[0].starts_with("suite vs head tools: case \"enum\": `args/channel`"),
        "{notes:#?}"
    );
    assert!(
        !notes.iter().any(|n| n.starts_with("suite vs base tools")),
        "{notes:#?}"
    );
}

/// `check --aliases`: the names the router invented at head go into the alias map, matched by
/// meaning — `appointmentId` is `get_appointment`'s `appointment_id` — and nothing the schemas
/// declare is ever an alias.
#[test]
fn check_writes_the_alias_map_of_what_head_invented() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aliases.json");
    let (run, _, _) = check_with(
        "openai",
        HEAD,
        &["--aliases", path.to_str().unwrap()],
        |req| answer(req, false),
    );
    assert_eq!(run.code, 1, "{}", run.dump());
    let map: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let p = &map["parameters"][0];
    assert_eq!(
        (
            p["tool"].as_str(),
            p["alias"].as_str(),
            p["parameter"].as_str()
        ),
        (
            Some("get_appointment"),
            Some("appointmentId"),
            Some("appointment_id")
        ),
        "{map:#}"
    );
    assert!(map["matched_by"].as_str().unwrap().starts_with("meaning"));
    assert!(
        run.stderr.contains("1 parameter alias(es)"),
        "{}",
        run.stderr
    );
}
