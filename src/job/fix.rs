//! The fix job: run the check; for each tool it failed on routing or call accuracy, draft
//! rewrites from the drafting half of the suite (`draft`), and verify each one by replay on the
//! half drafting never read: a rewrite is offered only when it beats head there (paired), passes
//! the gate against base there, costs no other tool a held-out case and brings in no scan
//! finding. Every measurement is a whole `check` run (`job::check::run`) with head's text
//! replaced, so a rewrite is judged by exactly the law the PR is.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::console::{Console, Silent};
use crate::draft::{self, Evidence, Moved};
use crate::error::{Error, Result};
use crate::gate::{Metric, Outcome as RulingOutcome, Status};
use crate::replay::{Direction, Routing};
use crate::report::fix::{
    Applied, FIX_SCHEMA_VERSION, FixReport, HeldOut, Lost, Outcome, Proposal, Split, ToolFix,
};
use crate::report::{self, Command, Report, Side};
use crate::source::Loaded;
use crate::suite::{Suite, SuiteChoice};

use super::check::{self, CheckInputs, ReplayInputs};

/// `--llm N`: the model that drafts N more rewrites per tool.
pub type Drafter<'a> = Option<(&'a crate::llm::json::JsonLlm, u32)>;

/// Everything a check needs that one run consumes, kept to run it again with other texts.
struct Kit {
    base: Loaded,
    head: Loaded,
    thresholds: crate::gate::CheckThresholds,
    embedder: Option<Arc<dyn crate::embed::Embedder>>,
    suite: SuiteChoice,
    router: Arc<dyn crate::route::Router>,
    cache: crate::cache::Cache,
    config: crate::replay::ReplayConfig,
    packs: Vec<crate::tools::Tool>,
    confirm: u32,
    targeted: bool,
    scan_allow: Vec<crate::injection::Allow>,
}

impl Kit {
    fn of(i: &CheckInputs) -> Result<Kit> {
        let r = i
            .replay
            .as_ref()
            .ok_or_else(|| Error::Usage("fix needs a suite".into()))?;
        Ok(Kit {
            base: i.base.clone(),
            head: i.head.clone(),
            thresholds: i.thresholds.clone(),
            embedder: i.embedder.clone(),
            suite: r.suite.clone(),
            router: r.router.clone(),
            cache: r.cache.clone(),
            config: r.config.clone(),
            packs: r.packs.clone(),
            confirm: r.confirm,
            targeted: r.targeted,
            scan_allow: i.scan_allow.clone(),
        })
    }

    /// `base` against `head` on `cases` of `suite` (all of them when `None`), measured silently.
    async fn check(
        &self,
        base: &Loaded,
        head: &Loaded,
        suite: &Suite,
        cases: Option<&[bool]>,
    ) -> Result<Report> {
        let mut suite = SuiteChoice {
            suite: suite.clone(),
            ..self.suite.clone()
        };
        if let Some(keep) = cases {
            suite.suite = subset(&suite.suite, keep);
        }
        let inputs = CheckInputs {
            base: base.clone(),
            head: head.clone(),
            thresholds: self.thresholds.clone(),
            embedder: self.embedder.clone(),
            replay: Some(ReplayInputs {
                suite,
                router: self.router.clone(),
                cache: self.cache.clone(),
                config: self.config.clone(),
                packs: self.packs.clone(),
                price_per_mtok: None,
                price_cached_input: None,
                confirm: self.confirm,
                shard: None,
                targeted: self.targeted,
            }),
            notes: Vec::new(),
            scan_allow: self.scan_allow.clone(),
            lint_model: None,
        };
        check::run(Command::Check, inputs, &Silent).await
    }
}

/// The cases whose flag is set.
fn subset(suite: &Suite, keep: &[bool]) -> Suite {
    Suite {
        cases: suite
            .cases
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c.clone())
            .collect(),
        ..suite.clone()
    }
}

/// What a rewrite replaces: the tool's description, or one parameter's.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Description,
    Param(String),
}

impl Field {
    /// As the report names it: `description`, or the JSON pointer of the parameter's.
    fn name(&self) -> String {
        match self {
            Field::Description => "description".into(),
            Field::Param(p) => format!("{}/description", param_pointer(p)),
        }
    }

    /// Back from [`Field::name`].
    fn parse(name: &str) -> Field {
        match name
            .strip_prefix("/inputSchema/properties/")
            .and_then(|p| p.strip_suffix("/description"))
        {
            Some(p) => Field::Param(p.replace("~1", "/").replace("~0", "~")),
            None => Field::Description,
        }
    }

    fn get(&self, t: &crate::tools::Tool) -> Option<String> {
        match self {
            Field::Description => Some(t.description_text().to_string()),
            Field::Param(p) => t
                .input_schema
                .pointer(&format!("/properties/{}/description", escape_pointer(p)))?
                .as_str()
                .map(str::to_string),
        }
    }
}

fn escape_pointer(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn param_pointer(p: &str) -> String {
    format!("/inputSchema/properties/{}", escape_pointer(p))
}

/// `head` with `field` of `tool` replaced by `text`.
fn with_text(head: &Loaded, tool: &str, field: &Field, text: &str) -> Loaded {
    let mut out = head.clone();
    if let Some(t) = out.tools.tools.iter_mut().find(|t| t.name == tool) {
        match field {
            Field::Description => t.description = Some(text.to_string()),
            Field::Param(p) => {
                if let Some(prop) = t
                    .input_schema
                    .pointer_mut(&format!("/properties/{}", escape_pointer(p)))
                    .and_then(|v| v.as_object_mut())
                {
                    prop.insert("description".into(), text.into());
                }
            }
        }
    }
    out
}

/// A tool the verdict failed on routing or call accuracy, with its rulings' sentences.
struct Failing {
    tool: String,
    messages: Vec<String>,
    routing: bool,
    calls: bool,
}

/// The tools the verdict failed on routing or call accuracy — or by the meaning law or the
/// cosine floor where the tool's own routing regressed (more cases lost than won: a rewrite can
/// win them back) — in the verdict's order.
fn failing(report: &Report) -> Vec<Failing> {
    let routing_lost = |tool: &str| {
        report.routing.as_ref().is_some_and(|r| {
            r.paired
                .per_tool
                .iter()
                .any(|t| t.tool == tool && t.regressed > t.fixed)
        })
    };
    let mut out: Vec<Failing> = Vec::new();
    for r in &report.verdict.rulings {
        let counts = match r.metric {
            Metric::Routing | Metric::Calls => true,
            Metric::Meaning | Metric::Cosine => routing_lost(&r.tool),
        };
        if r.outcome != RulingOutcome::Fail || !counts {
            continue;
        }
        let i = match out.iter().position(|f| f.tool == r.tool) {
            Some(i) => i,
            None => {
                out.push(Failing {
                    tool: r.tool.clone(),
                    messages: Vec::new(),
                    routing: false,
                    calls: false,
                });
                out.len() - 1
            }
        };
        out[i].messages.push(r.message.clone());
        out[i].routing |= r.metric != Metric::Calls;
        out[i].calls |= r.metric == Metric::Calls;
    }
    out
}

/// Which flips a target reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flips {
    Both,
    Routing,
    Calls,
}

/// The drafting half's cases of `tools` (base names) lost at head, once each.
fn lost(
    suite: &Suite,
    held: &[bool],
    routing: &Routing,
    tools: &[&str],
    which: Flips,
) -> Vec<Lost> {
    let index: BTreeMap<&str, usize> = suite
        .cases
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    let routed = routing
        .paired
        .flips
        .iter()
        .filter(|_| which != Flips::Calls);
    let called = routing
        .calls
        .iter()
        .filter(|_| which != Flips::Routing)
        .flat_map(|c| &c.paired.flips);
    let mut seen = BTreeSet::new();
    routed
        .chain(called)
        .filter(|f| f.direction == Direction::Regressed)
        .filter(|f| {
            index.get(f.id.as_str()).is_some_and(|&i| {
                !held[i]
                    && suite.cases[i]
                        .expect
                        .names()
                        .iter()
                        .any(|n| tools.contains(&n.as_str()))
            })
        })
        .filter(|f| seen.insert(f.id.clone()))
        .map(|f| Lost {
            id: f.id.clone(),
            prompt: f.prompt.clone(),
            answered: f.head.clone(),
        })
        .collect()
}

/// What drafting reads about `tool`'s `field`: base's and head's texts, the lost prompts and the
/// texts of the tools that took them (and of the pair's partner).
fn evidence(
    (base_text, head_text): (&str, &str),
    head: &Loaded,
    tool: &str,
    lost: &[Lost],
    partner: Option<&str>,
) -> Evidence {
    let moved: Vec<Moved> = lost
        .iter()
        .map(|l| Moved {
            prompt: l.prompt.clone(),
            to: head.tools.get(&l.answered).map(|t| t.name.clone()),
        })
        .collect();
    let siblings = moved
        .iter()
        .filter_map(|m| m.to.as_deref())
        .chain(partner)
        .filter(|n| *n != tool)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter_map(|n| {
            Some((
                n.to_string(),
                head.tools.get(n)?.description_text().to_string(),
            ))
        })
        .collect();
    Evidence {
        tool: tool.to_string(),
        base: base_text.to_string(),
        head: head_text.to_string(),
        lost: moved,
        siblings,
        partner: partner.map(str::to_string),
    }
}

/// The per-tool rows of a check: routing, or call accuracy.
fn rows(r: &Report, calls: bool) -> &[crate::replay::ToolRouting] {
    let Some(routing) = r.routing.as_ref() else {
        return &[];
    };
    if calls {
        routing
            .calls
            .as_ref()
            .map(|c| c.paired.per_tool.as_slice())
            .unwrap_or_default()
    } else {
        routing.paired.per_tool.as_slice()
    }
}

/// Head against the rewrite on the held-out cases of `tools` (head name, base name), summed;
/// `gate_held` (base against the rewrite, base's names) gives base's accuracy there.
fn against_head(
    vs_head: &Report,
    gate_held: &Report,
    tools: &[(&str, &str)],
    calls: bool,
) -> HeldOut {
    let mut h = HeldOut {
        cases: 0,
        base_accuracy: 0.0,
        head_accuracy: 0.0,
        accuracy: 0.0,
        fixed: 0,
        regressed: 0,
        p_value_better: 1.0,
    };
    let (mut base_right, mut base_cases) = (0.0, 0usize);
    for (head_name, base_name) in tools {
        if let Some(t) = rows(vs_head, calls).iter().find(|t| t.tool == *head_name) {
            h.cases += t.cases;
            h.head_accuracy += t.base_accuracy * t.cases as f64;
            h.accuracy += t.head_accuracy * t.cases as f64;
            h.fixed += t.fixed;
            h.regressed += t.regressed;
        }
        if let Some(t) = rows(gate_held, calls).iter().find(|t| t.tool == *base_name) {
            base_right += t.base_accuracy * t.cases as f64;
            base_cases += t.cases;
        }
    }
    if h.cases > 0 {
        h.head_accuracy /= h.cases as f64;
        h.accuracy /= h.cases as f64;
    }
    if base_cases > 0 {
        h.base_accuracy = base_right / base_cases as f64;
    }
    h.p_value_better = crate::stats::mcnemar_exact_one_sided(h.fixed, h.regressed);
    h
}

/// The other tools the rewrite costs held-out cases (routing or calls; more regressed than
/// fixed), counted before any test can call it noise: worse than head *and* worse than base (a
/// case head won by accident and base lost too is restored, not lost; a loss head already had is
/// not the rewrite's). A failing tool's cases are outside `vs_base` (its own target's), so for it
/// worse than head is enough: head is below base there already. `base_name` maps head's names.
fn others_lost(
    vs_head: &Report,
    vs_base: &Report,
    own: &[&str],
    base_name: impl Fn(&str) -> String,
    failing: &[&str],
) -> Vec<String> {
    let mut out = Vec::new();
    for (calls, what) in [(false, "routing"), (true, "call")] {
        let below_base = |tool: &str| {
            let b = base_name(tool);
            failing.contains(&b.as_str())
                || rows(vs_base, calls)
                    .iter()
                    .any(|t| t.tool == b && t.regressed > t.fixed)
        };
        out.extend(
            rows(vs_head, calls)
                .iter()
                .filter(|t| {
                    !own.contains(&t.tool.as_str()) && t.regressed > t.fixed && below_base(&t.tool)
                })
                .map(|t| {
                    format!(
                        "{}: {} held-out {what} case(s) lost against head, below base",
                        t.tool,
                        t.regressed - t.fixed
                    )
                }),
        );
    }
    out
}

/// Whether a rewrite's held-out verdict (base against it) passes for its target: it passes, or
/// what fails is only rulings on other tools the PR changed (a fix of one tool can reveal
/// another's failure that the first check's family correction hid; that tool is its own
/// problem, and `applied` judges head with every offered rewrite whole). A failure on the
/// target's own tools, or one no tool's ruling explains (the schema law, an injection finding, a
/// forbidden call, the overall test), or a verdict left unproven, refuses it.
fn own_gate(
    v: &crate::gate::Verdict,
    own: &[&str],
    changed: &BTreeSet<String>,
) -> Result<Vec<String>, String> {
    let fails: Vec<&crate::gate::Ruling> = v
        .rulings
        .iter()
        .filter(|r| r.outcome == RulingOutcome::Fail)
        .collect();
    match v.status {
        Status::Pass => Ok(Vec::new()),
        Status::Fail
            if !fails.is_empty()
                && fails
                    .iter()
                    .all(|r| !own.contains(&r.tool.as_str()) && changed.contains(&r.tool))
                // Each line of the verdict is one of those rulings'.
                && v.also.len() < fails.len() =>
        {
            Ok(fails
                .iter()
                .map(|r| format!("{}: {}", r.tool, r.message))
                .collect())
        }
        _ => Err(v.reason.clone()),
    }
}

/// Why a measured rewrite is not offered, or `None`: it is. `gate` is [`own_gate`]'s answer.
fn refusal(p: &Proposal, gate: &Result<Vec<String>, String>) -> Option<String> {
    if p.gate_held_out.status == Status::Incomplete || p.gate_full.status == Status::Incomplete {
        return Some("its measurement is incomplete".into());
    }
    if p.held_out.fixed <= p.held_out.regressed {
        return Some(format!(
            "does not beat head on the held-out cases ({} fixed, {} regressed)",
            p.held_out.fixed, p.held_out.regressed
        ));
    }
    if let Err(why) = gate {
        return Some(format!("the gate on the held-out cases: {why}"));
    }
    if !p.other_regressions.is_empty() {
        return Some(format!("costs {}", p.other_regressions.join("; ")));
    }
    if !p.scan_introduced.is_empty() {
        return Some(format!(
            "the injection scan finds {}",
            p.scan_introduced.join(", ")
        ));
    }
    None
}

/// The offered rewrite to show first: most held-out cases right, then one that also passes on
/// the whole suite, then the shortest, then the generators' order.
fn rank(candidates: &[Proposal]) -> Option<usize> {
    // Every rewrite keeps head's text whole, so its length is how much it adds.
    let changed = |p: &Proposal| p.text.len();
    candidates
        .iter()
        .enumerate()
        .filter(|(_, p)| p.offered)
        .min_by(|(i, a), (j, b)| {
            b.held_out
                .accuracy
                .total_cmp(&a.held_out.accuracy)
                .then_with(|| {
                    (b.gate_full.status == Status::Pass).cmp(&(a.gate_full.status == Status::Pass))
                })
                .then_with(|| changed(a).cmp(&changed(b)))
                .then_with(|| i.cmp(j))
        })
        .map(|(i, _)| i)
}

/// One thing to rewrite: a field of a tool, for the rulings that failed it or for a pair the PR
/// made confusable.
#[derive(Debug, Clone)]
struct Target {
    /// Head's name, and base's (the frozen suite's) name.
    tool: String,
    base_name: String,
    field: Field,
    failed: Vec<String>,
    /// A pair's other tool (head name, base name) and why the pair is a target.
    partner: Option<(String, String, String)>,
}

impl Target {
    /// Judged on call accuracy (a parameter's description) rather than routing.
    fn calls(&self) -> bool {
        matches!(self.field, Field::Param(_))
    }

    /// The tools whose held-out cases judge the rewrite: (head name, base name).
    fn judged(&self) -> Vec<(&str, &str)> {
        let mut out = vec![(self.tool.as_str(), self.base_name.as_str())];
        if let Some((h, b, _)) = &self.partner {
            out.push((h.as_str(), b.as_str()));
        }
        out
    }
}

/// Base's and head's names of `name` (either side's), through the diff's pairing.
fn names(first: &Report, name: &str) -> (String, String) {
    let paired = first.diff.tools.iter().find(|t| {
        t.name == name
            || t.base_name.as_deref() == Some(name)
            || t.head_name.as_deref() == Some(name)
    });
    let base = paired.map_or(Some(name.to_string()), |t| t.base_name.clone());
    let head = paired.map_or(Some(name.to_string()), |t| t.head_name.clone());
    (
        base.unwrap_or_else(|| name.to_string()),
        head.unwrap_or_else(|| name.to_string()),
    )
}

/// `field` of the tool named `name` on `side`.
fn text_of(side: &Loaded, name: &str, field: &Field) -> Option<String> {
    side.tools.get(name).and_then(|t| field.get(t))
}

/// Head's tool `head_name` says something base's `base_name` did not (or base has no such tool).
fn changed(kit: &Kit, base_name: &str, head_name: &str) -> bool {
    text_of(&kit.base, base_name, &Field::Description)
        != text_of(&kit.head, head_name, &Field::Description)
}

/// The parameters whose description base had and head changed, in head's order: drafting can
/// only restore what base said, so a parameter new at head (or undescribed at base) is none.
fn changed_params(base: Option<&crate::tools::Tool>, head: &crate::tools::Tool) -> Vec<String> {
    head.input_schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|props| {
            props
                .keys()
                .filter(|p| {
                    let f = Field::Param((*p).clone());
                    let was = base.and_then(|b| f.get(b));
                    was.is_some() && was != f.get(head)
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// How many of a tool's parameters have a description.
fn described_params(t: &crate::tools::Tool) -> usize {
    t.input_schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map_or(0, |props| {
            props
                .keys()
                .filter(|p| Field::Param((*p).clone()).get(t).is_some())
                .count()
        })
}

/// Every target of a run: the failing tools' descriptions (and their changed parameters'
/// descriptions where call accuracy failed); the changed tool that took a failing unchanged
/// tool's cases; and the changed tool of each confusable pair or shadowing risk lint found
/// introduced. Returns the targets and notes on failing tools with nothing at head.
fn targets(kit: &Kit, first: &Report, held: &[bool]) -> (Vec<Target>, Vec<String>) {
    let mut out: Vec<Target> = Vec::new();
    let mut notes = Vec::new();
    let routing = first.routing.as_ref();
    // An incomplete or inconclusive check measured nothing to draft against.
    if !matches!(first.verdict.status, Status::Pass | Status::Fail) {
        return (Vec::new(), Vec::new());
    }
    let fails = if first.verdict.status == Status::Fail {
        failing(first)
    } else {
        Vec::new()
    };
    let mut pairs: Vec<(String, String, String)> = Vec::new();
    for f in fails {
        let (base_name, tool) = names(first, &f.tool);
        if kit.head.tools.get(&tool).is_none() {
            notes.push(format!(
                "`{}` failed and has no tool at head: nothing to rewrite",
                f.tool
            ));
            continue;
        }
        out.push(Target {
            tool: tool.clone(),
            base_name: base_name.clone(),
            field: Field::Description,
            failed: f.messages.clone(),
            partner: None,
        });
        if f.calls {
            let head_tool = kit.head.tools.get(&tool).expect("checked above");
            for p in changed_params(kit.base.tools.get(&base_name), head_tool) {
                out.push(Target {
                    tool: tool.clone(),
                    base_name: base_name.clone(),
                    field: Field::Param(p),
                    failed: f.messages.clone(),
                    partner: None,
                });
            }
        }
        // Measured shadowing: an unchanged tool lost its cases to a tool the PR changed; that
        // tool's wording is what to repair.
        if f.routing
            && !changed(kit, &base_name, &tool)
            && let Some(routing) = routing
        {
            // Routing losses only (a call flip was answered by the tool itself).
            let lost = lost(
                &kit.suite.suite,
                held,
                routing,
                &[&base_name],
                Flips::Routing,
            );
            let routed: Vec<&str> = lost.iter().map(|l| l.answered.as_str()).collect();
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for a in &routed {
                *counts.entry(a).or_default() += 1;
            }
            // Most of them, to one tool the PR changed.
            if let Some((taker, n)) = counts.into_iter().max_by_key(|(t, n)| (*n, *t))
                && 2 * n > routed.len()
                && taker != tool
                && kit.head.tools.get(taker).is_some()
            {
                pairs.push((
                    taker.to_string(),
                    tool.clone(),
                    format!(
                        "replay: `{}` lost its cases to `{taker}`, which the PR changed",
                        f.tool
                    ),
                ));
            }
        }
    }
    for finding in first.lint.iter().flat_map(|l| &l.introduced) {
        use crate::lint::RuleId;
        if !matches!(finding.rule, RuleId::ConfusablePair | RuleId::ShadowingRisk) {
            continue;
        }
        if let [a, b] = finding.tools.as_slice() {
            for (x, y) in [(a, b), (b, a)] {
                pairs.push((
                    x.clone(),
                    y.clone(),
                    format!("lint {}: {}", finding.rule.as_str(), finding.message),
                ));
            }
        }
    }
    for (x, y, why) in pairs {
        let (base_x, head_x) = names(first, &x);
        let (base_y, head_y) = names(first, &y);
        let taken = out
            .iter()
            .any(|t| t.tool == head_x && t.field == Field::Description);
        if taken || kit.head.tools.get(&head_x).is_none() || !changed(kit, &base_x, &head_x) {
            continue;
        }
        out.push(Target {
            tool: head_x,
            base_name: base_x,
            field: Field::Description,
            failed: Vec::new(),
            partner: Some((head_y, base_y, why)),
        });
    }
    (out, notes)
}

/// What a target's rewrites are verified on: head, or for a parameter's, head with its tool's
/// offered description rewrite (named in `on_top_of`).
struct Ground {
    head: Loaded,
    on_top_of: Option<String>,
}

/// The held-out cases a target's gate reads: the other failing tools' cases set aside (they are
/// their own targets' to fix; `applied` judges head with every offered rewrite on all of them).
fn gate_cases(suite: &Suite, held: &[bool], others_failing: &[&str]) -> Vec<bool> {
    suite
        .cases
        .iter()
        .zip(held)
        .map(|(c, h)| {
            *h && !c
                .expect
                .names()
                .iter()
                .any(|n| others_failing.contains(&n.as_str()))
        })
        .collect()
}

/// For a pair lint found: whether lint still finds it in `full` (base against the rewrite).
fn still_flagged(full: &Report, target: &Target) -> Option<bool> {
    let (partner, _, why) = target.partner.as_ref()?;
    why.starts_with("lint ").then(|| {
        full.lint.iter().flat_map(|l| &l.introduced).any(|f| {
            f.tools.contains(&target.tool)
                && f.tools.contains(partner)
                && matches!(
                    f.rule,
                    crate::lint::RuleId::ConfusablePair | crate::lint::RuleId::ShadowingRisk
                )
        })
    })
}

/// The injection-scan rules and the lint findings ("rule: message") `full` introduces.
fn introduced(full: &Report) -> (Vec<String>, Vec<String>) {
    let scan: BTreeSet<String> = full
        .scan
        .iter()
        .flat_map(|s| &s.introduced)
        .map(|f| f.rule.as_str().to_string())
        .collect();
    let lint = full
        .lint
        .iter()
        .flat_map(|l| &l.introduced)
        .map(|f| format!("{}: {}", f.rule.as_str(), f.message))
        .collect();
    (scan.into_iter().collect(), lint)
}

/// Draft and verify the rewrites of one target.
#[allow(clippy::too_many_arguments)]
async fn fix_target(
    kit: &Kit,
    first: &Report,
    held: &[bool],
    carried: &Suite,
    target: Target,
    ground: &Ground,
    failing_tools: &[&str],
    drafter: Drafter<'_>,
    console: &dyn Console,
) -> Result<ToolFix> {
    let tool = &target.tool;
    let field = &target.field;
    let base_text = text_of(&kit.base, &target.base_name, field).unwrap_or_default();
    let head_text = text_of(&kit.head, tool, field).unwrap_or_default();
    let routing = first.routing.as_ref().expect("a check with a suite routes");
    let own: Vec<&str> = target.judged().iter().map(|(_, b)| *b).collect();
    let which = if target.calls() {
        Flips::Calls
    } else {
        Flips::Both
    };
    let lost = lost(&kit.suite.suite, held, routing, &own, which);
    let e = evidence(
        (&base_text, &head_text),
        &kit.head,
        tool,
        &lost,
        target.partner.as_ref().map(|(h, _, _)| h.as_str()),
    );
    let mut drafted = draft::draft(&e);
    // The drafting prompt is written for a tool's description; a parameter's is drafted offline.
    if let Some((llm, n)) = drafter
        && *field == Field::Description
    {
        drafted.extend(draft::llm::draft(llm, &e, n).await?);
    }
    let finding = target.partner.as_ref().map(|(_, _, why)| why.clone());
    let others_failing: Vec<&str> = failing_tools
        .iter()
        .copied()
        .filter(|t| !own.contains(t))
        .collect();
    let gated = gate_cases(&kit.suite.suite, held, &others_failing);
    // Base's names of the tools the PR changed (a renamed one under its base name, as rulings
    // name it).
    let changed: BTreeSet<String> =
        crate::replay::target::changed_tools(&kit.base.tools, &kit.head.tools)
            .into_iter()
            .map(|n| names(first, &n).0)
            .collect();
    let mut candidates = Vec::new();
    for c in drafted {
        let rewritten = with_text(&ground.head, tool, field, &c.text);
        let frozen = &kit.suite.suite;
        let gate_held = kit
            .check(&kit.base, &rewritten, frozen, Some(&gated))
            .await?;
        let vs_head = kit
            .check(&ground.head, &rewritten, carried, Some(held))
            .await?;
        let full = kit.check(&kit.base, &rewritten, frozen, None).await?;
        let held_out = against_head(&vs_head, &gate_held, &target.judged(), target.calls());
        let heads_own: Vec<&str> = target.judged().iter().map(|(h, _)| *h).collect();
        let other_regressions = others_lost(
            &vs_head,
            &gate_held,
            &heads_own,
            |h| names(first, h).0,
            failing_tools,
        );

        let pair_still_flagged = still_flagged(&full, &target);
        let (scan_introduced, lint_introduced) = introduced(&full);
        let mut p = Proposal {
            summary: draft::summary(&c.id).to_string(),
            generator: c.id,
            text: c.text,
            held_out,
            gate_held_out: Outcome::from(&gate_held.verdict),
            gate_full: Outcome::from(&full.verdict),
            other_regressions,
            scan_introduced,
            lint_introduced,
            pair_still_flagged,
            failing_elsewhere: Vec::new(),
            offered: false,
            why_not: None,
        };
        let gate = own_gate(&gate_held.verdict, &own, &changed);
        p.why_not = refusal(&p, &gate);
        p.failing_elsewhere = gate.unwrap_or_default();
        p.offered = p.why_not.is_none();
        console.note(&format!(
            "driftgate: fix: {} {} × {}: held-out {}; {}",
            report::escape::cell(tool, 80),
            report::escape::cell(&field.name(), 80),
            p.generator,
            p.held_out.counts(),
            if p.offered { "offered" } else { "not offered" }
        ));
        candidates.push(p);
    }
    let best = rank(&candidates);
    Ok(ToolFix {
        kept: draft::new_facts(&base_text, &head_text),
        tool: tool.clone(),
        field: field.name(),
        failed: target.failed,
        partner: target.partner.as_ref().map(|(h, _, _)| h.clone()),
        finding,
        verified_on: ground.on_top_of.clone(),
        base_text,
        head_text,
        lost,
        candidates,
        best,
    })
}

/// `fix --plan` (and `check --suggest --plan`): the check's plan, and the most that verifying
/// rewrites can add (every target there can be, every generator drafting, and `llm` model
/// drafts per description).
pub fn plan(inputs: &CheckInputs, llm: u32) -> Result<crate::replay::plan::Plan> {
    let mut p = check::plan(inputs)?;
    let suite = &inputs
        .replay
        .as_ref()
        .expect("a plan has a suite")
        .suite
        .suite;
    let changed = crate::replay::target::changed_tools(&inputs.base.tools, &inputs.head.tools);
    // Which tools fail is known only once the check has answered. A description is a target
    // when its tool fails (any tool the suite expects: one the PR left alone can lose its cases
    // to a changed one) or is the changed tool of a pair (any changed tool); a parameter's
    // description, when its tool fails on call accuracy and head reworded it (a tool with no
    // same-named one at base, renamed or new, counts every described parameter).
    let expected: BTreeSet<String> = suite
        .cases
        .iter()
        .flat_map(|c| c.expect.names())
        .filter(|n| inputs.head.tools.get(n).is_some())
        .cloned()
        .collect();
    let descriptions: BTreeSet<&String> = expected
        .iter()
        .chain(
            changed
                .iter()
                .filter(|t| inputs.head.tools.get(t).is_some()),
        )
        .collect();
    let params: usize = expected
        .iter()
        .filter_map(|t| inputs.head.tools.get(t))
        .map(|h| match inputs.base.tools.get(&h.name) {
            Some(b) => changed_params(Some(b), h).len(),
            None => described_params(h),
        })
        .sum();
    let mut bound = crate::replay::plan::RewritePlan::bound(
        &p,
        descriptions.len() + params,
        draft::GENERATORS.len() + llm as usize,
    );
    // Each model draft is asked at most this many times (re-asked when it fails validation).
    bound.drafting_requests_at_most =
        (descriptions.len() * llm as usize) as u64 * u64::from(crate::llm::json::MAX_ATTEMPTS);
    p.rewrites = Some(bound);
    Ok(p)
}

/// Run `fix`: the check, then the rewrites of every tool it failed on routing or call accuracy.
/// Returns the check's own report beside the fix report (`check --suggest` delivers it).
pub async fn run(
    inputs: CheckInputs,
    drafter: Drafter<'_>,
    console: &dyn Console,
) -> Result<(Report, FixReport)> {
    let kit = Kit::of(&inputs)?;
    let first = check::run(Command::Check, inputs, console).await?;
    let held = draft::held_out(&kit.suite.suite);
    // The suite as head's names read it (a rename carried), for rewrites judged against head.
    let carried = check::renamed_suite(&kit.suite.suite, &first.diff).0;
    let (targets, mut notes) = targets(&kit, &first, &held);
    let mut tools: Vec<ToolFix> = Vec::new();
    let failing_tools: Vec<String> = targets
        .iter()
        .filter(|t| !t.failed.is_empty())
        .map(|t| t.base_name.clone())
        .collect();
    let failing_tools: Vec<&str> = failing_tools.iter().map(String::as_str).collect();
    for t in targets {
        // A parameter's rewrites are verified on head with its tool's offered description (its
        // calls cannot be right while its routing is wrong); everything else on head.
        let offered = tools
            .iter()
            .find(|f| f.tool == t.tool && f.field == "description")
            .and_then(|f| f.best());
        let ground = match (&t.field, offered) {
            (Field::Param(_), Some(best)) => Ground {
                head: with_text(&kit.head, &t.tool, &Field::Description, &best.text),
                on_top_of: Some(format!("head with `{}`'s offered description", t.tool)),
            },
            _ => Ground {
                head: kit.head.clone(),
                on_top_of: None,
            },
        };
        let fixed = fix_target(
            &kit,
            &first,
            &held,
            &carried,
            t,
            &ground,
            &failing_tools,
            drafter,
            console,
        )
        .await?;
        tools.push(fixed);
    }
    // A tool that failed only on call accuracy, whose description drafting could not touch, is
    // told through its parameters' rewrites.
    let by_param: BTreeSet<String> = tools
        .iter()
        .filter(|t| t.field != "description")
        .map(|t| t.tool.clone())
        .collect();
    tools.retain(|t| {
        !(t.field == "description"
            && t.candidates.is_empty()
            && t.partner.is_none()
            && by_param.contains(&t.tool))
    });
    match first.verdict.status {
        Status::Fail if !tools.iter().any(|t| t.partner.is_none()) => notes.push(
            "the check failed on no tool's routing or call accuracy: no rewrite of a description can be verified for it".into(),
        ),
        Status::Fail => {}
        status if tools.is_empty() => {
            let status = serde_json::to_value(status).expect("a status serialises");
            notes.push(format!(
                "the check did not fail ({}) and lint found no confusable pair or shadowing risk the PR introduced: nothing to fix",
                status.as_str().unwrap_or_default()
            ));
        }
        _ => {}
    }
    if let Some((llm, n)) = drafter
        && !tools.is_empty()
    {
        notes.push(format!(
            "rewrites llm-1 … llm-{n} were drafted by {} at {} with {} (sha256 {}) from the drafting half only",
            llm.model(),
            llm.host(),
            draft::llm::PROMPT_FILE,
            crate::canon::hash_str(draft::llm::PROMPT)
        ));
    }
    let applied = apply_best(&kit, &tools, &held).await?;
    let n_held = held.iter().filter(|h| **h).count();
    let fix = FixReport {
        schema_version: FIX_SCHEMA_VERSION,
        driftgate_version: report::VERSION.to_string(),
        command: crate::report::fix::FixCommand::Fix,
        check: first.verdict.clone(),
        base: Side::of(&kit.base),
        head: Side::of(&kit.head),
        suite: crate::suite::Identity::of(&kit.suite.suite),
        router: crate::route::Identity::of(kit.router.as_ref(), &kit.config.system_prompt),
        split: Split {
            rule: "per expected tool, cases sorted by the sha256 of their id; every second one, the first included, held out".into(),
            drafting: held.len() - n_held,
            held_out: n_held,
            held_out_ids: kit
                .suite
                .suite
                .cases
                .iter()
                .zip(&held)
                .filter(|(_, h)| **h)
                .map(|(c, _)| c.id.clone())
                .collect(),
        },
        tools,
        applied,
        notes,
    };
    Ok((first, fix))
}

/// Head with every target's first offered rewrite, judged against base (measured again only
/// when more than one is rewritten).
async fn apply_best(kit: &Kit, tools: &[ToolFix], held: &[bool]) -> Result<Option<Applied>> {
    let offered: Vec<(&ToolFix, &Proposal)> =
        tools.iter().filter_map(|t| Some((t, t.best()?))).collect();
    let label = |t: &ToolFix| crate::report::fix::target_label(&t.tool, &t.field);
    // One rewrite: its proposal was measured on exactly this head already.
    if let [(t, p)] = offered.as_slice() {
        return Ok(Some(Applied {
            tools: vec![label(t)],
            held_out: p.gate_held_out.clone(),
            full: p.gate_full.clone(),
        }));
    }
    if offered.is_empty() {
        return Ok(None);
    }
    let mut head = kit.head.clone();
    for (t, p) in &offered {
        head = with_text(&head, &t.tool, &Field::parse(&t.field), &p.text);
    }
    let held_out = kit
        .check(&kit.base, &head, &kit.suite.suite, Some(held))
        .await?;
    let full = kit.check(&kit.base, &head, &kit.suite.suite, None).await?;
    Ok(Some(Applied {
        tools: offered.iter().map(|(t, _)| label(t)).collect(),
        held_out: Outcome::from(&held_out.verdict),
        full: Outcome::from(&full.verdict),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameters_field_names_it_as_a_json_pointer_and_reads_back() {
        let tool = crate::tools::Tool::from_value(
            &serde_json::json!({"name": "t", "description": "T.", "inputSchema": {"type": "object",
                "properties": {"a/b~c": {"type": "string", "description": "Odd."}}}}),
            "t.json",
            "/tools/0",
        )
        .unwrap();
        let f = Field::Param("a/b~c".into());
        assert_eq!(f.name(), "/inputSchema/properties/a~1b~0c/description");
        assert_eq!(Field::parse(&f.name()), f);
        assert_eq!(Field::parse("description"), Field::Description);
        assert_eq!(f.get(&tool).as_deref(), Some("Odd."));
        // The pointer resolves in the tool as the report's JSON shows it.
        assert_eq!(
            tool.to_value().pointer(&f.name()).and_then(|v| v.as_str()),
            Some("Odd.")
        );
    }
}
