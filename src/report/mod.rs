//! One `Report`, built once, rendered many ways (terminal, JSON, …), like oasdiff's formatters.

pub mod escape;
pub mod json;
pub mod terminal;

use serde::Serialize;

use crate::check::{RouterInfo, SuiteInfo};
use crate::diff::Diff;
use crate::drift::Drift;
use crate::gate::{CheckThresholds, Verdict};
use crate::replay::Routing;
use crate::tools::load::{Format, Loaded};

/// Bumped only on incompatible changes; additions keep the version.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub source: String,
    pub format: Format,
    pub tool_count: usize,
    /// File path in the repository, for annotations; absent for live servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Side {
    pub fn of(l: &Loaded) -> Side {
        Side {
            source: l.label.clone(),
            format: l.format,
            tool_count: l.tools.len(),
            file: l.file.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub driftgate_version: &'static str,
    pub command: &'static str,
    pub verdict: Verdict,
    pub base: Side,
    pub head: Side,
    pub thresholds: CheckThresholds,
    pub diff: Diff,
    /// Meaning drift of changed tools (absent with `--no-embed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    /// Paired routing replay (`check` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub router: Option<RouterInfo>,
    /// Loud notes for the reader (e.g. the suite changed with the tools).
    pub notes: Vec<String>,
    /// Static analysis: every finding for `lint`; what the PR introduced or fixed for `check`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lint: Option<crate::lint::LintSection>,
}

/// Output formats; each lives in its own file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Terminal,
    Json,
}

pub fn render(report: &Report, format: OutputFormat, color: bool) -> String {
    match format {
        OutputFormat::Terminal => terminal::render(report, color),
        OutputFormat::Json => json::render(report),
    }
}
