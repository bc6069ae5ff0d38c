//! Stateful programs partitioned over a mesh: static-KV-cache decode steps whose cache
//! is split (along heads under `tp`, along the batch under `dp`) and stays on the
//! devices between calls.
//!
//! - Every decode step of `testdata/decode` under `tp=2` (megatron), in both forms and
//!   both sharding formats, reproduces `generate()`'s greedy tokens through
//!   `tpuc generate`; the cache is split on `tp` along its heads (GPT-2's stays whole:
//!   its fused QKV projection is sliced into q, k and v after the column split, so the
//!   keys reach the cache unsplit).
//! - The batch-2 decode step of `testdata/stateful/llama_decode_batch2` under `dp=2` and
//!   `dp=2,tp=2` matches PyTorch call by call (library and `tpuc run --then`); its cache
//!   is split along the batch; the state never crosses to the host during runs; its
//!   value read back assembled equals an unpartitioned session's; and a state written
//!   back (split again) continues exactly.
#![cfg(feature = "compiler")]

use tpuc_compiler::ShardPreset;
use tpuc_runtime::manifest::{ArgumentKind, ShardingFormat};
use tpuc_runtime::sharding::Mesh;
use tpuc_runtime::HostTensor;

use crate::common::{compile_to, manifest, read_all, repo, sharded_options, temp, tpuc};

/// Decoders of testdata/decode whose cache stays whole under megatron (see above).
const CACHE_WHOLE_UNDER_TP: &[&str] = &["gpt2"];

/// The 4-D state arguments (the KV cache) of the artifact at `art`: their shardings.
fn cache_shardings(art: &std::path::Path) -> Vec<Vec<Vec<String>>> {
    manifest(art)
        .arguments
        .iter()
        .filter(|a| a.kind == ArgumentKind::Buffer && a.shape.len() == 4)
        .map(|a| a.sharding.clone().expect("partitioned").dims)
        .collect()
}

#[test]
fn decode_steps_generate_under_tensor_parallelism() {
    let dir = temp("tp-generate");
    let root = repo().join("testdata/decode");
    let names = crate::common::decode_models();
    for name in &names {
        let data = root.join(name);
        for form in ["exported", "core"] {
            for format in ["shardy", "gspmd"] {
                let what = format!("{name}/{form}/{format}");
                let art = dir.join(format!("{name}-{form}-{format}.tpuc"));
                let model = data.join(format!("{form}.pt2"));
                let (ok, _, err) = compile_to(
                    &model,
                    &art,
                    &[
                        "--mesh",
                        "tp=2",
                        "--shard",
                        "megatron",
                        "--sharding-format",
                        format,
                    ],
                );
                assert!(ok, "{what}: {err}");
                let caches = cache_shardings(&art);
                assert!(caches.len() >= 4, "{what}: {caches:?}");
                let split = |dims: &Vec<Vec<String>>| dims[1] == ["tp"];
                if CACHE_WHOLE_UNDER_TP.contains(&name.as_str()) {
                    assert!(caches.iter().all(|d| !split(d)), "{what}: {caches:?}");
                } else {
                    assert!(caches.iter().all(split), "{what}: {caches:?}");
                }
                let (ok, out, err) = tpuc(&[
                    "generate",
                    art.to_str().unwrap(),
                    "--prompt",
                    data.join("prompt.npy").to_str().unwrap(),
                    "--max-new-tokens",
                    "16",
                    "--expect",
                    data.join("expected_tokens.npy").to_str().unwrap(),
                ]);
                assert!(ok, "{what}: {out}{err}");
                assert!(err.contains("OK: the 16 tokens match"), "{what}: {err}");
                let _ = std::fs::remove_dir_all(&art);
            }
        }
    }
    // `--emit mlir` prints the program the artifact holds: the cache split and aliased.
    let (ok, mlir, err) = tpuc(&[
        "compile",
        root.join("llama/core.pt2").to_str().unwrap(),
        "--emit",
        "mlir",
        "--mesh",
        "tp=2",
        "--shard",
        "megatron",
        "--sharding-format",
        "gspmd",
        "-o",
        "-",
    ]);
    assert!(ok, "{err}");
    assert!(
        mlir.contains("mhlo.sharding = \"{devices=[1,2,1,1]0,1}\", tf.aliasing_output"),
        "{}",
        &mlir[..mlir.len().min(3000)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The inputs and expected outputs of each call of the batch-2 decode step.
fn batch2_calls() -> Vec<(Vec<HostTensor>, Vec<HostTensor>)> {
    let data = repo().join("testdata/stateful/llama_decode_batch2/calls");
    (0..3)
        .map(|k| {
            let c = data.join(k.to_string());
            (read_all(&c.join("inputs")), read_all(&c.join("expected")))
        })
        .collect()
}

fn matches(got: &HostTensor, want: &HostTensor) -> Result<(), String> {
    let (rtol, atol) = tpuc_runtime::compare::default_tolerances(want.dtype);
    let c = tpuc_runtime::compare::compare(got, want, rtol, atol);
    c.passed().then_some(()).ok_or_else(|| format!("{c:?}"))
}

#[test]
fn batch2_decode_under_data_parallelism_matches_pytorch_call_by_call() {
    let dir = temp("dp-decode");
    let data = repo().join("testdata/stateful/llama_decode_batch2");
    let calls = batch2_calls();
    let plugin = tpuc_runtime::discover::find_plugin(None).expect("CPU plugin (make setup)");
    let plugin = tpuc_runtime::Plugin::load(&plugin).unwrap();
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(4))
        .unwrap();
    let load = |art: &std::path::Path| {
        tpuc_runtime::Session::load_with(
            art,
            &client,
            &tpuc_runtime::LoadOptions {
                cache: tpuc_runtime::CacheMode::Bypass,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let strategies: [(&str, Vec<ShardPreset>); 2] = [
        ("dp=2", vec![ShardPreset::DataParallel]),
        (
            "dp=2,tp=2",
            vec![ShardPreset::DataParallel, ShardPreset::Megatron],
        ),
    ];
    for form in ["exported", "core"] {
        // The reference state: an unpartitioned session after the three calls.
        let whole_art = dir.join(format!("{form}-whole.tpuc"));
        tpuc_compiler::compile(
            &data.join(format!("{form}.pt2")),
            &whole_art,
            &tpuc_compiler::CompileOptions::default(),
        )
        .unwrap();
        let whole = load(&whole_art);
        for (inputs, _) in &calls {
            whole.run(inputs).unwrap();
        }
        for format in [ShardingFormat::Shardy, ShardingFormat::Gspmd] {
            for (mesh_text, presets) in &strategies {
                let what = format!("{form} {mesh_text} {format:?}");
                let mesh = Mesh::parse(mesh_text).unwrap();
                let art = dir.join(format!("{form}-{format:?}-{}.tpuc", mesh.num_devices()));
                let _ = std::fs::remove_dir_all(&art);
                tpuc_compiler::compile(
                    &data.join(format!("{form}.pt2")),
                    &art,
                    &sharded_options(&mesh, presets, format),
                )
                .unwrap_or_else(|e| panic!("{what}: {e}"));
                let caches = cache_shardings(&art);
                assert_eq!(caches.len(), 4, "{what}");
                for dims in &caches {
                    assert_eq!(dims[0], ["dp"], "{what}: {caches:?}");
                    if mesh_text.contains("tp") {
                        assert_eq!(dims[1], ["tp"], "{what}: {caches:?}");
                    }
                }
                let session = load(&art);
                let mut moved_out = 0u64;
                let mut moved_in = 0u64;
                for (k, (inputs, expected)) in calls.iter().enumerate() {
                    let got = session.run(inputs).unwrap();
                    assert_eq!(got.len(), expected.len(), "{what}");
                    for (g, want) in got.iter().zip(expected) {
                        matches(g, want).unwrap_or_else(|e| panic!("{what}: call {k}: {e}"));
                        moved_out += g.data.len() as u64;
                    }
                    moved_in += inputs.iter().map(|t| t.data.len() as u64).sum::<u64>();
                }
                // Only the user inputs and outputs crossed: the cache stayed on the
                // devices (an input whole on several devices crosses once per device).
                let stats = session.transfer_stats();
                assert_eq!(stats.device_to_host_bytes, moved_out, "{what}: {stats:?}");
                assert!(
                    stats.host_to_device_bytes <= moved_in * mesh.num_devices() as u64,
                    "{what}: {stats:?}"
                );
                // The state read back whole equals the unpartitioned session's.
                let names: Vec<String> = session
                    .state_names()
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                assert!(names.len() >= 4, "{what}: {names:?}");
                for name in &names {
                    let got = session.read_state(name).unwrap();
                    let want = whole.read_state(name).unwrap();
                    matches(&got, &want).unwrap_or_else(|e| panic!("{what}: state {name}: {e}"));
                }
                // Written back (split again) after call 0, the state continues exactly:
                // call 1 matches PyTorch again.
                session.reset_state().unwrap();
                session.run(&calls[0].0).unwrap();
                let after0: Vec<HostTensor> = names
                    .iter()
                    .map(|n| session.read_state(n).unwrap())
                    .collect();
                session.run(&calls[1].0).unwrap();
                for (name, value) in names.iter().zip(&after0) {
                    session.write_state(name, value).unwrap();
                }
                let again = session.run(&calls[1].0).unwrap();
                matches(&again[0], &calls[1].1[0])
                    .unwrap_or_else(|e| panic!("{what}: call 1 after write_state: {e}"));
                drop(session);
                let _ = std::fs::remove_dir_all(&art);
            }
        }
    }
    // From the command line: `tpuc run --then` opens the mesh's devices and carries
    // the split cache.
    let art = dir.join("cli.tpuc");
    let (ok, _, err) = compile_to(
        &data.join("core.pt2"),
        &art,
        &["--mesh", "dp=2", "--shard", "data-parallel"],
    );
    assert!(ok, "{err}");
    let mut args = vec!["run".to_string(), art.to_string_lossy().into_owned()];
    for k in 0..3 {
        if k > 0 {
            args.push("--then".into());
        }
        let c = data.join(format!("calls/{k}"));
        for (flag, file) in [
            ("--input", c.join("inputs/0_input_ids.npy")),
            ("--input", c.join("inputs/1_cache_position.npy")),
            ("--expect", c.join("expected/0.npy")),
        ] {
            args.push(flag.into());
            args.push(file.to_string_lossy().into_owned());
        }
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = tpuc(&refs);
    assert!(ok && out.matches(" OK").count() == 3, "{out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
