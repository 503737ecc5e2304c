//! `suite import`'s log readers: production traffic read into one shape, [`Exchange`] — the
//! conversation up to the last user turn, and the tools the production model called in answer.
//!
//! Three formats, each read from its public wire format: OpenAI Chat Completions
//! (`{request, response}` lines, and Batch API input/output lines paired by `custom_id`),
//! Anthropic Messages (`{request, response}` lines, and Message Batches `params`/`result` lines)
//! and OpenTelemetry GenAI spans (OTLP/JSON exports; `gen_ai.input.messages`/
//! `gen_ai.output.messages`, or the older `gen_ai.prompt`/`gen_ai.completion`). The format is
//! detected per file from its first record unless it is given.
//!
//! A record that does not have its format's shape is *malformed*, named by file and line (and
//! JSON pointer inside a document) with what was expected; one that has the shape but cannot
//! make a case (an agent-loop step answering a tool result, a failed request, a span without
//! recorded messages) is *skipped* with its reason. Neither stops the reading: the caller decides
//! (`--strict`). A line longer than [`MAX_LINE_BYTES`] is malformed unread.

mod anthropic;
mod openai;
mod otel;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::choice::Choice;
use crate::llm::Message;
use crate::tools::json_kind;

/// A longer line is not parsed: it is reported as malformed (bounded memory on hostile input).
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// The log formats `suite import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogFormat {
    Openai,
    Anthropic,
    Otel,
}

impl Choice for LogFormat {
    const ALL: &'static [LogFormat] = &[LogFormat::Openai, LogFormat::Anthropic, LogFormat::Otel];
    fn name(self) -> &'static str {
        match self {
            LogFormat::Openai => "openai",
            LogFormat::Anthropic => "anthropic",
            LogFormat::Otel => "otel",
        }
    }
    fn help(self) -> &'static str {
        match self {
            LogFormat::Openai => {
                "Chat Completions {request, response} lines, or Batch API input/output lines"
            }
            LogFormat::Anthropic => {
                "Messages {request, response} lines, or Message Batches params/result lines"
            }
            LogFormat::Otel => {
                "OpenTelemetry GenAI spans, OTLP/JSON (a document or one export per line)"
            }
        }
    }
}

/// One tool call of the production model.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    /// The arguments when they were a JSON object (OpenAI sends them as a JSON string).
    pub arguments: Option<serde_json::Map<String, Value>>,
}

/// One logged model call, in the shape every format is read into.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// Where it was read: `FILE:LINE`, with ` /pointer` inside a line or a document.
    pub at: String,
    pub format: LogFormat,
    /// Earlier user and assistant text turns, oldest first (system turns, tool calls and tool
    /// results are not kept: the suite's history has text turns only).
    pub history: Vec<Message>,
    /// The last user turn: what the production model answered.
    pub prompt: String,
    /// Its tool calls, in order; empty when it answered in text.
    pub calls: Vec<Call>,
}

/// A turn of a logged conversation, as the readers see it.
#[derive(Debug, Clone, PartialEq)]
struct Turn {
    /// `system`, `user`, `assistant` or `tool`.
    role: String,
    text: String,
    /// A turn carrying tool results (OpenAI `tool` messages, Anthropic `tool_result` blocks,
    /// OTel `tool_call_response` parts).
    tool_result: bool,
}

impl Turn {
    fn new(role: &str, text: String, tool_result: bool) -> Turn {
        let role = match role {
            "developer" => "system",
            "function" => "tool",
            r => r,
        };
        Turn {
            role: role.to_string(),
            text,
            tool_result: tool_result || role == "tool",
        }
    }
}

/// What a reader made of one record (or one span of it).
#[derive(Debug)]
enum Got {
    /// The conversation and the answer's calls.
    Logged(Vec<Turn>, Vec<Call>),
    /// Well-formed but no case: why.
    Skip(String),
    /// A part of the record (a span of an export) without its shape: what was expected.
    Malformed(String),
    /// A batch input line: the request, to be paired with its output by `custom_id`.
    Request(String, Vec<Turn>),
    /// A batch output line: the answer's calls, or why there is none.
    Response(String, Result<Vec<Call>, String>),
}

/// A reader of one format: each record to what it holds, each with the JSON pointer inside the
/// record it was found at ("" for the record itself); `Err` says what was expected.
type ReadRecord = fn(&Value) -> Result<Vec<(String, Got)>, String>;

fn reader(f: LogFormat) -> ReadRecord {
    match f {
        LogFormat::Openai => openai::record,
        LogFormat::Anthropic => anthropic::record,
        LogFormat::Otel => otel::record,
    }
}

/// Which format a record is in, when it says.
fn detect(v: &Value) -> Option<LogFormat> {
    [LogFormat::Otel, LogFormat::Anthropic, LogFormat::Openai]
        .into_iter()
        .find(|f| match f {
            LogFormat::Otel => otel::looks_like(v),
            LogFormat::Anthropic => anthropic::looks_like(v),
            LogFormat::Openai => openai::looks_like(v),
        })
}

/// Everything read from a set of log files.
#[derive(Debug, Default)]
pub struct Read {
    /// Records read (JSONL lines, document entries), malformed ones included.
    pub records: usize,
    pub exchanges: Vec<Exchange>,
    /// Well-formed records that make no case: where, and why.
    pub skipped: Vec<(String, String)>,
    /// Records without their format's shape: where, and what was expected.
    pub malformed: Vec<(String, String)>,
    /// Each file and the format it was read as (`None`: no record said).
    pub formats: Vec<(String, Option<LogFormat>)>,
}

/// One record of a file, parsed only when it is read: a file's lines are never all parsed at
/// once (a JSON value takes several times the memory of its text).
enum Rec<'a> {
    Line(&'a str),
    Value(Value),
    Bad(String),
}

impl Rec<'_> {
    fn into_value(self) -> Result<Value, String> {
        match self {
            Rec::Line(l) => serde_json::from_str::<Value>(l).map_err(|e| {
                format!(
                    "invalid JSON at column {}: {}",
                    e.column(),
                    json_message(&e)
                )
            }),
            Rec::Value(v) => Ok(v),
            Rec::Bad(e) => Err(e),
        }
    }

    /// The format the record says it is in.
    fn format(&self) -> Option<LogFormat> {
        match self {
            Rec::Line(l) => serde_json::from_str::<Value>(l)
                .ok()
                .as_ref()
                .and_then(detect),
            Rec::Value(v) => detect(v),
            Rec::Bad(_) => None,
        }
    }
}

/// The records of one file: JSON lines, or one JSON document (an array of records, or one OTLP
/// export), each with where it is.
fn records<'a>(label: &str, text: &'a str) -> Vec<(String, Rec<'a>)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let one_line_json =
        first.len() <= MAX_LINE_BYTES && serde_json::from_str::<Value>(first).is_ok();
    if !one_line_json && text.len() as u64 <= crate::fs::MAX_INPUT_BYTES {
        // A pretty-printed document is read whole; one that breaks is named where it breaks.
        // Otherwise these are JSON lines whose first is malformed.
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => {
                return items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| (format!("{label} /{i}"), Rec::Value(v)))
                    .collect();
            }
            Ok(v) => return vec![(label.to_string(), Rec::Value(v))],
            Err(e) if matches!(first.trim(), "{" | "[") => {
                return vec![(
                    format!("{label}:{}", e.line()),
                    Rec::Bad(format!(
                        "invalid JSON at column {}: {}",
                        e.column(),
                        json_message(&e)
                    )),
                )];
            }
            Err(_) => {}
        }
    }
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let at = format!("{label}:{}", i + 1);
            if l.len() > MAX_LINE_BYTES {
                let why = format!("line longer than {} MiB, not read", MAX_LINE_BYTES >> 20);
                return (at, Rec::Bad(why));
            }
            (at, Rec::Line(l))
        })
        .collect()
}

/// serde_json's message without its own " at line L column C".
fn json_message(e: &serde_json::Error) -> String {
    let m = e.to_string();
    m.split(" at line ").next().unwrap_or(&m).to_string()
}

/// Read every file (`(label, text)`), each in `format` or the one its first record says, and
/// pair batch inputs with their outputs across all of them. `max_history` earlier turns are kept
/// before each prompt.
pub fn read(files: &[(String, String)], format: Option<LogFormat>, max_history: usize) -> Read {
    let mut out = Read::default();
    let mut requests: BTreeMap<String, (String, LogFormat, Vec<Turn>)> = BTreeMap::new();
    let mut responses: BTreeMap<String, (String, Result<Vec<Call>, String>)> = BTreeMap::new();
    for (label, text) in files {
        let recs = records(label, text);
        out.records += recs.len();
        let fmt = format.or_else(|| recs.iter().find_map(|(_, r)| r.format()));
        out.formats.push((label.clone(), fmt));
        let Some(fmt) = fmt else {
            for (at, r) in recs {
                out.malformed.push((
                    at,
                    match r.into_value() {
                        Err(e) => e,
                        Ok(v) => format!(
                            "not a record of a known log format ({}): an OpenAI or Anthropic {{request, response}}, a batch line, or OpenTelemetry spans (pass --format to say which)",
                            json_kind(&v)
                        ),
                    },
                ));
            }
            continue;
        };
        let read_one = reader(fmt);
        for (at, r) in recs {
            let v = match r.into_value() {
                Ok(v) => v,
                Err(e) => {
                    out.malformed.push((at, e));
                    continue;
                }
            };
            let got = match read_one(&v) {
                Ok(g) => g,
                Err(e) => {
                    out.malformed.push((at, e));
                    continue;
                }
            };
            for (pointer, g) in got {
                let at = if pointer.is_empty() {
                    at.clone()
                } else {
                    format!("{at} {pointer}")
                };
                match g {
                    Got::Logged(turns, calls) => match exchange(turns, max_history) {
                        Ok((history, prompt)) => out.exchanges.push(Exchange {
                            at,
                            format: fmt,
                            history,
                            prompt,
                            calls,
                        }),
                        Err(why) => out.skipped.push((at, why)),
                    },
                    Got::Skip(why) => out.skipped.push((at, why)),
                    Got::Malformed(what) => out.malformed.push((at, what)),
                    Got::Request(id, turns) => {
                        requests.insert(id, (at, fmt, turns));
                    }
                    Got::Response(id, r) => {
                        responses.insert(id, (at, r));
                    }
                }
            }
        }
    }
    // Batch lines, paired; the case is named by where its prompt is.
    for (id, (at, fmt, turns)) in requests {
        match responses.remove(&id) {
            Some((_, Ok(calls))) => match exchange(turns, max_history) {
                Ok((history, prompt)) => out.exchanges.push(Exchange {
                    at,
                    format: fmt,
                    history,
                    prompt,
                    calls,
                }),
                Err(why) => out.skipped.push((at, why)),
            },
            Some((_, Err(why))) => out.skipped.push((at, why)),
            None => out.skipped.push((
                at,
                format!("batch request {id:?} has no output line among the files read"),
            )),
        }
    }
    for (id, (at, _)) in responses {
        out.skipped.push((
            at,
            format!(
                "batch output {id:?} has no input line among the files read (the prompt is there)"
            ),
        ));
    }
    out
}

/// The prompt (the last turn, which must be a user's text) and up to `max_history` earlier
/// text turns before it; `Err` says why the conversation makes no case.
fn exchange(turns: Vec<Turn>, max_history: usize) -> Result<(Vec<Message>, String), String> {
    let mut turns: Vec<Turn> = turns.into_iter().filter(|t| t.role != "system").collect();
    let Some(last) = turns.pop() else {
        return Err("no user turn in the request".into());
    };
    if last.tool_result {
        return Err(
            "the request ends in a tool result, not a user turn (a later step of an agent loop)"
                .into(),
        );
    }
    if last.role != "user" {
        let article = if last.role.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        return Err(format!(
            "the request ends in {article} {} turn, not a user turn",
            last.role
        ));
    }
    if last.text.trim().is_empty() {
        return Err("the last user turn has no text".into());
    }
    let mut history: Vec<Message> = turns
        .into_iter()
        .filter(|t| !t.tool_result && matches!(t.role.as_str(), "user" | "assistant"))
        .filter(|t| !t.text.trim().is_empty())
        .map(|t| Message {
            role: t.role,
            content: t.text,
        })
        .collect();
    let cut = history.len().saturating_sub(max_history);
    history.drain(..cut);
    Ok((history, last.text))
}

/// A message's text when its content is a string, null, or a list of parts/blocks with `text`
/// (other kinds — images, audio, files — carry no text and are left out).
fn text_of(content: Option<&Value>, what: &str) -> Result<String, String> {
    match content {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            for (i, p) in parts.iter().enumerate() {
                match p.get("type").and_then(Value::as_str) {
                    Some("text") => match p.get("text") {
                        Some(Value::String(s)) => texts.push(s.as_str()),
                        _ => {
                            return Err(format!("{what}/{i}: a text part without a string `text`"));
                        }
                    },
                    Some(_) => {}
                    None => return Err(format!("{what}/{i}: expected a part with a `type`")),
                }
            }
            Ok(texts.join("\n"))
        }
        Some(other) => Err(format!(
            "{what}: expected a string or a list of parts, found {}",
            json_kind(other)
        )),
    }
}

/// Arguments given as an object, or as a JSON string of one (OpenAI's wire form).
fn arguments(v: Option<&Value>) -> Option<serde_json::Map<String, Value>> {
    match v? {
        Value::Object(o) => Some(o.clone()),
        Value::String(s) => match serde_json::from_str(s) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        },
        _ => None,
    }
}

/// `v[key]` as an object, or what was expected.
fn object<'a>(
    v: &'a Value,
    key: &str,
    what: &str,
) -> Result<&'a serde_json::Map<String, Value>, String> {
    match v.get(key) {
        Some(Value::Object(o)) => Ok(o),
        Some(other) => Err(format!(
            "`{key}`: expected {what}, found {}",
            json_kind(other)
        )),
        None => Err(format!("missing `{key}`: expected {what}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(role: &str, text: &str) -> Turn {
        Turn::new(role, text.into(), false)
    }

    #[test]
    fn the_prompt_is_the_last_user_turn_after_a_capped_history() {
        let turns = vec![
            t("system", "be brief"),
            t("user", "hi"),
            t("assistant", "hello"),
            Turn::new("tool", "42".into(), false),
            t("assistant", ""),
            t("user", "book it"),
        ];
        let (h, p) = exchange(turns.clone(), 4).unwrap();
        assert_eq!(p, "book it");
        assert_eq!(
            h.iter()
                .map(|m| format!("{}:{}", m.role, m.content))
                .collect::<Vec<_>>(),
            ["user:hi", "assistant:hello"]
        );
        let (h, _) = exchange(turns, 1).unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].content, "hello");
    }

    #[test]
    fn a_conversation_not_ending_in_user_text_makes_no_case() {
        for (turns, why) in [
            (
                vec![t("user", "x"), Turn::new("tool", "r".into(), false)],
                "ends in a tool result",
            ),
            (
                vec![t("user", "x"), t("assistant", "y")],
                "ends in an assistant turn",
            ),
            (vec![t("system", "s")], "no user turn"),
            (vec![t("user", "  ")], "has no text"),
        ] {
            let e = exchange(turns, 4).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    fn records(label: &str, text: &str) -> Vec<(String, Result<Value, String>)> {
        super::records(label, text)
            .into_iter()
            .map(|(at, r)| (at, r.into_value()))
            .collect()
    }

    #[test]
    fn documents_lines_and_overlong_lines_are_records_with_places() {
        let r = records("a.jsonl", "{bad\n{\"x\":1}\n");
        assert_eq!(
            r.len(),
            2,
            "a malformed first line leaves the others JSON lines"
        );
        assert!(r[1].1.is_ok());
        let r = records("a.jsonl", "{\"x\":1}\n\n{bad\n");
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].0, "a.jsonl:1");
        assert_eq!(r[1].0, "a.jsonl:3");
        assert!(
            r[1].1
                .as_ref()
                .unwrap_err()
                .starts_with("invalid JSON at column 2")
        );
        let r = records("t.json", "{\n  \"resourceSpans\": []\n}\n");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].0, "t.json");
        let r = records("t.json", "[\n {\"a\": 1},\n {\"b\": 2}\n]\n");
        assert_eq!(r[1].0, "t.json /1");
        let r = records("t.json", "{\n  \"resourceSpans\": [\n");
        assert!(r[0].0.starts_with("t.json:"), "{:?}", r[0].0);
        let long = format!("{{\"x\":\"{}\"}}\n{{}}\n", "a".repeat(MAX_LINE_BYTES));
        let r = records("big.jsonl", &long);
        assert_eq!(
            r[0].1.as_ref().unwrap_err(),
            "line longer than 4 MiB, not read"
        );
    }

    #[test]
    fn text_is_joined_from_text_parts_only() {
        let v = serde_json::json!([{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}}, {"type": "text", "text": "b"}]);
        assert_eq!(text_of(Some(&v), "/content").unwrap(), "a\nb");
        let e = text_of(Some(&serde_json::json!(5)), "/content").unwrap_err();
        assert_eq!(
            e,
            "/content: expected a string or a list of parts, found number"
        );
    }
}
