//! The canary's anytime-valid tests cross-checked against a reference implementation on the same
//! streams: `expectation` (PyPI), whose sequential proportion test is Howard et al.'s
//! beta-binomial mixture boundary — another construction of the same guarantee. Runs only when
//! `DRIFTGATE_EXPECTATION_PYTHON` names a python with it installed:
//!
//! ```sh
//! export DRIFTGATE_EXPECTATION_PYTHON=$(.ci/expectation.sh)
//! cargo test --test canary_reference -- --include-ignored --nocapture
//! ```
//!
//! On the same streams of event arms, looked at after every batch: under no effect both keep
//! false alarms under alpha; under an effect both find it, they agree on which streams, and
//! their times to detection are of one order.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use driftgate::stats::seq::{Side, log_e, theta};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

const ALPHA: f64 = 0.05;
const BATCH: usize = 50;
const EVENTS: usize = 2000;
const RUNS: usize = 200;
const RATIO: f64 = 1.25;

fn streams(p: f64, seed: u64) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..RUNS)
        .map(|_| {
            (0..EVENTS)
                .map(|_| if rng.random_bool(p) { '1' } else { '0' })
                .collect()
        })
        .collect()
}

/// Ours: events at the first look where E reached 1/alpha.
fn ours(s: &str, rho: f64, side: Side) -> Option<usize> {
    let b = s.as_bytes();
    (BATCH..=b.len()).step_by(BATCH).find(|&n| {
        let h = b[..n].iter().filter(|&&c| c == b'1').count() as u64;
        log_e(h, n as u64 - h, rho, 1.0, side) >= (1.0 / ALPHA).ln()
    })
}

fn reference(python: &str, streams: &[String], rho: f64, alternative: &str) -> Vec<Option<usize>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/canary_reference.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the reference");
    let job = json!({"rho": rho, "alternative": alternative, "alpha": ALPHA, "batch": BATCH, "streams": streams});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(job.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the reference failed");
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    v.iter().map(|x| x.as_u64().map(|n| n as usize)).collect()
}

fn median(mut xs: Vec<usize>) -> f64 {
    xs.sort();
    xs[xs.len() / 2] as f64
}

#[ignore = "needs DRIFTGATE_EXPECTATION_PYTHON (a real component; .ci/run starts it)"]
#[test]
fn ours_and_the_reference_agree_on_the_same_streams() {
    let python = common::need(
        "DRIFTGATE_EXPECTATION_PYTHON",
        "set it to `bash .ci/expectation.sh`'s output",
    );
    for (rho, side, alternative) in [
        (0.1, Side::Greater, "greater"),
        (0.5, Side::Two, "two_sided"),
    ] {
        // No effect: false alarms under alpha, both.
        let null = streams(rho, 1);
        let o = null.iter().filter(|s| ours(s, rho, side).is_some()).count();
        let r = reference(&python, &null, rho, alternative);
        let r = r.iter().filter(|x| x.is_some()).count();
        let (o, r) = (o as f64 / RUNS as f64, r as f64 / RUNS as f64);
        eprintln!("rho {rho} {alternative}, no effect: ours {o:.3}, reference {r:.3}");
        assert!(o <= ALPHA && r <= ALPHA, "ours {o}, reference {r}");
        // Head's rate RATIO times base's: both find it, on the same streams, in comparable time.
        let alt = streams(theta(rho, RATIO), 2);
        let o: Vec<Option<usize>> = alt.iter().map(|s| ours(s, rho, side)).collect();
        let r = reference(&python, &alt, rho, alternative);
        let both = o
            .iter()
            .zip(&r)
            .filter(|(a, b)| a.is_some() == b.is_some())
            .count();
        let (po, pr) = (
            o.iter().flatten().count() as f64 / RUNS as f64,
            r.iter().flatten().count() as f64 / RUNS as f64,
        );
        let (mo, mr) = (
            median(o.iter().flatten().copied().collect()),
            median(r.iter().flatten().copied().collect()),
        );
        eprintln!(
            "rho {rho} {alternative}, ratio {RATIO}: power ours {po:.3}, reference {pr:.3}; same decision on {both}/{RUNS}; median events to detection ours {mo}, reference {mr}"
        );
        assert!(po >= 0.5 && pr >= 0.5, "power ours {po}, reference {pr}");
        assert!((po - pr).abs() <= 0.15, "power ours {po}, reference {pr}");
        assert!(both as f64 >= 0.85 * RUNS as f64, "agree on {both}");
        assert!(mo / mr < 1.5 && mr / mo < 1.5, "medians {mo} vs {mr}");
    }
}

/// The docs' bucket-rule test vectors: (salt, session, u).
fn doc_vectors() -> (String, Vec<(String, String, String)>) {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/canary.md")).unwrap();
    let vectors = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let c: Vec<&str> = l.split('|').map(|c| c.trim().trim_matches('`')).collect();
            c[3].parse::<f64>()
                .ok()
                .map(|_| (c[1].to_string(), c[2].to_string(), c[3].to_string()))
        })
        .collect();
    (doc, vectors)
}

/// The fenced block of `lang` in the docs' bucket-rule section.
fn snippet(doc: &str, lang: &str) -> String {
    let fence = format!("```{lang}\n");
    let start = doc.find(&fence).unwrap() + fence.len();
    let len = doc[start..].find("\n```").unwrap();
    doc[start..start + len].to_string()
}

/// The reference snippets a server copies compute the docs' test vectors: Python (with the
/// reference's interpreter) and TypeScript (types stripped, on node) — run, not read.
#[ignore = "needs DRIFTGATE_EXPECTATION_PYTHON (a real component; .ci/run starts it)"]
#[test]
fn the_docs_snippets_compute_the_docs_vectors() {
    let python = common::need(
        "DRIFTGATE_EXPECTATION_PYTHON",
        "set it to `bash .ci/expectation.sh`'s output",
    );
    let (doc, vectors) = doc_vectors();
    assert!(vectors.len() >= 4);
    let mut py = snippet(&doc, "python");
    let mut ts = snippet(&doc, "typescript")
        .replace("export function", "function")
        .replace("export const", "const")
        .replace(
            "import { createHash } from \"node:crypto\";",
            "const { createHash } = require(\"node:crypto\");",
        )
        .replace(": string", "")
        .replace(": number", "")
        .replace("): number {", ") {");
    for (salt, session, _) in &vectors {
        py.push_str(&format!(
            "\nprint(f\"{{bucket({salt:?}, {session:?}):.12f}}\")"
        ));
        ts.push_str(&format!(
            "\nconsole.log(bucket({salt:?}, {session:?}).toFixed(12));"
        ));
    }
    let want: Vec<&str> = vectors.iter().map(|v| v.2.as_str()).collect();
    let out = Command::new(&python).args(["-c", &py]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = String::from_utf8(out.stdout).unwrap();
    assert_eq!(got.lines().collect::<Vec<_>>(), want, "python snippet");
    match Command::new("node").args(["-e", &ts]).output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let got = String::from_utf8(out.stdout).unwrap();
            assert_eq!(got.lines().collect::<Vec<_>>(), want, "typescript snippet");
        }
        Err(e) => panic!("node is needed to run the TypeScript snippet: {e}"),
    }
}
