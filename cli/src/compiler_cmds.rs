//! `tpuc compile`, `tpuc opt` and `tpuc inspect`: the commands that need the compiler
//! (and with it MLIR/LLVM). Built only with the `compiler` feature (the default).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tpuc_compiler::{CompileOptions, MissingWeights, Target};

pub fn compile(
    model: &Path,
    output: &Path,
    target: &str,
    emit: &str,
    weights_as_inputs: bool,
) -> Result<ExitCode, String> {
    let target = Target::parse(target).map_err(|e| e.to_string())?;
    match emit {
        "mlir" => {
            let text = tpuc_compiler::compile_to_mlir(model).map_err(|e| e.to_string())?;
            write_text_output(model, output, &text)?;
        }
        "aten" => {
            let text = tpuc_compiler::compile_to_aten_mlir(model).map_err(|e| e.to_string())?;
            write_text_output(model, output, &text)?;
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
                ..CompileOptions::default()
            };
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
            if report.zero_filled > 0 {
                errln!(
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

pub fn opt(
    file: Option<PathBuf>,
    pass_pipeline: &str,
    debug_locations: bool,
    list_passes: bool,
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
    let mut params = 0u64;
    outln!("inputs:");
    for spec in &g.inputs {
        let meta = &g.tensors[&spec.name];
        let n: i64 = meta.shape.iter().product();
        if spec.kind != tpuc_compiler::frontend::InputKind::UserInput {
            params += n as u64;
        }
        outln!(
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
    outln!("outputs:");
    for o in &g.outputs {
        let meta = &g.tensors[o];
        outln!("  {:<40} {:<10} {:?}", o, meta.dtype.name(), meta.shape);
    }
    outln!("parameters and buffers: {params} elements");
    outln!("ops ({} nodes):", g.nodes.len());
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
