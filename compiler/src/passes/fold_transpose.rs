//! `stablehlo-fold-transpose`: a transpose feeding a `dot_general` becomes part of
//! the dot's dimension numbers.
//!
//! `dot_general(transpose(x, p), y)` reads dimension `i` of its operand from dimension
//! `p[i]` of `x`, so batching and contracting dimension `i` become `p[i]`. The result
//! lists each operand's free dimensions in increasing order, so the fold is exact only
//! when `p` keeps the free dimensions in their order; otherwise the transpose stays.
//! This is every `nn.Linear` (`x @ W.T`) and most attention products; the transpose
//! is left for `stablehlo-dce` when nothing else reads it.

use melior::ir::Module;
use melior::Context;
use mlir_sys::MlirOperation;
use tpuc_dialects::stablehlo::{dot_dims_attr, DotDims};

use super::{ir, Pass};
use crate::error::CompileError;

pub struct FoldTranspose;

impl Pass for FoldTranspose {
    fn name(&self) -> &'static str {
        "stablehlo-fold-transpose"
    }
    fn description(&self) -> &'static str {
        "fold transposes of dot_general operands into its dimension numbers"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for block in ir::function_blocks(&module) {
            ir::for_each_op(block, |op| {
                if ir::op_name(op) == "stablehlo.dot_general" {
                    fold(op, 0);
                    fold(op, 1);
                }
            });
        }
        Ok(module)
    }
}

/// Folds a transpose into operand `side` (0 lhs, 1 rhs) of `dot`, when exact.
fn fold(dot: MlirOperation, side: usize) {
    let operand = ir::operands(dot)[side];
    let Some(t) = ir::defining_op(operand).filter(|o| ir::op_name(*o) == "stablehlo.transpose")
    else {
        return;
    };
    let (Some(p), Some(text)) = (
        ir::i64_array(t, "permutation"),
        ir::attribute_text(dot, "dot_dimension_numbers"),
    ) else {
        return;
    };
    let mut d = DotDims::parse(&text);
    let (batch, contract) = if side == 0 {
        (&mut d.lhs_batch, &mut d.lhs_contract)
    } else {
        (&mut d.rhs_batch, &mut d.rhs_contract)
    };
    let rank = p.len() as i64;
    if batch
        .iter()
        .chain(contract.iter())
        .any(|&i| i < 0 || i >= rank)
    {
        return;
    }
    // Free dimensions of the operand, in order, mapped into the transpose's source.
    let free: Vec<i64> = (0..rank)
        .filter(|i| !batch.contains(i) && !contract.contains(i))
        .map(|i| p[i as usize])
        .collect();
    if free.windows(2).any(|w| w[0] > w[1]) {
        return;
    }
    for i in batch.iter_mut().chain(contract.iter_mut()) {
        *i = p[*i as usize];
    }
    if ir::set_attribute(dot, "dot_dimension_numbers", &dot_dims_attr(&d)) {
        ir::set_operand(dot, side as isize, ir::operands(t)[0]);
    }
}
