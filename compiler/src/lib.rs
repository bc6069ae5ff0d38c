//! tpuc compiler: torch.export programs to StableHLO, ahead of time.
//!
//! The flow: [`frontend::load`] reads a `.pt2` archive (or bare `model.json`),
//! [`import::import_graph`] builds an ATen-level MLIR module, the passes of
//! [`passes::pipeline_for`] (`-O0`..`-O2`) lower it to StableHLO, clean it up and
//! verify it, and [`artifact::write`] produces the artifact (manifest, program, weights).
//!
//! ```no_run
//! use std::path::Path;
//! let options = tpuc_compiler::CompileOptions::default();
//! let report = tpuc_compiler::compile(Path::new("model.pt2"), Path::new("model.tpuc"), &options)?;
//! println!("{} ops lowered", report.num_nodes);
//! # Ok::<(), tpuc_compiler::CompileError>(())
//! ```

pub mod artifact;
pub mod dynamic;
pub mod frontend;
pub mod hlo;
pub mod import;
pub mod neuron;
pub mod passes;
pub mod printer;
pub mod sharding;

use std::path::{Path, PathBuf};

use melior::ir::Module;
use melior::Context;

pub use frontend::FrontendError;

/// The StableHLO version tpuc's output is written against (portable across PJRT
/// plugins that report at least this version).
pub const STABLEHLO_VERSION: &str = "1.0.0";

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

/// Compilation targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// Portable StableHLO, for TPUs and any PJRT plugin.
    #[default]
    Tpu,
    /// AWS Trainium / Inferentia: the program legalized for Neuron, as StableHLO and
    /// as the XLA HLO `neuronx-cc` compiles (see [`neuron`]).
    Neuron(neuron::Chip),
}

impl Target {
    pub fn name(self) -> &'static str {
        match self {
            Target::Tpu => "tpu",
            Target::Neuron(chip) => chip.name(),
        }
    }

    pub fn parse(s: &str) -> Result<Target, CompileError> {
        match s {
            "tpu" | "stablehlo" | "pjrt" => Ok(Target::Tpu),
            other => neuron::Chip::parse(other)
                .map(Target::Neuron)
                .ok_or_else(|| CompileError::UnknownTarget(other.to_string())),
        }
    }

    /// The Neuron chip of a Neuron target.
    pub fn neuron_chip(self) -> Option<neuron::Chip> {
        match self {
            Target::Neuron(chip) => Some(chip),
            Target::Tpu => None,
        }
    }
}

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

/// Times stages as they end.
#[derive(Default)]
struct Stopwatch {
    times: Vec<StageTime>,
    last: Option<std::time::Instant>,
}

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch {
            times: Vec::new(),
            last: Some(std::time::Instant::now()),
        }
    }
    /// Ends the stage that began at the previous call.
    fn lap(&mut self, stage: &str) {
        let now = std::time::Instant::now();
        let seconds = self.last.map_or(0.0, |t| (now - t).as_secs_f64());
        self.times.push(StageTime {
            stage: stage.to_string(),
            seconds,
        });
        self.last = Some(now);
    }
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
    pub specialize: Vec<tpuc_runtime::symbolic::Bindings>,
}

/// See [`CompileOptions::finish`]: called with the artifact's temporary directory, its
/// manifest and the program with node locations ([`program_with_node_locations`]).
pub type FinishFn = std::sync::Arc<
    dyn Fn(&Path, &mut tpuc_runtime::manifest::Manifest, &str) -> Result<(), String> + Send + Sync,
>;

/// A device mesh, the strategies that shard the program over it, and the form the
/// shardings are written in.
#[derive(Debug, Clone)]
pub struct ShardingRequest {
    pub mesh: tpuc_runtime::sharding::Mesh,
    pub presets: Vec<ShardPreset>,
    /// `--sharding-rules`: weight name patterns and their shardings, applied after
    /// the presets (see [`sharding::parse_rules`]).
    pub rules: Vec<sharding::Rule>,
    pub format: tpuc_runtime::manifest::ShardingFormat,
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
}

impl ShardPreset {
    /// `data-parallel`, `fsdp`, `megatron`.
    pub fn parse(s: &str) -> Result<ShardPreset, String> {
        match s {
            "data-parallel" => Ok(ShardPreset::DataParallel),
            "fsdp" => Ok(ShardPreset::Fsdp),
            "megatron" => Ok(ShardPreset::Megatron),
            other => Err(format!(
                "unknown --shard strategy `{other}` (known: data-parallel, fsdp, megatron)"
            )),
        }
    }
}

impl CompileOptions {
    fn report(&self, p: Progress) {
        if let Some(f) = &self.progress {
            f(p);
        }
    }
}

impl std::fmt::Debug for CompileOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompileOptions")
            .field("target", &self.target)
            .field("missing_weights", &self.missing_weights)
            .field("progress", &self.progress.is_some())
            .field("custom_lowerings", &self.custom_lowerings)
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

/// Creates the MLIR context tpuc uses.
pub fn new_context() -> Context {
    tpuc_dialects::new_context()
}

/// Prints a module in generic form (what PJRT plugins parse without our dialects).
pub fn print_module(module: &Module<'_>) -> Result<String, CompileError> {
    print_generic(module, false)
}

/// The program text of a compile: [`print_module`]'s text, written by [`printer`]
/// when the module is within what it handles (everything the pipeline builds).
pub fn print_program(module: &Module<'_>) -> Result<String, CompileError> {
    match printer::print(module) {
        Some(text) => Ok(text),
        None => print_module(module),
    }
}

/// Prints with locations (node names), for `--emit mlir --debug-locations` and lit tests.
pub fn print_module_with_locations(module: &Module<'_>) -> Result<String, CompileError> {
    print_generic(module, true)
}

/// The program with each op located at its graph node, for a target compiler's
/// diagnostics: `loc("addmm"("model.py":12:0))` where the export kept the node's source
/// line, else `loc("addmm"("<model file>":N:0))` with `N` the node's position in the
/// graph (1-based; 0 for inputs). libtpu reports a rejected op by such a location
/// ("Suspected Python Code Location: model.pt2:5 [addmm]"). Rewrites `module`'s
/// locations: print the artifact's program first.
pub fn program_with_node_locations(
    module: &Module<'_>,
    model: &frontend::ExportedModel,
) -> Result<String, CompileError> {
    let file = model
        .source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let positions: std::collections::HashMap<&str, u32> = model
        .graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32 + 1))
        .collect();
    let mut state = (file, positions);
    unsafe extern "C" fn relocate(
        op: mlir_sys::MlirOperation,
        data: *mut std::ffi::c_void,
    ) -> mlir_sys::MlirWalkResult {
        // SAFETY: `data` is the `state` tuple lent for the walk; `op` is live, and its
        // location's parts are read only after the kind tests.
        unsafe {
            let (file, positions) =
                &*(data as *const (String, std::collections::HashMap<&str, u32>));
            let loc = mlir_sys::mlirOperationGetLocation(op);
            if mlir_sys::mlirLocationIsAName(loc) {
                let ctx = mlir_sys::mlirLocationGetContext(loc);
                let child = mlir_sys::mlirLocationNameGetChildLoc(loc);
                if mlir_sys::mlirLocationEqual(child, mlir_sys::mlirLocationUnknownGet(ctx)) {
                    let name = mlir_sys::mlirIdentifierStr(mlir_sys::mlirLocationNameGetName(loc));
                    let text = std::str::from_utf8(std::slice::from_raw_parts(
                        name.data as *const u8,
                        name.length,
                    ))
                    .unwrap_or("");
                    let line = positions.get(text).copied().unwrap_or(0);
                    let file_ref = mlir_sys::MlirStringRef {
                        data: file.as_ptr() as *const std::os::raw::c_char,
                        length: file.len(),
                    };
                    let child = mlir_sys::mlirLocationFileLineColGet(ctx, file_ref, line, 0);
                    let new = mlir_sys::mlirLocationNameGet(ctx, name, child);
                    mlir_sys::mlirOperationSetLocation(op, new);
                }
            }
        }
        mlir_sys::MlirWalkResult_MlirWalkResultAdvance
    }
    // SAFETY: the walk visits the module's own ops; the callback only replaces each
    // op's location, and `state` outlives the walk.
    unsafe {
        mlir_sys::mlirOperationWalk(
            module.as_operation().to_raw(),
            Some(relocate),
            &mut state as *mut _ as *mut std::ffi::c_void,
            mlir_sys::MlirWalkOrder_MlirWalkPreOrder,
        );
    }
    print_module_with_locations(module)
}

/// Appends each piece MLIR prints to the `Vec<u8>` behind `data`.
unsafe extern "C" fn append_bytes(piece: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the `Vec<u8>` `print_generic` lends for the call; the piece is
    // valid for `length` bytes during the callback.
    unsafe {
        let out = &mut *(data as *mut Vec<u8>);
        out.extend_from_slice(std::slice::from_raw_parts(
            piece.data as *const u8,
            piece.length,
        ));
    }
}

/// The generic form of `module`, printed through the C API into one buffer. The
/// printer is told the module is verified: that only decides whether MLIR falls back
/// from custom to generic form, and the generic form is asked for anyway (the
/// `verify-stablehlo` pass is where modules are verified).
fn print_generic(module: &Module<'_>, debug_info: bool) -> Result<String, CompileError> {
    let mut out: Vec<u8> = Vec::new();
    // SAFETY: the flags are created and destroyed here; the callback only appends to
    // `out`, which outlives the call.
    unsafe {
        let flags = mlir_sys::mlirOpPrintingFlagsCreate();
        mlir_sys::mlirOpPrintingFlagsPrintGenericOpForm(flags);
        mlir_sys::mlirOpPrintingFlagsAssumeVerified(flags);
        if debug_info {
            mlir_sys::mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
        }
        mlir_sys::mlirOperationPrintWithFlags(
            module.as_operation().to_raw(),
            flags,
            Some(append_bytes),
            &mut out as *mut Vec<u8> as *mut std::ffi::c_void,
        );
        mlir_sys::mlirOpPrintingFlagsDestroy(flags);
    }
    String::from_utf8(out).map_err(|e| CompileError::Internal(format!("printing the module: {e}")))
}

/// Frontend + import + default pipeline: the StableHLO module for `model`.
pub fn lower_to_stablehlo<'c>(
    ctx: &'c Context,
    model: &frontend::ExportedModel,
) -> Result<Module<'c>, CompileError> {
    lower_to_stablehlo_with(ctx, model, &CompileOptions::default())
}

/// [`lower_to_stablehlo`] with `options`' optimization level, user lowerings for custom
/// operators (see [`CompileOptions::custom_lowerings`]) and IR printing.
pub fn lower_to_stablehlo_with<'c>(
    ctx: &'c Context,
    model: &frontend::ExportedModel,
    options: &CompileOptions,
) -> Result<Module<'c>, CompileError> {
    lower_timed(ctx, model, options, &mut Stopwatch::start())
}

/// The shardings of `@main`'s arguments and results, when the compile was sharded.
type ProgramShardings = (
    Vec<tpuc_runtime::sharding::TensorSharding>,
    Vec<tpuc_runtime::sharding::TensorSharding>,
);

fn lower_timed<'c>(
    ctx: &'c Context,
    model: &frontend::ExportedModel,
    options: &CompileOptions,
    watch: &mut Stopwatch,
) -> Result<Module<'c>, CompileError> {
    lower_sharded(ctx, model, options, &[], watch).map(|(m, _)| m)
}

/// The pipeline, then (with [`CompileOptions::sharding`]) the seeds of the presets and
/// `stablehlo-propagate-sharding`, whose decisions are taken off the module. The
/// arguments at `packable` are weights `stablehlo-merge-dots` may pack.
fn lower_sharded<'c>(
    ctx: &'c Context,
    model: &frontend::ExportedModel,
    options: &CompileOptions,
    packable: &[usize],
    watch: &mut Stopwatch,
) -> Result<(Module<'c>, Option<ProgramShardings>), CompileError> {
    let mut module = import::import_graph(ctx, &model.graph)?;
    watch.lap("import");
    let neuron = options.target.neuron_chip().map(|_| options.neuron);
    let pipeline = passes::pipeline_for_target(
        options.opt_level,
        options.matmul_precision,
        &options.custom_lowerings,
        neuron.as_ref(),
    );
    for pass in pipeline {
        // Marked right before the pass: the lowering rebuilds `@main` without it.
        if pass.name() == passes::merge_dots::NAME && !packable.is_empty() {
            passes::merge_dots::mark_packable(&module, packable)?;
        }
        module = pass.run(ctx, module)?;
        watch.lap(pass.name());
        let wanted = options
            .print_ir_after
            .iter()
            .any(|p| p == pass.name() || p == "all");
        if let (true, Some(on_ir)) = (wanted, &options.on_ir) {
            on_ir(pass.name(), &print_module_with_locations(&module)?);
        }
    }
    let Some(request) = &options.sharding else {
        return Ok((module, None));
    };
    let seeds = sharding::seeds(&model.graph, request)?;
    let megatron = sharding::megatron_weights(&model.graph, request)?;
    passes::propagate_sharding::seed(
        &module,
        &request.mesh,
        request.format,
        &seeds,
        megatron
            .as_ref()
            .map(|(axis, w)| (axis.as_str(), w.as_slice())),
    )?;
    let pass = passes::propagate_sharding::PropagateSharding;
    let module = passes::Pass::run(&pass, ctx, module)?;
    watch.lap(passes::Pass::name(&pass));
    let shardings = passes::propagate_sharding::take_shardings(&module)?;
    Ok((module, Some(shardings)))
}

/// Compiles the exported program at `input` into an artifact directory at `output`.
pub fn compile(
    input: &Path,
    output: &Path,
    options: &CompileOptions,
) -> Result<CompileReport, CompileError> {
    artifact::check_output_path(input, output)?;
    let mut watch = Stopwatch::start();
    options.report(Progress::Loading);
    let model = frontend::load(input)?;
    watch.lap("read");
    if model.dynamic.is_some() {
        return dynamic::compile(model, output, options, watch);
    }
    if !options.specialize.is_empty() {
        return Err(CompileError::Dynamic(
            "--specialize: the program has no dynamic sizes (it was exported without dynamic_shapes)".into(),
        ));
    }
    options.report(Progress::Lowering);
    let ctx = new_context();
    let packable = packable_weights(&model, options);
    if options.target.neuron_chip().is_some() {
        neuron::check_unsharded(options.sharding.is_some())?;
    }
    let state = import::state_updates(&model.graph);
    if options.sharding.is_some() && !state.is_empty() {
        return Err(CompileError::Sharding(format!(
            "the program keeps state between calls (buffers {}), and stateful programs \
             cannot be partitioned yet; compile without --mesh/--shard",
            state
                .iter()
                .map(|u| format!("`{}`", u.input))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let (module, shardings) = lower_sharded(&ctx, &model, options, &packable, &mut watch)?;
    let origins = passes::merge_dots::take_arg_origins(&module);
    mark_state_aliases(&module, &model.graph, &state, origins.as_deref())?;
    let narrowed = passes::neuron_legalize::take_narrowed(&module);
    let mut warnings = Vec::new();
    if narrowed.iter().any(|t| t == "f64") {
        warnings.push(
            "f64 values are computed in f32 inside the program: Neuron devices have no f64 \
             (arguments and outputs keep f64, converted at the edges)"
                .to_string(),
        );
    }
    let neuron_files = match options.target.neuron_chip() {
        Some(chip) => {
            let names: Vec<String> = match &origins {
                Some(o) => o
                    .iter()
                    .map(|sources| {
                        sources
                            .iter()
                            .map(|&i| model.graph.inputs[i].name.as_str())
                            .collect::<Vec<_>>()
                            .join("+")
                    })
                    .collect(),
                None => model.graph.inputs.iter().map(|i| i.name.clone()).collect(),
            };
            let stem = input
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "model".into());
            let hlo = hlo::emit(&module, &stem, &names)?;
            watch.lap("hlo");
            Some(artifact::NeuronFiles {
                hlo: prost::Message::encode_to_vec(&hlo),
                text: hlo::text::print(&hlo),
                program: tpuc_runtime::manifest::NeuronProgram {
                    target: chip.name().to_string(),
                    hlo: tpuc_runtime::manifest::FileRef {
                        file: String::new(),
                        checksum: tpuc_runtime::manifest::Checksum::of(&[]),
                    },
                    hlo_text: tpuc_runtime::manifest::FileRef {
                        file: String::new(),
                        checksum: tpuc_runtime::manifest::Checksum::of(&[]),
                    },
                    auto_cast: options.neuron.auto_cast.name().to_string(),
                    int64_narrowed: options.neuron.narrow_int64,
                    f64_narrowed: narrowed.iter().any(|t| t == "f64"),
                    neuronx_cc: neuron::neuronx_cc_command(
                        chip,
                        neuron::is_transformer(&model.graph),
                    ),
                },
            })
        }
        None => None,
    };
    let program = print_program(&module)?;
    // A target's own compiler (libtpu) gets the same program with node locations, so
    // that what it rejects is reported at a graph node.
    let located = match options.finish {
        Some(_) => Some(program_with_node_locations(&module, &model)?),
        None => None,
    };
    watch.lap("print");
    let partitioned = match (&options.sharding, shardings) {
        (Some(request), Some((args, results))) => Some(artifact::Partitioned {
            partitioning: tpuc_runtime::manifest::Partitioning::new(
                request.mesh.clone(),
                request.format,
            ),
            arguments: args,
            outputs: results,
        }),
        _ => None,
    };
    let mut report = artifact::write(
        &model,
        artifact::Program {
            text: &program,
            located: located.as_deref(),
            origins: origins.as_deref(),
            partitioned,
            neuron: neuron_files,
        },
        output,
        options,
    )?;
    watch.lap("write");
    options.report(Progress::Done);
    report.timings = watch.times;
    report.warnings = warnings;
    Ok(report)
}

/// Tells XLA that each state buffer's next value may be written into the buffer
/// itself: `tf.aliasing_output` on the state arguments of `@main` (the runtime donates
/// the buffers it holds). `origins` maps program arguments to graph inputs where
/// `stablehlo-merge-dots` changed the signature.
fn mark_state_aliases(
    module: &melior::ir::Module<'_>,
    graph: &frontend::Graph,
    state: &[import::StateUpdate],
    origins: Option<&[Vec<usize>]>,
) -> Result<(), CompileError> {
    if state.is_empty() {
        return Ok(());
    }
    let block = passes::ir::main_block(module)
        .ok_or_else(|| CompileError::Internal("the program has no @main".into()))?;
    let num_args = passes::ir::block_arguments(block).len();
    let mut attrs = vec!["{}".to_string(); num_args];
    for (k, update) in state.iter().enumerate() {
        let input = graph
            .inputs
            .iter()
            .position(|s| s.name == update.input)
            .ok_or_else(|| {
                CompileError::Internal(format!("state `{}` is no input", update.input))
            })?;
        let arg = match origins {
            Some(o) => o.iter().position(|sources| sources == &[input]),
            None => Some(input),
        }
        .filter(|&a| a < num_args)
        .ok_or_else(|| {
            CompileError::Internal(format!(
                "state `{}` is not an argument of @main",
                update.input
            ))
        })?;
        attrs[arg] = format!("{{tf.aliasing_output = {} : i32}}", graph.outputs.len() + k);
    }
    let func = passes::ir::block_parent(block);
    if !passes::ir::set_attribute(func, "arg_attrs", &format!("[{}]", attrs.join(", "))) {
        return Err(CompileError::Internal(
            "cannot mark the state arguments".into(),
        ));
    }
    Ok(())
}

/// The `@main` arguments whose weights an artifact may store packed for
/// `stablehlo-merge-dots`: at `-O2`, in an unsharded compile of a model with its
/// weights, the parameters that share their storage with no other argument. (Packing
/// changes the program's signature, so the StableHLO-only outputs never do it, and a
/// sharded compile keeps each weight whole for its sharding.)
fn packable_weights(model: &frontend::ExportedModel, options: &CompileOptions) -> Vec<usize> {
    if options.opt_level < passes::OptLevel::O2
        || options.sharding.is_some()
        || !model.has_weights()
    {
        return Vec::new();
    }
    let inputs = &model.graph.inputs;
    let identities: Vec<Option<String>> = inputs
        .iter()
        .map(|spec| model.weight_identity(&spec.name))
        .collect();
    let mut holders: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for id in identities.iter().flatten() {
        *holders.entry(id.as_str()).or_default() += 1;
    }
    let shared = |i: usize| identities[i].as_deref().is_some_and(|id| holders[id] > 1);
    (0..inputs.len())
        .filter(|&i| inputs[i].kind == frontend::graph::InputKind::Parameter && !shared(i))
        .collect()
}

/// Compiles to StableHLO text only (`tpuc compile --emit mlir`), with the stage times.
pub fn compile_to_mlir(
    input: &Path,
    options: &CompileOptions,
) -> Result<(String, Vec<StageTime>), CompileError> {
    let mut watch = Stopwatch::start();
    let mut model = frontend::load(input)?;
    watch.lap("read");
    if model.dynamic.is_some() && options.specialize.is_empty() {
        let text = dynamic::polymorphic::emit(&mut model, options)?;
        watch.lap("polymorphic");
        return Ok((text, watch.times));
    }
    dynamic::specialize_for_text(&mut model, options, "mlir")?;
    let ctx = new_context();
    let module = lower_timed(&ctx, &model, options, &mut watch)?;
    let state = import::state_updates(&model.graph);
    mark_state_aliases(&module, &model.graph, &state, None)?;
    let text = print_program(&module)?;
    watch.lap("print");
    Ok((text, watch.times))
}

/// The ATen-level module for `input`, printed with node locations (`tpuc compile
/// --emit aten`): the input of `lower-aten-to-stablehlo`, handy for lit tests.
pub fn compile_to_aten_mlir(input: &Path) -> Result<String, CompileError> {
    compile_to_aten_mlir_with(input, &CompileOptions::default())
}

/// [`compile_to_aten_mlir`] of a dynamic program specialized for the one size of
/// `options.specialize`.
pub fn compile_to_aten_mlir_with(
    input: &Path,
    options: &CompileOptions,
) -> Result<String, CompileError> {
    let mut model = frontend::load(input)?;
    dynamic::specialize_for_text(&mut model, options, "aten")?;
    let ctx = new_context();
    let module = import::import_graph(&ctx, &model.graph)?;
    print_module_with_locations(&module)
}

/// Parses MLIR text, runs `pipeline` on it, and prints the result (`tpuc opt`).
pub fn run_opt(
    text: &str,
    file: &str,
    pipeline: &str,
    with_locations: bool,
) -> Result<String, CompileError> {
    let passes = passes::parse_pipeline(pipeline)?;
    let ctx = new_context();
    let module = Module::parse(&ctx, text).ok_or_else(|| CompileError::MlirParse {
        file: file.to_string(),
    })?;
    let module = passes::run_pipeline(&ctx, module, &passes)?;
    if with_locations {
        print_module_with_locations(&module)
    } else {
        print_module(&module)
    }
}

/// [`run_opt`], then the module as XLA HLO: its text and the serialized
/// `HloModuleProto` (`tpuc opt --emit-hlo`).
pub fn run_opt_to_hlo(
    text: &str,
    file: &str,
    pipeline: &str,
) -> Result<(String, Vec<u8>), CompileError> {
    let passes = passes::parse_pipeline(pipeline)?;
    let ctx = new_context();
    let module = Module::parse(&ctx, text).ok_or_else(|| CompileError::MlirParse {
        file: file.to_string(),
    })?;
    let module = passes::run_pipeline(&ctx, module, &passes)?;
    let names: Vec<String> = ir_main_argument_count(&module)
        .map(|n| (0..n).map(|i| format!("Arg_{i}")).collect())
        .unwrap_or_default();
    let hlo = hlo::emit(&module, "module", &names)?;
    Ok((hlo::text::print(&hlo), prost::Message::encode_to_vec(&hlo)))
}

fn ir_main_argument_count(module: &Module<'_>) -> Option<usize> {
    passes::ir::main_block(module).map(|b| passes::ir::block_arguments(b).len())
}
