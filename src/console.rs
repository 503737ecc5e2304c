//! Where the library's messages go. Library code never prints: it tells a `Console`, and `app`
//! decides how that reaches the user (a progress bar on a terminal, plain lines in CI, nothing in
//! tests). Messages are for people and never part of a report.
//!
//! What we print on a GitHub Actions runner is read by the runner too: a line whose first
//! non-blank characters are `::` is a workflow command (`::add-mask::`, `::stop-commands::`, a
//! forged `::error`), and so is `##[…]` anywhere in a line (the legacy form). Tool text and server
//! messages are untrusted, so every document and message passes `runner_safe` (or, for JSON,
//! `runner_safe_json`) on its way out; only the commands we build ourselves do not.

use std::borrow::Cow;

pub trait Console: Send + Sync {
    /// One line for the user on stderr: a retry, a fallback, what was posted.
    fn note(&self, message: &str);
    /// Text for stdout exactly as given: annotations and workflow commands, which the Actions
    /// runner reads there.
    fn out(&self, text: &str);
    /// `done` of `total` steps of the run named `label` are finished, `failed` of them without
    /// an answer (a count of "answers" that were errors would read as progress).
    fn progress(&self, label: &str, done: u64, total: u64, failed: u64) {
        let _ = (label, done, total, failed);
    }
}

/// A console that drops everything (tests, library callers that want no output).
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Console for Silent {
    fn note(&self, _: &str) {}
    fn out(&self, _: &str) {}
}

/// `text` with no line a runner would take for a workflow command: a line whose first non-blank
/// characters are `::` gets a backslash before them, and `##[` becomes `#\#[`. Visible and
/// readable, nothing hidden; text without either comes back borrowed.
pub fn runner_safe(text: &str) -> Cow<'_, str> {
    let command_line = |l: &str| l.trim_start().starts_with("::");
    if !text.contains("##[") && !text.lines().any(command_line) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for piece in text.split_inclusive('\n') {
        let line = piece.replace("##[", "#\\#[");
        if command_line(&line) {
            let lead = line.len() - line.trim_start().len();
            out.push_str(&line[..lead]);
            out.push('\\');
            out.push_str(&line[lead..]);
        } else {
            out.push_str(&line);
        }
    }
    Cow::Owned(out)
}

/// A JSON document with no line a runner would take for a workflow command: `##[` (only possible
/// inside a string) becomes `#\u0023[`, which decodes to the same value; a line of JSON cannot
/// start with `::`.
pub fn runner_safe_json(json: &str) -> Cow<'_, str> {
    if json.contains("##[") {
        Cow::Owned(json.replace("##[", "#\\u0023["))
    } else {
        Cow::Borrowed(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runner's own test for a command line, as GitHub documents and its runner implements
    /// it: `::` after leading blanks (v2), or `##[` anywhere (v1).
    fn is_command(line: &str) -> bool {
        line.trim_start().starts_with("::") || line.contains("##[")
    }

    #[test]
    fn no_line_stays_a_command() {
        let hostile = "Reads a file.\n::stop-commands::tok\n  ::add-mask::x\nsee ##[set-env name=A]b\n\t::error file=a::forged";
        let safe = runner_safe(hostile);
        assert!(safe.lines().all(|l| !is_command(l)), "{safe}");
        assert_eq!(
            safe,
            "Reads a file.\n\\::stop-commands::tok\n  \\::add-mask::x\nsee #\\#[set-env name=A]b\n\t\\::error file=a::forged"
        );
        assert!(matches!(runner_safe("a :: b\nc"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_the_same_value() {
        let doc = serde_json::json!({"description": "x ##[group]y\n::warning::z"});
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let safe = runner_safe_json(&text);
        assert!(safe.lines().all(|l| !is_command(l)), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, doc);
    }
}
