//! The CLI's behaviour as data (trycmd, as the `typos` project does): every `tests/cmd/*.toml`
//! is one run of the binary from the repository root (`fs.cwd = "../.."`) with its arguments, exit
//! code and expected stdout/stderr (inline, or in the `.stdout` file beside it). `[..]` matches
//! within a line, `...` whole lines, `[VERSION]` the crate version.
//!
//! Each case removes the variables `support::cli` scrubs (`env.remove`, which takes names:
//! `SCRUBBED_LIST`); `every_case_scrubs_what_the_runner_helper_scrubs` keeps the two in step.
//! Regenerate expected files with `TRYCMD=overwrite cargo test --test it cmd::` and review the
//! diff.

use std::collections::BTreeSet;

use crate::support::{cli, repo};

fn cases() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(repo("tests/cmd"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

#[test]
fn cli_cases() {
    assert!(cases().len() >= 10, "{:?}", cases());
    trycmd::TestCases::new()
        .register_bin(
            "driftgate",
            std::path::Path::new(env!("CARGO_BIN_EXE_driftgate")),
        )
        .default_bin_name("driftgate")
        .insert_var("[VERSION]", env!("CARGO_PKG_VERSION"))
        .unwrap()
        .case(repo("tests/cmd/*.toml"));
}

#[test]
fn every_case_scrubs_what_the_runner_helper_scrubs() {
    let want: BTreeSet<&str> = cli::SCRUBBED_LIST.iter().copied().collect();
    for path in cases() {
        let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let remove: BTreeSet<&str> = doc["env"]["remove"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: no env.remove", path.display()))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(remove, want, "{}: env.remove", path.display());
        assert!(
            doc["env"].get("add").is_none() && doc["env"].get("inherit").is_none(),
            "{}: a case adds nothing to the scrubbed environment",
            path.display()
        );
    }
}
