//! Softmax over one axis, as `aten._softmax` lowers (and as PyTorch decomposes it):
//! `e = exp(x - broadcast(max(x, d))); e / broadcast(sum(e, d))`.

use mlir_sys::MlirOperation;

use super::{binary, broadcast, def, reduce, result, same, ty, Found, Reduction};

pub(super) fn softmax(root: MlirOperation) -> Option<Found> {
    let (e, sum_b) = binary(root, "stablehlo.divide")?;
    let exp = def(e, "stablehlo.exponential")?;
    let (bs, s, sum_dims) = broadcast(sum_b)?;
    let (rs, summed, dims) = reduce(s, Reduction::Sum)?;
    let sub = def(ir_operand(exp), "stablehlo.subtract")?;
    let (x, max_b) = binary(sub, "stablehlo.subtract")?;
    let (bm, m, max_dims) = broadcast(max_b)?;
    let (rm, maxed, max_reduced) = reduce(m, Reduction::Max)?;
    let t = ty(x)?;
    let [d] = dims[..] else { return None };
    let kept: Vec<i64> = (0..t.rank() as i64).filter(|&i| i != d).collect();
    let one_type = [e, sum_b, max_b, result(root), result(sub)]
        .iter()
        .all(|v| ty(*v).as_ref() == Some(&t));
    if !same(summed, e)
        || !same(maxed, x)
        || max_reduced != dims
        || sum_dims != kept
        || max_dims != kept
        || !one_type
        || !t.dtype.is_float()
    {
        return None;
    }
    Some(Found {
        name: "aten._softmax.default",
        attributes: vec![
            ("dim", format!("{d} : i64")),
            ("half_to_float", "false".to_string()),
        ],
        inputs: vec![x],
        ops: vec![rm, bm, sub, exp, rs, bs, root],
        root,
    })
}

fn ir_operand(op: MlirOperation) -> mlir_sys::MlirValue {
    super::ir::operands(op)[0]
}
