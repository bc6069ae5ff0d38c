//! `stablehlo-gather-to-slice`: a `gather` whose indices are a constant that walks the
//! operand in steps of one becomes a `slice` and a `broadcast_in_dim`.
//!
//! Exported models index with `arange`: learned position embeddings
//! (`embedding(pos_table, arange(offset, offset + L))`, BART, OPT, GPT-2) and masks
//! expanded with `mask[arange(B)[:, None, None, None], arange(L)]`. Once
//! `stablehlo-fold-constants` has made those indices a literal, XLA runs the gather as a
//! kernel of its own that reads an index buffer and cannot fuse with what uses it; the
//! same values as a slice fuse into the consumer (on the CPU, BART's embedding sum and
//! its layer norm become one kernel).
//!
//! The rewrite fires when, for every operand dimension `j` of `start_index_map`, the
//! start index is either the same constant `c_j` at every batch position, or
//! `c_j + b_d` for one batch dimension `d` of the result (a different `d` for each such
//! `j`), with `j` collapsed and its slice size 1; and every start stays in bounds, so
//! gather's clamping never applies. Then `result[b, o] = operand[c + b or o]`, which is
//! `slice(operand, c, c + extent)` laid out in the result by `broadcast_in_dim`
//! (dimensions no index varies along are broadcast). Anything else is left alone:
//! repeated or reversed indices, two index components walking one batch dimension
//! (a diagonal), batching dimensions, non-constant indices.
//!
//! A rewrite only redirects uses; the gather and its constant are left for
//! `stablehlo-dce`.

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use tpuc_dialects::TensorType;

use super::{ir, Pass};
use crate::error::CompileError;

pub struct GatherToSlice;

/// Larger index literals are not read (the constant folder keeps far smaller ones).
const MAX_INDICES: usize = 1 << 16;

impl Pass for GatherToSlice {
    fn name(&self) -> &'static str {
        "stablehlo-gather-to-slice"
    }
    fn description(&self) -> &'static str {
        "gathers at constant unit-step indices (arange lookups) as slice + broadcast"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        for block in ir::function_blocks(&module) {
            let mut gathers = Vec::new();
            ir::for_each_op(block, |op| {
                if ir::op_name(op) == "stablehlo.gather" {
                    gathers.push(op);
                }
            });
            for op in gathers {
                rewrite(op);
            }
        }
        Ok(module)
    }
}

/// The values of a constant index tensor of `count` elements, splats expanded.
fn constant_indices(v: MlirValue, count: usize) -> Option<Vec<i64>> {
    let def = ir::defining_op(v).filter(|o| ir::op_name(*o) == "stablehlo.constant")?;
    if count > MAX_INDICES {
        return None;
    }
    // Decimal literals only (a hex blob or a resource is not read here).
    let text = ir::attribute_text(def, "value")?;
    if text.contains("0x") || text.contains('"') || !text.starts_with("dense<") {
        return None;
    }
    let values = ir::dense_i64_elements(def, "value")?;
    match values.len() {
        1 => Some(vec![values[0]; count]),
        n if n == count => Some(values),
        _ => None,
    }
}

/// How one start-index component depends on the batch position.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Walk {
    /// The same value everywhere.
    Fixed(i64),
    /// `start + b[dim]` (`dim` counts the batch dimensions of the result).
    Along { start: i64, dim: usize },
}

fn rewrite(op: MlirOperation) -> Option<()> {
    let args = ir::operands(op);
    let (&operand, &indices) = (args.first()?, args.get(1)?);
    let out = ir::result(op, 0);
    let (ot, it, rt) = (
        ir::tensor_type(operand)?,
        ir::tensor_type(indices)?,
        ir::tensor_type(out)?,
    );
    let d = ir::gather_dims(op)?;
    let (or, rr) = (ot.shape.len(), rt.shape.len());
    let ivd = usize::try_from(d.index_vector_dim).ok()?;
    // Batch dimensions: the result's that are not offset dims, in order, and the index
    // tensor's other than index_vector_dim (the same sizes, in the same order).
    let batch_dims: Vec<usize> = (0..rr)
        .filter(|r| !d.offset_dims.contains(&(*r as i64)))
        .collect();
    let window_dims: Vec<usize> = (0..or)
        .filter(|j| !d.collapsed_slice_dims.contains(&(*j as i64)))
        .collect();
    let index_batch: Vec<usize> = (0..it.shape.len()).filter(|&k| k != ivd).collect();
    let components = if ivd < it.shape.len() {
        it.shape[ivd] as usize
    } else {
        1
    };
    let well_formed = ivd <= it.shape.len()
        && components == d.start_index_map.len()
        && index_batch.len() == batch_dims.len()
        && window_dims.len() == d.offset_dims.len()
        && d.slice_sizes.len() == or
        && d.start_index_map
            .iter()
            .all(|&j| (0..or as i64).contains(&j))
        && index_batch
            .iter()
            .zip(&batch_dims)
            .all(|(&k, &r)| it.shape[k] == rt.shape[r]);
    if !well_formed || ot.shape.iter().chain(&rt.shape).any(|&n| n < 0) {
        return None;
    }
    let count = it.shape.iter().product::<i64>() as usize;
    if count == 0 {
        return None;
    }
    let values = constant_indices(indices, count)?;
    let batch_shape: Vec<i64> = batch_dims.iter().map(|&r| rt.shape[r]).collect();
    let strides = ir::row_major_strides(&it.shape);
    let at = |b: &[i64], k: usize| -> i64 {
        let mut flat = 0;
        let mut bi = b.iter();
        for (dim, s) in strides.iter().enumerate() {
            let coord = if dim == ivd {
                k as i64
            } else {
                *bi.next().unwrap_or(&0)
            };
            flat += coord as usize * s;
        }
        values[flat]
    };

    // Classify each component from the origin and its unit steps, then check every
    // batch position against the classification.
    let origin = vec![0i64; batch_shape.len()];
    let mut walks = Vec::with_capacity(components);
    for k in 0..components {
        let start = at(&origin, k);
        let mut along = None;
        for (dim, &n) in batch_shape.iter().enumerate() {
            if n < 2 {
                continue;
            }
            let mut step = origin.clone();
            step[dim] = 1;
            match at(&step, k) - start {
                0 => {}
                1 if along.is_none() => along = Some(dim),
                _ => return None,
            }
        }
        walks.push(match along {
            Some(dim) => Walk::Along { start, dim },
            None => Walk::Fixed(start),
        });
    }
    {
        let mut b = origin.clone();
        loop {
            for (k, w) in walks.iter().enumerate() {
                let expected = match *w {
                    Walk::Fixed(c) => c,
                    Walk::Along { start, dim } => start + b[dim],
                };
                if at(&b, k) != expected {
                    return None;
                }
            }
            if !next_position(&mut b, &batch_shape) {
                break;
            }
        }
    }

    // The slice of the operand, and for each operand dim the result dim it lands on.
    let mut start = vec![0i64; or];
    let mut limit = d.slice_sizes.clone();
    let mut target: Vec<Option<usize>> = vec![None; or];
    let mut walked = Vec::new();
    for (k, w) in walks.iter().enumerate() {
        let j = d.start_index_map[k] as usize;
        match *w {
            Walk::Fixed(c) => {
                start[j] = c;
                limit[j] = c + d.slice_sizes[j];
            }
            Walk::Along { start: c, dim } => {
                let collapsed = d.collapsed_slice_dims.contains(&(j as i64));
                if !collapsed || d.slice_sizes[j] != 1 || walked.contains(&dim) {
                    return None;
                }
                walked.push(dim);
                start[j] = c;
                limit[j] = c + batch_shape[dim];
                target[j] = Some(batch_dims[dim]);
            }
        }
    }
    // Gather clamps a start into [0, size - slice size]; the rewrite needs none.
    if (0..or).any(|j| start[j] < 0 || limit[j] > ot.shape[j]) {
        return None;
    }
    for (w, &j) in window_dims.iter().enumerate() {
        target[j] = Some(d.offset_dims[w] as usize);
    }

    // slice (unless it is all of it) → reshape (drop the collapsed dims nothing walks) → transpose into result
    // order → broadcast_in_dim over the dims no index walks.
    let kept: Vec<usize> = (0..or).filter(|&j| target[j].is_some()).collect();
    let sliced_shape: Vec<i64> = (0..or).map(|j| limit[j] - start[j]).collect();
    let mut order = kept.clone();
    order.sort_by_key(|&j| target[j]);
    let array = |v: &[i64]| {
        let v: Vec<String> = v.iter().map(i64::to_string).collect();
        format!("array<i64: {}>", v.join(", "))
    };
    let build = |name: &str, x: MlirValue, shape: Vec<i64>, attrs: Vec<(&str, String)>| {
        ir::create_value_before(op, name, x, &TensorType::new(shape, ot.dtype), &attrs)
    };
    let whole = start.iter().all(|&s| s == 0) && limit == ot.shape;
    let mut x = match whole {
        true => operand,
        false => build(
            "stablehlo.slice",
            operand,
            sliced_shape.clone(),
            vec![
                ("start_indices", array(&start)),
                ("limit_indices", array(&limit)),
                ("strides", array(&vec![1; or])),
            ],
        )?,
    };
    if kept.len() != or {
        let shape = kept.iter().map(|&j| sliced_shape[j]).collect();
        x = build("stablehlo.reshape", x, shape, vec![])?;
    }
    if order != kept {
        let perm: Vec<i64> = order
            .iter()
            .map(|j| kept.iter().position(|k| k == j).unwrap_or(0) as i64)
            .collect();
        let shape = order.iter().map(|&j| sliced_shape[j]).collect();
        x = build(
            "stablehlo.transpose",
            x,
            shape,
            vec![("permutation", array(&perm))],
        )?;
    }
    let dims: Vec<i64> = order
        .iter()
        .filter_map(|&j| target[j])
        .map(|r| r as i64)
        .collect();
    if dims.iter().copied().eq(0..rr as i64) {
        // Already the result: nothing to broadcast.
        ir::replace_uses(out, x);
        return Some(());
    }
    let y = build(
        "stablehlo.broadcast_in_dim",
        x,
        rt.shape.clone(),
        vec![("broadcast_dimensions", array(&dims))],
    )?;
    ir::replace_uses(out, y);
    Some(())
}

/// Steps `b` to the next position of `shape` in row-major order; false after the last.
fn next_position(b: &mut [i64], shape: &[i64]) -> bool {
    for i in (0..b.len()).rev() {
        b[i] += 1;
        if b[i] < shape[i] {
            return true;
        }
        b[i] = 0;
    }
    false
}
