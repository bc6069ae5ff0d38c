//! `tpu-grouped-mm-to-ragged-dot`: the mixture-of-experts grouped matmuls of a program
//! as XLA's `chlo.ragged_dot`, for the TPU compiler (libtpu) only.
//!
//! `aten-outline-composites` wraps each `aten._grouped_mm` /
//! `transformers.grouped_mm_fallback` node in a `stablehlo.composite` named after its
//! overload, whose decomposition `lower-aten-to-stablehlo` lowers to the portable
//! routed loop (see `lower_aten_to_stablehlo/library_ops.rs`). That is what
//! `program.mlir` holds and what every PJRT plugin runs. This pass points each such
//! composite at a new decomposition holding `chlo.ragged_dot` (group sizes from the
//! offsets, rows past the last offset masked to zero), which libtpu compiles into its
//! grouped-matmul kernels; XLA's CPU backend refuses `ragged-dot`, so the pass runs
//! only on the program handed to libtpu (the driver's located program for
//! `--topology`), never on the artifact's own. Old decompositions no composite uses any
//! more are erased.
//!
//! The composite keeps its name: XLA rewrites any composite *named* `chlo.ragged_dot`
//! into the op whatever its body, which is why the portable composite must not carry
//! that name.
//!
//! A composite whose operands are not `[S, K]`, `[E, K, N]`, `[E]` with a non-empty
//! product is left as it is (its loop is still exact). That includes the weight
//! gradient's form (two matrices, `[K, S] x [S, N]` to `[E, K, N]`): libtpu (the build
//! in `.deps`, Dec 2026) compiles that kind of ragged dot (a ragged contracting
//! dimension) as a dense masked matmul on v5e, v5p and v6e alike, 206 GFLOP for
//! [2048, 4096] x [4096, 768] in 16 groups against the 12.9 the loop computes.
//!
//! Offsets that are not monotone (groups that overlap or go back) cannot be said as a
//! ragged dot: the new decomposition takes the portable loop for them, under a
//! `stablehlo.if`, so the result is PyTorch's for any offsets (see
//! `library_ops::ragged_dot`).

use melior::ir::{Location, Module};
use melior::Context;
use rustc_hash::FxHashMap;

use super::lower_aten_to_stablehlo::{self, GROUPED_MM};
use super::{composites, ir, Pass};
use crate::error::CompileError;

pub const NAME: &str = "tpu-grouped-mm-to-ragged-dot";

/// `{emulated=true}`: the ragged dot computed by its definition with the portable
/// loop instead of `chlo.ragged_dot`, so that XLA's CPU plugin runs the new
/// decomposition (tests; see `library_ops::ragged_dot`).
#[derive(Default)]
pub struct GroupedMmToRaggedDot {
    pub emulated: bool,
}

impl Pass for GroupedMmToRaggedDot {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "TPU only: grouped-matmul composites (aten._grouped_mm, transformers.grouped_mm_fallback) decomposed as chlo.ragged_dot instead of their portable loop"
    }
    fn run<'c>(&self, ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let funcs = ir::named_function_blocks(&module);
        let mut names = composites::Symbols::of(&funcs);
        let mut found = Vec::new();
        for (_, block) in &funcs {
            ir::for_each_op_of(*block, |op| {
                if ir::op_name(op) == "stablehlo.composite"
                    && ir::attribute(op, "name")
                        .and_then(ir::string_value)
                        .is_some_and(|n| GROUPED_MM.contains(&n.as_str()))
                {
                    found.push(op);
                }
            });
        }
        // One ragged decomposition per old one (identical nodes share theirs).
        let mut made: FxHashMap<String, String> = FxHashMap::default();
        let mut replaced = Vec::new();
        for op in found {
            let Some(old) = ir::symbol_ref(op, "decomposition") else {
                continue;
            };
            let symbol = match made.get(&old) {
                Some(s) => s.clone(),
                None => {
                    let precision = funcs
                        .iter()
                        .find(|(n, _)| *n == old)
                        .and_then(|(_, b)| *b)
                        .and_then(composites::dot_precision);
                    let Some(s) = ragged_decomposition(
                        ctx,
                        &module,
                        op,
                        &mut names,
                        precision,
                        self.emulated,
                    )?
                    else {
                        continue;
                    };
                    made.insert(old.clone(), s.clone());
                    replaced.push(old);
                    s
                }
            };
            ir::set_attribute(op, "decomposition", &format!("@{symbol}"));
        }
        // The old decompositions, unless a composite left as it was still uses one.
        let funcs = ir::named_function_blocks(&module);
        let used = composites::decomposition_symbols(&funcs);
        for (name, block) in &funcs {
            if replaced.contains(name) && !used.contains(name) {
                if let Some(b) = block {
                    ir::erase(ir::block_parent(*b));
                }
            }
        }
        Ok(module)
    }
}

/// Appends `func.func private @tpuc.ragged_dot.impl_<n>` computing the composite `op`
/// with `chlo.ragged_dot`; `None` when its types are not a grouped matmul's.
fn ragged_decomposition(
    ctx: &Context,
    module: &Module<'_>,
    op: mlir_sys::MlirOperation,
    names: &mut composites::Symbols,
    precision: Option<String>,
    emulated: bool,
) -> Result<Option<String>, CompileError> {
    let operands: Vec<_> = ir::operands(op)
        .into_iter()
        .map(ir::tensor_type)
        .collect::<Option<_>>()
        .unwrap_or_default();
    let results: Vec<_> = ir::results(op)
        .into_iter()
        .map(ir::tensor_type)
        .collect::<Option<_>>()
        .unwrap_or_default();
    let ([x, w, offs], [ty]) = (operands.as_slice(), results.as_slice()) else {
        return Ok(None);
    };
    if x.rank() != 2
        || w.rank() != 3
        || offs.rank() != 1
        || !offs.dtype.is_integer()
        || w.shape[0] != offs.shape[0]
        || [x.shape.as_slice(), w.shape.as_slice()]
            .concat()
            .contains(&0)
    {
        return Ok(None);
    }
    let symbol = names.fresh("tpuc.ragged_dot");
    // SAFETY: the composite's location belongs to the module's context.
    let loc = unsafe { Location::from_raw(ir::location(op)) };
    let args: Vec<_> = [x, w, offs].iter().map(|t| ((*t).clone(), loc)).collect();
    let f = tpuc_dialects::func::append_function(
        ctx,
        module,
        &symbol,
        &args,
        std::slice::from_ref(ty),
        loc,
    )
    .map_err(|e| CompileError::Internal(e.to_string()))?;
    ir::set_attribute(f.op, "sym_visibility", "\"private\"");
    let e = &f.emitter;
    let a = &f.arguments;
    let out = lower_aten_to_stablehlo::grouped_mm_ragged_dot(
        e,
        &a[0],
        &a[1],
        &a[2],
        ty,
        precision.as_deref(),
        emulated,
    )
    .map_err(|m| CompileError::Internal(format!("{NAME}: {m:?}")))?;
    e.func_return(&[&out])
        .map_err(|e| CompileError::Internal(e.to_string()))?;
    // The loop taken for overlapping groups asks what the old decomposition's product
    // asked (the ragged dot has it already).
    if let (Some(p), Some(&block)) = (&precision, ir::region_blocks(f.op).first()) {
        for dot in ir::nested_ops(block) {
            if ir::op_name(dot) == "stablehlo.dot_general" {
                ir::set_attribute(dot, "precision_config", p);
            }
        }
    }
    Ok(Some(symbol))
}
