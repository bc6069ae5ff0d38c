//! Raw-IR helpers the in-place StableHLO passes share (DCE, CSE): the top-level
//! operations of each function body, use tests, replacement and erasure, and which
//! StableHLO ops are free of side effects.
//!
//! melior has no rewrite driver for unregistered operations, so these passes work on
//! the C API handles (`mlir-sys`) of a module they own for the duration of the call.

use melior::ir::Module;
use mlir_sys::{MlirOperation, MlirValue};

/// Ops that must stay even when their results are unused, or that must not be merged
/// with an identical twin: side effects (custom calls, I/O, collectives, tokens) and
/// ops that exist to constrain the compiler (optimization barriers).
const EFFECTFUL: &[&str] = &[
    "stablehlo.custom_call",
    "stablehlo.send",
    "stablehlo.recv",
    "stablehlo.infeed",
    "stablehlo.outfeed",
    "stablehlo.after_all",
    "stablehlo.all_reduce",
    "stablehlo.all_gather",
    "stablehlo.all_to_all",
    "stablehlo.reduce_scatter",
    "stablehlo.collective_permute",
    "stablehlo.collective_broadcast",
    "stablehlo.optimization_barrier",
    "stablehlo.rng",
    "stablehlo.while",
    "stablehlo.if",
    "stablehlo.case",
];

/// The name of `op` (`stablehlo.add`).
pub fn op_name(op: MlirOperation) -> String {
    // SAFETY: `op` is a live operation of the module being transformed.
    unsafe {
        let s = mlir_sys::mlirIdentifierStr(mlir_sys::mlirOperationGetName(op));
        let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// A StableHLO op with no side effects: removable when unused, mergeable with a twin.
pub fn is_pure(op: MlirOperation) -> bool {
    let name = op_name(op);
    name.starts_with("stablehlo.") && !EFFECTFUL.contains(&name.as_str())
}

pub fn results(op: MlirOperation) -> Vec<MlirValue> {
    // SAFETY: as above; indices are below the result count.
    unsafe {
        (0..mlir_sys::mlirOperationGetNumResults(op))
            .map(|i| mlir_sys::mlirOperationGetResult(op, i))
            .collect()
    }
}

pub fn operands(op: MlirOperation) -> Vec<MlirValue> {
    // SAFETY: as above; indices are below the operand count.
    unsafe {
        (0..mlir_sys::mlirOperationGetNumOperands(op))
            .map(|i| mlir_sys::mlirOperationGetOperand(op, i))
            .collect()
    }
}

pub fn num_regions(op: MlirOperation) -> isize {
    // SAFETY: as above.
    unsafe { mlir_sys::mlirOperationGetNumRegions(op) }
}

pub fn has_uses(v: MlirValue) -> bool {
    // SAFETY: `v` belongs to the module being transformed.
    unsafe { !mlir_sys::mlirValueGetFirstUse(v).ptr.is_null() }
}

/// Points every use of `of` at `with`.
pub fn replace_uses(of: MlirValue, with: MlirValue) {
    // SAFETY: both values belong to the module being transformed and have one type.
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(of, with) }
}

/// Removes `op` from its block and destroys it. Its results must have no uses left.
pub fn erase(op: MlirOperation) {
    // SAFETY: the caller checked that no value of `op` is still used; once removed,
    // the operation is owned here and destroyed exactly once.
    unsafe {
        mlir_sys::mlirOperationRemoveFromParent(op);
        mlir_sys::mlirOperationDestroy(op);
    }
}

/// The operations of the entry block of every function of `module`, in order.
pub fn function_bodies(module: &Module<'_>) -> Vec<Vec<MlirOperation>> {
    let mut out = Vec::new();
    // SAFETY: walks the module's own blocks; nothing is modified while walking.
    unsafe {
        let mut func = mlir_sys::mlirBlockGetFirstOperation(module.body().to_raw());
        while !func.ptr.is_null() {
            if op_name(func) == "func.func" && mlir_sys::mlirOperationGetNumRegions(func) > 0 {
                let region = mlir_sys::mlirOperationGetRegion(func, 0);
                let block = mlir_sys::mlirRegionGetFirstBlock(region);
                let mut ops = Vec::new();
                if !block.ptr.is_null() {
                    let mut op = mlir_sys::mlirBlockGetFirstOperation(block);
                    while !op.ptr.is_null() {
                        ops.push(op);
                        op = mlir_sys::mlirOperationGetNextInBlock(op);
                    }
                }
                out.push(ops);
            }
            func = mlir_sys::mlirOperationGetNextInBlock(func);
        }
    }
    out
}
