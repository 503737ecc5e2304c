//! The check job: load both sides, diff, measure meaning drift, replay the suite at base and head,
//! and build the one `Report`. The CLI only fills in `CheckInputs`.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::diff;
use crate::drift::{self, Drift};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::gate::{self, CheckThresholds};
use crate::replay::{self, ReplayConfig, Replayer};
use crate::report::{self, Report, Side};
use crate::route::cache::RouteCache;
use crate::route::{Router, ToolChoice};
use crate::suite::{self, Suite};
use crate::tools::Tool;
use crate::tools::load::{self, Loaded};

/// The system prompt sent to LLM routers, versioned in `prompts/`.
pub const ROUTER_SYSTEM_PROMPT: &str = include_str!("../prompts/router-system.v1.md");
pub const ROUTER_SYSTEM_PROMPT_FILE: &str = "prompts/router-system.v1.md";

/// Where the suite came from and whether the PR changed it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteInfo {
    pub source: String,
    pub sha256: String,
    pub cases: usize,
    /// "base" or "head": which version of the suite measured both sides.
    #[serde(deserialize_with = "crate::report::de::side")]
    pub measured_with: crate::report::de::Static,
    pub changed_in_pr: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RouterInfo {
    pub kind: String,
    pub model: String,
    pub host: String,
    pub system_prompt: String,
    pub system_prompt_sha256: String,
    pub tool_choice: ToolChoice,
    pub repeats: u32,
    pub temperature: f32,
    pub seed: Option<u64>,
    pub distractor_tools: usize,
    /// USD per million input/output tokens, when the user gave prices (never guessed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price_per_mtok: Option<[f64; 2]>,
    /// Tokens the provider reported × prices, both sides.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_cost_usd: Option<f64>,
}

pub struct SuiteChoice {
    pub suite: Suite,
    pub info: SuiteInfo,
    pub note: Option<String>,
}

/// Pick the suite that measures both sides. When the PR changed the suite as well as the tools,
/// the base suite is used (changing the instrument and the thing measured at once hides drift)
/// unless `use_head` opts in; either way the report says so loudly.
pub fn choose_suite(
    path: &std::path::Path,
    base_rev: Option<&str>,
    use_head: bool,
) -> Result<SuiteChoice> {
    let head_text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let label = path.display().to_string();
    let dir = path
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| PathBuf::from("."));
    let head = suite::parse(&head_text, &label, &dir)?;
    let base_text = base_rev.and_then(|rev| load::git_show(rev, &label).ok().map(|t| (rev, t)));
    let (suite, measured_with, changed, note) = match base_text {
        Some((rev, text)) if text != head_text => {
            if use_head {
                let n = format!(
                    "The suite changed in this PR ({label} differs from {rev}); both sides were measured with the HEAD suite because --use-head-suite was given. Changing the instrument and the tools at once can hide drift."
                );
                (head, "head", true, Some(n))
            } else {
                let base = suite::parse(&text, &format!("{rev}:{label}"), &dir)?;
                let n = format!(
                    "The suite changed in this PR ({label} differs from {rev}); both sides were measured with the BASE suite so the instrument stays fixed. Pass --use-head-suite to measure with the new one."
                );
                (base, "base", true, Some(n))
            }
        }
        // Identical at the base revision: the base suite measured both sides.
        Some(_) => (head, "base", false, None),
        // No base revision, or the suite does not exist there: only the head suite exists.
        None => (head, "head", false, None),
    };
    let info = SuiteInfo {
        source: suite.source.clone(),
        sha256: suite.sha256.clone(),
        cases: suite.cases.len(),
        measured_with,
        changed_in_pr: changed,
    };
    Ok(SuiteChoice { suite, info, note })
}

pub struct CheckInputs {
    pub base: Loaded,
    pub head: Loaded,
    pub thresholds: CheckThresholds,
    /// `None` skips meaning drift (`--no-embed`).
    pub embedder: Option<Arc<dyn Embedder>>,
    /// `None` skips the replay (plain `diff`).
    pub replay: Option<ReplayInputs>,
    pub notes: Vec<String>,
}

pub struct ReplayInputs {
    pub suite: SuiteChoice,
    pub router: Box<dyn Router>,
    pub cache: RouteCache,
    pub config: ReplayConfig,
    pub packs: Vec<Tool>,
    pub price_per_mtok: Option<[f64; 2]>,
}

pub async fn run(command: &'static str, inputs: CheckInputs) -> Result<Report> {
    let CheckInputs {
        base,
        head,
        thresholds,
        embedder,
        replay,
        mut notes,
    } = inputs;
    let d = diff::diff(&base.tools, &head.tools);
    let drift: Option<Drift> = match &embedder {
        Some(e) => Some(
            drift::measure(
                &d,
                &base.tools,
                &head.tools,
                e.as_ref(),
                thresholds.cosine_floor,
            )
            .await?,
        ),
        None => None,
    };
    let (routing, suite_info, router_info) = match replay {
        None => (None, None, None),
        Some(r) => {
            if let Some(n) = &r.suite.note {
                notes.push(n.clone());
            }
            for problem in suite::validate_against(&r.suite.suite, &base.tools) {
                notes.push(format!("suite vs base tools: {problem}"));
            }
            let replayer = Replayer::new(r.router.as_ref(), &r.cache, &r.config);
            let base_run = replayer
                .run_side("base", &r.suite.suite, &base.tools, &r.packs)
                .await;
            let head_run = replayer
                .run_side("head", &r.suite.suite, &head.tools, &r.packs)
                .await;
            let routing = replay::compare(&r.suite.suite, &base_run, &head_run, r.config.seed);
            let info = RouterInfo {
                kind: r.router.kind().to_string(),
                model: r.router.model().to_string(),
                host: r.router.endpoint_host(),
                system_prompt: if r.config.system_prompt.is_empty() {
                    "(none)".into()
                } else {
                    ROUTER_SYSTEM_PROMPT_FILE.into()
                },
                system_prompt_sha256: crate::tools::canon::hash_str(&r.config.system_prompt),
                tool_choice: r.config.tool_choice,
                repeats: r.config.repeats,
                temperature: r.config.sampling.temperature,
                seed: r.config.sampling.seed,
                distractor_tools: r.packs.len(),
                price_per_mtok: r.price_per_mtok,
                estimated_cost_usd: r.price_per_mtok.map(|[i, o]| {
                    let u = replay::total_usage(&routing);
                    (u.input_tokens as f64 * i + u.output_tokens as f64 * o) / 1e6
                }),
            };
            (Some(routing), Some(r.suite.info.clone()), Some(info))
        }
    };
    // Lint is a heuristic: reported (what the PR introduced or fixed), never part of the verdict.
    let lint = match command {
        "check" => {
            Some(crate::lint::check_delta(&d, &base.tools, &head.tools, embedder.as_deref()).await?)
        }
        _ => None,
    };
    let verdict = gate::check_verdict(&d, drift.as_ref(), routing.as_ref(), &thresholds);
    Ok(Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: env!("CARGO_PKG_VERSION"),
        command,
        verdict,
        base: Side::of(&base),
        head: Side::of(&head),
        thresholds,
        diff: d,
        drift,
        routing,
        suite: suite_info,
        router: router_info,
        notes,
        lint,
        github: None,
    })
}
