//! The Trainium / Inferentia target (`tpuc compile --target trn2`).
//!
//! AWS's Neuron compiler, `neuronx-cc`, compiles an XLA `HloModuleProto`; AWS's PJRT
//! plugin takes StableHLO. Both accept less than XLA: static shapes only, no f64, no
//! integer matmuls, 32-bit integers where indices and sizes are expected. The Neuron
//! pipeline ([`crate::passes::pipeline_for_target`]) therefore never outlines
//! composites, and ends with the Neuron passes: `neuron-legalize` (64-bit integers and
//! floats narrowed inside the program), `neuron-auto-cast-*` (`--auto-cast`) and
//! `neuron-check` (every op against what Neuron's XLA frontend takes, one diagnostic
//! per offending node). [`crate::hlo`] then writes the legalized program as HLO, and
//! the artifact records the `neuronx-cc` command that compiles it.

use crate::CompileError;

/// A Neuron device generation, as `neuronx-cc --target` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chip {
    Trn1,
    Trn2,
    Trn3,
    Inf2,
}

impl Chip {
    pub fn name(self) -> &'static str {
        match self {
            Chip::Trn1 => "trn1",
            Chip::Trn2 => "trn2",
            Chip::Trn3 => "trn3",
            Chip::Inf2 => "inf2",
        }
    }

    pub fn parse(s: &str) -> Option<Chip> {
        Some(match s {
            "trn1" => Chip::Trn1,
            "trn2" => Chip::Trn2,
            "trn3" => Chip::Trn3,
            "inf2" => Chip::Inf2,
            _ => return None,
        })
    }
}

/// `--auto-cast`: the type f32 matmul and convolution inputs are cast to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutoCast {
    /// No cast: PyTorch's f32 numbers (tpuc's default; `neuronx-cc`'s is bf16).
    #[default]
    None,
    Bf16,
    Fp16,
}

impl AutoCast {
    pub fn name(self) -> &'static str {
        match self {
            AutoCast::None => "none",
            AutoCast::Bf16 => "bf16",
            AutoCast::Fp16 => "fp16",
        }
    }

    pub fn parse(s: &str) -> Option<AutoCast> {
        Some(match s {
            "none" => AutoCast::None,
            "bf16" => AutoCast::Bf16,
            "fp16" => AutoCast::Fp16,
            _ => return None,
        })
    }
}

/// How the Neuron pipeline legalizes a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeuronOptions {
    pub auto_cast: AutoCast,
    /// Narrow 64-bit integers inside the program to 32 bits (the default, as
    /// `neuronx-cc` does); `false` keeps them (`--keep-int64`), which Neuron devices
    /// may then reject.
    pub narrow_int64: bool,
}

impl Default for NeuronOptions {
    fn default() -> NeuronOptions {
        NeuronOptions {
            auto_cast: AutoCast::None,
            narrow_int64: true,
        }
    }
}

/// The file names of a Neuron artifact's HLO.
pub const HLO_FILE: &str = "model.hlo.pb";
pub const HLO_TEXT_FILE: &str = "model.hlo.txt";
/// What `neuronx-cc` writes.
pub const NEFF_FILE: &str = "model.neff";

/// The `neuronx-cc` command line that compiles the artifact's HLO for `chip`. tpuc has
/// already applied `--auto-cast` in the program, so the device compiler is told to
/// cast nothing more; `transformer` adds `--model-type transformer`.
pub fn neuronx_cc_command(chip: Chip, transformer: bool) -> Vec<String> {
    let mut argv: Vec<String> = [
        "neuronx-cc",
        "compile",
        HLO_FILE,
        "--framework",
        "XLA",
        "--target",
        chip.name(),
        "--auto-cast",
        "none",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if transformer {
        argv.extend(["--model-type".to_string(), "transformer".to_string()]);
    }
    argv.extend(["--output".to_string(), NEFF_FILE.to_string()]);
    argv
}

/// Whether a graph is a transformer for `neuronx-cc --model-type`: it has attention
/// (scaled dot-product attention, or a softmax feeding batched matmuls).
pub fn is_transformer(graph: &crate::frontend::Graph) -> bool {
    let has = |needle: &str| graph.nodes.iter().any(|n| n.target.contains(needle));
    has("scaled_dot_product_attention") || (has("softmax") && (has("bmm") || has("matmul")))
}

/// Neuron compiles one device's program: a sharded compile is refused.
pub fn check_unsharded(sharded: bool) -> Result<(), CompileError> {
    if sharded {
        return Err(CompileError::Sharding(
            "--mesh/--shard are not supported with a Neuron target yet; compile for one \
             NeuronCore and let neuronx-distributed shard it"
                .into(),
        ));
    }
    Ok(())
}
