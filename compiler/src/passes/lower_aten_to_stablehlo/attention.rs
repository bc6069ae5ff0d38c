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
    let attend = Attend {
        groups,
        causal: op.bool_or("is_causal", false),
        s,
        out_ty: ty.with_dtype(cd),
    };
    let mask = op.tensor_opt("attn_mask");
    // Long prompts: the scores (`[..., L, S]` in f32) are computed for blocks of query
    // rows in a loop, so that no L x S temporary is made (a block's fit on chip; a TPU
    // keeps them there). Every row is computed exactly as it is in one piece.
    let rows = query_block(&q.shape()[..r - 2], l, s);
    let out = if rows < l {
        attend.in_blocks(e, &q, &k, &v, mask, rows)?
    } else {
        attend.rows(e, &q, &k, &v, mask, None)?
    };
    let out = e.convert(&out, ty.dtype)?;
    Ok(vec![out])
}

/// Scores (f32) above this many bytes are computed a block of query rows at a time.
const SCORES_IN_ONE_PIECE: i64 = 32 << 20;
/// At most this many blocks (the block grows past the bytes above instead).
const MAX_BLOCKS: i64 = 64;

/// The query rows computed at a time for `l` queries against `s` keys with batch and
/// head dimensions `lead`: all of them (`l`) when their f32 scores fit
/// [`SCORES_IN_ONE_PIECE`], else a power of two (at least 16) that does, or the block
/// that makes [`MAX_BLOCKS`] blocks.
fn query_block(lead: &[i64], l: i64, s: i64) -> i64 {
    let row_bytes = lead.iter().product::<i64>().max(1) * s * 4;
    if l * row_bytes <= SCORES_IN_ONE_PIECE || l < 32 {
        return l;
    }
    let mut rows = 16;
    while rows * 2 * row_bytes <= SCORES_IN_ONE_PIECE {
        rows *= 2;
    }
    rows.max((l + MAX_BLOCKS - 1) / MAX_BLOCKS).min(l)
}

/// What every block of query rows shares: the grouping, the causal flag, the key
/// length and the output's type (all rows, f32).
struct Attend {
    groups: Option<i64>,
    causal: bool,
    s: i64,
    out_ty: TensorType,
}

impl Attend {
    /// The attention output (f32) of the scaled query rows `q` (`[..., Lb, D]`) against
    /// the scaled key `k` and the value `v`, with `mask`'s rows for them; `row0` (an i32
    /// scalar) is the first row's index in the whole query when `q` is a block of it.
    fn rows(
        &self,
        e: &Emitter,
        q: &TValue,
        k: &TValue,
        v: &TValue,
        mask: Option<&TValue>,
        row0: Option<&TValue>,
    ) -> LResult<TValue> {
        let r = q.rank();
        let (lb, s) = (q.shape()[r - 2], self.s);
        let cd = self.out_ty.dtype;
        let mut scores = if let Some(n) = self.groups {
            grouped_product(e, q, k, n, r - 1)?
        } else {
            let mut perm: Vec<i64> = (0..r as i64).collect();
            perm.swap(r - 2, r - 1);
            let kt = e.transpose(k, &perm)?;
            let mut scores_shape = q.shape()[..r - 2].to_vec();
            scores_shape.extend([lb, s]);
            let mut kt_shape = kt.shape()[..r - 2].to_vec();
            kt_shape.extend([lb, s]);
            let scores_ty = TensorType::new(
                super::elementwise::broadcast_shapes(&scores_shape, &kt_shape)?,
                cd,
            );
            matmul(e, q, &kt, Some(&scores_ty))?
        };
        let neg_inf = splat(e, &scores.ty, f64::NEG_INFINITY)?;
        if self.causal {
            // Top-left aligned: query row i keeps keys j <= i.
            let it = TensorType::new(vec![lb, s], DType::I64);
            let mut rows = e.iota(&it, 0)?;
            if let Some(row0) = row0 {
                let row0 = e.convert(row0, DType::I64)?;
                rows = e.add(&rows, &e.broadcast_in_dim(&row0, &[lb, s], &[])?)?;
            }
            let keep = e.compare(Cmp::Ge, &rows, &e.iota(&it, 1)?)?;
            let keep = e.broadcast_to(&keep, scores.shape())?;
            scores = e.select(&keep, &scores, &neg_inf)?;
        }
        if let Some(mask) = mask {
            let m = e.broadcast_to(mask, scores.shape())?;
            scores = if m.dtype() == DType::Bool {
                e.select(&m, &scores, &neg_inf)?
            } else {
                e.add(&scores, &e.convert(&m, scores.dtype())?)?
            };
        }
        // Safe softmax over the last dim (PyTorch's _safe_softmax): rows that are
        // entirely -inf (fully masked) give zeros instead of NaN.
        let last = scores.rank() as i64 - 1;
        let kept: Vec<i64> = (0..last).collect();
        let mx = e.reduce(&scores, f64::NEG_INFINITY, &[last], ReduceKind::Max)?;
        let mx_b = e.broadcast_in_dim(&mx, scores.shape(), &kept)?;
        let ex = e.unary("stablehlo.exponential", &e.sub(&scores, &mx_b)?)?;
        let sum = e.reduce(&ex, 0.0, &[last], ReduceKind::Add)?;
        let p = e.div(&ex, &e.broadcast_in_dim(&sum, scores.shape(), &kept)?)?;
        let masked_row = e.compare(Cmp::Eq, &mx_b, &neg_inf)?;
        let p = e.select(&masked_row, &splat(e, &p.ty, 0.0)?, &p)?;
        Ok(if let Some(n) = self.groups {
            grouped_product(e, &p, v, n, r - 2)?
        } else {
            let mut shape = self.out_ty.shape.clone();
            let or = shape.len();
            shape[or - 2] = lb;
            matmul(e, &p, v, Some(&TensorType::new(shape, cd)))?
        })
    }

    /// [`Attend::rows`] for every block of `rows` query rows, in a `stablehlo.while`
    /// over the blocks: block `i` starts at row `min(i * rows, L - rows)` (the last
    /// block, when `rows` does not divide `L`, overlaps the one before it and writes
    /// the same values again), its query rows and mask rows read with `dynamic_slice`,
    /// its output written into the whole output with `dynamic_update_slice`.
    fn in_blocks(
        &self,
        e: &Emitter,
        q: &TValue,
        k: &TValue,
        v: &TValue,
        mask: Option<&TValue>,
        rows: i64,
    ) -> LResult<TValue> {
        let r = q.rank();
        let l = q.shape()[r - 2];
        let blocks = (l + rows - 1) / rows;
        // An i32 counter: XLA keeps its loop condition a plain compare with the trip
        // count (an i64 one is split into two words on TPUs), which cost analyses read.
        let counter = TensorType::scalar(DType::I32);
        let mut state = vec![
            e.constant(&counter, 0.0)?,
            e.constant(&self.out_ty, 0.0)?,
            q.clone(),
            k.clone(),
            v.clone(),
        ];
        // A mask with a row per query is read a block at a time.
        let mask_rows = mask.and_then(|m| {
            let mr = m.rank();
            (mr >= 2 && m.shape()[mr - 2] == l).then_some(mr - 2)
        });
        state.extend(mask.cloned());
        let types: Vec<TensorType> = state.iter().map(|x| x.ty.clone()).collect();
        let cond = e.region(&types, |inner: &Emitter, args: &[TValue]| {
            let end = inner.constant(&counter, blocks as f64)?;
            Ok::<_, LowerError>(vec![inner.compare(Cmp::Lt, &args[0], &end)?])
        })?;
        let body = e.region(&types, |inner: &Emitter, args: &[TValue]| {
            let (i, out, q, k, v) = (&args[0], &args[1], &args[2], &args[3], &args[4]);
            let mask = args.get(5);
            let row0 = inner.min(
                &inner.mul(i, &inner.constant(&counter, rows as f64)?)?,
                &inner.constant(&counter, (l - rows) as f64)?,
            )?;
            let zero = inner.constant(&counter, 0.0)?;
            let starts = |rank: usize, at: usize| {
                (0..rank)
                    .map(|d| if d == at { &row0 } else { &zero })
                    .collect::<Vec<_>>()
            };
            let mut sizes = q.shape().to_vec();
            sizes[r - 2] = rows;
            let qb = inner.dynamic_slice(q, &starts(r, r - 2), &sizes)?;
            let mb = match (mask, mask_rows) {
                (Some(m), Some(at)) => {
                    let mut sizes = m.shape().to_vec();
                    sizes[at] = rows;
                    Some(inner.dynamic_slice(m, &starts(m.rank(), at), &sizes)?)
                }
                (m, _) => m.cloned(),
            };
            let ob = self.rows(inner, &qb, k, v, mb.as_ref(), Some(&row0))?;
            let out = inner.dynamic_update_slice(out, &ob, &starts(out.rank(), r - 2))?;
            let mut next = vec![inner.add(i, &inner.constant(&counter, 1.0)?)?, out];
            next.extend(args[2..].iter().cloned());
            Ok::<_, LowerError>(next)
        })?;
        let refs: Vec<&TValue> = state.iter().collect();
        Ok(e.while_(&refs, cond, body)?.swap_remove(1))
    }
}
