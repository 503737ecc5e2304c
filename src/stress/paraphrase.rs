//! `--llm-paraphrase N`: N meaning-preserving rewrites of each description, drafted by the
//! configured model and then applied like any other perturbation (`perturb::Paraphrase`).

use std::collections::BTreeMap;

use serde_json::json;

use super::perturb::Paraphrase;
use crate::console::Console;
use crate::error::Result;
use crate::llm::json::{JsonLlm, JsonTask};
use crate::tools::{Tool, ToolSet};

/// The system prompt, versioned in `prompts/` (its sha256 is in the report).
pub const PROMPT: &str = include_str!("../../prompts/paraphrase.v1.md");
pub const PROMPT_FILE: &str = "prompts/paraphrase.v1.md";

/// Rewrites longer than this many times the original (plus slack) are not paraphrases.
const MAX_GROWTH: usize = 3;

/// One variation per rewrite, so the N rewrites differ from each other and small models get a
/// concrete instruction instead of "be diverse".
pub const VARIATIONS: [&str; 5] = [
    "Use other verbs and nouns than the original.",
    "Change the sentence order and how the first sentence starts.",
    "Write it more formally, as reference documentation would.",
    "Write it more plainly, as you would explain it to a colleague.",
    "Make it a little more concise without losing any fact.",
];

/// The user message for rewrite `index` (0-based). Earlier rewrites are not shown: a small model
/// copies what it is shown; repeats are rejected by `check` and re-asked instead.
pub fn user_message(tool: &Tool, index: usize) -> String {
    format!(
        "Tool: {}\nOriginal: {}\nVariation: {}",
        tool.name,
        serde_json::to_string(tool.description_text()).expect("json"),
        VARIATIONS[index % VARIATIONS.len()]
    )
}

pub fn schema(original: &str) -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "paraphrase": {"type": "string", "minLength": 1, "maxLength": original.chars().count() * MAX_GROWTH + 200}
        },
        "required": ["paraphrase"],
        "additionalProperties": false,
    })
}

/// Words a rewrite must keep verbatim: identifiers (`read_text_file`, `dryRun`, anything in
/// backticks) and words in capitals (DEPRECATED, [FILE]) — the facts small models drop first.
pub fn key_terms(original: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in original.split_whitespace() {
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        let identifier = w.contains('_')
            || (w.chars().next().is_some_and(char::is_lowercase)
                && w.chars().any(char::is_uppercase));
        let shouting = w.chars().filter(|c| c.is_alphabetic()).count() >= 3
            && w.chars().all(|c| !c.is_lowercase());
        if (identifier || shouting) && !out.iter().any(|o| o == w) {
            out.push(w.to_string());
        }
    }
    out
}

fn norm(s: &str) -> String {
    s.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Validate one rewrite beyond the schema: new (not the original, not an earlier rewrite) and
/// keeping every key term.
pub fn check(
    v: &serde_json::Value,
    original: &str,
    earlier: &[String],
) -> std::result::Result<String, String> {
    let text = v["paraphrase"].as_str().unwrap_or("").trim().to_string();
    if text.is_empty() {
        return Err("/paraphrase: empty".into());
    }
    if norm(&text) == norm(original) {
        return Err("/paraphrase: identical to the original; use different words".into());
    }
    if earlier.iter().any(|e| norm(e) == norm(&text)) {
        return Err("/paraphrase: repeats an earlier rewrite; write a different one".into());
    }
    let missing: Vec<String> = key_terms(original)
        .into_iter()
        .filter(|k| !text.contains(k.as_str()))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/paraphrase: dropped {}; keep them verbatim",
            missing.join(", ")
        ));
    }
    Ok(text)
}

/// Draft `n` paraphrases for every tool with a description (only those in `only`, when given),
/// one request per rewrite. Returns `n` perturbations, `paraphrase-1` … `paraphrase-n`.
pub async fn draft(
    llm: &JsonLlm,
    tools: &ToolSet,
    only: &[String],
    n: u32,
    console: &dyn Console,
) -> Result<Vec<Paraphrase>> {
    let mut by_index: Vec<BTreeMap<String, String>> = vec![BTreeMap::new(); n as usize];
    for tool in &tools.tools {
        if (!only.is_empty() && !only.contains(&tool.name)) || tool.description_text().is_empty() {
            continue;
        }
        let original = tool.description_text();
        let mut earlier: Vec<String> = Vec::new();
        for (i, slot) in by_index.iter_mut().enumerate() {
            let task = JsonTask {
                name: "paraphrase",
                system: PROMPT,
                user: user_message(tool, i),
                schema: schema(original),
            };
            let v = llm
                .complete(&task, |v| check(v, original, &earlier).map(|_| ()))
                .await?;
            let text = check(&v, original, &earlier).expect("checked by complete");
            slot.insert(tool.name.clone(), text.clone());
            earlier.push(text);
        }
        console.note(&format!(
            "driftgate: drafted {n} paraphrase(s) of {}",
            tool.name
        ));
    }
    Ok(by_index
        .into_iter()
        .enumerate()
        .map(|(i, by_tool)| Paraphrase {
            id: format!("paraphrase-{}", i + 1),
            model: llm.model().to_string(),
            by_tool,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_rejects_copies_repeats_and_dropped_facts() {
        let orig = "Read a file. DEPRECATED: use read_text_file.";
        let ok = json!({"paraphrase": "Returns a file's text. DEPRECATED: prefer read_text_file."});
        assert!(check(&ok, orig, &[]).is_ok());
        let copy = json!({"paraphrase": "read a  file. DEPRECATED: use read_text_file."});
        assert!(
            check(&copy, orig, &[])
                .unwrap_err()
                .contains("identical to the original")
        );
        let earlier = vec!["Returns a file's text. DEPRECATED: prefer read_text_file.".to_string()];
        assert!(
            check(&ok, orig, &earlier)
                .unwrap_err()
                .contains("repeats an earlier")
        );
        let dropped = json!({"paraphrase": "Returns the text of a file."});
        assert_eq!(
            check(&dropped, orig, &[]).unwrap_err(),
            "/paraphrase: dropped DEPRECATED, read_text_file; keep them verbatim"
        );
    }

    #[test]
    fn key_terms_are_identifiers_and_capitals() {
        assert_eq!(
            key_terms("Use `dryRun` or read_text_file. Prefixes [FILE] and [DIR]; MIME type. A b."),
            ["dryRun", "read_text_file", "FILE", "DIR", "MIME"]
        );
    }

    #[test]
    fn user_message_varies_by_index() {
        let t = Tool::from_value(
            &json!({"name": "read", "description": "Read a file."}),
            "t",
            "",
        )
        .unwrap();
        assert_eq!(
            user_message(&t, 0),
            "Tool: read\nOriginal: \"Read a file.\"\nVariation: Use other verbs and nouns than the original."
        );
        assert!(user_message(&t, 6).ends_with(VARIATIONS[1]));
    }
}
