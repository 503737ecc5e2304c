//! Any bytes as a tools file (`source::parse_text`: a `tools/list` result, a JSON-RPC response, a
//! bare array or a driftgate lockfile). It never panics; a refusal is an input error (exit 2)
//! that names the source. What it accepts is a set of unique, non-blank names that reads back the
//! same through every shape the loader takes — bare array, `tools/list`, JSON-RPC, pretty-printed,
//! and a lockfile written by `lock::render` (hashes verified on load, bytes stable) — and that
//! diffs as unchanged against itself and against its lockfile.
#![no_main]

use driftgate::source::{self, Format, Loaded};
use driftgate::tools::{ToolSet, lock};
use driftgate_fuzz::checks;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

fn reread(doc: &str, want: &ToolSet, format: Format, how: &str) {
    let (again, f) = source::parse_text(doc, "again")
        .unwrap_or_else(|e| panic!("{how}: what was accepted does not read back: {e}"));
    assert_eq!(f, format, "{how}: read back as another shape");
    assert_eq!(&again, want, "{how}: read back as another tool set");
}

fn assert_unchanged(a: &ToolSet, b: &ToolSet, how: &str) {
    let d = driftgate::diff::diff(a, b);
    assert!(
        d.tools.is_empty(),
        "{how}: an unchanged set diffs as changed: {:?}",
        d.tools
            .iter()
            .map(|t| (&t.name, &t.changes))
            .collect::<Vec<_>>()
    );
    assert_eq!(d.unchanged, a.len(), "{how}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (set, _format) = match source::parse_text(text, "fuzz.json") {
        Ok(x) => x,
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "a bad tools file is an input error");
            assert!(e.to_string().starts_with("fuzz.json: "), "{e}");
            return;
        }
    };
    assert!(set.len() <= driftgate::tools::MAX_TOOLS);
    let mut names = std::collections::HashSet::new();
    for t in &set.tools {
        assert!(!t.name.trim().is_empty(), "blank tool name accepted");
        assert!(
            names.insert(t.name.as_str()),
            "duplicate {:?} accepted",
            t.name
        );
        assert!(t.input_schema.is_object(), "inputSchema is an object");
    }

    // Every shape the loader reads gives back the same set.
    let values: Vec<Value> = set.tools.iter().map(|t| t.to_value()).collect();
    let array = Value::Array(values.clone());
    reread(&array.to_string(), &set, Format::BareArray, "bare array");
    reread(
        &json!({ "tools": values }).to_string(),
        &set,
        Format::ToolsList,
        "tools/list",
    );
    reread(
        &json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": values}}).to_string(),
        &set,
        Format::JsonRpc,
        "JSON-RPC",
    );
    let pretty = serde_json::to_string_pretty(&array).expect("serialises");
    reread(&pretty, &set, Format::BareArray, "pretty");

    // The line of each tool's name (annotations point there): found for every tool of the pretty
    // text, inside the text, and exact for the first tool (nothing comes before it).
    let loaded = Loaded {
        tools: set.clone(),
        label: "pretty.json".into(),
        format: Format::BareArray,
        file: Some("pretty.json".into()),
        text: Some(pretty.clone()),
    };
    let lines = loaded.lines();
    let count = pretty.lines().count();
    for (i, t) in set.tools.iter().enumerate() {
        let line = *lines
            .get(&t.name)
            .unwrap_or_else(|| panic!("no line for {:?}", t.name));
        assert!((1..=count).contains(&line), "line {line} of {count}");
        if i == 0 {
            assert_eq!(line, 3, "the first tool's name is on line 3");
        }
    }
    // The input's own lines, whatever its shape, are inside it.
    let own = Loaded {
        text: Some(text.to_string()),
        ..loaded
    };
    let total = text.split('\n').count();
    for (name, line) in own.lines() {
        assert!(
            (1..=total).contains(&line),
            "{name:?} at line {line} of {total}"
        );
    }

    // A lockfile of what was accepted verifies, holds the same tools (by name), and is stable.
    let locked = lock::render(&set, &lock::LockMeta::default());
    checks::assert_runner_inert(&locked, "lockfile");
    let (relocked, f) = source::parse_text(&locked, "lock.json")
        .unwrap_or_else(|e| panic!("a lockfile we wrote does not load: {e}"));
    assert_eq!(f, Format::Lockfile);
    let mut sorted = set.clone();
    sorted.tools.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(relocked, sorted, "the lockfile holds other tools");
    assert_eq!(
        lock::render(&relocked, &lock::LockMeta::default()),
        locked,
        "re-locking changed the bytes"
    );

    // Nothing changed, so nothing is reported.
    if set.len() <= 2_000 {
        assert_unchanged(&set, &set, "self");
        assert_unchanged(&set, &relocked, "lockfile");
    }
});
