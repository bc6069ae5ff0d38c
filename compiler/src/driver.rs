//! The compile driver: input → module → pipeline → output, for every output path.
//!
//! Each entry point loads the model, asks [`targets::check_request`] whether its
//! target and tpuc support what it asks for, builds its pipeline with
//! [`pipeline::for_compile`] and runs it through [`lower_program`], the one sequence of
//! import, passes and the records they leave. Outputs: an artifact ([`compile`]),
//! StableHLO text ([`compile_to_mlir`]), the ATen-level module
//! ([`compile_to_aten_mlir`]), the pipeline itself ([`compile_pipeline`]), and any
//! pipeline on MLIR text ([`run_opt`], `tpuc opt`).

use std::path::Path;
use std::sync::{Arc, Mutex};

use melior::ir::Module;
use melior::Context;

use crate::error::CompileError;
use crate::options::{CompileOptions, CompileReport};
use crate::passes::take_records::Records;
use crate::passes::PassEnv;
use crate::pipeline::{self, Pipeline, ProgramFacts};
use crate::printer::{print_module, print_module_with_locations, print_program};
use crate::targets::{self, Request, Target};
use crate::{artifact, dynamic, frontend, import, passes, sharding, training, Progress, StageTime};

/// Creates the MLIR context tpuc uses.
pub fn new_context() -> Context {
    tpuc_dialects::new_context()
}

/// Times stages as they end.
#[derive(Default)]
pub(crate) struct Stopwatch {
    pub(crate) times: Vec<StageTime>,
    last: Option<std::time::Instant>,
}

impl Stopwatch {
    pub(crate) fn start() -> Stopwatch {
        Stopwatch {
            times: Vec::new(),
            last: Some(std::time::Instant::now()),
        }
    }
    /// Ends the stage that began at the previous call.
    pub(crate) fn lap(&mut self, stage: &str) {
        let now = std::time::Instant::now();
        let seconds = self.last.map_or(0.0, |t| (now - t).as_secs_f64());
        self.times.push(StageTime {
            stage: stage.to_string(),
            seconds,
        });
        self.last = Some(now);
    }
}

/// What a compile writes, as far as the pipeline is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emit {
    /// An artifact: its weights may be stored packed (`stablehlo-merge-dots`).
    Artifact,
    /// StableHLO text: the program's signature is the exported one.
    Text,
}

impl ProgramFacts {
    /// The facts of compiling `model` with `options` for `emit`.
    pub fn of(
        model: &frontend::ExportedModel,
        options: &CompileOptions,
        emit: Emit,
    ) -> Result<ProgramFacts, CompileError> {
        let training = training_layout(model, options)?;
        let state_aliases = match &training {
            Some(layout) => layout.state_aliases(),
            None => {
                let state = import::state_updates(&model.graph);
                let mut aliases = Vec::new();
                for (k, update) in state.iter().enumerate() {
                    let input = model
                        .graph
                        .inputs
                        .iter()
                        .position(|s| s.name == update.input)
                        .ok_or_else(|| {
                            CompileError::Internal(format!("state `{}` is no input", update.input))
                        })?;
                    aliases.push((input, model.graph.outputs.len() + k));
                }
                aliases
            }
        };
        let sharding = match (&options.sharding, &training) {
            (Some(request), Some(layout)) => Some(training::seeds(
                layout,
                &model.graph,
                request,
                &state_aliases,
            )?),
            (Some(request), None) => {
                Some(sharding::seeds_for(&model.graph, request, &state_aliases)?)
            }
            (None, _) => None,
        };
        Ok(ProgramFacts {
            packable: match (emit, &training) {
                (Emit::Artifact, None) => packable_weights(model, options),
                _ => Vec::new(),
            },
            sharding,
            state_aliases,
            training,
        })
    }
}

/// `--train`: the layout of the training step, after the checks; a joint program
/// compiled without `--train` is refused.
fn training_layout(
    model: &frontend::ExportedModel,
    options: &CompileOptions,
) -> Result<Option<training::Layout>, CompileError> {
    match (&options.training, &model.graph.joint) {
        (Some(train), _) => {
            if options.debug_outputs {
                return Err(CompileError::Training(
                    "--debug-outputs is not available for training steps".into(),
                ));
            }
            if !model.has_weights() && options.missing_weights == crate::MissingWeights::AsInputs {
                return Err(CompileError::Training(
                    "--weights-as-inputs: a training step keeps its parameters on the device \
                     as state; compile the .pt2 that holds them"
                        .into(),
                ));
            }
            Ok(Some(training::Layout::of(&model.graph, train)?))
        }
        (None, Some(_)) => Err(CompileError::Training(
            "the program is a joint forward + backward program (it returns a loss and \
             gradients); compile it with --train and an optimizer (tpuc compile --train \
             --optimizer adamw ...), or export the forward alone for inference"
                .into(),
        )),
        (None, None) => Ok(None),
    }
}

/// A lowered program: the module and what its passes recorded for the driver.
pub(crate) struct Lowered<'c> {
    pub module: Module<'c>,
    pub records: Records,
    /// The exported graph's own FLOPs per call ([`crate::model_flops`]).
    pub model_flops: f64,
}

/// Import, then the pipeline of `facts` (stage times and `--print-ir-after` as asked):
/// the one path from an exported program to StableHLO.
pub(crate) fn lower_program<'c>(
    ctx: &'c Context,
    model: &frontend::ExportedModel,
    options: &CompileOptions,
    facts: &ProgramFacts,
    watch: &mut Stopwatch,
) -> Result<Lowered<'c>, CompileError> {
    let mut module = import::import_graph(ctx, &model.graph)?;
    let model_flops = crate::model_flops::of_aten(&module);
    watch.lap("import");
    let records = Arc::new(Mutex::new(Records::default()));
    let env = PassEnv {
        custom_lowerings: options.custom_lowerings.clone(),
        records: Some(records.clone()),
    };
    let pipeline = pipeline::for_compile(options, facts);
    let specs: Vec<_> = pipeline.passes().cloned().collect();
    for pass in passes::instantiate(&specs, &env)? {
        module = pass.run(ctx, module)?;
        watch.lap(pass.name());
        options.check_cancelled()?;
        let wanted = options
            .print_ir_after
            .iter()
            .any(|p| p == pass.name() || p == "all");
        if let (true, Some(on_ir)) = (wanted, &options.on_ir) {
            on_ir(pass.name(), &print_module_with_locations(&module)?);
        }
    }
    let records = records
        .lock()
        .map_err(|_| CompileError::Internal("the records lock is poisoned".into()))?
        .clone();
    Ok(Lowered {
        module,
        records,
        model_flops,
    })
}

/// Frontend + import + default pipeline: the StableHLO module for `model`.
pub fn lower_to_stablehlo<'c>(
    ctx: &'c Context,
    model: &frontend::ExportedModel,
) -> Result<Module<'c>, CompileError> {
    lower_to_stablehlo_with(ctx, model, &CompileOptions::default())
}

/// [`lower_to_stablehlo`] with `options`' target, optimization level, sharding, user
/// lowerings for custom operators (see [`CompileOptions::custom_lowerings`]) and IR
/// printing: the module `tpuc compile --emit mlir` prints.
pub fn lower_to_stablehlo_with<'c>(
    ctx: &'c Context,
    model: &frontend::ExportedModel,
    options: &CompileOptions,
) -> Result<Module<'c>, CompileError> {
    targets::check_request(options.target, &Request::of(model, options))?;
    let facts = ProgramFacts::of(model, options, Emit::Text)?;
    Ok(lower_program(ctx, model, options, &facts, &mut Stopwatch::start())?.module)
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
    let mut model = frontend::load(input)?;
    watch.lap("read");
    options.check_cancelled()?;
    targets::check_request(options.target, &Request::of(&model, options))?;
    let debug_values = return_debug_values(&mut model, options)?;
    if model.dynamic.is_some() {
        if options.training.is_some() {
            return Err(CompileError::Training(
                "the program was exported with dynamic_shapes; training steps are compiled \
                 for static shapes (export the joint program without dynamic_shapes)"
                    .into(),
            ));
        }
        return dynamic::compile(model, output, options, watch);
    }
    refuse_specialize(options)?;
    options.report(Progress::Lowering);
    let ctx = new_context();
    let facts = ProgramFacts::of(&model, options, Emit::Artifact)?;
    let Lowered {
        module,
        records,
        model_flops,
    } = lower_program(&ctx, &model, options, &facts, &mut watch)?;
    let origins = records.origins;
    let mut warnings = Vec::new();
    let neuron_files = match options.target {
        Target::Tpu => None,
        Target::Neuron(chip) => {
            let (files, target_warnings) = targets::neuron::artifact_files(
                chip,
                &options.neuron,
                &module,
                &model,
                origins.as_deref(),
            )?;
            warnings.extend(target_warnings);
            watch.lap("hlo");
            Some(files)
        }
    };
    let program = print_program(&module)?;
    // A target's own compiler (libtpu) gets the same program with node locations, so
    // that what it rejects is reported at a graph node.
    // Its grouped matmuls become `chlo.ragged_dot` (libtpu's grouped-matmul kernels),
    // which only TPU compilers take: the artifact's program (printed above) keeps the
    // portable loop. The module is not used after this. Not in partitioned programs
    // (their grouped matmuls are dense or, under expert parallelism, the routed loop
    // in a manual computation, see `pipeline::for_compile`): libtpu's SPMD partitioner
    // aborts the process on a ragged dot, inside a manual computation too ("RaggedDot
    // is only supported with Shardy", a CHECK; XLA falls back from Shardy to GSPMD on
    // tpuc's programs, which carry both forms of shardings; measured Dec 2026).
    let located = match options.finish {
        Some(_) if options.sharding.is_some() => Some(crate::printer::program_with_node_locations(
            &module, &model,
        )?),
        Some(_) => {
            let module = passes::run_pipeline(
                &ctx,
                module,
                &passes::parse_pipeline(passes::grouped_mm_to_ragged_dot::NAME)?,
            )?;
            Some(crate::printer::program_with_node_locations(
                &module, &model,
            )?)
        }
        None => None,
    };
    watch.lap("print");
    let partitioned = match (&options.sharding, records.shardings) {
        (Some(request), Some((args, results))) => Some(artifact::Partitioned {
            partitioning: tpuc_artifact::manifest::Partitioning::new(
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
            debug_values,
            training: facts.training.as_ref(),
            model_flops,
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

/// `--debug-outputs`: every graph value made an output of `model` (see
/// [`frontend::Graph::return_every_value`]), described for the manifest. Dynamic
/// programs are refused (their outputs' sizes are expressions).
fn return_debug_values(
    model: &mut frontend::ExportedModel,
    options: &CompileOptions,
) -> Result<Vec<tpuc_artifact::manifest::DebugValue>, CompileError> {
    if !options.debug_outputs {
        return Ok(Vec::new());
    }
    if model.dynamic.is_some() {
        return Err(CompileError::Dynamic(targets::dynamic_unsupported(
            "--debug-outputs",
        )));
    }
    Ok(model
        .graph
        .return_every_value()
        .into_iter()
        .map(
            |(output, name, node, op, inputs)| tpuc_artifact::manifest::DebugValue {
                output,
                name,
                node,
                op,
                inputs,
            },
        )
        .collect())
}

fn refuse_specialize(options: &CompileOptions) -> Result<(), CompileError> {
    if options.specialize.is_empty() {
        return Ok(());
    }
    Err(CompileError::Dynamic(
        "--specialize: the program has no dynamic sizes (it was exported without dynamic_shapes)"
            .into(),
    ))
}

/// The `@main` arguments whose weights an artifact may store packed for
/// `stablehlo-merge-dots`: at `-O2`, in an unsharded compile of a model with its
/// weights, the parameters that share their storage with no other argument. (Packing
/// changes the program's signature, so the StableHLO-only outputs never do it, and a
/// sharded compile keeps each weight whole for its sharding.)
pub(crate) fn packable_weights(
    model: &frontend::ExportedModel,
    options: &CompileOptions,
) -> Vec<usize> {
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
    targets::check_request(options.target, &Request::of(&model, options))?;
    return_debug_values(&mut model, options)?;
    if model.dynamic.is_some() && options.specialize.is_empty() {
        let text = dynamic::polymorphic::emit(&mut model, options)?;
        watch.lap("polymorphic");
        return Ok((text, watch.times));
    }
    dynamic::specialize_for_text(&mut model, options, "mlir")?;
    let ctx = new_context();
    let facts = ProgramFacts::of(&model, options, Emit::Text)?;
    let lowered = lower_program(&ctx, &model, options, &facts, &mut watch)?;
    let text = print_program(&lowered.module)?;
    watch.lap("print");
    Ok((text, watch.times))
}

/// The pipeline `tpuc compile` runs on `input` with `options` for `emit` (`tpuc compile
/// --print-pipeline`): its text replays the compile with `tpuc opt` on the `--emit
/// aten` module. A dynamic program's is that of its example sizes, or of the one
/// `--specialize` size; the shape-polymorphic writer (`--emit mlir` without
/// `--specialize`) is not one pipeline and is refused.
pub fn compile_pipeline(
    input: &Path,
    options: &CompileOptions,
    emit: Emit,
) -> Result<Pipeline, CompileError> {
    let mut model = frontend::load(input)?;
    targets::check_request(options.target, &Request::of(&model, options))?;
    return_debug_values(&mut model, options)?;
    match (&model.dynamic, emit) {
        (None, _) => refuse_specialize(options)?,
        (Some(_), Emit::Text) => {
            if options.specialize.is_empty() {
                return Err(CompileError::Dynamic(
                    "the shape-polymorphic StableHLO of a dynamic program is written from several \
                     specializations, not by one pipeline; name a size with --specialize to print its pipeline"
                        .into(),
                ));
            }
            dynamic::specialize_for_text(&mut model, options, "mlir")?;
        }
        (Some(d), Emit::Artifact) => {
            let example = d.example_sizes();
            model.specialize(&example)?;
        }
    }
    Ok(pipeline::for_compile(
        options,
        &ProgramFacts::of(&model, options, emit)?,
    ))
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

/// Parses MLIR text and runs `pipeline` on it (`tpuc opt`).
fn parse_and_run<'c>(
    ctx: &'c Context,
    text: &str,
    file: &str,
    pipeline: &str,
) -> Result<Module<'c>, CompileError> {
    let passes = passes::parse_pipeline(pipeline)?;
    let module = Module::parse(ctx, text).ok_or_else(|| CompileError::MlirParse {
        file: file.to_string(),
    })?;
    passes::run_pipeline(ctx, module, &passes)
}

/// Parses MLIR text, runs `pipeline` on it, and prints the result (`tpuc opt`).
pub fn run_opt(
    text: &str,
    file: &str,
    pipeline: &str,
    with_locations: bool,
) -> Result<String, CompileError> {
    let ctx = new_context();
    let module = parse_and_run(&ctx, text, file, pipeline)?;
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
    use crate::targets::neuron::hlo;
    let ctx = new_context();
    let module = parse_and_run(&ctx, text, file, pipeline)?;
    let names: Vec<String> = passes::ir::main_block(&module)
        .map(|b| passes::ir::block_arguments(b).len())
        .map(|n| (0..n).map(|i| format!("Arg_{i}")).collect())
        .unwrap_or_default();
    let hlo = hlo::emit(&module, "module", &names)?;
    Ok((hlo::text::print(&hlo), prost::Message::encode_to_vec(&hlo)))
}
