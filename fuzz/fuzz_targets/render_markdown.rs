//! Reports built from fuzzed tool sets (or the calendar `check` report with fuzzed text in every
//! field a reader sees) rendered as the PR comment and the job summary: read as GFM, nothing from
//! tool text becomes HTML, a link, an image, a mention, a reference, emphasis, math, a list or an
//! extra table cell; our marker is the first line and the only HTML comment (none in the
//! summary); no control or bidi character; GitHub's size limits hold. See `fuzz/src/input.rs` for
//! the input shapes.
#![no_main]

use driftgate_fuzz::{checks, input};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((report, now_passes)) = input::report(data) {
        checks::check_markdown(&report, now_passes);
    }
});
