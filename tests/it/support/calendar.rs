//! The calendar example (`examples/calendar`), the project's reference regression, named once:
//! its two tool versions, its suite, and the `check` of one against the other.

pub const BASE: &str = "examples/calendar/tools.base.json";
pub const HEAD: &str = "examples/calendar/tools.head.json";
pub const SUITE: &str = "examples/calendar/suite.yaml";

/// The sides and suite of the example's `check`: base → head, with the example's suite.
pub const SIDES: [&str; 6] = ["--base", BASE, "--head", HEAD, "--suite", SUITE];

/// `check` of the example plus `extra` (format, cache, router, …).
pub fn check<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["check"];
    args.extend(SIDES);
    args.extend_from_slice(extra);
    args
}

/// Six of the example's cases, one request per case and side: what the tests of a model router's
/// faults, batches and plans replay.
pub const SUITE_6: &str = "tests/fixtures/check/calendar-6.suite.yaml";

/// `check` of `base` → `head` on [`SUITE_6`] through the model router `router` (openai,
/// anthropic) at `url` with model `model`, no embedder, plus `extra`.
pub fn model_check<'a>(
    sides: [&'a str; 2],
    router: &'a str,
    url: &'a str,
    model: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "check",
        "--base",
        sides[0],
        "--head",
        sides[1],
        "--suite",
        SUITE_6,
        "--router",
        router,
        "--base-url",
        url,
        "--model",
        model,
        "--no-embed",
    ];
    args.extend_from_slice(extra);
    args
}

/// `check` of the example with absolute paths, for a run whose working directory is elsewhere,
/// plus `extra`.
pub fn check_from_anywhere(extra: &[&str]) -> Vec<String> {
    let at = |f: &str| format!("{}/{f}", env!("CARGO_MANIFEST_DIR"));
    let mut args: Vec<String> = vec!["check".into()];
    for (flag, file) in [("--base", BASE), ("--head", HEAD), ("--suite", SUITE)] {
        args.extend([flag.to_string(), at(file)]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}
