//! Tensor creation: `arange`, `full`/`zeros`/`ones` (and their `_like`/`new_`
//! forms), `scalar_tensor`, `eye`, and the `triu`/`tril` and `one_hot` masks built
//! from iotas.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::Cmp;
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::elementwise::{splat, to_type};
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let r = match op.base() {
        "aten.arange" => arange(op, e),
        "aten.linspace" => linspace(op, e),
        "aten.full" | "aten.full_like" | "aten.new_full" => fill(op, e, None),
        "aten.zeros"
        | "aten.zeros_like"
        | "aten.new_zeros"
        | "aten.empty"
        | "aten.empty_like"
        | "aten.new_empty"
        | "aten.empty_strided"
        | "aten.new_empty_strided"
        | "aten.empty_permuted" => fill(op, e, Some(0.0)),
        "aten.ones" | "aten.ones_like" | "aten.new_ones" => fill(op, e, Some(1.0)),
        "aten.zero" => fill(op, e, Some(0.0)),
        "aten.scalar_tensor" => fill(op, e, None),
        "aten.eye" => eye(op, e),
        "aten.triu" | "aten.tril" => tri(op, e),
        "aten.one_hot" => one_hot(op, e),
        _ => return None,
    };
    Some(r)
}

fn fill(op: &AtenOp, e: &Emitter, value: Option<f64>) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let v = match value {
        Some(v) => v,
        None => {
            if let Some(t) = op.tensor_opt("fill_value") {
                return Ok(vec![to_type(e, t, ty)?]);
            }
            op.number_opt("fill_value")
                .or(op.number_opt("s"))
                .ok_or_else(|| LowerError::Invalid("missing fill value".into()))?
        }
    };
    let v = if ty.dtype.is_float() || ty.dtype == DType::Bool {
        v
    } else {
        v.trunc()
    };
    Ok(vec![splat(e, ty, v)?])
}

/// `start + step * iota`, in i64 for integer results, f64 for f64 and f32 otherwise
/// (TPUs have no f64; f32 is exact for the indices of any practical range).
fn arange(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    if ty.rank() != 1 {
        return Err(LowerError::Invalid(
            "arange must produce a 1-D tensor".into(),
        ));
    }
    let start = op.number_or("start", 0.0);
    let step = op.number_or("step", 1.0);
    let all_int = !ty.dtype.is_float();
    let compute = match ty.dtype {
        _ if all_int => DType::I64,
        DType::F64 => DType::F64,
        _ => DType::F32,
    };
    let it = TensorType::new(ty.shape.clone(), compute);
    let i = e.iota(&it, 0)?;
    let v = e.add(&e.mul(&i, &splat(e, &it, step)?)?, &splat(e, &it, start)?)?;
    Ok(vec![e.convert(&v, ty.dtype)?])
}

fn eye(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let it = ty.with_dtype(DType::I64);
    let rows = e.iota(&it, 0)?;
    let cols = e.iota(&it, 1)?;
    let eq = e.compare(Cmp::Eq, &rows, &cols)?;
    Ok(vec![e.convert(&eq, ty.dtype)?])
}

/// Keeps elements on and above (`triu`) or below (`tril`) the `diagonal`-th diagonal of
/// the last two dims.
fn tri(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    let r = x.rank();
    if r < 2 {
        return Err(LowerError::Invalid("triu/tril need at least 2 dims".into()));
    }
    let k = op.int_or("diagonal", 0);
    let it = TensorType::new(x.shape()[r - 2..].to_vec(), DType::I64);
    let rows = e.iota(&it, 0)?;
    let cols = e.iota(&it, 1)?;
    let diff = e.sub(&cols, &rows)?;
    let kk = splat(e, &it, k as f64)?;
    let keep = if op.base() == "aten.triu" {
        e.compare(Cmp::Ge, &diff, &kk)?
    } else {
        e.compare(Cmp::Le, &diff, &kk)?
    };
    let keep = e.broadcast_to(&keep, x.shape())?;
    let zero = splat(e, &x.ty, 0.0)?;
    let out = e.select(&keep, x, &zero)?;
    Ok(vec![to_type(e, &out, ty)?])
}

/// `one_hot(x, num_classes)`: `x[..., None] == arange(num_classes)`, as the result's
/// integer type. With `num_classes=-1` PyTorch counts `max(x) + 1` classes, a size that
/// depends on the values: the exporter has fixed it in the result's type, which is what
/// the iota runs over (a value at or beyond it gives a row of zeros where PyTorch raises).
fn one_hot(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.tensor("self")?;
    let r = ty.rank();
    if r == 0 || x.shape() != &ty.shape[..r - 1] {
        return Err(LowerError::Invalid(
            "one_hot's result must be its input's shape plus the classes".into(),
        ));
    }
    let it = TensorType::new(ty.shape.clone(), DType::I64);
    let xi = e.convert(x, DType::I64)?;
    let dims: Vec<i64> = (0..r as i64 - 1).collect();
    let xb = e.broadcast_in_dim(&xi, &ty.shape, &dims)?;
    let classes = e.iota(&it, r as i64 - 1)?;
    let hit = e.compare(Cmp::Eq, &xb, &classes)?;
    Ok(vec![e.convert(&hit, ty.dtype)?])
}

/// `linspace(start, end, steps)` with PyTorch's symmetric formula: the first half counts
/// up from `start`, the second half down from `end`, so both ends are exact.
fn linspace(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let steps = op.int("steps")?;
    let start = op.number_or("start", 0.0);
    let end = op.number_or("end", 0.0);
    if ty.rank() != 1 || ty.shape[0] != steps {
        return Err(LowerError::Invalid(
            "linspace result must have `steps` elements".into(),
        ));
    }
    if steps <= 1 {
        return Ok(vec![splat(e, ty, start)?]);
    }
    let cd = if ty.dtype == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let ct = ty.with_dtype(cd);
    let step = (end - start) / (steps - 1) as f64;
    let i = e.iota(&ct, 0)?;
    let up = e.add(&splat(e, &ct, start)?, &e.mul(&i, &splat(e, &ct, step)?)?)?;
    let from_end = e.sub(&splat(e, &ct, (steps - 1) as f64)?, &i)?;
    let down = e.sub(
        &splat(e, &ct, end)?,
        &e.mul(&from_end, &splat(e, &ct, step)?)?,
    )?;
    let first_half = e.compare(Cmp::Lt, &i, &splat(e, &ct, (steps / 2) as f64)?)?;
    let v = e.select(&first_half, &up, &down)?;
    Ok(vec![e.convert(&v, ty.dtype)?])
}
