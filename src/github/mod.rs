//! GitHub Actions integration: the sticky PR comment, the job summary, step outputs and
//! annotations, all rendered from the one `Report`. Nothing here changes the gate's exit code:
//! a failed API call is reported (naming the call) and the verdict stands.

pub mod api;
pub mod event;
pub mod files;
pub mod sticky;

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::error::{Error, Result, exit};
use crate::report::markdown::{self, Options};
use crate::report::{GithubContext, Report, annotations, escape::workflow_data};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CommentMode {
    /// Comment when the gate fails or a tool changed; update an earlier comment in any case.
    Auto,
    /// Comment on every run, even a PR that changed no tool.
    Always,
    /// Comment only when the gate fails or is incomplete; update an earlier comment in any case.
    OnFailure,
    /// Never comment.
    Never,
}

/// Flags shared by `check` and `diff`.
#[derive(Debug, Clone, Args)]
pub struct GithubArgs {
    /// Act as a GitHub Actions step: PR comment, job summary, step outputs, report file
    /// [default: on when GITHUB_ACTIONS=true].
    #[arg(long)]
    pub github: bool,
    /// Stay a plain CLI even inside GitHub Actions.
    #[arg(long, conflicts_with = "github")]
    pub no_github: bool,
    /// When to post the sticky PR comment.
    #[arg(long, value_enum, default_value = "auto")]
    pub comment: CommentMode,
    /// Environment variable holding the GitHub token.
    #[arg(long, value_name = "NAME", default_value = "GITHUB_TOKEN")]
    pub github_token_env: String,
    /// Write the JSON report here (in GitHub mode default: driftgate-report.json), e.g. for a
    /// `workflow_run` job to post on a fork PR.
    #[arg(long, value_name = "FILE")]
    pub report_path: Option<PathBuf>,
    /// Link to the full report in the comment [default: this workflow run, where the report
    /// artifact is listed].
    #[arg(long, value_name = "URL")]
    pub report_url: Option<String>,
    /// Print GitHub annotations (`::error file=…,line=…::…`) to stdout.
    #[arg(long)]
    pub annotations: bool,
}

impl GithubArgs {
    pub fn enabled(&self) -> bool {
        self.github || (!self.no_github && env("GITHUB_ACTIONS").as_deref() == Some("true"))
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The default report file in GitHub mode: in the workspace, so `actions/upload-artifact` sees it
/// from a Docker action as well as from a plain step.
pub const DEFAULT_REPORT_PATH: &str = "driftgate-report.json";

fn run_url() -> Option<String> {
    Some(format!(
        "{}/{}/actions/runs/{}",
        env("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into()),
        env("GITHUB_REPOSITORY")?,
        env("GITHUB_RUN_ID")?
    ))
}

/// The run's GitHub context from the environment and the event payload.
pub fn context() -> Option<GithubContext> {
    let repository = env("GITHUB_REPOSITORY")?;
    let ev = event::load();
    let pr = ev.as_ref().and_then(event::pull_request);
    Some(GithubContext {
        repository,
        pull_request: pr.as_ref().map(|p| p.number),
        base_sha: pr.as_ref().and_then(|p| p.base_sha.clone()),
        head_sha: pr.as_ref().and_then(|p| p.head_sha.clone()),
        fork: pr.as_ref().is_some_and(|p| p.fork),
        workflow: env("GITHUB_WORKFLOW").unwrap_or_else(|| "workflow".into()),
        job: env("GITHUB_JOB").unwrap_or_else(|| "job".into()),
        run_url: run_url(),
    })
}

/// Fill `report.github` when running as an Actions step (before the report is rendered, so the
/// JSON carries it for the fork commenter).
pub fn attach(report: &mut Report, args: &GithubArgs) {
    if args.enabled() {
        report.github = context();
    }
}

/// A workflow command (`::notice::…`, `::warning::…`) on stdout, where the runner reads them.
fn workflow_command(level: &str, message: &str) {
    println!("::{level}::{}", workflow_data(message));
}

/// Everything after the report is rendered: annotations, report file, job summary, outputs and the
/// PR comment. Problems are printed and never change the exit code.
pub async fn publish(report: &Report, args: &GithubArgs) {
    if args.annotations {
        print!("{}", annotations::render(report));
    }
    let on = args.enabled();
    let report_path = args
        .report_path
        .clone()
        .or_else(|| on.then(|| PathBuf::from(DEFAULT_REPORT_PATH)));
    let mut written = None;
    if let Some(path) = &report_path {
        match crate::cli::write_atomic(path, &crate::report::json::render(report)) {
            Ok(()) => written = Some(path.clone()),
            Err(e) => eprintln!("driftgate: could not write the report file: {e}"),
        }
    }
    if !on {
        return;
    }
    let link = args.report_url.clone().or_else(run_url);
    if let Some(path) = env("GITHUB_STEP_SUMMARY") {
        if let Err(e) = files::append_summary(Path::new(&path), report, link.clone()) {
            eprintln!("driftgate: could not write the job summary: {e}");
        }
    }
    if let Some(path) = env("GITHUB_OUTPUT") {
        let outputs = files::outputs(report, written.as_deref());
        if let Err(e) = files::write_outputs(Path::new(&path), &outputs) {
            eprintln!("driftgate: could not write the step outputs: {e}");
        }
    }
    comment(report, args, link, written.as_deref()).await;
}

async fn comment(report: &Report, args: &GithubArgs, link: Option<String>, written: Option<&Path>) {
    if args.comment == CommentMode::Never {
        return;
    }
    let Some(ctx) = &report.github else { return };
    let Some(pr) = ctx.pull_request else {
        eprintln!(
            "driftgate: not a pull_request event; no PR comment (the job summary has the report)"
        );
        return;
    };
    let fallback = |why: &str| {
        let file = match written {
            Some(p) => format!(
                " The report is in {}; a workflow_run job can post it with `driftgate comment --report FILE` (see the README).",
                p.display()
            ),
            None => String::new(),
        };
        workflow_command(
            "notice",
            &format!(
                "driftgate could not comment on PR #{pr}: {why}. The verdict is in the job summary.{file}"
            ),
        );
    };
    // A fork's `pull_request` run gets a read-only token; `pull_request_target` runs with the
    // base repository's token and may comment.
    if ctx.fork && env("GITHUB_EVENT_NAME").as_deref() != Some("pull_request_target") {
        fallback("it comes from a fork, so the token is read-only");
        return;
    }
    let Some(token) = env(&args.github_token_env) else {
        fallback(&format!("no token in ${}", args.github_token_env));
        return;
    };
    let marker = markdown::marker(&ctx.workflow, &ctx.job);
    match post(
        &ctx.repository,
        pr,
        &token,
        &marker,
        report,
        args.comment,
        link,
    )
    .await
    {
        Ok(outcome) => eprintln!("driftgate: PR #{pr}: {outcome}"),
        Err(e) if e.is_forbidden() => fallback(&format!(
            "the token may not write comments (HTTP {}; grant `pull-requests: write`)",
            e.status.unwrap_or(0)
        )),
        Err(e) => {
            eprintln!("driftgate: {e}");
            workflow_command(
                "warning",
                &format!("driftgate: {e}. The verdict is unaffected."),
            );
        }
    }
}

fn api_url() -> String {
    env("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into())
}

async fn post(
    repo: &str,
    pr: u64,
    token: &str,
    marker: &str,
    report: &Report,
    mode: CommentMode,
    link: Option<String>,
) -> std::result::Result<sticky::Outcome, api::ApiError> {
    api::check_repo(repo)
        .map_err(|message| api::ApiError::new("read GITHUB_REPOSITORY", None, message))?;
    let api = api::Api::new(&api_url(), token)?;
    sticky::upsert(&api, repo, pr, marker, report, mode, link).await
}

/// `driftgate comment`: post a report written by an earlier job.
#[derive(Debug, Clone, Args)]
pub struct CommentArgs {
    /// The JSON report (`--report-path` / `--format json` of `check` or `diff`).
    #[arg(long, value_name = "FILE")]
    pub report: PathBuf,
    /// Pull request number [default: the report's].
    #[arg(long)]
    pub pr: Option<u64>,
    /// When to post [default: auto]; see `check --comment`.
    #[arg(long, value_enum, default_value = "auto")]
    pub comment: CommentMode,
    /// Environment variable holding the GitHub token.
    #[arg(long, value_name = "NAME", default_value = "GITHUB_TOKEN")]
    pub github_token_env: String,
    /// Link to the full report [default: the run that made the report].
    #[arg(long, value_name = "URL")]
    pub report_url: Option<String>,
}

/// Post a report from an artifact. The report may come from a fork's run, so nothing in it is
/// trusted to pick where to write: the repository is this run's, and under a `workflow_run`
/// event the PR must be the one whose head commit the reported run tested.
pub async fn run_comment(a: CommentArgs) -> Result<i32> {
    let text = std::fs::read_to_string(&a.report).map_err(|e| Error::io(&a.report, e))?;
    let report = Report::from_json(&text, &a.report.display().to_string())?;
    let repo = env("GITHUB_REPOSITORY").ok_or_else(|| {
        Error::Usage(
            "driftgate comment runs in GitHub Actions: GITHUB_REPOSITORY is not set".into(),
        )
    })?;
    api::check_repo(&repo).map_err(Error::Usage)?;
    let ctx = report.github.clone();
    let pr =
        a.pr.or(ctx.as_ref().and_then(|c| c.pull_request))
            .ok_or_else(|| {
                Error::Usage(format!(
                    "{}: no pull request number in the report; pass --pr N",
                    a.report.display()
                ))
            })?;
    let token = env(&a.github_token_env)
        .ok_or_else(|| Error::Usage(format!("no GitHub token in ${}", a.github_token_env)))?;
    let api = api::Api::new(&api_url(), &token).map_err(|e| Error::Usage(e.to_string()))?;
    let run = event::load().as_ref().and_then(event::workflow_run);
    let run_page = run.as_ref().and_then(|r| r.html_url.clone());
    if let Some(run) = run {
        let reported = ctx.as_ref().and_then(|c| c.head_sha.clone());
        if reported.as_deref() != Some(run.head_sha.as_str()) {
            return Err(Error::Usage(format!(
                "{}: the report is for head {} but the workflow run tested {}; refusing to post it",
                a.report.display(),
                reported.as_deref().unwrap_or("(none)"),
                run.head_sha
            )));
        }
        let pull = match api.pull(&repo, pr).await {
            Ok(p) => p,
            Err(e) => {
                eprintln!("driftgate: {e}");
                return Ok(exit::INCOMPLETE);
            }
        };
        let head = pull.pointer("/head/sha").and_then(|v| v.as_str());
        if head != Some(run.head_sha.as_str()) {
            println!(
                "::notice::{}",
                workflow_data(&format!(
                    "PR #{pr} has moved on from {} (now {}); not posting this run's report",
                    run.head_sha,
                    head.unwrap_or("unknown")
                ))
            );
            return Ok(exit::PASS);
        }
    }
    let (workflow, job) = match &ctx {
        Some(c) => (c.workflow.clone(), c.job.clone()),
        None => (
            env("GITHUB_WORKFLOW").unwrap_or_else(|| "workflow".into()),
            env("GITHUB_JOB").unwrap_or_else(|| "job".into()),
        ),
    };
    let marker = markdown::marker(&workflow, &job);
    // The run page from GitHub's own event payload, not the report's (which a fork could write).
    let link = a.report_url.clone().or(run_page).or_else(run_url);
    match sticky::upsert(&api, &repo, pr, &marker, &report, a.comment, link).await {
        Ok(outcome) => {
            eprintln!("driftgate: PR #{pr}: {outcome}");
            Ok(exit::PASS)
        }
        Err(e) => {
            eprintln!("driftgate: {e}");
            Ok(exit::INCOMPLETE)
        }
    }
}

/// Markdown for the job summary, sized to what is left of GitHub's 1 MiB.
pub fn summary_markdown(report: &Report, link: Option<String>, already: usize) -> String {
    markdown::render(
        report,
        &Options {
            marker: None,
            link,
            limit: markdown::SUMMARY_LIMIT.saturating_sub(already).max(4096),
            limit_name: "job summary",
            now_passes: false,
        },
    )
}
