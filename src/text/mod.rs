//! Words: tokens, stems, term weights, and the verb tables shared by lint, stress and drafting.

pub mod cues;
pub mod examples;
pub mod terms;
pub mod tokens;
pub mod unicode;
pub mod verbs;
pub mod words;
