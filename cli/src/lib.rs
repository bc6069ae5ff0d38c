//! Library side of the `tpuc` tools: what more than one binary (or a test) shares, and
//! the Python package's native module (the planner, for `auto_shard=True`).
//!
//! The `tpuc` binary itself lives in `main.rs` and its command modules.

#[cfg(feature = "compiler")]
pub mod coverage;
#[macro_use]
pub mod output;
#[cfg(feature = "compiler")]
pub mod plan;
