//! The composite action's install (action/install.sh) in a simulated runner (`RUNNER_OS`,
//! `RUNNER_ARCH`, `GITHUB_ACTION_PATH`, the ref action.yml passes, …) against the loopback GitHub,
//! which serves a release the way github.com does (302 to the asset store): a real archive of the
//! built binary packed by action/package.sh, with a real SHA256SUMS. The installed binary then
//! gates a real `pull_request` end to end. With `DRIFTGATE_RELEASE_DIST` set (CI: the release
//! workflow's own build command, .ci/run) the archive is that release build instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

use crate::github_action::{entrypoint_with, pr_repo};
use crate::support::cli;
use crate::support::github::{FakeGithub, TOKEN};
use crate::support::runner::fixture;

const ACTION_REPO: &str = "driftgate-org/driftgate";
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// `action/lib.sh`'s answer to `call` (e.g. `dg_archive 0.1.0 x86_64-unknown-linux-gnu`).
fn lib(call: &str) -> String {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(". action/lib.sh && {call}"))
        .current_dir(fixture(""))
        .output()
        .unwrap();
    assert!(out.status.success(), "{call}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn version() -> String {
    lib("dg_version Cargo.toml")
}

/// The release directory: one archive for the test's platform plus SHA256SUMS. Packed once from
/// the binary under test (or taken from `DRIFTGATE_RELEASE_DIST`).
fn dist() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        if let Some(d) = std::env::var_os("DRIFTGATE_RELEASE_DIST").filter(|d| !d.is_empty()) {
            return PathBuf::from(d);
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("driftgate-dist");
        let _ = std::fs::remove_dir_all(&dir);
        let bin = env!("CARGO_BIN_EXE_driftgate");
        let pack = |args: &[&str]| {
            let out = Command::new("bash")
                .arg(fixture("action/package.sh"))
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "package.sh {args:?}: {out:?}");
        };
        pack(&["pack", TARGET, dir.to_str().unwrap(), bin]);
        pack(&["sums", dir.to_str().unwrap()]);
        dir
    })
}

fn archive_name() -> String {
    lib(&format!("dg_archive {} {TARGET}", version()))
}

/// A loopback GitHub that has published this release (assets as given).
fn github_with(assets: &[(&str, Vec<u8>)]) -> FakeGithub {
    let gh = FakeGithub::start();
    let tag = format!("v{}", version());
    for (name, bytes) in assets {
        gh.add_asset(ACTION_REPO, &tag, name, bytes.clone());
    }
    gh
}

fn released() -> Vec<(&'static str, Vec<u8>)> {
    let archive: &'static str = Box::leak(archive_name().into_boxed_str());
    vec![
        (archive, std::fs::read(dist().join(archive)).unwrap()),
        (
            "SHA256SUMS",
            std::fs::read(dist().join("SHA256SUMS")).unwrap(),
        ),
    ]
}

struct Installed {
    code: i32,
    stdout: String,
    stderr: String,
    outputs: BTreeMap<String, String>,
    /// What the steps appended to GITHUB_PATH.
    path: Vec<String>,
}

/// `install.sh plan` then `install.sh install`, as the action's steps run them: the action
/// checked out at the repository root, its ref given as action.yml gives it
/// (`DRIFTGATE_ACTION_REF` from `github.action_ref`).
fn install(
    gh: &FakeGithub,
    tmp: &Path,
    os: &str,
    arch: &str,
    git_ref: &str,
    extra_path: Option<&Path>,
) -> Installed {
    install_in(gh, tmp, os, arch, &fixture(""), Some(git_ref), extra_path)
}

/// `install` with the action checked out at `action` and, when `git_ref` is `None`, no ref or
/// repository in the environment (the script reads them from the checkout path).
fn install_in(
    gh: &FakeGithub,
    tmp: &Path,
    os: &str,
    arch: &str,
    action: &Path,
    git_ref: Option<&str>,
    extra_path: Option<&Path>,
) -> Installed {
    let temp = tmp.join("runner-temp");
    std::fs::create_dir_all(&temp).unwrap();
    let outputs = tmp.join("outputs");
    let gh_path = tmp.join("github-path");
    let _ = std::fs::remove_file(&outputs);
    let _ = std::fs::remove_file(&gh_path);
    let system_path = std::env::var("PATH").unwrap_or_default();
    let path = match extra_path {
        Some(p) => format!("{}:{system_path}", p.display()),
        None => system_path,
    };
    let run = |step: &str, src_root: &str| {
        let mut cmd = Command::new("bash");
        cli::scrub(&mut cmd);
        cmd.arg(fixture("action/install.sh"))
            .arg(step)
            .current_dir(tmp)
            .env("PATH", &path)
            .env("HOME", tmp)
            .env("RUNNER_OS", os)
            .env("RUNNER_ARCH", arch)
            .env("RUNNER_TEMP", &temp)
            .env("GITHUB_ACTION_PATH", action)
            .env("GITHUB_SERVER_URL", gh.server_url())
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_PATH", &gh_path)
            .env("GITHUB_TOKEN", TOKEN)
            .env("DRIFTGATE_SRC_ROOT", src_root);
        if let Some(r) = git_ref {
            cmd.env("DRIFTGATE_ACTION_REF", r)
                .env("DRIFTGATE_ACTION_REPOSITORY", ACTION_REPO);
        }
        cmd.output().unwrap()
    };
    let read_outputs = || -> BTreeMap<String, String> {
        std::fs::read_to_string(&outputs)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let plan = run("plan", "");
    let mut stdout = String::from_utf8_lossy(&plan.stdout).into_owned();
    let mut stderr = String::from_utf8_lossy(&plan.stderr).into_owned();
    let mut code = plan.status.code().unwrap_or(-1);
    if code == 0 {
        let src_root = read_outputs().get("src-root").cloned().unwrap_or_default();
        let inst = run("install", &src_root);
        stdout.push_str(&String::from_utf8_lossy(&inst.stdout));
        stderr.push_str(&String::from_utf8_lossy(&inst.stderr));
        code = inst.status.code().unwrap_or(-1);
    }
    Installed {
        code,
        stdout,
        stderr,
        outputs: read_outputs(),
        path: std::fs::read_to_string(&gh_path)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect(),
    }
}

/// `install` on a Linux x64 runner at this version's release tag.
fn install_tag(gh: &FakeGithub, tmp: &Path) -> Installed {
    install(gh, tmp, "Linux", "X64", &format!("v{}", version()), None)
}

/// An install error is one workflow command whatever its text: the runner's own escapes for
/// `%`, CR and LF, so a line break cannot open a second command.
#[test]
fn install_errors_are_one_workflow_command() {
    assert_eq!(
        lib("dg_command_data $'50% done\\r\\n::warning::x'"),
        "50%25 done%0D%0A::warning::x"
    );
    assert_eq!(lib("dg_command_data 'plain'"), "plain");
}

#[test]
fn a_release_tag_downloads_verifies_and_gates_a_pull_request() {
    let gh = github_with(&released());
    let tmp = tempfile::tempdir().unwrap();
    let v = version();
    let started = Instant::now();
    let got = install(&gh, tmp.path(), "Linux", "X64", &format!("v{v}"), None);
    let took = started.elapsed();
    assert_eq!(got.code, 0, "{}", got.stderr);
    println!(
        "install from the loopback release: {:.1} s for a {:.1} MB archive",
        took.as_secs_f64(),
        std::fs::metadata(dist().join(archive_name()))
            .unwrap()
            .len() as f64
            / 1e6
    );
    assert_eq!(got.outputs["mode"], "release");
    assert_eq!(got.outputs["target"], TARGET);
    let bin = PathBuf::from(&got.outputs["bin"]);
    assert!(bin.is_file(), "{bin:?}");
    assert_eq!(got.path, [bin.parent().unwrap().display().to_string()]);
    assert!(
        got.stderr
            .contains(&format!("ready (release v{v} {TARGET}, sha256 ")),
        "{}",
        got.stderr
    );
    // Downloaded through github.com's redirect to the asset store, without a token.
    let seen = gh.seen();
    let fetched: Vec<&str> = seen.iter().map(|r| r.path()).collect();
    assert!(
        fetched.contains(&format!("/{ACTION_REPO}/releases/download/v{v}/SHA256SUMS").as_str()),
        "{fetched:?}"
    );
    assert!(
        fetched.iter().any(|p| p.starts_with("/_release-assets/")),
        "{fetched:?}"
    );
    assert!(seen.iter().all(|r| r.header("authorization").is_none()));
    // The token never reaches the log.
    assert!(!got.stdout.contains(TOKEN) && !got.stderr.contains(TOKEN));

    // The installed binary (not the test's) gates the calendar PR against the loopback API. The
    // repository secret that authenticates the cache across runs is in the job's env.
    let (mut r, _, _) = pr_repo(&gh, "pull_request.synchronize.json");
    r.set("DRIFTGATE_KEY", "repository-secret-for-the-cache");
    let inputs = [
        ("tools", "mcp/tools.json"),
        ("suite", "mcp/suite.yaml"),
        ("github-token", TOKEN),
    ];
    let (code, _, err) = entrypoint_with(&r, &inputs, false, bin.parent().unwrap());
    assert_eq!(code, 1, "the calendar regression fails the gate: {err}");
    let comments = gh.comments(7);
    assert_eq!(comments.len(), 1, "{err}");
    assert!(
        comments[0]
            .body
            .contains("`schedule_appointment` routing 87.5% → 25.0%"),
        "{}",
        comments[0].body
    );
    assert!(
        comments[0]
            .body
            .contains("requests: base 36 sent, 0 from cache; head 36 sent, 0 from cache"),
        "the footer counts requests: {}",
        comments[0].body
    );
    // A re-run of the unchanged PR with the cache the action keeps sends nothing.
    let (code, _, err) = entrypoint_with(&r, &inputs, false, bin.parent().unwrap());
    assert_eq!(code, 1, "{err}");
    let body = &gh.comments(7)[0].body;
    assert!(
        body.contains("requests: base 0 sent, 36 from cache; head 0 sent, 36 from cache"),
        "{body}"
    );
}

/// A composite action's steps get no ref in their environment unless action.yml passes it; the
/// runner's checkout path `_actions/OWNER/REPO/REF` names both.
#[cfg(unix)]
#[test]
fn the_ref_and_repository_are_read_from_the_checkout_path() {
    let gh = github_with(&released());
    let tmp = tempfile::tempdir().unwrap();
    let v = version();
    let parent = tmp.path().join("work/_actions/driftgate-org/driftgate");
    std::fs::create_dir_all(&parent).unwrap();
    let checkout = parent.join(format!("v{v}"));
    std::os::unix::fs::symlink(fixture(""), &checkout).unwrap();
    let got = install_in(&gh, tmp.path(), "Linux", "X64", &checkout, None, None);
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(got.outputs["mode"], "release");
    assert!(
        gh.seen()
            .iter()
            .any(|r| r.path() == format!("/{ACTION_REPO}/releases/download/v{v}/SHA256SUMS")),
        "downloaded from the repository the path names"
    );
    // A local `uses: ./` (no _actions path, no ref) builds from source.
    let local = install_in(
        &gh,
        tmp.path(),
        "Linux",
        "X64",
        &fixture(""),
        None,
        Some(&cargo_shim(tmp.path())),
    );
    assert_eq!(local.code, 0, "{}", local.stderr);
    assert_eq!(local.outputs["mode"], "source");
}

#[test]
fn a_moving_major_tag_installs_the_release_its_tree_names() {
    let gh = github_with(&released());
    let tmp = tempfile::tempdir().unwrap();
    let v = version();
    let major = format!("v{}", v.split('.').next().unwrap());
    let got = install(&gh, tmp.path(), "Linux", "X64", &major, None);
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(got.outputs["mode"], "release");
    assert_eq!(got.outputs["version"], v);
    // A full tag that is not this tree's version is refused before any download.
    let got = install(&gh, tmp.path(), "Linux", "X64", "v9.9.9", None);
    assert_eq!(got.code, 1);
    assert!(
        got.stdout.contains(&format!("::error title=driftgate install::the action's ref v9.9.9 is a release tag, but its Cargo.toml says version {v}")),
        "{}",
        got.stdout
    );
}

/// The archive carries shell completions and the man page, written by the packed binary itself.
#[test]
fn the_archive_carries_completions_and_the_man_page() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new("tar")
        .arg("xzf")
        .arg(dist().join(archive_name()))
        .arg("-C")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let top = tmp
        .path()
        .join(lib(&format!("dg_stem {} {TARGET}", version())));
    for sh in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let f = std::fs::read_to_string(top.join(format!("completions/driftgate.{sh}"))).unwrap();
        assert!(
            f.contains("check") && f.contains("inconclusive-drop"),
            "{sh}: {f}"
        );
    }
    let man = std::fs::read_to_string(top.join("driftgate.1")).unwrap();
    assert!(
        man.starts_with(".ie") || man.contains(".TH driftgate"),
        "{man}"
    );
    assert!(man.contains("check"), "{man}");
}

/// Every release tag the docs tell a user to pin (`OWNER/driftgate@v…` in README.md, docs/ and
/// the example workflows) installs this tree's release: a pasted workflow must not die on
/// "the tag and the release disagree".
#[test]
fn every_tag_the_docs_pin_installs() {
    let gh = github_with(&released());
    let mut files = vec![fixture("README.md")];
    for dir in ["docs", ".github/workflows"] {
        files.extend(walk(&fixture(dir)));
    }
    let mut tags = std::collections::BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for (i, _) in text.match_indices("driftgate@v") {
            let tag: String = text[i + "driftgate@".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
                .collect();
            tags.insert((tag, f.display().to_string()));
        }
    }
    assert!(!tags.is_empty(), "the README pins a tag");
    for (tag, file) in tags {
        let tmp = tempfile::tempdir().unwrap();
        let got = install(&gh, tmp.path(), "Linux", "X64", &tag, None);
        assert_eq!(
            got.code, 0,
            "{file} pins @{tag}: {}{}",
            got.stdout, got.stderr
        );
        assert_eq!(got.outputs["mode"], "release", "{file} @{tag}");
    }
}

#[test]
fn a_checksum_mismatch_fails_closed() {
    let mut assets = released();
    // SHA256SUMS names the archive with another hash: a tampered or corrupted download.
    let sums = String::from_utf8(assets[1].1.clone()).unwrap();
    let (hash, rest) = sums.split_once("  ").unwrap();
    let flipped: String = hash
        .chars()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 {
                if c == '0' { '1' } else { '0' }
            } else {
                c
            }
        })
        .collect();
    assets[1].1 = format!("{flipped}  {rest}").into_bytes();
    let gh = github_with(&assets);
    let tmp = tempfile::tempdir().unwrap();
    let got = install_tag(&gh, tmp.path());
    assert_eq!(got.code, 1, "{}", got.stderr);
    assert!(
        got.stdout.contains(&format!(
            "::error title=driftgate install::checksum mismatch for {}: SHA256SUMS says {flipped}",
            archive_name()
        )),
        "{}",
        got.stdout
    );
    assert!(got.stdout.contains("refusing to run it"));
    assert!(got.path.is_empty(), "nothing was put on PATH");
    assert!(!got.outputs.contains_key("bin"));
    let left: Vec<_> = walk(&tmp.path().join("runner-temp"))
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "driftgate"))
        .collect();
    assert!(left.is_empty(), "no unpacked binary is left: {left:?}");

    // A SHA256SUMS without a line for the archive is no verification either.
    let mut assets = released();
    assets[1].1 =
        b"0000000000000000000000000000000000000000000000000000000000000000  other.tar.gz\n"
            .to_vec();
    let gh = github_with(&assets);
    let got = install_tag(&gh, tmp.path());
    assert_eq!(got.code, 1);
    assert!(
        got.stdout.contains(&format!(
            "SHA256SUMS of v{} has no line for {}: refusing to run an unverified binary",
            version(),
            archive_name()
        )),
        "{}",
        got.stdout
    );
    assert!(got.path.is_empty());
}

#[test]
fn a_missing_asset_or_platform_is_named() {
    let v = version();
    // Only the checksums were published: the archive for this runner is missing.
    let mut assets = released();
    assets.remove(0);
    let gh = github_with(&assets);
    let tmp = tempfile::tempdir().unwrap();
    let got = install(&gh, tmp.path(), "Linux", "X64", &format!("v{v}"), None);
    assert_eq!(got.code, 1);
    assert!(
        got.stdout.contains(&format!(
            "the release v{v} has no asset {} for Linux/X64",
            archive_name()
        )),
        "{}",
        got.stdout
    );
    assert!(
        got.stderr.contains("404"),
        "curl's reason is shown: {}",
        got.stderr
    );
    // A runner platform no release is built for.
    let got = install(&gh, tmp.path(), "Linux", "ARM", &format!("v{v}"), None);
    assert_eq!(got.code, 1);
    assert!(
        got.stdout.contains("no driftgate release is built for Linux/ARM (releases: x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu"),
        "{}",
        got.stdout
    );
    assert!(
        got.stdout
            .contains("pin the action to a commit SHA to build from source")
    );
    // Nothing released at all.
    let gh = github_with(&[]);
    let got = install(&gh, tmp.path(), "macOS", "ARM64", &format!("v{v}"), None);
    assert_eq!(got.code, 1);
    assert!(
        got.stdout.contains(&format!(
            "could not download {}/{ACTION_REPO}/releases/download/v{v}/SHA256SUMS",
            gh.server_url()
        )),
        "{}",
        got.stdout
    );
}

/// A stand-in `cargo` that records its arguments and "installs" the binary under test, so the
/// source path is tested without a nine-minute release build (CI's release build is the real one).
fn cargo_shim(dir: &Path) -> PathBuf {
    let bin = dir.join("shim");
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join("cargo");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"{args}\"\nroot=\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\nmkdir -p \"$root/bin\" && cp \"{exe}\" \"$root/bin/driftgate\"\n",
            args = dir.join("cargo-args").display(),
            exe = env!("CARGO_BIN_EXE_driftgate"),
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

#[test]
fn a_sha_ref_builds_from_source_once_then_reuses_the_cached_build() {
    let gh = github_with(&[]);
    let tmp = tempfile::tempdir().unwrap();
    let shim = cargo_shim(tmp.path());
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let got = install(&gh, tmp.path(), "Linux", "X64", sha, Some(&shim));
    assert_eq!(got.code, 0, "{}", got.stderr);
    assert_eq!(got.outputs["mode"], "source");
    assert!(got.outputs["src-key"].starts_with("driftgate-src-Linux-X64-"));
    let root = &got.outputs["src-root"];
    let args = std::fs::read_to_string(tmp.path().join("cargo-args")).unwrap();
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "install",
            "--locked",
            "--path",
            fixture("").to_str().unwrap(),
            "--root",
            root.as_str(),
            "--bin",
            "driftgate"
        ]
    );
    assert_eq!(got.outputs["bin"], format!("{root}/bin/driftgate"));
    assert!(gh.seen().is_empty(), "a source build downloads nothing");
    // The cache restored src-root: the next run uses it and does not build.
    std::fs::remove_file(tmp.path().join("cargo-args")).unwrap();
    let again = install(&gh, tmp.path(), "Linux", "X64", sha, Some(&shim));
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        again.outputs["src-key"], got.outputs["src-key"],
        "same ref and tree, same key"
    );
    assert!(!tmp.path().join("cargo-args").exists(), "no second build");
    assert!(
        again.stderr.contains("restored from the cache"),
        "{}",
        again.stderr
    );
    // Another ref is another build.
    let other = install(&gh, tmp.path(), "Linux", "X64", "main", Some(&shim));
    assert_ne!(other.outputs["src-key"], got.outputs["src-key"]);
}

#[test]
fn the_response_cache_key_follows_suite_router_and_both_tool_sets() {
    let gh = github_with(&[]);
    let (r, base, _) = pr_repo(&gh, "pull_request.synchronize.json");
    let key = |extra: &[(&str, &str)]| {
        let out_file = r.path("plan-out");
        let _ = std::fs::remove_file(&out_file);
        let mut cmd = Command::new("bash");
        cli::scrub(&mut cmd);
        cmd.arg(fixture("action/install.sh"))
            .arg("plan")
            .current_dir(r.dir.path())
            .env("RUNNER_TEMP", r.dir.path())
            .env("GITHUB_ACTION_PATH", fixture(""))
            .env("DRIFTGATE_ACTION_REF", "main")
            .env("GITHUB_OUTPUT", &out_file)
            .env("GITHUB_EVENT_PATH", r.path("event.json"))
            .env("INPUT_TOOLS", "mcp/tools.json")
            .env("INPUT_SUITE", "mcp/suite.yaml");
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = std::fs::read_to_string(&out_file).unwrap();
        let get = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .unwrap()
                .to_string()
        };
        (get("responses-key"), get("responses-prefix"))
    };
    let (k0, p0) = key(&[]);
    assert!(k0.starts_with(&p0), "{k0} / {p0}");
    assert!(
        !k0.contains("-none-"),
        "both tool sets hashed (base from the event's base SHA): {k0}"
    );
    assert_eq!(key(&[]).0, k0, "stable");
    // Another router: another prefix (its answers are no use).
    let (k1, p1) = key(&[("INPUT_ROUTER", "openai"), ("INPUT_MODEL", "gpt-4o-mini")]);
    assert_ne!(p1, p0);
    assert_ne!(k1, k0);
    // Another base: same prefix (partial reuse), another key.
    let (k2, p2) = key(&[("INPUT_BASE_REF", &format!("{base}~0"))]);
    assert_eq!(
        (k2.clone(), p2.clone()),
        (k0.clone(), p0.clone()),
        "the same base commit, named otherwise"
    );
    // Keyed per commit: a re-run of the same commit hits exactly, a new push saves anew and
    // restores from the prefix.
    let (k4, p4) = key(&[("GITHUB_SHA", "abc123")]);
    let (k5, _) = key(&[("GITHUB_SHA", "def456")]);
    assert_eq!(p4, p0);
    assert!(k4.ends_with("-abc123"), "{k4}");
    assert_ne!(k4, k5);
    // The config the entrypoint would use (./driftgate.toml by default) is part of the prefix.
    std::fs::write(r.path("driftgate.toml"), "[gate]\ntolerance = 0.05\n").unwrap();
    let (_, p6) = key(&[]);
    assert_ne!(p6, p0, "a default driftgate.toml counts");
    std::fs::remove_file(r.path("driftgate.toml")).unwrap();
    let (_, p7) = key(&[("INPUT_REPEATS", "3")]);
    assert_ne!(p7, p0, "repeats count");
    // A new head commit changes the tools file: same prefix, new key.
    std::fs::write(r.path("mcp/tools.json"), "[]").unwrap();
    let (k3, p3) = key(&[]);
    assert_eq!(p3, p0);
    assert_ne!(k3, k0);
}

/// Cargo's `cargo binstall` metadata names the same archive as action/lib.sh.
#[test]
fn binstall_metadata_names_the_release_layout() {
    let cargo: toml::Value =
        toml::from_str(&std::fs::read_to_string(fixture("Cargo.toml")).unwrap()).unwrap();
    let b = &cargo["package"]["metadata"]["binstall"];
    let v = version();
    let fill = |t: &str| {
        t.replace("{ version }", &v)
            .replace("{ target }", TARGET)
            .replace("{ bin }", "driftgate")
            .replace("{ binary-ext }", "")
    };
    let url = fill(b["pkg-url"].as_str().unwrap());
    assert_eq!(
        url.rsplit('/').next().unwrap(),
        lib(&format!("dg_archive {v} {TARGET}"))
    );
    assert!(url.contains(&format!("/releases/download/v{v}/")), "{url}");
    assert_eq!(
        fill(b["bin-dir"].as_str().unwrap()),
        format!("{}/driftgate", lib(&format!("dg_stem {v} {TARGET}")))
    );
    assert_eq!(b["pkg-fmt"].as_str(), Some("tgz"));
    // Every runner platform maps to a target the release workflow builds.
    let release = std::fs::read_to_string(fixture(".github/workflows/release.yml")).unwrap();
    for (os, arch) in [
        ("Linux", "X64"),
        ("Linux", "ARM64"),
        ("macOS", "X64"),
        ("macOS", "ARM64"),
        ("Windows", "X64"),
    ] {
        let t = lib(&format!("dg_target {os} {arch}"));
        assert!(
            release.contains(&format!("target: {t},")),
            "release.yml builds {t}"
        );
    }
    assert!(release.contains(r#"run: bash action/package.sh build "$TARGET" dist"#));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
