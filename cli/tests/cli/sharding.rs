//! Partitioned artifacts on several CPU devices: data parallel, FSDP, sharding rules,
//! the Megatron preset, and `tpuc inspect --sharding`.

#[cfg(feature = "compiler")]
use std::path::{Path, PathBuf};
#[cfg(feature = "compiler")]
use std::process::Command;

#[cfg(feature = "compiler")]
use crate::common::{compile_to, repo, run_expect_args, sharded_options, tpuc};
use crate::common::{run_files, temp};

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
        debug_values: Vec::new(),
        training: None,
        model_flops: None,
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
    let (ok, out, err) = run_files(&art, &[&xp], &[&yp], &["--no-cache"]);
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
            let (ok, _, err) = compile_to(
                &model,
                &art,
                &[
                    "--mesh",
                    "dp=2",
                    "--shard",
                    "data-parallel",
                    "--sharding-format",
                    format,
                ],
            );
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
            let args = run_expect_args(&art, &model_dir, &["--no-cache"]);
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
            "--shard: unknown sharding strategy",
        ),
        (
            vec!["--mesh", "dp=2,dp=2", "--shard", "data-parallel"],
            "named twice",
        ),
        (vec!["--shard", "data-parallel"], "need --mesh"),
        (
            vec!["--mesh", "tp=2", "--shard", "expert"],
            "a mesh axis named `ep`",
        ),
        // A model without experts: what was looked for is named.
        (
            vec!["--mesh", "ep=2", "--shard", "expert"],
            "no parameter is a fused expert weight (`<layer>.experts.<tensor>`",
        ),
    ] {
        let mut all = vec!["compile", m, "-o", o];
        all.extend(args);
        let (ok, _, err) = tpuc(&all);
        assert!(!ok && err.contains(wanted), "{all:?}: {err}");
        assert!(!out.exists());
    }
    // An expert count the axis does not divide (4 experts, ep=8).
    let mixtral = repo().join("testdata/coverage/models/mixtral/core.pt2");
    let (ok, _, err) = tpuc(&[
        "compile",
        mixtral.to_str().unwrap(),
        "-o",
        o,
        "--mesh",
        "ep=8",
        "--shard",
        "expert",
    ]);
    assert!(
        !ok && err.contains("has 4 experts") && err.contains("ep=8 does not divide"),
        "{err}"
    );
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--mesh fsdp=4 --shard fsdp` and `--mesh dp=2,fsdp=2 --shard data-parallel,fsdp`, in
/// both formats, through the library API: each device holds a quarter (or half) of the
/// split parameters, the rest whole, and the outputs match PyTorch on 4 CPU devices.
#[cfg(feature = "compiler")]
#[test]
fn fsdp_splits_parameters_and_matches_pytorch_on_four_devices() {
    use tpuc_compiler::ShardPreset;
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
                let options = sharded_options(&mesh, presets, format);
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
    use tpuc_compiler::ShardPreset;
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
    let rules = tpuc_compiler::sharding::parse_rules(&rules_text, "llama_megatron.rules")
        .unwrap()
        .rules;
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
                        tpuc_compiler::CompileOptions {
                            sharding: Some(tpuc_compiler::ShardingRequest {
                                mesh: Mesh::parse(mesh).unwrap(),
                                presets,
                                rules,
                                format,
                            }),
                            ..tpuc_compiler::CompileOptions::default()
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
    let (ok, _, err) = compile_to(&model, &art, &["--mesh", "tp=2", "--shard", "megatron"]);
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
    let (ok, _, err) = compile_to(&mlp, &plain, &[]);
    assert!(ok, "{err}");
    let (ok, out, _) = tpuc(&["inspect", "--sharding", plain.to_str().unwrap()]);
    assert!(ok && out.contains("not partitioned"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
