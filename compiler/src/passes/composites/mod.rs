//! `stablehlo-outline-composites`: well-known subgraphs become `stablehlo.composite`.
//!
//! A composite (StableHLO spec, `composite`) is one op that names what its operands
//! compute (`name`, `composite_attributes`, `version`) and points at a function
//! (`decomposition`) holding the computation itself. A backend with a fused kernel for
//! the name can take the op; any other inlines the decomposition, so the program's
//! meaning is unchanged. XLA's CPU plugin does the latter.
//!
//! Each pattern is matched at its last op (the root), going backwards through the
//! function body so that the largest form (a layer norm with weight and bias) is seen
//! before its parts. The decomposition is a private `func.func @<name>.impl_<n>` that
//! holds a clone of exactly the matched ops; constants the pattern reads are cloned in
//! too and the originals are left for `stablehlo-dce`, since other ops may share them
//! after `stablehlo-cse`. A pattern fires only when it is closed: every intermediate
//! is read only by ops of the pattern, and every operand of its ops is a pattern op,
//! one of its declared inputs, or a splat constant. Types, axes and constants are
//! checked by each pattern; dtype-changing forms (converts inside) do not fire.
//!
//! Names and attributes follow what existing producers and consumers of composites use
//! for the same computation, so that a backend that knows them needs nothing new:
//!
//! | pattern | name | attributes | operands |
//! |---|---|---|---|
//! | softmax over one axis | `aten._softmax.default` | `dim : i64`, `half_to_float = false` | `x` |
//! | layer norm | `aten.layer_norm.default` | `normalized_shape : array<i64>`, `eps`, `has_weight`, `has_bias` | `x`, weight, bias if present |
//! | RMS norm with weight | `odml.rms_norm` | `epsilon` | `x`, weight |
//! | GELU, tanh form | `aten.gelu.default` | `approximate = "tanh"` | `x` |
//! | SiLU | `aten.silu.default` | (none) | `x` |
//! | scaled dot-product attention | `aten.scaled_dot_product_attention.default` | `scale : f64`, `is_causal`, `enable_gqa` (when true), `operand_names` | `query`, `key`, `value`, `attn_mask` if not causal |
//! | gated MLP (SwiGLU, GeGLU) | `tpuc.gated_mlp` | `activation = "silu"`, `"gelu"` or `"gelu_tanh"`; `fused_gate_up = true` for one gate/up projection | `x`, gate, up and down weights (`[out, in]`), or `x`, gate/up weight, down weight |
//! | rotary position embedding | `tpuc.rotary_embedding` | `interleaved` (`false`: `rotate_half`; `true`: GPT-J's every other element) | `x`, `cos`, `sin` (all of `x`'s shape) |
//!
//! `odml.*` is the namespace of Google AI Edge (ai-edge-torch emits, LiteRT consumes
//! `odml.rms_norm` with an `epsilon` attribute and `(input, scale)` operands). For ops
//! that are single PyTorch operators ai-edge-torch names the composite after the ATen
//! overload with the overload's arguments as attributes (`aten.gelu.default` with
//! `approximate`); the softmax, layer norm and SiLU composites use the same convention.
//! `eps`/`epsilon` have the element type of the normalized values (`f32`, `f64`).
//! `tpuc.gated_mlp` and `tpuc.rotary_embedding` are tpuc's own: no producer or consumer
//! of composites names these computations yet (`mlp.rs` and `rotary.rs` give their
//! operands and meaning).

mod activations;
mod attention;
mod mlp;
mod norms;
mod rotary;
mod softmax;

use std::collections::{HashMap, HashSet};

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirBlock, MlirOperation, MlirValue};
use tpuc_dialects::TensorType;

use super::{ir, Pass};
use crate::error::CompileError;

pub struct OutlineComposites;

impl Pass for OutlineComposites {
    fn name(&self) -> &'static str {
        "stablehlo-outline-composites"
    }
    fn description(&self) -> &'static str {
        "wrap attention, gated MLPs, rotary embeddings, softmax, layer/RMS norm, GELU (tanh) and SiLU subgraphs in stablehlo.composite ops"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let funcs = ir::named_function_blocks(&module);
        // Decompositions already in the module are not matched again.
        let decompositions = decomposition_symbols(&funcs);
        // The op names each function holds.
        let present: Vec<HashSet<&str>> = funcs
            .iter()
            .map(|(_, block)| {
                let mut names = HashSet::new();
                ir::for_each_op_of(*block, |op| {
                    names.insert(ir::op_name(op));
                });
                names
            })
            .collect();
        let mut names = Symbols::of(&funcs);
        for ((fname, block), present) in funcs.iter().zip(&present) {
            let Some(block) = block else { continue };
            if decompositions.contains(fname) {
                continue;
            }
            let matchers: Vec<Matcher> = MATCHERS
                .iter()
                .filter(|(needs, _)| present.contains(needs))
                .map(|(_, m)| *m)
                .collect();
            if matchers.is_empty() {
                continue;
            }
            let body = ir::block_ops(*block);
            let mut erased: HashSet<usize> = HashSet::new();
            let mut created = Vec::new();
            for &op in body.iter().rev() {
                if erased.contains(&(op.ptr as usize)) {
                    continue;
                }
                let Some(found) = matchers.iter().find_map(|m| m(op)) else {
                    continue;
                };
                if let Some(out) = outline(&module, &found, &mut names) {
                    if found
                        .attributes
                        .iter()
                        .any(|(k, v)| *k == "enable_gqa" && v == "true")
                    {
                        attention::fold_gqa(out.body);
                    }
                    erased.extend(out.erased.iter().map(|o| o.ptr as usize));
                    created.push((found.name, out));
                }
            }
            number_in_program_order(&created);
        }
        Ok(module)
    }
}

/// A subgraph to replace: its ops (root included, constants not needed), the values
/// it reads from outside in operand order, and the composite's name and attributes.
pub(super) struct Found {
    pub name: &'static str,
    /// `(name, attribute text)` pairs of `composite_attributes`.
    pub attributes: Vec<(&'static str, String)>,
    pub inputs: Vec<MlirValue>,
    pub ops: Vec<MlirOperation>,
    pub root: MlirOperation,
}

type Matcher = fn(MlirOperation) -> Option<Found>;

/// The patterns, in the order they are tried, each with an op every match of it holds
/// (in the root's block, as `outline` requires): a function without that op cannot
/// match the pattern, which is then not tried on its ops at all.
const MATCHERS: &[(&str, Matcher)] = &[
    ("stablehlo.dot_general", mlp::gated_mlp),
    ("stablehlo.composite", attention::sdpa),
    ("stablehlo.negate", rotary::rope),
    ("stablehlo.exponential", softmax::softmax),
    ("stablehlo.rsqrt", norms::layer_norm),
    ("stablehlo.rsqrt", norms::rms_norm),
    ("stablehlo.tanh", activations::gelu_tanh),
    ("stablehlo.logistic", activations::silu),
];

fn key(v: MlirValue) -> usize {
    v.ptr as usize
}

/// A constant, or a broadcast or convert of one (booleans are written as i8
/// constants and a convert): cloned into decompositions, never erased here.
fn is_constant_like(op: MlirOperation) -> bool {
    match ir::op_name(op) {
        "stablehlo.constant" => true,
        "stablehlo.broadcast_in_dim" | "stablehlo.convert" => ir::defining_op(ir::operands(op)[0])
            .is_some_and(|c| ir::op_name(c) == "stablehlo.constant"),
        _ => false,
    }
}

/// The symbols every `stablehlo.composite` of `funcs` names as its decomposition.
pub(crate) fn decomposition_symbols(funcs: &[(String, Option<MlirBlock>)]) -> HashSet<String> {
    let mut out = HashSet::new();
    for (_, block) in funcs {
        ir::for_each_op_of(*block, |op| {
            if ir::op_name(op) == "stablehlo.composite" {
                out.extend(ir::symbol_ref(op, "decomposition"));
            }
        });
    }
    out
}

/// The function names of the module, and for each composite name the number from
/// which its next free `<name>.impl_<n>` is searched.
pub(crate) struct Symbols {
    taken: HashSet<String>,
    next: HashMap<&'static str, usize>,
}

impl Symbols {
    /// The names of `funcs`, taken.
    pub(crate) fn of(funcs: &[(String, Option<MlirBlock>)]) -> Symbols {
        Symbols {
            taken: funcs.iter().map(|(n, _)| n.clone()).collect(),
            next: HashMap::new(),
        }
    }

    /// The smallest free `<name>.impl_<n>`, taken from then on. Symbols of one name
    /// are given out in increasing order and never freed, so the search resumes after
    /// the last one.
    pub(crate) fn fresh(&mut self, name: &'static str) -> String {
        let n = self.next.entry(name).or_insert(0);
        loop {
            let s = format!("{name}.impl_{n}");
            *n += 1;
            if self.taken.insert(s.clone()) {
                return s;
            }
        }
    }
}

/// What `outline` made and removed.
struct Outlined {
    composite: MlirOperation,
    decomposition: MlirOperation,
    /// The decomposition's body.
    body: MlirBlock,
    symbol: String,
    erased: Vec<MlirOperation>,
}

/// Matching goes backwards, so the decompositions of one name were numbered from the
/// end of the function: give the same symbols out again from its start.
fn number_in_program_order(created: &[(&'static str, Outlined)]) {
    let mut by_name: HashMap<&str, Vec<&Outlined>> = HashMap::new();
    for (name, o) in created {
        by_name.entry(name).or_default().push(o);
    }
    for list in by_name.values() {
        let symbols: Vec<&String> = list.iter().rev().map(|o| &o.symbol).collect();
        for (o, s) in list.iter().zip(symbols) {
            ir::set_attribute(o.decomposition, "sym_name", &format!("\"{s}\""));
            ir::set_attribute(o.composite, "decomposition", &format!("@{s}"));
        }
    }
}

/// Replaces `found` by a composite when it is closed (see the module doc).
fn outline(module: &Module<'_>, found: &Found, names: &mut Symbols) -> Option<Outlined> {
    let root_results = ir::results(found.root);
    let [root_value] = root_results[..] else {
        return None;
    };
    let inputs: HashSet<usize> = found.inputs.iter().map(|v| key(*v)).collect();
    // The pattern's ops and the constant-like ops they read, by handle.
    // Each op once: a matcher may list an op (the root, say) more than once, and
    // erasing it twice below would free it twice (valgrind showed it on wav2vec2; the
    // bench saw "double free or corruption").
    let mut set: HashSet<usize> = HashSet::new();
    let mut members: Vec<MlirOperation> = Vec::new();
    for &op in found.ops.iter().chain(std::iter::once(&found.root)) {
        if set.insert(op.ptr as usize) {
            members.push(op);
        }
    }
    let mut i = 0;
    while i < members.len() {
        let op = members[i];
        i += 1;
        for v in ir::operands(op) {
            if inputs.contains(&key(v)) {
                continue;
            }
            let d = ir::defining_op(v)?;
            if set.contains(&(d.ptr as usize)) {
                continue;
            }
            if !is_constant_like(d) {
                return None;
            }
            set.insert(d.ptr as usize);
            members.push(d);
        }
    }
    // Inputs must come from outside; intermediates must stay inside.
    for v in &found.inputs {
        if ir::defining_op(*v).is_some_and(|d| set.contains(&(d.ptr as usize))) {
            return None;
        }
    }
    let block = ir::parent_block(found.root);
    for &op in &members {
        if ir::parent_block(op).ptr != block.ptr {
            return None;
        }
        if op.ptr == found.root.ptr || is_constant_like(op) {
            continue;
        }
        for r in ir::results(op) {
            if ir::users(r)
                .iter()
                .any(|u| !set.contains(&(u.ptr as usize)))
            {
                return None;
            }
        }
    }
    // Block order, so that every clone's operands are defined before it (all members
    // are in one block, checked above; MLIR keeps the block's order indices).
    members.sort_by(|a, b| {
        if a.ptr == b.ptr {
            std::cmp::Ordering::Equal
        } else if ir::is_before_in_block(*a, *b) {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Greater
        }
    });

    let symbol = names.fresh(found.name);
    let loc = ir::location(found.root);
    let body = ir::append_private_function(module, &symbol, &found.inputs, &[root_value], loc)?;
    let mut map: HashMap<usize, MlirValue> = found
        .inputs
        .iter()
        .zip(ir::block_arguments(body))
        .map(|(v, a)| (key(*v), a))
        .collect();
    for &op in &members {
        let clone = ir::clone_into(op, body);
        for (i, v) in ir::operands(op).into_iter().enumerate() {
            ir::set_operand(clone, i as isize, map[&key(v)]);
        }
        for (old, new) in ir::results(op).into_iter().zip(ir::results(clone)) {
            map.insert(key(old), new);
        }
    }
    ir::append_return(body, &[map[&key(root_value)]], loc);

    let mut attributes = found
        .attributes
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect::<Vec<_>>()
        .join(", ");
    if !attributes.is_empty() {
        attributes = format!("{{{attributes}}}");
    } else {
        attributes = "{}".to_string();
    }
    let composite = ir::insert_op_before(
        found.root,
        "stablehlo.composite",
        &found.inputs,
        &[root_value],
        &[
            ("name", format!("\"{}\"", found.name)),
            ("composite_attributes", attributes),
            ("decomposition", format!("@{symbol}")),
            ("version", "0 : i32".to_string()),
        ],
    )?;
    ir::replace_uses(root_value, ir::results(composite)[0]);
    let mut erased = Vec::new();
    for &op in members.iter().rev() {
        if is_constant_like(op) {
            continue;
        }
        if ir::results(op).iter().any(|r| ir::has_uses(*r)) {
            // Cannot happen for a closed pattern; keep the op rather than break the IR.
            continue;
        }
        ir::erase(op);
        erased.push(op);
    }
    Some(Outlined {
        composite,
        decomposition: ir::block_parent(body),
        body,
        symbol,
        erased,
    })
}

// ---- Matching helpers shared by the patterns ------------------------------------

/// The op defining `v` when it is named `name`.
pub(super) fn def(v: MlirValue, name: &str) -> Option<MlirOperation> {
    ir::defining_op(v).filter(|o| ir::op_name(*o) == name)
}

pub(super) fn is(op: MlirOperation, name: &str) -> bool {
    ir::op_name(op) == name
}

pub(super) fn same(a: MlirValue, b: MlirValue) -> bool {
    a.ptr == b.ptr
}

pub(super) fn result(op: MlirOperation) -> MlirValue {
    ir::results(op)[0]
}

pub(super) fn ty(v: MlirValue) -> Option<TensorType> {
    ir::tensor_type(v)
}

/// The two operands of binary op `op` named `name`, in both orders (for commutative
/// ops); `f` is tried on each order and the first success is kept.
pub(super) fn either<T>(
    op: MlirOperation,
    name: &str,
    mut f: impl FnMut(MlirValue, MlirValue) -> Option<T>,
) -> Option<T> {
    if !is(op, name) {
        return None;
    }
    let a = ir::operands(op);
    if a.len() != 2 {
        return None;
    }
    f(a[0], a[1]).or_else(|| f(a[1], a[0]))
}

/// The two operands of binary op `op` named `name`, in order.
pub(super) fn binary(op: MlirOperation, name: &str) -> Option<(MlirValue, MlirValue)> {
    let a = ir::operands(op);
    (is(op, name) && a.len() == 2).then(|| (a[0], a[1]))
}

/// `v` is a splat constant equal to `want` in `v`'s element type (f32 or f64).
pub(super) fn splat_is(v: MlirValue, want: f64) -> bool {
    let (Some(got), Some(t)) = (ir::splat_value(v), ty(v)) else {
        return false;
    };
    match t.dtype {
        tpuc_artifact::DType::F32 => got as f32 == want as f32,
        tpuc_artifact::DType::F64 => got == want,
        _ => false,
    }
}

/// `broadcast_in_dim(x)` defining `v`: (op, x, broadcast dimensions).
pub(super) fn broadcast(v: MlirValue) -> Option<(MlirOperation, MlirValue, Vec<i64>)> {
    let op = def(v, "stablehlo.broadcast_in_dim")?;
    let dims = ir::i64_array(op, "broadcast_dimensions")?;
    Some((op, ir::operands(op)[0], dims))
}

/// `op`'s dot dimension numbers are `batch` on both sides and one contracting
/// dimension each.
pub(super) fn dot_dims(op: MlirOperation, batch: &[i64], lhs: i64, rhs: i64) -> bool {
    use tpuc_dialects::stablehlo::attr_list_field;
    let Some(text) = ir::attribute_text(op, "dot_dimension_numbers") else {
        return false;
    };
    attr_list_field(&text, "lhs_batching_dimensions") == batch
        && attr_list_field(&text, "rhs_batching_dimensions") == batch
        && attr_list_field(&text, "lhs_contracting_dimensions") == [lhs]
        && attr_list_field(&text, "rhs_contracting_dimensions") == [rhs]
}

/// Entry `key` of composite `op`'s `composite_attributes`, printed (`-1 : i64`,
/// `"tanh"`); `None` when it has no such entry.
pub(super) fn composite_attribute(op: MlirOperation, key: &str) -> Option<String> {
    let a = ir::dictionary_entry(ir::attribute(op, "composite_attributes")?, key)?;
    // SAFETY: the attribute belongs to the context, which outlives this call.
    Some(unsafe { melior::ir::Attribute::from_raw(a) }.to_string())
}

/// The value slices `a` and `b` both read, and its shape, when its last dimension is
/// even and not zero (the patterns that split a value in two).
pub(super) fn split_source(a: MlirOperation, b: MlirOperation) -> Option<(MlirValue, Vec<i64>)> {
    let x = ir::operands(a)[0];
    if !same(ir::operands(b)[0], x) {
        return None;
    }
    let shape = ty(x)?.shape;
    let d = *shape.last()?;
    (d != 0 && d % 2 == 0).then_some((x, shape))
}

/// Slice `op` of a value of shape `shape` is `x[..., from:to:step]`: every dimension
/// whole but the last.
pub(super) fn slices_last_dim(
    op: MlirOperation,
    shape: &[i64],
    from: i64,
    to: i64,
    step: i64,
) -> bool {
    let rank = shape.len();
    let (mut start, mut limit, mut strides) = (vec![0; rank], shape.to_vec(), vec![1; rank]);
    start[rank - 1] = from;
    limit[rank - 1] = to;
    strides[rank - 1] = step;
    ir::i64_array(op, "start_indices") == Some(start)
        && ir::i64_array(op, "limit_indices") == Some(limit)
        && ir::i64_array(op, "strides") == Some(strides)
}

/// The reductions the patterns read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Reduction {
    Sum,
    Max,
}

/// A single-operand `reduce` defining `v`, of kind `kind` with its identity as the
/// initial value: (op, reduced operand, dimensions).
pub(super) fn reduce(
    v: MlirValue,
    kind: Reduction,
) -> Option<(MlirOperation, MlirValue, Vec<i64>)> {
    let op = def(v, "stablehlo.reduce")?;
    let args = ir::operands(op);
    if args.len() != 2 || ir::results(op).len() != 1 {
        return None;
    }
    let init = ir::splat_value(args[1])?;
    let ok_init = match kind {
        Reduction::Sum => init == 0.0,
        Reduction::Max => init == f64::NEG_INFINITY,
    };
    if !ok_init || !reduction_body(op, kind) {
        return None;
    }
    Some((op, args[0], ir::i64_array(op, "dimensions")?))
}

/// The body of `reduce` is `a + b`, or `max(a, b)` (plain or NaN-propagating, as the
/// lowerings write it).
fn reduction_body(op: MlirOperation, kind: Reduction) -> bool {
    let Some((args, ops)) = ir::region_body(op) else {
        return false;
    };
    let [a, b] = args[..] else { return false };
    let names: Vec<&str> = ops.iter().map(|o| ir::op_name(*o)).collect();
    let returns = |op: MlirOperation, v: MlirValue| {
        is(op, "stablehlo.return") && ir::operands(op).len() == 1 && same(ir::operands(op)[0], v)
    };
    let takes = |op: MlirOperation, x: MlirValue, y: MlirValue| {
        let o = ir::operands(op);
        o.len() == 2 && same(o[0], x) && same(o[1], y)
    };
    let head = match kind {
        Reduction::Sum => "stablehlo.add",
        Reduction::Max => "stablehlo.maximum",
    };
    if names.first().copied() != Some(head) || !takes(ops[0], a, b) {
        return false;
    }
    let m = result(ops[0]);
    match (kind, ops.len()) {
        (_, 2) => returns(ops[1], m),
        (Reduction::Max, 6) => {
            // isnan(a) ? a : (isnan(b) ? b : max(a, b))
            let is_nan_test = |op: MlirOperation, x: MlirValue| {
                is(op, "stablehlo.compare")
                    && takes(op, x, x)
                    && ir::attribute_text(op, "comparison_direction")
                        .is_some_and(|t| t.contains("NE"))
            };
            let selects = |op: MlirOperation, c: MlirValue, t: MlirValue, f: MlirValue| {
                let o = ir::operands(op);
                is(op, "stablehlo.select")
                    && o.len() == 3
                    && same(o[0], c)
                    && same(o[1], t)
                    && same(o[2], f)
            };
            is_nan_test(ops[1], a)
                && is_nan_test(ops[2], b)
                && selects(ops[3], result(ops[2]), b, m)
                && selects(ops[4], result(ops[1]), a, result(ops[3]))
                && returns(ops[5], result(ops[4]))
        }
        _ => false,
    }
}

/// Formats `v` as an MLIR float attribute of element type `dtype` (`1.0e-5 : f32`),
/// exactly: the shortest decimal that reads back as the same value.
pub(super) fn float_attr(v: f64, dtype: tpuc_artifact::DType) -> Option<String> {
    let (text, ty) = match dtype {
        tpuc_artifact::DType::F32 => (format!("{:e}", v as f32), "f32"),
        tpuc_artifact::DType::F64 => (format!("{v:e}"), "f64"),
        _ => return None,
    };
    let (mantissa, exponent) = text.split_once('e')?;
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    Some(format!("{mantissa}e{exponent} : {ty}"))
}

/// The `precision_config` text of the first `dot_general` of a decomposition's body
/// (what a pass giving a composite another decomposition asks of its matmuls).
pub(crate) fn dot_precision(block: MlirBlock) -> Option<String> {
    let dot = super::ir::nested_ops(block)
        .into_iter()
        .find(|op| super::ir::op_name(*op) == "stablehlo.dot_general")?;
    super::ir::attribute_text(dot, "precision_config")
}

#[cfg(test)]
mod tests {
    use super::float_attr;
    use tpuc_artifact::DType;

    #[test]
    fn float_attributes_read_back_exactly() {
        assert_eq!(
            float_attr(1e-5f32 as f64, DType::F32).as_deref(),
            Some("1.0e-5 : f32")
        );
        assert_eq!(
            float_attr(1e-12, DType::F64).as_deref(),
            Some("1.0e-12 : f64")
        );
        for v in [
            (2.0f64 / std::f64::consts::PI).sqrt(),
            1e-6,
            0.044715,
            3.0e38,
        ] {
            let text = float_attr(v as f32 as f64, DType::F32).unwrap();
            let number = text.strip_suffix(" : f32").unwrap();
            assert!(number.contains('.'), "{text}");
            assert_eq!(number.parse::<f32>().unwrap(), v as f32, "{text}");
        }
        assert_eq!(float_attr(1e-5, DType::F16), None);
    }
}
