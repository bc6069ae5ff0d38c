//! `scaled_dot_product_attention`, decomposed as PyTorch's math reference does:
//! `softmax(q @ k^T * scale + mask) @ v`, with causal masks and grouped-query heads.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{Cmp, DotDims, ReduceKind};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::elementwise::splat;
use super::linear::matmul;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    match op.base() {
        "aten.scaled_dot_product_attention" => Some(sdpa(op, e)),
        _ => None,
    }
}

/// Repeats each head of `[..., H, S, D]` `n` times (grouped-query attention):
/// `[..., H, S, D] -> [..., H, n, S, D] -> [..., H*n, S, D]`.
fn repeat_heads(e: &Emitter, x: &TValue, n: i64) -> LResult<TValue> {
    if n == 1 {
        return Ok(x.clone());
    }
    let r = x.rank();
    let h = r - 3;
    let mut shape = x.shape()[..=h].to_vec();
    shape.push(n);
    shape.extend_from_slice(&x.shape()[h + 1..]);
    let mut dims: Vec<i64> = (0..=h as i64).collect();
    dims.extend([h as i64 + 2, h as i64 + 3]);
    let b = e.broadcast_in_dim(x, &shape, &dims)?;
    let mut out = x.shape().to_vec();
    out[h] *= n;
    Ok(e.reshape(&b, &out)?)
}

/// `a [..., Hkv * n, L, X] @ b` per group: `a` viewed as `[..., Hkv, n, L, X]`, and
/// `b [..., Hkv, S, D]` contracted along `b_contract` (`r - 1`: `a @ b^T`, the scores;
/// `r - 2`: `a @ b`, the output) with `a`'s last dimension, every dimension of `b` before
/// its last two batched; the result viewed back as `[..., Hkv * n, L, Y]`. Each element
/// is the sum of the same products as against `b` with its heads repeated `n` times.
fn grouped_product(
    e: &Emitter,
    a: &TValue,
    b: &TValue,
    n: i64,
    b_contract: usize,
) -> LResult<TValue> {
    let r = a.rank();
    let hkv = b.shape()[r - 3];
    let mut view = a.shape()[..r - 3].to_vec();
    view.extend([hkv, n]);
    view.extend_from_slice(&a.shape()[r - 2..]);
    let a = e.reshape(a, &view)?;
    let batch: Vec<i64> = (0..r as i64 - 2).collect();
    let dims = DotDims {
        lhs_batch: batch.clone(),
        rhs_batch: batch,
        lhs_contract: vec![r as i64],
        rhs_contract: vec![b_contract as i64],
    };
    // [..., Hkv, n, L, Y]
    let out = e.dot_general(&a, b, &dims)?;
    let mut shape = out.shape()[..r - 3].to_vec();
    shape.push(hkv * n);
    shape.extend_from_slice(&out.shape()[r - 1..]);
    Ok(e.reshape(&out, &shape)?)
}

fn sdpa(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let q = op.tensor("query")?;
    let k = op.tensor("key")?;
    let v = op.tensor("value")?;
    if op.number_or("dropout_p", 0.0) != 0.0 {
        return Err(LowerError::Unsupported(
            "scaled_dot_product_attention with dropout_p > 0 is random; export in eval mode with dropout_p=0".into(),
        ));
    }
    if q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank() {
        return Err(LowerError::Invalid(
            "query, key and value must have the same rank (>= 2)".into(),
        ));
    }
    let r = q.rank();
    let d = q.shape()[r - 1];
    let (l, s) = (q.shape()[r - 2], k.shape()[r - 2]);
    let scale = op.number_opt("scale").unwrap_or(1.0 / (d as f64).sqrt());
    // PyTorch's math backend upcasts f16/bf16 to f32 for the whole computation.
    let cd = super::elementwise::accumulator(ty.dtype);
    let (q, k, v) = (e.convert(q, cd)?, e.convert(k, cd)?, e.convert(v, cd)?);
    let grouped = op.bool_or("enable_gqa", false) && r >= 3 && k.shape()[r - 3] != q.shape()[r - 3];
    // Grouped-query attention: query head `h` reads key/value head `h / n`. When the
    // batch dimensions agree, the products run over groups of `n` query heads and the
    // key and value as they are (no repeated copy of them); otherwise the key and value
    // heads are repeated.
    let groups = (grouped
        && k.shape()[..r - 3] == q.shape()[..r - 3]
        && v.shape()[..r - 2] == k.shape()[..r - 2])
        .then(|| q.shape()[r - 3] / k.shape()[r - 3]);
    let (k, v) = if grouped && groups.is_none() {
        let n = q.shape()[r - 3] / k.shape()[r - 3];
        (repeat_heads(e, &k, n)?, repeat_heads(e, &v, n)?)
    } else {
        (k, v)
    };
    // As in PyTorch: q and k are each scaled by sqrt(scale) before the product.
    // A negative scale keeps its sign on the query side.
    let root = scale.abs().sqrt();
    let q = e.mul(&q, &splat(e, &q.ty, root.copysign(scale))?)?;
    let k = e.mul(&k, &splat(e, &k.ty, root)?)?;
    let mut scores = if let Some(n) = groups {
        grouped_product(e, &q, &k, n, r - 1)?
    } else {
        let mut perm: Vec<i64> = (0..r as i64).collect();
        perm.swap(r - 2, r - 1);
        let kt = e.transpose(&k, &perm)?;
        let mut scores_shape = q.shape()[..r - 2].to_vec();
        scores_shape.extend([l, s]);
        let mut kt_shape = kt.shape()[..r - 2].to_vec();
        kt_shape.extend([l, s]);
        let scores_ty = TensorType::new(
            super::elementwise::broadcast_shapes(&scores_shape, &kt_shape)?,
            cd,
        );
        matmul(e, &q, &kt, Some(&scores_ty))?
    };
    let neg_inf = splat(e, &scores.ty, f64::NEG_INFINITY)?;
    if op.bool_or("is_causal", false) {
        let it = TensorType::new(vec![l, s], DType::I64);
        let keep = e.compare(Cmp::Ge, &e.iota(&it, 0)?, &e.iota(&it, 1)?)?;
        let keep = e.broadcast_to(&keep, scores.shape())?;
        scores = e.select(&keep, &scores, &neg_inf)?;
    }
    if let Some(mask) = op.tensor_opt("attn_mask") {
        let m = e.broadcast_to(mask, scores.shape())?;
        scores = if m.dtype() == DType::Bool {
            e.select(&m, &scores, &neg_inf)?
        } else {
            e.add(&scores, &e.convert(&m, scores.dtype())?)?
        };
    }
    // Safe softmax over the last dim (PyTorch's _safe_softmax): rows that are entirely
    // -inf (fully masked) give zeros instead of NaN.
    let last = scores.rank() as i64 - 1;
    let kept: Vec<i64> = (0..last).collect();
    let mx = e.reduce(&scores, f64::NEG_INFINITY, &[last], ReduceKind::Max)?;
    let mx_b = e.broadcast_in_dim(&mx, scores.shape(), &kept)?;
    let ex = e.unary("stablehlo.exponential", &e.sub(&scores, &mx_b)?)?;
    let sum = e.reduce(&ex, 0.0, &[last], ReduceKind::Add)?;
    let p = e.div(&ex, &e.broadcast_in_dim(&sum, scores.shape(), &kept)?)?;
    let masked_row = e.compare(Cmp::Eq, &mx_b, &neg_inf)?;
    let p = e.select(&masked_row, &splat(e, &p.ty, 0.0)?, &p)?;
    let out = if let Some(n) = groups {
        grouped_product(e, &p, &v, n, r - 2)?
    } else {
        matmul(e, &p, &v, Some(&ty.with_dtype(cd)))?
    };
    let out = e.convert(&out, ty.dtype)?;
    Ok(vec![out])
}
