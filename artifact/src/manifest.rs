//! The artifact manifest: the contract between `tpuc compile` (which writes it) and
//! the runtime (which validates it before anything reaches PJRT).
//!
//! An artifact is a directory (every name is in [`crate::layout`]):
//!
//! ```text
//! model.tpuc/
//!   manifest.json        this struct, pretty-printed JSON
//!   program.mlir         StableHLO module (generic MLIR form), entry function @main
//!   weights.safetensors  parameters, buffers and constants, keyed by their graph-signature name
//! ```
//!
//! `@main` takes its arguments in manifest order (weights first, in the exported program's
//! input order, then user inputs) and returns the user outputs in order.

use crate::sharding::{Mesh, TensorSharding};
use crate::DType;
use serde::{Deserialize, Serialize};
use sha2::Digest;

fn highest() -> String {
    "highest".to_string()
}

/// Bumped whenever the layout of an artifact changes incompatibly. Version 2 records
/// BLAKE3 checksums; version 1 recorded SHA-256 ones and is still read.
pub const FORMAT_VERSION: u32 = 2;

/// The oldest artifact format this runtime still reads.
pub const OLDEST_FORMAT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format_version: u32,
    /// Version of tpuc that wrote the artifact.
    pub tpuc_version: String,
    /// Compilation target (`"tpu"` emits portable StableHLO usable by any PJRT plugin).
    pub target: String,
    /// StableHLO version the program is written against.
    pub stablehlo_version: String,
    /// Precision of the program's f32 matmuls and convolutions: `highest` (full f32,
    /// PyTorch's numbers), `high` or `default` (`tpuc compile --matmul-precision`).
    #[serde(default = "highest")]
    pub matmul_precision: String,
    /// The exported model the artifact was compiled from.
    pub source: FileRef,
    pub program: FileRef,
    pub weights: FileRef,
    /// Arguments of `@main`, in order.
    pub arguments: Vec<Argument>,
    /// Results of `@main`, in order.
    pub outputs: Vec<TensorSpec>,
    /// How the program is partitioned over a device mesh; absent for one device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitioning: Option<Partitioning>,
    /// TPU executables compiled ahead of time for named topologies
    /// (`tpuc compile --topology`), next to the portable program.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tpu_executables: Vec<TpuExecutable>,
    /// The Trainium form of the program (`tpuc compile --target trn2`): `program` is
    /// then the legalized StableHLO (for AWS's PJRT plugin) and this names the XLA
    /// `HloModuleProto` of the same program that `neuronx-cc` compiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neuron: Option<NeuronProgram>,
    /// A program exported with `dynamic_shapes`: its sizes, and the programs specialized
    /// for some of them. The user inputs' and outputs' shapes above then have `-1`
    /// where a dimension is symbolic, and `program` is the first specialization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic: Option<DynamicShapes>,
    /// `tpuc compile --debug-outputs`: the outputs that hold one graph value each (after
    /// the program's own outputs, before the state's), with the node that computed it,
    /// for `tpuc diverge`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub debug_values: Vec<DebugValue>,
    /// A training step (`tpuc compile --train`): its optimizer and which arguments are
    /// parameters, optimizer state and the step counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<crate::training::Training>,
    /// The exported graph's own FLOPs per call, whole program (its matrix products,
    /// convolutions, attention and grouped matmuls at the routed rows, by their
    /// definition: `tpuc_compiler::model_flops`), what `tpuc report` sets XLA's FLOPs
    /// against. Absent when the graph has none, or from an older tpuc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_flops: Option<f64>,
}

/// One value of the graph returned as an output by `tpuc compile --debug-outputs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DebugValue {
    /// Its index in [`Manifest::outputs`].
    pub output: usize,
    /// The value's name in the graph: the node's name, or the name torch.export gave
    /// one result of a multi-result node (`scripts/node_values.py` writes `<name>.npy`).
    pub name: String,
    /// The node that computed it and the node's operator (`aten.mul.Tensor`).
    pub node: String,
    pub op: String,
    /// The values the node read, by name (graph inputs or other nodes' values).
    pub inputs: Vec<String>,
}

/// The dynamic sizes of an artifact's program.
///
/// A call's sizes come from its inputs' shapes ([`crate::symbolic::bind`]): a
/// specialization compiled ahead of time is used when there is one for them; the full
/// `tpuc` (which links the compiler) specializes `source_program` for any other sizes
/// in range, and the runtime-only one asks for `tpuc compile --specialize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DynamicShapes {
    /// Every symbol with its range (torch.export's `range_constraints`).
    pub symbols: Vec<crate::symbolic::Symbol>,
    /// Dimensions of each user input, in argument order.
    pub inputs: Vec<Vec<crate::symbolic::Dim>>,
    /// Dimensions of each user output, in order.
    pub outputs: Vec<Vec<crate::symbolic::Dim>>,
    /// Programs compiled ahead of time, each for the sizes it names; the first is
    /// [`Manifest::program`].
    pub specializations: Vec<Specialization>,
    /// The exported program (its `model.json`, symbolic sizes and all).
    pub source_program: FileRef,
    /// What a specialization made on demand repeats of the compile: its optimization
    /// level (`O0`, `O1`, `O2`), and the graph inputs `stablehlo-merge-dots` packed into
    /// each argument of `@main` (absent when it packed none).
    pub opt_level: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origins: Option<Vec<Vec<usize>>>,
    /// The graph inputs whose weights the compile was allowed to pack.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packable: Vec<usize>,
}

/// A program of a dynamic artifact specialized for some sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Specialization {
    pub sizes: crate::symbolic::Bindings,
    pub program: FileRef,
}

/// A program legalized for AWS Neuron devices and written as XLA HLO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NeuronProgram {
    /// The Neuron device generation: `trn1`, `trn2`, `trn3` or `inf2`.
    pub target: String,
    /// The serialized `HloModuleProto` (`model.hlo.pb`): parameters in `arguments`
    /// order, results in `outputs` order (a tuple when there are several).
    pub hlo: FileRef,
    /// The same module as HLO text, for people.
    pub hlo_text: FileRef,
    /// The input type tpuc cast f32 matmul and convolution inputs to: `none`, `bf16`
    /// or `fp16` (`--auto-cast`); the command below then tells `neuronx-cc` to cast
    /// nothing more, so the device computes what the CPU check computed.
    pub auto_cast: String,
    /// Whether 64-bit integers inside the program were narrowed to 32 bits (the
    /// arguments and outputs keep their types, converted at the edges).
    pub int64_narrowed: bool,
    /// Whether f64 values inside the program are computed in f32 (the arguments and
    /// outputs keep f64, converted at the edges).
    #[serde(default)]
    pub f64_narrowed: bool,
    /// The `neuronx-cc` command line that compiles `hlo` for `target`, run in the
    /// artifact directory.
    pub neuronx_cc: Vec<String>,
}

impl NeuronProgram {
    /// The precision an output of type `output` was computed in, where it is coarser
    /// than `output`: f32 for an f64 output of a narrowed program, bf16 or f16 for a
    /// float output of an auto-cast one. Comparisons with PyTorch use its tolerances.
    pub fn computed_in(&self, output: DType) -> Option<DType> {
        if !output.is_float() {
            return None;
        }
        match self.auto_cast.as_str() {
            "bf16" => return Some(DType::Bf16),
            "fp16" => return Some(DType::F16),
            _ => {}
        }
        (self.f64_narrowed && output == DType::F64).then_some(DType::F32)
    }
}

/// A TPU executable of the artifact's program, compiled by libtpu for a topology with
/// no TPU attached, and XLA's figures for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpuExecutable {
    /// The topology as named to libtpu (`v5e:2x2`).
    pub topology: String,
    /// The libtpu build (`PJRT_TopologyDescription_PlatformVersion`); a TPU VM loads
    /// the executable only with the same build.
    pub libtpu_version: String,
    /// The StableHLO version of the program handed to that libtpu.
    pub stablehlo_version: String,
    /// `PJRT_Executable_Serialize`'s bytes.
    pub executable: FileRef,
    /// The program as libtpu optimized it (`PJRT_Executable_OptimizedProgram`, an XLA
    /// `HloModuleProto`): where `tpuc report --top` finds each operation's traffic and
    /// FLOPs. Absent from artifacts compiled before it was kept, or when libtpu gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimized_program: Option<FileRef>,
    pub report: TpuReport,
}

/// XLA's figures for one TPU executable, per device (`tpuc report`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TpuReport {
    /// Chips in the topology (the product of its grid).
    pub chips: usize,
    /// PJRT devices in the topology (a chip with several TensorCores exposed
    /// separately counts each); the figures below are per device.
    pub devices: usize,
    /// Devices the program runs on (its partitions; 1 for an unpartitioned program).
    pub partitions: u32,
    pub argument_bytes: i64,
    pub output_bytes: i64,
    /// Argument memory the outputs reuse.
    pub alias_bytes: i64,
    pub temp_bytes: i64,
    /// XLA's peak memory figure (arguments, outputs and temporaries live at once).
    pub peak_bytes: i64,
    pub generated_code_bytes: i64,
    pub flops: f64,
    pub transcendentals: f64,
    pub bytes_accessed: f64,
    /// One device's share of its chip's high-bandwidth memory, as tpuc assumes it for
    /// this generation (0: unknown).
    pub hbm_bytes_per_device: i64,
    /// Whether `peak_bytes` fits in `hbm_bytes_per_device`.
    pub fits: bool,
    /// Wall time of the TPU compile, seconds.
    pub compile_seconds: f64,
}

/// How the shardings are written in the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShardingFormat {
    /// `sdy.sharding` (in XLA's round-trip form); needs the Shardy partitioner.
    Shardy,
    /// `mhlo.sharding` strings; XLA's GSPMD partitioner.
    Gspmd,
}

/// An SPMD program over a device mesh: the mesh (global: every device of every host)
/// and the compile options the runtime must pass. Every argument and output of a
/// partitioned artifact has a sharding on this mesh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Partitioning {
    pub mesh: Mesh,
    pub format: ShardingFormat,
    /// `num_partitions` of the compile options: the mesh's device count.
    pub num_partitions: u32,
    pub use_spmd_partitioning: bool,
    /// Without it a Shardy program compiles and silently runs replicated.
    pub use_shardy_partitioner: bool,
}

impl Partitioning {
    /// The partitioning of `mesh` in `format`, with the compile options that go with it.
    pub fn new(mesh: Mesh, format: ShardingFormat) -> Partitioning {
        Partitioning {
            num_partitions: mesh.num_devices() as u32,
            use_spmd_partitioning: true,
            use_shardy_partitioner: format == ShardingFormat::Shardy,
            mesh,
            format,
        }
    }

    /// The compile options this partitioning records.
    pub fn compile_options(&self) -> crate::CompileOptions {
        crate::CompileOptions {
            num_partitions: self.num_partitions,
            use_spmd_partitioning: self.use_spmd_partitioning,
            use_shardy_partitioner: self.use_shardy_partitioner,
            device_assignment: Some(vec![self.mesh.device_ids.clone()]),
            ..crate::CompileOptions::default()
        }
    }
}

/// A file of the artifact (or its source) with the checksum of its bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileRef {
    pub file: String,
    /// Written as one field named by its algorithm: `"blake3": "<hex>"`.
    #[serde(flatten)]
    pub checksum: Checksum,
}

/// A checksum of a file's bytes, lowercase hex.
///
/// tpuc writes BLAKE3: weights files reach gigabytes, and on the machines measured
/// BLAKE3 hashes about 4.6 GB/s on one core against SHA-256's 1.8 GB/s (with the SHA
/// instructions), which made the checksum the slowest part of both writing and loading
/// an artifact. SHA-256 is read for artifacts of format version 1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Checksum {
    Blake3(String),
    Sha256(String),
}

impl Checksum {
    /// The checksum tpuc writes, of `bytes`.
    pub fn of(bytes: &[u8]) -> Checksum {
        Checksum::Blake3(blake3::hash(bytes).to_hex().to_string())
    }

    /// The checksum of `bytes` with the same algorithm as `self`.
    pub fn same_kind_of(&self, bytes: &[u8]) -> Checksum {
        match self {
            Checksum::Blake3(_) => Checksum::of(bytes),
            Checksum::Sha256(_) => Checksum::Sha256(
                sha2::Sha256::digest(bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect(),
            ),
        }
    }

    /// Whether `bytes` have this checksum.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.same_kind_of(bytes)
            .hex()
            .eq_ignore_ascii_case(self.hex().trim())
    }

    pub fn algorithm(&self) -> &'static str {
        match self {
            Checksum::Blake3(_) => "blake3",
            Checksum::Sha256(_) => "sha256",
        }
    }

    pub fn hex(&self) -> &str {
        match self {
            Checksum::Blake3(h) | Checksum::Sha256(h) => h,
        }
    }
}

/// What feeds an argument of `@main`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentKind {
    /// A trained parameter, stored in `weights.safetensors`.
    Parameter,
    /// A buffer (running statistics, position ids...), stored in `weights.safetensors`.
    Buffer,
    /// A lifted tensor constant, stored in `weights.safetensors`.
    Constant,
    /// A training step's optimizer state or step counter: starts at zero, not stored.
    OptimizerState,
    /// An input the caller passes at run time.
    UserInput,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Argument {
    /// Name in the exported graph (`p_fc1_weight`, `x`).
    pub name: String,
    pub kind: ArgumentKind,
    pub dtype: DType,
    pub shape: Vec<i64>,
    /// For weights: the key in `weights.safetensors` (the state-dict name, `fc1.weight`).
    /// For a weight compiled as a user input (`--weights-as-inputs`): the state-dict
    /// name of the tensor the caller passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<String>,
    /// True when the weight was not present in the source (a bare `model.json` was compiled)
    /// and was written as zeros.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zero_filled: bool,
    /// For a weight the compiler packed: the state-dict names of the weights it holds,
    /// concatenated along dimension 0 in this order (`stablehlo-merge-dots`: one matmul
    /// where the model had one per weight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed: Option<Vec<String>>,
    /// Its sharding on the mesh of [`Manifest::partitioning`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharding: Option<TensorSharding>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TensorSpec {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<i64>,
    /// Its sharding on the mesh of [`Manifest::partitioning`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sharding: Option<TensorSharding>,
    /// For an output: the argument (a buffer) this output is the next value of. Such
    /// outputs follow the user outputs; the runtime keeps them on the device and passes
    /// them as that argument on the next call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates: Option<String>,
}
