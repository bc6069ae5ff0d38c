//! Integration tests of the `tpuc` command line and the CLI library: one test binary
//! (MLIR linked once), one module per feature, the shared helpers in `common`.
//!
//! The modules that compile in process (`neuron`, `pipeline`, `sharded_decoders`,
//! `tpu`) or need `tpuc compile` need the `compiler` feature; the runtime-only build
//! keeps the rest.

mod commands;
mod common;
mod corpus;
mod diverge;
mod dynamic;
mod faults;
mod neuron;
mod pipeline;
mod plan;
mod serve;
mod sharded_decoders;
mod sharded_state;
mod sharding;
mod state;
mod tpu;
mod training;
