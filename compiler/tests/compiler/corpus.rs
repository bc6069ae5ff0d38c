//! Every corpus model: matches PyTorch on the CPU plugin, StableHLO snapshots,
//! determinism, packed attention weights, the manifest, the program printer.

use std::path::PathBuf;

use tpuc_compiler::CompileOptions;
use tpuc_runtime::compare::{compare, default_tolerances};
use tpuc_runtime::manifest::ArgumentKind;
use tpuc_runtime::Session;

use crate::common::{client, model_path, models, repo, sorted_npy, temp_dir};

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
