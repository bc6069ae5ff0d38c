//! Reductions: sum, mean, prod, amax/amin, max/min (with indices), argmax/argmin,
//! any/all, var/std, softmax/log_softmax, logsumexp and cumulative sums/products.
//!
//! Half-precision inputs accumulate in f32, as PyTorch does on CPU.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{integer_bounds, ReduceKind, WindowParams};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::elementwise::{accumulator, splat, to_type};
use super::op::norm_dim;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.sum" => reduce_op(op, e, ReduceKind::Add),
        "aten.prod" => reduce_op(op, e, ReduceKind::Mul),
        "aten.mean" => mean(op, e),
        "aten.amax" => reduce_op(op, e, ReduceKind::Max),
        "aten.amin" => reduce_op(op, e, ReduceKind::Min),
        "aten.max" | "aten.min" if op.tensor_opt("other").is_none() => max_min(op, e),
        "aten.argmax" | "aten.argmin" => argmax(op, e),
        "aten.any" => any_all(op, e, ReduceKind::Or),
        "aten.all" => any_all(op, e, ReduceKind::And),
        "aten.var" | "aten.std" => var_std(op, e),
        "aten.var_mean" => var_mean(op, e),
        "aten.softmax" | "aten._softmax" | "aten.special_softmax" => softmax(op, e, false),
        "aten.log_softmax" | "aten._log_softmax" => softmax(op, e, true),
        "aten.logsumexp" => logsumexp(op, e),
        "aten.linalg_vector_norm" | "aten.norm" => vector_norm(op, e),
        "aten._cdist_forward" | "aten.cdist" => cdist(op, e),
        "aten.histc" => histc(op, e),
        "aten._pdist_forward" | "aten.pdist" => pdist(op, e),
        "aten.cumsum" => cumulative(op, e, ReduceKind::Add),
        "aten.cumprod" => cumulative(op, e, ReduceKind::Mul),
        _ => return None,
    };
    Some(r)
}

/// Normalized reduction dims from `dim` (int, list, or absent/empty = all dims).
fn reduce_dims(op: &AtenOp, rank: usize) -> LResult<Vec<i64>> {
    let dims = op.ints_opt("dim").unwrap_or_default();
    if dims.is_empty() {
        return Ok((0..rank as i64).collect());
    }
    let mut v = dims
        .iter()
        .map(|&d| norm_dim(d, rank))
        .collect::<LResult<Vec<_>>>()?;
    v.sort();
    v.dedup();
    if rank == 0 {
        v.clear();
    }
    Ok(v)
}

/// Identity element of a reduction for `dtype`.
fn init_value(kind: ReduceKind, dtype: DType) -> f64 {
    let (lo, hi) = integer_bounds(dtype);
    match kind {
        ReduceKind::Add | ReduceKind::Or => 0.0,
        ReduceKind::Mul | ReduceKind::And => 1.0,
        ReduceKind::Max | ReduceKind::MaxUnchecked => lo,
        ReduceKind::Min => hi,
    }
}

/// Reduces `x` (converted to `dtype`) over `dims`, then reshapes to `shape` (keepdim).
fn reduce_to(
    e: &Emitter,
    x: &TValue,
    dims: &[i64],
    kind: ReduceKind,
    dtype: DType,
) -> LResult<TValue> {
    let x = e.convert(x, dtype)?;
    if dims.is_empty() {
        return Ok(x);
    }
    Ok(e.reduce(&x, init_value(kind, dtype), dims, kind)?)
}

fn reduce_op(op: &AtenOp, e: &Emitter, kind: ReduceKind) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let dims = reduce_dims(op, x.rank())?;
    let acc = if matches!(kind, ReduceKind::Max | ReduceKind::Min) {
        ty.dtype
    } else {
        accumulator(ty.dtype)
    };
    let r = reduce_to(e, x, &dims, kind, acc)?;
    let r = e.convert(&r, ty.dtype)?;
    Ok(vec![e.reshape(&r, &ty.shape)?])
}

fn mean(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let dims = reduce_dims(op, x.rank())?;
    let acc = accumulator(ty.dtype);
    let s = reduce_to(e, x, &dims, ReduceKind::Add, acc)?;
    let count: i64 = dims.iter().map(|&d| x.shape()[d as usize]).product();
    let m = e.div(&s, &splat(e, &s.ty, count as f64)?)?;
    let m = e.convert(&m, ty.dtype)?;
    Ok(vec![e.reshape(&m, &ty.shape)?])
}

fn max_min(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let take_max = op.base() == "aten.max";
    match op.int_opt("dim") {
        None => {
            // Full reduction to a scalar; NaN propagates through maximum/minimum.
            let kind = if take_max {
                ReduceKind::Max
            } else {
                ReduceKind::Min
            };
            let dims: Vec<i64> = (0..x.rank() as i64).collect();
            let init = if x.dtype().is_float() {
                if take_max {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            } else {
                init_value(kind, x.dtype())
            };
            if dims.is_empty() {
                return Ok(vec![x.clone()]);
            }
            Ok(vec![e.reduce(x, init, &dims, kind)?])
        }
        Some(dim) => {
            let dim = norm_dim(dim, x.rank())?;
            let (v, i) = if x.rank() == 0 {
                (x.clone(), splat(e, &TensorType::scalar(DType::I64), 0.0)?)
            } else {
                e.reduce_with_index(x, dim, take_max)?
            };
            let vt = op.result(0)?;
            let it = op.result(1)?;
            Ok(vec![e.reshape(&v, &vt.shape)?, e.reshape(&i, &it.shape)?])
        }
    }
}

fn argmax(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    let take_max = op.base() == "aten.argmax";
    let (x, dim) = match op.int_opt("dim") {
        Some(d) => (x.clone(), norm_dim(d, x.rank())?),
        None => (e.reshape(x, &[x.ty.num_elements()])?, 0),
    };
    if x.rank() == 0 {
        return Ok(vec![splat(e, ty, 0.0)?]);
    }
    let (_, i) = e.reduce_with_index(&x, dim, take_max)?;
    Ok(vec![e.reshape(&i, &ty.shape)?])
}

fn any_all(op: &AtenOp, e: &Emitter, kind: ReduceKind) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let b = if x.dtype() == DType::Bool {
        x.clone()
    } else {
        e.compare(tpuc_dialects::stablehlo::Cmp::Ne, x, &splat(e, &x.ty, 0.0)?)?
    };
    // `any.dims` / `all.dims` with an explicit empty list reduce nothing.
    let explicit_empty =
        op.target.ends_with(".dims") && matches!(op.ints_opt("dim"), Some(v) if v.is_empty());
    let dims = if explicit_empty {
        vec![]
    } else {
        reduce_dims(op, x.rank())?
    };
    let r = reduce_to(e, &b, &dims, kind, DType::Bool)?;
    let r = e.reshape(&r, &ty.shape)?;
    Ok(vec![to_type(e, &r, ty)?])
}

/// Variance over `dims` with `correction` (Bessel's by default), in the accumulator dtype.
fn variance(e: &Emitter, x: &TValue, dims: &[i64], correction: f64) -> LResult<(TValue, TValue)> {
    let acc = accumulator(x.dtype());
    let xf = e.convert(x, acc)?;
    let count: i64 = dims.iter().map(|&d| x.shape()[d as usize]).product();
    let s = reduce_to(e, &xf, dims, ReduceKind::Add, acc)?;
    let mean = e.div(&s, &splat(e, &s.ty, count as f64)?)?;
    let kept: Vec<i64> = (0..x.rank() as i64).filter(|d| !dims.contains(d)).collect();
    let mb = e.broadcast_in_dim(&mean, xf.shape(), &kept)?;
    let d = e.sub(&xf, &mb)?;
    let sq = e.mul(&d, &d)?;
    let ss = reduce_to(e, &sq, dims, ReduceKind::Add, acc)?;
    let denom = (count as f64 - correction).max(0.0);
    let var = e.div(&ss, &splat(e, &ss.ty, denom)?)?;
    Ok((var, mean))
}

fn correction(op: &AtenOp) -> f64 {
    if let Some(c) = op.number_opt("correction") {
        return c;
    }
    if op.attr("unbiased").is_some() {
        return if op.bool_or("unbiased", true) {
            1.0
        } else {
            0.0
        };
    }
    1.0
}

fn var_std(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let dims = reduce_dims(op, x.rank())?;
    let (var, _) = variance(e, x, &dims, correction(op))?;
    let r = if op.base() == "aten.std" {
        e.unary("stablehlo.sqrt", &var)?
    } else {
        var
    };
    let r = e.convert(&r, ty.dtype)?;
    Ok(vec![e.reshape(&r, &ty.shape)?])
}

fn var_mean(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dims = reduce_dims(op, x.rank())?;
    let (var, mean) = variance(e, x, &dims, correction(op))?;
    let (vt, mt) = (op.result(0)?, op.result(1)?);
    let var = e.convert(&var, vt.dtype)?;
    let mean = e.convert(&mean, mt.dtype)?;
    Ok(vec![
        e.reshape(&var, &vt.shape)?,
        e.reshape(&mean, &mt.shape)?,
    ])
}

/// Numerically stable softmax along `dim`: exp(x - max) / sum.
fn softmax(op: &AtenOp, e: &Emitter, log: bool) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let dim = norm_dim(op.int("dim")?, x.rank())?;
    let compute = wider_float(accumulator(ty.dtype), accumulator(x.dtype()));
    let xf = e.convert(x, compute)?;
    if xf.rank() == 0 {
        let v = if log {
            splat(e, &xf.ty, 0.0)?
        } else {
            splat(e, &xf.ty, 1.0)?
        };
        return Ok(vec![e.convert(&v, ty.dtype)?]);
    }
    let kept: Vec<i64> = (0..xf.rank() as i64).filter(|&d| d != dim).collect();
    // The maximum is only a shift: a NaN in the row makes exp, the sum and so every
    // output of the row NaN whatever it is (as in PyTorch), so it needs no NaN checks.
    let m = e.reduce(&xf, f64::NEG_INFINITY, &[dim], ReduceKind::MaxUnchecked)?;
    // A row of -inf would give NaN from (-inf) - (-inf); PyTorch gives NaN too, so the
    // plain formula matches it.
    let mb = e.broadcast_in_dim(&m, xf.shape(), &kept)?;
    let shifted = e.sub(&xf, &mb)?;
    let ex = e.unary("stablehlo.exponential", &shifted)?;
    let s = e.reduce(&ex, 0.0, &[dim], ReduceKind::Add)?;
    let sb = e.broadcast_in_dim(&s, xf.shape(), &kept)?;
    let r = if log {
        e.sub(&shifted, &e.unary("stablehlo.log", &sb)?)?
    } else {
        e.div(&ex, &sb)?
    };
    Ok(vec![e.convert(&r, ty.dtype)?])
}

fn logsumexp(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let dims = reduce_dims(op, x.rank())?;
    let compute = accumulator(ty.dtype);
    let xf = e.convert(x, compute)?;
    let kept: Vec<i64> = (0..xf.rank() as i64)
        .filter(|d| !dims.contains(d))
        .collect();
    // A shift, as in softmax: a NaN in the row reaches the sum whatever the maximum is.
    let m = e.reduce(&xf, f64::NEG_INFINITY, &dims, ReduceKind::MaxUnchecked)?;
    // Guard infinite maxima so that all -inf rows give -inf, not NaN.
    let finite = e.unary("stablehlo.abs", &m)?;
    let is_inf = e.compare(
        tpuc_dialects::stablehlo::Cmp::Eq,
        &finite,
        &splat(e, &m.ty, f64::INFINITY)?,
    )?;
    let m_safe = e.select(&is_inf, &splat(e, &m.ty, 0.0)?, &m)?;
    let mb = e.broadcast_in_dim(&m_safe, xf.shape(), &kept)?;
    let ex = e.unary("stablehlo.exponential", &e.sub(&xf, &mb)?)?;
    let s = e.reduce(&ex, 0.0, &dims, ReduceKind::Add)?;
    let r = e.add(&e.unary("stablehlo.log", &s)?, &m_safe)?;
    let r = e.convert(&r, ty.dtype)?;
    Ok(vec![e.reshape(&r, &ty.shape)?])
}

/// Inclusive scan along `dim` as a reduce_window whose window covers everything before.
fn cumulative(op: &AtenOp, e: &Emitter, kind: ReduceKind) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    if x.rank() == 0 {
        return Ok(vec![to_type(e, x, ty)?]);
    }
    let dim = norm_dim(op.int("dim")?, x.rank())? as usize;
    let acc = accumulator(ty.dtype);
    let xf = e.convert(x, acc)?;
    let n = x.shape()[dim];
    if n == 0 {
        return Ok(vec![to_type(e, &xf, ty)?]);
    }
    let r = x.rank();
    let mut dims = vec![1; r];
    dims[dim] = n;
    let mut padding = vec![(0, 0); r];
    padding[dim] = (n - 1, 0);
    let p = WindowParams {
        dims,
        strides: vec![1; r],
        padding,
        window_dilations: vec![1; r],
    };
    let out = e.reduce_window(&xf, init_value(kind, acc), &p, kind)?;
    Ok(vec![e.convert(&out, ty.dtype)?])
}

/// The wider of two float dtypes, f32 when neither is a float (softmax's compute type).
fn wider_float(a: DType, b: DType) -> DType {
    let rank = |d: DType| match d {
        DType::F64 => 3,
        DType::F32 => 2,
        _ if d.is_float() => 1,
        _ => 0,
    };
    let best = if rank(a) >= rank(b) { a } else { b };
    if best.is_float() {
        best
    } else {
        DType::F32
    }
}

/// `linalg_vector_norm(x, ord, dim, keepdim)`: inf/-inf are max/min of |x|, 0 counts
/// non-zeros, other orders are `(sum |x|^ord)^(1/ord)`.
fn vector_norm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let ord = op.number_opt("ord").or(op.number_opt("p")).unwrap_or(2.0);
    let dims = reduce_dims(op, x.rank())?;
    let acc = accumulator(ty.dtype);
    let a = e.unary("stablehlo.abs", &e.convert(x, acc)?)?;
    let r = if ord == f64::INFINITY {
        reduce_to(e, &a, &dims, ReduceKind::Max, acc)?
    } else if ord == f64::NEG_INFINITY {
        e.reduce(&a, f64::INFINITY, &dims, ReduceKind::Min)?
    } else if ord == 0.0 {
        let nz = e.compare(
            tpuc_dialects::stablehlo::Cmp::Ne,
            &a,
            &splat(e, &a.ty, 0.0)?,
        )?;
        reduce_to(e, &e.convert(&nz, acc)?, &dims, ReduceKind::Add, acc)?
    } else if ord == 1.0 {
        reduce_to(e, &a, &dims, ReduceKind::Add, acc)?
    } else if ord == 2.0 {
        let s = reduce_to(e, &e.mul(&a, &a)?, &dims, ReduceKind::Add, acc)?;
        e.unary("stablehlo.sqrt", &s)?
    } else {
        let p = e.binary("stablehlo.power", &a, &splat(e, &a.ty, ord)?)?;
        let s = reduce_to(e, &p, &dims, ReduceKind::Add, acc)?;
        e.binary("stablehlo.power", &s, &splat(e, &s.ty, 1.0 / ord)?)?
    };
    let r = e.convert(&r, ty.dtype)?;
    Ok(vec![e.reshape(&r, &ty.shape)?])
}

/// p-norm of `d` over `dim` (the `p` cases of cdist/pdist: 0, 1, 2, inf, general).
fn p_norm(e: &Emitter, d: &TValue, dim: i64, p: f64) -> LResult<TValue> {
    let a = e.unary("stablehlo.abs", d)?;
    Ok(if p == f64::INFINITY {
        e.reduce(&a, f64::NEG_INFINITY, &[dim], ReduceKind::Max)?
    } else if p == 0.0 {
        let nz = e.compare(
            tpuc_dialects::stablehlo::Cmp::Ne,
            &a,
            &splat(e, &a.ty, 0.0)?,
        )?;
        e.reduce(&e.convert(&nz, a.dtype())?, 0.0, &[dim], ReduceKind::Add)?
    } else if p == 1.0 {
        e.reduce(&a, 0.0, &[dim], ReduceKind::Add)?
    } else if p == 2.0 {
        e.unary(
            "stablehlo.sqrt",
            &e.reduce(&e.mul(&a, &a)?, 0.0, &[dim], ReduceKind::Add)?,
        )?
    } else {
        let s = e.reduce(
            &e.binary("stablehlo.power", &a, &splat(e, &a.ty, p)?)?,
            0.0,
            &[dim],
            ReduceKind::Add,
        )?;
        e.binary("stablehlo.power", &s, &splat(e, &s.ty, 1.0 / p)?)?
    })
}

/// Pairwise distances `[..., P, M] x [..., R, M] -> [..., P, R]`, from the differences
/// directly (exact; PyTorch's matmul shortcut for large inputs only rounds differently).
fn pairwise(e: &Emitter, a: &TValue, b: &TValue, p: f64) -> LResult<TValue> {
    let r = a.rank();
    let (pn, m) = (a.shape()[r - 2], a.shape()[r - 1]);
    let rn = b.shape()[r - 2];
    let batch = super::elementwise::broadcast_shapes(&a.shape()[..r - 2], &b.shape()[..r - 2])?;
    let nb = batch.len() as i64;
    let mut full = batch.clone();
    full.extend([pn, rn, m]);
    let mut da: Vec<i64> = (0..nb).collect();
    da.extend([nb, nb + 2]);
    let mut db: Vec<i64> = (0..nb).collect();
    db.extend([nb + 1, nb + 2]);
    let mut a_shape = batch.clone();
    a_shape.extend([pn, m]);
    let mut b_shape = batch;
    b_shape.extend([rn, m]);
    let ab = e.broadcast_in_dim(&e.broadcast_to(a, &a_shape)?, &full, &da)?;
    let bb = e.broadcast_in_dim(&e.broadcast_to(b, &b_shape)?, &full, &db)?;
    p_norm(e, &e.sub(&ab, &bb)?, nb + 2, p)
}

fn cdist(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x1 = e.convert(op.tensor("x1")?, ty.dtype)?;
    let x2 = e.convert(op.tensor("x2")?, ty.dtype)?;
    let p = op.number_or("p", 2.0);
    if x1.rank() < 2 || x2.rank() != x1.rank() {
        return Err(LowerError::Invalid(
            "cdist needs inputs of the same rank >= 2".into(),
        ));
    }
    let d = pairwise(e, &x1, &x2, p)?;
    Ok(vec![e.reshape(&d, &ty.shape)?])
}

/// `pdist(input [N, M], p)`: the upper triangle (i < j, row-major) of cdist(x, x).
fn pdist(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = e.convert(op.first_tensor()?, ty.dtype)?;
    if x.rank() != 2 {
        return Err(LowerError::Invalid("pdist needs a 2-D input".into()));
    }
    let n = x.shape()[0];
    let d = pairwise(e, &x, &x, op.number_or("p", 2.0))?;
    let pairs: Vec<i64> = (0..n)
        .flat_map(|i| ((i + 1)..n).map(move |j| i * n + j))
        .collect();
    if pairs.is_empty() {
        return Ok(vec![e.constant(ty, 0.0)?]);
    }
    let lits: Vec<String> = pairs.iter().map(|v| v.to_string()).collect();
    let idx = e.constant_elements(
        &TensorType::new(vec![pairs.len() as i64], DType::I64),
        &lits,
    )?;
    let flat = e.reshape(&d, &[n * n])?;
    Ok(vec![super::gather::take(e, &flat, &idx, 0)?])
}

/// `histc(self, bins, min, max)`: counts of elements per equal-width bin over
/// [min, max] (the data's own range when min == max); elements outside are ignored and
/// `max` falls in the last bin, as in PyTorch.
fn histc(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let bins = op.int_or("bins", 100);
    let cd = if x.dtype() == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let flat = e.reshape(&e.convert(x, cd)?, &[x.ty.num_elements()])?;
    let (mut lo, mut hi) = (op.number_or("min", 0.0), op.number_or("max", 0.0));
    let (lo_v, hi_v) = if lo == hi {
        let all = [0i64];
        let mn = e.reduce(&flat, f64::INFINITY, &all, ReduceKind::Min)?;
        let mx = e.reduce(&flat, f64::NEG_INFINITY, &all, ReduceKind::Max)?;
        // A constant tensor widens to [v - 1, v + 1] in PyTorch.
        let same = e.compare(tpuc_dialects::stablehlo::Cmp::Eq, &mn, &mx)?;
        let one = e.scalar(cd, 1.0)?;
        (
            e.select(&same, &e.sub(&mn, &one)?, &mn)?,
            e.select(&same, &e.add(&mx, &one)?, &mx)?,
        )
    } else {
        if lo > hi {
            std::mem::swap(&mut lo, &mut hi);
        }
        (e.scalar(cd, lo)?, e.scalar(cd, hi)?)
    };
    let n = flat.shape()[0];
    let lo_b = e.broadcast_to(&lo_v, &[n])?;
    let hi_b = e.broadcast_to(&hi_v, &[n])?;
    let width = e.sub(&hi_b, &lo_b)?;
    let pos = e.div(
        &e.mul(&e.sub(&flat, &lo_b)?, &splat(e, &flat.ty, bins as f64)?)?,
        &width,
    )?;
    let bin = e.convert(&e.unary("stablehlo.floor", &pos)?, DType::I64)?;
    let last = e.constant(&bin.ty, (bins - 1) as f64)?;
    let bin = e.min(&bin, &last)?;
    let inside = e.binary(
        "stablehlo.and",
        &e.compare(tpuc_dialects::stablehlo::Cmp::Ge, &flat, &lo_b)?,
        &e.compare(tpuc_dialects::stablehlo::Cmp::Le, &flat, &hi_b)?,
    )?;
    // One-hot [n, bins] comparison, summed over the elements.
    let it = TensorType::new(vec![n, bins], DType::I64);
    let col = e.iota(&it, 1)?;
    let hit = e.compare(
        tpuc_dialects::stablehlo::Cmp::Eq,
        &e.broadcast_in_dim(&bin, &[n, bins], &[0])?,
        &col,
    )?;
    let hit = e.binary(
        "stablehlo.and",
        &hit,
        &e.broadcast_in_dim(&inside, &[n, bins], &[0])?,
    )?;
    let counts = e.reduce(&e.convert(&hit, cd)?, 0.0, &[0], ReduceKind::Add)?;
    Ok(vec![e.convert(&counts, ty.dtype)?])
}
