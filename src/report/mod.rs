//! One `Report`, built once, rendered many ways (terminal, JSON, Markdown, annotations, SARIF),
//! like oasdiff's formatters. The JSON form reads back into the same model, so a later job (the
//! fork-PR commenter) renders exactly what the gate measured.

pub mod escape;
pub mod fix;
pub mod lint;
pub mod render;
pub mod stress;
pub mod view;
pub mod watch;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cosine::Drift;
use crate::diff::Diff;
use crate::gate::{CheckThresholds, Verdict};
use crate::replay::Routing;
use crate::route::RouterInfo;
use crate::source::{Format, Loaded};
use crate::suite::SuiteInfo;

/// Bumped only on incompatible changes; additions keep the version.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Side {
    pub source: String,
    pub format: Format,
    pub tool_count: usize,
    /// File path in the repository, for annotations; absent for live servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based line of each tool's `"name"` in `file`, so annotations and SARIF point at the
    /// definition.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lines: BTreeMap<String, usize>,
}

impl Side {
    pub fn of(l: &Loaded) -> Side {
        Side {
            source: l.label.clone(),
            format: l.format,
            tool_count: l.tools.len(),
            file: l.file.clone(),
            lines: {
                let all = l.lines();
                l.tools
                    .tools
                    .iter()
                    .filter_map(|t| Some((t.name.clone(), *all.get(&t.name)?)))
                    .collect()
            },
        }
    }
}

/// The subcommand that made a report (`lint` writes a document of its own,
/// `docs/lint.schema.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Command {
    Diff,
    Check,
}

impl Command {
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Diff => "diff",
            Command::Check => "check",
        }
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The version written into every report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where the report was made, when it was made in GitHub Actions. The fork-PR commenter reads
/// it back to find the pull request and the sticky comment's marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GithubContext {
    /// "owner/name" of the base repository.
    pub repository: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_sha: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_sha: Option<String>,
    /// The head branch lives in another repository (a fork): the token cannot comment.
    pub fork: bool,
    pub workflow: String,
    pub job: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_url: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    /// The driftgate version that wrote the report.
    pub driftgate_version: String,
    pub command: Command,
    pub verdict: Verdict,
    pub base: Side,
    pub head: Side,
    pub thresholds: CheckThresholds,
    pub diff: Diff,
    /// Meaning drift of changed tools (absent with `--no-embed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    /// Paired routing replay (`check` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub router: Option<RouterInfo>,
    /// Loud notes for the reader (e.g. the suite changed with the tools).
    pub notes: Vec<String>,
    /// Static analysis: every finding for `lint`; what the PR introduced or fixed for `check`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lint: Option<crate::lint::LintDelta>,
    /// The injection scan: what head introduced over base (`check`, `diff`), or every finding
    /// (`lint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan: Option<crate::injection::ScanSection>,
    /// Set when the report was made in GitHub Actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<GithubContext>,
    /// A partial report of `check --shard i/n`: its raw runs, for `driftgate merge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::replay::shard::ShardPart>,
    /// Where the gate's own rules came from in a pull request, and what the PR changed about
    /// them (rendered first: a PR that rewrites its grader is the first thing to read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyInfo>,
    /// `check --suggest`: the rewrites `fix` offered for the tools that failed, each with where
    /// it was suggested on the pull request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggested>,
}

/// One offered rewrite, as the check's report carries it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Suggested {
    pub tool: String,
    /// `description`, or a parameter's description as a JSON pointer into the tool.
    #[serde(default = "description_field")]
    pub field: String,
    pub text: String,
    /// The tool's held-out cases: base, head and the rewrite.
    pub held_out: fix::HeldOut,
    /// The review comment that suggests it on the diff, when one was posted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

fn description_field() -> String {
    "description".into()
}

impl Suggested {
    /// "`tool`" for a description, "`tool` /inputSchema/…/description" for a parameter's, as
    /// plain text (each renderer escapes it).
    pub fn target(&self) -> String {
        fix::target_label(&self.tool, &self.field)
    }
}

/// The gate's policy (config, suite, distractor packs) in a pull request.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PolicyInfo {
    /// The revision the policy was read at (the PR's base).
    pub rev: String,
    /// Which side's policy decided: `base`, or `head` when a maintainer opted in.
    pub from: crate::suite::SuiteVersion,
    /// Everything the PR changed about the gate, each with its effect.
    pub changes: Vec<PolicyChange>,
}

/// One thing the PR changed about its own gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PolicyChange {
    /// What changed: a config key (`gate.per_tool_alpha`), `driftgate.toml`, the suite, a pack.
    pub item: String,
    /// The value at base (absent: not set there, or the file did not exist).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    pub effect: PolicyEffect,
    /// Whether the PR's version was used (only with a maintainer's opt-in).
    pub applied: bool,
}

/// What a policy change would do to the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PolicyEffect {
    /// Fewer PRs would fail (a looser threshold, an allowlist entry, a swapped instrument).
    Weakens,
    /// More PRs would fail.
    Tightens,
    /// Neither reading is safe to assume (a different router, suite or pack).
    Changes,
}

impl PolicyEffect {
    pub fn describe(self) -> &'static str {
        match self {
            PolicyEffect::Weakens => "weakens the gate",
            PolicyEffect::Tightens => "tightens the gate",
            PolicyEffect::Changes => "changes the instrument",
        }
    }
}

impl PolicyInfo {
    /// One line per change, for every format: `item: base → head (effect; not applied)`.
    pub fn lines(&self) -> Vec<String> {
        self.changes
            .iter()
            .map(|c| {
                let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "(not set)".into());
                format!(
                    "{}: {} → {} ({}; {})",
                    c.item,
                    v(&c.base),
                    v(&c.head),
                    c.effect.describe(),
                    if c.applied {
                        "APPLIED by a maintainer's opt-in"
                    } else {
                        "not applied: measured with base's"
                    }
                )
            })
            .collect()
    }

    /// The headline above the lines.
    pub fn headline(&self) -> String {
        let weak = self
            .changes
            .iter()
            .filter(|c| c.effect == PolicyEffect::Weakens)
            .count();
        match self.from {
            crate::suite::SuiteVersion::Base => format!(
                "This PR changes the gate's own rules ({} change(s), {weak} weakening); they were NOT applied: the verdict uses the policy at {}.",
                self.changes.len(),
                self.rev
            ),
            crate::suite::SuiteVersion::Head => format!(
                "This PR changes the gate's own rules ({} change(s), {weak} weakening) and a maintainer opted in: the verdict uses the PR's policy, not {}'s.",
                self.changes.len(),
                self.rev
            ),
        }
    }
}

/// What a shard part's tag covers, so a tag for one kind of document never verifies another.
const PART_DOMAIN: &str = "driftgate shard part v1";

impl Report {
    /// The canonical JSON a shard part's tag covers: the whole report, the tag left out.
    fn part_material(&self) -> serde_json::Value {
        let mut unsigned = self.clone();
        if let Some(p) = unsigned.shard.as_mut() {
            p.mac = None;
        }
        serde_json::to_value(&unsigned).expect("a report serialises")
    }

    /// Tag a shard's partial report under `key` (nothing for a whole report).
    pub fn sign_part(&mut self, key: &crate::canon::MacKey) {
        if self.shard.is_none() {
            return;
        }
        let tag = key.tag_json(PART_DOMAIN, &self.part_material());
        if let Some(p) = self.shard.as_mut() {
            p.mac = Some(tag);
        }
    }

    /// Whether a shard's partial report carries a tag under `key` over everything in it.
    pub fn part_is_authentic(&self, key: &crate::canon::MacKey) -> bool {
        let Some(tag) = self.shard.as_ref().and_then(|p| p.mac.as_deref()) else {
            return false;
        };
        key.verify_json(PART_DOMAIN, &self.part_material(), tag)
    }

    /// Read a JSON report back (`driftgate comment --report FILE`).
    pub fn from_json(text: &str, source: &str) -> crate::Result<Report> {
        let is_lint = || {
            serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v["command"] == "lint")
        };
        let report: Report = match read_json(text, source) {
            Err(_) if is_lint() => {
                return Err(crate::Error::Usage(format!(
                    "{source} is a lint report; this reads the report of `check` or `diff`"
                )));
            }
            r => r?,
        };
        if report.schema_version != SCHEMA_VERSION {
            return Err(crate::Error::Usage(format!(
                "{source}: report schema_version {} is not {SCHEMA_VERSION}; render it with the driftgate version that wrote it ({})",
                report.schema_version, report.driftgate_version
            )));
        }
        Ok(report)
    }
}

/// A JSON document read into `T`, a parse error pointing at its line and column.
fn read_json<T: serde::de::DeserializeOwned>(text: &str, source: &str) -> crate::Result<T> {
    serde_json::from_str(text).map_err(|e| crate::Error::Json {
        source_name: source.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

/// The JSON Schema (draft 2020-12) of the JSON report, derived from the report types as they
/// serialise: published as `docs/report.schema.json`, which a test keeps equal to this and
/// checks real reports against.
pub fn json_schema() -> serde_json::Value {
    schema_of::<Report>(&format!(
        "A driftgate report (check, diff) as `--format json` writes it, schema_version {SCHEMA_VERSION}: additions keep the version, an incompatible change bumps it."
    ))
}

/// The JSON Schema of document `T` as it serialises, described by `description`.
fn schema_of<T: JsonSchema>(description: &str) -> serde_json::Value {
    use schemars::transform::Transform;
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>();
    // schemars names Rust's number types as formats ("uint64", "double"), which no JSON Schema
    // draft defines and strict validators (ajv) refuse; `minimum: 0` already says unsigned.
    schemars::transform::RecursiveTransform(|s: &mut schemars::Schema| {
        if s.get("format")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|f| {
                f.starts_with("uint") || f.starts_with("int") || f == "double" || f == "float"
            })
        {
            s.remove("format");
        }
    })
    .transform(&mut schema);
    schema.insert("description".into(), description.into());
    schema.to_value()
}
