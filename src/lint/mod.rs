//! `driftgate lint`: static analysis of one tool set, deterministic and offline.
//!
//! Drift is one failure; the other is a tool set agents cannot tell apart in the first place.
//! Two analyses feed one list of findings:
//! - [`pairs`]: confusable pairs (schema gate → name/description affinity → opposing-verb veto),
//!   and scope notes for pairs the gate separated only by their arguments;
//! - [`quality`]: the deterministic TDQS signals per tool, with its two hard gates.
//!
//! [`llm`] optionally adds the rubric's six model-scored dimensions. In `check`, lint runs on
//! base and head and only what the PR introduced or fixed is reported ([`LintDelta::between`]).

pub mod coherence;
pub mod contradiction;
pub mod llm;
pub mod pairs;
pub mod quality;
pub mod score;
pub mod shadowing;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::embed::Embedder;
use crate::error::Result;
use crate::tools::ToolSet;

pub use coherence::Coherence;
pub use pairs::{Pair, PairAnalysis, ScopeNote, TooManyPairs, Weights};
pub use quality::{Shadow, ToolQuality};
pub use shadowing::ShadowingRisk;

/// How much a finding matters. Notes are for the reader; `--strict` fails on warnings and errors.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Note,
    Warning,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Note => "note",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }
}

/// The lint rules: id, level, what the rule means and how a PR report says the PR introduced or
/// fixed a finding. Data, so renderers and docs agree.
pub struct Rule {
    pub id: RuleId,
    pub level: Level,
    pub summary: &'static str,
    /// A PR introduced the finding: `{a}` and `{b}` are its tools, `{score}` the pair's score,
    /// `{threshold}` the confusable threshold.
    pub introduced: &'static str,
    /// A PR fixed it (same placeholders).
    pub fixed: &'static str,
}

crate::rule_ids! {
    /// Every lint rule, by id (the table [`RULES`] gives each its level and sentences).
    pub enum RuleId ("lint rule") in RULES: Rule {
        NoDescription = "no-description",
        TautologicalDescription = "tautological-description",
        AnnotationContradiction = "annotation-contradiction",
        ConfusablePair = "confusable-pair",
        ShadowingRisk = "shadowing-risk",
        ScopeAmbiguity = "scope-ambiguity",
    }
}

pub const RULES: &[Rule] = &[
    Rule {
        id: RuleId::NoDescription,
        level: Level::Error,
        summary: "hard gate: the tool has no description (null or blank)",
        introduced: "this PR leaves `{a}` without a description",
        fixed: "this PR gives `{a}` a description",
    },
    Rule {
        id: RuleId::TautologicalDescription,
        level: Level::Error,
        summary: "hard gate: the description only repeats the tool's name or title",
        introduced: "this PR makes `{a}`'s description only repeat its name or title",
        fixed: "this PR makes `{a}`'s description say more than its name",
    },
    Rule {
        id: RuleId::AnnotationContradiction,
        level: Level::Warning,
        summary: "an annotation the description contradicts: `readOnlyHint: true` on a tool whose \
                  action changes state, `destructiveHint: false` on one whose action deletes",
        introduced: "this PR makes `{a}`'s annotations contradict its description",
        fixed: "this PR makes `{a}`'s annotations agree with its description",
    },
    Rule {
        id: RuleId::ConfusablePair,
        level: Level::Warning,
        summary: "two tools take the same arguments and read alike: agents cannot tell them apart",
        introduced: "this PR makes `{a}` and `{b}` confusable (score {score} ≥ {threshold})",
        fixed: "this PR makes `{a}` and `{b}` distinguishable (was score {score})",
    },
    Rule {
        id: RuleId::ShadowingRisk,
        level: Level::Warning,
        summary: "a costly tool whose purpose a much cheaper sibling covers: agents take the cheap \
                  call (cost prefilter, then confirmed purpose overlap)",
        introduced: "this PR adds a shadowing risk: `{a}` may lose to its much cheaper sibling `{b}`",
        fixed: "this PR removes the shadowing risk of `{a}` by `{b}`",
    },
    Rule {
        id: RuleId::ScopeAmbiguity,
        level: Level::Note,
        summary: "the same action at another scope (`read_file` / `read_multiple_files`); only the \
                  arguments tell them apart",
        introduced: "this PR adds `{a}` / `{b}`: the same action at another scope",
        fixed: "this PR resolves the scope ambiguity of `{a}` / `{b}`",
    },
];

pub fn rule(id: &str) -> &'static Rule {
    RULES
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("lint rule {id:?} is not in RULES"))
}

/// A lint rule's id: always one of [`RULES`]'s (an alias, because serde's derive takes a field
/// spelled `&str` as borrowed).

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    pub rule: RuleId,
    pub level: Level,
    /// The tool, or the two tools of a pair (in server order).
    pub tools: Vec<String>,
    pub message: String,
    /// Evidence for a confusable pair: gate, affinity, veto, score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<Pair>,
    /// Evidence for a scope note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeNote>,
}

impl Finding {
    fn new(rule_id: RuleId, tools: Vec<String>, message: String) -> Finding {
        let r = rule_id.rule();
        Finding {
            rule: r.id,
            level: r.level,
            tools,
            message,
            pair: None,
            scope: None,
        }
    }

    /// What makes two findings "the same" across base and head: the rule and the tool names.
    pub fn key(&self) -> (RuleId, BTreeSet<String>) {
        (self.rule, self.tools.iter().cloned().collect())
    }
}

#[derive(Debug, Clone, Default)]
pub struct LintOptions {
    /// Flag pairs at or above this score instead of the weights' default.
    pub threshold: Option<f64>,
}

/// The whole analysis of one tool set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lint {
    /// The embedding model used for description cosines (absent without one).
    pub embedding_model: Option<String>,
    pub pairs: PairAnalysis,
    pub tools: Vec<ToolQuality>,
    /// The cost prefilter's candidates (at most one per tool).
    pub shadows: Vec<Shadow>,
    /// Candidates whose purposes overlap: the shadowing risks.
    pub shadowing_risks: Vec<ShadowingRisk>,
    /// Candidates the confirmation rejected, with why.
    pub shadowing_rejected: Vec<ShadowingRisk>,
    /// The set-level dimensions, read off the set.
    pub coherence: Coherence,
    /// Most severe first.
    pub findings: Vec<Finding>,
}

impl Lint {
    pub fn count(&self, level: Level) -> usize {
        self.findings.iter().filter(|f| f.level == level).count()
    }
}

/// Analyse `tools`. With an embedder, descriptions are embedded once (one batch) for the pair
/// scores; without one the word-only weights apply. A set with too many compatible pairs to score
/// ([`pairs::MAX_PAIR_WORK`]) is a usage error.
pub async fn analyse(
    tools: &ToolSet,
    embedder: Option<&dyn Embedder>,
    opts: &LintOptions,
) -> Result<Lint> {
    // Refused before the embedding is spent.
    let candidates =
        pairs::Candidates::find(tools).map_err(|e| crate::Error::Usage(e.to_string()))?;
    let embeddings = match embedder {
        Some(e) if tools.len() >= 2 => Some(e.embed(&description_texts(tools)).await?),
        _ => None,
    };
    let purposes = purpose_embeddings(tools, embedder).await?;
    Ok(lint_with(
        tools,
        &candidates,
        embeddings.as_ref(),
        purposes.as_ref(),
        embedder.map(|e| e.id().to_string()),
        opts,
    ))
}

/// The texts [`check_delta`] embeds for `base` and `head`: each side's descriptions (a side of two
/// tools or more) and the purposes its shadowing confirmation compares. A caller embeds a run's
/// texts in one call up front; a memoising embedder then answers lint from memory.
pub fn texts(base: &ToolSet, head: &ToolSet) -> Vec<String> {
    // A side too large to pair skips lint, and embeds nothing for it.
    if pairs::Candidates::find(base).is_err() || pairs::Candidates::find(head).is_err() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for side in [base, head] {
        if side.len() >= 2 {
            out.extend(description_texts(side));
        }
        out.extend(purpose_texts(side));
    }
    out
}

/// The first sentences of the tools a shadowing candidate needs compared.
fn purpose_texts(tools: &ToolSet) -> Vec<String> {
    let (_, shadows) = quality::assess_all(tools);
    shadowing::needs_purpose(tools, &shadows)
        .iter()
        .map(|t| shadowing::purpose(t))
        .collect()
}

/// The purposes (first sentences) the shadowing confirmation compares, embedded: only the tools
/// of a cost candidate, so a set without candidates embeds nothing more.
async fn purpose_embeddings(
    tools: &ToolSet,
    embedder: Option<&dyn Embedder>,
) -> Result<Option<BTreeMap<String, Vec<f32>>>> {
    let Some(e) = embedder else { return Ok(None) };
    let (_, shadows) = quality::assess_all(tools);
    let need = shadowing::needs_purpose(tools, &shadows);
    if need.is_empty() {
        return Ok(Some(BTreeMap::new()));
    }
    let texts: Vec<String> = need.iter().map(|t| shadowing::purpose(t)).collect();
    let rows = e.embed(&texts).await?;
    Ok(Some(
        need.iter()
            .zip(rows.rows())
            .map(|(t, r)| (t.name.clone(), r.to_vec()))
            .collect(),
    ))
}

/// What lint embeds per tool: its description. A missing description has no meaning to embed;
/// its cosine is set to 0 anyway, so the name keeps the batch well-formed.
fn description_texts(tools: &ToolSet) -> Vec<String> {
    tools
        .tools
        .iter()
        .map(|t| match t.description_text().trim() {
            "" => t.name.clone(),
            d => d.to_string(),
        })
        .collect()
}

/// [`analyse`] with the description embeddings already computed (one row per tool). Shadow
/// candidates are then confirmed on words only.
pub fn analyse_with(
    tools: &ToolSet,
    embeddings: Option<&ndarray::Array2<f32>>,
    embedding_model: Option<String>,
    opts: &LintOptions,
) -> Result<Lint, TooManyPairs> {
    let candidates = pairs::Candidates::find(tools)?;
    Ok(lint_with(
        tools,
        &candidates,
        embeddings,
        None,
        embedding_model,
        opts,
    ))
}

fn lint_with(
    tools: &ToolSet,
    candidates: &pairs::Candidates,
    embeddings: Option<&ndarray::Array2<f32>>,
    purposes: Option<&BTreeMap<String, Vec<f32>>>,
    embedding_model: Option<String>,
    opts: &LintOptions,
) -> Lint {
    let pairs = pairs::analyse(tools, candidates, embeddings, opts.threshold);
    let (quality, shadows) = quality::assess_all(tools);
    let (shadowing_risks, shadowing_rejected) = shadowing::confirm(tools, &shadows, purposes);
    let flagged: Vec<(String, String)> = pairs
        .flagged()
        .map(|p| (p.a.clone(), p.b.clone()))
        .collect();
    let coherence = coherence::offline(tools, &flagged);
    let mut findings = Vec::new();
    for q in &quality {
        for g in &q.hard_gates {
            let f = match *g {
                quality::NO_DESCRIPTION => Finding::new(
                    RuleId::NoDescription,
                    vec![q.name.clone()],
                    format!("`{}` has no description", q.name),
                ),
                _ => Finding::new(
                    RuleId::TautologicalDescription,
                    vec![q.name.clone()],
                    format!(
                        "`{}`: the description only repeats its name or title",
                        q.name
                    ),
                ),
            };
            findings.push(f);
        }
        for c in &q.contradictions {
            findings.push(Finding::new(
                RuleId::AnnotationContradiction,
                vec![q.name.clone()],
                format!(
                    "`{}` declares {}: {} but its description says it {}",
                    q.name, c.hint, c.value, c.verb
                ),
            ));
        }
    }
    for p in pairs.flagged() {
        let mut f = Finding::new(
            RuleId::ConfusablePair,
            vec![p.a.clone(), p.b.clone()],
            format!(
                "`{}` and `{}` are confusable (score {:.2} ≥ {:.2}): {}; {}",
                p.a,
                p.b,
                p.score,
                pairs.weights.threshold,
                p.gate.detail,
                affinity_text(p)
            ),
        );
        f.pair = Some(p.clone());
        findings.push(f);
    }
    findings.extend(shadowing_risks.iter().map(shadowing_finding));
    for n in &pairs.scope_notes {
        let mut f = Finding::new(
            RuleId::ScopeAmbiguity,
            vec![n.a.clone(), n.b.clone()],
            format!(
                "`{}` and `{}` name the same action at another scope (+{}); only the arguments tell them apart ({}): say in each description when to use which",
                n.a,
                n.b,
                n.extra_terms.join(", +"),
                n.gate.detail
            ),
        );
        f.scope = Some(n.clone());
        findings.push(f);
    }
    sort_findings(&mut findings);
    Lint {
        embedding_model,
        pairs,
        tools: quality,
        shadows,
        shadowing_risks,
        shadowing_rejected,
        coherence,
        findings,
    }
}

fn shadowing_finding(r: &ShadowingRisk) -> Finding {
    Finding::new(
        RuleId::ShadowingRisk,
        vec![r.tool.clone(), r.cheaper_sibling.clone()],
        format!(
            "`{}` (cost {}) may lose to its much cheaper sibling `{}` (cost {}): {}",
            r.tool,
            r.invocation_cost,
            r.cheaper_sibling,
            r.cheaper_sibling_invocation_cost,
            r.justification
        ),
    )
}

/// Most severe first; pairs by score, then by name, so output is stable.
fn sort_findings(findings: &mut [Finding]) {
    let score = |f: &Finding| f.pair.as_ref().map_or(0.0, |p| p.score);
    findings.sort_by(|x, y| {
        y.level
            .cmp(&x.level)
            .then_with(|| score(y).total_cmp(&score(x)))
            .then_with(|| x.tools.cmp(&y.tools))
    });
}

impl Lint {
    /// Take the model's set-level judgement (`--llm`) over the offline estimate: its coherence,
    /// and its confirmations as the shadowing risks and findings. A call that failed leaves the
    /// offline estimate (the run is incomplete anyway).
    pub fn apply_model(&mut self, j: &llm::coherence::ServerJudgement) {
        let Some(c) = &j.coherence else { return };
        self.coherence = c.clone();
        self.shadowing_risks = j.shadowing_risks.clone();
        self.shadowing_rejected = j.shadowing_rejected.clone();
        self.findings.retain(|f| f.rule != RuleId::ShadowingRisk);
        self.findings
            .extend(self.shadowing_risks.iter().map(shadowing_finding));
        sort_findings(&mut self.findings);
    }
}

fn affinity_text(p: &Pair) -> String {
    let a = &p.affinity;
    let mut s = format!(
        "name affinity {:.2}, description words {:.2}",
        a.name, a.description
    );
    if let Some(e) = a.embedding {
        s.push_str(&format!(", description cosine {e:.2}"));
    }
    s
}

/// `lint`'s analysis of one tool set, as its report carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LintSection {
    pub embedding_model: Option<String>,
    pub weights: Weights,
    /// Every finding, most severe first.
    pub findings: Vec<Finding>,
    /// Gate counts and every pair that passed the gate, with its evidence.
    pub pairs: PairAnalysis,
    /// The quality signals of every tool.
    pub tools: Vec<ToolQuality>,
    /// The cost prefilter's shadow candidates (at most one per tool).
    pub shadows: Vec<Shadow>,
    /// The candidates whose purposes overlap (confirmed).
    pub shadowing_risks: Vec<ShadowingRisk>,
    /// The candidates the confirmation rejected, with why.
    pub shadowing_rejected: Vec<ShadowingRisk>,
    /// Server coherence (offline, or the model's with `--llm`).
    pub coherence: Coherence,
    /// `--llm`: the rubric's model-scored dimensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<llm::LlmReport>,
}

impl LintSection {
    pub fn full(lint: Lint) -> LintSection {
        LintSection {
            embedding_model: lint.embedding_model,
            weights: lint.pairs.weights,
            findings: lint.findings,
            pairs: lint.pairs,
            tools: lint.tools,
            shadows: lint.shadows,
            shadowing_risks: lint.shadowing_risks,
            shadowing_rejected: lint.shadowing_rejected,
            coherence: lint.coherence,
            llm: None,
        }
    }
}

/// What lint contributes to `check`'s report: only what the PR introduced, fixed or moved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LintDelta {
    pub embedding_model: Option<String>,
    pub weights: Weights,
    /// What the PR moved in the scores (coherence, tiers).
    pub score_changes: Vec<ScoreChange>,
    /// `--lint-llm`: head's grades, with both sides' failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<llm::LlmReport>,
    /// Findings at head that base did not have.
    pub introduced: Vec<Finding>,
    /// Findings at base that head no longer has.
    pub fixed: Vec<Finding>,
}

impl LintDelta {
    /// Findings introduced and fixed between `base` and `head`. `renames` maps base names to
    /// head names, so a finding that only followed a renamed tool is neither.
    pub fn between(base: &Lint, head: &Lint, renames: &BTreeMap<String, String>) -> LintDelta {
        let rename = |f: &Finding| -> Finding {
            let mut f = f.clone();
            for t in &mut f.tools {
                if let Some(new) = renames.get(t) {
                    *t = new.clone();
                }
            }
            f
        };
        let base_renamed: Vec<Finding> = base.findings.iter().map(rename).collect();
        let said = |f: &Finding, introduced: bool| {
            let mut f = f.clone();
            f.message = pr_message(&f, introduced, head.pairs.weights.threshold);
            f
        };
        let base_keys: BTreeSet<_> = base_renamed.iter().map(Finding::key).collect();
        let head_keys: BTreeSet<_> = head.findings.iter().map(Finding::key).collect();
        let introduced = head
            .findings
            .iter()
            .filter(|f| !base_keys.contains(&f.key()))
            .map(|f| said(f, true))
            .collect();
        let fixed = base
            .findings
            .iter()
            .zip(&base_renamed)
            .filter(|(_, r)| !head_keys.contains(&r.key()))
            .map(|(f, _)| said(f, false))
            .collect();
        LintDelta {
            embedding_model: head.embedding_model.clone(),
            weights: head.pairs.weights,
            score_changes: ScoreChange::between(base, head),
            llm: None,
            introduced,
            fixed,
        }
    }

    /// True when there is nothing to show in a `check` report.
    pub fn is_empty(&self) -> bool {
        self.introduced.is_empty() && self.fixed.is_empty() && self.score_changes.is_empty()
    }
}

/// A score a PR moved: the server's coherence (or one of its dimensions), with the tier it lands
/// in. Only moves are kept; an unchanged score is not a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScoreChange {
    /// What moved: `coherence`, or a dimension (`coherence.naming_consistency`, …).
    pub score: String,
    pub base: f64,
    pub head: f64,
    #[serde(deserialize_with = "llm::tier_name")]
    pub base_tier: llm::Tier,
    #[serde(deserialize_with = "llm::tier_name")]
    pub head_tier: llm::Tier,
    /// How the report says it: "coherence 4.5 (A) → 3.8 (A)".
    pub message: String,
}

impl ScoreChange {
    fn new(score: String, base: f64, head: f64) -> ScoreChange {
        let (bt, ht) = (score::tier(base), score::tier(head));
        let message = if bt == ht {
            format!("{score} {base:.1} → {head:.1} (tier {ht})")
        } else {
            format!("{score} {base:.1} ({bt}) → {head:.1} ({ht}): tier {bt} → {ht}")
        };
        ScoreChange {
            score,
            base,
            head,
            base_tier: bt,
            head_tier: ht,
            message,
        }
    }

    /// What moved in the offline scores between base and head.
    pub fn between(base: &Lint, head: &Lint) -> Vec<ScoreChange> {
        let (b, h) = (&base.coherence, &head.coherence);
        let mut out = Vec::new();
        if b.score != h.score {
            out.push(ScoreChange::new("coherence".into(), b.score, h.score));
        }
        for ((name, x), (_, y)) in b.dimensions().into_iter().zip(h.dimensions()) {
            if x.score != y.score {
                let mut c = ScoreChange::new(
                    format!("coherence.{name}"),
                    f64::from(x.score),
                    f64::from(y.score),
                );
                // A dimension is a grade, not a score with a tier.
                c.message = format!(
                    "{} {} → {} ({})",
                    c.score, x.score, y.score, y.justification
                );
                out.push(c);
            }
        }
        out
    }
}

impl ScoreChange {
    /// What moved in the model's grades between base and head: a tool whose tier moved (a
    /// renamed tool is followed; a score moving within its tier is noise, not a change), the
    /// description quality and the overall score.
    pub fn graded_between(
        base: &llm::LlmReport,
        head: &llm::LlmReport,
        renames: &BTreeMap<String, String>,
    ) -> Vec<ScoreChange> {
        let mut out = Vec::new();
        let back: BTreeMap<&str, &str> = renames
            .iter()
            .map(|(b, h)| (h.as_str(), b.as_str()))
            .collect();
        for t in head.tools.iter().filter(|t| t.grades.is_some()) {
            let was = back.get(t.name.as_str()).copied().unwrap_or(&t.name);
            let Some(b) = base
                .tools
                .iter()
                .find(|b| b.name == was && b.grades.is_some())
            else {
                continue;
            };
            if b.tier != t.tier {
                let mut c = ScoreChange::new(format!("tool `{}`", t.name), b.score, t.score);
                if !t.smells.is_empty() {
                    c.message = format!("{}; below 3: {}", c.message, t.smells.join(", "));
                }
                out.push(c);
            }
        }
        for (name, b, h) in [
            ("description quality", base.server_score, head.server_score),
            ("overall", base.overall_score, head.overall_score),
        ] {
            if let (Some(b), Some(h)) = (b, h)
                && b != h
            {
                out.push(ScoreChange::new(name.into(), b, h));
            }
        }
        out
    }
}

/// How a finding reads in a PR report: what the PR did, not what the tool set is (the rule's
/// own sentence, filled in).
fn pr_message(f: &Finding, introduced: bool, threshold: f64) -> String {
    let r = f.rule.rule();
    let t = |i: usize| f.tools.get(i).map(String::as_str).unwrap_or_default();
    let score = format!("{:.2}", f.pair.as_ref().map_or(0.0, |p| p.score));
    let threshold = format!("{threshold:.2}");
    crate::text::words::fill(
        if introduced { r.introduced } else { r.fixed },
        &[
            ("a", t(0)),
            ("b", t(1)),
            ("score", &score),
            ("threshold", &threshold),
        ],
    )
}

/// `check`: lint base and head, and keep what the PR introduced or fixed. Renamed tools (from
/// the diff) are followed, so a finding that only moved with its tool is neither. A side too
/// large to pair is the inner error: lint is then skipped, the check goes on.
pub async fn check_delta(
    diff: &crate::diff::Diff,
    base: &ToolSet,
    head: &ToolSet,
    embedder: Option<&dyn Embedder>,
    model: Option<&Grader<'_>>,
) -> Result<Result<LintDelta, TooManyPairs>> {
    let opts = LintOptions::default();
    let (cb, ch) = match (pairs::Candidates::find(base), pairs::Candidates::find(head)) {
        (Ok(b), Ok(h)) => (b, h),
        (Err(e), _) | (_, Err(e)) => return Ok(Err(e)),
    };
    // Head mostly repeats base's descriptions: each distinct text is embedded once for both.
    let (eb, eh) = match embedder {
        Some(e) => {
            let side = |t: &ToolSet| (t.len() >= 2).then(|| description_texts(t));
            let (tb, th) = (side(base), side(head));
            let mut all: Vec<String> = tb.iter().chain(&th).flatten().cloned().collect();
            all.sort();
            all.dedup();
            let rows = if all.is_empty() {
                ndarray::Array2::zeros((0, 0))
            } else {
                e.embed(&all).await?
            };
            let pick = |texts: Option<Vec<String>>| {
                texts.map(|ts| {
                    let at: Vec<usize> = ts
                        .iter()
                        .map(|t| all.binary_search(t).expect("embedded above"))
                        .collect();
                    rows.select(ndarray::Axis(0), &at)
                })
            };
            (pick(tb), pick(th))
        }
        None => (None, None),
    };
    let (pb, ph) = (
        purpose_embeddings(base, embedder).await?,
        purpose_embeddings(head, embedder).await?,
    );
    let embedding_model = embedder.map(|e| e.id().to_string());
    let mut b = lint_with(
        base,
        &cb,
        eb.as_ref(),
        pb.as_ref(),
        embedding_model.clone(),
        &opts,
    );
    let mut h = lint_with(head, &ch, eh.as_ref(), ph.as_ref(), embedding_model, &opts);
    let renames: BTreeMap<String, String> = diff
        .tools
        .iter()
        .filter_map(|t| Some((t.base_name.clone()?, t.head_name.clone()?)))
        .collect();
    let Some(g) = model else {
        return Ok(Ok(LintDelta::between(&b, &h, &renames)));
    };
    // Both sides graded; base's unchanged tools (most of them) come from the cache.
    let base_model = g.grade(base, &mut b).await;
    let head_model = g.grade(head, &mut h).await;
    let mut section = LintDelta::between(&b, &h, &renames);
    let mut changes = ScoreChange::graded_between(&base_model, &head_model, &renames);
    changes.append(&mut section.score_changes);
    section.score_changes = changes;
    // Head's grades, with both sides' failures: a grade the model never gave is an incomplete
    // measurement, not a pass.
    let mut shown = head_model;
    let base_errors = base_model.errors.iter().map(|e| format!("base: {e}"));
    shown.errors = base_errors
        .chain(shown.errors.iter().map(|e| format!("head: {e}")))
        .collect();
    section.llm = Some(shown);
    Ok(Ok(section))
}

/// `lint --llm` and `check --lint-llm`: the model that grades tool sets, with what it needs.
pub struct Grader<'a> {
    pub router: &'a dyn crate::route::Router,
    pub cache: &'a crate::cache::Cache,
    pub concurrency: usize,
    pub retry: &'a crate::http::retry::RetryPolicy,
}

impl Grader<'_> {
    /// Grade `tools` (analysed as `lint`): every tool on the rubric, then the set-level call,
    /// whose coherence and confirmations `lint` takes over its offline estimate.
    pub async fn grade(&self, tools: &ToolSet, lint: &mut Lint) -> llm::LlmReport {
        let mut m = llm::score(
            tools,
            &lint.tools,
            self.router,
            self.cache,
            self.concurrency,
            self.retry,
        )
        .await;
        llm::judge_server(
            &mut m,
            tools,
            &lint.tools,
            &lint.shadows,
            self.router,
            self.cache,
            self.retry,
        )
        .await;
        if let Some(j) = &m.server {
            lint.apply_model(j);
        }
        m
    }
}

/// Tool sets the tests of lint and of its verdict (`gate`) share.
#[cfg(test)]
pub(crate) mod fixtures {
    use serde_json::json;

    /// Two confusable file readers and a tool with no description.
    pub fn pair_tools() -> serde_json::Value {
        let p = json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
        json!([
            {"name": "read_file", "description": "Read a file as text.", "inputSchema": p},
            {"name": "read_text_file", "description": "Read a text file as text.", "inputSchema": p},
            {"name": "ping"}
        ])
    }

    /// The lint of a tool array.
    pub fn lint(v: serde_json::Value) -> super::Lint {
        let set = crate::tools::ToolSet::from_array(v.as_array().unwrap(), "t", "").unwrap();
        super::analyse_with(&set, None, None, &super::LintOptions::default()).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(v: serde_json::Value) -> ToolSet {
        ToolSet::from_array(v.as_array().unwrap(), "t", "").unwrap()
    }

    fn lint(v: serde_json::Value) -> Lint {
        analyse_with(&set(v), None, None, &LintOptions::default()).unwrap()
    }

    use super::fixtures::pair_tools;

    #[test]
    fn findings_are_ordered_by_level_then_score() {
        let l = lint(pair_tools());
        let got: Vec<(RuleId, Level)> = l.findings.iter().map(|f| (f.rule, f.level)).collect();
        assert_eq!(
            got,
            vec![
                (RuleId::NoDescription, Level::Error),
                (RuleId::ConfusablePair, Level::Warning)
            ]
        );
        assert_eq!((l.count(Level::Error), l.count(Level::Warning)), (1, 1));
        assert!(
            l.findings[1]
                .message
                .starts_with("`read_file` and `read_text_file` are confusable (score ")
        );
    }

    #[test]
    fn the_delta_says_what_the_pr_did() {
        let base = lint(json!([{"name": "ping", "description": "Check the server answers."}]));
        let head = lint(pair_tools());
        let s = LintDelta::between(&base, &head, &BTreeMap::new());
        let msgs: Vec<&str> = s.introduced.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(msgs[0], "this PR leaves `ping` without a description");
        assert!(
            msgs[1]
                .starts_with("this PR makes `read_file` and `read_text_file` confusable (score ")
        );
        assert!(s.fixed.is_empty());
        let back = LintDelta::between(&head, &base, &BTreeMap::new());
        let msgs: Vec<&str> = back.fixed.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(msgs[0], "this PR gives `ping` a description");
        assert!(
            msgs[1].starts_with("this PR makes `read_file` and `read_text_file` distinguishable")
        );
        assert!(LintDelta::between(&head, &head, &BTreeMap::new()).is_empty());
    }

    #[test]
    fn the_delta_shows_a_new_shadowing_risk_and_the_scores_it_moved() {
        let list = json!({"name": "list_players", "description": "List all players with their season stats."});
        let search = json!({"name": "search_players",
            "description": "Search players with their season stats by team, position and season.",
            "inputSchema": {"type": "object", "required": ["team", "position", "season", "order"],
                "properties": {"team": {"type": "string"}, "position": {"type": "string"},
                    "season": {"type": "string"}, "order": {"type": "string"}}}});
        let get = json!({"name": "get_player", "description": "Get one player by id.",
            "inputSchema": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}});
        let base = lint(json!([list.clone(), get.clone()]));
        let head = lint(json!([list, get, search]));
        let s = LintDelta::between(&base, &head, &BTreeMap::new());
        let msgs: Vec<&str> = s.introduced.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "this PR adds a shadowing risk: `search_players` may lose to its much cheaper sibling `list_players`"
            ]
        );
        // Two tools are thin (3), three are well-scoped (5): coherence 4.5 → 5.0, both tier A.
        let c: Vec<&str> = s.score_changes.iter().map(|c| c.message.as_str()).collect();
        assert_eq!(
            c,
            [
                "coherence 4.5 → 5.0 (tier A)",
                "coherence.tool_count_appropriateness 3 → 5 (3 tools: within the well-scoped 3–15)"
            ]
        );
        assert!(!s.is_empty());
        // Back again: the risk is fixed, the score moves down.
        let back = LintDelta::between(&head, &base, &BTreeMap::new());
        assert_eq!(back.fixed.len(), 1);
        assert_eq!(back.score_changes[0].head, 4.5);
        // A tier move is said as one.
        let moved = ScoreChange::new("coherence".into(), 3.5, 3.4);
        assert_eq!(moved.message, "coherence 3.5 (A) → 3.4 (B): tier A → B");
    }

    #[test]
    fn every_rule_has_a_level_and_the_table_is_unique() {
        let ids: BTreeSet<&str> = RULES.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids.len(), RULES.len());
        assert_eq!(RuleId::ConfusablePair.rule().level, Level::Warning);
        assert_eq!(RuleId::ScopeAmbiguity.rule().level, Level::Note);
    }

    #[test]
    fn every_rule_says_what_a_pr_did_with_known_placeholders_only() {
        let known = ["a", "b", "score", "threshold"];
        for r in RULES {
            for sentence in [r.introduced, r.fixed] {
                assert!(sentence.starts_with("this PR "), "{}: {sentence}", r.id);
                assert!(sentence.contains("{a}"), "{}: {sentence}", r.id);
                let filled = crate::text::words::fill(sentence, &known.map(|k| (k, "x")));
                assert!(!filled.contains(['{', '}']), "{}: {sentence}", r.id);
            }
        }
        let mut f = Finding::new(
            RuleId::ConfusablePair,
            vec!["{b}".into(), "b".into()],
            String::new(),
        );
        f.pair = None;
        assert_eq!(
            pr_message(&f, true, 0.8),
            "this PR makes `{b}` and `b` confusable (score 0.00 ≥ 0.80)"
        );
    }
}
