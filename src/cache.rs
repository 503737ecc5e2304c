//! The one on-disk cache: content-addressed entries under `DIR/SECTION/ab/abcd…`, where the key
//! is the sha256 of everything that shaped the entry. Router answers, drafted JSON, lint grades
//! and embedding vectors all live here, each in its own section.
//!
//! It is best effort by design: an unreadable, truncated or foreign entry is a miss (the caller
//! asks again and overwrites it), and a failed write only costs work next time. Entries are
//! written atomically, so a concurrent run never reads half an entry, and unflushed (a power loss
//! can leave a torn entry, which reads as a miss), except records of money spent (`put_synced`).
//!
//! It is also untrusted input: the directory may have been restored from an earlier run, written
//! by an earlier pull request, or by the server command a run starts. So every entry carries an
//! HMAC-SHA256 tag over its place (section and key) and its bytes, under a key the pull request
//! cannot read (`canon::MacKey`: a repository secret, a local key file, or one made for this
//! process); an entry whose tag does not verify is a miss, counted in [`Cache::rejected`]. In a
//! run that starts a server command, an entry that appeared on disk after the cache opened, not
//! written by this run, is refused the same way (`Cache::refusing_fresh`): the server runs
//! beside us as our user, and could read a local key file.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::canon::{self, MacKey};
use crate::fs::Durability;

/// What every entry is tagged with, and what the cache saw while reading.
#[derive(Debug)]
struct Auth {
    key: MacKey,
    /// Entries that failed their tag or appeared during the run (each counted once, however
    /// often it is read).
    rejected: Mutex<HashSet<PathBuf>>,
    /// When this cache was opened: with `refuse_fresh`, an entry modified since, not by us, is
    /// refused.
    since: SystemTime,
    /// Set when the run starts a server command: a process running beside us, as our user.
    refuse_fresh: bool,
    /// Entries this process wrote (and may read back).
    written: Mutex<HashSet<PathBuf>>,
}

#[derive(Debug, Clone, Default)]
pub struct Cache {
    dir: Option<PathBuf>,
    /// The section's place under the root (`route`, `embed`, …), part of every tag.
    section: String,
    auth: Option<Arc<Auth>>,
}

/// Bytes of an entry's tag, after its body.
const TAG_LEN: usize = 32;

impl Cache {
    /// A cache rooted at `dir` whose entries are tagged under `key`; `None` keeps nothing on disk.
    pub fn with_key(dir: Option<PathBuf>, key: MacKey) -> Cache {
        Cache {
            dir,
            section: String::new(),
            auth: Some(Arc::new(Auth {
                key,
                rejected: Mutex::new(HashSet::new()),
                since: SystemTime::now(),
                refuse_fresh: false,
                written: Mutex::new(HashSet::new()),
            })),
        }
    }

    /// Refuse entries that appear during the run without being written by it: for a run that
    /// starts a server command (the PR's code, running as our user, beside us). Without one, a
    /// fresh entry is another honest run's, sharing the directory. Call before any section.
    pub fn refusing_fresh(mut self) -> Cache {
        if let Some(a) = self.auth.as_mut().and_then(Arc::get_mut) {
            a.refuse_fresh = true;
        }
        self
    }

    /// A cache rooted at `dir` under a key made for this process: entries from other processes
    /// never verify, so it only saves work within one run.
    pub fn new(dir: Option<PathBuf>) -> Cache {
        Cache::with_key(dir, MacKey::ephemeral())
    }

    /// A cache that never hits and never writes.
    pub fn off() -> Cache {
        Cache::default()
    }

    /// The sub-cache `name` (one per kind of entry, so formats never mix).
    pub fn section(&self, name: &str) -> Cache {
        Cache {
            dir: self.dir.as_ref().map(|d| d.join(name)),
            section: match self.section.is_empty() {
                true => name.to_string(),
                false => format!("{}/{name}", self.section),
            },
            auth: self.auth.clone(),
        }
    }

    /// Entries refused so far (any section): a tag that did not verify, or an entry written
    /// during the run by another process.
    pub fn rejected(&self) -> u64 {
        self.auth
            .as_ref()
            .map_or(0, |a| a.rejected.lock().expect("cache lock").len() as u64)
    }

    /// The root directory, when the cache is on.
    pub fn dir(&self) -> Option<&std::path::Path> {
        self.dir.as_deref()
    }

    pub fn is_on(&self) -> bool {
        self.dir.is_some()
    }

    /// Where the entry for `key` lives (two-level fan-out keeps directories small).
    pub fn path(&self, key: &str) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        let fan = key.get(..2).unwrap_or("__");
        Some(dir.join(fan).join(key))
    }

    /// The entry's bytes when present and authentic; a present entry that is not is counted.
    pub fn read(&self, key: &str) -> Option<Vec<u8>> {
        let path = self.path(key)?;
        let auth = self.auth.as_ref()?;
        let mut bytes = std::fs::read(&path).ok()?;
        let ours = auth.written.lock().expect("cache lock").contains(&path);
        let fresh = auth.refuse_fresh
            && !ours
            && std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= auth.since);
        let authentic = bytes.len() >= TAG_LEN && {
            let (body, tag) = bytes.split_at(bytes.len() - TAG_LEN);
            auth.key
                .verify(&[self.section.as_bytes(), key.as_bytes(), body], tag)
        };
        if fresh || !authentic {
            auth.rejected.lock().expect("cache lock").insert(path);
            return None;
        }
        bytes.truncate(bytes.len() - TAG_LEN);
        Some(bytes)
    }

    /// Write an entry atomically, unflushed (a crash costs a miss, never a wrong answer: see the
    /// module doc); a disabled cache writes nothing and succeeds.
    pub fn write(&self, key: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.write_with(key, bytes, Durability::Unsynced)
    }

    fn write_with(&self, key: &str, bytes: &[u8], durability: Durability) -> std::io::Result<()> {
        let (Some(path), Some(auth)) = (self.path(key), self.auth.as_ref()) else {
            return Ok(());
        };
        let tag = auth
            .key
            .tag(&[self.section.as_bytes(), key.as_bytes(), bytes]);
        let mut tagged = Vec::with_capacity(bytes.len() + TAG_LEN);
        tagged.extend_from_slice(bytes);
        tagged.extend_from_slice(&tag);
        auth.written
            .lock()
            .expect("cache lock")
            .insert(path.clone());
        crate::fs::write_atomic_with(&path, &tagged, durability)
    }

    /// A JSON entry, or `None` when missing or not of type `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        serde_json::from_slice(&self.read(key)?).ok()
    }

    /// Store `value` as canonical JSON.
    pub fn put<T: Serialize>(&self, key: &str, value: &T) -> std::io::Result<()> {
        self.put_with(key, value, Durability::Unsynced)
    }

    /// [`Cache::put`], flushed to disk before it is renamed into place: for a record whose loss
    /// costs money, not just work (a submitted batch, which would otherwise be paid for twice
    /// after a power loss). One per batch, so the flush is cheap.
    pub fn put_synced<T: Serialize>(&self, key: &str, value: &T) -> std::io::Result<()> {
        self.put_with(key, value, Durability::Synced)
    }

    fn put_with<T: Serialize>(
        &self,
        key: &str,
        value: &T,
        durability: Durability,
    ) -> std::io::Result<()> {
        let value = serde_json::to_value(value).map_err(std::io::Error::other)?;
        self.write_with(key, canon::to_canonical(&value).as_bytes(), durability)
    }
}

/// The key for `material`: the hex sha256 of its canonical JSON.
pub fn key(material: &Value) -> String {
    canon::hash(material)
        .trim_start_matches("sha256:")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A cache opened a moment ago under `key`, as a later run would open it.
    fn reopened(dir: &std::path::Path, mac: &MacKey) -> Cache {
        std::thread::sleep(std::time::Duration::from_millis(20));
        Cache::with_key(Some(dir.to_path_buf()), mac.clone())
    }

    #[test]
    fn round_trips_misses_on_garbage_and_keeps_sections_apart() {
        let d = tempfile::tempdir().unwrap();
        let mac = MacKey::derive(b"repository secret");
        let c = Cache::with_key(Some(d.path().to_path_buf()), mac.clone());
        let (a, b) = (c.section("a"), c.section("b"));
        let k = key(&json!({"x": 1}));
        assert_eq!(k.len(), 64);
        assert_eq!(k, key(&json!({"x": 1})));
        a.put(&k, &json!({"v": [1, 2]})).unwrap();
        assert_eq!(a.get::<Value>(&k), Some(json!({"v": [1, 2]})));
        assert_eq!(b.get::<Value>(&k), None);
        // A later run with the same key reads it.
        let later = reopened(d.path(), &mac).section("a");
        assert_eq!(later.get::<Value>(&k), Some(json!({"v": [1, 2]})));
        assert_eq!(later.rejected(), 0);
        std::fs::write(a.path(&k).unwrap(), b"{trunc").unwrap();
        let later = reopened(d.path(), &mac).section("a");
        assert_eq!(later.get::<Value>(&k), None);
        // What a power loss can leave of an unflushed entry: nothing, or zeros.
        for torn in [&b""[..], &[0u8; 16][..]] {
            std::fs::write(a.path(&k).unwrap(), torn).unwrap();
            assert_eq!(reopened(d.path(), &mac).section("a").get::<Value>(&k), None);
        }
        a.put_synced(&k, &json!(3)).unwrap();
        assert_eq!(a.get::<i32>(&k), Some(3));
        let off = Cache::off().section("a");
        off.put(&k, &1).unwrap();
        assert_eq!(off.get::<i32>(&k), None);
        assert!(!off.is_on());
    }

    #[test]
    fn entries_not_tagged_under_our_key_are_refused_and_counted() {
        let d = tempfile::tempdir().unwrap();
        let mac = MacKey::derive(b"repository secret");
        let c = Cache::with_key(Some(d.path().to_path_buf()), mac.clone()).section("route");
        let k = key(&json!({"q": "book a slot"}));
        c.put(&k, &json!({"tool": "schedule_appointment"})).unwrap();
        let path = c.path(&k).unwrap();
        let honest = std::fs::read(&path).unwrap();

        // A pull request's forged answer: well-formed JSON, a tag it computed without the key.
        let forged_body = br#"{"tool":"reschedule_appointment"}"#;
        let attacker = MacKey::derive(b"a guess");
        let mut forged = forged_body.to_vec();
        forged.extend_from_slice(&attacker.tag(&[b"route", k.as_bytes(), forged_body]));
        std::fs::write(&path, &forged).unwrap();
        let later = reopened(d.path(), &mac).section("route");
        assert_eq!(later.get::<Value>(&k), None);
        assert_eq!(later.rejected(), 1);
        // An untagged entry, as the cache wrote them before tags, is refused the same way.
        std::fs::write(&path, forged_body).unwrap();
        let later = reopened(d.path(), &mac).section("route");
        assert_eq!(later.get::<Value>(&k), None);
        assert_eq!(later.rejected(), 1);

        // An authentic entry moved to another request's place or section does not verify there.
        let other = key(&json!({"q": "cancel it"}));
        let moved = later.path(&other).unwrap();
        std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
        std::fs::write(&moved, &honest).unwrap();
        std::fs::write(&path, &honest).unwrap();
        let later = reopened(d.path(), &mac).section("route");
        assert_eq!(later.get::<Value>(&other), None);
        assert_eq!(
            later.get::<Value>(&k),
            Some(json!({"tool": "schedule_appointment"}))
        );
        let lint = reopened(d.path(), &mac).section("lint-llm");
        let there = lint.path(&k).unwrap();
        std::fs::create_dir_all(there.parent().unwrap()).unwrap();
        std::fs::write(&there, &honest).unwrap();
        let lint = reopened(d.path(), &mac).section("lint-llm");
        assert_eq!(lint.get::<Value>(&k), None);

        // Another process's key (a run without the repository secret) never verifies ours.
        let stranger = Cache::new(Some(d.path().to_path_buf())).section("route");
        assert_eq!(stranger.get::<Value>(&k), None);
        assert_eq!(stranger.rejected(), 1);
    }

    #[test]
    fn an_authentic_entry_that_appears_during_the_run_is_refused() {
        // The server command a run starts runs beside it: even with the key (a local key file
        // it could read), what it writes while we run is not read back.
        let d = tempfile::tempdir().unwrap();
        let mac = MacKey::derive(b"local key file");
        let run = Cache::with_key(Some(d.path().to_path_buf()), mac.clone())
            .refusing_fresh()
            .section("route");
        let k = key(&json!({"q": 1}));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let beside = Cache::with_key(Some(d.path().to_path_buf()), mac.clone()).section("route");
        beside.put(&k, &json!("forged")).unwrap();
        assert_eq!(run.get::<Value>(&k), None);
        assert_eq!(run.rejected(), 1);
        // What the run wrote itself it reads back.
        run.put(&k, &json!("ours")).unwrap();
        assert_eq!(run.get::<Value>(&k), Some(json!("ours")));
        // A run that starts no server reads what a concurrent run wrote: an honest neighbour.
        let plain = Cache::with_key(Some(d.path().to_path_buf()), mac.clone()).section("route");
        std::thread::sleep(std::time::Duration::from_millis(20));
        beside.put(&k, &json!("neighbour")).unwrap();
        assert_eq!(plain.get::<Value>(&k), Some(json!("neighbour")));
    }
}
