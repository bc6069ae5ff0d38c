//! `matmul-precision-{default,high}`: the precision f32 contractions ask for.
//!
//! The lowerings write every f32 and f64 `dot_general` and `convolution` with
//! `precision HIGHEST`: PyTorch computes f32 matmuls in full f32 on CPU and (without
//! TF32) GPU, so that is what matches its numbers. TPUs run f32 matmuls as bf16
//! passes on the MXU: `DEFAULT` is one pass (fastest; about bf16 accuracy), `HIGH`
//! three (bf16_3x), `HIGHEST` full f32 accuracy (six passes). GPUs may use TF32 at
//! `DEFAULT`. XLA's CPU backend computes in f32 whatever is asked. This pass sets the
//! f32 contractions to the precision the user chose (`tpuc compile --matmul-precision`);
//! f64 stays at `HIGHEST`, half-precision contractions carry no precision (they
//! accumulate in f32 already).

use melior::ir::Module;
use melior::Context;
use tpuc_artifact::DType;

use super::{ir, Pass};
use crate::error::CompileError;

/// The precision of f32 matmuls and convolutions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MatmulPrecision {
    /// One bf16 pass on TPUs (XLA's `DEFAULT`).
    Default,
    /// Three bf16 passes on TPUs (`HIGH`).
    High,
    /// Full f32 (`HIGHEST`): PyTorch's numbers; what the lowerings emit.
    #[default]
    Highest,
}

impl MatmulPrecision {
    pub fn parse(s: &str) -> Option<MatmulPrecision> {
        match s {
            "default" => Some(MatmulPrecision::Default),
            "high" => Some(MatmulPrecision::High),
            "highest" => Some(MatmulPrecision::Highest),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            MatmulPrecision::Default => "default",
            MatmulPrecision::High => "high",
            MatmulPrecision::Highest => "highest",
        }
    }
    fn keyword(self) -> &'static str {
        match self {
            MatmulPrecision::Default => "DEFAULT",
            MatmulPrecision::High => "HIGH",
            MatmulPrecision::Highest => "HIGHEST",
        }
    }
}

pub struct SetMatmulPrecision(pub MatmulPrecision);

/// The pass that sets `precision` (`matmul-precision-high`...).
pub fn name(precision: MatmulPrecision) -> &'static str {
    match precision {
        MatmulPrecision::Default => "matmul-precision-default",
        MatmulPrecision::High => "matmul-precision-high",
        MatmulPrecision::Highest => "matmul-precision-highest",
    }
}

impl Pass for SetMatmulPrecision {
    fn name(&self) -> &'static str {
        name(self.0)
    }
    fn description(&self) -> &'static str {
        match self.0 {
            MatmulPrecision::Default => {
                "f32 dot_general/convolution at precision DEFAULT (one bf16 pass on TPU)"
            }
            MatmulPrecision::High => {
                "f32 dot_general/convolution at precision HIGH (three bf16 passes on TPU)"
            }
            MatmulPrecision::Highest => {
                "f32 dot_general/convolution at precision HIGHEST (full f32)"
            }
        }
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let k = self.0.keyword();
        let text = format!("[#stablehlo<precision {k}>, #stablehlo<precision {k}>]");
        for body in ir::function_bodies(&module) {
            for op in body {
                let name = ir::op_name(op);
                if name != "stablehlo.dot_general" && name != "stablehlo.convolution" {
                    continue;
                }
                let f32_input = ir::operands(op)
                    .first()
                    .and_then(|v| ir::tensor_type(*v))
                    .is_some_and(|t| t.dtype == DType::F32);
                if f32_input && !ir::set_attribute(op, "precision_config", &text) {
                    return Err(CompileError::Internal(format!(
                        "cannot parse precision attribute {text}"
                    )));
                }
            }
        }
        Ok(module)
    }
}
