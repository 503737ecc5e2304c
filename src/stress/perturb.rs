//! Perturbations: deliberate edits that look like harmless cleanups of one tool definition.
//!
//! Each perturbation is a pure function of the tool and the tool set it lives in (for siblings),
//! behind one trait so the set is a table and new edits are one entry. An edit that would change
//! nothing answers `None` ("does not apply"), so the report never counts a no-op as robustness.

use serde_json::{Map, Value, json};

use crate::text::tokens::{ellipsis, name_tokens, split_first_sentence};
use crate::text::verbs::{self, NOT_VERBS};
use crate::text::words::capitalise;
use crate::tools::{Tool, ToolSet};

/// What a perturbation sees besides the tool itself.
pub struct Context<'a> {
    /// The unperturbed set, for siblings (inverted polarity, name clashes).
    pub tools: &'a ToolSet,
}

/// One perturbed tool and a one-line account of the edit for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Perturbed {
    pub tool: Tool,
    pub detail: String,
}

pub trait Perturbation: Send + Sync {
    /// Stable identifier: column name in reports, value of `--perturb`.
    fn id(&self) -> &str;
    /// What the edit does, for the report's legend.
    fn summary(&self) -> String;
    /// The edited tool, or `None` when the edit does not apply to this tool.
    fn apply(&self, tool: &Tool, ctx: &Context) -> Option<Perturbed>;
    /// The edit changes what the tool does: a router *should* move, so its column measures
    /// sensitivity, not fragility.
    fn changes_meaning(&self) -> bool {
        false
    }
}

/// The built-in perturbations, in report order. `jargon` replaces the default jargon table.
pub fn builtin(jargon: Option<Vec<(String, String)>>) -> Vec<Box<dyn Perturbation>> {
    let jargon = jargon.unwrap_or_else(|| {
        JARGON
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    });
    vec![
        Box::new(Terser),
        Box::new(Jargonier { table: jargon }),
        Box::new(Reordered),
        Box::new(InvertedPolarity),
        Box::new(AddedOptionalParam),
    ]
}

/// The ids of the built-in set, for `--perturb` validation and help.
pub const BUILTIN_IDS: [&str; 5] = [
    "terser",
    "jargonier",
    "reordered",
    "inverted",
    "optional-param",
];

/// A description with a new text (`None` when it would not change).
fn with_description(tool: &Tool, text: String, detail: String) -> Option<Perturbed> {
    if tool.description.as_deref() == Some(text.as_str()) {
        return None;
    }
    let mut t = tool.clone();
    t.description = Some(text);
    Some(Perturbed { tool: t, detail })
}

// ---- terser -------------------------------------------------------------------------------------

/// Filler a copy-editor cuts: conversational padding and intensifiers. Longest phrases first, so
/// "so that you can" is not half-eaten by a shorter entry.
const FILLER: &[(&str, &str)] = &[
    ("so that you can", "to"),
    ("in order to", "to"),
    ("so you can", "to"),
    ("feel free to", ""),
    ("note that", ""),
    ("please", ""),
    ("kindly", ""),
    ("simply", ""),
    ("just", ""),
    ("basically", ""),
    ("actually", ""),
    ("really", ""),
    ("very", ""),
    ("clearly", ""),
    ("completely", ""),
    ("complete", ""),
    ("detailed", ""),
    ("comprehensive", ""),
    ("various", ""),
];

pub struct Terser;

/// Drop filler and collapse whitespace. Pure; returns the text unchanged when nothing applies.
pub fn terser(text: &str) -> (String, Vec<&'static str>) {
    let mut out = text.to_string();
    let mut dropped = Vec::new();
    for (phrase, with) in FILLER {
        let (next, n) = replace_phrase(&out, phrase, with, false);
        if n > 0 {
            dropped.push(*phrase);
            out = next;
        }
    }
    (tidy(&out), dropped)
}

impl Perturbation for Terser {
    fn id(&self) -> &str {
        "terser"
    }
    fn summary(&self) -> String {
        "drop filler (\"in order to\", \"please\", \"detailed\", …) and collapse whitespace".into()
    }
    fn apply(&self, tool: &Tool, _: &Context) -> Option<Perturbed> {
        let (text, dropped) = terser(tool.description_text());
        let detail = if dropped.is_empty() {
            "whitespace only".to_string()
        } else {
            format!("dropped {}", quoted(&dropped))
        };
        with_description(tool, text, detail)
    }
}

// ---- jargonier ----------------------------------------------------------------------------------

/// Default plain → house-jargon table (override with `--jargon FILE`). Plurals follow ("files" →
/// "blobs"); capitalisation is kept.
pub const JARGON: &[(&str, &str)] = &[
    ("directory", "namespace"),
    ("directories", "namespaces"),
    ("folder", "bucket"),
    ("file", "blob"),
    ("contents", "payload"),
    ("metadata", "stat block"),
    ("read", "hydrate"),
    ("write", "persist"),
    ("list", "enumerate"),
    ("search", "scan"),
    ("create", "provision"),
    ("delete", "decommission"),
    ("remove", "decommission"),
    ("move", "relocate"),
    ("edit", "mutate"),
    ("update", "patch"),
    ("send", "dispatch"),
    ("user", "principal"),
    ("appointment", "encounter"),
    ("patient", "member"),
    ("schedule", "slot"),
    ("cancel", "void"),
];

/// At most this many distinct phrases are swapped: a house-style pass, not a rewrite.
pub const JARGON_LIMIT: usize = 2;

pub struct Jargonier {
    pub table: Vec<(String, String)>,
}

/// Swap the first `JARGON_LIMIT` table phrases (by first appearance) everywhere in `text`.
pub fn jargonier(text: &str, table: &[(String, String)]) -> (String, Vec<(String, String)>) {
    let lower = text.to_ascii_lowercase();
    let mut found: Vec<(usize, &(String, String))> = table
        .iter()
        .filter_map(|e| find_phrase(&lower, &e.0.to_ascii_lowercase(), true).map(|at| (at, e)))
        .collect();
    found.sort_by_key(|(at, _)| *at);
    let mut out = text.to_string();
    let mut swapped = Vec::new();
    for (_, (plain, jargon)) in found.into_iter().take(JARGON_LIMIT) {
        let (next, n) = replace_phrase(&out, plain, jargon, true);
        if n > 0 {
            out = next;
            swapped.push((plain.clone(), jargon.clone()));
        }
    }
    (out, swapped)
}

impl Perturbation for Jargonier {
    fn id(&self) -> &str {
        "jargonier"
    }
    fn summary(&self) -> String {
        format!(
            "swap up to {JARGON_LIMIT} plain phrases for house jargon (\"file\" → \"blob\", \"list\" → \"enumerate\", …; --jargon FILE)"
        )
    }
    fn apply(&self, tool: &Tool, _: &Context) -> Option<Perturbed> {
        let (text, swapped) = jargonier(tool.description_text(), &self.table);
        let detail = swapped
            .iter()
            .map(|(a, b)| format!("\"{a}\" → \"{b}\""))
            .collect::<Vec<_>>()
            .join(", ");
        with_description(tool, text, detail)
    }
}

// ---- reordered ----------------------------------------------------------------------------------

/// Particles that belong to the verb ("search for files") and would dangle after the move.
const PARTICLES: &[&str] = &["for", "up", "out", "about"];

pub struct Reordered;

/// "Schedule a visit for a patient. More." → "For matters relating to a visit for a patient,
/// schedule. More." `None` when the first sentence has no leading verb or too little after it.
pub fn reorder(text: &str) -> Option<String> {
    let (first, rest) = split_first_sentence(text);
    let body = first.trim().trim_end_matches('.');
    let words: Vec<&str> = body.split_whitespace().collect();
    let w0 = *words.first()?;
    if !w0.chars().all(|c| c.is_ascii_alphabetic())
        || !w0.starts_with(|c: char| c.is_ascii_uppercase())
        || NOT_VERBS.contains(&w0.to_ascii_lowercase().as_str())
    {
        return None;
    }
    let mut verb = vec![w0.to_ascii_lowercase()];
    let mut i = 1;
    // "Recursively search …" → "search recursively".
    if w0.to_ascii_lowercase().ends_with("ly") && words.len() > 2 {
        verb.insert(0, words[1].to_string());
        i = 2;
    }
    // "Move or rename files …" keeps both verbs together.
    if words.len() > i + 2 && matches!(words[i], "or" | "and") {
        verb.push(words[i].to_string());
        verb.push(words[i + 1].to_string());
        i += 2;
    }
    if words.get(i).is_some_and(|w| PARTICLES.contains(w)) {
        i += 1;
    }
    if words.len() < i + 2 {
        return None;
    }
    let mut out = format!(
        "For matters relating to {}, {}.",
        words[i..].join(" "),
        verb.join(" ")
    );
    if !rest.is_empty() {
        out.push_str(rest);
    }
    Some(out)
}

impl Perturbation for Reordered {
    fn id(&self) -> &str {
        "reordered"
    }
    fn summary(&self) -> String {
        "move the leading verb to the end (\"For matters relating to …, schedule.\")".into()
    }
    fn apply(&self, tool: &Tool, _: &Context) -> Option<Perturbed> {
        let text = reorder(tool.description_text())?;
        let first = split_first_sentence(&text).0.trim().to_string();
        with_description(tool, text, format!("\"{}\"", ellipsis(&first, 70)))
    }
}

// ---- inverted polarity --------------------------------------------------------------------------

pub struct InvertedPolarity;

/// The swap to make for `tool`: (from, to, whether a sibling's name uses `to`).
pub fn polarity_swap(tool: &Tool, tools: &ToolSet) -> Option<(&'static str, &'static str, bool)> {
    let own = name_tokens(&tool.name);
    let desc = tool.description_text().to_ascii_lowercase();
    let sibling_tokens: Vec<String> = tools
        .tools
        .iter()
        .filter(|t| t.name != tool.name)
        .flat_map(|t| name_tokens(&t.name))
        .collect();
    let candidates: Vec<(&'static str, &'static str)> = verbs::perturbing()
        .flat_map(|(a, b)| [(a, b), (b, a)])
        .filter(|(from, _)| {
            own.iter().any(|t| t == from) || find_phrase(&desc, from, true).is_some()
        })
        .collect();
    let by_sibling = candidates
        .iter()
        .find(|(_, to)| sibling_tokens.iter().any(|t| t == to));
    match by_sibling {
        Some(&(f, t)) => Some((f, t, true)),
        None => candidates.first().map(|&(f, t)| (f, t, false)),
    }
}

impl Perturbation for InvertedPolarity {
    fn id(&self) -> &str {
        "inverted"
    }
    fn changes_meaning(&self) -> bool {
        true
    }
    fn summary(&self) -> String {
        "swap a verb for its near-opposite (read → write, schedule → reschedule; a sibling's verb first) in description and name".into()
    }
    fn apply(&self, tool: &Tool, ctx: &Context) -> Option<Perturbed> {
        let (from, to, sibling) = polarity_swap(tool, ctx.tools)?;
        let mut t = tool.clone();
        let (desc, n) = replace_phrase(tool.description_text(), from, to, true);
        if n > 0 {
            t.description = Some(desc);
        }
        let mut detail = format!("\"{from}\" → \"{to}\"");
        if !sibling {
            detail.push_str(" (no sibling uses it)");
        }
        let renamed = rename_token(&tool.name, from, to);
        match renamed {
            Some(new) if ctx.tools.get(&new).is_some() => {
                detail.push_str(&format!("; name kept (`{new}` exists)"));
            }
            Some(new) => {
                detail.push_str(&format!("; renamed `{new}`"));
                t.name = new;
            }
            None => {}
        }
        (t != *tool).then_some(Perturbed { tool: t, detail })
    }
}

// ---- added optional parameter -------------------------------------------------------------------

/// Candidate names for the added field; the first one the tool does not already have is used.
const OPTIONAL_FIELDS: [&str; 3] = ["request_tag", "trace_label", "client_note"];

pub struct AddedOptionalParam;

impl Perturbation for AddedOptionalParam {
    fn id(&self) -> &str {
        "optional-param"
    }
    fn summary(&self) -> String {
        "append a sentence about a new optional field and add it to inputSchema".into()
    }
    fn apply(&self, tool: &Tool, _: &Context) -> Option<Perturbed> {
        let mut schema = match &tool.input_schema {
            Value::Object(m) => m.clone(),
            _ => return None,
        };
        let props = schema
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        let props = props.as_object_mut()?;
        let field = OPTIONAL_FIELDS.iter().find(|f| !props.contains_key(**f))?;
        props.insert(
            field.to_string(),
            json!({"type": "string", "description": "Optional free-form label, echoed in server logs."}),
        );
        let mut t = tool.clone();
        t.input_schema = Value::Object(schema);
        let desc = tool.description_text().trim_end();
        let sep = if desc.is_empty() || desc.ends_with('.') {
            " "
        } else {
            ". "
        };
        t.description = Some(
            format!("{desc}{sep}Optionally pass `{field}` to label the request in logs.")
                .trim_start()
                .to_string(),
        );
        Some(Perturbed {
            tool: t,
            detail: format!("optional `{field}`"),
        })
    }
}

// ---- LLM paraphrases (drafted elsewhere, applied here) -------------------------------------------

/// A meaning-preserving rewrite drafted by a model: one per tool, all of index `n`.
pub struct Paraphrase {
    pub id: String,
    pub model: String,
    pub by_tool: std::collections::BTreeMap<String, String>,
}

impl Perturbation for Paraphrase {
    fn id(&self) -> &str {
        &self.id
    }
    fn summary(&self) -> String {
        format!(
            "meaning-preserving rewrite of the description drafted by {}",
            self.model
        )
    }
    fn apply(&self, tool: &Tool, _: &Context) -> Option<Perturbed> {
        let text = self.by_tool.get(&tool.name)?;
        with_description(tool, text.clone(), format!("\"{}\"", ellipsis(text, 70)))
    }
}

// ---- text helpers -------------------------------------------------------------------------------

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Byte offset of the first whole-word, case-insensitive occurrence of `phrase` in `lower` (which
/// must already be ASCII-lowercased). With `plural`, "file" also matches "files".
fn find_phrase(lower: &str, phrase: &str, plural: bool) -> Option<usize> {
    matches(lower, phrase, plural).first().map(|m| m.0)
}

/// (start, end) of every whole-word match.
fn matches(lower: &str, phrase: &str, plural: bool) -> Vec<(usize, usize)> {
    let bytes = lower.as_bytes();
    let mut out = Vec::new();
    if phrase.is_empty() {
        return out;
    }
    let mut from = 0;
    while let Some(off) = lower[from..].find(phrase) {
        let start = from + off;
        let mut end = start + phrase.len();
        let before_ok = start == 0 || !is_word_byte(bytes[start - 1]);
        if plural
            && bytes.get(end) == Some(&b's')
            && bytes.get(end + 1).is_none_or(|b| !is_word_byte(*b))
        {
            end += 1;
        }
        let after_ok = bytes.get(end).is_none_or(|b| !is_word_byte(*b));
        if before_ok && after_ok {
            out.push((start, end));
            from = end;
        } else {
            from = start + 1;
        }
        while !lower.is_char_boundary(from) {
            from += 1;
        }
    }
    out
}

/// Replace every whole-word occurrence of `phrase` (case-insensitive) by `with`, keeping a capital
/// first letter and, with `plural`, a plural "s". Removing a capitalised word ("Please read")
/// capitalises the word that now starts the sentence. Returns the text and the count.
pub fn replace_phrase(text: &str, phrase: &str, with: &str, plural: bool) -> (String, usize) {
    let lower = text.to_ascii_lowercase();
    let found = matches(&lower, &phrase.to_ascii_lowercase(), plural);
    if found.is_empty() {
        return (text.to_string(), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut cap_next = false;
    let push = |out: &mut String, segment: &str, cap_next: &mut bool| {
        if !*cap_next {
            out.push_str(segment);
            return;
        }
        match segment.find(|c: char| !c.is_whitespace()) {
            Some(i) => {
                out.push_str(&segment[..i]);
                out.push_str(&capitalise(&segment[i..]));
                *cap_next = false;
            }
            None => out.push_str(segment),
        }
    };
    for &(start, end) in &found {
        push(&mut out, &text[last..start], &mut cap_next);
        let original = &text[start..end];
        let mut rep = with.to_string();
        if plural && end - start == phrase.len() + 1 && !rep.is_empty() {
            rep.push('s');
        }
        let upper = original.starts_with(|c: char| c.is_ascii_uppercase()) || cap_next;
        if rep.is_empty() {
            cap_next = upper;
        } else {
            push(&mut out, &rep, &mut { upper });
            cap_next = false;
        }
        last = end;
    }
    push(&mut out, &text[last..], &mut cap_next);
    (out, found.len())
}

/// Collapse horizontal whitespace, trim lines, and fix spaces before punctuation left by removals.
pub fn tidy(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut s = l.split_whitespace().collect::<Vec<_>>().join(" ");
            for p in [",", ".", ";", ":", ")", "!", "?"] {
                s = s.replace(&format!(" {p}"), p);
            }
            s = s.replace("( ", "(").replace(",,", ",");
            s
        })
        .collect();
    let mut joined = String::new();
    let mut blank = 0;
    for l in lines {
        if l.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        if !joined.is_empty() {
            joined.push('\n');
        }
        joined.push_str(&l);
    }
    joined.trim().to_string()
}

/// `name` with the token `from` replaced by `to`, separators and case style kept.
pub fn rename_token(name: &str, from: &str, to: &str) -> Option<String> {
    let mut out = String::new();
    let mut i = 0;
    let mut changed = false;
    let chars: Vec<char> = name.chars().collect();
    while i < chars.len() {
        // A token starts at a non-separator after a separator, or at an upper-case letter after a
        // lower-case one.
        let c = chars[i];
        if !c.is_alphanumeric() {
            out.push(c);
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < chars.len()
            && chars[j].is_alphanumeric()
            && !(chars[j].is_uppercase() && chars[j - 1].is_lowercase())
        {
            j += 1;
        }
        let tok: String = chars[i..j].iter().collect();
        if !changed && tok.to_lowercase() == from {
            changed = true;
            if tok.starts_with(|c: char| c.is_uppercase()) {
                out.push_str(&capitalise(to));
            } else {
                out.push_str(to);
            }
        } else {
            out.push_str(&tok);
        }
        i = j;
    }
    changed.then_some(out)
}

fn quoted(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, desc: &str) -> Tool {
        Tool::from_value(
            &json!({"name": name, "description": desc,
                    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}),
            "t",
            "",
        )
        .unwrap()
    }

    fn set(tools: &[Tool]) -> ToolSet {
        ToolSet::from(tools.to_vec())
    }

    #[test]
    fn terser_drops_filler_and_recapitalises() {
        let (t, dropped) = terser(
            "Please read the   complete file in order to see it,  so that you can edit it .",
        );
        assert_eq!(t, "Read the file to see it, to edit it.");
        assert_eq!(
            dropped,
            ["so that you can", "in order to", "please", "complete"]
        );
        // Words that merely contain filler are kept; nothing to cut means unchanged.
        assert_eq!(
            terser("Justify the veryfine text.").0,
            "Justify the veryfine text."
        );
        assert_eq!(terser("List files. ").0, "List files.");
    }

    #[test]
    fn terser_applies_or_not() {
        let ctx_set = set(&[]);
        let ctx = Context { tools: &ctx_set };
        let p = Terser
            .apply(&tool("get_file_info", "Retrieve detailed metadata."), &ctx)
            .unwrap();
        assert_eq!(p.tool.description.as_deref(), Some("Retrieve metadata."));
        assert_eq!(p.detail, "dropped \"detailed\"");
        assert!(Terser.apply(&tool("x", "List files."), &ctx).is_none());
    }

    #[test]
    fn jargon_swaps_two_phrases_everywhere_keeping_case_and_plural() {
        let table: Vec<(String, String)> = JARGON
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let (t, swapped) = jargonier(
            "Read the contents of a file. Files in a directory are listed; read_file is old.",
            &table,
        );
        // "read" and "contents" appear first; "file" and "directory" are left alone (limit 2),
        // and `read_file` is one word, never split.
        assert_eq!(
            t,
            "Hydrate the payload of a file. Files in a directory are listed; read_file is old."
        );
        assert_eq!(swapped.len(), 2);
        let custom = vec![("file".to_string(), "artifact".to_string())];
        assert_eq!(
            jargonier("Files and a file.", &custom).0,
            "Artifacts and a artifact."
        );
        assert!(jargonier("Nothing here.", &custom).1.is_empty());
    }

    #[test]
    fn reorder_moves_the_leading_verb() {
        assert_eq!(
            reorder("Schedule a new appointment for a patient. Use it for new visits.").as_deref(),
            Some(
                "For matters relating to a new appointment for a patient, schedule. Use it for new visits."
            )
        );
        assert_eq!(
            reorder("Recursively search for files matching a pattern.").as_deref(),
            Some("For matters relating to files matching a pattern, search recursively.")
        );
        assert_eq!(
            reorder("Move or rename files and directories.").as_deref(),
            Some("For matters relating to files and directories, move or rename.")
        );
        assert_eq!(reorder("The list of roots."), None);
        assert_eq!(reorder("Read it."), None);
        assert_eq!(reorder(""), None);
    }

    #[test]
    fn inverted_polarity_prefers_a_siblings_verb_and_never_clashes_names() {
        let read = tool("read_text_file", "Read a file as text. Reads any encoding.");
        let write = tool("write_file", "Write a file.");
        let all = set(&[read.clone(), write.clone()]);
        let ctx = Context { tools: &all };
        let p = InvertedPolarity.apply(&read, &ctx).unwrap();
        assert_eq!(p.tool.name, "write_text_file");
        assert_eq!(
            p.tool.description.as_deref(),
            Some("Write a file as text. Writes any encoding.")
        );
        assert_eq!(p.detail, "\"read\" → \"write\"; renamed `write_text_file`");
        // schedule has two opposites; reschedule is chosen because a sibling uses it, and the
        // name is kept because `reschedule_appointment` already exists.
        let sched = tool("schedule_appointment", "Schedule a new appointment.");
        let resched = tool("reschedule_appointment", "Move an appointment.");
        let cal = set(&[sched.clone(), resched]);
        let p = InvertedPolarity
            .apply(&sched, &Context { tools: &cal })
            .unwrap();
        assert_eq!(p.tool.name, "schedule_appointment");
        assert_eq!(
            p.tool.description.as_deref(),
            Some("Reschedule a new appointment.")
        );
        assert!(
            p.detail
                .contains("name kept (`reschedule_appointment` exists)")
        );
        // No verb from the table: does not apply.
        assert!(
            InvertedPolarity
                .apply(&tool("list_directory", "List a directory."), &ctx)
                .is_none()
        );
        // A fallback swap says no sibling uses it.
        let p = InvertedPolarity
            .apply(&tool("create_directory", "Create a directory."), &ctx)
            .unwrap();
        assert_eq!(p.tool.name, "delete_directory");
        assert!(p.detail.contains("no sibling uses it"));
    }

    #[test]
    fn optional_param_goes_into_description_and_schema_but_not_required() {
        let set0 = set(&[]);
        let ctx = Context { tools: &set0 };
        let p = AddedOptionalParam
            .apply(&tool("read", "Read a file"), &ctx)
            .unwrap();
        assert_eq!(
            p.tool.description.as_deref(),
            Some("Read a file. Optionally pass `request_tag` to label the request in logs.")
        );
        assert_eq!(
            p.tool.input_schema["properties"]["request_tag"]["type"],
            "string"
        );
        assert_eq!(p.tool.input_schema["required"], json!(["path"]));
        // A tool that already has the field gets the next name; a schema-less tool gets properties.
        let bare = Tool::from_value(&json!({"name": "ping"}), "t", "").unwrap();
        let p = AddedOptionalParam.apply(&bare, &ctx).unwrap();
        assert_eq!(
            p.tool.description.as_deref(),
            Some("Optionally pass `request_tag` to label the request in logs.")
        );
        assert!(p.tool.input_schema["properties"]["request_tag"].is_object());
    }

    #[test]
    fn name_tokens_and_renames_keep_style() {
        assert_eq!(name_tokens("readTextFile"), ["read", "text", "file"]);
        assert_eq!(name_tokens("read-text_file"), ["read", "text", "file"]);
        assert_eq!(
            rename_token("readTextFile", "read", "write").as_deref(),
            Some("writeTextFile")
        );
        assert_eq!(
            rename_token("ReadFile", "read", "write").as_deref(),
            Some("WriteFile")
        );
        assert_eq!(
            rename_token("get-file", "get", "set").as_deref(),
            Some("set-file")
        );
        assert_eq!(rename_token("reader", "read", "write"), None);
    }

    #[test]
    fn builtin_ids_match_the_table() {
        let ids: Vec<String> = builtin(None).iter().map(|p| p.id().to_string()).collect();
        assert_eq!(ids, BUILTIN_IDS);
    }

    #[test]
    fn paraphrase_replaces_only_its_tools() {
        let p = Paraphrase {
            id: "paraphrase-1".into(),
            model: "m".into(),
            by_tool: [("a".to_string(), "New text.".to_string())].into(),
        };
        let s = set(&[]);
        let ctx = Context { tools: &s };
        assert_eq!(
            p.apply(&tool("a", "Old."), &ctx)
                .unwrap()
                .tool
                .description
                .as_deref(),
            Some("New text.")
        );
        assert!(p.apply(&tool("b", "Old."), &ctx).is_none());
        assert!(p.apply(&tool("a", "New text."), &ctx).is_none());
    }
}
