//! Shared test helpers (a loopback GitHub API, a simulated Actions runner).

pub mod github;
pub mod runner;
