//! `tpuc compile`, `tpuc opt` and `tpuc inspect`: the commands that need the compiler
//! (and with it MLIR/LLVM). Built only with the `compiler` feature (the default).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tpuc_compiler::passes::{MatmulPrecision, OptLevel};
use tpuc_compiler::{CompileOptions, MissingWeights, Target};

/// `tpuc compile`'s arguments.
#[derive(clap::Args)]
pub struct CompileArgs {
    /// The exported model: a .pt2 archive from torch.export.save, or its model.json.
    model: PathBuf,
    /// Output path: an artifact directory, or with --emit mlir a .mlir file ("-" for stdout).
    #[arg(short, long, required_unless_present = "print_pipeline")]
    output: Option<PathBuf>,
    /// Print the pass pipeline this compile runs (for --emit artifact or mlir) as one
    /// line on stdout and exit, writing nothing: `tpuc opt --pass-pipeline=LINE` on the
    /// `--emit aten` module replays it. With -v, also each phase and its passes on
    /// stderr.
    #[arg(long)]
    print_pipeline: bool,
    /// Compilation target: tpu (portable StableHLO for TPUs and any PJRT plugin), or a
    /// Neuron device: trn1, trn2, trn3, inf2 (the program legalized for AWS Trainium /
    /// Inferentia, written also as the XLA HLO `neuronx-cc` compiles, model.hlo.pb, with
    /// the neuronx-cc command in the manifest; `tpuc run` checks it on the CPU).
    #[arg(long, default_value = "tpu")]
    target: String,
    /// Neuron targets: cast f32 matmul and convolution inputs to bf16 or fp16 in the
    /// program, as neuronx-cc's --auto-cast does (none keeps PyTorch's f32 numbers; the
    /// default). The neuronx-cc command then casts nothing more.
    #[arg(long, default_value = "none", value_parser = ["none", "bf16", "fp16"])]
    auto_cast: String,
    /// Neuron targets: keep 64-bit integers inside the program instead of narrowing
    /// them to 32 bits (Neuron devices compute integers in 32 bits).
    #[arg(long)]
    keep_int64: bool,
    /// What to write: "artifact" (default), "mlir" (the StableHLO module only) or
    /// "aten" (the imported ATen-level module, with node locations).
    #[arg(long, default_value = "artifact")]
    emit: String,
    /// For a bare model.json (no weights): make parameters and buffers user inputs
    /// instead of writing zeros.
    #[arg(long)]
    weights_as_inputs: bool,
    /// Optimization level: 0 (lowering only), 1 (StableHLO cleanup: dead code,
    /// identical ops merged), 2 (also constants folded, exact simplification,
    /// transposes folded into matmuls, softmax, norms, GELU, SiLU and attention
    /// as stablehlo.composite ops, and in an unsharded artifact the weights of
    /// matmuls of one input, such as Q/K/V projections, stored packed as one matmul;
    /// the default).
    #[arg(short = 'O', default_value = "2", value_parser = ["0", "1", "2"])]
    opt_level: String,
    /// Print the module (with node locations) to stderr after these passes
    /// (comma-separated names from `tpuc opt --list-passes`, or `all`).
    #[arg(long, value_name = "PASS", value_delimiter = ',')]
    print_ir_after: Vec<String>,
    /// Print the wall time of every stage to stderr (read, import, each pass,
    /// print, write) and the peak memory of the process.
    #[arg(long)]
    timing: bool,
    /// Precision of f32 matmuls and convolutions: highest (full f32, PyTorch's
    /// numbers; the default), high (three bf16 passes on a TPU) or default (one
    /// bf16 pass on a TPU: fastest, about bf16 accuracy). Recorded in the manifest.
    #[arg(long, default_value = "highest", value_parser = ["default", "high", "highest"])]
    matmul_precision: String,
    /// Partition the program over a device mesh of named axes: `dp=2`, `dp=2,tp=4`
    /// (devices numbered row-major, the last axis fastest). Needs --shard.
    #[arg(long, value_name = "AXES")]
    mesh: Option<String>,
    /// Sharding strategies, comma-separated: data-parallel (the batch dimension of
    /// the inputs on the mesh axis `dp`: the first input's first dimension, and every
    /// input whose first dimension has that size), fsdp (every parameter split on the
    /// mesh axis `fsdp`, gathered where used), megatron (tensor parallel on `tp`: Linear
    /// pairs column- then row-parallel, embeddings vocabulary-parallel), expert (expert
    /// parallel on `ep`: the expert dimension of mixture-of-experts layers' fused expert
    /// weights split, each device holding its share of the experts). A stateful
    /// program's state (a KV cache) is split like the values written into it.
    #[arg(long, value_name = "STRATEGIES", value_delimiter = ',')]
    shard: Vec<String>,
    /// Shardings for weights by state-dict name, applied after --shard: one
    /// `PATTERN SHARDING` per line (`model.layers.*.self_attn.q_proj.weight [tp, -]`;
    /// `*` any characters, `-` a whole dimension, `#` comments); `mesh: AXES` and
    /// `shard: STRATEGIES` lines stand for --mesh and --shard (`tpuc plan
    /// --write-rules` writes them).
    #[arg(long, value_name = "FILE")]
    sharding_rules: Option<PathBuf>,
    /// How the shardings are written in the program: shardy (sdy, the default) or
    /// gspmd (mhlo.sharding strings).
    #[arg(long, default_value = "shardy", value_parser = ["shardy", "gspmd"])]
    sharding_format: String,
    /// Partition the program as `tpuc plan` would choose for the (first) --topology:
    /// the best plan that fits, found by compiling candidates (instead of --mesh,
    /// --shard and --sharding-rules).
    #[arg(long, conflicts_with_all = ["mesh", "shard", "sharding_rules"])]
    auto_shard: bool,
    /// Also compile the program for these TPU slices with libtpu, no TPU needed
    /// (comma-separated: `v5e:2x2`, `v6e:1x1`; `tpuc devices --topologies` lists the
    /// forms): the artifact gains each serialized TPU executable and XLA's per-chip
    /// memory and cost figures (`tpuc report`).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    topology: Vec<String>,
    /// libtpu to compile with (default: $TPUC_LIBTPU, then .deps/libtpu/libtpu.so from
    /// `make setup`, then pip's libtpu).
    #[arg(long, value_name = "PATH")]
    libtpu: Option<PathBuf>,
    /// For a program exported with `dynamic_shapes`: also compile it ahead of time for
    /// these sizes (repeatable; `--specialize s77=8` or `--specialize s43=2,s53=64` for
    /// programs with several sizes). The example inputs' sizes are always compiled; the
    /// full `tpuc run` specializes any other size in range on demand, the runtime-only
    /// one runs only the sizes compiled here. `tpuc inspect` lists the sizes.
    /// With `--emit mlir` or `--emit aten`: the one size to emit.
    #[arg(long, value_name = "SIZES")]
    specialize: Vec<String>,
    /// Also return every value the graph computes, each named by the node that computed
    /// it (after the program's own outputs; listed in the manifest's `debug_values`), for
    /// `tpuc diverge`. Keeps every intermediate alive: for debugging, not deployment.
    #[arg(long)]
    debug_outputs: bool,
    #[command(flatten)]
    train: TrainFlags,
}

/// `tpuc compile --train`'s flags: the optimizer compiled into a training step.
#[derive(clap::Args)]
#[command(next_help_heading = "Training (--train)")]
pub struct TrainFlags {
    /// Compile a joint forward + backward program (torch.export.experimental.
    /// _export_forward_backward of a forward returning `(loss,)`) with its optimizer into
    /// one training step: forward, backward and update in one executable, parameters,
    /// optimizer state and buffers kept on the device (`tpuc train` runs it). The
    /// step returns the loss, the gradient norm and the learning rate.
    #[arg(long)]
    train: bool,
    /// adamw (torch.optim.AdamW, the default), adam (torch.optim.Adam: L2 weight decay)
    /// or sgd (torch.optim.SGD); torch.optim's update formulas and defaults.
    #[arg(long, value_name = "NAME")]
    optimizer: Option<String>,
    /// Learning rate (torch.optim's default 1e-3).
    #[arg(long, value_name = "LR", allow_negative_numbers = true)]
    lr: Option<f64>,
    /// Adam/AdamW: `BETA1,BETA2` (default 0.9,0.999), each in [0, 1).
    #[arg(long, value_name = "B1,B2")]
    betas: Option<String>,
    /// Adam/AdamW: the denominator's epsilon (default 1e-8).
    #[arg(long, value_name = "EPS", allow_negative_numbers = true)]
    eps: Option<f64>,
    /// Weight decay (default: 0.01 for adamw, decoupled; 0 for adam and sgd, added to
    /// the gradient).
    #[arg(long, value_name = "WD", allow_negative_numbers = true)]
    weight_decay: Option<f64>,
    /// SGD: momentum (default 0: no momentum buffer).
    #[arg(long, value_name = "M", allow_negative_numbers = true)]
    momentum: Option<f64>,
    /// SGD: dampening of the momentum (default 0).
    #[arg(long, value_name = "D", allow_negative_numbers = true)]
    dampening: Option<f64>,
    /// SGD: Nesterov momentum (needs --momentum > 0 and --dampening 0).
    #[arg(long)]
    nesterov: bool,
    /// Clip the gradients' total 2-norm to MAX before each update, as
    /// torch.nn.utils.clip_grad_norm_ (the reported norm is before clipping).
    #[arg(long, value_name = "MAX", allow_negative_numbers = true)]
    clip_grad_norm: Option<f64>,
    /// Learning-rate schedule, computed on the device from the step counter: constant
    /// (the default), warmup-cosine or warmup-linear. With `s` steps before it, a step
    /// uses `lr * f(s)`: `(s + 1) / W` while `s < W`, then
    /// `R + (1 - R) * 0.5 * (1 + cos(pi * (s - W) / (T - W)))` (cosine) or
    /// `R + (1 - R) * (T - s) / (T - W)` (linear), and `R` from `s >= T` on: what
    /// LambdaLR(opt, f) gives with scheduler.step() after each optimizer.step().
    #[arg(long, value_name = "KIND", value_parser = ["constant", "warmup-cosine", "warmup-linear"])]
    schedule: Option<String>,
    /// The schedule's W.
    #[arg(long, value_name = "W")]
    warmup_steps: Option<u64>,
    /// The schedule's T.
    #[arg(long, value_name = "T")]
    total_steps: Option<u64>,
    /// The schedule's R (default 0).
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    min_lr_ratio: Option<f64>,
    /// Keep the parameters whose state-dict names match PATTERN fixed (`*` any
    /// characters, `?` one; repeatable): no update, no optimizer state, not clipped.
    #[arg(long, value_name = "PATTERN")]
    freeze: Vec<String>,
}

impl TrainFlags {
    /// The training request, or `None` without `--train` (then no training flag may
    /// be given).
    fn options(&self) -> Result<Option<tpuc_compiler::training::TrainOptions>, String> {
        let betas = match &self.betas {
            None => None,
            Some(b) => Some(tpuc_runtime::training::parse_betas(b).ok_or_else(|| {
                format!("--betas: `{b}` is not `BETA1,BETA2` (for example 0.9,0.95)")
            })?),
        };
        tpuc_compiler::training::TrainSettings {
            train: self.train,
            optimizer: self.optimizer.clone(),
            lr: self.lr,
            betas,
            eps: self.eps,
            weight_decay: self.weight_decay,
            momentum: self.momentum,
            dampening: self.dampening,
            nesterov: self.nesterov,
            clip_grad_norm: self.clip_grad_norm,
            schedule: self.schedule.clone(),
            warmup_steps: self.warmup_steps,
            total_steps: self.total_steps,
            min_lr_ratio: self.min_lr_ratio,
            freeze: self.freeze.clone(),
        }
        .resolve("--")
    }
}

/// The mesh, strategies and format of `tpuc compile`'s sharding flags (a rules file
/// may name the mesh and strategies itself, as `tpuc plan --write-rules` writes it).
fn sharding_request(args: &CompileArgs) -> Result<Option<tpuc_compiler::ShardingRequest>, String> {
    tpuc_compiler::ShardingSettings {
        mesh: args.mesh.clone(),
        shard: args.shard.clone(),
        sharding_rules: args.sharding_rules.clone(),
        sharding_format: Some(args.sharding_format.clone()),
    }
    .resolve("--")
}

/// Seconds the TPU compile step took (libtpu's part of `--timing`).
type StepSeconds = std::sync::Arc<std::sync::Mutex<f64>>;

/// `--topology`: the TPU compile run on the artifact before it is moved into place;
/// the time it takes is added to `seconds`.
fn tpu_step(
    args: &CompileArgs,
    seconds: StepSeconds,
) -> Result<Option<tpuc_compiler::FinishFn>, String> {
    if args.topology.is_empty() {
        if args.libtpu.is_some() {
            return Err(
                "--libtpu is used with --topology (for example `--topology v5e:2x2`)".into(),
            );
        }
        return Ok(None);
    }
    if args.emit != "artifact" {
        return Err(format!(
            "--topology compiles an artifact's program; it cannot be used with --emit {}",
            args.emit
        ));
    }
    // Whether the target takes TPU executables is the target's to say
    // (tpuc_compiler::targets::check_request).
    let topologies = args.topology.clone();
    let libtpu = args.libtpu.clone();
    Ok(Some(std::sync::Arc::new(
        move |dir: &Path, manifest: &mut tpuc_runtime::manifest::Manifest, program: &str| {
            let start = std::time::Instant::now();
            let result = tpuc_runtime::tpu::compile_for_topologies(
                dir,
                manifest,
                program,
                &topologies,
                libtpu.as_deref(),
                &|line| errln!("{line}"),
            );
            if let Ok(mut s) = seconds.lock() {
                *s += start.elapsed().as_secs_f64();
            }
            result
        },
    )))
}

pub fn compile(args: &CompileArgs, verbose: bool) -> Result<ExitCode, String> {
    let model = args.model.as_path();
    let known: Vec<&str> = tpuc_compiler::passes::names();
    if let Some(bad) = args
        .print_ir_after
        .iter()
        .find(|p| *p != "all" && !known.contains(&p.as_str()))
    {
        return Err(format!(
            "--print-ir-after: unknown pass `{bad}`; known passes: {}, or all",
            known.join(", ")
        ));
    }
    let target = Target::parse(&args.target).map_err(|e| e.to_string())?;
    if target.neuron_chip().is_none() && (args.auto_cast != "none" || args.keep_int64) {
        return Err(format!(
            "--auto-cast and --keep-int64 are for Neuron targets (trn1, trn2, trn3, inf2), not `{}`",
            args.target
        ));
    }
    let libtpu_seconds = StepSeconds::default();
    let options = CompileOptions {
        target,
        neuron: tpuc_compiler::targets::neuron::NeuronOptions {
            auto_cast: tpuc_compiler::targets::neuron::AutoCast::parse(&args.auto_cast)
                .unwrap_or_default(),
            narrow_int64: !args.keep_int64,
        },
        missing_weights: if args.weights_as_inputs {
            MissingWeights::AsInputs
        } else {
            MissingWeights::ZeroFill
        },
        progress: if args.emit == "artifact" {
            terminal_progress()
        } else {
            None
        },
        opt_level: OptLevel::parse(&args.opt_level).unwrap_or_default(),
        matmul_precision: MatmulPrecision::parse(&args.matmul_precision).unwrap_or_default(),
        sharding: sharding_request(args)?,
        print_ir_after: args.print_ir_after.clone(),
        on_ir: Some(std::sync::Arc::new(|pass: &str, ir: &str| {
            errln!("// ----- IR after {pass} -----\n{ir}");
        })),
        finish: tpu_step(args, libtpu_seconds.clone())?,
        specialize: args
            .specialize
            .iter()
            .map(|s| {
                tpuc_runtime::symbolic::parse_bindings(s).map_err(|e| format!("--specialize: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?,
        debug_outputs: args.debug_outputs,
        training: args.train.options()?,
        ..CompileOptions::default()
    };
    let mut options = options;
    if args.auto_shard {
        let topology = args
            .topology
            .first()
            .ok_or("--auto-shard plans for a TPU slice: give --topology (for example `--topology v5e:2x4`)")?;
        let base = CompileOptions {
            finish: None,
            progress: None,
            on_ir: None,
            print_ir_after: Vec::new(),
            ..options.clone()
        };
        options.sharding = Some(crate::plan_cmd::auto_shard(
            model,
            topology,
            args.libtpu.as_deref(),
            &base,
            &args.sharding_format,
        )?);
    }
    if args.print_pipeline {
        let emit = match args.emit.as_str() {
            "artifact" => tpuc_compiler::Emit::Artifact,
            "mlir" => tpuc_compiler::Emit::Text,
            other => {
                return Err(format!(
                    "--print-pipeline prints the pipeline of --emit artifact or mlir; --emit {other} runs none"
                ))
            }
        };
        let pipeline =
            tpuc_compiler::compile_pipeline(model, &options, emit).map_err(|e| e.to_string())?;
        outln!("{}", pipeline.text());
        if verbose {
            errln!("{}", pipeline.describe());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let output = args
        .output
        .as_deref()
        .ok_or("--output is required (an artifact directory, or a .mlir file for --emit mlir)")?;
    let timings = match args.emit.as_str() {
        "mlir" => {
            let (text, timings) =
                tpuc_compiler::compile_to_mlir(model, &options).map_err(|e| e.to_string())?;
            write_text_output(model, output, &text)?;
            timings
        }
        "aten" => {
            let text = tpuc_compiler::compile_to_aten_mlir_with(model, &options)
                .map_err(|e| e.to_string())?;
            write_text_output(model, output, &text)?;
            Vec::new()
        }
        "artifact" => {
            let report =
                tpuc_compiler::compile(model, output, &options).map_err(|e| e.to_string())?;
            errln!(
                "compiled {} ({} nodes, {} weights, {} bytes) -> {}",
                model.display(),
                report.num_nodes,
                report.num_weights,
                report.weight_bytes,
                report.output.display()
            );
            if let Some(d) = &report.dynamic {
                errln!("{d}");
            }
            for w in &report.warnings {
                errln!("warning: {w}");
            }
            if report.zero_filled > 0 {
                errln!(
                    "warning: {} weights were not in the source (bare model.json) and were written as zeros; \
                     use --weights-as-inputs to pass them at run time",
                    report.zero_filled
                );
            }
            report.timings
        }
        other => {
            return Err(format!(
                "unknown --emit `{other}` (expected artifact, mlir or aten)"
            ))
        }
    };
    if args.timing {
        // The TPU compile runs inside the artifact's write: shown apart, as libtpu's.
        let libtpu = libtpu_seconds.lock().map(|s| *s).unwrap_or(0.0);
        let mut timings = timings;
        if libtpu > 0.0 {
            if let Some(write) = timings.iter_mut().find(|t| t.stage == "write") {
                write.seconds = (write.seconds - libtpu).max(0.0);
            }
        }
        let total: f64 = timings.iter().map(|t| t.seconds).sum::<f64>() + libtpu;
        errln!("timing (wall clock):");
        for t in &timings {
            errln!(
                "  {:<28} {:>9.3} ms  {:>5.1}%",
                t.stage,
                t.seconds * 1e3,
                100.0 * t.seconds / total.max(f64::MIN_POSITIVE)
            );
        }
        if libtpu > 0.0 {
            errln!("  {:<28} {:>9.3} ms", "tpuc total", (total - libtpu) * 1e3);
            errln!(
                "  {:<28} {:>9.3} ms  {:>5.1}%",
                format!("libtpu ({})", args.topology.join(", ")),
                libtpu * 1e3,
                100.0 * libtpu / total.max(f64::MIN_POSITIVE)
            );
        }
        errln!("  {:<28} {:>9.3} ms", "total", total * 1e3);
        if let Some(bytes) = peak_resident_bytes() {
            errln!(
                "  {:<28} {:>9.1} MiB",
                "peak memory (VmHWM)",
                bytes as f64 / 1048576.0
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The process's peak resident set size (Linux `VmHWM`), when the system says.
fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

pub fn opt(
    file: Option<PathBuf>,
    pass_pipeline: &str,
    debug_locations: bool,
    list_passes: bool,
    emit_hlo: Option<Option<&Path>>,
) -> Result<ExitCode, String> {
    if list_passes {
        for p in tpuc_compiler::passes::registry() {
            outln!("{:28} {}", p.name(), p.description());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let file = file.ok_or("an input .mlir file is required (\"-\" reads stdin)")?;
    let text = if file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| e.to_string())?;
        s
    } else {
        std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read `{}`: {e}", file.display()))?
    };
    if let Some(proto_path) = emit_hlo {
        if proto_path.is_some_and(|p| p == file) {
            return Err(format!(
                "--hlo-proto would overwrite the input `{}`",
                file.display()
            ));
        }
        let (hlo_text, proto) =
            tpuc_compiler::run_opt_to_hlo(&text, &file.display().to_string(), pass_pipeline)
                .map_err(|e| e.to_string())?;
        if let Some(proto_path) = proto_path {
            std::fs::write(proto_path, proto)
                .map_err(|e| format!("cannot write `{}`: {e}", proto_path.display()))?;
        }
        out!("{hlo_text}");
        return Ok(ExitCode::SUCCESS);
    }
    let out = tpuc_compiler::run_opt(
        &text,
        &file.display().to_string(),
        pass_pipeline,
        debug_locations,
    )
    .map_err(|e| e.to_string())?;
    out!("{out}");
    Ok(ExitCode::SUCCESS)
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
            tpuc_compiler::Progress::Loading => err!("\rreading model..."),
            tpuc_compiler::Progress::Lowering => err!("\rlowering to StableHLO..."),
            tpuc_compiler::Progress::Weights { done, total } => {
                let pct = (done * 100).checked_div(total).unwrap_or(100);
                if last.swap(pct, Ordering::Relaxed) != pct {
                    err!(
                        "\rwriting weights: {:.1} / {:.1} MB ({pct}%)   ",
                        done as f64 / 1e6,
                        total as f64 / 1e6
                    );
                }
            }
            tpuc_compiler::Progress::Done => err!("\r\x1b[2K"),
        },
    ))
}

/// Writes `--emit mlir` output without ever replacing the input model.
fn write_text_output(model: &Path, output: &Path, text: &str) -> Result<(), String> {
    if output.as_os_str() == "-" {
        out!("{text}");
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
    // A device, FIFO or socket (`-o /dev/null`, `-o >(cmd)`) is written into: renaming
    // a temporary file over it would replace the node itself (as root, /dev/null).
    if std::fs::metadata(output).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(output)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
            .map_err(|e| format!("cannot write `{}`: {e}", output.display()));
    }
    let tmp = output.with_extension("mlir.tpuc-tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, output).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write `{}`: {e}", output.display())
    })
}

pub fn inspect(model: &Path) -> Result<ExitCode, String> {
    let m = tpuc_compiler::frontend::load(model).map_err(|e| e.to_string())?;
    let g = &m.graph;
    outln!("model: {}", model.display());
    outln!("schema: {}.{}", g.schema_version.0, g.schema_version.1);
    outln!(
        "weights: {}",
        if m.has_weights() {
            "in the archive"
        } else {
            "none (bare model.json)"
        }
    );
    // Of a dynamic program: its sizes, and the user inputs' and outputs' dimensions
    // as expressions over them.
    let symbolic = |list: &[(String, Vec<tpuc_runtime::symbolic::Dim>)], name: &str| {
        list.iter()
            .find(|(n, _)| n == name)
            .map(|(_, dims)| tpuc_runtime::symbolic::describe_dims(dims))
    };
    let dims = |name: &str, shape: &[i64], outputs: bool| {
        m.dynamic
            .as_ref()
            .and_then(|d| {
                let sig = &d.signature;
                symbolic(if outputs { &sig.outputs } else { &sig.inputs }, name)
            })
            .unwrap_or_else(|| format!("{shape:?}"))
    };
    if let Some(d) = &m.dynamic {
        outln!("dynamic sizes (tpuc compile --specialize NAME=SIZE):");
        for s in &d.signature.symbols {
            outln!(
                "  {:<8} {:<10} example {:<6} {}",
                s.name,
                s.range(),
                s.hint.map_or("-".to_string(), |h| h.to_string()),
                d.describe_symbol(&s.name)
                    .strip_prefix(&s.name)
                    .unwrap_or("")
                    .trim()
            );
        }
    }
    let mut params = 0u64;
    outln!("inputs:");
    for spec in &g.inputs {
        let meta = &g.tensors[&spec.name];
        let n: i64 = meta.shape.iter().product();
        if spec.kind != tpuc_compiler::frontend::InputKind::UserInput {
            params += n as u64;
        }
        outln!(
            "  {:<40} {:<10} {} {:?}{}",
            spec.name,
            meta.dtype.name(),
            dims(&spec.name, &meta.shape, false),
            spec.kind,
            spec.target
                .as_ref()
                .map(|t| format!(" ({t})"))
                .unwrap_or_default()
        );
    }
    match &g.joint {
        Some(_) => outln!("outputs (a joint forward + backward program: `tpuc compile --train`):"),
        None => outln!("outputs:"),
    }
    for (i, o) in g.outputs.iter().enumerate() {
        let meta = &g.tensors[o];
        // Of a joint program: the loss, then each parameter's gradient.
        let role = match (&g.joint, i) {
            (Some(_), 0) => " loss".to_string(),
            (Some(j), i) => {
                let p = &j.parameters[i - 1];
                let key = g
                    .inputs
                    .iter()
                    .find(|s| &s.name == p)
                    .and_then(|s| s.target.clone())
                    .unwrap_or_else(|| p.clone());
                format!(" gradient of {key}")
            }
            _ => String::new(),
        };
        outln!(
            "  {:<40} {:<10} {}{role}",
            o,
            meta.dtype.name(),
            dims(o, &meta.shape, true)
        );
    }
    outln!("parameters and buffers: {params} elements");
    match &m.dynamic {
        Some(d) => outln!(
            "ops ({} nodes at the example sizes {}):",
            g.nodes.len(),
            tpuc_runtime::symbolic::describe_bindings(&d.sizes)
        ),
        None => outln!("ops ({} nodes):", g.nodes.len()),
    }
    for (target, count) in g.op_counts() {
        outln!("  {target:<50} {count}");
    }
    let ctx = tpuc_compiler::new_context();
    match tpuc_compiler::lower_to_stablehlo(&ctx, &m) {
        Ok(_) => outln!("status: every op lowers to StableHLO"),
        Err(e) => outln!("status: does not compile yet:\n{e}"),
    }
    Ok(ExitCode::SUCCESS)
}
