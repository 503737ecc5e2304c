//! Renderers: one module per output format, each behind the one `Renderer` trait, found through
//! one registry (`Format::renderer`). Every format renders the check/diff `Report` and lint's
//! `LintReport`, and may also render the other documents (the stress report, `suite check`'s
//! findings).

pub mod annotations;
pub mod html;
pub mod json;
pub mod markdown;
pub mod sarif;
pub mod terminal;

use crate::choice::Choice;
use crate::report::Report;
use crate::report::lint::LintReport;
use crate::report::stress::StressReport;
use crate::suite::check::SuiteCheck;

/// A share as every format prints it: `0.875` → `87.5%`.
pub(crate) fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// What every renderer is told besides the document.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// ANSI colour (terminal only; the caller decided from NO_COLOR and the TTY).
    pub color: bool,
}

pub trait Renderer: Sync {
    fn format(&self) -> Format;
    fn report(&self, report: &Report, opts: &Options) -> String;
    /// `driftgate lint`'s report.
    fn lint(&self, report: &LintReport, opts: &Options) -> String;
    /// Whether this format has a stress report (asked before the run, which is long).
    fn renders_stress(&self) -> bool {
        false
    }
    /// The stress report, where this format has one.
    fn stress(&self, _report: &StressReport, _opts: &Options) -> Option<String> {
        None
    }
    /// `driftgate fix`'s report, where this format has one.
    fn fix(&self, _report: &crate::report::fix::FixReport, _opts: &Options) -> Option<String> {
        None
    }
    /// `suite check`'s findings, where this format has them.
    fn suite_check(&self, _check: &SuiteCheck, _opts: &Options) -> Option<String> {
        None
    }
}

/// Output formats; each has one renderer module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Terminal,
    Json,
    /// GitHub-flavoured Markdown (the PR comment and job summary body).
    Markdown,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
    /// GitHub workflow-command annotations (`::error file=…,line=…::…`).
    Annotations,
    /// One self-contained HTML page with charts (no network, readable without JavaScript).
    Html,
}

impl Format {
    /// The registry: the one renderer of each format.
    pub fn renderer(self) -> &'static dyn Renderer {
        match self {
            Format::Terminal => &terminal::Terminal,
            Format::Json => &json::Json,
            Format::Markdown => &markdown::Markdown,
            Format::Sarif => &sarif::Sarif,
            Format::Annotations => &annotations::Annotations,
            Format::Html => &html::Html,
        }
    }
}

impl Choice for Format {
    const ALL: &'static [Format] = &[
        Format::Terminal,
        Format::Json,
        Format::Markdown,
        Format::Sarif,
        Format::Annotations,
        Format::Html,
    ];
    fn name(self) -> &'static str {
        match self {
            Format::Terminal => "terminal",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Sarif => "sarif",
            Format::Annotations => "annotations",
            Format::Html => "html",
        }
    }
    fn help(self) -> &'static str {
        match self {
            Format::Terminal => "",
            Format::Json => "",
            Format::Markdown => "GitHub-flavoured Markdown (the PR comment and job summary body)",
            Format::Sarif => "SARIF 2.1.0 for code scanning",
            Format::Annotations => {
                "GitHub workflow-command annotations (`::error file=…,line=…::…`)"
            }
            Format::Html => "one self-contained HTML page with charts (no network)",
        }
    }
}

/// A document every format renders: what a command's output writer is handed.
pub trait Document {
    fn render(&self, format: Format, opts: &Options) -> String;
}

impl Document for Report {
    fn render(&self, format: Format, opts: &Options) -> String {
        format.renderer().report(self, opts)
    }
}

impl Document for LintReport {
    fn render(&self, format: Format, opts: &Options) -> String {
        format.renderer().lint(self, opts)
    }
}

/// `doc` in `format`.
pub fn render(doc: &dyn Document, format: Format, opts: &Options) -> String {
    doc.render(format, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_registered_under_its_own_name() {
        for f in Format::ALL {
            assert_eq!(f.renderer().format(), *f, "{}", f.name());
            assert_eq!(Format::from_name(f.name()), Some(*f));
        }
    }
}
