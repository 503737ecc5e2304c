//! One module per subcommand: its flags, and turning them into one library call.

pub mod check;
pub mod comment;
pub mod diff;
pub mod embed;
pub mod lint;
pub mod lock;
pub mod stress;
pub mod suite;
