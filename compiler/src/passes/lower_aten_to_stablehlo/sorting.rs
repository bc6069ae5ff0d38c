//! Sorting: `sort` (and `sort.stable`), `argsort`, `topk`, `kthvalue`-free: everything
//! goes through one stable `stablehlo.sort` of (values, indices) along a dim.
//!
//! Order follows PyTorch: ascending puts NaN last, descending puts NaN first; ties keep
//! their original order (stable), so indices of equal values ascend.

use tpuc_artifact::DType;
use tpuc_dialects::{Emitter, TValue};

use super::op::norm_dim;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.sort" => sort(op, e, false),
        "aten.argsort" => sort(op, e, true),
        "aten.topk" => topk(op, e),
        _ => return None,
    };
    Some(r)
}

/// Sorts `x` along `dim`, returning (values, i64 indices).
fn sort_with_indices(
    e: &Emitter,
    x: &TValue,
    dim: i64,
    descending: bool,
) -> LResult<(TValue, TValue)> {
    if x.rank() == 0 {
        let zero = e.constant(&x.ty.with_dtype(DType::I64), 0.0)?;
        return Ok((x.clone(), zero));
    }
    let idx = e.iota(&x.ty.with_dtype(DType::I64), dim)?;
    let mut v = e.sort(&[x, &idx], dim, descending)?;
    let i = v
        .pop()
        .ok_or_else(|| LowerError::Invalid("sort lost its indices".into()))?;
    let s = v
        .pop()
        .ok_or_else(|| LowerError::Invalid("sort lost its values".into()))?;
    Ok((s, i))
}

fn sort(op: &AtenOp, e: &Emitter, indices_only: bool) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dim = norm_dim(op.int_or("dim", -1), x.rank())?;
    let descending = op.bool_or("descending", false);
    let (values, indices) = sort_with_indices(e, x, dim, descending)?;
    if indices_only {
        return Ok(vec![indices]);
    }
    Ok(vec![values, indices])
}

fn topk(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let dim = norm_dim(op.int_or("dim", -1), x.rank())?;
    let k = op.int("k")?;
    let largest = op.bool_or("largest", true);
    let (values, indices) = sort_with_indices(e, x, dim, largest)?;
    if x.rank() == 0 {
        return Ok(vec![values, indices]);
    }
    let d = dim as usize;
    if k < 0 || k > x.shape()[d] {
        return Err(LowerError::Invalid(format!(
            "k={k} out of range for a dim of size {}",
            x.shape()[d]
        )));
    }
    let start = vec![0; x.rank()];
    let mut limit = x.shape().to_vec();
    limit[d] = k;
    let ones = vec![1; x.rank()];
    Ok(vec![
        e.slice(&values, &start, &limit, &ones)?,
        e.slice(&indices, &start, &limit, &ones)?,
    ])
}
