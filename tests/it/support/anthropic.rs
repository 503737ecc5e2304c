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
