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

/// A registry's rule ids as an enum, each variant spelled as its id: a misspelt id is a compile
/// error, not a test failure. `in TABLE: Row` names the registry's table (`Row` has an `id`):
/// `id.rule()` is the id's row. Serialised as the id and read back only from the list (an unknown
/// id is an error naming `what`); its JSON Schema is the list; it orders and compares as its
/// id, so sorting by rule reads the same as sorting the ids.
#[macro_export]
macro_rules! rule_ids {
    ($(#[$meta:meta])* $vis:vis enum $name:ident ($what:literal) in $table:ident: $row:ident { $($variant:ident = $id:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($variant,)*
        }

        impl $name {
            /// Every id, in the registry's order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $id,)*
                }
            }

            pub fn from_id(id: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.as_str() == id)
            }

            /// This id's row of the table (every id has one: the registry's fixture test).
            pub fn rule(self) -> &'static $row {
                $table
                    .iter()
                    .find(|r| r.id == self)
                    .expect("every rule id has its row in the table")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&String> for $name {
            fn eq(&self, other: &&String) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.as_str()
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                self == other.as_str()
            }
        }

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl Ord for $name {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.as_str().cmp(other.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(d)?;
                $name::from_id(&s).ok_or_else(|| {
                    <D::Error as serde::de::Error>::custom(format!("unknown {} {s:?}", $what))
                })
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn inline_schema() -> bool {
                true
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({"type": "string", "enum": [$($id,)*]})
            }
        }
    };
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

    struct Row {
        id: Ids,
        n: u8,
    }

    const ROWS: &[Row] = &[
        Row {
            id: Ids::Beta,
            n: 2,
        },
        Row {
            id: Ids::Alpha,
            n: 1,
        },
    ];

    rule_ids! {
        enum Ids ("test rule") in ROWS: Row {
            Alpha = "z-rule",
            Beta = "b-rule",
        }
    }

    #[test]
    fn rule_ids_read_back_only_from_their_list_and_sort_as_their_ids() {
        assert_eq!(serde_json::to_string(&Ids::Beta).unwrap(), "\"b-rule\"");
        let back: Ids = serde_json::from_str("\"z-rule\"").unwrap();
        assert_eq!(back, Ids::Alpha);
        let e = serde_json::from_str::<Ids>("\"c-rule\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown test rule \"c-rule\""), "{e}");
        assert!(Ids::Beta < Ids::Alpha, "ordered by id, not by variant");
        assert_eq!(Ids::from_id("b-rule"), Some(Ids::Beta));
        assert!(Ids::Alpha == "z-rule");
        assert_eq!(Ids::Alpha.rule().n, 1);
    }
}
