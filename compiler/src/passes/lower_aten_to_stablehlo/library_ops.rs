//! Operators that popular libraries register outside ATen and that appear in exported
//! models as they are: `transformers.grouped_mm_fallback` (the mixture-of-experts
//! grouped matmul of transformers 5) and `aten._grouped_mm`.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::{Cmp, DotDims, ReduceKind};
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::{AtenOp, LResult, LowerError};

pub fn lower(op: &AtenOp, e: &Emitter) -> Option<LResult<Vec<TValue>>> {
    match op.target.as_str() {
        "transformers.grouped_mm_fallback.default" | "aten._grouped_mm.default" => {
            Some(grouped_mm(op, e))
        }
        _ => None,
    }
}

/// `grouped_mm(input [S, K], weight [E, K, N], offs [E])`: rows `offs[i-1]..offs[i]` of
/// the input (sorted by expert) are multiplied by `weight[i]`; rows past `offs[E-1]` are
/// zero. Static shapes: every row is multiplied by every expert (`[S, E, N]`) and the
/// row's own expert is selected with a one-hot mask built from `offs` at run time. This
/// computes E times the work of a dense layer: correct everywhere, fast for small E.
fn grouped_mm(op: &AtenOp, e: &Emitter) -> LResult<Vec<TValue>> {
    let ty = op.result(0)?;
    let input = op.first_tensor()?;
    let weight = op
        .tensor_opt("weight")
        .or(op.tensor_opt("mat2"))
        .ok_or_else(|| LowerError::Invalid("missing weight".into()))?;
    let offs = op.tensor("offs")?;
    if input.rank() != 2 || weight.rank() != 3 || offs.rank() != 1 {
        return Err(LowerError::Unsupported(format!(
            "grouped_mm supports input [S, K], weight [E, K, N], offs [E]; got {}, {}, {}",
            input.ty, weight.ty, offs.ty
        )));
    }
    let (s, ne, n) = (input.shape()[0], weight.shape()[0], weight.shape()[2]);
    let acc = super::elementwise::accumulator(ty.dtype);
    let x = e.convert(input, ty.dtype)?;
    let w = e.convert(weight, ty.dtype)?;
    // all[s, e, n] = sum_k x[s, k] * w[e, k, n]
    let dims = DotDims {
        lhs_contract: vec![1],
        rhs_contract: vec![1],
        ..DotDims::default()
    };
    let all = e.dot_general_to(&x, &w, &dims, acc)?;
    // Expert of row r: the number of offsets <= r (E means "no expert": zero row).
    let rows = e.iota(&TensorType::new(vec![s, ne], DType::I64), 0)?;
    let ends = e.broadcast_in_dim(&e.convert(offs, DType::I64)?, &[s, ne], &[1])?;
    let past = e.convert(&e.compare(Cmp::Le, &ends, &rows)?, DType::I64)?;
    let group = e.reduce(&past, 0.0, &[1], ReduceKind::Add)?;
    let experts = e.iota(&TensorType::new(vec![s, ne], DType::I64), 1)?;
    let onehot = e.compare(
        Cmp::Eq,
        &e.broadcast_in_dim(&group, &[s, ne], &[0])?,
        &experts,
    )?;
    let mask = e.broadcast_in_dim(&e.convert(&onehot, acc)?, &[s, ne, n], &[0, 1])?;
    let picked = e.reduce(&e.mul(&all, &mask)?, 0.0, &[1], ReduceKind::Add)?;
    Ok(vec![e.convert(&picked, ty.dtype)?])
}
