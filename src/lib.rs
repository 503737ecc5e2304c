//! driftgate: a CI gate for MCP tool-definition drift.
//!
//! Data flows one way: `tools` → `diff` → `embed` → `route` → `replay` + `stats` → `gate` →
//! `report` → `github`. `cli` only parses and dispatches.

pub mod bootstrap;
pub mod check;
pub mod cli;
pub mod config;
pub mod diff;
pub mod drift;
pub mod embed;
pub mod error;
pub mod fs;
pub mod gate;
pub mod github;
pub mod lint;
pub mod llm;
pub mod replay;
pub mod report;
pub mod route;
pub mod stats;
pub mod stress;
pub mod suite;
pub mod suite_check;
pub mod tools;

pub use error::{Error, Result};
