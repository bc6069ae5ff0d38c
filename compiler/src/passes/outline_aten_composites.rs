//! `aten-outline-composites`: ATen operators that are fused kernels on some backend
//! become `stablehlo.composite` ops before lowering, one shared decomposition each.
//!
//! A graph node such as `aten.gelu.default` or `aten._softmax.default` is already the
//! subgraph a backend would fuse: no pattern matching is needed to know what it
//! computes. This pass wraps each such node in a composite named after its overload,
//! whose `composite_attributes` are the node's own arguments as the export wrote them
//! (defaults torch.export left out stay out; `operand_names` says which optional
//! tensors are present), and whose `decomposition` is a private function holding the
//! ATen op itself. `lower-aten-to-stablehlo` then lowers that function like any other,
//! and copies the composites through.
//!
//! Nodes with the same target, arguments, operand types and used results share one
//! decomposition (`<target>.impl_<n>`, numbered in program order). A model of 32
//! identical layers lowers each of these operators once instead of 32 times, and the
//! program holds one copy of each lowering: on a 100,000-node chain of Linear + GELU
//! this is most of the compile time. XLA inlines the decompositions, so the program
//! it compiles is the one the inline lowering would give.
//!
//! The composite returns the node's results up to the last one the graph reads (the
//! statistics of `native_layer_norm` are usually unread, and need not be computed);
//! a node none of whose results is read is left for the lowering to drop.
//!
//! Operators wrapped: GELU (both forms), SiLU, softmax and log-softmax (Core ATen and
//! pre-decomposition overloads), layer norm, RMS norm, scaled dot-product attention and
//! the mixture-of-experts grouped matmul (`aten._grouped_mm`,
//! `transformers.grouped_mm_fallback`).

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirAttribute, MlirOperation};
use rustc_hash::FxHashMap;

use super::{composites, ir, Pass};
use crate::error::CompileError;

pub struct OutlineAtenComposites;

/// The overloads wrapped, as MLIR op names (the node target without `torch.ops.`).
pub const WRAPPED: &[&str] = &[
    "aten.gelu.default",
    "aten.silu.default",
    "aten._softmax.default",
    "aten.softmax.int",
    "aten._log_softmax.default",
    "aten.log_softmax.int",
    "aten.native_layer_norm.default",
    "aten.layer_norm.default",
    "aten.rms_norm.default",
    "aten.scaled_dot_product_attention.default",
    // Mixture-of-experts grouped matmuls: the composite is what
    // `tpu-grouped-mm-to-ragged-dot` gives libtpu as `chlo.ragged_dot`.
    "aten._grouped_mm.default",
    "transformers.grouped_mm_fallback.default",
];

impl Pass for OutlineAtenComposites {
    fn name(&self) -> &'static str {
        "aten-outline-composites"
    }
    fn description(&self) -> &'static str {
        "wrap GELU, SiLU, softmax, layer/RMS norm and SDPA nodes in stablehlo.composite ops, one shared decomposition per distinct node (ATen level, before lowering)"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let funcs = ir::named_function_blocks(&module);
        // Decompositions already in the module (a second run) are not wrapped again.
        let decompositions = composites::decomposition_symbols(&funcs);
        let mut names = composites::Symbols::of(&funcs);
        let mut shared: FxHashMap<Key, Shared> = FxHashMap::default();
        for (fname, block) in &funcs {
            let Some(block) = block else { continue };
            if decompositions.contains(fname) {
                continue;
            }
            ir::for_each_op(*block, |op| {
                let name = ir::op_name(op);
                let Some(&target) = WRAPPED.iter().find(|t| **t == name) else {
                    return;
                };
                let results = ir::results(op);
                let Some(last_used) = results.iter().rposition(|r| ir::has_uses(*r)) else {
                    return;
                };
                let kept = &results[..=last_used];
                let key = Key::of(op, kept.len());
                if !shared.contains_key(&key) {
                    let symbol = names.fresh(target);
                    let Some(s) = Shared::create(&module, op, kept.len(), target, &symbol) else {
                        return;
                    };
                    shared.insert(key.clone(), s);
                }
                let s = &shared[&key];
                let operands = ir::operands(op);
                let types: Vec<_> = kept.iter().map(|v| ir::value_type(*v)).collect();
                let composite = ir::create_op_before(
                    op,
                    "stablehlo.composite",
                    &operands,
                    &types,
                    &[
                        ("name", s.name),
                        ("composite_attributes", s.attributes),
                        ("decomposition", s.decomposition),
                        ("version", s.version),
                    ],
                );
                for (old, new) in kept.iter().zip(ir::results(composite)) {
                    ir::replace_uses(*old, new);
                }
                ir::erase(op);
            });
        }
        Ok(module)
    }
}

/// What makes two nodes share a decomposition: the op name, every attribute and
/// operand type (all uniqued in the context, so compared by handle), and how many
/// results the composite returns.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    name: usize,
    attributes: Vec<(usize, usize)>,
    operand_types: Vec<usize>,
    kept: usize,
}

impl Key {
    fn of(op: MlirOperation, kept: usize) -> Key {
        Key {
            name: ir::op_name_id(op),
            attributes: ir::named_attributes(op)
                .iter()
                .map(|a| (a.name.ptr as usize, a.attribute.ptr as usize))
                .collect(),
            operand_types: ir::operands(op)
                .iter()
                .map(|v| ir::value_type(*v).ptr as usize)
                .collect(),
            kept,
        }
    }
}

/// The attributes every composite of one decomposition carries.
struct Shared {
    name: MlirAttribute,
    attributes: MlirAttribute,
    decomposition: MlirAttribute,
    version: MlirAttribute,
}

impl Shared {
    /// Appends `func.func private @symbol` holding a clone of `op` that returns its
    /// first `kept` results, and the attributes composites of it carry.
    fn create(
        module: &Module<'_>,
        op: MlirOperation,
        kept: usize,
        target: &str,
        symbol: &str,
    ) -> Option<Shared> {
        let operands = ir::operands(op);
        let results = ir::results(op);
        let loc = ir::location(op);
        let body = ir::append_private_function(module, symbol, &operands, &results[..kept], loc)?;
        let clone = ir::clone_into(op, body);
        for (i, a) in ir::block_arguments(body).into_iter().enumerate() {
            ir::set_operand(clone, i as isize, a);
        }
        ir::append_return(body, &ir::results(clone)[..kept], loc);
        let ctx = ir::context(op);
        Some(Shared {
            name: ir::string_attribute(ctx, target),
            attributes: ir::dictionary_attribute(ctx, &ir::named_attributes(op)),
            decomposition: ir::parse_attribute(ctx, &format!("@{symbol}"))?,
            version: ir::parse_attribute(ctx, "0 : i32")?,
        })
    }
}
