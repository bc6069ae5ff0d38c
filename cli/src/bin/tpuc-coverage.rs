//! `tpuc-coverage` (run by `make coverage`): compiles, runs and compares the op-level
//! suites (Core ATen and as-exported) and the model corpora on the CPU PJRT plugin and
//! writes COVERAGE.md, with the summary of the causal-LM family's report.

#[macro_use]
extern crate tpuc_cli;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tpuc_cli::coverage;
use tpuc_runtime::{ClientOptions, Plugin};

#[derive(Parser)]
#[command(
    about = "Measure tpuc's coverage: Core ATen op cases and model corpora, compiled, run on the CPU PJRT plugin and compared with PyTorch"
)]
struct Args {
    /// The op-level suite (index.json + cases/).
    #[arg(long, default_value = "testdata/ops")]
    ops: PathBuf,
    /// The as-exported op suite (skipped when it has no index.json).
    #[arg(long, default_value = "testdata/ops/exported")]
    exported_ops: PathBuf,
    /// The causal-LM family's report (scripts/causal_lm_coverage.py), whose summary
    /// COVERAGE.md repeats when the file exists.
    #[arg(long, default_value = "COVERAGE-causal-lm.md")]
    causal_lm: PathBuf,
    /// Model corpora (each a folder with index.json and one folder per model).
    #[arg(long = "models", default_values = ["testdata/models", "testdata/coverage/models"])]
    models: Vec<PathBuf>,
    /// Where to write the report.
    #[arg(long, default_value = "COVERAGE.md")]
    out: PathBuf,
    /// PJRT plugin (default: discovery, as `tpuc run`).
    #[arg(long)]
    plugin: Option<PathBuf>,
    /// The command line recorded in the report.
    #[arg(long, default_value = "make coverage")]
    command: String,
    /// Compile for this target (`tpuc compile --target`): trn2 runs every program as
    /// the HLO of its Neuron artifact.
    #[arg(long, default_value = "tpu")]
    target: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    tpuc_runtime::plugin_logging::configure(false);
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let plugin_path =
        tpuc_runtime::discover::find_plugin(args.plugin.as_deref()).map_err(|e| e.to_string())?;
    let plugin = Plugin::load(&plugin_path).map_err(|e| e.to_string())?;
    let client = plugin
        .create_client(&ClientOptions::cpu(1))
        .map_err(|e| e.to_string())?;
    let scratch = std::env::temp_dir().join(format!("tpuc-coverage-{}", std::process::id()));
    let cache = scratch.join("cache");
    std::fs::create_dir_all(&cache).map_err(|e| e.to_string())?;

    let options = tpuc_compiler::CompileOptions {
        target: tpuc_compiler::Target::parse(&args.target).map_err(|e| e.to_string())?,
        ..Default::default()
    };
    let runner = coverage::Runner {
        client: &client,
        options: &options,
        cache_dir: &cache,
        tolerance_floor: None,
    };
    let suite = if args.ops.join("index.json").is_file() {
        coverage::read_op_suite(&args.ops)?
    } else {
        errln!("skipping op cases: no {}/index.json", args.ops.display());
        coverage::OpSuite {
            known_failures: Default::default(),
            core_overloads: vec![],
            cases: vec![],
            excluded: vec![],
        }
    };
    let ops = coverage::run_op_suite(&runner, &suite, &scratch, |i, n, c| {
        if i % 50 == 0 {
            errln!("op cases: {i}/{n} ({})", c.id);
        }
    });
    let exported_suite = if args.target == "tpu" && args.exported_ops.join("index.json").is_file() {
        Some(coverage::read_op_suite(&args.exported_ops)?)
    } else {
        None
    };
    let exported = match &exported_suite {
        Some(s) => coverage::run_op_suite(&runner, s, &scratch, |i, n, c| {
            if i % 20 == 0 {
                errln!("as-exported op cases: {i}/{n} ({})", c.id);
            }
        }),
        None => Vec::new(),
    };
    let causal_lm = if args.target == "tpu" {
        std::fs::read_to_string(&args.causal_lm)
            .ok()
            .and_then(|t| coverage::summary_section(&t))
            .map(|s| (args.causal_lm.display().to_string(), s))
    } else {
        None
    };
    let extra = coverage::Extra {
        exported: exported_suite.as_ref().map(|s| (s, exported.as_slice())),
        causal_lm,
    };
    let mut corpora = Vec::new();
    for root in &args.models {
        if !root.join("index.json").is_file() {
            errln!("skipping {}: no index.json", root.display());
            continue;
        }
        let results = coverage::run_models(&runner, root, &scratch, |i, n, name| {
            errln!("models in {}: {i}/{n} ({name})", root.display());
        })?;
        corpora.push((root.display().to_string(), results));
    }
    let text = coverage::render(&suite, &ops, &corpora, &extra, &args.command, &args.target);
    std::fs::write(&args.out, text).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let _ = std::fs::remove_dir_all(&scratch);
    errln!("wrote {}", args.out.display());
    Ok(())
}
