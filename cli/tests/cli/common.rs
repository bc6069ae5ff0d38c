//! Helpers every test module shares: the repository, the `tpuc` binary, temporary
//! directories, `.npy` files in order, the CPU plugin's client, libtpu's presence.
// The runtime-only build (no `compiler` feature) compiles the modules that use some of
// these out.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The repository root (tests run `tpuc` from there).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs `tpuc` with `args` in the repository root: (success, stdout, stderr).
pub fn tpuc(args: &[&str]) -> (bool, String, String) {
    tpuc_env(args, &[])
}

/// [`tpuc`] with extra environment variables.
pub fn tpuc_env(args: &[&str], env: &[(&str, &Path)]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tpuc"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(repo())
        .output()
        .expect("tpuc runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// The `.npy` files of `dir` in the order of their leading index (`0_x.npy`, `1_y.npy`).
pub fn sorted_npy(dir: &Path) -> Vec<PathBuf> {
    tpuc_runtime::npy::numbered_files(dir).unwrap()
}

/// The tensors of the `.npy` files of `dir`, in [`sorted_npy`]'s order.
pub fn read_all(dir: &Path) -> Vec<tpuc_runtime::HostTensor> {
    tpuc_runtime::npy::read_numbered(dir).unwrap()
}

/// A new empty directory under `target/test-tmp`, unique to this call.
pub fn temp(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let d = repo()
        .join("target/test-tmp")
        .join(format!("cli-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A client of the CPU plugin with one device.
pub fn client() -> tpuc_runtime::Client {
    let path = tpuc_runtime::discover::find_plugin(None)
        .expect("no PJRT CPU plugin: run `make setup` or set TPUC_PJRT_PLUGIN");
    let plugin = tpuc_runtime::Plugin::load(&path).expect("plugin loads");
    plugin
        .create_client(&tpuc_runtime::ClientOptions::cpu(1))
        .expect("client")
}

/// Whether libtpu is here for the TPU compile tests (they skip, saying so, when it is
/// not; with `TPUC_LIBTPU` set it must be).
pub fn libtpu_present() -> bool {
    let env_set = std::env::var_os("TPUC_LIBTPU").is_some_and(|v| !v.is_empty());
    match tpuc_runtime::discover::find_libtpu(None) {
        Ok(_) => true,
        Err(e) if !env_set => {
            eprintln!("SKIPPED: TPU compile tests need libtpu ({e})");
            false
        }
        Err(e) => panic!("{e}"),
    }
}

/// The manifest of the artifact at `art`.
pub fn manifest(art: &Path) -> tpuc_runtime::Manifest {
    tpuc_runtime::session::read_manifest(art).unwrap()
}

/// `tpuc compile MODEL -o ART EXTRA...`: (success, stdout, stderr).
pub fn compile_to(model: &Path, art: &Path, extra: &[&str]) -> (bool, String, String) {
    let mut args = vec![
        "compile",
        model.to_str().unwrap(),
        "-o",
        art.to_str().unwrap(),
    ];
    args.extend(extra);
    tpuc(&args)
}

/// `tpuc run ART` with the `inputs/` of `model_dir` as `--input`s and its `expected/`
/// as `--expect`s, then `extra`.
pub fn run_expect_args(art: &Path, model_dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["run".to_string(), art.to_string_lossy().to_string()];
    for p in sorted_npy(&model_dir.join("inputs")) {
        args.extend(["--input".to_string(), p.to_string_lossy().to_string()]);
    }
    for p in sorted_npy(&model_dir.join("expected")) {
        args.extend(["--expect".to_string(), p.to_string_lossy().to_string()]);
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// `tpuc run ART --input I... --expect E... EXTRA...`: (success, stdout, stderr).
pub fn run_files(
    art: &Path,
    inputs: &[&Path],
    expects: &[&Path],
    extra: &[&str],
) -> (bool, String, String) {
    let mut args = vec!["run", art.to_str().unwrap()];
    for p in inputs {
        args.extend(["--input", p.to_str().unwrap()]);
    }
    for p in expects {
        args.extend(["--expect", p.to_str().unwrap()]);
    }
    args.extend(extra);
    tpuc(&args)
}

/// Compile options that partition the program over `mesh` with `presets`, written in
/// `format`.
#[cfg(feature = "compiler")]
pub fn sharded_options(
    mesh: &tpuc_runtime::sharding::Mesh,
    presets: &[tpuc_compiler::ShardPreset],
    format: tpuc_runtime::manifest::ShardingFormat,
) -> tpuc_compiler::CompileOptions {
    tpuc_compiler::CompileOptions {
        sharding: Some(tpuc_compiler::ShardingRequest {
            mesh: mesh.clone(),
            presets: presets.to_vec(),
            rules: Vec::new(),
            format,
        }),
        ..tpuc_compiler::CompileOptions::default()
    }
}

/// The decoders of `testdata/decode` (its index), at least four.
pub fn decode_models() -> Vec<String> {
    let root = repo().join("testdata/decode");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("index.json")).unwrap()).unwrap();
    let names: Vec<String> = index["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    assert!(names.len() >= 4, "{names:?}");
    names
}

/// torch.export's ScalarType codes of the dtypes [`grouped_mm_model`] takes.
pub const F32: i64 = 7;
pub const BF16: i64 = 13;

/// A bare model.json of one `transformers.grouped_mm_fallback` node: `x [S, K]` and
/// `w [E, K, N]` in `dtype` (a ScalarType code) and `offs [E]` in int32, all user
/// inputs except `w` when `weight` names it as a parameter (a state-dict name).
pub fn grouped_mm_model(
    s: i64,
    k: i64,
    e: i64,
    n: i64,
    dtype: i64,
    weight: Option<&str>,
) -> String {
    let template =
        std::fs::read_to_string(repo().join("testdata/ops/cases/addmm.default/i64/model.json"))
            .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&template).unwrap();
    let tensor = |dtype: i64, sizes: &[i64]| {
        let mut strides = vec![1i64; sizes.len()];
        for d in (0..sizes.len().saturating_sub(1)).rev() {
            strides[d] = strides[d + 1] * sizes[d + 1];
        }
        serde_json::json!({
            "dtype": dtype,
            "sizes": sizes.iter().map(|s| serde_json::json!({"as_int": s})).collect::<Vec<_>>(),
            "requires_grad": false,
            "device": {"type": "cpu", "index": null},
            "strides": strides.iter().map(|s| serde_json::json!({"as_int": s})).collect::<Vec<_>>(),
            "storage_offset": {"as_int": 0},
            "layout": 7,
        })
    };
    let arg = |name: &str| serde_json::json!({"as_tensor": {"name": name}});
    let g = &mut v["graph_module"]["graph"];
    g["inputs"] = serde_json::json!([arg("x"), arg("w"), arg("offs")]);
    g["outputs"] = serde_json::json!([arg("out")]);
    g["nodes"] = serde_json::json!([{
        "target": "torch.ops.transformers.grouped_mm_fallback.default",
        "inputs": [
            {"name": "input", "arg": arg("x"), "kind": 1},
            {"name": "weight", "arg": arg("w"), "kind": 1},
            {"name": "offs", "arg": arg("offs"), "kind": 1},
        ],
        "outputs": [arg("out")],
        "metadata": {},
        "is_hop_single_tensor_return": null,
        "name": "grouped_mm",
    }]);
    // torch.export's ScalarType: INT (int32) 4.
    g["tensor_values"] = serde_json::json!({
        "x": tensor(dtype, &[s, k]),
        "w": tensor(dtype, &[e, k, n]),
        "offs": tensor(4, &[e]),
        "out": tensor(dtype, &[s, n]),
    });
    let sig = &mut v["graph_module"]["signature"];
    sig["input_specs"] = serde_json::json!(["x", "w", "offs"]
        .iter()
        .map(|n| match weight {
            Some(name) if *n == "w" => {
                serde_json::json!({"parameter": {"arg": {"name": n}, "parameter_name": name}})
            }
            _ => serde_json::json!({"user_input": {"arg": arg(n)}}),
        })
        .collect::<Vec<_>>());
    sig["output_specs"] = serde_json::json!([{"user_output": {"arg": arg("out")}}]);
    v["module_call_graph"] = serde_json::json!([]);
    v.to_string()
}
