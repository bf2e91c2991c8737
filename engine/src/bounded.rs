//! Bounded reads (issue 16): every file, stream and directory walk is limited before the bytes are
//! read, so `/dev/zero`, a FIFO, a 1 GB stdin or a symlink loop gives an error naming the path
//! and the limit instead of exhausting memory or hanging.
//!
//! - [`read_file`] reads a regular file (a symlink to one is followed) of at most `max` bytes;
//!   anything else (directory, FIFO, device, socket) is refused before it is opened.
//! - [`read_stream`] reads at most `max` bytes of a stream (stdin).
//! - [`walk`] lists the files under a directory without following symlinked directories, at
//!   most [`MAX_WALK_DEPTH`] levels deep and [`MAX_WALK_FILES`] files.
//!
//! Text must be UTF-8 (a leading byte-order mark is dropped); an invalid byte is reported with its
//! line.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Deepest directory level [`walk`] enters.
pub const MAX_WALK_DEPTH: usize = 32;
/// Most files [`walk`] lists.
pub const MAX_WALK_FILES: usize = 20_000;

/// A refused or failed bounded read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The path could not be inspected, opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path (or `standard input`).
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The path is not a regular file (a directory, FIFO, device or socket).
    #[error("{path} is not a regular file ({kind}): refusing to read it")]
    NotAFile {
        /// The path.
        path: String,
        /// What it is instead.
        kind: &'static str,
    },
    /// The input is larger than the limit.
    #[error("{path} is larger than {max} bytes (the limit for {what})")]
    TooLarge {
        /// The path (or `standard input`).
        path: String,
        /// The limit in bytes.
        max: u64,
        /// What the limit is for (`a knowledge file`, `standard input` ...).
        what: &'static str,
    },
    /// The input is not UTF-8 text.
    #[error("{path} is not UTF-8 text: invalid byte at line {line}, column {column} (byte offset {offset})")]
    NotUtf8 {
        /// The path (or `standard input`).
        path: String,
        /// Line of the invalid byte (1-based).
        line: usize,
        /// Column (byte in the line, 1-based).
        column: usize,
        /// Byte offset from the start.
        offset: usize,
    },
    /// A directory walk passed a limit.
    #[error("{path}: {message}")]
    Walk {
        /// The directory where the limit was hit.
        path: String,
        /// Which limit.
        message: String,
    },
}

fn file_kind(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() || ft.is_block_device() {
            return "a device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Turns bytes into text: a leading UTF-8 byte-order mark is dropped; an invalid byte is reported
/// with its line and column.
///
/// # Errors
/// [`ReadError::NotUtf8`].
pub fn text(path: &str, mut bytes: Vec<u8>) -> Result<String, ReadError> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset - before.iter().rposition(|&b| b == b'\n').map(|p| p + 1).unwrap_or(0) + 1;
        ReadError::NotUtf8 { path: path.to_string(), line, column, offset }
    })
}

/// Reads the regular file at `path` as UTF-8 text of at most `max` bytes; `what` names the limit
/// in the error (`a knowledge file`).
///
/// # Errors
/// [`ReadError::NotAFile`] before opening anything that is not a regular file;
/// [`ReadError::TooLarge`] after reading at most `max + 1` bytes; [`ReadError::NotUtf8`];
/// [`ReadError::Io`].
pub fn read_file(path: &Path, max: u64, what: &'static str) -> Result<String, ReadError> {
    let shown = path.display().to_string();
    let io = |source| ReadError::Io { path: shown.clone(), source };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotAFile { path: shown, kind: file_kind(&meta.file_type()) });
    }
    if meta.len() > max {
        return Err(ReadError::TooLarge { path: shown, max, what });
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut buf = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut buf).map_err(io)?;
    if buf.len() as u64 > max {
        return Err(ReadError::TooLarge { path: shown, max, what });
    }
    text(&shown, buf)
}

/// Reads at most `max` bytes of `stream` (named `name` in errors) as UTF-8 text.
///
/// # Errors
/// [`ReadError::TooLarge`] after reading at most `max + 1` bytes; [`ReadError::NotUtf8`];
/// [`ReadError::Io`].
pub fn read_stream(stream: &mut dyn Read, max: u64, name: &str, what: &'static str) -> Result<String, ReadError> {
    let mut buf = Vec::new();
    stream.take(max + 1).read_to_end(&mut buf).map_err(|source| ReadError::Io { path: name.to_string(), source })?;
    if buf.len() as u64 > max {
        return Err(ReadError::TooLarge { path: name.to_string(), max, what });
    }
    text(name, buf)
}

/// The regular files under `dir` (symlinks to regular files included, symlinked directories and
/// special files skipped), at most [`MAX_WALK_DEPTH`] levels deep and [`MAX_WALK_FILES`] files, in
/// directory order sorted by name. `skip` is asked about every entry name (true: leave it out).
///
/// # Errors
/// [`ReadError::Io`] for an unreadable directory; [`ReadError::Walk`] past a limit.
pub fn walk(dir: &Path, skip: &dyn Fn(&str) -> bool) -> Result<Vec<PathBuf>, ReadError> {
    fn go(dir: &Path, depth: usize, skip: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) -> Result<(), ReadError> {
        let shown = || dir.display().to_string();
        if depth > MAX_WALK_DEPTH {
            return Err(ReadError::Walk { path: shown(), message: format!("directories nested more than {MAX_WALK_DEPTH} deep") });
        }
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(|source| ReadError::Io { path: shown(), source })?
            .collect::<Result<_, _>>()
            .map_err(|source| ReadError::Io { path: shown(), source })?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().to_string();
            if skip(&name) {
                continue;
            }
            let p = entry.path();
            // `file_type` does not follow symlinks: a symlinked directory is never entered (no
            // loops, no walks out to `/` or `/proc`); a symlink counts only if it names a regular file.
            let ft = entry.file_type().map_err(|source| ReadError::Io { path: p.display().to_string(), source })?;
            if ft.is_dir() {
                go(&p, depth + 1, skip, out)?;
            } else if ft.is_file() || (ft.is_symlink() && std::fs::metadata(&p).is_ok_and(|m| m.is_file())) {
                out.push(p);
                if out.len() > MAX_WALK_FILES {
                    return Err(ReadError::Walk { path: shown(), message: format!("more than {MAX_WALK_FILES} files") });
                }
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    go(dir, 0, skip, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_hold_before_reading() {
        let mut zero = std::io::repeat(0);
        let e = read_stream(&mut zero, 1024, "standard input", "standard input").expect_err("too large");
        assert!(matches!(e, ReadError::TooLarge { max: 1024, .. }), "{e}");
        #[cfg(unix)]
        {
            let e = read_file(Path::new("/dev/zero"), 1024, "a knowledge file").expect_err("refused");
            assert!(matches!(e, ReadError::NotAFile { kind: "a device", .. }), "{e}");
        }
        let e = read_file(Path::new("/"), 1024, "a knowledge file").expect_err("refused");
        assert!(matches!(e, ReadError::NotAFile { kind: "a directory", .. }), "{e}");
    }

    #[test]
    fn utf8_errors_have_a_line_and_a_bom_is_dropped() {
        let e = text("k.md", b"a\nb\n\xffc".to_vec()).expect_err("invalid");
        assert!(e.to_string().contains("line 3, column 1"), "{e}");
        assert_eq!(text("k.md", b"\xEF\xBB\xBF+++".to_vec()).expect("text"), "+++");
    }

    #[cfg(unix)]
    #[test]
    fn walks_do_not_follow_symlinked_directories() {
        let dir = std::env::temp_dir().join(format!("kubewhy-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("a")).expect("mkdir");
        std::fs::write(dir.join("a/x.md"), "x").expect("write");
        std::os::unix::fs::symlink(&dir, dir.join("a/loop")).expect("symlink");
        std::os::unix::fs::symlink("/proc", dir.join("proc")).expect("symlink");
        std::os::unix::fs::symlink(dir.join("a/x.md"), dir.join("y.md")).expect("symlink");
        let files = walk(&dir, &|_: &str| false).expect("walk");
        let names: Vec<String> = files.iter().map(|p| p.strip_prefix(&dir).unwrap_or(p).display().to_string()).collect();
        assert_eq!(names, vec!["a/x.md".to_string(), "y.md".to_string()]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
