//! Writing what a command produced: to a file (atomically; `-` is stdout) or stdout, in colour
//! only when it goes to a terminal that wants it.

use std::io::{IsTerminal, Write};
use std::path::Path;

use crate::app::flags::{Color, OutputArgs};
use crate::error::{Error, Result};
use crate::report::Report;
use crate::report::render::{Document, Format, Options};

/// Colour on: `always`; `auto` honours NO_COLOR and colours only a terminal.
pub fn use_color(c: Color, to_file: bool) -> bool {
    match c {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            !to_file
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

/// `text` to the file at `path` (`-` is stdout, where a closed pipe is not an error), atomically
/// where the file is a regular one.
pub fn write(path: &Path, text: &str) -> Result<()> {
    // Every credential the process holds is masked in everything it writes.
    let text = &*crate::http::secret::mask_held(text);
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            // A reader that has gone (`| head`) took what it wanted; the exit code stays ours.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r.map_err(|e| Error::io("<stdout>", e)),
        };
    }
    crate::fs::write_atomic(path, text.as_bytes()).map_err(|e| Error::io(path, e))
}

/// `text` to `path`, or to stdout: every command's output goes through [`write`].
pub fn deliver(path: Option<&Path>, text: &str) -> Result<()> {
    write(path.unwrap_or(Path::new("-")), text)
}

/// The document in the chosen format (and the JSON and HTML beside it when asked).
pub fn emit(doc: &dyn Document, out: &OutputArgs) -> Result<()> {
    let opts = Options {
        color: use_color(out.color, out.output.is_some()),
    };
    let text = doc.render(out.format, &opts);
    if let Some(path) = &out.json_out {
        write(path, &doc.render(Format::Json, &opts))?;
    }
    if let Some(path) = &out.html_out {
        write(path, &doc.render(Format::Html, &opts))?;
    }
    deliver(out.output.as_deref(), &text)
}

/// `report` with every credential the process holds masked in every string, before any format
/// renders it: the PR comment, job summary, step outputs, SARIF and HTML all read this copy.
pub fn masked(report: Report) -> Report {
    let mut v = serde_json::to_value(&report).expect("a report serialises");
    if crate::http::secret::mask_value(&mut v) == 0 {
        return report;
    }
    serde_json::from_value(v).expect("masking keeps a report's shape")
}
