//! `stablehlo-cse`: merges identical StableHLO ops.
//!
//! Lowerings are written one node at a time, so the same constant, broadcast, convert
//! or iota is emitted again by every node that needs it. Two side-effect-free ops are
//! the same computation when they have the same name, operands, attributes and result
//! types; MLIR uniques attributes and types in the context, so their handles compare
//! directly. The later op's results are replaced by the earlier one's and the later op
//! is erased. Ops with regions (reduce, sort, scatter...) are left alone: comparing
//! their bodies is not worth it for what the lowerings emit.

use std::hash::{Hash, Hasher};

use melior::ir::Module;
use melior::Context;
use mlir_sys::MlirOperation;
use rustc_hash::{FxHashSet, FxHasher};

use super::{ir, Pass};
use crate::error::CompileError;

pub struct StablehloCse;

/// An op in the table of seen computations: hashed and compared by everything that
/// makes two ops compute the same value, as handles (name identifier, operands,
/// `(name, attribute)` pairs in the op's order, result types), read straight from the
/// op so that no key is built.
struct Computation {
    op: MlirOperation,
    hash: u64,
}

impl Computation {
    fn new(op: MlirOperation) -> Computation {
        let mut h = FxHasher::default();
        ir::op_name_id(op).hash(&mut h);
        // SAFETY (all blocks): `op` is a live operation of the module being
        // transformed; indices are below the counts.
        unsafe {
            let n = mlir_sys::mlirOperationGetNumOperands(op);
            n.hash(&mut h);
            for i in 0..n {
                (mlir_sys::mlirOperationGetOperand(op, i).ptr as usize).hash(&mut h);
            }
            let n = mlir_sys::mlirOperationGetNumAttributes(op);
            n.hash(&mut h);
            for i in 0..n {
                let a = mlir_sys::mlirOperationGetAttribute(op, i);
                (a.name.ptr as usize).hash(&mut h);
                (a.attribute.ptr as usize).hash(&mut h);
            }
            let n = mlir_sys::mlirOperationGetNumResults(op);
            n.hash(&mut h);
            for i in 0..n {
                let t = mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetResult(op, i));
                (t.ptr as usize).hash(&mut h);
            }
        }
        Computation {
            op,
            hash: h.finish(),
        }
    }
}

impl Hash for Computation {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl PartialEq for Computation {
    fn eq(&self, other: &Computation) -> bool {
        let (a, b) = (self.op, other.op);
        if self.hash != other.hash || ir::op_name_id(a) != ir::op_name_id(b) {
            return false;
        }
        // SAFETY: as in `Computation::new`.
        unsafe {
            let n = mlir_sys::mlirOperationGetNumOperands(a);
            if n != mlir_sys::mlirOperationGetNumOperands(b)
                || (0..n).any(|i| {
                    mlir_sys::mlirOperationGetOperand(a, i).ptr
                        != mlir_sys::mlirOperationGetOperand(b, i).ptr
                })
            {
                return false;
            }
            let n = mlir_sys::mlirOperationGetNumAttributes(a);
            if n != mlir_sys::mlirOperationGetNumAttributes(b)
                || (0..n).any(|i| {
                    let (x, y) = (
                        mlir_sys::mlirOperationGetAttribute(a, i),
                        mlir_sys::mlirOperationGetAttribute(b, i),
                    );
                    x.name.ptr != y.name.ptr || x.attribute.ptr != y.attribute.ptr
                })
            {
                return false;
            }
            let n = mlir_sys::mlirOperationGetNumResults(a);
            n == mlir_sys::mlirOperationGetNumResults(b)
                && (0..n).all(|i| {
                    mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetResult(a, i)).ptr
                        == mlir_sys::mlirValueGetType(mlir_sys::mlirOperationGetResult(b, i)).ptr
                })
        }
    }
}

impl Eq for Computation {}

impl Pass for StablehloCse {
    fn name(&self) -> &'static str {
        "stablehlo-cse"
    }
    fn description(&self) -> &'static str {
        "merge identical side-effect-free StableHLO ops (same operands, attributes, types)"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for block in ir::function_blocks(&module) {
            let mut seen: FxHashSet<Computation> = FxHashSet::default();
            // Erasing the op being visited is allowed by `for_each_op`.
            ir::for_each_op(block, |op| {
                if !ir::is_pure(op) || ir::num_regions(op) > 0 {
                    return;
                }
                let c = Computation::new(op);
                match seen.get(&c) {
                    Some(first) => {
                        for i in 0..ir::num_results(op) {
                            ir::replace_uses(ir::result(op, i), ir::result(first.op, i));
                        }
                        ir::erase(op);
                    }
                    None => {
                        seen.insert(c);
                    }
                }
            });
        }
        Ok(module)
    }
}
