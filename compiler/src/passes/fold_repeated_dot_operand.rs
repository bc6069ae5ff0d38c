//! `stablehlo-fold-repeated-dot-operand`: a `dot_general` one of whose operands repeats
//! each slice of a batch dimension `G` times (`reshape(broadcast_in_dim(x))`, the
//! `repeat_kv` of grouped-query attention written with `matmul`) becomes a
//! `dot_general` over `x` itself, the other operand's batch dimension split into
//! `[H / G, G]` with `G` as one of its free dimensions.
//!
//! Eager attention (`matmul`, softmax, `matmul`) repeats every key/value head before
//! both products; where the attention composite does not take the whole pattern
//! (GPT-OSS's sinks, targets without composites) the products are left as written: `k[:, :, None].expand(B, Hkv, G, L, D).reshape(B, Hkv*G, L,
//! D)`. Lowered as written, a decode step makes (or upcasts and reads) a `G`-times larger
//! copy of each layer's cache: GPT-OSS-20B's decode step on v5e read 26.4 GB per device
//! where its weights and cache are 12.2 GB. `aten-fold-repeat-kv` handles the SDPA
//! form; this pass handles the products themselves, whatever produced them.
//!
//! With query `q [B, H, S, D]` and `k [B, Hkv, L, D]` (`H = Hkv * G`), `q` is reshaped to
//! `[B, Hkv, G, S, D]` and multiplied with batch dimensions `(B, Hkv)`: the result
//! `[B, Hkv, G, S, L]` reshaped to `[B, H, S, L]` (after a transpose when `G` does not
//! land next to `Hkv`) holds, element for element, the same sum of the same products.
//! Exact. The repeat, left without uses, is dropped by `stablehlo-dce`. Core ATen's
//! `bmm` form merges the batch as well (`[B, Hkv, G, L, D]` to `[B*Hkv*G, L, D]`): the
//! merged outer part is then `B*Hkv`.
//!
//! It fires when the repeat's broadcast keeps the order of `x`'s dimensions and expands
//! exactly one dimension, the innermost of those the reshape merges into a batch
//! dimension of the dot (dimensions of size one aside), every shape is static, and the
//! repeated operand has more elements than the result (see `pays`: decode steps, not
//! a prefill's square scores).

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use tpuc_dialects::stablehlo::{dot_dims_attr, DotDims};
use tpuc_dialects::TensorType;

use super::{ir, Pass};
use crate::error::CompileError;

pub struct FoldRepeatedDotOperand;

pub const NAME: &str = "stablehlo-fold-repeated-dot-operand";

impl Pass for FoldRepeatedDotOperand {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "dot_general over a batch dimension repeated by broadcast+reshape (eager repeat_kv) as a dot over the unrepeated operand"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for block in ir::function_blocks(&module) {
            let mut dots = Vec::new();
            ir::for_each_op(block, |op| {
                if ir::op_name(op) == "stablehlo.dot_general" {
                    dots.push(op);
                }
            });
            for dot in dots {
                // Each side at most once: a dot whose both operands repeat (rare)
                // keeps the second repeat.
                if !fold(dot, 1) {
                    fold(dot, 0);
                }
            }
        }
        Ok(module)
    }
}

fn static_type(v: MlirValue) -> Option<TensorType> {
    ir::tensor_type(v).filter(|t| t.shape.iter().all(|&d| d >= 0))
}

/// A repeat: `v = reshape(broadcast_in_dim(x))` where the broadcast expands one
/// dimension `g` only and the reshape merges dimensions `a..=g` into one.
struct Repeat {
    /// `x`.
    source: MlirValue,
    /// The merged dimension of `v` (the dot's operand).
    dim: usize,
    /// Its outer part, the product of x's merged extents (`Hkv`, or `B * Hkv`).
    outer: i64,
    /// Its inner, repeated part (`G`).
    times: i64,
}

fn repeat(v: MlirValue) -> Option<Repeat> {
    let reshape = ir::defining_op(v).filter(|o| ir::op_name(*o) == "stablehlo.reshape")?;
    let b = ir::operands(reshape)[0];
    let bcast = ir::defining_op(b).filter(|o| ir::op_name(*o) == "stablehlo.broadcast_in_dim")?;
    let x = ir::operands(bcast)[0];
    let (xt, bt, vt) = (static_type(x)?, static_type(b)?, static_type(v)?);
    let dims = ir::i64_array(bcast, "broadcast_dimensions")?;
    if dims.windows(2).any(|w| w[0] >= w[1]) || bt.shape.len() <= vt.shape.len() {
        return None;
    }
    // For each dimension of the broadcast: is it expanded (repeated), and by x's what?
    let mut source_extent = vec![1i64; bt.shape.len()];
    for (i, &d) in dims.iter().enumerate() {
        source_extent[d as usize] = xt.shape[i];
    }
    let expanded: Vec<usize> = (0..bt.shape.len())
        .filter(|&j| source_extent[j] != bt.shape[j])
        .collect();
    let [g] = expanded.as_slice() else {
        return None;
    };
    // The reshape merges dimensions a..=g into one, the repeated one innermost (Core
    // ATen's bmm form merges the batch too: [B, Hkv, G, L, D] to [B*Hkv*G, L, D]).
    let (bs, vs) = (&bt.shape, &vt.shape);
    let a = g.checked_sub(bs.len() - vs.len())?;
    if bs[..a] != vs[..a]
        || bs[a..=*g].iter().product::<i64>() != vs[a]
        || bs[g + 1..] != vs[a + 1..]
    {
        return None;
    }
    (bs[*g] > 1).then_some(Repeat {
        source: x,
        dim: a,
        outer: bs[a..*g].iter().product(),
        times: bs[*g],
    })
}

/// `(x, permutation)` when `v = transpose(x)`.
fn transposed(v: MlirValue) -> Option<(MlirValue, Vec<i64>)> {
    let t = ir::defining_op(v).filter(|o| ir::op_name(*o) == "stablehlo.transpose")?;
    Some((ir::operands(t)[0], ir::i64_array(t, "permutation")?))
}

/// The dimension numbers of `d` with operand `side` read before its transpose `perm`
/// (dimension `j` of the transposed operand is `perm[j]` of its input); `None` when the
/// transpose reorders that operand's free dimensions (the result's order would change).
fn through_transpose(d: &DotDims, side: usize, perm: &[i64]) -> Option<DotDims> {
    let (batch, contract) = match side {
        0 => (&d.lhs_batch, &d.lhs_contract),
        _ => (&d.rhs_batch, &d.rhs_contract),
    };
    let map = |v: &[i64]| -> Option<Vec<i64>> {
        v.iter().map(|&j| perm.get(j as usize).copied()).collect()
    };
    let free: Vec<i64> = (0..perm.len() as i64)
        .filter(|j| !batch.contains(j) && !contract.contains(j))
        .map(|j| perm[j as usize])
        .collect();
    if free.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    let (batch, contract) = (map(batch)?, map(contract)?);
    let mut out = d.clone();
    match side {
        0 => (out.lhs_batch, out.lhs_contract) = (batch, contract),
        _ => (out.rhs_batch, out.rhs_contract) = (batch, contract),
    }
    Some(out)
}

/// Whether folding pays: it saves the repeat (`repeated`, made and read), and it hands
/// XLA the result split by groups, `[.., Hkv, G, ..]`, which XLA's TPU fusions read less
/// well when the result is large: GPT-OSS-20B's 2,048-token prefill (v5e, ep=8), its
/// score products folded, moved 229 GB per device instead of 178 GB, the softmax over
/// the `[64, 2048, 2049]` scores made twice. So the fold is taken where the repeated
/// operand is larger than the result: a decode step or a short chunk reading a long
/// cache, not a prefill's quadratic scores.
fn pays(repeated: &TensorType, result: &TensorType) -> bool {
    repeated.num_elements() > result.num_elements()
}

/// Rewrites `dot` when its operand `side` (0 lhs, 1 rhs) is a repeat over a batch
/// dimension; returns whether it did.
fn fold(dot: MlirOperation, side: usize) -> bool {
    let Some(text) = ir::attribute_text(dot, "dot_dimension_numbers") else {
        return false;
    };
    let mut d = DotDims::parse(&text);
    let operands = ir::operands(dot);
    let (mut r, o) = (operands[side], operands[1 - side]);
    // A transpose between the repeat and the dot (Core ATen's `k.transpose(2, 3)`
    // before `bmm`) is read through when it keeps the order of the free dimensions.
    if let Some((inner, perm)) = transposed(r) {
        if let Some(through) =
            through_transpose(&d, side, &perm).filter(|_| repeat(inner).is_some())
        {
            (d, r) = (through, inner);
        }
    }
    let Some(rep) = repeat(r) else {
        return false;
    };
    let (r_batch, r_contract, o_batch, o_contract) = match side {
        0 => (&d.lhs_batch, &d.lhs_contract, &d.rhs_batch, &d.rhs_contract),
        _ => (&d.rhs_batch, &d.rhs_contract, &d.lhs_batch, &d.lhs_contract),
    };
    let Some(i) = r_batch.iter().position(|&b| b as usize == rep.dim) else {
        return false;
    };
    let (Some(ot), Some(out_t), Some(rt)) = (
        static_type(o),
        static_type(ir::result(dot, 0)),
        static_type(r),
    ) else {
        return false;
    };
    let oh = o_batch[i] as usize;
    if ot.shape[oh] != rep.outer * rep.times || !pays(&rt, &out_t) {
        return false;
    }

    // The unrepeated operand: x reshaped to the repeat's shape with the merged
    // dimension at its outer extent (x's dimensions in order, ones dropped or added).
    let mut k_shape = rt.shape.clone();
    k_shape[rep.dim] = rep.outer;
    // The other operand with its batch dimension split into [outer, times]; its
    // dimensions after `oh` move up by one.
    let mut o_shape = ot.shape.clone();
    o_shape.splice(oh..=oh, [rep.outer, rep.times]);
    let shift = |v: &[i64]| -> Vec<i64> {
        v.iter()
            .map(|&x| if x as usize > oh { x + 1 } else { x })
            .collect()
    };
    let (o_batch, o_contract) = (shift(o_batch), shift(o_contract));
    let dims = match side {
        0 => DotDims {
            lhs_batch: r_batch.clone(),
            rhs_batch: o_batch.clone(),
            lhs_contract: r_contract.clone(),
            rhs_contract: o_contract.clone(),
        },
        _ => DotDims {
            lhs_batch: o_batch.clone(),
            rhs_batch: r_batch.clone(),
            lhs_contract: o_contract.clone(),
            rhs_contract: r_contract.clone(),
        },
    };
    // The new result: batch dimensions (the split one at its outer extent), then the
    // lhs's free dimensions, then the rhs's. `times` is the split operand's free
    // dimension `oh + 1`.
    let free = |shape: &[i64], batch: &[i64], contract: &[i64]| -> Vec<i64> {
        (0..shape.len() as i64)
            .filter(|j| !batch.contains(j) && !contract.contains(j))
            .map(|j| shape[j as usize])
            .collect()
    };
    let o_free = free(&o_shape, &o_batch, &o_contract);
    let k_free = free(&k_shape, r_batch, r_contract);
    // Among the split operand's free dimensions, `times` follows those before `oh`.
    let g_in_free = (0..oh as i64)
        .filter(|j| !o_batch.contains(j) && !o_contract.contains(j))
        .count();
    let batch_shape: Vec<i64> = o_batch.iter().map(|&b| o_shape[b as usize]).collect();
    let g_pos = batch_shape.len() + g_in_free + if side == 0 { k_free.len() } else { 0 };
    let (lhs_free, rhs_free) = match side {
        0 => (k_free, o_free),
        _ => (o_free, k_free),
    };
    let new_shape: Vec<i64> = [batch_shape, lhs_free, rhs_free].concat();

    let Some(new_ty) = ir::parse_type(
        ir::context(dot),
        &TensorType::new(new_shape.clone(), out_t.dtype).mlir(),
    ) else {
        return false;
    };
    let k = match ir::tensor_type(rep.source).map(|t| t.shape) == Some(k_shape.clone()) {
        true => Some(rep.source),
        false => {
            let ty = TensorType::new(k_shape, rt.dtype);
            ir::create_value_before(dot, "stablehlo.reshape", rep.source, &ty, &[])
        }
    };
    let split = ir::create_value_before(
        dot,
        "stablehlo.reshape",
        o,
        &TensorType::new(o_shape, ot.dtype),
        &[],
    );
    let (Some(k), Some(split)) = (k, split) else {
        return false;
    };
    let (lhs, rhs) = match side {
        0 => (k, split),
        _ => (split, k),
    };
    // A copy of the dot (precision and other attributes kept) on the new operands.
    let new = ir::clone_before(dot, dot);
    ir::set_operand(new, 0, lhs);
    ir::set_operand(new, 1, rhs);
    ir::set_result_type(new, 0, new_ty);
    if !ir::set_attribute(new, "dot_dimension_numbers", &dot_dims_attr(&dims)) {
        ir::erase(new);
        return false;
    }
    let mut y = ir::result(new, 0);
    // Move `times` next to the batch dimension it splits, then merge the two.
    if g_pos != i + 1 {
        let mut perm: Vec<usize> = (0..new_shape.len()).filter(|&j| j != g_pos).collect();
        perm.insert(i + 1, g_pos);
        let shape: Vec<i64> = perm.iter().map(|&j| new_shape[j]).collect();
        let p: Vec<String> = perm.iter().map(|j| j.to_string()).collect();
        let attr = format!("array<i64: {}>", p.join(", "));
        let ty = TensorType::new(shape, out_t.dtype);
        match ir::create_value_before(dot, "stablehlo.transpose", y, &ty, &[("permutation", attr)])
        {
            Some(t) => y = t,
            None => return false,
        }
    }
    let Some(merged) = ir::create_value_before(dot, "stablehlo.reshape", y, &out_t, &[]) else {
        return false;
    };
    ir::replace_uses(ir::result(dot, 0), merged);
    ir::erase(dot);
    true
}
