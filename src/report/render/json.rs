//! JSON renderer: the report model as a versioned document (`schema_version`).
//! serde_json escapes every control character, so untrusted text cannot break the document, and
//! `runner_safe_json` keeps it from holding a workflow command.

use serde::Serialize;

use crate::report::Report;
use crate::report::lint::LintReport;
use crate::report::stress::StressReport;
use crate::suite::check::SuiteCheck;

pub fn render(report: &Report) -> String {
    document(report)
}

pub fn lint(report: &LintReport) -> String {
    document(report)
}

pub fn fix(report: &crate::report::fix::FixReport) -> String {
    document(report)
}

pub fn stress(report: &StressReport) -> String {
    document(report)
}

pub fn watch(report: &crate::canary::watch::WatchReport) -> String {
    document(report)
}

/// The alias map file: names invented by agents (untrusted) keep their values, hidden
/// characters written as `\u` escapes.
pub fn aliases(map: &crate::tools::alias::AliasMap) -> String {
    document(map)
}

/// Pretty JSON, with `##[` written as `#\u0023[` so no line is a runner command, and hidden
/// characters as `\u` escapes so none reaches a reader raw (same values).
fn document<T: Serialize>(doc: &T) -> String {
    let mut s = serde_json::to_string_pretty(doc).expect("report serialises");
    s.push('\n');
    crate::console::runner_safe_json(&crate::report::escape::json_hidden(&s)).into_owned()
}

/// The JSON renderer: every document is its model, serialised.
pub struct Json;

impl super::Renderer for Json {
    fn format(&self) -> super::Format {
        super::Format::Json
    }
    fn report(&self, report: &Report, _: &super::Options) -> String {
        render(report)
    }
    fn lint(&self, report: &LintReport, _: &super::Options) -> String {
        lint(report)
    }
    fn renders_stress(&self) -> bool {
        true
    }
    fn stress(&self, report: &StressReport, _: &super::Options) -> Option<String> {
        Some(stress(report))
    }
    fn fix(&self, report: &crate::report::fix::FixReport, _: &super::Options) -> Option<String> {
        Some(fix(report))
    }
    fn suite_check(&self, check: &SuiteCheck, _: &super::Options) -> Option<String> {
        Some(document(check))
    }
}
