//! `fix --llm N`: rewrites drafted by the router's model from the same evidence as the offline
//! generators (the drafting half only), in JSON, validated, then verified by replay like them.

use serde_json::json;

use super::{Candidate, Evidence, new_facts};
use crate::error::Result;
use crate::llm::json::{JsonLlm, JsonTask};

/// The system prompt, versioned in `prompts/` (its sha256 is in the report's notes).
pub const PROMPT: &str = include_str!("../../prompts/fix.v1.md");
pub const PROMPT_FILE: &str = "prompts/fix.v1.md";

/// A rewrite longer than this many times the old description (plus slack) is not a repair.
const MAX_GROWTH: usize = 3;

/// One variation per rewrite, so the N drafts differ.
const VARIATIONS: [&str; 3] = [
    "Put the restored purpose right after the kept sentences.",
    "Lead with the restored purpose, then the kept sentences.",
    "Add one sentence naming when to use this tool rather than the tool that took the requests.",
];

fn user_message(e: &Evidence, keep: &[String], index: usize) -> String {
    let lost: Vec<serde_json::Value> = e
        .lost
        .iter()
        .map(|m| json!({"request": m.prompt, "went_to": m.to.as_deref().unwrap_or("(no tool)")}))
        .collect();
    let others: Vec<serde_json::Value> = e
        .siblings
        .iter()
        .map(|(n, d)| json!({"tool": n, "description": d}))
        .collect();
    format!(
        "{}\nVariation: {}",
        serde_json::to_string_pretty(&json!({
            "tool": e.tool,
            "description_before": e.base,
            "description_now": e.head,
            "keep": keep,
            "requests_now_lost": lost,
            "tools_that_took_them": others,
        }))
        .expect("json"),
        VARIATIONS[index % VARIATIONS.len()]
    )
}

fn schema(e: &Evidence) -> serde_json::Value {
    let most = e.base.chars().count().max(e.head.chars().count()) * MAX_GROWTH + 200;
    json!({
        "type": "object",
        "properties": {"rewrite": {"type": "string", "minLength": 1, "maxLength": most}},
        "required": ["rewrite"],
        "additionalProperties": false,
    })
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A draft beyond the schema: not head again, not an earlier draft, every kept sentence word for
/// word, nothing hidden.
pub fn check(
    v: &serde_json::Value,
    e: &Evidence,
    keep: &[String],
    earlier: &[String],
) -> std::result::Result<String, String> {
    let text = v["rewrite"].as_str().unwrap_or("").trim().to_string();
    if norm(&text) == norm(&e.head) {
        return Err("/rewrite: identical to the current description; restore what it lost".into());
    }
    if earlier.iter().any(|x| norm(x) == norm(&text)) {
        return Err("/rewrite: repeats an earlier rewrite; write a different one".into());
    }
    if crate::text::unicode::has_hidden(&text) {
        return Err("/rewrite: holds invisible or control characters; use plain text".into());
    }
    let missing: Vec<&String> = keep
        .iter()
        .filter(|k| !norm(&text).contains(&norm(k)))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/rewrite: dropped the kept sentence(s) {}; keep them word for word",
            missing
                .iter()
                .map(|m| serde_json::to_string(m).expect("json"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(text)
}

/// `n` rewrites of `e`'s tool by `llm`, `llm-1` … `llm-n`. A model that never answers validly
/// is an incomplete measurement (exit 3), as every drafting task is.
pub async fn draft(llm: &JsonLlm, e: &Evidence, n: u32) -> Result<Vec<Candidate>> {
    let keep = new_facts(&e.base, &e.head);
    let mut earlier: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for i in 0..n as usize {
        let task = JsonTask {
            name: "fix",
            system: PROMPT,
            user: user_message(e, &keep, i),
            schema: schema(e),
        };
        let v = llm
            .complete(&task, |v| check(v, e, &keep, &earlier).map(|_| ()))
            .await?;
        let text = check(&v, e, &keep, &earlier).expect("checked by complete");
        earlier.push(text.clone());
        out.push(Candidate {
            id: format!("llm-{}", i + 1),
            text,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence() -> Evidence {
        Evidence {
            tool: "schedule_appointment".into(),
            base: "Schedule a new appointment.".into(),
            head: "Book a slot.".into(),
            lost: Vec::new(),
            siblings: Vec::new(),
            partner: None,
        }
    }

    #[test]
    fn a_draft_keeps_heads_sentences_and_hides_nothing() {
        let e = evidence();
        let keep = new_facts(&e.base, &e.head);
        let ok = json!({"rewrite": "Book a slot.  Schedule a new appointment for a patient."});
        assert_eq!(
            check(&ok, &e, &keep, &[]).unwrap(),
            "Book a slot.  Schedule a new appointment for a patient."
        );
        let dropped = json!({"rewrite": "Schedule a new appointment."});
        assert_eq!(
            check(&dropped, &e, &keep, &[]).unwrap_err(),
            "/rewrite: dropped the kept sentence(s) \"Book a slot.\"; keep them word for word"
        );
        let same = json!({"rewrite": "Book  a slot."});
        assert!(
            check(&same, &e, &keep, &[])
                .unwrap_err()
                .contains("identical")
        );
        let hidden = json!({"rewrite": "Book a slot.\u{200b} Schedule one."});
        assert!(
            check(&hidden, &e, &keep, &[])
                .unwrap_err()
                .contains("invisible")
        );
        let earlier = vec!["Book a slot. Schedule a new appointment for a patient.".to_string()];
        assert!(
            check(&ok, &e, &keep, &earlier)
                .unwrap_err()
                .contains("repeats")
        );
    }

    #[test]
    fn the_message_carries_the_drafting_evidence_only() {
        let mut e = evidence();
        e.lost = vec![super::super::Moved {
            prompt: "Set up a visit".into(),
            to: Some("reschedule_appointment".into()),
        }];
        let m = user_message(&e, &new_facts(&e.base, &e.head), 0);
        assert!(m.contains("\"keep\": [\n    \"Book a slot.\"\n  ]"), "{m}");
        assert!(m.contains("\"went_to\": \"reschedule_appointment\""), "{m}");
        assert!(m.ends_with(VARIATIONS[0]), "{m}");
    }
}
