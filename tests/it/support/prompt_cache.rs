//! The providers' prompt caches as the fakes keep them, so the usage fields come back as the
//! real APIs fill them.
//!
//! - OpenAI caches automatically: a request whose prompt starts with a prefix an earlier request
//!   sent is billed `prompt_tokens_details.cached_tokens` for it, once the prefix reaches 1,024
//!   tokens, in steps of 128. The prompt is rendered tools first, then the messages (the system
//!   prompt with them), which is where the API places them.
//! - Anthropic caches up to a `cache_control` breakpoint, in the order tools → system → messages:
//!   the first request writes the prefix (`cache_creation_input_tokens`), the next identical one
//!   reads it (`cache_read_input_tokens`); `input_tokens` is what follows the breakpoint. A
//!   prefix under 1,024 tokens is not cached (both counts 0, everything in `input_tokens`).
//!
//! A token here is 4 bytes of the rendered JSON: the fakes need a stable count, not a tokenizer.

use std::sync::Mutex;

use serde_json::Value;

const MIN_TOKENS: usize = 1024;
const OPENAI_STEP: usize = 128;

fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

#[derive(Default)]
pub struct PromptCache {
    /// Every prompt rendered so far (OpenAI), or every prefix written (Anthropic).
    seen: Mutex<Vec<String>>,
}

impl PromptCache {
    /// `(prompt_tokens, cached_tokens)` of an OpenAI Chat Completions body.
    pub fn openai(&self, body: &Value) -> (u64, u64) {
        let mut prompt = body["tools"].to_string();
        for m in body["messages"].as_array().into_iter().flatten() {
            prompt.push_str(&m.to_string());
        }
        let mut seen = self.seen.lock().unwrap();
        let common = seen
            .iter()
            .map(|p| {
                p.bytes()
                    .zip(prompt.bytes())
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        seen.push(prompt.clone());
        let hit = tokens(common);
        let cached = if hit >= MIN_TOKENS {
            hit / OPENAI_STEP * OPENAI_STEP
        } else {
            0
        };
        (tokens(prompt.len()) as u64, cached as u64)
    }

    /// `(input_tokens, cache_creation_input_tokens, cache_read_input_tokens)` of an Anthropic
    /// Messages body.
    pub fn anthropic(&self, body: &Value) -> (u64, u64, u64) {
        let tools: Vec<Value> = body["tools"].as_array().cloned().unwrap_or_default();
        let breakpoint = tools.iter().position(|t| t.get("cache_control").is_some());
        let mut rest = String::new();
        rest.push_str(&body["system"].to_string());
        rest.push_str(&body["messages"].to_string());
        let Some(at) = breakpoint else {
            let all = Value::Array(tools).to_string() + &rest;
            return (tokens(all.len()) as u64, 0, 0);
        };
        let prefix = Value::Array(tools[..=at].to_vec()).to_string();
        let after = Value::Array(tools[at + 1..].to_vec()).to_string() + &rest;
        let (p, a) = (tokens(prefix.len()), tokens(after.len()) as u64);
        if p < MIN_TOKENS {
            return (p as u64 + a, 0, 0);
        }
        let mut seen = self.seen.lock().unwrap();
        if seen.contains(&prefix) {
            (a, 0, p as u64)
        } else {
            seen.push(prefix);
            (a, p as u64, 0)
        }
    }
}
