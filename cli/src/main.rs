//! `tpuc`: the command-line front of the compiler and runtime.
//!
//! Argument parsing and output only; every action is a call into `tpuc_compiler` or
//! `tpuc_runtime`. Built without the `compiler` feature (`--no-default-features`) it is
//! the runtime-only binary: `run`, `train`, `generate`, `devices`, `bench`, `report` and
//! `diverge`, no MLIR/LLVM inside.

#[macro_use]
extern crate tpuc_cli;

mod bench;
#[cfg(feature = "compiler")]
mod compiler_cmds;
mod devices;
mod diverge_cmd;
mod generate_cmd;
#[cfg(feature = "compiler")]
mod inspect_sharding;
mod load;
#[cfg(feature = "compiler")]
mod plan_cmd;
mod report;
mod run_cmd;
mod serve;
mod train_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc for the Rust side: reading an export and building the program are
/// millions of small allocations (JSON trees, op views), about twice as fast as with
/// the system allocator. MLIR's own allocations are unaffected.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "tpuc",
    version,
    about = "Ahead-of-time compiler from PyTorch (torch.export) programs to StableHLO for TPUs and PJRT devices",
    long_about = "tpuc compiles programs saved with torch.export.save(ep, \"model.pt2\") (or their \
ExportedProgram JSON) to StableHLO, packaged with their weights as an artifact that the tpuc \
runtime executes on any PJRT plugin (CPU, CUDA, TPU, Neuron).\n\n\
Typical use:\n  tpuc inspect model.pt2\n  tpuc compile model.pt2 -o model.tpuc\n  \
tpuc run model.tpuc --input x.npy --expect y.npy\n  tpuc devices\n  tpuc bench model.tpuc\n  \
tpuc compile model.pt2 -o model.tpuc --topology v5e:2x2 && tpuc report model.tpuc"
)]
struct Cli {
    /// Show the PJRT plugin's own log lines (hidden by default; an explicit
    /// TF_CPP_MIN_LOG_LEVEL in the environment always wins).
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

/// The commands that need the compiler; a runtime-only `tpuc` names them in its error.
const COMPILER_COMMANDS: [&str; 4] = ["compile", "opt", "inspect", "plan"];

#[derive(Subcommand)]
enum Command {
    /// Compile an exported program (.pt2 or model.json) to an artifact directory.
    ///
    /// The artifact holds manifest.json (inputs, outputs, dtypes, shapes, target,
    /// StableHLO version, checksums), program.mlir (StableHLO, generic MLIR form) and
    /// weights.safetensors. The same input always gives byte-identical files.
    #[cfg(feature = "compiler")]
    Compile(Box<compiler_cmds::CompileArgs>),
    /// Find the partitioning of a program that fits a TPU slice (or N plugin devices).
    ///
    /// Compiles candidate meshes and strategies (dp, fsdp, ep, tp and their products
    /// over the devices), ranks them by tpuc's per-device estimate, compiles the best
    /// few with XLA (libtpu, no TPU needed) and prints per plan whether it fits, its
    /// peak memory per device, collectives, FLOPs, bytes accessed and estimated time,
    /// at the requested matmul precision and at `default`. Picks the best plan that
    /// fits; --write-rules saves it for `tpuc compile --sharding-rules`.
    #[cfg(feature = "compiler")]
    Plan(plan_cmd::PlanArgs),
    /// `tpuc plan`'s child: XLA's compile of one candidate (an abort costs that
    /// candidate, not the plan).
    #[cfg(feature = "compiler")]
    #[command(hide = true)]
    PlanMeasure(plan_cmd::MeasureArgs),
    /// Run passes on an MLIR file and print the result (used by the lit tests).
    #[cfg(feature = "compiler")]
    Opt {
        /// Input .mlir file ("-" for stdin; required unless --list-passes).
        file: Option<PathBuf>,
        /// Comma-separated passes, e.g. lower-aten-to-stablehlo,verify-stablehlo.
        #[arg(long = "pass-pipeline", default_value = "")]
        pass_pipeline: String,
        /// Print locations (node names) in the output.
        #[arg(long)]
        debug_locations: bool,
        /// List the registered passes and exit.
        #[arg(long)]
        list_passes: bool,
        /// Print the result as XLA HLO text instead of MLIR (the form a Neuron
        /// artifact's model.hlo.pb holds).
        #[arg(long)]
        emit_hlo: bool,
        /// Also write the result as a serialized HloModuleProto to FILE (implies
        /// --emit-hlo; an existing file is replaced).
        #[arg(long, value_name = "FILE")]
        hlo_proto: Option<PathBuf>,
    },
    /// Summarise an exported program: ops with counts, parameters, inputs, outputs and
    /// the ops tpuc cannot lower yet. With --sharding, a partitioned artifact instead:
    /// every argument's and output's sharding and per-device shape, and the collectives
    /// in XLA's partitioned program (compiled on the plugin).
    #[cfg(feature = "compiler")]
    Inspect {
        model: PathBuf,
        /// MODEL is a compiled artifact: show how it is partitioned over its mesh.
        #[arg(long)]
        sharding: bool,
        /// PJRT plugin (.so) for --sharding; default: discovery, as `tpuc run`.
        #[arg(long)]
        plugin: Option<PathBuf>,
    },
    /// Run an artifact on a PJRT plugin, reading and writing .npy files.
    Run(run_cmd::RunArgs),
    /// Run a training-step artifact (`tpuc compile --train`) for --steps steps over
    /// batches from --data, printing loss, gradient norm, learning rate and step time;
    /// checkpoints (--checkpoint, --checkpoint-every) and --resume.
    Train(train_cmd::TrainArgs),
    /// Greedy decoding with a decode-step artifact (a static-KV-cache step exported by
    /// transformers' convert_and_export_with_cache): the prompt fed token by token,
    /// then --max-new-tokens tokens, each the argmax of the last logits. Prints the new
    /// tokens (stdout) and tokens/s (stderr); the cache stays on the device.
    Generate(generate_cmd::GenerateArgs),
    /// Serve a model over HTTP, OpenAI-compatible, with continuous batching: a serving
    /// directory from `python -m tpuc.llm export` (prefill programs per prompt bucket,
    /// one decode step over every slot, sampling on device). POST /v1/completions and
    /// /v1/chat/completions (`stream` for server-sent events), GET /v1/models, /health
    /// and /metrics (Prometheus). Requests join and leave the batch between decode
    /// steps; past --max-queue waiting requests the answer is 429; SIGTERM or Ctrl-C
    /// stops accepting and finishes the requests in flight. Nothing is compiled that
    /// the executable cache holds: a restart loads.
    Serve(serve::ServeArgs),
    /// Find the first graph node whose value leaves PyTorch's: runs an artifact compiled
    /// with `tpuc compile --debug-outputs` and compares every value it returns with
    /// PyTorch's (`scripts/node_values.py` writes them), in graph order. Prints the first
    /// value outside the tolerances with its node's op and how far each value the node
    /// read already was; exits non-zero when one is found.
    Diverge(diverge_cmd::DivergeArgs),
    /// List the PJRT plugins tpuc finds: path, PJRT C API version, StableHLO versions,
    /// platform and devices. A plugin that fails to load is listed with its error.
    ///
    /// Looks at --plugin, then $TPUC_PJRT_PLUGIN, then the places `tpuc run` searches
    /// when neither is given. Exits non-zero when no plugin is found or none loads.
    Devices {
        /// A plugin (.so) to list first.
        #[arg(long)]
        plugin: Option<PathBuf>,
        /// Instead, the TPU topology names `tpuc compile --topology` takes, each
        /// checked against libtpu (chips per slice).
        #[arg(long)]
        topologies: bool,
        /// libtpu for --topologies (default: as `tpuc compile --topology`).
        #[arg(long, value_name = "PATH")]
        libtpu: Option<PathBuf>,
    },
    /// Print what an artifact's TPU executables need per chip: argument, output,
    /// temporary and peak memory, generated code, FLOPs, transcendentals and bytes
    /// accessed, and whether the model fits the chip's HBM (from `tpuc compile
    /// --topology`; no TPU or libtpu needed).
    ///
    /// Each executable's main-memory (HBM) traffic per call is estimated from the
    /// TPU-optimized program kept in the artifact and set against its argument bytes
    /// (what a call must read at least) and the chip's roofline; libtpu's own "bytes
    /// accessed" also counts its copies into on-chip memory. `--top N` lists where the
    /// bytes and FLOPs go: the N operations (XLA fusions, copies, collectives) that move
    /// the most and the N that compute the most, each with the graph node it came from.
    Report {
        artifact: PathBuf,
        /// Print the report as JSON (with --top N: N operations of each list; else 10).
        #[arg(long)]
        json: bool,
        /// List the N operations with the most main-memory traffic and the N with the
        /// most FLOPs.
        #[arg(long, value_name = "N")]
        top: Option<usize>,
    },
    /// Measure an artifact: load time, per-call latency percentiles and throughput.
    ///
    /// Inputs come from --input .npy files or, when none are given, are generated from
    /// the manifest's dtypes and shapes (--fill). By default both modes are measured:
    /// inputs resident on the device (uploaded once, outputs left on the device) and
    /// inputs uploaded and outputs downloaded on every call.
    Bench {
        artifact: PathBuf,
        /// User inputs in order, as .npy files (default: generated, see --fill).
        #[arg(long = "input")]
        inputs: Vec<PathBuf>,
        /// Timed calls per mode.
        #[arg(long, default_value_t = 1000)]
        iterations: usize,
        /// Untimed calls before the timed ones, per mode.
        #[arg(long, default_value_t = 100)]
        warmup: usize,
        /// Only measure with inputs resident on the device (Session::run_buffers).
        #[arg(long, conflicts_with = "upload_per_call")]
        resident: bool,
        /// Only measure with host inputs uploaded and outputs downloaded per call
        /// (Session::run).
        #[arg(long)]
        upload_per_call: bool,
        /// Generated inputs: "iota" (0, 1, 2, ... wrapped to the dtype's exact range)
        /// or "zeros".
        #[arg(long, default_value = "iota", value_parser = ["iota", "zeros"])]
        fill: String,
        #[command(flatten)]
        client: load::ClientArgs,
    },
}

fn main() -> ExitCode {
    // Panics are bugs; say so in one line instead of a backtrace dump.
    std::panic::set_hook(Box::new(|info| {
        errln!("internal error (a tpuc bug; please report it with the input): {info}");
    }));
    let mut command = Cli::command();
    if !cfg!(feature = "compiler") {
        if let Some(sub) = std::env::args().nth(1) {
            if COMPILER_COMMANDS.contains(&sub.as_str()) {
                errln!(
                    "error: `tpuc {sub}` needs the compiler, and this tpuc is the runtime-only build \
                     (run, train, generate, devices, bench, report, diverge); use a tpuc built with the default `compiler` feature"
                );
                return ExitCode::from(2);
            }
        }
        let about = "tpuc, runtime-only build: runs artifacts compiled by `tpuc compile` on PJRT \
                     plugins (CPU, CUDA, TPU, Neuron), and trains with training-step artifacts. It holds no compiler: compile, plan, opt and \
                     inspect need a tpuc built with the default `compiler` feature.";
        command = command.about(about).long_about(format!(
            "{about}\n\nTypical use:\n  tpuc devices\n  \
             tpuc run model.tpuc --input x.npy --expect y.npy\n  tpuc bench model.tpuc"
        ));
    }
    let matches = command.get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // Still single-threaded, and no plugin is loaded yet.
    tpuc_runtime::plugin_logging::configure(cli.verbose);
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            errln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        #[cfg(feature = "compiler")]
        Command::Compile(args) => compiler_cmds::compile(&args, cli.verbose),
        #[cfg(feature = "compiler")]
        Command::Plan(args) => plan_cmd::plan_command(&args),
        #[cfg(feature = "compiler")]
        Command::PlanMeasure(args) => plan_cmd::measure_command(&args),
        #[cfg(feature = "compiler")]
        Command::Opt {
            file,
            pass_pipeline,
            debug_locations,
            list_passes,
            emit_hlo,
            hlo_proto,
        } => compiler_cmds::opt(
            file,
            &pass_pipeline,
            debug_locations,
            list_passes,
            (emit_hlo || hlo_proto.is_some()).then_some(hlo_proto.as_deref()),
        ),
        #[cfg(feature = "compiler")]
        Command::Inspect {
            model,
            sharding: true,
            plugin,
        } => inspect_sharding::inspect(&model, plugin.as_deref()),
        #[cfg(feature = "compiler")]
        Command::Inspect { model, .. } => compiler_cmds::inspect(&model),
        Command::Run(args) => run_cmd::run_artifact(&args),
        Command::Train(args) => train_cmd::train(&args),
        Command::Generate(args) => generate_cmd::generate(&args),
        Command::Serve(args) => serve::serve(&args),
        Command::Diverge(args) => diverge_cmd::diverge(&args),
        Command::Devices {
            topologies: true,
            libtpu,
            ..
        } => devices::topologies(libtpu.as_deref()),
        Command::Devices { plugin, .. } => devices::devices(plugin.as_deref()),
        Command::Report {
            artifact,
            json,
            top,
        } => report::report(&artifact, json, top),
        Command::Bench {
            artifact,
            inputs,
            iterations,
            warmup,
            resident,
            upload_per_call,
            fill,
            client,
        } => bench::bench(&bench::BenchArgs {
            artifact,
            inputs,
            iterations,
            warmup,
            resident: resident || !upload_per_call,
            upload_per_call: upload_per_call || !resident,
            zeros: fill == "zeros",
            client,
        }),
    }
}
