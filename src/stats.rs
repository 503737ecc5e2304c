//! Paired statistics.
