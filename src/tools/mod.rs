//! Tool model, canonical JSON, loaders.
pub mod live;
