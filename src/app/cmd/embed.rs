//! `driftgate embed`: one text per stdin line (or one JSON string per line) → one JSON array of
//! vectors.

use std::io::BufRead;

use crate::app::flags::EmbedArgs;

#[derive(Debug, Clone, clap::Args)]
pub struct EmbedCmdArgs {
    #[command(flatten)]
    pub embedder: EmbedArgs,
    /// Read each stdin line as one JSON string, so a text may hold line breaks.
    #[arg(long)]
    pub json_lines: bool,
}
use crate::app::settings;
use crate::error::{Error, Result, exit};

pub async fn run(a: EmbedCmdArgs) -> Result<i32> {
    let texts = std::io::stdin()
        .lock()
        .lines()
        .collect::<std::io::Result<Vec<String>>>()
        .map_err(|e| Error::io("<stdin>", e))?;
    let texts = if a.json_lines {
        texts
            .iter()
            .enumerate()
            .map(|(i, line)| {
                serde_json::from_str::<String>(line).map_err(|e| {
                    Error::Usage(format!(
                        "<stdin>: line {}: expected one JSON string (--json-lines): {e}",
                        i + 1
                    ))
                })
            })
            .collect::<Result<Vec<String>>>()?
    } else {
        texts
    };
    let embedder = settings::embedder_kind(&a.embedder)?.build()?;
    let vectors = embedder.embed(&texts).await?;
    let rows: Vec<Vec<f32>> = vectors.outer_iter().map(|r| r.to_vec()).collect();
    let json = serde_json::to_string(&rows).expect("f32 vectors always serialise");
    crate::app::output::write(std::path::Path::new("-"), &(json + "\n"))?;
    Ok(exit::PASS)
}
