//! `driftgate suite import` end to end on hand-written logs of every format it reads
//! (`tests/fixtures/import/`, written from the formats' public specs): what each record becomes,
//! malformed lines named by file and line, redaction, near-duplicates, the per-tool cap, and the
//! `review: true` mark that `suite check` warns on and `check` refuses.

use std::path::Path;

use serde_json::Value;

use crate::support::calendar;
use crate::support::cli::{self, Run};
use crate::support::repo;

const DIR: &str = "tests/fixtures/import";
const ALL: [&str; 6] = [
    "openai.jsonl",
    "openai-batch.input.jsonl",
    "openai-batch.output.jsonl",
    "anthropic.jsonl",
    "otel.json",
    "otel.jsonl",
];

/// `suite import` of `files` (fixture names) with `extra` flags, from the repository root, with
/// its own cache directory.
fn import(cache: &Path, files: &[&str], extra: &[&str]) -> Run {
    let mut args: Vec<String> = vec!["suite".into(), "import".into()];
    args.extend(files.iter().map(|f| format!("{DIR}/{f}")));
    args.extend(["--cache-dir".into(), cache.display().to_string()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    cli::driftgate(&args).run()
}

/// The cases of a written suite, as YAML values, and its ids still marked for review.
fn cases(path: &Path) -> (Vec<Value>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc: Value = serde_yaml::from_str(&text).unwrap();
    let (_, unreviewed) =
        driftgate::suite::parse_reviewed(&text, "s.yaml", Path::new(".")).unwrap();
    (doc["cases"].as_array().unwrap().clone(), unreviewed)
}

fn by_prompt<'a>(cases: &'a [Value], prompt: &str) -> &'a Value {
    cases
        .iter()
        .find(|c| c["prompt"] == prompt)
        .unwrap_or_else(|| panic!("no case {prompt:?} in {cases:#?}"))
}

/// What no output may contain: the secrets and personal data the fixtures carry.
const SECRETS: [&str; 7] = [
    "jane.doe@example.com",
    "sk-proj-Q1w2E3r4T5y6U7i8O9p0AaSsDd",
    "4111 1111 1111 1111",
    "sam@contoso.com",
    "415-555-0132",
    "li.wei@example.org",
    "Q1w2E3r4",
];

#[test]
fn every_format_becomes_proposed_cases_with_provenance_and_nothing_secret() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported.yaml");
    let run = import(
        dir.path(),
        &ALL,
        &["--no-embed", "-o", out.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.dump());
    let err = &run.stderr;
    // Every record accounted for: 30 read, 19 exchanges, 8 skipped, 6 malformed, 1 duplicate.
    assert!(err.contains("suite import: 30 records read (tests/fixtures/import/openai.jsonl: openai, tests/fixtures/import/openai-batch.input.jsonl: openai, tests/fixtures/import/openai-batch.output.jsonl: openai, tests/fixtures/import/anthropic.jsonl: anthropic, tests/fixtures/import/otel.json: otel, tests/fixtures/import/otel.jsonl: otel)"), "{err}");
    assert!(err.contains("  19 exchanges proposed a case; kept 18: (none) 3, add_to_cart 1, cancel_order 1, create_event 3, get_order_status 1, get_weather 4, list_events 1, search_flights 2, send_email 1, view_cart 1"), "{err}");
    assert!(
        err.contains("  dropped 1 as duplicates (1 exact, 0 near)"),
        "{err}"
    );
    assert!(
        err.contains(
            "  duplicate tests/fixtures/import/openai.jsonl:3: the same text as get_weather-"
        ),
        "{err}"
    );
    assert!(
        err.contains("  skipped 8 records that make no case"),
        "{err}"
    );
    for line in [
        "  skipped tests/fixtures/import/openai.jsonl:7: the request ends in a tool result, not a user turn (a later step of an agent loop)",
        "  skipped tests/fixtures/import/openai.jsonl:10: the request failed (HTTP 500)",
        "  skipped tests/fixtures/import/anthropic.jsonl:3: the request ends in a tool result",
        "  skipped tests/fixtures/import/anthropic.jsonl:7: the request failed (an error response)",
        "  skipped tests/fixtures/import/otel.json /resourceSpans/0/scopeSpans/0/spans/1: span \"execute_tool get_order_status\": operation \"execute_tool\", not a chat",
        "  skipped tests/fixtures/import/otel.json /resourceSpans/0/scopeSpans/0/spans/2: span \"POST /v1/chat/completions\": not a GenAI chat span",
        "  skipped tests/fixtures/import/otel.json /resourceSpans/0/scopeSpans/0/spans/3: span \"chat gpt-4o\": no messages recorded (content capture off?)",
        "  skipped tests/fixtures/import/openai-batch.input.jsonl:3: batch request \"req-3\" failed: Request failed",
    ] {
        assert!(err.contains(line), "{line}\n{err}");
    }
    assert!(
        err.contains("  skipped 6 malformed records (--strict makes them fatal)"),
        "{err}"
    );
    for line in [
        "  malformed tests/fixtures/import/openai.jsonl:5: invalid JSON at column 125: EOF while parsing a list",
        "  malformed tests/fixtures/import/openai.jsonl:9: missing `request`: expected {request: {messages, …}, response: {choices, …}}",
        "  malformed tests/fixtures/import/openai.jsonl:12: `response`: /choices/0/message: `tool_calls/0`: expected {function: {name, arguments}}",
        "  malformed tests/fixtures/import/anthropic.jsonl:5: `request`: `messages`: expected a list, found string",
        "  malformed tests/fixtures/import/otel.json /resourceSpans/0/scopeSpans/0/spans/6: gen_ai.input.messages: not JSON:",
        "  malformed tests/fixtures/import/otel.jsonl:2: invalid JSON at column",
    ] {
        assert!(err.contains(line), "{line}\n{err}");
    }
    assert!(
        err.contains("  redacted 7 tokens (4 email, 1 key, 2 digits) in 3 cases:"),
        "{err}"
    );
    assert!(err.contains("  case send_email-"), "{err}");
    assert!(
        err.contains("1 kept answer made several calls: the first is proposed"),
        "{err}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    for s in SECRETS {
        assert!(
            !err.contains(s) && !text.contains(s) && !run.stdout.contains(s),
            "{s} leaked"
        );
    }
    assert!(text.starts_with("# driftgate routing suite: DRAFT written by `driftgate suite import` from production traffic.\n# from: tests/fixtures/import/openai.jsonl (openai)\n"), "{text}");

    let (cases, unreviewed) = cases(&out);
    assert_eq!(cases.len(), 18);
    assert_eq!(unreviewed.len(), 18, "every case is marked review: true");
    // OpenAI: the call's name and its scalar arguments, the line it came from.
    let c = by_prompt(&cases, "What's the weather in Oslo right now?");
    assert_eq!(c["expect"], "get_weather");
    assert_eq!(
        c["args"],
        serde_json::json!({"city": "Oslo", "unit": "celsius"})
    );
    assert_eq!(c["review"], true);
    assert!(c["note"].as_str().unwrap().starts_with("imported from tests/fixtures/import/openai.jsonl:1 (openai); the production model called `get_weather`"), "{c}");
    // History kept (text parts joined), the system prompt not.
    let c = by_prompt(&cases, "From Berlin, on 2025-05-14.");
    assert_eq!(c["expect"], "search_flights");
    assert_eq!(
        c["history"],
        serde_json::json!([
        {"role": "user", "content": "I want to visit Lisbon in May."},
        {"role": "assistant", "content": "Lovely! Where are you flying from?"}])
    );
    // An answer without a call expects none.
    assert_eq!(
        by_prompt(&cases, "Thanks, that's all for today!")["expect"],
        "none"
    );
    assert_eq!(
        by_prompt(&cases, "What's a good name for a weekly sync?")["expect"],
        "none"
    );
    assert_eq!(
        by_prompt(&cases, "Do you ship to Iceland?")["expect"],
        "none"
    );
    // Masked by shape; a masked argument is not proposed.
    let c = by_prompt(
        &cases,
        "Email my itinerary to [redacted email] — my booking ref is [redacted digits] and the agency key is [redacted key]",
    );
    assert_eq!(
        c["args"],
        serde_json::json!({"subject": "Itinerary", "body": "Your flights: BER-LIS 2025-05-14"})
    );
    assert!(
        c["note"].as_str().unwrap().contains(
            "args not proposed: to (masked, long or structured); masked: 2 email, 1 key, 1 digits"
        ),
        "{c}"
    );
    // Parallel calls: the first.
    let c = by_prompt(&cases, "Weather in Tokyo and in Kyoto, please");
    assert_eq!(c["args"], serde_json::json!({"city": "Tokyo"}));
    assert!(
        c["note"]
            .as_str()
            .unwrap()
            .contains("(the first of 2 calls)")
    );
    // Batch lines paired by custom_id, named by the input line.
    let c = by_prompt(&cases, "Is it raining in Bergen?");
    assert_eq!(c["expect"], "get_weather");
    assert!(
        c["note"]
            .as_str()
            .unwrap()
            .starts_with("imported from tests/fixtures/import/openai-batch.input.jsonl:2 (openai)")
    );
    // Anthropic: tool_use blocks, history, an array argument left out.
    let c = by_prompt(&cases, "Put a dentist appointment on Tuesday at 9am");
    assert_eq!(
        c["args"],
        serde_json::json!({"title": "Dentist", "start": "2025-06-03T09:00"})
    );
    let c = by_prompt(&cases, "June 20 to 22, block the whole days");
    assert_eq!(c["history"].as_array().unwrap().len(), 2);
    let c = by_prompt(
        &cases,
        "Schedule a call with [redacted email], dial [redacted digits]",
    );
    assert_eq!(
        c["args"],
        serde_json::json!({"title": "Call with Sam", "start": "2025-06-04T15:00"})
    );
    // OpenTelemetry: JSON-string, structured and older event attributes.
    let c = by_prompt(
        &cases,
        "Cancel order 7781, my card ending 4242 was charged twice. Reach me at [redacted email]",
    );
    assert_eq!(c["expect"], "cancel_order");
    assert_eq!(
        c["args"],
        serde_json::json!({"order_id": "7781", "reason": "double charge"})
    );
    assert!(c["note"].as_str().unwrap().starts_with(
        "imported from tests/fixtures/import/otel.json /resourceSpans/0/scopeSpans/0/spans/4 (otel)"
    ));
    let c = by_prompt(&cases, "Add two packs of oat milk to my cart");
    assert_eq!(
        c["args"],
        serde_json::json!({"item": "oat milk", "quantity": 2})
    );
    assert!(
        by_prompt(&cases, "What's in my cart?")
            .get("args")
            .is_none()
    );

    // The suite format documents what was written.
    let root = repo("");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("docs/suite.schema.json")).unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let doc: Value = serde_yaml::from_str(&text).unwrap();
    assert!(
        v.is_valid(&doc),
        "{:?}",
        v.iter_errors(&doc)
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
    );
}

#[test]
fn near_duplicates_go_by_embedding_and_the_same_file_imports_the_same_suite() {
    let dir = tempfile::tempdir().unwrap();
    let run = import(dir.path(), &["openai.jsonl"], &[]);
    assert_eq!(run.code, 0, "{}", run.dump());
    assert!(
        run.stderr
            .contains("  dropped 2 as duplicates (1 exact, 1 near)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("  duplicate tests/fixtures/import/openai.jsonl:2: cosine 0.9"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stdout
            .contains("What is the weather in Oslo right now?"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("What's the weather in Oslo right now?"));
    // A threshold above the pair's cosine keeps both.
    let kept = import(
        dir.path(),
        &["openai.jsonl"],
        &["--dedupe-threshold", "0.999"],
    );
    assert!(
        kept.stdout
            .contains("What is the weather in Oslo right now?"),
        "{}",
        kept.dump()
    );
    // Deterministic: the same logs give the same suite, byte for byte.
    let again = import(dir.path(), &["openai.jsonl"], &[]);
    assert_eq!(run.stdout, again.stdout);
}

#[test]
fn a_jsonl_suite_is_written_when_the_output_says_so_and_loads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported.jsonl");
    let run = import(
        dir.path(),
        &ALL,
        &["--no-embed", "-o", out.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.dump());
    assert!(
        run.stderr.contains("wrote ")
            && run
                .stderr
                .contains("(18 cases, every one marked `review: true`)"),
        "{}",
        run.stderr
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 18);
    let suite = driftgate::suite::load(&out).unwrap();
    let ids: std::collections::BTreeSet<&str> = suite.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 18, "ids are unique");
    let with_history = suite.cases.iter().filter(|c| !c.history.is_empty()).count();
    assert_eq!(with_history, 2);
    // --history 0 keeps the last user turn only.
    let run = import(
        dir.path(),
        &["anthropic.jsonl"],
        &["--no-embed", "--history", "0"],
    );
    assert!(!run.stdout.contains("history:"), "{}", run.stdout);
}

#[test]
fn a_prompt_the_model_answered_two_ways_is_flagged_for_the_reviewer() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("two-ways.jsonl");
    let line = |tool: Option<&str>| {
        let message = match tool {
            Some(t) => serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": t, "arguments": "{}"}}]}),
            None => serde_json::json!({"role": "assistant", "content": "Which order?"}),
        };
        serde_json::json!({"request": {"messages": [{"role": "user", "content": "Cancel my order"}]},
            "response": {"choices": [{"message": message}]}})
        .to_string()
    };
    std::fs::write(
        &log,
        [
            line(Some("cancel_order")),
            line(Some("refund_order")),
            line(None),
        ]
        .join("\n"),
    )
    .unwrap();
    let run = cli::driftgate(["suite", "import", "--no-embed", log.to_str().unwrap()]).run();
    assert_eq!(run.code, 0, "{}", run.dump());
    assert!(run.stderr.contains("  1 prompt answered differently on different occasions (suite check calls them contradictory until you keep one):"), "{}", run.stderr);
    assert!(
        run.stderr.contains("  case cancel_order-"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stdout
            .matches("answered the same prompt differently in ")
            .count(),
        3,
        "{}",
        run.stdout
    );
}

#[test]
fn the_per_tool_cap_is_a_seeded_choice() {
    let dir = tempfile::tempdir().unwrap();
    let picks = |seed: &str| {
        let run = import(
            dir.path(),
            &ALL,
            &["--no-embed", "--per-tool", "1", "--seed", seed],
        );
        assert_eq!(run.code, 0, "{}", run.dump());
        assert!(
            run.stderr.contains("  left out 8 by --per-tool 1"),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("kept 10: (none) 1, add_to_cart 1,"),
            "{}",
            run.stderr
        );
        run.stdout
    };
    assert_eq!(picks("7"), picks("7"));
    let seeds: std::collections::BTreeSet<String> =
        ["1", "2", "3", "4"].into_iter().map(picks).collect();
    assert!(seeds.len() > 1, "the seed chooses");
}

#[test]
fn strict_makes_a_malformed_line_fatal_and_nothing_to_import_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.yaml");
    let run = import(
        dir.path(),
        &["anthropic.jsonl"],
        &["--no-embed", "--strict", "-o", out.to_str().unwrap()],
    );
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(run.stderr.contains("error: 1 malformed record (--strict); the first: tests/fixtures/import/anthropic.jsonl:5: `request`: `messages`: expected a list, found string"), "{}", run.stderr);
    assert!(!out.exists(), "nothing is written");
    // A file that parses but holds no record of a known format.
    let junk = dir.path().join("junk.jsonl");
    std::fs::write(&junk, "{\"event\": \"login\"}\n[1, 2]\n").unwrap();
    let run = cli::driftgate(["suite", "import", "--no-embed", junk.to_str().unwrap()]).run();
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr
            .contains(":1: not a record of a known log format (object)"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("error: no case to import: 2 records read"),
        "{}",
        run.stderr
    );
    // Batch outputs without their inputs: every line skipped, so nothing to import.
    let run = import(dir.path(), &["openai-batch.output.jsonl"], &["--no-embed"]);
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr
            .contains("batch output \"req-1\" has no input line among the files read"),
        "{}",
        run.stderr
    );
    // Told the wrong format, every line says what it expected.
    let run = import(
        dir.path(),
        &["otel.jsonl"],
        &["--no-embed", "--format", "anthropic"],
    );
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr.contains("otel.jsonl:1: missing `request`"),
        "{}",
        run.stderr
    );
    // An existing suite is not overwritten by accident.
    std::fs::write(&out, "keep").unwrap();
    let run = import(
        dir.path(),
        &["openai.jsonl"],
        &["--no-embed", "-o", out.to_str().unwrap()],
    );
    assert_eq!(run.code, 2);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
}

#[test]
fn hostile_log_text_reaches_the_terminal_visible_and_inert() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hostile.jsonl");
    let line = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"spanId": "1", "name": "x\u{1b}[2J\n::error::forged\u{202e}", "attributes": []}]}]}]});
    let ok = serde_json::json!({"request": {"messages": [{"role": "user", "content": "Hi \u{1b}[31mthere"}]},
        "response": {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}});
    std::fs::write(&log, format!("{line}\n")).unwrap();
    let ok_log = dir.path().join("ok.jsonl");
    std::fs::write(&ok_log, format!("{ok}\n")).unwrap();
    let run = cli::driftgate([
        "suite",
        "import",
        "--no-embed",
        log.to_str().unwrap(),
        ok_log.to_str().unwrap(),
    ])
    .run();
    assert_eq!(run.code, 0, "{}", run.dump());
    assert!(
        !run.stderr.contains('\u{1b}') && !run.stderr.contains('\u{202e}'),
        "{:?}",
        run.stderr
    );
    assert!(
        !run.stderr.lines().any(|l| l.trim_start().starts_with("::")),
        "{}",
        run.stderr
    );
    // The suite keeps the prompt as data, escaped as a JSON string.
    assert!(
        run.stdout.contains("\"Hi \\u001b[31mthere\""),
        "{}",
        run.stdout
    );
}

#[test]
fn suite_check_warns_and_check_refuses_until_reviewed() {
    let dir = tempfile::tempdir().unwrap();
    // The calendar suite with two cases not yet confirmed.
    let text = std::fs::read_to_string(repo(calendar::SUITE)).unwrap();
    let doc: Value = serde_yaml::from_str(&text).unwrap();
    let mut cases = doc["cases"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| doc.as_array().unwrap().clone());
    for c in cases.iter_mut().take(2) {
        c["review"] = Value::Bool(true);
    }
    let ids: Vec<String> = cases[..2]
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let suite = dir.path().join("suite.yaml");
    std::fs::write(
        &suite,
        serde_yaml::to_string(&serde_json::json!({"version": 1, "cases": cases})).unwrap(),
    )
    .unwrap();
    let s = suite.to_str().unwrap();

    let run = cli::driftgate([
        "suite",
        "check",
        "--tools",
        calendar::HEAD,
        "--format",
        "json",
        s,
    ])
    .run();
    assert_eq!(run.code, 0, "a warning, not an error: {}", run.dump());
    let r = run.json();
    let f = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "unreviewed")
        .expect("an unreviewed finding");
    assert_eq!(f["level"], "warning");
    assert!(
        f["message"].as_str().unwrap().starts_with(&format!(
            "2 cases are marked `review: true` ({}, {})",
            ids[0], ids[1]
        )),
        "{f}"
    );

    let cache = dir.path().join("cache");
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--base",
            calendar::BASE,
            "--head",
            calendar::BASE,
            "--suite",
            s,
            "--format",
            "json",
            "--cache-dir",
            cache.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        cli::driftgate(&args).run()
    };
    let run = check(&[]);
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(run.stderr.contains("2 cases are marked `review: true` (an expectation proposed by `suite import`, not confirmed): review them and delete `review`, or pass --allow-unreviewed to measure anyway"), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    let run = check(&["--allow-unreviewed"]);
    assert_eq!(run.code, 0, "{}", run.dump());
    let r = run.json();
    assert!(r["notes"].as_array().unwrap().iter().any(|n| n == "2 suite cases are marked `review: true`: their expectations are unconfirmed proposals, measured because --allow-unreviewed was given."), "{}", r["notes"]);
}

/// Every fixture line cut at every character, and every line's bytes shuffled into wrong types:
/// each cut is read without a panic, and every record is accounted for — an exchange, a skip or
/// a malformed record named by its line.
#[test]
fn truncated_and_mistyped_records_never_panic_and_are_all_accounted_for() {
    use driftgate::suite::import::{LogFormat, read};
    for (name, format) in [
        ("openai.jsonl", LogFormat::Openai),
        ("anthropic.jsonl", LogFormat::Anthropic),
        ("otel.jsonl", LogFormat::Otel),
    ] {
        let text = std::fs::read_to_string(repo(&format!("{DIR}/{name}"))).unwrap();
        for line in text.lines() {
            let cuts: Vec<usize> = line.char_indices().map(|(i, _)| i).step_by(7).collect();
            for cut in cuts {
                let files = vec![(name.to_string(), format!("{}\n", &line[..cut]))];
                let r = read(&files, Some(format), 4);
                if line[..cut].trim().is_empty() {
                    continue;
                }
                assert_eq!(r.records, 1);
                let accounted = r.exchanges.len() + r.skipped.len() + r.malformed.len();
                assert!(accounted >= 1, "{name} cut at {cut}: {r:?}");
                for (at, _) in &r.malformed {
                    assert!(at.starts_with(&format!("{name}:1")), "{at}");
                }
            }
            // Every string replaced by a number, every list by an object: wrong types, not panics.
            let mistyped = line
                .replace("\"content\":", "\"content\": 5, \"x\":")
                .replace("\"messages\": [", "\"messages\": {\"a\": [")
                .replace("\"parts\": [", "\"parts\": 7, \"y\": [");
            let r = read(&[(name.to_string(), mistyped)], None, 4);
            assert_eq!(r.records, 1);
        }
    }
}

/// `suite import --no-embed LOG -o OUT` with `extra` flags.
fn import_log(log: &Path, out: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "suite",
        "import",
        "--no-embed",
        log.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    cli::driftgate(&args).run()
}

/// One OpenAI `{request, response}` line: `prompt` asked with `offered` tools, `called` called.
fn call_line(prompt: &str, offered: &[&str], called: &str) -> String {
    let tools: Vec<Value> = offered
        .iter()
        .map(|n| serde_json::json!({"type": "function", "function": {"name": n}}))
        .collect();
    serde_json::json!({
        "request": {"messages": [{"role": "user", "content": prompt}], "tools": tools},
        "response": {"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": called, "arguments": "{}"}}]}}]}
    })
    .to_string()
}

#[test]
fn an_invented_call_or_one_the_server_lacks_proposes_nothing_and_another_tool_list_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("traffic.jsonl");
    let lines = [
        call_line(
            "weather in Oslo?",
            &["get_weather", "get_forecast"],
            "get_weather",
        ),
        // The production model called a tool its request did not offer.
        call_line("book me a flight to Lima", &["get_weather"], "book_flight"),
        // Offered then, gone from the server now.
        call_line(
            "email me the receipt",
            &["get_weather", "send_receipt"],
            "send_receipt",
        ),
        call_line(
            "will it rain in Bergen tomorrow?",
            &["get_weather", "get_forecast"],
            "get_forecast",
        ),
    ];
    std::fs::write(&log, lines.join("\n")).unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"name": "get_weather", "inputSchema": {"type": "object"}}, {"name": "get_forecast", "inputSchema": {"type": "object"}}, {"name": "get_alerts", "inputSchema": {"type": "object"}}]"#,
    )
    .unwrap();
    let out = dir.path().join("s.yaml");
    let run = import_log(&log, &out, &["--tools", tools.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.dump());
    let (cases, _) = cases(&out);
    let expects: Vec<&str> = cases
        .iter()
        .map(|c| c["expect"].as_str().unwrap())
        .collect();
    assert_eq!(expects, ["get_forecast", "get_weather"], "{cases:#?}");
    let log_at = log.display().to_string();
    assert!(
        run.stderr.contains(&format!("{log_at}:2: the production model called `book_flight`, which its request did not offer: an invented call is no expectation")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "{log_at}:3: calls `send_receipt`, which {} does not have (renamed or removed since it was logged?)",
            tools.display()
        )),
        "{}",
        run.stderr
    );
    // Lines 1 and 4 offered two of the server's three tools (line 2 and 3 proposed nothing).
    assert!(
        run.stderr.contains("2 logged requests offered another tool list than --tools (not offered: get_alerts): the production model chose among other options"),
        "{}",
        run.stderr
    );
    // Without --tools only the invented call is refused.
    let run = cli::driftgate(["suite", "import", "--no-embed", log.to_str().unwrap()]).run();
    assert_eq!(run.code, 0, "{}", run.dump());
    assert!(
        run.stdout.contains("expect: \"send_receipt\""),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("book_flight"), "{}", run.stdout);
    assert!(!run.stderr.contains("another tool list"), "{}", run.stderr);
}

/// A log past the 64 MiB input cap is streamed line by line, not refused, and its bad lines are
/// still named by number.
#[test]
fn a_log_larger_than_the_input_cap_is_read_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.jsonl");
    let filler = call_line("weather in Oslo?", &["get_weather"], "get_weather");
    let n = (65 << 20) / (filler.len() + 1) + 1;
    let mut text = String::with_capacity((n + 4) * (filler.len() + 1));
    for _ in 0..n {
        text.push_str(&filler);
        text.push('\n');
    }
    text.push_str("not json\n");
    text.push_str(&call_line(
        "is it raining in Bergen?",
        &["get_weather"],
        "get_weather",
    ));
    text.push('\n');
    assert!(text.len() as u64 > 64 << 20);
    std::fs::write(&log, &text).unwrap();
    drop(text);
    let out = dir.path().join("s.yaml");
    let run = import_log(&log, &out, &[]);
    assert_eq!(run.code, 0, "{}", run.dump());
    assert!(
        run.stderr
            .contains(&format!("suite import: {} records read", n + 2)),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!(
            "{}:{}: invalid JSON at column 2: expected ident",
            log.display(),
            n + 1
        )),
        "{}",
        run.stderr
    );
    let (cases, _) = cases(&out);
    assert_eq!(
        cases.len(),
        2,
        "the filler is one case, its repeats exact duplicates"
    );
}
