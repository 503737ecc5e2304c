//! Anthropic Messages logs. A line is `{request, response}`: the request body (`system`,
//! `messages[]` of `{role, content}`, content a string or blocks, `tools`) and the response body
//! (`{type: "message", content: [blocks]}`, a call being a `{type: "tool_use", name, input}`
//! block). A user turn with `tool_result` blocks is a tool result. Message Batches lines are read
//! too: an input `{custom_id, params}` and a result `{custom_id, result: {type, message}}`.

use serde_json::Value;

use super::{Call, Got, Turn, text_of};
use crate::tools::json_kind;

pub(super) fn looks_like(v: &Value) -> bool {
    let message = |m: Option<&Value>| {
        m.is_some_and(|m| m.get("type").and_then(Value::as_str) == Some("message"))
    };
    message(v.get("response"))
        || message(v.get("result").and_then(|r| r.get("message")))
        || (v.get("custom_id").is_some()
            && v.get("params").and_then(|p| p.get("messages")).is_some())
}

pub(super) fn record(v: &Value) -> Result<Vec<(String, Got)>, String> {
    if let Some(id) = super::batch_id(v)? {
        if let Some(params) = v.get("params") {
            return Ok(vec![("".into(), Got::Request(id, messages(params)?))]);
        }
        let result = v
            .get("result")
            .ok_or("a batch line needs `params` (input) or `result` (output)")?;
        let r = match result.get("type").and_then(Value::as_str) {
            Some("succeeded") => Ok(calls(
                result
                    .get("message")
                    .ok_or("`result`: a succeeded result without `message`")?,
            )
            .map_err(|e| format!("`result/message`: {e}"))?),
            Some(other) => Err(format!("batch request {id:?} {other}")),
            None => {
                return Err("`result`: expected {type: succeeded|errored|canceled|expired}".into());
            }
        };
        return Ok(vec![("".into(), Got::Response(id, r))]);
    }
    let request = v
        .get("request")
        .ok_or("missing `request`: expected {request: {messages, …}, response: {type: \"message\", content, …}}")?;
    let turns = messages(request).map_err(|e| format!("`request`: {e}"))?;
    let got = match v.get("response") {
        None | Some(Value::Null) => Got::Skip("no response logged".into()),
        Some(r) if r.get("type").and_then(Value::as_str) == Some("error") => {
            Got::Skip("the request failed (an error response)".into())
        }
        Some(r) => Got::Logged(turns, calls(r).map_err(|e| format!("`response`: {e}"))?),
    };
    Ok(vec![("".into(), got)])
}

/// The request's conversation (the `system` field is not a turn: it is left out).
fn messages(request: &Value) -> Result<Vec<Turn>, String> {
    let list = super::message_list(request, "the request's message list")?;
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .filter(|r| matches!(*r, "user" | "assistant"))
                .ok_or_else(|| {
                    format!("/messages/{i}: expected {{role: user|assistant, content}}")
                })?;
            let content = m.get("content");
            let tool_result = content.and_then(Value::as_array).is_some_and(|blocks| {
                blocks
                    .iter()
                    .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            });
            let text = text_of(content, &format!("/messages/{i}/content"))?;
            Ok(Turn::new(role, text, tool_result))
        })
        .collect()
}

/// The `tool_use` blocks of a response message.
fn calls(message: &Value) -> Result<Vec<Call>, String> {
    let blocks = match message.get("content") {
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(format!(
                "`content`: expected a list of blocks, found {}",
                json_kind(other)
            ));
        }
        None => return Err("missing `content`: expected the message's content blocks".into()),
    };
    let mut out = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        if b.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let name = b
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| format!("/content/{i}: a tool_use block without a `name`"))?;
        out.push(Call {
            name: name.to_string(),
            arguments: b.get("input").and_then(Value::as_object).cloned(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_use_blocks_are_the_calls_and_tool_results_are_not_prompts() {
        let v = json!({"request": {"model": "claude-sonnet-4-5", "system": "Be brief.", "max_tokens": 1024,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Find flights to Lima"}]}]},
            "response": {"id": "msg_1", "type": "message", "role": "assistant", "content": [
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "toolu_1", "name": "search_flights", "input": {"to": "LIM"}}],
                "stop_reason": "tool_use"}});
        assert!(looks_like(&v));
        let Got::Logged(turns, calls) = record(&v).unwrap().pop().unwrap().1 else {
            panic!()
        };
        assert_eq!(turns[0].text, "Find flights to Lima");
        assert_eq!(calls[0].name, "search_flights");
        assert_eq!(calls[0].arguments.as_ref().unwrap()["to"], "LIM");
        let v = json!({"request": {"messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 flights"}]}]},
            "response": {"type": "message", "content": []}});
        let Got::Logged(turns, _) = record(&v).unwrap().pop().unwrap().1 else {
            panic!()
        };
        assert!(turns[0].tool_result);
        let e = record(&json!({"request": {"messages": [{"role": "system", "content": "x"}]}, "response": {"type": "message", "content": []}})).unwrap_err();
        assert_eq!(
            e,
            "`request`: /messages/0: expected {role: user|assistant, content}"
        );
    }
}
