//! Indexing: `embedding`, `index_select`, advanced indexing (`index.Tensor`) and
//! `gather`, all as `stablehlo.gather`. Negative indices wrap as in PyTorch.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{Cmp, GatherDims, ReduceKind, ScatterDims};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::elementwise::{broadcast_shapes, splat};
use super::op::norm_dim;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.embedding" => embedding(op, e),
        "aten._embedding_bag" | "aten._embedding_bag_forward_only" | "aten.embedding_bag" => {
            embedding_bag(op, e)
        }
        "aten.index_select" => index_select(op, e),
        "aten.index" | "aten._unsafe_index" => index(op, e),
        "aten.gather" => gather(op, e),
        "aten.scatter" => scatter(op, e, None),
        "aten.scatter_add" => scatter(op, e, Some(ReduceKind::Add)),
        "aten.scatter_reduce" => scatter_reduce(op, e),
        "aten.index_put" | "aten._unsafe_index_put" => index_put(op, e),
        "aten.select_scatter" => select_scatter(op, e),
        "aten.slice_scatter" => slice_scatter(op, e),
        "aten.index_copy" | "aten.index_add" | "aten.index_fill" => index_update(op, e),
        "aten.masked_scatter" => masked_scatter(op, e),
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
pub(super) fn take(e: &Emitter, x: &TValue, indices: &TValue, dim: usize) -> LResult<TValue> {
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

/// The common part of advanced indexing (`index`, `index_put`): the indexed dims moved
/// to the front of `x` (in order), the index tensors wrapped, broadcast together and
/// stacked into coordinates `[B..., k]`.
struct AdvancedIndex {
    /// The indexed dims of `x`, in order.
    dims: Vec<usize>,
    /// The permutation that moves them to the front.
    perm: Vec<i64>,
    /// `x` transposed by `perm`.
    xt: TValue,
    /// The broadcast shape of the index tensors.
    bshape: Vec<i64>,
    /// Coordinates `[bshape..., dims.len()]`.
    coords: TValue,
}

impl AdvancedIndex {
    fn new(e: &Emitter, x: &TValue, indexed: &[(usize, &TValue)]) -> LResult<AdvancedIndex> {
        let mut bshape: Vec<i64> = vec![];
        for (_, t) in indexed {
            bshape = broadcast_shapes(&bshape, t.shape())?;
        }
        let dims: Vec<usize> = indexed.iter().map(|(d, _)| *d).collect();
        let mut perm: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        perm.extend((0..x.rank() as i64).filter(|d| !dims.contains(&(*d as usize))));
        let xt = e.transpose(x, &perm)?;
        let mut column = bshape.clone();
        column.push(1);
        let mut parts = Vec::new();
        for (d, t) in indexed {
            let w = e.broadcast_to(&wrap(e, t, x.shape()[*d])?, &bshape)?;
            parts.push(e.reshape(&w, &column)?);
        }
        let refs: Vec<&TValue> = parts.iter().collect();
        let coords = e.concatenate(&refs, bshape.len() as i64)?;
        Ok(AdvancedIndex {
            dims,
            perm,
            xt,
            bshape,
            coords,
        })
    }

    /// Whether the indexed dims are adjacent: PyTorch then keeps the broadcast dims
    /// where the first indexed dim was, instead of in front.
    fn adjacent(&self) -> bool {
        self.dims.windows(2).all(|w| w[1] == w[0] + 1)
    }
}

/// The inverse of a permutation.
pub(super) fn inverse_permutation(perm: &[i64]) -> Vec<i64> {
    let mut inverse = vec![0i64; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p as usize] = i as i64;
    }
    inverse
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
    let ai = AdvancedIndex::new(e, x, &indexed)?;
    let (xt, bshape, dims) = (&ai.xt, &ai.bshape, &ai.dims);
    let k = dims.len();
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
    let out = e.gather(xt, &ai.coords, &g)?;
    // Adjacent indexed dims keep their place: the broadcast dims go where the first
    // indexed dim was.
    let first = dims[0];
    let out = if ai.adjacent() && first > 0 {
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
    let stacked = coordinates(e, &wrapped, dim)?;
    let g = GatherDims {
        offset_dims: vec![],
        collapsed_slice_dims: (0..r as i64).collect(),
        start_index_map: (0..r as i64).collect(),
        index_vector_dim: r as i64,
        slice_sizes: vec![1; x.rank()],
    };
    Ok(vec![e.gather(x, &stacked, &g)?])
}

/// Full coordinates for an index tensor used along `dim`: `[idx.shape..., rank]` where
/// entry `d` is the position along `d`, and `idx` itself along `dim`.
fn coordinates(e: &Emitter, idx: &TValue, dim: usize) -> LResult<TValue> {
    let r = idx.rank();
    let mut full = idx.shape().to_vec();
    full.push(1);
    let mut coords = Vec::new();
    for d in 0..r {
        let c = if d == dim {
            idx.clone()
        } else {
            e.iota(&idx.ty, d as i64)?
        };
        coords.push(e.reshape(&c, &full)?);
    }
    let refs: Vec<&TValue> = coords.iter().collect();
    Ok(e.concatenate(&refs, r as i64)?)
}

/// Element-wise scatter along `dim`: `out[..., index[i,j,k], ...] (op)= src[i,j,k]`.
fn scatter_elements(
    e: &Emitter,
    x: &TValue,
    dim: usize,
    idx: &TValue,
    src: &TValue,
    kind: Option<ReduceKind>,
) -> LResult<TValue> {
    let r = x.rank();
    if idx.rank() != r {
        return Err(LowerError::Invalid(
            "index must have the rank of self".into(),
        ));
    }
    if idx.ty.num_elements() == 0 {
        return Ok(x.clone());
    }
    let wrapped = wrap(e, idx, x.shape()[dim])?;
    let coords = coordinates(e, &wrapped, dim)?;
    // src may be larger than index: only its leading index.shape block is used.
    let src = e.convert(src, x.dtype())?;
    let src = e.slice(&src, &vec![0; r], idx.shape(), &vec![1; r])?;
    let d = ScatterDims {
        update_window_dims: vec![],
        inserted_window_dims: (0..r as i64).collect(),
        scatter_dims_to_operand_dims: (0..r as i64).collect(),
        index_vector_dim: r as i64,
    };
    Ok(e.scatter(x, &coords, &src, &d, kind)?)
}

/// `scatter(self, dim, index, src | value, reduce=None|"add"|"multiply")`.
fn scatter(op: &AtenOp, e: &Emitter, kind: Option<ReduceKind>) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let idx = op.tensor("index")?;
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let kind = match op.string_opt("reduce") {
        Some("add") | Some("sum") => Some(ReduceKind::Add),
        Some("multiply") | Some("prod") => Some(ReduceKind::Mul),
        Some(other) => return Err(LowerError::Unsupported(format!("scatter reduce `{other}`"))),
        None => kind,
    };
    let src = match op.tensor_opt("src") {
        Some(s) => s.clone(),
        None => {
            let v = op.number_or("value", 0.0);
            e.constant(&idx.ty.with_dtype(x.dtype()), v)?
        }
    };
    if x.rank() == 0 {
        return Ok(vec![e.convert(&src, x.dtype())?]);
    }
    Ok(vec![scatter_elements(e, x, dim, idx, &src, kind)?])
}

/// `scatter_reduce(self, dim, index, src, reduce, include_self)` with reduce
/// sum/prod/amax/amin/mean.
fn scatter_reduce(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let idx = op.tensor("index")?;
    let src = op.tensor("src")?;
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let include_self = op.bool_or("include_self", true);
    let reduce = op.string_opt("reduce").unwrap_or("sum").to_string();
    let kind = match reduce.as_str() {
        "sum" | "mean" => ReduceKind::Add,
        "prod" => ReduceKind::Mul,
        "amax" => ReduceKind::Max,
        "amin" => ReduceKind::Min,
        other => return Err(LowerError::Invalid(format!("unknown reduce `{other}`"))),
    };
    // Without include_self, positions that receive updates start from the identity.
    let base = if include_self {
        x.clone()
    } else {
        let (lo, hi) = tpuc_dialects::stablehlo::integer_bounds(x.dtype());
        let identity = match kind {
            ReduceKind::Add | ReduceKind::Or => 0.0,
            ReduceKind::Mul | ReduceKind::And => 1.0,
            ReduceKind::Max | ReduceKind::MaxUnchecked => lo,
            ReduceKind::Min => hi,
        };
        let hit = scatter_elements(
            e,
            &e.constant(&x.ty, 0.0)?,
            dim,
            idx,
            &e.constant(&idx.ty.with_dtype(x.dtype()), 1.0)?,
            None,
        )?;
        let hit = e.compare(Cmp::Ne, &hit, &e.constant(&x.ty, 0.0)?)?;
        e.select(&hit, &e.constant(&x.ty, identity)?, x)?
    };
    let out = scatter_elements(e, &base, dim, idx, src, Some(kind))?;
    if reduce != "mean" {
        return Ok(vec![out]);
    }
    // mean: divide by the number of contributions (plus self when included).
    let ones = e.constant(&idx.ty.with_dtype(x.dtype()), 1.0)?;
    let start = e.constant(&x.ty, if include_self { 1.0 } else { 0.0 })?;
    let counts = scatter_elements(e, &start, dim, idx, &ones, Some(ReduceKind::Add))?;
    let counts = e.max(&counts, &e.constant(&x.ty, 1.0)?)?;
    let mean = e.div(&out, &counts)?;
    if x.dtype().is_float() {
        return Ok(vec![mean]);
    }
    // Integer means round toward negative infinity in PyTorch (floor division); the
    // divide truncates, so step down where the remainder is non-zero and negative.
    let rem = e.binary("stablehlo.remainder", &out, &counts)?;
    let zero = e.constant(&x.ty, 0.0)?;
    let fix = e.compare(Cmp::Lt, &rem, &zero)?;
    let lower = e.sub(&mean, &e.constant(&x.ty, 1.0)?)?;
    Ok(vec![e.select(&fix, &lower, &mean)?])
}

/// `index_put(self, indices, values, accumulate)`: `self[indices] = values` (or `+=`).
fn index_put(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let values = op.tensor("values")?;
    let accumulate = op.bool_or("accumulate", false);
    let indices = op.optional_tensor_list("indices");
    let indexed: Vec<(usize, &TValue)> = indices
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.map(|t| (i, t)))
        .collect();
    if indexed.is_empty() {
        let v = super::elementwise::to_type(e, values, &x.ty)?;
        return Ok(vec![if accumulate { e.add(x, &v)? } else { v }]);
    }
    if let [(0, mask)] = indexed.as_slice() {
        if mask.dtype() == DType::Bool {
            return Ok(vec![index_put_mask(e, x, mask, values, accumulate)?]);
        }
    }
    let ai = AdvancedIndex::new(e, x, &indexed)?;
    let (xt, bshape, dims) = (&ai.xt, &ai.bshape, &ai.dims);
    let k = dims.len();
    let nb = bshape.len();
    let rest: Vec<i64> = xt.shape()[k..].to_vec();
    // Values broadcast to the shape x[indices] has in PyTorch, then into our layout
    // (broadcast dims first, then the remaining dims).
    let adjacent = ai.adjacent();
    let first = dims[0];
    let torch_shape: Vec<i64> = if adjacent {
        let mut s = x.shape()[..first].to_vec();
        s.extend(bshape);
        s.extend(&x.shape()[dims[k - 1] + 1..]);
        s
    } else {
        let mut s = bshape.to_vec();
        s.extend(&rest);
        s
    };
    let v = e.convert(values, x.dtype())?;
    let v = e.broadcast_to(&v, &torch_shape)?;
    let v = if adjacent && first > 0 {
        // torch layout: [pre (first dims), B, post] -> ours: [B, pre, post]
        let nb_i = nb as i64;
        let f = first as i64;
        let r = v.rank() as i64;
        let mut p: Vec<i64> = (f..f + nb_i).collect();
        p.extend(0..f);
        p.extend(f + nb_i..r);
        e.transpose(&v, &p)?
    } else {
        v
    };
    let d = ScatterDims {
        update_window_dims: (nb as i64..(nb + rest.len()) as i64).collect(),
        inserted_window_dims: (0..k as i64).collect(),
        scatter_dims_to_operand_dims: (0..k as i64).collect(),
        index_vector_dim: nb as i64,
    };
    let kind = if accumulate {
        Some(if x.dtype() == DType::Bool {
            ReduceKind::Or
        } else {
            ReduceKind::Add
        })
    } else {
        None
    };
    let out = e.scatter(xt, &ai.coords, &v, &d, kind)?;
    // Undo the transposition.
    Ok(vec![e.transpose(&out, &inverse_permutation(&ai.perm))?])
}

/// Writes `src` into the slices `positions` of `x` along `dim` (window scatter).
fn scatter_slices(
    e: &Emitter,
    x: &TValue,
    dim: usize,
    positions: &[i64],
    src: &TValue,
) -> LResult<TValue> {
    let n = positions.len() as i64;
    let idx_ty = tpuc_dialects::TensorType::new(vec![n], DType::I64);
    let lits: Vec<String> = positions.iter().map(|p| p.to_string()).collect();
    let idx = e.constant_elements(&idx_ty, &lits)?;
    scatter_along(e, x, dim, &idx, src, None)
}

/// Writes (or combines with `kind`) the slices of `src` along `dim` into `x` at the
/// 1-D positions `idx` (negative positions wrap): index_copy / index_add / index_fill.
fn scatter_along(
    e: &Emitter,
    x: &TValue,
    dim: usize,
    idx: &TValue,
    src: &TValue,
    kind: Option<ReduceKind>,
) -> LResult<TValue> {
    let r = x.rank();
    let n = idx.ty.num_elements();
    let idx = wrap(e, idx, x.shape()[dim])?;
    let idx = e.reshape(&idx, &[n, 1])?;
    // updates: [n, other dims...] with the positions first.
    let mut perm: Vec<i64> = vec![dim as i64];
    perm.extend((0..r as i64).filter(|&d| d != dim as i64));
    let src = e.convert(src, x.dtype())?;
    let upd = e.transpose(&src, &perm)?;
    let xt = e.transpose(x, &perm)?;
    let d = ScatterDims {
        update_window_dims: (1..r as i64).collect(),
        inserted_window_dims: vec![0],
        scatter_dims_to_operand_dims: vec![0],
        index_vector_dim: 1,
    };
    let out = e.scatter(&xt, &idx, &upd, &d, kind)?;
    Ok(e.transpose(&out, &inverse_permutation(&perm))?)
}

/// `index_copy` / `index_add(alpha)` / `index_fill(value)` along `dim` at `index`.
fn index_update(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let idx = op.tensor("index")?;
    if x.rank() == 0 {
        return Err(LowerError::Unsupported(
            "index_copy/add/fill of a 0-d tensor".into(),
        ));
    }
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let n = idx.ty.num_elements();
    let mut slice_shape = x.shape().to_vec();
    slice_shape[dim] = n;
    let (src, kind) = match op.base() {
        "aten.index_fill" => {
            let v = match op.tensor_opt("value") {
                Some(t) => e.convert(t, x.dtype())?,
                None => e.scalar(x.dtype(), op.number_or("value", 0.0))?,
            };
            (e.broadcast_to(&v, &slice_shape)?, None)
        }
        "aten.index_add" => {
            let s = e.convert(op.tensor("source")?, x.dtype())?;
            let alpha = op.number_or("alpha", 1.0);
            let s = if alpha != 1.0 {
                e.mul(&s, &e.constant(&s.ty, alpha)?)?
            } else {
                s
            };
            (s, Some(ReduceKind::Add))
        }
        _ => (op.tensor("source")?.clone(), None),
    };
    if n == 0 {
        return Ok(vec![x.clone()]);
    }
    let src = e.reshape(&src, &slice_shape)?;
    Ok(vec![scatter_along(e, x, dim, idx, &src, kind)?])
}

/// `select_scatter(self, src, dim, index)`: `self` with `self.select(dim, index) = src`.
fn select_scatter(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let src = op.tensor("src")?;
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let size = x.shape()[dim];
    let index = op.int("index")?;
    let index = if index < 0 { index + size } else { index };
    let mut shape = src.shape().to_vec();
    shape.insert(dim, 1);
    let src = e.reshape(src, &shape)?;
    if (0..size).contains(&index) {
        return Ok(vec![write_run(e, x, dim, index, &src)?]);
    }
    Ok(vec![scatter_slices(e, x, dim, &[index], &src)?])
}

/// `x` with the positions `start..start + src.shape[dim]` along `dim` replaced by `src`,
/// as the concatenation of the untouched parts and `src`: the same values as a scatter
/// at those positions, in a form XLA fuses with what produces and reads it.
fn write_run(e: &Emitter, x: &TValue, dim: usize, start: i64, src: &TValue) -> LResult<TValue> {
    let size = x.shape()[dim];
    let end = start + src.shape()[dim];
    let src = e.convert(src, x.dtype())?;
    let mut pieces = Vec::new();
    if start > 0 {
        pieces.push(e.slice_in_dim(x, dim, 0, start, 1)?);
    }
    pieces.push(src);
    if end < size {
        pieces.push(e.slice_in_dim(x, dim, end, size, 1)?);
    }
    let refs: Vec<&TValue> = pieces.iter().collect();
    Ok(e.concatenate(&refs, dim as i64)?)
}

/// `slice_scatter(self, src, dim, start, end, step)`.
fn slice_scatter(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let src = op.tensor("src")?;
    let dim = norm_dim(op.int_or("dim", 0), x.rank())? as usize;
    let size = x.shape()[dim];
    let clamp = |v: i64| (if v < 0 { v + size } else { v }).clamp(0, size);
    let start = clamp(op.int_opt("start").unwrap_or(0));
    let end = clamp(op.int_opt("end").unwrap_or(size).min(i64::MAX / 2));
    let step = op.int_or("step", 1).max(1);
    let positions: Vec<i64> = (start..end).step_by(step as usize).collect();
    if positions.len() as i64 != src.shape()[dim] {
        return Err(LowerError::Invalid("src does not match the slice".into()));
    }
    if positions.is_empty() {
        return Ok(vec![x.clone()]);
    }
    if step == 1 {
        return Ok(vec![write_run(e, x, dim, start, src)?]);
    }
    Ok(vec![scatter_slices(e, x, dim, &positions, src)?])
}

/// `masked_scatter(self, mask, source)`: the i-th true position of the (broadcast) mask
/// takes `source.flatten()[i]`; positions come from an inclusive prefix sum of the mask.
fn masked_scatter(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let ty = op.result(0)?;
    let mask = e.broadcast_to(op.tensor("mask")?, x.shape())?;
    let src = op.tensor("source")?;
    let n = x.ty.num_elements();
    let ns = src.ty.num_elements();
    if n == 0 || ns == 0 {
        return Ok(vec![x.clone()]);
    }
    let m = e.reshape(&mask, &[n])?;
    let mi = e.convert(&m, DType::I64)?;
    let p = tpuc_dialects::stablehlo::WindowParams {
        dims: vec![n],
        strides: vec![1],
        padding: vec![(n - 1, 0)],
        window_dilations: vec![1],
    };
    let count = e.reduce_window(&mi, 0.0, &p, ReduceKind::Add)?;
    let pos = e.sub(&count, &e.constant(&count.ty, 1.0)?)?;
    let pos = e.clamp(
        &e.scalar(DType::I64, 0.0)?,
        &pos,
        &e.scalar(DType::I64, (ns - 1) as f64)?,
    )?;
    let flat_src = e.reshape(&e.convert(src, x.dtype())?, &[ns])?;
    let picked = take(e, &flat_src, &pos, 0)?;
    let flat_x = e.reshape(x, &[n])?;
    let out = e.select(&m, &picked, &flat_x)?;
    Ok(vec![e.reshape(&out, &ty.shape)?])
}

/// `x[mask] = values` (or `+=`) for a boolean mask over the leading dims: static shapes
/// throughout, the i-th true position taking row i of `values` (found with a prefix sum
/// of the mask), or the single broadcast value.
fn index_put_mask(
    e: &Emitter,
    x: &TValue,
    mask: &TValue,
    values: &TValue,
    accumulate: bool,
) -> LResult<TValue> {
    let k = mask.rank();
    if k > x.rank() || mask.shape() != &x.shape()[..k] {
        return Err(LowerError::Invalid(format!(
            "mask {} does not match the leading dims of {}",
            mask.ty, x.ty
        )));
    }
    let m: i64 = mask.shape().iter().product();
    let rest: Vec<i64> = x.shape()[k..].to_vec();
    let mut flat_shape = vec![m];
    flat_shape.extend(&rest);
    let xf = e.reshape(x, &flat_shape)?;
    let mf = e.reshape(mask, &[m])?;
    let mask_b = e.broadcast_in_dim(&mf, &flat_shape, &[0])?;
    let v = e.convert(values, x.dtype())?;
    let rows = if v.ty.num_elements() == 1 || v.rank() <= rest.len() {
        // One value (or one row) for every selected position.
        e.broadcast_to(&v, &flat_shape)?
    } else {
        let count = v.shape()[0];
        if count == 0 {
            return Ok(x.clone());
        }
        let mi = e.convert(&mf, DType::I64)?;
        let p = tpuc_dialects::stablehlo::WindowParams {
            dims: vec![m],
            strides: vec![1],
            padding: vec![(m - 1, 0)],
            window_dilations: vec![1],
        };
        let pos = e.sub(
            &e.reduce_window(&mi, 0.0, &p, ReduceKind::Add)?,
            &e.constant(&mi.ty, 1.0)?,
        )?;
        let pos = e.clamp(
            &e.scalar(DType::I64, 0.0)?,
            &pos,
            &e.scalar(DType::I64, (count - 1) as f64)?,
        )?;
        let mut vshape = vec![count];
        vshape.extend(&rest);
        let vv = e.broadcast_to(&v, &vshape)?;
        take(e, &vv, &pos, 0)?
    };
    let out = if accumulate {
        let zero = e.constant(&xf.ty, 0.0)?;
        e.add(&xf, &e.select(&mask_b, &rows, &zero)?)?
    } else {
        e.select(&mask_b, &rows, &xf)?
    };
    Ok(e.reshape(&out, x.shape())?)
}

/// `_embedding_bag(weight, indices, offsets, .., mode, .., per_sample_weights,
/// include_last_offset, padding_idx)`: rows of `weight` summed (mode 0), averaged (1)
/// or max-reduced (2) per bag; bag `b` holds positions `offsets[b]..offsets[b+1]`.
/// Static shapes: position-to-bag membership is a one-hot `[B, N]` mask built from the
/// offsets at run time; empty bags give zeros. Returns (output, offset2bag, bag_size,
/// max_indices); max_indices is only produced for mode 0/1 (as zeros).
fn embedding_bag(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let w = op.tensor("weight")?;
    let idx = op.tensor("indices")?;
    let offsets = op.tensor("offsets")?;
    let ty = op.result(0)?;
    if idx.rank() != 1 || offsets.rank() != 1 || w.rank() != 2 {
        return Err(LowerError::Unsupported(
            "embedding_bag with 2-D indices (use 1-D indices and offsets)".into(),
        ));
    }
    let mode = op.int_or("mode", 0);
    let include_last = op.bool_or("include_last_offset", false);
    let padding_idx = op.int_opt("padding_idx").unwrap_or(-1);
    let n = idx.shape()[0];
    let nb = if include_last {
        offsets.shape()[0] - 1
    } else {
        offsets.shape()[0]
    };
    let d = w.shape()[1];
    let cd = super::elementwise::accumulator(ty.dtype);
    let rows = e.convert(&take(e, w, idx, 0)?, cd)?; // [N, D]
    let rows = match op.tensor_opt("per_sample_weights") {
        Some(p) => e.mul(
            &rows,
            &e.broadcast_in_dim(&e.convert(p, cd)?, &[n, d], &[0])?,
        )?,
        None => rows,
    };
    // bag[i] = #{b < nb : offsets[b] <= i} - 1
    let offs = e.slice(&e.convert(offsets, DType::I64)?, &[0], &[nb], &[1])?;
    let pos = e.iota(&TensorType::new(vec![nb, n], DType::I64), 1)?;
    let starts = e.broadcast_in_dim(&offs, &[nb, n], &[0])?;
    let started = e.convert(&e.compare(Cmp::Le, &starts, &pos)?, DType::I64)?;
    let bag = e.sub(
        &e.reduce(&started, 0.0, &[0], ReduceKind::Add)?,
        &e.constant(&TensorType::new(vec![n], DType::I64), 1.0)?,
    )?;
    let bag_ids = e.iota(&TensorType::new(vec![nb, n], DType::I64), 0)?;
    let mut member = e.compare(
        Cmp::Eq,
        &e.broadcast_in_dim(&bag, &[nb, n], &[1])?,
        &bag_ids,
    )?;
    if padding_idx >= 0 {
        let idx64 = e.convert(idx, DType::I64)?;
        let keep = e.compare(Cmp::Ne, &idx64, &e.constant(&idx64.ty, padding_idx as f64)?)?;
        member = e.binary(
            "stablehlo.and",
            &member,
            &e.broadcast_in_dim(&keep, &[nb, n], &[1])?,
        )?;
    }
    let count = e.reduce(&e.convert(&member, DType::I64)?, 0.0, &[1], ReduceKind::Add)?; // [B]
    let out = if mode == 2 {
        let m3 = e.broadcast_in_dim(&member, &[nb, n, d], &[0, 1])?;
        let r3 = e.broadcast_in_dim(&rows, &[nb, n, d], &[1, 2])?;
        let neg = e.constant(&r3.ty, f64::NEG_INFINITY)?;
        let mx = e.reduce(
            &e.select(&m3, &r3, &neg)?,
            f64::NEG_INFINITY,
            &[1],
            ReduceKind::Max,
        )?;
        let empty = e.broadcast_in_dim(
            &e.compare(Cmp::Eq, &count, &e.constant(&count.ty, 0.0)?)?,
            &[nb, d],
            &[0],
        )?;
        e.select(&empty, &e.constant(&mx.ty, 0.0)?, &mx)?
    } else {
        let onehot = e.convert(&member, cd)?;
        let dims = tpuc_dialects::stablehlo::DotDims {
            lhs_contract: vec![1],
            rhs_contract: vec![0],
            ..Default::default()
        };
        let sum = e.dot_general(&onehot, &rows, &dims)?; // [B, D]
        if mode == 1 {
            let c = e.max(
                &e.convert(&count, cd)?,
                &e.constant(&TensorType::new(vec![nb], cd), 1.0)?,
            )?;
            e.div(&sum, &e.broadcast_in_dim(&c, &[nb, d], &[0])?)?
        } else {
            sum
        }
    };
    let mut results = vec![e.convert(&out, ty.dtype)?];
    for (i, t) in op.results.iter().enumerate().skip(1) {
        let v = match i {
            1 if t.shape == vec![n] => e.convert(&bag, t.dtype)?,
            2 if t.shape == vec![nb] => e.convert(&count, t.dtype)?,
            _ => e.constant(t, 0.0)?,
        };
        if i == 3 && mode == 2 && op.result_used(3) {
            return Err(LowerError::Unsupported(
                "max_indices of embedding_bag in max mode".into(),
            ));
        }
        results.push(v);
    }
    Ok(results)
}
