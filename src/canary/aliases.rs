//! The alias map of a rollout's traffic, matched by meaning: an invented name's words against
//! each real tool's (or parameter's) name words and the first sentence of its description, as
//! the embedder reads them. Spelling alone maps `book_appointment` to `get_appointment`; the
//! meaning of "book" is what `schedule_appointment` does.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::rollout::{Arm, Rollout};
use crate::embed::{Embedder, cosine};
use crate::error::Result;
use crate::tools::alias::{AliasMap, Invented, Nearness, name_words};

/// Text the embedder reads for a real name: its words, then the first sentence of its
/// description.
fn described(name: &str, description: Option<&str>) -> String {
    let words = name_words(name).join(" ");
    match description.map(first_sentence).filter(|d| !d.is_empty()) {
        Some(d) => format!("{words}: {d}"),
        None => words,
    }
}

fn first_sentence(d: &str) -> &str {
    let d = d.trim();
    match d.find(". ") {
        Some(i) => &d[..=i],
        None => d,
    }
}

/// Cosines between invented names and real ones, computed once.
pub struct Meaning {
    model: String,
    /// (invented text, real text) → cosine.
    scores: HashMap<(String, String), f64>,
    /// Tool → its embedded text; (tool, parameter) → its embedded text.
    tool_text: BTreeMap<String, String>,
    param_text: BTreeMap<(String, String), String>,
}

fn fold(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

impl Meaning {
    /// Embed what `invented` holds and every real name it could mean, among `head`'s
    /// definitions (name → definition).
    pub async fn of(
        head: &BTreeMap<&str, &Value>,
        invented: &Invented,
        embedder: &dyn Embedder,
    ) -> Result<Meaning> {
        let tool_text: BTreeMap<String, String> = head
            .iter()
            .map(|(n, d)| {
                let desc = d.get("description").and_then(Value::as_str);
                (n.to_string(), described(n, desc))
            })
            .collect();
        let mut param_text = BTreeMap::new();
        for (tool, _) in invented.parameters.keys() {
            let Some(props) = head
                .get(tool.as_str())
                .and_then(|d| d.pointer("/inputSchema/properties"))
                .and_then(Value::as_object)
            else {
                continue;
            };
            for (p, schema) in props {
                let desc = schema.get("description").and_then(Value::as_str);
                param_text.insert((tool.clone(), p.clone()), described(p, desc));
            }
        }
        let mut pairs: Vec<(String, String)> = Vec::new();
        for alias in invented.tools.keys() {
            let a = name_words(alias).join(" ");
            pairs.extend(tool_text.values().map(|t| (a.clone(), t.clone())));
        }
        for (tool, alias) in invented.parameters.keys() {
            let a = name_words(alias).join(" ");
            for ((t, _), text) in &param_text {
                if t == tool {
                    pairs.push((a.clone(), text.clone()));
                }
            }
        }
        let texts: Vec<String> = pairs
            .iter()
            .flat_map(|(a, b)| [a.clone(), b.clone()])
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect();
        let mut scores = HashMap::new();
        if !texts.is_empty() {
            let vectors = embedder.embed(&texts).await?;
            let row: HashMap<&str, usize> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| (t.as_str(), i))
                .collect();
            for (a, b) in pairs {
                let c = cosine(vectors.row(row[a.as_str()]), vectors.row(row[b.as_str()]));
                scores.insert((a, b), c as f64);
            }
        }
        Ok(Meaning {
            model: embedder.id().to_string(),
            scores,
            tool_text,
            param_text,
        })
    }

    fn score(&self, alias: &str, real: &str, text: Option<&String>) -> f64 {
        // The same name spelt another way is that name, whatever the model says.
        if fold(alias) == fold(real) {
            return 1.0;
        }
        let a = name_words(alias).join(" ");
        text.and_then(|t| self.scores.get(&(a, t.clone())))
            .copied()
            .unwrap_or(0.0)
    }
}

impl Nearness for Meaning {
    fn method(&self) -> String {
        format!(
            "meaning: cosine ({}) of the invented name's words and each real name's words with the first sentence of its description; the same name spelt otherwise is 1",
            self.model
        )
    }
    fn tool(&self, alias: &str, tool: &str) -> f64 {
        self.score(alias, tool, self.tool_text.get(tool))
    }
    fn parameter(&self, tool: &str, alias: &str, parameter: &str) -> f64 {
        let text = self
            .param_text
            .get(&(tool.to_string(), parameter.to_string()));
        self.score(alias, parameter, text)
    }
    fn floor(&self) -> f64 {
        0.5
    }
    fn margin(&self) -> f64 {
        0.1
    }
}

/// The alias map of what the traffic invented, matched by meaning against head's definitions
/// (what agents will be served once the rollout completes); no alias may be a tool name of
/// either side.
pub async fn map(r: &Rollout, invented: &Invented, embedder: &dyn Embedder) -> Result<AliasMap> {
    let all: BTreeSet<String> = r.sets.values().flatten().cloned().collect();
    map_for(&r.side(Arm::Head), &all, invented, embedder).await
}

/// The alias map against `head`'s definitions (name → definition); `all_names`, every tool name
/// of any version, are never aliases.
pub async fn map_for(
    head: &BTreeMap<&str, &Value>,
    all_names: &BTreeSet<String>,
    invented: &Invented,
    embedder: &dyn Embedder,
) -> Result<AliasMap> {
    let schemas: BTreeMap<String, Vec<String>> = head
        .iter()
        .map(|(name, def)| {
            let params = def
                .pointer("/inputSchema/properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            (name.to_string(), params)
        })
        .collect();
    let near = Meaning::of(head, invented, embedder).await?;
    Ok(AliasMap::build(invented, &schemas, all_names, &near))
}

/// The invented name in a confusion's choice (`replay::judge::Outcome::choice`: "NAME (not
/// offered…)"); MCP names hold no space, so the name is all before it.
fn not_offered(chosen: &str) -> Option<&str> {
    chosen.split_once(" (not offered").map(|(name, _)| name)
}

/// What a `check` replay invented at head: tool names it called that were not offered (the
/// confusions' "NAME (not offered…)") and parameter names per tool, counted.
pub fn invented_in(routing: &crate::replay::compare::Routing) -> Invented {
    let mut inv = Invented::default();
    for c in &routing.head_confusions {
        if let Some(name) = not_offered(&c.chosen) {
            *inv.tools.entry(name.to_string()).or_default() += u64::from(c.count);
        }
    }
    for i in routing.calls.iter().flat_map(|c| &c.invented) {
        if i.head > 0 {
            inv.parameters
                .insert((i.tool.clone(), i.name.clone()), i.head);
        }
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::judge::Outcome;

    #[test]
    fn an_invented_name_is_read_back_from_the_choice_the_replay_records() {
        let o = Outcome::Hallucinated {
            name: "book_slot".into(),
            nearest: Some("schedule_appointment".into()),
        };
        assert_eq!(not_offered(&o.choice()), Some("book_slot"));
        let o = Outcome::Hallucinated {
            name: "x".into(),
            nearest: None,
        };
        assert_eq!(not_offered(&o.choice()), Some("x"));
        assert_eq!(not_offered("schedule_appointment"), None);
        assert_eq!(first_sentence("Book a slot. Then more."), "Book a slot.");
        assert_eq!(
            described("startTime", Some("When. Local.")),
            "start time: When."
        );
    }
}
