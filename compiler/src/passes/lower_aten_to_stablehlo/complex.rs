//! Complex numbers (`complex64`, `complex128`): building and taking apart complex
//! tensors (`view_as_complex`, `view_as_real`, `complex`, `polar`, `real`, `imag`,
//! `conj`), `abs`/`angle` of complex values, and the FFT family (`_fft_r2c`,
//! `_fft_c2r`, `_fft_c2c`) on `stablehlo.fft`.
//!
//! Complex values reach other families only through the ops of [`ACCEPTS_COMPLEX`],
//! whose lowerings are element-type generic (arithmetic, `exp`, layout changes); every
//! other op meeting a complex operand or result is refused by [`refuse_complex`] rather
//! than lowered by code written for real numbers.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::FftKind;
use tpuc_dialects::{Emitter, TValue};

use super::elementwise::splat;
use super::op::norm_dim;
use super::{AtenOp, LResult, LowerError};

/// Ops of the other families that are correct on complex values as they are: StableHLO
/// arithmetic and these transcendental functions are defined on complex numbers, and
/// layout ops never look at the elements.
const ACCEPTS_COMPLEX: &[&str] = &[
    // elementwise arithmetic (complex semantics in StableHLO)
    "aten.add",
    "aten.sub",
    "aten.rsub",
    "aten.mul",
    "aten.multiply",
    "aten.div",
    "aten.neg",
    "aten.reciprocal",
    "aten.square",
    "aten.exp",
    "aten.log",
    "aten.sqrt",
    "aten.rsqrt",
    "aten.sin",
    "aten.cos",
    "aten.tanh",
    // pass-throughs
    "aten._assert_tensor_metadata",
    "aten.clone",
    "aten.contiguous",
    "aten.alias",
    "aten.detach",
    "aten.lift_fresh_copy",
    "aten.alias_copy",
    "aten.detach_copy",
    "aten.positive",
    // layout
    "aten.view",
    "aten.reshape",
    "aten._unsafe_view",
    "aten.view_copy",
    "aten.unsqueeze",
    "aten.unsqueeze_copy",
    "aten.squeeze",
    "aten.squeeze_copy",
    "aten.permute",
    "aten.permute_copy",
    "aten.transpose",
    "aten.transpose_copy",
    "aten.t",
    "aten.expand",
    "aten.expand_copy",
    "aten.slice",
    "aten.slice_copy",
    "aten.select",
    "aten.select_copy",
    "aten.narrow",
    "aten.cat",
    "aten.stack",
    "aten.flatten",
    "aten.unflatten",
    "aten.split",
    "aten.split_with_sizes",
    "aten.chunk",
    "aten.unbind",
    "aten.movedim",
];

/// Refuses `op` when a complex value meets an op whose lowering is not known to be
/// right for complex numbers (see the module documentation).
pub fn refuse_complex(op: &AtenOp) -> LResult<()> {
    let complex_in = op.operand_types().any(|t| t.dtype.is_complex());
    let complex_out = op.results.iter().any(|t| t.dtype.is_complex());
    if !(complex_in || complex_out) || handles(op.base()) {
        return Ok(());
    }
    let base = op.base();
    let conversion = matches!(
        base,
        "aten._to_copy" | "aten.to" | "aten.type_as" | "aten._to_dim_order_copy"
    );
    if conversion && (complex_out || !complex_in) {
        // real -> complex (imaginary part 0) and complex -> complex are exact.
        return Ok(());
    }
    if ACCEPTS_COMPLEX.contains(&base) {
        return Ok(());
    }
    Err(LowerError::Unsupported(if conversion {
        "converting complex values to a real dtype (PyTorch discards the imaginary part \
         with a warning) is not supported by tpuc; take torch.real() explicitly"
            .to_string()
    } else {
        format!(
            "`{}` on complex values is not supported by tpuc (complex support covers \
             arithmetic, exp/log/sqrt/sin/cos/tanh, layout ops, view_as_complex/view_as_real, \
             polar, real/imag/conj, abs/angle and the FFTs)",
            op.target
        )
    }))
}

fn handles(base: &str) -> bool {
    matches!(
        base,
        "aten.view_as_complex"
            | "aten.view_as_real"
            | "aten.complex"
            | "aten.polar"
            | "aten.real"
            | "aten.imag"
            | "aten.conj"
            | "aten._conj"
            | "aten.conj_physical"
            | "aten.resolve_conj"
            | "aten.resolve_neg"
            | "aten.abs"
            | "aten.angle"
            | "aten._fft_r2c"
            | "aten._fft_c2r"
            | "aten._fft_c2c"
    ) || fft_composite_kind(base).is_some()
}

/// The `torch.fft` functions pre-decomposition graphs keep: (transform, rank) where
/// rank is 1 (`dim`, `n`), 2 (`dim` defaulting to the last two, `s`) or 0 for n-d.
#[derive(Clone, Copy, PartialEq)]
enum Transform {
    Forward,
    Inverse,
    RealForward,
    RealInverse,
}

fn fft_composite_kind(base: &str) -> Option<(Transform, usize)> {
    use Transform::*;
    Some(match base {
        "aten.fft_fft" => (Forward, 1),
        "aten.fft_ifft" => (Inverse, 1),
        "aten.fft_rfft" => (RealForward, 1),
        "aten.fft_irfft" => (RealInverse, 1),
        "aten.fft_fft2" => (Forward, 2),
        "aten.fft_ifft2" => (Inverse, 2),
        "aten.fft_rfft2" => (RealForward, 2),
        "aten.fft_irfft2" => (RealInverse, 2),
        "aten.fft_fftn" => (Forward, 0),
        "aten.fft_ifftn" => (Inverse, 0),
        "aten.fft_rfftn" => (RealForward, 0),
        "aten.fft_irfftn" => (RealInverse, 0),
        _ => return None,
    })
}

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let base = op.base();
    if !handles(base) {
        return None;
    }
    let x = match op.first_tensor() {
        Ok(x) => x,
        Err(err) => return Some(Err(err)),
    };
    let complex_in = x.dtype().is_complex();
    let r = match base {
        // On real tensors these are identities (or not ours: `abs` of reals).
        "aten.abs" if !complex_in => return None,
        "aten.real" | "aten.conj" | "aten._conj" | "aten.conj_physical" | "aten.resolve_conj"
        | "aten.resolve_neg"
            if !complex_in =>
        {
            Ok(vec![x.clone()])
        }
        "aten.view_as_complex" => view_as_complex(e, x),
        "aten.view_as_real" => view_as_real(e, x),
        "aten.complex" => op.tensor("imag").and_then(|im| Ok(vec![e.complex(x, im)?])),
        "aten.polar" => polar(op, e, x),
        "aten.real" => part(e, x, false),
        "aten.imag" => part(e, x, true),
        "aten.conj" | "aten._conj" | "aten.conj_physical" => conj(e, x),
        // The conjugate/negative bits are already applied by the ops above.
        "aten.resolve_conj" | "aten.resolve_neg" => Ok(vec![x.clone()]),
        "aten.abs" => e.complex_abs(x).map(|a| vec![a]).map_err(LowerError::from),
        "aten.angle" => angle(e, x),
        "aten._fft_r2c" => fft_r2c(op, e, x),
        "aten._fft_c2r" => fft_c2r(op, e, x),
        "aten._fft_c2c" => fft_c2c(op, e, x),
        _ => match fft_composite_kind(base) {
            Some((kind, rank)) => fft_composite(op, e, x, kind, rank),
            None => return None,
        },
    };
    Some(r)
}

fn need_complex(x: &TValue, what: &str) -> LResult<()> {
    if x.dtype().is_complex() {
        Ok(())
    } else {
        Err(LowerError::Invalid(format!(
            "{what} needs a complex tensor, not {}",
            x.ty
        )))
    }
}

/// `x[..., 0] + i * x[..., 1]`: the last dimension (2) holds the parts.
fn view_as_complex(e: &Emitter, x: &TValue) -> LResult<Vec<TValue>> {
    let r = x.rank();
    if r == 0 || x.ty.shape[r - 1] != 2 || x.dtype().complex_of().is_none() {
        return Err(LowerError::Invalid(format!(
            "view_as_complex needs an f32 or f64 tensor whose last dimension is 2, not {}",
            x.ty
        )));
    }
    let shape = x.ty.shape[..r - 1].to_vec();
    let re = e.reshape(&e.slice_in_dim(x, r - 1, 0, 1, 1)?, &shape)?;
    let im = e.reshape(&e.slice_in_dim(x, r - 1, 1, 2, 1)?, &shape)?;
    Ok(vec![e.complex(&re, &im)?])
}

/// The parts stacked in a new last dimension.
fn view_as_real(e: &Emitter, x: &TValue) -> LResult<Vec<TValue>> {
    need_complex(x, "view_as_real")?;
    let mut shape = x.ty.shape.clone();
    shape.push(1);
    let re = e.reshape(&e.complex_part(x, false)?, &shape)?;
    let im = e.reshape(&e.complex_part(x, true)?, &shape)?;
    Ok(vec![e.concatenate(&[&re, &im], x.rank() as i64)?])
}

fn part(e: &Emitter, x: &TValue, imaginary: bool) -> LResult<Vec<TValue>> {
    Ok(vec![e.complex_part(x, imaginary)?])
}

fn conj(e: &Emitter, x: &TValue) -> LResult<Vec<TValue>> {
    let re = e.complex_part(x, false)?;
    let im = e.unary("stablehlo.negate", &e.complex_part(x, true)?)?;
    Ok(vec![e.complex(&re, &im)?])
}

/// `abs * (cos(angle) + i sin(angle))`.
fn polar(op: &AtenOp, e: &Emitter, abs: &TValue) -> LResult<Vec<TValue>> {
    let angle = op.tensor("angle")?;
    let ty = op.result(0)?;
    let part_ty = ty.with_dtype(ty.dtype.complex_part());
    if !ty.dtype.is_complex() {
        return Err(LowerError::Invalid(format!(
            "polar's result {ty} is not complex"
        )));
    }
    let abs = e.broadcast_to(&e.convert(abs, part_ty.dtype)?, &part_ty.shape)?;
    let angle = e.broadcast_to(&e.convert(angle, part_ty.dtype)?, &part_ty.shape)?;
    let re = e.mul(&abs, &e.unary("stablehlo.cosine", &angle)?)?;
    let im = e.mul(&abs, &e.unary("stablehlo.sine", &angle)?)?;
    Ok(vec![e.complex(&re, &im)?])
}

fn angle(e: &Emitter, x: &TValue) -> LResult<Vec<TValue>> {
    let re = e.complex_part(x, false)?;
    let im = e.complex_part(x, true)?;
    Ok(vec![e.binary("stablehlo.atan2", &im, &re)?])
}

/// The FFT dims of `op` (normalized, in the op's order), checked: 1 to 3 distinct dims.
fn fft_dims(op: &AtenOp, rank: usize) -> LResult<Vec<usize>> {
    let dims = op
        .ints("dim")?
        .into_iter()
        .map(|d| norm_dim(d, rank).map(|d| d as usize))
        .collect::<LResult<Vec<_>>>()?;
    let mut sorted = dims.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if dims.is_empty() || sorted.len() != dims.len() {
        return Err(LowerError::Invalid(format!("bad FFT dims {dims:?}")));
    }
    if dims.len() > 3 {
        return Err(LowerError::Unsupported(format!(
            "an FFT over {} dimensions (stablehlo.fft transforms at most 3; split the \
             transform into several calls)",
            dims.len()
        )));
    }
    Ok(dims)
}

/// The permutation moving `dims` (in order) to the end, the others keeping their order.
fn to_end(rank: usize, dims: &[usize]) -> Vec<i64> {
    (0..rank)
        .filter(|d| !dims.contains(d))
        .chain(dims.iter().copied())
        .map(|d| d as i64)
        .collect()
}

fn inverse(perm: &[i64]) -> Vec<i64> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as i64;
    }
    inv
}

/// Runs `stablehlo.fft` of `kind` over `dims` of `x` (transposed to the end and back).
fn fft_over(
    e: &Emitter,
    x: &TValue,
    dims: &[usize],
    kind: FftKind,
    lengths: &[i64],
) -> LResult<TValue> {
    let perm = to_end(x.rank(), dims);
    let moved = e.transpose(x, &perm)?;
    let y = e.fft(&moved, kind, lengths)?;
    Ok(e.transpose(&y, &inverse(&perm))?)
}

/// Multiplies by `factor` unless it is 1 (a real factor, also for complex values).
fn scale(e: &Emitter, x: &TValue, factor: f64) -> LResult<TValue> {
    if factor == 1.0 {
        return Ok(x.clone());
    }
    Ok(e.mul(x, &splat(e, &x.ty, factor)?)?)
}

/// PyTorch's `normalization` argument: 0 none, 1 1/sqrt(n), 2 1/n. Returns the factor
/// to apply to a transform that computed `computed_scale` (1 for the forward
/// transforms, 1/n for XLA's inverse ones) to get PyTorch's.
fn norm_factor(op: &AtenOp, n: i64, computed_scale: f64) -> LResult<f64> {
    let n = n as f64;
    let want = match op.int("normalization")? {
        0 => 1.0,
        1 => 1.0 / n.sqrt(),
        2 => 1.0 / n,
        other => {
            return Err(LowerError::Invalid(format!(
                "unknown FFT normalization {other}"
            )))
        }
    };
    Ok(want / computed_scale)
}

fn signal_lengths(shape: &[i64], dims: &[usize]) -> Vec<i64> {
    dims.iter().map(|&d| shape[d]).collect()
}

/// `_fft_r2c(self, dim, normalization, onesided)`: real -> complex, forward.
fn fft_r2c(op: &AtenOp, e: &Emitter, x: &TValue) -> LResult<Vec<TValue>> {
    let Some(c) = x.dtype().complex_of() else {
        return Err(LowerError::Unsupported(format!(
            "_fft_r2c of {} (f32 or f64 only)",
            x.ty
        )));
    };
    let dims = fft_dims(op, x.rank())?;
    let lengths = signal_lengths(&x.ty.shape, &dims);
    let n: i64 = lengths.iter().product();
    let y = if op.bool_or("onesided", true) {
        fft_over(e, x, &dims, FftKind::Rfft, &lengths)?
    } else {
        fft_over(e, &e.convert(x, c)?, &dims, FftKind::Fft, &lengths)?
    };
    Ok(vec![scale(e, &y, norm_factor(op, n, 1.0)?)?])
}

/// `_fft_c2c(self, dim, normalization, forward)`.
fn fft_c2c(op: &AtenOp, e: &Emitter, x: &TValue) -> LResult<Vec<TValue>> {
    need_complex(x, "_fft_c2c")?;
    let dims = fft_dims(op, x.rank())?;
    let lengths = signal_lengths(&x.ty.shape, &dims);
    let n: i64 = lengths.iter().product();
    let forward = op.bool_or("forward", true);
    let (kind, computed) = if forward {
        (FftKind::Fft, 1.0)
    } else {
        (FftKind::Ifft, 1.0 / n as f64)
    };
    let y = fft_over(e, x, &dims, kind, &lengths)?;
    Ok(vec![scale(e, &y, norm_factor(op, n, computed)?)?])
}

/// `_fft_c2r(self, dim, normalization, last_dim_size)`: the inverse of a one-sided
/// transform; the last of `dim` has `last_dim_size` outputs and reads the first
/// `last_dim_size / 2 + 1` inputs.
fn fft_c2r(op: &AtenOp, e: &Emitter, x: &TValue) -> LResult<Vec<TValue>> {
    need_complex(x, "_fft_c2r")?;
    let dims = fft_dims(op, x.rank())?;
    let last_size = op.int("last_dim_size")?;
    let &last = dims.last().expect("fft_dims is never empty");
    let half = last_size / 2 + 1;
    if last_size < 1 || x.ty.shape[last] < half {
        return Err(LowerError::Invalid(format!(
            "_fft_c2r to {last_size} outputs needs at least {half} inputs in dim {last}, not {}",
            x.ty
        )));
    }
    let x = e.slice_in_dim(x, last, 0, half, 1)?;
    let mut lengths = signal_lengths(&x.ty.shape, &dims);
    *lengths.last_mut().expect("non-empty") = last_size;
    let n: i64 = lengths.iter().product();
    let y = fft_over(e, &x, &dims, FftKind::Irfft, &lengths)?;
    Ok(vec![scale(e, &y, norm_factor(op, n, 1.0 / n as f64)?)?])
}

/// Zero-pads or trims `x` along `dim` to `size` (what `n`/`s` of `torch.fft` do).
fn resize_dim(e: &Emitter, x: &TValue, dim: usize, size: i64) -> LResult<TValue> {
    let have = x.ty.shape[dim];
    if size == have {
        return Ok(x.clone());
    }
    if size < have {
        return Ok(e.slice_in_dim(x, dim, 0, size, 1)?);
    }
    let mut high = vec![0; x.rank()];
    high[dim] = size - have;
    let zero = e.scalar(x.dtype(), 0.0)?;
    Ok(e.pad(x, &zero, &vec![0; x.rank()], &high, &vec![0; x.rank()])?)
}

/// `torch.fft.{fft,ifft,rfft,irfft}{,2,n}` as kept by pre-decomposition graphs, with
/// their `n`/`s` (zero-padding or trimming the input), `dim` and `norm` ("backward":
/// inverse scaled by 1/n, "ortho": both by 1/sqrt(n), "forward": forward by 1/n).
fn fft_composite(
    op: &AtenOp,
    e: &Emitter,
    x: &TValue,
    kind: Transform,
    rank: usize,
) -> LResult<Vec<TValue>> {
    let r = x.rank();
    let sizes: Option<Vec<i64>> = if rank == 1 {
        op.int_opt("n").map(|n| vec![n])
    } else {
        op.ints_opt("s")
    };
    let dims: Vec<i64> = match rank {
        1 => vec![op.int_or("dim", -1)],
        _ => match op.ints_opt("dim") {
            Some(d) => d,
            None if rank == 2 => vec![-2, -1],
            // n-d without dim: the last len(s) dims, or all of them.
            None => {
                let k = sizes.as_ref().map_or(r, Vec::len);
                (r as i64 - k as i64..r as i64).collect()
            }
        },
    };
    let dims = dims
        .into_iter()
        .map(|d| norm_dim(d, r).map(|d| d as usize))
        .collect::<LResult<Vec<_>>>()?;
    if let Some(s) = &sizes {
        if s.len() != dims.len() || s.iter().any(|&n| n < 1) {
            return Err(LowerError::Invalid(format!(
                "FFT sizes {s:?} do not fit dims {dims:?}"
            )));
        }
    }
    let mut x = x.clone();
    if kind == Transform::RealForward && x.dtype().is_complex() {
        return Err(LowerError::Invalid("rfft of a complex tensor".into()));
    }
    if kind != Transform::RealForward {
        let c = if x.dtype().is_complex() {
            x.dtype()
        } else {
            accumulator_complex(x.dtype())?
        };
        x = e.convert(&x, c)?;
    } else if x.dtype().complex_of().is_none() {
        x = e.convert(&x, DType::F32)?;
    }
    // Output sizes of the transform along each dim.
    let last = dims.len() - 1;
    let out_sizes: Vec<i64> = dims
        .iter()
        .enumerate()
        .map(|(i, &d)| match &sizes {
            Some(s) => s[i],
            None if kind == Transform::RealInverse && i == last => 2 * (x.ty.shape[d] - 1),
            None => x.ty.shape[d],
        })
        .collect();
    if out_sizes.iter().any(|&n| n < 1) {
        return Err(LowerError::Invalid(format!(
            "FFT output sizes {out_sizes:?}"
        )));
    }
    for (i, &d) in dims.iter().enumerate() {
        let want = if kind == Transform::RealInverse && i == last {
            out_sizes[i] / 2 + 1
        } else {
            out_sizes[i]
        };
        x = resize_dim(e, &x, d, want)?;
    }
    let n: i64 = out_sizes.iter().product();
    let nf = n as f64;
    let norm = op.string_opt("norm").unwrap_or("backward");
    let inverse = matches!(kind, Transform::Inverse | Transform::RealInverse);
    let want = match (norm, inverse) {
        ("backward", false) | ("forward", true) => 1.0,
        ("backward", true) | ("forward", false) => 1.0 / nf,
        ("ortho", _) => 1.0 / nf.sqrt(),
        (other, _) => return Err(LowerError::Invalid(format!("unknown FFT norm \"{other}\""))),
    };
    let (hlo, computed) = match kind {
        Transform::Forward => (FftKind::Fft, 1.0),
        Transform::Inverse => (FftKind::Ifft, 1.0 / nf),
        Transform::RealForward => (FftKind::Rfft, 1.0),
        Transform::RealInverse => (FftKind::Irfft, 1.0 / nf),
    };
    if dims.len() > 3 {
        return Err(LowerError::Unsupported(format!(
            "an FFT over {} dimensions (stablehlo.fft transforms at most 3)",
            dims.len()
        )));
    }
    let y = fft_over(e, &x, &dims, hlo, &out_sizes)?;
    let y = scale(e, &y, want / computed)?;
    let ty = op.result(0)?;
    Ok(vec![e.convert(&y, ty.dtype)?])
}

/// The complex dtype a real tensor is transformed in (PyTorch: complex64 for f32 and
/// narrower floats and for integers, complex128 for f64).
fn accumulator_complex(d: DType) -> LResult<DType> {
    Ok(if d == DType::F64 {
        DType::C128
    } else {
        DType::C64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_move_to_the_end_in_order() {
        assert_eq!(to_end(4, &[1]), vec![0, 2, 3, 1]);
        assert_eq!(to_end(4, &[2, 0]), vec![1, 3, 2, 0]);
        assert_eq!(inverse(&[1, 3, 2, 0]), vec![3, 0, 2, 1]);
    }
}
