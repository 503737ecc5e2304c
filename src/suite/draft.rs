//! `driftgate suite init`: draft a routing suite from a tools file, for a human to review and then
//! freeze.
//!
//! With `--llm`, the configured model writes K prompts per tool and prompts that need no tool
//! (`prompts/suite-init.v2.md`), each with the arguments it states: those the target tool
//! declares and its schema accepts become the case's `args`, noted for review. Offline (the default) the prompts are templated from each
//! description — its leading action, its parameters, its nearest sibling's vocabulary — and the
//! semantic router picks the candidates that reach their tool, so the command always works. Either
//! way every drafted case is routed once by the semantic router and the ones it sends elsewhere
//! carry a `note`, so the reviewer looks at those first.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::canon::hash_str;
use crate::console::Console;
use crate::embed::{Embedder, cosine};
use crate::error::{Error, Result};
use crate::llm::json::{JsonLlm, JsonTask};
use crate::llm::{Answer, Message, Sampling, ToolChoice};
use crate::route::{RouteRequest, Router};
use crate::text::terms::{Idf, text_terms};
use crate::text::tokens::{ellipsis, name_tokens, split_first_sentence};
use crate::text::verbs::NOT_VERBS;
use crate::text::words::{capitalise, singular};
use crate::tools::{Tool, ToolSet};

pub const PROMPT: &str = include_str!("../../prompts/suite-init.v3.md");
pub const PROMPT_FILE: &str = "prompts/suite-init.v3.md";

/// One drafted case.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// `None`: no tool should be called.
    pub expect: Option<String>,
    pub prompt: String,
    /// How it was drafted: "template", "sibling", "llm", "none".
    pub kind: &'static str,
    pub note: Option<String>,
    /// Expected arguments the model stated with the prompt (literals), for review.
    pub args: Option<Value>,
    /// Earlier turns before the prompt (imported conversations); empty for drafted prompts.
    pub history: Vec<Message>,
    /// Written as `review: true`: the expectation is a proposal nobody has confirmed.
    pub review: bool,
}

impl Draft {
    /// Stable id: the expected tool (or "none") and the first 6 hex digits of the prompt's
    /// sha256 (after its history's turns, when it has any), so re-drafting gives a prompt the
    /// same id and deleting cases renumbers nothing.
    pub fn id(&self) -> String {
        let mut asked: String = self
            .history
            .iter()
            .map(|m| format!("{}: {}\n", m.role, m.content))
            .collect();
        asked.push_str(&self.prompt);
        let h = hash_str(&asked);
        let hex = h.trim_start_matches("sha256:");
        format!("{}-{}", self.expect.as_deref().unwrap_or("none"), &hex[..6])
    }
}

// ---- templates (pure) ---------------------------------------------------------------------------

/// Words that should not end a shortened phrase.
const DANGLING: &[&str] = &[
    "a", "an", "the", "of", "to", "for", "from", "with", "in", "on", "as", "and", "or", "by", "at",
];
const MAX_ACTION_WORDS: usize = 12;

/// "Returns" → "return", "Searches" → "search", "Retrieves" → "retrieve".
fn base_verb(w: &str) -> String {
    let l = w.to_ascii_lowercase();
    for suffix in ["ches", "shes", "sses", "xes"] {
        if l.ends_with(suffix) {
            return l[..l.len() - 2].to_string();
        }
    }
    if let Some(stem) = l.strip_suffix("ies") {
        return format!("{stem}y");
    }
    if l.ends_with('s') && !l.ends_with("ss") && l.len() > 3 {
        return l[..l.len() - 1].to_string();
    }
    l
}

/// The leading action of a description, imperative and lower-case: "Read the complete contents
/// of a file from the file system as text." → "read the complete contents of a file from the
/// file system". Falls back to the name's words ("list allowed directories").
pub fn action_phrase(tool: &Tool) -> String {
    let (first, _) = split_first_sentence(tool.description_text());
    let body = first.trim().trim_end_matches(['.', ':', ';', '!']);
    let words: Vec<&str> = body.split_whitespace().collect();
    let usable = words.first().is_some_and(|w| {
        w.chars().all(|c| c.is_ascii_alphabetic())
            && w.starts_with(|c: char| c.is_ascii_uppercase())
            && !NOT_VERBS.contains(&w.to_ascii_lowercase().as_str())
    }) && words.len() >= 2;
    if !usable {
        return name_tokens(&tool.name).join(" ");
    }
    let mut out: Vec<String> = vec![base_verb(words[0])];
    out.extend(words[1..].iter().map(|w| w.to_string()));
    shorten(&out, MAX_ACTION_WORDS)
}

/// Words a long phrase is cut before: what follows them is a qualifier, what precedes them reads
/// as a whole ("create a new file … | with new content").
const CUT_BEFORE: &[&str] = &[
    "of",
    "to",
    "for",
    "from",
    "with",
    "in",
    "on",
    "as",
    "by",
    "at",
    "into",
    "that",
    "which",
    "including",
    "and",
    "or",
];

/// At most `max` words, cut before the last qualifier that leaves at least 3 words, else at
/// `max` without a dangling article or preposition.
fn shorten(words: &[String], max: usize) -> String {
    let lower = |w: &str| w.to_ascii_lowercase();
    let mut w: Vec<&str> = if words.len() <= max {
        words.iter().map(String::as_str).collect()
    } else if let Some(cut) = (3..=max)
        .rev()
        .find(|&i| CUT_BEFORE.contains(&lower(&words[i]).as_str()))
    {
        words[..cut].iter().map(String::as_str).collect()
    } else {
        words[..max].iter().map(String::as_str).collect()
    };
    while w.len() > 2
        && w.last()
            .is_some_and(|x| DANGLING.contains(&lower(x).as_str()))
    {
        w.pop();
    }
    w.join(" ").trim_end_matches([',', ';']).to_string()
}

/// A plausible value for a parameter, from its name, enum or type; `None` when nothing fits.
pub fn example_value(name: &str, schema: &Value) -> Option<String> {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    {
        return Some(match first {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    let n = name.to_ascii_lowercase();
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let by_name = [
        (&["paths", "files"][..], "notes/a.txt and notes/b.txt"),
        (&["source", "src", "from"], "drafts/plan.md"),
        (&["destination", "dest", "target", "to"], "archive/plan.md"),
        (
            &["path", "file", "filename", "filepath", "dir", "directory"],
            "notes/todo.txt",
        ),
        (&["pattern", "glob"], "*.log"),
        (&["query", "q", "search", "keyword"], "quarterly report"),
        (&["url", "uri", "link"], "https://example.com/docs"),
        (&["content", "text", "body", "message"], "\"hello world\""),
        (&["email"], "sam@example.com"),
        (&["reason", "note", "comment"], "a follow-up"),
    ];
    for (keys, v) in by_name {
        if keys.contains(&n.as_str()) {
            return Some(v.to_string());
        }
    }
    // A repository's path is a directory, not a file ("repo_path" in mcp-server-git).
    if n.contains("repo") && n.contains("path") {
        return Some("~/src/shop-api".into());
    }
    if n.contains("path") {
        return Some(if ty == "array" {
            "notes/a.txt and notes/b.txt".into()
        } else {
            "notes/todo.txt".into()
        });
    }
    if n == "id" || n.ends_with("_id") || (n.ends_with("id") && n.len() > 2 && ty == "string") {
        // "patient_id" → "patient-1029": distinct per parameter, readable in a prompt.
        let stem = n.trim_end_matches("id").trim_end_matches(['_', '-']);
        return Some(if stem.is_empty() {
            "A-1029".into()
        } else {
            format!("{stem}-1029")
        });
    }
    if n.contains("date") || n.contains("time") {
        return Some("next Tuesday at 10am".into());
    }
    match ty {
        "integer" | "number" => Some("3".into()),
        _ => None,
    }
}

/// Required parameters with an example value, in schema order. A path of a tool about
/// directories gets a directory.
fn required_examples(tool: &Tool) -> Vec<(String, String)> {
    let about_dirs = name_tokens(&tool.name).iter().any(|t| {
        matches!(
            t.as_str(),
            "dir" | "dirs" | "directory" | "directories" | "folder" | "tree"
        )
    });
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    required
        .iter()
        .filter_map(|r| {
            let schema = props
                .and_then(|p| p.get(*r))
                .cloned()
                .unwrap_or(Value::Null);
            example_value(r, &schema).map(|v| {
                let v = if about_dirs && v == "notes/todo.txt" {
                    "projects/notes".to_string()
                } else {
                    v
                };
                (r.to_string(), v)
            })
        })
        .collect()
}

/// "… when you need to examine the contents of a single file." → "examine the contents of a
/// single file".
fn need_clause(desc: &str) -> Option<String> {
    let lower = desc.to_ascii_lowercase();
    for marker in ["when you need to ", "when you want to ", "use this to "] {
        if let Some(at) = lower.find(marker) {
            let rest = &desc[at + marker.len()..];
            let clause = rest
                .split(['.', ';', '\n'])
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            let words: Vec<String> = clause.split_whitespace().map(String::from).collect();
            if words.len() >= 2 {
                return Some(shorten(&words, MAX_ACTION_WORDS));
            }
        }
    }
    None
}

/// Candidate prompts for `tool`, most natural first, each with its kind. `sibling` is the tool
/// whose vocabulary one prompt borrows (its nearest neighbour in meaning).
pub fn templates(tool: &Tool, sibling: Option<&Tool>) -> Vec<(String, &'static str)> {
    let action = action_phrase(tool);
    let verb = action.split_whitespace().next().unwrap_or("").to_string();
    let examples = required_examples(tool);
    let mut out = Vec::new();
    if let Some((_, first)) = examples.first() {
        let mut p = format!("Please {verb} {first}");
        for (name, v) in &examples[1..] {
            p.push_str(&format!(", {name}: {v}"));
        }
        out.push((format!("{p}."), "template"));
    }
    // A request in the name's words with the values it needs: what a user asks for, not what
    // the description says (a suite worded like the descriptions rewards the base wording).
    let name_words = name_tokens(&tool.name).join(" ");
    let values: Vec<&str> = examples.iter().map(|(_, v)| v.as_str()).collect();
    out.push((
        match values.as_slice() {
            [] => format!("Could you {name_words} for me?"),
            vs => format!("Could you {name_words} {} for me?", vs.join(", ")),
        },
        "intent",
    ));
    out.push((format!("Can you {action}?"), "template"));
    if let Some(clause) = need_clause(tool.description_text()) {
        out.push((format!("Help me {clause}."), "template"));
    }
    out.push((format!("{}.", capitalise(&action)), "template"));
    // The name's words: what tells apart siblings whose descriptions open alike.
    let name = capitalise(&name_tokens(&tool.name).join(" "));
    match examples.first() {
        Some((_, first)) => out.push((format!("{name}: {first}"), "template")),
        None => out.push((format!("{name}, please."), "template")),
    }
    if let Some(s) = sibling {
        // The sibling's vocabulary (its name's words), then what this tool does in its own.
        let theirs = name_tokens(&s.name).join(" ");
        let mine = match values.as_slice() {
            [] => name_words.clone(),
            vs => format!("{name_words} {}", vs.join(", ")),
        };
        out.push((
            format!("I don't want to {theirs}; I want to {mine}."),
            "sibling",
        ));
    }
    out
}

const GENERIC_NONE: &[&str] = &[
    "Tell me a joke about programmers.",
    "What's the capital of Australia?",
    "Translate 'thank you very much' into German.",
    "Write a haiku about autumn rain.",
    "What is 17 times 23?",
    "Thanks, that's all for now!",
];

/// Prompts no tool should take: a question about the server's own subject that needs no lookup,
/// then general chit-chat.
pub fn none_templates(tools: &ToolSet, n: usize) -> Vec<String> {
    let verbs: Vec<String> = tools
        .tools
        .iter()
        .filter_map(|t| name_tokens(&t.name).first().cloned())
        .collect();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for t in &tools.tools {
        for tok in name_tokens(&t.name).into_iter().skip(1) {
            if tok.len() > 2 && !verbs.contains(&tok) {
                *counts.entry(singular(&tok)).or_insert(0) += 1;
            }
        }
    }
    let topic = counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .map(|(t, _)| t);
    let mut out = Vec::new();
    if let Some(t) = topic {
        let article = if t.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        out.push(format!(
            "In general terms, what is {article} {t}? No need to look anything up."
        ));
    }
    out.extend(GENERIC_NONE.iter().map(|s| s.to_string()));
    out.truncate(n);
    out
}

// ---- routing check ------------------------------------------------------------------------------

/// What the semantic router does with `prompt` given all `tools`: the called name or `None`.
async fn route_once(router: &dyn Router, tools: &ToolSet, prompt: &str) -> Result<Option<String>> {
    let req = RouteRequest {
        system: String::new(),
        messages: vec![Message {
            role: "user".into(),
            content: prompt.into(),
        }],
        tools: tools.tools.clone(),
        shared_tools: 0,
        tool_choice: ToolChoice::Auto,
        sampling: Sampling::default(),
        repeat: 0,
    };
    match router.route(&req).await {
        Ok(r) => Ok(match r.answer {
            Answer::Call { name, .. } => Some(name),
            _ => None,
        }),
        Err(e) => Err(Error::Incomplete(format!("semantic routing failed: {e}"))),
    }
}

fn disagreement(expect: Option<&str>, got: Option<&str>) -> Option<String> {
    if expect == got {
        return None;
    }
    Some(match got {
        Some(g) => format!("semantic router calls {g}: check the expectation or rephrase"),
        None => "semantic router calls no tool: check the expectation or rephrase".into(),
    })
}

/// Each tool's nearest other tool by the cosine of their routing texts.
async fn nearest_siblings(embedder: &dyn Embedder, tools: &ToolSet) -> Result<Vec<Option<usize>>> {
    if tools.len() < 2 {
        return Ok(vec![None; tools.len()]);
    }
    let texts: Vec<String> = tools.tools.iter().map(Tool::routing_text).collect();
    let m = embedder.embed(&texts).await?;
    Ok((0..tools.len())
        .map(|i| {
            (0..tools.len())
                .filter(|&j| j != i)
                .max_by(|&a, &b| cosine(m.row(i), m.row(a)).total_cmp(&cosine(m.row(i), m.row(b))))
        })
        .collect())
}

/// Offline draft: templates, ranked by whether the semantic router reaches the tool with them.
/// Keeps the sibling-vocabulary prompt when `k >= 2`.
pub async fn draft_offline(
    tools: &ToolSet,
    router: &dyn Router,
    embedder: &dyn Embedder,
    k: usize,
    n_none: usize,
) -> Result<Vec<Draft>> {
    let siblings = nearest_siblings(embedder, tools).await?;
    let candidates: Vec<Vec<(String, &'static str)>> = tools
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| templates(t, siblings[i].map(|j| &tools.tools[j])))
        .collect();
    // A prompt drafted for two tools (siblings with the same opening sentence) cannot tell them
    // apart: drop it from both rather than write a contradictory suite.
    let mut owners: BTreeMap<String, usize> = BTreeMap::new();
    for list in &candidates {
        let unique: std::collections::BTreeSet<String> =
            list.iter().map(|(p, _)| p.to_lowercase()).collect();
        for p in unique {
            *owners.entry(p).or_insert(0) += 1;
        }
    }
    let mut out = Vec::new();
    for (tool, list) in tools.tools.iter().zip(candidates) {
        let mut scored = Vec::new();
        let list = list
            .into_iter()
            .filter(|(p, _)| owners.get(&p.to_lowercase()) == Some(&1));
        for (order, (prompt, kind)) in list.enumerate() {
            let got = route_once(router, tools, &prompt).await?;
            let right = got.as_deref() == Some(tool.name.as_str());
            scored.push((order, prompt, kind, got, right));
        }
        let mut chosen: Vec<usize> = Vec::new();
        if k >= 2
            && let Some(s) = scored.iter().position(|c| c.2 == "sibling")
        {
            chosen.push(s);
        }
        let mut rest: Vec<usize> = (0..scored.len()).filter(|i| !chosen.contains(i)).collect();
        // Routed right first, then the prompts that do not restate the description.
        let echoes = |p: &str| {
            crate::suite::check::overlap(p, tool.description_text())
                .is_some_and(|o| o >= crate::suite::check::ECHO_OVERLAP)
        };
        rest.sort_by_key(|&i| (!scored[i].4, echoes(&scored[i].1), scored[i].0));
        chosen.extend(rest.into_iter().take(k.saturating_sub(chosen.len())));
        chosen.sort_unstable();
        for c in chosen {
            let (_, prompt, kind, got, _) = &scored[c];
            out.push(Draft {
                expect: Some(tool.name.clone()),
                prompt: prompt.clone(),
                kind,
                note: disagreement(Some(&tool.name), got.as_deref()),
                args: None,
                history: Vec::new(),
                review: false,
            });
        }
    }
    for prompt in none_templates(tools, n_none) {
        let got = route_once(router, tools, &prompt).await?;
        out.push(Draft {
            expect: None,
            note: disagreement(None, got.as_deref()),
            prompt,
            kind: "none",
            args: None,
            history: Vec::new(),
            review: false,
        });
    }
    Ok(out)
}

/// The user message of one drafting request: the whole tool list, the target (`null` for
/// prompts that need no tool) and how many.
pub fn llm_user_message(tools: &ToolSet, target: Option<&str>, k: usize) -> String {
    let list: Vec<Value> = tools
        .tools
        .iter()
        .map(|t| {
            let params: Vec<&String> = t
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().collect())
                .unwrap_or_default();
            json!({"name": t.name, "description": t.description_text(), "parameters": params})
        })
        .collect();
    let avoid = target
        .and_then(|n| tools.get(n))
        .map(|t| distinctive_words(t, tools, AVOID_WORDS))
        .unwrap_or_default();
    serde_json::to_string_pretty(
        &json!({"tools": list, "route_to": target, "count": k, "avoid_words": avoid}),
    )
    .expect("json")
}

/// How many of the target description's words the drafting model is asked not to use.
const AVOID_WORDS: usize = 8;

/// The `n` words of `tool`'s description that are rarest among the server's descriptions (ties
/// by first use): what a prompt copied from the description would share with it, and what a
/// user who never read it would not say.
pub fn distinctive_words(tool: &Tool, tools: &ToolSet, n: usize) -> Vec<String> {
    let docs: Vec<Vec<String>> = tools
        .tools
        .iter()
        .map(|t| text_terms(t.description_text()))
        .collect();
    let weight = Idf::of(&docs);
    let mut words: Vec<String> = Vec::new();
    for w in text_terms(tool.description_text()) {
        if !words.contains(&w) {
            words.push(w);
        }
    }
    // A stable sort keeps first use among equal weights.
    let w = |t: &String| weight.get(t).unwrap_or(0.0);
    words.sort_by(|a, b| w(b).total_cmp(&w(a)));
    words.truncate(n);
    words
}

/// Consecutive words shared with a description that make a prompt a copy of it.
const COPY_RUN: usize = 6;

/// Why `p` is not a prompt a user would type, if it is not: fewer than three words, naming a tool
/// by its identifier, or copying a description (small models answer "move_file", list the tool
/// names, or paste the description back).
pub fn unusable(p: &str, tools: &ToolSet) -> Option<String> {
    if p.split_whitespace().count() < 3 {
        return Some(format!("{p:?} is not a sentence a user would type"));
    }
    let lower = p.to_lowercase();
    if let Some(t) = tools.tools.iter().find(|t| {
        let n = t.name.to_lowercase();
        n.len() > 3 && name_tokens(&t.name).len() > 1 && lower.contains(&n)
    }) {
        return Some(format!(
            "names the tool `{}`; users describe what they want instead",
            t.name
        ));
    }
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let mine = words(p);
    let copied = tools.tools.iter().find(|t| {
        let theirs = words(t.description_text());
        mine.windows(COPY_RUN)
            .any(|run| theirs.windows(COPY_RUN).any(|w| w == run))
    });
    copied.map(|t| format!("copies the description of `{}`", t.name))
}

/// The answer's shape: `n` objects, each a prompt and the arguments it states (every property
/// required and no other allowed, so it is a valid strict structured-output schema).
pub fn prompts_schema(n: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "prompts": {
                "type": "array",
                "minItems": n,
                "maxItems": n,
                "items": {
                    "type": "object",
                    "properties": {
                        "prompt": {"type": "string", "minLength": 1, "maxLength": 300},
                        "args": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "param": {"type": "string", "minLength": 1},
                                    "value": {"type": ["string", "number", "boolean"]}
                                },
                                "required": ["param", "value"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "required": ["prompt", "args"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["prompts"],
        "additionalProperties": false
    })
}

/// The prompts of an answer with their stated arguments (trimmed; a bare string is a prompt
/// with none).
pub fn drafted(v: &Value) -> Vec<(String, Vec<(String, Value)>)> {
    v["prompts"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| match x {
                    Value::String(p) => Some((p.trim().to_string(), Vec::new())),
                    Value::Object(o) => {
                        let p = o.get("prompt")?.as_str()?.trim().to_string();
                        let args = o
                            .get("args")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .filter_map(|kv| {
                                        Some((
                                            kv["param"].as_str()?.to_string(),
                                            kv.get("value")?.clone(),
                                        ))
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        Some((p, args))
                    }
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The stated arguments the target declares and its schema accepts, as a case's `args`; `None`
/// when none is left. A model may invent a name or a value the tool refuses: those are dropped,
/// never written into the suite.
pub fn drafted_args(tool: &Tool, stated: &[(String, Value)]) -> Option<Value> {
    let kept: serde_json::Map<String, Value> = stated
        .iter()
        .filter(|(_, v)| !v.is_object() && !v.is_array())
        .filter(|(k, v)| {
            let one = crate::suite::expect::ArgExpect(BTreeMap::from([(
                k.clone(),
                crate::suite::expect::Matcher::Literal(v.clone()),
            )]));
            crate::suite::args_problems(&one, tool).is_empty()
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (!kept.is_empty()).then_some(Value::Object(kept))
}

/// Accept an answer with at least one usable prompt (the rest are dropped and asked for again):
/// demanding a perfect list from a small model only burns attempts.
pub fn check_prompts(v: &Value, tools: &ToolSet) -> std::result::Result<(), String> {
    let items: Vec<String> = drafted(v).into_iter().map(|(p, _)| p).collect();
    let problems: Vec<String> = items
        .iter()
        .enumerate()
        .filter_map(|(i, p)| unusable(p, tools).map(|why| format!("/prompts/{i}: {why}")))
        .collect();
    if !items.is_empty() && problems.len() == items.len() {
        return Err(problems.join("; "));
    }
    Ok(())
}

/// Rounds of asking for the prompts still missing for one target.
const DRAFT_ROUNDS: usize = 3;

/// LLM draft: K prompts per tool and `n_none` for no tool, each checked by the semantic router.
/// Unusable or repeated prompts are dropped and the missing ones asked for again; what the model
/// still has not supplied after `DRAFT_ROUNDS` (a small model may never manage "no tool"
/// prompts) is filled from the offline templates, with a note, so the command always finishes.
/// An endpoint that fails is an error.
pub async fn draft_llm(
    llm: &JsonLlm,
    tools: &ToolSet,
    router: &dyn Router,
    k: usize,
    n_none: usize,
    console: &dyn Console,
) -> Result<Vec<Draft>> {
    let mut out: Vec<Draft> = Vec::new();
    let targets: Vec<(Option<&Tool>, usize)> = tools
        .tools
        .iter()
        .map(|t| (Some(t), k))
        .chain(std::iter::once((None, n_none)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let fresh = |out: &[Draft], p: &str| {
        !out.iter()
            .any(|d| d.prompt.to_lowercase() == p.to_lowercase())
    };
    for (target, n) in targets {
        let name = target.map(|t| t.name.as_str());
        let mut got = 0;
        for round in 0..DRAFT_ROUNDS {
            let need = n - got;
            if need == 0 {
                break;
            }
            let mut user = llm_user_message(tools, name, need);
            // The round is part of the question so a repeated ask is not answered from the cache.
            if round > 0 {
                user.push_str(&format!(
                    "\n\nRound {}: write new ones, different from any you wrote before.",
                    round + 1
                ));
            }
            let task = JsonTask {
                name: "prompts",
                system: PROMPT,
                user,
                schema: prompts_schema(need),
            };
            let Ok(v) = llm.try_complete(&task, |v| check_prompts(v, tools)).await? else {
                continue;
            };
            for (prompt, stated) in drafted(&v) {
                if got == n || unusable(&prompt, tools).is_some() || !fresh(&out, &prompt) {
                    continue;
                }
                let routed = route_once(router, tools, &prompt).await?;
                let args = target.and_then(|t| drafted_args(t, &stated));
                let mut note = disagreement(name, routed.as_deref());
                if args.is_some() {
                    let review = "args drafted by the model: check each value against the prompt";
                    note = Some(match note {
                        Some(n) => format!("{n}; {review}"),
                        None => review.to_string(),
                    });
                }
                out.push(Draft {
                    expect: name.map(String::from),
                    note,
                    prompt,
                    kind: if name.is_some() { "llm" } else { "none" },
                    args,
                    history: Vec::new(),
                    review: false,
                });
                got += 1;
            }
        }
        let what = name.unwrap_or("no tool");
        let from_model = got;
        if got < n {
            let templated: Vec<(String, &'static str)> = match target {
                Some(t) => templates(t, None),
                None => none_templates(tools, GENERIC_NONE.len() + 1)
                    .into_iter()
                    .map(|p| (p, "none"))
                    .collect(),
            };
            let mut filled = 0;
            for (prompt, kind) in templated {
                if got == n || !fresh(&out, &prompt) {
                    continue;
                }
                let routed = route_once(router, tools, &prompt).await?;
                let why = disagreement(name, routed.as_deref())
                    .map(|d| format!("; {d}"))
                    .unwrap_or_default();
                out.push(Draft {
                    expect: name.map(String::from),
                    note: Some(format!(
                        "templated: the model drafted no usable prompt{why}"
                    )),
                    prompt,
                    kind,
                    args: None,
                    history: Vec::new(),
                    review: false,
                });
                got += 1;
                filled += 1;
            }
            console.note(&format!(
                "driftgate: warning: the model drafted {from_model} of {n} prompt(s) for {what}; {filled} templated"
            ));
        } else {
            console.note(&format!("driftgate: drafted {n} prompt(s) for {what}"));
        }
    }
    Ok(out)
}

// ---- output -------------------------------------------------------------------------------------

/// JSON string literal: also a valid YAML double-quoted scalar.
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

pub fn header(tools_label: &str, tools: &ToolSet, drafted_by: &str, out_name: &str) -> String {
    let canon = Value::Array(tools.tools.iter().map(Tool::to_value).collect());
    let tools_hash = crate::canon::hash(&canon);
    format!(
        "# driftgate routing suite: DRAFT written by `driftgate suite init`.\n\
         # tools: {} ({} tools, {})\n\
         # drafted by: {drafted_by}\n\
         #\n\
         # Review, then freeze:\n\
         #   1. Read every case. Is `expect` the tool a careful agent should call for that prompt?\n\
         #      Fix it, rephrase, or delete the case, and add the phrasings your users really type.\n\
         #      Cases with a `note` disagree with the semantic router or carry `args` the model\n\
         #      drafted (the arguments a right call must have): look at those first, then delete\n\
         #      the notes.\n\
         #   2. Check it: driftgate suite check --tools {} {out_name}\n\
         #   3. Freeze it: commit it, and from then on never edit it in the same pull request as the\n\
         #      tools. driftgate check measures base and head with the base version of the suite,\n\
         #      so the instrument stays fixed while the tools change.\n",
        ellipsis(tools_label, 100),
        tools.len(),
        &tools_hash[..19],
        ellipsis(tools_label, 100),
    )
}

/// The header of a suite drafted from production logs by `suite import`: where the cases came
/// from (`sources`: a file and how it was read, each shown on one line) and how to review them.
pub fn import_header(sources: &[String], out_name: &str) -> String {
    let mut out = String::from(
        "# driftgate routing suite: DRAFT written by `driftgate suite import` from production traffic.\n",
    );
    for s in sources {
        // A file name is one comment line, whatever characters it has.
        let one_line: String = s
            .chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .collect();
        out.push_str(&format!("# from: {}\n", ellipsis(&one_line, 160)));
    }
    out.push_str(&format!(
        "#\n\
         # Every case is marked `review: true`: its `expect` (and `args`) is what the production model\n\
         # did, which is not always what it should have done. `driftgate check` refuses this suite\n\
         # until no case is marked (or with --allow-unreviewed). Review, then freeze:\n\
         #   1. Read every case: is `expect` the tool a careful agent should call? Fix it, or delete\n\
         #      the case; then delete its `review: true` (the `note` says where it came from).\n\
         #   2. Secrets and personal data were masked by their shape (`[redacted …]`): look for any\n\
         #      that a shape cannot catch (names, addresses) before you commit the file.\n\
         #   3. Check it: driftgate suite check --tools TOOLS {out_name}\n\
         #   4. Freeze it: commit it, and from then on never edit it in the same pull request as the\n\
         #      tools.\n"
    ));
    out
}

fn case_fields(d: &Draft) -> Vec<(&'static str, String)> {
    let mut f = vec![
        ("id", q(&d.id())),
        ("prompt", q(&d.prompt)),
        ("expect", q(d.expect.as_deref().unwrap_or("none"))),
    ];
    if let Some(a) = &d.args {
        // Compact JSON is a YAML flow mapping as well.
        f.push(("args", a.to_string()));
    }
    f.push(("tags", format!("[\"draft\", {}]", q(d.kind))));
    if !d.history.is_empty() {
        let turns: Vec<Value> = d
            .history
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect();
        // Before the prompt, as it was asked; compact JSON is a YAML flow sequence as well.
        f.insert(1, ("history", Value::Array(turns).to_string()));
    }
    if d.review {
        f.push(("review", "true".into()));
    }
    if let Some(n) = &d.note {
        f.push(("note", q(n)));
    }
    f
}

/// The suite as YAML: the header, `version: 1`, one flow mapping per case.
pub fn render_yaml(head: &str, drafts: &[Draft]) -> String {
    let mut out = format!("{head}version: 1\ncases:\n");
    for d in drafts {
        let fields: Vec<String> = case_fields(d)
            .into_iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        out.push_str(&format!("  - {{{}}}\n", fields.join(", ")));
    }
    out
}

/// The suite as JSON lines, the header as `#` comments (which the loader skips).
pub fn render_jsonl(head: &str, drafts: &[Draft]) -> String {
    let mut out = head.to_string();
    for d in drafts {
        let fields: Vec<String> = case_fields(d)
            .into_iter()
            .map(|(k, v)| format!("{}: {v}", q(k)))
            .collect();
        out.push_str(&format!("{{{}}}\n", fields.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn tool(v: Value) -> Tool {
        Tool::from_value(&v, "t", "").unwrap()
    }

    #[test]
    fn action_phrases_are_imperative_and_short() {
        let t = tool(json!({"name": "read_text_file",
            "description": "Read the complete contents of a file from the file system as text. More."}));
        // Cut at 12 words, never on a dangling preposition.
        assert_eq!(
            action_phrase(&t),
            "read the complete contents of a file from the file system"
        );
        let t = tool(json!({"name": "list_allowed_directories",
            "description": "Returns the list of root directories that this server is allowed to access."}));
        assert_eq!(
            action_phrase(&t),
            "return the list of root directories that this server is allowed"
        );
        let t = tool(json!({"name": "search", "description": "Searches the index."}));
        assert_eq!(action_phrase(&t), "search the index");
        // No leading verb: the name's words.
        let t = tool(json!({"name": "list_allowed_directories", "description": "The roots."}));
        assert_eq!(action_phrase(&t), "list allowed directories");
    }

    #[test]
    fn examples_come_from_names_enums_and_types() {
        assert_eq!(
            example_value("path", &json!({"type": "string"})).unwrap(),
            "notes/todo.txt"
        );
        assert_eq!(
            example_value("paths", &json!({"type": "array"})).unwrap(),
            "notes/a.txt and notes/b.txt"
        );
        assert_eq!(
            example_value("sortBy", &json!({"enum": ["name", "size"]})).unwrap(),
            "name"
        );
        assert_eq!(
            example_value("appointment_id", &json!({"type": "string"})).unwrap(),
            "appointment-1029"
        );
        assert_eq!(
            example_value("id", &json!({"type": "string"})).unwrap(),
            "A-1029"
        );
        assert_eq!(
            example_value("count", &json!({"type": "integer"})).unwrap(),
            "3"
        );
        assert_eq!(
            example_value("repo_path", &json!({"type": "string"})).unwrap(),
            "~/src/shop-api"
        );
        assert_eq!(example_value("dryRun", &json!({"type": "boolean"})), None);
    }

    #[test]
    fn templates_use_params_need_clauses_and_a_siblings_words() {
        let read = tool(json!({"name": "read_text_file",
            "description": "Read a file as text. Use this tool when you need to examine one file.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}));
        let many = tool(json!({"name": "read_multiple_files",
            "description": "Read the contents of multiple files simultaneously."}));
        let t = templates(&read, Some(&many));
        let prompts: Vec<&str> = t.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            prompts,
            [
                "Please read notes/todo.txt.",
                "Could you read text file notes/todo.txt for me?",
                "Can you read a file as text?",
                "Help me examine one file.",
                "Read a file as text.",
                "Read text file: notes/todo.txt",
                "I don't want to read multiple files; I want to read text file notes/todo.txt.",
            ]
        );
        assert_eq!(t.last().unwrap().1, "sibling");
    }

    #[test]
    fn the_drafting_model_is_told_the_targets_distinctive_words() {
        let set = ToolSet::from_array(
            &[
                json!({"name": "read_file", "description": "Read the complete contents of a file."}),
                json!({"name": "write_file", "description": "Write a file, overwriting its contents."}),
                json!({"name": "move_file", "description": "Move or rename a file."}),
            ],
            "t",
            "",
        )
        .unwrap();
        let read = set.get("read_file").unwrap();
        // "file" is in every description and "content" in two: rarest first.
        assert_eq!(
            distinctive_words(read, &set, 8),
            ["read", "complete", "content", "file"]
        );
        assert_eq!(distinctive_words(read, &set, 2), ["read", "complete"]);
        let user: Value =
            serde_json::from_str(&llm_user_message(&set, Some("read_file"), 2)).unwrap();
        assert_eq!(
            user["avoid_words"],
            json!(["read", "complete", "content", "file"])
        );
        let none: Value = serde_json::from_str(&llm_user_message(&set, None, 2)).unwrap();
        assert_eq!(none["avoid_words"], json!([]));
    }

    #[test]
    fn none_prompts_start_with_the_servers_topic() {
        let set = ToolSet::from_array(
            &[
                json!({"name": "read_file"}),
                json!({"name": "write_file"}),
                json!({"name": "list_directory"}),
            ],
            "t",
            "",
        )
        .unwrap();
        let n = none_templates(&set, 2);
        assert_eq!(
            n,
            [
                "In general terms, what is a file? No need to look anything up.",
                "Tell me a joke about programmers."
            ]
        );
    }

    #[test]
    fn llm_prompts_must_read_like_user_requests() {
        let set = ToolSet::from_array(
            &[
                json!({"name": "move_file", "description": "Move or rename files and directories. More."}),
                json!({"name": "search"}),
            ],
            "t",
            "",
        )
        .unwrap();
        assert_eq!(unusable("Rename a.md to b.md", &set), None);
        assert_eq!(unusable("Search the docs for TODO", &set), None);
        assert!(
            unusable("move_file", &set)
                .unwrap()
                .contains("not a sentence")
        );
        assert_eq!(
            unusable("Please use Move_File on a.md", &set).unwrap(),
            "names the tool `move_file`; users describe what they want instead"
        );
        assert_eq!(
            unusable("Please: move or rename files and directories now", &set).unwrap(),
            "copies the description of `move_file`"
        );
        assert_eq!(unusable("Move or rename files in docs", &set), None);
        // One usable prompt is enough to keep the answer; none is a re-ask.
        assert!(
            check_prompts(
                &json!({"prompts": ["move_file", "Rename a.md to b.md"]}),
                &set
            )
            .is_ok()
        );
        assert_eq!(
            check_prompts(&json!({"prompts": ["move_file", "ok"]}), &set).unwrap_err(),
            "/prompts/0: \"move_file\" is not a sentence a user would type; /prompts/1: \"ok\" is not a sentence a user would type"
        );
    }

    #[test]
    fn drafted_args_keep_what_the_tool_declares_and_accepts() {
        let t = tool(
            json!({"name": "read", "inputSchema": {"type": "object", "properties": {
            "path": {"type": "string"}, "head": {"type": "integer", "minimum": 1}}}}),
        );
        let answer = json!({"prompts": [
            {"prompt": "Show me the first 5 lines of a.txt", "args": [
                {"param": "path", "value": "a.txt"}, {"param": "head", "value": 5},
                {"param": "file", "value": "a.txt"}, {"param": "head", "value": 0}]},
            "Read b.txt for me"
        ]});
        let d = drafted(&answer);
        assert_eq!(d.len(), 2);
        assert_eq!(d[1], ("Read b.txt for me".to_string(), Vec::new()));
        // The invented `file` and the refused `head: 0` are dropped.
        assert_eq!(
            drafted_args(&t, &d[0].1),
            Some(json!({"path": "a.txt", "head": 5}))
        );
        assert_eq!(drafted_args(&t, &[("file".into(), json!("x"))]), None);
        // The answer schema is a strict structured-output schema that accepts a right answer and
        // refuses one without `args`.
        let schema = prompts_schema(2);
        let ok = json!({"prompts": [{"prompt": "a b c", "args": []}, {"prompt": "d e f", "args": [{"param": "p", "value": 1}]}]});
        let bad = json!({"prompts": [{"prompt": "a b c"}, {"prompt": "d e f", "args": []}]});
        assert!(crate::llm::json::validate(&schema, &ok).is_ok());
        assert_eq!(
            crate::llm::json::validate(&schema, &bad).unwrap_err(),
            "/prompts/0: \"args\" is a required property"
        );
    }

    #[test]
    fn rendered_suites_parse_back_with_stable_ids() {
        let drafts = vec![
            Draft {
                expect: Some("read_file".into()),
                prompt: "Read \"a: b\" # not a comment".into(),
                kind: "template",
                note: Some("semantic router calls x: check".into()),
                args: Some(json!({"path": "a: b.txt", "n": 3, "raw": true})),
                history: Vec::new(),
                review: false,
            },
            Draft {
                expect: None,
                prompt: "Tell me a joke.".into(),
                kind: "none",
                note: None,
                args: None,
                history: Vec::new(),
                review: false,
            },
        ];
        let head = "# header\n";
        for (text, name) in [
            (render_yaml(head, &drafts), "s.yaml"),
            (render_jsonl(head, &drafts), "s.jsonl"),
        ] {
            let s = crate::suite::parse(&text, name, Path::new(".")).unwrap();
            assert_eq!(s.cases.len(), 2, "{text}");
            assert_eq!(s.cases[0].prompt, "Read \"a: b\" # not a comment");
            assert_eq!(s.cases[0].id, drafts[0].id());
            assert_eq!(s.cases[1].expect, crate::suite::Expect::None);
            assert_eq!(s.cases[0].tags, ["draft", "template"]);
            assert_eq!(
                s.cases[0].args.as_ref().map(|a| a.to_value()),
                Some(json!({"n": 3, "path": "a: b.txt", "raw": true}))
            );
            assert_eq!(s.cases[1].args, None);
        }
        assert!(drafts[0].id().starts_with("read_file-"));
        assert_eq!(drafts[0].id(), drafts[0].clone().id());
        assert!(drafts[1].id().starts_with("none-"));
    }
}
