//! The same reports as `render_markdown`, rendered for stdout, which the Actions runner reads:
//! GitHub annotations are only our own `::error`/`::warning`/`::notice` lines (known properties,
//! delimiters escaped, at most 10 of a kind, nothing smuggled in by a newline or a CR); the
//! terminal rendering has no control character but newline/tab and, with colour, only our SGR
//! codes; the JSON report and SARIF hold no runner command and no control or bidi character in
//! any string, and the JSON report reads back into the same bytes.
#![no_main]

use driftgate_fuzz::{checks, input};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((report, _)) = input::report(data) {
        checks::check_annotations(&report);
        checks::check_terminal(&report);
        checks::check_json(&report);
        checks::check_sarif(&report);
    }
});
