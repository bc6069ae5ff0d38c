//! The `tpuc` binary: exit codes and messages users see.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn tpuc(args: &[&str]) -> (bool, String, String) {
    tpuc_env(args, &[])
}

fn tpuc_env(args: &[&str], env: &[(&str, &Path)]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tpuc"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(repo())
        .output()
        .expect("tpuc runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// The `.npy` files of `dir` in the order of their leading index (`0_x.npy`, `1_y.npy`).
#[cfg(feature = "compiler")]
fn sorted_npy(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .collect();
    v.sort_by_key(|p| {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        stem.split('_').next().unwrap().parse::<usize>().unwrap()
    });
    v
}

fn temp(tag: &str) -> PathBuf {
    let d = repo()
        .join("target/test-tmp")
        .join(format!("cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn help_explains_the_commands() {
    let (ok, out, _) = tpuc(&["--help"]);
    assert!(ok);
    for cmd in ["compile", "opt", "inspect", "run", "devices", "bench"] {
        assert!(out.contains(cmd), "{out}");
    }
    let (ok, out, _) = tpuc(&["compile", "--help"]);
    assert!(
        ok && out.contains("--emit") && out.contains("torch.export.save"),
        "{out}"
    );
}

#[test]
fn compile_and_run_match_pytorch() {
    let dir = temp("run");
    let art = dir.join("mlp.tpuc");
    let art = art.to_str().unwrap();
    let (ok, _, err) = tpuc(&["compile", "testdata/models/mlp/exported.pt2", "-o", art]);
    assert!(ok, "{err}");
    let (ok, out, err) = tpuc(&[
        "run",
        art,
        "--input",
        "testdata/models/mlp/inputs/0_input.npy",
        "--expect",
        "testdata/models/mlp/expected/0.npy",
    ]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("max_abs_error") && out.contains("OK"), "{out}");

    // Against the wrong reference it reports the distance and exits non-zero.
    let (ok, out, _) = tpuc(&[
        "run",
        art,
        "--input",
        "testdata/models/mlp/inputs/0_input.npy",
        "--expect",
        "testdata/models/mlp/inputs/0_input.npy",
    ]);
    assert!(!ok);
    assert!(!out.contains(" OK"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_exits_non_zero_with_the_file_named() {
    let dir = temp("bad");
    let bogus = dir.join("bogus.pt2");
    std::fs::write(&bogus, b"not an archive").unwrap();
    let (ok, _, err) = tpuc(&[
        "compile",
        bogus.to_str().unwrap(),
        "-o",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.starts_with("error: ") && err.contains("bogus.pt2"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    let (ok, _, err) = tpuc(&[
        "compile",
        "does/not/exist.pt2",
        "-o",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(
        !ok && err.contains("cannot read `does/not/exist.pt2`"),
        "{err}"
    );

    let (ok, _, err) = tpuc(&["opt", "Cargo.toml", "--pass-pipeline=no-such-pass"]);
    assert!(!ok && err.contains("unknown pass `no-such-pass`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inspect_lists_ops_and_status() {
    let (ok, out, err) = tpuc(&["inspect", "testdata/models/cnn/core.pt2"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("aten.convolution.default") && out.contains("every op lowers"),
        "{out}"
    );
}

#[test]
fn devices_lists_the_cpu_plugin() {
    let (ok, out, err) = tpuc(&["devices"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("pjrt_c_api_cpu_plugin.so"), "{out}");
    assert!(
        out.contains("PJRT C API:") && out.contains("StableHLO:"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("platform:") && l.contains("cpu")),
        "{out}"
    );
    assert!(out.contains("id 0"), "{out}");

    // A file that is not a plugin is listed with its error, after which the real plugin
    // is still listed and the command succeeds.
    let (ok, out, err) = tpuc(&["devices", "--plugin", "Cargo.toml"]);
    assert!(ok, "{out}\n{err}");
    let first = out.split("\n\n").next().unwrap();
    assert!(
        first.contains("Cargo.toml (--plugin)") && first.contains("error:"),
        "{out}"
    );
    assert!(out.contains("platform:"), "{out}");
    assert!(
        !err.contains("panicked") && !err.contains("internal error"),
        "{err}"
    );
}

#[test]
fn bench_reports_percentiles_and_throughput() {
    let dir = temp("bench");
    let cache = dir.join("cache");
    let art = dir.join("mlp.tpuc");
    let art = art.to_str().unwrap();
    let (ok, _, err) = tpuc(&["compile", "testdata/models/mlp/exported.pt2", "-o", art]);
    assert!(ok, "{err}");
    let env = [("TPUC_CACHE_DIR", cache.as_path())];

    // Generated inputs, both modes; the first load compiles and fills the cache.
    let (ok, out, err) = tpuc_env(&["bench", art, "--iterations", "20", "--warmup", "2"], &env);
    assert!(ok, "{out}\n{err}");
    for needle in [
        "p50",
        "p90",
        "p99",
        "min",
        "mean",
        "calls/s",
        "resident",
        "upload per call",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    assert!(out.contains("compiled and stored in the cache"), "{out}");

    // The second load finds the executable in the cache; inputs from .npy, one mode.
    let (ok, out, err) = tpuc_env(
        &[
            "bench",
            art,
            "--input",
            "testdata/models/mlp/inputs/0_input.npy",
            "--iterations",
            "5",
            "--resident",
        ],
        &env,
    );
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("loaded from the cache"), "{out}");
    assert!(
        out.contains("p50") && !out.contains("upload per call"),
        "{out}"
    );

    // Bad input: the wrong number of inputs is a clear error, not a crash.
    let (ok, _, err) = tpuc_env(
        &[
            "bench",
            art,
            "--input",
            "testdata/models/mlp/inputs/0_input.npy",
            "--input",
            "testdata/models/mlp/inputs/0_input.npy",
            "--iterations",
            "1",
            "--no-cache",
        ],
        &env,
    );
    assert!(
        !ok && err.contains("error: ") && err.contains("input"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 3's bar: every corpus model, compiled by `tpuc compile`, runs through
/// `tpuc run --expect` and matches PyTorch's outputs (dtype-aware default tolerances).
#[cfg(feature = "compiler")]
#[test]
fn every_corpus_model_passes_tpuc_run_expect() {
    let index = std::fs::read_to_string(repo().join("testdata/models/index.json")).unwrap();
    let index: serde_json::Value = serde_json::from_str(&index).unwrap();
    let dir = temp("corpus");
    let mut failures = Vec::new();
    for name in index["models"].as_array().unwrap() {
        let name = name.as_str().unwrap();
        let model_dir = repo().join("testdata/models").join(name);
        for form in ["exported", "core"] {
            let art = dir.join(format!("{name}-{form}.tpuc"));
            let model = model_dir.join(format!("{form}.pt2"));
            let (ok, _, err) = tpuc(&[
                "compile",
                model.to_str().unwrap(),
                "-o",
                art.to_str().unwrap(),
            ]);
            if !ok {
                failures.push(format!("{name}/{form}: compile: {err}"));
                continue;
            }
            let mut args = vec!["run".to_string(), art.to_string_lossy().to_string()];
            for p in sorted_npy(&model_dir.join("inputs")) {
                args.extend(["--input".to_string(), p.to_string_lossy().to_string()]);
            }
            for p in sorted_npy(&model_dir.join("expected")) {
                args.extend(["--expect".to_string(), p.to_string_lossy().to_string()]);
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (ok, out, err) = tpuc(&refs);
            if !ok || out.contains("FAIL") {
                failures.push(format!("{name}/{form}: run: {out}\n{err}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The op-level suite (testdata/ops): every Core ATen case compiles, runs on the CPU
/// plugin and matches PyTorch, except the cases listed with a reason in
/// `testdata/ops/expected_failures.txt` (`case-id  reason`), which must still fail, so
/// that a fixed case gets taken off the list.
#[cfg(feature = "compiler")]
#[test]
fn core_aten_op_suite_matches_pytorch() {
    use tpuc_cli::coverage;
    let root = repo().join("testdata/ops");
    let suite = coverage::read_op_suite(&root).expect("testdata/ops/index.json");
    assert!(!suite.cases.is_empty());
    let expected = &suite.known_failures;
    let plugin = tpuc_runtime::discover::find_plugin(None).expect("CPU plugin (make setup)");
    let plugin = tpuc_runtime::Plugin::load(&plugin).unwrap();
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(1))
        .unwrap();
    let scratch = temp("op-suite");
    let cache = scratch.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let options = tpuc_compiler::CompileOptions::default();
    let runner = coverage::Runner {
        client: &client,
        options: &options,
        cache_dir: &cache,
        tolerance_floor: None,
    };
    let results = coverage::run_op_suite(&runner, &suite, &scratch, |_, _, _| {});
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    for (case, outcome) in &results {
        match (outcome.matched(), expected.contains_key(&case.id)) {
            (false, false) => unexpected.push(format!("{}: {}", case.id, outcome.summary())),
            (true, true) => fixed.push(case.id.clone()),
            _ => {}
        }
    }
    assert!(
        unexpected.is_empty(),
        "op cases failing:\n{}",
        unexpected.join("\n")
    );
    assert!(
        fixed.is_empty(),
        "now passing, remove from expected_failures.txt:\n{}",
        fixed.join("\n")
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Compiles the corpus mlp into `dir/mlp.tpuc` and returns that path.
fn compiled_mlp(dir: &Path) -> String {
    let art = dir.join("mlp.tpuc").to_str().unwrap().to_string();
    let (ok, _, err) = tpuc(&["compile", "testdata/models/mlp/exported.pt2", "-o", &art]);
    assert!(ok, "{err}");
    art
}

/// Runs tpuc with its stdout a pipe whose reader is already gone (as `| head` leaves
/// it once head has read enough): returns (exit status, stderr).
fn tpuc_into_closed_pipe(args: &[&str]) -> (std::process::ExitStatus, String) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tpuc"))
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tpuc runs");
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap(), err)
}

#[test]
fn printing_commands_end_quietly_when_the_reader_goes_away() {
    let dir = temp("pipe");
    let art = compiled_mlp(&dir);
    let art = art.as_str();
    let commands: Vec<Vec<&str>> = vec![
        vec!["inspect", "testdata/models/llama/core.pt2"],
        vec![
            "compile",
            "testdata/models/llama/core.pt2",
            "--emit",
            "mlir",
            "-o",
            "-",
        ],
        vec!["opt", "--list-passes"],
        vec!["devices"],
        vec![
            "run",
            art,
            "--input",
            "testdata/models/mlp/inputs/0_input.npy",
        ],
        vec!["bench", art, "--iterations", "5", "--warmup", "1"],
        vec!["--help"],
    ];
    for args in commands {
        let (status, err) = tpuc_into_closed_pipe(&args);
        assert!(
            !err.contains("internal error") && !err.contains("panicked"),
            "tpuc {args:?}: {err}"
        );
        assert!(status.success(), "tpuc {args:?}: {status}\n{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CPU plugin logs through absl: unless asked, `tpuc run` keeps those lines off
/// the user's terminal; `-v` shows them, and a level set in the environment wins.
#[test]
fn plugin_log_lines_are_hidden_unless_asked_for() {
    let dir = temp("plugin-logs");
    let art = compiled_mlp(&dir);
    let art = art.as_str();
    let run = |extra: &[&str], level: Option<&str>| -> String {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tpuc"));
        cmd.args(["run", art, "--no-cache"])
            .args(["--input", "testdata/models/mlp/inputs/0_input.npy"])
            .args(extra)
            .current_dir(repo())
            .env_remove("TF_CPP_MIN_LOG_LEVEL");
        if let Some(l) = level {
            cmd.env("TF_CPP_MIN_LOG_LEVEL", l);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let is_plugin_log = |l: &str| {
        l.starts_with("WARNING: All log messages")
            || (l.len() > 5
                && l.as_bytes()[0].is_ascii_uppercase()
                && l[1..5].bytes().all(|b| b.is_ascii_digit()))
    };
    let quiet = run(&[], None);
    assert!(
        !quiet.lines().any(is_plugin_log),
        "plugin log lines by default:\n{quiet}"
    );
    let verbose = run(&["-v"], None);
    assert!(verbose.contains("cpu_device_count"), "{verbose}");
    let user = run(&[], Some("0"));
    assert!(user.contains("cpu_device_count"), "{user}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-O0` is the lowering alone; `-O2` (the default) cleans it up, so the program has
/// fewer ops. `--timing` names every stage; `--print-ir-after` shows the module after
/// the named pass and refuses names that are not passes.
#[test]
fn optimization_levels_timing_and_ir_printing() {
    let count_ops = |level: &str| -> usize {
        let (ok, out, err) = tpuc(&[
            "compile",
            "testdata/models/llama/core.pt2",
            level,
            "--emit",
            "mlir",
            "-o",
            "-",
        ]);
        assert!(ok, "{err}");
        // Composites only at -O2: the llama's RMS norms, softmaxes and SiLUs.
        let composites = out.matches("\"stablehlo.composite\"").count();
        assert_eq!(
            composites > 0,
            level == "-O2",
            "{level}: {composites} composites"
        );
        out.matches("= \"stablehlo.").count()
    };
    let (o0, o1, o2) = (count_ops("-O0"), count_ops("-O1"), count_ops("-O2"));
    assert!(o2 < o0 && o1 < o0, "-O2 has {o2} ops, -O1 {o1}, -O0 {o0}");

    let dir = temp("timing");
    let art = dir.join("mlp.tpuc");
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/models/mlp/core.pt2",
        "-o",
        art.to_str().unwrap(),
        "--timing",
        "--print-ir-after=stablehlo-cse",
    ]);
    assert!(ok, "{err}");
    for stage in [
        "read",
        "import",
        "aten-outline-composites",
        "lower-aten-to-stablehlo",
        "stablehlo-simplify",
        "stablehlo-fold-transpose",
        "stablehlo-dce",
        "stablehlo-cse",
        "stablehlo-outline-composites",
        "verify-stablehlo",
        "print",
        "write",
        "total",
    ] {
        assert!(err.contains(&format!("  {stage} ")), "{stage}: {err}");
    }
    assert!(
        err.contains("IR after stablehlo-cse") && err.contains("\"stablehlo.dot_general\""),
        "{err}"
    );
    assert!(!err.contains("IR after stablehlo-dce"), "{err}");

    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/models/mlp/core.pt2",
        "-o",
        art.to_str().unwrap(),
        "--print-ir-after=fusion",
    ]);
    assert!(!ok && err.contains("unknown pass `fusion`"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--matmul-precision default` rewrites the f32 matmuls' precision and records the
/// choice in the manifest; XLA's CPU backend computes f32 either way, so the artifact
/// still matches PyTorch here.
#[test]
fn matmul_precision_is_emitted_and_recorded() {
    let dir = temp("precision");
    let art = dir.join("mlp.tpuc");
    let art_s = art.to_str().unwrap();
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/models/mlp/core.pt2",
        "-o",
        art_s,
        "--matmul-precision",
        "default",
    ]);
    assert!(ok, "{err}");
    let program = std::fs::read_to_string(art.join("program.mlir")).unwrap();
    assert!(program.contains("precision DEFAULT") && !program.contains("precision HIGHEST"));
    let manifest = std::fs::read_to_string(art.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"matmul_precision\": \"default\""),
        "{manifest}"
    );
    let (ok, out, err) = tpuc(&[
        "run",
        art_s,
        "--input",
        "testdata/models/mlp/inputs/0_input.npy",
        "--expect",
        "testdata/models/mlp/expected/0.npy",
    ]);
    assert!(ok && out.contains("OK"), "{out}\n{err}");
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/models/mlp/core.pt2",
        "-o",
        art_s,
        "--matmul-precision",
        "fast",
    ]);
    assert!(!ok && err.contains("fast"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--emit mlir -o` onto something that is not a regular file (a FIFO here; `/dev/null`
/// in the wild) writes into it. Renaming a temporary file over it, as for regular
/// files, replaced the node itself: `-o /dev/null` run as root turned /dev/null into a
/// regular file that every later reader of /dev/null saw filling up.
#[test]
fn text_output_into_a_fifo_keeps_the_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let dir = temp("fifo");
    let fifo = dir.join("out.mlir");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let captured = dir.join("captured.mlir");
    let mut reader = Command::new("cat")
        .arg(&fifo)
        .stdout(std::fs::File::create(&captured).unwrap())
        .spawn()
        .unwrap();
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/models/mlp/core.pt2",
        "--emit",
        "mlir",
        "-o",
        fifo.to_str().unwrap(),
    ]);
    let still_fifo = std::fs::symlink_metadata(&fifo).is_ok_and(|m| m.file_type().is_fifo());
    if !still_fifo {
        let _ = reader.kill();
    }
    let _ = reader.wait();
    assert!(ok, "{err}");
    assert!(still_fifo, "the FIFO was replaced by a regular file");
    let text = std::fs::read_to_string(&captured).unwrap();
    assert!(text.contains("stablehlo.dot_general"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tpuc run` on a partitioned artifact (x split by rows over a 2-device mesh): the
/// CPU client gets as many devices as the mesh has, and the assembled output matches.
#[test]
fn run_executes_a_partitioned_artifact_on_its_mesh() {
    use tpuc_runtime::manifest::{Argument, ArgumentKind, TensorSpec};
    use tpuc_runtime::manifest::{Checksum, FileRef, Manifest, Partitioning, ShardingFormat};
    use tpuc_runtime::sharding::{Mesh, TensorSharding};
    use tpuc_runtime::{DType, HostTensor};
    let dir = temp("partitioned-run");
    let art = dir.join("double.tpuc");
    std::fs::create_dir_all(&art).unwrap();
    let mesh = Mesh::parse("dp=2").unwrap();
    let rows = TensorSharding::split(2, 0, &["dp"]);
    let s = rows.gspmd(&mesh).unwrap();
    let program = format!(
        "module @m attributes {{mhlo.num_partitions = 2 : i32}} {{\n  func.func @main(%x: tensor<4x3xf32> {{mhlo.sharding = \"{s}\"}}) -> (tensor<4x3xf32> {{mhlo.sharding = \"{s}\"}}) {{\n    %0 = \"stablehlo.add\"(%x, %x) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>\n    \"func.return\"(%0) : (tensor<4x3xf32>) -> ()\n  }}\n}}\n"
    );
    std::fs::write(art.join("program.mlir"), &program).unwrap();
    let sum = Checksum::of(program.as_bytes());
    let manifest = Manifest {
        format_version: tpuc_runtime::manifest::FORMAT_VERSION,
        tpuc_version: "test".into(),
        target: "tpu".into(),
        stablehlo_version: "1.0.0".into(),
        matmul_precision: "highest".into(),
        source: FileRef {
            file: "program.mlir".into(),
            checksum: sum.clone(),
        },
        program: FileRef {
            file: "program.mlir".into(),
            checksum: sum,
        },
        weights: FileRef {
            file: String::new(),
            checksum: Checksum::Blake3(String::new()),
        },
        arguments: vec![Argument {
            name: "x".into(),
            kind: ArgumentKind::UserInput,
            dtype: DType::F32,
            shape: vec![4, 3],
            weight: None,
            zero_filled: false,
            packed: None,
            sharding: Some(rows.clone()),
        }],
        outputs: vec![TensorSpec {
            name: "y".into(),
            dtype: DType::F32,
            shape: vec![4, 3],
            sharding: Some(rows),
            updates: None,
        }],
        partitioning: Some(Partitioning::new(mesh, ShardingFormat::Gspmd)),
        tpu_executables: Vec::new(),
        neuron: None,
        dynamic: None,
    };
    std::fs::write(
        art.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let x: Vec<f32> = (0..12).map(|i| i as f32 - 5.5).collect();
    let y: Vec<f32> = x.iter().map(|v| v + v).collect();
    let (xp, yp) = (dir.join("x.npy"), dir.join("y.npy"));
    tpuc_runtime::npy::write_npy(&xp, &HostTensor::from_f32(&[4, 3], &x)).unwrap();
    tpuc_runtime::npy::write_npy(&yp, &HostTensor::from_f32(&[4, 3], &y)).unwrap();
    let (ok, out, err) = tpuc(&[
        "run",
        art.to_str().unwrap(),
        "--input",
        xp.to_str().unwrap(),
        "--expect",
        yp.to_str().unwrap(),
        "--no-cache",
    ]);
    assert!(ok, "{out}\n{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--mesh dp=2 --shard data-parallel`, in both sharding formats: every corpus model
/// whose inputs have an even batch runs on 2 CPU devices and matches PyTorch at the
/// tolerances of the unsharded run; the others (a batch of 3) are refused naming the
/// input. The artifact records the mesh and each input's split batch.
#[cfg(feature = "compiler")]
#[test]
fn data_parallel_corpus_models_match_pytorch_on_two_devices() {
    let dir = temp("data-parallel");
    let mut failures = Vec::new();
    let models = [
        "mlp",
        "mlp_f16",
        "mlp_bf16",
        "cnn",
        "attention",
        "sdpa",
        "transformer_encoder",
        "gpt2",
        "bert",
        "llama",
    ];
    for name in models {
        let model_dir = repo().join("testdata/models").join(name);
        for format in ["shardy", "gspmd"] {
            let art = dir.join(format!("{name}-{format}.tpuc"));
            let model = model_dir.join("core.pt2");
            let (ok, _, err) = tpuc(&[
                "compile",
                model.to_str().unwrap(),
                "-o",
                art.to_str().unwrap(),
                "--mesh",
                "dp=2",
                "--shard",
                "data-parallel",
                "--sharding-format",
                format,
            ]);
            if !ok {
                failures.push(format!("{name}/{format}: compile: {err}"));
                continue;
            }
            let manifest: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(art.join("manifest.json")).unwrap())
                    .unwrap();
            let p = &manifest["partitioning"];
            assert_eq!(p["format"], format, "{name}");
            assert_eq!(p["num_partitions"], 2, "{name}");
            assert_eq!(p["use_shardy_partitioner"], format == "shardy", "{name}");
            let first_input = manifest["arguments"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["kind"] == "user_input")
                .unwrap();
            assert_eq!(
                first_input["sharding"]["dims"][0],
                serde_json::json!(["dp"]),
                "{name}"
            );
            let mut args = vec![
                "run".to_string(),
                art.to_string_lossy().to_string(),
                "--no-cache".to_string(),
            ];
            for p in sorted_npy(&model_dir.join("inputs")) {
                args.extend(["--input".to_string(), p.to_string_lossy().to_string()]);
            }
            for p in sorted_npy(&model_dir.join("expected")) {
                args.extend(["--expect".to_string(), p.to_string_lossy().to_string()]);
            }
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (ok, out, err) = tpuc(&refs);
            if !ok || out.contains("FAIL") || !out.contains("OK") {
                failures.push(format!("{name}/{format}: run: {out}\n{err}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // A batch the axis does not divide, a mesh without `dp`, a strategy not built yet,
    // --shard without --mesh: errors that name what is wrong, and no artifact.
    let out = dir.join("refused.tpuc");
    let int_ops = repo().join("testdata/models/int_ops/core.pt2");
    let m = int_ops.to_str().unwrap();
    let o = out.to_str().unwrap();
    for (args, wanted) in [
        (
            vec!["--mesh", "dp=2", "--shard", "data-parallel"],
            "input `a` has batch size 3",
        ),
        (
            vec!["--mesh", "tp=2", "--shard", "data-parallel"],
            "the mesh `tp=2` has none",
        ),
        (
            vec!["--mesh", "dp=2", "--shard", "megatron"],
            "a mesh axis named `tp`",
        ),
        (
            vec!["--mesh", "dp=2", "--shard", "fsdp"],
            "a mesh axis named `fsdp`",
        ),
        (
            vec!["--mesh", "dp=2", "--shard", "sideways"],
            "unknown --shard strategy",
        ),
        (
            vec!["--mesh", "dp=2,dp=2", "--shard", "data-parallel"],
            "named twice",
        ),
        (vec!["--shard", "data-parallel"], "need --mesh"),
    ] {
        let mut all = vec!["compile", m, "-o", o];
        all.extend(args);
        let (ok, _, err) = tpuc(&all);
        assert!(!ok && err.contains(wanted), "{all:?}: {err}");
        assert!(!out.exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--mesh fsdp=4 --shard fsdp` and `--mesh dp=2,fsdp=2 --shard data-parallel,fsdp`, in
/// both formats, through the library API: each device holds a quarter (or half) of the
/// split parameters, the rest whole, and the outputs match PyTorch on 4 CPU devices.
#[cfg(feature = "compiler")]
#[test]
fn fsdp_splits_parameters_and_matches_pytorch_on_four_devices() {
    use tpuc_compiler::{CompileOptions, ShardPreset, ShardingRequest};
    use tpuc_runtime::manifest::{ArgumentKind, ShardingFormat};
    use tpuc_runtime::sharding::Mesh;
    let plugin = tpuc_runtime::discover::find_plugin(None).expect("CPU plugin (make setup)");
    let plugin = tpuc_runtime::Plugin::load(&plugin).unwrap();
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(4))
        .unwrap();
    let dir = temp("fsdp");
    let configs = [
        ("fsdp=4", vec![ShardPreset::Fsdp]),
        (
            "dp=2,fsdp=2",
            vec![ShardPreset::DataParallel, ShardPreset::Fsdp],
        ),
    ];
    for name in ["mlp", "gpt2", "bert", "llama"] {
        let model_dir = repo().join("testdata/models").join(name);
        let inputs: Vec<tpuc_runtime::HostTensor> = {
            let mut v: Vec<PathBuf> = std::fs::read_dir(model_dir.join("inputs"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            v.sort();
            v.iter()
                .map(|p| tpuc_runtime::npy::read_npy(p).unwrap())
                .collect()
        };
        let expected = tpuc_runtime::npy::read_npy(model_dir.join("expected/0.npy")).unwrap();
        for (mesh, presets) in &configs {
            for format in [ShardingFormat::Shardy, ShardingFormat::Gspmd] {
                let mesh = Mesh::parse(mesh).unwrap();
                let fsdp = mesh.axis_size("fsdp").unwrap() as u64;
                let art = dir.join(format!("{name}-{}-{format:?}.tpuc", mesh.num_devices()));
                let options = CompileOptions {
                    sharding: Some(ShardingRequest {
                        mesh: mesh.clone(),
                        presets: presets.clone(),
                        rules: Vec::new(),
                        format,
                    }),
                    ..CompileOptions::default()
                };
                tpuc_compiler::compile(&model_dir.join("core.pt2"), &art, &options)
                    .unwrap_or_else(|e| panic!("{name} {mesh}: {e}"));
                let session = tpuc_runtime::Session::load_with(
                    &art,
                    &client,
                    &tpuc_runtime::LoadOptions {
                        cache: tpuc_runtime::CacheMode::Bypass,
                        ..Default::default()
                    },
                )
                .unwrap_or_else(|e| panic!("{name} {mesh}: {e}"));
                // Expected share per device: split parameters / fsdp, the rest whole
                // (tied weights count once, as the session uploads them once).
                let mut seen = std::collections::HashSet::new();
                let mut want = 0u64;
                for a in &session.manifest().arguments {
                    if a.kind == ArgumentKind::UserInput || !seen.insert(a.weight.clone()) {
                        continue;
                    }
                    let bytes =
                        a.shape.iter().product::<i64>() as u64 * a.dtype.size_in_bytes() as u64;
                    let split = a
                        .sharding
                        .as_ref()
                        .is_some_and(|s| s.dims.iter().any(|d| d.contains(&"fsdp".to_string())));
                    assert_eq!(
                        split,
                        a.kind == ArgumentKind::Parameter
                            && a.shape
                                .iter()
                                .any(|&d| (d as u64).is_multiple_of(fsdp) && d as u64 >= fsdp),
                        "{name} {}",
                        a.name
                    );
                    want += if split { bytes / fsdp } else { bytes };
                }
                let per_device = &session.load_report().weight_bytes_per_device;
                assert_eq!(per_device.len(), mesh.num_devices());
                assert!(
                    per_device.iter().all(|&b| b == want),
                    "{name} {mesh}: {per_device:?}, want {want}"
                );
                assert!(
                    want < session.load_report().weight_bytes,
                    "{name}: nothing was split"
                );
                let got = session
                    .run(&inputs)
                    .unwrap_or_else(|e| panic!("{name} {mesh}: {e}"));
                let c = tpuc_runtime::compare::compare(&got[0], &expected, 1e-4, 1e-5);
                assert!(c.passed(), "{name} {mesh} {format:?}: {c:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--sharding-rules`: the corpus Llama made tensor-parallel by hand
/// (`testdata/sharding/llama_megatron.rules`) on tp=2, and with data-parallel on
/// dp=2,tp=2, in both formats, matches PyTorch, and XLA's partitioned program has
/// exactly the collectives Megatron's strategy implies; bad rules are refused naming
/// the rule (file and line) and the weight.
#[cfg(feature = "compiler")]
#[test]
fn sharding_rules_make_llama_tensor_parallel() {
    let dir = temp("sharding-rules");
    let model = repo().join("testdata/models/llama/core.pt2");
    let rules = repo().join("testdata/sharding/llama_megatron.rules");
    let input = repo().join("testdata/models/llama/inputs/0_input_ids.npy");
    let expected = repo().join("testdata/models/llama/expected/0.npy");
    let (m, r) = (model.to_str().unwrap(), rules.to_str().unwrap());
    for (mesh, shard) in [("tp=2", None), ("dp=2,tp=2", Some("data-parallel"))] {
        for format in ["shardy", "gspmd"] {
            let art = dir.join(format!("llama-{mesh}-{format}.tpuc"));
            let mut args = vec![
                "compile",
                m,
                "-o",
                art.to_str().unwrap(),
                "--mesh",
                mesh,
                "--sharding-rules",
                r,
                "--sharding-format",
                format,
            ];
            if let Some(s) = shard {
                args.extend(["--shard", s]);
            }
            let (ok, _, err) = tpuc(&args);
            assert!(ok, "{mesh} {format}: {err}");
            let manifest = std::fs::read_to_string(art.join("manifest.json")).unwrap();
            assert!(manifest.contains("\"tp\""), "{manifest}");
            let (ok, out, err) = tpuc(&[
                "run",
                art.to_str().unwrap(),
                "--input",
                input.to_str().unwrap(),
                "--expect",
                expected.to_str().unwrap(),
                "--no-cache",
            ]);
            assert!(ok && out.contains("OK"), "{mesh} {format}: {out}\n{err}");
            if mesh == "tp=2" {
                // The collectives of the partitioned program: per layer one all-reduce
                // after the attention output projection and one after the MLP down
                // projection, plus one for the vocabulary-parallel embedding lookup;
                // nothing else is reduced or gathered (the vocabulary-split logits are
                // assembled by the runtime).
                let plugin = tpuc_runtime::discover::find_plugin(None).unwrap();
                let plugin = tpuc_runtime::Plugin::load(&plugin).unwrap();
                let client = plugin
                    .create_client(&tpuc_runtime::ClientOptions::cpu(2))
                    .unwrap();
                let session = tpuc_runtime::Session::load_with(
                    &art,
                    &client,
                    &tpuc_runtime::LoadOptions {
                        cache: tpuc_runtime::CacheMode::Bypass,
                        ..Default::default()
                    },
                )
                .unwrap();
                let counts = session.compiled_opcode_counts().unwrap();
                let layers = session
                    .manifest()
                    .arguments
                    .iter()
                    .filter(|a| {
                        a.weight
                            .as_deref()
                            .is_some_and(|w| w.ends_with("o_proj.weight"))
                    })
                    .count();
                assert_eq!(layers, 2);
                let n = |op: &str| counts.get(op).copied().unwrap_or(0);
                assert_eq!(n("all-reduce"), 2 * layers + 1, "{format}: {counts:?}");
                for op in [
                    "all-gather",
                    "reduce-scatter",
                    "all-to-all",
                    "collective-permute",
                ] {
                    assert_eq!(n(op), 0, "{format}: {op} in {counts:?}");
                }
            }
        }
    }
    let out = dir.join("refused.tpuc");
    for (text, wanted) in [
        ("no.such.weight [tp, -]\n", "bad.rules:1: `no.such.weight` matches no parameter"),
        (
            "*.q_proj.weight [tp, -]\ninner.model.layers.0.self_attn.q_proj.weight [-, tp]\n",
            "bad.rules:2 gives `inner.model.layers.0.self_attn.q_proj.weight` [-, tp] but bad.rules:1 gave it [tp, -]",
        ),
        ("*.q_proj.weight [x, -]\n", "the mesh has no axis `x`"),
        ("*.q_proj.weight [tp]\n", "names 1 dimensions for a tensor of rank 2"),
        ("*.q_proj.weight\n", "is not `PATTERN SHARDING`"),
    ] {
        let bad = dir.join("bad.rules");
        std::fs::write(&bad, text).unwrap();
        // Run from the scratch directory so that messages name `bad.rules`.
        let o = Command::new(env!("CARGO_BIN_EXE_tpuc"))
            .args([
                "compile",
                m,
                "-o",
                out.to_str().unwrap(),
                "--mesh",
                "tp=2",
                "--sharding-rules",
                "bad.rules",
            ])
            .current_dir(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && stderr.contains(wanted), "{text}: {stderr}");
        assert!(!out.exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--shard megatron` finds the Linear pairs itself: on the corpus Llama it makes the
/// same choices as the hand-written rules (so XLA's program has the same collectives:
/// one all-reduce per attention and per MLP block, one for the embedding), and mlp,
/// gpt2, bert and llama (also with data-parallel on dp=2,tp=2) match PyTorch.
#[cfg(feature = "compiler")]
#[test]
fn megatron_preset_matches_pytorch_and_the_hand_written_rules() {
    use tpuc_compiler::{CompileOptions, ShardPreset, ShardingRequest};
    use tpuc_runtime::manifest::ShardingFormat;
    use tpuc_runtime::sharding::Mesh;
    let plugin = tpuc_runtime::discover::find_plugin(None).expect("CPU plugin (make setup)");
    let plugin = tpuc_runtime::Plugin::load(&plugin).unwrap();
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(4))
        .unwrap();
    let dir = temp("megatron");
    let load = |art: &Path| {
        tpuc_runtime::Session::load_with(
            art,
            &client,
            &tpuc_runtime::LoadOptions {
                cache: tpuc_runtime::CacheMode::Bypass,
                ..Default::default()
            },
        )
        .unwrap_or_else(|e| panic!("{}: {e}", art.display()))
    };
    let rules_text =
        std::fs::read_to_string(repo().join("testdata/sharding/llama_megatron.rules")).unwrap();
    let rules = tpuc_compiler::sharding::parse_rules(&rules_text, "llama_megatron.rules").unwrap();
    for name in ["mlp", "gpt2", "bert", "llama"] {
        let model_dir = repo().join("testdata/models").join(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(model_dir.join("inputs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let inputs: Vec<tpuc_runtime::HostTensor> = files
            .iter()
            .map(|p| tpuc_runtime::npy::read_npy(p).unwrap())
            .collect();
        let expected = tpuc_runtime::npy::read_npy(model_dir.join("expected/0.npy")).unwrap();
        for (mesh, presets) in [
            ("tp=2", vec![ShardPreset::Megatron]),
            (
                "dp=2,tp=2",
                vec![ShardPreset::DataParallel, ShardPreset::Megatron],
            ),
        ] {
            for format in [ShardingFormat::Shardy, ShardingFormat::Gspmd] {
                let art = dir.join(format!("{name}-{}-{format:?}.tpuc", mesh.replace(',', "_")));
                let request =
                    |presets: Vec<ShardPreset>, rules: Vec<tpuc_compiler::sharding::Rule>| {
                        CompileOptions {
                            sharding: Some(ShardingRequest {
                                mesh: Mesh::parse(mesh).unwrap(),
                                presets,
                                rules,
                                format,
                            }),
                            ..CompileOptions::default()
                        }
                    };
                let options = request(presets.clone(), Vec::new());
                tpuc_compiler::compile(&model_dir.join("core.pt2"), &art, &options)
                    .unwrap_or_else(|e| panic!("{name} {mesh}: {e}"));
                let session = load(&art);
                let got = session.run(&inputs).unwrap();
                let c = tpuc_runtime::compare::compare(&got[0], &expected, 1e-4, 1e-5);
                assert!(c.passed(), "{name} {mesh} {format:?}: {c:?}");
                if name == "llama" && mesh == "tp=2" {
                    let by_rules = dir.join(format!("{name}-rules-{format:?}.tpuc"));
                    tpuc_compiler::compile(
                        &model_dir.join("core.pt2"),
                        &by_rules,
                        &request(Vec::new(), rules.clone()),
                    )
                    .unwrap();
                    let theirs = load(&by_rules);
                    let shardings = |s: &tpuc_runtime::Session| -> Vec<_> {
                        s.manifest()
                            .arguments
                            .iter()
                            .map(|a| a.sharding.clone())
                            .collect()
                    };
                    assert_eq!(shardings(&session), shardings(&theirs));
                    let counts = session.compiled_opcode_counts().unwrap();
                    assert_eq!(counts.get("all-reduce"), Some(&5), "{counts:?}");
                    assert_eq!(counts.get("all-gather"), None, "{counts:?}");
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tpuc inspect --sharding`: the mesh, each argument's and output's sharding and
/// per-device shape, and the collectives of XLA's partitioned program; an artifact
/// without a mesh says so.
#[cfg(feature = "compiler")]
#[test]
fn inspect_sharding_shows_shards_and_collectives() {
    let dir = temp("inspect-sharding");
    let art = dir.join("llama.tpuc");
    let model = repo().join("testdata/models/llama/core.pt2");
    let (ok, _, err) = tpuc(&[
        "compile",
        model.to_str().unwrap(),
        "-o",
        art.to_str().unwrap(),
        "--mesh",
        "tp=2",
        "--shard",
        "megatron",
    ]);
    assert!(ok, "{err}");
    let (ok, out, err) = tpuc(&["inspect", "--sharding", art.to_str().unwrap()]);
    assert!(ok, "{err}");
    for wanted in [
        "mesh: tp=2 (2 devices",
        "p_inner_model_layers_0_self_attn_o_proj_weight f32[32, 32] [-, tp] per device f32[32, 16] (2048 B)",
        "f32[2, 8, 128] [-, -, tp] per device f32[2, 8, 64]",
        // Five all-reduces of one [2, 8, 32] f32 activation each (2048 B).
        "collectives in XLA's partitioned program (each device): all-reduce x5 (10240 B per call)",
    ] {
        assert!(out.contains(wanted), "{wanted}\n{out}");
    }
    // `tpuc bench` runs it on its mesh, inputs split once per device.
    let (ok, out_bench, err) = tpuc(&[
        "bench",
        art.to_str().unwrap(),
        "--iterations",
        "5",
        "--warmup",
        "1",
        "--no-cache",
    ]);
    assert!(ok, "{err}");
    for wanted in ["(Session::run_sharded)", "(Session::run)", "throughput"] {
        assert!(out_bench.contains(wanted), "{wanted}\n{out_bench}");
    }
    // XLA's per-device argument bytes are the rows' per-device bytes, summed.
    let rows = out
        .split("arguments:")
        .nth(1)
        .unwrap()
        .split("outputs:")
        .next()
        .unwrap();
    let shares: u64 = rows
        .lines()
        .filter_map(|l| {
            l.rsplit_once(" (")?
                .1
                .strip_suffix(" B)")?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert!(
        out.contains(&format!("XLA's memory per device: arguments {shares} B,")),
        "{shares}\n{out}"
    );
    let plain = dir.join("mlp.tpuc");
    let mlp = repo().join("testdata/models/mlp/core.pt2");
    let (ok, _, err) = tpuc(&[
        "compile",
        mlp.to_str().unwrap(),
        "-o",
        plain.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let (ok, out, _) = tpuc(&["inspect", "--sharding", plain.to_str().unwrap()]);
    assert!(ok && out.contains("not partitioned"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tpuc run --then`: three decode steps of the static-cache Llama in one session, each
/// matching PyTorch's step (state carried); the second step alone does not match (it
/// needs the first step's cache). A stateless artifact just runs each call. Passing a
/// cache as an input, and options after `--then`, are errors that say why.
#[cfg(feature = "compiler")]
#[test]
fn run_then_carries_state_between_calls() {
    let dir = temp("then");
    let data = repo().join("testdata/stateful/llama_decode");
    let call = |k: usize| -> Vec<String> {
        let c = data.join(format!("calls/{k}"));
        [
            ("--input", c.join("inputs/0_input_ids.npy")),
            ("--input", c.join("inputs/1_cache_position.npy")),
            ("--expect", c.join("expected/0.npy")),
        ]
        .iter()
        .flat_map(|(f, p)| [f.to_string(), p.to_string_lossy().into_owned()])
        .collect()
    };
    for form in ["exported", "core"] {
        let art = dir.join(format!("llama-{form}.tpuc"));
        let model = data.join(format!("{form}.pt2"));
        let (ok, _, err) = tpuc(&[
            "compile",
            model.to_str().unwrap(),
            "-o",
            art.to_str().unwrap(),
        ]);
        assert!(ok, "{err}");
        let mut args = vec!["run".to_string(), art.to_string_lossy().into_owned()];
        args.extend(call(0));
        for k in 1..3 {
            args.push("--then".into());
            args.extend(call(k));
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, out, err) = tpuc(&refs);
        assert!(ok, "{form}: {out}{err}");
        assert_eq!(out.matches(" OK").count(), 3, "{form}: {out}");
        assert!(out.contains("call 2:"), "{out}");

        let mut alone = vec!["run".to_string(), art.to_string_lossy().into_owned()];
        alone.extend(call(1));
        let refs: Vec<&str> = alone.iter().map(String::as_str).collect();
        let (ok, out, _) = tpuc(&refs);
        assert!(
            !ok && out.contains("FAIL"),
            "step 1 without step 0 matched: {out}"
        );

        let mut extra = vec!["run".to_string(), art.to_string_lossy().into_owned()];
        extra.extend(call(0));
        extra.extend(["--input".into(), call(0)[1].clone()]);
        let refs: Vec<&str> = extra.iter().map(String::as_str).collect();
        let (ok, _, err) = tpuc(&refs);
        assert!(
            !ok && err.contains("cache") && err.contains("are state the session keeps, not inputs"),
            "{err}"
        );
    }
    let art = dir.join("llama-core.tpuc");
    let mut late = vec!["run".to_string(), art.to_string_lossy().into_owned()];
    late.extend(call(0));
    late.extend(["--then".into(), "--rtol".into(), "1".into()]);
    let refs: Vec<&str> = late.iter().map(String::as_str).collect();
    let (ok, _, err) = tpuc(&refs);
    assert!(
        !ok && err.contains("after --then only --input, --expect"),
        "{err}"
    );

    // Stateless: each call on its own.
    let mlp = dir.join("mlp.tpuc");
    let src = repo().join("testdata/models/mlp/core.pt2");
    let (ok, _, err) = tpuc(&[
        "compile",
        src.to_str().unwrap(),
        "-o",
        mlp.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let m = repo().join("testdata/models/mlp");
    let input = sorted_npy(&m.join("inputs"))[0]
        .to_string_lossy()
        .into_owned();
    let want = sorted_npy(&m.join("expected"))[0]
        .to_string_lossy()
        .into_owned();
    let (ok, out, err) = tpuc(&[
        "run",
        mlp.to_str().unwrap(),
        "--input",
        &input,
        "--expect",
        &want,
        "--then",
        "--input",
        &input,
        "--expect",
        &want,
    ]);
    assert!(ok && out.matches(" OK").count() == 2, "{out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `tpuc generate` reproduces PyTorch's greedy tokens (`model.generate(do_sample=False)`,
/// 16 new tokens) for every decoder of testdata/decode (Llama, Qwen3, Gemma, GPT-2),
/// in both forms. A run past the static cache, a program that is not a decode step and
/// tokens that differ from --expect are errors that say so.
#[cfg(feature = "compiler")]
#[test]
fn generate_reproduces_pytorch_greedy_tokens() {
    let dir = temp("generate");
    let root = repo().join("testdata/decode");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("index.json")).unwrap()).unwrap();
    let names: Vec<&str> = index["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(names.len() >= 4, "{names:?}");
    for name in &names {
        let data = root.join(name);
        let prompt = data.join("prompt.npy");
        let expected = data.join("expected_tokens.npy");
        for form in ["exported", "core"] {
            let art = dir.join(format!("{name}-{form}.tpuc"));
            let model = data.join(format!("{form}.pt2"));
            let (ok, _, err) = tpuc(&[
                "compile",
                model.to_str().unwrap(),
                "-o",
                art.to_str().unwrap(),
            ]);
            assert!(ok, "{name}/{form}: {err}");
            let (ok, out, err) = tpuc(&[
                "generate",
                art.to_str().unwrap(),
                "--prompt",
                prompt.to_str().unwrap(),
                "--max-new-tokens",
                "16",
                "--expect",
                expected.to_str().unwrap(),
            ]);
            assert!(ok, "{name}/{form}: {out}{err}");
            assert_eq!(out.split_whitespace().count(), 16, "{out}");
            assert!(
                err.contains("OK: the 16 tokens match") && err.contains("tokens/s"),
                "{err}"
            );
        }
    }
    let art = dir.join(format!("{}-core.tpuc", names[0]));
    let data = root.join(names[0]);
    let prompt = data.join("prompt.npy");
    let (ok, _, err) = tpuc(&[
        "generate",
        art.to_str().unwrap(),
        "--prompt",
        prompt.to_str().unwrap(),
        "--max-new-tokens",
        "40",
    ]);
    assert!(
        !ok && err.contains("the artifact's static cache holds 32"),
        "{err}"
    );
    // One expected token changed: the run fails at that position.
    let mut want = tpuc_runtime::npy::read_npy(data.join("expected_tokens.npy")).unwrap();
    want.data[8 * 3] ^= 1;
    let wrong = dir.join("wrong.npy");
    tpuc_runtime::npy::write_npy(&wrong, &want).unwrap();
    let (ok, _, err) = tpuc(&[
        "generate",
        art.to_str().unwrap(),
        "--prompt",
        prompt.to_str().unwrap(),
        "--expect",
        wrong.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("FAIL: new token 3 is"), "{err}");
    let mlp = dir.join("mlp.tpuc");
    let src = repo().join("testdata/models/mlp/core.pt2");
    let (ok, _, err) = tpuc(&[
        "compile",
        src.to_str().unwrap(),
        "-o",
        mlp.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let (ok, _, err) = tpuc(&[
        "generate",
        mlp.to_str().unwrap(),
        "--prompt",
        prompt.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("not a decode step"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A dynamic program: `tpuc compile` says which sizes it specialized, `tpuc inspect`
/// lists the sizes, and `tpuc run` says for each new size whether its program came from
/// the artifact or was specialized now, and whether its executable was compiled or
/// found in the cache; a size out of range exits non-zero naming the symbol.
#[test]
fn run_specializes_a_dynamic_artifact_and_says_so() {
    let dir = temp("dynamic");
    let cache = dir.join("cache");
    let env = [("TPUC_CACHE_DIR", cache.as_path())];
    let art = dir.join("mlp.tpuc");
    let art = art.to_str().unwrap();
    let (ok, out, err) = tpuc(&["inspect", "testdata/dynamic/mlp/core.pt2"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("s77      1..=64     example 7      (dimension 0 of `x`)"),
        "{out}"
    );
    assert!(out.contains("[s77, 16]"), "{out}");
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/dynamic/mlp/core.pt2",
        "-o",
        art,
        "--specialize",
        "s77=64",
    ]);
    assert!(ok, "{err}");
    assert!(
        err.contains("dynamic sizes s77 in 1..=64: specialized for s77=7; s77=64"),
        "{err}"
    );
    let call = |k: usize| {
        let d = format!("testdata/dynamic/mlp/calls/{k}");
        [format!("{d}/inputs/0_x.npy"), format!("{d}/expected/0.npy")]
    };
    let (c0, c2) = (call(0), call(2));
    let args = [
        "run", art, "--input", &c0[0], "--expect", &c0[1], "--then", "--input", &c2[0], "--expect",
        &c2[1],
    ];
    let (ok, out, err) = tpuc_env(&args, &env);
    assert!(ok, "{out}\n{err}");
    for want in [
        "sizes s77=7: program from the artifact, compiled",
        "sizes s77=1: specialized now",
        "sizes s77=64: program from the artifact, compiled",
        "f32 [1, 8]",
        "f32 [64, 8]",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    assert_eq!(out.matches(" OK").count(), 2, "{out}");
    let (ok, out, err) = tpuc_env(&args, &env);
    assert!(ok, "{out}\n{err}");
    for want in [
        "sizes s77=7: program from the artifact, executable cache hit",
        "sizes s77=1: specialized now",
        "sizes s77=64: program from the artifact, executable cache hit",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    assert!(!out.contains("compiled"), "{out}");
    // 65 rows: outside the range.
    let big = dir.join("x65.npy");
    let x = tpuc_runtime::HostTensor {
        dtype: tpuc_runtime::DType::F32,
        shape: vec![65, 16],
        data: vec![0u8; 65 * 16 * 4],
    };
    tpuc_runtime::npy::write_npy(&big, &x).unwrap();
    let (ok, _, err) = tpuc_env(&["run", art, "--input", big.to_str().unwrap()], &env);
    assert!(!ok);
    assert!(
        err.contains("size 65 of `x` dimension 0 is outside the range of `s77`, 1..=64"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
