//! Deterministic post-processing: annotations the description contradicts.
//!
//! Only the description's leading verb is read — the action it says the tool performs. Verbs
//! further on are usually boundaries ("does not modify", "use `write_file` to write") and would
//! flag careful descriptions. Two contradictions are checked: `readOnlyHint: true` on a tool whose
//! action changes state, and `destructiveHint: false` on one whose action deletes.

use serde::{Deserialize, Serialize};

use super::quality::AnnotationValues;
use crate::text::verbs::{MUTATING_VERBS, NOT_VERBS};
use crate::tools::Tool;

/// Actions that destroy what they touch.
pub const DESTRUCTIVE_VERBS: &[&str] = &[
    "delete",
    "remove",
    "drop",
    "destroy",
    "erase",
    "purge",
    "wipe",
    "truncate",
    "overwrite",
];

/// One hint the description contradicts, and the word that does it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Contradiction {
    /// The annotation, as declared: `readOnlyHint` or `destructiveHint`.
    pub hint: String,
    pub value: bool,
    /// The description's leading verb, as written.
    pub verb: String,
}

/// The base form `v` of the word `w`, for the regular English inflections ("creates", "created",
/// "creating", "deletes", "dropped").
fn inflects(w: &str, v: &str) -> bool {
    let base = v.strip_suffix('e');
    let Some(rest) = w.strip_prefix(base.unwrap_or(v)) else {
        return false;
    };
    let last = v.chars().last().map(String::from).unwrap_or_default();
    match (base.is_some(), rest) {
        (true, "e" | "es" | "ed" | "ing") | (false, "" | "s" | "es" | "ed" | "ing") => true,
        (false, r) => r == format!("{last}ed") || r == format!("{last}ing"),
        _ => false,
    }
}

fn leading_verb(description: &str) -> Option<String> {
    description
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .find(|w| !NOT_VERBS.contains(&w.as_str()))
}

/// What the annotations declare that the description's action contradicts.
pub fn find(t: &Tool, hints: &AnnotationValues) -> Vec<Contradiction> {
    let Some(verb) = t.description.as_deref().and_then(leading_verb) else {
        return Vec::new();
    };
    let is = |list: &[&str]| list.iter().any(|v| inflects(&verb, v));
    let mut out = Vec::new();
    if hints.read_only == Some(true) && (is(MUTATING_VERBS) || is(DESTRUCTIVE_VERBS)) {
        out.push(Contradiction {
            hint: "readOnlyHint".into(),
            value: true,
            verb: verb.clone(),
        });
    }
    if hints.destructive == Some(false) && is(DESTRUCTIVE_VERBS) {
        out.push(Contradiction {
            hint: "destructiveHint".into(),
            value: false,
            verb,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(description: &str, annotations: serde_json::Value) -> Vec<(String, bool, String)> {
        let t = Tool::from_value(
            &json!({"name": "t", "description": description, "annotations": annotations}),
            "t",
            "",
        )
        .unwrap();
        find(&t, &AnnotationValues::of(&t))
            .into_iter()
            .map(|c| (c.hint, c.value, c.verb))
            .collect()
    }

    #[test]
    fn the_spec_contradiction_example_is_flagged() {
        // create_record, readOnlyHint: true, "Creates a new record in the database".
        assert_eq!(
            of(
                "Creates a new record in the database",
                json!({"readOnlyHint": true})
            ),
            vec![("readOnlyHint".into(), true, "creates".into())]
        );
    }

    #[test]
    fn deleting_without_the_destructive_hint_is_flagged_and_both_can_hold() {
        assert_eq!(
            of("Delete a file.", json!({"destructiveHint": false})),
            vec![("destructiveHint".into(), false, "delete".into())]
        );
        assert_eq!(
            of(
                "Removes the branch.",
                json!({"readOnlyHint": true, "destructiveHint": false})
            )
            .len(),
            2
        );
        assert_eq!(
            of("Dropping a table.", json!({"destructiveHint": false})).len(),
            1
        );
    }

    #[test]
    fn agreeing_undeclared_or_later_verbs_are_not_contradictions() {
        assert!(
            of(
                "Read a file. Does not modify it.",
                json!({"readOnlyHint": true})
            )
            .is_empty()
        );
        assert!(of("Creates a record.", json!({"readOnlyHint": false})).is_empty());
        assert!(of("Creates a record.", json!({})).is_empty());
        assert!(of("Delete a file.", json!({"destructiveHint": true})).is_empty());
        // "setting" is not the action of "Settings of the server".
        assert!(of("Settings of the server.", json!({"readOnlyHint": true})).is_empty());
        // A non-boolean hint is undeclared.
        assert!(of("Creates a record.", json!({"readOnlyHint": "yes"})).is_empty());
        // Not a prefix match: "address" is not "add", "updated_at" leading is not a verb form.
        assert!(of("Address lookup.", json!({"readOnlyHint": true})).is_empty());
    }

    #[test]
    fn inflections() {
        for (w, v) in [
            ("create", "create"),
            ("creates", "create"),
            ("created", "create"),
            ("creating", "create"),
            ("deletes", "delete"),
            ("drop", "drop"),
            ("dropped", "drop"),
            ("dropping", "drop"),
            ("pushes", "push"),
            ("sets", "set"),
        ] {
            assert!(inflects(w, v), "{w} {v}");
        }
        for (w, v) in [("settings", "set"), ("address", "add"), ("creat", "create")] {
            assert!(!inflects(w, v), "{w} {v}");
        }
    }
}
