//! `stablehlo-cse`: merges identical StableHLO ops.
//!
//! Lowerings are written one node at a time, so the same constant, broadcast, convert
//! or iota is emitted again by every node that needs it. Two side-effect-free ops are
//! the same computation when they have the same name, operands, attributes and result
//! types; MLIR uniques attributes and types in the context, so their handles compare
//! directly. The later op's results are replaced by the earlier one's and the later op
//! is erased. Ops with regions (reduce, sort, scatter...) are left alone: comparing
//! their bodies is not worth it for what the lowerings emit.

use std::collections::HashMap;

use melior::ir::Module;
use melior::Context;
use mlir_sys::MlirOperation;

use super::{ir, Pass};
use crate::CompileError;

pub struct StablehloCse;

/// Everything that makes two ops compute the same value, as handles.
#[derive(PartialEq, Eq, Hash)]
struct OpKey {
    name: String,
    operands: Vec<usize>,
    /// (name, attribute) handles, in the op's order.
    attributes: Vec<(usize, usize)>,
    result_types: Vec<usize>,
}

fn key(op: MlirOperation) -> OpKey {
    // SAFETY: `op` is a live operation of the module being transformed.
    let attributes = unsafe {
        (0..mlir_sys::mlirOperationGetNumAttributes(op))
            .map(|i| {
                let a = mlir_sys::mlirOperationGetAttribute(op, i);
                (a.name.ptr as usize, a.attribute.ptr as usize)
            })
            .collect()
    };
    OpKey {
        name: ir::op_name(op),
        operands: ir::operands(op).iter().map(|v| v.ptr as usize).collect(),
        attributes,
        result_types: ir::results(op)
            .iter()
            // SAFETY: as above.
            .map(|v| unsafe { mlir_sys::mlirValueGetType(*v) }.ptr as usize)
            .collect(),
    }
}

impl Pass for StablehloCse {
    fn name(&self) -> &'static str {
        "stablehlo-cse"
    }
    fn description(&self) -> &'static str {
        "merge identical side-effect-free StableHLO ops (same operands, attributes, types)"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for body in ir::function_bodies(&module) {
            let mut seen: HashMap<OpKey, MlirOperation> = HashMap::new();
            for op in body {
                if !ir::is_pure(op) || ir::num_regions(op) > 0 {
                    continue;
                }
                let k = key(op);
                match seen.get(&k) {
                    Some(&first) => {
                        for (old, new) in ir::results(op).into_iter().zip(ir::results(first)) {
                            ir::replace_uses(old, new);
                        }
                        ir::erase(op);
                    }
                    None => {
                        seen.insert(k, op);
                    }
                }
            }
        }
        Ok(module)
    }
}
