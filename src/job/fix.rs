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
use crate::replay::{Direction, Flip, Routing};
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

/// `head` with `tool`'s description replaced.
fn with_text(head: &Loaded, tool: &str, text: &str) -> Loaded {
    let mut out = head.clone();
    if let Some(t) = out.tools.tools.iter_mut().find(|t| t.name == tool) {
        t.description = Some(text.to_string());
    }
    out
}

/// The tools the verdict failed on routing or call accuracy, each with its rulings' sentences,
/// in the verdict's order.
fn failing(report: &Report) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for r in &report.verdict.rulings {
        if r.outcome != RulingOutcome::Fail || !matches!(r.metric, Metric::Routing | Metric::Calls)
        {
            continue;
        }
        match out.iter_mut().find(|(t, _)| *t == r.tool) {
            Some((_, m)) => m.push(r.message.clone()),
            None => out.push((r.tool.clone(), vec![r.message.clone()])),
        }
    }
    out
}

/// The routing and call flips that regressed.
fn regressions(routing: &Routing) -> impl Iterator<Item = &Flip> {
    routing
        .paired
        .flips
        .iter()
        .chain(routing.calls.iter().flat_map(|c| &c.paired.flips))
        .filter(|f| f.direction == Direction::Regressed)
}

/// The drafting half's cases `tool` lost at head, once each.
fn lost(suite: &Suite, held: &[bool], routing: &Routing, tool: &str) -> Vec<Lost> {
    let index: BTreeMap<&str, usize> = suite
        .cases
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    let mut seen = BTreeSet::new();
    regressions(routing)
        .filter(|f| {
            index.get(f.id.as_str()).is_some_and(|&i| {
                !held[i] && suite.cases[i].expect.names().iter().any(|n| n == tool)
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

/// What drafting reads about `tool`: base's and head's texts, the lost prompts and the texts of
/// the tools that took them.
fn evidence(base_text: &str, head: &Loaded, tool: &str, lost: &[Lost]) -> Evidence {
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
        head: head
            .tools
            .get(tool)
            .map(|t| t.description_text().to_string())
            .unwrap_or_default(),
        lost: moved,
        siblings,
    }
}

/// Head against the rewrite on `tool`'s held-out cases (`gate_held`, base against it, gives
/// base's accuracy there; the tool is `base_name` in it).
fn against_head(vs_head: &Report, gate_held: &Report, tool: &str, base_name: &str) -> HeldOut {
    let own = rows(vs_head).iter().find(|t| t.tool == tool);
    let at_base = rows(gate_held).iter().find(|t| t.tool == base_name);
    HeldOut {
        cases: own.map_or(0, |t| t.cases),
        base_accuracy: at_base.map_or(0.0, |t| t.base_accuracy),
        head_accuracy: own.map_or(0.0, |t| t.base_accuracy),
        accuracy: own.map_or(0.0, |t| t.head_accuracy),
        fixed: own.map_or(0, |t| t.fixed),
        regressed: own.map_or(0, |t| t.regressed),
        p_value_better: own.map_or(1.0, |t| {
            crate::stats::mcnemar_exact_one_sided(t.fixed, t.regressed)
        }),
    }
}

/// The per-tool routing rows of a check.
fn rows(r: &Report) -> &[crate::replay::ToolRouting] {
    r.routing
        .as_ref()
        .map(|r| r.paired.per_tool.as_slice())
        .unwrap_or_default()
}

/// The other tools that lose held-out cases to the rewrite against base (more regressed than
/// fixed): what the gate holds every tool to, counted before any test can call it noise.
fn others_lost(gate_held: &Report, tool: &str) -> Vec<String> {
    rows(gate_held)
        .iter()
        .filter(|t| t.tool != tool && t.regressed > t.fixed)
        .map(|t| {
            format!(
                "{}: {} held-out case(s) lost against base",
                t.tool,
                t.regressed - t.fixed
            )
        })
        .collect()
}

/// Why a measured rewrite is not offered, or `None`: it is.
fn refusal(p: &Proposal) -> Option<String> {
    if p.gate_held_out.status == Status::Incomplete || p.gate_full.status == Status::Incomplete {
        return Some("its measurement is incomplete".into());
    }
    if p.held_out.fixed <= p.held_out.regressed {
        return Some(format!(
            "does not beat head on the held-out cases ({} fixed, {} regressed)",
            p.held_out.fixed, p.held_out.regressed
        ));
    }
    if p.gate_held_out.status != Status::Pass {
        return Some(format!(
            "the gate on the held-out cases: {}",
            p.gate_held_out.reason
        ));
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

/// Draft and verify the rewrites of one failing tool.
async fn fix_tool(
    kit: &Kit,
    first: &Report,
    held: &[bool],
    carried: &Suite,
    (failing, failed): (String, Vec<String>),
    drafter: Drafter<'_>,
    console: &dyn Console,
) -> Result<Option<ToolFix>> {
    // The verdict names a tool as the frozen suite does (base's name); a renamed tool is
    // rewritten, and judged against head, under its head name.
    let paired = first.diff.tools.iter().find(|t| {
        t.name == failing
            || t.base_name.as_deref() == Some(&failing)
            || t.head_name.as_deref() == Some(&failing)
    });
    let base_name = paired
        .and_then(|t| t.base_name.clone())
        .unwrap_or_else(|| failing.clone());
    let tool = paired
        .and_then(|t| t.head_name.clone())
        .unwrap_or_else(|| failing.clone());
    let Some(head_tool) = kit.head.tools.get(&tool) else {
        return Ok(None);
    };
    let base_text = kit
        .base
        .tools
        .get(&base_name)
        .map(|t| t.description_text().to_string())
        .unwrap_or_default();
    let head_text = head_tool.description_text().to_string();
    let routing = first.routing.as_ref().expect("a check with a suite routes");
    let lost = lost(&kit.suite.suite, held, routing, &base_name);
    let e = evidence(&base_text, &kit.head, &tool, &lost);
    let mut drafted = draft::draft(&e);
    if let Some((llm, n)) = drafter {
        drafted.extend(draft::llm::draft(llm, &e, n).await?);
    }
    let mut candidates = Vec::new();
    for c in drafted {
        let rewritten = with_text(&kit.head, &tool, &c.text);
        let frozen = &kit.suite.suite;
        let gate_held = kit.check(&kit.base, &rewritten, frozen, Some(held)).await?;
        let vs_head = kit
            .check(&kit.head, &rewritten, carried, Some(held))
            .await?;
        let full = kit.check(&kit.base, &rewritten, frozen, None).await?;
        let held_out = against_head(&vs_head, &gate_held, &tool, &base_name);
        let other_regressions = others_lost(&gate_held, &base_name);
        let mut p = Proposal {
            summary: draft::summary(&c.id).to_string(),
            generator: c.id,
            text: c.text,
            held_out,
            gate_held_out: Outcome::from(&gate_held.verdict),
            gate_full: Outcome::from(&full.verdict),
            other_regressions,
            scan_introduced: full
                .scan
                .iter()
                .flat_map(|s| &s.introduced)
                .map(|f| f.rule.as_str().to_string())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            lint_introduced: full
                .lint
                .iter()
                .flat_map(|l| &l.introduced)
                .map(|f| format!("{}: {}", f.rule.as_str(), f.message))
                .collect(),
            offered: false,
            why_not: None,
        };
        p.why_not = refusal(&p);
        p.offered = p.why_not.is_none();
        console.note(&format!(
            "driftgate: fix: {} × {}: held-out {}; {}",
            report::escape::cell(&tool, 80),
            p.generator,
            p.held_out.counts(),
            if p.offered { "offered" } else { "not offered" }
        ));
        candidates.push(p);
    }
    let best = rank(&candidates);
    Ok(Some(ToolFix {
        kept: draft::new_facts(&base_text, &head_text),
        tool,
        field: "description".into(),
        failed,
        base_text,
        head_text,
        lost,
        candidates,
        best,
    }))
}

/// `fix --plan` (and `check --suggest --plan`): the check's plan, and the most that verifying
/// rewrites can add (every changed tool the suite expects failing, every generator drafting, and
/// `llm` model drafts per tool).
pub fn plan(inputs: &CheckInputs, llm: u32) -> Result<crate::replay::plan::Plan> {
    let mut p = check::plan(inputs)?;
    let suite = &inputs
        .replay
        .as_ref()
        .expect("a plan has a suite")
        .suite
        .suite;
    let changed = crate::replay::target::changed_tools(&inputs.base.tools, &inputs.head.tools);
    let tools = changed
        .iter()
        .filter(|t| suite.cases.iter().any(|c| c.expect.names().contains(t)))
        .count();
    let mut bound =
        crate::replay::plan::RewritePlan::bound(&p, tools, draft::GENERATORS.len() + llm as usize);
    bound.drafting_requests_at_most = (tools * llm as usize) as u64;
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
    let mut notes = Vec::new();
    let mut tools = Vec::new();
    if first.verdict.status == Status::Fail {
        for f in failing(&first) {
            let name = f.0.clone();
            match fix_tool(&kit, &first, &held, &carried, f, drafter, console).await? {
                Some(t) => tools.push(t),
                None => notes.push(format!(
                    "`{name}` failed and has no tool at head: nothing to rewrite"
                )),
            }
        }
        if tools.is_empty() {
            notes.push(
                "the check failed on no tool's routing or call accuracy: no rewrite of a description can be verified for it".into(),
            );
        }
    } else {
        let status = serde_json::to_value(first.verdict.status).expect("a status serialises");
        notes.push(format!(
            "the check did not fail ({}): nothing to fix",
            status.as_str().unwrap_or_default()
        ));
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

/// Head with every tool's first offered rewrite, judged against base (measured again only when
/// more than one tool is rewritten).
async fn apply_best(kit: &Kit, tools: &[ToolFix], held: &[bool]) -> Result<Option<Applied>> {
    let offered: Vec<(&str, &Proposal)> = tools
        .iter()
        .filter_map(|t| Some((t.tool.as_str(), t.best()?)))
        .collect();
    // One tool rewritten: its proposal was measured on exactly this head already.
    if let [(tool, p)] = offered.as_slice() {
        return Ok(Some(Applied {
            tools: vec![tool.to_string()],
            held_out: p.gate_held_out.clone(),
            full: p.gate_full.clone(),
        }));
    }
    let best: Vec<(&str, &str)> = offered.iter().map(|(t, p)| (*t, p.text.as_str())).collect();
    if best.is_empty() {
        return Ok(None);
    }
    let mut head = kit.head.clone();
    for (tool, text) in &best {
        head = with_text(&head, tool, text);
    }
    let held_out = kit
        .check(&kit.base, &head, &kit.suite.suite, Some(held))
        .await?;
    let full = kit.check(&kit.base, &head, &kit.suite.suite, None).await?;
    Ok(Some(Applied {
        tools: best.iter().map(|(t, _)| t.to_string()).collect(),
        held_out: Outcome::from(&held_out.verdict),
        full: Outcome::from(&full.verdict),
    }))
}
