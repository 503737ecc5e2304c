//! `driftgate lint`'s document: one tool set, its static analysis and injection scan, and the
//! verdict on them. Lint pairs nothing and replays nothing, so it has no base, head, diff or
//! thresholds of a check; it was once a check report with base = head, which every renderer had
//! to explain away.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Side, VERSION};
use crate::gate::Verdict;
use crate::injection::{FailOn, ScanSection};
use crate::lint::LintSection;

/// Bumped only on incompatible changes to the lint JSON; additions keep the version. 2: lint's
/// own document (1 was the check report's shape with base = head).
pub const LINT_SCHEMA_VERSION: u32 = 2;

/// What `command` says in a lint document: the one value that tells it from a check report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LintCommand {
    Lint,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LintReport {
    pub schema_version: u32,
    /// The driftgate version that wrote the report.
    pub driftgate_version: String,
    pub command: LintCommand,
    pub verdict: Verdict,
    /// The tool set linted.
    pub tools: Side,
    /// Injection findings at or above this fail.
    pub scan_fail_on: FailOn,
    /// Hard gates and confusable pairs fail too (`--strict`).
    pub strict: bool,
    /// Every finding, the pair evidence, the deterministic signals and (`--llm`) the model's
    /// grades.
    pub lint: LintSection,
    /// Every injection finding. Against no base everything is new, so each one not allowed by
    /// the config is under `introduced`, and `existing` is always empty.
    pub scan: ScanSection,
}

impl LintReport {
    /// The report and its verdict (`gate::lint_verdict`).
    pub fn new(
        tools: Side,
        lint: LintSection,
        scan: ScanSection,
        scan_fail_on: FailOn,
        strict: bool,
    ) -> LintReport {
        let verdict = crate::gate::lint_verdict(&lint, Some(&scan), scan_fail_on, strict);
        LintReport {
            schema_version: LINT_SCHEMA_VERSION,
            driftgate_version: VERSION.to_string(),
            command: LintCommand::Lint,
            verdict,
            tools,
            scan_fail_on,
            strict,
            lint,
            scan,
        }
    }

    /// Read a JSON lint report back.
    pub fn from_json(text: &str, source: &str) -> crate::Result<LintReport> {
        let report: LintReport = super::read_json(text, source)?;
        if report.schema_version != LINT_SCHEMA_VERSION {
            return Err(crate::Error::Usage(format!(
                "{source}: lint report schema_version {} is not {LINT_SCHEMA_VERSION}; render it with the driftgate version that wrote it ({})",
                report.schema_version, report.driftgate_version
            )));
        }
        Ok(report)
    }
}

/// The JSON Schema of `lint --format json`, published as `docs/lint.schema.json`.
pub fn json_schema() -> serde_json::Value {
    super::schema_of::<LintReport>(&format!(
        "A driftgate lint report as `lint --format json` writes it, schema_version {LINT_SCHEMA_VERSION}: additions keep the version, an incompatible change bumps it."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Status;
    use crate::lint::LintOptions;
    use crate::source::Format;
    use crate::tools::ToolSet;
    use serde_json::json;

    #[test]
    fn a_lint_report_reads_back_whole() {
        let p = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
        let tools = json!([
            {"name": "read_file", "description": "Read a file as text.", "inputSchema": p},
            {"name": "read_text_file", "description": "Read a text file as text.", "inputSchema": p},
            {"name": "ping"}
        ]);
        let set = ToolSet::from_array(tools.as_array().unwrap(), "t.json", "").unwrap();
        let section = LintSection::full(
            crate::lint::analyse_with(&set, None, None, &LintOptions::default()).unwrap(),
        );
        let side = Side {
            source: "t.json".into(),
            format: Format::BareArray,
            tool_count: set.len(),
            file: None,
            lines: Default::default(),
        };
        let scan = ScanSection::full(&set, &[]);
        let report = LintReport::new(side, section, scan, FailOn::High, false);
        assert_eq!(report.verdict.status, Status::Pass);
        let text = crate::report::render::json::lint(&report);
        let back = LintReport::from_json(&text, "r.json").unwrap();
        assert_eq!(back.lint, report.lint);
        assert_eq!(crate::report::render::json::lint(&back), text);
        // A rule id outside the registry is refused, not carried.
        let forged = text.replacen("\"rule\": \"confusable-pair\"", "\"rule\": \"made-up\"", 1);
        assert_ne!(forged, text);
        let e = LintReport::from_json(&forged, "r.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown lint rule \"made-up\""), "{e}");
        // A check report is not a lint report, nor an older lint document.
        let old = text.replacen("\"schema_version\": 2", "\"schema_version\": 1", 1);
        let e = LintReport::from_json(&old, "r.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lint report schema_version 1 is not 2"), "{e}");
        let check = text.replacen("\"command\": \"lint\"", "\"command\": \"check\"", 1);
        let e = LintReport::from_json(&check, "r.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("r.json") && e.contains("check"), "{e}");
        // Nor is a lint report read as a check report (`comment --report`).
        let e = crate::report::Report::from_json(&text, "r.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("r.json is a lint report"), "{e}");
    }
}
