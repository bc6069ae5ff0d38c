//! Everything that can go wrong while compiling: [`CompileError`] and the records it
//! carries (unsupported ops, Neuron diagnostics).

use std::path::PathBuf;

use crate::frontend::FrontendError;

/// One unsupported op target, as reported by `lower-aten-to-stablehlo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedOp {
    pub target: String,
    pub count: usize,
    pub first_node: String,
}

/// One op a Neuron device cannot run (`neuron-check`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeuronDiagnostic {
    pub node: String,
    pub op: String,
    pub message: String,
}

/// Everything that can go wrong while compiling.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Frontend(#[from] FrontendError),
    #[error("node `{node}` ({target}): {message}")]
    Node {
        node: String,
        target: String,
        message: String,
    },
    #[error("{}", format_unsupported(.0))]
    UnsupportedOps(Vec<UnsupportedOp>),
    #[error("the emitted StableHLO does not verify:\n{}", .0.iter().map(|d| format!("  {d}")).collect::<Vec<_>>().join("\n"))]
    Verify(Vec<tpuc_dialects::verify::Diagnostic>),
    #[error("unknown pass `{name}`; known passes: {}", .known.join(", "))]
    UnknownPass { name: String, known: Vec<String> },
    #[error("pass `{pass}`: {message}")]
    PassOption { pass: String, message: String },
    #[error("cannot parse the pass pipeline `{text}`: {message}")]
    PipelineSyntax { text: String, message: String },
    #[error("cannot parse MLIR in `{file}` (see the diagnostics above)")]
    MlirParse { file: String },
    #[error("cannot write `{path}`: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("refusing to write `{path}`: {reason}")]
    Output { path: PathBuf, reason: String },
    #[error("unknown target `{0}` (known: tpu, trn1, trn2, trn3, inf2)")]
    UnknownTarget(String),
    #[error("sharding: {0}")]
    Sharding(String),
    #[error("{} node(s) cannot run on Neuron devices:\n{}", .0.len(), .0.iter().map(|d| format!("  node `{}` ({}): {}", d.node, d.op, d.message)).collect::<Vec<_>>().join("\n"))]
    Neuron(Vec<NeuronDiagnostic>),
    /// A target's step after the artifact's files are written (the TPU compile).
    #[error("{0}")]
    Target(String),
    /// A dynamic program asked for something tpuc cannot do with it.
    #[error("{0}")]
    Dynamic(String),
    /// `--train`: a program or option a training step cannot be compiled from.
    #[error("training: {0}")]
    Training(String),
    /// The caller cancelled the compile ([`crate::CompileOptions::cancel`]).
    #[error("the compile was interrupted; nothing was written")]
    Interrupted,
    #[error("internal compiler error: {0}")]
    Internal(String),
}

fn format_unsupported(ops: &[UnsupportedOp]) -> String {
    let total: usize = ops.iter().map(|o| o.count).sum();
    let mut s = format!(
        "{} unsupported op target(s) ({} node(s)); no lowering to StableHLO exists for:",
        ops.len(),
        total
    );
    let mut custom = false;
    for o in ops {
        s.push_str(&format!(
            "\n  {} x{} (first at node `{}`)",
            o.target, o.count, o.first_node
        ));
        let namespace = o.target.split('.').next().unwrap_or("");
        if namespace != "aten" && namespace != "prims" {
            custom = true;
            let name = o.target.split_once('.').map_or("", |x| x.1);
            s.push_str(&format!(
                " — custom operator `{name}` of namespace `{namespace}`"
            ));
        }
    }
    s.push_str("\nhint: `tpuc inspect MODEL` lists every op; a decomposition (ep.run_decompositions()) may avoid them");
    if custom {
        s.push_str(
            "\nhint: for a custom operator, decompose it before saving \
             (ep.run_decompositions({torch.ops.NS.OP.default: fn})) or give tpuc a lowering \
             (CompileOptions::custom_lowerings; see README, \"Custom operators\")",
        );
    }
    s
}
