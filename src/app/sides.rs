//! Which tool sets a command compares: positional files, `--tools PATH` across refs, or live
//! servers, turned into loader specs.

use std::path::PathBuf;

use crate::app::args::{LiveArgs, SidesArgs};
use crate::app::settings;
use crate::error::{Error, Result};
use crate::source::{self, Loaded, Spec};

pub fn side_spec(
    positional: Option<&String>,
    cmd: &Option<String>,
    url: &Option<String>,
    which: &str,
) -> Result<Spec> {
    match (positional, cmd, url) {
        (_, Some(c), _) => Ok(Spec::ServerCmd(c.clone())),
        (_, _, Some(u)) => Ok(Spec::ServerUrl(u.clone())),
        (Some(p), _, _) => Ok(Spec::parse(p)),
        _ => Err(Error::Usage(format!(
            "missing {which} tool set: give OLD NEW, --tools PATH, or --{which}-server-cmd"
        ))),
    }
}

pub fn side_specs(
    old: Option<&String>,
    new: Option<&String>,
    a: &SidesArgs,
) -> Result<(Spec, Spec)> {
    if let Some(path) = &a.tools {
        let base_ref = a
            .base_ref
            .clone()
            .or_else(settings::default_base_ref)
            .ok_or_else(|| {
                Error::Usage(
                    "--tools needs a base revision: pass --base-ref REV (in a GitHub pull_request run it \
                     defaults to the PR's base commit)"
                        .into(),
                )
            })?;
        let base = Spec::GitRev {
            rev: base_ref,
            path: path.clone(),
        };
        let head = match &a.head_ref {
            // The committed tools at base against the PR's live server (the Action's server-cmd).
            _ if a.head_server_cmd.is_some() || a.head_server_url.is_some() => {
                side_spec(None, &a.head_server_cmd, &a.head_server_url, "head")?
            }
            Some(r) => Spec::GitRev {
                rev: r.clone(),
                path: path.clone(),
            },
            None => Spec::File(PathBuf::from(path)),
        };
        return Ok((base, head));
    }
    Ok((
        side_spec(old, &a.base_server_cmd, &a.base_server_url, "base")?,
        side_spec(new, &a.head_server_cmd, &a.head_server_url, "head")?,
    ))
}

pub async fn load_sides(base: &Spec, head: &Spec, live: &LiveArgs) -> Result<(Loaded, Loaded)> {
    let opts = settings::live(live)?;
    let (b, h) = tokio::join!(source::load(base, &opts), source::load(head, &opts));
    Ok((b?, h?))
}

/// The base revision a suite is read at, to tell whether the PR changed it.
pub fn base_revision(base: &Spec, sides: &SidesArgs) -> Option<String> {
    match base {
        Spec::GitRev { rev, .. } => Some(rev.clone()),
        _ => sides.base_ref.clone().or_else(|| {
            sides
                .tools
                .as_ref()
                .and_then(|_| settings::default_base_ref())
        }),
    }
}
