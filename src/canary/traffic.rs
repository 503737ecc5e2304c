//! Production traffic read per session: each logged exchange attributed to the version it was
//! served, each session reduced to the set of events it had.
//!
//! The session is the unit, because the session is what the bucket rule randomises: two calls
//! of one session share an arm, so counting calls would count one draw of the split many times.
//! An exchange is attributed, in this order, by the definitions it was logged with (the changed
//! tools' served form is base's or head's), by an attribute the caller names (a version hash,
//! or `base`/`head`), or by the session's bucket at the stage. Never by time: before/after is
//! confounded with everything else that changed.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use super::rollout::{Arm, Rollout, served_hash};
use crate::suite::import::{Context, Exchange, Read, ToolRun};
use crate::tools::alias::Invented;
use crate::tools::validate::{ArgProblemKind, ArgsChecker};

/// What a session did at least once.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// Called this tool.
    Reached(String),
    /// Called a tool the request did not offer.
    Hallucinated,
    /// Called a tool with arguments its schema refuses.
    InvalidArgs,
    /// A tool execution failed.
    ToolError,
    /// Answered a request that offered tools without calling one.
    NoCall,
    /// Called the same tool again with other arguments within [`REASK_WINDOW`] exchanges.
    Reask,
    /// A labelled request (the expected-tool attribute) answered with another tool or none.
    Misrouted,
    /// A user's negative feedback (the feedback attribute) on a request.
    ThumbsDown,
    /// Had a labelled request (the denominator of labelled accuracy; not a guarded metric).
    Labelled,
}

/// Exchanges within which a second call of the same tool with changed arguments is a re-ask.
pub const REASK_WINDOW: usize = 3;

/// How exchanges were attributed to a version, and what could not be.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Attribution {
    /// By the definitions (or, in server-side call logs, the description) logged.
    pub by_definitions: usize,
    pub by_attribute: usize,
    pub by_bucket: usize,
    /// Exchanges nothing attributed (no definitions, attribute or session): left out.
    pub unattributed: usize,
    /// Exchanges whose logged definitions are neither side's (another version served).
    pub unknown_version: usize,
    /// Sessions served both versions: left out.
    pub mixed_sessions: usize,
    /// Sessions served other than the bucket rule says at this stage (by definitions or
    /// attribute); many means the split is not the rollout's and the comparison is off.
    pub against_bucket: usize,
    /// Exchanges without a session id, each counted as a session of its own.
    pub sessionless: usize,
    /// Tool executions that name no session, so belong to none.
    pub orphan_tool_runs: usize,
}

/// One session: its arm, when it started, what it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    pub arm: Arm,
    pub start: Option<f64>,
    /// Where its first exchange was read (for ordering sessions without times).
    pub order: usize,
    pub events: BTreeSet<Event>,
}

/// The traffic, attributed.
#[derive(Debug, Clone, PartialEq)]
pub struct Traffic {
    /// In the order they started.
    pub sessions: Vec<Session>,
    pub attribution: Attribution,
    /// Whether the logs recorded tool executions (else tool errors are not measured).
    pub has_tool_runs: bool,
    /// Whether the logs hold the model's answers (server-side call logs do not: no-call answers
    /// and invented names are then not measured).
    pub has_answers: bool,
    /// Whether labels (an expected-tool attribute) and feedback were asked for.
    pub has_labels: bool,
    pub has_feedback: bool,
    /// Tool and parameter names agents invented, counted per call (for the alias map).
    pub invented: Invented,
}

/// How to attribute what the definitions do not.
#[derive(Debug, Clone, Default)]
pub struct Attribute {
    /// An attribute whose value is a version hash of a changed tool, or `base`/`head`.
    pub key: Option<String>,
    /// An attribute naming the tool a request should have reached (`none`: no call): a label.
    pub expected: Option<String>,
    /// An attribute carrying a user's feedback: `down`, `-1`, `negative`, `bad` or `false` is
    /// negative.
    pub feedback: Option<String>,
}

/// Whether a feedback value is negative.
fn negative(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64().is_some_and(|x| x < 0.0),
        Value::String(s) => matches!(
            s.to_ascii_lowercase().as_str(),
            "down" | "thumbs_down" | "thumbsdown" | "-1" | "negative" | "bad" | "false"
        ),
        _ => false,
    }
}

fn arm_by_definitions(served: &Served, defs: &[Value]) -> Result<Option<Arm>, ()> {
    let logged: BTreeMap<&str, Option<String>> = defs
        .iter()
        .filter_map(|d| {
            let d2 = d.get("function").unwrap_or(d);
            Some((d2.get("name")?.as_str()?, served_hash(d)))
        })
        .collect();
    let mut arms = BTreeSet::new();
    for (name, (base, head)) in &served.changed {
        let got = logged.get(name.as_str()).cloned().flatten();
        if base == head {
            continue; // the change is not in what a model is shown
        }
        if got == *base {
            arms.insert(Arm::Base);
        } else if got == *head {
            arms.insert(Arm::Head);
        } else {
            return Err(());
        }
    }
    match arms.len() {
        0 => Ok(None),
        1 => Ok(arms.into_iter().next()),
        _ => Err(()),
    }
}

/// The arm the attribute names: `Ok(None)` when the record does not carry it, `Err` when it
/// names a version the rollout does not have (another version served: never guessed).
fn arm_by_attribute(r: &Rollout, attrs: &Map<String, Value>, key: &str) -> Result<Option<Arm>, ()> {
    let Some(v) = attrs.get(key) else {
        return Ok(None);
    };
    let v = v.as_str().ok_or(())?;
    match v {
        "base" => return Ok(Some(Arm::Base)),
        "head" => return Ok(Some(Arm::Head)),
        _ => {}
    }
    r.changes
        .values()
        .find_map(|c| {
            if c.base.as_deref() == Some(v) {
                Some(Arm::Base)
            } else if c.head.as_deref() == Some(v) {
                Some(Arm::Head)
            } else {
                None
            }
        })
        .map(Some)
        .ok_or(())
}

/// The served-form hash of each changed tool at each side (`None`: not served there).
struct Served {
    changed: BTreeMap<String, (Option<String>, Option<String>)>,
    /// Each changed tool's description at base and head (`None`: none, or not served).
    descriptions: BTreeMap<String, (Option<String>, Option<String>)>,
}

impl Served {
    fn of(r: &Rollout) -> Served {
        let h = |v: &Option<String>| {
            v.as_ref()
                .and_then(|v| r.definitions.get(v))
                .and_then(served_hash)
        };
        let d = |v: &Option<String>| {
            v.as_ref()
                .and_then(|v| r.definitions.get(v))
                .and_then(|d| d.get("description"))
                .and_then(Value::as_str)
                .map(String::from)
        };
        Served {
            changed: r
                .changes
                .iter()
                .map(|(n, c)| (n.clone(), (h(&c.base), h(&c.head))))
                .collect(),
            descriptions: r
                .changes
                .iter()
                .map(|(n, c)| (n.clone(), (d(&c.base), d(&c.head))))
                .collect(),
        }
    }
}

/// The version one record was served, by the first rule that says: what it logged (`logged`:
/// its definitions or description), a named attribute, the session's bucket; `None` (counted)
/// when none does or it logged another version.
fn attribute_one(
    r: &Rollout,
    logged: Option<Result<Option<Arm>, ()>>,
    ctx: &Context,
    stage: f64,
    attribute: &Attribute,
    at: &mut Attribution,
) -> Option<Arm> {
    let arm = match logged {
        Some(Err(())) => {
            at.unknown_version += 1;
            return None;
        }
        Some(Ok(Some(arm))) => {
            at.by_definitions += 1;
            Some(arm)
        }
        _ => None,
    };
    let named = match (arm, attribute.key.as_deref()) {
        (None, Some(key)) => arm_by_attribute(r, &ctx.attributes, key),
        _ => Ok(None),
    };
    let arm = match named {
        Err(()) => {
            at.unknown_version += 1;
            return None;
        }
        Ok(Some(a)) => {
            at.by_attribute += 1;
            Some(a)
        }
        Ok(None) => arm,
    };
    if let (Some(a), Some(s)) = (arm, &ctx.session)
        && r.arm(s, stage) != a
    {
        at.against_bucket += 1;
    }
    let arm = arm.or_else(|| {
        let a = r.arm(ctx.session.as_deref()?, stage);
        at.by_bucket += 1;
        Some(a)
    });
    if arm.is_none() {
        at.unattributed += 1;
    }
    arm
}

/// Each tool's argument checker at each side (`None`: a schema the checker cannot compile).
type Checkers = BTreeMap<(Arm, String), Option<ArgsChecker>>;

fn checkers(r: &Rollout) -> Checkers {
    [Arm::Base, Arm::Head]
        .into_iter()
        .flat_map(|arm| {
            r.side(arm)
                .into_iter()
                .map(move |(n, d)| {
                    let schema = d.get("inputSchema").cloned().unwrap_or(Value::Null);
                    ((arm, n.to_string()), ArgsChecker::new(&schema).ok())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// A call of an earlier exchange: its index, tool and arguments.
type Earlier<'a> = (usize, &'a str, Option<&'a Map<String, Value>>);

/// A call a record made: the tool, its arguments, the tools offered if logged.
type Made<'a> = (
    &'a str,
    Option<&'a Map<String, Value>>,
    Option<&'a Vec<String>>,
);

/// One record of a session: a logged exchange (the model's answer), or a call the server
/// logged (no answer around it).
#[derive(Clone, Copy)]
enum Item<'a> {
    Exchange(&'a Exchange),
    Call(&'a ToolRun),
}

impl<'a> Item<'a> {
    fn context(self) -> &'a Context {
        match self {
            Item::Exchange(e) => &e.context,
            Item::Call(c) => &c.context,
        }
    }

    /// The calls made.
    fn calls(self) -> Vec<Made<'a>> {
        match self {
            Item::Exchange(e) => e
                .calls
                .iter()
                .map(|c| (c.name.as_str(), c.arguments.as_ref(), e.offered.as_ref()))
                .collect(),
            Item::Call(c) => vec![(c.name.as_str(), c.arguments.as_ref(), None)],
        }
    }
}

/// What one session's records, served `arm`, did at least once.
fn events_of(
    side: &BTreeMap<&str, &Value>,
    checkers: &Checkers,
    arm: Arm,
    items: &[Item],
    attribute: &Attribute,
    invented: &mut Invented,
) -> BTreeSet<Event> {
    let mut events = BTreeSet::new();
    let mut earlier: Vec<Earlier> = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let calls = item.calls();
        let attrs = &item.context().attributes;
        if let Item::Exchange(ex) = item
            && let Some(want) = attribute.expected.as_deref().and_then(|k| attrs.get(k))
            && let Some(want) = want.as_str()
        {
            let got = ex.calls.first().map_or("none", |c| c.name.as_str());
            events.insert(Event::Labelled);
            if got != want {
                events.insert(Event::Misrouted);
            }
        }
        if attribute
            .feedback
            .as_deref()
            .and_then(|k| attrs.get(k))
            .is_some_and(negative)
        {
            events.insert(Event::ThumbsDown);
        }
        match item {
            Item::Exchange(_) if calls.is_empty() => {
                events.insert(Event::NoCall);
            }
            Item::Call(run) if run.error => {
                events.insert(Event::ToolError);
            }
            _ => {}
        }
        for &(name, arguments, offered) in &calls {
            let offered = offered.map_or(side.contains_key(name), |o| o.iter().any(|n| n == name));
            if !offered || !side.contains_key(name) {
                events.insert(Event::Hallucinated);
                *invented.tools.entry(name.to_string()).or_default() += 1;
                continue;
            }
            events.insert(Event::Reached(name.to_string()));
            if let Some(Some(checker)) = checkers.get(&(arm, name.to_string())) {
                let args = Value::Object(arguments.cloned().unwrap_or_default());
                let problems = checker.check(&args);
                if arguments.is_none() || !problems.is_empty() {
                    events.insert(Event::InvalidArgs);
                }
                for p in &problems {
                    // Top-level names only: a nested one is not a parameter to alias.
                    if let ArgProblemKind::UnknownParameter { .. } = p.kind
                        && p.pointer.matches('/').count() == 1
                    {
                        let param = p
                            .pointer
                            .trim_start_matches('/')
                            .replace("~1", "/")
                            .replace("~0", "~");
                        *invented
                            .parameters
                            .entry((name.to_string(), param))
                            .or_default() += 1;
                    }
                }
            }
            // Only calls of earlier records: parallel calls of one answer are not re-asks.
            let again = earlier
                .iter()
                .any(|&(j, n, a)| n == name && j < k && k - j <= REASK_WINDOW && a != arguments);
            if again {
                events.insert(Event::Reask);
            }
        }
        earlier.extend(calls.iter().map(|&(n, a, _)| (k, n, a)));
    }
    events
}

/// A session's arms seen and its records, with their time and where each was read.
#[derive(Default)]
struct Gathered<'a> {
    arms: BTreeSet<Arm>,
    items: Vec<(Option<f64>, usize, Item<'a>)>,
}

/// The version a server-side call record was served, by the description it logged: base's or
/// head's, where the log may have clipped it (PostHog keeps 512 characters). `Ok(None)`: not a
/// changed tool, no description, or a clip both sides share; `Err`: neither side's.
fn arm_by_description(served: &Served, run: &ToolRun) -> Result<Option<Arm>, ()> {
    let (Some((base, head)), Some(logged)) = (served.descriptions.get(&run.name), &run.description)
    else {
        return Ok(None);
    };
    // A clip must be long enough to say something: 64 characters or the whole text.
    let fits = |full: &Option<String>| {
        full.as_deref().is_some_and(|f| {
            f == logged || (logged.chars().count() >= 64 && f.starts_with(logged.as_str()))
        })
    };
    match (fits(base), fits(head)) {
        (true, false) => Ok(Some(Arm::Base)),
        (false, true) => Ok(Some(Arm::Head)),
        (true, true) => Ok(None),
        (false, false) => Err(()),
    }
}

/// Attribute every record of `read` and reduce each session to its events, at `stage`.
pub fn sessions(r: &Rollout, read: &Read, stage: f64, attribute: &Attribute) -> Traffic {
    let served = Served::of(r);
    let checkers = checkers(r);
    // What each arm serves, read once (not per session).
    let sides = [r.side(Arm::Base), r.side(Arm::Head)];
    let mut at = Attribution::default();
    let mut by_session: BTreeMap<String, Gathered> = BTreeMap::new();
    let mut failed: BTreeMap<String, bool> = BTreeMap::new();
    let mut invented = Invented::default();
    let calls = read.tool_runs.iter().filter(|t| t.call);
    let items = read
        .exchanges
        .iter()
        .map(Item::Exchange)
        .chain(calls.map(Item::Call));
    for (i, item) in items.enumerate() {
        let logged = match item {
            Item::Exchange(ex) => ex
                .context
                .definitions
                .as_deref()
                .map(|d| arm_by_definitions(&served, d)),
            Item::Call(run) => Some(arm_by_description(&served, run)),
        };
        let ctx = item.context();
        let Some(arm) = attribute_one(r, logged, ctx, stage, attribute, &mut at) else {
            continue;
        };
        let id = match (&ctx.session, item) {
            (Some(s), _) => format!("s:{s}"),
            (None, Item::Exchange(ex)) => {
                at.sessionless += 1;
                format!("x:{}", ex.at)
            }
            (None, Item::Call(run)) => {
                at.sessionless += 1;
                format!("x:{}", run.at)
            }
        };
        let g = by_session.entry(id).or_default();
        g.arms.insert(arm);
        g.items.push((ctx.time, i, item));
    }
    for run in read.tool_runs.iter().filter(|t| !t.call) {
        match &run.context.session {
            Some(s) => *failed.entry(format!("s:{s}")).or_default() |= run.error,
            None => at.orphan_tool_runs += 1,
        }
    }
    let mut sessions = Vec::new();
    for (id, mut g) in by_session {
        let [arm] = g.arms.iter().copied().collect::<Vec<_>>()[..] else {
            at.mixed_sessions += 1;
            continue;
        };
        // In time where logged, else in the order read.
        g.items.sort_by(|a, b| {
            a.0.partial_cmp(&b.0)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.1.cmp(&b.1))
        });
        let items: Vec<Item> = g.items.iter().map(|x| x.2).collect();
        let side = match arm {
            Arm::Base => &sides[0],
            Arm::Head => &sides[1],
        };
        let mut events = events_of(side, &checkers, arm, &items, attribute, &mut invented);
        if failed.get(&id) == Some(&true) {
            events.insert(Event::ToolError);
        }
        let start = g
            .items
            .iter()
            .filter_map(|x| x.0)
            .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.min(t))));
        sessions.push(Session {
            id,
            arm,
            start,
            order: g.items.iter().map(|x| x.1).min().unwrap_or(0),
            events,
        });
    }
    // By start time where logged, else by where they were read.
    sessions.sort_by(|a, b| {
        a.start
            .partial_cmp(&b.start)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.order.cmp(&b.order))
    });
    Traffic {
        sessions,
        attribution: at,
        has_tool_runs: !read.tool_runs.is_empty(),
        has_answers: !read.exchanges.is_empty(),
        has_labels: attribute.expected.is_some(),
        has_feedback: attribute.feedback.is_some(),
        invented,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canary::rollout::DEFAULT_STAGES;
    use crate::suite::import::{Call, LogFormat};
    use crate::tools::ToolSet;
    use serde_json::json;

    fn rollout() -> Rollout {
        let set = |d: &str| {
            let v = json!([
                {"name": "schedule", "description": d, "inputSchema": {"type": "object", "properties": {"when": {"type": "string"}}, "required": ["when"]}},
                {"name": "cancel", "description": "Cancel a meeting.", "inputSchema": {"type": "object"}}
            ]);
            ToolSet::from_array(v.as_array().unwrap(), "t", "").unwrap()
        };
        Rollout::plan(
            &set("Schedule a meeting."),
            &set("Book a slot."),
            &DEFAULT_STAGES,
            None,
        )
        .unwrap()
    }

    fn ex(session: Option<&str>, calls: Vec<(&str, Value)>, defs: Option<Vec<Value>>) -> Exchange {
        Exchange {
            at: "log:1".into(),
            format: LogFormat::Otel,
            history: vec![],
            prompt: "p".into(),
            calls: calls
                .into_iter()
                .map(|(n, a)| Call {
                    name: n.into(),
                    arguments: a.as_object().cloned(),
                })
                .collect(),
            offered: None,
            context: Context {
                session: session.map(String::from),
                definitions: defs,
                ..Context::default()
            },
        }
    }

    fn defs(r: &Rollout, arm: Arm) -> Option<Vec<Value>> {
        Some(r.side(arm).into_values().cloned().collect())
    }

    #[test]
    fn each_session_is_reduced_to_what_it_did_at_least_once() {
        let r = rollout();
        let when = |w: &str| json!({"when": w});
        let read = Read {
            exchanges: vec![
                // s1: schedule, then schedule again with other arguments (a re-ask), then a
                // parallel pair of cancels (not a re-ask), an invented name, refused arguments.
                ex(Some("s1"), vec![("schedule", when("9"))], None),
                ex(Some("s1"), vec![("schedule", when("10"))], None),
                ex(
                    Some("s1"),
                    vec![("cancel", json!({"a": 1})), ("cancel", json!({"a": 2}))],
                    None,
                ),
                ex(Some("s1"), vec![("book", json!({}))], None),
                ex(Some("s1"), vec![("schedule", json!({}))], None),
                // s2: served base by its definitions, then head: mixed, left out.
                ex(Some("s2"), vec![], defs(&r, Arm::Base)),
                ex(Some("s2"), vec![], defs(&r, Arm::Head)),
                // No session, no definitions: nothing attributes it.
                ex(None, vec![], None),
                // No session, definitions: a session of its own.
                ex(None, vec![], defs(&r, Arm::Head)),
            ],
            tool_runs: vec![ToolRun {
                at: "log:9".into(),
                name: "cancel".into(),
                error: true,
                call: false,
                arguments: None,
                description: None,
                context: Context {
                    session: Some("s1".into()),
                    ..Context::default()
                },
            }],
            ..Read::default()
        };
        let t = sessions(&r, &read, 50.0, &Attribute::default());
        let a = &t.attribution;
        assert_eq!((a.mixed_sessions, a.unattributed, a.sessionless), (1, 1, 1));
        assert_eq!((a.by_definitions, a.by_bucket), (3, 5));
        let s1 = t.sessions.iter().find(|s| s.id == "s:s1").unwrap();
        let want: BTreeSet<Event> = [
            Event::Reached("schedule".into()),
            Event::Reached("cancel".into()),
            Event::Reask,
            Event::Hallucinated,
            Event::InvalidArgs,
            Event::ToolError,
        ]
        .into_iter()
        .collect();
        assert_eq!(s1.events, want);
        let lone = t.sessions.iter().find(|s| s.id.starts_with("x:")).unwrap();
        assert_eq!(lone.arm, Arm::Head);
        assert!(lone.events.contains(&Event::NoCall));
    }

    #[test]
    fn parallel_calls_of_one_answer_are_not_a_reask() {
        let r = rollout();
        let read = Read {
            exchanges: vec![ex(
                Some("p"),
                vec![("cancel", json!({"a": 1})), ("cancel", json!({"a": 2}))],
                None,
            )],
            ..Read::default()
        };
        let t = sessions(&r, &read, 50.0, &Attribute::default());
        assert!(!t.sessions[0].events.contains(&Event::Reask));
    }

    #[test]
    fn a_named_attribute_attributes_and_a_version_it_does_not_know_is_counted_not_guessed() {
        let r = rollout();
        let with = |v: Value| {
            let mut e = ex(Some("s"), vec![], None);
            e.context.attributes.insert("v".into(), v);
            e
        };
        let head = r.changes["schedule"].head.clone().unwrap();
        let read = Read {
            exchanges: vec![
                with(json!(head)),
                with(json!("base")),
                with(json!("sha256:0000")),
                with(json!(7)),
            ],
            ..Read::default()
        };
        let attr = Attribute {
            key: Some("v".into()),
            ..Attribute::default()
        };
        let t = sessions(&r, &read, 50.0, &attr);
        let a = &t.attribution;
        assert_eq!((a.by_attribute, a.unknown_version, a.by_bucket), (2, 2, 0));
        // One session served both: left out.
        assert_eq!(a.mixed_sessions, 1);
    }
}
