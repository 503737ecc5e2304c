//! Meaning shifts: what a description edit changed about what the tool does, read from the words
//! that changed. The cosine says how far a text moved; it cannot say which way, and at MiniLM's
//! floor it catches fewer meaning changes than it flags harmless edits (docs/calibration.md).
//! These rules name the change instead — a negation added, a verb swapped for its opposite or a
//! sibling's, a scope or limit word changed, a restriction added or dropped, the purpose gone, a
//! sibling's text — so a reviewer reads the reason, and the gate can act on rules whose hit rate
//! on labelled edits beats their false-alarm rate (docs/calibration.md § "Meaning shifts").
//!
//! Words are compared as bags of stemmed tokens: a reordered sentence, a fixed typo (an edit of
//! two letters or fewer), filler removed or a synonym swapped changes none of the counts these
//! rules read.

use serde::{Deserialize, Serialize};

use crate::text::cues::NEGATIONS;
use crate::text::examples;
use crate::text::terms::{STOPWORDS, stem};
use crate::text::tokens::{name_tokens, sentences};
use crate::text::verbs::{VERB_PAIRS, same_action};
use crate::tools::ToolSet;

/// The rules, one id each (the report's `rule`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ShiftRule {
    /// More negations than before ("Do not read …", "never", "without").
    NegationAdded,
    /// Fewer negations than before: a "do not" or "never" is gone.
    NegationRemoved,
    /// A verb replaced by its opposite or near-miss (`verbs::VERB_PAIRS`), or by the verb a
    /// sibling tool's name leads with.
    VerbSwapped,
    /// A scope word replaced by its counterpart (file → directory, one → all, local → remote).
    ScopeChanged,
    /// A number changed (a limit, a default, a size).
    LimitChanged,
    /// A restriction word added ("only", "must", "unless", "except", "at most", "requires",
    /// "restricted").
    RestrictionAdded,
    /// A restriction word dropped.
    RestrictionRemoved,
    /// Most of the old text's words are gone and little replaced them: the purpose is no longer
    /// said.
    PurposeLost,
    /// The new text shares more words with a sibling tool's description than with its own old
    /// one.
    SiblingText,
}

impl ShiftRule {
    pub const ALL: &'static [ShiftRule] = &[
        ShiftRule::NegationAdded,
        ShiftRule::NegationRemoved,
        ShiftRule::VerbSwapped,
        ShiftRule::ScopeChanged,
        ShiftRule::LimitChanged,
        ShiftRule::RestrictionAdded,
        ShiftRule::RestrictionRemoved,
        ShiftRule::PurposeLost,
        ShiftRule::SiblingText,
    ];

    pub fn id(self) -> &'static str {
        match self {
            ShiftRule::NegationAdded => "negation-added",
            ShiftRule::NegationRemoved => "negation-removed",
            ShiftRule::VerbSwapped => "verb-swapped",
            ShiftRule::ScopeChanged => "scope-changed",
            ShiftRule::LimitChanged => "limit-changed",
            ShiftRule::RestrictionAdded => "restriction-added",
            ShiftRule::RestrictionRemoved => "restriction-removed",
            ShiftRule::PurposeLost => "purpose-lost",
            ShiftRule::SiblingText => "sibling-text",
        }
    }
}

/// One shift found in a description edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Shift {
    pub rule: ShiftRule,
    /// The words that show it, e.g. `"schedule" → "cancel"` or `"not"`.
    pub detail: String,
}

/// Words that restrict when or how far the tool acts.
const RESTRICTIONS: &[&str] = &[
    "only",
    "must",
    "unless",
    "except",
    "limit",
    "limits",
    "limited",
    "restrict",
    "restricts",
    "restricted",
    "maximum",
    "minimum",
    "max",
    "min",
    "at_most",
    "at_least",
    "up_to",
    "require",
    "required",
    "requires",
    "exclusively",
    "solely",
    "mandatory",
    "compulsory",
    "obligatory",
];

/// Restriction words that also name a thing when a noun follows ("required paths", "mandatory
/// fields"): only the requirement ("the name is required") counts.
const NAMING: &[&str] = &["required", "mandatory", "compulsory", "obligatory"];

/// Scope words said two ways: "all keys" → "every key" or "in one operation" → "in a single
/// call" keeps the scope ("all" and "one" are stopwords, so only their other forms are paired).
const SAME_SCOPE: &[&[&str]] = &[&["every", "all"], &["single", "one"]];

/// The scope `word` in any of its forms among `words` (stemmed): "one" for "single".
fn said(words: &[String], word: &str) -> bool {
    let forms = SAME_SCOPE
        .iter()
        .find(|f| f.contains(&word))
        .copied()
        .unwrap_or(std::slice::from_ref(&word));
    words.iter().any(|w| forms.contains(&stem(w).as_str()))
}

/// Nouns that make a number word count calls, not objects: "in one operation", "in a single
/// call", "one by one".
const CALLS: &[&str] = &[
    "call",
    "calls",
    "operation",
    "request",
    "step",
    "pass",
    "go",
    "batch",
    "by",
];

/// The scope words that count.
const COUNTS: &[&str] = &["one", "single", "multiple", "many"];

/// `words` without a count word that counts calls (not "pull request": "pull" counts nothing).
fn objects(words: &[String]) -> Vec<String> {
    words
        .iter()
        .enumerate()
        .filter(|(i, w)| {
            !(COUNTS.contains(&w.as_str())
                && words
                    .get(i + 1)
                    .is_some_and(|n| CALLS.contains(&n.as_str())))
        })
        .map(|(_, w)| w.clone())
        .collect()
}

/// Scope counterparts: replacing one by the other changes what the tool acts on. Independent of
/// the benchmark's generator table (`stress::edits::SCOPE`) where it can be; the overlap is said
/// in docs/calibration.md.
const SCOPES: &[(&str, &str)] = &[
    ("file", "directory"),
    ("file", "folder"),
    ("one", "all"),
    ("one", "every"),
    ("one", "many"),
    ("single", "multiple"),
    ("single", "every"),
    ("single", "all"),
    ("first", "last"),
    ("local", "remote"),
    ("public", "private"),
    ("internal", "external"),
    ("input", "output"),
    ("source", "destination"),
    ("head", "tail"),
    ("before", "after"),
    ("back", "forward"),
    ("previous", "next"),
    ("ascending", "descending"),
    ("upper", "lower"),
    ("minimum", "maximum"),
    ("repository", "organization"),
    ("user", "organization"),
    ("issue", "pull"),
    ("page", "browser"),
    ("tab", "window"),
    ("current", "every"),
    ("specific", "any"),
    ("today", "tomorrow"),
    ("past", "upcoming"),
    ("new", "existing"),
    ("sync", "async"),
    ("read", "write"),
];

/// Lowercase words, contractions split ("doesn't" → "does", "not"; "cannot" → "can", "not").
/// "at most", "at least", "up to" are one restriction word each (not "most" as in "most
/// recent"); a hyphenated compound ("up-to-date") is not.
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // `hyphen`: joined to the word before by a hyphen.
    let mut push = |w: &str, hyphen: bool| match (out.last().map(String::as_str), w) {
        (Some("at"), "most" | "least") | (Some("up"), "to") if !hyphen => {
            let last = out.last_mut().expect("a word before");
            last.push('_');
            last.push_str(w);
        }
        _ => out.push(w.to_string()),
    };
    let lower = text.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'");
    let mut rest = lower.as_str();
    while !rest.is_empty() {
        let start = rest
            .find(|c: char| c.is_alphanumeric() || c == '\'')
            .unwrap_or(rest.len());
        let hyphen = &rest[..start] == "-";
        rest = &rest[start..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '\''))
            .unwrap_or(rest.len());
        let w = rest[..end].trim_matches('\'');
        rest = &rest[end..];
        if w.is_empty() {
            continue;
        }
        if w == "cannot" {
            push("can", hyphen);
            push("not", false);
        } else if let Some(stem) = w.strip_suffix("n't") {
            let stem = match stem {
                "ca" => "can",
                "wo" => "will",
                "sha" => "shall",
                s => s,
            };
            push(stem, hyphen);
            push("not", false);
        } else {
            push(w, hyphen);
        }
    }
    out
}

/// Words that open a condition: a negation just after one states a default ("if no name is
/// given, it lists every app"; "when the file does not exist"; "whether or not it exists"), not
/// a prohibition.
const CONDITIONS: &[&str] = &[
    "if", "when", "whenever", "where", "wherever", "unless", "whether",
];

/// What a negation right before one of these negates is a failure: "without error", "does not
/// fail" say the call succeeds, they exclude no use.
const FAILURES: &[&str] = &["error", "errors", "fail", "fails", "failing", "failure"];

/// Words that name another tool in a redirect ("use a different tool", "use another command").
const OTHER: &[&str] = &["different", "another", "other", "separate"];
const TOOL: &[&str] = &["tool", "command", "function", "operation"];

/// The words the negation and restriction rules count, clause by clause. Left out: a negation in
/// a clause a condition word opens ("if no name is given", "when the file does not exist") or
/// that a sentence-opening "with" opens ("With no name it lists every app") — it states a
/// default, not a prohibition — unless the condition says when to use the tool ("Use this when
/// the visit does not exist yet"); a negation of a failure ("without error"); a naming word before a
/// noun ("required paths" names a thing; "the name is required" is the requirement), unless it
/// heads a list ("Required parameters: --vault" says what is required, as "Required:" does). Added: a
/// "not" before a redirect to another tool ("To fetch one key, use a different tool" excludes a
/// use as "Not for fetching one key" does).
fn cue_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for sentence in sentences(&unwrapped(text)) {
        for (c, clause) in sentence
            .split_inclusive([',', ';', ':', '(', ')'])
            .enumerate()
        {
            let w = words(clause);
            // "Required parameters: --vault …" heads a list of what is required.
            let heading = clause.ends_with(':');
            let opens = |j: usize| {
                CONDITIONS.contains(&w[j].as_str()) || (c == 0 && j == 0 && w[j] == "with")
            };
            // Words after a negation, articles skipped.
            let object = |i: usize| {
                w[i + 1..]
                    .iter()
                    .find(|n| !matches!(n.as_str(), "a" | "an" | "any" | "to"))
            };
            for (i, x) in w.iter().enumerate() {
                let negation = NEGATIONS.contains(&x.as_str());
                // "Use this when the visit does not exist yet" says when to use the tool: a
                // condition after "use" is a usage condition, its negations count.
                let conditional =
                    negation && (0..i).any(|j| opens(j) && !w[..j].iter().any(|u| u == "use"));
                let failure = negation && object(i).is_some_and(|n| FAILURES.contains(&n.as_str()));
                let naming = NAMING.contains(&x.as_str())
                    && !heading
                    && w.get(i + 1)
                        .is_some_and(|n| !STOPWORDS.contains(&n.as_str()));
                if x == "use" && redirect(&w[i + 1..]) {
                    out.push("not".to_string());
                }
                if !(conditional || failure || naming) {
                    out.push(x.clone());
                }
            }
        }
    }
    out
}

/// `text` with hard-wrapped lines joined: a line break inside a sentence (the next line opens in
/// lowercase, the line before ends in no stop) is a space, so "If a specific index name\r\nis not
/// provided" is one clause.
fn unwrapped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        out.push_str(line);
        if let Some(next) = lines.peek() {
            let ends =
                line.trim_end().ends_with(['.', '!', '?', ':', ';']) || line.trim().is_empty();
            let opens_low = next.trim_start().starts_with(|c: char| c.is_lowercase());
            out.push(if !ends && opens_low { ' ' } else { '\n' });
        }
    }
    out
}

/// "a different tool", "another command", "the other tool" (after "use"): a redirect.
fn redirect(after: &[String]) -> bool {
    let w: Vec<&str> = after
        .iter()
        .map(String::as_str)
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .take(2)
        .collect();
    matches!(w.as_slice(), [o, t] if OTHER.contains(o) && TOOL.contains(t))
}

/// Content stems: stopwords, negations and numbers out.
fn content(words: &[String]) -> Vec<String> {
    words
        .iter()
        .filter(|w| {
            !STOPWORDS.contains(&w.as_str())
                && !NEGATIONS.contains(&w.as_str())
                && !w.chars().all(|c| c.is_ascii_digit())
        })
        .map(|w| stem(w))
        .collect()
}

fn count(words: &[String], of: &[&str]) -> usize {
    words.iter().filter(|w| of.contains(&w.as_str())).count()
}

/// Two words one typo apart (two letters or fewer changed, or two swapped, after the same first
/// letter): the same word. The first letter guards prefixes: "reschedule" is not a typo of
/// "schedule", nor "unlock" of "lock".
fn typo_apart(a: &str, b: &str) -> bool {
    if a.len() < 5 || b.len() < 5 || a.chars().next() != b.chars().next() {
        return false;
    }
    strsim::damerau_levenshtein(a, b) <= 2
}

/// Stems in `a` and not in `b` (as multisets), typo-level variants not counted.
fn minus(a: &[String], b: &[String]) -> Vec<String> {
    let mut left = b.to_vec();
    let mut out = Vec::new();
    for w in a {
        if let Some(i) = left.iter().position(|x| x == w) {
            left.swap_remove(i);
        } else {
            out.push(w.clone());
        }
    }
    out.into_iter()
        .filter(|w| !b.iter().any(|x| typo_apart(w, x)))
        .collect()
}

/// The numbers a text states (limits, defaults, sizes), sorted; list markers ("1. ", "2) ") at
/// the start of a line are numbering, not numbers, and so are markers of a list run inline
/// ("Use as follows: 1. Ask … 2. Track …"); tokens with letters ("base64", "v2") are names, and a
/// number inside double quotes or backticks is a value in an example (`{"orderId": "1234"}`).
fn numbers(text: &str) -> Vec<String> {
    let mut n: Vec<String> = Vec::new();
    let text = &inline_markers_blanked(text);
    for line in text.lines() {
        let t = line.trim_start();
        let marker = t
            .split_once(['.', ')'])
            .filter(|(head, rest)| {
                !head.is_empty()
                    && head.chars().all(|c| c.is_ascii_digit())
                    && rest.starts_with(char::is_whitespace)
            })
            .map_or(0, |(head, _)| head.len() + 1);
        n.extend(
            unquoted(&t[marker..])
                .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == ','))
                .map(|w| w.trim_matches(['.', ',']))
                .filter(|w| {
                    !w.is_empty()
                        && w.chars()
                            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
                })
                .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
                .map(|w| w.replace(',', "")),
        );
    }
    n.sort();
    n
}

/// `text` with an inline list's markers blanked: "N. " or "N) " before a capital, after the
/// end of a sentence or clause ("follows: 1. Ask", "at a time). 2. Track"), when the markers
/// count from 1 to 2 at least. A lone "Maximum: 100. Default: 10." has no run: its numbers stay.
fn inline_markers_blanked(text: &str) -> String {
    let b = text.as_bytes();
    let mut found: Vec<(usize, usize, &str)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            i += 1;
            continue;
        }
        let end = i + digits;
        let before = text[..i].trim_end_matches([' ', '\t']);
        let opens = i > 0
            && before.len() < i
            && before.ends_with(['.', ':', ';', '!', '?', ')'])
            && !before.ends_with(|c: char| c.is_ascii_digit());
        let marker = matches!(b.get(end), Some(b'.' | b')'))
            && b.get(end + 1) == Some(&b' ')
            && b.get(end + 2).is_some_and(u8::is_ascii_uppercase);
        if opens && marker {
            found.push((i, end + 1, &text[i..end]));
        }
        i = end;
    }
    let run = ["1", "2"].iter().all(|m| found.iter().any(|f| f.2 == *m));
    let mut out = text.to_string();
    if run {
        for (start, end, _) in found.iter().rev() {
            out.replace_range(start..end, &" ".repeat(end - start));
        }
    }
    out
}

/// `line` with what stands inside double quotes or backticks blanked; an unclosed quote blanks
/// nothing.
fn unquoted(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find(['"', '`', '\u{201c}']) {
        let open = rest[start..].chars().next().expect("a quote");
        let close = if open == '\u{201c}' { '\u{201d}' } else { open };
        let inner = start + open.len_utf8();
        let Some(len) = rest[inner..].find(close) else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push(' ');
        rest = &rest[inner + len + close.len_utf8()..];
    }
    out.push_str(rest);
    out
}

fn quoted(w: &str) -> String {
    format!("\"{w}\"")
}

/// The base side's tools as the sibling rules read them, computed once per diff: each tool's
/// leading name verb and its description's content stems, indexed by stem so a changed text is
/// compared only with the tools it shares a word with (a 50,000-tool gateway stays linear).
pub struct Siblings {
    names: Vec<String>,
    verbs: Vec<Option<String>>,
    stems: Vec<Vec<String>>,
    index: std::collections::HashMap<String, Vec<usize>>,
}

impl Siblings {
    pub fn new(set: &ToolSet) -> Siblings {
        let mut index: std::collections::HashMap<String, Vec<usize>> = Default::default();
        let mut stems = Vec::with_capacity(set.tools.len());
        for (i, t) in set.tools.iter().enumerate() {
            let mut own = content(&words(t.description_text()));
            own.sort();
            own.dedup();
            for w in &own {
                index.entry(w.clone()).or_default().push(i);
            }
            stems.push(own);
        }
        Siblings {
            names: set.tools.iter().map(|t| t.name.clone()).collect(),
            verbs: set.tools.iter().map(|t| leading_stem(&t.name)).collect(),
            stems,
            index,
        }
    }

    /// No siblings (a parameter's description, or a lone tool).
    pub fn none() -> Siblings {
        Siblings::new(&ToolSet::default())
    }
}

fn leading_stem(name: &str) -> Option<String> {
    name_tokens(name).first().map(|t| stem(t))
}

/// The shifts from `old` to `new` for `tool` (its name, and its siblings on the base side for the
/// sibling rules). Empty when the edit reads as meaning-preserving.
pub fn shifts(old: &str, new: &str, tool: &str, set: &Siblings) -> Vec<Shift> {
    let (ow, nw) = (words(old), words(new));
    // Negations, restrictions and limits are read outside usage examples: "For example, pass
    // only the service" illustrates a call, it does not restrict the tool.
    let (ox, nx) = (examples::without(old), examples::without(new));
    let (oq, nq) = (cue_words(&ox), cue_words(&nx));
    let mut out = Vec::new();
    let mut push = |rule, detail: String| out.push(Shift { rule, detail });
    let (neg_old, neg_new) = (count(&oq, NEGATIONS), count(&nq, NEGATIONS));
    if neg_new > neg_old {
        push(ShiftRule::NegationAdded, negation_detail(&nx, &ox));
    } else if neg_new < neg_old {
        push(ShiftRule::NegationRemoved, negation_detail(&ox, &nx));
    }
    let (oc, nc) = (content(&ow), content(&nw));
    let removed = minus(&oc, &nc);
    let added = minus(&nc, &oc);
    // A verb swapped in its noun or gerund form too ("installation" → "uninstallation").
    let forms: Vec<(String, String)> = VERB_PAIRS
        .iter()
        .flat_map(|p| nominal(p.a).into_iter().zip(nominal(p.b)))
        .collect();
    let pairs: Vec<(&str, &str)> = forms.iter().map(|(a, b)| (&a[..], &b[..])).collect();
    let verb = counterpart(&removed, &added, &pairs, &|_, _| false).or_else(|| {
        sibling_verb(tool, set, &removed, &added, &oc)
            .map(|(r, a)| format!("{} → {} (`{}`'s verb)", quoted(&r), quoted(&a.0), a.1))
    });
    if let Some(d) = verb {
        push(ShiftRule::VerbSwapped, d);
    }
    // Scope is read on objects ("in a single call" counts calls). A pair whose old scope is still
    // said and whose new one was already said ("all keys … not a single key" → "every key … one
    // key") swapped forms, not scope.
    let (os, ns) = (objects(&ow), objects(&nw));
    let (rs, adds) = (
        minus(&content(&os), &content(&ns)),
        minus(&content(&ns), &content(&os)),
    );
    let swapped = |r: &str, a: &str| said(&ns, r) && said(&os, a);
    if let Some(d) = counterpart(&rs, &adds, SCOPES, &swapped) {
        push(ShiftRule::ScopeChanged, d);
    }
    let (on, nn) = (numbers(&ox), numbers(&nx));
    if on != nn {
        push(
            ShiftRule::LimitChanged,
            format!("[{}] → [{}]", on.join(", "), nn.join(", ")),
        );
    }
    let (res_old, res_new) = (count(&oq, RESTRICTIONS), count(&nq, RESTRICTIONS));
    if res_new > res_old {
        push(
            ShiftRule::RestrictionAdded,
            first_of(&nq, &oq, RESTRICTIONS),
        );
    } else if res_new < res_old {
        push(
            ShiftRule::RestrictionRemoved,
            first_of(&oq, &nq, RESTRICTIONS),
        );
    }
    let kept = oc.len() - removed.len().min(oc.len());
    if oc.len() >= 4 && (kept as f64) < 0.5 * oc.len() as f64 && nc.len() * 2 <= oc.len() {
        push(
            ShiftRule::PurposeLost,
            format!("{kept} of {} words kept, {} now", oc.len(), nc.len()),
        );
    }
    // The new text's overlap with its old self, typo-level variants counted as kept.
    let own = kept as f64 / (oc.len() + added.len()).max(1) as f64;
    if let Some(s) = closer_sibling(tool, set, own, &nc) {
        push(ShiftRule::SiblingText, format!("reads like `{s}`"));
    }
    out
}

/// The first removed word whose counterpart in `pairs` was added, unless `skip` says the pair is
/// no change: `"old" → "new"`.
fn counterpart(
    removed: &[String],
    added: &[String],
    pairs: &[(&str, &str)],
    skip: &dyn Fn(&str, &str) -> bool,
) -> Option<String> {
    removed.iter().find_map(|r| {
        added.iter().find_map(|a| {
            (pairs
                .iter()
                .any(|(p, q)| (r == p && a == q) || (r == q && a == p))
                && !skip(r, a))
            .then(|| format!("{} → {}", quoted(r), quoted(a)))
        })
    })
}

/// A verb and the nouns and gerund made from it, in the same order for every verb: "install",
/// "installation", "installing"; "activate", "activation", "activating".
fn nominal(verb: &str) -> [String; 3] {
    let bare = verb.strip_suffix('e').unwrap_or(verb);
    let noun = match verb.strip_suffix("ate") {
        Some(root) => format!("{root}ation"),
        None => format!("{bare}ation"),
    };
    [verb.to_string(), noun, format!("{bare}ing")]
}

/// The first word of `of` that `more` has more of than `less`, quoted with its neighbour.
fn first_of(more: &[String], less: &[String], of: &[&str]) -> String {
    of.iter()
        .find(|w| count(more, &[w]) > count(less, &[w]))
        .map(|w| quoted(w))
        .unwrap_or_default()
}

/// The negation with the word after it ("not read", "never returns"), taken from a sentence of
/// `more` that `less` does not have when there is one: the one that moved, not the first.
fn negation_detail(more: &str, less: &str) -> String {
    let flat = |t: &str| cue_words(t).join(" ");
    let less_flat = flat(less);
    let all = cue_words(more);
    let fresh = sentences(more)
        .into_iter()
        .map(cue_words)
        .find(|w| !less_flat.contains(&w.join(" ")) && count(w, NEGATIONS) > 0);
    let from = fresh.unwrap_or(all);
    for (i, w) in from.iter().enumerate() {
        if NEGATIONS.contains(&w.as_str()) {
            let next = from.get(i + 1).map(|n| format!(" {n}")).unwrap_or_default();
            return quoted(&format!("{w}{next}"));
        }
    }
    String::new()
}

/// A verb a sibling's name leads with, added where the tool's own leading verb was removed:
/// "Schedule …" → "Reschedule …" beside `reschedule_appointment`. (removed, (added, sibling)).
fn sibling_verb(
    tool: &str,
    set: &Siblings,
    removed: &[String],
    added: &[String],
    old: &[String],
) -> Option<(String, (String, String))> {
    let own = leading_stem(tool)?;
    if !removed.contains(&own) {
        return None;
    }
    set.names
        .iter()
        .zip(&set.verbs)
        .filter(|(n, _)| n.as_str() != tool)
        .find_map(|(n, v)| {
            let v = v.as_ref()?;
            (!same_action(v, &own) && added.contains(v) && !old.contains(v))
                .then(|| (own.clone(), (v.clone(), n.clone())))
        })
}

/// The sibling whose description the new text shares clearly more words with (Jaccard of content
/// stems) than `own`, its overlap with the old text, by 0.1 or more.
fn closer_sibling(tool: &str, set: &Siblings, own: f64, new: &[String]) -> Option<String> {
    let mut new: Vec<&String> = new.iter().collect();
    new.sort();
    new.dedup();
    let mut shared: std::collections::HashMap<usize, usize> = Default::default();
    for w in &new {
        for &i in set.index.get(*w).into_iter().flatten() {
            *shared.entry(i).or_default() += 1;
        }
    }
    shared
        .into_iter()
        .filter(|(i, _)| set.names[*i] != tool)
        .map(|(i, k)| (i, k as f64 / (new.len() + set.stems[i].len() - k) as f64))
        .filter(|(_, j)| *j >= own + 0.1)
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(i, _)| set.names[i].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calendar() -> ToolSet {
        crate::tools::calendar_example()
    }

    fn rules(old: &str, new: &str) -> Vec<&'static str> {
        shifts(
            old,
            new,
            "schedule_appointment",
            &Siblings::new(&calendar()),
        )
        .iter()
        .map(|s| s.rule.id())
        .collect()
    }

    /// Each pair, read old → new and new → old, shifts nothing.
    fn shift_nothing_either_way(pairs: &[(&str, &str)]) {
        for (old, new) in pairs {
            assert_eq!(rules(old, new), Vec::<&str>::new(), "{new}");
            assert_eq!(rules(new, old), Vec::<&str>::new(), "{old}");
        }
    }

    const OLD: &str = "Schedule a new appointment for a patient with a provider at a chosen date and time. Use this when the patient wants a visit that does not exist yet.";

    #[test]
    fn meaning_changes_are_named() {
        assert_eq!(
            rules(OLD, &OLD.replacen("Schedule", "Do not schedule", 1)),
            ["negation-added"]
        );
        assert!(
            rules(
                OLD,
                "Reschedule a customer's appointment at a specific date and time. Use when the user wants to change a meeting."
            )
            .contains(&"verb-swapped")
        );
        assert!(rules(OLD, "Handles appointments.").contains(&"purpose-lost"));
        assert!(rules(OLD, "Book a slot.").contains(&"purpose-lost"));
        assert!(
            rules(
                OLD,
                "Cancel an existing appointment and release its time slot."
            )
            .contains(&"sibling-text")
        );
        assert_eq!(
            rules("Read at most 10 lines.", "Read at most 50 lines."),
            ["limit-changed"]
        );
        assert_eq!(
            rules("Read a file.", "Read a directory."),
            ["scope-changed"]
        );
        assert_eq!(
            rules(
                "Go back to the previous page in the history",
                "Go forward to the next page in the history"
            ),
            ["scope-changed"]
        );
        // A limit outside quotes still shifts.
        assert_eq!(
            rules("Read lines.", "Read lines, 1234 at most."),
            ["limit-changed", "restriction-added"]
        );
        // Numbering and names with digits are not limits; "1,000" is "1000".
        assert!(
            rules(
                "Methods:\n1. get\n2. list",
                "Methods:\n1. get\n2. list\n3. read"
            )
            .is_empty()
        );
        assert!(rules("Content as base64.", "Content as base64 text.").is_empty());
        assert!(rules("At most 1,000 rows.", "At most 1000 rows.").is_empty());
    }

    #[test]
    fn meaning_preserving_edits_shift_nothing() {
        for new in [
            OLD.replacen("chosen", "cohsen", 1),
            OLD.replacen("Schedule a new", "Schedule a brand new", 1),
            "Use this when the patient wants a visit that does not exist yet. Schedule a new appointment for a patient with a provider at a chosen date and time.".to_string(),
            format!("{OLD} For example, call it when the user asks to schedule a new appointment."),
            OLD.replace("doesn't", "does not"),
        ] {
            assert_eq!(rules(OLD, &new), Vec::<&str>::new(), "{new}");
        }
        // Contractions are negations too: "does not" → "doesn't" is no change.
        assert!(rules("It does not exist.", "It doesn't exist.").is_empty());
        // A negation that opens a condition states a default, not a prohibition; "required"
        // before a noun names a thing, not a requirement.
        shift_nothing_either_way(&[
            (
                "Get the app's details, or every app in the subscription.",
                "Get the app's details. If no name is given, it lists every app in the subscription.",
            ),
            (
                "Get the app's details, or every app in the subscription.",
                "Get the app's details. With no name it lists every app in the subscription.",
            ),
            (
                "Write the file, creating it first.",
                "Write the file, creating it first when it does not exist yet.",
            ),
            (
                "Create the folder and any missing parents.",
                "Create the folder, ensuring required parent folders exist.",
            ),
            (
                "Creates the group, or updates it if it already exists.",
                "Creates or updates the group, depending on whether or not it already exists.",
            ),
        ]);
        // A hyphenated compound is one word: "up-to-date" is not the limit "up to".
        assert!(
            rules(
                "Ideal for gathering current information.",
                "Ideal for collecting up-to-date information."
            )
            .is_empty()
        );
        assert_eq!(
            rules("Read the file.", "Read the file, up to 10 MB."),
            ["limit-changed", "restriction-added"]
        );
        // A restriction said in other words is still one restriction.
        assert!(
            rules(
                "Lists a directory. Only works within allowed directories.",
                "Lists a directory. Restricted to allowed directories."
            )
            .is_empty()
        );
        assert_eq!(
            rules(
                "Lists a directory.",
                "Lists a directory. Restricted to allowed directories."
            ),
            ["restriction-added"]
        );
        // A number inside quotes is a value in an example, not a limit.
        assert!(
            rules(
                "Publish an event.",
                "Publish an event. Example: publish {\"orderId\": \"1234\"} as data."
            )
            .is_empty()
        );
        // Nor is a restriction or a negation inside a usage example: it illustrates a call.
        assert!(
            rules(
                "Gets the details of knowledge sources.",
                "Gets the details of knowledge sources. For example, pass only the service to \
                 see every source in it (e.g. never more than 10)."
            )
            .is_empty()
        );
        // Outside the example the same words still shift.
        assert_eq!(
            rules(
                "Gets the details of knowledge sources.",
                "Gets the details of knowledge sources, only in the service. For example, pass \
                 the service."
            ),
            ["restriction-added"]
        );
        // The same words outside a condition, or "required" as the requirement, still shift.
        assert_eq!(
            rules("List every app.", "List every app, with no details."),
            ["negation-added"]
        );
        assert_eq!(
            rules("List every app.", "List every app. The name is required."),
            ["restriction-added"]
        );
        assert_eq!(
            rules(
                "Read the file.",
                "Read the file. Do not use it if the file is large."
            ),
            ["negation-added"]
        );
    }

    /// Rewordings chosen on the sixth hand-written batch's false alarms (docs/calibration.md).
    #[test]
    fn everyday_rewording_shifts_nothing() {
        // Said in other words, none of these changes what the tool is for: a requirement named
        // by a synonym, a default stated in a condition however long (and across a hard-wrapped
        // line), a success said as "without error", an exclusion said as a redirect, scope words
        // in their other form, a count of calls.
        shift_nothing_either_way(&[
            (
                "Resource group is required.",
                "Resource group is mandatory.",
            ),
            (
                "Get index details. If a specific index name is not provided, the command returns every index.",
                "Get index details. When no index name is given, details for every index are returned.",
            ),
            (
                "Get index details. If a specific index name\r\nis not provided, the command returns every index.",
                "Get index details. When no index name\r\nis given, details for every index are returned.",
            ),
            (
                "Create a directory. If it already exists, the call succeeds silently.",
                "Create a directory. If it already exists, it completes silently without error.",
            ),
            (
                "List all keys in a vault. Not for fetching a single key.",
                "Enumerates every key in a vault. To fetch one specific key, use a different tool.",
            ),
            (
                "Create multiple nested directories in one operation.",
                "Create any missing nested directories in a single call.",
            ),
        ]);
        // The same words where they do change it.
        assert_eq!(
            rules(
                "List every key.",
                "List every key. The vault name is mandatory."
            ),
            ["restriction-added"]
        );
        assert!(rules("List keys.", "List keys with mandatory tags.").is_empty());
        assert_eq!(
            rules(
                "List every key.",
                "List every key. To fetch one key, use another tool."
            ),
            ["negation-added"]
        );
        assert_eq!(
            rules("Upload one or multiple files", "Upload a single file"),
            ["scope-changed"]
        );
        assert_eq!(
            rules("Upload a single file", "Upload one or multiple files"),
            ["scope-changed"]
        );
        // A condition that says when to use the tool is no default: dropping it drops a
        // negation.
        assert_eq!(
            rules(
                OLD,
                "Schedule a new appointment for a patient with a provider at a chosen date and time."
            ),
            ["negation-removed"]
        );
        // A count of calls is a count word before a call noun, not any scope word before one.
        assert_eq!(
            rules(
                "Add a comment to an existing issue",
                "Add a comment to an existing pull request"
            ),
            ["scope-changed"]
        );
        assert_eq!(
            rules(
                "Gives installation instructions for the CLI.",
                "Gives uninstallation instructions for the CLI."
            ),
            ["verb-swapped"]
        );
    }

    /// Rewordings chosen on the seventh hand-written batch's false alarms (docs/calibration.md).
    #[test]
    fn list_headings_and_renumbering_shift_nothing() {
        shift_nothing_either_way(&[
            (
                "Get a secret. Required: --vault <vault>, --secret <secret>. Optional: --tenant.",
                "Get a secret. Required parameters: --vault <vault>, --secret <secret>. Optional parameter: --tenant.",
            ),
            (
                "Design an architecture. Use as follows: 1. Ask about goals. 2. Track confidence until it reaches 0.7. 4. Present the design. 4. Follow the framework.",
                "Design an architecture. Use as follows: 1. Ask about goals. 2. Track confidence until it reaches 0.7. 4. Present the design. 5. Follow the framework.",
            ),
        ]);
        // A requirement named, not headed, is still no requirement; one dropped still counts.
        assert!(rules("List keys.", "List keys with required tags.").is_empty());
        assert_eq!(
            rules(
                "Get a secret from a vault. Required parameters: --vault.",
                "Get a secret from a vault. Optional parameters: --vault."
            ),
            ["restriction-removed"]
        );
        // Numbers that no list run numbers are still limits, and so is a limit inside a list.
        assert_eq!(
            rules(
                "List logs. Maximum: 100. Default: 10.",
                "List logs. Maximum: 50. Default: 10."
            ),
            ["limit-changed"]
        );
        assert_eq!(
            rules(
                "Use as follows: 1. Ask. 2. Fetch at most 50. Show them.",
                "Use as follows: 1. Ask. 2. Fetch at most 20. Show them."
            ),
            ["limit-changed"]
        );
    }
}
