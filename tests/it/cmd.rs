//! The CLI's behaviour as data (trycmd, as the `typos` project does): every `tests/cmd/*.toml`
//! is one run of the binary from the repository root (`fs.cwd = "../.."`) with its arguments, exit
//! code and expected stdout/stderr (inline, or in the `.stdout` file beside it). `[..]` matches
//! within a line, `...` whole lines, `[VERSION]` the crate version.
//!
//! Every case runs the binary behind one wrapper that removes what `support::cli` scrubs (by the
//! same prefixes and names; trycmd can only set variables, and an `env.remove` list copied into
//! every case drifted from it), so a case holds only what it means.
//! Regenerate expected files with `TRYCMD=overwrite cargo test --test it cmd::` and review the
//! diff.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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

/// A `/bin/sh` wrapper that removes the variables `support::cli` scrubs from its environment,
/// then runs `bin`: what trycmd's cases run as `driftgate`.
fn scrubbing_wrapper(bin: &Path, dir: &Path) -> PathBuf {
    let patterns: Vec<String> = cli::SCRUBBED_PREFIXES
        .iter()
        .map(|p| format!("{p}*"))
        .chain(cli::SCRUBBED_NAMES.iter().map(|n| n.to_string()))
        .collect();
    let quoted = bin.display().to_string().replace('\'', "'\\''");
    let script = format!(
        "#!/bin/sh\n\
         # tests/it/cmd.rs: run driftgate without the variables support::cli scrubs.\n\
         for name in $(env | sed -n 's/^\\([A-Za-z_][A-Za-z0-9_]*\\)=.*/\\1/p'); do\n\
         \x20 case \"$name\" in {}) unset \"$name\" ;; esac\n\
         done\n\
         exec '{quoted}' \"$@\"\n",
        patterns.join("|")
    );
    let path = dir.join("driftgate");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

#[test]
fn cli_cases() {
    assert!(cases().len() >= 10, "{:?}", cases());
    let dir = tempfile::tempdir().unwrap();
    let bin = scrubbing_wrapper(Path::new(env!("CARGO_BIN_EXE_driftgate")), dir.path());
    trycmd::TestCases::new()
        .register_bin("driftgate", bin.as_path())
        .default_bin_name("driftgate")
        .insert_var("[VERSION]", env!("CARGO_PKG_VERSION"))
        .unwrap()
        .case(repo("tests/cmd/*.toml"))
        .run();
}

/// The wrapper removes exactly what `support::cli` scrubs: run around `env`, under a runner's
/// variables, a key and a value holding a line that looks like a variable.
#[test]
fn the_cases_wrapper_scrubs_what_the_runner_helper_scrubs() {
    let dir = tempfile::tempdir().unwrap();
    let env_bin = ["/usr/bin/env", "/bin/env"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .expect("an env binary");
    let wrapper = scrubbing_wrapper(env_bin, dir.path());
    let out = std::process::Command::new(&wrapper)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs([
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", "/tmp/summary"),
            ("RUNNER_TEMP", "/tmp"),
            ("DRIFTGATE_CACHE_DIR", "/tmp/cache"),
            ("INPUT_BASE", "x"),
            ("CI", "true"),
            ("OPENAI_API_KEY", "sk-0123"),
            ("KEEP_ME", "1"),
            ("CIRCLE", "kept: CI is a name, not a prefix"),
            ("MULTI", "line one\nNOT_A_VAR=2"),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let names: BTreeSet<&str> = stdout
        .lines()
        .filter_map(|l| l.split_once('=').map(|(n, _)| n))
        .collect();
    for gone in [
        "GITHUB_ACTIONS",
        "GITHUB_STEP_SUMMARY",
        "RUNNER_TEMP",
        "DRIFTGATE_CACHE_DIR",
        "INPUT_BASE",
        "CI",
        "OPENAI_API_KEY",
    ] {
        assert!(cli::scrubbed(gone), "{gone}");
        assert!(
            !names.contains(gone),
            "{gone} reached the binary:\n{stdout}"
        );
    }
    for kept in ["KEEP_ME", "CIRCLE", "MULTI", "PATH"] {
        assert!(!cli::scrubbed(kept), "{kept}");
        assert!(names.contains(kept), "{kept} was removed:\n{stdout}");
    }
    assert!(stdout.contains("line one\nNOT_A_VAR=2"), "{stdout}");
}

/// A case holds only what it means: the environment is the wrapper's business.
#[test]
fn no_case_repeats_the_scrub() {
    for path in cases() {
        let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let env = doc.get("env");
        assert!(
            env.is_none_or(|e| e.get("remove").is_none() && e.get("inherit").is_none()),
            "{}: env.remove/inherit (the wrapper scrubs; a case sets only what it means with env.add)",
            path.display()
        );
    }
}
