//! Resizing: `upsample_nearest{1,2,3}d`, `_upsample_nearest_exact{1,2,3}d` and
//! `upsample_{linear1d,bilinear2d,trilinear3d}` (what `F.interpolate` exports to).
//!
//! Each spatial dim is resized by a constant `[out, in]` interpolation matrix built with
//! PyTorch's index formulas (in f32, as its CPU kernels compute them), applied with
//! [`super::pooling::apply_along`]. Separable, exact for nearest modes, and the same
//! weights as PyTorch for linear modes.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{Cmp, GatherDims};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::pooling::apply_along;
use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let b = op.base();
    if b == "aten.grid_sampler_2d" || b == "aten.grid_sampler" {
        return Some(grid_sample(op, e));
    }
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
    // Integer images (uint8) round to nearest after linear interpolation, as PyTorch.
    let cur = if !ty.dtype.is_float() && matches!(mode, Mode::Linear { .. }) {
        e.unary("stablehlo.round_nearest_even", &cur)?
    } else {
        cur
    };
    let out = e.convert(&cur, ty.dtype)?;
    Ok(vec![e.reshape(&out, &ty.shape)?])
}

/// Grid coordinate in [-1, 1] to pixel coordinate (`grid_sampler_unnormalize`).
fn unnormalize(e: &Emitter, g: &TValue, size: i64, align_corners: bool) -> LResult<TValue> {
    let c = |v: f64| e.constant(&g.ty, v);
    let one = c(1.0)?;
    Ok(if align_corners {
        e.mul(&e.add(g, &one)?, &c((size - 1) as f64 / 2.0)?)?
    } else {
        e.div(
            &e.sub(&e.mul(&e.add(g, &one)?, &c(size as f64)?)?, &one)?,
            &c(2.0)?,
        )?
    })
}

/// PyTorch's `reflect_coordinates`: reflect into [twice_low/2, twice_high/2].
fn reflect(e: &Emitter, x: &TValue, twice_low: i64, twice_high: i64) -> LResult<TValue> {
    let c = |v: f64| e.constant(&x.ty, v);
    if twice_low == twice_high {
        return Ok(c(0.0)?);
    }
    let min = twice_low as f64 / 2.0;
    let span = (twice_high - twice_low) as f64 / 2.0;
    let v = e.unary("stablehlo.abs", &e.sub(x, &c(min)?)?)?;
    let extra = e.binary("stablehlo.remainder", &v, &c(span)?)?;
    let flips = e.unary("stablehlo.floor", &e.div(&v, &c(span)?)?)?;
    let even = e.compare(
        Cmp::Eq,
        &e.binary("stablehlo.remainder", &flips, &c(2.0)?)?,
        &c(0.0)?,
    )?;
    let up = e.add(&extra, &c(min)?)?;
    let down = e.add(&e.sub(&c(span)?, &extra)?, &c(min)?)?;
    Ok(e.select(&even, &up, &down)?)
}

/// PyTorch's `compute_coordinates`: padding modes 1 (border) and 2 (reflection) move
/// the coordinate inside; 0 (zeros) leaves it (out-of-range taps read zero).
fn padded_coordinate(
    e: &Emitter,
    x: &TValue,
    size: i64,
    padding: i64,
    align_corners: bool,
) -> LResult<TValue> {
    let clip = |v: &TValue| -> LResult<TValue> {
        let lo = e.constant(&v.ty, 0.0)?;
        let hi = e.constant(&v.ty, (size - 1) as f64)?;
        Ok(e.min(&e.max(v, &lo)?, &hi)?)
    };
    match padding {
        1 => clip(x),
        2 => {
            let r = if align_corners {
                reflect(e, x, 0, 2 * (size - 1))?
            } else {
                reflect(e, x, -1, 2 * size - 1)?
            };
            clip(&r)
        }
        _ => Ok(x.clone()),
    }
}

/// Values of `input_t` ([N, H, W, C]) at integer-valued float coordinates `(x, y)`
/// ([N, Ho, Wo]), zero where the coordinate falls outside: [N, Ho, Wo, C].
fn tap(e: &Emitter, input_t: &TValue, x: &TValue, y: &TValue) -> LResult<TValue> {
    let (n, h, w, ch) = (
        input_t.shape()[0],
        input_t.shape()[1],
        input_t.shape()[2],
        input_t.shape()[3],
    );
    let zero = e.constant(&x.ty, 0.0)?;
    let inside = e.binary(
        "stablehlo.and",
        &e.binary(
            "stablehlo.and",
            &e.compare(Cmp::Ge, x, &zero)?,
            &e.compare(Cmp::Le, x, &e.constant(&x.ty, (w - 1) as f64)?)?,
        )?,
        &e.binary(
            "stablehlo.and",
            &e.compare(Cmp::Ge, y, &zero)?,
            &e.compare(Cmp::Le, y, &e.constant(&y.ty, (h - 1) as f64)?)?,
        )?,
    )?;
    let clamp_i = |v: &TValue, size: i64| -> LResult<TValue> {
        let lo = e.scalar(v.dtype(), 0.0)?;
        let hi = e.scalar(v.dtype(), (size - 1) as f64)?;
        Ok(e.convert(&e.clamp(&lo, v, &hi)?, DType::I64)?)
    };
    let xi = clamp_i(x, w)?;
    let yi = clamp_i(y, h)?;
    let shape = x.shape().to_vec();
    let ni = e.iota(&TensorType::new(shape.clone(), DType::I64), 0)?;
    let mut col = shape.clone();
    col.push(1);
    let parts = [
        e.reshape(&ni, &col)?,
        e.reshape(&yi, &col)?,
        e.reshape(&xi, &col)?,
    ];
    let refs: Vec<&TValue> = parts.iter().collect();
    let idx = e.concatenate(&refs, shape.len() as i64)?;
    let g = GatherDims {
        offset_dims: vec![3],
        collapsed_slice_dims: vec![0, 1, 2],
        start_index_map: vec![0, 1, 2],
        index_vector_dim: 3,
        slice_sizes: vec![1, 1, 1, ch],
    };
    let _ = n;
    let v = e.gather(input_t, &idx, &g)?;
    let mut full = shape.clone();
    full.push(ch);
    let mask = e.broadcast_in_dim(&e.convert(&inside, v.dtype())?, &full, &[0, 1, 2])?;
    Ok(e.mul(&v, &mask)?)
}

/// Cubic convolution weights of the 4 taps at fractional offset `t` (A = -0.75).
fn cubic_weights(e: &Emitter, t: &TValue) -> LResult<[TValue; 4]> {
    let a = -0.75;
    let c = |v: f64| e.constant(&t.ty, v);
    // conv1(x) = ((A + 2) x - (A + 3)) x^2 + 1; conv2(x) = ((A x - 5A) x + 8A) x - 4A
    let conv1 = |x: &TValue| -> LResult<TValue> {
        let p = e.sub(&e.mul(&c(a + 2.0)?, x)?, &c(a + 3.0)?)?;
        Ok(e.add(&e.mul(&e.mul(&p, x)?, x)?, &c(1.0)?)?)
    };
    let conv2 = |x: &TValue| -> LResult<TValue> {
        let p = e.sub(&e.mul(&c(a)?, x)?, &c(5.0 * a)?)?;
        let p = e.add(&e.mul(&p, x)?, &c(8.0 * a)?)?;
        Ok(e.sub(&e.mul(&p, x)?, &c(4.0 * a)?)?)
    };
    let one = c(1.0)?;
    Ok([
        conv2(&e.add(t, &one)?)?,
        conv1(t)?,
        conv1(&e.sub(&one, t)?)?,
        conv2(&e.sub(&c(2.0)?, t)?)?,
    ])
}

/// `grid_sampler_2d(input [N,C,H,W], grid [N,Ho,Wo,2], mode, padding_mode, align_corners)`
/// with PyTorch's formulas: bilinear (0), nearest (1, round half to even) and bicubic
/// (2); zeros (0), border (1) and reflection (2) padding.
fn grid_sample(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let input = op.tensor("input")?;
    let grid = op.tensor("grid")?;
    if input.rank() != 4 || grid.rank() != 4 || grid.shape()[3] != 2 {
        return Err(LowerError::Invalid(
            "grid_sampler_2d needs input [N,C,H,W] and grid [N,Ho,Wo,2]".into(),
        ));
    }
    let mode = op.int_or("interpolation_mode", 0);
    let padding = op.int_or("padding_mode", 0);
    let ac = op.bool_or("align_corners", false);
    // PyTorch's CPU kernel computes in the input's own dtype (half types included):
    // coordinates and weights round to it after every op, so do the same. For f16/bf16
    // the emitter makes each rounding explicit (f32 op, then convert; `rounds_result`),
    // which keeps XLA from fusing them away on hosts with native half arithmetic.
    let cd = ty.dtype;
    let x = e.convert(input, cd)?;
    let g = e.convert(grid, cd)?;
    let (n, h, w) = (x.shape()[0], x.shape()[2], x.shape()[3]);
    let (ho, wo) = (g.shape()[1], g.shape()[2]);
    let coord = |k: i64| -> LResult<TValue> {
        let s = e.slice(&g, &[0, 0, 0, k], &[n, ho, wo, k + 1], &[1, 1, 1, 1])?;
        Ok(e.reshape(&s, &[n, ho, wo])?)
    };
    let ix = unnormalize(e, &coord(0)?, w, ac)?;
    let iy = unnormalize(e, &coord(1)?, h, ac)?;
    let xt = e.transpose(&x, &[0, 2, 3, 1])?;
    let out = match mode {
        0 | 1 => {
            let ix = padded_coordinate(e, &ix, w, padding, ac)?;
            let iy = padded_coordinate(e, &iy, h, padding, ac)?;
            if mode == 1 {
                let xr = e.unary("stablehlo.round_nearest_even", &ix)?;
                let yr = e.unary("stablehlo.round_nearest_even", &iy)?;
                tap(e, &xt, &xr, &yr)?
            } else {
                let x0 = e.unary("stablehlo.floor", &ix)?;
                let y0 = e.unary("stablehlo.floor", &iy)?;
                let one = e.constant(&x0.ty, 1.0)?;
                let (x1, y1) = (e.add(&x0, &one)?, e.add(&y0, &one)?);
                let (tx, ty_) = (e.sub(&ix, &x0)?, e.sub(&iy, &y0)?);
                let (sx, sy) = (e.sub(&one, &tx)?, e.sub(&one, &ty_)?);
                let mut acc: Option<TValue> = None;
                for (xx, yy, wgt) in [
                    (&x0, &y0, e.mul(&sx, &sy)?),
                    (&x1, &y0, e.mul(&tx, &sy)?),
                    (&x0, &y1, e.mul(&sx, &ty_)?),
                    (&x1, &y1, e.mul(&tx, &ty_)?),
                ] {
                    let v = tap(e, &xt, xx, yy)?;
                    let wb = e.broadcast_in_dim(&wgt, v.shape(), &[0, 1, 2])?;
                    let term = e.mul(&v, &wb)?;
                    acc = Some(match acc {
                        None => term,
                        Some(a) => e.add(&a, &term)?,
                    });
                }
                acc.ok_or_else(|| LowerError::Invalid("empty bilinear sum".into()))?
            }
        }
        2 => {
            let x0 = e.unary("stablehlo.floor", &ix)?;
            let y0 = e.unary("stablehlo.floor", &iy)?;
            let cx = cubic_weights(e, &e.sub(&ix, &x0)?)?;
            let cy = cubic_weights(e, &e.sub(&iy, &y0)?)?;
            let mut acc: Option<TValue> = None;
            for (j, wy) in cy.iter().enumerate() {
                let yy = e.add(&y0, &e.constant(&y0.ty, j as f64 - 1.0)?)?;
                let yy = padded_coordinate(e, &yy, h, padding, ac)?;
                for (i, wx) in cx.iter().enumerate() {
                    let xx = e.add(&x0, &e.constant(&x0.ty, i as f64 - 1.0)?)?;
                    let xx = padded_coordinate(e, &xx, w, padding, ac)?;
                    // Taps are read at the truncated padded coordinate, as PyTorch does.
                    let xx = e.convert(&e.convert(&xx, DType::I64)?, cd)?;
                    let yy = e.convert(&e.convert(&yy, DType::I64)?, cd)?;
                    let v = tap(e, &xt, &xx, &yy)?;
                    let wgt = e.mul(wx, wy)?;
                    let term = e.mul(&v, &e.broadcast_in_dim(&wgt, v.shape(), &[0, 1, 2])?)?;
                    acc = Some(match acc {
                        None => term,
                        Some(a) => e.add(&a, &term)?,
                    });
                }
            }
            acc.ok_or_else(|| LowerError::Invalid("empty bicubic sum".into()))?
        }
        other => {
            return Err(LowerError::Invalid(format!(
                "unknown interpolation mode {other}"
            )))
        }
    };
    let out = e.transpose(&out, &[0, 3, 1, 2])?;
    Ok(vec![e.convert(&out, ty.dtype)?])
}
