//! Dynamic shapes: one compile runs every size in range, specializations equal static
//! exports, out-of-range sizes refused by name, shape-polymorphic StableHLO, runtime
//! assertions checked per size.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tpuc_compiler::CompileOptions;
use tpuc_runtime::manifest::ArgumentKind;
use tpuc_runtime::{HostTensor, Session};

use crate::common::{
    assert_calls_match, client, edit_json, meta_calls, model_path, repo, rewrite_archive, temp_dir,
};

/// The programs of testdata/dynamic, each with its directory.
fn dynamic_programs() -> Vec<(String, PathBuf)> {
    let root = repo().join("testdata/dynamic");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("index.json")).unwrap()).unwrap();
    index["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let name = v.as_str().unwrap().to_string();
            let dir = root.join(&name);
            (name, dir)
        })
        .collect()
}

/// The specializer the full `tpuc` gives the runtime.
fn specializer() -> tpuc_runtime::session::Specializer {
    Arc::new(|dir, manifest, sizes| {
        tpuc_compiler::dynamic::specialize_artifact(dir, manifest, sizes).map_err(|e| e.to_string())
    })
}

/// Every dynamic program of testdata (MLP and CNN with a dynamic batch, BERT and a tiny
/// Llama with dynamic batch and sequence length), in both forms, is compiled once and
/// run at every size of its calls, both ends of every range included; each call
/// matches eager PyTorch. The sizes the artifact has no program for are specialized on
/// demand, once each.
#[test]
fn dynamic_programs_run_every_size_in_range_from_one_compile() {
    let out = temp_dir("dynamic");
    let programs = dynamic_programs();
    assert!(programs.len() >= 4, "{programs:?}");
    for (name, dir) in programs {
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        // The calls cover both ends of every range.
        let calls_meta = meta["calls"].as_array().unwrap();
        assert!(calls_meta.len() >= 3, "{name}");
        for (dim, range) in meta["dims"].as_object().unwrap() {
            for end in ["min", "max"] {
                assert!(
                    calls_meta.iter().any(|c| c["sizes"][dim] == range[end]),
                    "{name}: no call at the {end} of {dim}"
                );
            }
        }
        let calls = meta_calls(&dir);
        for form in ["exported", "core"] {
            let tag = format!("{name}/{form}");
            let art = out.join(format!("{name}-{form}.tpuc"));
            tpuc_compiler::compile(
                &dir.join(format!("{form}.pt2")),
                &art,
                &CompileOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{tag}: {e}"));
            let manifest = tpuc_runtime::session::read_manifest(&art).unwrap();
            let section = manifest.dynamic.as_ref().expect("a dynamic section");
            assert_eq!(section.specializations.len(), 1, "{tag}");
            assert!(
                manifest
                    .arguments
                    .iter()
                    .any(|a| a.kind == ArgumentKind::UserInput && a.shape.contains(&-1)),
                "{tag}: no input is dynamic in the manifest"
            );
            let events = Arc::new(std::sync::Mutex::new(Vec::new()));
            let sink = events.clone();
            let options = tpuc_runtime::LoadOptions {
                cache: tpuc_runtime::CacheMode::Bypass,
                specializer: Some(specializer()),
                progress: Some(Arc::new(move |e: &tpuc_runtime::LoadEvent<'_>| {
                    if let tpuc_runtime::LoadEvent::Specialized {
                        sizes, specialized, ..
                    } = e
                    {
                        sink.lock()
                            .unwrap()
                            .push(((*sizes).clone(), specialized.is_some()));
                    }
                })),
                ..tpuc_runtime::LoadOptions::default()
            };
            let session = Session::load_with(&art, client(), &options).unwrap();
            // Every call twice: the second time each size has its executable.
            for round in 0..2 {
                assert_calls_match(&session, &calls, &format!("{tag} round {round}"));
            }
            let events = events.lock().unwrap();
            let example = &section.specializations[0].sizes;
            assert_eq!(events.len(), calls.len() - 1, "{tag}: {events:?}");
            assert!(
                events
                    .iter()
                    .all(|(s, on_demand)| s != example && *on_demand),
                "{tag}: {events:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A dynamic program specialized for the sizes of a static export of the same model
/// is that static export's program, byte for byte, in both forms, as StableHLO text
/// and as an artifact (weights packed by stablehlo-merge-dots included).
#[test]
fn a_specialization_is_the_static_export_of_its_sizes() {
    let out = temp_dir("dynamic-vs-static");
    for (name, dir) in dynamic_programs() {
        for form in ["exported", "core"] {
            let tag = format!("{name}/{form}");
            let dynamic = dir.join(format!("{form}.pt2"));
            let fixed = dir.join(format!("static/{form}.pt2"));
            let model = tpuc_compiler::frontend::load(&dynamic).unwrap();
            let sizes = model.dynamic.as_ref().unwrap().example_sizes();
            assert!(tpuc_compiler::frontend::load(&fixed)
                .unwrap()
                .dynamic
                .is_none());
            let options = CompileOptions {
                specialize: vec![sizes.clone()],
                ..CompileOptions::default()
            };
            let (specialized, _) = tpuc_compiler::compile_to_mlir(&dynamic, &options).unwrap();
            let (reference, _) =
                tpuc_compiler::compile_to_mlir(&fixed, &CompileOptions::default()).unwrap();
            assert!(specialized == reference, "{tag}: {sizes:?}");
            let (a, b) = (
                out.join(format!("{name}-{form}-dyn")),
                out.join(format!("{name}-{form}-static")),
            );
            tpuc_compiler::compile(&dynamic, &a, &CompileOptions::default()).unwrap();
            tpuc_compiler::compile(&fixed, &b, &CompileOptions::default()).unwrap();
            let read = |d: &Path, f: &str| std::fs::read(d.join(f)).unwrap();
            assert!(
                read(&a, "program.mlir") == read(&b, "program.mlir"),
                "{tag}"
            );
            assert!(
                read(&a, "weights.safetensors") == read(&b, "weights.safetensors"),
                "{tag}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Sizes compiled ahead of time (`--specialize`) run without a specializer (the
/// runtime-only tpuc); a size the artifact has no program for is then an error that
/// says how to get one. Sizes out of range, inputs that disagree on a size, and bad
/// `--specialize` / `--emit` requests are errors naming the symbol, its range and the
/// inputs.
#[test]
fn dynamic_sizes_out_of_range_or_disagreeing_are_refused_by_name() {
    let out = temp_dir("dynamic-errors");
    let bert = repo().join("testdata/dynamic/bert/core.pt2");
    let bindings = |s: &str| tpuc_runtime::symbolic::parse_bindings(s).unwrap();
    let art = out.join("bert.tpuc");
    let options = CompileOptions {
        specialize: vec![bindings("s43=1,s53=2"), bindings("s43=4,s53=64")],
        ..CompileOptions::default()
    };
    tpuc_compiler::compile(&bert, &art, &options).unwrap();
    let manifest = tpuc_runtime::session::read_manifest(&art).unwrap();
    let section = manifest.dynamic.as_ref().unwrap();
    assert_eq!(section.specializations.len(), 3);
    for s in &section.specializations[1..] {
        assert!(art.join(&s.program.file).is_file(), "{:?}", s.program);
    }
    // No specializer: what the artifact holds runs, nothing else.
    let session = Session::load(&art, client()).unwrap();
    let ids = |b: i64, s: i64| HostTensor {
        dtype: tpuc_runtime::DType::I64,
        shape: vec![b, s],
        data: vec![0u8; (b * s * 8) as usize],
    };
    for (b, s) in [(1, 2), (4, 64), (2, 17)] {
        let outputs = session.run(&[ids(b, s), ids(b, s)]).unwrap();
        assert_eq!(outputs[0].shape, vec![b, s, 32]);
    }
    let e = session
        .run(&[ids(3, 8), ids(3, 8)])
        .unwrap_err()
        .to_string();
    for want in [
        "no program for the sizes s43=3, s53=8",
        "--specialize s43=3,s53=8",
        "full tpuc",
    ] {
        assert!(e.contains(want), "{e}");
    }
    let e = session
        .run(&[ids(2, 65), ids(2, 65)])
        .unwrap_err()
        .to_string();
    for want in [
        "size 65 of `input_ids` dimension 1",
        "range of `s53`, 2..=64",
        "`attention_mask` dimension 1",
    ] {
        assert!(e.contains(want), "{e}");
    }
    let e = session
        .run(&[ids(2, 17), ids(3, 17)])
        .unwrap_err()
        .to_string();
    for want in [
        "disagree on the size `s43` (range 1..=4)",
        "`input_ids` dimension 0 is 2",
        "`attention_mask` dimension 0 is 3",
    ] {
        assert!(e.contains(want), "{e}");
    }
    let e = session
        .run(&[ids(0, 17), ids(0, 17)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("range of `s43`, 1..=4"), "{e}");
    // Compile-time requests.
    let err = |options: &CompileOptions| {
        tpuc_compiler::compile(&bert, &out.join("x.tpuc"), options)
            .unwrap_err()
            .to_string()
    };
    let e = err(&CompileOptions {
        specialize: vec![bindings("s43=2,s53=65")],
        ..CompileOptions::default()
    });
    assert!(
        e.contains("s53=65 is outside the range of `s53`, 2..=64"),
        "{e}"
    );
    let e = err(&CompileOptions {
        specialize: vec![bindings("s43=2")],
        ..CompileOptions::default()
    });
    assert!(e.contains("no value for the size `s53`"), "{e}");
    let e = err(&CompileOptions {
        specialize: vec![bindings("batch=2,s43=2,s53=3")],
        ..CompileOptions::default()
    });
    assert!(e.contains("no size `batch`"), "{e}");
    let e = err(&CompileOptions {
        target: tpuc_compiler::Target::parse("trn2").unwrap(),
        ..CompileOptions::default()
    });
    assert!(e.contains("not supported for dynamic programs"), "{e}");
    let e = tpuc_compiler::compile_to_aten_mlir(&bert)
        .unwrap_err()
        .to_string();
    for want in [
        "s43 (dimension 0 of `input_ids`, dimension 0 of `attention_mask`) in 1..=4",
        "--specialize s43=2,s53=17",
    ] {
        assert!(e.contains(want), "{e}");
    }
    let e = tpuc_compiler::compile(
        &model_path("mlp", "core"),
        &out.join("y.tpuc"),
        &CompileOptions {
            specialize: vec![bindings("s0=2")],
            ..CompileOptions::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("has no dynamic sizes"), "{e}");
    assert!(!out.join("x.tpuc").exists() && !out.join("y.tpuc").exists());
    let _ = std::fs::remove_dir_all(&out);
}

/// `--emit mlir` of every dynamic program without `--specialize` is shape-polymorphic
/// StableHLO: `?` where the inputs' dimensions are symbolic, one `get_dimension_size`
/// per symbol, no static trace of the sizes it was made from, and the same text each
/// time. (That jaxlib refines and runs it, matching PyTorch at every call, is
/// `make check-polymorphic`, which needs the bench venv.)
#[test]
fn dynamic_programs_have_shape_polymorphic_stablehlo() {
    for (name, dir) in dynamic_programs() {
        for form in ["exported", "core"] {
            let tag = format!("{name}/{form}");
            let path = dir.join(format!("{form}.pt2"));
            let model = tpuc_compiler::frontend::load(&path).unwrap();
            let symbols = model.dynamic.as_ref().unwrap().signature.symbols.len();
            let (text, _) = tpuc_compiler::compile_to_mlir(&path, &CompileOptions::default())
                .unwrap_or_else(|e| panic!("{tag}: {e}"));
            let main = text
                .lines()
                .find(|l| l.contains("sym_name = \"main\""))
                .unwrap();
            assert!(main.contains("tensor<?x"), "{tag}: {main}");
            assert_eq!(
                text.matches("\"stablehlo.get_dimension_size\"").count(),
                symbols,
                "{tag}"
            );
            for op in ["\"stablehlo.reshape\"", "\"stablehlo.broadcast_in_dim\""] {
                // What is left of these has static shapes only.
                for line in text.lines().filter(|l| l.contains(op)) {
                    let result = line.rsplit(" -> ").next().unwrap();
                    assert!(!result.contains('?'), "{tag}: {line}");
                }
            }
            let (again, _) =
                tpuc_compiler::compile_to_mlir(&path, &CompileOptions::default()).unwrap();
            assert!(text == again, "{tag}: not deterministic");
        }
    }
}

/// The runtime assertions torch.export leaves in a dynamic program (`_assert_scalar` on
/// a symbolic condition, `sym_constrain_range_for_size`) are checked for each
/// specialization: sizes that satisfy them compile, sizes that do not are an error
/// naming the node, the condition and the sizes. (The programs of testdata/dynamic
/// have none, so they are added to BERT's Core ATen form here.)
#[test]
fn runtime_assertions_of_dynamic_programs_are_checked_per_size() {
    let out = temp_dir("dynamic-assertions");
    let src = repo().join("testdata/dynamic/bert/core.pt2");
    let dst = out.join("asserting.pt2");
    rewrite_archive(&src, &dst, |name, bytes| {
        Some(if name.ends_with("models/model.json") {
            edit_json(bytes, |v| {
                let graph = &mut v["graph_module"]["graph"];
                graph["sym_bool_values"]["ge_seq"] = serde_json::json!({"as_expr": {
                    "expr_str": "GreaterThan(Symbol('s53', positive=True, integer=True), Integer(4))",
                    "hint": {"as_bool": true}}});
                let size = graph["sym_int_values"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .find(|(_, e)| {
                        e["as_expr"]["expr_str"]
                            .as_str()
                            .unwrap()
                            .starts_with("Symbol('s43'")
                    })
                    .map(|(n, _)| n.clone())
                    .unwrap();
                let nodes = graph["nodes"].as_array_mut().unwrap();
                nodes.push(serde_json::json!({
                    "target": "torch.ops.aten._assert_scalar.default",
                    "inputs": [
                        {"name": "self", "arg": {"as_sym_bool": {"as_name": "ge_seq"}}, "kind": 1},
                        {"name": "assert_msg", "arg": {"as_string": "seq >= 4"}, "kind": 1}],
                    "outputs": [{"as_none": true}],
                    "name": "_assert_scalar_seq",
                    "metadata": {}}));
                nodes.push(serde_json::json!({
                    "target": "torch.ops.aten.sym_constrain_range_for_size.default",
                    "inputs": [
                        {"name": "size", "arg": {"as_sym_int": {"as_name": size}}, "kind": 1},
                        {"name": "min", "arg": {"as_int": 1}, "kind": 2},
                        {"name": "max", "arg": {"as_int": 3}, "kind": 2}],
                    "outputs": [{"as_none": true}],
                    "name": "constrain_batch",
                    "metadata": {}}));
            })
        } else {
            bytes
        })
    });
    let bindings = |s: &str| tpuc_runtime::symbolic::parse_bindings(s).unwrap();
    let compile = |sizes: &str| {
        tpuc_compiler::compile(
            &dst,
            &out.join("a.tpuc"),
            &CompileOptions {
                specialize: vec![bindings(sizes)],
                ..CompileOptions::default()
            },
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    compile("s43=3,s53=4").unwrap();
    let e = compile("s43=2,s53=3").unwrap_err();
    for want in ["node `_assert_scalar_seq`", "`seq >= 4`", "s43=2, s53=3"] {
        assert!(e.contains(want), "{e}");
    }
    let e = compile("s43=4,s53=8").unwrap_err();
    for want in ["node `constrain_batch`", "size 4 within 1..=3"] {
        assert!(e.contains(want), "{e}");
    }
    let _ = std::fs::remove_dir_all(&out);
}
