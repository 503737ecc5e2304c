//! driftgate: a CI gate for MCP tool-definition drift.
//!
//! Layers, each importing only from the layers below it (see `docs/ARCHITECTURE.md`; the rule is
//! checked by `tests/it/layers.rs`). Only `app` prints: everything else tells a `console::Console`.

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod app;
pub mod cache;

pub mod canary;
pub mod canon;
pub mod choice;
pub mod console;
pub mod cosine;
pub mod diff;
pub mod draft;
pub mod embed;
pub mod error;
pub mod fs;
pub mod gate;
pub mod github;
pub mod http;
pub mod injection;
pub mod job;
pub mod lint;
pub mod llm;
pub mod replay;
pub mod report;
pub mod route;
pub mod source;
pub mod stats;
pub mod stress;
pub mod suite;
pub mod text;
pub mod tools;

pub use error::{Error, Result};
