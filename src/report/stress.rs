//! The stress report model: built once by the runner, rendered by `terminal`, `markdown`, `json`.

use serde::Serialize;

use crate::replay::Flip;

/// Bumped only on incompatible changes to the stress JSON; additions keep the version.
pub const STRESS_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct StressReport {
    pub schema_version: u32,
    pub driftgate_version: &'static str,
    pub command: &'static str,
    /// Where the tool set came from.
    pub tools_source: String,
    pub suite: crate::suite::Identity,
    pub router: RouterSummary,
    /// Accuracy of the unperturbed tool set, the reference every delta is taken against.
    pub base: BaseSummary,
    /// The columns: every perturbation that was tried, in order.
    pub perturbations: Vec<PerturbationInfo>,
    pub tools: Vec<ToolStress>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paraphrase: Option<ParaphraseInfo>,
    pub cost: Cost,
    /// Answers missing after retries: the report is incomplete (exit 3).
    pub errors: Vec<String>,
    pub notes: Vec<String>,
}

impl StressReport {
    pub fn incomplete(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Every (tool, edit) under which some case flipped, most fragile tool first.
    pub fn flipped(&self) -> Vec<(&ToolStress, &PerturbationResult)> {
        self.ranked()
            .into_iter()
            .flat_map(|t| t.results.iter().map(move |r| (t, r)))
            .filter(|(_, r)| !r.flips.is_empty())
            .collect()
    }

    /// Tools ordered most fragile first (ties: larger worst drop, then name); tools without a
    /// score last.
    pub fn ranked(&self) -> Vec<&ToolStress> {
        let mut v: Vec<&ToolStress> = self.tools.iter().collect();
        v.sort_by(|a, b| {
            b.fragility
                .unwrap_or(-1.0)
                .total_cmp(&a.fragility.unwrap_or(-1.0))
                .then_with(|| {
                    a.worst_delta
                        .unwrap_or(0.0)
                        .total_cmp(&b.worst_delta.unwrap_or(0.0))
                })
                .then_with(|| a.tool.cmp(&b.tool))
        });
        v
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RouterSummary {
    #[serde(flatten)]
    pub identity: crate::route::Identity,
    pub repeats: u32,
    pub seed: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BaseSummary {
    pub accuracy: f64,
    /// Cases right at base (majority of repeats).
    pub correct: usize,
    pub cases: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PerturbationInfo {
    pub id: String,
    pub summary: String,
    /// Meant to change the tool's meaning: its column counts towards sensitivity.
    pub changes_meaning: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ParaphraseInfo {
    pub model: String,
    pub host: String,
    pub prompt: String,
    pub prompt_sha256: String,
    pub per_tool: u32,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Cost {
    /// Replays of the suite: one unperturbed, one per applied perturbation.
    pub replays: u64,
    pub requests_sent: u64,
    pub cache_hits: u64,
    pub reused: u64,
    pub retries: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drafting: Option<crate::llm::json::LlmStats>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ToolStress {
    pub tool: String,
    /// Suite cases that accept this tool.
    pub own_cases: usize,
    /// Of those, right at base.
    pub own_right_at_base: usize,
    /// One entry per perturbation column, in column order.
    pub results: Vec<PerturbationResult>,
    /// The perturbation with the largest overall accuracy drop (absent when none hurt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_delta: Option<f64>,
    /// Mean, over the meaning-preserving perturbations that applied, of min(1, regressed cases
    /// ÷ max(1, own cases right at base)): 0 = every harmless edit harmless, 1 = every one breaks
    /// as many prompts as the tool owns. Absent when none applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fragility: Option<f64>,
    /// The same mean over the meaning-changing perturbations (`inverted`): how much the router
    /// feels the tool's meaning change. 0 = it did not: its silence on this tool is no evidence.
    /// Absent when none applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PerturbationResult {
    pub id: String,
    /// Meant to change the tool's meaning (see [`PerturbationInfo::changes_meaning`]).
    pub changes_meaning: bool,
    /// False when the edit does not apply to this tool (nothing to change); no replay was run.
    pub applied: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The perturbed description, for the reader to judge how harmless it looks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool's name after the edit, when it changed (its cases then expect the new name).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_to: Option<String>,
    /// Overall suite accuracy, head minus base (negative = worse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Accuracy on this tool's own cases, head minus base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_delta: Option<f64>,
    pub regressed: u64,
    pub fixed: u64,
    /// Exact one-sided sign test for "perturbed is worse" over the whole suite.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value_worse: Option<f64>,
    pub flips: Vec<Flip>,
}

impl PerturbationResult {
    pub fn not_applied(id: &str) -> PerturbationResult {
        PerturbationResult {
            id: id.to_string(),
            changes_meaning: false,
            applied: false,
            detail: None,
            description: None,
            renamed_to: None,
            delta: None,
            own_delta: None,
            regressed: 0,
            fixed: 0,
            p_value_worse: None,
            flips: Vec::new(),
        }
    }
}

/// Fragility as defined on `ToolStress::fragility`: `results` are the tool's columns.
pub fn fragility(results: &[PerturbationResult], own_right_at_base: usize) -> Option<f64> {
    mean_broken(results, own_right_at_base, false)
}

/// Sensitivity as defined on `ToolStress::sensitivity`.
pub fn sensitivity(results: &[PerturbationResult], own_right_at_base: usize) -> Option<f64> {
    mean_broken(results, own_right_at_base, true)
}

/// Mean of min(1, regressed ÷ own right) over the applied columns that do (or do not) change
/// the tool's meaning.
fn mean_broken(
    results: &[PerturbationResult],
    own_right_at_base: usize,
    changes_meaning: bool,
) -> Option<f64> {
    let applied: Vec<&PerturbationResult> = results
        .iter()
        .filter(|r| r.applied && r.changes_meaning == changes_meaning)
        .collect();
    if applied.is_empty() {
        return None;
    }
    let denom = own_right_at_base.max(1) as f64;
    let sum: f64 = applied
        .iter()
        .map(|r| (r.regressed as f64 / denom).min(1.0))
        .sum();
    Some(sum / applied.len() as f64)
}

/// The applied meaning-preserving perturbation with the most negative overall delta (ties: more
/// regressions, then column order); `None` when no such edit lowered accuracy or broke a case.
/// A meaning change is meant to move routing, so it is never the "worst" harmless edit.
pub fn worst(results: &[PerturbationResult]) -> Option<&PerturbationResult> {
    results
        .iter()
        .filter(|r| r.applied && !r.changes_meaning)
        .filter(|r| r.delta.unwrap_or(0.0) < 0.0 || r.regressed > 0)
        .fold(None, |best: Option<&PerturbationResult>, r| match best {
            Some(b)
                if (b.delta.unwrap_or(0.0), std::cmp::Reverse(b.regressed))
                    <= (r.delta.unwrap_or(0.0), std::cmp::Reverse(r.regressed)) =>
            {
                Some(b)
            }
            _ => Some(r),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(id: &str, applied: bool, delta: f64, regressed: u64) -> PerturbationResult {
        PerturbationResult {
            applied,
            delta: applied.then_some(delta),
            regressed,
            ..PerturbationResult::not_applied(id)
        }
    }

    #[test]
    fn fragility_averages_capped_regressions_over_applied_edits() {
        let rs = [
            r("a", true, -0.05, 2),
            r("b", true, 0.0, 0),
            r("c", false, 0.0, 0),
            r("d", true, -0.25, 10),
        ];
        // own right at base = 4: 2/4 = 0.5, 0, 10/4 capped at 1 → mean 0.5.
        assert_eq!(fragility(&rs, 4), Some(0.5));
        // A tool with no right case at base is scored against 1: (min(1, 2/1) + 0) / 2.
        assert_eq!(fragility(&rs[..2], 0), Some(0.5));
        assert_eq!(fragility(&rs[2..3], 4), None);
    }

    #[test]
    fn a_meaning_change_counts_towards_sensitivity_never_fragility_or_worst() {
        let inverted = PerturbationResult {
            changes_meaning: true,
            ..r("inverted", true, -0.5, 4)
        };
        let rs = [r("terser", true, 0.0, 0), inverted.clone()];
        assert_eq!(fragility(&rs, 4), Some(0.0));
        assert_eq!(sensitivity(&rs, 4), Some(1.0));
        assert!(
            worst(&rs).is_none(),
            "the meaning change is not a harmless edit"
        );
        // An insensitive router: the inversion applied and nothing moved.
        let felt_nothing = PerturbationResult {
            regressed: 0,
            delta: Some(0.0),
            ..inverted
        };
        assert_eq!(sensitivity(&[felt_nothing], 4), Some(0.0));
        assert_eq!(sensitivity(&rs[..1], 4), None, "no meaning change applied");
    }

    #[test]
    fn worst_is_the_largest_drop_then_most_regressions_then_first() {
        let rs = [
            r("a", true, -0.05, 2),
            r("b", true, -0.05, 3),
            r("c", false, -0.9, 9),
            r("d", true, -0.05, 3),
        ];
        assert_eq!(worst(&rs).unwrap().id, "b");
        // Net zero with a regression (one fixed elsewhere) still counts as hurting.
        let rs = [r("a", true, 0.0, 1), r("b", true, 0.025, 0)];
        assert_eq!(worst(&rs).unwrap().id, "a");
        assert!(worst(&[r("a", true, 0.0, 0), r("b", true, 0.05, 0)]).is_none());
    }
}
