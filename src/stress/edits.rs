//! Labelled description edits: for one tool, deterministic rewrites of its description that change
//! what it means (the tool now does something else, or less, or more) and rewrites that keep it
//! (what a copy-editor does). The cosine calibration (`examples/calibrate.rs`) and the edit
//! benchmark (`bench/evidence/sources/edits.rs`) are built from these; each edit says what it did.
//!
//! Every generator is a pure function of the tool and its set; one that does not apply answers
//! `None`, so a benchmark never counts an unchanged text as an edit.

use crate::stress::perturb::{jargonier, polarity_swap, reorder, replace_phrase, terser};
use crate::text::terms::name_terms;
use crate::text::tokens::{name_tokens, sentences, split_first_sentence};
use crate::text::verbs::NOT_VERBS;
use crate::tools::{Tool, ToolSet};

/// Whether an edit changes what the tool means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    Changing,
    Preserving,
}

/// One edit of one description: `old` is the base text (the typo edit starts from a misspelt
/// one), `new` the head text.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub kind: &'static str,
    pub label: Label,
    pub old: String,
    pub new: String,
    /// What was done, in a few words.
    pub detail: String,
}

/// The meaning-changing kinds, in report order.
pub const CHANGING: &[&str] = &[
    "inverted",
    "negation",
    "sibling",
    "vague",
    "scope",
    "narrowed",
    "constraint-dropped",
];

/// The meaning-preserving kinds, in report order.
pub const PRESERVING: &[&str] = &[
    "typo",
    "filler",
    "reordered",
    "synonym",
    "punctuation",
    "example",
    "paraphrase",
];

/// True synonyms (not house jargon): a copy-editor's word choice. Used through `jargonier`,
/// which swaps at most two phrases, plurals and capitals kept.
pub const SYNONYMS: &[(&str, &str)] = &[
    ("retrieve", "fetch"),
    ("fetch", "retrieve"),
    ("get", "retrieve"),
    ("obtain", "get"),
    ("returns", "gives back"),
    ("provides", "gives"),
    ("display", "show"),
    ("show", "display"),
    ("find", "locate"),
    ("modify", "change"),
    ("specified", "given"),
    ("allows", "lets"),
    ("information", "details"),
    ("useful", "helpful"),
    ("quickly", "fast"),
    ("multiple", "several"),
    ("create", "make"),
    ("delete", "remove"),
    ("remove", "delete"),
    ("current", "present"),
    ("large", "big"),
    ("begin", "start"),
    ("start", "begin"),
];

/// Scope changes: the object or extent of the action moves (one file → a directory, one → all).
pub const SCOPE: &[(&str, &str)] = &[
    ("a single file", "every file in a directory"),
    ("single", "every"),
    ("a file", "a directory"),
    ("file", "directory"),
    ("directory", "file"),
    ("one", "all"),
    ("all", "one"),
    ("first", "last"),
    ("only", "also"),
    ("current", "every"),
    ("specific", "any"),
    ("repository", "organization"),
    ("issue", "pull request"),
    ("page", "browser"),
    ("entity", "graph"),
    ("local", "remote"),
    ("public", "private"),
];

/// Words that make a sentence a restriction (what the tool will not do, or only does).
const RESTRICTIONS: &[&str] = &[
    "only", "must", "never", "not", "cannot", "can't", "don't", "doesn't", "won't", "unless",
    "except", "limit", "limited", "maximum", "requires", "required",
];

/// A typo an editor would fix: two letters of the longest word (≥ 6 letters) swapped.
pub fn with_typo(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split(' ').collect();
    let (i, w) = words
        .iter()
        .enumerate()
        .filter(|(_, w)| w.len() >= 6 && w.chars().all(|c| c.is_ascii_alphabetic()))
        .max_by_key(|(i, w)| (w.len(), usize::MAX - i))?;
    let mut b = w.as_bytes().to_vec();
    let k = b.len() / 2;
    if b[k] == b[k - 1] {
        return None;
    }
    b.swap(k - 1, k);
    let mut out: Vec<String> = words.iter().map(|s| s.to_string()).collect();
    out[i] = String::from_utf8(b).expect("ASCII letters");
    Some(out.join(" "))
}

/// Punctuation only: the final period toggled and the first comma dropped or a ";" made ".".
pub fn repunctuate(text: &str) -> Option<String> {
    let t = text.trim_end();
    let mut out = match t.strip_suffix('.') {
        Some(s) => s.to_string(),
        None => format!("{t}."),
    };
    if let Some(at) = out.find("; ") {
        out.replace_range(at..at + 2, ". ");
    } else if let Some(at) = out.find(", ") {
        out.replace_range(at..at + 2, " ");
    }
    Some(out)
}

/// The leading word when it reads as an imperative or third-person verb ("Read", "Returns").
fn leading_verb(text: &str) -> Option<&str> {
    let first = text.split_whitespace().next()?;
    (first.chars().all(|c| c.is_ascii_alphabetic())
        && first.starts_with(|c: char| c.is_ascii_uppercase())
        && !NOT_VERBS.contains(&first.to_ascii_lowercase().as_str()))
    .then_some(first)
}

/// Inverted polarity by negation: "Read X" → "Do not read X", "Returns X" → "Never returns X".
pub fn negate(text: &str) -> Option<String> {
    let t = text.trim_start();
    let first = leading_verb(t)?;
    let lower = first.to_ascii_lowercase();
    let rest = &t[first.len()..];
    let lead = if lower.ends_with('s') && !lower.ends_with("ss") {
        "Never"
    } else {
        "Do not"
    };
    Some(format!("{lead} {lower}{rest}"))
}

fn word_at(text: &str, at: usize, len: usize) -> bool {
    let b = text.as_bytes();
    let edge = |i: Option<&u8>| i.is_none_or(|c| !c.is_ascii_alphanumeric());
    edge(at.checked_sub(1).and_then(|i| b.get(i))) && edge(b.get(at + len))
}

/// The first `SCOPE` swap that applies: (new text, from, to).
pub fn scope_swap(text: &str) -> Option<(String, &'static str, &'static str)> {
    let lower = text.to_ascii_lowercase();
    let &(from, to) = SCOPE.iter().find(|(from, _)| {
        lower
            .match_indices(from)
            .any(|(at, _)| word_at(&lower, at, from.len()))
    })?;
    let (new, n) = replace_phrase(text, from, to, true);
    (n > 0).then_some((new, from, to))
}

/// The words after the leading verb of a name, the last one plural: `schedule_appointment` →
/// "appointments", `list_directory_with_sizes` → "directory with sizes".
fn objects(name: &str) -> String {
    let mut words = name_tokens(name);
    if words.len() > 1 {
        words.remove(0);
    }
    if let Some(last) = words.last_mut() {
        *last = plural(last);
    }
    words.join(" ")
}

fn plural(w: &str) -> String {
    if w.ends_with('s') || w.ends_with('x') || w.ends_with("ch") || w.ends_with("sh") {
        return if w.ends_with('s') {
            w.to_string()
        } else {
            format!("{w}es")
        };
    }
    match w.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ => format!("{w}s"),
    }
}

/// The sibling whose name shares the most words with `tool`'s (ties: set order), or the next tool
/// in the set when none shares any; only siblings with a different, non-empty description.
pub fn nearest_sibling<'a>(tool: &Tool, set: &'a ToolSet) -> Option<&'a Tool> {
    let own = name_terms(&tool.name);
    let candidates: Vec<&Tool> = set
        .tools
        .iter()
        .filter(|t| {
            t.name != tool.name
                && !t.description_text().trim().is_empty()
                && t.description_text().trim() != tool.description_text().trim()
        })
        .collect();
    let shared = |t: &Tool| {
        name_terms(&t.name)
            .iter()
            .filter(|w| own.contains(w))
            .count()
    };
    let best = candidates
        .iter()
        .copied()
        .max_by_key(|t| (shared(t), std::cmp::Reverse(position(set, t))))?;
    if shared(best) > 0 {
        return Some(best);
    }
    let at = position(set, tool);
    candidates
        .iter()
        .copied()
        .find(|t| position(set, t) > at)
        .or_else(|| candidates.first().copied())
}

fn position(set: &ToolSet, tool: &Tool) -> usize {
    set.tools
        .iter()
        .position(|t| t.name == tool.name)
        .unwrap_or(usize::MAX)
}

/// The description without its restriction sentences (not the first: that is the purpose), when
/// it has some and something is left.
pub fn drop_constraints(text: &str) -> Option<(String, usize)> {
    let all = sentences(text);
    if all.len() < 2 {
        return None;
    }
    let restricts = |s: &str| {
        s.to_ascii_lowercase()
            .split(|c: char| !(c.is_ascii_alphabetic() || c == '\''))
            .any(|w| RESTRICTIONS.contains(&w))
    };
    let kept: Vec<&str> = all
        .iter()
        .enumerate()
        .filter(|(i, s)| *i == 0 || !restricts(s))
        .map(|(_, s)| *s)
        .collect();
    let dropped = all.len() - kept.len();
    (dropped > 0).then(|| (kept.join(" "), dropped))
}

/// The purpose sentence as a request ("Reads a file." → "read a file"), when it leads with a verb.
fn purpose_request(text: &str) -> Option<String> {
    let (first, _) = split_first_sentence(text.trim());
    let verb = leading_verb(first)?;
    let lower = verb.to_ascii_lowercase();
    let base = if ["ches", "shes", "sses", "xes"]
        .iter()
        .any(|e| lower.ends_with(e))
    {
        lower[..lower.len() - 2].to_string()
    } else if lower.ends_with('s') && !lower.ends_with("ss") {
        lower[..lower.len() - 1].to_string()
    } else {
        lower
    };
    let rest = first.trim()[verb.len()..]
        .trim_end_matches(['.', '!', '?', ':'])
        .to_string();
    Some(format!("{base}{rest}"))
}

/// Adds one edit: kind, label, old text, new text, what changed.
type Push<'a> = dyn FnMut(&'static str, Label, &str, String, String) + 'a;

/// The meaning-changing edits of `d`, `tool`'s description.
fn changing(tool: &Tool, set: &ToolSet, d: &str, push: &mut Push<'_>) {
    use Label::Changing;
    if let Some((from, to, _)) = polarity_swap(tool, set) {
        let (p, n) = replace_phrase(d, from, to, true);
        if n > 0 {
            push("inverted", Changing, d, p, format!("{from} → {to}"));
        }
    }
    if let Some(n) = negate(d) {
        push("negation", Changing, d, n, "leading verb negated".into());
    }
    if let Some(s) = nearest_sibling(tool, set) {
        let text = s.description_text().trim().to_string();
        push(
            "sibling",
            Changing,
            d,
            text,
            format!("`{}`'s description", s.name),
        );
    }
    let what = objects(&tool.name);
    push(
        "vague",
        Changing,
        d,
        format!("Handles {what}."),
        "cut to a vague line".into(),
    );
    if let Some((p, from, to)) = scope_swap(d) {
        push("scope", Changing, d, p, format!("{from} → {to}"));
    }
    push(
        "narrowed",
        Changing,
        d,
        format!("{d} Only for archived {what}, never for current ones."),
        "restricted to archived items".into(),
    );
    if let Some((p, n)) = drop_constraints(d) {
        push(
            "constraint-dropped",
            Changing,
            d,
            p,
            format!("{n} restriction sentence(s) dropped"),
        );
    }
}

/// The meaning-preserving edits of `d`; `paraphrases` as [`edits`] takes them.
fn preserving(d: &str, paraphrases: &[String], push: &mut Push<'_>) {
    use Label::Preserving;
    if let Some(typo) = with_typo(d) {
        push(
            "typo",
            Preserving,
            &typo,
            d.to_string(),
            "typo fixed".into(),
        );
    }
    let (t, dropped) = terser(d);
    if !dropped.is_empty() {
        push("filler", Preserving, d, t, dropped.join(", "));
    }
    let all = sentences(d);
    if all.len() >= 2 {
        let mut rotated: Vec<&str> = all[1..].to_vec();
        rotated.push(all[0]);
        push(
            "reordered",
            Preserving,
            d,
            rotated.join(" "),
            "first sentence moved to the end".into(),
        );
    } else if let Some(r) = reorder(d) {
        push(
            "reordered",
            Preserving,
            d,
            r,
            "leading verb moved to the end".into(),
        );
    }
    let table: Vec<(String, String)> = SYNONYMS
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let (s, swapped) = jargonier(d, &table);
    if !swapped.is_empty() {
        let what: Vec<String> = swapped.iter().map(|(a, b)| format!("{a} → {b}")).collect();
        push("synonym", Preserving, d, s, what.join(", "));
    }
    if let Some(p) = repunctuate(d) {
        push("punctuation", Preserving, d, p, "punctuation only".into());
    }
    if let Some(req) = purpose_request(d) {
        push(
            "example",
            Preserving,
            d,
            format!("{d} For example, call it when the user asks to {req}."),
            "a usage example restating the purpose".into(),
        );
    }
    if let Some(p) = paraphrases.first() {
        push(
            "paraphrase",
            Preserving,
            d,
            p.clone(),
            "reviewed LLM paraphrase".into(),
        );
    }
}

/// Every edit that applies to `tool` in `set`; `paraphrases` are reviewed rewrites of its
/// description (the first is used).
pub fn edits(tool: &Tool, set: &ToolSet, paraphrases: &[String]) -> Vec<Edit> {
    let d = tool.description_text().trim().to_string();
    if d.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut push = |kind: &'static str, label: Label, old: &str, new: String, detail: String| {
        let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        if norm(old) != norm(&new) && !new.trim().is_empty() {
            out.push(Edit {
                kind,
                label,
                old: old.to_string(),
                new,
                detail,
            });
        }
    };
    changing(tool, set, &d, &mut push);
    preserving(&d, paraphrases, &mut push);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calendar() -> ToolSet {
        crate::tools::calendar_example()
    }

    #[test]
    fn the_kinds_that_apply_to_a_two_sentence_description_are_made() {
        let set = calendar();
        let tool = set.get("schedule_appointment").unwrap();
        let got = edits(tool, &set, &["Book a new visit for a patient.".into()]);
        let kinds: Vec<&str> = got.iter().map(|e| e.kind).collect();
        // No scope word, filler or listed synonym in this text: those three do not apply.
        let applicable: Vec<&str> = CHANGING
            .iter()
            .chain(PRESERVING)
            .copied()
            .filter(|k| !["scope", "filler", "synonym"].contains(k))
            .collect();
        assert_eq!(kinds, applicable);
        let by = |k: &str| got.iter().find(|e| e.kind == k).unwrap();
        assert_eq!(by("vague").new, "Handles appointments.");
        assert!(
            by("negation")
                .new
                .starts_with("Do not schedule a new appointment")
        );
        assert!(by("sibling").detail.contains("reschedule_appointment"));
        // The restriction "…a visit that does not exist yet." is dropped, the purpose kept.
        assert_eq!(
            by("constraint-dropped").new,
            "Schedule a new appointment for a patient with a provider at a chosen date and time."
        );
        assert!(
            by("example")
                .new
                .ends_with("asks to schedule a new appointment for a patient with a provider at a chosen date and time.")
        );
        assert_eq!(by("typo").new, tool.description_text());
        assert_ne!(by("typo").old, tool.description_text());
        for e in &got {
            assert_ne!(e.old, e.new, "{}", e.kind);
        }
    }

    #[test]
    fn generators_that_do_not_apply_say_so() {
        assert_eq!(negate("The file's contents."), None);
        assert_eq!(drop_constraints("Read a file."), None);
        assert_eq!(scope_swap("Print a greeting"), None);
        assert_eq!(objects("search"), "searches");
        assert_eq!(objects("list_directory"), "directories");
        assert_eq!(
            purpose_request("Searches files by name."),
            Some("search files by name".into())
        );
    }
}
