//! Import: a torch.export [`Graph`] becomes an ATen-level MLIR module.
//!
//! One `aten.*` operation per graph node, encoded as described in
//! [`tpuc_dialects::aten`], inside `func.func @main` whose arguments follow the
//! exported program's signature (weights first, then user inputs, in export order).

use rustc_hash::FxHashMap as HashMap;

use melior::ir::block::BlockLike;
use melior::ir::{Block, Location, Module, Region, RegionLike};
use melior::Context;
use tpuc_artifact::DType;
use tpuc_dialects::func::append_function;
use tpuc_dialects::stablehlo::scalar_literal;
use tpuc_dialects::{aten, DialectError, TValue, TensorType};

use crate::error::CompileError;
use crate::frontend::{Arg, Graph, InputKind, Node, NodeOutput, TensorMeta};

fn tensor_type(meta: &TensorMeta) -> TensorType {
    TensorType::new(meta.shape.clone(), meta.dtype)
}

/// A location naming the node, with its source line when the export kept one:
/// `loc("linear_1"("model.py":12:0))`.
pub fn node_location<'c>(
    ctx: &'c Context,
    name: &str,
    source: Option<&(String, u32)>,
) -> Location<'c> {
    let child = match source {
        Some((file, line)) => Location::new(ctx, file, *line as usize, 0),
        None => Location::unknown(ctx),
    };
    Location::name(ctx, name, child)
}

/// `s` as an MLIR string literal.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The MLIR attribute text for a non-tensor argument; `None` when it carries nothing
/// (None, memory format, layout, device).
fn attribute_text(arg: &Arg) -> Result<Option<String>, String> {
    let list = |items: Vec<String>, elem: &str| {
        if items.is_empty() {
            format!("array<{elem}>")
        } else {
            format!("array<{elem}: {}>", items.join(", "))
        }
    };
    Ok(Some(match arg {
        Arg::None | Arg::Ignored(_) => return Ok(None),
        Arg::Tensor(_) | Arg::Tensors(_) | Arg::OptionalTensors(_) => return Ok(None),
        Arg::Int(i) => format!("{i} : i64"),
        Arg::Ints(v) => list(v.iter().map(|i| i.to_string()).collect(), "i64"),
        Arg::Float(f) => format!("{} : f64", scalar_literal(DType::F64, *f)),
        Arg::Floats(v) => list(
            v.iter().map(|f| scalar_literal(DType::F64, *f)).collect(),
            "f64",
        ),
        Arg::Bool(b) => b.to_string(),
        Arg::Bools(v) => list(v.iter().map(|b| b.to_string()).collect(), "i1"),
        Arg::String(s) => quote(s),
        Arg::Strings(v) => format!(
            "[{}]",
            v.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", ")
        ),
        Arg::ScalarType(Ok(d)) => quote(d.name()),
        Arg::ScalarType(Err(d)) => return Err(format!("dtype {d} is not supported by tpuc")),
        Arg::Graph { name, .. } => {
            return Err(format!(
                "subgraph `{name}` is an argument of an op that takes none"
            ))
        }
        Arg::SymInt(_) | Arg::SymInts(_) => {
            return Err("a size that depends on tensor values (an unbacked symbol) is an argument here; tpuc computes such sizes only where the frontend rewrites them (see frontend::data_dependent)".into())
        }
        Arg::Unsupported(kind) => {
            return Err(format!("argument kind `{kind}` is not supported by tpuc"))
        }
    }))
}

/// `aten.add_.Tensor` -> `aten.add.Tensor`: the functional form of an in-place op
/// (trailing `_` on the op name; dunders such as `__and__` are not in-place).
fn inplace_functional_name(target: &str) -> Option<String> {
    let mut parts: Vec<&str> = target.split('.').collect();
    if parts.len() < 3 || parts[0] != "aten" {
        return None;
    }
    let name = parts[1];
    if name.ends_with('_') && !name.ends_with("__") {
        let functional = name.trim_end_matches('_').to_string();
        parts[1] = &functional;
        return Some(parts.join("."));
    }
    None
}

/// Batch norm in training mode with running statistics (`aten.batch_norm`,
/// `native_batch_norm`, `_native_batch_norm_legit` or `cudnn_batch_norm` with
/// `training=True`) writes the statistics' next values into `running_mean` and
/// `running_var` in place, as PyTorch's kernel does: their names, `None` for any
/// other node. (A Core ATen graph has the functional form instead, whose results the
/// graph's output specs name.)
fn running_stats_written(node: &Node) -> Option<(&str, &str)> {
    let mut parts = node.target.split('.');
    if parts.next() != Some("aten") {
        return None;
    }
    let name = parts.next()?;
    if !matches!(
        name,
        "batch_norm" | "native_batch_norm" | "_native_batch_norm_legit" | "cudnn_batch_norm"
    ) {
        return None;
    }
    let arg = |k: &str| node.args.iter().find(|(n, _)| n == k).map(|(_, a)| a);
    if !matches!(arg("training"), Some(Arg::Bool(true))) {
        return None;
    }
    match (arg("running_mean"), arg("running_var")) {
        (Some(Arg::Tensor(m)), Some(Arg::Tensor(v))) => Some((m.as_str(), v.as_str())),
        _ => None,
    }
}

/// An instance norm that normalizes with the input's statistics and also has running
/// statistics (`InstanceNorm(track_running_stats=True)` in training mode) updates them
/// in place; tpuc does not, so such a node is refused rather than left stale.
fn instance_norm_updates_stats(node: &Node) -> bool {
    if !node.target.starts_with("aten.instance_norm.") {
        return false;
    }
    let arg = |k: &str| node.args.iter().find(|(n, _)| n == k).map(|(_, a)| a);
    matches!(arg("use_input_stats"), Some(Arg::Bool(true)))
        && matches!(arg("running_mean"), Some(Arg::Tensor(_)))
}

/// The tensors `node` writes in place: an in-place op's first argument, a training
/// batch norm's running statistics.
fn written_in_place(node: &Node) -> Vec<&str> {
    if let Some((mean, var)) = running_stats_written(node) {
        return vec![mean, var];
    }
    match (inplace_functional_name(&node.target), node.args.first()) {
        (Some(_), Some((_, Arg::Tensor(m)))) => vec![m.as_str()],
        _ => Vec::new(),
    }
}

/// How a view was made from its base, so a write into the view can be carried back.
#[derive(Clone, Debug)]
struct ViewInfo<'g> {
    base: String,
    node: &'g Node,
}

/// The ATen op that puts `new` (a modified view) back into `base`: the inverse of
/// the view op, or `None` when tpuc cannot invert it.
fn write_back_op(view: &Node) -> Option<&'static str> {
    let name = view.target.split('.').nth(1).unwrap_or("");
    Some(match name {
        "slice" => "aten.slice_scatter.default",
        "select" => "aten.select_scatter.default",
        "view" | "_unsafe_view" | "reshape" | "unsqueeze" | "squeeze" | "flatten" | "unflatten"
        | "view_as" | "alias" | "detach" => "aten.view.default",
        "transpose" | "swapaxes" | "swapdims" => "aten.transpose.int",
        "t" => "aten.t.default",
        "permute" => "aten.permute.default",
        _ => return None,
    })
}

/// Ops whose output aliases their input's storage.
fn is_view_op(target: &str) -> bool {
    let name = target.split('.').nth(1).unwrap_or("");
    matches!(
        name,
        "view"
            | "_unsafe_view"
            | "reshape"
            | "slice"
            | "select"
            | "expand"
            | "transpose"
            | "permute"
            | "unsqueeze"
            | "squeeze"
            | "t"
            | "as_strided"
            | "diagonal"
            | "narrow"
            | "alias"
            | "unflatten"
            | "flatten"
            | "split"
            | "split_with_sizes"
            | "chunk"
            | "unbind"
            | "view_as"
            | "expand_as"
            | "swapaxes"
            | "swapdims"
            | "movedim"
            | "detach"
            | "unfold"
            | "tensor_split"
            | "real"
    )
}

/// A node's operands and its attributes (name, MLIR text).
type NodeOperands = (Vec<TValue>, Vec<(String, String)>);

/// The import state: current values by name, and the aliasing needed to functionalize
/// in-place ops (the training IR keeps `add_`, `fill_`, `index_put_`...).
///
/// Each in-place op becomes its functional form. Writing into a view is carried back to
/// its base with the inverse op (`slice` -> `slice_scatter`, `select` -> `select_scatter`,
/// reshapes, transposes), recursively up to the root tensor, whose version then moves on;
/// a view whose root changed since it was read is re-made from the new base when read
/// again. Views tpuc cannot invert (as_strided, diagonal, expand, split...) are errors.
/// A buffer the program updates for its next call: the buffer's placeholder and, in a
/// Core ATen graph, the tensor holding its new value (`buffer_mutation`); an
/// as-exported graph writes the buffer in place, and its value at the end is the new one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateUpdate {
    pub input: String,
    pub value: Option<String>,
}

/// The buffers `graph` updates, in the order `@main` returns them after the user
/// outputs: Core ATen mutations in output-spec order, then buffers written in place
/// (directly or through views) in input order.
pub fn state_updates(graph: &Graph) -> Vec<StateUpdate> {
    let mut updates: Vec<StateUpdate> = graph
        .buffer_mutations
        .iter()
        .map(|(input, value)| StateUpdate {
            input: input.clone(),
            value: Some(value.clone()),
        })
        .collect();
    let mut base: HashMap<&str, &str> = HashMap::default();
    let mut written: Vec<&str> = Vec::new();
    for node in &graph.nodes {
        let outs = node.output_names();
        if is_view_op(&node.target) && outs.len() == 1 {
            if let Some((_, Arg::Tensor(b))) = node.args.first() {
                base.insert(outs[0], b.as_str());
            }
        }
        for m in written_in_place(node) {
            let mut root = m;
            while let Some(b) = base.get(root) {
                root = b;
            }
            written.push(root);
        }
    }
    for spec in &graph.inputs {
        if spec.kind == InputKind::Buffer
            && written.contains(&spec.name.as_str())
            && !updates.iter().any(|u| u.input == spec.name)
        {
            updates.push(StateUpdate {
                input: spec.name.clone(),
                value: None,
            });
        }
    }
    updates
}

struct Importer<'c, 'g> {
    ctx: &'c Context,
    graph: &'g Graph,
    /// The buffers the program may write in place (from [`state_updates`]).
    state: Vec<String>,
    emitter: tpuc_dialects::Emitter<'c>,
    values: HashMap<String, TValue>,
    views: HashMap<String, ViewInfo<'g>>,
    /// Version of each root tensor (bumped by every write).
    version: HashMap<String, u64>,
    /// Root version each view's value was computed at.
    seen: HashMap<String, u64>,
    /// Path of the subgraph being imported (`cond/true_graph_0/`, empty at top level):
    /// prefixes node locations so diagnostics from later passes name the node by path.
    scope: String,
}

impl<'c, 'g> Importer<'c, 'g> {
    fn root(&self, name: &str) -> String {
        let mut cur = name.to_string();
        while let Some(v) = self.views.get(&cur) {
            cur = v.base.clone();
        }
        cur
    }

    fn root_version(&self, name: &str) -> u64 {
        self.version.get(&self.root(name)).copied().unwrap_or(0)
    }

    /// The current value of `name`, re-making a stale view from its base.
    fn lookup(&mut self, name: &str, node: &Node) -> Result<TValue, CompileError> {
        if let Some(info) = self.views.get(name).cloned() {
            let current = self.root_version(name);
            if self.seen.get(name).copied() != Some(current) {
                let base = self.lookup(&info.base, node)?;
                let mut ops = self.node_operands(info.node, Some((&info.base, base)))?;
                let out = info.node.output_names();
                let idx = out.iter().position(|o| *o == name).unwrap_or(0);
                let v = self.emit_node(info.node, &info.node.target, &mut ops)?;
                let value = v
                    .into_iter()
                    .nth(idx)
                    .ok_or_else(|| node_error(node, "view has no result".into()))?;
                self.values.insert(name.to_string(), value);
                self.seen.insert(name.to_string(), current);
            }
        }
        self.values.get(name).cloned().ok_or_else(|| {
            node_error(
                node,
                format!("reads `{name}`, which no earlier node defines"),
            )
        })
    }

    /// Operands and attributes of `node`, with `replace` standing in for one tensor.
    fn node_operands(
        &mut self,
        node: &Node,
        replace: Option<(&String, TValue)>,
    ) -> Result<NodeOperands, CompileError> {
        let mut operands = Vec::new();
        let mut operand_names = Vec::new();
        let mut attrs: Vec<(String, String)> = Vec::new();
        let get = |this: &mut Self, t: &String| -> Result<TValue, CompileError> {
            match &replace {
                Some((name, v)) if *name == t => Ok(v.clone()),
                _ => this.lookup(t, node),
            }
        };
        for (arg_name, arg) in &node.args {
            match arg {
                Arg::Tensor(t) => {
                    operands.push(get(self, t)?);
                    operand_names.push(arg_name.clone());
                }
                Arg::Tensors(ts) => {
                    for (i, t) in ts.iter().enumerate() {
                        operands.push(get(self, t)?);
                        operand_names.push(aten::list_element_name(arg_name, i));
                    }
                }
                Arg::OptionalTensors(ts) => {
                    for (i, t) in ts.iter().enumerate() {
                        if let Some(t) = t {
                            operands.push(get(self, t)?);
                            operand_names.push(aten::list_element_name(arg_name, i));
                        }
                    }
                    attrs.push((format!("{arg_name}_length"), format!("{} : i64", ts.len())));
                }
                other => {
                    if let Some(text) = attribute_text(other)
                        .map_err(|m| node_error(node, format!("argument `{arg_name}`: {m}")))?
                    {
                        attrs.push((arg_name.clone(), text));
                    }
                }
            }
        }
        attrs.push((aten::OPERAND_NAMES.to_string(), quoted_list(&operand_names)));
        Ok((operands, attrs))
    }

    /// Emits `node` as op `op_name` with the given operands and attributes.
    fn emit_node(
        &mut self,
        node: &Node,
        op_name: &str,
        ops: &mut NodeOperands,
    ) -> Result<Vec<TValue>, CompileError> {
        let mut out_types = Vec::new();
        for name in node.output_names() {
            out_types.push(self.output_type(node, name)?);
        }
        self.emit_op(node, op_name, ops, &out_types)
    }

    /// The type the graph records for `name`, an output of `node`.
    fn output_type(&self, node: &Node, name: &str) -> Result<TensorType, CompileError> {
        let meta =
            self.graph.tensors.get(name).ok_or_else(|| {
                node_error(node, format!("output `{name}` has no tensor metadata"))
            })?;
        Ok(tensor_type(meta))
    }

    /// Emits op `op_name` for `node` with the given operands, attributes and result
    /// types.
    fn emit_op(
        &mut self,
        node: &Node,
        op_name: &str,
        (operands, attrs): &mut NodeOperands,
        out_types: &[TensorType],
    ) -> Result<Vec<TValue>, CompileError> {
        let loc = node_location(
            self.ctx,
            &format!("{}{}", self.scope, node.name),
            node.source_location.as_ref(),
        );
        let refs: Vec<&TValue> = operands.iter().collect();
        let attr_refs: Vec<(&str, String)> =
            attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        self.emitter
            .at(loc)
            .op(op_name, &refs, &attr_refs, out_types)
            .map_err(|err| match err {
                DialectError::BadAttribute(a) => {
                    node_error(node, format!("cannot encode attribute `{a}`"))
                }
                other => node_error(node, other.to_string()),
            })
    }

    /// Records that `name` now holds `value` after an in-place write by `node`,
    /// carrying the write back through views to the root.
    fn write(&mut self, name: &str, value: TValue, node: &Node) -> Result<(), CompileError> {
        let Some(info) = self.views.get(name).cloned() else {
            self.values.insert(name.to_string(), value);
            *self.version.entry(name.to_string()).or_insert(0) += 1;
            return Ok(());
        };
        let op = write_back_op(info.node).ok_or_else(|| {
            node_error(
                node,
                format!(
                    "in-place update of `{name}`, a view made by {} that tpuc cannot write back \
                     (hint: save ep.run_decompositions(), which removes mutations)",
                    info.node.target
                ),
            )
        })?;
        let base = self.lookup(&info.base, node)?;
        let loc = node_location(
            self.ctx,
            &format!("{}{}", self.scope, node.name),
            node.source_location.as_ref(),
        );
        let e = self.emitter.at(loc);
        let view_args: HashMap<&str, &Arg> = info
            .node
            .args
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let attr = |k: &str| {
            view_args
                .get(k)
                .and_then(|a| attribute_text(a).ok().flatten())
        };
        let mut attrs: Vec<(String, String)> = Vec::new();
        let (operands, names): (Vec<&TValue>, Vec<String>) = match op {
            "aten.slice_scatter.default" => {
                for k in ["dim", "start", "end", "step"] {
                    if let Some(t) = attr(k) {
                        attrs.push((k.to_string(), t));
                    }
                }
                (vec![&base, &value], vec!["self".into(), "src".into()])
            }
            "aten.select_scatter.default" => {
                for k in ["dim", "index"] {
                    if let Some(t) = attr(k) {
                        attrs.push((k.to_string(), t));
                    }
                }
                (vec![&base, &value], vec!["self".into(), "src".into()])
            }
            "aten.view.default" => {
                let shape = base
                    .shape()
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                attrs.push(("size".into(), format!("array<i64: {shape}>")));
                (vec![&value], vec!["self".into()])
            }
            "aten.permute.default" => {
                let dims = match view_args.get("dims") {
                    Some(Arg::Ints(d)) => d.clone(),
                    _ => return Err(node_error(node, "permute view without dims".into())),
                };
                let r = dims.len() as i64;
                let mut inverse = vec![0i64; dims.len()];
                for (i, &d) in dims.iter().enumerate() {
                    inverse[(if d < 0 { d + r } else { d }) as usize] = i as i64;
                }
                let list = inverse
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                attrs.push(("dims".into(), format!("array<i64: {list}>")));
                (vec![&value], vec!["self".into()])
            }
            _ => {
                // transpose / t are their own inverses.
                for (k, v) in info.node.args.iter().skip(1) {
                    if let Ok(Some(t)) = attribute_text(v) {
                        attrs.push((k.clone(), t));
                    }
                }
                (vec![&value], vec!["self".into()])
            }
        };
        attrs.push((aten::OPERAND_NAMES.to_string(), quoted_list(&names)));
        let attr_refs: Vec<(&str, String)> =
            attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let new_base = e
            .op(op, &operands, &attr_refs, std::slice::from_ref(&base.ty))
            .map_err(|err| node_error(node, err.to_string()))?
            .into_iter()
            .next()
            .ok_or_else(|| node_error(node, "write-back produced no value".into()))?;
        self.write(&info.base, new_base, node)?;
        let current = self.root_version(name);
        self.values.insert(name.to_string(), value);
        self.seen.insert(name.to_string(), current);
        Ok(())
    }

    /// An in-place write into a graph input (directly or through a view) changes a
    /// tensor the caller keeps. A buffer's (a KV cache) is state, returned for the next
    /// call; a parameter's, constant's or user input's would be silently dropped by
    /// functionalizing, so it is refused.
    /// `why` is appended to the message (empty, or what the node does and a hint).
    fn refuse_input_mutation(
        &self,
        name: &str,
        node: &Node,
        why: &str,
    ) -> Result<(), CompileError> {
        let root = self.root(name);
        let Some(spec) = self.graph.inputs.iter().find(|s| s.name == root) else {
            return Ok(());
        };
        if spec.kind == InputKind::Buffer && self.state.contains(&root) {
            return Ok(());
        }
        let what = match spec.kind {
            InputKind::Parameter => "parameter",
            InputKind::Buffer => "buffer",
            InputKind::Constant => "tensor constant",
            InputKind::UserInput => "user input",
        };
        let target = match spec.target.as_deref() {
            Some(t) if t != root => format!("`{t}` (graph input `{root}`)"),
            _ => format!("`{root}`"),
        };
        let through = if root == name {
            String::new()
        } else {
            format!(" through its view `{name}`")
        };
        Err(node_error(
            node,
            format!(
                "writes in place into {what} {target}{through}; the write would outlive the \
                 call, and tpuc keeps only buffers as state between calls (dropping the write \
                 would give wrong results from the second call on){why}"
            ),
        ))
    }

    fn import_node(&mut self, node: &'g Node) -> Result<(), CompileError> {
        if node.target.starts_with("higher_order.") {
            return self.import_higher_order(node);
        }
        if let Some((mean, var)) = running_stats_written(node) {
            return self.import_batch_norm_update(node, mean, var);
        }
        if instance_norm_updates_stats(node) {
            return Err(node_error(
                node,
                "instance norm in training mode with running statistics updates them in \
                 place, which tpuc does not (hint: call model.eval() before exporting, or \
                 use track_running_stats=False)"
                    .into(),
            ));
        }
        let inplace = inplace_functional_name(&node.target);
        let mut ops = self.node_operands(node, None)?;
        let op_name = inplace.clone().unwrap_or_else(|| node.target.clone());
        let results = self.emit_node(node, &op_name, &mut ops)?;
        let out_names = node.output_names();
        if is_view_op(&node.target) && out_names.len() == 1 {
            if let Some((_, Arg::Tensor(base))) = node.args.first() {
                self.views.insert(
                    out_names[0].to_string(),
                    ViewInfo {
                        base: base.clone(),
                        node,
                    },
                );
                let v = self.root_version(base);
                self.seen.insert(out_names[0].to_string(), v);
            }
        }
        if inplace.is_some() {
            if let (Some((_, Arg::Tensor(m))), Some(first)) = (node.args.first(), results.first()) {
                self.refuse_input_mutation(m, node, "")?;
                self.write(m, first.clone(), node)?;
            }
        }
        for (name, v) in out_names.iter().zip(results) {
            self.values.insert(name.to_string(), v);
        }
        Ok(())
    }

    /// A batch norm that updates its running statistics ([`running_stats_written`]):
    /// emitted as the functional form, `aten._native_batch_norm_legit_functional`,
    /// whose results are the node's (output, saved mean, saved inverse std) and the
    /// statistics' next values, which are written into `mean` and `var` as an in-place
    /// op's result is.
    fn import_batch_norm_update(
        &mut self,
        node: &'g Node,
        mean: &str,
        var: &str,
    ) -> Result<(), CompileError> {
        for name in [mean, var] {
            self.refuse_input_mutation(
                name,
                node,
                " (batch norm in training mode updates its running statistics; for \
                 inference, call model.eval() before exporting)",
            )?;
        }
        // The node's outputs by position (an unused one may have no name).
        let mut outputs: Vec<Option<&str>> = Vec::new();
        for o in &node.outputs {
            match o {
                NodeOutput::Tensor(n) => outputs.push(Some(n)),
                NodeOutput::Tensors(ns) => outputs.extend(ns.iter().map(|n| Some(n.as_str()))),
                NodeOutput::SymInt(_) | NodeOutput::None => outputs.push(None),
            }
        }
        if outputs.len() > 3 {
            return Err(node_error(
                node,
                format!(
                    "{} in training mode with {} outputs: tpuc updates the running statistics \
                     of batch norms returning at most (output, mean, inverse std) \
                     (hint: save ep.run_decompositions(), whose functional batch norm tpuc runs)",
                    node.target,
                    outputs.len()
                ),
            ));
        }
        let Some(Some(y)) = outputs.first().copied() else {
            return Err(node_error(node, "batch norm without an output".into()));
        };
        let running = [self.lookup(mean, node)?.ty, self.lookup(var, node)?.ty];
        let mut types = vec![self.output_type(node, y)?];
        for i in 1..3 {
            types.push(match outputs.get(i).copied().flatten() {
                Some(name) => self.output_type(node, name)?,
                None => running[i - 1].clone(),
            });
        }
        types.extend(running);
        let mut ops = self.node_operands(node, None)?;
        let results = self.emit_op(
            node,
            "aten._native_batch_norm_legit_functional.default",
            &mut ops,
            &types,
        )?;
        for (name, v) in outputs.iter().zip(&results) {
            if let Some(name) = name {
                self.values.insert(name.to_string(), v.clone());
            }
        }
        self.write(mean, results[3].clone(), node)?;
        self.write(var, results[4].clone(), node)?;
        Ok(())
    }
}

impl<'c, 'g> Importer<'c, 'g> {
    /// A higher-order operator (`higher_order.cond`, `while_loop`, `scan`, `map_impl`)
    /// becomes one op named after its target: its operands are the node's tensor
    /// arguments in order (`tpuc.operand_segments` says how many each argument holds),
    /// its other arguments attributes as for any node, and each subgraph argument one
    /// region, in order (see [`Importer::import_subgraph`]). What the operands and
    /// regions mean is the lowering's business (`lower_aten_to_stablehlo::control_flow`).
    fn import_higher_order(&mut self, node: &'g Node) -> Result<(), CompileError> {
        let mut operands = Vec::new();
        let mut segments = Vec::new();
        let mut regions = Vec::new();
        let mut attrs: Vec<(String, String)> = Vec::new();
        for (i, (arg_name, arg)) in node.args.iter().enumerate() {
            match arg {
                Arg::Tensor(t) => {
                    operands.push(self.lookup(t, node)?);
                    segments.push(1);
                }
                Arg::Tensors(ts) => {
                    for t in ts {
                        operands.push(self.lookup(t, node)?);
                    }
                    segments.push(ts.len());
                }
                Arg::Graph { name, graph } => {
                    regions.push(self.import_subgraph(node, name, graph)?)
                }
                other => {
                    if let Some(text) = attribute_text(other)
                        .map_err(|m| node_error(node, format!("argument #{i}: {m}")))?
                    {
                        let key = if arg_name.is_empty() {
                            format!("arg{i}")
                        } else {
                            arg_name.clone()
                        };
                        attrs.push((key, text));
                    }
                }
            }
        }
        let list = segments.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        attrs.push((
            "tpuc.operand_segments".into(),
            format!("array<i64: {}>", list.join(", ")),
        ));
        let mut out_types = Vec::new();
        for name in node.output_names() {
            let meta = self.graph.tensors.get(name).ok_or_else(|| {
                node_error(node, format!("output `{name}` has no tensor metadata"))
            })?;
            out_types.push(tensor_type(meta));
        }
        let loc = node_location(
            self.ctx,
            &format!("{}{}", self.scope, node.name),
            node.source_location.as_ref(),
        );
        let refs: Vec<&TValue> = operands.iter().collect();
        let attr_refs: Vec<(&str, String)> =
            attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let results = self
            .emitter
            .at(loc)
            .op_with_regions(&node.target, &refs, &attr_refs, &out_types, regions)
            .map_err(|err| node_error(node, err.to_string()))?;
        for (name, v) in node.output_names().iter().zip(results) {
            self.values.insert(name.to_string(), v);
        }
        Ok(())
    }

    /// One region holding subgraph `name` of `node`: a block whose arguments are the
    /// subgraph's inputs, its nodes imported as the top-level graph's are (its own
    /// names, its own in-place functionalization), ended by `tpuc.yield` of its
    /// outputs. Errors inside name the node by its path, `cond/true_graph_0/mul`.
    fn import_subgraph(
        &self,
        node: &Node,
        name: &str,
        graph: &'g Graph,
    ) -> Result<Region<'c>, CompileError> {
        let in_subgraph = |e: CompileError| match e {
            CompileError::Node {
                node: inner,
                target,
                message,
            } => CompileError::Node {
                node: format!("{}/{name}/{inner}", node.name),
                target,
                message,
            },
            other => other,
        };
        let mut arg_types = Vec::new();
        for spec in &graph.inputs {
            let ty = tensor_type(&graph.tensors[&spec.name])
                .to_mlir(self.ctx)
                .map_err(|e| node_error(node, format!("subgraph `{name}`: {e}")))?;
            arg_types.push((
                ty,
                Location::name(self.ctx, &spec.name, Location::unknown(self.ctx)),
            ));
        }
        let block = Block::new(&arg_types);
        let mut sub = Importer {
            ctx: self.ctx,
            graph,
            state: Vec::new(),
            emitter: self.emitter.in_block(&block),
            values: HashMap::default(),
            views: HashMap::default(),
            version: HashMap::default(),
            seen: HashMap::default(),
            scope: format!("{}{}/{name}/", self.scope, node.name),
        };
        for (i, spec) in graph.inputs.iter().enumerate() {
            let arg = block
                .argument(i)
                .map_err(|e| CompileError::Internal(e.to_string()))?;
            let v = TValue::from_value(arg.into())
                .map_err(|e| CompileError::Internal(e.to_string()))?;
            sub.values.insert(spec.name.clone(), v);
        }
        for n in &graph.nodes {
            sub.import_node(n).map_err(in_subgraph)?;
        }
        let mut outs = Vec::new();
        for o in &graph.outputs {
            let dummy = Node {
                name: format!("output `{o}`"),
                target: "output".into(),
                args: vec![],
                outputs: vec![],
                source_location: None,
            };
            outs.push(sub.lookup(o, &dummy).map_err(in_subgraph)?);
        }
        let refs: Vec<&TValue> = outs.iter().collect();
        sub.emitter
            .op("tpuc.yield", &refs, &[], &[])
            .map_err(|e| CompileError::Internal(e.to_string()))?;
        let region = Region::new();
        region.append_block(block);
        Ok(region)
    }
}

fn node_error(node: &Node, message: String) -> CompileError {
    CompileError::Node {
        node: node.name.clone(),
        target: node.target.clone(),
        message,
    }
}

fn quoted_list(items: &[String]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|s| quote(s))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Builds the ATen-level module for `graph`.
pub fn import_graph<'c>(ctx: &'c Context, graph: &Graph) -> Result<Module<'c>, CompileError> {
    let module = Module::new(Location::unknown(ctx));
    let args: Vec<(TensorType, Location)> = graph
        .inputs
        .iter()
        .map(|spec| {
            let meta = &graph.tensors[&spec.name];
            (
                tensor_type(meta),
                Location::name(ctx, &spec.name, Location::unknown(ctx)),
            )
        })
        .collect();
    let updates = state_updates(graph);
    let results: Vec<TensorType> = graph
        .outputs
        .iter()
        .chain(updates.iter().map(|u| &u.input))
        .map(|n| tensor_type(&graph.tensors[n]))
        .collect();
    let func = append_function(
        ctx,
        &module,
        "main",
        &args,
        &results,
        Location::unknown(ctx),
    )
    .map_err(|e| CompileError::Internal(e.to_string()))?;
    let mut importer = Importer {
        ctx,
        graph,
        state: updates.iter().map(|u| u.input.clone()).collect(),
        emitter: func.emitter,
        values: HashMap::default(),
        views: HashMap::default(),
        version: HashMap::default(),
        seen: HashMap::default(),
        scope: String::new(),
    };
    for (spec, v) in graph.inputs.iter().zip(func.arguments) {
        importer.values.insert(spec.name.clone(), v);
    }
    for node in &graph.nodes {
        importer.import_node(node)?;
    }
    let mut outs = Vec::new();
    let state_values = updates.iter().map(|u| u.value.as_ref().unwrap_or(&u.input));
    for n in graph.outputs.iter().chain(state_values) {
        // Outputs go through lookup too: a view output sees writes made after it.
        let dummy = Node {
            name: format!("output `{n}`"),
            target: "output".into(),
            args: vec![],
            outputs: vec![],
            source_location: None,
        };
        outs.push(importer.lookup(n, &dummy)?);
    }
    let refs: Vec<&TValue> = outs.iter().collect();
    importer
        .emitter
        .func_return(&refs)
        .map_err(|e| CompileError::Internal(e.to_string()))?;
    Ok(module)
}
