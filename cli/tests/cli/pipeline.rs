//! `tpuc compile --print-pipeline`: the printed pipeline, fed to `tpuc opt` with the
//! `--emit aten` module, reproduces `tpuc compile --emit mlir` byte for byte (and, for
//! an artifact's pipeline, the artifact's program), for a transformer, a CNN, Neuron
//! targets, sharded and stateful programs and every optimization level.
#![cfg(feature = "compiler")]

use crate::common::{temp, tpuc};

/// `tpuc compile MODEL EXTRA --print-pipeline [--emit mlir]`.
fn printed_pipeline(model: &str, extra: &[&str], emit: &str) -> String {
    let mut args = vec!["compile", model, "--print-pipeline", "--emit", emit];
    args.extend(extra);
    let (ok, out, err) = tpuc(&args);
    assert!(ok, "{args:?}: {err}");
    assert!(
        err.is_empty(),
        "{args:?} prints nothing else without -v: {err}"
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {out}");
    lines[0].to_string()
}

/// The ATen-level module of `model` in a file of `dir`.
fn aten_module(model: &str, dir: &std::path::Path, tag: &str) -> String {
    let path = dir.join(format!("{tag}.aten.mlir"));
    let path = path.to_str().unwrap().to_string();
    let (ok, _, err) = tpuc(&["compile", model, "--emit", "aten", "-o", &path]);
    assert!(ok, "{model}: {err}");
    path
}

fn opt(module: &str, pipeline: &str) -> String {
    let arg = format!("--pass-pipeline={pipeline}");
    let (ok, out, err) = tpuc(&["opt", module, &arg]);
    assert!(ok, "tpuc opt {module} {arg}: {err}");
    out
}

#[test]
fn printed_pipelines_replay_the_compile_with_tpuc_opt() {
    let dir = temp("pipeline-replay");
    let cases: &[(&str, &[&str], &str)] = &[
        ("testdata/models/llama/exported.pt2", &[], "transformer"),
        (
            "testdata/models/bert/core.pt2",
            &["-O1"],
            "transformer at -O1",
        ),
        ("testdata/models/cnn/core.pt2", &[], "CNN"),
        ("testdata/models/cnn/exported.pt2", &["-O0"], "CNN at -O0"),
        (
            "testdata/models/mlp/exported.pt2",
            &["--target", "trn2"],
            "Neuron",
        ),
        (
            "testdata/models/gpt2/core.pt2",
            &["--target", "trn1", "--auto-cast", "bf16", "--keep-int64"],
            "Neuron with auto-cast",
        ),
        (
            "testdata/models/llama/core.pt2",
            &["--mesh", "tp=2", "--shard", "megatron"],
            "Megatron, Shardy",
        ),
        (
            "testdata/models/mlp/core.pt2",
            &[
                "--mesh",
                "dp=2,fsdp=2",
                "--shard",
                "data-parallel,fsdp",
                "--sharding-format",
                "gspmd",
            ],
            "data parallel + FSDP, GSPMD",
        ),
        (
            "testdata/models/llama/exported.pt2",
            &[
                "--mesh",
                "tp=2",
                "--sharding-rules",
                "testdata/sharding/llama_megatron.rules",
            ],
            "sharding rules",
        ),
        (
            "testdata/decode/llama/core.pt2",
            &[],
            "stateful decode step",
        ),
        (
            "testdata/models/sdpa/exported.pt2",
            &["--matmul-precision", "high"],
            "matmul precision",
        ),
    ];
    for (k, (model, extra, what)) in cases.iter().enumerate() {
        let module = aten_module(model, &dir, &k.to_string());
        let pipeline = printed_pipeline(model, extra, "mlir");
        let mut args = vec!["compile", model, "--emit", "mlir", "-o", "-"];
        args.extend(*extra);
        let (ok, want, err) = tpuc(&args);
        assert!(ok, "{what}: {err}");
        assert!(
            opt(&module, &pipeline) == want,
            "{what} ({model}): tpuc opt with `{pipeline}` differs from --emit mlir"
        );
    }
}

#[test]
fn an_artifacts_pipeline_replays_its_program() {
    let dir = temp("pipeline-artifact");
    // At -O2 an artifact's pipeline packs the Q/K/V weights (stablehlo-merge-dots'
    // option), which --emit mlir never does: the replay gives the artifact's program.
    for (k, model) in [
        "testdata/models/llama/exported.pt2",
        "testdata/decode/qwen3/exported.pt2",
    ]
    .iter()
    .enumerate()
    {
        let module = aten_module(model, &dir, &k.to_string());
        let pipeline = printed_pipeline(model, &[], "artifact");
        assert!(
            pipeline.contains("stablehlo-merge-dots{packable="),
            "{pipeline}"
        );
        let art = dir.join(format!("{k}.tpuc"));
        let (ok, _, err) = tpuc(&["compile", model, "-o", art.to_str().unwrap()]);
        assert!(ok, "{err}");
        let program = std::fs::read_to_string(art.join("program.mlir")).unwrap();
        assert!(
            opt(&module, &pipeline) == program,
            "{model}: the replay differs from the artifact's program.mlir"
        );
    }
}

#[test]
fn print_pipeline_names_phases_and_refuses_what_runs_none() {
    let (ok, out, err) = tpuc(&[
        "-v",
        "compile",
        "testdata/models/mlp/exported.pt2",
        "--print-pipeline",
        "--target",
        "trn2",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("neuron-check{chip=trn2}"), "{out}");
    for phase in [
        "lowering",
        "cleanup",
        "fusion",
        "target",
        "verification",
        "output",
    ] {
        assert!(
            err.lines().any(|l| l.starts_with(phase)),
            "-v names phase {phase}: {err}"
        );
    }
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/models/mlp/exported.pt2",
        "--print-pipeline",
        "--emit",
        "aten",
    ]);
    assert!(!ok && err.contains("--emit aten runs none"), "{err}");
    let (ok, _, err) = tpuc(&[
        "compile",
        "testdata/dynamic/mlp/core.pt2",
        "--print-pipeline",
        "--emit",
        "mlir",
    ]);
    assert!(
        !ok && err.contains("name a size with --specialize"),
        "{err}"
    );
    let (ok, out, err) = tpuc(&[
        "compile",
        "testdata/dynamic/mlp/core.pt2",
        "--print-pipeline",
        "--emit",
        "mlir",
        "--specialize",
        "s77=8",
    ]);
    assert!(ok && out.contains("lower-aten-to-stablehlo"), "{err}");
}
