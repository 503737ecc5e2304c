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

/// What a gated test needs from its environment: a real server's URL, an installed package.
/// Gated tests are `#[ignore]`d, so plain `cargo test` lists them as ignored instead of passing
/// them unrun; CI asks for them (`-- --include-ignored`) once their component runs. Asked for
/// without it, the test fails here: a missing server never reads as a pass.
#[allow(dead_code)]
pub fn need(var: &str, how: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!(
            "{var} is not set ({how}): this real-component test was asked for and cannot run without it"
        ),
    }
}
