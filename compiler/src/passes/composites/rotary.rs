//! Rotary position embeddings, as Hugging Face's `apply_rotary_pos_emb` writes them:
//! `x * cos + rotate(x) * sin` over the last dimension `d` (even), where `rotate` is
//! - `rotate_half(x)`: `concatenate(-x[..., d/2:], x[..., :d/2])` (Llama and most
//!   others; `interleaved = false`), or
//! - GPT-J's `rotate_every_two(x)`: `stack((-x[..., 1::2], x[..., ::2]), -1)` flattened
//!   back to `[..., d]` (`interleaved = true`).
//!
//! The composite is `tpuc.rotary_embedding` (no producer or consumer of composites
//! names this computation yet) with `interleaved` and the operands `x`, `cos` and
//! `sin`, all of `x`'s shape: the broadcasts of the cos/sin tables to the heads
//! stay outside, where they are shared. Partial rotary embeddings (a slice of the head
//! dimension rotated, the rest passed through) match on the rotated slice. It does not
//! fire when the halves are swapped the other way, the negation is on the other half,
//! the split is not in the middle of the last dimension, or an intermediate is read
//! outside.

use mlir_sys::{MlirOperation, MlirValue};

use super::{def, either, ir, result, same, slices_last_dim, split_source, ty, Found};

pub(super) fn rope(root: MlirOperation) -> Option<Found> {
    either(root, "stablehlo.add", |plain, rotated| {
        let rot_mul = def(rotated, "stablehlo.multiply")?;
        let (x, sin, rot_ops, interleaved) = either(rot_mul, "stablehlo.multiply", |r, sin| {
            if let Some((x, ops)) = rotate_half(r) {
                return Some((x, sin, ops, false));
            }
            let (x, ops) = rotate_every_two(r)?;
            Some((x, sin, ops, true))
        })?;
        let cos_mul = def(plain, "stablehlo.multiply")?;
        let cos = either(cos_mul, "stablehlo.multiply", |x2, cos| {
            same(x2, x).then_some(cos)
        })?;
        let t = ty(x)?;
        let all = [cos, sin, result(root)];
        if !t.dtype.is_float() || !all.iter().all(|v| ty(*v).as_ref() == Some(&t)) {
            return None;
        }
        let mut ops = vec![cos_mul, rot_mul];
        ops.extend(rot_ops);
        Some(Found {
            name: "tpuc.rotary_embedding",
            attributes: vec![("interleaved", interleaved.to_string())],
            inputs: vec![x, cos, sin],
            ops,
            root,
        })
    })
}

/// `concatenate(-x[..., d/2:], x[..., :d/2])` over the last dimension producing `v`:
/// (`x`, the ops).
fn rotate_half(v: MlirValue) -> Option<(MlirValue, Vec<MlirOperation>)> {
    let cat = def(v, "stablehlo.concatenate")?;
    let [neg_hi, lo] = ir::operands(cat)[..] else {
        return None;
    };
    let neg = def(neg_hi, "stablehlo.negate")?;
    let hi_slice = def(ir::operands(neg)[0], "stablehlo.slice")?;
    let lo_slice = def(lo, "stablehlo.slice")?;
    let (x, shape) = split_source(lo_slice, hi_slice)?;
    let (rank, d) = (shape.len(), shape[shape.len() - 1]);
    (ir::i64_attribute(cat, "dimension")? == rank as i64 - 1
        && slices_last_dim(lo_slice, &shape, 0, d / 2, 1)
        && slices_last_dim(hi_slice, &shape, d / 2, d, 1))
    .then(|| (x, vec![cat, neg, hi_slice, lo_slice]))
}

/// `reshape(concatenate(reshape(-x[..., 1::2]), reshape(x[..., ::2])))` producing `v`:
/// the pairs `(-odd, even)` stacked on a new last dimension and flattened back to
/// `x`'s shape (`x`, the ops).
fn rotate_every_two(v: MlirValue) -> Option<(MlirValue, Vec<MlirOperation>)> {
    let flat = def(v, "stablehlo.reshape")?;
    let cat = def(ir::operands(flat)[0], "stablehlo.concatenate")?;
    let [neg_odd, even] = ir::operands(cat)[..] else {
        return None;
    };
    let (r_odd, r_even) = (
        def(neg_odd, "stablehlo.reshape")?,
        def(even, "stablehlo.reshape")?,
    );
    let neg = def(ir::operands(r_odd)[0], "stablehlo.negate")?;
    let odd_slice = def(ir::operands(neg)[0], "stablehlo.slice")?;
    let even_slice = def(ir::operands(r_even)[0], "stablehlo.slice")?;
    let (x, shape) = split_source(even_slice, odd_slice)?;
    let (rank, d) = (shape.len(), shape[shape.len() - 1]);
    if ty(v)?.shape != shape {
        return None;
    }
    // Each half is `[..., d/2]`, stacked as `[..., d/2, 1]` into `[..., d/2, 2]`.
    let mut half = shape.clone();
    half[rank - 1] = d / 2;
    let mut unit = half.clone();
    unit.push(1);
    let mut pairs = half.clone();
    pairs.push(2);
    let shaped = |v: MlirValue, s: &[i64]| ty(v).is_some_and(|t| t.shape == s);
    if ir::i64_attribute(cat, "dimension")? != rank as i64
        || !shaped(neg_odd, &unit)
        || !shaped(even, &unit)
        || !shaped(result(cat), &pairs)
    {
        return None;
    }
    // `x[..., from::2]`.
    let every_other = |s: MlirOperation, from: i64| {
        slices_last_dim(s, &shape, from, d, 2) && shaped(result(s), &half)
    };
    (every_other(even_slice, 0) && every_other(odd_slice, 1)).then(|| {
        (
            x,
            vec![flat, cat, r_odd, r_even, neg, odd_slice, even_slice],
        )
    })
}
