//! The pull request cannot grade itself (docs/hardening.md, "Governance"): each attack a PR
//! author can mount on the gate, run the way the PR would run it — through the Action's
//! entrypoint against the loopback GitHub, in a git repository with real base and head commits —
//! and what the gate must do instead.
//!
//! Every test here failed on the main branch before the governance work (93c1b64): the PR's
//! config applied, `ref:` files and symlinked suites were read from its checkout, cache entries
//! were unauthenticated, a server could return the job's token in a description, parts were
//! merged as written, and the report path followed a link.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::github_action::entrypoint_with;
use crate::support::calendar;
use crate::support::cli;
use crate::support::github::{FakeGithub, TOKEN};
use crate::support::runner::{Runner, fixture};

/// A repository whose base commit holds the calendar example (`mcp/tools.json`,
/// `mcp/suite.yaml`) and `base_files`, and whose head commit (the PR) has the calendar's head
/// tools (the README's regression) and whatever `pr` does to the tree; a runner pointed at it.
fn pr(gh: &FakeGithub, base_files: &[(&str, &str)], pr: impl FnOnce(&Path)) -> (Runner, String) {
    let at_base = |dir: &Path| {
        for (path, text) in base_files {
            write(dir, path, text);
        }
    };
    let (r, base, _) =
        crate::github_action::pr_repo_with(gh, "pull_request.synchronize.json", at_base, pr);
    (r, base)
}

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The Action's entrypoint with `inputs` and the test's binary; (exit code, stdout, stderr).
fn action(r: &Runner, inputs: &[(&str, &str)]) -> (i32, String, String) {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_driftgate")).parent().unwrap();
    entrypoint_with(r, inputs, false, bin_dir)
}

fn report(r: &Runner) -> Value {
    serde_json::from_str(&r.read("driftgate-report.json")).expect("the Action wrote its report")
}

/// The report's policy changes as (item, effect, applied).
fn changes(report: &Value) -> Vec<(String, String, bool)> {
    report["policy"]["changes"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    (
                        c["item"].as_str().unwrap().to_string(),
                        c["effect"].as_str().unwrap().to_string(),
                        c["applied"].as_bool().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

const GATE: [(&str, &str); 3] = [
    ("tools", "mcp/tools.json"),
    ("suite", "mcp/suite.yaml"),
    ("github-token", TOKEN),
];

/// Every knob a PR could turn to pass its own regression, at once.
const LOOSE: &str = "[gate]
per_tool_alpha = 1e-12
cosine_floor = 0.0
meaning = \"review\"
tolerance = 1.0
fail_on = \"breaking\"
[scan]
fail_on = \"never\"
[suite]
use_head_suite = true
";

#[test]
fn a_pr_that_loosens_its_own_thresholds_is_judged_by_the_base_policy() {
    let gh = FakeGithub::start();
    let (r, base) = pr(&gh, &[], |d| write(d, "driftgate.toml", LOOSE));
    let (code, out, err) = action(&r, &GATE);
    assert_eq!(code, 1, "the calendar regression still fails: {out}{err}");
    let rep = report(&r);
    assert_eq!(
        rep["thresholds"]["per_tool_alpha"], 0.035,
        "base's defaults"
    );
    assert_eq!(rep["policy"]["rev"], base.as_str());
    assert_eq!(rep["policy"]["from"], "base");
    let got = changes(&rep);
    for key in [
        "gate.per_tool_alpha",
        "gate.cosine_floor",
        "gate.meaning",
        "gate.tolerance",
        "gate.fail_on",
        "scan.fail_on",
        "suite.use_head_suite",
    ] {
        assert!(
            got.contains(&(key.to_string(), "weakens".to_string(), false)),
            "{key} is listed as weakening and not applied: {got:?}"
        );
    }
    // The comment says so first, above the verdict's evidence.
    let body = &gh.comments(7)[0].body;
    let caution = body.find("[!CAUTION]").expect("a caution block");
    assert!(caution < body.find("Flipped cases").unwrap(), "{body}");
    assert!(
        body.contains("gate.per\\_tool\\_alpha: (not set) → "),
        "{body}"
    );
    assert!(
        out.contains("title=driftgate%3A the PR changes the gate's own rules::gate.tolerance: (not set) → 1.0 (weakens the gate"),
        "{out}"
    );

    // A maintainer's opt-in (an input the PR cannot set) applies them, and says so.
    let mut inputs = GATE.to_vec();
    inputs.push(("trust-head-policy", "true"));
    let (code, _, err) = action(&r, &inputs);
    assert_eq!(code, 0, "{err}");
    let rep = report(&r);
    assert_eq!(rep["policy"]["from"], "head");
    assert!(changes(&rep).iter().all(|c| c.2), "{:?}", changes(&rep));
}

#[test]
fn deleting_the_base_config_keeps_its_suite_and_its_stricter_threshold() {
    let gh = FakeGithub::start();
    let cfg = "[gate]\nfail_on = \"warning\"\n[suite]\npath = \"mcp/suite.yaml\"\n";
    let (r, _) = pr(&gh, &[("driftgate.toml", cfg)], |d| {
        std::fs::remove_file(d.join("driftgate.toml")).unwrap();
    });
    // No suite input: whether there is one is the base's config's to say.
    let (code, _, err) = action(&r, &[("tools", "mcp/tools.json"), ("github-token", TOKEN)]);
    assert_eq!(code, 1, "{err}");
    let rep = report(&r);
    assert_eq!(rep["command"], "check", "not silently a diff");
    assert_eq!(rep["routing"]["summary"]["n_cases"], 36);
    assert_eq!(rep["thresholds"]["fail_on"], "warning");
    let got = changes(&rep);
    assert!(
        got.contains(&("driftgate.toml".into(), "weakens".into(), false)),
        "{got:?}"
    );
    assert!(
        got.contains(&("suite.path".into(), "weakens".into(), false)),
        "{got:?}"
    );
}

#[test]
fn a_pr_that_points_the_suite_at_a_weaker_file_is_measured_with_the_base_suite() {
    let gh = FakeGithub::start();
    let cfg = "[suite]\npath = \"mcp/suite.yaml\"\n";
    let (r, base) = pr(&gh, &[("driftgate.toml", cfg)], |d| {
        write(
            d,
            "mcp/weak.yaml",
            "cases:\n  - {id: w1, prompt: cancel my appointment, expect: cancel_appointment}\n",
        );
        write(d, "driftgate.toml", "[suite]\npath = \"mcp/weak.yaml\"\n");
    });
    let (code, _, err) = action(&r, &[("tools", "mcp/tools.json"), ("github-token", TOKEN)]);
    assert_eq!(code, 1, "{err}");
    let rep = report(&r);
    assert_eq!(rep["suite"]["source"], format!("{base}:mcp/suite.yaml"));
    assert_eq!(rep["suite"]["cases"], 36);
    assert!(
        changes(&rep).contains(&("suite.path".into(), "changes".into(), false)),
        "{:?}",
        changes(&rep)
    );
}

#[test]
fn the_router_endpoint_and_key_variable_never_come_from_a_file() {
    // A listener the PR's config points the router at, with the job's token as the key.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let hostile = format!(
        "[router]\nkind = \"openai\"\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\napi_key_env = \"GITHUB_TOKEN\"\n"
    );
    let gh = FakeGithub::start();
    let (r, _) = pr(&gh, &[], |d| write(d, "driftgate.toml", &hostile));
    let (code, _, err) = action(&r, &GATE);
    assert_eq!(code, 1, "measured with base's (semantic) router: {err}");
    assert!(
        listener.accept().is_err(),
        "no request reached the PR's host"
    );
    let rep = report(&r);
    assert_eq!(rep["router"]["kind"], "semantic");
    let got = changes(&rep);
    for key in ["router.base_url", "router.api_key_env", "router.kind"] {
        assert!(got.iter().any(|c| c.0 == key && !c.2), "{key}: {got:?}");
    }
    // Outside a pull request, such a file is refused outright, naming the key and the flag.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("driftgate.toml"), &hostile).unwrap();
    let abs = |p: &str| fixture(p).display().to_string();
    let run = cli::driftgate([
        "check",
        "--base",
        &abs(calendar::BASE),
        "--head",
        &abs(calendar::HEAD),
        "--suite",
        &abs(calendar::SUITE),
    ])
    .dir(dir.path())
    .run();
    assert_eq!(run.code, 2, "{}", run.dump());
    assert!(
        run.stderr.contains(
            "driftgate.toml: router.base_url: the router endpoint is not read from a file"
        ) && run.stderr.contains("--base-url"),
        "{}",
        run.dump()
    );
}

const REF_SUITE: &str = "cases:
  - id: book
    prompt: Book me a slot with Dr. Patel next Tuesday at 10am
    expect: schedule_appointment
    distractors: [{ref: \"decoys.json#book_room\"}]
  - id: cancel
    prompt: Cancel my appointment on Wednesday
    expect: cancel_appointment
    distractors: [{ref: \"decoys.json#book_room\"}]
";

const DECOYS: &str = r#"[{"name": "book_room", "description": "Book a meeting room.", "inputSchema": {"type": "object"}}]"#;

#[test]
fn the_files_a_suite_names_are_read_at_base() {
    let gh = FakeGithub::start();
    let (r, base) = pr(
        &gh,
        &[("mcp/refs.yaml", REF_SUITE), ("mcp/decoys.json", DECOYS)],
        |d| {
            // Only the decoy changes: it now poses as the tool under review.
            write(
                d,
                "mcp/decoys.json",
                r#"[{"name": "book_slot", "description": "Schedule a new appointment at a specific date and time.", "inputSchema": {"type": "object"}}]"#,
            );
        },
    );
    let (code, _, err) = r.driftgate(&[
        "check",
        "--tools",
        "mcp/tools.json",
        "--suite",
        "mcp/refs.yaml",
        "--format",
        "json",
        "--comment",
        "never",
    ]);
    assert!(code == 0 || code == 1, "base's decoy was found: {err}");
    let rep = report(&r);
    assert_eq!(rep["suite"]["source"], format!("{base}:mcp/refs.yaml"));
    assert_eq!(rep["suite"]["changed_in_pr"], true);
    assert!(
        changes(&rep)
            .iter()
            .any(|c| c.0.contains("a `ref:` distractor file")),
        "{:?}",
        changes(&rep)
    );
}

#[test]
fn a_suite_reached_through_a_link_the_pr_adds_is_not_measured() {
    let gh = FakeGithub::start();
    let (r, _) = pr(&gh, &[], |d| {
        write(
            d,
            "elsewhere/suite.yaml",
            "cases:\n  - {id: w1, prompt: cancel my appointment, expect: cancel_appointment}\n",
        );
        std::os::unix::fs::symlink("elsewhere", d.join("suites")).unwrap();
    });
    let (code, out, err) = action(
        &r,
        &[
            ("tools", "mcp/tools.json"),
            ("suite", "suites/suite.yaml"),
            ("github-token", TOKEN),
        ],
    );
    assert_eq!(code, 3, "incomplete, never the PR's own suite: {out}{err}");
    assert!(
        err.contains("the suite suites/suite.yaml does not exist at the base revision"),
        "{err}"
    );
}

#[test]
fn a_ref_outside_the_repository_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), DECOYS).unwrap();
    for (r, why) in [
        (secret.path().display().to_string(), "an absolute path"),
        (
            format!("../../../../../../..{}", secret.path().display()),
            "it climbs out of the repository",
        ),
    ] {
        let suite = format!(
            "cases:\n  - id: a\n    prompt: book it\n    expect: schedule_appointment\n    distractors: [{{ref: \"{r}\"}}]\n"
        );
        std::fs::write(dir.path().join("s.yaml"), suite).unwrap();
        let run = cli::driftgate([
            "check",
            "--base",
            &fixture(calendar::BASE).display().to_string(),
            "--head",
            &fixture(calendar::HEAD).display().to_string(),
            "--suite",
            "s.yaml",
            "--no-cache",
        ])
        .dir(dir.path())
        .run();
        assert_eq!(run.code, 2, "{}", run.dump());
        assert!(run.stderr.contains(why), "{why}: {}", run.dump());
    }
}

#[test]
fn a_cache_inside_the_checkout_is_not_used_in_ci() {
    let gh = FakeGithub::start();
    let (mut r, _) = pr(&gh, &[], |_| {});
    let inside = r.path(".driftgate/cache");
    r.set("DRIFTGATE_CACHE_DIR", inside.to_str().unwrap());
    let (code, _, err) = action(&r, &GATE);
    assert_eq!(code, 1, "{err}");
    assert!(!inside.exists(), "nothing read or written there");
    let rep = report(&r);
    assert!(
        rep["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("was not used: it is inside the checkout")),
        "{}",
        rep["notes"]
    );
}

/// The calendar check with the cache in `cache` and the repository secret set.
fn cached_check(cache: &Path) -> cli::Run {
    cli::driftgate(calendar::check(&["--format", "json"]))
        .cache(cache)
        .env("DRIFTGATE_KEY", "repository-secret")
        .run()
}

#[test]
fn forged_cache_answers_are_refused_counted_and_asked_again() {
    let cache = tempfile::tempdir().unwrap();
    let first = cached_check(cache.path());
    assert_eq!(first.code, 1, "{}", first.dump());
    // Someone with write access to the cache (an earlier PR's job, the PR's server) rewrites
    // every answer to the tool under review: well-formed JSON, without the key's tag.
    let mut forged = 0;
    let mut stack = vec![cache.path().join("route")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
                continue;
            }
            let bytes = std::fs::read(e.path()).unwrap();
            // The JSON body, before its tag (an untagged entry is all body).
            let mut v: Value = serde_json::from_slice(&bytes)
                .or_else(|_| serde_json::from_slice(&bytes[..bytes.len() - 32]))
                .unwrap();
            v["answer"]["name"] = "schedule_appointment".into();
            std::fs::write(e.path(), v.to_string()).unwrap();
            forged += 1;
        }
    }
    assert_eq!(forged, 72);
    let again = cached_check(cache.path());
    assert_eq!(again.code, 1, "the regression stands: {}", again.dump());
    let rep = again.json();
    assert_eq!(crate::support::stat(&rep, "head", "cache_hits"), 0);
    assert!(
        rep["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("72 cache entries failed authentication")),
        "{}",
        rep["notes"]
    );
}

/// The hostile server fixture's command, and the base file it is compared with.
fn hostile(dir: &Path) -> (String, PathBuf) {
    let server = dir.join("hostile-server.sh");
    std::fs::copy(fixture("tests/fixtures/live/hostile-server.sh"), &server).unwrap();
    let base = dir.join("base.json");
    std::fs::write(
        &base,
        r#"{"tools": [{"name": "schedule_appointment", "description": "Schedule a new appointment.", "inputSchema": {"type": "object", "properties": {}}}, {"name": "echo_token", "description": "Echo.", "inputSchema": {"type": "object", "properties": {}}}]}"#,
    )
    .unwrap();
    (format!("bash {}", server.display()), base)
}

/// `driftgate ARGS` in `dir` as an unprivileged user (root reads any process's environment, so
/// as root the test would prove nothing): `setpriv` to nobody when the tests run as root.
fn unprivileged(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> cli::Run {
    let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mut c = cli::driftgate(args).dir(dir).env("HOME", dir);
    for (k, v) in env {
        c = c.env(k, v);
    }
    if root {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        c = c.wrapped_in(
            "setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "--"],
        );
    }
    c.run()
}

#[test]
fn the_server_cannot_read_our_environment_and_what_it_echoes_is_masked_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let (server, base) = hostile(dir.path());
    let token = "ghs_jobTOKENthePRmustNeverSee0123";
    let handed = "s3cret-value-the-workflow-handed-it";
    let html = dir.path().join("r.html");
    let run = unprivileged(
        dir.path(),
        &[
            "diff",
            base.to_str().unwrap(),
            "--head-server-cmd",
            &server,
            "--server-env",
            "LEAK_TOKEN",
            "--no-embed",
            "--no-cache",
            "--format",
            "json",
            "--html-out",
            html.to_str().unwrap(),
        ],
        &[("GITHUB_TOKEN", token), ("LEAK_TOKEN", handed)],
    );
    assert!(run.code == 0 || run.code == 1, "{}", run.dump());
    let page = std::fs::read_to_string(&html).unwrap();
    for out in [&run.stdout, &run.stderr, &page] {
        assert!(!out.contains(token) && !out.contains(handed), "{out}");
    }
    let rep = run.json();
    let described = |name: &str| {
        rep["diff"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t.to_string())
            .unwrap_or_default()
    };
    // Not dumpable: /proc/<driftgate>/environ could not be read at all.
    assert!(
        described("schedule_appointment").contains("Stolen: none"),
        "{}",
        rep["diff"]
    );
    // What the workflow handed the server came back masked, with a note saying so.
    assert!(
        described("echo_token").contains("Echo: ***"),
        "{}",
        rep["diff"]
    );
    assert!(
        rep["notes"][0]
            .as_str()
            .unwrap()
            .contains("returned a credential this job holds"),
        "{}",
        rep["notes"]
    );
}

#[test]
fn nothing_the_server_leaves_running_outlives_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let (server, base) = hostile(dir.path());
    let marker = dir.path().join("still-running");
    let run = cli::driftgate([
        "diff",
        base.to_str().unwrap(),
        "--head-server-cmd",
        &server,
        "--server-env",
        &format!("DETACH_MARKER={}", marker.display()),
        "--no-embed",
        "--no-cache",
    ])
    .dir(dir.path())
    .run();
    assert!(run.code == 0 || run.code == 1, "{}", run.dump());
    // The detached child would touch the marker a second after it started.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(
        !marker.exists(),
        "a setsid'd child of the server outlived driftgate"
    );
}

#[test]
fn a_link_at_the_default_report_path_is_replaced_not_followed() {
    let gh = FakeGithub::start();
    let (r, _) = pr(&gh, &[], |_| {});
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    std::os::unix::fs::symlink(&victim, r.path("driftgate-report.json")).unwrap();
    std::os::unix::fs::symlink(&victim, r.path("driftgate-report.html")).unwrap();
    let (code, _, err) = action(&r, &GATE);
    assert_eq!(code, 1, "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    for f in ["driftgate-report.json", "driftgate-report.html"] {
        let m = std::fs::symlink_metadata(r.path(f)).unwrap();
        assert!(m.file_type().is_file(), "{f} is the report, not a link");
    }
    assert!(err.contains("was a symbolic link"), "{err}");
}

#[test]
fn a_pr_cannot_allowlist_its_own_injection() {
    let gh = FakeGithub::start();
    let scan =
        |f: &str| std::fs::read_to_string(fixture(&format!("tests/fixtures/scan/pr/{f}"))).unwrap();
    let (r, _) = pr(&gh, &[("mcp/tools.json", &scan("base.json"))], |d| {
        write(d, "mcp/tools.json", &scan("head.json"));
        // The reviewed-looking exemption, for exactly what the PR injects.
        write(d, "driftgate.toml", &scan("allow.toml"));
    });
    let (code, _, err) = action(&r, &[("tools", "mcp/tools.json"), ("github-token", TOKEN)]);
    assert_eq!(code, 1, "the injection fails the gate: {err}");
    let rep = report(&r);
    assert!(
        rep["verdict"]["reason"]
            .as_str()
            .unwrap()
            .contains("injection"),
        "{}",
        rep["verdict"]
    );
    assert!(rep["scan"]["allowed"].as_array().is_none_or(Vec::is_empty));
    assert!(
        changes(&rep).contains(&("scan.allow".into(), "weakens".into(), false)),
        "{:?}",
        changes(&rep)
    );
}

#[test]
fn a_token_the_server_returns_never_reaches_the_comment_summary_or_report() {
    // Through the Action, as the job's user: the server reads the job's token from driftgate's
    // environment when it can (root reads any process's) and returns it in a description.
    let gh = FakeGithub::start();
    let scratch = tempfile::tempdir().unwrap();
    let (server, base) = hostile(scratch.path());
    let (r, _) = pr(
        &gh,
        &[("mcp/tools.json", &std::fs::read_to_string(&base).unwrap())],
        |_| {},
    );
    let (code, out, err) = action(
        &r,
        &[
            ("tools", "mcp/tools.json"),
            ("server-cmd", &server),
            ("comment", "always"),
            ("github-token", TOKEN),
        ],
    );
    assert!(code == 0 || code == 1, "{out}{err}");
    let comments = gh.comments(7);
    assert_eq!(comments.len(), 1, "{err}");
    for (what, text) in [
        ("comment", comments[0].body.clone()),
        ("summary", r.read("summary.md")),
        ("outputs", r.read("output")),
        ("report", r.read("driftgate-report.json")),
        ("html", r.read("driftgate-report.html")),
        ("stdout", out.clone()),
        ("stderr", err.clone()),
    ] {
        assert!(!text.is_empty() || what == "stderr", "{what} was written");
        assert!(!text.contains(TOKEN), "{what} leaks the token:\n{text}");
    }
}

/// Files outside the checkout are the workflow's own (an organisation's config on the runner, a
/// suite written to a temporary directory): read as they are in a pull request too, since the PR
/// could not have changed them.
#[test]
fn the_workflows_own_files_outside_the_checkout_are_read_as_they_are() {
    let gh = FakeGithub::start();
    let (r, _) = pr(&gh, &[], |_| {});
    let own = tempfile::tempdir().unwrap();
    let cfg = own.path().join("org.toml");
    std::fs::write(&cfg, "[gate]\nfail_on = \"warning\"\n").unwrap();
    let suite = own.path().join("suite.yaml");
    std::fs::copy(fixture(calendar::SUITE), &suite).unwrap();
    let (code, _, err) = r.driftgate(&[
        "check",
        "--tools",
        "mcp/tools.json",
        "--config",
        cfg.to_str().unwrap(),
        "--suite",
        suite.to_str().unwrap(),
        "--comment",
        "never",
    ]);
    assert_eq!(code, 1, "{err}");
    let rep = report(&r);
    assert_eq!(rep["thresholds"]["fail_on"], "warning");
    assert_eq!(rep["suite"]["cases"], 36);
    assert_eq!(rep["suite"]["changed_in_pr"], false);
    assert!(rep.get("policy").is_none(), "{}", rep["policy"]);
}
