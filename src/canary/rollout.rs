//! The rollout file: what changed (each changed tool's base and head version, keyed by the
//! lockfile's per-tool `definition` hash), the stages, and the bucket rule that assigns a
//! session to a version — written by `canary plan`, read back (and checked) by `canary bucket`
//! and `watch`.
//!
//! The bucket rule, which servers and gateways reimplement (docs/canary.md has test vectors and
//! snippets): `u = first 8 bytes of sha256(salt ":" session id), big-endian, / 2^64`; a session
//! gets head while the stage's percentage is above `100·u`. Stages only grow, so a session moved
//! to head stays there.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::canon::{hash, hash_str};
use crate::error::{Error, Result};
use crate::tools::{Tool, ToolSet, lock};

/// The key that marks a rollout file, and its format version.
pub const MARKER: &str = "driftgate_rollout";
pub const VERSION: u64 = 1;

/// The default stages, in percent of sessions.
pub const DEFAULT_STAGES: [f64; 3] = [1.0, 10.0, 100.0];

/// The rule, spelled in the file so a reader of it needs nothing else.
pub const BUCKET_RULE: &str = "u = big-endian u64 of the first 8 bytes of sha256(salt + \":\" + session_id), / 2^64; head when u < stage / 100";

/// One changed tool: its version at base and at head (`None`: added or removed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub base: Option<String>,
    pub head: Option<String>,
}

/// Which side a session was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    Base,
    Head,
}

/// A rollout, as the file holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rollout {
    #[serde(rename = "driftgate_rollout")]
    pub version: u64,
    pub salt: String,
    pub bucket: String,
    /// Percent of sessions in head at each stage, increasing, the last 100.
    pub stages: Vec<f64>,
    /// The changed tools by name.
    pub changes: BTreeMap<String, Change>,
    /// The tool names of each side (unchanged tools included, for their schemas and the shares).
    pub sets: BTreeMap<String, Vec<String>>,
    /// Every definition either side serves, by its `definition` hash.
    pub definitions: BTreeMap<String, Value>,
}

/// A tool's version key: the lockfile's `definition` hash.
pub fn version_of(tool: &Tool) -> String {
    lock::part_hashes(tool)["definition"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// What a model is shown of a definition — name, description, input schema — hashed the same
/// whatever the provider's wrapping (`{type: function, function: {…, parameters}}`,
/// `input_schema`, `inputSchema`), so a logged definition names the version it was served from.
pub fn served_hash(def: &Value) -> Option<String> {
    let d = def.get("function").unwrap_or(def);
    let name = d.get("name")?.as_str()?;
    let schema = ["inputSchema", "input_schema", "parameters"]
        .iter()
        .find_map(|k| d.get(*k))
        .cloned()
        .unwrap_or(Value::Null);
    let description = d.get("description").cloned().unwrap_or(Value::Null);
    Some(hash(
        &json!({"name": name, "description": description, "inputSchema": schema}),
    ))
}

/// `u` in [0, 1): the session's place on the line the stages cut.
pub fn bucket(salt: &str, session: &str) -> f64 {
    let digest = Sha256::digest(format!("{salt}:{session}").as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    // The top 53 bits, so the float is exact and strictly below 1.
    (u64::from_be_bytes(first) >> 11) as f64 / (1u64 << 53) as f64
}

impl Rollout {
    /// A rollout from `base` to `head`: the tools whose definition changed, added or removed.
    /// The salt, unless given, is derived from both sides, so planning the same change twice
    /// gives the same file, and another change gets other buckets.
    pub fn plan(
        base: &ToolSet,
        head: &ToolSet,
        stages: &[f64],
        salt: Option<&str>,
    ) -> Result<Rollout> {
        check_stages(stages, "--stages")?;
        let mut definitions = BTreeMap::new();
        let mut sets = BTreeMap::new();
        let mut versions = |set: &ToolSet| -> BTreeMap<String, String> {
            set.tools
                .iter()
                .map(|t| {
                    let v = version_of(t);
                    definitions.insert(v.clone(), t.to_value());
                    (t.name.clone(), v)
                })
                .collect()
        };
        let (b, h) = (versions(base), versions(head));
        sets.insert("base".to_string(), b.keys().cloned().collect());
        sets.insert("head".to_string(), h.keys().cloned().collect());
        let mut changes = BTreeMap::new();
        for name in b.keys().chain(h.keys()) {
            let (bv, hv) = (b.get(name).cloned(), h.get(name).cloned());
            if bv != hv {
                changes.insert(name.clone(), Change { base: bv, head: hv });
            }
        }
        if changes.is_empty() {
            return Err(Error::Usage(
                "base and head serve the same definitions: there is nothing to roll out".into(),
            ));
        }
        let salt = match salt {
            Some(s) => check_salt(s, "--salt")?.to_string(),
            None => {
                let both: Vec<&String> = b.values().chain(h.values()).collect();
                hash_str(&serde_json::to_string(&both).unwrap_or_default())
                    .trim_start_matches("sha256:")[..16]
                    .to_string()
            }
        };
        Ok(Rollout {
            version: VERSION,
            salt,
            bucket: BUCKET_RULE.to_string(),
            stages: stages.to_vec(),
            changes,
            sets,
            definitions,
        })
    }

    /// The file's text: pretty JSON, keys in a fixed order, a trailing newline.
    pub fn render(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Read and check a rollout file: every inconsistency a hand edit can make is an error
    /// naming where (a definition whose hash is not its key, a version no definition holds, a
    /// changed tool whose versions are equal, stages out of order).
    pub fn parse(text: &str, source: &str) -> Result<Rollout> {
        let value: Value = serde_json::from_str(text).map_err(|e| Error::Json {
            source_name: source.to_string(),
            line: e.line(),
            column: e.column(),
            message: e.to_string().split(" at line ").next().unwrap_or("").into(),
        })?;
        if !crate::tools::format_version(&value, MARKER, VERSION, source, "rollout format")? {
            return Err(Error::shape(
                source,
                "",
                format!(
                    "a rollout file (an object with \"{MARKER}\": {VERSION}, written by `driftgate canary plan`)"
                ),
            ));
        }
        let r: Rollout = serde_json::from_value(value)
            .map_err(|e| Error::shape(source, "", format!("a rollout file: {e}")))?;
        check_salt(&r.salt, &format!("{source}: /salt"))?;
        if r.bucket != BUCKET_RULE {
            return Err(Error::shape(
                source,
                "/bucket",
                format!("the bucket rule this version implements, {BUCKET_RULE:?}"),
            ));
        }
        check_stages(&r.stages, &format!("{source}: /stages"))?;
        for (key, def) in &r.definitions {
            let at = format!("/definitions/{}", pointer_escape(key));
            let tool = Tool::from_value(def, source, &at)?;
            if version_of(&tool) != *key {
                return Err(Error::shape(
                    source,
                    &at,
                    format!(
                        "a definition whose hash is its key; it hashes to {} (edited by hand?)",
                        version_of(&tool)
                    ),
                ));
            }
        }
        for side in ["base", "head"] {
            if !r.sets.contains_key(side) {
                return Err(Error::shape(
                    source,
                    "/sets",
                    format!("the tool names of {side}"),
                ));
            }
        }
        for (name, c) in &r.changes {
            let at = format!("/changes/{}", pointer_escape(name));
            if c.base == c.head {
                return Err(Error::shape(
                    source,
                    &at,
                    "a change: its base and head versions are the same",
                ));
            }
            for (side, v) in [("base", &c.base), ("head", &c.head)] {
                let listed = r.sets[side].contains(name);
                match v {
                    Some(v) => {
                        let named = r.definitions.get(v).and_then(|d| d.get("name"));
                        if named.and_then(Value::as_str) != Some(name.as_str()) {
                            return Err(Error::shape(
                                source,
                                &format!("{at}/{side}"),
                                format!(
                                    "a version in /definitions of a tool named {name:?}; {v} is {}",
                                    if named.is_some() {
                                        "another tool's"
                                    } else {
                                        "not there"
                                    }
                                ),
                            ));
                        }
                        if !listed {
                            return Err(Error::shape(
                                source,
                                &format!("/sets/{side}"),
                                format!("{name:?}, which /changes gives a {side} version"),
                            ));
                        }
                    }
                    None if listed => {
                        return Err(Error::shape(
                            source,
                            &format!("{at}/{side}"),
                            format!("a {side} version: /sets/{side} lists {name:?}"),
                        ));
                    }
                    None => {}
                }
            }
        }
        if r.changes.is_empty() {
            return Err(Error::shape(
                source,
                "/changes",
                "at least one changed tool",
            ));
        }
        Ok(r)
    }

    /// The arm a session gets at `stage` percent.
    pub fn arm(&self, session: &str, stage: f64) -> Arm {
        if 100.0 * bucket(&self.salt, session) < stage {
            Arm::Head
        } else {
            Arm::Base
        }
    }

    /// The definitions `side` serves, by tool name.
    pub fn side(&self, arm: Arm) -> BTreeMap<&str, &Value> {
        let key = match arm {
            Arm::Base => "base",
            Arm::Head => "head",
        };
        let mut out = BTreeMap::new();
        for def in self.definitions.values() {
            if let Some(name) = def.get("name").and_then(Value::as_str) {
                let version = self.changes.get(name).map(|c| match arm {
                    Arm::Base => c.base.as_ref(),
                    Arm::Head => c.head.as_ref(),
                });
                let serves = match version {
                    Some(v) => v.is_some_and(|v| self.definitions.get(v) == Some(def)),
                    None => true,
                };
                if serves && self.sets[key].iter().any(|n| n == name) {
                    out.insert(name, def);
                }
            }
        }
        out
    }

    /// The stage after `stage`, if there is one.
    pub fn next_stage(&self, stage: f64) -> Option<f64> {
        self.stages.iter().copied().find(|&s| s > stage)
    }
}

fn pointer_escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn check_salt<'a>(salt: &'a str, what: &str) -> Result<&'a str> {
    if salt.is_empty() || salt.len() > 64 || !salt.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(Error::Usage(format!(
            "{what}: expected 1 to 64 ASCII letters or digits, found {salt:?}"
        )));
    }
    Ok(salt)
}

fn check_stages(stages: &[f64], what: &str) -> Result<()> {
    let ordered = stages.windows(2).all(|w| w[0] < w[1]);
    let in_range = stages.iter().all(|&s| s > 0.0 && s <= 100.0);
    if stages.is_empty() || !ordered || !in_range || stages.last() != Some(&100.0) {
        return Err(Error::Usage(format!(
            "{what}: expected increasing percentages in (0, 100] ending at 100, found {stages:?}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(tools: Value) -> ToolSet {
        ToolSet::from_array(tools.as_array().unwrap(), "t", "").unwrap()
    }

    fn pair() -> (ToolSet, ToolSet) {
        let base = set(json!([
            {"name": "schedule", "description": "Schedule a meeting.", "inputSchema": {"type": "object"}},
            {"name": "cancel", "description": "Cancel a meeting.", "inputSchema": {"type": "object"}}
        ]));
        let head = set(json!([
            {"name": "schedule", "description": "Book a slot.", "inputSchema": {"type": "object"}},
            {"name": "cancel", "description": "Cancel a meeting.", "inputSchema": {"type": "object"}},
            {"name": "list", "description": "List meetings.", "inputSchema": {"type": "object"}}
        ]));
        (base, head)
    }

    #[test]
    fn bucket_test_vectors() {
        // The vectors docs/canary.md prints for reimplementations.
        let u = bucket("0123456789abcdef", "session-1");
        assert!((0.0..1.0).contains(&u));
        let digest = Sha256::digest(b"0123456789abcdef:session-1");
        let top = u64::from_be_bytes(digest[..8].try_into().unwrap());
        assert_eq!(u, (top >> 11) as f64 / 9007199254740992.0);
    }

    #[test]
    fn buckets_spread_evenly_and_stages_only_add_sessions_to_head() {
        let (base, head) = pair();
        let r = Rollout::plan(&base, &head, &DEFAULT_STAGES, None).unwrap();
        let n = 20_000;
        let in_head = |stage| {
            (0..n)
                .filter(|i| r.arm(&format!("s{i}"), stage) == Arm::Head)
                .count()
        };
        let ten = in_head(10.0);
        assert!((1800..2200).contains(&ten), "{ten}");
        for i in 0..n {
            let s = format!("s{i}");
            if r.arm(&s, 1.0) == Arm::Head {
                assert_eq!(r.arm(&s, 10.0), Arm::Head);
            }
        }
        assert_eq!(in_head(100.0), n);
    }

    #[test]
    fn plan_lists_changed_added_tools_and_round_trips() {
        let (base, head) = pair();
        let r = Rollout::plan(&base, &head, &DEFAULT_STAGES, None).unwrap();
        assert_eq!(r.changes.keys().collect::<Vec<_>>(), ["list", "schedule"]);
        assert!(r.changes["list"].base.is_none());
        assert_eq!(Rollout::parse(&r.render(), "r.json").unwrap(), r);
        assert_eq!(r.side(Arm::Base).len(), 2);
        assert_eq!(r.side(Arm::Head)["schedule"]["description"], "Book a slot.");
        // Same change, same salt; the salt differs for another change.
        let again = Rollout::plan(&base, &head, &DEFAULT_STAGES, None).unwrap();
        assert_eq!(again.salt, r.salt);
        let other = Rollout::plan(&head, &base, &DEFAULT_STAGES, None).unwrap();
        assert_ne!(other.salt, r.salt);
    }

    #[test]
    fn served_hash_is_the_same_through_each_providers_wrapping() {
        let mcp = json!({"name": "a", "description": "d", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}});
        let openai = json!({"type": "function", "function": {"name": "a", "description": "d", "parameters": {"type": "object"}}});
        let anthropic =
            json!({"name": "a", "description": "d", "input_schema": {"type": "object"}});
        let h = served_hash(&mcp);
        assert_eq!(h, served_hash(&openai));
        assert_eq!(h, served_hash(&anthropic));
        assert_ne!(h, served_hash(&json!({"name": "a", "description": "e"})));
    }

    #[test]
    fn hand_edits_are_refused_with_where() {
        let (base, head) = pair();
        let r = Rollout::plan(&base, &head, &DEFAULT_STAGES, None).unwrap();
        let text = r.render();
        let cases: Vec<(String, &str)> = vec![
            (text.replace("Book a slot.", "Book any slot."), "hashes to"),
            (text.replacen("100.0", "50.0", 1), "ending at 100"),
            (
                text.replace("\"driftgate_rollout\": 1", "\"driftgate_rollout\": 2"),
                "/driftgate_rollout: expected rollout format version 1, found 2",
            ),
            (text.replace(&r.salt, "not a salt!"), "ASCII letters"),
            ("{\"tools\": []}".to_string(), "a rollout file"),
            ("{\n  \"driftgate_rollout\": 1,\n".to_string(), "line 3"),
        ];
        for (bad, says) in cases {
            let e = Rollout::parse(&bad, "r.json").unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        // A changed tool pointed at an unchanged version.
        let mut v: Value = serde_json::from_str(&text).unwrap();
        let cancel = version_of(base.get("cancel").unwrap());
        v["changes"]["schedule"]["head"] = json!(cancel);
        let e = Rollout::parse(&v.to_string(), "r.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/changes/schedule/head") && e.contains("another tool's"),
            "{e}"
        );
    }
}
