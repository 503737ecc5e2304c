//! Rewrites of a regressed tool's description, drafted offline from what the replay showed: the
//! sentences of base that head dropped, the prompts of the drafting half that the tool lost at
//! head, and the tool they went to instead. Drafting only proposes; `job::fix` replays every
//! candidate and offers one only when it beats head on the cases drafting never read
//! ([`held_out`]).
//!
//! Every candidate keeps head's text whole (its new facts are what the PR meant to say) and adds
//! base's words back around it; [`new_facts`] names what was kept, and a test holds every
//! generator to it.

pub mod llm;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::suite::Suite;
use crate::text::{terms, tokens};

/// A prompt of the drafting half that moved at head.
#[derive(Debug, Clone)]
pub struct Moved {
    pub prompt: String,
    /// The tool that answered it at head; `None` when head made no call.
    pub to: Option<String>,
}

/// What drafting reads about one tool.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// The tool's name at head.
    pub tool: String,
    pub base: String,
    pub head: String,
    /// The tool's own cases of the drafting half that regressed at head.
    pub lost: Vec<Moved>,
    /// Head's description of each tool the lost prompts went to (and of `partner`).
    pub siblings: Vec<(String, String)>,
    /// For a pair the PR made confusable: the other tool, which the rewrite must tell this one
    /// apart from whichever way the lost prompts went.
    pub partner: Option<String>,
}

/// One drafted description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// The generator that drafted it ([`GENERATORS`]).
    pub id: String,
    pub text: String,
}

/// The generators, in the order they draft: id and what it writes.
pub const GENERATORS: &[(&str, &str)] = &[
    (
        "restore",
        "head's text, then every sentence of base that head dropped",
    ),
    (
        "restore-lead",
        "the sentences of base that head dropped first (base's purpose leads), then head's text",
    ),
    (
        "restore-nearest",
        "head's text, then the one dropped sentence of base nearest to the lost prompts",
    ),
    (
        "contrast",
        "`restore`, then a sentence sending the lost prompts' other reading to the tool that took them",
    ),
];

/// What a generator writes, for reports.
pub fn summary(id: &str) -> &'static str {
    if id.starts_with("llm-") {
        return "drafted by the router's model from the same evidence (prompts/fix.v1.md)";
    }
    GENERATORS
        .iter()
        .find(|(g, _)| *g == id)
        .map_or("", |(_, s)| s)
}

/// A sentence as compared: whitespace collapsed.
fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The sentences of `of` that `other` does not have (compared with whitespace collapsed).
fn missing_from(of: &str, other: &str) -> Vec<String> {
    let have: Vec<String> = tokens::sentences(other).into_iter().map(norm).collect();
    tokens::sentences(of)
        .into_iter()
        .map(norm)
        .filter(|s| !have.contains(s))
        .collect()
}

/// Head's sentences that base does not have: what the PR meant to say, which every candidate
/// keeps word for word.
pub fn new_facts(base: &str, head: &str) -> Vec<String> {
    missing_from(head, base)
}

/// Texts joined as sentences: each ends with a stop before the next begins.
fn join(parts: &[String]) -> String {
    let mut out = String::new();
    for p in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        if !out.is_empty() {
            if !out.ends_with(['.', '!', '?']) {
                out.push('.');
            }
            out.push(' ');
        }
        out.push_str(p);
    }
    out
}

/// The dropped sentence of base whose terms best cover the lost prompts' (weighted by how rare
/// each term is among the tool's and its siblings' texts).
fn nearest(dropped: &[String], e: &Evidence) -> Option<String> {
    if e.lost.is_empty() {
        return None;
    }
    let prompts: Vec<String> = e
        .lost
        .iter()
        .flat_map(|m| terms::text_terms(&m.prompt))
        .collect();
    let mut docs: Vec<Vec<String>> = dropped.iter().map(|s| terms::text_terms(s)).collect();
    docs.extend(e.siblings.iter().map(|(_, d)| terms::text_terms(d)));
    let idf = terms::Idf::of(&docs);
    dropped
        .iter()
        .map(|s| {
            (
                terms::tfidf_cosine(&terms::text_terms(s), &prompts, &idf),
                s,
            )
        })
        .filter(|(score, _)| *score > 0.0)
        // First on a tie: base's order.
        .fold(None::<(f64, &String)>, |best, (score, s)| match best {
            Some((b, _)) if b >= score => best,
            _ => Some((score, s)),
        })
        .map(|(_, s)| s.clone())
}

/// The tool most of the lost prompts went to (a pair's partner, when there is one), and its head
/// description.
fn taker(e: &Evidence) -> Option<&(String, String)> {
    if let Some(p) = &e.partner {
        return e.siblings.iter().find(|(n, _)| n == p);
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for to in e.lost.iter().filter_map(|m| m.to.as_deref()) {
        match counts.iter_mut().find(|(t, _)| *t == to) {
            Some(c) => c.1 += 1,
            None => counts.push((to, 1)),
        }
    }
    let (name, _) = counts
        .iter()
        .fold(None::<(&str, usize)>, |best, &(t, n)| match best {
            Some((_, b)) if b >= n => best,
            _ => Some((t, n)),
        })?;
    e.siblings.iter().find(|(n, _)| n == name)
}

/// "To move an existing appointment …, use reschedule_appointment instead.": the taker's first
/// sentence as the reading that belongs elsewhere.
fn contrast_sentence(name: &str, description: &str) -> Option<String> {
    let (first, _) = tokens::split_first_sentence(description.trim());
    let first = first.trim().trim_end_matches(['.', '!', '?']);
    let mut chars = first.chars();
    let lead = chars.next()?;
    Some(format!(
        "To {}{}, use {name} instead.",
        lead.to_lowercase(),
        chars.as_str()
    ))
}

/// Every candidate the generators draft for `e`, in [`GENERATORS`] order, without repeats and
/// without one that is head's text again.
pub fn draft(e: &Evidence) -> Vec<Candidate> {
    let dropped = missing_from(&e.base, &e.head);
    let head = vec![e.head.trim().to_string()];
    let mut out: Vec<Candidate> = Vec::new();
    let mut push = |id: &str, parts: Vec<String>| {
        let text = join(&parts);
        if norm(&text) != norm(&e.head) && !out.iter().any(|c| c.text == text) {
            out.push(Candidate {
                id: id.to_string(),
                text,
            });
        }
    };
    if !dropped.is_empty() {
        push("restore", [head.clone(), dropped.clone()].concat());
        push("restore-lead", [dropped.clone(), head.clone()].concat());
    }
    if let Some(s) = nearest(&dropped, e) {
        push("restore-nearest", [head.clone(), vec![s]].concat());
    }
    if let Some((name, d)) = taker(e)
        && name != &e.tool
        && let Some(s) = contrast_sentence(name, d)
    {
        push("contrast", [head, dropped, vec![s]].concat());
    }
    out
}

/// The split that keeps verification honest: for each expected tool, its cases sorted by the
/// hash of their id, every second one (the first included) held out; drafting reads only the
/// others. Stable across runs and machines; each tool keeps about half its cases on each side.
pub fn held_out(suite: &Suite) -> Vec<bool> {
    let key = |i: usize| crate::canon::hash_str(&suite.cases[i].id);
    let mut groups: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (i, c) in suite.cases.iter().enumerate() {
        groups
            .entry(c.expect.names().join("|"))
            .or_default()
            .push(i);
    }
    let mut out = vec![false; suite.cases.len()];
    for idx in groups.values_mut() {
        idx.sort_by_cached_key(|&i| key(i));
        for (k, &i) in idx.iter().enumerate() {
            out[i] = k % 2 == 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calendar() -> Evidence {
        Evidence {
            tool: "schedule_appointment".into(),
            base: "Schedule a new appointment for a patient with a provider at a chosen date and time. Use this when the patient wants a visit that does not exist yet.".into(),
            head: "Book a slot.".into(),
            lost: vec![
                Moved {
                    prompt: "Set up an appointment for my daughter with the pediatrician next week".into(),
                    to: Some("reschedule_appointment".into()),
                },
                Moved {
                    prompt: "Schedule a first visit for patient 4471 with the dermatologist".into(),
                    to: Some("reschedule_appointment".into()),
                },
                Moved {
                    prompt: "I need to see a doctor, please make a visit".into(),
                    to: None,
                },
            ],
            siblings: vec![(
                "reschedule_appointment".into(),
                "Move an existing appointment to a different date or time. Use this when the patient already has a booking.".into(),
            )],
            partner: None,
        }
    }

    #[test]
    fn every_generator_keeps_heads_new_facts_word_for_word() {
        let mut e = calendar();
        e.head = "Book a slot.\nAlso   handles waitlists".into();
        let facts = new_facts(&e.base, &e.head);
        assert_eq!(facts, ["Book a slot.", "Also handles waitlists"]);
        let drafted = draft(&e);
        assert_eq!(drafted.len(), GENERATORS.len(), "{drafted:#?}");
        for c in &drafted {
            for f in &facts {
                assert!(
                    norm(&c.text).contains(f),
                    "{}: lost {f:?}: {}",
                    c.id,
                    c.text
                );
            }
        }
    }

    #[test]
    fn the_generators_write_what_they_say() {
        let drafted = draft(&calendar());
        let text = |id: &str| drafted.iter().find(|c| c.id == id).unwrap().text.clone();
        assert_eq!(
            text("restore"),
            "Book a slot. Schedule a new appointment for a patient with a provider at a chosen date and time. Use this when the patient wants a visit that does not exist yet."
        );
        assert_eq!(
            text("restore-lead"),
            "Schedule a new appointment for a patient with a provider at a chosen date and time. Use this when the patient wants a visit that does not exist yet. Book a slot."
        );
        // Two lost prompts ask for a "visit", which only the second sentence of base says
        // ("appointment" and "patient" are in the sibling's text too, so they weigh less).
        assert_eq!(
            text("restore-nearest"),
            "Book a slot. Use this when the patient wants a visit that does not exist yet."
        );
        assert!(
            text("contrast").ends_with(
                "To move an existing appointment to a different date or time, use reschedule_appointment instead."
            ),
            "{}",
            text("contrast")
        );
        for (id, _) in GENERATORS {
            assert!(!summary(id).is_empty(), "{id}");
        }
    }

    #[test]
    fn a_pairs_contrast_names_the_partner_whichever_way_the_prompts_went() {
        // The partner's prompts went to this tool: without the partner, no contrast is drafted.
        let mut e = calendar();
        e.tool = "schedule_visit".into();
        e.base = String::new();
        e.head = "Schedule a new visit.".into();
        for m in &mut e.lost {
            m.to = Some("schedule_visit".into());
        }
        e.siblings = vec![(
            "schedule_appointment".into(),
            "Schedule a new appointment.".into(),
        )];
        assert!(draft(&e).is_empty());
        e.partner = Some("schedule_appointment".into());
        let drafted = draft(&e);
        assert_eq!(
            drafted,
            [Candidate {
                id: "contrast".into(),
                text: "Schedule a new visit. To schedule a new appointment, use schedule_appointment instead.".into()
            }]
        );
    }

    #[test]
    fn nothing_dropped_and_nothing_lost_drafts_nothing() {
        let e = Evidence {
            base: "Book a slot.".into(),
            lost: Vec::new(),
            ..calendar()
        };
        assert!(draft(&e).is_empty());
    }

    #[test]
    fn the_split_holds_out_half_of_each_tools_cases_stably() {
        let mut yaml = String::new();
        for i in 0..8 {
            yaml.push_str(&format!("- {{id: s{i}, prompt: p{i}, expect: a}}\n"));
        }
        for i in 0..3 {
            yaml.push_str(&format!("- {{id: r{i}, prompt: q{i}, expect: b}}\n"));
        }
        let suite = crate::suite::parse(&yaml, "s.yaml", std::path::Path::new(".")).unwrap();
        let split = held_out(&suite);
        assert_eq!(split[..8].iter().filter(|h| **h).count(), 4);
        assert_eq!(split[8..].iter().filter(|h| **h).count(), 2);
        assert_eq!(split, held_out(&suite));
    }
}
