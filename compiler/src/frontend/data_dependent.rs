//! Sizes that depend on tensor values, computed exactly on static shapes.
//!
//! torch.export writes a size it cannot tie to the inputs' sizes as an unbacked symbol
//! (`u0`): the value of `.item()` on a count, the length of `nonzero`'s result... A
//! mixture-of-experts layer that dispatches tokens by sorting them by expert (JetMoE;
//! transformers' grouped expert loops) reads each expert's token count with `.item()`,
//! splits the sorted tokens by those counts, runs each expert on its piece and
//! concatenates the results:
//!
//! ```text
//! u_k           = item(count_k)                           0 <= u_k <= N
//! p_0 .. p_n-1  = split_with_sizes(x, [u_0 .. u_n-1])     x: [N, ...]
//! q_k           = expert_k(p_k)                           row by row
//! y             = cat([q_0 .. q_n-1])                     [u_0 + ... + u_n-1] = [N, ...]
//! ```
//!
//! [`resolve`] rewrites this to static shapes, computing on the bound with a select:
//! each piece stands for the whole `x` (`[N, ...]`), each expert runs row by row on all
//! N rows, and the concatenation takes row `i` from the expert whose segment holds it
//! (`where(i >= u_0 + ... + u_k-1, q_k, ...)`). Every row of `y` is the row PyTorch
//! computes, from the same inputs by the same ops; the rows outside a segment are
//! computed and dropped, never mixed in.
//!
//! Rows selected by a boolean mask (`x[mask]`, X-MOD's per-language adapters) are the
//! same kind of piece: the adapter runs on every row, and `index_put(base, [mask],
//! values)` (`base[mask] = values`) becomes `where(mask, values, base)`.
//!
//! A prefix `x[:, :end]` whose end is read with `.item()` (Reformer's axial position
//! embeddings, cut to the largest position) is a piece too, standing for all of `x`:
//! it may be concatenated with prefixes of the same end along another dimension, and
//! read by `index_select`/`embedding` along its dimension, whose result is static: the
//! rows read are the same in the prefix and in `x` (PyTorch raises for a position at or
//! beyond the end; the program reads `x` there: the assertion is dropped with the
//! others).
//!
//! Between the split and the concatenation a piece may pass through ops that work row
//! by row along the split dimension: elementwise ops whose other operands do not vary
//! along it, `mm`/`addmm`/`linear`/`matmul` with the piece on the left, and views that
//! keep the dimensions up to the split one (which may take in the following ones, in
//! whole rows of the split input). Anything else a data-dependent size reaches
//! (a reduction over the piece, `nonzero`, a size computed from `.item()` for a new
//! tensor) is refused at its node, never approximated. The runtime assertions
//! torch.export leaves on these values (`u0 >= 0`, `u0 + u1 + u2 + u3 == N`) are dropped
//! with the size arithmetic that feeds them: they hold for counts by construction and
//! cannot be checked before the program runs.

use std::collections::BTreeMap;

use tpuc_artifact::DType;

use super::error::{FrontendError, Result};
use super::graph::{Arg, Graph, Node, NodeOutput, SymInt, TensorMeta, DATA_DEPENDENT};

const HINT: &str = "tpuc compiles sizes that depend on tensor values where it can compute \
them exactly on the bound: pieces of `split_with_sizes` by counts that reach a `cat` of all \
of them through row-wise ops (mixture-of-experts dispatch), rows `x[mask]` written back \
with `index_put(.., [mask], ..)`, and prefixes `x[:, :end]` read with `index_select`; \
compute on fixed sizes with masking instead, or export with sizes that do not depend on \
values";

/// The piece of a data-dependent split that a tensor stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    split: usize,
    index: usize,
    /// The split dimension, in this tensor's dimensions.
    dim: usize,
    /// Rows of this tensor along `dim` per row of the split input (a view that merges
    /// the following dimensions into it multiplies them: `[u0, 8, 64] -> [u0 * 8, 64]`).
    scale: i64,
}

/// A `split_with_sizes` by data-dependent sizes, or the rows a boolean mask selects.
struct Split {
    node: String,
    /// Each piece's size: the 0-d integer tensor `.item()` read it from, or a constant
    /// (none for a mask).
    sizes: Vec<Size>,
    /// `x[mask]`: the boolean mask over the first dimension that selected the rows.
    mask: Option<String>,
    /// `x[:, :end]`: the data-dependent end (a named size) of a prefix slice.
    prefix: Option<String>,
    /// The size of the split dimension (the bound of every piece).
    full: i64,
}

enum Size {
    Tensor(String),
    Int(i64),
}

/// Data-dependent dimensions by tensor: each dimension (a [`DATA_DEPENDENT`] in the
/// tensor's shape) with its size as the program writes it (`u0 + u1 + u2 + u3`).
pub type UnbackedDims = BTreeMap<String, Vec<(usize, String)>>;

/// Rewrites a graph whose sizes depend on tensor values to static shapes (see the
/// module documentation), or refuses it at the node a data-dependent size reaches.
/// A graph without such sizes is left as it is.
pub fn resolve(graph: &mut Graph, unbacked: &UnbackedDims) -> Result<()> {
    let uses = graph
        .tensors
        .values()
        .any(|m| m.shape.contains(&DATA_DEPENDENT))
        || graph.nodes.iter().any(|n| {
            n.args
                .iter()
                .any(|(_, a)| matches!(a, Arg::SymInt(_) | Arg::SymInts(_)))
        });
    if !uses {
        return Ok(());
    }
    let mut r = Rewrite {
        tensors: std::mem::take(&mut graph.tensors),
        scalars: BTreeMap::new(),
        pieces: BTreeMap::new(),
        splits: Vec::new(),
        nodes: Vec::new(),
        unbacked,
        known: BTreeMap::new(),
    };
    for node in std::mem::take(&mut graph.nodes) {
        r.node(node)?;
    }
    for name in graph
        .outputs
        .iter()
        .chain(graph.buffer_mutations.iter().map(|(_, v)| v))
    {
        if let Some(p) = r.pieces.get(name) {
            return Err(FrontendError::DataDependent {
                node: r.splits[p.split].node.clone(),
                op: "aten.split_with_sizes".into(),
                message: format!(
                    "the program returns `{name}`, a piece whose size depends on tensor values"
                ),
                hint: HINT.into(),
            });
        }
    }
    graph.tensors = r.tensors;
    graph.nodes = r.nodes;
    Ok(())
}

struct Rewrite<'a> {
    tensors: BTreeMap<String, TensorMeta>,
    unbacked: &'a UnbackedDims,
    /// Data-dependent sizes the rewrite made static: the size of a rewritten `cat`
    /// (`u0 + u1 + u2 + u3`, the whole split dimension), wherever the program uses it.
    known: BTreeMap<String, i64>,
    /// Unbacked symbols by name, with the 0-d tensor `.item()` read each from.
    scalars: BTreeMap<String, String>,
    pieces: BTreeMap<String, Piece>,
    splits: Vec<Split>,
    nodes: Vec<Node>,
}

/// `aten.mm.default` -> `aten.mm`.
fn base(target: &str) -> &str {
    match target.rfind('.') {
        Some(i) if target[..i].contains('.') => &target[..i],
        _ => target,
    }
}

fn is_symbolic(a: &Arg) -> bool {
    matches!(a, Arg::SymInt(_) | Arg::SymInts(_))
        || matches!(a, Arg::Unsupported(k) if k.starts_with("symbolic"))
}

fn refuse(node: &Node, message: String) -> FrontendError {
    FrontendError::DataDependent {
        node: node.name.clone(),
        op: node.target.clone(),
        message,
        hint: HINT.into(),
    }
}

/// Ops that compute each element from the same element of their operands.
const ELEMENTWISE: &[&str] = &[
    "aten.abs",
    "aten.add",
    "aten.alias",
    "aten.clamp",
    "aten.clamp_max",
    "aten.clamp_min",
    "aten.clone",
    "aten.contiguous",
    "aten.cos",
    "aten.div",
    "aten.dropout",
    "aten.elu",
    "aten.erf",
    "aten.exp",
    "aten.expm1",
    "aten.gelu",
    "aten.hardsigmoid",
    "aten.hardswish",
    "aten.hardtanh",
    "aten.leaky_relu",
    "aten.log",
    "aten.log1p",
    "aten.maximum",
    "aten.minimum",
    "aten.mish",
    "aten.mul",
    "aten.multiply",
    "aten.neg",
    "aten.pow",
    "aten.reciprocal",
    "aten.relu",
    "aten.rsqrt",
    "aten.sigmoid",
    "aten.silu",
    "aten.sin",
    "aten.softplus",
    "aten.sqrt",
    "aten.square",
    "aten.sub",
    "aten.tanh",
    "aten.to",
    "aten._to_copy",
    "aten.type_as",
    "aten.where",
];

impl Rewrite<'_> {
    fn meta(&self, name: &str) -> Result<&TensorMeta> {
        self.tensors.get(name).ok_or_else(|| {
            FrontendError::Malformed(format!("tensor `{name}` has no entry in tensor_values"))
        })
    }

    fn node(&mut self, node: Node) -> Result<()> {
        // Sizes the rewrite made static, in this node's results.
        for out in node.output_names() {
            let Some(dims) = self.unbacked.get(out) else {
                continue;
            };
            for (d, expr) in dims {
                if let Some(v) = self.known.get(expr) {
                    if let Some(m) = self.tensors.get_mut(out) {
                        m.shape[*d] = *v;
                    }
                }
            }
        }
        let target = node.target.as_str();
        // `.item()` of a count: its tensor gives the size where the rewrite needs it.
        if matches!(
            target,
            "aten._local_scalar_dense.default" | "aten.item.default"
        ) {
            if let ([NodeOutput::SymInt(sym)], [input]) =
                (node.outputs.as_slice(), node.input_names().as_slice())
            {
                self.scalars.insert(sym.clone(), input.to_string());
                return Ok(());
            }
        }
        // Size arithmetic and runtime assertions over data-dependent values.
        if (super::json::computes_sizes(target)
            || matches!(
                target,
                "aten._assert_scalar.default"
                    | "aten.sym_constrain_range.default"
                    | "aten.sym_constrain_range_for_size.default"
            ))
            && node.args.iter().any(|(_, a)| is_symbolic(a))
        {
            return Ok(());
        }
        if matches!(
            base(target),
            "aten.split_with_sizes" | "aten.split_with_sizes_copy"
        ) && node.args.iter().any(|(_, a)| matches!(a, Arg::SymInts(_)))
        {
            return self.split(node);
        }
        let reads_piece = node
            .input_names()
            .iter()
            .any(|n| self.pieces.contains_key(*n));
        if reads_piece {
            // `piece.size(0)`: a size only size arithmetic and views read.
            if super::json::computes_sizes(target)
                && node
                    .outputs
                    .iter()
                    .all(|o| matches!(o, NodeOutput::SymInt(_)))
            {
                return Ok(());
            }
            if base(target) == "aten.cat" {
                return self.cat(node);
            }
            if matches!(
                base(target),
                "aten.index_put" | "aten.index_put_" | "aten._unsafe_index_put"
            ) {
                return self.masked_put(node);
            }
            if self.reads_prefix_rows(&node)? {
                self.nodes.push(node);
                return Ok(());
            }
            return self.row_wise(node);
        }
        if matches!(base(target), "aten.index" | "aten._unsafe_index") && self.is_row_mask(&node)? {
            return self.masked_rows(node);
        }
        if let Some(end) = self.prefix_end(&node)? {
            return self.prefix_slice(node, end);
        }
        if let Some((name, _)) = node.args.iter().find(|(_, a)| is_symbolic(a)) {
            return Err(refuse(
                &node,
                format!("its argument `{name}` is a size that depends on tensor values"),
            ));
        }
        self.infer_broadcast(&node)?;
        for out in node.output_names() {
            if self.meta(out)?.shape.contains(&DATA_DEPENDENT) {
                return Err(refuse(
                    &node,
                    format!("the size of its result `{out}` depends on tensor values"),
                ));
            }
        }
        self.nodes.push(node);
        Ok(())
    }

    /// A split by data-dependent sizes: each piece becomes an alias of the whole input.
    fn split(&mut self, node: Node) -> Result<()> {
        let arg = |name: &str| arg(&node, name);
        let Some(Arg::Tensor(input)) = arg("self") else {
            return Err(refuse(&node, "no input tensor".into()));
        };
        let Some(Arg::SymInts(sizes)) = arg("split_sizes") else {
            return Err(refuse(&node, "no split sizes".into()));
        };
        let shape = self.meta(input)?.shape.clone();
        let rank = shape.len() as i64;
        let dim = match arg("dim") {
            Some(Arg::Int(d)) => *d,
            _ => 0,
        };
        let dim = if dim < 0 { dim + rank } else { dim };
        if !(0..rank).contains(&dim) || shape[dim as usize] == DATA_DEPENDENT {
            return Err(refuse(
                &node,
                format!("splits `{input}` along a dimension whose size is not static"),
            ));
        }
        let dim = dim as usize;
        let mut piece_sizes = Vec::new();
        for s in sizes {
            piece_sizes.push(match s {
                SymInt::Int(v) => Size::Int(*v),
                SymInt::Unbacked(name) => match self.scalars.get(name) {
                    Some(t) => Size::Tensor(t.clone()),
                    None => {
                        return Err(refuse(
                            &node,
                            format!(
                                "the split size `{name}` is computed from other sizes, not read \
                                 from a tensor with `.item()`"
                            ),
                        ))
                    }
                },
            });
        }
        let outputs: Vec<String> = node.output_names().iter().map(|s| s.to_string()).collect();
        if outputs.len() != piece_sizes.len() {
            return Err(refuse(
                &node,
                format!(
                    "{} split sizes but {} results",
                    piece_sizes.len(),
                    outputs.len()
                ),
            ));
        }
        let split = self.splits.len();
        self.splits.push(Split {
            node: node.name.clone(),
            sizes: piece_sizes,
            mask: None,
            prefix: None,
            full: shape[dim],
        });
        let meta = self.meta(input)?.clone();
        for (index, out) in outputs.into_iter().enumerate() {
            let piece = Piece {
                split,
                index,
                dim,
                scale: 1,
            };
            self.stand_in(out, input, &meta, piece, &node.source_location);
        }
        Ok(())
    }

    /// An op reading a piece: row-wise ones carry the piece, anything else is refused.
    fn row_wise(&mut self, mut node: Node) -> Result<()> {
        let outputs: Vec<String> = node.output_names().iter().map(|s| s.to_string()).collect();
        let [out] = outputs.as_slice() else {
            return Err(refuse(
                &node,
                "an op with several results reads a piece whose size depends on tensor values"
                    .into(),
            ));
        };
        let out_meta = self.meta(out)?.clone();
        // The pieces it reads, by argument; only `cat` takes them in a tensor list.
        let is_cat = base(&node.target) == "aten.cat";
        let mut pieces: Vec<(String, Piece)> = Vec::new();
        for (n, a) in &node.args {
            let (listed, names): (bool, Vec<&String>) = match a {
                Arg::Tensor(t) => (false, vec![t]),
                Arg::Tensors(ts) => (true, ts.iter().collect()),
                Arg::OptionalTensors(ts) => (true, ts.iter().flatten().collect()),
                _ => continue,
            };
            for t in names {
                let Some(p) = self.pieces.get(t) else {
                    continue;
                };
                if listed && !is_cat {
                    return Err(refuse(
                        &node,
                        "reads a piece whose size depends on tensor values inside a tensor list"
                            .into(),
                    ));
                }
                pieces.push((n.clone(), *p));
            }
        }
        let (first_arg, piece) = pieces[0].clone();
        if pieces
            .iter()
            .any(|(_, p)| p.split != piece.split || p.index != piece.index)
        {
            return Err(refuse(
                &node,
                "combines different pieces of a split by data-dependent sizes".into(),
            ));
        }
        let op = base(&node.target).to_string();
        let full = self.splits[piece.split].full;
        let rank = out_meta.shape.len();
        let mut scale = piece.scale;
        let not_row_wise = |why: &str| {
            refuse(
                &node,
                format!(
                    "reads `{}`, a piece of `{}` whose size along dimension {} depends on \
                     tensor values, and {why}",
                    node.input_names()
                        .iter()
                        .find(|t| self.pieces.contains_key(**t))
                        .unwrap_or(&""),
                    self.splits[piece.split].node,
                    piece.dim
                ),
            )
        };
        let mut replaced: Vec<(usize, Arg)> = Vec::new();
        // The dimension the piece's split dimension is in the result.
        let out_dim = if ELEMENTWISE.contains(&op.as_str()) {
            for (n, a) in &node.args {
                let Arg::Tensor(t) = a else { continue };
                let m = self.meta(t)?;
                if self.pieces.contains_key(t) {
                    if m.shape.len() != rank {
                        return Err(not_row_wise("broadcasts it"));
                    }
                    continue;
                }
                let lead = rank as i64 - m.shape.len() as i64;
                let aligned = piece.dim as i64 - lead;
                if aligned >= 0 && m.shape[aligned as usize] != 1 {
                    return Err(not_row_wise(&format!(
                        "its operand `{n}` varies along that dimension"
                    )));
                }
            }
            piece.dim
        } else if op == "aten.cat" {
            // Pieces of one source side by side (checked by `cat`).
            piece.dim
        } else if matches!(op.as_str(), "aten.select" | "aten.select_copy") {
            let in_rank = self.meta(&pieces_name(&node, "self"))?.shape.len() as i64;
            let j = match arg(&node, "dim") {
                Some(Arg::Int(d)) if *d < 0 => d + in_rank,
                Some(Arg::Int(d)) => *d,
                _ => -1,
            };
            if first_arg != "self" || j < 0 || j == piece.dim as i64 {
                return Err(not_row_wise("selects along that dimension"));
            }
            if (j as usize) < piece.dim {
                piece.dim - 1
            } else {
                piece.dim
            }
        } else {
            let left = match op.as_str() {
                "aten.mm" => "self",
                "aten.addmm" => "mat1",
                "aten.linear" | "aten.matmul" => match op.as_str() {
                    "aten.linear" => "input",
                    _ => "self",
                },
                "aten.view" | "aten.reshape" | "aten._unsafe_view" | "aten.view_copy" => "self",
                _ => return Err(not_row_wise(&format!("`{op}` does not work row by row"))),
            };
            if pieces.len() != 1 || first_arg != left {
                return Err(not_row_wise(&format!(
                    "`{op}` works row by row only on its `{left}` operand"
                )));
            }
            let in_shape = self.meta(&pieces_name(&node, left))?.shape.clone();
            match op.as_str() {
                "aten.mm" | "aten.addmm" => {
                    if piece.dim != 0 {
                        return Err(not_row_wise("contracts that dimension"));
                    }
                    if op == "aten.addmm" {
                        if let Some(Arg::Tensor(bias)) = arg(&node, "self") {
                            let b = &self.meta(bias)?.shape;
                            if b.len() == 2 && b[0] != 1 {
                                return Err(not_row_wise("its bias varies along that dimension"));
                            }
                        }
                    }
                    0
                }
                "aten.linear" | "aten.matmul" => {
                    let other = if op == "aten.linear" {
                        "weight"
                    } else {
                        "other"
                    };
                    let other_rank = match arg(&node, other) {
                        Some(Arg::Tensor(w)) => self.meta(w)?.shape.len(),
                        _ => 0,
                    };
                    if in_shape.len() < 2 || piece.dim + 1 >= in_shape.len() || other_rank != 2 {
                        return Err(not_row_wise("contracts or batches that dimension"));
                    }
                    piece.dim
                }
                _ => {
                    // A view keeps the piece's rows if the dimensions up to the split
                    // one are unchanged; the split one may take in the following ones
                    // (or give them back) in whole rows of the split input.
                    let d = piece.dim;
                    if out_meta.shape.len() <= d
                        || out_meta.shape[..d] != in_shape[..d]
                        || out_meta.shape[d] != DATA_DEPENDENT
                        || out_meta.shape[d + 1..].contains(&DATA_DEPENDENT)
                    {
                        return Err(not_row_wise("reshapes that dimension"));
                    }
                    let numel: i64 = in_shape.iter().product();
                    let others: i64 = out_meta
                        .shape
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != d)
                        .map(|(_, v)| *v)
                        .product();
                    let rows = if others == 0 { 0 } else { numel / others };
                    if full == 0 || others == 0 || rows * others != numel || rows % full != 0 {
                        return Err(not_row_wise("reshapes it across rows of the split input"));
                    }
                    scale = rows / full;
                    for (i, (_, a)) in node.args.iter().enumerate() {
                        if let Arg::SymInts(v) = a {
                            // The data-dependent entry is the split dimension's: inferred.
                            let ints: Vec<i64> = v
                                .iter()
                                .map(|s| match s {
                                    SymInt::Int(i) => *i,
                                    SymInt::Unbacked(_) => -1,
                                })
                                .collect();
                            if ints.iter().filter(|i| **i == -1).count() > 1 {
                                return Err(not_row_wise("reshapes that dimension"));
                            }
                            replaced.push((i, Arg::Ints(ints)));
                        }
                    }
                    d
                }
            }
        };
        let mut shape = out_meta.shape.clone();
        for (i, s) in shape.iter_mut().enumerate() {
            if *s == DATA_DEPENDENT {
                if i != out_dim {
                    return Err(not_row_wise(
                        "its result has another dimension that depends on tensor values",
                    ));
                }
                *s = full * scale;
            }
        }
        for (i, a) in replaced {
            node.args[i].1 = a;
        }
        if let Some((name, _)) = node.args.iter().find(|(_, a)| is_symbolic(a)) {
            return Err(refuse(
                &node,
                format!("its argument `{name}` is a size that depends on tensor values"),
            ));
        }
        self.tensors.insert(
            out.clone(),
            TensorMeta {
                dtype: out_meta.dtype,
                shape,
            },
        );
        self.pieces.insert(
            out.clone(),
            Piece {
                dim: out_dim,
                scale,
                ..piece
            },
        );
        self.nodes.push(node);
        Ok(())
    }

    /// `x[.., :end]` from the start of one dimension, `end` a size read with `.item()`:
    /// that size's name.
    fn prefix_end(&self, node: &Node) -> Result<Option<String>> {
        if !matches!(base(&node.target), "aten.slice" | "aten.slice_copy") {
            return Ok(None);
        }
        let (Some(Arg::SymInt(SymInt::Unbacked(end))), Some(Arg::Tensor(x))) =
            (arg(node, "end"), arg(node, "self"))
        else {
            return Ok(None);
        };
        let from_start = matches!(arg(node, "start"), None | Some(Arg::None | Arg::Int(0)));
        let unit_step = matches!(arg(node, "step"), None | Some(Arg::None | Arg::Int(1)));
        if !from_start
            || !unit_step
            || self.pieces.contains_key(x)
            || self.meta(x)?.shape.contains(&DATA_DEPENDENT)
        {
            return Ok(None);
        }
        Ok(Some(end.clone()))
    }

    /// A prefix slice: a piece standing for all of its input (prefixes with the same
    /// end and bound are one source, so they combine).
    fn prefix_slice(&mut self, node: Node, end: String) -> Result<()> {
        let Some(Arg::Tensor(x)) = arg(&node, "self") else {
            return Err(refuse(&node, "no input tensor".into()));
        };
        let x = x.clone();
        let meta = self.meta(&x)?.clone();
        let rank = meta.shape.len() as i64;
        let dim = match arg(&node, "dim") {
            Some(Arg::Int(d)) if *d < 0 => d + rank,
            Some(Arg::Int(d)) => *d,
            _ => 0,
        };
        if !(0..rank).contains(&dim) {
            return Err(refuse(
                &node,
                "slices a dimension the tensor has not".into(),
            ));
        }
        let dim = dim as usize;
        let full = meta.shape[dim];
        let split = match self
            .splits
            .iter()
            .position(|s| s.prefix.as_deref() == Some(end.as_str()) && s.full == full)
        {
            Some(i) => i,
            None => {
                self.splits.push(Split {
                    node: node.name.clone(),
                    sizes: Vec::new(),
                    mask: None,
                    prefix: Some(end),
                    full,
                });
                self.splits.len() - 1
            }
        };
        let out = node.output_names()[0].to_string();
        let piece = Piece {
            split,
            index: 0,
            dim,
            scale: 1,
        };
        self.stand_in(out, &x, &meta, piece, &node.source_location);
        Ok(())
    }

    /// `index_select`/`embedding` of rows of a prefix along its dimension: the rows are
    /// the same in the prefix and in the whole tensor, and the result is static.
    fn reads_prefix_rows(&self, node: &Node) -> Result<bool> {
        let (table, dim) = match base(&node.target) {
            "aten.index_select" => match (arg(node, "self"), arg(node, "dim")) {
                (Some(Arg::Tensor(t)), Some(Arg::Int(d))) => (t, *d),
                _ => return Ok(false),
            },
            "aten.embedding" => match arg(node, "weight") {
                Some(Arg::Tensor(t)) => (t, 0),
                _ => return Ok(false),
            },
            _ => return Ok(false),
        };
        let Some(piece) = self.pieces.get(table) else {
            return Ok(false);
        };
        let rank = self.meta(table)?.shape.len() as i64;
        let dim = if dim < 0 { dim + rank } else { dim };
        let others_plain = node
            .input_names()
            .iter()
            .all(|t| *t == table.as_str() || !self.pieces.contains_key(*t));
        let outs = node.output_names();
        let static_result = match outs.as_slice() {
            [out] => !self.meta(out)?.shape.contains(&DATA_DEPENDENT),
            _ => false,
        };
        Ok(self.splits[piece.split].prefix.is_some()
            && dim == piece.dim as i64
            && others_plain
            && static_result)
    }

    /// `x[mask]`: one boolean mask over `x`'s first dimension, the result's first
    /// dimension the count of its true elements.
    fn is_row_mask(&self, node: &Node) -> Result<bool> {
        let Some(Arg::Tensor(x)) = arg(node, "self") else {
            return Ok(false);
        };
        let outs = node.output_names();
        let (Some(mask), [out]) = (mask_of(node), outs.as_slice()) else {
            return Ok(false);
        };
        let (m, xm) = (self.meta(&mask)?, self.meta(x)?);
        Ok(m.dtype == DType::Bool
            && m.shape.len() == 1
            && xm.shape.first() == m.shape.first()
            && !xm.shape.contains(&DATA_DEPENDENT)
            && self.meta(out)?.shape.first() == Some(&DATA_DEPENDENT))
    }

    /// `x[mask]`: a piece standing for every row of `x`.
    fn masked_rows(&mut self, node: Node) -> Result<()> {
        let (Some(Arg::Tensor(x)), Some(mask)) = (arg(&node, "self"), mask_of(&node)) else {
            return Err(refuse(&node, "expected `x[mask]`".into()));
        };
        let x = x.clone();
        let meta = self.meta(&x)?.clone();
        let out = node.output_names()[0].to_string();
        let split = self.splits.len();
        self.splits.push(Split {
            node: node.name.clone(),
            sizes: Vec::new(),
            mask: Some(mask),
            prefix: None,
            full: meta.shape[0],
        });
        let piece = Piece {
            split,
            index: 0,
            dim: 0,
            scale: 1,
        };
        self.stand_in(out, &x, &meta, piece, &node.source_location);
        Ok(())
    }

    /// `index_put(base, [mask], values)` of the rows `x[mask]` selected:
    /// `where(mask, values, base)` (`base + values` where the mask is set, with
    /// `accumulate`).
    fn masked_put(&mut self, node: Node) -> Result<()> {
        let (Some(Arg::Tensor(base_t)), Some(Arg::Tensor(values)), Some(mask)) =
            (arg(&node, "self"), arg(&node, "values"), mask_of(&node))
        else {
            return Err(refuse(
                &node,
                "expected `index_put(base, [mask], values)`".into(),
            ));
        };
        let (base_t, values) = (base_t.clone(), values.clone());
        let piece = self.pieces.get(&values).copied();
        let source = piece.map(|p| &self.splits[p.split]);
        let fits = piece.is_some_and(|p| p.dim == 0 && p.scale == 1)
            && source.is_some_and(|s| s.mask.as_deref() == Some(mask.as_str()))
            && !self.pieces.contains_key(&base_t);
        if !fits {
            return Err(refuse(
                &node,
                "writes values whose size depends on tensor values other than the rows                  `x[mask]` selected, with the same mask"
                    .into(),
            ));
        }
        let base_meta = self.meta(&base_t)?.clone();
        let out = node.output_names()[0].to_string();
        let accumulate = matches!(arg(&node, "accumulate"), Some(Arg::Bool(true)));
        let loc = node.source_location.clone();
        let stem = node.name.clone();
        let mut mask_shape = vec![1i64; base_meta.shape.len()];
        mask_shape[0] = base_meta.shape[0];
        let mask_b = self.emit(
            format!("{stem}__dd_mask"),
            "aten.view.default",
            vec![
                ("self", Arg::Tensor(mask)),
                ("size", Arg::Ints(mask_shape.clone())),
            ],
            TensorMeta {
                dtype: DType::Bool,
                shape: mask_shape,
            },
            &loc,
        );
        let mut new_rows = values;
        if accumulate {
            new_rows = self.emit(
                format!("{stem}__dd_sum"),
                "aten.add.Tensor",
                vec![
                    ("self", Arg::Tensor(base_t.clone())),
                    ("other", Arg::Tensor(new_rows)),
                ],
                base_meta.clone(),
                &loc,
            );
        }
        let in_place = base(&node.target).ends_with('_');
        let selected = if in_place {
            format!("{stem}__dd_put")
        } else {
            out.clone()
        };
        self.emit(
            selected.clone(),
            "aten.where.self",
            vec![
                ("condition", Arg::Tensor(mask_b)),
                ("self", Arg::Tensor(new_rows)),
                ("other", Arg::Tensor(base_t.clone())),
            ],
            base_meta.clone(),
            &loc,
        );
        if in_place {
            // `base[mask] = values` writes into base: so does the copy.
            self.emit(
                out,
                "aten.copy_.default",
                vec![
                    ("self", Arg::Tensor(base_t)),
                    ("src", Arg::Tensor(selected)),
                ],
                base_meta,
                &loc,
            );
        }
        Ok(())
    }

    /// `cat` of every piece of one split, in order, along the split dimension: row `i`
    /// comes from the piece whose segment holds it.
    fn cat(&mut self, node: Node) -> Result<()> {
        let Some(Arg::Tensors(parts)) = arg(&node, "tensors").cloned() else {
            return Err(refuse(&node, "no tensor list".into()));
        };
        let outs = node.output_names();
        let [out] = outs.as_slice() else {
            return Err(refuse(&node, "expected one result".into()));
        };
        let out = out.to_string();
        let first = self.pieces.get(&parts[0]).copied();
        let rank = self.meta(&out)?.shape.len() as i64;
        let dim = match arg(&node, "dim") {
            Some(Arg::Int(d)) if *d < 0 => d + rank,
            Some(Arg::Int(d)) => *d,
            _ => 0,
        };
        // Pieces of one source side by side along another dimension: row by row.
        let side_by_side = first.is_some_and(|p| {
            p.dim as i64 != dim
                && parts.iter().all(|t| {
                    self.pieces.get(t).is_some_and(|q| {
                        q.split == p.split
                            && q.index == p.index
                            && q.dim == p.dim
                            && q.scale == p.scale
                    })
                })
        });
        if side_by_side {
            return self.row_wise(node);
        }
        let whole = first.is_some_and(|p| {
            let split = &self.splits[p.split];
            split.mask.is_none()
                && parts.len() == split.sizes.len()
                && parts.iter().enumerate().all(|(k, t)| {
                    self.pieces.get(t).is_some_and(|q| {
                        q.split == p.split && q.index == k && q.dim == p.dim && q.scale == 1
                    })
                })
                && p.dim as i64 == dim
        });
        let Some(piece) = first.filter(|_| whole) else {
            return Err(refuse(
                &node,
                "concatenates pieces whose sizes depend on tensor values, but not every piece of \
                 one split in order along the split dimension"
                    .into(),
            ));
        };
        let split = &self.splits[piece.split];
        let full = split.full;
        let sizes: Vec<Size> = split
            .sizes
            .iter()
            .map(|s| match s {
                Size::Tensor(t) => Size::Tensor(t.clone()),
                Size::Int(v) => Size::Int(*v),
            })
            .collect();
        if let Some(dims) = self.unbacked.get(&out) {
            for (d, expr) in dims {
                if *d == piece.dim {
                    self.known.insert(expr.clone(), full);
                }
            }
        }
        let mut out_meta = self.meta(&out)?.clone();
        for (i, s) in out_meta.shape.iter_mut().enumerate() {
            if i == piece.dim {
                *s = full;
            } else if *s == DATA_DEPENDENT {
                return Err(refuse(
                    &node,
                    "its result has another dimension that depends on tensor values".into(),
                ));
            }
        }
        let loc = node.source_location.clone();
        let stem = node.name.clone();
        let i64_meta = |shape: Vec<i64>| TensorMeta {
            dtype: DType::I64,
            shape,
        };
        let mut rows = self.emit(
            format!("{stem}__dd_rows"),
            "aten.arange.default",
            vec![("end", Arg::Int(full))],
            i64_meta(vec![full]),
            &loc,
        );
        let mut row_shape = vec![1i64; out_meta.shape.len()];
        row_shape[piece.dim] = full;
        if row_shape.len() != 1 {
            rows = self.emit(
                format!("{stem}__dd_rows_view"),
                "aten.view.default",
                vec![
                    ("self", Arg::Tensor(rows)),
                    ("size", Arg::Ints(row_shape.clone())),
                ],
                i64_meta(row_shape.clone()),
                &loc,
            );
        }
        let mut acc = parts[0].clone();
        let mut offset: Option<String> = None;
        for (k, part) in parts.iter().enumerate().skip(1) {
            // The size of piece k - 1, as a 0-d i64 tensor.
            let size = match &sizes[k - 1] {
                Size::Int(v) => self.emit(
                    format!("{stem}__dd_size{}", k - 1),
                    "aten.full.default",
                    vec![("size", Arg::Ints(vec![])), ("fill_value", Arg::Int(*v))],
                    i64_meta(vec![]),
                    &loc,
                ),
                Size::Tensor(t) => {
                    let m = self.meta(t)?;
                    if !m.shape.iter().all(|d| *d == 1) || m.dtype.is_float() {
                        return Err(refuse(
                            &node,
                            format!("the split size read from `{t}` is not an integer scalar"),
                        ));
                    }
                    let mut t = t.clone();
                    if !m.shape.is_empty() {
                        t = self.emit(
                            format!("{stem}__dd_size{}_scalar", k - 1),
                            "aten.view.default",
                            vec![("self", Arg::Tensor(t)), ("size", Arg::Ints(vec![]))],
                            TensorMeta {
                                dtype: m.dtype,
                                shape: vec![],
                            },
                            &loc,
                        );
                    }
                    if self.meta(&t)?.dtype != DType::I64 {
                        t = self.emit(
                            format!("{stem}__dd_size{}_i64", k - 1),
                            "aten._to_copy.default",
                            vec![
                                ("self", Arg::Tensor(t)),
                                ("dtype", Arg::ScalarType(Ok(DType::I64))),
                            ],
                            i64_meta(vec![]),
                            &loc,
                        );
                    }
                    t
                }
            };
            // Where piece k starts: the sizes of the pieces before it.
            let start = match offset {
                None => size,
                Some(prev) => self.emit(
                    format!("{stem}__dd_start{k}"),
                    "aten.add.Tensor",
                    vec![("self", Arg::Tensor(prev)), ("other", Arg::Tensor(size))],
                    i64_meta(vec![]),
                    &loc,
                ),
            };
            offset = Some(start.clone());
            let mask = self.emit(
                format!("{stem}__dd_in{k}"),
                "aten.ge.Tensor",
                vec![
                    ("self", Arg::Tensor(rows.clone())),
                    ("other", Arg::Tensor(start)),
                ],
                TensorMeta {
                    dtype: DType::Bool,
                    shape: row_shape.clone(),
                },
                &loc,
            );
            let name = if k + 1 == parts.len() {
                out.clone()
            } else {
                format!("{stem}__dd_rows_upto{k}")
            };
            acc = self.emit(
                name,
                "aten.where.self",
                vec![
                    ("condition", Arg::Tensor(mask)),
                    ("self", Arg::Tensor(part.clone())),
                    ("other", Arg::Tensor(acc)),
                ],
                out_meta.clone(),
                &loc,
            );
        }
        if parts.len() == 1 {
            self.emit(
                out.clone(),
                "aten.alias.default",
                vec![("self", Arg::Tensor(acc))],
                out_meta,
                &loc,
            );
        }
        Ok(())
    }

    /// An elementwise op's result has the broadcast shape of its operands: where the
    /// graph records a data-dependent size for it (`u0 + u1 + u2 + u3` after a rewritten
    /// `cat`, which the program asserts equal to a static size) and every operand is
    /// static now, that shape is the size.
    fn infer_broadcast(&mut self, node: &Node) -> Result<()> {
        let outs = node.output_names();
        let [out] = outs.as_slice() else {
            return Ok(());
        };
        let out = out.to_string();
        let meta = self.meta(&out)?.clone();
        // (`type_as` takes only its other operand's dtype: its shape is its input's.)
        let op = base(&node.target);
        if !meta.shape.contains(&DATA_DEPENDENT)
            || !ELEMENTWISE.contains(&op)
            || op == "aten.type_as"
        {
            return Ok(());
        }
        let mut shape = vec![1i64; meta.shape.len()];
        for t in node.input_names() {
            let s = &self.meta(t)?.shape;
            if s.contains(&DATA_DEPENDENT) || s.len() > shape.len() {
                return Ok(());
            }
            let lead = shape.len() - s.len();
            for (i, d) in s.iter().enumerate() {
                if *d != 1 {
                    shape[lead + i] = *d;
                }
            }
        }
        if shape
            .iter()
            .zip(&meta.shape)
            .all(|(a, b)| *b == DATA_DEPENDENT || a == b)
        {
            self.tensors.insert(
                out,
                TensorMeta {
                    dtype: meta.dtype,
                    shape,
                },
            );
        }
        Ok(())
    }

    /// `out`, a piece whose size depends on tensor values, stands for all of `input`
    /// (`meta`): an alias of it, carrying `piece`.
    fn stand_in(
        &mut self,
        out: String,
        input: &str,
        meta: &TensorMeta,
        piece: Piece,
        loc: &Option<(String, u32)>,
    ) {
        self.pieces.insert(out.clone(), piece);
        self.emit(
            out,
            "aten.alias.default",
            vec![("self", Arg::Tensor(input.to_string()))],
            meta.clone(),
            loc,
        );
    }

    /// Appends a node of one result (`name`) with its metadata; returns the name.
    fn emit(
        &mut self,
        name: String,
        target: &str,
        args: Vec<(&str, Arg)>,
        meta: TensorMeta,
        loc: &Option<(String, u32)>,
    ) -> String {
        self.tensors.insert(name.clone(), meta);
        self.nodes.push(Node {
            name: name.clone(),
            target: target.into(),
            args: args.into_iter().map(|(n, a)| (n.to_string(), a)).collect(),
            outputs: vec![NodeOutput::Tensor(name.clone())],
            source_location: loc.clone(),
        });
        name
    }
}

/// The one index tensor of `x[mask]` / `index_put(base, [mask], ...)`.
fn mask_of(node: &Node) -> Option<String> {
    match arg(node, "indices") {
        Some(Arg::OptionalTensors(v)) if v.len() == 1 => v[0].clone(),
        Some(Arg::Tensors(v)) if v.len() == 1 => Some(v[0].clone()),
        _ => None,
    }
}

fn arg<'a>(node: &'a Node, name: &str) -> Option<&'a Arg> {
    node.args.iter().find(|(n, _)| n == name).map(|(_, a)| a)
}

fn pieces_name(node: &Node, arg_name: &str) -> String {
    match arg(node, arg_name) {
        Some(Arg::Tensor(t)) => t.clone(),
        _ => String::new(),
    }
}
