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

/// Our comment among the PR's: its first line is exactly the marker. If a user pasted the marker
/// into a comment of their own, the bot's comment still wins.
pub fn find<'a>(comments: &'a [Comment], marker: &str) -> Option<&'a Comment> {
    let ours = |c: &&Comment| {
        c.body
            .as_deref()
            .and_then(|b| b.lines().next())
            .is_some_and(|first| first.trim() == marker)
    };
    let is_bot = |c: &&Comment| {
        c.user
            .as_ref()
            .is_some_and(|u| u.kind.as_deref() == Some("Bot"))
    };
    comments
        .iter()
        .filter(ours)
        .find(is_bot)
        .or_else(|| comments.iter().find(ours))
}

/// Did this earlier comment of ours report a failure (so a pass now "now passes")?
fn was_failing(body: &str) -> bool {
    body.lines().take(3).any(|l| {
        l.starts_with(markdown::verdict_prefix(Status::Fail))
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
    link: Option<String>,
) -> Result<Outcome, ApiError> {
    if mode == CommentMode::Never {
        return Ok(Outcome::Skipped("--comment never"));
    }
    let comments = api.list_comments(repo, pr).await?;
    let existing = find(&comments, marker);
    let body = |now_passes: bool| {
        markdown::render(
            report,
            &Options {
                marker: Some(marker.to_string()),
                link: link.clone(),
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

    fn c(id: u64, body: &str, kind: &str) -> Comment {
        Comment {
            id,
            body: Some(body.into()),
            user: Some(User {
                login: "x".into(),
                kind: Some(kind.into()),
            }),
            html_url: None,
        }
    }

    #[test]
    fn finds_the_bots_marker_comment_on_the_first_line_only() {
        let m = "<!-- driftgate:ci:gate -->";
        let comments = vec![
            c(1, &format!("quoting you:\n{m}"), "Bot"),
            c(2, &format!("{m}\nspoofed by a user"), "User"),
            c(3, &format!("{m}\n### ✅ driftgate"), "Bot"),
        ];
        assert_eq!(find(&comments, m).map(|c| c.id), Some(3));
        assert_eq!(find(&comments[..2], m).map(|c| c.id), Some(2));
        assert!(find(&comments[..1], m).is_none());
        assert!(was_failing("<!-- m -->\n### ❌ driftgate check: **fail**"));
        assert!(!was_failing("<!-- m -->\n### ✅ driftgate check: **pass**"));
    }
}
