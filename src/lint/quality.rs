//! Definition quality signals: the deterministic part of the TDQS rubric.
//!
//! Everything here is read off the definition alone: parameter counts and coverage, how deep
//! the required arguments nest, how many choices their unions force, what calling the tool
//! costs the model, and the two hard gates (no description, a description that only repeats
//! the name or title).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canon;
use crate::tools::{Tool, ToolSet};

/// Deepest `$ref` chain / nesting followed; deeper schemas count as this deep.
pub const MAX_DEPTH: usize = 10;

/// Shadow candidates: the dearer tool costs at least this many times the cheaper one …
pub const SHADOW_RATIO: u32 = 2;
/// … and at least this much more.
pub const SHADOW_MIN_DIFFERENCE: u32 = 4;

/// The four MCP hints, read as `true`, `false` or `null` (undeclared, or not a boolean).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationValues {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

impl AnnotationValues {
    pub fn of(t: &Tool) -> AnnotationValues {
        let hint = |k: &str| t.annotations.as_ref()?.get(k)?.as_bool();
        AnnotationValues {
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
            open_world: hint("openWorldHint"),
        }
    }
}

/// Field names follow the published rubric, so numbers can be compared with it directly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolQuality {
    pub name: String,
    pub param_count: usize,
    pub required_param_count: usize,
    pub params_with_descriptions: usize,
    pub params_with_enums: usize,
    /// Percent of parameters with a description, rounded to a whole percent; 100 when there are
    /// none.
    pub schema_description_coverage: f64,
    pub has_nested_objects: bool,
    /// Nesting depth of the required arguments: 1 for a flat object, 0 without a schema (absent,
    /// empty or property-less).
    pub schema_depth: usize,
    pub union_choice_count: usize,
    /// required + 2·max(0, depth − 1) + 2·unions.
    pub invocation_cost: u32,
    pub has_output_schema: bool,
    pub has_annotations: bool,
    /// The four standard hints, each `true`, `false` or `null`.
    pub annotation_values: AnnotationValues,
    pub title_is_meaningful: bool,
    /// First 16 hex digits of the sha256 of the canonical definition's six spec fields (name,
    /// title, description, inputSchema, outputSchema, annotations).
    pub input_hash: String,
    /// Hard gates failed: "No Description", "Tautological Description".
    #[serde(deserialize_with = "gate_names")]
    pub hard_gates: Vec<HardGate>,
    /// Post-processing flags: declared hints the description's action contradicts (kept apart
    /// from the model's smells).
    #[serde(default)]
    pub contradictions: Vec<super::contradiction::Contradiction>,
}

/// A cheap sibling an agent may reach for instead of a costly tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shadow {
    pub dearer: String,
    pub dearer_cost: u32,
    pub cheaper: String,
    pub cheaper_cost: u32,
}

pub const NO_DESCRIPTION: &str = "No Description";
pub const TAUTOLOGICAL_DESCRIPTION: &str = "Tautological Description";
/// Every hard gate, by the name reports show.
pub const HARD_GATES: [&str; 2] = [NO_DESCRIPTION, TAUTOLOGICAL_DESCRIPTION];

/// A hard gate's name: always one of [`HARD_GATES`].
pub type HardGate = &'static str;

fn gate_names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<HardGate>, D::Error> {
    #[derive(Deserialize)]
    struct Name(#[serde(deserialize_with = "gate_name")] HardGate);
    Ok(Vec::<Name>::deserialize(d)?
        .into_iter()
        .map(|n| n.0)
        .collect())
}

pub(crate) fn gate_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<HardGate, D::Error> {
    crate::choice::known(d, "hard gate", HARD_GATES)
}

/// Only the spec's six definition fields count: a server's extra keys (`_meta`, vendor fields) do
/// not make a tool look changed.
pub fn input_hash(t: &Tool) -> String {
    let only: serde_json::Map<String, Value> = t
        .to_value()
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| crate::tools::KNOWN_FIELDS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let h = canon::hash(&Value::Object(only));
    h.trim_start_matches("sha256:")[..16].to_string()
}

pub fn assess(t: &Tool) -> ToolQuality {
    let root = &t.input_schema;
    let mut w = Walker::new(root);
    let top = w.merged(root, &mut Vec::new());
    let param_count = top.properties.len();
    let with_desc = top
        .properties
        .iter()
        .filter(|(_, p)| {
            p.get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.trim().is_empty())
        })
        .count();
    let with_enum = top
        .properties
        .iter()
        .filter(|(_, p)| p.get("enum").is_some() || p.pointer("/items/enum").is_some())
        .count();
    let has_nested = top.properties.iter().any(|(_, p)| w.is_nested(p, 0));
    let required = top.required.len();
    // An absent, empty or property-less schema has nothing to fill in: 0 on every cost signal.
    let (depth, unions, cost) = if param_count == 0 {
        (0, 0, 0)
    } else {
        let depth = w.depth(root, &mut Vec::new(), 0).clamp(1, MAX_DEPTH);
        let unions = w.unions;
        let cost = required as u32 + 2 * (depth as u32 - 1) + 2 * unions as u32;
        (depth, unions, cost)
    };
    let values = AnnotationValues::of(t);
    ToolQuality {
        name: t.name.clone(),
        param_count,
        required_param_count: required,
        params_with_descriptions: with_desc,
        params_with_enums: with_enum,
        schema_description_coverage: if param_count == 0 {
            100.0
        } else {
            (100.0 * with_desc as f64 / param_count as f64).round()
        },
        has_nested_objects: has_nested,
        schema_depth: depth,
        union_choice_count: unions,
        invocation_cost: cost,
        has_output_schema: t.output_schema.is_some(),
        has_annotations: t.annotations.as_ref().is_some_and(|a| !a.is_empty()),
        annotation_values: values,
        title_is_meaningful: title_is_meaningful(t),
        input_hash: input_hash(t),
        hard_gates: hard_gates(t),
        contradictions: super::contradiction::find(t, &values),
    }
}

/// Lower case, `_`/`-` as spaces, whitespace collapsed, a trailing period dropped: "Read_File."
/// and "read file" are the same words.
fn normalise(s: &str) -> String {
    let s = s
        .trim()
        .trim_end_matches('.')
        .to_lowercase()
        .replace(['_', '-'], " ");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A title that only spells out the name ("Read File" for `read_file`) tells an agent nothing.
fn title_is_meaningful(t: &Tool) -> bool {
    let Some(title) = t.title.as_deref().filter(|x| !x.trim().is_empty()) else {
        return false;
    };
    crate::text::terms::name_terms(title) != crate::text::terms::name_terms(&t.name)
}

pub fn hard_gates(t: &Tool) -> Vec<&'static str> {
    let d = t.description.as_deref().unwrap_or("");
    if d.trim().is_empty() {
        return vec![NO_DESCRIPTION];
    }
    let d = normalise(d);
    let same = |x: &str| normalise(x) == d;
    if same(&t.name) || t.title.as_deref().is_some_and(same) {
        return vec![TAUTOLOGICAL_DESCRIPTION];
    }
    Vec::new()
}

/// For each tool, the cheapest sibling it costs at least [`SHADOW_RATIO`]× and
/// [`SHADOW_MIN_DIFFERENCE`] more than (ties broken by name). Both conditions hold for a sibling
/// if they hold for a dearer one, so the answer is the cheapest tool other than itself, or none:
/// the two cheapest are all a tool needs to see (linear, not every pair).
pub fn shadows(q: &[ToolQuality]) -> Vec<Shadow> {
    let order = |x: &&ToolQuality, y: &&ToolQuality| {
        x.invocation_cost
            .cmp(&y.invocation_cost)
            .then_with(|| x.name.cmp(&y.name))
    };
    let mut cheapest: Vec<&ToolQuality> = Vec::with_capacity(3);
    for c in q {
        cheapest.push(c);
        cheapest.sort_by(order);
        cheapest.truncate(2);
    }
    let mut out = Vec::new();
    for d in q {
        let c = cheapest.iter().find(|c| c.name != d.name).filter(|c| {
            d.invocation_cost >= SHADOW_RATIO * c.invocation_cost
                && d.invocation_cost >= c.invocation_cost + SHADOW_MIN_DIFFERENCE
        });
        if let Some(c) = c {
            out.push(Shadow {
                dearer: d.name.clone(),
                dearer_cost: d.invocation_cost,
                cheaper: c.name.clone(),
                cheaper_cost: c.invocation_cost,
            });
        }
    }
    out
}

pub fn assess_all(tools: &ToolSet) -> (Vec<ToolQuality>, Vec<Shadow>) {
    let q: Vec<ToolQuality> = tools.tools.iter().map(assess).collect();
    let s = shadows(&q);
    (q, s)
}

/// An object schema seen through `allOf`: its properties and required names, merged.
#[derive(Default)]
struct Merged<'a> {
    properties: Vec<(&'a str, &'a Value)>,
    required: Vec<&'a str>,
    object: bool,
}

impl<'a> Merged<'a> {
    fn property(&self, name: &str) -> Option<&'a Value> {
        self.properties
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
    }
}

/// Walks a schema resolving local `$ref`s against the root, stopping on cycles and at
/// [`MAX_DEPTH`].
struct Walker<'a> {
    root: &'a Value,
    unions: usize,
}

impl<'a> Walker<'a> {
    fn new(root: &'a Value) -> Self {
        Walker { root, unions: 0 }
    }

    /// Follow `$ref`s (`#`, `#/$defs/X`, `#/definitions/X`, any local pointer; chains too),
    /// pushing each on `path`; returns the target and how many were pushed. `None` for a cycle
    /// (a ref already on the path), a chain deeper than [`MAX_DEPTH`], or a ref that does not
    /// resolve locally; `path` is then as it was.
    fn resolve(&self, mut s: &'a Value, path: &mut Vec<&'a str>) -> Option<(&'a Value, usize)> {
        let mut pushed = 0;
        while let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let target = match r.strip_prefix('#') {
                _ if path.contains(&r) || path.len() >= MAX_DEPTH => None,
                Some("") => Some(self.root),
                Some(ptr) => self.root.pointer(ptr),
                None => None,
            };
            let Some(target) = target else {
                path.truncate(path.len() - pushed);
                return None;
            };
            path.push(r);
            pushed += 1;
            s = target;
        }
        Some((s, pushed))
    }

    fn merged(&self, s: &'a Value, path: &mut Vec<&'a str>) -> Merged<'a> {
        let mut m = Merged::default();
        let Some((s, pushed)) = self.resolve(s, path) else {
            return m;
        };
        if let Some(p) = s.get("properties").and_then(Value::as_object) {
            m.object = true;
            m.properties.extend(p.iter().map(|(k, v)| (k.as_str(), v)));
        }
        if s.get("type").and_then(Value::as_str) == Some("object") {
            m.object = true;
        }
        for r in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !m.required.contains(&r) {
                m.required.push(r);
            }
        }
        for b in s
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let sub = self.merged(b, path);
            m.object |= sub.object;
            for (k, v) in sub.properties {
                if m.property(k).is_none() {
                    m.properties.push((k, v));
                }
            }
            for r in sub.required {
                if !m.required.contains(&r) {
                    m.required.push(r);
                }
            }
        }
        path.truncate(path.len() - pushed);
        m
    }

    /// Depth of the required subtree of `s`: an object is one level plus its deepest required
    /// property; an array is as deep as its items (so an array of objects adds a level); a
    /// union or `not` is as deep as its deepest branch, and each union that forces a real
    /// choice adds its branches − 1 to `self.unions`.
    fn depth(&mut self, s: &'a Value, path: &mut Vec<&'a str>, level: usize) -> usize {
        if level >= MAX_DEPTH {
            return 0;
        }
        let Some((s, pushed)) = self.resolve(s, path) else {
            return 0;
        };
        let m = self.merged(s, path);
        let mut d = 0;
        if m.object {
            let mut deepest = 0;
            for r in &m.required {
                if let Some(p) = m.property(r) {
                    deepest = deepest.max(self.depth(p, path, level + 1));
                }
            }
            d = 1 + deepest;
        }
        match s.get("items") {
            Some(Value::Array(items)) => {
                for i in items {
                    d = d.max(self.depth(i, path, level + 1));
                }
            }
            Some(i @ Value::Object(_)) => d = d.max(self.depth(i, path, level + 1)),
            _ => {}
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = s.get(key).and_then(Value::as_array) {
                self.unions += self.choices(branches, path);
                for b in branches {
                    d = d.max(self.depth(b, path, level + 1));
                }
            }
        }
        if let Some(n) = s.get("not") {
            d = d.max(self.depth(n, path, level + 1));
        }
        path.truncate(path.len() - pushed);
        d
    }

    /// Real choices a union forces: branches − 1, not counting `null` branches (the nullable
    /// idiom) and 0 when every remaining branch is a bare scalar type or constant (the same as a
    /// type array or an enum).
    fn choices(&self, branches: &'a [Value], path: &mut Vec<&'a str>) -> usize {
        let mut real = Vec::new();
        for b in branches {
            let Some((b, pushed)) = self.resolve(b, path) else {
                continue;
            };
            path.truncate(path.len() - pushed);
            if b.get("type").and_then(Value::as_str) != Some("null") {
                real.push(b);
            }
        }
        let scalar = |b: &Value| {
            b.as_object().is_some_and(|o| {
                o.keys().all(|k| {
                    matches!(
                        k.as_str(),
                        "type" | "const" | "enum" | "description" | "title" | "format"
                    )
                }) && !matches!(
                    o.get("type").and_then(Value::as_str),
                    Some("object" | "array")
                )
            })
        };
        if real.iter().all(|b| scalar(b)) {
            0
        } else {
            real.len().saturating_sub(1)
        }
    }

    /// Is this property an object with properties, an array of such, or a union with one?
    fn is_nested(&self, p: &'a Value, level: usize) -> bool {
        let mut path = Vec::new();
        let Some((p, _)) = self.resolve(p, &mut path) else {
            return false;
        };
        let object = |s: &'a Value, path: &mut Vec<&'a str>| {
            let m = self.merged(s, path);
            m.object && !m.properties.is_empty()
        };
        if object(p, &mut path) || p.get("items").is_some_and(|i| object(i, &mut path)) {
            return true;
        }
        level < MAX_DEPTH
            && ["anyOf", "oneOf", "allOf"].iter().any(|k| {
                p.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|bs| bs.iter().any(|b| self.is_nested(b, level + 1)))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(v: Value) -> Tool {
        Tool::from_value(&v, "t", "").unwrap()
    }

    fn schema(s: Value) -> ToolQuality {
        assess(&tool(
            json!({"name": "t", "description": "Does a thing.", "inputSchema": s}),
        ))
    }

    #[test]
    fn worked_example_four_required_scalars_cost_4() {
        let q = schema(
            json!({"type": "object", "required": ["a", "b", "c", "d"], "properties": {
            "a": {"type": "string"}, "b": {"type": "number"}, "c": {"type": "boolean"},
            "d": {"type": "string", "enum": ["x", "y"]}}}),
        );
        assert_eq!(
            (q.required_param_count, q.schema_depth, q.union_choice_count),
            (4, 1, 0)
        );
        assert_eq!(q.invocation_cost, 4);
        assert_eq!(q.params_with_enums, 1);
        assert!(!q.has_nested_objects);
    }

    #[test]
    fn worked_example_nested_depth_3_with_three_branch_union_costs_9() {
        let q = schema(
            json!({"type": "object", "required": ["config"], "properties": {
            "config": {"type": "object", "required": ["target"], "properties": {
                "target": {"oneOf": [
                    {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
                    {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}},
                    {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}
                ]}}}}}),
        );
        assert_eq!(
            (q.required_param_count, q.schema_depth, q.union_choice_count),
            (1, 3, 2)
        );
        assert_eq!(q.invocation_cost, 9);
        assert!(q.has_nested_objects);
    }

    #[test]
    fn only_the_required_subtree_counts_for_depth() {
        let q = schema(json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "string"},
            "opt": {"type": "object", "required": ["x"], "properties": {"x": {"type": "object",
                "properties": {"y": {"type": "string"}}}}}}}));
        assert_eq!(q.schema_depth, 1);
        assert!(q.has_nested_objects, "optional nesting is still nesting");
        // An optional property inside a required object does not deepen it either.
        let q = schema(json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "object", "properties": {"b": {"type": "object", "properties": {}}}}}}));
        assert_eq!(q.schema_depth, 2);
    }

    #[test]
    fn arrays_of_objects_add_a_level_and_arrays_of_scalars_do_not() {
        let q = schema(
            json!({"type": "object", "required": ["edits"], "properties": {
            "edits": {"type": "array", "items": {"type": "object", "required": ["old", "new"],
                "properties": {"old": {"type": "string"}, "new": {"type": "string"}}}}}}),
        );
        assert_eq!(q.schema_depth, 2);
        assert_eq!(q.invocation_cost, 1 + 2);
        let q = schema(
            json!({"type": "object", "required": ["paths"], "properties": {
            "paths": {"type": "array", "items": {"type": "string"}}}}),
        );
        assert_eq!(q.schema_depth, 1);
    }

    #[test]
    fn refs_resolve_against_defs_and_definitions_and_cycles_stop() {
        let q = schema(json!({"type": "object", "required": ["a"], "properties": {
            "a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"type": "object", "required": ["b"], "properties": {"b": {"$ref": "#/definitions/B"}}}},
            "definitions": {"B": {"type": "object", "required": ["c"], "properties": {"c": {"type": "string"}}}}}));
        assert_eq!(q.schema_depth, 3);
        // A tree node whose required child is itself: followed once, then the cycle stops.
        let q = schema(
            json!({"type": "object", "required": ["root"], "properties": {
            "root": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "required": ["child"], "properties": {
                "child": {"$ref": "#/$defs/Node"}}}}}),
        );
        assert_eq!(q.schema_depth, 2);
        // An unresolvable or remote ref is a leaf, not an error.
        let q = schema(
            json!({"type": "object", "required": ["a", "b"], "properties": {
            "a": {"$ref": "#/$defs/Missing"}, "b": {"$ref": "https://example.com/s.json"}}}),
        );
        assert_eq!((q.schema_depth, q.invocation_cost), (1, 2));
    }

    #[test]
    fn depth_is_capped_at_10() {
        let mut s = json!({"type": "string"});
        for _ in 0..15 {
            s = json!({"type": "object", "required": ["x"], "properties": {"x": s}});
        }
        let q = schema(s);
        assert_eq!(q.schema_depth, MAX_DEPTH);
        assert_eq!(q.invocation_cost, 1 + 2 * 9);
    }

    #[test]
    fn all_of_is_merged_and_not_is_traversed() {
        let q = schema(json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "object", "required": ["b"],
                "properties": {"b": {"type": "string"}}}}},
            {"required": ["a"]}]}));
        assert_eq!((q.param_count, q.required_param_count), (1, 1));
        assert_eq!(q.schema_depth, 2);
        let q = schema(json!({"type": "object", "required": ["a"], "properties": {
            "a": {"not": {"type": "object", "required": ["z"], "properties": {"z": {"type": "string"}}}}}}));
        assert_eq!(q.schema_depth, 2);
    }

    #[test]
    fn nullable_idiom_enum_unions_and_type_arrays_are_not_choices() {
        let q = schema(
            json!({"type": "object", "required": ["a", "b", "c", "d"], "properties": {
            "a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "b": {"oneOf": [{"const": "x"}, {"const": "y"}, {"const": "z"}]},
            "c": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            "d": {"type": ["string", "null"]}}}),
        );
        assert_eq!(q.union_choice_count, 0);
        assert_eq!(q.invocation_cost, 4);
        // A nullable object union is still one shape, but two object shapes are a choice.
        let q = schema(json!({"type": "object", "required": ["a"], "properties": {
            "a": {"anyOf": [
                {"type": "object", "properties": {"p": {"type": "string"}}},
                {"type": "object", "properties": {"u": {"type": "string"}}},
                {"type": "null"}]}}}));
        assert_eq!(q.union_choice_count, 1);
        // Unions outside the required subtree cost nothing.
        let q = schema(json!({"type": "object", "properties": {
            "a": {"oneOf": [{"type": "object"}, {"type": "array"}]}}}));
        assert_eq!(q.union_choice_count, 0);
    }

    #[test]
    fn coverage_counts_and_flags() {
        let q = schema(json!({"type": "object"}));
        assert_eq!((q.param_count, q.schema_description_coverage), (0, 100.0));
        assert_eq!(q.invocation_cost, 0);
        // No schema to fill in: depth 0, not the 1 of a flat object (the spec's rule).
        for s in [
            json!({}),
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}}),
        ] {
            let q = schema(s);
            assert_eq!(
                (q.schema_depth, q.union_choice_count, q.invocation_cost),
                (0, 0, 0)
            );
        }
        assert_eq!(
            assess(&tool(json!({"name": "t", "description": "d"}))).schema_depth,
            0
        );
        let q = schema(json!({"type": "object", "properties": {
            "a": {"type": "string", "description": "x"}, "b": {"type": "string", "description": " "},
            "c": {"type": "array", "items": {"enum": [1, 2]}}}}));
        assert_eq!((q.params_with_descriptions, q.params_with_enums), (1, 1));
        // round(1/3 × 100): whole percents, as the spec rounds them.
        assert_eq!(q.schema_description_coverage, 33.0);
        let q = schema(json!({"type": "object", "properties": {
            "a": {"description": "x"}, "b": {"description": "y"}, "c": {}}}));
        assert_eq!(q.schema_description_coverage, 67.0);
        let t = tool(
            json!({"name": "read_file", "title": "Read File", "description": "d",
            "annotations": {"readOnlyHint": true, "destructiveHint": "no", "title": "x", "category": "fs"},
            "outputSchema": {"type": "object"}}),
        );
        let q = assess(&t);
        assert!(q.has_output_schema && q.has_annotations);
        // Normalised to true/false/null: undeclared and non-boolean hints are null.
        assert_eq!(
            serde_json::to_value(q.annotation_values).unwrap(),
            json!({"readOnly": true, "destructive": null, "idempotent": null, "openWorld": null})
        );
        assert!(
            !q.title_is_meaningful,
            "a title that spells the name says nothing"
        );
        let t = tool(json!({"name": "read_file", "title": "Read File (Deprecated)"}));
        assert!(assess(&t).title_is_meaningful);
        assert!(!assess(&tool(json!({"name": "x", "title": "  "}))).title_is_meaningful);
    }

    #[test]
    fn input_hash_covers_exactly_the_six_definition_fields() {
        let a = tool(
            json!({"name": "a", "description": "d", "inputSchema": {"type": "object", "properties": {}}}),
        );
        let b = tool(
            json!({"inputSchema": {"properties": {}, "type": "object"}, "description": "d", "name": "a"}),
        );
        assert_eq!(input_hash(&a), input_hash(&b));
        assert_eq!(input_hash(&a).len(), 16);
        assert!(canon::hash(&a.to_value()).starts_with(&format!("sha256:{}", input_hash(&a))));
        let c = tool(json!({"name": "a", "description": "d."}));
        assert_ne!(input_hash(&a), input_hash(&c));
        // Fields beyond the six do not move it; each of the six does.
        let extra = tool(
            json!({"name": "a", "description": "d", "_meta": {"v": 2}, "icons": [],
            "inputSchema": {"type": "object", "properties": {}}}),
        );
        assert_eq!(input_hash(&extra), input_hash(&a));
        for (k, v) in [
            ("title", json!("T")),
            ("outputSchema", json!({"type": "object"})),
            ("annotations", json!({"readOnlyHint": true})),
        ] {
            let mut d = a.to_value();
            d[k] = v;
            assert_ne!(input_hash(&tool(d)), input_hash(&a), "{k}");
        }
    }

    #[test]
    fn no_and_tautological_descriptions_are_hard_gates() {
        let g = |v: Value| hard_gates(&tool(v));
        assert_eq!(g(json!({"name": "a"})), vec![NO_DESCRIPTION]);
        assert_eq!(
            g(json!({"name": "a", "description": " \n"})),
            vec![NO_DESCRIPTION]
        );
        assert_eq!(
            g(json!({"name": "read_file", "description": "Read file."})),
            vec![TAUTOLOGICAL_DESCRIPTION]
        );
        assert_eq!(
            g(json!({"name": "rf", "title": "Read File", "description": "READ FILE"})),
            vec![TAUTOLOGICAL_DESCRIPTION]
        );
        assert!(g(json!({"name": "read_file", "description": "Read a file."})).is_empty());
    }

    #[test]
    fn shadow_candidates_take_the_cheapest_qualifying_sibling_once() {
        let q = |name: &str, cost: u32| ToolQuality {
            name: name.into(),
            invocation_cost: cost,
            ..schema(json!({}))
        };
        let all = vec![
            q("big", 9),
            q("mid", 4),
            q("small", 1),
            q("tiny", 1),
            q("huge", 12),
        ];
        let s = shadows(&all);
        let pairs: Vec<(&str, &str)> = s
            .iter()
            .map(|x| (x.dearer.as_str(), x.cheaper.as_str()))
            .collect();
        // mid (4) vs small (1): 4 ≥ 2·1 but only 3 more — not a candidate.
        // huge (12) vs mid (4): qualifies, but the cheapest qualifying sibling wins (small; ties by name).
        assert_eq!(pairs, vec![("big", "small"), ("huge", "small")]);
        assert_eq!((s[0].dearer_cost, s[0].cheaper_cost), (9, 1));
        // Exactly 2× and exactly 4 more qualifies.
        let s = shadows(&[q("a", 8), q("b", 4)]);
        assert_eq!(s.len(), 1);
        assert!(shadows(&[q("a", 7), q("b", 4)]).is_empty());
    }

    #[test]
    fn shadows_equal_the_scan_of_every_sibling() {
        let q = |name: String, cost: u32| ToolQuality {
            name,
            invocation_cost: cost,
            ..schema(json!({}))
        };
        // The definition, pair by pair.
        let brute = |all: &[ToolQuality]| -> Vec<(String, String)> {
            all.iter()
                .filter_map(|d| {
                    all.iter()
                        .filter(|c| c.name != d.name)
                        .filter(|c| {
                            d.invocation_cost >= SHADOW_RATIO * c.invocation_cost
                                && d.invocation_cost >= c.invocation_cost + SHADOW_MIN_DIFFERENCE
                        })
                        .min_by(|x, y| {
                            (x.invocation_cost, &x.name).cmp(&(y.invocation_cost, &y.name))
                        })
                        .map(|c| (d.name.clone(), c.name.clone()))
                })
                .collect()
        };
        // Costs from a fixed LCG: many ties, a few cheap ones, sets of 0 to 40 tools.
        let mut x = 7u64;
        for n in 0..40 {
            let all: Vec<ToolQuality> = (0..n)
                .map(|i| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    q(
                        format!("t{}", (x >> 40) % 1000 * 100 + i),
                        ((x >> 33) % 14) as u32,
                    )
                })
                .collect();
            let got: Vec<(String, String)> = shadows(&all)
                .into_iter()
                .map(|s| (s.dearer, s.cheaper))
                .collect();
            assert_eq!(got, brute(&all), "{n} tools");
        }
    }
}
