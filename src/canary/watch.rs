//! The canary verdict from attributed traffic: one anytime-valid test per guarded metric, read
//! after every session, so the verdict may be asked for at any hour without inflating false
//! alarms (docs/canary.md).
//!
//! - `rollback` (exit 1): some metric moved against head — a bad event (invented names, refused
//!   arguments, tool errors, no-call answers, re-asks) more frequent, or a tool's share of
//!   sessions moved either way — at a family-wise `alpha` (Bonferroni over the metrics: each
//!   test at `alpha / m`, valid jointly at every look).
//! - `promote` (exit 0): every metric shown non-inferior within the margin (rate ratio below
//!   `1 + margin`; shares within `[1/(1+margin), 1+margin]`), each test at `alpha` (an
//!   intersection-union test needs no correction). A metric with no event on either side does not
//!   hold promotion back, except the changed tools' own shares: a rollout is never promoted
//!   without evidence about the tools it changes.
//! - `continue` (exit 0): neither yet, with the sessions still needed at the rate seen.
//! - incomplete (exit 3): the traffic cannot be compared — no session in one arm, or the arms'
//!   sizes are not the split the rollout says (a sample-ratio mismatch at [`SPLIT_ALPHA`]:
//!   attribution is broken).

use serde::Serialize;

use super::rollout::{Arm, Rollout};
use super::traffic::{Attribution, Event, Traffic};
use crate::stats::seq::{Monitor, Side, ratio_interval};

/// The sample-ratio check's level: stricter than the metrics' (the usual p < 0.001 of A/B
/// platforms), since a mismatch voids every comparison of the run rather than one metric.
pub const SPLIT_ALPHA: f64 = 0.001;

/// What a watch decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Rollback,
    Promote,
    Continue,
    Incomplete,
}

impl Decision {
    pub fn exit_code(self) -> i32 {
        use crate::error::exit;
        match self {
            Decision::Rollback => exit::FAIL,
            Decision::Promote | Decision::Continue => exit::PASS,
            Decision::Incomplete => exit::INCOMPLETE,
        }
    }
}

/// The watch's knobs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The stage the logs were served at, in percent of sessions in head.
    pub stage: f64,
    pub alpha: f64,
    /// Non-inferiority margin on the rate ratio.
    pub margin: f64,
}

/// One guarded metric.
#[derive(Debug, Clone, Serialize)]
pub struct Metric {
    /// `share:TOOL`, `hallucinated`, `invalid-args`, `tool-error`, `no-call`, `reask`.
    pub name: String,
    /// Sessions with the event, per arm.
    pub base_events: u64,
    pub head_events: u64,
    /// Its rate per session, per arm.
    pub base_rate: f64,
    pub head_rate: f64,
    /// Head's rate over base's: the estimate and the 1 − alpha confidence sequence.
    pub ratio: Option<f64>,
    pub ratio_low: Option<f64>,
    pub ratio_high: Option<f64>,
    /// The always-valid p-value of "moved against head" (before the Bonferroni factor).
    pub p_worse: f64,
    /// Rejected at alpha / metrics.
    pub worse: bool,
    /// Shown within the margin.
    pub non_inferior: bool,
    /// Holds promotion back while not shown non-inferior.
    pub blocks: bool,
    /// More sessions needed to show it non-inferior if head in fact changes nothing (the
    /// events needed, at this metric's event rate per session).
    pub sessions_needed: Option<u64>,
}

/// Routing accuracy over one arm's labelled sessions.
#[derive(Debug, Clone, Serialize)]
pub struct LabelledAccuracy {
    pub sessions: u64,
    pub right: u64,
    pub accuracy: Option<f64>,
}

/// One look back at a metric: after `sessions` sessions, the ratio's confidence sequence then.
#[derive(Debug, Clone, Serialize)]
pub struct Look {
    pub sessions: u64,
    /// Seconds since the epoch of the session that closed the look, when logged.
    pub time: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// How a metric's confidence sequence narrowed as traffic came in (the HTML chart).
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub metric: String,
    pub looks: Vec<Look>,
}

/// Looks kept per charted metric, and metrics charted (the changed tools' shares first, then
/// the metrics that moved).
const LOOKS: usize = 40;
const CHARTED: usize = 4;

/// The confidence sequence of each charted metric at `LOOKS` evenly spaced points of the
/// traffic, as a reader watching every hour would have seen it.
fn history(r: &Rollout, traffic: &Traffic, metrics: &[Metric], s: &Settings) -> Vec<History> {
    let changed = metrics.iter().filter(|m| changed_share(r, &m.name));
    let moved = metrics
        .iter()
        .filter(|m| m.worse && !changed_share(r, &m.name));
    let rho = s.stage / 100.0;
    let n = traffic.sessions.len();
    let step = n.div_ceil(LOOKS).max(1);
    changed
        .chain(moved)
        .take(CHARTED)
        .map(|m| {
            let event = event_of(&m.name).expect("a known metric");
            let (mut h, mut b) = (0u64, 0u64);
            let mut looks = Vec::new();
            for (i, x) in traffic.sessions.iter().enumerate() {
                if x.events.contains(&event) {
                    if x.arm == Arm::Head { h += 1 } else { b += 1 }
                }
                if (i + 1) % step == 0 || i + 1 == n {
                    let (lo, hi) = ratio_interval(h, b, rho, s.alpha);
                    let any = h + b > 0;
                    looks.push(Look {
                        sessions: i as u64 + 1,
                        time: x.start,
                        low: (any && lo.is_finite()).then_some(lo),
                        high: (any && hi.is_finite()).then_some(hi),
                    });
                }
            }
            History {
                metric: m.name.clone(),
                looks,
            }
        })
        .collect()
}

/// A watch report.
#[derive(Debug, Clone, Serialize)]
pub struct WatchReport {
    pub decision: Decision,
    /// One line saying why.
    pub reason: String,
    pub stage: f64,
    pub next_stage: Option<f64>,
    pub alpha: f64,
    pub margin: f64,
    pub sessions_base: u64,
    pub sessions_head: u64,
    /// The sample-ratio check's always-valid p-value (head's share of sessions against the stage).
    pub split_p: f64,
    pub attribution: Attribution,
    pub metrics: Vec<Metric>,
    /// Routing accuracy on labelled sessions (no labelled request misrouted), per arm, with
    /// the labelled sessions counted: `[base, head]`, `None` without labels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labelled_accuracy: Option<[LabelledAccuracy; 2]>,
    /// The charted metrics' confidence sequences over the traffic.
    pub history: Vec<History>,
    /// Sessions per hour, when the logs carry times.
    pub sessions_per_hour: Option<f64>,
    /// Hours of traffic still needed at that rate (`continue`).
    pub hours_needed: Option<f64>,
    /// What the logs do not measure, said.
    pub notes: Vec<String>,
}

/// Whether `name` is the share metric of a tool the rollout changes.
fn changed_share(r: &Rollout, name: &str) -> bool {
    name.strip_prefix("share:")
        .is_some_and(|t| r.changes.contains_key(t))
}

fn event_of(name: &str) -> Option<Event> {
    Some(match name {
        "hallucinated" => Event::Hallucinated,
        "invalid-args" => Event::InvalidArgs,
        "tool-error" => Event::ToolError,
        "no-call" => Event::NoCall,
        "reask" => Event::Reask,
        "misrouted" => Event::Misrouted,
        "thumbs-down" => Event::ThumbsDown,
        _ => Event::Reached(name.strip_prefix("share:")?.to_string()),
    })
}

/// The metrics guarded for this rollout: every tool's share (both sides' tools), then the bad
/// events.
pub fn metric_names(r: &Rollout, traffic: &Traffic) -> Vec<String> {
    let mut tools: Vec<&String> = r.sets.values().flatten().collect();
    tools.sort();
    tools.dedup();
    let mut out: Vec<String> = tools.iter().map(|t| format!("share:{t}")).collect();
    if traffic.has_answers {
        out.push("hallucinated".into());
    }
    out.push("invalid-args".into());
    if traffic.has_tool_runs {
        out.push("tool-error".into());
    }
    if traffic.has_answers {
        out.push("no-call".into());
    }
    out.push("reask".into());
    if traffic.has_labels {
        out.push("misrouted".into());
    }
    if traffic.has_feedback {
        out.push("thumbs-down".into());
    }
    out
}

/// One metric's tests over the event sessions, in the order they came: moved against head (at
/// `alpha / m`), within the margin (at `alpha`), and the sessions still needed.
fn measure(
    r: &Rollout,
    traffic: &Traffic,
    name: &str,
    (n_base, n_head): (u64, u64),
    m: usize,
    s: &Settings,
) -> Metric {
    let rho = s.stage / 100.0;
    let event = event_of(name).expect("a known metric");
    let two_sided = name.starts_with("share:");
    let side = if two_sided { Side::Two } else { Side::Greater };
    let lambda_hi = 1.0 + s.margin;
    let mut worse = Monitor::new(rho, 1.0, side);
    let mut below_hi = Monitor::new(rho, lambda_hi, Side::Less);
    let mut above_lo = Monitor::new(rho, 1.0 / lambda_hi, Side::Greater);
    for x in traffic
        .sessions
        .iter()
        .filter(|x| x.events.contains(&event))
    {
        let h = x.arm == Arm::Head;
        worse.push(h);
        below_hi.push(h);
        above_lo.push(h);
    }
    let (he, be) = (worse.head, worse.base);
    let non_inferior = below_hi.rejects(s.alpha) && (!two_sided || above_lo.rejects(s.alpha));
    let blocks = !non_inferior && (he + be > 0 || changed_share(r, name));
    let rate = |e: u64, n: u64| if n == 0 { 0.0 } else { e as f64 / n as f64 };
    let (lo, hi) = ratio_interval(he, be, rho, s.alpha);
    let sessions_needed = blocks
        .then(|| {
            let per_session = (he + be).max(1) as f64 / traffic.sessions.len().max(1) as f64;
            let below = below_hi.events_to_reject(s.alpha, rho)?;
            let above = match two_sided {
                true => above_lo.events_to_reject(s.alpha, rho)?,
                false => 0,
            };
            Some((below.max(above) as f64 / per_session).ceil() as u64)
        })
        .flatten();
    Metric {
        name: name.to_string(),
        base_events: be,
        head_events: he,
        base_rate: rate(be, n_base),
        head_rate: rate(he, n_head),
        ratio: (he > 0 && be > 0).then(|| rate(he, n_head) / rate(be, n_base)),
        ratio_low: (he + be > 0 && lo.is_finite()).then_some(lo),
        ratio_high: (he + be > 0 && hi.is_finite()).then_some(hi),
        p_worse: worse.p(),
        worse: worse.rejects(s.alpha / m as f64),
        non_inferior,
        blocks,
        sessions_needed,
    }
}

/// Sessions per hour over the logged span, when the sessions carry start times.
fn rate(traffic: &Traffic) -> Option<f64> {
    let times: Vec<f64> = traffic.sessions.iter().filter_map(|x| x.start).collect();
    match (times.first(), times.last()) {
        (Some(a), Some(b)) if b > a && times.len() > 1 => {
            Some(times.len() as f64 / ((b - a) / 3600.0))
        }
        _ => None,
    }
}

/// What the logs cannot measure, and what overstates the evidence.
fn unmeasured(traffic: &Traffic) -> Vec<String> {
    let mut notes = Vec::new();
    if !traffic.has_tool_runs {
        notes.push(
            "tool errors not measured: the logs hold no tool executions (OTel execute_tool spans)"
                .to_string(),
        );
    }
    if !traffic.has_answers {
        notes.push(
            "invented names and no-call answers not measured: the logs are the server's (calls it received), not the model's answers"
                .to_string(),
        );
    }
    if traffic.attribution.sessionless > 0 {
        notes.push(format!(
            "{} exchange(s) name no session: each counted as a session of its own, which overstates the evidence if they belong to longer sessions",
            traffic.attribution.sessionless
        ));
    }
    notes
}

/// Accuracy on the sessions of `arm` a label says were routed right or wrong.
fn labelled(traffic: &Traffic, arm: Arm) -> LabelledAccuracy {
    let labelled = traffic
        .sessions
        .iter()
        .filter(|x| x.arm == arm && x.events.contains(&Event::Labelled));
    let (n, right) = labelled.fold((0u64, 0u64), |(n, r), x| {
        (n + 1, r + u64::from(!x.events.contains(&Event::Misrouted)))
    });
    LabelledAccuracy {
        sessions: n,
        right,
        accuracy: (n > 0).then(|| right as f64 / n as f64),
    }
}

/// The verdict on `traffic` for rollout `r`.
pub fn watch(r: &Rollout, traffic: &Traffic, s: &Settings) -> WatchReport {
    let rho = s.stage / 100.0;
    let names = metric_names(r, traffic);
    let n_base = traffic
        .sessions
        .iter()
        .filter(|x| x.arm == Arm::Base)
        .count() as u64;
    let n_head = traffic.sessions.len() as u64 - n_base;
    let mut split = Monitor::new(rho.clamp(1e-9, 1.0 - 1e-9), 1.0, Side::Two);
    for x in &traffic.sessions {
        split.push(x.arm == Arm::Head);
    }
    let arms = (n_base, n_head);
    let metrics: Vec<Metric> = names
        .iter()
        .map(|name| measure(r, traffic, name, arms, names.len(), s))
        .collect();
    let sessions_per_hour = rate(traffic);
    let notes = unmeasured(traffic);
    let worse: Vec<&str> = metrics
        .iter()
        .filter(|x| x.worse)
        .map(|x| x.name.as_str())
        .collect();
    // The slowest blocking metric; unknown if any of them cannot be projected.
    let needed: Option<u64> = metrics
        .iter()
        .filter(|x| x.blocks)
        .try_fold(0u64, |a, x| x.sessions_needed.map(|n| a.max(n)));
    let at = &traffic.attribution;
    let (decision, reason) = if traffic.sessions.is_empty() && at.unattributed > 0 {
        (
            Decision::Incomplete,
            format!(
                "incomplete: nothing in the logs says which version served each of the {} request(s) (no logged definitions, no --version-attribute, no session id); only time would, and before/after is confounded with everything else that changed: not judged",
                at.unattributed
            ),
        )
    } else if n_base == 0 || n_head == 0 {
        (
            Decision::Incomplete,
            format!(
                "incomplete: {n_base} session(s) in base and {n_head} in head; both arms must have traffic (at stage {} %, is the rollout live?)",
                s.stage
            ),
        )
    } else if split.rejects(SPLIT_ALPHA) {
        (
            Decision::Incomplete,
            format!(
                "incomplete: head has {:.2}% of sessions where the stage says {} % (p = {:.2e}): attribution or bucketing is broken, the arms cannot be compared",
                100.0 * n_head as f64 / (n_base + n_head) as f64,
                s.stage,
                split.p()
            ),
        )
    } else if !worse.is_empty() {
        (
            Decision::Rollback,
            format!("rollback: {} moved against head", worse.join(", ")),
        )
    } else if metrics.iter().all(|x| !x.blocks) {
        (
            Decision::Promote,
            match r.next_stage(s.stage) {
                Some(n) => format!("promote to {n} %: every metric within the margin"),
                None => "promote: every metric within the margin at 100 %".to_string(),
            },
        )
    } else {
        let blocking: Vec<&str> = metrics
            .iter()
            .filter(|x| x.blocks)
            .map(|x| x.name.as_str())
            .collect();
        (
            Decision::Continue,
            format!(
                "continue: not yet enough evidence on {}{}",
                blocking.join(", "),
                match needed {
                    Some(n) => format!(" (about {n} more session(s))"),
                    None => String::new(),
                }
            ),
        )
    };
    let hours_needed = match (decision, needed, sessions_per_hour) {
        (Decision::Continue, Some(n), Some(rate)) => Some(n as f64 / rate),
        _ => None,
    };
    let labelled_accuracy = traffic
        .has_labels
        .then(|| [Arm::Base, Arm::Head].map(|arm| labelled(traffic, arm)));
    let history = history(r, traffic, &metrics, s);
    WatchReport {
        decision,
        labelled_accuracy,
        history,
        reason,
        stage: s.stage,
        next_stage: r.next_stage(s.stage),
        alpha: s.alpha,
        margin: s.margin,
        sessions_base: n_base,
        sessions_head: n_head,
        split_p: split.p(),
        attribution: traffic.attribution.clone(),
        metrics,
        sessions_per_hour,
        hours_needed,
        notes,
    }
}
