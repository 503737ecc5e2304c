//! The check job: load both sides, diff, measure meaning drift, replay the suite at base and head,
//! and build the one `Report`. The CLI only fills in `CheckInputs`.

use std::sync::Arc;

use crate::cache::Cache;
use crate::console::Console;
use crate::diff::{self, Severity};
use crate::drift::{self, Drift};
use crate::embed::Embedder;
use crate::error::Result;
use crate::gate::{self, CheckThresholds};
use crate::replay::{self, ReplayConfig, Replayer};
use crate::report::{self, Command, Report, Side};
use crate::route::{Router, RouterInfo, SYSTEM_PROMPT_FILE};
use crate::scan::ScanSection;
use crate::source::Loaded;
use crate::suite::{self, SuiteChoice};
use crate::tools::Tool;

pub struct CheckInputs {
    pub base: Loaded,
    pub head: Loaded,
    pub thresholds: CheckThresholds,
    /// `None` skips meaning drift (`--no-embed`).
    pub embedder: Option<Arc<dyn Embedder>>,
    /// `None` skips the replay (plain `diff`).
    pub replay: Option<ReplayInputs>,
    pub notes: Vec<String>,
    /// Accepted scan findings (`[[scan.allow]]`), each with its reason.
    pub scan_allow: Vec<crate::scan::Allow>,
}

pub struct ReplayInputs {
    pub suite: SuiteChoice,
    pub router: Box<dyn Router>,
    pub cache: Cache,
    pub config: ReplayConfig,
    pub packs: Vec<Tool>,
    pub price_per_mtok: Option<[f64; 2]>,
    /// `--confirm K`: re-ask the flipped cases K more times at both sides (0: off).
    pub confirm: u32,
}

/// Run `diff` (no replay) or `check`; progress goes to `console`.
pub async fn run(command: Command, inputs: CheckInputs, console: &dyn Console) -> Result<Report> {
    let CheckInputs {
        base,
        head,
        thresholds,
        embedder,
        replay,
        mut notes,
        scan_allow,
    } = inputs;
    let d = diff::diff(&base.tools, &head.tools);
    let scan = ScanSection::delta(&base.tools, &head.tools, &scan_allow);
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
            // One note per clash when both sides have it, else one per side.
            let clash_b = replay::clashes(&r.suite.suite, &base.tools, &r.packs, "server");
            let clash_h = replay::clashes(&r.suite.suite, &head.tools, &r.packs, "server");
            if clash_b == clash_h {
                notes.extend(clash_h);
            } else {
                notes.extend(replay::clashes(
                    &r.suite.suite,
                    &base.tools,
                    &r.packs,
                    "base",
                ));
                notes.extend(replay::clashes(
                    &r.suite.suite,
                    &head.tools,
                    &r.packs,
                    "head",
                ));
            }
            let replayer =
                Replayer::new(r.router.as_ref(), &r.cache, &r.config).with_console(console);
            let base_run = replayer
                .run_side("base", &r.suite.suite, &base.tools, &r.packs)
                .await;
            // A rename the diff found carries the suite's expectations to the new name at head
            // (it is still a breaking change under the law): the frozen suite names base's tools.
            let (head_suite, carried) = renamed_suite(&r.suite.suite, &d);
            notes.extend(carried);
            let head_run = replayer
                .run_side("head", &head_suite, &head.tools, &r.packs)
                .await;
            if r.config.repeats > 1 && replay::repeats_identical(&base_run, &head_run) {
                notes.push(format!(
                    "every one of the {} repeats of every case came back identical at both sides (temperature {}, seed + repeat): the provider is deterministic at these settings, so the repeats measured nothing and cost {}× the requests; use --repeats 1, or a temperature above 0",
                    r.config.repeats, r.config.sampling.temperature, r.config.repeats
                ));
            }
            let mut routing = replay::compare_sides(
                &r.suite.suite,
                &head_suite,
                &base_run,
                &head_run,
                r.config.seed,
                crate::stats::DEFAULT_RESAMPLES,
            );
            if r.confirm > 0 && !routing.flips.is_empty() {
                let cfg = ReplayConfig {
                    repeats: r.confirm,
                    first_repeat: r.config.repeats,
                    ..r.config.clone()
                };
                let again = Replayer::new(r.router.as_ref(), &r.cache, &cfg).with_console(console);
                let base_extra = again
                    .run_side(
                        "base (confirm)",
                        &replay::confirm::flipped_cases(&r.suite.suite, &routing),
                        &base.tools,
                        &r.packs,
                    )
                    .await;
                let head_extra = again
                    .run_side(
                        "head (confirm)",
                        &replay::confirm::flipped_cases(&head_suite, &routing),
                        &head.tools,
                        &r.packs,
                    )
                    .await;
                let before = routing.flips.clone();
                routing = replay::compare_sides(
                    &r.suite.suite,
                    &head_suite,
                    &replay::confirm::merge(&base_run, &base_extra),
                    &replay::confirm::merge(&head_run, &head_extra),
                    r.config.seed,
                    crate::stats::DEFAULT_RESAMPLES,
                );
                replay::confirm::annotate(&mut routing, &before, &base_extra, &head_extra);
            }
            if !r.router.fills_arguments() {
                routing.calls_not_measured = Some(format!("{} router", r.router.kind()));
            }
            routing.min_detectable_drop = crate::stats::min_detectable_drop(
                routing.summary.n_cases,
                routing.summary.base_accuracy,
                thresholds.tolerance,
                thresholds.require_significance,
                0.8,
            );
            let info = RouterInfo {
                kind: r.router.kind().to_string(),
                model: r.router.model().to_string(),
                host: r.router.endpoint_host(),
                system_prompt: if r.config.system_prompt.is_empty() {
                    "(none)".into()
                } else {
                    SYSTEM_PROMPT_FILE.into()
                },
                system_prompt_sha256: crate::canon::hash_str(&r.config.system_prompt),
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
        Command::Check => {
            match crate::lint::check_delta(&d, &base.tools, &head.tools, embedder.as_deref())
                .await?
            {
                Ok(section) => Some(section),
                Err(too_many) => {
                    notes.push(format!("lint skipped: {too_many}"));
                    None
                }
            }
        }
        Command::Diff | Command::Lint => None,
    };
    if let Some(d) = &drift
        && d.floor_source == crate::drift::FloorSource::Uncalibrated
    {
        notes.push(format!(
            "the cosine floor {:.2} is not calibrated for {} (no row in drift::floors; docs/calibration.md says how to add one): cosine scales differ from model to model",
            d.floor, d.model
        ));
    }
    notes.extend(gate::review_notes(
        drift.as_ref(),
        routing.as_ref(),
        &thresholds,
    ));
    let verdict = gate::check_verdict(
        &d,
        drift.as_ref(),
        routing.as_ref(),
        Some(&scan),
        &thresholds,
    );
    Ok(Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: report::VERSION.to_string(),
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
        scan: Some(scan),
        github: None,
    })
}

/// The suite as head reads it: every expected and forbidden name of a renamed tool replaced by
/// its new name, with one note per rename that moved a case.
fn renamed_suite(suite: &suite::Suite, d: &diff::Diff) -> (suite::Suite, Vec<String>) {
    let renames: Vec<(&str, &str)> = d
        .tools
        .iter()
        .filter(|t| t.status == diff::Status::Renamed)
        .filter_map(|t| Some((t.base_name.as_deref()?, t.head_name.as_deref()?)))
        .collect();
    let mut out = suite.clone();
    if renames.is_empty() {
        return (out, Vec::new());
    }
    let mut moved = vec![0usize; renames.len()];
    let rename = |name: &mut String, moved: &mut Vec<usize>| {
        if let Some(i) = renames.iter().position(|(old, _)| old == name) {
            *name = renames[i].1.to_string();
            moved[i] += 1;
        }
    };
    for case in &mut out.cases {
        if let suite::Expect::Tools(names) = &mut case.expect {
            names.iter_mut().for_each(|n| rename(n, &mut moved));
        }
        case.must_not_call
            .iter_mut()
            .for_each(|n| rename(n, &mut moved));
    }
    let notes = renames
        .iter()
        .zip(&moved)
        .filter(|(_, n)| **n > 0)
        .map(|((old, new), n)| {
            format!(
                "head expects `{new}`, renamed from `{old}` ({n} case(s) carried over; the rename is still a breaking schema change)"
            )
        })
        .collect();
    (out, notes)
}

/// A diff report without meaning drift (no embedder): pure and synchronous, for tests and tools.
pub fn diff_report(base: &Loaded, head: &Loaded, fail_on: Severity) -> Report {
    let d = diff::diff(&base.tools, &head.tools);
    let thresholds = CheckThresholds {
        fail_on,
        ..CheckThresholds::default()
    };
    let scan = ScanSection::delta(&base.tools, &head.tools, &[]);
    let verdict = gate::check_verdict(&d, None, None, Some(&scan), &thresholds);
    Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: report::VERSION.to_string(),
        command: Command::Diff,
        verdict,
        base: Side::of(base),
        head: Side::of(head),
        thresholds,
        diff: d,
        drift: None,
        routing: None,
        suite: None,
        router: None,
        notes: Vec::new(),
        lint: None,
        scan: Some(scan),
        github: None,
    }
}
