//! `suite init` and `suite check` as library calls: loaded tools in, a document out. The
//! command line, the files and the printing are `app`'s.

use std::path::Path;

use crate::canon::hash_str;
use crate::console::Console;
use crate::embed::Embedder;
use crate::error::Result;
use crate::llm::json::JsonLlm;
use crate::route::Router;
use crate::suite::check::{self, DetectableDrop, Overlap, SuiteCheck};
use crate::suite::draft::{self, Draft};
use crate::tools::ToolSet;

/// Who drafts the cases.
pub enum Drafter<'a> {
    /// Templates from the descriptions, picked with the semantic router; `embedder` finds each
    /// tool's nearest sibling.
    Offline { embedder: &'a dyn Embedder },
    /// The configured model (`prompts/suite-init.v3.md`).
    Model(&'a JsonLlm),
}

/// A drafted suite, before a human reviews and freezes it.
pub struct Drafted {
    pub drafts: Vec<Draft>,
    /// How the cases were drafted, for the suite's header.
    pub drafted_by: String,
    /// How much the prompts are worded like their tools' descriptions.
    pub overlap: Option<Overlap>,
}

impl Drafted {
    /// Cases carrying a note the reviewer reads first (the semantic router sent them elsewhere).
    pub fn noted(&self) -> usize {
        self.drafts.iter().filter(|d| d.note.is_some()).count()
    }

    /// The suite file: a header naming the tools and how the cases were drafted, then the
    /// cases, as YAML or (for a `.jsonl` output) JSON lines.
    pub fn render(
        &self,
        tools_label: &str,
        tools: &ToolSet,
        out_name: &str,
        jsonl: bool,
    ) -> String {
        let head = draft::header(tools_label, tools, &self.drafted_by, out_name);
        if jsonl {
            draft::render_jsonl(&head, &self.drafts)
        } else {
            draft::render_yaml(&head, &self.drafts)
        }
    }
}

/// `suite init`: `per_tool` prompts per tool and `none_cases` that need no tool, each routed once
/// by `router` (the semantic router) so the ones it sends elsewhere carry a note.
pub async fn draft(
    tools: &ToolSet,
    router: &dyn Router,
    drafter: Drafter<'_>,
    per_tool: usize,
    none_cases: usize,
    console: &dyn Console,
) -> Result<Drafted> {
    let (drafts, drafted_by) = match drafter {
        Drafter::Model(llm) => {
            let d = draft::draft_llm(llm, tools, router, per_tool, none_cases, console).await?;
            let by = format!(
                "model {} at {}, prompt {} ({}); notes from the semantic router ({})",
                llm.model(),
                llm.host(),
                draft::PROMPT_FILE,
                &hash_str(draft::PROMPT)[..19],
                router.model()
            );
            (d, by)
        }
        Drafter::Offline { embedder } => {
            let d = draft::draft_offline(tools, router, embedder, per_tool, none_cases).await?;
            let by = format!(
                "offline templates from the descriptions, picked with the semantic router ({})",
                router.model()
            );
            (d, by)
        }
    };
    let overlap = check::overlap_of(
        drafts
            .iter()
            .map(|d| (d.prompt.as_str(), d.expect.as_slice())),
        tools,
    );
    Ok(Drafted {
        drafts,
        drafted_by,
        overlap,
    })
}

/// The base accuracy `suite check` assumes when it says what drop the suite can detect.
pub const ASSUMED_BASE_ACCURACY: f64 = 0.8;

/// `suite check`: every finding of the suite `text` against `tools`, and the smallest drop it
/// detects with 80% power at the gate's default thresholds for a typical base accuracy.
pub fn check(
    text: &str,
    source: &str,
    base_dir: &Path,
    tools: &ToolSet,
    tools_label: &str,
) -> SuiteCheck {
    let mut r = check::check_text(text, source, base_dir, tools, tools_label);
    let t = crate::gate::CheckThresholds::default();
    r.min_detectable_drop = crate::stats::min_detectable_drop(
        r.cases,
        ASSUMED_BASE_ACCURACY,
        t.tolerance,
        t.require_significance,
        0.8,
    )
    .map(|drop| DetectableDrop {
        drop,
        assumed_base_accuracy: ASSUMED_BASE_ACCURACY,
    });
    r
}
