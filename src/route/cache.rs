//! Content-addressed response cache: a re-run with nothing changed sends zero requests.
//!
//! The key covers everything that can change the answer: router kind, model, endpoint host,
//! system prompt, the exact tools in the order offered, the messages, tool choice, sampling and
//! the repeat index. Entries are written atomically; an unreadable entry is a miss, never an error.

use std::path::PathBuf;

use serde_json::json;

use super::{RouteRequest, RouteResponse, Router};
use crate::tools::canon::{hash, to_canonical};

/// Cache format version, part of every key: bump it when the entry shape changes.
const FORMAT: u32 = 1;

pub fn key(router: &dyn Router, req: &RouteRequest) -> String {
    let tools: Vec<_> = req.tools.iter().map(|t| t.to_value()).collect();
    let material = json!({
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
    });
    hash(&material).trim_start_matches("sha256:").to_string()
}

#[derive(Debug, Clone)]
pub struct RouteCache {
    dir: Option<PathBuf>,
}

impl RouteCache {
    /// `None` disables the disk cache (requests are still de-duplicated within a run).
    pub fn new(dir: Option<PathBuf>) -> Self {
        RouteCache {
            dir: dir.map(|d| d.join("route")),
        }
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(&key[..2]).join(format!("{key}.json")))
    }

    pub fn get(&self, key: &str) -> Option<RouteResponse> {
        let text = std::fs::read_to_string(self.path(key)?).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Best effort: a cache that cannot be written only costs requests next time.
    pub fn put(&self, key: &str, resp: &RouteResponse) {
        let Some(path) = self.path(key) else { return };
        let text = to_canonical(&serde_json::to_value(resp).unwrap_or_default());
        let _ = crate::fs::write_atomic(&path, text.as_bytes());
    }
}
