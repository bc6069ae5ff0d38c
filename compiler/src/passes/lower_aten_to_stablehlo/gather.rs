//! Indexing: `embedding`, `index_select`, advanced indexing (`index.Tensor`) and
//! `gather`, all as `stablehlo.gather`. Negative indices wrap as in PyTorch.

use tpuc_dialects::stablehlo::{Cmp, GatherDims};
use tpuc_dialects::{Emitter, TValue};
use tpuc_runtime::DType;

use super::elementwise::{broadcast_shapes, splat};
use super::op::norm_dim;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.embedding" => embedding(op, e),
        "aten.index_select" => index_select(op, e),
        "aten.index" | "aten._unsafe_index" => index(op, e),
        "aten.gather" => gather(op, e),
        _ => return None,
    };
    Some(r)
}

/// Indices as i64 with negatives wrapped by `size`.
fn wrap(e: &Emitter, idx: &TValue, size: i64) -> LResult<TValue> {
    if idx.dtype() == DType::Bool {
        return Err(LowerError::Unsupported(
            "boolean mask indexing has a data-dependent shape; use torch.where instead".into(),
        ));
    }
    let i = e.convert(idx, DType::I64)?;
    let zero = splat(e, &i.ty, 0.0)?;
    let neg = e.compare(Cmp::Lt, &i, &zero)?;
    let shifted = e.add(&i, &splat(e, &i.ty, size as f64)?)?;
    Ok(e.select(&neg, &shifted, &i)?)
}

/// Takes whole slices of `x` along `dim` at `indices` (any shape): the index dims
/// replace `dim` in the result.
fn take(e: &Emitter, x: &TValue, indices: &TValue, dim: usize) -> LResult<TValue> {
    let idx = wrap(e, indices, x.shape()[dim])?;
    let ir = idx.rank();
    let mut idx_shape = idx.shape().to_vec();
    idx_shape.push(1);
    let idx = e.reshape(&idx, &idx_shape)?;
    let mut slice_sizes = x.shape().to_vec();
    slice_sizes[dim] = 1;
    // Result: x dims before `dim`, index dims, x dims after `dim`.
    let offset_dims: Vec<i64> = (0..dim as i64)
        .chain((dim as i64 + ir as i64)..(x.rank() as i64 - 1 + ir as i64))
        .collect();
    let d = GatherDims {
        offset_dims,
        collapsed_slice_dims: vec![dim as i64],
        start_index_map: vec![dim as i64],
        index_vector_dim: ir as i64,
        slice_sizes,
    };
    Ok(e.gather(x, &idx, &d)?)
}

fn embedding(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let w = op.tensor("weight")?;
    let idx = op.tensor("indices")?;
    let out = take(e, w, idx, 0)?;
    Ok(vec![e.reshape(&out, &op.result(0)?.shape)?])
}

fn index_select(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let idx = op.tensor("index")?;
    if x.rank() == 0 {
        return Ok(vec![x.clone()]);
    }
    let out = take(e, x, idx, dim)?;
    Ok(vec![e.reshape(&out, &op.result(0)?.shape)?])
}

/// Advanced indexing `x[i0, :, i2, ...]` with optional index tensors.
fn index(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let ty = op.result(0)?;
    let indices = op.optional_tensor_list("indices");
    let indexed: Vec<(usize, &TValue)> = indices
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.map(|t| (i, t)))
        .collect();
    if indexed.is_empty() {
        return Ok(vec![e.reshape(x, &ty.shape)?]);
    }
    if indices.len() > x.rank() {
        return Err(LowerError::Invalid("too many indices for tensor".into()));
    }
    let mut bshape: Vec<i64> = vec![];
    for (_, t) in &indexed {
        bshape = broadcast_shapes(&bshape, t.shape())?;
    }
    // Move indexed dims to the front, in order.
    let dims: Vec<usize> = indexed.iter().map(|(d, _)| *d).collect();
    let mut perm: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    perm.extend((0..x.rank() as i64).filter(|d| !dims.contains(&(*d as usize))));
    let xt = e.transpose(x, &perm)?;
    let k = dims.len();
    let mut coords = Vec::new();
    for (d, t) in &indexed {
        let w = wrap(e, t, x.shape()[*d])?;
        let w = e.broadcast_to(&w, &bshape)?;
        let mut s = bshape.clone();
        s.push(1);
        coords.push(e.reshape(&w, &s)?);
    }
    let refs: Vec<&TValue> = coords.iter().collect();
    let stacked = e.concatenate(&refs, bshape.len() as i64)?;
    let mut slice_sizes = xt.shape().to_vec();
    for s in slice_sizes.iter_mut().take(k) {
        *s = 1;
    }
    let nb = bshape.len() as i64;
    let rest = x.rank() as i64 - k as i64;
    let g = GatherDims {
        offset_dims: (nb..nb + rest).collect(),
        collapsed_slice_dims: (0..k as i64).collect(),
        start_index_map: (0..k as i64).collect(),
        index_vector_dim: nb,
        slice_sizes,
    };
    let out = e.gather(&xt, &stacked, &g)?;
    // Adjacent indexed dims keep their place: the broadcast dims go where the first
    // indexed dim was.
    let adjacent = dims.windows(2).all(|w| w[1] == w[0] + 1);
    let first = dims[0];
    let out = if adjacent && first > 0 {
        let r = out.rank() as i64;
        let mut p: Vec<i64> = (nb..nb + first as i64).collect();
        p.extend(0..nb);
        p.extend(nb + first as i64..r);
        e.transpose(&out, &p)?
    } else {
        out
    };
    Ok(vec![e.reshape(&out, &ty.shape)?])
}

/// `torch.gather(x, dim, index)`: `out[i][j][k] = x[i][index[i][j][k]][k]` for dim 1.
fn gather(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let idx = op.tensor("index")?;
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let r = idx.rank();
    if r == 0 {
        let s = e.reshape(idx, &[1])?;
        let out = take(e, &e.reshape(x, &[x.ty.num_elements().max(1)])?, &s, 0)?;
        return Ok(vec![e.reshape(&out, &op.result(0)?.shape)?]);
    }
    let wrapped = wrap(e, idx, x.shape()[dim])?;
    let mut full = idx.shape().to_vec();
    full.push(1);
    let mut coords = Vec::new();
    for d in 0..r {
        let c = if d == dim {
            wrapped.clone()
        } else {
            e.iota(&wrapped.ty, d as i64)?
        };
        coords.push(e.reshape(&c, &full)?);
    }
    let refs: Vec<&TValue> = coords.iter().collect();
    let stacked = e.concatenate(&refs, r as i64)?;
    let g = GatherDims {
        offset_dims: vec![],
        collapsed_slice_dims: (0..r as i64).collect(),
        start_index_map: (0..r as i64).collect(),
        index_vector_dim: r as i64,
        slice_sizes: vec![1; x.rank()],
    };
    Ok(vec![e.gather(x, &stacked, &g)?])
}
