//! Anthropic Messages API: `POST {base}/v1/messages` with `tools`.
//!
//! Differences from Chat Completions that matter here: the system prompt is a top-level field,
//! tools carry `input_schema` directly, "must call a tool" is `tool_choice: {type: "any"}`, tool
//! input arrives as a JSON object (not a string), there is no `seed` and no `response_format`,
//! and 529 means overloaded.

use serde_json::{Map, Value, json};

use super::{
    Answer, ChatRequest, ToolChoice, Usage, f32_json, not_an_answer, reply_json, tool_spec,
};
use crate::http::secret::clean_message;
use crate::http::{self, Failure, Reply};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The Messages API version pinned by header; newer versions may change the wire format.
pub const API_VERSION: &str = "2023-06-01";
/// What a token written to the prompt cache costs, as a multiple of the input price (Anthropic's
/// pricing for the default five-minute cache).
pub const CACHE_WRITE_PRICE: f64 = 1.25;

/// The exact JSON body sent for `req`.
pub fn body(model: &str, req: &ChatRequest<'_>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(req.sampling.max_tokens));
    if !req.system.is_empty() {
        body.insert("system".into(), json!(req.system));
    }
    let messages = req
        .messages
        .iter()
        .map(|m| json!({"role": m.role, "content": m.content}))
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    // `tool_choice` without tools is rejected; with no tools the answer can only be text.
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut spec = tool_spec(t, "input_schema");
                // The API caches the prefix up to a breakpoint (tools come first in it): put one
                // after the tools every case of this order shares, so the next case reads them
                // from the cache. Prefixes under the model's minimum are simply not cached.
                if i + 1 == req.cached_tools {
                    spec.insert("cache_control".into(), json!({"type": "ephemeral"}));
                }
                Value::Object(spec)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match req.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "any",
        };
        body.insert("tool_choice".into(), json!({"type": choice}));
    }
    body.insert("temperature".into(), f32_json(req.sampling.temperature));
    Value::Object(body)
}

/// The answer and usage of a reply; a non-success status is a failure.
pub(super) fn read(reply: &Reply) -> Result<(Answer, Option<Usage>), Failure> {
    if !reply.status.is_success() {
        return Err(http::http_error(reply));
    }
    let v = reply_json(reply)?;
    let answer = read_answer(&v).map_err(|why| not_an_answer(reply, &why))?;
    Ok((answer, read_usage(&v)))
}

/// The first `tool_use` block, else the text blocks joined. `Err` when the body is not a
/// Messages answer at all (an error body, no content array, a `tool_use` without a name).
pub fn read_answer(value: &Value) -> Result<Answer, String> {
    if value.get("type").and_then(Value::as_str) == Some("error") {
        return Err(format!(
            "an error in a successful response: {}",
            http::provider_error_message(&value.to_string())
        ));
    }
    let Some(blocks) = value.get("content").and_then(Value::as_array) else {
        return Err(format!(
            "no content array in the response: {}",
            clean_message(&value.to_string(), &[])
        ));
    };
    let mut tool_uses = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"));
    if let Some(block) = tool_uses.next() {
        let Some(name) = block.get("name").and_then(Value::as_str) else {
            return Err("a tool_use block without a name".into());
        };
        let others = tool_uses
            .map(|b| {
                b.get("name")
                    .and_then(Value::as_str)
                    .map(String::from)
                    .ok_or_else(|| "a tool_use block without a name".to_string())
            })
            .collect::<Result<Vec<String>, String>>()?;
        let input = block.get("input").cloned().unwrap_or(Value::Null);
        return Ok(Answer::Call {
            name: name.to_string(),
            raw_arguments: if input.is_null() {
                String::new()
            } else {
                input.to_string()
            },
            arguments: Some(input).filter(Value::is_object),
            others,
        });
    }
    let text = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    Ok(Answer::NoCall { text })
}

/// Input tokens include prompt-cache reads and writes (the API counts them apart from
/// `input_tokens`): all of them were read by the model, each priced its own way.
pub(super) fn read_usage(value: &Value) -> Option<Usage> {
    let usage = value.get("usage")?;
    let count = |k: &str| usage.get(k).and_then(Value::as_u64);
    let read = count("cache_read_input_tokens").unwrap_or(0);
    let written = count("cache_creation_input_tokens").unwrap_or(0);
    Some(Usage {
        input_tokens: count("input_tokens")? + written + read,
        output_tokens: count("output_tokens")?,
        cached_input_tokens: read,
        cache_write_tokens: written,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_tool_use_block_wins_over_text() {
        let v = json!({"content":[
            {"type":"text","text":"Let me look."},
            {"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a"}},
            {"type":"tool_use","id":"toolu_2","name":"write_file","input":{}}]});
        assert_eq!(
            read_answer(&v).unwrap(),
            Answer::Call {
                name: "read_file".into(),
                arguments: Some(json!({"path":"a"})),
                raw_arguments: "{\"path\":\"a\"}".into(),
                others: vec!["write_file".into()],
            }
        );
    }

    #[test]
    fn every_tool_use_is_read() {
        let v = json!({"content":[
            {"type":"tool_use","name":"read","input":{}},
            {"type":"tool_use","name":"delete","input":{}}]});
        match read_answer(&v).unwrap() {
            Answer::Call { others, .. } => assert_eq!(others, ["delete"]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_blocks_are_joined_and_other_blocks_ignored() {
        let v = json!({"content":[
            {"type":"thinking","thinking":"hmm"},
            {"type":"text","text":"Hello"},
            {"type":"text","text":" there"}]});
        assert_eq!(
            read_answer(&v).unwrap(),
            Answer::NoCall {
                text: "Hello there".into()
            }
        );
        assert_eq!(
            read_answer(&json!({"content": []})).unwrap(),
            Answer::NoCall { text: "".into() }
        );
    }

    #[test]
    fn non_object_input_is_kept_raw() {
        let v = json!({"content":[{"type":"tool_use","name":"f","input":"{oops"}]});
        assert_eq!(
            read_answer(&v).unwrap(),
            Answer::Call {
                name: "f".into(),
                arguments: None,
                raw_arguments: "\"{oops\"".into(),
                others: Vec::new(),
            }
        );
    }

    #[test]
    fn error_and_shapeless_bodies_are_no_answer() {
        for v in [
            json!({"type":"error","error":{"type":"api_error","message":"boom"}}),
            json!({"id":"msg_1"}),
            json!({"content":[{"type":"tool_use","input":{}}]}),
        ] {
            assert!(read_answer(&v).is_err(), "{v}");
        }
    }

    #[test]
    fn usage_counts_cache_tokens_as_input() {
        // The Messages API's usage object, as documented for prompt caching.
        let v = json!({"usage":{"input_tokens":10,"cache_creation_input_tokens":7,"cache_read_input_tokens":5,"output_tokens":2}});
        assert_eq!(
            read_usage(&v),
            Some(Usage {
                input_tokens: 22,
                cached_input_tokens: 5,
                cache_write_tokens: 7,
                output_tokens: 2
            })
        );
        assert_eq!(read_usage(&json!({"usage":{"output_tokens":2}})), None);
    }
}
