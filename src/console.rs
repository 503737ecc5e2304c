//! Where the library's messages go. Library code never prints: it tells a `Console`, and `app`
//! decides how that reaches the user (a progress bar on a terminal, plain lines in CI, nothing in
//! tests). Messages are for people and never part of a report.

pub trait Console: Send + Sync {
    /// One line for the user on stderr: a retry, a fallback, what was posted.
    fn note(&self, message: &str);
    /// Text for stdout exactly as given: annotations and workflow commands, which the Actions
    /// runner reads there.
    fn out(&self, text: &str);
    /// `done` of `total` steps of the run named `label` are finished.
    fn progress(&self, label: &str, done: u64, total: u64) {
        let _ = (label, done, total);
    }
}

/// A console that drops everything (tests, library callers that want no output).
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Console for Silent {
    fn note(&self, _: &str) {}
    fn out(&self, _: &str) {}
}
