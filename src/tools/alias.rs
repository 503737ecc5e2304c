//! What traffic teaches a server: the tool and parameter names agents invented, each mapped to
//! the real name it meant, for a server's fuzzy-matching layer to load (docs/canary.md, "Alias
//! map"). An alias is offered only when it is safe: it names nothing real (no tool of any
//! version, no other parameter of the tool), and one real name is clearly nearest by a
//! [`Nearness`] — spelling here; `canary::aliases` measures meaning with the embedder.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The key that marks an alias map, and its format version.
pub const MARKER: &str = "driftgate_aliases";
pub const VERSION: u64 = 1;

/// How near an invented name is to a real one, in [0, 1], and what counts as clearly nearest.
pub trait Nearness {
    /// Said in the map: how names were matched.
    fn method(&self) -> String;
    fn tool(&self, alias: &str, tool: &str) -> f64;
    fn parameter(&self, tool: &str, alias: &str, parameter: &str) -> f64;
    /// Below this an invented name is not taken to mean anything.
    fn floor(&self) -> f64;
    /// The nearest must beat the second by this much, or the alias is ambiguous.
    fn margin(&self) -> f64;
}

/// By spelling: [`similarity`], floor 0.5, margin 0.05.
pub struct Spelling;

impl Nearness for Spelling {
    fn method(&self) -> String {
        "spelling: the larger of normalised edit similarity and word overlap".into()
    }
    fn tool(&self, alias: &str, tool: &str) -> f64 {
        similarity(alias, tool)
    }
    fn parameter(&self, _: &str, alias: &str, parameter: &str) -> f64 {
        similarity(alias, parameter)
    }
    fn floor(&self) -> f64 {
        0.5
    }
    fn margin(&self) -> f64 {
        0.05
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolAlias {
    pub alias: String,
    pub tool: String,
    /// Calls that used the alias.
    pub count: u64,
    /// Name similarity in [0, 1] (the larger of normalised edit similarity and word overlap).
    pub similarity: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParameterAlias {
    pub tool: String,
    pub alias: String,
    pub parameter: String,
    pub count: u64,
    pub similarity: f64,
}

/// An invented name no alias was made for, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refused {
    /// The tool, for a parameter name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub alias: String,
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest: Option<String>,
    pub why: String,
}

/// The alias map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AliasMap {
    #[serde(rename = "driftgate_aliases")]
    pub version: u64,
    /// How names were matched ([`Nearness::method`]).
    pub matched_by: String,
    pub tools: Vec<ToolAlias>,
    pub parameters: Vec<ParameterAlias>,
    pub refused: Vec<Refused>,
}

/// What agents invented, counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Invented {
    /// Tool names called that the request did not offer.
    pub tools: BTreeMap<String, u64>,
    /// (tool, parameter) names the tool's schema does not declare.
    pub parameters: BTreeMap<(String, String), u64>,
}

/// The words of a name: split at separators and lower-to-upper case changes, lowercased.
pub fn words(s: &str) -> BTreeSet<String> {
    name_words(s).into_iter().collect()
}

/// The words of a name in order (`scheduleAppointment` → `schedule appointment`).
pub fn name_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        let split = !c.is_alphanumeric() || (c.is_uppercase() && prev_lower);
        if split && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// How alike two names are: the larger of the normalised edit similarity (case and separators
/// folded) and the share of words they have in common.
pub fn similarity(a: &str, b: &str) -> f64 {
    let fold = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let edit = strsim::normalized_levenshtein(&fold(a), &fold(b));
    let (wa, wb) = (words(a), words(b));
    let union = wa.union(&wb).count();
    let overlap = if union == 0 {
        0.0
    } else {
        wa.intersection(&wb).count() as f64 / union as f64
    };
    edit.max(overlap)
}

/// The nearest of the scored candidates: `Ok` with it and its score, or `Err` with why not
/// (none near enough, or two about as near) and the nearest if any.
fn nearest(
    mut scored: Vec<(f64, &str)>,
    floor: f64,
    margin: f64,
) -> Result<(String, f64), (String, Option<String>)> {
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    match scored.as_slice() {
        [] => Err(("nothing to map it to".into(), None)),
        [(s, best), ..] if *s < floor => Err((
            format!("no name is near enough (best {s:.2} < {floor})"),
            Some(best.to_string()),
        )),
        [(s, best), (t, second), ..] if s - t < margin => Err((
            format!("ambiguous: {best:?} ({s:.2}) and {second:?} ({t:.2}) are about as near"),
            Some(best.to_string()),
        )),
        [(s, best), ..] => Ok((best.to_string(), (s * 1000.0).round() / 1000.0)),
    }
}

impl AliasMap {
    /// The map for `invented`, against the tools each side serves (`schemas`: name → declared
    /// parameters of the version agents will be served) and `all_names`, every tool name any
    /// version has (an alias must not be one).
    pub fn build(
        invented: &Invented,
        schemas: &BTreeMap<String, Vec<String>>,
        all_names: &BTreeSet<String>,
        near: &dyn Nearness,
    ) -> AliasMap {
        let (floor, margin) = (near.floor(), near.margin());
        let mut map = AliasMap {
            version: VERSION,
            matched_by: near.method(),
            tools: Vec::new(),
            parameters: Vec::new(),
            refused: Vec::new(),
        };
        for (alias, &count) in &invented.tools {
            if all_names.contains(alias) {
                map.refused.push(Refused {
                    tool: None,
                    alias: alias.clone(),
                    count,
                    nearest: None,
                    why: "it is a tool's name in some version: an alias would shadow it".into(),
                });
                continue;
            }
            let scored = schemas
                .keys()
                .map(|t| (near.tool(alias, t), t.as_str()))
                .collect();
            match nearest(scored, floor, margin) {
                Ok((tool, similarity)) => map.tools.push(ToolAlias {
                    alias: alias.clone(),
                    tool,
                    count,
                    similarity,
                }),
                Err((why, nearest)) => map.refused.push(Refused {
                    tool: None,
                    alias: alias.clone(),
                    count,
                    nearest,
                    why,
                }),
            }
        }
        for ((tool, alias), &count) in &invented.parameters {
            let declared = schemas.get(tool).map(Vec::as_slice).unwrap_or_default();
            let refuse = |why: String, nearest: Option<String>| Refused {
                tool: Some(tool.clone()),
                alias: alias.clone(),
                count,
                nearest,
                why,
            };
            if declared.contains(alias) {
                map.refused.push(refuse(
                    "it is a parameter of this tool in the version served".into(),
                    None,
                ));
                continue;
            }
            let scored = declared
                .iter()
                .map(|p| (near.parameter(tool, alias, p), p.as_str()))
                .collect();
            match nearest(scored, floor, margin) {
                Ok((parameter, similarity)) => map.parameters.push(ParameterAlias {
                    tool: tool.clone(),
                    alias: alias.clone(),
                    parameter,
                    count,
                    similarity,
                }),
                Err((why, nearest)) => map.refused.push(refuse(why, nearest)),
            }
        }
        // Most used first.
        map.tools
            .sort_by(|a, b| b.count.cmp(&a.count).then(a.alias.cmp(&b.alias)));
        map.parameters
            .sort_by(|a, b| b.count.cmp(&a.count).then(a.alias.cmp(&b.alias)));
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schemas() -> BTreeMap<String, Vec<String>> {
        [
            ("schedule_appointment", vec!["start_time", "patient_id"]),
            ("cancel_appointment", vec!["appointment_id"]),
            ("list_appointments", vec!["date"]),
        ]
        .into_iter()
        .map(|(t, p)| (t.to_string(), p.into_iter().map(String::from).collect()))
        .collect()
    }

    #[test]
    fn invented_names_map_to_the_nearest_real_one_unless_unsafe() {
        let mut inv = Invented::default();
        inv.tools.insert("scheduleAppointment".into(), 7);
        inv.tools.insert("book".into(), 3);
        inv.tools.insert("appointment".into(), 2); // as near to every tool: ambiguous
        inv.tools.insert("old_tool".into(), 1); // a name another version has
        inv.parameters
            .insert(("schedule_appointment".into(), "startTime".into()), 4);
        inv.parameters
            .insert(("cancel_appointment".into(), "id".into()), 1);
        inv.parameters
            .insert(("list_appointments".into(), "limit".into()), 2);
        let all: BTreeSet<String> = schemas()
            .keys()
            .cloned()
            .chain(["old_tool".to_string()])
            .collect();
        let m = AliasMap::build(&inv, &schemas(), &all, &Spelling);
        assert_eq!(m.tools.len(), 1);
        assert_eq!(
            (m.tools[0].alias.as_str(), m.tools[0].tool.as_str()),
            ("scheduleAppointment", "schedule_appointment")
        );
        assert_eq!(m.parameters[0].parameter, "start_time");
        // The only parameter whose words it shares: taken.
        assert_eq!(m.parameters[1].parameter, "appointment_id");
        let why = |a: &str| {
            m.refused
                .iter()
                .find(|r| r.alias == a)
                .map(|r| r.why.clone())
                .unwrap()
        };
        assert!(why("book").contains("near enough"));
        assert!(why("appointment").contains("ambiguous"));
        assert!(why("old_tool").contains("shadow"));
        assert!(why("limit").contains("near enough"));
        let back: AliasMap = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn similarity_reads_words_and_spelling() {
        assert!(similarity("read_file", "readFile") > 0.99);
        assert!(similarity("get_weather", "weather_get") >= 0.99);
        assert!(similarity("delete_repo", "create_issue") < 0.5);
    }
}
