//! The evidence bench: driftgate measured on public data nobody on this project wrote.
//!
//!   cargo run --release --example evidence -- --driftgate BIN --external DIR --corpus DIR \
//!       [--bfcl DIR] [--atr DIR] [--cisco DIR] [--subschema PYTHON] [--out docs/evidence.md] [--limit N] [--only SOURCE]
//!       [--cache DIR] [--keep]
//!
//! `bench/evidence/run` fetches what comes from the registries (BFCL), builds the release binary
//! and calls this. Writes the tables to `--out` and one JSONL per source beside it
//! (`docs/evidence/<source>.jsonl`).

mod sources;

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use sources::{Ctx, Section};

struct Args {
    driftgate: PathBuf,
    external: PathBuf,
    corpus: PathBuf,
    bfcl: Option<PathBuf>,
    atr: Option<PathBuf>,
    cisco: Option<PathBuf>,
    subschema: Option<PathBuf>,
    out: PathBuf,
    limit: Option<usize>,
    /// Only the sources whose name contains this (a partial run, for working on one source).
    only: Option<String>,
    commit: String,
    /// Embeddings memoised here across runs.
    cache: Option<PathBuf>,
    /// Leave the scratch directory (every side and suite written) for re-running one case.
    keep: bool,
}

fn args() -> Result<Args> {
    let mut a = Args {
        driftgate: "target/release/driftgate".into(),
        external: "../shared/external".into(),
        corpus: "../shared/corpus".into(),
        bfcl: None,
        atr: None,
        cisco: None,
        subschema: None,
        out: "docs/evidence.md".into(),
        limit: None,
        only: None,
        commit: String::from("unknown"),
        cache: None,
        keep: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--driftgate" => a.driftgate = value()?.into(),
            "--external" => a.external = value()?.into(),
            "--corpus" => a.corpus = value()?.into(),
            "--bfcl" => a.bfcl = Some(value()?.into()),
            "--atr" => a.atr = Some(value()?.into()),
            "--cisco" => a.cisco = Some(value()?.into()),
            "--subschema" => a.subschema = Some(value()?.into()),
            "--out" => a.out = value()?.into(),
            "--limit" => a.limit = Some(value()?.parse()?),
            "--commit" => a.commit = value()?,
            "--only" => a.only = Some(value()?),
            "--cache" => a.cache = Some(value()?.into()),
            "--keep" => a.keep = true,
            other => bail!("unknown flag {other}"),
        }
    }
    Ok(a)
}

fn main() -> Result<()> {
    let a = args()?;
    let work = std::env::temp_dir().join(format!("driftgate-evidence-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let ctx = Ctx {
        driftgate: std::fs::canonicalize(&a.driftgate)
            .with_context(|| format!("{}", a.driftgate.display()))?,
        external: std::fs::canonicalize(&a.external)?,
        corpus: std::fs::canonicalize(&a.corpus)?,
        bfcl: a.bfcl.map(std::fs::canonicalize).transpose()?,
        atr: a.atr.map(std::fs::canonicalize).transpose()?,
        cisco: a.cisco.map(std::fs::canonicalize).transpose()?,
        subschema: a.subschema,
        work: work.clone(),
        cache: a.cache,
        limit: a.limit,
    };
    let started = std::time::Instant::now();
    let mut sections: Vec<Section> = Vec::new();
    for (name, f) in sources::ALL {
        if a.only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
            continue;
        }
        let t = std::time::Instant::now();
        eprintln!("evidence: {name} …");
        let got = f(&ctx).with_context(|| format!("source {name}"))?;
        for s in &got {
            for (rate, _) in &s.rates {
                eprintln!("evidence:   {} {rate}: {}", s.id, s.rate(rate).cell());
            }
        }
        sections.extend(got);
        eprintln!("evidence: {name} done in {:.1}s", t.elapsed().as_secs_f64());
    }
    let version = std::process::Command::new(&ctx.driftgate)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let doc = sources::document(&sections, &a.commit, &version, started.elapsed());
    std::fs::write(&a.out, doc)?;
    let raw = a.out.with_extension("");
    std::fs::create_dir_all(&raw)?;
    for s in &sections {
        let mut text = String::new();
        for row in &s.rows {
            text.push_str(&serde_json::to_string(row)?);
            text.push('\n');
        }
        std::fs::write(raw.join(format!("{}.jsonl", s.id)), text)?;
    }
    if a.keep {
        eprintln!("evidence: kept {}", work.display());
    } else {
        std::fs::remove_dir_all(&work).ok();
    }
    eprintln!(
        "evidence: wrote {} and {}/ in {:.0}s",
        a.out.display(),
        raw.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
