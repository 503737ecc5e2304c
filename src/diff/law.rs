//! The severity law: every kind of change driftgate detects, with its severity, in one table.
//!
//! Principle (as oasdiff's): a change that narrows what a caller may send breaks callers; a
//! change that widens it does not; what cannot be decided statically is a warning. Text an agent
//! reads to choose a tool is `unknown` until the replay measures it, unless its words show the
//! meaning moved (`shift`: a negation added, a verb swapped for its opposite, …): that is
//! `high`. Safety annotations flipping is `high`: an agent may now run a destructive tool it
//! believed read-only.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Unknown,
    Warning,
    High,
    Breaking,
}

impl crate::choice::Choice for Severity {
    const ALL: &'static [Severity] = &[
        Severity::Info,
        Severity::Unknown,
        Severity::Warning,
        Severity::High,
        Severity::Breaking,
    ];
    fn name(self) -> &'static str {
        self.as_str()
    }
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Unknown => "unknown",
            Severity::Warning => "warning",
            Severity::High => "high",
            Severity::Breaking => "breaking",
        }
    }
}

/// What part of a tool a change touches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Added,
    Removed,
    Renamed,
    Description,
    Title,
    ParamDescription,
    InputSchema,
    OutputSchema,
    Annotations,
    Other,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Added => "added",
            Kind::Removed => "removed",
            Kind::Renamed => "renamed",
            Kind::Description => "description",
            Kind::Title => "title",
            Kind::ParamDescription => "param-description",
            Kind::InputSchema => "input-schema",
            Kind::OutputSchema => "output-schema",
            Kind::Annotations => "annotations",
            Kind::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub id: &'static str,
    pub kind: Kind,
    pub severity: Severity,
    pub summary: &'static str,
}

const fn r(id: &'static str, kind: Kind, severity: Severity, summary: &'static str) -> Rule {
    Rule {
        id,
        kind,
        severity,
        summary,
    }
}

use Kind as K;
use Severity as S;

/// The law. Each row is tested on its old/new pair in `tests/fixtures/law/<rule-id>/`.
pub const LAW: &[Rule] = &[
    r("tool-added", K::Added, S::Info, "a tool was added"),
    r(
        "tool-removed",
        K::Removed,
        S::Breaking,
        "a tool was removed: callers of it fail",
    ),
    r(
        "tool-renamed",
        K::Renamed,
        S::Breaking,
        "a tool was renamed: callers of the old name fail",
    ),
    r(
        "schema-invalid",
        K::InputSchema,
        S::Breaking,
        "a keyword of the new schema has a value of the wrong kind (`type: 7`, `required: \"p\"`): \
         it is no valid JSON Schema, so neither callers nor validators can rely on it",
    ),
    r(
        "description-changed",
        K::Description,
        S::Unknown,
        "the description changed; routing impact is measured by replay",
    ),
    r(
        "description-meaning-changed",
        K::Description,
        S::High,
        "the description's words show its meaning moved (a negation added, a verb swapped for its \
         opposite or a sibling's, a scope word or a number changed, a restriction added or \
         dropped, the purpose gone, a sibling's text): agents may now pick it for other requests \
         or stop picking it (diff::shift; docs/calibration.md § Meaning shifts)",
    ),
    r(
        "description-whitespace",
        K::Description,
        S::Info,
        "the description changed in whitespace only",
    ),
    r(
        "title-changed",
        K::Title,
        S::Info,
        "the display title changed",
    ),
    r(
        "param-description-changed",
        K::ParamDescription,
        S::Unknown,
        "a parameter description changed; the model reads it",
    ),
    r(
        "param-description-meaning-changed",
        K::ParamDescription,
        S::Warning,
        "a parameter description's words show its meaning moved (diff::shift); a warning, not \
         high: the labelled edits that let description shifts gate are of tool descriptions, and \
         nothing measured yet says the rules separate on parameter texts",
    ),
    r(
        "property-added-optional",
        K::InputSchema,
        S::Info,
        "an optional property was added (widening)",
    ),
    r(
        "property-added-required",
        K::InputSchema,
        S::Breaking,
        "a required property was added: old calls lack it",
    ),
    r(
        "property-removed",
        K::InputSchema,
        S::Breaking,
        "a property was removed: old calls that send it may be rejected",
    ),
    r(
        "property-became-required",
        K::InputSchema,
        S::Breaking,
        "an optional property became required",
    ),
    r(
        "property-became-optional",
        K::InputSchema,
        S::Info,
        "a required property became optional (widening)",
    ),
    r(
        "type-narrowed",
        K::InputSchema,
        S::Breaking,
        "the accepted types were narrowed",
    ),
    r(
        "type-widened",
        K::InputSchema,
        S::Info,
        "the accepted types were widened",
    ),
    r(
        "type-changed",
        K::InputSchema,
        S::Breaking,
        "the type changed to one the old did not accept",
    ),
    r(
        "enum-narrowed",
        K::InputSchema,
        S::Breaking,
        "enum values were removed",
    ),
    r(
        "enum-widened",
        K::InputSchema,
        S::Info,
        "enum values were added",
    ),
    r(
        "enum-added",
        K::InputSchema,
        S::Breaking,
        "an enum now restricts a free value",
    ),
    r(
        "enum-removed",
        K::InputSchema,
        S::Info,
        "an enum restriction was lifted",
    ),
    r(
        "bound-tightened",
        K::InputSchema,
        S::Breaking,
        "a bound (min/max/length/items/pattern/uniqueItems) was tightened or added",
    ),
    r(
        "bound-loosened",
        K::InputSchema,
        S::Info,
        "a bound was loosened or removed",
    ),
    r(
        "pattern-changed",
        K::InputSchema,
        S::Breaking,
        "the pattern changed: values it accepted may now be rejected (regex inclusion is not decided)",
    ),
    r(
        "additional-properties-closed",
        K::InputSchema,
        S::Breaking,
        "additionalProperties:false now rejects extra keys",
    ),
    r(
        "additional-properties-opened",
        K::InputSchema,
        S::Info,
        "extra keys are now allowed",
    ),
    r(
        "default-changed",
        K::InputSchema,
        S::Warning,
        "a default changed: calls that omit it behave differently",
    ),
    r(
        "schema-dialect-changed",
        K::InputSchema,
        S::Info,
        "only the $schema dialect URI changed",
    ),
    r(
        "schema-changed",
        K::InputSchema,
        S::Warning,
        "the schema changed in a way that cannot be decided statically",
    ),
    r(
        "output-schema-added",
        K::OutputSchema,
        S::Info,
        "an output schema was declared",
    ),
    r(
        "output-schema-removed",
        K::OutputSchema,
        S::Warning,
        "the output schema was removed",
    ),
    r(
        "output-schema-changed",
        K::OutputSchema,
        S::Warning,
        "the output schema changed",
    ),
    r(
        "annotation-safety-flipped",
        K::Annotations,
        S::High,
        "readOnlyHint or destructiveHint flipped",
    ),
    r(
        "annotation-hint-changed",
        K::Annotations,
        S::Warning,
        "idempotentHint or openWorldHint changed",
    ),
    r(
        "annotations-declared",
        K::Annotations,
        S::Info,
        "annotations were declared where none were",
    ),
    r(
        "annotation-added",
        K::Annotations,
        S::Info,
        "an annotation key was added",
    ),
    r(
        "annotation-removed",
        K::Annotations,
        S::Warning,
        "an annotation was removed; clients fall back to defaults",
    ),
    r(
        "annotation-other-changed",
        K::Annotations,
        S::Info,
        "a non-hint annotation (title, vendor key) changed",
    ),
    r(
        "other-field-changed",
        K::Other,
        S::Info,
        "a non-standard field (_meta, vendor key) changed",
    ),
];

/// Look a rule up by id. Panics on an unknown id: that is a programming error caught by tests.
pub fn rule(id: &str) -> &'static Rule {
    LAW.iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no rule {id:?} in the severity law"))
}

/// A rule's id: always one of [`LAW`]'s, so a report read back stays inside the vocabulary we
/// render. (An alias, because serde's derive takes a field spelled `&str` as borrowed.)
pub type RuleId = &'static str;

/// Read a rule id back from JSON; an id the law does not have is an error, not a guess.
pub fn rule_id<'de, D: Deserializer<'de>>(d: D) -> Result<RuleId, D::Error> {
    crate::choice::known(d, "rule", LAW.iter().map(|r| r.id))
}
