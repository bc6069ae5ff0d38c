//! Passes over MLIR modules, registered by name and composed into pipelines.
//!
//! A pass takes a module and returns the module to continue with (rewriting passes
//! rebuild functions, see `lower_aten_to_stablehlo`). Passes that need data take it as
//! options in the pipeline string (`stablehlo-merge-dots{packable=0,1}`), made by
//! [`create`] from a [`PassSpec`]. `tpuc opt --pass-pipeline=a,b` runs any sequence of
//! them; [`crate::pipeline::for_compile`] builds what `tpuc compile` runs
//! (`--print-pipeline` prints it; `--print-ir-after`/`--timing` show it run). The
//! target-specific passes live in their target's module (`crate::targets::neuron`) and
//! are registered here with the rest.

pub mod composites;
pub mod cse;
pub mod dce;
pub mod expert_parallel;
pub mod fold_batch_reshape;
pub mod fold_constants;
pub mod fold_repeat_kv;
pub mod fold_repeated_dot_operand;
pub mod fold_transpose;
pub mod gather_to_slice;
pub mod grouped_mm_to_ragged_dot;
pub(crate) mod ir;
pub mod lower_aten_to_stablehlo;
pub mod mark_state_aliases;
pub mod matmul_precision;
pub mod merge_dots;
pub mod optimizer;
pub mod outline_aten_composites;
pub mod propagate_sharding;
pub mod seed_sharding;
pub mod simplify;
pub mod take_records;
pub mod verify_stablehlo;

use melior::ir::Module;
use melior::Context;

pub use matmul_precision::MatmulPrecision;

use crate::error::CompileError;
use crate::pipeline::PassSpec;

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
    /// `{grouped-mm=routed|dense}`: the form of mixture-of-experts grouped matmuls
    /// (dense for targets without data-dependent loops).
    pub grouped_mm: lower_aten_to_stablehlo::GroupedMmForm,
}

impl Pass for LowerAtenToStablehlo {
    fn name(&self) -> &'static str {
        "lower-aten-to-stablehlo"
    }
    fn description(&self) -> &'static str {
        "rewrite every aten.* op into StableHLO (reports all unsupported ops at once)"
    }
    fn run<'c>(&self, ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        lower_aten_to_stablehlo::run_with(ctx, &module, &self.custom, self.grouped_mm)
    }
}

/// What the driver lends the passes it creates: user lowerings for
/// `lower-aten-to-stablehlo` and where `tpuc-take-records` puts what it takes.
#[derive(Clone, Default)]
pub struct PassEnv {
    pub custom_lowerings: Vec<lower_aten_to_stablehlo::CustomLowering>,
    pub records: Option<std::sync::Arc<std::sync::Mutex<take_records::Records>>>,
}

/// Makes a pass from its options.
type Constructor = fn(&PassSpec, &PassEnv) -> Result<Box<dyn Pass>, CompileError>;

/// A pass without options.
fn plain(spec: &PassSpec, pass: impl Pass + 'static) -> Result<Box<dyn Pass>, CompileError> {
    spec.expect_options(&[])?;
    Ok(Box::new(pass))
}

/// Every registered pass: its name and how to make it. Target passes come from their
/// target's module.
fn entries() -> Vec<(&'static str, Constructor)> {
    use crate::targets::neuron;
    vec![
        (fold_repeat_kv::NAME, |s, _| {
            plain(s, fold_repeat_kv::FoldRepeatKv)
        }),
        ("aten-outline-composites", |s, _| {
            plain(s, outline_aten_composites::OutlineAtenComposites)
        }),
        ("lower-aten-to-stablehlo", |s, env| {
            s.expect_options(&["grouped-mm"])?;
            let grouped_mm = match s.option("grouped-mm") {
                None => Default::default(),
                Some(v) => lower_aten_to_stablehlo::GroupedMmForm::parse(v).ok_or_else(|| {
                    CompileError::PassOption {
                        pass: "lower-aten-to-stablehlo".into(),
                        message: format!("grouped-mm is `routed` or `dense`, not `{v}`"),
                    }
                })?,
            };
            Ok(Box::new(LowerAtenToStablehlo {
                custom: env.custom_lowerings.clone(),
                grouped_mm,
            }))
        }),
        ("matmul-precision-default", |s, _| {
            plain(
                s,
                matmul_precision::SetMatmulPrecision(MatmulPrecision::Default),
            )
        }),
        ("matmul-precision-high", |s, _| {
            plain(
                s,
                matmul_precision::SetMatmulPrecision(MatmulPrecision::High),
            )
        }),
        ("matmul-precision-highest", |s, _| {
            plain(
                s,
                matmul_precision::SetMatmulPrecision(MatmulPrecision::Highest),
            )
        }),
        (optimizer::NAME, |s, _| {
            Ok(Box::new(optimizer::Optimizer::from_spec(s)?))
        }),
        ("stablehlo-fold-constants", |s, _| {
            plain(s, fold_constants::FoldConstants)
        }),
        ("stablehlo-simplify", |s, _| {
            plain(s, simplify::StablehloSimplify)
        }),
        ("stablehlo-gather-to-slice", |s, _| {
            plain(s, gather_to_slice::GatherToSlice)
        }),
        ("stablehlo-fold-transpose", |s, _| {
            plain(s, fold_transpose::FoldTranspose)
        }),
        ("stablehlo-outline-composites", |s, _| {
            plain(s, composites::OutlineComposites)
        }),
        ("stablehlo-fold-batch-reshape", |s, _| {
            plain(s, fold_batch_reshape::FoldBatchReshape)
        }),
        (fold_repeated_dot_operand::NAME, |s, _| {
            plain(s, fold_repeated_dot_operand::FoldRepeatedDotOperand)
        }),
        (merge_dots::NAME, |s, _| {
            s.expect_options(&["packable"])?;
            let packable = s
                .option("packable")
                .map(|v| crate::pipeline::parse_indices(merge_dots::NAME, "packable", v))
                .transpose()?;
            Ok(Box::new(merge_dots::MergeDots { packable }))
        }),
        ("stablehlo-dce", |s, _| plain(s, dce::StablehloDce)),
        ("stablehlo-cse", |s, _| plain(s, cse::StablehloCse)),
        (seed_sharding::NAME, |s, _| {
            // Checked when run, against @main's arguments.
            Ok(Box::new(seed_sharding::SeedSharding(
                (!s.options.is_empty()).then(|| s.clone()),
            )))
        }),
        (propagate_sharding::NAME, |s, _| {
            plain(s, propagate_sharding::PropagateSharding)
        }),
        (expert_parallel::NAME, |s, _| {
            plain(s, expert_parallel::ExpertParallel)
        }),
        (neuron::legalize::NAME, |s, _| {
            plain(s, neuron::legalize::NeuronLegalize { narrow_int64: true })
        }),
        (neuron::legalize::NAME_KEEP_INT64, |s, _| {
            plain(
                s,
                neuron::legalize::NeuronLegalize {
                    narrow_int64: false,
                },
            )
        }),
        ("neuron-auto-cast-bf16", |s, _| {
            plain(
                s,
                neuron::auto_cast::NeuronAutoCast(tpuc_artifact::DType::Bf16),
            )
        }),
        ("neuron-auto-cast-fp16", |s, _| {
            plain(
                s,
                neuron::auto_cast::NeuronAutoCast(tpuc_artifact::DType::F16),
            )
        }),
        (neuron::check::NAME, |s, _| {
            s.expect_options(&["chip"])?;
            let chip = match s.option("chip") {
                None => None,
                Some(c) => {
                    Some(
                        neuron::Chip::parse(c).ok_or_else(|| CompileError::PassOption {
                            pass: neuron::check::NAME.into(),
                            message: format!("unknown chip `{c}` (known: trn1, trn2, trn3, inf2)"),
                        })?,
                    )
                }
            };
            Ok(Box::new(neuron::check::NeuronCheck { chip }))
        }),
        (grouped_mm_to_ragged_dot::NAME, |s, _| {
            s.expect_options(&["emulated"])?;
            let emulated = match s.option("emulated") {
                None | Some("false") => false,
                Some("true") => true,
                Some(v) => {
                    return Err(CompileError::PassOption {
                        pass: grouped_mm_to_ragged_dot::NAME.into(),
                        message: format!("emulated is `true` or `false`, not `{v}`"),
                    })
                }
            };
            Ok(Box::new(grouped_mm_to_ragged_dot::GroupedMmToRaggedDot {
                emulated,
            }))
        }),
        ("verify-stablehlo", |s, _| {
            plain(s, verify_stablehlo::VerifyStablehlo)
        }),
        (mark_state_aliases::NAME, |s, _| {
            Ok(Box::new(mark_state_aliases::MarkStateAliases::from_spec(
                s,
            )?))
        }),
        (take_records::NAME, |s, env| {
            s.expect_options(&[])?;
            Ok(Box::new(take_records::TakeRecords {
                sink: env.records.clone(),
            }))
        }),
    ]
}

/// Every registered pass, made without options (`tpuc opt --list-passes`).
pub fn registry() -> Vec<Box<dyn Pass>> {
    let env = PassEnv::default();
    entries()
        .into_iter()
        .filter_map(|(name, make)| make(&PassSpec::new(name), &env).ok())
        .collect()
}

/// The names of every registered pass.
pub fn names() -> Vec<&'static str> {
    entries().into_iter().map(|(name, _)| name).collect()
}

/// The pass `spec` names, with its options.
pub fn create(spec: &PassSpec, env: &PassEnv) -> Result<Box<dyn Pass>, CompileError> {
    let (_, make) = entries()
        .into_iter()
        .find(|(name, _)| *name == spec.name)
        .ok_or_else(|| CompileError::UnknownPass {
            name: spec.name.clone(),
            known: names().into_iter().map(String::from).collect(),
        })?;
    make(spec, env)
}

/// The passes of `pipeline`, made with `env`.
pub fn instantiate(
    pipeline: &[PassSpec],
    env: &PassEnv,
) -> Result<Vec<Box<dyn Pass>>, CompileError> {
    pipeline.iter().map(|spec| create(spec, env)).collect()
}

/// Parses a pipeline string (`a,b{key=value},c`) into passes; unknown names are an
/// error listing the known ones.
pub fn parse_pipeline(text: &str) -> Result<Vec<Box<dyn Pass>>, CompileError> {
    instantiate(&crate::pipeline::parse(text)?, &PassEnv::default())
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
