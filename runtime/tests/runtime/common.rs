//! The helpers every test module shares: the plugin and client, scratch
//! directories, tensors, artifact writers (plain, stateful dynamic), cache options.
//! Test modules `use crate::common::*`, which also brings the runtime's types.

pub use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

pub use tpuc_runtime::manifest::{
    Argument, ArgumentKind, Checksum, FileRef, TensorSpec, FORMAT_VERSION,
};
pub use tpuc_runtime::npy::{decode_npy, encode_npy, read_npy, write_npy};
pub use tpuc_runtime::pjrt::NamedValue;
pub use tpuc_runtime::safetensors::{dtype_name, SafeTensors};
pub use tpuc_runtime::{
    cache, discover, CacheMode, Client, ClientOptions, CompileOptions, CompileSource, DType,
    HostTensor, LoadEvent, LoadOptions, Manifest, Plugin, RuntimeError, Session,
};

/// The shared client (2 CPU devices), or None when no plugin is installed at all.
pub fn client() -> Option<&'static Client> {
    static CLIENT: OnceLock<Option<Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let env_set = std::env::var_os(discover::PLUGIN_ENV).is_some_and(|v| !v.is_empty());
            let path = match discover::find_plugin(None) {
                Ok(p) => p,
                Err(e) if !env_set => {
                    eprintln!("SKIPPED: PJRT tests need a plugin ({e})");
                    return None;
                }
                Err(e) => panic!("{e}"),
            };
            let plugin = Plugin::load(&path).unwrap_or_else(|e| panic!("{e}"));
            let client = plugin
                .create_client(&ClientOptions::cpu(2))
                .unwrap_or_else(|e| panic!("{e}"));
            Some(client)
        })
        .as_ref()
}

/// A fresh, empty scratch directory.
pub fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "tpuc-runtime-test-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn tensor(dtype: DType, shape: &[i64], data: Vec<u8>) -> HostTensor {
    HostTensor {
        dtype,
        shape: shape.to_vec(),
        data,
    }
}

pub fn i64s(shape: &[i64], v: &[i64]) -> HostTensor {
    tensor(
        DType::I64,
        shape,
        v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    )
}

pub fn bools(shape: &[i64], v: &[bool]) -> HostTensor {
    tensor(DType::Bool, shape, v.iter().map(|&b| b as u8).collect())
}

/// One tensor of every dtype with recognisable bytes.
pub fn sample_of(dtype: DType) -> HostTensor {
    let shape = [2i64, 3];
    let n: i32 = 6;
    let data: Vec<u8> = match dtype {
        DType::Bool => (0..n).map(|i| (i % 2) as u8).collect(),
        DType::F64 => (0..n)
            .flat_map(|i| (i as f64 * 1.5 - 2.0).to_le_bytes())
            .collect(),
        DType::F32 => (0..n)
            .flat_map(|i| (i as f32 * 0.25 - 1.0).to_le_bytes())
            .collect(),
        // (re, im) pairs.
        DType::C64 => (0..n)
            .flat_map(|i| [(i as f32 * 0.5).to_le_bytes(), (-(i as f32)).to_le_bytes()].concat())
            .collect(),
        DType::C128 => (0..n)
            .flat_map(|i| [(i as f64 * 0.5).to_le_bytes(), (-(i as f64)).to_le_bytes()].concat())
            .collect(),
        // 1.0, 2.0, ... in half / bfloat16.
        DType::F16 => (0..n)
            .flat_map(|i| (0x3c00u16 + 0x400 * i as u16).to_le_bytes())
            .collect(),
        DType::Bf16 => (0..n)
            .flat_map(|i| (0x3f80u16 + 0x80 * i as u16).to_le_bytes())
            .collect(),
        DType::I64 => (0..n)
            .flat_map(|i| (i as i64 * -1_000_000_007).to_le_bytes())
            .collect(),
        DType::I32 => (0..n).flat_map(|i| (i * -70_000).to_le_bytes()).collect(),
        DType::I16 => (0..n)
            .flat_map(|i| (i as i16 * -300).to_le_bytes())
            .collect(),
        DType::I8 => (0..n).map(|i| (i as i8 * -20) as u8).collect(),
        DType::U8 => (0..n).map(|i| 200 + i as u8).collect(),
    };
    tensor(dtype, &shape, data)
}

pub const ALL_DTYPES: [DType; 12] = [
    DType::F64,
    DType::F32,
    DType::F16,
    DType::Bf16,
    DType::I64,
    DType::I32,
    DType::I16,
    DType::I8,
    DType::U8,
    DType::Bool,
    DType::C64,
    DType::C128,
];

/// Writes a `.safetensors` file (as the compiler does).
pub fn write_safetensors(path: &Path, tensors: &[(&str, &HostTensor)], metadata: &[(&str, &str)]) {
    let mut header = serde_json::Map::new();
    if !metadata.is_empty() {
        let m: serde_json::Map<String, serde_json::Value> = metadata
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
            .collect();
        header.insert("__metadata__".into(), serde_json::Value::Object(m));
    }
    let mut data = Vec::new();
    for (name, t) in tensors {
        let begin = data.len();
        data.extend_from_slice(&t.data);
        header.insert(
            name.to_string(),
            serde_json::json!({
                "dtype": dtype_name(t.dtype),
                "shape": t.shape,
                "data_offsets": [begin, data.len()],
            }),
        );
    }
    let mut json = serde_json::to_vec(&serde_json::Value::Object(header)).unwrap();
    json.resize(json.len().div_ceil(8) * 8, b' ');
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&json);
    bytes.extend_from_slice(&data);
    std::fs::write(path, bytes).unwrap();
}

pub const ADD_F32: &str = r#"module {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%0) : (tensor<2x3xf32>) -> ()
  }
}
"#;

pub fn f32s(t: &HostTensor) -> Vec<f32> {
    t.to_f64_vec().iter().map(|&v| v as f32).collect()
}

/// `@main(w: 2x3 f32 [parameter], bias: 3 f32 [buffer], x: 2x3 f32 [input], k: i64 [input])`
/// returning `(x * w + bias, k * k)`.
pub const SESSION_PROGRAM: &str = r#"module {
  func.func @main(%w: tensor<2x3xf32>, %bias: tensor<3xf32>, %x: tensor<2x3xf32>, %k: tensor<i64>) -> (tensor<2x3xf32>, tensor<i64>) {
    %0 = "stablehlo.multiply"(%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "stablehlo.broadcast_in_dim"(%bias) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
    %2 = "stablehlo.add"(%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %3 = "stablehlo.multiply"(%k, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "func.return"(%2, %3) : (tensor<2x3xf32>, tensor<i64>) -> ()
  }
}
"#;

pub fn write_artifact(dir: &Path) -> Manifest {
    let w = HostTensor::from_f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let bias = HostTensor::from_f32(&[3], &[0.5, 0.25, -1.0]);
    let weights = dir.join("weights.safetensors");
    write_safetensors(&weights, &[("fc.weight", &w), ("fc.bias", &bias)], &[]);
    std::fs::write(dir.join("program.mlir"), SESSION_PROGRAM).unwrap();
    let file_ref = |name: &str| FileRef {
        file: name.into(),
        checksum: Checksum::of(&std::fs::read(dir.join(name)).unwrap()),
    };
    let arg = |name: &str, kind, dtype, shape: &[i64], weight: Option<&str>| Argument {
        name: name.into(),
        kind,
        dtype,
        shape: shape.to_vec(),
        weight: weight.map(String::from),
        zero_filled: false,
        packed: None,
        sharding: None,
    };
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        tpuc_version: "test".into(),
        target: "tpu".into(),
        stablehlo_version: "1.0.0".into(),
        matmul_precision: "highest".into(),
        source: FileRef {
            file: "model.pt2".into(),
            checksum: Checksum::Blake3("0".repeat(64)),
        },
        program: file_ref("program.mlir"),
        weights: file_ref("weights.safetensors"),
        arguments: vec![
            arg(
                "p_fc_weight",
                ArgumentKind::Parameter,
                DType::F32,
                &[2, 3],
                Some("fc.weight"),
            ),
            arg(
                "b_fc_bias",
                ArgumentKind::Buffer,
                DType::F32,
                &[3],
                Some("fc.bias"),
            ),
            arg("x", ArgumentKind::UserInput, DType::F32, &[2, 3], None),
            arg("k", ArgumentKind::UserInput, DType::I64, &[], None),
        ],
        outputs: vec![
            TensorSpec {
                name: "out".into(),
                dtype: DType::F32,
                shape: vec![2, 3],
                sharding: None,
                updates: None,
            },
            TensorSpec {
                name: "k2".into(),
                dtype: DType::I64,
                shape: vec![],
                sharding: None,
                updates: None,
            },
        ],
        partitioning: None,
        tpu_executables: Vec::new(),
        neuron: None,
        dynamic: None,
        debug_values: Vec::new(),
        training: None,
        model_flops: None,
    };
    write_manifest(dir, &manifest);
    manifest
}

pub fn write_manifest(dir: &Path, m: &Manifest) {
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(m).unwrap(),
    )
    .unwrap();
}

/// `@main(count: f32[4] [buffer, state], x: f32[n] [input])` returning
/// `(x + x, count + 1)`, the second output updating `count` (aliased to it, as the
/// compiler writes a stateful program). `broken`: the first output is `count * count`
/// (f32[4]) instead, which a manifest saying f32[n] contradicts after the execution.
pub fn counter_program(n: i64, broken: bool) -> String {
    let (out, out_ty) = if broken {
        (r#""stablehlo.multiply"(%count, %count) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>"#.to_string(), "tensor<4xf32>".to_string())
    } else {
        (
            format!(
                r#""stablehlo.add"(%x, %x) : (tensor<{n}xf32>, tensor<{n}xf32>) -> tensor<{n}xf32>"#
            ),
            format!("tensor<{n}xf32>"),
        )
    };
    format!(
        r#"module {{
  func.func @main(%count: tensor<4xf32> {{tf.aliasing_output = 1 : i32}}, %x: tensor<{n}xf32>) -> ({out_ty}, tensor<4xf32>) {{
    %0 = {out}
    %1 = "stablehlo.constant"() {{value = dense<1.0> : tensor<4xf32>}} : () -> tensor<4xf32>
    %2 = "stablehlo.add"(%count, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0, %2) : ({out_ty}, tensor<4xf32>) -> ()
  }}
}}
"#
    )
}

/// A stateful dynamic artifact (a counter kept on the device, `x` of any size `s` in
/// 1..=8): [`counter_program`] specialized for `s = 3` and, broken, for `s = 5`; the
/// state `b_count` starts at `[10, 20, 30, 40]`.
pub fn write_stateful_artifact(dir: &Path) -> Manifest {
    let mut manifest = write_artifact(dir);
    let count = HostTensor::from_f32(&[4], &[10.0, 20.0, 30.0, 40.0]);
    write_safetensors(&dir.join("weights.safetensors"), &[("count", &count)], &[]);
    std::fs::write(dir.join("program.mlir"), counter_program(3, false)).unwrap();
    std::fs::write(dir.join("program_s5.mlir"), counter_program(5, true)).unwrap();
    std::fs::write(dir.join("model.json"), "{}").unwrap();
    let file_ref = |name: &str| FileRef {
        file: name.into(),
        checksum: Checksum::of(&std::fs::read(dir.join(name)).unwrap()),
    };
    manifest.program = file_ref("program.mlir");
    manifest.weights = file_ref("weights.safetensors");
    let mut count_arg = manifest.arguments[1].clone();
    count_arg.name = "b_count".into();
    count_arg.shape = vec![4];
    count_arg.weight = Some("count".into());
    let mut x_arg = manifest.arguments[2].clone();
    x_arg.shape = vec![-1];
    manifest.arguments = vec![count_arg, x_arg];
    let spec = |name: &str, shape: i64, updates: Option<&str>| TensorSpec {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![shape],
        sharding: None,
        updates: updates.map(String::from),
    };
    manifest.outputs = vec![
        spec("out", -1, None),
        spec("count_next", 4, Some("b_count")),
    ];
    manifest.dynamic = Some(
        serde_json::from_value(serde_json::json!({
            "symbols": [{"name": "s", "min": 1, "max": 8}],
            "inputs": [["s"]],
            "outputs": [["s"], [4]],
            "specializations": [
                {"sizes": {"s": 3}, "program": manifest.program},
                {"sizes": {"s": 5}, "program": file_ref("program_s5.mlir")},
            ],
            "source_program": file_ref("model.json"),
            "opt_level": "O2",
        }))
        .unwrap(),
    );
    write_manifest(dir, &manifest);
    manifest
}

pub fn cache_options(cache_dir: &Path, cache: CacheMode) -> LoadOptions {
    LoadOptions {
        cache,
        cache_dir: Some(cache_dir.to_path_buf()),
        ..LoadOptions::default()
    }
}

/// Runs the session artifact's program on fixed inputs.
pub fn run_session(session: &Session) -> Vec<HostTensor> {
    let x = HostTensor::from_f32(&[2, 3], &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    let out = session.run(&[x, i64s(&[], &[-12])]).unwrap();
    assert_eq!(f32s(&out[0]), [1.5, 2.25, 2.0, 8.5, 10.25, 11.0]);
    assert_eq!(out[1], i64s(&[], &[144]));
    out
}

pub fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

/// libtpu (the TPU compiler), or None (and SKIPPED on stderr) when it is not installed
/// and `TPUC_LIBTPU` is unset; with `TPUC_LIBTPU` set, a missing libtpu fails the test.
pub fn libtpu() -> Option<&'static Arc<Plugin>> {
    static PLUGIN: OnceLock<Option<Arc<Plugin>>> = OnceLock::new();
    PLUGIN
        .get_or_init(|| {
            let env_set = std::env::var_os(discover::LIBTPU_ENV).is_some_and(|v| !v.is_empty());
            match discover::find_libtpu(None) {
                Ok(p) => Some(Plugin::load(&p).unwrap_or_else(|e| panic!("{e}"))),
                Err(e) if !env_set => {
                    eprintln!("SKIPPED: TPU compile tests need libtpu ({e})");
                    None
                }
                Err(e) => panic!("{e}"),
            }
        })
        .as_ref()
}
