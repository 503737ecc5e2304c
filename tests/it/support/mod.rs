//! Shared test helpers (a loopback GitHub API, a loopback OpenAI-compatible server, a simulated
//! Actions runner, real reports, a Markdown safety check).

pub mod github;
pub mod llm;
pub mod markdown;
pub mod reports;
pub mod runner;
