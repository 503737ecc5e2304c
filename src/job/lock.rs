//! `lock` as a library call: a tool set in, its lockfile out, or how an existing lockfile is
//! stale.

use crate::diff::{self, Diff};
use crate::error::Result;
use crate::source;
use crate::tools::ToolSet;
use crate::tools::lock::{self, LockMeta};

/// The lockfile of `tools`.
pub fn render(tools: &ToolSet, meta: &LockMeta) -> String {
    lock::render(tools, meta)
}

/// How the lockfile `old_text` (read from `label`) differs from `tools`: an empty diff is up to
/// date. The old lockfile is verified as any input is (its hashes checked).
pub fn stale(old_text: &str, label: &str, tools: &ToolSet) -> Result<Diff> {
    let (old, _) = source::parse_text(old_text, label)?;
    Ok(diff::diff(&old, tools))
}
