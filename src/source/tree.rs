//! Where the gate's own inputs are read: the work tree, or the pull request's base revision.
//!
//! The pull request is untrusted, so what decides its verdict (the config, the suite, the
//! distractor packs and every file a suite names with `ref:`) is read at the base commit, and a
//! path may not leave the repository: no absolute paths, no `..` above the root, no symbolic
//! link (at a revision a link's blob is its target's *name*, and in the work tree it can point
//! anywhere on the runner).

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// The files of one side: the work tree (`rev` none) or a git revision, under `root`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    rev: Option<String>,
    /// The repository's top directory (absolute, lexically clean): no path read leaves it.
    root: PathBuf,
}

/// `path` made absolute against the current directory, `.` and `..` resolved without looking
/// at the disk (a `..` above `/` stays at `/`).
pub fn lexical(path: &Path) -> PathBuf {
    let joined = match path.is_absolute() {
        true => path.to_path_buf(),
        false => std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path),
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The repository `dir` is in: the nearest ancestor holding `.git`, else `dir` itself.
pub fn repository_root(dir: &Path) -> PathBuf {
    let dir = lexical(dir);
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
        .unwrap_or(dir)
}

/// Whether `path` lies in the checkout around the working directory (the pull request's files).
/// A file outside it (an organisation's config on the runner, a suite the workflow wrote to a
/// temporary directory) is the workflow's own, read as it is: the PR could not have changed it.
pub fn in_checkout(path: &Path) -> bool {
    lexical(path).starts_with(repository_root(Path::new(".")))
}

/// The folder a file's relative references are read from: its parent, or "." for a bare name
/// (whose parent is the empty path, which git and the file system read differently).
pub fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A path that names something outside the repository, or a link.
fn outside(shown: &str, why: &str) -> String {
    format!("{shown}: {why}; files the gate reads must stay inside the repository")
}

impl Tree {
    /// The work tree of the repository holding `dir`.
    pub fn work(dir: &Path) -> Tree {
        Tree {
            rev: None,
            root: repository_root(dir),
        }
    }

    /// Revision `rev` of the repository holding `dir`.
    pub fn at(rev: &str, dir: &Path) -> Tree {
        Tree {
            rev: Some(rev.to_string()),
            root: repository_root(dir),
        }
    }

    pub fn rev(&self) -> Option<&str> {
        self.rev.as_deref()
    }

    /// `rel` (as written in a file under `dir`) as a path inside the repository, or why not.
    pub fn resolve(&self, dir: &Path, rel: &str) -> std::result::Result<PathBuf, String> {
        let p = Path::new(rel);
        let drive = rel.len() >= 2 && rel.as_bytes()[1] == b':';
        if p.is_absolute() || rel.starts_with('/') || rel.starts_with('\\') || drive {
            return Err(outside(rel, "an absolute path"));
        }
        let full = lexical(&dir.join(p));
        if !full.starts_with(&self.root) {
            return Err(outside(rel, "it climbs out of the repository with `..`"));
        }
        Ok(full)
    }

    /// The repository's top directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The regular files git tracks in the repository (no links, no submodules), as paths
    /// relative to its top directory.
    pub fn tracked(&self) -> Result<Vec<String>> {
        let listing = git(
            &self.root,
            &["ls-files", "-z", "--stage", "--full-name"],
            "list the repository's files",
        )?;
        let mut paths: Vec<String> = listing
            .split(|b| *b == 0)
            .filter_map(|entry| {
                let entry = std::str::from_utf8(entry).ok()?;
                let (meta, path) = entry.split_once('\t')?;
                matches!(meta.split(' ').next(), Some("100644" | "100755"))
                    .then(|| path.to_string())
            })
            .collect();
        // A conflicted file is listed once per stage.
        paths.dedup();
        Ok(paths)
    }

    /// The text of `path` (inside the repository), `None` when this side has no such file.
    pub fn read(&self, path: &Path) -> Result<Option<String>> {
        let full = lexical(path);
        let shown = path.display().to_string();
        if !full.starts_with(&self.root) {
            return Err(Error::Usage(outside(&shown, "not inside the repository")));
        }
        match &self.rev {
            Some(rev) => read_at(rev, &full, &self.root),
            None => {
                // Every component, not only the last: a linked directory leaves as easily.
                let rel = full.strip_prefix(&self.root).expect("checked above");
                let mut at = self.root.clone();
                for c in rel.components() {
                    at.push(c);
                    match std::fs::symlink_metadata(&at) {
                        Ok(m) if m.file_type().is_symlink() => {
                            return Err(Error::Usage(outside(
                                &shown,
                                &format!("{} is a symbolic link", at.display()),
                            )));
                        }
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                        Err(e) => return Err(Error::io(&at, e)),
                    }
                }
                crate::fs::read_text(&full, crate::fs::MAX_INPUT_BYTES, crate::fs::INPUT_WAIT)
                    .map(Some)
                    .map_err(|e| Error::io(path, e))
            }
        }
    }
}

/// `git` in `root` with `args`; its stdout, or a usage error naming what was asked.
fn git(root: &Path, args: &[&str], what: &str) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| Error::Usage(format!("{what}: cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(Error::Usage(format!(
            "{what}: git {} failed: {}",
            args.first().copied().unwrap_or(""),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// `full` (absolute, inside `root`) at `rev`: `None` when the revision has no such file, an
/// error when it is a link, a directory or a submodule there.
fn read_at(rev: &str, full: &Path, root: &Path) -> Result<Option<String>> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(Error::Usage(format!(
            "{rev:?} is not a revision (a revision cannot be empty or start with `-`)"
        )));
    }
    let rel = full
        .strip_prefix(root)
        .expect("the caller checked")
        .to_string_lossy()
        .replace('\\', "/");
    let what = format!("{rev}:{rel}");
    // The commit must exist: a typo in the base revision is an error, not "no config".
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
        &what,
    )
    .map_err(|_| {
        Error::Usage(format!(
            "{what}: {rev:?} is not a commit of this repository (the gate's policy is read at the pull request's base: check out with the base commit, e.g. actions/checkout with fetch-depth: 0)"
        ))
    })?;
    // Each leading directory too: a path through a link resolves to nothing at all in git,
    // which must read as "absent", never as the work tree's file.
    let listing = git(
        root,
        &["ls-tree", "-z", "--full-tree", rev, "--", &rel],
        &what,
    )?;
    let Some(entry) = listing.split(|b| *b == 0).find(|e| !e.is_empty()) else {
        return Ok(None);
    };
    let entry = String::from_utf8_lossy(entry);
    let mode = entry.split(' ').next().unwrap_or("");
    match mode {
        "100644" | "100755" => {}
        "120000" => {
            return Err(Error::Usage(outside(
                &what,
                "a symbolic link at the base revision (name the file it points to)",
            )));
        }
        "040000" => return Err(Error::Usage(format!("{what}: a directory, not a file"))),
        other => {
            return Err(Error::Usage(format!(
                "{what}: not a file at {rev} (git mode {other})"
            )));
        }
    }
    let bytes = git(root, &["cat-file", "blob", &format!("{rev}:{rel}")], &what)?;
    if bytes.len() as u64 > crate::fs::MAX_INPUT_BYTES {
        return Err(Error::Usage(format!(
            "{what}: larger than {} MiB",
            crate::fs::MAX_INPUT_BYTES >> 20
        )));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Error::Usage(format!("{what}: file is not valid UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git_in(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn paths_stay_inside_the_repository() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("suites")).unwrap();
        let t = Tree::work(&root.join("suites"));
        let dir = root.join("suites");
        assert_eq!(
            t.resolve(&dir, "decoys.json").unwrap(),
            dir.join("decoys.json")
        );
        assert_eq!(t.resolve(&dir, "../x.json").unwrap(), root.join("x.json"));
        for bad in [
            "/etc/passwd",
            "../../etc/passwd",
            "\\\\host\\share",
            "C:\\x",
        ] {
            assert!(t.resolve(&dir, bad).is_err(), "{bad}");
        }
        // A link anywhere on the way is refused, a missing file is absent.
        std::os::unix::fs::symlink("/etc", root.join("suites/out")).unwrap();
        let e = t.read(&root.join("suites/out/hostname")).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(t.read(&root.join("suites/none.json")).unwrap(), None);
    }

    #[test]
    fn a_revision_is_read_as_committed_and_a_link_there_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git_in(&root, &["init", "-q"]);
        std::fs::write(root.join("a.json"), "base").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("link.json")).unwrap();
        git_in(&root, &["add", "."]);
        git_in(&root, &["commit", "-qm", "base"]);
        std::fs::write(root.join("a.json"), "head").unwrap();
        let base = Tree::at("HEAD", &root);
        assert_eq!(
            base.read(&root.join("a.json")).unwrap().as_deref(),
            Some("base")
        );
        assert_eq!(base.read(&root.join("b.json")).unwrap(), None);
        let e = base.read(&root.join("link.json")).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let e = Tree::at("no-such-rev", &root)
            .read(&root.join("a.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a commit"), "{e}");
    }

    #[test]
    fn the_tracked_files_are_the_regular_files_git_lists() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        git_in(&root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.py"), "").unwrap();
        std::fs::write(root.join("sub/b.ts"), "").unwrap();
        std::fs::write(root.join("untracked.js"), "").unwrap();
        std::os::unix::fs::symlink("/etc/hostname", root.join("link.py")).unwrap();
        git_in(&root, &["add", "a.py", "sub/b.ts", "link.py"]);
        // From a subdirectory too: paths are the repository's.
        let t = Tree::work(&root.join("sub"));
        assert_eq!(t.tracked().unwrap(), ["a.py", "sub/b.ts"]);
        assert_eq!(t.root(), root);
        let plain = tempfile::tempdir().unwrap();
        let e = Tree::work(plain.path()).tracked().unwrap_err().to_string();
        assert!(e.contains("git ls-files failed"), "{e}");
    }
}
