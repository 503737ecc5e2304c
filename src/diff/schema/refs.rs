//! Local `$ref`s followed, so a change behind a reference is judged where the argument uses it
//! (pydantic and zod emit `$defs` + `$ref` for every nested model).

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// References followed in a row from one node at most (`a` → `b` → …); a longer chain is left
/// as it is and compared by its `$ref` text.
const MAX_CHAIN: usize = 16;

/// One side's schema root, against which its `#/…` references resolve.
#[derive(Clone, Copy)]
pub(super) struct Refs<'a> {
    root: &'a Value,
}

/// A node with its own `$ref` chain followed.
pub(super) struct Resolved<'v> {
    pub value: Cow<'v, Value>,
    /// The references followed, in order: a recursive schema repeats a pair of chains.
    pub chain: Vec<String>,
    /// A `#/…` reference that names nothing in this side's root.
    pub missing: Option<String>,
}

impl<'a> Refs<'a> {
    pub fn new(root: &'a Value) -> Self {
        Refs { root }
    }

    /// The node its `$ref`s point at, the node's own keywords beside the reference laid over
    /// it (a `description` next to `$ref` is the one the model reads). Remote references and
    /// anchors are not followed: the node stays as it is.
    pub fn resolve<'v>(&self, node: &'v Value) -> Resolved<'v>
    where
        'a: 'v,
    {
        let mut out = Resolved {
            value: Cow::Borrowed(node),
            chain: Vec::new(),
            missing: None,
        };
        while let Some(r) = reference(&out.value) {
            if out.chain.len() >= MAX_CHAIN || out.chain.iter().any(|c| c == r) {
                break;
            }
            let Some(target) = self.target(r) else {
                if r.starts_with("#/") {
                    out.missing = Some(r.to_string());
                }
                break;
            };
            let r = r.to_string();
            out.value = overlay(target, &out.value);
            out.chain.push(r);
        }
        out
    }

    /// What a local reference points at: `#` is the root, `#/a/b` a JSON pointer, its
    /// segments percent-encoded as URI fragments are.
    fn target(&self, r: &str) -> Option<&'a Value> {
        let fragment = r.strip_prefix('#')?;
        let pointer = percent_encoding::percent_decode_str(fragment)
            .decode_utf8()
            .ok()?;
        if pointer.is_empty() {
            Some(self.root)
        } else if pointer.starts_with('/') {
            self.root.pointer(&pointer)
        } else {
            None // an `$anchor` name: not followed
        }
    }

    /// Do the two roots resolve some reference used in either to different schemas? Only then
    /// can two equal subtrees differ once their references are followed.
    pub fn differ(&self, other: &Refs<'_>) -> bool {
        let mut used = BTreeSet::new();
        collect(self.root, &mut used);
        collect(other.root, &mut used);
        used.iter()
            .any(|r| r.starts_with('#') && self.target(r) != other.target(r))
    }
}

fn reference(v: &Value) -> Option<&str> {
    v.as_object()?.get("$ref")?.as_str()
}

/// The referenced schema with the referring node's other keywords over it.
fn overlay<'v>(target: &'v Value, node: &Value) -> Cow<'v, Value> {
    let siblings: Map<String, Value> = node
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.as_str() != "$ref")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    if siblings.is_empty() {
        return Cow::Borrowed(target);
    }
    match target {
        Value::Object(t) => {
            let mut merged = t.clone();
            merged.extend(siblings);
            Cow::Owned(Value::Object(merged))
        }
        Value::Bool(true) => Cow::Owned(Value::Object(siblings)),
        _ => Cow::Borrowed(target),
    }
}

/// Every `$ref` string in a value, however deep.
fn collect(v: &Value, into: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                into.insert(r.to_string());
            }
            m.values().for_each(|x| collect(x, into));
        }
        Value::Array(a) => a.iter().for_each(|x| collect(x, into)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_resolve_through_chains_with_their_siblings_over_them() {
        let root = json!({
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string", "description": "B"},
                      "sp ace": {"type": "integer"}, "loop": {"$ref": "#/$defs/loop"}},
        });
        let refs = Refs::new(&root);
        let resolve = |v: Value| {
            let r = refs.resolve(&v);
            (r.value.into_owned(), r.chain, r.missing)
        };
        let (value, chain, _) = resolve(json!({"$ref": "#/$defs/a", "description": "mine"}));
        assert_eq!(value, json!({"type": "string", "description": "mine"}));
        assert_eq!(chain, ["#/$defs/a", "#/$defs/b"]);
        let (value, ..) = resolve(json!({"$ref": "#/$defs/sp%20ace"}));
        assert_eq!(value, json!({"type": "integer"}));
        // A reference to itself stops; a missing one is named; a remote one is left alone.
        let (_, chain, _) = resolve(json!({"$ref": "#/$defs/loop"}));
        assert_eq!(chain, ["#/$defs/loop"]);
        let (.., missing) = resolve(json!({"$ref": "#/$defs/gone"}));
        assert_eq!(missing.as_deref(), Some("#/$defs/gone"));
        let remote = json!({"$ref": "https://example.com/s.json"});
        let r = refs.resolve(&remote);
        assert!(r.missing.is_none() && r.chain.is_empty());
        assert_eq!(*r.value, remote);
    }
}
