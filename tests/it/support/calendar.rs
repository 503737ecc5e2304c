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
