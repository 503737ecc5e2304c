//! The command reference in `docs/cli/` says what the binary says: each page ends with the
//! command's `--help` exactly as printed (run with `DRIFTGATE_BLESS=1` to rewrite that tail after
//! a flag changes), and every `[default: …]` the help states for a gate threshold is the default
//! the gate applies.

use std::path::Path;

use crate::support::cli;

/// Each page and the commands whose `--help` it ends with.
const PAGES: &[(&str, &[&[&str]])] = &[
    ("diff", &[&["diff"]]),
    ("check", &[&["check"]]),
    ("fix", &[&["fix"]]),
    ("lock", &[&["lock"]]),
    (
        "suite",
        &[
            &["suite", "init"],
            &["suite", "import"],
            &["suite", "check"],
        ],
    ),
    ("lint", &[&["lint"]]),
    ("stress", &[&["stress"]]),
    ("embed", &[&["embed"]]),
    (
        "canary",
        &[&["canary", "plan"], &["canary", "bucket"], &["watch"]],
    ),
];

const MARK: &str = "<!-- help: generated from the binary below this line -->";

fn help(args: &[&str]) -> String {
    let run = cli::driftgate(args).args(["--help"]).run();
    assert_eq!(run.code, 0, "{}", run.dump());
    run.stdout
}

fn tail(commands: &[&[&str]]) -> String {
    let mut out = format!("{MARK}\n");
    for c in commands {
        let name = c.join(" ");
        out.push_str(&format!(
            "\n## `driftgate {name} --help`\n\n```text\n{}```\n",
            help(c)
        ));
    }
    out
}

#[test]
fn every_command_page_ends_with_its_help_as_printed() {
    let bless = std::env::var_os("DRIFTGATE_BLESS").is_some();
    let mut stale = Vec::new();
    for (page, commands) in PAGES {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/cli/{page}.md"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        let prose = text.split(MARK).next().unwrap().trim_end().to_string();
        let want = format!("{prose}\n\n{}", tail(commands));
        if bless {
            std::fs::write(&path, &want).unwrap();
        } else if text != want {
            stale.push(format!("docs/cli/{page}.md"));
        }
    }
    assert!(
        stale.is_empty(),
        "{stale:?} do not end with the binary's --help; rewrite with `DRIFTGATE_BLESS=1 cargo test --test it cli_docs` and review the diff"
    );
    // Every page is linked from the README's command index, and every page is listed here.
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli");
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let stem = name.trim_end_matches(".md");
        assert!(
            PAGES.iter().any(|(p, _)| *p == stem),
            "docs/cli/{name} is not checked"
        );
        assert!(
            readme.contains(&format!("(docs/cli/{name})")),
            "README does not link {name}"
        );
    }
}

/// The `[default: X]` of a flag in `help`, if it states one.
fn stated_default(help: &str, flag: &str) -> String {
    let at = help
        .find(&format!("  {flag} "))
        .or_else(|| help.find(&format!("  {flag}\n")))
        .unwrap_or_else(|| panic!("{flag} in --help"));
    let rest = &help[at..];
    let end = rest[2..].find("\n  -").map_or(rest.len(), |i| i + 2);
    let text: String = rest[..end].split_whitespace().collect::<Vec<_>>().join(" ");
    let d = text
        .split("[default: ")
        .nth(1)
        .unwrap_or_else(|| panic!("{flag} states no default: {text}"));
    // "[default: 0.015; with …]": the value is what comes before any explanation.
    d[..d.find(']').unwrap()]
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn the_defaults_help_states_are_the_gates() {
    let d = driftgate::gate::CheckThresholds::default();
    let h = help(&["check"]);
    let num = |flag: &str| -> f64 {
        stated_default(&h, flag)
            .parse()
            .unwrap_or_else(|e| panic!("{flag}: {e}"))
    };
    assert_eq!(num("--tolerance"), d.tolerance);
    assert_eq!(num("--per-tool-alpha"), d.per_tool_alpha);
    assert_eq!(Some(num("--require-significance")), d.require_significance);
    assert_eq!(num("--min-cases") as usize, d.min_cases);
    assert_eq!(num("--inconclusive-drop"), d.inconclusive_drop);
    assert_eq!(stated_default(&h, "--fail-on"), d.fail_on.as_str());
    assert_eq!(
        stated_default(&h, "--scan-fail-on"),
        driftgate::choice::Choice::name(d.scan_fail_on)
    );
    assert_eq!(
        stated_default(&h, "--cosine-policy"),
        driftgate::choice::Choice::name(d.cosine)
    );
    let floor = stated_default(&h, "--cosine-floor");
    assert!(
        floor.contains(&format!("{:.2}", driftgate::cosine::floors::MINILM.floor)),
        "{floor}"
    );
}

/// Every flag of every command says what it does (`--temperature` and `--seed` once did not).
#[test]
fn every_flag_has_help() {
    for (_, commands) in PAGES {
        for c in *commands {
            let h = help(c);
            // The options, not the exit-code table after them.
            let options = h.split("\nExit codes:").next().unwrap();
            let lines: Vec<&str> = options.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let t = l.trim_start();
                let indent = l.len() - t.len();
                if (2..=6).contains(&indent) && t.starts_with('-') && !t.starts_with("-h, --help") {
                    // Short help puts the text after the flag, long help on the next line.
                    let same_line = t
                        .split_once("  ")
                        .is_some_and(|(_, d)| !d.trim().is_empty());
                    let next = lines.get(i + 1).copied().unwrap_or("");
                    assert!(
                        same_line || (next.starts_with("          ") && !next.trim().is_empty()),
                        "driftgate {} --help: {t} has no description",
                        c.join(" ")
                    );
                }
            }
        }
    }
}
