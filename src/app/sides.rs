//! Which tool sets a command compares: positional files, `--tools PATH` across refs, or live
//! servers, turned into loader specs.

use std::path::PathBuf;

use crate::app::flags::SidesArgs;
use crate::app::settings;
use crate::error::{Error, Result};
use crate::source::live::LiveOptions;
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

/// Whether loading `specs` starts a server command (the PR's code, beside us).
pub fn starts_server(specs: &[&Spec]) -> bool {
    specs.iter().any(|s| matches!(s, Spec::ServerCmd(_)))
}

/// Both sides, loaded at once, with what masking found (see [`load`]).
pub async fn load_sides(
    base: &Spec,
    head: &Spec,
    opts: &LiveOptions,
) -> Result<(Loaded, Loaded, Vec<String>)> {
    let (b, h) = tokio::join!(load(base, opts), load(head, opts));
    let ((b, bn), (h, hn)) = (b?, h?);
    Ok((b, h, bn.into_iter().chain(hn).collect()))
}

/// A tool set with every credential this process holds masked in it, before anything measures,
/// sends or writes it (a server can read the job's token and return it in a description), and a
/// note saying so when one was there.
pub async fn load(spec: &Spec, opts: &LiveOptions) -> Result<(Loaded, Vec<String>)> {
    let mut loaded = source::load(spec, opts).await?;
    let n = mask_tools(&mut loaded);
    let mut notes = std::mem::take(&mut loaded.tools.warnings);
    if n > 0 {
        notes.push(format!(
            "{} returned a credential this job holds in {n} string(s) of its tool definitions; it was masked (***) before anything was measured, sent or written. A tool definition has no business knowing the job's secrets: treat this change as hostile.",
            loaded.label
        ));
    }
    Ok((loaded, notes))
}

/// [`load`] for commands without a report: the note goes to stderr.
pub async fn load_noted(spec: &Spec, opts: &LiveOptions) -> Result<Loaded> {
    let (loaded, notes) = load(spec, opts).await?;
    for n in notes {
        eprintln!("driftgate: {}", crate::app::console::message_safe(&n));
    }
    Ok(loaded)
}

/// Mask held credentials in every string of every tool and in the raw text; how many strings.
fn mask_tools(l: &mut Loaded) -> usize {
    use crate::http::secret::{mask_held, mask_value};
    let mut n = 0;
    let mut text = |s: &mut String| {
        if let std::borrow::Cow::Owned(m) = mask_held(s) {
            *s = m;
            n += 1;
        }
    };
    for t in &mut l.tools.tools {
        text(&mut t.name);
        if let Some(x) = t.title.as_mut() {
            text(x);
        }
        if let Some(x) = t.description.as_mut() {
            text(x);
        }
    }
    for t in &mut l.tools.tools {
        n += mask_value(&mut t.input_schema);
        if let Some(v) = t.output_schema.as_mut() {
            n += mask_value(v);
        }
        if let Some(a) = t.annotations.take() {
            let mut v = serde_json::Value::Object(a);
            n += mask_value(&mut v);
            t.annotations = v.as_object().cloned();
        }
        let mut extra = serde_json::Value::Object(std::mem::take(&mut t.extra));
        n += mask_value(&mut extra);
        if let serde_json::Value::Object(m) = extra {
            t.extra = m;
        }
    }
    if let Some(raw) = l.text.as_mut()
        && let std::borrow::Cow::Owned(m) = mask_held(raw)
    {
        *raw = m;
    }
    n
}

/// The revision the gate's policy (config, suite, distractor packs) is read at: the base
/// revision when the sides name one, else the pull request's base in a GitHub `pull_request`
/// run. `None` outside a pull request: then the work tree's files are the policy.
pub fn policy_revision(base: &Spec, sides: &SidesArgs) -> Option<String> {
    base_revision(base, sides).or_else(pr_base)
}

/// The pull request's base revision in a GitHub `pull_request` (or `pull_request_target`) run
/// whose working directory is a git checkout (the PR's); `None` elsewhere. A checkout without the
/// base commit (a shallow clone) then fails loudly where the policy is read.
pub fn pr_base() -> Option<String> {
    let a = settings::actions();
    let pr = a
        .event_name
        .as_deref()
        .is_some_and(|e| e.starts_with("pull_request"));
    let checkout = std::path::Path::new(".")
        .canonicalize()
        .is_ok_and(|d| d.ancestors().any(|p| p.join(".git").exists()));
    (a.active && pr && checkout)
        .then(settings::default_base_ref)
        .flatten()
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
