//! Tool descriptions are untrusted. Markup-like text, escapes, bidi marks and huge strings must
//! never crash a renderer, drive the terminal, or break the JSON document.

use driftgate::diff::Severity;
use driftgate::report::{self, OutputFormat};
use driftgate::tools::ToolSet;
use driftgate::tools::load::{Format, Loaded};
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
    ]
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

#[test]
fn no_renderer_crashes_or_leaks_control_characters() {
    for (i, text) in hostile_texts().into_iter().enumerate() {
        let base = loaded(
            json!([{"name":"t","description":"plain","inputSchema":{"type":"object",
            "properties":{"p":{"type":"string","description":"plain"}}}}]),
            "base.json",
        );
        let head = loaded(
            json!([{"name":"t","description":text,"inputSchema":{"type":"object",
            "properties":{"p":{"type":"string","description":text}}}},
            {"name": format!("evil{i}\u{1b}[1m<!--"), "description": text}]),
            "head.json",
        );
        let r = driftgate::cli::diff_report(&base, &head, Severity::High);
        let term = report::render(&r, OutputFormat::Terminal, false);
        assert!(!term.contains('\u{1b}'), "case {i}: ESC in terminal output");
        assert!(
            !term.contains('\u{202E}') && !term.contains('\u{2066}') && !term.contains('\u{200B}'),
            "case {i}: bidi"
        );
        assert!(
            !term.contains('\u{0}') && !term.contains('\r'),
            "case {i}: control"
        );
        let colored = report::render(&r, OutputFormat::Terminal, true);
        // Only our own SGR sequences remain: every ESC is followed by '[' and a colour code.
        for (pos, _) in colored.match_indices('\u{1b}') {
            let rest = &colored[pos + 1..];
            assert!(rest.starts_with('['), "case {i}: foreign escape");
            let end = rest.find('m').expect("SGR ends with m");
            assert!(
                rest[1..end].chars().all(|c| c.is_ascii_digit() || c == ';'),
                "case {i}"
            );
        }
        let js = report::render(&r, OutputFormat::Json, false);
        let back: Value = serde_json::from_str(&js).expect("JSON stays valid");
        assert_eq!(back["schema_version"], 1);
    }
}
