//! Helpers the test modules share: the repository, the corpus, temporary
//! directories, the CPU plugin's client, `.npy` files in order and the calls of
//! `meta.json`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tpuc_compiler::CompileOptions;
use tpuc_runtime::{Client, ClientOptions, HostTensor, Plugin};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn models() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("testdata/models/index.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

pub fn model_path(name: &str, form: &str) -> PathBuf {
    repo().join(format!("testdata/models/{name}/{form}.pt2"))
}

/// A fresh temporary directory under target/ (removed by the caller or left for inspection).
pub fn temp_dir(tag: &str) -> PathBuf {
    let d = repo()
        .join("target/test-tmp")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn client() -> &'static Client {
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

/// The `.npy` files of `dir` in the order of their leading index (`0_x.npy`, `1_y.npy`).
pub fn sorted_npy(dir: &Path) -> Vec<PathBuf> {
    tpuc_runtime::npy::numbered_files(dir).unwrap()
}

/// The inputs and expected outputs of each call listed in a testdata `meta.json`.
pub fn meta_calls(dir: &Path) -> Vec<(Vec<HostTensor>, Vec<HostTensor>)> {
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

/// Copies a .pt2 archive entry by entry, letting `edit` replace (Some) or drop (None) entries.
pub fn rewrite_archive(src: &Path, dst: &Path, edit: impl Fn(&str, Vec<u8>) -> Option<Vec<u8>>) {
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

pub fn edit_json(bytes: Vec<u8>, f: impl Fn(&mut serde_json::Value)) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    f(&mut v);
    serde_json::to_vec(&v).unwrap()
}

pub fn compile_err(input: &Path, out: &Path) -> String {
    match tpuc_compiler::compile(input, out, &CompileOptions::default()) {
        Ok(_) => panic!("compiling {} should fail", input.display()),
        Err(e) => e.to_string(),
    }
}

/// Runs each of `calls` (inputs, PyTorch's outputs) through `session` in order and
/// asserts that every output has PyTorch's shape and matches it at its dtype's
/// tolerances; `tag` names the program in messages.
pub fn assert_calls_match(
    session: &tpuc_runtime::Session,
    calls: &[(Vec<HostTensor>, Vec<HostTensor>)],
    tag: &str,
) {
    use tpuc_runtime::compare::{compare, default_tolerances};
    for (k, (inputs, expected)) in calls.iter().enumerate() {
        let outputs = session
            .run(inputs)
            .unwrap_or_else(|e| panic!("{tag} call {k}: {e}"));
        assert_eq!(outputs.len(), expected.len(), "{tag} call {k}");
        for (got, want) in outputs.iter().zip(expected) {
            assert_eq!(got.shape, want.shape, "{tag} call {k}");
            let (rtol, atol) = default_tolerances(want.dtype);
            let c = compare(got, want, rtol, atol);
            assert!(c.passed(), "{tag} call {k}: {c:?}");
        }
    }
}
