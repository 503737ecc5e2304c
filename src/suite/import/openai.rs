//! OpenAI Chat Completions logs. A line is `{request, response}`: the request body
//! (`messages`, `tools`) and the response body (`choices[0].message.tool_calls[].function.{name,
//! arguments}`, `arguments` a JSON string); a response wrapped as `{status_code, body}` is
//! unwrapped, and one that is not 2xx is skipped. Batch API lines are read too: an input line
//! `{custom_id, method, url, body}` and an output line `{custom_id, response: {status_code, body},
//! error}`, paired by `custom_id` across the files read.

use serde_json::Value;

use super::{Call, Got, Turn, arguments, object, text_of};
use crate::tools::json_kind;

pub(super) fn looks_like(v: &Value) -> bool {
    let response = v.get("response");
    let completion = response
        .and_then(|r| r.get("body").or(Some(r)))
        .is_some_and(|r| {
            r.get("choices").is_some()
                || r.get("object").and_then(Value::as_str) == Some("chat.completion")
        });
    let batch_input =
        v.get("custom_id").is_some() && v.get("body").and_then(|b| b.get("messages")).is_some();
    completion || batch_input
}

pub(super) fn record(v: &Value) -> Result<Vec<(String, Got)>, String> {
    if let Some(id) = super::batch_id(v)? {
        if let Some(body) = v.get("body") {
            return Ok(vec![("".into(), Got::Request(id, messages(body)?))]);
        }
        if v.get("response").is_some() || v.get("error").is_some() {
            let r = match (v.get("response"), v.get("error")) {
                (_, Some(e)) if !e.is_null() => Err(format!(
                    "batch request {id:?} failed: {}",
                    e.get("message").and_then(Value::as_str).unwrap_or("error")
                )),
                (Some(resp), _) => match unwrap_http(resp)? {
                    Ok(body) => Ok(calls(body)?),
                    Err(why) => Err(format!("batch request {id:?}: {why}")),
                },
                _ => Err(format!(
                    "batch request {id:?} has neither response nor error"
                )),
            };
            return Ok(vec![("".into(), Got::Response(id, r))]);
        }
        return Err("a batch line needs `body` (input) or `response` (output)".into());
    }
    let request = match v.get("request") {
        Some(r) => r,
        None if v.get("messages").is_some() => v,
        None => {
            return Err(
                "missing `request`: expected {request: {messages, …}, response: {choices, …}}"
                    .into(),
            );
        }
    };
    let turns = messages(request).map_err(|e| format!("`request`: {e}"))?;
    let got = match v.get("response") {
        None | Some(Value::Null) => Got::Skip("no response logged".into()),
        Some(resp) => match unwrap_http(resp).map_err(|e| format!("`response`: {e}"))? {
            Ok(body) => Got::Logged(turns, calls(body).map_err(|e| format!("`response`: {e}"))?),
            Err(why) => Got::Skip(why),
        },
    };
    Ok(vec![("".into(), got)])
}

/// A response body, unwrapped from `{status_code, body}` when it is wrapped; `Ok(Err)` when the
/// request failed (not 2xx, or an `error` body).
fn unwrap_http(resp: &Value) -> Result<Result<&Value, String>, String> {
    if let Some(code) = resp.get("status_code") {
        let code = code.as_u64().ok_or("`status_code`: expected a number")?;
        if !(200..300).contains(&code) {
            return Ok(Err(format!("the request failed (HTTP {code})")));
        }
        return Ok(Ok(resp
            .get("body")
            .ok_or("missing `body` beside `status_code`")?));
    }
    if resp.get("error").is_some_and(|e| !e.is_null()) && resp.get("choices").is_none() {
        return Ok(Err("the request failed (an error response)".into()));
    }
    Ok(Ok(resp))
}

/// The request's conversation: `messages[]` of `{role, content}`, content a string, null or
/// parts; `tool` (and legacy `function`) messages are tool results.
pub(super) fn messages(request: &Value) -> Result<Vec<Turn>, String> {
    let list = super::message_list(request, "the chat request's message list")?;
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m.get("role").and_then(Value::as_str).ok_or_else(|| {
                format!("/messages/{i}: expected {{role, content}} with a string `role`")
            })?;
            let text = text_of(m.get("content"), &format!("/messages/{i}/content"))?;
            Ok(Turn::new(role, text, false))
        })
        .collect()
}

/// The calls of a chat completion: its first choice's `message.tool_calls` (and the legacy
/// `function_call`).
fn calls(body: &Value) -> Result<Vec<Call>, String> {
    let choices = match body.get("choices") {
        Some(Value::Array(a)) if !a.is_empty() => a,
        Some(Value::Array(_)) => return Err("`choices`: empty".into()),
        _ => return Err("missing `choices`: expected a chat completion".into()),
    };
    let message = object(&choices[0], "message", "the choice's message")
        .map_err(|e| format!("/choices/0: {e}"))?;
    message_calls(message).map_err(|e| format!("/choices/0/message: {e}"))
}

/// The tool calls of an assistant message in OpenAI's shape.
pub(super) fn message_calls(message: &serde_json::Map<String, Value>) -> Result<Vec<Call>, String> {
    let mut out = Vec::new();
    match message.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => {
            for (i, c) in a.iter().enumerate() {
                // `function` tools; `custom` tools name themselves the same way.
                let f = c.get("function").or_else(|| c.get("custom"));
                let name = f
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| {
                        format!("`tool_calls/{i}`: expected {{function: {{name, arguments}}}}")
                    })?;
                out.push(Call {
                    name: name.to_string(),
                    arguments: arguments(f.and_then(|f| f.get("arguments"))),
                });
            }
        }
        Some(other) => {
            return Err(format!(
                "`tool_calls`: expected a list, found {}",
                json_kind(other)
            ));
        }
    }
    if let Some(f) = message.get("function_call").filter(|f| !f.is_null()) {
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or("`function_call`: expected {name, arguments} with a non-empty `name`")?;
        out.push(Call {
            name: name.to_string(),
            arguments: arguments(f.get("arguments")),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(v: Value) -> Got {
        record(&v).unwrap().pop().unwrap().1
    }

    #[test]
    fn a_logged_call_gives_its_name_and_parsed_arguments() {
        let g = one(json!({
            "request": {"model": "gpt-4o", "messages": [
                {"role": "system", "content": "You help."},
                {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]}],
                "tools": [{"type": "function", "function": {"name": "get_weather"}}]},
            "response": {"object": "chat.completion", "choices": [{"index": 0, "message": {
                "role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
                "finish_reason": "tool_calls"}]}
        }));
        let Got::Logged(turns, calls) = g else {
            panic!("{g:?}")
        };
        assert_eq!(turns.len(), 2);
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(calls[0].arguments.as_ref().unwrap()["city"], "Oslo");
    }

    #[test]
    fn failed_and_malformed_lines_say_why() {
        let g = one(
            json!({"request": {"messages": [{"role": "user", "content": "x"}]},
            "response": {"status_code": 429, "body": {"error": {"message": "slow down"}}}}),
        );
        assert!(
            matches!(g, Got::Skip(ref w) if w == "the request failed (HTTP 429)"),
            "{g:?}"
        );
        let e = record(&json!({"request": {"messages": [{"content": "x"}]}, "response": {}}))
            .unwrap_err();
        assert_eq!(
            e,
            "`request`: /messages/0: expected {role, content} with a string `role`"
        );
        let e =
            record(&json!({"request": {"messages": []}, "response": {"choices": []}})).unwrap_err();
        assert_eq!(e, "`response`: `choices`: empty");
        let e = record(&json!({"request": {"messages": []}, "response": {"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}})).unwrap_err();
        assert_eq!(
            e,
            "`response`: /choices/0/message: `tool_calls/0`: expected {function: {name, arguments}}"
        );
        // A legacy `function_call` with a blank name is no call (it would propose `expect: ""`).
        let e = record(&json!({"request": {"messages": []}, "response": {"choices": [{"message": {"function_call": {"name": "", "arguments": "{}"}}}]}})).unwrap_err();
        assert_eq!(
            e,
            "`response`: /choices/0/message: `function_call`: expected {name, arguments} with a non-empty `name`"
        );
    }

    #[test]
    fn batch_lines_are_halves_keyed_by_custom_id() {
        let g = one(
            json!({"custom_id": "r1", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}}),
        );
        assert!(matches!(g, Got::Request(ref id, _) if id == "r1"));
        let g = one(
            json!({"id": "batch_req_1", "custom_id": "r1", "response": {"status_code": 200,
            "request_id": "req_1", "body": {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}}, "error": null}),
        );
        assert!(
            matches!(g, Got::Response(ref id, Ok(ref c)) if id == "r1" && c.is_empty()),
            "{g:?}"
        );
    }
}
