//! `stablehlo-fold-batch-reshape`: a batched `dot_general` whose one batch dimension is
//! several leading dimensions merged by reshapes, and whose result is split back into
//! them, becomes one `dot_general` with those dimensions as its batch dimensions.
//!
//! PyTorch's `matmul` of `[B, H, S, D]` tensors reaches Core ATen as
//! `view([B*H, S, D])`, `bmm`, `view([B, H, S, T])`. The merged form is the same
//! computation, but it hides the head dimension: a partitioner cannot keep heads split
//! across devices through `B*H` (its minor part), so a tensor-parallel attention
//! gathers them. With `B` and `H` as batch dimensions it does not have to.
//!
//! Exact (the same products and sums, in the same order per batch element). Runs after
//! the composites are outlined (their patterns match the graph as exported) and on
//! their decompositions too; what becomes dead is left to `stablehlo-dce`.

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use tpuc_dialects::stablehlo::{dot_dims_attr, DotDims};

use super::{ir, Pass};
use crate::error::CompileError;

pub struct FoldBatchReshape;

impl Pass for FoldBatchReshape {
    fn name(&self) -> &'static str {
        "stablehlo-fold-batch-reshape"
    }
    fn description(&self) -> &'static str {
        "unmerge reshape-merged batch dimensions of dot_general (view, bmm, view) into batch dimensions"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for block in ir::function_blocks(&module) {
            ir::for_each_op(block, |op| {
                if ir::op_name(op) == "stablehlo.dot_general" {
                    fold(op);
                }
            });
        }
        Ok(module)
    }
}

fn shape(v: MlirValue) -> Vec<i64> {
    ir::tensor_type(v).map(|t| t.shape).unwrap_or_default()
}

/// The operand of `v`'s defining reshape, when `v` is `reshape(x)` with `x` of shape
/// `batch ++ rest` and `v` of shape `[prod(batch)] ++ rest`.
fn unmerged(v: MlirValue, batch: usize) -> Option<MlirValue> {
    let r = ir::defining_op(v).filter(|o| ir::op_name(*o) == "stablehlo.reshape")?;
    let x = ir::operands(r)[0];
    let (from, to) = (shape(x), shape(v));
    (from.len() == to.len() + batch - 1
        && from[..batch].iter().product::<i64>() == to[0]
        && from[batch..] == to[1..])
        .then_some(x)
}

fn fold(dot: MlirOperation) {
    let Some(text) = ir::attribute_text(dot, "dot_dimension_numbers") else {
        return;
    };
    let d = DotDims::parse(&text);
    if d.lhs_batch != [0] || d.rhs_batch != [0] {
        return;
    }
    // The one user must split the result's batch dimension back.
    let out = ir::result(dot, 0);
    let users = ir::users(out);
    let [split] = users.as_slice() else {
        return;
    };
    if ir::op_name(*split) != "stablehlo.reshape" {
        return;
    }
    let (merged, whole) = (shape(out), shape(ir::result(*split, 0)));
    let Some(k) = (whole.len() + 1).checked_sub(merged.len()) else {
        return;
    };
    if k < 2 || whole[k..] != merged[1..] {
        return;
    }
    let operands = ir::operands(dot);
    let (Some(a), Some(b)) = (unmerged(operands[0], k), unmerged(operands[1], k)) else {
        return;
    };
    if shape(a)[..k] != whole[..k] || shape(b)[..k] != whole[..k] {
        return;
    }
    let shift = k as i64 - 1;
    let batch: Vec<i64> = (0..k as i64).collect();
    let dims = DotDims {
        lhs_batch: batch.clone(),
        rhs_batch: batch,
        lhs_contract: d.lhs_contract.iter().map(|c| c + shift).collect(),
        rhs_contract: d.rhs_contract.iter().map(|c| c + shift).collect(),
    };
    // A copy of the dot (its precision and other attributes kept) on the unmerged
    // operands, typed as the split result, in the split's place.
    let split_out = ir::result(*split, 0);
    // SAFETY: `dot` and `split` are live ops of one block; the clone is inserted into
    // that block (which takes ownership) before `split`, then retyped and rewired.
    let new = unsafe {
        let new = mlir_sys::mlirOperationClone(dot);
        mlir_sys::mlirBlockInsertOwnedOperationBefore(ir::parent_block(*split), *split, new);
        mlir_sys::mlirValueSetType(ir::result(new, 0), ir::value_type(split_out));
        new
    };
    ir::set_operand(new, 0, a);
    ir::set_operand(new, 1, b);
    if ir::set_attribute(new, "dot_dimension_numbers", &dot_dims_attr(&dims)) {
        ir::replace_uses(split_out, ir::result(new, 0));
    } else {
        ir::erase(new);
    }
}
