//! Embedding cache: one entry per (model id, text) in the `embed` section of the one
//! `crate::cache::Cache`, and an in-process memo in front of it, so drift, lint and the semantic
//! router, which share one embedder, embed each distinct text once per run even with the disk
//! cache off.
//!
//! Entry layout (little-endian): `DGE1` magic, u32 dimension, dimension × f32, then sha256 over the
//! cache key and everything before it. Any entry that fails those checks is treated as a miss and
//! rewritten, so a truncated or hand-edited entry can never leak into a measurement.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use ndarray::Array2;
use sha2::{Digest, Sha256};

use super::Embedder;
use crate::cache::Cache;
use crate::{Error, Result};

/// The cache section embeddings live in.
pub const SECTION: &str = "embed";

const MAGIC: &[u8; 4] = b"DGE1";

/// Counters since construction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Texts asked for, repeats included.
    pub asked: u64,
    /// Distinct texts among them.
    pub distinct: u64,
    /// Texts answered by the in-process memo (asked before in this run).
    pub memo_hits: u64,
    pub hits: u64,
    pub misses: u64,
    /// Entries that could not be written (the cache is best-effort; results are unaffected).
    pub write_errors: u64,
    /// Wall time spent in the model (its load included), summed over calls.
    pub model_ms: u64,
    /// Calls that reached the model: a run that knows its texts up front makes one.
    pub model_calls: u64,
}

/// Wraps an embedder with a persistent cache keyed by sha256(model id, text).
pub struct CachedEmbedder {
    inner: Box<dyn Embedder>,
    cache: Cache,
    memo: std::sync::Mutex<std::collections::HashMap<String, Vec<f32>>>,
    /// The texts the model embedded (each once: the memo answers repeats).
    embedded: std::sync::Mutex<Vec<String>>,
    asked: AtomicU64,
    memo_hits: AtomicU64,
    hits: AtomicU64,
    misses: AtomicU64,
    write_errors: AtomicU64,
    model_us: AtomicU64,
    model_calls: AtomicU64,
}

impl CachedEmbedder {
    /// Memoise `inner` in `cache`'s embed section.
    pub fn new(inner: Box<dyn Embedder>, cache: &Cache) -> Self {
        Self {
            inner,
            cache: cache.section(SECTION),
            memo: Default::default(),
            embedded: Default::default(),
            asked: AtomicU64::new(0),
            memo_hits: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            write_errors: AtomicU64::new(0),
            model_us: AtomicU64::new(0),
            model_calls: AtomicU64::new(0),
        }
    }

    pub fn stats(&self) -> CacheStats {
        CacheStats {
            asked: self.asked.load(Ordering::Relaxed),
            distinct: self.memo.lock().expect("memo lock").len() as u64,
            memo_hits: self.memo_hits.load(Ordering::Relaxed),
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            write_errors: self.write_errors.load(Ordering::Relaxed),
            model_ms: self.model_us.load(Ordering::Relaxed) / 1000,
            model_calls: self.model_calls.load(Ordering::Relaxed),
        }
    }

    /// Path of the entry for `text` (exposed so tests and tools can inspect or corrupt it);
    /// `None` when the cache is off.
    pub fn entry_path(&self, text: &str) -> Option<PathBuf> {
        self.cache.path(&key(self.inner.id(), text))
    }
}

/// Length-prefix the id so ("ab", "c") and ("a", "bc") never collide.
fn key(model_id: &str, text: &str) -> String {
    let mut h = Sha256::new();
    h.update((model_id.len() as u64).to_le_bytes());
    h.update(model_id.as_bytes());
    h.update(text.as_bytes());
    hex::encode(h.finalize())
}

fn checksum(key: &str, body: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(key.as_bytes());
    h.update(body);
    h.finalize().into()
}

fn encode(key: &str, v: &[f32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + 4 * v.len() + 32);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&(v.len() as u32).to_le_bytes());
    for x in v {
        b.extend_from_slice(&x.to_le_bytes());
    }
    let sum = checksum(key, &b);
    b.extend_from_slice(&sum);
    b
}

fn decode(key: &str, b: &[u8]) -> Option<Vec<f32>> {
    if b.len() < 8 + 32 || &b[..4] != MAGIC {
        return None;
    }
    let dim = u32::from_le_bytes(b[4..8].try_into().ok()?) as usize;
    if dim == 0 || b.len() != 8 + 4 * dim + 32 {
        return None;
    }
    let (body, sum) = b.split_at(b.len() - 32);
    if checksum(key, body) != sum {
        return None;
    }
    let v: Vec<f32> = body[8..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().expect("chunk of 4")))
        .collect();
    v.iter().all(|x| x.is_finite()).then_some(v)
}

#[async_trait::async_trait]
impl Embedder for CachedEmbedder {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn stats(&self) -> Option<CacheStats> {
        Some(CachedEmbedder::stats(self))
    }

    fn embedded_texts(&self) -> Vec<String> {
        let mut texts = self.embedded.lock().expect("embedded lock").clone();
        texts.sort();
        texts
    }

    async fn embed(&self, texts: &[String]) -> Result<Array2<f32>> {
        if texts.is_empty() {
            // Only the engine knows its dimension for an empty result.
            return self.inner.embed(texts).await;
        }
        self.asked.fetch_add(texts.len() as u64, Ordering::Relaxed);
        let keys: Vec<String> = texts.iter().map(|t| key(self.inner.id(), t)).collect();
        let remembered: Vec<Option<Vec<f32>>> = {
            let memo = self.memo.lock().expect("memo lock");
            keys.iter().map(|k| memo.get(k).cloned()).collect()
        };
        let memo_hits = remembered.iter().filter(|r| r.is_some()).count();
        self.memo_hits
            .fetch_add(memo_hits as u64, Ordering::Relaxed);
        let cache = self.cache.clone();
        let read_keys: Vec<Option<String>> = keys
            .iter()
            .zip(&remembered)
            .map(|(k, r)| r.is_none().then(|| k.clone()))
            .collect();
        let from_disk: Vec<Option<Vec<f32>>> = tokio::task::spawn_blocking(move || {
            read_keys
                .iter()
                .map(|k| decode(k.as_ref()?, &cache.read(k.as_ref()?)?))
                .collect()
        })
        .await
        .map_err(|e| Error::Incomplete(format!("embedding cache task failed: {e}")))?;
        let disk_hits = from_disk.iter().filter(|d| d.is_some()).count();
        let cached: Vec<Option<Vec<f32>>> = remembered
            .into_iter()
            .zip(from_disk)
            .map(|(r, d)| r.or(d))
            .collect();

        // Embed each distinct missing text once.
        let mut miss_texts: Vec<String> = Vec::new();
        let mut miss_slot: std::collections::HashMap<&str, usize> = Default::default();
        for (i, c) in cached.iter().enumerate() {
            if c.is_none() && !miss_slot.contains_key(keys[i].as_str()) {
                miss_slot.insert(keys[i].as_str(), miss_texts.len());
                miss_texts.push(texts[i].clone());
            }
        }
        self.hits.fetch_add(disk_hits as u64, Ordering::Relaxed);
        self.misses
            .fetch_add(miss_texts.len() as u64, Ordering::Relaxed);

        let fresh = if miss_texts.is_empty() {
            None
        } else {
            let started = std::time::Instant::now();
            self.model_calls.fetch_add(1, Ordering::Relaxed);
            let rows = self.inner.embed(&miss_texts).await;
            self.model_us
                .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
            if rows.is_ok() {
                let mut embedded = self.embedded.lock().expect("embedded lock");
                embedded.extend(miss_texts.iter().cloned());
            }
            Some(rows?)
        };

        let dim = cached
            .iter()
            .flatten()
            .map(Vec::len)
            .chain(fresh.as_ref().map(|f| f.ncols()))
            .next()
            .unwrap_or(0);
        let mut out = Array2::<f32>::zeros((texts.len(), dim));
        for (i, c) in cached.iter().enumerate() {
            let row: &[f32] = match c {
                Some(v) => v,
                None => {
                    let f = fresh.as_ref().expect("misses were embedded");
                    f.row(miss_slot[keys[i].as_str()])
                        .to_slice()
                        .expect("standard layout")
                }
            };
            if row.len() != dim {
                return Err(Error::Incomplete(format!(
                    "embedder {} returned vectors of dimension {} and {dim}",
                    self.inner.id(),
                    row.len()
                )));
            }
            out.row_mut(i).assign(&ndarray::ArrayView1::from(row));
        }
        {
            let mut memo = self.memo.lock().expect("memo lock");
            for (k, row) in keys.iter().zip(out.rows()) {
                if !memo.contains_key(k) {
                    memo.insert(k.clone(), row.to_vec());
                }
            }
        }

        if let Some(f) = fresh.filter(|_| self.cache.is_on()) {
            self.write_back(&f, &miss_slot).await;
        }
        Ok(out)
    }
}

impl CachedEmbedder {
    /// The model's fresh rows (`slot`: key → row) onto the disk cache; a failed write is counted.
    async fn write_back(&self, fresh: &Array2<f32>, slot: &std::collections::HashMap<&str, usize>) {
        let entries: Vec<(String, Vec<u8>)> = slot
            .iter()
            .map(|(k, &j)| {
                let row = fresh.row(j);
                (
                    k.to_string(),
                    encode(k, row.as_slice().expect("standard layout")),
                )
            })
            .collect();
        let cache = self.cache.clone();
        let failed = tokio::task::spawn_blocking(move || {
            entries
                .iter()
                .filter(|(k, b)| cache.write(k, b).is_err())
                .count()
        })
        .await
        .unwrap_or(0);
        self.write_errors
            .fetch_add(failed as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    type Calls = Arc<Mutex<Vec<Vec<String>>>>;

    /// Deterministic fake that records what it was asked to embed.
    struct Fake {
        calls: Calls,
    }

    #[async_trait::async_trait]
    impl Embedder for Fake {
        fn id(&self) -> &str {
            "fake:v1"
        }
        async fn embed(&self, texts: &[String]) -> Result<Array2<f32>> {
            self.calls.lock().unwrap().push(texts.to_vec());
            let mut m = Array2::zeros((texts.len(), 3));
            for (i, t) in texts.iter().enumerate() {
                m[[i, 0]] = t.len() as f32;
                m[[i, 1]] = 1.0;
            }
            Ok(m)
        }
    }

    fn fake() -> (Box<Fake>, Calls) {
        let calls = Calls::default();
        (
            Box::new(Fake {
                calls: calls.clone(),
            }),
            calls,
        )
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn encode_decode_roundtrip_and_rejects() {
        let k = key("m", "t");
        let b = encode(&k, &[1.0, -2.5]);
        assert_eq!(decode(&k, &b), Some(vec![1.0, -2.5]));
        assert_eq!(
            decode(&key("m", "other"), &b),
            None,
            "entry bound to its key"
        );
        let mut flipped = b.clone();
        flipped[9] ^= 1;
        assert_eq!(decode(&k, &flipped), None);
        assert_eq!(decode(&k, &b[..b.len() - 1]), None);
        assert_eq!(decode(&k, b""), None);
        assert_ne!(key("ab", "c"), key("a", "bc"));
    }

    /// An embedder that takes 30 ms a call, to see the time spent in the model counted.
    struct Slow;

    #[async_trait::async_trait]
    impl Embedder for Slow {
        fn id(&self) -> &str {
            "slow:v1"
        }
        async fn embed(&self, texts: &[String]) -> Result<Array2<f32>> {
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
            Ok(Array2::ones((texts.len(), 2)))
        }
    }

    #[tokio::test]
    async fn model_time_counts_only_calls_that_reach_the_model() {
        let c = CachedEmbedder::new(Box::new(Slow), &Cache::new(None));
        assert_eq!(c.stats().model_ms, 0);
        c.embed(&s(&["a", "b"])).await.unwrap();
        let once = c.stats().model_ms;
        assert!((30..1000).contains(&once), "{once} ms");
        // Answered from the memo: the model is not called, no time is added.
        c.embed(&s(&["b", "a"])).await.unwrap();
        assert_eq!(c.stats().model_ms, once);
        c.embed(&s(&["c"])).await.unwrap();
        assert!(c.stats().model_ms >= once + 30);
    }

    #[tokio::test]
    async fn hits_misses_dedup_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let mac = crate::canon::MacKey::derive(b"repository secret");
        // Each "process" opens the cache a moment after the last wrote it.
        let open = || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            Cache::with_key(Some(dir.path().to_path_buf()), mac.clone())
        };
        let (inner, calls) = fake();
        let c = CachedEmbedder::new(inner, &open());

        let first = c.embed(&s(&["aa", "b", "aa"])).await.unwrap();
        assert_eq!(first.row(0), first.row(2));
        assert_eq!(calls.lock().unwrap().clone(), vec![s(&["aa", "b"])]);
        assert_eq!(c.stats().misses, 2);

        // A later process (a new embedder over the same directory) reads the disk.
        let (inner, calls) = fake();
        let c = CachedEmbedder::new(inner, &open());
        let again = c.embed(&s(&["b", "aa"])).await.unwrap();
        assert_eq!(again.row(0), first.row(1));
        assert!(
            calls.lock().unwrap().is_empty(),
            "all hits: inner not called"
        );
        assert_eq!(c.stats().hits, 2);

        std::fs::write(c.entry_path("b").unwrap(), b"garbage").unwrap();
        let (inner, calls) = fake();
        let c = CachedEmbedder::new(inner, &open());
        let fixed = c.embed(&s(&["b", "aa"])).await.unwrap();
        assert_eq!(fixed, again);
        assert_eq!(calls.lock().unwrap().last().unwrap(), &s(&["b"]));
        let k = key("fake:v1", "b");
        let rewritten = open().section(SECTION).read(&k).unwrap();
        assert!(decode(&k, &rewritten).is_some());
        assert_eq!(c.stats().write_errors, 0);
    }

    /// With the disk cache off, a text asked twice in one run is embedded once: drift, lint and
    /// the router share the embedder.
    #[tokio::test]
    async fn the_memo_serves_repeats_without_a_disk_cache() {
        let (inner, calls) = fake();
        let c = CachedEmbedder::new(inner, &Cache::new(None));
        let first = c.embed(&s(&["a", "b"])).await.unwrap();
        let again = c.embed(&s(&["b", "c", "a"])).await.unwrap();
        assert_eq!(again.row(0), first.row(1));
        assert_eq!(again.row(2), first.row(0));
        assert_eq!(
            calls.lock().unwrap().clone(),
            vec![s(&["a", "b"]), s(&["c"])]
        );
        let st = c.stats();
        assert_eq!(
            (st.memo_hits, st.hits, st.misses, st.write_errors),
            (2, 0, 3, 0)
        );
        // Five asked, three distinct; a repeat inside one call is embedded once too.
        assert_eq!((st.asked, st.distinct), (5, 3));
        assert_eq!(Embedder::embedded_texts(&c), s(&["a", "b", "c"]));
        c.embed(&s(&["d", "d"])).await.unwrap();
        assert_eq!(calls.lock().unwrap().last().unwrap(), &s(&["d"]));
        let st = c.stats();
        assert_eq!((st.asked, st.distinct, st.misses), (7, 4, 4));
    }

    #[tokio::test]
    async fn unwritable_dir_still_returns_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        std::fs::write(&file, b"").unwrap();
        let c = CachedEmbedder::new(fake().0, &Cache::new(Some(file)));
        let v = c.embed(&s(&["x"])).await.unwrap();
        assert_eq!(v.row(0).to_vec(), vec![1.0, 1.0, 0.0]);
        assert_eq!(c.stats().write_errors, 1);
    }
}
