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
    // Two sources for one side: one would be ignored, so neither is taken.
    if let (Some(p), Some(live)) = (positional, cmd.as_ref().or(url.as_ref())) {
        let flag = if cmd.is_some() {
            "server-cmd"
        } else {
            "server-url"
        };
        let flag = if which.is_empty() {
            format!("--{flag}")
        } else {
            format!("--{which}-{flag}")
        };
        return Err(Error::Usage(
            format!(
                "{p:?} and {flag} {live:?} both name the {} tool set: pass one",
                if which.is_empty() { "" } else { which }
            )
            .replace("the  tool", "the tool"),
        ));
    }
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
    if a.tools.is_none() {
        for (flag, given) in [("--base-ref", &a.base_ref), ("--head-ref", &a.head_ref)] {
            if given.is_some() {
                return Err(Error::Usage(format!(
                    "{flag} applies to --tools PATH (the file at two revisions); without --tools it would be ignored"
                )));
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sides() -> SidesArgs {
        SidesArgs {
            tools: None,
            base_ref: None,
            head_ref: None,
            base_server_cmd: None,
            base_server_url: None,
            head_server_cmd: None,
            head_server_url: None,
        }
    }

    #[test]
    fn a_flag_that_would_be_ignored_is_an_error() {
        let new = "head.json".to_string();
        let old = "base.json".to_string();
        let mut a = sides();
        a.head_server_cmd = Some("npx server".into());
        let e = side_specs(Some(&old), Some(&new), &a)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "\"head.json\" and --head-server-cmd \"npx server\" both name the head tool set: pass one"
        );
        let mut a = sides();
        a.base_ref = Some("main".into());
        let e = side_specs(Some(&old), Some(&new), &a)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--base-ref applies to --tools PATH"), "{e}");
        // The live head with the committed base file is the Action's form and stays valid.
        let mut a = sides();
        a.tools = Some("tools.json".into());
        a.base_ref = Some("main".into());
        a.head_server_cmd = Some("npx server".into());
        let (b, h) = side_specs(None, None, &a).unwrap();
        assert!(matches!(b, Spec::GitRev { .. }) && matches!(h, Spec::ServerCmd(_)));
    }
}
