//! The evidence bench's sources: each turns one public data set (read from `../shared/external`
//! and the registries, never copied into the tree) into driftgate inputs, runs the driftgate
//! binary on them, and scores the verdicts against the source's own labels.
//!
//! Shared by `bench/evidence/main.rs` (the full run that writes docs/evidence.md) and the
//! hermetic slice in `tests/it/evidence.rs` (the same code on fewer cases, with floors).

pub mod azure;
pub mod bfcl;
pub mod edits;
pub mod fixes;
pub mod hand;
pub mod history;
pub mod history_check;
pub mod injection;
pub mod mcptoolbench;
pub mod probe;
pub mod replay;
pub mod schema_pairs;
pub mod sensitivity;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result};
use serde_json::Value;

/// Where the data and the binary are, and where runs write their inputs.
#[derive(Clone)]
pub struct Ctx {
    /// The driftgate binary under test.
    pub driftgate: PathBuf,
    /// `../shared/external`.
    pub external: PathBuf,
    /// `../shared/corpus`.
    pub corpus: PathBuf,
    /// BFCL's data directory (`bfcl_eval/data` of the `bfcl-eval` wheel), when fetched.
    pub bfcl: Option<PathBuf>,
    /// ATR's package directory (`agent-threat-rules` on npm: `rules/<category>/*.yaml`), when
    /// fetched.
    pub atr: Option<PathBuf>,
    /// Cisco mcp-scanner's YARA rules and a Python with `yara-python` (`rules/*.yara`,
    /// `venv/bin/python`), when fetched.
    pub cisco: Option<PathBuf>,
    /// A Python with IBM's `jsonsubschema` (PyPI), when fetched: a third schema checker.
    pub subschema: Option<PathBuf>,
    /// Scratch directory: converted inputs, the runs' working directory and cache.
    pub work: PathBuf,
    /// Where embeddings are memoised across runs (`None`: within the run only).
    pub cache: Option<PathBuf>,
    /// At most this many items per source (the hermetic slice); `None` = everything.
    pub limit: Option<usize>,
}

/// What one driftgate run returned.
pub struct Run {
    pub exit: i32,
    /// The JSON report, when the run wrote one.
    pub report: Option<Value>,
    pub stderr: String,
}

impl Run {
    pub fn status(&self) -> &str {
        self.report
            .as_ref()
            .and_then(|r| r["verdict"]["status"].as_str())
            .unwrap_or("error")
    }
}

/// A fixed cache key: runs of one bench share the embedding cache (the key is the bench's, not a
/// secret; nothing a pull request wrote is read).
const BENCH_KEY: &str = "driftgate-evidence-bench-cache-key-0000000000000000";

impl Ctx {
    /// Run driftgate with `args` in an empty directory under a scrubbed environment (no config
    /// file, no GitHub mode, no credentials), `--format json` appended.
    pub fn driftgate(&self, args: &[&str]) -> Result<Run> {
        let mut all = args.to_vec();
        all.extend(["--format", "json", "--color", "never"]);
        self.driftgate_quiet(&all)
    }

    /// The same without `--format json`, for a command that writes no report (`suite init`).
    pub fn driftgate_quiet(&self, args: &[&str]) -> Result<Run> {
        let cwd = self.work.join("cwd");
        let home = self.work.join("home");
        std::fs::create_dir_all(&cwd)?;
        std::fs::create_dir_all(&home)?;
        let out = Command::new(&self.driftgate)
            .args(args)
            .env_clear()
            .env("HOME", &home)
            .env("DRIFTGATE_KEY", BENCH_KEY)
            .current_dir(&cwd)
            .output()
            .with_context(|| format!("running {}", self.driftgate.display()))?;
        let report = serde_json::from_slice(&out.stdout).ok();
        Ok(Run {
            exit: out.status.code().unwrap_or(-1),
            report,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// A converted input, written under the scratch directory.
    pub fn write(&self, rel: &str, value: &impl serde::Serialize) -> Result<PathBuf> {
        let path = self.work.join(rel);
        std::fs::create_dir_all(path.parent().expect("a relative file name"))?;
        std::fs::write(&path, serde_json::to_vec_pretty(value)?)?;
        Ok(path)
    }

    /// The hermetic context: `shared` holds `external/` and `corpus/`, nothing fetched from a
    /// registry, no embedding cache beyond the run. The tests' constructor (the full run sets
    /// every field from its flags).
    #[allow(dead_code)]
    pub fn hermetic(
        driftgate: PathBuf,
        shared: &Path,
        work: PathBuf,
        limit: Option<usize>,
    ) -> Self {
        Ctx {
            driftgate,
            external: shared.join("external"),
            corpus: shared.join("corpus"),
            bfcl: None,
            atr: None,
            cisco: None,
            subschema: None,
            work,
            cache: None,
            limit,
        }
    }

    pub fn take<T>(&self, items: Vec<T>) -> Vec<T> {
        match self.limit {
            Some(n) => items.into_iter().take(n).collect(),
            None => items,
        }
    }
}

/// The renames a report's diff paired: (base name, head name).
pub fn renames(report: &Value) -> Vec<(String, String)> {
    report["diff"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["status"] == "renamed")
        .map(|t| {
            (
                t["base_name"].as_str().unwrap_or("").to_string(),
                t["head_name"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Run a helper script over JSON lines: `program args… < name.jsonl`, each input line an object
/// with `"id"` its index; one JSON line back per input, returned in input order. Fails when the
/// script fails or leaves an input unanswered.
pub fn run_lines(
    ctx: &Ctx,
    name: &str,
    program: &Path,
    args: &[&Path],
    inputs: &[Value],
) -> Result<Vec<Value>> {
    use std::io::Write as _;
    let input = ctx.work.join(format!("{name}.jsonl"));
    let mut text = String::new();
    for v in inputs {
        text.push_str(&v.to_string());
        text.push('\n');
    }
    std::fs::write(&input, text)?;
    let out = Command::new(program)
        .args(args)
        .stdin(std::fs::File::open(&input)?)
        .output()
        .with_context(|| format!("running {}", program.display()))?;
    if !out.status.success() {
        std::io::stderr().write_all(&out.stderr).ok();
        anyhow::bail!("{} {:?} failed ({})", program.display(), args, out.status);
    }
    let mut answers = vec![None; inputs.len()];
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{name}: an output line of {}", program.display()))?;
        let i = v["id"].as_u64().context("id")? as usize;
        *answers.get_mut(i).context("an id of the input")? = Some(v);
    }
    let answered = answers.iter().filter(|a| a.is_some()).count();
    anyhow::ensure!(
        answered == inputs.len(),
        "{name}: {} answered {answered} of {} inputs",
        program.display(),
        inputs.len()
    );
    Ok(answers.into_iter().flatten().collect())
}

pub fn read_json(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// JSON as JSON5-ish files write it: trailing commas before `}`/`]` are dropped (Confluent's test
/// resources have them). Strings are respected.
pub fn read_lenient_json(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = String::with_capacity(text.len());
    let (mut in_str, mut escaped) = (false, false);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if in_str {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    serde_json::from_str(&out).with_context(|| format!("parsing {}", path.display()))
}

/// A count out of a total with its Wilson 95% interval, printed the same way in every table.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Rate {
    pub hits: usize,
    pub n: usize,
}

impl Rate {
    pub fn new(hits: usize, n: usize) -> Self {
        Rate { hits, n }
    }
    pub fn value(self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.hits as f64 / self.n as f64
        }
    }
    pub fn cell(self) -> String {
        if self.n == 0 {
            return "0/0 (—)".into();
        }
        let ci = driftgate::stats::wilson(self.hits as f64, self.n as f64, 1.959964);
        format!(
            "{}/{} = {:.1}% [{:.1}, {:.1}]",
            self.hits,
            self.n,
            100.0 * self.value(),
            100.0 * ci.lo,
            100.0 * ci.hi
        )
    }
}

/// One source's contribution to docs/evidence.md and its raw JSONL.
pub struct Section {
    /// File stem of the JSONL beside the doc.
    pub id: &'static str,
    pub markdown: String,
    pub rows: Vec<Value>,
    /// The headline agreement rates the hermetic slice pins floors on, by name.
    pub rates: Vec<(&'static str, Rate)>,
}

impl Section {
    pub fn rate(&self, name: &str) -> Rate {
        self.rates
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| *r)
            .unwrap_or_else(|| panic!("no rate {name:?} in section {}", self.id))
    }
}

/// A Markdown table cell: pipes and newlines would break the row; backticks are kept.
pub fn cell(text: &str) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line.replace('|', "\\|")
}

/// Clip to `n` characters for a table cell.
pub fn clip(text: &str, n: usize) -> String {
    let t = cell(text);
    if t.chars().count() <= n {
        t
    } else {
        format!("{}…", t.chars().take(n).collect::<String>())
    }
}

/// A source: its name and what it contributes.
pub type Source = fn(&Ctx) -> Result<Vec<Section>>;

/// Every source, in the order the document lists them.
pub const ALL: &[(&str, Source)] = &[
    ("schema pairs", schema_pairs::sections),
    ("github-mcp-server history", history::sections),
    (
        "github-mcp-server history, checked",
        history_check::sections,
    ),
    ("MCPToolBench++", mcptoolbench::sections),
    ("Azure MCP", azure::sections),
    ("BFCL", bfcl::sections),
    ("edit benchmark", edits::sections),
    ("hand-written edits", hand::sections),
    ("rewrites verified by replay", fixes::sections),
    ("router sensitivity", sensitivity::sections),
    ("injection scan", injection::sections),
];

/// One judged disagreement, kept as data in `bench/evidence/judgements.toml`: whose call was
/// wrong (`ours`, `theirs`) or why the difference is `deliberate`, in one line. `id = "*"` judges
/// a class: every disagreement of the source whose other checker's change list contains `theirs`
/// and whose own rules contain `ours` (both substrings, both optional).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Judgement {
    pub source: String,
    pub id: String,
    pub call: String,
    pub why: String,
    #[serde(default)]
    pub theirs: Option<String>,
    #[serde(default)]
    pub ours: Option<String>,
    /// Written before the rule it now judges existed (the github-mcp-server commits the cosine
    /// floor failed, judged before the meaning shifts were built): a blind label.
    #[serde(default)]
    pub blind: bool,
}

pub fn judgements() -> Vec<Judgement> {
    #[derive(serde::Deserialize)]
    struct File {
        judgement: Vec<Judgement>,
    }
    let file: File = toml::from_str(include_str!("../judgements.toml"))
        .expect("bench/evidence/judgements.toml is valid");
    file.judgement
}

/// The judgement of one disagreement: its own entry first, else the first class that matches.
pub fn judged(
    all: &[Judgement],
    source: &str,
    id: &str,
    theirs: &str,
    ours: &str,
) -> Option<Judgement> {
    judged_by(all, source, id, |j| {
        j.theirs.as_deref().is_none_or(|t| theirs.contains(t))
            && j.ours.as_deref().is_none_or(|o| ours.contains(o))
    })
    .cloned()
}

/// `source`'s entry for `id`, else its first class entry (`id = "*"`) that `class` accepts.
pub fn judged_by<'j>(
    all: &'j [Judgement],
    source: &str,
    id: &str,
    class: impl Fn(&Judgement) -> bool,
) -> Option<&'j Judgement> {
    let mine = all.iter().find(|j| j.source == source && j.id == id);
    mine.or_else(|| {
        all.iter()
            .find(|j| j.source == source && j.id == "*" && class(j))
    })
}

/// docs/evidence.md: provenance first, then each source's tables.
pub fn document(
    sections: &[Section],
    commit: &str,
    version: &str,
    took: std::time::Duration,
) -> String {
    let mut d = String::from(
        "<!-- Generated by bench/evidence/run; do not edit by hand. -->\n\
         # Evidence: driftgate on data nobody here wrote\n\n",
    );
    d.push_str(&format!(
        "Run on {} at commit `{commit}` ({version}), default offline settings (semantic router, \
         bundled MiniLM embedder), in {:.0} s. Intervals are Wilson 95%. Raw rows: \
         `docs/evidence/<source>.jsonl`. Data provenance and licences: `../shared/external/README.md` \
         (never copied into this repository).\n\n",
        today(),
        took.as_secs_f64()
    ));
    d.push_str(include_str!("../preamble.md"));
    for s in sections {
        d.push_str(&s.markdown);
    }
    d
}

fn today() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}
