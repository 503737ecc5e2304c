//! JSON renderer for the stress report: the model as a versioned document (`schema_version`).

use super::report::StressReport;

pub fn render(report: &StressReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("report serialises");
    s.push('\n');
    s
}
