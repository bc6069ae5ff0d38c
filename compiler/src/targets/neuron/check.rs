//! `neuron-check`: every op of `@main` against what Neuron devices take, with one
//! diagnostic per offending node, all reported at once.
//!
//! Refused: dynamic (`?`) dimensions, f64 values, complex values, matmuls and convolutions of integers
//! (Neuron's matmul engines multiply floats), composites (the Neuron pipeline never
//! outlines them), and any op outside the chip's table ([`supported_ops`], [`SUPPORTED`] for every
//! generation today). That list is tpuc's model of
//! Neuron's XLA frontend: the operators AWS documents for it, plus the HLO ops that
//! AWS's own PyTorch/XLA lowerings hand `neuronx-cc` (windowed reductions, sort,
//! bit manipulation). It is a table, to be corrected from the device when a check is
//! found wrong. Everything a PyTorch graph needs outside the list is a diagnostic at
//! its node, never a silent fallback.
//!
//! The program's interface keeps PyTorch's types: an f64 argument that is only
//! converted (to f32, by `neuron-legalize`) and an f64 result that is only converted
//! from a narrower type are the edges of a narrowed program, not f64 arithmetic.

use melior::ir::Module;
use melior::Context;
use mlir_sys::{MlirOperation, MlirValue};
use tpuc_artifact::DType;

use super::Chip;
use crate::error::{CompileError, NeuronDiagnostic};
use crate::passes::{ir, Pass};

/// The StableHLO ops a Neuron program may hold (without the `stablehlo.` prefix).
pub const SUPPORTED: &[&str] = &[
    // Elementwise arithmetic and math.
    "abs",
    "add",
    "subtract",
    "multiply",
    "divide",
    "remainder",
    "negate",
    "maximum",
    "minimum",
    "power",
    "sign",
    "floor",
    "ceil",
    "round_nearest_even",
    "sqrt",
    "rsqrt",
    "exponential",
    "exponential_minus_one",
    "log",
    "log_plus_one",
    "logistic",
    "tanh",
    "sine",
    "cosine",
    "atan2",
    "is_finite",
    "clamp",
    "select",
    "compare",
    "convert",
    // Logic and bits.
    "and",
    "or",
    "xor",
    "not",
    "shift_left",
    "shift_right_logical",
    "shift_right_arithmetic",
    "bitcast_convert",
    // Shapes and data movement.
    "constant",
    "iota",
    "reshape",
    "transpose",
    "broadcast_in_dim",
    "slice",
    "concatenate",
    "pad",
    "reverse",
    "gather",
    "scatter",
    // Contractions and reductions.
    "dot_general",
    "convolution",
    "reduce",
    "reduce_window",
    "sort",
    // Terminators of bodies.
    "return",
];

/// The ops `chip` takes. Every generation tpuc knows shares one table today; a
/// generation with other op support gets its own list here.
pub fn supported_ops(chip: Option<Chip>) -> &'static [&'static str] {
    match chip {
        None | Some(Chip::Trn1 | Chip::Trn2 | Chip::Trn3 | Chip::Inf2) => SUPPORTED,
    }
}

pub const NAME: &str = "neuron-check";

/// `neuron-check`, or `neuron-check{chip=trn2}` for one generation's op table.
pub struct NeuronCheck {
    pub chip: Option<Chip>,
}

impl Pass for NeuronCheck {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "Neuron: refuse what Neuron devices cannot run (dynamic sizes, f64, integer matmuls, unsupported ops), one diagnostic per node"
    }
    fn run<'c>(&self, _ctx: &'c Context, module: Module<'c>) -> Result<Module<'c>, CompileError> {
        let Some(block) = ir::main_block(&module) else {
            return Ok(module);
        };
        let mut found = Vec::new();
        for (i, arg) in ir::block_arguments(block).into_iter().enumerate() {
            let edge = ir::users(arg)
                .into_iter()
                .all(|u| ir::op_name(u) == "stablehlo.convert");
            if let Some(problem) = type_problem(arg, edge) {
                let (name, _) = super::hlo::node_of_location(ir::value_location(arg));
                found.push(NeuronDiagnostic {
                    node: if name.is_empty() {
                        format!("argument {i}")
                    } else {
                        name
                    },
                    op: format!("argument {i}"),
                    message: problem,
                });
            }
        }
        for op in ir::nested_ops(block) {
            if let Some(message) = problem(op, supported_ops(self.chip)) {
                let (node, _) = super::hlo::node_of(op);
                found.push(NeuronDiagnostic {
                    node: if node.is_empty() { "?".into() } else { node },
                    op: ir::op_name(op).to_string(),
                    message,
                });
            }
        }
        if found.is_empty() {
            Ok(module)
        } else {
            Err(CompileError::Neuron(found))
        }
    }
}

/// What a Neuron device cannot take about `v`'s type; `edge`: `v` is only a convert
/// at the program's interface, where f64 stays.
fn type_problem(v: MlirValue, edge: bool) -> Option<String> {
    // SAFETY: the type belongs to a live value; shaped-type queries follow the test.
    let dynamic = unsafe {
        let ty = mlir_sys::mlirValueGetType(v);
        mlir_sys::mlirTypeIsAShaped(ty) && !mlir_sys::mlirShapedTypeHasStaticShape(ty)
    };
    if dynamic {
        // SAFETY: the type belongs to the context, which outlives this call.
        let ty = unsafe { melior::ir::Type::from_raw(ir::value_type(v)) };
        return Some(format!(
            "{ty} has a dynamic size; Neuron devices run static shapes only (export with static sizes, or one program per size)"
        ));
    }
    match ir::tensor_type(v) {
        Some(t) if t.dtype.is_complex() => Some(format!(
            "{} is complex, which neuronx-cc has no type for (compute with real and \
             imaginary parts as separate real tensors, e.g. rotary embeddings with cos/sin)",
            t.mlir()
        )),
        Some(t) if t.dtype == DType::F64 && !edge => Some(format!(
            "{} is f64, which Neuron devices do not compute (the neuron-legalize pass narrows it to f32)",
            t.mlir()
        )),
        _ => None,
    }
}

fn problem(op: MlirOperation, supported: &[&str]) -> Option<String> {
    let name = ir::op_name(op);
    if name == "func.return" {
        return None;
    }
    let short = name.strip_prefix("stablehlo.").unwrap_or(name);
    if short == "composite" {
        return Some(
            "a composite; the Neuron pipeline inlines composites, so none may remain".into(),
        );
    }
    // Complex values first: they are the cause for the complex-only ops too.
    if let Some(p) = ir::results(op)
        .into_iter()
        .filter(|&v| ir::tensor_type(v).is_some_and(|t| t.dtype.is_complex()))
        .find_map(|v| type_problem(v, false))
    {
        return Some(p);
    }
    if !name.starts_with("stablehlo.") || !supported.contains(&short) {
        return Some(format!(
            "{name} is not among the ops Neuron's XLA frontend takes"
        ));
    }
    for v in ir::results(op).into_iter() {
        let edge = short == "convert"
            && ir::users(v)
                .into_iter()
                .all(|u| ir::op_name(u) == "func.return");
        if let Some(p) = type_problem(v, edge) {
            return Some(p);
        }
    }
    if short == "dot_general" || short == "convolution" {
        let integer = ir::operands(op).into_iter().any(|v| {
            ir::tensor_type(v).is_some_and(|t| {
                !matches!(t.dtype, DType::F32 | DType::F16 | DType::Bf16 | DType::F64)
            })
        });
        if integer {
            return Some(format!(
                "an integer {short}; Neuron's matmul engines multiply floats (cast the inputs to a float type in the model)"
            ));
        }
    }
    // Operands' types are reported at their producers, arguments above.
    None
}
