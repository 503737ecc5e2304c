//! driftgate: a CI gate for MCP tool-definition drift.
//!
//! Data flows one way: `tools` → `diff` → `embed` → `route` → `replay` + `stats` → `gate` →
//! `report` → `github`. `cli` only parses and dispatches.

pub mod embed;
pub mod error;
pub mod stats;
pub mod tools;

pub use error::{Error, Result};
