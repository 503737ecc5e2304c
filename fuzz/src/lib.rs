//! Shared parts of driftgate's fuzz targets: the output checks (the invariants of
//! `tests/it/hostile.rs`), the renderer targets' input model, and the hermetic tests' own GFM
//! checker, compiled in from `tests/it/support/markdown.rs` so that the fuzz targets promise
//! exactly what the hermetic tests promise.

pub mod checks;
pub mod input;
#[path = "../../tests/it/support/markdown.rs"]
pub mod markdown;
