//! Resizing: `upsample_nearest{1,2,3}d`, `_upsample_nearest_exact{1,2,3}d` and
//! `upsample_{linear1d,bilinear2d,trilinear3d}` (what `F.interpolate` exports to).
//!
//! Each spatial dim is resized by a constant `[out, in]` interpolation matrix built with
//! PyTorch's index formulas (in f32, as its CPU kernels compute them), applied with
//! [`super::pooling::apply_along`]. Separable, exact for nearest modes, and the same
//! weights as PyTorch for linear modes.

use tpuc_dialects::{Emitter, TValue};
use tpuc_runtime::DType;

use super::pooling::apply_along;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let b = op.base();
    let mode = if b.starts_with("aten._upsample_nearest_exact") {
        Mode::NearestExact
    } else if b.starts_with("aten.upsample_nearest") {
        Mode::Nearest
    } else if b.starts_with("aten.upsample_linear1d")
        || b.starts_with("aten.upsample_bilinear2d")
        || b.starts_with("aten.upsample_trilinear3d")
    {
        Mode::Linear {
            align_corners: op.bool_or("align_corners", false),
        }
    } else {
        return None;
    };
    Some(resize(op, e, mode))
}

#[derive(Clone, Copy)]
enum Mode {
    Nearest,
    NearestExact,
    Linear { align_corners: bool },
}

/// The scale PyTorch maps output indices to input indices with
/// (`area_pixel_compute_scale`): a user scale factor wins, else `in / out`.
fn scale(input: i64, output: i64, align_corners: bool, factor: Option<f64>) -> f32 {
    if align_corners {
        return if output > 1 {
            (input - 1) as f32 / (output - 1) as f32
        } else {
            0.0
        };
    }
    match factor {
        Some(f) if f > 0.0 => (1.0 / f) as f32,
        _ => input as f32 / output as f32,
    }
}

fn matrix(mode: Mode, input: i64, output: i64, factor: Option<f64>) -> Vec<f64> {
    let mut m = vec![0.0; (output * input) as usize];
    let last = input - 1;
    for dst in 0..output {
        let row = (dst * input) as usize;
        match mode {
            Mode::Nearest | Mode::NearestExact => {
                let s = scale(input, output, false, factor);
                let offset = if matches!(mode, Mode::NearestExact) {
                    0.5
                } else {
                    0.0
                };
                let src = (((dst as f32 + offset) * s).floor() as i64).min(last);
                m[row + src as usize] = 1.0;
            }
            Mode::Linear { align_corners } => {
                let s = scale(input, output, align_corners, factor);
                let src = if align_corners {
                    s * dst as f32
                } else {
                    (s * (dst as f32 + 0.5) - 0.5).max(0.0)
                };
                let i0 = (src as i64).min(last);
                let i1 = if i0 < last { i0 + 1 } else { i0 };
                let l1 = src - i0 as f32;
                let l0 = 1.0 - l1;
                m[row + i0 as usize] += l0 as f64;
                m[row + i1 as usize] += l1 as f64;
            }
        }
    }
    m
}

fn resize(op: &AtenOp, e: &Emitter, mode: Mode) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    let b = op.base();
    let n = if b.ends_with("1d") {
        1
    } else if b.ends_with("3d") {
        3
    } else {
        2
    };
    if x.rank() != n + 2 || ty.rank() != n + 2 {
        return Err(LowerError::Invalid(format!(
            "expected an input of rank {}, got {}",
            n + 2,
            x.ty
        )));
    }
    // Scale factors: `scale_factors` (the .vec overloads) or scales_h/scales_w/...
    let factors: Vec<Option<f64>> = match op.attr("scale_factors") {
        Some(super::op::AttrValue::Floats(v)) if v.len() == n => {
            v.iter().map(|f| Some(*f)).collect()
        }
        _ => {
            let names: &[&str] = match n {
                1 => &["scales"],
                2 => &["scales_h", "scales_w"],
                _ => &["scales_d", "scales_h", "scales_w"],
            };
            names.iter().map(|name| op.number_opt(name)).collect()
        }
    };
    let compute = if x.dtype() == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let mut cur = e.convert(x, compute)?;
    for (i, factor) in factors.iter().enumerate() {
        let dim = (2 + i) as i64;
        let (input, output) = (x.shape()[2 + i], ty.shape[2 + i]);
        if input == output && factor.is_none_or(|f| f == 1.0) {
            continue;
        }
        cur = apply_along(e, &cur, dim, &matrix(mode, input, output, *factor), output)?;
    }
    // Nearest modes copy values: exact in any dtype after the round trip through f32
    // (ints beyond 2^24 would not be; PyTorch has no integer interpolation).
    let out = e.convert(&cur, ty.dtype)?;
    Ok(vec![e.reshape(&out, &ty.shape)?])
}
