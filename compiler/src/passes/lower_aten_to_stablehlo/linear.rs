//! Contractions: matrix products (`mm`, `bmm`, `matmul`, `addmm`, `linear`, `baddbmm`)
//! and convolutions (`convolution`, `conv1d/2d/3d`).

use tpuc_dialects::stablehlo::{ConvParams, DotDims};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::elementwise::{accumulator, broadcast_shapes, splat, to_type};
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
        "aten.einsum" => einsum(op, e),
        "aten.convolution"
        | "aten._convolution"
        | "aten.conv1d"
        | "aten.conv2d"
        | "aten.conv3d"
        | "aten.conv_transpose1d"
        | "aten.conv_transpose2d"
        | "aten.conv_transpose3d" => convolution(op, e),
        "aten.convolution_backward" => convolution_backward(op, e),
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
    Ok(vec![e.convert(&e.add(&prod, &bias)?, ty.dtype)?])
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
    let transposed =
        op.bool_or("transposed", false) || op.base().starts_with("aten.conv_transpose");
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
    let (w, params) = if transposed {
        transposed_kernel(op, e, &w, n, groups, &strides, &padding, &dilation)?
    } else {
        let params = ConvParams {
            strides,
            padding,
            lhs_dilation: vec![1; n],
            rhs_dilation: dilation,
            feature_groups: groups,
            batch_groups: 1,
        };
        (w, params)
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

/// `convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
/// dilation, transposed, output_padding, groups, output_mask)`: the gradients of a
/// (non-transposed) convolution with respect to its input, weight and bias, each
/// computed when `output_mask` asks for it (zeros otherwise).
///
/// - input: the output gradient dilated by the stride and convolved with the kernel
///   flipped and its in/out features swapped (per group), padded by
///   `dilation * (k - 1) - padding` low and what reaches the input's size high (a
///   negative amount crops instead);
/// - weight: the input correlated with the output gradient, batch as the contracted
///   feature: input `[Cin, N, H]` against kernel `[Cout, N, Ho]` dilated by the stride,
///   window strides the dilation, groups as batch groups; input rows no window reached
///   cropped;
/// - bias: the output gradient summed over every dim but the channel.
fn convolution_backward(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    if op.bool_or("transposed", false) {
        return Err(LowerError::Unsupported(
            "the backward of a transposed convolution (ConvTranspose) is not supported yet".into(),
        ));
    }
    let mask = match op.attr("output_mask") {
        Some(super::op::AttrValue::Bools(b)) if b.len() == 3 => b.clone(),
        _ => vec![true; 3],
    };
    let gy_t = op.tensor("grad_output")?;
    let x_t = op.tensor("input")?;
    let w_t = op.tensor("weight")?;
    let cd = accumulator(x_t.dtype());
    let gy = e.convert(gy_t, cd)?;
    let x = e.convert(x_t, cd)?;
    let w = e.convert(w_t, cd)?;
    let n = w.rank().saturating_sub(2);
    if x.rank() != n + 2 || gy.rank() != n + 2 {
        return Err(LowerError::Unsupported(
            "convolution_backward of an unbatched input".into(),
        ));
    }
    let strides = per_dim(op.ints_opt("stride"), n, 1);
    let dilation = per_dim(op.ints_opt("dilation"), n, 1);
    let padding = per_dim(op.ints_opt("padding"), n, 0);
    let groups = op.int_or("groups", 1);
    let (cout, cin_g) = (w.shape()[0], w.shape()[1]);
    let cin = x.shape()[1];
    if groups < 1 || cout % groups != 0 || cin != cin_g * groups {
        return Err(LowerError::Invalid(format!(
            "weight {} does not fit input {} with {groups} groups",
            w.ty, x.ty
        )));
    }
    let k: Vec<i64> = w.shape()[2..].to_vec();
    let spatial: Vec<i64> = (2..2 + n as i64).collect();
    // The graph lists a result per output it did not drop (`as_none`): all three, or
    // those `output_mask` asks for.
    let present: Vec<bool> = match op.results.len() {
        3 => vec![true; 3],
        r if r == mask.iter().filter(|&&m| m).count() => mask.clone(),
        r => {
            return Err(LowerError::Invalid(format!(
                "{r} results for output_mask {mask:?}"
            )))
        }
    };
    let result_of = |i: usize| -> LResult<&TensorType> {
        op.result(present[..i].iter().filter(|&&p| p).count())
    };
    let mut out = Vec::new();

    // grad_input
    if present[0] {
        out.push(if mask[0] {
            let mut grouped = vec![groups, cout / groups, cin_g];
            grouped.extend_from_slice(&k);
            let mut perm = vec![0, 2, 1];
            perm.extend(3..3 + n as i64);
            let mut flat = vec![cin, cout / groups];
            flat.extend_from_slice(&k);
            let wk = e.reshape(&e.transpose(&e.reshape(&w, &grouped)?, &perm)?, &flat)?;
            let wk = e.reverse(&wk, &spatial)?;
            let mut pads = Vec::new();
            let mut crop = Vec::new();
            for i in 0..n {
                let edge = dilation[i] * (k[i] - 1);
                let lo = edge - padding[i];
                let hi = x.shape()[i + 2] - (gy.shape()[i + 2] - 1) * strides[i] - 1 + padding[i];
                pads.push((lo.max(0), hi.max(0)));
                crop.push(((-lo).max(0), (-hi).max(0)));
            }
            let params = ConvParams {
                strides: vec![1; n],
                padding: pads,
                lhs_dilation: strides.clone(),
                rhs_dilation: dilation.clone(),
                feature_groups: groups,
                batch_groups: 1,
            };
            // A negative padding crops the dilated gradient: cropped first.
            let gyc = crop_spatial(e, &gy, &crop, &strides)?;
            let gx = e.convolution(&gyc, &wk, &params)?;
            e.convert(&gx, result_of(0)?.dtype)?
        } else {
            e.constant(result_of(0)?, 0.0)?
        });
    }

    // grad_weight
    if present[1] {
        out.push(if mask[1] {
            let mut perm = vec![1, 0];
            perm.extend(spatial.iter().copied());
            let mut xt = e.transpose(&x, &perm)?;
            let gyt = e.transpose(&gy, &perm)?;
            let mut pads = Vec::new();
            for i in 0..n {
                let h = x.shape()[i + 2];
                let reach = (k[i] - 1) * dilation[i] + (gy.shape()[i + 2] - 1) * strides[i] + 1;
                let hi = reach - h - padding[i];
                if hi < 0 {
                    // Input rows past the last window: cropped.
                    let mut limit = xt.shape().to_vec();
                    limit[i + 2] = h + hi;
                    let start = vec![0; xt.rank()];
                    xt = e.slice(&xt, &start, &limit, &vec![1; xt.rank()])?;
                }
                pads.push((padding[i], hi.max(0)));
            }
            let params = ConvParams {
                strides: dilation.clone(),
                padding: pads,
                lhs_dilation: vec![1; n],
                rhs_dilation: strides.clone(),
                feature_groups: 1,
                batch_groups: groups,
            };
            // [Cin / groups, Cout, k...] -> [Cout, Cin / groups, k...]
            let gw = e.convolution(&xt, &gyt, &params)?;
            let gw = e.transpose(&gw, &perm)?;
            e.convert(&gw, result_of(1)?.dtype)?
        } else {
            e.constant(result_of(1)?, 0.0)?
        });
    }

    // grad_bias
    if present[2] {
        let ty = result_of(2)?;
        out.push(if mask[2] {
            let dims: Vec<i64> = (0..gy.rank() as i64).filter(|&d| d != 1).collect();
            let gb = e.reduce(&gy, 0.0, &dims, tpuc_dialects::stablehlo::ReduceKind::Add)?;
            e.reshape(&e.convert(&gb, ty.dtype)?, &ty.shape)?
        } else {
            e.constant(ty, 0.0)?
        });
    }
    Ok(out)
}

/// Crops `(low, high)` positions of the stride-dilated form of `x`'s spatial dims: a
/// dilated position maps to an element when it falls on a multiple of the stride,
/// so `low` rounds up to whole elements (any remainder stays as the dilated
/// gradient's leading holes, which the caller's zero low padding already accounts
/// for only when the crop is a multiple of the stride; otherwise refused).
fn crop_spatial(e: &Emitter, x: &TValue, crop: &[(i64, i64)], strides: &[i64]) -> LResult<TValue> {
    if crop.iter().all(|&(l, h)| l == 0 && h == 0) {
        return Ok(x.clone());
    }
    let mut start = vec![0; x.rank()];
    let mut limit = x.shape().to_vec();
    for (i, &(l, h)) in crop.iter().enumerate() {
        if l % strides[i] != 0 || h % strides[i] != 0 {
            return Err(LowerError::Unsupported(format!(
                "convolution_backward with padding larger than the kernel's reach ({l}, {h}) that is not a multiple of the stride {}",
                strides[i]
            )));
        }
        start[i + 2] = l / strides[i];
        limit[i + 2] -= h / strides[i];
    }
    Ok(e.slice(x, &start, &limit, &vec![1; x.rank()])?)
}

/// A transposed convolution as a regular one: the input is dilated by the stride, the
/// kernel `[Cin, Cout/g, k...]` becomes `[Cout, Cin/g, k...]` with its window flipped,
/// and the padding becomes `dilation * (k - 1) - padding` (plus `output_padding` high).
#[allow(clippy::too_many_arguments)]
fn transposed_kernel(
    op: &AtenOp,
    e: &Emitter,
    w: &TValue,
    n: usize,
    groups: i64,
    strides: &[i64],
    padding: &[(i64, i64)],
    dilation: &[i64],
) -> LResult<(TValue, ConvParams)> {
    let output_padding = per_dim(op.ints_opt("output_padding"), n, 0);
    let (cin, cout_g) = (w.shape()[0], w.shape()[1]);
    if groups < 1 || cin % groups != 0 {
        return Err(LowerError::Invalid(format!(
            "{cin} input channels do not split into {groups} groups"
        )));
    }
    let k = &w.shape()[2..];
    let mut grouped = vec![groups, cin / groups, cout_g];
    grouped.extend_from_slice(k);
    let wg = e.reshape(w, &grouped)?;
    let mut perm = vec![0, 2, 1];
    perm.extend((3..3 + n as i64).collect::<Vec<_>>());
    let wt = e.transpose(&wg, &perm)?;
    let mut flat = vec![groups * cout_g, cin / groups];
    flat.extend_from_slice(k);
    let wk = e.reshape(&wt, &flat)?;
    let spatial: Vec<i64> = (2..2 + n as i64).collect();
    let wk = e.reverse(&wk, &spatial)?;
    let padding = (0..n)
        .map(|i| {
            let edge = dilation[i] * (k[i] - 1);
            (edge - padding[i].0, edge - padding[i].1 + output_padding[i])
        })
        .collect();
    let params = ConvParams {
        strides: vec![1; n],
        padding,
        lhs_dilation: strides.to_vec(),
        rhs_dilation: dilation.to_vec(),
        feature_groups: groups,
        batch_groups: 1,
    };
    Ok((wk, params))
}

/// An operand of an einsum with one label per dim.
struct Labelled {
    value: TValue,
    labels: Vec<char>,
}

/// Sums out every dim of `x` whose label is not in `keep`.
fn sum_out(e: &Emitter, x: Labelled, keep: &dyn Fn(char) -> bool) -> LResult<Labelled> {
    let dims: Vec<i64> = (0..x.labels.len())
        .filter(|&i| !keep(x.labels[i]))
        .map(|i| i as i64)
        .collect();
    if dims.is_empty() {
        return Ok(x);
    }
    let zero = 0.0;
    let value = e.reduce(
        &x.value,
        zero,
        &dims,
        tpuc_dialects::stablehlo::ReduceKind::Add,
    )?;
    let labels = x.labels.iter().copied().filter(|&c| keep(c)).collect();
    Ok(Labelled { value, labels })
}

/// `einsum(equation, tensors)` as a chain of pairwise `dot_general`s. Supports explicit
/// and implicit output, any number of operands; repeated labels within one operand
/// (diagonals) and `...` are reported as unsupported.
fn einsum(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let eq: String = op
        .string_opt("equation")
        .ok_or_else(|| LowerError::Invalid("missing equation".into()))?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if eq.contains("...") {
        return Err(LowerError::Unsupported(
            "einsum with `...` is not supported yet".into(),
        ));
    }
    let (lhs, out) = match eq.split_once("->") {
        Some((l, o)) => (l.to_string(), o.chars().collect::<Vec<char>>()),
        None => {
            // Implicit output: labels seen exactly once, alphabetically.
            let mut once: Vec<char> = eq
                .chars()
                .filter(|c| c.is_alphabetic() && eq.matches(*c).count() == 1)
                .collect();
            once.sort();
            (eq.clone(), once)
        }
    };
    let specs: Vec<Vec<char>> = lhs.split(',').map(|s| s.chars().collect()).collect();
    let tensors = op.tensor_list("tensors");
    if specs.len() != tensors.len() {
        return Err(LowerError::Invalid(format!(
            "equation `{eq}` names {} operands, got {}",
            specs.len(),
            tensors.len()
        )));
    }
    let acc_dtype = accumulator(ty.dtype);
    let mut items = Vec::new();
    for (spec, t) in specs.iter().zip(&tensors) {
        if spec.len() != t.rank() {
            return Err(LowerError::Invalid(format!(
                "`{}` does not match operand {}",
                spec.iter().collect::<String>(),
                t.ty
            )));
        }
        let mut seen = spec.clone();
        seen.sort();
        seen.dedup();
        if seen.len() != spec.len() {
            return Err(LowerError::Unsupported(
                "einsum with a repeated label in one operand (diagonal) is not supported yet"
                    .into(),
            ));
        }
        items.push(Labelled {
            value: e.convert(t, ty.dtype)?,
            labels: spec.clone(),
        });
    }
    let mut rest = items.into_iter();
    let mut cur = rest
        .next()
        .ok_or_else(|| LowerError::Invalid("einsum needs an operand".into()))?;
    let remaining: Vec<Labelled> = rest.collect();
    for (i, next) in remaining.into_iter().enumerate() {
        let later: Vec<char> = specs[i + 2..]
            .iter()
            .flatten()
            .copied()
            .chain(out.iter().copied())
            .collect();
        let needed = |c: char, other: &[char]| later.contains(&c) || other.contains(&c);
        let nl = next.labels.clone();
        let cl = cur.labels.clone();
        let a = sum_out(e, cur, &|c| needed(c, &nl))?;
        let b = sum_out(e, next, &|c| needed(c, &cl))?;
        let batch: Vec<char> = a
            .labels
            .iter()
            .copied()
            .filter(|c| b.labels.contains(c) && later.contains(c))
            .collect();
        let contract: Vec<char> = a
            .labels
            .iter()
            .copied()
            .filter(|c| b.labels.contains(c) && !later.contains(c))
            .collect();
        let pos = |l: &[char], c: char| l.iter().position(|&x| x == c).unwrap_or(0) as i64;
        let dims = DotDims {
            lhs_batch: batch.iter().map(|&c| pos(&a.labels, c)).collect(),
            rhs_batch: batch.iter().map(|&c| pos(&b.labels, c)).collect(),
            lhs_contract: contract.iter().map(|&c| pos(&a.labels, c)).collect(),
            rhs_contract: contract.iter().map(|&c| pos(&b.labels, c)).collect(),
        };
        let value = e.dot_general_to(&a.value, &b.value, &dims, acc_dtype)?;
        let value = e.convert(&value, ty.dtype)?;
        let mut labels = batch.clone();
        labels.extend(a.labels.iter().filter(|c| !b.labels.contains(c)));
        labels.extend(b.labels.iter().filter(|c| !a.labels.contains(c)));
        cur = Labelled { value, labels };
    }
    let cur = sum_out(e, cur, &|c| out.contains(&c))?;
    let perm: Vec<i64> = out
        .iter()
        .map(|&c| {
            cur.labels
                .iter()
                .position(|&x| x == c)
                .map(|p| p as i64)
                .ok_or_else(|| {
                    LowerError::Invalid(format!("output label `{c}` is not an input label"))
                })
        })
        .collect::<LResult<_>>()?;
    let v = e.transpose(&cur.value, &perm)?;
    Ok(vec![e.reshape(&v, &ty.shape)?])
}
