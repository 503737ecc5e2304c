//! The gate's policy in a pull request: `driftgate.toml`, the suite and the distractor packs are
//! read at the PR's base, never from the PR's checkout, so the change under review cannot rewrite
//! the rules it is judged by. What the PR changed about them is listed key by key, each marked
//! as weakening, tightening or changing the instrument, and reported first. The PR's version is
//! used only when the workflow says so (`--trust-head-policy`, the Action's `trust-head-policy`
//! input): a maintainer's opt-in, which a file in the PR cannot set.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::app::config::{self, Config};
use crate::error::{Error, Result};
use crate::report::{PolicyChange, PolicyEffect, PolicyInfo};
use crate::source::tree::Tree;
use crate::suite::SuiteVersion;

/// The resolved policy: the config that decides, and (in a pull request) what the PR changed.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub config: Config,
    /// The base revision the policy was read at; `None` outside a pull request.
    pub rev: Option<String>,
    pub trust_head: bool,
    pub changes: Vec<PolicyChange>,
}

impl Policy {
    /// `--config FILE` (or `driftgate.toml`) at `rev` when there is one, else in the work tree.
    pub fn resolve(flag: Option<&Path>, rev: Option<&str>, trust_head: bool) -> Result<Policy> {
        // A config outside the checkout is the workflow's, not the PR's: read as it is.
        let outside = flag.is_some_and(|p| !crate::source::tree::in_checkout(p));
        let Some(rev) = rev.filter(|_| !outside) else {
            return Ok(Policy {
                config: config::load(flag)?,
                rev: rev.map(str::to_string),
                trust_head,
                ..Policy::default()
            });
        };
        let path = flag
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(config::DEFAULT_FILE));
        let dir = crate::source::tree::dir_of(&path);
        let shown = path.display().to_string();
        let base_text = Tree::at(rev, dir).read(&path)?;
        let head_text = Tree::work(dir).read(&path);
        if trust_head && let Err(e) = &head_text {
            return Err(Error::Usage(e.to_string()));
        }
        if flag.is_some() && base_text.is_none() && matches!(head_text, Ok(None)) {
            return Err(Error::Usage(format!(
                "{shown}: no such config at {rev} or in the work tree"
            )));
        }
        let base = match &base_text {
            Some(t) => config::parse(t, &format!("{rev}:{shown}"))?,
            None => Config::default(),
        };
        let head: std::result::Result<Option<Config>, String> = match &head_text {
            Ok(Some(t)) => config::parse(t, &shown)
                .map(Some)
                .map_err(|e| e.to_string()),
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        };
        let mut changes = Vec::new();
        let head_str = head_text.as_ref().ok().and_then(|t| t.clone());
        if base_text != head_str || head.is_err() {
            match (&base_text, &head) {
                (_, Err(why)) => changes.push(change(
                    &shown,
                    Some("valid".into()),
                    Some(format!("unusable: {why}")),
                    PolicyEffect::Changes,
                )),
                (None, Ok(Some(_))) => changes.push(change(
                    &shown,
                    None,
                    Some("added".into()),
                    PolicyEffect::Changes,
                )),
                (Some(_), Ok(None)) => changes.push(change(
                    &shown,
                    Some("present".into()),
                    Some("deleted".into()),
                    PolicyEffect::Weakens,
                )),
                _ => {}
            }
            let base_keys = flat(base_text.as_deref());
            // Keys of a PR file that does not validate are listed too: that is the attempt.
            let head_keys = flat(head_str.as_deref());
            let keys: std::collections::BTreeSet<&String> =
                base_keys.keys().chain(head_keys.keys()).collect();
            for k in keys {
                let (b, h) = (base_keys.get(k), head_keys.get(k));
                if b != h {
                    changes.push(change(
                        k,
                        b.map(toml_text),
                        h.map(toml_text),
                        effect(k, b, h),
                    ));
                }
            }
        }
        let config = match (trust_head, head) {
            (true, Ok(Some(h))) => h,
            (true, Ok(None)) => Config::default(),
            (true, Err(why)) => return Err(Error::Usage(why)),
            (false, _) => base,
        };
        for c in &mut changes {
            c.applied = trust_head;
        }
        Ok(Policy {
            config,
            rev: Some(rev.to_string()),
            trust_head,
            changes,
        })
    }

    /// Record what the PR changed about the suite (from `suite::choose_suite`).
    pub fn suite_changed(&mut self, suite: &crate::suite::SuiteChoice, path: &Path) {
        if !suite.info.changed_in_pr {
            return;
        }
        let (item, head) = match suite.refs_changed {
            true => (
                format!("suite {} (a `ref:` distractor file)", path.display()),
                "edited",
            ),
            false => (format!("suite {}", path.display()), "edited"),
        };
        self.changes.push(PolicyChange {
            item,
            base: Some(suite.info.identity.sha256.clone()).filter(|_| !self.trust_head),
            head: Some(head.into()),
            effect: PolicyEffect::Changes,
            applied: suite.info.measured_with == SuiteVersion::Head,
        });
    }

    /// Record a distractor pack the PR changed.
    pub fn pack_changed(&mut self, label: &str, what: &str) {
        self.changes.push(PolicyChange {
            item: format!("distractor pack {label}"),
            base: None,
            head: Some(what.into()),
            effect: PolicyEffect::Changes,
            applied: self.trust_head,
        });
    }

    /// The report's section: in a pull request, where the policy came from and what changed.
    pub fn info(&self) -> Option<PolicyInfo> {
        let rev = self.rev.clone()?;
        (!self.changes.is_empty() || self.trust_head).then(|| PolicyInfo {
            rev,
            from: match self.trust_head {
                true => SuiteVersion::Head,
                false => SuiteVersion::Base,
            },
            changes: self.changes.clone(),
        })
    }
}

fn change(item: &str, base: Option<String>, head: Option<String>, e: PolicyEffect) -> PolicyChange {
    PolicyChange {
        item: item.to_string(),
        base,
        head,
        effect: e,
        applied: false,
    }
}

/// `section.key` → value of a config text (arrays of tables whole); unreadable text is empty.
fn flat(text: Option<&str>) -> BTreeMap<String, toml::Value> {
    let mut out = BTreeMap::new();
    let Some(table) = text.and_then(|t| t.parse::<toml::Table>().ok()) else {
        return out;
    };
    fn walk(prefix: &str, t: &toml::Table, out: &mut BTreeMap<String, toml::Value>) {
        for (k, v) in t {
            let key = match prefix.is_empty() {
                true => k.clone(),
                false => format!("{prefix}.{k}"),
            };
            match v {
                toml::Value::Table(inner) => walk(&key, inner, out),
                other => {
                    out.insert(key, other.clone());
                }
            }
        }
    }
    walk("", &table, &mut out);
    out
}

fn toml_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => {
            let s = other.to_string();
            match s.char_indices().nth(120) {
                Some((i, _)) => format!("{}…", &s[..i]),
                None => s,
            }
        }
    }
}

/// The default each gate key takes when a file leaves it out (`gate::CheckThresholds`).
fn default_of(key: &str) -> Option<toml::Value> {
    let d = crate::gate::CheckThresholds::default();
    Some(match key {
        "gate.fail_on" => toml::Value::String(d.fail_on.as_str().into()),
        "gate.tolerance" | "gate.args_tolerance" => toml::Value::Float(d.tolerance),
        // Unset, the bundled model's calibrated floor applies (the default embedder's).
        "gate.cosine_floor" => toml::Value::Float(crate::cosine::floors::MINILM.floor),
        "gate.require_significance" => toml::Value::Float(d.require_significance?),
        "gate.per_tool_alpha" => toml::Value::Float(d.per_tool_alpha),
        "gate.min_cases" => toml::Value::Integer(d.min_cases as i64),
        "gate.cosine" => toml::Value::String(crate::choice::Choice::name(d.cosine).into()),
        "gate.meaning" => toml::Value::String(crate::choice::Choice::name(d.meaning).into()),
        "gate.inconclusive_drop" => toml::Value::Float(d.inconclusive_drop),
        "scan.fail_on" => toml::Value::String("high".into()),
        "suite.use_head_suite" => toml::Value::Boolean(false),
        _ => return None,
    })
}

/// How strict a value of `key` is, where keys have an order (a larger value: stricter).
fn strictness(key: &str, v: &toml::Value) -> Option<f64> {
    let rank = |order: &[&str]| {
        v.as_str()
            .and_then(|s| order.iter().position(|o| *o == s))
            .map(|i| i as f64)
    };
    let num = v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    match key {
        // Failing on a lower severity, a nearer cosine or a smaller drop fails more PRs.
        "gate.fail_on" => rank(&["breaking", "high", "warning", "unknown", "info"]),
        "scan.fail_on" => rank(&["never", "high", "medium"]),
        "gate.cosine" => rank(&["review", "auto", "fail"]),
        "gate.meaning" => rank(&["review", "fail"]),
        "gate.tolerance" | "gate.args_tolerance" | "gate.min_cases" | "gate.inconclusive_drop" => {
            num.map(|x| -x)
        }
        "gate.cosine_floor"
        | "gate.require_significance"
        | "gate.per_tool_alpha"
        | "gate.min_base_accuracy" => num,
        "suite.use_head_suite" => v.as_bool().map(|b| if b { 0.0 } else { 1.0 }),
        _ => None,
    }
}

/// What moving `key` from `base` to `head` does to the gate.
fn effect(key: &str, base: Option<&toml::Value>, head: Option<&toml::Value>) -> PolicyEffect {
    match key {
        "scan.allow" => {
            let n = |v: Option<&toml::Value>| v.and_then(|v| v.as_array()).map_or(0, Vec::len);
            let entries = |v: Option<&toml::Value>| {
                v.and_then(|v| v.as_array())
                    .map(|a| a.iter().map(|e| e.to_string()).collect::<Vec<_>>())
                    .unwrap_or_default()
            };
            let before = entries(base);
            // Any entry base does not have lets something through.
            if entries(head).iter().any(|e| !before.contains(e)) || n(head) > n(base) {
                PolicyEffect::Weakens
            } else {
                PolicyEffect::Tightens
            }
        }
        // Without a suite path, check becomes a diff: no routing replay at all.
        "suite.path" if head.is_none() => PolicyEffect::Weakens,
        _ => {
            let d = default_of(key);
            let (b, h) = (base.or(d.as_ref()), head.or(d.as_ref()));
            let (Some(b), Some(h)) = (
                b.and_then(|v| strictness(key, v)),
                h.and_then(|v| strictness(key, v)),
            ) else {
                return PolicyEffect::Changes;
            };
            match h.partial_cmp(&b) {
                Some(Ordering::Less) => PolicyEffect::Weakens,
                Some(Ordering::Greater) => PolicyEffect::Tightens,
                _ => PolicyEffect::Changes,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(key: &str, b: Option<&str>, h: Option<&str>) -> PolicyEffect {
        let v = |s: Option<&str>| s.map(|s| s.parse::<toml::Table>().unwrap()["v"].clone());
        effect(key, v(b).as_ref(), v(h).as_ref())
    }

    #[test]
    fn each_loosening_of_a_threshold_weakens_and_each_tightening_tightens() {
        use PolicyEffect::*;
        let cases = [
            (
                "gate.per_tool_alpha",
                Some("v = 0.05"),
                Some("v = 1e-12"),
                Weakens,
            ),
            ("gate.per_tool_alpha", None, Some("v = 1e-12"), Weakens),
            (
                "gate.cosine_floor",
                Some("v = 0.8"),
                Some("v = 0.0"),
                Weakens,
            ),
            (
                "gate.cosine",
                Some("v = \"auto\""),
                Some("v = \"review\""),
                Weakens,
            ),
            ("gate.cosine", None, Some("v = \"fail\""), Tightens),
            ("gate.meaning", None, Some("v = \"review\""), Weakens),
            (
                "gate.meaning",
                Some("v = \"review\""),
                Some("v = \"fail\""),
                Tightens,
            ),
            ("gate.tolerance", None, Some("v = 1.0"), Weakens),
            ("gate.tolerance", Some("v = 0.5"), None, Tightens),
            ("gate.fail_on", None, Some("v = \"breaking\""), Weakens),
            ("gate.fail_on", Some("v = \"warning\""), None, Weakens),
            (
                "gate.require_significance",
                None,
                Some("v = 0.001"),
                Weakens,
            ),
            ("gate.min_cases", None, Some("v = 100"), Weakens),
            ("scan.fail_on", None, Some("v = \"never\""), Weakens),
            ("scan.fail_on", None, Some("v = \"medium\""), Tightens),
            ("suite.use_head_suite", None, Some("v = true"), Weakens),
            ("suite.path", Some("v = \"s.yaml\""), None, Weakens),
            (
                "suite.path",
                Some("v = \"s.yaml\""),
                Some("v = \"t.yaml\""),
                Changes,
            ),
            ("router.model", None, Some("v = \"m\""), Changes),
            (
                "scan.allow",
                None,
                Some("v = [{rule = \"concealment\", tool = \"t\", reason = \"r\"}]"),
                Weakens,
            ),
        ];
        for (key, b, h, want) in cases {
            assert_eq!(e(key, b, h), want, "{key}: {b:?} -> {h:?}");
        }
    }

    #[test]
    fn flat_names_every_key_by_its_table() {
        let f = flat(Some(
            "[gate]\nper_tool_alpha = 0.1\n[router]\nmodel = \"m\"\n[[scan.allow]]\nrule = \"x\"\n",
        ));
        let keys: Vec<&str> = f.keys().map(String::as_str).collect();
        assert_eq!(keys, ["gate.per_tool_alpha", "router.model", "scan.allow"]);
        assert!(flat(Some("not toml [")).is_empty());
    }
}
