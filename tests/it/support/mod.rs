//! Shared test helpers: the one way to run the binary (`cli`), the one loopback HTTP fake
//! (`fake`) and the wire formats spoken on it (`openai`, `anthropic`, their batch APIs in `batch`,
//! `github`), a simulated
//! Actions runner, the calendar example's paths, real reports, a Markdown safety check.

pub mod anthropic;
pub mod batch;
pub mod calendar;
pub mod cli;
pub mod fake;
pub mod github;
pub mod html;
pub mod markdown;
pub mod openai;
pub mod prompt_cache;
pub mod reports;
pub mod runner;

use std::path::Path;

use serde_json::Value;

pub use cli::repo;

/// `routing.{side}_stats.{field}` of a JSON report.
pub fn stat(report: &Value, side: &str, field: &str) -> u64 {
    report["routing"][format!("{side}_stats")][field]
        .as_u64()
        .unwrap_or_else(|| panic!("routing.{side}_stats.{field} missing in the report"))
}

/// The flip of case `id`, if it flipped.
pub fn flip<'a>(report: &'a Value, id: &str) -> Option<&'a Value> {
    report["routing"]["flips"]
        .as_array()
        .expect("routing.flips")
        .iter()
        .find(|f| f["id"] == id)
}

/// Every file under `dir`, concatenated (for "the key is nowhere on disk" checks).
pub fn read_tree(dir: &Path) -> String {
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&read_tree(&p));
        } else if let Ok(bytes) = std::fs::read(&p) {
            // Cache entries end in their binary HMAC tag.
            out.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    out
}

/// The text of `tests/fixtures/router/{name}`.
pub fn router_fixture(name: &str) -> String {
    let full = repo("tests/fixtures/router").join(name);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}
