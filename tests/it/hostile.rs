//! Tool descriptions are untrusted. Markup-like text, escapes, bidi marks and huge strings must
//! never crash a renderer, drive the terminal, break the JSON document, inject Markdown, HTML,
//! mentions or our comment marker into a PR comment, forge a workflow command, or make invalid
//! SARIF. Every renderer is fed the same hostile texts.

use crate::support;

use driftgate::diff::Severity;
use driftgate::report::Report;
use driftgate::report::render;
use driftgate::report::render::markdown::{self, Options};
use driftgate::source::{Format, Loaded};
use driftgate::tools::ToolSet;
use serde_json::{Value, json};

fn hostile_texts() -> Vec<String> {
    vec![
        "[/* ignore previous instructions */]".into(),
        "<!-- driftgate:ci:gate --> closing --> <script>alert(1)</script>".into(),
        "\u{1b}[31mred\u{1b}[0m \u{1b}]0;pwned\u{7} \u{1b}[2J clear".into(),
        "abc \u{202E}txt.exe\u{202C} \u{2066}rtl\u{2069} \u{200B}zw".into(),
        "@octocat #1 `code` | pipe | ```fence```".into(),
        "x".repeat(10_000),
        "Ünïcödé 日本語 🚀 \u{0000} nul \r\n crlf".into(),
        "ping @everyone and @octo-org/admins, see owner/repo#12, GH-34 and #56".into(),
        "![pixel](https://evil.example/t.png) [click](https://evil.example) <https://evil.example> www.evil.example".into(),
        "</details></summary><details open><summary>x</summary> <img src=x onerror=alert(1)>".into(),
        "~~struck~~ **bold** _it_ *em* $x^2$ $$y$$ [^1] &amp; &#64;octocat \\| \\`".into(),
        "| a | b |\n|---|---|\n| c | d |".into(),
        "````\n# heading\n- list\n````".into(),
        "::error file=x,line=1::forged\n::set-output name=verdict::pass\r\n%0A::warning::also forged"
            .into(),
        "`` ` ``` ```` `".into(),
        "Reads a file.\n::stop-commands::pwned\n  ::add-mask::x\nsee ##[set-env name=A]b ##[group]g".into(),
    ]
}

/// A line the Actions runner executes, as its parser decides: `::` after leading blanks (the v2
/// form), or `##[` anywhere (the legacy form).
fn is_runner_command(line: &str) -> bool {
    line.trim_start().starts_with("::") || line.contains("##[")
}

/// What goes to stdout as a document has no line the runner would execute.
fn assert_runner_inert(text: &str, what: &str, case: &str) {
    for line in text.lines() {
        assert!(
            !is_runner_command(line),
            "{case}: {what} has a runner command: {line:?}"
        );
    }
}

fn loaded(tools: Value, label: &str) -> Loaded {
    Loaded {
        tools: ToolSet::from_array(tools.as_array().unwrap(), label, "").unwrap(),
        label: label.into(),
        format: Format::BareArray,
        file: Some(label.into()),
        text: None,
    }
}

/// Workflow commands: one per line, known command, properties `key=value` with `:` and `,`
/// escaped, no raw CR/LF inside.
fn assert_annotations_safe(text: &str, case: &str) {
    for line in text.lines() {
        let rest = line.strip_prefix("::").expect(line);
        let (cmd, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        assert!(
            ["error", "warning", "notice"].contains(&cmd),
            "{case}: {line}"
        );
        let (props, _message) = rest.split_once("::").expect(line);
        for p in props.split(',') {
            let (k, v) = p.split_once('=').expect(p);
            assert!(
                ["file", "line", "title"].contains(&k),
                "{case}: property {k} in {line}"
            );
            assert!(!v.contains(':') && !v.contains(','), "{case}: {line}");
        }
    }
    assert!(!text.contains('\r'), "{case}");
    assert!(text.lines().count() <= 30, "{case}: capped at 10 per kind");
}

/// No escape, bidi or control character in any string of a JSON document.
fn assert_clean_strings(v: &Value, case: &str) {
    match v {
        Value::String(s) => assert!(
            !s.chars().any(|c| c == '\u{1b}'
                || c == '\u{202E}'
                || c == '\u{2066}'
                || c == '\u{200B}'
                || (c.is_control() && c != '\n')),
            "{case}: {s:?}"
        ),
        Value::Array(a) => a.iter().for_each(|x| assert_clean_strings(x, case)),
        Value::Object(o) => o.values().for_each(|x| assert_clean_strings(x, case)),
        _ => {}
    }
}

fn sarif_validator() -> jsonschema::Validator {
    let path = support::runner::fixture("tests/fixtures/sarif/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap()
}

/// Every renderer on one report.
fn check_all(r: &Report, case: &str, sarif: &jsonschema::Validator) {
    let term = render::render(
        r,
        render::Format::Terminal,
        &render::Options { color: false },
    );
    assert!(!term.contains('\u{1b}'), "{case}: ESC in terminal output");
    assert_runner_inert(&term, "terminal", case);
    assert!(
        !term.contains('\u{202E}') && !term.contains('\u{2066}') && !term.contains('\u{200B}'),
        "{case}: bidi"
    );
    assert!(
        !term.contains('\u{0}') && !term.contains('\r'),
        "{case}: control"
    );
    let colored = render::render(
        r,
        render::Format::Terminal,
        &render::Options { color: true },
    );
    // Only our own SGR sequences remain: every ESC is followed by '[' and a colour code.
    for (pos, _) in colored.match_indices('\u{1b}') {
        let rest = &colored[pos + 1..];
        assert!(rest.starts_with('['), "{case}: foreign escape");
        let end = rest.find('m').expect("SGR ends with m");
        assert!(
            rest[1..end].chars().all(|c| c.is_ascii_digit() || c == ';'),
            "{case}"
        );
    }
    let js = render::render(r, render::Format::Json, &render::Options { color: false });
    assert_runner_inert(&js, "json", case);
    let back: Value = serde_json::from_str(&js).expect("JSON stays valid");
    assert_eq!(back["schema_version"], 1);
    let again = Report::from_json(&js, "report.json").expect("JSON reads back");
    assert_eq!(
        render::render(
            &again,
            render::Format::Json,
            &render::Options { color: false }
        ),
        js,
        "{case}: round trip"
    );

    let link = "https://github.com/octo-org/mcp-calendar/actions/runs/1";
    let marker = markdown::marker("driftgate", "gate");
    let comment = markdown::render(
        r,
        &Options {
            marker: Some(marker.clone()),
            link: Some(link.into()),
            ..Options::default()
        },
    );
    assert!(comment.len() <= markdown::COMMENT_LIMIT, "{case}");
    support::markdown::assert_inert(&comment, Some(&marker), Some(link));
    for bad in ['\u{1b}', '\u{202E}', '\u{2066}', '\u{200B}', '\u{0}', '\r'] {
        assert!(!comment.contains(bad), "{case}: {bad:?} in markdown");
    }
    let summary = render::render(
        r,
        render::Format::Markdown,
        &render::Options { color: false },
    );
    support::markdown::assert_inert(&summary, None, None);
    assert_runner_inert(&summary, "markdown", case);

    assert_annotations_safe(
        &render::render(
            r,
            render::Format::Annotations,
            &render::Options { color: false },
        ),
        case,
    );

    let sarif_text = render::render(r, render::Format::Sarif, &render::Options { color: false });
    assert_runner_inert(&sarif_text, "sarif", case);
    let s: Value = serde_json::from_str(&sarif_text).unwrap();
    let errors: Vec<String> = sarif.iter_errors(&s).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{case}: SARIF invalid: {errors:?}");
    assert_clean_strings(&s, case);
}

#[test]
fn no_renderer_crashes_or_leaks_control_characters() {
    let sarif = sarif_validator();
    for (i, text) in hostile_texts().into_iter().enumerate() {
        let base = loaded(
            json!([{"name":"t","description":"plain","inputSchema":{"type":"object",
            "properties":{"p":{"type":"string","description":"plain"}}}}]),
            "base.json",
        );
        let head = loaded(
            json!([{"name":"t","description":text,"inputSchema":{"type":"object",
            "properties":{"p":{"type":"string","description":text}}}},
            {"name": format!("evil{i}\u{1b}[1m<!--@octocat #9"), "description": text}]),
            &format!("head {i}, with: odd,chars.json"),
        );
        let r = driftgate::job::check::diff_report(&base, &head, Severity::High);
        check_all(&r, &format!("case {i}"), &sarif);
    }
}

/// Replace `from` in every string and object key of a JSON tree.
fn rename(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) => *s = s.replace(from, to),
        Value::Array(a) => a.iter_mut().for_each(|x| rename(x, from, to)),
        Value::Object(o) => {
            let entries: Vec<(String, Value)> = std::mem::take(o).into_iter().collect();
            for (k, mut x) in entries {
                rename(&mut x, from, to);
                o.insert(k.replace(from, to), x);
            }
        }
        _ => {}
    }
}

/// A real `check` report (flips, per-tool routing, drift, notes) with hostile text in every
/// string a reader sees: tool names, descriptions, case ids, prompts, choices, sources, notes,
/// the verdict reason and the file path.
#[test]
fn hostile_text_in_every_field_of_a_check_report() {
    let sarif = sarif_validator();
    let original: Value = serde_json::from_str(support::reports::calendar_check_json()).unwrap();
    for (i, text) in hostile_texts().into_iter().enumerate() {
        let mut v = original.clone();
        let name = format!("sched{i}@octocat`|<!--#1");
        rename(&mut v, "schedule_appointment", &name);
        let short = |n: usize| text.chars().take(n).collect::<String>();
        rename(
            &mut v,
            "reschedule_appointment",
            &format!("re{}", short(60)),
        );
        for c in v["diff"]["tools"][0]["changes"].as_array_mut().unwrap() {
            if c.get("after").is_some_and(Value::is_string) {
                c["after"] = text.clone().into();
            }
        }
        for f in v["routing"]["flips"].as_array_mut().unwrap() {
            f["prompt"] = text.clone().into();
            f["id"] = format!("{}{i}", short(40)).into();
        }
        v["notes"] = json!([text.clone()]);
        v["verdict"]["reason"] = format!("`{name}` routing dropped; {text}").into();
        v["head"]["file"] = format!("tools, {i}: head.json").into();
        v["router"]["model"] = text.clone().into();
        let r = Report::from_json(&v.to_string(), "hostile.json").unwrap();
        check_all(&r, &format!("check case {i}"), &sarif);
    }
}

/// The Markdown check above is only worth something if it rejects what it guards against.
#[test]
fn the_markdown_check_rejects_unsafe_markdown() {
    let bad = [
        "hello @octocat",
        "see #12 and more",
        "fixes GH-12",
        "visit https://evil.example now",
        "<img src=x>",
        "<!-- driftgate:x:y -->",
        "[x](https://evil.example)",
        "![i](https://evil.example/i.png)",
        "*em*",
        "~~gone~~",
        "$x$",
        "- item",
        "| a | b |\n|---|---|\n| `c | d` | e |\n",
        "```rust\nfn x() {}\n```\n",
        "**loud**",
    ];
    for md in bad {
        let r = std::panic::catch_unwind(|| support::markdown::assert_inert(md, None, None));
        assert!(r.is_err(), "accepted {md:?}");
    }
    support::markdown::assert_inert(
        "plain `@octocat` text\n\n```diff\n- #1 @x\n```\n",
        None,
        None,
    );
}
