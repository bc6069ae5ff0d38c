//! `tpuc compile --topology` and `tpuc report`: TPU executables compiled by libtpu with
//! no TPU attached (libtpu from `make setup`, `.deps/libtpu`). Without libtpu each test
//! prints SKIPPED (and `make test` a banner); with `TPUC_LIBTPU` set, a missing libtpu
//! fails them.
#![cfg(feature = "compiler")]

use std::path::{Path, PathBuf};

use crate::common::{grouped_mm_model, libtpu_present, manifest, repo, temp, tpuc, BF16};

/// Compiles `model` with `extra` flags for `topologies`; the artifact's manifest.
fn compile(
    model: &Path,
    art: &Path,
    topologies: &str,
    extra: &[&str],
) -> Result<tpuc_runtime::Manifest, String> {
    let mut args = vec![
        "compile",
        model.to_str().unwrap(),
        "-o",
        art.to_str().unwrap(),
        "--topology",
        topologies,
    ];
    args.extend(extra);
    let (ok, _, err) = tpuc(&args);
    if !ok {
        return Err(err);
    }
    Ok(manifest(art))
}

/// Compile options whose finishing step compiles for `topologies` in this process,
/// through the hook `tpuc compile --topology` uses (libtpu loads once).
fn in_process_topologies(topologies: &[&str]) -> tpuc_compiler::CompileOptions {
    let topologies: Vec<String> = topologies.iter().map(|t| t.to_string()).collect();
    tpuc_compiler::CompileOptions {
        finish: Some(std::sync::Arc::new(
            move |dir: &Path, m: &mut tpuc_runtime::Manifest, program: &str| {
                tpuc_runtime::tpu::compile_for_topologies(
                    dir,
                    m,
                    program,
                    &topologies,
                    None,
                    &|line| eprintln!("{line}"),
                )
            },
        )),
        ..Default::default()
    }
}

/// Every corpus model (`testdata/models` and `testdata/coverage`, Core ATen form)
/// compiles for v5e:2x2 and v6e:1x1; every figure of each report is positive, the
/// executable is where the manifest says with its checksum, and `tpuc report` prints
/// both topologies (and `--json` the same figures).
#[test]
fn every_corpus_model_compiles_for_v5e_and_v6e() {
    if !libtpu_present() {
        return;
    }
    let dir = temp("corpus");
    let mut models: Vec<(String, PathBuf)> = Vec::new();
    for corpus in ["testdata/models", "testdata/coverage/models"] {
        let mut names: Vec<PathBuf> = std::fs::read_dir(repo().join(corpus))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("core.pt2").is_file())
            .collect();
        names.sort();
        for p in names {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            models.push((name, p.join("core.pt2")));
        }
    }
    assert!(models.len() >= 59, "{}", models.len());
    let mut failures = Vec::new();
    // In this process (libtpu loads once), through the hook `tpuc compile --topology`
    // uses.
    let options = in_process_topologies(&["v5e:2x2", "v6e:1x1"]);
    for (name, model) in &models {
        let art = dir.join(format!("{name}.tpuc"));
        let m = match tpuc_compiler::compile(model, &art, &options) {
            Ok(_) => manifest(&art),
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let topologies: Vec<&str> = m
            .tpu_executables
            .iter()
            .map(|e| e.topology.as_str())
            .collect();
        if topologies != ["v5e:2x2", "v6e:1x1"] {
            failures.push(format!("{name}: executables for {topologies:?}"));
        }
        for e in &m.tpu_executables {
            let r = &e.report;
            let figures = [
                ("argument_bytes", r.argument_bytes as f64),
                ("output_bytes", r.output_bytes as f64),
                ("peak_bytes", r.peak_bytes as f64),
                ("generated_code_bytes", r.generated_code_bytes as f64),
                ("bytes_accessed", r.bytes_accessed),
                ("hbm_bytes_per_device", r.hbm_bytes_per_device as f64),
            ];
            for (what, v) in figures {
                if v <= 0.0 {
                    failures.push(format!("{name} {}: {what} = {v}", e.topology));
                }
            }
            if !r.fits || r.partitions != 1 {
                failures.push(format!("{name} {}: {r:?}", e.topology));
            }
            let bytes = std::fs::read(art.join(&e.executable.file)).unwrap_or_default();
            if bytes.is_empty()
                || tpuc_runtime::manifest::Checksum::of(&bytes) != e.executable.checksum
            {
                failures.push(format!(
                    "{name} {}: executable file {}",
                    e.topology, e.executable.file
                ));
            }
        }
        // Floating-point work is counted: every model but the integer-only one.
        let flops = m
            .tpu_executables
            .iter()
            .map(|e| e.report.flops)
            .fold(f64::MAX, f64::min);
        if name != "int_ops" && flops <= 0.0 {
            failures.push(format!("{name}: no FLOPs counted"));
        }
        if name == "gpt2" {
            let (ok, out, err) = tpuc(&["report", art.to_str().unwrap()]);
            assert!(ok, "{err}");
            for wanted in [
                "v5e:2x2 (4 chips, 4 devices",
                "v6e:1x1 (1 chips, 1 devices",
                "fits: yes",
                "FLOP",
            ] {
                assert!(out.contains(wanted), "{wanted}\n{out}");
            }
            let (ok, json, err) = tpuc(&["report", art.to_str().unwrap(), "--json"]);
            assert!(ok, "{err}");
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert_eq!(
                v["tpu_executables"][0]["report"]["flops"].as_f64().unwrap(),
                m.tpu_executables[0].report.flops
            );
        }
        let _ = std::fs::remove_dir_all(&art);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every corpus model at its batch and at twice it (`core_double_batch.json`, exported
/// by testdata/generate_double_batch.py from the model's own builder), both compiled as
/// a bare model.json (zero-filled weights, so the two differ in the batch alone) for
/// v5e:1x1: the bigger batch has more FLOPs (the integer-only model has none), argument
/// and output bytes, no smaller peak, and an estimate of bytes accessed that does not
/// drop (by more than 5%: see below).
#[test]
fn report_figures_grow_with_the_batch() {
    if !libtpu_present() {
        return;
    }
    let dir = temp("batch");
    let mut models: Vec<(String, PathBuf)> = Vec::new();
    for corpus in ["testdata/models", "testdata/coverage/models"] {
        for e in std::fs::read_dir(repo().join(corpus)).unwrap() {
            let p = e.unwrap().path();
            if p.join("core.pt2").is_file() {
                let name = p
                    .strip_prefix(repo())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                models.push((name, p));
            }
        }
    }
    models.sort();
    assert!(models.len() >= 59, "{}", models.len());
    let options = in_process_topologies(&["v5e:1x1"]);
    let mut failures = Vec::new();
    for (name, model_dir) in &models {
        let doubled = model_dir.join("core_double_batch.json");
        if !doubled.is_file() {
            failures.push(format!(
                "{name}: no core_double_batch.json (run testdata/generate_double_batch.py)"
            ));
            continue;
        }
        let archive =
            tpuc_compiler::frontend::archive::Archive::open(&model_dir.join("core.pt2")).unwrap();
        let tag = name.replace('/', "_");
        let single = dir.join(format!("{tag}.json"));
        std::fs::write(&single, archive.model_json().unwrap()).unwrap();
        let mut reports = Vec::new();
        for (times, json) in [("1", &single), ("2", &doubled)] {
            let art = dir.join(format!("{tag}-{times}.tpuc"));
            match tpuc_compiler::compile(json, &art, &options) {
                Ok(_) => reports.push(manifest(&art).tpu_executables[0].report.clone()),
                Err(e) => failures.push(format!("{name} batch x{times}: {e}")),
            }
            let _ = std::fs::remove_dir_all(&art);
        }
        let [small, big] = reports.as_slice() else {
            continue;
        };
        let grew = [
            (
                "flops",
                big.flops > small.flops || name.ends_with("/int_ops"),
            ),
            // XLA's estimate of bytes accessed follows its fusion choices, which can
            // change with the batch: on the bf16 MLP (batch 4 -> 8) it measured 2% less
            // at the bigger batch, every other model more. So: no real drop.
            (
                "bytes_accessed",
                big.bytes_accessed >= 0.95 * small.bytes_accessed,
            ),
            ("argument_bytes", big.argument_bytes > small.argument_bytes),
            ("output_bytes", big.output_bytes > small.output_bytes),
            ("peak_bytes", big.peak_bytes >= small.peak_bytes),
        ];
        for (what, ok) in grew {
            if !ok {
                failures.push(format!("{name}: {what} did not grow: {small:?} -> {big:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sharded programs compile for a slice of their mesh's size (v5e:2x1, v5e:2x2), and
/// each device holds the share the strategy implies: Megatron's tp=2 puts less than the whole model on a device, fsdp=4 at most
/// half of it. Measured against the unsharded program on the same slice: the TPU pads
/// each small tensor to its tiles (this Llama's tensors are 32 wide), so its shares
/// are not the exact 1/k the CPU plugin shows (`cli/tests/cli/sharded_decoders.rs`).
#[test]
fn sharded_programs_compile_for_v5e_with_per_device_shares() {
    if !libtpu_present() {
        return;
    }
    let dir = temp("sharded");
    let model = repo().join("testdata/models/llama/core.pt2");
    let args = |a: &[&'static str]| a.to_vec();
    // At -O1, the unsharded program has the sharded ones' arguments: -O2 would store
    // the attention projections packed (stablehlo-merge-dots), which sharded compiles
    // never do, and the TPU pads a packed tensor differently.
    let whole = compile(&model, &dir.join("whole.tpuc"), "v5e:2x2", &["-O1"]).unwrap();
    let whole_args = whole.tpu_executables[0].report.argument_bytes;
    for (tag, topology, flags, at_most) in [
        (
            "tp2",
            "v5e:2x1",
            args(&["--mesh", "tp=2", "--shard", "megatron"]),
            0.85,
        ),
        (
            "fsdp4",
            "v5e:2x2",
            args(&["--mesh", "fsdp=4", "--shard", "fsdp"]),
            0.5,
        ),
    ] {
        for format in ["shardy", "gspmd"] {
            let mut extra = flags.clone();
            extra.extend(["--sharding-format", format]);
            let m = compile(
                &model,
                &dir.join(format!("{tag}-{format}.tpuc")),
                topology,
                &extra,
            )
            .unwrap_or_else(|e| panic!("{tag} {format}: {e}"));
            let r = &m.tpu_executables[0].report;
            assert_eq!(
                r.partitions as usize,
                m.partitioning.as_ref().unwrap().mesh.num_devices()
            );
            let share = r.argument_bytes as f64 / whole_args as f64;
            assert!(
                share > 0.0 && share <= at_most,
                "{tag} {format}: {} of {whole_args} argument bytes per device",
                r.argument_bytes
            );
        }
    }
    // A mesh the slice cannot hold, an unknown topology, --topology with --emit mlir:
    // errors that say so, and no artifact.
    let out = dir.join("refused.tpuc");
    let m = model.to_str().unwrap();
    let o = out.to_str().unwrap();
    for (extra, wanted) in [
        (
            vec![
                "--topology",
                "v5e:1x1",
                "--mesh",
                "tp=2",
                "--shard",
                "megatron",
            ],
            "has 1 devices; the program is partitioned over 2",
        ),
        (
            vec![
                "--topology",
                "v5e:2x2",
                "--mesh",
                "tp=2",
                "--shard",
                "megatron",
            ],
            "partition over all 4",
        ),
        (vec!["--topology", "v9:1x1"], "libtpu does not accept it"),
        (
            vec!["--topology", "v5e:1x1", "--emit", "mlir"],
            "cannot be used with --emit mlir",
        ),
    ] {
        let mut all = vec!["compile", m, "-o", o];
        all.extend(extra);
        let (ok, _, err) = tpuc(&all);
        assert!(!ok && err.contains(wanted), "{all:?}: {err}");
        assert!(!out.exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program the TPU compiler rejects (an int64 matmul: TPUs have no 64-bit integer
/// dot) is an error with libtpu's message and the graph node it blames, found through
/// the node locations of the program libtpu gets; no artifact is written.
#[test]
fn tpu_rejections_name_the_graph_node() {
    if !libtpu_present() {
        return;
    }
    let dir = temp("rejected");
    let model = repo().join("testdata/ops/cases/addmm.default/i64/model.json");
    let out = dir.join("rejected.tpuc");
    let err = compile(&model, &out, "v5e:1x1", &["--weights-as-inputs"]).unwrap_err();
    for wanted in [
        "libtpu rejected the program for v5e:1x1",
        "s64",
        "model.json:1 [addmm]",
        "at graph node `addmm`",
    ] {
        assert!(err.contains(wanted), "{wanted}: {err}");
    }
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The report shows what -O0 against -O2 and each --matmul-precision change.
#[test]
fn optimization_level_and_matmul_precision_show_in_the_report() {
    if !libtpu_present() {
        return;
    }
    let dir = temp("levels");
    let model = repo().join("testdata/models/bert/core.pt2");
    let report = |tag: &str, extra: &[&str]| {
        compile(&model, &dir.join(format!("{tag}.tpuc")), "v5e:1x1", extra)
            .unwrap_or_else(|e| panic!("{tag}: {e}"))
            .tpu_executables[0]
            .report
            .clone()
    };
    let o0 = report("o0", &["-O0"]);
    let o2 = report("o2", &[]);
    let fast = report("default", &["--matmul-precision", "default"]);
    let differs = |a: &tpuc_runtime::manifest::TpuReport, b: &tpuc_runtime::manifest::TpuReport| {
        a.flops != b.flops
            || a.bytes_accessed != b.bytes_accessed
            || a.temp_bytes != b.temp_bytes
            || a.generated_code_bytes != b.generated_code_bytes
    };
    assert!(differs(&o0, &o2), "-O0 {o0:?}\n-O2 {o2:?}");
    let high = report("high", &["--matmul-precision", "high"]);
    assert!(differs(&o2, &fast), "highest {o2:?}\ndefault {fast:?}");
    assert!(differs(&high, &fast), "high {high:?}\ndefault {fast:?}");
    assert!(differs(&o2, &high), "highest {o2:?}\nhigh {high:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The TPU-optimized program is kept beside each executable, and `tpuc report` reads it:
/// the main-memory traffic against the arguments, the roofline, and with `--top N` the
/// operations that move and compute the most, by graph node. Its FLOP count agrees with
/// libtpu's cost analysis. An artifact from before the file was kept still reports (and
/// `--top` says why it cannot); a damaged file is refused.
#[test]
fn report_top_lists_operations_by_traffic_and_flops() {
    if !libtpu_present() {
        return;
    }
    let dir = temp("report-top");
    let model = repo().join("testdata/models/llama/core.pt2");
    let art = dir.join("llama.tpuc");
    let m = compile(&model, &art, "v5e:1x1", &[]).unwrap();
    let e = &m.tpu_executables[0];
    let file = e
        .optimized_program
        .as_ref()
        .expect("optimized program kept");
    let bytes = std::fs::read(art.join(&file.file)).unwrap();
    assert_eq!(tpuc_runtime::manifest::Checksum::of(&bytes), file.checksum);
    let cost = tpuc_runtime::hlo_cost::program_cost(&bytes).unwrap();
    let ratio = cost.flops / e.report.flops;
    assert!(
        (0.8..1.25).contains(&ratio),
        "{} vs libtpu's {}",
        cost.flops,
        e.report.flops
    );
    assert!(
        cost.hbm_bytes > 0 && cost.hbm_bytes <= cost.bytes,
        "{cost:?}"
    );

    let (ok, out, err) = tpuc(&["report", art.to_str().unwrap(), "--top", "4"]);
    assert!(ok, "{err}");
    for wanted in [
        "traffic per call:",
        "of main memory (HBM)",
        "x the arguments'",
        "roofline per call:",
        "top 4 operations by main-memory traffic",
        "top 4 operations by FLOPs",
    ] {
        assert!(out.contains(wanted), "{wanted}:\n{out}");
    }
    // The most FLOPs are in the model's matmuls (Core ATen `mm`/`bmm` nodes).
    let flops_rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("operations by FLOPs"))
        .skip(1)
        .collect();
    assert_eq!(flops_rows.len(), 4, "{out}");
    assert!(flops_rows[0].contains("mm"), "{out}");

    let (ok, json, err) = tpuc(&["report", art.to_str().unwrap(), "--json", "--top", "2"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let t = &v["traffic"][0];
    assert_eq!(t["hbm_bytes"].as_u64(), Some(cost.hbm_bytes));
    assert_eq!(t["top_by_hbm"].as_array().unwrap().len(), 2);
    assert!(
        t["top_by_flops"][0]["node"]
            .as_str()
            .unwrap()
            .contains("mm"),
        "{t}"
    );

    // An artifact compiled before the optimized program was kept.
    let old = dir.join("old.tpuc");
    let (ok, _, err) = tpuc(&[
        "compile",
        model.to_str().unwrap(),
        "-o",
        old.to_str().unwrap(),
        "--topology",
        "v5e:1x1",
    ]);
    assert!(ok, "{err}");
    let path = old.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let removed = manifest["tpu_executables"][0]
        .as_object_mut()
        .unwrap()
        .remove("optimized_program");
    assert!(removed.is_some());
    std::fs::write(&path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    let (ok, out, err) = tpuc(&["report", old.to_str().unwrap()]);
    assert!(ok && !out.contains("traffic per call"), "{out}{err}");
    let (ok, _, err) = tpuc(&["report", old.to_str().unwrap(), "--top", "3"]);
    assert!(
        !ok && err.contains("keeps no TPU-optimized program"),
        "{err}"
    );

    // A damaged file.
    std::fs::write(art.join(&file.file), b"not a module").unwrap();
    let (ok, _, err) = tpuc(&["report", art.to_str().unwrap()]);
    assert!(!ok && err.contains("does not match its checksum"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The mixture-of-experts grouped matmul of DESIGN.md, [4096, 2048] x [16, 2048, 768]
/// in bf16, compiled for v5e:2x2 by `tpuc compile --topology`'s path: libtpu gets
/// `chlo.ragged_dot` (its grouped-matmul kernels) and XLA's cost analysis counts about
/// the routed FLOPs, 2*S*K*N = 12.9 GFLOP, where the dense form costs E times that; the
/// artifact's own program keeps the portable loop (no `chlo.`). The portable loop
/// compiled as is for the same slice is reported for comparison: XLA counts its body
/// once (one 128-row chunk), so its figure says nothing about the total.
#[test]
fn grouped_mm_compiles_to_ragged_dot_for_v5e_at_the_routed_cost() {
    if !libtpu_present() {
        return;
    }
    let (s, k, e, n) = (4096i64, 2048i64, 16i64, 768i64);
    let routed = 2.0 * (s * k * n) as f64;
    let dir = temp("grouped-mm");
    let model = dir.join("grouped_mm.json");
    std::fs::write(&model, grouped_mm_model(s, k, e, n, BF16, None)).unwrap();
    let art = dir.join("grouped_mm.tpuc");
    tpuc_compiler::compile(&model, &art, &in_process_topologies(&["v5e:2x2"])).unwrap();
    let ragged = manifest(&art).tpu_executables[0].report.clone();
    let program = std::fs::read_to_string(art.join("program.mlir")).unwrap();
    assert!(program.contains("\"stablehlo.while\"") && !program.contains("chlo."));

    // The same node lowered densely and as the portable loop, compiled for the slice.
    let text = tpuc_compiler::compile_to_aten_mlir(&model).unwrap();
    let libtpu = tpuc_runtime::tpu::load_libtpu(None).unwrap();
    let flops = |pipeline: &str| {
        let program = tpuc_compiler::run_opt(&text, "grouped_mm", pipeline, false).unwrap();
        let compiled = tpuc_runtime::tpu::compile_on(
            &libtpu,
            "v5e:2x2",
            &program,
            1,
            &Default::default(),
            &|_, _| {},
        )
        .unwrap();
        compiled.report.flops
    };
    let dense = flops("lower-aten-to-stablehlo{grouped-mm=dense}");
    let looped = flops("lower-aten-to-stablehlo");
    eprintln!(
        "grouped_mm {s}x{k} x {e}x{k}x{n} bf16, libtpu v5e:2x2: ragged dot {:.2} GFLOP, \
         {:.0} MB accessed; dense {:.1} GFLOP; portable loop (body counted once) {:.3} \
         GFLOP; routed {:.2} GFLOP",
        ragged.flops / 1e9,
        ragged.bytes_accessed / 1e6,
        dense / 1e9,
        looped / 1e9,
        routed / 1e9
    );
    assert!(
        ragged.flops >= routed && ragged.flops <= 1.1 * routed,
        "ragged dot {} vs routed {routed}",
        ragged.flops
    );
    assert!(dense >= 0.9 * e as f64 * routed, "dense {dense}");
    let _ = std::fs::remove_dir_all(&dir);
}
