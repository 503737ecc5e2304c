//! GitHub Actions integration: the sticky PR comment, the job summary, step outputs and
//! annotations, all rendered from the one `Report`. Nothing here changes the gate's exit code:
//! a failed API call is reported (naming the call) and the verdict stands.
//!
//! The runner's environment arrives as `Actions` (read by `app`), so this module never reads
//! the process environment itself.

pub mod api;
pub mod event;
pub mod files;
pub mod sticky;
pub mod suggest;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::choice::Choice;
use crate::console::Console;
use crate::error::{Error, Result, exit};
use crate::http::secret::Secret;
use crate::report::escape::workflow_data;
use crate::report::render::annotations;
use crate::report::render::markdown::{self, Options};
use crate::report::{GithubContext, Report};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

impl Choice for CommentMode {
    const ALL: &'static [CommentMode] = &[
        CommentMode::Auto,
        CommentMode::Always,
        CommentMode::OnFailure,
        CommentMode::Never,
    ];
    fn name(self) -> &'static str {
        match self {
            CommentMode::Auto => "auto",
            CommentMode::Always => "always",
            CommentMode::OnFailure => "on-failure",
            CommentMode::Never => "never",
        }
    }
    fn help(self) -> &'static str {
        match self {
            CommentMode::Auto => {
                "Comment when the gate fails or a tool changed; update an earlier comment in any case"
            }
            CommentMode::Always => "Comment on every run, even a PR that changed no tool",
            CommentMode::OnFailure => {
                "Comment only when the gate fails or is incomplete; update an earlier comment in any case"
            }
            CommentMode::Never => "Never comment",
        }
    }
}

/// The GitHub Actions runner's environment, as far as driftgate reads it.
#[derive(Debug, Clone, Default)]
pub struct Actions {
    /// `GITHUB_ACTIONS=true`.
    pub active: bool,
    /// `GITHUB_REPOSITORY`: "owner/name".
    pub repository: Option<String>,
    pub event_name: Option<String>,
    pub event_path: Option<PathBuf>,
    pub workflow: Option<String>,
    pub job: Option<String>,
    pub server_url: Option<String>,
    pub run_id: Option<String>,
    pub api_url: Option<String>,
    pub step_summary: Option<PathBuf>,
    pub output: Option<PathBuf>,
    /// The longest rate-limit wait (`DRIFTGATE_GITHUB_MAX_WAIT`).
    pub max_wait: Duration,
}

impl Actions {
    fn run_url(&self) -> Option<String> {
        Some(format!(
            "{}/{}/actions/runs/{}",
            self.server_url.as_deref().unwrap_or("https://github.com"),
            self.repository.as_deref()?,
            self.run_id.as_deref()?
        ))
    }

    pub(crate) fn api_url(&self) -> &str {
        self.api_url.as_deref().unwrap_or("https://api.github.com")
    }

    fn workflow(&self) -> String {
        self.workflow.clone().unwrap_or_else(|| "workflow".into())
    }

    fn job(&self) -> String {
        self.job.clone().unwrap_or_else(|| "job".into())
    }

    fn event(&self) -> Option<serde_json::Value> {
        event::load(self.event_path.as_deref())
    }

    /// The run's GitHub context from the environment and the event payload.
    pub fn context(&self) -> Option<GithubContext> {
        let repository = self.repository.clone()?;
        let ev = self.event();
        let pr = ev.as_ref().and_then(event::pull_request);
        Some(GithubContext {
            repository,
            pull_request: pr.as_ref().map(|p| p.number),
            base_sha: pr.as_ref().and_then(|p| p.base_sha.clone()),
            head_sha: pr.as_ref().and_then(|p| p.head_sha.clone()),
            fork: pr.as_ref().is_some_and(|p| p.fork),
            workflow: self.workflow(),
            job: self.job(),
            run_url: self.run_url(),
        })
    }
}

/// What to publish after `check` or `diff`, resolved from flags by `app`.
#[derive(Debug, Clone)]
pub struct Publish {
    /// Act as an Actions step: PR comment, job summary, step outputs, report file.
    pub enabled: bool,
    pub comment: CommentMode,
    /// The token (from the variable named by `token_env`), if it is set.
    pub token: Option<Secret>,
    pub token_env: String,
    /// Where to write the JSON report (in GitHub mode default: `DEFAULT_REPORT_PATH`).
    pub report_path: Option<PathBuf>,
    /// Link to the full report in the comment [default: this workflow run].
    pub report_url: Option<String>,
    /// The artifact the Action uploads the reports in (named in the comment), if it does.
    pub report_artifact: Option<String>,
    /// Print annotations to stdout.
    pub annotations: bool,
}

/// Where the comment and summary point for more: the full report's URL or path, and the artifact
/// holding the HTML report.
#[derive(Debug, Clone, Default)]
pub struct Links {
    pub report: Option<String>,
    pub artifact: Option<String>,
}

/// The HTML report written beside the JSON one in GitHub mode (`driftgate-report.html`).
pub fn html_path(json: &Path) -> PathBuf {
    json.with_extension("html")
}

/// The default report file in GitHub mode: in the workspace, so `actions/upload-artifact` sees it
/// from a Docker action as well as from a plain step.
pub const DEFAULT_REPORT_PATH: &str = "driftgate-report.json";

/// Fill `report.github` when running as an Actions step (before the report is rendered, so the
/// JSON carries it for the fork commenter).
pub fn attach(report: &mut Report, publish: &Publish, actions: &Actions) {
    if publish.enabled {
        report.github = actions.context();
    }
}

/// A workflow command (`::notice::…`, `::warning::…`) on stdout, where the runner reads them.
fn workflow_command(console: &dyn Console, level: &str, message: &str) {
    console.out(&format!("::{level}::{}\n", workflow_data(message)));
}

/// Everything after the report is rendered: annotations, report file, job summary, outputs and the
/// PR comment. Problems are told to `console` and never change the exit code.
pub async fn publish(report: &Report, p: &Publish, actions: &Actions, console: &dyn Console) {
    if p.annotations {
        console.out(&annotations::render(report));
    }
    let report_path = p
        .report_path
        .clone()
        .or_else(|| p.enabled.then(|| PathBuf::from(DEFAULT_REPORT_PATH)));
    // The default paths are in the PR's checkout, where the PR may have committed a link to a
    // file outside it: a link there is replaced, never followed. (A path the workflow names is
    // the workflow's to choose.)
    let own_choice = p.report_path.is_some();
    let unlink = |path: &Path| {
        if !own_choice && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        {
            console.note(&format!(
                "driftgate: {} was a symbolic link (the pull request's?); it was replaced by the report, not followed",
                path.display()
            ));
            let _ = std::fs::remove_file(path);
        }
    };
    let mut written = None;
    if let Some(path) = &report_path {
        unlink(path);
        match crate::fs::write_atomic(path, crate::report::render::json::render(report).as_bytes())
        {
            Ok(()) => written = Some(path.clone()),
            Err(e) => console.note(&format!(
                "driftgate: could not write the report file: {}: {e}",
                path.display()
            )),
        }
    }
    if !p.enabled {
        return;
    }
    let mut html_written = None;
    if let Some(json) = &report_path {
        let path = html_path(json);
        unlink(&path);
        let page = crate::report::render::html::render(report);
        match crate::fs::write_atomic(&path, page.as_bytes()) {
            Ok(()) => html_written = Some(path),
            Err(e) => console.note(&format!(
                "driftgate: could not write the HTML report: {}: {e}",
                path.display()
            )),
        }
    }
    let link = Links {
        report: p.report_url.clone().or_else(|| actions.run_url()),
        artifact: p.report_artifact.clone(),
    };
    if let Some(path) = &actions.step_summary
        && let Err(e) = files::append_summary(path, report, &link)
    {
        console.note(&format!("driftgate: could not write the job summary: {e}"));
    }
    if let Some(path) = &actions.output {
        let outputs = files::outputs(report, written.as_deref(), html_written.as_deref());
        if let Err(e) = files::write_outputs(path, &outputs) {
            console.note(&format!("driftgate: could not write the step outputs: {e}"));
        }
    }
    comment(report, p, actions, link, written.as_deref(), console).await;
}

async fn comment(
    report: &Report,
    p: &Publish,
    actions: &Actions,
    link: Links,
    written: Option<&Path>,
    console: &dyn Console,
) {
    if p.comment == CommentMode::Never {
        return;
    }
    let Some(ctx) = &report.github else { return };
    let Some(pr) = ctx.pull_request else {
        console.note(
            "driftgate: not a pull_request event; no PR comment (the job summary has the report)",
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
            console,
            "notice",
            &format!(
                "driftgate could not comment on PR #{pr}: {why}. The verdict is in the job summary.{file}"
            ),
        );
    };
    // A fork's `pull_request` run gets a read-only token; `pull_request_target` runs with the
    // base repository's token and may comment.
    if ctx.fork && actions.event_name.as_deref() != Some("pull_request_target") {
        fallback("it comes from a fork, so the token is read-only");
        return;
    }
    let Some(token) = &p.token else {
        fallback(&format!("no token in ${}", p.token_env));
        return;
    };
    let marker = markdown::marker(&ctx.workflow, &ctx.job);
    let posted = async {
        api::check_repo(&ctx.repository)
            .map_err(|message| api::ApiError::new("read GITHUB_REPOSITORY", None, message))?;
        let api = api::Api::new(actions.api_url(), token, actions.max_wait, console)?;
        sticky::upsert(&api, &ctx.repository, pr, &marker, report, p.comment, &link).await
    };
    match posted.await {
        Ok(outcome) => console.note(&format!("driftgate: PR #{pr}: {outcome}")),
        Err(e) if e.is_forbidden() => fallback(&format!(
            "the token may not write comments (HTTP {}; grant `pull-requests: write`)",
            e.status.unwrap_or(0)
        )),
        Err(e) => {
            console.note(&format!("driftgate: {e}"));
            workflow_command(
                console,
                "warning",
                &format!("driftgate: {e}. The verdict is unaffected."),
            );
        }
    }
}

/// `driftgate comment`: what to post, resolved from flags by `app`.
#[derive(Debug, Clone)]
pub struct CommentRequest {
    /// Where the report came from, for messages.
    pub source: String,
    /// Pull request number [default: the report's].
    pub pr: Option<u64>,
    pub mode: CommentMode,
    pub token: Option<Secret>,
    pub token_env: String,
    /// Link to the full report [default: the run that made the report].
    pub report_url: Option<String>,
}

/// Post a report from an artifact. The report may come from a fork's run, so nothing in it is
/// trusted to pick where to write: the repository is this run's, and under a `workflow_run`
/// event the PR must be the one whose head commit the reported run tested.
pub async fn post_report(
    report: &Report,
    a: &CommentRequest,
    actions: &Actions,
    console: &dyn Console,
) -> Result<i32> {
    let repo = actions.repository.clone().ok_or_else(|| {
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
                    a.source
                ))
            })?;
    let token = a
        .token
        .as_ref()
        .ok_or_else(|| Error::Usage(format!("no GitHub token in ${}", a.token_env)))?;
    let api = api::Api::new(actions.api_url(), token, actions.max_wait, console)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let run = actions.event().as_ref().and_then(event::workflow_run);
    let run_page = run.as_ref().and_then(|r| r.html_url.clone());
    if let Some(run) = run {
        let reported = ctx.as_ref().and_then(|c| c.head_sha.clone());
        if reported.as_deref() != Some(run.head_sha.as_str()) {
            return Err(Error::Usage(format!(
                "{}: the report is for head {} but the workflow run tested {}; refusing to post it",
                a.source,
                reported.as_deref().unwrap_or("(none)"),
                run.head_sha
            )));
        }
        let pull = match api.pull(&repo, pr).await {
            Ok(p) => p,
            Err(e) => {
                console.note(&format!("driftgate: {e}"));
                return Ok(exit::INCOMPLETE);
            }
        };
        let head = pull.pointer("/head/sha").and_then(|v| v.as_str());
        if head != Some(run.head_sha.as_str()) {
            workflow_command(
                console,
                "notice",
                &format!(
                    "PR #{pr} has moved on from {} (now {}); not posting this run's report",
                    run.head_sha,
                    head.unwrap_or("unknown")
                ),
            );
            return Ok(exit::PASS);
        }
    }
    let (workflow, job) = match &ctx {
        Some(c) => (c.workflow.clone(), c.job.clone()),
        None => (actions.workflow(), actions.job()),
    };
    let marker = markdown::marker(&workflow, &job);
    // The run page from GitHub's own event payload, not the report's (which a fork could write).
    let link = Links {
        report: a
            .report_url
            .clone()
            .or(run_page)
            .or_else(|| actions.run_url()),
        artifact: None,
    };
    match sticky::upsert(&api, &repo, pr, &marker, report, a.mode, &link).await {
        Ok(outcome) => {
            console.note(&format!("driftgate: PR #{pr}: {outcome}"));
            Ok(exit::PASS)
        }
        Err(e) => {
            console.note(&format!("driftgate: {e}"));
            Ok(exit::INCOMPLETE)
        }
    }
}

/// Markdown for the job summary, sized to what is left of GitHub's 1 MiB.
pub fn summary_markdown(report: &Report, links: &Links, already: usize) -> String {
    markdown::render(
        report,
        &Options {
            marker: None,
            link: links.report.clone(),
            limit: markdown::SUMMARY_LIMIT.saturating_sub(already).max(4096),
            limit_name: "job summary",
            now_passes: false,
            artifact: links.artifact.clone(),
        },
    )
}
