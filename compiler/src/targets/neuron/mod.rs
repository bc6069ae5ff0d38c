//! The Trainium / Inferentia target (`tpuc compile --target trn2`).
//!
//! AWS's Neuron compiler, `neuronx-cc`, compiles an XLA `HloModuleProto`; AWS's PJRT
//! plugin takes StableHLO. Both accept less than XLA: static shapes only, no f64, no
//! integer matmuls, 32-bit integers where indices and sizes are expected. The Neuron
//! pipeline ([`crate::pipeline`]) therefore never outlines
//! composites, and ends with the Neuron passes: `neuron-legalize` (64-bit integers and
//! floats narrowed inside the program), `neuron-auto-cast-*` (`--auto-cast`) and
//! `neuron-check` (every op against what Neuron's XLA frontend takes, one diagnostic
//! per offending node). [`hlo`] then writes the legalized program as HLO, and
//! the artifact records the `neuronx-cc` command that compiles it.

pub mod auto_cast;
pub mod check;
pub mod hlo;
pub mod legalize;

use tpuc_artifact::DType;

use super::{Feature, TargetSpec};
use crate::error::CompileError;
use crate::pipeline::PassSpec;

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

/// The file names of a Neuron artifact's HLO, and what `neuronx-cc` writes.
pub use tpuc_artifact::layout::{HLO_FILE, HLO_TEXT_FILE, NEFF_FILE};

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

/// The Neuron target as the driver sees it: no composites (Neuron's XLA frontend has
/// none), one device's program only, static shapes only, no TPU executables. State
/// (the decode step's cache, aliased in the HLO) and control flow (`if`/`while`,
/// checked op by op by `neuron-check`) are supported.
pub fn spec(chip: Chip) -> TargetSpec {
    TargetSpec {
        name: chip.name(),
        outlines_composites: false,
        runs_loops: false,
        unsupported: vec![
            (
                Feature::DynamicShapes,
                super::dynamic_unsupported("a Neuron target"),
            ),
            (
                Feature::Sharding,
                "--mesh/--shard are not supported with a Neuron target yet; compile for one \
                 NeuronCore and let neuronx-distributed shard it"
                    .into(),
            ),
            (
                Feature::DeviceExecutables,
                format!("--topology is for --target tpu, not `{}`", chip.name()),
            ),
        ],
    }
}

/// The Neuron passes, last before verification: legalization, `--auto-cast`, then the
/// check of every op against the chip's table.
pub fn pipeline_passes(chip: Chip, options: &NeuronOptions) -> Vec<PassSpec> {
    let mut passes = vec![PassSpec::new(if options.narrow_int64 {
        legalize::NAME
    } else {
        legalize::NAME_KEEP_INT64
    })];
    match options.auto_cast {
        AutoCast::None => {}
        AutoCast::Bf16 => passes.push(PassSpec::new(auto_cast::name(DType::Bf16))),
        AutoCast::Fp16 => passes.push(PassSpec::new(auto_cast::name(DType::F16))),
    }
    passes.push(PassSpec::new(check::NAME).with("chip", chip.name()));
    passes
}

/// A Neuron artifact's extra files: the legalized `@main` as XLA HLO (proto and text)
/// and what the manifest says of them. Takes `neuron-legalize`'s record off `module`.
/// The HLO module is named after the model's file and each parameter after the graph
/// inputs its argument holds (`origins`: `stablehlo-merge-dots`' record, when it packed
/// weights).
pub fn artifact_files(
    chip: Chip,
    options: &NeuronOptions,
    module: &melior::ir::Module<'_>,
    model: &crate::frontend::ExportedModel,
    origins: Option<&[Vec<usize>]>,
) -> Result<(crate::artifact::NeuronFiles, Vec<String>), CompileError> {
    let inputs = &model.graph.inputs;
    let names: Vec<String> = match origins {
        Some(o) => o
            .iter()
            .map(|sources| {
                sources
                    .iter()
                    .map(|&i| inputs[i].name.as_str())
                    .collect::<Vec<_>>()
                    .join("+")
            })
            .collect(),
        None => inputs.iter().map(|i| i.name.clone()).collect(),
    };
    let stem = model
        .source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let narrowed = legalize::take_narrowed(module);
    let f64_narrowed = narrowed.iter().any(|t| t == "f64");
    let mut warnings = Vec::new();
    if f64_narrowed {
        warnings.push(
            "f64 values are computed in f32 inside the program: Neuron devices have no f64 \
             (arguments and outputs keep f64, converted at the edges)"
                .to_string(),
        );
    }
    let proto = hlo::emit(module, &stem, &names)?;
    let unwritten = || tpuc_artifact::manifest::FileRef {
        file: String::new(),
        checksum: tpuc_artifact::manifest::Checksum::of(&[]),
    };
    let files = crate::artifact::NeuronFiles {
        hlo: prost::Message::encode_to_vec(&proto),
        text: hlo::text::print(&proto),
        program: tpuc_artifact::manifest::NeuronProgram {
            target: chip.name().to_string(),
            hlo: unwritten(),
            hlo_text: unwritten(),
            auto_cast: options.auto_cast.name().to_string(),
            int64_narrowed: options.narrow_int64,
            f64_narrowed,
            neuronx_cc: neuronx_cc_command(chip, is_transformer(&model.graph)),
        },
    };
    Ok((files, warnings))
}
