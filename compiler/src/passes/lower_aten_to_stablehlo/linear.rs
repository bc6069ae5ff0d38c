//! Contractions: matrix products (`mm`, `bmm`, `matmul`, `addmm`, `linear`, `baddbmm`)
//! and convolutions (`convolution`, `conv1d/2d/3d`).

use tpuc_dialects::stablehlo::{ConvParams, DotDims};
use tpuc_dialects::{Emitter, TValue, TensorType};
use tpuc_runtime::DType;

use super::elementwise::{broadcast_shapes, splat, to_type};
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.mm" | "aten.bmm" | "aten.matmul" | "aten.mv" | "aten.dot" => {
            let a = op.first_tensor();
            let b = op
                .tensor_opt("mat2")
                .or(op.tensor_opt("other"))
                .or(op.tensor_opt("vec"))
                .or(op.tensor_opt("tensor"));
            match (a, b) {
                (Ok(a), Some(b)) => matmul(e, a, b, op.result(0).ok()).map(|v| vec![v]),
                _ => Err(LowerError::Invalid("matmul needs two tensors".into())),
            }
        }
        "aten.addmm" | "aten.baddbmm" | "aten.addmv" => addmm(op, e),
        "aten.linear" => linear(op, e),
        "aten.convolution" | "aten._convolution" | "aten.conv1d" | "aten.conv2d"
        | "aten.conv3d" => convolution(op, e),
        _ => return None,
    };
    Some(r)
}

/// PyTorch `matmul` semantics: 1-D operands are promoted and the added dim removed,
/// batch dims broadcast. `result` (from the graph) fixes the final shape and dtype.
pub fn matmul(e: &Emitter, a: &TValue, b: &TValue, result: Option<&TensorType>) -> LResult<TValue> {
    let dtype = result.map(|r| r.dtype).unwrap_or(a.dtype());
    let acc = matmul_acc(e, a, b, result)?;
    Ok(e.convert(&acc, dtype)?)
}

/// The accumulation dtype of a contraction producing `dtype`: f32 for f16/bf16
/// (PyTorch accumulates reduced-precision matmuls in f32 and rounds once).
fn accumulator(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::Bf16 => DType::F32,
        d => d,
    }
}

/// [`matmul`] before the final rounding: the result is in the accumulation dtype.
fn matmul_acc(e: &Emitter, a: &TValue, b: &TValue, result: Option<&TensorType>) -> LResult<TValue> {
    let dtype = result.map(|r| r.dtype).unwrap_or(a.dtype());
    let a = e.convert(a, dtype)?;
    let b = e.convert(b, dtype)?;
    if a.rank() == 0 || b.rank() == 0 {
        return Err(LowerError::Invalid(
            "matmul operands must be at least 1-D".into(),
        ));
    }
    let a2 = if a.rank() == 1 {
        e.reshape(&a, &[1, a.shape()[0]])?
    } else {
        a.clone()
    };
    let b2 = if b.rank() == 1 {
        e.reshape(&b, &[b.shape()[0], 1])?
    } else {
        b.clone()
    };
    let (ar, br) = (a2.rank(), b2.rank());
    let (m, k) = (a2.shape()[ar - 2], a2.shape()[ar - 1]);
    let (k2, n) = (b2.shape()[br - 2], b2.shape()[br - 1]);
    if k != k2 {
        return Err(LowerError::Invalid(format!(
            "matmul: inner dimensions differ ({} vs {})",
            a.ty, b.ty
        )));
    }
    let batch = broadcast_shapes(&a2.shape()[..ar - 2], &b2.shape()[..br - 2])?;
    let nb = batch.len() as i64;
    let mut a_shape = batch.clone();
    a_shape.extend([m, k]);
    let mut b_shape = batch.clone();
    b_shape.extend([k, n]);
    let a3 = e.broadcast_to(&a2, &a_shape)?;
    let b3 = e.broadcast_to(&b2, &b_shape)?;
    let batch_dims: Vec<i64> = (0..nb).collect();
    let dims = DotDims {
        lhs_batch: batch_dims.clone(),
        rhs_batch: batch_dims,
        lhs_contract: vec![nb + 1],
        rhs_contract: vec![nb],
    };
    let out = e.dot_general_to(&a3, &b3, &dims, accumulator(dtype))?;
    let mut shape = batch;
    if a.rank() > 1 {
        shape.push(m);
    }
    if b.rank() > 1 {
        shape.push(n);
    }
    let shape = result.map(|r| r.shape.clone()).unwrap_or(shape);
    Ok(e.reshape(&out, &shape)?)
}

/// `beta * self + alpha * (mat1 @ mat2)`.
fn addmm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let (l, r) = match op.base() {
        "aten.addmm" => ("mat1", "mat2"),
        "aten.baddbmm" => ("batch1", "batch2"),
        _ => ("mat", "vec"),
    };
    let prod = matmul_acc(e, op.tensor(l)?, op.tensor(r)?, Some(ty))?;
    let acc = prod.ty.clone();
    let alpha = op.number_or("alpha", 1.0);
    let beta = op.number_or("beta", 1.0);
    let prod = if alpha != 1.0 {
        e.mul(&prod, &splat(e, &acc, alpha)?)?
    } else {
        prod
    };
    if beta == 0.0 {
        // PyTorch ignores `self` (even NaN) when beta is 0.
        return Ok(vec![e.convert(&prod, ty.dtype)?]);
    }
    let bias = to_type(e, op.tensor("self")?, &acc)?;
    let bias = if beta != 1.0 {
        e.mul(&bias, &splat(e, &acc, beta)?)?
    } else {
        bias
    };
    Ok(vec![e.convert(&e.add(&bias, &prod)?, ty.dtype)?])
}

/// `input @ weight.T + bias`, contracting the last dim of input with dim 1 of weight.
fn linear(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = e.convert(op.tensor("input")?, ty.dtype)?;
    let w = e.convert(op.tensor("weight")?, ty.dtype)?;
    let out = if w.rank() == 2 {
        let dims = DotDims {
            lhs_contract: vec![x.rank() as i64 - 1],
            rhs_contract: vec![1],
            ..DotDims::default()
        };
        e.dot_general_to(&x, &w, &dims, accumulator(ty.dtype))?
    } else if w.rank() == 1 {
        let dims = DotDims {
            lhs_contract: vec![x.rank() as i64 - 1],
            rhs_contract: vec![0],
            ..DotDims::default()
        };
        e.dot_general(&x, &w, &dims)?
    } else {
        return Err(LowerError::Invalid(format!(
            "linear weight must be 1-D or 2-D, got {}",
            w.ty
        )));
    };
    let out = e.reshape(&out, &ty.shape)?;
    let out = match op.tensor_opt("bias") {
        Some(b) => e.add(&out, &to_type(e, b, &out.ty)?)?,
        None => out,
    };
    Ok(vec![e.convert(&out, ty.dtype)?])
}

/// Expands a per-spatial-dim list that may be given as a single value.
fn per_dim(v: Option<Vec<i64>>, n: usize, default: i64) -> Vec<i64> {
    match v {
        Some(v) if v.len() == n => v,
        Some(v) if v.len() == 1 => vec![v[0]; n],
        _ => vec![default; n],
    }
}

fn convolution(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    // Half-precision convolutions run in f32 (products of f16/bf16 values are exact in
    // f32), matching PyTorch's f32 accumulation.
    let cd = accumulator(ty.dtype);
    let x = e.convert(op.tensor("input")?, cd)?;
    let w = e.convert(op.tensor("weight")?, cd)?;
    if op.bool_or("transposed", false) {
        return Err(LowerError::Unsupported(
            "transposed convolution (ConvTranspose) is not supported yet".into(),
        ));
    }
    let n = w.rank().saturating_sub(2);
    // conv1d/2d/3d accept unbatched input: add the batch dim and drop it at the end.
    let unbatched = x.rank() == n + 1;
    let x = if unbatched {
        let mut s = vec![1];
        s.extend_from_slice(x.shape());
        e.reshape(&x, &s)?
    } else {
        x
    };
    let strides = per_dim(op.ints_opt("stride"), n, 1);
    let dilation = per_dim(op.ints_opt("dilation"), n, 1);
    let groups = op.int_or("groups", 1);
    let padding: Vec<(i64, i64)> = match op.string_opt("padding") {
        Some("valid") => vec![(0, 0); n],
        Some("same") => (0..n)
            .map(|i| {
                let total = dilation[i] * (w.shape()[i + 2] - 1);
                (total / 2, total - total / 2)
            })
            .collect(),
        Some(other) => return Err(LowerError::Invalid(format!("unknown padding `{other}`"))),
        None => per_dim(op.ints_opt("padding"), n, 0)
            .into_iter()
            .map(|p| (p, p))
            .collect(),
    };
    let params = ConvParams {
        strides,
        padding,
        lhs_dilation: vec![1; n],
        rhs_dilation: dilation,
        feature_groups: groups,
    };
    let mut out = e.convolution(&x, &w, &params)?;
    if let Some(b) = op.tensor_opt("bias") {
        let b = e.convert(b, cd)?;
        let bb = e.broadcast_in_dim(&b, out.shape(), &[1])?;
        out = e.add(&out, &bb)?;
    }
    let out = e.convert(&out, ty.dtype)?;
    Ok(vec![e.reshape(&out, &ty.shape)?])
}
