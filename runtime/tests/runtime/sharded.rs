//! SPMD programs and partitioned sessions over several CPU devices.

use crate::common::*;

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
            debug_values: Vec::new(),
            training: None,
            model_flops: None,
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
