//! tpuc runtime: loads compiled artifacts and executes them through PJRT plugins.
//!
//! Architecture invariant: this crate never links MLIR or LLVM. A deployment needs
//! only this crate (or the runtime-only binary), an artifact and a PJRT plugin. The
//! invariant is a crate boundary: among tpuc's crates this one depends on
//! `tpuc-artifact` only, which the compiler depends on too (checked by
//! `artifact/tests/boundary.rs`).
//!
//! - [`pjrt`]: the PJRT C API, declared by hand, and safe wrappers (plugin, client,
//!   executables, buffers).
//! - [`session`]: load an artifact directory (manifest, program, weights) and run it.
//! - [`serving`]: a serving directory's programs (prefill buckets and a batched
//!   decode step of `python -m tpuc.llm export`) sharing one KV cache.
//! - [`cache`]: the on-disk cache of compiled executables sessions use.
//! - [`version`]: StableHLO versions and the artifact-vs-plugin range check.
//! - [`discover`]: find a plugin (flag, `TPUC_PJRT_PLUGIN`, `.deps/pjrt`, Python
//!   environments).
//! - [`plugin_logging`]: how much plugins log to stderr (quiet unless asked).
//!
//! The artifact contract (what the compiler writes and this crate reads) is the
//! `tpuc-artifact` crate, re-exported here under its old paths:
//!
//! - [`manifest`], [`layout`]: the manifest and the artifact's file names.
//! - [`npy`], [`safetensors`]: tensor file formats.
//! - [`symbolic`]: dynamic sizes (symbol expressions, ranges, binding to inputs).
//! - [`hlo`]: opcode counts of a compiled (`HloModuleProto`) program.
//! - [`compile_options`]: the compile options PJRT compiles take.
//! - [`sharding`]: device meshes and tensor shardings (split per device, assemble,
//!   their GSPMD and Shardy texts).

pub mod cache;
pub mod compare;
pub mod discover;
pub mod divergence;
pub mod error;
pub mod pjrt;
pub mod plugin_logging;
pub mod serving;
pub mod session;
pub mod tpu;
pub mod training;
pub mod version;

pub use tpuc_artifact::xla::compile_options;
pub use tpuc_artifact::xla::cost as hlo_cost;
pub use tpuc_artifact::xla::opcodes as hlo;
pub use tpuc_artifact::{dtype, layout, manifest, npy, safetensors, sharding, symbolic, tensor};

pub use compile_options::CompileOptions;
pub use dtype::DType;
pub use error::{ErrorCode, Result, RuntimeError};
pub use manifest::Manifest;
pub use pjrt::{
    Buffer, Client, ClientOptions, CompiledMemoryStats, Device, LoadedExecutable, Plugin,
};
pub use session::{
    CacheMode, CompileSource, LoadEvent, LoadOptions, LoadReport, ProgramChoice, ProgressFn,
    Session, ShardedBuffers, TransferStats,
};
pub use tensor::{HostTensor, HostView};
pub use tpuc_artifact::ArtifactError;
