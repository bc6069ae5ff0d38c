//! Bad input gets a typed error naming the file, node or spec: damaged archives,
//! unknown ops, inconsistent graphs, altered weights, fuzz regressions, outputs that
//! would overwrite inputs; bare JSON input and custom operators.

use std::io::Read;
use std::path::{Path, PathBuf};

use tpuc_compiler::{CompileError, CompileOptions, MissingWeights};
use tpuc_runtime::compare::compare;
use tpuc_runtime::manifest::ArgumentKind;
use tpuc_runtime::Session;

use crate::common::{client, compile_err, edit_json, model_path, repo, rewrite_archive, temp_dir};

/// `models/model.json` of the mlp's as-exported archive.
fn mlp_model_json() -> Vec<u8> {
    let f = std::fs::File::open(model_path("mlp", "exported")).unwrap();
    let config = zip::read::Config {
        archive_offset: zip::read::ArchiveOffset::Known(0),
    };
    let mut z = zip::ZipArchive::with_config(config, f).unwrap();
    let mut json = Vec::new();
    z.by_name("exported/models/model.json")
        .unwrap()
        .read_to_end(&mut json)
        .unwrap();
    json
}

#[test]
fn bare_model_json_compiles_with_zero_filled_or_input_weights() {
    let out = temp_dir("json");
    let json_path = out.join("model.json");
    std::fs::write(&json_path, mlp_model_json()).unwrap();

    tpuc_compiler::compile(
        &json_path,
        &out.join("zero.tpuc"),
        &CompileOptions::default(),
    )
    .unwrap();
    let m = tpuc_runtime::session::read_manifest(&out.join("zero.tpuc")).unwrap();
    assert!(m
        .arguments
        .iter()
        .filter(|a| a.kind != ArgumentKind::UserInput)
        .all(|a| a.zero_filled));

    let opts = CompileOptions {
        missing_weights: MissingWeights::AsInputs,
        ..CompileOptions::default()
    };
    tpuc_compiler::compile(&json_path, &out.join("inputs.tpuc"), &opts).unwrap();
    let m = tpuc_runtime::session::read_manifest(&out.join("inputs.tpuc")).unwrap();
    assert!(m
        .arguments
        .iter()
        .all(|a| a.kind == ArgumentKind::UserInput));
    assert_eq!(m.arguments.len(), 7);
    // Each weight input keeps the state-dict name of the tensor it stands for.
    let named: Vec<&str> = m
        .arguments
        .iter()
        .filter_map(|a| a.weight.as_deref())
        .collect();
    assert_eq!(named.len(), 6, "{named:?}");
    assert!(named.contains(&"0.weight"), "{named:?}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_archives_give_typed_errors() {
    let out = temp_dir("bad-archives");
    let src = model_path("mlp", "exported");
    let bytes = std::fs::read(&src).unwrap();

    let truncated = out.join("truncated.pt2");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let e = compile_err(&truncated, &out.join("a.tpuc"));
    assert!(
        e.contains("truncated.pt2") && e.contains("not a readable .pt2 archive"),
        "{e}"
    );

    let garbage = out.join("garbage.pt2");
    std::fs::write(&garbage, b"PK\x03\x04 this is not a zip file at all").unwrap();
    let e = compile_err(&garbage, &out.join("a.tpuc"));
    assert!(e.contains("not a readable .pt2 archive"), "{e}");

    let bad_json = out.join("bad.json");
    std::fs::write(&bad_json, b"{\"schema_version\": {\"major\": 8,").unwrap();
    let e = compile_err(&bad_json, &out.join("a.tpuc"));
    assert!(
        e.starts_with("invalid JSON in") && e.contains("bad.json"),
        "{e}"
    );

    let inner_json = out.join("inner-json.pt2");
    rewrite_archive(&src, &inner_json, |n, b| {
        Some(if n.ends_with("models/model.json") {
            b[..b.len() / 3].to_vec()
        } else {
            b
        })
    });
    let e = compile_err(&inner_json, &out.join("a.tpuc"));
    assert!(
        e.contains("invalid JSON in") && e.contains("models/model.json"),
        "{e}"
    );

    let schema = out.join("schema.pt2");
    rewrite_archive(&src, &schema, |n, b| {
        Some(if n.ends_with("models/model.json") {
            edit_json(b, |v| v["schema_version"]["major"] = 99.into())
        } else {
            b
        })
    });
    let e = compile_err(&schema, &out.join("a.tpuc"));
    assert!(
        e.contains("schema 99.") && e.contains("reads schema 8.x"),
        "{e}"
    );

    let missing = out.join("missing-weight.pt2");
    rewrite_archive(&src, &missing, |n, b| {
        if n.ends_with("data/weights/weight_0") {
            None
        } else {
            Some(b)
        }
    });
    let e = compile_err(&missing, &out.join("a.tpuc"));
    assert!(
        e.contains("is missing") && e.contains("data/weights/weight_0"),
        "{e}"
    );

    let short = out.join("short-weight.pt2");
    rewrite_archive(&src, &short, |n, b| {
        Some(if n.ends_with("data/weights/weight_0") {
            b[..8].to_vec()
        } else {
            b
        })
    });
    let e = compile_err(&short, &out.join("a.tpuc"));
    assert!(e.contains("metadata needs") && e.contains("holds 8"), "{e}");

    let dtype = out.join("dtype.pt2");
    rewrite_archive(&src, &dtype, |n, b| {
        Some(if n.ends_with("models/model.json") {
            edit_json(b, |v| {
                v["graph_module"]["graph"]["tensor_values"]["relu"]["dtype"] = 9.into()
            })
        } else {
            b
        })
    });
    let e = compile_err(&dtype, &out.join("a.tpuc"));
    assert!(
        e.contains("tensor `relu`") && e.contains("complex32"),
        "{e}"
    );
    assert!(
        !out.join("a.tpuc").exists(),
        "a failed compile must not leave an artifact"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn unknown_ops_are_all_listed_with_counts_and_first_node() {
    let out = temp_dir("unknown-ops");
    let src = model_path("mlp", "core");
    let edited = out.join("unknown.pt2");
    rewrite_archive(&src, &edited, |n, b| {
        Some(if n.ends_with("models/model.json") {
            edit_json(b, |v| {
                for node in v["graph_module"]["graph"]["nodes"].as_array_mut().unwrap() {
                    let t = node["target"].as_str().unwrap().to_string();
                    if t == "torch.ops.aten.permute.default" {
                        node["target"] = "torch.ops.aten.fancy_permute.default".into();
                    } else if t == "torch.ops.aten.gelu.default" {
                        node["target"] = "torch.ops.mylib.custom_gelu.default".into();
                    }
                }
            })
        } else {
            b
        })
    });
    let artifact = out.join("never.tpuc");
    let err = tpuc_compiler::compile(&edited, &artifact, &CompileOptions::default()).unwrap_err();
    let CompileError::UnsupportedOps(ops) = &err else {
        panic!("expected UnsupportedOps, got {err}");
    };
    assert_eq!(ops.len(), 2, "{err}");
    let text = err.to_string();
    assert!(
        text.contains("aten.fancy_permute.default x3 (first at node `permute`)"),
        "{text}"
    );
    assert!(
        text.contains("mylib.custom_gelu.default x1 (first at node `gelu`)"),
        "{text}"
    );
    assert!(!artifact.exists());
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.contains("tpuc-tmp"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn output_never_overwrites_inputs_or_foreign_files() {
    let out = temp_dir("outputs");
    let model = out.join("model.pt2");
    std::fs::copy(model_path("mlp", "exported"), &model).unwrap();
    let e = compile_err(&model, &model);
    assert!(
        e.contains("refusing to write") && e.contains("input model"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(&model).unwrap(),
        std::fs::read(model_path("mlp", "exported")).unwrap()
    );

    let foreign = out.join("notes");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("todo.txt"), b"keep me").unwrap();
    let e = compile_err(&model, &foreign);
    assert!(e.contains("not a tpuc artifact"), "{e}");
    assert_eq!(std::fs::read(foreign.join("todo.txt")).unwrap(), b"keep me");

    let file = out.join("file.txt");
    std::fs::write(&file, b"x").unwrap();
    let e = compile_err(&model, &file);
    assert!(e.contains("not a tpuc artifact"), "{e}");

    // A previous artifact is replaced.
    let artifact = out.join("m.tpuc");
    tpuc_compiler::compile(&model, &artifact, &CompileOptions::default()).unwrap();
    tpuc_compiler::compile(&model, &artifact, &CompileOptions::default()).unwrap();
    assert!(artifact.join("manifest.json").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_cancelled_compile_stops_at_the_next_stage_and_publishes_nothing() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;
    let out = temp_dir("cancel");
    let model = model_path("mlp", "exported");
    let artifact = out.join("m.tpuc");
    tpuc_compiler::compile(&model, &artifact, &CompileOptions::default()).unwrap();
    let before = std::fs::read(artifact.join("manifest.json")).unwrap();

    // Cancelled as lowering begins (the Python package sets the flag on Ctrl-C): the
    // compile ends after the next stage, not at its end, with no pass after it run.
    let cancel = Arc::new(AtomicBool::new(false));
    let passes_after = Arc::new(AtomicUsize::new(0));
    let (flag, count) = (cancel.clone(), passes_after.clone());
    let options = CompileOptions {
        cancel: Some(cancel.clone()),
        progress: Some(Arc::new(move |p| {
            if matches!(p, tpuc_compiler::Progress::Lowering) {
                flag.store(true, Ordering::SeqCst);
            }
        })),
        print_ir_after: vec!["all".into()],
        on_ir: Some(Arc::new(move |_, _| {
            count.fetch_add(1, Ordering::SeqCst);
        })),
        ..CompileOptions::default()
    };
    let e = tpuc_compiler::compile(&model, &artifact, &options).unwrap_err();
    assert!(matches!(e, CompileError::Interrupted), "{e}");
    assert!(passes_after.load(Ordering::SeqCst) <= 1);
    // The previous artifact is untouched and no temporary directory is left.
    assert_eq!(
        std::fs::read(artifact.join("manifest.json")).unwrap(),
        before
    );
    let names: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("m.tpuc")]);
    let _ = std::fs::remove_dir_all(&out);
}

/// A user lowering for a custom operator: `mylib.my_relu.default` as max(x, 0).
fn lower_my_relu(
    op: &tpuc_compiler::passes::lower_aten_to_stablehlo::AtenOp,
    e: &tpuc_dialects::Emitter,
) -> tpuc_compiler::passes::lower_aten_to_stablehlo::LResult<Vec<tpuc_dialects::TValue>> {
    let x = op.first_tensor()?;
    let zero = e.constant(&x.ty, 0.0)?;
    Ok(vec![e.max(x, &zero)?])
}

#[test]
fn custom_operators_compile_with_a_user_lowering() {
    let out = temp_dir("custom-op");
    let edited = out.join("custom.pt2");
    rewrite_archive(&model_path("mlp", "core"), &edited, |n, b| {
        Some(if n.ends_with("models/model.json") {
            edit_json(b, |v| {
                for node in v["graph_module"]["graph"]["nodes"].as_array_mut().unwrap() {
                    if node["target"] == "torch.ops.aten.relu.default" {
                        node["target"] = "torch.ops.mylib.my_relu.default".into();
                    }
                }
            })
        } else {
            b
        })
    });
    let err = tpuc_compiler::compile(&edited, &out.join("a.tpuc"), &CompileOptions::default())
        .unwrap_err();
    assert!(err.to_string().contains("namespace `mylib`"), "{err}");

    let options = CompileOptions {
        custom_lowerings: vec![
            tpuc_compiler::passes::lower_aten_to_stablehlo::CustomLowering {
                target: "mylib.my_relu.default".into(),
                lower: lower_my_relu,
            },
        ],
        ..CompileOptions::default()
    };
    let artifact = out.join("b.tpuc");
    tpuc_compiler::compile(&edited, &artifact, &options).unwrap();
    let dir = repo().join("testdata/models/mlp");
    let input = tpuc_runtime::npy::read_npy(dir.join("inputs/0_input.npy")).unwrap();
    let expected = tpuc_runtime::npy::read_npy(dir.join("expected/0.npy")).unwrap();
    let got = Session::load(&artifact, client())
        .unwrap()
        .run(&[input])
        .unwrap();
    assert!(compare(&got[0], &expected, 1e-4, 1e-5).passed());
    let _ = std::fs::remove_dir_all(&out);
}

/// The mlp's ExportedProgram JSON, edited by `f` and written as a bare model.json.
fn edited_mlp_json(out: &Path, tag: &str, f: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let path = out.join(format!("{tag}.json"));
    std::fs::write(&path, edit_json(mlp_model_json(), f)).unwrap();
    path
}

/// A named edit of a model.json and the fragments its error must contain.
type JsonCase = (
    &'static str,
    Box<dyn Fn(&mut serde_json::Value)>,
    Vec<&'static str>,
);

#[test]
fn inconsistent_graphs_are_errors_naming_the_node_or_spec() {
    let out = temp_dir("bad-graphs");
    let cases: Vec<JsonCase> = vec![
        (
            "duplicate-definition",
            Box::new(|v| {
                // linear_1 now also claims to define `relu`.
                let nodes = &mut v["graph_module"]["graph"]["nodes"];
                nodes[2]["outputs"][0]["as_tensor"]["name"] = "relu".into();
            }),
            vec![
                "node `linear_1`",
                "defines `relu`",
                "node `relu` already defines",
            ],
        ),
        (
            "duplicate-node-name",
            Box::new(|v| {
                v["graph_module"]["graph"]["nodes"][2]["name"] = "relu".into();
            }),
            vec!["two nodes are named `relu`"],
        ),
        (
            "dangling-output",
            Box::new(|v| {
                v["graph_module"]["graph"]["outputs"][0]["as_tensor"]["name"] = "ghost".into();
                v["graph_module"]["signature"]["output_specs"][0]["user_output"]["arg"]
                    ["as_tensor"]["name"] = "ghost".into();
            }),
            vec!["graph output `ghost`", "defined by no input and no node"],
        ),
        (
            "empty-output-specs",
            Box::new(|v| {
                v["graph_module"]["signature"]["output_specs"] = serde_json::json!([]);
            }),
            vec![
                "output_specs name the outputs []",
                "graph.outputs lists [silu]",
            ],
        ),
        (
            "mismatched-output-specs",
            Box::new(|v| {
                v["graph_module"]["signature"]["output_specs"][0]["user_output"]["arg"]
                    ["as_tensor"]["name"] = "relu".into();
            }),
            vec![
                "output_specs name the outputs [relu]",
                "graph.outputs lists [silu]",
            ],
        ),
        (
            "unknown-argument-kind",
            Box::new(|v| {
                v["graph_module"]["graph"]["nodes"][1]["inputs"][0]["arg"] =
                    serde_json::json!({"as_tensor_v2": {"name": "x"}});
            }),
            vec![
                "node `relu`",
                "argument kind `as_tensor_v2`",
                "not one the torch.export schema defines",
            ],
        ),
        (
            "unknown-named-argument-kind",
            Box::new(|v| {
                v["graph_module"]["graph"]["nodes"][1]["inputs"][0]["kind"] = 7.into();
            }),
            vec![
                "node `relu`",
                "argument kind 7",
                "0 unknown, 1 positional, 2 keyword",
            ],
        ),
    ];
    for (tag, edit, needles) in cases {
        let path = edited_mlp_json(&out, tag, edit);
        let e = compile_err(&path, &out.join(format!("{tag}.tpuc")));
        for n in needles {
            assert!(e.contains(n), "{tag}: `{n}` missing from: {e}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// One altered byte inside a stored weight keeps the archive readable but changes the
/// numbers: the entry's CRC-32 catches it, and the error names the entry.
#[test]
fn an_altered_weight_byte_is_a_crc_error_naming_the_entry() {
    let out = temp_dir("crc");
    let src = model_path("mlp", "exported");
    let mut bytes = std::fs::read(&src).unwrap();
    let start = {
        let config = zip::read::Config {
            archive_offset: zip::read::ArchiveOffset::Known(0),
        };
        let mut z =
            zip::ZipArchive::with_config(config, std::io::Cursor::new(bytes.clone())).unwrap();
        let e = z.by_name("exported/data/weights/weight_2").unwrap();
        e.data_start() as usize
    };
    bytes[start + 100] ^= 0x01;
    let damaged = out.join("damaged.pt2");
    std::fs::write(&damaged, &bytes).unwrap();
    let e = compile_err(&damaged, &out.join("a.tpuc"));
    assert!(
        e.contains("entry `exported/data/weights/weight_2` is damaged") && e.contains("CRC-32"),
        "{e}"
    );
    assert!(!out.join("a.tpuc").exists());
    let _ = std::fs::remove_dir_all(&out);
}

/// Inputs that once made a fuzz target panic (`fuzz/regressions/<target>/`, found by
/// `make fuzz`), replayed through the targets' entry points: each is now refused with a
/// typed error, and no lowering panics on it (the driver would turn a panic into an
/// "internal error ... panicked" message, which this rejects).
#[test]
fn fuzz_regressions_are_refused_with_typed_errors() {
    let dir = repo().join("fuzz/regressions");
    let files = |target: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join(target))
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        v.sort();
        v
    };
    let mut replayed = 0;
    for path in files("pt2_archive") {
        let bytes = std::fs::read(&path).unwrap();
        let result = tpuc_compiler::frontend::load_pt2_bytes(&path, bytes);
        let e = result.err().map(|e| e.to_string());
        assert!(e.is_some(), "{}: accepted", path.display());
        replayed += 1;
    }
    for path in files("exported_program_json") {
        let bytes = std::fs::read(&path).unwrap();
        let e = match tpuc_compiler::frontend::json::parse_exported_program(&bytes, "fuzz.json") {
            Err(e) => e.to_string(),
            Ok(graph) => {
                let model = tpuc_compiler::frontend::ExportedModel {
                    source: path.clone(),
                    graph,
                    dynamic: None,
                    weights: tpuc_compiler::frontend::WeightSet::None,
                };
                let ctx = tpuc_compiler::new_context();
                let lowered = tpuc_compiler::lower_to_stablehlo(&ctx, &model).map(|_| ());
                match lowered {
                    Ok(()) => panic!("{}: accepted", path.display()),
                    Err(e) => e.to_string(),
                }
            }
        };
        assert!(!e.contains("panicked"), "{}: {e}", path.display());
        replayed += 1;
    }
    assert!(replayed >= 2, "fuzz/regressions is missing its inputs");
}

/// A size that depends on tensor values reaching an op tpuc cannot compute exactly on
/// the bound (a sum over a piece of a split by counts) is refused at that node, with
/// the piece and the split named; a program with such sizes is never padded silently.
#[test]
fn data_dependent_sizes_outside_the_dispatch_pattern_are_refused_at_their_node() {
    let out = temp_dir("data-dependent-refused");
    let input = repo().join(
        "testdata/ops/exported/refused/split_with_sizes.default/reduced_piece_f32/model.json",
    );
    let msg = compile_err(&input, &out.join("a.tpuc"));
    for want in [
        "node `sum_",
        "aten.sum.dim_IntList",
        "a piece of `split_with_sizes`",
        "depends on tensor values",
        "hint:",
    ] {
        assert!(msg.contains(want), "`{want}` missing from: {msg}");
    }
    assert!(!out.join("a.tpuc").exists());
}
