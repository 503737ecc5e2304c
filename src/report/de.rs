//! Reading the report's `&'static str` fields back from JSON. Each maps onto the fixed set of
//! values the gate writes, so an unknown rule or direction is an error rather than a guess; this
//! also keeps a tampered report (from a fork's artifact) inside the vocabulary we render.

use serde::{Deserialize, Deserializer, de::Error};

/// `&'static str` under another name. serde's derive treats a field spelled `&str` as borrowed
/// from the input (demanding `'de: 'static`) even with `deserialize_with`; the alias hides the
/// reference from that syntactic check, and the functions below produce genuine statics.
pub type Static = &'static str;

fn one_of<'de, D: Deserializer<'de>>(
    d: D,
    allowed: &[&'static str],
) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    allowed.iter().find(|a| **a == s).copied().ok_or_else(|| {
        D::Error::custom(format!(
            "unexpected value {s:?}, expected one of {allowed:?}"
        ))
    })
}

/// A rule id of the severity law.
pub fn rule<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    crate::diff::LAW
        .iter()
        .find(|r| r.id == s)
        .map(|r| r.id)
        .ok_or_else(|| D::Error::custom(format!("unknown rule {s:?}")))
}

pub fn command<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    one_of(d, &["diff", "check"])
}

pub fn direction<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    one_of(d, &["regressed", "fixed"])
}

pub fn side<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    one_of(d, &["base", "head"])
}

/// The version that wrote the report. Ours is returned as is; another version's string is
/// leaked once, which is fine in a process that reads one report and exits.
pub fn version<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    if s == env!("CARGO_PKG_VERSION") {
        Ok(env!("CARGO_PKG_VERSION"))
    } else {
        Ok(Box::leak(s.into_boxed_str()))
    }
}
