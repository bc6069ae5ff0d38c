//! `neuron-legalize`: 64-bit types narrowed for Neuron devices.
//!
//! Neuron devices compute in 32 bits: `neuronx-cc` casts int64 to int32 and has no f64.
//! This pass does it in the program, where tpuc can check it: inside `@main` every
//! `i64` value becomes `i32` and every `f64` value `f32` (op results, region arguments,
//! constants). The arguments and results keep their types (PyTorch's contract), with
//! one `convert` at each edge. In PyTorch programs 64-bit integers are indices,
//! positions and sizes, which fit; a constant that does not fit in 32 bits is an error
//! naming its node, except the type's extremes (the identity of a min or max reduction,
//! a "no limit" bound), which become the 32-bit extremes. A `bitcast_convert` of a
//! 64-bit value cannot be narrowed and is refused.
//!
//! `neuron-legalize-keep-int64` narrows f64 only (`tpuc compile --keep-int64`). The
//! pass records what it narrowed in the module attribute `tpuc.neuron_narrowed`
//! (`["i64", "f64"]`), which `compile` turns into warnings for f64.

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use tpuc_artifact::DType;
use tpuc_dialects::TensorType;

use crate::error::CompileError;
use crate::passes::{ir, Pass};

pub const NARROWED_ATTRIBUTE: &str = "tpuc.neuron_narrowed";
/// The pass names: 64-bit integers narrowed (the default) or kept (`--keep-int64`).
pub const NAME: &str = "neuron-legalize";
pub const NAME_KEEP_INT64: &str = "neuron-legalize-keep-int64";

pub struct NeuronLegalize {
    pub narrow_int64: bool,
}

impl Pass for NeuronLegalize {
    fn name(&self) -> &'static str {
        if self.narrow_int64 {
            NAME
        } else {
            NAME_KEEP_INT64
        }
    }
    fn description(&self) -> &'static str {
        if self.narrow_int64 {
            "Neuron: i64 values inside @main as i32 and f64 as f32, converted at the arguments and results"
        } else {
            "Neuron: f64 values inside @main as f32 (i64 kept), converted at the arguments and results"
        }
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let mut narrowed = Vec::new();
        if self.narrow_int64 && narrow(&module, DType::I64, DType::I32)? {
            narrowed.push("i64");
        }
        if narrow(&module, DType::F64, DType::F32)? {
            narrowed.push("f64");
        }
        if !narrowed.is_empty() {
            let list: Vec<String> = narrowed.iter().map(|t| format!("\"{t}\"")).collect();
            let op = module.as_operation().to_raw();
            if !ir::set_attribute(op, NARROWED_ATTRIBUTE, &format!("[{}]", list.join(", "))) {
                return Err(CompileError::Internal(
                    "cannot record the narrowed types".into(),
                ));
            }
        }
        Ok(module)
    }
}

/// The types `neuron-legalize` narrowed in `module` (and takes the record off).
pub fn take_narrowed(module: &Module<'_>) -> Vec<String> {
    let op = module.as_operation().to_raw();
    let text = ir::attribute_text(op, NARROWED_ATTRIBUTE).unwrap_or_default();
    ir::remove_attribute(op, NARROWED_ATTRIBUTE);
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn node_error(op: MlirOperation, message: String) -> CompileError {
    let (node, _) = super::hlo::node_of(op);
    CompileError::Node {
        node: if node.is_empty() { "?".into() } else { node },
        target: ir::op_name(op).to_string(),
        message,
    }
}

fn retyped(v: MlirValue, from: DType, to: DType) -> Option<TensorType> {
    ir::tensor_type(v)
        .filter(|t| t.dtype == from)
        .map(|t| t.with_dtype(to))
}

/// Narrows `from` to `to` inside `@main`; true when anything had type `from`.
fn narrow(module: &Module<'_>, from: DType, to: DType) -> Result<bool, CompileError> {
    let Some(block) = ir::main_block(module) else {
        return Ok(false);
    };
    let ops = ir::nested_ops(block);
    let Some(&first) = ops.first() else {
        return Ok(false);
    };
    let ctx = ir::context(first);
    let ty = |t: &TensorType| {
        ir::parse_type(ctx, &t.mlir())
            .ok_or_else(|| CompileError::Internal(format!("cannot build type {}", t.mlir())))
    };
    let mut changed = false;
    // Arguments: one convert each at the top of the body.
    for arg in ir::block_arguments(block) {
        let Some(t) = retyped(arg, from, to) else {
            continue;
        };
        changed = true;
        let convert = ir::create_op_before(first, "stablehlo.convert", &[arg], &[ty(&t)?], &[]);
        ir::set_location(convert, ir::value_location(arg));
        ir::replace_uses(arg, ir::result(convert, 0));
        ir::set_operand(convert, 0, arg);
    }
    for op in ops {
        let name = ir::op_name(op);
        if name == "func.return" {
            // Results: converted back to the function's types.
            for (i, v) in ir::operands(op).into_iter().enumerate() {
                let Some(t) = ir::tensor_type(v).filter(|t| t.dtype == to) else {
                    continue;
                };
                if !returns_type(block, i, from) {
                    continue;
                }
                let back = t.with_dtype(from);
                let convert =
                    ir::create_op_before(op, "stablehlo.convert", &[v], &[ty(&back)?], &[]);
                ir::set_location(convert, ir::value_location(v));
                ir::set_operand(op, i as isize, ir::result(convert, 0));
            }
            continue;
        }
        for b in ir::region_blocks(op) {
            for a in ir::block_arguments(b) {
                if let Some(t) = retyped(a, from, to) {
                    changed = true;
                    // SAFETY: `a` is a live block argument; the type belongs to `ctx`.
                    unsafe { mlir_sys::mlirValueSetType(a, ty(&t)?) };
                }
            }
        }
        let results = ir::results(op);
        if !results.iter().any(|r| retyped(*r, from, to).is_some()) {
            continue;
        }
        changed = true;
        if name == "stablehlo.bitcast_convert" {
            return Err(node_error(
                op,
                format!(
                    "a bitcast of {} values cannot be narrowed to {} for Neuron devices",
                    from.mlir_name(),
                    to.mlir_name()
                ),
            ));
        }
        if name == "stablehlo.constant" {
            narrow_constant(op, from, to)?;
        }
        for (i, r) in results.iter().enumerate() {
            if let Some(t) = retyped(*r, from, to) {
                ir::set_result_type(op, i as isize, ty(&t)?);
            }
        }
    }
    Ok(changed)
}

/// Whether `@main` (the function holding `block`) declares result `i` of type `dtype`.
fn returns_type(block: mlir_sys::MlirBlock, i: usize, dtype: DType) -> bool {
    let func = ir::block_parent(block);
    ir::function_result_types(func)
        .and_then(|types| types.get(i).cloned())
        .and_then(|t| TensorType::parse(&t).ok())
        .is_some_and(|t| t.dtype == dtype)
}

/// Rewrites the `value` of a constant of `from` as `to`.
fn narrow_constant(op: MlirOperation, from: DType, to: DType) -> Result<(), CompileError> {
    let t = ir::tensor_type(ir::result(op, 0))
        .ok_or_else(|| node_error(op, "a constant without a static type".into()))?;
    let attr = ir::attribute(op, "value")
        .ok_or_else(|| node_error(op, "a constant without a value".into()))?;
    let ctx = ir::context(op);
    let new_ty = ir::parse_type(ctx, &t.with_dtype(to).mlir())
        .ok_or_else(|| CompileError::Internal("cannot build a constant type".into()))?;
    // SAFETY: the attribute is checked to be dense elements of `from` (the result type)
    // before it is read; the new attribute is built from values copied out of it.
    let new = unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(attr) {
            return Err(node_error(
                op,
                "a constant whose value is not dense elements".into(),
            ));
        }
        let splat = mlir_sys::mlirDenseElementsAttrIsSplat(attr);
        let n = if splat { 1 } else { t.num_elements() as usize };
        match from {
            DType::I64 => {
                let mut values = Vec::with_capacity(n);
                for i in 0..n {
                    let v = mlir_sys::mlirDenseElementsAttrGetInt64Value(attr, i as isize);
                    values.push(narrow_i64(v).ok_or_else(|| {
                        node_error(
                            op,
                            format!(
                                "the int64 constant {v} does not fit in int32, which Neuron \
                                 devices compute in; compile with --keep-int64 to keep 64-bit integers"
                            ),
                        )
                    })?);
                }
                if splat {
                    mlir_sys::mlirDenseElementsAttrInt32SplatGet(new_ty, values[0])
                } else {
                    mlir_sys::mlirDenseElementsAttrInt32Get(new_ty, n as isize, values.as_ptr())
                }
            }
            DType::F64 => {
                let values: Vec<f32> = (0..n)
                    .map(|i| mlir_sys::mlirDenseElementsAttrGetDoubleValue(attr, i as isize) as f32)
                    .collect();
                if splat {
                    mlir_sys::mlirDenseElementsAttrFloatSplatGet(new_ty, values[0])
                } else {
                    mlir_sys::mlirDenseElementsAttrFloatGet(new_ty, n as isize, values.as_ptr())
                }
            }
            _ => {
                return Err(CompileError::Internal(format!(
                    "narrowing {from:?} constants"
                )))
            }
        }
    };
    ir::set_attribute_value(op, "value", new);
    Ok(())
}

/// `v` as an int32, the int64 extremes as the int32 extremes; `None` when it does not fit.
fn narrow_i64(v: i64) -> Option<i32> {
    match v {
        i64::MIN => Some(i32::MIN),
        i64::MAX => Some(i32::MAX),
        v => i32::try_from(v).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::narrow_i64;

    #[test]
    fn int64_constants_narrow_only_when_they_fit() {
        assert_eq!(narrow_i64(-5), Some(-5));
        assert_eq!(narrow_i64(i64::MAX), Some(i32::MAX));
        assert_eq!(narrow_i64(i64::MIN), Some(i32::MIN));
        assert_eq!(narrow_i64(1 << 31), None);
        assert_eq!(narrow_i64(i32::MIN as i64), Some(i32::MIN));
    }
}
