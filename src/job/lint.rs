//! `driftgate lint`: one tool set's static analysis and injection scan, as one report.

use std::sync::Arc;

use crate::embed::Embedder;
use crate::error::Result;
use crate::injection::{FailOn, ScanSection};
use crate::job::check::LintModel;
use crate::lint::{self, LintOptions, LintSection};
use crate::report::Side;
use crate::report::lint::LintReport;
use crate::source::Loaded;

/// Everything `lint` measures with, resolved by `app`.
pub struct LintInputs {
    pub loaded: Loaded,
    /// `None`: compare descriptions by words only (`--no-embed`).
    pub embedder: Option<Arc<dyn Embedder>>,
    pub options: LintOptions,
    /// `--llm`: grade every tool with this model.
    pub model: Option<LintModel>,
    /// Accepted scan findings (`[[scan.allow]]`).
    pub scan_allow: Vec<crate::injection::Allow>,
    pub scan_fail_on: FailOn,
    /// Hard gates and confusable pairs fail too.
    pub strict: bool,
}

/// Lint and scan the tool set; the verdict is `gate::lint_verdict`'s.
pub async fn run(i: LintInputs) -> Result<LintReport> {
    let tools = &i.loaded.tools;
    let mut analysis = lint::analyse(tools, i.embedder.as_deref(), &i.options).await?;
    let graded = match &i.model {
        Some(m) => {
            let grader = lint::Grader {
                router: m.router.as_ref(),
                cache: &m.cache,
                concurrency: m.concurrency,
                retry: &m.retry,
            };
            Some(grader.grade(tools, &mut analysis).await)
        }
        None => None,
    };
    let mut section = LintSection::full(analysis);
    section.llm = graded;
    let scan = ScanSection::full(tools, &i.scan_allow);
    Ok(LintReport::new(
        Side::of(&i.loaded),
        section,
        scan,
        i.scan_fail_on,
        i.strict,
    ))
}
