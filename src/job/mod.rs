//! Jobs: whole commands as library functions, from loaded inputs to one report.

pub mod check;
pub mod fix;
pub mod import;
pub mod lint;
pub mod lock;
pub mod merge;
pub mod stress;
pub mod suite;
