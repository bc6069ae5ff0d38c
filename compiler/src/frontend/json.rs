//! Parsing of the ExportedProgram JSON (`models/model.json` in a .pt2 archive).
//!
//! The schema (torch/_export/serialization/schema.py) encodes unions as objects with a
//! single key (`{"as_tensor": {"name": "x"}}`). We read it through a JSON tree
//! ([`super::tree::Json`], read like `serde_json::Value` but compact) and convert field
//! by field, so that an unexpected shape is reported with the node
//! it belongs to instead of a generic deserialization error.

use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

use tpuc_artifact::symbolic::{Bindings, Dim, Expr, Symbol};
use tpuc_artifact::DType;

use super::data_dependent::UnbackedDims;
use super::error::{FrontendError, Result};
use super::graph::{
    Arg, Graph, InputKind, InputSpec, Joint, Node, NodeOutput, SymInt, TensorMeta, DATA_DEPENDENT,
};
use super::tree::{self, Json as Value};

/// The schema major version tpuc reads (torch 2.8 and later write 8.x).
pub const SUPPORTED_SCHEMA_MAJOR: i64 = 8;

/// Maps PyTorch's serialized ScalarType codes to tpuc dtypes.
pub fn scalar_type(code: i64) -> std::result::Result<DType, String> {
    Ok(match code {
        1 => DType::U8,
        2 => DType::I8,
        3 => DType::I16,
        4 => DType::I32,
        5 => DType::I64,
        6 => DType::F16,
        7 => DType::F32,
        8 => DType::F64,
        12 => DType::Bool,
        13 => DType::Bf16,
        10 => DType::C64,
        11 => DType::C128,
        9 => return Err("complex32".into()),
        28 => return Err("uint16".into()),
        29 => return Err("float8_e4m3fn".into()),
        30 => return Err("float8_e5m2".into()),
        31 => return Err("float8_e4m3fnuz".into()),
        32 => return Err("float8_e5m2fnuz".into()),
        34 => return Err("uint32".into()),
        35 => return Err("uint64".into()),
        other => return Err(format!("scalar type code {other}")),
    })
}

fn malformed(what: impl Into<String>) -> FrontendError {
    FrontendError::Malformed(what.into())
}

fn get<'a, 'j>(v: &'a Value<'j>, key: &str, ctx: &str) -> Result<&'a Value<'j>> {
    v.get(key)
        .ok_or_else(|| malformed(format!("{ctx}: missing field `{key}`")))
}

fn as_str<'a>(v: &'a Value, ctx: &str) -> Result<&'a str> {
    v.as_str()
        .ok_or_else(|| malformed(format!("{ctx}: expected a string")))
}

fn as_array<'a, 'j>(v: &'a Value<'j>, ctx: &str) -> Result<&'a Vec<Value<'j>>> {
    v.as_array()
        .ok_or_else(|| malformed(format!("{ctx}: expected a list")))
}

/// The single key and value of a union object.
fn union<'a, 'j>(v: &'a Value<'j>, ctx: &str) -> Result<(&'a str, &'a Value<'j>)> {
    let obj = v
        .as_object()
        .ok_or_else(|| malformed(format!("{ctx}: expected an object")))?;
    // Unions serialize exactly one field; tolerate extra nulls.
    obj.iter()
        .find(|(_, val)| !val.is_null())
        .or_else(|| obj.iter().next())
        .map(|(k, val)| (k.as_ref(), val))
        .ok_or_else(|| malformed(format!("{ctx}: empty union")))
}

fn as_i64(v: &Value, ctx: &str) -> Result<i64> {
    v.as_i64()
        .ok_or_else(|| malformed(format!("{ctx}: expected an integer")))
}

/// Floats are numbers, or the strings "Infinity", "-Infinity" and "NaN".
fn as_f64(v: &Value, ctx: &str) -> Result<f64> {
    match v {
        Value::Number(_) => v
            .as_f64()
            .ok_or_else(|| malformed(format!("{ctx}: bad float"))),
        Value::String(s) => match s.as_ref() {
            "Infinity" | "inf" => Ok(f64::INFINITY),
            "-Infinity" | "-inf" => Ok(f64::NEG_INFINITY),
            "NaN" | "nan" => Ok(f64::NAN),
            _ => Err(malformed(format!("{ctx}: bad float `{s}`"))),
        },
        _ => Err(malformed(format!("{ctx}: expected a float"))),
    }
}

/// How a parse reads symbolic sizes: refused (a static program), or evaluated with
/// concrete values of the symbols (a specialization of a dynamic program, see
/// [`parse_specialized`]).
#[derive(Clone, Copy)]
pub struct Sizes<'a> {
    bindings: Option<&'a Bindings>,
    /// The graph's named symbolic values (`sym_int_values`, `sym_bool_values`).
    values: &'a BTreeMap<String, Expr>,
    /// Unbacked symbols whose range is one value (`u0` in `[14, 14]`): sizes.
    fixed: &'a Bindings,
}

static NO_VALUES: BTreeMap<String, Expr> = BTreeMap::new();
static NO_BINDINGS: Bindings = BTreeMap::new();

impl Sizes<'_> {
    /// Symbolic sizes are refused.
    pub fn refused() -> Sizes<'static> {
        Sizes {
            bindings: None,
            values: &NO_VALUES,
            fixed: &NO_BINDINGS,
        }
    }

    /// `expr` (written `text`, for `what`) under the bindings.
    fn eval(&self, expr: &Expr, text: &str, what: &str) -> Result<i64> {
        let bindings = self.bindings.ok_or_else(|| FrontendError::DynamicShape {
            tensor: what.to_string(),
            size: expr.to_string(),
        })?;
        expr.eval(bindings)
            .map_err(|e| FrontendError::SizeExpression {
                what: what.to_string(),
                expr: text.to_string(),
                message: e.0,
            })
    }

    /// The named symbolic value `name` under the bindings.
    fn named(&self, name: &str, what: &str) -> Result<i64> {
        // A value the exporter knew (`x.size(0)` of a static tensor), in any parse.
        match self.values.get(name) {
            Some(Expr::Int(v)) => return Ok(*v),
            Some(Expr::Bool(b)) => return Ok(*b as i64),
            _ => {}
        }
        if self.bindings.is_none() {
            return Err(FrontendError::DynamicShape {
                tensor: what.to_string(),
                size: name.to_string(),
            });
        }
        let expr = self.values.get(name).ok_or_else(|| {
            malformed(format!(
                "{what}: the symbolic value `{name}` is not in the graph's sym_int_values or sym_bool_values"
            ))
        })?;
        self.eval(expr, name, what)
    }
}

/// The expressions of a graph's named symbolic values, with `outer`'s (a subgraph
/// sees its parent's). `strict` (a specialization, which evaluates them) refuses an
/// entry tpuc cannot read; otherwise (a static program, which reads them only to tell
/// data-dependent sizes) such an entry is left out.
fn symbolic_values(
    graph: &Value,
    outer: &BTreeMap<String, Expr>,
    strict: bool,
) -> Result<BTreeMap<String, Expr>> {
    let mut values = outer.clone();
    for key in ["sym_int_values", "sym_bool_values"] {
        let Some(table) = graph.get(key).and_then(Value::as_object) else {
            continue;
        };
        for (name, v) in table {
            let ctx = format!("{key} `{name}`");
            let read = || -> Result<Expr> {
                let (kind, val) = union(v, &ctx)?;
                Ok(match kind {
                    "as_int" => Expr::Int(as_i64(val, &ctx)?),
                    "as_bool" => Expr::Bool(
                        val.as_bool()
                            .ok_or_else(|| malformed(format!("{ctx}: expected a bool")))?,
                    ),
                    "as_expr" => {
                        let text = as_str(get(val, "expr_str", &ctx)?, &ctx)?;
                        match Expr::parse(text) {
                            Ok(e) => e,
                            // A value over data-dependent sizes (`Eq(u0 + u1, 32)` of a
                            // runtime assertion) is only ever dropped or refused: kept as
                            // its first unbacked symbol, which marks it data-dependent.
                            Err(_) if first_unbacked(text).is_some() => {
                                Expr::Sym(first_unbacked(text).unwrap_or_default())
                            }
                            Err(e) => {
                                return Err(FrontendError::SizeExpression {
                                    what: ctx.clone(),
                                    expr: text.to_string(),
                                    message: e.0,
                                })
                            }
                        }
                    }
                    other => return Err(malformed(format!("{ctx}: unexpected kind `{other}`"))),
                })
            };
            match read() {
                Ok(expr) => {
                    values.insert(name.to_string(), expr);
                }
                Err(e) if strict => return Err(e),
                Err(_) => {}
            }
        }
    }
    Ok(values)
}

/// Whether a size expression reads an unbacked symbol (`u0`: a size torch.export could
/// not tie to the inputs' sizes because it depends on tensor values).
fn is_unbacked(expr: &Expr) -> bool {
    expr.symbols().iter().any(|s| {
        s.strip_prefix('u')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The first unbacked symbol (`u12`) an expression's text names.
fn first_unbacked(text: &str) -> Option<String> {
    text.match_indices("Symbol('u").find_map(|(i, m)| {
        let rest = &text[i + m.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        (!digits.is_empty() && rest[digits.len()..].starts_with('\'')).then(|| format!("u{digits}"))
    })
}

/// A SymInt: `{"as_int": 3}`, or (in a specialization) `{"as_expr": ...}` or a named
/// value `{"as_name": "sym_size_int_3"}` evaluated under the bindings. A value that
/// depends on tensor values (an unbacked symbol) is [`SymInt::Unbacked`], in any parse.
/// The unbacked symbols whose range in `range_constraints` is a single value.
fn fixed_symbols(root: &Value) -> Bindings {
    let mut fixed = Bindings::new();
    if let Some(c) = root.get("range_constraints").and_then(Value::as_object) {
        for (name, r) in c {
            let bound = |k: &str| r.get(k).and_then(Value::as_i64);
            if let (Some(lo), Some(hi)) = (bound("min_val"), bound("max_val")) {
                if lo == hi && is_unbacked(&Expr::Sym(name.to_string())) {
                    fixed.insert(name.to_string(), lo);
                }
            }
        }
    }
    fixed
}

/// An expression over unbacked symbols: its value where every symbol it reads has a
/// single value in its range, else [`SymInt::Unbacked`] (written `text`).
fn unbacked_or_fixed(expr: &Expr, text: &str, sizes: Sizes<'_>) -> SymInt {
    let all_fixed = expr
        .symbols()
        .iter()
        .all(|s| sizes.fixed.contains_key(s) || sizes.bindings.is_some_and(|b| b.contains_key(s)));
    let mut b = sizes.fixed.clone();
    if let Some(bound) = sizes.bindings {
        b.extend(bound.iter().map(|(k, v)| (k.clone(), *v)));
    }
    match expr.eval(&b) {
        Ok(v) if all_fixed => SymInt::Int(v),
        _ => SymInt::Unbacked(text.to_string()),
    }
}

fn sym_int(v: &Value, ctx: &str, tensor: &str, sizes: Sizes<'_>) -> Result<SymInt> {
    let (kind, val) = union(v, ctx)?;
    match kind {
        "as_int" => Ok(SymInt::Int(as_i64(val, ctx)?)),
        "as_expr" => {
            let text = as_str(get(val, "expr_str", ctx)?, ctx)?;
            let expr = Expr::parse(text).map_err(|e| FrontendError::SizeExpression {
                what: tensor.to_string(),
                expr: text.to_string(),
                message: e.0,
            })?;
            if is_unbacked(&expr) {
                return Ok(unbacked_or_fixed(&expr, text, sizes));
            }
            sizes.eval(&expr, text, tensor).map(SymInt::Int)
        }
        "as_name" => {
            let name = as_str(val, ctx)?;
            if let Some(expr) = sizes.values.get(name).filter(|e| is_unbacked(e)) {
                return Ok(unbacked_or_fixed(expr, name, sizes));
            }
            sizes.named(name, tensor).map(SymInt::Int)
        }
        _ => Err(FrontendError::DynamicShape {
            tensor: tensor.to_string(),
            size: match val {
                Value::String(s) => s.to_string(),
                other => other.to_string(),
            },
        }),
    }
}

/// A SymInt as a concrete size; [`DATA_DEPENDENT`] where it depends on tensor values.
fn concrete_int(v: &Value, ctx: &str, tensor: &str, sizes: Sizes<'_>) -> Result<i64> {
    Ok(match sym_int(v, ctx, tensor, sizes)? {
        SymInt::Int(i) => i,
        SymInt::Unbacked(_) => DATA_DEPENDENT,
    })
}

fn tensor_name(v: &Value, ctx: &str) -> Result<String> {
    Ok(as_str(get(v, "name", ctx)?, ctx)?.to_string())
}

/// Reads a tensor_meta object.
pub fn tensor_meta(name: &str, v: &Value, sizes: Sizes<'_>) -> Result<TensorMeta> {
    Ok(tensor_meta_unbacked(name, v, sizes)?.0)
}

/// Reads a tensor_meta object, with its data-dependent dimensions (each
/// [`DATA_DEPENDENT`] in the shape) and their sizes as written.
fn tensor_meta_unbacked(
    name: &str,
    v: &Value,
    sizes: Sizes<'_>,
) -> Result<(TensorMeta, Vec<(usize, String)>)> {
    let ctx = format!("tensor `{name}`");
    let code = as_i64(get(v, "dtype", &ctx)?, &ctx)?;
    let dtype = scalar_type(code).map_err(|d| FrontendError::UnsupportedDtype {
        tensor: name.to_string(),
        dtype: d,
    })?;
    let mut unbacked = Vec::new();
    let mut shape = Vec::new();
    for (i, s) in as_array(get(v, "sizes", &ctx)?, &ctx)?.iter().enumerate() {
        shape.push(match sym_int(s, &ctx, &ctx, sizes)? {
            SymInt::Int(v) => v,
            SymInt::Unbacked(expr) => {
                unbacked.push((i, expr));
                DATA_DEPENDENT
            }
        });
    }
    Ok((TensorMeta { dtype, shape }, unbacked))
}

/// Strides and storage offset of a tensor_meta (for weights).
pub fn strides_and_offset(name: &str, v: &Value) -> Result<(Vec<i64>, i64)> {
    let ctx = format!("weight `{name}`");
    let strides = as_array(get(v, "strides", &ctx)?, &ctx)?
        .iter()
        .map(|s| concrete_int(s, &ctx, name, Sizes::refused()))
        .collect::<Result<Vec<_>>>()?;
    let offset = match v.get("storage_offset") {
        Some(o) => concrete_int(o, &ctx, name, Sizes::refused())?,
        None => 0,
    };
    Ok((strides, offset))
}

fn parse_arg(v: &Value, ctx: &str, sizes: Sizes<'_>) -> Result<Arg> {
    let (kind, val) = union(v, ctx)?;
    let ints = |val: &Value| -> Result<Vec<i64>> {
        as_array(val, ctx)?.iter().map(|x| as_i64(x, ctx)).collect()
    };
    Ok(match kind {
        "as_none" => Arg::None,
        "as_tensor" => Arg::Tensor(tensor_name(val, ctx)?),
        "as_tensors" => Arg::Tensors(
            as_array(val, ctx)?
                .iter()
                .map(|t| tensor_name(t, ctx))
                .collect::<Result<_>>()?,
        ),
        "as_optional_tensor" => {
            let (k, inner) = union(val, ctx)?;
            match k {
                "as_tensor" => Arg::Tensor(tensor_name(inner, ctx)?),
                _ => Arg::None,
            }
        }
        "as_optional_tensors" => Arg::OptionalTensors(
            as_array(val, ctx)?
                .iter()
                .map(|t| {
                    let (k, inner) = union(t, ctx)?;
                    Ok(match k {
                        "as_tensor" => Some(tensor_name(inner, ctx)?),
                        _ => None,
                    })
                })
                .collect::<Result<_>>()?,
        ),
        "as_int" => Arg::Int(as_i64(val, ctx)?),
        "as_ints" => Arg::Ints(ints(val)?),
        "as_sym_int" => match sym_int(val, ctx, ctx, sizes)? {
            SymInt::Int(i) => Arg::Int(i),
            unbacked => Arg::SymInt(unbacked),
        },
        "as_sym_ints" => {
            let v = as_array(val, ctx)?
                .iter()
                .map(|x| sym_int(x, ctx, ctx, sizes))
                .collect::<Result<Vec<_>>>()?;
            if v.iter().any(|x| matches!(x, SymInt::Unbacked(_))) {
                Arg::SymInts(v)
            } else {
                Arg::Ints(
                    v.into_iter()
                        .map(|x| match x {
                            SymInt::Int(i) => i,
                            SymInt::Unbacked(_) => unreachable!("checked above"),
                        })
                        .collect(),
                )
            }
        }
        "as_float" => Arg::Float(as_f64(val, ctx)?),
        "as_floats" => Arg::Floats(
            as_array(val, ctx)?
                .iter()
                .map(|x| as_f64(x, ctx))
                .collect::<Result<_>>()?,
        ),
        "as_sym_float" => {
            let (k, inner) = union(val, ctx)?;
            match k {
                "as_float" => Arg::Float(as_f64(inner, ctx)?),
                _ => Arg::Unsupported("symbolic float".into()),
            }
        }
        "as_bool" => Arg::Bool(
            val.as_bool()
                .ok_or_else(|| malformed(format!("{ctx}: expected a bool")))?,
        ),
        "as_bools" => Arg::Bools(
            as_array(val, ctx)?
                .iter()
                .map(|x| {
                    x.as_bool()
                        .ok_or_else(|| malformed(format!("{ctx}: expected a bool")))
                })
                .collect::<Result<_>>()?,
        ),
        "as_sym_bool" => {
            let (k, inner) = union(val, ctx)?;
            match (k, inner.as_bool()) {
                ("as_bool", Some(b)) => Arg::Bool(b),
                ("as_name", _)
                    if sizes.bindings.is_some()
                        || matches!(
                            sizes.values.get(as_str(inner, ctx)?),
                            Some(Expr::Bool(_) | Expr::Int(_))
                        ) =>
                {
                    Arg::Bool(sizes.named(as_str(inner, ctx)?, ctx)? != 0)
                }
                _ => Arg::Unsupported("symbolic bool".into()),
            }
        }
        "as_string" => Arg::String(as_str(val, ctx)?.to_string()),
        "as_strings" => Arg::Strings(
            as_array(val, ctx)?
                .iter()
                .map(|x| as_str(x, ctx).map(str::to_string))
                .collect::<Result<_>>()?,
        ),
        "as_scalar_type" => Arg::ScalarType(scalar_type(as_i64(val, ctx)?)),
        "as_memory_format" => Arg::Ignored("memory_format"),
        "as_layout" => Arg::Ignored("layout"),
        "as_device" => Arg::Ignored("device"),
        "as_graph" => parse_subgraph(val, ctx, sizes)?,
        other if SCHEMA_ARGUMENT_KINDS.contains(&other) => Arg::Unsupported(other.to_string()),
        other => {
            return Err(malformed(format!(
                "{ctx}: argument kind `{other}` is not one the torch.export schema defines \
                 (a damaged or hand-edited model.json?)"
            )))
        }
    })
}

/// A `GraphArgument` (`{name, graph}`): a higher-order operator's subgraph, read as a
/// [`Graph`] of its own (its tensors have their own names; its inputs are user-input
/// placeholders), checked as the top-level graph is.
fn parse_subgraph(v: &Value, ctx: &str, sizes: Sizes<'_>) -> Result<Arg> {
    let name = as_str(get(v, "name", ctx)?, ctx)?.to_string();
    let g = get(v, "graph", ctx)?;
    let ctx = format!("{ctx}, subgraph `{name}`");
    let values = symbolic_values(g, sizes.values, sizes.bindings.is_some())?;
    let sizes = Sizes {
        bindings: sizes.bindings,
        values: &values,
        fixed: sizes.fixed,
    };
    let mut tensors = BTreeMap::new();
    let mut unbacked = UnbackedDims::new();
    if let Some(tv) = g.get("tensor_values").and_then(Value::as_object) {
        for (n, meta) in tv {
            let (meta, dims) = tensor_meta_unbacked(n, meta, sizes)?;
            if !dims.is_empty() {
                unbacked.insert(n.to_string(), dims);
            }
            tensors.insert(n.to_string(), meta);
        }
    }
    let nodes = as_array(get(g, "nodes", &ctx)?, &ctx)?
        .iter()
        .enumerate()
        .filter_map(|(i, n)| parse_node(n, i, sizes).transpose())
        .collect::<Result<Vec<_>>>()?;
    let tensor_list = |key: &str| -> Result<Vec<String>> {
        as_array(get(g, key, &ctx)?, &ctx)?
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let (k, inner) = union(a, &ctx)?;
                if k != "as_tensor" {
                    return Err(malformed(format!(
                        "{ctx}: {key} #{i} is of kind `{k}`, not a tensor; tpuc supports                          subgraphs of tensors only"
                    )));
                }
                tensor_name(inner, &ctx)
            })
            .collect()
    };
    let inputs: Vec<InputSpec> = tensor_list("inputs")?
        .into_iter()
        .map(|name| InputSpec {
            kind: InputKind::UserInput,
            name,
            target: None,
            persistent: true,
        })
        .collect();
    let outputs = tensor_list("outputs")?;
    check_definitions(&inputs, &nodes, &outputs).map_err(|e| match e {
        FrontendError::Malformed(m) => malformed(format!("{ctx}: {m}")),
        other => other,
    })?;
    for t in inputs.iter().map(|s| &s.name).chain(outputs.iter()) {
        if !tensors.contains_key(t) {
            return Err(malformed(format!(
                "{ctx}: tensor `{t}` has no entry in the subgraph's tensor_values"
            )));
        }
    }
    let mut graph = Graph {
        inputs,
        outputs,
        buffer_mutations: Vec::new(),
        joint: None,
        nodes,
        tensors,
        schema_version: (0, 0),
    };
    super::data_dependent::resolve(&mut graph, &unbacked)?;
    Ok(Arg::Graph {
        name,
        graph: Box::new(graph),
    })
}

/// Subgraphs carry their program's schema version.
fn set_subgraph_versions(nodes: &mut [Node], version: (i64, i64)) {
    for node in nodes {
        for (_, arg) in &mut node.args {
            if let Arg::Graph { graph, .. } = arg {
                graph.schema_version = version;
                set_subgraph_versions(&mut graph.nodes, version);
            }
        }
    }
}

/// Every field of the schema's `Argument` union (torch/_export/serde/schema.py, 8.x).
/// Kinds tpuc reads are handled in [`parse_arg`]; the rest are valid but unsupported.
const SCHEMA_ARGUMENT_KINDS: &[&str] = &[
    "as_none",
    "as_tensor",
    "as_tensors",
    "as_int",
    "as_ints",
    "as_float",
    "as_floats",
    "as_string",
    "as_strings",
    "as_sym_int",
    "as_sym_ints",
    "as_scalar_type",
    "as_memory_format",
    "as_layout",
    "as_device",
    "as_bool",
    "as_bools",
    "as_sym_bool",
    "as_sym_bools",
    "as_graph",
    "as_optional_tensors",
    "as_custom_obj",
    "as_operator",
    "as_sym_float",
    "as_sym_floats",
    "as_optional_tensor",
    "as_complex",
    "as_int_lists",
    "as_string_to_argument",
];

/// Picks the innermost frame of a stack trace that is not inside torch or transformers'
/// library code, falling back to the innermost frame.
fn source_location(stack_trace: &str) -> Option<(String, u32)> {
    let mut frames = Vec::new();
    for line in stack_trace.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("File \"") {
            if let Some((file, tail)) = rest.split_once("\", line ") {
                let num: String = tail.chars().take_while(|c| c.is_ascii_digit()).collect();
                if let Ok(n) = num.parse() {
                    frames.push((file.to_string(), n));
                }
            }
        }
    }
    frames
        .iter()
        .rev()
        .find(|(f, _)| !f.contains("/site-packages/torch/") && !f.contains("/torch/nn/"))
        .or_else(|| frames.last())
        .cloned()
}

/// Nodes that compute sizes (`x.size(0)`, `s0 * s1`): a specialization drops them, as
/// every size they compute is a named value it evaluates where it is read.
pub(super) fn computes_sizes(target: &str) -> bool {
    matches!(
        target,
        "aten.sym_size.int"
            | "aten.sym_size"
            | "aten.sym_numel.default"
            | "aten.sym_stride.int"
            | "aten.sym_storage_offset.default"
            | "sym_size"
            | "sym_numel"
    ) || target.starts_with("_operator.")
        || target.starts_with("math.")
        || target.starts_with("torch.sym_")
}

/// Reads one node. In a specialization, nodes that compute sizes are dropped (`None`)
/// and the runtime assertions torch.export leaves (`_assert_scalar`,
/// `sym_constrain_range*`) are checked for the bindings and dropped.
fn parse_node(v: &Value, index: usize, sizes: Sizes<'_>) -> Result<Option<Node>> {
    let ctx = format!("node #{index}");
    let target_full = as_str(get(v, "target", &ctx)?, &ctx)?;
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("node{index}"));
    let ctx = format!("node `{name}` ({target_full})");
    let target = target_full
        .strip_prefix("torch.ops.")
        .unwrap_or(target_full)
        .to_string();
    let mut args = Vec::new();
    for (i, input) in as_array(get(v, "inputs", &ctx)?, &ctx)?.iter().enumerate() {
        let arg_name = input
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("arg{i}"));
        let actx = format!("{ctx}, argument `{arg_name}`");
        // ArgumentKind: UNKNOWN 0, POSITIONAL 1, KEYWORD 2 (absent in older schemas).
        if let Some(kind) = input.get("kind") {
            if !matches!(kind.as_i64(), Some(0..=2)) {
                return Err(malformed(format!(
                    "{actx}: argument kind {kind} is not one the torch.export schema defines \
                     (0 unknown, 1 positional, 2 keyword)"
                )));
            }
        }
        let arg = parse_arg(get(input, "arg", &ctx)?, &actx, sizes)?;
        args.push((arg_name, arg));
    }
    let mut outputs = Vec::new();
    let mut symbolic_outputs = 0;
    let node_outputs = as_array(get(v, "outputs", &ctx)?, &ctx)?;
    for out in node_outputs {
        let (kind, val) = union(out, &ctx)?;
        if kind.starts_with("as_sym_") {
            symbolic_outputs += 1;
        }
        outputs.push(match kind {
            "as_tensor" => NodeOutput::Tensor(tensor_name(val, &ctx)?),
            "as_tensors" => NodeOutput::Tensors(
                as_array(val, &ctx)?
                    .iter()
                    .map(|t| tensor_name(t, &ctx))
                    .collect::<Result<_>>()?,
            ),
            "as_sym_int" => match union(val, &ctx)? {
                ("as_name", n) => NodeOutput::SymInt(as_str(n, &ctx)?.to_string()),
                _ => NodeOutput::None,
            },
            _ => NodeOutput::None,
        });
    }
    let source_location = v
        .get("metadata")
        .and_then(|m| m.get("stack_trace"))
        .and_then(Value::as_str)
        .and_then(source_location);
    if let Some(bindings) = sizes.bindings {
        if !node_outputs.is_empty()
            && symbolic_outputs == node_outputs.len()
            && computes_sizes(&target)
        {
            return Ok(None);
        }
        if check_assertion(&name, &target, &args, bindings)? {
            return Ok(None);
        }
    }
    Ok(Some(Node {
        name,
        target,
        args,
        outputs,
        source_location,
    }))
}

/// Checks a runtime assertion torch.export left in the graph for the bindings of a
/// specialization; whether `target` is one (and the node is then dropped).
fn check_assertion(
    name: &str,
    target: &str,
    args: &[(String, Arg)],
    bindings: &Bindings,
) -> Result<bool> {
    let fail = |condition: String| FrontendError::AssertionFailed {
        node: name.to_string(),
        condition,
        sizes: tpuc_artifact::symbolic::describe_bindings(bindings),
    };
    let int = |i: usize| match args.get(i).map(|(_, a)| a) {
        Some(Arg::Int(v)) => Some(*v),
        _ => None,
    };
    match target {
        "aten._assert_scalar.default" => match args.first().map(|(_, a)| a) {
            Some(Arg::Bool(true)) => Ok(true),
            Some(Arg::Bool(false)) => Err(fail(match args.get(1).map(|(_, a)| a) {
                Some(Arg::String(m)) => m.clone(),
                _ => "the assertion".to_string(),
            })),
            _ => Ok(false),
        },
        "aten.sym_constrain_range.default" | "aten.sym_constrain_range_for_size.default" => {
            let Some(v) = int(0) else { return Ok(false) };
            let (min, max) = (int(1), int(2));
            if min.is_some_and(|m| v < m) || max.is_some_and(|m| v > m) {
                return Err(fail(format!(
                    "size {v} within {}..={}",
                    min.map_or("-inf".into(), |m| m.to_string()),
                    max.map_or("inf".into(), |m| m.to_string())
                )));
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn parse_input_spec(v: &Value, index: usize) -> Result<InputSpec> {
    let ctx = format!("input spec #{index}");
    let (kind, val) = union(v, &ctx)?;
    let arg = get(val, "arg", &ctx)?;
    let (kind, target_field) = match kind {
        "parameter" => (InputKind::Parameter, Some("parameter_name")),
        "buffer" => (InputKind::Buffer, Some("buffer_name")),
        "tensor_constant" => (InputKind::Constant, Some("tensor_constant_name")),
        "user_input" => (InputKind::UserInput, None),
        other => {
            return Err(malformed(format!(
                "{ctx}: input kind `{other}` is not supported (tpuc supports parameters, buffers, tensor constants and tensor user inputs)"
            )))
        }
    };
    let name = if kind == InputKind::UserInput {
        let (k, inner) = union(arg, &ctx)?;
        if k != "as_tensor" {
            return Err(malformed(format!(
                "{ctx}: user input of kind `{k}` is not a tensor; tpuc supports tensor inputs only"
            )));
        }
        tensor_name(inner, &ctx)?
    } else {
        tensor_name(arg, &ctx)?
    };
    let target = match target_field {
        Some(f) => Some(as_str(get(val, f, &ctx)?, &ctx)?.to_string()),
        None => None,
    };
    // `persistent: false` buffers are left out of the module's state_dict().
    let persistent = kind != InputKind::Buffer
        || val
            .get("persistent")
            .and_then(Value::as_bool)
            .unwrap_or(true);
    Ok(InputSpec {
        kind,
        name,
        target,
        persistent,
    })
}

/// Parses `model.json` of a static program (a symbolic size is refused). `file` names
/// the source in error messages.
pub fn parse_exported_program(bytes: &[u8], file: &str) -> Result<Graph> {
    parse_program(bytes, file, None)
}

/// Parses `model.json` of a dynamic program specialized for `bindings` (a value for
/// every symbol): every size, symbolic argument and size computation is evaluated, the
/// runtime assertions are checked, and the result is the static program torch.export
/// would have written for those sizes.
pub fn parse_specialized(bytes: &[u8], file: &str, bindings: &Bindings) -> Result<Graph> {
    parse_program(bytes, file, Some(bindings))
}

/// An InvalidJson error of `file`.
fn invalid_json(file: &str) -> impl Fn(serde_json::Error) -> FrontendError + Copy + '_ {
    move |e| FrontendError::InvalidJson {
        file: file.to_string(),
        message: e.to_string(),
    }
}

/// The JSON tree of `model.json`. The node list and the tensor table are most of the
/// file: each of their items is built when it is read, and dropped after (see
/// `tree::parse_with_lazy_items`).
fn read_root<'a>(bytes: &'a [u8], file: &str) -> Result<Value<'a>> {
    tree::parse_with_lazy_items(
        bytes,
        &[
            &["graph_module", "graph", "nodes"],
            &["graph_module", "graph", "tensor_values"],
        ],
    )
    .map_err(invalid_json(file))
}

fn parse_program(bytes: &[u8], file: &str, bindings: Option<&Bindings>) -> Result<Graph> {
    let invalid = invalid_json(file);
    let root = read_root(bytes, file)?;
    let version = root.get("schema_version").ok_or_else(|| {
        malformed(format!(
            "`{file}` has no schema_version: not an ExportedProgram"
        ))
    })?;
    let major = version.get("major").and_then(Value::as_i64).unwrap_or(-1);
    let minor = version.get("minor").and_then(Value::as_i64).unwrap_or(0);
    if major != SUPPORTED_SCHEMA_MAJOR {
        return Err(FrontendError::UnsupportedSchema {
            file: file.to_string(),
            major,
            minor,
            supported: SUPPORTED_SCHEMA_MAJOR,
        });
    }
    let gm = get(&root, "graph_module", file)?;
    let graph = get(gm, "graph", file)?;
    let signature = get(gm, "signature", file)?;
    // Read in every parse: a static program's values tell its data-dependent sizes
    // (one whose table tpuc cannot read is read as before, without them).
    let values = match bindings {
        Some(_) => symbolic_values(graph, &NO_VALUES, true)?,
        None => symbolic_values(graph, &NO_VALUES, false)?,
    };
    let fixed = fixed_symbols(&root);
    let sizes = Sizes {
        bindings,
        values: &values,
        fixed: &fixed,
    };

    // The tensor table and the node list are built on two threads (each is about half
    // of the reading of a large graph); a tensor's error is reported before a node's,
    // as when they were read one after the other.
    let read_tensors = || -> Result<(BTreeMap<String, TensorMeta>, UnbackedDims)> {
        // The entries come in key order, so the map is built without comparing keys.
        let mut tensors = Vec::new();
        let mut unbacked = UnbackedDims::new();
        if let Some(tv) = graph.get("tensor_values").and_then(Value::as_object) {
            tensors.reserve(tv.len());
            for (name, meta) in tv {
                let meta = tree::expand(bytes, meta).map_err(invalid)?;
                let (meta, dims) = tensor_meta_unbacked(name, &meta, sizes)?;
                if !dims.is_empty() {
                    unbacked.insert(name.to_string(), dims);
                }
                tensors.push((name.to_string(), meta));
            }
        }
        Ok((tensors.into_iter().collect(), unbacked))
    };
    let read_nodes = || -> Result<Vec<Node>> {
        as_array(get(graph, "nodes", file)?, file)?
            .iter()
            .enumerate()
            .filter_map(|(i, n)| match tree::expand(bytes, n) {
                Ok(n) => parse_node(&n, i, sizes).transpose(),
                Err(e) => Some(Err(invalid(e))),
            })
            .collect()
    };
    let (tensors, nodes) = std::thread::scope(|s| {
        let tensors = s.spawn(read_tensors);
        let nodes = read_nodes();
        let tensors = tensors
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (tensors, nodes)
    });
    let ((tensors, unbacked), mut nodes) = (tensors?, nodes?);
    set_subgraph_versions(&mut nodes, (major, minor));
    let inputs = as_array(get(signature, "input_specs", file)?, file)?
        .iter()
        .enumerate()
        .map(|(i, s)| parse_input_spec(s, i))
        .collect::<Result<Vec<_>>>()?;
    let (outputs, buffer_mutations, joint) =
        graph_outputs(graph, signature, &inputs, &nodes, file)?;
    let mutated: Vec<String> = buffer_mutations.iter().map(|(_, v)| v.clone()).collect();
    check_definitions(&inputs, &nodes, &outputs)?;
    check_definitions(&inputs, &nodes, &mutated)?;
    for name in inputs
        .iter()
        .map(|s| &s.name)
        .chain(outputs.iter())
        .chain(mutated.iter())
    {
        if !tensors.contains_key(name) {
            return Err(malformed(format!(
                "tensor `{name}` has no entry in tensor_values"
            )));
        }
    }
    let mut graph = Graph {
        inputs,
        outputs,
        buffer_mutations,
        joint,
        nodes,
        tensors,
        schema_version: (major, minor),
    };
    super::data_dependent::resolve(&mut graph, &unbacked)?;
    Ok(graph)
}

/// The dynamic sizes of an exported program: its symbols with their ranges, and the
/// dimensions of its user inputs and outputs as expressions over them.
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicSignature {
    pub symbols: Vec<Symbol>,
    /// User inputs in order: placeholder name and dimensions.
    pub inputs: Vec<(String, Vec<Dim>)>,
    /// User outputs in order.
    pub outputs: Vec<(String, Vec<Dim>)>,
}

/// A dimension of a tensor_meta, the hint of a symbolic one.
fn read_dim(v: &Value, ctx: &str) -> Result<(Dim, Option<i64>)> {
    let (kind, val) = union(v, ctx)?;
    match kind {
        "as_int" => Ok((Dim::Static(as_i64(val, ctx)?), None)),
        "as_expr" => {
            let text = as_str(get(val, "expr_str", ctx)?, ctx)?;
            let expr = Expr::parse(text).map_err(|e| FrontendError::SizeExpression {
                what: ctx.to_string(),
                expr: text.to_string(),
                message: e.0,
            })?;
            let hint = val
                .get("hint")
                .and_then(|h| h.get("as_int"))
                .and_then(Value::as_i64);
            Ok((
                match expr {
                    Expr::Int(v) => Dim::Static(v),
                    e => Dim::Sym(e),
                },
                hint,
            ))
        }
        other => Err(malformed(format!("{ctx}: a size of kind `{other}`"))),
    }
}

/// The dynamic signature of `model.json`, or `None` for a static program (no
/// `range_constraints`). Weights must have static shapes.
pub fn dynamic_signature(bytes: &[u8], file: &str) -> Result<Option<DynamicSignature>> {
    // A static program writes no size expression: skip the tree (a pass over the whole
    // file) on the common path.
    if memchr::memmem::find(bytes, b"\"as_expr\"").is_none() {
        return Ok(None);
    }
    let invalid = invalid_json(file);
    let root = read_root(bytes, file)?;
    let constraints = match root.get("range_constraints").and_then(Value::as_object) {
        Some(c) if !c.is_empty() => c,
        _ => return Ok(None),
    };
    let gm = get(&root, "graph_module", file)?;
    let graph = get(gm, "graph", file)?;
    let signature = get(gm, "signature", file)?;
    let mut symbols = Vec::new();
    for (name, r) in constraints {
        let bound = |key: &str| -> Option<i64> {
            // Unbounded is written as null, or as a number near the 64-bit limit.
            r.get(key)
                .and_then(Value::as_i64)
                .filter(|v| v.abs() < (1i64 << 62))
        };
        symbols.push(Symbol {
            name: name.to_string(),
            min: bound("min_val").unwrap_or(0),
            max: bound("max_val"),
            hint: None,
        });
    }
    let tensor_dims = |name: &str| -> Result<Vec<(Dim, Option<i64>)>> {
        let meta = graph
            .get("tensor_values")
            .and_then(|tv| tv.get(name))
            .ok_or_else(|| malformed(format!("tensor `{name}` has no entry in tensor_values")))?;
        let meta = tree::expand(bytes, meta).map_err(invalid)?;
        let ctx = format!("tensor `{name}`");
        as_array(get(&meta, "sizes", &ctx)?, &ctx)?
            .iter()
            .map(|d| read_dim(d, &ctx))
            .collect()
    };
    let specs = as_array(get(signature, "input_specs", file)?, file)?
        .iter()
        .enumerate()
        .map(|(i, s)| parse_input_spec(s, i))
        .collect::<Result<Vec<_>>>()?;
    let mut inputs = Vec::new();
    for spec in &specs {
        let dims = tensor_dims(&spec.name)?;
        if spec.kind != InputKind::UserInput {
            if let Some((d, _)) = dims.iter().find(|(d, _)| matches!(d, Dim::Sym(_))) {
                return Err(FrontendError::Dynamic(format!(
                    "weight `{}` has the symbolic size `{d}`; tpuc takes dynamic sizes of user inputs only",
                    spec.target.as_deref().unwrap_or(&spec.name)
                )));
            }
            continue;
        }
        for (d, hint) in &dims {
            if let (Dim::Sym(Expr::Sym(s)), Some(h)) = (d, hint) {
                if let Some(sym) = symbols.iter_mut().find(|y| &y.name == s) {
                    sym.hint.get_or_insert(*h);
                }
            }
        }
        inputs.push((
            spec.name.clone(),
            dims.into_iter().map(|(d, _)| d).collect::<Vec<Dim>>(),
        ));
    }
    // torch.export keeps the range of a symbol it then specialized away (an op case
    // exported with a dynamic dim that became static): only symbols the inputs'
    // dimensions use are sizes; a program with none is static.
    let used: std::collections::BTreeSet<String> = inputs
        .iter()
        .flat_map(|(_, dims)| dims.iter())
        .flat_map(|d| match d {
            Dim::Sym(e) => e.symbols(),
            Dim::Static(_) => Vec::new(),
        })
        .collect();
    symbols.retain(|s| used.contains(&s.name));
    if symbols.is_empty() {
        return Ok(None);
    }
    if let Some(free) = used.iter().find(|u| !symbols.iter().any(|s| &s.name == *u)) {
        return Err(FrontendError::Dynamic(format!(
            "the size `{free}` of an input has no entry in range_constraints (a damaged or hand-edited model.json?)"
        )));
    }
    let mut outputs = Vec::new();
    for (i, spec) in as_array(get(signature, "output_specs", file)?, file)?
        .iter()
        .enumerate()
    {
        let ctx = format!("output spec #{i}");
        let (kind, val) = union(spec, &ctx)?;
        if kind != "user_output" {
            continue;
        }
        let (k, inner) = union(get(val, "arg", &ctx)?, &ctx)?;
        if k != "as_tensor" {
            continue;
        }
        let name = tensor_name(inner, &ctx)?;
        let dims = tensor_dims(&name)?.into_iter().map(|(d, _)| d).collect();
        outputs.push((name, dims));
    }
    Ok(Some(DynamicSignature {
        symbols,
        inputs,
        outputs,
    }))
}

/// The user outputs and the buffer mutations (buffer placeholder, new value).
type UserOutputsAndMutations = (Vec<String>, Vec<(String, String)>, Option<Joint>);

/// The name of the node that produces tensor `name`, for messages.
fn producer<'a>(nodes: &'a [Node], name: &str) -> Option<&'a str> {
    nodes
        .iter()
        .find(|n| n.output_names().contains(&name))
        .map(|n| n.name.as_str())
}

/// The user outputs: `graph.outputs`, checked against the signature's `output_specs`
/// (one spec per graph output, naming the same tensor, in order), and the buffer
/// mutations (buffer placeholder, new value). Mutations of parameters and user inputs
/// are refused with the tensor they would write: tpuc keeps buffers as state, and
/// dropping the write would give wrong results from the second call on.
///
/// A joint training program (`_export_forward_backward`: a `loss_output` and one
/// `gradient_to_parameter` per trained parameter) has the loss, then the gradients,
/// as its outputs, and its [`Joint`] names the parameter of each gradient.
fn graph_outputs(
    graph: &Value,
    signature: &Value,
    inputs: &[InputSpec],
    nodes: &[Node],
    file: &str,
) -> Result<UserOutputsAndMutations> {
    let mut listed = Vec::new();
    for (i, out) in as_array(get(graph, "outputs", file)?, file)?
        .iter()
        .enumerate()
    {
        let ctx = format!("graph output #{i}");
        let (k, inner) = union(out, &ctx)?;
        if k != "as_tensor" {
            return Err(malformed(format!(
                "{ctx}: output of kind `{k}` is not a tensor; tpuc supports tensor outputs only"
            )));
        }
        listed.push(tensor_name(inner, &ctx)?);
    }
    let specs = as_array(get(signature, "output_specs", file)?, file)?;
    let mut outputs: Vec<String> = Vec::new();
    let mut in_spec_order = Vec::new();
    let mut mutations = Vec::new();
    let mut writes = Vec::new();
    let mut loss: Option<String> = None;
    let mut gradients: Vec<(String, String)> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let ctx = format!("output spec #{i}");
        let (kind, val) = union(spec, &ctx)?;
        let arg = get(val, "arg", &ctx)?;
        if kind == "loss_output" || kind == "gradient_to_parameter" {
            // TensorArgument (`{"name": ...}`), as mutation specs hold.
            let value = arg
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(format!("{ctx}: {kind} names no tensor")))?;
            in_spec_order.push(value.to_string());
            if kind == "loss_output" {
                if loss.is_some() {
                    return Err(malformed(format!("{ctx}: a second loss_output")));
                }
                loss = Some(value.to_string());
                continue;
            }
            let target = val
                .get("parameter_name")
                .and_then(Value::as_str)
                .unwrap_or("?");
            let param = inputs
                .iter()
                .find(|s| s.kind == InputKind::Parameter && s.target.as_deref() == Some(target))
                .ok_or_else(|| {
                    malformed(format!(
                        "{ctx}: gradient_to_parameter of `{target}`, which no parameter input spec names"
                    ))
                })?;
            gradients.push((param.name.clone(), value.to_string()));
            continue;
        }
        if kind == "user_output" {
            let (k, inner) = union(arg, &ctx)?;
            if k != "as_tensor" {
                return Err(malformed(format!(
                    "{ctx}: output of kind `{k}` is not a tensor; tpuc supports tensor outputs only"
                )));
            }
            outputs.push(tensor_name(inner, &ctx)?);
            in_spec_order.push(outputs.last().unwrap().clone());
            continue;
        }
        let (what, field) = match kind {
            "buffer_mutation" => ("buffer", "buffer_name"),
            "parameter_mutation" => ("parameter", "parameter_name"),
            "user_input_mutation" => ("user input", "user_input_name"),
            other => {
                return Err(malformed(format!(
                    "{ctx}: output kind `{other}` (a token output) is not supported"
                )))
            }
        };
        // Mutation specs hold a TensorArgument (`{"name": ...}`), not a union.
        let value = arg.get("name").and_then(Value::as_str).unwrap_or("?");
        let target = val.get(field).and_then(Value::as_str).unwrap_or("?");
        in_spec_order.push(value.to_string());
        if kind == "buffer_mutation" {
            let buffer = inputs
                .iter()
                .find(|s| s.kind == InputKind::Buffer && s.target.as_deref() == Some(target))
                .ok_or_else(|| {
                    malformed(format!(
                        "{ctx}: buffer_mutation of `{target}`, which no buffer input spec names"
                    ))
                })?;
            mutations.push((buffer.name.clone(), value.to_string()));
            continue;
        }
        let by = producer(nodes, value)
            .map(|n| format!(" by node `{n}`"))
            .unwrap_or_default();
        writes.push(format!(
            "{what} `{target}` ({ctx}, {kind}: the new value `{value}` is computed{by})"
        ));
    }
    if !writes.is_empty() {
        return Err(FrontendError::StateMutation {
            writes: writes.join("; "),
        });
    }
    if in_spec_order != listed {
        return Err(malformed(format!(
            "output_specs name the outputs [{}] but graph.outputs lists [{}]; they must agree \
             (a damaged or hand-edited model.json?)",
            in_spec_order.join(", "),
            listed.join(", ")
        )));
    }
    let joint = match loss {
        None if gradients.is_empty() => None,
        None => {
            return Err(FrontendError::Joint(
                "the program has gradient outputs but no loss_output: export the joint program \
                 with `_export_forward_backward(ep, joint_loss_index=...)` from a forward that returns the loss"
                    .into(),
            ))
        }
        Some(loss) => {
            if !outputs.is_empty() {
                return Err(FrontendError::Joint(format!(
                    "the training program returns user outputs besides its loss ({}); a compiled \
                     training step returns the loss, the gradient norm and the learning rate only: \
                     return `(loss,)` from the forward you export",
                    outputs.join(", ")
                )));
            }
            let mut all = vec![loss];
            all.extend(gradients.iter().map(|(_, g)| g.clone()));
            outputs = all;
            Some(Joint {
                parameters: gradients.into_iter().map(|(p, _)| p).collect(),
            })
        }
    };
    Ok((outputs, mutations, joint))
}

/// Every tensor is defined once (by an input or a node) and every output is defined.
fn check_definitions(inputs: &[InputSpec], nodes: &[Node], outputs: &[String]) -> Result<()> {
    /// What defines a value: an input, or the node of this name.
    enum Definer<'a> {
        Input,
        Node(&'a str),
    }
    let mut defined: FxHashMap<&str, Definer> = FxHashMap::default();
    defined.reserve(inputs.len() + nodes.len());
    for spec in inputs {
        if defined.insert(spec.name.as_str(), Definer::Input).is_some() {
            return Err(malformed(format!(
                "input `{}` appears twice in input_specs",
                spec.name
            )));
        }
    }
    let mut node_names = FxHashMap::default();
    node_names.reserve(nodes.len());
    for node in nodes {
        if let Some(first) = node_names.insert(node.name.as_str(), node.target.as_str()) {
            return Err(malformed(format!(
                "two nodes are named `{}` ({first} and {}); node names must be unique",
                node.name, node.target
            )));
        }
        for out in node.output_names() {
            if let Some(prev) = defined.insert(out, Definer::Node(&node.name)) {
                let prev = match prev {
                    Definer::Input => format!("input `{out}`"),
                    Definer::Node(name) => format!("node `{name}`"),
                };
                return Err(malformed(format!(
                    "node `{}` ({}) defines `{out}`, which {prev} already defines; \
                     every value must have one definition",
                    node.name, node.target
                )));
            }
        }
    }
    for name in outputs {
        if !defined.contains_key(name.as_str()) {
            return Err(malformed(format!(
                "graph output `{name}` is defined by no input and no node"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_trace_prefers_user_frames() {
        let st = "File \"/home/u/model.py\", line 12, in forward\n    x = self.l(x)\n  File \"/usr/lib/python3/site-packages/torch/nn/modules/linear.py\", line 134, in forward\n    return F.linear(x)";
        assert_eq!(
            source_location(st),
            Some(("/home/u/model.py".to_string(), 12))
        );
    }

    #[test]
    fn non_finite_floats_are_strings() {
        assert_eq!(
            as_f64(&Value::String("-Infinity".into()), "t").unwrap(),
            f64::NEG_INFINITY
        );
        assert!(as_f64(&Value::String("x".into()), "t").is_err());
    }
}
