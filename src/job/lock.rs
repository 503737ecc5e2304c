//! `lock --check` as a library call: how an existing lockfile is stale. (Writing one is
//! `tools::lock::render`.)

use crate::diff::{self, Diff};
use crate::error::Result;
use crate::source;
use crate::tools::ToolSet;

/// How the lockfile `old_text` (read from `label`) differs from `tools`: an empty diff is up to
/// date. The old lockfile is verified as any input is (its hashes checked).
pub fn stale(old_text: &str, label: &str, tools: &ToolSet) -> Result<Diff> {
    let (old, _) = source::parse_text(old_text, label)?;
    Ok(diff::diff(&old, tools))
}
