//! Provider batch APIs: many chat requests answered asynchronously, at half the price, within
//! 24 hours. OpenAI's Batch API (the requests uploaded as a JSONL file with purpose `batch`, a
//! batch created on it for `/v1/chat/completions`, polled, its output and error files read) and
//! Anthropic's Message Batches (the requests posted inline, polled, the results JSONL read).
//!
//! Every body is exactly the one [`Chat::complete`] would send, and every answer is read by the
//! same reader, so a batched answer is the answer a live request would have cached. [`run`]
//! submits in chunks within each provider's limits, keeps the submitted batches' ids in the cache
//! (an interrupted run resumes polling them instead of paying again), polls with backoff until
//! every batch ended or the wait is over, and gives every item its answer or the reason it has
//! none. Each HTTP call goes through the caller's retry policy; a batch that failed, was
//! cancelled or outlived the wait leaves its items unanswered, never guessed.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Answer, Chat, Provider, Usage, anthropic, openai};
use crate::cache::Cache;
use crate::console::Console;
use crate::http::retry::{RetryPolicy, with_retry};
use crate::http::secret::clean_message;
use crate::http::{self, Failure, Reply};

/// What a batch costs next to the same requests sent one by one: both providers bill half.
pub const DISCOUNT: f64 = 0.5;

/// The cache section that keeps submitted batches' ids.
pub const SECTION: &str = "batch";

/// How long to wait for a batch, and how often to ask.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Give up waiting after this long (the batch keeps running; a re-run resumes it).
    pub wait: Duration,
    /// The longest pause between two polls (they start at a second and double up to it).
    pub poll_max: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            wait: Duration::from_secs(3600),
            poll_max: Duration::from_secs(30),
        }
    }
}

/// One request of a batch: its id (`[A-Za-z0-9_-]{1,64}`, both providers' rule) and the body
/// [`Chat::body`] built for it.
#[derive(Debug, Clone)]
pub struct Item {
    pub id: String,
    pub body: Value,
}

/// An item's fate: the model's answer, or why there is none.
pub type Answered = Result<(Answer, Option<Usage>), String>;

/// What a [`run`] did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The provider's id of every batch the items went in, in submission order.
    pub batches: Vec<String>,
    /// How many of them an earlier, interrupted run had submitted.
    pub resumed: usize,
    /// Every item's answer or failure, by item id.
    pub answers: HashMap<String, Answered>,
}

/// The batches submitted for one set of items, as kept in the cache.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Submitted {
    batches: Vec<Submission>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Submission {
    id: String,
    items: Vec<String>,
}

/// A batch as the provider describes it.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Running,
    /// Ended; OpenAI's output and error file ids, or Anthropic's results URL.
    Ended {
        files: Vec<String>,
    },
    /// Ended with nothing to read: why.
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Status {
    phase: Phase,
    /// Provider's status word, for messages.
    word: String,
    done: u64,
    total: u64,
}

/// Per provider: the most requests and bytes one batch may hold (with margin below the
/// documented 50,000 requests / 200 MB and 100,000 requests / 256 MB).
fn limits(provider: &Provider) -> (usize, usize) {
    match provider {
        Provider::Anthropic => (100_000, 240 << 20),
        _ => (50_000, 190 << 20),
    }
}

impl Chat {
    /// `Ok` when this chat's provider has a batch API driftgate speaks.
    pub fn batch_supported(&self) -> crate::Result<()> {
        match self.provider {
            Provider::OpenAi | Provider::Anthropic => Ok(()),
            Provider::Azure { .. } => Err(crate::Error::Usage(
                "--batch speaks OpenAI's Batch API and Anthropic's Message Batches; Azure OpenAI's global batch deployments are not supported".into(),
            )),
        }
    }

    fn batch_url(&self, suffix: &str) -> reqwest::Url {
        match self.provider {
            // …/v1/messages → …/v1/messages/batches/…
            Provider::Anthropic => http::join_path(&self.endpoint, &format!("batches{suffix}")),
            _ => http::join_path(&self.base, &format!("batches{suffix}")),
        }
    }

    /// One HTTP exchange of the batch protocol: a failure for a non-success status or a body that
    /// is not JSON, else the JSON.
    async fn batch_call(
        &self,
        request: reqwest::RequestBuilder,
        what: &str,
    ) -> Result<Value, Failure> {
        let reply = http::send(self.authed(request), self.timeout).await?;
        let v = reply_value(&reply, what)?;
        Ok(v)
    }

    /// Submit one chunk; the provider's batch id.
    async fn submit(&self, items: &[Item]) -> Result<String, Failure> {
        let v = match self.provider {
            Provider::Anthropic => {
                let requests: Vec<Value> = items
                    .iter()
                    .map(|i| json!({"custom_id": i.id, "params": i.body}))
                    .collect();
                let request = self
                    .client
                    .post(self.batch_url(""))
                    .json(&json!({ "requests": requests }));
                self.batch_call(request, "creating the message batch")
                    .await?
            }
            _ => {
                let mut jsonl = String::new();
                for i in items {
                    jsonl.push_str(
                        &json!({"custom_id": i.id, "method": "POST", "url": "/v1/chat/completions", "body": i.body})
                            .to_string(),
                    );
                    jsonl.push('\n');
                }
                let part = reqwest::multipart::Part::bytes(jsonl.into_bytes())
                    .file_name("driftgate-batch.jsonl")
                    .mime_str("application/jsonl")
                    .map_err(|e| Failure::Fatal(format!("building the upload: {e}")))?;
                let form = reqwest::multipart::Form::new()
                    .text("purpose", "batch")
                    .part("file", part);
                let request = self
                    .client
                    .post(http::join_path(&self.base, "files"))
                    .multipart(form);
                let file = self
                    .batch_call(request, "uploading the batch input file")
                    .await?;
                let file_id = id_of(&file, "the uploaded file")?;
                let request = self.client.post(self.batch_url("")).json(&json!({
                    "input_file_id": file_id,
                    "endpoint": "/v1/chat/completions",
                    "completion_window": "24h",
                    "metadata": {"created_by": "driftgate"},
                }));
                self.batch_call(request, "creating the batch").await?
            }
        };
        id_of(&v, "the new batch")
    }

    async fn status(&self, id: &str) -> Result<Status, Failure> {
        let request = self.client.get(self.batch_url(&format!("/{id}")));
        let v = self
            .batch_call(request, &format!("polling batch {id}"))
            .await?;
        match self.provider {
            Provider::Anthropic => anthropic_status(&v),
            _ => openai_status(&v),
        }
        .map_err(|why| Failure::Fatal(format!("batch {id}: {why}")))
    }

    /// Every result line of an ended batch, by item id (a result's size bounded by `cap`).
    async fn results(
        &self,
        id: &str,
        files: &[String],
        cap: usize,
    ) -> Result<HashMap<String, Answered>, Failure> {
        let mut out = HashMap::new();
        for file in files {
            let url = match self.provider {
                Provider::Anthropic => self.results_url(id, file),
                _ => http::join_path(&self.base, &format!("files/{file}/content")),
            };
            let request = self.authed(self.client.get(url));
            let reply = http::send_capped(request, self.timeout, cap).await?;
            if !reply.status.is_success() {
                return Err(http::http_error(&reply));
            }
            if reply.truncated {
                return Err(Failure::Fatal(format!(
                    "the results of batch {id} exceed {} MiB",
                    cap >> 20
                )));
            }
            for (n, line) in reply.body.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line).map_err(|e| Failure::Transient {
                    message: format!("line {} of batch {id}'s results is not JSON: {e}", n + 1),
                    retry_after: None,
                })?;
                let Some(custom) = v.get("custom_id").and_then(Value::as_str) else {
                    return Err(Failure::Transient {
                        message: format!("line {} of batch {id}'s results has no custom_id", n + 1),
                        retry_after: None,
                    });
                };
                let answered = match self.provider {
                    Provider::Anthropic => anthropic_result(&v),
                    _ => openai_result(&v),
                };
                let answered = answered.map(|(mut a, u)| {
                    self.scrub(&mut a);
                    (a, u)
                });
                out.insert(
                    custom.to_string(),
                    answered.map_err(|m| clean_message(&m, self.secrets())),
                );
            }
        }
        Ok(out)
    }

    /// Anthropic's `results_url`, when it is on the configured host; else the documented path
    /// there (the key is never sent to a host the user did not configure).
    fn results_url(&self, id: &str, given: &str) -> reqwest::Url {
        let standard = self.batch_url(&format!("/{id}/results"));
        match reqwest::Url::parse(given) {
            Ok(u) if u.origin() == self.base.origin() => u,
            _ => standard,
        }
    }
}

/// The JSON of a 2xx reply; a failure otherwise, or when a success is not JSON (a broken
/// endpoint: retried, never read as a batch).
fn reply_value(reply: &Reply, what: &str) -> Result<Value, Failure> {
    if !reply.status.is_success() {
        let hint = if reply.status.as_u16() == 404 {
            " (does this endpoint have a batch API? drop --batch for servers without one)"
        } else {
            ""
        };
        return Err(http::http_error(reply).map_message(|m| format!("{what}: {m}{hint}")));
    }
    serde_json::from_str(&reply.body).map_err(|e| Failure::Transient {
        message: format!(
            "{what}: {} but the body is not JSON ({e}): {}",
            http::status_text(reply.status),
            clean_message(&reply.body, &[])
        ),
        retry_after: None,
    })
}

/// The `id` of a created object; it goes into URL paths, so only id characters are taken.
fn id_of(v: &Value, what: &str) -> Result<String, Failure> {
    let id = v.get("id").and_then(Value::as_str).unwrap_or_default();
    if is_id(id) {
        Ok(id.to_string())
    } else {
        Err(Failure::Transient {
            message: format!(
                "{what} came back without a usable id: {}",
                clean_message(&v.to_string(), &[])
            ),
            retry_after: None,
        })
    }
}

fn is_id(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn count(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

fn openai_status(v: &Value) -> Result<Status, String> {
    let word = v
        .get("status")
        .and_then(Value::as_str)
        .ok_or("no status in the batch object")?;
    let files = ["output_file_id", "error_file_id"]
        .iter()
        .filter_map(|k| v.get(*k).and_then(Value::as_str))
        .filter(|f| is_id(f))
        .map(String::from)
        .collect();
    let phase = match word {
        "validating" | "in_progress" | "finalizing" | "cancelling" => Phase::Running,
        // An expired or cancelled batch keeps what it finished; the rest has no answer.
        "completed" | "expired" | "cancelled" => Phase::Ended { files },
        "failed" => {
            let errors: Vec<String> = v
                .pointer("/errors/data")
                .and_then(Value::as_array)
                .map(|e| {
                    e.iter()
                        .filter_map(|e| e.get("message").and_then(Value::as_str))
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            Phase::Failed(if errors.is_empty() {
                "the batch failed".into()
            } else {
                format!("the batch failed: {}", errors.join("; "))
            })
        }
        other => return Err(format!("unknown batch status {other:?}")),
    };
    Ok(Status {
        phase,
        word: word.to_string(),
        done: count(v, "/request_counts/completed") + count(v, "/request_counts/failed"),
        total: count(v, "/request_counts/total"),
    })
}

fn anthropic_status(v: &Value) -> Result<Status, String> {
    let word = v
        .get("processing_status")
        .and_then(Value::as_str)
        .ok_or("no processing_status in the message batch")?;
    let c = |k: &str| count(v, &format!("/request_counts/{k}"));
    let done = c("succeeded") + c("errored") + c("canceled") + c("expired");
    let phase = match word {
        "in_progress" | "canceling" => Phase::Running,
        "ended" => Phase::Ended {
            files: vec![
                v.get("results_url")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            ],
        },
        other => return Err(format!("unknown processing_status {other:?}")),
    };
    Ok(Status {
        phase,
        word: word.to_string(),
        done,
        total: done + c("processing"),
    })
}

/// One line of an OpenAI output or error file.
fn openai_result(v: &Value) -> Answered {
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        return Err(format!("the batch did not run it: {}", error_text(e)));
    }
    let status = v
        .pointer("/response/status_code")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let body = v.pointer("/response/body").unwrap_or(&Value::Null);
    if !(200..300).contains(&status) {
        return Err(format!(
            "the batch answered it with HTTP {status}: {}",
            http::provider_error_message(&body.to_string())
        ));
    }
    let answer = openai::read_answer(body)?;
    Ok((answer, openai::read_usage(body)))
}

/// One line of an Anthropic results file.
fn anthropic_result(v: &Value) -> Answered {
    let result = v.get("result").unwrap_or(&Value::Null);
    match result.get("type").and_then(Value::as_str) {
        Some("succeeded") => {
            let message = result.get("message").unwrap_or(&Value::Null);
            let answer = anthropic::read_answer(message)?;
            Ok((answer, anthropic::read_usage(message)))
        }
        Some("errored") => Err(format!(
            "the batch could not answer it: {}",
            http::provider_error_message(
                &json!({"error": result.pointer("/error/error").or(result.get("error"))})
                    .to_string()
            )
        )),
        Some(kind @ ("canceled" | "expired")) => Err(format!("the batch item was {kind}")),
        _ => Err(format!(
            "a result that is not one: {}",
            clean_message(&result.to_string(), &[])
        )),
    }
}

fn error_text(e: &Value) -> String {
    match (
        e.get("code").and_then(Value::as_str),
        e.get("message").and_then(Value::as_str),
    ) {
        (Some(c), Some(m)) => format!("{c}: {m}"),
        (None, Some(m)) => m.to_string(),
        _ => e.to_string(),
    }
}

/// The cache key of one set of items on one endpoint and model.
fn store_key(chat: &Chat, items: &[Item]) -> String {
    let mut ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
    ids.sort_unstable();
    crate::cache::key(&json!({
        "v": 1,
        "kind": chat.kind(),
        "host": chat.host(),
        "model": chat.model(),
        "items": ids,
    }))
}

/// Chunks of `items` within the provider's limits, in order.
fn chunks<'a>(provider: &Provider, items: &[&'a Item]) -> Vec<Vec<&'a Item>> {
    let (max_items, max_bytes) = limits(provider);
    let mut out: Vec<Vec<&Item>> = Vec::new();
    let mut bytes = 0;
    for &item in items {
        // Each line is its body plus ~100 bytes of envelope.
        let size = item.body.to_string().len() + 128;
        match out.last_mut() {
            Some(last) if last.len() < max_items && bytes + size <= max_bytes => {
                last.push(item);
                bytes += size;
            }
            _ => {
                out.push(vec![item]);
                bytes = size;
            }
        }
    }
    out
}

/// Submit `items` as batches (or resume the ones an interrupted run submitted for exactly these
/// items), wait for them within `opts.wait`, and read every answer. `store` keeps the batch ids
/// (a cache that is off keeps nothing: a re-run then submits again). Progress goes to `console`.
pub async fn run(
    chat: &Chat,
    items: &[Item],
    opts: &Options,
    retry: &RetryPolicy,
    store: &Cache,
    console: &dyn Console,
) -> Outcome {
    let mut outcome = Outcome::default();
    if items.is_empty() {
        return outcome;
    }
    let key = store_key(chat, items);
    let mut submitted = resumable(store, &key, items, console);
    outcome.resumed = submitted.batches.len();
    let covered: std::collections::HashSet<&str> = submitted
        .batches
        .iter()
        .flat_map(|b| b.items.iter().map(String::as_str))
        .collect();
    let todo: Vec<&Item> = items
        .iter()
        .filter(|i| !covered.contains(i.id.as_str()))
        .collect();
    for chunk in chunks(&chat.provider, &todo) {
        let owned: Vec<Item> = chunk.iter().map(|i| (*i).clone()).collect();
        let r = with_retry(retry, || chat.submit(&owned)).await;
        match r.result {
            Ok(id) => {
                console.note(&format!(
                    "batch: submitted {id} with {} request(s) to {} {}",
                    owned.len(),
                    chat.kind(),
                    chat.host()
                ));
                submitted.batches.push(Submission {
                    id,
                    items: owned.iter().map(|i| i.id.clone()).collect(),
                });
                // Kept at once: an interruption from here on resumes instead of paying twice.
                let _ = store.put_synced(&key, &submitted);
            }
            Err(e) => {
                let why = format!(
                    "batch not submitted after {} attempt(s): {}",
                    r.attempts,
                    chat.scrub_failure(e)
                );
                fail_all(&mut outcome, owned.iter().map(|i| i.id.as_str()), &why);
            }
        }
    }
    outcome.batches = submitted.batches.iter().map(|b| b.id.clone()).collect();
    let started = Instant::now();
    let mut pending: Vec<&Submission> = submitted.batches.iter().collect();
    let mut pause = Duration::from_secs(1).min(opts.poll_max);
    let mut last: HashMap<String, Status> = HashMap::new();
    // Batches that cannot be read again (failed, gone, unreadable): forgotten, so a re-run
    // submits their requests anew instead of resuming them forever.
    let mut dropped: Vec<String> = Vec::new();
    while !pending.is_empty() {
        let mut still = Vec::new();
        for b in pending {
            let r = with_retry(retry, || chat.status(&b.id)).await;
            let status = match r.result {
                Ok(s) => s,
                Err(e) => {
                    let why = format!("polling batch {}: {}", b.id, chat.scrub_failure(e));
                    fail_all(&mut outcome, b.items.iter().map(String::as_str), &why);
                    dropped.push(b.id.clone());
                    continue;
                }
            };
            match &status.phase {
                Phase::Running => {
                    if last.get(&b.id) != Some(&status) {
                        console.note(&format!(
                            "batch {}: {} ({}/{} done)",
                            b.id, status.word, status.done, status.total
                        ));
                    }
                    last.insert(b.id.clone(), status);
                    still.push(b);
                }
                Phase::Failed(why) => {
                    let why = clean_message(&format!("batch {}: {why}", b.id), chat.secrets());
                    fail_all(&mut outcome, b.items.iter().map(String::as_str), &why);
                    dropped.push(b.id.clone());
                }
                Phase::Ended { files } => {
                    if !read_ended(chat, retry, b, files, &status.word, &mut outcome).await {
                        dropped.push(b.id.clone());
                    }
                }
            }
        }
        pending = still;
        if pending.is_empty() {
            break;
        }
        if started.elapsed() + pause > opts.wait {
            for b in &pending {
                let why = still_running(b, last.get(&b.id), opts.wait, store.is_on());
                fail_all(&mut outcome, b.items.iter().map(String::as_str), &why);
            }
            break;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(opts.poll_max);
    }
    if !dropped.is_empty() {
        submitted.batches.retain(|b| !dropped.contains(&b.id));
        let _ = store.put_synced(&key, &submitted);
    }
    outcome
}

/// The batches an interrupted run submitted for exactly these `items`, as `store` kept them
/// under `key` (a stored batch of ids that are not ours, a foreign or corrupt entry, is dropped).
fn resumable(store: &Cache, key: &str, items: &[Item], console: &dyn Console) -> Submitted {
    let by_id: BTreeMap<&str, &Item> = items.iter().map(|i| (i.id.as_str(), i)).collect();
    let mut submitted: Submitted = store.get(key).unwrap_or_default();
    submitted
        .batches
        .retain(|b| is_id(&b.id) && b.items.iter().all(|i| by_id.contains_key(i.as_str())));
    if !submitted.batches.is_empty() {
        console.note(&format!(
            "batch: resuming {} batch(es) an earlier run submitted for these {} request(s): {}",
            submitted.batches.len(),
            items.len(),
            submitted
                .batches
                .iter()
                .map(|b| b.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    submitted
}

/// Read an ended batch's answers into `outcome` (a request it did not answer fails); `false`
/// when its results could not be read, every request of it failed.
async fn read_ended(
    chat: &Chat,
    retry: &RetryPolicy,
    b: &Submission,
    files: &[String],
    word: &str,
    outcome: &mut Outcome,
) -> bool {
    let cap = (b.items.len().saturating_mul(256 << 10) + (1 << 20)).min(1 << 30);
    let r = with_retry(retry, || chat.results(&b.id, files, cap)).await;
    match r.result {
        Ok(mut got) => {
            for id in &b.items {
                let a = got.remove(id).unwrap_or_else(|| {
                    Err(format!(
                        "batch {} ended ({word}) without an answer for this request",
                        b.id
                    ))
                });
                outcome.answers.insert(id.clone(), a);
            }
            true
        }
        Err(e) => {
            let why = format!(
                "reading batch {}'s results: {}",
                b.id,
                chat.scrub_failure(e)
            );
            fail_all(outcome, b.items.iter().map(String::as_str), &why);
            false
        }
    }
}

/// Why a batch's requests have no answer when the wait ran out, and how the next run resumes it.
fn still_running(b: &Submission, s: Option<&Status>, wait: Duration, kept: bool) -> String {
    format!(
        "batch {} still {} after waiting {} s ({}/{} done); its id is kept in the cache{}, so the same command resumes it without paying again",
        b.id,
        s.map_or("running", |s| s.word.as_str()),
        wait.as_secs(),
        s.map_or(0, |s| s.done),
        s.map_or(0, |s| s.total),
        if kept {
            ""
        } else {
            " — no: the cache is off, so a re-run submits again"
        }
    )
}

/// Every id of `ids` has no answer, for `why`.
fn fail_all<'a>(outcome: &mut Outcome, ids: impl Iterator<Item = &'a str>, why: &str) {
    for id in ids {
        outcome.answers.insert(id.to_string(), Err(why.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_statuses_map_to_phases() {
        let s = openai_status(&json!({"status": "in_progress", "request_counts": {"total": 4, "completed": 1, "failed": 1}})).unwrap();
        assert_eq!((s.phase, s.done, s.total), (Phase::Running, 2, 4));
        let s = openai_status(&json!({"status": "completed", "output_file_id": "file-out", "error_file_id": "file-err"})).unwrap();
        assert_eq!(
            s.phase,
            Phase::Ended {
                files: vec!["file-out".into(), "file-err".into()]
            }
        );
        // A file id that is not an id never reaches a URL.
        let s =
            openai_status(&json!({"status": "completed", "output_file_id": "../../x"})).unwrap();
        assert_eq!(s.phase, Phase::Ended { files: vec![] });
        let s = openai_status(&json!({"status": "failed", "errors": {"object": "list", "data": [{"code": "model_not_found", "message": "no such model"}]}})).unwrap();
        assert_eq!(
            s.phase,
            Phase::Failed("the batch failed: no such model".into())
        );
        assert!(openai_status(&json!({"status": "paused"})).is_err());
        assert!(openai_status(&json!({})).is_err());
    }

    #[test]
    fn anthropic_statuses_map_to_phases() {
        let s = anthropic_status(&json!({"processing_status": "in_progress", "request_counts": {"processing": 3, "succeeded": 1, "errored": 0, "canceled": 0, "expired": 0}})).unwrap();
        assert_eq!((s.phase, s.done, s.total), (Phase::Running, 1, 4));
        let s = anthropic_status(&json!({"processing_status": "ended", "results_url": "https://api.anthropic.com/v1/messages/batches/msgbatch_1/results"})).unwrap();
        assert!(matches!(s.phase, Phase::Ended { .. }));
        assert!(anthropic_status(&json!({"processing_status": "done"})).is_err());
    }

    #[test]
    fn result_lines_read_answers_and_name_failures() {
        let ok = json!({"custom_id": "a", "response": {"status_code": 200, "request_id": "r", "body": {"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}}, "error": null});
        let (a, u) = openai_result(&ok).unwrap();
        assert_eq!(a, Answer::NoCall { text: "hi".into() });
        assert_eq!(u.unwrap().input_tokens, 7);
        let bad = json!({"custom_id": "a", "response": {"status_code": 400, "body": {"error": {"message": "bad tools", "type": "invalid_request_error"}}}, "error": null});
        assert!(
            openai_result(&bad)
                .unwrap_err()
                .contains("HTTP 400: invalid_request_error: bad tools")
        );
        let expired = json!({"custom_id": "a", "response": null, "error": {"code": "batch_expired", "message": "not run in time"}});
        assert!(
            openai_result(&expired)
                .unwrap_err()
                .contains("batch_expired")
        );
        // A 200 whose body is not an answer is not an answer.
        let junk = json!({"custom_id": "a", "response": {"status_code": 200, "body": {}}});
        assert!(openai_result(&junk).is_err());

        let ok = json!({"custom_id": "b", "result": {"type": "succeeded", "message": {"content": [{"type": "tool_use", "name": "f", "input": {"x": 1}}], "usage": {"input_tokens": 9, "output_tokens": 3}}}});
        assert!(
            matches!(anthropic_result(&ok).unwrap().0, Answer::Call { ref name, .. } if name == "f")
        );
        let err = json!({"custom_id": "b", "result": {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens too large"}}}});
        assert!(
            anthropic_result(&err)
                .unwrap_err()
                .contains("invalid_request_error: max_tokens too large")
        );
        let exp = json!({"custom_id": "b", "result": {"type": "expired"}});
        assert_eq!(
            anthropic_result(&exp).unwrap_err(),
            "the batch item was expired"
        );
    }

    #[test]
    fn chunks_respect_count_and_size_limits() {
        let item = |n: usize| Item {
            id: format!("i{n}"),
            body: json!({"n": n}),
        };
        let items: Vec<Item> = (0..100_001).map(item).collect();
        let refs: Vec<&Item> = items.iter().collect();
        let c = chunks(&Provider::OpenAi, &refs);
        assert_eq!(
            c.iter().map(Vec::len).collect::<Vec<_>>(),
            [50_000, 50_000, 1]
        );
        let c = chunks(&Provider::Anthropic, &refs);
        assert_eq!(c.iter().map(Vec::len).collect::<Vec<_>>(), [100_000, 1]);
        let big = Item {
            id: "big".into(),
            body: json!({"t": "x".repeat(100 << 20)}),
        };
        let c = chunks(&Provider::OpenAi, &[&big, &big, &big]);
        assert_eq!(c.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1, 1]);
    }

    #[test]
    fn results_urls_stay_on_the_configured_host() {
        let chat = Chat::anthropic(
            Some("http://127.0.0.1:9/"),
            "m",
            None,
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(
            chat.results_url("msgbatch_1", "http://evil.example/steal")
                .as_str(),
            "http://127.0.0.1:9/v1/messages/batches/msgbatch_1/results"
        );
        assert_eq!(
            chat.results_url(
                "msgbatch_1",
                "http://127.0.0.1:9/v1/messages/batches/msgbatch_1/results?x=1"
            )
            .as_str(),
            "http://127.0.0.1:9/v1/messages/batches/msgbatch_1/results?x=1"
        );
        let chat = Chat::openai(
            Some("http://127.0.0.1:9/v1"),
            "m",
            None,
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(
            chat.batch_url("/b_1").as_str(),
            "http://127.0.0.1:9/v1/batches/b_1"
        );
        let azure = Chat::openai(
            Some("http://127.0.0.1:9/openai/deployments/d"),
            "m",
            None,
            Duration::from_secs(1),
        )
        .unwrap()
        .azure("2024-10-21")
        .unwrap();
        assert!(azure.batch_supported().is_err());
    }
}
