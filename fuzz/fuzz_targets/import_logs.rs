//! Any bytes as a production log for `suite import` (`suite::import`): the first byte picks the
//! format given (none, detected per file, or one of the three), the rest is the file. It never
//! panics, in bounded time. Every exchange, skipped and malformed record names the file and a
//! line or a pointer, and every skip or malformation says why. Every exchange has a non-blank prompt, at most `max_history` earlier
//! turns, each a user's or an assistant's, and no blank tool name. Read whole or streamed line
//! by line (`Reader::lines`, the path of a log past the input cap), JSON lines give the same.
#![no_main]

use driftgate::suite::import::{LogFormat, Read, Reader, read};
use libfuzzer_sys::fuzz_target;

const LABEL: &str = "fuzz.jsonl";
const MAX_HISTORY: usize = 2;

fn check(r: &Read) {
    assert_eq!(r.formats.len(), 1);
    for (at, why) in r.skipped.iter().chain(&r.malformed) {
        assert!(at.starts_with(LABEL), "{at}");
        assert!(!why.trim().is_empty(), "{at}: no reason");
    }
    for e in &r.exchanges {
        assert!(e.at.starts_with(LABEL), "{}", e.at);
        assert!(!e.prompt.trim().is_empty(), "{}: blank prompt", e.at);
        assert!(e.history.len() <= MAX_HISTORY, "{}", e.at);
        for m in &e.history {
            assert!(m.role == "user" || m.role == "assistant", "role {}", m.role);
            assert!(!m.content.trim().is_empty(), "{}: blank turn", e.at);
        }
        for c in &e.calls {
            assert!(!c.name.is_empty(), "{}: a call without a name", e.at);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let format = match pick % 4 {
        0 => None,
        1 => Some(LogFormat::Openai),
        2 => Some(LogFormat::Anthropic),
        _ => Some(LogFormat::Otel),
    };
    let whole = read(&[(LABEL.to_string(), text.to_string())], format, MAX_HISTORY);
    check(&whole);
    // Whole texts whose first line is JSON are read as JSON lines, as a streamed file is.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if serde_json::from_str::<serde_json::Value>(first).is_ok() {
        let mut r = Reader::new(format, MAX_HISTORY);
        r.lines(LABEL, || Ok(std::io::Cursor::new(text.as_bytes())))
            .unwrap();
        assert_eq!(r.finish(), whole, "streamed and whole reads differ");
    }
});
