//! Pair the tools of base and head, detect renames, classify every change by the law.

pub mod law;
pub mod schema;
pub mod shift;

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use law::{Kind, LAW, Rule, Severity, rule};

use crate::text::tokens::name_tokens;
use crate::tools::{Tool, ToolSet};
use law::RuleId;

/// One classified change of one tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Change {
    pub rule: law::RuleId,
    pub kind: Kind,
    pub severity: Severity,
    /// JSON pointer inside the tool definition ("" for whole-tool changes).
    pub pointer: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    /// For a description whose meaning moved (`description-meaning-changed`,
    /// `param-description-meaning-changed`): what moved, one entry per `shift` rule.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shifts: Vec<shift::Shift>,
}

impl Change {
    fn new(
        rule_id: RuleId,
        pointer: &str,
        message: String,
        before: Option<Value>,
        after: Option<Value>,
    ) -> Change {
        let r = rule_id.rule();
        Change {
            rule: r.id,
            kind: r.kind,
            severity: r.severity,
            pointer: pointer.to_string(),
            message,
            before,
            after,
            shifts: Vec::new(),
        }
    }

    /// The severity of the change as text alone: a description whose meaning moved is first a
    /// description change (`unknown`); the meaning rules' `high` is the gate's meaning path.
    pub fn text_severity(&self) -> Severity {
        match self.rule {
            RuleId::DescriptionMeaningChanged => RuleId::DescriptionChanged.rule().severity,
            RuleId::ParamDescriptionMeaningChanged => {
                RuleId::ParamDescriptionChanged.rule().severity
            }
            _ => self.severity,
        }
    }

    /// Reclassify a description change whose words show its meaning moved (`shift`): the law's
    /// `description-meaning-changed` (or the parameter's), the shifts listed in the message.
    fn with_shifts(&mut self, shifts: Vec<shift::Shift>) {
        if shifts.is_empty() {
            return;
        }
        let (id, what) = match self.rule {
            RuleId::DescriptionChanged => (RuleId::DescriptionMeaningChanged, "description"),
            _ => (
                RuleId::ParamDescriptionMeaningChanged,
                "parameter description",
            ),
        };
        let r = id.rule();
        self.rule = r.id;
        self.kind = r.kind;
        self.severity = r.severity;
        let said: Vec<String> = shifts
            .iter()
            .map(|s| format!("{} ({})", s.rule.id(), s.detail))
            .collect();
        self.message = format!("{what} changed meaning: {}", said.join("; "));
        self.shifts = shifts;
    }
}

/// Read every changed description for a shift in meaning (`shift`); siblings are base's tools,
/// indexed only when some description changed.
fn classify_meaning(tools: &mut [ToolDiff], base: &ToolSet) {
    let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_string);
    let changed = |c: &Change| {
        matches!(
            c.rule,
            RuleId::DescriptionChanged | RuleId::ParamDescriptionChanged
        )
    };
    if !tools.iter().any(|t| t.changes.iter().any(changed)) {
        return;
    }
    let siblings = shift::Siblings::new(base);
    let none = shift::Siblings::none();
    for t in tools.iter_mut() {
        let name = t.base_name.clone().unwrap_or_else(|| t.name.clone());
        for c in t.changes.iter_mut().filter(|c| changed(c)) {
            let (Some(old), Some(new)) = (text(&c.before), text(&c.after)) else {
                continue;
            };
            let set = if c.rule == RuleId::DescriptionChanged {
                &siblings
            } else {
                &none
            };
            c.with_shifts(shift::shifts(&old, &new, &name, set));
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Added,
    Removed,
    Renamed,
    Changed,
}

/// Everything that changed about one tool (paired by name or by rename detection).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolDiff {
    /// The name at head, or at base for a removed tool.
    pub name: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_name: Option<String>,
    /// Rename evidence in [0, 1] for renamed tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rename_score: Option<f64>,
    pub changes: Vec<Change>,
}

impl ToolDiff {
    pub fn max_severity(&self) -> Severity {
        self.changes
            .iter()
            .map(|c| c.severity)
            .max()
            .unwrap_or(Severity::Info)
    }

    pub fn has_kind(&self, kind: Kind) -> bool {
        self.changes.iter().any(|c| c.kind == kind)
    }

    /// True when the text an agent reads to choose this tool changed (name, description, params).
    pub fn routing_text_changed(&self) -> bool {
        self.changes.iter().any(|c| {
            matches!(
                c.kind,
                Kind::Description | Kind::ParamDescription | Kind::Renamed | Kind::Title
            ) && c.rule != RuleId::DescriptionWhitespace
        }) || self.changes.iter().any(|c| {
            matches!(
                c.rule,
                RuleId::PropertyAddedOptional
                    | RuleId::PropertyAddedRequired
                    | RuleId::PropertyRemoved
            )
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diff {
    pub tools: Vec<ToolDiff>,
    pub unchanged: usize,
}

impl Diff {
    pub fn max_severity(&self) -> Option<Severity> {
        self.tools.iter().map(ToolDiff::max_severity).max()
    }

    pub fn changes(&self) -> impl Iterator<Item = (&ToolDiff, &Change)> {
        self.tools
            .iter()
            .flat_map(|t| t.changes.iter().map(move |c| (t, c)))
    }
}

/// Minimum evidence for pairing a removed and an added tool as a rename.
pub const RENAME_THRESHOLD: f64 = 0.5;

pub fn diff(base: &ToolSet, head: &ToolSet) -> Diff {
    // Name indexes: pairing by name is linear, not a scan of the other side per tool.
    let head_by_name: HashMap<&str, &Tool> =
        head.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let base_names: HashSet<&str> = base.tools.iter().map(|t| t.name.as_str()).collect();
    let mut tools = Vec::new();
    let mut unchanged = 0;
    for b in &base.tools {
        if let Some(h) = head_by_name.get(b.name.as_str()) {
            let changes = compare_tools(b, h);
            if changes.is_empty() {
                unchanged += 1;
            } else {
                tools.push(ToolDiff {
                    name: h.name.clone(),
                    status: Status::Changed,
                    base_name: None,
                    head_name: None,
                    rename_score: None,
                    changes,
                });
            }
        }
    }
    let removed: Vec<&Tool> = base
        .tools
        .iter()
        .filter(|t| !head_by_name.contains_key(t.name.as_str()))
        .collect();
    let added: Vec<&Tool> = head
        .tools
        .iter()
        .filter(|t| !base_names.contains(t.name.as_str()))
        .collect();
    let renames = match_renames(&removed, &added);
    let renamed_from: BTreeSet<&str> = renames
        .iter()
        .map(|(r, _, _)| removed[*r].name.as_str())
        .collect();
    let renamed_to: BTreeSet<&str> = renames
        .iter()
        .map(|(_, a, _)| added[*a].name.as_str())
        .collect();
    for (ri, ai, score) in &renames {
        let (b, h) = (removed[*ri], added[*ai]);
        let mut changes = vec![Change::new(
            RuleId::ToolRenamed,
            "/name",
            format!("renamed `{}` → `{}`", b.name, h.name),
            Some(Value::String(b.name.clone())),
            Some(Value::String(h.name.clone())),
        )];
        changes.extend(compare_tools(b, h));
        tools.push(ToolDiff {
            name: h.name.clone(),
            status: Status::Renamed,
            base_name: Some(b.name.clone()),
            head_name: Some(h.name.clone()),
            rename_score: Some(round3(*score)),
            changes,
        });
    }
    for b in removed
        .iter()
        .filter(|t| !renamed_from.contains(t.name.as_str()))
    {
        tools.push(ToolDiff {
            name: b.name.clone(),
            status: Status::Removed,
            base_name: None,
            head_name: None,
            rename_score: None,
            changes: vec![Change::new(
                RuleId::ToolRemoved,
                "",
                format!("tool `{}` removed", b.name),
                None,
                None,
            )],
        });
    }
    for h in added
        .iter()
        .filter(|t| !renamed_to.contains(t.name.as_str()))
    {
        tools.push(ToolDiff {
            name: h.name.clone(),
            status: Status::Added,
            base_name: None,
            head_name: None,
            rename_score: None,
            changes: vec![Change::new(
                RuleId::ToolAdded,
                "",
                format!("tool `{}` added", h.name),
                None,
                None,
            )],
        });
    }
    classify_meaning(&mut tools, base);
    // Most severe first, then by name: the order every renderer shows.
    tools.sort_by(|a, b| {
        b.max_severity()
            .cmp(&a.max_severity())
            .then_with(|| a.name.cmp(&b.name))
    });
    Diff { tools, unchanged }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// All changes between two definitions of the same tool (name differences excluded).
pub fn compare_tools(b: &Tool, h: &Tool) -> Vec<Change> {
    let mut out = Vec::new();
    if b.description != h.description {
        let ws = normalise_ws(b.description_text()) == normalise_ws(h.description_text());
        out.push(Change::new(
            if ws {
                RuleId::DescriptionWhitespace
            } else {
                RuleId::DescriptionChanged
            },
            "/description",
            if ws {
                "description changed in whitespace only".into()
            } else {
                "description changed".into()
            },
            b.description.clone().map(Value::String),
            h.description.clone().map(Value::String),
        ));
    }
    if b.title != h.title {
        out.push(Change::new(
            RuleId::TitleChanged,
            "/title",
            "title changed".into(),
            b.title.clone().map(Value::String),
            h.title.clone().map(Value::String),
        ));
    }
    for finding in schema::compare(&b.input_schema, &h.input_schema, "/inputSchema") {
        out.push(Change::new(
            finding.rule,
            &finding.pointer,
            finding.message,
            finding.before,
            finding.after,
        ));
    }
    match (&b.output_schema, &h.output_schema) {
        (None, Some(s)) => out.push(Change::new(
            RuleId::OutputSchemaAdded,
            "/outputSchema",
            "output schema declared".into(),
            None,
            Some(s.clone()),
        )),
        (Some(s), None) => out.push(Change::new(
            RuleId::OutputSchemaRemoved,
            "/outputSchema",
            "output schema removed".into(),
            Some(s.clone()),
            None,
        )),
        (Some(x), Some(y)) if x != y => out.push(Change::new(
            RuleId::OutputSchemaChanged,
            "/outputSchema",
            "output schema changed".into(),
            Some(x.clone()),
            Some(y.clone()),
        )),
        _ => {}
    }
    annotations(b.annotations.as_ref(), h.annotations.as_ref(), &mut out);
    let keys: BTreeSet<&String> = b.extra.keys().chain(h.extra.keys()).collect();
    for k in keys {
        if b.extra.get(k) != h.extra.get(k) {
            out.push(Change::new(
                RuleId::OtherFieldChanged,
                &format!("/{}", schema::escape(k)),
                format!("field `{k}` changed"),
                b.extra.get(k).cloned(),
                h.extra.get(k).cloned(),
            ));
        }
    }
    out
}

/// Hints whose flip changes what an agent believes about safety.
const SAFETY_HINTS: [&str; 2] = ["readOnlyHint", "destructiveHint"];
const OTHER_HINTS: [&str; 2] = ["idempotentHint", "openWorldHint"];

fn annotations(
    b: Option<&Map<String, Value>>,
    h: Option<&Map<String, Value>>,
    out: &mut Vec<Change>,
) {
    if b == h {
        return;
    }
    let empty = Map::new();
    if b.is_none_or(Map::is_empty) {
        // Declaring annotations where none were is information, not a flip.
        out.push(Change::new(
            RuleId::AnnotationsDeclared,
            "/annotations",
            "annotations declared".into(),
            None,
            h.map(|m| Value::Object(m.clone())),
        ));
        return;
    }
    let (b, h) = (b.unwrap_or(&empty), h.unwrap_or(&empty));
    let keys: BTreeSet<&String> = b.keys().chain(h.keys()).collect();
    for k in keys {
        let (x, y) = (b.get(k), h.get(k));
        if x == y {
            continue;
        }
        let id = match (x, y) {
            (None, Some(_)) => RuleId::AnnotationAdded,
            (Some(_), None) => RuleId::AnnotationRemoved,
            _ if SAFETY_HINTS.contains(&k.as_str()) => RuleId::AnnotationSafetyFlipped,
            _ if OTHER_HINTS.contains(&k.as_str()) => RuleId::AnnotationHintChanged,
            _ => RuleId::AnnotationOtherChanged,
        };
        let msg = match (x, y) {
            (Some(x), Some(y)) => format!("`{k}` {x} → {y}"),
            (None, Some(y)) => format!("`{k}` added ({y})"),
            (Some(x), None) => format!("`{k}` removed (was {x})"),
            _ => unreachable!(),
        };
        out.push(Change::new(
            id,
            &format!("/annotations/{}", schema::escape(k)),
            msg,
            x.cloned(),
            y.cloned(),
        ));
    }
}

fn normalise_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Greedy one-to-one matching of removed and added tools by rename evidence, best first.
/// Removed × added pairs scored for renames at most (each a word diff of two texts). A head that
/// replaces hundreds of tools at once is no rename to find, and 500 × 500 pairs took most of two
/// minutes: past this, the tools are reported as removed and added.
pub const MAX_RENAME_PAIRS: usize = 20_000;

fn match_renames(removed: &[&Tool], added: &[&Tool]) -> Vec<(usize, usize, f64)> {
    if removed.len().saturating_mul(added.len()) > MAX_RENAME_PAIRS {
        return Vec::new();
    }
    let mut cands = Vec::new();
    for (i, r) in removed.iter().enumerate() {
        for (j, a) in added.iter().enumerate() {
            let s = rename_score(r, a);
            if s >= RENAME_THRESHOLD {
                cands.push((i, j, s));
            }
        }
    }
    cands.sort_by(|x, y| y.2.total_cmp(&x.2).then(x.0.cmp(&y.0)).then(x.1.cmp(&y.1)));
    let (mut used_r, mut used_a) = (BTreeSet::new(), BTreeSet::new());
    let mut out = Vec::new();
    for (i, j, s) in cands {
        if !used_r.contains(&i) && !used_a.contains(&j) {
            used_r.insert(i);
            used_a.insert(j);
            out.push((i, j, s));
        }
    }
    out
}

/// Evidence that `a` is `r` under a new name, in [0, 1]: name tokens, the words of the
/// description and parameter texts, and how well each parameter finds a counterpart (by name
/// tokens or by an unchanged description, since renames often rename parameters too).
pub fn rename_score(r: &Tool, a: &Tool) -> f64 {
    let name = name_similarity(&r.name, &a.name);
    let text = text_similarity(&body_text(r), &body_text(a));
    let params = param_similarity(&r.params(), &a.params());
    0.3 * name + 0.5 * text + 0.2 * params
}

/// Description and parameter texts, without the tool name (the name is scored on its own).
fn body_text(t: &Tool) -> String {
    let mut s = t.description_text().to_string();
    for (p, d) in t.params() {
        s.push('\n');
        s.push_str(&p);
        if let Some(d) = d {
            s.push_str(": ");
            s.push_str(&d);
        }
    }
    s
}

fn param_similarity(a: &[(String, Option<String>)], b: &[(String, Option<String>)]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let one = |x: &(String, Option<String>), y: &(String, Option<String>)| -> f64 {
        let by_name = name_similarity(&x.0, &y.0);
        let by_desc = match (&x.1, &y.1) {
            (Some(d), Some(e)) => text_similarity(d, e),
            _ => 0.0,
        };
        by_name.max(by_desc)
    };
    let best = |from: &[(String, Option<String>)], to: &[(String, Option<String>)]| -> f64 {
        from.iter()
            .map(|x| to.iter().map(|y| one(x, y)).fold(0.0, f64::max))
            .sum()
    };
    (best(a, b) + best(b, a)) / (a.len() + b.len()) as f64
}

fn name_similarity(a: &str, b: &str) -> f64 {
    let (ta, tb) = (name_tokens(a), name_tokens(b));
    if ta == tb {
        return 1.0;
    }
    let sa: BTreeSet<String> = ta.into_iter().collect();
    let sb: BTreeSet<String> = tb.into_iter().collect();
    jaccard(&sa, &sb)
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    a.intersection(b).count() as f64 / a.union(b).count() as f64
}

fn text_similarity(a: &str, b: &str) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    f64::from(similar::TextDiff::from_words(a, b).ratio())
}
