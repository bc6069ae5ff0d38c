//! Scaled dot-product attention: `softmax(Q K^T * scale + mask) V`.
//!
//! The form matched is the one the lowerings give for attention written with 4-d (or
//! higher) matmuls, as Hugging Face's eager attention and `aten.matmul` graphs are:
//!
//! - `S = dot_general(Q, K)` over the last dimension of both, every dimension before
//!   the last two batched (or `K` given transposed, `dot_general(Q, transpose(K))`; a
//!   transpose that also moves the heads, GPT-2's `[B, S, H, D]` to `[B, H, D, S]` that
//!   simplify merged from two, is split again: the key operand is a new transpose to
//!   `[B, H, S, D]` and the swap of the last two stays in the pattern);
//! - `S * c` or `S / c` for a splat `c` (the `scale` attribute: `c` or `1/c`), or `S`
//!   itself (`scale = 1.0`);
//! - an optional mask: `S + M` (an additive mask; an operand of the composite unless it
//!   is a constant causal mask) or `select(C, -inf, S)` with a constant `C`;
//! - the softmax composite of `aten-outline-composites` over the last dimension;
//! - `dot_general(P, V)`, the root.
//!
//! **Causal flag.** A constant mask that is exactly PyTorch's `is_causal` mask (top
//! left aligned: 0 where key position `j <= i`, and `-inf` or at most the dtype's
//! lowest finite value above the diagonal, the value Hugging Face uses) becomes
//! `is_causal = true` and no operand; the decomposition keeps the constant, so the
//! program's numbers are unchanged.
//!
//! **Grouped-query attention.** When both `K` and `V` are Hugging Face's `repeat_kv` of
//! fewer heads (`reshape(broadcast_in_dim(...))` repeating each head `n` times in
//! place), the composite takes the unrepeated key and value with `enable_gqa = true`,
//! PyTorch's own flag for that layout (what TorchTPU's `fold_gqa` produces): a backend
//! with a fused kernel reads each key/value head once. The decomposition has the
//! repeat folded out too ([`fold_gqa`]): its products run over groups of query heads
//! and the unrepeated key and value, so a backend that inlines it (XLA) never makes
//! the repeated copy.
//!
//! Core ATen's 3-d form matches too: each matmul as `bmm` between reshapes that
//! collapse the batch dimensions into one and restore them after (`K` transposed
//! before its reshape, the `repeat_kv` of `V` reshaped straight to 3-d).
//!
//! Not matched (left as they are): pre-scaled operands (`Q * s` and `K * s` before the
//! product, as torch's own SDPA decomposition writes it), boolean masks that are not
//! constant, softmax that is not a
//! composite (at `-O1` and below), dtype-changing forms, and any intermediate read
//! outside the pattern.

use mlir_sys::{MlirOperation, MlirValue};
use tpuc_artifact::DType;
use tpuc_dialects::TensorType;

use super::{
    binary, composite_attribute, def, dot_dims, either, float_attr, ir, is, result, same, ty, Found,
};

pub(super) fn sdpa(root: MlirOperation) -> Option<Found> {
    if !is(root, "stablehlo.dot_general") && !is(root, "stablehlo.reshape") {
        return None;
    }
    // A cheap test first (this runs on every product and reshape): the probabilities,
    // through the bmm form's reshape, come from a composite.
    let dot = if is(root, "stablehlo.dot_general") {
        root
    } else {
        def(*ir::operands(root).first()?, "stablehlo.dot_general")?
    };
    let lhs = *ir::operands(dot).first()?;
    let lhs = def(lhs, "stablehlo.reshape").map_or(lhs, |r| ir::operands(r)[0]);
    def(lhs, "stablehlo.composite")?;
    let out_t = ty(result(root))?;
    let r = out_t.shape.len();
    let pv = matmul(result(root), r)?;
    if pv.b_contract != r as i64 - 2 {
        return None;
    }
    let (p, v_in) = (pv.a, pv.b);
    let p_t = ty(p)?;
    if r < 3 || p_t.shape.len() != r || !matches!(p_t.dtype, DType::F32 | DType::F64) {
        return None;
    }
    let mut ops = pv.ops;

    // The softmax over the last dimension.
    let soft = def(p, "stablehlo.composite")?;
    if !is_last_dim_softmax(soft, r, p_t.dtype) {
        return None;
    }
    ops.push(soft);
    let x = ir::operands(soft)[0];
    if ty(x).as_ref() != Some(&p_t) {
        return None;
    }

    // The mask.
    let mut mask_input = None;
    let mut causal = false;
    let scaled = if let Some(add) = def(x, "stablehlo.add") {
        let (s, m) = either(add, "stablehlo.add", |s, m| scale_of(s).map(|_| (s, m)))?;
        if ty(m).as_ref() != Some(&p_t) {
            return None;
        }
        if is_causal_additive(m, p_t.dtype) {
            causal = true;
        } else if ir::defining_op(m).is_some_and(super::is_constant_like) {
            // A constant mask that is not causal stays inside, as a constant.
        } else {
            mask_input = Some(m);
        }
        ops.push(add);
        s
    } else if let Some(sel) = def(x, "stablehlo.select") {
        let a = ir::operands(sel);
        let (c, fill, s) = (a[0], a[1], a[2]);
        if !super::splat_is(fill, f64::NEG_INFINITY) || !is_causal_select(c) {
            return None;
        }
        causal = true;
        ops.push(sel);
        s
    } else {
        x
    };
    let (scale, scale_op) = scale_of(scaled)?;
    let scores = match scale_op {
        Some(op) => {
            ops.push(op);
            ir::operands(op)[0]
        }
        None => scaled,
    };
    let qk = matmul(scores, r)?;
    ops.extend(qk.ops);
    let (q, k_in) = (qk.a, qk.b);
    let mut split = None;
    let k_in = if qk.b_contract == r as i64 - 1 {
        k_in
    } else if ty(k_in)?.shape.len() == r {
        // K given transposed: take the transpose into the pattern.
        let t = def(k_in, "stablehlo.transpose")?;
        let mut swap: Vec<i64> = (0..r as i64).collect();
        swap.swap(r - 1, r - 2);
        let perm = ir::i64_array(t, "permutation")?;
        if perm != swap {
            // One transpose that also moves the heads (GPT-2's `[B, S, H, D]` to
            // `[B, H, D, S]`, two transposes that simplify merged): the key is its
            // operand with the last two dimensions put back, made below.
            let mut key_perm = perm;
            key_perm.swap(r - 1, r - 2);
            split = Some((t, key_perm, swap));
        }
        ops.push(t);
        ir::operands(t)[0]
    } else {
        return None;
    };

    // Grouped-query attention: both K and V repeated the same number of times.
    let (mut key, mut value, mut gqa) = (k_in, v_in, false);
    if let (None, Some((k0, k_ops, nk)), Some((v0, v_ops, nv))) =
        (&split, repeat_kv(k_in, r), repeat_kv(v_in, r))
    {
        if nk == nv {
            key = k0;
            value = v0;
            gqa = true;
            ops.extend(k_ops);
            ops.extend(v_ops);
        }
    }

    let dtype = p_t.dtype;
    let same_dtype = [q, key, value, result(root)]
        .iter()
        .all(|v| ty(*v).is_some_and(|t| t.dtype == dtype && t.shape.len() == r));
    if !same_dtype || out_t.dtype != dtype {
        return None;
    }

    let mut names = vec!["\"query\"", "\"key\"", "\"value\""];
    let mut inputs = vec![q, key, value];
    if let Some(m) = mask_input {
        names.push("\"attn_mask\"");
        inputs.push(m);
    }
    let mut attributes = Vec::new();
    if gqa {
        attributes.push(("enable_gqa", "true".to_string()));
    }
    if causal {
        attributes.push(("is_causal", "true".to_string()));
    }
    attributes.push(("operand_names", format!("[{}]", names.join(", "))));
    attributes.push(("scale", float_attr(scale, DType::F64)?));
    if let Some((t, key_perm, swap)) = split {
        // Everything else matched: split the merged transpose into `key` (a new op,
        // the composite's operand) and the swap of its last two dimensions (in the
        // pattern). The program computes the same; if outlining then refuses the
        // pattern, the split stays, and XLA merges the two again.
        let kt = ty(k_in)?;
        let shape: Vec<i64> = key_perm.iter().map(|&d| kt.shape[d as usize]).collect();
        let ctx = ir::context(t);
        let key_type = ir::parse_type(ctx, &TensorType::new(shape, kt.dtype).mlir())?;
        let perm_text = |p: &[i64]| {
            let p: Vec<String> = p.iter().map(i64::to_string).collect();
            format!("array<i64: {}>", p.join(", "))
        };
        let new_key = ir::create_op_before(
            t,
            "stablehlo.transpose",
            &[k_in],
            &[key_type],
            &[(
                "permutation",
                ir::parse_attribute(ctx, &perm_text(&key_perm))?,
            )],
        );
        ir::set_operand(t, 0, result(new_key));
        ir::set_attribute(t, "permutation", &perm_text(&swap));
        inputs[1] = result(new_key);
    }
    Some(Found {
        name: "aten.scaled_dot_product_attention.default",
        attributes,
        inputs,
        ops,
        root,
    })
}

/// A batched matmul of rank-`r` operands producing `v`.
struct Matmul {
    a: MlirValue,
    /// The right operand, of rank `r`; in the `bmm` form, its 3-d reshape when that
    /// reshape reads a value of another rank (a `repeat_kv` broadcast: see
    /// [`repeat_kv`]).
    b: MlirValue,
    /// `b`'s contracted dimension, counted in rank `r` (`r - 1` or `r - 2`).
    b_contract: i64,
    ops: Vec<MlirOperation>,
}

/// `v` as one `dot_general` over the last dimension of `a` with every dimension before
/// the last two batched, or as Core ATen's `bmm` form of it:
/// `reshape(dot_general(reshape(a), reshape(b)))`, the batch dimensions collapsed into
/// one and restored after.
fn matmul(v: MlirValue, r: usize) -> Option<Matmul> {
    let op = ir::defining_op(v)?;
    let ri = r as i64;
    if r < 3 {
        return None;
    }
    if is(op, "stablehlo.dot_general") {
        let (a, b) = binary(op, "stablehlo.dot_general")?;
        let batch: Vec<i64> = (0..ri - 2).collect();
        let b_contract = [ri - 1, ri - 2]
            .into_iter()
            .find(|&c| dot_dims(op, &batch, ri - 1, c))?;
        return Some(Matmul {
            a,
            b,
            b_contract,
            ops: vec![op],
        });
    }
    let dot = def(ir::operands(op).first().copied()?, "stablehlo.dot_general")
        .filter(|_| is(op, "stablehlo.reshape"))?;
    let (a3, b3) = binary(dot, "stablehlo.dot_general")?;
    let b_contract = if dot_dims(dot, &[0], 2, 2) {
        ri - 1
    } else if dot_dims(dot, &[0], 2, 1) {
        ri - 2
    } else {
        return None;
    };
    let vt = ty(v)?;
    if vt.shape.len() != r {
        return None;
    }
    let lead = &vt.shape[..r - 2];
    let rows: i64 = lead.iter().product();
    // `x` (rank r, leading dimensions `lead`) reshaped to `[rows, ., .]` is `x3`.
    let collapses = |x: MlirValue, x3: MlirValue| {
        let (Some(xt), Some(x3t)) = (ty(x), ty(x3)) else {
            return false;
        };
        xt.shape.len() == r
            && xt.shape[..r - 2] == *lead
            && x3t.shape[..] == [rows, xt.shape[r - 2], xt.shape[r - 1]]
    };
    let ra = def(a3, "stablehlo.reshape")?;
    let a = ir::operands(ra)[0];
    if !collapses(a, a3) {
        return None;
    }
    let mut ops = vec![op, dot, ra];
    let b = match def(b3, "stablehlo.reshape") {
        Some(rb) if collapses(ir::operands(rb)[0], b3) => {
            ops.push(rb);
            ir::operands(rb)[0]
        }
        _ => b3,
    };
    Some(Matmul {
        a,
        b,
        b_contract,
        ops,
    })
}

/// A softmax composite (`aten._softmax.default` without `half_to_float`, or
/// `aten.softmax.int` in the tensor's own `dtype`) over the last of `rank` dimensions.
fn is_last_dim_softmax(op: MlirOperation, rank: usize, dtype: DType) -> bool {
    let dtype_name = match dtype {
        DType::F32 => "\"f32\"",
        _ => "\"f64\"",
    };
    if ir::attribute(op, "composite_attributes").is_none() {
        return false;
    }
    let name = ir::attribute_text(op, "name").unwrap_or_default();
    let entry = |key: &str| composite_attribute(op, key);
    let dim_ok = entry("dim").is_some_and(|d| {
        let d = d.trim_end_matches(" : i64");
        d == "-1" || d == (rank - 1).to_string()
    });
    let flags_ok = match name.as_str() {
        "\"aten._softmax.default\"" => entry("half_to_float").is_none_or(|h| h == "false"),
        "\"aten.softmax.int\"" => entry("dtype").is_none_or(|d| d == dtype_name),
        _ => false,
    };
    ir::operands(op).len() == 1 && dim_ok && flags_ok
}

/// The scale applied to `v`: `(c, Some(op))` for `S * c` or `S / c` (`1/c`) with a
/// splat `c`, `(1.0, None)` when `v` is the scores' product itself.
fn scale_of(v: MlirValue) -> Option<(f64, Option<MlirOperation>)> {
    // The scores' product: a `dot_general`, or the reshape after one (`bmm` form;
    // `matmul` checks which).
    let is_product =
        |op: MlirOperation| is(op, "stablehlo.dot_general") || is(op, "stablehlo.reshape");
    let op = ir::defining_op(v)?;
    if is_product(op) {
        return Some((1.0, None));
    }
    let (a, c) = binary(op, ir::op_name(op))?;
    let c = ir::splat_value(c)?;
    let from_dot = ir::defining_op(a).is_some_and(is_product);
    match ir::op_name(op) {
        "stablehlo.multiply" if from_dot => Some((c, Some(op))),
        "stablehlo.divide" if from_dot && c != 0.0 => Some((1.0 / c, Some(op))),
        _ => None,
    }
}

/// The elements of the constant defining `v` (directly, or through a broadcast that
/// only adds leading dimensions), as f64, with the constant's shape.
fn constant_elements(v: MlirValue) -> Option<(Vec<i64>, Vec<f64>)> {
    let mut op = ir::defining_op(v)?;
    if is(op, "stablehlo.broadcast_in_dim") {
        let src = ir::operands(op)[0];
        let (src_rank, out_rank) = (ty(src)?.shape.len(), ty(v)?.shape.len());
        let trailing: Vec<i64> = ((out_rank - src_rank) as i64..out_rank as i64).collect();
        if src_rank < 2 || ir::i64_array(op, "broadcast_dimensions")? != trailing {
            return None;
        }
        op = ir::defining_op(src)?;
    }
    if is(op, "stablehlo.convert") {
        op = ir::defining_op(ir::operands(op)[0])?;
    }
    if !is(op, "stablehlo.constant") {
        return None;
    }
    let t = ty(result(op))?;
    let a = ir::attribute(op, "value")?;
    let n: i64 = t.shape.iter().product();
    // SAFETY: the attribute is checked to be dense elements of `n` values; each
    // accessor matches the element type tested before it.
    let values = unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(a) {
            return None;
        }
        let splat = mlir_sys::mlirDenseElementsAttrIsSplat(a);
        let at = |i: i64| if splat { 0 } else { i as isize };
        (0..n)
            .map(|i| match t.dtype {
                DType::F32 => Some(mlir_sys::mlirDenseElementsAttrGetFloatValue(a, at(i)) as f64),
                DType::F64 => Some(mlir_sys::mlirDenseElementsAttrGetDoubleValue(a, at(i))),
                DType::I8 => Some(mlir_sys::mlirDenseElementsAttrGetInt8Value(a, at(i)) as f64),
                DType::Bool => {
                    Some(mlir_sys::mlirDenseElementsAttrGetBoolValue(a, at(i)) as u8 as f64)
                }
                _ => None,
            })
            .collect::<Option<Vec<f64>>>()?
    };
    Some((t.shape, values))
}

/// Every `[L, S]` slice of `shape`'s values satisfies `f(i, j, value)`.
fn every_slice(shape: &[i64], values: &[f64], f: impl Fn(i64, i64, f64) -> bool) -> bool {
    let [.., l, s] = shape[..] else { return false };
    values
        .iter()
        .enumerate()
        .all(|(k, &x)| f((k as i64 / s) % l, k as i64 % s, x))
}

/// `m` is a constant additive causal mask: 0 on and below the diagonal, `-inf` or at
/// most the lowest finite value of `dtype` above it.
fn is_causal_additive(m: MlirValue, dtype: DType) -> bool {
    let Some((shape, values)) = constant_elements(m) else {
        return false;
    };
    let lowest = match dtype {
        DType::F32 => f32::MIN as f64,
        _ => f64::MIN,
    };
    every_slice(
        &shape,
        &values,
        |i, j, x| {
            if j <= i {
                x == 0.0
            } else {
                x <= lowest
            }
        },
    )
}

/// `c` is a constant boolean (or i8) selecting exactly the positions above the
/// diagonal.
fn is_causal_select(c: MlirValue) -> bool {
    let Some((shape, values)) = constant_elements(c) else {
        return false;
    };
    every_slice(&shape, &values, |i, j, x| (x != 0.0) == (j > i))
}

/// Hugging Face's `repeat_kv(x, n)` on `[..., H, S, D]`: `reshape(broadcast_in_dim(x'))`
/// to `[..., H*n, S, D]`, where `x'` is `x` (broadcast dimensions skipping the new
/// axis) or `reshape(x)` with a unit axis after the heads. Returns `x`, the ops and `n`.
fn repeat_kv(v: MlirValue, r: usize) -> Option<(MlirValue, Vec<MlirOperation>, i64)> {
    let outer = def(v, "stablehlo.reshape")?;
    let b = def(ir::operands(outer)[0], "stablehlo.broadcast_in_dim")?;
    let src = ir::operands(b)[0];
    let (bt, vt) = (ty(result(b))?, ty(v)?);
    if bt.shape.len() != r + 1 || r < 3 {
        return None;
    }
    let h = r - 3;
    let n = bt.shape[h + 1];
    let mut expect = bt.shape[..=h].to_vec();
    expect[h] *= n;
    expect.extend_from_slice(&bt.shape[h + 2..]);
    // Core ATen's bmm form reshapes the repeat straight to its 3-d operand.
    let collapsed = [
        expect[..r - 2].iter().product(),
        expect[r - 2],
        expect[r - 1],
    ];
    if (vt.shape != expect && vt.shape[..] != collapsed[..]) || n < 2 {
        return None;
    }
    let dims = ir::i64_array(b, "broadcast_dimensions")?;
    let mut skip: Vec<i64> = (0..=h as i64).collect();
    skip.extend((h as i64 + 2)..(r as i64 + 1));
    let identity: Vec<i64> = (0..r as i64 + 1).collect();
    let st = ty(src)?;
    if dims == skip && st.shape.len() == r {
        return Some((src, vec![outer, b], n));
    }
    let inner = def(src, "stablehlo.reshape")?;
    let x = ir::operands(inner)[0];
    let xt = ty(x)?;
    let mut unit = xt.shape.clone();
    unit.insert(h + 1, 1);
    (dims == identity && st.shape == unit && xt.shape.len() == r && !same(x, v))
        .then(|| (x, vec![outer, b, inner], n))
}

/// Folds the repeat of K and V out of the decomposition `body` of an `enable_gqa`
/// composite (arguments `query`, `key`, `value`, ...), as TorchTPU's `fold_gqa` does:
/// the two products that read the repeated heads become products over groups of
/// query heads and the unrepeated key/value, so no repeated copy is made.
///
/// With `H = Hkv * G` query heads (query head `h` reads key/value head `h / G`, the
/// layout `repeat_kv` makes), `Q` is viewed as `[..., Hkv, G, S, D]`: the scores are
/// `dot_general` over the batch and `Hkv` dimensions contracting `D` with `K`
/// `[..., Hkv, Sk, D]`, giving `[..., Hkv, G, S, Sk]`, and the output contracts `Sk` of
/// the probabilities viewed the same way with `V`; each is reshaped back to the
/// product it replaces (4-d or Core ATen's 3-d), a row-major view of the same
/// elements. Each element is the same sum of the same products. Leaves the body as it
/// is when it does not have exactly the two products this expects.
pub(super) fn fold_gqa(body: mlir_sys::MlirBlock) -> Option<()> {
    let args = ir::block_arguments(body);
    let [q, k, v, ..] = args[..] else {
        return None;
    };
    let (qt, kt, vt) = (ty(q)?, ty(k)?, ty(v)?);
    let r = qt.shape.len();
    if r < 3 || kt.shape.len() != r || vt.shape.len() != r {
        return None;
    }
    let (h, hkv) = (qt.shape[r - 3], kt.shape[r - 3]);
    if hkv == 0 || h % hkv != 0 || h / hkv < 2 || vt.shape[r - 3] != hkv {
        return None;
    }
    let g = h / hkv;
    let dots: Vec<MlirOperation> = ir::block_ops(body)
        .into_iter()
        .filter(|o| is(*o, "stablehlo.dot_general"))
        .collect();
    let [first, second] = dots[..] else {
        return None;
    };
    // The scores read the query (maybe through the bmm form's reshape).
    let reads_q = |op: MlirOperation| {
        let lhs = ir::operands(op)[0];
        same(lhs, q) || def(lhs, "stablehlo.reshape").is_some_and(|r| same(ir::operands(r)[0], q))
    };
    let (scores, output) = match (reads_q(first), reads_q(second)) {
        (true, false) => (first, second),
        (false, true) => (second, first),
        _ => return None,
    };
    // The probabilities, of rank r.
    let p = {
        let lhs = ir::operands(output)[0];
        match def(lhs, "stablehlo.reshape") {
            Some(op) if ty(ir::operands(op)[0])?.shape.len() == r => ir::operands(op)[0],
            _ => lhs,
        }
    };
    let pt = ty(p)?;
    if pt.shape.len() != r || pt.shape[r - 3] != h {
        return None;
    }
    let grouped = |t: &TensorType| {
        let mut s = t.shape[..r - 3].to_vec();
        s.extend([hkv, g]);
        s.extend_from_slice(&t.shape[r - 2..]);
        TensorType::new(s, t.dtype)
    };
    let batch: Vec<String> = (0..r - 2).map(|d| d.to_string()).collect();
    let batch = batch.join(", ");
    let product = |old: MlirOperation, lhs: MlirValue, rhs: MlirValue, rhs_contract: usize| {
        let lt = grouped(&ty(lhs)?);
        let rt = ty(rhs)?;
        let mut out = lt.shape[..r].to_vec();
        out.push(rt.shape[if rhs_contract == r - 1 { r - 2 } else { r - 1 }]);
        let out = TensorType::new(out, lt.dtype);
        let ctx = ir::context(old);
        let view = ir::create_op_before(
            old,
            "stablehlo.reshape",
            &[lhs],
            &[ir::parse_type(ctx, &lt.mlir())?],
            &[],
        );
        let dims = format!(
            "#stablehlo.dot<lhs_batching_dimensions = [{batch}], rhs_batching_dimensions = [{batch}], lhs_contracting_dimensions = [{}], rhs_contracting_dimensions = [{rhs_contract}]>",
            r
        );
        let mut attrs = vec![("dot_dimension_numbers", ir::parse_attribute(ctx, &dims)?)];
        if let Some(p) = ir::attribute(old, "precision_config") {
            attrs.push(("precision_config", p));
        }
        let dot = ir::create_op_before(
            old,
            "stablehlo.dot_general",
            &[result(view), rhs],
            &[ir::parse_type(ctx, &out.mlir())?],
            &attrs,
        );
        let back = ir::create_op_before(
            old,
            "stablehlo.reshape",
            &[result(dot)],
            &[ir::value_type(result(old))],
            &[],
        );
        ir::replace_uses(result(old), result(back));
        Some(())
    };
    product(scores, q, k, r - 1)?;
    product(output, p, v, r - 2)?;
    // The repeats and the old products are dead now.
    for op in ir::block_ops(body).into_iter().rev() {
        if !is(op, "func.return") && ir::results(op).iter().all(|r| !ir::has_uses(*r)) {
            ir::erase(op);
        }
    }
    Some(())
}
