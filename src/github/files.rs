//! The runner's file commands: the job summary (`GITHUB_STEP_SUMMARY`, Markdown, appended) and
//! step outputs (`GITHUB_OUTPUT`, `name<<DELIMITER` heredocs so any value, even one with newlines,
//! is read back exactly and cannot define other outputs).

use std::io::Write;
use std::path::Path;

use rand::RngCore;

use crate::error::{Error, Result};
use crate::report::Report;

pub fn append_summary(path: &Path, report: &Report, links: &super::Links) -> Result<()> {
    let already = std::fs::metadata(path)
        .map(|m| m.len() as usize)
        .unwrap_or(0);
    let md = super::summary_markdown(report, links, already);
    append(path, &md)
}

/// Markdown rendered elsewhere (the canary watch report) onto the job summary.
pub fn append_markdown(path: &Path, markdown: &str) -> Result<()> {
    append(path, markdown)
}

fn append(path: &Path, text: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::io(path, e))
}

fn fraction(x: f64) -> String {
    format!("{x:.4}")
}

/// The step outputs the Action declares. Routing numbers are empty for `diff` (no replay).
pub fn outputs(
    report: &Report,
    report_path: Option<&Path>,
    html_path: Option<&Path>,
) -> Vec<(&'static str, String)> {
    let s = report.routing.as_ref().map(|r| &r.paired.summary);
    let names: Vec<&str> = report.diff.tools.iter().map(|t| t.name.as_str()).collect();
    vec![
        (
            "verdict",
            serde_json::to_value(report.verdict.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        ),
        (
            "base-accuracy",
            s.map(|s| fraction(s.base_accuracy)).unwrap_or_default(),
        ),
        (
            "head-accuracy",
            s.map(|s| fraction(s.head_accuracy)).unwrap_or_default(),
        ),
        ("delta", s.map(|s| fraction(s.delta)).unwrap_or_default()),
        (
            "p-value",
            s.map(|s| fraction(s.p_value_worse)).unwrap_or_default(),
        ),
        (
            "changed-tools",
            serde_json::to_string(&names).expect("names serialise"),
        ),
        (
            "report-path",
            report_path
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ),
        (
            "html-path",
            html_path
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ),
    ]
}

/// A delimiter that does not occur in the value (random, so a value cannot be crafted to end the
/// heredoc early).
fn delimiter(value: &str) -> String {
    loop {
        let mut bytes = [0u8; 12];
        rand::rng().fill_bytes(&mut bytes);
        let d = format!("ghadelimiter_{}", hex::encode(bytes));
        if !value.contains(&d) {
            return d;
        }
    }
}

pub fn format_outputs(outputs: &[(&str, String)]) -> String {
    let mut out = String::new();
    for (name, value) in outputs {
        let d = delimiter(value);
        out.push_str(&format!("{name}<<{d}\n{value}\n{d}\n"));
    }
    out
}

pub fn write_outputs(path: &Path, outputs: &[(&str, String)]) -> Result<()> {
    append(path, &format_outputs(outputs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read a GITHUB_OUTPUT file back the way the runner does.
    fn parse(text: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut lines = text.lines();
        while let Some(l) = lines.next() {
            let (name, d) = l.split_once("<<").unwrap();
            let mut value = Vec::new();
            for v in lines.by_ref() {
                if v == d {
                    break;
                }
                value.push(v);
            }
            out.push((name.to_string(), value.join("\n")));
        }
        out
    }

    #[test]
    fn heredocs_carry_newlines_and_lookalike_delimiters() {
        let hostile = "a\nghadelimiter_x\nverdict<<EOF\npass\nEOF";
        let text = format_outputs(&[
            ("changed-tools", hostile.into()),
            ("verdict", "fail".into()),
        ]);
        assert_eq!(
            parse(&text),
            vec![
                ("changed-tools".to_string(), hostile.to_string()),
                ("verdict".to_string(), "fail".to_string())
            ]
        );
    }
}
