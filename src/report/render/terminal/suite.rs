//! Terminal renderer for `suite check`.

use crate::report::escape::cell;
use crate::suite::check::{Level, SuiteCheck};

pub fn render(r: &SuiteCheck) -> String {
    let verdict = if r.errors > 0 { "FAIL" } else { "OK" };
    let mut out = format!(
        "driftgate suite check: {verdict} — {} error(s), {} warning(s); {} case(s) against {} tool(s) of {}\n",
        r.errors,
        r.warnings,
        r.cases,
        r.tool_count,
        cell(&r.tools, 80)
    );
    if let Some(m) = r.min_detectable_drop {
        out.push_str(&format!(
            "  with {} case(s) this suite detects a true routing drop of {:.1} pts or more with 80% power (at {:.0}% base accuracy, a noisy router; more cases see smaller drops)\n",
            r.cases,
            m.drop * 100.0,
            m.assumed_base_accuracy * 100.0
        ));
    }
    if let Some(o) = r.description_overlap {
        out.push_str(&format!(
            "  wording: a prompt shares {:.0}% of its words with its tool's description on average; {} of {} case(s) at {:.0}% or more restate it (a suite worded like the descriptions rewards the base wording, not routing)\n",
            o.mean * 100.0,
            o.echoing,
            o.cases,
            crate::suite::check::ECHO_OVERLAP * 100.0
        ));
    }
    for f in &r.findings {
        let level = match f.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        let case = f
            .case
            .as_ref()
            .map(|c| format!(" case {:?}", cell(c, 60)))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {level} [{}]{case}: {}\n",
            f.code,
            cell(&f.message, 300)
        ));
    }
    out
}
