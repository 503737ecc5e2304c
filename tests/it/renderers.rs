//! Every renderer of the registry on one real report, pinned with insta snapshots: the calendar
//! example's `check` (a routing regression with flipped cases, meaning drift below the floor, a
//! description diff), made once by the real binary with the offline semantic router and read
//! back with `Report::from_json`. Each format in `Format::ALL` has its snapshot
//! `it__renderers__calendar_<format>.snap`; a new format fails until its snapshot is reviewed,
//! and a snapshot whose format is gone fails `every_calendar_snapshot_is_a_format`. The HTML page
//! is pinned as `support::html::readable` writes it (its hash, then every element with its text),
//! not as 60 KB of minified markup.
//!
//! Redacted: run timings (`wall_ms`, `request_latency_ms_sum`, `prepare_ms`, `latency_ms`) and the driftgate
//! version. Review changes with `cargo insta review` (or `INSTA_UPDATE=always cargo test --test
//! it renderers` and `git diff`).

use std::collections::BTreeSet;

use driftgate::choice::Choice;
use driftgate::report::Report;
use driftgate::report::render::{self, Format, Options};
use serde_json::Value;

use crate::support::{self, repo, reports};

const PREFIX: &str = "it__renderers__calendar_";

fn calendar() -> Report {
    Report::from_json(reports::calendar_check_json(), "calendar.json").unwrap()
}

#[test]
fn every_format_renders_the_calendar_report_as_pinned() {
    let report = calendar();
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(
        &format!(
            "driftgate {}",
            env!("CARGO_PKG_VERSION").replace('.', r"\.")
        ),
        "driftgate [version]",
    );
    settings.bind(|| {
        for &format in Format::ALL {
            let text = render::render(&report, format, &Options { color: false });
            assert!(!text.is_empty(), "{}", format.name());
            let name = format!("calendar_{}", format.name());
            // Documents (the JSON report, SARIF) are pinned as data, with their volatile fields
            // redacted; the rest as text.
            match serde_json::from_str::<Value>(&text) {
                Ok(doc) if doc.is_object() => insta::assert_json_snapshot!(name, doc, {
                    ".**.wall_ms" => "[ms]",
                    ".**.request_latency_ms_sum" => "[ms]",
                    ".**.prepare_ms" => "[ms]",
                    ".**.latency_ms" => "[ms]",
                    ".driftgate_version" => "[version]",
                    ".runs[].tool.driver.version" => "[version]",
                }),
                // The page, as a reviewer can read it (its hash still pins every byte; the
                // browser test checks how it looks).
                _ if format == Format::Html => {
                    // The hash covers the page as any version writes it.
                    let page = text.replace(
                        &format!("driftgate {}", env!("CARGO_PKG_VERSION")),
                        "driftgate [version]",
                    );
                    insta::assert_snapshot!(name, support::html::readable(&page));
                }
                _ => {
                    assert!(!text.contains('\u{1b}'), "{}: colour is off", format.name());
                    insta::assert_snapshot!(name, text);
                }
            }
        }
    });
}

/// The snapshots on disk are exactly the formats of the registry.
#[test]
fn every_calendar_snapshot_is_a_format() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(repo("tests/it/snapshots"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            Some(
                name.strip_prefix(PREFIX)?
                    .strip_suffix(".snap")?
                    .to_string(),
            )
        })
        .collect();
    let formats: BTreeSet<String> = Format::ALL.iter().map(|f| f.name().to_string()).collect();
    assert_eq!(on_disk, formats);
}
