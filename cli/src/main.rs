//! `tpuc`: the command-line front of the compiler and runtime.
//!
//! Argument parsing and output only; every action is a call into `tpuc_compiler` or
//! `tpuc_runtime`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tpuc_compiler::{CompileOptions, MissingWeights, Target};
use tpuc_runtime::compare::{compare, default_tolerances};

#[derive(Parser)]
#[command(
    name = "tpuc",
    version,
    about = "Ahead-of-time compiler from PyTorch (torch.export) programs to StableHLO for TPUs and PJRT devices",
    long_about = "tpuc compiles programs saved with torch.export.save(ep, \"model.pt2\") (or their \
ExportedProgram JSON) to StableHLO, packaged with their weights as an artifact that the tpuc \
runtime executes on any PJRT plugin (CPU, CUDA, TPU, Neuron).\n\n\
Typical use:\n  tpuc inspect model.pt2\n  tpuc compile model.pt2 -o model.tpuc\n  \
tpuc run model.tpuc --input x.npy --expect y.npy"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile an exported program (.pt2 or model.json) to an artifact directory.
    ///
    /// The artifact holds manifest.json (inputs, outputs, dtypes, shapes, target,
    /// StableHLO version, checksums), program.mlir (StableHLO, generic MLIR form) and
    /// weights.safetensors. The same input always gives byte-identical files.
    Compile {
        /// The exported model: a .pt2 archive from torch.export.save, or its model.json.
        model: PathBuf,
        /// Output path: an artifact directory, or with --emit mlir a .mlir file ("-" for stdout).
        #[arg(short, long)]
        output: PathBuf,
        /// Compilation target: tpu (portable StableHLO for TPUs and any PJRT plugin).
        #[arg(long, default_value = "tpu")]
        target: String,
        /// What to write: "artifact" (default), "mlir" (the StableHLO module only) or
        /// "aten" (the imported ATen-level module, with node locations).
        #[arg(long, default_value = "artifact")]
        emit: String,
        /// For a bare model.json (no weights): make parameters and buffers user inputs
        /// instead of writing zeros.
        #[arg(long)]
        weights_as_inputs: bool,
    },
    /// Run passes on an MLIR file and print the result (used by the lit tests).
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
    },
    /// Summarise an exported program: ops with counts, parameters, inputs, outputs and
    /// the ops tpuc cannot lower yet.
    Inspect { model: PathBuf },
    /// Run an artifact on a PJRT plugin, reading and writing .npy files.
    Run {
        artifact: PathBuf,
        /// User inputs in order, as .npy files.
        #[arg(long = "input")]
        inputs: Vec<PathBuf>,
        /// Reference outputs in order; prints errors and fails outside tolerance.
        #[arg(long = "expect")]
        expect: Vec<PathBuf>,
        /// Directory to write outputs to (output_0.npy, ...).
        #[arg(long)]
        output_dir: Option<PathBuf>,
        /// PJRT plugin (.so); default: $TPUC_PJRT_PLUGIN, then the project's .deps.
        #[arg(long)]
        plugin: Option<PathBuf>,
        /// Relative tolerance (default depends on dtype: f32 1e-4, f16 1e-2, bf16 2e-2).
        #[arg(long)]
        rtol: Option<f64>,
        /// Absolute tolerance (default depends on dtype: f32 1e-5, f16 1e-3, bf16 1e-2).
        #[arg(long)]
        atol: Option<f64>,
    },
}

fn main() -> ExitCode {
    // Panics are bugs; say so in one line instead of a backtrace dump.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("internal error (a tpuc bug; please report it with the input): {info}");
    }));
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Compile {
            model,
            output,
            target,
            emit,
            weights_as_inputs,
        } => {
            let target = Target::parse(&target).map_err(|e| e.to_string())?;
            match emit.as_str() {
                "mlir" => {
                    let text = tpuc_compiler::compile_to_mlir(&model).map_err(|e| e.to_string())?;
                    write_text_output(&model, &output, &text)?;
                }
                "aten" => {
                    let text =
                        tpuc_compiler::compile_to_aten_mlir(&model).map_err(|e| e.to_string())?;
                    write_text_output(&model, &output, &text)?;
                }
                "artifact" => {
                    let options = CompileOptions {
                        target,
                        missing_weights: if weights_as_inputs {
                            MissingWeights::AsInputs
                        } else {
                            MissingWeights::ZeroFill
                        },
                        progress: terminal_progress(),
                    };
                    let report = tpuc_compiler::compile(&model, &output, &options)
                        .map_err(|e| e.to_string())?;
                    eprintln!(
                        "compiled {} ({} nodes, {} weights, {} bytes) -> {}",
                        model.display(),
                        report.num_nodes,
                        report.num_weights,
                        report.weight_bytes,
                        report.output.display()
                    );
                    if report.zero_filled > 0 {
                        eprintln!(
                            "warning: {} weights were not in the source (bare model.json) and were written as zeros; \
                             use --weights-as-inputs to pass them at run time",
                            report.zero_filled
                        );
                    }
                }
                other => {
                    return Err(format!(
                        "unknown --emit `{other}` (expected artifact, mlir or aten)"
                    ))
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Opt {
            file,
            pass_pipeline,
            debug_locations,
            list_passes,
        } => {
            if list_passes {
                for p in tpuc_compiler::passes::registry() {
                    println!("{:28} {}", p.name(), p.description());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let file = file.ok_or("an input .mlir file is required (\"-\" reads stdin)")?;
            let text = if file.as_os_str() == "-" {
                let mut s = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                    .map_err(|e| e.to_string())?;
                s
            } else {
                std::fs::read_to_string(&file)
                    .map_err(|e| format!("cannot read `{}`: {e}", file.display()))?
            };
            let out = tpuc_compiler::run_opt(
                &text,
                &file.display().to_string(),
                &pass_pipeline,
                debug_locations,
            )
            .map_err(|e| e.to_string())?;
            print!("{out}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Inspect { model } => inspect(&model),
        Command::Run {
            artifact,
            inputs,
            expect,
            output_dir,
            plugin,
            rtol,
            atol,
        } => run_artifact(
            &artifact,
            &inputs,
            &expect,
            output_dir.as_deref(),
            plugin.as_deref(),
            rtol,
            atol,
        ),
    }
}

/// Progress on stderr when it is a terminal: stages, then weight megabytes (redrawn
/// at most every 1% so huge checkpoints do not flood the terminal).
fn terminal_progress() -> Option<tpuc_compiler::ProgressFn> {
    use std::io::IsTerminal;
    use std::sync::atomic::{AtomicU64, Ordering};
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let last = AtomicU64::new(u64::MAX);
    Some(std::sync::Arc::new(
        move |p: tpuc_compiler::Progress| match p {
            tpuc_compiler::Progress::Loading => eprint!("\rreading model..."),
            tpuc_compiler::Progress::Lowering => eprint!("\rlowering to StableHLO..."),
            tpuc_compiler::Progress::Weights { done, total } => {
                let pct = (done * 100).checked_div(total).unwrap_or(100);
                if last.swap(pct, Ordering::Relaxed) != pct {
                    eprint!(
                        "\rwriting weights: {:.1} / {:.1} MB ({pct}%)   ",
                        done as f64 / 1e6,
                        total as f64 / 1e6
                    );
                }
            }
            tpuc_compiler::Progress::Done => eprint!("\r\x1b[2K"),
        },
    ))
}

/// Writes `--emit mlir` output without ever replacing the input model.
fn write_text_output(model: &Path, output: &Path, text: &str) -> Result<(), String> {
    if output.as_os_str() == "-" {
        print!("{text}");
        return Ok(());
    }
    if let (Ok(a), Ok(b)) = (model.canonicalize(), output.canonicalize()) {
        if a == b {
            return Err(format!(
                "refusing to write `{}`: it is the input model",
                output.display()
            ));
        }
    }
    let tmp = output.with_extension("mlir.tpuc-tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, output).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write `{}`: {e}", output.display())
    })
}

fn inspect(model: &Path) -> Result<ExitCode, String> {
    let m = tpuc_compiler::frontend::load(model).map_err(|e| e.to_string())?;
    let g = &m.graph;
    println!("model: {}", model.display());
    println!("schema: {}.{}", g.schema_version.0, g.schema_version.1);
    println!(
        "weights: {}",
        if m.has_weights() {
            "in the archive"
        } else {
            "none (bare model.json)"
        }
    );
    let mut params = 0u64;
    println!("inputs:");
    for spec in &g.inputs {
        let meta = &g.tensors[&spec.name];
        let n: i64 = meta.shape.iter().product();
        if spec.kind != tpuc_compiler::frontend::InputKind::UserInput {
            params += n as u64;
        }
        println!(
            "  {:<40} {:<10} {:?} {:?}{}",
            spec.name,
            meta.dtype.name(),
            meta.shape,
            spec.kind,
            spec.target
                .as_ref()
                .map(|t| format!(" ({t})"))
                .unwrap_or_default()
        );
    }
    println!("outputs:");
    for o in &g.outputs {
        let meta = &g.tensors[o];
        println!("  {:<40} {:<10} {:?}", o, meta.dtype.name(), meta.shape);
    }
    println!("parameters and buffers: {params} elements");
    println!("ops ({} nodes):", g.nodes.len());
    for (target, count) in g.op_counts() {
        println!("  {target:<50} {count}");
    }
    let ctx = tpuc_compiler::new_context();
    match tpuc_compiler::lower_to_stablehlo(&ctx, &m) {
        Ok(_) => println!("status: every op lowers to StableHLO"),
        Err(e) => println!("status: does not compile yet:\n{e}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn run_artifact(
    artifact: &Path,
    inputs: &[PathBuf],
    expect: &[PathBuf],
    output_dir: Option<&Path>,
    plugin: Option<&Path>,
    rtol: Option<f64>,
    atol: Option<f64>,
) -> Result<ExitCode, String> {
    let plugin_path = tpuc_runtime::discover::find_plugin(plugin).map_err(|e| e.to_string())?;
    let plugin = tpuc_runtime::Plugin::load(&plugin_path).map_err(|e| e.to_string())?;
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(1))
        .map_err(|e| e.to_string())?;
    let session = tpuc_runtime::Session::load(artifact, &client).map_err(|e| e.to_string())?;
    let tensors = inputs
        .iter()
        .map(|p| tpuc_runtime::npy::read_npy(p).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let outputs = session.run(&tensors).map_err(|e| e.to_string())?;
    if let Some(dir) = output_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        for (i, t) in outputs.iter().enumerate() {
            let p = dir.join(format!("output_{i}.npy"));
            tpuc_runtime::npy::write_npy(&p, t).map_err(|e| e.to_string())?;
        }
    }
    if !expect.is_empty() && expect.len() != outputs.len() {
        return Err(format!(
            "{} --expect files for {} outputs",
            expect.len(),
            outputs.len()
        ));
    }
    let mut ok = true;
    for (i, out) in outputs.iter().enumerate() {
        let spec = &session.outputs()[i];
        match expect.get(i) {
            Some(p) => {
                let reference = tpuc_runtime::npy::read_npy(p).map_err(|e| e.to_string())?;
                let (dr, da) = default_tolerances(out.dtype);
                let c = compare(out, &reference, rtol.unwrap_or(dr), atol.unwrap_or(da));
                println!(
                    "output {i} ({}): {} {:?}  max_abs_error={:.3e} max_rel_error={:.3e} mismatches={}/{} {}",
                    spec.name,
                    out.dtype,
                    out.shape,
                    c.max_abs_error,
                    c.max_rel_error,
                    c.mismatches,
                    c.elements,
                    if c.passed() { "OK" } else { "FAIL" }
                );
                ok &= c.passed();
            }
            None => println!("output {i} ({}): {} {:?}", spec.name, out.dtype, out.shape),
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
