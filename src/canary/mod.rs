//! After the merge: a changed description rolled out to a growing share of sessions and judged
//! from production traffic (docs/canary.md).
//!
//! `rollout` is the file `canary plan` writes (versions keyed by definition hash, stages, the
//! bucket rule); `traffic` attributes logged exchanges to a version and reduces each session to
//! its events; `watch` turns those into the anytime-valid verdict: rollback, promote, continue;
//! `aliases` maps the names the traffic invented to the real ones, by meaning.

pub mod aliases;
pub mod rollout;
pub mod traffic;
pub mod watch;
