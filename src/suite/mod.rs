//! The routing suite: the frozen measuring instrument.
//!
//! A suite is YAML (`cases:` list, or a bare list) or JSONL (one case per line). Each case has a
//! stable `id`, a `prompt` (optionally after a short `history`), what it `expect`s (a tool name, a
//! list of acceptable names, or `none`), names that must never be called, extra distractor tools
//! and tags. A case drafted from production traffic (`suite import`) carries `review: true` until a
//! human confirms its expectation; `check` refuses such a suite unless told otherwise. The format
//! is documented by `docs/suite.schema.json`.

pub mod check;
pub mod draft;
pub mod expect;
pub mod import;

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::canon::hash_str;
use crate::error::{Error, Result};
use crate::llm::Message;
use crate::source::tree::Tree;
use crate::tools::{Tool, ToolSet, json_kind};

/// What a case expects the router to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// Call one of these tools (any of them is correct).
    Tools(Vec<String>),
    /// Call no tool at all.
    None,
}

impl Expect {
    pub fn names(&self) -> &[String] {
        match self {
            Expect::Tools(t) => t,
            Expect::None => &[],
        }
    }
    pub fn label(&self) -> String {
        match self {
            Expect::Tools(t) => t.join("|"),
            Expect::None => "(none)".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    pub history: Vec<Message>,
    pub prompt: String,
    pub expect: Expect,
    pub must_not_call: Vec<String>,
    /// Extra tools offered with this case only.
    pub distractors: Vec<Tool>,
    pub tags: Vec<String>,
    /// Expected arguments of the call (a subset: unlisted parameters are free).
    pub args: Option<expect::ArgExpect>,
}

#[derive(Debug, Clone)]
pub struct Suite {
    pub cases: Vec<Case>,
    /// sha256 of the file bytes: goes into every report.
    pub sha256: String,
    pub source: String,
}

/// Where a problem of a suite file sits, and what kind it is.
#[derive(Debug)]
pub struct Problem {
    /// `invalid-suite` (the file as a whole), `invalid-case`, `duplicate-id`.
    pub code: &'static str,
    /// "line 3" (JSONL) or "/cases/2" (YAML); `None` for the file as a whole.
    pub at: Option<String>,
    pub error: Error,
}

/// A suite file read as far as it goes: every case that parsed (duplicates included, each with
/// where it is), the raw case values, and every problem in file order. `parse` refuses the file
/// on its first problem; `suite check` lists them all. One parser, so the two never disagree.
#[derive(Debug, Default)]
pub struct Parsed {
    pub raw: Vec<(String, Value)>,
    pub cases: Vec<(String, Case)>,
    pub problems: Vec<Problem>,
    /// Ids of the cases marked `review: true` (an expectation nobody has confirmed yet).
    pub unreviewed: Vec<String>,
}

/// Read every case of a suite text, collecting problems instead of stopping at the first. Cases
/// and problems are in file order: each entry is read as it comes, so `parse` refuses a file
/// with the problem nearest its top.
pub fn parse_all(text: &str, source: &str, base_dir: &Path) -> Parsed {
    parse_all_in(text, source, base_dir, &Tree::work(base_dir))
}

/// [`parse_all`] with the distractor `ref:` files read from `tree` (the base revision in a pull
/// request, so a PR that edits only a decoy file does not change the instrument).
pub fn parse_all_in(text: &str, source: &str, base_dir: &Path, tree: &Tree) -> Parsed {
    let refs = Refs {
        dir: base_dir,
        tree,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Parsed::default();
    let mut seen = BTreeSet::new();
    let mut take = |out: &mut Parsed, at: String, v: Value| {
        match parse_case(&v, source, &at, &refs) {
            Ok((case, review)) => {
                if review {
                    out.unreviewed.push(case.id.clone());
                }
                if !seen.insert(case.id.clone()) {
                    out.problems.push(Problem {
                        code: "duplicate-id",
                        at: Some(at.clone()),
                        error: Error::Usage(format!(
                            "{source}: case {:?} ({at}): duplicate id; ids must be unique and stable",
                            case.id
                        )),
                    });
                }
                out.cases.push((at.clone(), case));
            }
            Err(error) => out.problems.push(Problem {
                code: "invalid-case",
                at: Some(at.clone()),
                error,
            }),
        }
        out.raw.push((at, v));
    };
    let jsonl = source.ends_with(".jsonl") || looks_like_jsonl(text);
    if jsonl {
        for (i, l) in text.lines().enumerate() {
            if l.trim().is_empty() || l.trim_start().starts_with('#') {
                continue;
            }
            let at = format!("line {}", i + 1);
            match serde_json::from_str(l) {
                Ok(v) => take(&mut out, at, v),
                Err(e) => out.problems.push(Problem {
                    code: "invalid-case",
                    at: Some(at),
                    error: Error::Json {
                        source_name: source.into(),
                        line: i + 1,
                        column: e.column(),
                        message: e.to_string().split(" at line ").next().unwrap_or("").into(),
                    },
                }),
            }
        }
    } else {
        match yaml_cases(text, source) {
            Ok(list) => {
                for (i, v) in list.into_iter().enumerate() {
                    take(&mut out, format!("/cases/{i}"), v);
                }
            }
            Err(error) => out.problems.push(Problem {
                code: "invalid-suite",
                at: None,
                error,
            }),
        }
    }
    out
}

/// Flow collections (`[`, `{`) nested deeper than this are refused before the suite is read:
/// libyaml's scanner does work proportional to the open flow levels at every token, so 100,000
/// `[` took a minute, and no suite nests more than a few levels.
pub const MAX_YAML_NESTING: usize = 64;

/// Whether flow collections nest deeper than `limit` anywhere in `text`, as YAML reads it: the
/// events of libyaml's own parser (the one inside serde_yaml), read one at a time and left as
/// soon as the depth passes `limit`, so the cost stays linear in the text. Quotes, block scalars
/// and comments are the parser's business, not a guess of ours: a bracket counts exactly when
/// YAML opens a collection with it. A text that is not YAML stops the reading where it fails
/// (the full parse then reports the error).
fn flow_nesting_exceeds(text: &str, limit: usize) -> bool {
    use std::mem::MaybeUninit;
    use unsafe_libyaml::{
        YAML_FLOW_MAPPING_STYLE, YAML_FLOW_SEQUENCE_STYLE, YAML_MAPPING_END_EVENT,
        YAML_MAPPING_START_EVENT, YAML_SEQUENCE_END_EVENT, YAML_SEQUENCE_START_EVENT,
        YAML_STREAM_END_EVENT, YAML_UTF8_ENCODING, yaml_event_delete, yaml_event_t,
        yaml_parser_delete, yaml_parser_initialize, yaml_parser_parse, yaml_parser_set_encoding,
        yaml_parser_set_input_string, yaml_parser_t,
    };
    // The parser stays in its box (it must not move once it has input) and `text` outlives it.
    let mut parser = Box::new(MaybeUninit::<yaml_parser_t>::uninit());
    let p = parser.as_mut_ptr();
    // SAFETY: `p` points to memory that `yaml_parser_initialize` initialises; it is used only
    // after a successful initialisation and deleted exactly once, below. The input is a live
    // `&str` for the whole use. Each event is deleted after it is read, exactly once.
    unsafe {
        if yaml_parser_initialize(p).fail {
            return false;
        }
        yaml_parser_set_encoding(p, YAML_UTF8_ENCODING);
        yaml_parser_set_input_string(p, text.as_ptr(), text.len() as u64);
        // One entry per open collection: is it a flow collection?
        let mut open: Vec<bool> = Vec::new();
        let mut flow = 0usize;
        let mut exceeded = false;
        loop {
            let mut event = MaybeUninit::<yaml_event_t>::uninit();
            let e = event.as_mut_ptr();
            if yaml_parser_parse(p, e).fail {
                break;
            }
            let kind = (*e).type_;
            let is_flow = match kind {
                YAML_SEQUENCE_START_EVENT => {
                    Some((*e).data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE)
                }
                YAML_MAPPING_START_EVENT => {
                    Some((*e).data.mapping_start.style == YAML_FLOW_MAPPING_STYLE)
                }
                _ => None,
            };
            yaml_event_delete(e);
            match (kind, is_flow) {
                (_, Some(f)) => {
                    open.push(f);
                    flow += usize::from(f);
                    if flow > limit {
                        exceeded = true;
                        break;
                    }
                }
                (YAML_SEQUENCE_END_EVENT | YAML_MAPPING_END_EVENT, None) => {
                    flow -= usize::from(open.pop().unwrap_or(false));
                }
                (YAML_STREAM_END_EVENT, None) => break,
                _ => {}
            }
        }
        yaml_parser_delete(p);
        exceeded
    }
}

/// The case list of a YAML suite: a bare list, or `{version: 1, cases: […]}`.
fn yaml_cases(text: &str, source: &str) -> Result<Vec<Value>> {
    if flow_nesting_exceeds(text, MAX_YAML_NESTING) {
        return Err(Error::Usage(format!(
            "{source}: `[`/`{{` nested more than {MAX_YAML_NESTING} deep; a suite may nest at most {MAX_YAML_NESTING}"
        )));
    }
    // Read as YAML's own value first: it refuses a key given twice (which a JSON map would
    // silently resolve to the last), then convert.
    let doc: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| {
        let (line, column) = e
            .location()
            .map(|l| (l.line(), l.column()))
            .unwrap_or((0, 0));
        Error::Usage(format!(
            "{source}: invalid YAML at line {line}, column {column}: {e}"
        ))
    })?;
    let doc: Value = serde_json::to_value(doc)
        .map_err(|e| Error::Usage(format!("{source}: not representable as JSON: {e}")))?;
    match doc {
        Value::Array(a) => Ok(a),
        Value::Object(mut o) => {
            if let Some(k) = o.keys().find(|k| *k != "cases" && *k != "version") {
                return Err(Error::shape(
                    source,
                    &format!("/{k}"),
                    "unknown top-level key (expected `version` and `cases`)",
                ));
            }
            if o.get("version").is_some_and(|v| v != &Value::from(1)) {
                return Err(Error::shape(
                    source,
                    "/version",
                    "expected suite format version 1",
                ));
            }
            match o.remove("cases") {
                Some(Value::Array(a)) => Ok(a),
                _ => Err(Error::shape(source, "/cases", "expected a list of cases")),
            }
        }
        v => Err(Error::shape(
            source,
            "",
            format!(
                "expected a list of cases or {{cases: […]}}, found {}",
                json_kind(&v)
            ),
        )),
    }
}

/// Parse a suite from its text, refusing it on its first problem. `source` names it in errors;
/// `base_dir` resolves distractor refs.
pub fn parse(text: &str, source: &str, base_dir: &Path) -> Result<Suite> {
    parse_reviewed(text, source, base_dir).map(|(s, _)| s)
}

/// [`parse`], and the ids of the cases still marked `review: true`.
pub fn parse_reviewed(text: &str, source: &str, base_dir: &Path) -> Result<(Suite, Vec<String>)> {
    parse_reviewed_in(text, source, base_dir, &Tree::work(base_dir))
}

/// [`parse_reviewed`] with `ref:` files read from `tree`.
pub fn parse_reviewed_in(
    text: &str,
    source: &str,
    base_dir: &Path,
    tree: &Tree,
) -> Result<(Suite, Vec<String>)> {
    let parsed = parse_all_in(text, source, base_dir, tree);
    if let Some(first) = parsed.problems.into_iter().next() {
        return Err(first.error);
    }
    if parsed.cases.is_empty() {
        return Err(Error::Usage(format!("{source}: the suite has no cases")));
    }
    let suite = Suite {
        cases: parsed.cases.into_iter().map(|(_, c)| c).collect(),
        sha256: hash_str(text),
        source: source.into(),
    };
    Ok((suite, parsed.unreviewed))
}

/// JSONL whatever the file is called: lines of `{…}`. A single line is JSONL only when it is one
/// case — a JSON object that is not a whole suite (`{"version": 1, "cases": […]}`) — so a one-line
/// YAML suite, in JSON or flow syntax, stays YAML.
fn looks_like_jsonl(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let object = |l: &str| l.trim_start().starts_with('{') && l.trim_end().ends_with('}');
    match (lines.next(), lines.next()) {
        (Some(l), None) => serde_json::from_str::<serde_json::Map<String, Value>>(l)
            .is_ok_and(|o| !o.contains_key("cases") && !o.contains_key("version")),
        (Some(l), Some(m)) => object(l) && m.trim_start().starts_with('{'),
        _ => false,
    }
}

pub fn load(path: &Path) -> Result<Suite> {
    let text = crate::fs::read_text(path, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
        .map_err(|e| Error::io(path, e))?;
    parse(
        &text,
        &path.display().to_string(),
        path.parent().unwrap_or(Path::new(".")),
    )
}

fn field_err(source: &str, id: &str, field: &str, what: impl std::fmt::Display) -> Error {
    Error::Usage(format!("{source}: case {id:?}: `{field}`: {what}"))
}

fn string_list(v: &Value, source: &str, id: &str, field: &str) -> Result<Vec<String>> {
    match v {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(a) => a
            .iter()
            .map(|x| {
                x.as_str().map(String::from).ok_or_else(|| {
                    field_err(
                        source,
                        id,
                        field,
                        format!("expected strings, found {}", json_kind(x)),
                    )
                })
            })
            .collect(),
        other => Err(field_err(
            source,
            id,
            field,
            format!(
                "expected a string or a list of strings, found {}",
                json_kind(other)
            ),
        )),
    }
}

/// One case, and whether it is marked `review: true`.
/// Where a suite's `ref:` files are resolved (its directory) and read (a side's tree).
struct Refs<'a> {
    dir: &'a Path,
    tree: &'a Tree,
}

/// A case's `expect`: a tool name, a list of acceptable names, or `none`.
fn expect_of(v: Option<&Value>, source: &str, id: &str) -> Result<Expect> {
    Ok(match v {
        None => {
            return Err(field_err(
                source,
                id,
                "expect",
                "missing: give a tool name, a list of acceptable names, or `none`",
            ));
        }
        Some(Value::Null) => Expect::None,
        Some(Value::String(s)) if s == "none" => Expect::None,
        Some(v) => {
            let names = string_list(v, source, id, "expect")?;
            if names.is_empty() {
                return Err(field_err(
                    source,
                    id,
                    "expect",
                    "empty list: use `none` when no tool should be called",
                ));
            }
            Expect::Tools(names)
        }
    })
}

/// A case's `history`: the turns before the prompt.
fn history_of(v: Option<&Value>, source: &str, id: &str) -> Result<Vec<Message>> {
    Ok(match v {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("");
                let content = m.get("content").and_then(Value::as_str);
                match (role, content) {
                    ("user" | "assistant", Some(c)) => Ok(Message {
                        role: role.into(),
                        content: c.into(),
                    }),
                    _ => Err(field_err(
                        source,
                        id,
                        &format!("history/{i}"),
                        "expected {role: user|assistant, content: string}",
                    )),
                }
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(field_err(
                source,
                id,
                "history",
                format!("expected a list of messages, found {}", json_kind(other)),
            ));
        }
    })
}

/// A case's `distractors`: inline tools, or `{ref: FILE}` for a tools file's tools.
fn distractors_of(
    v: Option<&Value>,
    source: &str,
    id: &str,
    refs: &Refs<'_>,
) -> Result<Vec<crate::tools::Tool>> {
    Ok(match v {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, d)| distractor(d, source, id, i, refs))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .flatten()
            .collect(),
        Some(other) => {
            return Err(field_err(
                source,
                id,
                "distractors",
                format!("expected a list, found {}", json_kind(other)),
            ));
        }
    })
}

/// A case's `review` mark: true until a person confirmed the case.
fn review_of(v: Option<&Value>, source: &str, id: &str) -> Result<bool> {
    Ok(match v {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => {
            return Err(field_err(
                source,
                id,
                "review",
                format!(
                    "expected true (not yet confirmed) or false, found {}",
                    json_kind(other)
                ),
            ));
        }
    })
}

fn parse_case(v: &Value, source: &str, where_: &str, refs: &Refs<'_>) -> Result<(Case, bool)> {
    let o = v.as_object().ok_or_else(|| {
        Error::Usage(format!(
            "{source}: {where_}: expected a case object, found {}",
            json_kind(v)
        ))
    })?;
    const KNOWN: [&str; 10] = [
        "id",
        "prompt",
        "history",
        "expect",
        "args",
        "must_not_call",
        "distractors",
        "tags",
        "note",
        "review",
    ];
    let id = match o.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => {
            return Err(Error::Usage(format!(
                "{source}: {where_}: `id`: expected a non-empty string"
            )));
        }
    };
    if let Some(k) = o.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(field_err(
            source,
            &id,
            k,
            format!("unknown field (known: {})", KNOWN.join(", ")),
        ));
    }
    let prompt = match o.get("prompt") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(other) if !other.is_string() => {
            return Err(field_err(
                source,
                &id,
                "prompt",
                format!("expected a string, found {}", json_kind(other)),
            ));
        }
        _ => {
            return Err(field_err(
                source,
                &id,
                "prompt",
                "expected a non-empty user message",
            ));
        }
    };
    let expect = expect_of(o.get("expect"), source, &id)?;
    let args = match o.get("args") {
        None | Some(Value::Null) => None,
        Some(_) if expect == Expect::None => {
            return Err(field_err(
                source,
                &id,
                "args",
                "a case that expects no call has no arguments to expect",
            ));
        }
        Some(v) => Some(expect::ArgExpect::from_value(v).map_err(|(param, e)| {
            let field = if param.is_empty() {
                "args".to_string()
            } else {
                format!("args/{param}")
            };
            field_err(source, &id, &field, e)
        })?),
    };
    let must_not_call = o
        .get("must_not_call")
        .map(|v| string_list(v, source, &id, "must_not_call"))
        .transpose()?
        .unwrap_or_default();
    if let Some(clash) = must_not_call.iter().find(|n| expect.names().contains(n)) {
        return Err(field_err(
            source,
            &id,
            "must_not_call",
            format!("{clash:?} is also expected"),
        ));
    }
    let tags = o
        .get("tags")
        .map(|v| string_list(v, source, &id, "tags"))
        .transpose()?
        .unwrap_or_default();
    let history = history_of(o.get("history"), source, &id)?;
    let distractors = distractors_of(o.get("distractors"), source, &id, refs)?;
    let review = review_of(o.get("review"), source, &id)?;
    let case = Case {
        id,
        history,
        prompt,
        expect,
        must_not_call,
        distractors,
        tags,
        args,
    };
    Ok((case, review))
}

/// A distractor is an inline tool definition, or `{ref: "FILE"}` (all tools of a tools file) or
/// `{ref: "FILE#name"}` (one of them), relative to the suite file, inside the repository.
fn distractor(d: &Value, source: &str, id: &str, i: usize, refs: &Refs<'_>) -> Result<Vec<Tool>> {
    if let Some(r) = d.get("ref") {
        let r = r.as_str().ok_or_else(|| {
            field_err(
                source,
                id,
                &format!("distractors/{i}/ref"),
                "expected \"FILE\" or \"FILE#tool\"",
            )
        })?;
        let (file, name) = match r.split_once('#') {
            Some((f, n)) => (f, Some(n)),
            None => (r, None),
        };
        let at = format!("distractors/{i}/ref");
        let path: PathBuf = refs
            .tree
            .resolve(refs.dir, file)
            .map_err(|why| field_err(source, id, &at, why))?;
        let shown = match refs.tree.rev() {
            Some(rev) => format!("{rev}:{file}"),
            None => refs.dir.join(file).display().to_string(),
        };
        let text = match refs.tree.read(&path) {
            Ok(Some(text)) => text,
            Ok(None) => {
                return Err(field_err(source, id, &at, format!("{shown}: no such file")));
            }
            Err(e) => return Err(field_err(source, id, &at, e.to_string())),
        };
        let (set, _) = crate::source::parse_text(&text, &shown)?;
        return match name {
            None => Ok(set.tools),
            Some(n) => set.get(n).cloned().map(|t| vec![t]).ok_or_else(|| {
                field_err(
                    source,
                    id,
                    &format!("distractors/{i}/ref"),
                    format!("no tool {n:?} in {shown}"),
                )
            }),
        };
    }
    Tool::from_value(
        d,
        &format!("{source}: case {id:?}"),
        &format!("/distractors/{i}"),
    )
    .map(|t| vec![t])
}

/// Problems that make a suite unable to measure a tool set (used by `check` and `suite check`).
pub fn validate_against(suite: &Suite, tools: &ToolSet) -> Vec<String> {
    let mut out = Vec::new();
    // The side's names once, not per case: a case adds only its own distractors.
    let own: HashSet<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    for c in &suite.cases {
        let offered = |n: &str| own.contains(n) || c.distractors.iter().any(|d| d.name == n);
        let unknown: Vec<&String> = c
            .expect
            .names()
            .iter()
            .filter(|n| !offered(n.as_str()))
            .collect();
        if !unknown.is_empty() && unknown.len() == c.expect.names().len() {
            out.push(format!(
                "case {:?}: no expected tool is offered ({})",
                c.id,
                unknown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        out.extend(
            case_args_problems(c, tools)
                .into_iter()
                .map(|p| format!("case {:?}: {p}", c.id)),
        );
    }
    out
}

/// A case's expected arguments read against each expected tool it is offered (the side's tools
/// and its own distractors): [`args_problems`] of each.
pub fn case_args_problems(c: &Case, tools: &ToolSet) -> Vec<String> {
    let Some(want) = &c.args else {
        return Vec::new();
    };
    tools
        .tools
        .iter()
        .chain(&c.distractors)
        .filter(|t| c.expect.names().contains(&t.name))
        .flat_map(|t| args_problems(want, t))
        .collect()
}

/// A case's expected arguments read against one expected tool: each expected parameter (but an
/// `absent` one: asserting that a name is not invented is the point) must be declared, and each
/// literal must be a value the tool's schema admits — else the case can never pass.
pub fn args_problems(want: &expect::ArgExpect, tool: &Tool) -> Vec<String> {
    let declared = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let checker = crate::tools::validate::ArgsChecker::new(&tool.input_schema).ok();
    let mut out = Vec::new();
    for (param, m) in &want.0 {
        if !declared.is_some_and(|d| d.contains_key(param)) {
            if !matches!(m, expect::Matcher::Absent) {
                out.push(format!(
                    "`args/{param}`: `{}` declares no parameter {param:?}",
                    tool.name
                ));
            }
            continue;
        }
        let Some(checker) = &checker else { continue };
        let at = format!("/{}", param.replace('~', "~0").replace('/', "~1"));
        // A literal the schema rejects can never match; an `any_of` only when all of its
        // alternatives are rejected (a dead alternative is harmless).
        let rejected: Vec<String> = m
            .literals()
            .into_iter()
            .filter_map(|lit| {
                let one = Value::Object(serde_json::Map::from_iter([(param.clone(), lit.clone())]));
                checker
                    .check(&one)
                    .into_iter()
                    .find(|p| p.pointer == at || p.pointer.starts_with(&format!("{at}/")))
                    .map(|p| p.message)
            })
            .collect();
        if !rejected.is_empty() && rejected.len() == m.literals().len() {
            let what = match m {
                expect::Matcher::AnyOf(_) => "no alternative is".to_string(),
                _ => format!("{} is not", m.describe()),
            };
            out.push(format!(
                "`args/{param}`: {what} a value `{}` accepts: {}",
                tool.name,
                rejected.join("; ")
            ));
        }
    }
    out
}

/// Which version of the suite measured both sides of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SuiteVersion {
    Base,
    Head,
}

impl std::fmt::Display for SuiteVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SuiteVersion::Base => "base",
            SuiteVersion::Head => "head",
        })
    }
}

/// Which suite, by its file and content hash: the part of the suite section every report shares
/// (`check`'s [`SuiteInfo`], `stress`'s summary).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Identity {
    pub source: String,
    pub sha256: String,
    pub cases: usize,
}

impl Identity {
    pub fn of(suite: &Suite) -> Identity {
        Identity {
            source: suite.source.clone(),
            sha256: suite.sha256.clone(),
            cases: suite.cases.len(),
        }
    }
}

/// Where the suite came from and whether the PR changed it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SuiteInfo {
    #[serde(flatten)]
    pub identity: Identity,
    /// Which version of the suite measured both sides.
    pub measured_with: SuiteVersion,
    pub changed_in_pr: bool,
}

#[derive(Clone)]
pub struct SuiteChoice {
    pub suite: Suite,
    pub info: SuiteInfo,
    pub note: Option<String>,
    /// Ids of the measuring suite's cases still marked `review: true`.
    pub unreviewed: Vec<String>,
    /// The suite's text is the same at both sides but a `ref:` file it names changed.
    pub refs_changed: bool,
}

/// Pick the suite that measures both sides. With a base revision (a pull request), the suite
/// and every file it names are read *at base*: changing the instrument and the thing measured
/// at once hides drift, and the PR is untrusted. `use_head` (a maintainer's opt-in: a flag the
/// workflow sets, never a file the PR can edit) measures with the PR's suite instead; either
/// way the report says so loudly. A suite the base revision lacks cannot grade the PR that adds
/// it: the check is incomplete, not a pass.
pub fn choose_suite(
    path: &std::path::Path,
    base_rev: Option<&str>,
    use_head: bool,
) -> Result<SuiteChoice> {
    let label = path.display().to_string();
    let dir = crate::source::tree::dir_of(path).to_path_buf();
    let head_tree = Tree::work(&dir);
    let read_head = || {
        crate::fs::read_text(path, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
            .map_err(|e| Error::io(path, e))
    };
    let base_rev = base_rev.filter(|_| crate::source::tree::in_checkout(path));
    let Some(rev) = base_rev else {
        // No base revision, or a suite outside the checkout: the only version there is.
        let head_text = read_head()?;
        let suite = parse_reviewed(&head_text, &label, &dir)?;
        return Ok(choice(suite, SuiteVersion::Head, false, None, false));
    };
    let base_tree = Tree::at(rev, &dir);
    let base_text = base_tree.read(path)?;
    let head_text = match head_tree.read(path) {
        Ok(t) => t,
        // The PR's copy may be a link or unreadable: that is the PR's change, reported below.
        Err(_) if !use_head => None,
        Err(e) => return Err(e),
    };
    let Some(base_text) = base_text else {
        if use_head {
            let text = head_text.ok_or_else(|| {
                Error::Usage(format!(
                    "{label}: no such suite at {rev} or in the work tree"
                ))
            })?;
            let suite = parse_reviewed(&text, &label, &dir)?;
            let n = format!(
                "The suite {label} does not exist at {rev}: both sides were measured with the PR's own suite because --use-head-suite was given. A suite the PR brings is the PR grading itself."
            );
            return Ok(choice(suite, SuiteVersion::Head, true, Some(n), false));
        }
        return Err(Error::Incomplete(format!(
            "the suite {label} does not exist at the base revision {rev}: a suite the pull request brings (or reaches through a path it changed) cannot grade it. Merge the suite first, or have a maintainer opt in with --use-head-suite (the Action's trust-head-policy input)"
        )));
    };
    let base_label = format!("{rev}:{label}");
    let base = parse_reviewed_in(&base_text, &base_label, &dir, &base_tree)?;
    let text_changed = head_text.as_deref() != Some(base_text.as_str());
    // The same text can still measure differently when a `ref:` file changed: parse the PR's
    // copy against the work tree only to tell (its problems are the PR's, not ours).
    let head = head_text
        .as_deref()
        .and_then(|t| parse_reviewed_in(t, &label, &dir, &head_tree).ok());
    let refs_changed = !text_changed && head.as_ref().is_none_or(|h| h.0.cases != base.0.cases);
    let changed = text_changed || refs_changed;
    if !changed {
        return Ok(choice(base, SuiteVersion::Base, false, None, false));
    }
    let what = match (&head_text, refs_changed) {
        (None, _) => format!("the PR removed {label} (or made it unreadable)"),
        (Some(_), true) => {
            format!("a file {label} names with `ref:` (a distractor pack) differs from {rev}")
        }
        (Some(_), false) => format!("{label} differs from {rev}"),
    };
    if use_head {
        let Some(head) = head else {
            return Err(Error::Usage(format!(
                "--use-head-suite: {label} at head cannot be read: {what}"
            )));
        };
        let n = format!(
            "The suite changed in this PR ({what}); both sides were measured with the HEAD suite because --use-head-suite was given. Changing the instrument and the tools at once can hide drift."
        );
        return Ok(choice(
            head,
            SuiteVersion::Head,
            true,
            Some(n),
            refs_changed,
        ));
    }
    let n = format!(
        "The suite changed in this PR ({what}); both sides were measured with the BASE suite so the instrument stays fixed. Pass --use-head-suite to measure with the new one."
    );
    Ok(choice(
        base,
        SuiteVersion::Base,
        true,
        Some(n),
        refs_changed,
    ))
}

fn choice(
    (suite, unreviewed): (Suite, Vec<String>),
    measured_with: SuiteVersion,
    changed_in_pr: bool,
    note: Option<String>,
    refs_changed: bool,
) -> SuiteChoice {
    let info = SuiteInfo {
        identity: Identity::of(&suite),
        measured_with,
        changed_in_pr,
    };
    SuiteChoice {
        suite,
        info,
        note,
        unreviewed,
        refs_changed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str, src: &str) -> Result<Suite> {
        parse(text, src, Path::new("."))
    }

    #[test]
    fn jsonl_and_yaml_agree() {
        let j = p("{\"id\":\"a\",\"prompt\":\"read x\",\"expect\":[\"read_file\",\"read_text_file\"]}\n{\"id\":\"b\",\"prompt\":\"hi\",\"expect\":\"none\"}\n", "s.jsonl").unwrap();
        let y = p("cases:\n  - id: a\n    prompt: read x\n    expect: [read_file, read_text_file]\n  - id: b\n    prompt: hi\n    expect: none\n", "s.yaml").unwrap();
        assert_eq!(j.cases, y.cases);
        assert_eq!(j.cases[1].expect, Expect::None);
        assert!(j.sha256.starts_with("sha256:"));
    }

    #[test]
    fn deep_nesting_is_refused_at_once() {
        let text = format!("cases: {}\n", "[".repeat(100_000));
        let started = std::time::Instant::now();
        let e = p(&text, "s.yaml").unwrap_err().to_string();
        assert!(e.contains("nested more than 64 deep"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // Brackets inside quoted prompts do not count.
        let ok = p("- {id: a, prompt: \"[[[[ {{{{\", expect: x}\n", "s.yaml").unwrap();
        assert_eq!(ok.cases.len(), 1);
    }

    #[test]
    fn args_are_read_and_their_errors_point_at_the_parameter() {
        let s = p(
            "- {id: a, prompt: p, expect: read, args: {path: a.txt, n: {type: integer}}}\n",
            "s.yaml",
        )
        .unwrap();
        let want = s.cases[0].args.as_ref().unwrap();
        assert_eq!(
            want.to_value(),
            serde_json::json!({"n": {"type": "integer"}, "path": "a.txt"})
        );
        for (yaml, msg) in [
            (
                "- {id: a, prompt: p, expect: read, args: {n: {type: int}}}\n",
                "s.yaml: case \"a\": `args/n`: `type`: expected one of string, number",
            ),
            (
                "- {id: a, prompt: p, expect: read, args: [path]}\n",
                "s.yaml: case \"a\": `args`: expected a map from parameter to matcher, found array",
            ),
            (
                "- {id: a, prompt: p, expect: none, args: {path: x}}\n",
                "s.yaml: case \"a\": `args`: a case that expects no call has no arguments to expect",
            ),
        ] {
            let e = p(yaml, "s.yaml").unwrap_err().to_string();
            assert!(e.starts_with(msg), "{e}");
        }
    }

    #[test]
    fn args_are_validated_against_the_expected_tools_schema() {
        let tools = ToolSet::from_array(
            serde_json::json!([{"name": "read", "inputSchema": {"type": "object", "properties": {
                "path": {"type": "string"},
                "n": {"type": "integer", "minimum": 1},
                "mode": {"$ref": "#/$defs/mode"},
                "alt": {"$ref": "#/$defs/mode"}
            }, "$defs": {"mode": {"enum": ["text", "bytes"]}}}}])
            .as_array()
            .unwrap(),
            "t.json",
            "",
        )
        .unwrap();
        let s = p(
            "- {id: a, prompt: p, expect: read, args: {path: x, n: 0, mode: {any_of: [bits, lines]}, alt: {any_of: [text, lines]}, file: y, extra: {absent: true}}}\n",
            "s.yaml",
        )
        .unwrap();
        assert_eq!(
            validate_against(&s, &tools),
            [
                "case \"a\": `args/file`: `read` declares no parameter \"file\"",
                "case \"a\": `args/mode`: no alternative is a value `read` accepts: \"bits\" is not one of \"text\" or \"bytes\"; \"lines\" is not one of \"text\" or \"bytes\"",
                "case \"a\": `args/n`: 0 is not a value `read` accepts: 0 is less than the minimum of 1",
            ]
        );
    }

    #[test]
    fn a_key_given_twice_is_an_error_not_the_last_one() {
        let e = p("- {id: a, id: b, prompt: p, expect: x}\n", "s.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "s.yaml: invalid YAML at line 1, column 3: .[0]: duplicate entry with key \"id\""
            ),
            "{e}"
        );
    }

    #[test]
    fn a_byte_order_mark_starts_a_jsonl_suite() {
        let s = p(
            "\u{feff}{\"id\":\"a\",\"prompt\":\"p\",\"expect\":\"x\"}\n",
            "s.jsonl",
        )
        .unwrap();
        assert_eq!(s.cases[0].id, "a");
    }

    #[test]
    fn validation_errors_name_case_and_field() {
        let e = p("- id: a\n  prompt: x\n", "s.yaml")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "s.yaml: case \"a\": `expect`: missing: give a tool name, a list of acceptable names, or `none`"
        );
        let e = p(
            "- id: a\n  prompt: x\n  expect: t\n- id: a\n  prompt: y\n  expect: t\n",
            "s.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("case \"a\" (/cases/1): duplicate id"), "{e}");
        let e = p(
            "- id: a\n  prompt: x\n  expect: t\n  must_not_call: [t]\n",
            "s.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`must_not_call`: \"t\" is also expected"), "{e}");
        let e = p("- id: a\n  prompt: x\n  expect: t\n  expct: u\n", "s.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`expct`: unknown field"), "{e}");
        let e = p("- id: a\n  prompt: 3\n  expect: t\n", "s.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`prompt`: expected a string, found number"),
            "{e}"
        );
        let e = p("{\"id\":\"a\"\n", "s.jsonl").unwrap_err().to_string();
        assert!(e.starts_with("s.jsonl: invalid JSON at line 1"), "{e}");
        let e = p(
            "- id: a\n  prompt: x\n  expect: t\n  distractors: [{name: 5}]\n",
            "s.yaml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("case \"a\"") && e.contains("/distractors/0/name: expected string"),
            "{e}"
        );
    }

    #[test]
    fn review_marks_a_case_unconfirmed_and_only_a_boolean_is_accepted() {
        let text = "- {id: a, prompt: p, expect: x, review: true}\n- {id: b, prompt: q, expect: none, review: false}\n- {id: c, prompt: r, expect: x}\n";
        let (s, unreviewed) = parse_reviewed(text, "s.yaml", Path::new(".")).unwrap();
        assert_eq!(s.cases.len(), 3);
        assert_eq!(unreviewed, ["a"]);
        let e = p(
            "- {id: a, prompt: p, expect: x, review: yes please}\n",
            "s.yaml",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "s.yaml: case \"a\": `review`: expected true (not yet confirmed) or false, found string"
        );
    }

    #[test]
    fn history_and_inline_distractors() {
        let s = p("- id: a\n  history:\n    - {role: user, content: hi}\n    - {role: assistant, content: hello}\n  prompt: book it\n  expect: book\n  distractors:\n    - {name: other, description: Other tool}\n", "s.yaml").unwrap();
        assert_eq!(s.cases[0].history.len(), 2);
        assert_eq!(s.cases[0].distractors[0].name, "other");
    }
}
