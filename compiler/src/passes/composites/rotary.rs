//! Rotary position embeddings, as Hugging Face's `apply_rotary_pos_emb` writes them:
//! `x * cos + rotate_half(x) * sin`, where `rotate_half(x)` is
//! `concatenate(-x[..., d/2:], x[..., :d/2])` over the last dimension `d` (even).
//!
//! The composite is `tpuc.rotary_embedding` (no producer or consumer of composites
//! names this computation yet) with `interleaved = false` (the half-split rotation
//! above; GPT-J's every-other-element form is not matched) and the operands `x`, `cos`
//! and `sin`, all of `x`'s shape: the broadcasts of the cos/sin tables to the heads
//! stay outside, where they are shared. Partial rotary embeddings (a slice of the head
//! dimension rotated, the rest passed through) match on the rotated slice. It does not
//! fire when the halves are swapped the other way, the negation is on the other half,
//! the split is not in the middle of the last dimension, or an intermediate is read
//! outside.

use mlir_sys::{MlirOperation, MlirValue};

use super::{def, either, ir, result, same, ty, Found};

pub(super) fn rope(root: MlirOperation) -> Option<Found> {
    either(root, "stablehlo.add", |plain, rotated| {
        let rot_mul = def(rotated, "stablehlo.multiply")?;
        let (x, sin, rot_ops) = either(rot_mul, "stablehlo.multiply", |r, sin| {
            let (x, ops) = rotate_half(r)?;
            Some((x, sin, ops))
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
            attributes: vec![("interleaved", "false".to_string())],
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
    let x = ir::operands(lo_slice)[0];
    if !same(ir::operands(hi_slice)[0], x) {
        return None;
    }
    let shape = ty(x)?.shape;
    let rank = shape.len();
    let d = *shape.last()?;
    if rank == 0 || d % 2 != 0 || d == 0 {
        return None;
    }
    let dim = ir::i64_attribute(cat, "dimension")?;
    if dim != rank as i64 - 1 {
        return None;
    }
    // `x[..., from:to]` with unit strides.
    let takes = |s: MlirOperation, from: i64, to: i64| {
        let mut start = vec![0; rank];
        start[rank - 1] = from;
        let mut limit = shape.clone();
        limit[rank - 1] = to;
        ir::i64_array(s, "start_indices") == Some(start)
            && ir::i64_array(s, "limit_indices") == Some(limit)
            && ir::i64_array(s, "strides") == Some(vec![1; rank])
    };
    (takes(lo_slice, 0, d / 2) && takes(hi_slice, d / 2, d))
        .then(|| (x, vec![cat, neg, hi_slice, lo_slice]))
}
