//! Pooling: max and average pooling over 1-3 spatial dims (`reduce_window`) and
//! adaptive average pooling (exact for every input/output size, as two or three
//! contractions with averaging matrices).

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{Cmp, DotDims, ReduceKind, WindowParams};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::elementwise::splat;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.max_pool1d"
        | "aten.max_pool2d"
        | "aten.max_pool3d"
        | "aten.max_pool2d_with_indices"
        | "aten.max_pool3d_with_indices"
        | "aten.max_pool1d_with_indices" => max_pool(op, e),
        "aten.max_pool2d_with_indices_backward" | "aten.max_pool3d_with_indices_backward" => {
            max_pool_backward(op, e)
        }
        "aten.avg_pool1d" | "aten.avg_pool2d" | "aten.avg_pool3d" => avg_pool(op, e),
        "aten.adaptive_avg_pool1d"
        | "aten.adaptive_avg_pool2d"
        | "aten._adaptive_avg_pool2d"
        | "aten.adaptive_avg_pool3d"
        | "aten._adaptive_avg_pool3d" => adaptive_avg_pool(op, e),
        _ => return None,
    };
    Some(r)
}

/// `max_pool{2,3}d_with_indices_backward(grad_output, self, ..., indices)`: each
/// output gradient added at its window's maximum, which `indices` names as a flat
/// position within the input's spatial plane (what the forward returned): a scatter-add
/// per plane.
fn max_pool_backward(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let gy = op.tensor("grad_output")?;
    let x = op.tensor("self")?;
    let idx = op.tensor("indices")?;
    let n = spatial_dims(op);
    if x.rank() < n + 1 || gy.rank() != x.rank() || idx.shape() != gy.shape() {
        return Err(LowerError::Invalid(format!(
            "grad_output {}, input {} and indices {} do not fit a {n}-d pooling",
            gy.ty, x.ty, idx.ty
        )));
    }
    let lead = x.rank() - n;
    let planes: i64 = x.shape()[..lead].iter().product();
    let plane: i64 = x.shape()[lead..].iter().product();
    let windows: i64 = gy.shape()[lead..].iter().product();
    // Accumulated in f32 for half types, as PyTorch's CPU kernel does.
    let cd = super::elementwise::accumulator(ty.dtype);
    let g = e.reshape(&e.convert(gy, cd)?, &[planes, windows])?;
    let pos = e.reshape(&e.convert(idx, DType::I64)?, &[planes, windows, 1])?;
    let rows = e.iota(&TensorType::new(vec![planes, windows, 1], DType::I64), 0)?;
    let indices = e.concatenate(&[&rows, &pos], 2)?;
    let zeros = e.constant(&TensorType::new(vec![planes, plane], cd), 0.0)?;
    let dims = tpuc_dialects::stablehlo::ScatterDims {
        update_window_dims: vec![],
        inserted_window_dims: vec![0, 1],
        scatter_dims_to_operand_dims: vec![0, 1],
        index_vector_dim: 2,
    };
    let out = e.scatter(&zeros, &indices, &g, &dims, Some(ReduceKind::Add))?;
    Ok(vec![e.reshape(&e.convert(&out, ty.dtype)?, &ty.shape)?])
}

fn spatial_dims(op: &AtenOp) -> usize {
    let b = op.base();
    if b.contains("1d") {
        1
    } else if b.contains("3d") {
        3
    } else {
        2
    }
}

fn per_dim(v: Option<Vec<i64>>, n: usize, default: &[i64]) -> Vec<i64> {
    match v {
        Some(v) if v.len() == n => v,
        Some(v) if v.len() == 1 => vec![v[0]; n],
        _ => default.to_vec(),
    }
}

/// Output size of one pooled dim, PyTorch's formula (ceil_mode windows must start
/// inside the input or left padding).
fn pooled_size(input: i64, k: i64, s: i64, p: i64, d: i64, ceil: bool) -> i64 {
    let eff = d * (k - 1) + 1;
    let num = input + 2 * p - eff;
    let mut out = if ceil {
        (num + s - 1).div_euclid(s) + 1
    } else {
        num.div_euclid(s) + 1
    };
    if ceil && (out - 1) * s >= input + p {
        out -= 1;
    }
    out
}

struct Window {
    params: WindowParams,
    lead: usize,
}

/// Window parameters over the trailing `n` dims, padding extended on the high side so
/// that ceil_mode's partial windows exist.
fn window(op: &AtenOp, x: &TValue, n: usize) -> LResult<Window> {
    let r = x.rank();
    if r < n + 1 {
        return Err(LowerError::Invalid(format!(
            "pooling input {} has too few dims",
            x.ty
        )));
    }
    let lead = r - n;
    let k = per_dim(op.ints_opt("kernel_size"), n, &[]);
    if k.len() != n {
        return Err(LowerError::Invalid("kernel_size is required".into()));
    }
    let s = match op.ints_opt("stride") {
        Some(v) if !v.is_empty() => per_dim(Some(v), n, &k),
        _ => k.clone(),
    };
    let p = per_dim(op.ints_opt("padding"), n, &vec![0; n]);
    let d = per_dim(op.ints_opt("dilation"), n, &vec![1; n]);
    let ceil = op.bool_or("ceil_mode", false);
    let mut params = WindowParams {
        dims: vec![1; r],
        strides: vec![1; r],
        padding: vec![(0, 0); r],
        window_dilations: vec![1; r],
    };
    for i in 0..n {
        let size = x.shape()[lead + i];
        // PyTorch's checks: positive kernel, stride and dilation; padding at most half
        // the (dilated) window; a non-empty output. Bounded so nothing below overflows.
        const LIMIT: i64 = 1 << 31;
        let ok = |v: i64, lo: i64| (lo..LIMIT).contains(&v);
        if !(ok(k[i], 1) && ok(s[i], 1) && ok(d[i], 1) && ok(p[i], 0)) {
            return Err(LowerError::Invalid(format!(
                "pooling dim {i}: kernel_size {}, stride {}, dilation {} must be positive and \
                 padding {} non-negative",
                k[i], s[i], d[i], p[i]
            )));
        }
        let eff = d[i] * (k[i] - 1) + 1;
        if 2 * p[i] > eff {
            return Err(LowerError::Invalid(format!(
                "pooling dim {i}: padding {} is more than half the window ({eff})",
                p[i]
            )));
        }
        let out = pooled_size(size, k[i], s[i], p[i], d[i], ceil);
        if out < 1 {
            return Err(LowerError::Invalid(format!(
                "pooling dim {i}: input size {size} is smaller than the window ({eff})"
            )));
        }
        let needed = (out - 1) * s[i] + eff;
        let high = (needed - size - p[i]).max(p[i]);
        params.dims[lead + i] = k[i];
        params.strides[lead + i] = s[i];
        params.padding[lead + i] = (p[i], high);
        params.window_dilations[lead + i] = d[i];
    }
    Ok(Window { params, lead })
}

fn max_pool(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let n = spatial_dims(op);
    let w = window(op, x, n)?;
    let init = tpuc_dialects::stablehlo::integer_bounds(x.dtype()).0;
    let ty = op.result(0)?;
    if op.results.len() < 2 || !op.result_used(1) {
        let out = if x.dtype().is_float() {
            float_max_pool(e, x, &w.params)?
        } else {
            e.reduce_window(x, init, &w.params, ReduceKind::Max)?
        };
        return Ok(vec![e.reshape(&out, &ty.shape)?]);
    }
    // *_with_indices: the flat index of each maximum within its spatial plane
    // (h * W + w for 2-D), first occurrence on ties, NaN winning, as in PyTorch.
    let it = x.ty.with_dtype(DType::I64);
    let mut flat = e.constant(&it, 0.0)?;
    let mut stride = 1i64;
    for d in (w.lead..x.rank()).rev() {
        let i = e.iota(&it, d as i64)?;
        let scaled = e.mul(&i, &e.constant(&it, stride as f64)?)?;
        flat = e.add(&flat, &scaled)?;
        stride *= x.shape()[d];
    }
    let (vals, idx) = e.reduce_window_with_index(x, &flat, &w.params, true)?;
    let it_out = op.result(1)?;
    Ok(vec![
        e.reshape(&vals, &ty.shape)?,
        e.reshape(&idx, &it_out.shape)?,
    ])
}

/// Max pooling of floats with PyTorch's NaN propagation (a window holding a NaN gives
/// NaN). A plain float `maximum` in a reduction body is left to the backend's NaN
/// handling (XLA's CPU backend drops NaNs there), and a body that checks both operands
/// for NaN runs several times slower on XLA's CPU backend, so:
///
/// - disjoint windows (stride at least the kernel) read each element once: a plain max
///   and an any-NaN flag in one variadic reduce_window, windows holding a NaN made NaN
///   afterwards;
/// - overlapping windows (most CNNs' 3x3 stride-2 pools) take [`keyed_max_pool`], whose
///   encoding is paid once per element instead of in every window that reads it.
///
/// Measured on XLA's CPU backend, the keys are 2-9% faster on whole CNNs with
/// overlapping 3x3 pools (resnet18, squeezenet, densenet, shufflenet, googlenet) and
/// 30% slower on a 2x2 stride-2 pool, where the encoding is a pass of its own.
fn float_max_pool(e: &Emitter, x: &TValue, p: &WindowParams) -> LResult<TValue> {
    let overlapping = p.strides.iter().zip(&p.dims).any(|(s, k)| s < k);
    if overlapping {
        return keyed_max_pool(e, x, p);
    }
    let nan = e.compare(Cmp::Ne, x, x)?;
    let (m, any_nan) = e.reduce_window_pair(
        (x, f64::NEG_INFINITY, ReduceKind::MaxUnchecked),
        (&nan, 0.0, ReduceKind::Or),
        p,
    )?;
    Ok(e.select(&any_nan, &splat(e, &m.ty, f64::NAN)?, &m)?)
}

/// Max pooling of floats as an integer max: NaNs are made the positive quiet NaN, the
/// bits are read as a same-width integer and mapped by [`ordered_bits`] so that integer
/// order is float order with NaN above +inf; the integer max of each window is mapped
/// back. The one difference from PyTorch: a window holding both zeros gives +0, where
/// PyTorch keeps whichever comes first (the two compare equal).
fn keyed_max_pool(e: &Emitter, x: &TValue, p: &WindowParams) -> LResult<TValue> {
    // The same-width integer, and -inf's bits as that integer.
    let (int, neg_inf) = match x.dtype() {
        DType::F64 => (DType::I64, f64::NEG_INFINITY.to_bits() as i64),
        DType::F32 => (DType::I32, f32::NEG_INFINITY.to_bits() as i32 as i64),
        DType::F16 => (DType::I16, 0xFC00u16 as i16 as i64),
        DType::Bf16 => (DType::I16, 0xFF80u16 as i16 as i64),
        other => {
            return Err(LowerError::Unsupported(format!(
                "max pooling of {other} values"
            )))
        }
    };
    let nan = e.compare(Cmp::Ne, x, x)?;
    let canonical = e.select(&nan, &splat(e, &x.ty, f64::NAN)?, x)?;
    let keys = ordered_bits(e, &e.bitcast_convert(&canonical, int)?)?;
    // -inf's key (negative: every bit but the sign flipped), the identity of the max,
    // as a literal (a 64-bit key is not an f64).
    let key = neg_inf ^ (i64::MAX >> (64 - 8 * int.size_in_bytes()));
    let init = e.constant_elements(&TensorType::scalar(int), &[key.to_string()])?;
    let max = e.reduce_window_from(&keys, &init, p, ReduceKind::Max)?;
    Ok(e.bitcast_convert(&ordered_bits(e, &max)?, x.dtype())?)
}

/// The map between a float's bits (as a signed integer of its width) and an integer
/// that orders as the float does: non-negative floats keep their bits, negative ones
/// have every bit but the sign flipped (`b ^ 0x7f..f`), so a larger magnitude gives a
/// smaller integer. The sign is kept, so the map is its own inverse.
fn ordered_bits(e: &Emitter, bits: &TValue) -> LResult<TValue> {
    let width = bits.dtype().size_in_bytes() as f64 * 8.0;
    let (_, max) = tpuc_dialects::stablehlo::integer_bounds(bits.dtype());
    let sign = e.binary(
        "stablehlo.shift_right_arithmetic",
        bits,
        &e.constant(&bits.ty, width - 1.0)?,
    )?;
    let flip = e.binary("stablehlo.and", &sign, &e.constant(&bits.ty, max)?)?;
    Ok(e.binary("stablehlo.xor", bits, &flip)?)
}

fn avg_pool(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    let n = spatial_dims(op);
    let w = window(op, x, n)?;
    let count_include_pad = op.bool_or("count_include_pad", true);
    let compute = if x.dtype() == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let xf = e.convert(x, compute)?;
    let sum = e.reduce_window(&xf, 0.0, &w.params, ReduceKind::Add)?;
    let out = if let Some(div) = op.int_opt("divisor_override") {
        e.div(&sum, &splat(e, &sum.ty, div as f64)?)?
    } else {
        // Count the elements in each window: ones over the input, padded with ones
        // inside the explicit padding when count_include_pad, zeros beyond it.
        let spatial: Vec<i64> = x.shape()[w.lead..].to_vec();
        let ones = splat(e, &TensorType::new(spatial.clone(), compute), 1.0)?;
        let mut p = w.params.clone();
        p.dims.drain(..w.lead);
        p.strides.drain(..w.lead);
        p.window_dilations.drain(..w.lead);
        p.padding.drain(..w.lead);
        let counted = if count_include_pad {
            let pads: Vec<i64> = per_dim(op.ints_opt("padding"), n, &vec![0; n]);
            let one = e.scalar(compute, 1.0)?;
            let padded = e.pad(&ones, &one, &pads, &pads, &vec![0; n])?;
            for (i, &pi) in pads.iter().enumerate() {
                p.padding[i] = (0, p.padding[i].1 - pi);
            }
            padded
        } else {
            ones
        };
        let counts = e.reduce_window(&counted, 0.0, &p, ReduceKind::Add)?;
        let lead: Vec<i64> = x.shape()[..w.lead].to_vec();
        let mut full = lead.clone();
        full.extend_from_slice(counts.shape());
        let dims: Vec<i64> = (w.lead as i64..full.len() as i64).collect();
        let cb = e.broadcast_in_dim(&counts, &full, &dims)?;
        e.div(&sum, &cb)?
    };
    let out = e.convert(&out, ty.dtype)?;
    Ok(vec![e.reshape(&out, &ty.shape)?])
}

/// The `[out, in]` matrix whose row `i` averages input positions
/// `floor(i*in/out) .. ceil((i+1)*in/out)`.
fn averaging_matrix(input: i64, output: i64) -> Vec<f64> {
    let mut m = vec![0.0; (output * input) as usize];
    for i in 0..output {
        let start = (i * input) / output;
        let end = ((i + 1) * input + output - 1) / output;
        let w = 1.0 / (end - start) as f64;
        for j in start..end {
            m[(i * input + j) as usize] = w;
        }
    }
    m
}

fn adaptive_avg_pool(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    let n = spatial_dims(op);
    let r = x.rank();
    let lead = r - n;
    let compute = if x.dtype() == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let mut cur = e.convert(x, compute)?;
    for i in 0..n {
        let dim = (lead + i) as i64;
        let (input, output) = (x.shape()[lead + i], ty.shape[lead + i]);
        if input == output {
            continue;
        }
        cur = apply_along(e, &cur, dim, &averaging_matrix(input, output), output)?;
    }
    let out = e.convert(&cur, ty.dtype)?;
    Ok(vec![e.reshape(&out, &ty.shape)?])
}

/// Applies the linear map `matrix` (`[output, input]`, row-major) along `dim` of `x`:
/// `out[.., i, ..] = sum_j matrix[i][j] * x[.., j, ..]`, as one `dot_general` with a
/// constant. Adaptive pooling and interpolation are such maps, one per spatial dim.
pub(super) fn apply_along(
    e: &Emitter,
    x: &TValue,
    dim: i64,
    matrix: &[f64],
    output: i64,
) -> LResult<TValue> {
    let input = x.shape()[dim as usize];
    let mt = TensorType::new(vec![output, input], x.dtype());
    let lits: Vec<String> = matrix
        .iter()
        .map(|v| tpuc_dialects::stablehlo::scalar_literal(x.dtype(), *v))
        .collect();
    let m = e.constant_elements(&mt, &lits)?;
    // Contract `dim` of x with dim 1 of m; the new dim lands last: move it back.
    let dims = DotDims {
        lhs_contract: vec![dim],
        rhs_contract: vec![1],
        ..DotDims::default()
    };
    let prod = e.dot_general(x, &m, &dims)?;
    let rank = prod.rank() as i64;
    let mut perm: Vec<i64> = (0..rank - 1).collect();
    perm.insert(dim as usize, rank - 1);
    Ok(e.transpose(&prod, &perm)?)
}
