//! `driftgate.toml`: thresholds and router settings as data. Command-line flags override it.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::diff::Severity;
use crate::error::{Error, Result};
use crate::gate::{CosinePolicy, MeaningPolicy};
use crate::injection::{Allow, FailOn};
use crate::llm::ToolChoice;

pub const DEFAULT_FILE: &str = "driftgate.toml";

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub gate: GateConfig,
    #[serde(default)]
    pub router: RouterConfig,
    #[serde(default)]
    pub suite: SuiteConfig,
    #[serde(default)]
    pub cache: CacheConfig,
    #[serde(default)]
    pub scan: ScanConfig,
}

/// `[scan]`: the gate's level for introduced injection findings, and `[[scan.allow]]` entries
/// (rule, tool, the text accepted, reason) for the rare legitimate case.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScanConfig {
    pub fail_on: Option<FailOn>,
    #[serde(default)]
    pub allow: Vec<Allow>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    pub fail_on: Option<Severity>,
    pub cosine_floor: Option<f64>,
    pub tolerance: Option<f64>,
    pub args_tolerance: Option<f64>,
    pub require_significance: Option<f64>,
    pub per_tool_alpha: Option<f64>,
    pub min_cases: Option<usize>,
    /// `fail`, `review` or `auto` (behaviour over proxy): what a low cosine does.
    pub cosine: Option<CosinePolicy>,
    /// `fail` or `review`: what a description whose meaning moved does.
    pub meaning: Option<MeaningPolicy>,
    pub min_base_accuracy: Option<f64>,
    /// An unproven drop at least this large is inconclusive (exit 4).
    pub inconclusive_drop: Option<f64>,
}

/// `--order`: how each case's tools are ordered (`replay::order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum OrderKind {
    /// A few rotations of one tool order, shared by many cases: prefix caches reuse the tool block.
    Rotate,
    /// Every case its own order: no two requests share a tool block.
    Shuffle,
}

/// `--router` / `[router] kind`: the router's own kind, given clap's names here (the only layer
/// that knows clap).
pub use crate::route::Kind as RouterKind;

/// `--semantic-variant` / `[router] semantic_variant`.
pub use crate::route::semantic::Variant as SemanticVariant;

impl clap::ValueEnum for SemanticVariant {
    fn value_variants<'a>() -> &'a [Self] {
        &SemanticVariant::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()))
    }
}

impl clap::ValueEnum for RouterKind {
    fn value_variants<'a>() -> &'a [Self] {
        &RouterKind::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouterConfig {
    pub kind: Option<RouterKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub tool_choice: Option<ToolChoice>,
    pub repeats: Option<u32>,
    pub temperature: Option<f32>,
    pub seed: Option<u64>,
    pub order: Option<OrderKind>,
    pub rotations: Option<u32>,
    pub concurrency: Option<usize>,
    pub timeout_secs: Option<u64>,
    /// Attempts per request, including the first.
    pub max_attempts: Option<u32>,
    pub none_threshold: Option<f32>,
    pub semantic_variant: Option<SemanticVariant>,
    pub azure_api_version: Option<String>,
    /// USD per million input tokens, for the cost estimate.
    pub price_input_per_mtok: Option<f64>,
    /// USD per million output tokens, for the cost estimate.
    pub price_output_per_mtok: Option<f64>,
    /// USD per million input tokens read from the provider's prompt cache.
    pub price_cached_input_per_mtok: Option<f64>,
    /// `check --batch`: the provider's batch API, and how long to wait for it.
    pub batch: Option<bool>,
    pub batch_wait_secs: Option<f64>,
    pub batch_poll_secs: Option<f64>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SuiteConfig {
    pub path: Option<PathBuf>,
    #[serde(default)]
    pub distractors: Vec<PathBuf>,
    pub use_head_suite: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    pub dir: Option<PathBuf>,
}

/// Load `path`, or `driftgate.toml` in the current directory when it exists, or defaults.
pub fn load(path: Option<&Path>) -> Result<Config> {
    let (path, required) = match path {
        Some(p) => (p.to_path_buf(), true),
        None => (PathBuf::from(DEFAULT_FILE), false),
    };
    let text = match crate::fs::read_text(&path, 1 << 20, crate::fs::INPUT_WAIT) {
        Ok(t) => t,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Config::default());
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    parse(&text, &path.display().to_string())
}

/// A config from its text; `shown` names it in errors (a path, or `REV:PATH`).
pub fn parse(text: &str, shown: &str) -> Result<Config> {
    let cfg: Config = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map(|s| {
                let before = &text[..s.start.min(text.len())];
                (
                    before.matches('\n').count() + 1,
                    s.start - before.rfind('\n').map_or(0, |i| i + 1) + 1,
                )
            })
            .unwrap_or((0, 0));
        Error::Usage(format!(
            "{shown}: invalid TOML at line {line}, column {column}: {}",
            e.message()
        ))
    })?;
    validate(&cfg, shown)?;
    Ok(cfg)
}

fn validate(cfg: &Config, shown: &str) -> Result<()> {
    let bad = |key: &str, why: &str| Err(Error::Usage(format!("{shown}: {key}: {why}")));
    // Where requests go and which variable's key they carry are the workflow's to say: in a
    // file, a pull request could send the job's token to a host it chose.
    if cfg.router.base_url.is_some() {
        return bad(
            "router.base_url",
            "the router endpoint is not read from a file (a pull request could point it, with the job's key, at a host it chose); pass --base-url (the Action's base-url input)",
        );
    }
    if cfg.router.api_key_env.is_some() {
        return bad(
            "router.api_key_env",
            "the key's variable is not read from a file (a pull request could name GITHUB_TOKEN and send it to the router); pass --api-key-env",
        );
    }
    if let Some(f) = cfg.gate.cosine_floor
        && !(0.0..=1.0).contains(&f)
    {
        return bad("gate.cosine_floor", "expected a number between 0 and 1");
    }
    if let Some(t) = cfg.gate.tolerance
        && !(0.0..=1.0).contains(&t)
    {
        return bad(
            "gate.tolerance",
            "expected a fraction between 0 and 1 (0.02 = 2 points)",
        );
    }
    if let Some(t) = cfg.gate.args_tolerance
        && !(0.0..=1.0).contains(&t)
    {
        return bad(
            "gate.args_tolerance",
            "expected a fraction between 0 and 1 (0.02 = 2 points)",
        );
    }
    if let Some(a) = cfg.gate.require_significance
        && !(a > 0.0 && a <= 1.0)
    {
        return bad(
            "gate.require_significance",
            "expected an alpha above 0, at most 1 (1: tolerance only)",
        );
    }
    if let Some(a) = cfg.gate.per_tool_alpha
        && !(a > 0.0 && a <= 1.0)
    {
        return bad(
            "gate.per_tool_alpha",
            "expected an alpha above 0, at most 1",
        );
    }
    if let Some(m) = cfg.gate.min_base_accuracy
        && !(0.0..1.0).contains(&m)
    {
        return bad(
            "gate.min_base_accuracy",
            "expected a fraction from 0 up to (not including) 1",
        );
    }
    if let Some(d) = cfg.gate.inconclusive_drop
        && !(d > 0.0 && d <= 1.0)
    {
        return bad(
            "gate.inconclusive_drop",
            "expected a fraction above 0, at most 1 (1: unproven drops are warnings)",
        );
    }
    if cfg.router.repeats == Some(0) {
        return bad("router.repeats", "expected at least 1");
    }
    if cfg.router.max_attempts == Some(0) {
        return bad("router.max_attempts", "expected at least 1");
    }
    if cfg.router.timeout_secs == Some(0) {
        return bad("router.timeout_secs", "expected at least 1 second");
    }
    for (i, a) in cfg.scan.allow.iter().enumerate() {
        if let Err(why) = a.check() {
            return bad(&format!("scan.allow[{i}]"), &why);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_with_location() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.toml");
        std::fs::write(&p, "[gate]\ncosine_floor = 0.9\nfail_on = \"breaking\"\n[router]\nkind = \"openai\"\nrepeats = 3\n").unwrap();
        let c = load(Some(&p)).unwrap();
        assert_eq!(c.gate.fail_on, Some(Severity::Breaking));
        assert_eq!(c.router.kind, Some(RouterKind::Openai));
        std::fs::write(&p, "[gate]\ncosine_flor = 0.9\n").unwrap();
        let e = load(Some(&p)).unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("unknown field `cosine_flor`"),
            "{e}"
        );
        std::fs::write(&p, "[gate]\nargs_tolerance = 0.05\n").unwrap();
        assert_eq!(load(Some(&p)).unwrap().gate.args_tolerance, Some(0.05));
        std::fs::write(&p, "[gate]\nargs_tolerance = -1\n").unwrap();
        let e = load(Some(&p)).unwrap_err().to_string();
        assert!(
            e.ends_with(
                "gate.args_tolerance: expected a fraction between 0 and 1 (0.02 = 2 points)"
            ),
            "{e}"
        );
        std::fs::write(&p, "[gate]\ntolerance = 2\n").unwrap();
        let e = load(Some(&p)).unwrap_err().to_string();
        assert!(
            e.ends_with("gate.tolerance: expected a fraction between 0 and 1 (0.02 = 2 points)"),
            "{e}"
        );
        assert!(load(Some(&dir.path().join("missing.toml"))).is_err());
    }

    #[test]
    fn scan_and_evidence_settings_are_checked_with_their_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.toml");
        let refused = |text: &str| {
            std::fs::write(&p, text).unwrap();
            let e = load(Some(&p)).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{e}");
            e.to_string()
        };
        let e = refused(
            "[gate]
per_tool_alpha = 0
",
        );
        assert!(
            e.ends_with("gate.per_tool_alpha: expected an alpha above 0, at most 1"),
            "{e}"
        );
        let e = refused(
            "[gate]
cosine = \"sometimes\"
",
        );
        assert!(
            e.contains("line 2") && e.contains("unknown variant `sometimes`"),
            "{e}"
        );
        let e = refused(
            "[[scan.allow]]
rule = \"made-up\"
tool = \"t\"
reason = \"r\"
",
        );
        assert!(
            e.contains("scan.allow[0]: rule \"made-up\" is no scan rule"),
            "{e}"
        );
        let e = refused(
            "[[scan.allow]]
rule = \"concealment\"
tool = \"t\"
",
        );
        assert!(e.contains("missing field `reason`"), "{e}");
        std::fs::write(
            &p,
            "[scan]
fail_on = \"never\"
[gate]
cosine = \"review\"
min_cases = 5
",
        )
        .unwrap();
        let c = load(Some(&p)).unwrap();
        assert_eq!(c.scan.fail_on, Some(FailOn::Never));
        assert_eq!(c.gate.cosine, Some(CosinePolicy::Review));
        assert_eq!(c.gate.min_cases, Some(5));
    }
}
