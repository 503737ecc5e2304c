//! Replay a suite through a router at one side, then compare base and head case by case.
//!
//! Each case is asked against the side's whole tool set plus the case's distractors plus the
//! distractor packs, in one of a few seeded orders ([`crate::route::order`]) that is identical at base and head
//! (a tool keeps its relative position), so order is not a confound. Requests go through the cache;
//! identical requests within a run are sent once.

//! `judge` decides one answer, `runner` replays a side, `compare` pairs the two sides, `confirm`
//! re-asks the flipped cases, `shard` splits a suite over machines and joins the parts, `target`
//! picks the cases a change can reach.

pub mod calls;
pub mod compare;
pub mod confirm;
pub mod judge;
pub mod plan;
pub mod runner;
pub mod shard;
pub mod target;

pub use crate::route::order::{Circle, Order};
pub use calls::{ArgChange, Calls, Invented};
pub use compare::{
    Direction, Flip, ForbiddenCall, Paired, Routing, ToolRouting, compare, compare_sides,
    compare_with, total_usage,
};
pub use judge::{CallOutcome, Outcome, classify};
pub use runner::{
    CaseRun, ReplayConfig, Replayer, RunStats, Sample, SideRun, clashes, offered_tools,
    repeats_identical,
};
