//! The model's own FLOPs: what the exported graph's matrix products cost by their
//! definition, counted on the imported ATen-level module before any lowering decision.
//!
//! A compiled program's FLOPs (XLA's cost analysis) include whatever the lowering and
//! XLA added; these are the yardstick they are compared with (`tpuc report`: "x the
//! model's own"). Counted, at 2 FLOPs per multiply-add:
//!
//! - `mm`, `bmm`, `matmul`, `addmm`, `baddbmm`, `addbmm`, `linear`: 2 x result elements
//!   x the contracted size (times the summed batch for `addbmm`);
//! - convolutions (`convolution`, `conv1d/2d/3d`, `conv_transpose1d/2d/3d`): 2 x output
//!   elements x the kernel's elements per output channel (a transposed one: 2 x input
//!   elements x the kernel's elements per input channel);
//! - scaled dot-product attention (every overload): 2 x the query's elements x the key
//!   length for the scores, and as much again for the output, the full rectangle
//!   (a causal mask halves what a fused kernel computes; PyTorch's math backend and
//!   tpuc compute all of it);
//! - grouped matmuls (`_grouped_mm`, transformers' `grouped_mm_fallback`): each row by
//!   its own expert only, 2 x result elements x the contracted size: the routed cost.
//!
//! Elementwise work, normalizations and softmax are not counted (a few percent of a
//! transformer's FLOPs); nor are ops inside control flow bodies more than once.

use melior::ir::Module;
use mlir_sys::MlirOperation;
use tpuc_dialects::TensorType;

use crate::passes::ir;

/// The FLOPs of one call of `module`'s `@main` (ATen level), as the module header says.
pub fn of_aten(module: &Module<'_>) -> f64 {
    let Some(main) = ir::main_block(module) else {
        return 0.0;
    };
    let mut total = 0.0;
    ir::for_each_op(main, |op| total += of_op(op));
    total
}

fn elements(t: &TensorType) -> f64 {
    t.shape.iter().map(|&d| d.max(0) as f64).product()
}

/// The type of the tensor operand called `name` (`operand_names`).
fn operand(op: MlirOperation, name: &str) -> Option<TensorType> {
    let names = ir::array_elements(op, "operand_names");
    let i = names
        .iter()
        .position(|a| ir::string_value(*a).as_deref() == Some(name))?;
    ir::tensor_type(*ir::operands(op).get(i)?)
}

fn first_operand(op: MlirOperation, names: &[&str]) -> Option<TensorType> {
    names.iter().find_map(|n| operand(op, n))
}

/// FLOPs of one ATen op (0 for what is not counted).
fn of_op(op: MlirOperation) -> f64 {
    let name = ir::op_name(op);
    let Some(base) = name
        .strip_prefix("aten.")
        .or_else(|| name.strip_prefix("transformers."))
    else {
        return 0.0;
    };
    let base = base.split('.').next().unwrap_or(base);
    let Some(result) = ir::results(op).first().and_then(|r| ir::tensor_type(*r)) else {
        return 0.0;
    };
    let last = |t: &TensorType| t.shape.last().map_or(1.0, |&d| d.max(0) as f64);
    match base {
        "mm"
        | "bmm"
        | "matmul"
        | "addmm"
        | "baddbmm"
        | "linear"
        | "_grouped_mm"
        | "grouped_mm_fallback" => {
            let Some(lhs) = first_operand(op, &["input", "self", "mat1", "batch1"]) else {
                return 0.0;
            };
            2.0 * elements(&result) * last(&lhs)
        }
        "addbmm" => {
            let Some(b1) = operand(op, "batch1") else {
                return 0.0;
            };
            let batch = b1.shape.first().map_or(1.0, |&d| d.max(0) as f64);
            2.0 * elements(&result) * last(&b1) * batch
        }
        "convolution" | "conv1d" | "conv2d" | "conv3d" | "conv_transpose1d"
        | "conv_transpose2d" | "conv_transpose3d" => {
            let (Some(input), Some(weight)) = (operand(op, "input"), operand(op, "weight")) else {
                return 0.0;
            };
            let channels = weight.shape.first().map_or(1.0, |&d| d.max(1) as f64);
            let transposed = base.starts_with("conv_transpose")
                || ir::attribute_text(op, "transposed").as_deref() == Some("true");
            if transposed {
                2.0 * elements(&input) * elements(&weight) / channels
            } else {
                2.0 * elements(&result) * elements(&weight) / channels
            }
        }
        b if b.starts_with("scaled_dot_product")
            || (b.starts_with("_scaled_dot_product") && !b.ends_with("_backward")) =>
        {
            let (Some(q), Some(k)) = (operand(op, "query"), operand(op, "key")) else {
                return 0.0;
            };
            let keys = k
                .shape
                .len()
                .checked_sub(2)
                .map_or(1.0, |i| k.shape[i].max(0) as f64);
            2.0 * elements(&q) * keys + 2.0 * elements(&result) * keys
        }
        _ => 0.0,
    }
}
