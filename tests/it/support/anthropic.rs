//! Anthropic's Messages wire format on the fake: the recorded bodies of
//! `tests/fixtures/router/anthropic/` (a `tool_use` block, text blocks, `overloaded_error`,
//! `invalid_request_error`, `authentication_error`), with the headers the API sends.

use super::fake::Step;

/// `tests/fixtures/router/anthropic/{name}` answered with `status` and Anthropic's `request-id`;
/// `{{header}}` placeholders in it echo the request's headers (the API echoes a bad key).
pub fn fixture(status: u16, name: &str) -> Step {
    Step::reply(status, super::router_fixture(&format!("anthropic/{name}")))
        .header("request-id", "req_011CFakeLoopback")
        .echo_headers()
}

/// A 200 Messages answer shaped as the API sends it: a short text block, then a `tool_use` block
/// calling `name` with `input` (already an object on this wire, unlike OpenAI's JSON string).
pub fn tool_use(name: &str, input: serde_json::Value) -> Step {
    tool_use_billed(name, input, (1187, 0, 0))
}

/// [`tool_use`] with its usage: `(input_tokens, cache_creation_input_tokens,
/// cache_read_input_tokens)`.
pub fn tool_use_billed(name: &str, input: serde_json::Value, usage: (u64, u64, u64)) -> Step {
    message(
        serde_json::json!([
            {"type": "text", "text": "Let me look that up."},
            {"type": "tool_use", "id": "toolu_01FakeLoopback", "name": name, "input": input}
        ]),
        "tool_use",
        usage,
    )
}

/// A 200 Messages answer with text only.
pub fn text(text: &str) -> Step {
    message(
        serde_json::json!([{"type": "text", "text": text}]),
        "end_turn",
        (1187, 0, 0),
    )
}

fn message(content: serde_json::Value, stop_reason: &str, usage: (u64, u64, u64)) -> Step {
    let (input, written, read) = usage;
    let body = serde_json::json!({
        "id": "msg_01FakeLoopback",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": input,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "output_tokens": 71,
            "service_tier": "standard"
        }
    });
    Step::reply(200, body.to_string()).header("request-id", "req_011CFakeLoopback")
}
