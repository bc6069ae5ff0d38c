//! `stablehlo-simplify`: rewrites that are exact in IEEE arithmetic, in place.
//!
//! - `x * 1`, `1 * x`, `x / 1` → `x`; `x - (+0)` → `x`; `x + 0` → `x` for integers,
//!   and for floats only when the zero is `-0` (`-0 + +0` is `+0`, so `x + (+0)` is
//!   not the identity).
//! - `convert` to the same type → `x`; `convert(convert(x, W), T)` → `x` when `T` is
//!   `x`'s type and `W` holds every value of it (f16 → f32 → f16, i32 → i64 → i32);
//!   a lossy round trip (f32 → f16 → f32) stays.
//! - `reshape` to the same type → `x`; `reshape(reshape(x))` → `reshape(x)`.
//! - `transpose` with the identity permutation → `x`; `transpose(transpose(x, p), q)`
//!   → `transpose(x, p∘q)`.
//! - `broadcast_in_dim` to the same type with dimensions `0..rank` → `x`.
//!
//! A rewrite only redirects uses (or an operand); what becomes dead is removed by
//! `stablehlo-dce`, which runs after this pass.

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use tpuc_artifact::DType;

use super::{ir, Pass};
use crate::error::CompileError;

pub struct StablehloSimplify;

impl Pass for StablehloSimplify {
    fn name(&self) -> &'static str {
        "stablehlo-simplify"
    }
    fn description(&self) -> &'static str {
        "exact algebraic simplification (x*1, x/1, x-0, integer x+0) and convert/reshape/transpose/broadcast chains"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for block in ir::function_blocks(&module) {
            // In order: an op sees its operands already simplified.
            ir::for_each_op(block, simplify);
        }
        Ok(module)
    }
}

fn simplify(op: MlirOperation) {
    let name = ir::op_name(op);
    let Some(name) = name.strip_prefix("stablehlo.") else {
        return;
    };
    let args = ir::operands(op);
    let results = ir::results(op);
    let (Some(&x), Some(&out)) = (args.first(), results.first()) else {
        return;
    };
    let replacement = match name {
        "multiply" if args.len() == 2 => {
            if ir::splat_value(args[1]) == Some(1.0) {
                Some(args[0])
            } else if ir::splat_value(args[0]) == Some(1.0) {
                Some(args[1])
            } else {
                None
            }
        }
        "divide" if args.len() == 2 => (ir::splat_value(args[1]) == Some(1.0)).then_some(x),
        "subtract" if args.len() == 2 => is_zero(args[1], false).then_some(x),
        "add" if args.len() == 2 => {
            if is_zero(args[1], true) {
                Some(args[0])
            } else if is_zero(args[0], true) {
                Some(args[1])
            } else {
                None
            }
        }
        "convert" => convert(x, out),
        "reshape" => {
            if let Some(inner) =
                ir::defining_op(x).filter(|o| ir::op_name(*o) == "stablehlo.reshape")
            {
                ir::set_operand(op, 0, ir::operands(inner)[0]);
            }
            let x = ir::operands(op)[0];
            ir::same_type(x, out).then_some(x)
        }
        "transpose" => transpose(op, x, out),
        "broadcast_in_dim" => {
            let rank = ir::tensor_type(x).map_or(usize::MAX, |t| t.shape.len());
            let dims = ir::i64_array(op, "broadcast_dimensions");
            let identity = dims.is_some_and(|d| d.iter().copied().eq(0..rank as i64));
            (identity && ir::same_type(x, out)).then_some(x)
        }
        _ => None,
    };
    if let Some(r) = replacement {
        if ir::same_type(r, out) {
            ir::replace_uses(out, r);
        }
    }
}

/// `v` is a splat zero that is an identity for the op: integer 0; for floats, `+0`
/// when subtracted, `-0` when added (`add_identity`).
fn is_zero(v: MlirValue, add_identity: bool) -> bool {
    let Some(z) = ir::splat_value(v).filter(|z| *z == 0.0) else {
        return false;
    };
    let is_float = ir::tensor_type(v).is_some_and(|t| t.dtype.is_float());
    !is_float || z.is_sign_negative() == add_identity
}

/// True when every value of `narrow` is exactly representable in `wide`.
fn holds(wide: DType, narrow: DType) -> bool {
    use DType::*;
    wide == narrow
        || matches!(
            (wide, narrow),
            (F64, F32 | F16 | Bf16 | I32 | I16 | I8 | U8 | Bool)
                | (F32, F16 | Bf16 | I16 | I8 | U8 | Bool)
                | (F16, I8 | U8 | Bool)
                | (Bf16, I8 | U8 | Bool)
                | (I64, I32 | I16 | I8 | U8 | Bool)
                | (I32, I16 | I8 | U8 | Bool)
                | (I16, I8 | U8 | Bool)
                | (I8 | U8, Bool)
        )
}

fn convert(x: MlirValue, out: MlirValue) -> Option<MlirValue> {
    if ir::same_type(x, out) {
        return Some(x);
    }
    let inner = ir::defining_op(x).filter(|o| ir::op_name(*o) == "stablehlo.convert")?;
    let source = ir::operands(inner)[0];
    let (s, w) = (ir::tensor_type(source)?, ir::tensor_type(x)?);
    (ir::same_type(source, out) && holds(w.dtype, s.dtype)).then_some(source)
}

fn transpose(op: MlirOperation, x: MlirValue, out: MlirValue) -> Option<MlirValue> {
    let mut perm = ir::i64_array(op, "permutation")?;
    let mut x = x;
    if let Some(inner) = ir::defining_op(x).filter(|o| ir::op_name(*o) == "stablehlo.transpose") {
        let p = ir::i64_array(inner, "permutation")?;
        // out[i] = inner[q[i]] = source[p[q[i]]]
        let composed: Option<Vec<i64>> = perm.iter().map(|&q| p.get(q as usize).copied()).collect();
        let composed = composed?;
        let list: Vec<String> = composed.iter().map(i64::to_string).collect();
        if ir::set_attribute(
            op,
            "permutation",
            &format!("array<i64: {}>", list.join(", ")),
        ) {
            x = ir::operands(inner)[0];
            ir::set_operand(op, 0, x);
            perm = composed;
        }
    }
    let identity = perm.iter().copied().eq(0..perm.len() as i64);
    (identity && ir::same_type(x, out)).then_some(x)
}
