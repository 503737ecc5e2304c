//! Closed vocabularies. `Choice`: a set of named values a user picks from, on the command line or
//! in `driftgate.toml` (library enums implement it; `app` turns it into a clap value parser, so
//! clap stays in `app` and each vocabulary is written once). `known`: reading a name of a fixed
//! table (a rule id, a tier) back from a JSON report as the table's own `&'static str`.

use serde::{Deserialize, Deserializer};

pub trait Choice: Copy + Send + Sync + 'static {
    /// Every value, in the order help lists them.
    const ALL: &'static [Self];
    /// The spelling users type (lowercase, kebab-case).
    fn name(self) -> &'static str;
    /// One line for `--help`; empty for none.
    fn help(self) -> &'static str {
        ""
    }
    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|v| v.name() == name)
    }
}

/// Read one name of `vocabulary` back as the vocabulary's own `&'static str`. An unknown name is
/// an error, not a guess: a report read back (perhaps from a fork's artifact) stays inside the
/// vocabulary we render.
pub fn known<'de, D: Deserializer<'de>>(
    d: D,
    what: &str,
    vocabulary: impl IntoIterator<Item = &'static str>,
) -> Result<&'static str, D::Error> {
    let s = String::deserialize(d)?;
    vocabulary
        .into_iter()
        .find(|v| *v == s)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown {what} {s:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_come_back_and_others_are_errors() {
        let read = |s: &str| -> Result<&'static str, serde_json::Error> {
            known(
                &mut serde_json::Deserializer::from_str(s),
                "tier",
                ["A", "B"],
            )
        };
        assert_eq!(read("\"B\"").unwrap(), "B");
        let e = read("\"Z\"").unwrap_err().to_string();
        assert!(e.contains("unknown tier \"Z\""), "{e}");
    }
}
