//! The fix report (`driftgate fix`): for each tool the check failed on routing or call
//! accuracy, the rewrites drafted and what replaying each one measured; rendered by `terminal`
//! and `json`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::gate::{Status, Verdict};
use crate::report::Side;

/// Bumped only on incompatible changes to the fix JSON; additions keep the version.
pub const FIX_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FixReport {
    pub schema_version: u32,
    pub driftgate_version: String,
    pub command: FixCommand,
    /// The check of head against base that the rewrites answer.
    pub check: Verdict,
    pub base: Side,
    pub head: Side,
    pub suite: crate::suite::Identity,
    pub router: crate::route::Identity,
    pub split: Split,
    /// Every rewrite target: the tools the check failed on routing or call accuracy, in the
    /// verdict's order (each failing parameter description after its tool), then the pairs.
    pub tools: Vec<ToolFix>,
    /// Head with every tool's first offered rewrite applied, judged by the gate against base;
    /// absent when nothing is offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<Applied>,
    pub notes: Vec<String>,
}

/// The command that writes a fix report: only `fix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FixCommand {
    Fix,
}

/// `docs/fix.schema.json`: the fix report's JSON Schema.
pub fn json_schema() -> serde_json::Value {
    super::schema_of::<FixReport>(&format!(
        "A driftgate fix report as `fix --format json` writes it, schema_version {FIX_SCHEMA_VERSION}: additions keep the version, an incompatible change bumps it."
    ))
}

/// Which cases drafting read and which verified it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Split {
    /// How the suite was cut (the same cut on every run and machine).
    pub rule: String,
    pub drafting: usize,
    pub held_out: usize,
    /// The held-out cases' ids: drafting read none of them.
    pub held_out_ids: Vec<String>,
}

/// One rewrite target and its rewrites: a failing tool's description, a parameter's description
/// where its call accuracy failed, or the changed tool of a pair the PR made confusable.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ToolFix {
    /// The tool's name at head.
    pub tool: String,
    /// The field the rewrites replace: `description`, or a parameter's description as a JSON
    /// pointer into the tool (`/inputSchema/properties/start_time/description`).
    pub field: String,
    /// The check's rulings that failed the tool (empty for a pair).
    pub failed: Vec<String>,
    /// For a pair: the other tool (head name), which the rewrite must tell this one apart from;
    /// the held-out cases of both judge it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner: Option<String>,
    /// For a pair: why it is one (lint's confusable-pair or shadowing-risk finding the PR
    /// introduced, or replay: an unchanged tool lost its cases to this changed one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    /// What the rewrites were verified on when not head itself: a parameter's, on head with its
    /// tool's offered description rewrite (its calls cannot be right while its routing is wrong).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_on: Option<String>,
    pub base_text: String,
    pub head_text: String,
    /// Head's sentences that base did not have: every rewrite keeps them word for word.
    pub kept: Vec<String>,
    /// The drafting half's cases the tool lost at head: all that drafting read of the suite.
    pub lost: Vec<Lost>,
    pub candidates: Vec<Proposal>,
    /// The offered rewrite ranked first (an index into `candidates`); `None`: nothing offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best: Option<usize>,
}

/// A target as reports name it: "tool" for its description, "tool /inputSchema/…/description"
/// for a parameter's (plain text; each renderer escapes it).
pub fn target_label(tool: &str, field: &str) -> String {
    if field == "description" {
        tool.to_string()
    } else {
        format!("{tool} {field}")
    }
}

impl ToolFix {
    pub fn best(&self) -> Option<&Proposal> {
        self.best.and_then(|i| self.candidates.get(i))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Lost {
    pub id: String,
    pub prompt: String,
    /// What head answered instead (`(none)`: no call).
    pub answered: String,
}

/// One drafted rewrite and what its replay measured.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Proposal {
    /// The generator that drafted it (`draft::GENERATORS`).
    pub generator: String,
    pub summary: String,
    pub text: String,
    /// The tool's held-out cases (with a pair's partner's; call accuracy for a parameter), head
    /// against the rewrite (paired).
    pub held_out: HeldOut,
    /// The gate, base against head with this rewrite, on the held-out cases, the other failing
    /// tools' cases set aside (their own targets' to fix; `applied` judges head with every
    /// offered rewrite on all of them).
    pub gate_held_out: Outcome,
    /// The same on the whole suite (the drafting half included, so no independent evidence).
    pub gate_full: Outcome,
    /// Other tools that lose held-out cases (routing or calls) to the rewrite against head (more
    /// regressed than fixed), each with the count.
    pub other_regressions: Vec<String>,
    /// Injection-scan rules the rewrite brings in (against base).
    pub scan_introduced: Vec<String>,
    /// Lint findings the rewrite brings in (against base), each "rule: message": shown, never
    /// gating (lint never gates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lint_introduced: Vec<String>,
    /// For a pair lint found: whether lint still finds it with the rewrite (shown, never gating:
    /// lint is a proxy, the held-out replay is the measurement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_still_flagged: Option<bool>,
    /// What still fails in `gate_held_out` on other tools the PR changed, each "tool: ruling":
    /// not this rewrite's (a fix of one tool can reveal another's failure); the offer stands,
    /// and `applied` judges head with every offered rewrite whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failing_elsewhere: Vec<String>,
    pub offered: bool,
    /// Why it is not offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HeldOut {
    pub cases: usize,
    /// The tool's accuracy on these cases at base: what a rewrite restores.
    pub base_accuracy: f64,
    pub head_accuracy: f64,
    pub accuracy: f64,
    /// Cases wrong at head and right with the rewrite.
    pub fixed: u64,
    /// Cases right at head and wrong with the rewrite.
    pub regressed: u64,
    /// Exact one-sided sign test for "the rewrite is better than head" on these cases.
    pub p_value_better: f64,
}

/// The gate on head with the offered rewrites applied.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Applied {
    /// The tools rewritten (a parameter's description as "tool field").
    pub tools: Vec<String>,
    /// On the held-out cases: the verdict no drafting saw.
    pub held_out: Outcome,
    /// On the whole suite.
    pub full: Outcome,
}

impl HeldOut {
    /// "3/4 right (head 1/4, base 3/4)": the counts every format prints.
    pub fn counts(&self) -> String {
        let right = |acc: f64| (acc * self.cases as f64).round() as u64;
        let n = self.cases;
        format!(
            "{}/{n} right (head {}/{n}, base {}/{n})",
            right(self.accuracy),
            right(self.head_accuracy),
            right(self.base_accuracy)
        )
    }
}

/// A gate's verdict, as the fix report keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    pub status: Status,
    pub reason: String,
}

impl From<&Verdict> for Outcome {
    fn from(v: &Verdict) -> Outcome {
        Outcome {
            status: v.status,
            reason: v.reason.clone(),
        }
    }
}

impl FixReport {
    /// The measurement is incomplete: the check or a rewrite's replay missed answers.
    pub fn incomplete(&self) -> bool {
        self.check.status == Status::Incomplete
            || self.tools.iter().flat_map(|t| &t.candidates).any(|c| {
                c.gate_held_out.status == Status::Incomplete
                    || c.gate_full.status == Status::Incomplete
            })
    }

    /// Exit code: 3 when a measurement is incomplete; for a failing check, 0 when head with the
    /// offered rewrites applied passes the gate both on the held-out cases and on the whole
    /// suite, else 1; otherwise the check's own code (0 pass: nothing to fix; 4 inconclusive).
    pub fn exit_code(&self) -> i32 {
        use crate::error::exit;
        let applied = self.applied.as_ref();
        if self.incomplete()
            || applied.is_some_and(|a| {
                a.held_out.status == Status::Incomplete || a.full.status == Status::Incomplete
            })
        {
            return exit::INCOMPLETE;
        }
        match (self.check.status, applied) {
            (Status::Fail, Some(a))
                if a.held_out.status == Status::Pass && a.full.status == Status::Pass =>
            {
                exit::PASS
            }
            (Status::Fail, _) => exit::FAIL,
            _ => self.check.exit_code(),
        }
    }
}
