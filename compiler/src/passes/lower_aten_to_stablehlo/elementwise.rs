//! Elementwise ops: unary math and activations, binary arithmetic, comparisons,
//! logical ops, `where`/`masked_fill`, clamps, dtype conversions and pass-throughs.
//!
//! Arithmetic is computed in the result dtype the graph records (PyTorch already did
//! type promotion); comparisons promote their operands with PyTorch's rules.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{integer_bounds, Cmp};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::{AtenOp, LResult, LowerError};

/// Category rank in PyTorch's promotion: bool < integer < floating.
fn category(d: DType) -> u8 {
    if d == DType::Bool {
        0
    } else if d.is_float() {
        2
    } else {
        1
    }
}

/// The wider of two dtypes of the same category.
fn wider(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (F64, _) | (_, F64) => F64,
        (F32, _) | (_, F32) => F32,
        (F16, Bf16) | (Bf16, F16) => F32,
        (I64, _) | (_, I64) => I64,
        (I32, _) | (_, I32) => I32,
        (I16, _) | (_, I16) => I16,
        (U8, I8) | (I8, U8) => I16,
        (x, Bool) | (Bool, x) => x,
        (x, _) => x,
    }
}

/// An operand of a promoting op: a tensor (dimensioned or 0-d) or a Python scalar.
#[derive(Clone, Copy)]
pub enum Operand {
    Tensor {
        dtype: DType,
        rank: usize,
    },
    /// `is_float`: the scalar was written as a float.
    Scalar {
        kind: DType,
    },
}

/// PyTorch's result_type: dimensioned tensors outrank 0-d tensors, which outrank
/// scalars, unless a lower tier has a higher category.
pub fn result_type(operands: &[Operand]) -> DType {
    let mut tiers: [Option<DType>; 3] = [None, None, None];
    for o in operands {
        let (tier, d) = match o {
            Operand::Tensor { dtype, rank } if *rank > 0 => (0, *dtype),
            Operand::Tensor { dtype, .. } => (1, *dtype),
            Operand::Scalar { kind } => (2, *kind),
        };
        tiers[tier] = Some(match tiers[tier] {
            Some(prev) if category(prev) > category(d) => prev,
            Some(prev) if category(prev) < category(d) => d,
            Some(prev) => wider(prev, d),
            None => d,
        });
    }
    let mut best: Option<DType> = None;
    for (tier, t) in tiers.iter().enumerate() {
        let Some(d) = *t else { continue };
        best = Some(match best {
            None => {
                if tier == 2 {
                    // Only scalars: default dtypes.
                    match category(d) {
                        2 => DType::F32,
                        1 => DType::I64,
                        _ => DType::Bool,
                    }
                } else {
                    d
                }
            }
            Some(b) if category(d) > category(b) => {
                if tier == 2 && category(d) == 2 {
                    DType::F32
                } else if tier == 2 {
                    DType::I64
                } else {
                    d
                }
            }
            Some(b) => b,
        });
    }
    best.unwrap_or(DType::F32)
}

/// The dtype PyTorch computes and accumulates `d` in: f32 for f16/bf16 (rounded once
/// at the end of each op), `d` itself otherwise.
pub fn accumulator(d: DType) -> DType {
    match d {
        DType::F16 | DType::Bf16 => DType::F32,
        other => other,
    }
}

/// The type arithmetic is carried out in for a result of type `ty` (see [`accumulator`]).
pub fn compute_type(ty: &TensorType) -> TensorType {
    ty.with_dtype(accumulator(ty.dtype))
}

/// Converts `x` to `ty`'s dtype and broadcasts it to `ty`'s shape.
pub fn to_type(e: &Emitter, x: &TValue, ty: &TensorType) -> LResult<TValue> {
    let c = e.convert(x, ty.dtype)?;
    Ok(e.broadcast_to(&c, &ty.shape)?)
}

/// A splat constant of `ty`.
pub fn splat(e: &Emitter, ty: &TensorType, v: f64) -> LResult<TValue> {
    let s = e.scalar(ty.dtype, v)?;
    Ok(e.broadcast_to(&s, &ty.shape)?)
}

/// Argument `name` as a tensor of type `ty`, whether given as a tensor or a scalar.
pub fn arg_as(op: &AtenOp, e: &Emitter, name: &str, ty: &TensorType) -> LResult<TValue> {
    if let Some(t) = op.tensor_opt(name) {
        return to_type(e, t, ty);
    }
    let v = op
        .number_opt(name)
        .ok_or_else(|| LowerError::Invalid(format!("missing argument `{name}`")))?;
    splat(e, ty, v)
}

/// Describes argument `name` for promotion.
pub fn operand_kind(op: &AtenOp, name: &str) -> Option<Operand> {
    if let Some(t) = op.tensor_opt(name) {
        return Some(Operand::Tensor {
            dtype: t.dtype(),
            rank: t.rank(),
        });
    }
    let kind = match op.attr(name)? {
        super::op::AttrValue::Float(_) => DType::F32,
        super::op::AttrValue::Int(_) => DType::I64,
        super::op::AttrValue::Bool(_) => DType::Bool,
        _ => return None,
    };
    Some(Operand::Scalar { kind })
}

/// Broadcast shape of two shapes (numpy rules).
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> LResult<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return Err(LowerError::Invalid(format!(
                "shapes {a:?} and {b:?} do not broadcast"
            )));
        };
    }
    Ok(out)
}

/// erf for f32 and narrower, as a rational approximation on [-4, 4] (the one XLA and
/// Eigen use for single precision; max error ~1 ulp in f32).
pub fn erf(e: &Emitter, x: &TValue) -> LResult<TValue> {
    if x.dtype() == DType::F64 {
        return erf_f64(e, x);
    }
    let orig = x.dtype();
    let compute = if orig == DType::F64 {
        DType::F64
    } else {
        DType::F32
    };
    let x = e.convert(x, compute)?;
    let ty = x.ty.clone();
    let c = |v: f64| splat(e, &ty, v);
    let x = e.clamp(&e.scalar(compute, -4.0)?, &x, &e.scalar(compute, 4.0)?)?;
    let x2 = e.mul(&x, &x)?;
    let alpha = [
        -2.726_142_2e-10,
        2.770_681_4e-08,
        -2.101_024e-06,
        -5.692_506_4e-05,
        -7.349_906_3e-04,
        -2.954_600_5e-03,
        -1.609_603_3e-02,
    ];
    let beta = [
        -1.456_607_2e-05,
        -2.133_740_6e-04,
        -1.682_827e-03,
        -7.373_329_2e-03,
        -1.426_474_0e-02,
    ];
    let horner = |coeffs: &[f64]| -> LResult<TValue> {
        let mut acc = c(coeffs[0])?;
        for &k in &coeffs[1..] {
            acc = e.add(&e.mul(&acc, &x2)?, &c(k)?)?;
        }
        Ok(acc)
    };
    let p = e.mul(&x, &horner(&alpha)?)?;
    let q = horner(&beta)?;
    let r = e.div(&p, &q)?;
    Ok(e.convert(&r, orig)?)
}

/// erf in double precision: the Maclaurin series (40 terms, in x^2) for |x| < 3, and
/// `1 - erfc` from erfc's continued fraction (evaluated bottom-up, 60 levels) beyond,
/// accurate to ~1e-11 relative (worst just below |x| = 3).
fn erf_f64(e: &Emitter, x: &TValue) -> LResult<TValue> {
    let ty = x.ty.clone();
    let c = |v: f64| splat(e, &ty, v);
    let a = e.unary("stablehlo.abs", x)?;
    let x2 = e.mul(x, x)?;
    // Series: erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)).
    let terms = 40;
    let mut coeffs = Vec::with_capacity(terms);
    let mut fact = 1.0f64;
    for n in 0..terms {
        if n > 0 {
            fact *= n as f64;
        }
        let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
        coeffs.push(sign / (fact * (2 * n + 1) as f64));
    }
    let mut acc = c(coeffs[terms - 1])?;
    for &k in coeffs[..terms - 1].iter().rev() {
        acc = e.add(&e.mul(&acc, &x2)?, &c(k)?)?;
    }
    let series = e.mul(&e.mul(x, &acc)?, &c(std::f64::consts::FRAC_2_SQRT_PI)?)?;
    // Continued fraction: erfc(a) = exp(-a^2)/sqrt(pi) * 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...)))).
    let safe = e.max(&a, &c(3.0)?)?;
    let mut frac = safe.clone();
    for k in (1..=60).rev() {
        frac = e.add(&safe, &e.div(&c(k as f64 / 2.0)?, &frac)?)?;
    }
    let erfc = e.div(
        &e.mul(
            &e.unary(
                "stablehlo.exponential",
                &e.unary("stablehlo.negate", &e.mul(&safe, &safe)?)?,
            )?,
            &c(1.0 / std::f64::consts::PI.sqrt())?,
        )?,
        &frac,
    )?;
    let tail = e.mul(&e.sub(&c(1.0)?, &erfc)?, &e.unary("stablehlo.sign", x)?)?;
    let small = e.compare(Cmp::Lt, &a, &c(3.0)?)?;
    Ok(e.select(&small, &series, &tail)?)
}

fn unary_math(name: &str) -> Option<&'static str> {
    Some(match name {
        "aten.exp" => "stablehlo.exponential",
        "aten.expm1" => "stablehlo.exponential_minus_one",
        "aten.log" => "stablehlo.log",
        "aten.log1p" => "stablehlo.log_plus_one",
        "aten.sqrt" => "stablehlo.sqrt",
        "aten.rsqrt" => "stablehlo.rsqrt",
        "aten.tanh" => "stablehlo.tanh",
        "aten.sigmoid" => "stablehlo.logistic",
        "aten.sin" => "stablehlo.sine",
        "aten.cos" => "stablehlo.cosine",
        "aten.tan" => "stablehlo.tan",
        "aten.abs" => "stablehlo.abs",
        "aten.neg" => "stablehlo.negate",
        "aten.floor" => "stablehlo.floor",
        "aten.ceil" => "stablehlo.ceil",
        "aten.round" => "stablehlo.round_nearest_even",
        "aten.sign" => "stablehlo.sign",
        "aten.atan2" => "stablehlo.atan2",
        _ => return None,
    })
}

/// Lowers `op` when it belongs to this family.
pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    let base = op.base();
    let r = match base {
        // Pass-throughs and no-ops.
        "aten._assert_tensor_metadata"
        | "aten._assert_async"
        | "aten._assert_scalar"
        | "aten.sym_constrain_range_for_size" => Ok(vec![]),
        "aten.clone"
        | "aten.contiguous"
        | "aten.alias"
        | "aten.detach"
        | "aten.lift_fresh_copy"
        | "aten.lift_fresh"
        | "aten.alias_copy"
        | "aten.detach_copy"
        | "aten.positive" => identity(op, e),
        "aten.dropout" | "aten.feature_dropout" | "aten.alpha_dropout" => dropout(op, e),
        "aten.native_dropout" => native_dropout(op, e),
        "aten._to_copy" | "aten.to" | "aten.type_as" | "aten._to_dim_order_copy" => identity(op, e),
        _ => return lower_math(op, e, base),
    };
    Some(r)
}

fn lower_math(op: &AtenOp, e: &Emitter, base: &str) -> Option<LResult<Vec<TValue>>> {
    let decimals = op.int_or("decimals", 0);
    let r = if base == "aten.round" && decimals != 0 {
        // PyTorch: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d.
        let scale = 10f64.powi(decimals.unsigned_abs() as i32);
        unary_with(op, e, |e, x| {
            let s = splat(e, &x.ty, scale)?;
            Ok(if decimals > 0 {
                e.div(
                    &e.unary("stablehlo.round_nearest_even", &e.mul(x, &s)?)?,
                    &s,
                )?
            } else {
                e.mul(
                    &e.unary("stablehlo.round_nearest_even", &e.div(x, &s)?)?,
                    &s,
                )?
            })
        })
    } else if let Some(name) = unary_math(base).filter(|_| base != "aten.atan2") {
        unary(op, e, name)
    } else {
        match base {
            "aten.reciprocal" => unary_with(op, e, |e, x| Ok(e.div(&splat(e, &x.ty, 1.0)?, x)?)),
            "aten.trunc" | "aten.fix" => unary_with(op, e, |e, x| {
                if !x.dtype().is_float() {
                    return Ok(x.clone());
                }
                let f = e.unary("stablehlo.floor", &e.unary("stablehlo.abs", x)?)?;
                Ok(e.mul(&f, &e.unary("stablehlo.sign", x)?)?)
            }),
            "aten.log2" => unary_with(op, e, |e, x| {
                Ok(e.div(
                    &e.unary("stablehlo.log", x)?,
                    &splat(e, &x.ty, std::f64::consts::LN_2)?,
                )?)
            }),
            "aten.log10" => unary_with(op, e, |e, x| {
                Ok(e.div(
                    &e.unary("stablehlo.log", x)?,
                    &splat(e, &x.ty, std::f64::consts::LN_10)?,
                )?)
            }),
            "aten.exp2" => unary_with(op, e, |e, x| {
                Ok(e.binary("stablehlo.power", &splat(e, &x.ty, 2.0)?, x)?)
            }),
            "aten.atan" => unary_with(op, e, |e, x| {
                Ok(e.binary("stablehlo.atan2", x, &splat(e, &x.ty, 1.0)?)?)
            }),
            "aten.asin" => unary_with(op, e, |e, x| {
                Ok(e.binary("stablehlo.atan2", x, &one_minus_square_root(e, x)?)?)
            }),
            "aten.acos" => unary_with(op, e, |e, x| {
                Ok(e.binary("stablehlo.atan2", &one_minus_square_root(e, x)?, x)?)
            }),
            "aten.sinh" => unary_with(op, e, |e, x| {
                // (expm1(x) - expm1(-x)) / 2 keeps precision near 0.
                let a = e.unary("stablehlo.exponential_minus_one", x)?;
                let b = e.unary(
                    "stablehlo.exponential_minus_one",
                    &e.unary("stablehlo.negate", x)?,
                )?;
                Ok(e.mul(&e.sub(&a, &b)?, &splat(e, &x.ty, 0.5)?)?)
            }),
            "aten.cosh" => unary_with(op, e, |e, x| {
                let a = e.unary("stablehlo.exponential", x)?;
                let b = e.unary("stablehlo.exponential", &e.unary("stablehlo.negate", x)?)?;
                Ok(e.mul(&e.add(&a, &b)?, &splat(e, &x.ty, 0.5)?)?)
            }),
            "aten.asinh" => unary_with(op, e, |e, x| {
                // sign(x) * log1p(|x| + x^2 / (1 + sqrt(1 + x^2)))
                let a = e.unary("stablehlo.abs", x)?;
                let one = splat(e, &x.ty, 1.0)?;
                let sq = e.mul(&a, &a)?;
                let r = e.add(&one, &e.unary("stablehlo.sqrt", &e.add(&one, &sq)?)?)?;
                let v = e.unary("stablehlo.log_plus_one", &e.add(&a, &e.div(&sq, &r)?)?)?;
                // Where x^2 overflows: asinh(x) = log(2|x|) = log|x| + ln 2.
                let big = e.compare(Cmp::Gt, &a, &splat(e, &x.ty, 1e10)?)?;
                let v_big = e.add(
                    &e.unary("stablehlo.log", &a)?,
                    &splat(e, &x.ty, std::f64::consts::LN_2)?,
                )?;
                let v = e.select(&big, &v_big, &v)?;
                Ok(e.mul(&v, &e.unary("stablehlo.sign", x)?)?)
            }),
            "aten.acosh" => unary_with(op, e, |e, x| {
                // log(x + sqrt(x - 1) * sqrt(x + 1)); NaN below 1 as in PyTorch.
                let one = splat(e, &x.ty, 1.0)?;
                let s = e.mul(
                    &e.unary("stablehlo.sqrt", &e.sub(x, &one)?)?,
                    &e.unary("stablehlo.sqrt", &e.add(x, &one)?)?,
                )?;
                Ok(e.unary("stablehlo.log", &e.add(x, &s)?)?)
            }),
            "aten.atanh" => unary_with(op, e, |e, x| {
                // 0.5 * log1p(2x / (1 - x))
                let one = splat(e, &x.ty, 1.0)?;
                let q = e.div(&e.add(x, x)?, &e.sub(&one, x)?)?;
                Ok(e.mul(
                    &e.unary("stablehlo.log_plus_one", &q)?,
                    &splat(e, &x.ty, 0.5)?,
                )?)
            }),
            "aten.fill" => fill(op, e),
            // copy(self, src): src broadcast to self's shape, in self's dtype.
            "aten.copy" => op
                .result(0)
                .and_then(|ty| Ok(vec![to_type(e, op.tensor("src")?, ty)?])),
            "aten.erf" => unary_with(op, e, erf),
            // `x <= 0 ? 0 : x`: NaN compares false and stays NaN, as in PyTorch, on any
            // backend, with no maximum whose NaN handling XLA builds disagree on.
            "aten.relu" => unary_with(op, e, |e, x| {
                let zero = splat(e, &x.ty, 0.0)?;
                let non_positive = e.compare(Cmp::Le, x, &zero)?;
                Ok(e.select(&non_positive, &zero, x)?)
            }),
            "aten.relu6" => unary_with(op, e, |e, x| clamp_values(e, x, Some(0.0), Some(6.0))),
            "aten.silu" => unary_with(op, e, |e, x| {
                Ok(e.mul(x, &e.unary("stablehlo.logistic", x)?)?)
            }),
            "aten.gelu" => gelu(op, e),
            "aten.hardtanh" => {
                let (lo, hi) = (op.number_or("min_val", -1.0), op.number_or("max_val", 1.0));
                unary_with(op, e, |e, x| clamp_values(e, x, Some(lo), Some(hi)))
            }
            "aten.hardsigmoid" => unary_with(op, e, hardsigmoid),
            "aten.square" => unary_with(op, e, |e, x| Ok(e.mul(x, x)?)),
            "aten.glu" => glu(op, e),
            // min(x, 0) - log1p(exp(-|x|)): exact in both tails (PyTorch's CPU formula).
            "aten.log_sigmoid" => unary_with(op, e, |e, x| {
                let zero = splat(e, &x.ty, 0.0)?;
                let below = e.compare(Cmp::Lt, x, &zero)?;
                let min = e.select(&below, x, &zero)?;
                let tail = e.unary(
                    "stablehlo.log_plus_one",
                    &e.unary(
                        "stablehlo.exponential",
                        &e.unary("stablehlo.negate", &e.unary("stablehlo.abs", x)?)?,
                    )?,
                )?;
                Ok(e.sub(&min, &tail)?)
            }),
            // x * tanh(log1p(exp(x))), as PyTorch's kernel.
            "aten.mish" => unary_with(op, e, |e, x| {
                let softplus = e.unary(
                    "stablehlo.log_plus_one",
                    &e.unary("stablehlo.exponential", x)?,
                )?;
                Ok(e.mul(x, &e.unary("stablehlo.tanh", &softplus)?)?)
            }),
            "aten.hardswish" => unary_with(op, e, |e, x| Ok(e.mul(x, &hardsigmoid(e, x)?)?)),
            "aten.leaky_relu" => {
                let slope = op.number_or("negative_slope", 0.01);
                unary_with(op, e, |e, x| {
                    let zero = splat(e, &x.ty, 0.0)?;
                    let pos = e.compare(Cmp::Gt, x, &zero)?;
                    Ok(e.select(&pos, x, &e.mul(x, &splat(e, &x.ty, slope)?)?)?)
                })
            }
            "aten.elu" => {
                let alpha = op.number_or("alpha", 1.0);
                let scale = op.number_or("scale", 1.0);
                let input_scale = op.number_or("input_scale", 1.0);
                unary_with(op, e, |e, x| {
                    let zero = splat(e, &x.ty, 0.0)?;
                    let pos = e.compare(Cmp::Gt, x, &zero)?;
                    let xs = e.mul(x, &splat(e, &x.ty, input_scale)?)?;
                    let neg = e.mul(
                        &e.unary("stablehlo.exponential_minus_one", &xs)?,
                        &splat(e, &x.ty, alpha)?,
                    )?;
                    Ok(e.mul(&e.select(&pos, x, &neg)?, &splat(e, &x.ty, scale)?)?)
                })
            }
            "aten.softplus" => {
                let beta = op.number_or("beta", 1.0);
                let threshold = op.number_or("threshold", 20.0);
                unary_with(op, e, |e, x| {
                    let bx = e.mul(x, &splat(e, &x.ty, beta)?)?;
                    let soft = e.div(
                        &e.unary(
                            "stablehlo.log_plus_one",
                            &e.unary("stablehlo.exponential", &bx)?,
                        )?,
                        &splat(e, &x.ty, beta)?,
                    )?;
                    let big = e.compare(Cmp::Gt, &bx, &splat(e, &x.ty, threshold)?)?;
                    Ok(e.select(&big, x, &soft)?)
                })
            }
            "aten.clamp" | "aten.clip" | "aten.clamp_min" | "aten.clamp_max" => clamp(op, e),
            "aten.logical_not" => logical_not(op, e),
            "aten.bitwise_not" => bitwise_not(op, e),
            "aten.isnan" => unary_pred(op, e, |e, x| Ok(e.compare(Cmp::Ne, x, x)?)),
            "aten.isinf" => unary_pred(op, e, |e, x| {
                let a = e.unary("stablehlo.abs", x)?;
                Ok(e.compare(Cmp::Eq, &a, &splat(e, &a.ty, f64::INFINITY)?)?)
            }),
            "aten.add" | "aten.sub" | "aten.rsub" => add_sub(op, e, base),
            // `torch.multiply` is exported under its own name (Gemma 3n).
            "aten.mul" | "aten.multiply" => arith(op, e, "stablehlo.multiply"),
            "aten.div" => div(op, e, op.string_opt("rounding_mode")),
            "aten.floor_divide" => div(op, e, Some("floor")),
            "aten.maximum" | "aten.max" if op.tensor_opt("other").is_some() => {
                arith(op, e, "stablehlo.maximum")
            }
            "aten.minimum" | "aten.min" if op.tensor_opt("other").is_some() => {
                arith(op, e, "stablehlo.minimum")
            }
            "aten.pow" => pow(op, e),
            "aten.atan2" => arith(op, e, "stablehlo.atan2"),
            "aten.remainder" => remainder(op, e, true),
            "aten.fmod" => remainder(op, e, false),
            "aten.eq" => compare(op, e, Cmp::Eq),
            "aten.ne" => compare(op, e, Cmp::Ne),
            "aten.lt" => compare(op, e, Cmp::Lt),
            "aten.le" => compare(op, e, Cmp::Le),
            "aten.gt" => compare(op, e, Cmp::Gt),
            "aten.ge" => compare(op, e, Cmp::Ge),
            "aten.logical_and" => logical(op, e, "stablehlo.and"),
            "aten.logical_or" => logical(op, e, "stablehlo.or"),
            "aten.logical_xor" => logical(op, e, "stablehlo.xor"),
            "aten.bitwise_and" | "aten.__and__" => arith(op, e, "stablehlo.and"),
            "aten.bitwise_or" | "aten.__or__" => arith(op, e, "stablehlo.or"),
            "aten.bitwise_xor" | "aten.__xor__" => arith(op, e, "stablehlo.xor"),
            "aten.where" => where_(op, e),
            "aten.masked_fill" => masked_fill(op, e),
            _ => return None,
        }
    };
    Some(r)
}

fn identity(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    Ok(vec![to_type(e, x, ty)?])
}

fn dropout(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    if op.bool_or("train", false) && op.number_or("p", 0.0) > 0.0 {
        return Err(LowerError::Unsupported(
            "dropout in training mode is random; export the model in eval mode (model.eval())"
                .into(),
        ));
    }
    identity(op, e)
}

fn native_dropout(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    if op.bool_or("train", true) && op.number_or("p", 0.0) > 0.0 {
        return Err(LowerError::Unsupported(
            "native_dropout in training mode is random; export the model in eval mode (model.eval())".into(),
        ));
    }
    let x = op.first_tensor()?.clone();
    let mask = splat(e, op.result(1)?, 1.0)?;
    Ok(vec![x, mask])
}

/// Applies `f` to the first operand converted to the result dtype.
/// `glu(self, dim)`: the first half of `dim` times the sigmoid of the second half.
fn glu(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    let dim = super::op::norm_dim(op.int_or("dim", -1), x.rank())? as usize;
    let n = x.shape()[dim];
    if n % 2 != 0 {
        return Err(LowerError::Invalid(format!(
            "glu halves dimension {dim}, whose size {n} is odd"
        )));
    }
    let compute = compute_type(ty);
    let a = e.convert(&e.slice_in_dim(x, dim, 0, n / 2, 1)?, compute.dtype)?;
    let b = e.convert(&e.slice_in_dim(x, dim, n / 2, n, 1)?, compute.dtype)?;
    let r = e.mul(&a, &e.unary("stablehlo.logistic", &b)?)?;
    Ok(vec![e.convert(&r, ty.dtype)?])
}

fn unary_with(
    op: &AtenOp,
    e: &Emitter,
    f: impl Fn(&Emitter, &TValue) -> LResult<TValue>,
) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = to_type(e, op.first_tensor()?, &compute_type(ty))?;
    Ok(vec![e.convert(&f(e, &x)?, ty.dtype)?])
}

fn unary(op: &AtenOp, e: &Emitter, name: &str) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = op.first_tensor()?;
    // StableHLO's abs/sign take signed types: unsigned and bool are handled here.
    if matches!(ty.dtype, DType::U8 | DType::Bool)
        && matches!(name, "stablehlo.abs" | "stablehlo.sign")
    {
        let x = to_type(e, x, ty)?;
        if name == "stablehlo.abs" || ty.dtype == DType::Bool {
            return Ok(vec![x]);
        }
        let nz = e.compare(Cmp::Ne, &x, &splat(e, &x.ty, 0.0)?)?;
        return Ok(vec![e.convert(&nz, ty.dtype)?]);
    }
    if name == "stablehlo.sign" && ty.dtype.is_float() {
        // PyTorch's sign(NaN) is 0.
        let x = to_type(e, x, ty)?;
        let s = e.unary(name, &x)?;
        let nan = e.compare(Cmp::Ne, &x, &x)?;
        return Ok(vec![e.select(&nan, &splat(e, &x.ty, 0.0)?, &s)?]);
    }
    if !ty.dtype.is_float()
        && !matches!(
            name,
            "stablehlo.abs" | "stablehlo.negate" | "stablehlo.sign"
        )
    {
        // floor/ceil/round of integers are identities.
        if matches!(
            name,
            "stablehlo.floor" | "stablehlo.ceil" | "stablehlo.round_nearest_even"
        ) {
            return Ok(vec![to_type(e, x, ty)?]);
        }
    }
    let x = to_type(e, x, ty)?;
    Ok(vec![e.unary(name, &x)?])
}

/// A predicate of a float operand (`isnan`); integers are never NaN or infinite.
fn unary_pred(
    op: &AtenOp,
    e: &Emitter,
    f: impl Fn(&Emitter, &TValue) -> LResult<TValue>,
) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let ty = op.result(0)?;
    if !x.dtype().is_float() {
        return Ok(vec![splat(e, ty, 0.0)?]);
    }
    Ok(vec![f(e, x)?])
}

/// `fill(self, value)`: a tensor like `self` full of `value` (a scalar or 0-d tensor).
fn fill(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    Ok(vec![arg_as(op, e, "value", ty)?])
}

/// `sqrt(1 - x^2)`, the companion of `x` in asin/acos.
fn one_minus_square_root(e: &Emitter, x: &TValue) -> LResult<TValue> {
    let one = splat(e, &x.ty, 1.0)?;
    Ok(e.unary(
        "stablehlo.sqrt",
        &e.mul(&e.sub(&one, x)?, &e.add(&one, x)?)?,
    )?)
}

fn hardsigmoid(e: &Emitter, x: &TValue) -> LResult<TValue> {
    let y = e.add(x, &splat(e, &x.ty, 3.0)?)?;
    let y = clamp_values(e, &y, Some(0.0), Some(6.0))?;
    Ok(e.div(&y, &splat(e, &x.ty, 6.0)?)?)
}

fn gelu(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let approximate = op.string_opt("approximate").unwrap_or("none").to_string();
    let nan_at_positive_infinity =
        approximate != "tanh" && matches!(op.result(0)?.dtype, DType::F32 | DType::Bf16);
    unary_with(op, e, |e, x| {
        let half = splat(e, &x.ty, 0.5)?;
        let one = splat(e, &x.ty, 1.0)?;
        let inner = if approximate == "tanh" {
            // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            let x3 = e.mul(&e.mul(x, x)?, x)?;
            let t = e.add(x, &e.mul(&x3, &splat(e, &x.ty, 0.044715)?)?)?;
            let t = e.mul(&t, &splat(e, &x.ty, (2.0 / std::f64::consts::PI).sqrt())?)?;
            e.unary("stablehlo.tanh", &t)?
        } else {
            // 0.5 x (1 + erf(x / sqrt(2)))
            let t = e.mul(x, &splat(e, &x.ty, std::f64::consts::FRAC_1_SQRT_2)?)?;
            erf(e, &t)?
        };
        let y = e.mul(&e.mul(x, &half)?, &e.add(&one, &inner)?)?;
        // -inf gives NaN (-inf * 0) in the formula as in PyTorch. +inf gives +inf, except
        // that PyTorch's CPU kernel for the exact form in f32/bf16 returns NaN: match it.
        if !nan_at_positive_infinity {
            return Ok(y);
        }
        let pos_inf = e.compare(Cmp::Eq, x, &splat(e, &x.ty, f64::INFINITY)?)?;
        Ok(e.select(&pos_inf, &splat(e, &x.ty, f64::NAN)?, &y)?)
    })
}

/// Clamps to optional scalar bounds.
/// Clamps to constant bounds (relu6, hardtanh).
fn clamp_values(e: &Emitter, x: &TValue, lo: Option<f64>, hi: Option<f64>) -> LResult<TValue> {
    let mut y = x.clone();
    if let Some(lo) = lo {
        y = bound_by_constant(e, &y, &splat(e, &y.ty, lo)?, lo.is_nan(), true)?;
    }
    if let Some(hi) = hi {
        y = bound_by_constant(e, &y, &splat(e, &y.ty, hi)?, hi.is_nan(), false)?;
    }
    Ok(y)
}

/// `y < lo ? lo : y` (or `y > hi ? hi : y`) for a constant bound: a NaN input compares
/// false and stays NaN, PyTorch's semantics, with no maximum or minimum, whose NaN
/// handling XLA builds disagree on; applied low then high, `lo > hi` gives `hi`
/// everywhere, as in PyTorch. A NaN bound makes every element NaN, through the
/// NaN-propagating max/min.
fn bound_by_constant(
    e: &Emitter,
    y: &TValue,
    bound: &TValue,
    bound_is_nan: bool,
    is_lower: bool,
) -> LResult<TValue> {
    Ok(match (bound_is_nan, is_lower) {
        (true, true) => e.max(y, bound)?,
        (true, false) => e.min(y, bound)?,
        (false, true) => e.select(&e.compare(Cmp::Lt, y, bound)?, bound, y)?,
        (false, false) => e.select(&e.compare(Cmp::Gt, y, bound)?, bound, y)?,
    })
}

fn clamp(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?.clone();
    let x = to_type(e, op.first_tensor()?, &ty)?;
    let (lo_name, hi_name) = match op.base() {
        "aten.clamp_min" => ("min", ""),
        "aten.clamp_max" => ("", "max"),
        _ => ("min", "max"),
    };
    let mut y = x;
    for (name, is_min) in [(lo_name, true), (hi_name, false)] {
        if name.is_empty() || (op.tensor_opt(name).is_none() && op.number_opt(name).is_none()) {
            continue;
        }
        let bound = arg_as(op, e, name, &ty)?;
        let number = op
            .tensor_opt(name)
            .is_none()
            .then(|| op.number_opt(name))
            .flatten();
        // PyTorch propagates NaN from the input; so do the selects against a number
        // and the NaN-propagating max/min against a tensor bound.
        y = match number {
            Some(n) => bound_by_constant(e, &y, &bound, n.is_nan(), is_min)?,
            None if is_min => e.max(&y, &bound)?,
            None => e.min(&y, &bound)?,
        };
    }
    Ok(vec![y])
}

fn logical_not(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let x = op.first_tensor()?;
    let zero = splat(e, &x.ty, 0.0)?;
    let is_zero = e.compare(Cmp::Eq, x, &zero)?;
    Ok(vec![to_type(e, &is_zero, op.result(0)?)?])
}

fn bitwise_not(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = to_type(e, op.first_tensor()?, ty)?;
    Ok(vec![e.unary("stablehlo.not", &x)?])
}

/// Binary arithmetic in the result dtype, with broadcasting; scalars become constants.
fn arith(op: &AtenOp, e: &Emitter, name: &str) -> LResult<Vec<TValue>> {
    let result = op.result(0)?;
    let ty = &compute_type(result);
    let a = arg_as(op, e, "self", ty)?;
    let b = arg_as(op, e, "other", ty)?;
    let name = match (name, ty.dtype) {
        ("stablehlo.atan2", d) if !d.is_float() => {
            return Err(LowerError::Invalid("atan2 needs floats".into()))
        }
        (n, _) => n,
    };
    let r = match name {
        "stablehlo.maximum" => e.max(&a, &b)?,
        "stablehlo.minimum" => e.min(&a, &b)?,
        _ => e.binary(name, &a, &b)?,
    };
    Ok(vec![e.convert(&r, result.dtype)?])
}

fn add_sub(op: &AtenOp, e: &Emitter, base: &str) -> LResult<Vec<TValue>> {
    let result = op.result(0)?;
    let ty = &compute_type(result);
    let a = arg_as(op, e, "self", ty)?;
    let b = arg_as(op, e, "other", ty)?;
    let alpha = op.number_or("alpha", 1.0);
    let scaled = |x: &TValue| -> LResult<TValue> {
        if alpha == 1.0 {
            Ok(x.clone())
        } else {
            Ok(e.mul(x, &splat(e, ty, alpha)?)?)
        }
    };
    let r = match base {
        "aten.add" => e.add(&a, &scaled(&b)?)?,
        "aten.sub" => e.sub(&a, &scaled(&b)?)?,
        // rsub(self, other, alpha) = other - alpha * self
        _ => e.sub(&b, &scaled(&a)?)?,
    };
    Ok(vec![e.convert(&r, result.dtype)?])
}

/// Division with PyTorch's rounding modes: none (true division), "trunc", "floor".
fn div(op: &AtenOp, e: &Emitter, mode: Option<&str>) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?.clone();
    let mode = mode.map(str::to_string);
    // True division of integers happens in floating point (the result dtype says so);
    // rounded division of integers stays integral.
    let compute = if ty.dtype.is_float() || mode.is_some() {
        compute_type(&ty)
    } else {
        ty.with_dtype(DType::F32)
    };
    if !ty.dtype.is_float() && mode.is_some() {
        let a = arg_as(op, e, "self", &ty)?;
        let b = arg_as(op, e, "other", &ty)?;
        let q = e.div(&a, &b)?; // truncates toward zero
        if mode.as_deref() == Some("floor") {
            // Adjust when the remainder is non-zero and the signs differ.
            let r = e.binary("stablehlo.remainder", &a, &b)?;
            let adjust = sign_mismatch(e, &r, &b)?;
            let q1 = e.sub(&q, &splat(e, &ty, 1.0)?)?;
            return Ok(vec![e.select(&adjust, &q1, &q)?]);
        }
        return Ok(vec![q]);
    }
    let a = arg_as(op, e, "self", &compute)?;
    let b = arg_as(op, e, "other", &compute)?;
    let q = e.div(&a, &b)?;
    let q = match mode.as_deref() {
        Some("trunc") => {
            let f = e.unary("stablehlo.floor", &e.unary("stablehlo.abs", &q)?)?;
            e.mul(&f, &e.unary("stablehlo.sign", &q)?)?
        }
        Some("floor") => floor_divide_float(e, &a, &b, &q)?,
        _ => q,
    };
    Ok(vec![e.convert(&q, ty.dtype)?])
}

/// Python/PyTorch floor division of floats: `(a - fmod(a, b)) / b`, adjusted so that
/// `a == b * (a // b) + remainder(a, b)`; `b == 0` gives `a / b` (inf or NaN).
fn floor_divide_float(e: &Emitter, a: &TValue, b: &TValue, quotient: &TValue) -> LResult<TValue> {
    let ty = &a.ty;
    let zero = splat(e, ty, 0.0)?;
    let one = splat(e, ty, 1.0)?;
    let m = e.binary("stablehlo.remainder", a, b)?;
    let mut div = e.div(&e.sub(a, &m)?, b)?;
    let fix = sign_mismatch(e, &m, b)?;
    div = e.select(&fix, &e.sub(&div, &one)?, &div)?;
    let fl = e.unary("stablehlo.floor", &div)?;
    let up = e.compare(Cmp::Gt, &e.sub(&div, &fl)?, &splat(e, ty, 0.5)?)?;
    let fl = e.select(&up, &e.add(&fl, &one)?, &fl)?;
    // A zero quotient takes the sign of a / b.
    let signed_zero = e.mul(&zero, &e.unary("stablehlo.sign", quotient)?)?;
    let div_zero = e.compare(Cmp::Eq, &div, &zero)?;
    let r = e.select(&div_zero, &signed_zero, &fl)?;
    let b_zero = e.compare(Cmp::Eq, b, &zero)?;
    Ok(e.select(&b_zero, quotient, &r)?)
}

fn pow(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let result = op.result(0)?;
    let ty = &compute_type(result);
    let done = |v: TValue| -> LResult<Vec<TValue>> { Ok(vec![e.convert(&v, result.dtype)?]) };
    // Small integer exponents are exact as repeated multiplication, as in PyTorch.
    if let (Some(x), Some(p)) = (op.tensor_opt("self"), op.number_opt("exponent")) {
        let x = to_type(e, x, ty)?;
        if p == 2.0 {
            return done(e.mul(&x, &x)?);
        }
        if p == 1.0 {
            return done(x);
        }
        if p == 0.5 && ty.dtype.is_float() {
            return done(e.unary("stablehlo.sqrt", &x)?);
        }
        if p == 3.0 {
            return done(e.mul(&e.mul(&x, &x)?, &x)?);
        }
    }
    let a = arg_as(op, e, "self", ty)?;
    let b = arg_as(op, e, "exponent", ty)?;
    done(e.binary("stablehlo.power", &a, &b)?)
}

/// True where the C-style remainder `r` (sign of the dividend) is non-zero and its sign
/// differs from the divisor `b`'s: where Python-style floor semantics need a correction.
fn sign_mismatch(e: &Emitter, r: &TValue, b: &TValue) -> LResult<TValue> {
    let zero = splat(e, &r.ty, 0.0)?;
    let r_nz = e.compare(Cmp::Ne, r, &zero)?;
    let signs_differ = e.compare(
        Cmp::Ne,
        &e.compare(Cmp::Lt, r, &zero)?,
        &e.compare(Cmp::Lt, b, &zero)?,
    )?;
    Ok(e.binary("stablehlo.and", &r_nz, &signs_differ)?)
}

/// Python-style `remainder` (sign of the divisor) when `floor` is set, C `fmod` otherwise.
fn remainder(op: &AtenOp, e: &Emitter, floor: bool) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let a = arg_as(op, e, "self", ty)?;
    let b = arg_as(op, e, "other", ty)?;
    let r = e.binary("stablehlo.remainder", &a, &b)?;
    if !floor {
        return Ok(vec![r]);
    }
    let fix = sign_mismatch(e, &r, &b)?;
    Ok(vec![e.select(&fix, &e.add(&r, &b)?, &r)?])
}

/// The dtype both operands of a comparison or logical op are promoted to, and their
/// broadcast shape.
fn common_operands(op: &AtenOp, e: &Emitter) -> LResult<(TValue, TValue)> {
    let ka =
        operand_kind(op, "self").ok_or_else(|| LowerError::Invalid("missing `self`".into()))?;
    let kb =
        operand_kind(op, "other").ok_or_else(|| LowerError::Invalid("missing `other`".into()))?;
    let dtype = result_type(&[ka, kb]);
    let shape = op.result(0)?.shape.clone();
    let ty = TensorType::new(shape, dtype);
    Ok((arg_as(op, e, "self", &ty)?, arg_as(op, e, "other", &ty)?))
}

fn compare(op: &AtenOp, e: &Emitter, dir: Cmp) -> LResult<Vec<TValue>> {
    let (a, b) = common_operands(op, e)?;
    let c = e.compare(dir, &a, &b)?;
    Ok(vec![to_type(e, &c, op.result(0)?)?])
}

fn logical(op: &AtenOp, e: &Emitter, name: &str) -> LResult<Vec<TValue>> {
    let (a, b) = common_operands(op, e)?;
    let nz = |x: &TValue| -> LResult<TValue> {
        if x.dtype() == DType::Bool {
            return Ok(x.clone());
        }
        Ok(e.compare(Cmp::Ne, x, &splat(e, &x.ty, 0.0)?)?)
    };
    let r = e.binary(name, &nz(&a)?, &nz(&b)?)?;
    Ok(vec![to_type(e, &r, op.result(0)?)?])
}

fn where_(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let cond = op.tensor("condition")?;
    let cond = if cond.dtype() == DType::Bool {
        cond.clone()
    } else {
        e.compare(Cmp::Ne, cond, &splat(e, &cond.ty, 0.0)?)?
    };
    let cond = e.broadcast_to(&cond, &ty.shape)?;
    let a = arg_as(op, e, "self", ty)?;
    let b = arg_as(op, e, "other", ty)?;
    Ok(vec![e.select(&cond, &a, &b)?])
}

fn masked_fill(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let x = to_type(e, op.tensor("self")?, ty)?;
    let mask = e.broadcast_to(op.tensor("mask")?, &ty.shape)?;
    let value = if let Some(v) = op.tensor_opt("value") {
        to_type(e, v, ty)?
    } else {
        let v = op.number_or("value", 0.0);
        let v = if ty.dtype.is_float() { v } else { v.trunc() };
        let (lo, hi) = integer_bounds(ty.dtype);
        splat(e, ty, v.clamp(lo, hi))?
    };
    Ok(vec![e.select(&mask, &value, &x)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_pytorch() {
        let t = |dtype, rank| Operand::Tensor { dtype, rank };
        let s = |kind| Operand::Scalar { kind };
        assert_eq!(result_type(&[t(DType::I64, 2), s(DType::F32)]), DType::F32);
        assert_eq!(result_type(&[t(DType::F16, 2), s(DType::F32)]), DType::F16);
        assert_eq!(
            result_type(&[t(DType::F16, 2), t(DType::F32, 0)]),
            DType::F16
        );
        assert_eq!(
            result_type(&[t(DType::I32, 2), t(DType::F32, 0)]),
            DType::F32
        );
        assert_eq!(
            result_type(&[t(DType::I32, 2), t(DType::I64, 0)]),
            DType::I32
        );
        assert_eq!(result_type(&[t(DType::Bool, 2), s(DType::I64)]), DType::I64);
        assert_eq!(result_type(&[t(DType::U8, 1), t(DType::I8, 1)]), DType::I16);
        assert_eq!(
            result_type(&[t(DType::Bf16, 1), t(DType::F16, 1)]),
            DType::F32
        );
    }
}
