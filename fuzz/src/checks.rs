//! The output invariants of `tests/it/hostile.rs`, as functions that panic (a panic is what
//! libFuzzer records as a crash). Each names the class of hostile input it guards against.

use driftgate::report::Report;
use driftgate::report::render::{self, Format, markdown};
use serde_json::Value;

/// The one URL a comment may link (the full report), as in the hermetic tests.
pub const LINK: &str = "https://github.com/octo-org/mcp-calendar/actions/runs/1";

/// The lines the Actions runner reads from stdout. Its reader splits on `\n`, `\r\n` and a lone
/// `\r`, so a CR inside a line would start a new one for the runner: split on both.
pub fn runner_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '\r'])
}

/// A line the runner executes, as its parser decides: `::` after leading blanks (the v2 form),
/// or `##[` anywhere (the legacy form).
pub fn is_runner_command(line: &str) -> bool {
    line.trim_start().starts_with("::") || line.contains("##[")
}

/// What goes to stdout as a document has no line the runner would execute.
pub fn assert_runner_inert(text: &str, what: &str) {
    for line in runner_lines(text) {
        assert!(
            !is_runner_command(line),
            "{what} has a runner command: {line:?}"
        );
    }
}

/// Bidi overrides, isolates and zero-width characters (Trojan Source), as hostile.rs lists them.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' |
        '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{061C}' | '\u{180E}')
}

/// The text around byte `i` of `s`, for a failure message.
pub fn around(s: &str, i: usize) -> &str {
    let mut a = i.saturating_sub(80);
    while !s.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = (i + 40).min(s.len());
    while !s.is_char_boundary(b) {
        b += 1;
    }
    &s[a..b]
}

/// Control characters a document may hold: a newline, and a tab (kept in code blocks, harmless).
pub fn allowed_control(c: char) -> bool {
    c == '\n' || c == '\t'
}

/// The terminal rendering, without and with colour: no control character but a newline or tab
/// reaches the terminal (no ESC, CR, NUL, BEL, …), no bidi or zero-width mark, and with colour
/// every ESC starts one of our own SGR sequences (`ESC [ digits ; … m`).
pub fn check_terminal(r: &Report) {
    let plain = render::render(r, Format::Terminal, &render::Options { color: false });
    for (i, c) in plain.char_indices() {
        assert!(
            allowed_control(c) || !(c.is_control() || is_invisible(c)),
            "terminal: {c:?} reaches the terminal in {:?}",
            around(&plain, i)
        );
    }
    assert_runner_inert(&plain, "terminal");
    let colored = render::render(r, Format::Terminal, &render::Options { color: true });
    let mut rest = colored.as_str();
    while let Some(pos) = rest.find(|c: char| c.is_control() && !allowed_control(c)) {
        let tail = &rest[pos..];
        let sgr = tail.strip_prefix("\u{1b}[").unwrap_or_else(|| {
            panic!(
                "terminal (colour): foreign control {:?}",
                &tail[..tail.len().min(12)]
            )
        });
        let end = sgr.find('m').expect("an SGR sequence ends with m");
        assert!(
            end > 0 && sgr[..end].chars().all(|c| c.is_ascii_digit() || c == ';'),
            "terminal (colour): not an SGR colour code: {:?}",
            &sgr[..end]
        );
        rest = &sgr[end + 1..];
    }
    assert!(
        !colored.chars().any(is_invisible),
        "terminal (colour): bidi"
    );
    assert_runner_inert(&colored, "terminal (colour)");
}

/// The JSON report: valid JSON with no runner command in any line, and it reads back into a
/// report that renders to the same bytes (`driftgate comment` renders what the gate measured).
pub fn check_json(r: &Report) {
    let js = render::render(r, Format::Json, &render::Options { color: false });
    assert_runner_inert(&js, "json");
    let back: Value = serde_json::from_str(&js).expect("the JSON report is JSON");
    assert_eq!(back["schema_version"], 1);
    let again = Report::from_json(&js, "report.json").expect("the JSON report reads back");
    assert_eq!(
        render::render(&again, Format::Json, &render::Options { color: false }),
        js,
        "json: round trip"
    );
}

/// SARIF: JSON, no runner command, no escape/bidi/control character in any string. (The hermetic
/// test also validates it against the SARIF 2.1.0 schema; that is too slow per input here.)
pub fn check_sarif(r: &Report) {
    let text = render::render(r, Format::Sarif, &render::Options { color: false });
    assert_runner_inert(&text, "sarif");
    let v: Value = serde_json::from_str(&text).expect("SARIF is JSON");
    assert_eq!(v["version"], "2.1.0");
    assert_clean_strings(&v);
}

/// No escape, bidi or control character in any string of a JSON document.
pub fn assert_clean_strings(v: &Value) {
    match v {
        Value::String(s) => assert!(
            !s.chars()
                .any(|c| is_invisible(c) || (c.is_control() && !allowed_control(c))),
            "control or bidi character in {s:?}"
        ),
        Value::Array(a) => a.iter().for_each(assert_clean_strings),
        Value::Object(o) => o.values().for_each(assert_clean_strings),
        _ => {}
    }
}

/// Annotations: every line the runner reads is one of our own workflow commands — `::error`,
/// `::warning` or `::notice`, properties only `file`, `line`, `title` with `:` and `,` escaped,
/// one message — at most 10 of each kind (GitHub's limit), and nothing else: no line of tool
/// text, no second command smuggled in by a newline or a CR.
pub fn check_annotations(r: &Report) {
    let text = render::render(r, Format::Annotations, &render::Options { color: false });
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "annotations end with a newline"
    );
    let mut per_kind = std::collections::BTreeMap::<&str, usize>::new();
    for line in runner_lines(&text) {
        if line.is_empty() {
            continue;
        }
        let rest = line
            .strip_prefix("::")
            .unwrap_or_else(|| panic!("annotations: a line that is not ours: {line:?}"));
        let (cmd, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        assert!(
            ["error", "warning", "notice"].contains(&cmd),
            "annotations: command {cmd:?} in {line:?}"
        );
        *per_kind.entry(cmd).or_default() += 1;
        let (props, message) = rest
            .split_once("::")
            .unwrap_or_else(|| panic!("annotations: no message in {line:?}"));
        for p in props.split(',') {
            let (k, v) = p
                .split_once('=')
                .unwrap_or_else(|| panic!("annotations: property {p:?} in {line:?}"));
            assert!(
                ["file", "line", "title"].contains(&k),
                "annotations: property {k} in {line:?}"
            );
            assert!(
                !v.contains(':') && !v.contains(','),
                "annotations: {line:?}"
            );
            if k == "line" {
                assert!(
                    v.parse::<usize>().is_ok_and(|n| n > 0),
                    "annotations: line={v}"
                );
            }
        }
        for c in message.chars() {
            assert!(
                c == '\t' || !(c.is_control() || is_invisible(c)),
                "annotations: {c:?} in the message of {line:?}"
            );
        }
    }
    for (kind, n) in per_kind {
        assert!(n <= 10, "annotations: {n} {kind} lines (GitHub shows 10)");
    }
}

/// The PR comment (with our marker and the report link) and the job summary (neither), read as
/// GFM: inert, within GitHub's size limit, no control or bidi character; `--format markdown`
/// (stdout) also has no line the runner would execute.
pub fn check_markdown(r: &Report, now_passes: bool) {
    let marker = markdown::marker("driftgate", "gate");
    let comment = markdown::render(
        r,
        &markdown::Options {
            marker: Some(marker.clone()),
            link: Some(LINK.into()),
            now_passes,
            ..markdown::Options::default()
        },
    );
    assert!(
        comment.len() <= markdown::COMMENT_LIMIT,
        "comment over the limit"
    );
    crate::markdown::assert_inert(&comment, Some(&marker), Some(LINK));
    // The comment goes to the GitHub API, not stdout: the runner never reads it.
    assert_clean_text(&comment, "comment");

    let summary = markdown::render(
        r,
        &markdown::Options {
            limit: markdown::SUMMARY_LIMIT,
            limit_name: "job summary",
            ..markdown::Options::default()
        },
    );
    assert!(
        summary.len() <= markdown::SUMMARY_LIMIT,
        "summary over the limit"
    );
    crate::markdown::assert_inert(&summary, None, None);
    assert_clean_text(&summary, "summary");

    let md = render::render(r, Format::Markdown, &render::Options { color: false });
    crate::markdown::assert_inert(&md, None, None);
    assert_clean_text(&md, "markdown");
    assert_runner_inert(&md, "markdown");
}

fn assert_clean_text(s: &str, what: &str) {
    for (i, c) in s.char_indices() {
        assert!(
            allowed_control(c) || !(c.is_control() || is_invisible(c)),
            "{what}: {c:?} in the document, in {:?}",
            around(s, i)
        );
    }
}
