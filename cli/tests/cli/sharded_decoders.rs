//! Every decoder of `testdata/coverage` (families `decoder` and `moe`) compiled with the
//! four sharding strategies of the sharding issue and fsdp with megatron, in both
//! formats, run on 4 CPU devices and compared with PyTorch's eager outputs at the
//! tolerances of the unsharded run: `dp=2 data-parallel`, `tp=2 megatron`, `dp=2,tp=2
//! data-parallel,megatron`, `fsdp=4 fsdp`, `fsdp=2,tp=2 fsdp,megatron` (fsdp splitting
//! what megatron left whole); and the mixture-of-experts decoders under expert parallelism
//! (`ep=2`, `ep=2,tp=2` with megatron, `ep=4`).
//!
//! Each artifact is also checked against XLA's own account of it: the argument bytes
//! of the compiled per-device program (`PJRT_Executable_GetCompiledMemoryStats`) are
//! the sum of every argument's share as the manifest records it (a tensor split on
//! axes of total size k holds 1/k per device), and the strategy split what it names
//! (megatron: the vocabulary and at least two projections on `tp`; fsdp: parameters on
//! `fsdp`; data-parallel: the batch of `input_ids` on `dp`), and on `tp=2` the
//! partitioned program communicates by all-reduce only (except the decoders listed in
//! `MEGATRON_GAPS`).
#![cfg(feature = "compiler")]

use tpuc_compiler::ShardPreset;
use tpuc_runtime::manifest::{ArgumentKind, ShardingFormat};
use tpuc_runtime::sharding::Mesh;

use crate::common::{read_all, repo, sharded_options};

/// The coverage models of `families`, from the corpus index (at least `min` of them).
fn corpus_models(families: &[&str], min: usize) -> Vec<String> {
    let (models, _) =
        tpuc_cli::coverage::read_model_index(&repo().join("testdata/coverage/models")).unwrap();
    let names: Vec<String> = models
        .into_iter()
        .filter(|(_, family)| families.contains(&family.as_str()))
        .map(|(name, _)| name)
        .collect();
    assert!(names.len() >= min, "{names:?}");
    names
}

/// The coverage models of families `decoder` and `moe`.
fn decoders() -> Vec<String> {
    corpus_models(&["decoder", "moe"], 15)
}

/// The strategies, as (mesh, presets).
fn strategies() -> Vec<(&'static str, Vec<ShardPreset>)> {
    vec![
        ("dp=2", vec![ShardPreset::DataParallel]),
        ("tp=2", vec![ShardPreset::Megatron]),
        (
            "dp=2,tp=2",
            vec![ShardPreset::DataParallel, ShardPreset::Megatron],
        ),
        ("fsdp=4", vec![ShardPreset::Fsdp]),
        (
            "fsdp=2,tp=2",
            vec![ShardPreset::Fsdp, ShardPreset::Megatron],
        ),
    ]
}

/// Decoders whose tensor-parallel program still moves activations between devices
/// other than by all-reduce: GPT-2's fused `c_attn` and Phi-3's fused qkv/gate_up
/// projections are sliced into q, k, v (gate, up) at offsets that do not line up with
/// the column split; BLOOM and Gemma 2 gather activations in their attention (not
/// investigated yet); the MoE decoders gather and exchange routed tokens.
const MEGATRON_GAPS: &[&str] = &[
    "gpt2",
    "phi3",
    "bloom",
    "gemma2",
    "mixtral",
    "mixtral_default_experts",
    "qwen2_moe",
    "deepseek_v3",
    "gpt_oss",
];

/// Megatron's forward pass communicates by all-reduce only (after each row-parallel
/// projection and the vocabulary-parallel embedding): no gather, exchange or permute
/// in XLA's partitioned program.
fn check_only_all_reduces(session: &tpuc_runtime::Session, what: &str) -> Vec<String> {
    match session.compiled_opcode_counts() {
        Ok(counts) => {
            let others: Vec<String> = [
                "all-gather",
                "reduce-scatter",
                "all-to-all",
                "collective-permute",
                "collective-broadcast",
            ]
            .iter()
            .filter_map(|op| counts.get(*op).map(|n| format!("{op} x{n}")))
            .collect();
            if others.is_empty() && counts.contains_key("all-reduce") {
                Vec::new()
            } else {
                vec![format!(
                    "{what}: collectives other than all-reduce: {others:?} ({counts:?})"
                )]
            }
        }
        Err(e) => vec![format!("{what}: optimized program: {e}")],
    }
}

/// The mixture-of-experts decoders of the corpus (family `moe`).
fn moe_decoders() -> Vec<String> {
    corpus_models(&["moe"], 3)
}

/// Expert parallelism, alone and with tensor parallelism, on 4 devices.
fn expert_strategies() -> Vec<(&'static str, Vec<ShardPreset>)> {
    vec![
        ("ep=2", vec![ShardPreset::Expert]),
        (
            "ep=2,tp=2",
            vec![ShardPreset::Expert, ShardPreset::Megatron],
        ),
        ("ep=4", vec![ShardPreset::Expert]),
    ]
}

/// Compiles, runs and checks every decoder under every strategy in `format`; returns
/// one line per failure.
fn check_format(format: ShardingFormat) -> Vec<String> {
    check_models(&decoders(), &strategies(), format)
}

/// Compiles, runs and checks `models` under `strategies` in `format`; returns one line
/// per failure.
fn check_models(
    models: &[String],
    strategies: &[(&'static str, Vec<ShardPreset>)],
    format: ShardingFormat,
) -> Vec<String> {
    let plugin = tpuc_runtime::discover::find_plugin(None).expect("CPU plugin (make setup)");
    let plugin = tpuc_runtime::Plugin::load(&plugin).unwrap();
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(4))
        .unwrap();
    let dir = repo().join("target/test-tmp").join(format!(
        "sharded-decoders-{format:?}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for name in models {
        let model_dir = repo().join("testdata/coverage/models").join(name);
        let inputs = read_all(&model_dir.join("inputs"));
        let expected = read_all(&model_dir.join("expected"));
        for (mesh_text, presets) in strategies {
            let mesh_text = *mesh_text;
            let what = format!("{name} --mesh {mesh_text} {presets:?} {format:?}");
            let mesh = Mesh::parse(mesh_text).unwrap();
            let art = dir.join(format!(
                "{name}-{}.tpuc",
                mesh_text.replace([',', '='], "_")
            ));
            let options = sharded_options(&mesh, presets, format);
            if let Err(e) = tpuc_compiler::compile(&model_dir.join("core.pt2"), &art, &options) {
                failures.push(format!("{what}: compile: {e}"));
                continue;
            }
            let session = match tpuc_runtime::Session::load_with(
                &art,
                &client,
                &tpuc_runtime::LoadOptions {
                    cache: tpuc_runtime::CacheMode::Bypass,
                    ..Default::default()
                },
            ) {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{what}: load: {e}"));
                    continue;
                }
            };
            match session.run(&inputs) {
                Ok(got) => {
                    for (i, (g, want)) in got.iter().zip(&expected).enumerate() {
                        let (rtol, atol) = tpuc_runtime::compare::default_tolerances(want.dtype);
                        let c = tpuc_runtime::compare::compare(g, want, rtol, atol);
                        if !c.passed() {
                            failures.push(format!("{what}: output {i}: {c:?}"));
                        }
                    }
                }
                Err(e) => failures.push(format!("{what}: run: {e}")),
            }
            failures.extend(check_shares(&session, &mesh, presets, &what));
            if mesh_text == "tp=2" && !MEGATRON_GAPS.contains(&name.as_str()) {
                failures.extend(check_only_all_reduces(&session, &what));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    failures
}

/// The per-device argument bytes XLA compiled against the manifest's shardings, and
/// the strategy's splits (see the module comment).
fn check_shares(
    session: &tpuc_runtime::Session,
    mesh: &Mesh,
    presets: &[ShardPreset],
    what: &str,
) -> Vec<String> {
    let mut failures = Vec::new();
    let manifest = session.manifest();
    let mut want = 0i64;
    for a in &manifest.arguments {
        let sharding = a
            .sharding
            .as_ref()
            .expect("a partitioned artifact shards all");
        let shard = sharding.shard_shape(mesh, &a.shape).unwrap();
        want += shard.iter().product::<i64>() * a.dtype.size_in_bytes() as i64;
    }
    match session.compiled_memory_stats() {
        Ok(stats) if stats.argument_size_in_bytes == want => {}
        Ok(stats) => failures.push(format!(
            "{what}: XLA's per-device arguments are {} B, the manifest's shares {want} B",
            stats.argument_size_in_bytes
        )),
        Err(e) => failures.push(format!("{what}: compiled memory stats: {e}")),
    }
    let split_on = |axis: &str, keep: &dyn Fn(&tpuc_runtime::manifest::Argument) -> bool| {
        manifest
            .arguments
            .iter()
            .filter(|a| keep(a))
            .filter(|a| {
                a.sharding
                    .as_ref()
                    .is_some_and(|s| s.dims.iter().flatten().any(|x| x == axis))
            })
            .map(|a| a.name.clone())
            .collect::<Vec<_>>()
    };
    let params = |a: &tpuc_runtime::manifest::Argument| a.kind == ArgumentKind::Parameter;
    if presets.contains(&ShardPreset::DataParallel) {
        let inputs = |a: &tpuc_runtime::manifest::Argument| a.kind == ArgumentKind::UserInput;
        if split_on("dp", &inputs).is_empty() {
            failures.push(format!("{what}: no input split on dp"));
        }
    }
    if presets.contains(&ShardPreset::Megatron) {
        // The vocabulary (the embedding table, or the LM head it is tied to) and the
        // attention and MLP projections.
        let split = split_on("tp", &params);
        let vocabulary =
            |n: &&String| n.contains("embed") || n.contains("wte") || n.contains("lm_head");
        let projections = split.iter().filter(|n| !vocabulary(n)).count();
        if !split.iter().any(|n| vocabulary(&n)) || projections < 2 {
            failures.push(format!(
                "{what}: megatron split too little on tp: {split:?}"
            ));
        }
    }
    if presets.contains(&ShardPreset::Fsdp) && split_on("fsdp", &params).is_empty() {
        failures.push(format!("{what}: no parameter split on fsdp"));
    }
    if presets.contains(&ShardPreset::Expert) {
        // Every fused expert weight holds 1/ep of its experts per device.
        let ep = mesh.axis_size("ep").unwrap();
        let experts: Vec<_> = manifest
            .arguments
            .iter()
            .filter(|a| {
                a.kind == ArgumentKind::Parameter
                    && a.weight.as_deref().is_some_and(|w| w.contains(".experts."))
            })
            .collect();
        if experts.is_empty() {
            failures.push(format!("{what}: no expert weights in the manifest"));
        }
        for a in experts {
            let shard = a
                .sharding
                .as_ref()
                .and_then(|s| s.shard_shape(mesh, &a.shape).ok());
            if shard.as_ref().map(|s| s[0]) != Some(a.shape[0] / ep) {
                failures.push(format!(
                    "{what}: `{}` {:?}: per-device shard {shard:?}, not 1/{ep} of its experts",
                    a.name, a.shape
                ));
            }
        }
    }
    failures
}

/// Expert parallelism (`--shard expert`, alone and with megatron) on the corpus's
/// mixture-of-experts decoders matches PyTorch in both formats, each expert weight
/// split by the `ep` factor per device.
#[test]
fn moe_decoders_match_pytorch_expert_parallel() {
    let mut failures = Vec::new();
    for format in [ShardingFormat::Shardy, ShardingFormat::Gspmd] {
        failures.extend(check_models(&moe_decoders(), &expert_strategies(), format));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn coverage_decoders_match_pytorch_sharded_in_shardy_form() {
    let failures = check_format(ShardingFormat::Shardy);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn coverage_decoders_match_pytorch_sharded_in_gspmd_form() {
    let failures = check_format(ShardingFormat::Gspmd);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Under expert parallelism each device computes its grouped matmuls on its own experts
/// (`tpuc-expert-parallel`: a manual computation holding the local experts' grouped
/// matmul), and XLA's partitioned program gathers no expert weight: it all-reduces the
/// [S, N] results, one all-reduce per grouped matmul. (The routed loop left to XLA's
/// partitioner ran whole on every device and gathered both expert weights of
/// mixtral_default_experts whole, 24,576 bytes per call at ep=2 and ep=4.)
#[test]
fn expert_parallel_grouped_mm_gathers_no_expert_weight() {
    let plugin =
        tpuc_runtime::Plugin::load(tpuc_runtime::discover::find_plugin(None).unwrap()).unwrap();
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(4))
        .unwrap();
    let model_dir = repo().join("testdata/coverage/models/mixtral_default_experts");
    let dir = repo()
        .join("target/test-tmp")
        .join(format!("ep-grouped-mm-{}", std::process::id()));
    for mesh_text in ["ep=2", "ep=4"] {
        let mesh = Mesh::parse(mesh_text).unwrap();
        let art = dir.join(format!("{}.tpuc", mesh_text.replace('=', "_")));
        let options = sharded_options(&mesh, &[ShardPreset::Expert], ShardingFormat::Shardy);
        tpuc_compiler::compile(&model_dir.join("core.pt2"), &art, &options).unwrap();
        let program = std::fs::read_to_string(art.join("program.mlir")).unwrap();
        assert_eq!(
            program.matches("SPMDFullToShardShape").count(),
            2 * 4,
            "{mesh_text}: two grouped matmuls, four operands each"
        );
        // 32 rows: each device multiplies them by its own experts (the dense form of
        // its share; the routed loop is for more than 128 rows).
        assert!(
            program.contains("tpuc.expert_parallel.grouped_mm"),
            "{mesh_text}"
        );
        let m = tpuc_runtime::session::read_manifest(&art).unwrap();
        let smallest_expert_weight = m
            .arguments
            .iter()
            .filter(|a| a.name.contains("experts"))
            .map(|a| a.shape.iter().product::<i64>() as u64 * 4)
            .min()
            .unwrap();
        let session = tpuc_runtime::Session::load(&art, &client).unwrap();
        let stats = session.compiled_opcode_stats().unwrap();
        let gathered = stats.get("all-gather").map_or(0, |s| s.result_bytes);
        assert!(
            gathered < smallest_expert_weight,
            "{mesh_text}: {gathered} bytes all-gathered ({stats:?})"
        );
        assert_eq!(
            stats.get("all-reduce").map(|s| s.count),
            Some(2),
            "{mesh_text}: {stats:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// PyTorch's loop (transformers' `_grouped_mm_fallback`): `start = 0; for i, end in
/// enumerate(offs): out[start:end] = x[start:end] @ w[i]; start = end` over zeros, each
/// slice bounded as Python bounds it (negative plus S, clamped into [0, S], an end below
/// its start empty), so a later group overwrites an earlier one's rows.
fn grouped_mm_loop(x: &[f32], w: &[f32], offs: &[i32], k: usize, n: usize) -> Vec<f32> {
    let s = x.len() / k;
    let bound =
        |v: i32| (if v < 0 { v as i64 + s as i64 } else { v as i64 }).clamp(0, s as i64) as usize;
    let mut out = vec![0f32; s * n];
    let mut start = 0i32;
    for (e, &end) in offs.iter().enumerate() {
        let (a, b) = (bound(start), bound(end).max(bound(start)));
        for r in a..b {
            for j in 0..n {
                let mut acc = 0f64;
                for c in 0..k {
                    acc += x[r * k + c] as f64 * w[(e * k + c) * n + j] as f64;
                }
                out[r * n + j] = acc as f32;
            }
        }
        start = end;
    }
    out
}

/// Expert parallelism's shares (more than 128 rows: `tpuc-expert-parallel` loops over
/// chunks of each device's own experts; up to 128 the dense form of the local experts)
/// compute what PyTorch's loop computes, on 2 and 4 devices in both sharding forms:
/// uneven groups, an empty one, rows past the last offset (zero), and offsets outside
/// the op's contract (not monotone, so that a later group overwrites an earlier one's
/// rows, also across devices and below the first row of a device's experts; negative;
/// past the rows). The weight is a parameter named like transformers' fused experts,
/// passed at run time (`--weights-as-inputs`).
#[test]
fn expert_parallel_routed_loop_matches_pytorch_loop() {
    use crate::common::{grouped_mm_model, F32};
    use tpuc_runtime::HostTensor;
    let (k, e, n) = (8usize, 4usize, 6usize);
    let dir = repo()
        .join("target/test-tmp")
        .join(format!("ep-routed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let value = |i: usize, salt: usize| (((i * 7 + salt * 13) % 23) as f32 - 11.0) / 16.0;
    let plugin =
        tpuc_runtime::Plugin::load(tpuc_runtime::discover::find_plugin(None).unwrap()).unwrap();
    let client = plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(4))
        .unwrap();
    let mut failures = Vec::new();
    // (rows, offsets): a quarter of the routed case's for the dense one.
    let cases: [(usize, [[i32; 4]; 5]); 2] = [
        (
            384,
            [
                [100, 100, 250, 384],
                [50, 120, 200, 300],
                [250, 100, 300, 384],
                [100, 300, 50, 384],
                [-284, 300, -334, 400],
            ],
        ),
        (
            96,
            [
                [25, 25, 62, 96],
                [12, 30, 50, 75],
                [62, 25, 75, 96],
                [25, 75, 12, 96],
                [-71, 75, -84, 100],
            ],
        ),
    ];
    for (s, offsets) in cases {
        let model = dir.join(format!("model-{s}.json"));
        let json = grouped_mm_model(
            s as i64,
            k as i64,
            e as i64,
            n as i64,
            F32,
            Some("moe.experts.gate_up_proj"),
        );
        std::fs::write(&model, json).unwrap();
        let x: Vec<f32> = (0..s * k).map(|i| value(i, 1)).collect();
        let w: Vec<f32> = (0..e * k * n).map(|i| value(i, 2)).collect();
        for format in [ShardingFormat::Shardy, ShardingFormat::Gspmd] {
            for mesh_text in ["ep=2", "ep=4"] {
                let mesh = Mesh::parse(mesh_text).unwrap();
                let art = dir.join(format!(
                    "{s}-{}-{format:?}.tpuc",
                    mesh_text.replace('=', "_")
                ));
                let options = tpuc_compiler::CompileOptions {
                    missing_weights: tpuc_compiler::MissingWeights::AsInputs,
                    ..sharded_options(&mesh, &[ShardPreset::Expert], format)
                };
                tpuc_compiler::compile(&model, &art, &options).unwrap();
                let program = std::fs::read_to_string(art.join("program.mlir")).unwrap();
                assert!(
                    program.contains("SPMDFullToShardShape")
                        && program.contains("\"stablehlo.if\"") == (s > 128),
                    "{mesh_text} {s} rows: not the expert-parallel form expected"
                );
                let session = tpuc_runtime::Session::load(&art, &client).unwrap();
                for offs in offsets {
                    let by_name = |name: &str| match name {
                        "x" => HostTensor::from_f32(&[s as i64, k as i64], &x),
                        "offs" => HostTensor {
                            dtype: tpuc_runtime::DType::I32,
                            shape: vec![e as i64],
                            data: offs.iter().flat_map(|o: &i32| o.to_le_bytes()).collect(),
                        },
                        _ => HostTensor::from_f32(&[e as i64, k as i64, n as i64], &w),
                    };
                    let inputs: Vec<HostTensor> = session
                        .manifest()
                        .arguments
                        .iter()
                        .filter(|a| a.kind == ArgumentKind::UserInput)
                        .map(|a| by_name(&a.name))
                        .collect();
                    let want = grouped_mm_loop(&x, &w, &offs, k, n);
                    let want = HostTensor::from_f32(&[s as i64, n as i64], &want);
                    let got = session.run(&inputs).unwrap();
                    let c = tpuc_runtime::compare::compare(&got[0], &want, 1e-5, 1e-5);
                    if !c.passed() {
                        failures.push(format!(
                            "{s} rows {mesh_text} {format:?} offs {offs:?}: {c:?}"
                        ));
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
