//! OpenTelemetry GenAI spans, as OTLP/JSON exports: `resourceSpans[].scopeSpans[].spans[]`, each
//! span's `attributes` a list of `{key, value: {stringValue | intValue | … | arrayValue |
//! kvlistValue}}` (a flat `{key: value}` object is read too). A chat span
//! (`gen_ai.operation.name` `chat`, `text_completion` or `generate_content`) carries
//! `gen_ai.input.messages` and `gen_ai.output.messages` — JSON strings or structured — of
//! `{role, parts}`, a call being a part `{type: "tool_call", name, arguments}`. The older
//! conventions' `gen_ai.prompt`/`gen_ai.completion` (JSON strings of OpenAI-style messages, on the
//! span or on its `gen_ai.content.prompt`/`gen_ai.content.completion` events) are read as well.
//! Spans of other operations, and chat spans whose content was not captured, are skipped.

use serde_json::{Map, Value};

use super::{Call, Got, Run, Turn, arguments, openai};
use crate::tools::json_kind;

const CHAT_OPERATIONS: [&str; 3] = ["chat", "text_completion", "generate_content"];

pub(super) fn looks_like(v: &Value) -> bool {
    v.get("resourceSpans").is_some()
        || (v.get("spanId").is_some() || v.get("span_id").is_some())
            && v.get("attributes").is_some()
}

pub(super) fn record(v: &Value) -> Result<Vec<(String, Got)>, String> {
    let Some(rs) = v.get("resourceSpans") else {
        if v.get("attributes").is_some() {
            return Ok(vec![("".into(), span(v)?)]);
        }
        return Err(format!(
            "expected an OTLP/JSON export {{resourceSpans: […]}} or a span, found {}",
            if v.is_object() {
                "an object without either".to_string()
            } else {
                json_kind(v).to_string()
            }
        ));
    };
    let mut out = Vec::new();
    for (i, r) in list(rs, "/resourceSpans")?.iter().enumerate() {
        let scopes = r
            .get("scopeSpans")
            .or_else(|| r.get("instrumentationLibrarySpans"));
        let Some(scopes) = scopes else { continue };
        for (j, s) in list(scopes, &format!("/resourceSpans/{i}/scopeSpans"))?
            .iter()
            .enumerate()
        {
            let Some(spans) = s.get("spans") else {
                continue;
            };
            let at = format!("/resourceSpans/{i}/scopeSpans/{j}/spans");
            for (k, sp) in list(spans, &at)?.iter().enumerate() {
                let at = format!("{at}/{k}");
                // One bad span is malformed alone: the rest of the export is still read.
                out.push((at, span(sp).unwrap_or_else(Got::Malformed)));
            }
        }
    }
    Ok(out)
}

fn list<'a>(v: &'a Value, at: &str) -> Result<&'a Vec<Value>, String> {
    v.as_array()
        .ok_or_else(|| format!("{at}: expected a list, found {}", json_kind(v)))
}

/// One span: its operation, then its messages.
fn span(sp: &Value) -> Result<Got, String> {
    let attrs = attributes(sp.get("attributes"))?;
    let name = sp.get("name").and_then(Value::as_str).unwrap_or("");
    let op = attrs.get("gen_ai.operation.name").and_then(Value::as_str);
    let events: Vec<(String, Map<String, Value>)> = match sp.get("events") {
        Some(Value::Array(evs)) => evs
            .iter()
            .map(|e| {
                Ok((
                    e.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    attributes(e.get("attributes"))?,
                ))
            })
            .collect::<Result<_, String>>()?,
        _ => Vec::new(),
    };
    let legacy = |key: &str, event: &str| {
        attrs.get(key).cloned().or_else(|| {
            events
                .iter()
                .find(|(n, _)| n == event)
                .and_then(|(_, a)| a.get(key).cloned())
        })
    };
    let input = attrs.get("gen_ai.input.messages").cloned();
    let old_prompt = legacy("gen_ai.prompt", "gen_ai.content.prompt");
    match op {
        Some("execute_tool") => {
            let tool = attrs.get("gen_ai.tool.name").and_then(Value::as_str);
            let why = format!("span {name:?}: operation \"execute_tool\", not a chat");
            let Some(tool) = tool else {
                return Ok(Got::Skip(format!("{why}, and no gen_ai.tool.name")));
            };
            let status = sp.pointer("/status/code");
            let failed = matches!(status, Some(Value::Number(n)) if n.as_u64() == Some(2))
                || matches!(status, Some(Value::String(s)) if s == "STATUS_CODE_ERROR" || s == "ERROR")
                || attrs.contains_key("error.type");
            let run = Run {
                name: tool.to_string(),
                error: failed,
                call: false,
                arguments: None,
                description: None,
            };
            return Ok(Got::Ran(run, why));
        }
        Some(op) if !CHAT_OPERATIONS.contains(&op) => {
            return Ok(Got::Skip(format!(
                "span {name:?}: operation {op:?}, not a chat"
            )));
        }
        None if input.is_none() && old_prompt.is_none() => {
            return Ok(Got::Skip(format!("span {name:?}: not a GenAI chat span")));
        }
        _ => {}
    }
    if let Some(input) = input {
        let turns = parts_messages(
            &json_value(&input, "gen_ai.input.messages")?,
            "gen_ai.input.messages",
        )?
        .into_iter()
        .map(|m| Turn::new(&m.role, m.text, m.tool_result))
        .collect();
        let calls = match attrs.get("gen_ai.output.messages") {
            None => {
                return Ok(Got::Skip(format!(
                    "span {name:?}: no gen_ai.output.messages recorded"
                )));
            }
            Some(out) => parts_messages(
                &json_value(out, "gen_ai.output.messages")?,
                "gen_ai.output.messages",
            )?
            .into_iter()
            .filter(|m| m.role == "assistant")
            .flat_map(|m| m.calls)
            .collect(),
        };
        return Ok(Got::Logged(turns, calls));
    }
    let Some(prompt) = old_prompt else {
        return Ok(Got::Skip(format!(
            "span {name:?}: no messages recorded (content capture off?)"
        )));
    };
    let prompt = json_value(&prompt, "gen_ai.prompt")?;
    let turns = openai::messages(&Value::Object(Map::from_iter([(
        "messages".into(),
        prompt,
    )])))
    .map_err(|e| format!("gen_ai.prompt: {e}"))?;
    let Some(completion) = legacy("gen_ai.completion", "gen_ai.content.completion") else {
        return Ok(Got::Skip(format!(
            "span {name:?}: no gen_ai.completion recorded"
        )));
    };
    let mut calls = Vec::new();
    for (i, m) in list(
        &json_value(&completion, "gen_ai.completion")?,
        "gen_ai.completion",
    )?
    .iter()
    .enumerate()
    {
        // A message, or a choice wrapping one.
        let m = m.get("message").unwrap_or(m);
        let m = m
            .as_object()
            .ok_or_else(|| format!("gen_ai.completion/{i}: expected a message object"))?;
        calls.extend(openai::message_calls(m).map_err(|e| format!("gen_ai.completion/{i}: {e}"))?);
    }
    Ok(Got::Logged(turns, calls))
}

/// The names of the tools a chat span offered (`gen_ai.tool.definitions`: a list of
/// `{name, …}` or `{type: function, function: {name}}`), `None` when the span does not say.
pub(super) fn offered(span: &Value) -> Option<Vec<String>> {
    let attrs = attributes(span.get("attributes")).ok()?;
    let defs = json_value(attrs.get("gen_ai.tool.definitions")?, "").ok()?;
    super::tool_names(&defs)
}

/// A span's session (`session.id`, else `gen_ai.conversation.id`), start time, offered
/// definitions and attributes.
pub(super) fn context(span: &Value) -> super::Context {
    let attrs = attributes(span.get("attributes")).unwrap_or_default();
    let text = |k: &str| match attrs.get(k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let nanos = match span.get("startTimeUnixNano") {
        Some(Value::String(s)) => s.parse::<f64>().ok(),
        Some(v) => v.as_f64(),
        None => None,
    };
    super::Context {
        session: text("session.id").or_else(|| text("gen_ai.conversation.id")),
        time: nanos.map(|n| n / 1e9),
        definitions: attrs
            .get("gen_ai.tool.definitions")
            .and_then(|d| json_value(d, "").ok())
            .and_then(|d| d.as_array().cloned()),
        attributes: attrs,
    }
}

/// An attribute that holds JSON: a string of it, or the value itself (structured attributes).
fn json_value(v: &Value, key: &str) -> Result<Value, String> {
    match v {
        Value::String(s) => serde_json::from_str(s).map_err(|e| format!("{key}: not JSON: {e}")),
        v => Ok(v.clone()),
    }
}

/// One `{role, parts}` message: its text parts joined, its tool calls, whether it carries tool
/// results.
struct PartsMessage {
    role: String,
    text: String,
    calls: Vec<Call>,
    tool_result: bool,
}

/// `[{role, parts}]`, each message read.
fn parts_messages(v: &Value, key: &str) -> Result<Vec<PartsMessage>, String> {
    list(v, key)?
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m.get("role").and_then(Value::as_str).ok_or_else(|| {
                format!("{key}/{i}: expected {{role, parts}} with a string `role`")
            })?;
            let parts = m.get("parts").and_then(Value::as_array).ok_or_else(|| {
                format!("{key}/{i}: expected {{role, parts}} with a list of `parts`")
            })?;
            let (mut texts, mut calls, mut result) = (Vec::new(), Vec::new(), false);
            for (j, p) in parts.iter().enumerate() {
                match p.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        texts.push(p.get("content").and_then(Value::as_str).ok_or_else(|| {
                            format!("{key}/{i}/parts/{j}: a text part without a string `content`")
                        })?)
                    }
                    Some("tool_call") => calls.push(Call {
                        name: p
                            .get("name")
                            .and_then(Value::as_str)
                            .filter(|n| !n.is_empty())
                            .ok_or_else(|| {
                                format!("{key}/{i}/parts/{j}: a tool_call part without a `name`")
                            })?
                            .to_string(),
                        arguments: arguments(p.get("arguments")),
                    }),
                    Some("tool_call_response") => result = true,
                    Some(_) => {}
                    None => {
                        return Err(format!(
                            "{key}/{i}/parts/{j}: expected a part with a `type`"
                        ));
                    }
                }
            }
            Ok(PartsMessage {
                role: role.to_string(),
                text: texts.join("\n"),
                calls,
                tool_result: result,
            })
        })
        .collect()
}

/// Span or event attributes as a map: OTLP's `[{key, value: AnyValue}]`, or a flat object.
fn attributes(v: Option<&Value>) -> Result<Map<String, Value>, String> {
    match v {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Array(kvs)) => kvs
            .iter()
            .enumerate()
            .map(|(i, kv)| {
                let key = kv
                    .get("key")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("attributes/{i}: expected {{key, value}}"))?;
                Ok((
                    key.to_string(),
                    any_value(kv.get("value").unwrap_or(&Value::Null)),
                ))
            })
            .collect(),
        Some(Value::Object(o)) => Ok(o.iter().map(|(k, v)| (k.clone(), any_value(v))).collect()),
        Some(other) => Err(format!(
            "attributes: expected a list of {{key, value}}, found {}",
            json_kind(other)
        )),
    }
}

/// OTLP/JSON's `AnyValue` as plain JSON; a value that is not one is kept as it is.
fn any_value(v: &Value) -> Value {
    let Some(o) = v.as_object().filter(|o| o.len() == 1) else {
        return v.clone();
    };
    let (k, x) = o.iter().next().expect("one key");
    match k.as_str() {
        "stringValue" | "boolValue" | "doubleValue" | "bytesValue" => x.clone(),
        // int64 is a JSON string in OTLP/JSON.
        "intValue" => x
            .as_str()
            .and_then(|s| s.parse::<i64>().ok())
            .map(Value::from)
            .unwrap_or_else(|| x.clone()),
        "arrayValue" => Value::Array(
            x.get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(any_value).collect())
                .unwrap_or_default(),
        ),
        "kvlistValue" => Value::Object(
            x.get("values")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|kv| {
                            Some((
                                kv.get("key")?.as_str()?.to_string(),
                                any_value(kv.get("value").unwrap_or(&Value::Null)),
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        _ => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn attr(k: &str, v: &str) -> Value {
        json!({"key": k, "value": {"stringValue": v}})
    }

    #[test]
    fn a_chat_span_gives_its_input_and_the_tool_call_parts_of_its_output() {
        let export = json!({"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [
            {"traceId": "t", "spanId": "s1", "name": "chat gpt-4o", "attributes": [
                attr("gen_ai.operation.name", "chat"),
                attr("gen_ai.input.messages", r#"[{"role":"user","parts":[{"type":"text","content":"Cancel order 17"}]}]"#),
                attr("gen_ai.output.messages", r#"[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"cancel_order","arguments":{"order_id":"17"}}],"finish_reason":"tool_call"}]"#)]},
            {"traceId": "t", "spanId": "s2", "name": "execute_tool cancel_order", "attributes": [attr("gen_ai.operation.name", "execute_tool")]},
            {"traceId": "t", "spanId": "s3", "name": "GET /", "attributes": [{"key": "http.status_code", "value": {"intValue": "200"}}]}
        ]}]}]});
        let got = record(&export).unwrap();
        assert_eq!(got[0].0, "/resourceSpans/0/scopeSpans/0/spans/0");
        let Got::Logged(turns, calls) = &got[0].1 else {
            panic!("{:?}", got[0])
        };
        assert_eq!(turns[0].text, "Cancel order 17");
        assert_eq!(calls[0].name, "cancel_order");
        assert!(
            matches!(&got[1].1, Got::Ran(_, w) | Got::Skip(w) if w.contains("\"execute_tool\", not a chat"))
        );
        assert!(matches!(&got[2].1, Got::Skip(w) if w.contains("not a GenAI chat span")));
    }

    #[test]
    fn a_span_s_context_and_tool_executions_are_read_for_watch() {
        let chat = json!({"spanId": "s1", "name": "chat", "startTimeUnixNano": "1767225600500000000",
            "attributes": [attr("session.id", "u-1"), attr("gen_ai.operation.name", "chat"),
                attr("gen_ai.tool.definitions", r#"[{"type":"function","name":"a","description":"d","parameters":{}}]"#)]});
        let ctx = context(&chat);
        assert_eq!(ctx.session.as_deref(), Some("u-1"));
        assert_eq!(ctx.time, Some(1767225600.5));
        assert_eq!(ctx.definitions.unwrap()[0]["name"], "a");
        // gen_ai.conversation.id when there is no session.id.
        let conv = json!({"attributes": [attr("gen_ai.conversation.id", "c-9")]});
        assert_eq!(context(&conv).session.as_deref(), Some("c-9"));
        let failed = json!({"spanId": "s2", "name": "execute_tool a", "status": {"code": 2},
            "attributes": [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "a")]});
        assert!(matches!(span(&failed).unwrap(), Got::Ran(r, _) if r.name == "a" && r.error));
        let typed = json!({"spanId": "s3", "name": "execute_tool a",
            "attributes": [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "a"), attr("error.type", "timeout")]});
        assert!(matches!(span(&typed).unwrap(), Got::Ran(r, _) if r.error));
        let ok = json!({"spanId": "s4", "name": "execute_tool a", "status": {"code": "STATUS_CODE_OK"},
            "attributes": [attr("gen_ai.operation.name", "execute_tool"), attr("gen_ai.tool.name", "a")]});
        assert!(matches!(span(&ok).unwrap(), Got::Ran(r, _) if !r.error));
        let nameless = json!({"spanId": "s5", "name": "execute_tool",
            "attributes": [attr("gen_ai.operation.name", "execute_tool")]});
        assert!(
            matches!(span(&nameless).unwrap(), Got::Skip(w) if w.contains("no gen_ai.tool.name"))
        );
    }

    #[test]
    fn structured_attributes_and_the_older_prompt_completion_events_are_read() {
        assert_eq!(
            any_value(
                &json!({"arrayValue": {"values": [{"intValue": "3"}, {"kvlistValue": {"values": [{"key": "a", "value": {"boolValue": true}}]}}]}})
            ),
            json!([3, {"a": true}])
        );
        let sp = json!({"spanId": "s", "name": "chat", "attributes": {"gen_ai.system": "openai"}, "events": [
            {"name": "gen_ai.content.prompt", "attributes": [attr("gen_ai.prompt", r#"[{"role":"user","content":"hi"}]"#)]},
            {"name": "gen_ai.content.completion", "attributes": [attr("gen_ai.completion", r#"[{"role":"assistant","content":"hello"}]"#)]}]});
        let Got::Logged(turns, calls) = span(&sp).unwrap() else {
            panic!()
        };
        assert_eq!(turns[0].text, "hi");
        assert!(calls.is_empty());
        let e = span(&json!({"attributes": [attr("gen_ai.operation.name", "chat"), attr("gen_ai.input.messages", "[{")]})).unwrap_err();
        assert!(e.starts_with("gen_ai.input.messages: not JSON"), "{e}");
    }
}
