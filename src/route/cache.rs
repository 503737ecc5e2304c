//! Cache keys for router answers: a re-run with nothing changed sends zero requests.
//!
//! The key covers everything that can change the answer: router kind, model, endpoint host,
//! system prompt, the exact tools in the order offered, the messages, tool choice, sampling and
//! the repeat index. Entries live in the `route` section of the one `crate::cache::Cache`.

use serde_json::json;

use super::{RouteRequest, Router};

/// Cache format version, part of every key: bump it when the entry shape changes. 2: parsed
/// arguments are redacted before an answer is stored (they are shown in argument flips since
/// call accuracy; entries of format 1 masked only the raw argument text).
const FORMAT: u32 = 2;

/// The section of the cache router answers live in.
pub const SECTION: &str = "route";

pub fn key(router: &dyn Router, req: &RouteRequest) -> String {
    let tools: Vec<_> = req.tools.iter().map(|t| t.to_value()).collect();
    crate::cache::key(&json!({
        "format": FORMAT,
        "kind": router.kind(),
        "model": router.model(),
        "host": router.endpoint_host(),
        "system": req.system,
        "tools": tools,
        "messages": req.messages,
        "tool_choice": req.tool_choice,
        "sampling": req.sampling,
        "repeat": req.repeat,
    }))
}
