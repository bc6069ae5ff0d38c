//! The in-memory form of a torch.export program: an FX graph and its signature.

use std::collections::BTreeMap;

use tpuc_artifact::DType;

/// A dimension whose size depends on tensor values (an unbacked symbol of torch.export:
/// `u0` from `.item()`, `nonzero`, `bincount`-style routing). The frontend reads such a
/// size as this marker; [`super::data_dependent`] rewrites the graph so none is left, or
/// refuses it at its node.
pub const DATA_DEPENDENT: i64 = i64::MIN;

/// A symbolic integer argument or output whose value depends on tensor values.
#[derive(Clone, Debug, PartialEq)]
pub enum SymInt {
    Int(i64),
    /// The named symbolic value (`_local_scalar_dense`, `item_2`), or the expression
    /// when it has no name.
    Unbacked(String),
}

/// Shape and element type of one graph value.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMeta {
    pub dtype: DType,
    pub shape: Vec<i64>,
}

/// One argument of a node, as the export schema encodes it.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    None,
    Tensor(String),
    Tensors(Vec<String>),
    OptionalTensors(Vec<Option<String>>),
    Int(i64),
    Ints(Vec<i64>),
    Float(f64),
    Floats(Vec<f64>),
    Bool(bool),
    Bools(Vec<bool>),
    String(String),
    Strings(Vec<String>),
    /// A dtype argument (`dtype=torch.float32`); `None` when PyTorch's code has no tpuc dtype.
    ScalarType(Result<DType, String>),
    /// Memory format, layout or device: irrelevant to the computation.
    Ignored(&'static str),
    /// A subgraph of a higher-order operator (`torch.cond`'s branches, a loop's condition
    /// and body, a scan's combine function): its inputs are user-input placeholders, its
    /// tensors are named in a scope of their own.
    Graph {
        name: String,
        graph: Box<Graph>,
    },
    /// A size argument that depends on tensor values (see [`DATA_DEPENDENT`]).
    SymInt(SymInt),
    /// A size list with at least one entry that depends on tensor values.
    SymInts(Vec<SymInt>),
    /// An argument kind tpuc cannot represent (custom object, symbolic value, ...);
    /// holds the kind.
    Unsupported(String),
}

/// What a node produces.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeOutput {
    Tensor(String),
    Tensors(Vec<String>),
    /// A symbolic integer output (`.item()` of an integer tensor, size arithmetic),
    /// by the name later arguments use for it.
    SymInt(String),
    /// A non-tensor or absent output (e.g. `as_none`).
    None,
}

/// One FX graph node (one ATen call).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// FX node name, unique in the graph (`linear_1`).
    pub name: String,
    /// Target without the `torch.ops.` prefix (`aten.linear.default`).
    pub target: String,
    /// Arguments by schema name, in schema order.
    pub args: Vec<(String, Arg)>,
    pub outputs: Vec<NodeOutput>,
    /// Innermost user frame of the stack trace, as `(file, line)`.
    pub source_location: Option<(String, u32)>,
}

impl Node {
    /// The names of every tensor this node produces, in order.
    pub fn output_names(&self) -> Vec<&str> {
        let mut v = Vec::new();
        for o in &self.outputs {
            match o {
                NodeOutput::Tensor(n) => v.push(n.as_str()),
                NodeOutput::Tensors(ns) => v.extend(ns.iter().map(|s| s.as_str())),
                NodeOutput::SymInt(_) | NodeOutput::None => {}
            }
        }
        v
    }

    /// The subgraphs among this node's arguments, in order.
    pub fn subgraphs(&self) -> impl Iterator<Item = &Graph> {
        self.args.iter().filter_map(|(_, a)| match a {
            Arg::Graph { graph, .. } => Some(&**graph),
            _ => None,
        })
    }

    /// The names of every tensor this node reads.
    pub fn input_names(&self) -> Vec<&str> {
        let mut v = Vec::new();
        for (_, a) in &self.args {
            match a {
                Arg::Tensor(n) => v.push(n.as_str()),
                Arg::Tensors(ns) => v.extend(ns.iter().map(|s| s.as_str())),
                Arg::OptionalTensors(ns) => v.extend(ns.iter().flatten().map(|s| s.as_str())),
                _ => {}
            }
        }
        v
    }
}

/// The role of a graph input in the exported program's signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    Parameter,
    Buffer,
    Constant,
    UserInput,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    pub kind: InputKind,
    /// Graph placeholder name (`p_fc1_weight`, `x`).
    pub name: String,
    /// State-dict / constant name for parameters, buffers and constants (`fc1.weight`).
    pub target: Option<String>,
    /// False for a buffer registered with `persistent=False` (not in `state_dict()`).
    pub persistent: bool,
}

/// What makes a graph a joint (forward + backward) training program: `outputs[0]` is
/// the scalar loss and `outputs[1 + i]` the gradient of parameter `parameters[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// Placeholder names of the parameters with a gradient, in output order.
    pub parameters: Vec<String>,
}

/// An ExportedProgram's graph, signature and tensor metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// Placeholders in signature order.
    pub inputs: Vec<InputSpec>,
    /// Names of the user outputs, in order.
    pub outputs: Vec<String>,
    /// Core ATen `buffer_mutation` outputs: each buffer's placeholder name and the
    /// tensor that is its value for the next call (as-exported graphs write buffers in
    /// place instead; `import::state_updates` finds both).
    pub buffer_mutations: Vec<(String, String)>,
    /// Of a joint training program (`loss_output` and `gradient_to_parameter` output
    /// specs): `outputs` are the loss, then one gradient per parameter named here.
    pub joint: Option<Joint>,
    pub nodes: Vec<Node>,
    /// Metadata of every tensor value by name.
    pub tensors: BTreeMap<String, TensorMeta>,
    /// Schema version the program was written with.
    pub schema_version: (i64, i64),
}

impl Graph {
    /// `--debug-outputs`: every value a node computes (those the graph records a type
    /// for) also returned, as it is right after its node: each is read by an
    /// `aten.clone` inserted after the node (a later in-place write, which the importer
    /// functionalizes into a new value under the same name, does not change it) whose
    /// result is appended to the outputs. Returns, per value, its output index, its
    /// name, its node, the node's operator and the values the node read.
    pub fn return_every_value(&mut self) -> Vec<(usize, String, String, String, Vec<String>)> {
        let mut out = Vec::new();
        let mut nodes = Vec::with_capacity(self.nodes.len() * 2);
        let mut taken: std::collections::BTreeSet<String> =
            self.nodes.iter().map(|n| n.name.clone()).collect();
        taken.extend(self.tensors.keys().cloned());
        taken.extend(self.inputs.iter().map(|i| i.name.clone()));
        for node in std::mem::take(&mut self.nodes) {
            let values: Vec<String> = node
                .output_names()
                .into_iter()
                .filter(|name| self.tensors.contains_key(*name))
                .map(str::to_string)
                .collect();
            let inputs: Vec<String> = node.input_names().iter().map(|s| s.to_string()).collect();
            let (node_name, target, location) = (
                node.name.clone(),
                node.target.clone(),
                node.source_location.clone(),
            );
            nodes.push(node);
            for value in values {
                let mut copy = format!("{value}__debug");
                while taken.contains(&copy) {
                    copy.push('_');
                }
                taken.insert(copy.clone());
                let meta = self.tensors[&value].clone();
                self.tensors.insert(copy.clone(), meta);
                nodes.push(Node {
                    name: copy.clone(),
                    target: "aten.clone.default".into(),
                    args: vec![("self".into(), Arg::Tensor(value.clone()))],
                    outputs: vec![NodeOutput::Tensor(copy.clone())],
                    source_location: location.clone(),
                });
                self.outputs.push(copy);
                out.push((
                    self.outputs.len() - 1,
                    value,
                    node_name.clone(),
                    target.clone(),
                    inputs.clone(),
                ));
            }
        }
        self.nodes = nodes;
        out
    }

    /// Counts of node targets, sorted by target, subgraphs' nodes included.
    pub fn op_counts(&self) -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        self.count_ops(&mut m);
        m
    }

    fn count_ops(&self, m: &mut BTreeMap<String, usize>) {
        for n in &self.nodes {
            *m.entry(n.target.clone()).or_insert(0) += 1;
            for g in n.subgraphs() {
                g.count_ops(m);
            }
        }
    }
}
