//! `stablehlo-propagate-sharding`: shardings of `@main`'s arguments carried through the
//! program to its results, and written in the form XLA partitions (Shardy or GSPMD).
//!
//! Input: the module attribute `tpuc.mesh = "dp=2,tp=2"` (without it the pass does
//! nothing), optionally `tpuc.sharding_format = "shardy" | "gspmd"` (Shardy by default),
//! and `tpuc.sharding = "[dp, -]"` on the arguments that have one (the others are
//! replicated). `tpuc-seed-sharding` writes these seeds for `tpuc compile --mesh ... --shard ...`;
//! `tpuc-take-records` takes the decisions off for the manifest.
//!
//! Propagation runs forward over `@main`'s operations, in order, giving each result a
//! sharding from its operands':
//! - shape-preserving ops (elementwise, `select`, `clamp`, `convert`, composites whose
//!   operands and results all have one shape): each dimension takes the axes of the
//!   first operand, in operand order, that splits it ("first operand wins", the one
//!   conflict rule), unless an earlier dimension already uses one of them;
//! - `broadcast_in_dim`, `transpose`, `reshape` (a dimension kept, merged as the major
//!   part, or split with the sharded part major), `reduce` (reduced dimensions dropped),
//!   `concatenate` (the concatenated dimension dropped), `slice` (sliced dimensions
//!   dropped), `dot_general` (batch dimensions from the left operand, else the right;
//!   free dimensions from their operand; a split contracting dimension is summed by
//!   XLA, so the result is not split there), `convolution` (batch from the input,
//!   output features from the kernel, spatial dimensions whole), `reduce_window`
//!   (dimensions the window does not span kept), `gather` (batch dimensions from the
//!   indices, offset dimensions from the operand where sliced whole), `scatter` (the
//!   operand's, except the dimensions the indices address), `dynamic_update_slice`
//!   (the operand's, except the dimensions the update covers in part), `sort` (top-k
//!   routing: the operands' split, except the sorted dimension);
//! - composites: attention keeps the query's batch, heads and positions; norms and the
//!   gated MLP keep the leading dimensions of their first operand (the normalized or
//!   projected trailing ones whole);
//! - any other op: its results are left to XLA's own propagation (no sharding here).
//!
//! A sharding that does not divide a dimension is never produced, nor one that uses
//! an axis twice: that dimension stays whole (the earlier dimension keeps the axis).
//! Backward propagation (results to operands) is not done: arguments are decided by
//! the seeds (presets and rules) and Megatron's first-use choice, and the shardings of
//! values inside the program are left to XLA's own propagation, which runs both ways.
//!
//! With `tpuc.megatron = "tp"` on the module, the arguments marked `tpuc.weight` and
//! not seeded are decided at their first use, in program order: a Linear's weight is
//! column-parallel when its input's features are whole and row-parallel when an
//! earlier column-parallel Linear split them (through the attention heads: reshapes
//! keep a split major part, attention composites keep the query's heads), an embedding
//! table is vocabulary-parallel, and a gated MLP composite's gate and up projections
//! are column-parallel and its down projection row-parallel. A mixture-of-experts
//! router (a Linear whose scores reach a top-k `sort` through no other matmul) stays
//! whole.
//!
//! State arguments (`tpuc.state = RESULT`, written by `tpuc-seed-sharding` for a KV
//! cache) that no seed decided are decided at their first update, in program order: a
//! `scatter` or `dynamic_update_slice` into the argument (or a transpose or convert of
//! it) splits it like its update on the dimensions the update spans whole, so a cache
//! follows the keys written into it (heads under Megatron, batch under data
//! parallelism). The result holding a state's next value is declared with the
//! argument's sharding, so that the two alias shard by shard.
//!
//! With `--shard fsdp,megatron`, the parameters marked `tpuc.fsdp` are split on the
//! `fsdp` axis after megatron's choices, on their first dimension left whole that the
//! axis divides (so a column-parallel `[out, in]` weight becomes `[tp, fsdp]`).
//!
//! Output: on every argument and result of `@main`, the sharding in the chosen form
//! (`mhlo.sharding = "{devices=[2,1]<=[2]}"`, or Shardy's round-trip
//! `mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, ...>"}` with the
//! mesh in the module's `xla.sdy.meshes`), `mhlo.num_partitions` on the module, and
//! `tpuc.sharding` (the decision, read back by [`take_shardings`] for the manifest).
//! The Shardy form also carries the equivalent `mhlo.sharding`: measured with the CPU
//! plugin's XLA, a result's round-trip Shardy sharding alone is not kept (the result
//! came back split where it was declared replicated).

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use rustc_hash::FxHashMap;
use tpuc_artifact::manifest::ShardingFormat;
use tpuc_artifact::sharding::{Mesh, TensorSharding};

use super::ir;
use crate::error::CompileError;
use crate::import::quote;

pub const NAME: &str = "stablehlo-propagate-sharding";

pub struct PropagateSharding;

impl super::Pass for PropagateSharding {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "carry @main's argument shardings (module tpuc.mesh) to its results; write them as Shardy or GSPMD"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        run(&module)?;
        Ok(module)
    }
}

const MESH_NAME: &str = "mesh";

fn invalid(message: String) -> CompileError {
    CompileError::Sharding(message)
}

/// The `@main` function op and its entry block.
fn main_function(module: &Module<'_>) -> Option<(MlirOperation, mlir_sys::MlirBlock)> {
    let block = ir::named_function_blocks(module)
        .into_iter()
        .find(|(n, _)| n == "main")?
        .1?;
    Some((ir::block_parent(block), block))
}

fn shape(v: MlirValue) -> Vec<i64> {
    ir::tensor_type(v).map(|t| t.shape).unwrap_or_default()
}

/// `s` if it is valid for `shape` on `mesh`; otherwise each dimension it cannot split
/// is kept whole.
fn fit(mesh: &Mesh, shape: &[i64], mut s: TensorSharding) -> TensorSharding {
    s.dims.resize(shape.len(), Vec::new());
    s.dims.truncate(shape.len());
    let mut used: Vec<String> = Vec::new();
    for (d, axes) in s.dims.iter_mut().enumerate() {
        let k: i64 = axes
            .iter()
            .map(|a| mesh.axis_size(a).unwrap_or(0))
            .product();
        let clash = axes.iter().any(|a| used.contains(a));
        if k <= 0 || shape[d] % k != 0 || clash {
            axes.clear();
        }
        used.extend(axes.iter().cloned());
    }
    s
}

/// Merges operand shardings of one shape: per dimension, the first that splits it.
fn merge(
    mesh: &Mesh,
    shape: &[i64],
    shardings: &[Option<&TensorSharding>],
) -> Option<TensorSharding> {
    if shardings.iter().all(Option::is_none) {
        return None;
    }
    let mut out = TensorSharding::replicated(shape.len());
    let mut used: Vec<String> = Vec::new();
    for d in 0..shape.len() {
        let pick = shardings.iter().flatten().find_map(|s| {
            let axes = s.dims.get(d)?;
            (!axes.is_empty() && !axes.iter().any(|a| used.contains(a))).then_some(axes)
        });
        if let Some(axes) = pick {
            used.extend(axes.iter().cloned());
            out.dims[d] = axes.clone();
        }
    }
    Some(fit(mesh, shape, out))
}

/// For a reshape from `from` to `to`: the result dimension that carries operand
/// dimension `d`'s sharding (kept, the major part of a merge, or the major part of a
/// split), if any.
fn reshape_target(from: &[i64], to: &[i64], d: usize) -> Option<usize> {
    let before: i64 = from[..d].iter().product();
    let mut acc = 1i64;
    for (r, &size) in to.iter().enumerate() {
        if acc == before && size != 1 {
            // Result dimension r starts where operand dimension d starts: it holds d
            // whole (equal), d as its major part (merge), or d's major part (split).
            return Some(r);
        }
        acc *= size;
        if acc > before {
            return None;
        }
    }
    None
}

const SDPA: &str = "aten.scaled_dot_product_attention.default";

/// Composites that apply their other operands to the trailing dimensions of the first
/// (norms over the last dimensions, a gated MLP over the features).
fn acts_on_last_dims(name: &str) -> bool {
    matches!(
        name,
        "aten.native_layer_norm.default"
            | "aten.layer_norm.default"
            | "aten.rms_norm.default"
            | "odml.rms_norm"
            | "tpuc.gated_mlp"
    )
}

/// The `name` of a `stablehlo.composite`.
fn composite_name(op: MlirOperation) -> Option<String> {
    ir::attribute(op, "name").and_then(ir::string_value)
}

fn propagate(
    mesh: &Mesh,
    op: MlirOperation,
    known: &FxHashMap<usize, TensorSharding>,
) -> Vec<Option<TensorSharding>> {
    let operands = ir::operands(op);
    let results = ir::results(op);
    let get = |v: MlirValue| known.get(&(v.ptr as usize));
    let none = vec![None; results.len()];
    let Some(&first) = results.first() else {
        return none;
    };
    let out_shape = shape(first);
    let name = ir::op_name(op);
    match name {
        "stablehlo.broadcast_in_dim" => {
            let (Some(s), Some(dims)) =
                (get(operands[0]), ir::i64_array(op, "broadcast_dimensions"))
            else {
                return none;
            };
            let in_shape = shape(operands[0]);
            let mut out = TensorSharding::replicated(out_shape.len());
            for (i, &r) in dims.iter().enumerate() {
                if in_shape.get(i) == out_shape.get(r as usize) {
                    out.dims[r as usize] = s.dims.get(i).cloned().unwrap_or_default();
                }
            }
            vec![Some(fit(mesh, &out_shape, out))]
        }
        "stablehlo.transpose" => {
            let (Some(s), Some(perm)) = (get(operands[0]), ir::i64_array(op, "permutation")) else {
                return none;
            };
            let out = TensorSharding {
                dims: perm
                    .iter()
                    .map(|&p| s.dims.get(p as usize).cloned().unwrap_or_default())
                    .collect(),
            };
            vec![Some(fit(mesh, &out_shape, out))]
        }
        "stablehlo.reshape" => {
            let Some(s) = get(operands[0]) else {
                return none;
            };
            let in_shape = shape(operands[0]);
            let mut out = TensorSharding::replicated(out_shape.len());
            for (d, axes) in s.dims.iter().enumerate() {
                if axes.is_empty() {
                    continue;
                }
                if let Some(r) = reshape_target(&in_shape, &out_shape, d) {
                    out.dims[r] = axes.clone();
                }
            }
            vec![Some(fit(mesh, &out_shape, out))]
        }
        "stablehlo.reduce" => {
            // Operands are the inputs then as many init values.
            let n = results.len();
            let Some(dims) = ir::i64_array(op, "dimensions") else {
                return none;
            };
            let inputs: Vec<Option<&TensorSharding>> =
                operands[..n].iter().map(|&v| get(v)).collect();
            let in_shape = shape(operands[0]);
            let Some(merged) = merge(mesh, &in_shape, &inputs) else {
                return none;
            };
            let kept = TensorSharding {
                dims: merged
                    .dims
                    .iter()
                    .enumerate()
                    .filter(|(d, _)| !dims.contains(&(*d as i64)))
                    .map(|(_, a)| a.clone())
                    .collect(),
            };
            results
                .iter()
                .map(|&r| Some(fit(mesh, &shape(r), kept.clone())))
                .collect()
        }
        // Concatenate (along `dimension`) and sort (top-k routing along `dimension`):
        // every result keeps the operands' split except along that dimension.
        "stablehlo.concatenate" | "stablehlo.sort" => {
            let Some(dim) = ir::i64_attribute(op, "dimension") else {
                return none;
            };
            let all: Vec<Option<&TensorSharding>> = operands.iter().map(|&v| get(v)).collect();
            let Some(mut merged) = merge(mesh, &out_shape, &all) else {
                return none;
            };
            if let Some(axes) = merged.dims.get_mut(dim as usize) {
                axes.clear();
            }
            results
                .iter()
                .map(|_| Some(fit(mesh, &out_shape, merged.clone())))
                .collect()
        }
        // A slice keeps its operand's split where it takes a dimension whole; a
        // dynamic_update_slice where its update covers one whole (the written window's
        // offset is only known at run time).
        "stablehlo.slice" | "stablehlo.dynamic_update_slice" => {
            let Some(s) = get(operands[0]) else {
                return none;
            };
            let whole = match name {
                "stablehlo.slice" => shape(operands[0]),
                _ => shape(operands[1]),
            };
            let mut out = s.clone();
            for (d, axes) in out.dims.iter_mut().enumerate() {
                if whole.get(d) != out_shape.get(d) {
                    axes.clear();
                }
            }
            vec![Some(fit(mesh, &out_shape, out))]
        }
        "stablehlo.dot_general" => {
            use tpuc_dialects::stablehlo::attr_list_field;
            let Some(text) = ir::attribute_text(op, "dot_dimension_numbers") else {
                return none;
            };
            let (lb, rb) = (
                attr_list_field(&text, "lhs_batching_dimensions"),
                attr_list_field(&text, "rhs_batching_dimensions"),
            );
            let (lc, rc) = (
                attr_list_field(&text, "lhs_contracting_dimensions"),
                attr_list_field(&text, "rhs_contracting_dimensions"),
            );
            let (ls, rs) = (get(operands[0]), get(operands[1]));
            if ls.is_none() && rs.is_none() {
                return none;
            }
            let axes_of = |s: Option<&TensorSharding>, d: i64| -> Vec<String> {
                s.and_then(|s| s.dims.get(d as usize).cloned())
                    .unwrap_or_default()
            };
            let (lrank, rrank) = (
                shape(operands[0]).len() as i64,
                shape(operands[1]).len() as i64,
            );
            let mut dims: Vec<Vec<String>> = Vec::new();
            for (l, r) in lb.iter().zip(&rb) {
                let a = axes_of(ls, *l);
                dims.push(if a.is_empty() { axes_of(rs, *r) } else { a });
            }
            for d in (0..lrank).filter(|d| !lb.contains(d) && !lc.contains(d)) {
                dims.push(axes_of(ls, d));
            }
            for d in (0..rrank).filter(|d| !rb.contains(d) && !rc.contains(d)) {
                dims.push(axes_of(rs, d));
            }
            vec![Some(fit(mesh, &out_shape, TensorSharding { dims }))]
        }
        "stablehlo.convolution" => {
            // The batch from the input, the output features from the kernel's; the
            // spatial dimensions whole (no halo exchange asked for), a split input
            // feature dimension summed by XLA.
            let Some(dims) =
                ir::attribute_text(op, "dimension_numbers").and_then(|t| conv_layout(&t))
            else {
                return none;
            };
            let (ls, rs) = (get(operands[0]), get(operands[1]));
            if ls.is_none() && rs.is_none() {
                return none;
            }
            let batch_groups = ir::i64_attribute(op, "batch_group_count").unwrap_or(1);
            let mut out = TensorSharding::replicated(out_shape.len());
            if let (Some(s), true) = (ls, batch_groups == 1) {
                out.dims[dims.out_batch] = s.dims.get(dims.in_batch).cloned().unwrap_or_default();
            }
            if let Some(s) = rs {
                out.dims[dims.out_feature] =
                    s.dims.get(dims.kernel_out).cloned().unwrap_or_default();
            }
            vec![Some(fit(mesh, &out_shape, out))]
        }
        "stablehlo.reduce_window" => {
            // Dimensions the window does not span (size 1, stride 1, no padding, no
            // dilation) keep the first input's split; the others are whole.
            let n = results.len();
            let Some(s) = get(operands[0]) else {
                return none;
            };
            let rank = out_shape.len();
            let ones = vec![1i64; rank];
            let sizes = ir::i64_array(op, "window_dimensions").unwrap_or_default();
            let strides = ir::i64_array(op, "window_strides").unwrap_or_else(|| ones.clone());
            let base = ir::i64_array(op, "base_dilations").unwrap_or_else(|| ones.clone());
            let window = ir::i64_array(op, "window_dilations").unwrap_or_else(|| ones.clone());
            let padding = match ir::dense_i64_elements(op, "padding") {
                None => vec![0; 2 * rank],
                Some(p) if p.len() == 1 => vec![p[0]; 2 * rank],
                Some(p) => p,
            };
            let mut out = TensorSharding::replicated(rank);
            for d in 0..rank {
                let untouched = sizes.get(d) == Some(&1)
                    && strides.get(d) == Some(&1)
                    && base.get(d) == Some(&1)
                    && window.get(d) == Some(&1)
                    && padding.get(2 * d) == Some(&0)
                    && padding.get(2 * d + 1) == Some(&0);
                if untouched {
                    out.dims[d] = s.dims.get(d).cloned().unwrap_or_default();
                }
            }
            (0..n)
                .map(|_| Some(fit(mesh, &out_shape, out.clone())))
                .collect()
        }
        "stablehlo.gather" => gather_sharding(mesh, op, known).map_or(none, |s| vec![Some(s)]),
        "stablehlo.scatter" => {
            // The result has the operand's shape: it keeps the operand's split except on
            // the dimensions the indices address.
            use tpuc_dialects::stablehlo::attr_list_field;
            let n = results.len();
            let (Some(s), Some(text)) = (
                get(operands[0]),
                ir::attribute_text(op, "scatter_dimension_numbers"),
            ) else {
                return none;
            };
            let indexed = attr_list_field(&text, "scatter_dims_to_operand_dims");
            let mut out = s.clone();
            for d in indexed {
                if let Some(axes) = out.dims.get_mut(d as usize) {
                    axes.clear();
                }
            }
            (0..n)
                .map(|_| Some(fit(mesh, &out_shape, out.clone())))
                .collect()
        }
        "stablehlo.composite" if composite_name(op).as_deref() == Some(SDPA) => {
            // The output [.., S, D] follows the query's batch, head and query
            // positions; its last dimension (the value's features) is whole.
            let Some(q) = get(operands[0]) else {
                return none;
            };
            let mut out = q.clone();
            if let Some(last) = out.dims.last_mut() {
                last.clear();
            }
            vec![Some(fit(mesh, &out_shape, out))]
        }
        "stablehlo.composite" if composite_name(op).is_some_and(|n| acts_on_last_dims(&n)) => {
            // A norm or a gated MLP applies its other operands (scale, bias, weights)
            // to the trailing dimensions of the first: its results follow the first
            // operand on the leading dimensions; the trailing ones (as many as the
            // highest rank of the other operands, at least one) are whole.
            let Some(x) = get(operands[0]) else {
                return none;
            };
            let in_shape = shape(operands[0]);
            let trailing = operands[1..]
                .iter()
                .map(|&v| shape(v).len())
                .max()
                .unwrap_or(0)
                .max(1);
            let leading = in_shape.len().saturating_sub(trailing);
            results
                .iter()
                .map(|&r| {
                    let out_shape = shape(r);
                    let mut out = TensorSharding::replicated(out_shape.len());
                    for d in 0..leading.min(out_shape.len()) {
                        if in_shape[d] == out_shape[d] {
                            out.dims[d] = x.dims.get(d).cloned().unwrap_or_default();
                        }
                    }
                    Some(fit(mesh, &out_shape, out))
                })
                .collect()
        }
        _ => {
            // Shape-preserving ops: every operand of rank > 0 has the result's shape.
            let shaped: Vec<MlirValue> = operands
                .iter()
                .copied()
                .filter(|&v| !shape(v).is_empty())
                .collect();
            let preserving = ir::num_regions(op) == 0
                && !shaped.is_empty()
                && shaped.iter().all(|&v| shape(v) == out_shape)
                && results.iter().all(|&r| shape(r) == out_shape)
                && !matches!(
                    name,
                    "stablehlo.iota" | "stablehlo.constant" | "stablehlo.custom_call"
                )
                && (name.starts_with("stablehlo."));
            if !preserving {
                return none;
            }
            let all: Vec<Option<&TensorSharding>> = shaped.iter().map(|&v| get(v)).collect();
            let merged = merge(mesh, &out_shape, &all);
            results.iter().map(|_| merged.clone()).collect()
        }
    }
}

/// Where a convolution's batch and feature dimensions are, from its
/// `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>` dimension numbers.
struct ConvLayout {
    in_batch: usize,
    kernel_out: usize,
    out_batch: usize,
    out_feature: usize,
}

fn conv_layout(text: &str) -> Option<ConvLayout> {
    let body = text.split("conv<").nth(1)?.rsplit_once('>')?.0;
    let (input, rest) = body.split_once("]x[")?;
    let (kernel, output) = rest.split_once("]->[")?;
    let position = |list: &str, key: &str| {
        list.trim_matches(|c| c == '[' || c == ']')
            .split(',')
            .position(|t| t.trim() == key)
    };
    Some(ConvLayout {
        in_batch: position(input, "b")?,
        kernel_out: position(kernel, "o")?,
        out_batch: position(output, "b")?,
        out_feature: position(output, "f")?,
    })
}

/// A gather's result: its batch dimensions follow the indices (in order, skipping the
/// index vector dimension), its offset dimensions the operand's dimensions they slice
/// whole (a partial slice of a split dimension is whole in the result).
fn gather_sharding(
    mesh: &Mesh,
    op: MlirOperation,
    known: &FxHashMap<usize, TensorSharding>,
) -> Option<TensorSharding> {
    use tpuc_dialects::stablehlo::attr_list_field;
    let operands = ir::operands(op);
    let (operand, indices) = (operands[0], operands[1]);
    let (os, is) = (
        known.get(&(operand.ptr as usize)),
        known.get(&(indices.ptr as usize)),
    );
    if os.is_none() && is.is_none() {
        return None;
    }
    let text = ir::attribute_text(op, "dimension_numbers")?;
    let offset_dims = attr_list_field(&text, "offset_dims");
    let collapsed = attr_list_field(&text, "collapsed_slice_dims");
    let operand_batching = attr_list_field(&text, "operand_batching_dims");
    let index_vector_dim = text
        .split("index_vector_dim = ")
        .nth(1)
        .and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|t| t.parse::<usize>().ok())?;
    let slice_sizes = ir::i64_array(op, "slice_sizes")?;
    let (operand_shape, indices_shape) = (shape(operand), shape(indices));
    let out_shape = shape(ir::result(op, 0));
    let mut out = TensorSharding::replicated(out_shape.len());
    // Operand dimensions that become offset dimensions, in order.
    let mut sliced = (0..operand_shape.len())
        .filter(|d| !collapsed.contains(&(*d as i64)) && !operand_batching.contains(&(*d as i64)));
    let mut batch_source = (0..indices_shape.len()).filter(|&d| d != index_vector_dim);
    for (r, axes) in out.dims.iter_mut().enumerate() {
        if offset_dims.contains(&(r as i64)) {
            let d = sliced.next()?;
            if slice_sizes.get(d) == operand_shape.get(d) {
                *axes = os.and_then(|s| s.dims.get(d).cloned()).unwrap_or_default();
            }
        } else {
            let d = batch_source.next()?;
            *axes = is.and_then(|s| s.dims.get(d).cloned()).unwrap_or_default();
        }
    }
    Some(fit(mesh, &out_shape, out))
}

/// Decides the state arguments `op` updates first: a `scatter` or
/// `dynamic_update_slice` whose operand is an undecided state argument, or a transpose
/// or convert of one (as `index_copy` along a later dimension is lowered). The
/// argument takes the update's split on every dimension the update spans whole (a
/// KV cache is split like the keys written into it: along heads under Megatron, along
/// the batch under data parallelism); it stays whole where the update has no split.
fn decide_state(
    mesh: &Mesh,
    op: MlirOperation,
    args: &[MlirValue],
    views: &mut FxHashMap<usize, WeightView>,
    known: &mut FxHashMap<usize, TensorSharding>,
    arg_shardings: &mut [TensorSharding],
) {
    let operands = ir::operands(op);
    let Some(view) = operands.first().and_then(|v| views.get(&(v.ptr as usize))) else {
        return;
    };
    match ir::op_name(op) {
        "stablehlo.transpose" | "stablehlo.convert" => {
            let dims = match ir::i64_array(op, "permutation") {
                Some(perm) => perm.iter().map(|&p| view.dims[p as usize]).collect(),
                None => view.dims.clone(),
            };
            let arg = view.arg;
            views.insert(ir::result(op, 0).ptr as usize, WeightView { arg, dims });
        }
        "stablehlo.scatter" | "stablehlo.dynamic_update_slice" => {
            let arg = view.arg;
            if let Some(s) = update_sharding(mesh, op, known) {
                let mut whole = TensorSharding::replicated(shape(args[arg]).len());
                for (d, axes) in view.dims.iter().zip(&s.dims) {
                    whole.dims[*d] = axes.clone();
                }
                let whole = fit(mesh, &shape(args[arg]), whole);
                known.insert(operands[0].ptr as usize, s);
                known.insert(args[arg].ptr as usize, whole.clone());
                arg_shardings[arg] = whole;
            }
            views.retain(|_, v| v.arg != arg);
        }
        _ => {}
    }
}

/// The sharding of the operand of an update (`scatter` with one operand, or
/// `dynamic_update_slice`) that its update's sharding implies: each operand dimension
/// the update spans whole takes the update's axes there (a scatter's window
/// dimensions map to the operand's dimensions that are neither inserted nor batching,
/// in order). `None` when the update has no known sharding.
fn update_sharding(
    mesh: &Mesh,
    op: MlirOperation,
    known: &FxHashMap<usize, TensorSharding>,
) -> Option<TensorSharding> {
    use tpuc_dialects::stablehlo::attr_list_field;
    let operands = ir::operands(op);
    let operand_shape = shape(operands[0]);
    let mut out = TensorSharding::replicated(operand_shape.len());
    let (update, pairs): (MlirValue, Vec<(usize, usize)>) = match ir::op_name(op) {
        "stablehlo.dynamic_update_slice" => {
            let update = *operands.get(1)?;
            (update, (0..operand_shape.len()).map(|d| (d, d)).collect())
        }
        _ => {
            if operands.len() != 3 {
                return None;
            }
            let text = ir::attribute_text(op, "scatter_dimension_numbers")?;
            let skipped: Vec<i64> = attr_list_field(&text, "inserted_window_dims")
                .into_iter()
                .chain(attr_list_field(&text, "input_batching_dims"))
                .collect();
            let windows = attr_list_field(&text, "update_window_dims");
            let kept = (0..operand_shape.len()).filter(|d| !skipped.contains(&(*d as i64)));
            let pairs = kept.zip(windows).map(|(d, u)| (d, u as usize)).collect();
            (operands[2], pairs)
        }
    };
    let s = known.get(&(update.ptr as usize))?;
    let update_shape = shape(update);
    for (d, u) in pairs {
        if update_shape.get(u) == operand_shape.get(d) {
            out.dims[d] = s.dims.get(u).cloned().unwrap_or_default();
        }
    }
    Some(fit(mesh, &operand_shape, out))
}

/// An undecided Megatron weight as one value of the program sees it: the argument,
/// and for each of the value's dimensions the argument dimension it is.
struct WeightView {
    arg: usize,
    dims: Vec<usize>,
}

/// Whether `op` is a mixture-of-experts router: a `dot_general` whose result reaches a
/// `sort` (top-k routing) through no other matmul (walking forward through at most 64
/// ops that are neither `dot_general` nor an attention or gated-MLP composite). Megatron
/// leaves a router's weight whole: its few outputs gain nothing from a split, and
/// XLA's partitioner aborts on DeepSeek's group-limited routing when they are split.
fn is_router(op: MlirOperation) -> bool {
    if ir::op_name(op) != "stablehlo.dot_general" {
        return false;
    }
    let mut seen: Vec<usize> = Vec::new();
    let mut frontier: Vec<MlirValue> = ir::results(op);
    while let Some(v) = frontier.pop() {
        for user in ir::users(v) {
            if seen.contains(&(user.ptr as usize)) {
                continue;
            }
            if seen.len() >= 64 {
                return false;
            }
            seen.push(user.ptr as usize);
            match ir::op_name(user) {
                "stablehlo.sort" => return true,
                "stablehlo.dot_general" | "func.return" => {}
                "stablehlo.composite"
                    if matches!(
                        composite_name(user).as_deref(),
                        Some(SDPA) | Some("tpuc.gated_mlp")
                    ) => {}
                _ => frontier.extend(ir::results(user)),
            }
        }
    }
    false
}

/// Megatron's choice for an undecided weight at its first use `op`: as the weight of
/// a Linear (`dot_general` against an activation, contracting one weight dimension),
/// column-parallel (its other dimension split on `axis`) when the activation's
/// contracting dimension is whole, row-parallel (the contracting dimension split, XLA
/// sums the parts) when an earlier column-parallel Linear split it; as the table of a
/// `gather` (an embedding), vocabulary-parallel (dimension 0 split); as the weights of
/// a `tpuc.gated_mlp` composite (unfused), gate and up column-parallel and down
/// row-parallel. A split the weight's size does not allow leaves it whole.
fn megatron_weights(
    mesh: &Mesh,
    axis: &str,
    op: MlirOperation,
    known: &FxHashMap<usize, TensorSharding>,
    undecided: &FxHashMap<usize, WeightView>,
) -> Vec<(usize, TensorSharding)> {
    let operands = ir::operands(op);
    let is_undecided = |v: MlirValue| undecided.contains_key(&(v.ptr as usize));
    if ir::op_name(op) == "stablehlo.composite"
        && composite_name(op).as_deref() == Some("tpuc.gated_mlp")
        && operands.len() == 4
    {
        let split = |d: usize, w: MlirValue| {
            let shape = shape(w);
            let s = TensorSharding::split(shape.len(), d, &[axis]);
            (is_undecided(w) && shape.len() == 2 && s.check(mesh, &shape).is_ok())
                .then_some((w.ptr as usize, s))
        };
        return [
            split(0, operands[1]),
            split(0, operands[2]),
            split(1, operands[3]),
        ]
        .into_iter()
        .flatten()
        .collect();
    }
    megatron_weight(mesh, axis, op, known, undecided)
        .into_iter()
        .collect()
}

/// [`megatron_weights`] for a Linear or an embedding.
fn megatron_weight(
    mesh: &Mesh,
    axis: &str,
    op: MlirOperation,
    known: &FxHashMap<usize, TensorSharding>,
    undecided: &FxHashMap<usize, WeightView>,
) -> Option<(usize, TensorSharding)> {
    use tpuc_dialects::stablehlo::attr_list_field;
    let operands = ir::operands(op);
    let is_undecided = |v: MlirValue| undecided.contains_key(&(v.ptr as usize));
    let split = |d: usize, w: MlirValue| {
        let shape = shape(w);
        let s = TensorSharding::split(shape.len(), d, &[axis]);
        s.check(mesh, &shape).is_ok().then_some((w.ptr as usize, s))
    };
    match ir::op_name(op) {
        "stablehlo.dot_general" => {
            let text = ir::attribute_text(op, "dot_dimension_numbers")?;
            let (lc, rc) = (
                attr_list_field(&text, "lhs_contracting_dimensions"),
                attr_list_field(&text, "rhs_contracting_dimensions"),
            );
            if !attr_list_field(&text, "lhs_batching_dimensions").is_empty() || lc.len() != 1 {
                return None;
            }
            // (weight, its contracting dim, activation, the activation's contracting dim)
            let (w, wc, act, ac) = match (is_undecided(operands[1]), is_undecided(operands[0])) {
                (true, false) => (operands[1], rc[0], operands[0], lc[0]),
                (false, true) => (operands[0], lc[0], operands[1], rc[0]),
                _ => return None,
            };
            if shape(w).len() != 2 {
                return None;
            }
            let act_split = known
                .get(&(act.ptr as usize))
                .and_then(|s| s.dims.get(ac as usize))
                .is_some_and(|axes| axes.iter().any(|a| a == axis));
            match act_split {
                true => split(wc as usize, w),
                false => split(1 - wc as usize, w),
            }
        }
        "stablehlo.gather" if is_undecided(operands[0]) && shape(operands[0]).len() == 2 => {
            split(0, operands[0])
        }
        _ => None,
    }
}

/// The attribute dictionary of one argument or result: its sharding in `format`, and
/// `tpuc.sharding`.
fn sharding_attrs(
    mesh: &Mesh,
    format: ShardingFormat,
    s: &TensorSharding,
) -> Result<String, CompileError> {
    let written = match format {
        ShardingFormat::Gspmd => format!(
            "mhlo.sharding = {}",
            quote(&s.gspmd(mesh).map_err(|e| invalid(e.to_string()))?)
        ),
        ShardingFormat::Shardy => format!(
            "mhlo.frontend_attributes = {{xla.sdy.sharding = {}}}, mhlo.sharding = {}",
            quote(&s.shardy(MESH_NAME)),
            quote(&s.gspmd(mesh).map_err(|e| invalid(e.to_string()))?)
        ),
    };
    Ok(format!(
        "{{{written}, tpuc.sharding = {}}}",
        quote(&s.to_string())
    ))
}

fn run(module: &Module<'_>) -> Result<(), CompileError> {
    let module_op = module.as_operation().to_raw();
    let Some(mesh_text) = ir::attribute(module_op, "tpuc.mesh").and_then(ir::string_value) else {
        return Ok(());
    };
    let mesh = Mesh::parse(&mesh_text).map_err(|e| invalid(format!("tpuc.mesh: {e}")))?;
    let format = match ir::attribute(module_op, "tpuc.sharding_format").and_then(ir::string_value) {
        None => ShardingFormat::Shardy,
        Some(f) if f == "shardy" => ShardingFormat::Shardy,
        Some(f) if f == "gspmd" => ShardingFormat::Gspmd,
        Some(f) => {
            return Err(invalid(format!(
                "tpuc.sharding_format `{f}`: expected shardy or gspmd"
            )))
        }
    };
    let (func, block) =
        main_function(module).ok_or_else(|| invalid("the module has no @main".into()))?;
    let args = ir::block_arguments(block);
    let seeds = ir::array_elements(func, "arg_attrs");
    let mut known: FxHashMap<usize, TensorSharding> = FxHashMap::default();
    let mut arg_shardings = Vec::with_capacity(args.len());
    for (i, &a) in args.iter().enumerate() {
        let shape = shape(a);
        let s = match seeds
            .get(i)
            .and_then(|d| ir::dictionary_entry(*d, "tpuc.sharding"))
            .and_then(ir::string_value)
        {
            Some(text) => {
                let s = TensorSharding::parse(&text)
                    .map_err(|e| invalid(format!("argument {i}: {e}")))?;
                s.check(&mesh, &shape)
                    .map_err(|e| invalid(format!("argument {i}: {e}")))?;
                s
            }
            None => TensorSharding::replicated(shape.len()),
        };
        known.insert(a.ptr as usize, s.clone());
        arg_shardings.push(s);
    }
    // Megatron (`tpuc.megatron = "tp"` on the module): weights marked `tpuc.weight`
    // are decided at their first use, in program order (see `megatron_weight`).
    let megatron = ir::attribute(module_op, "tpuc.megatron").and_then(ir::string_value);
    let mut undecided: FxHashMap<usize, WeightView> = FxHashMap::default();
    if megatron.is_some() {
        for (i, &a) in args.iter().enumerate() {
            let entry = |key: &str| {
                seeds
                    .get(i)
                    .and_then(|d| ir::dictionary_entry(*d, key))
                    .is_some()
            };
            if entry("tpuc.weight") && !entry("tpuc.sharding") {
                let rank = shape(a).len();
                undecided.insert(
                    a.ptr as usize,
                    WeightView {
                        arg: i,
                        dims: (0..rank).collect(),
                    },
                );
            }
        }
    }
    // State (`tpuc.state = RESULT` on an argument, a KV cache): an unseeded state
    // argument is split like the first update written into it (`state_sharding`), and
    // the result holding its next value gets the argument's sharding, so that the two
    // alias shard by shard.
    let mut state_results: Vec<(usize, usize)> = Vec::new();
    let mut state_views: FxHashMap<usize, WeightView> = FxHashMap::default();
    for (i, &a) in args.iter().enumerate() {
        let entry = |key: &str| seeds.get(i).and_then(|d| ir::dictionary_entry(*d, key));
        let Some(result) = entry("tpuc.state").and_then(ir::integer_value) else {
            continue;
        };
        state_results.push((i, result as usize));
        if entry("tpuc.sharding").is_none() {
            let dims = (0..shape(a).len()).collect();
            state_views.insert(a.ptr as usize, WeightView { arg: i, dims });
        }
    }
    let mut returned = Vec::new();
    for op in ir::block_ops(block) {
        if ir::op_name(op) == "func.return" {
            returned = ir::operands(op);
            continue;
        }
        if !state_views.is_empty() {
            decide_state(
                &mesh,
                op,
                &args,
                &mut state_views,
                &mut known,
                &mut arg_shardings,
            );
        }
        if let Some(axis) = &megatron {
            // A transpose or convert of an undecided weight is the same weight seen
            // another way (at -O0 and -O1 a Linear's weight reaches its dot through a
            // transpose): decided where that view is first used.
            let operands = ir::operands(op);
            let view = match ir::op_name(op) {
                "stablehlo.transpose" | "stablehlo.convert" => operands
                    .first()
                    .and_then(|v| undecided.get(&(v.ptr as usize))),
                _ => None,
            };
            if let Some(parent) = view {
                let dims = match ir::i64_array(op, "permutation") {
                    Some(perm) => perm.iter().map(|&p| parent.dims[p as usize]).collect(),
                    None => parent.dims.clone(),
                };
                let arg = parent.arg;
                undecided.insert(ir::result(op, 0).ptr as usize, WeightView { arg, dims });
            }
            if is_router(op) {
                continue;
            }
            for (w, s) in megatron_weights(&mesh, axis, op, &known, &undecided) {
                let Some(view) = undecided.get(&w) else {
                    continue;
                };
                let arg = view.arg;
                let mut whole = TensorSharding::replicated(shape(args[arg]).len());
                for (d, axes) in view.dims.iter().zip(&s.dims) {
                    whole.dims[*d] = axes.clone();
                }
                undecided.retain(|_, v| v.arg != arg);
                known.insert(w, s);
                known.insert(args[arg].ptr as usize, whole.clone());
                arg_shardings[arg] = whole;
            }
        }
        for (r, s) in ir::results(op)
            .into_iter()
            .zip(propagate(&mesh, op, &known))
        {
            if let Some(s) = s {
                known.insert(r.ptr as usize, s);
            }
        }
    }
    // fsdp after megatron (`tpuc.fsdp` on a parameter): the first dimension megatron
    // left whole that the `fsdp` axis divides.
    for (i, &a) in args.iter().enumerate() {
        let marked = seeds
            .get(i)
            .and_then(|d| ir::dictionary_entry(*d, "tpuc.fsdp"))
            .is_some();
        let Ok(k) = mesh.axis_size("fsdp") else { break };
        if !marked || k <= 1 {
            continue;
        }
        let shape = shape(a);
        let s = &mut arg_shardings[i];
        if let Some(d) =
            (0..shape.len()).find(|&d| s.dims[d].is_empty() && shape[d] >= k && shape[d] % k == 0)
        {
            s.dims[d] = vec!["fsdp".to_string()];
        }
    }
    let mut result_shardings: Vec<TensorSharding> = returned
        .iter()
        .map(|&v| {
            known
                .get(&(v.ptr as usize))
                .cloned()
                .unwrap_or_else(|| TensorSharding::replicated(shape(v).len()))
        })
        .collect();
    for &(arg, result) in &state_results {
        let slot = result_shardings.get_mut(result).ok_or_else(|| {
            invalid(format!(
                "argument {arg} is state updated by result {result}, which @main does not have"
            ))
        })?;
        *slot = arg_shardings[arg].clone();
    }

    let list = |all: &[TensorSharding]| -> Result<String, CompileError> {
        let dicts = all
            .iter()
            .map(|s| sharding_attrs(&mesh, format, s))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(format!("[{}]", dicts.join(", ")))
    };
    let set = |op: MlirOperation, name: &str, text: &str| {
        if ir::set_attribute(op, name, text) {
            Ok(())
        } else {
            Err(CompileError::Internal(format!(
                "cannot write {name} = {text}"
            )))
        }
    };
    set(func, "arg_attrs", &list(&arg_shardings)?)?;
    set(func, "res_attrs", &list(&result_shardings)?)?;
    set(
        module_op,
        "mhlo.num_partitions",
        &format!("{} : i32", mesh.num_devices()),
    )?;
    if format == ShardingFormat::Shardy {
        let meshes = format!("{{{MESH_NAME} = {}}}", mesh.shardy());
        set(
            module_op,
            "mhlo.frontend_attributes",
            &format!("{{xla.sdy.meshes = {}}}", quote(&meshes)),
        )?;
    }
    Ok(())
}

/// Seeds `module` for the pass: the mesh and format on the module, and `shardings[i]`
/// (when given) on argument `i` of `@main`.
pub fn seed(
    module: &Module<'_>,
    mesh: &Mesh,
    format: ShardingFormat,
    shardings: &[Option<TensorSharding>],
    megatron: Option<(&str, &[bool])>,
    fsdp_after: &[usize],
    state: &[(usize, usize)],
) -> Result<(), CompileError> {
    let module_op = module.as_operation().to_raw();
    let (func, _) =
        main_function(module).ok_or_else(|| invalid("the module has no @main".into()))?;
    let fmt = match format {
        ShardingFormat::Shardy => "shardy",
        ShardingFormat::Gspmd => "gspmd",
    };
    let weights = megatron.map(|(_, w)| w).unwrap_or(&[]);
    let dicts: Vec<String> = shardings
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut entries = Vec::new();
            if let Some(s) = s {
                entries.push(format!("tpuc.sharding = {}", quote(&s.to_string())));
            }
            if weights.get(i).copied().unwrap_or(false) {
                entries.push("tpuc.weight".to_string());
            }
            if fsdp_after.contains(&i) {
                entries.push("tpuc.fsdp".to_string());
            }
            if let Some((_, result)) = state.iter().find(|(a, _)| *a == i) {
                entries.push(format!("tpuc.state = {result} : i64"));
            }
            format!("{{{}}}", entries.join(", "))
        })
        .collect();
    if let Some((axis, _)) = megatron {
        if !ir::set_attribute(module_op, "tpuc.megatron", &quote(axis)) {
            return Err(CompileError::Internal("cannot seed the shardings".into()));
        }
    }
    let ok = ir::set_attribute(module_op, "tpuc.mesh", &quote(&mesh.to_string()))
        && ir::set_attribute(module_op, "tpuc.sharding_format", &quote(fmt))
        && ir::set_attribute(func, "arg_attrs", &format!("[{}]", dicts.join(", ")));
    match ok {
        true => Ok(()),
        false => Err(CompileError::Internal("cannot seed the shardings".into())),
    }
}

/// The shardings the pass decided for `@main`'s arguments and results, taken off the
/// module (its `tpuc.*` attributes removed; the Shardy or GSPMD ones stay).
pub fn take_shardings(
    module: &Module<'_>,
) -> Result<(Vec<TensorSharding>, Vec<TensorSharding>), CompileError> {
    let module_op = module.as_operation().to_raw();
    let (func, _) =
        main_function(module).ok_or_else(|| invalid("the module has no @main".into()))?;
    let read = |name: &str| -> Result<Vec<TensorSharding>, CompileError> {
        ir::array_elements(func, name)
            .into_iter()
            .map(|d| {
                let text = ir::dictionary_entry(d, "tpuc.sharding")
                    .and_then(ir::string_value)
                    .ok_or_else(|| {
                        CompileError::Internal(format!("{name} without tpuc.sharding"))
                    })?;
                TensorSharding::parse(&text).map_err(|e| CompileError::Internal(e.to_string()))
            })
            .collect()
    };
    let (args, results) = (read("arg_attrs")?, read("res_attrs")?);
    let counts = [("arg_attrs", args.len()), ("res_attrs", results.len())];
    for (name, count) in counts {
        ir::edit_attribute_dictionaries(func, name, count, |_, mut entries| {
            entries.retain(|e| {
                let n = ir::identifier_text(e.name);
                !matches!(
                    n.as_str(),
                    "tpuc.sharding" | "tpuc.weight" | "tpuc.state" | "tpuc.fsdp"
                )
            });
            entries
        });
    }
    // SAFETY: the module operation is live; the names outlive the calls.
    unsafe {
        for name in ["tpuc.mesh", "tpuc.sharding_format", "tpuc.megatron"] {
            let n = mlir_sys::MlirStringRef {
                data: name.as_ptr() as *const _,
                length: name.len(),
            };
            mlir_sys::mlirOperationRemoveAttributeByName(module_op, n);
        }
    }
    Ok((args, results))
}
