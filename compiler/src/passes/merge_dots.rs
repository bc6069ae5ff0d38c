//! `stablehlo-merge-dots`: `dot_general`s that read the same input and each multiply it
//! by a weight of their own become one `dot_general` over the weights packed into one
//! tensor, followed by a `slice` per original result.
//!
//! Attention projections are the common case: `q = x·Wqᵀ`, `k = x·Wkᵀ`, `v = x·Wvᵀ` are
//! three matmuls of one `x` (BERT, Llama, T5, ViT, Whisper...). XLA runs each dot as a
//! kernel of its own; one dot over `[Wq; Wk; Wv]` is one kernel computing the same
//! products and sums for every output element (in the order the matmul kernel picks
//! for the wider shape, as for any matmul), and the slices fuse into what reads them. The
//! packed weight has to be a weight of the artifact, written packed at compile time:
//! concatenating it in the program would copy every weight on every call. So the pass
//! only packs the function arguments its caller lists, and says what it did:
//!
//! - in: the function carries `tpuc.packable = array<i64: ...>`, the indices of the
//!   arguments that are weights the artifact stores (the driver, `compile`, sets it for
//!   parameters at `-O2` when the compile is not sharded; without it the pass does
//!   nothing);
//! - out: `tpuc.packable` is removed; when something was packed, the function carries
//!   `tpuc.arg_origins = [array<i64: ...>, ...]`, one entry per argument of the new
//!   signature listing the original arguments it holds (one index for an untouched
//!   argument, several for a packed weight, concatenated along dimension 0 in that
//!   order). The driver takes it off and writes the weights that way.
//!
//! A dot joins a group when its right operand is a packable argument, it has no batch
//! dimensions and does not contract that argument's dimension 0 (which becomes its
//! output dimension), and it matches the other members in left operand, attributes
//! (dimension numbers, precision) and the argument's type apart from dimension 0. A
//! group's weights are packed when every use of each is in a group of the same weights
//! in the same order: one group, or one per layer where layers share their weights
//! (ALBERT); all of them then read the one packed argument. Weights with any other use
//! (the packed copy would be stored next to the original), dots on anything else and
//! batched dots are left alone.

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use tpuc_dialects::stablehlo::DotDims;
use tpuc_dialects::TensorType;

use super::{ir, Pass};
use crate::error::CompileError;

/// `stablehlo-merge-dots`, or `stablehlo-merge-dots{packable=0,1,2}`: the option marks
/// those `@main` arguments packable first (what `tpuc compile` does for artifacts).
#[derive(Default)]
pub struct MergeDots {
    pub packable: Option<Vec<usize>>,
}

pub const NAME: &str = "stablehlo-merge-dots";
/// The function attribute naming the arguments the pass may pack.
pub const PACKABLE: &str = "tpuc.packable";
/// The function attribute the pass leaves: each new argument's original arguments.
pub const ARG_ORIGINS: &str = "tpuc.arg_origins";

impl Pass for MergeDots {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "dots of one input by weights of their own as one dot over the weights packed (arguments listed in tpuc.packable)"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        if let Some(packable) = &self.packable {
            mark_packable(&module, packable)?;
        }
        for (_, block) in ir::named_function_blocks(&module) {
            let Some(block) = block else { continue };
            let func = ir::block_parent(block);
            let Some(packable) = ir::i64_array(func, PACKABLE) else {
                continue;
            };
            ir::remove_attribute(func, PACKABLE);
            merge_in(func, block, &packable)?;
        }
        Ok(module)
    }
}

/// One dot of a group: the op, its weight argument and that argument's dimension 0.
struct Member {
    dot: MlirOperation,
    weight: MlirValue,
    rows: i64,
}

fn merge_in(
    func: MlirOperation,
    block: mlir_sys::MlirBlock,
    packable: &[i64],
) -> Result<(), CompileError> {
    // Groups in the order of their first dot; members in program order.
    let mut groups: Vec<Vec<Member>> = Vec::new();
    let mut by_key: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for op in ir::block_ops(block) {
        if ir::op_name(op) != "stablehlo.dot_general" {
            continue;
        }
        let Some((key, member)) = candidate(op, block, packable) else {
            continue;
        };
        let next = groups.len();
        let i = *by_key.entry(key).or_insert(next);
        if i == next {
            groups.push(Vec::new());
        }
        groups[i].push(member);
    }
    // The weights of each group of two or more, in member order. A sequence is packed
    // when every use of each of its weights is in a group with that same sequence:
    // once (the usual case) or in every layer that shares the weights (ALBERT).
    groups.retain(|m| m.len() > 1);
    let sequence = |g: &[Member]| -> Vec<MlirValue> { g.iter().map(|m| m.weight).collect() };
    let same = |a: &[MlirValue], b: &[MlirValue]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.ptr == y.ptr)
    };
    let mut sequences: Vec<(Vec<MlirValue>, Vec<usize>)> = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let seq = sequence(g);
        match sequences.iter_mut().find(|(s, _)| same(s, &seq)) {
            Some((_, members)) => members.push(i),
            None => sequences.push((seq, vec![i])),
        }
    }
    sequences.retain(|(seq, uses)| {
        let distinct = seq
            .iter()
            .enumerate()
            .all(|(i, w)| seq[..i].iter().all(|v| v.ptr != w.ptr));
        distinct && seq.iter().all(|w| ir::users(*w).len() == uses.len())
    });
    // One entry per current argument: the original arguments it holds.
    let mut origins: Vec<Vec<i64>> = (0..ir::block_arguments(block).len() as i64)
        .map(|i| vec![i])
        .collect();
    if sequences.is_empty() {
        return Ok(());
    }
    for (_, uses) in &sequences {
        let members: Vec<&[Member]> = uses.iter().map(|&i| groups[i].as_slice()).collect();
        pack(block, &members, &mut origins)?;
    }
    let entries: Vec<String> = origins
        .iter()
        .map(|o| {
            let o: Vec<String> = o.iter().map(i64::to_string).collect();
            format!("array<i64: {}>", o.join(", "))
        })
        .collect();
    let ok = ir::set_function_argument_types(func, block)
        && ir::set_attribute(func, ARG_ORIGINS, &format!("[{}]", entries.join(", ")));
    if !ok {
        return Err(CompileError::Internal(
            "stablehlo-merge-dots: cannot update the function's signature".into(),
        ));
    }
    Ok(())
}

/// The group key and member for `dot` when it may be packed.
fn candidate(
    dot: MlirOperation,
    block: mlir_sys::MlirBlock,
    packable: &[i64],
) -> Option<(String, Member)> {
    let operands = ir::operands(dot);
    let (lhs, weight) = (operands[0], operands[1]);
    let index = ir::block_argument_index(weight, block)?;
    if !packable.contains(&(index as i64)) {
        return None;
    }
    let dims = DotDims::parse(&ir::attribute_text(dot, "dot_dimension_numbers")?);
    if !dims.lhs_batch.is_empty() || !dims.rhs_batch.is_empty() || dims.rhs_contract.contains(&0) {
        return None;
    }
    let w = ir::tensor_type(weight)?;
    if w.shape.is_empty() || w.shape[0] <= 0 {
        return None;
    }
    // Same left operand, same attributes, same weight type apart from dimension 0.
    let attrs: Vec<String> = ir::named_attributes(dot)
        .into_iter()
        .map(ir::named_attribute_text)
        .collect();
    let key = format!(
        "{:?}|{}|{}",
        lhs.ptr,
        attrs.join(","),
        TensorType::new(&w.shape[1..], w.dtype).mlir()
    );
    let rows = w.shape[0];
    Some((key, Member { dot, weight, rows }))
}

/// Gives the weights of `groups` (each the same weight sequence, members in that
/// order) one packed argument, inserted where the first of them was; replaces each
/// group's dots by one dot over it and a slice per original result; erases the dots
/// and the weight arguments, keeping `origins` in step with the arguments.
fn pack(
    block: mlir_sys::MlirBlock,
    groups: &[&[Member]],
    origins: &mut Vec<Vec<i64>>,
) -> Result<(), CompileError> {
    let internal = |what: &str| CompileError::Internal(format!("stablehlo-merge-dots: {what}"));
    let members = groups[0];
    let first = members[0].dot;
    let w0 = ir::tensor_type(members[0].weight).ok_or_else(|| internal("weight type"))?;
    let total: i64 = members.iter().map(|m| m.rows).sum();
    let mut packed_shape = w0.shape.clone();
    packed_shape[0] = total;
    let ctx = ir::context(first);
    let packed_type = ir::parse_type(ctx, &TensorType::new(packed_shape, w0.dtype).mlir())
        .ok_or_else(|| internal("packed type"))?;
    let positions = || -> Result<Vec<usize>, CompileError> {
        members
            .iter()
            .map(|m| ir::block_argument_index(m.weight, block))
            .collect::<Option<_>>()
            .ok_or_else(|| internal("weight position"))
    };
    let before = positions()?;
    let at = *before.iter().min().unwrap_or(&0);
    let sources: Vec<i64> = before.iter().flat_map(|&p| origins[p].clone()).collect();
    let packed = ir::insert_block_argument(block, at, packed_type, ir::location(first));
    origins.insert(at, sources);
    for group in groups {
        merge_group(group, packed, total)?;
    }
    // Erase the weights, last position first so the others keep theirs.
    let mut gone = positions()?;
    gone.sort_unstable_by(|a, b| b.cmp(a));
    for p in gone {
        ir::erase_block_argument(block, p);
        origins.remove(p);
    }
    Ok(())
}

/// Replaces the dots of `members` by one dot over `packed` (`total` rows) and a slice
/// per original result, at the first member's place.
fn merge_group(members: &[Member], packed: MlirValue, total: i64) -> Result<(), CompileError> {
    let internal = |what: &str| CompileError::Internal(format!("stablehlo-merge-dots: {what}"));
    let first = members[0].dot;
    let ctx = ir::context(first);
    // The dot over the packed weight: a copy of the first (its attributes kept).
    let result0 = ir::result(first, 0);
    let out = ir::tensor_type(result0).ok_or_else(|| internal("result type"))?;
    let dims = DotDims::parse(
        &ir::attribute_text(first, "dot_dimension_numbers").ok_or_else(|| internal("dims"))?,
    );
    // The result holds the left operand's free dimensions, then the weight's; the
    // weight's dimension 0 is the first of its free dimensions.
    let lhs_rank = ir::tensor_type(ir::operands(first)[0])
        .ok_or_else(|| internal("lhs type"))?
        .shape
        .len();
    let axis = lhs_rank - dims.lhs_contract.len();
    let mut merged_shape = out.shape.clone();
    merged_shape[axis] = total;
    let merged_type = ir::parse_type(
        ctx,
        &TensorType::new(merged_shape.clone(), out.dtype).mlir(),
    )
    .ok_or_else(|| internal("merged type"))?;
    let merged = ir::clone_before(first, first);
    ir::set_operand(merged, 1, packed);
    ir::set_result_type(merged, 0, merged_type);
    let merged_out = ir::result(merged, 0);

    let array = |v: &[i64]| {
        let v: Vec<String> = v.iter().map(i64::to_string).collect();
        format!("array<i64: {}>", v.join(", "))
    };
    let mut offset = 0;
    for m in members {
        let result = ir::result(m.dot, 0);
        let mut start = vec![0; merged_shape.len()];
        let mut limit = merged_shape.clone();
        start[axis] = offset;
        limit[axis] = offset + m.rows;
        offset += m.rows;
        let attrs = [
            ("start_indices", array(&start)),
            ("limit_indices", array(&limit)),
            ("strides", array(&vec![1; merged_shape.len()])),
        ];
        let slice =
            ir::insert_op_before(first, "stablehlo.slice", &[merged_out], &[result], &attrs)
                .ok_or_else(|| internal("slice attributes"))?;
        ir::replace_uses(result, ir::result(slice, 0));
    }
    for m in members {
        ir::erase(m.dot);
    }
    Ok(())
}

/// Marks the arguments at `indices` of `@main` as packable (before the pipeline runs).
pub fn mark_packable(module: &Module<'_>, indices: &[usize]) -> Result<(), CompileError> {
    let Some(func) = main_function(module) else {
        return Ok(());
    };
    let list: Vec<String> = indices.iter().map(usize::to_string).collect();
    if ir::set_attribute(func, PACKABLE, &format!("array<i64: {}>", list.join(", "))) {
        Ok(())
    } else {
        Err(CompileError::Internal(
            "stablehlo-merge-dots: cannot mark the packable arguments".into(),
        ))
    }
}

/// Takes the pass's record off `@main`: for each argument of the final signature, the
/// original arguments it holds (`None` when nothing was packed). A `tpuc.packable` the
/// pass did not see (a pipeline without it) is removed too.
pub fn take_arg_origins(module: &Module<'_>) -> Option<Vec<Vec<usize>>> {
    let func = main_function(module)?;
    let origins = arg_origins(module);
    ir::remove_attribute(func, PACKABLE);
    ir::remove_attribute(func, ARG_ORIGINS);
    origins
}

/// The pass's record on `@main`, left in place (see [`take_arg_origins`]).
pub fn arg_origins(module: &Module<'_>) -> Option<Vec<Vec<usize>>> {
    let origins = ir::attribute(main_function(module)?, ARG_ORIGINS)?;
    ir::i64_array_list(origins).map(|list| {
        list.into_iter()
            .map(|o| o.into_iter().map(|i| i as usize).collect())
            .collect()
    })
}

fn main_function(module: &Module<'_>) -> Option<MlirOperation> {
    ir::named_function_blocks(module)
        .into_iter()
        .find(|(name, _)| name == "main")
        .and_then(|(_, block)| block)
        .map(ir::block_parent)
}
