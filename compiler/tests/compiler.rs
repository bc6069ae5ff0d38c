//! End-to-end tests of the compiler: every corpus model compiles and matches PyTorch
//! on the CPU PJRT plugin, StableHLO snapshots, determinism, bare JSON input, and the
//! bad-input list (each error asserted by its text).
//!
//! One test binary for the crate (each binary links MLIR statically).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tpuc_compiler::passes::OptLevel;
use tpuc_compiler::{CompileError, CompileOptions, MissingWeights};
use tpuc_runtime::compare::{compare, default_tolerances};
use tpuc_runtime::manifest::ArgumentKind;
use tpuc_runtime::{Client, ClientOptions, HostTensor, Plugin, Session};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn models() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("testdata/models/index.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

fn model_path(name: &str, form: &str) -> PathBuf {
    repo().join(format!("testdata/models/{name}/{form}.pt2"))
}

/// A fresh temporary directory under target/ (removed by the caller or left for inspection).
fn temp_dir(tag: &str) -> PathBuf {
    let d = repo()
        .join("target/test-tmp")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn client() -> &'static Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let path = tpuc_runtime::discover::find_plugin(None)
            .expect("no PJRT CPU plugin: run `make setup` or set TPUC_PJRT_PLUGIN");
        let plugin: Arc<Plugin> = Plugin::load(&path).expect("plugin loads");
        plugin
            .create_client(&ClientOptions::cpu(1))
            .expect("client")
    })
}

fn sorted_npy(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .collect();
    v.sort_by_key(|p| {
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        stem.split('_')
            .next()
            .unwrap()
            .parse::<usize>()
            .unwrap_or(0)
    });
    v
}

#[test]
fn every_corpus_model_matches_pytorch_on_the_cpu_plugin() {
    let out = temp_dir("e2e");
    let mut failures = Vec::new();
    let mut report = String::new();
    for name in models() {
        let dir = repo().join("testdata/models").join(&name);
        let inputs: Vec<_> = sorted_npy(&dir.join("inputs"))
            .iter()
            .map(|p| tpuc_runtime::npy::read_npy(p).unwrap())
            .collect();
        let expected: Vec<_> = sorted_npy(&dir.join("expected"))
            .iter()
            .map(|p| tpuc_runtime::npy::read_npy(p).unwrap())
            .collect();
        for form in ["exported", "core"] {
            let artifact = out.join(format!("{name}-{form}.tpuc"));
            if let Err(e) = tpuc_compiler::compile(
                &model_path(&name, form),
                &artifact,
                &CompileOptions::default(),
            ) {
                failures.push(format!("{name}/{form}: compile failed: {e}"));
                continue;
            }
            let session = match Session::load(&artifact, client()) {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{name}/{form}: load failed: {e}"));
                    continue;
                }
            };
            let outputs = match session.run(&inputs) {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{name}/{form}: run failed: {e}"));
                    continue;
                }
            };
            assert_eq!(outputs.len(), expected.len(), "{name}/{form}: output count");
            for (i, (got, want)) in outputs.iter().zip(&expected).enumerate() {
                let (rtol, atol) = default_tolerances(want.dtype);
                let c = compare(got, want, rtol, atol);
                report.push_str(&format!(
                    "{name}/{form} output {i}: {} max_abs={:.2e} max_rel={:.2e}\n",
                    want.dtype, c.max_abs_error, c.max_rel_error
                ));
                if !c.passed() {
                    failures.push(format!("{name}/{form} output {i}: {c:?}"));
                }
            }
        }
    }
    eprintln!("{report}");
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn stablehlo_snapshots_of_every_corpus_model() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for name in models() {
            for form in ["exported", "core"] {
                let (text, _) = tpuc_compiler::compile_to_mlir(
                    &model_path(&name, form),
                    &CompileOptions::default(),
                )
                .unwrap();
                insta::assert_snapshot!(format!("{name}_{form}"), text);
            }
        }
    });
}

#[test]
fn compiling_twice_gives_byte_identical_artifacts() {
    let out = temp_dir("determinism");
    for run in ["a", "b"] {
        tpuc_compiler::compile(
            &model_path("bert", "core"),
            &out.join(run),
            &CompileOptions::default(),
        )
        .unwrap();
    }
    for file in ["manifest.json", "program.mlir", "weights.safetensors"] {
        let a = std::fs::read(out.join("a").join(file)).unwrap();
        let b = std::fs::read(out.join("b").join(file)).unwrap();
        assert!(a == b, "{file} differs between two compiles");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// At -O2 an artifact stores the attention projections of one input packed
/// (`stablehlo-merge-dots`): BERT's query, key and value weights become one argument
/// whose bytes are the three originals one after another (checked against the -O1
/// artifact, which keeps them apart), named in the manifest's `packed`, with the
/// same outputs as -O1. `--emit mlir` never packs: its signature is the graph's.
#[test]
fn attention_weights_are_stored_packed_in_artifacts() {
    use tpuc_compiler::passes::OptLevel;
    let out = temp_dir("packed");
    let model = model_path("bert", "core");
    let o1 = CompileOptions {
        opt_level: OptLevel::O1,
        ..CompileOptions::default()
    };
    tpuc_compiler::compile(&model, &out.join("o2"), &CompileOptions::default()).unwrap();
    tpuc_compiler::compile(&model, &out.join("o1"), &o1).unwrap();
    let m2 = tpuc_runtime::session::read_manifest(&out.join("o2")).unwrap();
    let m1 = tpuc_runtime::session::read_manifest(&out.join("o1")).unwrap();
    let w2 =
        tpuc_runtime::safetensors::SafeTensors::open(out.join("o2/weights.safetensors")).unwrap();
    let w1 =
        tpuc_runtime::safetensors::SafeTensors::open(out.join("o1/weights.safetensors")).unwrap();
    let packed: Vec<_> = m2.arguments.iter().filter(|a| a.packed.is_some()).collect();
    assert!(
        !packed.is_empty(),
        "no packed weight in bert's -O2 artifact"
    );
    let mut replaced = 0;
    for a in &packed {
        let names = a.packed.as_ref().unwrap();
        assert_eq!(names.len(), 3, "{}: {names:?}", a.name);
        assert!(names[0].ends_with("query.weight") && names[2].ends_with("value.weight"));
        let mut bytes = Vec::new();
        let mut rows = 0;
        for n in names {
            let v = w1.view(n).unwrap();
            rows += v.shape[0];
            bytes.extend_from_slice(v.data);
        }
        let got = w2.view(a.weight.as_deref().unwrap()).unwrap();
        assert_eq!(got.shape[0], rows);
        assert_eq!(got.shape[1..], a.shape[1..]);
        assert!(
            got.data == bytes.as_slice(),
            "{}: packed bytes differ",
            a.name
        );
        replaced += names.len();
    }
    assert_eq!(
        m2.arguments.len() + replaced - packed.len(),
        m1.arguments.len()
    );
    let inputs: Vec<_> = sorted_npy(&repo().join("testdata/models/bert/inputs"))
        .iter()
        .map(|p| tpuc_runtime::npy::read_npy(p).unwrap())
        .collect();
    let run = |dir: &str| {
        Session::load(out.join(dir), client())
            .unwrap()
            .run(&inputs)
            .unwrap()
    };
    for (a, b) in run("o2").iter().zip(&run("o1")) {
        let (rtol, atol) = default_tolerances(b.dtype);
        let c = compare(a, b, rtol, atol);
        assert!(c.passed(), "-O2 against -O1: {c:?}");
    }
    let (text, _) = tpuc_compiler::compile_to_mlir(&model, &CompileOptions::default()).unwrap();
    assert!(!text.contains("tpuc.arg_origins") && !text.contains("tpuc.packable"));
    let program = std::fs::read_to_string(out.join("o2/program.mlir")).unwrap();
    assert!(!program.contains("tpuc.arg_origins") && !program.contains("tpuc.packable"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn manifest_describes_the_signature() {
    let out = temp_dir("manifest");
    let artifact = out.join("cnn.tpuc");
    tpuc_compiler::compile(
        &model_path("cnn", "exported"),
        &artifact,
        &CompileOptions::default(),
    )
    .unwrap();
    let m = tpuc_runtime::session::read_manifest(&artifact).unwrap();
    assert_eq!(m.target, "tpu");
    assert_eq!(m.source.file, "exported.pt2");
    let user: Vec<_> = m
        .arguments
        .iter()
        .filter(|a| a.kind == ArgumentKind::UserInput)
        .collect();
    assert_eq!(user.len(), 1);
    assert_eq!(user[0].shape, vec![2, 3, 16, 16]);
    assert!(m
        .arguments
        .iter()
        .any(|a| a.kind == ArgumentKind::Buffer && a.weight.as_deref() == Some("1.running_mean")));
    assert_eq!(m.outputs[0].shape, vec![2, 10]);
    let _ = std::fs::remove_dir_all(&out);
}

/// Copies a .pt2 archive entry by entry, letting `edit` replace (Some) or drop (None) entries.
fn rewrite_archive(src: &Path, dst: &Path, edit: impl Fn(&str, Vec<u8>) -> Option<Vec<u8>>) {
    let f = std::fs::File::open(src).unwrap();
    let config = zip::read::Config {
        archive_offset: zip::read::ArchiveOffset::Known(0),
    };
    let mut zin = zip::ZipArchive::with_config(config, f).unwrap();
    let mut zout = zip::ZipWriter::new(std::fs::File::create(dst).unwrap());
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..zin.len() {
        let mut e = zin.by_index(i).unwrap();
        let name = e.name().to_string();
        let mut bytes = Vec::new();
        e.read_to_end(&mut bytes).unwrap();
        if let Some(b) = edit(&name, bytes) {
            zout.start_file(name, opts).unwrap();
            zout.write_all(&b).unwrap();
        }
    }
    zout.finish().unwrap();
}

fn edit_json(bytes: Vec<u8>, f: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    f(&mut v);
    serde_json::to_vec(&v).unwrap()
}

fn compile_err(input: &Path, out: &Path) -> String {
    match tpuc_compiler::compile(input, out, &CompileOptions::default()) {
        Ok(_) => panic!("compiling {} should fail", input.display()),
        Err(e) => e.to_string(),
    }
}

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
                v["graph_module"]["graph"]["tensor_values"]["relu"]["dtype"] = 10.into()
            })
        } else {
            b
        })
    });
    let e = compile_err(&dtype, &out.join("a.tpuc"));
    assert!(
        e.contains("tensor `relu`") && e.contains("complex64"),
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
fn tied_weights_are_stored_once() {
    let out = temp_dir("tied");
    let artifact = out.join("gpt2.tpuc");
    tpuc_compiler::compile(
        &model_path("gpt2", "exported"),
        &artifact,
        &CompileOptions::default(),
    )
    .unwrap();
    let m = tpuc_runtime::session::read_manifest(&artifact).unwrap();
    let key_of = |name: &str| {
        m.arguments
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.weight.clone())
            .unwrap()
    };
    // GPT-2 ties the LM head to the token embedding: one storage in the archive.
    assert_eq!(
        key_of("p_inner_lm_head_weight"),
        "inner.transformer.wte.weight"
    );
    assert_eq!(
        key_of("p_inner_transformer_wte_weight"),
        "inner.transformer.wte.weight"
    );
    let st =
        tpuc_runtime::safetensors::SafeTensors::open(artifact.join("weights.safetensors")).unwrap();
    assert!(st.get("inner.lm_head.weight").is_none());
    assert!(st.get("inner.transformer.wte.weight").is_some());
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

/// testdata/stateful: a static-KV-cache Llama decode step and a buffer counter keep
/// their buffers as state: in both forms the artifact marks which outputs update which
/// buffers, and successive calls of one session match PyTorch's successive calls. The
/// state stays on the device: each call moves only its user inputs and outputs.
/// `reset_state` starts over; `read_state`/`write_state` save and restore it. A write
/// into a user input is still refused, naming the tensor.
#[test]
fn stateful_programs_carry_their_buffers_between_calls() {
    let out = temp_dir("stateful");
    for (name, state_count) in [("buffer_counter", 1), ("llama_decode", 6)] {
        let dir = repo().join("testdata/stateful").join(name);
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
        let load = |list: &serde_json::Value| -> Vec<tpuc_runtime::HostTensor> {
            list.as_array()
                .unwrap()
                .iter()
                .map(|p| tpuc_runtime::npy::read_npy(dir.join(p.as_str().unwrap())).unwrap())
                .collect()
        };
        let calls: Vec<_> = meta["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (load(&c["inputs"]), load(&c["expected"])))
            .collect();
        assert!(calls.len() >= 3, "{name}: {} calls", calls.len());
        for form in ["exported", "core"] {
            let art = out.join(format!("{name}-{form}.tpuc"));
            tpuc_compiler::compile(
                &dir.join(format!("{form}.pt2")),
                &art,
                &CompileOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{name}/{form}: {e}"));
            let session = Session::load(&art, client()).unwrap();
            assert_eq!(session.state_names().len(), state_count, "{name}/{form}");
            let check = |call: usize, outputs: &[tpuc_runtime::HostTensor]| {
                let expected = &calls[call].1;
                assert_eq!(outputs.len(), expected.len(), "{name}/{form} call {call}");
                for (got, want) in outputs.iter().zip(expected) {
                    let (rtol, atol) = default_tolerances(want.dtype);
                    let c = compare(got, want, rtol, atol);
                    assert!(c.passed(), "{name}/{form} call {call}: {c:?}");
                }
            };
            let mut saved = None;
            for (i, (inputs, _)) in calls.iter().enumerate() {
                let before = session.transfer_stats();
                let outputs = session.run(inputs).unwrap();
                check(i, &outputs);
                let after = session.transfer_stats();
                let in_bytes: u64 = inputs.iter().map(|t| t.data.len() as u64).sum();
                let out_bytes: u64 = outputs.iter().map(|t| t.data.len() as u64).sum();
                assert_eq!(
                    (
                        after.host_to_device - before.host_to_device,
                        after.host_to_device_bytes - before.host_to_device_bytes,
                        after.device_to_host - before.device_to_host,
                        after.device_to_host_bytes - before.device_to_host_bytes,
                    ),
                    (
                        inputs.len() as u64,
                        in_bytes,
                        outputs.len() as u64,
                        out_bytes
                    ),
                    "{name}/{form} call {i}: the state crossed to the host"
                );
                if i == 0 {
                    saved = Some(
                        session
                            .state_names()
                            .iter()
                            .map(|n| (n.to_string(), session.read_state(n).unwrap()))
                            .collect::<Vec<_>>(),
                    );
                }
            }
            // From the start again, and from the state saved after call 0.
            session.reset_state().unwrap();
            check(0, &session.run(&calls[0].0).unwrap());
            for (n, t) in saved.unwrap() {
                session.write_state(&n, &t).unwrap();
            }
            check(1, &session.run(&calls[1].0).unwrap());
            let err = session.read_state("nope").unwrap_err().to_string();
            assert!(err.contains("`nope` is not state of this program"), "{err}");
        }
    }
    for (form, needles) in [
        ("exported", vec!["user input `x`", "node `mul_`"]),
        ("core", vec!["user input `x`", "user_input_mutation"]),
    ] {
        let src = repo().join(format!("testdata/stateful/input_mutation/{form}.pt2"));
        let e = compile_err(&src, &out.join(format!("input-{form}.tpuc")));
        for n in needles {
            assert!(
                e.contains(n),
                "input_mutation/{form}: `{n}` missing from: {e}"
            );
        }
        assert!(e.contains("keep") && e.contains("buffers as state"), "{e}");
    }
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

/// tpuc's own printer (used for compiled programs) writes exactly MLIR's generic
/// form, and handles every module the pipeline builds, at every level: each corpus
/// model (functions, nested regions, multi-result ops, composites' decompositions).
#[test]
fn program_printer_matches_mlir_on_the_corpus() {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for root in ["testdata/models", "testdata/coverage/models"] {
        for entry in std::fs::read_dir(repo().join(root)).unwrap() {
            let dir = entry.unwrap().path();
            if dir.join("core.pt2").is_file() {
                dirs.push(dir);
            }
        }
    }
    dirs.sort();
    assert!(dirs.len() >= 50, "corpus not found");
    let mut multi_result = false;
    let mut regions = false;
    for dir in &dirs {
        let model = tpuc_compiler::frontend::load(&dir.join("core.pt2")).unwrap();
        for level in [
            tpuc_compiler::passes::OptLevel::O0,
            tpuc_compiler::passes::OptLevel::O2,
        ] {
            let ctx = tpuc_compiler::new_context();
            let options = CompileOptions {
                opt_level: level,
                ..Default::default()
            };
            let module = tpuc_compiler::lower_to_stablehlo_with(&ctx, &model, &options).unwrap();
            let ours = tpuc_compiler::printer::generic::print(&module)
                .unwrap_or_else(|| panic!("{}: not printed by tpuc's printer", dir.display()));
            let mlir = tpuc_compiler::print_module(&module).unwrap();
            assert!(ours == mlir, "{} at {level:?}: texts differ", dir.display());
            multi_result |= mlir.contains("#1");
            regions |= mlir.contains("    ^bb0(");
        }
    }
    assert!(
        multi_result && regions,
        "the corpus no longer covers these forms"
    );
}

/// The inputs and expected outputs of each call listed in a testdata `meta.json`.
fn meta_calls(dir: &Path) -> Vec<(Vec<HostTensor>, Vec<HostTensor>)> {
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    let load = |list: &serde_json::Value| -> Vec<HostTensor> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|p| tpuc_runtime::npy::read_npy(dir.join(p.as_str().unwrap())).unwrap())
            .collect()
    };
    meta["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (load(&c["inputs"]), load(&c["expected"])))
        .collect()
}

/// torch.cond, while_loop, scan and map programs (nested ones and data-dependent
/// predicates among them) compile in both forms and at -O0 and -O2 into StableHLO
/// control flow, and every call, each taking its own path (both branches, loops of
/// different trip counts, zero included), matches eager PyTorch.
#[test]
fn control_flow_programs_match_pytorch_on_every_path() {
    let out = temp_dir("control-flow");
    let root = repo().join("testdata/control_flow");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("index.json")).unwrap()).unwrap();
    let names: Vec<&str> = index["programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let dir = root.join(name);
        let calls = meta_calls(&dir);
        for form in ["exported", "core"] {
            for level in [OptLevel::O0, OptLevel::O2] {
                let tag = format!("{name}/{form}/{level:?}");
                let art = out.join(format!("{name}-{form}-{level:?}.tpuc"));
                let options = CompileOptions {
                    opt_level: level,
                    ..CompileOptions::default()
                };
                tpuc_compiler::compile(&dir.join(format!("{form}.pt2")), &art, &options)
                    .unwrap_or_else(|e| panic!("{tag}: {e}"));
                let program = std::fs::read_to_string(art.join("program.mlir")).unwrap();
                let loops = name.starts_with("while")
                    || name.starts_with("scan")
                    || name.starts_with("map");
                let conds = name.starts_with("cond") || name.ends_with("_cond");
                assert_eq!(program.contains("\"stablehlo.while\""), loops, "{tag}");
                assert_eq!(program.contains("\"stablehlo.if\""), conds, "{tag}");
                let session = Session::load(&art, client()).unwrap();
                for (k, (inputs, expected)) in calls.iter().enumerate() {
                    let outputs = session
                        .run(inputs)
                        .unwrap_or_else(|e| panic!("{tag} call {k}: {e}"));
                    assert_eq!(outputs.len(), expected.len(), "{tag} call {k}");
                    for (got, want) in outputs.iter().zip(expected) {
                        let (rtol, atol) = default_tolerances(want.dtype);
                        let c = compare(got, want, rtol, atol);
                        assert!(c.passed(), "{tag} call {k}: {c:?}");
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A damaged subgraph is refused naming the subgraph and its node, and a higher-order
/// operator tpuc has no lowering for is listed as an unsupported op with its node.
#[test]
fn bad_control_flow_is_refused_naming_the_subgraph() {
    let out = temp_dir("bad-control-flow");
    let src = repo().join("testdata/control_flow/cond_sign/core.pt2");
    let edited = |tag: &str, f: fn(&mut serde_json::Value)| {
        let dst = out.join(format!("{tag}.pt2"));
        rewrite_archive(&src, &dst, |name, bytes| {
            Some(if name.ends_with("models/model.json") {
                edit_json(bytes, f)
            } else {
                bytes
            })
        });
        dst
    };
    // The true branch's output names a tensor no node defines.
    let dangling = edited("dangling", |v| {
        let nodes = v["graph_module"]["graph"]["nodes"].as_array_mut().unwrap();
        let node = nodes
            .iter_mut()
            .find(|n| n["target"] == "torch.ops.higher_order.cond")
            .unwrap();
        node["inputs"][1]["arg"]["as_graph"]["graph"]["outputs"][0]["as_tensor"]["name"] =
            "ghost".into();
    });
    let e = compile_err(&dangling, &out.join("a.tpuc"));
    for want in ["subgraph `true_graph_0`", "`ghost`"] {
        assert!(e.contains(want), "{e}");
    }
    // An op inside a branch that no lowering knows: named by its path.
    let unknown_inner = edited("inner", |v| {
        let nodes = v["graph_module"]["graph"]["nodes"].as_array_mut().unwrap();
        let node = nodes
            .iter_mut()
            .find(|n| n["target"] == "torch.ops.higher_order.cond")
            .unwrap();
        node["inputs"][2]["arg"]["as_graph"]["graph"]["nodes"][0]["target"] =
            "torch.ops.mylib.nope.default".into();
    });
    let e = compile_err(&unknown_inner, &out.join("b.tpuc"));
    assert!(e.contains("mylib.nope.default"), "{e}");
    assert!(e.contains("cond/false_graph_0/"), "{e}");
    // A higher-order operator tpuc does not lower.
    let unknown = edited("unknown", |v| {
        let nodes = v["graph_module"]["graph"]["nodes"].as_array_mut().unwrap();
        let node = nodes
            .iter_mut()
            .find(|n| n["target"] == "torch.ops.higher_order.cond")
            .unwrap();
        node["target"] = "torch.ops.higher_order.invoke_subgraph".into();
    });
    let e = compile_err(&unknown, &out.join("c.tpuc"));
    assert!(e.contains("higher_order.invoke_subgraph"), "{e}");
    assert!(e.contains("cond"), "{e}");
    assert!(!out.join("a.tpuc").exists() && !out.join("c.tpuc").exists());
    let _ = std::fs::remove_dir_all(&out);
}

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
                for (k, (inputs, expected)) in calls.iter().enumerate() {
                    let outputs = session
                        .run(inputs)
                        .unwrap_or_else(|e| panic!("{tag} call {k}: {e}"));
                    assert_eq!(outputs.len(), expected.len(), "{tag} call {k}");
                    for (got, want) in outputs.iter().zip(expected) {
                        assert_eq!(got.shape, want.shape, "{tag} call {k}");
                        let (rtol, atol) = default_tolerances(want.dtype);
                        let c = compare(got, want, rtol, atol);
                        assert!(c.passed(), "{tag} call {k} round {round}: {c:?}");
                    }
                }
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
