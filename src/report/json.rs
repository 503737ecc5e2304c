//! JSON renderer: the report model as a versioned document (`schema_version`).
//! serde_json escapes every control character, so untrusted text cannot break the document.

use super::Report;

pub fn render(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("report serialises");
    s.push('\n');
    s
}
