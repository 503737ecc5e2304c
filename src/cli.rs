//! Command-line interface: parse, dispatch, nothing else. Each command returns its exit code.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::diff::{self, Severity};
use crate::error::{Error, Result};
use crate::gate;
use crate::report::{self, OutputFormat, Report, Side, Thresholds};
use crate::tools::live::LiveOptions;
use crate::tools::load::{self, Loaded, Spec};
use crate::tools::lock::{self, LockMeta};

const EXIT_CODES: &str = "\
Exit codes:
  0  pass: no finding at or above --fail-on
  1  gate failed: findings at or above --fail-on
  2  usage or input error (bad flag, unreadable or malformed file)
  3  incomplete: a measurement could not be made (e.g. the server did not answer); never a pass";

#[derive(Debug, Parser)]
#[command(name = "driftgate", version, about = "CI gate for MCP tool-definition drift", after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare two tool sets and classify every change by the severity law.
    #[command(after_help = EXIT_CODES)]
    Diff(DiffArgs),
    /// Write a lockfile (canonical definitions + hashes) from a live server or a tools file.
    #[command(after_help = EXIT_CODES)]
    Lock(LockArgs),
    /// Embed stdin, one text per line; prints one JSON array of vectors (one per line).
    Embed(crate::embed::EmbedArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    Auto,
    Always,
    Never,
}

/// How to reach live servers.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// Seconds to wait for a live server to answer initialize + tools/list.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub timeout: u64,
    /// Extra environment for a server command: KEY=VALUE, or KEY to pass our value through.
    #[arg(long = "server-env", value_name = "KEY[=VALUE]")]
    pub server_env: Vec<String>,
    /// HTTP header for --server-url servers: "Name: value".
    #[arg(long = "server-header", value_name = "HEADER")]
    pub server_header: Vec<String>,
}

impl LiveArgs {
    pub fn options(&self) -> Result<LiveOptions> {
        let env = self
            .server_env
            .iter()
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => Ok((k.to_string(), v.to_string())),
                None => std::env::var(kv).map(|v| (kv.clone(), v)).map_err(|_| {
                    Error::Usage(format!("--server-env {kv}: not set in the environment"))
                }),
            })
            .collect::<Result<_>>()?;
        let headers = self
            .server_header
            .iter()
            .map(|h| {
                h.split_once(':')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| {
                        Error::Usage(format!("--server-header {h:?}: expected \"Name: value\""))
                    })
            })
            .collect::<Result<_>>()?;
        Ok(LiveOptions {
            timeout: Duration::from_secs(self.timeout),
            env,
            headers,
        })
    }
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "terminal")]
    pub format: OutputFormat,
    /// Write the rendered report to FILE instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the JSON report to FILE.
    #[arg(long = "json-out", value_name = "FILE")]
    pub json_out: Option<PathBuf>,
    /// Colour: auto honours NO_COLOR and colours only a terminal.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: Color,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Base tool set: a file, REV:PATH, or a lockfile. Omit with --tools to compare a file across refs.
    pub old: Option<String>,
    /// Head tool set: a file, REV:PATH, or a lockfile.
    pub new: Option<String>,
    /// Compare this file at --base-ref against --head-ref (default: the working tree).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["old", "new"])]
    pub tools: Option<String>,
    /// Base revision for --tools (default: the pull request's base commit).
    #[arg(long, value_name = "REV")]
    pub base_ref: Option<String>,
    /// Head revision for --tools (default: the working tree, i.e. HEAD plus local edits).
    #[arg(long, value_name = "REV")]
    pub head_ref: Option<String>,
    /// Base from a live server command instead of a file.
    #[arg(long, value_name = "CMD", conflicts_with = "base_server_url")]
    pub base_server_cmd: Option<String>,
    #[arg(long, value_name = "URL")]
    pub base_server_url: Option<String>,
    /// Head from a live server command instead of a file.
    #[arg(long, value_name = "CMD", conflicts_with = "head_server_url")]
    pub head_server_cmd: Option<String>,
    #[arg(long, value_name = "URL")]
    pub head_server_url: Option<String>,
    /// Fail (exit 1) on any change at or above this severity.
    #[arg(long, value_enum, default_value = "high")]
    pub fail_on: Severity,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub live: LiveArgs,
}

#[derive(Debug, Args)]
pub struct LockArgs {
    /// Tools file (any accepted shape) to lock; or use --server-cmd / --server-url.
    #[arg(required_unless_present_any = ["server_cmd", "server_url"], conflicts_with_all = ["server_cmd", "server_url"])]
    pub tools: Option<String>,
    /// Spawn this MCP server (stdio) and lock what it lists.
    #[arg(long, value_name = "CMD", conflicts_with = "server_url")]
    pub server_cmd: Option<String>,
    /// Lock a streamable-HTTP MCP server.
    #[arg(long, value_name = "URL")]
    pub server_url: Option<String>,
    /// Where to write the lockfile (default: stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Do not write: compare with the existing lockfile at --output and exit 1 if it is stale.
    #[arg(long, requires = "output")]
    pub check: bool,
    #[command(flatten)]
    pub live: LiveArgs,
}

pub async fn run(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Diff(a) => run_diff(a).await,
        Command::Lock(a) => run_lock(a).await,
        Command::Embed(a) => {
            let out = crate::embed::run_embed_cli(a.kind()?, std::io::stdin().lock()).await?;
            println!("{out}");
            Ok(crate::error::exit::PASS)
        }
    }
}

/// The pull request's base, as GitHub Actions describes it.
fn default_base_ref() -> Option<String> {
    if let Ok(path) = std::env::var("GITHUB_EVENT_PATH")
        && let Ok(text) = std::fs::read_to_string(path)
        && let Ok(ev) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(sha) = ev
            .pointer("/pull_request/base/sha")
            .and_then(|v| v.as_str())
    {
        return Some(sha.to_string());
    }
    std::env::var("GITHUB_BASE_REF")
        .ok()
        .filter(|s| !s.is_empty())
        .map(|b| format!("origin/{b}"))
}

fn side_spec(
    positional: Option<&String>,
    cmd: &Option<String>,
    url: &Option<String>,
    which: &str,
) -> Result<Spec> {
    match (positional, cmd, url) {
        (_, Some(c), _) => Ok(Spec::ServerCmd(c.clone())),
        (_, _, Some(u)) => Ok(Spec::ServerUrl(u.clone())),
        (Some(p), _, _) => Ok(Spec::parse(p)),
        _ => Err(Error::Usage(format!(
            "missing {which} tool set: give OLD NEW, --tools PATH, or --{which}-server-cmd"
        ))),
    }
}

fn diff_specs(a: &DiffArgs) -> Result<(Spec, Spec)> {
    if let Some(path) = &a.tools {
        let base_ref = a.base_ref.clone().or_else(default_base_ref).ok_or_else(|| {
            Error::Usage(
                "--tools needs a base revision: pass --base-ref REV (in a GitHub pull_request run it \
                 defaults to the PR's base commit)"
                    .into(),
            )
        })?;
        let base = Spec::GitRev {
            rev: base_ref,
            path: path.clone(),
        };
        let head = match &a.head_ref {
            Some(r) => Spec::GitRev {
                rev: r.clone(),
                path: path.clone(),
            },
            None => Spec::File(PathBuf::from(path)),
        };
        return Ok((base, head));
    }
    Ok((
        side_spec(
            a.old.as_ref(),
            &a.base_server_cmd,
            &a.base_server_url,
            "base",
        )?,
        side_spec(
            a.new.as_ref(),
            &a.head_server_cmd,
            &a.head_server_url,
            "head",
        )?,
    ))
}

async fn run_diff(a: DiffArgs) -> Result<i32> {
    let (base_spec, head_spec) = diff_specs(&a)?;
    let opts = a.live.options()?;
    let base = load::load(&base_spec, &opts).await?;
    let head = load::load(&head_spec, &opts).await?;
    let report = diff_report(&base, &head, a.fail_on);
    emit(&report, &a.out)?;
    Ok(report.verdict.exit_code())
}

pub fn diff_report(base: &Loaded, head: &Loaded, fail_on: Severity) -> Report {
    let d = diff::diff(&base.tools, &head.tools);
    let verdict = gate::diff_verdict(&d, fail_on);
    Report {
        schema_version: report::SCHEMA_VERSION,
        driftgate_version: env!("CARGO_PKG_VERSION"),
        command: "diff",
        verdict,
        base: Side::of(base),
        head: Side::of(head),
        thresholds: Thresholds { fail_on },
        diff: d,
        notes: Vec::new(),
    }
}

fn use_color(c: Color, to_file: bool) -> bool {
    match c {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            !to_file
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

fn emit(report: &Report, out: &OutputArgs) -> Result<()> {
    let color = use_color(out.color, out.output.is_some());
    let text = report::render(report, out.format, color);
    if let Some(path) = &out.json_out {
        write_atomic(path, &report::render(report, OutputFormat::Json, false))?;
    }
    match &out.output {
        Some(path) => write_atomic(path, &text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// Write via a temporary file in the same directory and rename, so readers never see half a file.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

async fn run_lock(a: LockArgs) -> Result<i32> {
    let opts = a.live.options()?;
    let spec = side_spec(a.tools.as_ref(), &a.server_cmd, &a.server_url, "")?;
    let mut meta = LockMeta::default();
    let loaded = match &spec {
        Spec::ServerCmd(c) => {
            let cap = crate::tools::live::list_tools_stdio(c, &opts).await?;
            meta.server_name = cap.server_name.clone();
            meta.server_version = cap.server_version.clone();
            load::from_capture(spec.label(), cap)?
        }
        Spec::ServerUrl(u) => {
            let cap = crate::tools::live::list_tools_http(u, &opts).await?;
            meta.server_name = cap.server_name.clone();
            meta.server_version = cap.server_version.clone();
            load::from_capture(spec.label(), cap)?
        }
        other => load::load(other, &opts).await?,
    };
    let text = lock::render(&loaded.tools, &meta);
    match (&a.output, a.check) {
        (Some(path), true) => {
            let old_text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
            let label = path.display().to_string();
            let (old, _) = load::parse_text(&old_text, &label)?;
            let d = diff::diff(&old, &loaded.tools);
            if d.tools.is_empty() {
                eprintln!("{label}: up to date ({} tools)", loaded.tools.len());
                Ok(crate::error::exit::PASS)
            } else {
                eprintln!("{label}: stale, {} tool(s) differ:", d.tools.len());
                for (t, c) in d.changes() {
                    eprintln!(
                        "  {} {} {}",
                        c.severity.as_str(),
                        report::escape::cell(&t.name, 40),
                        c.rule
                    );
                }
                Ok(crate::error::exit::FAIL)
            }
        }
        (Some(path), false) => {
            write_atomic(path, &text)?;
            eprintln!("wrote {} ({} tools)", path.display(), loaded.tools.len());
            Ok(crate::error::exit::PASS)
        }
        (None, _) => {
            print!("{text}");
            Ok(crate::error::exit::PASS)
        }
    }
}
