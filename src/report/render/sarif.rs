//! SARIF 2.1.0 for GitHub code scanning. The rules are the severity law's rows plus the
//! measurement rules (routing drop, meaning drift, incomplete measurement); the results point at
//! the changed tool's line in the committed tools file. Validated against the OASIS schema in
//! `tests/sarif.rs`.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::diff::{LAW, Severity};
use crate::gate::{Metric, Outcome, Status, Verdict};
use crate::injection::ScanSection;
use crate::report::Report;
use crate::report::escape::{cell, clean};
use crate::report::lint::LintReport;
use crate::report::view;

/// Each tool's line in the tools file.
type Lines = std::collections::BTreeMap<String, usize>;

pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Rules that come from measurement rather than from the schema law.
pub const MEASUREMENT_RULES: &[(&str, &str, &str)] = &[
    (
        "routing-regressed",
        "error",
        "prompts meant for this tool reach it less often at head than at base (paired replay of the routing suite)",
    ),
    (
        "call-accuracy-regressed",
        "error",
        "prompts meant for this tool still reach it but are called with wrong or invalid arguments more often at head than at base (paired replay, arguments checked against the schema and the suite's expected args)",
    ),
    (
        "meaning-drift",
        "error",
        "the description's embedding cosine to its old self fell below the floor",
    ),
    (
        "measurement-incomplete",
        "error",
        "a routing answer was still missing after retries; the gate cannot pass on an incomplete measurement",
    ),
    (
        "measurement-inconclusive",
        "warning",
        "the replay ran but cannot tell a regression from noise (a large drop on too few cases, or a router at chance at base); the gate cannot pass on it",
    ),
];

fn default_level(s: Severity) -> &'static str {
    match s {
        Severity::Breaking | Severity::High => "error",
        Severity::Warning => "warning",
        Severity::Unknown | Severity::Info => "note",
    }
}

fn scan_level(l: crate::injection::Level) -> &'static str {
    match l {
        crate::injection::Level::High => "error",
        crate::injection::Level::Medium => "warning",
    }
}

fn rules() -> Vec<Value> {
    let mut out: Vec<Value> = LAW
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "shortDescription": {"text": r.summary},
                "defaultConfiguration": {"level": default_level(r.severity)},
                "properties": {"severity": r.severity.as_str(), "kind": r.kind.as_str(), "tags": ["mcp", "tool-definition"]},
            })
        })
        .collect();
    for r in crate::lint::RULES {
        out.push(json!({
            "id": r.id,
            "shortDescription": {"text": r.summary},
            "defaultConfiguration": {"level": r.level.as_str()},
            "properties": {"tags": ["mcp", "lint"]},
        }));
    }
    for r in crate::injection::RULES {
        out.push(json!({
            "id": r.id,
            "shortDescription": {"text": r.summary},
            "helpUri": r.reference,
            "defaultConfiguration": {"level": scan_level(r.level)},
            "properties": {"tags": ["mcp", "security", "injection"]},
        }));
    }
    for (id, level, text) in MEASUREMENT_RULES {
        out.push(json!({
            "id": id,
            "shortDescription": {"text": text},
            "defaultConfiguration": {"level": level},
            "properties": {"tags": ["mcp", "routing"]},
        }));
    }
    out
}

fn rule_index(id: &str) -> usize {
    LAW.iter()
        .map(|r| r.id.as_str())
        .chain(crate::lint::RULES.iter().map(|r| r.id.as_str()))
        .chain(crate::injection::RULES.iter().map(|r| r.id.as_str()))
        .chain(MEASUREMENT_RULES.iter().map(|r| r.0))
        .position(|r| r == id)
        .expect("every result's rule is in the rule table")
}

/// A relative path as a URI reference: anything outside RFC 3986's unreserved and sub-delim
/// characters (and `/`) is percent-encoded, `:` included so a path is never read as a scheme.
fn uri_reference(path: &str) -> String {
    let mut out = String::new();
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn location(file: Option<&str>, line: Option<usize>) -> Vec<Value> {
    let Some(f) = file else {
        return Vec::new();
    };
    vec![json!({
        "physicalLocation": {
            "artifactLocation": {"uri": uri_reference(f)},
            "region": {"startLine": line.unwrap_or(1)},
        }
    })]
}

fn fingerprint(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    hex::encode(&h.finalize()[..16])
}

fn result(
    rule: &str,
    level: &str,
    message: String,
    locations: Vec<Value>,
    tool: &str,
    pointer: &str,
) -> Value {
    json!({
        "ruleId": rule,
        "ruleIndex": rule_index(rule),
        "level": level,
        "message": {"text": message},
        "locations": locations,
        "partialFingerprints": {"driftgateFinding/v1": fingerprint(&[rule, tool, pointer])},
        // Shown by code-scanning UIs: visible escapes, like every other text we render.
        "properties": {"tool": clean(tool, false), "pointer": clean(pointer, false)},
    })
}

/// One tool row's results: its schema changes, its routing and call drops, a low cosine.
fn tool_results(
    report: &Report,
    v: &view::ToolView<'_>,
    file: Option<&str>,
    results: &mut Vec<Value>,
) {
    let loc = location(file, v.line);
    let name = cell(v.name, 200);
    if let Some(d) = v.diff {
        for c in &d.changes {
            let level = if c.severity >= report.thresholds.fail_on {
                "error"
            } else if c.severity >= Severity::Warning {
                "warning"
            } else {
                "note"
            };
            results.push(result(
                c.rule.as_str(),
                level,
                format!(
                    "`{name}`: {} ({})",
                    cell(&c.message, 500),
                    c.severity.as_str()
                ),
                loc.clone(),
                &name,
                &c.pointer,
            ));
        }
    }
    for (metric, rule, row) in [
        (Metric::Routing, "routing-regressed", v.routing),
        (Metric::Calls, "call-accuracy-regressed", v.calls),
    ] {
        let Some(r) = row.filter(|r| r.delta < 0.0) else {
            continue;
        };
        let failed = view::ruling(report, &r.tool, metric).is_some();
        results.push(result(
            rule,
            if failed { "error" } else { "warning" },
            format!(
                "`{name}`: {} {:.1}% → {:.1}% ({:+.1} pts over {} case(s), {} regressed, exact one-sided p={:.4})",
                metric.accuracy(),
                r.base_accuracy * 100.0,
                r.head_accuracy * 100.0,
                r.delta * 100.0,
                r.cases,
                r.regressed,
                r.p_value_worse
            ),
            loc.clone(),
            &name,
            "",
        ));
    }
    // What the gate made of a low cosine: an error where it fails, a note where routing
    // measured the tool and decided.
    if let Some(d) = v.drift
        && let Some(x) = view::ruling(report, &d.tool, Metric::Cosine)
    {
        let level = match x.outcome {
            Outcome::Fail => "error",
            Outcome::Review => "note",
        };
        results.push(result(
            "meaning-drift",
            level,
            cell(&x.message, 500),
            loc.clone(),
            &name,
            "/description",
        ));
    }
}

pub fn render(report: &Report) -> String {
    let file = report.head.file.as_deref();
    let lines = &report.head.lines;
    // The scan's findings first, as in every format; for `check` only what the PR introduced.
    let mut results = report
        .scan
        .as_ref()
        .map(|s| scan_results(s, file, lines))
        .unwrap_or_default();
    results.extend(unmeasured(&report.verdict, file));
    for v in view::tools(report) {
        tool_results(report, &v, file, &mut results);
    }
    // Lint: only what the PR introduced (what it fixed is not a result).
    if let Some(l) = &report.lint {
        results.extend(lint_results(&l.introduced, file, lines));
    }
    document(
        &report.driftgate_version,
        &report.verdict,
        report.command.as_str(),
        results,
    )
}

/// `driftgate lint`'s findings: every injection and lint finding, at its tool's line.
pub fn lint(report: &LintReport) -> String {
    let file = report.tools.file.as_deref();
    let lines = &report.tools.lines;
    let mut results = scan_results(&report.scan, file, lines);
    results.extend(unmeasured(&report.verdict, file));
    results.extend(lint_results(&report.lint.findings, file, lines));
    document(&report.driftgate_version, &report.verdict, "lint", results)
}

/// The scan's new findings (`introduced`), at the tool's line.
fn scan_results(s: &ScanSection, file: Option<&str>, lines: &Lines) -> Vec<Value> {
    s.introduced
        .iter()
        .map(|f| {
            let hidden = f
                .hidden
                .as_deref()
                .map(|h| format!(" (hidden text: {})", cell(h, 300)))
                .unwrap_or_default();
            result(
                f.rule.as_str(),
                scan_level(f.level),
                format!(
                    "`{}` {}: {}{hidden}",
                    cell(&f.tool, 200),
                    cell(&f.field, 200),
                    cell(&f.excerpt, 300)
                ),
                location(file, lines.get(&f.tool).copied()),
                &f.tool,
                &f.field,
            )
        })
        .collect()
}

/// A verdict the measurement could not reach, as one result on the file.
fn unmeasured(v: &Verdict, file: Option<&str>) -> Option<Value> {
    let (rule, level) = match v.status {
        Status::Inconclusive => ("measurement-inconclusive", "warning"),
        Status::Incomplete => ("measurement-incomplete", "error"),
        Status::Pass | Status::Fail => return None,
    };
    Some(result(
        rule,
        level,
        cell(&v.reason, 1000),
        location(file, None),
        "",
        "",
    ))
}

/// Lint findings, each at its first tool's line.
fn lint_results(
    findings: &[crate::lint::Finding],
    file: Option<&str>,
    lines: &Lines,
) -> Vec<Value> {
    findings
        .iter()
        .map(|f| {
            let first = f.tools.first().map(String::as_str).unwrap_or("");
            let tools: Vec<String> = f
                .tools
                .iter()
                .map(|t| format!("`{}`", cell(t, 200)))
                .collect();
            result(
                f.rule.as_str(),
                f.level.as_str(),
                format!("{}: {}", tools.join(" / "), cell(&f.message, 500)),
                location(file, lines.get(first).copied()),
                &f.tools.join("|"),
                "",
            )
        })
        .collect()
}

/// The SARIF log: one run with every rule, the results and the verdict.
fn document(version: &str, verdict: &Verdict, command: &str, results: Vec<Value>) -> String {
    let doc = json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "driftgate",
                "version": version,
                "rules": rules(),
            }},
            "invocations": [{
                "executionSuccessful": verdict.status != Status::Incomplete,
            }],
            "results": results,
            "properties": {
                "verdict": verdict.status,
                "reason": cell(&verdict.reason, 1000),
                "command": command,
            },
        }],
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("SARIF serialises");
    s.push('\n');
    crate::console::runner_safe_json(&crate::report::escape::json_hidden(&s)).into_owned()
}

/// The SARIF renderer.
pub struct Sarif;

impl super::Renderer for Sarif {
    fn format(&self) -> super::Format {
        super::Format::Sarif
    }
    fn report(&self, report: &Report, _: &super::Options) -> String {
        render(report)
    }
    fn lint(&self, report: &LintReport, _: &super::Options) -> String {
        lint(report)
    }
}
