//! JSON completions from the configured model (any `Chat` provider), for drafting text
//! (paraphrases for `stress --llm-paraphrase`, prompts for `suite init --llm`), not for routing.
//!
//! Every answer must match a JSON schema: it is asked for with `response_format: json_schema`
//! where the provider has it (llama.cpp turns that into a grammar; OpenAI enforces it), then
//! validated here anyway, because servers that ignore `response_format` exist and Anthropic has
//! none. An answer that does not match is asked again, naming the problem, at a higher
//! temperature. Validated answers are cached by a hash of everything that shaped them, so a
//! re-run drafts nothing.

use std::sync::Mutex;

use serde::Serialize;
use serde_json::{Value, json};

use super::{Answer, Chat, ChatRequest, Message, Sampling, ToolChoice};
use crate::cache::{self, Cache};
use crate::error::{Error, Result};
use crate::http::retry::{RetryPolicy, with_retry};

/// Cache entry format, part of every key: bump it when the entry shape changes.
const FORMAT: u32 = 1;

/// Lowest temperature of a re-ask after a rejected answer.
pub const RETRY_TEMPERATURE: f32 = 1.0;

#[derive(Debug, Clone, Default, Serialize)]
pub struct LlmStats {
    pub requests_sent: u64,
    pub cache_hits: u64,
    /// Answers that failed the schema and were asked again.
    pub schema_retries: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// One drafting question: a system prompt (versioned in `prompts/`), the user message and the
/// schema the answer must match.
pub struct JsonTask<'a> {
    /// Short name for errors and the `json_schema.name` field (`[a-zA-Z0-9_-]`).
    pub name: &'a str,
    pub system: &'a str,
    pub user: String,
    pub schema: Value,
}

/// [`JsonLlm::max_attempts`] unless set otherwise.
pub const MAX_ATTEMPTS: u32 = 4;

pub struct JsonLlm {
    chat: Chat,
    pub sampling: Sampling,
    /// Transport retries (429, 5xx, timeouts) per request.
    pub retry: RetryPolicy,
    /// Requests per task in total, counting those re-asked after a schema mismatch.
    pub max_attempts: u32,
    cache: Cache,
    stats: Mutex<LlmStats>,
}

impl JsonLlm {
    pub fn new(chat: Chat) -> JsonLlm {
        JsonLlm {
            chat,
            sampling: Sampling {
                temperature: 0.0,
                seed: Some(0),
                max_tokens: 1024,
            },
            retry: RetryPolicy::default(),
            max_attempts: MAX_ATTEMPTS,
            cache: Cache::off(),
            stats: Mutex::new(LlmStats::default()),
        }
    }

    /// Cache validated answers in `cache`'s `llm` section.
    pub fn with_cache(mut self, cache: &Cache) -> JsonLlm {
        self.cache = cache.section("llm");
        self
    }

    pub fn model(&self) -> &str {
        self.chat.model()
    }

    pub fn host(&self) -> &str {
        self.chat.host()
    }

    pub fn stats(&self) -> LlmStats {
        self.stats.lock().expect("stats").clone()
    }

    /// Sampling on attempt `attempt` (1-based). Re-asks after a rejected answer sample at
    /// `RETRY_TEMPERATURE` at least, with the seed moved on: at temperature 0 the same question
    /// gets the same rejected answer.
    fn sampling_at(&self, attempt: u32) -> Sampling {
        if attempt > 1 {
            Sampling {
                temperature: self.sampling.temperature.max(RETRY_TEMPERATURE),
                seed: self
                    .sampling
                    .seed
                    .map(|s| s.wrapping_add(u64::from(attempt - 1))),
                max_tokens: self.sampling.max_tokens,
            }
        } else {
            self.sampling.clone()
        }
    }

    /// The exact JSON body sent for `user` on attempt `attempt` (1-based).
    pub fn request_body(&self, task: &JsonTask, user: &str, attempt: u32) -> Value {
        let messages = [Message {
            role: "user".into(),
            content: user.to_string(),
        }];
        let sampling = self.sampling_at(attempt);
        self.chat.body(&request(task, &messages, &sampling))
    }

    fn cache_key(&self, task: &JsonTask) -> String {
        cache::key(&json!({
            "format": FORMAT,
            "model": self.chat.model(),
            "host": self.chat.host(),
            "system": task.system,
            "user": task.user,
            "schema": task.schema,
            "sampling": self.sampling,
        }))
    }

    /// Ask until the answer matches `task.schema` and `check`, at most `max_attempts` times; no
    /// valid answer is an incomplete measurement (exit 3).
    pub async fn complete(
        &self,
        task: &JsonTask<'_>,
        check: impl Fn(&Value) -> std::result::Result<(), String>,
    ) -> Result<Value> {
        self.try_complete(task, check).await?.map_err(|last_error| {
            Error::Incomplete(format!(
                "{}: model {} gave no valid answer in {} attempt(s); last problem: {last_error}",
                task.name,
                self.chat.model(),
                self.max_attempts
            ))
        })
    }

    /// Like `complete`, but telling apart a model that answered and never validly (inner `Err`
    /// with the last problem, which a caller may work around) from an endpoint that failed
    /// (outer `Err`).
    pub async fn try_complete(
        &self,
        task: &JsonTask<'_>,
        check: impl Fn(&Value) -> std::result::Result<(), String>,
    ) -> Result<std::result::Result<Value, String>> {
        let key = self.cache_key(task);
        if let Some(v) = self.cache.get::<Value>(&key)
            && validate(&task.schema, &v).and_then(|_| check(&v)).is_ok()
        {
            self.stats.lock().expect("stats").cache_hits += 1;
            return Ok(Ok(v));
        }
        let mut last_error = String::new();
        for attempt in 1..=self.max_attempts.max(1) {
            // A re-ask is a fresh conversation naming the problem, not the rejected answer plus a
            // correction: shown its own answer, a small model repeats it (measured with the
            // 0.5B llama.cpp model: four identical answers in a row).
            let user = if attempt == 1 {
                task.user.clone()
            } else {
                self.stats.lock().expect("stats").schema_retries += 1;
                format!(
                    "{}\n\nAn earlier answer was rejected ({last_error}); make sure yours satisfies every requirement.",
                    task.user
                )
            };
            let content = self.send(task, &user, attempt).await.map_err(|e| {
                Error::Incomplete(format!("{}: model {}: {e}", task.name, self.chat.model()))
            })?;
            let verdict = extract_json(&content)
                .and_then(|v| validate(&task.schema, &v).map(|_| v))
                .and_then(|v| check(&v).map(|_| v));
            match verdict {
                Ok(v) => {
                    let _ = self.cache.put(&key, &v);
                    return Ok(Ok(v));
                }
                Err(e) => last_error = e,
            }
        }
        Ok(Err(last_error))
    }

    /// Ask once, with transport retries; the answer's text. An answer that is not text (a
    /// provider reply that does not read as a completion) is a failed endpoint, not a model
    /// answer to re-ask.
    async fn send(
        &self,
        task: &JsonTask<'_>,
        user: &str,
        attempt: u32,
    ) -> std::result::Result<String, String> {
        let messages = [Message {
            role: "user".into(),
            content: user.to_string(),
        }];
        let sampling = self.sampling_at(attempt);
        let req = request(task, &messages, &sampling);
        let out = with_retry(&self.retry, || self.chat.complete(&req)).await;
        let mut s = self.stats.lock().expect("stats");
        s.requests_sent += u64::from(out.attempts);
        let completion = out
            .result
            .map_err(|e| format!("after {} attempt(s): {e}", out.attempts))?;
        if let Some(u) = &completion.usage {
            s.input_tokens += u.input_tokens;
            s.output_tokens += u.output_tokens;
        }
        match completion.answer {
            Answer::NoCall { text } => Ok(text),
            Answer::Call { name, .. } => Err(format!(
                "the reply is a call of tool {name:?}, not the JSON text asked for"
            )),
            Answer::Malformed { detail } => Err(detail),
        }
    }
}

fn request<'a>(
    task: &'a JsonTask<'a>,
    messages: &'a [Message],
    sampling: &'a Sampling,
) -> ChatRequest<'a> {
    ChatRequest {
        system: task.system,
        messages,
        tools: &[],
        cached_tools: 0,
        tool_choice: ToolChoice::Auto,
        sampling,
        json_schema: Some((task.name, &task.schema)),
    }
}

fn first_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// The JSON object in a model's text: the whole text, or inside a ``` fence, or from the first
/// `{` to the last `}` (small models like to add a sentence around it).
pub fn extract_json(content: &str) -> std::result::Result<Value, String> {
    let t = content.trim();
    if let Ok(v) = serde_json::from_str(t) {
        return Ok(v);
    }
    let unfenced = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|s| s.trim_end().strip_suffix("```"));
    if let Some(u) = unfenced
        && let Ok(v) = serde_json::from_str(u.trim())
    {
        return Ok(v);
    }
    if let (Some(a), Some(b)) = (t.find('{'), t.rfind('}'))
        && a < b
        && let Ok(v) = serde_json::from_str(&t[a..=b])
    {
        return Ok(v);
    }
    Err(format!(
        "the answer is not a JSON object: {:?}",
        first_chars(t, 120)
    ))
}

/// Validate `value` against `schema` with the `jsonschema` crate (any draft; the drafting schemas
/// are strict structured-output schemas). The first violation is reported with its JSON pointer,
/// cut to 300 characters: the message goes back to the model in the re-ask, and it quotes the
/// model's own value.
pub fn validate(schema: &Value, value: &Value) -> std::result::Result<(), String> {
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| format!("the answer schema cannot be compiled: {e}"))?;
    match validator.validate(value) {
        Ok(()) => Ok(()),
        Err(e) => {
            let at = e.instance_path().as_str();
            let at = if at.is_empty() { "/" } else { at };
            Err(first_chars(&format!("{at}: {e}"), 300))
        }
    }
}

/// `{"<field>": [n distinct non-empty strings of at most `max_len` characters]}`.
pub fn string_list_schema(field: &str, n: usize, max_len: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            field: {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": max_len},
                "minItems": n,
                "maxItems": n,
            }
        },
        "required": [field],
        "additionalProperties": false,
    })
}

/// The strings of `v[field]`, trimmed (non-strings skipped).
pub fn strings(v: &Value, field: &str) -> Vec<String> {
    v[field]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|s| s.trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The strings of a value that passed `string_list_schema`, with a duplicate check (schemas
/// cannot say "distinct, ignoring case and spacing").
pub fn distinct_strings(v: &Value, field: &str) -> std::result::Result<Vec<String>, String> {
    let items = strings(v, field);
    let mut seen = std::collections::BTreeSet::new();
    for (i, s) in items.iter().enumerate() {
        if s.is_empty() {
            return Err(format!("/{field}/{i}: empty after trimming"));
        }
        let norm = s
            .to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if !seen.insert(norm) {
            return Err(format!("/{field}/{i}: duplicates an earlier item"));
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_json_from_fences_and_chatter() {
        assert_eq!(extract_json(r#"{"a":1}"#).unwrap(), json!({"a":1}));
        assert_eq!(
            extract_json("```json\n{\"a\":1}\n```").unwrap(),
            json!({"a":1})
        );
        assert_eq!(
            extract_json("Sure! Here it is: {\"a\": [1]} Hope this helps.").unwrap(),
            json!({"a":[1]})
        );
        assert!(extract_json("no json here").is_err());
    }

    #[test]
    fn validates_with_pointers() {
        let s = string_list_schema("prompts", 2, 10);
        assert!(validate(&s, &json!({"prompts": ["a", "b"]})).is_ok());
        let err = |v: Value| validate(&s, &v).unwrap_err();
        assert!(err(json!({"prompts": ["a"]})).starts_with("/prompts: "));
        assert_eq!(
            err(json!({"prompts": ["a", 3]})),
            "/prompts/1: 3 is not of type \"string\""
        );
        assert!(err(json!({"prompts": ["a", "b"], "x": 1})).contains("'x' was unexpected"));
        assert_eq!(err(json!({})), "/: \"prompts\" is a required property");
        assert!(err(json!({"prompts": ["a", "bbbbbbbbbbbb"]})).starts_with("/prompts/1: "));
        assert!(err(json!([])).starts_with("/: "));
        // A long value the model wrote is cut, not echoed whole into the re-ask.
        let long = "x".repeat(5000);
        assert!(err(json!({"prompts": ["a", long]})).chars().count() <= 300);
        // Beyond the old hand-written subset: a pattern is checked.
        let p = json!({"type": "string", "pattern": "^[a-z]+$"});
        assert!(validate(&p, &json!("abc")).is_ok());
        assert!(validate(&p, &json!("ABC")).is_err());
    }

    #[test]
    fn distinct_strings_rejects_near_duplicates() {
        assert_eq!(
            distinct_strings(&json!({"p": [" Read it ", "read   IT"]}), "p").unwrap_err(),
            "/p/1: duplicates an earlier item"
        );
        assert_eq!(
            distinct_strings(&json!({"p": ["a", "b"]}), "p").unwrap(),
            ["a", "b"]
        );
        assert!(distinct_strings(&json!({"p": ["  "]}), "p").is_err());
    }
}
