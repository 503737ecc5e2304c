//! One comment per workflow and job, found by its hidden first line and updated in place, so a
//! PR carries a single driftgate comment that always shows the latest run.

use super::CommentMode;
use super::api::{Api, ApiError, Comment};
use crate::gate::Status;
use crate::report::Report;
use crate::report::render::markdown::{self, Options};

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Created(String),
    Updated(String),
    Unchanged(String),
    Skipped(&'static str),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Created(url) => write!(f, "commented {url}"),
            Outcome::Updated(url) => write!(f, "updated the comment {url}"),
            Outcome::Unchanged(url) => write!(f, "the comment {url} already says this"),
            Outcome::Skipped(why) => write!(f, "no comment: {why}"),
        }
    }
}

/// Whose comments may be ours: what the token is, as far as GitHub tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Author {
    /// A token with a user (a personal access token): only that login's comments.
    Login(String),
    /// A token without one (`GITHUB_TOKEN`, an app installation token): only bot accounts, which
    /// no person can post as.
    Bot,
}

/// Our comment among the PR's: its first line is exactly the marker *and* it was written by us.
/// Anyone can paste the marker into a comment; adopting theirs would let them have the bot edit
/// it (and, where our token may not edit it, keep our comment from being posted at all). With a
/// bot token, `github-actions[bot]`'s own comment is preferred over other bots'.
pub fn find<'a>(comments: &'a [Comment], marker: &str, author: &Author) -> Option<&'a Comment> {
    let ours = |c: &&Comment| {
        c.body
            .as_deref()
            .and_then(|b| b.lines().next())
            .is_some_and(|first| first.trim() == marker)
    };
    let by_us = |c: &&Comment| written_by(c.user.as_ref(), author);
    let mut candidates = comments.iter().filter(ours).filter(by_us);
    match author {
        Author::Login(_) => candidates.next(),
        Author::Bot => {
            let all: Vec<&Comment> = candidates.collect();
            all.iter()
                .find(|c| c.user.as_ref().is_some_and(|u| u.login == ACTIONS_BOT))
                .or(all.first())
                .copied()
        }
    }
}

/// Whether a comment by `user` may be ours: that login's (a personal token) or a bot's.
pub fn written_by(user: Option<&super::api::User>, author: &Author) -> bool {
    let Some(u) = user else {
        return false;
    };
    match author {
        Author::Login(login) => u.login.eq_ignore_ascii_case(login),
        Author::Bot => u.kind.as_deref() == Some("Bot"),
    }
}

/// The account `GITHUB_TOKEN` writes as.
pub const ACTIONS_BOT: &str = "github-actions[bot]";

/// Did this earlier comment of ours report a failure (so a pass now "now passes")?
fn was_failing(body: &str) -> bool {
    body.lines().take(3).any(|l| {
        l.starts_with(markdown::verdict_prefix(Status::Fail))
            || l.starts_with(markdown::verdict_prefix(Status::Inconclusive))
            || l.starts_with(markdown::verdict_prefix(Status::Incomplete))
    })
}

/// Should a new comment be created for this report under `mode`? An existing one is always
/// updated (except under `never`), so a comment that said "fail" comes to say "now passes".
pub fn wants_new(mode: CommentMode, report: &Report) -> bool {
    let failing = report.verdict.status != Status::Pass;
    match mode {
        CommentMode::Never => false,
        CommentMode::Always => true,
        CommentMode::OnFailure => failing,
        // A clean PR (passes and no tool definition changed) gets no comment.
        CommentMode::Auto => failing || !report.diff.tools.is_empty(),
    }
}

pub async fn upsert(
    api: &Api<'_>,
    repo: &str,
    pr: u64,
    marker: &str,
    report: &Report,
    mode: CommentMode,
    links: &super::Links,
) -> Result<Outcome, ApiError> {
    if mode == CommentMode::Never {
        return Ok(Outcome::Skipped("--comment never"));
    }
    let author = match api.whoami().await? {
        Some(login) => Author::Login(login),
        None => Author::Bot,
    };
    let comments = api.list_comments(repo, pr).await?;
    let existing = find(&comments, marker, &author);
    let body = |now_passes: bool| {
        markdown::render(
            report,
            &Options {
                marker: Some(marker.to_string()),
                link: links.report.clone(),
                artifact: links.artifact.clone(),
                now_passes,
                ..Options::default()
            },
        )
    };
    match existing {
        Some(c) => {
            let old = c.body.as_deref().unwrap_or_default();
            let new = body(was_failing(old));
            let url = c.html_url.clone().unwrap_or_default();
            if new == old {
                return Ok(Outcome::Unchanged(url));
            }
            let updated = api.update_comment(repo, c.id, &new).await?;
            Ok(Outcome::Updated(updated.html_url.unwrap_or(url)))
        }
        None if wants_new(mode, report) => {
            let c = api.create_comment(repo, pr, &body(false)).await?;
            Ok(Outcome::Created(c.html_url.unwrap_or_default()))
        }
        None => Ok(Outcome::Skipped(
            "nothing to report on this PR (passes, no tool changed) and no earlier comment to update",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::github::api::User;

    fn c(id: u64, body: &str, login: &str, kind: &str) -> Comment {
        Comment {
            id,
            body: Some(body.into()),
            user: Some(User {
                login: login.into(),
                kind: Some(kind.into()),
            }),
            html_url: None,
        }
    }

    #[test]
    fn adopts_only_our_own_marker_comment() {
        let m = "<!-- driftgate:ci:gate -->";
        let comments = vec![
            c(1, &format!("quoting you:\n{m}"), ACTIONS_BOT, "Bot"),
            c(2, &format!("{m}\nspoofed by a user"), "mallory", "User"),
            c(3, &format!("{m}\nanother bot"), "other[bot]", "Bot"),
            c(4, &format!("{m}\n### ✅ driftgate"), ACTIONS_BOT, "Bot"),
        ];
        let id = |cs: &[Comment], a: &Author| find(cs, m, a).map(|c| c.id);
        // A bot token: bots only, github-actions[bot] first.
        assert_eq!(id(&comments, &Author::Bot), Some(4));
        assert_eq!(id(&comments[..3], &Author::Bot), Some(3));
        // The user's pasted marker is never adopted, even when it is the only one.
        assert_eq!(id(&comments[..2], &Author::Bot), None);
        // A personal token: that login's comment only.
        assert_eq!(id(&comments, &Author::Login("MALLORY".into())), Some(2));
        assert_eq!(id(&comments, &Author::Login("octocat".into())), None);
        // The marker must be the first line.
        assert_eq!(id(&comments[..1], &Author::Bot), None);
        assert!(was_failing("<!-- m -->\n### ❌ driftgate check: **fail**"));
        assert!(!was_failing("<!-- m -->\n### ✅ driftgate check: **pass**"));
    }
}
