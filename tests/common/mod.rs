//! Helpers shared by the gated suites against real components; the hermetic suite's are in
//! `tests/it/support/`. Running the binary goes through the same builder and scrubbed
//! environment as the hermetic suite (`tests/it/support/cli.rs`, compiled in here too).

use serde_json::Value;

#[allow(dead_code)]
#[path = "../it/support/cli.rs"]
pub mod cli;

/// `routing.{side}_stats.{field}` of a JSON report.
#[allow(dead_code)]
pub fn stat(report: &Value, side: &str, field: &str) -> u64 {
    report["routing"][format!("{side}_stats")][field]
        .as_u64()
        .unwrap_or_else(|| panic!("routing.{side}_stats.{field} missing in the report"))
}
