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
mod posthog;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::choice::Choice;
use crate::http::secret::Pii;
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
    Posthog,
}

impl Choice for LogFormat {
    const ALL: &'static [LogFormat] = &[
        LogFormat::Openai,
        LogFormat::Anthropic,
        LogFormat::Otel,
        LogFormat::Posthog,
    ];
    fn name(self) -> &'static str {
        match self {
            LogFormat::Openai => "openai",
            LogFormat::Anthropic => "anthropic",
            LogFormat::Otel => "otel",
            LogFormat::Posthog => "posthog",
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
            LogFormat::Posthog => {
                "PostHog MCP analytics $mcp_tool_call events (JSON, JSON lines or CSV; server-side: for watch, no prompts to import)"
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
    /// The names of the tools the logged request offered, `None` when the log does not say
    /// (a request with no `tools`, a span without `gen_ai.tool.definitions`).
    pub offered: Option<Vec<String>>,
    /// What the record says about where the exchange belongs (read by `watch`).
    pub context: Context,
}

/// A record's session, time, the full definitions it offered, and its attributes: what `watch`
/// attributes an exchange to a version and a session by. Empty where the log does not say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Context {
    /// OTel `session.id` or `gen_ai.conversation.id`; OpenAI/Anthropic lines: `session_id` or
    /// `metadata.session_id` on the line, the request's `metadata.user_id` or `user`.
    pub session: Option<String>,
    /// Seconds since the epoch: a span's `startTimeUnixNano`, a line's numeric `timestamp`, or
    /// the response's `created`.
    pub time: Option<f64>,
    /// The tool definitions the request offered, as logged.
    pub definitions: Option<Vec<Value>>,
    /// The span's attributes, or a line's `metadata` object.
    pub attributes: serde_json::Map<String, Value>,
}

/// One tool execution seen by the tool's side: an OTel `execute_tool` span (the call itself is
/// on its chat span), or a PostHog `$mcp_tool_call` event (a server-side log: the call, with no
/// prompt and no offered tools).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    pub at: String,
    pub name: String,
    /// The span's status is an error or it has an `error.type`; `$mcp_is_error`.
    pub error: bool,
    /// The record is the call itself (PostHog), not only its execution (OTel).
    pub call: bool,
    /// The arguments, when logged as an object.
    pub arguments: Option<serde_json::Map<String, Value>>,
    /// The tool's description as the record logged it (PostHog clips it to 512 characters).
    pub description: Option<String>,
    pub context: Context,
}

/// What a reader made of a tool execution record.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    name: String,
    error: bool,
    call: bool,
    arguments: Option<serde_json::Map<String, Value>>,
    description: Option<String>,
}

/// The names in a `tools` list: `{name}` (Anthropic, MCP, OTel) or `{type: function, function:
/// {name}}` (OpenAI); `None` when it is not a list, or an entry has no name.
fn tool_names(tools: &Value) -> Option<Vec<String>> {
    tools
        .as_array()?
        .iter()
        .map(|t| {
            t.get("function")
                .and_then(|f| f.get("name"))
                .or_else(|| t.get("name"))
                .and_then(Value::as_str)
                .map(String::from)
        })
        .collect()
}

/// Where the exchange at `pointer` of `record` belongs, in `fmt`'s shape.
fn context(fmt: LogFormat, record: &Value, pointer: &str) -> Context {
    match fmt {
        LogFormat::Otel => record
            .pointer(pointer)
            .map(otel::context)
            .unwrap_or_default(),
        LogFormat::Posthog => {
            let event = record.pointer(pointer).unwrap_or(record);
            let props = posthog::properties(event).unwrap_or_default();
            Context {
                session: props
                    .get("$session_id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(String::from),
                time: event.get("timestamp").and_then(seconds),
                definitions: None,
                attributes: props,
            }
        }
        LogFormat::Openai | LogFormat::Anthropic => {
            let request = ["request", "body", "params"]
                .iter()
                .find_map(|k| record.get(*k).filter(|r| r.get("messages").is_some()))
                .unwrap_or(record);
            let text = |v: Option<&Value>| match v {
                Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            };
            let meta = record.get("metadata").and_then(Value::as_object);
            let session = text(record.get("session_id"))
                .or_else(|| text(meta.and_then(|m| m.get("session_id"))))
                .or_else(|| text(request.pointer("/metadata/user_id")))
                .or_else(|| text(request.get("user")));
            let time = record
                .get("timestamp")
                .and_then(seconds)
                .or_else(|| record.pointer("/response/created").and_then(Value::as_f64));
            Context {
                session,
                time,
                definitions: request.get("tools").and_then(Value::as_array).cloned(),
                attributes: meta.cloned().unwrap_or_default(),
            }
        }
    }
}

/// Seconds since the epoch: a number, or an RFC 3339 time.
fn seconds(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.timestamp_millis() as f64 / 1000.0),
        _ => None,
    }
}

/// The tools offered by the request at `pointer` of `record`, in `fmt`'s shape.
fn offered(fmt: LogFormat, record: &Value, pointer: &str) -> Option<Vec<String>> {
    match fmt {
        LogFormat::Otel => otel::offered(record.pointer(pointer)?),
        LogFormat::Posthog => None,
        LogFormat::Openai | LogFormat::Anthropic => {
            let request = ["request", "body", "params"]
                .iter()
                .find_map(|k| record.get(*k).filter(|r| r.get("messages").is_some()))
                .unwrap_or(record);
            tool_names(request.get("tools")?)
        }
    }
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
    /// A tool execution, which makes no case: why, for `suite import`.
    Ran(Run, String),
}

/// A reader of one format: each record to what it holds, each with the JSON pointer inside the
/// record it was found at ("" for the record itself); `Err` says what was expected.
type ReadRecord = fn(&Value) -> Result<Vec<(String, Got)>, String>;

fn reader(f: LogFormat) -> ReadRecord {
    match f {
        LogFormat::Openai => openai::record,
        LogFormat::Anthropic => anthropic::record,
        LogFormat::Otel => otel::record,
        LogFormat::Posthog => posthog::record,
    }
}

/// Which format a record is in, when it says.
fn detect(v: &Value) -> Option<LogFormat> {
    [
        LogFormat::Posthog,
        LogFormat::Otel,
        LogFormat::Anthropic,
        LogFormat::Openai,
    ]
    .into_iter()
    .find(|f| match f {
        LogFormat::Posthog => posthog::looks_like(v),
        LogFormat::Otel => otel::looks_like(v),
        LogFormat::Anthropic => anthropic::looks_like(v),
        LogFormat::Openai => openai::looks_like(v),
    })
}

/// Everything read from a set of log files.
#[derive(Debug, Default, PartialEq)]
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
    /// Tool executions (also listed in `skipped`: they make no case).
    pub tool_runs: Vec<ToolRun>,
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
    let mut r = Reader::new(format, max_history);
    for (label, text) in files {
        r.text(label, text);
    }
    r.finish()
}

/// A batch input line waiting for its output: where, format, conversation, offered tools.
type BatchInput = (String, LogFormat, Vec<Turn>, Option<Vec<String>>, Context);

/// The log reader, a file at a time: whole texts ([`Reader::text`]) or JSON lines streamed from a
/// file too large to hold ([`Reader::lines`]); batch lines are paired across all of them at
/// [`Reader::finish`].
pub struct Reader {
    format: Option<LogFormat>,
    max_history: usize,
    out: Read,
    /// Batch inputs by `custom_id`.
    requests: BTreeMap<String, BatchInput>,
    responses: BTreeMap<String, (String, Result<Vec<Call>, String>)>,
}

impl Reader {
    pub fn new(format: Option<LogFormat>, max_history: usize) -> Reader {
        Reader {
            format,
            max_history,
            out: Read::default(),
            requests: BTreeMap::new(),
            responses: BTreeMap::new(),
        }
    }

    /// One file's whole text: JSON lines, or one JSON document.
    pub fn text(&mut self, label: &str, text: &str) {
        if matches!(self.format, None | Some(LogFormat::Posthog))
            && let Some(rows) = posthog::csv_rows(text)
        {
            self.out
                .formats
                .push((label.to_string(), Some(LogFormat::Posthog)));
            for (line, row) in rows {
                let rec = match row {
                    Ok(v) => Rec::Value(v),
                    Err(e) => Rec::Bad(e),
                };
                self.record(Some(LogFormat::Posthog), format!("{label}:{line}"), rec);
            }
            return;
        }
        let recs = records(label, text);
        let fmt = self
            .format
            .or_else(|| recs.iter().find_map(|(_, r)| r.format()));
        self.out.formats.push((label.to_string(), fmt));
        for (at, r) in recs {
            self.record(fmt, at, r);
        }
    }

    /// One file of JSON lines, read line by line: its size bounds neither memory nor anything
    /// but time (a line longer than [`MAX_LINE_BYTES`] is malformed, skipped unread). `open`
    /// gives the file from its start, twice when the format is to be detected: once to find
    /// the first record that says, once to read.
    pub fn lines<R: std::io::BufRead>(
        &mut self,
        label: &str,
        mut open: impl FnMut() -> std::io::Result<R>,
    ) -> std::io::Result<()> {
        let mut fmt = self.format;
        if fmt.is_none() {
            let (mut input, mut n) = (open()?, 0);
            while let Some((_, line)) = next_line(&mut input, &mut n)? {
                if let Some(f) = line.as_deref().ok().and_then(|l| Rec::Line(l).format()) {
                    fmt = Some(f);
                    break;
                }
            }
        }
        self.out.formats.push((label.to_string(), fmt));
        let (mut input, mut number) = (open()?, 0);
        while let Some((n, line)) = next_line(&mut input, &mut number)? {
            let at = format!("{label}:{n}");
            match line {
                Ok(l) if l.trim().is_empty() => {}
                Ok(l) => self.record(fmt, at, Rec::Line(&l)),
                Err(why) => self.record(fmt, at, Rec::Bad(why)),
            }
        }
        Ok(())
    }

    /// One record, in the file's format (`None`: no record of the file said which).
    fn record(&mut self, fmt: Option<LogFormat>, at: String, r: Rec<'_>) {
        self.out.records += 1;
        let Some(fmt) = fmt else {
            let why = match r.into_value() {
                Err(e) => e,
                Ok(v) => format!(
                    "not a record of a known log format ({}): an OpenAI or Anthropic {{request, response}}, a batch line, or OpenTelemetry spans (pass --format to say which)",
                    json_kind(&v)
                ),
            };
            self.out.malformed.push((at, why));
            return;
        };
        let v = match r.into_value() {
            Ok(v) => v,
            Err(e) => {
                self.out.malformed.push((at, e));
                return;
            }
        };
        let got = match reader(fmt)(&v) {
            Ok(g) => g,
            Err(e) => {
                self.out.malformed.push((at, e));
                return;
            }
        };
        for (pointer, g) in got {
            let at = if pointer.is_empty() {
                at.clone()
            } else {
                format!("{at} {pointer}")
            };
            match g {
                Got::Logged(turns, calls) => match exchange(turns, self.max_history) {
                    Ok((history, prompt)) => self.out.exchanges.push(Exchange {
                        at,
                        format: fmt,
                        history,
                        prompt,
                        calls,
                        offered: offered(fmt, &v, &pointer),
                        context: context(fmt, &v, &pointer),
                    }),
                    Err(why) => self.out.skipped.push((at, why)),
                },
                Got::Skip(why) => self.out.skipped.push((at, why)),
                Got::Ran(run, why) => {
                    self.out.tool_runs.push(ToolRun {
                        at: at.clone(),
                        name: run.name,
                        error: run.error,
                        call: run.call,
                        arguments: run.arguments,
                        description: run.description,
                        context: context(fmt, &v, &pointer),
                    });
                    self.out.skipped.push((at, why));
                }
                Got::Malformed(what) => self.out.malformed.push((at, what)),
                Got::Request(id, turns) => {
                    let tools = offered(fmt, &v, &pointer);
                    let ctx = context(fmt, &v, &pointer);
                    self.requests.insert(id, (at, fmt, turns, tools, ctx));
                }
                Got::Response(id, r) => {
                    self.responses.insert(id, (at, r));
                }
            }
        }
    }

    /// Everything read, batch lines paired; a paired case is named by where its prompt is.
    pub fn finish(mut self) -> Read {
        let mut out = self.out;
        for (id, (at, fmt, turns, offered, context)) in self.requests {
            match self.responses.remove(&id) {
                Some((_, Ok(calls))) => match exchange(turns, self.max_history) {
                    Ok((history, prompt)) => out.exchanges.push(Exchange {
                        at,
                        format: fmt,
                        history,
                        prompt,
                        calls,
                        offered,
                        context,
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
        for (id, (at, _)) in self.responses {
            out.skipped.push((
                at,
                format!(
                    "batch output {id:?} has no input line among the files read (the prompt is there)"
                ),
            ));
        }
        out
    }
}

/// The next line of `input` and its 1-based number, without its line break: `Err` (the line
/// consumed, not kept) when it is longer than [`MAX_LINE_BYTES`] or not UTF-8. Memory stays
/// bounded by the cap whatever the input holds.
fn next_line<R: std::io::BufRead>(
    input: &mut R,
    number: &mut usize,
) -> std::io::Result<Option<(usize, Result<String, String>)>> {
    let mut bytes = Vec::new();
    let mut too_long = false;
    let mut any = false;
    let mut ended = false;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if !too_long {
            let keep = &buf[..if done { take - 1 } else { take }];
            if bytes.len() + keep.len() > MAX_LINE_BYTES {
                too_long = true;
                bytes = Vec::new();
            } else {
                bytes.extend_from_slice(keep);
            }
        }
        input.consume(take);
        if done {
            ended = true;
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    *number += 1;
    let line = if too_long {
        Err(format!(
            "line longer than {} MiB, not read",
            MAX_LINE_BYTES >> 20
        ))
    } else {
        // As `str::lines`: a `\r` before the `\n` goes with the break.
        if ended && bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        if *number == 1 && bytes.starts_with("\u{feff}".as_bytes()) {
            bytes.drain(..3);
        }
        String::from_utf8(bytes).map_err(|_| "not valid UTF-8 text".to_string())
    };
    Ok(Some((*number, line)))
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

/// A case dropped as a duplicate of a kept one.
#[derive(Debug, Clone, PartialEq)]
pub struct Duplicate {
    pub at: String,
    pub of: String,
    /// `None`: the same text (case and spacing aside).
    pub cosine: Option<f32>,
}

/// What the import did with every record.
#[derive(Debug, Default)]
pub struct Summary {
    pub files: Vec<(String, Option<LogFormat>)>,
    pub records: usize,
    /// Exchanges that made a proposed case (before duplicates and the cap).
    pub exchanges: usize,
    pub skipped: Vec<(String, String)>,
    pub malformed: Vec<(String, String)>,
    pub duplicates: Vec<Duplicate>,
    /// Cases left out by the per-tool cap.
    pub capped: usize,
    /// Cases kept per expectation (`(none)` for no call).
    pub kept: BTreeMap<String, usize>,
    /// Masked tokens per kind over the kept cases, and which cases had any.
    pub redacted: BTreeMap<Pii, usize>,
    pub redacted_cases: Vec<(String, Vec<(Pii, usize)>)>,
    /// Kept cases whose production answer made more than one call (the first is proposed).
    pub several_calls: usize,
    /// Ids of kept cases that ask the same question (history and prompt, case and spacing aside)
    /// but expect different tools: the production model answered it differently on different
    /// occasions, and `suite check` will call the group contradictory until one is chosen.
    pub inconsistent: Vec<Vec<String>>,
    /// With `--tools`: exchanges whose request offered a tool list other than the server's, and
    /// the names that differ (the server's tools not offered; offered tools it lacks).
    pub offered_other: usize,
    pub offered_missing: BTreeSet<String>,
    pub offered_extra: BTreeSet<String>,
}

/// A request's `messages` list (both wire formats call it that); `what` names it in the error.
fn message_list<'a>(request: &'a Value, what: &str) -> Result<&'a Vec<Value>, String> {
    match request.get("messages") {
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(format!(
            "`messages`: expected a list, found {}",
            json_kind(other)
        )),
        None => Err(format!("missing `messages`: expected {what}")),
    }
}

/// The shape the OpenAI and Anthropic log lines share: an object, with a `custom_id` when it is
/// a batch line (the id, as written; a number keeps its digits).
fn batch_id(v: &Value) -> Result<Option<String>, String> {
    if !v.is_object() {
        return Err(format!(
            "expected an object {{request, response}} or a batch line, found {}",
            json_kind(v)
        ));
    }
    Ok(v.get("custom_id").map(|id| {
        id.as_str()
            .map(String::from)
            .unwrap_or_else(|| id.to_string())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` read whole and streamed line by line, as one file named `log.jsonl`.
    fn both(text: &str, format: Option<LogFormat>) -> (Read, Read) {
        let whole = read(&[("log.jsonl".into(), text.into())], format, 2);
        let mut r = Reader::new(format, 2);
        r.lines("log.jsonl", || Ok(std::io::Cursor::new(text.as_bytes())))
            .unwrap();
        (whole, r.finish())
    }

    const CALL: &str = r#"{"request": {"messages": [{"role": "user", "content": "weather in Oslo?"}], "tools": [{"type": "function", "function": {"name": "get_weather"}}]}, "response": {"choices": [{"message": {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}}]}}"#;

    #[test]
    fn a_line_s_session_time_definitions_and_metadata_are_its_context() {
        let line = r#"{"session_id": "s-1", "timestamp": 1767225600, "metadata": {"version": "head"}, "request": {"user": "u-7", "messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function", "function": {"name": "a"}}]}, "response": {"created": 5, "choices": [{"message": {"role": "assistant", "content": "hello"}}]}}"#;
        let r = read(&[("l.jsonl".into(), line.into())], None, 2);
        let c = &r.exchanges[0].context;
        assert_eq!(c.session.as_deref(), Some("s-1"));
        assert_eq!(c.time, Some(1767225600.0));
        assert_eq!(c.attributes["version"], "head");
        assert_eq!(c.definitions.as_ref().unwrap().len(), 1);
        // Without a session_id: the request's user; without a timestamp: the response's created.
        let bare = line.replace(r#""session_id": "s-1", "timestamp": 1767225600, "#, "");
        let r = read(&[("l.jsonl".into(), bare)], None, 2);
        let c = &r.exchanges[0].context;
        assert_eq!((c.session.as_deref(), c.time), (Some("u-7"), Some(5.0)));
    }

    #[test]
    fn streamed_lines_read_exactly_as_the_whole_text() {
        let long = format!("{{\"x\": \"{}\"}}", "a".repeat(MAX_LINE_BYTES));
        let bom = '\u{feff}';
        let text = format!("{bom}{CALL}\r\n\n  \n{{\"request\": 3}}\nnot json\n{long}\n{CALL}");
        let (whole, streamed) = both(&text, None);
        assert_eq!(whole, streamed);
        assert_eq!(streamed.records, 5);
        assert_eq!(streamed.exchanges.len(), 2);
        assert_eq!(streamed.exchanges[0].at, "log.jsonl:1");
        assert_eq!(streamed.exchanges[1].at, "log.jsonl:7");
        let bad: Vec<&str> = streamed.malformed.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(bad, ["log.jsonl:4", "log.jsonl:5", "log.jsonl:6"]);
        assert_eq!(streamed.malformed[2].1, "line longer than 4 MiB, not read");
        assert_eq!(
            streamed.formats,
            [("log.jsonl".into(), Some(LogFormat::Openai))]
        );
        // Given the format, the file is read once; none said: every record malformed.
        assert_eq!(both(&text, Some(LogFormat::Openai)).1, streamed);
        let (w, s) = both("[1]\n2\n", None);
        assert_eq!(w, s);
        assert_eq!(s.malformed.len(), 2);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_malformed_alone() {
        let mut bytes = CALL.as_bytes().to_vec();
        bytes.extend_from_slice(b"\n{\"a\": \"\xff\"}\n");
        bytes.extend_from_slice(CALL.as_bytes());
        let mut r = Reader::new(None, 2);
        r.lines("big.jsonl", || Ok(std::io::Cursor::new(&bytes[..])))
            .unwrap();
        let got = r.finish();
        assert_eq!(got.exchanges.len(), 2);
        assert_eq!(
            got.malformed,
            [(
                "big.jsonl:2".to_string(),
                "not valid UTF-8 text".to_string()
            )]
        );
    }

    #[test]
    fn each_format_says_which_tools_its_request_offered() {
        let openai: Value = serde_json::from_str(CALL).unwrap();
        assert_eq!(
            offered(LogFormat::Openai, &openai, ""),
            Some(vec!["get_weather".to_string()])
        );
        let batch = serde_json::json!({"custom_id": "r", "body": {"messages": [], "tools": [{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}]}});
        assert_eq!(
            offered(LogFormat::Openai, &batch, ""),
            Some(vec!["a".to_string(), "b".to_string()])
        );
        let anthropic =
            serde_json::json!({"request": {"messages": [], "tools": [{"name": "create_event"}]}});
        assert_eq!(
            offered(LogFormat::Anthropic, &anthropic, ""),
            Some(vec!["create_event".to_string()])
        );
        let params = serde_json::json!({"custom_id": "r", "params": {"messages": [], "tools": []}});
        assert_eq!(offered(LogFormat::Anthropic, &params, ""), Some(vec![]));
        let otel = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [
            {"key": "gen_ai.tool.definitions", "value": {"stringValue": "[{\"type\": \"function\", \"name\": \"search\"}]"}}
        ]}]}]}]});
        assert_eq!(
            offered(
                LogFormat::Otel,
                &otel,
                "/resourceSpans/0/scopeSpans/0/spans/0"
            ),
            Some(vec!["search".to_string()])
        );
        // Not said, or not a list of named tools: unknown, never a guess.
        let none = serde_json::json!({"request": {"messages": []}});
        assert_eq!(offered(LogFormat::Openai, &none, ""), None);
        let nameless =
            serde_json::json!({"request": {"messages": [], "tools": [{"type": "function"}]}});
        assert_eq!(offered(LogFormat::Openai, &nameless, ""), None);
        assert_eq!(offered(LogFormat::Otel, &otel, "/nowhere"), None);
    }

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
