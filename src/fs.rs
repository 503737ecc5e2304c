//! Writing output files so readers never see them half-done, without ever replacing what is not
//! a plain file: a regular file is written to a unique temporary file in its directory and
//! renamed over (atomic on POSIX filesystems); a symlink is followed and its target written; a
//! device, FIFO or socket (`-o /dev/null`, `-o /dev/stdout`) is written in place, never renamed
//! over (as root, a rename would destroy `/dev/null`). The temporary file is removed on every
//! error.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Links followed at most before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Whether a write waits for the disk before it renames the file into place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Flushed first: after a crash the path holds the old or the new bytes (outputs).
    Synced,
    /// Not flushed: after a crash the path may hold an empty or partial file. Only for entries
    /// whose reader treats such a file as a miss (the cache), where a flush per entry cost more
    /// than the replay around it (about 0.4 ms per case here).
    Unsynced,
}

/// Write `bytes` to `path`, creating missing parent directories of a new regular file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, Durability::Synced)
}

/// [`write_atomic`] at the given durability.
pub fn write_atomic_with(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    let target = resolve(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory, not a file",
            ));
        }
        Ok(m) if !m.is_file() => {
            // A device, FIFO or socket: write to it; there is nothing to replace atomically.
            let mut f = std::fs::OpenOptions::new().write(true).open(&target)?;
            return f.write_all(bytes);
        }
        Ok(_) | Err(_) => {}
    }
    let keep = std::fs::metadata(&target).ok().map(|m| m.permissions());
    replace(&target, keep, durability, |f| f.write_all(bytes))
}

/// `path` with every symlink on the last component followed (relative links against their
/// directory); a dangling link gives where it points.
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links to follow"
    )))
}

/// Write a temporary file beside `target` with `fill`, then rename it over `target`; the
/// temporary file never outlives a failure.
fn replace(
    target: &Path,
    permissions: Option<std::fs::Permissions>,
    durability: Durability,
    fill: impl FnOnce(&mut std::fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{:016x}.tmp",
        std::process::id(),
        rand::random::<u64>()
    ));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        fill(&mut f)?;
        if durability == Durability::Synced {
            f.sync_all()?;
        }
        if let Some(p) = permissions {
            f.set_permissions(p)?;
        }
        std::fs::rename(&tmp, target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Inputs larger than their cap are refused: a tools file, suite or report is kilobytes to a few
/// megabytes, and `/dev/zero` must not run the job out of memory.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// How long a named pipe may take to deliver its first byte.
pub const INPUT_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Read the UTF-8 text at `path`, at most `limit` bytes. A FIFO (`<(cmd)`, a named pipe) that
/// gets no data within `wait` is an error, not a hang.
pub fn read_text(path: &Path, limit: u64, wait: std::time::Duration) -> io::Result<String> {
    use std::io::Read;
    let file = open_for_reading(path, wait)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("larger than the {} MiB input cap", limit >> 20),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not valid UTF-8 text"))
}

#[cfg(unix)]
fn open_for_reading(path: &Path, wait: std::time::Duration) -> io::Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    if !std::fs::metadata(path)?.file_type().is_fifo() {
        return std::fs::File::open(path);
    }
    // Opened without blocking (a plain open waits for a writer forever), then polled for data.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let fd = file.as_raw_fd();
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one valid pollfd for an open descriptor, and its count.
    let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
    if ready < 0 {
        return Err(io::Error::last_os_error());
    }
    if ready == 0 {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no data within {} s (a named pipe nobody writes to?)",
                wait.as_secs()
            ),
        ));
    }
    // Back to blocking reads for the rest of the stream.
    // SAFETY: fcntl on a descriptor we own, with flags it returned.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open_for_reading(path: &Path, _wait: std::time::Duration) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn writes_whole_files_and_leaves_no_temporaries() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/c.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(entries(p.parent().unwrap()), ["c.json"]);
    }

    #[test]
    fn a_failed_write_leaves_neither_a_temporary_nor_a_changed_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("report.json");
        std::fs::write(&p, b"old").unwrap();
        let e = replace(&p, None, Durability::Synced, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("No space left on device"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("No space left"));
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(entries(d.path()), ["report.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_and_stays_a_symlink() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.json");
        std::fs::write(&real, b"old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "the file keeps its permissions");
        // A dangling link gets its target created.
        let dangling = d.path().join("dangling.json");
        std::os::unix::fs::symlink("made.json", &dangling).unwrap();
        write_atomic(&dangling, b"x").unwrap();
        assert_eq!(std::fs::read(d.path().join("made.json")).unwrap(), b"x");
    }

    #[cfg(unix)]
    #[test]
    #[allow(clippy::print_stderr)]
    fn a_fifo_or_device_is_written_in_place_not_replaced() {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::FileTypeExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo(3) takes no other pointers.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_atomic(&fifo, b"through the pipe").unwrap();
        // Checked before joining: had the FIFO been renamed over, the reader would wait forever.
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        // A device node (a copy of /dev/null's, made here so a regression cannot destroy the
        // machine's) stays a device: a rename over it, as root, would have replaced it.
        let null = d.path().join("null");
        let c = CString::new(null.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mknod(2) takes no other pointers.
        let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        if made == 0 {
            write_atomic(&null, b"gone").unwrap();
            assert!(
                std::fs::metadata(&null)
                    .unwrap()
                    .file_type()
                    .is_char_device()
            );
        } else {
            eprintln!("skipped the device node: mknod needs root");
        }
        assert!(
            write_atomic(d.path(), b"x").is_err(),
            "a directory is refused"
        );
    }

    #[test]
    fn reads_are_capped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.json");
        std::fs::write(&p, vec![b'['; 2048]).unwrap();
        let wait = std::time::Duration::from_secs(1);
        let e = read_text(&p, 1024, wait).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(read_text(&p, 4096, wait).unwrap().len(), 2048);
        // An endless device stops at the cap instead of filling memory.
        let e = read_text(Path::new("/dev/zero"), 1 << 20, wait).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_text(&p, 4096, wait).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_nobody_writes_to_times_out_and_one_with_a_writer_is_read() {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("pipe");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo(3) takes no other pointers.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        let e = read_text(&fifo, 1024, std::time::Duration::from_millis(200)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, b"[1, 2]").unwrap())
        };
        let text = read_text(&fifo, 1024, std::time::Duration::from_secs(10)).unwrap();
        writer.join().unwrap();
        assert_eq!(text, "[1, 2]");
    }
}
