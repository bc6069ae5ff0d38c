//! Passes over MLIR modules, registered by name and composed into pipelines.
//!
//! A pass takes a module and returns the module to continue with (rewriting passes
//! rebuild functions, see `lower_aten_to_stablehlo`). `tpuc opt --pass-pipeline=a,b`
//! runs any sequence of them; [`pipeline_for`] gives what `tpuc compile -O<n>` runs
//! (`--print-ir-after`/`--timing` show it).

pub mod composites;
pub mod cse;
pub mod dce;
pub mod fold_batch_reshape;
pub mod fold_constants;
pub mod fold_transpose;
pub mod gather_to_slice;
pub(crate) mod ir;
pub mod lower_aten_to_stablehlo;
pub mod matmul_precision;
pub mod merge_dots;
pub mod neuron_auto_cast;
pub mod neuron_check;
pub mod neuron_legalize;
pub mod outline_aten_composites;
pub mod propagate_sharding;
pub mod simplify;
pub mod verify_stablehlo;

use melior::ir::Module;
use melior::Context;

pub use matmul_precision::MatmulPrecision;

use crate::CompileError;

/// A named transformation of a module.
pub trait Pass {
    /// The name used in pipeline strings (`lower-aten-to-stablehlo`).
    fn name(&self) -> &'static str;
    /// One line for `tpuc opt --help`.
    fn description(&self) -> &'static str;
    fn run<'c>(&self, ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError>;
}

/// How much `tpuc compile` optimizes (`-O0`, `-O1`, `-O2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum OptLevel {
    /// Lowering and verification only: the program as the lowerings wrote it.
    O0,
    /// Cleanup on StableHLO: dead code removed, identical ops merged.
    O1,
    /// Everything tpuc does: also GELU/SiLU/softmax/norm/SDPA nodes as
    /// `stablehlo.composite` ops sharing their decompositions, argument-free values
    /// folded into constants, exact algebraic simplification, transposes folded into
    /// dot_general, and well-known subgraphs (softmax, norms, GELU, SiLU) outlined
    /// into composites.
    #[default]
    O2,
}

impl OptLevel {
    /// `0`, `1` or `2`.
    pub fn parse(s: &str) -> Option<OptLevel> {
        match s {
            "0" => Some(OptLevel::O0),
            "1" => Some(OptLevel::O1),
            "2" => Some(OptLevel::O2),
            _ => None,
        }
    }
}

/// The `lower-aten-to-stablehlo` pass, optionally with user lowerings.
#[derive(Default)]
pub struct LowerAtenToStablehlo {
    pub custom: Vec<lower_aten_to_stablehlo::CustomLowering>,
}

impl Pass for LowerAtenToStablehlo {
    fn name(&self) -> &'static str {
        "lower-aten-to-stablehlo"
    }
    fn description(&self) -> &'static str {
        "rewrite every aten.* op into StableHLO (reports all unsupported ops at once)"
    }
    fn run<'c>(&self, ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        lower_aten_to_stablehlo::run_with(ctx, &module, &self.custom)
    }
}

/// Every registered pass.
pub fn registry() -> Vec<Box<dyn Pass>> {
    vec![
        Box::new(outline_aten_composites::OutlineAtenComposites),
        Box::new(LowerAtenToStablehlo::default()),
        Box::new(matmul_precision::SetMatmulPrecision(
            MatmulPrecision::Default,
        )),
        Box::new(matmul_precision::SetMatmulPrecision(MatmulPrecision::High)),
        Box::new(matmul_precision::SetMatmulPrecision(
            MatmulPrecision::Highest,
        )),
        Box::new(fold_constants::FoldConstants),
        Box::new(simplify::StablehloSimplify),
        Box::new(gather_to_slice::GatherToSlice),
        Box::new(fold_transpose::FoldTranspose),
        Box::new(composites::OutlineComposites),
        Box::new(fold_batch_reshape::FoldBatchReshape),
        Box::new(merge_dots::MergeDots),
        Box::new(dce::StablehloDce),
        Box::new(cse::StablehloCse),
        Box::new(propagate_sharding::PropagateSharding),
        Box::new(neuron_legalize::NeuronLegalize { narrow_int64: true }),
        Box::new(neuron_legalize::NeuronLegalize {
            narrow_int64: false,
        }),
        Box::new(neuron_auto_cast::NeuronAutoCast(tpuc_runtime::DType::Bf16)),
        Box::new(neuron_auto_cast::NeuronAutoCast(tpuc_runtime::DType::F16)),
        Box::new(neuron_check::NeuronCheck),
        Box::new(verify_stablehlo::VerifyStablehlo),
    ]
}

/// The pipeline of `level`, with f32 matmuls at `precision` (a choice of numerics, so
/// at every level) and `custom` lowerings added to `lower-aten-to-stablehlo`.
pub fn pipeline_for(
    level: OptLevel,
    precision: MatmulPrecision,
    custom: &[lower_aten_to_stablehlo::CustomLowering],
) -> Vec<Box<dyn Pass>> {
    pipeline_for_target(level, precision, custom, None)
}

/// [`pipeline_for`] for a target: with `neuron`, composites are never outlined (Neuron
/// takes plain HLO) and the Neuron passes run last, before verification: legalization,
/// `--auto-cast`, then the check of every op.
pub fn pipeline_for_target(
    level: OptLevel,
    precision: MatmulPrecision,
    custom: &[lower_aten_to_stablehlo::CustomLowering],
    neuron: Option<&crate::neuron::NeuronOptions>,
) -> Vec<Box<dyn Pass>> {
    let composites = neuron.is_none();
    let mut passes: Vec<Box<dyn Pass>> = Vec::new();
    if level >= OptLevel::O2 && composites {
        passes.push(Box::new(outline_aten_composites::OutlineAtenComposites));
    }
    passes.push(Box::new(LowerAtenToStablehlo {
        custom: custom.to_vec(),
    }));
    if precision != MatmulPrecision::Highest {
        passes.push(Box::new(matmul_precision::SetMatmulPrecision(precision)));
    }
    if level >= OptLevel::O2 {
        passes.push(Box::new(fold_constants::FoldConstants));
        passes.push(Box::new(simplify::StablehloSimplify));
        passes.push(Box::new(gather_to_slice::GatherToSlice));
        passes.push(Box::new(fold_transpose::FoldTranspose));
    }
    if level >= OptLevel::O1 {
        passes.push(Box::new(dce::StablehloDce));
        passes.push(Box::new(cse::StablehloCse));
    }
    if level >= OptLevel::O2 {
        // On the cleaned-up program, so that patterns see one op per computation; the
        // constants the composites copied are then dead.
        if composites {
            passes.push(Box::new(composites::OutlineComposites));
        }
        passes.push(Box::new(fold_batch_reshape::FoldBatchReshape));
        // Packs only the weights the caller marked (`compile` does, for artifacts).
        passes.push(Box::new(merge_dots::MergeDots));
        passes.push(Box::new(dce::StablehloDce));
    }
    if let Some(n) = neuron {
        passes.push(Box::new(neuron_legalize::NeuronLegalize {
            narrow_int64: n.narrow_int64,
        }));
        match n.auto_cast {
            crate::neuron::AutoCast::None => {}
            crate::neuron::AutoCast::Bf16 => passes.push(Box::new(
                neuron_auto_cast::NeuronAutoCast(tpuc_runtime::DType::Bf16),
            )),
            crate::neuron::AutoCast::Fp16 => passes.push(Box::new(
                neuron_auto_cast::NeuronAutoCast(tpuc_runtime::DType::F16),
            )),
        }
        passes.push(Box::new(neuron_check::NeuronCheck));
    }
    passes.push(Box::new(verify_stablehlo::VerifyStablehlo));
    passes
}

/// Parses `a,b,c` into passes; unknown names are an error listing the known ones.
pub fn parse_pipeline(text: &str) -> Result<Vec<Box<dyn Pass>>, CompileError> {
    let mut out = Vec::new();
    for name in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let name = name
            .trim_start_matches("builtin.module(")
            .trim_end_matches(')');
        let pass = registry()
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| CompileError::UnknownPass {
                name: name.to_string(),
                known: registry().iter().map(|p| p.name().to_string()).collect(),
            })?;
        out.push(pass);
    }
    Ok(out)
}

/// Runs `pipeline` on `module`.
pub fn run_pipeline<'c>(
    ctx: &'c Context,
    module: Module<'c>,
    pipeline: &[Box<dyn Pass>],
) -> Result<Module<'c>, CompileError> {
    let mut m = module;
    for p in pipeline {
        m = p.run(ctx, m)?;
    }
    Ok(m)
}
