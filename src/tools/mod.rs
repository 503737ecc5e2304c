//! Tool model: what an MCP server says about its tools, kept whole.
//!
//! A `Tool` keeps the fields the spec names and every other field it finds, so a vendor key or
//! `_meta` edit is diffed rather than silently dropped.

pub mod alias;
pub mod lock;
pub mod validate;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// The named fields of an MCP tool definition, in the order the spec lists them.
/// Tools in one set at most (a real server lists tens; 50,000 is a hostile or broken head, and
/// every stage past loading is at least linear in it).
pub const MAX_TOOLS: usize = 50_000;

pub const KNOWN_FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    /// Kept as a map: vendor annotation keys (e.g. `category`) must survive.
    pub annotations: Option<Map<String, Value>>,
    /// Every other top-level field (`_meta`, vendor keys), in the order found.
    pub extra: Map<String, Value>,
}

impl Tool {
    /// Parse one tool object; `ptr` is its JSON pointer inside `source` for error messages.
    pub fn from_value(value: &Value, source: &str, ptr: &str) -> Result<Tool> {
        let obj = value
            .as_object()
            .ok_or_else(|| Error::shape(source, ptr, expected("a tool object", value)))?;
        let name = match obj.get("name") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) => {
                return Err(Error::shape(
                    source,
                    &format!("{ptr}/name"),
                    "expected a non-empty tool name",
                ));
            }
            Some(v) => {
                return Err(Error::shape(
                    source,
                    &format!("{ptr}/name"),
                    expected("string", v),
                ));
            }
            None => {
                return Err(Error::shape(
                    source,
                    ptr,
                    "expected a tool object with a \"name\" field, found none",
                ));
            }
        };
        let opt_string = |key: &str| -> Result<Option<String>> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(v) => Err(Error::shape(
                    source,
                    &format!("{ptr}/{key}"),
                    expected("string", v),
                )),
            }
        };
        let title = opt_string("title")?;
        let description = opt_string("description")?;
        let input_schema = match obj.get("inputSchema") {
            Some(v @ Value::Object(_)) => v.clone(),
            // Some servers omit inputSchema for no-argument tools, or send null (said as a
            // warning by `ToolSet::from_array`); the meaning is "no arguments".
            None | Some(Value::Null) => Value::Object(Map::from_iter([(
                "type".to_string(),
                Value::String("object".into()),
            )])),
            Some(v) => {
                return Err(Error::shape(
                    source,
                    &format!("{ptr}/inputSchema"),
                    expected("object", v),
                ));
            }
        };
        let output_schema = match obj.get("outputSchema") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(v) => {
                return Err(Error::shape(
                    source,
                    &format!("{ptr}/outputSchema"),
                    expected("object", v),
                ));
            }
        };
        let annotations = match obj.get("annotations") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m.clone()),
            Some(v) => {
                return Err(Error::shape(
                    source,
                    &format!("{ptr}/annotations"),
                    expected("object", v),
                ));
            }
        };
        let extra = obj
            .iter()
            .filter(|(k, _)| !KNOWN_FIELDS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Tool {
            name,
            title,
            description,
            input_schema,
            output_schema,
            annotations,
            extra,
        })
    }

    /// The definition back as JSON, named fields first, then the extras in their found order.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::String(self.name.clone()));
        if let Some(t) = &self.title {
            m.insert("title".into(), Value::String(t.clone()));
        }
        if let Some(d) = &self.description {
            m.insert("description".into(), Value::String(d.clone()));
        }
        m.insert("inputSchema".into(), self.input_schema.clone());
        if let Some(o) = &self.output_schema {
            m.insert("outputSchema".into(), o.clone());
        }
        if let Some(a) = &self.annotations {
            m.insert("annotations".into(), Value::Object(a.clone()));
        }
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    pub fn description_text(&self) -> &str {
        self.description.as_deref().unwrap_or("")
    }

    /// Top-level parameter names and their descriptions, in schema order.
    pub fn params(&self) -> Vec<(String, Option<String>)> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(k, v)| {
                        let d = v
                            .get("description")
                            .and_then(Value::as_str)
                            .map(String::from);
                        (k.clone(), d)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The text an agent reads to choose this tool: name, description, parameter names and
    /// descriptions. Used for "full tool text" drift and by the semantic router.
    pub fn routing_text(&self) -> String {
        let mut s = self.name.clone();
        if let Some(t) = &self.title {
            s.push_str(" (");
            s.push_str(t);
            s.push(')');
        }
        s.push_str(": ");
        s.push_str(self.description_text());
        for (p, d) in self.params() {
            s.push_str(&format!("\n- {p}"));
            if let Some(d) = d {
                s.push_str(": ");
                s.push_str(&d);
            }
        }
        s
    }
}

/// How a JSON value is named in "expected X, found Y" messages.
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(crate) fn expected(what: &str, found: &Value) -> String {
    format!("expected {what}, found {}", json_kind(found))
}

/// An ordered set of tools with unique names, as one side of a comparison sees it.
#[derive(Debug, Clone, Default)]
pub struct ToolSet {
    pub tools: Vec<Tool>,
    /// Name → position, built on the first [`ToolSet::get`]. `tools` is public and may change
    /// after that, so a hit is checked and a miss is confirmed by a scan: never wrong, and
    /// constant time for a name that is there (drift looks up every changed tool on both sides).
    index: std::sync::OnceLock<std::collections::HashMap<String, usize>>,
    /// What the set broke of the spec the way real servers do, read leniently and said (e.g.
    /// `"inputSchema": null`, read as taking no arguments).
    pub warnings: Vec<String>,
}

impl PartialEq for ToolSet {
    fn eq(&self, other: &Self) -> bool {
        self.tools == other.tools
    }
}

impl From<Vec<Tool>> for ToolSet {
    fn from(tools: Vec<Tool>) -> Self {
        ToolSet {
            tools,
            index: Default::default(),
            warnings: Vec::new(),
        }
    }
}

impl ToolSet {
    /// Parse an array of tool objects found at `ptr` in `source`. Duplicate names are an error
    /// naming both positions, because pairing by name would otherwise be ambiguous.
    pub fn from_array(items: &[Value], source: &str, ptr: &str) -> Result<ToolSet> {
        if items.len() > MAX_TOOLS {
            return Err(Error::shape(
                source,
                ptr,
                format!(
                    "{} tools; driftgate takes at most {MAX_TOOLS} in one set",
                    items.len()
                ),
            ));
        }
        let mut tools: Vec<Tool> = Vec::with_capacity(items.len());
        let mut warnings = Vec::new();
        let mut seen: std::collections::HashMap<String, usize> =
            std::collections::HashMap::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let here = format!("{ptr}/{i}");
            let tool = Tool::from_value(item, source, &here)?;
            // github-mcp-server shipped this for a no-argument tool; refusing the whole PR for it
            // helps nobody, reading it as "no arguments" is what the tool meant.
            if item.get("inputSchema").is_some_and(Value::is_null) {
                warnings.push(format!(
                    "{source}: tool {:?} ({here}/inputSchema) has \"inputSchema\": null, which the MCP spec does not allow; read as taking no arguments",
                    tool.name
                ));
            }
            if let Some(&j) = seen.get(&tool.name) {
                return Err(Error::shape(
                    source,
                    &format!("{here}/name"),
                    format!(
                        "duplicate tool name {:?} (also at {ptr}/{j}); tool names must be unique",
                        tool.name
                    ),
                ));
            }
            seen.insert(tool.name.clone(), i);
            tools.push(tool);
        }
        let mut set = ToolSet::from(tools);
        set.warnings = warnings;
        Ok(set)
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        let index = self.index.get_or_init(|| {
            let mut m = std::collections::HashMap::with_capacity(self.tools.len());
            for (i, t) in self.tools.iter().enumerate() {
                m.entry(t.name.clone()).or_insert(i);
            }
            m
        });
        match index.get(name).and_then(|&i| self.tools.get(i)) {
            Some(t) if t.name == name => Some(t),
            _ => self.tools.iter().find(|t| t.name == name),
        }
    }

    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// The calendar example's base tools, for unit tests; read at run time (an `include_str!` would
/// embed examples/ in the binary).
#[cfg(test)]
pub(crate) fn calendar_example() -> ToolSet {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/calendar/tools.base.json"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    ToolSet::from_array(v["tools"].as_array().unwrap(), "calendar", "").unwrap()
}

/// Whether a file driftgate writes (a lockfile, a rollout) says it is format `version` under
/// `marker`: `Ok(false)` when the marker is absent, an error at `/marker` when it names another
/// version (`what` names the format in it: "lockfile", "rollout format").
pub fn format_version(
    value: &Value,
    marker: &str,
    version: u64,
    source: &str,
    what: &str,
) -> Result<bool> {
    match value.get(marker) {
        Some(Value::Number(n)) if n.as_u64() == Some(version) => Ok(true),
        Some(v) => Err(Error::shape(
            source,
            &format!("/{marker}"),
            format!("expected {what} version {version}, found {v}"),
        )),
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_finds_by_name_even_after_the_list_changed() {
        let v: Vec<Value> = (0..50)
            .map(|i| serde_json::json!({"name": format!("t{i}")}))
            .collect();
        let mut set = ToolSet::from_array(&v, "t", "").unwrap();
        assert_eq!(set.get("t42").map(|t| t.name.as_str()), Some("t42"));
        assert!(set.get("nope").is_none());
        // The index was built; the public list changes under it.
        set.tools.swap(0, 42);
        set.tools[1].name = "renamed".into();
        assert_eq!(set.get("t42").map(|t| t.name.as_str()), Some("t42"));
        assert_eq!(set.get("t0").map(|t| t.name.as_str()), Some("t0"));
        assert!(set.get("t1").is_none());
        assert_eq!(set.get("renamed").map(|t| t.name.as_str()), Some("renamed"));
        assert_eq!(set, set.clone());
    }

    #[test]
    fn a_set_past_the_cap_is_refused_and_duplicates_are_found_in_one_pass() {
        let many: Vec<Value> = (0..=MAX_TOOLS)
            .map(|i| serde_json::json!({"name": format!("t{i}")}))
            .collect();
        let e = ToolSet::from_array(&many, "big.json", "/tools")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "big.json: /tools: {} tools; driftgate takes at most {MAX_TOOLS} in one set",
                MAX_TOOLS + 1
            )
        );
        let mut dup: Vec<Value> = many[..MAX_TOOLS].to_vec();
        dup[MAX_TOOLS - 1] = serde_json::json!({"name": "t3"});
        let started = std::time::Instant::now();
        let e = ToolSet::from_array(&dup, "d.json", "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("duplicate tool name \"t3\" (also at /3)"), "{e}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
    use serde_json::json;

    #[test]
    fn a_null_input_schema_is_read_as_no_arguments_and_said() {
        let set = ToolSet::from_array(
            &[
                json!({"name": "get_me", "inputSchema": null}),
                json!({"name": "list", "inputSchema": {"type": "object"}}),
            ],
            "tools.json",
            "/tools",
        )
        .unwrap();
        assert_eq!(set.tools[0].input_schema, json!({"type": "object"}));
        assert_eq!(
            set.warnings,
            [
                "tools.json: tool \"get_me\" (/tools/0/inputSchema) has \"inputSchema\": null, which the MCP spec does not allow; read as taking no arguments"
            ]
        );
        // Any other non-object is still refused, naming the pointer.
        let e = ToolSet::from_array(&[json!({"name": "x", "inputSchema": 3})], "t", "/tools")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/tools/0/inputSchema"), "{e}");
    }

    #[test]
    fn unknown_fields_are_kept_and_round_trip() {
        let v = json!({"name":"a","description":"d","inputSchema":{"type":"object"},
            "annotations":{"readOnlyHint":true,"category":"files"},"_meta":{"k":1},"x-vendor":"v"});
        let t = Tool::from_value(&v, "t.json", "/tools/0").unwrap();
        assert_eq!(t.extra.len(), 2);
        assert_eq!(t.annotations.as_ref().unwrap()["category"], "files");
        assert_eq!(t.to_value(), v);
    }

    #[test]
    fn shape_errors_name_file_pointer_and_expectation() {
        let v = json!({"name":"a","inputSchema":"nope"});
        let e = Tool::from_value(&v, "tools.json", "/tools/3").unwrap_err();
        assert_eq!(
            e.to_string(),
            "tools.json: /tools/3/inputSchema: expected object, found string"
        );
        let e = Tool::from_value(&json!({"description":"x"}), "t.json", "/0").unwrap_err();
        assert!(
            e.to_string()
                .contains("/0: expected a tool object with a \"name\"")
        );
        let e = Tool::from_value(&json!({"name":5}), "t.json", "/0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: /0/name: expected string, found number"
        );
    }

    #[test]
    fn duplicate_names_name_both_positions() {
        let items = vec![
            json!({"name":"a"}),
            json!({"name":"b"}),
            json!({"name":"a"}),
        ];
        let e = ToolSet::from_array(&items, "t.json", "/tools").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: /tools/2/name: duplicate tool name \"a\" (also at /tools/0); tool names must be unique"
        );
    }

    #[test]
    fn routing_text_lists_params() {
        let v = json!({"name":"read","description":"Read a file","inputSchema":{"type":"object",
            "properties":{"path":{"type":"string","description":"where"},"n":{"type":"number"}}}});
        let t = Tool::from_value(&v, "t", "").unwrap();
        assert_eq!(t.routing_text(), "read: Read a file\n- path: where\n- n");
    }
}
