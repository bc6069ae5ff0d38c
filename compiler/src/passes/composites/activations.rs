//! Elementwise activations: GELU in its tanh form and SiLU.
//!
//! - GELU (tanh): `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, as
//!   `aten.gelu(approximate="tanh")` lowers and as GPT-2's `NewGELUActivation` writes
//!   it (`x^3` as `x*x*x` or `pow(x, 3)`); every constant must be exactly the one
//!   above in the tensor's dtype. The erf form is not matched: its erf is a rational
//!   approximation of some thirty ops, not worth recognizing op by op.
//! - SiLU: `x * logistic(x)`.

use mlir_sys::{MlirOperation, MlirValue};

use super::{binary, def, either, ir, result, same, splat_is, ty, Found};

pub(super) fn gelu_tanh(root: MlirOperation) -> Option<Found> {
    either(root, "stablehlo.multiply", |half_x, one_plus| {
        let hm = def(half_x, "stablehlo.multiply")?;
        let x = either(hm, "stablehlo.multiply", |x, h| {
            splat_is(h, 0.5).then_some(x)
        })?;
        let add1 = def(one_plus, "stablehlo.add")?;
        let th = either(add1, "stablehlo.add", |t, one| {
            splat_is(one, 1.0).then_some(t)
        })?;
        let tanh = def(th, "stablehlo.tanh")?;
        let scaled = def(ir::operands(tanh)[0], "stablehlo.multiply")?;
        let sqrt_2_over_pi = (2.0 / std::f64::consts::PI).sqrt();
        let inner = either(scaled, "stablehlo.multiply", |w, c| {
            splat_is(c, sqrt_2_over_pi).then_some(w)
        })?;
        let inner_add = def(inner, "stablehlo.add")?;
        let mut cube_ops = Vec::new();
        let cubic = either(inner_add, "stablehlo.add", |x2, v| {
            if !same(x2, x) {
                return None;
            }
            let m = def(v, "stablehlo.multiply")?;
            let c3 = either(m, "stablehlo.multiply", |c3, k| {
                splat_is(k, 0.044715).then_some(c3)
            })?;
            cube_ops = cube(c3, x)?;
            Some(m)
        })?;
        let t = ty(x)?;
        let values = [half_x, one_plus, th, inner, result(inner_add), result(root)];
        if !t.dtype.is_float() || !values.iter().all(|v| ty(*v).as_ref() == Some(&t)) {
            return None;
        }
        let mut ops = vec![hm, add1, tanh, scaled, inner_add, cubic, root];
        ops.extend(cube_ops);
        Some(Found {
            name: "aten.gelu.default",
            attributes: vec![("approximate", "\"tanh\"".to_string())],
            inputs: vec![x],
            ops,
            root,
        })
    })
}

/// The ops computing `x^3` as `(x*x)*x`, `x*(x*x)` or `pow(x, 3)` into `v`.
fn cube(v: MlirValue, x: MlirValue) -> Option<Vec<MlirOperation>> {
    let op = ir::defining_op(v)?;
    if let Some((a, p)) = binary(op, "stablehlo.power") {
        return (same(a, x) && splat_is(p, 3.0)).then(|| vec![op]);
    }
    either(op, "stablehlo.multiply", |sq, x1| {
        if !same(x1, x) {
            return None;
        }
        let s = def(sq, "stablehlo.multiply")?;
        let (a, b) = binary(s, "stablehlo.multiply")?;
        (same(a, x) && same(b, x)).then(|| vec![s, op])
    })
}

pub(super) fn silu(root: MlirOperation) -> Option<Found> {
    either(root, "stablehlo.multiply", |x, l| {
        let logistic = def(l, "stablehlo.logistic")?;
        let t = ty(x)?;
        let ok = same(ir::operands(logistic)[0], x)
            && t.dtype.is_float()
            && ty(result(root)).as_ref() == Some(&t);
        ok.then(|| Found {
            name: "aten.silu.default",
            attributes: vec![],
            inputs: vec![x],
            ops: vec![logistic, root],
            root,
        })
    })
}
