//! JSON completions from the configured OpenAI-compatible model, for drafting text (paraphrases
//! for `stress --llm-paraphrase`, prompts for `suite init --llm`), not for routing.
//!
//! Every answer must match a JSON schema: it is asked for with `response_format: json_schema`
//! (llama.cpp turns that into a grammar; OpenAI enforces it), then validated here anyway, because
//! servers that ignore `response_format` exist. An answer that does not match is sent back with
//! the validation error and asked again at a higher temperature. Validated answers are cached on disk by a hash of
//! everything that shaped them, so a re-run drafts nothing.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use reqwest::header::AUTHORIZATION;
use serde::Serialize;
use serde_json::{Value, json};

use crate::cli::RouterArgs;
use crate::config::{Config, RouterKind};
use crate::error::{Error, Result};
use crate::route::keys::{self, Secret, clean_message};
use crate::route::retry::{self, RetryPolicy, with_retry};
use crate::route::{RouteError, Sampling};
use crate::tools::canon::{hash, to_canonical};
use crate::tools::json_kind;

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

pub struct JsonLlm {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    host: String,
    model: String,
    key: Option<Secret>,
    timeout: Duration,
    pub sampling: Sampling,
    /// Transport retries (429, 5xx, timeouts) per request.
    pub retry: RetryPolicy,
    /// Requests per task in total, counting those re-asked after a schema mismatch.
    pub max_attempts: u32,
    cache_dir: Option<PathBuf>,
    stats: Mutex<LlmStats>,
}

impl JsonLlm {
    /// `base_url` is everything before `/chat/completions` (default: the OpenAI API).
    pub fn new(
        base_url: Option<&str>,
        model: &str,
        key: Option<Secret>,
        timeout: Duration,
    ) -> Result<JsonLlm> {
        let base =
            retry::parse_base_url(base_url.unwrap_or(crate::route::openai::DEFAULT_BASE_URL))?;
        if let Some(k) = &key {
            retry::secret_header(&format!("Bearer {}", k.expose()))?;
        }
        Ok(JsonLlm {
            client: retry::client(timeout)?,
            endpoint: retry::join_path(&base, "chat/completions"),
            host: retry::host_of(&base),
            model: model.to_string(),
            key,
            timeout,
            sampling: Sampling {
                temperature: 0.0,
                seed: Some(0),
                max_tokens: 1024,
            },
            retry: RetryPolicy::default(),
            max_attempts: 4,
            cache_dir: None,
            stats: Mutex::new(LlmStats::default()),
        })
    }

    /// Cache validated answers under `dir/llm`; `None` keeps nothing on disk.
    pub fn with_cache(mut self, dir: Option<PathBuf>) -> JsonLlm {
        self.cache_dir = dir.map(|d| d.join("llm"));
        self
    }

    /// The model and endpoint from the router settings (`--model`, `--base-url`,
    /// `--api-key-env`, `[router]` in driftgate.toml). The replay router may be `semantic`: its
    /// model flags are then free to name the drafting model.
    pub fn from_router_args(r: &RouterArgs, cfg: &Config, what: &str) -> Result<JsonLlm> {
        let c = &cfg.router;
        if r.router.or(c.kind) == Some(RouterKind::Anthropic) {
            return Err(Error::Usage(format!(
                "{what} drafts with an OpenAI-compatible model; the anthropic router's settings cannot be used (run with --router semantic or openai and --model/--base-url)"
            )));
        }
        if r.azure_api_version.is_some() || c.azure_api_version.is_some() {
            return Err(Error::Usage(format!(
                "{what}: Azure OpenAI is not supported for drafting; use an OpenAI-compatible --base-url"
            )));
        }
        let model = r.model.clone().or(c.model.clone()).ok_or_else(|| {
            Error::Usage(format!(
                "{what} needs a model: --model M (and --base-url URL for a local server such as llama.cpp)"
            ))
        })?;
        let base_url = r.base_url.clone().or(c.base_url.clone());
        let env = r
            .api_key_env
            .clone()
            .or(c.api_key_env.clone())
            .unwrap_or_else(|| keys::OPENAI_KEY_ENV.into());
        let key = keys::load_key(&env);
        if key.is_none() && base_url.is_none() {
            return Err(Error::Usage(format!(
                "{what} against the OpenAI API needs the key in ${env} (or --base-url for a local server)"
            )));
        }
        let timeout = Duration::from_secs(r.request_timeout.or(c.timeout_secs).unwrap_or(120));
        let mut llm = JsonLlm::new(base_url.as_deref(), &model, key, timeout)?;
        llm.sampling.temperature = r.temperature.or(c.temperature).unwrap_or(0.0);
        llm.sampling.seed = Some(r.seed.or(c.seed).unwrap_or(0));
        llm.retry.max_attempts = r.max_attempts.unwrap_or(4).max(1);
        Ok(llm)
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn stats(&self) -> LlmStats {
        self.stats.lock().expect("stats").clone()
    }

    /// The exact JSON body sent for `messages` on attempt `attempt` (1-based). Re-asks after a
    /// rejected answer sample at `RETRY_TEMPERATURE` at least, with the seed moved on: at
    /// temperature 0 the same question gets the same rejected answer.
    pub fn request_body(&self, task: &JsonTask, messages: &[Value], attempt: u32) -> Value {
        let (temperature, seed) = if attempt > 1 {
            (
                self.sampling.temperature.max(RETRY_TEMPERATURE),
                self.sampling
                    .seed
                    .map(|s| s.wrapping_add(u64::from(attempt - 1))),
            )
        } else {
            (self.sampling.temperature, self.sampling.seed)
        };
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "temperature": retry::f32_json(temperature),
            "max_tokens": self.sampling.max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": task.name, "strict": true, "schema": task.schema},
            },
        });
        if let Some(seed) = seed {
            body["seed"] = json!(seed);
        }
        body
    }

    fn cache_path(&self, task: &JsonTask) -> Option<PathBuf> {
        let material = json!({
            "format": FORMAT,
            "model": self.model,
            "host": self.host,
            "system": task.system,
            "user": task.user,
            "schema": task.schema,
            "sampling": self.sampling,
        });
        let key = hash(&material).trim_start_matches("sha256:").to_string();
        self.cache_dir
            .as_ref()
            .map(|d| d.join(&key[..2]).join(format!("{key}.json")))
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
                task.name, self.model, self.max_attempts
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
        let path = self.cache_path(task);
        if let Some(p) = &path
            && let Ok(text) = std::fs::read_to_string(p)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
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
            let messages = [
                json!({"role": "system", "content": task.system}),
                json!({"role": "user", "content": user}),
            ];
            let body = self.request_body(task, &messages, attempt);
            let content = self.send(&body).await.map_err(|e| {
                Error::Incomplete(format!("{}: model {}: {e}", task.name, self.model))
            })?;
            let verdict = extract_json(&content)
                .and_then(|v| validate(&task.schema, &v).map(|_| v))
                .and_then(|v| check(&v).map(|_| v));
            match verdict {
                Ok(v) => {
                    if let Some(p) = &path {
                        let _ = write_entry(p, &to_canonical(&v));
                    }
                    return Ok(Ok(v));
                }
                Err(e) => last_error = e,
            }
        }
        Ok(Err(last_error))
    }

    /// POST one body with transport retries; the assistant message's text.
    async fn send(&self, body: &Value) -> std::result::Result<String, String> {
        let secrets: Vec<Secret> = self.key.iter().cloned().collect();
        let out = with_retry(&self.retry, || async {
            let mut req = self.client.post(self.endpoint.clone()).json(body);
            if let Some(k) = &self.key {
                req = req.header(
                    AUTHORIZATION,
                    retry::secret_header(&format!("Bearer {}", k.expose()))
                        .map_err(|e| RouteError::Fatal(e.to_string()))?,
                );
            }
            let reply = retry::send(req, self.timeout).await?;
            if !reply.status.is_success() {
                return Err(retry::http_error(&reply));
            }
            Ok(reply.body)
        })
        .await;
        {
            let mut s = self.stats.lock().expect("stats");
            s.requests_sent += u64::from(out.attempts);
        }
        let text = out.result.map_err(|e| {
            clean_message(&format!("after {} attempt(s): {e}", out.attempts), &secrets)
        })?;
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            clean_message(
                &format!("the reply is not JSON ({e}): {}", first_chars(&text, 200)),
                &secrets,
            )
        })?;
        if let Some(u) = v.get("usage") {
            let mut s = self.stats.lock().expect("stats");
            s.input_tokens += u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0);
            s.output_tokens += u
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(0);
        }
        v.pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .map(String::from)
            .ok_or_else(|| {
                clean_message(
                    &format!(
                        "no choices[0].message.content in the reply: {}",
                        first_chars(&text, 200)
                    ),
                    &secrets,
                )
            })
    }
}

fn first_chars(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn write_entry(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().expect("entry has a parent");
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
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

/// Validate `value` against the JSON Schema subset the drafting schemas use: `type`
/// (object, array, string, integer, number, boolean), `properties`, `required`,
/// `additionalProperties: false`, `items`, `minItems`, `maxItems`, `minLength`, `maxLength`,
/// `enum`. The first violation is reported with its JSON pointer. Tested for agreement with a
/// full validator in `tests/llm_draft.rs`.
pub fn validate(schema: &Value, value: &Value) -> std::result::Result<(), String> {
    check_at(schema, value, "")
}

fn check_at(schema: &Value, v: &Value, ptr: &str) -> std::result::Result<(), String> {
    let at = if ptr.is_empty() { "/" } else { ptr };
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            _ => true,
        };
        if !ok {
            return Err(format!("{at}: expected {t}, found {}", json_kind(v)));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(v)
    {
        return Err(format!(
            "{at}: {v} is not one of {}",
            Value::Array(options.clone())
        ));
    }
    if let Some(s) = v.as_str() {
        let n = s.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && n < min
        {
            return Err(format!("{at}: string shorter than {min} characters"));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && n > max
        {
            return Err(format!("{at}: string longer than {max} characters"));
        }
    }
    if let Some(a) = v.as_array() {
        let n = a.len() as u64;
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && n < min
        {
            return Err(format!("{at}: {n} item(s), expected at least {min}"));
        }
        if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
            && n > max
        {
            return Err(format!("{at}: {n} item(s), expected at most {max}"));
        }
        if let Some(items) = schema.get("items") {
            for (i, x) in a.iter().enumerate() {
                check_at(items, x, &format!("{ptr}/{i}"))?;
            }
        }
    }
    if let Some(o) = v.as_object() {
        let props = schema.get("properties").and_then(Value::as_object);
        if let Some(req) = schema.get("required").and_then(Value::as_array) {
            for r in req.iter().filter_map(Value::as_str) {
                if !o.contains_key(r) {
                    return Err(format!("{at}: missing required property {r:?}"));
                }
            }
        }
        for (k, x) in o {
            match props.and_then(|p| p.get(k)) {
                Some(s) => check_at(s, x, &format!("{ptr}/{k}"))?,
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    return Err(format!("{at}: unexpected property {k:?}"));
                }
                None => {}
            }
        }
    }
    Ok(())
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

/// The strings of a value that passed `string_list_schema`, with a duplicate check (schemas
/// cannot say "distinct, ignoring case and spacing").
pub fn distinct_strings(v: &Value, field: &str) -> std::result::Result<Vec<String>, String> {
    let items: Vec<String> = v[field]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(|s| s.trim().to_string())
                .collect()
        })
        .unwrap_or_default();
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
    fn validates_the_subset_with_pointers() {
        let s = string_list_schema("prompts", 2, 10);
        assert!(validate(&s, &json!({"prompts": ["a", "b"]})).is_ok());
        assert_eq!(
            validate(&s, &json!({"prompts": ["a"]})).unwrap_err(),
            "/prompts: 1 item(s), expected at least 2"
        );
        assert_eq!(
            validate(&s, &json!({"prompts": ["a", 3]})).unwrap_err(),
            "/prompts/1: expected string, found number"
        );
        assert_eq!(
            validate(&s, &json!({"prompts": ["a", "b"], "x": 1})).unwrap_err(),
            "/: unexpected property \"x\""
        );
        assert_eq!(
            validate(&s, &json!({})).unwrap_err(),
            "/: missing required property \"prompts\""
        );
        assert_eq!(
            validate(&s, &json!({"prompts": ["a", "bbbbbbbbbbbb"]})).unwrap_err(),
            "/prompts/1: string longer than 10 characters"
        );
        assert_eq!(
            validate(&s, &json!([])).unwrap_err(),
            "/: expected object, found array"
        );
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
