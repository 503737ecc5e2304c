//! `driftgate stress`.

use std::path::PathBuf;

use clap::Args;

use crate::app::console::{Progress, Terminal};
use crate::app::flags::{LiveArgs, ModelArgs, OutputArgs};
use crate::app::settings::RouterSettings;
use crate::app::{config, output, settings, sides};
use crate::choice::Choice;
use crate::error::{Error, Result, exit};
use crate::job;
use crate::job::stress::{StressInputs, StressPlan};
use crate::report::render::Options;
use crate::report::stress::ParaphraseInfo;
use crate::route::Router;
use crate::source::Spec;
use crate::stress;
use crate::stress::perturb::{self, Perturbation};

#[derive(Debug, Args)]
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
    pub model: ModelArgs,
    /// Output: terminal, json, markdown (a fragility table for docs and PR comments) or html.
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub async fn run(a: StressArgs) -> Result<i32> {
    if !a.out.format.renderer().renders_stress() {
        return Err(Error::Usage(format!(
            "--format {}: the stress report renders as terminal, json, markdown or html",
            a.out.format.name()
        )));
    }
    let cfg = config::load(a.model.config.as_deref())?;
    let suite_path = a.suite.clone().or(cfg.suite.path.clone()).ok_or_else(|| {
        Error::Usage("stress needs --suite FILE (or suite.path in driftgate.toml)".into())
    })?;
    let suite = crate::suite::load(&suite_path)?;
    let spec = match (&a.tools, &a.server_cmd) {
        (_, Some(cmd)) => Spec::ServerCmd(cmd.clone()),
        (Some(t), None) => Spec::parse(t),
        (None, None) => return Err(Error::Usage("stress needs --tools PATH".into())),
    };
    let opts = settings::live(&a.live)?;
    let loaded = sides::load_noted(&spec, &opts).await?;
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
        packs.extend(
            sides::load_noted(&Spec::parse(&f), &opts)
                .await?
                .tools
                .tools,
        );
    }
    let jargon = a.jargon.as_deref().map(stress::load_jargon).transpose()?;
    let mut perturbations = stress::select(perturb::builtin(jargon), &a.perturb)?;
    let cache = settings::cache_noted(&a.model.cache, &cfg);
    let r = RouterSettings::resolve(&a.model.router, &cfg)?;
    let console = Terminal::new(Progress::Off);

    let mut paraphrase = None;
    if a.llm_paraphrase > 0 {
        let llm = r.drafter("--llm-paraphrase", &cache)?;
        let drafted =
            stress::paraphrase::draft(&llm, &loaded.tools, &a.only, a.llm_paraphrase, &console)
                .await?;
        perturbations.extend(
            drafted
                .into_iter()
                .map(|p| Box::new(p) as Box<dyn Perturbation>),
        );
        paraphrase = Some((
            ParaphraseInfo {
                model: llm.model().to_string(),
                host: llm.host().to_string(),
                prompt: stress::paraphrase::PROMPT_FILE.into(),
                prompt_sha256: crate::canon::hash_str(stress::paraphrase::PROMPT),
                per_tool: a.llm_paraphrase,
            },
            llm.stats(),
        ));
    }
    if perturbations.is_empty() {
        return Err(Error::Usage("no perturbation selected".into()));
    }

    let embedder = settings::embedder(&a.model.embed, &cache)?;
    let router: Box<dyn Router> = r.router(Some(embedder))?;
    let rcfg = r.replay(settings::Use::Stress);
    let report = job::stress::stress(
        StressInputs {
            loaded: &loaded,
            plan: StressPlan {
                suite: &suite,
                packs: &packs,
                perturbations: &perturbations,
                only: &a.only,
            },
            router: router.as_ref(),
            cache: &cache,
            config: &rcfg,
            paraphrase,
        },
        &console,
    )
    .await;
    let opts = Options {
        color: output::use_color(a.out.color, a.out.output.is_some()),
    };
    let text = a
        .out
        .format
        .renderer()
        .stress(&report, &opts)
        .expect("checked before the run: this format renders the stress report");
    if let Some(p) = &a.out.json_out {
        output::write(p, &crate::report::render::json::stress(&report))?;
    }
    if let Some(p) = &a.out.html_out {
        output::write(p, &crate::report::render::html::stress::render(&report))?;
    }
    output::deliver(a.out.output.as_deref(), &text)?;
    Ok(if report.incomplete() {
        exit::INCOMPLETE
    } else {
        exit::PASS
    })
}
