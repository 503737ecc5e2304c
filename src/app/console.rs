//! The terminal side of `crate::console::Console`: notes to stderr, documents to stdout, and
//! progress as a bar on an interactive terminal or a plain line every 25 steps in CI logs.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use crate::console::Console;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A bar per run (an interactive terminal).
    Bar,
    /// "label: n/total answers" every 25 steps (CI logs).
    Lines,
    /// Nothing.
    Off,
}

impl Progress {
    /// A bar on an interactive stderr outside CI, else lines.
    pub fn detect() -> Progress {
        if std::io::stderr().is_terminal() && std::env::var_os("CI").is_none() {
            Progress::Bar
        } else {
            Progress::Lines
        }
    }
}

/// A message for stderr: control and other hidden characters (ANSI escapes, carriage returns,
/// bidi controls, tag characters) shown as visible escapes instead of acting on the terminal or
/// hiding, and no line a runner would take for a command.
pub fn message_safe(message: &str) -> String {
    let masked = crate::http::secret::mask_held(message);
    let shown = crate::text::unicode::visible(&masked);
    crate::console::runner_safe(&shown).into_owned()
}

pub struct Terminal {
    progress: Progress,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl Terminal {
    pub fn new(progress: Progress) -> Terminal {
        Terminal {
            progress,
            bars: Mutex::new(HashMap::new()),
        }
    }

    fn bar(&self, label: &str, total: u64) -> ProgressBar {
        let mut bars = self.bars.lock().expect("bars");
        bars.entry(label.to_string())
            .or_insert_with(|| {
                let bar = ProgressBar::new(total);
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>6} [{bar:30}] {pos}/{len} {elapsed} {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                bar.set_prefix(label.to_string());
                bar
            })
            .clone()
    }
}

impl Console for Terminal {
    fn note(&self, message: &str) {
        eprintln!("{}", message_safe(message));
    }

    fn out(&self, text: &str) {
        let text = crate::http::secret::mask_held(text);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    fn progress(&self, label: &str, done: u64, total: u64, failed: u64) {
        match self.progress {
            Progress::Off => {}
            Progress::Lines => {
                if done % 25 == 0 || done == total {
                    eprintln!("driftgate: {}", progress_line(label, done, total, failed));
                }
            }
            Progress::Bar => {
                let bar = self.bar(label, total);
                if failed > 0 {
                    bar.set_message(format!("{failed} failed"));
                }
                bar.set_position(done);
                if done >= total {
                    bar.finish_and_clear();
                    self.bars.lock().expect("bars").remove(label);
                }
            }
        }
    }
}

/// "base: 36/36 asked, 36 failed": requests finished, and how many of them got no answer.
fn progress_line(label: &str, done: u64, total: u64, failed: u64) -> String {
    match failed {
        0 => format!("{label}: {done}/{total} answered"),
        f => format!(
            "{label}: {done}/{total} asked, {} answered, {f} failed",
            done - f
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_never_counts_a_failure_as_an_answer() {
        assert_eq!(progress_line("base", 36, 36, 0), "base: 36/36 answered");
        assert_eq!(
            progress_line("head", 36, 36, 36),
            "head: 36/36 asked, 0 answered, 36 failed"
        );
    }

    #[test]
    fn messages_cannot_drive_the_terminal_or_the_runner() {
        let m = message_safe(
            "server said: \u{1b}[2Jgone\r\n::add-mask::secret\u{7}\rx\u{E0068}\u{E0069}\u{202E}",
        );
        assert_eq!(
            m,
            "server said: ⟨U+001B⟩[2Jgone\n\\::add-mask::secret⟨U+0007⟩⟨U+000D⟩x⟨hidden \"hi\"⟩⟨U+202E⟩"
        );
    }
}
