//! The one on-disk cache: content-addressed entries under `DIR/SECTION/ab/abcd…`, where the key
//! is the sha256 of everything that shaped the entry. Router answers, drafted JSON, lint grades
//! and embedding vectors all live here, each in its own section.
//!
//! It is best effort by design: an unreadable, truncated or foreign entry is a miss (the caller
//! asks again and overwrites it), and a failed write only costs work next time. Entries are
//! written atomically, so a concurrent run never reads half an entry, and unflushed (a power loss
//! can leave a torn entry, which reads as a miss), except records of money spent (`put_synced`).

use std::path::PathBuf;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::canon;
use crate::fs::Durability;

#[derive(Debug, Clone, Default)]
pub struct Cache {
    dir: Option<PathBuf>,
}

impl Cache {
    /// A cache rooted at `dir`; `None` keeps nothing on disk.
    pub fn new(dir: Option<PathBuf>) -> Cache {
        Cache { dir }
    }

    /// A cache that never hits and never writes.
    pub fn off() -> Cache {
        Cache { dir: None }
    }

    /// The sub-cache `name` (one per kind of entry, so formats never mix).
    pub fn section(&self, name: &str) -> Cache {
        Cache {
            dir: self.dir.as_ref().map(|d| d.join(name)),
        }
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

    pub fn read(&self, key: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path(key)?).ok()
    }

    /// Write an entry atomically, unflushed (a crash costs a miss, never a wrong answer: see the
    /// module doc); a disabled cache writes nothing and succeeds.
    pub fn write(&self, key: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.write_with(key, bytes, Durability::Unsynced)
    }

    fn write_with(&self, key: &str, bytes: &[u8], durability: Durability) -> std::io::Result<()> {
        match self.path(key) {
            Some(path) => crate::fs::write_atomic_with(&path, bytes, durability),
            None => Ok(()),
        }
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

    #[test]
    fn round_trips_misses_on_garbage_and_keeps_sections_apart() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::new(Some(d.path().to_path_buf()));
        let (a, b) = (c.section("a"), c.section("b"));
        let k = key(&json!({"x": 1}));
        assert_eq!(k.len(), 64);
        assert_eq!(k, key(&json!({"x": 1})));
        a.put(&k, &json!({"v": [1, 2]})).unwrap();
        assert_eq!(a.get::<Value>(&k), Some(json!({"v": [1, 2]})));
        assert_eq!(b.get::<Value>(&k), None);
        std::fs::write(a.path(&k).unwrap(), b"{trunc").unwrap();
        assert_eq!(a.get::<Value>(&k), None);
        // What a power loss can leave of an unflushed entry: nothing, or zeros.
        for torn in [&b""[..], &[0u8; 16][..]] {
            std::fs::write(a.path(&k).unwrap(), torn).unwrap();
            assert_eq!(a.get::<Value>(&k), None);
        }
        a.put_synced(&k, &json!(3)).unwrap();
        assert_eq!(a.get::<i32>(&k), Some(3));
        let off = Cache::off().section("a");
        off.put(&k, &1).unwrap();
        assert_eq!(off.get::<i32>(&k), None);
        assert!(!off.is_on());
    }
}
