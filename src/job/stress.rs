//! The stress job: replay the unperturbed tools once, then the suite once per (tool, applicable
//! perturbation), and collect the per-tool fragility the stress report shows.

use crate::cache::Cache;
use crate::console::Console;
use crate::llm::json::LlmStats;
use crate::replay::{self, ReplayConfig, Replayer, RunStats, SideRun};
use crate::report::stress::{
    self as report, BaseSummary, Cost, ParaphraseInfo, PerturbationInfo, PerturbationResult,
    RouterSummary, StressReport, ToolStress,
};
use crate::route::Router;
use crate::source::Loaded;
use crate::stats::majority_right;
use crate::stress::perturb::{Context, Perturbation};
use crate::suite::{Expect, Suite};
use crate::tools::{Tool, ToolSet};

/// What one stress run perturbs and replays its suite against.
#[derive(Clone, Copy)]
pub struct StressPlan<'a> {
    pub suite: &'a Suite,
    pub packs: &'a [Tool],
    pub perturbations: &'a [Box<dyn Perturbation>],
    /// Tools to perturb; empty = all.
    pub only: &'a [String],
}

/// The measurements, before the report's metadata is attached.
pub struct StressOutcome {
    pub base: BaseSummary,
    pub tools: Vec<ToolStress>,
    pub cost: Cost,
    pub errors: Vec<String>,
}

/// The suite as the perturbed side must be judged when a tool was renamed: the renamed tool is the
/// same implementation, so calling it by its new name is right.
fn renamed_suite(suite: &Suite, old: &str, new: &str) -> Suite {
    let map = |n: &String| if n == old { new.to_string() } else { n.clone() };
    let mut s = suite.clone();
    for c in &mut s.cases {
        if let Expect::Tools(names) = &mut c.expect {
            *names = names.iter().map(map).collect();
        }
        c.must_not_call = c.must_not_call.iter().map(map).collect();
    }
    s
}

fn add_stats(cost: &mut Cost, s: &RunStats) {
    cost.replays += 1;
    cost.requests_sent += s.requests_sent;
    cost.cache_hits += s.cache_hits;
    cost.reused += s.reused;
    cost.retries += s.retries;
}

fn right_at_base(run: &SideRun, i: usize) -> bool {
    let c = &run.cases[i];
    majority_right(c.correct(), c.samples.len().max(1) as u32)
}

/// Replay the unperturbed `tools` once, then the suite once per (tool, applicable
/// perturbation); `console` is told one line per tool.
pub async fn run(
    replayer: &Replayer<'_>,
    job: StressPlan<'_>,
    tools: &ToolSet,
    console: &dyn Console,
) -> StressOutcome {
    let cfg = replayer.cfg;
    let mut cost = Cost::default();
    let mut errors = Vec::new();
    let base = replayer.run_side("base", job.suite, tools, job.packs).await;
    add_stats(&mut cost, &base.stats);
    for (case, run) in job.suite.cases.iter().zip(&base.cases) {
        for s in &run.samples {
            if let replay::Outcome::Error { message } = &s.outcome {
                errors.push(format!("unperturbed, case {:?}: {message}", case.id));
            }
        }
    }
    let n = job.suite.cases.len();
    let correct = (0..n).filter(|&i| right_at_base(&base, i)).count();
    let ctx = Context { tools };
    let mut tools_out = Vec::new();
    for (pos, tool) in tools.tools.iter().enumerate() {
        if !job.only.is_empty() && !job.only.contains(&tool.name) {
            continue;
        }
        let own: Vec<usize> = (0..n)
            .filter(|&i| job.suite.cases[i].expect.names().contains(&tool.name))
            .collect();
        let own_right = own.iter().filter(|&&i| right_at_base(&base, i)).count();
        let mut results = Vec::new();
        for p in job.perturbations {
            let Some(perturbed) = p.apply(tool, &ctx) else {
                results.push(PerturbationResult {
                    changes_meaning: p.changes_meaning(),
                    ..PerturbationResult::not_applied(p.id())
                });
                continue;
            };
            let mut head_tools = tools.clone();
            head_tools.tools[pos] = perturbed.tool.clone();
            let renamed = (perturbed.tool.name != tool.name).then(|| perturbed.tool.name.clone());
            let head_suite = match &renamed {
                Some(new) => renamed_suite(job.suite, &tool.name, new),
                None => job.suite.clone(),
            };
            let label = format!("{}×{}", tool.name, p.id());
            let head = replayer
                .run_side(&label, &head_suite, &head_tools, job.packs)
                .await;
            add_stats(&mut cost, &head.stats);
            let routing = replay::compare(job.suite, &base, &head, cfg.seed);
            errors.extend(
                routing
                    .errors
                    .iter()
                    .filter(|e| e.starts_with("head"))
                    .map(|e| format!("{label}: {e}")),
            );
            let own_delta = routing
                .paired
                .per_tool
                .iter()
                .find(|t| t.tool == tool.name)
                .map(|t| t.delta);
            results.push(PerturbationResult {
                id: p.id().to_string(),
                changes_meaning: p.changes_meaning(),
                applied: true,
                detail: Some(perturbed.detail),
                description: perturbed.tool.description.clone(),
                renamed_to: renamed,
                delta: Some(routing.paired.summary.delta),
                own_delta,
                regressed: routing.paired.summary.discordant_right_to_wrong,
                fixed: routing.paired.summary.discordant_wrong_to_right,
                p_value_worse: Some(routing.paired.summary.p_value_worse),
                flips: routing.paired.flips,
            });
        }
        let worst = report::worst(&results).map(|r| (r.id.clone(), r.delta));
        let fragility = report::fragility(&results, own_right);
        let sensitivity = report::sensitivity(&results, own_right);
        console.note(&format!(
            "driftgate: stress: {}: {} edit(s) applied, fragility {}, sensitivity {}",
            crate::report::escape::cell(&tool.name, 80),
            results.iter().filter(|r| r.applied).count(),
            fragility.map_or("n/a".into(), |f| format!("{f:.2}")),
            sensitivity.map_or("n/a".into(), |f| format!("{f:.2}"))
        ));
        tools_out.push(ToolStress {
            tool: tool.name.clone(),
            own_cases: own.len(),
            own_right_at_base: own_right,
            results,
            worst: worst.as_ref().map(|w| w.0.clone()),
            worst_delta: worst.and_then(|w| w.1),
            fragility,
            sensitivity,
        });
    }
    StressOutcome {
        base: BaseSummary {
            accuracy: if n == 0 {
                0.0
            } else {
                correct as f64 / n as f64
            },
            correct,
            cases: n,
        },
        tools: tools_out,
        cost,
        errors,
    }
}

/// Everything one `driftgate stress` run needs, loaded.
pub struct StressInputs<'a> {
    pub loaded: &'a Loaded,
    pub plan: StressPlan<'a>,
    pub router: &'a dyn Router,
    pub cache: &'a Cache,
    pub config: &'a ReplayConfig,
    /// The drafted paraphrases' provenance and what drafting them cost.
    pub paraphrase: Option<(ParaphraseInfo, LlmStats)>,
}

/// The note naming the tools whose meaning change moved none of their prompts: a router that
/// feels no meaning change on a tool cannot vouch for that tool's edits.
fn numb(tools: &[ToolStress]) -> Option<String> {
    let names: Vec<&str> = tools
        .iter()
        .filter(|t| t.sensitivity == Some(0.0) && t.own_right_at_base > 0)
        .map(|t| t.tool.as_str())
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "this router did not feel a meaning change on {} tool(s): {}; its silence on their edits is no evidence",
            names.len(),
            names.join(", ")
        )
    })
}

/// Run the stress job and build its report.
pub async fn stress(i: StressInputs<'_>, console: &dyn Console) -> StressReport {
    let plan = i.plan;
    let mut notes: Vec<String> = crate::suite::validate_against(plan.suite, &i.loaded.tools)
        .into_iter()
        .map(|problem| format!("suite vs tools: {problem}"))
        .collect();
    // Perturbations rename and add tools: every variant is ordered on the unperturbed circle.
    let replayer = Replayer::new(i.router, i.cache, i.config)
        .with_circle(&i.loaded.tools, plan.packs)
        .with_console(console);
    let outcome = run(&replayer, plan, &i.loaded.tools, console).await;
    let (paraphrase, drafting) = match i.paraphrase {
        Some((info, stats)) => (Some(info), Some(stats)),
        None => (None, None),
    };
    let mut cost = outcome.cost;
    cost.drafting = drafting;
    notes.extend(numb(&outcome.tools));
    StressReport {
        schema_version: report::STRESS_SCHEMA_VERSION,
        driftgate_version: env!("CARGO_PKG_VERSION"),
        command: "stress",
        tools_source: i.loaded.label.clone(),
        suite: crate::suite::Identity::of(plan.suite),
        router: RouterSummary {
            identity: crate::route::Identity::of(i.router, &i.config.system_prompt),
            repeats: i.config.repeats,
            seed: i.config.seed,
        },
        base: outcome.base,
        perturbations: plan
            .perturbations
            .iter()
            .map(|p| PerturbationInfo {
                id: p.id().to_string(),
                summary: p.summary(),
                changes_meaning: p.changes_meaning(),
            })
            .collect(),
        tools: outcome.tools,
        paraphrase,
        cost,
        errors: outcome.errors,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Cache;
    use crate::console::Silent;
    use crate::http::Failure;
    use crate::http::retry::RetryPolicy;
    use crate::llm::{Answer, Sampling, ToolChoice};
    use crate::replay::ReplayConfig;
    use crate::route::{RouteRequest, RouteResponse, Router};
    use crate::stress::perturb;
    use serde_json::json;

    /// Calls the offered tool whose description starts with the prompt's first word (first in
    /// offered order on a tie), else no call: a router whose answers follow descriptions only.
    struct FirstWord;

    #[async_trait::async_trait]
    impl Router for FirstWord {
        fn kind(&self) -> crate::route::Kind {
            crate::route::Kind::Semantic
        }
        fn model(&self) -> &str {
            "test"
        }
        fn endpoint_host(&self) -> String {
            "local".into()
        }
        async fn route(&self, req: &RouteRequest) -> std::result::Result<RouteResponse, Failure> {
            let prompt = req
                .messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default();
            let word = prompt
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_lowercase();
            let hit = req.tools.iter().find(|t| {
                t.description_text()
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.to_lowercase() == word)
            });
            let answer = match hit {
                Some(t) => Answer::bare_call(&t.name),
                None => Answer::NoCall { text: "no".into() },
            };
            Ok(RouteResponse {
                answer,
                usage: None,
                latency_ms: 1,
            })
        }
    }

    /// Test perturbations through the same trait: the table is open to new edits.
    struct Rename;
    impl Perturbation for Rename {
        fn id(&self) -> &str {
            "rename"
        }
        fn summary(&self) -> String {
            "rename to cat_*".into()
        }
        fn apply(&self, tool: &Tool, _: &Context) -> Option<perturb::Perturbed> {
            let mut t = tool.clone();
            t.name = format!("cat_{}", tool.name);
            Some(perturb::Perturbed {
                tool: t,
                detail: "renamed".into(),
            })
        }
    }

    struct Blank;
    impl Perturbation for Blank {
        fn id(&self) -> &str {
            "blank"
        }
        fn summary(&self) -> String {
            "empty the description".into()
        }
        fn apply(&self, tool: &Tool, _: &Context) -> Option<perturb::Perturbed> {
            // Only tools that say "Read" — the others are "not applicable".
            if !tool.description_text().starts_with("Read") {
                return None;
            }
            let mut t = tool.clone();
            t.description = Some(String::new());
            Some(perturb::Perturbed {
                tool: t,
                detail: "blank".into(),
            })
        }
    }

    fn config(concurrency: usize) -> ReplayConfig {
        ReplayConfig {
            system_prompt: String::new(),
            tool_choice: ToolChoice::Auto,
            sampling: Sampling::default(),
            repeats: 1,
            first_repeat: 0,
            concurrency,
            seed: 0,
            order: Default::default(),
            retry: RetryPolicy::default(),
            batch: None,
        }
    }

    /// A meaning change the test router (first word decides) cannot see, and one it can.
    struct Forbid(&'static str);
    impl Perturbation for Forbid {
        fn id(&self) -> &str {
            self.0
        }
        fn summary(&self) -> String {
            "a meaning change".into()
        }
        fn changes_meaning(&self) -> bool {
            true
        }
        fn apply(&self, tool: &Tool, _: &Context) -> Option<perturb::Perturbed> {
            let mut t = tool.clone();
            t.description = Some(match self.0 {
                // The first word stays: the router is numb to it.
                "tail" => format!("{} Never for notes.", tool.description_text()),
                _ => format!("Never {}", tool.description_text()),
            });
            Some(perturb::Perturbed {
                tool: t,
                detail: self.0.into(),
            })
        }
    }

    #[tokio::test]
    async fn a_meaning_change_is_sensitivity_and_a_numb_tool_is_named() {
        let tools = ToolSet::from_array(
            &[
                json!({"name": "read_text_file", "description": "Read a file."}),
                json!({"name": "write_file", "description": "Write a file."}),
            ],
            "t",
            "",
        )
        .unwrap();
        let suite = crate::suite::parse(
            "- {id: r1, prompt: read notes, expect: read_text_file}\n\
             - {id: w1, prompt: write notes, expect: write_file}\n",
            "s.yaml",
            std::path::Path::new("."),
        )
        .unwrap();
        let cache = Cache::off();
        let cfg = config(1);
        let router = FirstWord;
        let replayer = Replayer::new(&router, &cache, &cfg);
        for (edit, sensitivity, fragility) in [("head", Some(1.0), None), ("tail", Some(0.0), None)]
        {
            let perturbations: Vec<Box<dyn Perturbation>> = vec![Box::new(Forbid(edit))];
            let out = run(
                &replayer,
                StressPlan {
                    suite: &suite,
                    packs: &[],
                    perturbations: &perturbations,
                    only: &["read_text_file".into()],
                },
                &tools,
                &Silent,
            )
            .await;
            let read = &out.tools[0];
            assert!(read.results[0].changes_meaning);
            assert_eq!(
                (read.sensitivity, read.fragility),
                (sensitivity, fragility),
                "{edit}"
            );
            assert_eq!(
                read.worst, None,
                "a meaning change is never the worst harmless edit"
            );
            let note = numb(&out.tools);
            match edit {
                "tail" => assert_eq!(
                    note.as_deref(),
                    Some(
                        "this router did not feel a meaning change on 1 tool(s): read_text_file; its silence on their edits is no evidence"
                    )
                ),
                _ => assert_eq!(note, None),
            }
        }
    }

    #[tokio::test]
    async fn runner_replays_applicable_edits_and_judges_renames_by_implementation() {
        let tools = ToolSet::from_array(
            &[
                json!({"name": "read_text_file", "description": "Read a file."}),
                json!({"name": "write_file", "description": "Write a file."}),
                json!({"name": "list_directory", "description": "List a directory."}),
            ],
            "t",
            "",
        )
        .unwrap();
        let suite = crate::suite::parse(
            "- {id: r1, prompt: read notes, expect: read_text_file}\n\
             - {id: r2, prompt: read more, expect: read_text_file}\n\
             - {id: w1, prompt: write notes, expect: write_file, must_not_call: [read_text_file]}\n\
             - {id: l1, prompt: list src, expect: list_directory}\n\
             - {id: x1, prompt: delete it, expect: write_file}\n",
            "s.yaml",
            std::path::Path::new("."),
        )
        .unwrap();
        let cache = Cache::off();
        let cfg = config(2);
        let router = FirstWord;
        let replayer = Replayer::new(&router, &cache, &cfg);
        let perturbations: Vec<Box<dyn Perturbation>> = vec![Box::new(Rename), Box::new(Blank)];
        let out = run(
            &replayer,
            StressPlan {
                suite: &suite,
                packs: &[],
                perturbations: &perturbations,
                only: &["read_text_file".into(), "write_file".into()],
            },
            &tools,
            &Silent,
        )
        .await;
        assert!(out.errors.is_empty());
        assert_eq!((out.base.correct, out.base.cases), (4, 5));
        // Base once, rename for both tools, blank for read_text_file only.
        assert_eq!(out.cost.replays, 4);
        assert_eq!(out.tools.len(), 2);
        let read = &out.tools[0];
        assert_eq!(
            (read.tool.as_str(), read.own_cases, read.own_right_at_base),
            ("read_text_file", 2, 2)
        );
        // A rename alone: the router still reaches the same implementation, by its new name.
        let rename = &read.results[0];
        assert_eq!(rename.renamed_to.as_deref(), Some("cat_read_text_file"));
        assert_eq!((rename.delta, rename.regressed), (Some(0.0), 0));
        // Blank description: both "read" prompts lose their tool.
        let blank = &read.results[1];
        assert_eq!((blank.regressed, blank.fixed), (2, 0));
        assert!(
            (blank.delta.unwrap() + 0.4).abs() < 1e-12,
            "{:?}",
            blank.delta
        );
        assert!((blank.own_delta.unwrap() + 1.0).abs() < 1e-12);
        let ids: Vec<&str> = blank.flips.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["r1", "r2"]);
        assert_eq!(blank.flips[0].head, "(none)");
        assert_eq!(read.worst.as_deref(), Some("blank"));
        // (0 + min(1, 2/2)) / 2 applied edits.
        assert_eq!(read.fragility, Some(0.5));
        let write = &out.tools[1];
        assert!(!write.results[1].applied);
        assert_eq!(write.results[1].delta, None);
        assert_eq!((write.fragility, write.worst.as_deref()), (Some(0.0), None));
    }
}
