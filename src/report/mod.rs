//! One `Report`, built once, rendered many ways (terminal, JSON, …), like oasdiff's formatters.

pub mod escape;
pub mod json;
pub mod terminal;

use serde::Serialize;

use crate::diff::{Diff, Severity};
use crate::gate::Verdict;
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
pub struct Thresholds {
    pub fail_on: Severity,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub driftgate_version: &'static str,
    pub command: &'static str,
    pub verdict: Verdict,
    pub base: Side,
    pub head: Side,
    pub thresholds: Thresholds,
    pub diff: Diff,
    /// Loud notes for the reader (e.g. the suite changed with the tools).
    pub notes: Vec<String>,
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
