//! The commands users type: help, compile and run, errors with the file named,
//! inspect, devices, bench, quiet exits into closed pipes, plugin logs, -O levels and
//! timing, matmul precision, text output into a FIFO.

use std::path::Path;
use std::process::Command;

use crate::common::{repo, temp, tpuc, tpuc_env};

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
