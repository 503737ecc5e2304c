//! Canonical JSON (RFC 8785 style) and the hashes built on it.
//!
//! Keys are sorted by UTF-16 code units, no insignificant whitespace, numbers in their shortest
//! round-trip form with integral floats written as integers, strings with JSON's minimal escapes.
//! The same definition therefore hashes the same whatever key order or spacing a server used.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Canonical bytes of a JSON value.
pub fn to_canonical(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => out.push_str(&serde_json::to_string(s).expect("string serialises")),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in sorted_entries(m).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).expect("string serialises"));
                out.push(':');
                write(x, out);
            }
            out.push('}');
        }
    }
}

/// RFC 8785 orders keys by their UTF-16 code units, not by UTF-8 bytes.
fn sorted_entries(m: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = m.iter().collect();
    entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
    entries
}

fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    // ECMAScript writes integral values below 1e21 without a fraction or exponent.
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if f == 0.0 {
            return "0".into();
        }
        return format!("{f:.0}");
    }
    let s = n.to_string();
    // ECMAScript spells positive exponents with a sign ("1e+23").
    match s.find('e') {
        Some(i) if !s[i + 1..].starts_with(['-', '+']) => format!("{}e+{}", &s[..i], &s[i + 1..]),
        _ => s,
    }
}

/// A copy of `v` whose objects have sorted keys: pretty-printing it gives stable, reviewable bytes.
pub fn sorted(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        Value::Object(m) => Value::Object(
            sorted_entries(m)
                .into_iter()
                .map(|(k, x)| (k.clone(), sorted(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `sha256:<hex>` of the canonical bytes.
pub fn hash(v: &Value) -> String {
    hash_str(&to_canonical(v))
}

pub fn hash_str(s: &str) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(s.as_bytes())))
}

/// A secret key for HMAC-SHA256 tags: what makes a cache entry or a shard part authentic. A hash
/// anyone can recompute proves nothing about who wrote the bytes; a tag under a key the pull
/// request cannot read does. The key never prints.
#[derive(Clone, PartialEq, Eq)]
pub struct MacKey([u8; 32]);

impl std::fmt::Debug for MacKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MacKey(***)")
    }
}

impl MacKey {
    /// The key derived from secret material of any length (a repository secret, a key file).
    pub fn derive(material: &[u8]) -> MacKey {
        let mut h = Sha256::new();
        h.update(b"driftgate mac key v1\0");
        h.update(material);
        MacKey(h.finalize().into())
    }

    /// A key for this process only, from the OS's random source.
    pub fn ephemeral() -> MacKey {
        let mut k = [0u8; 32];
        rand::fill(&mut k);
        MacKey(k)
    }

    /// The 32-byte tag of `parts`, each length-prefixed so ("ab", "c") and ("a", "bc") differ.
    pub fn tag(&self, parts: &[&[u8]]) -> [u8; 32] {
        use hmac::{KeyInit, Mac};
        let mut m = hmac::Hmac::<Sha256>::new_from_slice(&self.0).expect("any key length");
        for p in parts {
            m.update(&(p.len() as u64).to_le_bytes());
            m.update(p);
        }
        m.finalize().into_bytes().into()
    }

    /// Whether `tag` is the tag of `parts` (compared in constant time).
    pub fn verify(&self, parts: &[&[u8]], tag: &[u8]) -> bool {
        use hmac::{KeyInit, Mac};
        let mut m = hmac::Hmac::<Sha256>::new_from_slice(&self.0).expect("any key length");
        for p in parts {
            m.update(&(p.len() as u64).to_le_bytes());
            m.update(p);
        }
        m.verify_slice(tag).is_ok()
    }

    /// `hmac-sha256:<hex>` of the canonical bytes of `v`, for tags carried inside JSON.
    pub fn tag_json(&self, domain: &str, v: &Value) -> String {
        let tag = self.tag(&[domain.as_bytes(), to_canonical(v).as_bytes()]);
        format!("hmac-sha256:{}", hex::encode(tag))
    }

    /// Whether `tag` (as [`MacKey::tag_json`] writes it) is `v`'s under this key.
    pub fn verify_json(&self, domain: &str, v: &Value, tag: &str) -> bool {
        let Some(bytes) = tag
            .strip_prefix("hmac-sha256:")
            .and_then(|h| hex::decode(h).ok())
        else {
            return false;
        };
        self.verify(&[domain.as_bytes(), to_canonical(v).as_bytes()], &bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn key_order_and_spacing_do_not_matter() {
        let a: Value =
            serde_json::from_str(r#"{"b": 1, "a": [1, 2.0, {"z":null,"y":true}]}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"a":[1,2,{"y":true,"z":null}],"b":1}"#).unwrap();
        assert_eq!(to_canonical(&a), r#"{"a":[1,2,{"y":true,"z":null}],"b":1}"#);
        assert_eq!(hash(&a), hash(&b));
    }

    #[test]
    fn utf16_key_order_and_escapes() {
        // U+E000 sorts after U+1F600 in UTF-8 bytes but before it in UTF-16 code units.
        let v = json!({"\u{1F600}": 1, "\u{E000}": 2, "a\"b": "x\n\u{7}"});
        assert_eq!(
            to_canonical(&v),
            "{\"a\\\"b\":\"x\\n\\u0007\",\"\u{1F600}\":1,\"\u{E000}\":2}"
        );
    }

    #[test]
    fn numbers_in_shortest_form() {
        let v: Value =
            serde_json::from_str("[1.0, -0.0, 1.5, 1e3, 100000000000000000000000.0, 0.1]").unwrap();
        assert_eq!(to_canonical(&v), "[1,0,1.5,1000,1e+23,0.1]");
    }

    #[test]
    fn hash_is_sha256_of_canonical_bytes() {
        // sha256("{}") = 44136fa3...
        assert_eq!(
            hash(&json!({})),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
