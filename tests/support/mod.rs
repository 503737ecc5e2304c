//! Shared test helpers (a loopback GitHub API, a simulated Actions runner, real reports, a
//! Markdown safety check).

pub mod github;
pub mod markdown;
pub mod reports;
pub mod runner;
