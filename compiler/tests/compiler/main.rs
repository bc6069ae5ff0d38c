//! End-to-end tests of the compiler: every corpus model compiles and matches PyTorch
//! on the CPU PJRT plugin, StableHLO snapshots, determinism, bare JSON input, the
//! bad-input list (each error asserted by its text), state, control flow and dynamic
//! shapes.
//!
//! One test binary for the crate (each binary links MLIR statically), one module per
//! feature, the shared helpers in `common`.

mod bad_input;
mod common;
mod control_flow;
mod corpus;
mod divergence;
mod dynamic;
mod grouped_mm;
mod state;
