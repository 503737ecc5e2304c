//! `driftgate fix`: `check`'s flags, then rewrites of each tool the check failed on routing or
//! call accuracy, verified by replay on held-out cases.

use clap::Args;

use crate::app::console::{Progress, Terminal};
use crate::app::{output, settings};
use crate::choice::Choice;
use crate::error::{Error, Result};
use crate::report::render::{Format, Options};

use super::check::{self, CheckArgs};

pub const EXIT_CODES: &str = "\
Exit codes:
  0  the check passed (nothing to fix), or head with the offered rewrites applied passes the gate
     on the held-out cases and on the whole suite
  1  the check failed and no offered rewrite makes head pass (or none was offered)
  2  usage or input error (bad flag, unreadable or malformed file)
  3  incomplete: a measurement could not be made (the check's or a rewrite's); never a pass
  4  the check was inconclusive: nothing to rewrite against";

#[derive(Debug, Args)]
pub struct FixArgs {
    /// Also have the router's model (--router openai|anthropic --model M) draft N rewrites per
    /// failing tool from the same evidence (prompt in prompts/fix.v1.md; JSON, validated: every
    /// sentence head added kept word for word), verified by replay like the offline ones.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub llm: u32,
    #[command(flatten)]
    pub check: CheckArgs,
}

/// The check flags `fix` cannot honour yet, each with why.
fn refuse(k: &CheckArgs) -> Result<()> {
    let no = |flag: &str, why: &str| Err(Error::Usage(format!("fix {flag}: {why}")));
    if k.shard.is_some() {
        return no(
            "--shard",
            "fix replays every rewrite on the whole suite; run it unsharded",
        );
    }
    if k.batch {
        return no(
            "--batch",
            "the rewrites are drafted from the check's answers, so they cannot wait for a batch",
        );
    }
    if k.aliases.is_some() {
        return no("--aliases", "write the alias map with `check --aliases`");
    }
    let f = k.c.out.format;
    if !matches!(f, Format::Terminal | Format::Json) {
        return no(
            &format!("--format {}", f.name()),
            "the fix report renders as terminal or json",
        );
    }
    Ok(())
}

pub async fn run(a: FixArgs) -> Result<i32> {
    let k = a.check;
    refuse(&k)?;
    let (inputs, policy, cache) = check::prepare_with_suite(&k).await?;
    let llm = match a.llm {
        0 => None,
        _ => {
            let r = crate::app::settings::RouterSettings::resolve(&k.router, &policy.config)?;
            if r.kind().is_proxy() {
                return Err(Error::Usage(
                    "fix --llm needs a model to draft with: --router openai|anthropic --model M"
                        .into(),
                ));
            }
            Some(r.drafter("fix --llm", &cache)?)
        }
    };
    if k.plan {
        let plan = crate::job::fix::plan(&inputs, a.llm)?;
        let text = match k.c.out.format {
            Format::Json => serde_json::to_string_pretty(&plan).expect("a plan serialises") + "\n",
            _ => crate::report::render::terminal::plan::render(&plan),
        };
        output::deliver(k.c.out.output.as_deref(), &text)?;
        return Ok(crate::error::exit::PASS);
    }
    let console = Terminal::new(Progress::detect());
    let head = inputs.head.clone();
    let (_, report) =
        crate::job::fix::run(inputs, llm.as_ref().map(|l| (l, a.llm)), &console).await?;
    let out = &k.c.out;
    let opts = Options {
        color: output::use_color(out.color, out.output.is_some()),
    };
    let text = out
        .format
        .renderer()
        .fix(&report, &opts)
        .expect("checked before the run: this format renders the fix report");
    if let Some(p) = &out.json_out {
        output::write(p, &crate::report::render::json::fix(&report))?;
    }
    output::deliver(out.output.as_deref(), &text)?;
    let actions = settings::actions();
    let publish = settings::publish(&k.c.github, &actions);
    crate::github::suggest::post(&report, &head, &publish, &actions, &console).await;
    Ok(report.exit_code())
}
