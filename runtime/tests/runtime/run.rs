//! Running a session: inputs checked, outputs, transfer counts, concurrent runs.

use crate::common::*;

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
