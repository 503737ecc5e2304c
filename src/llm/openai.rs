//! OpenAI-compatible Chat Completions: api.openai.com, Azure OpenAI, llama.cpp's `llama-server`,
//! vLLM, Ollama and the other servers that speak `POST …/chat/completions` with `tools`.
//!
//! llama.cpp quirk: when the model's output does not fit the tool-call format, `llama-server`
//! answers HTTP 500 "The model produced output that does not match the expected … format" (seen
//! with `tool_choice: "auto"` on chit-chat prompts). That is the model failing, not the server:
//! at temperature 0 a retry returns the same 500, so it is reported as `Answer::Malformed` and
//! never retried. Any other 500 stays a transient server error.

use serde_json::{Map, Value, json};

use super::{
    Answer, ChatRequest, ToolChoice, Usage, f32_json, not_an_answer, reply_json, tool_spec,
};
use crate::http::secret::clean_message;
use crate::http::{self, Failure, Reply};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The exact JSON body sent for `req`.
pub fn body(model: &str, req: &ChatRequest<'_>) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in req.messages {
        messages.push(json!({"role": m.role, "content": m.content}));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    // OpenAI rejects an empty `tools` array and a `tool_choice` without tools; a side with no
    // tools left is still a valid question (the answer can only be text).
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": tool_spec(t, "parameters")}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match req.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
        };
        body.insert("tool_choice".into(), json!(choice));
        // Only the first call is read; asking for one keeps models from splitting intent.
        // llama.cpp accepts the field too (measured, see docs/llm-server.md).
        body.insert("parallel_tool_calls".into(), json!(false));
    }
    body.insert("temperature".into(), f32_json(req.sampling.temperature));
    if let Some(seed) = req.sampling.seed {
        body.insert("seed".into(), json!(seed));
    }
    body.insert("max_tokens".into(), json!(req.sampling.max_tokens));
    if let Some((name, schema)) = req.json_schema {
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": {"name": name, "strict": true, "schema": schema},
            }),
        );
    }
    Value::Object(body)
}

/// The answer and usage of a reply: a failure for a non-success status (except llama.cpp's
/// unparsed tool call, which is the model's answer).
pub(super) fn read(reply: &Reply) -> Result<(Answer, Option<Usage>), Failure> {
    if !reply.status.is_success() {
        if let Some(detail) = llama_unparsed_output(reply) {
            return Ok((Answer::Malformed { detail }, None));
        }
        return Err(http::http_error(reply));
    }
    let v = reply_json(reply)?;
    let answer = read_answer(&v).map_err(|why| not_an_answer(reply, &why))?;
    Ok((answer, read_usage(&v)))
}

/// `Some(detail)` when `reply` is llama.cpp's HTTP 500 for model output it could not parse as a
/// tool call (see the module docs); `None` for every other failure.
fn llama_unparsed_output(reply: &Reply) -> Option<String> {
    if reply.status.as_u16() != 500 {
        return None;
    }
    let message = http::provider_error_message(&reply.body);
    let unparsed = message.contains("does not match the expected")
        || message.contains("Failed to parse tool call arguments");
    unparsed.then(|| {
        format!("the server could not read the model's output as a tool call (HTTP 500): {message}")
    })
}

/// `choices[0].message`: its first tool call, else its text. `Err` when the body is not a Chat
/// Completions answer at all (no choices, no message, an error body, a call without a name): a
/// broken endpoint, not a model's answer.
pub fn read_answer(value: &Value) -> Result<Answer, String> {
    let Some(choice) = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        // Some proxies answer 200 with an error body.
        return Err(match value.get("error") {
            Some(_) => format!(
                "an error in a successful response: {}",
                http::provider_error_message(&value.to_string())
            ),
            None => format!(
                "no choices[0] in the response: {}",
                clean_message(&value.to_string(), &[])
            ),
        });
    };
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return Err("choices[0] has no message object".into());
    };
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .filter(|calls| !calls.is_empty());
    if let Some(calls) = calls {
        let mut answer = read_call(calls[0].get("function").unwrap_or(&Value::Null))?;
        let mut names = Vec::new();
        for call in &calls[1..] {
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or("a tool call without a function name")?;
            names.push(name.to_string());
        }
        if let Answer::Call { others, .. } = &mut answer {
            *others = names;
        }
        return Ok(answer);
    }
    // The pre-`tools` API, still spoken by some compatible servers.
    if let Some(call) = message.get("function_call").filter(|c| c.is_object()) {
        return read_call(call);
    }
    match message.get("content") {
        Some(Value::String(s)) => Ok(Answer::NoCall { text: s.clone() }),
        Some(Value::Array(parts)) => Ok(Answer::NoCall {
            text: parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        }),
        None | Some(Value::Null) => Ok(Answer::NoCall {
            // A refusal is the model's text answer.
            text: message
                .get("refusal")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        }),
        Some(other) => Err(format!(
            "choices[0].message.content is a {}",
            crate::tools::json_kind(other)
        )),
    }
}

/// `{name, arguments}` of one call. `arguments` is a JSON string on the wire; a few servers send
/// the object itself, which is accepted. Arguments that do not parse are the model's (bad)
/// answer; a call without a name is no answer.
fn read_call(function: &Value) -> Result<Answer, String> {
    let Some(name) = function.get("name").and_then(Value::as_str) else {
        return Err("a tool call without a function name".into());
    };
    let (arguments, raw_arguments) = match function.get("arguments") {
        None | Some(Value::Null) => (None, String::new()),
        Some(Value::String(raw)) => (
            serde_json::from_str::<Value>(raw)
                .ok()
                .filter(Value::is_object),
            raw.clone(),
        ),
        Some(v) => (Some(v.clone()).filter(Value::is_object), v.to_string()),
    };
    Ok(Answer::Call {
        name: name.to_string(),
        arguments,
        raw_arguments,
        others: Vec::new(),
    })
}

pub(super) fn read_usage(value: &Value) -> Option<Usage> {
    let usage = value.get("usage")?;
    Some(Usage {
        input_tokens: usage.get("prompt_tokens")?.as_u64()?,
        output_tokens: usage.get("completion_tokens")?.as_u64()?,
        // OpenAI and Azure report the cached part here; llama.cpp and older servers leave it out.
        cached_input_tokens: usage
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        cache_write_tokens: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(v: Value) -> Answer {
        read_answer(&v).expect("an answer")
    }

    #[test]
    fn first_tool_call_wins_and_arguments_parse_only_as_objects() {
        let call = |args: Value| {
            answer(json!({"choices":[{"message":{"tool_calls":[
                {"function":{"name":"a","arguments":args}},
                {"function":{"name":"b","arguments":"{}"}}]}}]}))
        };
        assert_eq!(
            call(json!("{\"path\":\"x\"}")),
            Answer::Call {
                name: "a".into(),
                arguments: Some(json!({"path":"x"})),
                raw_arguments: "{\"path\":\"x\"}".into(),
                others: vec!["b".into()],
            }
        );
        for raw in ["{path: x}", "[1]", "null", ""] {
            assert_eq!(
                call(json!(raw)),
                Answer::Call {
                    name: "a".into(),
                    arguments: None,
                    raw_arguments: raw.into(),
                    others: vec!["b".into()],
                },
                "{raw:?}"
            );
        }
        // Object instead of string: accepted.
        assert_eq!(
            call(json!({"n": 1})),
            Answer::Call {
                name: "a".into(),
                arguments: Some(json!({"n":1})),
                raw_arguments: "{\"n\":1}".into(),
                others: vec!["b".into()],
            }
        );
    }

    #[test]
    fn every_call_is_read_and_a_nameless_one_is_no_answer() {
        let v = json!({"choices":[{"message":{"tool_calls":[
            {"function":{"name":"read","arguments":"{}"}},
            {"function":{"name":"delete","arguments":"{}"}}]}}]});
        match read_answer(&v).unwrap() {
            Answer::Call { name, others, .. } => {
                assert_eq!(
                    (name.as_str(), others),
                    ("read", vec!["delete".to_string()])
                )
            }
            other => panic!("{other:?}"),
        }
        let v = json!({"choices":[{"message":{"tool_calls":[
            {"function":{"name":"read","arguments":"{}"}}, {"function":{}}]}}]});
        assert!(read_answer(&v).is_err());
    }

    #[test]
    fn text_answers_refusals_and_legacy_function_calls() {
        assert_eq!(
            answer(json!({"choices":[{"message":{"content":"hi","tool_calls":[]}}]})),
            Answer::NoCall { text: "hi".into() }
        );
        assert_eq!(
            answer(json!({"choices":[{"message":{"content":null,"refusal":"no"}}]})),
            Answer::NoCall { text: "no".into() }
        );
        assert_eq!(
            answer(
                json!({"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]})
            ),
            Answer::NoCall { text: "ab".into() }
        );
        assert!(matches!(
            answer(json!({"choices":[{"message":{"function_call":{"name":"f","arguments":"{}"}}}]})),
            Answer::Call { name, .. } if name == "f"
        ));
    }

    #[test]
    fn shapes_that_are_not_answers_are_no_answer() {
        for v in [
            json!({}),
            json!({"choices": []}),
            json!({"choices": "x"}),
            json!({"choices": [{}]}),
            json!({"choices": [{"message": {"content": 5}}]}),
            json!({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}),
            json!({"error": {"message": "quota", "type": "insufficient_quota"}}),
        ] {
            assert!(read_answer(&v).is_err(), "{v}");
        }
    }

    #[test]
    fn usage_needs_both_counts() {
        assert_eq!(
            read_usage(&json!({"usage":{"prompt_tokens":3,"completion_tokens":4}})),
            Some(Usage {
                input_tokens: 3,
                output_tokens: 4,
                ..Usage::default()
            })
        );
        // OpenAI's usage object with a prompt-cache hit: cached tokens are part of prompt_tokens.
        let hit = json!({"usage":{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,
            "prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},
            "completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0}}});
        assert_eq!(
            read_usage(&hit),
            Some(Usage {
                input_tokens: 2006,
                output_tokens: 300,
                cached_input_tokens: 1920,
                cache_write_tokens: 0
            })
        );
        assert_eq!(read_usage(&json!({"usage":{"prompt_tokens":3}})), None);
        assert_eq!(read_usage(&json!({})), None);
    }
}
