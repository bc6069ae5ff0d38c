//! Normalizations in inference form: batch norm (running statistics), layer norm,
//! group norm and RMS norm. Half-precision inputs are normalized in f32.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::ReduceKind;
use tpuc_dialects::{Emitter, TValue};

use super::elementwise::splat;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.batch_norm"
        | "aten._native_batch_norm_legit_no_training"
        | "aten.native_batch_norm"
        | "aten._native_batch_norm_legit"
        | "aten._native_batch_norm_legit_functional"
        | "aten.cudnn_batch_norm" => batch_norm(op, e),
        "aten.layer_norm" | "aten.native_layer_norm" => layer_norm(op, e),
        "aten.instance_norm" => instance_norm(op, e),
        "aten._weight_norm" | "aten._weight_norm_interface" => weight_norm(op, e),
        "aten.group_norm" | "aten.native_group_norm" => group_norm(op, e),
        "aten.rms_norm" | "aten._fused_rms_norm" => rms_norm(op, e),
        _ => return None,
    };
    Some(r)
}

fn compute_dtype(d: DType) -> DType {
    if d == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// Mean and biased variance over the trailing `dims`, computed on data shifted by each
/// slice's first element `x0`: `a = mean(x - x0)`, `d = (x - x0) - a`,
/// `var = mean(d²)`, mean `x0 + a`. A rounded f32 mean cannot hold the bits the
/// deviations live in when the values share a large offset (1000 ± 0.01), and
/// `x - mean` would then be off by the mean's rounding; `x - x0` and the small `a` keep
/// them. The shift costs no pass of its own: two dependent reductions, each ending in
/// its elementwise epilogue, as the plain two-pass form has (a third reduction would be
/// one more kernel on XLA). Returns `(d, mean, var)`.
fn moments(
    e: &Emitter,
    xf: &TValue,
    dims: &[i64],
    kept: &[i64],
    count: i64,
) -> LResult<(TValue, TValue, TValue)> {
    let n = |t: &TValue| splat(e, &t.ty, count as f64);
    let shape = xf.shape();
    let first: Vec<i64> = shape
        .iter()
        .enumerate()
        .map(|(i, &s)| if dims.contains(&(i as i64)) { 1 } else { s })
        .collect();
    let kept_shape: Vec<i64> = kept.iter().map(|&k| shape[k as usize]).collect();
    let ones = vec![1; shape.len()];
    let x0 = if count > 0 {
        let x0 = e.slice(xf, &vec![0; shape.len()], &first, &ones)?;
        e.reshape(&x0, &kept_shape)?
    } else {
        // Nothing to normalize: no first element to shift by.
        splat(e, &xf.ty.with_shape(kept_shape.clone()), 0.0)?
    };
    let shifted = e.sub(xf, &e.broadcast_in_dim(&x0, shape, kept)?)?;
    let s1 = e.reduce(&shifted, 0.0, dims, ReduceKind::Add)?;
    let a = e.div(&s1, &n(&s1)?)?;
    let d = e.sub(&shifted, &e.broadcast_in_dim(&a, shape, kept)?)?;
    let q = e.reduce(&e.mul(&d, &d)?, 0.0, dims, ReduceKind::Add)?;
    let var = e.div(&q, &n(&q)?)?;
    Ok((d, e.add(&x0, &a)?, var))
}

/// Broadcasts a per-channel vector along dim 1 of `like`.
fn per_channel(e: &Emitter, v: &TValue, like: &TValue) -> LResult<TValue> {
    let v = e.convert(v, like.dtype())?;
    Ok(e.broadcast_in_dim(&v, like.shape(), &[1])?)
}

fn batch_norm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let training = match op.base() {
        "aten._native_batch_norm_legit_no_training" => false,
        _ => op.bool_or("training", false),
    };
    let ty = op.result(0)?;
    let x = op.tensor("input")?;
    let eps = op.number_or("eps", 1e-5);
    let cd = compute_dtype(ty.dtype);
    let xf = e.convert(x, cd)?;
    let running = (op.tensor_opt("running_mean"), op.tensor_opt("running_var"));
    // Statistics: the running ones in inference; the batch's own (biased variance over
    // every dim but the channel) in training mode or when there are none. A training
    // batch norm that updates running statistics arrives as the functional form (the
    // importer turns the in-place forms into it), which returns their next values.
    let (mean_b, var_b, batch_stats) = match running {
        (Some(m), Some(v)) if !training => (per_channel(e, m, &xf)?, per_channel(e, v, &xf)?, None),
        _ => {
            let dims: Vec<i64> = (0..xf.rank() as i64).filter(|&d| d != 1).collect();
            let count: i64 = dims.iter().map(|&d| xf.shape()[d as usize]).product();
            let s = e.reduce(&xf, 0.0, &dims, ReduceKind::Add)?;
            let mean = e.div(&s, &splat(e, &s.ty, count as f64)?)?;
            let mb = e.broadcast_in_dim(&mean, xf.shape(), &[1])?;
            let d = e.sub(&xf, &mb)?;
            let ss = e.reduce(&e.mul(&d, &d)?, 0.0, &dims, ReduceKind::Add)?;
            let var = e.div(&ss, &splat(e, &ss.ty, count as f64)?)?;
            let vb = e.broadcast_in_dim(&var, xf.shape(), &[1])?;
            (mb, vb, Some((mean, var)))
        }
    };
    let inv = e.unary("stablehlo.rsqrt", &e.add(&var_b, &splat(e, &xf.ty, eps)?)?)?;
    let mut y = e.mul(&e.sub(&xf, &mean_b)?, &inv)?;
    if let Some(w) = op.tensor_opt("weight") {
        y = e.mul(&y, &per_channel(e, w, &xf)?)?;
    }
    if let Some(b) = op.tensor_opt("bias") {
        y = e.add(&y, &per_channel(e, b, &xf)?)?;
    }
    let y = e.convert(&y, ty.dtype)?;
    match batch_stats {
        // Training form: (output, save_mean, save_invstd) as native_batch_norm returns;
        // the functional form (a joint training graph's) also returns the running
        // statistics' next values: `(1 - momentum) * running + momentum * batch`, the
        // variance unbiased (`n / (n - 1)`).
        Some((mean, var)) if op.results.len() == 3 || op.results.len() == 5 => {
            let rstd = e.unary("stablehlo.rsqrt", &e.add(&var, &splat(e, &var.ty, eps)?)?)?;
            let (mt, rt) = (op.result(1)?, op.result(2)?);
            let mut out = vec![
                y,
                e.reshape(&e.convert(&mean, mt.dtype)?, &mt.shape)?,
                e.reshape(&e.convert(&rstd, rt.dtype)?, &rt.shape)?,
            ];
            if op.results.len() == 5 {
                let (Some(rm), Some(rv)) = running else {
                    return Err(LowerError::Invalid(
                        "the functional batch norm needs running_mean and running_var".into(),
                    ));
                };
                let momentum = op.number_or("momentum", 0.1);
                let count: i64 = (0..xf.rank())
                    .filter(|&d| d != 1)
                    .map(|d| xf.shape()[d])
                    .product();
                let unbiased = count as f64 / (count - 1).max(1) as f64;
                let blend =
                    |old: &TValue, batch: &TValue, scale: f64, i: usize| -> LResult<TValue> {
                        let t = op.result(i)?;
                        let old = e.convert(old, cd)?;
                        let b = e.mul(batch, &splat(e, &batch.ty, momentum * scale)?)?;
                        let kept = e.mul(&old, &splat(e, &old.ty, 1.0 - momentum)?)?;
                        Ok(e.reshape(&e.convert(&e.add(&b, &kept)?, t.dtype)?, &t.shape)?)
                    };
                out.push(blend(rm, &mean, 1.0, 3)?);
                out.push(blend(rv, &var, unbiased, 4)?);
            }
            Ok(out)
        }
        // Inference: the saved mean / invstd outputs are empty tensors (shape [0]).
        _ => {
            let mut out = vec![y];
            for t in op.results.iter().skip(1) {
                out.push(e.constant(t, 0.0)?);
            }
            Ok(out)
        }
    }
}

fn layer_norm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.tensor("input")?;
    let normalized = op.ints("normalized_shape")?;
    let eps = op.number_or("eps", 1e-5);
    let r = x.rank();
    let k = normalized.len();
    if k > r || x.shape()[r - k..] != normalized[..] {
        return Err(LowerError::Invalid(format!(
            "normalized_shape {normalized:?} does not match the trailing dims of {}",
            x.ty
        )));
    }
    let cd = compute_dtype(ty.dtype);
    let xf = e.convert(x, cd)?;
    let dims: Vec<i64> = ((r - k) as i64..r as i64).collect();
    let kept: Vec<i64> = (0..(r - k) as i64).collect();
    let count: i64 = normalized.iter().product();
    let (d, mean, var) = moments(e, &xf, &dims, &kept, count)?;
    let rstd = e.unary("stablehlo.rsqrt", &e.add(&var, &splat(e, &var.ty, eps)?)?)?;
    let mut y = e.mul(&d, &e.broadcast_in_dim(&rstd, xf.shape(), &kept)?)?;
    let trailing: Vec<i64> = dims.clone();
    if let Some(w) = op.tensor_opt("weight") {
        let w = e.convert(w, cd)?;
        y = e.mul(&y, &e.broadcast_in_dim(&w, xf.shape(), &trailing)?)?;
    }
    if let Some(b) = op.tensor_opt("bias") {
        let b = e.convert(b, cd)?;
        y = e.add(&y, &e.broadcast_in_dim(&b, xf.shape(), &trailing)?)?;
    }
    let mut out = vec![e.convert(&y, ty.dtype)?];
    if op.results.len() == 3 {
        // native_layer_norm also returns mean and rstd, shaped with kept size-1 dims.
        let (mt, rt) = (op.result(1)?, op.result(2)?);
        out.push(e.reshape(&e.convert(&mean, mt.dtype)?, &mt.shape)?);
        out.push(e.reshape(&e.convert(&rstd, rt.dtype)?, &rt.shape)?);
    }
    Ok(out)
}

fn group_norm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.tensor("input")?;
    let groups = op
        .int_opt("num_groups")
        .or(op.int_opt("group"))
        .unwrap_or(1);
    let eps = op.number_or("eps", 1e-5);
    let (n, c) = (x.shape()[0], x.shape()[1]);
    if groups <= 0 || c % groups != 0 {
        return Err(LowerError::Invalid(format!(
            "{c} channels do not split into {groups} groups"
        )));
    }
    let cd = compute_dtype(ty.dtype);
    let xf = e.convert(x, cd)?;
    let rest: i64 = x.shape()[2..].iter().product();
    let g = e.reshape(&xf, &[n, groups, (c / groups) * rest])?;
    let count = (c / groups) * rest;
    let s = e.reduce(&g, 0.0, &[2], ReduceKind::Add)?;
    let mean = e.div(&s, &splat(e, &s.ty, count as f64)?)?;
    let d = e.sub(&g, &e.broadcast_in_dim(&mean, g.shape(), &[0, 1])?)?;
    let var = e.div(
        &e.reduce(&e.mul(&d, &d)?, 0.0, &[2], ReduceKind::Add)?,
        &splat(e, &mean.ty, count as f64)?,
    )?;
    let rstd = e.unary("stablehlo.rsqrt", &e.add(&var, &splat(e, &var.ty, eps)?)?)?;
    let y = e.mul(&d, &e.broadcast_in_dim(&rstd, g.shape(), &[0, 1])?)?;
    let mut y = e.reshape(&y, xf.shape())?;
    if let Some(w) = op.tensor_opt("weight") {
        y = e.mul(&y, &per_channel(e, w, &y)?)?;
    }
    if let Some(b) = op.tensor_opt("bias") {
        y = e.add(&y, &per_channel(e, b, &y)?)?;
    }
    let mut out = vec![e.convert(&y, ty.dtype)?];
    if op.results.len() == 3 {
        let (mt, rt) = (op.result(1)?, op.result(2)?);
        out.push(e.reshape(&e.convert(&mean, mt.dtype)?, &mt.shape)?);
        out.push(e.reshape(&e.convert(&rstd, rt.dtype)?, &rt.shape)?);
    }
    Ok(out)
}

fn rms_norm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.tensor("input")?;
    let normalized = op.ints("normalized_shape")?;
    let r = x.rank();
    let k = normalized.len();
    if k > r || x.shape()[r - k..] != normalized[..] {
        return Err(LowerError::Invalid(format!(
            "normalized_shape {normalized:?} does not match the trailing dims of {}",
            x.ty
        )));
    }
    let cd = compute_dtype(ty.dtype);
    let eps = op.number_opt("eps").unwrap_or(if cd == DType::F64 {
        f64::EPSILON
    } else {
        f32::EPSILON as f64
    });
    let xf = e.convert(x, cd)?;
    let dims: Vec<i64> = ((r - k) as i64..r as i64).collect();
    let kept: Vec<i64> = (0..(r - k) as i64).collect();
    let count: i64 = normalized.iter().product();
    let sum_sq = e.reduce(&e.mul(&xf, &xf)?, 0.0, &dims, ReduceKind::Add)?;
    let ms = e.div(&sum_sq, &splat(e, &sum_sq.ty, count as f64)?)?;
    let inv = e.unary("stablehlo.rsqrt", &e.add(&ms, &splat(e, &ms.ty, eps)?)?)?;
    let mut y = e.mul(&xf, &e.broadcast_in_dim(&inv, xf.shape(), &kept)?)?;
    if let Some(w) = op.tensor_opt("weight") {
        let w = e.convert(w, cd)?;
        y = e.mul(&y, &e.broadcast_in_dim(&w, xf.shape(), &dims)?)?;
    }
    Ok(vec![e.convert(&y, ty.dtype)?])
}

/// `instance_norm`: each (sample, channel) plane normalized by its own statistics
/// (`use_input_stats`), or by running statistics like batch norm otherwise.
fn instance_norm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    if !op.bool_or("use_input_stats", true) {
        return batch_norm(op, e);
    }
    let ty = op.result(0)?;
    let x = op.tensor("input")?;
    let eps = op.number_or("eps", 1e-5);
    let cd = compute_dtype(ty.dtype);
    let xf = e.convert(x, cd)?;
    let dims: Vec<i64> = (2..xf.rank() as i64).collect();
    let count: i64 = dims.iter().map(|&d| xf.shape()[d as usize]).product();
    let s = e.reduce(&xf, 0.0, &dims, ReduceKind::Add)?;
    let mean = e.div(&s, &splat(e, &s.ty, count as f64)?)?;
    let d = e.sub(&xf, &e.broadcast_in_dim(&mean, xf.shape(), &[0, 1])?)?;
    let ss = e.reduce(&e.mul(&d, &d)?, 0.0, &dims, ReduceKind::Add)?;
    let var = e.div(&ss, &splat(e, &ss.ty, count as f64)?)?;
    let rstd = e.unary("stablehlo.rsqrt", &e.add(&var, &splat(e, &var.ty, eps)?)?)?;
    let mut y = e.mul(&d, &e.broadcast_in_dim(&rstd, xf.shape(), &[0, 1])?)?;
    if let Some(w) = op.tensor_opt("weight") {
        y = e.mul(&y, &per_channel(e, w, &xf)?)?;
    }
    if let Some(b) = op.tensor_opt("bias") {
        y = e.add(&y, &per_channel(e, b, &xf)?)?;
    }
    Ok(vec![e.convert(&y, ty.dtype)?])
}

/// `_weight_norm(v, g, dim)`: `v * g / ||v||`, the norm taken over every dim but `dim`
/// (over all dims when `dim` is -1), kept for broadcasting.
fn weight_norm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let v = op.tensor("v")?;
    let g = op.tensor("g")?;
    let dim = op.int_or("dim", 0);
    let cd = compute_dtype(ty.dtype);
    let vf = e.convert(v, cd)?;
    let r = vf.rank() as i64;
    let keep: Vec<i64> = if dim == -1 {
        vec![]
    } else {
        vec![if dim < 0 { dim + r } else { dim }]
    };
    let dims: Vec<i64> = (0..r).filter(|d| !keep.contains(d)).collect();
    let ss = e.reduce(&e.mul(&vf, &vf)?, 0.0, &dims, ReduceKind::Add)?;
    let norm = e.unary("stablehlo.sqrt", &ss)?;
    let norm_b = e.broadcast_in_dim(&norm, vf.shape(), &keep)?;
    let gf = e.broadcast_to(&e.convert(g, cd)?, vf.shape())?;
    let w = e.mul(&vf, &e.div(&gf, &norm_b)?)?;
    let mut out = vec![e.convert(&w, ty.dtype)?];
    if op.results.len() == 2 {
        let nt = op.result(1)?;
        out.push(e.reshape(&e.convert(&norm, nt.dtype)?, &nt.shape)?);
    }
    Ok(out)
}
