//! `driftgate embed`: one text per stdin line → one JSON array of vectors.

use std::io::BufRead;

use crate::app::args::EmbedArgs;
use crate::app::settings;
use crate::error::{Error, Result, exit};

pub async fn run(a: EmbedArgs) -> Result<i32> {
    let texts = std::io::stdin()
        .lock()
        .lines()
        .collect::<std::io::Result<Vec<String>>>()
        .map_err(|e| Error::io("<stdin>", e))?;
    let embedder = settings::embedder_kind(&a)?.build()?;
    let vectors = embedder.embed(&texts).await?;
    let rows: Vec<Vec<f32>> = vectors.outer_iter().map(|r| r.to_vec()).collect();
    let json = serde_json::to_string(&rows).expect("f32 vectors always serialise");
    crate::app::output::write(std::path::Path::new("-"), &(json + "\n"))?;
    Ok(exit::PASS)
}
