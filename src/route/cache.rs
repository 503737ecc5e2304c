//! Cache keys for router answers: a re-run with nothing changed sends zero requests.
//!
//! The key covers everything that can change the answer: router kind, model, endpoint host,
//! system prompt, the exact tools in the order offered, the messages, tool choice, sampling and
//! the repeat index. Entries live in the `route` section of the one `crate::cache::Cache`.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{RouteRequest, Router};

/// Cache format version, part of every key: bump it when the entry shape changes. 2: parsed
/// arguments are redacted before an answer is stored (they are shown in argument flips since
/// call accuracy; entries of format 1 masked only the raw argument text).
const FORMAT: u32 = 2;

/// The section of the cache router answers live in.
pub const SECTION: &str = "route";

/// Everything but the tools.
fn material(router: &dyn Router, req: &RouteRequest) -> serde_json::Map<String, Value> {
    let v = json!({
        "format": FORMAT,
        "kind": router.kind(),
        "model": router.model(),
        "host": router.endpoint_host(),
        "system": req.system,
        "messages": req.messages,
        "tool_choice": req.tool_choice,
        "sampling": req.sampling,
        "repeat": req.repeat,
    });
    match v {
        Value::Object(m) => m,
        _ => unreachable!("json! of an object"),
    }
}

pub fn key(router: &dyn Router, req: &RouteRequest) -> String {
    let mut m = material(router, req);
    let tools: Vec<_> = req.tools.iter().map(|t| t.to_value()).collect();
    m.insert("tools".into(), Value::Array(tools));
    crate::cache::key(&Value::Object(m))
}

/// [`key`], with each offered tool's canonical JSON (`req.tools` in order) already written: the
/// same key without serialising the whole tool list again for every case. `tools` is the last
/// key in canonical order, so the canonical material is the rest with the list spliced in
/// before the closing brace.
pub fn key_with_tools(router: &dyn Router, req: &RouteRequest, tools: &[&str]) -> String {
    let rest = crate::canon::to_canonical(&Value::Object(material(router, req)));
    let mut h = Sha256::new();
    h.update(&rest.as_bytes()[..rest.len() - 1]);
    h.update(b",\"tools\":");
    array_into(&mut h, tools);
    h.update(b"}");
    hex::encode(h.finalize())
}

/// Feed `[a,b,…]` of already canonical items to `h`.
pub fn array_into(h: &mut Sha256, items: &[&str]) {
    h.update(b"[");
    for (i, t) in items.iter().enumerate() {
        if i > 0 {
            h.update(b",");
        }
        h.update(t.as_bytes());
    }
    h.update(b"]");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Message, Sampling, ToolChoice};
    use crate::tools::Tool;

    struct R;
    #[async_trait::async_trait]
    impl Router for R {
        fn kind(&self) -> crate::route::Kind {
            crate::route::Kind::Openai
        }
        fn model(&self) -> &str {
            "m"
        }
        fn endpoint_host(&self) -> String {
            "h".into()
        }
        fn fills_arguments(&self) -> bool {
            false
        }
        async fn route(
            &self,
            _: &RouteRequest,
        ) -> Result<super::super::RouteResponse, crate::http::Failure> {
            unreachable!()
        }
    }

    #[test]
    fn the_spliced_key_is_the_key() {
        let tool = |v: Value| Tool::from_value(&v, "t", "").unwrap();
        for tools in [
            vec![],
            vec![tool(
                json!({"name": "a", "description": "é \"quoted\"", "zeta": [1, 2.5]}),
            )],
            vec![
                tool(
                    json!({"name": "b", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}),
                ),
                tool(json!({"name": "a", "annotations": {"readOnlyHint": true}})),
            ],
        ] {
            let req = RouteRequest {
                system: "sys".into(),
                messages: vec![Message {
                    role: "user".into(),
                    content: "hello ✓".into(),
                }],
                tools,
                shared_tools: 0,
                tool_choice: ToolChoice::Auto,
                sampling: Sampling::default(),
                repeat: 3,
            };
            let canon: Vec<String> = req
                .tools
                .iter()
                .map(|t| crate::canon::to_canonical(&t.to_value()))
                .collect();
            let canon: Vec<&str> = canon.iter().map(String::as_str).collect();
            assert_eq!(key_with_tools(&R, &req, &canon), key(&R, &req));
        }
    }
}
