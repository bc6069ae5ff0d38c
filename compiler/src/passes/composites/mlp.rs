//! Gated MLPs: `down(act(gate(x)) * up(x))`, the feed-forward block of Llama-family
//! decoders (SwiGLU, act = SiLU) and of Gemma (GeGLU, act = GELU), each projection a
//! Linear without bias.
//!
//! - A Linear is a `dot_general` of its input (last dimension contracted, no batch
//!   dimensions) with a weight in `nn.Linear`'s layout `[out, in]`, contracted on its
//!   dimension 1 (what `stablehlo-fold-transpose` leaves of `x @ W^T`). An input of
//!   rank above 2 may first be reshaped to `[rows, in]` and the product back to
//!   `[..., out]` (Core ATen's `view`, `mm`, `view`); both reshapes then keep the
//!   leading dimensions.
//! - The activation is an `aten.silu.default` or `aten.gelu.default` composite (from
//!   `aten-outline-composites`), or SiLU written out as `g * logistic(g)`.
//! - The gate and up projections read the same input. Phi-3 fuses them into one
//!   Linear whose output is split in halves on the last dimension (`chunk(2, -1)`:
//!   gate first, up second).
//!
//! The composite is `tpuc.gated_mlp` (no producer or consumer of composites names
//! this computation yet) with `activation = "silu" | "gelu" | "gelu_tanh"` and the
//! operands `x`, gate weight, up weight, down weight, each weight `[out, in]`:
//! `down_weight · (act(gate_weight · x) ⊙ (up_weight · x))` over the last dimension of
//! `x`. The fused form has `fused_gate_up = true` and the operands `x`, the gate/up
//! weight `[2 * inner, in]` (gate rows first) and the down weight. It does not fire on
//! projections with a bias, a weight in `[in, out]` layout, gate and up reading
//! different inputs or other than the two halves of one product, or any intermediate
//! read outside the block.

use mlir_sys::{MlirOperation, MlirValue};
use tpuc_dialects::TensorType;

use super::{
    composite_attribute, def, dot_dims, either, ir, is, result, same, slices_last_dim,
    split_source, ty, Found,
};

pub(super) fn gated_mlp(root: MlirOperation) -> Option<Found> {
    if !is(root, "stablehlo.reshape") && !is(root, "stablehlo.dot_general") {
        return None;
    }
    let down = linear(result(root))?;
    let product = def(down.input, "stablehlo.multiply")?;
    let (activation, act_ops, projections) =
        either(product, "stablehlo.multiply", |activated, up_out| {
            let (name, pre, act_ops) = activation(activated)?;
            if let (Some(gate), Some(up)) = (linear(pre), linear(up_out)) {
                return same(gate.input, up.input).then_some((
                    name,
                    act_ops,
                    Projections::Separate(gate, up),
                ));
            }
            let (fused, halves) = halves_of_one_linear(pre, up_out)?;
            Some((name, act_ops, Projections::Fused(fused, halves)))
        })?;
    let (mut linears, mut ops, mut inputs, mut attributes) =
        (Vec::new(), vec![product], Vec::new(), Vec::new());
    attributes.push(("activation", format!("\"{activation}\"")));
    match projections {
        Projections::Separate(gate, up) => {
            inputs.extend([gate.input, gate.weight, up.weight, down.weight]);
            linears.extend([gate, up]);
        }
        Projections::Fused(gate_up, halves) => {
            inputs.extend([gate_up.input, gate_up.weight, down.weight]);
            attributes.push(("fused_gate_up", "true".to_string()));
            ops.extend(halves);
            linears.push(gate_up);
        }
    }
    let t = ty(inputs[0])?;
    if !t.dtype.is_float()
        || !inputs
            .iter()
            .chain([&result(root)])
            .all(|v| ty(*v).is_some_and(|u| u.dtype == t.dtype))
        || !linears.iter().chain([&down]).all(|l| l.dims_ok())
    {
        return None;
    }
    ops.extend(act_ops);
    for l in linears.iter().chain([&down]) {
        ops.extend(&l.ops);
    }
    Some(Found {
        name: "tpuc.gated_mlp",
        attributes,
        inputs,
        ops,
        root,
    })
}

/// The gate and up projections: two Linears, or the two halves of one.
enum Projections {
    Separate(Linear, Linear),
    Fused(Linear, [MlirOperation; 2]),
}

/// `gate` and `up` as the first and second half, on the last dimension, of one
/// Linear's output (Phi-3's `chunk(2, -1)`): the Linear and the two slices.
fn halves_of_one_linear(gate: MlirValue, up: MlirValue) -> Option<(Linear, [MlirOperation; 2])> {
    let (gs, us) = (def(gate, "stablehlo.slice")?, def(up, "stablehlo.slice")?);
    let (y, shape) = split_source(gs, us)?;
    let n = shape[shape.len() - 1];
    if !slices_last_dim(gs, &shape, 0, n / 2, 1) || !slices_last_dim(us, &shape, n / 2, n, 1) {
        return None;
    }
    Some((linear(y)?, [gs, us]))
}

/// A bias-free Linear producing `v` (its dimension numbers checked by
/// [`Linear::dims_ok`], the costly part, once everything else matched).
struct Linear {
    /// What the Linear reads (before the reshape to rows, when there is one).
    input: MlirValue,
    /// `[out, in]`.
    weight: MlirValue,
    dot: MlirOperation,
    /// Its ops: the `dot_general` and the reshapes around it.
    ops: Vec<MlirOperation>,
}

impl Linear {
    /// The product contracts the last dimension of its input with the weight's
    /// dimension 1, nothing batched.
    fn dims_ok(&self) -> bool {
        let [lhs, _] = ir::operands(self.dot)[..] else {
            return false;
        };
        ty(lhs).is_some_and(|t| dot_dims(self.dot, &[], t.shape.len() as i64 - 1, 1))
    }
}

fn linear(v: MlirValue) -> Option<Linear> {
    let op = ir::defining_op(v)?;
    let (dot, after) = if is(op, "stablehlo.reshape") {
        (def(ir::operands(op)[0], "stablehlo.dot_general")?, Some(op))
    } else if is(op, "stablehlo.dot_general") {
        (op, None)
    } else {
        return None;
    };
    let [lhs, weight] = ir::operands(dot)[..] else {
        return None;
    };
    let (lt, wt) = (ty(lhs)?, ty(weight)?);
    if lt.shape.is_empty() || wt.shape.len() != 2 {
        return None;
    }
    let mut ops = vec![dot];
    let Some(after) = after else {
        return Some(Linear {
            input: lhs,
            weight,
            dot,
            ops,
        });
    };
    // `[lead..., in] -> [rows, in]`, then `[rows, out] -> [lead..., out]`.
    let before = def(lhs, "stablehlo.reshape")?;
    let input = ir::operands(before)[0];
    let (it, ot) = (ty(input)?, ty(result(after))?);
    let keeps_lead = |a: &TensorType, b: &TensorType| {
        a.shape.len() == b.shape.len()
            && a.shape.len() > 2
            && a.shape[..a.shape.len() - 1] == b.shape[..b.shape.len() - 1]
    };
    let rows: i64 = it.shape[..it.shape.len().saturating_sub(1)]
        .iter()
        .product();
    if !keeps_lead(&it, &ot)
        || lt.shape.len() != 2
        || lt.shape[0] != rows
        || it.shape.last() != lt.shape.last()
    {
        return None;
    }
    ops.extend([before, after]);
    Some(Linear {
        input,
        weight,
        dot,
        ops,
    })
}

/// The activation producing `v`: (its name in the composite, its operand, its ops).
fn activation(v: MlirValue) -> Option<(&'static str, MlirValue, Vec<MlirOperation>)> {
    let op = ir::defining_op(v)?;
    if is(op, "stablehlo.composite") {
        let [g] = ir::operands(op)[..] else {
            return None;
        };
        let name = match ir::attribute_text(op, "name")?.as_str() {
            "\"aten.silu.default\"" => "silu",
            "\"aten.gelu.default\"" => match composite_attribute(op, "approximate").as_deref() {
                None | Some("\"none\"") => "gelu",
                Some("\"tanh\"") => "gelu_tanh",
                Some(_) => return None,
            },
            _ => return None,
        };
        return (ty(g)? == ty(v)?).then(|| (name, g, vec![op]));
    }
    either(op, "stablehlo.multiply", |g, l| {
        let logistic = def(l, "stablehlo.logistic")?;
        (same(ir::operands(logistic)[0], g) && ty(g)? == ty(v)?)
            .then(|| ("silu", g, vec![logistic, op]))
    })
}
