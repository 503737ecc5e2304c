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

/// The calendar tools file `from` with `edit` applied to its tools array, written to `dir`.
fn edited(from: &str, dir: &std::path::Path, edit: impl FnOnce(&mut Vec<Value>)) -> String {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(cli::repo(from)).unwrap()).unwrap();
    edit(doc["tools"].as_array_mut().unwrap());
    let path = dir.join("edited.json");
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path.display().to_string()
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
    let held: Vec<&str> = r["split"]["held_out_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
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
        serde_json::json!(["the check did not fail (pass): nothing to fix"])
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
    let head = edited(calendar::BASE, dir.path(), |tools| {
        let t = tools
            .iter_mut()
            .find(|t| t["name"] == "schedule_appointment")
            .unwrap();
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
