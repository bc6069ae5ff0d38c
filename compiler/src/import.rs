//! Import: a torch.export [`Graph`] becomes an ATen-level MLIR module.
//!
//! One `aten.*` operation per graph node, encoded as described in
//! [`tpuc_dialects::aten`], inside `func.func @main` whose arguments follow the
//! exported program's signature (weights first, then user inputs, in export order).

use std::collections::{HashMap, HashSet};

use melior::ir::{Location, Module};
use melior::Context;
use tpuc_dialects::func::append_function;
use tpuc_dialects::stablehlo::scalar_literal;
use tpuc_dialects::{aten, DialectError, TValue, TensorType};
use tpuc_runtime::DType;

use crate::frontend::{Arg, Graph, TensorMeta};
use crate::CompileError;

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

fn quote(s: &str) -> String {
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
    let results: Vec<TensorType> = graph
        .outputs
        .iter()
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

    let mut values: HashMap<String, TValue> = HashMap::new();
    for (spec, v) in graph.inputs.iter().zip(func.arguments) {
        values.insert(spec.name.clone(), v);
    }

    // Functionalization of in-place ops (`add_`, `index_put_`, as the training IR keeps
    // them): the op becomes its functional form and later reads of the mutated tensor
    // see its result. Mutating a view (or a tensor that views alias) would need the
    // aliasing replayed: those are rejected with a hint instead of miscompiled.
    let mut views: HashSet<String> = HashSet::new();
    let mut viewed: HashSet<String> = HashSet::new();

    for node in &graph.nodes {
        let loc = node_location(ctx, &node.name, node.source_location.as_ref());
        let node_err = |message: String| CompileError::Node {
            node: node.name.clone(),
            target: node.target.clone(),
            message,
        };
        let lookup = |name: &str| {
            values
                .get(name)
                .cloned()
                .ok_or_else(|| node_err(format!("reads `{name}`, which no earlier node defines")))
        };
        let mut operands = Vec::new();
        let mut operand_names = Vec::new();
        let mut attrs: Vec<(String, String)> = Vec::new();
        for (arg_name, arg) in &node.args {
            match arg {
                Arg::Tensor(t) => {
                    operands.push(lookup(t)?);
                    operand_names.push(arg_name.clone());
                }
                Arg::Tensors(ts) => {
                    for (i, t) in ts.iter().enumerate() {
                        operands.push(lookup(t)?);
                        operand_names.push(aten::list_element_name(arg_name, i));
                    }
                }
                Arg::OptionalTensors(ts) => {
                    for (i, t) in ts.iter().enumerate() {
                        if let Some(t) = t {
                            operands.push(lookup(t)?);
                            operand_names.push(aten::list_element_name(arg_name, i));
                        }
                    }
                    attrs.push((format!("{arg_name}_length"), format!("{} : i64", ts.len())));
                }
                other => {
                    if let Some(text) = attribute_text(other)
                        .map_err(|m| node_err(format!("argument `{arg_name}`: {m}")))?
                    {
                        attrs.push((arg_name.clone(), text));
                    }
                }
            }
        }
        attrs.push((
            aten::OPERAND_NAMES.to_string(),
            format!(
                "[{}]",
                operand_names
                    .iter()
                    .map(|s| quote(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
        let out_names = node.output_names();
        let mut out_types = Vec::new();
        for name in &out_names {
            let meta = graph
                .tensors
                .get(*name)
                .ok_or_else(|| node_err(format!("output `{name}` has no tensor metadata")))?;
            out_types.push(tensor_type(meta));
        }
        let refs: Vec<&TValue> = operands.iter().collect();
        let attr_refs: Vec<(&str, String)> =
            attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let e = func.emitter.at(loc);
        let inplace = inplace_functional_name(&node.target);
        let mutated = match (&inplace, node.args.first()) {
            (Some(_), Some((_, Arg::Tensor(t)))) => Some(t.clone()),
            _ => None,
        };
        if let Some(m) = &mutated {
            if views.contains(m) || viewed.contains(m) {
                return Err(node_err(format!(
                    "in-place update of `{m}`, which is a view or has views; tpuc functionalizes \
                     in-place ops on plain tensors only (hint: save ep.run_decompositions(), \
                     which removes mutations)"
                )));
            }
        }
        if is_view_op(&node.target) {
            views.extend(out_names.iter().map(|n| n.to_string()));
            viewed.extend(node.input_names().iter().map(|n| n.to_string()));
        }
        let op_name = inplace.as_deref().unwrap_or(&node.target);
        let results = e
            .op(op_name, &refs, &attr_refs, &out_types)
            .map_err(|err| match err {
                DialectError::BadAttribute(a) => node_err(format!("cannot encode attribute `{a}`")),
                other => node_err(other.to_string()),
            })?;
        if let (Some(m), Some(first)) = (&mutated, results.first()) {
            values.insert(m.clone(), first.clone());
        }
        for (name, v) in out_names.iter().zip(results) {
            values.insert(name.to_string(), v);
        }
    }
    let outs = graph
        .outputs
        .iter()
        .map(|n| {
            values.get(n).cloned().ok_or_else(|| {
                CompileError::Internal(format!("output `{n}` is not defined by any node"))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&TValue> = outs.iter().collect();
    func.emitter
        .func_return(&refs)
        .map_err(|e| CompileError::Internal(e.to_string()))?;
    Ok(module)
}
