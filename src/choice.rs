//! A closed set of named values a user picks from, on the command line or in `driftgate.toml`.
//! Library enums implement `Choice`; `app` turns it into a clap value parser, so clap stays in
//! `app` and each vocabulary is written once.

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
