//! What a compile is asked to do ([`CompileOptions`] and the requests inside it) and
//! what it reports back ([`CompileReport`], [`Progress`], [`StageTime`]).

use std::path::{Path, PathBuf};

use crate::targets::{neuron, Target};
use crate::{passes, sharding};

/// How weights missing from the source (a bare `model.json`) are handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingWeights {
    /// Write zeros and mark them `zero_filled` in the manifest.
    #[default]
    ZeroFill,
    /// Turn them into user inputs of the artifact.
    AsInputs,
}

/// A stage of a compile, reported to [`CompileOptions::progress`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Reading the model (archive index, graph JSON, weight metadata).
    Loading,
    /// Import and the pass pipeline.
    Lowering,
    /// Weights written so far, of the total, in bytes.
    Weights {
        done: u64,
        total: u64,
    },
    Done,
}

/// Receives progress events; the CLI draws them on a terminal.
pub type ProgressFn = std::sync::Arc<dyn Fn(Progress) + Send + Sync>;

/// Receives `(pass name, module text)` after each pass named in
/// [`CompileOptions::print_ir_after`] (`tpuc compile --print-ir-after=PASS`).
pub type IrFn = std::sync::Arc<dyn Fn(&str, &str) + Send + Sync>;

/// Wall time of one stage of a compile (`read`, `import`, each pass by name, `print`,
/// `write`), in the order they ran (`tpuc compile --timing`).
#[derive(Debug, Clone, PartialEq)]
pub struct StageTime {
    pub stage: String,
    pub seconds: f64,
}

#[derive(Clone, Default)]
pub struct CompileOptions {
    pub target: Target,
    /// How a Neuron target legalizes the program (`--auto-cast`, `--keep-int64`);
    /// ignored by other targets.
    pub neuron: neuron::NeuronOptions,
    pub missing_weights: MissingWeights,
    /// Called as the compile advances (weights: after each written chunk).
    pub progress: Option<ProgressFn>,
    /// Lowerings for targets tpuc does not know (custom operators), tried first.
    pub custom_lowerings: Vec<passes::lower_aten_to_stablehlo::CustomLowering>,
    /// Which passes run after lowering (`-O0`, `-O1`, `-O2`; default `-O2`).
    pub opt_level: passes::OptLevel,
    /// Precision of f32 matmuls and convolutions (default `highest`: PyTorch's
    /// numbers); recorded in the manifest.
    pub matmul_precision: passes::MatmulPrecision,
    /// Passes after which [`CompileOptions::on_ir`] gets the module (`all`: every pass).
    pub print_ir_after: Vec<String>,
    pub on_ir: Option<IrFn>,
    /// Partition the program over a device mesh (`tpuc compile --mesh --shard`).
    pub sharding: Option<ShardingRequest>,
    /// Called with the artifact's temporary directory (program and weights written),
    /// its manifest and the program with node locations, before the manifest is
    /// written and the directory moved into place: `tpuc compile --topology` compiles
    /// TPU executables here. An error leaves no artifact (and any previous one as it
    /// was).
    pub finish: Option<FinishFn>,
    /// Of a program exported with `dynamic_shapes`: the sizes to specialize it for
    /// ahead of time, besides the example inputs' (`tpuc compile --specialize`).
    pub specialize: Vec<tpuc_artifact::symbolic::Bindings>,
    /// Also return every value the graph computes, named by its node
    /// (`tpuc compile --debug-outputs`; `tpuc diverge` compares them with PyTorch's).
    pub debug_outputs: bool,
    /// `--train`: compile a joint forward + backward program with its optimizer into
    /// one training step.
    pub training: Option<crate::training::TrainOptions>,
    /// Set by the caller to stop the compile (Ctrl-C in the Python package): the
    /// compile ends at the next stage boundary (see
    /// [`CompileOptions::check_cancelled`]) with [`crate::CompileError::Interrupted`],
    /// and the artifact is never moved into place.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// See [`CompileOptions::finish`]: called with the artifact's temporary directory, its
/// manifest and the program with node locations ([`program_with_node_locations`]).
pub type FinishFn = std::sync::Arc<
    dyn Fn(&Path, &mut tpuc_artifact::manifest::Manifest, &str) -> Result<(), String> + Send + Sync,
>;

/// A device mesh, the strategies that shard the program over it, and the form the
/// shardings are written in.
#[derive(Debug, Clone)]
pub struct ShardingRequest {
    pub mesh: tpuc_artifact::sharding::Mesh,
    pub presets: Vec<ShardPreset>,
    /// `--sharding-rules`: weight name patterns and their shardings, applied after
    /// the presets (see [`sharding::parse_rules`]).
    pub rules: Vec<sharding::Rule>,
    pub format: tpuc_artifact::manifest::ShardingFormat,
}

/// How a caller spells the option `flag` (written as the CLI's flag, `weight-decay`):
/// `--weight-decay` with prefix `--`, else the prefix and a keyword (`weight_decay`, as
/// the Python package takes it). For messages of checks the CLI and the package share.
pub fn option_name(prefix: &str, flag: &str) -> String {
    if prefix == "--" {
        format!("--{flag}")
    } else {
        format!("{prefix}{}", flag.replace('-', "_"))
    }
}

/// The sharding options as `tpuc compile`'s flags or the Python package's keywords give
/// them, before they are checked together ([`ShardingSettings::resolve`]).
#[derive(Debug, Clone, Default)]
pub struct ShardingSettings {
    pub mesh: Option<String>,
    pub shard: Vec<String>,
    /// A rules file (`tpuc plan --write-rules` writes them); it may name the mesh and
    /// strategies itself.
    pub sharding_rules: Option<PathBuf>,
    /// `shardy` (the default) or `gspmd`.
    pub sharding_format: Option<String>,
}

impl ShardingSettings {
    /// The request these settings make (None: no sharding). `prefix` is how the caller
    /// spells its options in messages (see [`option_name`]).
    pub fn resolve(&self, prefix: &str) -> Result<Option<ShardingRequest>, String> {
        use tpuc_artifact::manifest::ShardingFormat;
        let name = |flag: &str| option_name(prefix, flag);
        let example = if prefix == "--" {
            "`--mesh dp=2 --shard data-parallel`"
        } else {
            "`mesh=\"dp=2\", shard=\"data-parallel\"`"
        };
        let file = match &self.sharding_rules {
            None => sharding::RulesFile::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    format!(
                        "{}: cannot read `{}`: {e}",
                        name("sharding-rules"),
                        path.display()
                    )
                })?;
                sharding::parse_rules(&text, &path.display().to_string())
                    .map_err(|e| e.to_string())?
            }
        };
        let given_mesh = match &self.mesh {
            Some(m) => Some(
                tpuc_artifact::sharding::Mesh::parse(m)
                    .map_err(|e| format!("{}: {e}", name("mesh")))?,
            ),
            None => None,
        };
        let mesh = match (given_mesh, file.mesh) {
            (Some(given), Some(from_file)) if given != from_file => {
                return Err(format!(
                    "{} {given} differs from the mesh `{from_file}` of the {} file; give one",
                    name("mesh"),
                    name("sharding-rules")
                ))
            }
            (Some(m), _) | (None, Some(m)) => m,
            (None, None) => {
                if !self.shard.is_empty() || self.sharding_rules.is_some() {
                    return Err(format!(
                        "{} and {} need {} (for example {example})",
                        name("shard"),
                        name("sharding-rules"),
                        name("mesh")
                    ));
                }
                return Ok(None);
            }
        };
        if self.shard.is_empty() && self.sharding_rules.is_none() {
            return Err(format!(
                "{} needs {} or {} (for example {example})",
                name("mesh"),
                name("shard"),
                name("sharding-rules")
            ));
        }
        let mut presets = self
            .shard
            .iter()
            .map(|s| ShardPreset::parse(s.trim()).map_err(|e| format!("{}: {e}", name("shard"))))
            .collect::<Result<Vec<_>, _>>()?;
        for p in file.presets {
            if !presets.contains(&p) {
                presets.push(p);
            }
        }
        let format = match self.sharding_format.as_deref() {
            None | Some("shardy") => ShardingFormat::Shardy,
            Some("gspmd") => ShardingFormat::Gspmd,
            Some(other) => {
                return Err(format!(
                    "{}: `{other}` is not shardy or gspmd",
                    name("sharding-format")
                ))
            }
        };
        Ok(Some(ShardingRequest {
            mesh,
            presets,
            rules: file.rules,
            format,
        }))
    }
}

/// A sharding strategy of `--shard`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardPreset {
    /// The batch (first) dimension of every user input on the mesh axis `dp`.
    DataParallel,
    /// Every parameter split on the mesh axis `fsdp` (its first dimension that the axis
    /// divides; a parameter with none stays whole), gathered by XLA where it is used.
    Fsdp,
    /// Tensor parallelism on the mesh axis `tp`: Linear pairs column- then
    /// row-parallel, embeddings vocabulary-parallel (decided in the program by
    /// `stablehlo-propagate-sharding`).
    Megatron,
    /// Expert parallelism on the mesh axis `ep`: the expert dimension (the first) of a
    /// mixture-of-experts layer's fused expert weights (`*.experts.gate_up_proj`,
    /// `*.experts.down_proj`, their biases) split, so each device holds its experts.
    Expert,
}

impl ShardPreset {
    /// `data-parallel`, `fsdp`, `megatron`, `expert`.
    pub fn parse(s: &str) -> Result<ShardPreset, String> {
        match s {
            "data-parallel" => Ok(ShardPreset::DataParallel),
            "fsdp" => Ok(ShardPreset::Fsdp),
            "megatron" => Ok(ShardPreset::Megatron),
            "expert" => Ok(ShardPreset::Expert),
            other => Err(format!(
                "unknown sharding strategy `{other}` (known: data-parallel, fsdp, megatron, expert)"
            )),
        }
    }
}

impl CompileOptions {
    pub(crate) fn report(&self, p: Progress) {
        if let Some(f) = &self.progress {
            f(p);
        }
    }

    /// [`CompileError::Interrupted`] once [`CompileOptions::cancel`] is set: checked
    /// between stages (after reading, after each pass, before a target's own compile),
    /// so that a cancelled compile stops at the next one.
    pub fn check_cancelled(&self) -> Result<(), crate::CompileError> {
        match &self.cancel {
            Some(c) if c.load(std::sync::atomic::Ordering::SeqCst) => {
                Err(crate::CompileError::Interrupted)
            }
            _ => Ok(()),
        }
    }
}

/// Every option; the callbacks (progress, IR printing, the finish step) by whether
/// they are set, custom lowerings by their targets.
impl std::fmt::Debug for CompileOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let CompileOptions {
            target,
            neuron,
            missing_weights,
            progress,
            custom_lowerings,
            opt_level,
            matmul_precision,
            print_ir_after,
            on_ir,
            sharding,
            finish,
            specialize,
            debug_outputs,
            training,
            cancel,
        } = self;
        f.debug_struct("CompileOptions")
            .field("target", target)
            .field("neuron", neuron)
            .field("missing_weights", missing_weights)
            .field("opt_level", opt_level)
            .field("matmul_precision", matmul_precision)
            .field("sharding", sharding)
            .field("specialize", specialize)
            .field("debug_outputs", debug_outputs)
            .field("training", training)
            .field("cancel", &cancel.is_some())
            .field("custom_lowerings", custom_lowerings)
            .field("print_ir_after", print_ir_after)
            .field("progress", &progress.is_some())
            .field("on_ir", &on_ir.is_some())
            .field("finish", &finish.is_some())
            .finish()
    }
}

/// What a successful compile produced.
#[derive(Debug, Clone)]
pub struct CompileReport {
    pub output: PathBuf,
    pub num_nodes: usize,
    pub num_weights: usize,
    pub weight_bytes: u64,
    /// Weights written as zeros because the source had none.
    pub zero_filled: usize,
    /// Wall time of every stage, in order.
    pub timings: Vec<StageTime>,
    /// What the user should know about the result (a Neuron target's f64 narrowing).
    pub warnings: Vec<String>,
    /// Of a dynamic program: its sizes and the specializations compiled, in words.
    pub dynamic: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Debug` used to show four fields: a log of the options a compile ran with hid the
    /// optimization level, precision, sharding and sizes.
    #[test]
    fn debug_shows_every_option() {
        let options = CompileOptions {
            opt_level: passes::OptLevel::O1,
            matmul_precision: passes::MatmulPrecision::High,
            print_ir_after: vec!["stablehlo-dce".into()],
            sharding: Some(ShardingRequest {
                mesh: tpuc_runtime::sharding::Mesh::parse("dp=2").unwrap(),
                presets: vec![ShardPreset::DataParallel],
                rules: Vec::new(),
                format: tpuc_runtime::manifest::ShardingFormat::Gspmd,
            }),
            specialize: vec![[("s77".to_string(), 8)].into_iter().collect()],
            ..CompileOptions::default()
        };
        let text = format!("{options:?}");
        for needle in [
            "opt_level: O1",
            "matmul_precision: High",
            "neuron: NeuronOptions",
            "DataParallel",
            "Gspmd",
            "s77",
            "stablehlo-dce",
            "finish: false",
            "on_ir: false",
        ] {
            assert!(text.contains(needle), "`{needle}` missing from {text}");
        }
    }
}
