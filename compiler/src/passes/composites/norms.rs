//! Layer norm and RMS norm over the trailing `k` dims of `x`.
//!
//! A statistic (mean, variance, its rsqrt) has either the leading shape of `x`
//! (broadcast back along the leading dims) or that shape with `k` trailing ones, as
//! `mean(..., keepdim=True)` gives (broadcast along every dim); a reshape between the
//! two may follow a mean. Means are `sum(v, dims) / n` with `n` the exact element count.
//!
//! - layer norm: the deviations `d = x - mean(x)`, optionally re-centred once more
//!   (`d - mean(d)`), or, as tpuc lowers `aten.layer_norm`/`native_layer_norm`, of the
//!   input shifted by each slice's first element (`s = x - x0`, `d = s - mean(s)`; both
//!   keep the result accurate for inputs with a large mean), then
//!   `d * rsqrt(mean(d*d) + eps)`,
//!   optionally `* weight`, optionally `+ bias` (both broadcast along the trailing dims);
//! - RMS norm, as Hugging Face Llama/Qwen/Gemma write it and as `aten.rms_norm`
//!   lowers: `x * rsqrt(mean(x*x) + eps)` (`x.pow(2)` is `x*x` after lowering) times a
//!   weight. Without a weight it does not fire: `odml.rms_norm` has a scale operand.

use mlir_sys::{MlirOperation, MlirValue};
use tpuc_dialects::TensorType;

use super::{
    binary, broadcast, def, either, float_attr, ir, reduce, result, same, splat_is, ty, Found,
    Reduction,
};

/// The normalization shared by both patterns: its input, its ops, epsilon and `k`.
struct Core {
    x: MlirValue,
    t: TensorType,
    k: usize,
    eps: f64,
    ops: Vec<MlirOperation>,
}

/// `mean(input)` defining `v`: (ops, input, dims). The count is checked against the
/// input's shape.
fn mean(v: MlirValue) -> Option<(Vec<MlirOperation>, MlirValue, Vec<i64>)> {
    let mut ops = Vec::new();
    let mut v = v;
    if let Some(r) = def(v, "stablehlo.reshape") {
        ops.push(r);
        v = ir::operands(r)[0];
    }
    let div = def(v, "stablehlo.divide")?;
    let (s, n) = binary(div, "stablehlo.divide")?;
    let (red, input, dims) = reduce(s, Reduction::Sum)?;
    let shape = ty(input)?.shape;
    let count: i64 = dims
        .iter()
        .map(|&d| shape.get(d as usize).copied())
        .product::<Option<i64>>()?;
    if !splat_is(n, count as f64) {
        return None;
    }
    if let Some(&r) = ops.first() {
        if ty(result(r))?.shape != keepdim_shape(&shape, dims.len()) {
            return None;
        }
    }
    ops.extend([div, red]);
    Some((ops, input, dims))
}

/// The shape of `x` with its last `k` dims set to 1.
fn keepdim_shape(shape: &[i64], k: usize) -> Vec<i64> {
    let r = shape.len();
    shape[..r - k]
        .iter()
        .copied()
        .chain(std::iter::repeat_n(1, k))
        .collect()
}

/// The trailing `k` dims of a rank-`r` tensor.
fn trailing(r: usize, k: usize) -> Vec<i64> {
    ((r - k) as i64..r as i64).collect()
}

/// `v` broadcasts a statistic back to `t`: (op, statistic).
fn stat_broadcast(v: MlirValue, t: &TensorType, k: usize) -> Option<(MlirOperation, MlirValue)> {
    let (op, s, dims) = broadcast(v)?;
    let st = ty(s)?;
    let r = t.rank();
    let leading: Vec<i64> = t.shape[..r - k].to_vec();
    let ok = if st.shape == leading {
        dims == (0..(r - k) as i64).collect::<Vec<_>>()
    } else {
        st.shape == keepdim_shape(&t.shape, k) && dims == (0..r as i64).collect::<Vec<_>>()
    };
    (ok && ty(v).as_ref() == Some(t) && st.dtype == t.dtype).then_some((op, s))
}

/// `v` broadcasts a vector of `t`'s trailing `k` dims along them: (op, vector).
fn trailing_vector(v: MlirValue, t: &TensorType, k: usize) -> Option<(MlirOperation, MlirValue)> {
    let (op, w, dims) = broadcast(v)?;
    let wt = ty(w)?;
    let r = t.rank();
    let ok = wt.shape == t.shape[r - k..]
        && wt.dtype == t.dtype
        && dims == trailing(r, k)
        && ty(v).as_ref() == Some(t);
    ok.then_some((op, w))
}

/// `rsqrt(stat + eps)` defining `v`: (ops, stat, eps).
fn rsqrt_plus_eps(v: MlirValue) -> Option<(Vec<MlirOperation>, MlirValue, f64)> {
    let rs = def(v, "stablehlo.rsqrt")?;
    let add = ir::defining_op(ir::operands(rs)[0])?;
    either(add, "stablehlo.add", |stat, e| {
        let eps = ir::splat_value(e)?;
        // The epsilon must be a splat of the statistic's type (not itself a statistic).
        (ty(e) == ty(stat)).then_some((vec![rs, add], stat, eps))
    })
}

/// `x - mean(x)` defining `v`: (ops, x, dims).
fn deviations(v: MlirValue) -> Option<(Vec<MlirOperation>, MlirValue, Vec<i64>)> {
    let sub = def(v, "stablehlo.subtract")?;
    let (x, mb) = binary(sub, "stablehlo.subtract")?;
    let (bop, m) = {
        let (op, m, _) = broadcast(mb)?;
        (op, m)
    };
    let (mut ops, input, dims) = mean(m)?;
    if !same(input, x) {
        return None;
    }
    let t = ty(x)?;
    stat_broadcast(mb, &t, dims.len())?;
    ops.extend([bop, sub]);
    Some((ops, x, dims))
}

/// `x - broadcast(reshape(x[..., 0:1, ..., 0:1]))` defining `v`: `x` shifted by the
/// first element of each slice over its trailing `k` dims. (ops, x).
fn shifted(v: MlirValue, k: usize) -> Option<(Vec<MlirOperation>, MlirValue)> {
    let sub = def(v, "stablehlo.subtract")?;
    let (x, b) = binary(sub, "stablehlo.subtract")?;
    let t = ty(x)?;
    let r = t.rank();
    let (bop, first) = stat_broadcast(b, &t, k)?;
    let mut ops = vec![sub, bop];
    let mut first = first;
    if let Some(rs) = def(first, "stablehlo.reshape") {
        ops.push(rs);
        first = ir::operands(rs)[0];
    }
    let slice = def(first, "stablehlo.slice")?;
    let starts = ir::i64_array(slice, "start_indices")?;
    let limits = ir::i64_array(slice, "limit_indices")?;
    let strides = ir::i64_array(slice, "strides")?;
    let ok = same(ir::operands(slice)[0], x)
        && starts.iter().all(|&s| s == 0)
        && strides.iter().all(|&s| s == 1)
        && limits == keepdim_shape(&t.shape, k)
        && r >= k;
    ops.push(slice);
    ok.then_some((ops, x))
}

/// `d * broadcast(rsqrt(mean(d*d) + eps))` defining `v`, with `d` the (re-centred)
/// deviations of some `x`.
fn layer_norm_core(v: MlirValue) -> Option<Core> {
    let mul = def(v, "stablehlo.multiply")?;
    either(mul, "stablehlo.multiply", |d, rb| {
        let t = ty(d)?;
        let (rb_op, rstd) = broadcast(rb).map(|(o, s, _)| (o, s))?;
        let (mut ops, var, eps) = rsqrt_plus_eps(rstd)?;
        let (var_ops, sq, dims) = mean(var)?;
        let sq_op = def(sq, "stablehlo.multiply")?;
        let (a, b) = binary(sq_op, "stablehlo.multiply")?;
        let k = dims.len();
        if !same(a, d) || !same(b, d) || k == 0 || dims != trailing(t.rank(), k) {
            return None;
        }
        stat_broadcast(rb, &t, k)?;
        // Two-pass and shifted forms first: read as one pass they would leave the
        // first centring (or the shift) out.
        let (d_ops, x) = match deviations(d) {
            Some((mut d_ops, dev, d_dims)) if d_dims == dims => {
                if let Some((first, x, _)) = deviations(dev).filter(|f| f.2 == dims) {
                    d_ops.extend(first);
                    (d_ops, x)
                } else if let Some((shift, x)) = shifted(dev, k) {
                    d_ops.extend(shift);
                    (d_ops, x)
                } else {
                    (d_ops, dev)
                }
            }
            _ => return None,
        };
        ops.extend(var_ops);
        ops.extend(d_ops);
        ops.extend([sq_op, rb_op, mul]);
        let one_type = [x, v, result(sq_op)]
            .iter()
            .all(|u| ty(*u).as_ref() == Some(&t));
        (one_type && t.dtype.is_float()).then_some(Core { x, t, k, eps, ops })
    })
}

pub(super) fn layer_norm(root: MlirOperation) -> Option<Found> {
    if !["stablehlo.add", "stablehlo.multiply"].contains(&ir::op_name(root)) {
        return None;
    }
    let out = result(root);
    let (core, weight, bias) = if ir::op_name(root) == "stablehlo.add" {
        either(root, "stablehlo.add", |a, bb| {
            let mut core = weighted(a).or_else(|| layer_norm_core(a).map(|c| (c, None)))?;
            let (bop, b) = trailing_vector(bb, &core.0.t, core.0.k)?;
            core.0.ops.push(bop);
            Some((core.0, core.1, Some(b)))
        })?
    } else if let Some((c, w)) = weighted(out) {
        (c, w, None)
    } else {
        (layer_norm_core(out)?, None, None)
    };
    let mut ops = core.ops;
    ops.push(root);
    let mut inputs = vec![core.x];
    inputs.extend(weight);
    inputs.extend(bias);
    let r = core.t.rank();
    let shape: Vec<String> = core.t.shape[r - core.k..]
        .iter()
        .map(i64::to_string)
        .collect();
    Some(Found {
        name: "aten.layer_norm.default",
        attributes: vec![
            (
                "normalized_shape",
                format!("array<i64: {}>", shape.join(", ")),
            ),
            ("eps", float_attr(core.eps, core.t.dtype)?),
            ("has_weight", weight.is_some().to_string()),
            ("has_bias", bias.is_some().to_string()),
        ],
        inputs,
        ops,
        root,
    })
}

/// `core * broadcast(weight)` defining `v` (either order).
fn weighted(v: MlirValue) -> Option<(Core, Option<MlirValue>)> {
    let mul = def(v, "stablehlo.multiply")?;
    either(mul, "stablehlo.multiply", |c, wb| {
        let mut core = layer_norm_core(c)?;
        let (wop, w) = trailing_vector(wb, &core.t, core.k)?;
        core.ops.extend([wop, mul]);
        Some((core, Some(w)))
    })
}

pub(super) fn rms_norm(root: MlirOperation) -> Option<Found> {
    either(root, "stablehlo.multiply", |wb, normed| {
        let nmul = def(normed, "stablehlo.multiply")?;
        let core = either(nmul, "stablehlo.multiply", |x, ib| {
            let t = ty(x)?;
            let (ib_op, inv) = broadcast(ib).map(|(o, s, _)| (o, s))?;
            let (mut ops, ms, eps) = rsqrt_plus_eps(inv)?;
            let (ms_ops, sq, dims) = mean(ms)?;
            let sq_op = ir::defining_op(sq)?;
            let squares_x = match binary(sq_op, "stablehlo.multiply") {
                Some((a, b)) => same(a, x) && same(b, x),
                None => binary(sq_op, "stablehlo.power")
                    .is_some_and(|(a, p)| same(a, x) && splat_is(p, 2.0)),
            };
            let k = dims.len();
            if !squares_x || k == 0 || dims != trailing(t.rank(), k) {
                return None;
            }
            stat_broadcast(ib, &t, k)?;
            let one_type = [normed, result(sq_op)]
                .iter()
                .all(|u| ty(*u).as_ref() == Some(&t));
            if !one_type || !t.dtype.is_float() {
                return None;
            }
            ops.extend(ms_ops);
            ops.extend([sq_op, ib_op, nmul]);
            Some(Core { x, t, k, eps, ops })
        })?;
        let (wop, w) = trailing_vector(wb, &core.t, core.k)?;
        if ty(result(root)).as_ref() != Some(&core.t) {
            return None;
        }
        let mut ops = core.ops;
        ops.extend([wop, root]);
        Some(Found {
            name: "odml.rms_norm",
            attributes: vec![("epsilon", float_attr(core.eps, core.t.dtype)?)],
            inputs: vec![core.x, w],
            ops,
            root,
        })
    })
}
