//! The severity law: every kind of change driftgate detects, with its severity, in one table.
//!
//! Principle (as oasdiff's): a change that narrows what a caller may send breaks callers; a
//! change that widens it does not; what cannot be decided statically is a warning. Text an agent
//! reads to choose a tool is `unknown` until the replay measures it, unless its words show the
//! meaning moved (`shift`: a negation added, a verb swapped for its opposite, …): that is
//! `high`. Safety annotations flipping is `high`: an agent may now run a destructive tool it
//! believed read-only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

crate::rule_ids! {
    /// Every rule of the law, by id (the table [`LAW`] gives each its kind, severity and summary).
    pub enum RuleId ("rule") in LAW: Rule {
        ToolAdded = "tool-added",
        ToolRemoved = "tool-removed",
        ToolRenamed = "tool-renamed",
        SchemaInvalid = "schema-invalid",
        DescriptionChanged = "description-changed",
        DescriptionMeaningChanged = "description-meaning-changed",
        DescriptionWhitespace = "description-whitespace",
        TitleChanged = "title-changed",
        ParamDescriptionChanged = "param-description-changed",
        ParamDescriptionMeaningChanged = "param-description-meaning-changed",
        PropertyAddedOptional = "property-added-optional",
        PropertyAddedRequired = "property-added-required",
        PropertyRemoved = "property-removed",
        PropertyBecameRequired = "property-became-required",
        PropertyBecameOptional = "property-became-optional",
        TypeNarrowed = "type-narrowed",
        TypeWidened = "type-widened",
        TypeChanged = "type-changed",
        EnumNarrowed = "enum-narrowed",
        EnumWidened = "enum-widened",
        EnumAdded = "enum-added",
        EnumRemoved = "enum-removed",
        BoundTightened = "bound-tightened",
        BoundLoosened = "bound-loosened",
        PatternChanged = "pattern-changed",
        AdditionalPropertiesClosed = "additional-properties-closed",
        AdditionalPropertiesOpened = "additional-properties-opened",
        DefaultChanged = "default-changed",
        SchemaDialectChanged = "schema-dialect-changed",
        SchemaChanged = "schema-changed",
        OutputSchemaAdded = "output-schema-added",
        OutputSchemaRemoved = "output-schema-removed",
        OutputSchemaChanged = "output-schema-changed",
        AnnotationSafetyFlipped = "annotation-safety-flipped",
        AnnotationHintChanged = "annotation-hint-changed",
        AnnotationsDeclared = "annotations-declared",
        AnnotationAdded = "annotation-added",
        AnnotationRemoved = "annotation-removed",
        AnnotationOtherChanged = "annotation-other-changed",
        OtherFieldChanged = "other-field-changed",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub id: RuleId,
    pub kind: Kind,
    pub severity: Severity,
    pub summary: &'static str,
}

const fn r(id: RuleId, kind: Kind, severity: Severity, summary: &'static str) -> Rule {
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
    r(RuleId::ToolAdded, K::Added, S::Info, "a tool was added"),
    r(
        RuleId::ToolRemoved,
        K::Removed,
        S::Breaking,
        "a tool was removed: callers of it fail",
    ),
    r(
        RuleId::ToolRenamed,
        K::Renamed,
        S::Breaking,
        "a tool was renamed: callers of the old name fail",
    ),
    r(
        RuleId::SchemaInvalid,
        K::InputSchema,
        S::Breaking,
        "a keyword of the new schema has a value of the wrong kind (`type: 7`, `required: \"p\"`): \
         it is no valid JSON Schema, so neither callers nor validators can rely on it",
    ),
    r(
        RuleId::DescriptionChanged,
        K::Description,
        S::Unknown,
        "the description changed; routing impact is measured by replay",
    ),
    r(
        RuleId::DescriptionMeaningChanged,
        K::Description,
        S::High,
        "the description's words show its meaning moved (a negation added, a verb swapped for its \
         opposite or a sibling's, a scope word or a number changed, a restriction added or \
         dropped, the purpose gone, a sibling's text): agents may now pick it for other requests \
         or stop picking it (diff::shift; docs/calibration.md § Meaning shifts)",
    ),
    r(
        RuleId::DescriptionWhitespace,
        K::Description,
        S::Info,
        "the description changed in whitespace only",
    ),
    r(
        RuleId::TitleChanged,
        K::Title,
        S::Info,
        "the display title changed",
    ),
    r(
        RuleId::ParamDescriptionChanged,
        K::ParamDescription,
        S::Unknown,
        "a parameter description changed; the model reads it",
    ),
    r(
        RuleId::ParamDescriptionMeaningChanged,
        K::ParamDescription,
        S::Warning,
        "a parameter description's words show its meaning moved (diff::shift); a warning, not \
         high: the labelled edits that let description shifts gate are of tool descriptions, and \
         nothing measured yet says the rules separate on parameter texts",
    ),
    r(
        RuleId::PropertyAddedOptional,
        K::InputSchema,
        S::Info,
        "an optional property was added (widening)",
    ),
    r(
        RuleId::PropertyAddedRequired,
        K::InputSchema,
        S::Breaking,
        "a required property was added: old calls lack it",
    ),
    r(
        RuleId::PropertyRemoved,
        K::InputSchema,
        S::Breaking,
        "a property was removed: old calls that send it may be rejected",
    ),
    r(
        RuleId::PropertyBecameRequired,
        K::InputSchema,
        S::Breaking,
        "an optional property became required",
    ),
    r(
        RuleId::PropertyBecameOptional,
        K::InputSchema,
        S::Info,
        "a required property became optional (widening)",
    ),
    r(
        RuleId::TypeNarrowed,
        K::InputSchema,
        S::Breaking,
        "the accepted types were narrowed",
    ),
    r(
        RuleId::TypeWidened,
        K::InputSchema,
        S::Info,
        "the accepted types were widened",
    ),
    r(
        RuleId::TypeChanged,
        K::InputSchema,
        S::Breaking,
        "the type changed to one the old did not accept",
    ),
    r(
        RuleId::EnumNarrowed,
        K::InputSchema,
        S::Breaking,
        "enum values were removed",
    ),
    r(
        RuleId::EnumWidened,
        K::InputSchema,
        S::Info,
        "enum values were added",
    ),
    r(
        RuleId::EnumAdded,
        K::InputSchema,
        S::Breaking,
        "an enum now restricts a free value",
    ),
    r(
        RuleId::EnumRemoved,
        K::InputSchema,
        S::Info,
        "an enum restriction was lifted",
    ),
    r(
        RuleId::BoundTightened,
        K::InputSchema,
        S::Breaking,
        "a bound (min/max/length/items/pattern/uniqueItems) was tightened or added",
    ),
    r(
        RuleId::BoundLoosened,
        K::InputSchema,
        S::Info,
        "a bound was loosened or removed",
    ),
    r(
        RuleId::PatternChanged,
        K::InputSchema,
        S::Breaking,
        "the pattern changed: values it accepted may now be rejected (regex inclusion is not decided)",
    ),
    r(
        RuleId::AdditionalPropertiesClosed,
        K::InputSchema,
        S::Breaking,
        "additionalProperties:false now rejects extra keys",
    ),
    r(
        RuleId::AdditionalPropertiesOpened,
        K::InputSchema,
        S::Info,
        "extra keys are now allowed",
    ),
    r(
        RuleId::DefaultChanged,
        K::InputSchema,
        S::Warning,
        "a default changed: calls that omit it behave differently",
    ),
    r(
        RuleId::SchemaDialectChanged,
        K::InputSchema,
        S::Info,
        "only the $schema dialect URI changed",
    ),
    r(
        RuleId::SchemaChanged,
        K::InputSchema,
        S::Warning,
        "the schema changed in a way that cannot be decided statically",
    ),
    r(
        RuleId::OutputSchemaAdded,
        K::OutputSchema,
        S::Info,
        "an output schema was declared",
    ),
    r(
        RuleId::OutputSchemaRemoved,
        K::OutputSchema,
        S::Warning,
        "the output schema was removed",
    ),
    r(
        RuleId::OutputSchemaChanged,
        K::OutputSchema,
        S::Warning,
        "the output schema changed",
    ),
    r(
        RuleId::AnnotationSafetyFlipped,
        K::Annotations,
        S::High,
        "readOnlyHint or destructiveHint flipped",
    ),
    r(
        RuleId::AnnotationHintChanged,
        K::Annotations,
        S::Warning,
        "idempotentHint or openWorldHint changed",
    ),
    r(
        RuleId::AnnotationsDeclared,
        K::Annotations,
        S::Info,
        "annotations were declared where none were",
    ),
    r(
        RuleId::AnnotationAdded,
        K::Annotations,
        S::Info,
        "an annotation key was added",
    ),
    r(
        RuleId::AnnotationRemoved,
        K::Annotations,
        S::Warning,
        "an annotation was removed; clients fall back to defaults",
    ),
    r(
        RuleId::AnnotationOtherChanged,
        K::Annotations,
        S::Info,
        "a non-hint annotation (title, vendor key) changed",
    ),
    r(
        RuleId::OtherFieldChanged,
        K::Other,
        S::Info,
        "a non-standard field (_meta, vendor key) changed",
    ),
];

/// Look a rule up by its id's spelling. Panics on an unknown id: that is a programming error
/// caught by tests.
pub fn rule(id: &str) -> &'static Rule {
    LAW.iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no rule {id:?} in the severity law"))
}
