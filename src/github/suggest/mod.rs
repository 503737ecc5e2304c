//! `fix`'s offered rewrites as pull-request review comments, each with a ```suggestion block on
//! the exact line of the tools file that holds the description — or, when head is a live server,
//! on the string literal of its source that holds it (`source`) — so the author applies it with
//! one click. One comment per tool (found by its marker and its author, as the sticky comment
//! is), updated on re-run, moved when the line moved, removed when the tool no longer has an
//! offer (the gate passes, or nothing beat head).
//!
//! The suggested line goes through the one escape path (`report::escape::md_fence`) like every
//! other untrusted text; so that the path has nothing to change in it — which would change the
//! file the author commits — the new description is written with hidden characters and comment
//! delimiters as `\u` escapes (the same value), and a line whose other parts hold any is not
//! suggested on.

pub mod source;

use super::api::{Anchor, Api, ApiError, ReviewComment};
use super::sticky::{Author, written_by};
use crate::report::escape::{md_code, md_fence};
use crate::report::fix::{FixReport, ToolFix};
use crate::source::Loaded;

/// The line that holds a description, and that line rewritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// 1-based; the last line when the description spans several.
    pub line: u64,
    /// The first line, only when the description spans several (a source literal): the
    /// suggestion replaces `start_line..=line` with the one line of `replacement`.
    pub start_line: Option<u64>,
    pub replacement: String,
}

/// The string-literal syntax a new description is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Json,
    /// YAML's double-quoted scalar.
    Yaml,
    Python,
    /// JavaScript and TypeScript.
    Js,
}

/// `s` as a double-quoted string literal of `style` that shows nothing hidden and no comment
/// delimiter: those are `\u` escapes, which decode to the same value. JSON's escapes are valid
/// in all four; only an astral hidden character differs: a surrogate pair in JSON, `\U` in YAML
/// and Python (where a surrogate pair would be two characters), `\u{…}` in JS.
fn literal(s: &str, style: Style) -> String {
    let json = serde_json::to_string(s).expect("a string serialises");
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        let hidden = crate::text::unicode::hidden(c).is_some();
        match c {
            _ if hidden && (c as u32) > 0xFFFF && style != Style::Json => match style {
                Style::Js => out.push_str(&format!("\\u{{{:X}}}", c as u32)),
                _ => out.push_str(&format!("\\U{:08X}", c as u32)),
            },
            _ if hidden => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            _ => out.push(c),
        }
    }
    out.replace("<!--", "\\u003c!--")
        .replace("-->", "--\\u003e")
}

/// Whether `replacement` passes the escape path unchanged: what the path would change is a line
/// the author did not mean to commit.
fn suggestable(replacement: &str) -> Result<(), String> {
    let fenced = md_fence("suggestion", replacement);
    if fenced.contains(&format!("\n{replacement}\n")) {
        Ok(())
    } else {
        Err(
            "the description's line holds hidden characters or comment delimiters outside the description itself"
                .into(),
        )
    }
}

/// A JSON string literal at the start of `s`: its value and byte length.
fn json_string(s: &str) -> Option<(String, usize)> {
    let mut stream = serde_json::Deserializer::from_str(s).into_iter::<String>();
    let value = stream.next()?.ok()?;
    Some((value, stream.byte_offset()))
}

/// A candidate line: `"description": "…"` (JSON) or `description: …` (YAML, one line).
fn on_line(line: &str, old: &str, new: &str) -> Option<String> {
    if let Some(at) = line.find("\"description\"") {
        let after = &line[at + "\"description\"".len()..];
        let colon = after.find(':')?;
        if !after[..colon].trim().is_empty() {
            return None;
        }
        let rest = &after[colon + 1..];
        let start = rest.len() - rest.trim_start().len();
        let (value, len) = json_string(&rest[start..])?;
        if value != old {
            return None;
        }
        let head = &line[..at + "\"description\"".len() + colon + 1 + start];
        let tail = &rest[start + len..];
        return Some(format!("{head}{}{tail}", literal(new, Style::Json)));
    }
    let trimmed = line.trim_start();
    let key = trimmed
        .strip_prefix("- ")
        .unwrap_or(trimmed)
        .strip_prefix("description:")?;
    let value: String = serde_yaml::from_str(key).ok()?;
    if value != old {
        return None;
    }
    let head = &line[..line.len() - key.len()];
    Some(format!("{head} {}", literal(new, Style::Yaml)))
}

/// The line of `text` that holds `old` as a one-line description, nearest to `near` (the tool's
/// name line) when several do, with `new` in its place; or why there is none.
pub fn locate(text: &str, near: Option<usize>, old: &str, new: &str) -> Result<Located, String> {
    let found: Vec<(usize, String)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| Some((i + 1, on_line(l, old, new)?)))
        .collect();
    let (line, replacement) = found
        .into_iter()
        .min_by_key(|(i, _)| near.map_or(0, |n| i.abs_diff(n)))
        .ok_or_else(|| {
            "no line of the file holds the description as one string (it spans lines, or the definition is built in code)".to_string()
        })?;
    suggestable(&replacement)?;
    Ok(Located {
        line: line as u64,
        start_line: None,
        replacement,
    })
}

/// The first line of our suggestion comments in this workflow and job; each tool's adds a key.
pub fn marker_prefix(workflow: &str, job: &str) -> String {
    let sticky = crate::report::render::markdown::marker(workflow, job);
    let inner = sticky
        .trim_start_matches("<!-- driftgate:")
        .trim_end_matches(" -->");
    format!("<!-- driftgate-suggestion:{inner}:")
}

/// A tool's marker: the prefix and a hash of its name (an untrusted name never enters it).
fn marker(prefix: &str, tool: &str) -> String {
    let h = crate::canon::hash_str(tool);
    let hex = h.trim_start_matches("sha256:");
    format!("{prefix}{} -->", &hex[..16])
}

/// The comment: marker, what replay measured, where it lands when that is a source file, the
/// suggestion.
pub fn body(prefix: &str, t: &ToolFix, located: &Located, source: Option<&str>) -> Option<String> {
    let best = t.best()?;
    let origin = match source {
        Some(path) => format!(
            " Head's description is the string literal in {} (the server's source); the suggestion rewrites that literal.",
            md_code(path, 200, false)
        ),
        None => String::new(),
    };
    let field = if t.field == "description" {
        "description".to_string()
    } else {
        format!("parameter description {}", md_code(&t.field, 200, false))
    };
    let cases = match &t.partner {
        Some(p) => format!("the held-out cases of it and {}", md_code(p, 80, false)),
        None => "the tool's held-out cases".to_string(),
    };
    Some(format!(
        "{}\n**driftgate fix** · {}'s {field}: this wording beats head on {cases} ({}; exact one-sided p = {:.4}) and passes the gate there. Drafted by `{}` from the other half of the suite; head's new sentences are kept word for word.{origin}\n\n{}",
        marker(prefix, &t.tool),
        md_code(&t.tool, 80, false),
        best.held_out.counts(),
        best.held_out.p_value_better,
        best.generator,
        md_fence("suggestion", &located.replacement)
    ))
}

/// What happened to one tool's suggestion.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Created {
        tool: String,
        url: String,
    },
    Updated {
        tool: String,
        url: String,
    },
    Unchanged {
        tool: String,
        url: String,
    },
    /// An earlier suggestion of ours that no offer stands behind now.
    Removed {
        id: u64,
    },
    /// Offered, but no line to suggest on.
    NoLine {
        tool: String,
        why: String,
    },
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The tool name, the URL (GitHub's answer) and the reason reach stderr: made inert.
        let cell = crate::report::escape::cell;
        match self {
            Outcome::Created { tool, url } => {
                write!(
                    f,
                    "suggested a rewrite of {} {}",
                    cell(tool, 80),
                    cell(url, 300)
                )
            }
            Outcome::Updated { tool, url } => write!(
                f,
                "updated the suggestion for {} {}",
                cell(tool, 80),
                cell(url, 300)
            ),
            Outcome::Unchanged { tool, url } => write!(
                f,
                "the suggestion for {} {} already says this",
                cell(tool, 80),
                cell(url, 300)
            ),
            Outcome::Removed { id } => write!(f, "removed the outdated suggestion {id}"),
            Outcome::NoLine { tool, why } => {
                write!(
                    f,
                    "no suggestion for {}: {}",
                    cell(tool, 80),
                    cell(why, 300)
                )
            }
        }
    }
}

/// One offered rewrite, placed.
pub struct Offer {
    pub tool: String,
    pub anchor: Anchor,
    pub body: String,
}

/// A repository's source files (repository path, text), or why they could not be listed.
pub type Workspace = Result<Vec<(String, String)>, String>;

/// The offers `report` makes on `head`'s file at `commit` — or, when head is no file (a live
/// server), on the literals of `workspace`, the repository's source — and the tools offered but
/// not placed.
pub fn offers(
    report: &FixReport,
    head: &Loaded,
    workspace: Option<&Workspace>,
    prefix: &str,
    commit: &str,
) -> (Vec<Offer>, Vec<Outcome>) {
    let mut placed = Vec::new();
    let mut not = Vec::new();
    for t in posted(report) {
        match offer(t, head, workspace, prefix, commit) {
            Ok(o) => placed.push(o),
            Err(why) => not.push(Outcome::NoLine {
                tool: t.tool.clone(),
                why,
            }),
        }
    }
    (placed, not)
}

/// The offers to post: none unless the check failed (a suggestion is withdrawn once the gate
/// passes; a pair's offer on a passing check stays in the report as text), and then the first
/// offered target of each tool (its description before its parameters): never more than one
/// suggestion per tool.
fn posted(report: &FixReport) -> Vec<&ToolFix> {
    if report.check.status != crate::gate::Status::Fail {
        return Vec::new();
    }
    first_offers(&report.tools)
}

/// The first offered target of each tool.
fn first_offers(tools: &[ToolFix]) -> Vec<&ToolFix> {
    let mut seen = std::collections::BTreeSet::new();
    tools
        .iter()
        .filter(|t| t.best.is_some() && seen.insert(t.tool.as_str()))
        .collect()
}

/// One tool's offer placed on head's file or its source, or why it cannot be.
fn offer(
    t: &ToolFix,
    head: &Loaded,
    workspace: Option<&Workspace>,
    prefix: &str,
    commit: &str,
) -> Result<Offer, String> {
    let best = t.best().ok_or("no offered rewrite")?;
    let (path, at, in_source) = match (&head.file, &head.text, workspace) {
        (Some(file), Some(text), _) => {
            let at = locate(text, head.line_of(&t.tool), &t.head_text, &best.text)?;
            (file.clone(), at, false)
        }
        (None, _, Some(Ok(files))) => {
            let (path, at) = source::locate(files, &t.tool, &t.head_text, &best.text)?;
            (path, at, true)
        }
        (None, _, Some(Err(why))) => {
            return Err(format!(
                "head is a live server and its source could not be read: {why}"
            ));
        }
        _ => {
            return Err(
                "head is not a file in the repository (a live server or a revision)".to_string(),
            );
        }
    };
    Ok(Offer {
        tool: t.tool.clone(),
        body: body(prefix, t, &at, in_source.then_some(path.as_str())).expect("a best proposal"),
        anchor: Anchor {
            path,
            line: at.line,
            start_line: at.start_line,
            commit_id: commit.to_string(),
        },
    })
}

/// Create, update, move or remove our suggestion comments so the PR holds exactly `offers`.
pub async fn publish(
    api: &Api<'_>,
    repo: &str,
    pr: u64,
    prefix: &str,
    offers: &[Offer],
    author: &Author,
) -> Result<Vec<Outcome>, ApiError> {
    let all = api.list_review_comments(repo, pr).await?;
    let first_line = |c: &ReviewComment| {
        c.comment
            .body
            .as_deref()
            .and_then(|b| b.lines().next())
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let mut ours: Vec<&ReviewComment> = all
        .iter()
        .filter(|c| {
            first_line(c).starts_with(prefix) && written_by(c.comment.user.as_ref(), author)
        })
        .collect();
    let mut out = Vec::new();
    for o in offers {
        let m = marker(prefix, &o.tool);
        let existing = ours
            .iter()
            .position(|c| first_line(c) == m)
            .map(|i| ours.remove(i));
        let url = |c: &ReviewComment| c.comment.html_url.clone().unwrap_or_default();
        let tool = o.tool.clone();
        match existing {
            Some(c)
                if c.path.as_deref() == Some(&o.anchor.path)
                    && c.line == Some(o.anchor.line)
                    && c.start_line == o.anchor.start_line
                    && c.commit_id.as_deref() == Some(&o.anchor.commit_id) =>
            {
                if c.comment.body.as_deref() == Some(&o.body) {
                    out.push(Outcome::Unchanged { tool, url: url(c) });
                } else {
                    let u = api
                        .update_review_comment(repo, c.comment.id, &o.body)
                        .await?;
                    out.push(Outcome::Updated { tool, url: url(&u) });
                }
            }
            // On other lines or an older commit: a review comment cannot move, so it is
            // replaced.
            Some(c) => {
                api.delete_review_comment(repo, c.comment.id).await?;
                let n = api
                    .create_review_comment(repo, pr, &o.anchor, &o.body)
                    .await?;
                out.push(Outcome::Updated { tool, url: url(&n) });
            }
            None => {
                let n = api
                    .create_review_comment(repo, pr, &o.anchor, &o.body)
                    .await?;
                out.push(Outcome::Created { tool, url: url(&n) });
            }
        }
    }
    for c in ours {
        api.delete_review_comment(repo, c.comment.id).await?;
        out.push(Outcome::Removed { id: c.comment.id });
    }
    Ok(out)
}

/// Source files read at most when looking for a live server's descriptions, and the largest.
const MAX_SOURCE_FILES: usize = 5_000;
const MAX_SOURCE_BYTES: u64 = 1 << 20;
/// And at most this much in all: a repository's source is read into memory once.
const MAX_SOURCE_TOTAL: u64 = 64 << 20;

/// The checkout's source files that may hold a live server's descriptions: the files git tracks
/// with a Python or JS/TS extension, minus dependencies and build output (`node_modules/`,
/// `dist/`, `build/`, `vendor/`), minified and declaration files, and files over 1 MiB; at most
/// 5,000 files and 64 MiB. A job runs in the checkout, so the repository is the current
/// directory's.
pub fn workspace() -> Workspace {
    let tree = crate::source::tree::Tree::work(std::path::Path::new("."));
    let tracked = tree
        .tracked()
        .map_err(|e| format!("the repository's files could not be listed ({e})"))?;
    let mut files = Vec::new();
    let mut total = 0u64;
    for path in tracked.into_iter().filter(|p| wanted(p)) {
        if files.len() == MAX_SOURCE_FILES {
            break;
        }
        let full = tree.root().join(&path);
        let size = std::fs::symlink_metadata(&full)
            .ok()
            .filter(|m| m.is_file() && m.len() <= MAX_SOURCE_BYTES)
            .map(|m| m.len());
        let Some(size) = size.filter(|s| total + s <= MAX_SOURCE_TOTAL) else {
            continue;
        };
        // A link on the way, or a file that is not UTF-8, holds no literal we could suggest on.
        if let Ok(Some(text)) = tree.read(&full) {
            total += size;
            files.push((path, text));
        }
    }
    Ok(files)
}

/// Whether a tracked file is source the server's author writes: not a dependency, build output,
/// generated file or test (a test that spells the description is not where the server gets it).
fn wanted(path: &str) -> bool {
    let generated = [".min.js", ".d.ts", ".d.mts", ".d.cts"];
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    let test_file = name.contains(".test.")
        || name.contains(".spec.")
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem == "conftest";
    let mut dirs = path.split('/').rev().skip(1);
    source::Lang::of(path).is_some()
        && !generated.iter().any(|g| path.ends_with(g))
        && !test_file
        && !dirs.any(|d| {
            matches!(
                d,
                "node_modules"
                    | "dist"
                    | "build"
                    | "vendor"
                    | "test"
                    | "tests"
                    | "__tests__"
                    | "spec"
            )
        })
}

/// In GitHub mode, after `fix`: the offers as review comments on the PR; returns what happened
/// to each. Problems are told to `console` (with a workflow warning) and never change the exit
/// code.
pub async fn post(
    report: &FixReport,
    head: &Loaded,
    p: &super::Publish,
    actions: &super::Actions,
    console: &dyn crate::console::Console,
) -> Vec<Outcome> {
    if !p.enabled || p.comment == super::CommentMode::Never {
        return Vec::new();
    }
    let Some(ctx) = actions.context() else {
        return Vec::new();
    };
    let (Some(pr), Some(commit)) = (ctx.pull_request, ctx.head_sha.as_deref()) else {
        console.note("driftgate: not a pull_request event; no suggestion comments");
        return Vec::new();
    };
    let skip = |why: &str| {
        super::workflow_command(
            console,
            "notice",
            &format!(
                "driftgate could not suggest the rewrites on PR #{pr}: {why}. They are in the fix report."
            ),
        )
    };
    if ctx.fork && actions.event_name.as_deref() != Some("pull_request_target") {
        skip("it comes from a fork, so the token is read-only");
        return Vec::new();
    }
    let Some(token) = &p.token else {
        skip(&format!("no token in ${}", p.token_env));
        return Vec::new();
    };
    let prefix = marker_prefix(&ctx.workflow, &ctx.job);
    // A live server's descriptions are looked for in the checkout's source, read only then.
    let offered = report.tools.iter().any(|t| t.best.is_some());
    let workspace = (head.file.is_none() && offered).then(workspace);
    let (placed, not_placed) = offers(report, head, workspace.as_ref(), &prefix, commit);
    let posted = async {
        super::api::check_repo(&ctx.repository)
            .map_err(|message| ApiError::new("read GITHUB_REPOSITORY", None, message))?;
        let api = Api::new(actions.api_url(), token, actions.max_wait, console)?;
        let author = match api.whoami().await? {
            Some(login) => Author::Login(login),
            None => Author::Bot,
        };
        publish(&api, &ctx.repository, pr, &prefix, &placed, &author).await
    };
    match posted.await {
        Ok(mut outcomes) => {
            outcomes.extend(not_placed);
            for o in &outcomes {
                console.note(&format!("driftgate: PR #{pr}: {o}"));
            }
            outcomes
        }
        Err(e) if e.is_forbidden() => {
            skip(&format!(
                "the token may not write review comments (HTTP {}; grant `pull-requests: write`)",
                e.status.unwrap_or(0)
            ));
            not_placed
        }
        Err(e) => {
            console.note(&format!("driftgate: {e}"));
            super::workflow_command(
                console,
                "warning",
                &format!("driftgate: {e}. The fix report is unaffected."),
            );
            not_placed
        }
    }
}

/// The check report's view of the offers: each tool's rewrite, with the comment that suggests it.
pub fn suggested(report: &FixReport, outcomes: &[Outcome]) -> Vec<crate::report::Suggested> {
    let placed = posted(report);
    report
        .tools
        .iter()
        .filter_map(|t| {
            let best = t.best()?;
            // Only the tool's first offer is on the diff; a later one is shown as text.
            let on_diff = placed.iter().any(|p| std::ptr::eq(*p, t));
            let url = outcomes.iter().filter(|_| on_diff).find_map(|o| match o {
                Outcome::Created { tool, url }
                | Outcome::Updated { tool, url }
                | Outcome::Unchanged { tool, url }
                    if tool == &t.tool && !url.is_empty() =>
                {
                    Some(url.clone())
                }
                _ => None,
            });
            Some(crate::report::Suggested {
                tool: t.tool.clone(),
                field: t.field.clone(),
                text: best.text.clone(),
                held_out: best.held_out.clone(),
                url,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"{
  "tools": [
    {
      "name": "schedule_appointment",
      "description": "Book a slot.",
      "inputSchema": {"type": "object"}
    },
    {"name": "other", "description": "Book a slot."}
  ]
}"#;

    #[test]
    fn the_json_line_is_found_and_rewritten_in_place() {
        let at = locate(JSON, Some(4), "Book a slot.", "Book a slot. Schedule it.").unwrap();
        assert_eq!(at.line, 5);
        assert_eq!(
            at.replacement,
            r#"      "description": "Book a slot. Schedule it.","#
        );
        // Nearest to the other tool's name: its own line.
        let at = locate(JSON, Some(8), "Book a slot.", "x").unwrap();
        assert_eq!(at.line, 8);
        assert_eq!(
            at.replacement,
            r#"    {"name": "other", "description": "x"}"#
        );
    }

    #[test]
    fn a_yaml_line_is_rewritten_as_a_quoted_scalar() {
        let yaml = "tools:\n  - name: a\n    description: Book a slot.\n";
        let at = locate(yaml, Some(2), "Book a slot.", "Say \"hi\": now").unwrap();
        assert_eq!(at.line, 3);
        assert_eq!(at.replacement, r#"    description: "Say \"hi\": now""#);
        let back: serde_yaml::Value =
            serde_yaml::from_str(&format!("{}\n", at.replacement.trim())).unwrap();
        assert_eq!(back["description"], "Say \"hi\": now");
    }

    /// A fix of `tool` whose offered rewrite of `head_text` is `new`.
    fn tool_fix(tool: &str, head_text: &str, new: &str) -> ToolFix {
        serde_json::from_value(serde_json::json!({
            "tool": tool, "field": "description", "failed": [], "base_text": "",
            "head_text": head_text, "kept": [], "lost": [], "best": 0,
            "candidates": [{"generator": "restore", "summary": "", "text": new,
              "held_out": {"cases": 4, "base_accuracy": 0.75, "head_accuracy": 0.25, "accuracy": 0.75, "fixed": 2,
                           "regressed": 0, "p_value_better": 0.25},
              "gate_held_out": {"status": "pass", "reason": ""},
              "gate_full": {"status": "pass", "reason": ""},
              "other_regressions": [], "scan_introduced": [], "offered": true}]
        }))
        .unwrap()
    }

    /// A live server's tool set as `source` loads it: no file.
    fn live() -> Loaded {
        Loaded {
            tools: crate::tools::ToolSet::from_array(&[], "server-cmd", "/tools").unwrap(),
            label: "server-cmd `python server.py`".into(),
            format: crate::source::Format::Live,
            file: None,
            text: None,
        }
    }

    #[test]
    fn a_live_servers_docstring_is_offered_on_all_its_lines_in_the_source() {
        let py = "@mcp.tool()\ndef book(patient: str) -> str:\n    \"\"\"Book a slot.\n\n    For new visits.\n    \"\"\"\n";
        let new = "Book a new appointment.\n\nNot to move one.";
        let t = tool_fix("book", "Book a slot.\n\nFor new visits.", new);
        let files: Workspace = Ok(vec![("app/server.py".into(), py.into())]);
        let o = offer(&t, &live(), Some(&files), "<!-- p:", "abc").unwrap();
        assert_eq!(
            o.anchor,
            Anchor {
                path: "app/server.py".into(),
                line: 6,
                start_line: Some(3),
                commit_id: "abc".into()
            }
        );
        assert!(
            o.body
                .contains("Head's description is the string literal in `app/server.py`"),
            "{}",
            o.body
        );
        let line = o
            .body
            .split("```suggestion\n")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap();
        assert_eq!(
            line,
            r#"    """Book a new appointment.\n\nNot to move one.""""#
        );
        // A checkout git cannot list is said, with git's reason.
        let failed: Workspace = Err("git ls-files failed: not a git repository".into());
        let e = offer(&t, &live(), Some(&failed), "<!-- p:", "abc")
            .err()
            .unwrap();
        assert_eq!(
            e,
            "head is a live server and its source could not be read: git ls-files failed: not a git repository"
        );
    }

    #[test]
    fn only_source_its_author_writes_is_read() {
        for (path, read) in [
            ("server/index.mjs", true),
            ("app.py", true),
            ("src/build.ts", true),
            ("node_modules/sdk/index.js", false),
            ("web/dist/app.js", false),
            ("build/a.ts", false),
            ("vendor/x.py", false),
            ("static/a.min.js", false),
            ("types/x.d.ts", false),
            ("tools.json", false),
            ("tests/test_server.py", false),
            ("src/server.test.ts", false),
            ("src/__tests__/tools.ts", false),
            ("server_test.py", false),
            ("src/testing.ts", true),
        ] {
            assert_eq!(wanted(path), read, "{path}");
        }
    }

    #[test]
    fn what_github_answers_is_inert_on_stderr() {
        let o = Outcome::Created {
            tool: "t\u{1b}[31m".into(),
            url: "https://github.com/o/r/pull/7#discussion_r1\u{202e}\n::error::x".into(),
        };
        let line = o.to_string();
        assert!(
            !line.contains('\u{1b}') && !line.contains('\u{202e}') && !line.contains('\n'),
            "{line}"
        );
    }

    #[test]
    fn a_description_on_several_lines_is_said_not_guessed() {
        let yaml = "- name: a\n  description: >\n    Book a\n    slot.\n";
        let e = locate(yaml, Some(1), "Book a slot.\n", "x").unwrap_err();
        assert!(
            e.starts_with("no line of the file holds the description"),
            "{e}"
        );
    }

    #[test]
    fn one_suggestion_per_tool_its_description_first() {
        let fix = |field: &str, best: Option<usize>| -> ToolFix {
            serde_json::from_value(serde_json::json!({
                "tool": "t", "field": field, "failed": [], "base_text": "", "head_text": "x",
                "kept": [], "lost": [], "best": best,
                "candidates": [{"generator": "restore", "summary": "", "text": "y",
                  "held_out": {"cases": 2, "base_accuracy": 1.0, "head_accuracy": 0.0,
                               "accuracy": 1.0, "fixed": 2, "regressed": 0, "p_value_better": 0.25},
                  "gate_held_out": {"status": "pass", "reason": ""},
                  "gate_full": {"status": "pass", "reason": ""},
                  "other_regressions": [], "scan_introduced": [], "offered": true}]
            }))
            .unwrap()
        };
        let param = "/inputSchema/properties/id/description";
        let tools = [fix("description", Some(0)), fix(param, Some(0))];
        let first = first_offers(&tools);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].field, "description");
        // Nothing offered for the description: the parameter's is the one.
        let tools = [fix("description", None), fix(param, Some(0))];
        assert_eq!(first_offers(&tools)[0].field, param);
        let b = body(
            "<!-- p:",
            &tools[1],
            &Located {
                line: 1,
                start_line: None,
                replacement: "y".into(),
            },
            None,
        )
        .unwrap();
        assert!(
            b.contains("`t`'s parameter description `/inputSchema/properties/id/description`"),
            "{b}"
        );
    }

    #[test]
    fn hostile_text_is_escaped_to_the_same_value_and_cannot_break_out() {
        let new = "Book.\u{202e}evil ``` @here <!-- driftgate:x:y --> \u{e0041}";
        let at = locate(JSON, Some(4), "Book a slot.", new).unwrap();
        // Nothing hidden and no comment delimiter is left raw in the line...
        assert!(!crate::text::unicode::has_hidden(&at.replacement));
        assert!(!at.replacement.contains("<!--") && !at.replacement.contains("-->"));
        // ...and the line still decodes to exactly the new text.
        let v: serde_json::Value = serde_json::from_str(&format!(
            "{{{}}}",
            at.replacement.trim().trim_end_matches(',')
        ))
        .unwrap();
        assert_eq!(v["description"], new);
        // In the comment, the fence is longer than any backtick run and the tool name is code.
        let t = tool_fix("x`y @team", "Book a slot.", new);
        let b = body("<!-- driftgate-suggestion:w:j:", &t, &at, None).unwrap();
        assert!(b.contains("\n````suggestion\n"), "{b}");
        assert!(b.contains(&format!("\n{}\n````\n", at.replacement)), "{b}");
        assert!(b.contains("``x`y @team``"), "{b}");
        assert_eq!(b.matches("<!--").count(), 1, "only our marker: {b}");
        // A line whose other parts hide something is not suggested on.
        let bad = "{\"description\": \"Book a slot.\", \"x\": \"\u{200b}\"}";
        assert!(locate(bad, None, "Book a slot.", "y").is_err());
    }
}
