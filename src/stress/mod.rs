//! `driftgate stress`: how close to a knife-edge does each tool description sit?
//!
//! Each tool in turn gets each perturbation (harmless-looking edits, see `perturb`), and the suite
//! is replayed with that one tool perturbed, through the same `Replayer` and `compare` as
//! `driftgate check`: base is the unperturbed set (replayed once), head the perturbed one. The
//! report gives, per tool, the accuracy change under each edit, the worst edit, a fragility score
//! and the cases that flipped.

pub mod json;
pub mod markdown;
pub mod paraphrase;
pub mod perturb;
pub mod report;
pub mod terminal;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use crate::check::{ROUTER_SYSTEM_PROMPT, ROUTER_SYSTEM_PROMPT_FILE};
use crate::cli::{Color, LiveArgs, RouterArgs, write_atomic};
use crate::config::{self, Config};
use crate::embed::{EmbedArgs, Embedder};
use crate::error::{Error, Result, exit};
use crate::replay::{self, ReplayConfig, Replayer, RunStats, SideRun};
use crate::route::cache::RouteCache;
use crate::route::retry::RetryPolicy;
use crate::route::{Router, Sampling, ToolChoice};
use crate::stats::majority_right;
use crate::suite::{Expect, Suite};
use crate::tools::load::{self, Spec};
use crate::tools::{Tool, ToolSet};

use perturb::{Context, Perturbation};
use report::{
    BaseSummary, Cost, PerturbationInfo, PerturbationResult, RouterSummary, StressReport,
    SuiteSummary, ToolStress,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StressFormat {
    Terminal,
    Json,
    /// A Markdown fragility table (for docs and PR comments).
    Markdown,
}

#[derive(Debug, clap::Args)]
pub struct StressArgs {
    /// Tool set to stress: a file, REV:PATH or a lockfile.
    #[arg(long, value_name = "PATH", required_unless_present = "server_cmd")]
    pub tools: Option<String>,
    /// Or take the tools from a live MCP server (stdio).
    #[arg(long, value_name = "CMD", conflicts_with = "tools")]
    pub server_cmd: Option<String>,
    /// Routing suite (YAML or JSONL).
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// Perturbations to apply (comma-separated) [default: all: terser,jargonier,reordered,inverted,optional-param].
    #[arg(long = "perturb", value_name = "ID", value_delimiter = ',')]
    pub perturb: Vec<String>,
    /// Perturb only this tool (repeatable) [default: every tool].
    #[arg(long = "tool", value_name = "NAME")]
    pub only: Vec<String>,
    /// Jargon table for `jargonier`: a YAML/JSON map {plain phrase: jargon}, replacing the default.
    #[arg(long, value_name = "FILE")]
    pub jargon: Option<PathBuf>,
    /// Also apply N meaning-preserving rewrites per tool drafted by the configured model
    /// (--model/--base-url; prompt in prompts/paraphrase.v1.md).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub llm_paraphrase: u32,
    /// Extra tools offered with every case (other servers' tools).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub distractors: Vec<String>,
    #[command(flatten)]
    pub router: RouterArgs,
    /// Config file (default: ./driftgate.toml when present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Cache directory for embeddings, router answers and drafts [default: .driftgate/cache].
    #[arg(long, value_name = "DIR", env = "DRIFTGATE_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the disk cache.
    #[arg(long)]
    pub no_cache: bool,
    #[command(flatten)]
    pub embed: EmbedArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: StressFormat,
    /// Write the rendered report to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the JSON report to FILE.
    #[arg(long = "json-out", value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Colour: auto honours NO_COLOR and colours only a terminal.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: Color,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// What one stress run measures.
pub struct StressJob<'a> {
    pub suite: &'a Suite,
    pub tools: &'a ToolSet,
    pub packs: &'a [Tool],
    pub perturbations: &'a [Box<dyn Perturbation>],
    /// Tools to perturb; empty = all.
    pub only: &'a [String],
    /// One stderr line per tool.
    pub progress: bool,
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

/// Replay the unperturbed set once, then the suite once per (tool, applicable perturbation).
pub async fn run(replayer: &Replayer<'_>, job: StressJob<'_>) -> StressOutcome {
    let cfg = replayer.cfg;
    let mut cost = Cost::default();
    let mut errors = Vec::new();
    let base = replayer
        .run_side("base", job.suite, job.tools, job.packs)
        .await;
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
    let ctx = Context { tools: job.tools };
    let mut tools_out = Vec::new();
    for (pos, tool) in job.tools.tools.iter().enumerate() {
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
                results.push(PerturbationResult::not_applied(p.id()));
                continue;
            };
            let mut head_tools = job.tools.clone();
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
                .per_tool
                .iter()
                .find(|t| t.tool == tool.name)
                .map(|t| t.delta);
            results.push(PerturbationResult {
                id: p.id().to_string(),
                applied: true,
                detail: Some(perturbed.detail),
                description: perturbed.tool.description.clone(),
                renamed_to: renamed,
                delta: Some(routing.summary.delta),
                own_delta,
                regressed: routing.summary.discordant_right_to_wrong,
                fixed: routing.summary.discordant_wrong_to_right,
                p_value_worse: Some(routing.summary.p_value_worse),
                flips: routing.flips,
            });
        }
        let worst = report::worst(&results).map(|r| (r.id.clone(), r.delta));
        let fragility = report::fragility(&results, own_right);
        if job.progress {
            eprintln!(
                "driftgate: stress: {}: {} edit(s) applied, fragility {}",
                tool.name,
                results.iter().filter(|r| r.applied).count(),
                fragility.map_or("n/a".into(), |f| format!("{f:.2}"))
            );
        }
        tools_out.push(ToolStress {
            tool: tool.name.clone(),
            own_cases: own.len(),
            own_right_at_base: own_right,
            results,
            worst: worst.as_ref().map(|w| w.0.clone()),
            worst_delta: worst.and_then(|w| w.1),
            fragility,
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

/// A jargon table file: a YAML (or JSON) map, order kept.
pub fn load_jargon(path: &std::path::Path) -> Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let label = path.display().to_string();
    let v: serde_yaml::Value = serde_yaml::from_str(&text)
        .map_err(|e| Error::Usage(format!("{label}: invalid YAML/JSON: {e}")))?;
    let map = v
        .as_mapping()
        .ok_or_else(|| Error::Usage(format!("{label}: expected a map {{plain phrase: jargon}}")))?;
    let mut out = Vec::new();
    for (k, v) in map {
        match (k.as_str(), v.as_str()) {
            (Some(a), Some(b)) if !a.trim().is_empty() => {
                out.push((a.trim().to_string(), b.trim().to_string()))
            }
            _ => {
                return Err(Error::Usage(format!(
                    "{label}: every entry must map a non-empty phrase to a string (found {k:?}: {v:?})"
                )));
            }
        }
    }
    if out.is_empty() {
        return Err(Error::Usage(format!("{label}: the jargon table is empty")));
    }
    Ok(out)
}

/// Replay settings from flags and driftgate.toml, as `check` reads them, except that the semantic
/// router defaults to one request at a time; progress is the runner's own (one line per tool),
/// not one bar per replay.
pub(crate) fn replay_config(r: &RouterArgs, cfg: &Config, semantic: bool) -> Result<ReplayConfig> {
    let c = &cfg.router;
    let repeats = r.repeats.or(c.repeats).unwrap_or(1);
    if repeats == 0 {
        return Err(Error::Usage("--repeats must be at least 1".into()));
    }
    let seed = r.seed.or(c.seed).unwrap_or(0);
    Ok(ReplayConfig {
        system_prompt: if semantic {
            String::new()
        } else {
            ROUTER_SYSTEM_PROMPT.to_string()
        },
        tool_choice: r.tool_choice.or(c.tool_choice).unwrap_or(ToolChoice::Auto),
        sampling: Sampling {
            temperature: r.temperature.or(c.temperature).unwrap_or(0.0),
            seed: Some(seed),
            max_tokens: 256,
        },
        repeats,
        // The semantic router is local CPU work: parallel requests only embed the same new tool
        // text several times over (measured 2.6× the CPU on the filesystem corpus).
        concurrency: r
            .concurrency
            .or(c.concurrency)
            .unwrap_or(if semantic { 1 } else { 4 })
            .max(1),
        seed,
        retry: RetryPolicy {
            max_attempts: r.max_attempts.unwrap_or(4).max(1),
            ..RetryPolicy::default()
        },
        progress_bar: false,
        progress_lines: false,
    })
}

pub(crate) fn cache_dir(flag: &Option<PathBuf>, no_cache: bool, cfg: &Config) -> Option<PathBuf> {
    if no_cache {
        return None;
    }
    Some(
        flag.clone()
            .or(cfg.cache.dir.clone())
            .unwrap_or_else(|| PathBuf::from(".driftgate/cache")),
    )
}

pub(crate) fn embedder(e: &EmbedArgs, cache: &Option<PathBuf>) -> Result<Arc<dyn Embedder>> {
    let kind = e.kind()?;
    Ok(match cache {
        Some(dir) => Arc::new(kind.build_cached(dir.join("embed"))?),
        None => Arc::from(kind.build()?),
    })
}

/// Pick the perturbations named by `--perturb` (all when empty), in table order.
fn select(
    all: Vec<Box<dyn Perturbation>>,
    wanted: &[String],
) -> Result<Vec<Box<dyn Perturbation>>> {
    if let Some(bad) = wanted
        .iter()
        .find(|w| !perturb::BUILTIN_IDS.contains(&w.as_str()))
    {
        return Err(Error::Usage(format!(
            "--perturb {bad}: unknown perturbation (known: {})",
            perturb::BUILTIN_IDS.join(", ")
        )));
    }
    Ok(all
        .into_iter()
        .filter(|p| wanted.is_empty() || wanted.iter().any(|w| w == p.id()))
        .collect())
}

pub async fn run_cli(a: StressArgs) -> Result<i32> {
    let cfg = config::load(a.config.as_deref())?;
    let suite_path = a.suite.clone().or(cfg.suite.path.clone()).ok_or_else(|| {
        Error::Usage("stress needs --suite FILE (or suite.path in driftgate.toml)".into())
    })?;
    let suite = crate::suite::load(&suite_path)?;
    let spec = match (&a.tools, &a.server_cmd) {
        (_, Some(cmd)) => Spec::ServerCmd(cmd.clone()),
        (Some(t), None) => Spec::parse(t),
        (None, None) => return Err(Error::Usage("stress needs --tools PATH".into())),
    };
    let opts = a.live.options()?;
    let loaded = load::load(&spec, &opts).await?;
    if let Some(missing) = a.only.iter().find(|n| loaded.tools.get(n).is_none()) {
        return Err(Error::Usage(format!(
            "--tool {missing}: no such tool in {} (tools: {})",
            loaded.label,
            loaded.tools.names().join(", ")
        )));
    }
    let mut packs = Vec::new();
    for f in a.distractors.iter().cloned().chain(
        cfg.suite
            .distractors
            .iter()
            .map(|p| p.display().to_string()),
    ) {
        packs.extend(load::load(&Spec::parse(&f), &opts).await?.tools.tools);
    }
    let jargon = a.jargon.as_deref().map(load_jargon).transpose()?;
    let mut perturbations = select(perturb::builtin(jargon), &a.perturb)?;
    let cache_dir = cache_dir(&a.cache_dir, a.no_cache, &cfg);
    let mut notes = Vec::new();
    for problem in crate::suite::validate_against(&suite, &loaded.tools) {
        notes.push(format!("suite vs tools: {problem}"));
    }

    let mut paraphrase_info = None;
    let mut drafting = None;
    if a.llm_paraphrase > 0 {
        let llm = crate::llm::JsonLlm::from_router_args(&a.router, &cfg, "--llm-paraphrase")?
            .with_cache(cache_dir.clone());
        let drafted =
            paraphrase::draft(&llm, &loaded.tools, &a.only, a.llm_paraphrase, true).await?;
        perturbations.extend(
            drafted
                .into_iter()
                .map(|p| Box::new(p) as Box<dyn Perturbation>),
        );
        paraphrase_info = Some(report::ParaphraseInfo {
            model: llm.model().to_string(),
            host: llm.host().to_string(),
            prompt: paraphrase::PROMPT_FILE.into(),
            prompt_sha256: crate::tools::canon::hash_str(paraphrase::PROMPT),
            per_tool: a.llm_paraphrase,
        });
        drafting = Some(llm.stats());
    }
    if perturbations.is_empty() {
        return Err(Error::Usage("no perturbation selected".into()));
    }

    let embedder = embedder(&a.embed, &cache_dir)?;
    let router: Box<dyn Router> = crate::cli::build_router(&a.router, &cfg, Some(embedder))?;
    let semantic = router.kind() == "semantic";
    let rcfg = replay_config(&a.router, &cfg, semantic)?;
    let cache = RouteCache::new(cache_dir);
    let replayer = Replayer::new(router.as_ref(), &cache, &rcfg);
    let outcome = run(
        &replayer,
        StressJob {
            suite: &suite,
            tools: &loaded.tools,
            packs: &packs,
            perturbations: &perturbations,
            only: &a.only,
            progress: true,
        },
    )
    .await;
    let mut cost = outcome.cost;
    cost.drafting = drafting;
    let report = StressReport {
        schema_version: report::STRESS_SCHEMA_VERSION,
        driftgate_version: env!("CARGO_PKG_VERSION"),
        command: "stress",
        tools_source: loaded.label.clone(),
        suite: SuiteSummary {
            source: suite.source.clone(),
            sha256: suite.sha256.clone(),
            cases: suite.cases.len(),
        },
        router: RouterSummary {
            kind: router.kind().to_string(),
            model: router.model().to_string(),
            host: router.endpoint_host(),
            system_prompt: if semantic {
                "(none)".into()
            } else {
                ROUTER_SYSTEM_PROMPT_FILE.into()
            },
            system_prompt_sha256: crate::tools::canon::hash_str(&rcfg.system_prompt),
            repeats: rcfg.repeats,
            seed: rcfg.seed,
        },
        base: outcome.base,
        perturbations: perturbations
            .iter()
            .map(|p| PerturbationInfo {
                id: p.id().to_string(),
                summary: p.summary(),
            })
            .collect(),
        tools: outcome.tools,
        paraphrase: paraphrase_info,
        cost,
        errors: outcome.errors,
        notes,
    };
    let color = match a.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            a.output.is_none()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    };
    let text = match a.format {
        StressFormat::Terminal => terminal::render(&report, color),
        StressFormat::Json => json::render(&report),
        StressFormat::Markdown => markdown::render(&report),
    };
    if let Some(p) = &a.json_out {
        write_atomic(p, &json::render(&report))?;
    }
    match &a.output {
        Some(p) => write_atomic(p, &text)?,
        None => print!("{text}"),
    }
    Ok(if report.incomplete() {
        exit::INCOMPLETE
    } else {
        exit::PASS
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::{Answer, RouteError, RouteRequest, RouteResponse};
    use serde_json::json;

    /// Calls the offered tool whose description starts with the prompt's first word (first in
    /// offered order on a tie), else no call: a router whose answers follow descriptions only.
    struct FirstWord;

    #[async_trait::async_trait]
    impl Router for FirstWord {
        fn kind(&self) -> &str {
            "first-word"
        }
        fn model(&self) -> &str {
            "test"
        }
        fn endpoint_host(&self) -> String {
            "local".into()
        }
        async fn route(
            &self,
            req: &RouteRequest,
        ) -> std::result::Result<RouteResponse, RouteError> {
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
                Some(t) => Answer::Call {
                    name: t.name.clone(),
                    arguments: Some(json!({})),
                    raw_arguments: "{}".into(),
                },
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
        let cache = RouteCache::new(None);
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            r: RouterArgs,
        }
        let flags = <Flags as clap::Parser>::parse_from(["t", "--concurrency", "2"]);
        let cfg = replay_config(&flags.r, &Config::default(), false).unwrap();
        let router = FirstWord;
        let replayer = Replayer::new(&router, &cache, &cfg);
        let perturbations: Vec<Box<dyn Perturbation>> = vec![Box::new(Rename), Box::new(Blank)];
        let out = run(
            &replayer,
            StressJob {
                suite: &suite,
                tools: &tools,
                packs: &[],
                perturbations: &perturbations,
                only: &["read_text_file".into(), "write_file".into()],
                progress: false,
            },
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

    #[test]
    fn perturb_selection_rejects_unknown_ids() {
        let all = perturb::builtin(None);
        let e = select(all, &["tersr".into()]).err().unwrap().to_string();
        assert!(
            e.starts_with("--perturb tersr: unknown perturbation (known: terser, jargonier"),
            "{e}"
        );
        let some = select(
            perturb::builtin(None),
            &["inverted".into(), "terser".into()],
        )
        .unwrap();
        let ids: Vec<&str> = some.iter().map(|p| p.id()).collect();
        assert_eq!(ids, ["terser", "inverted"]);
    }

    #[test]
    fn jargon_files_keep_order_and_reject_bad_entries() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j.yaml");
        std::fs::write(&p, "file: artifact\nlist: enumerate\n").unwrap();
        assert_eq!(
            load_jargon(&p).unwrap(),
            [
                ("file".to_string(), "artifact".to_string()),
                ("list".to_string(), "enumerate".to_string())
            ]
        );
        std::fs::write(&p, "- a\n").unwrap();
        assert!(
            load_jargon(&p)
                .unwrap_err()
                .to_string()
                .contains("expected a map")
        );
        std::fs::write(&p, "file: [x]\n").unwrap();
        assert!(
            load_jargon(&p)
                .unwrap_err()
                .to_string()
                .contains("non-empty phrase to a string")
        );
    }
}
