//! torch.export's control-flow operators (`higher_order.*`) as StableHLO control flow.
//!
//! The importer keeps each as one op whose operands are its tensor arguments, grouped by
//! `tpuc.operand_segments`, with one region per subgraph (see `import.rs`). The driver
//! lowers those regions with the same walk as a function body, through the
//! [`LowerRegion`] callback, into the blocks built here:
//!
//! - `cond(pred, true_graph, false_graph, operands)` → `stablehlo.if`: each branch reads
//!   the operands from the enclosing block;
//! - `while_loop(cond_graph, body_graph, carried, additional)` → `stablehlo.while` over
//!   `carried ++ additional` (the additional inputs pass through the body unchanged, so
//!   the loop reads nothing from outside: XLA and Neuron's HLO take closed loops);
//! - `scan(combine_graph, init, xs, additional)` → `stablehlo.while` over an `i64`
//!   counter, the carries, one buffer per stacked output, `xs` and the additional inputs:
//!   step `i` slices `xs[i]`, runs the combine function and writes its outputs into row
//!   `i` of the buffers (torch.export has already moved the scanned dimension to the
//!   front and flipped `xs` for `reverse=True`);
//! - `map_impl(body_graph, xs, args)` → the same loop without carries.

use tpuc_artifact::DType;
use tpuc_dialects::stablehlo::Cmp;
use tpuc_dialects::{Emitter, TValue, TensorType};

use super::{LResult, LowerError};

/// Lowers subgraph `index` of the op into the block `inner` appends to, its inputs bound
/// to `args`; returns the lowered subgraph outputs.
pub type LowerRegion<'r, 'c> =
    dyn FnMut(usize, &Emitter<'c>, &[TValue]) -> LResult<Vec<TValue>> + 'r;

/// `None` when `target` is not a control-flow operator tpuc knows.
pub fn lower<'c>(
    target: &str,
    operands: &[TValue],
    segments: &[usize],
    results: &[TensorType],
    e: &Emitter<'c>,
    region: &mut LowerRegion<'_, 'c>,
) -> Option<LResult<Vec<TValue>>> {
    let name = target.strip_prefix("higher_order.")?;
    let name = name.split('.').next().unwrap_or(name);
    Some(match name {
        "cond" => {
            split(operands, segments, 2, name).and_then(|g| cond(&g[0], &g[1], results, e, region))
        }
        "while_loop" => split(operands, segments, 2, name)
            .and_then(|g| while_loop(&g[0], &g[1], results, e, region)),
        "scan" => split(operands, segments, 3, name)
            .and_then(|g| scan(&g[0], &g[1], &g[2], results, e, region)),
        "map_impl" => split(operands, segments, 2, name)
            .and_then(|g| scan(&[], &g[0], &g[1], results, e, region)),
        _ => return None,
    })
}

/// The operand groups given by `segments`, which must be `groups` long.
fn split(
    operands: &[TValue],
    segments: &[usize],
    groups: usize,
    op: &str,
) -> LResult<Vec<Vec<TValue>>> {
    if segments.len() != groups || segments.iter().sum::<usize>() != operands.len() {
        return Err(LowerError::Invalid(format!(
            "{op} takes {groups} tensor arguments (a tensor or a list each), found groups \
             {segments:?} of {} tensors",
            operands.len()
        )));
    }
    let mut out = Vec::new();
    let mut at = 0;
    for &n in segments {
        out.push(operands[at..at + n].to_vec());
        at += n;
    }
    Ok(out)
}

/// A one-element predicate as `tensor<i1>` (a nonzero number is true, as in Python).
fn predicate(e: &Emitter, p: &TValue, what: &str) -> LResult<TValue> {
    if p.ty.num_elements() != 1 {
        return Err(LowerError::Unsupported(format!(
            "{what} is {}; it must hold exactly one element",
            p.ty
        )));
    }
    let p = if p.rank() == 0 {
        p.clone()
    } else {
        e.reshape(p, &[])?
    };
    if p.dtype() == DType::Bool {
        return Ok(p);
    }
    let zero = e.constant(&p.ty, 0.0)?;
    Ok(e.compare(Cmp::Ne, &p, &zero)?)
}

/// `values` as `types` (what the graph's metadata says): element types are converted,
/// a shape that differs is an error naming `what`.
fn as_types(
    e: &Emitter,
    values: Vec<TValue>,
    types: &[TensorType],
    what: &str,
) -> LResult<Vec<TValue>> {
    if values.len() != types.len() {
        return Err(LowerError::Invalid(format!(
            "{what} yields {} values where {} are expected",
            values.len(),
            types.len()
        )));
    }
    values
        .into_iter()
        .zip(types)
        .map(|(v, t)| {
            if v.ty == *t {
                Ok(v)
            } else if v.shape() == t.shape.as_slice() {
                Ok(e.convert(&v, t.dtype)?)
            } else {
                Err(LowerError::Invalid(format!(
                    "{what} yields {} where {t} is expected",
                    v.ty
                )))
            }
        })
        .collect()
}

fn cond<'c>(
    pred: &[TValue],
    operands: &[TValue],
    results: &[TensorType],
    e: &Emitter<'c>,
    region: &mut LowerRegion<'_, 'c>,
) -> LResult<Vec<TValue>> {
    let pred = predicate(e, &pred[0], "the predicate")?;
    let mut branch = |index: usize, what: &str| {
        e.region(&[], |inner: &Emitter<'c>, _: &[TValue]| {
            let out = region(index, inner, operands)?;
            as_types(inner, out, results, what)
        })
    };
    let on_true = branch(0, "the true branch")?;
    let on_false = branch(1, "the false branch")?;
    Ok(e.if_(&pred, on_true, on_false, results)?)
}

fn while_loop<'c>(
    carried: &[TValue],
    additional: &[TValue],
    results: &[TensorType],
    e: &Emitter<'c>,
    region: &mut LowerRegion<'_, 'c>,
) -> LResult<Vec<TValue>> {
    let state: Vec<TValue> = carried.iter().chain(additional).cloned().collect();
    let types: Vec<TensorType> = state.iter().map(|v| v.ty.clone()).collect();
    let carried_types: Vec<TensorType> = carried.iter().map(|v| v.ty.clone()).collect();
    if results != carried_types.as_slice() {
        return Err(LowerError::Invalid(format!(
            "the loop returns {} results for {} carried values of other types",
            results.len(),
            carried.len()
        )));
    }
    let cond = e.region(&types, |inner: &Emitter<'c>, args: &[TValue]| {
        let out = region(0, inner, args)?;
        match out.as_slice() {
            [p] => Ok(vec![predicate(inner, p, "the loop condition")?]),
            _ => Err(LowerError::Invalid(format!(
                "the loop condition yields {} values, not one",
                out.len()
            ))),
        }
    })?;
    let body = e.region(&types, |inner: &Emitter<'c>, args: &[TValue]| {
        let out = region(1, inner, args)?;
        let mut next = as_types(inner, out, &carried_types, "the loop body")?;
        next.extend_from_slice(&args[carried.len()..]);
        Ok::<_, LowerError>(next)
    })?;
    let refs: Vec<&TValue> = state.iter().collect();
    let mut out = e.while_(&refs, cond, body)?;
    out.truncate(carried.len());
    Ok(out)
}

/// `scan` (with `init` carries) and `map_impl` (without): a counted loop over the first
/// dimension of `xs`, stacking the per-step outputs (the results after the carries).
fn scan<'c>(
    init: &[TValue],
    xs: &[TValue],
    additional: &[TValue],
    results: &[TensorType],
    e: &Emitter<'c>,
    region: &mut LowerRegion<'_, 'c>,
) -> LResult<Vec<TValue>> {
    let Some(first) = xs.first() else {
        return Err(LowerError::Unsupported(
            "a scan over no tensors (its length is unknown)".into(),
        ));
    };
    let length = *first.shape().first().ok_or_else(|| {
        LowerError::Invalid(format!("the scanned tensor {} has no dimension", first.ty))
    })?;
    if let Some(x) = xs.iter().find(|x| x.shape().first() != Some(&length)) {
        return Err(LowerError::Invalid(format!(
            "the scanned tensors have different lengths ({} and {})",
            first.ty, x.ty
        )));
    }
    let carry_types: Vec<TensorType> = init.iter().map(|v| v.ty.clone()).collect();
    if results.len() < init.len() || results[..init.len()] != carry_types[..] {
        return Err(LowerError::Invalid(
            "the results do not start with the carries".into(),
        ));
    }
    let stacked = &results[init.len()..];
    // Per-step output types: the stacked results without their leading dimension.
    let mut step_types = Vec::new();
    for t in stacked {
        if t.shape.first() != Some(&length) {
            return Err(LowerError::Invalid(format!(
                "stacked output {t} does not have the scan's length {length} first"
            )));
        }
        step_types.push(TensorType::new(t.shape[1..].to_vec(), t.dtype));
    }
    let (n_c, n_y, n_x) = (init.len(), stacked.len(), xs.len());
    let counter = TensorType::scalar(DType::I64);
    let mut state = vec![e.constant(&counter, 0.0)?];
    state.extend_from_slice(init);
    for t in stacked {
        state.push(e.constant(t, 0.0)?);
    }
    state.extend_from_slice(xs);
    state.extend_from_slice(additional);
    let types: Vec<TensorType> = state.iter().map(|v| v.ty.clone()).collect();

    let cond = e.region(&types, |inner: &Emitter<'c>, args: &[TValue]| {
        let end = inner.constant(&counter, length as f64)?;
        Ok::<_, LowerError>(vec![inner.compare(Cmp::Lt, &args[0], &end)?])
    })?;
    let body = e.region(&types, |inner: &Emitter<'c>, args: &[TValue]| {
        let i = &args[0];
        let carries = &args[1..1 + n_c];
        let buffers = &args[1 + n_c..1 + n_c + n_y];
        let seqs = &args[1 + n_c + n_y..1 + n_c + n_y + n_x];
        let extra = &args[1 + n_c + n_y + n_x..];
        let zero = inner.constant(&counter, 0.0)?;
        let starts = |rank: usize| {
            let mut v = vec![i];
            v.extend(std::iter::repeat_n(&zero, rank - 1));
            v
        };
        let mut inputs = carries.to_vec();
        for x in seqs {
            let mut sizes = x.shape().to_vec();
            sizes[0] = 1;
            let row = inner.dynamic_slice(x, &starts(x.rank()), &sizes)?;
            inputs.push(inner.reshape(&row, &x.shape()[1..])?);
        }
        inputs.extend_from_slice(extra);
        let out = region(0, inner, &inputs)?;
        let mut want = carry_types.clone();
        want.extend(step_types.iter().cloned());
        let out = as_types(inner, out, &want, "the scanned function")?;
        let one = inner.constant(&counter, 1.0)?;
        let mut next = vec![inner.add(i, &one)?];
        next.extend_from_slice(&out[..n_c]);
        for (buf, y) in buffers.iter().zip(&out[n_c..]) {
            let mut shape = vec![1];
            shape.extend_from_slice(y.shape());
            let row = inner.reshape(y, &shape)?;
            next.push(inner.dynamic_update_slice(buf, &row, &starts(buf.rank()))?);
        }
        next.extend_from_slice(&args[1 + n_c + n_y..]);
        Ok::<_, LowerError>(next)
    })?;
    let refs: Vec<&TValue> = state.iter().collect();
    let out = e.while_(&refs, cond, body)?;
    Ok(out[1..1 + n_c + n_y].to_vec())
}
