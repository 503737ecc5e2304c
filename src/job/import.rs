//! `driftgate suite import` as a library call: log files in, a draft suite and what happened to
//! every record out.
//!
//! Each exchange the readers ([`crate::suite::import`]) found becomes a proposed case: its last
//! user turn the prompt (after its earlier text turns as `history`), the tool the production model
//! called its `expect` (`none` when it answered in text; the first call when it made several),
//! the call's short scalar arguments its `args`, marked `review: true` with where it came from in
//! its `note`. Every text is masked by shape first ([`crate::http::secret::scrub`]). Then, per
//! expectation: exact duplicates (case and spacing aside) are dropped, then near-duplicates — a
//! prompt whose embedding is within the cosine threshold of one kept before it, after the same
//! history — and at most `per_tool` cases are kept, chosen with the seed.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use rand::SeedableRng;
use rand::seq::SliceRandom;
use serde_json::Value;

use crate::embed::{Embedder, cosine};
use crate::error::Result;
use crate::http::secret::{Pii, scrub};
use crate::llm::Message;
use crate::suite::draft::Draft;
use crate::suite::import::{self, Duplicate, Exchange, LogFormat, Summary};
use crate::tools::ToolSet;

/// The end of every imported case's note.
const CONFIRM: &str = "; confirm, then delete `review`";

/// A proposed string argument longer than this is left out: a long text (a file's content, a
/// message body) as an exact literal is a brittle expectation.
pub const MAX_ARG_CHARS: usize = 120;

#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// `None`: detected per file.
    pub format: Option<LogFormat>,
    /// Earlier turns kept before each prompt.
    pub max_history: usize,
    /// Cases kept per expected tool (and for `none`); 0 keeps all.
    pub per_tool: usize,
    pub seed: u64,
    /// Near-duplicate threshold (cosine of the prompts' embeddings); `None`: exact duplicates only.
    pub threshold: Option<f32>,
    /// The server the suite is for (`--tools`, with its label): a call to a tool it does not
    /// have proposes nothing, and requests that offered another tool list are counted.
    pub tools: Option<(ToolSet, String)>,
}

pub struct Imported {
    pub drafts: Vec<Draft>,
    pub summary: Summary,
}

/// A proposed case and what its masking replaced.
struct Proposal {
    draft: Draft,
    at: String,
    redacted: Vec<(Pii, usize)>,
    calls: usize,
}

/// Read `files` (`(label, text)`) and propose a suite. The embedder is used only with a threshold.
pub async fn import(
    files: &[(String, String)],
    opts: &ImportOptions,
    embedder: Option<&dyn Embedder>,
) -> Result<Imported> {
    let read = import::read(files, opts.format, opts.max_history);
    propose_suite(read, opts, embedder).await
}

/// Why an exchange's answer proposes no expectation, if it does not: the production model
/// called a tool its request did not offer (an invented call), or one the server lacks.
fn unusable_call(e: &Exchange, tools: Option<&(ToolSet, String)>) -> Option<String> {
    let name = &e.calls.first()?.name;
    if let Some(offered) = &e.offered
        && !offered.contains(name)
    {
        return Some(format!(
            "the production model called `{name}`, which its request did not offer: an invented call is no expectation"
        ));
    }
    let (set, label) = tools?;
    set.get(name).is_none().then(|| {
        format!(
            "calls `{name}`, which {label} does not have (renamed or removed since it was logged?)"
        )
    })
}

/// Propose a suite from what the readers found (see [`import`]).
pub async fn propose_suite(
    read: import::Read,
    opts: &ImportOptions,
    embedder: Option<&dyn Embedder>,
) -> Result<Imported> {
    let mut summary = Summary {
        files: read.formats,
        records: read.records,
        exchanges: read.exchanges.len(),
        skipped: read.skipped,
        malformed: read.malformed,
        ..Summary::default()
    };
    // Grouped by expectation, in file order within each.
    let mut groups: BTreeMap<(bool, String), Vec<Proposal>> = BTreeMap::new();
    for e in read.exchanges {
        if let Some(why) = unusable_call(&e, opts.tools.as_ref()) {
            summary.exchanges -= 1;
            summary.skipped.push((e.at, why));
            continue;
        }
        if let (Some((set, _)), Some(offered)) = (&opts.tools, &e.offered) {
            let offered: BTreeSet<&str> = offered.iter().map(String::as_str).collect();
            let server: BTreeSet<&str> = set.names().into_iter().collect();
            if offered != server {
                summary.offered_other += 1;
                summary
                    .offered_missing
                    .extend(server.difference(&offered).map(|n| n.to_string()));
                summary
                    .offered_extra
                    .extend(offered.difference(&server).map(|n| n.to_string()));
            }
        }
        let p = propose(e);
        let key = (
            p.draft.expect.is_none(),
            p.draft.expect.clone().unwrap_or_default(),
        );
        groups.entry(key).or_default().push(p);
    }
    let mut drafts = Vec::new();
    let mut ids = BTreeSet::new();
    for ((_, name), group) in groups {
        let label = if name.is_empty() {
            "(none)".to_string()
        } else {
            name
        };
        let kept = dedupe(
            group,
            opts.threshold,
            embedder,
            &mut summary.duplicates,
            Some((opts.per_tool, opts.seed, &label)),
            &mut summary.capped,
        )
        .await?;
        let (kept, capped) = stratify(kept, opts.per_tool, opts.seed, &label);
        summary.capped += capped;
        for p in kept {
            let id = p.draft.id();
            if !ids.insert(id.clone()) {
                summary.duplicates.push(Duplicate {
                    at: p.at,
                    of: id,
                    cosine: None,
                });
                continue;
            }
            *summary.kept.entry(label.clone()).or_default() += 1;
            if !p.redacted.is_empty() {
                for (k, n) in &p.redacted {
                    *summary.redacted.entry(*k).or_default() += n;
                }
                summary.redacted_cases.push((id, p.redacted));
            }
            summary.several_calls += usize::from(p.calls > 1);
            drafts.push(p.draft);
        }
    }
    summary.inconsistent = inconsistent(&mut drafts);
    Ok(Imported { drafts, summary })
}

/// `text` masked, its counts added to `found`.
fn masked(text: &str, found: &mut BTreeMap<Pii, usize>) -> String {
    let (out, kinds) = scrub(text);
    for (k, n) in kinds {
        *found.entry(k).or_default() += n;
    }
    out
}

/// One exchange as a proposed case, every text masked.
fn propose(e: Exchange) -> Proposal {
    let mut found = BTreeMap::new();
    let prompt = masked(&e.prompt, &mut found);
    let history: Vec<Message> = e
        .history
        .iter()
        .map(|m| Message {
            role: m.role.clone(),
            content: masked(&m.content, &mut found),
        })
        .collect();
    let call = e.calls.first();
    let mut left_out = Vec::new();
    let args = call.and_then(|c| c.arguments.as_ref()).and_then(|a| {
        let kept: serde_json::Map<String, Value> = a
            .iter()
            .filter_map(|(k, v)| {
                let keep = match v {
                    Value::String(s) if s.chars().count() <= MAX_ARG_CHARS => {
                        let (clean, kinds) = scrub(s);
                        if kinds.is_empty() {
                            Some(Value::String(clean))
                        } else {
                            // A masked literal would never match a real call: left out.
                            for (kind, n) in kinds {
                                *found.entry(kind).or_default() += n;
                            }
                            None
                        }
                    }
                    Value::Number(_) | Value::Bool(_) => Some(v.clone()),
                    _ => None,
                };
                if keep.is_none() {
                    left_out.push(k.clone());
                }
                keep.map(|v| (k.clone(), v))
            })
            .collect();
        (!kept.is_empty()).then_some(Value::Object(kept))
    });
    let mut note = format!(
        "imported from {} ({}); ",
        e.at,
        crate::choice::Choice::name(e.format)
    );
    match call {
        Some(c) => {
            note.push_str(&format!("the production model called `{}`", c.name));
            if e.calls.len() > 1 {
                note.push_str(&format!(" (the first of {} calls)", e.calls.len()));
            }
        }
        None => note.push_str("the production model answered without a tool call"),
    }
    if !left_out.is_empty() {
        note.push_str(&format!(
            "; args not proposed: {} (masked, long or structured)",
            left_out.join(", ")
        ));
    }
    let redacted: Vec<(Pii, usize)> = found.into_iter().collect();
    if !redacted.is_empty() {
        let what: Vec<String> = redacted
            .iter()
            .map(|(k, n)| format!("{n} {}", k.name()))
            .collect();
        note.push_str(&format!("; masked: {}", what.join(", ")));
    }
    note.push_str(CONFIRM);
    Proposal {
        draft: Draft {
            expect: call.map(|c| c.name.clone()),
            prompt,
            kind: "imported",
            note: Some(note),
            args,
            history,
            review: true,
        },
        at: e.at,
        redacted,
        calls: e.calls.len(),
    }
}

/// The groups of `drafts` that ask the same question with different expectations; each of their
/// cases gets a note naming the others.
fn inconsistent(drafts: &mut [Draft]) -> Vec<Vec<String>> {
    let mut by_question: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, d) in drafts.iter().enumerate() {
        by_question
            .entry((history_key(&d.history), normal(&d.prompt)))
            .or_default()
            .push(i);
    }
    let mut out = Vec::new();
    for group in by_question.into_values().filter(|g| g.len() > 1) {
        let ids: Vec<String> = group.iter().map(|&i| drafts[i].id()).collect();
        for &i in &group {
            let others: Vec<&str> = ids
                .iter()
                .filter(|id| **id != drafts[i].id())
                .map(String::as_str)
                .collect();
            let note = drafts[i].note.get_or_insert_with(String::new);
            let had_end = note.ends_with(CONFIRM);
            note.truncate(note.len() - if had_end { CONFIRM.len() } else { 0 });
            note.push_str(&format!(
                "; the production model answered the same prompt differently in {}: keep the right one",
                others.join(", ")
            ));
            if had_end {
                note.push_str(CONFIRM);
            }
        }
        out.push(ids);
    }
    out
}

/// Lowercase, spacing collapsed: the key of an exact duplicate.
fn normal(s: &str) -> String {
    s.to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn history_key(h: &[Message]) -> String {
    h.iter()
        .map(|m| format!("{}:{}", m.role, normal(&m.content)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One group's proposals without duplicates, the first of each kept (file order). A
/// near-duplicate needs the same history: the same words after a different conversation are a
/// different question.
async fn dedupe(
    group: Vec<Proposal>,
    threshold: Option<f32>,
    embedder: Option<&dyn Embedder>,
    dropped: &mut Vec<Duplicate>,
    sample: Option<(usize, u64, &str)>,
    capped: &mut usize,
) -> Result<Vec<Proposal>> {
    let mut seen: HashMap<(String, String), String> = HashMap::new();
    let mut unique = Vec::new();
    for p in group {
        let key = (history_key(&p.draft.history), normal(&p.draft.prompt));
        match seen.get(&key) {
            Some(of) => dropped.push(Duplicate {
                at: p.at,
                of: of.clone(),
                cosine: None,
            }),
            None => {
                seen.insert(key, p.draft.id());
                unique.push(p);
            }
        }
    }
    let (Some(t), Some(embedder)) = (threshold, embedder) else {
        return Ok(unique);
    };
    // Near-duplicates are a pairwise search over embedded prompts: a log's hundred thousand
    // distinct prompts for one tool would be hours of embedding for a suite that keeps twenty.
    // A seeded sample of NEAR_POOL × the cap is searched instead (the rest count as capped).
    let unique = match sample {
        Some((cap, seed, label)) if cap > 0 => {
            let (u, left) = stratify(unique, cap.saturating_mul(NEAR_POOL), seed, label);
            *capped += left;
            u
        }
        _ => unique,
    };
    if unique.len() < 2 {
        return Ok(unique);
    }
    let texts: Vec<String> = unique.iter().map(|p| p.draft.prompt.clone()).collect();
    let vectors = embedder.embed(&texts).await?;
    let mut kept: Vec<(usize, Proposal)> = Vec::new();
    for (i, p) in unique.into_iter().enumerate() {
        let h = history_key(&p.draft.history);
        let nearest = kept
            .iter()
            .filter(|(_, k)| history_key(&k.draft.history) == h)
            .map(|(j, k)| (cosine(vectors.row(i), vectors.row(*j)), k))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        match nearest {
            Some((c, k)) if c >= t => dropped.push(Duplicate {
                at: p.at,
                of: k.draft.id(),
                cosine: Some(c),
            }),
            _ => kept.push((i, p)),
        }
    }
    Ok(kept.into_iter().map(|(_, p)| p).collect())
}

/// With a per-tool cap of N, the near-duplicate search of a group runs over at most
/// `NEAR_POOL × N` of its exactly-distinct prompts.
pub const NEAR_POOL: usize = 10;

/// At most `cap` of a group (0: all), chosen by a shuffle seeded with `seed` and the group's
/// name (so one tool's choice does not move when another's cases change), back in file order;
/// and how many were left out.
fn stratify(group: Vec<Proposal>, cap: usize, seed: u64, label: &str) -> (Vec<Proposal>, usize) {
    if cap == 0 || group.len() <= cap {
        return (group, 0);
    }
    let salt = crate::canon::hash_str(label);
    let salt = u64::from_str_radix(&salt.trim_start_matches("sha256:")[..16], 16).unwrap_or(0);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ salt);
    let mut order: Vec<usize> = (0..group.len()).collect();
    order.shuffle(&mut rng);
    let chosen: BTreeSet<usize> = order.into_iter().take(cap).collect();
    let left = group.len() - cap;
    let kept = group
        .into_iter()
        .enumerate()
        .filter(|(i, _)| chosen.contains(i))
        .map(|(_, p)| p)
        .collect();
    (kept, left)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::import::Call;

    fn ex(at: &str, prompt: &str, call: Option<(&str, Value)>) -> Exchange {
        Exchange {
            at: at.into(),
            format: LogFormat::Openai,
            history: Vec::new(),
            prompt: prompt.into(),
            calls: call
                .into_iter()
                .map(|(n, a)| Call {
                    name: n.into(),
                    arguments: a.as_object().cloned(),
                })
                .collect(),
            offered: None,
            context: Default::default(),
        }
    }

    #[test]
    fn a_proposal_masks_its_texts_and_leaves_out_masked_and_long_args() {
        let p = propose(ex(
            "log.jsonl:4",
            "Email the invoice to ana@example.com",
            Some((
                "send_email",
                serde_json::json!({"to": "ana@example.com", "subject": "Invoice", "copies": 2,
                    "body": "x".repeat(MAX_ARG_CHARS + 1), "attach": ["a.pdf"]}),
            )),
        ));
        assert_eq!(p.draft.prompt, "Email the invoice to [redacted email]");
        assert_eq!(p.draft.expect.as_deref(), Some("send_email"));
        assert_eq!(
            p.draft.args,
            Some(serde_json::json!({"subject": "Invoice", "copies": 2}))
        );
        assert!(p.draft.review);
        assert_eq!(p.redacted, [(Pii::Email, 2)]);
        let note = p.draft.note.unwrap();
        assert!(note.starts_with("imported from log.jsonl:4 (openai); the production model called `send_email`; args not proposed: to, body, attach"), "{note}");
        assert!(note.contains("masked: 2 email"), "{note}");
        assert!(!note.contains("ana@"), "{note}");
    }

    #[test]
    fn the_cap_is_deterministic_per_seed_and_keeps_file_order() {
        let group = || {
            (0..10)
                .map(|i| propose(ex(&format!("f:{i}"), &format!("prompt {i}"), None)))
                .collect::<Vec<_>>()
        };
        let pick = |seed| {
            let (kept, left) = stratify(group(), 3, seed, "(none)");
            assert_eq!(left, 7);
            kept.into_iter().map(|p| p.at).collect::<Vec<_>>()
        };
        assert_eq!(pick(1), pick(1));
        assert_ne!(pick(1), pick(2));
        let a = pick(1);
        let mut sorted = a.clone();
        sorted.sort_by_key(|s| s[2..].parse::<u32>().unwrap());
        assert_eq!(a, sorted);
        assert_eq!(stratify(group(), 0, 1, "x").0.len(), 10);
    }

    #[test]
    fn the_same_question_answered_two_ways_is_named_on_both_cases() {
        let mut drafts: Vec<Draft> = [
            ex(
                "f:1",
                "Cancel my order",
                Some(("cancel_order", Value::Null)),
            ),
            ex(
                "f:2",
                "cancel my  order",
                Some(("refund_order", Value::Null)),
            ),
            ex("f:3", "Cancel my order", None),
            ex("f:4", "Track my order", Some(("track_order", Value::Null))),
        ]
        .into_iter()
        .map(|e| propose(e).draft)
        .collect();
        let groups = inconsistent(&mut drafts);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].len(), 3);
        assert!(drafts[0].note.as_ref().unwrap().contains(&format!(
            "answered the same prompt differently in {}, {}: keep the right one; confirm, then delete `review`",
            drafts[1].id(),
            drafts[2].id()
        )));
        assert!(!drafts[3].note.as_ref().unwrap().contains("differently"));
    }

    #[tokio::test]
    async fn exact_duplicates_go_without_an_embedder() {
        let group = vec![
            propose(ex("f:1", "List my files", None)),
            propose(ex("f:2", "  list MY   files ", None)),
            propose(ex("f:3", "List my folders", None)),
        ];
        let mut dropped = Vec::new();
        let kept = dedupe(group, None, None, &mut dropped, None, &mut 0)
            .await
            .unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(dropped[0].at, "f:2");
        assert_eq!(dropped[0].cosine, None);
    }

    /// Every text a vector of its own (no two near), counting the texts it was asked.
    struct Apart(std::sync::atomic::AtomicUsize);

    #[async_trait::async_trait]
    impl Embedder for Apart {
        fn id(&self) -> &str {
            "apart"
        }
        async fn embed(&self, texts: &[String]) -> Result<ndarray::Array2<f32>> {
            self.0
                .fetch_add(texts.len(), std::sync::atomic::Ordering::Relaxed);
            Ok(ndarray::Array2::from_shape_fn(
                (texts.len(), texts.len()),
                |(i, j)| f32::from(u8::from(i == j)),
            ))
        }
    }

    #[tokio::test]
    async fn the_near_duplicate_search_is_bounded_by_the_cap() {
        let group: Vec<Proposal> = (0..50)
            .map(|i| propose(ex(&format!("f:{i}"), &format!("prompt number {i}"), None)))
            .collect();
        let embedder = Apart(Default::default());
        let (mut dropped, mut capped) = (Vec::new(), 0);
        let kept = dedupe(
            group,
            Some(0.95),
            Some(&embedder),
            &mut dropped,
            Some((2, 7, "t")),
            &mut capped,
        )
        .await
        .unwrap();
        // 2 × NEAR_POOL embedded and searched, the other 30 left out as capped.
        assert_eq!(embedder.0.into_inner(), 2 * NEAR_POOL);
        assert_eq!((kept.len(), capped), (2 * NEAR_POOL, 50 - 2 * NEAR_POOL));
        assert!(dropped.is_empty());
        // In file order.
        let at: Vec<usize> = kept.iter().map(|p| p.at[2..].parse().unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
    }
}
