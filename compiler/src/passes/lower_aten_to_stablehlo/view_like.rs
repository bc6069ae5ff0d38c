//! View-like and data-movement ops: reshapes, permutations, broadcasts, slices,
//! selects, concatenation, splits, padding, flips and repeats.
//!
//! Ops whose only effect is a new shape (view, reshape, flatten, squeeze...) lower to
//! one `stablehlo.reshape` to the result type the graph records.

use tpuc_artifact::DType;
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::elementwise::{splat, to_type};
use super::op::norm_dim;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.view"
        | "aten.reshape"
        | "aten._unsafe_view"
        | "aten.view_copy"
        | "aten.flatten"
        | "aten.unflatten"
        | "aten.unsqueeze"
        | "aten.unsqueeze_copy"
        | "aten.squeeze"
        | "aten.squeeze_copy"
        | "aten._reshape_alias"
        | "aten.view_as"
        | "aten.reshape_as" => reshape(op, e),
        "aten.permute" | "aten.permute_copy" => permute(op, e),
        "aten.transpose" | "aten.transpose_copy" | "aten.swapaxes" | "aten.swapdims" => {
            transpose(op, e)
        }
        "aten.t" | "aten.t_copy" | "aten.numpy_T" => t(op, e),
        "aten.movedim" => movedim(op, e),
        "aten.expand" | "aten.expand_copy" | "aten.expand_as" | "aten.broadcast_to" => {
            expand(op, e)
        }
        "aten.slice" | "aten.slice_copy" => slice(op, e),
        "aten.narrow" | "aten.narrow_copy" => narrow(op, e),
        "aten.select" | "aten.select_copy" => select(op, e),
        "aten.cat" | "aten.concat" | "aten.concatenate" => cat(op, e),
        "aten.stack" => stack(op, e),
        "aten.meshgrid" => meshgrid(op, e),
        "aten.pixel_shuffle" => pixel_shuffle(op, e),
        "aten.split"
        | "aten.split_with_sizes"
        | "aten.chunk"
        | "aten.tensor_split"
        | "aten.split_copy"
        | "aten.split_with_sizes_copy" => split(op, e),
        "aten.unbind" | "aten.unbind_copy" => unbind(op, e),
        "aten.constant_pad_nd" | "aten.pad" => pad(op, e),
        "aten.reflection_pad1d" | "aten.reflection_pad2d" | "aten.reflection_pad3d" => {
            index_pad(op, e, PadMode::Reflect)
        }
        "aten.replication_pad1d" | "aten.replication_pad2d" | "aten.replication_pad3d" => {
            index_pad(op, e, PadMode::Replicate)
        }
        "aten._pad_circular" => index_pad(op, e, PadMode::Circular),
        "aten.flip" => flip(op, e),
        "aten.diagonal" | "aten.diagonal_copy" => diagonal(op, e),
        "aten.as_strided" | "aten.as_strided_copy" => as_strided(op, e),
        "aten.repeat" => repeat(op, e),
        "aten.repeat_interleave" => repeat_interleave(op, e),
        "aten.roll" => roll(op, e),
        "aten.diff" => diff(op, e),
        "aten.unfold" | "aten.unfold_copy" => unfold(op, e),
        _ => return None,
    };
    Some(r)
}

fn reshape(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    Ok(vec![e.reshape(x, &ty.shape)?])
}

fn permute(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dims = op.ints("dims")?;
    let perm = dims
        .iter()
        .map(|&d| norm_dim(d, x.rank()))
        .collect::<LResult<Vec<_>>>()?;
    Ok(vec![e.transpose(x, &perm)?])
}

fn swap(e: &Emitter, x: &TValue, a: i64, b: i64) -> LResult<TValue> {
    let (a, b) = (norm_dim(a, x.rank())?, norm_dim(b, x.rank())?);
    if x.rank() == 0 {
        return Ok(x.clone());
    }
    let mut perm: Vec<i64> = (0..x.rank() as i64).collect();
    perm.swap(a as usize, b as usize);
    Ok(e.transpose(x, &perm)?)
}

fn transpose(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let a = op.int_opt("dim0").or(op.int_opt("axis0")).unwrap_or(0);
    let b = op.int_opt("dim1").or(op.int_opt("axis1")).unwrap_or(1);
    Ok(vec![swap(e, x, a, b)?])
}

fn t(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    if x.rank() < 2 {
        return Ok(vec![x.clone()]);
    }
    let r = x.rank() as i64;
    Ok(vec![swap(e, x, r - 2, r - 1)?])
}

fn movedim(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let r = x.rank();
    let src = op
        .ints("source")?
        .iter()
        .map(|&d| norm_dim(d, r))
        .collect::<LResult<Vec<_>>>()?;
    let dst = op
        .ints("destination")?
        .iter()
        .map(|&d| norm_dim(d, r))
        .collect::<LResult<Vec<_>>>()?;
    let mut perm = vec![-1i64; r];
    for (s, d) in src.iter().zip(&dst) {
        perm[*d as usize] = *s;
    }
    let mut rest = (0..r as i64).filter(|i| !src.contains(i));
    for p in perm.iter_mut() {
        if *p < 0 {
            *p = rest.next().unwrap_or(0);
        }
    }
    Ok(vec![e.transpose(x, &perm)?])
}

fn expand(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    Ok(vec![e.broadcast_to(x, &ty.shape)?])
}

/// Clamps a Python-style slice bound into `[0, size]`.
fn clamp_bound(v: i64, size: i64) -> i64 {
    let v = if v < 0 { v + size } else { v };
    v.clamp(0, size)
}

fn slice(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dim = norm_dim(op.int_or("dim", 0), x.rank())? as usize;
    let size = x.shape()[dim];
    let start = clamp_bound(op.int_opt("start").unwrap_or(0), size);
    let end = clamp_bound(
        op.int_opt("end").unwrap_or(i64::MAX).min(i64::MAX / 2),
        size,
    )
    .max(start);
    let step = op.int_or("step", 1);
    if step < 1 {
        return Err(LowerError::Invalid("slice step must be positive".into()));
    }
    Ok(vec![e.slice_in_dim(x, dim, start, end, step)?])
}

fn narrow(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let size = x.shape()[dim];
    let start = op.int("start")?;
    let start = if start < 0 { start + size } else { start };
    let length = op.int("length")?;
    Ok(vec![e.slice_in_dim(x, dim, start, start + length, 1)?])
}

fn select(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let size = x.shape()[dim];
    let index = op.int("index")?;
    let index = if index < 0 { index + size } else { index };
    if index < 0 || index >= size {
        return Err(LowerError::Invalid(format!(
            "index {index} out of range for dimension of size {size}"
        )));
    }
    let s = e.slice_in_dim(x, dim, index, index + 1, 1)?;
    Ok(vec![e.reshape(&s, &op.result(0)?.shape)?])
}

fn cat(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let dim = norm_dim(op.int_or("dim", 0), ty.rank())?;
    // torch.cat skips 1-D empty tensors (legacy behaviour) and promotes dtypes.
    let parts = op
        .tensor_list("tensors")
        .into_iter()
        .filter(|t| !(t.rank() == 1 && t.shape()[0] == 0 && ty.rank() != 1))
        .map(|t| Ok(e.convert(t, ty.dtype)?))
        .collect::<LResult<Vec<_>>>()?;
    let refs: Vec<&TValue> = parts
        .iter()
        .filter(|t| t.shape()[dim as usize] > 0)
        .collect();
    if refs.is_empty() {
        return Ok(vec![splat(e, ty, 0.0)?]);
    }
    Ok(vec![e.concatenate(&refs, dim)?])
}

/// `meshgrid(tensors, indexing)`: result `k` is input `k` (0-d or 1-D) broadcast along
/// dimension `k` of the grid; with `indexing="xy"` the first two dimensions swap places
/// (the first input varies along columns), as NumPy's.
fn meshgrid(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let inputs = op.tensor_list("tensors");
    let xy = match op.string_opt("indexing").unwrap_or("ij") {
        "ij" => false,
        "xy" => true,
        other => {
            return Err(LowerError::Invalid(format!(
                "meshgrid indexing `{other}` (expected `ij` or `xy`)"
            )))
        }
    };
    let mut out = Vec::with_capacity(inputs.len());
    for (k, x) in inputs.iter().enumerate() {
        if x.rank() > 1 {
            return Err(LowerError::Invalid(format!(
                "meshgrid takes 0-d or 1-D tensors; input {k} has shape {:?}",
                x.shape()
            )));
        }
        let ty = op.result(k)?;
        let n = x.shape().iter().product::<i64>();
        let flat = e.reshape(x, &[n])?;
        let dim = match (xy && inputs.len() >= 2, k) {
            (true, 0) => 1,
            (true, 1) => 0,
            _ => k as i64,
        };
        out.push(e.broadcast_in_dim(&flat, &ty.shape, &[dim])?);
    }
    Ok(out)
}

/// `pixel_shuffle(self, upscale_factor)`: `[*, C*r*r, H, W]` to `[*, C, H*r, W*r]`, each
/// group of `r*r` channels spread over an `r x r` block (reshape, transpose, reshape).
fn pixel_shuffle(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let r = op.int("upscale_factor")?;
    let shape = x.shape().to_vec();
    let rank = shape.len();
    if rank < 3 || r <= 0 || shape[rank - 3] % (r * r) != 0 {
        return Err(LowerError::Invalid(format!(
            "pixel_shuffle by {r} needs a rank >= 3 input whose channels divide by {}; got {shape:?}",
            r * r
        )));
    }
    let b = rank - 3;
    let (c, h, w) = (shape[b] / (r * r), shape[b + 1], shape[b + 2]);
    let mut split = shape[..b].to_vec();
    split.extend([c, r, r, h, w]);
    let x = e.reshape(x, &split)?;
    let mut perm: Vec<i64> = (0..b as i64).collect();
    let b = b as i64;
    perm.extend([b, b + 3, b + 1, b + 4, b + 2]);
    let x = e.transpose(&x, &perm)?;
    Ok(vec![e.reshape(&x, &ty.shape)?])
}

fn stack(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let dim = norm_dim(op.int_or("dim", 0), ty.rank())? as usize;
    let parts = op
        .tensor_list("tensors")
        .into_iter()
        .map(|t| {
            let mut shape = t.shape().to_vec();
            shape.insert(dim, 1);
            let c = e.convert(t, ty.dtype)?;
            Ok(e.reshape(&c, &shape)?)
        })
        .collect::<LResult<Vec<_>>>()?;
    let refs: Vec<&TValue> = parts.iter().collect();
    Ok(vec![e.concatenate(&refs, dim as i64)?])
}

/// Every split flavour: the result types give each piece's extent along `dim`.
fn split(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dim = norm_dim(op.int_or("dim", 0), x.rank())? as usize;
    let mut offset = 0;
    let mut out = Vec::new();
    for ty in &op.results {
        if ty.rank() != x.rank() {
            return Err(LowerError::Invalid(format!(
                "split piece {ty} does not match {}",
                x.ty
            )));
        }
        let len = ty.shape[dim];
        out.push(e.slice_in_dim(x, dim, offset, offset + len, 1)?);
        offset += len;
    }
    if offset != x.shape()[dim] {
        return Err(LowerError::Invalid(
            "split pieces do not cover the dimension".into(),
        ));
    }
    Ok(out)
}

fn unbind(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dim = norm_dim(op.int_or("dim", 0), x.rank())? as usize;
    let mut out = Vec::new();
    for (i, ty) in op.results.iter().enumerate() {
        let s = e.slice_in_dim(x, dim, i as i64, i as i64 + 1, 1)?;
        out.push(e.reshape(&s, &ty.shape)?);
    }
    Ok(out)
}

fn pad(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    match op.string_opt("mode") {
        None | Some("constant") => {}
        Some("reflect") => return index_pad(op, e, PadMode::Reflect),
        Some("replicate") => return index_pad(op, e, PadMode::Replicate),
        Some("circular") => return index_pad(op, e, PadMode::Circular),
        Some(mode) => {
            return Err(LowerError::Invalid(format!(
                "unknown padding mode `{mode}`"
            )))
        }
    }
    let pads = op.ints("pad")?;
    if pads.len() % 2 != 0 || pads.len() / 2 > x.rank() {
        return Err(LowerError::Invalid(format!("bad pad list {pads:?}")));
    }
    let r = x.rank();
    let mut low = vec![0; r];
    let mut high = vec![0; r];
    // Pairs apply from the last dimension backwards.
    for (i, pair) in pads.chunks(2).enumerate() {
        low[r - 1 - i] = pair[0];
        high[r - 1 - i] = pair[1];
    }
    let value = e.scalar(x.dtype(), op.number_or("value", 0.0))?;
    // Negative padding crops, which stablehlo.pad supports directly.
    Ok(vec![e.pad(x, &value, &low, &high, &vec![0; r])?])
}

fn flip(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dims = op
        .ints("dims")?
        .iter()
        .map(|&d| norm_dim(d, x.rank()))
        .collect::<LResult<Vec<_>>>()?;
    Ok(vec![e.reverse(x, &dims)?])
}

fn repeat(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let reps = op.ints("repeats")?;
    let ty = op.result(0)?;
    if reps.len() < x.rank() {
        return Err(LowerError::Invalid(format!(
            "repeat needs at least {} repeat counts, got {reps:?}",
            x.rank()
        )));
    }
    // Leading new dims, then each dim d becomes (rep, size) and is flattened.
    let lead = reps.len() - x.rank();
    let mut src_shape = vec![1; lead];
    src_shape.extend_from_slice(x.shape());
    let x = e.reshape(x, &src_shape)?;
    let mut big = Vec::new();
    let mut dims = Vec::new();
    for (i, (&r, &s)) in reps.iter().zip(&src_shape).enumerate() {
        big.push(r);
        big.push(s);
        dims.push((2 * i + 1) as i64);
    }
    let b = e.broadcast_in_dim(&x, &big, &dims)?;
    Ok(vec![e.reshape(&b, &ty.shape)?])
}

/// `diff(self, n, dim, prepend, append)`: repeated forward differences.
fn diff(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.tensor("self")?;
    let dim = norm_dim(op.int_or("dim", -1), x.rank())?;
    let mut parts = Vec::new();
    if let Some(p) = op.tensor_opt("prepend") {
        parts.push(p.clone());
    }
    parts.push(x.clone());
    if let Some(a) = op.tensor_opt("append") {
        parts.push(a.clone());
    }
    let refs: Vec<&TValue> = parts.iter().collect();
    let mut cur = e.concatenate(&refs, dim)?;
    for _ in 0..op.int_or("n", 1) {
        let d = dim as usize;
        let len = cur.shape()[d];
        if len == 0 {
            break;
        }
        let mut s0 = vec![0; cur.rank()];
        let mut l0 = cur.shape().to_vec();
        let mut s1 = s0.clone();
        let l1 = l0.clone();
        l0[d] = len - 1;
        s1[d] = 1;
        let ones = vec![1; cur.rank()];
        let a = e.slice(&cur, &s0, &l0, &ones)?;
        let b = e.slice(&cur, &s1, &l1, &ones)?;
        s0.clear();
        cur = if cur.dtype() == tpuc_artifact::DType::Bool {
            e.binary("stablehlo.xor", &b, &a)?
        } else {
            e.sub(&b, &a)?
        };
    }
    Ok(vec![to_type(e, &cur, ty)?])
}

#[derive(Clone, Copy)]
enum PadMode {
    Reflect,
    Replicate,
    Circular,
}

/// Reflect / replicate / circular padding: each padded dim is rebuilt by gathering
/// source positions (a constant index vector per dim), which also covers negative
/// (cropping) pads. `pad` lists (low, high) pairs from the last dim backwards.
fn index_pad(op: &AtenOp, e: &Emitter, mode: PadMode) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let pads = op
        .ints_opt("padding")
        .or_else(|| op.ints_opt("pad"))
        .ok_or_else(|| LowerError::Invalid("missing padding".into()))?;
    if pads.len() % 2 != 0 || pads.len() / 2 > x.rank() {
        return Err(LowerError::Invalid(format!("bad pad list {pads:?}")));
    }
    let r = x.rank();
    let mut cur = x.clone();
    for (i, pair) in pads.chunks(2).enumerate() {
        let dim = r - 1 - i;
        let n = x.shape()[dim];
        let (lo, hi) = (pair[0], pair[1]);
        if lo == 0 && hi == 0 {
            continue;
        }
        if n == 0 {
            return Err(LowerError::Invalid(format!(
                "cannot pad an empty dim {dim} with {lo}/{hi}"
            )));
        }
        if matches!(mode, PadMode::Reflect) && (lo >= n || hi >= n) {
            return Err(LowerError::Invalid(format!(
                "reflection padding {lo}/{hi} must be smaller than the dim size {n}"
            )));
        }
        let out = n + lo + hi;
        let positions: Vec<String> = (0..out)
            .map(|j| {
                let s = j - lo;
                let src = match mode {
                    PadMode::Reflect => {
                        if s < 0 {
                            -s
                        } else if s >= n {
                            2 * (n - 1) - s
                        } else {
                            s
                        }
                    }
                    PadMode::Replicate => s.clamp(0, n - 1),
                    PadMode::Circular => s.rem_euclid(n),
                };
                src.to_string()
            })
            .collect();
        let idx = e.constant_elements(
            &tpuc_dialects::TensorType::new(vec![out], tpuc_artifact::DType::I64),
            &positions,
        )?;
        cur = super::gather::take(e, &cur, &idx, dim)?;
    }
    Ok(vec![e.reshape(&cur, &op.result(0)?.shape)?])
}

/// `diagonal(self, offset, dim1, dim2)`: the two dims are removed and the diagonal
/// appended last, as a gather of (i + max(-offset, 0), i + max(offset, 0)).
fn diagonal(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    let r = x.rank();
    let d1 = norm_dim(op.int_or("dim1", 0), r)?;
    let d2 = norm_dim(op.int_or("dim2", 1), r)?;
    if d1 == d2 {
        return Err(LowerError::Invalid("diagonal dims must differ".into()));
    }
    let offset = op.int_or("offset", 0);
    let mut perm: Vec<i64> = (0..r as i64).filter(|&d| d != d1 && d != d2).collect();
    perm.extend([d1, d2]);
    let xt = e.transpose(x, &perm)?;
    let (n1, n2) = (x.shape()[d1 as usize], x.shape()[d2 as usize]);
    let len = if offset >= 0 {
        n1.min(n2 - offset)
    } else {
        (n1 + offset).min(n2)
    }
    .max(0);
    if len == 0 {
        return Ok(vec![e.constant(ty, 0.0)?]);
    }
    let (r0, c0) = ((-offset).max(0), offset.max(0));
    let lits: Vec<String> = (0..len)
        .flat_map(|i| [(i + r0).to_string(), (i + c0).to_string()])
        .collect();
    let idx = e.constant_elements(
        &tpuc_dialects::TensorType::new(vec![len, 2], tpuc_artifact::DType::I64),
        &lits,
    )?;
    let mut slice_sizes = xt.shape().to_vec();
    slice_sizes[r - 2] = 1;
    slice_sizes[r - 1] = 1;
    let g = tpuc_dialects::stablehlo::GatherDims {
        offset_dims: (0..r as i64 - 2).collect(),
        collapsed_slice_dims: vec![r as i64 - 2, r as i64 - 1],
        start_index_map: vec![r as i64 - 2, r as i64 - 1],
        index_vector_dim: 1,
        slice_sizes,
    };
    let out = e.gather(&xt, &idx, &g)?;
    Ok(vec![e.reshape(&out, &ty.shape)?])
}

/// `as_strided(self, size, stride, storage_offset)` over `self`'s row-major elements:
/// `out[i] = flat[offset + sum_k i_k * stride_k]`.
fn as_strided(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    let size = op.ints("size")?;
    let stride = op.ints("stride")?;
    let offset = op.int_or("storage_offset", 0);
    if size.len() != stride.len() || size != ty.shape {
        return Err(LowerError::Invalid(
            "as_strided size/stride mismatch".into(),
        ));
    }
    let total = x.ty.num_elements();
    let last = offset
        + size
            .iter()
            .zip(&stride)
            .map(|(s, st)| (s - 1).max(0) * st)
            .sum::<i64>();
    if size.contains(&0) {
        return Ok(vec![e.constant(ty, 0.0)?]);
    }
    if offset < 0 || last >= total || stride.iter().any(|&s| s < 0) {
        return Err(LowerError::Invalid(format!(
            "as_strided reads element {last} of a tensor with {total} elements"
        )));
    }
    let it = tpuc_dialects::TensorType::new(size.clone(), tpuc_artifact::DType::I64);
    let mut flat_idx = e.constant(&it, offset as f64)?;
    for (k, &st) in stride.iter().enumerate() {
        let i = e.iota(&it, k as i64)?;
        flat_idx = e.add(&flat_idx, &e.mul(&i, &e.constant(&it, st as f64)?)?)?;
    }
    let flat = e.reshape(x, &[total])?;
    let out = super::gather::take(e, &flat, &flat_idx, 0)?;
    Ok(vec![e.reshape(&out, &ty.shape)?])
}

/// `repeat_interleave(self, repeats: int, dim)`: each element repeated `repeats` times
/// along `dim` (the flattened tensor when `dim` is None). Tensor-valued repeats give a
/// data-dependent shape and are not supported.
fn repeat_interleave(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    if op.tensor_opt("repeats").is_some() {
        return Err(LowerError::Unsupported(
            "repeat_interleave with a tensor of repeats has a data-dependent shape; use an integer"
                .into(),
        ));
    }
    let x = op.tensor("self")?;
    let reps = op.int("repeats")?;
    let (x, dim) = match op.int_opt("dim") {
        Some(d) => (x.clone(), norm_dim(d, x.rank())? as usize),
        None => (e.reshape(x, &[x.ty.num_elements()])?, 0),
    };
    // [.., n, ..] -> [.., n, reps, ..] -> [.., n * reps, ..]
    let mut big = x.shape().to_vec();
    big.insert(dim + 1, reps);
    let dims: Vec<i64> = (0..x.rank() as i64)
        .map(|d| if d as usize > dim { d + 1 } else { d })
        .collect();
    let b = e.broadcast_in_dim(&x, &big, &dims)?;
    Ok(vec![e.reshape(&b, &ty.shape)?])
}

/// `roll(self, shifts, dims)`: elements shifted cyclically along each dim (along the
/// flattened tensor when `dims` is empty), as two slices concatenated.
fn roll(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    let shifts = op.ints("shifts")?;
    let dims = op.ints_opt("dims").unwrap_or_default();
    let (mut cur, dims) = if dims.is_empty() {
        (e.reshape(x, &[x.ty.num_elements()])?, vec![0])
    } else {
        (x.clone(), dims)
    };
    if shifts.len() != dims.len() {
        return Err(LowerError::Invalid("roll needs one shift per dim".into()));
    }
    for (&shift, &d) in shifts.iter().zip(&dims) {
        let d = norm_dim(d, cur.rank())? as usize;
        let n = cur.shape()[d];
        if n == 0 {
            continue;
        }
        let s = shift.rem_euclid(n);
        if s == 0 {
            continue;
        }
        let ones = vec![1; cur.rank()];
        let mut start = vec![0; cur.rank()];
        let mut limit = cur.shape().to_vec();
        start[d] = n - s;
        let tail = e.slice(&cur, &start, &limit, &ones)?;
        start[d] = 0;
        limit[d] = n - s;
        let head = e.slice(&cur, &start, &limit, &ones)?;
        cur = e.concatenate(&[&tail, &head], d as i64)?;
    }
    Ok(vec![e.reshape(&cur, &ty.shape)?])
}

/// `unfold(dimension, size, step)`: the windows `x[.., i*step .. i*step + size, ..]` of
/// `dimension` (as many as fit), each window a new last dimension: a gather of the
/// window rows (`i*step + j`), the window dimension then moved last.
fn unfold(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.tensor("self")?;
    let ty = op.result(0)?;
    let r = x.rank();
    if r == 0 {
        // A 0-d tensor unfolds into its one element.
        return Ok(vec![e.reshape(x, &ty.shape)?]);
    }
    let dim = norm_dim(op.int("dimension")?, r)? as usize;
    let size = op.int("size")?;
    let step = op.int("step")?;
    let n = ty.shape[dim];
    if step <= 0 || ty.shape.len() != r + 1 || ty.shape[r] != size {
        return Err(LowerError::Invalid(
            "unfold: the result must be the windows of `dimension` in a new last dim".into(),
        ));
    }
    let it = TensorType::new(vec![n, size], DType::I64);
    let starts = e.mul(&e.iota(&it, 0)?, &splat(e, &it, step as f64)?)?;
    let idx = e.add(&starts, &e.iota(&it, 1)?)?;
    let windows = super::gather::take(e, x, &idx, dim)?;
    let mut perm: Vec<i64> = (0..=r as i64).filter(|p| *p != dim as i64 + 1).collect();
    perm.push(dim as i64 + 1);
    Ok(vec![to_type(e, &e.transpose(&windows, &perm)?, ty)?])
}
