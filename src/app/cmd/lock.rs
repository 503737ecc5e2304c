//! `driftgate lock`: write (or `--check`) a lockfile.

use std::path::PathBuf;

use clap::Args;

use crate::app::console::{Progress, Terminal};
use crate::app::flags::{LiveArgs, SourceArgs};
use crate::app::{output, settings};
use crate::console::Console;
use crate::error::{Error, Result, exit};
use crate::job;
use crate::report::escape;
use crate::source::{self, Spec};
use crate::tools::lock::LockMeta;

#[derive(Debug, Args)]
pub struct LockArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Where to write the lockfile (default: stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Do not write: compare with the existing lockfile at --output and exit 1 if it is stale.
    #[arg(long, requires = "output")]
    pub check: bool,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub async fn run(a: LockArgs) -> Result<i32> {
    let opts = settings::live(&a.live)?;
    let spec = a.source.spec()?;
    let mut meta = LockMeta::default();
    let loaded = match &spec {
        Spec::ServerCmd(c) => {
            let cap = source::live::list_tools_stdio(c, &opts).await?;
            meta.server_name = cap.server_name.clone();
            meta.server_version = cap.server_version.clone();
            source::from_capture(spec.label(), cap)?
        }
        Spec::ServerUrl(u) => {
            let cap = source::live::list_tools_http(u, &opts).await?;
            meta.server_name = cap.server_name.clone();
            meta.server_version = cap.server_version.clone();
            source::from_capture(spec.label(), cap)?
        }
        other => crate::app::sides::load_noted(other, &opts).await?,
    };
    let console = Terminal::new(Progress::Off);
    let text = crate::tools::lock::render(&loaded.tools, &meta);
    match (&a.output, a.check) {
        (Some(path), true) => {
            let old_text =
                crate::fs::read_text(path, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
                    .map_err(|e| Error::io(path, e))?;
            let label = path.display().to_string();
            let d = job::lock::stale(&old_text, &label, &loaded.tools)?;
            if d.tools.is_empty() {
                console.note(&format!(
                    "{label}: up to date ({} tools)",
                    loaded.tools.len()
                ));
                Ok(exit::PASS)
            } else {
                console.note(&format!(
                    "{label}: stale, {} tool(s) differ:",
                    d.tools.len()
                ));
                for (t, c) in d.changes() {
                    console.note(&format!(
                        "  {} {} {}",
                        c.severity.as_str(),
                        escape::cell(&t.name, 40),
                        c.rule
                    ));
                }
                Ok(exit::FAIL)
            }
        }
        (Some(path), false) => {
            output::write(path, &text)?;
            console.note(&format!(
                "wrote {} ({} tools)",
                path.display(),
                loaded.tools.len()
            ));
            Ok(exit::PASS)
        }
        (None, _) => {
            output::deliver(None, &text)?;
            Ok(exit::PASS)
        }
    }
}
