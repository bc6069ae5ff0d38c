//! The portable StableHLO target (`--target tpu`, `stablehlo` or `pjrt`): the program
//! as the common pipeline writes it, with composites, for TPUs and any PJRT plugin.
//! It supports every feature; its artifact holds `program.mlir` and the weights (and,
//! with `--topology`, the TPU executables the caller's finish step adds).

use super::TargetSpec;

pub fn spec() -> TargetSpec {
    TargetSpec {
        name: "tpu",
        outlines_composites: true,
        runs_loops: true,
        unsupported: Vec::new(),
    }
}
