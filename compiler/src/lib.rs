//! tpuc compiler: torch.export programs to StableHLO, ahead of time.
//!
//! The flow: [`frontend::load`] reads a `.pt2` archive (or bare `model.json`),
//! [`import::import_graph`] builds an ATen-level MLIR module, the passes of the
//! pipeline [`pipeline::for_compile`] builds (`-O0`..`-O2`, the target's passes,
//! partitioning) lower it to StableHLO, clean it up and verify it, and
//! [`artifact::write`] produces the artifact (manifest, program, weights). [`driver`]
//! runs it; [`targets`] says what each target adds and supports.
//!
//! This file only declares the modules and re-exports the library API.
//!
//! ```no_run
//! use std::path::Path;
//! let options = tpuc_compiler::CompileOptions::default();
//! let report = tpuc_compiler::compile(Path::new("model.pt2"), Path::new("model.tpuc"), &options)?;
//! println!("{} ops lowered", report.num_nodes);
//! # Ok::<(), tpuc_compiler::CompileError>(())
//! ```

pub mod artifact;
pub mod driver;
pub mod dynamic;
pub mod error;
pub mod frontend;
pub mod import;
pub mod model_flops;
pub mod options;
pub mod passes;
pub mod pipeline;
pub mod printer;
pub mod sharding;
pub mod targets;
pub mod training;

pub use driver::{
    compile, compile_pipeline, compile_to_aten_mlir, compile_to_aten_mlir_with, compile_to_mlir,
    lower_to_stablehlo, lower_to_stablehlo_with, new_context, run_opt, run_opt_to_hlo, Emit,
};
pub use error::{CompileError, NeuronDiagnostic, UnsupportedOp};
pub use frontend::FrontendError;
pub use options::{
    CompileOptions, CompileReport, FinishFn, IrFn, MissingWeights, Progress, ProgressFn,
    ShardPreset, ShardingRequest, ShardingSettings, StageTime,
};
pub use printer::{
    print_module, print_module_with_locations, print_program, program_with_node_locations,
};
pub use targets::Target;

/// The StableHLO version tpuc's output is written against (portable across PJRT
/// plugins that report at least this version).
pub const STABLEHLO_VERSION: &str = "1.0.0";
