//! PJRT through the plugin: compile, execute, buffers, serialization, client options.

use crate::common::*;

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
        // The CPU plugin's buffers are read from host memory directly; the plugin's own
        // copy must give the same bytes.
        assert_eq!(b.to_host().unwrap(), t, "{dtype}");
        assert_eq!(b.to_host_through_plugin().unwrap(), t, "{dtype}");
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
