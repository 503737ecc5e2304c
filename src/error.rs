//! One error type for the whole crate; each variant knows its exit code so `main` never guesses.

use std::path::PathBuf;

/// Process exit codes, documented in README and `--help`.
pub mod exit {
    /// No finding at or above `--fail-on`; gate passed.
    pub const PASS: i32 = 0;
    /// Gate failed: findings at or above `--fail-on`, or routing/meaning regressed.
    pub const FAIL: i32 = 1;
    /// Bad usage or bad input (unreadable file, malformed JSON, unknown flag).
    pub const USAGE: i32 = 2;
    /// A measurement could not be completed (server did not answer, router errors): never a pass.
    pub const INCOMPLETE: i32 = 3;
    /// The measurement ran but cannot tell a regression from noise (a large drop on too few
    /// cases, a router at chance at base): never a pass; add cases or re-run with `--confirm`.
    pub const INCONCLUSIVE: i32 = 4;
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Input that does not have the shape we expect; `pointer` is an RFC 6901 JSON pointer.
    #[error("{source_name}: {pointer}: {expected}")]
    Shape {
        source_name: String,
        pointer: String,
        expected: String,
    },
    #[error("{source_name}: invalid JSON at line {line}, column {column}: {message}")]
    Json {
        source_name: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("{0}")]
    Usage(String),
    /// Something we had to measure could not be measured; maps to exit 3.
    #[error("incomplete: {0}")]
    Incomplete(String),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Incomplete(_) => exit::INCOMPLETE,
            _ => exit::USAGE,
        }
    }

    pub fn shape(source: &str, pointer: &str, expected: impl Into<String>) -> Self {
        Error::Shape {
            source_name: source.to_string(),
            pointer: if pointer.is_empty() {
                "/".into()
            } else {
                pointer.into()
            },
            expected: expected.into(),
        }
    }

    pub fn io(path: impl Into<PathBuf>, err: impl std::fmt::Display) -> Self {
        Error::Io {
            path: path.into(),
            message: err.to_string(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
