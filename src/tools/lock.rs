//! driftgate's lockfile: canonical definitions plus per-part hashes, in stable bytes.
//!
//! Tools are sorted by name and keys sorted, so re-locking an unchanged server yields an identical
//! file and the PR diff of it shows only real changes. Hashes are checked on load: a hand-edited
//! definition with a stale hash is an input error, not a silent pass.

use serde_json::{Map, Value, json};

use super::{Tool, ToolSet, expected};
use crate::canon::{hash, sorted};
use crate::error::{Error, Result};

/// The key that identifies a lockfile, and its format version.
pub const MARKER: &str = "driftgate_lock";
pub const VERSION: u64 = 1;

/// The parts hashed separately, so a reviewer sees at a glance which part moved.
pub fn part_hashes(tool: &Tool) -> Map<String, Value> {
    let def = tool.to_value();
    let mut rest = def.as_object().cloned().unwrap_or_default();
    rest.remove("description");
    rest.remove("inputSchema");
    rest.remove("annotations");
    let mut m = Map::new();
    m.insert("definition".into(), Value::String(hash(&def)));
    m.insert(
        "description".into(),
        Value::String(hash(
            &def.get("description").cloned().unwrap_or(Value::Null),
        )),
    );
    m.insert(
        "inputSchema".into(),
        Value::String(hash(&tool.input_schema)),
    );
    m.insert(
        "annotations".into(),
        Value::String(hash(
            &def.get("annotations").cloned().unwrap_or(Value::Null),
        )),
    );
    m.insert("rest".into(), Value::String(hash(&Value::Object(rest))));
    m
}

/// Optional facts about where the tools came from; kept free of timestamps for stable bytes.
#[derive(Debug, Clone, Default)]
pub struct LockMeta {
    pub server_name: Option<String>,
    pub server_version: Option<String>,
}

/// Render a lockfile (pretty, sorted keys, trailing newline).
pub fn render(set: &ToolSet, meta: &LockMeta) -> String {
    let mut tools: Vec<&Tool> = set.tools.iter().collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    let entries: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "hashes": Value::Object(part_hashes(t)),
                "definition": t.to_value(),
            })
        })
        .collect();
    let mut doc = json!({
        MARKER: VERSION,
        "tool_count": tools.len(),
        "tools": entries,
    });
    if meta.server_name.is_some() || meta.server_version.is_some() {
        doc["server"] = json!({"name": meta.server_name, "version": meta.server_version});
    }
    let mut s = serde_json::to_string_pretty(&sorted(&doc)).expect("lockfile serialises");
    s.push('\n');
    // A description's `##[` would be a runner command on stdout; escaped, it is the same value.
    crate::console::runner_safe_json(&s).into_owned()
}

/// Parse and verify a lockfile.
pub fn parse(value: &Value, source: &str) -> Result<ToolSet> {
    if !super::format_version(value, MARKER, VERSION, source, "lockfile")? {
        return Err(Error::shape(
            source,
            "",
            format!(
                "a lockfile (an object with \"{MARKER}\": {VERSION}, written by `driftgate lock`)"
            ),
        ));
    }
    let entries = match value.get("tools") {
        Some(Value::Array(a)) => a,
        Some(v) => return Err(Error::shape(source, "/tools", expected("array", v))),
        None => return Err(Error::shape(source, "", "expected a \"tools\" array")),
    };
    let defs: Vec<Value> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            e.get("definition").cloned().ok_or_else(|| {
                Error::shape(
                    source,
                    &format!("/tools/{i}"),
                    "expected an entry with a \"definition\" object",
                )
            })
        })
        .collect::<Result<_>>()?;
    let set = ToolSet::from_array(&defs, source, "/tools")?;
    for (i, (entry, tool)) in entries.iter().zip(&set.tools).enumerate() {
        match entry.get("name") {
            Some(Value::String(n)) if *n == tool.name => {}
            Some(Value::String(n)) => {
                return Err(Error::shape(
                    source,
                    &format!("/tools/{i}/name"),
                    format!(
                        "the entry is named {n:?} but its definition is {:?} (edited by hand?); \
                         re-run `driftgate lock` to refresh it",
                        tool.name
                    ),
                ));
            }
            Some(v) => {
                return Err(Error::shape(
                    source,
                    &format!("/tools/{i}/name"),
                    expected("string", v),
                ));
            }
            None => {
                return Err(Error::shape(
                    source,
                    &format!("/tools/{i}"),
                    "expected an entry with a \"name\"",
                ));
            }
        }
        let want = part_hashes(tool);
        let Some(have) = entry.get("hashes").and_then(Value::as_object) else {
            return Err(Error::shape(
                source,
                &format!("/tools/{i}/hashes"),
                "expected an object of hashes",
            ));
        };
        for (part, h) in &want {
            if have.get(part) != Some(h) {
                return Err(Error::shape(
                    source,
                    &format!("/tools/{i}/hashes/{part}"),
                    format!(
                        "hash does not match the definition of {:?} (edited by hand?); \
                         re-run `driftgate lock` to refresh it",
                        tool.name
                    ),
                ));
            }
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str, source: &str) -> Result<ToolSet> {
        parse(&serde_json::from_str(text).unwrap(), source)
    }

    fn set() -> ToolSet {
        let v = json!([
            {"name":"b","description":"B","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"_meta":{"k":1}},
            {"name":"a","description":"A","inputSchema":{"properties":{},"type":"object"},"annotations":{"readOnlyHint":true}}
        ]);
        ToolSet::from_array(v.as_array().unwrap(), "t", "").unwrap()
    }

    #[test]
    fn round_trips_and_is_stable() {
        let text = render(&set(), &LockMeta::default());
        let back = parse_text(&text, "lock.json").unwrap();
        assert_eq!(back.names(), vec!["a", "b"]);
        assert_eq!(back.get("b").unwrap().extra["_meta"], json!({"k":1}));
        // Same tools in another order and key order: identical bytes.
        let mut rev = set();
        rev.tools.reverse();
        assert_eq!(render(&rev, &LockMeta::default()), text);
        assert_eq!(render(&back, &LockMeta::default()), text);
    }

    #[test]
    fn stale_hash_is_an_error() {
        let text = render(&set(), &LockMeta::default())
            .replace("\"description\": \"A\"", "\"description\": \"A!\"");
        let e = parse_text(&text, "lock.json").unwrap_err();
        assert!(
            e.to_string().starts_with(
                "lock.json: /tools/0/hashes/definition: hash does not match the definition of \"a\""
            ),
            "{e}"
        );
    }

    #[test]
    fn an_entry_named_otherwise_than_its_definition_is_an_error() {
        let mut doc: Value = serde_json::from_str(&render(&set(), &LockMeta::default())).unwrap();
        doc["tools"][0]["name"] = json!("z");
        let e = parse(&doc, "lock.json").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "lock.json: /tools/0/name: the entry is named \"z\" but its definition is \"a\""
            ),
            "{e}"
        );
    }

    #[test]
    fn wrong_version_is_an_error() {
        let e = parse_text(r#"{"driftgate_lock":9,"tools":[]}"#, "l.json").unwrap_err();
        assert_eq!(
            e.to_string(),
            "l.json: /driftgate_lock: expected lockfile version 1, found 9"
        );
        // Called on a file that is no lockfile, it says what it expected.
        let e = parse(&serde_json::json!({"tools": []}), "l.json").unwrap_err();
        assert!(e.to_string().starts_with("l.json: /: a lockfile"), "{e}");
    }
}
