//! Integration tests of the runtime: PJRT through a real plugin, tensor files, sessions.
//!
//! PJRT tests need the CPU plugin (`make setup`, or `scripts/setup_pjrt_cpu.sh`). They
//! are skipped, with a message, only when `TPUC_PJRT_PLUGIN` is unset and discovery
//! finds nothing; a plugin that is named but fails to load fails the tests.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use tpuc_runtime::manifest::{
    Argument, ArgumentKind, Checksum, FileRef, TensorSpec, FORMAT_VERSION,
};
use tpuc_runtime::npy::{decode_npy, encode_npy, read_npy, write_npy};
use tpuc_runtime::pjrt::NamedValue;
use tpuc_runtime::safetensors::{dtype_name, SafeTensors};
use tpuc_runtime::{
    cache, discover, CacheMode, Client, ClientOptions, CompileOptions, CompileSource, DType,
    HostTensor, LoadEvent, LoadOptions, Manifest, Plugin, RuntimeError, Session,
};

// ------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------

/// The shared client (2 CPU devices), or None when no plugin is installed at all.
fn client() -> Option<&'static Client> {
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
fn scratch(name: &str) -> PathBuf {
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

fn tensor(dtype: DType, shape: &[i64], data: Vec<u8>) -> HostTensor {
    HostTensor {
        dtype,
        shape: shape.to_vec(),
        data,
    }
}

fn i64s(shape: &[i64], v: &[i64]) -> HostTensor {
    tensor(
        DType::I64,
        shape,
        v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    )
}

fn bools(shape: &[i64], v: &[bool]) -> HostTensor {
    tensor(DType::Bool, shape, v.iter().map(|&b| b as u8).collect())
}

/// One tensor of every dtype with recognisable bytes.
fn sample_of(dtype: DType) -> HostTensor {
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

const ALL_DTYPES: [DType; 10] = [
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
];

/// Writes a `.safetensors` file (as the compiler does).
fn write_safetensors(path: &Path, tensors: &[(&str, &HostTensor)], metadata: &[(&str, &str)]) {
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

const ADD_F32: &str = r#"module {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%0) : (tensor<2x3xf32>) -> ()
  }
}
"#;

fn f32s(t: &HostTensor) -> Vec<f32> {
    t.to_f64_vec().iter().map(|&v| v as f32).collect()
}

// ------------------------------------------------------------------------------------
// PJRT
// ------------------------------------------------------------------------------------

#[test]
fn plugin_loads_and_reports_itself() {
    let Some(client) = client() else { return };
    let plugin = client.plugin();
    let v = plugin.api_version();
    assert_eq!(v.major, 0);
    assert!(v.minor >= 81, "PJRT API {v}");
    let current = plugin.stablehlo_current_version();
    assert!(
        current.as_deref().is_some_and(|s| s.starts_with("1.")),
        "stablehlo_current_version: {current:?}; attributes {:?}",
        plugin.attributes()
    );
    assert!(plugin.stablehlo_minimum_version().is_some());
    assert_eq!(client.platform_name(), "cpu");
    // cpu_device_count was honoured (the plugin's default is 4).
    assert_eq!(client.devices().len(), 2);
    assert_eq!(client.addressable_devices().len(), 2);
    assert!(client.devices().iter().all(|d| d.addressable));
    let ids: Vec<i32> = client.devices().iter().map(|d| d.id).collect();
    assert_eq!(ids, [0, 1]);
    assert!(!client.devices()[0].kind.is_empty());

    // Loading the same file again gives the same, already initialized plugin.
    let again = Plugin::load(plugin.path()).unwrap();
    assert!(std::sync::Arc::ptr_eq(plugin, &again));
}

#[test]
fn compiles_and_executes_an_add() {
    let Some(client) = client() else { return };
    let exe = client
        .compile_mlir(ADD_F32, &CompileOptions::default())
        .unwrap();
    assert_eq!(exe.num_outputs(), 1);
    assert_eq!(exe.num_devices(), 1);
    let a = HostTensor::from_f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = HostTensor::from_f32(&[2, 3], &[0.5, -1.0, 10.0, 0.0, -5.0, 100.0]);
    let da = client.buffer_from_host(&a, 0).unwrap();
    let db = client.buffer_from_host(&b, 0).unwrap();
    assert_eq!(da.dtype().unwrap(), DType::F32);
    assert_eq!(da.shape(), [2, 3]);
    assert!(da.on_device_size_in_bytes().unwrap() >= 24);
    assert!(da.belongs_to(client));

    // Inputs are not donated: the same buffers serve several runs.
    for _ in 0..3 {
        let out = exe.execute(&[&da, &db]).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].dtype().unwrap(), DType::F32);
        assert_eq!(out[0].shape(), [2, 3]);
        let host = out[0].to_host().unwrap();
        assert_eq!(host.shape, [2, 3]);
        assert_eq!(f32s(&host), [1.5, 1.0, 13.0, 4.0, 0.0, 106.0]);
    }
    assert_eq!(da.to_host().unwrap(), a);

    // Also through the per-device form.
    let out = exe.execute_sharded(&[&[&da, &db]]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(f32s(&out[0][0].to_host().unwrap())[0], 1.5);
}

#[test]
fn i64_and_bool_programs_round_trip() {
    let Some(client) = client() else { return };
    let program = r#"module {
  func.func @main(%a: tensor<4xi64>, %b: tensor<4xi64>, %p: tensor<4xi1>, %q: tensor<4xi1>) -> (tensor<4xi64>, tensor<4xi1>) {
    %0 = "stablehlo.multiply"(%a, %b) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    %1 = "stablehlo.and"(%p, %q) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %2 = "stablehlo.not"(%1) : (tensor<4xi1>) -> tensor<4xi1>
    "func.return"(%0, %2) : (tensor<4xi64>, tensor<4xi1>) -> ()
  }
}
"#;
    let exe = client
        .compile_mlir(program, &CompileOptions::default())
        .unwrap();
    assert_eq!(exe.num_outputs(), 2);
    let big = 3_000_000_000i64; // does not fit in 32 bits
    let inputs = [
        i64s(&[4], &[big, -2, 0, 7]),
        i64s(&[4], &[3, 5, 9, -1]),
        bools(&[4], &[true, true, false, false]),
        bools(&[4], &[true, false, true, false]),
    ];
    let buffers: Vec<_> = inputs
        .iter()
        .map(|t| client.buffer_from_host(t, 0).unwrap())
        .collect();
    let refs: Vec<_> = buffers.iter().collect();
    let out = exe.execute(&refs).unwrap();
    assert_eq!(out[0].dtype().unwrap(), DType::I64);
    assert_eq!(out[1].dtype().unwrap(), DType::Bool);
    assert_eq!(
        out[0].to_host().unwrap(),
        i64s(&[4], &[3 * big, -10, 0, -7])
    );
    assert_eq!(
        out[1].to_host().unwrap(),
        bools(&[4], &[false, true, true, true])
    );
}

#[test]
fn every_dtype_survives_a_device_round_trip() {
    let Some(client) = client() else { return };
    for dtype in ALL_DTYPES {
        let t = sample_of(dtype);
        let b = client.buffer_from_host(&t, 1).unwrap();
        assert_eq!(b.dtype().unwrap(), dtype);
        assert_eq!(b.to_host().unwrap(), t, "{dtype}");
    }
    // From an unaligned slice (as from a mapped safetensors file).
    let t = sample_of(DType::F64);
    let mut shifted = vec![0u8];
    shifted.extend_from_slice(&t.data);
    let b = client
        .buffer_from_slice(DType::F64, &t.shape, &shifted[1..], 0)
        .unwrap();
    assert_eq!(b.to_host().unwrap(), t);
    // 0-d and empty tensors.
    let scalar = HostTensor::from_f32(&[], &[42.0]);
    let b = client.buffer_from_host(&scalar, 0).unwrap();
    assert!(b.shape().is_empty());
    assert_eq!(b.to_host().unwrap(), scalar);
    let empty = HostTensor::from_f32(&[0, 3], &[]);
    assert_eq!(
        client
            .buffer_from_host(&empty, 0)
            .unwrap()
            .to_host()
            .unwrap(),
        empty
    );
}

#[test]
fn malformed_program_is_an_error_not_an_abort() {
    let Some(client) = client() else { return };
    // A complete module that uses an undefined value on line 3.
    let bad = ADD_F32.replace("(%arg0, %arg1)", "(%arg0, %nope)");
    let err = client
        .compile_mlir(&bad, &CompileOptions::default())
        .unwrap_err();
    match &err {
        RuntimeError::Pjrt { call, message, .. } => {
            assert_eq!(*call, "PJRT_Client_Compile");
            // The MLIR parser's diagnostic, with its position, comes through verbatim.
            assert!(message.contains("undeclared SSA value"), "{message}");
            assert!(message.contains(":3:"), "no line number in: {message}");
        }
        other => panic!("expected a PJRT error, got {other:?}"),
    }
    assert!(err.to_string().contains("PJRT_Client_Compile failed"));

    // Not MLIR at all.
    let err = client
        .compile_mlir("this is not a program", &CompileOptions::default())
        .unwrap_err();
    assert!(err.pjrt_code().is_some(), "{err}");

    // Options that would abort the plugin are refused before the call.
    let err = client
        .compile_mlir(
            ADD_F32,
            &CompileOptions {
                num_replicas: 0,
                ..CompileOptions::default()
            },
        )
        .unwrap_err();
    assert!(matches!(err, RuntimeError::CompileOptions(_)), "{err}");
}

#[test]
fn misuse_is_reported() {
    let Some(client) = client() else { return };
    let t = HostTensor::from_f32(&[2], &[1.0, 2.0]);
    let err = client.buffer_from_host(&t, 7).unwrap_err();
    assert!(err.to_string().contains("device index 7"), "{err}");
    let short = tensor(DType::F32, &[2, 3], vec![0; 5]);
    let err = client.buffer_from_host(&short, 0).unwrap_err();
    assert!(matches!(err, RuntimeError::InvalidArgument(_)), "{err}");

    // Wrong number of arguments: the plugin's error, not a crash.
    let exe = client
        .compile_mlir(ADD_F32, &CompileOptions::default())
        .unwrap();
    let a = client
        .buffer_from_host(&HostTensor::from_f32(&[2, 3], &[0.0; 6]), 0)
        .unwrap();
    let err = exe.execute(&[&a]).unwrap_err();
    assert!(err.pjrt_code().is_some(), "{err}");
    let err = exe.execute_sharded(&[&[&a, &a], &[&a, &a]]).unwrap_err();
    assert!(matches!(err, RuntimeError::InvalidArgument(_)), "{err}");
}

#[test]
fn spmd_program_runs_on_two_devices() {
    let Some(client) = client() else { return };
    // Each partition adds its halves: x is sharded along dim 0 over 2 devices.
    let program = r#"module @spmd attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%arg0: tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> (tensor<4xf32> {mhlo.sharding = "{devices=[2]<=[2]}"}) {
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }
}
"#;
    let exe = client
        .compile_mlir(program, &CompileOptions::spmd(2))
        .unwrap();
    assert_eq!(exe.num_devices(), 2);
    let s0 = client
        .buffer_from_host(&HostTensor::from_f32(&[2], &[1.0, 2.0]), 0)
        .unwrap();
    let s1 = client
        .buffer_from_host(&HostTensor::from_f32(&[2], &[3.0, 4.0]), 1)
        .unwrap();
    let out = exe.execute_sharded(&[&[&s0], &[&s1]]).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0][0].shape(), [2]);
    assert_eq!(f32s(&out[0][0].to_host().unwrap()), [2.0, 4.0]);
    assert_eq!(f32s(&out[1][0].to_host().unwrap()), [6.0, 8.0]);
    let err = exe.execute(&[&s0]).unwrap_err();
    assert!(err.to_string().contains("execute_sharded"), "{err}");
}

/// A dp=2 x tp=2 mesh, shardings from `tpuc_runtime::sharding` written into the
/// program in both forms (GSPMD strings; Shardy's round-trip frontend attributes),
/// partitioned by XLA over 4 CPU devices: the inputs split and the outputs assembled
/// by the same module give the unsharded product, so the device order of its GSPMD
/// tile assignments and its shard indices agree with XLA's.
#[test]
fn shardings_split_and_assemble_as_xla_partitions() {
    use tpuc_runtime::sharding::{Mesh, TensorSharding};
    let Some(client) = client() else { return };
    let client = client
        .plugin()
        .create_client(&ClientOptions::cpu(4))
        .unwrap();
    let mesh = Mesh::parse("dp=2,tp=2").unwrap();
    let (m, k, n) = (4usize, 6usize, 8usize);
    let x: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
    let w: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|t| x[i * k + t] * w[t * n + j]).sum();
        }
    }
    let x = HostTensor::from_f32(&[m as i64, k as i64], &x);
    let w = HostTensor::from_f32(&[k as i64, n as i64], &w);
    // Rows of x over dp, columns of w over tp, so y is split both ways.
    let sx = TensorSharding::split(2, 0, &["dp"]);
    let sw = TensorSharding::split(2, 1, &["tp"]);
    let sy = TensorSharding {
        dims: vec![vec!["dp".into()], vec!["tp".into()]],
    };
    let body = "%0 = \"stablehlo.dot_general\"(%arg0, %arg1) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>\n    \"func.return\"(%0) : (tensor<4x8xf32>) -> ()";
    let gspmd = |s: &TensorSharding| format!("{{mhlo.sharding = \"{}\"}}", s.gspmd(&mesh).unwrap());
    let sdy = |s: &TensorSharding| {
        format!(
            "{{mhlo.frontend_attributes = {{xla.sdy.sharding = \"{}\"}}}}",
            s.shardy("mesh").replace('"', "\\22")
        )
    };
    let programs = [
        (
            format!(
                "module @gspmd attributes {{mhlo.num_partitions = 4 : i32}} {{\n  func.func @main(%arg0: tensor<4x6xf32> {}, %arg1: tensor<6x8xf32> {}) -> (tensor<4x8xf32> {}) {{\n    {body}\n  }}\n}}\n",
                gspmd(&sx), gspmd(&sw), gspmd(&sy)
            ),
            CompileOptions::spmd(4),
        ),
        (
            format!(
                "module @shardy attributes {{mhlo.num_partitions = 4 : i32, mhlo.frontend_attributes = {{xla.sdy.meshes = \"{{mesh = #sdy.mesh<[\\22dp\\22=2, \\22tp\\22=2]>}}\"}}}} {{\n  func.func @main(%arg0: tensor<4x6xf32> {}, %arg1: tensor<6x8xf32> {}) -> (tensor<4x8xf32> {}) {{\n    {body}\n  }}\n}}\n",
                sdy(&sx), sdy(&sw), sdy(&sy)
            ),
            CompileOptions {
                use_shardy_partitioner: true,
                ..CompileOptions::spmd(4)
            },
        ),
    ];
    for (program, options) in &programs {
        let exe = client
            .compile_mlir(program, options)
            .unwrap_or_else(|e| panic!("{e}\n{program}"));
        assert_eq!(exe.num_devices(), 4);
        let (px, pw) = (
            sx.split_tensor(&mesh, &x).unwrap(),
            sw.split_tensor(&mesh, &w).unwrap(),
        );
        let bufs: Vec<[tpuc_runtime::Buffer; 2]> = (0..4)
            .map(|d| {
                [
                    client.buffer_from_host(&px[d], d).unwrap(),
                    client.buffer_from_host(&pw[d], d).unwrap(),
                ]
            })
            .collect();
        let lists: Vec<Vec<&tpuc_runtime::Buffer>> =
            bufs.iter().map(|b| b.iter().collect()).collect();
        let refs: Vec<&[&tpuc_runtime::Buffer]> = lists.iter().map(|l| l.as_slice()).collect();
        let out = exe.execute_sharded(&refs).unwrap();
        let shards: Vec<HostTensor> = out.iter().map(|o| o[0].to_host().unwrap()).collect();
        assert_eq!(shards[0].shape, vec![2, 4], "{program}");
        let y = sy.assemble(&mesh, &[4, 8], &shards).unwrap();
        assert_eq!(f32s(&y), want, "{program}");
    }
}

/// A partitioned artifact (x rows over dp, w and b columns over tp, y both ways):
/// `Session` splits the weights at load and the inputs at run, runs the mesh, and
/// assembles y; in both sharding forms the result is the unsharded one. A client
/// with too few devices and a manifest without an output's sharding are refused.
#[test]
fn partitioned_sessions_run_on_their_mesh() {
    use tpuc_runtime::manifest::{Partitioning, ShardingFormat};
    use tpuc_runtime::sharding::{Mesh, TensorSharding};
    let Some(small) = client() else { return };
    let client = small
        .plugin()
        .create_client(&ClientOptions::cpu(4))
        .unwrap();
    let mesh = Mesh::parse("dp=2,tp=2").unwrap();
    let x: Vec<f32> = (0..24).map(|i| (i % 7) as f32 - 3.0).collect();
    let w: Vec<f32> = (0..48).map(|i| (i % 5) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let mut want = vec![0f32; 32];
    for i in 0..4 {
        for j in 0..8 {
            want[i * 8 + j] = (0..6).map(|t| x[i * 6 + t] * w[t * 8 + j]).sum::<f32>() + b[j];
        }
    }
    let sx = TensorSharding::split(2, 0, &["dp"]);
    let sw = TensorSharding::split(2, 1, &["tp"]);
    let sb = TensorSharding::split(1, 0, &["tp"]);
    let sy = TensorSharding {
        dims: vec![vec!["dp".into()], vec!["tp".into()]],
    };
    for format in [ShardingFormat::Gspmd, ShardingFormat::Shardy] {
        let dir = scratch(&format!("partitioned-{format:?}"));
        let attr = |s: &TensorSharding| match format {
            ShardingFormat::Gspmd => format!("{{mhlo.sharding = \"{}\"}}", s.gspmd(&mesh).unwrap()),
            ShardingFormat::Shardy => format!(
                "{{mhlo.frontend_attributes = {{xla.sdy.sharding = \"{}\"}}}}",
                s.shardy("mesh").replace('"', "\\22")
            ),
        };
        let module_attrs = match format {
            ShardingFormat::Gspmd => "mhlo.num_partitions = 4 : i32".to_string(),
            ShardingFormat::Shardy => "mhlo.num_partitions = 4 : i32, mhlo.frontend_attributes = {xla.sdy.meshes = \"{mesh = #sdy.mesh<[\\22dp\\22=2, \\22tp\\22=2]>}\"}".to_string(),
        };
        let program = format!(
            "module @m attributes {{{module_attrs}}} {{\n  func.func @main(%w: tensor<6x8xf32> {}, %b: tensor<8xf32> {}, %x: tensor<4x6xf32> {}) -> (tensor<4x8xf32> {}) {{\n    %0 = \"stablehlo.dot_general\"(%x, %w) {{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}} : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>\n    %1 = \"stablehlo.broadcast_in_dim\"(%b) {{broadcast_dimensions = array<i64: 1>}} : (tensor<8xf32>) -> tensor<4x8xf32>\n    %2 = \"stablehlo.add\"(%0, %1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>\n    \"func.return\"(%2) : (tensor<4x8xf32>) -> ()\n  }}\n}}\n",
            attr(&sw), attr(&sb), attr(&sx), attr(&sy)
        );
        std::fs::write(dir.join("program.mlir"), &program).unwrap();
        let wt = HostTensor::from_f32(&[6, 8], &w);
        let bt = HostTensor::from_f32(&[8], &b);
        write_safetensors(
            &dir.join("weights.safetensors"),
            &[("w", &wt), ("b", &bt)],
            &[],
        );
        let file_ref = |name: &str| FileRef {
            file: name.into(),
            checksum: Checksum::of(&std::fs::read(dir.join(name)).unwrap()),
        };
        let arg =
            |name: &str, kind, shape: &[i64], weight: Option<&str>, s: &TensorSharding| Argument {
                name: name.into(),
                kind,
                dtype: DType::F32,
                shape: shape.to_vec(),
                weight: weight.map(String::from),
                zero_filled: false,
                packed: None,
                sharding: Some(s.clone()),
            };
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            tpuc_version: "test".into(),
            target: "tpu".into(),
            stablehlo_version: "1.0.0".into(),
            matmul_precision: "highest".into(),
            source: file_ref("program.mlir"),
            program: file_ref("program.mlir"),
            weights: file_ref("weights.safetensors"),
            arguments: vec![
                arg("w", ArgumentKind::Parameter, &[6, 8], Some("w"), &sw),
                arg("b", ArgumentKind::Parameter, &[8], Some("b"), &sb),
                arg("x", ArgumentKind::UserInput, &[4, 6], None, &sx),
            ],
            outputs: vec![TensorSpec {
                name: "y".into(),
                dtype: DType::F32,
                shape: vec![4, 8],
                sharding: Some(sy.clone()),
                updates: None,
            }],
            partitioning: Some(Partitioning::new(mesh.clone(), format)),
            tpu_executables: Vec::new(),
            neuron: None,
            dynamic: None,
        };
        write_manifest(&dir, &manifest);
        let options = LoadOptions {
            cache: CacheMode::Bypass,
            ..LoadOptions::default()
        };
        let session = Session::load_with(&dir, &client, &options).unwrap_or_else(|e| panic!("{e}"));
        let y = session.run(&[HostTensor::from_f32(&[4, 6], &x)]).unwrap();
        assert_eq!(f32s(&y[0]), want, "{format:?}");

        // Device-resident: inputs split once, outputs left as shards (y's [2, 4] per
        // device), assembled on request; twice on the same uploaded inputs.
        let uploaded = session
            .upload_sharded(&[HostTensor::from_f32(&[4, 6], &x)])
            .unwrap();
        assert_eq!(uploaded.shards(0).unwrap().len(), 4);
        assert_eq!(uploaded.shards(0).unwrap()[0].shape(), &[2, 6]);
        for _ in 0..2 {
            let out = session.run_sharded(&uploaded).unwrap();
            assert_eq!(out.len(), 1);
            assert!(out.shards(0).unwrap().iter().all(|b| b.shape() == [2, 4]));
            assert_eq!(f32s(&session.assemble(&out).unwrap()[0]), want);
        }
        // The single-device entry point names the partitioned one.
        let one = client
            .buffer_from_host(&HostTensor::from_f32(&[4, 6], &x), 0)
            .unwrap();
        let err = session.run_buffers(&[&one]).err().unwrap().to_string();
        assert!(err.contains("Session::upload_sharded"), "{err}");

        // Too few devices: the mesh and the device counts named.
        let err = Session::load_with(&dir, small, &options).unwrap_err();
        assert!(
            err.to_string().contains("mesh dp=2,tp=2 (4 devices)"),
            "{err}"
        );
        // An output without a sharding.
        let mut bad = manifest.clone();
        bad.outputs[0].sharding = None;
        write_manifest(&dir, &bad);
        let err = Session::load_with(&dir, &client, &options).unwrap_err();
        assert!(
            err.to_string()
                .contains("output `y` of a partitioned artifact has no sharding"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn serialized_executables_round_trip() {
    let Some(client) = client() else { return };
    let exe = client
        .compile_mlir(ADD_F32, &CompileOptions::default())
        .unwrap();
    let bytes = exe.serialize().unwrap();
    assert!(!bytes.is_empty());
    // Serializing twice gives an equivalent executable (bytes may differ per call).
    assert!(!exe.serialize().unwrap().is_empty());

    let loaded = client.deserialize(&bytes).unwrap();
    assert_eq!(loaded.num_outputs(), 1);
    assert_eq!(loaded.num_devices(), 1);
    let a = HostTensor::from_f32(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = HostTensor::from_f32(&[2, 3], &[0.5, -1.0, 10.0, 0.0, -5.0, 100.0]);
    let da = client.buffer_from_host(&a, 0).unwrap();
    let db = client.buffer_from_host(&b, 0).unwrap();
    let fresh = exe.execute(&[&da, &db]).unwrap()[0].to_host().unwrap();
    let restored = loaded.execute(&[&da, &db]).unwrap()[0].to_host().unwrap();
    assert_eq!(f32s(&restored), [1.5, 1.0, 13.0, 4.0, 0.0, 106.0]);
    assert_eq!(restored, fresh);
    // The original survives the copy being dropped, and the copy can serialize itself.
    let again = loaded.serialize().unwrap();
    drop(loaded);
    assert!(!again.is_empty());
    assert_eq!(
        f32s(&exe.execute(&[&da, &db]).unwrap()[0].to_host().unwrap()),
        [1.5, 1.0, 13.0, 4.0, 0.0, 106.0]
    );

    // Bytes that are not an executable: the plugin's error, not a crash.
    let err = client.deserialize(b"not an executable").unwrap_err();
    match &err {
        RuntimeError::Pjrt { call, .. } => assert_eq!(*call, "PJRT_Executable_DeserializeAndLoad"),
        other => panic!("expected a PJRT error, got {other:?}"),
    }
    let err = client.deserialize(&bytes[..bytes.len() / 2]).unwrap_err();
    assert!(err.pjrt_code().is_some(), "{err}");
    let err = client.deserialize(&[]).unwrap_err();
    assert!(matches!(err, RuntimeError::InvalidArgument(_)), "{err}");
}

#[test]
fn client_options_pass_through() {
    let Some(client) = client() else { return };
    let plugin = client.plugin();
    let one = plugin.create_client(&ClientOptions::cpu(1)).unwrap();
    assert_eq!(one.devices().len(), 1);
    // Plugin-specific options pass through as they are. (Options of the wrong type are
    // not tried: the 0.81 CPU plugin throws a C++ exception on them, which aborts.)
    let three = plugin
        .create_client(&ClientOptions {
            cpu_device_count: None,
            extra: vec![("cpu_device_count".into(), NamedValue::Int64(3))],
        })
        .unwrap();
    assert_eq!(three.devices().len(), 3);
}

// ------------------------------------------------------------------------------------
// npy
// ------------------------------------------------------------------------------------

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Bytes written by numpy 2.4 `np.save` (arange(6, dtype='<i4').reshape(2, 3);
/// array([True, False, True]); float16 scalar 2.5).
const NUMPY_I4: &str = "934e554d5059010076007b276465736372273a20273c6934272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028322c2033292c207d202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a000000000100000002000000030000000400000005000000";
const NUMPY_B1: &str = "934e554d5059010076007b276465736372273a20277c6231272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028332c292c207d2020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a010001";
const NUMPY_F2_SCALAR: &str = "934e554d5059010076007b276465736372273a20273c6632272c2027666f727472616e5f6f72646572273a2046616c73652c20277368617065273a2028292c207d20202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020202020200a0041";

#[test]
fn npy_matches_numpy_byte_for_byte() {
    let i4 = tensor(
        DType::I32,
        &[2, 3],
        (0..6i32).flat_map(|v| v.to_le_bytes()).collect(),
    );
    assert_eq!(decode_npy(&hex(NUMPY_I4), "i4.npy").unwrap(), i4);
    assert_eq!(encode_npy(&i4, "i4.npy").unwrap(), hex(NUMPY_I4));
    let b1 = bools(&[3], &[true, false, true]);
    assert_eq!(decode_npy(&hex(NUMPY_B1), "b1.npy").unwrap(), b1);
    assert_eq!(encode_npy(&b1, "b1.npy").unwrap(), hex(NUMPY_B1));
    let f2 = tensor(DType::F16, &[], 0x4100u16.to_le_bytes().to_vec());
    assert_eq!(decode_npy(&hex(NUMPY_F2_SCALAR), "f2.npy").unwrap(), f2);
    assert_eq!(encode_npy(&f2, "f2.npy").unwrap(), hex(NUMPY_F2_SCALAR));
    assert_eq!(f2.to_f64_vec(), [2.5]);
}

#[test]
fn npy_round_trips_every_dtype() {
    let dir = scratch("npy");
    for dtype in ALL_DTYPES {
        let t = sample_of(dtype);
        let path = dir.join(format!("{dtype}.npy"));
        if dtype == DType::Bf16 {
            let err = write_npy(&path, &t).unwrap_err();
            assert!(err.to_string().contains("bf16"), "{err}");
            continue;
        }
        write_npy(&path, &t).unwrap();
        assert_eq!(read_npy(&path).unwrap(), t, "{dtype}");
    }
    // Scalars, vectors, empty arrays.
    for t in [
        HostTensor::from_f32(&[], &[3.0]),
        HostTensor::from_f32(&[4], &[1.0, 2.0, 3.0, 4.0]),
        HostTensor::from_f32(&[0, 5], &[]),
        i64s(&[1, 1, 1, 2], &[-1, i64::MAX]),
    ] {
        let path = dir.join("shape.npy");
        write_npy(&path, &t).unwrap();
        assert_eq!(read_npy(&path).unwrap(), t);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// A .npy file with the given version and header text (padded as numpy does).
fn npy_with_header(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
    let prefix = if version == 1 { 10 } else { 12 };
    let mut h = header.to_string();
    let total = (prefix + h.len() + 1).div_ceil(64) * 64;
    h.push_str(&" ".repeat(total - prefix - h.len() - 1));
    h.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn npy_versions_2_and_3_are_read() {
    let data: Vec<u8> = [1.0f64, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    for version in [2, 3] {
        let bytes = npy_with_header(
            version,
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
            &data,
        );
        let t = decode_npy(&bytes, "v.npy").unwrap();
        assert_eq!(t.dtype, DType::F64);
        assert_eq!(t.to_f64_vec(), [1.0, 2.0]);
    }
}

#[test]
fn npy_rejects_what_it_cannot_read() {
    let dir = scratch("npy-bad");
    let four = [0u8; 16];
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "fortran.npy",
            npy_with_header(
                1,
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                &four,
            ),
            "Fortran",
        ),
        (
            "bigendian.npy",
            npy_with_header(
                1,
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }",
                &four,
            ),
            "big-endian",
        ),
        (
            "truncated-data.npy",
            npy_with_header(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                &four,
            ),
            "truncated data",
        ),
        (
            "complex.npy",
            npy_with_header(
                1,
                "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
                &four,
            ),
            "unsupported dtype",
        ),
        ("magic.npy", b"PK\x03\x04 not numpy".to_vec(), "magic"),
        (
            "truncated-header.npy",
            hex(NUMPY_I4)[..40].to_vec(),
            "truncated header",
        ),
        (
            "version.npy",
            npy_with_header(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                &four[..4],
            )
            .into_iter()
            .enumerate()
            .map(|(i, b)| if i == 6 { 9 } else { b })
            .collect(),
            "version 9",
        ),
        (
            "garbage-header.npy",
            npy_with_header(
                1,
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2",
                &four,
            ),
            "header",
        ),
    ];
    for (name, bytes, needle) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let err = read_npy(&path).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, RuntimeError::Npy { .. }), "{msg}");
        assert!(msg.contains(needle), "{name}: {msg}");
        assert!(msg.contains(name), "error does not name the file: {msg}");
    }
    let err = read_npy(dir.join("missing.npy")).unwrap_err();
    assert!(err.to_string().contains("missing.npy"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

// ------------------------------------------------------------------------------------
// safetensors
// ------------------------------------------------------------------------------------

#[test]
fn safetensors_reader_reads_every_dtype() {
    let dir = scratch("st");
    let samples: Vec<(String, HostTensor)> = ALL_DTYPES
        .iter()
        .map(|&d| (format!("layer.{d}"), sample_of(d)))
        .collect();
    let scalar = HostTensor::from_f32(&[], &[7.0]);
    let empty = HostTensor::from_f32(&[0], &[]);
    let mut named: Vec<(&str, &HostTensor)> =
        samples.iter().map(|(n, t)| (n.as_str(), t)).collect();
    named.push(("scalar", &scalar));
    named.push(("empty", &empty));
    let path = dir.join("w.safetensors");
    write_safetensors(&path, &named, &[("format", "pt"), ("tpuc", "test")]);

    let st = SafeTensors::open(&path).unwrap();
    assert_eq!(st.len(), named.len());
    assert_eq!(st.metadata().get("tpuc").map(String::as_str), Some("test"));
    for (name, t) in &named {
        let view = st.view(name).unwrap();
        assert_eq!(view.dtype, t.dtype);
        assert_eq!(view.shape, t.shape.as_slice());
        assert_eq!(view.data, t.data.as_slice());
        assert_eq!(&st.tensor(name).unwrap(), *t);
    }
    // File order follows the data offsets.
    let order: Vec<&str> = st.names().collect();
    assert_eq!(order.first(), Some(&"layer.f64"));
    assert_eq!(st.to_host_tensors().len(), named.len());
    let err = st.view("nope").unwrap_err();
    assert!(err.to_string().contains("w.safetensors"), "{err}");

    // Truncation is detected and the file named.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.join("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let err = SafeTensors::open(&cut).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("cut.safetensors") && msg.contains("beyond"),
        "{msg}"
    );
    let tiny = dir.join("tiny.safetensors");
    std::fs::write(&tiny, [1u8, 2, 3]).unwrap();
    let err = SafeTensors::open(&tiny).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

// ------------------------------------------------------------------------------------
// Sessions
// ------------------------------------------------------------------------------------

/// `@main(w: 2x3 f32 [parameter], bias: 3 f32 [buffer], x: 2x3 f32 [input], k: i64 [input])`
/// returning `(x * w + bias, k * k)`.
const SESSION_PROGRAM: &str = r#"module {
  func.func @main(%w: tensor<2x3xf32>, %bias: tensor<3xf32>, %x: tensor<2x3xf32>, %k: tensor<i64>) -> (tensor<2x3xf32>, tensor<i64>) {
    %0 = "stablehlo.multiply"(%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "stablehlo.broadcast_in_dim"(%bias) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>) -> tensor<2x3xf32>
    %2 = "stablehlo.add"(%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %3 = "stablehlo.multiply"(%k, %k) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "func.return"(%2, %3) : (tensor<2x3xf32>, tensor<i64>) -> ()
  }
}
"#;

fn write_artifact(dir: &Path) -> Manifest {
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
    };
    write_manifest(dir, &manifest);
    manifest
}

fn write_manifest(dir: &Path, m: &Manifest) {
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(m).unwrap(),
    )
    .unwrap();
}

#[test]
fn session_loads_validates_and_runs() {
    let Some(client) = client() else { return };
    let dir = scratch("session");
    write_artifact(&dir);
    let session = Session::load(&dir, client).unwrap();
    let names: Vec<&str> = session.inputs().iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["x", "k"]);
    assert_eq!(session.outputs().len(), 2);

    let x = HostTensor::from_f32(&[2, 3], &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    let k = i64s(&[], &[-12]);
    assert_eq!(
        session.transfer_stats(),
        tpuc_runtime::TransferStats::default()
    );
    for _ in 0..2 {
        let out = session.run(&[x.clone(), k.clone()]).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(f32s(&out[0]), [1.5, 2.25, 2.0, 8.5, 10.25, 11.0]);
        assert_eq!(out[1], i64s(&[], &[144]));
    }
    // Each run moved its two inputs in and its two outputs out; the weights stay on
    // the device from the load.
    let stats = session.transfer_stats();
    assert_eq!(
        stats,
        tpuc_runtime::TransferStats {
            executions: 2,
            host_to_device: 4,
            host_to_device_bytes: 2 * (24 + 8),
            device_to_host: 4,
            device_to_host_bytes: 2 * (24 + 8),
        }
    );

    // Wrong shape, dtype and count: errors naming the input.
    let wrong_shape = HostTensor::from_f32(&[3, 2], &[0.0; 6]);
    let err = session.run(&[wrong_shape, k.clone()]).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RuntimeError::InputMismatch { index: 0, .. }),
        "{msg}"
    );
    assert!(
        msg.contains("`x`") && msg.contains("shape") && msg.contains("[2, 3]"),
        "{msg}"
    );
    let err = session.run(&[x.clone(), i64s(&[1], &[1])]).unwrap_err();
    assert!(err.to_string().contains("`k`"), "{err}");
    let err = session
        .run(&[x.clone(), tensor(DType::I32, &[], vec![0; 4])])
        .unwrap_err();
    assert!(
        err.to_string().contains("dtype") && err.to_string().contains("`k`"),
        "{err}"
    );
    let err = session.run(std::slice::from_ref(&x)).unwrap_err();
    assert!(
        matches!(
            err,
            RuntimeError::InputCount {
                expected: 2,
                got: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("`x`, `k`"), "{err}");

    // Sessions are Send + Sync: concurrent runs share the weights.
    std::thread::scope(|scope| {
        for t in 0..4i64 {
            let session = &session;
            let x = &x;
            scope.spawn(move || {
                for _ in 0..10 {
                    let out = session.run(&[x.clone(), i64s(&[], &[t])]).unwrap();
                    assert_eq!(out[1], i64s(&[], &[t * t]));
                    assert_eq!(f32s(&out[0])[0], 1.5);
                }
            });
        }
    });

    // Inputs already on the device.
    let dx = client.buffer_from_host(&x, 0).unwrap();
    let dk = client.buffer_from_host(&k, 0).unwrap();
    let out = session.run_buffers(&[&dx, &dk]).unwrap();
    assert_eq!(out[1].to_host().unwrap(), i64s(&[], &[144]));
    std::fs::remove_dir_all(dir).unwrap();
}

/// `@main(count: f32[4] [buffer, state], x: f32[n] [input])` returning
/// `(x + x, count + 1)`, the second output updating `count` (aliased to it, as the
/// compiler writes a stateful program). `broken`: the first output is `count * count`
/// (f32[4]) instead, which a manifest saying f32[n] contradicts after the execution.
fn counter_program(n: i64, broken: bool) -> String {
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
fn write_stateful_artifact(dir: &Path) -> Manifest {
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

/// A run that fails after its execution consumed the state it donated (here: the
/// program for `s = 5` returns an output the manifest contradicts, found once the
/// execution is done) leaves the session with usable state: read_state and the next
/// run work, from the artifact's initial state, and the error says the state was reset.
#[test]
fn a_failed_stateful_run_leaves_usable_state() {
    let Some(client) = client() else { return };
    let dir = scratch("stateful-failed-run");
    write_stateful_artifact(&dir);
    let session = Session::load(&dir, client).unwrap();
    assert_eq!(session.state_names(), ["b_count"]);
    let x3 = HostTensor::from_f32(&[3], &[1.0, 2.0, 3.0]);
    // The first run reads the initial state; its update is what the next run donates.
    let out = session.run(std::slice::from_ref(&x3)).unwrap();
    assert_eq!(f32s(&out[0]), [2.0, 4.0, 6.0]);
    let out = session.run(std::slice::from_ref(&x3)).unwrap();
    assert_eq!(f32s(&out[0]), [2.0, 4.0, 6.0]);
    assert_eq!(
        f32s(&session.read_state("b_count").unwrap()),
        [12.0, 22.0, 32.0, 42.0]
    );

    // PJRT refuses an input on another device before it consumes anything: the state
    // stays as it was.
    let elsewhere = client.buffer_from_host(&x3, 1).unwrap();
    let err = session.run_buffers(&[&elsewhere]).unwrap_err();
    assert!(!err.to_string().contains("state"), "{err}");
    assert_eq!(
        f32s(&session.read_state("b_count").unwrap()),
        [12.0, 22.0, 32.0, 42.0]
    );

    let x5 = HostTensor::from_f32(&[5], &[1.0; 5]);
    let err = session.run(std::slice::from_ref(&x5)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RuntimeError::OutputMismatch { index: 0, .. }),
        "{msg}"
    );
    assert!(
        msg.contains("state"),
        "the error says what became of the state: {msg}"
    );

    let state = session
        .read_state("b_count")
        .unwrap_or_else(|e| panic!("read_state after a failed run: {e}"));
    assert_eq!(f32s(&state), [10.0, 20.0, 30.0, 40.0]);
    session
        .run(std::slice::from_ref(&x3))
        .unwrap_or_else(|e| panic!("a run after a failed run: {e}"));
    assert_eq!(
        f32s(&session.read_state("b_count").unwrap()),
        [11.0, 21.0, 31.0, 41.0]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// A dynamic artifact whose `dynamic` section is invalid is refused before anything
/// is compiled or uploaded: the progress callback sees no event.
#[test]
fn invalid_dynamic_sections_are_refused_before_any_upload() {
    let Some(client) = client() else { return };
    let dir = scratch("dynamic-invalid");
    let mut manifest = write_stateful_artifact(&dir);
    let good = manifest.dynamic.clone().unwrap();
    let mut no_specializations = good.clone();
    no_specializations.specializations.clear();
    let mut first_not_the_program = good.clone();
    first_not_the_program.specializations.swap(0, 1);
    for (dynamic, why) in [
        (no_specializations, "lists no specialization"),
        (first_not_the_program, "is not the program"),
    ] {
        manifest.dynamic = Some(dynamic);
        write_manifest(&dir, &manifest);
        let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = events.clone();
        let mut options = LoadOptions::with_progress(move |e: &LoadEvent<'_>| {
            seen.lock().unwrap().push(format!("{e:?}"))
        });
        options.cache = CacheMode::Bypass;
        let err = Session::load_with(&dir, client, &options).unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
        assert_eq!(*events.lock().unwrap(), Vec::<String>::new(), "{why}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn session_rejects_tampered_or_inconsistent_artifacts() {
    let Some(client) = client() else { return };

    // Tampered weights: one flipped byte in the data.
    let dir = scratch("tampered-weights");
    write_artifact(&dir);
    let path = dir.join("weights.safetensors");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(matches!(err, RuntimeError::Checksum { .. }), "{err}");
    assert!(err.to_string().contains("weights.safetensors"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Tampered program.
    let dir = scratch("tampered-program");
    write_artifact(&dir);
    std::fs::write(
        dir.join("program.mlir"),
        SESSION_PROGRAM.replace("multiply", "subtract"),
    )
    .unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(matches!(err, RuntimeError::Checksum { .. }), "{err}");
    assert!(err.to_string().contains("program.mlir"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Format version 1 recorded SHA-256 checksums: such an artifact still loads, and
    // a flipped byte is still caught with the algorithm named.
    let dir = scratch("format-1");
    let mut m = write_artifact(&dir);
    m.format_version = 1;
    let sha256 = |name: &str| {
        use sha2::Digest;
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let hex: String = sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Checksum::Sha256(hex)
    };
    m.program.checksum = sha256("program.mlir");
    m.weights.checksum = sha256("weights.safetensors");
    write_manifest(&dir, &m);
    assert!(Session::load(&dir, client).is_ok());
    let path = dir.join("weights.safetensors");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("manifest says sha256"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Newer artifact format; missing weight; weight of the wrong shape; escaping path.
    let dir = scratch("inconsistent");
    let good = write_artifact(&dir);
    let mut m = good.clone();
    m.format_version = FORMAT_VERSION + 1;
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("format version"), "{err}");

    let mut m = good.clone();
    m.arguments[0].weight = Some("fc.missing".into());
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("fc.missing"), "{err}");

    let mut m = good.clone();
    m.arguments[1].shape = vec![4];
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("b_fc_bias"), "{err}");

    let mut m = good.clone();
    m.outputs.pop();
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("output"), "{err}");

    let mut m = good.clone();
    m.program.file = "../program.mlir".into();
    write_manifest(&dir, &m);
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("inside the artifact"), "{err}");

    std::fs::write(dir.join("manifest.json"), "{ not json").unwrap();
    let err = Session::load(&dir, client).unwrap_err();
    assert!(err.to_string().contains("manifest.json"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ------------------------------------------------------------------------------------
// Executable cache, StableHLO versions, progress
// ------------------------------------------------------------------------------------

fn cache_options(cache_dir: &Path, cache: CacheMode) -> LoadOptions {
    LoadOptions {
        cache,
        cache_dir: Some(cache_dir.to_path_buf()),
        ..LoadOptions::default()
    }
}

/// Runs the session artifact's program on fixed inputs.
fn run_session(session: &Session) -> Vec<HostTensor> {
    let x = HostTensor::from_f32(&[2, 3], &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    let out = session.run(&[x, i64s(&[], &[-12])]).unwrap();
    assert_eq!(f32s(&out[0]), [1.5, 2.25, 2.0, 8.5, 10.25, 11.0]);
    assert_eq!(out[1], i64s(&[], &[144]));
    out
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

#[test]
fn session_executables_come_from_the_cache_the_second_time() {
    let Some(client) = client() else { return };
    let dir = scratch("cache-artifact");
    write_artifact(&dir);
    let cache_dir = scratch("cache-dir").join("nested/executables");

    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = events.clone();
    let options = LoadOptions {
        cache_dir: Some(cache_dir.clone()),
        ..LoadOptions::with_progress(move |e| {
            let line = match e {
                LoadEvent::CompileStart { program_bytes } => {
                    format!("compile start {program_bytes}")
                }
                LoadEvent::CompileEnd { source, .. } => format!("compile end {source:?}"),
                LoadEvent::UploadStart { count, total_bytes } => {
                    format!("upload start {count} {total_bytes}")
                }
                LoadEvent::WeightUploaded {
                    index,
                    count,
                    name,
                    bytes,
                    uploaded_bytes,
                    total_bytes,
                } => {
                    format!("weight {index}/{count} {name} {bytes} {uploaded_bytes}/{total_bytes}")
                }
                LoadEvent::UploadEnd { total_bytes, .. } => format!("upload end {total_bytes}"),
                _ => "other".to_string(),
            };
            log.lock().unwrap().push(line);
        })
    };

    let first = Session::load_with(&dir, client, &options).unwrap();
    let report = first.load_report().clone();
    assert_eq!(report.compile, CompileSource::Compiled);
    assert!(
        report.cache_warnings.is_empty(),
        "{:?}",
        report.cache_warnings
    );
    let entry = report.cache_entry.clone().expect("an entry was written");
    assert!(entry.starts_with(&cache_dir), "{}", entry.display());
    assert_eq!(cache_files(&cache_dir), std::slice::from_ref(&entry));
    assert_eq!(report.weight_count, 2);
    assert_eq!(report.weight_bytes, 24 + 12);
    assert!(report.compile_ms > 0.0 && report.total_ms >= report.compile_ms);
    let program_bytes = SESSION_PROGRAM.len();
    assert_eq!(
        *events.lock().unwrap(),
        [
            format!("compile start {program_bytes}"),
            "compile end Compiled".to_string(),
            "upload start 2 36".to_string(),
            "weight 0/2 fc.weight 24 24/36".to_string(),
            "weight 1/2 fc.bias 12 36/36".to_string(),
            "upload end 36".to_string(),
        ]
    );
    events.lock().unwrap().clear();

    let second = Session::load_with(&dir, client, &options).unwrap();
    let report2 = second.load_report();
    assert_eq!(report2.compile, CompileSource::Cache);
    assert_eq!(report2.cache_entry.as_ref(), Some(&entry));
    assert_eq!(report2.cache_key, report.cache_key);
    assert!(
        report2.cache_warnings.is_empty(),
        "{:?}",
        report2.cache_warnings
    );
    // No compile start on a cache hit.
    assert_eq!(events.lock().unwrap()[0], "compile end Cache");
    assert_eq!(run_session(&first), run_session(&second));

    // Another program (or other options) gets another key.
    let other = scratch("cache-artifact-other");
    let mut m = write_artifact(&other);
    let changed = SESSION_PROGRAM.replace("%k, %k", "%k, %k ");
    std::fs::write(other.join("program.mlir"), &changed).unwrap();
    m.program.checksum = Checksum::of(changed.as_bytes());
    write_manifest(&other, &m);
    let third = Session::load_with(
        &other,
        client,
        &cache_options(&cache_dir, CacheMode::ReadWrite),
    )
    .unwrap();
    assert_eq!(third.load_report().compile, CompileSource::Compiled);
    assert_ne!(third.load_report().cache_key, report.cache_key);
    assert_eq!(cache_files(&cache_dir).len(), 2);

    for d in [
        dir,
        other,
        cache_dir.parent().unwrap().parent().unwrap().to_path_buf(),
    ] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn bypass_always_compiles_and_leaves_the_cache_alone() {
    let Some(client) = client() else { return };
    let dir = scratch("bypass-artifact");
    write_artifact(&dir);
    let cache_dir = scratch("bypass-cache");
    let bypass = cache_options(&cache_dir, CacheMode::Bypass);
    for _ in 0..2 {
        let s = Session::load_with(&dir, client, &bypass).unwrap();
        let r = s.load_report();
        assert_eq!(r.compile, CompileSource::Compiled);
        assert_eq!(r.cache_key, None);
        assert_eq!(r.cache_entry, None);
        run_session(&s);
    }
    assert!(cache_files(&cache_dir).is_empty());
    // Even with a valid entry present, bypass compiles.
    let rw = Session::load_with(
        &dir,
        client,
        &cache_options(&cache_dir, CacheMode::ReadWrite),
    )
    .unwrap();
    assert_eq!(rw.load_report().compile, CompileSource::Compiled);
    let s = Session::load_with(&dir, client, &bypass).unwrap();
    assert_eq!(s.load_report().compile, CompileSource::Compiled);
    assert_eq!(cache_files(&cache_dir).len(), 1);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache_dir).unwrap();
}

#[test]
fn corrupt_cache_entries_are_replaced() {
    let Some(client) = client() else { return };
    let dir = scratch("corrupt-artifact");
    write_artifact(&dir);
    let cache_dir = scratch("corrupt-cache");
    let options = cache_options(&cache_dir, CacheMode::ReadWrite);
    let first = Session::load_with(&dir, client, &options).unwrap();
    let expected = run_session(&first);
    let entry = first.load_report().cache_entry.clone().unwrap();
    let key = first.load_report().cache_key.unwrap();
    let good = std::fs::read(&entry).unwrap();

    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x10;
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("checksum", flipped),
        ("truncated", good[..3].to_vec()),
        ("payload is", good[..good.len() - 1].to_vec()),
        ("magic", vec![b'z'; good.len()]),
    ];
    for (needle, bytes) in damages {
        std::fs::write(&entry, &bytes).unwrap();
        let s = Session::load_with(&dir, client, &options).unwrap();
        let r = s.load_report();
        assert_eq!(r.compile, CompileSource::Compiled, "{needle}");
        assert!(
            r.cache_warnings.len() == 1 && r.cache_warnings[0].contains(needle),
            "{needle}: {:?}",
            r.cache_warnings
        );
        assert_eq!(run_session(&s), expected);
        // The entry was rewritten and is used next time.
        let s = Session::load_with(&dir, client, &options).unwrap();
        assert_eq!(s.load_report().compile, CompileSource::Cache, "{needle}");
        assert!(s.load_report().cache_warnings.is_empty());
    }

    // A well-formed entry whose payload the plugin cannot load.
    cache::store(&cache_dir, &key, b"well-formed entry, garbage executable").unwrap();
    let s = Session::load_with(&dir, client, &options).unwrap();
    let r = s.load_report();
    assert_eq!(r.compile, CompileSource::Compiled);
    assert!(
        r.cache_warnings.len() == 1 && r.cache_warnings[0].contains("could not be loaded"),
        "{:?}",
        r.cache_warnings
    );
    assert_eq!(run_session(&s), expected);
    let s = Session::load_with(&dir, client, &options).unwrap();
    assert_eq!(s.load_report().compile, CompileSource::Cache);

    // An unwritable cache location is a warning, not an error.
    let blocker = cache_dir.join("a-file");
    std::fs::write(&blocker, b"x").unwrap();
    let s = Session::load_with(
        &dir,
        client,
        &cache_options(&blocker.join("sub"), CacheMode::ReadWrite),
    )
    .unwrap();
    assert_eq!(s.load_report().compile, CompileSource::Compiled);
    assert_eq!(
        s.load_report().cache_warnings.len(),
        1,
        "{:?}",
        s.load_report()
    );
    assert_eq!(run_session(&s), expected);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache_dir).unwrap();
}

#[test]
fn stablehlo_version_outside_the_plugin_range_is_rejected() {
    let Some(client) = client() else { return };
    let plugin = client.plugin();
    let current = plugin.stablehlo_current_version().unwrap();
    let dir = scratch("stablehlo-version");
    let good = write_artifact(&dir);
    let cache_dir = scratch("stablehlo-version-cache");
    let options = cache_options(&cache_dir, CacheMode::ReadWrite);

    let mut m = good.clone();
    m.stablehlo_version = "99.0.0".into();
    write_manifest(&dir, &m);
    let err = Session::load_with(&dir, client, &options).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, RuntimeError::StablehloVersion { .. }),
        "{msg}"
    );
    assert!(msg.contains("99.0.0") && msg.contains(&current), "{msg}");
    assert!(msg.contains("newer plugin"), "{msg}");

    if let Some(minimum) = plugin.stablehlo_minimum_version() {
        let min = tpuc_runtime::version::Version::parse(&minimum).unwrap();
        if min > tpuc_runtime::version::Version::new(0, 0, 0) {
            let below = if min.patch > 0 {
                format!("{}.{}.{}", min.major, min.minor, min.patch - 1)
            } else if min.minor > 0 {
                format!("{}.{}.99", min.major, min.minor - 1)
            } else {
                format!("{}.99.99", min.major - 1)
            };
            let mut m = good.clone();
            m.stablehlo_version = below.clone();
            write_manifest(&dir, &m);
            let err = Session::load_with(&dir, client, &options).unwrap_err();
            let msg = err.to_string();
            assert!(
                matches!(err, RuntimeError::StablehloVersion { .. }),
                "{msg}"
            );
            assert!(msg.contains(&below) && msg.contains(&minimum), "{msg}");
        }
    }

    let mut m = good.clone();
    m.stablehlo_version = "one point oh".into();
    write_manifest(&dir, &m);
    let err = Session::load_with(&dir, client, &options).unwrap_err();
    assert!(err.to_string().contains("one point oh"), "{err}");

    // Nothing reached the compiler: no cache entry was written.
    assert!(cache_files(&cache_dir).is_empty());
    // The range's own ends are accepted.
    let mut m = good.clone();
    m.stablehlo_version = current.clone();
    write_manifest(&dir, &m);
    Session::load_with(&dir, client, &cache_options(&cache_dir, CacheMode::Bypass)).unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache_dir).unwrap();
}

#[test]
fn plugin_discovery_lists_the_installed_plugin() {
    if client().is_none() {
        return;
    }
    let found = discover::find_plugin(None).unwrap();
    let all = discover::all_plugins();
    let canonical = |p: &Path| p.canonicalize().unwrap();
    assert!(
        all.iter().any(|p| canonical(p) == canonical(&found)),
        "{found:?} not in {all:?}"
    );
    // Each file once.
    let mut canon: Vec<PathBuf> = all.iter().map(|p| canonical(p)).collect();
    canon.sort();
    canon.dedup();
    assert_eq!(canon.len(), all.len(), "{all:?}");
}

#[test]
fn broken_plugins_are_errors_not_crashes() {
    let dir = scratch("broken-plugin");
    let garbage = dir.join("libgarbage_pjrt.so");
    std::fs::write(&garbage, b"this is not a shared library").unwrap();
    let Err(err) = Plugin::load(&garbage) else {
        panic!("garbage must not load");
    };
    let err = err.to_string();
    assert!(err.contains("libgarbage_pjrt.so"), "{err}");

    // A real shared library that is not a PJRT plugin (no GetPjrtApi).
    let not_pjrt = [
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
    ]
    .iter()
    .map(Path::new)
    .find(|p| p.exists());
    if let Some(lib) = not_pjrt {
        let Err(err) = Plugin::load(lib) else {
            panic!("libz is not a plugin");
        };
        let err = err.to_string();
        assert!(err.contains("GetPjrtApi"), "{err}");
    }

    let missing = dir.join("nowhere.so");
    let err = tpuc_runtime::discover::find_plugin(Some(&missing))
        .unwrap_err()
        .to_string();
    assert!(err.contains("nowhere.so"), "{err}");
}
