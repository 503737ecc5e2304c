//! The composite action: `action.yml` inputs are each wired (the run step's env → entrypoint → a
//! real flag) and documented; the install and cache steps are in place; the container image is a
//! thin runtime around a released binary; and the entrypoint works end to end
//! in a simulated runner (GITHUB_* and INPUT_* variables, a real `pull_request` payload, a git
//! repository with base and head commits) against the loopback GitHub API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_yaml::Value as Yaml;

use crate::support::github::{BOT, FakeGithub, TOKEN};
use crate::support::runner::{Runner, event, fixture};
use crate::support::{calendar, cli};

fn action() -> Yaml {
    serde_yaml::from_str(&std::fs::read_to_string(fixture("action.yml")).unwrap()).unwrap()
}

fn entrypoint() -> PathBuf {
    fixture("action/entrypoint.sh")
}

/// The composite step with this `id`.
fn step<'a>(a: &'a Yaml, id: &str) -> &'a Yaml {
    a["runs"]["steps"]
        .as_sequence()
        .expect("runs.steps")
        .iter()
        .find(|s| s["id"].as_str() == Some(id))
        .unwrap_or_else(|| panic!("a step with id {id}"))
}

/// Inputs the action's own steps consume rather than the entrypoint (`cache` is read by both:
/// the steps keep the directory, the entrypoint turns `false` into `--no-cache`).
const STEP_INPUTS: &[&str] = &[];

/// `base-ref` → `INPUT_BASE_REF`.
fn env_name(input: &str) -> String {
    format!("INPUT_{}", input.to_uppercase().replace('-', "_"))
}

fn inputs() -> Vec<String> {
    action()["inputs"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

fn help(args: &[&str]) -> String {
    cli::driftgate(args).args(["--help"]).run().stdout
}

#[test]
fn every_input_is_wired_documented_and_no_secret_is_an_input() {
    let a = action();
    let env = step(&a, "run")["env"]
        .as_mapping()
        .expect("the run step's env maps inputs");
    let script = std::fs::read_to_string(entrypoint()).unwrap();
    let readme = std::fs::read_to_string(fixture("README.md")).unwrap();
    let names = inputs();
    for expected in [
        "config",
        "tools",
        "base-ref",
        "server-cmd",
        "server-env",
        "suite",
        "router",
        "model",
        "base-url",
        "cosine-floor",
        "tolerance",
        "args-tolerance",
        "require-significance",
        "repeats",
        "fail-on",
        "scan-fail-on",
        "comment",
        "report-artifact",
        "github-token",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "input {expected} is missing"
        );
    }
    let text = std::fs::read_to_string(fixture("action.yml")).unwrap();
    for name in STEP_INPUTS.iter().chain(&["cache"]) {
        assert!(
            text.contains(&format!("inputs.{name} == ")),
            "the steps read {name}"
        );
    }
    for name in &names {
        assert!(
            readme.contains(&format!("| `{name}` |")),
            "README's input table lacks {name}"
        );
        if STEP_INPUTS.contains(&name.as_str()) {
            continue;
        }
        let var = env_name(name);
        assert_eq!(
            env.get(Yaml::from(var.as_str())).and_then(Yaml::as_str),
            Some(format!("${{{{ inputs.{name} }}}}").as_str()),
            "runs.env must map {name} to {var}"
        );
        assert!(
            script.contains(&format!("${{{var}")),
            "entrypoint never reads {var}"
        );
        assert!(
            readme.contains(&format!("| `{name}` |")),
            "README's input table lacks {name}"
        );
        assert!(
            a["inputs"][name.as_str()]["description"]
                .as_str()
                .is_some_and(|d| d.len() > 20),
            "{name} needs a description"
        );
        let lower = name.to_lowercase();
        assert!(
            name == "github-token"
                || !(lower.contains("key") || lower.contains("token") || lower.contains("secret")),
            "{name}: API keys come from env, not inputs"
        );
    }
    assert_eq!(
        env.len(),
        names.len() - STEP_INPUTS.len(),
        "the run step's env has only input mappings"
    );
    // Every flag the entrypoint passes exists on the command it passes it to.
    let check_help = help(&["check"]);
    let diff_help = help(&["diff"]);
    let comment_help = help(&["comment"]);
    let lock_help = help(&["lock"]);
    let watch_help = help(&["watch"]);
    // The rollout block's flags are watch's, from its `set -- watch` to its `exec`.
    let mut in_watch = false;
    for line in script.lines() {
        in_watch |= line.contains("set -- watch ");
        for flag in line
            .split('"')
            .flat_map(|p| p.split_whitespace())
            .filter(|w| w.starts_with("--") && w.len() > 2)
        {
            let on = if line.contains("comment --report") {
                &comment_help
            } else if line.contains("set -- lock ") {
                &lock_help
            } else if in_watch {
                &watch_help
            } else {
                &check_help
            };
            assert!(
                on.contains(&format!("{flag} ")) || on.contains(&format!("{flag}\n")),
                "{flag} is not a flag of driftgate"
            );
        }
        if in_watch && line.contains("exec driftgate") {
            in_watch = false;
        }
    }
    for flag in [
        "--tools",
        "--github",
        "--annotations",
        "--config",
        "--fail-on",
        "--comment",
        "--head-server-cmd",
    ] {
        assert!(diff_help.contains(flag), "diff takes {flag} too");
    }
    // Outputs: each one declared is written by the binary and documented.
    let outputs: Vec<String> = a["outputs"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        outputs,
        [
            "verdict",
            "base-accuracy",
            "head-accuracy",
            "delta",
            "p-value",
            "changed-tools",
            "report-path",
            "html-path",
            "decision"
        ]
    );
    for o in &outputs {
        assert!(
            readme.contains(&format!("| `{o}` |")),
            "README's output table lacks {o}"
        );
        assert_eq!(
            a["outputs"][o.as_str()]["value"].as_str(),
            Some(format!("${{{{ steps.run.outputs.{o} }}}}").as_str()),
            "output {o} comes from the run step, where the binary writes it"
        );
    }
    // Composite: the binary runs on the runner, so server-cmd gets the workflow's toolchains.
    assert_eq!(a["runs"]["using"].as_str(), Some("composite"));
    assert_eq!(
        step(&a, "plan")["run"].as_str(),
        Some(r#"bash "$GITHUB_ACTION_PATH/action/install.sh" plan"#)
    );
    assert_eq!(
        step(&a, "install")["run"].as_str(),
        Some(r#"bash "$GITHUB_ACTION_PATH/action/install.sh" install"#)
    );
    assert_eq!(
        step(&a, "run")["run"].as_str(),
        Some(r#"bash "$GITHUB_ACTION_PATH/action/entrypoint.sh""#)
    );
    // Composite run steps get no GITHUB_ACTION_REF/REPOSITORY: action.yml passes them.
    for id in ["plan", "install"] {
        let env = &step(&a, id)["env"];
        assert_eq!(
            env["DRIFTGATE_ACTION_REF"].as_str(),
            Some("${{ github.action_ref }}"),
            "{id}"
        );
        assert_eq!(
            env["DRIFTGATE_ACTION_REPOSITORY"].as_str(),
            Some("${{ github.action_repository }}"),
            "{id}"
        );
    }
    // A source build is restored before install and saved right after it (a failing gate must
    // not lose it); the response cache is restored before the run and saved after it, failed
    // or not; the reports are uploaded after the run, failed or not.
    let steps = a["runs"]["steps"].as_sequence().unwrap();
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    let upload = steps
        .iter()
        .find(|s| s["uses"].as_str() == Some("actions/upload-artifact@v4"))
        .expect("an upload step");
    assert!(
        upload["if"]
            .as_str()
            .unwrap()
            .starts_with("always() && inputs.report-artifact != ''"),
        "uploads whatever the verdict, unless switched off"
    );
    let paths = upload["with"]["path"].as_str().unwrap();
    assert!(
        paths.contains("steps.run.outputs.report-path")
            && paths.contains("steps.run.outputs.html-path"),
        "{paths}"
    );
    assert_eq!(
        uses,
        [
            "actions/cache/restore@v4",
            "actions/cache/save@v4",
            "actions/cache/restore@v4",
            "actions/upload-artifact@v4",
            "actions/cache/save@v4"
        ]
    );
    let save = steps.last().unwrap();
    assert!(save["if"].as_str().unwrap().starts_with("always()"));
    // Outside the checkout: a cache directory inside it is refused in CI (docs/hardening.md).
    assert_eq!(
        save["with"]["path"].as_str(),
        Some("~/.cache/driftgate/entries")
    );
    assert_eq!(
        step(&a, "responses")["with"]["key"],
        save["with"]["key"],
        "restore and save use one key"
    );
    // Nothing here may trace commands (a token would be printed).
    for f in [
        "action/install.sh",
        "action/package.sh",
        "action/lib.sh",
        "action/entrypoint.sh",
    ] {
        let body = std::fs::read_to_string(fixture(f)).unwrap();
        assert!(
            !body.contains("set -x")
                && !body.contains("xtrace")
                && !body.contains("set -o verbose"),
            "{f} traces commands"
        );
    }
}

/// The include_bytes!/include_str! roots of the crate, as repository-relative top directories.
fn embedded_roots() -> Vec<String> {
    let mut roots = Vec::new();
    let mut stack = vec![fixture("src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            for part in text.split("include_").skip(1) {
                let Some(rest) = part
                    .strip_prefix("bytes!(\"")
                    .or_else(|| part.strip_prefix("str!(\""))
                else {
                    continue;
                };
                let rel = rest.split('"').next().unwrap();
                let abs = p.parent().unwrap().join(rel);
                let norm: PathBuf = abs.components().fold(PathBuf::new(), |mut acc, c| {
                    match c {
                        std::path::Component::ParentDir => {
                            acc.pop();
                        }
                        other => acc.push(other),
                    }
                    acc
                });
                let repo_rel = norm.strip_prefix(fixture("")).unwrap().to_path_buf();
                let top = repo_rel
                    .components()
                    .next()
                    .unwrap()
                    .as_os_str()
                    .to_string_lossy()
                    .to_string();
                if !roots.contains(&top) {
                    roots.push(top);
                }
            }
        }
    }
    roots
}

/// The image is a thin runtime around the released binary (no second build), and a source build
/// of the action caches under a key that covers everything the binary embeds.
#[test]
fn the_image_copies_the_released_binary_and_runs_non_root() {
    let text = std::fs::read_to_string(fixture("Dockerfile")).unwrap();
    assert_eq!(
        text.matches("\nFROM ").count(),
        1,
        "one stage: no build in the image"
    );
    assert!(!text.contains("cargo"), "the image does not build");
    assert!(text.contains("COPY dist/linux-${TARGETARCH}/driftgate /usr/local/bin/driftgate"));
    assert!(text.contains("COPY action/entrypoint.sh /usr/local/bin/driftgate-action"));
    let user = text
        .lines()
        .find_map(|l| l.strip_prefix("USER "))
        .expect("USER");
    let uid: u32 = user.trim().parse().expect("numeric uid");
    assert_ne!(uid, 0, "non-root");
    assert!(
        text.contains(&format!("--uid {uid}")),
        "the user exists in the image"
    );
    assert!(text.contains(r#"ENTRYPOINT ["/usr/local/bin/driftgate-action"]"#));
    let ignore = std::fs::read_to_string(fixture(".dockerignore")).unwrap();
    let rules: Vec<&str> = ignore
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert_eq!(
        rules,
        ["*", "!dist/linux-*/driftgate", "!action/entrypoint.sh"],
        "the build context is the binary and the entrypoint"
    );
    // The release workflow fills dist/linux-<arch>/ from the released archives it verified.
    let release = std::fs::read_to_string(fixture(".github/workflows/release.yml")).unwrap();
    assert!(release.contains(r#"mkdir -p "dist/linux-$arch""#));
    assert!(release.contains(r#"sha256sum --check --ignore-missing "$dg_sums""#));
    // A source build's cache key hashes every root the binary embeds files from.
    let roots = embedded_roots();
    assert!(
        roots.contains(&"models".to_string()),
        "the model is embedded: {roots:?}"
    );
    let install = std::fs::read_to_string(fixture("action/install.sh")).unwrap();
    let keyed = install
        .lines()
        .find(|l| l.contains("find Cargo.toml Cargo.lock"))
        .expect("the source key's file list");
    for r in roots
        .iter()
        .map(String::as_str)
        .chain(["src", "Cargo.toml", "Cargo.lock"])
    {
        assert!(
            keyed.split_whitespace().any(|w| w == r),
            "the source cache key must cover {r}/"
        );
    }
}

/// A stand-in `driftgate` that records its arguments, to see exactly what the entrypoint runs.
fn shim(dir: &Path) -> PathBuf {
    let bin = dir.join("shim-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join("driftgate");
    std::fs::write(
        &p,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$SHIM_OUT\"\nprintf 'token=%s\\n' \"${GITHUB_TOKEN:-}\" >> \"$SHIM_OUT\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

fn run_entrypoint(dir: &Path, bin: &Path, inputs: &[(&str, &str)]) -> (i32, String, String) {
    let vars: Vec<(String, &str)> = inputs.iter().map(|(k, v)| (env_name(k), *v)).collect();
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    run_entrypoint_env(dir, bin, &vars)
}

/// The entrypoint with these environment variables, named as given.
fn run_entrypoint_env(dir: &Path, bin: &Path, vars: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new("bash");
    cli::scrub(&mut cmd);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.arg(entrypoint())
        .current_dir(dir)
        .env("PATH", path)
        .env("SHIM_OUT", dir.join("argv"));
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn entrypoint_maps_each_input_to_one_argument() {
    let dir = tempfile::tempdir().unwrap();
    let bin = shim(dir.path());
    let argv = |d: &Path| std::fs::read_to_string(d.join("argv")).unwrap();
    let all = [
        ("tools", "mcp/tools file.json"),
        ("config", "cfg/driftgate.toml"),
        ("trust-head-policy", "true"),
        ("cache", "false"),
        ("base-ref", "origin/main"),
        ("server-cmd", "npx -y @scope/server '*' $HOME"),
        (
            "server-env",
            "API_BASE=http://127.0.0.1:9 two words\n\nGLOB=*\nPASS_THROUGH",
        ),
        ("suite", "suite.yaml"),
        ("router", "openai"),
        ("model", "gpt-4o-mini"),
        ("base-url", "http://127.0.0.1:11434/v1"),
        ("cosine-floor", "0.9"),
        ("tolerance", "0.05"),
        ("args-tolerance", "0.04"),
        ("require-significance", "0.1"),
        ("repeats", "3"),
        ("fail-on", "breaking"),
        ("scan-fail-on", "medium"),
        ("comment", "on-failure"),
        ("report-artifact", "reports-node20"),
        ("github-token", "ghs_fromInput"),
        ("shard", "2/4"),
        ("replay", "targeted"),
        ("batch", "true"),
        ("batch-wait", "600"),
        ("lint-llm", "true"),
        ("allow-unreviewed", "true"),
    ];
    let (code, _, err) = run_entrypoint(dir.path(), &bin, &all);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        argv(dir.path()),
        "check\n--tools\nmcp/tools file.json\n--github\n--annotations\n--config\ncfg/driftgate.toml\n--trust-head-policy\n\
         --cosine-floor\n0.9\n--tolerance\n0.05\n--args-tolerance\n0.04\n--require-significance\n0.1\n--fail-on\nbreaking\n--scan-fail-on\nmedium\n--no-cache\n\
         --base-ref\norigin/main\n--head-server-cmd\nnpx -y @scope/server '*' $HOME\n\
         --server-env\nAPI_BASE=http://127.0.0.1:9 two words\n--server-env\nGLOB=*\n--server-env\nPASS_THROUGH\n--comment\non-failure\n--report-artifact\nreports-node20\n\
         --suite\nsuite.yaml\n--router\nopenai\n--model\ngpt-4o-mini\n--base-url\nhttp://127.0.0.1:11434/v1\n\
         --repeats\n3\n--shard\n2/4\n--replay\ntargeted\n--batch\n--batch-wait\n600\n--lint-llm\n--allow-unreviewed\n\
         token=ghs_fromInput\n"
    );
    assert_eq!(
        inputs().len(),
        all.len() + 8 + STEP_INPUTS.len(),
        "this test sets every input but `report`, `merge`, `capture` and the five of `rollout` (tested below) and the steps' own"
    );

    // No suite input: check with --suite-optional, so the config at the PR's base (read by
    // driftgate, never by this script from the PR's checkout) says whether there is a suite.
    let (code, out, _) = run_entrypoint(
        dir.path(),
        &bin,
        &[("tools", "t.json"), ("router", "openai")],
    );
    assert_eq!(code, 0);
    assert_eq!(
        argv(dir.path()),
        "check\n--tools\nt.json\n--github\n--annotations\n--suite-optional\n--router\nopenai\ntoken=\n"
    );
    assert!(!out.contains("::warning::"), "{out}");

    // A boolean input: "false" passes nothing, anything but true/false is refused by name.
    run_entrypoint(
        dir.path(),
        &bin,
        &[("tools", "t.json"), ("suite", "s.yaml"), ("batch", "false")],
    );
    assert_eq!(
        argv(dir.path()),
        "check\n--tools\nt.json\n--github\n--annotations\n--suite\ns.yaml\ntoken=\n"
    );
    let (code, out, _) = run_entrypoint(
        dir.path(),
        &bin,
        &[
            ("tools", "t.json"),
            ("suite", "s.yaml"),
            ("lint-llm", "yes"),
        ],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("::error::driftgate: lint-llm takes true or false"),
        "{out}"
    );
    // The refused value is never echoed: a line break in it would start a workflow command.
    let (code, out, _) = run_entrypoint(
        dir.path(),
        &bin,
        &[
            ("tools", "t.json"),
            ("suite", "s.yaml"),
            ("batch", "yes\n::warning::injected"),
        ],
    );
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("::error::driftgate: batch takes true or false"),
        "{out}"
    );
    assert!(!out.contains("injected"), "{out}");

    // The PR's checkout holds a config: the script does not read it (a PR that deleted its
    // [suite] used to turn the check into a diff); driftgate reads the one at the base commit.
    std::fs::write(
        dir.path().join("driftgate.toml"),
        "[gate]\nfail_on = \"high\"\n",
    )
    .unwrap();
    run_entrypoint(dir.path(), &bin, &[("tools", "t.json")]);
    assert_eq!(
        argv(dir.path()),
        "check\n--tools\nt.json\n--github\n--annotations\n--suite-optional\ntoken=\n"
    );

    // capture: the two-job pattern's first job lists the server's tools and stops.
    run_entrypoint(
        dir.path(),
        &bin,
        &[
            ("capture", "tools live.json"),
            ("server-cmd", "uv run --frozen srv"),
            ("server-env", "MODE=test\nPASS"),
            ("suite", "ignored.yaml"),
        ],
    );
    assert_eq!(
        argv(dir.path()),
        "lock\n--server-cmd\nuv run --frozen srv\n-o\ntools live.json\n--server-env\nMODE=test\n--server-env\nPASS\ntoken=\n"
    );

    // report: post it (the workflow_run job).
    run_entrypoint(
        dir.path(),
        &bin,
        &[("report", "driftgate-report.json"), ("github-token", "t")],
    );
    assert_eq!(
        argv(dir.path()),
        "comment\n--report\ndriftgate-report.json\ntoken=t\n"
    );

    // merge: the job after the shard matrix; one glob per line, expanded, a path with spaces kept.
    for d in ["parts/a", "parts/b c"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
        std::fs::write(dir.path().join(d).join("driftgate-report.json"), "{}").unwrap();
    }
    run_entrypoint(
        dir.path(),
        &bin,
        &[
            ("merge", "parts/*/driftgate-report.json\nmissing/*.json"),
            ("comment", "always"),
            ("report-artifact", "merged"),
        ],
    );
    assert_eq!(
        argv(dir.path()),
        "merge\n--github\n--annotations\n--comment\nalways\n--report-artifact\nmerged\n\
         parts/a/driftgate-report.json\nparts/b c/driftgate-report.json\nmissing/*.json\ntoken=\n"
    );

    // rollout: a scheduled job judging a canary stage (watch); logs one glob per line.
    std::fs::create_dir_all(dir.path().join("logs")).unwrap();
    for f in ["a.jsonl", "b c.jsonl"] {
        std::fs::write(dir.path().join("logs").join(f), "").unwrap();
    }
    let (code, _, err) = run_entrypoint(
        dir.path(),
        &bin,
        &[
            ("rollout", "rollout.json"),
            (
                "logs",
                "logs/*.jsonl
exports/none-*.csv",
            ),
            ("stage", "10"),
            ("version-attribute", "app.tool_version"),
            ("aliases", "aliases.json"),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        argv(dir.path()),
        "watch\n--github\n--rollout\nrollout.json\n--stage\n10\n--version-attribute\napp.tool_version\n\
         --aliases\naliases.json\n--logs\nlogs/a.jsonl\nlogs/b c.jsonl\nexports/none-*.csv\ntoken=\n"
    );
    let (code, _, _) = run_entrypoint(dir.path(), &bin, &[("rollout", "r.json"), ("logs", "x")]);
    assert_ne!(code, 0, "rollout without stage is refused");

    // `uses: docker://…` names inputs with their hyphens (INPUT_BASE-REF): read as well.
    std::fs::remove_file(dir.path().join("driftgate.toml")).unwrap();
    let (code, _, err) = run_entrypoint_env(
        dir.path(),
        &bin,
        &[
            ("INPUT_TOOLS", "t.json"),
            ("INPUT_BASE-REF", "origin/main"),
            ("INPUT_FAIL-ON", "breaking"),
            ("INPUT_GITHUB-TOKEN", "ghs_docker"),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        argv(dir.path()),
        "check\n--tools\nt.json\n--github\n--annotations\n--fail-on\nbreaking\n--suite-optional\n--base-ref\norigin/main\ntoken=ghs_docker\n"
    );

    // tools is required otherwise.
    let (code, _, err) = run_entrypoint(dir.path(), &bin, &[("suite", "s.yaml")]);
    assert_ne!(code, 0);
    assert!(err.contains("the tools input is required"), "{err}");
}

/// `git ARGS` in `dir` with a throwaway identity; its trimmed stdout.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A repository whose base commit has the calendar example's base tools and whose head commit
/// has its head tools, under one path, with the suite; and a runner pointed at it.
pub(crate) fn pr_repo(gh: &FakeGithub, event_name: &str) -> (Runner, String, String) {
    pr_repo_with(gh, event_name, |_| {}, |_| {})
}

/// [`pr_repo`] with `at_base` and `in_pr` writing more files into the checkout at each commit.
pub(crate) fn pr_repo_with(
    gh: &FakeGithub,
    event_name: &str,
    at_base: impl FnOnce(&Path),
    in_pr: impl FnOnce(&Path),
) -> (Runner, String, String) {
    let probe = Runner::new(gh, &serde_json::json!({}));
    let (base, head) = pr_commits(
        probe.dir.path(),
        event_name,
        |dir| {
            std::fs::create_dir_all(dir.join("mcp")).unwrap();
            std::fs::copy(fixture(calendar::SUITE), dir.join("mcp/suite.yaml")).unwrap();
            std::fs::copy(fixture(calendar::BASE), dir.join("mcp/tools.json")).unwrap();
            at_base(dir);
        },
        |dir| {
            std::fs::copy(fixture(calendar::HEAD), dir.join("mcp/tools.json")).unwrap();
            in_pr(dir);
        },
        "",
    );
    (probe, base, head)
}

/// A git repository in `dir`: a base commit of what `at_base` writes on `main`, a head commit of
/// what `in_pr` changes on a branch, and the `event_name` event naming the two. The run's own
/// files are ignored, and `more_ignored` (lines) too. Returns (base, head).
fn pr_commits(
    dir: &Path,
    event_name: &str,
    at_base: impl FnOnce(&Path),
    in_pr: impl FnOnce(&Path),
    more_ignored: &str,
) -> (String, String) {
    git(dir, &["init", "-q", "-b", "main"]);
    at_base(dir);
    std::fs::write(
        dir.join(".gitignore"),
        format!("event.json\nsummary.md\noutput\n.cache/\n.driftgate/\ndriftgate-report.json\ndriftgate-report.html\n{more_ignored}"),
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    git(dir, &["checkout", "-q", "-b", "copy-edit"]);
    in_pr(dir);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "Shorter description"]);
    let head = git(dir, &["rev-parse", "HEAD"]);
    std::fs::write(
        dir.join("event.json"),
        event(event_name, &base, &head).to_string(),
    )
    .unwrap();
    (base, head)
}

fn entrypoint_in(r: &Runner, inputs: &[(&str, &str)], token_env: bool) -> (i32, String, String) {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_driftgate")).parent().unwrap();
    entrypoint_with(r, inputs, token_env, bin_dir)
}

/// The entrypoint with `bin_dir`'s driftgate first on PATH (an installed release, say).
pub(crate) fn entrypoint_with(
    r: &Runner,
    inputs: &[(&str, &str)],
    token_env: bool,
    bin_dir: &Path,
) -> (i32, String, String) {
    let mut cmd = Command::new("bash");
    r.apply(&mut cmd);
    if !token_env {
        cmd.env_remove("GITHUB_TOKEN");
    }
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.arg(entrypoint()).env("PATH", path);
    for (k, v) in inputs {
        cmd.env(env_name(k), v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_action_gates_a_pull_request_end_to_end() {
    let gh = FakeGithub::start();
    let (r, base, _) = pr_repo(&gh, "pull_request.synchronize.json");
    let inputs = [
        ("tools", "mcp/tools.json"),
        ("suite", "mcp/suite.yaml"),
        ("router", "semantic"),
        ("repeats", "1"),
        ("fail-on", "high"),
        ("comment", "auto"),
        ("github-token", TOKEN),
    ];
    // GITHUB_TOKEN is not in the environment: the github-token input is what authenticates.
    let (code, out, err) = entrypoint_in(&r, &inputs, false);
    assert_eq!(
        code, 1,
        "the calendar copy edit is a routing regression: {err}"
    );
    assert!(
        out.contains("::error file=mcp/tools.json,line=4,title=driftgate%3A schedule_appointment fails the gate::routing 87.5%25 → 25.0%25"),
        "{out}"
    );
    let comments = gh.comments(7);
    assert_eq!(comments.len(), 1, "{err}");
    assert_eq!(comments[0].login, BOT);
    let body = &comments[0].body;
    assert_eq!(
        body.lines().next(),
        Some("<!-- driftgate:driftgate:gate -->")
    );
    assert!(
        body.lines().nth(1).unwrap().starts_with(
            "### ❌ driftgate check: **fail** — `schedule_appointment`: 7 of 8 prompts reached it before, 2 of 8 now"
        ),
        "{body}"
    );
    assert!(body.contains("| 🔴 regressed | `sched-01` |"), "{body}");
    let summary = r.read("summary.md");
    assert!(
        summary.starts_with("### ❌ driftgate check: **fail**"),
        "{summary}"
    );
    let outputs: BTreeMap<String, String> = r.outputs().into_iter().collect();
    assert_eq!(outputs["verdict"], "fail");
    assert_eq!(outputs["base-accuracy"], "0.8333");
    assert_eq!(outputs["head-accuracy"], "0.7500");
    assert_eq!(outputs["delta"], "-0.0833");
    assert_eq!(outputs["p-value"], "0.2266");
    assert_eq!(outputs["changed-tools"], r#"["schedule_appointment"]"#);
    assert_eq!(outputs["report-path"], "driftgate-report.json");
    let report: serde_json::Value = serde_json::from_str(&r.read("driftgate-report.json")).unwrap();
    assert_eq!(
        report["base"]["source"],
        format!("{base}:mcp/tools.json"),
        "base read from the PR's base commit"
    );
    assert_eq!(report["github"]["pull_request"], 7);
    crate::support::reports::assert_matches_schema(&report, "the Action's report");

    // The next push fixes it: the same comment now passes (the base file at head again).
    std::fs::copy(fixture(calendar::BASE), r.path("mcp/tools.json")).unwrap();
    let (code, _, err) = entrypoint_in(&r, &inputs, false);
    assert_eq!(code, 0, "{err}");
    let comments = gh.comments(7);
    assert_eq!(comments.len(), 1);
    assert!(
        comments[0].body.contains("**Now passes.**"),
        "{}",
        comments[0].body
    );
}

#[test]
fn a_fork_pr_via_the_action_then_the_workflow_run_job_posts_its_report() {
    let gh = FakeGithub::start();
    let (r, base, head) = pr_repo(&gh, "pull_request.opened.fork.json");
    let (code, out, err) = entrypoint_in(
        &r,
        &[
            ("tools", "mcp/tools.json"),
            ("github-token", "ghs_readonly"),
        ],
        false,
    );
    assert_eq!(
        code, 1,
        "diff: the description's meaning moved below the floor: {err}"
    );
    assert!(
        out.contains("::notice::") && out.contains("comes from a fork"),
        "{out}"
    );
    assert!(gh.seen().is_empty());
    let report = r.read("driftgate-report.json");

    // The commenter: a fresh workspace with only the downloaded artifact.
    let mut c = Runner::new(&gh, &event("workflow_run.completed.json", &base, &head));
    c.set("GITHUB_EVENT_NAME", "workflow_run");
    c.set("GITHUB_JOB", "comment");
    c.write("driftgate-report.json", &report);
    gh.add_pull(7, &head, &base);
    let (code, _, err) = entrypoint_in(
        &c,
        &[("report", "driftgate-report.json"), ("github-token", TOKEN)],
        false,
    );
    assert_eq!(code, 0, "{err}");
    let comments = gh.comments(7);
    assert_eq!(comments.len(), 1, "{err}");
    assert!(
        comments[0]
            .body
            .starts_with("<!-- driftgate:driftgate:gate -->\n### ❌ driftgate diff: **fail**"),
        "{}",
        comments[0].body
    );
}

#[test]
fn tools_at_the_base_against_a_live_head_server() {
    let gh = FakeGithub::start();
    let (r, _, _) = pr_repo(&gh, "pull_request.synchronize.json");
    let (code, _, err) = r.driftgate(&[
        "diff",
        "--tools",
        "mcp/tools.json",
        "--head-server-cmd",
        "sh -c 'echo server failed to start >&2; exit 7'",
        "--no-embed",
        "--comment",
        "never",
    ]);
    assert_eq!(
        code, 3,
        "the head could not be measured: incomplete, never a pass: {err}"
    );
    assert!(
        err.contains("server failed to start"),
        "the live head was attempted: {err}"
    );
}

/// The fenced block of `lang` that follows `marker` in the README.
fn readme_block(marker: &str, lang: &str) -> String {
    let readme = std::fs::read_to_string(fixture("README.md")).unwrap();
    let at = readme
        .find(marker)
        .unwrap_or_else(|| panic!("README: {marker}"));
    let fence = format!("```{lang}\n");
    let start = at + readme[at..].find(&fence).expect("a fenced block") + fence.len();
    let len = readme[start..].find("\n```").expect("a closed block");
    readme[start..start + len].to_string()
}

/// The README's "Add it to your repository", from zero, as a new user runs it: step 2's lock
/// and step 3's `suite init` and `suite check` (the lock from the tools file rather than an npx
/// server: hermetic), committed at base; the PR's copy edit locked again at head; then step 4's
/// workflow as pasted — its driftgate step's `with:` and `env:`, every other input at
/// action.yml's default, mapped to the entrypoint's environment by action.yml's own `run` step —
/// against the loopback GitHub fake. The verdict is whatever the drafted suite measures; what
/// must hold is that the pasted workflow runs, comments, writes the reports it uploads, and
/// uploads nothing twice under one name (upload-artifact v4 answers that with a 409).
#[test]
fn the_readme_quick_start_runs_as_pasted() {
    let gh = FakeGithub::start();
    let probe = Runner::new(&gh, &serde_json::json!({}));
    let dir = probe.dir.path().to_path_buf();
    let dg = |args: &[&str]| cli::driftgate(args).dir(&dir).run();
    pr_commits(
        &dir,
        "pull_request.synchronize.json",
        |dir| {
            std::fs::copy(fixture(calendar::BASE), dir.join("tools.json")).unwrap();
            // Step 2: the README's lock line names a server; the same command on the tools file.
            let lock = readme_block("**2. Commit what your server exposes**", "sh");
            assert!(
                lock.starts_with("driftgate lock ") && lock.contains("-o driftgate.lock.json"),
                "{lock}"
            );
            let run = dg(&["lock", "tools.json", "-o", "driftgate.lock.json"]);
            assert_eq!(run.code, 0, "{}", run.dump());
            // Step 3, as written.
            for line in readme_block("**3. Draft a routing suite", "sh").lines() {
                let cmd = line.split("   #").next().unwrap().trim();
                let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
                assert_eq!(cmd.split_whitespace().next(), Some("driftgate"), "{line}");
                let run = dg(&args);
                assert_eq!(run.code, 0, "README step 3: {cmd}: {}", run.dump());
            }
        },
        |dir| {
            std::fs::copy(fixture(calendar::HEAD), dir.join("tools.json")).unwrap();
            let run = dg(&["lock", "tools.json", "-o", "driftgate.lock.json"]);
            assert_eq!(run.code, 0, "{}", run.dump());
        },
        // The server's own file: what the PR commits is its lock.
        "tools.json\n",
    );
    // Step 4, as pasted.
    let workflow: Yaml =
        serde_yaml::from_str(&readme_block("**4. Gate every pull request**", "yaml")).unwrap();
    let steps = workflow["jobs"]["gate"]["steps"].as_sequence().unwrap();
    let ours = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("OWNER/driftgate@"))
        })
        .expect("the workflow uses the action");
    let with = ours["with"].as_mapping().unwrap();
    let a = action();
    let declared = a["inputs"].as_mapping().unwrap();
    for k in with.keys() {
        assert!(
            declared.contains_key(k),
            "the README passes an undeclared input {k:?}"
        );
    }
    let value = |name: &str| -> String {
        let given = with.get(name).and_then(|v| v.as_str());
        let default = declared[name]["default"].as_str();
        match given.or(default).unwrap_or("") {
            "${{ github.token }}" => TOKEN.to_string(),
            v => v.to_string(),
        }
    };
    // action.yml's run step: `INPUT_X: ${{ inputs.x }}`.
    let mut env: Vec<(String, String)> = Vec::new();
    for (k, v) in step(&a, "run")["env"].as_mapping().unwrap() {
        let expr = v.as_str().unwrap();
        let input = expr
            .strip_prefix("${{ inputs.")
            .and_then(|e| e.strip_suffix(" }}"))
            .unwrap_or_else(|| panic!("{expr}"));
        env.push((k.as_str().unwrap().to_string(), value(input)));
    }
    let key_env = ours["env"]["DRIFTGATE_KEY"].as_str().unwrap();
    assert_eq!(key_env, "${{ secrets.DRIFTGATE_KEY }}");
    let mut cmd = Command::new("bash");
    probe.apply(&mut cmd);
    cmd.env_remove("GITHUB_TOKEN");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_driftgate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.arg(entrypoint())
        .env("PATH", path)
        .env("DRIFTGATE_KEY", "a random repository secret");
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let (code, stdout, stderr) = (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!([0, 1, 4].contains(&code), "exit {code}: {stdout}{stderr}");
    let outputs: BTreeMap<String, String> = probe.outputs().into_iter().collect();
    let verdict = &outputs["verdict"];
    assert_eq!(
        code,
        match verdict.as_str() {
            "pass" => 0,
            "fail" => 1,
            _ => 4,
        },
        "{stderr}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&probe.read(&outputs["report-path"])).unwrap();
    assert_eq!(report["command"], "check", "the suite makes it a check");
    let suite = report["suite"]["source"].as_str().unwrap();
    assert!(
        suite.ends_with(":driftgate.suite.yaml"),
        "read at base: {suite}"
    );
    assert_eq!(report["diff"]["tools"][0]["name"], "schedule_appointment");
    assert!(
        probe.path(&outputs["html-path"]).exists(),
        "the HTML the action uploads"
    );
    let comments = gh.comments(7);
    assert_eq!(comments.len(), 1, "{stderr}");
    // Artifact names: the action uploads its reports under `report-artifact`; the pasted
    // workflow must not upload under the same name.
    let mut names = vec![value("report-artifact")];
    for s in steps {
        if s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("actions/upload-artifact"))
        {
            names.push(s["with"]["name"].as_str().unwrap_or("artifact").to_string());
        }
    }
    let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(distinct.len(), names.len(), "artifact names {names:?}");
    assert_eq!(names[0], "driftgate-report");
}

/// The README's scheduled canary workflow passes only declared inputs, and its local command
/// runs as printed (the shipped example rolls back: exit 1).
#[test]
fn the_readme_canary_workflow_and_its_local_command_are_real() {
    let workflow: Yaml = serde_yaml::from_str(&readme_block(
        "### A canary rollout, watched on a schedule",
        "yaml",
    ))
    .unwrap();
    let steps = workflow["jobs"]["watch"]["steps"].as_sequence().unwrap();
    let ours = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("OWNER/driftgate@"))
        })
        .expect("the workflow uses the action");
    let declared = action()["inputs"].as_mapping().unwrap().clone();
    let with = ours["with"].as_mapping().unwrap();
    for k in with.keys() {
        assert!(declared.contains_key(k), "undeclared input {k:?}");
    }
    for k in ["rollout", "stage", "logs"] {
        assert!(with.contains_key(Yaml::from(k)), "the example sets {k}");
    }
    let block = readme_block("Try it locally on the shipped example", "sh");
    let runs: Vec<_> = block
        .lines()
        .map(|l| cli::driftgate(l.split_whitespace().skip(1)).run())
        .collect();
    assert_eq!(runs.len(), 3);
    // The plan is the shipped rollout file, byte for byte.
    assert_eq!(runs[0].code, 0, "{}", runs[0].dump());
    assert_eq!(
        runs[0].stdout,
        std::fs::read_to_string(fixture("examples/canary/rollout.json")).unwrap()
    );
    assert!(
        runs[1].stdout.starts_with("base (bucket "),
        "{}",
        runs[1].dump()
    );
    assert_eq!(runs[2].code, 1, "{}", runs[2].dump());
    assert!(runs[2].stdout.starts_with("ROLLBACK"), "{}", runs[2].stdout);
}
